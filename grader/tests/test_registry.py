"""The lab registry, each lab's rubric, and each lab's harness contract against the harness's C code and
the recorded result documents."""
import glob
import os
import random
import re
import sys
import unittest

from gradelib import build, context, grading, paths, registry
from gradelib import checks as chk
from gradelib.standard_checks import COMPILES, MEMCHECK, RUNS_CLEANLY

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import draw_figures  # noqa: E402

RECORDED = os.path.join(os.path.dirname(__file__), "data", "recorded")
SEEDS = range(50)  # case draws checked against each contract


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

def _c_sources(lab_name):
    """The harness's own sources and every kit header and source it may take a #define from."""
    folders = [os.path.join(paths.KIT_ROOT, "common", "harness", lab_name),
               os.path.join(paths.KIT_ROOT, "common", "include"), os.path.join(paths.KIT_ROOT, "common", "src")]
    return [p for folder in folders for p in sorted(glob.glob(os.path.join(folder, "*.[ch]*")))]


def _defines(lab_name):
    found = {}
    for path in _c_sources(lab_name):
        with open(path) as f:
            for m in re.finditer(r"^#define[ \t]+(\w+)[ \t]+([^\n/]+)", f.read(), re.M):
                found[m.group(1)] = m.group(2).strip()
    return found


def c_integer(expr, defines):
    """The value of a C integer constant expression of literals, #defines, + - * << and parentheses,
    or None when it is not one."""
    for _ in range(8):
        expr = re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: "(%s)" % defines.get(m.group(1), m.group(1)), expr)
    expr = re.sub(r"\(\s*(?:unsigned\s+)?(?:long\s+long|long|int|size_t)\s*\)", "", expr)  # casts
    expr = re.sub(r"(?<=\d)[uUlL]+\b", "", expr)
    if not re.fullmatch(r"[\d\s()+\-*<>]+", expr):
        return None
    return int(eval(expr, {"__builtins__": {}}))  # only digits, spaces and + - * << ( ) are left


def c_options(lab_name):
    """(options[] names, {flag: (low, high)} of every kit_arg_long) of the lab's harness.cu."""
    with open(os.path.join(paths.KIT_ROOT, "common", "harness", lab_name, "harness.cu")) as f:
        source = f.read()
    table = re.search(r"options\[\]\s*=\s*\{([^}]*)\}", source)
    names = set(re.findall(r'"(--[\w-]+)"', table.group(1))) if table else set()
    defines = _defines(lab_name)
    bounds = {}
    for m in re.finditer(r'kit_arg_long\(\s*argc,\s*argv,\s*"(--[\w-]+)",((?:[^;()]|\([^;()]*\))*)\)\s*;', source):
        args = [a.strip() for a in re.split(r",(?![^()]*\))", m.group(2))]
        bounds[m.group(1)] = (c_integer(args[-2], defines), c_integer(args[-1], defines))
    return names, bounds


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
    def test_c_integer(self):
        self.assertEqual(c_integer("(1 << 20)", {}), 1 << 20)
        self.assertEqual(c_integer("MAX_K", {"MAX_K": "2 * HALF", "HALF": "1024"}), 2048)
        self.assertEqual(c_integer("2000000000L", {}), 2000000000)
        self.assertIsNone(c_integer("sizeof(kit_record_t)", {}))

    def test_options_are_the_harness_options_table(self):
        for lab in registry.all_labs().values():
            names, _ = c_options(lab.name)
            self.assertEqual({o.flag for o in lab.harness.options}, names,
                             "%s: the contract and the C options[] table differ" % lab.name)

    def test_ranges_are_the_harness_ranges(self):
        for lab in registry.all_labs().values():
            _, bounds = c_options(lab.name)
            for option in lab.harness.options:
                if option.choices is not None:
                    self.assertNotIn(option.flag, bounds, "%s %s: a word in the contract" % (lab.name, option.flag))
                    continue
                self.assertEqual((option.low, option.high), bounds.get(option.flag),
                                 "%s %s: the contract's range and the C code's differ" % (lab.name, option.flag))

    def test_every_drawn_case_is_one_the_harness_accepts(self):
        """No seed draws a case the harness would refuse ("the harness rejected its parameters")."""
        for lab in registry.all_labs().values():
            lab.harness_args(lab.recorded_case)
            for seed in SEEDS:
                for case in lab.make_cases(random.Random(seed)):
                    try:
                        lab.harness_args(case)
                    except ValueError as err:
                        self.fail("%s, seed %d, case %s: %s" % (lab.name, seed, case, err))

    def test_argv_refuses_what_the_harness_would(self):
        lab = registry.resolve("01")
        self.assertEqual(lab.harness_args({"K": 3, "M": 2, "N": 5}),
                         ["--K", "3", "--M", "2", "--N", "5", "--repeats", "0"])
        for bad in ({"K": 0, "M": 1, "N": 1}, {"K": 1, "M": 33, "N": 1}, {"K": 1, "M": 1, "N": 1, "typo": 1},
                    {"K": "1", "M": 1, "N": 1}):
            with self.assertRaises(ValueError):
                lab.harness_args(bad)

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
