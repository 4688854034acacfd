"""Lab 05's grading rules on constructed harness documents (no GPU needed), and the flags whitelist
(the kit's own script, the one the build runs)."""
import json
import os
import random
import tempfile
import unittest

from gradelib import checks as chk
from gradelib import paths, starters
from gradelib.context import CaseRun
from rubrics import lab05
from tests.fakes import FakeContext




def serial(n, lengths, gap=5.0):
    """Kernels one after another: (start, end) pairs."""
    out, t = [], 0.0
    for i in range(n):
        out.append((t, t + lengths[i]))
        t += lengths[i] + gap
    return out


def together(n, lengths, skew=3.0):
    return [(i * skew, i * skew + lengths[i]) for i in range(n)]


def side(intervals, n_default=0, lateness=None, concurrent=None, returns=None, earliest=None, reference=None,
         rounds=5):
    """A side's summary as the harness writes it, from the workers' (start, end) intervals, over rounds
    counted rounds (the kit's legacy side: LEGACY_ROUNDS). returns (Part A): [(lateness_us, last kind)]
    per round; earliest (Part B): per thread, its earliest round; reference (Part B, the student's side):
    (the kit's own wait's best lateness, the end of its kernel)."""
    kernels = [{"kind": "worker", "row": i, "runs": 1, "start_us": s, "end_us": e, "sm": i, "threads": 64,
                "blocks": 1, "length_us": e - s} for i, (s, e) in enumerate(intervals)]
    last = max(e for _, e in intervals)
    for i in range(n_default):  # tiny kernels right after their worker, or all at once
        kernels.append({"kind": "default", "row": i, "runs": 1, "start_us": intervals[i][1] + 1,
                        "end_us": intervals[i][1] + 1, "sm": 0, "threads": 1, "blocks": 1, "length_us": 0.0})
    span = last - min(s for s, _ in intervals)
    at_once = concurrent if concurrent is not None else max(
        sum(1 for s2, e2 in intervals if s2 <= s < e2) for s, _ in intervals)
    doc = {"span_us": span, "max_concurrent": at_once, "overlapping_pairs": 0 if at_once == 1 else 28,
           "missing": 0, "duplicated": 0, "misshapen": 0, "stray": 0, "tampered": 0, "tampered_what": "",
           "pairs_never_overlapping": 0 if at_once == len(intervals) else len(intervals) * (len(intervals) - 1) // 2,
           "first_pair_never_overlapping": [] if at_once == len(intervals) else [0, 1],
           "spans_us": [span] * rounds,
           "max_concurrent_runs": [at_once] * rounds, "median_round": rounds // 2, "kernels": kernels}
    if n_default:
        returns = returns or [(8.0, "worker")] * rounds
        doc["return_runs"] = [{"round": k + 1, "lateness_us": l, "last_kind": kind, "last_row": 3,
                               "last_end_us": last} for k, (l, kind) in enumerate(returns)]
        doc["return_lateness_us"] = sorted(l for l, _ in returns)[len(returns) // 2]
        doc["return_lateness_min_us"] = min(l for l, _ in returns)
    if lateness is not None:
        doc["lateness_us"] = lateness
        doc["earliest_lateness_us"] = earliest if earliest is not None else [l - 3.0 for l in lateness]
        doc["worst_lateness_runs_us"] = [max(lateness)] * rounds
        for k in kernels:
            k["wait_returned_us"] = k["end_us"] + lateness[k["row"]]
    if reference is not None:
        best, reference_end = reference
        doc["reference_lateness_us"] = best
        doc["reference_lateness_runs_us"] = [best + 4.0 * k for k in range(5)]
        doc["device_wait_gap_us"] = [reference_end - e for _, e in intervals]
    return doc


# Part A's return, per round: (lateness_us, the kind of kernel that ended last).
RETURNS = {
    "waits": [(8.0, "worker"), (6.0, "default"), (9.0, "worker"), (7.0, "default"), (8.0, "worker")],
    # the final cudaStreamSynchronize(0) dropped: early only where the kit's long tiny kernels end last
    "no-default-sync": [(9.0, "worker"), (-4100.0, "default"), (7.0, "worker"), (-3900.0, "default"),
                        (8.0, "worker")],
    # only the default stream waited for: early by about a worker's length when a worker ends last
    "default-only": [(-985.0, "worker"), (6.0, "default"), (-990.0, "worker"), (5.0, "default"),
                     (-980.0, "worker")],
    # a 1 ms sleep per stream instead of its wait: never early, thousands of us late where workers end last
    "sleeps": [(4300.0, "worker"), (40.0, "default"), (4100.0, "worker"), (30.0, "default"),
               (4200.0, "worker")],
}


LEGACY_ROUNDS = 2  # the harness's counted rounds of the kit's legacy side (harness.cu)


def make_doc(p, student_a="concurrent", student_b="concurrent", waits="own", returns="waits", earliest=None):
    n, t = p["streams"], p["threads"]
    spin, base = float(p["spin_us"]), float(p["thread_spin_us"])
    a_len = [spin] * n
    b_len = [(i + 1) * base for i in range(t)]
    a_student = together(n, a_len) if student_a == "concurrent" else serial(n, a_len)
    b_student = together(t, b_len) if student_b == "concurrent" else serial(t, b_len)
    # the kit's reference kernel: twice the longest thread's, from the start; its own wait 10 us late
    reference_end = 2 * max(b_len)
    if waits == "own":
        lateness = [12.0 + i for i in range(t)]
    elif waits == "all":  # every thread returns when the kit's reference kernel has ended
        lateness = [reference_end - e + 10.0 for _, e in b_student]
    else:  # "none": returned at once
        lateness = [-(e - s) + 5.0 for s, e in b_student]
    return {
        "device": {"name": "test GPU"},
        "params": dict(p),
        "max_connections": "32",
        "part_a": {"legacy": side(serial(n, a_len), n_default=n, rounds=LEGACY_ROUNDS),
                   "student": side(a_student, n_default=n, returns=RETURNS[returns])},
        "part_b": {"legacy": side(serial(t, b_len), lateness=[10.0] * t, rounds=LEGACY_ROUNDS),
                   "student": side(b_student, lateness=lateness, earliest=earliest,
                                   reference=(10.0, reference_end))},
    }


SOLUTION_SOURCE = """
/* WHY: nvcc.flags builds this file with --default-stream per-thread, so the tiny kernels go to this
 * thread's own default stream, which does not synchronize with the created streams. */
void many_streams(const streams_job_t *job) { }
void thread_launch_and_wait(const thread_job_t *job)
{
    kit_worker_kernel<<<1, WORKER_THREADS>>>(job->stamp, job->spin_ns);
    if (job->thread_index >= 0) { KIT_CHECK(cudaGetLastError()); }
#ifdef KIT_STARTER
    KIT_CHECK(cudaDeviceSynchronize());
#else
    KIT_CHECK(cudaStreamSynchronize(cudaStreamPerThread)); // not cudaDeviceSynchronize()
#endif /* KIT_STARTER */
}
"""


class Lab05Test(unittest.TestCase):
    def setUp(self):
        self.cases = lab05.make_cases(random.Random(5))

    def ctx(self, source=SOLUTION_SOURCE, **kinds):
        return FakeContext([(p, make_doc(p, **kinds)) for p in self.cases], source=source)

    def ctx_delayed(self, **kinds):
        """The documents of the solution, but for the delayed case, made with kinds."""
        return FakeContext([(p, make_doc(p, **(kinds if p.get("delay_us") else {}))) for p in self.cases],
                           source=SOLUTION_SOURCE)

    def run_check(self, name, ctx):
        return lab05.LAB.check_named(name).func(ctx)

    def test_cases(self):
        self.assertEqual(self.cases, lab05.make_cases(random.Random(5)))
        self.assertEqual((self.cases[0]["streams"], self.cases[0]["threads"]), (8, 8), "the seed's sizes first")
        for c in self.cases:
            args = lab05.LAB.harness_args(c)
            self.assertIn("--streams", args)
            self.assertIn("--thread-spin-us", args)
            self.assertGreaterEqual(c["threads"], 8)
            self.assertIs(c["timing"], True, "every case is a timed timeline")
            self.assertNotIn("--timing", args)
            self.assertNotIn("True", args)
        seeds = {(c["streams"], c["threads"]) for s in range(20) for c in lab05.make_cases(random.Random(s))[1:]}
        self.assertGreater(len(seeds), 5, "the drawn sizes vary with the seed")

    def test_delayed_case(self):
        """One case, the last, turns on the kit's hidden delays, scaled so that a skipped wait or a sleep
        of the job's length is visibly early (see DELAY_FACTOR); the others have none."""
        self.assertEqual([bool(c.get("delay_us")) for c in self.cases], [False, False, False, True])
        for s in range(30):
            d = lab05.make_cases(random.Random(s))[-1]
            args = lab05.LAB.harness_args(d)
            self.assertEqual(args[args.index("--delay-us") + 1], str(d["delay_us"]))
            self.assertEqual(args[args.index("--delay-seed") + 1], str(d["delay_seed"]))
            self.assertGreaterEqual(d["streams"], 6)
            self.assertGreaterEqual(d["delay_us"], 2 * d["spin_us"], "tiny kernels outlast the workers")
            self.assertGreaterEqual(d["delay_us"] / 2, d["thread_spin_us"], "a Part B delay is a base length or more")
            self.assertGreaterEqual(d["repeats"], 2, "both shapes of Part A's delays need a round")
        self.assertGreater(len({lab05.make_cases(random.Random(s))[-1]["delay_seed"] for s in range(10)}), 5)
        self.assertNotIn("--delay-us", lab05.LAB.harness_args(self.cases[0]))
        # tools that build a case by hand (no delay keys) still get valid arguments
        self.assertNotIn("--delay-us", lab05.LAB.harness_args({"streams": 8, "threads": 8, "spin_us": 1000,
                                                           "thread_spin_us": 1000, "repeats": 5}))

    def test_timing_checks(self):
        """Every runtime check of this lab reads timelines: marked timing, and it reads only the timing
        cases (a case without the key is not looked at)."""
        for c in lab05.LAB.own_checks:
            self.assertEqual(c.timing, c.kind == chk.RUNTIME, c.name)
        ctx = self.ctx()
        ctx.runs.append(CaseRun({"streams": 8, "threads": 8, "spin_us": 1000, "thread_spin_us": 1000,
                                 "repeats": 5}, None, {}, None))
        for c in lab05.LAB.own_checks:
            if c.timing:
                self.assertEqual(c.func(ctx).status, chk.PASSED, c.name)

    def test_solution_documents_pass(self):
        ctx = self.ctx()
        for name in ("legacy build serializes", "Part A runs concurrently", "Part A returns after its kernels",
                     "Part A returns soon after its kernels", "Part B runs concurrently",
                     "Part B waits only for its own stream", "Part B waits without cudaDeviceSynchronize",
                     "fix explained"):
            self.assertEqual(self.run_check(name, ctx).status, chk.PASSED, name)
        for p, d in ((r.params, r.doc) for r in ctx.runs):
            self.assertIsNone(lab05.run_problem(p, d))

    def test_still_legacy_fails_part_a(self):
        out = self.run_check("Part A runs concurrently", self.ctx(student_a="serial"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("28 pair(s) of your 8 streams' workers never ran at the same time in any of 5 rounds", out.message)
        self.assertIn("the kit's legacy version took 8035 us (the best of 2 rounds), yours 8035 us (the best of 5): "
                      "1.00x (at least 2.00x wanted)", out.message)

    def test_ratio_alone_fails(self):
        """Kernels that overlap but a span no shorter than the legacy one still fail."""
        ctx = self.ctx()
        for run in ctx.runs:
            legacy, student = run.doc["part_a"]["legacy"], run.doc["part_a"]["student"]
            student["span_us"] = legacy["span_us"] / 1.5
            student["spans_us"] = [min(legacy["spans_us"]) / 1.5] * len(legacy["spans_us"])
        out = self.run_check("Part A runs concurrently", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("1.50x", out.message)
        self.assertNotIn("never ran at the same time", out.message)

    def test_ratio_is_of_the_best_rounds(self):
        """A busy host lengthens some rounds: the best round of each side is compared."""
        ctx = self.ctx()
        for run in ctx.runs:
            legacy, student = run.doc["part_b"]["legacy"], run.doc["part_b"]["student"]
            student["spans_us"] = [legacy["span_us"]] * 4 + [legacy["span_us"] / 4]
            student["span_us"] = legacy["span_us"]
        self.assertEqual(self.run_check("Part B runs concurrently", ctx).status, chk.PASSED)

    def test_shared_stream_fails_part_b(self):
        out = self.run_check("Part B runs concurrently", self.ctx(student_b="serial"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("pair(s) of your 8 threads' kernels never ran at the same time", out.message)
        self.assertEqual(self.run_check("Part A runs concurrently", self.ctx(student_b="serial")).status,
                         chk.PASSED)

    def test_waiting_for_everything_fails(self):
        out = self.run_check("Part B waits only for its own stream", self.ctx(waits="all"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("worst, thread 0: in its best round its wait returned", out.message)
        self.assertIn("it waited for other work than its own", out.message)
        self.assertIn("4 of 4 cases wrong", out.message)

    def test_not_waiting_fails(self):
        out = self.run_check("Part B waits only for its own stream", self.ctx(waits="none"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("before their own kernel ended", out.message)

    def test_no_default_stream_sync_fails(self):
        """no-default-stream-sync: early only where the kit's long tiny kernels end last (the delayed
        case's even rounds); the message names the default stream."""
        ctx = self.ctx_delayed(returns="no-default-sync")
        out = self.run_check("Part A returns after its kernels", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("1 of 4 cases wrong", out.message)
        self.assertIn("in 2 of 5 rounds many_streams returned before every kernel it launched had finished", out.message)
        self.assertIn("round 2: 4100 us before the last one, tiny kernel 3 on the default stream, ended", out.message)
        self.assertIn("it must wait for the default stream", out.message)
        self.assertNotIn("worker into", out.message)
        self.assertAlmostEqual(out.fraction, 3 / 4)
        self.assertEqual(self.run_check("Part A returns soon after its kernels", ctx).status, chk.PASSED)

    def test_default_stream_only_fails(self):
        """syncs-default-stream-only: early wherever a worker ends last, in every case."""
        out = self.run_check("Part A returns after its kernels", self.ctx(returns="default-only"))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("4 of 4 cases wrong", out.message)
        self.assertIn("in 3 of 5 rounds", out.message)
        self.assertIn("990 us before the last one, the worker in stream 3, ended", out.message)
        self.assertIn("it must wait for every stream it launched a worker into", out.message)

    def test_return_tolerance(self):
        """Up to RETURN_EARLY_TOLERANCE_US early (clock calibration) passes; more fails, in any one round."""
        edge = lab05.RETURN_EARLY_TOLERANCE_US
        RETURNS["edge"] = [(-edge + 1.0, "worker")] + RETURNS["waits"][1:]
        RETURNS["over"] = [(-edge - 1.0, "default")] + RETURNS["waits"][1:]
        try:
            self.assertEqual(self.run_check("Part A returns after its kernels", self.ctx(returns="edge")).status,
                             chk.PASSED)
            out = self.run_check("Part A returns after its kernels", self.ctx(returns="over"))
            self.assertEqual(out.status, chk.FAILED)
            self.assertIn("in 1 of 5 rounds", out.message)
        finally:
            del RETURNS["edge"], RETURNS["over"]

    def test_part_a_sleep_fails_returns_soon(self):
        """A sleep long enough never to return early is late by thousands of us in most rounds."""
        ctx = self.ctx_delayed(returns="sleeps")
        self.assertEqual(self.run_check("Part A returns after its kernels", ctx).status, chk.PASSED)
        out = self.run_check("Part A returns soon after its kernels", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("many_streams returned 4100 us after the last kernel it launched had ended", out.message)
        self.assertIn("4300 40 4100 30 4200", out.message)
        self.assertIn("not for a set time", out.message)
        # one slow round (the host busy) does not count: the median does
        RETURNS["one-slow"] = [(9000.0, "worker")] + RETURNS["waits"][1:]
        try:
            self.assertEqual(self.run_check("Part A returns soon after its kernels", self.ctx(returns="one-slow")).status,
                             chk.PASSED)
        finally:
            del RETURNS["one-slow"]

    def test_part_b_sleep_fails(self):
        """sleeps-instead-of-waiting: in the undisturbed cases a sleep of the job's length plus a margin
        looks like a slow wait; in the delayed case, threads whose kernel the kit lengthened return before
        it ends in some round, although every median is positive."""
        t = self.cases[-1]["threads"]
        ctx = FakeContext([(p, make_doc(p)) for p in self.cases], source=SOLUTION_SOURCE)
        for run in ctx.runs:
            b = run.doc["part_b"]["student"]
            b["lateness_us"] = [80.0] * len(b["lateness_us"])
            b["earliest_lateness_us"] = [60.0] * len(b["lateness_us"])
            if run.params.get("delay_us"):
                b["earliest_lateness_us"] = [60.0 if i % 2 else -450.0 - i for i in range(t)]
        out = self.run_check("Part B waits only for its own stream", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("1 of 4 cases wrong", out.message)
        self.assertIn("thread(s) returned before their own kernel ended (worst, thread", out.message)
        self.assertIn("whose length is not always the job's", out.message)
        self.assertNotIn("returned late", out.message)
        self.assertTrue(all(l > 0 for r in ctx.runs for l in r.doc["part_b"]["student"]["lateness_us"]),
                        "the medians alone would not show it")
        self.assertEqual(self.run_check("Part B runs concurrently", ctx).status, chk.PASSED)

    def test_concurrency_leaves_out_the_delayed_case(self):
        """The delayed case's kernels are not the lengths the thresholds were set for: its spans and
        counts do not count, even when they would fail."""
        ctx = self.ctx_delayed(student_a="serial", student_b="serial")
        for name in ("Part A runs concurrently", "Part B runs concurrently"):
            out = self.run_check(name, ctx)
            self.assertEqual(out.status, chk.PASSED, name)
            self.assertEqual(out.message, "3 cases", name)
        self.assertEqual(self.run_check("legacy build serializes", ctx).message, "4 cases")

    def test_case_at_the_harness_limit(self):
        """Every seed grades 32 streams, the most the harness takes (the kit's table full: a stream index
        one past the job's is past the table), without the kit's delays."""
        for seed in range(20):
            edge = [c for c in lab05.make_cases(random.Random(seed)) if c["streams"] == lab05.MAX_STREAMS]
            self.assertEqual(len(edge), 1)
            self.assertFalse(edge[0].get("delay_us"))
        self.assertEqual(lab05.MEMCHECK_CASE["streams"], lab05.MAX_STREAMS)

    def test_half_at_once_fails(self):
        """streams-in-pairs / threads-in-pairs: two kernels to a stream, so those two never run together
        and half of them at once; the span is still 2x or more under the legacy one's."""
        ctx = self.ctx()
        for run in ctx.runs:
            for part, n in (("part_a", run.params["streams"]), ("part_b", run.params["threads"])):
                student, legacy = run.doc[part]["student"], run.doc[part]["legacy"]
                student["max_concurrent"] = (n + 1) // 2
                student["max_concurrent_runs"] = [(n + 1) // 2] * 5
                student["pairs_never_overlapping"] = n // 2
                student["first_pair_never_overlapping"] = [0, 1]
                student["span_us"] = legacy["span_us"] / 2.5  # the ratio alone would pass
        for name, what in (("Part A runs concurrently", "streams' workers"),
                           ("Part B runs concurrently", "threads' kernels")):
            out = self.run_check(name, ctx)
            self.assertEqual(out.status, chk.FAILED, name)
            self.assertIn("4 pair(s) of your 8 %s never ran at the same time in any of 5 rounds (first: 0 and 1; "
                          "at most 4 at once" % what, out.message)
            self.assertNotIn("at least 2.00x wanted", out.message)

    def test_each_pair_once_is_enough(self):
        """A host that starts one thread late in some rounds: no round had them all at once, but every pair
        ran together in some round."""
        ctx = self.ctx()
        for run in ctx.runs:
            b = run.doc["part_b"]["student"]
            t = run.params["threads"]
            b["max_concurrent_runs"] = [t - 2, t - 1, t - 1, t - 2, t - 1]
            b["max_concurrent"] = t - 1
        self.assertEqual(self.run_check("Part B runs concurrently", ctx).status, chk.PASSED)

    def test_documents_without_pairs_use_the_best_round(self):
        ctx = self.ctx()
        for run in ctx.runs:
            a = run.doc["part_a"]["student"]
            del a["pairs_never_overlapping"], a["first_pair_never_overlapping"]
        self.assertEqual(self.run_check("Part A runs concurrently", ctx).status, chk.PASSED)
        for run in ctx.runs:
            run.doc["part_a"]["student"]["max_concurrent_runs"] = [run.params["streams"] - 1] * 5
        out = self.run_check("Part A runs concurrently", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("in the best of 5 rounds (all 8 wanted", out.message)

    def test_tampered_evidence_is_not_clean(self):
        p = self.cases[-1]
        d = make_doc(p)
        d["part_a"]["student"]["tampered"] = 3
        d["part_a"]["student"]["tampered_what"] = "tiny kernel 2: its length in the kit's table changed during the round"
        problem = lab05.run_problem(p, d)
        self.assertIn("Part A, your version's rounds: the kit's evidence was tampered with in 3 of 5 rounds", problem)
        self.assertIn("tiny kernel 2: its length in the kit's table changed", problem)
        self.assertIn("nothing of this run can be believed", problem)

    def test_stray_launches_are_not_clean(self):
        """end-marker-past-stamps, and the mutant that launches one worker past the job: a kernel with an
        index the job does not have runs nothing, and is counted."""
        p = self.cases[0]
        d = make_doc(p)
        d["part_a"]["student"]["stray"] = 5
        problem = lab05.run_problem(p, d)
        self.assertIn("Part A, your version: 5 launch(es) over 5 rounds with an index the job does not have", problem)

    def test_wait_noise_does_not_fail_a_correct_wait(self):
        """The busy-H200 run: one thread's median wait 1,354 us late, but its best round as quick as the
        kit's own wait; and a host where every correct wait is slow (the reference too)."""
        ctx = self.ctx()
        for run in ctx.runs:
            b = run.doc["part_b"]["student"]
            b["lateness_us"][3] = 1354.0
            b["earliest_lateness_us"][3] = 14.0
        self.assertEqual(self.run_check("Part B waits only for its own stream", ctx).status, chk.PASSED)
        for run in ctx.runs:
            b = run.doc["part_b"]["student"]
            b["reference_lateness_us"] = 900.0
            b["earliest_lateness_us"] = [910.0 + i for i in range(len(b["earliest_lateness_us"]))]
        self.assertEqual(self.run_check("Part B waits only for its own stream", ctx).status, chk.PASSED)

    def test_wait_margin_comes_from_the_kits_gap(self):
        """The allowed lateness is half the gap by which the kit's reference kernel ended after the
        thread's own, in the same run: no constant."""
        ctx = self.ctx()
        for run in ctx.runs:
            b = run.doc["part_b"]["student"]
            b["device_wait_gap_us"] = [1000.0] * len(b["device_wait_gap_us"])
            b["earliest_lateness_us"] = [10.0 + 490.0] + [12.0] * (len(b["device_wait_gap_us"]) - 1)
        self.assertEqual(self.run_check("Part B waits only for its own stream", ctx).status, chk.PASSED)
        for run in ctx.runs:
            run.doc["part_b"]["student"]["earliest_lateness_us"][0] = 10.0 + 510.0
        out = self.run_check("Part B waits only for its own stream", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("510 us later than the kit's own wait for its own stream (at most 500 us wanted", out.message)

    def test_thread_started_late_is_not_judged(self):
        """A thread whose kernel ended after the kit's longer kernel (the GPU started it late: gap below
        zero, seen on an H100 in the 32-stream case) tells nothing about its wait; the others still do,
        and with no thread to judge anywhere the check says so."""
        ctx = self.ctx()
        for run in ctx.runs:
            b = run.doc["part_b"]["student"]
            b["device_wait_gap_us"][0] = -1158.0
            b["earliest_lateness_us"][0] = b["reference_lateness_us"] + 27.0
        self.assertEqual(self.run_check("Part B waits only for its own stream", ctx).status, chk.PASSED)
        for run in ctx.runs:
            b = run.doc["part_b"]["student"]
            b["earliest_lateness_us"][1] = b["reference_lateness_us"] + b["device_wait_gap_us"][1]
        self.assertEqual(self.run_check("Part B waits only for its own stream", ctx).status, chk.FAILED)
        for run in ctx.runs:
            b = run.doc["part_b"]["student"]
            b["device_wait_gap_us"] = [-5.0] * len(b["device_wait_gap_us"])
        out = self.run_check("Part B waits only for its own stream", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("no thread of any case could be judged", out.message)

    def test_reference_wait_missing(self):
        ctx = self.ctx()
        del ctx.runs[0].doc["part_b"]["student"]["reference_lateness_us"]
        out = self.run_check("Part B waits only for its own stream", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("no reference wait", out.message)

    def test_misshapen_launches_are_not_clean(self):
        p = self.cases[0]
        d = make_doc(p)
        self.assertIsNone(lab05.run_problem(p, d))
        d["part_a"]["student"]["misshapen"] = 40
        problem = lab05.run_problem(p, d)
        self.assertIn("Part A, your version: 40 kernel(s) launched in another shape", problem)
        self.assertIn("kit_worker_kernel<<<1, WORKER_THREADS, 0, stream>>>", problem)

    def test_legacy_premise(self):
        ctx = self.ctx()
        self.assertEqual(self.run_check("legacy build serializes", ctx).status, chk.PASSED)
        ctx.runs[0].doc["part_a"]["legacy"]["overlapping_pairs"] = 3
        ctx.runs[0].doc["part_a"]["legacy"]["max_concurrent"] = 2
        out = self.run_check("legacy build serializes", ctx)
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("the kit's premise did not hold", out.message)
        self.assertIn("Part A: 3 overlapping pair(s) of kernels over 2 rounds", out.message)  # the legacy side's

    def test_missing_kernels_are_not_clean(self):
        p = self.cases[0]
        d = make_doc(p)
        d["part_a"]["student"]["missing"] = 8
        problem = lab05.run_problem(p, d)
        self.assertIn("Part A, your version: 8 kernel(s) never ran", problem)

    def test_device_synchronize_in_part_b(self):
        source = SOLUTION_SOURCE.replace("cudaStreamSynchronize(cudaStreamPerThread)", "cudaDeviceSynchronize()")
        out = self.run_check("Part B waits without cudaDeviceSynchronize", self.ctx(source=source))
        self.assertEqual(out.status, chk.FAILED)
        self.assertIn("cudaDeviceSynchronize", out.message)

    def test_device_synchronize_elsewhere_or_in_comments_is_fine(self):
        source = SOLUTION_SOURCE.replace("void many_streams(const streams_job_t *job) { }",
                                         "void many_streams(const streams_job_t *job) { cudaDeviceSynchronize(); }")
        source += "\n/* thread_launch_and_wait must not call cudaDeviceSynchronize() */\n"
        out = self.run_check("Part B waits without cudaDeviceSynchronize", self.ctx(source=source))
        self.assertEqual(out.status, chk.PASSED, out.message)

    def test_missing_part_b_function(self):
        out = self.run_check("Part B waits without cudaDeviceSynchronize", self.ctx(source="int x;"))
        self.assertEqual(out.status, chk.FAILED)

    def test_explanation(self):
        self.assertEqual(self.run_check("fix explained", self.ctx()).status, chk.PASSED)
        todo = "/* WHY: TODO explain the per-thread default stream fix here in twelve words or more please */"
        self.assertEqual(self.run_check("fix explained", self.ctx(source=todo)).status, chk.FAILED)
        vague = "/* WHY: it works now because I changed some things in the file and it runs faster now */"
        self.assertEqual(self.run_check("fix explained", self.ctx(source=vague)).status, chk.FAILED)
        nb = ("/* WHY: streams created with cudaStreamNonBlocking do not synchronize with the legacy default "
              "stream, so the tiny kernels no longer serialize the workers */")
        self.assertEqual(self.run_check("fix explained", self.ctx(source=nb)).status, chk.PASSED)
        self.assertEqual(self.run_check("fix explained", self.ctx(source="")).status, chk.FAILED)

    def test_a_run_whose_host_was_too_busy_says_why_and_the_recorded_runs_were_not(self):
        """The kit's own wait late by more than HOST_BUSY_WAIT_US in its best round, or a pair of threads
        started late in every round: the run runs again (gradelib.runs.BUSY_RUNS_AGAIN). No recorded run
        of the solution or a known-wrong submission was."""
        folder = os.path.join(paths.KIT_ROOT, "grader", "tests", "data", "recorded")
        recorded = {}
        for name in os.listdir(folder):
            if name.startswith("lab05-"):
                with open(os.path.join(folder, name)) as f:
                    recorded[name] = json.load(f)
        self.assertGreater(len(recorded), 10)
        for name, doc in recorded.items():
            self.assertIsNone(lab05.host_too_busy(doc["params"], doc), name)
        doc = recorded["lab05-solution.json"]
        student = doc["part_b"]["student"]
        student["reference_lateness_us"] = lab05.HOST_BUSY_WAIT_US + 1
        self.assertIn("kit's own wait returned 1001 us", lab05.host_too_busy(doc["params"], doc))
        student["reference_lateness_us"] = lab05.HOST_BUSY_WAIT_US
        student["pairs_started_late"] = 2
        self.assertIn("started 2 pair(s)", lab05.host_too_busy(doc["params"], doc))
        self.assertIs(lab05.LAB.host_too_busy, lab05.host_too_busy)

    def test_checks_have_parents_and_hints(self):
        for c in lab05.LAB.own_checks:
            self.assertTrue(c.hint.startswith("read handouts/05-default-streams.md, section "), c.name)
            if c.kind == chk.RUNTIME:
                self.assertEqual(c.parent, "runs cleanly", c.name)
        self.assertIn("fix explained", lab05.LAB.starter_must_fail)


class FlagsWhitelistTest(unittest.TestCase):
    ALLOWED = [
        ("", "none"),
        ("# only a comment\n\n", "none"),
        ("--default-stream per-thread\n", "--default-stream=per-thread"),
        ("--default-stream=per-thread\n", "--default-stream=per-thread"),
        ("-default-stream per-thread\n", "--default-stream=per-thread"),
        ("-default-stream=per-thread\n", "--default-stream=per-thread"),
        ("--default-stream legacy\n", "--default-stream=legacy"),
        ("--default-stream=legacy\n", "--default-stream=legacy"),
        ("-default-stream legacy\n", "--default-stream=legacy"),
        ("  --default-stream per-thread   # for Part A and Part B\r\n", "--default-stream=per-thread"),
        ("#ifdef KIT_STARTER\n# TODO\n#else\n--default-stream per-thread\n#endif /* KIT_STARTER */\n",
         "--default-stream=per-thread"),
    ]
    REFUSED = [
        ("-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1\n", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"),
        ("--default-stream per-thread\n-Xcompiler -fplugin=x.so\n", "-Xcompiler"),
        ("--default-stream null\n", "null"),
        ("--default-stream\nper-thread\n", "needs its value on the same line"),
        ("--default-stream per-thread\n--default-stream legacy\n", "given twice"),
        ("--default-stream per-thread -O0\n", "-O0"),
        ("-o /tmp/elsewhere\n", "-o"),
        ("--default-streams per-thread\n", "--default-streams"),
    ]

    def verdict(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "nvcc.flags")
            with open(path, "w", newline="") as f:
                f.write(text)
            return lab05.flags_verdict(path)

    def test_allowed(self):
        for text, options in self.ALLOWED:
            allowed, message = self.verdict(text)
            self.assertTrue(allowed, "%r: %s" % (text, message))
            self.assertIn(options, message, text)

    def test_refused_names_the_option(self):
        for text, named in self.REFUSED:
            allowed, message = self.verdict(text)
            self.assertFalse(allowed, text)
            self.assertIn(named, message, text)
            self.assertIn("allowed here", message, text)

    def test_missing_file(self):
        allowed, message = lab05.flags_verdict("/nonexistent/nvcc.flags")
        self.assertFalse(allowed)
        self.assertIn("no nvcc.flags", message)

    def test_starter_markers_work_in_the_flags_file(self):
        """The solution's nvcc.flags asks for per-thread; the starter made from it by the kit's markers
        asks for nothing, and both pass the whitelist (the marker lines are comments)."""
        solution = os.path.join(paths.SOLUTIONS_DIR, lab05.LAB.name, lab05.FLAGS_FILE)
        with open(solution) as f:
            text = f.read()
        self.assertEqual(self.verdict(text), (True, "options: --default-stream=per-thread"))
        self.assertEqual(self.verdict(starters.starter_text(text)), (True, "options: none (the legacy default stream)"))

    def test_check_reads_the_staged_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "src"))
            with open(os.path.join(tmp, "src", "nvcc.flags"), "w") as f:
                f.write("-G\n")
            out = lab05.check_flags_allowed(FakeContext([], work_dir=tmp))
            self.assertEqual(out.status, chk.FAILED)
            self.assertIn('"-G" is not an option', out.message)
            with open(os.path.join(tmp, "src", "nvcc.flags"), "w") as f:
                f.write("--default-stream per-thread\n")
            self.assertEqual(lab05.check_flags_allowed(FakeContext([], work_dir=tmp)).status, chk.PASSED)


if __name__ == "__main__":
    unittest.main()
