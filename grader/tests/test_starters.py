import unittest

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


if __name__ == "__main__":
    unittest.main()
