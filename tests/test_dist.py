#!/usr/bin/env python3
"""What the kit ships, unpacked into an empty folder and used there.

  tests/test_dist.py student      make dist's archive: no solutions, no salt, no self-tests, the
                                  student's README; `make grade` builds every lab and runs the
                                  static checks there (and the runtime checks on a GPU machine)
  tests/test_dist.py gradescope   make gradescope's zip: run_autograder against a fake /autograder
                                  tree grades the reference solution into a valid results.json
"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

KIT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT, "grader"))
sys.path.insert(0, os.path.join(KIT, "tools"))

import dist  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
from gradelib import registry  # noqa: E402
from gradelib import report  # noqa: E402



def fail(message):
    print("FAILED: " + message)
    return 1


def run(argv, cwd, env=None):
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    print("$ %s  (exit %d)\n%s" % (" ".join(argv), proc.returncode, proc.stdout[-6000:]))
    return proc


def clean_env():
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "KIT_GRADER_SALT")}


def student(tmp):
    archive = os.path.join(tmp, "kit.tar.gz")
    if run([sys.executable, os.path.join(KIT, "tools", "dist.py"), "student", archive], KIT).returncode != 0:
        return fail("make dist's script failed")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        for member in tar.getmembers():
            if not (member.isfile() or member.isdir()) or member.name.startswith(("/", "..")):
                return fail("unexpected member %s" % member.name)
        tar.extractall(tmp)
    root = os.path.join(tmp, dist.TOP)
    held_back = [n for n in names if "/solutions/" in n or "/grader/tests/" in n or n.endswith(
        ("salt.txt", "selftest.py")) or "/tests/" in n]
    if held_back:
        return fail("the student kit holds what it must not: %s" % held_back[:5])
    with open(os.path.join(root, "README.md")) as a, open(os.path.join(KIT, dist.STUDENT_README)) as b:
        if a.read() != b.read():
            return fail("the student kit's README is not the student's")
    for lab in registry.all_labs().values():
        if not os.path.isdir(os.path.join(root, "labs", lab.name)):
            return fail("lab %s is missing" % lab.name)
    kit_only = run(["make", "test"], root, clean_env())
    if kit_only.returncode == 0 or "not part of the student kit" not in kit_only.stdout:
        return fail("make test in the student kit should say it is not part of it")

    graded = run(["make", "grade"], root, clean_env())
    if graded.returncode == 0:
        return fail("make grade gave the starters full marks in the student kit")
    return check_grade_output(graded.stdout)


def check_grade_output(text):
    labs = list(registry.all_labs().values())
    built = [l for l in text.splitlines() if l.strip().startswith("compiles") and " OK " in l]
    if len(built) != len(labs):
        return fail("%d of %d labs built in the student kit" % (len(built), len(labs)))
    if gpu_mod.detect().available and "NOT RUN" in text:
        return fail("a GPU is here but the runtime checks did not run in the student kit")
    print("student kit: every lab builds and is graded (%s)"
          % ("runtime checks ran" if gpu_mod.detect().available else "no GPU: runtime checks not run"))
    return 0


def gradescope(tmp):
    lab = registry.resolve("01")
    made = run([sys.executable, os.path.join(KIT, "tools", "dist.py"), "gradescope", "01", tmp], KIT)
    if made.returncode != 0:
        return fail("make gradescope's script failed")
    autograder = os.path.join(tmp, "autograder")
    with zipfile.ZipFile(os.path.join(tmp, "gradescope-%s.zip" % lab.name)) as z:
        names = z.namelist()
        if not {"setup.sh", "run_autograder"} <= set(names):
            return fail("the zip lacks setup.sh or run_autograder at its top")
        if any(n.startswith("kit/solutions/") for n in names):
            return fail("the autograder zip holds the solutions")
        z.extractall(os.path.join(autograder, "source"))
    for name in names:  # zipfile does not restore permissions
        info = z.getinfo(name)
        os.chmod(os.path.join(autograder, "source", name), (info.external_attr >> 16) & 0o777 or 0o644)
    submission = os.path.join(autograder, "submission")
    os.makedirs(submission)
    shutil.copy(os.path.join(KIT, "solutions", lab.name, "divergent_counter.cu"), submission)
    env = dict(clean_env(), AUTOGRADER_ROOT=autograder)
    if run(["bash", os.path.join(autograder, "source", "run_autograder")], tmp, env).returncode != 0:
        return fail("run_autograder failed")
    with open(os.path.join(autograder, "results", "results.json")) as f:
        results = json.load(f)
    problems = report.gradescope_problems(results)
    if problems or not results.get("tests"):
        return fail("results.json is not Gradescope's, or has no tests: %s" % (problems or sorted(results)))
    if gpu_mod.detect().available and results["score"] != results["max_score"]:
        return fail("the reference solution scored %s of %s through the autograder"
                    % (results["score"], results["max_score"]))
    print("gradescope: results.json valid, score %s of %s" % (results["score"], results["max_score"]))
    return 0


def main(argv):
    if argv not in (["student"], ["gradescope"]):
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        return student(tmp) if argv[0] == "student" else gradescope(tmp)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
