"""The gradebook import files batch and merge write beside scores.csv: canvas.csv (Canvas's gradebook
import) and gradescope.csv (Gradescope's score upload), with and without a roster; and the README's
count of what Gradescope can grade of Lab 01 without a GPU. (Nothing here builds.)"""
import csv
import io
import os
import re
import shutil
import tempfile
import unittest
import zipfile

from gradelib import checks as chk
from gradelib import exits, paths, registry, sheets
from tests.fakes import run_grade

LAB = registry.resolve("01")


def record(score, verdict=sheets.POINTS_LOST):
    return {"score": score, "max_score": LAB.max_score, "verdict": verdict, "checks": {}}


RECORDS = {"alice": record(17, sheets.FULL_MARKS), "bob": record(13.5), "carol": record(0, sheets.BAD_ARCHIVE),
           "dave": record(0, sheets.GRADER_ERROR), "erin": record(16.666666)}
ROSTER_TEXT = ("\ufeffid,name,email,sis_id,sis_login,section,canvas_id\n"
               "alice,\"Smith, Alice\",alice@uni.example,1001,asmith,CS 101-01,501\n"
               "bob,\"O'Neil, \"\"Bob\"\"\",bob@uni.example,1002,boneil,CS 101-02,502\n"
               "zed,\"Zed, Zoe\",zed@uni.example,1009,zzed,CS 101-01,509\n")


def rows(text):
    return list(csv.reader(io.StringIO(text)))


class RosterTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        path = os.path.join(self.tmp.name, "roster.csv")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_reads_the_documented_columns(self):
        roster = sheets.read_roster(self.write(ROSTER_TEXT))  # with the byte-order mark Excel writes
        self.assertEqual(sorted(roster), ["alice", "bob", "zed"])
        self.assertEqual(roster["alice"]["name"], "Smith, Alice")
        self.assertEqual(roster["bob"]["name"], 'O\'Neil, "Bob"')
        only_some = sheets.read_roster(self.write("ID, Email \ncy , cy@uni.example\n\n"))
        self.assertEqual(only_some, {"cy": {"id": "cy", "email": "cy@uni.example"}})

    def test_refuses_what_it_cannot_use(self):
        for text, words in (("", "empty"), ("name,email\nA,a@x\n", "id required"), ("id,login\na,b\n", "id required"),
                            ("id,id\na,a\n", "each once"), ("id,name\na,A\na,B\n", "comes twice"),
                            ("id,name\n,A\n", "no id")):
            with self.assertRaises(sheets.RosterError) as caught:
                sheets.read_roster(self.write(text))
            self.assertIn(words, str(caught.exception), text)


class WithRoster:
    def _roster(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        path = os.path.join(self.tmp.name, "roster.csv")
        with open(path, "w", encoding="utf-8") as f:
            f.write(ROSTER_TEXT)
        return path


class CanvasCsvTest(WithRoster, unittest.TestCase):
    """Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then the assignment
    column; the Points Possible row next; a row per graded submission."""

    def test_the_documented_layout_with_a_roster(self):
        text = sheets.canvas_csv(LAB, RECORDS, sheets.read_roster(self._roster()))
        table = rows(text)
        self.assertEqual(table[0], ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", LAB.title])
        self.assertEqual(table[1], ["    Points Possible", "", "", "", "", str(LAB.max_score)])
        self.assertEqual(table[2], ["Smith, Alice", "501", "1001", "asmith", "CS 101-01", "17"])
        self.assertEqual(table[3], ['O\'Neil, "Bob"', "502", "1002", "boneil", "CS 101-02", "13.5"])
        self.assertEqual(table[4], ["carol", "", "", "carol", "", "0"])  # no roster row: the id stands in
        self.assertEqual(table[5], ["erin", "", "", "erin", "", "16.6667"])
        self.assertEqual(len(table), 6)  # dave's grader error is no grade; zed has no submission
        self.assertIn('\r\n"Smith, Alice",501,', text)  # RFC 4180: CRLF, a name with a comma quoted
        self.assertIn('"O\'Neil, ""Bob""",502', text)

    def test_without_a_roster_the_id_stands_in(self):
        table = rows(sheets.canvas_csv(LAB, {"alice": record(17)}))
        self.assertEqual(table[2], ["alice", "", "", "alice", "", "17"])


class GradescopeCsvTest(WithRoster, unittest.TestCase):
    """Gradescope's score upload: an identifying column (Name, SID, Email) and a score column."""

    def test_the_documented_layout_with_a_roster(self):
        text = sheets.gradescope_csv(RECORDS, sheets.read_roster(self._roster()))
        table = rows(text)
        self.assertEqual(table[0], ["Name", "SID", "Email", "Score"])
        self.assertEqual(table[1:], [["Smith, Alice", "1001", "alice@uni.example", "17"],
                                     ['O\'Neil, "Bob"', "1002", "bob@uni.example", "13.5"],
                                     ["carol", "carol", "", "0"], ["erin", "erin", "", "16.6667"]])
        self.assertIn('"Smith, Alice",1001,alice@uni.example,17\r\n', text)

    def test_without_a_roster_the_id_stands_in(self):
        self.assertEqual(rows(sheets.gradescope_csv({"alice": record(17)}))[1:], [["alice", "alice", "", "17"]])


class NumberTest(unittest.TestCase):
    def test_scores_are_plain_numbers(self):
        for value, text in ((17, "17"), (13.5, "13.5"), (0, "0"), (16.67, "16.67"), (1e6, "1000000"), (0.1 + 0.2, "0.3")):
            self.assertEqual(sheets.number(value), text)


class ImportNotesTest(unittest.TestCase):
    def test_what_to_know_before_importing(self):
        notes = " | ".join(sheets.import_notes(RECORDS, list(RECORDS) + ["gone"], [("x.rar", "why")], None))
        self.assertIn("not in canvas.csv and gradescope.csv (no score to import): dave, gone, x.rar", notes)
        self.assertIn("no --roster", notes)
        self.assertIn("a real import needs --roster FILE", notes)
        roster = {"alice": {"id": "alice"}, "zed": {"id": "zed"}}
        notes = " | ".join(sheets.import_notes(RECORDS, list(RECORDS), [], roster))
        self.assertIn("no roster row for: bob, carol, erin", notes)
        self.assertIn("in the roster, no submission: zed", notes)
        self.assertNotIn("no --roster", notes)


class CanvasNamedTest(unittest.TestCase):
    """Submissions named as Canvas's bulk download names them carry Canvas's user id and lateness: canvas.csv
    needs no roster for them, and the summary names the late ones."""
    RECORDS = {"leeann": dict(record(17, sheets.FULL_MARKS), canvas_user_id="124", late=True),
               "okafor": dict(record(13.5), canvas_user_id="125", late=False)}

    def test_canvas_csv_carries_canvas_user_id(self):
        self.assertEqual([r[:2] + r[5:] for r in rows(sheets.canvas_csv(LAB, self.RECORDS))[2:]],
                         [["leeann", "124", "17"], ["okafor", "125", "13.5"]])
        notes = " | ".join(sheets.import_notes(self.RECORDS, list(self.RECORDS), [], None))
        self.assertIn("canvas.csv carries Canvas's user ID", notes)
        self.assertIn("gradescope.csv needs --roster FILE", notes)
        mixed = dict(self.RECORDS, bob=record(3))
        self.assertIn("a real import needs --roster FILE", " | ".join(sheets.import_notes(mixed, list(mixed), [], None)))

    def test_the_summary_names_the_late(self):
        text = sheets.summary_text(LAB, self.RECORDS, list(self.RECORDS))
        self.assertIn("late, as Canvas named them: leeann", text)
        self.assertNotIn("late", sheets.summary_text(LAB, RECORDS, list(RECORDS)))


class GraderErrorSheetTest(unittest.TestCase):
    def test_a_grader_error_is_no_grade_on_the_sheet_and_in_the_summary(self):
        """Whether a check raised after others scored, or the grading raised before any: the score sheet
        shows no score for it, and the summary's distribution leaves it out."""
        partial = dict(record(7, sheets.GRADER_ERROR), checks={LAB.checks[0].name: 1})
        records = dict(RECORDS, frank=partial)
        table = {r[0]: r for r in rows(sheets.scores_csv(LAB, records, list(records)))}
        for sub_id in ("dave", "frank"):
            self.assertEqual(table[sub_id][1:3], [sheets.GRADER_ERROR, ""])
            self.assertEqual(set(table[sub_id][4:]), {""})
        self.assertEqual(table["bob"][2], "13.5")
        summary = sheets.summary_text(LAB, records, list(records))
        self.assertIn("score distribution (grader errors aside: no grade):", summary)
        self.assertIn("\n  0%         1  #\n", summary)  # carol's bad archive, not dave's nor frank's error
        self.assertIn("\n  1-49%      0  \n", summary)


class BatchExportTest(unittest.TestCase):
    """batch and merge write canvas.csv and gradescope.csv beside scores.csv (bad archives only: no build)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.subs = os.path.join(self.tmp, "class")
        os.makedirs(self.subs)
        for name in ("alice", "bob"):
            with zipfile.ZipFile(os.path.join(self.subs, name + ".zip"), "w") as z:
                z.writestr("../escape.cu", "x")
        self.roster = os.path.join(self.tmp, "roster.csv")
        with open(self.roster, "w", encoding="utf-8") as f:
            f.write(ROSTER_TEXT)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def read(self, out, name):
        with open(os.path.join(out, name), encoding="utf-8") as f:
            return rows(f.read())

    def test_batch_and_merge_write_both_files(self):
        out = os.path.join(self.tmp, "out")
        done = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--seed", "1"])
        self.assertEqual(done.returncode, exits.OK, done.stdout)  # bad archives are graded: 0 points
        self.assertIn("a real import needs --roster FILE", done.stdout)
        self.assertEqual(self.read(out, "canvas.csv")[2:], [["alice", "", "", "alice", "", "0"],
                                                            ["bob", "", "", "bob", "", "0"]])
        self.assertEqual(self.read(out, "gradescope.csv")[1:], [["alice", "alice", "", "0"], ["bob", "bob", "", "0"]])
        with open(os.path.join(out, "summary.txt")) as f:
            self.assertIn("a real import needs --roster FILE", f.read())

        again = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--roster", self.roster])
        self.assertEqual(again.returncode, exits.OK, again.stdout)
        self.assertNotIn("a real import needs", again.stdout)
        self.assertIn("in the roster, no submission: zed", again.stdout)
        self.assertEqual(self.read(out, "canvas.csv")[2][:4], ["Smith, Alice", "501", "1001", "asmith"])

        merged = os.path.join(self.tmp, "merged")
        done = run_grade(["merge", out, "--out", merged, "--roster", self.roster])
        self.assertEqual(done.returncode, exits.OK, done.stdout)
        self.assertEqual(self.read(merged, "gradescope.csv")[1], ["Smith, Alice", "1001", "alice@uni.example", "0"])
        self.assertEqual(len(self.read(merged, "canvas.csv")), 4)

    def test_a_canvas_download_needs_no_roster_for_canvas(self):
        canvas = os.path.join(self.tmp, "canvas-download")
        os.makedirs(canvas)
        for name in ("smithjane_LATE_123_4567_lab01-1.zip", "leeann_124_4568_lab01.zip"):
            with zipfile.ZipFile(os.path.join(canvas, name), "w") as z:
                z.writestr("../escape.cu", "x")
        out = os.path.join(self.tmp, "out")
        done = run_grade(["batch", canvas, "--lab", "1", "--out", out, "--seed", "1"])
        self.assertEqual(done.returncode, exits.OK, done.stdout)
        self.assertEqual(self.read(out, "canvas.csv")[2:], [["leeann", "124", "", "leeann", "", "0"],
                                                            ["smithjane", "123", "", "smithjane", "", "0"]])
        with open(os.path.join(out, "summary.txt")) as f:
            summary = f.read()
        self.assertIn("late, as Canvas named them: smithjane", summary)
        self.assertIn("canvas.csv carries Canvas's user ID", summary)

    def test_a_bad_roster_is_a_usage_error(self):
        bad = os.path.join(self.tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("student,score\n")
        out = os.path.join(self.tmp, "out")
        done = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--roster", bad])
        self.assertEqual(done.returncode, exits.USAGE, done.stdout)
        self.assertIn("it takes id,name,email", done.stdout)
        self.assertFalse(os.path.exists(out))  # refused before anything is written
        done = run_grade(["merge", out, "--out", os.path.join(self.tmp, "m"), "--roster", bad])
        self.assertEqual(done.returncode, exits.USAGE, done.stdout)


class UnverifiedImportTest(unittest.TestCase):
    """Scores made without their runtime checks reach no gradebook by accident."""

    def records(self):
        lab = registry.resolve("01")
        checks = [{"name": c.name, "status": chk.SKIPPED if c.kind == chk.RUNTIME else chk.PASSED, "points": c.points,
                   "score": 0 if c.kind == chk.RUNTIME else c.points,
                   "not_run_lacking": chk.GPU if c.kind == chk.RUNTIME else None} for c in lab.checks]
        return lab, {"alice": {"id": "alice", "verdict": sheets.NOT_RUN_NO_GPU, "score": 6, "max_score": lab.max_score,
                               "checks": {c["name"]: c["score"] for c in checks}, "report": {"checks": checks},
                               "runtime_not_run": True}}

    def test_no_import_files_without_the_flag(self):
        lab, records = self.records()
        with tempfile.TemporaryDirectory() as out:
            for name in (sheets.CANVAS_FILE, sheets.GRADESCOPE_FILE):  # an earlier run's
                with open(os.path.join(out, name), "w") as f:
                    f.write("old\n")
            text = sheets.write_sheets(out, lab, records, ["alice"])
            self.assertIn("%s and %s NOT WRITTEN" % (sheets.CANVAS_FILE, sheets.GRADESCOPE_FILE), text)
            self.assertFalse(os.path.exists(os.path.join(out, sheets.CANVAS_FILE)))
            self.assertFalse(os.path.exists(os.path.join(out, sheets.GRADESCOPE_FILE)))
            text = sheets.write_sheets(out, lab, records, ["alice"], partial_imports=True)
            self.assertNotIn("NOT WRITTEN", text)
            self.assertTrue(os.path.exists(os.path.join(out, sheets.CANVAS_FILE)))

    def test_not_run_is_said_beside_a_failure(self):
        import contextlib
        from gradelib import batch
        _, records = self.records()
        said = io.StringIO()
        with contextlib.redirect_stdout(said):
            batch.print_status_lines(exits.FAILED, records)
        self.assertIn("exit status 1", said.getvalue())
        self.assertIn("NOT RUN", said.getvalue())


class GradescopeFigureTest(unittest.TestCase):
    """The instructors' page's count of what Gradescope (no GPU) can grade of Lab 01 is the rubric's."""

    def test_readme_quotes_the_rubric(self):
        static = sum(c.points for c in LAB.checks if c.kind in (chk.BUILD, chk.STATIC))
        with open(os.path.join(paths.KIT_ROOT, "grader", "README.md")) as f:
            readme = f.read()
        quoted = re.search(r"(\d+) of Lab 01's (\d+) points", readme)
        self.assertIsNotNone(quoted, "grader/README.md no longer says how many of Lab 01's points need no GPU")
        self.assertEqual((int(quoted.group(1)), int(quoted.group(2))), (static, LAB.max_score))


if __name__ == "__main__":
    unittest.main()
