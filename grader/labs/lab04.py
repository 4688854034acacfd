"""Lab 04: Bezier tessellation with streams and pool limits (grading rules).

The harness generates the lines from a seed the grader draws, checks every vertex of the flat and
the dynamic version against a double-precision reference, and reports what was allocated and
freed. Two timing cases compare, in the same run, the student's version against kit-owned
versions: named streams against the NULL stream, and CDP against flat on a heavy-tailed workload.
"""
import re

from gradelib import checks as chk
from gradelib import ptx
from gradelib.grading import launch_log_problem, per_case
from gradelib.labs import COMPILES, RUNS_CLEANLY, Lab, hint

HANDOUT = "handouts/04-bezier-streams.md"
DEFAULT_PENDING_LIMIT = 2048
TIMING_REPEATS = 7
# Thresholds on ratios of medians measured in the same run. On an H200 (RESULTS.md, 10 runs of each
# side): kit NULL-stream / solution 3.12-3.98 on the streams case, 0.80-1.21 for the NULL-stream
# submission; kit flat / solution 9.83-10.47 on the heavy case. Each threshold is at most half the
# solution's worst run.
MIN_NULL_OVER_NAMED = 1.5      # streams case: kit NULL-stream version time / the student's
MIN_FLAT_OVER_CDP_HEAVY = 4.0  # heavy case: kit flat version time / the student's CDP
TIMING_CASES = {
    # many children per parent block, each with real work: the NULL stream serializes them
    "streams": {"lines": 256, "workload": "heavy", "factor": 16, "max": 1 << 20},
    # one line in 256 carries 4M vertices: a flat block walks it alone
    "heavy": {"lines": 256, "workload": "heavy", "factor": 16, "max": 1 << 22},
    # the textbook's short lines: reported, never thresholded (flat wins by far)
    "short": {"lines": 1024, "workload": "chained", "factor": 16, "max": 32},
}


def make_cases(rng):
    """The textbook's sizes, more lines than the default pending-launch limit, a case whose worst case
    outgrows the default 8 MiB heap, a heavy-tailed case, seeded random sizes, and the two timing cases."""
    def case(lines, workload="chained", factor=16, max_vertices=32, repeats=0):
        return {"lines": lines, "workload": workload, "factor": factor, "max": max_vertices,
                "seed": rng.randint(1, 10 ** 9), "repeats": repeats}
    cases = [case(1000), case(12000), case(2048, factor=4096, max_vertices=8192),
             case(300, "heavy", max_vertices=1 << 16)]
    for _ in range(2):
        cases.append(case(rng.randint(1, 5000), factor=rng.choice((16, 256, 1024)),
                          max_vertices=rng.choice((32, 64, 1024))))
    for name, cfg in TIMING_CASES.items():
        cases.append(dict(cfg, seed=rng.randint(1, 10 ** 9), repeats=TIMING_REPEATS, timing=name))
    return cases


def harness_args(p):  # "timing" names a timing case for the checks; the harness does not need it
    return ["--lines", str(p["lines"]), "--workload", p["workload"], "--factor", str(p["factor"]),
            "--max", str(p["max"]), "--seed", str(p["seed"]), "--repeats", str(p["repeats"])]


def _kernel_calls(ctx, kernel):
    body = ctx.kernel_ptx(kernel)
    return set() if body is None else ptx.called_functions(body)


def check_launch_and_streams(ctx):
    calls = _kernel_calls(ctx, "tessellate_cdp")
    missing = [what for name, what in ((ptx.DEVICE_LAUNCH, "a device-side launch"),
                                       (ptx.DEVICE_STREAM_CREATE, "cudaStreamCreateWithFlags"))
               if name not in calls]
    if missing:
        return chk.failed("expected: tessellate_cdp launches its child into a stream it creates\n"
                          "actual:   no %s in the PTX of tessellate_cdp" % " and no ".join(missing),
                          fraction=0.5 if len(missing) == 1 else 0.0)
    return chk.passed()


_SET_PENDING = re.compile(r"cudaDeviceSetLimit\s*\(\s*cudaLimitDevRuntimePendingLaunchCount\b")


def check_pending_limit_raised(ctx):
    if _SET_PENDING.search(ctx.student_code()):  # comments do not count
        return chk.passed()
    return chk.failed("expected: host code that calls cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, ...)\n"
                      "actual:   no such call outside comments")


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
        if result.get("first_bad_what") == "wrong vertices":
            first += ", vertex %d is (%g, %g), expected (%g, %g)" % (
                result["first_bad_index"], result["first_got_x"], result["first_got_y"],
                result["first_want_x"], result["first_want_y"])
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


def _timing(ctx, name):
    """(run, timing_ms) of the timing case called name, or (run, None)."""
    for run in ctx.runs:
        if run.params.get("timing") == name:
            return run, run.doc.get("timing_ms")
    return None, None


def _ratio_check(ctx, case, numerator, threshold, what, extra=""):
    run, t = _timing(ctx, case)
    if not t or not t.get("cdp_student"):
        return chk.failed("the %s timing case reported no timing" % case)
    ratio = t[numerator] / t["cdp_student"]
    message = ("%s: %s %.3f ms, yours %.3f ms: %.2fx faster (at least %.2fx wanted)%s"
               % (run.label(), what, t[numerator], t["cdp_student"], ratio, threshold, extra))
    return chk.passed(message) if ratio >= threshold else chk.failed(message)


def check_streams_beat_null(ctx):
    run, short = _timing(ctx, "short")
    extra = ""
    if short and short.get("cdp_student"):
        extra = ("\nnot graded, for reference: on the textbook's short lines (%s) flat took %.3f ms and your CDP "
                 "version %.3f ms: there a launch costs more than the work" % (run.label(), short["flat"],
                                                                              short["cdp_student"]))
    return _ratio_check(ctx, "streams", "cdp_null", MIN_NULL_OVER_NAMED, "the kit's NULL-stream version", extra)


def check_cdp_beats_flat_on_heavy_tail(ctx):
    return _ratio_check(ctx, "heavy", "flat", MIN_FLAT_OVER_CDP_HEAVY, "the kit's flat version")


LAB = Lab(
    name="04-bezier-streams",
    title="Lab 04: Bezier tessellation, streams and pool limits",
    handout=HANDOUT,
    make_cases=make_cases,
    harness_args=harness_args,
    build_hint=hint(HANDOUT, "3 (the lab, step by step)"),
    run_hint=hint(HANDOUT, "3 (the lab, step by step)"),
    starter_must_fail=("device launch into a created stream", "pending-launch limit raised on the host"),
    checks=[
        chk.Check("device launch into a created stream", 1, chk.STATIC, check_launch_and_streams, parent=COMPILES,
                  hint=hint(HANDOUT, "2.5 (streams: why the NULL stream serializes)")),
        chk.Check("pending-launch limit raised on the host", 1, chk.STATIC, check_pending_limit_raised,
                  parent=COMPILES, hint=hint(HANDOUT, "2.6 (the pending-launch pool and the device heap)")),
        chk.Check("flat vertices", 2, chk.RUNTIME, check_flat, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.3 (flat: a block per line)")),
        chk.Check("dynamic vertices", 3, chk.RUNTIME, check_dynamic, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (dynamic: a thread per line, a child grid per line)")),
        chk.Check("no line lost", 2, chk.RUNTIME, check_no_line_lost, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.6 (the pending-launch pool and the device heap)")),
        chk.Check("child stays inside its block", 1, chk.RUNTIME, check_inside_block, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (dynamic: a thread per line, a child grid per line)")),
        chk.Check("exact allocation", 1, chk.RUNTIME, check_exact_allocation, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.7 (memory: exact, and freed on the device)")),
        chk.Check("heap freed", 1, chk.RUNTIME, check_freed, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.7 (memory: exact, and freed on the device)")),
        chk.Check("named streams beat the NULL stream", 2, chk.RUNTIME, check_streams_beat_null,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.5 (streams: why the NULL stream serializes)")),
        chk.Check("CDP beats flat on the heavy tail", 2, chk.RUNTIME, check_cdp_beats_flat_on_heavy_tail,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.8 (when dynamic parallelism pays)")),
    ],
)
