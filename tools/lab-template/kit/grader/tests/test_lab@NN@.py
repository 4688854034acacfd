"""Lab @NN@'s grading rules, on constructed harness documents (no GPU needed)."""
import random
import unittest

from gradelib import checks as chk
from rubrics import lab@NN@ as lab
from tests.fakes import FakeContext


def written(n):
    """out as a right solution leaves it, element by element."""
    return [lab.expected_value(i) for i in range(n)]


def values_of(out, unwritten_value=-1):
    """The harness's "values" summary of an array (its sums modulo 2^64, the elements never written)."""
    missing = [i for i, v in enumerate(out) if v == unwritten_value]
    return {"sum": sum(out) % lab.SUM_MODULUS,
            "weighted": sum(i * v for i, v in enumerate(out)) % lab.SUM_MODULUS,
            "unwritten": len(missing), "first_unwritten": missing[0] if missing else -1}


def good_doc(p):
    grids = lab.blocks_of(p)
    return {"values": values_of(written(p["n"])), "child_grids": grids, "child_writes": p["n"],
            "launch_log": {"checked": grids, "failed": 0, "first_error": "", "first_error_line": 0}}


class Lab@NN@Test(unittest.TestCase):
    def setUp(self):
        self.cases = lab.make_cases(random.Random(7))

    def run_check(self, mutate):
        docs = []
        for p in self.cases:
            d = good_doc(p)
            mutate(p, d)
            docs.append((p, d))
        return lab.check_values(FakeContext(docs))

    def test_sums_match_the_elements(self):
        for n in (1, 2, 7, 1000, lab.MAX_N):
            self.assertEqual((good_doc({"n": n, "threads": 32})["values"]["sum"],
                              good_doc({"n": n, "threads": 32})["values"]["weighted"]), lab.expected_sums(n))

    def test_cases_cover_the_edges_and_are_seeded(self):
        self.assertIn(1, {c["n"] for c in self.cases})
        self.assertIn(lab.MAX_N, {c["n"] for c in self.cases})
        self.assertTrue({lab.MIN_THREADS, lab.MAX_THREADS} <= {c["threads"] for c in self.cases})
        self.assertTrue(any(c["n"] % c["threads"] for c in self.cases))  # a partly filled last block
        self.assertEqual(self.cases, lab.make_cases(random.Random(7)))
        self.assertNotEqual(self.cases, lab.make_cases(random.Random(8)))

    def test_good_documents_pass(self):
        self.assertEqual(self.run_check(lambda p, d: None).status, chk.PASSED)

    def test_nothing_launched_fails(self):
        """The starter: no child grid, every element still unwritten."""
        def nothing(p, d):
            d.update(values=values_of([-1] * p["n"]), child_grids=0, child_writes=0)
            d["launch_log"]["checked"] = 0
        outcome = self.run_check(nothing)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertEqual(outcome.fraction, 0.0)
        self.assertIn("never written (first: out[0])", outcome.message)

    def test_the_last_element_missing_fails(self):
        def last_missing(p, d):
            out = written(p["n"])
            out[-1] = -1
            d["values"] = values_of(out)
            d["child_writes"] = p["n"] - 1
        outcome = self.run_check(last_missing)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("first: out[%d]" % (self.cases[0]["n"] - 1), outcome.message)

    def test_the_parent_writing_the_values_fails(self):
        """Right values and one child grid per block, but the children wrote nothing: the kit counts
        the elements written in its child grids."""
        def parent_writes(p, d):
            d["child_writes"] = 0
        outcome = self.run_check(parent_writes)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("they wrote 0", outcome.message)

    def test_a_grid_per_thread_fails(self):
        def per_thread(p, d):
            d["child_grids"] = p["n"]
            d["launch_log"]["checked"] = p["n"]
        outcome = self.run_check(per_thread)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("one child grid of fill_part per block", outcome.message)

    def test_an_unchecked_launch_fails(self):
        def unchecked(p, d):
            d["launch_log"]["checked"] = 0
        outcome = self.run_check(unchecked)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("KIT_CHECK_LAUNCH()", outcome.message)


if __name__ == "__main__":
    unittest.main()
