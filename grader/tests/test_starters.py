import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

from gradelib import starters

SOLUTION = """int a;
#ifdef KIT_STARTER
    /* TODO: write b */
#else
    int b = 2;
#if SOMETHING
    int c;
#else
    int d;
#endif
#endif /* KIT_STARTER */
#ifndef KIT_STARTER
int only_in_solution;
#endif /* KIT_STARTER */
int e;
"""


class StarterTextTest(unittest.TestCase):
    def test_keeps_starter_branch_and_drops_solution(self):
        self.assertEqual(starters.starter_text(SOLUTION), "int a;\n    /* TODO: write b */\nint e;\n")

    def test_inner_conditionals_stay_with_their_branch(self):
        text = "#ifdef KIT_STARTER\n#if X\nx\n#else\ny\n#endif\n#else\nz\n#endif /* KIT_STARTER */\n"
        self.assertEqual(starters.starter_text(text), "#if X\nx\n#else\ny\n#endif\n")

    def test_errors_name_the_line(self):
        cases = {
            "#ifdef KIT_STARTER\nx\n": "not closed",
            "x\n#endif /* KIT_STARTER */\n": "without an opening marker",
            "#ifdef KIT_STARTER\n#ifdef KIT_STARTER\n": "do not nest",
            "#ifndef KIT_STARTER\n#else\n#endif /* KIT_STARTER */\n": "second #else",
        }
        for text, message in cases.items():
            with self.assertRaises(starters.MarkerError) as caught:
                starters.starter_text(text, "f.cu")
            self.assertIn(message, str(caught.exception))
            self.assertIn("f.cu", str(caught.exception))



class GenerateTest(unittest.TestCase):
    """make starters never loses a student's edits: an edited starter is kept beside the new one, said."""

    def test_an_edited_starter_is_kept_and_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            solution, starter = os.path.join(tmp, "sol.cu"), os.path.join(tmp, "start.cu")
            with open(solution, "w") as f:
                f.write(SOLUTION)
            with open(starter, "w") as f:
                f.write("my work\n")
            with mock.patch.object(starters, "pairs", lambda: [(solution, starter)]):
                self.assertEqual(starters.generate(check_only=True), [starter])
                with open(starter) as f:
                    self.assertEqual(f.read(), "my work\n")  # --check writes nothing
                written = starters.generate()
                self.assertEqual([w for w, _ in written], [starter])
                kept = written[0][1]
                with open(kept) as f:
                    self.assertEqual(f.read(), "my work\n")
                with open(starter, "w") as f:
                    f.write("more work\n")
                again = starters.generate()[0][1]
                self.assertNotEqual(again, kept)  # an earlier copy is never overwritten
                self.assertEqual(starters.generate(), [])

    def test_help_writes_nothing(self):
        kit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kit.py")
        for args in (["starters", "--help"], ["starters", "-h"], ["doctor", "--help"], ["run", "--help"]):
            proc = subprocess.run([sys.executable, kit] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True)
            self.assertEqual(proc.returncode, 0, proc.stdout)
            self.assertIn("kit.py starters [--check]", proc.stdout)
            self.assertNotIn("wrote", proc.stdout)



class PristineTest(unittest.TestCase):
    """The kit's tests read the starters as the kit makes them, never a student's edited labs/."""

    def test_an_edited_lab_folder_is_not_read(self):
        from gradelib import build, paths
        with tempfile.TemporaryDirectory() as tmp:
            edited = os.path.join(tmp, "labs", "01-divergent-counter")
            os.makedirs(edited)
            for name in build.lab_vars("01-divergent-counter")["student_files"]:
                with open(os.path.join(edited, name), "w") as f:
                    f.write("a student's work in progress\n")
            with mock.patch.object(paths, "LABS_DIR", os.path.join(tmp, "labs")):
                folder = starters.pristine("01-divergent-counter")
            self.assertNotEqual(os.path.realpath(folder), os.path.realpath(edited))
            for name in build.lab_vars("01-divergent-counter")["student_files"]:
                with open(os.path.join(paths.SOLUTIONS_DIR, "01-divergent-counter", name)) as f:
                    wanted = starters.starter_text(f.read(), name)
                with open(os.path.join(folder, name)) as f:
                    self.assertEqual(f.read(), wanted)


if __name__ == "__main__":
    unittest.main()
