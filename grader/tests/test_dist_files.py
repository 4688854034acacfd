"""tools/dist.py's choice of files (no GPU): what labs/ holds now never ships as it is."""
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))

import dist  # noqa: E402
from gradelib import build, starters  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
