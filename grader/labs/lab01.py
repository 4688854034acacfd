"""Lab 01: the divergent counter (grading rules).

The harness runs diverge_cta<<<K, 32*M>>>(foo, N). Expected, computed here from the parameters:
foo == K * (N*M + 5*(M-1)); exactly K child grids of entry_kernel, each 1 block of M threads.
"""
from gradelib import checks as chk
from gradelib import ptx
from gradelib.grading import per_case
from gradelib.labs import COMPILES, RUNS_CLEANLY, Lab, hint

HANDOUT = "handouts/01-divergent-counter.md"
MAX_K = 2048  # the harness's limit: one child per block stays inside the default pending-launch pool
LARGE_N = 1 << 20


def expected_foo(k, m, n):
    """M leaders per block do N increments each; the M-1 leaders other than thread 0 add x = 5."""
    return k * (n * m + 5 * (m - 1))


def make_cases(rng):
    """Edge cases (M=1, M=32, K=1, large N, many blocks) plus three seeded random draws."""
    cases = [
        {"K": 1, "M": 1, "N": 1},
        {"K": 1, "M": 32, "N": 1000},
        {"K": 3, "M": 32, "N": LARGE_N},
        {"K": 1000, "M": 17, "N": 64},
    ]
    for _ in range(3):
        cases.append({"K": rng.randint(1, 1000), "M": rng.randint(1, 32), "N": rng.randint(1, 2000)})
    return cases


def harness_args(p):
    return ["--K", str(p["K"]), "--M", str(p["M"]), "--N", str(p["N"]), "--repeats", "0"]


def reference_problem(p, doc):
    """The kit's flat reference must agree with the formula, or the machine (not the student) is at fault."""
    want = expected_foo(p["K"], p["M"], p["N"])
    if doc.get("reference_foo") != want:
        return ("the kit's flat reference computed %s, expected %d: the GPU or the kit is at fault, "
                "not your code" % (doc.get("reference_foo"), want))
    return None


def check_device_launch(ctx):
    if ptx.DEVICE_LAUNCH in ctx.ptx_calls():
        return chk.passed()
    return chk.failed("expected: a kernel launch from device code (a call to %s in the PTX of %s)\n"
                      "actual:   no device-side launch found"
                      % (ptx.DEVICE_LAUNCH, ", ".join(ctx.student_cu_files())))


def check_launch_checked(ctx):
    launches = ctx.ptx_call_count(ptx.DEVICE_LAUNCH)
    queries = ctx.ptx_call_count(ptx.DEVICE_GET_LAST_ERROR)
    if launches and queries >= launches:
        return chk.passed()
    return chk.failed("expected: cudaGetLastError() after every device-side launch, e.g. KIT_CHECK_LAUNCH()\n"
                      "actual:   %d launch(es), %d cudaGetLastError() call(s) in the PTX" % (launches, queries))


def check_counter(ctx):
    def evaluate(run):
        p = run.params
        want = expected_foo(p["K"], p["M"], p["N"])
        got = run.doc.get("student_foo")
        if got != want:
            return "expected foo = K*(N*M+5*(M-1)) = %d, got %s" % (want, got)
        return None
    return per_case(ctx, evaluate)


def check_grid_count(ctx):
    def evaluate(run):
        want, got = run.params["K"], run.doc.get("child_grids")
        if got != want:
            return "expected %d child grids of entry_kernel (one per block), %s ran" % (want, got)
        return None
    return per_case(ctx, evaluate)


def _shape_text(s):
    return "grid(%s) block(%s) x%d" % (",".join(map(str, s["grid"])), ",".join(map(str, s["block"])), s["count"])


def check_grid_shape(ctx):
    def evaluate(run):
        m = run.params["M"]
        want = {"grid": [1, 1, 1], "block": [m, 1, 1]}
        shapes = run.doc.get("child_shapes") or []
        wrong = [s for s in shapes if s["grid"] != want["grid"] or s["block"] != want["block"]]
        if not shapes:
            return "expected child grids of 1 block of %d threads, none ran" % m
        if wrong or run.doc.get("child_grids_other_shapes"):
            return "expected every child grid to be grid(1,1,1) block(%d,1,1), saw %s" % (
                m, "; ".join(_shape_text(s) for s in shapes))
        return None
    return per_case(ctx, evaluate)


LAB = Lab(
    name="01-divergent-counter",
    title="Lab 01: divergent counter",
    handout=HANDOUT,
    make_cases=make_cases,
    harness_args=harness_args,
    build_points=2,
    run_points=1,
    build_hint=hint(HANDOUT, "2.2 (the launch statement)"),
    run_hint=hint(HANDOUT, "2.4 (errors are per thread)"),
    run_problem=reference_problem,
    starter_must_fail=("device launch in PTX", "launch errors checked"),
    checks=[
        chk.Check("device launch in PTX", 2, chk.STATIC, check_device_launch, parent=COMPILES,
                  hint=hint(HANDOUT, "2.2 (the launch statement) and 3 (the lab, step by step)")),
        chk.Check("launch errors checked", 1, chk.STATIC, check_launch_checked, parent=COMPILES,
                  hint=hint(HANDOUT, "2.4 (errors are per thread)")),
        chk.Check("counter value", 4, chk.RUNTIME, check_counter, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (nesting and implicit completion)")),
        chk.Check("one child grid per block", 2, chk.RUNTIME, check_grid_count, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "3 (the lab, step by step)")),
        chk.Check("child grid shape", 2, chk.RUNTIME, check_grid_shape, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.2 (the launch statement)")),
    ],
)
