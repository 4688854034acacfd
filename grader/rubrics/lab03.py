"""Lab 03: nested recursion (grading rules).

Part A: nested_hello<<<B, n>>>(n, 0); the expected (depth, block, thread) records, and the grids of
the tree (one of B blocks of n threads, then B of one block for each halving), are computed here
from B and n. Part B: deep_chain to depth D with no failed launch, every level its own grid. The
kit counts grids by their identity (%gridid), once each however often a grid reports: a loop of
reports in one grid is one grid.
"""
import collections

from gradelib.diff import multiset_diff
from gradelib.rubric import (COMPILES, RUNS_CLEANLY, Contract, Imports, Lab, chk, compiles,
                             explained, hint, launched_grids_problem, launches_checked_in_order,
                             memcheck_clean, per_case, ptx, runs_cleanly)

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


def expected_grid_shapes(blocks, threads):
    """{(blocks, threads): grids} of the tree: the host's grid, then one grid of one block per
    top-level block for each level below it."""
    shapes = collections.Counter({(blocks, threads): 1})
    size = threads // 2
    while size > 0:
        shapes[(1, size)] += blocks
        size //= 2
    return shapes


def shapes_text(shapes):
    return ", ".join("%d x <<<%d, %d>>>" % (n, b, t) for (b, t), n in sorted(shapes.items(), key=lambda kv: -kv[0][1]))


def record_text(record):
    """(depth, block, thread) as the kit's report_hello prints it."""
    depth, block, thread = record
    return "Recursion=%d: Hello World from thread %d block %d" % (depth, thread, block)


# The largest tree the harness takes: 16 chains of 10 launches, 160 pending at once in the NULL stream.
LARGEST_TREE = {"blocks": 16, "threads": 1024}
DEFAULT_PENDING_LIMIT = 2048


def make_cases(rng):
    """Sizes that are and are not powers of two (1, odd, 31, 33, 1023, 1024), one and several blocks up
    to the harness's 16, and deep chains: one as deep as the harness allows (the first, so that the
    cases after it, run in the same process, show that each starts from the default limit again), one
    just past the default pending-launch limit, random ones past it, and the shallowest chain (depth 1)
    under the largest tree: a prepare_deep_recursion that lowers the limit (a tail-launched chain needs
    one slot) or sizes it for the chain alone (depth + a margin) leaves Part A's 160 pending launches
    short."""
    deepest, shallowest = {"blocks": 1, "threads": 1}, dict(LARGEST_TREE)
    past_the_pool = {"blocks": 16, "threads": 1023}
    cases = [deepest, shallowest, {"blocks": 1, "threads": 8}, {"blocks": 3, "threads": 7},
             {"blocks": 4, "threads": 31}, {"blocks": 5, "threads": 33}, {"blocks": 2, "threads": 1024},
             past_the_pool]
    for _ in range(3):
        cases.append({"blocks": rng.randint(1, 8), "threads": rng.randint(2, 1000)})
    for c in cases:
        c["depth"] = rng.randint(3000, 6000)
    deepest["depth"], shallowest["depth"] = MAX_DEPTH, 1
    past_the_pool["depth"] = DEFAULT_PENDING_LIMIT + 1
    return cases



# The harness's contract (common/harness/03-nested-recursion/harness.cu). Graded runs print nothing.
# The cases share a process: before each, the harness puts the pending-launch limit back to the default,
# and the student's prepare_deep_recursion() sets it for the case's depth (the runtime takes a new
# pending-launch limit between kernels).
HARNESS = Contract(
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
        problems = []
        if diff is not None:
            problems.append("the records differ from the expected tree:\n" +
                            "\n".join("      " + l for l in diff.splitlines()))
        grids = _grid_tree_problem(p, hello)
        if grids:
            problems.append(grids)
        return "\n".join(problems) or None
    return per_case(ctx, evaluate, limit=2)


def _grid_tree_problem(p, hello):
    """Whether the grids that reported (by identity, each once) are the tree's: the records alone could
    come from one grid that reports every level itself. None where the document predates the count."""
    if "grid_shapes" not in hello:
        return None
    want = expected_grid_shapes(p["blocks"], p["threads"])
    got = collections.Counter({(b, t): n for b, t, n in hello["grid_shapes"]})
    if got == want and not hello.get("grids_other_shapes") and not hello.get("grids_unkept"):
        return None
    more = hello.get("grids_other_shapes", 0) + hello.get("grids_unkept", 0)
    return ("expected the tree's %d grids, each reporting (%s); %d grid(s) reported (%s%s): every level below "
            "the first must be a grid launched by the level above"
            % (sum(want.values()), shapes_text(want), hello.get("grids", sum(got.values())), shapes_text(got) or "none",
               " and %d more" % more if more else ""))


def check_launches_checked_in_order(ctx):
    return launches_checked_in_order(ctx, ("nested_hello", "deep_chain"))


def check_every_launch_checked(ctx):
    """Part A: one check per grid below depth 0; Part B: one per level after the first (grids that ran,
    each counted once by the kit, so a loop of KIT_CHECK_LAUNCH() counts as the checks it is)."""
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
        if deep["levels_ran"] != d + 1 or deep["deepest"] != d or deep.get("grids_unkept"):
            return ("expected levels 0..%d to run, each in its own grid (%d grids); %d grid(s) reported a level%s, "
                    "the deepest level reported %d" % (d, d + 1, deep["levels_ran"],
                                                      " (and more)" if deep.get("grids_unkept") else "",
                                                      deep["deepest"]))
        return None
    return per_case(ctx, evaluate)


# The memcheck case: blocks of 1,024 threads, the most the harness takes (a per-thread array's end).
MEMCHECK_CASE = {"blocks": 2, "threads": 1024, "depth": 100, "print": 0}


# What the student's objects may import beyond what every lab may (gradelib.objects): the kit's reports of nested_recursion.h.
IMPORTS = Imports(device=("report_hello", "report_level"))


LAB = Lab(
    name="03-nested-recursion",
    title="Lab 03: nested recursion",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case={"blocks": 2, "threads": 6, "depth": 2500},
    memcheck_case=MEMCHECK_CASE,
    imports=IMPORTS,
    starter_must_fail=("recursive launch in PTX", "Part B fix explained"),
    checks=[
        compiles(1, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                 passes="your file builds with the kit's flags (`-rdc=true`)"),
        runs_cleanly(1, hint=hint(HANDOUT, "2.4 (the pending-launch pool)"),
                     passes='every case ends in time, with no CUDA error and no failed launch in Part A'),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: Part A with 2 blocks "
                               'of 1,024 threads, Part B with a chain of depth 100 (`--blocks 2 --threads 1024 '
                               '--depth 100`)')),
        chk.Check("recursive launch in PTX", 1, chk.STATIC, check_recursive_launch, parent=COMPILES,
                  hint=hint(HANDOUT, "2.2 (recursion from the device: the nested hello world)"),
                  passes='the PTX of `nested_hello` calls `__cudaCDP2LaunchDeviceV2`'),
        chk.Check("Part B fix explained", 1, chk.STATIC, check_explanation, parent=COMPILES,
                  hint=hint(HANDOUT, "2.5 (deep recursion: two fixes)"),
                  passes='a `/* WHY:` comment of 12 words or more, without `TODO`'),
        chk.Check("launches checked right after them", 1, chk.STATIC, check_launches_checked_in_order,
                  parent=COMPILES, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                  passes=('in the PTX of `nested_hello` and `deep_chain`, every launch is followed on every path by '
                          '`cudaGetLastError()` (`KIT_CHECK_LAUNCH()`)')),
        chk.Check("hello records", 4, chk.RUNTIME, check_hello_records, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.3 (the expected tree)"),
                  passes=("Part A's records equal the expected tree in every case, and the grids that reported them "
                          "are the tree's grids (the kit counts each grid once, by its identity, however often it "
                          'reports)')),
        chk.Check("deep recursion completes", 3, chk.RUNTIME, check_deep, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.5 (deep recursion: two fixes)"),
                  passes='no launch of the chain failed, and levels 0 to D each ran, each in a grid of its own'),
        chk.Check("every launch checked", 1, chk.RUNTIME, check_every_launch_checked, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "3 (the lab, step by step)"),
                  passes=("in both parts, the launch log's checks equal the grids the kit saw start below the top "
                          'level plus the launches that failed')),
    ],
)
