"""Grade one submission of one lab: stage, build, static checks, harness runs, lab checks."""
import os
import random
import re
import shutil
import sys
import tempfile

from . import build, exits, failures, gpushare, harness, memcheck, objects, paths, ptx, process, sandbox
from . import checks as chk
from .registry import times_something

DEFAULT_TIMEOUT = 60  # seconds per harness run
EXIT_CUDA_ERROR = 3   # KIT_EXIT_CUDA_ERROR in common/include/kit_check.h


class CaseRun:
    """One harness run: the parameters, what the process did, and its result document."""

    def __init__(self, params, result, doc, problem, failure=None):
        self.params = params
        self.result = result
        self.doc = doc
        self.problem = problem  # None when the run was clean
        self.failure = failure  # why not, as a kind of gradelib.failures
        self.alone = False  # it had the GPU to itself (gpushare)

    def label(self):
        return " ".join("%s=%s" % kv for kv in self.params.items())


def case_rng(seed, lab_name, salt=None):
    """The random source of a lab's test cases: the seed, the lab and the instructor's salt. With a
    salt, the public seed alone does not tell a student which inputs are graded."""
    salt = paths.instructor_salt() if salt is None else salt
    return random.Random("%s:%s" % (seed, lab_name) + (":" + salt if salt else ""))


class Context:
    """What check functions see."""

    def __init__(self, lab, submission_dir, work_dir, seed, timeout, sandboxed=True):
        self.lab = lab
        self.sandboxed = sandboxed  # builds and runs in gradelib.sandbox
        self.submission_dir = submission_dir
        self.work_dir = work_dir
        self.build_dir = os.path.join(work_dir, "build")
        self.seed = seed
        self.timeout = timeout
        self.cases = lab.make_cases(case_rng(seed, lab.name))
        self.ptx = {}
        self.program = None  # the built harness, set by the "compiles" check
        self.runs = []

    def ptx_calls(self):
        """Functions called anywhere in the PTX of the student's .cu files."""
        found = set()
        for text in self.ptx.values():
            found |= ptx.called_functions(text)
        return found

    def ptx_call_count(self, name):
        return sum(ptx.count_calls(text, name) for text in self.ptx.values())

    def launch_order(self, function_name=None):
        """(launches, unchecked) in the student's PTX, of one function or of all: the device launches,
        and those with a path on which no cudaGetLastError() follows them (ptx.unchecked_launches)."""
        launches = unchecked = 0
        for text in self.ptx.values():
            for mangled, body in ptx.definitions(text).items():
                if function_name is None or ptx.names(mangled, function_name):
                    launches += ptx.count_calls(body, ptx.DEVICE_LAUNCH)
                    unchecked += ptx.unchecked_launches(body)
        return launches, unchecked

    def kernel_ptx(self, kernel_name):
        """The PTX of one kernel of the student's files (ptx.kernel_text), or None."""
        for text in self.ptx.values():
            body = ptx.kernel_text(text, kernel_name)
            if body is not None:
                return body
        return None

    def student_sources(self):
        """The text of the student's .cu files as staged for this build, one after another."""
        texts = []
        for name in self.student_cu_files():
            with open(os.path.join(self.work_dir, "src", name)) as f:
                texts.append(f.read())
        return "\n".join(texts)

    def student_code(self):
        """The student's sources as the compiler sees them: no comments, and none of the
        "#ifdef KIT_STARTER" branches the kit's own solution files keep (the build never compiles them)."""
        return compiled_text(self.student_sources())

    def student_cu_files(self):
        return [f for f in build.lab_vars(self.lab.name)["student_files"] if f.endswith(".cu")]


def compiled_text(source):
    """source without comments and without "#ifdef KIT_STARTER" branches."""
    source = re.sub(r"^[ \t]*#ifdef[ \t]+KIT_STARTER\b.*?^[ \t]*#(?:else|endif)\b", "", source, flags=re.S | re.M)
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", source, flags=re.S)


COMPILES = "compiles"
RUNS_CLEANLY = "runs cleanly"


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


def compiles(points, hint, passes=""):
    """The check every rubric starts with: the lab's files staged next to the kit's and built."""
    return chk.Check(COMPILES, points, chk.BUILD, _compiles, hint=hint, passes=passes)


def runs_cleanly(points, hint, problem=None, passes=""):
    """The check every rubric has second: every case's harness run exits normally with a valid result
    document and no failed device launch. problem: optional (params, doc) -> str or None, the lab's
    own reason a run is not clean (e.g. the kit's reference disagreeing with the formula)."""
    return chk.Check(RUNS_CLEANLY, points, chk.RUNTIME, lambda ctx: _runs_cleanly(ctx, problem),
                     parent=COMPILES, hint=hint, passes=passes)


MEMCHECK = "no memory errors (memcheck)"
# Seconds the memcheck run may take, at least: compute-sanitizer starts slower than the harness alone
# and each kernel runs instrumented (measured: RESULTS.md, "compute-sanitizer's memcheck").
MEMCHECK_TIME_LIMIT = 60
OUT_OF_MEMORY = "cudaErrorMemoryAllocation"  # a CUDA call's error in memcheck's report


def memcheck_clean(points, hint, passes=""):
    """The check every rubric has third: the student's build runs the lab's memcheck case (Lab.memcheck_case)
    under compute-sanitizer's memcheck, the device heap checked too, and memcheck reports no error: no
    access out of bounds or misaligned, no bad free, no failed CUDA call. Not run where compute-sanitizer
    is missing (not held against the submission). It runs after a run that crashed or stopped on a CUDA
    error too, where it tells the student most (a read out of bounds that faulted, or did not, by where
    the memory lay), but not after one that hit the time limit or flooded its output."""
    return chk.Check(MEMCHECK, points, chk.RUNTIME, _memcheck_clean, parent=COMPILES, hint=hint, passes=passes)


def _memcheck_clean(ctx):
    stuck = [r for r in ctx.runs if r.failure in (failures.TIMEOUT, failures.OUTPUT_FLOOD)]
    if stuck:
        return chk.skipped("skipped: %s %s (runs cleanly)" % (stuck[0].label(), failures.VERDICTS[stuck[0].failure]))
    sanitizer = memcheck.find()
    if sanitizer is None:
        return chk.not_run_here(memcheck.TOOL, "not run: no %s here (it comes with the CUDA toolkit, in its bin/ "
                                               "folder beside nvcc)" % memcheck.TOOL)
    params = ctx.lab.memcheck_case
    limit = max(ctx.timeout, MEMCHECK_TIME_LIMIT)
    def run(alone):
        result = harness.run_under(memcheck.command(sanitizer), memcheck.tool_folder(sanitizer), ctx.lab, ctx.program,
                                   params, limit, ctx.work_dir, ctx.sandboxed,
                                   gpushare.slots_for(ctx.lab.gpu_bytes(params)), alone=alone)
        return result, memcheck.read(result.output, ctx.work_dir)
    result, found = run(False)
    if found.errors and any(OUT_OF_MEMORY in b for b in found.first):
        # Beside other runs, the GPU's memory may be theirs (measured: a correct Lab 05's cudaFree
        # failed so under memcheck on an H200 with 15 other gradings): the run alone decides.
        result, found = run(True)
    how = "make sanitize LAB=%s ARGS=\"%s\"" % (ctx.lab.number, " ".join(ctx.lab.harness_args(params)))
    if result.verdict != process.OK and result.verdict != process.EXITED or found.errors is None:
        return chk.failed("memcheck did not finish (%s): the harness under it %s\n%s"
                          % (how, result.describe(limit), _output_tail(result.output)))
    if found.errors == 0 and result.returncode != memcheck.ERRORS_EXIT:
        return chk.passed("memcheck: no errors (%s)" % how)
    shown = found.first[:3]
    return chk.failed("memcheck found %d error(s) in this run (%s)%s:\n%s"
                      % (found.errors, how, ", the first %d" % len(shown) if found.errors > len(shown) else "",
                         "\n".join(_indent_block(b) for b in shown) or _output_tail(result.output)))


def _indent_block(text):
    return "\n".join("      " + l for l in text.splitlines())


def _compiles(ctx):
    src_dir, problems = build.stage(ctx.lab.name, ctx.submission_dir, ctx.work_dir)
    if problems:
        kinds = [kind for kind, _ in problems]
        return chk.failed("%s (looked in %s)" % ("; ".join(line for _, line in problems),
                                                 paths.relative(ctx.submission_dir)),
                          failure=failures.MISSING_FILE if failures.MISSING_FILE in kinds else kinds[0])
    made = build.cached_make(ctx.lab.name, src_dir, ctx.build_dir, ["all", "ptx"], build.cuda_arch(), ctx.sandboxed)
    if ctx.sandboxed:
        sandbox.check_made(made, "the build")
    refused = _refused_code(ctx, src_dir, made.ok)
    if refused:
        return refused
    if not made.ok:
        return chk.failed("the build %s with the kit's flags (nvcc -rdc=true, sm_%s):\n%s"
                          % ("failed" if made.verdict == process.EXITED else made.describe(build.BUILD_TIMEOUT),
                             build.cuda_arch(),
                             build.compiler_errors(made.output, source_dir=src_dir).replace(src_dir + os.sep, "")),
                          failure=failures.COMPILE_ERROR)
    for name in ctx.student_cu_files():
        with open(os.path.join(ctx.build_dir, name[:-3] + ".ptx")) as f:
            ctx.ptx[name] = f.read()
    ctx.program = os.path.join(ctx.build_dir, build.lab_vars(ctx.lab.name)["program"])
    return chk.passed()


# "off" turns the check of the student's objects off: only for the kit's test of the sandbox, which needs
# the attacks to run (tools/gpu-suite.sh sandbox).
OBJECT_CHECK_ENV = "KIT_OBJECT_CHECK"


def _refused_code(ctx, src_dir, built):
    """The failed outcome of "compiles" when the student's objects import, define or run what the lab does
    not allow (gradelib.objects), else None. Read before the build's own verdict: an import of kit state
    also fails the link, and the refusal says why in one line. Objects a failed build did not write are
    the compiler's verdict to give."""
    if os.environ.get(OBJECT_CHECK_ENV, "").lower() == "off":
        return None
    objects_built = all(os.path.isfile(os.path.join(ctx.build_dir, name[:-3] + ".o")) for name in ctx.student_cu_files())
    if not built and not objects_built:
        return None
    found = objects.refusals(ctx.lab.imports, ctx.build_dir, ctx.student_cu_files(), src_dir)
    if not found:
        return None
    return chk.failed("refused before anything ran: your code may call what %s's README lists under \"What your "
                      "code may call\", and run nothing before main\n%s"
                      % (ctx.lab.name, "\n".join("  " + line for line in found)), failure=failures.REFUSED_CODE)


def _output_tail(text, lines=12):
    kept = text.strip().splitlines()[-lines:]
    return "\n".join("      | " + l for l in kept)


_PROCESS_FAILURES = {process.TIMEOUT: failures.TIMEOUT, process.CRASHED: failures.CRASH,
                     process.FLOOD: failures.OUTPUT_FLOOD}


def _diagnose(params, result, doc, no_doc_reason=None, lab_problem=None):
    """Why a run is not clean, as (failure kind, message), or None."""
    if result.verdict == process.EXITED and result.returncode == EXIT_CUDA_ERROR:
        errors = [l for l in result.output.splitlines() if l.startswith("CUDA error")]
        return failures.CUDA_ERROR, "CUDA error: %s" % (errors[-1] if errors else "see the output")
    if result.verdict == process.EXITED and result.returncode == exits.USAGE:  # KIT_EXIT_USAGE
        return failures.EXIT_STATUS, "the harness rejected its parameters (a kit problem, please report it)"
    if not result.ok:
        return _PROCESS_FAILURES.get(result.verdict, failures.EXIT_STATUS), "the harness " + result.describe()
    if doc is None:
        return failures.NO_RESULT, "the harness finished without a valid result: %s" % (
            no_doc_reason or "none was written")
    problem = None if params.get(FAULT) else launch_log_problem(doc.get("launch_log") or {})
    if problem:
        return failures.FAILED_LAUNCHES, problem
    problem = lab_problem(params, doc) if lab_problem is not None else None
    return (failures.LAB_PROBLEM, problem) if problem else None


def launch_log_problem(log):
    """What a harness's launch log (kit_json_launch_log) says went wrong on the device, or None."""
    if log.get("failed"):
        return ("%d device-side launch(es) failed (first: %s, at line %s of your file): "
                "those child grids never ran" % (log["failed"], log.get("first_error"), log.get("first_error_line")))
    if log.get("calls_failed"):
        return ("%d device runtime call(s) failed (first: %s, at line %s of your file)"
                % (log["calls_failed"], log.get("first_call_error"), log.get("first_call_error_line")))
    return None


# A case whose parameters set this key makes device launches fail on purpose (a pending-launch pool
# too small for its launches): its failed launches are what its checks look at, not a run problem.
FAULT = "fault"


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


SKIPPED_AFTER_HANG = "not run: an earlier case hit the time limit"


def _run_in_turn(ctx, ks, lab_problem, alone, runs, hang, started=None, slots=1, sent_alone=None):
    """Run cases ks (indexes of ctx.cases) into runs: all in one process (kit_harness.h), the GPU
    shared or held alone. A case the harness deferred (it needs other
    process-wide settings) or one the process never reached (an earlier case of it crashed) runs again
    in a fresh process. Returns the shared cases that must run again alone, not counted here: one the
    harness left out for want of free memory (harness.NOT_RUN; other runs held that memory), and one
    that hit the time limit, with every case not yet run after it (other runs had the GPU meanwhile: a
    hang counts only alone). One hang is evidence enough: once a run alone hits the time limit (hang),
    a case not yet run is not run. started: [harness.StartedRun or None] of the first process, which
    holds all of ks, taken (popped) by it. slots: the shared slots each run holds (gpushare);
    sent_alone: a dict that gains {case: its shared outcome} for each case run shared and sent alone."""
    queue = list(ks)
    lonely = []
    while queue:
        if hang:
            for k in queue:
                runs[k] = CaseRun(ctx.cases[k], hang[0].result, None, SKIPPED_AFTER_HANG, failures.TIMEOUT)
            break
        group, queue = queue, []
        process_ready = started.pop() if started else None
        outcomes = harness.run_cases(ctx.lab, ctx.program, [ctx.cases[k] for k in group], ctx.timeout,
                                     ctx.work_dir, ctx.sandboxed, alone, process_ready, slots)
        again = []
        shared_hang = False
        for k, outcome in zip(group, outcomes):
            timed_out = outcome.state == harness.DONE and outcome.result.verdict == process.TIMEOUT
            if outcome.state != harness.DONE:
                again.append(k)
            elif not alone and (timed_out or harness.NOT_RUN in (outcome.doc or {})):
                lonely.append(k)
                shared_hang = shared_hang or timed_out
                if sent_alone is not None:
                    sent_alone[k] = outcome
            else:
                runs[k] = _case_run(ctx.cases[k], outcome, lab_problem, alone)
                if timed_out:
                    hang.append(runs[k])
        queue = again + queue
        if shared_hang:  # what is left waits for the run alone, which tells a hang from a busy GPU
            lonely += queue
            queue = []
    return lonely


def _case_run(params, outcome, lab_problem, alone):
    diagnosis = _diagnose(params, outcome.result, outcome.doc, outcome.why, lab_problem)
    failure, problem = diagnosis if diagnosis else (None, None)
    run = CaseRun(params, outcome.result, outcome.doc, problem, failure)
    run.alone = alone
    return run


def _run_all(ctx, lab_problem):
    """Every case's run, in the cases' order: first those that share the GPU, the cases that need more
    memory than one shared run's share apart, each holding the slots it needs (Lab.gpu_bytes), unless a
    shared case before them hit the time limit; then,
    with the GPU held alone once for all of them, those that run alone (timing cases, and a case that
    needs more than every slot) and those a shared run sent there (_run_in_turn), each kind in one
    process. The processes of the runs alone are started before the hold, and make
    their CUDA contexts while the GPU is shared (harness.start_runs): the hold is spent on the cases."""
    runs = [None] * len(ctx.cases)
    hang = []  # the first run alone that hit the time limit
    slots = [gpushare.slots_for(ctx.lab.gpu_bytes(params)) for params in ctx.cases]
    alone = [times_something(params) or slots[k] > gpushare.gate().count for k, params in enumerate(ctx.cases)]
    lonely = []
    sent_alone = {}  # case: the outcome of its shared run, which sent it to the run alone
    for weight in sorted(set(slots[k] for k in range(len(ctx.cases)) if not alone[k])):
        ks = [k for k in range(len(ctx.cases)) if not alone[k] and slots[k] == weight]
        # after a shared case hit the time limit, the rest waits for the run alone too
        shared_hang = any(o.result.verdict == process.TIMEOUT for o in sent_alone.values())
        lonely += ks if shared_hang else _run_in_turn(ctx, ks, lab_problem, False, runs, hang, slots=weight,
                                                       sent_alone=sent_alone)
    lonely = sorted(lonely + [k for k in range(len(ctx.cases)) if alone[k]])
    if lonely:
        started = harness.start_runs(ctx.lab, ctx.program, [[ctx.cases[k] for k in lonely]], ctx.timeout,
                                     ctx.work_dir, ctx.sandboxed)
        try:
            with gpushare.gate().held(True) as waited:
                _run_in_turn(ctx, lonely, lab_problem, True, runs, hang, started)
        finally:
            for left in started:  # after a hang, the run not handed its cases
                if left is not None:
                    left.discard()
        first = runs[lonely[0]].result
        if first.costs:  # the wait for the GPU alone, taken once for these runs
            first.costs["wait_s"] = round(first.costs.get("wait_s", 0) + waited, 4)
    for k, outcome in sent_alone.items():  # what the shared run of a case run again alone cost
        spent = outcome.result.costs or {}
        if runs[k].result is not None and runs[k].problem != SKIPPED_AFTER_HANG:
            runs[k].result.costs["retried_s"] = round(spent.get("wait_s", 0) + spent.get("total_s", 0), 4)
    return runs


def _runs_cleanly(ctx, lab_problem=None):
    ctx.runs = _run_all(ctx, lab_problem)
    bad = [r for r in ctx.runs if r.problem]
    if not bad:
        return chk.passed("%d runs" % len(ctx.runs))
    lines = []
    shown_output = set()
    for r in bad[:4]:
        lines.append("  %s: %s" % (r.label(), r.problem))
        if r.result.output.strip() and id(r.result) not in shown_output:
            shown_output.add(id(r.result))
            lines.append(_output_tail(r.result.output))
    if len(bad) > 4:
        lines.append("  ... and %d more runs" % (len(bad) - 4))
    first = next(kind for kind in failures.RUN_ORDER if any(r.failure == kind for r in bad))
    return chk.failed("%d of %d runs were not clean:\n%s" % (len(bad), len(ctx.runs), "\n".join(lines)),
                      fraction=1 - len(bad) / len(ctx.runs), failure=first)


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


class LabReport:
    def __init__(self, lab, submission_dir, seed, cases, results):
        self.lab = lab
        self.submission_dir = submission_dir
        self.seed = seed
        self.cases = cases
        self.results = results
        self.score, self.max_score = chk.total(results)
        self.runs = []  # the harness runs (CaseRun), when there were any

    def costs(self):
        """What grading cost, in seconds: the build (the "compiles" check: staging, make), the other
        build and static checks, the runtime checks (their runs included), and each run by phase
        (harness.run_costs), in the cases' order. For the grader's cost reports; it decides nothing."""
        by_kind = {chk.BUILD: 0.0, chk.STATIC: 0.0, chk.RUNTIME: 0.0}
        for r in self.results:
            by_kind[r.check.kind] += r.seconds
        return {"build_s": round(by_kind[chk.BUILD], 3), "static_s": round(by_kind[chk.STATIC], 3),
                "runtime_s": round(by_kind[chk.RUNTIME], 3),
                "runs": [dict(r.result.costs, case=k, alone=r.alone) for k, r in enumerate(self.runs)
                         if r.result is not None and r.result.costs and r.problem != SKIPPED_AFTER_HANG]}

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


def grade_lab(lab, submission_root, seed, timeout=DEFAULT_TIMEOUT, gpu=None, keep_work=False, sandboxed=True):
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
        report.runs = ctx.runs
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
