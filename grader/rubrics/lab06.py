"""Lab 06: a parallel allocator (grading rules).

The harness asks the student's pool for slots from a full grid, several times more requests than
slots, and checks every answer on the host with a bitmap (unique, in range, exactly `capacity`
successes, the rest "full"); it asks from whole warps and from groups of lanes with gaps, from 1-D
blocks and from 2-D blocks whose threadIdx.x is not the lane, from pools small and past 4 GiB, one
slot (pool_alloc) or many (pool_alloc_many) at a time. It runs more than 2^32 requests through the
counter (a 32-bit counter must not wrap); collects Lab 04's Bezier vertices into one pool through the
student's dynamic kernels, checks them against Lab 04's double-precision reference and counts the
calls of bezier_point and the launches checked; and times, in the same run, the student's pool
against per-object device malloc and the student's counter against the kit's one-atomic-per-thread
counter.
"""
import re

from gradelib.bezier_lines import first_wrong_vertex
from gradelib.rubric import (COMPILES, RUNS_CLEANLY, Contract, Imports, Lab, chk, compiles, hint,
                             launch_log_problem, launched_grids_problem, left_out_note, memcheck_clean,
                             per_case, ptx, runs_cleanly)

HANDOUT = "handouts/06-parallel-allocator.md"
TIMING_REPEATS = 5
# Thresholds on ratios of medians measured in the same run. On an H100 (CUDA 13.0, tools/measure_thresholds.py
# lab06, 10 runs each): malloc / pool 3,518-3,837 for the solution; per-thread / counter_take
# 10.99-11.20 for the solution and 1.05 for the one-atomic-per-thread submission. Each threshold is
# far below half the solution's worst run and, for aggregation, well above the unaggregated 1.05.
MIN_MALLOC_OVER_POOL = 10.0       # per-object device malloc time / the student's pool_alloc time
MIN_PER_THREAD_OVER_WARP = 3.0    # the kit's one-atomic-per-thread counter time / the student's counter_take
WRAP_REQUESTS = (1 << 32) + (1 << 24)  # past 2^32: a counter that keeps adding wraps and hands out 0.. again
TIMING_CASE = {"objects": 1 << 18, "object_bytes": 128, "take_rounds": 32}
# 2-D blocks for the uniqueness run: blockDim.x not a multiple of 32 (threadIdx.x % 32 is not the
# lane) and a block size not a multiple of 32 (the last warp of each block is partial).
BLOCK_SHAPES = ((24, 5), (40, 3), (20, 7), (36, 7), (12, 9), (33, 3))
HARNESS_MAX_LINES = 100000      # MAX_LINES in common/include/bezier_lines.h
HARNESS_MAX_VERTICES = 1 << 22  # MAX_MAX_VERTICES in common/include/bezier_lines.h
HARNESS_MAX_FACTOR = 1000000    # --factor's largest value
HARNESS_MAX_BLOCK_THREADS = 512  # --block-x times --block-y, at most (MAX_BLOCK_THREADS in the harness)
BIG_SLOT_BYTES = 4096  # with a little over 2^20 slots the slot array passes 4 GiB: 32-bit offsets wrap

# The work collect_vertices hands to its child, for tools/mutants.py's "parent keeps the work" mutant.
PARENT_WORK = {"collect_vertices": "for (int k = 0; k < n; k++) line->vertices[k] = bezier_point(line, k, n);"}

# What a warp-aggregated counter shows in PTX: the active mask or a vote/match, a shuffle, an atomic.
_AGGREGATE = re.compile(r"\b(activemask\.b32|vote(\.sync)?\.ballot|match\.any\.sync)")
_SHUFFLE = re.compile(r"\bshfl\.sync\b")
_ATOMIC = re.compile(r"\batom\.[\w.]*\b(add|cas)\b")
# Device-heap allocation, however it is spelled: malloc, cudaMalloc in device code, the kit's wrapper.
DEVICE_MALLOCS = ("malloc", "__cudaCDP2Malloc", "_Z17kit_device_mallocm")

CASE_DEFAULTS = {"capacity": 0, "requests": 0, "slot_bytes": 12, "block_x": 256, "block_y": 1,
                 "lanes": "contiguous", "many": 0, "wrap_capacity": 4096, "wrap_requests": 0, "lines": 0,
                 "workload": "chained", "factor": 16, "max": 32, "fit": 100, "objects": 0, "object_bytes": 128,
                 "take_rounds": 0, "repeats": 0}

def make_cases(rng):
    """Uniqueness: about a million slots and 4x the requests; a tiny capacity (1, 31, 32, 33) under many
    requests; fewer requests than slots; lanes with gaps asking together (more requests than slots, and
    fewer); 2-D blocks whose blockDim.x is not a multiple of 32, with a partial last warp; a slot array past
    4 GiB, one slot per request and 1 .. M slots per request (pool_alloc_many). More than 2^32 requests
    through the counter. Part C: the textbook's lines, more lines than the default pending-launch limit, a
    heavy tail, a pool half the size needed. The timing case. Sizes, shapes and seeds are drawn from rng."""
    def case(part, **kw):
        p = dict(CASE_DEFAULTS, part=part, seed=rng.randint(1, 10 ** 9))
        p.update(kw)
        return p
    capacity = rng.randint((1 << 20) - 4096, (1 << 20) + 4096)
    small = rng.choice((1, 31, 32, 33))
    roomy = rng.randint(1000, 200000)
    scattered = rng.randint(20000, 200000)
    shaped = rng.randint(20000, 200000)
    shaped_few = rng.randint(20000, 200000)
    shape, shape_few = rng.choice(BLOCK_SHAPES), rng.choice(BLOCK_SHAPES)
    big = (1 << 20) + rng.randint(1 << 12, 1 << 16)
    big_many = (1 << 20) + rng.randint(1 << 15, 1 << 16)
    many = rng.choice((1024, 2048, 4096))
    cases = [
        case("uniqueness", capacity=capacity, requests=4 * capacity),
        case("uniqueness", capacity=small, requests=rng.randint(1000, 100000)),
        case("uniqueness", capacity=roomy, requests=rng.randint(roomy // 2, roomy)),
        case("uniqueness", capacity=scattered, requests=3 * scattered, lanes="scattered"),
        case("uniqueness", capacity=shaped, requests=3 * shaped, block_x=shape[0], block_y=shape[1]),
        case("uniqueness", capacity=shaped_few, requests=rng.randint(shaped_few // 2, shaped_few),
             block_x=shape_few[0], block_y=shape_few[1], lanes="scattered"),
        case("uniqueness", capacity=big, requests=2 * big, slot_bytes=BIG_SLOT_BYTES),
        # about 3x the slots in demand, from a few thousand threads (compare-and-swap is for few callers)
        case("uniqueness", capacity=big_many, requests=6 * big_many // (many + 1), slot_bytes=BIG_SLOT_BYTES,
             many=many),
        case("wrap", wrap_capacity=rng.randint(1000, 100000), wrap_requests=WRAP_REQUESTS),
        case("collect", lines=1000),
        case("collect", lines=12000, factor=rng.choice((16, 256, 1024)), max=rng.choice((32, 64, 1024))),
        case("collect", lines=300, workload="heavy", max=1 << 16),
        case("collect", lines=rng.randint(500, 3000), factor=256, max=1024, fit=50),
        case("timing", repeats=TIMING_REPEATS, timing=True, **TIMING_CASE),
    ]
    # Drawn after the others, so that a seed keeps the cases it had before these were added; run before
    # the timing case. At the edges the harness takes: Part C with as many lines as it takes (a child
    # per line pending at once) and with one line at the largest count and factor (pool_alloc_many of
    # 2^22 slots, a child grid of 2^17 blocks).
    # And Part B's largest block (16 warps a block, twice the others': a per-warp table sized for the
    # kit's 256 threads overflows).
    widest = rng.randint(20000, 200000)
    edges = [case("collect", lines=HARNESS_MAX_LINES),
             case("collect", lines=1, factor=HARNESS_MAX_FACTOR, max=HARNESS_MAX_VERTICES),
             case("uniqueness", capacity=widest, requests=3 * widest, block_x=HARNESS_MAX_BLOCK_THREADS)]
    return cases[:-1] + edges + cases[-1:]



# The harness's contract (common/harness/06-parallel-allocator/harness.cu). "part" and "timing" are for
# the checks.
HARNESS = Contract(
    result_keys=["lab", "device", "params", "uniqueness", "wrap", "collect", "timing", "heap_bytes",
                 "pending_launch_limit"],  # collect's "grids" and the timing entries' run checks are newer than
                                           # data/recorded/lab06-solution.json; nested keys are not compared
    case_keys=["part", "timing"])


def _runs(ctx, part):
    return [r for r in ctx.runs if r.params.get("part") == part]


def _per_case(ctx, part, evaluate):
    runs = _runs(ctx, part)
    if not runs:
        return chk.failed("no %s case was run" % part)
    return per_case(ctx, evaluate, runs=runs)


# ---- static ----

def _reachable_text(ctx, name):
    """The PTX of the student's function `name` and of every function of the student's files it calls,
    or None when the function is not there."""
    defined = {}
    for text in ctx.ptx.values():
        defined.update(ptx.definitions(text))
    return ptx.reachable_text(defined, name)


def check_warp_aggregated(ctx):
    text = _reachable_text(ctx, "counter_take")
    if text is None:
        return chk.failed("expected: a __device__ function counter_take in your file\nactual:   none in its PTX")
    missing = [what for pattern, what in ((_AGGREGATE, "__activemask / __ballot_sync / __match_any_sync"),
                                          (_SHUFFLE, "__shfl_sync"), (_ATOMIC, "atomic add"))
               if not pattern.search(text)]
    if missing:
        return chk.failed("expected: counter_take elects a leader (the active mask), the leader takes the warp's "
                          "indices with one atomic, a shuffle hands out the first\n"
                          "actual:   the PTX of counter_take has no %s" % " and no ".join(missing))
    return chk.passed()


def check_no_device_malloc(ctx):
    found = sorted(name for name in DEVICE_MALLOCS if name in ctx.ptx_calls())
    if found:
        return chk.failed("expected: no device-heap allocation in your file (Part C takes every line's vertices "
                          "from the pool)\nactual:   its PTX calls %s" % ", ".join(found))
    return chk.passed()


_STREAM_NAMES = {ptx.NULL_STREAM: "the NULL stream (the children of a block run one after another)",
                 ptx.TAIL_LAUNCH_STREAM: "cudaStreamTailLaunch (the children run one after another, after the "
                                         "parent grid)",
                 ptx.UNREAD_STREAM: ptx.UNREAD_STREAM_NAME}


# A 64-bit load from a __shared__ variable at a fixed address (a stream one per block, not one per
# thread: an array indexed by the thread is addressed through a register).
_SHARED_SCALAR = re.compile(r"ld\.shared\.[bu]64\s+(%rd\d+),\s*\[[A-Za-z_$][\w$]*(?:\+\d+)?\]")


def block_shared_stream_launches(kernel_text):
    """How many device launches in one kernel's PTX take their stream from one __shared__ variable."""
    shared = {m.group(1) for m in _SHARED_SCALAR.finditer(kernel_text)}
    return sum(1 for operand in ptx.launch_stream_operands(kernel_text) if operand in shared)


def check_collect_launches(ctx):
    """collect_vertices launches a child grid from the device, checks each launch right after it on every
    path (KIT_CHECK_LAUNCH(): cudaGetLastError() after the launch, not before it), and launches into
    cudaStreamFireAndForget or a stream of the thread's own: not the NULL stream, not the tail-launch
    stream, not one __shared__ stream for the whole block (each would run a block's children one by one)."""
    text = _reachable_text(ctx, "collect_vertices")
    if text is None or ptx.DEVICE_LAUNCH not in ptx.called_functions(text):
        return chk.failed("expected: collect_vertices launches fill_vertices from the device\n"
                          "actual:   no device-side launch in the PTX of collect_vertices")
    kernel = ctx.kernel_ptx("collect_vertices")
    problems = []
    if kernel is not None:
        _, unchecked = ctx.launch_order("collect_vertices")
        if unchecked:
            problems.append("%d launch(es) in collect_vertices with a path on which no cudaGetLastError() follows "
                            "it (KIT_CHECK_LAUNCH() missing, or before the launch instead of after it)" % unchecked)
        if block_shared_stream_launches(kernel):
            problems.append("a launch into a stream held in one __shared__ variable: one stream for the whole "
                            "block, so the children of a block run one after another")
    streams = sorted(set(st for st in ptx.launch_streams(text) if st in _STREAM_NAMES))
    for st in streams:
        problems.append("a launch into %s" % _STREAM_NAMES[st])
    if problems:
        return chk.failed("expected: each child launched into cudaStreamFireAndForget or a stream of the thread's "
                          "own, and checked with KIT_CHECK_LAUNCH() right after the launch\n"
                          "actual:   %s" % "; ".join(problems))
    return chk.passed()


# ---- runtime: Part B ----

def _expected_successes(u):
    return min(u["requests"], u["capacity"])


def _shape(u):
    """How a uniqueness case asked, for messages."""
    what = ("pool_alloc_many, 1 to %d slots each" % u["many"]) if u.get("many") else "pool_alloc"
    block = "%dx%d" % (u["block_x"], u["block_y"]) if u.get("block_y", 1) != 1 else str(u["threads"])
    lanes = ", lanes with gaps asking together" if u.get("lanes") == "scattered" else ""
    return ("%d requests (%s) from %d blocks of %s%s for %d slots of %d bytes"
            % (u["requests"], what, u["blocks"], block, lanes, u["capacity"], u["slot_bytes"]))


def _per_uniqueness_case(ctx, evaluate):
    """per_case over the uniqueness cases. A case the harness left out for want of GPU memory (a slot
    array past 4 GiB on a small GPU) is not counted: the message says so, the score does not drop."""
    runs = _runs(ctx, "uniqueness")
    if not runs:
        return chk.failed("no uniqueness case was run")

    def left_out(run):
        u = run.doc.get("uniqueness", {})
        return u.get("not_run_reason") if not u.get("ran") else None

    def checked(run):
        if not run.doc["uniqueness"].get("ran"):
            return "the harness did not run the uniqueness part"
        return evaluate(run)
    if all(left_out(r) for r in runs):
        return chk.failed("no uniqueness case could run on this GPU" +
                          left_out_note([(r, left_out(r)) for r in runs]))
    return per_case(ctx, checked, runs=runs, left_out=left_out)


def check_unique_slots(ctx):
    def evaluate(run):
        u = run.doc["uniqueness"]
        problems = []
        if u["duplicates"]:
            problems.append("%d request(s) given a slot already handed out (first: slot %d, again to request %d)"
                            % (u["duplicates"], u["first_duplicate_index"], u["first_duplicate_request"]))
        if u["out_of_range"] or u["misaligned"]:
            problems.append("%d pointer(s) past the pool's %d slots, %d not at the start of a slot"
                            % (u["out_of_range"], u["capacity"], u["misaligned"]))
        if u.get("many"):
            # All or nothing, never "full" while the slots asked for are still there: a request refused
            # for n slots means fewer than n were left then, so fewer than n are left at the end.
            left = u["capacity"] - u["unique"]
            if u["full"] and u["min_refused_slots"] <= left:
                problems.append("a request for %d slots was answered full (NULL), yet %d of the %d slots were "
                                "never handed out" % (u["min_refused_slots"], left, u["capacity"]))
        else:
            want = _expected_successes(u)
            if u["unique"] != want:
                problems.append("%d distinct slots handed out, expected all %d" % (u["unique"], want))
            if u["full"] != u["requests"] - want:
                problems.append("%d requests answered full (NULL), expected %d" % (u["full"], u["requests"] - want))
        if not problems:
            return None
        return "%s: %s" % (_shape(u), "; ".join(problems))
    return _per_uniqueness_case(ctx, evaluate)


def check_walk(ctx):
    def evaluate(run):
        u = run.doc["uniqueness"]
        if u.get("many"):
            # 1 .. M slots per request: the walk must reach every slot handed out; a slot it reaches that
            # nobody was given holds no record (below)
            if u["walked"] < u["unique"]:
                return ("the host walks slots 0 .. min(counter.next, capacity) - 1, but counter.next ended at %d: "
                        "%d slots, fewer than the %d handed out" % (u["counter_next"], u["walked"], u["unique"]))
        elif u["walked"] != _expected_successes(u):
            return ("the host walks slots 0 .. min(counter.next, capacity) - 1, but counter.next ended at %d: "
                    "%d slots, expected %d" % (u["counter_next"], u["walked"], _expected_successes(u)))
        if u["unowned"]:
            return ("%d of the %d slots the host walked hold no record of a request that was given them "
                    "(first: slot %d)" % (u["unowned"], u["walked"], u["first_unowned_slot"]))
        return None
    return _per_uniqueness_case(ctx, evaluate)


def check_no_wrap(ctx):
    def evaluate(run):
        w = run.doc["wrap"]
        problems = []
        if w["duplicated"]:
            problems.append("%d indices handed out more than once (first: %d): the counter wrapped around 2^32"
                            % (w["duplicated"], w["first_duplicated_index"]))
        if w["missing"]:
            problems.append("%d indices never handed out" % w["missing"])
        if w["out_of_range"]:
            problems.append("%d indices >= capacity" % w["out_of_range"])
        if w["full"] != w["requests"] - w["capacity"]:
            problems.append("%d answered full, expected %d" % (w["full"], w["requests"] - w["capacity"]))
        if not problems:
            return None
        return ("%d requests for %d indices (counter.next ended at %d): %s"
                % (w["requests"], w["capacity"], w["counter_next"], "; ".join(problems)))
    return _per_case(ctx, "wrap", evaluate)


# ---- runtime: Part C ----

def _vertices_message(c):
    check = c["check"]
    parts = []
    if check["count_wrong"]:
        parts.append("%d with a wrong vertex count" % check["count_wrong"])
    if check["vertices_wrong"]:
        parts.append("%d vertices wrong" % check["vertices_wrong"])
    if check["missing"] != c["full_lines"]:
        parts.append("%d without vertices" % check["missing"])
    vertex = first_wrong_vertex(check)
    first = "; first: line %d, %s" % (check["first_bad_line"], vertex) if vertex else ""
    return "%s%s" % (", ".join(parts), first)


def check_collect_vertices(ctx):
    def evaluate(run):
        c = run.doc["collect"]
        check = c["check"]
        problems = []
        if check["count_wrong"] or check["vertices_wrong"] or check["missing"] != c["full_lines"]:
            problems.append(_vertices_message(c))
        if c["overlapping"]:
            problems.append("%d lines share vertices with another line (first: line %d)"
                            % (c["overlapping"], c["first_overlapping_line"]))
        lost = launch_log_problem(c["log"])
        if lost:
            problems.append(lost)
        if "lines_with_vertices" in c and c["log"]["checked"] != c["lines_with_vertices"]:
            problems.append("%d launch(es) checked with KIT_CHECK_LAUNCH(), expected one per line that got "
                            "vertices (%d): check each child launch right after it, in the thread that made it"
                            % (c["log"]["checked"], c["lines_with_vertices"]))
        # The child grids the kit saw compute lines (their %gridid, from bezier_point): a check counts a
        # launch only where a grid ran or the launch failed. Absent only from recordings that predate it.
        if "grids" in c and not lost:
            unlaunched = launched_grids_problem(c["log"], c["grids"]["child_grids"])
            if unlaunched:
                problems.append("%s (the kit saw %d child grids compute %d of the %d lines)"
                                % (unlaunched, c["grids"]["child_grids"], c["grids"]["lines_in_child"], c["lines"]))
        return "; ".join(problems) or None
    return _per_case(ctx, "collect", evaluate)


def check_vertices_once(ctx):
    """bezier_point, counted by the kit while collect_vertices and its children run: one call per vertex of
    the lines that got vertices (their n_vertices, summed), none for an index outside a line."""
    def evaluate(run):
        c = run.doc["collect"]
        calls, want, outside = c["point_calls"], c["claimed_vertices"], c["point_calls_out_of_range"]
        problems = []
        if calls != want:
            problems.append("bezier_point was called %d times for the %d vertices of the %d lines that got "
                            "vertices: expected exactly one call per vertex, from the line's child grid (%s)"
                            % (calls, want, c["lines_with_vertices"],
                               "more: some vertices computed twice, e.g. by the parent and by a child, or by two "
                               "children" if calls > want else "fewer: some vertices never computed"))
        if outside:
            problems.append("%d call(s) of bezier_point for a vertex index outside [0, n): the child's bound "
                            "check must be i < n" % outside)
        return "; ".join(problems) or None
    return _per_case(ctx, "collect", evaluate)


def check_one_allocation(ctx):
    def evaluate(run):
        c = run.doc["collect"]
        if c["allocations"] == 1:
            return None
        return ("expected 1 allocation (the vertex pool) for %d lines; counted %d: %d lines with vertices outside "
                "the pool (first: line %d), %d device mallocs"
                % (c["lines"], c["allocations"], c["outside_pool"], c["first_outside_line"], c["device_mallocs"]))
    return _per_case(ctx, "collect", evaluate)


def check_full_pool(ctx):
    """Every collect case: no line outside the pool or across its end, the guard after it intact; a pool
    big enough (fit 100%) answers no line full; a pool too small answers some lines full."""
    def evaluate(run):
        c = run.doc["collect"]
        problems = []
        if c["guard_damaged"]:
            problems.append("something wrote past the end of the pool's %d vertices" % c["capacity"])
        if c["outside_pool"] or c["misaligned"]:
            problems.append("%d lines got vertices outside the pool or across its end, %d not at a vertex boundary"
                            % (c["outside_pool"], c["misaligned"]))
        if c["pooled_vertices"] > c["capacity"]:
            problems.append("%d vertices handed out from a pool of %d" % (c["pooled_vertices"], c["capacity"]))
        if c["fit_percent"] >= 100 and c["full_lines"]:
            problems.append("%d lines were answered full although the pool holds every line's vertices (%d of %d)"
                            % (c["full_lines"], c["total_vertices"], c["capacity"]))
        if c["total_vertices"] > c["capacity"] and c["full_lines"] == 0:
            problems.append("the lines need %d vertices, the pool holds %d, yet no line was answered full"
                            % (c["total_vertices"], c["capacity"]))
        return "; ".join(problems) or None
    return _per_case(ctx, "collect", evaluate)


# ---- runtime: timing ----

def _timing(ctx):
    runs = [r for r in ctx.runs if r.params.get("timing")]
    if not runs or not runs[0].doc.get("timing", {}).get("ran"):
        return None, None
    return runs[0], runs[0].doc["timing"]


def timed_runs_problem(t, entry, what, failure):
    """What the harness found in the runs of a timing loop of the student's code (each checked outside
    the timed region), or None when every one did its work: a run that did nothing (a flag set once, a
    pool's counter or state kept from one run to the next) must not pass for a fast one. failure: what
    the first wrong run did not do, and what it did instead."""
    expected = t["repeats"] + 1  # and one warm-up run
    if entry.get("runs_checked") != expected:
        return ("the timing case checked %s of the %d runs of %s (1 warm-up and %d timed)"
                % (entry.get("runs_checked", "none"), expected, what, expected - 1))
    if not entry["runs_wrong"]:
        return None
    k = entry["first_wrong_run"]
    which = "the warm-up repetition" if k <= 1 else "repetition %d" % (k - 1)
    return "%s of the timed run of %s %s (%d of %d runs wrong)" % (which, what, failure, entry["runs_wrong"], expected)


def check_pool_beats_malloc(ctx):
    run, t = _timing(ctx)
    if t is None:
        return chk.failed("the timing case reported no timing")
    per_object, bulk, pool = t["per_object_malloc"], t["bulk"], t["pool"]
    if pool["objects_missing"] or pool["objects_wrong"]:
        return chk.failed("%d objects: your pool left %d without a slot and %d with a wrong value"
                          % (t["objects"], pool["objects_missing"], pool["objects_wrong"]))
    wrong = timed_runs_problem(t, pool, "your pool_alloc", (
        "did not give every object its slot: %d objects without a slot, %d with a wrong value, %d of %d slots "
        "handed out" % (pool.get("first_wrong_missing", 0), pool.get("first_wrong_objects_wrong", 0),
                        pool.get("first_wrong_slots_used", 0), t["objects"])))
    if wrong:
        return chk.failed(wrong)
    if pool["median_ms"] <= 0:
        return chk.failed("the timing case measured no time for your pool")
    ratio = per_object["median_ms"] / pool["median_ms"]
    message = ("%d objects of %d bytes: per-object device malloc %.3f ms, your pool %.3f ms: %.1fx faster "
               "(at least %.1fx wanted)" % (t["objects"], t["object_bytes"], per_object["median_ms"],
                                             pool["median_ms"], ratio, MIN_MALLOC_OVER_POOL))
    if bulk["median_ms"] > 0:
        message += ("\nnot graded, for reference (Part A): one bulk malloc carved into slots %.3f ms, per-object "
                    "malloc / bulk %.1fx" % (bulk["median_ms"], per_object["median_ms"] / bulk["median_ms"]))
    if per_object["malloc_failures"]:
        message += "\n%d of the per-object mallocs failed (heap %.0f MiB)" % (
            per_object["malloc_failures"], run.doc["heap_bytes"] / 1048576.0)
    return chk.passed(message) if ratio >= MIN_MALLOC_OVER_POOL else chk.failed(message)


def check_aggregation_speed(ctx):
    run, t = _timing(ctx)
    if t is None or not t.get("take_rounds"):
        return chk.failed("the timing case reported no counter timing")
    mine, baseline = t["take_student"]["median_ms"], t["take_per_thread"]["median_ms"]
    student = t["take_student"]
    requests = t["take_requests"]
    wrong = timed_runs_problem(t, student, "your counter_take", (
        "did not hand out its indices: expected each of 0 .. %d once (answers summing to %d modulo 2^32, "
        "counter.next %d); got answers summing to %d and counter.next %d"
        % (requests - 1, requests * (requests - 1) // 2 % (1 << 32), requests, student.get("first_wrong_sum", 0),
           student.get("first_wrong_next", 0))))
    if wrong:
        return chk.failed(wrong)
    if mine <= 0:
        return chk.failed("the timing case measured no time for counter_take")
    ratio = baseline / mine
    message = ("%d requests (%d per thread, %d blocks of %d): the kit's one-atomic-per-thread counter %.3f ms, "
               "your counter_take %.3f ms: %.1fx faster (at least %.1fx wanted)"
               % (t["take_requests"], t["take_rounds"], run.doc["params"]["blocks"], t["threads"], baseline, mine,
                  ratio, MIN_PER_THREAD_OVER_WARP))
    return chk.passed(message) if ratio >= MIN_PER_THREAD_OVER_WARP else chk.failed(message)


UNIQUE = "unique slots within capacity"


# The GPU memory a case's run leaves free beside its uniqueness arrays (MEMORY_MARGIN in the harness).
HARNESS_MEMORY_MARGIN = 512 << 20
RECORD_BYTES = 12  # KIT_RECORD_BYTES in the harness: one record per slot, one answer (4 bytes) per request


def gpu_bytes(params):
    """What the harness asks to be free before a case's uniqueness run
    (common/harness/06-parallel-allocator/harness.cu): the slot array, an answer per request, a record
    per slot and its margin. The slot arrays past 4 GiB take several shared slots."""
    return (params["capacity"] * (params["slot_bytes"] + RECORD_BYTES) + 4 * params["requests"]
            + HARNESS_MEMORY_MARGIN)


# The memcheck case: every part small: a pool of 1,000 slots under 4x the requests, then 300 lines (the
# last parent block partly past n_lines: 300 = 4 x 64 + 44).
MEMCHECK_CASE = dict(CASE_DEFAULTS, capacity=1000, requests=4000, lines=300, seed=5)


# What the student's objects may import beyond what every lab may (gradelib.objects): the kit's Bezier functions and allocators (kit_bezier.h, allocator.h).
IMPORTS = Imports(device=("vertex_count", "bezier_point", "kit_malloc_vertices", "kit_free_vertices", "kit_device_malloc"))


LAB = Lab(
    name="06-parallel-allocator",
    title="Lab 06: a parallel allocator",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case={},
    memcheck_case=MEMCHECK_CASE,
    imports=IMPORTS,
    starter_must_fail=("counter_take aggregates the warp", "collect_vertices launches a child grid"),
    gpu_bytes=gpu_bytes,
    checks=[
        compiles(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                 passes="your file builds with the kit's flags (`-rdc=true`, linked with `cudadevrt`)"),
        runs_cleanly(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                     passes='every case ends in time, with no CUDA error'),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: a pool of 1,000 slots "
                               'under 4,000 requests, then 300 lines (`--capacity 1000 --requests 4000 --lines 300`,'
                               " the other options at the lab's case defaults)")),
        chk.Check("counter_take aggregates the warp", 1, chk.STATIC, check_warp_aggregated, parent=COMPILES,
                  hint=hint(HANDOUT, "2.3 (atomics and warp aggregation)"),
                  passes=('the PTX of `counter_take` (and of the functions of your file it calls) has the active '
                          'mask or a ballot/match, a `shfl.sync` and an atomic add')),
        chk.Check("no device malloc in your file", 1, chk.STATIC, check_no_device_malloc, parent=COMPILES,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)"),
                  passes=("the PTX of your file calls no `malloc`, no device-side `cudaMalloc` and not the kit's "
                          '`kit_device_malloc`')),
        chk.Check("collect_vertices launches a child grid", 1, chk.STATIC, check_collect_launches, parent=COMPILES,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)"),
                  passes=('the PTX of `collect_vertices` has a device-side launch, followed on every path by '
                          '`cudaGetLastError()` (`KIT_CHECK_LAUNCH()` after the launch, not before it), into '
                          "`cudaStreamFireAndForget` or a stream of the thread's own (not the NULL stream, tail "
                          'launch, or one `__shared__` stream for the block)')),
        chk.Check(UNIQUE, 3, chk.RUNTIME, check_unique_slots, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (the bounded counter)"),
                  passes=('in every uniqueness case, exactly min(requests, capacity) requests get a slot, no slot '
                          'twice, none outside the pool or between slots, and every other request gets `NULL`; in '
                          'the `pool_alloc_many` case, no slot twice and no request answered `NULL` while the slots '
                          'it asked for are left')),
        chk.Check("the host walks the allocated slots", 1, chk.RUNTIME, check_walk, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (the typed pool)"),
                  passes=('`min(next, capacity)` after the run equals the slots handed out (with `pool_alloc_many`: '
                          'reaches all of them), and each of those slots holds the record of its request')),
        chk.Check("no index twice past 2^32 requests", 1, chk.RUNTIME, check_no_wrap, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (the bounded counter)"),
                  passes=('2^32 + 2^24 requests through `counter_take`: every index handed out exactly once, the '
                          'rest full')),
        chk.Check("part C vertices", 2, chk.RUNTIME, check_collect_vertices, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)"),
                  passes=("every vertex of every line that got vertices matches Lab 04's double-precision reference,"
                          ' no two lines share vertices, no line lost to a failed launch, and one '
                          '`KIT_CHECK_LAUNCH()` per line that got vertices, as many as child grids ran plus launches'
                          ' failed (the kit counts the grids that computed your lines, by their grid id)')),
        chk.Check("each vertex computed once", 1, chk.RUNTIME, check_vertices_once, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)"),
                  passes=('`bezier_point` is called exactly once per vertex of the lines that got vertices (their '
                          '`n_vertices`, summed), never for an index outside [0, n)')),
        chk.Check("one allocation for all lines", 1, chk.RUNTIME, check_one_allocation, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)"),
                  passes=("every line's vertices lie inside the pool and no device `malloc` was counted: one "
                          'allocation in all')),
        chk.Check("a full pool answers full", 1, chk.RUNTIME, check_full_pool, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (the typed pool)"),
                  passes=('with a pool big enough no line is answered full; with a pool half the size some are, the '
                          'others lie inside it, and nothing is written past its end')),
        chk.Check("pool beats per-object malloc", 2, chk.RUNTIME, check_pool_beats_malloc, parent=UNIQUE,
                  hint=hint(HANDOUT, "2.2 (why per-object malloc is slow)"), timing=True,
                  passes=('per-object device `malloc` time / your `pool_alloc` time, measured in the same run, is at'
                          ' least {MIN_MALLOC_OVER_POOL}x')),
        chk.Check("warp aggregation beats one atomic per thread", 2, chk.RUNTIME, check_aggregation_speed,
                  parent=UNIQUE, hint=hint(HANDOUT, "2.3 (atomics and warp aggregation)"), timing=True,
                  passes=("the kit's one-atomic-per-thread counter time / your `counter_take` time, same run, is at "
                          'least {MIN_PER_THREAD_OVER_WARP}x')),
    ],
)
