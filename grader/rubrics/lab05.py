"""Lab 05: default streams (grading rules).

The harness runs both parts twice in one process, the kit's legacy way and the student's way, and
reports every kernel's %globaltimer interval. Part A: worker kernels in N streams with a tiny kernel
on the default stream after each. Part B: T host threads, thread i's kernel spinning (i + 1) x base,
each thread's wait timed on the host; when many_streams returned, timed the same way. The checks
compare the two timelines of the same run.

One case turns on the kit's hidden delays (harness --delay-us): kernels that run longer than their
job says, and tiny kernels that make the default stream finish last in some rounds. The student's
code cannot see them, so only real waits return after every kernel there; the concurrency checks
leave that case out, since its kernels' lengths are no longer those their thresholds were set for.
One case has 32 streams, the most the harness takes: the kit's table of kernels is full there.

The evidence is the kit's: the kernels' lengths and stamps live in the harness's static device memory,
which the student's code is never handed, and only the kit's device code writes the stamps, sealed.
The harness reads it all back after every round and reports what differs from what it wrote
("tampered"), and launches with an index the job does not have ("stray"): either makes a run unclean.
"""
import os
import re
import subprocess

from gradelib import paths
from gradelib.rubric import (COMPILES, RUNS_CLEANLY, Contract, Imports, Lab, chk, compiles,
                             explained, hint, memcheck_clean, per_case, runs_cleanly)

HANDOUT = "handouts/05-default-streams.md"
MAX_STREAMS = 32  # the harness's limit (default_streams.h)
FLAGS_FILE = "nvcc.flags"
FLAGS_CHECKER = os.path.join(paths.KIT_ROOT, "common", "student-flags.sh")  # the one whitelist, kit.mk's too
PART_B_FUNCTION = "thread_launch_and_wait"
REPEATS = 5
# A WHY comment names the mechanism it relies on.
MECHANISM_WORDS = re.compile(r"per[- ]thread|non[- ]?blocking|cudaStreamNonBlocking|cudaStreamPerThread", re.I)

# Thresholds, with at least 2x headroom over the reference solution's worst run. Expected: legacy /
# student span about N for Part A (N workers of equal length at once) and (T + 1) / 2 for Part B (T
# threads, lengths 1..T x base); a submission that still serializes scores about 1.0 on both.
# Measured on an H100 (CUDA 13.0, tools/measure_thresholds.py lab05, 10 runs each): solution A 7.28-7.40
# (8 streams) and 11.35-11.81 (16), B 4.48-4.50 (8 threads) and 6.44-6.50 (12), every worker at
# once in Part A's median round, 10-12 of 12 threads in Part B's (a thread started late by the host);
# still-legacy 1.00 and 1 at once.
# Concurrency, as the contract promises it: every stream's (every thread's) kernel runs at the same
# time as every other one, each pair in at least one round (a host that starts one thread late in
# some rounds does not count, nor a pair whose threads the host started late in every round, which the
# harness tells from its own clock; a design that serializes any two kernels never gets there). And the
# span at least MIN_SPAN_RATIO x shorter than the kit's legacy build's in the same run, the best round
# of each (a busy host lengthens some rounds; a design that serializes is slow in all): 2x headroom
# over a submission that serializes (1.0), and the reference is at N/2 or more x above it.
# Measured on a busy H200 (a class of mutants beside it): a correct alternative's Part B lost points
# once in ten gradings when these were the medians and every late-started pair counted.
MIN_SPAN_RATIO_A = 2.0         # Part A: legacy span / student span, best rounds of the same run
MIN_SPAN_RATIO_B = 2.0         # Part B: the same for the threads
# Part B's waits, judged against the kit's own correct wait in the same rounds (the harness's reference
# thread, which waits for its own stream only): a thread's best round may be late by at most
# WAIT_GAP_SHARE of the smallest gap between the end of the kit's reference kernel (twice as long as
# the longest thread's, launched before the threads start) and the end of the thread's own kernel. A
# wait for the whole device returns after the reference kernel in every round, at least that gap
# late: 2x headroom. A correct wait is microseconds late in its best round against a margin of at least
# the longest thread's kernel / 2 (2,000 us and up in the graded cases), so host noise in some rounds
# cannot fail it.
WAIT_GAP_SHARE = 0.5
# A thread is judged only where the kit's longer kernel ended at least this share of the thread's base
# length after the thread's own kernel in every round (its smallest gap): where the GPU started the
# thread's kernel late (measured on an H100: 3 of 8 threads of the 32-stream case, gaps below zero), a
# wait for the whole device costs that thread nothing, and the case tells nothing about it.
MIN_GAP_FRACTION = 0.5
MAX_EARLY_FRACTION = 0.1       # ... and at most this share of the base length early, in any round
# Part A: many_streams may return at most this much before the last of its kernels ended, in any round.
# Host times are placed on %globaltimer by the smallest of 7 (host time after a wait - kernel's end
# stamp) before each round, so a real wait's own latency is subtracted once; what remains is that
# latency's spread and one %globaltimer tick (about 1 us on H100). The harness's waits sleep (its
# main), which widens the spread: on one H200 of 16 cores a correct wait measured up to 16 us early
# beside tools/busy_host.py's load and 35 us with CUDA programs outside the grader's gate beside it
# (RESULTS.md, "Lab 05: waits that sleep"). 50 us is 3x the first, and a tenth of how early the known
# wrong waits return: a skipped wait for the workers about spin_us
# (>= 500 us) early, a skipped wait for the default stream (streams - 1) x D - spin_us early in the
# delayed case's even rounds (DELAY_FACTOR below).
RETURN_EARLY_TOLERANCE_US = 50.0
# Part A: ... and at most this much after it, median over the rounds. A real wait returns microseconds
# after its stream's last kernel; after the last kernel ends the reference solution has only its
# remaining cudaStreamSynchronize/cudaStreamDestroy calls left (16 streams at most in the graded
# cases, microseconds each), so it is expected at tens of microseconds (the harness prints every
# round's figure). A wait replaced by a sleep long enough never to return early (1 ms per stream,
# say) returns 3,000 us or more late in at least 3 of the 5 rounds of every case: its median is beyond.
MAX_RETURN_LATE_US = 1000.0
# The delayed case's scale D, in units of its longest base length: about half the kernels of each part
# (at least one per round) run D/2..D longer than their job says, and in even rounds every tiny kernel
# runs D, so there the default stream ends about (streams - 1) x D - spin_us after the last worker:
# at least 9 x spin_us (6 or more streams, D >= 2 x spin_us). D/2 >= each part's base length, so a
# sleep of the job's length plus a margin under D/2 - MAX_EARLY_FRACTION x base returns early.
DELAY_FACTOR = 2
# The 32-stream case's worker length (us). One host thread launches its 32 workers and 32 tiny kernels
# one after another, and every pair of workers must overlap in some round: the first worker must still
# run when the last starts. With 1,000 us workers the reference solution lost that in one grading of ten
# on four H200s running the kit's whole suite beside it (CUDA 13.0): in each of the 5 rounds the host
# paused about 1.3 ms between its 20th and 21st launch, and the first 20 workers had ended when the
# last 12 began; beside a class of Lab 04, in its slowest round the last worker started 1.6 ms after the
# first. 4,000 us is 2.4x that.
FULL_TABLE_SPIN_US = 4000
# A run too busy to judge runs again (Lab.host_too_busy, gradelib.runs.BUSY_RUNS_AGAIN; its last run is
# judged whatever it shows): the kit's own wait in Part B (the reference thread) returned more than
# HOST_BUSY_WAIT_US after its kernel ended even in its best round, or the host started a pair of threads
# too late for their kernels to overlap in every round (the harness's clock). In the recorded runs of the
# solution and every known-wrong submission (H200, grader/tests/data/recorded/) the kit's wait was
# 64 to 172 us late in its best round. Beside the kit's whole suite on one H200, the reference lost Part
# B's wait check in a run where the kit's wait was about 1,990 us late (RESULTS.md, "Lab 05's bystander
# again"); a load that lasts is not helped, and the pair check's losses there were not all flagged.
HOST_BUSY_WAIT_US = 1000.0


def make_cases(rng):
    """The seed's sizes (8 streams, 8 threads), then seeded stream and thread counts and lengths, then
    32 streams, the most the harness takes, with longer workers (FULL_TABLE_SPIN_US). Threads from 8 up
    keep Part B's ideal ratio (T + 1) / 2 at 4.5 or more. Last, the delayed case: seeded sizes with the
    kit's hidden delays (DELAY_FACTOR), drawn from a seeded delay seed. Every case is a timed timeline
    ("timing")."""
    cases = [{"streams": 8, "threads": 8, "spin_us": 1000, "thread_spin_us": 1000}]
    cases.append({"streams": rng.randint(6, 16), "threads": rng.randint(8, 12),
                  "spin_us": rng.choice((500, 1000, 2000)), "thread_spin_us": rng.choice((500, 1000))})
    # the harness's limit: every stream of the kit's table in use, and an index past it is past the table;
    # workers of FULL_TABLE_SPIN_US, so that every pair can overlap however the host launches them
    cases.append({"streams": MAX_STREAMS, "threads": 8, "spin_us": FULL_TABLE_SPIN_US,
                  "thread_spin_us": rng.choice((500, 1000))})
    delayed = {"streams": rng.randint(6, 12), "threads": rng.randint(8, 12),
               "spin_us": rng.choice((500, 1000)), "thread_spin_us": rng.choice((500, 1000))}
    delayed["delay_us"] = DELAY_FACTOR * max(delayed["spin_us"], delayed["thread_spin_us"])
    delayed["delay_seed"] = rng.randint(1, 2 ** 31 - 1)
    cases.append(delayed)
    for c in cases:
        c["repeats"] = REPEATS
        c["timing"] = True
    return cases



# The harness's contract (common/harness/05-default-streams/harness.cu). Every case is a timed timeline
# ("timing", for the checks).
HARNESS = Contract(
    result_keys=["lab", "device", "params", "max_connections", "part_a", "part_b"],
    case_keys=["timing"])


def timed_runs(ctx):
    """The runs of timed timeline cases: what every runtime check of this lab reads."""
    return [r for r in ctx.runs if r.params.get("timing")]


def undisturbed_runs(ctx):
    """The timed runs without the kit's delays: the concurrency thresholds were set on these."""
    return [r for r in timed_runs(ctx) if not r.params.get("delay_us")]


def rounds_of(side, params):
    """How many counted rounds a side ran: the kit's legacy side runs fewer than the student's (the
    harness's LEGACY_ROUNDS), each listed in spans_us."""
    return len(side.get("spans_us") or []) or params["repeats"]


def run_problem(params, doc):
    """The kit's evidence must be as the kit wrote it (tampered: no verdict can rest on it), and every
    kernel of the student's side must have run exactly once in every round, with an index the job has,
    launched in the shape default_streams.h names (kit_worker_kernel<<<1, WORKER_THREADS>>>,
    kit_tiny_kernel<<<1, 1>>>)."""
    problems = []
    for part, what in (("part_a", "Part A"), ("part_b", "Part B")):
        for side, whose in (("student", "your"), ("legacy", "the kit's legacy")):
            s = doc[part][side]
            if s.get("tampered"):
                problems.append("%s, %s version's rounds: the kit's evidence was tampered with in %d of %d rounds "
                                "(%s): its table of kernel lengths or its stamps in device memory were not what "
                                "the kit wrote, so nothing of this run can be believed"
                                % (what, whose, s["tampered"], rounds_of(s, params), s.get("tampered_what") or "?"))
            if s.get("stray"):
                problems.append("%s, %s version: %d launch(es) over %d rounds with an index the job does not have "
                                "(a stream or thread past the job's, or below 0): each kernel takes its own "
                                "stream's or thread's index" % (what, whose, s["stray"], rounds_of(s, params)))
            if s["missing"] or s["duplicated"]:
                problems.append("%s, %s version: %d kernel(s) never ran and %d ran more than once over %d rounds "
                                "(each worker and each tiny kernel is launched exactly once)"
                                % (what, whose, s["missing"], s["duplicated"], rounds_of(s, params)))
            if s.get("misshapen"):
                problems.append("%s, %s version: %d kernel(s) launched in another shape than default_streams.h "
                                "names over %d rounds (kit_worker_kernel<<<1, WORKER_THREADS, 0, stream>>>, "
                                "kit_tiny_kernel<<<1, 1>>>)" % (what, whose, s["misshapen"], rounds_of(s, params)))
    return "; ".join(problems) or None


# ---------------- static checks ----------------

def flags_verdict(path):
    """(allowed, message) for a flags file, from the kit's whitelist script (the one kit.mk runs)."""
    if not os.path.isfile(path):
        return False, "no %s in the submission (an empty file, or one with comments only, is allowed)" % FLAGS_FILE
    try:
        out = subprocess.run(["sh", FLAGS_CHECKER, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, "the kit could not check %s: %s" % (FLAGS_FILE, err)
    if out.returncode != 0:
        return False, out.stderr.strip() or "refused"
    options = out.stdout.strip()
    return True, "options: %s" % (options or "none (the legacy default stream)")


def check_flags_allowed(ctx):
    allowed, message = flags_verdict(os.path.join(ctx.work_dir, "src", FLAGS_FILE))
    if allowed:
        return chk.passed(message)
    return chk.failed("expected: %s holds only options the lab allows (the build refuses anything else, "
                      "before nvcc sees it)\nactual:   %s" % (FLAGS_FILE, message))


def function_body(source, name):
    """The text between the braces of the definition of function name, or None."""
    m = re.search(r"\b%s\s*\([^;{)]*\)\s*\{" % re.escape(name), source)
    if not m:
        return None
    depth, start = 1, m.end()
    for i in range(start, len(source)):
        if source[i] == "{":
            depth += 1
        elif source[i] == "}":
            depth -= 1
            if depth == 0:
                return source[start:i]
    return source[start:]


def check_no_device_sync_in_part_b(ctx):
    body = function_body(ctx.student_code(), PART_B_FUNCTION)
    if body is None:
        return chk.failed("expected: a definition of %s in your file\nactual:   none found" % PART_B_FUNCTION)
    if re.search(r"\bcudaDeviceSynchronize\s*\(", body):
        return chk.failed("expected: %s waits for its own stream (cudaStreamSynchronize)\n"
                          "actual:   it calls cudaDeviceSynchronize(), which waits for every thread's work "
                          "on the device" % PART_B_FUNCTION)
    return chk.passed()


def check_explanation(ctx):
    return explained(ctx, "names the mechanism (the per-thread default stream or non-blocking streams) and says "
                          "why your Part A fix works", MECHANISM_WORDS)


# ---------------- runtime checks ----------------

def check_legacy_serializes(ctx):
    """The kit's premise: its legacy build runs one kernel at a time. Not the student's doing; if it
    fails, the comparison the other checks make has no baseline."""
    def evaluate(run):
        bad = []
        for part, what in (("part_a", "Part A"), ("part_b", "Part B")):
            legacy = run.doc[part]["legacy"]
            if legacy["overlapping_pairs"] or legacy["max_concurrent"] > 1:
                bad.append("%s: %d overlapping pair(s) of kernels over %d rounds, up to %g at once"
                           % (what, legacy["overlapping_pairs"], rounds_of(legacy, run.params),
                              legacy["max_concurrent"]))
        if not bad:
            return None
        return ("the kit's premise did not hold on this GPU: its legacy build (built without per-thread default "
                "streams, blocking streams, launches between them on the legacy default stream) should run one "
                "kernel at a time, but %s. The concurrency checks compare against it; please report this to the "
                "kit's maintainers with the output of `make run LAB=05`" % "; ".join(bad))
    return per_case(ctx, evaluate, runs=timed_runs(ctx))


def best_span(side):
    """A side's shortest round (a busy host lengthens some rounds; a design that serializes is slow in
    every one), or its median where the document lists no rounds."""
    return min(side.get("spans_us") or [side["span_us"]])


def _concurrency(run, part, n, min_ratio, what):
    legacy, student = run.doc[part]["legacy"], run.doc[part]["student"]
    legacy_us, student_us = best_span(legacy), best_span(student)
    ratio = legacy_us / student_us if student_us > 0 else 0.0
    best = max(student.get("max_concurrent_runs") or [student["max_concurrent"]])
    never = student.get("pairs_never_overlapping")
    problems = []
    if never is None and best < n:  # a document without the pairs: the best round must have them all
        problems.append("at most %g of your %d %s ran at once, in the best of %d rounds (all %d wanted: each "
                        "runs at the same time as every other)" % (best, n, what, run.params["repeats"], n))
    elif never:
        i, j = student["first_pair_never_overlapping"]
        problems.append("%d pair(s) of your %d %s never ran at the same time in any of %d rounds (first: %d and "
                        "%d; at most %g at once, best round), though both were started in time in some round: each "
                        "must run at the same time as every other" % (never, n, what, run.params["repeats"], i, j, best))
    if ratio < min_ratio:
        problems.append("the kit's legacy version took %.0f us (the best of %d rounds), yours %.0f us (the best of "
                        "%d): %.2fx (at least %.2fx wanted)" % (legacy_us, rounds_of(legacy, run.params), student_us,
                                                               rounds_of(student, run.params), ratio, min_ratio))
    return "; ".join(problems) or None


def check_part_a_concurrent(ctx):
    return per_case(ctx, lambda run: _concurrency(run, "part_a", run.params["streams"], MIN_SPAN_RATIO_A,
                                                  "streams' workers"), runs=undisturbed_runs(ctx))


def check_part_b_concurrent(ctx):
    return per_case(ctx, lambda run: _concurrency(run, "part_b", run.params["threads"], MIN_SPAN_RATIO_B,
                                                  "threads' kernels"), runs=undisturbed_runs(ctx))


def _last_kernel(entry):
    if entry["last_kind"] == "default":
        return "tiny kernel %d on the default stream" % entry["last_row"]
    return "the worker in stream %d" % entry["last_row"]


def check_part_a_returns(ctx):
    """many_streams returns once every kernel it launched has finished: in every round, not before the
    last of them (workers and tiny kernels) ended. The delayed case makes the default stream finish
    last in some rounds and a worker in others, with kernels longer than the job says."""
    def evaluate(run):
        rounds = run.doc["part_a"]["student"]["return_runs"]
        early = [e for e in rounds if e["lateness_us"] < -RETURN_EARLY_TOLERANCE_US]
        if not early:
            return None
        worst = min(early, key=lambda e: e["lateness_us"])
        missed = []
        if any(e["last_kind"] == "worker" for e in early):
            missed.append("every stream it launched a worker into")
        if any(e["last_kind"] == "default" for e in early):
            missed.append("the default stream, where the tiny kernels run")
        return ("in %d of %d rounds many_streams returned before every kernel it launched had finished; worst, "
                "round %d: %.0f us before the last one, %s, ended (at most %.0f us early allowed, for the clock "
                "calibration): it must wait for %s"
                % (len(early), len(rounds), worst["round"], -worst["lateness_us"], _last_kernel(worst),
                   RETURN_EARLY_TOLERANCE_US, " and for ".join(missed)))
    return per_case(ctx, evaluate, runs=timed_runs(ctx))


def check_part_a_returns_soon(ctx):
    """... and soon after the last of them ended: a wait, not a sleep long enough to outlast any kernel
    (median over the rounds, so one round's slow host does not count)."""
    def evaluate(run):
        student = run.doc["part_a"]["student"]
        late = student["return_lateness_us"]
        if late <= MAX_RETURN_LATE_US:
            return None
        rounds = " ".join("%.0f" % e["lateness_us"] for e in student["return_runs"])
        return ("many_streams returned %.0f us after the last kernel it launched had ended (median of %d rounds: "
                "%s; at most %.0f us wanted): it should wait for its streams (cudaStreamSynchronize), not for "
                "a set time" % (late, len(student["return_runs"]), rounds, MAX_RETURN_LATE_US))
    return per_case(ctx, evaluate, runs=timed_runs(ctx))


def check_waits_own_stream(ctx):
    """Each thread's wait returns soon after its own kernel ends, judged against the kit's own correct
    wait in the same rounds (the reference thread): in its best round, no later than the reference's
    best by more than WAIT_GAP_SHARE of the gap a wait for the whole device would add (the kit's longer
    kernel ends that much after the thread's); and in no round before its own kernel ends (no wait, or
    a sleep of about the job's length, which the delayed case's longer kernels outlast)."""
    def evaluate(run):
        base = run.params["thread_spin_us"]
        student = run.doc["part_b"]["student"]
        best = student["earliest_lateness_us"]
        reference = student.get("reference_lateness_us")
        gaps = student.get("device_wait_gap_us")
        if reference is None or gaps is None:
            return "the harness wrote no reference wait for Part B (a kit problem: please report it)"
        judged = [(i, b, g) for i, (b, g) in enumerate(zip(best, gaps)) if g >= MIN_GAP_FRACTION * base]
        judged_threads.append(len(judged))
        late = [(i, b - reference, WAIT_GAP_SHARE * g) for i, b, g in judged if b - reference > WAIT_GAP_SHARE * g]
        early = [(i, l) for i, l in enumerate(best) if l < -MAX_EARLY_FRACTION * base]
        problems = []
        if late:
            i, excess, allowed = max(late, key=lambda x: x[1] - x[2])
            problems.append("%d of %d threads judged returned late in every round; worst, thread %d: in its best round its "
                            "wait returned %.0f us after its own kernel ended, %.0f us later than the kit's own wait "
                            "for its own stream (at most %.0f us wanted: half the time by which the kit's longer "
                            "kernel ended after this thread's): it waited for other work than its own"
                            % (len(late), len(judged), i, best[i], excess, allowed))
        if early:
            i, l = min(early, key=lambda x: x[1])
            problems.append("%d thread(s) returned before their own kernel ended (worst, thread %d, %.0f us early "
                            "in one round; at most %.0f us allowed): a thread must wait for its kernel, whose "
                            "length is not always the job's" % (len(early), i, -l, MAX_EARLY_FRACTION * base))
        return "; ".join(problems) or None
    judged_threads = []
    outcome = per_case(ctx, evaluate, runs=timed_runs(ctx))
    if outcome.status == chk.PASSED and judged_threads and not any(judged_threads):
        return chk.failed("no thread of any case could be judged: the kit's longer kernel never ended at least half "
                          "a thread's base length after the thread's own kernel (a busy GPU: grade again)")
    return outcome


def host_too_busy(params, doc):
    """Why this run's host was too busy for its timing to be judged, from the kit's own evidence, or None."""
    kit = doc["part_b"]["student"]
    late = kit.get("reference_lateness_us")
    if late is not None and late > HOST_BUSY_WAIT_US:
        return ("in Part B the kit's own wait returned %.0f us after its kernel ended in its best round (more than "
                "%.0f us)" % (late, HOST_BUSY_WAIT_US))
    if kit.get("pairs_started_late"):
        return ("the host started %d pair(s) of Part B's threads too late for their kernels to overlap, in every round"
                % kit["pairs_started_late"])
    return None


def _hint(*sections):
    return hint(HANDOUT, " and ".join(sections))


S_LEGACY = "2.2 (the legacy default stream and implicit synchronization)"
S_NON_BLOCKING = "2.3 (non-blocking streams and the special handles)"
S_PER_THREAD = "2.4 (the per-thread default stream: a compile-time choice)"
S_WAIT = "2.5 (waiting for your own work)"
S_MEASURE = "2.6 (how the kit measures a timeline)"
S_STEPS = "3 (the lab, step by step)"

# The memcheck case: 32 streams, the most the harness takes (the kit's table of kernels full).
MEMCHECK_CASE = {"streams": 32, "threads": 8, "spin_us": 1000, "thread_spin_us": 1000, "repeats": 1}


# What the student's objects may import beyond what every lab may (gradelib.objects): the host threads' own calls (the harness starts the threads).
IMPORTS = Imports(host=("pthread_once", "pthread_mutex_lock", "pthread_mutex_unlock", "sched_yield", "usleep", "nanosleep"),
                  device=("kit_lab05_worker", "kit_lab05_tiny"))  # what default_streams.h's kernels call


LAB = Lab(
    name="05-default-streams",
    title="Lab 05: default streams",
    handout=HANDOUT,
    harness=HARNESS,
    make_cases=make_cases,
    recorded_case={"streams": 8, "threads": 8, "spin_us": 1000, "thread_spin_us": 1000, "repeats": 5},
    memcheck_case=MEMCHECK_CASE,
    # Every case is timed and runs with the GPU alone. In a class of 200 on four H200s (32 jobs, the host
    # busy), every case of every submission graded took at most 2.1 s but one: still-legacy's delayed case
    # went past the default 6 s once, and its run was cut short; a submission that must end to be judged
    # (a solution among them) would lose every timing check so.
    time_limit=12,
    imports=IMPORTS,
    host_too_busy=host_too_busy,
    starter_must_fail=("Part B waits without cudaDeviceSynchronize", "fix explained"),
    checks=[
        compiles(1, hint=_hint(S_STEPS, S_PER_THREAD),
                 passes=("your files build; the build reads `nvcc.flags` through the kit's whitelist first and "
                         'stops, naming the option, if it holds anything else')),
        runs_cleanly(1, hint=_hint(S_MEASURE), problem=run_problem,
                     passes=("every case ends in time with no CUDA error, the kit's table and stamps are as the kit "
                             'wrote them, and every worker and tiny kernel ran exactly once in every round, with an '
                             'index the job has, launched as `default_streams.h` says (`<<<1, WORKER_THREADS>>>`, '
                             '`<<<1, 1>>>`)')),
        memcheck_clean(1, hint=hint(HANDOUT, "4 (how it is graded)"),
                       passes=("memcheck reports no error while the lab's memcheck case runs: 32 streams, 8 threads,"
                               ' one round (`--streams 32 --threads 8 --spin-us 1000 --thread-spin-us 1000 --repeats'
                               ' 1`)')),
        chk.Check("flags file allowed", 1, chk.STATIC, check_flags_allowed, hint=_hint(S_PER_THREAD),
                  passes=("`nvcc.flags` holds only `--default-stream per-thread` or `legacy` (any of nvcc's "
                          'spellings, once), comments and blank lines')),
        chk.Check("Part B waits without cudaDeviceSynchronize", 1, chk.STATIC, check_no_device_sync_in_part_b,
                  parent=COMPILES, hint=_hint(S_WAIT),
                  passes='the body of `thread_launch_and_wait`, comments aside, has no `cudaDeviceSynchronize(`'),
        chk.Check("fix explained", 1, chk.STATIC, check_explanation, parent=COMPILES,
                  hint=_hint(S_NON_BLOCKING, S_PER_THREAD),
                  passes=('a `/* WHY: ... */` comment of twelve words or more, with no TODO, names the per-thread '
                          'default stream or non-blocking streams')),
        chk.Check("legacy build serializes", 1, chk.RUNTIME, check_legacy_serializes, parent=RUNS_CLEANLY,
                  hint=_hint(S_LEGACY), timing=True,
                  passes=("the kit's legacy versions ran no two kernels at once: the kit's premise (if this fails, "
                          'the message says so: it is not your doing)')),
        chk.Check("Part A runs concurrently", 3, chk.RUNTIME, check_part_a_concurrent, parent=RUNS_CLEANLY,
                  hint=_hint(S_NON_BLOCKING, S_PER_THREAD), timing=True,
                  passes=("in the same run, every stream's worker ran at the same time as every other one, each pair"
                          ' in at least one of the rounds, and legacy span / your span is at least '
                          "{MIN_SPAN_RATIO_A} (the cases without the kit's delays)")),
        chk.Check("Part A returns after its kernels", 2, chk.RUNTIME, check_part_a_returns, parent=RUNS_CLEANLY,
                  hint=_hint(S_WAIT, S_MEASURE), timing=True,
                  passes=('in every round of every case, `many_streams` returned no more than '
                          '{RETURN_EARLY_TOLERANCE_US} µs before the last kernel it launched (worker or tiny kernel)'
                          ' ended: that margin covers the clock calibration')),
        chk.Check("Part A returns soon after its kernels", 1, chk.RUNTIME, check_part_a_returns_soon,
                  parent=RUNS_CLEANLY, hint=_hint(S_WAIT, S_MEASURE), timing=True,
                  passes=('the median over the rounds of that return time is at most {MAX_RETURN_LATE_US} µs: a '
                          'wait, not a sleep long enough to outlast every kernel')),
        chk.Check("Part B runs concurrently", 3, chk.RUNTIME, check_part_b_concurrent, parent=RUNS_CLEANLY,
                  hint=_hint(S_PER_THREAD), timing=True,
                  passes='the same for the threads'),
        chk.Check("Part B waits only for its own stream", 2, chk.RUNTIME, check_waits_own_stream,
                  parent=RUNS_CLEANLY, hint=_hint(S_WAIT), timing=True,
                  passes=("in its best round, every thread's wait returned no later than the kit's reference wait "
                          "(its best round) by more than half the gap between the end of the kit's longer kernel and"
                          " the end of the thread's own; and in no round did a thread return more than a tenth of "
                          'the base length before its kernel ended')),
    ],
)
