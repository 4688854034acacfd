"""Checks: small, named, worth points.

A check has a name, points, a kind (build, static or runtime), an optional parent and a hint that
names the handout section to read. Its function returns an Outcome. A check whose parent did not
pass is skipped with that reason; a runtime check is skipped when there is no GPU. Scoring is
partial: each check scores on its own, and a failed check may earn a fraction of its points.
"""
import time
import traceback

PASSED = "passed"
FAILED = "failed"
SKIPPED = "skipped"

BUILD = "build"
STATIC = "static"
RUNTIME = "runtime"
KINDS = (BUILD, STATIC, RUNTIME)


class Outcome:
    """What a check function found. Use passed(), failed() or skipped()."""

    def __init__(self, status, message="", fraction=None, failure=None):
        self.status = status
        self.message = message
        self.fraction = fraction
        self.failure = failure  # why it failed, as a kind of gradelib.failures (None: points lost)


def passed(message=""):
    return Outcome(PASSED, message, 1.0)


def failed(message, fraction=0.0, failure=None):
    """fraction: the share of the points still earned (e.g. cases passed / cases run); failure: why, for
    the kit's own checks (a kind of gradelib.failures), which the score sheet reads instead of the message."""
    return Outcome(FAILED, message, max(0.0, min(1.0, fraction)), failure)


def skipped(reason):
    return Outcome(SKIPPED, reason, 0.0)


class Check:
    """timing: the check compares times measured in the run (a ratio against a kit baseline, a
    timeline), and reads only the cases whose parameters have "timing" set."""

    def __init__(self, name, points, kind, func, parent=None, hint="", timing=False):
        if kind not in KINDS:
            raise ValueError("check %r: kind must be one of %s" % (name, KINDS))
        self.name = name
        self.points = points
        self.kind = kind
        self.func = func
        self.parent = parent
        self.hint = hint
        self.timing = timing


class CheckResult:
    def __init__(self, check, status, score, message, no_gpu=False, failure=None):
        self.check = check
        self.status = status
        self.score = score
        self.message = message
        self.no_gpu = no_gpu  # skipped because no GPU could run it
        self.failure = failure  # the Outcome's failure kind, if any
        self.seconds = 0.0  # how long it took (run_checks), for the grader's cost reports

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
    if parent is not None and parent.no_gpu:
        return CheckResult(check, SKIPPED, 0, parent.message, no_gpu=True)
    if parent is not None and parent.status != PASSED:
        return CheckResult(check, SKIPPED, 0, "skipped: '%s' did not pass" % parent.name)
    if check.kind == RUNTIME and no_gpu_reason:
        return CheckResult(check, SKIPPED, 0, no_gpu_reason, no_gpu=True)
    return None


def _result(check, results, ctx, no_gpu_reason):
    skipped_result = _skip_result(check, results, no_gpu_reason)
    return skipped_result if skipped_result is not None else _evaluate(check, ctx)


def _evaluate(check, ctx):
    try:
        outcome = check.func(ctx)
    except Exception:  # a grader bug must not cost the other checks
        return CheckResult(check, FAILED, 0,
                           "the grader could not evaluate this check (a bug in the grader):\n"
                           + traceback.format_exc(limit=3))
    if outcome.status == PASSED:
        score = check.points
    elif outcome.status == FAILED:
        score = round(check.points * (outcome.fraction or 0.0), 2)
    else:
        score = 0
    return CheckResult(check, outcome.status, score, outcome.message, failure=outcome.failure)


def total(results):
    """(score, max_score) of a list of CheckResults."""
    return (round(sum(r.score for r in results), 2), sum(r.check.points for r in results))


def points_lost(results):
    """Whether any check lost points for what the submission did (a check not run for want of a GPU
    lost none)."""
    return any(r.score < r.check.points and not r.no_gpu for r in results)


def not_run_for_lack_of_gpu(results):
    return any(r.no_gpu for r in results)
