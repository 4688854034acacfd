#!/usr/bin/env python3
"""The kit's tests of itself: does the grader say what it must about the kit's own submissions?

  selftest.py manifest                         the test list, for tests/CMakeLists.txt
  selftest.py static-pass LAB                  the solution passes every build and static check
  selftest.py starter LAB                      the starter compiles and fails the static checks it must
  selftest.py full-marks LAB [--seeds N]       the solution scores full marks, N seeds in a row (GPU)
  selftest.py alternative LAB CASE             an alternative solution scores full marks (GPU)
  (with KIT_SOLUTION_SEEDS=N in the environment, both grade seeds 1..N)
  selftest.py not-full-marks LAB               the starter runs on the GPU and scores less (GPU)
  selftest.py caught LAB CASE                  the check named in the case's note.txt fails
  selftest.py hostile LAB                      batch-grade solutions/hostile/LAB under a salt: every
                                               submission gets the verdict its note.txt names (GPU)

Exit status 0 passed, 1 failed, 77 not run (it needs a GPU and there is none).
Each test runs the grader as a user would (grade.py --json) and reads its JSON document.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gradelib import checks as chk  # noqa: E402
from gradelib import exits, grading  # noqa: E402
from gradelib import registry  # noqa: E402
from gradelib import paths  # noqa: E402

NOT_RUN = exits.NOT_RUN
# How many seeds the solution and alternative tests grade (full-marks, alternative), when set:
# KIT_SOLUTION_SEEDS=10 make test, before a release.
SEEDS_ENV = "KIT_SOLUTION_SEEDS"
TIMEOUT = 30  # seconds per harness run: ample for every solution case, short for a deliberate hang
GRADE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grade.py")


def grade(lab, submission, seed=1, no_gpu=False):
    """Run grade.py; return (exit status, {check name: check dict}, document)."""
    env = dict(os.environ)
    if no_gpu:
        env["KIT_NO_GPU"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "grade.json")
        proc = subprocess.run([sys.executable, GRADE, "--lab", lab.name, "--submission", submission,
                               "--seed", str(seed), "--timeout", str(TIMEOUT), "--json", out], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        print(proc.stdout)
        with open(out) as f:
            doc = json.load(f)
    checks = {c["name"]: c for c in doc["labs"][0]["checks"]}
    return proc.returncode, checks, doc


def fail(message):
    print("SELFTEST FAILED: " + message)
    return 1


def solution_dir(lab):
    return os.path.join(paths.SOLUTIONS_DIR, lab.name)


def starter_dir(lab):
    return os.path.join(paths.LABS_DIR, lab.name)


def static_pass(lab):
    _, checks, _ = grade(lab, solution_dir(lab), no_gpu=True)
    bad = [n for n, c in checks.items() if c["kind"] != chk.RUNTIME and c["status"] != chk.PASSED]
    return fail("build/static checks did not pass: %s" % bad) if bad else 0


def starter(lab):
    _, checks, _ = grade(lab, starter_dir(lab), no_gpu=True)
    if checks[grading.COMPILES]["status"] != chk.PASSED:
        return fail("the starter does not compile")
    should_fail = [n for n in lab.starter_must_fail if checks[n]["status"] != chk.FAILED]
    return fail("the starter passes checks it must fail: %s" % should_fail) if should_fail else 0


def full_marks(lab, seeds, submission=None):
    for seed in range(1, seeds + 1):
        status, checks, _ = grade(lab, submission or solution_dir(lab), seed=seed)
        if status == NOT_RUN:
            return NOT_RUN
        if status != 0:
            lost = [n for n, c in checks.items() if c["score"] < c["points"]]
            return fail("seed %d: the solution lost points on %s" % (seed, lost))
    return 0


def not_full_marks(lab):
    _, checks, doc = grade(lab, starter_dir(lab))
    if any(c["skipped_no_gpu"] for c in checks.values()):
        return NOT_RUN
    if doc["score"] >= doc["max_score"]:
        return fail("the starter scored full marks")
    if checks[grading.RUNS_CLEANLY]["status"] != chk.PASSED:
        return fail("the starter does not run cleanly: it should run and lose points on results")
    return 0


def read_note(case_dir):
    with open(os.path.join(case_dir, "note.txt")) as f:
        line = f.readline().strip()
    name, sep, why = line.partition(":")
    if not sep or not why.strip():
        raise ValueError("%s/note.txt: the first line must be 'check name: what it catches'" % case_dir)
    return name.strip(), why.strip()


def caught(lab, case):
    case_dir = os.path.join(paths.INCORRECT_DIR, lab.name, case)
    name, why = read_note(case_dir)
    check = lab.check_named(name)
    if check is None:
        return fail("note.txt names no check of %s: %r" % (lab.name, name))
    status, checks, _ = grade(lab, case_dir, no_gpu=(check.kind != chk.RUNTIME))
    result = checks[name]
    if result["skipped_no_gpu"]:
        return NOT_RUN
    if result["status"] != chk.FAILED:
        return fail("'%s' should reject this submission (%s) but was %s" % (name, why, result["status"]))
    print("rejected by '%s', as its note says: %s" % (name, why))
    return 0


def read_hostile_note(case_dir):
    """(allowed verdicts, check that must fail or None) from a hostile case's note.txt."""
    with open(os.path.join(case_dir, "note.txt")) as f:
        lines = [l.strip() for l in f if l.strip()]
    verdicts = lines[0].split(":", 1)[0].split("|")
    failed = [l.split(":", 1)[1].strip() for l in lines[1:] if l.startswith("failed check:")]
    return verdicts, (failed[0] if failed else None)


def hostile(lab):
    """The hostile submissions, graded as one class: the batch completes and each gets its verdict."""
    from gradelib import gpu as gpu_mod
    if not gpu_mod.detect().available:
        print("no GPU: the hostile submissions' runtime verdicts cannot be checked here")
        return NOT_RUN
    cases_dir = os.path.join(paths.HOSTILE_DIR, lab.name)
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, KIT_GRADER_SALT="hostile-test-salt")
        proc = subprocess.run([sys.executable, GRADE, "batch", cases_dir, "--lab", lab.name, "--out", out,
                               "--timeout", "20", "--seed", "1"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True)
        print(proc.stdout)
        if proc.returncode != 0:
            return fail("the batch did not complete (exit status %d)" % proc.returncode)
        problems = []
        for case in sorted(os.listdir(cases_dir)):
            case_dir = os.path.join(cases_dir, case)
            if not os.path.isdir(case_dir):
                continue
            verdicts, must_fail = read_hostile_note(case_dir)
            with open(os.path.join(out, "records", case + ".json")) as f:
                record = json.load(f)
            checks = {c["name"]: c for c in record.get("report", {}).get("checks", [])}
            if record["verdict"] not in verdicts:
                problems.append("%s: verdict '%s', expected %s" % (case, record["verdict"], " or ".join(verdicts)))
            elif record["score"] >= record["max_score"]:
                problems.append("%s: full marks" % case)
            elif must_fail and checks.get(must_fail, {}).get("status") != chk.FAILED:
                problems.append("%s: '%s' did not fail" % (case, must_fail))
            else:
                print("%-24s %s (%g/%g), as its note says" % (case, record["verdict"], record["score"],
                                                               record["max_score"]))
    return fail("; ".join(problems)) if problems else 0


def manifest():
    """One line per test: name|labels|selftest arguments, separated by '|'."""
    lines = []
    for lab in registry.all_labs().values():
        n = lab.number
        lines.append("%s-solution-static|cpu|static-pass|%s" % (n, lab.name))
        lines.append("%s-starter-static|cpu|starter|%s" % (n, lab.name))
        lines.append("%s-solution-full-marks|gpu|full-marks|%s|--seeds|3" % (n, lab.name))
        lines.append("%s-starter-not-full-marks|gpu|not-full-marks|%s" % (n, lab.name))
        alternative = os.path.join(paths.ALTERNATIVE_DIR, lab.name)
        for case in sorted(os.listdir(alternative)) if os.path.isdir(alternative) else []:
            lines.append("%s-alternative-%s|gpu|alternative|%s|%s" % (n, case, lab.name, case))
        incorrect = os.path.join(paths.INCORRECT_DIR, lab.name)
        for case in sorted(os.listdir(incorrect)) if os.path.isdir(incorrect) else []:
            name, _ = read_note(os.path.join(incorrect, case))
            label = "gpu" if lab.check_named(name).kind == chk.RUNTIME else "cpu"
            lines.append("%s-incorrect-%s|%s|caught|%s|%s" % (n, case, label, lab.name, case))
        if os.path.isdir(os.path.join(paths.HOSTILE_DIR, lab.name)):
            lines.append("%s-hostile-batch|gpu|hostile|%s" % (n, lab.name))
    return "\n".join(lines)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    mode, rest = argv[0], argv[1:]
    if mode == "manifest":
        print(manifest())
        return 0
    lab = registry.resolve(rest[0])
    if mode == "static-pass":
        return static_pass(lab)
    if mode == "starter":
        return starter(lab)
    if mode == "full-marks":
        seeds = int(rest[2]) if len(rest) > 2 and rest[1] == "--seeds" else 1
        return full_marks(lab, int(os.environ.get(SEEDS_ENV, seeds)))
    if mode == "alternative":
        return full_marks(lab, int(os.environ.get(SEEDS_ENV, 1)), os.path.join(paths.ALTERNATIVE_DIR, lab.name, rest[1]))
    if mode == "not-full-marks":
        return not_full_marks(lab)
    if mode == "caught":
        return caught(lab, rest[1])
    if mode == "hostile":
        return hostile(lab)
    sys.exit("selftest.py: unknown mode %r\n%s" % (mode, __doc__))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
