"""tools/quoted_figures.py: every quoted figure is tied to its recorded source, and a drift fails."""
import json
import os
import sys
import tempfile
import unittest

from gradelib import paths

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import quoted_figures as qf  # noqa: E402

COSTS = {"device": {"name": "GPU"}, "repeats": 3,
         "costs": {"device_launch_null_us": {"median": 6.137, "min": 6.0, "max": 6.4, "runs": [6.0, 6.137, 6.4],
                                             "unit": "us", "what": "one launch"}},
         "defaults": {"pending_launch_count": 2048, "malloc_heap_bytes": 8388608, "stack_bytes": 1024,
                      "printf_fifo_bytes": 1048576}}
THRESHOLDS = {"lab04": [{"side": "solution", "case": "streams", "null_over_student": [3.52, 3.9, 4.41]},
                        {"side": "null-stream", "case": "streams", "null_over_student": [0.8, 1.2]}]}


class QuotedFiguresTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.kit = self.tmp.name
        os.makedirs(os.path.join(self.kit, qf.DATA_DIR))
        for name, doc in (("costs", COSTS), ("thresholds", THRESHOLDS)):
            with open(os.path.join(self.kit, qf.DATA_DIR, name + ".json"), "w") as f:
                json.dump(doc, f)

    def tearDown(self):
        self.tmp.cleanup()

    def problems(self, text):
        path = os.path.join(self.kit, "page.md")
        with open(path, "w") as f:
            f.write(text)
        return qf.check_page(path, kit=self.kit)

    def test_rounding_as_written(self):
        self.assertTrue(qf.matches("6", ".1", 6.137))
        self.assertFalse(qf.matches("6", ".2", 6.137))
        self.assertTrue(qf.matches("6", None, 6.137))
        self.assertTrue(qf.matches("1,100", None, 1101.3))   # trailing zeros: rounded to tens
        self.assertFalse(qf.matches("1,100", None, 1160))
        self.assertTrue(qf.matches("580,000", None, 582000))
        self.assertTrue(qf.matches("0", ".070", 0.0704))
        self.assertFalse(qf.matches("0", ".070", 0.0716))
        self.assertFalse(qf.matches("6", None, "6"))          # a string is never a figure
        self.assertFalse(qf.matches("1", None, True))

    def test_expressions(self):
        doc = dict(THRESHOLDS, **COSTS)
        self.assertEqual(qf.evaluate('min(pick(lab04, side="solution", case="streams").null_over_student)', doc), 3.52)
        self.assertAlmostEqual(qf.evaluate("costs.device_launch_null_us.median * 1000 / 2", doc), 3068.5)
        self.assertEqual(qf.evaluate('costs["device_launch_null_us"].runs[2]', doc), 6.4)
        for bad in ('__import__("os")', "costs.__class__", "open('x')", "[1, 2]", "lab04 if 1 else 2",
                    'pick(lab04, case="streams")', "costs.nothing", "1 / 0"):
            with self.assertRaises(qf.SourceError, msg=bad):
                qf.evaluate(bad, doc)

    def test_a_marked_figure_that_matches_passes(self):
        text = ("A device launch costs about 6.1 µs<!-- from costs: costs.device_launch_null_us.median -->; "
                "the ratio stayed between 3.5<!-- from thresholds: min(pick(lab04, side=\"solution\", "
                "case=\"streams\").null_over_student) --> and 4.4 times<!-- from thresholds: max(pick(lab04, "
                "side=\"solution\", case=\"streams\").null_over_student) -->. The source measured 7.86 s"
                "<!-- cited: the source's profile --> for a 50 µs<!-- given: the child's length --> child.\n"
                "Build with `nvcc -O2` (`--timeout 10 s`); CUDA 12.8 or newer; Lab 02, section 2.4; 2 x 32 threads.\n"
                "```\n$ ./bench   # 12.5 ms\n```\n")
        self.assertEqual(self.problems(text), [])

    def test_a_drifted_figure_fails(self):
        found = self.problems("One launch costs about 6.5 µs<!-- from costs: costs.device_launch_null_us.median -->.\n")
        self.assertEqual(len(found), 1)
        self.assertIn("page.md:1: the page says 6.5, but costs gives 6.137", found[0])

    def test_a_marker_is_checked_on_any_number(self):
        # a count has no unit, so no marker is required; one that is written is held to its source
        found = self.problems("It ran 3<!-- from costs: repeats --> times in all, 2<!-- from costs: repeats --> here.\n")
        self.assertEqual(len(found), 1)
        self.assertIn("page.md:1: the page says 2, but costs gives 3 (repeats)", found[0])

    def test_an_unmarked_figure_fails(self):
        for text, figure in (("Launches cost 4.2 µs each.\n", "4.2"), ("It was 15,664x slower.\n", "15,664"),
                             ("between 9.8 to 10.5 times<!-- cited: a paper -->\n", "9.8"),
                             ("flat took 0.008 ms\n", "0.008"), ("about 580,000 cycles\n", "580,000"),
                             ("| case | H100 (ms, median of 3) |\n| --- | --- |\n| bulk | 0.070 |\n", "0.070"),
                             ("| submission | NULL/yours ratio |\n|---|---|\n| mine | 3.12..3.98 |\n", "3.12")):
            found = self.problems(text)
            self.assertTrue(found and "the figure %s has no source" % figure in found[0], (text, found))

    def test_a_marker_in_a_table_cell(self):
        text = ("| version | H100 (ms) |\n| --- | --- |\n"
                "| launch | 6.14<!-- from costs: costs.device_launch_null_us.median --> |\n"
                "| launch, again | 6.2<!-- from costs: costs.device_launch_null_us.median --> |\n")
        found = self.problems(text)
        self.assertEqual(len(found), 1)
        self.assertIn("page.md:4: the page says 6.2", found[0])

    def test_bad_markers_fail(self):
        for text, expected in (
                ("It took 4 ms<!-- cited: -->.\n", "cited without saying where"),
                ("It took 4 ms<!-- from costs -->.\n", "does not read 'from SOURCE: EXPR'"),
                ("It took 4 ms<!-- from nowhere: x -->.\n", "no recorded source nowhere"),
                ("It took 4 ms<!-- from costs: costs.none -->.\n", "no 'none' in costs"),
                ("It took long<!-- from costs: costs.device_launch_null_us.median -->.\n",
                 "a marker that follows no number")):
            found = "\n".join(self.problems(text))
            self.assertIn(expected, found, text)

    def test_generated_blocks_must_equal_their_sources(self):
        block = qf.render("costs", self.kit)
        self.assertIn("| `device_launch_null_us` | 6.14 us | 6.00..6.40 | one launch |", block)
        good = "# Costs\n\n<!-- begin generated: costs -->\n%s<!-- end generated: costs -->\n" % block
        self.assertEqual(self.problems(good), [])
        stale = good.replace("6.14 us", "6.50 us")
        found = self.problems(stale)
        self.assertEqual(len(found), 1)
        self.assertIn("generated block costs differs from its sources", found[0])
        path = os.path.join(self.kit, "page.md")
        self.assertTrue(qf.write_generated(path, kit=self.kit))
        with open(path) as f:
            self.assertEqual(self.problems(f.read()), [])
        self.assertIn("no generated block called nothing",
                      self.problems("<!-- begin generated: nothing -->\nx\n<!-- end generated: nothing -->\n")[0])

    def test_bench_07_table_matches_the_alternative_s_own_run(self):
        row = {"view": "full", "zoom": 2, "max_dwell": 4096, "side": 8192, "exhaustive_ms": 100.0, "worklist_ms": 30.0,
               "published_ms": 8.0, "cdp_ms": 16.0, "filled_fraction": 0.79, "cdp_child_grids": 5604,
               "cdp_pending_limit": 17476, "cdp_unlike_exhaustive_fraction": 1.49011612e-08,
               "published_child_grids": 6080, "published_split_grids": 316, "published_fill_grids": 2350,
               "published_pixel_grids": 3414, "published_pending_limit": 17408, "published_filled_fraction": 0.79,
               "published_unlike_exhaustive_fraction": 0}
        other = dict(row, exhaustive_ms=90.0, cdp_ms=30.0)  # its own run: its own exhaustive time
        for name, doc in (("bench-07", {"bench": [row]}), ("bench-07-one-thread-launches", {"bench": [other]})):
            with open(os.path.join(self.kit, qf.DATA_DIR, name + ".json"), "w") as f:
                json.dump(doc, f)
        block = qf.render("bench-07", self.kit)
        self.assertIn("| 100.000 | 30.000 (3.33x) | **8.000** (12.50x) | 16.000 (6.25x) | 30.000 (3.00x) |", block)
        self.assertIn("| 5,604 | 6,080 (316 / 2,350 / 3,414) | 17,476 / 17,408 | 79.0% / 79.0% | 0.0000015% / 0 |",
                      block)
        with open(os.path.join(self.kit, qf.DATA_DIR, "bench-07-one-thread-launches.json"), "w") as f:
            json.dump({"bench": [dict(other, side=4096)]}, f)  # no row for this case: the block cannot be drawn
        with self.assertRaises(qf.SourceError):
            qf.render("bench-07", self.kit)


if __name__ == "__main__":
    unittest.main()


class NotRecordedYetTest(unittest.TestCase):
    def test_a_lab_without_a_mutation_run_gets_a_row_that_says_so(self):
        """A new lab has no recorded run until a GPU records it: its rows say so, the rest are drawn."""
        def load(name):
            if name == "mutants/05-default-streams":
                raise qf.SourceError("no recorded source %s" % name)
            return qf.load_source(name)
        mutants_rows = qf._mutants_table(load)
        stability_rows = qf._stability_table(load)
        self.assertIn("| 05-default-streams | not recorded yet | | | | | |", mutants_rows)
        self.assertIn("| 05-default-streams | | not recorded yet | | | |", stability_rows)
        self.assertTrue(any(r.startswith("| 04-bezier-streams | 35 |") for r in mutants_rows))
        self.assertTrue(any(r.startswith("| 06-parallel-allocator | solution |") for r in stability_rows))


class ClassScaleTableTest(unittest.TestCase):
    """RESULTS.md's class-scale table, from tools/batch_throughput.py --gather's documents."""

    def test_each_class_with_its_floor_and_what_a_student_waits_for(self):
        phases = {"alone_s": 2.5, "build_s": 3.0, "wait_s": 40.0, "context_s": 0.3, "case_s": 9.0}
        doc = {"device": "NVIDIA H100 80GB HBM3", "gpus_on_host": 4, "cores": 64, "runtime_version": 13000,
               "classes": [{"lab": "06", "gpus": 1, "submissions": 200, "graded": 31, "finished": False,
                            "wall_s": 120.04, "contexts": 1, "phases": phases, "time_limit_s": 6},
                           {"lab": "06", "gpus": 4, "submissions": 200, "graded": 200, "finished": True,
                            "wall_s": 300.0, "contexts": 1.0, "time_limit_s": 6, "beside": "Lab 05's class",
                            "phases": dict(phases, memcheck_s=25.44, memcheck_wait_s=14.763)},
                           {"lab": "07", "gpus": 1, "submissions": 200, "graded": 148, "finished": False,
                            "wall_s": 480.0, "contexts": 1, "phases": phases, "time_limit_s": 12,
                            "alone_mean_s": 1.5},
                           {"lab": "07", "gpus": 1, "submissions": 200, "graded": 0, "finished": False,
                            "wall_s": 60.1, "contexts": None, "phases": {"alone_s": None}, "time_limit_s": 20}],
               "latency": {"labs": {"06": {"cold_s": 9.04, "warm_s": 6.1, "alone_s": 2.5}}}}
        rows = qf._class_scale_table(lambda name: doc, names=["class-scale-x"])
        self.assertIn("4 x NVIDIA H100 80GB HBM3, 64 cores, CUDA 13.0", [r for r in rows if r.startswith("On ")][0])
        # a batch stopped early, scaled to the class: 200 x 120.04 s / 31 graded; a class graded whole: its wall
        # 200 submissions times 2.5 s alone: 500 s on one GPU, 125 s on four
        # a document from before the kit timed memcheck runs leaves their column empty
        self.assertIn("| 06 | 1 |  | 6 | 31 of 200, stopped | 120.0 | 774 | 1 | 2.50 | 500 | 3.00 | 40.00 | 0.30 | 9.00 |  |",
                      rows)
        self.assertIn("| 06 | 4 | Lab 05's class | 6 | 200 of 200 | 300.0 | 300 | 1 | 2.50 | 125 | 3.00 | 40.00 | 0.30 | 9.00 "
                      "| 25.44, 14.76 |", rows)
        # the mean submission's time alone where the document has it: a mix's slow few count
        self.assertIn("| 07 | 1 |  | 12 | 148 of 200, stopped | 480.0 | 649 | 1 | 2.50 | 300 | 3.00 | 40.00 | 0.30 | 9.00 |  |",
                      rows)
        self.assertIn("| 07 | 1 |  | 20 | 0 of 200, stopped | 60.1 |  | | | | | | | | |", rows)
        self.assertIn("| 06 | 9.0 | 6.1 | 2.50 |", rows)


    def test_each_lab_from_the_class_that_tells_the_most(self):
        def cls(lab, gpus, graded, wall, beside=None):
            return {"lab": lab, "gpus": gpus, "submissions": 200, "graded": graded, "finished": graded == 200,
                    "wall_s": wall, "beside": beside, "contexts": 1, "time_limit_s": 6, "phases": {"alone_s": None}}
        docs = {"class-scale-a": {"device": "NVIDIA H100 80GB HBM3", "gpus_on_host": 1, "cores": 16,
                                  "classes": [cls("06", 1, 177, 540.0, beside="Lab 07's class"), cls("07", 1, 148, 480.0),
                                              cls("05", 1, 0, 60.0)]},
                "class-scale-b": {"device": "NVIDIA H200", "gpus_on_host": 4, "cores": 64,
                                  "classes": [cls("06", 1, 46, 140.0), cls("07", 1, 200, 388.6), cls("04", 4, 106, 250.0)]}}
        rows = qf._class_scale_table(lambda name: docs[name], names=sorted(docs))
        # nothing beside it beats more graded; graded whole beats stopped; a batch that graded none is no evidence
        self.assertIn("| 06 | 609 | 46 of 200 | NVIDIA H200 | `class-scale-b` | not measured | | | |", rows)
        self.assertIn("| 07 | 389 | 200 of 200 | NVIDIA H200 | `class-scale-b` | not measured | | | |", rows)
        self.assertIn("| 04 | not measured | | | | 472 | 106 of 200 | NVIDIA H200 | `class-scale-b` |", rows)
        summary = rows[:next(i for i, r in enumerate(rows) if r.startswith("On "))]
        self.assertFalse([r for r in summary if r.startswith("| 05 |")], summary)


class MistakesTableTest(unittest.TestCase):
    """A handout's Common mistakes table: each known-wrong case's note, and the grader's recorded words."""

    def test_grader_words_keep_what_a_student_reads(self):
        self.assertEqual(qf.grader_words("expected: one launch\nactual:   0 launches | none"),
                         "`0 launches \\| none`")
        said = ("3 of 11 runs were not clean:\n  blocks=16: CUDA error at /x/y/common/harness/h.cu:9: boom\n"
                "      | the run's output\n  blocks=1: the same")
        self.assertEqual(qf.grader_words(said),
                         "`3 of 11 runs were not clean: blocks=16: CUDA error at common/harness/h.cu:9: boom ...`")
        self.assertEqual(qf.grader_words("`x` " + "word " * 100).count("word"), 59)

    def test_a_case_with_no_recorded_words_says_so(self):
        from gradelib import registry
        lab = registry.resolve("01")
        with tempfile.TemporaryDirectory() as kit:
            case = os.path.join(paths.incorrect_dir(lab.name, kit), "a-case")
            os.makedirs(case)
            with open(os.path.join(case, "note.txt"), "w") as f:
                f.write("counter value: wrong\nmistake: the total hard-coded\nhappens: right once\n")
            os.makedirs(os.path.join(paths.incorrect_dir(lab.name, kit), "no-row"))
            with open(os.path.join(paths.incorrect_dir(lab.name, kit), "no-row", "note.txt"), "w") as f:
                f.write("counter value: no mistake line, no row\n")
            rows = qf.mistake_rows(lab, kit)
        self.assertEqual(rows[-1], "| the total hard-coded | right once | counter value (not recorded yet) |")
        self.assertEqual(len([r for r in rows if r.startswith("| the")]), 1)

    def test_every_known_wrong_case_has_its_row(self):
        from gradelib import registry
        for lab in registry.all_labs().values():
            folder = paths.incorrect_dir(lab.name)
            for case in paths.case_folders(folder):
                check, fields = qf.note_fields(os.path.join(folder, case))
                self.assertEqual(sorted(fields), ["happens", "mistake"], "%s/%s" % (lab.name, case))
