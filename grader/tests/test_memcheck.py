"""The memcheck check: what memcheck's report says (recorded outputs of compute-sanitizer 2025.3.1 on an
H100), and the verdict the check gives for each way the run under it can end."""
import json
import os
import sys
import tempfile
import time
import unittest
from unittest import mock

from gradelib import failures, checks as chk
from gradelib import context, gpushare, grading, harness, memcheck, process, registry, report, sheets, standard_checks

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "memcheck")


def recorded(name):
    """A recorded run under memcheck: (its exit status, its output)."""
    with open(os.path.join(DATA, name + ".txt")) as f:
        first, _, output = f.read().partition("\n")
    return int(first.split()[2].rstrip(",")), output


class ReportTest(unittest.TestCase):
    def test_a_clean_run(self):
        _, output = recorded("01-solution")
        found = memcheck.read(output)
        self.assertEqual((found.errors, found.first), (0, []))

    def test_errors_with_file_and_line_and_the_students_frame(self):
        status, output = recorded("04-bound-after-read")
        self.assertEqual(status, memcheck.ERRORS_EXIT)
        found = memcheck.read(output)
        self.assertEqual(found.errors, 8)
        self.assertEqual(len(found.first), memcheck.PRINT_LIMIT if found.errors > memcheck.PRINT_LIMIT else 8)
        first = found.first[0].splitlines()
        self.assertEqual(first[0], "Invalid __global__ read of size 8 bytes")
        self.assertIn("in bezier_lines.cu:31", first[1])
        self.assertTrue(any("Device Frame: tessellate_cdp" in l and "bezier.cu:34" in l for l in first), first)
        self.assertFalse(any("Host Frame" in b or "Saved host backtrace" in b for b in found.first))

    def test_an_api_error_is_an_error_and_the_exit_line_is_not(self):
        _, output = recorded("05-end-marker-past-stamps")
        found = memcheck.read(output)
        self.assertEqual(found.errors, 2)
        self.assertEqual(len(found.first), 2)
        self.assertIn("default_streams.h:88", found.first[0])
        self.assertTrue(found.first[1].startswith("Program hit cudaErrorLaunchFailure"))

    def test_shared_memory(self):
        _, output = recorded("01-x-per-warp-one-past")
        found = memcheck.read(output)
        self.assertTrue(found.first[0].startswith("Invalid __shared__ write of size 4 bytes"))
        self.assertIn("divergent_counter.cu:15", found.first[0])

    def test_the_last_summary_counts(self):
        """A summary the program printed itself comes before memcheck's own, which is last."""
        _, output = recorded("04-bound-after-read")
        forged = "========= ERROR SUMMARY: 0 errors\n" + output
        self.assertEqual(memcheck.read(forged).errors, 8)
        self.assertIsNone(memcheck.read("no summary at all\n").errors)

    def test_the_scratch_folder_is_left_out_of_paths(self):
        found = memcheck.read("========= Invalid __global__ write of size 4 bytes\n"
                              "=========     at k()+0x10 in /tmp/work/src/lab.cu:7\n"
                              "========= ERROR SUMMARY: 1 error\n", strip_prefix="/tmp/work/")
        self.assertEqual(found.errors, 1)
        self.assertIn("at k()+0x10 in src/lab.cu:7", found.first[0])


class _Ctx:
    def __init__(self):
        self.lab = registry.resolve("04")
        self.program = "/nowhere/bezier"
        self.work_dir = "/tmp/work"
        self.sandboxed = False
        shared = dict(self.lab.memcheck_case)
        self.cases = [shared, dict(shared, timing="streams")]  # one shared, one timed
        self.runs = []  # runs cleanly's runs (context.CaseRun)
        self.memcheck_costs = []

    def time_limit(self, params):
        return 6


def _result(verdict, status, output):
    return process.RunResult(verdict, status, output, 1.0, len(output))


class RunUnderTest(unittest.TestCase):
    def test_a_run_under_a_tool_says_its_wait_and_its_time(self):
        lab = registry.resolve("04")
        tool = [sys.executable, "-c", "import time; time.sleep(0.2)"]  # the harness's argv after it, unused
        with tempfile.TemporaryDirectory() as tmp:
            run_log = os.path.join(tmp, "runs.jsonl")
            with mock.patch.dict(os.environ, {harness.RUN_LOG_ENV: run_log}):
                result = harness.run_under(tool, os.path.dirname(sys.executable), lab, "/nowhere/bezier",
                                           lab.memcheck_case, 10, cwd=tmp)
            with open(run_log) as f:
                logged = [json.loads(line) for line in f]
        self.assertEqual(result.verdict, process.OK, result.output)
        self.assertEqual(set(result.costs), {"wait_s", "total_s", "held_s", "alone"})
        self.assertIs(result.costs["alone"], False)
        self.assertGreaterEqual(result.costs["total_s"], 0.2)
        # the run log has it under the tool's name, shared, held for the whole run
        self.assertEqual([(r["program"], r["tool"], r["alone"], r["slots"], r["costs"]) for r in logged],
                         [(os.path.basename(sys.executable), True, False, 1, [result.costs])])
        self.assertGreaterEqual(logged[0]["held_s"], 0.2)


# A stand-in for compute-sanitizer: its banner, a start that takes a while, then the harness as its child
# (the descriptors the grader passed it go on to the harness, as the sanitizer's do), then its summary.
FAKE_TOOL = """#!{python}
import subprocess, sys, time
print('TOOL banner', flush=True)
time.sleep(0.5)
status = subprocess.call(sys.argv[1:], close_fds=False)
print('TOOL ERROR SUMMARY: 0 errors', flush=True)
sys.exit(status)
"""


class RunUnderStartedTest(unittest.TestCase):
    """harness.run_under with a fake tool and a fake harness that speaks the kit's channel protocol."""

    def setUp(self):
        from tests.fakes import private_gate
        from tests.test_grading import write_fake
        self.lab = registry.resolve("05")
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        for patch in private_gate(self.tmp):
            patch.start()
            self.addCleanup(patch.stop)
        self.program = write_fake(self.tmp, "print('the case ran', flush=True)\n")
        self.tool = os.path.join(self.tmp, "tool")
        with open(self.tool, "w") as f:
            f.write(FAKE_TOOL.format(python=sys.executable))
        os.chmod(self.tool, 0o755)

    def run_alone(self):
        return harness.run_under([self.tool], self.tmp, self.lab, self.program, self.lab.memcheck_case, 10,
                                 cwd=self.tmp, alone=True)

    def test_the_tool_starts_and_makes_its_context_before_the_gpu_is_held_for_the_case(self):
        run_log = os.path.join(self.tmp, "runs.jsonl")
        with mock.patch.dict(os.environ, {harness.RUN_LOG_ENV: run_log}):
            result = self.run_alone()
        with open(run_log) as f:
            logged = [json.loads(line) for line in f]
        self.assertEqual(result.verdict, process.OK, result.output)
        self.assertEqual([line for line in result.output.splitlines() if not line.startswith("==")],
                         ["TOOL banner", "the case ran", "TOOL ERROR SUMMARY: 0 errors"])
        self.assertGreaterEqual(result.costs["total_s"], 0.5)
        # held alone for the case only: the tool's start and the context were made before, the GPU shared
        self.assertEqual([(r["tool"], r["alone"], r["started_before"]) for r in logged], [(True, True, True)])
        self.assertLess(logged[0]["held_s"], result.costs["total_s"] - 0.4)
        self.assertEqual(result.costs["held_s"], logged[0]["held_s"])

    def test_its_time_leaves_out_the_wait_for_its_hold(self):
        """The run sits with its context made while another holds the GPU alone: that is its wait, not its time."""
        started = harness.start_run

        def start_then_wait(*args, **kwargs):  # another grader holds the GPU alone for 1 s meanwhile
            run = started(*args, **kwargs)
            time.sleep(1.0)
            return run
        with mock.patch.object(harness, "start_run", start_then_wait):
            result = self.run_alone()
        self.assertEqual(result.verdict, process.OK, result.output)
        self.assertLess(result.costs["total_s"], result.seconds - 0.9)
        self.assertGreaterEqual(result.costs["total_s"], 0.5)  # the tool's start is its own
        self.assertGreaterEqual(result.costs["wait_s"], 1.0)


class CheckTest(unittest.TestCase):
    """_memcheck_clean's verdicts, the run under memcheck stood in for."""

    def verdict(self, result, sanitizer="/x/compute-sanitizer", alone_result=None, runs=(), cases=None):
        ran = []
        ctx = _Ctx()
        ctx.runs = list(runs)
        ctx.cases = ctx.cases if cases is None else cases

        def run_under(tool_argv, folder, lab, program, params, timeout, cwd, sandboxed, slots, alone=False):
            ran.append((tool_argv, params, timeout, alone))
            return alone_result if alone and alone_result is not None else result
        with mock.patch.object(memcheck, "find", lambda: sanitizer), \
                mock.patch.object(harness, "run_under", run_under):
            outcome = standard_checks._memcheck_clean(ctx)
        self.assertEqual(len(ctx.memcheck_costs), len(ran), "each memcheck run's costs go to the report")
        return outcome, ran

    def test_it_runs_after_a_run_that_crashed_but_not_after_one_that_hung_or_flooded(self):
        """A crash may be the very read out of bounds memcheck shows (whether it faults depends on where
        the memory lay); a run that hit the time limit or flooded would cost memcheck its own limit."""
        status, output = recorded("04-bound-after-read")
        crashed = context.CaseRun({"lines": 100000}, None, None, "CUDA error", failures.CUDA_ERROR)
        outcome, ran = self.verdict(_result(process.EXITED, status, output), runs=[crashed])
        self.assertEqual((outcome.status, len(ran)), (chk.FAILED, 1))
        for kind in (failures.TIMEOUT, failures.OUTPUT_FLOOD):
            stuck = context.CaseRun({"lines": 7}, None, None, "stuck", kind)
            outcome, ran = self.verdict(_result(process.EXITED, status, output), runs=[crashed, stuck])
            self.assertEqual((outcome.status, ran), (chk.SKIPPED, []), kind)
            self.assertIn("lines=7 %s" % failures.VERDICTS[kind], outcome.message)

    def test_no_sanitizer_is_not_run_and_not_held_against(self):
        outcome, ran = self.verdict(None, sanitizer=None)
        self.assertEqual((outcome.status, outcome.lacking), (chk.SKIPPED, memcheck.TOOL))
        self.assertEqual(ran, [])

    def test_clean(self):
        status, output = recorded("01-solution")
        outcome, ran = self.verdict(_result(process.OK, status, output))
        self.assertEqual(outcome.status, chk.PASSED, outcome.message)
        self.assertEqual(ran[0][0], memcheck.command("/x/compute-sanitizer"))
        self.assertEqual(ran[0][1], registry.resolve("04").memcheck_case)
        self.assertGreaterEqual(ran[0][2], standard_checks.MEMCHECK_TIME_LIMIT)

    def test_errors_fail_with_where_they_are(self):
        status, output = recorded("04-bound-after-read")
        outcome, _ = self.verdict(_result(process.EXITED, status, output))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("memcheck found 8 error(s)", outcome.message)
        self.assertIn("bezier_lines.cu:31", outcome.message)
        self.assertIn('make sanitize LAB=04 ARGS="--lines 300', outcome.message)
        self.assertEqual(outcome.message.count("Invalid __global__ read"), 3)

    def test_the_harness_failing_on_its_own_is_for_the_other_checks(self):
        outcome, _ = self.verdict(_result(process.EXITED, 1, "WRONG\n========= ERROR SUMMARY: 0 errors\n"))
        self.assertEqual(outcome.status, chk.PASSED)

    def test_a_run_that_did_not_finish_fails(self):
        for result in (_result(process.TIMEOUT, None, "========= COMPUTE-SANITIZER\n"),
                       _result(process.CRASHED, -9, "========= ERROR SUMMARY: 0 errors\n"),
                       _result(process.OK, 0, "ERROR SUMMARY: 0 errors, printed by the program\n")):
            outcome, _ = self.verdict(result)
            self.assertEqual(outcome.status, chk.FAILED, result.verdict)
            self.assertIn("memcheck did not finish", outcome.message)

    OUT_OF_MEMORY = ("========= Program hit cudaErrorMemoryAllocation (error 2) due to \"out of memory\" on CUDA API "
                     "call to cudaFree.\n=========\n========= ERROR SUMMARY: 1 error\n")

    def test_out_of_memory_beside_other_runs_is_run_again_alone(self):
        """A GPU whose memory other gradings hold is the machine's problem: the run alone decides."""
        status, clean = recorded("01-solution")
        outcome, ran = self.verdict(_result(process.EXITED, memcheck.ERRORS_EXIT, self.OUT_OF_MEMORY),
                                    alone_result=_result(process.OK, status, clean))
        self.assertEqual(outcome.status, chk.PASSED, outcome.message)
        self.assertEqual([r[3] for r in ran], [False, True])
        outcome, ran = self.verdict(_result(process.EXITED, memcheck.ERRORS_EXIT, self.OUT_OF_MEMORY))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("cudaErrorMemoryAllocation", outcome.message)
        self.assertEqual([r[3] for r in ran], [False, True])

    def test_where_every_case_is_timed_it_runs_alone(self):
        """There the memcheck run would be the only shared run of a class, and every run alone would wait for
        it to end: it runs alone, once, even when it reports memory the GPU lacked."""
        timed = [{"streams": 8, "timing": True}, {"streams": 32, "timing": True}]
        status, clean = recorded("01-solution")
        outcome, ran = self.verdict(_result(process.OK, status, clean), cases=timed)
        self.assertEqual((outcome.status, [r[3] for r in ran]), (chk.PASSED, [True]))
        outcome, ran = self.verdict(_result(process.EXITED, memcheck.ERRORS_EXIT, self.OUT_OF_MEMORY), cases=timed)
        self.assertEqual((outcome.status, [r[3] for r in ran]), (chk.FAILED, [True]))
        untimed = dict(registry.resolve("04").memcheck_case)
        _, ran = self.verdict(_result(process.OK, status, clean), cases=timed[:1] + [untimed])
        self.assertEqual([r[3] for r in ran], [False])

    def test_where_every_case_runs_alone_it_runs_alone(self):
        """A case that needs more memory than every shared slot runs alone too (runs.runs_alone): beside
        timed ones, memcheck's run would again be the only shared run."""
        edge = {"lines": 1024, "workload": "chained", "factor": 16, "max": 524288, "seed": 5}  # Lab 04's 4 GiB edge
        timed = {"lines": 256, "workload": "heavy", "factor": 16, "max": 1048576, "seed": 5, "timing": "streams"}
        status, clean = recorded("01-solution")
        with mock.patch.dict(os.environ, {gpushare.SHARERS_ENV: "4"}):
            self.assertGreater(gpushare.slots_for(registry.resolve("04").gpu_bytes(edge)), 4)
            _, ran = self.verdict(_result(process.OK, status, clean), cases=[edge, timed])
            self.assertEqual([r[3] for r in ran], [True])
            _, ran = self.verdict(_result(process.OK, status, clean), cases=[edge, timed, dict(edge, lines=1)])
            self.assertEqual([r[3] for r in ran], [False])

    def test_other_errors_are_not_run_again(self):
        status, output = recorded("04-bound-after-read")
        _, ran = self.verdict(_result(process.EXITED, status, output))
        self.assertEqual([r[3] for r in ran], [False])

    def test_the_error_status_without_errors_counted_fails(self):
        outcome, _ = self.verdict(_result(process.EXITED, memcheck.ERRORS_EXIT, "========= ERROR SUMMARY: 0 errors\n"))
        self.assertEqual(outcome.status, chk.FAILED)


class LackingTest(unittest.TestCase):
    """A check not run for what the machine lacks costs no points, is no pass, and says what it lacked."""

    def test_results(self):
        check = chk.Check(standard_checks.MEMCHECK, 1, chk.RUNTIME, lambda ctx: chk.not_run_here(memcheck.TOOL, "no tool"))
        child = chk.Check("after", 1, chk.RUNTIME, lambda ctx: chk.passed(), parent=standard_checks.MEMCHECK)
        results = chk.run_checks([check, child], None)
        self.assertEqual([r.lacking for r in results], [memcheck.TOOL, memcheck.TOOL])
        self.assertFalse(chk.points_lost(results))
        self.assertFalse(chk.not_run_for_lack_of_gpu(results))
        self.assertEqual(chk.lacked(results), [memcheck.TOOL])
        self.assertEqual(results[0].to_dict()["not_run_lacking"], memcheck.TOOL)

    def test_what_the_student_and_the_score_sheet_read(self):
        lab = registry.resolve("01")
        results = [chk.CheckResult(c, chk.SKIPPED, 0, "not run: no compute-sanitizer here", lacking=memcheck.TOOL)
                   if c.name == standard_checks.MEMCHECK else chk.CheckResult(c, chk.PASSED, c.points, "")
                   for c in lab.checks]
        rep = grading.LabReport(lab, "/tmp/sub", 1, [], results)
        text = report.lab_text(rep)
        self.assertIn("NOT RUN for want of compute-sanitizer (%s, 1 points)" % standard_checks.MEMCHECK, text)
        self.assertNotIn("skipped because a check they depend on did not pass", text)
        verdict = sheets.verdict_of(rep)
        self.assertEqual(verdict, "checks not run (no compute-sanitizer)")
        self.assertTrue(sheets.scored(verdict))
        self.assertFalse(sheets.scored("compile error"))


if __name__ == "__main__":
    unittest.main()
