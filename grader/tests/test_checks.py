import unittest

from gradelib import checks as chk
from gradelib import failures, sandbox


def always(outcome):
    return lambda ctx: outcome


def boom(ctx):
    raise RuntimeError("bug in a check")


class RunChecksTest(unittest.TestCase):
    def test_scores_partial_credit_per_check(self):
        results = chk.run_checks([
            chk.Check("a", 2, chk.BUILD, always(chk.passed())),
            chk.Check("b", 4, chk.RUNTIME, always(chk.failed("half", fraction=0.5)), parent="a"),
            chk.Check("c", 3, chk.STATIC, always(chk.failed("no"))),
        ], ctx=None)
        self.assertEqual([r.score for r in results], [2, 2.0, 0])
        self.assertEqual(chk.total(results), (4.0, 9))

    def test_child_of_failed_parent_is_skipped_with_reason(self):
        results = chk.run_checks([
            chk.Check("compiles", 1, chk.BUILD, always(chk.failed("error"))),
            chk.Check("static", 1, chk.STATIC, always(chk.passed()), parent="compiles"),
            chk.Check("grandchild", 1, chk.STATIC, always(chk.passed()), parent="static"),
        ], ctx=None)
        self.assertEqual([r.status for r in results], [chk.FAILED, chk.SKIPPED, chk.SKIPPED])
        self.assertIn("'compiles' did not pass", results[1].message)
        self.assertIn("'static' did not pass", results[2].message)
        self.assertFalse(results[1].no_gpu)

    def test_runtime_checks_skip_without_gpu_and_children_inherit_the_reason(self):
        ran = []
        results = chk.run_checks([
            chk.Check("compiles", 1, chk.BUILD, always(chk.passed())),
            chk.Check("runs", 1, chk.RUNTIME, lambda ctx: ran.append(1) or chk.passed(), parent="compiles"),
            chk.Check("value", 1, chk.RUNTIME, always(chk.passed()), parent="runs"),
            chk.Check("ptx", 1, chk.STATIC, always(chk.passed()), parent="compiles"),
        ], ctx=None, no_gpu_reason="no GPU: test")
        self.assertEqual(ran, [])
        self.assertEqual([r.status for r in results], [chk.PASSED, chk.SKIPPED, chk.SKIPPED, chk.PASSED])
        self.assertTrue(results[1].no_gpu and results[2].no_gpu)
        self.assertEqual(results[2].message, "no GPU: test")

    def test_a_check_that_raises_fails_alone(self):
        results = chk.run_checks([
            chk.Check("broken", 1, chk.STATIC, boom),
            chk.Check("fine", 1, chk.STATIC, always(chk.passed())),
        ], ctx=None)
        self.assertEqual(results[0].status, chk.FAILED)
        self.assertIn("bug in the grader", results[0].message)
        self.assertEqual(results[0].failure, failures.GRADER_BUG)
        self.assertEqual(results[1].status, chk.PASSED)

    def test_what_the_machine_could_not_do_is_no_check_s_result(self):
        """A sandbox that could not be made, the kit's objects not built: raised past the checks, so that
        no submission is graded on it (grade.py stops, a batch grades the submission again)."""
        for problem in (sandbox.SandboxFailed("the grading sandbox could not be made for the build: ENOSPC"),
                        failures.MachineProblem("the kit's own objects did not build")):
            def machine(ctx, problem=problem):
                raise problem
            with self.assertRaises(failures.MACHINE_PROBLEMS):
                chk.run_checks([chk.Check("compiles", 1, chk.BUILD, machine),
                                chk.Check("fine", 1, chk.STATIC, always(chk.passed()))], ctx=None)

    def test_declaration_errors(self):
        with self.assertRaises(ValueError):
            chk.run_checks([chk.Check("x", 1, chk.STATIC, always(chk.passed()), parent="later"),
                            chk.Check("later", 1, chk.STATIC, always(chk.passed()))], ctx=None)
        with self.assertRaises(ValueError):
            chk.run_checks([chk.Check("x", 1, chk.STATIC, always(chk.passed())),
                            chk.Check("x", 1, chk.STATIC, always(chk.passed()))], ctx=None)
        with self.assertRaises(ValueError):
            chk.Check("x", 1, "dynamic", always(chk.passed()))

    def test_fraction_is_clamped(self):
        self.assertEqual(chk.failed("x", fraction=3).fraction, 1.0)
        self.assertEqual(chk.failed("x", fraction=-1).fraction, 0.0)


if __name__ == "__main__":
    unittest.main()
