"""grade.py end to end on the real Lab 01 build (nvcc needed, no GPU needed): exit statuses, a
missing file, a submission that does not compile, and the JSON and Gradescope documents."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from gradelib import build, paths, registry, report
from tests.fakes import GRADE, run_grade, run_make

SOLUTION = os.path.join(paths.SOLUTIONS_DIR, "01-divergent-counter")



def grade(*args):
    return run_grade(args)


@unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed")
class GradeCliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        """The solution graded once (a full nvcc build), from a folder that holds it in the lab's own
        folder, with --json and --gradescope: what two tests look at. (A folder that holds the file
        itself is graded by test_compile_error_shows_the_compiler.)"""
        cls.solution_tmp = tempfile.TemporaryDirectory()
        cls.solution_json = os.path.join(cls.solution_tmp.name, "out.json")
        cls.solution_gradescope = os.path.join(cls.solution_tmp.name, "results.json")
        nested = os.path.join(cls.solution_tmp.name, "class", "01-divergent-counter")
        shutil.copytree(SOLUTION, nested)
        cls.solution = grade("--lab", "1", "--submission", os.path.dirname(nested), "--seed", "5",
                             "--json", cls.solution_json, "--gradescope", cls.solution_gradescope)

    @classmethod
    def tearDownClass(cls):
        cls.solution_tmp.cleanup()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.json_path = os.path.join(self.tmp.name, "out.json")

    def tearDown(self):
        self.tmp.cleanup()

    def read_checks(self, path=None):
        with open(path or self.json_path) as f:
            doc = json.load(f)
        return doc, {c["name"]: c for c in doc["labs"][0]["checks"]}

    def test_solution_without_gpu_is_not_run_not_passed(self):
        gs_path = self.solution_gradescope
        proc = self.solution
        self.assertEqual(proc.returncode, 77, proc.stdout)
        self.assertIn("NOT RUN", proc.stdout)
        self.assertIn("seed 5", proc.stdout)
        doc, checks = self.read_checks(self.solution_json)
        self.assertEqual(doc["seed"], 5)
        self.assertFalse(doc["gpu"]["available"])
        self.assertEqual(checks["compiles"]["status"], "passed")
        self.assertEqual(checks["device launch in PTX"]["status"], "passed")
        self.assertTrue(checks["counter value"]["skipped_no_gpu"])
        self.assertEqual(doc["labs"][0]["cases"][0], {"K": 1, "M": 1, "N": 1})

        with open(gs_path) as f:
            gs = json.load(f)
        self.assertEqual(report.gradescope_problems(gs), [])
        self.assertEqual(gs["max_score"], doc["max_score"])
        self.assertEqual(gs["score"], sum(t["score"] for t in gs["tests"]))
        for t in gs["tests"]:
            self.assertIn("visibility", t)
        # A check this machine cannot run is no test (Gradescope knows only passed and failed): the
        # output names it and its points instead.
        self.assertEqual([t for t in gs["tests"] if "counter value" in t["name"]], [])
        self.assertIn("NOT RUN on this machine", gs["output"])
        self.assertIn("counter value (", gs["output"])
        self.assertEqual(sorted(t["name"].rsplit(": ", 1)[1] for t in gs["tests"]),
                         sorted(name for name, c in checks.items() if not c["skipped_no_gpu"]))

    def test_gradescope_check_finds_what_gradescope_refuses(self):
        bad = {"score": 1, "grade": 2, "tests": [{"name": "x", "score": 3, "max_score": 2, "status": "ok",
                                                   "visibility": "sometimes", "colour": "red"}]}
        found = " | ".join(report.gradescope_problems(bad))
        for words in ("unknown field 'grade'", "unknown field 'colour'", "status 'ok'", "visibility", "score 3 of 2"):
            self.assertIn(words, found)

    def test_missing_file_gets_its_own_verdict(self):
        proc = grade("--lab", "01", "--submission", self.tmp.name, "--json", self.json_path)
        self.assertEqual(proc.returncode, 1, proc.stdout)
        _, checks = self.read_checks()
        self.assertEqual(checks["compiles"]["status"], "failed")
        self.assertIn("missing file: divergent_counter.cu", checks["compiles"]["message"])
        self.assertEqual(checks["device launch in PTX"]["status"], "skipped")

    def test_compile_error_shows_the_compiler(self):
        with open(os.path.join(self.tmp.name, "divergent_counter.cu"), "w") as f:
            f.write('#include "divergent_counter.h"\n__global__ void diverge_cta(unsigned long long *foo, int n)\n'
                    '{ undeclared_thing = 1; }\n')
        proc = grade("--lab", "01-divergent-counter", "--submission", self.tmp.name, "--json", self.json_path)
        self.assertEqual(proc.returncode, 1, proc.stdout)
        _, checks = self.read_checks()
        self.assertIn("undeclared_thing", checks["compiles"]["message"])
        self.assertIn("error", checks["compiles"]["message"])
        self.assertIn("hint: read handouts/01-divergent-counter.md", proc.stdout)

    def test_nested_submission_folder(self):
        proc = self.solution  # the lab's folder inside the folder given
        self.assertEqual(proc.returncode, 77, proc.stdout)
        self.assertRegex(proc.stdout, r"\(.*class/01-divergent-counter\)")

    def test_usage_errors(self):
        self.assertEqual(grade("--lab", "42").returncode, 2)
        self.assertEqual(grade("--submission", os.path.join(self.tmp.name, "nope")).returncode, 2)
        self.assertEqual(grade("--timeout", "0").returncode, 2)
        for args in (("--check", "heap freed"), ("--lab", "4", "--lab", "6", "--check", "heap freed"),
                     ("--lab", "4", "--check", "heap freed", "--gradescope", os.path.join(self.tmp.name, "r.json"))):
            self.assertEqual(grade(*args).returncode, 2, args)
        proc = grade("--lab", "4", "--check", "heap fred")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("has no check 'heap fred'; its checks are: compiles; runs cleanly;", proc.stdout)


class SubcommandCliTest(unittest.TestCase):
    """grade.py's help names batch and merge, and a closed output (`grade.py batch ... | head`) ends every
    subcommand quietly with status 141, never with a traceback. (Nothing here builds.)"""

    def test_help_names_batch_and_merge(self):
        proc = grade("--help")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertRegex(proc.stdout, r"\n  grade\.py batch SUBMISSIONS_DIR --lab NN .*--roster FILE")
        self.assertRegex(proc.stdout, r"\n  grade\.py merge SHARD_OUT_DIR\.\.\. --out DIR")

    def run_into_a_closed_pipe(self, *args):
        """grade.py with its stdout a pipe nobody reads (the reader gone, as head leaves it)."""
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            proc = subprocess.run([sys.executable, GRADE] + list(args), env=dict(os.environ, KIT_NO_GPU="1"),
                                  stdout=write_end, stderr=subprocess.PIPE, universal_newlines=True)
        finally:
            os.close(write_end)
        return proc

    def test_a_closed_pipe_ends_quietly(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "class", "alice"))
            for args in (["--lab", "1", "--submission", os.path.join(tmp, "class", "alice")],
                         ["batch", os.path.join(tmp, "class"), "--lab", "1", "--out", os.path.join(tmp, "out")],
                         ["merge", os.path.join(tmp, "out"), "--out", os.path.join(tmp, "merged")], ["--help"]):
                proc = self.run_into_a_closed_pipe(*args)
                if args != ["--help"]:  # argparse drops its help quietly itself, with 0
                    self.assertEqual(proc.returncode, 141, (args, proc.stderr))
                self.assertNotIn("Traceback", proc.stderr, args)
                self.assertNotIn("BrokenPipeError", proc.stderr, args)


@unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed")
class NoToolkitTest(unittest.TestCase):
    """A machine without nvcc is the machine's problem: a clear line and no score, never a compile error."""

    def test_no_nvcc_is_said_and_not_graded(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "class", "alice"))
            env = {"PATH": tmp, "NVCC": "nvcc"}  # a PATH where nothing is found
            for args in (["--lab", "1"],
                         ["batch", os.path.join(tmp, "class"), "--lab", "1", "--out", os.path.join(tmp, "out")]):
                proc = run_grade(args, env_extra=env)
                self.assertEqual(proc.returncode, 2, proc.stdout)
                self.assertIn("no nvcc", proc.stdout)
                self.assertIn("PATH", proc.stdout)
                self.assertNotIn("score", proc.stdout)
                self.assertNotIn("compiles", proc.stdout)

    def test_a_tmpdir_nvcc_cannot_write_is_said_and_not_graded(self):
        # Seen on a GPU machine: TMPDIR named a folder not made yet; nvcc said only "nvcc fatal : Could not
        # open output file", which the build log hid, and every lab scored 0 as "a bug in the grader".
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "not-made")
            proc = run_grade(["--lab", "1", "--submission", os.path.join(paths.SOLUTIONS_DIR, "01-divergent-counter")],
                             env_extra={"TMPDIR": missing})
            self.assertEqual(proc.returncode, 2, proc.stdout)
            self.assertIn("TMPDIR=%s" % missing, proc.stdout)
            self.assertNotIn("score", proc.stdout)

    def test_nvcc_own_errors_are_shown(self):
        log = ("nvcc -O2 -rdc=true -dc lab.cu -o lab.o\n"
               "nvcc fatal   : Could not open output file '/gone/tmpxft_000046a3_0000000a'\n"
               "make: *** [kit.mk:96: lab.o] Error 1\n")
        self.assertEqual(build.compiler_errors(log), "nvcc fatal   : Could not open output file "
                                                     "'/gone/tmpxft_000046a3_0000000a'")


class TopLevelMakeTest(unittest.TestCase):
    """The README's commands, through the top-level Makefile, as a student types them."""

    def make(self, *args):
        return run_make(*args)

    def test_make_grade_one_lab_builds_the_starter(self):
        proc = self.make("grade", "LAB=01", "GRADE_ARGS=--seed 3")
        self.assertNotEqual(proc.returncode, 0, proc.stdout)  # the starter loses static points
        self.assertRegex(proc.stdout, r"compiles \.+ OK")
        self.assertRegex(proc.stdout, r"device launch in PTX \.+ FAIL")
        self.assertIn("seed 3", proc.stdout)

    def test_make_run_without_lab_says_how(self):
        proc = self.make("run")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("usage: make run LAB=01", proc.stdout)

    def test_make_run_builds_the_student_lab(self):
        proc = self.make("run", "LAB=1", "ARGS=--K 3")
        program = os.path.join(paths.BUILD_ROOT, "labs", "01-divergent-counter", "sm_" + build.cuda_arch(),
                               build.lab_vars("01-divergent-counter")["program"])
        self.assertTrue(os.path.isfile(program), proc.stdout)  # built, though make() hides the GPU
        self.assertIn("make run LAB=01: not run: no usable GPU here", proc.stdout)
        self.assertIn("Error 77", proc.stdout)

    def test_make_run_help_lists_the_options_without_a_gpu(self):
        proc = self.make("run", "LAB=07", "ARGS=--help")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertRegex(proc.stdout, r"--max-dwell +the dwell cap")
        self.assertIn("full|seahorse|elephant|spiral|minibrot|antenna, default full", proc.stdout)
        self.assertNotIn("not run", proc.stdout)

    def test_make_sanitize_says_what_it_lacks(self):
        """No compute-sanitizer: said at once. One on PATH (a stand-in here) but no GPU: the lab is built,
        then the GPU's absence is said. Either way status 77, never a pass."""
        with tempfile.TemporaryDirectory() as tmp:
            # PATH without compute-sanitizer; nvcc (which a toolkit keeps beside it) through a script of its own
            real_nvcc = shutil.which("nvcc")
            tools = os.path.join(tmp, "tools")
            os.mkdir(tools)
            if real_nvcc:
                with open(os.path.join(tools, "nvcc"), "w") as f:
                    f.write('#!/bin/sh\nexec "%s" "$@"\n' % real_nvcc)
                os.chmod(os.path.join(tools, "nvcc"), 0o755)
            env = dict(os.environ, PATH=os.pathsep.join([tools] + [
                d for d in os.environ["PATH"].split(os.pathsep) if not os.path.exists(os.path.join(d, "compute-sanitizer"))]))
            with mock.patch.dict(os.environ, env):
                proc = self.make("sanitize", "LAB=04")
                self.assertIn("make sanitize LAB=04: not run: no compute-sanitizer here", proc.stdout)
                self.assertIn("Error 77", proc.stdout)
                fake = os.path.join(tmp, "compute-sanitizer")
                with open(fake, "w") as f:
                    f.write("#!/bin/sh\necho sanitizer ran \"$@\"\n")
                os.chmod(fake, 0o755)
                with mock.patch.dict(os.environ, {"PATH": tmp + os.pathsep + env["PATH"]}):
                    proc = self.make("sanitize", "LAB=04")
        self.assertIn("make sanitize LAB=04: not run: no usable GPU here", proc.stdout)
        self.assertNotIn("sanitizer ran", proc.stdout)
        self.assertIn("Error 77", proc.stdout)


class SanitizeCommandTest(unittest.TestCase):
    """What make sanitize runs where there is a GPU: the lab's harness under memcheck, the device heap
    checked, on the lab's memcheck case unless ARGS are given; compute-sanitizer's status is the command's."""

    def test_the_harness_under_memcheck(self):
        import kit
        lab = registry.resolve("04")
        ran = []

        real_run = subprocess.run

        def fake_run(argv, **kw):
            if argv[0] != "/x/compute-sanitizer":
                return real_run(argv, **kw)  # the kit's own make calls
            ran.append(argv)
            return subprocess.CompletedProcess(argv, 1)
        with mock.patch.object(kit.memcheck, "find", lambda: "/x/compute-sanitizer"), \
                mock.patch.object(kit, "_build_lab", lambda lab: 0), mock.patch.object(kit, "no_gpu_exit", lambda c, l: None), \
                mock.patch.object(build, "cuda_arch", lambda: "90"), mock.patch.object(kit.subprocess, "run", fake_run), \
                mock.patch("builtins.print"):
            self.assertEqual(kit.cmd_sanitize(["4"]), 1)
            self.assertEqual(kit.cmd_sanitize(["4", "--lines", "7"]), 1)
        tool = len(kit.memcheck.command("/x/compute-sanitizer"))
        self.assertEqual(ran[0][:tool], ["/x/compute-sanitizer", "--tool", "memcheck", "--check-device-heap", "yes",
                                         "--print-limit", "10", "--error-exitcode", str(kit.memcheck.ERRORS_EXIT)])
        self.assertTrue(ran[0][tool].endswith(build.lab_vars(lab.name)["program"]))
        self.assertEqual(ran[0][tool + 1:], lab.harness_args(lab.memcheck_case))
        self.assertEqual(ran[1][tool + 1:], ["--lines", "7"])


if __name__ == "__main__":
    unittest.main()
