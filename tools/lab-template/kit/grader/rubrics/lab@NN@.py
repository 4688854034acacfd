"""Lab @NN@: @WORDS@ (grading rules).

A placeholder exercise, from the kit's lab template (make new-lab): the lab's own replaces it. The harness runs
launch_parts<<<ceil(n / threads), threads>>>(out, n). Expected, computed here from the parameters:
out[i] == 2*i + 1 for every i in [0, n) (the harness reports sums of out, never a verdict); one
child grid of the kit's fill_part per block, which together wrote the n elements (the kit counts
the grids that ran and the elements they wrote); every device launch checked once.
"""
from gradelib.rubric import (COMPILES, RUNS_CLEANLY, Contract, Imports, Lab, chk, compiles, hint,
                             launched_grids_problem, launches_checked_in_order, memcheck_clean, per_case,
                             runs_cleanly)

HANDOUT = "handouts/@LAB@.md"
MAX_N = 1 << 16  # the harness's largest n
MIN_THREADS, MAX_THREADS = 32, 1024  # the harness's block sizes: at most 2,048 blocks, one launch each
SUM_MODULUS = 1 << 64  # the harness sums in 64-bit unsigned integers


def expected_value(i):
    """What fill_part writes to out[i]."""
    return 2 * i + 1


def expected_sums(n):
    """(sum of out[i], sum of i * out[i]) over [0, n), as the harness reports them (modulo 2^64)."""
    total = n * n
    weighted = 2 * (n - 1) * n * (2 * n - 1) // 6 + n * (n - 1) // 2
    return total % SUM_MODULUS, weighted % SUM_MODULUS


def blocks_of(params):
    return (params["n"] + params["threads"] - 1) // params["threads"]


def make_cases(rng):
    """Edge cases (one element, the harness's largest n with its smallest and largest blocks, a partly
    filled last block, blocks that are not a multiple of 32 threads) and three seeded random draws."""
    cases = [
        {"n": 1, "threads": MIN_THREADS},
        {"n": MAX_N, "threads": MIN_THREADS},
        {"n": MAX_N, "threads": MAX_THREADS},
        {"n": 1000, "threads": 256},
        {"n": 1025, "threads": 1000},
    ]
    for _ in range(3):
        cases.append({"n": rng.randint(1, MAX_N), "threads": rng.randint(MIN_THREADS, MAX_THREADS)})
    return cases


# The harness's contract (common/harness/@LAB@/harness.cu).
HARNESS = Contract(
    result_keys=["lab", "device", "params", "values", "child_grids", "child_writes", "launch_log"])


def check_launch_checked(ctx):
    return launches_checked_in_order(ctx, ("launch_parts",), require_launch=True)


def check_values(ctx):
    """Every element right, one child grid per block, and the n elements written in those grids."""
    def evaluate(run):
        p, doc = run.params, run.doc
        problems = []
        values = doc["values"]
        if (values["sum"], values["weighted"]) != expected_sums(p["n"]):
            unwritten = ("; %d never written (first: out[%d])" % (values["unwritten"], values["first_unwritten"])
                         if values["unwritten"] else "")
            problems.append("expected out[i] == 2*i + 1 for all %d elements; the sums differ%s" % (p["n"], unwritten))
        if doc["child_grids"] != blocks_of(p):
            problems.append("expected one child grid of fill_part per block (%d), %d ran"
                            % (blocks_of(p), doc["child_grids"]))
        if doc["child_writes"] != p["n"]:
            problems.append("expected the child grids to write the %d elements, once each; they wrote %d"
                            % (p["n"], doc["child_writes"]))
        launches = launched_grids_problem(doc["launch_log"], doc["child_grids"])
        if launches:
            problems.append(launches)
        return "; ".join(problems) or None
    return per_case(ctx, evaluate)


# The memcheck case: the harness's largest blocks, the last one partly filled.
MEMCHECK_CASE = {"n": 2500, "threads": MAX_THREADS}

# What the student's objects may import beyond what every lab may (gradelib.objects): the kit's child kernel.
IMPORTS = Imports(device=("fill_part",))


LAB = Lab(
    name="@LAB@",
    title="Lab @NN@: @WORDS@",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case={"n": 1000, "threads": 128},
    memcheck_case=MEMCHECK_CASE,
    imports=IMPORTS,
    starter_must_fail=("device launch checked in PTX",),
    checks=[
        compiles(2, hint=hint(HANDOUT, "2.1 (the launch)"),
                 passes="your file builds with the kit's flags (`-rdc=true`, linked with `cudadevrt`)"),
        runs_cleanly(1, hint=hint(HANDOUT, "2.2 (checking a launch)"),
                     passes="every case ends in time, with no CUDA error and no failed device launch in the launch log"),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: n = 2,500, blocks of "
                               "1,024 threads (`--n 2500 --threads 1024`)")),
        chk.Check("device launch checked in PTX", 2, chk.STATIC, check_launch_checked, parent=COMPILES,
                  hint=hint(HANDOUT, "2.2 (checking a launch)"),
                  passes=("the PTX of `launch_parts` has a device-side launch, and every device-side launch is "
                          "followed, on every path, by an error check (`KIT_CHECK_LAUNCH()`)")),
        chk.Check("values written by the child grids", 4, chk.RUNTIME, check_values, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "3 (the lab, step by step)"),
                  passes=("every `out[i]` is 2·i + 1; exactly one child grid of `fill_part` ran per block, and those "
                          "grids wrote the n elements; every launch was checked once")),
    ],
)
