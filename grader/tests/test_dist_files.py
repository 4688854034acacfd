"""tools/dist.py's choice of files (no GPU): what labs/ holds now never ships as it is."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))

import dist  # noqa: E402
from gradelib import build, figures, registry, starters  # noqa: E402

LAB = "01-divergent-counter"


class LabFilesTest(unittest.TestCase):
    def kit(self, tmp, files):
        for name, text in files.items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return mock.patch.object(dist, "KIT_ROOT", tmp)

    def test_a_solved_lab_ships_its_starter_and_is_named(self):
        name = build.lab_vars(LAB)["student_files"][0]
        with tempfile.TemporaryDirectory() as tmp, self.kit(tmp, {"labs/%s/%s" % (LAB, name): "my solved lab\n"}):
            with open(os.path.join(starters.pristine(LAB), name), "rb") as f:
                self.assertEqual(dist.shipped_bytes("labs/%s/%s" % (LAB, name)), f.read())
            self.assertEqual(dist.edited_starters(), ["labs/%s/%s" % (LAB, name)])

    def test_a_new_file_in_labs_stops_the_build_named(self):
        with tempfile.TemporaryDirectory() as tmp, self.kit(tmp, {"labs/%s/my_answer_backup.cu" % LAB: "x\n",
                                                                  "Makefile": "all:\n"}):
            subprocess.run(["git", "init", "-q", tmp], check=True)
            subprocess.run(["git", "-C", tmp, "add", "Makefile"], check=True)
            with self.assertRaises(dist.StrayLabFiles) as caught:
                dist.student_files()
            self.assertIn("labs/%s/my_answer_backup.cu" % LAB, str(caught.exception))


# A feedback page's picture, made by the grader of a copy of the student kit's files: printed "drawn"
# when the page holds the picture of the run, else what the page says instead.
PAGE_OF_A_RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from gradelib import feedback, figures, registry
from gradelib.context import CaseRun
for lab_name in sorted(figures.RUN_FIGURES):
    lab = registry.resolve(lab_name)
    with open(sys.argv[2] % lab.number) as f:
        doc = json.load(f)
    svg, caption = feedback.run_figure(lab, [CaseRun(doc.get("params", {}), None, doc, None)])
    print(lab.number, "drawn" if svg and "<svg" in svg else caption)
"""


class StudentKitPicturesTest(unittest.TestCase):
    def test_the_student_kit_draws_its_feedback_pictures_without_tools(self):
        """The grader's figure code (gradelib/figures.py) ships with the grader, and a copy of the student
        kit's files without tools/ at all still puts the picture of a run into every page of a lab that
        has one: the grader needs nothing of tools/."""
        shipped = dict(dist.student_files())
        self.assertIn("grader/gradelib/figures.py", shipped)
        for name in os.listdir(os.path.join(dist.KIT_ROOT, "grader", "gradelib")):
            if name.endswith(".py"):
                self.assertIn("grader/gradelib/" + name, shipped)
        recorded = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "recorded", "lab%s-solution.json")
        with tempfile.TemporaryDirectory() as tmp:
            for source, name in shipped.items():
                if not name.startswith("tools/"):
                    os.makedirs(os.path.dirname(os.path.join(tmp, name)), exist_ok=True)
                    shutil.copy(os.path.join(dist.KIT_ROOT, source), os.path.join(tmp, name))
            self.assertFalse(os.path.exists(os.path.join(tmp, "tools")))
            ran = subprocess.run([sys.executable, "-c", PAGE_OF_A_RUN, os.path.join(tmp, "grader"), recorded],
                                 cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                 timeout=300, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        self.assertEqual(ran.returncode, 0, ran.stdout)
        labs = sorted(registry.resolve(name).number for name in figures.RUN_FIGURES)
        self.assertEqual(ran.stdout.splitlines(), ["%s drawn" % number for number in labs], ran.stdout)


if __name__ == "__main__":
    unittest.main()
