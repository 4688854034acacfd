"""Lab 07: the Mandelbrot set by Mariani-Silver subdivision (grading rules).

The harness computes the kit's exhaustive image (kit_dwell for every pixel), applies the rule of
mandelbrot.h to it on the host (the image the rule gives, every rectangle it visits, its grids per
depth), runs the student's mariani_silver on the whole image and compares: every pixel, every
rectangle reported. The expected values all come from the kit's own exhaustive run of the same case.
Two timing cases compare, in the same run, the student's subdivision with the kit's exhaustive kernel.
"""
import re

from gradelib.rubric import (COMPILES, RUNS_CLEANLY, Contract, Imports, Lab, chk, compiles, hint,
                             launch_log_problem, launched_grids_problem, launches_checked_in_order,
                             memcheck_clean, per_case, ptx, runs_cleanly, side_by_side_stream_problems,
                             timing_run)

HANDOUT = "handouts/07-mandelbrot.md"
VIEWS = ("full", "seahorse", "elephant", "spiral", "minibrot", "antenna")  # views[] in the harness
DEFAULT_PENDING_LIMIT = 2048
MS_THREADS = 256  # mandelbrot.h: the threads of each mariani_silver grid's one block
SUBDIV = 4  # mandelbrot.h: a rectangle that splits makes SUBDIV x SUBDIV squares
# The image may differ from the exhaustive one where a filament crosses a rectangle without touching
# its border: at most this fraction of the pixels, or what the rule itself gives on the case's view,
# whichever is more. Measured (tools/measure_thresholds.py, handouts/figures/data/thresholds.json):
# the rule's own images differed in at most 0.0004% of the pixels over the 162 distinct cases the grader
# draws for 50 seeds on an H100, 24 times less than this.
MAX_UNLIKE_EXHAUSTIVE = 0.0001
TIMING_REPEATS = 7
# The same-run ratio the uniform timing case must reach: the kit's exhaustive kernel's median over the
# student's, at least as fast. Both sides, 10 runs each, in handouts/figures/data/thresholds.json.
# The solution's threads 0..15 each launch one square, side by side, and each thread's share of the
# border stops at its first pixel unlike the corner: on an H100 its worst run was 3.68x; the
# one-thread-launches alternative (thread 0 launches all sixteen, every border pixel computed) and the
# created-streams alternative reached 2.02x at worst, twice this; the known-wrong fill-computes's best
# 0.05x, twenty times below.
MIN_EXHAUSTIVE_OVER_CDP = 1.0
# The harness's GIVE_UP_SLOWER: it stops timing a subdivision once its warm-up and first timed run each took
# this many times the exhaustive kernel's median (ten times below MIN_EXHAUSTIVE_OVER_CDP: no later run could
# pass). The slowest correct variant is at 2.02x, twenty times above it; fill-computes at 0.05x, below it.
GIVE_UP_SLOWER = 10
# The timing cases are 4,096 pixels a side with max_depth 4: their squares stop at 64 x 64, as at 8,192
# with max_depth 5, for a quarter of the exhaustive kernel's work, so that a grading holds the GPU alone
# for under a second, not four.
TIMING_CASES = {
    # most of the area inside the set's main body: whole rectangles filled, their inside never computed
    "uniform": {"width": 4096, "height": 4096, "view": "full", "zoom": 2, "max_dwell": 4096, "max_depth": 4,
                "min_side": 16},
    # filaments everywhere: little to fill, a launch per rectangle for nothing. Never thresholded, so the
    # grader does not run it (it held the GPU alone 0.4 s of the solution's 1.0 s, and 6.9 s of null-stream's
    # 14.7 s, in a class on an H200: RESULTS.md); the feedback says how to time it (make run), and
    # tools/measure_thresholds.py records it for the solution.
    "filaments": {"width": 4096, "height": 4096, "view": "seahorse", "zoom": 14, "max_dwell": 4096,
                  "max_depth": 4, "min_side": 16},
}
GRADED_TIMING = "uniform"
FEEDBACK_FIGURE_SIDE = 256


def make_cases(rng):
    """The whole set, clipped rectangles (sizes that are no multiple of any side), one-pixel strips
    (every pixel is border), a cutoff at the first rectangle, more child grids than the default
    pending-launch pool by ten times, seeded regions of every view and zoom, and the uniform timing case."""
    def case(width, height, view="full", zoom=0, max_dwell=512, max_depth=5, min_side=16, seed=0):
        return {"width": width, "height": height, "view": view, "zoom": zoom, "seed": seed, "max_dwell": max_dwell,
                "max_depth": max_depth, "min_side": min_side}
    cases = [
        case(1024, 1024),                                     # 3,056 child grids: past the default pool
        case(300, 200, max_depth=4, min_side=8, max_dwell=256),
        # one pixel, a row along the real axis and a column through a minibrot: every pixel is border, and
        # both cross uniform stretches
        case(1, 1), case(1014, 1, max_dwell=256, min_side=4), case(1, 700, "minibrot", 4),
        # squares cut to two columns at the right edge and two rows at the bottom, in the set's main body
        case(258, 258, zoom=1, max_dwell=256, min_side=4),
        case(640, 480, "elephant", 3, max_depth=1),           # never splits
        case(4096, 4096, max_depth=5, min_side=16),           # about 26,000 child grids
        # filaments everywhere: every square splits down to the cutoff, 4,368 child grids, more than the
        # squares of the last level alone (4,096)
        case(1024, 1024, "seahorse", 14, max_dwell=1024),
        # every square splits again, and the bound prepare_mandelbrot computes is 2,049: one past the
        # default pool
        case(320, 384, "seahorse", 14, max_dwell=1024, max_depth=4, min_side=8),
    ]
    # The student's figure, in the feedback page, from the whole set.
    cases[0]["figure"] = FEEDBACK_FIGURE_SIDE
    for _ in range(3):
        cases.append(case(rng.randint(2, 1500), rng.randint(2, 1500), rng.choice(VIEWS), rng.randint(0, 24),
                          rng.choice((64, 256, 1024, 4096)), rng.randint(2, 6), rng.choice((4, 8, 16, 32, 64)),
                          rng.randint(1, 10 ** 9)))
    return cases + [dict(TIMING_CASES[GRADED_TIMING], seed=0, repeats=TIMING_REPEATS, timing=GRADED_TIMING)]


# The harness's contract (common/harness/07-mandelbrot/harness.cu). The cases share a process: before
# each, the harness puts the pending-launch limit back to the default, and the student's
# prepare_mandelbrot() sets it for the case.
HARNESS = Contract(
    result_keys=["lab", "device", "params", "pending_launch_limit", "rule", "rects", "grids_ran", "image",
                 "dwell_calls", "cdp_log"],
    optional_result_keys=["timing_ms", "figure"],
    grading_defaults={"figure": 0},  # the harness draws one by hand (make run); the grader asks in one case
    case_keys=["timing"])


def _rect(r):
    return "(x %d, y %d, side %d, depth %d)" % tuple(r) if r else "-"


def check_recursive_launch_and_streams(ctx):
    """mariani_silver launches mariani_silver (its own address in its PTX, beside a device launch), every
    launch into cudaStreamFireAndForget or into a stream the code created. The NULL stream runs a
    block's launches one after another; the tail-launch stream runs a grid's after the grid ends."""
    body, mangled = "", ""
    for text in ctx.ptx.values():  # the kernel and the device functions it calls (a launch may sit in one)
        entry = ptx.kernel_text(text, "mariani_silver")
        if entry is not None:
            mangled = next(iter(ptx.entries(entry)))
            body = ptx.reachable_text(ptx.definitions(text), "mariani_silver")
    calls = ptx.called_functions(body)
    problems = []
    if ptx.DEVICE_LAUNCH not in calls:
        problems.append("no device-side launch")
    elif not mangled or not re.search(r"\b%s\s*;" % re.escape(mangled), body):  # the launch takes its address
        problems.append("a device launch, but not of mariani_silver itself")
    problems += side_by_side_stream_problems(body, "mariani_silver")
    if not problems:
        return chk.passed()
    return chk.failed("expected: mariani_silver launches mariani_silver for each square, into cudaStreamFireAndForget "
                      "or a stream its thread creates\n"
                      "actual:   %s in the PTX of mariani_silver" % "; ".join(problems))


# The device-side synchronize of the legacy model (CDP1), gone from CUDA 12 for CDP2 code: what a
# file that forces the legacy model (CUDA_FORCE_CDP1_IF_SUPPORTED, before sm_90) can still call.
DEVICE_SYNCHRONIZE = ("cudaDeviceSynchronize",)


def check_no_device_synchronize(ctx):
    found = sorted(f for f in ctx.ptx_calls() if f in DEVICE_SYNCHRONIZE)
    if not found:
        return chk.passed()
    return chk.failed("expected: no device-side cudaDeviceSynchronize (a parent never waits for its children here: "
                      "each child writes its own pixels)\n"
                      "actual:   your PTX calls %s (the legacy model, which sm_90 and later cannot load)"
                      % ", ".join(found))


def check_launches_checked_in_order(ctx):
    """Every device launch in the student's files, in mariani_silver or in a function it calls."""
    return launches_checked_in_order(ctx, require_launch=True)


def top_side(width, height, min_side):
    """top_side() of mandelbrot.h: min_side times the smallest power of SUBDIV that covers the image."""
    side = min_side
    while side < max(width, height):
        side *= SUBDIV
    return side


def most_child_grids(width, height, max_depth, min_side):
    """The contract's worst case (mandelbrot.h, prepare_mandelbrot): the child grids the subdivision of a
    width x height image can launch whatever the view, every square of every depth the cutoffs let it
    reach (a split needs depth + 1 < max_depth and side > min_side) that starts inside the image."""
    side, depth, grids = top_side(width, height, min_side), 0, 0
    while depth + 1 < max_depth and side > min_side:
        side //= SUBDIV
        depth += 1
        grids += -(-width // side) * -(-height // side)
    return grids


def check_pending_limit(ctx):
    """Every child grid the subdivision can launch may be pending at once (a parent's launch slot is held
    until its children end): the limit in effect after prepare_mandelbrot (read back by the harness) must
    cover the contract's worst case for the case's image and cutoffs, computed here from the case's
    parameters; what the rule launched on this view may be fewer, and a pool sized to it would fail on
    another view of the same image."""
    def evaluate(run):
        p = run.params
        limit = run.doc["pending_launch_limit"]
        need = most_child_grids(p["width"], p["height"], p["max_depth"], p["min_side"])
        if limit < need:
            return ("expected a pending-launch limit of at least %d (the most child grids the subdivision of a %d x "
                    "%d image can launch, max depth %d, min side %d; the rule launched %d on this view); after "
                    "prepare_mandelbrot it was %d%s" % (
                        need, p["width"], p["height"], p["max_depth"], p["min_side"], run.doc["rule"]["child_grids"],
                        limit, " (the default: never raised)" if limit == DEFAULT_PENDING_LIMIT else ""))
        return None
    return per_case(ctx, evaluate)


def _launched_nothing(run):
    """Why a check about launches has nothing to look at in this run, or None: the rule launches child
    grids on the case, and the run launched none (so none could fail, and none was left unchecked)."""
    log, need = run.doc["cdp_log"], run.doc["rule"]["child_grids"]
    if need and not log["checked"] and not log["failed"] and run.doc["grids_ran"] <= 1:
        return ("the rule launches %d child grids on this image, and your run launched none: there was no launch "
                "to look at" % need)
    return None


def check_no_launch_failed(ctx):
    """The subdivision's launch log (cdp_log, not the launch_log that fails "runs cleanly": a launch past
    a pool the student sized too small is this check's business). A run that launched nothing where the
    rule launches children passes nothing here."""
    return per_case(ctx, lambda run: launch_log_problem(run.doc["cdp_log"]) or _launched_nothing(run))


def check_every_launch_checked(ctx):
    """One KIT_CHECK_LAUNCH per child grid: the grids that ran (all but the host's) plus the failed launches."""
    return per_case(ctx, lambda run: launched_grids_problem(run.doc["cdp_log"], max(run.doc["grids_ran"] - 1, 0))
                    or _launched_nothing(run))


def check_subdivision(ctx):
    """The rectangles reported (one per grid in the image) equal, as a multiset, those the rule visits on
    the kit's exhaustive image, each a grid of one block of MS_THREADS threads: a version that never
    splits, splits everywhere, ignores a cutoff, or launches a square twice fails here."""
    def evaluate(run):
        rects, rule = run.doc["rects"], run.doc["rule"]
        if rects.get("same_grid"):  # absent from documents recorded before the harness wrote it
            return ("expected one report_rect call per grid (its rectangle, from its first thread); %d reports came "
                    "from grids that had already reported (the kit tells grids apart by their %%gridid): a "
                    "rectangle reported is a grid that ran" % rects["same_grid"])
        if rects["misshapen"]:
            return ("expected every grid to be one block of %d threads (MS_THREADS); %d were not (the first: %d "
                    "block(s) of %d threads)" % (MS_THREADS, rects["misshapen"], *rects["first_misshapen"]))
        if not rects["missing"] and not rects["extra"] and rects["reported"] == rule["rects"]:
            return None
        return ("expected the rule's %d rectangles, grids per depth %s; yours: %d reported, grids per depth %s "
                "(%d of the rule's missing, first %s; %d not the rule's, first %s)"
                % (rule["rects"], rule["grids_per_depth"], rects["reported"], rects["grids_per_depth"],
                   rects["missing"], _rect(rects["first_missing"]), rects["extra"], _rect(rects["first_extra"])))
    return per_case(ctx, evaluate)


def check_image_follows_rule(ctx):
    """Every pixel as the rule gives it: the border's dwell where the rule fills, kit_dwell where it
    computes pixel by pixel (those match the exhaustive image exactly)."""
    def evaluate(run):
        image = run.doc["image"]
        if not image["unlike_rule"]:
            return None
        px, py, got, want = image["first_unlike_rule"]
        return ("%d of %d pixels differ from the rule's image (%d of them where the rule computes each pixel, %d "
                "never written); first: pixel (%d, %d) is %d, the rule gives %d"
                % (image["unlike_rule"], image["pixels"], image["unlike_rule_computed"], image["unwritten"], px, py,
                   got, want))
    return per_case(ctx, evaluate)


def allowed_unlike_exhaustive(run):
    """How many pixels may differ from the exhaustive image: MAX_UNLIKE_EXHAUSTIVE of them, or as many as
    the rule's own image has on this view, whichever is more."""
    return max(int(MAX_UNLIKE_EXHAUSTIVE * run.doc["image"]["pixels"]), run.doc["rule"]["unlike_exhaustive"])


def check_close_to_exhaustive(ctx):
    def evaluate(run):
        image = run.doc["image"]
        allowed = allowed_unlike_exhaustive(run)
        if image["unlike_exhaustive"] <= allowed:
            return None
        return ("%d of %d pixels (%.3f%%) differ from the exhaustive image; at most %d may (%.3f%%, or what the rule "
                "itself misses on this view: %d)" % (
                    image["unlike_exhaustive"], image["pixels"], 100.0 * image["unlike_exhaustive"] / image["pixels"],
                    allowed, 100.0 * MAX_UNLIKE_EXHAUSTIVE, run.doc["rule"]["unlike_exhaustive"]))
    return per_case(ctx, evaluate)


def _filled_share(run):
    rule = run.doc["rule"]
    return 100.0 * rule["filled_pixels"] / run.doc["image"]["pixels"]


def _follows_rule(run):
    doc = run.doc
    return not (doc["image"]["unlike_rule"] or doc["rects"]["missing"] or doc["rects"]["extra"]
                or launch_log_problem(doc["cdp_log"]))


def check_beats_exhaustive(ctx):
    """Where most of the area is uniform, the subdivision skips it: the kit's exhaustive kernel over the
    student's, medians in the same run. A time counts only for the subdivision the rule asks for, its
    image the rule's: doing less is faster; and only if every timed run made that image again (the harness
    poisons the image before each and compares it after). Where filaments are everywhere it says how to
    time that case, which the grader does not run. The harness times no subdivision that differs from the
    rule, and gives up timing one that is GIVE_UP_SLOWER times slower than its kernel after one timed run."""
    run, t = timing_run(ctx, GRADED_TIMING)
    if run is not None and run.doc and not _follows_rule(run):
        return chk.failed("%s: the image or the rectangles of the timed subdivision differ from the rule's, or a "
                          "launch failed (the checks above say how): its time does not count" % run.label())
    if not t or not t.get("cdp_student"):
        return chk.failed("the uniform timing case reported no timing")
    if t.get("cdp_student_wrong_runs") is None:
        return chk.failed("%s: the timing case did not say whether each timed run was checked" % run.label())
    if t["cdp_student_wrong_runs"]:
        return chk.failed("%s: %d of your %d timed runs (the warm-up's included) left an image unlike the rule's (the "
                          "first: %d pixels): each timed run starts from a poisoned image and must compute it again, "
                          "so a run that skipped its work (state kept from an earlier launch) does not count"
                          % (run.label(), t["cdp_student_wrong_runs"], t["cdp_student_runs"],
                             t["cdp_student_first_unlike"]))
    ratio = t["exhaustive"] / t["cdp_student"]
    message = ("%s: %.0f%% of the pixels filled by the rule; the kit's exhaustive kernel %.3f ms, yours %.3f ms: "
               "%.2fx faster (at least %.2fx wanted)" % (run.label(), _filled_share(run), t["exhaustive"],
                                                         t["cdp_student"], ratio, MIN_EXHAUSTIVE_OVER_CDP))
    timed_runs = t["cdp_student_runs"] - 1  # after the warm-up
    if timed_runs < TIMING_REPEATS:
        message += ("\ntiming given up after %d timed run(s): the warm-up and each timed run took %gx the kit's "
                    "kernel or longer" % (timed_runs, GIVE_UP_SLOWER))
    filaments = dict(TIMING_CASES["filaments"], repeats=TIMING_REPEATS)
    message += ("\nnot graded: where filaments are everywhere, little is uniform and subdividing loses; to time it: "
                'make run LAB=%s ARGS="%s"' % (LAB.number, " ".join(HARNESS.argv(filaments))))
    return chk.passed(message) if ratio >= MIN_EXHAUSTIVE_OVER_CDP else chk.failed(message)


# The memcheck case: rectangles cut off at both edges (300 x 200 in squares of 512, 128, 32 and 8).
MEMCHECK_CASE = {"width": 300, "height": 200, "view": "full", "zoom": 0, "max_dwell": 256, "max_depth": 4,
                 "min_side": 8}


# What the student's objects may import beyond what every lab may (gradelib.objects): the kit's dwell and its report (mandelbrot.h).
IMPORTS = Imports(device=("kit_dwell", "report_rect"))


LAB = Lab(
    name="07-mandelbrot",
    title="Lab 07: adaptive Mandelbrot (Mariani-Silver)",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case=dict(MEMCHECK_CASE, figure=FEEDBACK_FIGURE_SIDE),
    memcheck_case=MEMCHECK_CASE,
    # The uniform timing case took the solution 0.5 s alone on an H100; in a class on an H200 (RESULTS.md),
    # fill-computes, its timing given up, 2.3 s, and never-splits's checked run of it (one block computes
    # the whole image; not timed) 6.8 s; every other case of the solution and the known-wrong tests,
    # shared by 16 runs, at most 0.84 s.
    time_limit=12,
    imports=IMPORTS,
    starter_must_fail=("recursive launch into fire-and-forget or a created stream",
                       "launches checked right after them"),
    checks=[
        compiles(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                 passes="your file builds with the kit's flags (`-rdc=true`)"),
        runs_cleanly(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                     passes='every case ends in time, with no CUDA error, and writes its result'),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: 300 x 200 of the whole"
                               ' set, max dwell 256, `max_depth` 4, `min_side` 8 (`--width 300 --height 200 '
                               '--max-dwell 256 --max-depth 4 --min-side 8`)')),
        chk.Check("recursive launch into fire-and-forget or a created stream", 1, chk.STATIC,
                  check_recursive_launch_and_streams, parent=COMPILES,
                  hint=hint(HANDOUT, "2.3 (subdividing with child grids)"),
                  passes=('the PTX of `mariani_silver` (with the device functions it calls) has a device launch of '
                          '`mariani_silver` itself, and every device launch there goes into '
                          '`cudaStreamFireAndForget` (the constant 4) or into a stream variable, with '
                          '`cudaStreamCreateWithFlags` there too; never the NULL stream (0) or '
                          '`cudaStreamTailLaunch` (3)')),
        chk.Check("no device-side synchronize", 1, chk.STATIC, check_no_device_synchronize, parent=COMPILES,
                  hint=hint(HANDOUT, "2.3 (subdividing with child grids)"),
                  passes=("your PTX calls no device-side `cudaDeviceSynchronize` (the legacy model's, which no "
                          'parent here needs)')),
        chk.Check("launches checked right after them", 1, chk.STATIC, check_launches_checked_in_order,
                  parent=COMPILES, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                  passes=('in the PTX of your file, a `cudaGetLastError()` follows every device launch on every '
                          'path; a file without a device launch fails too')),
        chk.Check("pending-launch limit covers the subdivision", 1, chk.RUNTIME, check_pending_limit,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.4 (how many launches can be pending)"),
                  passes=('in every case, the limit in effect after `prepare_mandelbrot` is at least the most child '
                          'grids the subdivision of an image of that size can launch with those cutoffs (every '
                          'square of every depth it can reach), whatever the rule launched on that view')),
        chk.Check("no launch failed", 2, chk.RUNTIME, check_no_launch_failed, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (how many launches can be pending)"),
                  passes=("in every case, the subdivision's launch log counts no failed device launch and no failed "
                          'device runtime call; a run that launches nothing where the rule launches children has '
                          'nothing to show and fails too')),
        chk.Check("every launch checked", 1, chk.RUNTIME, check_every_launch_checked, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "3 (the lab, step by step)"),
                  passes=('in every case, the launch log counts one `KIT_CHECK_LAUNCH()` per child grid that ran '
                          "(every grid but the host's) plus one per launch that failed; a run that launches nothing "
                          'where the rule launches children fails too')),
        chk.Check("subdivision follows the rule", 3, chk.RUNTIME, check_subdivision, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.2 (the Mariani-Silver rule)"),
                  passes=('in every case, every grid is one block of `MS_THREADS` threads and reports one rectangle '
                          '(the kit tells grids apart by their grid id, not by `report_rect` calls), and the '
                          'rectangles your grids reported equal, as a multiset, the ones the rule visits on the '
                          "kit's exhaustive image")),
        chk.Check("image follows the rule", 3, chk.RUNTIME, check_image_follows_rule, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.2 (the Mariani-Silver rule)"),
                  passes=("in every case, every pixel equals the rule's image: the border's dwell where the rule "
                          'fills, `kit_dwell` where it computes')),
        chk.Check("image close to the exhaustive one", 2, chk.RUNTIME, check_close_to_exhaustive,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.5 (what filling misses)"),
                  passes=('in every case, at most a fraction {MAX_UNLIKE_EXHAUSTIVE} of the pixels differ from the '
                          "kit's exhaustive image, or as many as the rule's own image does there, whichever is more")),
        chk.Check("beats the exhaustive kernel where the area is uniform", 2, chk.RUNTIME, check_beats_exhaustive,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.6 (when subdividing pays)"), timing=True,
                  passes=('uniform timing case (4,096 x 4,096, `full` at zoom 2, max dwell 4,096, `max_depth` 4, '
                          "`min_side` 16): the kit's exhaustive median / yours ≥ {MIN_EXHAUSTIVE_OVER_CDP}, and "
                          "every timed run of yours (the warm-up's too) leaves the rule's image: the image is "
                          'poisoned before each run and compared after it')),
    ],
)
