"""A lab's harness runs, with small fake harnesses: crashes, hangs, floods, CUDA errors and failed
device launches are each reported as such, and the grader carries on."""
import os
import sys
import tempfile
import time
import unittest
from unittest import mock

from gradelib import checks as chk
from gradelib import failures, gpushare, grading, harness, sandbox
from gradelib.grading import RUNS_CLEANLY
from gradelib.harness import Contract, Option
from gradelib.registry import Lab

# A fake harness speaks the kit's channel protocol (kit_result.h): the nonce from --nonce-fd, then
# "kit-nonce NONCE" and the document on the descriptor named by --json fd:N.
HEADER = """#!{python}
import json, os, sys, time, signal
def arg(name): return sys.argv[sys.argv.index(name) + 1]
nonce = os.read(int(arg('--nonce-fd')), 100).decode().strip()
def emit_raw(text, first_line=None):
    with os.fdopen(int(arg('--json')[len('fd:'):]), 'w') as f:
        f.write((first_line if first_line is not None else 'kit-nonce ' + nonce) + '\\n' + text)
def emit(doc): emit_raw(json.dumps(doc))
"""
WRITE_CLEAN = "emit({'value': 42, 'launch_log': {'failed': 0}})\n"

FAKE_HARNESSES = {
    "clean": WRITE_CLEAN,
    "hang": "time.sleep(60)\n",
    "crash": "print('about to crash', flush=True); os.kill(os.getpid(), signal.SIGSEGV)\n",
    "flood": "while True: sys.stdout.write('spam ' * 1000)\n",
    "cuda-error": "print('CUDA error at harness.cu:12: cudaDeviceSynchronize(): cudaErrorIllegalAddress "
                  "(an illegal memory access was encountered)', file=sys.stderr); sys.exit(3)\n",
    "no-result": "print('done')\n",
    "launch-failed": "emit({'value': 42, 'launch_log': {'failed': 3, 'first_error': "
                     "'cudaErrorLaunchPendingCountExceeded', 'first_error_line': 17}})\n",
    "garbled": "emit_raw('{not json')\n",
    # What a submission might try instead of doing the work: none of it reaches the grader.
    "pass-line-and-file": "print('TOTAL 14/14: full marks'); "
                          "[json.dump({'value': 42, 'launch_log': {'failed': 0}}, open(n, 'w')) "
                          "for n in ('result-0.json', 'result-1.json', 'result.json')]\n",
    "wrong-nonce": "emit_raw(json.dumps({'value': 42, 'launch_log': {'failed': 0}}), 'kit-nonce 0123456789abcdef')\n",
    "no-nonce-line": "emit_raw(json.dumps({'value': 42, 'launch_log': {'failed': 0}}), '{}')\n",
}


def value_check(ctx):
    return grading.per_case(ctx, lambda run: None if run.doc["value"] == 42 else "wrong value")


def fake_lab():
    return Lab("99-fake", "Fake lab", "handouts/none.md",
               harness=Contract([Option("case", 1, 2)], result_keys=["value", "launch_log"]),
               make_cases=lambda rng: [{"case": 1}, {"case": 2}], recorded_case={"case": 1},
               checks=[grading.compiles(1, ""), grading.runs_cleanly(1, ""),
                       chk.Check("value", 1, chk.RUNTIME, value_check, parent=RUNS_CLEANLY)])


def write_fake(folder, body, python=sys.executable):
    """folder/harness: a fake harness with the channel protocol and body."""
    os.chmod(folder, 0o755)  # a sandbox of a root grader runs it as nobody
    program = os.path.join(folder, "harness")
    with open(program, "w") as f:
        f.write(HEADER.format(python=python) + body)
    os.chmod(program, 0o755)
    return program


class FakeHarnessTest(unittest.TestCase):
    SANDBOXED = False
    PYTHON = sys.executable

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.lab = fake_lab()

    def tearDown(self):
        self.tmp.cleanup()

    def write_program(self, folder, body):
        return write_fake(folder, body, self.PYTHON)

    def grade_with(self, body, timeout=5):
        program = self.write_program(self.tmp.name, body)
        ctx = grading.Context(self.lab, self.tmp.name, self.tmp.name, seed=1, timeout=timeout,
                              sandboxed=self.SANDBOXED)
        ctx.program = program
        checks = [chk.Check(c.name, c.points, c.kind, c.func, hint=c.hint) for c in self.lab.checks[1:]]
        checks[1].parent = checks[0].name  # the real build skipped
        return chk.run_checks(checks, ctx)

    def assert_not_clean(self, name, expected_words, failure, timeout=5):
        runs, value = self.grade_with(FAKE_HARNESSES[name], timeout)
        self.assertEqual(runs.status, chk.FAILED, name)
        self.assertEqual(runs.failure, failure, name)
        for word in expected_words:
            self.assertIn(word, runs.message, name)
        self.assertEqual(value.status, chk.SKIPPED, name)
        self.assertIn("'runs cleanly' did not pass", value.message)

    def test_clean_run_lets_lab_checks_evaluate(self):
        runs, value = self.grade_with(FAKE_HARNESSES["clean"])
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED))

    def test_hang_stops_the_remaining_cases(self):
        self.assert_not_clean("hang", ["time limit", "case=1", "case=2: not run: an earlier case hit the time limit"], failures.TIMEOUT,
                              timeout=1)

    def test_crash(self):
        self.assert_not_clean("crash", ["crashed (SIGSEGV)", "about to crash"], failures.CRASH)

    def test_flood(self):
        self.assert_not_clean("flood", ["MiB of output"], failures.OUTPUT_FLOOD, timeout=60)

    def test_cuda_error(self):
        self.assert_not_clean("cuda-error", ["CUDA error", "cudaErrorIllegalAddress"], failures.CUDA_ERROR)

    def test_missing_result(self):
        self.assert_not_clean("no-result", ["without a valid result", "no result on the grader's channel"], failures.NO_RESULT)

    def test_garbled_result(self):
        self.assert_not_clean("garbled", ["without a valid result", "not valid JSON"], failures.NO_RESULT)

    def test_pass_line_and_result_files_do_not_count(self):
        self.assert_not_clean("pass-line-and-file", ["no result on the grader's channel"], failures.NO_RESULT)

    def test_document_without_this_runs_nonce_does_not_count(self):
        self.assert_not_clean("wrong-nonce", ["did not carry this run's nonce"], failures.NO_RESULT)
        self.assert_not_clean("no-nonce-line", ["no result on the grader's channel"], failures.NO_RESULT)

    def test_every_run_gets_its_own_nonce(self):
        with tempfile.TemporaryDirectory() as tmp:
            program = self.write_program(tmp, "print(nonce)\n" + WRITE_CLEAN)
            nonces = set()
            for _ in range(3):
                result, doc, why = harness.run_argv([program], 10, tmp, self.SANDBOXED)
                self.assertEqual((doc["value"], why), (42, None))
                nonces.add(result.output.strip())
            self.assertEqual(len(nonces), 3)

    def test_large_document_does_not_block_the_harness(self):
        runs, value = self.grade_with("emit({'value': 42, 'launch_log': {'failed': 0}, 'pad': 'x' * (4 << 20)})\n")
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED))

    def test_failed_device_launches(self):
        self.assert_not_clean("launch-failed", ["3 device-side launch(es) failed",
                                                "cudaErrorLaunchPendingCountExceeded", "line 17"], failures.FAILED_LAUNCHES)

    def test_partial_credit_for_clean_runs(self):
        body = "if sys.argv[2] == '2': sys.exit(1)\n" + WRITE_CLEAN
        runs, _ = self.grade_with(body)
        self.assertEqual(runs.status, chk.FAILED)
        self.assertEqual(runs.score, 0.5)
        self.assertIn("1 of 2 runs", runs.message)
        self.assertEqual(runs.failure, failures.EXIT_STATUS)

    def test_a_lab_problem_is_its_own_kind(self):
        self.lab = fake_lab()
        self.lab.checks[1] = grading.runs_cleanly(1, "", problem=lambda params, doc: "the kit's reference disagrees")
        runs, _ = self.grade_with(WRITE_CLEAN)
        self.assertEqual((runs.status, runs.failure), (chk.FAILED, failures.LAB_PROBLEM))
        self.assertIn("the kit's reference disagrees", runs.message)


class SandboxedFakeHarnessTest(FakeHarnessTest):
    """The same runs in the sandbox (gradelib.sandbox), as the grader makes them: each is reported
    exactly as without one (a crash as the same signal, a hang, a flood, the channel and its nonce)."""
    SANDBOXED = True
    PYTHON = "/usr/bin/python3"  # the sandbox sees the system's folders, not a user's own Python

    def setUp(self):
        works, why = sandbox.works()
        if not works:
            self.skipTest("no sandbox can be made here: %s" % why)
        if not os.path.exists(self.PYTHON):
            self.skipTest("no %s for the fake harnesses" % self.PYTHON)
        super().setUp()


SPAN_LOG = """
log = os.environ['FAKE_SPAN_LOG']
case = int(arg('--case'))
start = time.monotonic()
time.sleep(0.4)
left_out = case == 4 and not os.path.exists(log + '.retried')
if left_out:
    open(log + '.retried', 'w').close()
with open(log, 'a') as f:
    f.write('%d %r %r\\n' % (case, start, time.monotonic()))
emit({'not_run': 'too little free memory'} if left_out else {'value': 42, 'launch_log': {'failed': 0}})
"""


class SharedCasesTest(unittest.TestCase):
    """A submission's cases share the GPU (gradelib.gpushare): those that time nothing run side by side,
    a case the lab says runs alone overlaps no other, and a shared case the harness left out for want of
    memory runs again alone. Verdicts and the cases' order are as when every case runs alone."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "spans")
        # a gate of its own: graders running on this machine meanwhile (a GPU test suite) do not hold it
        self.patches = [mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: "4", "FAKE_SPAN_LOG": self.log}),
                        mock.patch.object(gpushare, "gate_dir", lambda: os.path.join(self.tmp.name, "gate")),
                        mock.patch.dict(gpushare._gates, clear=True)]
        for p in self.patches:
            p.start()

    def tearDown(self):
        for p in reversed(self.patches):
            p.stop()
        self.tmp.cleanup()

    def grade(self):
        lab = Lab("99-fake", "Fake lab", "handouts/none.md",
                  harness=Contract([Option("case", 1, 6)], result_keys=["value", "launch_log"], case_keys=["timing"]),
                  make_cases=lambda rng: [{"case": 1}, {"case": 2}, {"case": 3}, {"case": 4}, {"case": 5, "timing": 1},
                                          {"case": 6}],
                  recorded_case={"case": 1},
                  checks=[grading.compiles(1, ""), grading.runs_cleanly(1, ""),
                          chk.Check("value", 1, chk.RUNTIME, value_check, parent=RUNS_CLEANLY)])
        program = write_fake(self.tmp.name, SPAN_LOG)
        ctx = grading.Context(lab, self.tmp.name, self.tmp.name, seed=1, timeout=20, sandboxed=False)
        ctx.program = program
        checks = [chk.Check(c.name, c.points, c.kind, c.func, hint=c.hint) for c in lab.checks[1:]]
        checks[1].parent = checks[0].name
        started = time.monotonic()
        results = chk.run_checks(checks, ctx)
        return results, ctx, time.monotonic() - started

    def spans(self):
        spans = {}
        with open(self.log) as f:
            for line in f:
                case, start, end = line.split()
                spans.setdefault(int(case), []).append((float(start), float(end)))
        return spans

    def test_cases_share_and_the_timing_case_is_alone(self):
        (runs, value), ctx, seconds = self.grade()
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message + value.message)
        self.assertEqual([r.params["case"] for r in ctx.runs], [1, 2, 3, 4, 5, 6])
        one_by_one = sum(r.result.costs["total_s"] for r in ctx.runs) + 0.4  # case 4 ran twice
        self.assertLess(seconds, 0.8 * one_by_one, "the shared cases did not run side by side")
        spans = self.spans()
        timing = spans[5][0]
        for case, each in spans.items():
            for span in each:
                if case != 5:
                    self.assertFalse(span[0] < timing[1] and timing[0] < span[1], "case %d overlaps the timing case"
                                     % case)
        shared = [s for c in (1, 2, 3, 6) for s in spans[c]]
        self.assertTrue(any(a[0] < b[1] and b[0] < a[1] for a in shared for b in shared if a != b),
                        "no two shared cases overlapped")

    def test_a_case_left_out_while_sharing_runs_again_alone(self):
        (runs, value), ctx, _ = self.grade()
        fourth = ctx.runs[3]
        self.assertTrue(fourth.alone)
        self.assertEqual(fourth.doc["value"], 42)
        self.assertEqual(len(self.spans()[4]), 2)
        retry = self.spans()[4][1]
        for case, each in self.spans().items():
            for span in each:
                if span != retry:
                    self.assertFalse(span[0] < retry[1] and retry[0] < span[1], "case %d overlaps the rerun" % case)
        self.assertFalse(ctx.runs[0].alone)

    def test_every_run_says_what_it_cost(self):
        (runs, _), ctx, _ = self.grade()
        for run in ctx.runs:
            self.assertGreaterEqual(run.result.costs["total_s"], 0.4)
            self.assertIn("wait_s", run.result.costs)
        report = grading.LabReport(ctx.lab, self.tmp.name, 1, ctx.cases, [runs])
        report.runs = ctx.runs
        costs = report.costs()
        self.assertEqual([r["case"] for r in costs["runs"]], list(range(6)))
        self.assertEqual([r["alone"] for r in costs["runs"]], [False, False, False, True, True, False])
        self.assertGreater(costs["runtime_s"], 0.8)


class LeftOutCasesTest(unittest.TestCase):
    """A case the harness leaves out for want of GPU memory (its document says "not_run") is not
    counted by any check, and the check's message says so."""

    def runs(self, *docs):
        class Ctx:
            pass
        ctx = Ctx()
        ctx.runs = [grading.CaseRun({"case": k}, None, d, None) for k, d in enumerate(docs)]
        return ctx

    def test_left_out_case_is_neither_counted_nor_failed(self):
        ctx = self.runs({"value": 42}, {"not_run": "the GPU has too little free memory"})
        outcome = value_check(ctx)
        self.assertEqual(outcome.status, chk.PASSED)
        self.assertIn("1 cases", outcome.message)
        self.assertIn("1 case(s) not counted", outcome.message)
        self.assertIn("case=1: not run on this GPU: the GPU has too little free memory", outcome.message)

    def test_the_cases_that_ran_still_count(self):
        ctx = self.runs({"value": 7}, {"not_run": "too little memory"})
        outcome = value_check(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of 1 cases wrong", outcome.message)
        self.assertIn("not counted", outcome.message)


if __name__ == "__main__":
    unittest.main()
