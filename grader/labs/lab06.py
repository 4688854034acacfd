"""Lab 06: a parallel allocator (grading rules).

The harness asks the student's pool for slots from a full grid, several times more requests than
slots, and checks every answer on the host with a bitmap (unique, in range, exactly `capacity`
successes, the rest "full"); runs more than 2^32 requests through the counter (a 32-bit counter
must not wrap); collects Lab 04's Bezier vertices into one pool through the student's dynamic
kernels and checks them against Lab 04's double-precision reference; and times, in the same run,
the student's pool against per-object device malloc and the student's counter against the kit's
one-atomic-per-thread counter.
"""
import re

from gradelib import checks as chk
from gradelib import ptx
from gradelib.grading import launch_log_problem, per_case
from gradelib.labs import COMPILES, RUNS_CLEANLY, Lab, hint

HANDOUT = "handouts/06-parallel-allocator.md"
TIMING_REPEATS = 5
# Thresholds on ratios of medians measured in the same run. On an H100 (CUDA 13.0, tools/lab_figures.py
# lab06, 10 runs each): malloc / pool 3,518-3,837 for the solution; per-thread / counter_take
# 10.99-11.20 for the solution and 1.05 for the one-atomic-per-thread submission. Each threshold is
# far below half the solution's worst run and, for aggregation, well above the unaggregated 1.05.
MIN_MALLOC_OVER_POOL = 10.0       # per-object device malloc time / the student's pool_alloc time
MIN_PER_THREAD_OVER_WARP = 3.0    # the kit's one-atomic-per-thread counter time / the student's counter_take
WRAP_REQUESTS = (1 << 32) + (1 << 24)  # past 2^32: a counter that keeps adding wraps and hands out 0.. again
TIMING_CASE = {"objects": 1 << 18, "object_bytes": 128, "take_rounds": 32}

# What a warp-aggregated counter shows in PTX: the active mask or a vote/match, a shuffle, an atomic.
_AGGREGATE = re.compile(r"\b(activemask\.b32|vote(\.sync)?\.ballot|match\.any\.sync)")
_SHUFFLE = re.compile(r"\bshfl\.sync\b")
_ATOMIC = re.compile(r"\batom\.[\w.]*\b(add|cas)\b")
# Device-heap allocation, however it is spelled: malloc, cudaMalloc in device code, the kit's wrapper.
DEVICE_MALLOCS = ("malloc", "__cudaCDP2Malloc", "_Z17kit_device_mallocm")

CASE_DEFAULTS = {"capacity": 0, "requests": 0, "wrap_capacity": 4096, "wrap_requests": 0, "lines": 0,
             "workload": "chained", "factor": 16, "max": 32, "fit": 100, "objects": 0, "object_bytes": 128,
             "take_rounds": 0, "repeats": 0}
_HARNESS_OPTIONS = ("capacity", "requests", "wrap_capacity", "wrap_requests", "lines", "workload", "factor", "max",
                    "fit", "objects", "object_bytes", "take_rounds", "repeats", "seed")


def make_cases(rng):
    """Uniqueness: about a million slots and 4x the requests; a tiny capacity (1, 31, 32, 33) under many
    requests; fewer requests than slots. More than 2^32 requests through the counter. Part C: the textbook's
    lines, more lines than the default pending-launch limit, a heavy tail, a pool half the size needed.
    The timing case. Sizes and seeds are drawn from rng."""
    def case(part, **kw):
        p = dict(CASE_DEFAULTS, part=part, seed=rng.randint(1, 10 ** 9))
        p.update(kw)
        return p
    capacity = rng.randint((1 << 20) - 4096, (1 << 20) + 4096)
    small = rng.choice((1, 31, 32, 33))
    roomy = rng.randint(1000, 200000)
    return [
        case("uniqueness", capacity=capacity, requests=4 * capacity),
        case("uniqueness", capacity=small, requests=rng.randint(1000, 100000)),
        case("uniqueness", capacity=roomy, requests=rng.randint(roomy // 2, roomy)),
        case("wrap", wrap_capacity=rng.randint(1000, 100000), wrap_requests=WRAP_REQUESTS),
        case("collect", lines=1000),
        case("collect", lines=12000, factor=rng.choice((16, 256, 1024)), max=rng.choice((32, 64, 1024))),
        case("collect", lines=300, workload="heavy", max=1 << 16),
        case("collect", lines=rng.randint(500, 3000), factor=256, max=1024, fit=50),
        case("timing", repeats=TIMING_REPEATS, **TIMING_CASE),
    ]


def harness_args(p):  # "part" tells the checks which cases are theirs; the harness does not need it
    args = []
    for key in _HARNESS_OPTIONS:
        args += ["--" + key.replace("_", "-"), str(p[key])]
    return args


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
                                          (_SHUFFLE, "__shfl_sync"), (_ATOMIC, "an atomic add"))
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


def check_collect_launches(ctx):
    text = _reachable_text(ctx, "collect_vertices")
    if text is None or ptx.DEVICE_LAUNCH not in ptx.called_functions(text):
        return chk.failed("expected: collect_vertices launches fill_vertices from the device\n"
                          "actual:   no device-side launch in the PTX of collect_vertices")
    return chk.passed()


# ---- runtime: Part B ----

def _expected_successes(u):
    return min(u["requests"], u["capacity"])


def check_unique_slots(ctx):
    def evaluate(run):
        u = run.doc["uniqueness"]
        want = _expected_successes(u)
        problems = []
        if u["duplicates"]:
            problems.append("%d slot(s) handed out twice (first: slot %d, again to request %d)"
                            % (u["duplicates"], u["first_duplicate_index"], u["first_duplicate_request"]))
        if u["out_of_range"] or u["misaligned"]:
            problems.append("%d pointer(s) past the pool's %d slots, %d not at the start of a slot"
                            % (u["out_of_range"], u["capacity"], u["misaligned"]))
        if u["unique"] != want:
            problems.append("%d distinct slots handed out, expected all %d" % (u["unique"], want))
        if u["full"] != u["requests"] - want:
            problems.append("%d requests answered full (NULL), expected %d" % (u["full"], u["requests"] - want))
        if not problems:
            return None
        return ("%d requests from %d blocks of %d for %d slots: %s"
                % (u["requests"], u["blocks"], u["threads"], u["capacity"], "; ".join(problems)))
    return _per_case(ctx, "uniqueness", evaluate)


def check_walk(ctx):
    def evaluate(run):
        u = run.doc["uniqueness"]
        want = _expected_successes(u)
        if u["walked"] != want:
            return ("the host walks slots 0 .. min(counter.next, capacity) - 1, but counter.next ended at %d: "
                    "%d slots, expected %d" % (u["counter_next"], u["walked"], want))
        if u["unowned"]:
            return ("%d of the %d slots the host walked hold no record of a request that was given them "
                    "(first: slot %d)" % (u["unowned"], u["walked"], u["first_unowned_slot"]))
        return None
    return _per_case(ctx, "uniqueness", evaluate)


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
    first = ""
    if check.get("first_bad_line", -1) >= 0 and check.get("first_bad_what") == "wrong vertices":
        first = "; first: line %d, vertex %d is (%g, %g), expected (%g, %g)" % (
            check["first_bad_line"], check["first_bad_index"], check["first_got_x"], check["first_got_y"],
            check["first_want_x"], check["first_want_y"])
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
    runs = _runs(ctx, "timing")
    if not runs or not runs[0].doc.get("timing", {}).get("ran"):
        return None, None
    return runs[0], runs[0].doc["timing"]


def check_pool_beats_malloc(ctx):
    run, t = _timing(ctx)
    if t is None:
        return chk.failed("the timing case reported no timing")
    per_object, bulk, pool = t["per_object_malloc"], t["bulk"], t["pool"]
    if pool["objects_missing"] or pool["objects_wrong"]:
        return chk.failed("%d objects: your pool left %d without a slot and %d with a wrong value"
                          % (t["objects"], pool["objects_missing"], pool["objects_wrong"]))
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
    if mine <= 0:
        return chk.failed("the timing case measured no time for counter_take")
    ratio = baseline / mine
    message = ("%d requests (%d per thread, %d blocks of %d): the kit's one-atomic-per-thread counter %.3f ms, "
               "your counter_take %.3f ms: %.1fx faster (at least %.1fx wanted)"
               % (t["take_requests"], t["take_rounds"], run.doc["params"]["blocks"], t["threads"], baseline, mine,
                  ratio, MIN_PER_THREAD_OVER_WARP))
    return chk.passed(message) if ratio >= MIN_PER_THREAD_OVER_WARP else chk.failed(message)


UNIQUE = "unique slots within capacity"

LAB = Lab(
    name="06-parallel-allocator",
    title="Lab 06: a parallel allocator",
    handout=HANDOUT,
    make_cases=make_cases,
    harness_args=harness_args,
    build_hint=hint(HANDOUT, "3 (the lab, step by step)"),
    run_hint=hint(HANDOUT, "3 (the lab, step by step)"),
    starter_must_fail=("counter_take aggregates the warp", "collect_vertices launches a child grid"),
    checks=[
        chk.Check("counter_take aggregates the warp", 1, chk.STATIC, check_warp_aggregated, parent=COMPILES,
                  hint=hint(HANDOUT, "2.3 (atomics and warp aggregation)")),
        chk.Check("no device malloc in your file", 1, chk.STATIC, check_no_device_malloc, parent=COMPILES,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)")),
        chk.Check("collect_vertices launches a child grid", 1, chk.STATIC, check_collect_launches, parent=COMPILES,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)")),
        chk.Check(UNIQUE, 3, chk.RUNTIME, check_unique_slots, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (the bounded counter)")),
        chk.Check("the host walks the allocated slots", 1, chk.RUNTIME, check_walk, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (the typed pool)")),
        chk.Check("no index twice past 2^32 requests", 1, chk.RUNTIME, check_no_wrap, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (the bounded counter)")),
        chk.Check("part C vertices", 2, chk.RUNTIME, check_collect_vertices, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)")),
        chk.Check("one allocation for all lines", 1, chk.RUNTIME, check_one_allocation, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.6 (collecting output from dynamic kernels)")),
        chk.Check("a full pool answers full", 1, chk.RUNTIME, check_full_pool, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (the typed pool)")),
        chk.Check("pool beats per-object malloc", 2, chk.RUNTIME, check_pool_beats_malloc, parent=UNIQUE,
                  hint=hint(HANDOUT, "2.2 (why per-object malloc is slow)")),
        chk.Check("warp aggregation beats one atomic per thread", 2, chk.RUNTIME, check_aggregation_speed,
                  parent=UNIQUE, hint=hint(HANDOUT, "2.3 (atomics and warp aggregation)")),
    ],
)
