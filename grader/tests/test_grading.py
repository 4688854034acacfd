"""A lab's harness runs, with small fake harnesses: crashes, hangs, floods, CUDA errors and failed
device launches are each reported as such, and the grader carries on."""
import contextlib
import json
import os
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from unittest import mock

from gradelib import checks as chk
from gradelib import context, failures, gpushare, grading, harness, paths, process, registry, rubric, sandbox, standard_checks
from gradelib import runs as runs_module
from gradelib.runs import SKIPPED_AFTER_HANG
from gradelib.standard_checks import RUNS_CLEANLY
from gradelib.harness import Contract
from gradelib.registry import Lab
from tests.fakes import private_gate

# A fake harness speaks the kit's channel protocol (kit_result.h, kit_harness.h): the nonce from
# --nonce-fd; on the descriptor named by --json fd:N, "kit-nonce NONCE" (its "context" made); the
# cases from --cases-fd, one line each, to its end or a kit-end line; then each case's document and its
# kit-case line, then the kit-clock line; at a kit-hold line among the cases, "kit-hold K" on the
# channel, and a wait for the grader's kit-go. BODY runs once per case, with arg() reading the case's options; emit() writes its
# document. FIRST_LINE: the channel's first line, written before the cases are read (None: written
# with the first document, by emit_raw, as a fake that forges it does).
NONCE_FIRST = "'kit-nonce ' + nonce"
HEADER = """#!{python}
import json, os, sys, time, signal
def process_arg(name): return sys.argv[sys.argv.index(name) + 1]
main_ns = time.monotonic_ns()
nonce = os.read(int(process_arg('--nonce-fd')), 100).decode().strip()
channel = os.fdopen(int(process_arg('--json')[len('fd:'):]), 'w')
ready_ns = time.monotonic_ns()
opened = {first_line} is not None
if opened:
    channel.write({first_line} + '\\n')
    channel.flush()
cases_in = os.fdopen(int(process_arg('--cases-fd')))
cases, holds = [], set()
for line in iter(cases_in.readline, ''):
    if line == 'kit-end\\n':
        break
    if line == 'kit-hold\\n':
        holds.add(len(cases))
    else:
        cases.append(line.rstrip('\\n'))
def emit_raw(text, first_line=None):
    global opened
    if not opened:
        channel.write((first_line if first_line is not None else 'kit-nonce ' + nonce) + '\\n')
        opened = True
    channel.write(text + '\\n')
    channel.flush()
def emit(doc): emit_raw(json.dumps(doc))
def run_case(k, case):
    def arg(name): return case[case.index(name) + 1]
{body}
for k, line in enumerate(cases):
    if k in holds:
        if opened:
            channel.write('kit-hold %d\\n' % k)
            channel.flush()
        if cases_in.readline() != 'kit-go\\n':
            sys.exit(2)
    print('== case %d: %s' % (k, line), flush=True)
    begin_ns = time.monotonic_ns()
    run_case(k, line.split())
    if opened:
        channel.write('kit-case %d %d %d\\n' % (k, begin_ns, time.monotonic_ns()))
        channel.flush()
if opened:
    channel.write('kit-clock %d %d %d\\n' % (main_ns, ready_ns, time.monotonic_ns()))
channel.close()
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
# The fakes whose channel has no nonce line of this run before their cases (emit_raw writes theirs).
NO_NONCE_FIRST = ("no-result", "pass-line-and-file", "wrong-nonce", "no-nonce-line")


def value_check(ctx):
    return rubric.per_case(ctx, lambda run: None if run.doc["value"] == 42 else "wrong value")


def fake_lab():
    return Lab("99-fake", "Fake lab", "handouts/none.md",
               harness=Contract(result_keys=["value", "launch_log"]),
               make_cases=lambda rng: [{"case": 1}, {"case": 2}], recorded_case={"case": 1},
               checks=[standard_checks.compiles(1, ""), standard_checks.runs_cleanly(1, ""),
                       chk.Check("value", 1, chk.RUNTIME, value_check, parent=RUNS_CLEANLY)])


def write_fake(folder, body, python=sys.executable, first_line=NONCE_FIRST):
    """folder/harness: a fake harness with the channel protocol and body."""
    os.chmod(folder, 0o755)  # a sandbox of a root grader runs it as nobody
    program = os.path.join(folder, "harness")
    with open(program, "w") as f:
        f.write(HEADER.format(python=python, body=textwrap.indent(body, "    "), first_line=first_line))
    os.chmod(program, 0o755)
    return program


class FakeHarnessBase(unittest.TestCase):
    SANDBOXED = False
    PYTHON = sys.executable

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.lab = fake_lab()
        for patch in private_gate(self.tmp.name):
            patch.start()
            self.addCleanup(patch.stop)

    def tearDown(self):
        self.tmp.cleanup()

    def write_program(self, folder, body, first_line=NONCE_FIRST):
        return write_fake(folder, body, self.PYTHON, first_line)

    def grade_with(self, body, timeout=5, first_line=NONCE_FIRST):
        program = self.write_program(self.tmp.name, body, first_line)
        self.ctx = context.Context(self.lab, self.tmp.name, self.tmp.name, seed=1, timeout=timeout,
                                   sandboxed=self.SANDBOXED)
        self.ctx.program = program
        # the real build skipped: the checks that hang on it, on nothing
        checks = [chk.Check(c.name, c.points, c.kind, c.func, hint=c.hint, timing=c.timing,
                            parent=None if c.parent == standard_checks.COMPILES else c.parent)
                  for c in self.lab.checks[1:]]
        return chk.run_checks(checks, self.ctx)

    def assert_not_clean(self, name, expected_words, failure, timeout=5):
        runs, value = self.grade_with(FAKE_HARNESSES[name], timeout, "None" if name in NO_NONCE_FIRST else NONCE_FIRST)
        self.assertEqual(runs.status, chk.FAILED, name)
        self.assertEqual(runs.failure, failure, name)
        for word in expected_words:
            self.assertIn(word, runs.message, name)
        self.assertEqual(value.status, chk.SKIPPED, name)
        self.assertIn("'runs cleanly' did not pass", value.message)


class FakeHarnessTest(FakeHarnessBase):
    def test_clean_run_lets_lab_checks_evaluate(self):
        runs, value = self.grade_with(FAKE_HARNESSES["clean"])
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED))

    def test_hang_stops_the_remaining_cases(self):
        self.assert_not_clean("hang", ["time limit", "case=1", "case=2: not run: an earlier case hit the time limit"], failures.TIMEOUT,
                              timeout=1)

    def test_a_run_stopped_at_its_limit_says_it_made_its_context(self):
        """It writes no clock line; its channel's first line, the nonce, came once its context was made
        (harness.run_costs: start_context_s). A first line not of this run's nonce says nothing."""
        self.grade_with(FAKE_HARNESSES["hang"], timeout=1)
        self.assertGreater(self.ctx.runs[0].result.costs.get("start_context_s", 0), 0, self.ctx.runs[0].result.costs)
        self.grade_with(FAKE_HARNESSES["hang"], timeout=1, first_line="None")
        self.assertNotIn("start_context_s", self.ctx.runs[0].result.costs)


    def test_a_timing_case_out_of_time_leaves_the_other_checks_to_the_clean_runs(self):
        """A case that times something and runs out of time is too slow to time, not a hang that voids
        the rest: 'runs cleanly' fails, the checks that time nothing are judged on the runs that were
        clean, and those that time something are skipped."""
        self.lab = Lab("99-fake", "Fake lab", "handouts/none.md",
                       harness=Contract(result_keys=["value", "launch_log"], case_keys=["timing"]),
                       make_cases=lambda rng: [{"case": 1}, {"case": 2}, {"case": 3, "timing": 1}],
                       recorded_case={"case": 1},
                       checks=self.lab.checks + [chk.Check("timed", 1, chk.RUNTIME, lambda ctx: chk.passed(),
                                                           parent=RUNS_CLEANLY, timing=True)])
        slow_timing = "if arg('--case') == '3': time.sleep(60)\n"
        runs, value, timed = self.grade_with(slow_timing + "emit({'value': 42 if arg('--case') == '1' else 7, "
                                                           "'launch_log': {'failed': 0}})\n", timeout=1)
        self.assertEqual((runs.status, runs.failure), (chk.FAILED, failures.TIMEOUT))
        self.assertIn("the checks that time nothing are judged on the 2 runs that were clean", runs.message)
        self.assertEqual((value.status, value.score), (chk.FAILED, 0.5), value.message)
        self.assertIn("1 of 2 cases wrong", value.message)
        self.assertEqual(timed.status, chk.SKIPPED)
        self.assertEqual([r.params["case"] for r in self.ctx.all_runs], [1, 2, 3], "every run is reported")

    def test_timing_cases_alone_out_of_time_leave_nothing_to_judge(self):
        self.lab = Lab("99-fake", "Fake lab", "handouts/none.md",
                       harness=Contract(result_keys=["value", "launch_log"], case_keys=["timing"]),
                       make_cases=lambda rng: [{"case": 3, "timing": 1}], recorded_case={"case": 3},
                       checks=self.lab.checks)
        runs, value = self.grade_with("time.sleep(60)\n", timeout=1)
        self.assertEqual((runs.status, value.status), (chk.FAILED, chk.SKIPPED), "no check passes on no run")

    def test_any_other_case_out_of_time_leaves_nothing_to_judge(self):
        self.lab = Lab("99-fake", "Fake lab", "handouts/none.md",
                       harness=Contract(result_keys=["value", "launch_log"], case_keys=["timing"]),
                       make_cases=lambda rng: [{"case": 1}, {"case": 2}, {"case": 3, "timing": 1}],
                       recorded_case={"case": 1}, checks=self.lab.checks)
        runs, value = self.grade_with("if arg('--case') == '2': time.sleep(60)\n" + WRITE_CLEAN, timeout=1)
        self.assertEqual((runs.status, value.status), (chk.FAILED, chk.SKIPPED))

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
                result, doc, why = harness.run(self.lab, program, {"case": 1}, 10, tmp, self.SANDBOXED)
                self.assertEqual((doc["value"], why), (42, None))
                nonces.add(result.output.strip().splitlines()[-1])
            self.assertEqual(len(nonces), 3)

    def test_large_document_does_not_block_the_harness(self):
        runs, value = self.grade_with("emit({'value': 42, 'launch_log': {'failed': 0}, 'pad': 'x' * (4 << 20)})\n")
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED))

    def test_failed_device_launches(self):
        self.assert_not_clean("launch-failed", ["3 device-side launch(es) failed",
                                                "cudaErrorLaunchPendingCountExceeded", "line 17"], failures.FAILED_LAUNCHES)

    def test_partial_credit_for_clean_runs(self):
        body = "if arg('--case') == '2': sys.exit(1)\n" + WRITE_CLEAN
        runs, _ = self.grade_with(body)
        self.assertEqual(runs.status, chk.FAILED)
        self.assertEqual(runs.score, 0.5)
        self.assertIn("1 of 2 runs", runs.message)
        self.assertEqual(runs.failure, failures.EXIT_STATUS)

    def test_a_lab_problem_is_its_own_kind(self):
        self.lab = fake_lab()
        self.lab.checks[1] = standard_checks.runs_cleanly(1, "", problem=lambda params, doc: "the kit's reference disagrees")
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
time.sleep(0.2)
left_out = case == 4 and not os.path.exists(log + '.retried')
if left_out:
    open(log + '.retried', 'w').close()
deferred = case in (1, 3) and not os.path.exists(log + '.deferred%d' % case)
if deferred:
    open(log + '.deferred%d' % case, 'w').close()
with open(log, 'a') as f:
    f.write('%d %d %r %r\\n' % (case, os.getpid(), start, time.monotonic()))
if deferred:
    emit({'kit_deferred': 'needs a pending-launch limit of 4096; this process has 2048'})
else:
    emit({'not_run': 'too little free memory'} if left_out else {'value': 42, 'launch_log': {'failed': 0}})
"""


class SharedCasesTest(unittest.TestCase):
    """A submission's cases that time nothing run in one process (kit_harness.h) that shares the GPU
    (gradelib.gpushare); a case the lab says runs alone has a process of its own that overlaps no other
    run; a case the harness deferred (the process's first among them) runs in a fresh process; a shared
    case the harness left out for want of memory runs again alone, with the cases that run alone.
    Verdicts and the cases' order are as when every case runs alone."""

    @classmethod
    def setUpClass(cls):
        """One grade for every test of the class (each takes seconds of sleeping fakes)."""
        cls.tmp = tempfile.TemporaryDirectory()
        cls.log = os.path.join(cls.tmp.name, "spans")
        patches = [mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: "4", "FAKE_SPAN_LOG": cls.log})]
        patches += private_gate(cls.tmp.name)
        for p in patches:
            p.start()
        try:
            cls.graded = cls.grade()
        finally:
            for p in reversed(patches):
                p.stop()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def grade(cls):
        lab = Lab("99-fake", "Fake lab", "handouts/none.md",
                  harness=Contract(result_keys=["value", "launch_log"], case_keys=["timing"]),
                  make_cases=lambda rng: [{"case": 1}, {"case": 2}, {"case": 3}, {"case": 4}, {"case": 5, "timing": 1},
                                          {"case": 6}],
                  recorded_case={"case": 1},
                  checks=[standard_checks.compiles(1, ""), standard_checks.runs_cleanly(1, ""),
                          chk.Check("value", 1, chk.RUNTIME, value_check, parent=RUNS_CLEANLY)])
        program = write_fake(cls.tmp.name, SPAN_LOG)
        ctx = context.Context(lab, cls.tmp.name, cls.tmp.name, seed=1, timeout=20, sandboxed=False)
        ctx.program = program
        checks = [chk.Check(c.name, c.points, c.kind, c.func, hint=c.hint) for c in lab.checks[1:]]
        checks[1].parent = checks[0].name
        return chk.run_checks(checks, ctx), ctx

    def spans(self):
        """{case: [(pid, start, end)]}, in the order the case ran."""
        spans = {}
        with open(self.log) as f:
            for line in f:
                case, pid, start, end = line.split()
                spans.setdefault(int(case), []).append((int(pid), float(start), float(end)))
        return spans

    def test_shared_cases_share_a_process_and_the_timing_case_is_alone(self):
        (runs, value), ctx = self.graded
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message + value.message)
        self.assertEqual([r.params["case"] for r in ctx.runs], [1, 2, 3, 4, 5, 6])
        spans = self.spans()
        first = spans[1][0][0]
        self.assertEqual([spans[c][0][0] for c in (1, 2, 3, 4, 6, 5)], [first] * 6,
                         "one process: the shared cases, then, after its hold, the timing case")
        self.assertEqual(len({spans[c][-1][0] for c in (3, 4)} | {first}), 3,
                         "the deferred cases and the rerun alone each had a process of their own")
        self.assertEqual(spans[1][-1][0], spans[3][-1][0], "the deferred cases share their fresh process")
        self.assertGreater(spans[5][0][1], spans[6][0][2], "the timing case runs after the shared cases")
        for alone in (spans[5][0], spans[4][-1]):
            for case, each in spans.items():
                for span in each:
                    if span != alone:
                        self.assertFalse(span[1] < alone[2] and alone[1] < span[2], "case %d overlaps a run alone"
                                         % case)

    def test_a_deferred_case_runs_again_in_a_fresh_process(self):
        (runs, value), ctx = self.graded
        for k in (0, 2):
            run = ctx.runs[k]
            self.assertEqual((run.doc["value"], run.problem, run.alone), (42, None, False))
            self.assertEqual(len(self.spans()[k + 1]), 2)

    def test_a_case_left_out_while_sharing_runs_again_alone(self):
        (runs, value), ctx = self.graded
        fourth = ctx.runs[3]
        self.assertTrue(fourth.alone)
        self.assertEqual(fourth.doc["value"], 42)
        self.assertEqual(len(self.spans()[4]), 2)
        self.assertFalse(ctx.runs[0].alone)
        # what its shared run cost counts too: at least the 0.2 s the fake takes
        self.assertGreaterEqual(fourth.result.costs["retried_s"], 0.2)
        self.assertEqual([k for k, r in enumerate(ctx.runs) if "retried_s" in r.result.costs], [3])

    def test_every_run_says_what_it_cost(self):
        (runs, _), ctx = self.graded
        for run in ctx.runs:
            self.assertGreaterEqual(run.result.costs["case_s"], 0.2)
            self.assertGreaterEqual(run.result.costs["total_s"], run.result.costs["case_s"])
        self.assertEqual([("wait_s" in r.result.costs, "context_s" in r.result.costs) for r in ctx.runs],
                         [(True, True), (False, False), (False, False), (True, True), (True, False), (False, False)],
                         "the first case of each process carries its wait, start and context; the first after a "
                         "hold, its wait")
        report = grading.LabReport(ctx.lab, self.tmp.name, 1, ctx.cases, [runs])
        report.runs = ctx.runs
        costs = report.costs()
        self.assertEqual([r["case"] for r in costs["runs"]], list(range(6)))
        self.assertEqual([r["alone"] for r in costs["runs"]], [False, False, False, True, True, False])
        self.assertGreater(costs["runtime_s"], 1.6)
        self.assertEqual(costs["memcheck"], [])  # the fake lab has no memcheck check


class CaseLimitsTest(FakeHarnessBase):
    """In a process of several cases, the time limit and the flood limit are each case's: three cases
    that each take most of the limit, or print most of the flood limit, are clean; a process that
    deferred every case is not the kit's harness."""

    def test_a_case_over_time_while_sharing_counts_only_when_it_is_over_time_alone(self):
        """A shared run that hits the time limit may have waited for other runs on the GPU: the case, and
        the one after it, run again with the GPU alone, where it finishes in time here."""
        marker = os.path.join(self.tmp.name, "slow-once")
        body = ("if not os.path.exists(%r):\n"
                "    open(%r, 'w').close()\n"
                "    time.sleep(30)\n"
                "emit({'value': 42, 'launch_log': {'failed': 0}})\n" % (marker, marker))
        gate = gpushare.Gate(4, folder=os.path.join(self.tmp.name, "gate"))
        with mock.patch.object(gpushare, "gate", lambda: gate):
            runs, value = self.grade_with(body, timeout=1)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertTrue(os.path.exists(marker))

    def grade_cases(self, body, timeout):
        self.lab = fake_lab()
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2}, {"case": 1}]
        return self.grade_with(body, timeout)

    def test_the_time_limit_is_each_cases(self):
        runs, value = self.grade_cases("time.sleep(0.7)\n" + WRITE_CLEAN, timeout=1)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)

    def test_each_case_has_its_own_limit(self):
        """Without --timeout each case has its lab's limit for it (Lab.case_time_limit): in one process,
        a case of 1.5 s passes under a limit of 4 s, and the same 1.5 s is over the next case's 0.5 s,
        which therefore runs again alone and, over it there too, counts as a hang."""
        self.lab = fake_lab()
        self.lab.make_cases = lambda rng: [{"case": 2}, {"case": 1}]
        self.lab.case_time_limit = lambda params, alone: 4 if params["case"] == 2 else 0.5
        runs, _ = self.grade_with("time.sleep(1.5)\n" + WRITE_CLEAN, timeout=None)
        self.assertEqual((runs.status, runs.failure), (chk.FAILED, failures.TIMEOUT), runs.message)
        self.assertEqual([r.failure for r in self.ctx.runs], [None, failures.TIMEOUT])
        self.assertLess(self.ctx.runs[1].result.seconds, 3)

    def test_a_shared_case_has_its_shared_limit(self):
        """A case that shares the GPU has the limit the lab gives it shared (registry.SHARED_TIME_LIMIT):
        1.5 s is over its limit alone, 0.5 s, and within the 4 s it has shared, so it counts there and
        does not run again alone."""
        self.lab = fake_lab()
        self.lab.make_cases = lambda rng: [{"case": 1}]
        self.lab.case_time_limit = lambda params, alone: 0.5 if alone else 4
        runs, _ = self.grade_with("time.sleep(1.5)\n" + WRITE_CLEAN, timeout=None)
        self.assertEqual(runs.status, chk.PASSED, runs.message)
        self.assertEqual([r.alone for r in self.ctx.runs], [False])

    def test_the_flood_limit_is_each_cases(self):
        body = "sys.stdout.write('x' * (6 << 20)); sys.stdout.flush()\n" + WRITE_CLEAN
        runs, value = self.grade_cases(body, timeout=30)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)

    def test_a_process_that_defers_every_case_is_not_the_kits_harness(self):
        runs, _ = self.grade_cases("emit({'kit_deferred': 'forged'})\n", timeout=5)
        self.assertEqual((runs.status, runs.failure), (chk.FAILED, failures.NO_RESULT))
        self.assertIn("deferred every case of its process", runs.message)
        self.assertIn("3 of 3 runs", runs.message)

    def test_the_run_log_says_how_many_cases_a_stopped_run_ended(self):
        """KIT_RUN_LOG's line of a run says how many of its cases ended (cases_ended): a run stopped at its
        time limit writes no clock line, so its costs cannot say in which case it was stopped."""
        run_log = os.path.join(self.tmp.name, "runs.jsonl")
        with mock.patch.dict(os.environ, {harness.RUN_LOG_ENV: run_log}):
            self.grade_with("if arg('--case') == '2': time.sleep(60)\n" + WRITE_CLEAN, timeout=1)
        with open(run_log) as f:
            logged = [json.loads(line) for line in f]
        self.assertEqual([(r["cases"], r["cases_ended"], r["verdict"]) for r in logged],
                         [(2, 1, process.TIMEOUT), (1, 0, process.TIMEOUT)])

    def test_cases_deferred_before_a_case_stopped_run_again(self):
        """A process stopped in its last case (a shared case over its limit, or one that gave way)
        after it deferred every case before it did run a case, as the kit's harness does (Lab 04's
        runs the case of the process's largest heap): the deferred cases run again in a fresh process,
        the stopped one again alone, and every case is clean there."""
        self.lab = fake_lab()
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 1}, {"case": 2}]
        tried = os.path.join(self.tmp.name, "tried-%d")
        body = ("mark = %r %% k\n"
                "first = not os.path.exists(mark)\n"
                "open(mark, 'w').close()\n"
                "if first and k < 2:\n"
                "    emit({'kit_deferred': 'runs at exactly the heap it asked for'})\n"
                "    return\n"
                "if first:\n"
                "    time.sleep(30)\n" % tried) + WRITE_CLEAN
        gate = gpushare.Gate(4, folder=os.path.join(self.tmp.name, "gate"))
        with mock.patch.object(gpushare, "gate", lambda: gate):
            runs, value = self.grade_with(body, timeout=1)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual([r.alone for r in self.ctx.runs], [True, True, True])


class StartedRunTest(FakeHarnessBase):
    """A run alone is started before the GPU is held (harness.start_run): its process makes its
    context with the GPU shared, then waits for its cases; they run, and its time limit counts, from
    when they are handed over. A process that does not get that far is not used."""

    def start(self, body, timeout, first_line=NONCE_FIRST):
        program = self.write_program(self.tmp.name, body, first_line)
        return program, harness.start_run(self.lab, program, [{"case": 1}, {"case": 2}], timeout, self.tmp.name)

    def test_the_cases_wait_until_they_are_handed_over(self):
        ran = os.path.join(self.tmp.name, "ran")
        program, started = self.start("open(%r, 'a').write('ran')\n" % ran + WRITE_CLEAN, timeout=1)
        self.assertIsNotNone(started)
        self.assertIsNotNone(started.ready, "it waits among the few processes ready for a run alone")
        time.sleep(1.5)  # longer than the time limit: the wait is not the run's
        self.assertFalse(os.path.exists(ran), "a case ran before its run was handed its cases")
        with gpushare.gate().held(True):
            outcomes = harness.run_cases(self.lab, program, [{"case": 1}, {"case": 2}], 1, self.tmp.name,
                                         alone=True, started=started)
        self.assertIsNone(started.ready, "its place let go once it was handed its cases")
        self.assertEqual([(o.state, o.doc["value"], o.why) for o in outcomes], [(harness.DONE, 42, None)] * 2)
        with open(ran) as f:
            self.assertEqual(f.read(), "ranran")
        costs = outcomes[0].result.costs
        self.assertGreater(costs["wait_s"], 1.4, costs)
        self.assertLess(costs["case_s"], 1, costs)
        self.assertLess(costs["held_s"], 1, costs)  # held from the hand-over: its context and wait aside
        self.assertGreater(costs["held_s"], 0, costs)

    def test_the_wait_to_start_counts_as_wait(self):
        """start_run waits for the GPU shared (here, held alone by another run for 0.5 s): that wait is
        the first run's wait too."""
        holding = threading.Event()

        def hold_alone():
            with gpushare.gate().held(True):
                holding.set()
                time.sleep(0.5)
        other = threading.Thread(target=hold_alone)
        other.start()
        holding.wait()
        program, started = self.start(WRITE_CLEAN, timeout=5)
        other.join()
        outcomes = harness.run_cases(self.lab, program, [{"case": 1}, {"case": 2}], 5, self.tmp.name, started=started)
        self.assertGreater(outcomes[0].result.costs["wait_s"], 0.4, outcomes[0].result.costs)

    def test_a_process_that_never_says_it_is_ready_is_not_used(self):
        with mock.patch.object(harness, "START_LIMIT", 1):  # the run's 1 s limit, not 30 s
            program, started = self.start(WRITE_CLEAN, timeout=1, first_line="None")
        self.assertIsNone(started)

    def test_a_hang_after_the_cases_are_handed_over_is_a_hang(self):
        program, started = self.start("time.sleep(60)\n", timeout=1)
        self.assertIsNotNone(started)
        outcomes = harness.run_cases(self.lab, program, [{"case": 1}, {"case": 2}], 1, self.tmp.name, started=started)
        self.assertEqual(outcomes[0].result.verdict, process.TIMEOUT)
        self.assertEqual(outcomes[1].state, harness.NOT_STARTED)

    def test_a_grader_starts_its_runs_alone_before_it_holds_the_gpu(self):
        """A shared case sent to the run alone (here: left out for want of memory) runs in a process
        that made its context (its first line) before the hold, which the lab's grade spends on the case."""
        marker = os.path.join(self.tmp.name, "left-out-once")
        body = ("if arg('--case') == '1' and not os.path.exists(%r):\n"
                "    open(%r, 'w').close()\n"
                "    emit({'not_run': 'too little free memory'})\n"
                "else:\n"
                "    emit({'value': 42, 'launch_log': {'failed': 0}})\n" % (marker, marker))
        self.lab = fake_lab()
        self.lab.harness.case_keys = ["timing"]
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2, "timing": 1}]
        with mock.patch.object(harness, "start_run", wraps=harness.start_run) as start_run:
            runs, value = self.grade_with(body)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual(start_run.call_count, 1)
        self.assertEqual(start_run.call_args[0][2], [{"case": 1}])


class OneProcessTest(FakeHarnessBase):
    """A submission's shared cases and its timing case run in one process, so in one CUDA context: the
    process waits at the timing case's hold, its time limit stopped, until the grader holds the GPU alone."""

    def test_a_fresh_process_alone_makes_its_context_before_its_cases_time(self):
        """After a crash, the cases left run alone in a fresh process; its start (here 1.5 s before its
        channel's first line, as a CUDA context on a busy host) does not count against the 1 s limit."""
        crashed = os.path.join(self.tmp.name, "crashed")
        self.lab.harness.case_keys = ["timing"]
        self.lab.make_cases = lambda rng: [{"case": 1, "timing": 1}, {"case": 2, "timing": 1}]
        body = ("if arg('--case') == '1' and not os.path.exists(%r):\n"
                "    open(%r, 'w').close()\n"
                "    os.kill(os.getpid(), signal.SIGSEGV)\n" % (crashed, crashed)) + WRITE_CLEAN
        slow_start = "(time.sleep(1.5) if os.path.exists(%r) else None) or 'kit-nonce ' + nonce" % crashed
        runs, _ = self.grade_with(body, timeout=1, first_line=slow_start)
        self.assertEqual([r.failure for r in self.ctx.runs], [failures.CRASH, None], runs.message)

    def test_the_timing_case_runs_after_a_hold_in_the_same_process(self):
        pids = os.path.join(self.tmp.name, "pids")
        self.lab.harness.case_keys = ["timing"]
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2, "timing": 1}, {"case": 1}]
        real = gpushare.gate()

        class SlowToHoldAlone:  # the GPU alone comes 1.5 s after it is asked for, past the 1 s limit
            count = real.count
            alone_waiting = staticmethod(real.alone_waiting)

            @contextlib.contextmanager
            def held(self, alone, slots=1):
                with real.held(alone, slots) as waited:
                    if alone:
                        time.sleep(1.5)
                    yield waited + (1.5 if alone else 0)
        slow = SlowToHoldAlone()
        body = "open(%r, 'a').write('%%d\\n' %% os.getpid())\n" % pids + WRITE_CLEAN
        with mock.patch.object(gpushare, "gate", lambda: slow), \
                mock.patch.object(harness, "start_run", wraps=harness.start_run) as start_run:
            runs, value = self.grade_with(body, timeout=1)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual(start_run.call_count, 0)
        with open(pids) as f:
            self.assertEqual(len(set(f.read().split())), 1, "one process ran every case")
        self.assertEqual([r.alone for r in self.ctx.runs], [False, True, False])
        timing = self.ctx.runs[1].result.costs
        self.assertGreaterEqual(timing["wait_s"], 1.5, timing)
        self.assertLess(timing["case_s"], 1, timing)
        self.assertLess(timing["held_s"], 1, timing)  # its segment's hold, from its go
        self.assertNotIn("context_s", timing)
        self.assertIn("held_s", self.ctx.runs[0].result.costs)  # each segment's first case says its hold

    def test_a_run_stopped_in_its_segment_alone_says_that_hold(self):
        """A process stopped at the limit writes no clock line, so its phases are one span; each segment's
        hold is the grader's own and is kept all the same: the class's time alone counts a run alone that
        ran to its limit (batch_throughput.submission_costs)."""
        self.lab.harness.case_keys = ["timing"]
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2, "timing": 1}]
        runs, _ = self.grade_with("if arg('--case') == '2':\n    time.sleep(30)\n" + WRITE_CLEAN, timeout=1)
        self.assertEqual(runs.failure, failures.TIMEOUT, runs.message)
        self.assertEqual([r.alone for r in self.ctx.all_runs], [False, True])
        stopped = self.ctx.all_runs[1].result.costs
        self.assertGreaterEqual(stopped.get("held_s", 0), 1, stopped)  # its limit alone
        self.assertNotIn("total_s", stopped)  # the run's span is the first case's, counted once
        self.assertIn("total_s", self.ctx.all_runs[0].result.costs)

    def test_a_hang_before_the_hold_leaves_the_timing_case_to_the_run_alone(self):
        """A shared case that hit the time limit ends the process before its hold: the cases left, the
        timing case among them, go to the run alone, where the first hang ends the grade."""
        self.lab.harness.case_keys = ["timing"]
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2, "timing": 1}]
        with mock.patch.object(gpushare, "gate", lambda: gpushare.Gate(4, folder=os.path.join(self.tmp.name, "g"))), \
                mock.patch.object(harness, "run_segments", wraps=harness.run_segments) as run_segments:
            runs, _ = self.grade_with(FAKE_HARNESSES["hang"], timeout=1)
        self.assertEqual(runs.failure, failures.TIMEOUT)
        held = [[([c["case"] for c in cases], alone) for alone, _, cases in call[0][2]]
                for call in run_segments.call_args_list]
        self.assertEqual(held, [[([1], False), ([2], True)], [([1, 2], True)]])
        self.assertEqual(self.ctx.runs[1].problem, SKIPPED_AFTER_HANG)


class GiveWayTest(FakeHarnessBase):
    """A shared case that has run longer than its limit alone gives way to a run that waits to hold the
    GPU alone: stopped, it runs again alone, where a hang is a hang. The lab's limits here: 1 s alone,
    20 s shared."""

    def setUp(self):
        super().setUp()
        self.lab.make_cases = lambda rng: [{"case": 1}]
        self.lab.case_time_limit = lambda params, alone=True: 1 if alone else 20
        self.begun = os.path.join(self.tmp.name, "begun")
        self.waited = []  # how long the run alone beside waited for the GPU

    def alone_beside(self):
        """Another grader's run alone, asked for once the fake has written the file begun."""
        def wait_alone():
            for _ in range(500):
                if os.path.exists(self.begun):
                    break
                time.sleep(0.02)
            asked = time.monotonic()
            with gpushare.gate().held(True):
                self.waited.append(time.monotonic() - asked)
        beside = threading.Thread(target=wait_alone)
        beside.start()
        self.addCleanup(beside.join, 30)

    def test_a_shared_hang_gives_way_and_hangs_alone(self):
        self.alone_beside()
        began = time.monotonic()
        runs, _ = self.grade_with("open(%r, 'a').close()\ntime.sleep(60)\n" % self.begun, timeout=None)
        self.assertEqual(runs.failure, failures.TIMEOUT, runs.message)
        self.assertTrue(self.ctx.runs[0].alone, "the hang counts alone")
        self.assertLess(time.monotonic() - began, 10, "the shared hang ran to its 20 s")
        self.assertLess(self.waited[0], 5)

    def test_with_no_run_alone_waiting_a_slow_shared_case_runs_on(self):
        runs, value = self.grade_with("time.sleep(1.6)\n" + WRITE_CLEAN, timeout=None)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertFalse(self.ctx.runs[0].alone, "stopped past its limit alone with no run alone waiting")

    def test_the_first_case_counts_from_the_context_made_not_from_the_start(self):
        """The fake takes 1.5 s to its channel's first line (a CUDA context on a busy host), then its case
        0.5 s: within its 1 s alone, so it does not give way to the run alone that waits meanwhile."""
        self.alone_beside()
        slow_start = "(open(%r, 'a').close(), time.sleep(1.5))[0] or 'kit-nonce ' + nonce" % self.begun
        runs, value = self.grade_with("time.sleep(0.5)\n" + WRITE_CLEAN, timeout=None, first_line=slow_start)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertFalse(self.ctx.runs[0].alone)


class MemorySlotsTest(FakeHarnessBase):
    """A case that needs more GPU memory than one shared run's share (Lab.gpu_bytes) shares the GPU in a
    segment of its own, holding the slots its memory fills (in a process of its own where the lab's
    harness holds memory for the whole process); one that needs more than every slot has it alone."""

    def held(self, body, timeout=5, sharers=4):
        """The grade's processes: [[(cases, alone, slots) of each segment]], the GPU's slots shared by sharers."""
        with mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: str(sharers)}), \
                mock.patch.object(harness, "run_segments", wraps=harness.run_segments) as run_segments:
            self.graded = self.grade_with(body, timeout)
        return [[([c["case"] for c in cases], alone, slots) for alone, slots, cases in call[0][2]]
                for call in run_segments.call_args_list]

    def test_each_case_holds_the_slots_its_memory_fills(self):
        share = gpushare.BYTES_PER_SHARER
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2}, {"case": 1}]
        self.lab.gpu_bytes = lambda params: {1: None, 2: 3 * share}[params["case"]]
        held = self.held(WRITE_CLEAN)
        runs, value = self.graded
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual(held, [[([1, 1], False, 1), ([2], False, 3)]])
        self.lab.heap_per_process = True
        self.assertEqual(self.held(WRITE_CLEAN), [[([1, 1], False, 1)], [([2], False, 3)]])

    def test_a_lab_whose_harness_holds_memory_for_the_process_runs_its_heavy_cases_apart(self):
        """Lab 04's heap: the light cases, the timing case of no more memory among them, in one process;
        the heavier cases in a second, whose shared segment holds the slots of its largest case."""
        share = gpushare.BYTES_PER_SHARER
        self.lab.harness.case_keys = ["timing"]
        self.lab.heap_per_process = True
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2}, {"case": 3, "timing": 1}, {"case": 4, "timing": 1}]
        self.lab.gpu_bytes = lambda params: {1: None, 2: 3 * share, 3: None, 4: 5 * share}[params["case"]]
        held = self.held(WRITE_CLEAN, sharers=8)
        runs, value = self.graded
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual(held, [[([1], False, 1), ([3], True, 1)], [([2], False, 5), ([4], True, 1)]])

    def test_a_submission_with_no_case_to_share_makes_its_context_before_the_hold(self):
        """Every case times something (Lab 05): one process, started before the GPU is held alone."""
        self.lab.harness.case_keys = ["timing"]
        self.lab.make_cases = lambda rng: [{"case": 1, "timing": 1}, {"case": 2, "timing": 1}]
        with mock.patch.object(harness, "start_run", wraps=harness.start_run) as start_run:
            held = self.held(WRITE_CLEAN)
        runs, value = self.graded
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual(held, [[([1, 2], True, 1)]])
        self.assertEqual(start_run.call_count, 1)

    def test_after_a_shared_hang_the_cases_of_more_slots_wait_for_the_run_alone(self):
        """A submission that hung in a shared case does not hang again, holding more slots, in the
        cases of more memory: they go to the run alone, which the first hang there ends."""
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2}]
        self.lab.gpu_bytes = lambda params: {1: None, 2: 3 * gpushare.BYTES_PER_SHARER}[params["case"]]
        held = self.held(FAKE_HARNESSES["hang"], timeout=1)
        self.assertEqual(self.graded[0].failure, failures.TIMEOUT)
        self.assertEqual(held, [[([1], False, 1), ([2], False, 3)], [([1, 2], True, 1)]])
        self.assertEqual(self.ctx.runs[1].problem, SKIPPED_AFTER_HANG)

    def test_a_case_that_needs_more_than_every_slot_runs_alone(self):
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2}]
        self.lab.gpu_bytes = lambda params: {1: None, 2: 5 * gpushare.BYTES_PER_SHARER}[params["case"]]
        held = self.held(WRITE_CLEAN)
        runs, value = self.graded
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual(held, [[([1], False, 1), ([2], True, 1)]])
        self.assertTrue(self.ctx.runs[1].alone)

    def test_a_case_whose_work_fills_the_gpu_runs_alone_in_the_same_process(self):
        """A case that sets registry.WORK_FILLS_GPU times nothing, yet has the GPU alone: after the shared
        cases, in their process (one CUDA context), with the limit of a case alone."""
        self.lab.harness.case_keys = [registry.WORK_FILLS_GPU]
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2, registry.WORK_FILLS_GPU: True}, {"case": 3}]
        held = self.held(WRITE_CLEAN)
        runs, value = self.graded
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual(held, [[([1, 3], False, 1), ([2], True, 1)]])
        self.assertEqual([r.alone for r in self.ctx.runs], [False, True, False])


class HostTooBusyTest(FakeHarnessBase):
    """A clean run alone whose document shows the host too busy to time it (Lab.host_too_busy) runs again
    alone, in a fresh process, at most runs.BUSY_RUNS_AGAIN times; the last run is judged, whatever it
    shows. The fake's timing case (case 2) says "busy" in its runs busy_runs (counted from 1)."""

    def setUp(self):
        super().setUp()
        self.lab.harness.case_keys = ["timing"]
        self.lab.make_cases = lambda rng: [{"case": 1}, {"case": 2, "timing": 1}]
        self.lab.host_too_busy = lambda params, doc: "the kit's own wait was late" if doc.get("busy") else None
        self.pids = os.path.join(self.tmp.name, "pids")

    def grade_busy(self, busy_runs, values=None):
        """Grade with the timing case's document busy in runs busy_runs; values: its value in each run."""
        count = os.path.join(self.tmp.name, "count")
        body = ("open(%r, 'a').write('%%d\\n' %% os.getpid())\n"
                "n = 1\n"
                "timing = arg('--case') == '2'\n"
                "if timing:\n"
                "    n = len(open(%r).read()) + 1 if os.path.exists(%r) else 1\n"
                "    open(%r, 'a').write('x')\n"
                "emit({'value': %r.get(n, 42) if timing else 42, 'busy': timing and n in %r,"
                " 'launch_log': {'failed': 0}})\n") % (self.pids, count, count, count, values or {}, busy_runs)
        return self.grade_with(body)

    def processes(self):
        with open(self.pids) as f:
            return len(set(f.read().split()))

    def test_a_timing_case_the_host_was_too_busy_for_runs_again_and_its_next_run_is_judged(self):
        runs, value = self.grade_busy([1], values={1: 41})
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.PASSED), runs.message)
        self.assertEqual(self.processes(), 2)
        self.assertTrue(self.ctx.runs[1].alone)
        self.assertEqual(self.ctx.runs[1].host_busy_before, ["the kit's own wait was late"])
        self.assertEqual(self.ctx.runs[0].host_busy_before, [])
        self.assertIn("1 ran again alone", runs.message)
        self.assertIn("case=2 timing=1: the kit's own wait was late", runs.message)
        self.assertIn("retried_s", self.ctx.runs[1].result.costs)

    def test_a_host_busy_in_every_run_is_judged_on_its_last_run_not_its_best(self):
        """A submission that keeps its own host busy gains nothing: its last run counts."""
        runs, value = self.grade_busy([1, 2, 3], values={3: 41})
        self.assertEqual(self.processes(), 1 + runs_module.BUSY_RUNS_AGAIN)
        self.assertEqual(len(self.ctx.runs[1].host_busy_before), runs_module.BUSY_RUNS_AGAIN)
        self.assertEqual((runs.status, value.status), (chk.PASSED, chk.FAILED), runs.message)

    def test_a_case_that_shares_the_gpu_or_did_not_run_cleanly_does_not_run_again(self):
        self.lab.make_cases = lambda rng: [{"case": 1, "timing": 1}]
        self.lab.host_too_busy = lambda params, doc: "busy"  # every document
        runs, _ = self.grade_with(FAKE_HARNESSES["launch-failed"])
        self.assertEqual(runs.failure, failures.FAILED_LAUNCHES)
        self.assertEqual(self.ctx.runs[0].host_busy_before, [])
        self.lab.make_cases = lambda rng: [{"case": 1}]
        runs, _ = self.grade_busy([1])
        self.assertEqual(self.processes(), 1)
        self.assertEqual(runs.status, chk.PASSED, runs.message)


class LeftOutCasesTest(unittest.TestCase):
    """A case the harness leaves out for want of GPU memory (its document says "not_run") is not
    counted by any check, and the check's message says so."""

    def runs(self, *docs):
        class Ctx:
            pass
        ctx = Ctx()
        ctx.runs = [context.CaseRun({"case": k}, None, d, None) for k, d in enumerate(docs)]
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


class TimeLimitTest(unittest.TestCase):
    """Each case gets its lab's limit for it unless grade.py --timeout gives one for all: the lab's
    time_limit where the case times something or needs more GPU memory than one shared run's share,
    registry.CASE_TIME_LIMIT (or less) for any other, so that a hang in an ordinary case costs seconds,
    not the heavy cases' limit, of a class's GPU held alone."""

    def test_heavy_cases_have_the_labs_limit_and_the_others_the_ordinary_one(self):
        lab04, lab01 = registry.resolve("04"), registry.resolve("01")
        cases = lab04.make_cases(context.case_rng(1, lab04.name))
        heavy = [c for c in cases if registry.times_something(c)
                 or gpushare.slots_for(lab04.gpu_bytes(c)) > 1]
        light = [c for c in cases if c not in heavy]
        self.assertTrue(heavy and light)
        self.assertEqual({lab04.case_time_limit(c) for c in heavy}, {lab04.time_limit})
        self.assertEqual({lab04.case_time_limit(c) for c in light}, {registry.CASE_TIME_LIMIT})
        self.assertGreater(lab04.time_limit, registry.CASE_TIME_LIMIT)
        # shared, every case has at least SHARED_TIME_LIMIT: the runs beside it time-slice the GPU
        self.assertEqual({lab04.case_time_limit(c, alone=False) for c in light}, {registry.SHARED_TIME_LIMIT})
        self.assertEqual({lab04.case_time_limit(c, alone=False) for c in heavy},
                         {max(lab04.time_limit, registry.SHARED_TIME_LIMIT)})
        self.assertEqual({lab01.case_time_limit(c) for c in lab01.make_cases(context.case_rng(1, lab01.name))},
                         {registry.CASE_TIME_LIMIT})

    def test_timeout_given_is_every_cases(self):
        lab = registry.resolve("04")
        given = context.Context(lab, ".", ".", 1, 3.5)
        own = context.Context(lab, ".", ".", 1, None)
        self.assertEqual({given.time_limit(c) for c in given.cases}, {3.5})
        self.assertEqual([own.time_limit(c) for c in own.cases], [lab.case_time_limit(c) for c in own.cases])
        self.assertEqual({given.time_limit(c, alone=False) for c in given.cases}, {3.5})
        self.assertEqual([own.time_limit(c, False) for c in own.cases],
                         [lab.case_time_limit(c, False) for c in own.cases])

    def test_grade_lab_passes_the_given_timeout_or_none(self):
        seen = []

        class Stop(Exception):
            pass

        def made(lab, submission_dir, work_dir, seed, timeout, sandboxed):
            seen.append(timeout)
            raise Stop()
        lab = registry.resolve("07")
        with mock.patch.object(grading, "Context", side_effect=made):
            for given in (None, 3.5):
                with self.assertRaises(Stop):
                    grading.grade_lab(lab, paths.solution_dir(lab.name), 1, timeout=given)
        self.assertEqual(seen, [None, 3.5])
