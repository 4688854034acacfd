"""Batch grading without a GPU: archives unpacked safely, a row for every submission whatever
happened to it, resuming, shards and their merge."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

from gradelib import archives, batch, build, failures, paths, report, sheets
from gradelib import checks as chk
from gradelib.grading import COMPILES, RUNS_CLEANLY

GRADE = os.path.join(paths.KIT_ROOT, "grader", "grade.py")
LAB01 = "01-divergent-counter"
LAB01_FILE = "divergent_counter.cu"


def write_zip(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


class ArchiveTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.dest = os.path.join(self.tmp, "dest")

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
        self.assert_refused(many, "more than %d files" % archives.MAX_ARCHIVE_MEMBERS)
        bomb = os.path.join(self.tmp, "bomb.zip")
        with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("zeros.bin", b"\0" * (archives.MAX_ARCHIVE_BYTES + 1))
        self.assertLess(os.path.getsize(bomb), 1024 * 1024)
        self.assert_refused(bomb, "MiB unpacked")

    def test_not_an_archive(self):
        path = os.path.join(self.tmp, "fake.zip")
        with open(path, "w") as f:
            f.write("not a zip")
        self.assert_refused(path, "cannot be unpacked")

    def test_submissions_found_with_ids(self):
        root = os.path.join(self.tmp, "subs")
        for name in ("bob", "alice", ".hidden"):
            os.makedirs(os.path.join(root, name))
        for name in ("carol.zip", "dave.tar.gz", "alice.zip", "notes.txt"):
            open(os.path.join(root, name), "w").close()
        ids = [i for i, _ in archives.find_submissions(root)]
        self.assertEqual(ids, ["alice", "alice.zip", "bob", "carol", "dave"])


class ReviewFlagTest(unittest.TestCase):
    def test_host_tricks_are_flagged_for_a_person(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, LAB01_FILE), "w") as f:
                f.write("__attribute__((constructor)) static void f(void) { FILE *x = fopen(\"r.json\", \"w\"); exit(0); }")
            self.assertEqual(batch.review_flags(tmp, LAB01), ["runs before main", "opens files", "exits"])
            shutil.copy(os.path.join(paths.SOLUTIONS_DIR, LAB01, LAB01_FILE), tmp)
            self.assertEqual(batch.review_flags(tmp, LAB01), [])


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
    def __init__(self, name, status, score=0, points=1, message="", no_gpu=False, failure=None):
        self.name = name
        self.status = status
        self.score = score
        self.check = chk.Check(name, points, chk.BUILD, None)
        self.message = message
        self.no_gpu = no_gpu
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
                               (failures.COMPILE_ERROR, "compile error")):
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
        build_kinds = {failures.MISSING_FILE, failures.REFUSED_FILE, failures.COMPILE_ERROR}
        self.assertEqual(set(failures.RUN_ORDER), kinds - build_kinds)

    def test_score_verdicts(self):
        built = _Result(COMPILES, chk.PASSED, 1)
        self.assertEqual(self.verdict(built, rest=[_Result("x", chk.PASSED, 1)]), sheets.FULL_MARKS)
        self.assertEqual(self.verdict(built, rest=[_Result("x", chk.FAILED, 0)]), sheets.POINTS_LOST)
        self.assertEqual(self.verdict(built, rest=[_Result("x", chk.SKIPPED, 0, no_gpu=True)]), sheets.NOT_RUN_NO_GPU)


class SaltTest(unittest.TestCase):
    def draw(self, salt):
        from gradelib.grading import case_rng
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
        seeded = run_grade(["--lab", "1", "--seed", "5", "--submission", paths.SOLUTIONS_DIR],
                           {paths.SALT_ENV: "x"})
        self.assertIn("seed 5 with the instructor's salt", seeded.stdout)


def run_grade(args, env_extra=None):
    env = dict(os.environ, KIT_NO_GPU="1", **(env_extra or {}))
    return subprocess.run([sys.executable, GRADE] + args, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)


def read_sheet(out):
    with open(os.path.join(out, "scores.csv")) as f:
        return {row["id"]: row for row in csv.DictReader(f)}


class BatchEndToEndTest(unittest.TestCase):
    """The real grader over real builds (nvcc, no GPU): one row per submission, whatever happened."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.subs = os.path.join(cls.tmp, "subs")
        starter = os.path.join(paths.LABS_DIR, LAB01, LAB01_FILE)
        os.makedirs(os.path.join(cls.subs, "good"))
        shutil.copy(os.path.join(paths.SOLUTIONS_DIR, LAB01, LAB01_FILE), os.path.join(cls.subs, "good"))
        os.makedirs(os.path.join(cls.subs, "broken"))
        with open(os.path.join(cls.subs, "broken", LAB01_FILE), "w") as f:
            f.write("this is not CUDA(\n")
        os.makedirs(os.path.join(cls.subs, "empty"))
        with open(starter) as f:
            write_zip(os.path.join(cls.subs, "zipped.zip"), {"zipped/" + LAB01_FILE: f.read()})
        write_zip(os.path.join(cls.subs, "evil.zip"), {"../../evil.cu": "x"})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_every_submission_gets_a_row_and_reruns_resume(self):
        out = os.path.join(self.tmp, "out")
        first = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--seed", "3", "--jobs", "2"])
        self.assertEqual(first.returncode, 0, first.stdout)
        sheet = read_sheet(out)
        self.assertEqual({k: v["verdict"] for k, v in sheet.items()}, {
            "good": sheets.NOT_RUN_NO_GPU, "broken": "compile error", "empty": "missing file",
            "zipped": sheets.POINTS_LOST, "evil": sheets.BAD_ARCHIVE})
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
        with open(os.path.join(out, "feedback", "broken.md")) as f:
            feedback = f.read()
        self.assertIn("error", feedback)
        self.assertNotIn(paths.BUILD_ROOT, feedback)  # no paths of the grading machine

        again = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--jobs", "2"])
        self.assertIn("5 already graded", again.stdout)
        with open(os.path.join(self.subs, "broken", LAB01_FILE), "a") as f:
            f.write("// resubmitted\n")
        changed = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--jobs", "2"])
        self.assertIn("4 already graded", changed.stdout)
        regraded = run_grade(["batch", self.subs, "--lab", "1", "--out", out, "--jobs", "2", "--regrade"])
        self.assertNotIn("already graded", regraded.stdout)

    def test_shards_merge_into_one_sheet(self):
        shard_dirs = [os.path.join(self.tmp, "shard-%d" % i) for i in (1, 2)]
        for i, shard_dir in enumerate(shard_dirs, 1):
            done = run_grade(["batch", self.subs, "--lab", "1", "--out", shard_dir, "--seed", "4",
                              "--shard", "%d/2" % i])
            self.assertEqual(done.returncode, 0, done.stdout)
        self.assertEqual(len(read_sheet(shard_dirs[0])) + len(read_sheet(shard_dirs[1])), 5)
        merged = os.path.join(self.tmp, "merged")
        done = run_grade(["merge"] + shard_dirs + ["--out", merged])
        self.assertEqual(done.returncode, 0, done.stdout)
        sheet = read_sheet(merged)
        self.assertEqual(sorted(sheet), ["broken", "empty", "evil", "good", "zipped"])
        self.assertTrue(os.path.isfile(os.path.join(merged, "feedback", "good.md")))

        half = os.path.join(self.tmp, "half")
        done = run_grade(["merge", shard_dirs[0], "--out", half])
        self.assertEqual(done.returncode, 1)
        self.assertIn("NOT GRADED", done.stdout)
        self.assertIn("not graded", {row["verdict"] for row in read_sheet(half).values()})


if __name__ == "__main__":
    unittest.main()
