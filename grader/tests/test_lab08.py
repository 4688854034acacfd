"""Lab 08's grading rules on constructed harness documents and PTX (no GPU needed)."""
import os
import random
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

from gradelib import checks as chk
from gradelib import paths, ptx, starters
from rubrics import lab08
from tests.fakes import FakeContext

HARNESS_DIR = os.path.join(paths.KIT_ROOT, "common", "harness", "08-device-graphs")
INCLUDE_DIR = os.path.join(paths.KIT_ROOT, "common", "include")


def _read(*parts):
    with open(os.path.join(*parts)) as f:
        return f.read()


def _define(text, name):
    return int(re.search(r"#define %s (\d+)" % name, text).group(1))


HARNESS_CU = _read(HARNESS_DIR, "harness.cu")
SCHEDULING_H = _read(HARNESS_DIR, "scheduling.h")
BEZIER_LINES_CU = _read(paths.KIT_ROOT, "common", "src", "bezier_lines.cu")
MIN_VERTICES = _define(_read(INCLUDE_DIR, "kit_bezier.h"), "MIN_VERTICES")
KIT_MAX_ROUNDS = _define(SCHEDULING_H, "KIT_MAX_ROUNDS")
GUARD_VERTICES = _define(HARNESS_CU, "GUARD_VERTICES")


def c_function(text, head):
    """The text of the C function whose definition starts with head, up to its closing brace."""
    start = text.index(head)
    return text[start:text.index("\n}\n", start)]


def c_keys(body):
    """The keys a piece of the kit's C writes with kit_json_*(j, "KEY", ...) and json_check(j, "KEY", ...)."""
    return set(re.findall(r'(?:kit_json_\w+|json_check)\(&?j, "(\w+)"', body))


def as_float(x):
    """x as the harness's float holds it (the tolerances are floats, written as doubles)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def most_rounds(max_vertices):
    """The most rounds the kit's loop can count with a cap of max_vertices: every line doubled up to the cap
    (a count n becomes 2n - 1), then one round that refines nothing; one where the cap is MIN_VERTICES."""
    n, rounds = MIN_VERTICES, 1
    while n < max_vertices and rounds < KIT_MAX_ROUNDS:
        n, rounds = min(2 * n - 1, max_vertices), rounds + 1
    return rounds


def launch_log(calls_checked=0):
    return {"checked": 0, "failed": 0, "first_error": "", "first_error_line": 0, "calls_checked": calls_checked,
            "calls_failed": 0, "first_call_error": "", "first_call_error_line": 0}


def vertices_ok():
    """json_check of a clean check_lines result."""
    return {"lines_bad": 0, "missing": 0, "count_wrong": 0, "overruns": 0, "vertices_wrong": 0, "first_bad_line": -1,
            "first_bad_what": "", "first_bad_index": 0, "first_got_x": 0.0, "first_got_y": 0.0, "first_want_x": 0.0,
            "first_want_y": 0.0, "max_error": 2.4e-7}


def loop_doc(p, key):
    """json_loop of a student's loop that ran the three workloads as the kit's loop did (the case's lines
    twice, then other lines with the second tolerance and cap): the WHILE graph holds a conditional node and
    was instantiated without flags; the device graph holds none and was instantiated for device launch, and
    each run's R rounds checked R - 1 relaunches."""
    runs = []
    for other, tolerance, cap in ((False, p["tolerance"], p["max"]), (False, p["tolerance2"], p["max2"]),
                                  (True, p["tolerance2"], p["max2"])):
        rounds = most_rounds(cap)
        runs.append({"other_lines": other, "tolerance": as_float(tolerance * 1e-6), "max_vertices": cap,
                     "host_launches": 1,
                     "rounds": rounds, "expected_rounds": rounds, "kit_host_launches": 2 * rounds,
                     "end_round_calls": rounds, "late_calls": 0, "bad_lines": 0, "counts_wrong": 0, "first_bad_line": -1,
                     "first_got": 0, "first_want": 0,
                     "launch_log": launch_log(rounds - 1 if key == "device_graph" else 0), "ms": 0.05 * rounds})
    return {"available": True, "built": True, "conditional_nodes": 1 if key == "while_graph" else 0,
            "device_launch": key == "device_graph", "runs": runs}


def good_doc(p, timing=None):
    """A document as the solution's run writes it for the case p (every line at the most vertices it can
    need, so the total is lab08.most_vertices); timing: its timing_ms, for a timing case."""
    total = lab08.most_vertices(p)
    doc = {
        "lab": "08-device-graphs",
        "device": {"name": "NVIDIA H100 80GB HBM3", "cc_major": 9, "cc_minor": 0, "sm_count": 132,
                   "total_memory_bytes": 85017493504, "runtime_version": 13000, "driver_version": 13000},
        "params": {"lines": p["lines"], "workload": p["workload"], "factor": float(p["factor"]), "max": p["max"],
                   "seed": p["seed"], "repeats": p.get("repeats", 0)},
        "total_vertices": total,
        "bytes_required": total * 8 + (p["lines"] + 1) * 8,
        "balanced": {"capture_mode": p.get("capture_mode", "thread-local"), "captured": True, "capture_error": "",
                     "graph_nodes": 4, "scratch_bytes": 4096 + 16 * p["lines"],
                     "offsets_wrong": 0, "first_bad_offset": -1, "offset_got": 0, "offset_want": 0,
                     "vertices": vertices_ok(), "point_calls": {"calls": total, "out_of_range": 0},
                     "past_total": 0},
        "while_graph": loop_doc(p, "while_graph"),
        "device_graph": loop_doc(p, "device_graph"),
    }
    if timing:
        doc["timing_ms"] = dict(timing)
        doc["kit_cdp_log"] = dict(launch_log(), checked=p["lines"])
    return doc


def not_captured(d, error="cudaErrorStreamCaptureUnsupported"):
    """What the harness writes when the student's call could not be captured: Part A zeroed, no timing."""
    d["balanced"].update(captured=False, capture_error=error, graph_nodes=0, offsets_wrong=0, first_bad_offset=-1, offset_got=0,
                         offset_want=0, vertices=dict(vertices_ok(), max_error=0.0),
                         point_calls={"calls": 0, "out_of_range": 0}, past_total=0)
    d.pop("timing_ms", None)
    d.pop("kit_cdp_log", None)


def unavailable(d, runtime=12030):
    """What the harness built with CUDA 12.3 writes: no WHILE graph (no conditional nodes before 12.4)."""
    d["device"].update(runtime_version=runtime, driver_version=max(runtime, 12040))
    d["while_graph"] = {"available": False, "built": False, "conditional_nodes": 0, "device_launch": False,
                        "runs": []}


def not_built(d, key):
    d[key].update(built=False, conditional_nodes=0, device_launch=False, runs=[])


def timed(balanced, flat, cdp, copy, wrong_runs=0, first_wrong=0):
    """A timing_ms section: the medians, and each of the student's timed runs (two warm-ups and the repeats)
    checked like the graded run."""
    return {"balanced": balanced, "flat": flat, "cdp": cdp, "copy": copy, "balanced_runs": 2 + lab08.TIMING_REPEATS,
            "balanced_wrong_runs": wrong_runs, "balanced_first_wrong": first_wrong}


# Medians of the heavy timing case: yours 2x the copy, the flat version 2.5x yours, the CDP one 4.5x.
TIMING = {"heavy": timed(2.0, 5.0, 9.0, 1.0)}
VERSIONS = ("balanced", "flat", "cdp", "copy")


# The check that reads each loop's rounds and counts.
LOOP_CHECKS = {"while_graph": "WHILE loop ends on the right round",
               "device_graph": "device graph loop ends on the right round"}


def is_main(p):
    """The first case, 4096 chained lines of up to 64 vertices: the one the tests below break."""
    return p["lines"] == 4096 and p["max"] == 64 and not p.get("timing")


def is_timed(p):
    return p.get("timing") == "heavy"


def differ(case):
    """Whether a case's two refinement workloads differ (another tolerance, or another cap)."""
    return (case["tolerance"], case["max"]) != (case["tolerance2"], case["max2"])


class Lab08CasesTest(unittest.TestCase):
    def test_cases_are_deterministic_for_a_seed(self):
        self.assertEqual(lab08.make_cases(random.Random(4)), lab08.make_cases(random.Random(4)))
        self.assertNotEqual(lab08.make_cases(random.Random(4)), lab08.make_cases(random.Random(5)))

    def test_every_drawn_case_stays_in_the_labs_domain(self):
        # what the harness accepts is the harness-options test's, against the built program's description
        for seed in range(100):
            for case in lab08.make_cases(random.Random(seed)):
                self.assertIn(case["workload"], ("chained", "heavy"))
                self.assertGreaterEqual(min(case["max"], case["max2"]), MIN_VERTICES, case)
                self.assertTrue(1 <= case["lines"] <= lab08.MAX_LINES, case)
                self.assertNotIn("--timing", lab08.HARNESS.argv(case))

    def test_exactly_one_timing_case(self):
        for seed in range(100):
            cases = lab08.make_cases(random.Random(seed))
            timed = [c for c in cases if c.get("timing")]
            self.assertEqual(len(timed), 1, seed)
            self.assertEqual(timed[0], dict(lab08.TIMING_CASE, repeats=lab08.TIMING_REPEATS, timing="heavy"))
            self.assertGreater(timed[0]["repeats"], 0, "a case without repeats reports no timing")
            self.assertEqual(timed[0]["workload"], "heavy")
            self.assertTrue(all(not c.get("repeats") for c in cases if not c.get("timing")), "only timing cases time")

    def test_every_non_timing_case_has_two_different_workloads(self):
        for seed in range(200):
            for case in lab08.make_cases(random.Random(seed)):
                if not case.get("timing"):
                    self.assertTrue(differ(case), (seed, case))

    def test_edge_cases(self):
        cases = lab08.make_cases(random.Random(2))
        self.assertIn(1, [c["lines"] for c in cases], "one line")
        self.assertIn(lab08.MAX_LINES, [c["lines"] for c in cases], "the most lines")
        self.assertTrue(any(c["lines"] > 65535 for c in cases), "past 65,535 blocks of one line each")
        self.assertTrue(any(c["max"] == c["max2"] == MIN_VERTICES for c in cases),
                        "every line at MIN_VERTICES: one round each time")
        self.assertTrue(any(c["max"] == MIN_VERTICES < c["max2"] for c in cases), "the first workload refines nothing")
        self.assertTrue(any(c["max2"] == MIN_VERTICES < c["max"] for c in cases), "the second refines nothing")
        self.assertEqual({c["workload"] for c in cases}, {"chained", "heavy"})

    def test_a_case_captures_in_the_global_mode(self):
        for seed in range(20):
            modes = [c.get("capture_mode", "thread-local") for c in lab08.make_cases(random.Random(seed))]
            self.assertIn("global", modes)
            self.assertIn("thread-local", modes)
        self.assertEqual(lab08.HARNESS.argv({"capture_mode": "global"}), ["--capture-mode", "global"])

    def test_a_case_past_two_to_the_31_vertices(self):
        # the seed-1 total of PAST_INT_CASE, from the kit's generator and vertex_count (nearly every line at
        # the cap): what the case is for, and within the most the rubric allows for its memory
        cases = lab08.make_cases(random.Random(1))
        self.assertIn(lab08.PAST_INT_CASE, cases)
        self.assertGreater(2224541289, 2 ** 31)
        self.assertGreaterEqual(lab08.most_vertices(lab08.PAST_INT_CASE), 2224541289)
        # both vertex buffers on an 80 GB H100 (85,017,493,504 bytes)
        self.assertLess(lab08.gpu_bytes(lab08.PAST_INT_CASE), 85017493504 // 2)
        self.assertTrue(all(lab08.most_vertices(c) < 2 ** 31 for c in cases if c != lab08.PAST_INT_CASE),
                        "one case past 2^31 is enough")

    def test_the_memcheck_case_is_one_the_harness_takes(self):
        lab08.HARNESS.argv(lab08.MEMCHECK_CASE)
        self.assertFalse(lab08.MEMCHECK_CASE.get("repeats"))
        self.assertTrue(differ(lab08.MEMCHECK_CASE))
        self.assertEqual(lab08.LAB.memcheck_case, lab08.MEMCHECK_CASE)
        self.assertNotEqual(lab08.MEMCHECK_CASE["lines"] % 256, 0, "a partly filled last block")


class Lab08MemoryTest(unittest.TestCase):
    def test_constants_are_the_c_codes(self):
        self.assertEqual(lab08.HEAVY_EVERY, _define(BEZIER_LINES_CU, "HEAVY_EVERY"))
        self.assertEqual(lab08.SHORT_MAX, _define(BEZIER_LINES_CU, "SHORT_MAX"))
        header = _read(INCLUDE_DIR, "bezier_lines.h")
        self.assertEqual(lab08.MAX_LINES, _define(header, "MAX_LINES"))
        major, minor = lab08.CONDITIONAL_NODES_SINCE
        self.assertIn("#if CUDART_VERSION >= %d\n#define KIT_HAS_CONDITIONAL_NODES 1" % (1000 * major + 10 * minor),
                      SCHEDULING_H)

    def test_most_vertices_chained(self):
        self.assertEqual(lab08.most_vertices({"lines": 4096, "max": 64, "workload": "chained"}), 4096 * 64)
        self.assertEqual(lab08.most_vertices({"lines": 1, "max": 4, "workload": "chained"}), 4)
        self.assertEqual(lab08.most_vertices({"lines": 100000, "max": 1 << 22, "workload": "chained"}),
                         100000 * (1 << 22))

    def test_most_vertices_heavy(self):
        # one line in 256 (rounded up) at the cap, the others at most SHORT_MAX + 1 (or the cap, if less)
        self.assertEqual(lab08.most_vertices({"lines": 1, "max": 4096, "workload": "heavy"}), 4096)
        self.assertEqual(lab08.most_vertices({"lines": 256, "max": 4096, "workload": "heavy"}), 4096 + 255 * 31)
        self.assertEqual(lab08.most_vertices({"lines": 257, "max": 4096, "workload": "heavy"}), 2 * 4096 + 255 * 31)
        self.assertEqual(lab08.most_vertices({"lines": 300, "max": 4, "workload": "heavy"}), 300 * 4)
        self.assertEqual(lab08.most_vertices({"lines": 300, "max": 16, "workload": "heavy"}), 300 * 16)
        self.assertEqual(lab08.most_vertices({"lines": 16384, "max": 65536, "workload": "heavy"}),
                         64 * 65536 + (16384 - 64) * 31)
        # the timing case: 32 lines of 2^21 vertices among 8,192, about 538 MB of vertices to write
        timed = lab08.most_vertices(lab08.TIMING_CASE)
        self.assertEqual(timed, 32 * (1 << 21) + 8160 * 31)
        self.assertEqual(timed * 8 // 1000000, 538)
        for seed in range(20):
            for c in lab08.make_cases(random.Random(seed)):
                self.assertLessEqual(lab08.most_vertices(c), c["lines"] * c["max"], c)

    def test_gpu_bytes(self):
        mib256 = 256 << 20
        chained = {"lines": 4096, "max": 64, "workload": "chained"}
        self.assertEqual(lab08.gpu_bytes(chained), 2 * 8 * 4096 * 64 + mib256)
        self.assertEqual(lab08.gpu_bytes(dict(chained, repeats=0)), 2 * 8 * 4096 * 64 + mib256)
        heavy = {"lines": 16384, "max": 65536, "workload": "heavy"}
        self.assertEqual(lab08.gpu_bytes(heavy), 2 * 8 * (64 * 65536 + 16320 * 31) + mib256)
        # a timing run copies as many bytes again, twice
        timed = dict(lab08.TIMING_CASE, repeats=lab08.TIMING_REPEATS, timing="heavy")
        self.assertEqual(lab08.gpu_bytes(timed), 4 * 8 * (32 * (1 << 21) + 8160 * 31) + mib256)
        self.assertEqual(lab08.LAB.gpu_bytes(timed), lab08.gpu_bytes(timed))


class Lab08ContractTest(unittest.TestCase):
    """The constructed documents against what harness.cu writes: the tests below read what the harness
    really writes, nothing more."""

    def setUp(self):
        self.cases = lab08.make_cases(random.Random(3))
        self.doc = good_doc(self.cases[0])

    def test_constructed_documents_have_the_contracts_keys(self):
        for p in self.cases:
            doc = good_doc(p, TIMING.get(p.get("timing")))
            self.assertIsNone(lab08.HARNESS.document_problem(doc), p)
        for mutate in (not_captured, unavailable):
            doc = good_doc(self.cases[0])
            mutate(doc)
            self.assertIsNone(lab08.HARNESS.document_problem(doc))

    def test_balanced_is_json_balanced(self):
        written = c_keys(c_function(HARNESS_CU, "static void json_balanced("))
        check = c_keys(c_function(BEZIER_LINES_CU, "void json_check("))
        b = self.doc["balanced"]
        self.assertEqual(set(b) | set(b["point_calls"]), written - {"balanced"})
        self.assertEqual(set(b["vertices"]), check)

    def test_loops_are_json_loop(self):
        written = c_keys(c_function(HARNESS_CU, "static void json_loop("))
        log = c_keys(c_function(_read(INCLUDE_DIR, "kit_result.h"), "static inline void kit_json_launch_log("))
        for key in ("while_graph", "device_graph"):
            loop = self.doc[key]
            self.assertEqual(set(loop) | set(loop["runs"][0]), written, key)
            self.assertEqual(len(loop["runs"]), 3)
            self.assertEqual([r["other_lines"] for r in loop["runs"]], [False, False, True])
            self.assertEqual(set(loop["runs"][0]["launch_log"]), log)
        device = c_function(_read(INCLUDE_DIR, "kit_result.h"), "static inline void kit_json_device(")
        self.assertEqual(set(self.doc["device"]), c_keys(device) - {"device"})

    def test_params_and_timing_are_run_cases(self):
        body = c_function(HARNESS_CU, "static int run_case(")
        params = body[body.index('kit_json_begin_object(&j, "params")'):]
        params = params[:params.index("kit_json_end_object")]
        self.assertEqual(set(self.doc["params"]), c_keys(params) - {"params"})
        table = re.search(r"version_keys\[N_VERSIONS\] = \{(.*?)\};", HARNESS_CU, re.S).group(1)
        self.assertEqual(set(re.findall(r'"(\w+)"', table)), set(VERSIONS))
        timing = body[body.index('kit_json_begin_object(&j, "timing_ms")'):]
        timing = timing[:timing.index("kit_json_end_object")]
        self.assertEqual(c_keys(timing) - {"timing_ms"}, set(TIMING["heavy"]) - set(VERSIONS))
        self.assertEqual(lab08.GUARD_VERTICES, GUARD_VERTICES, "the rubric's GUARD_VERTICES is the harness's")


class Lab08RuntimeTest(unittest.TestCase):
    def setUp(self):
        self.cases = lab08.make_cases(random.Random(7))
        self.assertEqual(len([p for p in self.cases if is_main(p)]), 1)

    def ctx(self, mutate=None, timing=TIMING):
        runs = []
        for p in self.cases:
            d = good_doc(p, timing.get(p.get("timing")) if timing else None)
            if mutate:
                mutate(p, d)
            runs.append((p, d))
        return FakeContext(runs)

    def on_main(self, change):
        """A mutation that changes the main case's document only."""
        def mutate(p, d):
            if is_main(p):
                change(d)
        return mutate

    def on_timed(self, change):
        def mutate(p, d):
            if is_timed(p):
                change(d)
        return mutate

    def runtime_checks(self):
        return [c for c in lab08.LAB.own_checks if c.kind == chk.RUNTIME]

    def failing(self, ctx):
        return {c.name for c in self.runtime_checks() if c.func(ctx).status != chk.PASSED}

    def fails_main(self, check, ctx, *fragments):
        """check fails on ctx for the main case alone, the message naming it and saying each fragment; the
        fraction earned is the share of cases right."""
        outcome = check(ctx)
        self.assertEqual(outcome.status, chk.FAILED, check.__name__)
        self.assertIn("1 of %d cases wrong:\n  lines=4096 workload=chained" % len(self.cases), outcome.message)
        self.assertAlmostEqual(outcome.fraction, 1 - 1 / len(self.cases))
        for fragment in fragments:
            self.assertIn(fragment, outcome.message)
        return outcome

    def test_reference_documents_pass(self):
        ctx = self.ctx()
        self.assertEqual(self.failing(ctx), set())
        for check in self.runtime_checks():
            self.assertEqual(check.func(ctx).fraction, 1.0, check.name)
        # every runtime check of the rubric has its tests below: a new one needs its own
        self.assertEqual({c.name for c in self.runtime_checks()}, {
            "tessellation captured into a graph", "offsets are the scan of the counts", "vertices exact",
            "each vertex computed once", "near the memory bound on the heavy case",
            "beats the kit's flat and CDP versions", "WHILE loop ends on the right round",
            "graph instantiated for device launch", "device graph loop ends on the right round",
            "every relaunch checked"})
        self.assertEqual(lab08.check_captured(ctx).message, "%d cases" % len(self.cases))

    def test_only_the_timing_checks_are_marked_timing(self):
        self.assertEqual({c.name for c in lab08.LAB.own_checks if c.timing},
                         {"near the memory bound on the heavy case", "beats the kit's flat and CDP versions"})

    # ---- Part A: capture ----

    def test_not_captured_fails_every_part_a_check(self):
        ctx = self.ctx(self.on_main(not_captured))
        self.fails_main(lab08.check_captured, ctx, "your tessellate_balanced could not be captured into a graph "
                        "in the thread-local capture mode (cudaErrorStreamCaptureUnsupported): it must only queue "
                        "work in the stream it is given")
        for check in (lab08.check_offsets, lab08.check_vertices, lab08.check_each_vertex_once):
            self.fails_main(check, ctx, "not captured: nothing ran")
        self.assertEqual(self.failing(ctx), {"tessellation captured into a graph", "offsets are the scan of the counts",
                                             "vertices exact", "each vertex computed once"})

    def test_an_empty_capture_fails(self):
        """The starter's call queues nothing: its capture succeeds, and the graph has no node."""
        ctx = self.ctx(self.on_main(lambda d: d["balanced"].update(graph_nodes=0)))
        self.fails_main(lab08.check_captured, ctx, "your tessellate_balanced queued nothing in the stream it is "
                        "given: the captured graph is empty")
        self.assertEqual(self.failing(ctx), {"tessellation captured into a graph"})

    def test_a_not_finite_vertex_is_named(self):
        """The harness writes a NaN vertex as null (JSON has no NaN): the message says NaN."""
        def nan_vertex(d):
            d["balanced"]["vertices"].update(lines_bad=1, vertices_wrong=1, first_bad_line=0,
                                             first_bad_what="wrong vertices", first_bad_index=2, first_got_x=None,
                                             first_got_y=None, first_want_x=0.5, first_want_y=0.25)
        self.fails_main(lab08.check_vertices, self.ctx(self.on_main(nan_vertex)),
                        "vertex 2 is (NaN, NaN), expected (0.5, 0.25)")

    def test_capture_error_is_named(self):
        ctx = self.ctx(self.on_main(lambda d: not_captured(d, "cudaErrorStreamCaptureImplicit")))
        self.fails_main(lab08.check_captured, ctx, "(cudaErrorStreamCaptureImplicit)")

    # ---- Part A: offsets ----

    def test_wrong_offset_fails(self):
        def wrong(d):
            d["balanced"].update(offsets_wrong=3, first_bad_offset=17, offset_got=5, offset_want=7)
        ctx = self.ctx(self.on_main(wrong))
        self.fails_main(lab08.check_offsets, ctx, "3 of 4097 offsets wrong; first: offsets[17] is 5, expected 7")
        self.assertNotIn("the total", lab08.check_offsets(ctx).message)
        self.assertEqual(self.failing(ctx), {"offsets are the scan of the counts"})

    def test_wrong_total_is_named(self):
        def wrong_total(d):
            n = d["params"]["lines"]
            d["balanced"].update(offsets_wrong=1, first_bad_offset=n, offset_got=-1, offset_want=d["total_vertices"])
        self.fails_main(lab08.check_offsets, self.ctx(self.on_main(wrong_total)),
                        "1 of 4097 offsets wrong; first: offsets[4096] (the total) is -1, expected %d" % (4096 * 64))

    def test_one_line_offsets(self):
        def first(p, d):
            if p["lines"] == 1:
                d["balanced"].update(offsets_wrong=1, first_bad_offset=0, offset_got=3, offset_want=0)
        outcome = lab08.check_offsets(self.ctx(first))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of 2 offsets wrong; first: offsets[0] is 3, expected 0", outcome.message)

        def total(p, d):
            if p["lines"] == 1:
                d["balanced"].update(offsets_wrong=1, first_bad_offset=1, offset_got=0, offset_want=4)
        self.assertIn("1 of 2 offsets wrong; first: offsets[1] (the total) is 0, expected 4",
                      lab08.check_offsets(self.ctx(total)).message)

    # ---- Part A: vertices ----

    def test_wrong_vertices_fail(self):
        def wrong(d):
            d["balanced"]["vertices"].update(lines_bad=2, vertices_wrong=5, first_bad_line=9,
                                             first_bad_what="wrong vertices", first_bad_index=3, first_got_x=1.0,
                                             first_got_y=2.0, first_want_x=1.5, first_want_y=2.0)
        ctx = self.ctx(self.on_main(wrong))
        self.fails_main(lab08.check_vertices, ctx,
                        "2 of 4096 lines wrong (5 vertices); first: line 9, vertex 3 is (1, 2), expected (1.5, 2)")
        self.assertEqual(self.failing(ctx), {"vertices exact"})

    def test_a_line_wrong_otherwise_names_no_vertex(self):
        def count(d):
            d["balanced"]["vertices"].update(lines_bad=1, count_wrong=1, vertices_wrong=0, first_bad_line=4095,
                                             first_bad_what="wrong vertex count")
        outcome = self.fails_main(lab08.check_vertices, self.ctx(self.on_main(count)),
                                  "1 of 4096 lines wrong (0 vertices); first: line 4095")
        self.assertNotIn("line 4095,", outcome.message)

    def test_writing_past_the_total_fails(self):
        ctx = self.ctx(self.on_main(lambda d: d["balanced"].update(past_total=3)))
        self.fails_main(lab08.check_vertices, ctx, "3 of the %d vertices just past the total were written"
                        % GUARD_VERTICES)
        self.assertEqual(self.failing(ctx), {"vertices exact"})

    def test_wrong_vertices_and_past_the_total_both_named(self):
        def both(d):
            d["balanced"]["vertices"].update(lines_bad=1, vertices_wrong=1, first_bad_line=0,
                                             first_bad_what="wrong vertices")
            d["balanced"]["past_total"] = 64
        self.fails_main(lab08.check_vertices, self.ctx(self.on_main(both)),
                        "1 of 4096 lines wrong (1 vertices); first: line 0, vertex 0 is (0, 0), expected (0, 0); "
                        "64 of the 64 vertices just past the total were written")

    # ---- Part A: one thread per vertex ----

    def test_point_calls_other_than_the_total_fail(self):
        total = 4096 * 64
        for calls in (total - 1, total + 1, 2 * total, 0):
            ctx = self.ctx(self.on_main(lambda d: d["balanced"]["point_calls"].update(calls=calls)))
            self.fails_main(lab08.check_each_vertex_once, ctx, "expected %d bezier_point calls, one per vertex; "
                            "counted %d (0 for an index outside its line)" % (total, calls))
            self.assertEqual(self.failing(ctx), {"each vertex computed once"}, calls)

    def test_calls_out_of_range_fail(self):
        total = 4096 * 64
        ctx = self.ctx(self.on_main(lambda d: d["balanced"]["point_calls"].update(out_of_range=2)))
        self.fails_main(lab08.check_each_vertex_once, ctx, "expected %d bezier_point calls, one per vertex; counted "
                        "%d (2 for an index outside its line)" % (total, total))

    # ---- Part A: timing ----

    def timing_outcomes(self, balanced, flat=5.0, cdp=9.0, copy=1.0, mutate=None):
        ctx = self.ctx(mutate, timing={"heavy": timed(balanced, flat, cdp, copy)})
        return lab08.check_near_memory_bound(ctx), lab08.check_beats_flat_and_cdp(ctx)

    def test_timing_passes_with_its_figures(self):
        near, beats = self.timing_outcomes(2.0)
        self.assertEqual((near.status, beats.status), (chk.PASSED, chk.PASSED))
        mb = lab08.most_vertices(lab08.TIMING_CASE) * 8 // 1000000
        self.assertIn("lines=8192 workload=heavy", near.message)
        self.assertIn("%d MB to write; a copy of as many bytes took 1.000 ms, yours 2.000 ms: 2.00x the copy (at most "
                      "%gx wanted)" % (mb, lab08.MAX_OVER_COPY), near.message)
        self.assertIn("yours 2.000 ms; the kit's flat version (a block per line) 5.000 ms: 2.50x yours (at least %gx "
                      "wanted); the kit's CDP version (a child grid per line) 9.000 ms: 4.50x yours (at least %gx "
                      "wanted)" % (lab08.MIN_FLAT_OVER_BALANCED, lab08.MIN_CDP_OVER_BALANCED), beats.message)

    def test_at_most_max_over_copy(self):
        copy = 4.0
        near, _ = self.timing_outcomes(lab08.MAX_OVER_COPY * copy, flat=100.0, cdp=100.0, copy=copy)
        self.assertEqual(near.status, chk.PASSED, near.message)
        self.assertIn("%.2fx the copy" % lab08.MAX_OVER_COPY, near.message)
        near, _ = self.timing_outcomes(lab08.MAX_OVER_COPY * copy + 0.01, flat=100.0, cdp=100.0, copy=copy)
        self.assertEqual(near.status, chk.FAILED)
        self.assertIn("yours %.3f ms: %.2fx the copy (at most %gx wanted)" % (
            lab08.MAX_OVER_COPY * copy + 0.01, lab08.MAX_OVER_COPY, lab08.MAX_OVER_COPY), near.message)
        self.assertEqual(near.fraction, 0.0)

    def test_at_least_min_flat_over_balanced(self):
        balanced = 10.0
        _, beats = self.timing_outcomes(balanced, flat=lab08.MIN_FLAT_OVER_BALANCED * balanced, cdp=100.0,
                                        copy=balanced)
        self.assertEqual(beats.status, chk.PASSED, beats.message)
        _, beats = self.timing_outcomes(balanced, flat=lab08.MIN_FLAT_OVER_BALANCED * balanced - 0.01, cdp=100.0,
                                        copy=balanced)
        self.assertEqual(beats.status, chk.FAILED)
        self.assertIn("%.3f ms: %.2fx yours (at least %gx wanted)" % (
            lab08.MIN_FLAT_OVER_BALANCED * balanced - 0.01, lab08.MIN_FLAT_OVER_BALANCED - 0.001,
            lab08.MIN_FLAT_OVER_BALANCED), beats.message)

    def test_at_least_min_cdp_over_balanced(self):
        balanced = 10.0
        _, beats = self.timing_outcomes(balanced, flat=100.0, cdp=lab08.MIN_CDP_OVER_BALANCED * balanced,
                                        copy=balanced)
        self.assertEqual(beats.status, chk.PASSED, beats.message)
        _, beats = self.timing_outcomes(balanced, flat=100.0, cdp=lab08.MIN_CDP_OVER_BALANCED * balanced - 0.01,
                                        copy=balanced)
        self.assertEqual(beats.status, chk.FAILED)
        self.assertIn("%.3f ms: %.2fx yours (at least %gx wanted)" % (
            lab08.MIN_CDP_OVER_BALANCED * balanced - 0.01, lab08.MIN_CDP_OVER_BALANCED - 0.001,
            lab08.MIN_CDP_OVER_BALANCED), beats.message)

    def test_thresholds(self):
        self.assertEqual((lab08.MAX_OVER_COPY, lab08.MIN_FLAT_OVER_BALANCED, lab08.MIN_CDP_OVER_BALANCED),
                         (6.0, 1.15, 2.3))

    def test_a_wrong_timed_tessellation_does_not_count(self):
        def offsets(d):
            d["balanced"].update(offsets_wrong=1, first_bad_offset=0, offset_got=1, offset_want=0)

        def vertices(d):
            d["balanced"]["vertices"].update(lines_bad=1, vertices_wrong=1, first_bad_line=0,
                                             first_bad_what="wrong vertices")

        def past(d):
            d["balanced"]["past_total"] = 1
        for wrong in (offsets, vertices, past):
            # the fastest times there are, and still no pass
            for outcome in self.timing_outcomes(0.001, mutate=self.on_timed(wrong)):
                self.assertEqual(outcome.status, chk.FAILED, wrong.__name__)
                self.assertIn("lines=8192 workload=heavy", outcome.message)
                self.assertIn("the timed tessellation's offsets or vertices are wrong (the checks above say how): "
                              "its time does not count", outcome.message)

    def test_a_timed_run_that_skipped_its_work_fails(self):
        # first-launch-only: the graded run wrote everything, the timed runs after it skipped the vertices
        ctx = self.ctx(timing={"heavy": timed(0.2, 5.0, 9.0, 1.0, wrong_runs=9, first_wrong=67360256)})
        for check in (lab08.check_near_memory_bound, lab08.check_beats_flat_and_cdp):
            outcome = check(ctx)
            self.assertEqual(outcome.status, chk.FAILED)
            self.assertIn("lines=8192 workload=heavy", outcome.message)
            self.assertIn("9 of your graph's 9 timed runs (the warm-ups included) left wrong output (the first: "
                          "67360256 offsets, vertices or guard vertices)", outcome.message)
            self.assertIn("a run that skipped its work (state kept from an earlier launch) does not count",
                          outcome.message)
        ctx = self.ctx(timing={"heavy": timed(2.0, 5.0, 9.0, 1.0, wrong_runs=1, first_wrong=1)})
        self.assertEqual(lab08.check_near_memory_bound(ctx).status, chk.FAILED)

    def test_timing_without_the_runs_check_fails(self):
        ctx = self.ctx(timing={"heavy": {"balanced": 2.0, "flat": 5.0, "cdp": 9.0, "copy": 1.0}})
        for check in (lab08.check_near_memory_bound, lab08.check_beats_flat_and_cdp):
            outcome = check(ctx)
            self.assertEqual(outcome.status, chk.FAILED)
            self.assertIn("did not say whether each timed run was checked", outcome.message)

    def test_a_wrong_untimed_case_leaves_the_timing_alone(self):
        def wrong(d):
            d["balanced"].update(offsets_wrong=1, first_bad_offset=0, offset_got=1, offset_want=0, past_total=2)
        for outcome in self.timing_outcomes(2.0, mutate=self.on_main(wrong)):
            self.assertEqual(outcome.status, chk.PASSED, outcome.message)

    def test_missing_timing_fails(self):
        why = "the heavy timing case reported no timing"
        for timing in (None, {}, {"heavy": timed(0.0, 5.0, 9.0, 1.0)},
                       {"heavy": {"flat": 5.0, "cdp": 9.0, "copy": 1.0}}):
            ctx = self.ctx(timing=timing)
            for check in (lab08.check_near_memory_bound, lab08.check_beats_flat_and_cdp):
                outcome = check(ctx)
                self.assertEqual(outcome.status, chk.FAILED, timing)
                self.assertEqual(outcome.message, why)
        # the timing case not captured: the harness times nothing
        ctx = self.ctx(lambda p, d: not_captured(d) if is_timed(p) else None)
        self.assertEqual(lab08.check_near_memory_bound(ctx).message, why)
        self.assertEqual(lab08.check_beats_flat_and_cdp(ctx).message, why)
        # no timing case at all
        ctx = FakeContext([(p, good_doc(p)) for p in self.cases if not p.get("timing")])
        for check in (lab08.check_near_memory_bound, lab08.check_beats_flat_and_cdp):
            outcome = check(ctx)
            self.assertEqual(outcome.status, chk.FAILED)
            self.assertEqual(outcome.message, why)

    # ---- Parts B and C: the loops ----

    def test_wrong_rounds_fail_in_either_launch(self):
        for key, check in (("while_graph", lab08.check_while_loop), ("device_graph", lab08.check_device_loop)):
            for k, (tolerance, cap) in enumerate((("0.002", 64), ("0.0005", 13))):
                for delta in (1, -1):
                    def wrong(d):
                        r = d[key]["runs"][k]
                        r["rounds"] = r["expected_rounds"] + delta
                    expected = most_rounds(cap)
                    outcome = self.fails_main(check, self.ctx(self.on_main(wrong)), "launch %d (tolerance %s, max %d): "
                                              "%d rounds counted by end_round, expected %d"
                                              % (k + 1, tolerance, cap, expected + delta, expected))
                    self.assertNotIn("launch %d" % (2 - k), outcome.message)

    def test_a_graph_that_kept_the_first_lines_fails_on_the_other_lines(self):
        # counts-pointer-baked: right on the case's lines, wrong once the state points at other lines
        for key, check in (("while_graph", lab08.check_while_loop), ("device_graph", lab08.check_device_loop)):
            def wrong(d):
                d[key]["runs"][2].update(counts_wrong=4093, first_bad_line=3, first_got=4, first_want=13)
            outcome = self.fails_main(check, self.ctx(self.on_main(wrong)),
                                      "launch 3 (other lines, in another array with another counts array, "
                                      "tolerance 0.0005, max 13): 4093 line counts wrong (first: line 3 has 4 "
                                      "vertices, expected 13)")
            self.assertNotIn("launch 1", outcome.message)

    def test_a_case_left_out_for_memory_is_not_counted(self):
        def left_out(p, d):
            if p == lab08.PAST_INT_CASE:
                d.clear()
                d.update({"lab": "08-device-graphs", "not_run": "the GPU has too little free memory for this "
                                                                "case's vertices"})
        self.cases.append(dict(lab08.PAST_INT_CASE))
        ctx = self.ctx(left_out)
        self.assertIsNone(lab08.HARNESS.document_problem(ctx.runs[-1].doc))
        self.assertEqual(self.failing(ctx), set())
        self.assertIn("not run on this GPU", lab08.check_vertices(ctx).message)

    def test_rounds_written_into_the_state_fail(self):
        def forged(d):
            d["device_graph"]["runs"][1]["end_round_calls"] = 1
        self.fails_main(lab08.check_device_loop, self.ctx(self.on_main(forged)),
                        "launch 2 (tolerance 0.0005, max 13): end_round was called 1 times, and the state counts %d "
                        "rounds" % most_rounds(13))

    def test_documents_without_the_kits_round_count_are_read_as_before(self):
        def recorded_before(p, d):
            for key in ("while_graph", "device_graph"):
                for r in d[key]["runs"]:
                    del r["end_round_calls"]
        ctx = self.ctx(recorded_before)
        self.assertEqual(lab08.check_device_loop(ctx).status, chk.PASSED)
        self.assertEqual(lab08.check_while_loop(ctx).status, chk.PASSED)

    def test_rounds_at_the_kit_cap_still_compared(self):
        def runaway(d):  # a loop that never ends stops at KIT_MAX_ROUNDS: still not the kit's count
            d["device_graph"]["runs"][0]["rounds"] = KIT_MAX_ROUNDS
        self.fails_main(lab08.check_device_loop, self.ctx(self.on_main(runaway)),
                        "%d rounds counted by end_round, expected %d" % (KIT_MAX_ROUNDS, most_rounds(64)))

    def test_wrong_counts_fail(self):
        for key, check in (("while_graph", lab08.check_while_loop), ("device_graph", lab08.check_device_loop)):
            def wrong(d):
                d[key]["runs"][1].update(counts_wrong=3, first_bad_line=7, first_got=13, first_want=7)
            ctx = self.ctx(self.on_main(wrong))
            self.fails_main(check, ctx, "launch 2 (tolerance 0.0005, max 13): 3 line counts wrong (first: line 7 has "
                            "13 vertices, expected 7)")
            self.assertEqual(self.failing(ctx), {LOOP_CHECKS[key]})

    def test_late_calls_fail(self):
        for key, check in (("while_graph", lab08.check_while_loop), ("device_graph", lab08.check_device_loop)):
            ctx = self.ctx(self.on_main(lambda d: d[key]["runs"][0].update(late_calls=4096)))
            self.fails_main(check, ctx, "launch 1 (tolerance 0.002, max 64): 4096 refine_line calls after end_round "
                            "ended the loop")
            self.assertEqual(self.failing(ctx), {LOOP_CHECKS[key]})

    def test_calls_for_a_line_outside_the_lines_fail(self):
        """A round's grid one thread too many that calls refine_line(r, n_lines): the kit counts it."""
        for key, check in (("while_graph", lab08.check_while_loop), ("device_graph", lab08.check_device_loop)):
            ctx = self.ctx(self.on_main(lambda d: d[key]["runs"][1].update(bad_lines=3)))
            self.fails_main(check, ctx, "launch 2 (tolerance 0.0005, max 13): 3 refine_line calls for a line outside "
                            "0 .. 4095")
            self.assertEqual(self.failing(ctx), {LOOP_CHECKS[key]})

    def test_several_problems_of_one_case_are_all_named(self):
        def wrong(d):
            d["while_graph"]["runs"][0].update(rounds=1, end_round_calls=1, counts_wrong=4096,
                                               first_bad_line=0, first_got=4, first_want=7)
            d["while_graph"]["runs"][1].update(late_calls=1)
        self.fails_main(lab08.check_while_loop, self.ctx(self.on_main(wrong)),
                        "launch 1 (tolerance 0.002, max 64): 1 rounds counted by end_round, expected %d; 4096 line "
                        "counts wrong (first: line 0 has 4 vertices, expected 7); launch 2 (tolerance 0.0005, max 13): "
                        "1 refine_line calls after end_round ended the loop" % most_rounds(64))

    def test_a_builder_returning_null_fails(self):
        ctx = self.ctx(self.on_main(lambda d: not_built(d, "while_graph")))
        self.fails_main(lab08.check_while_loop, ctx, "your builder returned NULL")
        self.assertEqual(self.failing(ctx), {"WHILE loop ends on the right round"})

        ctx = self.ctx(self.on_main(lambda d: not_built(d, "device_graph")))
        self.fails_main(lab08.check_device_loop, ctx, "your builder returned NULL")
        self.fails_main(lab08.check_instantiated_for_device_launch, ctx, "your build_device_graph returned NULL")
        self.fails_main(lab08.check_relaunches_checked, ctx, "your build_device_graph returned NULL")
        self.assertEqual(self.failing(ctx), {"device graph loop ends on the right round",
                                             "graph instantiated for device launch", "every relaunch checked"})

    def test_no_builder_anywhere_earns_nothing(self):
        ctx = self.ctx(lambda p, d: not_built(d, "device_graph"))
        for check in (lab08.check_device_loop, lab08.check_instantiated_for_device_launch,
                      lab08.check_relaunches_checked):
            outcome = check(ctx)
            self.assertEqual(outcome.status, chk.FAILED)
            self.assertEqual(outcome.fraction, 0.0)
            self.assertIn("%d of %d cases wrong" % (len(self.cases), len(self.cases)), outcome.message)

    def test_a_while_graph_without_a_conditional_node_fails(self):
        ctx = self.ctx(self.on_main(lambda d: d["while_graph"].update(conditional_nodes=0)))
        self.fails_main(lab08.check_while_loop, ctx, "the graph your build_while_graph returned has no conditional "
                        "node (nor its child graphs)")
        self.assertEqual(self.failing(ctx), {"WHILE loop ends on the right round"})

    def test_a_device_graph_needs_no_conditional_node(self):
        ctx = self.ctx()
        self.assertEqual(ctx.runs[0].doc["device_graph"]["conditional_nodes"], 0)
        self.assertEqual(lab08.check_device_loop(ctx).status, chk.PASSED)
        # nor does one with a conditional node fail
        ctx = self.ctx(lambda p, d: d["device_graph"].update(conditional_nodes=2))
        self.assertEqual(lab08.check_device_loop(ctx).status, chk.PASSED)

    def test_not_instantiated_for_device_launch_fails(self):
        ctx = self.ctx(self.on_main(lambda d: d["device_graph"].update(device_launch=False)))
        self.fails_main(lab08.check_instantiated_for_device_launch, ctx, "the executable graph your "
                        "build_device_graph returned was not instantiated with cudaGraphInstantiateFlagDeviceLaunch: "
                        "the device cannot launch it")
        self.assertEqual(self.failing(ctx), {"graph instantiated for device launch"})
        # the WHILE graph's flags are not read: the harness instantiates it itself
        ctx = self.ctx(lambda p, d: d["while_graph"].update(device_launch=False))
        self.assertEqual(self.failing(ctx), set())

    # ---- Part C: each relaunch checked ----

    def test_failed_relaunch_calls_fail(self):
        for k in (0, 1):
            def failed(d):
                d["device_graph"]["runs"][k]["launch_log"].update(calls_failed=2,
                                                                  first_call_error="cudaErrorInvalidValue",
                                                                  first_call_error_line=214)
            ctx = self.ctx(self.on_main(failed))
            self.fails_main(lab08.check_relaunches_checked, ctx, "launch %d: 2 device runtime call(s) failed (first: "
                            "cudaErrorInvalidValue, at line 214 of your file)" % (k + 1))
            self.assertEqual(self.failing(ctx), {"every relaunch checked"})

    def test_too_few_relaunches_checked_fail(self):
        for k, cap in ((0, 64), (1, 13)):
            rounds = most_rounds(cap)
            ctx = self.ctx(self.on_main(
                lambda d: d["device_graph"]["runs"][k]["launch_log"].update(calls_checked=rounds - 2)))
            self.fails_main(lab08.check_relaunches_checked, ctx, "launch %d: %d rounds need %d relaunches, each "
                            "checked with KIT_CHECK_DEVICE; %d checked call(s) counted"
                            % (k + 1, rounds, rounds - 1, rounds - 2))
        ctx = self.ctx(self.on_main(lambda d: d["device_graph"]["runs"][0]["launch_log"].update(calls_checked=0)))
        self.fails_main(lab08.check_relaunches_checked, ctx, "launch 1: %d rounds need %d relaunches"
                        % (most_rounds(64), most_rounds(64) - 1))

    def test_exactly_r_minus_1_checked_passes(self):
        ctx = self.ctx()
        for run in ctx.runs:
            for r in run.doc["device_graph"]["runs"]:
                self.assertEqual(r["launch_log"]["calls_checked"], r["expected_rounds"] - 1)
        self.assertEqual(lab08.check_relaunches_checked(ctx).status, chk.PASSED)
        # more checked calls (a check of cudaGetCurrentGraphExec too) pass as well
        ctx = self.ctx(lambda p, d: [r["launch_log"].update(calls_checked=2 * r["expected_rounds"])
                                     for r in d["device_graph"]["runs"]])
        self.assertEqual(lab08.check_relaunches_checked(ctx).status, chk.PASSED)

    def test_one_round_needs_no_checked_relaunch(self):
        ones = [p for p in self.cases if p["max"] == MIN_VERTICES and p["max2"] == MIN_VERTICES]
        self.assertTrue(ones)
        ctx = self.ctx()
        for run in ctx.runs:
            if run.params in ones:
                self.assertEqual([r["expected_rounds"] for r in run.doc["device_graph"]["runs"]], [1, 1, 1])
                self.assertEqual([r["launch_log"]["calls_checked"] for r in run.doc["device_graph"]["runs"]], [0, 0, 0])
        self.assertEqual(lab08.check_relaunches_checked(ctx).status, chk.PASSED)

    def test_relaunches_are_counted_against_the_kits_rounds(self):
        def extra_rounds(d):  # a loop that ran too long checked more calls; the loop check says what is wrong
            for r in d["device_graph"]["runs"]:
                r["rounds"] = r["expected_rounds"] + 3
                r["launch_log"]["calls_checked"] = r["rounds"] - 1
        ctx = self.ctx(self.on_main(extra_rounds))
        self.assertEqual(self.failing(ctx), {"device graph loop ends on the right round"})

    # ---- Part B on a toolkit without conditional nodes ----

    def test_while_graph_unavailable_is_not_run_here(self):
        ctx = self.ctx(lambda p, d: unavailable(d))
        outcome = lab08.check_while_loop(ctx)
        self.assertEqual(outcome.status, chk.SKIPPED)
        self.assertEqual(outcome.lacking, "CUDA 12.4 or newer")
        self.assertEqual(outcome.fraction, 0.0)
        self.assertEqual(outcome.message, "not available on this toolkit: Part B's conditional graph nodes need CUDA "
                                          "12.4 or newer, and this build used CUDA 12.3")
        # the rest of the rubric grades as before
        self.assertEqual(self.failing(ctx), {"WHILE loop ends on the right round"})

    def test_while_graph_unavailable_in_one_run_is_not_run_here(self):
        outcome = lab08.check_while_loop(self.ctx(self.on_main(lambda d: unavailable(d, runtime=12020))))
        self.assertEqual((outcome.status, outcome.lacking), (chk.SKIPPED, "CUDA 12.4 or newer"))
        self.assertIn("this build used CUDA 12.2", outcome.message)

    def test_not_run_here_costs_no_points_and_is_no_pass(self):
        check = lab08.LAB.check_named("WHILE loop ends on the right round")
        alone = chk.Check(check.name, check.points, check.kind, check.func)  # without its parents
        results = chk.run_checks([alone], self.ctx(lambda p, d: unavailable(d)))
        self.assertEqual([(r.status, r.score, r.lacking) for r in results], [(chk.SKIPPED, 0, "CUDA 12.4 or newer")])
        self.assertFalse(chk.points_lost(results))
        self.assertEqual(chk.lacked(results), ["CUDA 12.4 or newer"])
        self.assertEqual(chk.total(results), (0, check.points))
        # where it ran, it passed and scored
        results = chk.run_checks([alone], self.ctx())
        self.assertEqual([(r.status, r.score, r.lacking) for r in results], [(chk.PASSED, check.points, None)])

    def test_scores_are_the_share_of_cases_right(self):
        check = lab08.LAB.check_named("device graph loop ends on the right round")
        alone = chk.Check(check.name, check.points, check.kind, check.func)

        def two_wrong(p, d):
            if is_main(p) or p is self.cases[1]:
                d["device_graph"]["runs"][0]["rounds"] += 1
        [result] = chk.run_checks([alone], self.ctx(two_wrong))
        self.assertEqual(result.status, chk.FAILED)
        self.assertEqual(result.score, round(check.points * (1 - 2 / len(self.cases)), 2))
        self.assertTrue(chk.points_lost([result]))


# ---- static checks on PTX ---------------------------------------------------------------------

# The head of every PTX file nvcc writes; RELEASE: the toolkit's "12.4, V12.4.131".
HEADER = """//
// Generated by NVIDIA NVVM Compiler
//
// Compiler Build ID: CL-36424714
// Cuda compilation tools, release RELEASE
// Based on NVVM 7.0.1
//

.version 9.0
.target sm_90
.address_size 64

"""
# The solution's two deciding kernels as nvcc writes them (CUDA 13.0, sm_75 or sm_90): decide_while sets the WHILE
# node's condition from end_round (SET_CONDITIONAL), decide_relaunch relaunches its graph (GRAPH_LAUNCH)
# and records the result (KIT_CHECK_DEVICE).
DECLARATIONS = """.extern .func  (.param .b32 func_retval0) _Z9end_roundP8refine_t
(
	.param .b64 _Z9end_roundP8refine_t_param_0
)
;
.extern .func cudaGraphSetConditional
(
	.param .b64 cudaGraphSetConditional_param_0,
	.param .b32 cudaGraphSetConditional_param_1
)
;
.extern .func  (.param .b32 func_retval0) _Z22kit_record_call_result9cudaErrori
(
	.param .b32 _Z22kit_record_call_result9cudaErrori_param_0,
	.param .b32 _Z22kit_record_call_result9cudaErrori_param_1
)
;
.extern .func  (.param .b32 func_retval0) cudaGraphLaunch
(
	.param .b64 cudaGraphLaunch_param_0,
	.param .b64 cudaGraphLaunch_param_1
)
;
"""
DECIDE_WHILE = """.visible .entry _Z12decide_whileP8refine_ty(
	.param .u64 _Z12decide_whileP8refine_ty_param_0,
	.param .u64 _Z12decide_whileP8refine_ty_param_1
)
{
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<3>;


	ld.param.u64 	%rd1, [_Z12decide_whileP8refine_ty_param_0];
	ld.param.u64 	%rd2, [_Z12decide_whileP8refine_ty_param_1];
	{ // callseq 4, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd1;
	.param .b32 retval0;
	call.uni (retval0), 
	_Z9end_roundP8refine_t, 
	(
	param0
	);
	ld.param.b32 	%r1, [retval0+0];
	} // callseq 4
SET_CONDITIONAL	ret;

}
"""
SET_CONDITIONAL = """	{ // callseq 5, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd2;
	.param .b32 param1;
	st.param.b32 	[param1+0], %r1;
	call.uni 
	cudaGraphSetConditional, 
	(
	param0, 
	param1
	);
	} // callseq 5
"""
DECIDE_RELAUNCH = """.visible .entry _Z15decide_relaunchP8refine_t(
	.param .u64 _Z15decide_relaunchP8refine_t_param_0
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;


	ld.param.u64 	%rd1, [_Z15decide_relaunchP8refine_t_param_0];
	{ // callseq 6, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd1;
	.param .b32 retval0;
	call.uni (retval0), 
	_Z9end_roundP8refine_t, 
	(
	param0
	);
	ld.param.b32 	%r1, [retval0+0];
	} // callseq 6
	setp.eq.s32 	%p1, %r1, 0;
	@%p1 bra 	$L__BB4_2;

	// begin inline asm
	mov.u64 %rd2, %current_graph_exec;
	// end inline asm
GRAPH_LAUNCH
$L__BB4_2:
	ret;

}
"""
GRAPH_LAUNCH = """	{ // callseq 7, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd2;
	.param .b64 param1;
	st.param.b64 	[param1+0], 72057594037927936;
	.param .b32 retval0;
	call.uni (retval0), 
	cudaGraphLaunch, 
	(
	param0, 
	param1
	);
	ld.param.b32 	%r2, [retval0+0];
	} // callseq 7
	{ // callseq 8, 0
	.reg .b32 temp_param_reg;
	.param .b32 param0;
	st.param.b32 	[param0+0], %r2;
	.param .b32 param1;
	st.param.b32 	[param1+0], 214;
	.param .b32 retval0;
	call.uni (retval0), 
	_Z22kit_record_call_result9cudaErrori, 
	(
	param0, 
	param1
	);
	ld.param.b32 	%r3, [retval0+0];
	} // callseq 8
"""


def scheduling_ptx(release="13.0, V13.0.88", set_conditional=True, graph_launch=True, header=True):
    """The PTX of a scheduling.cu: nvcc's header for release (none where not header), the declarations
    nvcc writes whatever is called, decide_while with or without its cudaGraphSetConditional call,
    decide_relaunch with or without its cudaGraphLaunch."""
    text = (HEADER.replace("RELEASE", release) if header else "") + DECLARATIONS
    text += DECIDE_WHILE.replace("SET_CONDITIONAL", SET_CONDITIONAL if set_conditional else "")
    return text + DECIDE_RELAUNCH.replace("GRAPH_LAUNCH", GRAPH_LAUNCH if graph_launch else "")


def static(check, *texts):
    return check(FakeContext([], ptx={"scheduling%d.cu" % k: t for k, t in enumerate(texts)}))


class Lab08StaticTest(unittest.TestCase):
    def test_calls_are_found_as_the_context_finds_them(self):
        text = scheduling_ptx()
        found = ptx.called_functions(text)
        self.assertLessEqual({"cudaGraphSetConditional", "cudaGraphLaunch", "_Z9end_roundP8refine_t",
                              "_Z22kit_record_call_result9cudaErrori"}, found)
        ctx = FakeContext([], ptx={"scheduling.cu": text})
        self.assertEqual(ctx.ptx_calls(), found)
        self.assertEqual(ctx.ptx_call_count("cudaGraphSetConditional"), 1)
        self.assertEqual(ctx.ptx_call_count("cudaGraphLaunch"), 1)
        # on one line, without a return value, and with one
        self.assertEqual(ptx.called_functions("\tcall.uni cudaGraphSetConditional, (param0, param1);\n"),
                         {"cudaGraphSetConditional"})
        self.assertEqual(ptx.called_functions("\tcall.uni (retval0), cudaGraphLaunch, (param0, param1);\n"),
                         {"cudaGraphLaunch"})
        self.assertEqual(ptx.called_functions("\tcall (retval0), cudaGraphLaunch, (param0, param1);\n"),
                         {"cudaGraphLaunch"})
        # calls from a second file of the submission count too
        ctx = FakeContext([], ptx={"a.cu": scheduling_ptx(graph_launch=False),
                                   "b.cu": scheduling_ptx(set_conditional=False)})
        self.assertLessEqual({"cudaGraphSetConditional", "cudaGraphLaunch"}, ctx.ptx_calls())

    def test_a_declaration_is_no_call(self):
        text = scheduling_ptx(set_conditional=False, graph_launch=False)
        self.assertIn(".extern .func cudaGraphSetConditional", text)
        self.assertIn(".extern .func  (.param .b32 func_retval0) cudaGraphLaunch", text)
        found = ptx.called_functions(text)
        self.assertNotIn("cudaGraphSetConditional", found)
        self.assertNotIn("cudaGraphLaunch", found)
        self.assertEqual(static(lab08.check_condition_set_on_device, text).status, chk.FAILED)
        self.assertEqual(static(lab08.check_graph_launched_on_device, text).status, chk.FAILED)

    def test_only_the_exact_name_counts(self):
        text = scheduling_ptx(set_conditional=False, graph_launch=False) + (
            "\tcall.uni (retval0), _Z17my_cudaGraphLaunchv, ();\n\tcall.uni cudaGraphSetConditionalX, (param0);\n")
        self.assertEqual(static(lab08.check_condition_set_on_device, text).status, chk.FAILED)
        self.assertEqual(static(lab08.check_graph_launched_on_device, text).status, chk.FAILED)

    def test_toolkit_release(self):
        ctx = FakeContext([], ptx={"scheduling.cu": scheduling_ptx("12.3, V12.3.107")})
        self.assertEqual(lab08.toolkit_release(ctx), (12, 3))
        ctx = FakeContext([], ptx={"scheduling.cu": scheduling_ptx()})
        self.assertEqual(lab08.toolkit_release(ctx), (13, 0))
        ctx = FakeContext([], ptx={"scheduling.cu": scheduling_ptx(header=False)})
        self.assertIsNone(lab08.toolkit_release(ctx))
        self.assertIsNone(lab08.toolkit_release(FakeContext([])))
        ctx = FakeContext([], ptx={"a.cu": scheduling_ptx(header=False), "b.cu": scheduling_ptx("12.4, V12.4.131")})
        self.assertEqual(lab08.toolkit_release(ctx), (12, 4))

    def test_condition_before_cuda_12_4_is_not_run_here(self):
        for release, shown in (("12.3, V12.3.107", "12.3"), ("12.0, V12.0.76", "12.0"), ("11.8, V11.8.89", "11.8")):
            for call in (False, True):
                outcome = static(lab08.check_condition_set_on_device, scheduling_ptx(release, set_conditional=call))
                self.assertEqual(outcome.status, chk.SKIPPED, (release, call))
                self.assertEqual(outcome.lacking, "CUDA 12.4 or newer")
                self.assertEqual(outcome.message, "not available on this toolkit: Part B's conditional graph nodes "
                                                  "need CUDA 12.4 or newer, and this build used CUDA %s" % shown)

    def test_not_run_here_is_no_pass_and_costs_nothing(self):
        check = lab08.LAB.check_named("condition set in device code")
        alone = chk.Check(check.name, check.points, check.kind, check.func)
        ctx = FakeContext([], ptx={"scheduling.cu": scheduling_ptx("12.3, V12.3.107")})
        results = chk.run_checks([alone], ctx)
        self.assertEqual([(r.status, r.score) for r in results], [(chk.SKIPPED, 0)])
        self.assertFalse(chk.points_lost(results))
        self.assertEqual(chk.lacked(results), ["CUDA 12.4 or newer"])

    def test_condition_from_cuda_12_4_on(self):
        for release in ("12.4, V12.4.131", "12.8, V12.8.93", "13.0, V13.0.88"):
            outcome = static(lab08.check_condition_set_on_device, scheduling_ptx(release))
            self.assertEqual(outcome.status, chk.PASSED, release)
            outcome = static(lab08.check_condition_set_on_device, scheduling_ptx(release, set_conditional=False))
            self.assertEqual(outcome.status, chk.FAILED, release)
            self.assertIsNone(outcome.lacking)
            self.assertEqual(outcome.message, "expected: a kernel of the WHILE node's body sets the loop's condition "
                                              "with cudaGraphSetConditional(handle, value)\n"
                                              "actual:   your PTX never calls cudaGraphSetConditional")

    def test_condition_without_a_header_is_read_from_the_calls(self):
        self.assertEqual(static(lab08.check_condition_set_on_device, scheduling_ptx(header=False)).status, chk.PASSED)
        self.assertEqual(static(lab08.check_condition_set_on_device,
                                scheduling_ptx(header=False, set_conditional=False)).status, chk.FAILED)

    def test_device_graph_launch(self):
        for release in ("12.3, V12.3.107", "13.0, V13.0.88"):  # device graph launch needs no 12.4
            outcome = static(lab08.check_graph_launched_on_device, scheduling_ptx(release))
            self.assertEqual(outcome.status, chk.PASSED, release)
            outcome = static(lab08.check_graph_launched_on_device, scheduling_ptx(release, graph_launch=False))
            self.assertEqual(outcome.status, chk.FAILED, release)
            self.assertEqual(outcome.message, "expected: a kernel of your device graph relaunches it with "
                                              "cudaGraphLaunch(..., cudaStreamGraphTailLaunch)\n"
                                              "actual:   your PTX never calls cudaGraphLaunch")
        # one call does not stand for the other
        self.assertEqual(static(lab08.check_graph_launched_on_device, scheduling_ptx(graph_launch=False)).status,
                         chk.FAILED)
        self.assertEqual(static(lab08.check_condition_set_on_device, scheduling_ptx(set_conditional=False)).status,
                         chk.FAILED)
        # in a second file
        self.assertEqual(static(lab08.check_graph_launched_on_device, scheduling_ptx(graph_launch=False),
                                scheduling_ptx(set_conditional=False)).status, chk.PASSED)

    def test_the_starter_fails_the_checks_it_must(self):
        starter = scheduling_ptx(set_conditional=False, graph_launch=False)
        static_checks = [c for c in lab08.LAB.own_checks if c.kind == chk.STATIC]
        self.assertEqual({c.name for c in static_checks}, set(lab08.LAB.starter_must_fail))
        ctx = FakeContext([], ptx={"scheduling.cu": starter})
        for name in lab08.LAB.starter_must_fail:
            self.assertEqual(lab08.LAB.check_named(name).func(ctx).status, chk.FAILED, name)
        ctx = FakeContext([], ptx={"scheduling.cu": scheduling_ptx()})
        for check in static_checks:
            self.assertEqual(check.func(ctx).status, chk.PASSED, check.name)


NVCC = shutil.which("nvcc")


@unittest.skipUnless(NVCC, "nvcc is not installed")
def relaunch_ptx(launch=GRAPH_LAUNCH):
    return DECIDE_RELAUNCH.replace("GRAPH_LAUNCH", launch)


RECORDER_ARGUMENT = "st.param.b32 \t[param0+0], %r2;"
LAUNCH_ALONE, RECORD = GRAPH_LAUNCH.split("\t{ // callseq 8, 0")
RECORD = "\t{ // callseq 8, 0" + RECORD


class Lab08RelaunchRecordedTest(unittest.TestCase):
    """The PTX half of "every relaunch checked": cudaGraphLaunch's result reaches KIT_CHECK_DEVICE."""

    def unrecorded(self, text):
        return ptx.unrecorded_results(text, ptx.DEVICE_GRAPH_LAUNCH, ptx.DEVICE_CALL_RECORDER)

    def test_the_solutions_relaunch_is_recorded(self):
        self.assertIn(RECORDER_ARGUMENT, GRAPH_LAUNCH)
        self.assertEqual(self.unrecorded(relaunch_ptx()), 0)
        self.assertEqual(self.unrecorded(relaunch_ptx("")), 0)  # no relaunch: the runtime half decides

    def test_a_copy_of_the_result_counts(self):
        copied = LAUNCH_ALONE + "\tmov.u32 \t%r5, %r2;\n\tmov.b32 \t%r6, %r5;\n" + RECORD.replace(
            RECORDER_ARGUMENT, "st.param.b32 \t[param0+0], %r6;")
        self.assertEqual(self.unrecorded(relaunch_ptx(copied)), 0)

    def test_an_ignored_or_replaced_result_is_found(self):
        self.assertEqual(self.unrecorded(relaunch_ptx(LAUNCH_ALONE)), 1)
        # KIT_CHECK_DEVICE(cudaSuccess), or of any other value, after the launch checks nothing
        for other in ("0", "%r1"):
            forged = RECORD.replace(RECORDER_ARGUMENT, "st.param.b32 \t[param0+0], %s;" % other)
            self.assertEqual(self.unrecorded(relaunch_ptx(LAUNCH_ALONE + forged)), 1, other)
        # a recorder of another name (the student's own function) is not the kit's
        other_name = GRAPH_LAUNCH.replace("_Z22kit_record_call_result9cudaErrori", "_Z22kit_record_call_resultii")
        self.assertEqual(self.unrecorded(relaunch_ptx(other_name)), 1)

    def test_a_result_recorded_on_one_branch_only_is_found(self):
        branch = LAUNCH_ALONE + "\tsetp.ne.s32 \t%p1, %r2, 0;\n\t@%p1 bra \t$L__BB4_2;\n" + RECORD
        self.assertEqual(self.unrecorded(relaunch_ptx(branch)), 1)
        # a second launch before the first is recorded: the first is not
        twice = LAUNCH_ALONE + LAUNCH_ALONE.replace("%r2", "%r4") + RECORD.replace(RECORDER_ARGUMENT,
                                                                                 "st.param.b32 \t[param0+0], %r4;")
        self.assertEqual(self.unrecorded(relaunch_ptx(twice)), 1)

    def test_the_check_fails_on_unrecorded_relaunches_whatever_the_log_says(self):
        good = Lab08RuntimeTest("test_exactly_r_minus_1_checked_passes")
        good.setUp()
        ctx = good.ctx()
        ctx.ptx = {"scheduling.cu": scheduling_ptx()}
        self.assertEqual(lab08.check_relaunches_checked(ctx).status, chk.PASSED)
        ctx.ptx = {"scheduling.cu": DECLARATIONS + relaunch_ptx(LAUNCH_ALONE + RECORD.replace(
            RECORDER_ARGUMENT, "st.param.b32 \t[param0+0], 0;"))}
        outcome = lab08.check_relaunches_checked(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertEqual(outcome.message, "expected: KIT_CHECK_DEVICE(cudaGraphLaunch(...)): the result of every "
                         "device-side relaunch checked, on every path\nactual:   1 cudaGraphLaunch call(s) in your "
                         "PTX with a path on which KIT_CHECK_DEVICE does not get its result")


class Lab08RealPtxTest(unittest.TestCase):
    """The static checks on nvcc's own PTX of the solution and the starter (nvcc -ptx needs no GPU): the
    constructed PTX above stands for what the compiler writes."""

    def ptx(self, folder, *source):
        out = os.path.join(folder, "%s.ptx" % source[0].replace(os.sep, "_"))
        subprocess.run([NVCC, "-O2", "-ptx", "-rdc=true", "-arch=sm_75", "-I", INCLUDE_DIR, "-I", HARNESS_DIR,
                        os.path.join(paths.KIT_ROOT, *source), "-o", out],
                       check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        return _read(out)

    def test_relaunches_recorded_in_nvccs_ptx(self):
        """The solution's and every alternative's relaunch reaches KIT_CHECK_DEVICE in nvcc's PTX; the
        known-wrong unchecked relaunch, and one that checks cudaSuccess after it instead, do not."""
        lab = "08-device-graphs"
        alternatives = paths.alternative_dir(lab)
        correct = [("solutions", lab, "scheduling.cu")] + [
            ("solutions", lab, "alternative", name, "scheduling.cu") for name in paths.case_folders(alternatives)]
        solution = _read(paths.KIT_ROOT, "solutions", lab, "scheduling.cu")
        launch = "KIT_CHECK_DEVICE(cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch));"
        self.assertIn(launch, solution)
        with tempfile.TemporaryDirectory() as folder:
            forged = os.path.join(folder, "forged.cu")
            with open(forged, "w") as f:
                f.write(solution.replace(launch, "cudaGraphLaunch(cudaGetCurrentGraphExec(), "
                                                 "cudaStreamGraphTailLaunch); KIT_CHECK_DEVICE(cudaSuccess);"))
            for source, expected in [(c, 0) for c in correct] + [
                    (("solutions", lab, "incorrect", "unchecked-relaunch", "scheduling.cu"), 1), ((forged,), 1)]:
                text = self.ptx(folder, *source)
                found = sum(ptx.unrecorded_results(body, ptx.DEVICE_GRAPH_LAUNCH, ptx.DEVICE_CALL_RECORDER)
                            for body in ptx.definitions(text).values())
                self.assertEqual(found, expected, source)

    def test_solution_passes_and_starter_fails(self):
        with tempfile.TemporaryDirectory() as folder:
            solution = self.ptx(folder, "solutions", "08-device-graphs", "scheduling.cu")
            starter = self.ptx(folder, starters.pristine("08-device-graphs"), "scheduling.cu")
        version = subprocess.run([NVCC, "--version"], stdout=subprocess.PIPE, universal_newlines=True).stdout
        release = tuple(int(v) for v in re.search(r"release (\d+)\.(\d+)", version).groups())
        self.assertEqual(lab08.toolkit_release(FakeContext([], ptx={"scheduling.cu": solution})), release)
        static_checks = [c for c in lab08.LAB.own_checks if c.kind == chk.STATIC]
        expected_solution = {c.name: chk.PASSED for c in static_checks}
        expected_starter = {c.name: chk.FAILED if c.name in lab08.LAB.starter_must_fail else chk.PASSED
                            for c in static_checks}
        if release < lab08.CONDITIONAL_NODES_SINCE:
            expected_solution["condition set in device code"] = chk.SKIPPED
            expected_starter["condition set in device code"] = chk.SKIPPED
        for check in static_checks:
            self.assertEqual(static(check.func, solution).status, expected_solution[check.name], check.name)
            self.assertEqual(static(check.func, starter).status, expected_starter[check.name], check.name)
        # the constructed kernels are the solution's, as this toolkit writes them
        if release == (13, 0):
            for part in (DECLARATIONS, DECIDE_WHILE.replace("SET_CONDITIONAL", SET_CONDITIONAL),
                         DECIDE_RELAUNCH.replace("GRAPH_LAUNCH", GRAPH_LAUNCH)):
                self.assertTrue(part in solution, part.splitlines()[0])

if __name__ == "__main__":
    unittest.main()
