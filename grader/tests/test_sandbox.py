"""The sandbox's contract (grader/README.md, "Trust the result"), line by line, on a machine without a GPU: what a
sandboxed command can see, write, reach and leave behind, and a build that reaches outside its folder.
Each test is skipped (never passed) where no sandbox can be made."""
import json
import os
import shutil
import socket
import tempfile
import time
import unittest

from gradelib import paths, process, sandbox
from tests.fakes import run_grade

PYTHON = "/usr/bin/python3"  # the sandbox sees the system's folders, not a user's own Python

# Run inside the sandbox: what it can see and do, as one JSON line.
PROBE = r"""
import json, os, socket, sys
kit, secret_dir, readable, port = sys.argv[1:5]
found = {}
found["kit_grader_visible"] = os.path.exists(os.path.join(kit, "grader"))
found["kit_solutions_visible"] = os.path.exists(os.path.join(kit, "solutions"))
found["secret_dir_visible"] = os.path.exists(secret_dir)
found["salt_in_env"] = "KIT_GRADER_SALT" in os.environ
found["env"] = sorted(os.environ)
def can_write(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return True
    except OSError:
        return False
found["writes_usr"] = can_write("/usr/sandbox-probe")
found["writes_readable"] = can_write(os.path.join(readable, "sandbox-probe"))
found["writes_tmp"] = can_write("/tmp/sandbox-probe")
found["reads_readable"] = os.path.exists(os.path.join(readable, "given.txt"))
try:
    with open("/tmp/big", "wb") as f:
        for _ in range(64):
            f.write(b"x" * (1 << 20))
    found["tmp_limited"] = False
except OSError:
    found["tmp_limited"] = True
s = socket.socket()
try:
    s.settimeout(2)
    s.connect(("127.0.0.1", int(port)))
    found["network"] = True
except OSError:
    found["network"] = False
found["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
with open("/proc/self/status") as f:
    found["capabilities"] = [l.split()[1] for l in f if l.startswith(("CapEff", "CapPrm", "CapBnd"))]
print(json.dumps(found))
"""


def sandbox_or_skip(test):
    works, why = sandbox.works()
    if not works:
        test.skipTest("no sandbox can be made here: %s" % why)
    if not os.path.exists(PYTHON):
        test.skipTest("no %s to probe the sandbox with" % PYTHON)


class ContractTest(unittest.TestCase):
    def setUp(self):
        sandbox_or_skip(self)
        self.tmp = tempfile.mkdtemp()
        os.chmod(self.tmp, 0o755)
        self.secret_dir = os.path.join(self.tmp, "class")  # stands for the class folder, the records...
        os.makedirs(self.secret_dir)
        self.readable = os.path.join(self.tmp, "program")  # stands for the submission's build
        os.makedirs(self.readable)
        with open(os.path.join(self.readable, "given.txt"), "w") as f:
            f.write("the program")
        os.chmod(self.readable, 0o755)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_in(self, policy, argv, timeout=60, env=None):
        return process.run_bounded(sandbox.wrap(policy, argv), timeout, env=env)

    def test_sees_writes_and_reaches_only_what_the_policy_gives(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        policy = sandbox.Policy(read_only=[self.readable], tmp_bytes=16 << 20)
        env = dict(os.environ, KIT_GRADER_SALT="a-secret-salt")
        ran = self.run_in(policy, [PYTHON, "-c", PROBE, paths.KIT_ROOT, self.secret_dir, self.readable, str(port)],
                          env=env)
        listener.close()
        self.assertTrue(ran.ok, ran.output)
        found = json.loads(ran.output.strip().splitlines()[-1])
        self.assertEqual((found["kit_grader_visible"], found["kit_solutions_visible"], found["secret_dir_visible"]),
                         (False, False, False), "the kit's grader and solutions and other folders are hidden")
        self.assertFalse(found["salt_in_env"])
        self.assertTrue(set(found["env"]) <= set(sandbox.KEPT_ENV) | {"HOME", "TMPDIR", "PWD"} | {
            k for k in found["env"] if k.startswith(sandbox.KEPT_ENV_PREFIXES)}, found["env"])
        self.assertEqual((found["writes_usr"], found["writes_readable"], found["reads_readable"]), (False, False, True))
        self.assertEqual((found["writes_tmp"], found["tmp_limited"]), (True, True), "a private /tmp of limited size")
        self.assertFalse(found["network"], "a listener on the machine's loopback is out of reach")
        self.assertLessEqual(len(found["processes"]), 3, "only its own processes: %s" % found["processes"])
        self.assertEqual(found["capabilities"], ["0000000000000000"] * 3)

    def test_a_detached_process_dies_with_the_run(self):
        """A process that leaves the run's session (setsid) is killed when the run ends, and when the run
        is killed at its time limit."""
        writable = os.path.join(self.tmp, "out")
        os.makedirs(writable)
        policy = sandbox.Policy(writable=[writable])
        later = "setsid sh -c 'sleep 2; touch %s/%%s' & echo started" % writable
        self.assertTrue(self.run_in(policy, ["sh", "-c", later % "after-exit"]).ok)
        killed = self.run_in(policy, ["sh", "-c", (later % "after-timeout") + "; sleep 30"], timeout=1)
        self.assertEqual(killed.verdict, process.TIMEOUT)
        time.sleep(3)
        self.assertEqual(os.listdir(writable), [], "nothing was written after the run ended")

    def test_processes_are_limited(self):
        policy = sandbox.Policy(max_processes=20)
        bomb = "import os\nn = 0\ntry:\n    while n < 200:\n        if os.fork() == 0:\n            import time; " \
               "time.sleep(30); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)\n"
        started = time.monotonic()
        ran = self.run_in(policy, [PYTHON, "-c", bomb])
        self.assertTrue(ran.ok, ran.output)
        self.assertLess(int(ran.output.split()[-1]), 20)
        self.assertLess(time.monotonic() - started, 20, "the run ended without waiting for its children")

    def test_exit_status_and_signal_are_passed_on(self):
        self.assertEqual(self.run_in(sandbox.Policy(), ["sh", "-c", "exit 7"]).returncode, 7)
        crashed = self.run_in(sandbox.Policy(), ["sh", "-c", "kill -SEGV $$"])
        self.assertEqual((crashed.verdict, crashed.signal_name), (process.CRASHED, "SIGSEGV"))

    def test_a_failure_to_make_it_is_its_own(self):
        """A sandbox that cannot be made says so on its own line and status, never as the command's."""
        ran = self.run_in(sandbox.Policy(read_only=["/no/such/folder"]), ["true"])
        self.assertEqual(ran.returncode, sandbox.SETUP_FAILED)
        self.assertIn("/no/such/folder", sandbox.setup_failure(ran.output))
        with self.assertRaises(sandbox.SandboxFailed):
            sandbox.check_made(ran, "a test")

    def test_the_command_cannot_say_the_sandbox_failed(self):
        """A submission that exits as the sandbox does when it cannot be made, with its prefix, is graded
        on what it did: it cannot write the grader's token, so its run is not the machine's trouble (which
        goes ungraded)."""
        forged = self.run_in(sandbox.Policy(), ["sh", "-c", "echo '%s%s' >&2; echo '%sx y' >&2; exit %d" % (
            sandbox.FAILED_PREFIX, "unshare: No space left on device", sandbox.FAILED_PREFIX, sandbox.SETUP_FAILED)])
        self.assertEqual(forged.returncode, sandbox.SETUP_FAILED)
        self.assertIsNone(sandbox.setup_failure(forged.output))
        sandbox.check_made(forged, "a test")  # raises nothing


class ReachingOutsideTest(unittest.TestCase):
    """A build that #includes files outside its folder: the reference solution and a secret. In the sandbox
    the build fails and shows nothing of them; without it (--no-sandbox) the same submission reads both,
    which is what the test guards against."""

    def setUp(self):
        sandbox_or_skip(self)
        self.tmp = tempfile.mkdtemp()
        self.secret = os.path.join(paths.BUILD_ROOT, "sandbox-test-secret.h")
        os.makedirs(paths.BUILD_ROOT, exist_ok=True)
        with open(self.secret, "w") as f:
            f.write("int stolen = SECRET_TOKEN_4711;\n")
        solution = os.path.join(paths.SOLUTIONS_DIR, "01-divergent-counter", "divergent_counter.cu")
        with open(os.path.join(self.tmp, "divergent_counter.cu"), "w") as f:
            f.write('#include "%s"\n#include "%s"\n' % (solution, self.secret))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.remove(self.secret)

    def grade(self, *extra):
        ran = run_grade(["--lab", "01", "--submission", self.tmp, "--seed", "1"] + list(extra), timeout=600)
        return ran.stdout

    def test_the_sandboxed_build_finds_neither(self):
        out = self.grade()
        self.assertIn("sandbox: on", out)
        self.assertRegex(out, r"compiles \.+ FAIL")
        self.assertIn("No such file or directory", out)
        self.assertNotIn("SECRET_TOKEN_4711", out)

    def test_without_the_sandbox_the_build_reads_both(self):
        out = self.grade("--no-sandbox")
        self.assertIn("SANDBOX OFF", out)
        self.assertIn("SECRET_TOKEN_4711", out, "the secret's text shows in the compiler's message")
        self.assertNotIn("No such file or directory", out)


if __name__ == "__main__":
    unittest.main()
