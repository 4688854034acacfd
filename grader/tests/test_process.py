import subprocess
import sys
import time
import unittest
from unittest import mock

from gradelib import process


def py(code):
    return [sys.executable, "-c", code]


class RunBoundedTest(unittest.TestCase):
    def test_ok_and_output(self):
        r = process.run_bounded(py("print('hello')"), timeout=30)
        self.assertEqual(r.verdict, process.OK)
        self.assertEqual(r.output.strip(), "hello")

    def test_exit_status_is_kept(self):
        r = process.run_bounded(py("import sys; print('bad', file=sys.stderr); sys.exit(3)"), timeout=30)
        self.assertEqual((r.verdict, r.returncode), (process.EXITED, 3))
        self.assertIn("bad", r.output)
        self.assertEqual(r.describe(), "exited with status 3")

    def test_hang_is_killed_at_the_time_limit(self):
        r = process.run_bounded(py("import time; print('started', flush=True); time.sleep(60)"), timeout=1)
        self.assertEqual(r.verdict, process.TIMEOUT)
        self.assertLess(r.seconds, 30)
        self.assertIn("started", r.output)
        self.assertIn("time limit", r.describe(1))

    def test_hang_in_a_grandchild_holding_no_output_is_killed(self):
        code = "import subprocess, sys; subprocess.Popen(['sleep', '60'], stdout=subprocess.DEVNULL); sys.exit(0)"
        r = process.run_bounded(py(code), timeout=5)
        self.assertEqual(r.verdict, process.OK)  # the command itself finished; its leftovers are killed
        self.assertLess(r.seconds, 5)

    def test_crash_reports_the_signal(self):
        r = process.run_bounded(py("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"), timeout=30)
        self.assertEqual(r.verdict, process.CRASHED)
        self.assertEqual(r.signal_name, "SIGSEGV")
        self.assertIn("SIGSEGV", r.describe())

    def test_flood_is_stopped_and_output_capped(self):
        r = process.run_bounded(py("import sys\nwhile True: sys.stdout.write('x' * 4096)"), timeout=60,
                                flood_limit=1 << 20)
        self.assertEqual(r.verdict, process.FLOOD)
        self.assertLess(len(r.output), process.KEEP_HEAD + process.KEEP_TAIL + 200)
        self.assertIn("bytes of output not shown", r.output)

    def test_long_output_keeps_head_and_tail(self):
        code = "print('FIRST'); print('y' * 100000); print('LAST')"
        r = process.run_bounded(py(code), timeout=30)
        self.assertEqual(r.verdict, process.OK)
        self.assertTrue(r.output.startswith("FIRST"))
        self.assertTrue(r.output.rstrip().endswith("LAST"))
        self.assertGreater(r.total_bytes, len(r.output))

    def test_missing_program(self):
        r = process.run_bounded(["/nonexistent/harness"], timeout=5)
        self.assertEqual(r.verdict, process.NOT_FOUND)
        self.assertIn("could not be started", r.describe())


class GroupExitTest(unittest.TestCase):
    """A run has ended once no process of its group runs: a sandboxed harness killed at its limit exits
    after the sandbox's first process, the one the grader waits for, still tearing its CUDA context down."""

    def test_a_run_ends_when_the_last_process_of_its_group_has_exited(self):
        # a member that outlives the command, as a killed harness outlives the sandbox's first process
        with mock.patch.object(process, "_kill_group"):
            start = time.monotonic()
            r = process.run_bounded(["sh", "-c", "sleep 0.6 & exit 0"], timeout=10)
        self.assertEqual(r.verdict, process.OK)
        self.assertGreaterEqual(time.monotonic() - start, 0.6)

    def test_a_zombie_has_ended(self):
        proc = subprocess.Popen(["true"], start_new_session=True)
        while process.processes().get(proc.pid, (0, 0, "R"))[2] != "Z":
            time.sleep(0.01)
        self.assertFalse(process.group_runs(proc.pid))  # not reaped yet: a zombie holds no file
        proc.wait()
        self.assertFalse(process.group_runs(proc.pid))

    def test_the_wait_is_bounded(self):
        proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
        try:
            self.assertTrue(process.group_runs(proc.pid))
            start = time.monotonic()
            process.wait_for_group(proc.pid, limit=0.3)
            self.assertLess(time.monotonic() - start, 5)
        finally:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    unittest.main()
