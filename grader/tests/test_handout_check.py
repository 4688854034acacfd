"""tools/check_handouts.py on constructed handouts: it must catch what it claims to."""
import os
import sys
import tempfile
import unittest

from gradelib import paths

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import check_handouts  # noqa: E402


class HandoutCheckTest(unittest.TestCase):
    def problems(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "figure.svg"), "w") as f:
                f.write("<svg/>")
            path = os.path.join(tmp, "h.md")
            with open(path, "w") as f:
                f.write(text)
            return check_handouts.check(path, check_handouts.makefile_targets(), check_handouts.grader_options())

    def test_good_text_passes(self):
        text = ("# 1. Intro\n\nSee [the figure](figure.svg) and [below](#2-more).\n\n## 2. More\n\n"
                "Run `make grade LAB=01` or `make run LAB=04 ARGS=\"--lines 12000 --svg c.svg\"`, "
                "then `grade.py --lab 1 --seed 3`. We make two kinds of checks.\n\n"
                "```c\ncudaDeviceSynchronize(); // removed from device code in CUDA 12\n```\n")
        self.assertEqual(self.problems(text), [])

    def test_each_problem_is_reported(self):
        text = ("Run `make bogus`, `make grade LAB=42`, `make run LAB=01 ARGS=\"--Q 3\"`, `grade.py --fast`.\n"
                "[x](missing.md) [y](#nowhere)\n\n"
                "A parent thread calls cudaDeviceSynchronize() to wait for the result.\n")
        found = "\n".join(self.problems(text))
        for expected in ("`make bogus` is not a target", "LAB=42 names no lab", "has no option --Q",
                         "grade.py has no option --fast", "missing file: missing.md", "missing heading: #nowhere",
                         "cudaDeviceSynchronize named without saying it is legacy"):
            self.assertIn(expected, found)

    def test_the_kit_handouts_pass(self):
        self.assertEqual(check_handouts.main([]), 0)


if __name__ == "__main__":
    unittest.main()
