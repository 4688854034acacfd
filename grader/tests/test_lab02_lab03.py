"""Labs 02 and 03: the grader's expected values against independent brute-force computations, and
the checks on constructed harness documents (no GPU needed)."""
import random
import unittest

from gradelib import checks as chk
from rubrics import lab02, lab03
from tests.fakes import FakeContext




def simulate_nested_hello(blocks, threads, grids=None):
    """Run the recursion as the kernels would, grid by grid (grids: a list that gets each grid's
    (blocks, threads))."""
    records = []
    pending = [(blocks, threads, threads, 0)]  # grid: blocks, block size, size argument, depth
    while pending:
        grid_blocks, block_size, size, depth = pending.pop()
        if grids is not None:
            grids.append((grid_blocks, block_size))
        for b in range(grid_blocks):
            for t in range(block_size):
                records.append((depth, b, t))
                if t == 0 and size // 2 > 0:
                    pending.append((1, size // 2, size // 2, depth + 1))
    return records


class Lab02Test(unittest.TestCase):
    def test_expected_sums_match_brute_force(self):
        for n in (1, 2, 33, 1000, 4097):
            values = [i + 1 for i in range(n)]
            self.assertEqual(lab02.expected_sums(n), (sum(values), sum(i * v for i, v in enumerate(values))))

    def test_cases(self):
        cases = lab02.make_cases(random.Random(3))
        self.assertTrue(any(c["n"] % 32 for c in cases))
        self.assertTrue(any(c["threads"] > 32 for c in cases))
        for c in cases:
            self.assertGreaterEqual(c["blocks"] * lab02.RACE_THREADS * c["trials"], 1000)
        self.assertTrue({1, lab02.MAX_BLOCKS} <= {c["blocks"] for c in cases})
        self.assertTrue({1, 31, 32, 33, 1024} <= {c["threads"] for c in cases})
        self.assertTrue({(1023, 1024), (1025, 1024), (1 << 20, 1024)} <= {(c["n"], c["threads"]) for c in cases})

    def test_the_kits_children_ran(self):
        """A parent that writes the seen array, or data[i] = i + 1, itself, launching nothing."""
        no_observers = self.doc(10)
        no_observers["child_grids"]["observe"] = 0
        outcome = lab02.check_child_saw_first(FakeContext([({"n": 10, "threads": 3}, no_observers)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("4096 parents, 0 such grids ran", outcome.message)
        elsewhere = self.doc(10)
        elsewhere["race"]["observed_elsewhere"] = 4096  # children that read a slot of their own
        self.assertEqual(lab02.check_child_saw_first(FakeContext([({"n": 10, "threads": 3}, elsewhere)])).status,
                         chk.FAILED)
        no_adders = self.doc(10)
        no_adders["child_grids"]["add_one"] = 0
        outcome = lab02.check_child_saw_block(FakeContext([({"n": 10, "threads": 3}, no_adders)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("add_one_kernel per block (4), 0 ran", outcome.message)
        unproduced = self.doc(10)
        unproduced["uses"].update(produce_calls=0)
        self.assertEqual(lab02.check_child_saw_block(FakeContext([({"n": 10, "threads": 3}, unproduced)])).status,
                         chk.FAILED)

    def test_a_use_in_the_producing_grid(self):
        """consume_parent calls use_result(i, i + 1) itself (a tail launch only in code that never runs):
        the values are right, the grid is the parent's."""
        faked = self.doc(10)
        faked["uses"]["in_producing_grid"] = 10
        outcome = lab02.check_continuation(FakeContext([({"n": 10, "threads": 3}, faked)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("10 use(s) in consume_parent's own grid", outcome.message)
        old = self.doc(10)  # recorded before the kit knew the producing grid
        for key in ("in_producing_grid", "produce_calls", "produce_calls_elsewhere"):
            del old["uses"][key]
        del old["race"]["observed_elsewhere"]
        ctx = FakeContext([({"n": 10, "threads": 3}, old)])
        for check in (lab02.check_continuation, lab02.check_child_saw_block, lab02.check_child_saw_first):
            self.assertEqual(check(ctx).status, chk.PASSED)

    def doc(self, n, race=None, data_shift=0, used_shift=0):
        s, w = lab02.expected_sums(n)
        race = race or {"parents": 4096, "saw_first": 4096, "saw_second": 0, "saw_other": 0, "ended_second": 4096,
                        "observed_elsewhere": 0}
        return {"race": race,
                "data": {"sum": s + data_shift, "weighted": w, "bad": 1 if data_shift else 0,
                         "first_bad_index": 5, "first_bad_value": 5, "past_end": 0},
                "used": {"sum": s + used_shift, "weighted": w, "bad": 1 if used_shift else 0,
                         "first_bad_index": 7, "first_bad_value": -1000000},
                "uses": {"unused": 0, "first_unused": -1, "used_more_than_once": 0, "first_used_more_than_once": -1,
                         "out_of_range": 0, "in_producing_grid": 0, "produce_calls": n, "produce_calls_elsewhere": 0},
                "child_grids": {"observe": 4096, "store": 4096, "add_one": 4, "use_result": 4},
                "launch_log": {"checked": 8200, "failed": 0}}

    def test_race_counts(self):
        good = FakeContext([({"n": 10, "threads": 3}, self.doc(10))])
        self.assertEqual(lab02.check_child_saw_first(good).status, chk.PASSED)
        self.assertEqual(lab02.check_second_write(good).status, chk.PASSED)
        racy = {"parents": 4096, "saw_first": 30, "saw_second": 4066, "saw_other": 0, "ended_second": 4096}
        outcome = lab02.check_child_saw_first(FakeContext([({"n": 10, "threads": 3}, self.doc(10, race=racy))]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("4066 saw 2", outcome.message)
        dropped = dict(racy, saw_first=4096, saw_second=0, ended_second=0)
        self.assertEqual(lab02.check_second_write(FakeContext([({"n": 10, "threads": 3}, self.doc(10, race=dropped))])).status,
                         chk.FAILED)

    def test_part_b_sums(self):
        ctx = FakeContext([({"n": 100, "threads": 25}, self.doc(100, used_shift=-1))])
        self.assertEqual(lab02.check_child_saw_block(ctx).status, chk.PASSED)
        outcome = lab02.check_continuation(ctx)
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("element 7 is -1000000", outcome.message)


    def test_writes_past_the_end_of_data(self):
        past = self.doc(100)
        past["data"]["past_end"] = 1
        outcome = lab02.check_child_saw_block(FakeContext([({"n": 100, "threads": 25}, past)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("a thread with i >= n wrote", outcome.message)

    def test_each_element_used_once_and_none_outside(self):
        twice = self.doc(100)
        twice["uses"].update(used_more_than_once=3, first_used_more_than_once=64)
        outcome = lab02.check_continuation(FakeContext([({"n": 100, "threads": 25}, twice)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("3 used more than once (first: 64)", outcome.message)
        outside = self.doc(100)
        outside["uses"]["out_of_range"] = 28
        self.assertIn("28 use(s) of elements outside [0, 100)",
                      lab02.check_continuation(FakeContext([({"n": 100, "threads": 25}, outside)])).message)

    def test_every_launch_checked(self):
        self.assertEqual(lab02.check_every_launch_checked(FakeContext([({"n": 10, "threads": 3}, self.doc(10))])).status,
                         chk.PASSED)
        unchecked = self.doc(10)
        unchecked["launch_log"]["checked"] = 4104  # the tail launches went unchecked
        outcome = lab02.check_every_launch_checked(FakeContext([({"n": 10, "threads": 3}, unchecked)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("8200 child grid(s) ran", outcome.message)

    def test_cases_delay_the_children(self):
        delays = [c["observe_delay_us"] for c in lab02.make_cases(random.Random(3))]
        self.assertIn(0, delays)
        self.assertIn(lab02.OBSERVE_DELAY_US, delays)


class Lab03Test(unittest.TestCase):
    def test_expected_tree_matches_a_simulation(self):
        for blocks, threads in ((1, 1), (1, 8), (3, 7), (2, 1024), (5, 999)):
            self.assertEqual(sorted(lab03.expected_records(blocks, threads)),
                             sorted(simulate_nested_hello(blocks, threads)), (blocks, threads))
        self.assertEqual(len(lab03.expected_records(1, 8)), 8 + 4 + 2 + 1)

    def test_expected_grids_match_a_simulation(self):
        import collections
        for blocks, threads in ((1, 1), (1, 8), (3, 7), (2, 1024), (16, 1024), (5, 999)):
            grids = []
            simulate_nested_hello(blocks, threads, grids)
            self.assertEqual(lab03.expected_grid_shapes(blocks, threads), collections.Counter(grids))
        self.assertEqual(sum(lab03.expected_grid_shapes(16, 1024).values()), 1 + 16 * 10)

    def test_cases_reach_the_edges(self):
        for seed in range(20):
            cases = lab03.make_cases(random.Random(seed))
            depths = [c["depth"] for c in cases]
            self.assertEqual(depths[0], lab03.MAX_DEPTH)  # first: the cases after it start from the default again
            self.assertIn(1, depths)
            self.assertIn(2049, depths)
            self.assertEqual(sum(d <= 2048 for d in depths), 1)
            self.assertIn(dict(lab03.LARGEST_TREE, depth=1), cases)  # a short chain under the largest tree
            self.assertTrue({1, 31, 33, 1023, 1024} <= {c["threads"] for c in cases})
            for c in cases:
                self.assertTrue(1 <= c["blocks"] <= 16 and 1 <= c["threads"] <= 1024 and 1 <= c["depth"] <= 100000)

    def hello_doc(self, blocks, threads, shapes=None):
        records = [list(r) for r in lab03.expected_records(blocks, threads)]
        if shapes is None:
            shapes = lab03.expected_grid_shapes(blocks, threads)
        return {"hello": {"count": len(records), "records": records, "grids": sum(shapes.values()),
                          "grids_unkept": 0, "grids_other_shapes": 0,
                          "grid_shapes": [[b, t, n] for (b, t), n in shapes.items()]}}

    def test_the_tree_of_grids(self):
        p = {"blocks": 3, "threads": 8, "depth": 3000}
        self.assertEqual(lab03.check_hello_records(FakeContext([(p, self.hello_doc(3, 8))])).status, chk.PASSED)
        # The records of the whole tree, reported from the host's grid alone (a launch in dead code).
        outcome = lab03.check_hello_records(FakeContext([(p, self.hello_doc(3, 8, {(3, 8): 1}))]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("expected the tree's 10 grids", outcome.message)
        self.assertIn("1 grid(s) reported (1 x <<<3, 8>>>)", outcome.message)
        self.assertNotIn("records differ", outcome.message)
        doc = self.hello_doc(3, 8)
        doc["hello"]["grids_unkept"] = 5
        self.assertEqual(lab03.check_hello_records(FakeContext([(p, doc)])).status, chk.FAILED)
        # A document from before the kit counted grids by identity: the records alone.
        doc = self.hello_doc(3, 8)
        del doc["hello"]["grid_shapes"]
        self.assertEqual(lab03.check_hello_records(FakeContext([(p, doc)])).status, chk.PASSED)

    def test_records_diff(self):
        p = {"blocks": 1, "threads": 4, "depth": 3000}
        good = [list(r) for r in lab03.expected_records(1, 4)]
        doc = {"hello": {"count": len(good), "records": good}}
        self.assertEqual(lab03.check_hello_records(FakeContext([(p, doc)])).status, chk.PASSED)
        wrong = [[0, r[1], r[2]] for r in good]  # every level reports depth 0
        outcome = lab03.check_hello_records(FakeContext([(p, {"hello": {"count": len(wrong), "records": wrong}})]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("GOOD    4 of 7", outcome.message)
        self.assertIn("BAD     Recursion=0: Hello World from thread 0 block 0  (x2)", outcome.message)
        self.assertIn("BAD     Recursion=0: Hello World from thread 1 block 0\n", outcome.message)
        self.assertIn("MISSING Recursion=2: Hello World from thread 0 block 0", outcome.message)

    def test_every_launch_checked(self):
        p = {"blocks": 2, "threads": 6, "depth": 3000}
        doc = {"hello": {"child_grids": 4}, "launch_log": {"checked": 4, "failed": 0},
               "deep": {"levels_ran": 3001, "launch_log": {"checked": 3000, "failed": 0}}}
        self.assertEqual(lab03.check_every_launch_checked(FakeContext([(p, doc)])).status, chk.PASSED)
        doc["deep"]["launch_log"]["checked"] = 0
        outcome = lab03.check_every_launch_checked(FakeContext([(p, doc)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("Part B: expected one KIT_CHECK_LAUNCH()", outcome.message)
        self.assertNotIn("Part A", outcome.message)

    def test_one_case_as_deep_as_the_harness_allows(self):
        self.assertIn(lab03.MAX_DEPTH, [c["depth"] for c in lab03.make_cases(random.Random(4))])

    def test_deep_chain(self):
        p = {"blocks": 1, "threads": 1, "depth": 3000}
        ok = {"deep": {"levels_ran": 3001, "deepest": 3000, "launch_log": {"failed": 0}}}
        self.assertEqual(lab03.check_deep(FakeContext([(p, ok)])).status, chk.PASSED)
        failed = {"deep": {"levels_ran": 2049, "deepest": 2048,
                           "launch_log": {"failed": 1, "first_error": "cudaErrorLaunchPendingCountExceeded"}}}
        outcome = lab03.check_deep(FakeContext([(p, failed)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("cudaErrorLaunchPendingCountExceeded", outcome.message)
        # Every level reported from the first grid: one grid, whatever the number of reports.
        faked = {"deep": {"levels_ran": 1, "deepest": 3000, "reports": 3001, "grids_unkept": 0,
                          "launch_log": {"failed": 0}}}
        outcome = lab03.check_deep(FakeContext([(p, faked)]))
        self.assertEqual(outcome.status, chk.FAILED)
        self.assertIn("each in its own grid (3001 grids); 1 grid(s) reported a level", outcome.message)

    def test_a_loop_of_checks_is_not_a_chain(self):
        """The first level reports every level and calls KIT_CHECK_LAUNCH() once per level: the kit sees
        one grid, so the checks are 3,000 too many and the chain is not there."""
        p = {"blocks": 1, "threads": 1, "depth": 3000}
        doc = {"hello": {"child_grids": 0}, "launch_log": {"checked": 0, "failed": 0},
               "deep": {"levels_ran": 1, "deepest": 3000, "reports": 3001, "grids_unkept": 0,
                        "launch_log": {"checked": 3000, "failed": 0}}}
        ctx = FakeContext([(p, doc)])
        self.assertEqual(lab03.check_deep(ctx).status, chk.FAILED)
        self.assertEqual(lab03.check_every_launch_checked(ctx).status, chk.FAILED)


if __name__ == "__main__":
    unittest.main()


class RecordedDocumentsTest(unittest.TestCase):
    """Each lab's runtime checks on harness documents recorded on an H100 (tests/data/recorded/)."""

    LAB02 = {  # case: checks that must fail (with --blocks 8 --trials 1 --n 300 --threads 128)
        "solution": set(),
        "null-stream-continuation": set(),  # caught statically
        "race-left-in": {"child saw only the pre-launch value"},
        "second-write-dropped": {"second write happened"},
        "no-barrier": {"child saw the block's writes", "continuation saw every child write"},
        "continuation-past-its-part": {"continuation saw every child write"},
        "store-fire-and-forget": {"child saw only the pre-launch value"},  # even with children that start at once
    }
    LAB03 = {  # with --blocks 2 --threads 6 --depth 2500
        "solution": set(),
        "sized-limit": set(),
        "default-limit": {"deep recursion completes"},
        "limit-too-small": {"deep recursion completes"},
        "off-by-one-depth": {"hello records"},
        "fixed-limit": set(),  # its limit of 10,000 holds a chain of 2,500; the 100,000-level case catches it
    }  # recorded before the kit counted grids by identity: the tree of grids is not in them

    def load(self, lab, case):
        import json
        import os
        path = os.path.join(os.path.dirname(__file__), "data", "recorded", "lab%s-%s.json" % (lab, case))
        with open(path) as f:
            return json.load(f)

    def failing(self, checks, params, doc):
        ctx = FakeContext([(params, doc)])
        return {name for name, func in checks.items() if func(ctx).status == chk.FAILED}

    def test_lab02(self):
        checks = {"child saw only the pre-launch value": lab02.check_child_saw_first,
                  "second write happened": lab02.check_second_write,
                  "child saw the block's writes": lab02.check_child_saw_block,
                  "continuation saw every child write": lab02.check_continuation,
                  "every launch checked": lab02.check_every_launch_checked}
        for case, expected in self.LAB02.items():
            doc = self.load("02", case)
            self.assertEqual(self.failing(checks, doc["params"], doc), expected, case)

    def test_lab03(self):
        checks = {"hello records": lab03.check_hello_records, "deep recursion completes": lab03.check_deep,
                  "every launch checked": lab03.check_every_launch_checked}
        for case, expected in self.LAB03.items():
            doc = self.load("03", case)
            self.assertEqual(doc["launch_log"]["failed"], 0, case)
            self.assertEqual(self.failing(checks, doc["params"], doc), expected, case)

    def test_lab03_runaway_recursion_is_not_a_clean_run(self):
        doc = self.load("03", "no-halving")
        self.assertGreater(doc["launch_log"]["failed"], 0)
        self.assertEqual(doc["launch_log"]["first_error"], "cudaErrorLaunchPendingCountExceeded")
