"""tools/mutants.py without a GPU: the operators, the mutant ids, the equivalent lists the
solutions/equivalent-mutants/ files keep (each entry must name a mutant of today's solution), and the
mutation runs recorded on a GPU (grader/tests/data/mutants/): they grade today's mutants, every mutant
listed as equivalent survived them, every other was killed, and every correct submission got full
marks in each of its gradings beside others."""
import importlib.util
import json
import os
import unittest

from gradelib import registry

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
spec = importlib.util.spec_from_file_location("mutants", os.path.join(TOOLS, "mutants.py"))
mutants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutants)

PARENT = """#include "x.h"
__global__ void parent(int *p, int n)
{
    /* child<<<1, 2>>>(p); in a comment: not code */
    if (threadIdx.x == 0) {
        child<<<(n + 31) / 32, 32, 0, cudaStreamTailLaunch>>>(p, n);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (n < 4)
        atomicAdd(p, 1);
}
"""


def edits(op, text=PARENT):
    return [(what, mutants._apply(text, edit)) for edit, what in op(text, mutants.code_mask(text), None)]


class OperatorTest(unittest.TestCase):
    def test_code_mask_skips_comments_strings_and_directives(self):
        mask = mutants.code_mask(PARENT)
        self.assertFalse(mask[PARENT.index("child<<<1, 2>>>")])
        self.assertFalse(mask[PARENT.index("x.h")])
        self.assertTrue(mask[PARENT.index("child<<<(n")])

    def test_check_moved_before_the_launch(self):
        [(what, text)] = edits(mutants.op_launch_check_before_launch)
        self.assertLess(text.index("KIT_CHECK_LAUNCH"), text.index("child<<<(n"))

    def test_launch_stream_and_configuration(self):
        streams = [t for _, t in edits(mutants.op_stream_null)]
        self.assertEqual(len(streams), 1)
        self.assertIn("child<<<(n + 31) / 32, 32, 0, 0>>>", streams[0])
        configs = [t for _, t in edits(mutants.op_launch_config)]
        self.assertIn("child<<<((n + 31) / 32) + 1, 32, 0, cudaStreamTailLaunch>>>", configs[0])
        self.assertTrue(any("<<<32, (n + 31) / 32, 0" in t for t in configs), "grid and block swapped")
        self.assertTrue(any("<<<(n + 31) / 32, 33, 0" in t for t in configs), "a literal is computed")

    def test_relational_and_bounds_leave_launches_alone(self):
        relational = [t for _, t in edits(mutants.op_relational)]
        self.assertEqual(len(relational), 1)
        self.assertIn("if (n <= 4)", relational[0])
        bounds = sorted(w for w, _ in edits(mutants.op_bound_plus_minus_one))
        self.assertEqual(bounds, ["compared with 1 instead of 0", "compared with 3 instead of 4",
                                  "compared with 5 instead of 4"])

    def test_barrier_atomic_and_shared_stream(self):
        [(_, no_barrier)] = edits(mutants.op_no_syncthreads)
        self.assertNotIn("__syncthreads", no_barrier)
        [(_, early)] = edits(mutants.op_return_before_barrier)
        self.assertIn("return; __syncthreads()", early)
        [(_, plain)] = edits(mutants.op_atomic_plain)
        self.assertIn("kit_mutant_plain_add(p, 1)", plain)
        self.assertLess(plain.index("kit_mutant_plain_add(T *p"), plain.index("__global__"))
        [(_, shared)] = edits(mutants.op_stream_shared_by_block)
        self.assertIn("__shared__ cudaStream_t kit_mutant_block_stream", shared)
        self.assertIn("0, kit_mutant_block_stream>>>", shared)

    def test_baselines_are_queued_among_the_mutants(self):
        queue = mutants.interleave(list(range(10)), ["a", "b"])
        self.assertEqual(len(queue), 12)
        self.assertEqual([type(t) for t in (queue[0], queue[-1])], [int, int])
        self.assertEqual(mutants.interleave([], ["a", "b"]), ["a", "b"])

    def test_starter_branches_keep_line_numbers(self):
        text = "a\n#ifdef KIT_STARTER\nstarter\n#else\nsolution\n#endif /* KIT_STARTER */\nb\n"
        stripped = mutants.without_starter(text)
        self.assertEqual(stripped.count("\n"), text.count("\n"))
        self.assertNotIn("starter\n", stripped)
        self.assertEqual(stripped.splitlines()[4], "solution")


class LabMutantsTest(unittest.TestCase):
    def test_every_lab_has_mutants_with_unique_ids(self):
        for lab in registry.all_labs().values():
            found = mutants.generate(lab)
            self.assertGreater(len(found), 5, lab.name)
            ids = [m.id for m in found]
            self.assertEqual(len(ids), len(set(ids)), lab.name)
            self.assertEqual(len({m.text for m in found}), len(found), "%s: two mutants are the same file" % lab.name)

    def test_equivalent_lists_name_real_mutants_with_reasons(self):
        listed = 0
        for lab in registry.all_labs().values():
            self.assertEqual(mutants.equivalent_list_problems(lab), [])
            for mutant_id, reason in mutants.read_equivalent(lab).items():
                self.assertGreaterEqual(len(reason.split()), 4, "%s %s: say why" % (lab.name, mutant_id))
                listed += 1
        self.assertGreater(listed, 0)


BASELINE_SEEDS = 10  # each correct submission's gradings in a recorded run (tools/gpu-suite.sh mutants)
RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "mutants")



class RecordedRunTest(unittest.TestCase):
    """The mutation runs of tools/mutants.py recorded on an H100 (data/mutants/README.md)."""

    def recorded(self, lab):
        with open(os.path.join(RECORDED, lab.name + ".json")) as f:
            return json.load(f)

    def test_each_run_graded_the_mutants_of_todays_solution(self):
        for lab in registry.all_labs().values():
            recorded = [m["id"] for m in self.recorded(lab)["mutants"]]
            self.assertEqual(sorted(recorded), sorted(m.id for m in mutants.generate(lab)),
                             "%s: the solution or the operators changed since the recorded run: run "
                             "`make mutants LAB=%s` on a GPU and record it again" % (lab.name, lab.number))

    def test_the_baselines_scored_full_marks(self):
        for lab in registry.all_labs().values():
            lost = [(b["what"], b["seed"], b.get("lost")) for b in self.recorded(lab)["baselines"]
                    if b["score"] < b["max_score"]]
            self.assertEqual(lost, [], lab.name)

    def test_every_correct_submission_graded_ten_times_beside_others(self):
        for lab in registry.all_labs().values():
            baselines = self.recorded(lab)["baselines"]
            for what, _ in mutants.baseline_folders(lab):
                mine = [b for b in baselines if b["what"] == what]
                self.assertEqual(sorted(b["seed"] for b in mine), list(range(1, BASELINE_SEEDS + 1)),
                                 "%s, %s: record a run with --baseline-seeds %d" % (lab.name, what, BASELINE_SEEDS))
                # the very first grading of a run may start before the others: the rest start beside them
                self.assertGreaterEqual(sum(b["others_running"] > 0 for b in mine), BASELINE_SEEDS - 1,
                                        "%s, %s: %s" % (lab.name, what, mine))

    def test_equivalent_mutants_survived_and_the_rest_were_killed(self):
        for lab in registry.all_labs().values():
            status = {m["id"]: m["status"] for m in self.recorded(lab)["mutants"]}
            equivalent = mutants.read_equivalent(lab)
            for mutant_id in equivalent:
                self.assertEqual(status[mutant_id], mutants.SURVIVED,
                                 "%s: %s is listed as equivalent, but the recorded run says %s"
                                 % (lab.name, mutant_id, status[mutant_id]))
            survivors = sorted(i for i, s in status.items() if i not in equivalent and s != mutants.STILLBORN
                               and s != mutants.KILLED)
            self.assertEqual(survivors, [], "%s: mutants neither killed nor argued equivalent" % lab.name)


if __name__ == "__main__":
    unittest.main()
