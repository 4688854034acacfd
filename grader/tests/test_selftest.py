"""The kit's own tests say what a reference lost, not only that it lost points."""
import unittest

from selftest import lost_checks, lost_words


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


if __name__ == "__main__":
    unittest.main()
