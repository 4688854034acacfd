"""Lab 04's grading rules on constructed harness documents and PTX (no GPU needed)."""
import os
import random
import re
import unittest

from gradelib import checks as chk
from gradelib import gpushare, paths, registry, runs
from rubrics import lab04
from tests.fakes import FakeContext




def lines_ok():
    return {"lines_bad": 0, "missing": 0, "count_wrong": 0, "overruns": 0, "vertices_wrong": 0,
            "first_bad_line": -1, "first_bad_what": ""}


def good_doc(p, timing=None):
    """What the reference solution's run reports: 100 vertices per case, every limit as the solution sets it."""
    lines, bound = p["lines"], p["lines"] * p["max"]
    need = bound * 8 + lines * lab04.KIT_ALLOC_OVERHEAD
    doc = {"flat": lines_ok(), "cdp": lines_ok(), "flat_ran": True,
           "cdp_log": {"checked": lines, "failed": 0, "calls_checked": 2 * lines, "calls_failed": 0},
           "heap": {"allocations": lines, "alloc_failures": 0, "bytes_requested": 800, "frees": lines,
                    "bad_frees": 0, "free_failures": 0},
           "total_vertices": 100, "exact_bytes": 800, "worst_case_bytes": 2560,
           "pending_launch_limit": max(2048, lines + 64), "max_total_vertices": bound, "heap_need_bytes": need,
           "heap_bytes": 2 * need + (32 << 20),
           "flat_point_calls": {"calls": 100, "out_of_range": 0}, "cdp_point_calls": {"calls": 100, "out_of_range": 0},
           "cdp_grids": {"lines_counted": lines, "lines_pointed": lines, "lines_in_child": lines, "child_grids": lines,
                         "counting_grids": 1}}
    if timing:
        doc["timing_ms"] = timing
        doc["timed_runs_checked"] = {"runs": p["repeats"] + 1, "warmup": 1, "runs_wrong": 0, "first_wrong_run": 0,
                                     "first_wrong": lines_ok()}
    return doc


# The PTX of tessellate_cdp as nvcc writes it (CUDA 13.0), cut to its device runtime calls: a stream
# created, the child launched into STREAM, the launch checked (CHECK_AFTER), the stream destroyed.
CDP_PTX = """
.visible .entry _Z14tessellate_cdpP13bezier_line_tifi(
	.param .u64 _Z14tessellate_cdpP13bezier_line_tifi_param_0
)
{
	setp.ge.s32 	%p1, %r1, %r4;
	@%p1 bra 	$L__BB2_6;
CREATE
CHECK_BEFORE
	{ // callseq 8, 0
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd4;
	.param .b64 param1;
	st.param.b64 	[param1+0], STREAM;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2LaunchDeviceV2, 
	(
	param0, 
	param1
	);
	ld.param.b32 	%r15, [retval0+0];
	} // callseq 8
CHECK_AFTER
	{ // callseq 11, 0
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd13;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2StreamDestroy, 
	(
	param0
	);
	} // callseq 11
$L__BB2_6:
	ret;

}
"""
CREATE_STREAM = """	{ // callseq 5, 0
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd6;
	.param .b32 param1;
	st.param.b32 	[param1+0], 1;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2StreamCreateWithFlags, 
	(
	param0, 
	param1
	);
	} // callseq 5
"""
GET_LAST_ERROR = """	{ // callseq 9, 0
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2GetLastError, 
	(
	);
	ld.param.b32 	%r16, [retval0+0];
	} // callseq 9
"""


def cdp_ptx(stream="%rd3", create=True, check="after", launch=True):
    text = CDP_PTX.replace("STREAM", stream).replace("CREATE\n", CREATE_STREAM if create else "")
    text = text.replace("CHECK_BEFORE\n", GET_LAST_ERROR if check == "before" else "")
    text = text.replace("CHECK_AFTER\n", GET_LAST_ERROR if check == "after" else "")
    if not launch:
        text = re.sub(r"\t\{ // callseq 8, 0.*?\} // callseq 8\n", "", text, flags=re.S)
    return text


class Lab04Test(unittest.TestCase):
    def setUp(self):
        self.cases = lab04.make_cases(random.Random(9))

    def test_cases(self):
        self.assertTrue(any(c["lines"] > 2048 for c in self.cases), "more lines than the default pending pool")
        self.assertTrue(any(c["lines"] * c["max"] * 8 > 8 << 20 for c in self.cases), "a case past the 8 MiB heap")
        self.assertEqual(sorted(c["timing"] for c in self.cases if "timing" in c), ["heavy", "short", "streams"])
        self.assertEqual(self.cases, lab04.make_cases(random.Random(9)))

    def test_the_case_of_the_most_lines_has_the_gpu_alone_in_the_first_process(self):
        """Its 100,000 child grids fill the GPU (registry.WORK_FILLS_GPU): it runs alone, after the shared
        cases of the submission's first process, in that process's one CUDA context."""
        most = max(range(len(self.cases)), key=lambda k: self.cases[k]["lines"])
        self.assertEqual(self.cases[most]["lines"], lab04.HARNESS_MAX_LINES)
        alone = [runs.runs_alone(lab04.LAB, c) for c in self.cases]
        self.assertTrue(alone[most])
        self.assertNotIn("--" + registry.WORK_FILLS_GPU, lab04.LAB.harness_args(self.cases[most]))
        self.assertEqual([k for k, c in enumerate(self.cases) if c.get(registry.WORK_FILLS_GPU)], [most])
        slots = [gpushare.slots_for(lab04.gpu_bytes(c)) for c in self.cases]
        first = runs.first_processes(lab04.LAB, slots, alone)[0]
        self.assertEqual(first[-1][:2], (True, 1))
        self.assertIn(most, first[-1][2])

    def test_edge_cases_of_prepare_cdp(self):
        with open(os.path.join(paths.KIT_ROOT, "common", "include", "bezier_lines.h")) as f:
            max_lines = int(re.search(r"#define MAX_LINES (\d+)", f.read()).group(1))
        self.assertEqual(lab04.HARNESS_MAX_LINES, max_lines)
        with open(os.path.join(paths.KIT_ROOT, "common", "include", "kit_bezier.h")) as f:
            overhead = int(re.search(r"#define KIT_ALLOC_OVERHEAD (\d+)", f.read()).group(1))
        self.assertEqual(lab04.KIT_ALLOC_OVERHEAD, overhead)
        for seed in range(20):
            cases = lab04.make_cases(random.Random(seed))
            many = [c for c in cases if c["lines"] == max_lines]
            self.assertEqual(len(many), 1, "as many lines as the harness takes")
            c = many[0]
            # a heap of twice the vertices plus 32 MiB, without the per-block overhead, is too small
            self.assertLess(2 * c["lines"] * c["max"] * 8 + (32 << 20),
                            c["lines"] * (c["max"] * 8 + overhead), "the overhead must decide")
            past_4gib = [c for c in cases if c["lines"] * (c["max"] * 8 + overhead) > 1 << 32
                         and c["workload"] == "chained"]
            self.assertEqual(len(past_4gib), 1, "a worst case past 4 GiB")
            self.assertLess(past_4gib[0]["lines"] * (past_4gib[0]["max"] * 8 + overhead) % (1 << 32), 8 << 20,
                            "computed in 32 bits, the need wraps to a few MiB")

    def test_the_4_gib_edge_shares_the_gpu_with_the_slots_its_memory_fills(self):
        """Memory the harness asks to be free: what gpu_bytes counts (its source says it)."""
        with open(os.path.join(paths.KIT_ROOT, "common", "harness", "04-bezier-streams", "harness.cu")) as f:
            self.assertIn("2.0 * (double)p->heap_need + (1 << 30) > (double)p->free_bytes", f.read())
        for seed in range(20):
            for c in lab04.make_cases(random.Random(seed)):
                slots = gpushare.slots_for(lab04.gpu_bytes(c))
                if c["lines"] * c["max"] * 8 >= 1 << 32:
                    self.assertTrue(4 < slots <= gpushare.MAX_SHARERS, (c, slots))
                elif not c.get("timing"):
                    self.assertEqual(slots, 1, c)

    def ctx(self, mutate=None, timing=None):
        runs = []
        for p in self.cases:
            t = timing.get(p.get("timing")) if timing else None
            d = good_doc(p, t)
            if mutate:
                mutate(p, d)
            runs.append((p, d))
        return FakeContext(runs)

    def test_good_documents_pass(self):
        timing = {"streams": {"flat": 0.56, "cdp_null": 0.7, "cdp_student": 0.2, "cdp_fire_and_forget": 0.15},
                  "heavy": {"flat": 2.2, "cdp_null": 0.6, "cdp_student": 0.21, "cdp_fire_and_forget": 0.2},
                  "short": {"flat": 0.008, "cdp_null": 1.2, "cdp_student": 0.54, "cdp_fire_and_forget": 0.28}}
        ctx = self.ctx(timing=timing)
        for check in lab04.LAB.own_checks:
            if check.kind == chk.RUNTIME:
                self.assertEqual(check.func(ctx).status, chk.PASSED, check.name)
        message = lab04.check_children_run_concurrently(ctx).message
        self.assertIn("3.50x faster", message)
        self.assertIn("not graded", message)  # the short-lines comparison is reported, not thresholded

    def test_null_stream_speed_fails(self):
        timing = {"streams": {"flat": 0.56, "cdp_null": 0.7, "cdp_student": 0.68, "cdp_fire_and_forget": 0.2},
                  "heavy": {"flat": 2.2, "cdp_null": 0.6, "cdp_student": 0.55, "cdp_fire_and_forget": 0.2}}
        ctx = self.ctx(timing=timing)
        self.assertEqual(lab04.check_children_run_concurrently(ctx).status, chk.FAILED)
        self.assertEqual(lab04.check_cdp_beats_flat_on_heavy_tail(ctx).status, chk.PASSED)  # 4.0x exactly

    def test_missing_timing_fails(self):
        self.assertEqual(lab04.check_children_run_concurrently(self.ctx()).status, chk.FAILED)

    def test_lost_lines_name_the_failures(self):
        def lose(p, d):
            if p["lines"] > 2048:
                d["cdp_log"].update(failed=9952, first_error="cudaErrorLaunchPendingCountExceeded",
                                    first_error_line=60)
                d["cdp"].update(lines_bad=9952, missing=0, vertices_wrong=9952 * 4)
        outcome = lab04.check_no_line_lost(self.ctx(lose))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("9952 device-side launch(es) failed", outcome.message)
        self.assertIn("cudaErrorLaunchPendingCountExceeded", outcome.message)
        self.assertEqual(lab04.check_dynamic(self.ctx(lose)).status, chk.FAILED)

    def test_memory_checks(self):
        def worst(p, d):
            d["heap"]["bytes_requested"] = 2560
        self.assertIn("2560 were asked for", lab04.check_exact_allocation(self.ctx(worst)).message)

        def leak(p, d):
            d["heap"]["frees"] = 0
        self.assertEqual(lab04.check_freed(self.ctx(leak)).status, chk.FAILED)

        def overrun(p, d):
            d["cdp"].update(overruns=3, lines_bad=3)
        self.assertEqual(lab04.check_inside_block(self.ctx(overrun)).status, chk.FAILED)
        self.assertEqual(lab04.check_dynamic(self.ctx(overrun)).status, chk.PASSED)

    def test_pending_limit_must_cover_every_line(self):
        self.assertEqual(lab04.check_pending_limit_covers_lines(self.ctx()).status, chk.PASSED)

        def default_limit(p, d):  # limit-not-raised, and pending-limit-past-2048-blocks
            d["pending_launch_limit"] = 2048
        outcome = lab04.check_pending_limit_covers_lines(self.ctx(default_limit))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected a pending-launch limit of at least 12000", outcome.message)
        self.assertIn("it was 2048 (the default: never raised)", outcome.message)
        self.assertIn("at least 100000", outcome.message)
        past_default = sum(1 for c in self.cases if c["lines"] > 2048)
        self.assertIn("%d of %d cases wrong" % (past_default, len(self.cases)), outcome.message)

        def one_short(p, d):
            d["pending_launch_limit"] = max(2048, p["lines"] - 1)
        outcome = lab04.check_pending_limit_covers_lines(self.ctx(one_short))
        self.assertIn("at least 100000 (a child per line may be pending at once); after prepare_cdp it was 99999",
                      outcome.message)

        def exactly(p, d):
            d["pending_launch_limit"] = p["lines"]
        self.assertEqual(lab04.check_pending_limit_covers_lines(self.ctx(exactly)).status, chk.PASSED)

    def test_heap_must_cover_the_worst_case_with_its_overhead(self):
        self.assertEqual(lab04.check_heap_covers_worst_case(self.ctx()).status, chk.PASSED)

        def without_overhead(p, d):  # heap-without-overhead: twice the vertices plus 32 MiB
            d["heap_bytes"] = 2 * d["max_total_vertices"] * 8 + (32 << 20)
        outcome = lab04.check_heap_covers_worst_case(self.ctx(without_overhead))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertEqual(outcome.message.count("lines=100000"), 1)
        self.assertIn("1 of %d cases wrong" % len(self.cases), outcome.message)
        many = [c for c in self.cases if c["lines"] == 100000][0]
        need = many["lines"] * (many["max"] * 8 + 1024)
        self.assertIn("expected a device heap of at least %d bytes" % need, outcome.message)
        self.assertIn("%d lines x KIT_ALLOC_OVERHEAD 1024" % many["lines"], outcome.message)

        def thirty_two_bits(p, d):  # size_t -> unsigned int: the heap wraps around past 4 GiB
            d["heap_bytes"] = (2 * d["heap_need_bytes"] + (32 << 20)) % (1 << 32)
        outcome = lab04.check_heap_covers_worst_case(self.ctx(thirty_two_bits))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("lines=1024 workload=chained factor=16 max=524288", outcome.message)

        def exactly(p, d):
            d["heap_bytes"] = d["heap_need_bytes"]
        self.assertEqual(lab04.check_heap_covers_worst_case(self.ctx(exactly)).status, chk.PASSED)

    def test_each_launch_checked(self):
        self.assertEqual(lab04.check_each_launch_checked(self.ctx()).status, chk.PASSED)

        def unchecked(p, d):  # KIT_CHECK_LAUNCH() deleted
            d["cdp_log"]["checked"] = 0
        outcome = lab04.check_each_launch_checked(self.ctx(unchecked))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected 1000 launches checked with KIT_CHECK_LAUNCH() (one per line that got its vertex "
                      "block); the launch log counted 0: a launch left unchecked", outcome.message)

        def twice(p, d):
            d["cdp_log"]["checked"] = 2 * p["lines"]
        self.assertIn("a child launched twice", lab04.check_each_launch_checked(self.ctx(twice)).message)

        def heap_full(p, d):  # lines without a block launch nothing: not this check's business
            if p["lines"] < 7:
                return
            d["heap"].update(allocations=p["lines"] - 7, alloc_failures=7)
            d["cdp_log"]["checked"] = p["lines"] - 7
            d["cdp_grids"].update(child_grids=p["lines"] - 7, lines_in_child=p["lines"] - 7)
        self.assertEqual(lab04.check_each_launch_checked(self.ctx(heap_full)).status, chk.PASSED)

        def streams_failed(p, d):  # a line whose stream failed launches nothing
            if p["lines"] < 3:
                return
            d["cdp_log"].update(checked=p["lines"] - 3, calls_failed=3)
            d["cdp_grids"].update(child_grids=p["lines"] - 3, lines_in_child=p["lines"] - 3)
        self.assertEqual(lab04.check_each_launch_checked(self.ctx(streams_failed)).status, chk.PASSED)

        def streams_failed_and_unchecked(p, d):
            d["cdp_log"].update(checked=p["lines"] - 4, calls_failed=3)
        outcome = lab04.check_each_launch_checked(self.ctx(streams_failed_and_unchecked))
        self.assertIn("expected 997 to 1000 launches checked", outcome.message)

    def test_each_launch_counted_by_the_grids_that_ran(self):
        def checks_in_a_loop(p, d):  # one child for the whole parent thread, KIT_CHECK_LAUNCH() once per line
            d["cdp_grids"].update(child_grids=1, lines_in_child=p["lines"])
        outcome = lab04.check_each_launch_checked(self.ctx(checks_in_a_loop))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 child grid(s) ran and 0 launch(es) failed, so 1 checks; the launch log counted 1000",
                      outcome.message)
        self.assertIn("the kit saw 1 child grids compute 1000 of 1000 lines", outcome.message)

        def dead_code_launch(p, d):  # the parent computes its line; the checked launch is never reached
            d["cdp_grids"].update(child_grids=0, lines_in_child=0)
        self.assertEqual(lab04.check_each_launch_checked(self.ctx(dead_code_launch)).status, chk.FAILED)

        def launches_failed(p, d):  # failed launches start no grid, and the log counts them
            d["cdp_grids"].update(child_grids=p["lines"] - 5, lines_in_child=p["lines"] - 5)
            d["cdp_log"]["failed"] = 5
        self.assertEqual(lab04.check_each_launch_checked(self.ctx(launches_failed)).status, chk.PASSED)

        def predates_the_probe(p, d):  # a recording made before the harness counted grids
            del d["cdp_grids"]
        self.assertEqual(lab04.check_each_launch_checked(self.ctx(predates_the_probe)).status, chk.PASSED)

    def test_every_timed_run_checked(self):
        timing = {"streams": {"flat": 1.0, "cdp_null": 3.0, "cdp_student": 1.0},
                  "heavy": {"flat": 8.0, "cdp_null": 3.0, "cdp_student": 1.0}}
        self.assertEqual(lab04.check_children_run_concurrently(self.ctx(timing=timing)).status, chk.PASSED)

        def first_call_only(p, d):  # a device flag set by the first run: the later runs do nothing, fast
            if "timed_runs_checked" in d:
                bad = dict(lines_ok(), lines_bad=p["lines"], missing=p["lines"], first_bad_line=0,
                           first_bad_what="no vertices (NULL)")
                d["timed_runs_checked"].update(runs_wrong=lab04.TIMING_REPEATS, first_wrong_run=2, first_wrong=bad)
        for check in (lab04.check_children_run_concurrently, lab04.check_cdp_beats_flat_on_heavy_tail):
            outcome = check(self.ctx(first_call_only, timing))
            self.assertEqual(outcome.status, chk.FAILED)
            self.assertIn("repetition 1 of the timed run did not write its vertices (7 of 8 runs wrong; 256 of 256 "
                          "lines wrong: 256 without vertices; first: line 0 (no vertices (NULL))", outcome.message)

        def warmup_wrong(p, d):
            if "timed_runs_checked" in d:
                d["timed_runs_checked"].update(runs_wrong=1, first_wrong_run=1,
                                               first_wrong=dict(lines_ok(), lines_bad=1, vertices_wrong=3))
        self.assertIn("the warm-up repetition of the timed run did not write its vertices",
                      lab04.check_children_run_concurrently(self.ctx(warmup_wrong, timing)).message)

        def unchecked(p, d):  # a document without the checks of its timed runs
            d.pop("timed_runs_checked", None)
        outcome = lab04.check_children_run_concurrently(self.ctx(unchecked, timing))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("checked none of its 8 timed runs", outcome.message)

    def test_one_line_at_the_largest_count(self):
        with open(os.path.join(paths.KIT_ROOT, "common", "include", "bezier_lines.h")) as f:
            self.assertIn("#define MAX_MAX_VERTICES (1 << %d)" % (lab04.HARNESS_MAX_VERTICES.bit_length() - 1),
                          f.read())
        for seed in range(10):
            one = [c for c in lab04.make_cases(random.Random(seed)) if c["lines"] == 1]
            self.assertEqual([(c["max"], c["factor"]) for c in one],
                             [(lab04.HARNESS_MAX_VERTICES, lab04.HARNESS_MAX_FACTOR)])

    def test_each_vertex_computed_once(self):
        self.assertEqual(lab04.check_each_vertex_once(self.ctx()).status, chk.PASSED)

        def parent_loop(p, d):  # the parent computes its vertices beside its child
            d["cdp_point_calls"]["calls"] = 200
        outcome = lab04.check_each_vertex_once(self.ctx(parent_loop))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected one bezier_point call per vertex, each index in [0, n); dynamic: 200 bezier_point "
                      "calls for 100 vertices", outcome.message)

        def past_the_end(p, d):  # a child without its bound check
            d["cdp_point_calls"].update(calls=130, out_of_range=30)
        self.assertIn("130 bezier_point calls for 100 vertices, 30 of them for an index outside [0, n)",
                      lab04.check_each_vertex_once(self.ctx(past_the_end)).message)

        def flat_past_the_end(p, d):  # i <= n in the flat loop: inside the worst-case array, so unseen otherwise
            d["flat_point_calls"].update(calls=101, out_of_range=1)
        self.assertIn("flat: 101 bezier_point calls", lab04.check_each_vertex_once(self.ctx(flat_past_the_end)).message)

        def flat_not_run(p, d):
            d["flat_ran"] = False
            d["flat_point_calls"]["calls"] = 0
        self.assertEqual(lab04.check_each_vertex_once(self.ctx(flat_not_run)).status, chk.PASSED)

        def vertices_not_computed(p, d):  # computed some other way, or not at all
            d["cdp_point_calls"]["calls"] = 0
        self.assertEqual(lab04.check_each_vertex_once(self.ctx(vertices_not_computed)).status, chk.FAILED)

        def lines_lost(p, d):  # fewer calls because lines were lost: "no line lost" reports it
            d["cdp"].update(missing=3, lines_bad=3)
            d["cdp_point_calls"]["calls"] = 88
        self.assertEqual(lab04.check_each_vertex_once(self.ctx(lines_lost)).status, chk.PASSED)

        def lost_and_twice(p, d):
            d["cdp"].update(missing=3, lines_bad=3)
            d["cdp_point_calls"]["calls"] = 176
        self.assertEqual(lab04.check_each_vertex_once(self.ctx(lost_and_twice)).status, chk.FAILED)

    def static(self, check, text):
        return check(FakeContext([], ptx={"bezier.cu": text}))

    def test_launch_into_a_created_stream_or_fire_and_forget(self):
        self.assertEqual(self.static(lab04.check_launch_and_streams, cdp_ptx()).status, chk.PASSED)
        # fire-and-forget: no stream to create, none to destroy (solutions/04-bezier-streams/alternative)
        self.assertEqual(self.static(lab04.check_launch_and_streams, cdp_ptx(stream="4", create=False)).status,
                         chk.PASSED)
        self.assertEqual(self.static(lab04.check_launch_and_streams, cdp_ptx(stream="4")).status, chk.PASSED)
        for stream, what in (("0", "the NULL stream (0)"), ("3", "cudaStreamTailLaunch")):
            outcome = self.static(lab04.check_launch_and_streams, cdp_ptx(stream=stream))
            self.assertEqual(outcome.status, chk.FAILED, stream)
            self.assertIn("actual:   a device launch into %s in the PTX of tessellate_cdp" % what, outcome.message)
            self.assertEqual(outcome.fraction, 0.5)
        outcome = self.static(lab04.check_launch_and_streams, cdp_ptx(stream="0", create=False))  # null-stream
        self.assertIn("actual:   a device launch into the NULL stream (0) in the PTX", outcome.message)
        outcome = self.static(lab04.check_launch_and_streams, cdp_ptx(create=False))  # a stream never created
        self.assertIn("no cudaStreamCreateWithFlags", outcome.message)
        self.assertEqual(outcome.fraction, 0.5)
        # a stream operand the grader cannot read (a toolkit's new PTX form) passes for no stream
        outcome = self.static(lab04.check_launch_and_streams, cdp_ptx().replace("[param1+0]", "[param1+8]"))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("could not read", outcome.message)
        outcome = self.static(lab04.check_launch_and_streams, cdp_ptx(create=False, launch=False))  # the starter
        self.assertIn("actual:   no device-side launch in the PTX", outcome.message)
        self.assertEqual(outcome.fraction, 0.0)

    def test_launch_checked_after_it_is_made(self):
        self.assertEqual(self.static(lab04.check_launch_checked_after, cdp_ptx()).status, chk.PASSED)
        for check in ("before", None):
            outcome = self.static(lab04.check_launch_checked_after, cdp_ptx(check=check))
            self.assertEqual(outcome.status, chk.FAILED, check)
            self.assertIn("actual:   tessellate_cdp: 1 of 1 launch(es) with a path on which no cudaGetLastError() "
                          "follows", outcome.message)
        outcome = self.static(lab04.check_launch_checked_after, cdp_ptx(launch=False))
        self.assertIn("tessellate_cdp: no device launch in the PTX", outcome.message)

    def test_timing_checks_are_marked(self):
        timing = {c.name for c in lab04.LAB.own_checks if c.timing}
        self.assertEqual(timing, {"a block's children run concurrently", "CDP beats flat on the heavy tail"})


if __name__ == "__main__":
    unittest.main()


class RecordedDocumentsTest(unittest.TestCase):
    """Lab 04's checks on harness documents recorded on an H100 (--lines 300 --factor 64 --max 256)."""

    EXPECTED_FAILURES = {
        "solution": set(),
        "null-stream": set(),        # only its speed is wrong; no timing in these runs
        "one-stream-per-block": set(),  # likewise
        "limit-not-raised": set(),   # 300 lines fit the default pool of 2,048
        "pending-limit-past-2048-blocks": set(),  # likewise; the 12,000- and 100,000-line cases catch both
        "heap-without-overhead": set(),  # 300 lines of at most 256 vertices: its heap is enough here
        "fire-and-forget": set(),    # an alternative solution (solutions/04-bezier-streams/alternative/)
        "check-before-launch": set(),  # caught statically
        "no-bound-check": {"child stays inside its block", "each vertex computed once"},
        "no-free": {"heap freed"},
        "worst-case-allocation": {"exact allocation"},
        "unchecked-launch": {"every child launch checked"},
        "parent-loop-beside-child": {"each vertex computed once"},
    }
    PREDATE_RECORDINGS = set()

    def test_each_recorded_submission_fails_exactly_its_checks(self):
        import json
        data = os.path.join(os.path.dirname(__file__), "data", "recorded")
        checks = [c for c in lab04.LAB.own_checks
                  if c.kind == chk.RUNTIME and not c.timing and c.name not in self.PREDATE_RECORDINGS]
        self.assertIn("every child launch checked", [c.name for c in checks])
        for case, expected in self.EXPECTED_FAILURES.items():
            with open(os.path.join(data, "lab04-%s.json" % case)) as f:
                doc = json.load(f)
            ctx = FakeContext([(doc["params"], doc)])
            failed = {c.name for c in checks if c.func(ctx).status == chk.FAILED}
            self.assertEqual(failed, expected, case)
