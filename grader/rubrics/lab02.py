"""Lab 02: memory visibility (grading rules).

Part A: race_parent writes FIRST_VALUE, launches a child that records what it sees, and must end
with SECOND_VALUE; every child must see FIRST_VALUE. Part B: consume_parent's children add 1 to
data produced by the whole block; every element must be used with the child's result, i + 1.
Expected sums are computed here from n. In some cases every Part A child waits before it reads its
slot (a late start): a second write that is not ordered after the child then lands first every time.
The kit's own children count their grids (observe_kernel, add_one_kernel: one per parent, one per
block) and check what they read; use_result() knows the grid that called produce() by its identity
(%gridid), so a use in that grid, which cannot have seen a child's result, is counted whatever value
it passes.
"""
from gradelib.rubric import (COMPILES, RUNS_CLEANLY, Contract, Imports, Lab, barrier_reached, chk,
                             compiles, hint, launched_grids_problem, launches_checked_in_order,
                             memcheck_clean, per_case, ptx, runs_cleanly)

HANDOUT = "handouts/02-memory-visibility.md"
RACE_THREADS = 128  # parents per block, fixed by the harness
FIRST_VALUE, SECOND_VALUE = 1, 2
THREAD_CHOICES = (64, 96, 128, 160, 256, 500, 1024)
OBSERVE_DELAY_US = 200  # a late child: far longer than a parent takes to make its second write
MAX_BLOCKS = 128  # the harness's largest --blocks


def make_cases(rng):
    """Part A: 16 blocks x 128 parents x 2 trials = 4,096 parents per case (one case with one block, one
    with the harness's 128); in every other case the children start late. Part B: sizes that are and are
    not multiples of 32 or of the block size, edge sizes (1, one thread per block, blocks of 31, 33 and
    1,024 threads, n one short of and one past a block of 1,024, the harness's largest n), and three
    seeded random draws."""
    race = {"blocks": 16, "trials": 2}
    sizes = [(1, 32), (33, 32), (1000, 100), (4097, 256), (1 << 20, 1024), (77, 1),
             (1025, 1024), (1023, 1024), (1000, 31), (1000, 33), (1, 1024)]
    for _ in range(3):
        sizes.append((rng.randint(1, 200000), rng.choice(THREAD_CHOICES)))
    cases = [dict(race, n=n, threads=t, observe_delay_us=OBSERVE_DELAY_US * (k % 2)) for k, (n, t) in enumerate(sizes)]
    cases[1].update(blocks=1, trials=8)  # Part A's edges: one block of parents (1,024 observations in all),
    cases[2]["blocks"] = MAX_BLOCKS      # and the most the harness takes (16,384 parents, 32,768 launches)
    return cases



# The harness's contract (common/harness/02-memory-visibility/harness.cu). Children start at once
# unless a case says otherwise.
HARNESS = Contract(
    result_keys=["lab", "device", "params", "race", "data", "uses", "used", "child_grids", "timeline",
                 "launch_log"],
    grading_defaults={"observe_delay_us": 0})


def expected_sums(n):
    """sum of (i + 1) and of i * (i + 1) for i in [0, n)."""
    return n * (n + 1) // 2, (n - 1) * n * (2 * n - 1) // 6 + n * (n - 1) // 2


def _kernel_streams(ctx, kernel):
    body = ctx.kernel_ptx(kernel)
    return None if body is None else ptx.launch_streams(body)


def _stream_names(streams):
    names = {ptx.NULL_STREAM: "the NULL stream", ptx.TAIL_LAUNCH_STREAM: "cudaStreamTailLaunch",
             ptx.FIRE_AND_FORGET_STREAM: "cudaStreamFireAndForget", ptx.UNREAD_STREAM: ptx.UNREAD_STREAM_NAME}
    return ", ".join(names.get(s, "a created stream" if s is None else "stream %s" % s) for s in streams) or "none"


def check_tail_launches(ctx):
    problems = []
    for kernel, what in (("race_parent", "the second write (store_value_kernel)"),
                         ("consume_parent", "the continuation (use_result_kernel)")):
        streams = _kernel_streams(ctx, kernel)
        if streams is None:
            problems.append("%s: not found in the PTX" % kernel)
        elif ptx.TAIL_LAUNCH_STREAM not in streams:
            problems.append("%s launches into: %s; expected %s in cudaStreamTailLaunch"
                            % (kernel, _stream_names(streams), what))
    if problems:
        return chk.failed("\n".join(problems), fraction=1 - len(problems) / 2)
    return chk.passed()


def check_launches_checked_in_order(ctx):
    return launches_checked_in_order(ctx, ("race_parent", "consume_parent"))


def check_barrier_reached(ctx):
    return barrier_reached(ctx, "consume_parent", "every thread's write must precede thread 0's launch")


def check_every_launch_checked(ctx):
    def evaluate(run):
        grids = run.doc["child_grids"]
        return launched_grids_problem(run.doc["launch_log"], sum(grids.values()))
    return per_case(ctx, evaluate)


def check_no_device_sync(ctx):
    synced = sorted(f for f in ctx.ptx_calls() if "DeviceSynchronize" in f)
    if synced:
        return chk.failed("expected: no cudaDeviceSynchronize() in device code (removed in CUDA 12)\n"
                          "actual:   the PTX calls %s (built with the deprecated CDP1 opt-in?)" % ", ".join(synced))
    return chk.passed()


def check_child_saw_first(ctx):
    """Every child saw FIRST_VALUE; and the children were there: one grid of observe_kernel per parent,
    each reading its own parent's slot (a parent that writes the seen array itself launches none)."""
    def evaluate(run):
        race = run.doc["race"]
        observers = run.doc["child_grids"]["observe"]
        if observers != race["parents"] or race.get("observed_elsewhere"):
            return ("expected one child grid of observe_kernel per parent, reading its parent's slot: %d parents, "
                    "%d such grids ran, %d read another slot" % (race["parents"], observers,
                                                               race.get("observed_elsewhere", 0)))
        if race["saw_first"] != race["parents"]:
            return ("expected every child to see %d (written before the launch); of %d children %d saw %d "
                    "(written after the launch) and %d saw something else"
                    % (FIRST_VALUE, race["parents"], race["saw_second"], SECOND_VALUE, race["saw_other"]))
        return None
    return per_case(ctx, evaluate)


def check_second_write(ctx):
    def evaluate(run):
        race = run.doc["race"]
        if race["ended_second"] != race["parents"]:
            return "expected every slot to end at %d; %d of %d did" % (SECOND_VALUE, race["ended_second"],
                                                                      race["parents"])
        return None
    return per_case(ctx, evaluate)


def _array_problem(run, key, what):
    n = run.params["n"]
    got = run.doc[key]
    if (got["sum"], got["weighted"]) != expected_sums(n):
        detail = ""
        if got["bad"]:
            detail = "; first: element %d is %d" % (got["first_bad_index"], got["first_bad_value"])
        return "expected %s == i + 1 for all %d elements; %d differ%s" % (what, n, got["bad"], detail)
    return None


def check_child_saw_block(ctx):
    """data[i] == i + 1; one add_one_kernel grid per block did the adding; every element produced once,
    by produce() in one grid (consume_parent's)."""
    def evaluate(run):
        problems = [p for p in (_array_problem(run, "data", "data[i] after the children"),) if p]
        n, threads = run.params["n"], run.params["threads"]
        blocks = (n + threads - 1) // threads
        adders = run.doc["child_grids"]["add_one"]
        if adders != blocks:
            problems.append("expected one child grid of add_one_kernel per block (%d), %d ran" % (blocks, adders))
        uses = run.doc["uses"]
        if "produce_calls" in uses and (uses["produce_calls"] != n or uses["produce_calls_elsewhere"]):
            problems.append("expected produce(i) called once per element (%d) by consume_parent's grid; %d calls, "
                            "%d of them from another grid" % (n, uses["produce_calls"], uses["produce_calls_elsewhere"]))
        if run.doc["data"]["past_end"]:
            problems.append("%d element(s) after data[n - 1] were written: a thread with i >= n wrote"
                            % run.doc["data"]["past_end"])
        return "; ".join(problems) or None
    return per_case(ctx, evaluate)


def check_continuation(ctx):
    """The value each element was used with, and that each was used exactly once, none outside [0, n)."""
    def evaluate(run):
        problems = [p for p in (_array_problem(run, "used", "the value used for element i"),) if p]
        uses = run.doc["uses"]
        if uses["unused"] or uses["used_more_than_once"]:
            problems.append("expected every element used exactly once; %d never used (first: %d), %d used more "
                            "than once (first: %d)" % (uses["unused"], uses["first_unused"],
                                                        uses["used_more_than_once"], uses["first_used_more_than_once"]))
        if uses.get("in_producing_grid"):
            problems.append("%d use(s) in consume_parent's own grid, the grid that called produce(): a running parent "
                            "never sees its child's result (whatever value it passes to use_result)"
                            % uses["in_producing_grid"])
        if uses["out_of_range"]:
            problems.append("%d use(s) of elements outside [0, %d): a continuation ran past the end of its block's "
                            "part" % (uses["out_of_range"], run.params["n"]))
        return "; ".join(problems) or None
    return per_case(ctx, evaluate)


# What the student's objects may import beyond what every lab may (gradelib.objects): the kit's functions and kernels of memory_visibility.h.
IMPORTS = Imports(device=("produce", "use_result", "add_one_kernel", "observe_kernel", "store_value_kernel", "use_result_kernel"))


LAB = Lab(
    name="02-memory-visibility",
    title="Lab 02: memory visibility",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case={"blocks": 8, "trials": 1, "n": 300, "threads": 128},
    imports=IMPORTS,
    starter_must_fail=("continuation is tail-launched",),
    checks=[
        compiles(1, hint=hint(HANDOUT, "2.6 (then and now: the legacy API)"),
                 passes="your file builds with the kit's flags"),
        runs_cleanly(1, hint=hint(HANDOUT, "2.4 (tail launch and fire-and-forget)"),
                     passes='no CUDA error, no failed device launch in the launch log'),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: Part A with 8 blocks ×"
                               ' 128 parents × 1 trial, Part B with n = 300 and 128 threads (`--blocks 8 --trials 1 '
                               '--n 300 --threads 128`)')),
        chk.Check("continuation is tail-launched", 2, chk.STATIC, check_tail_launches, parent=COMPILES,
                  hint=hint(HANDOUT, "2.4 (tail launch and fire-and-forget)"),
                  passes=('in the PTX, `race_parent` and `consume_parent` each make a launch with stream `3`; half '
                          'the points for each')),
        chk.Check("no device-side cudaDeviceSynchronize", 1, chk.STATIC, check_no_device_sync, parent=COMPILES,
                  hint=hint(HANDOUT, "2.6 (then and now: the legacy API)"),
                  passes='the PTX calls no `cudaDeviceSynchronize`'),
        chk.Check("launches checked right after them", 1, chk.STATIC, check_launches_checked_in_order,
                  parent=COMPILES, hint=hint(HANDOUT, "3 (the lab, step by step)"),
                  passes=('in the PTX of both kernels, every launch is followed on every path by '
                          '`cudaGetLastError()` (`KIT_CHECK_LAUNCH()`)')),
        chk.Check("every thread reaches the barrier", 1, chk.STATIC, check_barrier_reached, parent=COMPILES,
                  hint=hint(HANDOUT, "2.3 (writes by other threads: __syncthreads() before the launch)"),
                  passes='in the PTX of `consume_parent`, no thread can return without passing `__syncthreads()`'),
        chk.Check("child saw only the pre-launch value", 3, chk.RUNTIME, check_child_saw_first,
                  parent=RUNS_CLEANLY, hint=hint(HANDOUT, "2.2 (the race, on a timeline)"),
                  passes=('in every case, every child saw 1, and every parent had its child: one grid of '
                          "`observe_kernel` per parent, reading that parent's slot")),
        chk.Check("second write happened", 1, chk.RUNTIME, check_second_write, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (tail launch and fire-and-forget)"),
                  passes="in every case, every parent's slot ends at 2"),
        chk.Check("child saw the block's writes", 2, chk.RUNTIME, check_child_saw_block, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.3 (writes by other threads: __syncthreads() before the launch)"),
                  passes=('`data[i] == i + 1` for every element (the sums match), added by one grid of '
                          '`add_one_kernel` per block, from values `produce(i)` gave `consume_parent`, once per '
                          'element')),
        chk.Check("continuation saw every child write", 3, chk.RUNTIME, check_continuation, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "2.4 (tail launch and fire-and-forget)"),
                  passes=('each element was used with the value `i + 1`, exactly once, no element outside `[0, n)` '
                          "was used, and none was used in `consume_parent`'s own grid (the kit knows that grid by "
                          'its identity: it called `produce()`)')),
        chk.Check("every launch checked", 1, chk.RUNTIME, check_every_launch_checked, parent=RUNS_CLEANLY,
                  hint=hint(HANDOUT, "3 (the lab, step by step)"),
                  passes=("the launch log's checks equal the kit's child grids that ran (each child kernel counts "
                          'its grids) plus the launches that failed')),
    ],
)
