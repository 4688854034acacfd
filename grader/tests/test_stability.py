"""tools/stability.py without a GPU: which submissions it grades, and how it shares the labs among GPUs."""
import os
import sys
import unittest

from gradelib import paths, registry

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import stability  # noqa: E402


class StabilityTest(unittest.TestCase):
    def test_solution_then_every_alternative(self):
        lab = registry.resolve("08")
        found = stability.submissions(lab)
        self.assertEqual(found[0], ("solution", os.path.join(paths.SOLUTIONS_DIR, lab.name)))
        self.assertEqual(sorted(n for n, _ in found[1:]),
                         sorted("alternative " + c for c in os.listdir(os.path.join(paths.ALTERNATIVE_DIR, lab.name))))

    def test_another_lab_beside_each(self):
        for lab in registry.all_labs().values():
            self.assertNotEqual(stability.load_lab_for(lab).name, lab.name)

    def test_every_lab_on_one_gpu_each_costliest_first(self):
        labs = list(registry.all_labs().values())
        shares = stability.share(labs, ["0", "1", "2", "3"])
        self.assertEqual(sorted(l.name for share in shares.values() for l in share), sorted(l.name for l in labs))
        cost = {g: sum(stability.COST[l.number] * len(stability.submissions(l)) for l in share)
                for g, share in shares.items()}
        heaviest = max(stability.COST[l.number] * len(stability.submissions(l)) for l in labs)
        self.assertLessEqual(max(cost.values()) - min(cost.values()), heaviest)
        self.assertEqual(list(stability.share(labs, ["5"])), ["5"])


if __name__ == "__main__":
    unittest.main()
