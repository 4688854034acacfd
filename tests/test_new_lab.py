#!/usr/bin/env python3
"""`make new-lab` tried on a copy of the kit: the skeleton it writes passes the CPU checks every lab must.

  tests/test_new_lab.py           the test (CTest: new-lab-skeleton)

It copies the kit's files (tracked, and new ones git does not ignore: tools/dist.py's list) into a
temporary folder, runs `make new-lab NN=90 NAME=skeleton-check` there, and checks in that copy:
tools/check_handouts.py passes; the lab's starter is the one its solution gives; the grader's unit
tests that cover every lab pass, the new lab's own included (UNIT_TESTS); grader/selftest.py
static-pass, starter and harness-options pass for the new lab, and each of its known-wrong submissions caught by a
static check is caught (no GPU needed); `make new-lab` refuses a lab number or folder that exists, and
bad arguments, with exit status 2 and nothing written.

Exit status 0 passed, 1 failed, 77 not run (no nvcc here: the skeleton cannot be built).
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

KIT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT, "grader"))
sys.path.insert(0, os.path.join(KIT, "tools"))

import dist  # noqa: E402  (tools/dist.py: the kit's files)
from gradelib import batch, exits  # noqa: E402

NUMBER, NAME = "90", "skeleton-check"  # 99 is the kit's tests' number of no lab
# The grader's unit tests that go over every lab, and the new lab's own.
UNIT_TESTS = ["tests.test_registry", "tests.test_lab_parts", "tests.test_quoted_figures", "tests.test_handout_check",
              "tests.test_lab" + NUMBER]
# What the commands in the copy must not inherit: an outer make's variables, the suite's folder for
# compiled modules and its build cache (the copy keeps its own), where verdicts are recorded.
NOT_INHERITED = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHONPYCACHEPREFIX", "KIT_BUILD_CACHE", "KIT_VERDICTS_OUT",
                 "KIT_GRADER_SALT")


def copy_of_the_kit(top):
    for relative in dist.kit_files():
        target = os.path.join(top, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            shutil.copy2(os.path.join(KIT, relative), target)
        except FileNotFoundError:
            pass  # removed since it was listed (another test's file, side by side): not the kit's


def environment():
    return {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}


def start(argv, cwd):
    return subprocess.Popen(argv, cwd=cwd, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)


def finish(process, what):
    """(exit status, output) of a started command, its output printed under what."""
    output, _ = process.communicate()
    print("$ %s  (exit %d)\n%s" % (what, process.returncode, output[-6000:]), flush=True)
    return process.returncode, output


def run(argv, cwd):
    return finish(start(argv, cwd), " ".join(argv))


def tree_digest(top):
    digest = hashlib.sha256()
    batch.hash_tree(digest, top, skip_dirs=("build", "__pycache__"))
    return digest.hexdigest()


def refusal_problems(copy):
    """make new-lab again for the lab, for its number under another name, and with bad arguments: each
    refused with status 2 (make's own is 2 when its command fails), and nothing written."""
    problems = []
    before = tree_digest(copy)
    for args in (["NN=" + NUMBER, "NAME=" + NAME], ["NN=" + NUMBER, "NAME=another-name"], ["NAME=" + NAME],
                 ["NN=9", "NAME=" + NAME], ["NN=98", "NAME=Not_A_Name"]):
        status, output = run(["make", "--no-print-directory", "new-lab"] + args, copy)
        if status != 2 or "nothing written" not in output:
            problems.append("make new-lab %s: expected a refusal (exit 2, nothing written), got exit %d"
                            % (" ".join(args), status))
    status, _ = run([sys.executable, "tools/new_lab.py", NUMBER, NAME], copy)
    if status != 2:
        problems.append("tools/new_lab.py %s %s for an existing lab: exit %d, not 2" % (NUMBER, NAME, status))
    if tree_digest(copy) != before:
        problems.append("a refused make new-lab changed the kit's files")
    return problems


def static_known_wrong_cases(copy):
    """The new lab's known-wrong submissions whose check is a static one: the cpu `caught` tests of
    grader/selftest.py's manifest."""
    status, output = run([sys.executable, "grader/selftest.py", "manifest"], copy)
    cases = [line.split("|")[-1] for line in output.splitlines()
             if line.startswith(NUMBER + "-incorrect-") and line.split("|")[1:3] == ["cpu", "caught"]]
    return status, cases


def skeleton_problems(copy):
    status, _ = run(["make", "--no-print-directory", "new-lab", "NN=" + NUMBER, "NAME=" + NAME], copy)
    if status != 0:
        return ["make new-lab NN=%s NAME=%s failed (exit %d)" % (NUMBER, NAME, status)]
    problems = []
    status, cases = static_known_wrong_cases(copy)
    if status != 0 or not cases:
        problems.append("the new lab has no known-wrong submission caught by a static check (selftest.py manifest)")
    # The builds first, side by side (nvcc is the slow part); the quick checks meanwhile.
    selftests = [["static-pass", NUMBER], ["starter", NUMBER], ["harness-options", NUMBER]] + \
        [["caught", NUMBER, case] for case in cases]
    started = [(start([sys.executable, "grader/selftest.py"] + args, copy), "selftest.py " + " ".join(args))
               for args in selftests]
    for argv, cwd, what in (([sys.executable, "tools/check_handouts.py"], copy, "tools/check_handouts.py"),
                            ([sys.executable, "grader/kit.py", "starters", "--check"], copy,
                             "the starter as make starters writes it (kit.py starters --check)"),
                            ([sys.executable, os.path.join(copy, "tests", "test_new_lab.py"), "unit"],
                             os.path.join(copy, "grader"), "the grader's unit tests over every lab")):
        status, _ = finish(start(argv, cwd), what)
        if status != 0:
            problems.append("%s failed (exit %d)" % (what, status))
    for process, what in started:
        status, _ = finish(process, what)
        if status != 0:
            problems.append("%s failed (exit %d)" % (what, status))
    return problems + refusal_problems(copy)


def unit_tests():
    """UNIT_TESTS, in the copy's grader/ folder."""
    sys.path.insert(0, os.getcwd())
    suite = unittest.defaultTestLoader.loadTestsFromNames(UNIT_TESTS)
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if result.wasSuccessful() and result.testsRun else 1


def main(argv):
    if argv == ["unit"]:
        return unit_tests()
    if argv:
        sys.exit(__doc__)
    nvcc = os.environ.get("NVCC") or "nvcc"
    if shutil.which(nvcc) is None:
        print("not run: no %s here, so the new lab's skeleton cannot be built" % nvcc)
        return exits.NOT_RUN
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="new-lab-") as tmp:
        copy = os.path.join(tmp, "kit")
        copy_of_the_kit(copy)
        problems = skeleton_problems(copy)
    for line in problems:
        print("FAILED: " + line)
    if problems:
        return 1
    print("make new-lab NN=%s NAME=%s: the skeleton passes the CPU checks (%.0f s)" % (NUMBER, NAME,
                                                                                  time.monotonic() - began))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
