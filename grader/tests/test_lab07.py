"""Lab 07's grading rules on constructed harness documents and PTX (no GPU needed)."""
import copy
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest

from gradelib import checks as chk
from gradelib import paths, starters
from rubrics import lab07
from tests.fakes import FakeContext

HARNESS_DIR = os.path.join(paths.KIT_ROOT, "common", "harness", "07-mandelbrot")


def _read(*parts):
    with open(os.path.join(*parts)) as f:
        return f.read()


SUBDIV = int(re.search(r"#define SUBDIV (\d+)", _read(HARNESS_DIR, "mandelbrot.h")).group(1))


def top_side(width, height, min_side):
    """top_side() of mandelbrot.h: min_side times the smallest power of SUBDIV that covers the image."""
    side = min_side
    while side < max(width, height):
        side *= SUBDIV
    return side


def grids_per_depth_bound(width, height, max_depth, min_side):
    """[1, n1, n2, ...]: the rectangles of each depth when every one splits, the count the solution's
    prepare_mandelbrot makes (a split needs side > min_side and depth + 1 < max_depth)."""
    side, counts = top_side(width, height, min_side), [1]
    while len(counts) < max_depth and side > min_side:
        side //= SUBDIV
        counts.append(-(-width // side) * -(-height // side))
    return counts


def child_grid_bound(width, height, max_depth, min_side):
    """The most child grids the rule can launch on a width x height image: what the solution raises the
    pending-launch limit to (never below the default)."""
    return sum(grids_per_depth_bound(width, height, max_depth, min_side)[1:])


def case_bound(p):
    return child_grid_bound(p["width"], p["height"], p["max_depth"], p["min_side"])


# The document of the recorded case (the memcheck case, with its figure left out) as the harness wrote
# it on an H100 with the solution.
RECORDED = {
    "lab": "07-mandelbrot",
    "device": {"name": "NVIDIA H100 80GB HBM3", "cc_major": 9, "cc_minor": 0, "sm_count": 132,
               "total_memory_bytes": 85017493504, "runtime_version": 13000, "driver_version": 13000},
    "params": {"width": 300, "height": 200, "view": "full", "zoom": 0, "seed": 0, "max_dwell": 256, "max_depth": 4,
               "min_side": 8, "top_side": 512},
    "pending_launch_limit": 2048,
    "rule": {"rects": 905, "child_grids": 904, "grids_per_depth": [1, 6, 70, 828], "filled_pixels": 29440,
             "computed_pixels": 30560, "unlike_exhaustive": 0},
    "rects": {"reported": 905, "kept": 905, "grids_per_depth": [1, 6, 70, 828], "missing": 0, "extra": 0,
              "first_missing": [], "first_extra": []},
    "grids_ran": 905,
    "image": {"pixels": 60000, "unlike_rule": 0, "unlike_rule_computed": 0, "unwritten": 0, "unlike_exhaustive": 0,
              "first_unlike_rule": []},
    "dwell_calls": 65749,
    "cdp_log": {"checked": 904, "failed": 0, "first_error": "", "first_error_line": 0, "calls_checked": 0,
                   "calls_failed": 0, "first_call_error": "", "first_call_error_line": 0},
}
# Keys the recorded document predates, as the harness writes them now for a run without such grids.
PREDATES = {"rects": {"misshapen": 0, "first_misshapen": [], "same_grid": 0}}


def current(recorded):
    """A recorded document with the keys it predates, as the harness writes them now for a clean run."""
    doc = copy.deepcopy(recorded)
    for section, keys in PREDATES.items():
        for key, value in keys.items():
            doc[section].setdefault(key, value)
    return doc


# The H100 bench (make bench LAB=07): the seahorse at zoom 14, 1024 x 1024, max depth 5, min side 16, where
# filaments cross every rectangle: the rule visited this many, every one of them split.
BENCH_FILAMENTS_1024_RECTS = 4369


def good_doc(p, timing=None):
    """A document as the solution's run writes it for the case p. The rule's rectangles are constructed
    as those of a rule that splits every rectangle down to the cutoff (the most it can visit); the
    student's agree with them, and the pending-launch limit is the solution's: the bound, at least 2048."""
    counts = grids_per_depth_bound(p["width"], p["height"], p["max_depth"], p["min_side"])
    rects, pixels = sum(counts), p["width"] * p["height"]
    doc = current(RECORDED)
    doc["params"] = dict({k: p[k] for k in ("width", "height", "view", "zoom", "seed", "max_dwell", "max_depth",
                                            "min_side")}, top_side=top_side(p["width"], p["height"], p["min_side"]))
    doc["pending_launch_limit"] = max(lab07.DEFAULT_PENDING_LIMIT, rects - 1)
    doc["rule"].update(rects=rects, child_grids=rects - 1, grids_per_depth=counts, filled_pixels=0,
                       computed_pixels=pixels)
    doc["rects"].update(reported=rects, kept=rects, grids_per_depth=list(counts))
    doc["grids_ran"] = rects
    doc["image"]["pixels"] = pixels
    doc["dwell_calls"] = pixels + 4 * rects
    doc["cdp_log"]["checked"] = rects - 1
    if timing:
        doc["timing_ms"] = timing
    return doc


def timed(exhaustive, cdp_student, wrong_runs=0, first_unlike=0, timed_runs=lab07.TIMING_REPEATS):
    """A timing_ms section: the medians, the student's timed runs made (fewer than the repeats where the
    harness gave up), and each of them and the warm-up checked against the rule's image."""
    return {"exhaustive": exhaustive, "cdp_student": cdp_student, "cdp_student_runs": 1 + timed_runs,
            "cdp_student_wrong_runs": wrong_runs, "cdp_student_first_unlike": first_unlike}


TIMING = {"uniform": timed(30.0, 6.0)}


def is_1024(p):
    return p["width"] == p["height"] == 1024 and p["view"] == "full" and not p.get("timing")


class Lab07CasesTest(unittest.TestCase):
    def test_the_python_bound_agrees_with_the_recorded_runs(self):
        # top_side as the harness wrote it for the recorded case; the rule visits no more than the bound
        self.assertEqual(top_side(300, 200, 8), RECORDED["params"]["top_side"])
        self.assertEqual(grids_per_depth_bound(300, 200, 4, 8), [1, 6, 70, 950])
        self.assertLessEqual(RECORDED["rule"]["child_grids"], child_grid_bound(300, 200, 4, 8))
        for have, most in zip(RECORDED["rule"]["grids_per_depth"], grids_per_depth_bound(300, 200, 4, 8)):
            self.assertLessEqual(have, most)
        # where every rectangle splits, the rule launches exactly the bound
        self.assertEqual(BENCH_FILAMENTS_1024_RECTS, 1 + child_grid_bound(1024, 1024, 5, 16))

    def test_cases_are_deterministic_for_a_seed(self):
        self.assertEqual(lab07.make_cases(random.Random(4)), lab07.make_cases(random.Random(4)))
        self.assertNotEqual(lab07.make_cases(random.Random(4)), lab07.make_cases(random.Random(5)))

    def test_every_drawn_case_is_one_the_harness_takes(self):
        for seed in range(50):
            for case in lab07.make_cases(random.Random(seed)):
                lab07.HARNESS.argv(case)  # raises ValueError for a value out of the C ranges
                # the harness refuses a min side that is no power of two, which the contract cannot say
                self.assertEqual(case["min_side"] & (case["min_side"] - 1), 0, (seed, case))
                self.assertIn(case["view"], lab07.VIEWS)

    def test_timing_cases(self):
        cases = lab07.make_cases(random.Random(1))
        timed = [c for c in cases if c.get("timing")]
        # the filaments case is never thresholded, so it is not run: a grading holds the GPU alone for one case
        self.assertEqual([c["timing"] for c in timed], [lab07.GRADED_TIMING])
        for c in timed:
            self.assertEqual(c["repeats"], lab07.TIMING_REPEATS)
            self.assertGreater(c["repeats"], 0, "a case without repeats reports no timing")
            self.assertEqual({k: v for k, v in c.items() if k not in ("timing", "repeats", "seed")},
                             lab07.TIMING_CASES[c["timing"]])
            self.assertNotIn("--timing", lab07.HARNESS.argv(c))
        self.assertTrue(all(not c.get("repeats") for c in cases if not c.get("timing")), "only timing cases time")

    def test_cases_past_the_default_pending_pool(self):
        for seed in range(50):
            cases = lab07.make_cases(random.Random(seed))
            big = [c for c in cases if c["width"] == c["height"] == 1024 and c["view"] == "full"
                   and c["max_depth"] == 5 and c["min_side"] == 16 and not c.get("timing")]
            huge = [c for c in cases if c["width"] == c["height"] == 4096 and c["view"] == "full"
                    and c["max_depth"] == 5 and c["min_side"] == 16]
            self.assertEqual((len(big), len(huge)), (1, 1), seed)
            self.assertGreater(case_bound(big[0]), lab07.DEFAULT_PENDING_LIMIT)
            self.assertGreater(case_bound(huge[0]), 10 * lab07.DEFAULT_PENDING_LIMIT)
        self.assertEqual(case_bound(big[0]), 4368)
        self.assertEqual(case_bound(huge[0]), 69904)

    def test_edge_cases(self):
        cases = lab07.make_cases(random.Random(2))
        self.assertIn((1, 1), [(c["width"], c["height"]) for c in cases])
        self.assertTrue(any(c["width"] == 1 and c["height"] > 1 for c in cases), "a one-pixel column")
        self.assertTrue(any(c["height"] == 1 and c["width"] > 1 for c in cases), "a one-pixel row")
        self.assertTrue(any(c["max_depth"] == 1 for c in cases), "a case that never splits")

        def cut_at_both_edges(c):  # at some depth, the squares overhang the right and the bottom edges
            sides = [top_side(c["width"], c["height"], c["min_side"]) // SUBDIV ** k for k in
                     range(len(grids_per_depth_bound(c["width"], c["height"], c["max_depth"], c["min_side"])))]
            return any(c["width"] % s and c["height"] % s for s in sides if s < min(c["width"], c["height"]))

        self.assertTrue(any(cut_at_both_edges(c) for c in cases if c["width"] > 1 and c["height"] > 1))
        self.assertEqual([c.get("figure") for c in cases if c.get("figure")], [lab07.FEEDBACK_FIGURE_SIDE])

    def test_the_recorded_case_is_the_memcheck_case(self):
        self.assertEqual({k: v for k, v in RECORDED["params"].items() if k not in ("seed", "top_side")},
                         lab07.MEMCHECK_CASE)
        self.assertEqual(lab07.LAB.recorded_case, dict(lab07.MEMCHECK_CASE, figure=lab07.FEEDBACK_FIGURE_SIDE))


class Lab07ContractTest(unittest.TestCase):
    """The contract against the C code (the options are the harness-options test's, against the built
    program's own description)."""

    def test_block_size_is_the_headers(self):
        threads = re.search(r"#define MS_THREADS (\d+)", _read(HARNESS_DIR, "mandelbrot.h"))
        self.assertEqual(int(threads.group(1)), lab07.MS_THREADS)

    def test_the_give_up_factor_is_the_harnesss(self):
        factor = re.search(r"#define GIVE_UP_SLOWER ([\d.]+)", _read(HARNESS_DIR, "harness.cu"))
        self.assertEqual(float(factor.group(1)), lab07.GIVE_UP_SLOWER)

    def test_giving_up_keeps_2x_headroom_on_both_sides(self):
        # a run given up is at most 1 / GIVE_UP_SLOWER: it could not have passed; and every correct variant's
        # measured ratio (tools/measure_thresholds.py) is far above that, so none is ever given up
        given_up = 1.0 / lab07.GIVE_UP_SLOWER
        self.assertLessEqual(2 * given_up, lab07.MIN_EXHAUSTIVE_OVER_CDP)
        with open(os.path.join(paths.KIT_ROOT, "handouts", "figures", "data", "thresholds.json")) as f:
            measured = json.load(f)["lab07"]["timing"]
        correct = [r for side in ("solution", "one-thread-launches", "created-streams")
                   for r in measured[side]["uniform"]["exhaustive_over_cdp"]]
        self.assertGreaterEqual(min(correct), 2 * given_up)

    def test_constructed_documents_have_the_contracts_keys(self):
        self.assertIsNone(lab07.HARNESS.document_problem(RECORDED))
        for p in lab07.make_cases(random.Random(3)):
            doc = good_doc(p, TIMING.get(p.get("timing")))
            self.assertIsNone(lab07.HARNESS.document_problem(doc), p)
            for section in ("params", "rule", "rects", "image", "cdp_log"):
                self.assertEqual(set(doc[section]), set(RECORDED[section]) | set(PREDATES.get(section, ())),
                                 section)


class Lab07RuntimeTest(unittest.TestCase):
    def setUp(self):
        self.cases = lab07.make_cases(random.Random(7))

    def ctx(self, mutate=None, timing=TIMING):
        runs = []
        for p in self.cases:
            d = good_doc(p, timing.get(p.get("timing")) if timing else None)
            if mutate:
                mutate(p, d)
            runs.append((p, d))
        return FakeContext(runs)

    def runtime_checks(self):
        return [c for c in lab07.LAB.own_checks if c.kind == chk.RUNTIME]

    def failing(self, ctx):
        return {c.name for c in self.runtime_checks() if c.func(ctx).status != chk.PASSED}

    def test_reference_documents_pass(self):
        self.assertEqual(self.failing(self.ctx()), set())
        # every runtime check of the rubric has its tests below: a new one needs its own
        self.assertEqual({c.name for c in self.runtime_checks()}, {
            "pending-launch limit covers the subdivision", "no launch failed", "every launch checked",
            "subdivision follows the rule", "image follows the rule", "image close to the exhaustive one",
            "beats the exhaustive kernel where the area is uniform"})

    def test_the_recorded_document_passes(self):
        ctx = FakeContext([(dict(lab07.MEMCHECK_CASE, seed=0), current(RECORDED))])
        for check in self.runtime_checks():
            if not check.timing:
                self.assertEqual(check.func(ctx).status, chk.PASSED, check.name)

    # ---- pending-launch limit ----

    def test_pending_limit_exactly_the_child_grids_passes(self):
        def exactly(p, d):
            d["pending_launch_limit"] = d["rule"]["child_grids"]
        self.assertEqual(lab07.check_pending_limit(self.ctx(exactly)).status, chk.PASSED)

    def test_pending_limit_one_short_fails(self):
        def one_short(p, d):
            d["pending_launch_limit"] = max(lab07.DEFAULT_PENDING_LIMIT, d["rule"]["child_grids"] - 1)
        outcome = lab07.check_pending_limit(self.ctx(one_short))
        self.assertEqual(outcome.status, chk.FAILED)
        past = [p for p in self.cases if case_bound(p) > lab07.DEFAULT_PENDING_LIMIT]
        self.assertIn("%d of %d cases wrong" % (len(past), len(self.cases)), outcome.message)
        self.assertIn("expected a pending-launch limit of at least 4368 (the most child grids the subdivision of a "
                      "1024 x 1024 image can launch, max depth 5, min side 16; the rule launched 4368 on this view); "
                      "after prepare_mandelbrot it was 4367\n", outcome.message)
        self.assertNotIn("4367 (the default", outcome.message)

    def test_pending_limit_never_raised_fails(self):
        def default_limit(p, d):
            d["pending_launch_limit"] = lab07.DEFAULT_PENDING_LIMIT
        outcome = lab07.check_pending_limit(self.ctx(default_limit))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("at least 4368 (the most child grids the subdivision of a 1024 x 1024 image can launch, max "
                      "depth 5, min side 16; the rule launched 4368 on this view); after prepare_mandelbrot it was "
                      "2048 (the default: never raised)", outcome.message)
        self.assertIn("at least 69904", outcome.message)

    def test_pending_limit_for_what_the_rule_launched_fails_below_the_worst_case(self):
        # limit-last-level-plus-default: the rule launched 26,000 child grids on the 4096 x 4096 view, and a
        # limit of the last level plus the default (67,584) covers them, not the worst case (69,904)
        def fewer_launched(p, d):
            if p["width"] == p["height"] == 4096:
                d["rule"]["child_grids"] = 26000
                d["pending_launch_limit"] = 65536 + lab07.DEFAULT_PENDING_LIMIT
        outcome = lab07.check_pending_limit(self.ctx(fewer_launched))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of %d cases wrong" % len(self.cases), outcome.message)
        self.assertIn("expected a pending-launch limit of at least 69904 (the most child grids the subdivision of a "
                      "4096 x 4096 image can launch, max depth 5, min side 16; the rule launched 26000 on this view); "
                      "after prepare_mandelbrot it was 67584", outcome.message)

    def test_the_worst_case_is_the_bound_for_every_drawn_case(self):
        for seed in range(20):
            for p in lab07.make_cases(random.Random(seed)):
                self.assertEqual(lab07.most_child_grids(p["width"], p["height"], p["max_depth"], p["min_side"]),
                                 case_bound(p), p)

    # ---- launches ----

    def test_failed_launches_fail(self):
        def pool_full(p, d):
            if is_1024(p):
                d["cdp_log"].update(failed=2320, first_error="cudaErrorLaunchPendingCountExceeded",
                                       first_error_line=89)
        outcome = lab07.check_no_launch_failed(self.ctx(pool_full))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of %d cases wrong" % len(self.cases), outcome.message)
        self.assertIn("2320 device-side launch(es) failed (first: cudaErrorLaunchPendingCountExceeded, at line 89 "
                      "of your file): those child grids never ran", outcome.message)

    def test_a_run_that_launches_nothing_passes_neither_launch_check(self):
        # the starter: only the host's grid runs, and no launch is made or checked
        def launches_nothing(p, d):
            if is_1024(p):
                d["grids_ran"] = 1
                d["cdp_log"].update(checked=0, failed=0)
        for check in (lab07.check_no_launch_failed, lab07.check_every_launch_checked):
            outcome = check(self.ctx(launches_nothing))
            self.assertEqual(outcome.status, chk.FAILED, check.__name__)
            self.assertIn("child grids on this image, and your run launched none: there was no launch to look at",
                          outcome.message)

    def test_launching_nothing_where_the_rule_launches_nothing_passes(self):
        def one_grid(p, d):
            if is_1024(p):
                d["rule"]["child_grids"] = 0
                d["grids_ran"] = 1
                d["cdp_log"].update(checked=0, failed=0)
        for check in (lab07.check_no_launch_failed, lab07.check_every_launch_checked):
            self.assertEqual(check(self.ctx(one_grid)).status, chk.PASSED, check.__name__)

    def test_failed_calls_fail(self):
        def stream_failed(p, d):
            if is_1024(p):
                d["cdp_log"].update(calls_checked=4368, calls_failed=3, first_call_error="cudaErrorNotPermitted",
                                       first_call_error_line=77)
        outcome = lab07.check_no_launch_failed(self.ctx(stream_failed))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("3 device runtime call(s) failed (first: cudaErrorNotPermitted, at line 77 of your file)",
                      outcome.message)

    def test_every_launch_checked_counts_failed_launches(self):
        def some_failed(p, d):  # a failed launch runs no grid, and its check is still counted
            if is_1024(p):
                d["cdp_log"]["failed"] = 5
                d["grids_ran"] -= 5
        ctx = self.ctx(some_failed)
        self.assertEqual(lab07.check_every_launch_checked(ctx).status, chk.PASSED)
        self.assertEqual(lab07.check_no_launch_failed(ctx).status, chk.FAILED)

    def test_a_launch_left_unchecked_fails(self):
        def unchecked(p, d):
            if is_1024(p):
                d["cdp_log"]["checked"] -= 1
        outcome = lab07.check_every_launch_checked(self.ctx(unchecked))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected one KIT_CHECK_LAUNCH() right after every device launch: 4368 child grid(s) ran and 0 "
                      "launch(es) failed, so 4368 checks; the launch log counted 4367", outcome.message)

    def test_a_launch_checked_twice_fails(self):
        def twice(p, d):
            if is_1024(p):
                d["cdp_log"]["checked"] += 1
        outcome = lab07.check_every_launch_checked(self.ctx(twice))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("so 4368 checks; the launch log counted 4369", outcome.message)

        def failed_and_unchecked(p, d):
            if is_1024(p):
                d["cdp_log"].update(failed=5, checked=d["cdp_log"]["checked"] - 5)
                d["grids_ran"] -= 5
        outcome = lab07.check_every_launch_checked(self.ctx(failed_and_unchecked))
        self.assertIn("4363 child grid(s) ran and 5 launch(es) failed, so 4368 checks; the launch log counted 4363",
                      outcome.message)

    # ---- subdivision ----

    def test_missing_rectangles_fail(self):
        def never_splits(p, d):
            r = d["rects"]
            r.update(reported=1, kept=1, grids_per_depth=[1], missing=d["rule"]["rects"] - 1,
                     first_missing=[0, 0, d["params"]["top_side"] // SUBDIV, 1] if d["rule"]["rects"] > 1 else [])
        outcome = lab07.check_subdivision(self.ctx(never_splits))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected the rule's 4369 rectangles, grids per depth [1, 16, 256, 4096]; yours: 1 reported, "
                      "grids per depth [1] (4368 of the rule's missing, first (x 0, y 0, side 256, depth 1); 0 not "
                      "the rule's, first -)", outcome.message)
        no_children = [p for p in self.cases if case_bound(p) == 0]
        self.assertIn("%d of %d cases wrong" % (len(self.cases) - len(no_children), len(self.cases)),
                      outcome.message)

    def test_extra_rectangles_fail(self):
        def launched_twice(p, d):
            if is_1024(p):
                d["rects"].update(reported=4370, kept=4370, grids_per_depth=[1, 17, 256, 4096], extra=1,
                                  first_extra=[768, 0, 256, 1])
        outcome = lab07.check_subdivision(self.ctx(launched_twice))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("yours: 4370 reported, grids per depth [1, 17, 256, 4096] (0 of the rule's missing, first -; "
                      "1 not the rule's, first (x 768, y 0, side 256, depth 1))", outcome.message)

    def test_a_rectangle_past_the_cutoff_fails(self):
        def ignores_cutoff(p, d):  # a split at min_side: the first rectangle past it, with its own
            if is_1024(p):
                d["rects"].update(reported=4369 + 65536, kept=4369 + 65536, extra=65536,
                                  grids_per_depth=[1, 16, 256, 4096, 65536], first_extra=[0, 0, 4, 4])
        outcome = lab07.check_subdivision(self.ctx(ignores_cutoff))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("grids per depth [1, 16, 256, 4096, 65536]", outcome.message)
        self.assertIn("65536 not the rule's, first (x 0, y 0, side 4, depth 4)", outcome.message)

    def test_reported_unlike_the_rules_count_fails(self):
        def more_reported(p, d):  # more reported than the log kept: the diff saw only those kept
            if is_1024(p):
                d["rects"]["reported"] += 1
        outcome = lab07.check_subdivision(self.ctx(more_reported))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("yours: 4370 reported", outcome.message)

    def test_grids_not_of_one_block_of_ms_threads_fail(self):
        def wide_blocks(p, d):  # <<<1, 1024>>>: the rectangles right, the grids not
            if is_1024(p):
                d["rects"].update(misshapen=4369, first_misshapen=[1, 1024])
        ctx = self.ctx(wide_blocks)
        outcome = lab07.check_subdivision(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of %d cases wrong" % len(self.cases), outcome.message)
        self.assertIn("expected every grid to be one block of 256 threads (MS_THREADS); 4369 were not (the first: 1 "
                      "block(s) of 1024 threads)", outcome.message)
        self.assertEqual(self.failing(ctx), {"subdivision follows the rule"})

    def test_a_grid_that_reports_more_than_once_fails(self):
        # reports-children-inline: a parent reports its last level's squares itself, without launching them:
        # the rectangles and their count are the rule's, the grid ids are not distinct
        def reported_by_parents(p, d):
            if is_1024(p):
                d["rects"]["same_grid"] = 4096
                d["grids_ran"] -= 4096
        ctx = self.ctx(reported_by_parents)
        outcome = lab07.check_subdivision(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of %d cases wrong" % len(self.cases), outcome.message)
        self.assertIn("expected one report_rect call per grid (its rectangle, from its first thread); 4096 reports "
                      "came from grids that had already reported (the kit tells grids apart by their %gridid)",
                      outcome.message)

    def test_a_document_without_grid_ids_is_read_as_before(self):
        def recorded_before(p, d):
            del d["rects"]["same_grid"]
        self.assertEqual(lab07.check_subdivision(self.ctx(recorded_before)).status, chk.PASSED)

    # ---- the image ----

    def test_image_unlike_the_rule_fails(self):
        def unwritten(p, d):
            if is_1024(p):
                d["image"].update(unlike_rule=37, unlike_rule_computed=5, unwritten=30,
                                  first_unlike_rule=[17, 3, -1, 24], unlike_exhaustive=37)
        outcome = lab07.check_image_follows_rule(self.ctx(unwritten))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("37 of 1048576 pixels differ from the rule's image (5 of them where the rule computes each "
                      "pixel, 30 never written); first: pixel (17, 3) is -1, the rule gives 24", outcome.message)
        self.assertEqual(lab07.check_close_to_exhaustive(self.ctx(unwritten)).status, chk.PASSED)

    def test_close_to_exhaustive_at_the_allowance(self):
        def allowed(d):  # MAX_UNLIKE_EXHAUSTIVE of the pixels, or what the rule itself misses
            return max(int(lab07.MAX_UNLIKE_EXHAUSTIVE * d["image"]["pixels"]), d["rule"]["unlike_exhaustive"])

        def exactly(p, d):
            d["image"]["unlike_exhaustive"] = allowed(d)
        self.assertEqual(lab07.check_close_to_exhaustive(self.ctx(exactly)).status, chk.PASSED)

        def one_more(p, d):
            d["image"]["unlike_exhaustive"] = allowed(d) + (1 if is_1024(p) else 0)
        outcome = lab07.check_close_to_exhaustive(self.ctx(one_more))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of %d cases wrong" % len(self.cases), outcome.message)
        self.assertIn("105 of 1048576 pixels (0.010%) differ from the exhaustive image; at most 104 may (0.010%, "
                      "or what the rule itself misses on this view: 0)", outcome.message)

    def test_a_rule_that_misses_more_raises_the_allowance(self):
        def rule_misses(p, d):
            if is_1024(p):
                d["rule"]["unlike_exhaustive"] = 1500  # past MAX_UNLIKE_EXHAUSTIVE of 1048576
                d["image"]["unlike_exhaustive"] = 1500
        self.assertEqual(lab07.check_close_to_exhaustive(self.ctx(rule_misses)).status, chk.PASSED)

        def one_more(p, d):
            rule_misses(p, d)
            if is_1024(p):
                d["image"]["unlike_exhaustive"] = 1501
        outcome = lab07.check_close_to_exhaustive(self.ctx(one_more))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1501 of 1048576 pixels (0.143%) differ from the exhaustive image; at most 1500 may (0.010%, "
                      "or what the rule itself misses on this view: 1500)", outcome.message)

    def test_a_single_pixel_image_allows_no_difference(self):
        def one_pixel_wrong(p, d):
            if d["image"]["pixels"] == 1:
                d["image"]["unlike_exhaustive"] = 1
        outcome = lab07.check_close_to_exhaustive(self.ctx(one_pixel_wrong))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of 1 pixels (100.000%) differ from the exhaustive image; at most 0 may", outcome.message)

    # ---- timing ----

    def test_timing_passes_and_says_how_to_time_the_filaments_case(self):
        def three_quarters_filled(p, d):
            if p.get("timing") == "uniform":
                d["rule"]["filled_pixels"] = d["image"]["pixels"] * 3 // 4
        outcome = lab07.check_beats_exhaustive(self.ctx(three_quarters_filled))
        self.assertEqual(outcome.status, chk.PASSED)
        self.assertIn("timing=uniform", outcome.message)
        self.assertIn("75%% of the pixels filled by the rule; the kit's exhaustive kernel 30.000 ms, yours 6.000 ms: "
                      "5.00x faster (at least %.2fx wanted)" % lab07.MIN_EXHAUSTIVE_OVER_CDP, outcome.message)
        # where filaments are everywhere: not run, the command that times it given
        self.assertIn('\nnot graded: where filaments are everywhere, little is uniform and subdividing loses; to time '
                      'it: make run LAB=07 ARGS="--width 4096 --height 4096 --view seahorse --zoom 14 --max-dwell 4096 '
                      '--max-depth 4 --min-side 16 --repeats %d' % lab07.TIMING_REPEATS, outcome.message)

    def test_timing_exactly_at_the_ratio_passes(self):
        ratio = lab07.MIN_EXHAUSTIVE_OVER_CDP
        timing = dict(TIMING, uniform=timed(10.0 * ratio, 10.0))
        outcome = lab07.check_beats_exhaustive(self.ctx(timing=timing))
        self.assertEqual(outcome.status, chk.PASSED, outcome.message)
        self.assertIn("%.2fx faster (at least %.2fx wanted)" % (ratio, ratio), outcome.message)

    def test_timing_below_the_ratio_fails(self):
        timing = dict(TIMING, uniform=timed(10.0 * lab07.MIN_EXHAUSTIVE_OVER_CDP - 0.1, 10.0))
        outcome = lab07.check_beats_exhaustive(self.ctx(timing=timing))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("%.2fx faster (at least %.2fx wanted)" % (lab07.MIN_EXHAUSTIVE_OVER_CDP - 0.01,
                                                               lab07.MIN_EXHAUSTIVE_OVER_CDP), outcome.message)
        self.assertIn("not graded", outcome.message)

    def test_missing_timing_fails(self):
        for timing in (None, {"filaments": timed(8.5, 25.0)}, {"uniform": timed(30.0, 0.0)}):
            outcome = lab07.check_beats_exhaustive(self.ctx(timing=timing))
            self.assertEqual(outcome.status, chk.FAILED, timing)
            self.assertIn("the uniform timing case reported no timing", outcome.message)
        # and with no uniform case at all
        ctx = FakeContext([(p, good_doc(p, TIMING.get(p.get("timing")))) for p in self.cases
                           if p.get("timing") != "uniform"])
        self.assertEqual(lab07.check_beats_exhaustive(ctx).status, chk.FAILED)

    def test_a_timed_run_that_skipped_its_work_fails(self):
        # skips-a-job-done-before: the checked run did the work, the timed runs after it returned at once
        timing = dict(TIMING, uniform=timed(30.0, 0.02, wrong_runs=8, first_unlike=8192 * 8192))
        outcome = lab07.check_beats_exhaustive(self.ctx(timing=timing))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("timing=uniform", outcome.message)
        self.assertIn("8 of your 8 timed runs (the warm-up's included) left an image unlike the rule's (the first: "
                      "67108864 pixels)", outcome.message)
        self.assertIn("a run that skipped its work (state kept from an earlier launch) does not count", outcome.message)
        # one wrong run is enough
        timing = dict(TIMING, uniform=timed(30.0, 6.0, wrong_runs=1, first_unlike=3))
        self.assertEqual(lab07.check_beats_exhaustive(self.ctx(timing=timing)).status, chk.FAILED)

    def test_timing_given_up_fails_and_says_so(self):
        # fill-computes: every pixel computed, 0.05x; the harness stopped after one timed run
        timing = dict(TIMING, uniform=timed(28.0, 551.0, timed_runs=1))
        outcome = lab07.check_beats_exhaustive(self.ctx(timing=timing))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("0.05x faster (at least %.2fx wanted)" % lab07.MIN_EXHAUSTIVE_OVER_CDP, outcome.message)
        self.assertIn("\ntiming given up after 1 timed run(s): the warm-up and each timed run took %gx the kit's "
                      "kernel or longer" % lab07.GIVE_UP_SLOWER, outcome.message)
        # every repeat made: nothing said
        outcome = lab07.check_beats_exhaustive(self.ctx(timing=dict(TIMING, uniform=timed(28.0, 551.0))))
        self.assertNotIn("given up", outcome.message)

    def test_a_subdivision_unlike_the_rule_is_not_timed_and_fails_for_that(self):
        # never-splits: the harness times no subdivision that differs from the rule, so there is no timing;
        # the verdict says why, not that the timing is missing
        def one_rectangle(p, d):
            if p.get("timing") == "uniform":
                d["rects"]["missing"] = d["rule"]["rects"] - 1
        outcome = lab07.check_beats_exhaustive(self.ctx(one_rectangle, timing={}))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("differ from the rule's, or a launch failed (the checks above say how): its time does not "
                      "count", outcome.message)

    def test_timing_without_the_runs_check_fails(self):
        timing = dict(TIMING, uniform={"exhaustive": 30.0, "cdp_student": 6.0})
        outcome = lab07.check_beats_exhaustive(self.ctx(timing=timing))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("did not say whether each timed run was checked", outcome.message)

    def test_only_the_timing_check_is_marked_timing(self):
        self.assertEqual({c.name for c in lab07.LAB.own_checks if c.timing},
                         {"beats the exhaustive kernel where the area is uniform"})


# ---- static checks on PTX ---------------------------------------------------------------------

SELF = "_Z14mariani_silver12mandel_job_tiiii"
OTHER = "_Z10fill_solid12mandel_job_tiiii"

# The PTX of the solution's mariani_silver as nvcc writes it (CUDA 13.0, sm_75), cut to one launch: thread
# 0 takes the kernel's address (CHILD), asks for a parameter buffer, launches into STREAM, then checks
# (CHECK: cudaGetLastError and the kit's record of it). CREATE: where a stream would be created.
MARIANI_PTX = """
.extern .func  (.param .b32 func_retval0) __cudaCDP2GetLastError
()
;
.extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2
(
	.param .b64 __cudaCDP2LaunchDeviceV2_param_0,
	.param .b64 __cudaCDP2LaunchDeviceV2_param_1
)
;
OTHER_KERNEL
.visible .entry _Z14mariani_silver12mandel_job_tiiii(
	.param .align 8 .b8 _Z14mariani_silver12mandel_job_tiiii_param_0[56],
	.param .u32 _Z14mariani_silver12mandel_job_tiiii_param_1,
	.param .u32 _Z14mariani_silver12mandel_job_tiiii_param_2,
	.param .u32 _Z14mariani_silver12mandel_job_tiiii_param_3,
	.param .u32 _Z14mariani_silver12mandel_job_tiiii_param_4
)
{
	.reg .pred 	%p<42>;
	.reg .b32 	%r<143>;
	.reg .b64 	%rd<17>;

	ld.param.u32 	%r64, [_Z14mariani_silver12mandel_job_tiiii_param_3];
	{ // callseq 0, 0
	.reg .b32 temp_param_reg;
	.param .b32 param0;
	st.param.b32 	[param0+0], %r62;
	call.uni 
	_Z11report_rectiiii, 
	(
	param0
	);
	} // callseq 0
	mov.u32 	%r139, %tid.x;
	setp.ne.s32 	%p2, %r139, 0;
	@%p2 bra 	$L__BB0_41;

LAUNCH
$L__BB0_41:
	ret;

}
"""
LAUNCH = """CREATE
	mov.u64 	%rd13, CHILD;
	{ // callseq 6, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd13;
	.param .align 4 .b8 param1[12];
	st.param.b32 	[param1+0], 1;
	st.param.b32 	[param1+4], 1;
	st.param.b32 	[param1+8], 1;
	.param .align 4 .b8 param2[12];
	st.param.b32 	[param2+0], 256;
	st.param.b32 	[param2+4], 1;
	st.param.b32 	[param2+8], 1;
	.param .b32 param3;
	st.param.b32 	[param3+0], 0;
	.param .b64 retval0;
	call.uni (retval0), 
	__cudaCDP2GetParameterBufferV2, 
	(
	param0, 
	param1, 
	param2, 
	param3
	);
	ld.param.b64 	%rd5, [retval0+0];
	} // callseq 6
	setp.eq.s64 	%p28, %rd5, 0;
	@%p28 bra 	$L__BB0_27;

	st.u32 	[%rd5+64], %r54;
	{ // callseq 7, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd5;
	.param .b64 param1;
	st.param.b64 	[param1+0], STREAM;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2LaunchDeviceV2, 
	(
	param0, 
	param1
	);
	ld.param.b32 	%r114, [retval0+0];
	} // callseq 7

$L__BB0_27:
CHECK"""
CHECK_LAUNCH = """	{ // callseq 8, 0
	.reg .b32 temp_param_reg;
	.param .b32 param0;
	st.param.b32 	[param0+0], 89;
	.param .b32 retval0;
	call.uni (retval0), 
	_Z16kit_check_launchi, 
	(
	param0
	);
	ld.param.b32 	%r115, [retval0+0];
	} // callseq 8
"""
# cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) in the launching thread; the stream is then read
# back from the thread's local memory into the register the launch takes.
CREATE_STREAM = """	{ // callseq 5, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd14;
	.param .b32 param1;
	st.param.b32 	[param1+0], 1;
	.param .b32 retval0;
	call.uni (retval0), 
	__cudaCDP2StreamCreateWithFlags, 
	(
	param0, 
	param1
	);
	ld.param.b32 	%r113, [retval0+0];
	} // callseq 5
	ld.local.u64 	%rd6, [%rd1];
"""
# Another kernel of the student's file, the one a wrong submission launches instead of mariani_silver.
FILL_KERNEL = """.visible .entry _Z10fill_solid12mandel_job_tiiii(
	.param .align 8 .b8 _Z10fill_solid12mandel_job_tiiii_param_0[56],
	.param .u32 _Z10fill_solid12mandel_job_tiiii_param_1
)
{
	ret;

}
"""
# A parent that waits for its child: nvcc -rdc=true -arch=sm_80 -DCUDA_FORCE_CDP1_IF_SUPPORTED (CUDA 13.0)
# of a kernel that calls cudaDeviceSynchronize() after its launch: the legacy model's names, no prefix.
CDP1_PTX = """
.extern .func  (.param .b32 func_retval0) cudaLaunchDeviceV2
(
	.param .b64 cudaLaunchDeviceV2_param_0,
	.param .b64 cudaLaunchDeviceV2_param_1
)
;
.extern .func  (.param .b32 func_retval0) cudaDeviceSynchronize
()
;
.visible .entry _Z14mariani_silver12mandel_job_tiiii(
	.param .align 8 .b8 _Z14mariani_silver12mandel_job_tiiii_param_0[56]
)
{
	mov.u64 	%rd3, _Z14mariani_silver12mandel_job_tiiii;
	{ // callseq 1, 0
	.reg .b32 temp_param_reg;
	.param .b64 param0;
	st.param.b64 	[param0+0], %rd1;
	.param .b64 param1;
	st.param.b64 	[param1+0], 0;
	.param .b32 retval0;
	call.uni (retval0), 
	cudaLaunchDeviceV2, 
	(
	param0, 
	param1
	);
	ld.param.b32 	%r1, [retval0+0];
	} // callseq 1

$L__BB1_2:
	{ // callseq 2, 0
	.reg .b32 temp_param_reg;
	.param .b32 retval0;
	call.uni (retval0), 
	cudaDeviceSynchronize, 
	(
	);
	ld.param.b32 	%r2, [retval0+0];
	} // callseq 2
	ret;

}
"""


def mariani_ptx(stream="4", create=False, child=SELF, check=True, launch=True):
    """mariani_silver's PTX: its launch into stream (a constant, or a register), after a stream created
    where create, of child (a kernel's mangled name), checked where check; without a launch (the
    starter) where not launch."""
    text = MARIANI_PTX.replace("LAUNCH\n", LAUNCH if launch else "")
    text = text.replace("OTHER_KERNEL\n", FILL_KERNEL if child == OTHER else "")
    text = text.replace("CREATE\n", CREATE_STREAM if create else "").replace("CHILD", child)
    return text.replace("STREAM", stream).replace("CHECK", CHECK_LAUNCH if check else "")


def static(check, text):
    return check(FakeContext([], ptx={"mandelbrot.cu": text}))


class Lab07StaticTest(unittest.TestCase):
    def test_recursive_launch_fire_and_forget_passes(self):
        for check in (lab07.check_recursive_launch_and_streams, lab07.check_no_device_synchronize,
                      lab07.check_launches_checked_in_order):
            self.assertEqual(static(check, mariani_ptx()).status, chk.PASSED, check.__name__)

    def test_launch_into_a_created_stream_passes(self):
        outcome = static(lab07.check_recursive_launch_and_streams, mariani_ptx(stream="%rd6", create=True))
        self.assertEqual(outcome.status, chk.PASSED, outcome.message)

    def test_launch_into_a_stream_never_created_fails(self):
        outcome = static(lab07.check_recursive_launch_and_streams, mariani_ptx(stream="%rd6"))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("actual:   a launch into a stream variable, but no cudaStreamCreateWithFlags in mariani_silver "
                      "in the PTX of mariani_silver", outcome.message)

    def test_launch_into_the_null_or_tail_launch_stream_fails(self):
        for stream, what in (("0", "the NULL stream (0)"), ("3", "cudaStreamTailLaunch")):
            for create in (False, True):
                outcome = static(lab07.check_recursive_launch_and_streams, mariani_ptx(stream=stream, create=create))
                self.assertEqual(outcome.status, chk.FAILED, (stream, create))
                self.assertIn("expected: mariani_silver launches mariani_silver for each square, into "
                              "cudaStreamFireAndForget or a stream its thread creates\n"
                              "actual:   a device launch into %s in the PTX of mariani_silver" % what, outcome.message)

    def test_a_stream_operand_the_grader_cannot_read_fails(self):
        text = mariani_ptx().replace("[param1+0], 4;", "[param1+8], 4;")
        outcome = static(lab07.check_recursive_launch_and_streams, text)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("could not read", outcome.message)

    def test_stream_operand_without_an_offset_is_read(self):
        # CUDA 13.0 writes "[param1]" for sm_100 and sm_120
        for stream, status in (("4", chk.PASSED), ("0", chk.FAILED)):
            text = mariani_ptx(stream=stream).replace("[param1+0], %s;" % stream, "[param1], %s;" % stream)
            self.assertEqual(static(lab07.check_recursive_launch_and_streams, text).status, status, stream)

    def test_launch_of_another_kernel_fails(self):
        outcome = static(lab07.check_recursive_launch_and_streams, mariani_ptx(child=OTHER))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("actual:   a device launch, but not of mariani_silver itself in the PTX", outcome.message)

    def test_no_launch_fails(self):
        text = mariani_ptx(launch=False)
        outcome = static(lab07.check_recursive_launch_and_streams, text)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("actual:   no device-side launch in the PTX of mariani_silver", outcome.message)
        outcome = static(lab07.check_launches_checked_in_order, text)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("actual:   no device launch in the PTX", outcome.message)
        # no mariani_silver at all
        self.assertEqual(static(lab07.check_recursive_launch_and_streams, "").status, chk.FAILED)
        self.assertEqual(static(lab07.check_launches_checked_in_order, "").status, chk.FAILED)

    def test_the_starter_fails_the_checks_it_must(self):
        ctx = FakeContext([], ptx={"mandelbrot.cu": mariani_ptx(launch=False)})
        for name in lab07.LAB.starter_must_fail:
            self.assertEqual(lab07.LAB.check_named(name).func(ctx).status, chk.FAILED, name)

    def test_device_synchronize_fails(self):
        outcome = static(lab07.check_no_device_synchronize, CDP1_PTX)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected: no device-side cudaDeviceSynchronize", outcome.message)
        self.assertIn("actual:   your PTX calls cudaDeviceSynchronize (the legacy model, which sm_90 and later cannot "
                      "load)", outcome.message)
        # in a second file of the submission too
        ctx = FakeContext([], ptx={"mandelbrot.cu": mariani_ptx(), "helpers.cu": CDP1_PTX})
        self.assertEqual(lab07.check_no_device_synchronize(ctx).status, chk.FAILED)

    def test_a_declaration_of_device_synchronize_is_no_call(self):
        declared_only = re.sub(r"\t\{ // callseq 2, 0.*?\} // callseq 2\n", "", CDP1_PTX, flags=re.S)
        self.assertIn(".func  (.param .b32 func_retval0) cudaDeviceSynchronize", declared_only)
        self.assertEqual(static(lab07.check_no_device_synchronize, declared_only).status, chk.PASSED)

    def test_an_unchecked_launch_fails(self):
        outcome = static(lab07.check_launches_checked_in_order, mariani_ptx(check=False))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("actual:   1 of 1 launch(es) with a path on which no cudaGetLastError() follows",
                      outcome.message)

    def test_a_check_before_the_launch_fails(self):
        text = mariani_ptx(check=False).replace("\tmov.u64 \t%rd13,", CHECK_LAUNCH + "\tmov.u64 \t%rd13,")
        self.assertEqual(text.count("_Z16kit_check_launchi, "), 1)
        outcome = static(lab07.check_launches_checked_in_order, text)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("1 of 1 launch(es) with a path on which no cudaGetLastError() follows", outcome.message)


NVCC = shutil.which("nvcc")


@unittest.skipUnless(NVCC, "nvcc is not installed")
class Lab07RealPtxTest(unittest.TestCase):
    """The static checks on nvcc's own PTX of the solution and the starter: the constructed PTX above
    stands for what the compiler writes."""

    def ptx(self, folder, *source):
        """The PTX of the kit file at source, as the kit builds it (nvcc -ptx -rdc=true)."""
        out = os.path.join(folder, "%s.ptx" % source[0].replace(os.sep, "_"))
        subprocess.run([NVCC, "-ptx", "-rdc=true", "-arch=sm_75", "-I",
                        os.path.join(paths.KIT_ROOT, "common", "include"), "-I", HARNESS_DIR,
                        os.path.join(paths.KIT_ROOT, *source), "-o", out],
                       check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        return _read(out)

    def test_solution_passes_and_starter_fails(self):
        with tempfile.TemporaryDirectory() as folder:
            solution = self.ptx(folder, "solutions", "07-mandelbrot", "mandelbrot.cu")
            starter = self.ptx(folder, starters.pristine("07-mandelbrot"), "mandelbrot.cu")
        static_checks = [c for c in lab07.LAB.own_checks if c.kind == chk.STATIC]
        self.assertEqual(len(static_checks), 3)
        for check in static_checks:
            self.assertEqual(static(check.func, solution).status, chk.PASSED, check.name)
            expected = chk.FAILED if check.name in lab07.LAB.starter_must_fail else chk.PASSED
            self.assertEqual(static(check.func, starter).status, expected, check.name)
        # the constructed launch is the solution's: its stream operand, its address taken, its check
        self.assertIn("st.param.b64 \t[param1+0], 4;", solution)
        self.assertRegex(solution, r"mov\.u64 \t%rd\d+, " + SELF + ";")


if __name__ == "__main__":
    unittest.main()
