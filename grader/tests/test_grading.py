"""A lab's harness runs, with small fake harnesses: crashes, hangs, floods, CUDA errors and failed
device launches are each reported as such, and the grader carries on."""
import json
import os
import stat
import sys
import tempfile
import unittest

from gradelib import checks as chk
from gradelib import grading
from gradelib.labs import RUNS_CLEANLY, Lab

HEADER = "#!%s\nimport json, os, sys, time, signal\nout = sys.argv[sys.argv.index('--json') + 1]\n" % sys.executable
WRITE_CLEAN = "json.dump({'value': 42, 'launch_log': {'failed': 0}}, open(out, 'w'))\n"

FAKE_HARNESSES = {
    "clean": WRITE_CLEAN,
    "hang": "time.sleep(60)\n",
    "crash": "print('about to crash', flush=True); os.kill(os.getpid(), signal.SIGSEGV)\n",
    "flood": "while True: sys.stdout.write('spam ' * 1000)\n",
    "cuda-error": "print('CUDA error at harness.cu:12: cudaDeviceSynchronize(): cudaErrorIllegalAddress "
                  "(an illegal memory access was encountered)', file=sys.stderr); sys.exit(3)\n",
    "no-result": "print('done')\n",
    "launch-failed": "json.dump({'value': 42, 'launch_log': {'failed': 3, 'first_error': "
                     "'cudaErrorLaunchPendingCountExceeded', 'first_error_line': 17}}, open(out, 'w'))\n",
    "garbled": "open(out, 'w').write('{not json')\n",
}


def value_check(ctx):
    return grading.per_case(ctx, lambda run: None if run.doc["value"] == 42 else "wrong value")


def fake_lab():
    return Lab("99-fake", "Fake lab", "handouts/none.md", make_cases=lambda rng: [{"case": 1}, {"case": 2}],
               harness_args=lambda p: ["--case", str(p["case"])],
               checks=[chk.Check("value", 1, chk.RUNTIME, value_check, parent=RUNS_CLEANLY)])


class FakeHarnessTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.lab = fake_lab()

    def tearDown(self):
        self.tmp.cleanup()

    def grade_with(self, body, timeout=5):
        program = os.path.join(self.tmp.name, "harness")
        with open(program, "w") as f:
            f.write(HEADER + body)
        os.chmod(program, os.stat(program).st_mode | stat.S_IEXEC)
        ctx = grading.Context(self.lab, self.tmp.name, self.tmp.name, seed=1, timeout=timeout)
        ctx.program = program
        checks = grading.kit_checks(self.lab)[1:] + self.lab.lab_checks  # skip the real build
        checks[0].parent = None
        return chk.run_checks(checks, ctx)

    def assert_not_clean(self, name, expected_words, timeout=5):
        runs, value = self.grade_with(FAKE_HARNESSES[name], timeout)
        self.assertEqual(runs.status, chk.FAILED, name)
        for word in expected_words:
            self.assertIn(word, runs.message, name)
        self.assertEqual(value.status, chk.SKIPPED, name)
        self.assertIn("'runs cleanly' did not pass", value.message)

    def test_clean_run_lets_lab_checks_evaluate(self):
        runs, value = self.grade_with(FAKE_HARNESSES["clean"])
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED))

    def test_hang_stops_the_remaining_cases(self):
        self.assert_not_clean("hang", ["time limit", "case=1", "case=2: not run: an earlier case hit the time limit"],
                              timeout=1)

    def test_crash(self):
        self.assert_not_clean("crash", ["crashed (SIGSEGV)", "about to crash"])

    def test_flood(self):
        self.assert_not_clean("flood", ["MiB of output"], timeout=60)

    def test_cuda_error(self):
        self.assert_not_clean("cuda-error", ["CUDA error", "cudaErrorIllegalAddress"])

    def test_missing_result(self):
        self.assert_not_clean("no-result", ["without writing its result"])

    def test_garbled_result(self):
        self.assert_not_clean("garbled", ["without writing its result"])

    def test_failed_device_launches(self):
        self.assert_not_clean("launch-failed", ["3 device-side launch(es) failed",
                                                "cudaErrorLaunchPendingCountExceeded", "line 17"])

    def test_partial_credit_for_clean_runs(self):
        body = "if sys.argv[2] == '2': sys.exit(1)\n" + WRITE_CLEAN
        runs, _ = self.grade_with(body)
        self.assertEqual(runs.status, chk.FAILED)
        self.assertEqual(runs.score, 0.5)
        self.assertIn("1 of 2 runs", runs.message)


if __name__ == "__main__":
    unittest.main()
