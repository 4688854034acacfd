import os
import unittest

from gradelib import build, labs, paths


class ResolveTest(unittest.TestCase):
    def test_number_forms(self):
        for spec in ("1", "01", "01-divergent-counter", "labs/01-divergent-counter/"):
            self.assertEqual(labs.resolve(spec).name, "01-divergent-counter")

    def test_unknown_lab_lists_the_choices(self):
        with self.assertRaises(KeyError) as caught:
            labs.resolve("99")
        self.assertIn("01-divergent-counter", caught.exception.args[0])

    def test_every_lab_declares_sound_checks(self):
        for lab in labs.all_labs().values():
            names = [c.name for c in lab.lab_checks]
            self.assertEqual(len(names), len(set(names)), lab.name)
            for c in lab.lab_checks:
                self.assertGreater(c.points, 0)
                self.assertIn(lab.handout, c.hint, "%s: %s hint must name the handout" % (lab.name, c.name))
            for name in lab.starter_must_fail:
                self.assertIsNotNone(lab.check_named(name), name)

    def test_every_lab_has_its_handout_and_a_readme_naming_the_student_files(self):
        for lab in labs.all_labs().values():
            self.assertTrue(os.path.isfile(os.path.join(paths.KIT_ROOT, lab.handout)), lab.handout)
            with open(os.path.join(paths.LABS_DIR, lab.name, "README.md")) as f:
                readme = f.read()
            for name in build.lab_vars(lab.name)["student_files"]:
                self.assertIn("`%s`" % name, readme, "%s/README.md must name %s" % (lab.name, name))


if __name__ == "__main__":
    unittest.main()
