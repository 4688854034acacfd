"""Lab 03: nested recursion (grading rules).

Part A: nested_hello<<<B, n>>>(n, 0); the expected (depth, block, thread) records are computed here
from B and n. Part B: deep_chain to depth D with no failed launch.
"""

from gradelib import checks as chk
from gradelib import ptx
from gradelib.diff import multiset_diff
from gradelib.grading import (COMPILES, RUNS_CLEANLY, compiles, explained, launched_grids_problem,
                             launches_checked_in_order, per_case, memcheck_clean, runs_cleanly)
from gradelib.harness import Contract, Option
from gradelib.registry import Lab, hint

HANDOUT = "handouts/03-nested-recursion.md"
MAX_DEPTH = 100000  # the harness's largest --depth: one case goes there


def expected_records(blocks, threads):
    """The tree: B blocks of n threads at depth 0; every block whose size halves to more than 0
    launches one block of size // 2 at the next depth. Levels after the first have one block, B of
    them (one chain per top-level block)."""
    records = [(0, b, t) for b in range(blocks) for t in range(threads)]
    size, depth = threads // 2, 1
    while size > 0:
        records += [(depth, 0, t) for _ in range(blocks) for t in range(size)]
        size, depth = size // 2, depth + 1
    return records


def record_text(record):
    """(depth, block, thread) as the kit's report_hello prints it."""
    depth, block, thread = record
    return "Recursion=%d: Hello World from thread %d block %d" % (depth, thread, block)


def make_cases(rng):
    """Sizes that are and are not powers of two (1, odd, 1024), one and several blocks up to the
    harness's 16, and a deep chain past the default pending-launch limit of 2,048 in every case, one
    of them as deep as the harness allows: the first, so that the cases after it, run in the same
    process, show that each starts from the default limit again."""
    cases = [{"blocks": 1, "threads": 1}, {"blocks": 1, "threads": 8}, {"blocks": 3, "threads": 7},
             {"blocks": 2, "threads": 1024}, {"blocks": 16, "threads": 1023}]
    for _ in range(3):
        cases.append({"blocks": rng.randint(1, 8), "threads": rng.randint(2, 1000)})
    for c in cases:
        c["depth"] = rng.randint(3000, 6000)
    cases[0]["depth"] = MAX_DEPTH
    return cases



# The harness's contract (common/harness/03-nested-recursion/harness.cu). Graded runs print nothing.
# The cases share a process: before each, the harness puts the pending-launch limit back to the default,
# and the student's prepare_deep_recursion() sets it for the case's depth (the runtime takes a new
# pending-launch limit between kernels).
HARNESS = Contract(
    options=[Option("blocks", 1, 16), Option("threads", 1, 1024), Option("depth", 1, 100000), Option("print", 0, 1)],
    result_keys=["lab", "device", "params", "hello", "deep", "pending_launch_limit", "launch_log"],
    grading_defaults={"print": 0})


def check_recursive_launch(ctx):
    body = ctx.kernel_ptx("nested_hello")
    if body is not None and ptx.DEVICE_LAUNCH in ptx.called_functions(body):
        return chk.passed()
    return chk.failed("expected: nested_hello launches the next level (a call to %s in its PTX)\n"
                      "actual:   nested_hello launches nothing" % ptx.DEVICE_LAUNCH)


def check_explanation(ctx):
    return explained(ctx, "explains which Part B fix you chose and why it works")


def check_hello_records(ctx):
    def evaluate(run):
        p = run.params
        expected = [record_text(r) for r in expected_records(p["blocks"], p["threads"])]
        hello = run.doc["hello"]
        actual = [record_text(tuple(r)) for r in hello["records"]]
        if hello["count"] > len(actual):
            actual += ["(%d more records not kept: the kit's log was full)" % (hello["count"] - len(actual))]
        diff = multiset_diff(expected, actual)
        if diff is None:
            return None
        return "the records differ from the expected tree:\n" + "\n".join("      " + l for l in diff.splitlines())
    return per_case(ctx, evaluate, limit=2)


def check_launches_checked_in_order(ctx):
    return launches_checked_in_order(ctx, ("nested_hello", "deep_chain"))


def check_every_launch_checked(ctx):
    """Part A: one check per grid below depth 0; Part B: one per level after the first."""
    def evaluate(run):
        hello, deep = run.doc["hello"], run.doc["deep"]
        problems = []
        for part, log, grids in (("Part A", run.doc["launch_log"], hello["child_grids"]),
                                 ("Part B", deep["launch_log"], max(deep["levels_ran"] - 1, 0))):
            problem = launched_grids_problem(log, grids)
            if problem:
                problems.append("%s: %s" % (part, problem))
        return "; ".join(problems) or None
    return per_case(ctx, evaluate)


def check_deep(ctx):
    def evaluate(run):
        d = run.params["depth"]
        deep = run.doc["deep"]
        log = deep["launch_log"]
        if log["failed"]:
            return ("%d launch(es) of the chain failed (first: %s); levels 0..%d should run, the deepest was %d"
                    % (log["failed"], log["first_error"], d, deep["deepest"]))
        if deep["levels_ran"] != d + 1 or deep["deepest"] != d:
            return "expected levels 0..%d to run once each; %d levels ran, the deepest %d" % (
                d, deep["levels_ran"], deep["deepest"])
        return None
    return per_case(ctx, evaluate)


# The memcheck case: blocks of 1,024 threads, the most the harness takes (a per-thread array's end).
MEMCHECK_CASE = {"blocks": 2, "threads": 1024, "depth": 100, "print": 0}


LAB = Lab(
    name="03-nested-recursion",
    title="Lab 03: nested recursion",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case={"blocks": 2, "threads": 6, "depth": 2500},
    memcheck_case=MEMCHECK_CASE,
    starter_must_fail=("recursive launch in PTX", "Part B fix explained"),
    # The 100,000-level chain, first in its process, took up to 16 s with 16 runs sharing the H100 (a
    # shared case over the limit runs again alone, where its process took 1.4 s to the chain's end).
    test_time_limit=10,
    checks=[
        compiles(1, hint=hint(HANDOUT, "3 (the lab, step by step)")),
        runs_cleanly(1, hint=hint(HANDOUT, "2.4 (the pending-launch pool)")),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)")),
        chk.Check("recursive launch in PTX", 1, chk.STATIC, check_recursive_launch, parent=COMPILES,
                  hint=hint(HANDOUT, "2.2 (recursion from the device: the nested hello world)")),
        chk.Check("Part B fix explained", 1, chk.STATIC, check_explanation, parent=COMPILES,
                  hint=hint(HANDOUT, "2.5 (deep recursion: two fixes)")),
        chk.Check("launches checked right after them", 1, chk.STATIC, check_launches_checked_in_order,
                  parent=COMPILES, hint=hint(HANDOUT, "3 (the lab, step by step)")),
        chk.Check("hello records", 4, chk.RUNTIME, check_hello_records, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.3 (the expected tree)")),
        chk.Check("deep recursion completes", 3, chk.RUNTIME, check_deep, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (deep recursion: two fixes)")),
        chk.Check("every launch checked", 1, chk.RUNTIME, check_every_launch_checked, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "3 (the lab, step by step)")),
    ],
)
