"""The lab registry, each lab's rubric, and each lab's harness contract against the recorded result
documents (its options: selftest.py harness-options, against the built harness's own description)."""
import os
import sys
import unittest

from gradelib import build, context, grading, paths, registry
from gradelib import checks as chk
from gradelib.standard_checks import COMPILES, MEMCHECK, RUNS_CLEANLY

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import draw_figures  # noqa: E402

RECORDED = os.path.join(os.path.dirname(__file__), "data", "recorded")


class CaseFoldersTest(unittest.TestCase):
    def test_a_case_is_a_subfolder_that_holds_a_file(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("b-case", "a-case", "left-over"):
                os.mkdir(os.path.join(tmp, name))
            for name in ("b-case", "a-case"):
                open(os.path.join(tmp, name, "note.txt"), "w").close()
            open(os.path.join(tmp, "README.md"), "w").close()
            self.assertEqual(paths.case_folders(tmp), ["a-case", "b-case"])  # an empty folder is no case
            self.assertEqual(paths.case_folders(os.path.join(tmp, "missing")), [])


class ResolveTest(unittest.TestCase):
    def test_number_forms(self):
        for spec in ("1", "01", "01-divergent-counter", "labs/01-divergent-counter/"):
            self.assertEqual(registry.resolve(spec).name, "01-divergent-counter")

    def test_unknown_lab_lists_the_choices(self):
        with self.assertRaises(KeyError) as caught:
            registry.resolve("99")
        self.assertIn("01-divergent-counter", caught.exception.args[0])


class RubricTest(unittest.TestCase):
    def test_every_check_says_when_it_passes(self):
        """The handout's "How it is graded" table is made from Check.passes (block rubric-NN): every check
        has one, and each {NAME} in it is a constant of its rubric."""
        import importlib
        import string
        for lab in registry.all_labs().values():
            module = importlib.import_module("rubrics.lab%s" % lab.number)
            for c in lab.checks:
                self.assertTrue(c.passes.strip(), "%s: %s says nowhere when it passes" % (lab.name, c.name))
                for _, field, _, _ in string.Formatter().parse(c.passes):
                    if field is not None:
                        self.assertIsInstance(getattr(module, field, None), (int, float),
                                              "%s: %s's passes names %r, no constant of the rubric"
                                              % (lab.name, c.name, field))

    def test_every_rubric_starts_with_the_kits_three_checks(self):
        for lab in registry.all_labs().values():
            first, second, third = lab.checks[:3]
            self.assertEqual((first.name, first.kind, first.parent), (COMPILES, chk.BUILD, None), lab.name)
            self.assertEqual((second.name, second.kind, second.parent), (RUNS_CLEANLY, chk.RUNTIME, COMPILES),
                             lab.name)
            self.assertEqual((third.name, third.kind, third.parent), (MEMCHECK, chk.RUNTIME, COMPILES),
                             lab.name)
            self.assertEqual(lab.own_checks, lab.checks[3:])
            # the memcheck case is one the harness takes, and one the gate can weigh
            lab.harness_args(lab.memcheck_case)
            lab.gpu_bytes(lab.memcheck_case)

    def test_every_lab_declares_sound_checks(self):
        for lab in registry.all_labs().values():
            names = [c.name for c in lab.checks]
            self.assertEqual(len(names), len(set(names)), lab.name)
            for c in lab.checks:
                self.assertGreater(c.points, 0)
                self.assertIn(lab.handout, c.hint, "%s: %s hint must name the handout" % (lab.name, c.name))
                if c.parent is not None:
                    self.assertLess(names.index(c.parent), names.index(c.name), "%s: parent first" % c.name)
            for name in lab.starter_must_fail:
                self.assertIsNotNone(lab.check_named(name), name)
            self.assertEqual(lab.max_score, sum(c.points for c in lab.checks))

    def test_every_lab_has_its_handout_and_a_readme_naming_the_student_files(self):
        for lab in registry.all_labs().values():
            self.assertTrue(os.path.isfile(os.path.join(paths.KIT_ROOT, lab.handout)), lab.handout)
            with open(os.path.join(paths.LABS_DIR, lab.name, "README.md")) as f:
                readme = f.read()
            for name in build.lab_vars(lab.name)["student_files"]:
                self.assertIn("`%s`" % name, readme, "%s/README.md must name %s" % (lab.name, name))


# ---- the harness contract against the C code -------------------------------------------------

def recorded_documents(lab):
    """{file name: document} of the lab's recorded documents, read as the figures read them."""
    return {"lab%s-%s.json" % key: doc for key, doc in draw_figures.load_docs(RECORDED).items() if key[0] == lab.number}


class OneCheckTest(unittest.TestCase):
    """grade.py --check: the check named, what it depends on, and only the cases they read, as a whole
    grade with the same seed has them."""

    def graded(self, lab_number, name, seed=3):
        lab = registry.resolve(lab_number)
        one = grading.one_check(lab, name)
        cases = lab.make_cases(context.case_rng(seed, lab.name, salt=""))
        return [c.name for c in one.checks], one.make_cases(context.case_rng(seed, lab.name, salt="")), cases

    def test_a_runtime_check_runs_the_cases_it_reads(self):
        names, kept, cases = self.graded("04", "heap freed")
        self.assertEqual(names, [COMPILES, RUNS_CLEANLY, "heap freed"])
        self.assertEqual(kept, [c for c in cases if not c.get("timing")])
        names, kept, cases = self.graded("04", "a block's children run concurrently")
        self.assertEqual(names, [COMPILES, RUNS_CLEANLY, "a block's children run concurrently"])
        self.assertEqual(kept, [c for c in cases if c.get("timing")])

    def test_a_timing_check_under_a_check_that_reads_the_rest_runs_every_case(self):
        names, kept, cases = self.graded("06", "warp aggregation beats one atomic per thread")
        self.assertEqual(names, [COMPILES, RUNS_CLEANLY, "unique slots within capacity",
                                 "warp aggregation beats one atomic per thread"])
        self.assertEqual(kept, cases)

    def test_runs_cleanly_named_runs_every_case(self):
        names, kept, cases = self.graded("04", RUNS_CLEANLY)
        self.assertEqual(names, [COMPILES, RUNS_CLEANLY])
        self.assertEqual(kept, cases)

    def test_a_static_check_needs_no_run(self):
        names, _, _ = self.graded("01", "launch errors checked")
        self.assertNotIn(RUNS_CLEANLY, names)
        self.assertEqual(names[0], COMPILES)
        self.assertEqual(names[-1], "launch errors checked")

    def test_an_unknown_check_lists_the_labs_checks(self):
        with self.assertRaises(KeyError) as caught:
            grading.one_check(registry.resolve("04"), "heap fred")
        self.assertIn("its checks are: compiles; runs cleanly;", caught.exception.args[0])


class ContractTest(unittest.TestCase):
    # A description as kit_options_describe prints it (the harness-options tests read each lab's own).
    DESCRIBED = {"--K": {"flag": "--K", "help": "k", "default": 2, "low": 1, "high": 2048},
                 "--max-dwell": {"flag": "--max-dwell", "help": "d", "default": 512, "low": 1, "high": 65534},
                 "--view": {"flag": "--view", "help": "v", "default": "full", "words": ["full", "seahorse"]},
                 "--figure": {"flag": "--figure", "help": "f", "default": 256, "low": 0, "high": 256}}

    def test_argv_passes_each_option_a_case_sets_and_the_grading_defaults(self):
        lab = registry.resolve("01")
        self.assertEqual(lab.harness_args({"K": 3, "M": 2, "N": 5}),
                         ["--K", "3", "--M", "2", "--N", "5", "--repeats", "0"])
        self.assertEqual(lab.harness_args({"K": 3, "repeats": 4}), ["--K", "3", "--repeats", "4"])
        self.assertEqual(registry.resolve("07").harness_args({"max_dwell": 9, "timing": "uniform"}),
                         ["--max-dwell", "9", "--figure", "0"])

    def test_argv_refuses_what_is_no_integer_or_word(self):
        lab = registry.resolve("01")
        for bad in ({"K": 1.5}, {"K": True}, {"K": "two words"}, {"K": ""}, {"K": None}):
            with self.assertRaises(ValueError):
                lab.harness_args(bad)

    def test_case_problems_are_those_of_the_described_table(self):
        contract = registry.resolve("07").harness
        self.assertEqual(contract.case_problems(self.DESCRIBED, {"max_dwell": 65534, "view": "seahorse",
                                                                 "timing": "uniform"}), [])
        for case, said in (({"max_dwell": 65535}, "--max-dwell 65535 is outside 1..65534"),
                           ({"max_dwell": 0}, "--max-dwell 0 is outside 1..65534"),
                           ({"max_dwell": "9"}, "--max-dwell '9' is not an integer"),
                           ({"view": "spiral"}, "--view 'spiral' is not one of ['full', 'seahorse']"),
                           ({"K": True}, "--K True is not an integer"),
                           ({"zoom": 1}, "--zoom is not an option of the harness (it takes --K, --figure, --max-dwell, --view)")):
            self.assertIn(said, contract.case_problems(self.DESCRIBED, case), case)
        # the grading default (--figure 0) is checked as the cases are
        without_figure = {k: v for k, v in self.DESCRIBED.items() if k != "--figure"}
        self.assertEqual(contract.case_problems(without_figure, {}),
                         ["--figure is not an option of the harness (it takes --K, --max-dwell, --view)"])

    def test_every_lab_has_its_harness_options_test(self):
        from selftest import manifest
        names = [line.split("|")[0] for line in manifest().splitlines()]
        for lab in registry.all_labs().values():
            self.assertIn("%s-harness-options" % lab.number, names)

    def test_recorded_documents_have_the_contracts_keys(self):
        # a lab with none recorded yet is the test NN-recorded's to report (not run), not a failure here
        for lab in registry.all_labs().values():
            for name, doc in recorded_documents(lab).items():
                self.assertIsNone(lab.harness.document_problem(doc), name)
                self.assertEqual(doc.get("lab", lab.name), lab.name, name)

    def test_document_problem_names_the_difference(self):
        lab = registry.resolve("03")
        doc = {k: 0 for k in lab.harness.result_keys}
        self.assertIsNone(lab.harness.document_problem(doc))
        del doc["deep"]
        doc["extra"] = 1
        problem = lab.harness.document_problem(doc)
        self.assertIn("deep", problem)
        self.assertIn("extra", problem)


if __name__ == "__main__":
    unittest.main()
