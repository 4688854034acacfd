"""The GPU run scheduler: a submission's cases run in one harness process where they can (one CUDA
context), the cases that share the GPU first, then, once it holds the GPU alone, those that time
something; a shared case that hit the time limit or found too little free memory runs again alone;
each run diagnosed (a CUDA error, a crash, a hang, failed device launches, the lab's own problem)."""
from . import exits, failures, gpushare, harness, process
from .context import CaseRun
from .registry import WORK_FILLS_GPU, times_something


EXIT_CUDA_ERROR = 3   # KIT_EXIT_CUDA_ERROR in common/include/kit_check.h


def output_tail(text, lines=12):
    kept = text.strip().splitlines()[-lines:]
    return "\n".join("      | " + l for l in kept)


_PROCESS_FAILURES = {process.TIMEOUT: failures.TIMEOUT, process.CRASHED: failures.CRASH,
                     process.FLOOD: failures.OUTPUT_FLOOD}


def diagnose(params, result, doc, no_doc_reason=None, lab_problem=None):
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


SKIPPED_AFTER_HANG = "not run: an earlier case hit the time limit"

# A clean run alone whose document shows the host too busy to time it (Lab.host_too_busy) runs again
# alone, in a fresh process, at most this many times. The last run is judged whatever it shows, so a
# submission that keeps its own host busy gains nothing but time; a load that passes (a classmate's
# runaway program ended at its limit, a burst of builds) no longer costs a correct submission points.
BUSY_RUNS_AGAIN = 2


def run_in_turn(ctx, ks, lab_problem, alone, runs, hang, started=None, slots=1, sent_alone=None):
    """Run cases ks (indexes of ctx.cases) into runs: all in one process (kit_harness.h), the GPU
    shared or held alone. A case the harness deferred (it needs other
    process-wide settings) or one the process never reached (an earlier case of it crashed) runs again
    in a fresh process. Returns the shared cases that must run again alone, not counted here: one the
    harness left out for want of free memory (harness.NOT_RUN; other runs held that memory), and one
    that hit the time limit, with every case not yet run after it (other runs had the GPU meanwhile: a
    hang counts only alone). One hang is evidence enough: once a run alone hits the time limit (hang),
    a case not yet run is not run. started: the harness.StartedRun (or None) of the first process, which
    holds all of ks, taken by it (started.pop()). slots: the shared slots each run holds (gpushare);
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
        if process_ready is None and alone:  # a fresh process (after a crash) makes its context before its
            # cases' time starts, as the first does: on a busy host that took up to 11 s (the GPU alone meanwhile)
            process_ready = harness.start_run(ctx.lab, ctx.program, [ctx.cases[k] for k in group],
                                              ctx.time_limit, ctx.work_dir, ctx.sandboxed)
        outcomes = harness.run_cases(ctx.lab, ctx.program, [ctx.cases[k] for k in group], ctx.time_limit,
                                     ctx.work_dir, ctx.sandboxed, alone, process_ready, slots)
        again, shared_hang = take_outcomes(ctx, group, outcomes, [alone] * len(group), lab_problem, runs, hang,
                                           lonely, sent_alone)
        queue = again + queue
        if shared_hang:  # what is left waits for the run alone, which tells a hang from a busy GPU
            lonely += queue
            queue = []
    return lonely


def take_outcomes(ctx, ks, outcomes, alone, lab_problem, runs, hang, lonely, sent_alone):
    """Cases ks's outcomes of one process (alone[i]: whether case ks[i] had the GPU alone) into runs; a
    shared case that hit the time limit or was left out for want of memory into lonely (and sent_alone,
    where given); the first case alone that hit the time limit into hang. Returns (the cases to run again
    in a fresh process: deferred, or not reached; whether a shared case hit the time limit)."""
    again = []
    shared_hang = False
    for k, outcome, was_alone in zip(ks, outcomes, alone):
        timed_out = outcome.state == harness.DONE and outcome.result.verdict == process.TIMEOUT
        if outcome.state != harness.DONE:
            again.append(k)
        elif not was_alone and (timed_out or harness.NOT_RUN in (outcome.doc or {})):
            lonely.append(k)
            shared_hang = shared_hang or timed_out
            if sent_alone is not None:
                sent_alone[k] = outcome
        else:
            runs[k] = case_run(ctx.cases[k], outcome, lab_problem, was_alone)
            if timed_out:
                hang.append(runs[k])
    return again, shared_hang


def case_run(params, outcome, lab_problem, alone):
    diagnosis = diagnose(params, outcome.result, outcome.doc, outcome.why, lab_problem)
    failure, problem = diagnosis if diagnosis else (None, None)
    run = CaseRun(params, outcome.result, outcome.doc, problem, failure)
    run.alone = alone
    return run


def first_processes(lab, slots, alone):
    """The processes a submission's cases run in first (harness.run_segments), each [(alone, slots,
    [case])]: the cases that share the GPU, lightest first, then those that have it alone, in one
    process. A submission with no case to share starts in none: its cases alone run in the process
    run_all starts before its hold, so that making the context is not the hold's. Where the lab's
    harness sizes a memory for its whole process before any case runs (heap_per_process), a process holds
    its largest case's memory from its first case: the lightest shared cases and the cases alone of no
    more memory run in one process, and the rest in a second, each of its shared segments holding the
    slots of that process's largest case."""
    n = len(slots)
    shared = sorted(set(slots[k] for k in range(n) if not alone[k]))
    if not shared:
        return []

    def process_of(weights, lonely):
        most = max([slots[k] for k in lonely] + list(weights))
        held = {w: (most if lab.heap_per_process else w) for w in weights}
        segments = [(False, held[w], [k for k in range(n) if not alone[k] and slots[k] == w]) for w in weights]
        return segments + ([(True, 1, lonely)] if lonely else [])
    if not lab.heap_per_process:
        return [process_of(shared, [k for k in range(n) if alone[k]])]
    light = [k for k in range(n) if alone[k] and slots[k] <= shared[0]]
    heavy = [k for k in range(n) if alone[k] and slots[k] > shared[0]]
    return [process_of(shared[:1], light)] + ([process_of(shared[1:], heavy)] if shared[1:] else [])


def runs_alone(lab, params):
    """Whether a case runs with the GPU held alone: it times something, its work fills the GPU
    (registry.WORK_FILLS_GPU), or it needs more memory than every shared slot of this thread's GPU holds
    (gpushare.slots_for)."""
    return (times_something(params) or bool(params.get(WORK_FILLS_GPU))
            or gpushare.slots_for(lab.gpu_bytes(params)) > gpushare.gate().count)


def run_all(ctx, lab_problem):
    """Every case's run, in the cases' order. First one process, one CUDA context, runs what it can
    (first_processes; two for Lab 04): the cases that share the GPU, each segment holding the slots its
    memory needs (Lab.gpu_bytes), then, with the GPU held alone, the cases that time something (and a
    case that needs more than every slot). What it could not settle runs as before it: a shared case
    deferred or not reached in a fresh shared process of its weight (run_in_turn), unless a shared case
    hit the time limit; then, with the GPU held alone once for all of them, the cases alone not yet run
    and those a shared run sent there, in one process started, and its context made, before the hold
    (run_alone). Last, the clean runs alone whose documents show the host too busy to time them run again
    alone (too_busy, BUSY_RUNS_AGAIN)."""
    runs = [None] * len(ctx.cases)
    hang = []  # the first run alone that hit the time limit
    slots = [gpushare.slots_for(ctx.lab.gpu_bytes(params)) for params in ctx.cases]
    alone = [runs_alone(ctx.lab, params) for params in ctx.cases]
    lonely = []
    sent_alone = {}  # case: the outcome of its shared run, which sent it to the run alone

    def shared_over_time():  # then what is left waits for the run alone, which tells a hang from a busy GPU
        return any(o.result.verdict == process.TIMEOUT for o in sent_alone.values())
    for segments in first_processes(ctx.lab, slots, alone):
        if hang or shared_over_time():
            break  # the rest is settled below
        together = [k for _, _, ks in segments for k in ks]
        outcomes = harness.run_segments(ctx.lab, ctx.program,
                                        [(a, w, [ctx.cases[k] for k in ks]) for a, w, ks in segments],
                                        ctx.time_limit, ctx.work_dir, ctx.sandboxed)
        take_outcomes(ctx, together, outcomes, [alone[k] for k in together], lab_problem, runs, hang, lonely,
                      sent_alone)
    for weight in sorted(set(slots[k] for k in range(len(ctx.cases)) if not alone[k])):
        ks = [k for k in range(len(ctx.cases)) if not alone[k] and slots[k] == weight and runs[k] is None
              and k not in lonely]
        if not ks:
            continue
        lonely += ks if shared_over_time() else run_in_turn(ctx, ks, lab_problem, False, runs, hang,
                                                            slots=weight, sent_alone=sent_alone)
    lonely = sorted(set(lonely) | {k for k in range(len(ctx.cases)) if alone[k] and runs[k] is None})
    if lonely and hang:  # one hang is evidence enough: none of them runs
        run_in_turn(ctx, lonely, lab_problem, True, runs, hang)
    elif lonely:
        run_alone(ctx, lonely, lab_problem, runs, hang)
    earlier = {k: [outcome] for k, outcome in sent_alone.items()}  # case: its runs before the one judged
    busy_before = {}
    for _ in range(BUSY_RUNS_AGAIN):
        busy = [] if hang else too_busy(ctx.lab, runs)
        if not busy:
            break
        for k, why in busy:
            busy_before.setdefault(k, []).append(why)
            earlier.setdefault(k, []).append(runs[k])
        run_alone(ctx, [k for k, _ in busy], lab_problem, runs, hang)
    for k, whys in busy_before.items():
        runs[k].host_busy_before = whys
    for k, before in earlier.items():  # what a case's runs before the one judged cost
        if runs[k].result is not None and runs[k].problem != SKIPPED_AFTER_HANG:
            spent = [r.result.costs or {} for r in before]
            runs[k].result.costs["retried_s"] = round(sum(c.get("wait_s", 0) + c.get("total_s", 0) for c in spent), 4)
    return runs


def run_alone(ctx, ks, lab_problem, runs, hang):
    """Cases ks with the GPU held alone once for all of them, in one process started, and its context
    made, before the hold (harness.start_run)."""
    started = [harness.start_run(ctx.lab, ctx.program, [ctx.cases[k] for k in ks], ctx.time_limit,
                                 ctx.work_dir, ctx.sandboxed)]
    try:
        with gpushare.gate().held(True) as waited:
            run_in_turn(ctx, ks, lab_problem, True, runs, hang, started)
    finally:
        for left in started:  # after a hang, the run not handed its cases
            if left is not None:
                left.discard()
    first = runs[ks[0]].result
    if first.costs:  # the wait for the GPU alone, taken once for these runs
        first.costs["wait_s"] = round(first.costs.get("wait_s", 0) + waited, 4)


def too_busy(lab, runs):
    """[(case, why)] of the clean runs alone whose documents show the host too busy to time them."""
    if lab.host_too_busy is None:
        return []
    found = [(k, run.alone and run.failure is None and lab.host_too_busy(run.params, run.doc))
             for k, run in enumerate(runs) if run is not None]
    return [(k, why) for k, why in found if why]
