"""Grade one submission of one lab: its checks in order (gradelib.standard_checks, then the lab's
own), on the cases drawn for its seed (gradelib.context); and the sandbox's choice for a command."""
import os
import shutil
import sys
import tempfile

from . import build, exits, gpushare, paths, sandbox
from . import checks as chk
from .context import Context
from .registry import times_something
from .runs import SKIPPED_AFTER_HANG
from .standard_checks import RUNS_CLEANLY


def one_check(lab, name):
    """The lab as grade.py --check grades it: the check named, the checks it depends on (its parents,
    and for a runtime check "runs cleanly", which runs the cases), and only the cases they read: a
    timing check the timing cases, another runtime check the others, "runs cleanly" every case.
    Raises KeyError with the lab's check names when it has no such check."""
    check = lab.check_named(name)
    if check is None:
        raise KeyError("%s has no check %r; its checks are: %s"
                       % (lab.name, name, "; ".join(c.name for c in lab.checks)))
    needed = set()
    for start in [check] + ([lab.check_named(RUNS_CLEANLY)] if check.kind == chk.RUNTIME else []):
        while start is not None:
            needed.add(start.name)
            start = lab.check_named(start.parent) if start.parent else None
    checks = [c for c in lab.checks if c.name in needed]
    readers = [c for c in checks if c.kind == chk.RUNTIME and c.name != RUNS_CLEANLY]
    timing = any(c.timing for c in readers) or name == RUNS_CLEANLY
    other = any(not c.timing for c in readers) or name == RUNS_CLEANLY
    return lab.restricted(checks, lambda params: timing if times_something(params) else other,
                          "%s, only '%s'" % (lab.title, name))


class LabReport:
    def __init__(self, lab, submission_dir, seed, cases, results):
        self.lab = lab
        self.submission_dir = submission_dir
        self.seed = seed
        self.cases = cases
        self.results = results
        self.score, self.max_score = chk.total(results)
        self.runs = []  # the harness runs (CaseRun), when there were any
        self.memcheck_costs = []  # each memcheck run's costs (harness.run_under)

    def costs(self):
        """What grading cost, in seconds: the build (the "compiles" check: staging, make), the other
        build and static checks, the runtime checks (their runs included), and each run by phase
        (harness.run_costs), in the cases' order, and each memcheck run's wait for the GPU and time. For the
        grader's cost reports; it decides nothing."""
        by_kind = {chk.BUILD: 0.0, chk.STATIC: 0.0, chk.RUNTIME: 0.0}
        for r in self.results:
            by_kind[r.check.kind] += r.seconds
        return {"build_s": round(by_kind[chk.BUILD], 3), "static_s": round(by_kind[chk.STATIC], 3),
                "runtime_s": round(by_kind[chk.RUNTIME], 3),
                "runs": [dict(r.result.costs, case=k, alone=r.alone) for k, r in enumerate(self.runs)
                         if r.result is not None and r.result.costs and r.problem != SKIPPED_AFTER_HANG],
                "memcheck": list(self.memcheck_costs)}

    @property
    def submission_dir_label(self):
        return paths.relative(self.submission_dir)

    def to_dict(self):
        return {
            "lab": self.lab.name,
            "title": self.lab.title,
            "submission": paths.relative(self.submission_dir),
            "seed": self.seed,
            "cases": self.cases,
            "score": self.score,
            "max_score": self.max_score,
            "checks": [r.to_dict() for r in self.results],
        }


def grade_lab(lab, submission_root, seed, timeout=None, gpu=None, keep_work=False, sandboxed=True):
    """Grade one lab. submission_root holds the lab's files, or a folder named after the lab.
    sandboxed: build and run the submission in gradelib.sandbox (see sandbox_choice). Harness runs
    share the GPU or hold it alone through gradelib.gpushare, with every other grader on the machine."""
    submission_dir = build.find_submission_dir(lab.name, submission_root)
    grade_root = os.path.join(paths.BUILD_ROOT, "grade")
    os.makedirs(grade_root, exist_ok=True)
    work_dir = tempfile.mkdtemp(prefix=lab.name + "-", dir=grade_root)
    try:
        ctx = Context(lab, submission_dir, work_dir, seed, timeout, sandboxed)
        no_gpu_reason = None if (gpu is not None and gpu.available) else (
            gpu.reason if gpu is not None else "no GPU check was made")
        with gpushare.on_gpu(gpu):
            results = chk.run_checks(lab.checks, ctx, no_gpu_reason)
        report = LabReport(lab, submission_dir, seed, ctx.cases, results)
        report.runs = ctx.all_runs
        report.memcheck_costs = ctx.memcheck_costs
        return report
    finally:
        if not keep_work:
            shutil.rmtree(work_dir, ignore_errors=True)


NO_SANDBOX_WARNING = ("SANDBOX OFF (--no-sandbox): each submission's code runs as you, with your files, your "
                      "network and your processes. Grade only code you trust this way.")


def sandbox_choice(no_sandbox, command="grade.py", in_container=False):
    """Whether to grade in gradelib.sandbox, and the line that says so: (sandboxed, line). Raises
    SystemExit(exits.USAGE) with the reason when no sandbox can be made and no_sandbox was not given:
    a machine without one grades only when the instructor says so, or, in_container, in a throwaway
    container of one submission (Gradescope's), which is then the isolation boundary, said."""
    if no_sandbox:
        return False, NO_SANDBOX_WARNING
    ok, why = sandbox.works()
    if ok:
        return True, "sandbox: on (each build and run sees only the kit's headers and its own files; no network)"
    if in_container:
        return False, ("sandbox: OFF: none can be made in this container (%s; Docker's default seccomp profile "
                       "blocks user namespaces): the container, one per submission, is the isolation boundary"
                       % why.splitlines()[0])
    sys.stderr.write(
        "%s: refusing to grade: no sandbox can be made on this machine:\n  %s\n"
        "Without one, a submission's code runs as you: it can read and change your files (other students' "
        "and the grades among them), reach the network and leave processes behind.\n"
        "Grade where user namespaces are allowed (make doctor says whether this machine allows them), or, for "
        "code you trust, add --no-sandbox (make grade NO_SANDBOX=1).\n" % (command, why.replace("\n", "\n  ")))
    raise SystemExit(exits.USAGE)
