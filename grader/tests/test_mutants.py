"""tools/mutants.py without a GPU: the operators, the mutant ids, and the equivalent lists the
solutions/NN-name/equivalent-mutants.txt files keep (each entry must name a mutant of today's solution). Each
lab's recorded mutation run is read by tests/test_recorded.py (the test NN-recorded), which reports a
lab with none recorded yet as not run."""
import importlib.util
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
