"""Lab 08: scheduling work from the GPU without a launch per item (grading rules).

Part A: the harness captures the student's tessellate_balanced into a graph (in the capture mode the
case names), launches it, and compares every offset with the kit's exclusive scan of vertex_count and
every vertex with a double-precision evaluation; the heavy timing case compares it, in the same run, with
the kit's one-block-per-line flat version, the kit's CDP version and a device-to-device copy of the bytes
it must write, each of the student's timed runs checked like the first. Parts B and C: the harness
computes the refinement with its own host-driven loop (kit_refine_round, end_round, a copy back per
round) on three workloads (the case's lines twice, then other lines), then launches each graph the
student built once per workload and compares the rounds end_round counted and every line's count.
"""
import re

from gradelib.bezier_lines import first_wrong_vertex
from gradelib.rubric import (COMPILES, NOT_RUN, RUNS_CLEANLY, Contract, Imports, Lab, chk, compiles,
                             hint, memcheck_clean, per_case, ptx, runs_cleanly, timing_run)

HANDOUT = "handouts/08-device-graphs.md"
MAX_LINES = 100000  # bezier_lines.h
HEAVY_EVERY, SHORT_MAX = 256, 30  # common/src/bezier_lines.cu: the heavy workload
GUARD_VERTICES = 64  # harness.cu: the vertices past the total that the harness watches
CAPTURE_MODES = ("thread-local", "global")  # harness.cu: --capture-mode, the stream capture modes scheduling.h allows
# Conditional graph nodes need CUDA 12.4 or newer here (scheduling.h: KIT_HAS_CONDITIONAL_NODES).
CONDITIONAL_NODES_SINCE = (12, 4)
TIMING_REPEATS = 7
# Same-run ratios on the heavy timing case, both sides measured 10 times each
# (tools/measure_thresholds.py, handouts/figures/data/thresholds.json). The correct side is the slowest
# correct submission, the textbook search per vertex (solutions/08-device-graphs/alternative/), not the
# solution; the wrong side is block per line (solutions/08-device-graphs/incorrect/).
# The bound: the student's time at most this many times a copy of the bytes it writes. A copy's time
# follows the GPU's memory bandwidth and a search per vertex's does not: it took 2.0x the copy on an H100
# and lost this check once in ten gradings at 3.0x on a busy H200. Block per line is rejected by the
# next check; this one keeps 2x above the search per vertex on both GPUs.
MAX_OVER_COPY = 6.0
# The kit's one-block-per-line flat version and its CDP version over the student's time: each halfway
# (geometrically) between the search per vertex's worst run and block per line's best, on the H100.
MIN_FLAT_OVER_BALANCED = 1.15
MIN_CDP_OVER_BALANCED = 2.3
# 32 lines of 2^21 vertices among 8,192: fewer long lines than the GPU has SMs, so one block per line
# leaves most of it idle, and 67 million vertices (538 MB) to write.
TIMING_CASE = {"lines": 8192, "workload": "heavy", "factor": 16, "max": 1 << 21, "seed": 1,
               "tolerance": 100, "tolerance2": 20, "max2": 1024}
# Totals past an int: 34,000 chained lines, nearly all at 65,536 vertices (factor 1,000,000), 2,224,541,289
# vertices for seed 1 (2^31 is 2,147,483,648): 17.8 GB of vertices the student writes and as many in the kit's
# buffer, which an 80 GB GPU holds; the harness checks them on the GPU in well under a second. A vertex index
# or an offset kept in an int goes negative there. (Past 2^32, where an unsigned int would fail too, needs
# 69 GB for the two buffers: more than an 80 GB GPU.)
PAST_INT_CASE = {"lines": 34000, "workload": "chained", "factor": 1000000, "max": 65536, "seed": 1,
                 "tolerance": 2000, "tolerance2": 500, "max2": 13}


def make_cases(rng):
    """Lines of every kind (Lab 04's chained and heavy workloads), one line, the most lines, every line at
    MIN_VERTICES (no round refines anything: the loop's body runs once), counts that cross tiles and blocks
    at every size, a total past 2^31 vertices, a capture in the global mode; for the refinement, two
    workloads per case whose rounds differ (the second capped at max2 vertices a line) and a third on other
    lines (the harness's), and the heavy timing case."""
    def case(lines, max_vertices, workload="chained", tolerance=2000, tolerance2=500, max2=13, seed=1, factor=16):
        return {"lines": lines, "workload": workload, "factor": factor, "max": max_vertices, "seed": seed,
                "tolerance": tolerance, "tolerance2": tolerance2, "max2": max2}
    cases = [
        case(4096, 64),
        case(1, 4, max2=4096, tolerance2=100),           # one line; the first workload refines nothing
        case(1, 4096, "heavy", tolerance=50, max2=4),    # one line past every tile; the second refines nothing
        case(MAX_LINES, 32, tolerance=300),              # the most lines the harness takes
        case(300, 4, max2=4),                            # every line at MIN_VERTICES: one round each time
        case(16384, 65536, "heavy", tolerance=20, tolerance2=1000, max2=65536),
        dict(case(777, 1000, factor=1000, tolerance=1, tolerance2=7000, max2=100), capture_mode="global"),
        dict(PAST_INT_CASE),
    ]
    for _ in range(3):
        cases.append(case(rng.randint(2, 30000), rng.choice((4, 5, 32, 257, 4096)), rng.choice(("chained", "heavy")),
                          rng.randint(20, 20000), rng.randint(20, 20000), rng.choice((4, 7, 13, 100, 4096)),
                          rng.randint(0, 10 ** 9), rng.choice((1, 16, 64, 1000))))
    return cases + [dict(TIMING_CASE, repeats=TIMING_REPEATS, timing="heavy")]


HARNESS = Contract(
    result_keys=["lab", "device", "params", "total_vertices", "bytes_required", "balanced", "while_graph",
                 "device_graph"],
    optional_result_keys=["timing_ms", "kit_cdp_log"],
    case_keys=["timing"])


def most_vertices(params):
    """The most vertices a case's lines can need, all together (max_total_vertices in bezier_lines.cu)."""
    n, top = params["lines"], params["max"]
    if params["workload"] != "heavy":
        return n * top
    long_lines = -(-n // HEAVY_EVERY)
    return long_lines * top + (n - long_lines) * min(SHORT_MAX + 1, top)


def gpu_bytes(params):
    """What a case's run allocates at most: the kit's vertices and the student's (8 bytes each), twice more
    for the copy a timing run makes, and 256 MiB for the rest."""
    copies = 4 if params.get("repeats") else 2
    return copies * 8 * most_vertices(params) + (256 << 20)


# ---- static ----

def toolkit_release(ctx):
    """(major, minor) of the CUDA toolkit that compiled the student's PTX, from its header, or None."""
    for text in ctx.ptx.values():
        found = re.search(r"Cuda compilation tools, release (\d+)\.(\d+)", text)
        if found:
            return int(found.group(1)), int(found.group(2))
    return None


def _no_conditional_nodes(release):
    return chk.not_run_here("CUDA %d.%d or newer" % CONDITIONAL_NODES_SINCE,
                            "not available on this toolkit: Part B's conditional graph nodes need CUDA %d.%d or "
                            "newer, and this build used CUDA %s" % (CONDITIONAL_NODES_SINCE + ("%d.%d" % release,)))


def check_condition_set_on_device(ctx):
    """A WHILE node's condition is set by a kernel (cudaGraphSetConditional, a device function)."""
    release = toolkit_release(ctx)
    if release is not None and release < CONDITIONAL_NODES_SINCE:
        return _no_conditional_nodes(release)
    if "cudaGraphSetConditional" in ctx.ptx_calls():
        return chk.passed()
    return chk.failed("expected: a kernel of the WHILE node's body sets the loop's condition with "
                      "cudaGraphSetConditional(handle, value)\n"
                      "actual:   your PTX never calls cudaGraphSetConditional")


def check_graph_launched_on_device(ctx):
    """Part C relaunches its graph from device code: a device-side cudaGraphLaunch."""
    if "cudaGraphLaunch" in ctx.ptx_calls():
        return chk.passed()
    return chk.failed("expected: a kernel of your device graph relaunches it with cudaGraphLaunch(..., "
                      "cudaStreamGraphTailLaunch)\n"
                      "actual:   your PTX never calls cudaGraphLaunch")


# ---- Part A ----

def _balanced(run):
    return run.doc["balanced"]


def _not_captured(run):
    b = _balanced(run)
    if not b["captured"]:
        mode = b.get("capture_mode", CAPTURE_MODES[0])  # absent from documents recorded before the harness wrote it
        return ("your tessellate_balanced could not be captured into a graph in the %s capture mode (%s): it must "
                "only queue work in the stream it is given: no synchronization, no allocation, no copy to the host"
                % (mode, b["capture_error"]))
    if not b["graph_nodes"]:
        return "your tessellate_balanced queued nothing in the stream it is given: the captured graph is empty"
    return None


def check_captured(ctx):
    return per_case(ctx, _not_captured)


def _part_a_check(ctx, evaluate):
    """per_case with evaluate(run, balanced) over the runs whose call was captured: one that was not ran
    nothing to look at."""
    return per_case(ctx, lambda run: evaluate(run, _balanced(run)) if _balanced(run)["captured"]
                    else "not captured: nothing ran")


def check_offsets(ctx):
    """offsets[0..n_lines] is the exclusive scan of the kit's vertex_count, offsets[n_lines] the total."""
    def evaluate(run, b):
        if not b["offsets_wrong"]:
            return None
        n = run.doc["params"]["lines"]
        where = "offsets[%d] (the total)" % n if b["first_bad_offset"] == n else "offsets[%d]" % b["first_bad_offset"]
        return ("%d of %d offsets wrong; first: %s is %d, expected %d" % (b["offsets_wrong"], n + 1, where,
                                                                          b["offset_got"], b["offset_want"]))
    return _part_a_check(ctx, evaluate)


def check_vertices(ctx):
    """Every vertex of every line at its place in out, and nothing written past the total."""
    def evaluate(run, b):
        v = b["vertices"]
        problems = []
        if v["lines_bad"]:
            detail = first_wrong_vertex(v)
            problems.append("%d of %d lines wrong (%d vertices); first: line %d%s" % (
                v["lines_bad"], run.doc["params"]["lines"], v["vertices_wrong"], v["first_bad_line"],
                ", " + detail if detail else ""))
        if b["past_total"]:
            problems.append("%d of the %d vertices just past the total were written" % (b["past_total"],
                                                                                        GUARD_VERTICES))
        return "; ".join(problems) or None
    return _part_a_check(ctx, evaluate)


def check_each_vertex_once(ctx):
    """One thread per vertex: bezier_point called once for each vertex, never for an index outside its line."""
    def evaluate(run, b):
        calls, total = b["point_calls"], run.doc["total_vertices"]
        if calls["calls"] == total and not calls["out_of_range"]:
            return None
        return ("expected %d bezier_point calls, one per vertex; counted %d (%d for an index outside its line)"
                % (total, calls["calls"], calls["out_of_range"]))
    return _part_a_check(ctx, evaluate)


def _timed(ctx):
    """(run, timing_ms, why its times do not count or None) of the heavy timing case."""
    run, t = timing_run(ctx, "heavy")
    if not t or not t.get("balanced"):
        return run, t, "the heavy timing case reported no timing"
    b = _balanced(run)
    if b["offsets_wrong"] or b["vertices"]["lines_bad"] or b["past_total"]:
        return run, t, ("%s: the timed tessellation's offsets or vertices are wrong (the checks above say how): its "
                        "time does not count" % run.label())
    if t.get("balanced_wrong_runs") is None:
        return run, t, "%s: the timing case did not say whether each timed run was checked" % run.label()
    if t["balanced_wrong_runs"]:
        return run, t, ("%s: %d of your graph's %d timed runs (the warm-ups included) left wrong output (the first: "
                        "%d offsets, vertices or guard vertices): each timed run starts from poisoned output and "
                        "must write it all again, so a run that skipped its work (state kept from an earlier "
                        "launch) does not count" % (run.label(), t["balanced_wrong_runs"], t["balanced_runs"],
                                                    t["balanced_first_wrong"]))
    return run, t, None


def check_near_memory_bound(ctx):
    """A tessellation writes its vertices and offsets: it can go no faster than memory takes them. The
    student's time over a device-to-device copy of as many bytes, in the same run."""
    run, t, why = _timed(ctx)
    if why:
        return chk.failed(why)
    ratio = t["balanced"] / t["copy"]
    message = ("%s: %d MB to write; a copy of as many bytes took %.3f ms, yours %.3f ms: %.2fx the copy (at most "
               "%gx wanted)" % (run.label(), run.doc["bytes_required"] // 1000000, t["copy"], t["balanced"], ratio,
                                  MAX_OVER_COPY))
    return chk.passed(message) if ratio <= MAX_OVER_COPY else chk.failed(message)


def check_beats_flat_and_cdp(ctx):
    """Where a few lines hold most vertices, one block per line leaves the GPU idle and a child grid per
    line pays a launch for each: the kit's versions' medians over the student's, in the same run."""
    run, t, why = _timed(ctx)
    if why:
        return chk.failed(why)
    flat, cdp = t["flat"] / t["balanced"], t["cdp"] / t["balanced"]
    message = ("%s: yours %.3f ms; the kit's flat version (a block per line) %.3f ms: %.2fx yours (at least %gx "
               "wanted); the kit's CDP version (a child grid per line) %.3f ms: %.2fx yours (at least %gx wanted)"
               % (run.label(), t["balanced"], t["flat"], flat, MIN_FLAT_OVER_BALANCED, t["cdp"], cdp,
                  MIN_CDP_OVER_BALANCED))
    ok = flat >= MIN_FLAT_OVER_BALANCED and cdp >= MIN_CDP_OVER_BALANCED
    return chk.passed(message) if ok else chk.failed(message)


# ---- Parts B and C ----

def _rounds_problem(run, key):
    """What went wrong in a loop's two launches on this run, or None."""
    loop = run.doc[key]
    if not loop["built"]:
        return "your builder returned NULL"
    if key == "while_graph" and not loop["conditional_nodes"]:
        return "the graph your build_while_graph returned has no conditional node (nor its child graphs)"
    problems = []
    for k, r in enumerate(loop["runs"]):
        what = []
        if r["rounds"] != r["expected_rounds"]:
            what.append("%d rounds counted by end_round, expected %d" % (r["rounds"], r["expected_rounds"]))
        # the kit's own count of end_round calls (documents recorded before the harness wrote it have none). Not
        # the grids that made them: a graph's kernel node keeps one %gridid at every launch (measured)
        calls = r.get("end_round_calls")
        if calls is not None and calls != r["rounds"]:
            what.append("end_round was called %d times, and the state counts %d rounds: the state's counters are "
                        "the kit's, not yours to write" % (calls, r["rounds"]))
        if r["counts_wrong"]:
            what.append("%d line counts wrong (first: line %d has %d vertices, expected %d)" % (
                r["counts_wrong"], r["first_bad_line"], r["first_got"], r["first_want"]))
        if r["late_calls"]:
            what.append("%d refine_line calls after end_round ended the loop" % r["late_calls"])
        if r["bad_lines"]:
            what.append("%d refine_line calls for a line outside 0 .. %d" % (r["bad_lines"],
                                                                          run.doc["params"]["lines"] - 1))
        if what:
            lines = "other lines, in another array with another counts array, " if r.get("other_lines") else ""
            problems.append("launch %d (%stolerance %g, max %d): %s" % (k + 1, lines, r["tolerance"],
                                                                        r["max_vertices"], "; ".join(what)))
    return "; ".join(problems) or None


def _loop_check(ctx, key):
    return per_case(ctx, lambda run: _rounds_problem(run, key))


def check_while_loop(ctx):
    """The WHILE node's loop, one host launch per workload: as many rounds as the kit's host-driven loop,
    every line's count the same. Not available before CUDA 12.4, never a pass there."""
    unavailable = [run for run in ctx.runs
                   if run.doc and NOT_RUN not in run.doc and not run.doc["while_graph"]["available"]]
    if unavailable:
        runtime = unavailable[0].doc["device"]["runtime_version"]
        return _no_conditional_nodes((runtime // 1000, runtime % 1000 // 10))
    return _loop_check(ctx, "while_graph")


def check_device_loop(ctx):
    """The device graph's loop, one host launch per workload, relaunched from the GPU: the same rounds and
    counts as the kit's loop."""
    return _loop_check(ctx, "device_graph")


def check_instantiated_for_device_launch(ctx):
    """The executable graph build_device_graph returned was instantiated with
    cudaGraphInstantiateFlagDeviceLaunch (cudaGraphExecGetFlags, read by the harness)."""
    def evaluate(run):
        loop = run.doc["device_graph"]
        if not loop["built"]:
            return "your build_device_graph returned NULL"
        if loop["device_launch"]:
            return None
        return ("the executable graph your build_device_graph returned was not instantiated with "
                "cudaGraphInstantiateFlagDeviceLaunch: the device cannot launch it")
    return per_case(ctx, evaluate)


def check_relaunches_checked(ctx):
    """Each device-side relaunch checked with KIT_CHECK_DEVICE, and none failed. In the PTX, the result
    of every cudaGraphLaunch goes to KIT_CHECK_DEVICE on every path (a check of something else counts
    in the log too); at run time, a round of the device graph's loop but the last relaunches it, so a
    run of R rounds checks at least R - 1 calls."""
    unrecorded = sum(ptx.unrecorded_results(body, ptx.DEVICE_GRAPH_LAUNCH, ptx.DEVICE_CALL_RECORDER)
                     for text in ctx.ptx.values() for body in ptx.definitions(text).values())
    if unrecorded:
        return chk.failed("expected: KIT_CHECK_DEVICE(cudaGraphLaunch(...)): the result of every device-side "
                          "relaunch checked, on every path\n"
                          "actual:   %d cudaGraphLaunch call(s) in your PTX with a path on which KIT_CHECK_DEVICE "
                          "does not get its result" % unrecorded)

    def evaluate(run):
        loop = run.doc["device_graph"]
        if not loop["built"]:
            return "your build_device_graph returned NULL"
        for k, r in enumerate(loop["runs"]):
            log = r["launch_log"]
            if log["calls_failed"]:
                return ("launch %d: %d device runtime call(s) failed (first: %s, at line %d of your file)"
                        % (k + 1, log["calls_failed"], log["first_call_error"], log["first_call_error_line"]))
            if log["calls_checked"] < r["expected_rounds"] - 1:
                return ("launch %d: %d rounds need %d relaunches, each checked with KIT_CHECK_DEVICE; %d checked "
                        "call(s) counted" % (k + 1, r["expected_rounds"], r["expected_rounds"] - 1,
                                             log["calls_checked"]))
        return None
    return per_case(ctx, evaluate)


# The memcheck case: 300 lines (a partly filled last block everywhere), up to 64 vertices each.
MEMCHECK_CASE = {"lines": 300, "workload": "chained", "factor": 16, "max": 64, "seed": 5, "tolerance": 2000,
                 "tolerance2": 500, "max2": 13}


# What the student's objects may import beyond what every lab may (gradelib.objects): graphs on the host; the kit's refinement functions and device graph calls.
IMPORTS = Imports(host=("cudaGraphCreate", "cudaGraphDestroy", "cudaGraphAddKernelNode", "cudaGraphAddNode", "cudaGraphAddChildGraphNode",
                       "cudaGraphConditionalHandleCreate", "cudaGraphInstantiate", "cudaGraphInstantiateWithFlags",
                       "cudaGraphExecDestroy", "cudaGraphLaunch", "cudaGraphUpload", "cudaStreamBeginCapture",
                       "cudaStreamEndCapture", "cudaStreamIsCapturing", "cudaStreamGetCaptureInfo"),
                 device=("vertex_count", "bezier_point", "refine_line", "end_round", "cudaGraphLaunch",
                         "cudaGraphSetConditional", "cudaGetCurrentGraphExec"))


LAB = Lab(
    name="08-device-graphs",
    title="Lab 08: work from the GPU without a launch per item",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case=MEMCHECK_CASE,
    memcheck_case=MEMCHECK_CASE,
    gpu_bytes=gpu_bytes,
    time_limit=20,
    imports=IMPORTS,
    starter_must_fail=("device graph relaunched from device code", "condition set in device code"),
    checks=[
        compiles(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                 passes="your file builds with the kit's flags (`-rdc=true`)"),
        runs_cleanly(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                     passes='every case ends in time, with no CUDA error, and writes its result'),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: 300 textbook lines of "
                               'at most 64 vertices (`--lines 300 --max 64 --seed 5`)')),
        chk.Check("condition set in device code", 1, chk.STATIC, check_condition_set_on_device, parent=COMPILES,
                  hint=hint(HANDOUT, "2.4 (a WHILE conditional node)"),
                  passes=('your PTX calls `cudaGraphSetConditional`; with CUDA older than 12.4, not run (not '
                          'available on this toolkit)')),
        chk.Check("device graph relaunched from device code", 1, chk.STATIC, check_graph_launched_on_device,
                  parent=COMPILES, hint=hint(HANDOUT, "2.5 (a device graph that relaunches itself)"),
                  passes='your PTX calls the device-side `cudaGraphLaunch`'),
        chk.Check("tessellation captured into a graph", 1, chk.RUNTIME, check_captured, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.2 (counts, a scan, a thread per vertex)"),
                  passes=('in every case, your `tessellate_balanced` was captured from its stream into a graph that '
                          'could be instantiated')),
        chk.Check("offsets are the scan of the counts", 2, chk.RUNTIME, check_offsets, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.2 (counts, a scan, a thread per vertex)"),
                  passes=('in every case, all n_lines + 1 offsets equal the exclusive scan of `vertex_count`, '
                          '`offsets[n_lines]` being the total')),
        chk.Check("vertices exact", 3, chk.RUNTIME, check_vertices, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.2 (counts, a scan, a thread per vertex)"),
                  passes=('in every case, every vertex of every line matches a double-precision evaluation, at '
                          '`out[offsets[i] + k]`, and none of the 64 vertices just past the total was written')),
        chk.Check("each vertex computed once", 1, chk.RUNTIME, check_each_vertex_once, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.2 (counts, a scan, a thread per vertex)"),
                  passes=('in every case, `bezier_point` was called once per vertex, never for an index outside its '
                          'line')),
        chk.Check("near the memory bound on the heavy case", 2, chk.RUNTIME, check_near_memory_bound,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.3 (what load balancing buys)"), timing=True,
                  passes=("timing case: your median at most {MAX_OVER_COPY}x the copy's, in the same run, every "
                          "timed run's output right")),
        chk.Check("beats the kit's flat and CDP versions", 2, chk.RUNTIME, check_beats_flat_and_cdp,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.3 (what load balancing buys)"), timing=True,
                  passes=("timing case: the kit's flat median at least {MIN_FLAT_OVER_BALANCED}x yours, and its CDP "
                          "median at least {MIN_CDP_OVER_BALANCED}x yours, every timed run's output right")),
        chk.Check("WHILE loop ends on the right round", 3, chk.RUNTIME, check_while_loop, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (a WHILE conditional node)"),
                  passes=('in every case, the graph `build_while_graph` returned holds a conditional node (at its '
                          "top level or in a child graph), and on every launch `end_round` counted the kit's rounds "
                          "(the kit counts its calls apart from the state your code can reach), every line's count "
                          "is the kit's, and no `refine_line` call came after the loop ended; with CUDA older than "
                          '12.4, not run')),
        chk.Check("graph instantiated for device launch", 1, chk.RUNTIME, check_instantiated_for_device_launch,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.5 (a device graph that relaunches itself)"),
                  passes=('in every case, the executable graph `build_device_graph` returned has '
                          '`cudaGraphInstantiateFlagDeviceLaunch` among its flags')),
        chk.Check("device graph loop ends on the right round", 3, chk.RUNTIME, check_device_loop,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.5 (a device graph that relaunches itself)"),
                  passes=("in every case, on every launch of your device graph, the kit's rounds (its own count of "
                          "`end_round` calls), the kit's counts and no late `refine_line` call")),
        chk.Check("every relaunch checked", 1, chk.RUNTIME, check_relaunches_checked, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (a device graph that relaunches itself)"),
                  passes=('in the PTX, the result of every device-side `cudaGraphLaunch` goes to `KIT_CHECK_DEVICE` '
                          'on every path; in every case, on both launches, no device runtime call failed, and a loop'
                          ' of R rounds counted at least R − 1 calls checked with `KIT_CHECK_DEVICE`')),
    ],
)
