"""Batch grading without a GPU: archives unpacked safely, every entry of the class folder a row or a
named refusal, resuming, exit statuses, shards and their merge."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from unittest import mock

from gradelib import archives, batch, build, exits, failures, gpu, paths, registry, report, sandbox, sheets, starters
from gradelib import checks as chk
from gradelib.standard_checks import COMPILES, RUNS_CLEANLY
from tests.fakes import GRADE, run_grade

LAB01 = "01-divergent-counter"
LAB01_FILE = "divergent_counter.cu"


def write_zip(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def write_tar(path, members, mode="w"):
    """A tar (mode "w": plain, "w:gz": gzip) of {name: text}."""
    with tarfile.open(path, mode) as t:
        for name, data in members.items():
            data = data.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))


class ArchiveTest(unittest.TestCase):
    # The caps, lowered: unpack() reads them when it runs, and an archive just over a cap of 20 files or
    # 2 MiB meets the same code as one over the real caps (thousands of files, tens of MiB), at a
    # fraction of the time.
    CAPS = {"MAX_ARCHIVE_MEMBERS": 20, "MAX_ARCHIVE_BYTES": 2 * 1024 * 1024}

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.dest = os.path.join(self.tmp, "dest")
        for name, value in self.CAPS.items():
            self.assertLess(value, getattr(archives, name))
            patched = mock.patch.object(archives, name, value)
            patched.start()
            self.addCleanup(patched.stop)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_zip_and_tar_unpack_to_their_files(self):
        zpath = os.path.join(self.tmp, "a.zip")
        write_zip(zpath, {"alice/" + LAB01_FILE: "int x;"})
        archives.unpack(zpath, self.dest)
        self.assertEqual(build.find_submission_dir(LAB01, self.dest), os.path.join(self.dest, "alice"))
        tpath = os.path.join(self.tmp, "b.tar.gz")
        with tarfile.open(tpath, "w:gz") as t:
            info = tarfile.TarInfo(LAB01_FILE)
            info.size = 6
            t.addfile(info, io.BytesIO(b"int y;"))
        archives.unpack(tpath, os.path.join(self.tmp, "tar"))
        with open(os.path.join(self.tmp, "tar", LAB01_FILE)) as f:
            self.assertEqual(f.read(), "int y;")

    def test_plain_tar_unpacks_within_the_same_caps(self):
        plain = os.path.join(self.tmp, "c.tar")
        write_tar(plain, {"carol/" + LAB01_FILE: "int z;"})
        archives.unpack(plain, self.dest)
        with open(os.path.join(self.dest, "carol", LAB01_FILE)) as f:
            self.assertEqual(f.read(), "int z;")
        many = os.path.join(self.tmp, "many.tar")
        write_tar(many, {"f%d.txt" % i: "" for i in range(archives.MAX_ARCHIVE_MEMBERS + 1)})
        self.assert_refused(many, "the archive has more than %d files" % archives.MAX_ARCHIVE_MEMBERS)
        link = os.path.join(self.tmp, "link.tar")
        with tarfile.open(link, "w") as t:
            info = tarfile.TarInfo(LAB01_FILE)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            t.addfile(info)
        self.assert_refused(link, "is a link")
        escape = os.path.join(self.tmp, "escape.tar")
        write_tar(escape, {"../escape.cu": "x"})
        self.assert_refused(escape, "points outside")

    def assert_refused(self, path, words):
        with self.assertRaises(archives.BadArchive) as caught:
            archives.unpack(path, self.dest)
        self.assertIn(words, str(caught.exception))

    def test_paths_leading_out_are_refused(self):
        for name in ("../escape.cu", "/etc/absolute.cu", "a/../../escape.cu"):
            path = os.path.join(self.tmp, "bad.zip")
            write_zip(path, {name: "x"})
            self.assert_refused(path, "points outside")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "escape.cu")))

    def test_links_are_refused(self):
        path = os.path.join(self.tmp, "link.tar.gz")
        with tarfile.open(path, "w:gz") as t:
            info = tarfile.TarInfo(LAB01_FILE)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            t.addfile(info)
        self.assert_refused(path, "link")
        zpath = os.path.join(self.tmp, "link.zip")
        with zipfile.ZipFile(zpath, "w") as z:
            info = zipfile.ZipInfo(LAB01_FILE)
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
        self.assert_refused(zpath, "link")

    def test_caps_on_files_and_bytes(self):
        many = os.path.join(self.tmp, "many.zip")
        write_zip(many, {"f%d.txt" % i: "" for i in range(archives.MAX_ARCHIVE_MEMBERS + 1)})
        self.assert_refused(many, "the archive has more than %d files" % archives.MAX_ARCHIVE_MEMBERS)
        bomb = os.path.join(self.tmp, "bomb.zip")
        with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("zeros.bin", b"\0" * (archives.MAX_ARCHIVE_BYTES + 1))
        self.assertLess(os.path.getsize(bomb), 1024 * 1024)
        self.assert_refused(bomb, "the archive unpacks to more than %d MiB" % (archives.MAX_ARCHIVE_BYTES >> 20))

    def test_not_an_archive(self):
        path = os.path.join(self.tmp, "fake.zip")
        with open(path, "w") as f:
            f.write("not a zip")
        self.assert_refused(path, "cannot be unpacked")

    def test_every_refusal_reads_as_a_sentence(self):
        """Each reason completes "could not be graded: ..." as a clause about the archive."""
        cases = {"many.zip": {"f%d" % i: "" for i in range(archives.MAX_ARCHIVE_MEMBERS + 1)},
                 "out.zip": {"../x.cu": "x"}}
        for name, members in cases.items():
            write_zip(os.path.join(self.tmp, name), members)
        with open(os.path.join(self.tmp, "fake.tgz"), "w") as f:
            f.write("not a tar")
        for name in ("many.zip", "out.zip", "fake.tgz"):
            with self.assertRaises(archives.BadArchive) as caught:
                archives.unpack(os.path.join(self.tmp, name), os.path.join(self.tmp, "d-" + name))
            self.assertRegex(str(caught.exception), r"^the archive('s member .*)? (has|points|cannot|is|unpacks)",
                             name)

    def test_feedback_names_the_cap(self):
        many = os.path.join(self.tmp, "many.zip")
        write_zip(many, {"f%d.txt" % i: "" for i in range(archives.MAX_ARCHIVE_MEMBERS + 1)})
        sub = archives.Submission("many", archives.Submission.ARCHIVE, many)
        record, scores, feedback, page = batch.grade_submission(
            registry.resolve("1"), sub, sub.fingerprint(), 1, "v", gpu.GpuInfo(False, "no GPU here"), 10,
            self.tmp)
        self.assertEqual(record["verdict"], sheets.BAD_ARCHIVE)
        self.assertIn("The submission many.zip could not be graded: the archive has more than %d files."
                      % archives.MAX_ARCHIVE_MEMBERS, feedback)
        self.assertIn("the archive has more than", scores["output"])
        self.assertIn("the archive has more than %d files" % archives.MAX_ARCHIVE_MEMBERS, page)
        self.assertTrue(page.startswith("<!DOCTYPE html>"))


LAB05_FILES = ["default_streams.cu", "nvcc.flags"]


class ClassFolderTest(unittest.TestCase):
    """Every entry at the top of a class folder is a submission, a refusal with its reason, or OS litter."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.root = os.path.join(self.tmp, "class")
        os.makedirs(self.root)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def touch(self, name, text=""):
        with open(os.path.join(self.root, name), "w") as f:
            f.write(text)

    def test_every_entry_is_a_submission_a_refusal_or_litter(self):
        for name in ("bob", "alice", ".hidden", "__MACOSX"):
            os.makedirs(os.path.join(self.root, name))
        for name in ("carol.zip", "dave.tar.gz", "erin.tar", "frank.tgz", "alice.zip", "notes.txt", "gina.rar",
                     "hal_divergent_counter.cu", "ivy-divergent_counter.cu", LAB01_FILE, "_" + LAB01_FILE, "jo.cu",
                     ".DS_Store",
                     "._notes.txt", "Thumbs.db", ".gitignore"):
            self.touch(name)
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.makedirs(elsewhere)
        os.symlink(elsewhere, os.path.join(self.root, "linked"))
        os.symlink(os.path.join(self.root, "carol.zip"), os.path.join(self.root, "kim.zip"))
        os.mkfifo(os.path.join(self.root, "pipe"))
        found = archives.scan_class(self.root, [LAB01_FILE])
        self.assertEqual([s.id for s in found.submissions],
                         ["alice", "alice.zip", "bob", "carol", "dave", "erin", "frank", "hal", "ivy"])
        kinds = {s.id: s.kind for s in found.submissions}
        self.assertEqual(kinds["erin"], archives.Submission.ARCHIVE)
        self.assertEqual(kinds["hal"], archives.Submission.FILES)
        reasons = dict(found.refused)
        self.assertEqual(sorted(reasons), sorted([".gitignore", ".hidden", LAB01_FILE, "_" + LAB01_FILE, "gina.rar",
                                                  "jo.cu", "kim.zip", "linked", "notes.txt", "pipe"]))
        self.assertEqual(reasons["notes.txt"], "not a folder or an archive")
        self.assertEqual(reasons["gina.rar"], "not a folder or an archive")
        self.assertEqual(reasons["pipe"], "not a folder or an archive")
        self.assertIn("not a folder or an archive", reasons["jo.cu"])
        self.assertIn("ID_" + LAB01_FILE, reasons["jo.cu"])  # how to name it
        self.assertIn("no student id", reasons[LAB01_FILE])
        self.assertIn("no student id", reasons["_" + LAB01_FILE])
        self.assertEqual(reasons["linked"], "a symbolic link: not followed")
        self.assertEqual(reasons["kim.zip"], "a symbolic link: not followed")
        self.assertIn("hidden", reasons[".hidden"])
        self.assertEqual(sorted(found.ignored), sorted([".DS_Store", "._notes.txt", "Thumbs.db", "__MACOSX"]))

    def test_lone_files_of_one_id_are_one_submission(self):
        for name in ("bob_default_streams.cu", "bob_nvcc.flags", "cy_default_streams.cu"):
            self.touch(name, name)
        found = archives.scan_class(self.root, LAB05_FILES)
        self.assertEqual([(s.id, sorted(s.files)) for s in found.submissions],
                         [("bob", LAB05_FILES), ("cy", ["default_streams.cu"])])
        bob = found.submissions[0]
        self.assertEqual(bob.source, "bob_default_streams.cu, bob_nvcc.flags")
        opened = bob.open(os.path.join(self.tmp, "scratch"))
        self.assertEqual(sorted(os.listdir(opened)), LAB05_FILES)
        with open(os.path.join(opened, "nvcc.flags")) as f:
            self.assertEqual(f.read(), "bob_nvcc.flags")

    def test_canvas_bulk_download_names_give_the_students_login(self):
        """Canvas names a bulk download's files LOGIN_[LATE_]USERID_SUBMISSIONID_FILE, with -N before the
        extension of a file the student submitted again: the id is the login, and the numbers, LATE and
        -N stay out of it; where two copies of one file come, the highest -N is graded."""
        for name in ("smithjane_123_4567_divergent_counter.cu", "leeann_LATE_124_4568_divergent_counter-1.cu",
                     "okafor_125_4569_divergent_counter.cu", "okafor_125_4570_divergent_counter-2.cu",
                     "wu_LATE_126_4571_lab01.zip", "kim_127_4572_notes.txt"):
            self.touch(name, name)
        found = archives.scan_class(self.root, [LAB01_FILE])
        self.assertEqual([s.id for s in found.submissions], ["leeann", "okafor", "smithjane", "wu"])
        okafor = next(s for s in found.submissions if s.id == "okafor")
        self.assertEqual(okafor.source, "okafor_125_4570_divergent_counter-2.cu")
        reasons = dict(found.refused)
        self.assertIn("okafor_125_4570_divergent_counter-2.cu", reasons["okafor_125_4569_divergent_counter.cu"])
        self.assertIn("not a folder or an archive", reasons["kim_127_4572_notes.txt"])
        self.assertEqual([s.late for s in found.submissions], [True, False, False, True])
        leeann = found.submissions[0]
        opened = leeann.open(os.path.join(self.tmp, "l"))
        self.assertEqual(os.listdir(opened), [LAB01_FILE])

    def test_a_lone_file_is_graded_under_the_labs_name(self):
        self.touch("alice_" + LAB01_FILE, "int a;")
        with open(os.path.join(self.root, "huge_" + LAB01_FILE), "wb") as f:
            f.write(b"x" * (build.MAX_STUDENT_FILE_BYTES + 100))
        alice, huge = archives.scan_class(self.root, [LAB01_FILE]).submissions
        opened = alice.open(os.path.join(self.tmp, "a"))
        self.assertEqual(build.find_submission_dir(LAB01, opened), opened)
        before = alice.fingerprint()
        self.touch("alice_" + LAB01_FILE, "int b;")
        self.assertNotEqual(alice.fingerprint(), before)
        # A file too large to be the lab's source is copied only far enough for the build to refuse it.
        _, problems = build.stage(LAB01, huge.open(os.path.join(self.tmp, "h")), os.path.join(self.tmp, "work"))
        self.assertEqual([kind for kind, _ in problems], [failures.REFUSED_FILE])


class ShardTest(unittest.TestCase):
    def test_shards_cover_everything_once(self):
        items = ["s%02d" % i for i in range(11)]
        shards = [batch.shard_of(items, (i, 4)) for i in range(1, 5)]
        self.assertEqual(sorted(sum(shards, [])), items)
        self.assertEqual(batch.shard_of(items, None), items)

    def test_shard_syntax(self):
        self.assertEqual(batch.parse_shard("2/4"), (2, 4))
        for bad in ("0/4", "5/4", "x", "1/"):
            with self.assertRaises(Exception):
                batch.parse_shard(bad)

    def test_seeds_differ_by_submission_and_repeat(self):
        self.assertEqual(batch.submission_seed(7, "alice"), batch.submission_seed(7, "alice"))
        self.assertNotEqual(batch.submission_seed(7, "alice"), batch.submission_seed(7, "bob"))


class _Result:
    def __init__(self, name, status, score=0, points=1, message="", lacking=None, failure=None):
        self.name = name
        self.status = status
        self.score = score
        self.check = chk.Check(name, points, chk.BUILD, None)
        self.message = message
        self.lacking = lacking
        self.no_gpu = lacking == chk.GPU
        self.failure = failure


class _Report:
    def __init__(self, results):
        self.results = results


class VerdictTest(unittest.TestCase):
    """The sheet's verdict comes from the failure kind of "compiles" and "runs cleanly", whatever their
    messages say."""

    def verdict(self, built, ran=None, rest=()):
        results = [built, ran or _Result(RUNS_CLEANLY, chk.PASSED, 1)] + list(rest)
        return sheets.verdict_of(_Report(results))

    def test_build_verdicts(self):
        for kind, expected in ((failures.MISSING_FILE, "missing file"), (failures.REFUSED_FILE, "refused file"),
                               (failures.COMPILE_ERROR, "compile error"), (failures.REFUSED_CODE, "refused code")):
            self.assertEqual(self.verdict(_Result(COMPILES, chk.FAILED, message="reworded", failure=kind)), expected)

    def test_run_verdicts(self):
        built = _Result(COMPILES, chk.PASSED, 1)
        cases = [(failures.TIMEOUT, "timeout"), (failures.CRASH, "crash"), (failures.OUTPUT_FLOOD, "output flood"),
                 (failures.CUDA_ERROR, "CUDA error"), (failures.FAILED_LAUNCHES, "failed device launches"),
                 (failures.NO_RESULT, "no valid result"), (failures.EXIT_STATUS, "runs not clean"),
                 (failures.LAB_PROBLEM, "runs not clean")]
        for kind, expected in cases:
            failed_run = _Result(RUNS_CLEANLY, chk.FAILED, message="any words at all", failure=kind)
            self.assertEqual(self.verdict(built, failed_run), expected)

    def test_every_kind_has_a_verdict_and_runs_have_an_order(self):
        kinds = {v for k, v in vars(failures).items() if k.isupper() and isinstance(v, str)}
        self.assertEqual(kinds, set(failures.VERDICTS))
        build_kinds = {failures.MISSING_FILE, failures.REFUSED_FILE, failures.COMPILE_ERROR, failures.REFUSED_CODE}
        self.assertEqual(set(failures.RUN_ORDER), kinds - build_kinds - {failures.GRADER_BUG})

    def test_a_check_that_raised_leaves_the_submission_ungraded(self):
        """Whichever check it was, and whatever "compiles" found: the sheet says grader error (its row is
        no grade, the batch's status is 1, and the batch grades it again), never a KeyError."""
        bug = dict(message="the grader could not evaluate this check", failure=failures.GRADER_BUG)
        self.assertEqual(self.verdict(_Result(COMPILES, chk.FAILED, **bug)), sheets.GRADER_ERROR)
        built = _Result(COMPILES, chk.PASSED, 1)
        self.assertEqual(self.verdict(built, _Result(RUNS_CLEANLY, chk.FAILED, **bug)), sheets.GRADER_ERROR)
        self.assertEqual(self.verdict(built, rest=[_Result("x", chk.FAILED, **bug)]), sheets.GRADER_ERROR)
        self.assertEqual(self.verdict(_Result(COMPILES, chk.FAILED, failure=failures.COMPILE_ERROR),
                                      rest=[_Result("x", chk.FAILED, **bug)]), sheets.GRADER_ERROR)

    def test_score_verdicts(self):
        built = _Result(COMPILES, chk.PASSED, 1)
        self.assertEqual(self.verdict(built, rest=[_Result("x", chk.PASSED, 1)]), sheets.FULL_MARKS)
        self.assertEqual(self.verdict(built, rest=[_Result("x", chk.FAILED, 0)]), sheets.POINTS_LOST)
        self.assertEqual(self.verdict(built, rest=[_Result("x", chk.SKIPPED, 0, lacking=chk.GPU)]), sheets.NOT_RUN_NO_GPU)


class GraderErrorTest(unittest.TestCase):
    """A submission the grader could not grade is graded again: once at once, a moment later (what the
    machine could not do under load passes), and at the batch's next run."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.sub = archives.Submission("alice", archives.Submission.FOLDER, self.tmp)
        self.pool = gpu.GpuPool([], gpu.GpuInfo(False, "no GPU here"))

    def graded(self, outcomes):
        """_grade_on_a_gpu where grade_lab raises or returns each of outcomes in turn: (record, its calls)."""
        calls = []

        def grade_lab(*args, **kwargs):
            calls.append(args)
            outcome = outcomes[len(calls) - 1]
            if isinstance(outcome, Exception):
                raise outcome
            return outcome
        with mock.patch.object(batch, "grade_lab", side_effect=grade_lab), \
                mock.patch.object(build, "find_submission_dir", return_value=self.tmp), \
                mock.patch.object(batch, "GRADE_AGAIN_AFTER_S", 0):
            record = batch._grade_on_a_gpu(self.pool, registry.resolve("1"), self.sub, "files", 1, "v", 10,
                                           self.tmp, False)[0]
        return record, calls

    def test_a_sandbox_not_made_is_the_machine_s_and_is_graded_again(self):
        failed = sandbox_failed()
        record, calls = self.graded([failed, failed])
        self.assertEqual(len(calls), 2)
        self.assertEqual(record["verdict"], sheets.GRADER_ERROR)
        self.assertIn("This machine could not grade the submission (not the submission's doing)", record["problem"])
        self.assertIn("could not be made", record["first_attempt"])

    def test_the_second_attempt_s_grade_is_kept(self):
        lab = registry.resolve("1")
        results = [_Result(c.name, chk.PASSED, c.points) for c in lab.checks]
        done = mock.Mock(results=results, score=lab.max_score, max_score=lab.max_score, lab=lab,
                         submission_dir_label="s",
                         to_dict=lambda: {"checks": []}, costs=lambda: {})
        with mock.patch.object(batch.report, "lab_text", return_value="report"), \
                mock.patch.object(batch.report, "gradescope", return_value={}), \
                mock.patch.object(batch.feedback, "page_with_figure", return_value="<html>"):
            record, calls = self.graded([sandbox_failed(), done])
        self.assertEqual((len(calls), record["verdict"]), (2, sheets.FULL_MARKS), record.get("problem"))
        self.assertIn("could not be made", record["first_attempt"])

    def test_a_re_run_grades_what_was_not_graded(self):
        sub = archives.Submission("bob", archives.Submission.FOLDER, self.tmp)
        seed = batch.submission_seed(1, "bob")
        old = {"kit_version": "v", "fingerprint": sub.fingerprint(), "seed": seed, "sandboxed": True}
        self.assertEqual(batch._to_grade([sub], {"bob": dict(old, verdict=sheets.POINTS_LOST)}, 1, "v", False), [])
        self.assertEqual(len(batch._to_grade([sub], {"bob": dict(old, verdict=sheets.GRADER_ERROR)}, 1, "v", False)), 1)


def sandbox_failed():
    return sandbox.SandboxFailed("the grading sandbox could not be made for the build: unshare: No space left on device")


class BatchStatusTest(unittest.TestCase):
    """A batch's exit status: 1 when something could not be graded, else 77 when runtime checks were not
    run for want of a GPU (whatever the students scored), else 0; 130 when interrupted."""

    def record(self, verdict, no_gpu):
        return {"verdict": verdict, "runtime_not_run": no_gpu, "score": 1, "max_score": 2}

    def test_statuses(self):
        ran = {"a": self.record(sheets.POINTS_LOST, False), "b": self.record(sheets.FULL_MARKS, False)}
        self.assertEqual(batch.batch_status(ran, ["a", "b"]), exits.OK)
        not_run = dict(ran, c=self.record(sheets.POINTS_LOST, True))  # static points lost, runtime not run
        self.assertEqual(batch.batch_status(not_run, ["a", "b", "c"]), exits.NOT_RUN)
        compile_errors = {"d": self.record("compile error", False), "e": self.record(sheets.BAD_ARCHIVE, False)}
        self.assertEqual(batch.batch_status(compile_errors, ["d", "e"]), exits.OK)  # graded: 0 points
        self.assertEqual(batch.batch_status(not_run, ["a", "b", "c", "missing"]), exits.FAILED)
        self.assertEqual(batch.batch_status(not_run, ["a", "b", "c"], refused=[("x.txt", "why")]), exits.FAILED)
        broken = dict(not_run, f=self.record(sheets.GRADER_ERROR, False))
        self.assertEqual(batch.batch_status(broken, ["a", "b", "c", "f"]), exits.FAILED)
        self.assertEqual(batch.batch_status(ran, ["a", "b"], interrupted=True), 130)

    def test_older_records_read_from_their_checks(self):
        old = {"verdict": sheets.POINTS_LOST, "report": {"checks": [{"skipped_no_gpu": False}, {"skipped_no_gpu": True}]}}
        self.assertTrue(sheets.runtime_not_run(old))
        self.assertEqual(batch.batch_status({"a": old}, ["a"]), exits.NOT_RUN)


class SaltTest(unittest.TestCase):
    def draw(self, salt):
        from gradelib.context import case_rng
        return [case_rng(12, LAB01, salt).random() for _ in range(3)]

    def test_salt_changes_the_cases_of_a_seed(self):
        self.assertEqual(self.draw(""), self.draw(""))
        self.assertNotEqual(self.draw(""), self.draw("course-secret"))
        self.assertEqual(self.draw("course-secret"), self.draw("course-secret"))

    def test_salt_from_the_environment(self):
        saved = os.environ.get(paths.SALT_ENV)
        os.environ[paths.SALT_ENV] = "from-env"
        try:
            self.assertEqual(paths.instructor_salt(), "from-env")
        finally:
            if saved is None:
                del os.environ[paths.SALT_ENV]
            else:
                os.environ[paths.SALT_ENV] = saved
        # grade.py says its seed before it builds anything: a folder without the lab's file (no build) will do.
        with tempfile.TemporaryDirectory() as nothing:
            seeded = run_grade(["--lab", "1", "--seed", "5", "--submission", nothing], {paths.SALT_ENV: "x"})
        self.assertIn("seed 5 with the instructor's salt", seeded.stdout)


def read_sheet(out):
    with open(os.path.join(out, "scores.csv")) as f:
        return {row["id"]: row for row in csv.DictReader(f)}


class BatchEndToEndTest(unittest.TestCase):
    """The real grader over real builds (nvcc, no GPU): one row per submission, whatever happened."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.subs = os.path.join(cls.tmp, "subs")
        starter = os.path.join(starters.pristine(LAB01), LAB01_FILE)
        os.makedirs(os.path.join(cls.subs, "good"))
        shutil.copy(os.path.join(paths.SOLUTIONS_DIR, LAB01, LAB01_FILE), os.path.join(cls.subs, "good"))
        os.makedirs(os.path.join(cls.subs, "broken"))
        with open(os.path.join(cls.subs, "broken", LAB01_FILE), "w") as f:
            f.write("this is not CUDA(\n")
        os.makedirs(os.path.join(cls.subs, "empty"))
        with open(starter) as f:
            write_zip(os.path.join(cls.subs, "zipped.zip"), {"zipped/" + LAB01_FILE: f.read()})
        write_zip(os.path.join(cls.subs, "evil.zip"), {"../../evil.cu": "x"})
        shutil.copy(os.path.join(paths.SOLUTIONS_DIR, LAB01, LAB01_FILE), os.path.join(cls.subs, "lone_" + LAB01_FILE))
        with open(os.path.join(paths.SOLUTIONS_DIR, LAB01, LAB01_FILE)) as f:
            write_tar(os.path.join(cls.subs, "tarred.tar"), {"tarred/" + LAB01_FILE: f.read()})
        open(os.path.join(cls.subs, ".DS_Store"), "w").close()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_every_submission_gets_a_row_and_reruns_resume(self):
        out = os.path.join(self.tmp, "out")
        first = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--seed", "3", "--jobs", "2"])
        # Every submission graded, none refused, and no GPU: 77, as grade.py gives, whatever the scores.
        self.assertEqual(first.returncode, exits.NOT_RUN, first.stdout)
        self.assertIn("exit status 77: checks were NOT RUN for what this machine lacks", first.stdout)
        sheet = read_sheet(out)
        self.assertEqual({k: v["verdict"] for k, v in sheet.items()}, {
            "good": sheets.NOT_RUN_NO_GPU, "broken": "compile error", "empty": "missing file",
            "zipped": sheets.POINTS_LOST, "evil": sheets.BAD_ARCHIVE, "lone": sheets.NOT_RUN_NO_GPU,
            "tarred": sheets.NOT_RUN_NO_GPU})
        self.assertEqual(sheet["lone"]["device launch in PTX"], "2")
        self.assertNotIn("REFUSED", first.stdout)
        with open(os.path.join(out, "feedback", "evil.md")) as f:
            self.assertIn("could not be graded: the archive's member '../../evil.cu' points outside", f.read())
        self.assertEqual(sheet["good"]["compiles"], "2")
        self.assertIn("score distribution", first.stdout)
        self.assertIn("most-failed checks", first.stdout)
        for sub_id in sheet:
            with open(os.path.join(out, "results", sub_id + ".json")) as f:
                doc = json.load(f)
            self.assertTrue({"score", "max_score", "tests"} <= set(doc), sub_id)
            self.assertEqual(report.gradescope_problems(doc), [], sub_id)
            with open(os.path.join(out, "feedback", sub_id + ".md")) as f:
                self.assertIn("feedback for %s" % sub_id, f.read())
            with open(os.path.join(out, "feedback", sub_id + ".html")) as f:
                page = f.read()
            self.assertIn("feedback for %s" % sub_id, page)
            self.assertNotIn(self.subs, page)  # named by its source, not the grading machine's folders
        with open(os.path.join(out, "feedback", "evil.html")) as f:  # a bad archive: 0 points, said on its page
            self.assertIn("Score: 0 / %d" % registry.resolve("01").max_score, f.read())
        with open(os.path.join(out, "feedback", "broken.md")) as f:
            feedback = f.read()
        self.assertIn("error", feedback)
        self.assertNotIn(paths.BUILD_ROOT, feedback)  # no paths of the grading machine

        again = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--jobs", "2"])
        self.assertIn("7 already graded", again.stdout)
        with open(os.path.join(self.subs, "broken", LAB01_FILE), "a") as f:
            f.write("// resubmitted\n")
        changed = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--jobs", "2"])
        self.assertIn("6 already graded", changed.stdout)
        regraded = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--jobs", "2", "--regrade"])
        self.assertNotIn("already graded", regraded.stdout)

    def test_shards_merge_into_one_sheet(self):
        shard_dirs = [os.path.join(self.tmp, "shard-%d" % i) for i in (1, 2)]
        for i, shard_dir in enumerate(shard_dirs, 1):
            done = run_grade(["batch", self.subs, "--lab", "1", "--out", shard_dir, "--seed", "4",
                              "--shard", "%d/2" % i])
            self.assertEqual(done.returncode, exits.NOT_RUN, done.stdout)
        self.assertEqual(len(read_sheet(shard_dirs[0])) + len(read_sheet(shard_dirs[1])), 7)
        merged = os.path.join(self.tmp, "merged")
        done = run_grade(["merge"] + shard_dirs + ["--out", merged])
        self.assertEqual(done.returncode, exits.NOT_RUN, done.stdout)
        sheet = read_sheet(merged)
        self.assertEqual(sorted(sheet), ["broken", "empty", "evil", "good", "lone", "tarred", "zipped"])
        self.assertTrue(os.path.isfile(os.path.join(merged, "feedback", "good.md")))
        self.assertTrue(os.path.isfile(os.path.join(merged, "feedback", "good.html")))

        half = os.path.join(self.tmp, "half")
        done = run_grade(["merge", shard_dirs[0], "--out", half])
        self.assertEqual(done.returncode, 1)
        self.assertIn("NOT GRADED", done.stdout)
        self.assertIn("not graded", {row["verdict"] for row in read_sheet(half).values()})

        other_seed = os.path.join(self.tmp, "shard-2-seed-5")
        run_grade(["batch", self.subs, "--lab", "1", "--out", other_seed, "--seed", "5", "--shard", "2/2"])
        mixed = os.path.join(self.tmp, "mixed")
        done = run_grade(["merge", shard_dirs[0], other_seed, "--out", mixed])
        self.assertEqual(done.returncode, exits.FAILED, done.stdout)
        with open(os.path.join(mixed, "summary.txt")) as f:
            self.assertIn("NOT COMPARABLE: the shards differ in seed (4, 5)", f.read())
        self.assertIn("NOT COMPARABLE", done.stdout.splitlines()[-1])


class BatchRefusalTest(unittest.TestCase):
    """What is not a submission is refused by name, in the output, summary.txt and scores.csv, and the
    batch says so in its exit status; the out folder is never graded. (Nothing here builds.)"""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.subs = os.path.join(self.tmp, "class")
        os.makedirs(os.path.join(self.subs, ".hidden"))
        for name in ("notes.txt", LAB01_FILE, ".DS_Store", "._notes.txt"):
            open(os.path.join(self.subs, name), "w").close()
        os.makedirs(os.path.join(self.tmp, "elsewhere"))
        os.symlink(os.path.join(self.tmp, "elsewhere"), os.path.join(self.subs, "linked"))
        write_zip(os.path.join(self.subs, "evil.zip"), {"../../evil.cu": "x"})

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_refusals_are_named_and_the_batch_fails(self):
        out = os.path.join(self.tmp, "out")
        done = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--seed", "2"])
        self.assertEqual(done.returncode, exits.FAILED, done.stdout)
        self.assertNotIn("Traceback", done.stdout)
        with open(os.path.join(out, "summary.txt")) as f:
            summary = f.read()
        expected = {"notes.txt": "not a folder or an archive", "linked": "a symbolic link: not followed",
                    ".hidden": archives.HIDDEN, LAB01_FILE: "no student id"}
        sheet = read_sheet(out)
        for name, reason in expected.items():
            self.assertRegex(done.stdout, r"\n  %s: [^\n]*%s" % (re.escape(name), re.escape(reason)))
            self.assertRegex(summary, r"REFUSED, not graded: %s: [^\n]*%s" % (re.escape(name), re.escape(reason)))
            self.assertTrue(sheet[name]["verdict"].startswith("refused: "), name)
            self.assertIn(reason, sheet[name]["verdict"])
            self.assertEqual(sheet[name]["score"], "")
        self.assertEqual(sheet["evil"]["verdict"], sheets.BAD_ARCHIVE)
        self.assertEqual(sorted(sheet), sorted(list(expected) + ["evil"]))  # the OS litter passed over
        self.assertNotIn(".DS_Store", done.stdout)

    def test_an_out_folder_inside_the_class_is_refused(self):
        inside = os.path.join(self.subs, "graded")
        done = run_grade(["batch", self.subs, "--lab", "1", "--out", inside])
        self.assertEqual(done.returncode, exits.USAGE, done.stdout)
        self.assertIn("is inside the class folder", done.stdout)
        self.assertFalse(os.path.exists(inside))
        done = run_grade(["batch", self.subs, "--lab", "1", "--out", self.subs])
        self.assertEqual(done.returncode, exits.USAGE, done.stdout)
        # The default out folder, grading/<lab>/ under the current folder, when that is the class folder.
        env = dict(os.environ, KIT_NO_GPU="1")
        done = subprocess.run([sys.executable, GRADE, "batch", ".", "--lab", "1"], cwd=self.subs, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertEqual(done.returncode, exits.USAGE, done.stdout)
        self.assertIn("give --out a folder outside it", done.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.subs, "grading")))



class ProgressLineTest(unittest.TestCase):
    """The class's count of failures reads as the class's, not as the submission's on the line."""

    def test_the_failures_are_the_classes_so_far(self):
        import contextlib
        import io
        progress = batch._Progress(2, 0)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            progress({"id": "dan", "score": 0, "max_score": 18, "verdict": "compile error"})
            progress({"id": "eve", "score": 6, "max_score": 18, "verdict": "points lost"})
        first, second = err.getvalue().splitlines()
        self.assertIn("[1/2] dan: 0/18 compile error | so far 1 submission did not build, run or unpack", first)
        self.assertIn("[2/2] eve: 6/18 points lost | so far 1 submission did not build, run or unpack", second)

if __name__ == "__main__":
    unittest.main()
