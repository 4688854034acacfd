"""Lab 04: Bezier tessellation with streams and pool limits (grading rules).

The harness generates the lines from a seed the grader draws, checks every vertex of the flat and
the dynamic version against a double-precision reference, counts the calls of the kit's
bezier_point, reports the limits prepare_cdp left in effect and the heap the worst case needs, and
what was allocated and freed. Two timing cases compare, in the same run, the student's version
against kit-owned versions: the student's children against the kit's NULL-stream version (a block's
children must not serialize), and CDP against flat on a heavy-tailed workload.
"""
from gradelib.bezier_lines import first_wrong_vertex
from gradelib.rubric import (COMPILES, RUNS_CLEANLY, WORK_FILLS_GPU, Contract, Imports, Lab, chk, compiles,
                             hint, launch_log_problem, launched_grids_problem, launches_checked_in_order,
                             memcheck_clean, per_case, ptx, runs_cleanly, side_by_side_stream_problems,
                             timing_run)

HANDOUT = "handouts/04-bezier-streams.md"
DEFAULT_PENDING_LIMIT = 2048
HARNESS_MAX_LINES = 100000  # MAX_LINES in common/include/bezier_lines.h
HARNESS_MAX_VERTICES = 1 << 22  # MAX_MAX_VERTICES in common/include/bezier_lines.h
HARNESS_MAX_FACTOR = 1000000  # --factor's largest value (harness.cu)
KIT_ALLOC_OVERHEAD = 1024   # bytes of kit header and fence per heap block (kit_bezier.h)
TIMING_REPEATS = 7
# Thresholds on ratios of medians measured in the same run. Both sides, 10 runs each, are in
# handouts/figures/data/thresholds.json (tools/measure_thresholds.py; RESULTS.md shows them): on an
# H100 the solution's and the fire-and-forget alternative's worst streams-case runs are 1.9 and 2.4
# times MIN_NULL_OVER_STUDENT, the NULL-stream and one-stream-per-block submissions' best runs 1.4 and
# 1.3 times below it (less than the 2x headroom the kit aims for on each side: this case's spread
# allows no threshold with it); the solution's worst heavy-case run is more than three times
# MIN_FLAT_OVER_CDP_HEAVY.
MIN_NULL_OVER_STUDENT = 1.5    # streams case: kit NULL-stream version time / the student's
MIN_FLAT_OVER_CDP_HEAVY = 4.0  # heavy case: kit flat version time / the student's CDP
TIMING_CASES = {
    # many children per parent block, each with real work: the NULL stream serializes them
    "streams": {"lines": 256, "workload": "heavy", "factor": 16, "max": 1 << 20},
    # one line in 256 carries 4M vertices: a flat block walks it alone
    "heavy": {"lines": 256, "workload": "heavy", "factor": 16, "max": 1 << 22},
    # the textbook's short lines: reported, never thresholded (flat wins by far)
    "short": {"lines": 1024, "workload": "chained", "factor": 16, "max": 32},
}


# The work compute_vertices takes over from the parent (tools/mutants.py adds it back to the parent,
# after its launch check, as a mutant that "each vertex computed once" must reject).
PARENT_WORK = {"tessellate_cdp": "for (int k = 0; k < n; k++) line->vertices[k] = bezier_point(line, k, n);"}


FEEDBACK_FIGURE_LINES = 60


def make_cases(rng):
    """The textbook's sizes, more lines than the default pending-launch limit, a case whose worst case
    outgrows the default 8 MiB heap, a heavy-tailed case, seeded random sizes, two cases at the edges
    of prepare_cdp's arithmetic, one line at the largest count and factor, and the timing cases."""
    def case(lines, workload="chained", factor=16, max_vertices=32, repeats=0):
        return {"lines": lines, "workload": workload, "factor": factor, "max": max_vertices,
                "seed": rng.randint(1, 10 ** 9), "repeats": repeats}
    cases = [case(1000), case(12000), case(2048, factor=4096, max_vertices=8192),
             case(300, "heavy", max_vertices=1 << 16)]
    # The textbook case also puts its first lines' vertices in the document: the picture of the run in
    # the student's feedback page (gradelib/feedback.py) is drawn from them.
    cases[0]["figure_lines"] = FEEDBACK_FIGURE_LINES
    for _ in range(2):
        cases.append(case(rng.randint(1, 5000), factor=rng.choice((16, 256, 1024)),
                          max_vertices=rng.choice((32, 64, 1024))))
    timing = [dict(cfg, seed=rng.randint(1, 10 ** 9), repeats=TIMING_REPEATS, timing=name)
              for name, cfg in TIMING_CASES.items()]
    # Drawn after the others, so that a seed keeps the cases it had before these were added.
    edges = [
        # as many lines as the harness takes, each short: the kit's KIT_ALLOC_OVERHEAD per block
        # outweighs the vertices 16 to 32 times, and a child per line may be pending at once; its
        # 100,000 child grids fill the GPU, so it has the GPU alone (registry.WORK_FILLS_GPU)
        dict(case(HARNESS_MAX_LINES, max_vertices=rng.choice((4, 8))), **{WORK_FILLS_GPU: True}),
        # a worst case just past 4 GiB (2^32 bytes of vertices and 1 MiB of overhead): a heap size
        # computed in 32 bits wraps around to a few MiB
        case(1024, max_vertices=1 << 19),
    ]
    # Drawn last, likewise. One line at the largest count the harness takes (--max 2^22, its largest
    # --factor): a child grid of 2^17 blocks, a 32 MiB block of the heap, a parent block of 64 threads
    # with one line, the flat version's one block walking 4M vertices.
    edges.append(case(1, factor=HARNESS_MAX_FACTOR, max_vertices=HARNESS_MAX_VERTICES))
    return cases + edges + timing



# The harness's contract (common/harness/04-bezier-streams/harness.cu). "timing" names a timing case
# for the checks. A case too large for the GPU's memory gets a document with "not_run" and little else.
# The cases share a process: its plan step calls the student's prepare_cdp() for every case before
# any kernel runs (the runtime refuses a new heap size once a kernel that uses malloc has run), and the
# cases run at the largest heap it asked for; a case whose heap has less than the reference's margin
# runs at exactly that heap, in a process where it is the largest (the harness defers it there).
HARNESS = Contract(
    result_keys=["lab", "device", "params", "flat_ran", "flat", "cdp", "cdp_log", "launch_log", "heap",
                 "heap_bytes", "heap_need_bytes", "exact_bytes", "worst_case_bytes", "pending_launch_limit",
                 "total_vertices", "max_total_vertices", "flat_point_calls", "cdp_point_calls"],
    # cdp_grids: the child grids the kit saw compute lines (recordings before it lack it);
    # timed_runs_checked: every run of the student's timing loop checked (timing runs only).
    optional_result_keys=["timing_ms", "timed_runs_checked", "figure", "cdp_grids"],
    case_keys=["timing", WORK_FILLS_GPU])


def check_launch_and_streams(ctx):
    """What lets a block's children run concurrently, as far as the PTX shows it: every device launch of
    tessellate_cdp goes into a stream the code created (a register, with cudaStreamCreateWithFlags in
    the kernel) or into cudaStreamFireAndForget. The NULL stream runs a block's launches one after
    another, and a grid's tail launches all run one after another in its one tail-launch stream.
    Whether the children really overlap (one stream shared by a whole block passes here) is what the
    timing check "a block's children run concurrently" measures. Half the point for a launch into a
    serializing stream; none without a launch."""
    body = ctx.kernel_ptx("tessellate_cdp") or ""
    calls = ptx.called_functions(body)
    problems = [] if ptx.DEVICE_LAUNCH in calls else ["no device-side launch"]
    problems += side_by_side_stream_problems(body, "tessellate_cdp")
    if not problems:
        return chk.passed()
    launched = ptx.DEVICE_LAUNCH in calls
    return chk.failed("expected: tessellate_cdp launches each child into a stream its thread creates "
                      "(cudaStreamCreateWithFlags) or into cudaStreamFireAndForget, so that a block's children "
                      "can run side by side\n"
                      "actual:   %s in the PTX of tessellate_cdp" % "; ".join(problems),
                      fraction=0.5 if launched else 0.0)


def check_launch_checked_after(ctx):
    return launches_checked_in_order(ctx, ("tessellate_cdp",), require_launch=True)


def check_pending_limit_covers_lines(ctx):
    """A child per line may be pending at once: the limit in effect after prepare_cdp must count every line."""
    def evaluate(run):
        limit, lines = run.doc["pending_launch_limit"], run.params["lines"]
        if limit < lines:
            return ("expected a pending-launch limit of at least %d (a child per line may be pending at once); "
                    "after prepare_cdp it was %d%s" % (lines, limit, " (the default: never raised)"
                                                       if limit == DEFAULT_PENDING_LIMIT else ""))
        return None
    return per_case(ctx, evaluate)


def check_heap_covers_worst_case(ctx):
    """The heap in effect after prepare_cdp must hold the worst case the harness announced: every
    vertex of max_total_vertices and a KIT_ALLOC_OVERHEAD per line (the allocator's own margin on top)."""
    def evaluate(run):
        doc = run.doc
        have, need = doc["heap_bytes"], doc["heap_need_bytes"]
        if have < need:
            return ("expected a device heap of at least %d bytes (%.1f MiB: %d vertices x 8 bytes + %d lines x "
                    "KIT_ALLOC_OVERHEAD %d), before any margin; after prepare_cdp it was %d bytes (%.1f MiB)"
                    % (need, need / 1048576.0, doc["max_total_vertices"], run.params["lines"], KIT_ALLOC_OVERHEAD,
                       have, have / 1048576.0))
        return None
    return per_case(ctx, evaluate)


def _lines_message(result, n):
    parts = []
    for key, what in (("missing", "without vertices"), ("count_wrong", "with a wrong count"),
                      ("overruns", "written past the end")):
        if result.get(key):
            parts.append("%d %s" % (result[key], what))
    if result.get("vertices_wrong"):
        parts.append("%d vertices wrong" % result["vertices_wrong"])
    first = ""
    if result.get("first_bad_line", -1) >= 0:
        first = "; first: line %d (%s)" % (result["first_bad_line"], result.get("first_bad_what"))
        vertex = first_wrong_vertex(result)
        if vertex:
            first += ", " + vertex
    return "%d of %d lines wrong: %s%s" % (result["lines_bad"], n, ", ".join(parts), first)


def check_flat(ctx):
    """On every case whose worst-case arrays fit in 1 GiB (the harness skips the others)."""
    def evaluate(run):
        flat = run.doc["flat"]
        return _lines_message(flat, run.params["lines"]) if flat["lines_bad"] else None
    return per_case(ctx, evaluate)


def check_dynamic(ctx):
    def evaluate(run):
        cdp = run.doc["cdp"]
        if cdp["missing"] or cdp["count_wrong"] or cdp["vertices_wrong"]:
            return _lines_message(cdp, run.params["lines"])
        return None
    return per_case(ctx, evaluate)


def check_no_line_lost(ctx):
    """Cases with more lines than the default pending-launch limit, or a worst case beyond the default heap."""
    def evaluate(run):
        doc = run.doc
        problems = [p for p in (launch_log_problem(doc["cdp_log"]),) if p]
        if doc["heap"]["alloc_failures"]:
            problems.append("%d device-heap allocation(s) failed (heap %.1f MiB)"
                            % (doc["heap"]["alloc_failures"], doc["heap_bytes"] / 1048576.0))
        if doc["cdp"]["missing"]:
            problems.append("%d of %d lines got no vertices" % (doc["cdp"]["missing"], run.params["lines"]))
        return "; ".join(problems) or None
    return per_case(ctx, evaluate)


def check_each_launch_checked(ctx):
    """Each line that got its vertex block launches one child (after its stream, whose failure the log
    counts) and checks that launch once: the log's checked launches equal those lines, and equal the
    child grids the kit saw run (a grid that computed a line and counted none: its %gridid, from
    bezier_point) plus the launches that failed. A loop of checks, or checks of launches that never
    happen, count as launches in the log but start no grid."""
    def evaluate(run):
        log, blocks = run.doc["cdp_log"], run.doc["heap"]["allocations"]
        checked, failed_calls = log["checked"], log["calls_failed"]
        low = max(0, blocks - failed_calls)  # a line whose stream could not be made launches nothing
        grids = run.doc.get("cdp_grids")  # absent only from recordings that predate it
        if low <= checked <= blocks:
            if grids is None:
                return None
            problem = launched_grids_problem(log, grids["child_grids"])
            if problem is None:
                return None
            return "%s (the kit saw %d child grids compute %d of %d lines)" % (
                problem, grids["child_grids"], grids["lines_in_child"], run.params["lines"])
        expected = "%d" % blocks if low == blocks else "%d to %d" % (low, blocks)
        return ("expected %s launches checked with KIT_CHECK_LAUNCH() (one per line that got its vertex block%s); "
                "the launch log counted %d: %s" % (
                    expected, ", less those whose stream failed" if low != blocks else "", checked,
                    "a launch left unchecked, or a line without its child" if checked < low
                    else "more checks than children: a child launched twice, or one launch checked twice"))
    return per_case(ctx, evaluate)


def check_each_vertex_once(ctx):
    """The kit counts every bezier_point call in the flat run (where it ran) and the dynamic one: one
    per vertex, none for an index outside [0, n). More calls: a parent that loops over its vertices
    beside its child, a child launched twice, a thread past the end computing. Fewer: vertices never
    computed, unless lines were lost, which "no line lost" reports."""
    def evaluate(run):
        doc, total = run.doc, run.doc["total_vertices"]
        problems = []
        for key, what, ran, lost in (("flat_point_calls", "flat", doc["flat_ran"], 0),
                                     ("cdp_point_calls", "dynamic", True, doc["cdp"]["missing"])):
            if not ran:
                continue
            calls, outside = doc[key]["calls"], doc[key]["out_of_range"]
            if calls > total or outside or (calls < total and not lost):
                problems.append("%s: %d bezier_point calls for %d vertices%s" % (
                    what, calls, total, ", %d of them for an index outside [0, n)" % outside if outside else ""))
        if problems:
            return "expected one bezier_point call per vertex, each index in [0, n); " + "; ".join(problems)
        return None
    return per_case(ctx, evaluate)


def check_inside_block(ctx):
    def evaluate(run):
        n = run.doc["cdp"]["overruns"]
        return ("%d lines were written past the end of their vertex block: a child thread with i >= n wrote" % n
                if n else None)
    return per_case(ctx, evaluate)


def check_exact_allocation(ctx):
    def evaluate(run):
        doc = run.doc
        asked, exact = doc["heap"]["bytes_requested"], doc["exact_bytes"]
        if asked != exact:
            return ("expected exactly %d bytes of vertices (the flat worst case is %d); %d were asked for"
                    % (exact, doc["worst_case_bytes"], asked))
        return None
    return per_case(ctx, evaluate)


def check_freed(ctx):
    def evaluate(run):
        heap = run.doc["heap"]
        if heap["frees"] != heap["allocations"] or heap["bad_frees"] or heap["free_failures"]:
            return ("expected all %d blocks freed by free_vertices; %d were (%d frees of other pointers, %d failed)"
                    % (heap["allocations"], heap["frees"], heap["bad_frees"], heap["free_failures"]))
        return None
    return per_case(ctx, evaluate)


def timed_runs_problem(run):
    """What the harness found in the runs of the student's version in its timing loop (each checked like
    the checked run, outside the timed region), or None when every one was right. A run that did no
    work (a flag set once, state kept across runs) must not pass for a fast one."""
    checked = run.doc.get("timed_runs_checked")
    expected = run.params.get("repeats", 0) + 1  # and one warm-up run
    if not checked or checked["runs"] != expected:
        return ("the %s timing case checked %s of its %d timed runs of your version (1 warm-up and %d timed)"
                % (run.params.get("timing"), checked["runs"] if checked else "none", expected, expected - 1))
    if not checked["runs_wrong"]:
        return None
    k, warmup = checked["first_wrong_run"], checked.get("warmup", 1)
    which = "the warm-up repetition" if k <= warmup else "repetition %d" % (k - warmup)
    return ("%s of the timed run did not write its vertices (%d of %d runs wrong; %s): a version that works "
            "only on its first call, or keeps state from one run to the next, is not timed"
            % (which, checked["runs_wrong"], checked["runs"],
               _lines_message(checked["first_wrong"], run.params["lines"])))


def _ratio_check(ctx, case, numerator, threshold, what, extra=""):
    run, t = timing_run(ctx, case)
    if not t or not t.get("cdp_student"):
        return chk.failed("the %s timing case reported no timing" % case)
    wrong = timed_runs_problem(run)
    if wrong:
        return chk.failed("%s: %s" % (run.label(), wrong))
    ratio = t[numerator] / t["cdp_student"]
    message = ("%s: %s %.3f ms, yours %.3f ms: %.2fx faster (at least %.2fx wanted)%s"
               % (run.label(), what, t[numerator], t["cdp_student"], ratio, threshold, extra))
    return chk.passed(message) if ratio >= threshold else chk.failed(message)


def check_children_run_concurrently(ctx):
    """The property the streams teach: a block's children do not run one after another. Measured against
    the kit's NULL-stream version in the same run; a created stream per thread and fire-and-forget both
    pass, one stream shared by a block does not."""
    run, short = timing_run(ctx, "short")
    extra = ""
    if short and short.get("cdp_student"):
        extra = ("\nnot graded, for reference: on the textbook's short lines (%s) flat took %.3f ms and your CDP "
                 "version %.3f ms: there a launch costs more than the work" % (run.label(), short["flat"],
                                                                              short["cdp_student"]))
    return _ratio_check(ctx, "streams", "cdp_null", MIN_NULL_OVER_STUDENT, "the kit's NULL-stream version", extra)


def check_cdp_beats_flat_on_heavy_tail(ctx):
    return _ratio_check(ctx, "heavy", "flat", MIN_FLAT_OVER_CDP_HEAVY, "the kit's flat version")


def gpu_bytes(params):
    """What the harness asks to be free before it runs a case (common/harness/04-bezier-streams/harness.cu):
    a heap of twice the worst case, as the reference sizes it, and 1 GiB besides; here with every line
    at its maximum, a bound on either workload's worst case. The 4 GiB edge takes several shared slots."""
    heap_need = params["lines"] * (params["max"] * 8 + KIT_ALLOC_OVERHEAD)  # sizeof(float2) per vertex
    return 2 * heap_need + (1 << 30)


# The memcheck case: the recorded lines; the last parent block is partly past n_lines (300 = 4 x 64 + 44).
MEMCHECK_CASE = {"lines": 300, "factor": 64, "max": 256, "seed": 5}


# What the student's objects may import beyond what every lab may (gradelib.objects): the kit's Bezier functions and heap (kit_bezier.h).
IMPORTS = Imports(device=("vertex_count", "bezier_point", "kit_malloc_vertices", "kit_free_vertices"))


LAB = Lab(
    name="04-bezier-streams",
    title="Lab 04: Bezier tessellation, streams and pool limits",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case={"lines": 300, "factor": 64, "max": 256, "seed": 5, "figure_lines": 60},
    memcheck_case=MEMCHECK_CASE,
    imports=IMPORTS,
    starter_must_fail=("device launch into a created stream or fire-and-forget", "launch checked after it is made"),
    gpu_bytes=gpu_bytes,
    heap_per_process=True,
    # The 4 GiB edge case takes the solution about 8 s alone on an H100, and its shared cases took up
    # to 13 s with 16 runs sharing it.
    time_limit=20,
    checks=[
        compiles(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                 passes="your file builds with the kit's flags"),
        runs_cleanly(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                     passes='every case ends in time without a CUDA error'),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: 300 textbook lines, "
                               'factor 64, max 256 (`--lines 300 --factor 64 --max 256 --seed 5`)')),
        chk.Check("device launch into a created stream or fire-and-forget", 1, chk.STATIC, check_launch_and_streams, parent=COMPILES,
                  hint=hint(HANDOUT, "2.5 (streams: why the NULL stream serializes)"),
                  passes=("`tessellate_cdp`'s PTX has a device launch, and every device launch goes into a stream "
                          'the kernel creates (`cudaStreamCreateWithFlags` in its PTX) or into '
                          '`cudaStreamFireAndForget`, never into the NULL stream or `cudaStreamTailLaunch`; half '
                          'when the launch is there but fails this')),
        chk.Check("launch checked after it is made", 1, chk.STATIC, check_launch_checked_after, parent=COMPILES,
                  hint=hint(HANDOUT, "2.4 (dynamic: a thread per line, a child grid per line)"),
                  passes="in `tessellate_cdp`'s PTX, a `cudaGetLastError()` follows the device launch on every path"),
        chk.Check("pending-launch limit covers every line", 1, chk.RUNTIME, check_pending_limit_covers_lines,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.6 (the pending-launch pool and the device heap)"),
                  passes='in every case, the limit in effect after `prepare_cdp` is at least the number of lines'),
        chk.Check("device heap covers the worst case", 1, chk.RUNTIME, check_heap_covers_worst_case,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.6 (the pending-launch pool and the device heap)"),
                  passes=('in every case, the heap in effect after `prepare_cdp` is at least `max_total_vertices × 8'
                          ' + n_lines × 1,024` bytes')),
        chk.Check("flat vertices", 2, chk.RUNTIME, check_flat, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.3 (flat: a block per line)"),
                  passes=('every flat vertex matches a double-precision reference (where the worst case fits in 1 '
                          'GiB)')),
        chk.Check("dynamic vertices", 3, chk.RUNTIME, check_dynamic, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (dynamic: a thread per line, a child grid per line)"),
                  passes='every dynamic line has vertices, the right count and the right values'),
        chk.Check("no line lost", 2, chk.RUNTIME, check_no_line_lost, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.6 (the pending-launch pool and the device heap)"),
                  passes='no failed device launch or call, no failed allocation, no line without vertices'),
        chk.Check("every child launch checked", 1, chk.RUNTIME, check_each_launch_checked, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (dynamic: a thread per line, a child grid per line)"),
                  passes=('the launch log counts one checked launch per line that got its vertex block (and its '
                          'stream, where it creates one), and as many checks as child grids ran plus launches failed'
                          ' (the kit counts the grids that computed your lines, by their grid id)')),
        chk.Check("each vertex computed once", 1, chk.RUNTIME, check_each_vertex_once, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (dynamic: a thread per line, a child grid per line)"),
                  passes='flat and dynamic, one `bezier_point` call per vertex, none for an index outside `[0, n)`'),
        chk.Check("child stays inside its block", 1, chk.RUNTIME, check_inside_block, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (dynamic: a thread per line, a child grid per line)"),
                  passes='every fence is intact'),
        chk.Check("exact allocation", 1, chk.RUNTIME, check_exact_allocation, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.7 (memory: exact, and freed on the device)"),
                  passes='bytes asked for equal the exact need'),
        chk.Check("heap freed", 1, chk.RUNTIME, check_freed, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.7 (memory: exact, and freed on the device)"),
                  passes='`free_vertices` freed every block, and only those'),
        chk.Check("a block's children run concurrently", 2, chk.RUNTIME, check_children_run_concurrently,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.5 (streams: why the NULL stream serializes)"),
                  timing=True,
                  passes=('streams case (256 heavy lines, max 2^20): kit NULL-stream time / yours ≥ '
                          '{MIN_NULL_OVER_STUDENT}')),
        chk.Check("CDP beats flat on the heavy tail", 2, chk.RUNTIME, check_cdp_beats_flat_on_heavy_tail,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.8 (when dynamic parallelism pays)"), timing=True,
                  passes='heavy case (256 heavy lines, max 2^22): kit flat time / yours ≥ {MIN_FLAT_OVER_CDP_HEAVY}'),
    ],
)
