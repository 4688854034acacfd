"""tools/draw_figures.py (the handout figures) and gradelib/figures.py (the pictures of one run, and
the drawing code both share) on the harness documents recorded on an H100 and on constructed ones:
well-formed SVG, with one element for each thing the runs recorded, valid PNG with the pixels it
should have, and the committed figures are exactly what it draws from the recorded documents."""
import ast
import copy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import struct
import unittest
import xml.etree.ElementTree as ET
import zlib

from gradelib import figures, paths

sys.path.insert(0, os.path.join(paths.KIT_ROOT, "tools"))
import draw_figures  # noqa: E402  (the handout figures; the tool, not the grader)

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "recorded")
SVG = "{http://www.w3.org/2000/svg}"


def not_yet_drawable():
    """{figure: why} for the figures the recorded documents cannot draw yet: their documents predate
    the keys the figure is drawn from (the next `make figures` on a GPU records them)."""
    why = {}
    lab04 = os.path.join(RECORDED, "lab04-solution.json")
    if os.path.exists(lab04) and "figure" not in recorded("lab04-solution.json"):
        why["04-bezier-curves.svg"] = ("lab04-solution.json was recorded before the harness's --figure-lines "
                                       "(no \"figure\" key)")
    lab05 = os.path.join(RECORDED, "lab05-solution.json")
    if not os.path.exists(lab05):
        why["05-stream-timelines.svg"] = "no lab05-solution.json is recorded yet"
    elif "median_timeline" not in recorded("lab05-solution.json")["part_a"]["legacy"]:
        why["05-stream-timelines.svg"] = ("lab05-solution.json was recorded before the harness wrote "
                                          "\"median_timeline\"")
    if not os.path.exists(os.path.join(RECORDED, "lab07-solution.json")):
        why["07-mandelbrot.svg"] = "no lab07-solution.json is recorded yet"
    return why


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


def read_png(path):
    """(width, height, rows of RGB bytes) of an 8-bit RGB PNG of unfiltered rows, as draw_figures
    writes them; raises AssertionError where the file is not one: the signature, the IHDR, every
    chunk's CRC, IEND last, and the size of the pixel data."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError("%s: no PNG signature" % path)
    chunks, at = [], 8
    while at < len(data):
        length, tag = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        crc, = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        if crc != zlib.crc32(tag + body) & 0xffffffff:
            raise AssertionError("%s: chunk %s has a wrong CRC" % (path, tag))
        chunks.append((tag, body))
        at += 12 + length
    tags = [tag for tag, _ in chunks]
    if tags[0] != b"IHDR" or tags[-1] != b"IEND" or b"IDAT" not in tags or at != len(data):
        raise AssertionError("%s: chunks %s" % (path, tags))
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if (depth, colour, compression, filtering, interlace) != (8, 2, 0, 0, 0):
        raise AssertionError("%s: not 8-bit RGB without interlace" % path)
    raw = zlib.decompress(b"".join(body for tag, body in chunks if tag == b"IDAT"))
    stride = 1 + 3 * width
    if len(raw) != height * stride:
        raise AssertionError("%s: %d bytes of pixels, not %d x (1 + 3 x %d)" % (path, len(raw), height, width))
    rows = [raw[y * stride:(y + 1) * stride] for y in range(height)]
    if any(row[0] != 0 for row in rows):
        raise AssertionError("%s: a row with a filter other than 0" % path)
    return width, height, [row[1:] for row in rows]


def pixel(rows, x, y):
    return tuple(rows[y][3 * x:3 * x + 3])


def lab07_doc(dwells, rects, every=1, max_dwell=64, image_size=None):
    """A constructed Lab 07 document with a "figure" of dwells (a list of rows of ints; 0xffff: not
    written) and rects ([x, y, side, depth] in image pixels), as --figure S writes it."""
    fh, fw = len(dwells), len(dwells[0])
    width, height = image_size or (fw * every, fh * every)
    unwritten = sum(row.count(0xffff) for row in dwells)
    return {"lab": "07-mandelbrot",
            "device": {"name": "NVIDIA H100 80GB HBM3", "cc_major": 9, "cc_minor": 0, "sm_count": 132,
                       "runtime_version": 13000, "driver_version": 13000},
            "params": {"width": width, "height": height, "view": "full", "zoom": 0, "seed": 0,
                       "max_dwell": max_dwell, "max_depth": 4, "min_side": 8, "top_side": 512},
            "rects": {"reported": len(rects), "kept": len(rects)},
            "image": {"pixels": width * height, "unwritten": unwritten * every * every},
            "figure": {"every": every, "width": fw, "height": fh,
                       "dwell_rows": ["".join("%04x" % d for d in row) for row in dwells],
                       "rects": [list(r) for r in rects], "rects_left_out": 0}}


def two_squares_doc():
    """A 64 x 64 image of dwell 5, its lower right quarter inside the set (dwell 64); the top rectangle
    split, and one rectangle of depth 1 reported, its upper left corner: the only leaf."""
    dwells = [[64 if x >= 32 and y >= 32 else 5 for x in range(64)] for y in range(64)]
    return lab07_doc(dwells, [[0, 0, 64, 0], [0, 0, 16, 1]])


def bezier_vertices(points, n):
    """n vertices of the quadratic Bezier curve with control points points, as the kit computes them."""
    (x0, y0), (x1, y1), (x2, y2) = points
    out = []
    for i in range(n):
        u = i / float(n - 1)
        a, b, c = (1 - u) ** 2, 2 * u * (1 - u), u * u
        out.append([round(a * x0 + b * x1 + c * x2, 4), round(a * y0 + b * y1 + c * y2, 4)])
    return out


def with_figure(doc, lines):
    """A copy of a Lab 04 document with a constructed "figure", as --figure-lines writes it."""
    doc = copy.deepcopy(doc)
    doc["figure"] = {"from": "cdp", "min_vertices": 4, "max_vertices": doc["params"]["max"], "lines": lines}
    return doc


def lab05_doc(streams=3, threads=2, repeats=5):
    """A constructed Lab 05 document: the legacy sides one kernel at a time, the student sides all at
    once; Part A with a tiny kernel on the default stream after each worker, Part B with each thread's
    return."""
    def side(part, at_once):
        n = streams if part == "part_a" else threads
        kernels, t = [], 0.0
        for i in range(n):
            length = 1000.0 if part == "part_a" else 1000.0 * (i + 1)
            start = 4.0 * i if at_once else t
            k = {"row": i, "worker": True, "start_us": start, "end_us": start + length}
            if part == "part_b":
                k["returned_us"] = k["end_us"] + (10.0 if at_once else 3000.0)
            kernels.append(k)
            t = start + length
        if part == "part_a":
            for i in range(n):
                tiny = (4.0 * i + 2.0) if at_once else 1000.0 * (i + 1)
                kernels.append({"row": i, "worker": False, "start_us": tiny, "end_us": tiny + 2.0})
        span = max(k["end_us"] for k in kernels)
        return {"span_us": span, "max_concurrent": n if at_once else 1, "overlapping_pairs": 0, "missing": 0,
                "duplicated": 0, "misshapen": 0, "spans_us": [span] * repeats,
                "max_concurrent_runs": [n if at_once else 1] * repeats, "median_round": repeats // 2,
                "kernels": [], "median_timeline": kernels}
    return {"device": {"name": "NVIDIA H100 80GB HBM3", "cc_major": 9, "cc_minor": 0, "sm_count": 132,
                       "runtime_version": 13000, "driver_version": 13000},
            "params": {"streams": streams, "threads": threads, "spin_us": 1000, "thread_spin_us": 1000,
                       "repeats": repeats, "delay_us": 0, "delay_seed": 1},
            "max_connections": "32",
            "part_a": {"legacy": side("part_a", False), "student": side("part_a", True)},
            "part_b": {"legacy": side("part_b", False), "student": side("part_b", True)}}


def lab03_doc(blocks, threads):
    """The recorded Lab 03 solution document with the records of the expected tree of other sizes."""
    from rubrics import lab03
    doc = recorded("lab03-solution.json")
    doc["params"].update(blocks=blocks, threads=threads)
    doc["hello"]["records"] = [list(r) for r in lab03.expected_records(blocks, threads)]
    doc["hello"]["count"] = len(doc["hello"]["records"])
    return doc


def texts(path):
    return " ".join("".join(e.itertext()) for e in ET.parse(path).getroot().iter(SVG + "text"))


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

    def draw_recorded(self):
        """Draws from the recorded documents: every figure but those they cannot draw yet."""
        problems = self.draw()
        self.assertEqual(sorted(p.split(":")[0] for p in problems), sorted(not_yet_drawable()), problems)

    def test_recursion_tree_has_a_cell_per_record_and_a_box_per_grid(self):
        self.draw_recorded()
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
        self.draw_recorded()
        runs = glob.glob(os.path.join(RECORDED, "lab02-*.json"))
        found = classes(os.path.join(self.out, "02-race-timeline.svg"))
        for part in ("saw-first", "saw-second", "saw-other", "run-label"):
            self.assertEqual(found.get(part), len(runs), part)
        # The recorded runs carry the harness's time stamps: the time panel has a row per step.
        self.assertTrue(figures.has_timeline(recorded("lab02-solution.json")))
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
        self.draw_recorded()
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
            drawn_anyway = draw_figures.DIAGRAMS + draw_figures.FROM_DATA  # they read no document
            self.assertEqual(len(problems), len(draw_figures.FIGURES) - len(drawn_anyway))
            self.assertFalse(any(p.startswith(drawn_anyway) for p in problems), problems)
            doc = recorded("lab03-solution.json")
            doc["hello"]["count"] += 5  # records lost: the tree would be incomplete
            with open(os.path.join(docs, "lab03-solution.json"), "w") as f:
                json.dump(doc, f)
            problems = self.draw(docs)
        self.assertTrue(any("incomplete" in p for p in problems), problems)
        self.assertFalse(os.path.exists(os.path.join(self.out, "03-recursion-tree.svg")))

    def test_committed_figures_are_drawn_from_the_recorded_runs(self):
        self.draw_recorded()
        waiting = not_yet_drawable()
        for name, _ in draw_figures.FIGURES:
            with self.subTest(figure=name):
                if name in waiting:
                    self.skipTest("%s: not comparable until a GPU run records its document: %s" % (name, waiting[name]))
                drawn = self.figure_content(os.path.join(self.out, name))
                committed = self.figure_content(os.path.join(paths.KIT_ROOT, "handouts", "figures", name))
                self.assertEqual(committed, drawn, "handouts/figures/%s differs from what tools/draw_figures.py "
                                 "draws from %s: commit the result documents a figure was drawn from"
                                 % (name, RECORDED))

    @staticmethod
    def figure_content(path):
        """What a figure shows: an SVG's text, a PNG's size and pixels (the same pixels compress to
        other bytes with another zlib)."""
        if path.endswith(".png"):
            return read_png(path)
        with open(path) as f:
            return f.read()

    # ---- Lab 07: where each version wins, from make bench LAB=07's data (handouts/figures/data/)

    def test_where_cdp_wins_has_a_cell_per_bench_row_coloured_by_the_fastest(self):
        self.draw_recorded()
        with open(os.path.join(draw_figures.BENCH_DATA_DIR, "bench-07.json")) as f:
            bench = json.load(f)
        wins = {}
        for r in bench["bench"]:
            times = {"exhaustive": r["exhaustive_ms"], "worklist": r["worklist_ms"], "published": r["published_ms"],
                     "cdp": r["cdp_ms"]}
            fastest = min(times, key=times.get)
            wins[fastest] = wins.get(fastest, 0) + 1
        path = os.path.join(self.out, "07-where-cdp-wins.svg")
        found = classes(path)
        self.assertEqual({k[len("win-"):]: v for k, v in found.items() if k.startswith("win-")}, wins)
        self.assertEqual((found.get("ratio"), found.get("ratio-alternative")), (len(bench["bench"]),) * 2)
        self.assertIn(bench["device"]["name"], texts(path))

    def test_where_cdp_wins_is_drawn_from_the_bench_data_only(self):
        with open(os.path.join(draw_figures.BENCH_DATA_DIR, "bench-07.json")) as f:
            bench = json.load(f)
        row = dict(bench["bench"][0], cdp_ms=bench["bench"][0]["exhaustive_ms"] / 2)  # CDP the fastest here
        doc = dict(bench, bench=[row])
        with tempfile.TemporaryDirectory() as data:
            path = os.path.join(self.out, "where.svg")
            with open(os.path.join(data, "bench-07.json"), "w") as f:
                json.dump(doc, f)
            with self.assertRaises(figures.FigureError):  # the alternative's run is missing
                draw_figures.draw_where_cdp_wins({}, path, data)
            with open(os.path.join(data, "bench-07-one-thread-launches.json"), "w") as f:
                json.dump(dict(bench, bench=[dict(row, zoom=row["zoom"] + 1)]), f)
            with self.assertRaises(figures.FigureError) as caught:  # no row of its own for this case
                draw_figures.draw_where_cdp_wins({}, path, data)
            self.assertIn("no row", str(caught.exception))
            with open(os.path.join(data, "bench-07-one-thread-launches.json"), "w") as f:
                json.dump(doc, f)
            summary = draw_figures.draw_where_cdp_wins({}, path, data)
        self.assertEqual(summary["cells"], 1)
        self.assertEqual(classes(path).get("win-cdp"), 1)
        self.assertIn("exhaustive / CDP: 2.00x", texts(path))

    # ---- Lab 01: the parent grid and its children, from the recorded solution run

    def test_grids_figure_has_a_block_a_launch_and_a_child_per_block(self):
        self.draw_recorded()
        doc = recorded("lab01-solution.json")
        k, m = doc["params"]["K"], doc["params"]["M"]
        path = os.path.join(self.out, "01-divergent-counter-grids.svg")
        found = classes(path)
        for part in ("block", "launch", "child-grid", "child-block"):
            self.assertEqual(found.get(part), k, part)
        self.assertEqual((found.get("warp"), found.get("leader")), (k * m, k * m))
        self.assertNotIn("ellipsis", found)
        words = texts(path)
        self.assertIn(doc["device"]["name"], words)
        self.assertIn("the solution's run with --K %d --M %d --N %d" % (k, m, doc["params"]["N"]), words)
        self.assertIn("%d child grids in all" % doc["child_grids"], words)

    def test_grids_figure_of_a_large_grid_draws_its_ends_and_an_ellipsis(self):
        doc = recorded("lab01-solution.json")
        doc["params"].update(K=2048, M=32)
        doc["child_grids"] = 2048
        doc["child_shapes"] = [{"grid": [1, 1, 1], "block": [32, 1, 1], "count": 2048}]
        draw_figures.draw_grids({("01", "solution"): doc}, os.path.join(self.out, "grids.svg"))
        found = classes(os.path.join(self.out, "grids.svg"))
        blocks, warps = draw_figures.MAX_BLOCKS_DRAWN - 1, figures.MAX_WARPS_DRAWN - 1
        self.assertEqual((found.get("block"), found.get("warp")), (blocks, blocks * warps))
        self.assertEqual(found.get("ellipsis"), 2 + blocks)  # a column of two, and one in each block
        self.assertIn("block 2047", texts(os.path.join(self.out, "grids.svg")))

    def test_grids_figure_needs_one_child_per_block(self):
        doc = recorded("lab01-solution.json")
        doc["child_shapes"][0]["block"] = [96, 1, 1]  # one child of 32 * M threads: not the solution's shape
        with self.assertRaises(figures.FigureError):
            draw_figures.draw_grids({("01", "solution"): doc}, os.path.join(self.out, "grids.svg"))
        self.assertFalse(os.path.exists(os.path.join(self.out, "grids.svg")))

    # ---- Lab 04: the curves, from a document with "figure" (--figure-lines)

    def test_curves_have_a_dot_per_vertex_coloured_by_count(self):
        straight = [[0.1, 0.1], [0.3, 0.3], [0.5, 0.5]]
        bent = [[0.2, 0.8], [0.9, 0.9], [0.8, 0.2]]
        lines = [{"points": straight, "count": 4, "vertices": bezier_vertices(straight, 4)},
                 {"points": bent, "count": 256, "vertices": bezier_vertices(bent, 256)},
                 {"points": bent, "count": 256, "vertices": []},  # no vertices: nothing drawn
                 {"points": straight, "count": 4, "vertices": [[0.1, 0.1], None, [1e30, 0.5], [0.5, 0.5]]}]
        doc = with_figure(recorded("lab04-solution.json"), lines)
        path = os.path.join(self.out, "curves.svg")
        summary = figures.draw_curves(doc, path, "the solution", "solution")
        self.assertEqual(summary, {"curves": 4, "vertices": 4 + 256 + 2})
        found = classes(path)
        self.assertEqual((found.get("vertex"), found.get("curve")), (262, 3))
        fills = [e.get("fill") for e in ET.parse(path).getroot().iter(SVG + "circle")]
        self.assertEqual((fills.count("#0000ff"), fills.count("#ff0000")), (6, 256))  # blue: 4 vertices, red: 256
        words = texts(path)
        self.assertIn("4 curves; vertex colour: blue = 4 vertices ... red = 256", words)
        self.assertIn("the solution's run with --lines 300", words)

    def test_curves_need_the_figure_key(self):
        doc = recorded("lab04-solution.json")
        doc.pop("figure", None)
        with self.assertRaises(figures.FigureError) as caught:
            figures.draw_curves(doc, os.path.join(self.out, "curves.svg"))
        self.assertIn("--figure-lines", str(caught.exception))
        problems = self.draw_one({("04", "solution"): doc})
        self.assertTrue(any(p.startswith("04-bezier-curves.svg") for p in problems), problems)

    # ---- Lab 05: the timelines, from a document with "median_timeline"

    def test_timelines_have_a_bar_per_kernel_and_a_tick_per_return(self):
        doc = lab05_doc(streams=3, threads=2)
        path = os.path.join(self.out, "timelines.svg")
        figures.draw_timelines(doc, path, "the solution", "solution")
        found = classes(path)
        self.assertEqual(found.get("worker"), 2 * (3 + 2))   # both sides, both parts
        self.assertEqual(found.get("tiny"), 2 * 3)           # Part A only
        self.assertEqual(found.get("returned"), 2 * 2)       # Part B only
        self.assertEqual(found.get("panel-title"), 4)
        self.assertEqual(found.get("row-label"), 2 * (3 + 1 + 2))
        words = texts(path)
        self.assertIn("Part A, legacy (kit): span 3002 us, 1 at once", words)
        self.assertIn("Part A, the solution: span 1008 us, 3 at once", words)
        self.assertIn("NVIDIA H100 80GB HBM3", words)
        self.assertIn("(the median of 5 rounds)", words)
        # Both sides of a part share one axis: the same ticks on the left and the right.
        labels = [e.text for e in ET.parse(path).getroot().iter(SVG + "text") if e.get("class") == "axis-label"]
        self.assertEqual(labels[:len(labels) // 4], labels[len(labels) // 4:len(labels) // 2])

    def test_timelines_need_the_median_timeline(self):
        doc = lab05_doc()
        del doc["part_b"]["student"]["median_timeline"]
        with self.assertRaises(figures.FigureError) as caught:
            figures.draw_timelines(doc, os.path.join(self.out, "timelines.svg"))
        self.assertIn("part_b.student has no median_timeline", str(caught.exception))

    def test_timelines_figure_drawn_from_the_solution_document(self):
        problems = self.draw_one({("05", "solution"): lab05_doc(streams=8, threads=8)})
        self.assertFalse(any(p.startswith("05-stream-timelines.svg") for p in problems), problems)
        self.assertIn("The solution's run with --streams 8", texts(os.path.join(self.out, "05-stream-timelines.svg")))

    # ---- make run's pictures of one run

    def test_run_figures_of_labs_04_and_05(self):
        arch = [[0, 0], [0.5, 1], [1, 0]]
        doc = with_figure(recorded("lab04-solution.json"), [{"points": arch, "count": 8,
                                                             "vertices": bezier_vertices(arch, 8)}])
        curves = figures.draw_run_figure("04-bezier-streams", doc, self.out)
        self.assertEqual(os.path.basename(curves), "curves.svg")
        self.assertIn("your run with", texts(curves))
        timeline = figures.draw_run_figure("05-default-streams", lab05_doc(), self.out)
        self.assertEqual(os.path.basename(timeline), "timeline.svg")
        self.assertIn("Part B, yours:", texts(timeline))
        lab06 = recorded("lab06-solution.json")
        self.assertIsNone(figures.draw_run_figure("06-parallel-allocator", lab06, self.out))
        with self.assertRaises(figures.FigureError):  # a document of another lab: its keys are not there
            figures.draw_run_figure("05-default-streams", recorded("lab04-solution.json"), self.out)

    # ---- pictures of one run: Labs 01, 02 and 03, and every run picture's width

    def run_figure(self, lab_name, doc):
        """(path, {class: count}, words) of a lab's picture of one run."""
        path = figures.draw_run_figure(lab_name, doc, self.out)
        shown = figures.page_svg_path(path)
        return path, classes(shown), texts(shown)

    def svg_width(self, path):
        return int(ET.parse(figures.page_svg_path(path)).getroot().get("width"))

    def test_every_run_figure_fits_a_page_900_pixels_wide(self):
        arch = [[0, 0], [0.5, 1], [1, 0]]
        docs = {"04-bezier-streams": with_figure(recorded("lab04-solution.json"), [
            {"points": arch, "count": 8, "vertices": bezier_vertices(arch, 8)}])}
        if not os.path.exists(os.path.join(RECORDED, "lab07-solution.json")):
            # The widest figure the harness writes: 256 pixels a side (--figure 256).
            docs["07-mandelbrot"] = lab07_doc([[3] * 256 for _ in range(256)], [[0, 0, 512, 0]], every=4,
                                              image_size=(1024, 1024))
        for lab_name in figures.RUN_FIGURES:
            number = lab_name[:2]
            doc = docs.get(lab_name) or recorded("lab%s-solution.json" % number)
            with self.subTest(lab=lab_name):
                path, found, _ = self.run_figure(lab_name, doc)
                self.assertEqual(os.path.basename(path), figures.RUN_FIGURES[lab_name][0])
                self.assertLessEqual(self.svg_width(path), 900)
                with open(figures.page_svg_path(path)) as f:
                    self.assertFalse(figures.marks_wrong(f.read()), found)  # the solution: nothing wrong
        big = lab03_doc(16, 1024)
        path, _, _ = self.run_figure("03-nested-recursion", big)
        self.assertLessEqual(self.svg_width(path), 900)

    def test_run_figures_need_their_documents_keys(self):
        for lab_name in ("01-divergent-counter", "02-memory-visibility", "03-nested-recursion"):
            for doc in ({}, recorded("lab06-solution.json"), [], {"params": {}}):
                with self.subTest(lab=lab_name, doc=str(doc)[:40]):
                    with self.assertRaises(figures.FigureError):
                        figures.draw_run_figure(lab_name, doc, self.out)
        no_hello = recorded("lab03-solution.json")
        del no_hello["hello"]
        with self.assertRaises(figures.FigureError) as caught:
            figures.draw_tree_run(no_hello, os.path.join(self.out, "tree.svg"))
        self.assertIn("hello", str(caught.exception))
        no_race = recorded("lab02-solution.json")
        del no_race["race"]
        with self.assertRaises(figures.FigureError):
            figures.draw_race_run(no_race, os.path.join(self.out, "race.svg"))
        odd = recorded("lab02-solution.json")
        odd["race"]["saw_other"] += 1  # the counts no longer add up to the parents
        with self.assertRaises(figures.FigureError):
            figures.draw_run_figure("02-memory-visibility", odd, self.out)
        bad = recorded("lab03-solution.json")
        bad["hello"]["records"][0] = [0, 1]  # not a (depth, block, thread) triple
        with self.assertRaises(figures.FigureError):
            figures.draw_run_figure("03-nested-recursion", bad, self.out)
        self.assertEqual(os.listdir(self.out), [])

    # Lab 01

    def test_grids_run_figure_of_the_solution_and_of_a_wrong_foo(self):
        doc = recorded("lab01-solution.json")
        path, found, words = self.run_figure("01-divergent-counter", doc)
        k = doc["params"]["K"]
        drawn = [b for b in figures.drawn_indices(k, figures.RUN_BLOCKS_DRAWN) if b is not None]
        self.assertEqual(found.get("child-grid"), len(drawn))
        self.assertIn("your run with --K %d" % k, words)
        self.assertNotIn("wrong", found)
        doc["student_foo"] += 3
        path, found, words = self.run_figure("01-divergent-counter", doc)
        self.assertEqual(found.get("wrong"), 1)
        self.assertIn("foo should equal the flat version's %d" % doc["reference_foo"], words)
        doc["params"]["K"] += 1  # no longer one child grid per block: no picture
        with self.assertRaises(figures.FigureError):
            self.run_figure("01-divergent-counter", doc)
        unchecked = recorded("lab01-unchecked-launch.json")
        path, found, words = self.run_figure("01-divergent-counter", unchecked)
        self.assertEqual(found.get("wrong"), 1)
        self.assertNotIn("KIT_CHECK_LAUNCH()", words)  # the picture does not show checks the run did not make
        self.assertIn("%d launch(es), 0 check(s) counted" % unchecked["child_grids"], words)

    def test_grids_run_figure_of_many_blocks_draws_fewer_columns(self):
        doc = recorded("lab01-solution.json")
        doc["params"].update(K=2048, M=32)
        doc["child_grids"] = 2048
        doc["child_shapes"] = [{"grid": [1, 1, 1], "block": [32, 1, 1], "count": 2048}]
        path, found, words = self.run_figure("01-divergent-counter", doc)
        self.assertEqual(found.get("block"), figures.RUN_BLOCKS_DRAWN - 1)
        self.assertIn("block 2047", words)
        self.assertLessEqual(self.svg_width(path), 900)

    # Lab 02

    def test_race_run_figure_shows_the_counts_of_its_run(self):
        for case in ("solution", "race-left-in", "second-write-dropped", "store-fire-and-forget"):
            doc = recorded("lab02-%s.json" % case)
            r = doc["race"]
            with self.subTest(case=case):
                path, found, words = self.run_figure("02-memory-visibility", doc)
                for part in ("saw-first", "saw-second", "saw-other", "run-label", "run-value"):
                    self.assertEqual(found.get(part), 1, part)
                self.assertIn("%d | %d | %d" % (r["saw_first"], r["saw_second"], r["ended_second"]), words)
                self.assertIn("Saw 1: {:,} of {:,} children; saw 2: {:,}; something else: {:,}.".format(
                    r["saw_first"], r["parents"], r["saw_second"], r["saw_other"]), words)
                self.assertIn("Slots ending at 2: {:,} of {:,}.".format(r["ended_second"], r["parents"]), words)
                wrong = (r["saw_first"] != r["parents"]) + (r["ended_second"] != r["parents"])
                self.assertEqual(found.get("wrong", 0), wrong)
                self.assertEqual(found.get("outcome", 0), 2 - wrong)
                # The time panel: the kit's probe (4 rows) and this run's children and tail launches.
                sub = doc["timeline"]["submission"]
                rows = 4 + sum(1 for k in ("read_saw_first", "read_saw_second", "tail_store") if sub[k]["count"])
                self.assertEqual((found.get("median"), found.get("row-label")), (rows, rows))
                self.assertEqual(found.get("tree-done"), 1)
        # The fix and the race left in are told apart by the class of their verdicts.
        self.assertEqual(self.run_figure("02-memory-visibility", recorded("lab02-solution.json"))[1].get("wrong"),
                         None)

    def test_race_run_figure_of_several_trials_without_stamps(self):
        doc = recorded("lab02-solution.json")
        doc["params"]["trials"] = 2
        doc["race"] = {"parents": 2048, "saw_first": 2000, "saw_second": 40, "saw_other": 8, "ended_second": 2048}
        doc["timeline"] = {}
        path, found, words = self.run_figure("02-memory-visibility", doc)
        self.assertNotIn("median", found)
        self.assertIn("2,048 children (2 trials of 1,024 parents)", words)
        self.assertIn("something else", words)  # a legend key for the third colour, where a child saw one
        self.assertEqual(found.get("wrong"), 1)
        with open(path) as f:
            self.assertTrue(figures.marks_wrong(f.read()))

    # Lab 03

    def test_tree_run_figure_of_the_solution_marks_nothing(self):
        doc = recorded("lab03-solution.json")
        path, found, words = self.run_figure("03-nested-recursion", doc)
        self.assertEqual(os.path.basename(path), "tree.svg")
        for cls in ("missing", "extra", "extra-more", "wrong", "row-problem"):
            self.assertNotIn(cls, found)
        records = doc["hello"]["records"]
        self.assertEqual(found.get("thread"), len(records))
        self.assertEqual(found.get("chain"), 1)
        self.assertIn("All %d records are where the expected tree puts them." % len(records), words)
        with open(path) as f:
            svg = f.read()
        self.assertNotIn(figures.RED, svg)  # not one red pixel where nothing is wrong
        self.assertFalse(figures.marks_wrong(svg))

    def test_tree_run_figure_marks_missing_and_extra_records(self):
        doc = recorded("lab03-solution.json")
        records = doc["hello"]["records"]
        deepest = max(r[0] for r in records)
        lost = [i for i, r in enumerate(records) if r[0] == deepest][-2:]  # both chains' last level
        for i in sorted(lost, reverse=True):
            del records[i]
        records.append(list(next(r for r in records if r[0] == 1)))  # a depth-1 record written twice
        records.append([deepest + 1, 0, 0])                              # a level the tree does not have
        doc["hello"]["count"] = len(records)
        path, found, words = self.run_figure("03-nested-recursion", doc)
        self.assertEqual(found.get("missing"), 2)
        self.assertEqual(found.get("extra"), 2)
        expected = len(figures.expected_tree_rule()(doc["params"]["blocks"], doc["params"]["threads"]))
        self.assertEqual(found.get("thread"), expected - 2)
        self.assertIn("depth %d: 2 missing" % deepest, words)
        self.assertIn("depth 1: 1 extra", words)
        self.assertIn("depth %d: 1 extra" % (deepest + 1), words)
        self.assertIn("%d of %d expected records are there: 2 missing, 2 extra." % (expected - 2, expected), words)
        with open(path) as f:
            svg = f.read()
        self.assertTrue(figures.marks_wrong(svg))
        root = ET.parse(path).getroot()
        for element in root.iter(SVG + "rect"):
            if element.get("class") == "missing":
                self.assertEqual((element.get("fill"), element.get("stroke")), ("white", figures.RED))
            elif element.get("class") == "extra":
                self.assertEqual(element.get("fill"), figures.RED)

    def test_tree_run_figure_of_recorded_wrong_submissions(self):
        # off-by-one-depth: every level launched at depth 0 again; its tree has 8 records at depth 0 too many.
        path, found, words = self.run_figure("03-nested-recursion", recorded("lab03-off-by-one-depth.json"))
        self.assertEqual(found.get("missing"), 8)
        self.assertEqual(found.get("extra"), figures.RUN_EXTRAS_DRAWN)  # the rest counted, not drawn
        self.assertIn("+%d" % (8 - figures.RUN_EXTRAS_DRAWN), words)
        self.assertIn("depth 0: 8 extra", words)
        # no-halving: a chain a thousand levels deep; the rows stop, the words count every record.
        doc = recorded("lab03-no-halving.json")
        path, found, words = self.run_figure("03-nested-recursion", doc)
        self.assertEqual(found.get("depth-label"), figures.RUN_ROWS_DRAWN + 1)  # and the word "depth"
        extra = len(doc["hello"]["records"]) - 20
        self.assertIn("20 of 20 expected records are there: 0 missing, {:,} extra.".format(extra), words)
        self.assertIn("are not drawn", words)

    def test_tree_run_figure_of_a_large_tree_is_drawn_in_part(self):
        blocks, threads = 16, 1024
        doc = lab03_doc(blocks, threads)
        records = doc["hello"]["records"]
        gone = [(3, 0, 0), (3, 0, 100)]  # thread 0 and one elided thread, in every chain of depth 3
        doc["hello"]["records"] = [r for r in records if tuple(r) not in gone] + [[0, 17, 2]]
        doc["hello"]["count"] = len(doc["hello"]["records"])
        path, found, words = self.run_figure("03-nested-recursion", doc)
        self.assertLessEqual(self.svg_width(path), 900)
        chains = figures.RUN_CHAINS_DRAWN - 1
        self.assertEqual(found.get("missing"), chains)       # thread 0 of each chain drawn
        self.assertEqual(found.get("extra"), 1)
        self.assertLess(found.get("thread"), 11 * chains * figures.RUN_CELLS_DRAWN)
        self.assertIn("depth 3: 32 missing", words)           # and the elided ones counted
        self.assertIn("depth 0: 1 extra", words)
        self.assertIn("block 15", words)
        self.assertIn("16 grids of 512 threads", words)
        self.assertGreater(found.get("ellipsis"), 0)

    def test_tree_run_figure_of_a_failed_chain_and_no_chain(self):
        doc = recorded("lab03-default-limit.json")  # Part A right, Part B stopped at the default limit
        path, found, words = self.run_figure("03-nested-recursion", doc)
        self.assertNotIn("missing", found)
        self.assertEqual(found.get("wrong"), 1)
        self.assertIn("cudaErrorLaunchPendingCountExceeded", words)
        del doc["deep"]
        path, found, words = self.run_figure("03-nested-recursion", doc)
        self.assertNotIn("chain", found)
        self.assertNotIn("wrong", found)

    def test_tree_run_figure_uses_the_rubric_rule(self):
        from rubrics import lab03  # the one statement of the expected tree, which the grader checks against
        self.assertIs(figures.expected_tree_rule(), lab03.expected_records)

    # Lab 07: the dwell image as a PNG, the leaf rectangles outlined

    def test_png_writer_writes_a_valid_png(self):
        rows = [b"".join(bytes([x * 40, y * 60, 200]) for x in range(5)) for y in range(3)]
        path = os.path.join(self.out, "small.png")
        with open(path, "wb") as f:
            f.write(figures.png_bytes(5, 3, rows))
        width, height, got = read_png(path)
        self.assertEqual((width, height), (5, 3))
        self.assertEqual(got, rows)
        with self.assertRaises(ValueError):
            figures.png_bytes(5, 3, rows[:2])  # a row short

    def test_mandelbrot_outlines_the_leaf_rectangles_only(self):
        doc = two_squares_doc()
        path = os.path.join(self.out, "mandelbrot.png")
        facts = figures.draw_mandelbrot_run(doc, path)
        self.assertEqual((facts["rects"], facts["leaves"], facts["scale"], facts["unwritten"]), (2, 1, 8, 0))
        width, height, rows = read_png(path)
        self.assertEqual((width, height), (512, 512))  # 64 pixels a side, each drawn 8 x 8
        outline, inside = figures.OUTLINE, figures.INSIDE
        five = figures.dwell_colour(5, 64)
        self.assertNotIn(five, (outline, inside, figures.rgb(figures.RED)))
        # The leaf [0, 16) x [0, 16): its four edges at picture pixels 0 and 16 x 8 = 128.
        for x, y in ((64, 0), (0, 64), (128, 64), (64, 128), (0, 0), (128, 128)):
            self.assertEqual(pixel(rows, x, y), outline, (x, y))
        self.assertEqual(pixel(rows, 64, 64), five)      # inside the leaf: the map's colour
        self.assertEqual(pixel(rows, 129, 64), five)     # just right of its edge
        self.assertEqual(pixel(rows, 200, 128), five)    # its bottom edge ends at its right one
        self.assertEqual(pixel(rows, 400, 400), inside)  # dwell 64 = max_dwell: black
        # The top rectangle was split: no outline of its own, not even at the picture's edges.
        self.assertEqual(pixel(rows, 511, 100), five)
        self.assertEqual(pixel(rows, 300, 0), five)
        # Reported alone, the top rectangle is the leaf: its outline clipped to the picture's edges.
        doc["figure"]["rects"] = [[0, 0, 512, 0]]
        figures.draw_mandelbrot_run(doc, path)
        _, _, rows = read_png(path)
        for x, y in ((511, 100), (300, 0), (0, 300), (300, 511)):
            self.assertEqual(pixel(rows, x, y), outline, (x, y))
        self.assertEqual(pixel(rows, 64, 64), five)

    def test_mandelbrot_tells_computed_leaves_from_filled_ones(self):
        doc = two_squares_doc()
        # The top split; [0, 16) x [0, 16) filled, [16, 32) x [0, 16) computed pixel by pixel.
        doc["figure"]["rects"] = [[0, 0, 64, 0, 0], [0, 0, 16, 1, 0], [16, 0, 16, 1, 1]]
        path = os.path.join(self.out, "mandelbrot.png")
        facts = figures.draw_mandelbrot_run(doc, path)
        self.assertEqual((facts["leaves"], facts["computed_leaves"], facts["kinds_known"]), (2, 1, True))
        _, _, rows = read_png(path)
        self.assertEqual(pixel(rows, 64, 0), figures.OUTLINE)            # the filled leaf's top edge
        self.assertEqual(pixel(rows, 192, 0), figures.COMPUTED_OUTLINE)  # the computed one's
        with open(figures.page_svg_path(path)) as f:
            svg = f.read()
        for words in ("filled leaf", "computed leaf", "2 of them leaves",
                      "1 leaves filled with their border's dwell (white), 1 computed pixel by pixel (orange)"):
            self.assertIn(words, svg)
        # A document of four numbers a rectangle (recorded before the harness told them apart): one key.
        figures.draw_mandelbrot_run(two_squares_doc(), path)
        with open(figures.page_svg_path(path)) as f:
            svg = f.read()
        self.assertIn("a leaf rectangle", svg)
        self.assertNotIn("computed leaf", svg)

    def test_mandelbrot_maps_image_pixels_to_the_figure(self):
        # A 300 x 200 image, one pixel in every 2: a figure of 150 x 100, drawn 3 times larger. The leaf
        # [128, 256) x [0, 128): edges at 128 / 2 x 3 = 192 and 384; the image's edge, y = 200, at the
        # picture's bottom row.
        dwells = [[1] * 150 for _ in range(100)]
        doc = lab07_doc(dwells, [[128, 0, 128, 1], [0, 128, 512, 1], [0, 0, 512, 0]], every=2,
                        image_size=(300, 200))
        path = os.path.join(self.out, "mandelbrot.png")
        facts = figures.draw_mandelbrot_run(doc, path)
        self.assertEqual((facts["leaves"], facts["scale"]), (2, 3))
        width, height, rows = read_png(path)
        self.assertEqual((width, height), (450, 300))
        outline = figures.OUTLINE
        for x, y in ((192, 50), (384, 50), (300, 0), (300, 192), (10, 192), (10, 299), (449, 250)):
            self.assertEqual(pixel(rows, x, y), outline, (x, y))
        self.assertNotEqual(pixel(rows, 100, 50), outline)

    def test_leaf_rects_counts_each_rectangle_once(self):
        rects = [(0, 0, 64, 0), (0, 0, 16, 1), (16, 0, 16, 1), (16, 0, 16, 1), (20, 4, 4, 2)]
        self.assertEqual(figures.leaf_rects(rects), [(0, 0, 16, 1)] + [(20, 4, 4, 2)])

    def test_mandelbrot_run_picture_marks_unwritten_pixels(self):
        doc = two_squares_doc()
        path, found, words = self.run_figure("07-mandelbrot", doc)
        self.assertEqual(os.path.basename(path), "mandelbrot.png")
        read_png(path)
        with open(figures.page_svg_path(path)) as f:
            svg = f.read()
        self.assertFalse(figures.marks_wrong(svg))
        self.assertNotIn(figures.RED, svg)  # no red where nothing is wrong
        self.assertEqual(found.get("dwell"), 1)
        self.assertIn('href="data:image/png;base64,', svg)
        self.assertIn("Your run with --width 64 --height 64", words)
        self.assertNotIn("top-side", words)  # not an option of the harness
        self.assertIn("2 rectangles reported, 1 of them leaves", words)
        doc["figure"]["dwell_rows"][10] = "ffff" + doc["figure"]["dwell_rows"][10][4:]
        doc["image"]["unwritten"] = 1
        path, found, words = self.run_figure("07-mandelbrot", doc)
        _, _, rows = read_png(path)
        self.assertEqual(pixel(rows, 3, 10 * 8 + 3), figures.rgb(figures.RED))
        with open(figures.page_svg_path(path)) as f:
            self.assertTrue(figures.marks_wrong(f.read()))
        self.assertEqual(found.get("wrong"), 1)
        self.assertIn("Red: 1 of the picture's 4,096 pixels were never written", words)

    def test_mandelbrot_needs_the_figure(self):
        doc = two_squares_doc()
        del doc["figure"]
        with self.assertRaises(figures.FigureError) as caught:
            figures.draw_mandelbrot_run(doc, os.path.join(self.out, "mandelbrot.png"))
        self.assertIn("--figure", str(caught.exception))
        with self.assertRaises(figures.FigureError):
            figures.draw_run_figure("07-mandelbrot", doc, self.out)
        short = two_squares_doc()
        short["figure"]["dwell_rows"].pop()
        with self.assertRaises(figures.FigureError):
            figures.draw_run_figure("07-mandelbrot", short, self.out)
        self.assertEqual(os.listdir(self.out), [])
        problems = self.draw_one({("07", "solution"): doc})
        self.assertTrue(any(p.startswith("07-mandelbrot.svg") and "--figure" in p for p in problems), problems)

    def test_mandelbrot_figure_drawn_from_the_solution_document(self):
        problems = self.draw_one({("07", "solution"): two_squares_doc()})
        self.assertFalse(any(p.startswith("07-mandelbrot.svg") for p in problems), problems)
        # The run's picture as `make run` draws it, with its dwell legend; the PNG lives inside the SVG.
        with open(os.path.join(self.out, "07-mandelbrot.svg")) as f:
            svg = f.read()
        self.assertIn('href="data:image/png;base64,', svg)
        self.assertIn("dwell 0", svg)
        self.assertIn("a leaf rectangle", svg)
        self.assertFalse(os.path.exists(os.path.join(self.out, "07-mandelbrot.png")))

    def test_feedback_page_shows_the_png_in_its_svg(self):
        from gradelib import feedback, registry
        from gradelib.context import CaseRun
        right = two_squares_doc()
        wrong = two_squares_doc()
        wrong["figure"]["dwell_rows"][0] = "ffff" * 64
        runs = [CaseRun(d["params"], None, d, None) for d in (right, wrong)]
        svg, caption = feedback.run_figure(registry.resolve("07"), runs)
        self.assertTrue(figures.marks_wrong(svg))  # the run that shows something wrong is preferred
        self.assertTrue(svg.startswith("<svg"), svg[:40])
        self.assertIn('href="data:image/png;base64,', svg)
        self.assertIn("Your run with width=64", caption)

    def test_harnesses_write_the_keys_the_drawings_read(self):
        """The C writers and the Python readers name the same keys (checked without a GPU)."""
        def source(lab):
            with open(os.path.join(paths.KIT_ROOT, "common", "harness", lab, "harness.cu")) as f:
                return f.read()
        lab04 = source("04-bezier-streams")
        for key in ("figure", "from", "min_vertices", "max_vertices", "lines", "points", "count", "vertices"):
            self.assertIn('"%s"' % key, lab04)
        self.assertIn('"--figure-lines"', lab04)
        lab05 = source("05-default-streams")
        for key in ("median_timeline", "row", "worker", "start_us", "end_us", "returned_us", "median_round",
                    "spans_us", "max_concurrent_runs"):
            self.assertIn('"%s"' % key, lab05)
        self.assertNotIn('"--svg"', lab04 + lab05)
        lab07 = source("07-mandelbrot")
        for key in ("figure", "every", "width", "height", "dwell_rows", "rects", "rects_left_out", "max_dwell"):
            self.assertIn('"%s"' % key, lab07)
        self.assertIn('"--figure"', lab07)

    def draw_one(self, docs):
        return draw_figures.draw_all(docs, self.out)

    def test_every_committed_figure_is_well_formed(self):
        for path in glob.glob(os.path.join(paths.KIT_ROOT, "handouts", "figures", "*.svg")):
            classes(path)
        for path in glob.glob(os.path.join(paths.KIT_ROOT, "handouts", "figures", "*.png")):
            read_png(path)

    def test_make_figures_without_a_gpu_exits_77_and_touches_nothing(self):
        sentinel = os.path.join(self.out, "02-race-timeline.svg")
        with open(sentinel, "w") as f:
            f.write("committed")
        env = dict(os.environ, KIT_NO_GPU="1")
        docs_out = os.path.join(self.out, "docs")
        ran = subprocess.run([sys.executable, os.path.join(paths.KIT_ROOT, "tools", "draw_figures.py"), "--gpu",
                              "--docs-out", docs_out, "--out", self.out], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
        self.assertEqual(ran.returncode, 77, ran.stdout)
        self.assertIn("needs a CUDA GPU", ran.stdout)
        with open(sentinel) as f:
            self.assertEqual(f.read(), "committed")
        self.assertEqual(os.listdir(self.out), ["02-race-timeline.svg"])


# ---------------------------------------------------------------- the grader never imports from tools/

GRADER_DIR = os.path.join(paths.KIT_ROOT, "grader")
TOOLS_DIR = os.path.join(paths.KIT_ROOT, "tools")
# A string that names tools/ as a path: "tools", "tools/...", ".../tools" or ".../tools/...".
TOOLS_PATH = re.compile(r"(^|[/\\])tools([/\\]|$)")
SYS_PATH_CHANGE = ("insert", "append", "extend")


def tools_modules():
    """The names a module of tools/ is imported by."""
    return {os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(TOOLS_DIR, "*.py"))}


def is_sys_path(node):
    return (isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
            and node.value.id == "sys")


def tools_uses(text, modules):
    """What a module's source does that reaches into tools/: each as (line, what). An import of a module
    of tools/ (import X, from X import ..., importlib.import_module("X"), __import__("X")), and a change
    to sys.path (insert, append, extend, an assignment) in a module that names tools/ as a path in a
    string or on the line of the change."""
    tree = ast.parse(text)
    lines = text.splitlines()
    names_tools = any(isinstance(n, ast.Constant) and isinstance(n.value, str) and TOOLS_PATH.search(n.value)
                      for n in ast.walk(tree))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, "import " + a.name) for a in node.names if a.name.split(".")[0] in modules]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] in modules:
                found.append((node.lineno, "from %s import" % node.module))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            arg = node.args[0] if node.args else None
            if name in ("import_module", "__import__") and isinstance(arg, ast.Constant) and isinstance(
                    arg.value, str) and arg.value.split(".")[0] in modules:
                found.append((node.lineno, "%s(%r)" % (name, arg.value)))
            elif isinstance(func, ast.Attribute) and func.attr in SYS_PATH_CHANGE and is_sys_path(func.value):
                line = lines[node.lineno - 1]
                if names_tools or "tools" in line:
                    found.append((node.lineno, "sys.path.%s with tools/ named: %s" % (func.attr, line.strip())))
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if is_sys_path(t) or (isinstance(t, ast.Subscript) and is_sys_path(t.value)):
                    if names_tools or "tools" in lines[node.lineno - 1]:
                        found.append((node.lineno, "sys.path assigned with tools/ named"))
    return sorted(found)


class GraderImportsNothingOfToolsTest(unittest.TestCase):
    """The layering of the kit: tools/ may import the grader, the grader never imports from tools/
    (the maintainers' tools, which a kit may not hold). Its pictures of a run come from
    gradelib/figures.py. grader/tests/ is left out: the kit's tests test the tools too, and never ship."""

    def grader_sources(self):
        found = []
        for folder, dirs, names in os.walk(GRADER_DIR):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and os.path.join(folder, d) != os.path.join(
                GRADER_DIR, "tests"))
            found += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
        return found

    def test_no_grader_module_imports_from_tools(self):
        modules = tools_modules()
        self.assertIn("draw_figures", modules)
        sources = self.grader_sources()
        self.assertIn(os.path.join(GRADER_DIR, "gradelib", "feedback.py"), sources)
        self.assertIn(os.path.join(GRADER_DIR, "kit.py"), sources)
        problems = []
        for path in sources:
            with open(path) as f:
                text = f.read()
            problems += ["%s:%d: %s" % (os.path.relpath(path, paths.KIT_ROOT), line, what)
                         for line, what in tools_uses(text, modules)]
            # The plain text too, whatever the code's shape: no line imports the figure tool.
            problems += ["%s:%d: %s" % (os.path.relpath(path, paths.KIT_ROOT), n, line.strip())
                         for n, line in enumerate(text.splitlines(), 1)
                         if re.match(r"\s*(import|from)\s+draw_figures\b", line)]
        self.assertEqual(problems, [], "the grader reaches into tools/:\n" + "\n".join(problems))

    def test_the_check_finds_what_it_looks_for(self):
        modules = tools_modules()
        old = ("import os\nimport sys\n\ndef figures_module():\n    tools = os.path.join(KIT_ROOT, \"tools\")\n"
               "    if tools not in sys.path:\n        sys.path.insert(0, tools)\n    import draw_figures\n"
               "    return draw_figures\n")
        self.assertEqual([line for line, _ in tools_uses(old, modules)], [7, 8])
        for text in ("from draw_figures import cuda_version\n", "import quoted_figures as qf\n",
                     "import importlib\nm = importlib.import_module('dist')\n",
                     "import os, sys\nsys.path.append(os.path.join(ROOT, 'tools'))\n",
                     "import sys\nsys.path[:0] = ['../tools']\n"):
            self.assertTrue(tools_uses(text, modules), text)
        for text in ("from . import figures\n", "from gradelib import figures\n",
                     "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n",
                     "# tools/measure_thresholds.py measured these\nLIMIT = 3\n"):
            self.assertEqual(tools_uses(text, modules), [], text)


if __name__ == "__main__":
    unittest.main()
