"""tools/toolkit_matrix.py without a toolkit to install: what a row must hold of each kind of submission,
the comparison with the reference toolkit, and which submissions the architecture rows grade."""
import importlib.util
import os
import unittest

from gradelib import checks as chk
from gradelib import registry

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
spec = importlib.util.spec_from_file_location("toolkit_matrix", os.path.join(TOOLS, "toolkit_matrix.py"))
matrix = importlib.util.module_from_spec(spec)
spec.loader.exec_module(matrix)

P, F, S = chk.PASSED, chk.FAILED, chk.SKIPPED


class ExpectationsTest(unittest.TestCase):
    def setUp(self):
        self.lab = registry.resolve("02")

    def problems(self, kind, statuses, must_fail=None):
        return matrix.expectation_problems(self.lab, kind, "x", must_fail, statuses)

    def test_a_solution_passes_every_build_and_static_check(self):
        self.assertEqual(self.problems("solution", {"compiles": P, "a": P}), [])
        self.assertEqual(len(self.problems("solution", {"compiles": P, "a": F})), 1)
        self.assertIn("does not compile", self.problems("alternative", {"compiles": F, "a": S})[0])

    def test_a_starter_fails_what_its_lab_says(self):
        must = self.lab.starter_must_fail
        self.assertTrue(must)
        self.assertEqual(self.problems("starter", dict({"compiles": P}, **{n: F for n in must})), [])
        self.assertEqual(len(self.problems("starter", dict({"compiles": P}, **{n: P for n in must}))), len(must))

    def test_a_known_wrong_submission_fails_its_static_check_compiled_or_not(self):
        self.assertEqual(self.problems("incorrect", {"compiles": F, "flags": F}, must_fail="flags"), [])
        self.assertEqual(len(self.problems("incorrect", {"compiles": P, "flags": P}, must_fail="flags")), 1)
        # one whose check is a runtime one must still compile
        self.assertEqual(self.problems("incorrect", {"compiles": P, "a": F}), [])
        self.assertEqual(len(self.problems("incorrect", {"compiles": F})), 1)


class SubmissionsTest(unittest.TestCase):
    def test_every_kind_of_every_lab(self):
        found = matrix.submissions()
        for lab in registry.all_labs().values():
            kinds = {kind for l, kind, _, _ in found if l is lab}
            self.assertTrue({"solution", "starter", "incorrect"} <= kinds, lab.name)
        static = [(lab.name, folder, must) for lab, kind, folder, must in found if must]
        self.assertTrue(static)
        for name, folder, must in static:
            self.assertIn(registry.resolve(name).check_named(must).kind, matrix.STATIC_KINDS, folder)
        runtime = [folder for lab, kind, folder, must in found if kind == "incorrect" and not must]
        self.assertTrue(runtime, "the known-wrong submissions whose check is a runtime one are built too")


class CompareTest(unittest.TestCase):
    def test_a_status_that_differs_from_the_reference_is_a_problem(self):
        lab = registry.resolve("01")
        items = [(lab, "incorrect", "solutions/01-divergent-counter/incorrect/x", None)]
        reference = {"solutions/01-divergent-counter/incorrect/x": {"compiles": P, "a": F}}
        original = matrix.grade_row
        try:
            matrix.grade_row = lambda kit, bin_dir, arch, items, jobs: {"solutions/01-divergent-counter/incorrect/x": {"compiles": P, "a": P}}
            row = matrix.run_row("t", "kit", None, "75", items, 1, reference)
            self.assertEqual(len(row["problems"]), 1)
            self.assertIn("differs from the reference toolkit on ['a']", row["problems"][0])
            matrix.grade_row = lambda kit, bin_dir, arch, items, jobs: {"solutions/01-divergent-counter/incorrect/x": {"compiles": P, "a": F}}
            self.assertEqual(matrix.run_row("t", "kit", None, "75", items, 1, reference)["problems"], [])
        finally:
            matrix.grade_row = original


if __name__ == "__main__":
    unittest.main()
