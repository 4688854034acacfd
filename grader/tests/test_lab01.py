"""Lab 01's grading rules, on constructed harness documents (no GPU needed)."""
import random
import unittest

from gradelib import checks as chk
from gradelib import process, runs
from rubrics import lab01
from tests.fakes import FakeContext


def simulate_flat_kernel(k, m, n):
    """The flat kernel thread by thread, independent of the formula: K blocks of 32*M threads;
    leaders (tid % 32 == 0) add n; after the barrier, leaders other than thread 0 add x = 5."""
    foo = 0
    for _block in range(k):
        x = None
        for tid in range(32 * m):
            if tid == 0:
                x = 5
            if tid % 32 == 0:
                foo += n
        for tid in range(32 * m):
            if tid % 32 == 0 and tid != 0:
                foo += x
    return foo


def good_doc(p):
    return {
        "reference_foo": lab01.expected_foo(p["K"], p["M"], p["N"]),
        "student_foo": lab01.expected_foo(p["K"], p["M"], p["N"]),
        "child_grids": p["K"],
        "child_shapes": [{"grid": [1, 1, 1], "block": [p["M"], 1, 1], "count": p["K"]}],
        "child_grids_other_shapes": 0,
        "launch_log": {"checked": p["K"], "failed": 0, "first_error": "", "first_error_line": 0},
        "work": {"in_child_grids": p["K"] * p["M"] * p["N"], "elsewhere": 0},
    }


class FakeResult:
    verdict, returncode, ok, output = process.OK, 0, True, ""




class Lab01Test(unittest.TestCase):
    def setUp(self):
        self.cases = lab01.make_cases(random.Random(7))

    def test_formula_matches_a_thread_by_thread_simulation(self):
        for k, m, n in [(1, 1, 1), (2, 32, 128), (3, 7, 11), (5, 32, 1)]:
            self.assertEqual(lab01.expected_foo(k, m, n), simulate_flat_kernel(k, m, n))
        self.assertEqual(lab01.expected_foo(2, 32, 128), 8502)

    def test_cases_cover_the_edges_and_are_seeded(self):
        ms = {c["M"] for c in self.cases}
        self.assertTrue({1, 32} <= ms)
        self.assertIn(1, {c["K"] for c in self.cases})
        self.assertTrue(any(c["N"] >= lab01.LARGE_N for c in self.cases))
        self.assertIn(lab01.MAX_N, {c["N"] for c in self.cases})  # the harness's largest N
        self.assertIn(31, ms)
        self.assertGreaterEqual(len(self.cases), 7)
        self.assertEqual(self.cases, lab01.make_cases(random.Random(7)))
        self.assertNotEqual(self.cases, lab01.make_cases(random.Random(8)))
        for c in self.cases:
            self.assertTrue(1 <= c["K"] <= lab01.MAX_K and 1 <= c["M"] <= 32)

    def run_check(self, func, mutate):
        docs = []
        for p in self.cases:
            d = good_doc(p)
            mutate(p, d)
            docs.append((p, d))
        return func(FakeContext(docs))

    def test_good_documents_pass_every_runtime_check(self):
        for func in (lab01.check_counter, lab01.check_grid_count, lab01.check_grid_shape):
            self.assertEqual(self.run_check(func, lambda p, d: None).status, chk.PASSED)

    def test_hard_coded_total_fails_the_counter(self):
        def hard_code(p, d):
            d["student_foo"] = 8502
        outcome = self.run_check(lab01.check_counter, hard_code)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected foo", outcome.message)
        self.assertIn("got 8502", outcome.message)

    def test_one_grid_per_leader_fails_the_grid_count(self):
        def per_leader(p, d):
            d["child_grids"] = p["K"] * p["M"]
            d["child_shapes"] = [{"grid": [1, 1, 1], "block": [1, 1, 1], "count": p["K"] * p["M"]}]
        outcome = self.run_check(lab01.check_grid_count, per_leader)
        self.assertEqual(outcome.status, chk.FAILED)
        # M=1 cases are indistinguishable by count: partial credit for those
        self.assertGreater(outcome.fraction, 0.0)
        self.assertEqual(self.run_check(lab01.check_grid_shape, per_leader).status, chk.FAILED)

    def test_swapped_launch_arguments_fail_the_shape(self):
        def swapped(p, d):
            d["child_shapes"] = [{"grid": [p["M"], 1, 1], "block": [1, 1, 1], "count": p["K"]}]
        outcome = self.run_check(lab01.check_grid_shape, swapped)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("grid(1,1,1) block(", outcome.message)

    def test_empty_children_and_the_work_in_the_parent_fail_the_grid_count(self):
        """K child grids of the right shape with n = 0, while diverge_cta's leaders call entry_work: foo,
        the grid count and the shapes are right; the kit's count of where the work ran is not."""
        def empty_children(p, d):
            d["work"] = {"in_child_grids": 0, "elsewhere": p["K"] * p["M"] * p["N"]}
        outcome = self.run_check(lab01.check_grid_count, empty_children)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertEqual(outcome.fraction, 0.0)
        self.assertIn("entry_work called from diverge_cta did", outcome.message)
        self.assertEqual(self.run_check(lab01.check_counter, empty_children).status, chk.PASSED)
        # Documents recorded before the kit counted the work: the grid count alone.
        self.assertEqual(self.run_check(lab01.check_grid_count, lambda p, d: d.pop("work")).status, chk.PASSED)

    def test_no_child_grids(self):
        def none(p, d):
            d["child_grids"], d["child_shapes"] = 0, []
        self.assertEqual(self.run_check(lab01.check_grid_shape, none).status, chk.FAILED)
        self.assertEqual(self.run_check(lab01.check_grid_count, none).fraction, 0.0)

    def fault_run(self, checked, failed, grids, foo_shift=0):
        p = [c for c in self.cases if c.get("fault")][0]
        d = good_doc(p)
        d.update(child_grids=grids, pending_launch_limit=p["pending_limit"],
                 student_foo=grids * p["N"] * p["M"] + 5 * p["K"] * (p["M"] - 1) + foo_shift)
        d["launch_log"] = {"checked": checked, "failed": failed, "first_error": "", "first_error_line": 0}
        return FakeContext([(p, d)])

    def test_fault_case_every_failure_seen(self):
        k = lab01.FAULT_K
        self.assertEqual(lab01.check_failures_seen(self.fault_run(k, k - 40, 40)).status, chk.PASSED)
        # The check placed before the launch: every launch "checked", none seen to fail.
        outcome = lab01.check_failures_seen(self.fault_run(k, 0, 40))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("40 child grid(s) ran and 0 launch(es) failed", outcome.message)
        # No check at all.
        self.assertEqual(lab01.check_failures_seen(self.fault_run(0, 0, 40)).status, chk.FAILED)
        # A block whose launch failed did the work itself.
        outcome = lab01.check_failures_seen(self.fault_run(k, k - 40, 40, foo_shift=7))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("the failed blocks' work lost", outcome.message)
        # A fallback that does a failed block's work in the parent, once, is right too.
        p = self.fault_run(k, k - 40, 40).runs[0].params
        fallback = (k - 40) * p["N"] * p["M"]
        self.assertEqual(lab01.check_failures_seen(self.fault_run(k, k - 40, 40, foo_shift=fallback)).status,
                         chk.PASSED)

    def test_fault_case_must_fail_launches(self):
        """A launch retried until it fits, its failures cleared by a bare cudaGetLastError(): every grid
        ran and every check saw success, in a case whose pool cannot hold its launches."""
        k = lab01.FAULT_K
        outcome = lab01.check_failures_seen(self.fault_run(k, 0, k))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected failed launches", outcome.message)
        self.assertIn("pending-launch pool of %d" % lab01.FAULT_PENDING_LIMIT, outcome.message)
        # Retried, with every failure recorded (KIT_CHECK_LAUNCH() in the loop): seen, and right.
        self.assertEqual(lab01.check_failures_seen(self.fault_run(k + 900, 900, k)).status, chk.PASSED)

    def test_fault_case_is_left_out_of_the_exact_counts(self):
        ctx = self.fault_run(lab01.FAULT_K, lab01.FAULT_K - 40, 40)
        self.assertEqual(lab01.check_counter(ctx).message, "0 cases")
        self.assertEqual(lab01.check_grid_count(ctx).status, chk.PASSED)
        self.assertIsNone(runs.diagnose(ctx.runs[0].params, FakeResult(), ctx.runs[0].doc, lab_problem=lab01.reference_problem))

    def test_reference_mismatch_blames_the_machine(self):
        p = {"K": 2, "M": 32, "N": 128}
        d = good_doc(p)
        self.assertIsNone(lab01.reference_problem(p, d))
        d["reference_foo"] = 1
        self.assertIn("not your code", lab01.reference_problem(p, d))


if __name__ == "__main__":
    unittest.main()


class RecordedDocumentsTest(unittest.TestCase):
    """Lab 01's checks on harness documents recorded on an H200 (grader/tests/data/recorded/)."""

    PARAMS = {"K": 5, "M": 3, "N": 7}
    SEEN = "failed launches seen by the launching thread"
    EXPECTED_FAILURES = {
        "solution": set(),
        "unchecked-launch": {SEEN},  # no check at all: 5 grids ran, 0 launches checked
        "check-before-launch": set(),  # no launch failed at these sizes: the fault case and the PTX catch it
        "return-before-barrier": set(),  # right numbers: only the PTX shows it
        "no-device-launch": {"one child grid per block", "child grid shape"},
        "grid-per-leader": {"one child grid per block", "child grid shape"},
        "two-grids-per-block": {"one child grid per block"},
        "blocks-not-threads": {"child grid shape"},
        "hard-coded-total": {"counter value"},
    }
    CHECKS = {"counter value": lab01.check_counter, "one child grid per block": lab01.check_grid_count,
              "child grid shape": lab01.check_grid_shape, SEEN: lab01.check_failures_seen}

    def test_each_recorded_submission_fails_exactly_its_checks(self):
        import json
        import os
        data = os.path.join(os.path.dirname(__file__), "data", "recorded")
        for case, expected in self.EXPECTED_FAILURES.items():
            with open(os.path.join(data, "lab01-%s.json" % case)) as f:
                doc = json.load(f)
            self.assertEqual(doc["params"], dict(self.PARAMS, child_spin_us=0))
            self.assertIsNone(lab01.reference_problem(self.PARAMS, doc), case)
            ctx = FakeContext([(self.PARAMS, doc)])
            failed = {name for name, func in self.CHECKS.items() if func(ctx).status == chk.FAILED}
            self.assertEqual(failed, expected, case)
