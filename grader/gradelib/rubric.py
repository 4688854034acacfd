"""What a rubric author imports (grader/rubrics/labNN.py): the lab's declaration (Lab, Contract,
Imports, hint), the checks module (chk) and the PTX reader (ptx), the three checks every rubric starts
with, and the helpers the labs' own checks share."""
import re

from . import checks as chk
from . import harness, ptx
from .harness import NOT_RUN, Contract
from .objects import Imports
from .registry import WORK_FILLS_GPU, Lab, hint
from .runs import FAULT, launch_log_problem
from .standard_checks import COMPILES, MEMCHECK, RUNS_CLEANLY, compiles, memcheck_clean, runs_cleanly

__all__ = ["COMPILES", "MEMCHECK", "RUNS_CLEANLY", "FAULT", "NOT_RUN", "WORK_FILLS_GPU", "Contract", "Imports",
           "Lab", "chk", "hint", "ptx", "compiles", "memcheck_clean", "runs_cleanly", "launch_log_problem",
           "launched_grids_problem",
           "CONSTANT_STREAM_NAMES", "side_by_side_stream_problems", "timing_run", "launches_checked_in_order",
           "MIN_EXPLANATION_WORDS", "explained", "barrier_reached", "left_out_for_memory", "left_out_note", "per_case"]


def launched_grids_problem(log, grids):
    """Whether every device launch was checked, from the launch log and the number of child grids the
    kit saw start (every grid of a kit-owned child kernel counts itself): each launch either ran or
    failed, so a launch checked once, right after it, gives checked == grids + failed. None when so."""
    if log.get("checked") == grids + log.get("failed", 0):
        return None
    return ("expected one KIT_CHECK_LAUNCH() right after every device launch: %d child grid(s) ran and %d "
            "launch(es) failed, so %d checks; the launch log counted %s"
            % (grids, log.get("failed", 0), grids + log.get("failed", 0), log.get("checked")))


# What a device launch's stream is called in messages, for the constant streams (ptx.launch_streams).
CONSTANT_STREAM_NAMES = {ptx.NULL_STREAM: "the NULL stream (0)", ptx.TAIL_LAUNCH_STREAM: "cudaStreamTailLaunch",
                         ptx.FIRE_AND_FORGET_STREAM: "cudaStreamFireAndForget",
                         ptx.UNREAD_STREAM: ptx.UNREAD_STREAM_NAME}


def side_by_side_stream_problems(body, function_name):
    """What in a function's PTX (body) keeps its children from running side by side, as a list: a
    device launch into a constant stream other than cudaStreamFireAndForget (the NULL stream runs a
    block's launches one after another, the tail-launch stream a grid's after the grid), or into a
    stream variable where function_name creates no stream. Empty where every launch is into
    fire-and-forget or a stream the code created."""
    streams = ptx.launch_streams(body)
    problems = []
    serializing = sorted({s for s in streams if s is not None and s != ptx.FIRE_AND_FORGET_STREAM})
    if serializing:
        problems.append("a device launch into %s" % " and ".join(CONSTANT_STREAM_NAMES.get(s, "stream %d" % s)
                                                                 for s in serializing))
    if None in streams and ptx.DEVICE_STREAM_CREATE not in ptx.called_functions(body):
        problems.append("a launch into a stream variable, but no cudaStreamCreateWithFlags in %s" % function_name)
    return problems


def timing_run(ctx, name):
    """(run, its document's timing_ms) of the timing case called name (its "timing" parameter), or
    (None, None) when there is none; timing_ms is None where the run left no document or no timing."""
    for run in ctx.runs:
        if run.params.get("timing") == name:
            return run, run.doc.get("timing_ms") if run.doc else None
    return None, None


def launches_checked_in_order(ctx, functions=None, require_launch=False):
    """The outcome of a check that every device launch (of the named functions, or of all the student's)
    is followed on every path by cudaGetLastError(): a check before the launch, or on one branch
    only, checks nothing. require_launch: a function without a launch fails too."""
    problems = []
    for name in functions or [None]:
        launches, unchecked = ctx.launch_order(name)
        where = "%s: " % name if name else ""
        if require_launch and not launches:
            problems.append("%sno device launch in the PTX" % where)
        elif unchecked:
            problems.append("%s%d of %d launch(es) with a path on which no cudaGetLastError() follows"
                            % (where, unchecked, launches))
    if problems:
        return chk.failed("expected: KIT_CHECK_LAUNCH() right after every device launch, on every path (a check "
                          "placed before the launch, or on one branch only, checks nothing)\n"
                          "actual:   %s" % "; ".join(problems))
    return chk.passed()


MIN_EXPLANATION_WORDS = 12


def explained(ctx, what, mechanism=None):
    """The outcome of a check that the student's files explain a fix in a comment starting /* WHY:
    (what: what it must explain), of MIN_EXPLANATION_WORDS words or more, without TODO, and naming
    the mechanism where one is given (a compiled pattern)."""
    comments = re.findall(r"/\*\s*WHY:(.*?)\*/", ctx.student_sources(), re.S)
    if not comments:
        return chk.failed("expected: a comment starting /* WHY: that %s\nactual:   no such comment" % what)
    for text in comments:
        words = re.findall(r"[A-Za-z0-9_']+", text)
        if "TODO" not in text and len(words) >= MIN_EXPLANATION_WORDS and (mechanism is None or mechanism.search(text)):
            return chk.passed()
    return chk.failed("expected: a WHY comment of %d words or more, no TODO, that %s\nactual:   %s"
                      % (MIN_EXPLANATION_WORDS, what, "; ".join(" ".join(t.split())[:80] for t in comments)))


def barrier_reached(ctx, kernel, why):
    """The outcome of a check that every thread of kernel reaches its __syncthreads() (why: why the
    kernel needs the barrier, for the message when it has none)."""
    body = ctx.kernel_ptx(kernel)
    skippable = None if body is None else ptx.barrier_can_be_skipped(body)
    if skippable is False:
        return chk.passed()
    if skippable is None:
        return chk.failed("expected: __syncthreads() in %s: %s\nactual:   no barrier in its PTX" % (kernel, why))
    return chk.failed("expected: every thread of the block reaches the __syncthreads() in %s\n"
                      "actual:   a thread can leave it without reaching the barrier (a return before it, or the "
                      "barrier on one branch only): undefined behaviour, even where it seems to work" % kernel)


def left_out_for_memory(run):
    """Why the harness left this run's case out, or None (the document's NOT_RUN)."""
    return (run.doc or {}).get(harness.NOT_RUN)


def left_out_note(left_out):
    """The lines a check's message gains for [(run, why)] the harness left out."""
    return ("\n%d case(s) not counted (this GPU has too little free memory; not held against you):\n%s"
            % (len(left_out), "\n".join("  %s: not run on this GPU: %s" % (r.label(), why) for r, why in left_out)))


def per_case(ctx, evaluate, limit=5, runs=None, left_out=left_out_for_memory):
    """Run evaluate(run) -> None (good) or a message (bad) over every run (or over runs, a subset);
    an Outcome that passes only if all do, with a fraction of the points for the share that did.
    left_out(run) -> why the harness left the run's case out, or None: those runs are not counted,
    and the message says so."""
    runs = ctx.runs if runs is None else runs
    skipped = [(r, left_out(r)) for r in runs if left_out(r)]
    runs = [r for r in runs if not left_out(r)]
    bad = []
    for run in runs:
        message = evaluate(run)
        if message:
            bad.append("  %s: %s" % (run.label(), message))
    if not bad:
        outcome = chk.passed("%d cases" % len(runs))
    else:
        shown = bad[:limit] + (["  ... and %d more cases" % (len(bad) - limit)] if len(bad) > limit else [])
        outcome = chk.failed("%d of %d cases wrong:\n%s" % (len(bad), len(runs), "\n".join(shown)),
                             fraction=1 - len(bad) / len(runs))
    if skipped:
        outcome.message += left_out_note(skipped)
    return outcome
