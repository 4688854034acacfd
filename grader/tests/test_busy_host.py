"""tools/busy_host.py: the load runs while the command does, the command's exit status is the tool's,
and no load process outlives the tool."""
import os
import subprocess
import sys
import unittest

from gradelib import paths

TOOL = os.path.join(paths.KIT_ROOT, "tools", "busy_host.py")
MARK = "kit-busy-host"

# The command: how many load processes run while it does (load_processes, below: this command's own
# line does not carry the mark), then an exit status of its own.
COUNT_LOAD = ("import sys; sys.path.insert(0, %r)\n"
              "from tests.test_busy_host import load_processes\n"
              "print(len(load_processes()))\n"
              "sys.exit(7)\n") % os.path.join(paths.KIT_ROOT, "grader")


def load_processes():
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if MARK.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


class BusyHostTest(unittest.TestCase):
    def test_load_runs_beside_the_command_and_ends_with_it(self):
        # no GPU: no probe loops; NVCC=false: each build loop fails and waits, a light load for a test
        env = dict(os.environ, KIT_NO_GPU="1", NVCC="false")
        ran = subprocess.run([sys.executable, TOOL, "--spinners", "2", "--contexts", "1", "--builds", "1", "--",
                              sys.executable, "-c", COUNT_LOAD], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(ran.returncode, 7, ran.stderr)
        self.assertGreaterEqual(int(ran.stdout.strip().splitlines()[-1]), 3)  # 2 spinners and the build loop
        self.assertIn("no CUDA contexts in the load", ran.stderr)
        self.assertEqual(load_processes(), [])

    def test_no_command_is_a_usage_error(self):
        ran = subprocess.run([sys.executable, TOOL, "--spinners", "1"], capture_output=True, text=True, timeout=60)
        self.assertEqual(ran.returncode, 2)
        self.assertIn("no command", ran.stderr)
        self.assertEqual(load_processes(), [])


if __name__ == "__main__":
    unittest.main()
