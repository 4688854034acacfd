"""The kit's own tests say what a reference lost, not only that it lost points."""
import glob
import os
import unittest

from gradelib import failures, paths, sheets
from selftest import lost_checks, lost_words, read_hostile_note


class LostChecksTest(unittest.TestCase):
    def test_names_each_check_that_lost_points_with_its_first_line(self):
        checks = [{"name": "compiles", "score": 1, "points": 1, "message": ""},
                  {"name": "Part B runs concurrently", "score": 0, "points": 3,
                   "message": "1 of 2 cases wrong:\n  threads=8: 2 pair(s) never ran at the same time"},
                  {"name": "memcheck", "score": 0.5, "points": 1, "message": ""}]
        self.assertEqual(lost_checks(checks), ["'Part B runs concurrently' 0/3: 1 of 2 cases wrong: threads=8: 2 "
                                               "pair(s) never ran at the same time", "'memcheck' 0.5/1"])

    def test_none_lost(self):
        self.assertEqual(lost_checks([{"name": "a", "score": 2, "points": 2, "message": "fine"}]), [])

    def test_a_batch_record_says_what_it_lost(self):
        record = {"verdict": "points lost", "report": {"checks": [
            {"name": "Part A runs concurrently", "score": 0, "points": 3, "message": "pairs never overlapped"}]}}
        self.assertEqual(lost_words(record), ": lost 'Part A runs concurrently' 0/3: pairs never overlapped")
        self.assertEqual(lost_words({"verdict": "timeout"}), "", "a record without a report says nothing more")


class HostileNoteTest(unittest.TestCase):
    def test_a_case_the_object_check_refuses_says_what_it_deserves_when_it_runs(self):
        """The sandbox's own test grades the hostile classes with the check of the objects off: each lab case
        that check refuses then runs, and its note names the verdicts its run deserves."""
        refused = failures.VERDICTS[failures.REFUSED_CODE]
        cases = 0
        for note in glob.glob(os.path.join(paths.KIT_ROOT, "solutions", "*", "hostile", "*", "note.txt")):
            case = os.path.dirname(note)
            checked, failed = read_hostile_note(case)
            if checked != [refused]:
                self.assertEqual(read_hostile_note(case, objects_checked=False), (checked, failed))
                continue
            cases += 1
            ran, _ = read_hostile_note(case, objects_checked=False)
            self.assertTrue(ran and refused not in ran, case)
            self.assertTrue(set(ran) <= set(failures.VERDICTS.values()) | {sheets.POINTS_LOST}, (case, ran))
        self.assertGreater(cases, 0)


if __name__ == "__main__":
    unittest.main()
