"""The GPU run scheduler: a submission's cases run in as few harness processes as the GPU gate allows,
the cases that share the GPU first, then those that need it alone, under one hold; a shared case that
hit the time limit or found too little free memory runs again alone; each run diagnosed (a CUDA error,
a crash, a hang, failed device launches, the lab's own problem)."""
from . import exits, failures, gpushare, harness, process
from .context import CaseRun
from .registry import times_something


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


def run_in_turn(ctx, ks, lab_problem, alone, runs, hang, started=None, slots=1, sent_alone=None):
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
                runs[k] = case_run(ctx.cases[k], outcome, lab_problem, alone)
                if timed_out:
                    hang.append(runs[k])
        queue = again + queue
        if shared_hang:  # what is left waits for the run alone, which tells a hang from a busy GPU
            lonely += queue
            queue = []
    return lonely


def case_run(params, outcome, lab_problem, alone):
    diagnosis = diagnose(params, outcome.result, outcome.doc, outcome.why, lab_problem)
    failure, problem = diagnosis if diagnosis else (None, None)
    run = CaseRun(params, outcome.result, outcome.doc, problem, failure)
    run.alone = alone
    return run


def run_all(ctx, lab_problem):
    """Every case's run, in the cases' order: first those that share the GPU, the cases that need more
    memory than one shared run's share apart, each holding the slots it needs (Lab.gpu_bytes), unless a
    shared case before them hit the time limit; then,
    with the GPU held alone once for all of them, those that run alone (timing cases, and a case that
    needs more than every slot) and those a shared run sent there (run_in_turn), each kind in one
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
        lonely += ks if shared_hang else run_in_turn(ctx, ks, lab_problem, False, runs, hang, slots=weight,
                                                       sent_alone=sent_alone)
    lonely = sorted(lonely + [k for k in range(len(ctx.cases)) if alone[k]])
    if lonely:
        started = harness.start_runs(ctx.lab, ctx.program, [[ctx.cases[k] for k in lonely]], ctx.timeout,
                                     ctx.work_dir, ctx.sandboxed)
        try:
            with gpushare.gate().held(True) as waited:
                run_in_turn(ctx, lonely, lab_problem, True, runs, hang, started)
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
