"""tools/draw_figures.py on the harness documents recorded on an H200: well-formed SVG, with one
element for each thing the runs recorded, and the committed figures are exactly what it draws."""
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

from gradelib import paths

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import draw_figures  # noqa: E402

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "recorded")
SVG = "{http://www.w3.org/2000/svg}"


def classes(path):
    """{class: how many elements} of a well-formed SVG file (ET.parse raises on a malformed one)."""
    root = ET.parse(path).getroot()
    if root.tag != SVG + "svg":
        raise AssertionError("%s: the root element is %s, not svg" % (path, root.tag))
    counts = {}
    for element in root.iter():
        cls = element.get("class")
        if cls:
            counts[cls] = counts.get(cls, 0) + 1
    return counts


def recorded(name):
    with open(os.path.join(RECORDED, name)) as f:
        return json.load(f)


def with_timeline(doc, case):
    """A copy of a recorded Lab 02 document with constructed %globaltimer stamps (ns), as the extended
    harness writes them; the recorded runs predate the stamps."""
    def times(median, count):
        return {"count": count, "min": median - 900, "p10": median - 400, "median": median,
                "p90": median + 400, "max": median + 900}
    doc = copy.deepcopy(doc)
    race = doc["race"]
    none = times(0, 0)
    doc["timeline"] = {
        "clock": "globaltimer_ns",
        "submission": {"parents": race["parents"], "tree_done": 40000,
                       "read_saw_first": times(9000, race["saw_first"]) if race["saw_first"] else none,
                       "read_saw_second": times(8000, race["saw_second"]) if race["saw_second"] else none,
                       "tail_store": times(20000, race["parents"]) if case == "solution" else none},
        "probe": {"parents": race["parents"], "failed_launches": 0, "saw_second": 1000, "tree_done": 30000,
                  "first_write": times(2000, race["parents"]), "launch_returned": times(3500, race["parents"]),
                  "second_write": times(3600, race["parents"]), "child_read": times(8000, race["parents"])},
    }
    return doc


class FiguresFromRecordedRunsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def draw(self, docs_dir=RECORDED):
        return draw_figures.draw_all(draw_figures.load_docs(docs_dir), self.out)

    def test_recursion_tree_has_a_cell_per_record_and_a_box_per_grid(self):
        self.assertEqual(self.draw(), [])
        doc = recorded("lab03-solution.json")
        records = doc["hello"]["records"]
        blocks, threads = doc["params"]["blocks"], doc["params"]["threads"]
        sizes = []
        n = threads
        while n > 0:
            sizes.append(n)
            n //= 2
        found = classes(os.path.join(self.out, "03-recursion-tree.svg"))
        self.assertEqual(found.get("thread"), len(records))
        self.assertEqual(found.get("thread"), blocks * sum(sizes))
        self.assertEqual(found.get("grid"), 1 + blocks * (len(sizes) - 1))
        self.assertEqual(found.get("launch"), blocks * (len(sizes) - 1))
        self.assertEqual(found.get("block"), blocks + blocks * (len(sizes) - 1))
        chains = [c for c in draw_figures.CHAIN_ORDER if os.path.exists(os.path.join(RECORDED, "lab03-%s.json" % c))]
        self.assertEqual(found.get("chain"), len(chains))
        self.assertEqual(found.get("limit"), len(chains))

    def test_race_figure_has_a_bar_per_run_and_a_timeline_only_from_stamps(self):
        self.assertEqual(self.draw(), [])
        runs = glob.glob(os.path.join(RECORDED, "lab02-*.json"))
        found = classes(os.path.join(self.out, "02-race-timeline.svg"))
        for part in ("saw-first", "saw-second", "saw-other", "run-label"):
            self.assertEqual(found.get(part), len(runs), part)
        # The recorded runs carry the harness's time stamps: the time panel has a row per step.
        self.assertTrue(draw_figures.has_timeline(recorded("lab02-solution.json")))
        self.assertEqual(found.get("median"), found.get("spread"))
        self.assertGreaterEqual(found.get("median", 0), 4)
        # Without stamps, nothing is drawn on a time axis.
        with tempfile.TemporaryDirectory() as docs:
            for path in runs:
                doc = recorded(os.path.basename(path))
                doc.pop("timeline", None)
                with open(os.path.join(docs, os.path.basename(path)), "w") as f:
                    json.dump(doc, f)
            self.draw(docs)
        found = classes(os.path.join(self.out, "02-race-timeline.svg"))
        self.assertNotIn("median", found)
        self.assertEqual(found.get("note"), 1)

    def test_race_timeline_drawn_when_the_documents_have_stamps(self):
        with tempfile.TemporaryDirectory() as docs:
            for path in glob.glob(os.path.join(RECORDED, "lab02-*.json")):
                case = os.path.basename(path)[len("lab02-"):-len(".json")]
                with open(os.path.join(docs, os.path.basename(path)), "w") as f:
                    json.dump(with_timeline(recorded(os.path.basename(path)), case), f)
            problems = self.draw(docs)
        self.assertEqual([p for p in problems if p.startswith("02")], [])
        found = classes(os.path.join(self.out, "02-race-timeline.svg"))
        race_left_in = recorded("lab02-race-left-in.json")["race"]
        rows = 4 + 2 + (1 if race_left_in["saw_first"] else 0) + (1 if race_left_in["saw_second"] else 0)
        self.assertEqual(found.get("median"), rows)
        self.assertEqual(found.get("spread"), rows)
        self.assertEqual(found.get("tree-done"), 1)

    def test_allocator_figure_has_a_bar_per_version(self):
        self.assertEqual(self.draw(), [])
        found = classes(os.path.join(self.out, "06-allocator-costs.svg"))
        self.assertEqual((found.get("bar"), found.get("bar-label"), found.get("ratio")), (5, 5, 2))
        doc = recorded("lab06-solution.json")
        doc["timing"]["ran"] = False
        with tempfile.TemporaryDirectory() as docs:
            with open(os.path.join(docs, "lab06-solution.json"), "w") as f:
                json.dump(doc, f)
            problems = self.draw(docs)
        self.assertTrue(any(p.startswith("06-allocator-costs.svg") and "no timing" in p for p in problems), problems)

    def test_a_figure_without_the_runs_it_needs_is_not_drawn(self):
        with tempfile.TemporaryDirectory() as docs:
            problems = self.draw(docs)
            self.assertEqual(len(problems), len(draw_figures.FIGURES))
            doc = recorded("lab03-solution.json")
            doc["hello"]["count"] += 5  # records lost: the tree would be incomplete
            with open(os.path.join(docs, "lab03-solution.json"), "w") as f:
                json.dump(doc, f)
            problems = self.draw(docs)
        self.assertTrue(any("incomplete" in p for p in problems), problems)
        self.assertFalse(os.path.exists(os.path.join(self.out, "03-recursion-tree.svg")))

    def test_committed_figures_are_drawn_from_the_recorded_runs(self):
        self.assertEqual(self.draw(), [])
        for name, _ in draw_figures.FIGURES:
            with open(os.path.join(self.out, name)) as f:
                drawn = f.read()
            with open(os.path.join(paths.KIT_ROOT, "handouts", "figures", name)) as f:
                committed = f.read()
            self.assertEqual(committed, drawn, "handouts/figures/%s differs from what tools/draw_figures.py draws "
                             "from %s: commit the result documents a figure was drawn from" % (name, RECORDED))

    def test_every_committed_figure_is_well_formed(self):
        for path in glob.glob(os.path.join(paths.KIT_ROOT, "handouts", "figures", "*.svg")):
            classes(path)

    def test_make_figures_without_a_gpu_exits_77_and_touches_nothing(self):
        sentinel = os.path.join(self.out, "02-race-timeline.svg")
        with open(sentinel, "w") as f:
            f.write("committed")
        env = dict(os.environ, KIT_NO_GPU="1")
        ran = subprocess.run([sys.executable, os.path.join(paths.KIT_ROOT, "tools", "draw_figures.py"), "--gpu",
                              "--out", self.out], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=120)
        self.assertEqual(ran.returncode, 77, ran.stdout)
        self.assertIn("needs a CUDA GPU", ran.stdout)
        with open(sentinel) as f:
            self.assertEqual(f.read(), "committed")
        self.assertEqual(os.listdir(self.out), ["02-race-timeline.svg"])


if __name__ == "__main__":
    unittest.main()
