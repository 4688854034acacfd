import sys
import unittest

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


if __name__ == "__main__":
    unittest.main()
