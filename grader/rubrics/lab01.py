"""Lab 01: the divergent counter (grading rules).

The harness runs diverge_cta<<<K, 32*M>>>(foo, N). Expected, computed here from the parameters:
foo == K * (N*M + 5*(M-1)); exactly K child grids of entry_kernel (counted by the kit, each grid
once by its identity), each 1 block of M threads, doing the K*M*N increments of the divergent phase
(the kit counts those done in its child grids and those done by entry_work called from diverge_cta).
One case injects launch failures (a pending-launch pool far smaller than K, children that stay
pending): launches must fail there, every failed launch must be seen by the check right after it,
and foo must hold exactly the work of the child grids that ran.
"""
from gradelib.rubric import (COMPILES, FAULT, RUNS_CLEANLY, Contract, Imports, Lab, barrier_reached,
                             chk, compiles, hint, launched_grids_problem, launches_checked_in_order,
                             memcheck_clean, per_case, ptx, runs_cleanly)

HANDOUT = "handouts/01-divergent-counter.md"
MAX_K = 2048  # the harness's limit: one child per block stays inside the default pending-launch pool
MAX_N = 1 << 24  # the harness's largest N
LARGE_N = 1 << 20


def expected_foo(k, m, n):
    """M leaders per block do N increments each; the M-1 leaders other than thread 0 add x = 5."""
    return k * (n * m + 5 * (m - 1))


# The fault case: MAX_K blocks launch into a pending-launch pool of half the default, while every
# child grid stays pending for 2 ms. (A pool of 32 launches hung the device runtime in 1 of about 50
# runs on an H100; halving the default pool, as Lab 03's known-wrong submissions do, never did.)
FAULT_K = MAX_K
FAULT_PENDING_LIMIT = 1024
FAULT_CHILD_SPIN_US = 2000


def make_cases(rng):
    """Edge cases (M=1, 31 and 32, K=1, K at the harness's limit, a large N and the harness's largest),
    three seeded random draws, and the fault case: about half of its launches fail, and the checks see
    whether the student's code saw that."""
    cases = [
        {"K": 1, "M": 1, "N": 1},
        {"K": 1, "M": 32, "N": 1000},
        {"K": 3, "M": 32, "N": LARGE_N},
        {"K": MAX_K, "M": 17, "N": 64},
        {"K": 2, "M": 31, "N": 33},
        {"K": 1, "M": 2, "N": MAX_N},
    ]
    for _ in range(3):
        cases.append({"K": rng.randint(1, 1000), "M": rng.randint(1, 32), "N": rng.randint(1, 2000)})
    cases.append({"K": FAULT_K, "M": rng.randint(1, 8), "N": rng.randint(1, 64), FAULT: True,
                  "pending_limit": FAULT_PENDING_LIMIT, "child_spin_us": FAULT_CHILD_SPIN_US})
    return cases



# The harness's contract (common/harness/01-divergent-counter/harness.cu). Graded runs time nothing.
HARNESS = Contract(
    result_keys=["lab", "device", "params", "student_foo", "reference_foo", "child_grids", "child_shapes",
                 "child_grids_other_shapes", "pending_launch_limit", "launch_log"],
    # "work": the divergent phase's increments by where they ran (documents recorded before it have none).
    optional_result_keys=["timing", "work"],
    grading_defaults={"repeats": 0},
    case_keys=[FAULT])


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
    return launches_checked_in_order(ctx, require_launch=True)


def check_barrier_reached(ctx):
    return barrier_reached(ctx, "diverge_cta", "the other leaders read x, which thread 0 writes")


def _clean_runs(ctx):
    return [r for r in ctx.runs if not r.params.get(FAULT)]


def check_counter(ctx):
    def evaluate(run):
        p = run.params
        want = expected_foo(p["K"], p["M"], p["N"])
        got = run.doc.get("student_foo")
        if got != want:
            return "expected foo = K*(N*M+5*(M-1)) = %d, got %s" % (want, got)
        return None
    return per_case(ctx, evaluate, runs=_clean_runs(ctx))


def check_grid_count(ctx):
    """K grids of entry_kernel ran, and they did the divergent phase's work: child grids launched with
    nothing to do while diverge_cta's leaders call entry_work themselves are not the lab's design."""
    def evaluate(run):
        p = run.params
        want, got = p["K"], run.doc.get("child_grids")
        if got != want:
            return "expected %d child grids of entry_kernel (one per block), %s ran" % (want, got)
        work = run.doc.get("work")
        if work is not None:
            whole = p["K"] * p["M"] * p["N"]
            if work["in_child_grids"] != whole or work["elsewhere"]:
                return ("expected the child grids to do the divergent work, K*M*N = %d increments; they did %d, and "
                        "entry_work called from diverge_cta did %d" % (whole, work["in_child_grids"], work["elsewhere"]))
        return None
    return per_case(ctx, evaluate, runs=_clean_runs(ctx))


def check_failures_seen(ctx):
    """Every launch is checked once, right after it (every case); in the fault case, launches fail (the
    pool holds FAULT_PENDING_LIMIT of FAULT_K launches made within microseconds, each pending for
    FAULT_CHILD_SPIN_US), the failed launches are exactly those whose grids never ran, and foo holds only
    the work of the grids that did."""
    def evaluate(run):
        p, doc = run.params, run.doc
        log, grids = doc["launch_log"], doc["child_grids"]
        problem = launched_grids_problem(log, grids)
        if problem or not p.get(FAULT):
            return problem
        limit = doc["pending_launch_limit"]
        if log["failed"] == 0:
            return ("expected failed launches, seen by KIT_CHECK_LAUNCH(): %d launches into a pending-launch pool "
                    "of %d, each child pending for %d us; the launch log counted none failed (%d child grids ran, "
                    "%d launches checked): a failure cleared before KIT_CHECK_LAUNCH() saw it, or a launch retried "
                    "until it fitted, hides it from the launch log" % (p["K"], limit, p["child_spin_us"], grids,
                                                                        log["checked"]))
        # Either the failed blocks' work is lost, or the code did it another way (a fallback), once.
        lost = grids * p["N"] * p["M"] + 5 * p["K"] * (p["M"] - 1)
        whole = expected_foo(p["K"], p["M"], p["N"])
        if doc["student_foo"] not in (lost, whole):
            return ("with a pending-launch limit of %d, %d of %d launches failed and %d child grids ran: expected "
                    "foo = grids*N*M + K*5*(M-1) = %d (the failed blocks' work lost), or %d (done another way, "
                    "once), got %d" % (limit, log["failed"], p["K"], grids, lost, whole, doc["student_foo"]))
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


# The memcheck case: blocks of 32 warps, the most the harness takes (a per-warp array's last entry).
MEMCHECK_CASE = {"K": 3, "M": 32, "N": 100}


# What the student's objects may import beyond what every lab may (gradelib.objects): the kit's child kernel and its work.
IMPORTS = Imports(device=("entry_kernel", "entry_work"))


LAB = Lab(
    name="01-divergent-counter",
    title="Lab 01: divergent counter",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case={"K": 5, "M": 3, "N": 7},
    memcheck_case=MEMCHECK_CASE,
    imports=IMPORTS,
    starter_must_fail=("device launch in PTX", "launch errors checked"),
    checks=[
        compiles(2, hint=hint(HANDOUT, "2.2 (the launch statement)"),
                 passes="your file builds with the kit's flags (`-rdc=true`, linked with `cudadevrt`)"),
        runs_cleanly(1, hint=hint(HANDOUT, "2.4 (errors are per thread)"), problem=reference_problem,
                     passes=('every case ends in time, with no CUDA error and no failed device launch in the launch '
                             'log')),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: K = 3, M = 32, N = 100"
                               ' (`--K 3 --M 32 --N 100`)')),
        chk.Check("device launch in PTX", 2, chk.STATIC, check_device_launch, parent=COMPILES,
                  hint=hint(HANDOUT, "2.2 (the launch statement) and 3 (the lab, step by step)"),
                  passes=('the PTX of your file contains a device-side launch (`__cudaCDP2LaunchDeviceV2`), which is'
                          ' what a `<<<>>>` launch in device code becomes')),
        chk.Check("launch errors checked", 1, chk.STATIC, check_launch_checked, parent=COMPILES,
                  hint=hint(HANDOUT, "2.4 (errors are per thread)"),
                  passes=('in the PTX, every device-side launch is followed, on every path, by an error check '
                          "(`__cudaCDP2GetLastError`, from `cudaGetLastError()`, or the kit's `kit_check_launch`, "
                          'from `KIT_CHECK_LAUNCH()`): a check placed before the launch, or on one branch only, does'
                          ' not count')),
        chk.Check("every thread reaches the barrier", 1, chk.STATIC, check_barrier_reached, parent=COMPILES,
                  hint=hint(HANDOUT, "2.6 (the divergence the lab removes)"),
                  passes=('in the PTX of `diverge_cta`, no thread can return without passing `__syncthreads()` '
                          '(section 2.6, the barrier trap)')),
        chk.Check("counter value", 4, chk.RUNTIME, check_counter, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (nesting and implicit completion)"),
                  passes='`foo` equals K·(N·M + 5·(M − 1)) in every case'),
        chk.Check("one child grid per block", 2, chk.RUNTIME, check_grid_count, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "3 (the lab, step by step)"),
                  passes=('exactly K child grids of `entry_kernel` ran (each counted once, by its identity), and '
                          'they did the divergent work: the kit counts the increments made in them and those made by'
                          ' `entry_work` called from `diverge_cta`')),
        chk.Check("child grid shape", 2, chk.RUNTIME, check_grid_shape, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.2 (the launch statement)"),
                  passes='every child grid was 1 block of M threads'),
        chk.Check("failed launches seen by the launching thread", 2, chk.RUNTIME, check_failures_seen,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.4 (errors are per thread)"),
                  passes=("every launch was checked once (the launch log's checks equal the grids that ran plus the "
                          'launches that failed); in the fault case below, launches fail (its pool cannot hold them '
                          'all), the failed launches are exactly those whose grids never ran, and `foo` holds the '
                          "work of the grids that ran (or all of it, if your code does a failed block's work another"
                          ' way, once)')),
    ],
)
