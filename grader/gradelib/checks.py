"""Checks: small, named, worth points.

A check has a name, points, a kind (build, static or runtime), an optional parent and a hint that
names the handout section to read. Its function returns an Outcome. A check whose parent did not
pass is skipped with that reason; a runtime check is skipped when there is no GPU, and a check that
needs a tool this machine lacks (compute-sanitizer) says so (not_run_here). A check not run for what the
machine lacks costs no points and is no pass either (grade.py exits 77). Scoring is partial: each check
scores on its own, and a failed check may earn a fraction of its points.
"""
import time
import traceback

from . import failures

PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"

BUILD = "build"
STATIC = "static"
RUNTIME = "runtime"
KINDS = (BUILD, STATIC, RUNTIME)

# What a machine may lack for a check to run (CheckResult.lacking).
GPU = "a usable GPU"


class Outcome:
    """What a check function found. Use passed(), failed() or skipped()."""

    def __init__(self, status, message="", fraction=None, failure=None, lacking=None, dependents_go_on=False):
        self.status = status
        self.message = message
        self.fraction = fraction
        self.failure = failure  # why it failed, as a kind of gradelib.failures (None: points lost)
        self.lacking = lacking  # what this machine lacks to run the check (not_run_here), else None
        # failed, yet the checks that depend on it and time nothing are judged on what it left them
        self.dependents_go_on = dependents_go_on


def passed(message=""):
    return Outcome(PASSED, message, 1.0)


def failed(message, fraction=0.0, failure=None, dependents_go_on=False):
    """fraction: the share of the points still earned (e.g. cases passed / cases run); failure: why, for
    the kit's own checks (a kind of gradelib.failures), which the score sheet reads instead of the message;
    dependents_go_on: the checks that depend on this one and time nothing are evaluated all the same (on
    what it leaves them: "runs cleanly", the runs that were clean), those that time something skipped."""
    return Outcome(FAILED, message, max(0.0, min(1.0, fraction)), failure, dependents_go_on=dependents_go_on)


def skipped(reason):
    return Outcome(SKIPPED, reason, 0.0)


def not_run_here(lacking, reason):
    """The check could not run on this machine, which lacks a tool it needs (lacking: e.g.
    "compute-sanitizer"): skipped with reason, and not held against the submission."""
    return Outcome(SKIPPED, reason, 0.0, lacking=lacking)


class Check:
    """timing: the check compares times measured in the run (a ratio against a kit baseline, a
    timeline), and reads only the cases whose parameters have "timing" set. passes: when the check
    passes, in the student's words: the handout's "How it is graded" table is generated from it
    (tools/quoted_figures.py, block rubric-NN); {NAME} stands for the rubric module's constant NAME."""

    def __init__(self, name, points, kind, func, parent=None, hint="", timing=False, passes=""):
        if kind not in KINDS:
            raise ValueError("check %r: kind must be one of %s" % (name, KINDS))
        self.name = name
        self.points = points
        self.kind = kind
        self.func = func
        self.parent = parent
        self.hint = hint
        self.timing = timing
        self.passes = passes


class CheckResult:
    def __init__(self, check, status, score, message, failure=None, lacking=None, dependents_go_on=False):
        self.check = check
        self.dependents_go_on = dependents_go_on  # the Outcome's
        self.status = status
        self.score = score
        self.message = message
        self.lacking = lacking  # skipped because this machine lacks it (GPU, or a tool's name), else None
        self.failure = failure  # the Outcome's failure kind, if any
        self.seconds = 0.0  # how long it took (run_checks), for the grader's cost reports

    @property
    def no_gpu(self):
        """Skipped because no GPU could run it."""
        return self.lacking == GPU

    @property
    def name(self):
        return self.check.name

    def to_dict(self):
        return {
            "name": self.check.name,
            "kind": self.check.kind,
            "parent": self.check.parent,
            "points": self.check.points,
            "score": self.score,
            "status": self.status,
            "message": self.message,
            "hint": self.check.hint,
            "skipped_no_gpu": self.no_gpu,
            "not_run_lacking": self.lacking,
            "failure": self.failure,
        }


def run_checks(checks, ctx, no_gpu_reason=None):
    """Evaluate checks; return their results in the order given. ctx is passed to every check function.

    no_gpu_reason: when set, runtime checks are skipped with that reason.
    A parent must be declared before its children.
    """
    results = {}
    for check in checks:
        if check.name in results:
            raise ValueError("two checks are named %r" % check.name)
        if check.parent is not None and check.parent not in results:
            raise ValueError("check %r: parent %r must be declared before it" % (check.name, check.parent))
        started = time.monotonic()
        results[check.name] = _result(check, results, ctx, no_gpu_reason)
        results[check.name].seconds = time.monotonic() - started
    return [results[c.name] for c in checks]


def _skip_result(check, results, no_gpu_reason):
    """The result of a check that is not evaluated (its parent did not pass, or no GPU), else None."""
    parent = results.get(check.parent) if check.parent is not None else None
    if parent is not None and parent.lacking:
        return CheckResult(check, SKIPPED, 0, parent.message, lacking=parent.lacking)
    if parent is not None and parent.status != PASSED and not (parent.dependents_go_on and not check.timing):
        return CheckResult(check, SKIPPED, 0, "skipped: '%s' did not pass" % parent.name)
    if check.kind == RUNTIME and no_gpu_reason:
        return CheckResult(check, SKIPPED, 0, no_gpu_reason, lacking=GPU)
    return None


def _result(check, results, ctx, no_gpu_reason):
    skipped_result = _skip_result(check, results, no_gpu_reason)
    return skipped_result if skipped_result is not None else _evaluate(check, ctx)


def _evaluate(check, ctx):
    try:
        outcome = check.func(ctx)
    except failures.MACHINE_PROBLEMS:
        raise  # the machine's, not the submission's: no check's result
    except Exception:  # a grader bug must not cost the other checks
        return CheckResult(check, FAILED, 0,
                           "the grader could not evaluate this check (a bug in the grader):\n"
                           + traceback.format_exc(limit=3), failure=failures.GRADER_BUG)
    if outcome.status == PASSED:
        score = check.points
    elif outcome.status == FAILED:
        score = round(check.points * (outcome.fraction or 0.0), 2)
    else:
        score = 0
    return CheckResult(check, outcome.status, score, outcome.message, failure=outcome.failure,
                       lacking=outcome.lacking, dependents_go_on=outcome.dependents_go_on)


def total(results):
    """(score, max_score) of a list of CheckResults."""
    return (round(sum(r.score for r in results), 2), sum(r.check.points for r in results))


def points_lost(results):
    """Whether any check lost points for what the submission did (a check not run for what this
    machine lacks, a GPU or a tool, lost none)."""
    return any(r.score < r.check.points and not r.lacking for r in results)


def not_run_for_lack_of_gpu(results):
    return any(r.no_gpu for r in results)


def lacked(results):
    """What this machine lacked for some of the checks to run, in the checks' order, each once."""
    lacked = []
    for r in results:
        if r.lacking and r.lacking not in lacked:
            lacked.append(r.lacking)
    return lacked
