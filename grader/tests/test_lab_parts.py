"""Every lab has the parts CONTRIBUTING.md asks of it, found here rather than by a failing test
elsewhere: its student folder, harness, handout and answers; its rows in README.md and the overview;
hostile cases whose notes name verdicts the grader gives; known-wrong submissions whose notes name
checks of the lab, at least one of them caught without a GPU (a static check) and one caught by
memcheck alone."""
import os
import unittest

from gradelib import checks as chk
from gradelib import failures, paths, registry, sheets

KIT = paths.KIT_ROOT
MEMCHECK = "no memory errors (memcheck)"
# Verdicts a graded submission can get (gradelib.failures, gradelib.sheets).
VERDICTS = set(failures.VERDICTS.values()) | {sheets.FULL_MARKS, sheets.POINTS_LOST}
# Parts a lab still lacks, each with the reason: the test fails once the part is there, so that the
# entry goes.
LACKING = {
    ("05-default-streams", "a known-wrong submission caught by memcheck alone"):
        "the student's code allocates no device memory of its own; one that does must be shown on a GPU "
        "to lose only the memcheck check",
}


def first_line(path):
    with open(path) as f:
        return f.readline().strip()


class LabPartsTest(unittest.TestCase):
    def lacking(self, lab, part, present):
        """present, unless LACKING lists the part: then it must still be missing."""
        if (lab.name, part) in LACKING:
            self.assertFalse(present, "%s has %s now: take it off LACKING" % (lab.name, part))
        else:
            self.assertTrue(present, "%s: no %s" % (lab.name, part))

    def test_every_lab_has_its_places(self):
        with open(os.path.join(KIT, "README.md")) as f:
            readme = f.read()
        with open(os.path.join(KIT, "handouts", "00-overview.md")) as f:
            overview = f.read()
        for lab in registry.all_labs().values():
            for place in (os.path.join("labs", lab.name, "README.md"), os.path.join("handouts", lab.name + ".md"),
                          os.path.relpath(paths.answers_path(lab.name), KIT),
                          os.path.join("common", "harness", lab.name, "harness.cu"),
                          os.path.join("solutions", lab.name)):
                self.assertTrue(os.path.exists(os.path.join(KIT, place)), "%s: no %s" % (lab.name, place))
            self.assertTrue("| `handouts/%s.md` |" % lab.name in readme, "%s: no row in README.md's table" % lab.name)
            self.assertTrue("| [%s.md](%s.md) |" % (lab.name, lab.name) in overview,
                            "%s: no row in handouts/00-overview.md's table" % lab.name)

    def test_hostile_cases_name_verdicts_the_grader_gives(self):
        for lab in registry.all_labs().values():
            folder = paths.hostile_dir(lab.name)
            found = paths.case_folders(folder)
            self.assertTrue(found, "%s: no hostile case in %s" % (lab.name, folder))
            for case in found:
                verdicts = first_line(os.path.join(folder, case, "note.txt")).split(":", 1)[0].split("|")
                self.assertLessEqual(set(verdicts), VERDICTS, "%s/%s: its note.txt names %s" % (lab.name, case, verdicts))

    def test_known_wrong_submissions_name_checks_and_cover_cpu_and_memcheck(self):
        for lab in registry.all_labs().values():
            folder = paths.incorrect_dir(lab.name)
            named = {}
            for case in paths.case_folders(folder):
                name = first_line(os.path.join(folder, case, "note.txt")).split(":", 1)[0]
                check = lab.check_named(name)
                self.assertIsNotNone(check, "%s/%s: its note names no check of the lab: %r" % (lab.name, case, name))
                named[case] = check
            self.assertTrue(named, "%s: no known-wrong submission" % lab.name)
            self.lacking(lab, "a known-wrong submission caught without a GPU",
                         any(c.kind == chk.STATIC for c in named.values()))
            self.lacking(lab, "a known-wrong submission caught by memcheck alone",
                         any(c.name == MEMCHECK for c in named.values()))

    def test_every_lacking_part_names_a_lab_and_a_reason(self):
        labs = {lab.name for lab in registry.all_labs().values()}
        for (name, part), reason in LACKING.items():
            self.assertIn(name, labs)
            self.assertGreaterEqual(len(reason.split()), 6, "%s: say why %s is lacking" % (name, part))


if __name__ == "__main__":
    unittest.main()
