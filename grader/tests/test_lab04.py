"""Lab 04's grading rules on constructed harness documents (no GPU needed)."""
import random
import unittest

from gradelib import checks as chk
from gradelib import grading
from gradelib.grading import CaseRun
from labs import lab04


class FakeContext:
    def __init__(self, runs, source=""):
        self.runs = [CaseRun(p, None, d, None) for p, d in runs]
        self.source = source

    def student_sources(self):
        return self.source

    student_code = grading.Context.student_code  # the real stripping of comments and starter branches


def lines_ok():
    return {"lines_bad": 0, "missing": 0, "count_wrong": 0, "overruns": 0, "vertices_wrong": 0,
            "first_bad_line": -1, "first_bad_what": ""}


def good_doc(p, timing=None):
    doc = {"flat": lines_ok(), "cdp": lines_ok(), "flat_ran": True,
           "cdp_log": {"checked": p["lines"], "failed": 0, "calls_checked": 2 * p["lines"], "calls_failed": 0},
           "heap": {"allocations": p["lines"], "alloc_failures": 0, "bytes_requested": 800, "frees": p["lines"],
                    "bad_frees": 0, "free_failures": 0},
           "exact_bytes": 800, "worst_case_bytes": 2560, "heap_bytes": 8 << 20}
    if timing:
        doc["timing_ms"] = timing
    return doc


class Lab04Test(unittest.TestCase):
    def setUp(self):
        self.cases = lab04.make_cases(random.Random(9))

    def test_cases(self):
        self.assertTrue(any(c["lines"] > 2048 for c in self.cases), "more lines than the default pending pool")
        self.assertTrue(any(c["lines"] * c["max"] * 8 > 8 << 20 for c in self.cases), "a case past the 8 MiB heap")
        self.assertEqual(sorted(c["timing"] for c in self.cases if "timing" in c), ["heavy", "short", "streams"])
        self.assertEqual(self.cases, lab04.make_cases(random.Random(9)))

    def ctx(self, mutate=None, timing=None, source=""):
        runs = []
        for p in self.cases:
            t = timing.get(p.get("timing")) if timing else None
            d = good_doc(p, t)
            if mutate:
                mutate(p, d)
            runs.append((p, d))
        return FakeContext(runs, source)

    def test_good_documents_pass(self):
        timing = {"streams": {"flat": 0.56, "cdp_null": 0.7, "cdp_student": 0.2, "cdp_fire_and_forget": 0.15},
                  "heavy": {"flat": 2.2, "cdp_null": 0.6, "cdp_student": 0.21, "cdp_fire_and_forget": 0.2},
                  "short": {"flat": 0.008, "cdp_null": 1.2, "cdp_student": 0.54, "cdp_fire_and_forget": 0.28}}
        ctx = self.ctx(timing=timing)
        for check in lab04.LAB.lab_checks:
            if check.kind == chk.RUNTIME:
                self.assertEqual(check.func(ctx).status, chk.PASSED, check.name)
        message = lab04.check_streams_beat_null(ctx).message
        self.assertIn("3.50x faster", message)
        self.assertIn("not graded", message)  # the short-lines comparison is reported, not thresholded

    def test_null_stream_speed_fails(self):
        timing = {"streams": {"flat": 0.56, "cdp_null": 0.7, "cdp_student": 0.68, "cdp_fire_and_forget": 0.2},
                  "heavy": {"flat": 2.2, "cdp_null": 0.6, "cdp_student": 0.55, "cdp_fire_and_forget": 0.2}}
        ctx = self.ctx(timing=timing)
        self.assertEqual(lab04.check_streams_beat_null(ctx).status, chk.FAILED)
        self.assertEqual(lab04.check_cdp_beats_flat_on_heavy_tail(ctx).status, chk.PASSED)  # 4.0x exactly

    def test_missing_timing_fails(self):
        self.assertEqual(lab04.check_streams_beat_null(self.ctx()).status, chk.FAILED)

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

    def test_pending_limit_in_a_comment_does_not_count(self):
        ctx = FakeContext([], "/* cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, n) */")
        self.assertEqual(lab04.check_pending_limit_raised(ctx).status, chk.FAILED)
        ctx = FakeContext([], "KIT_CHECK(cudaDeviceSetLimit( cudaLimitDevRuntimePendingLaunchCount, n));")
        self.assertEqual(lab04.check_pending_limit_raised(ctx).status, chk.PASSED)


if __name__ == "__main__":
    unittest.main()


class RecordedDocumentsTest(unittest.TestCase):
    """Lab 04's checks on harness documents recorded on an H200 (--lines 300 --factor 64 --max 256)."""

    EXPECTED_FAILURES = {
        "solution": set(),
        "null-stream": set(),        # only its speed is wrong; no timing in these runs
        "limit-not-raised": set(),   # 300 lines fit the default pool; caught statically
        "no-bound-check": {"child stays inside its block"},
        "no-free": {"heap freed"},
        "worst-case-allocation": {"exact allocation"},
    }
    CHECKS = {"flat vertices": lab04.check_flat, "dynamic vertices": lab04.check_dynamic,
              "no line lost": lab04.check_no_line_lost, "child stays inside its block": lab04.check_inside_block,
              "exact allocation": lab04.check_exact_allocation, "heap freed": lab04.check_freed}

    def test_each_recorded_submission_fails_exactly_its_checks(self):
        import json
        import os
        data = os.path.join(os.path.dirname(__file__), "data", "recorded")
        for case, expected in self.EXPECTED_FAILURES.items():
            with open(os.path.join(data, "lab04-%s.json" % case)) as f:
                doc = json.load(f)
            ctx = FakeContext([(doc["params"], doc)])
            failed = {name for name, func in self.CHECKS.items() if func(ctx).status == chk.FAILED}
            self.assertEqual(failed, expected, case)
