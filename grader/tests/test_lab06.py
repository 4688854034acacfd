"""Lab 06's grading rules on constructed harness documents and PTX (no GPU needed)."""
import random
import unittest

from gradelib import checks as chk
from gradelib.grading import CaseRun
from labs import lab06


class FakeContext:
    def __init__(self, runs=(), ptx=None):
        self.runs = [CaseRun(p, None, d, None) for p, d in runs]
        self.ptx = ptx or {}

    def ptx_calls(self):
        from gradelib import ptx
        found = set()
        for text in self.ptx.values():
            found |= ptx.called_functions(text)
        return found


def check_ok():
    return {"lines_bad": 0, "missing": 0, "count_wrong": 0, "overruns": 0, "vertices_wrong": 0,
            "first_bad_line": -1, "first_bad_what": "", "first_bad_index": 0, "first_got_x": 0.0,
            "first_got_y": 0.0, "first_want_x": 0.0, "first_want_y": 0.0, "max_error": 1e-7}


def log_ok(n=0):
    return {"checked": n, "failed": 0, "first_error": "", "first_error_line": 0, "calls_checked": 0,
            "calls_failed": 0, "first_call_error": "", "first_call_error_line": 0}


def good_doc(p):
    """What the solution's harness run writes for the parameters p."""
    doc = {"lab": "06-parallel-allocator", "params": dict(p, blocks=1056), "heap_bytes": 64 << 20,
           "uniqueness": {"ran": False}, "wrap": {"ran": False}, "collect": {"ran": False},
           "timing": {"ran": False}}
    if p["capacity"] and p["requests"]:
        got = min(p["capacity"], p["requests"])
        doc["uniqueness"] = {"ran": True, "capacity": p["capacity"], "slot_bytes": 12, "requests": p["requests"],
                             "blocks": 1056, "threads": 256, "successes": got, "unique": got, "duplicates": 0,
                             "out_of_range": 0, "misaligned": 0, "full": p["requests"] - got,
                             "first_duplicate_index": -1, "first_duplicate_request": -1,
                             "counter_next": got + 4096 if p["requests"] > p["capacity"] else got,
                             "walked": got, "unowned": 0, "first_unowned_slot": -1}
    if p["wrap_requests"]:
        threads = 1056 * 256
        rounds = -(-p["wrap_requests"] // threads)
        doc["wrap"] = {"ran": True, "capacity": p["wrap_capacity"], "requests": rounds * threads, "rounds": rounds,
                       "threads": threads, "missing": 0, "duplicated": 0, "first_duplicated_index": -1,
                       "full": rounds * threads - p["wrap_capacity"], "out_of_range": 0,
                       "counter_next": p["wrap_capacity"] + 5000}
    if p["lines"]:
        total = p["lines"] * 20
        capacity = total * p["fit"] // 100
        full = 0 if p["fit"] >= 100 else p["lines"] * 6 // 10
        check = check_ok()
        check.update(missing=full, lines_bad=full)
        doc["collect"] = {"ran": True, "lines": p["lines"], "fit_percent": p["fit"], "capacity": capacity,
                          "total_vertices": total, "pooled_vertices": total - full * 20, "full_lines": full,
                          "outside_pool": 0, "first_outside_line": -1, "misaligned": 0, "overlapping": 0,
                          "first_overlapping_line": -1, "guard_damaged": False, "device_mallocs": 0,
                          "allocations": 1, "check": check, "log": log_ok(p["lines"] - full)}
    if p["repeats"] and p["objects"]:
        def entry(ms, mallocs=0):
            return {"median_ms": ms, "min_ms": ms * 0.9, "max_ms": ms * 1.2, "device_mallocs": mallocs,
                    "malloc_failures": 0, "objects_missing": 0, "objects_wrong": 0}
        doc["timing"] = {"ran": True, "objects": p["objects"], "object_bytes": p["object_bytes"],
                         "repeats": p["repeats"], "threads": 256,
                         "per_object_malloc": entry(120.0, p["objects"] * 6), "bulk": entry(0.05, 6),
                         "pool": entry(0.08), "take_rounds": p["take_rounds"],
                         "take_requests": p["take_rounds"] * 1056 * 256,
                         "take_per_thread": {"median_ms": 2.4, "min_ms": 2.3, "max_ms": 2.6},
                         "take_student": {"median_ms": 0.3, "min_ms": 0.29, "max_ms": 0.33}}
    return doc


class Lab06CasesTest(unittest.TestCase):
    def test_cases_cover_the_parts(self):
        cases = lab06.make_cases(random.Random(5))
        self.assertEqual(cases, lab06.make_cases(random.Random(5)))
        self.assertNotEqual(cases, lab06.make_cases(random.Random(6)))
        parts = [c["part"] for c in cases]
        for part in ("uniqueness", "wrap", "collect", "timing"):
            self.assertIn(part, parts)
        big = [c for c in cases if c["part"] == "uniqueness" and c["capacity"] > 1000000]
        self.assertTrue(big and all(c["requests"] == 4 * c["capacity"] for c in big), "4x requests past ~1M slots")
        self.assertTrue(any(c["part"] == "uniqueness" and c["capacity"] <= 33 for c in cases), "a tiny capacity")
        self.assertTrue(any(c["part"] == "uniqueness" and c["requests"] <= c["capacity"] for c in cases),
                        "fewer requests than slots")
        self.assertTrue(all(c["wrap_requests"] > 1 << 32 for c in cases if c["part"] == "wrap"))
        self.assertTrue(any(c["part"] == "collect" and c["fit"] < 100 for c in cases), "a pool too small")
        self.assertTrue(any(c["part"] == "collect" and c["lines"] > 2048 for c in cases))

    def test_harness_args_name_every_option(self):
        args = lab06.harness_args(lab06.make_cases(random.Random(1))[0])
        self.assertEqual(args[0::2], ["--capacity", "--requests", "--wrap-capacity", "--wrap-requests", "--lines",
                                      "--workload", "--factor", "--max", "--fit", "--objects", "--object-bytes",
                                      "--take-rounds", "--repeats", "--seed"])
        self.assertNotIn("--part", args)


class Lab06RuntimeTest(unittest.TestCase):
    def setUp(self):
        self.cases = lab06.make_cases(random.Random(11))

    def ctx(self, mutate=None):
        runs = []
        for p in self.cases:
            d = good_doc(p)
            if mutate:
                mutate(p, d)
            runs.append((p, d))
        return FakeContext(runs)

    def runtime_checks(self):
        return [c for c in lab06.LAB.lab_checks if c.kind == chk.RUNTIME]

    def failing(self, ctx):
        return {c.name for c in self.runtime_checks() if c.func(ctx).status != chk.PASSED}

    def test_good_documents_pass(self):
        self.assertEqual(self.failing(self.ctx()), set())
        message = lab06.check_pool_beats_malloc(self.ctx()).message
        self.assertIn("1500.0x faster", message)
        self.assertIn("not graded, for reference (Part A)", message)
        self.assertIn("2400.0x", message)  # per-object malloc / bulk
        self.assertIn("8.0x faster", lab06.check_aggregation_speed(self.ctx()).message)

    def test_duplicates_fail_uniqueness_only(self):
        def racy(p, d):
            u = d["uniqueness"]
            if u["ran"]:
                u.update(duplicates=5000, unique=u["unique"] - 5000, first_duplicate_index=7,
                         first_duplicate_request=123)
        ctx = self.ctx(racy)
        outcome = lab06.check_unique_slots(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("5000 slot(s) handed out twice (first: slot 7, again to request 123)", outcome.message)
        self.assertEqual(self.failing(ctx), {lab06.UNIQUE})

    def test_past_capacity_fails(self):
        def unbounded(p, d):
            u = d["uniqueness"]
            if u["ran"] and u["requests"] > u["capacity"]:
                extra = u["requests"] - u["capacity"]
                u.update(out_of_range=extra, successes=u["requests"], full=0)
        outcome = lab06.check_unique_slots(self.ctx(unbounded))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("past the pool's", outcome.message)
        self.assertIn("answered full (NULL), expected", outcome.message)
        self.assertGreater(outcome.fraction, 0)  # the case with fewer requests than slots still passed

    def test_a_full_answer_for_a_request_that_fits_fails(self):
        def stingy(p, d):
            u = d["uniqueness"]
            if u["ran"]:
                u.update(unique=u["unique"] - 1, successes=u["successes"] - 1, full=u["full"] + 1)
        self.assertEqual(lab06.check_unique_slots(self.ctx(stingy)).status, chk.FAILED)

    def test_walk(self):
        def short(p, d):
            u = d["uniqueness"]
            if u["ran"]:
                u.update(walked=u["walked"] // 2, counter_next=u["walked"] // 2)
        self.assertIn("counter.next ended at", lab06.check_walk(self.ctx(short)).message)

        def unowned(p, d):
            if d["uniqueness"]["ran"]:
                d["uniqueness"].update(unowned=3, first_unowned_slot=9)
        self.assertIn("first: slot 9", lab06.check_walk(self.ctx(unowned)).message)

    def test_wrap(self):
        def wraps(p, d):
            w = d["wrap"]
            if w["ran"]:
                w.update(duplicated=w["capacity"], first_duplicated_index=0, full=w["full"] - w["capacity"],
                         counter_next=16777216)
        ctx = self.ctx(wraps)
        outcome = lab06.check_no_wrap(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("wrapped around 2^32", outcome.message)
        self.assertEqual(self.failing(ctx), {"no index twice past 2^32 requests"})

    def test_part_c(self):
        def wrong_vertex(p, d):
            c = d["collect"]
            if c["ran"]:
                c["check"].update(vertices_wrong=4, lines_bad=c["check"]["lines_bad"] + 1, first_bad_line=2,
                                  first_bad_what="wrong vertices", first_bad_index=1, first_got_x=0.5)
        outcome = lab06.check_collect_vertices(self.ctx(wrong_vertex))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("4 vertices wrong; first: line 2, vertex 1 is (0.5, 0)", outcome.message)

        def lost_launches(p, d):
            c = d["collect"]
            if c["ran"]:
                c["log"].update(failed=10, first_error="cudaErrorLaunchPendingCountExceeded", first_error_line=140)
        self.assertIn("10 device-side launch(es) failed", lab06.check_collect_vertices(self.ctx(lost_launches)).message)

    def test_malloc_per_line_fails_one_allocation(self):
        def per_line(p, d):
            c = d["collect"]
            if c["ran"]:
                c.update(outside_pool=c["lines"], first_outside_line=0, allocations=1 + c["lines"])
        ctx = self.ctx(per_line)
        outcome = lab06.check_one_allocation(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected 1 allocation", outcome.message)
        self.assertEqual(lab06.check_full_pool(ctx).status, chk.FAILED)  # outside the pool

    def test_full_pool(self):
        def overrun(p, d):
            c = d["collect"]
            if c["ran"] and c["fit_percent"] < 100:
                c.update(guard_damaged=True, full_lines=0, outside_pool=7)
        outcome = lab06.check_full_pool(self.ctx(overrun))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("wrote past the end of the pool", outcome.message)
        self.assertIn("yet no line was answered full", outcome.message)

        def refuses(p, d):
            c = d["collect"]
            if c["ran"] and c["fit_percent"] >= 100:
                c.update(full_lines=1)
                c["check"].update(missing=1, lines_bad=1)
        outcome = lab06.check_full_pool(self.ctx(refuses))
        self.assertIn("although the pool holds every line's vertices", outcome.message)
        self.assertEqual(lab06.check_collect_vertices(self.ctx(refuses)).status, chk.PASSED)

    def test_slow_pool_and_slow_counter_fail(self):
        def slow(p, d):
            t = d["timing"]
            if t["ran"]:
                t["pool"]["median_ms"] = 120.0 / (lab06.MIN_MALLOC_OVER_POOL * 0.9)
                t["take_student"]["median_ms"] = 2.4  # the same as one atomic per thread
        ctx = self.ctx(slow)
        self.assertEqual(lab06.check_pool_beats_malloc(ctx).status, chk.FAILED)
        outcome = lab06.check_aggregation_speed(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1.0x faster (at least %.1fx wanted)" % lab06.MIN_PER_THREAD_OVER_WARP, outcome.message)

    def test_missing_timing_fails(self):
        def no_timing(p, d):
            d["timing"] = {"ran": False}
        ctx = self.ctx(no_timing)
        self.assertEqual(lab06.check_pool_beats_malloc(ctx).status, chk.FAILED)
        self.assertEqual(lab06.check_aggregation_speed(ctx).status, chk.FAILED)

    def test_pool_without_slots_fails_the_timing(self):
        def empty(p, d):
            if d["timing"]["ran"]:
                d["timing"]["pool"]["objects_missing"] = p["objects"]
        self.assertIn("without a slot", lab06.check_pool_beats_malloc(self.ctx(empty)).message)

    def test_a_part_not_run_fails(self):
        ctx = FakeContext([(p, good_doc(p)) for p in self.cases if p["part"] != "wrap"])
        self.assertEqual(lab06.check_no_wrap(ctx).status, chk.FAILED)


PTX_AGGREGATED = """
.extern .func  (.param .b64 func_retval0) malloc
(
\t.param .b64 malloc_param_0
)
;
.visible .func  (.param .b32 func_retval0) _Z12counter_takeP17bounded_counter_t(
\t.param .b64 _Z12counter_takeP17bounded_counter_t_param_0
)
{
\tactivemask.b32 %r7;
\tatom.add.u32 \t%r30, [%rd2], %r19;
\tshfl.sync.idx.b32 \t%r26|%p3, %r30, %r2, %r25, %r7;
\tret;
}
.visible .entry _Z16collect_verticesP13bezier_line_tifiP12typed_pool_t(
\t.param .u64 p0
)
{
\t{ // callseq 1, 0
\tcall.uni (retval0),
\t__cudaCDP2LaunchDeviceV2,
\t(
\tparam0
\t);
\t} // callseq 1
\tret;
}
"""

PTX_PER_THREAD = """
.visible .func  (.param .b32 func_retval0) _Z12counter_takeP17bounded_counter_t(
\t.param .b64 _Z12counter_takeP17bounded_counter_t_param_0
)
{
\tatom.add.u32 \t%r3, [%rd1], 1;
\tret;
}
.visible .entry _Z16collect_verticesP13bezier_line_tifiP12typed_pool_t(
\t.param .u64 p0
)
{
\tcall.uni (retval0), malloc, (param0);
\tret;
}
"""

PTX_VIA_HELPER = """
.visible .func  (.param .b32 func_retval0) _Z9warp_takePjj(
\t.param .b64 p0
)
{
\tvote.sync.ballot.b32 %r1, 1, -1;
\tatom.global.add.u32 \t%r30, [%rd2], %r19;
\tshfl.sync.idx.b32 \t%r26|%p3, %r30, %r2, %r25, %r7;
\tret;
}
.visible .func  (.param .b32 func_retval0) _Z12counter_takeP17bounded_counter_t(
\t.param .b64 p0
)
{
\tcall.uni (retval0), _Z9warp_takePjj, (param0, param1);
\tret;
}
"""


class Lab06StaticTest(unittest.TestCase):
    def test_aggregated_counter_passes(self):
        ctx = FakeContext(ptx={"allocator.cu": PTX_AGGREGATED})
        self.assertEqual(lab06.check_warp_aggregated(ctx).status, chk.PASSED)
        self.assertEqual(lab06.check_collect_launches(ctx).status, chk.PASSED)
        # an extern declaration of malloc is not a call
        self.assertEqual(lab06.check_no_device_malloc(ctx).status, chk.PASSED)

    def test_aggregation_in_a_helper_counts(self):
        ctx = FakeContext(ptx={"allocator.cu": PTX_VIA_HELPER})
        self.assertEqual(lab06.check_warp_aggregated(ctx).status, chk.PASSED)

    def test_per_thread_counter_and_malloc_fail(self):
        ctx = FakeContext(ptx={"allocator.cu": PTX_PER_THREAD})
        outcome = lab06.check_warp_aggregated(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("no __activemask / __ballot_sync / __match_any_sync and no __shfl_sync", outcome.message)
        outcome = lab06.check_no_device_malloc(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("calls malloc", outcome.message)
        self.assertEqual(lab06.check_collect_launches(ctx).status, chk.FAILED)

    def test_missing_function_fails(self):
        ctx = FakeContext(ptx={"allocator.cu": ""})
        self.assertEqual(lab06.check_warp_aggregated(ctx).status, chk.FAILED)
        self.assertEqual(lab06.check_collect_launches(ctx).status, chk.FAILED)

    def test_cudamalloc_and_kit_wrapper_count_as_device_malloc(self):
        for name in ("__cudaCDP2Malloc", "_Z17kit_device_mallocm"):
            ctx = FakeContext(ptx={"a.cu": "\tcall.uni (retval0), %s, (param0);\n" % name})
            self.assertEqual(lab06.check_no_device_malloc(ctx).status, chk.FAILED, name)


if __name__ == "__main__":
    unittest.main()
