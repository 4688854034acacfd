#!/usr/bin/env python3
"""Draws every figure of the handouts from harness result documents (JSON), so that every picture
shows a real run: the harnesses write data, this module draws. Standard library only.

  python3 tools/draw_figures.py --docs DIR --out DIR     draw from result documents already made
  python3 tools/draw_figures.py --gpu [--docs-out DIR] [--out DIR] [--labs NN,...]
        `make figures`: on a GPU machine, build every lab's solution, known-wrong and alternative
        submissions, run each on its lab's recorded case (the rubric's recorded_case), write the
        documents to --docs-out (default build/figures/docs/) and redraw --out (default
        handouts/figures/). With --labs, only those labs' documents are made; the figures are drawn
        from them and the recorded documents of the other labs (grader/tests/data/recorded/).
        Without a GPU it says so and exits 77, touching nothing.

DIR holds result documents named labNN-CASE.json (CASE: solution, or a known-wrong or alternative
submission's folder name), as in grader/tests/data/recorded/ or as `make figures` writes them.
Draws, where the documents are there:

  01-divergent-counter-grids.svg  Lab 01: the parent grid's blocks and warps, and the child grid each
                         block's thread 0 launched, with the sizes and counts of the solution's run;
  02-race-timeline.svg   Lab 02, Part A: what the children saw, submission by submission, and, when
                         the documents carry the harness's %globaltimer stamps ("timeline"), when
                         each step of the race happened;
  03-recursion-tree.svg  Lab 03: the launch tree of Part A, one box per grid and one cell per
                         (depth, block, thread) record of the solution's run, and Part B's chain
                         against the pending-launch limit, submission by submission;
  04-bezier-curves.svg   Lab 04: the solution's curves, each vertex coloured by its line's count
                         (the document's "figure": the harness's --figure-lines);
  05-stream-timelines.svg Lab 05: the median round's kernel timelines, the kit's legacy build left
                         and the solution right, Part A above Part B (each side's "median_timeline");
  06-allocator-costs.svg Lab 06: what an allocation costs, on a log scale: per-object device malloc
                         against one bulk allocation and the pool (Part A), and one atomic per
                         thread against the warp-aggregated counter (Part B), from the solution's run;
  07-mandelbrot.svg      Lab 07: the solution's image, the dwell of one pixel in every few (the
                         document's "figure": the harness's --figure S), with the leaf rectangles
                         of its subdivision outlined and a dwell legend: the picture of one run that
                         `make run` draws, a PNG (the standard library's zlib) held in an SVG;
  07-where-cdp-wins.svg  Lab 07: the fastest of the exhaustive kernel, the host worklist, NVIDIA's
                         published design and the reference solution's CDP, region by image size,
                         from `make bench LAB=07`'s data in handouts/figures/data/ (bench-07.json and
                         bench-07-one-thread-launches.json), not from the result documents;
  08-graph-loops.svg     Lab 08, Parts B and C: the loop of rounds kept on the GPU, as a WHILE node
                         and as a device graph that tail-launches itself (a diagram: no document).

Each SVG figure names the GPU and the runs it was drawn from. Exit status 1 when a document a figure
needs is missing or does not hold what the figure needs; each problem is printed.

The drawing code the handout figures share with the pictures of one run is grader/gradelib/figures.py
(draw_run_figure(): what `make run` draws and the grader's feedback pages show); this tool draws the
handout figures with it, and records the documents they are drawn from.
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import shutil
import sys

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import paths  # noqa: E402
from gradelib.figures import (AMBER, BLUE, CHAIN_CAPTION, GREEN, INK, MUTED, RACE_HEADING, RED, TIME_CAPTION,  # noqa: E402
                              TIMELINE_WIDTH, FigureError, Svg, chain_row, chain_scale, device_words, draw_curves,
                              draw_grids_run, draw_mandelbrot_run, draw_timelines, has_timeline, params_words,
                              plural, race_counts, race_outcome_panel, race_time_panel, race_time_rows,
                              tree_panel)


def load_docs(folder):
    """{(lab number, case): document} for every labNN-CASE.json in folder."""
    docs = {}
    for path in sorted(glob.glob(os.path.join(folder, "lab[0-9][0-9]-*.json"))):
        m = re.match(r"lab(\d\d)-(.+)\.json$", os.path.basename(path))
        with open(path) as f:
            text = f.read()
        # A document read from the grader's channel starts with a "kit-nonce" line; skip it.
        if text.startswith("kit-nonce"):
            text = text.split("\n", 1)[1]
        docs[(m.group(1), m.group(2))] = json.loads(text)
    return docs


# ---------------------------------------------------------------- Lab 01: the parent grid and its children

MAX_BLOCKS_DRAWN = 6  # more: blocks 0, 1, ..., the last two, with an ellipsis between


def draw_grids(docs, out_path):
    doc = docs.get(("01", "solution"))
    if doc is None:
        raise FigureError("no lab01-solution.json: the grids are drawn from the solution's run")
    try:
        return draw_grids_run(doc, out_path, "the solution", "solution", MAX_BLOCKS_DRAWN, mark=False)
    except FigureError as e:
        raise FigureError("lab01-solution.json: %s" % e)


# ---------------------------------------------------------------- Lab 03: the launch tree

def launch_tree(doc):
    """From the (depth, block, thread) records: per depth, the grids, blocks per grid and threads per block.

    Below depth 0 every grid has one block, so a grid is told apart by its thread 0: as many grids at
    depth d as records (d, 0, 0). Returns [(depth, grids, blocks_per_grid, threads_per_block)] and
    a list of problems (records that do not make a tree).
    """
    hello = doc.get("hello") or {}
    records = hello.get("records")
    problems = []
    if not records:
        raise FigureError("lab 03 document has no hello records")
    if hello.get("count") != len(records):
        problems.append("%d hello records counted but %d kept: the tree is incomplete" % (hello.get("count"), len(records)))
    by_depth = {}
    for depth, block, thread in records:
        by_depth.setdefault(depth, []).append((block, thread))
    levels = []
    for depth in sorted(by_depth):
        recs = by_depth[depth]
        if depth == 0:
            blocks = len({b for b, _ in recs})
            grids = 1
        else:
            blocks = 1
            grids = sum(1 for b, t in recs if t == 0)
            if any(b != 0 for b, _ in recs):
                problems.append("records below depth 0 name a block other than 0")
        if grids == 0 or len(recs) % (grids * blocks):
            problems.append("depth %d: %d records do not split evenly into %d grid(s) of %d block(s)"
                            % (depth, len(recs), grids, blocks))
            threads = max(1, len(recs) // max(1, grids * blocks))
        else:
            threads = len(recs) // (grids * blocks)
        levels.append((depth, grids, blocks, threads))
    expected_depths = list(range(len(levels)))
    if [lv[0] for lv in levels] != expected_depths:
        problems.append("depths are not 0..%d without gaps" % (len(levels) - 1))
    return levels, problems


# Part B's runs, in the order the handout discusses them: the starter's chain, a limit too small,
# the tail-launched solution, and the NULL-stream chain with a limit sized from the depth.
CHAIN_ORDER = ["default-limit", "limit-too-small", "solution", "sized-limit"]


def draw_recursion(docs, out_path):
    solution = docs.get(("03", "solution"))
    if solution is None:
        raise FigureError("no lab03-solution.json: the launch tree is drawn from the solution's records")
    levels, problems = launch_tree(solution)
    if problems:
        raise FigureError("lab03-solution.json: " + "; ".join(problems))
    chains = [(case, docs[("03", case)]) for case in CHAIN_ORDER if ("03", case) in docs and "deep" in docs[("03", case)]]

    cell, gap = 18, 3
    top_blocks = levels[0][2]
    top_threads = levels[0][3]
    block_w = top_threads * (cell + gap) + gap
    width = max(840, 300 + top_blocks * (block_w + 40))  # room for the subtitle
    row_h = 74
    tree_h = 84 + len(levels) * row_h
    chain_h = 60 + len(chains) * 34 + 50
    svg = Svg(width, tree_h + chain_h, "Lab 03: the launch tree and the deep chain, from recorded runs")
    svg.text("heading", 20, 24, "Part A: nested_hello, one box per grid, one cell per (depth, block, thread) record",
             14, weight="bold")
    svg.text("caption", 20, 42, "%s, the solution run with %s: %d records, %d levels"
             % (device_words(solution), params_words(solution), len(solution["hello"]["records"]), len(levels)),
             11, fill=MUTED)

    # Chain c's grid at depth d sits under top-level block c.
    column_x = [70 + c * (block_w + 40) for c in range(top_blocks)]
    svg.text("depth-label", 20, 56, "depth", 11, fill=MUTED)
    rows = []
    for depth, grids, blocks, threads in levels:
        if depth == 0:
            boxes = [{"x": column_x[b], "chain": b, "block": b, "threads": threads,
                      "slots": [(t, "thread") for t in range(threads)]} for b in range(blocks)]
        else:
            boxes = [{"x": column_x[min(c, len(column_x) - 1)], "chain": c, "block": 0, "threads": threads,
                      "slots": [(t, "thread") for t in range(threads)]} for c in range(grids)]
        rows.append({"depth": depth, "top": depth == 0, "boxes": boxes, "blocks": blocks, "threads": threads,
                     "notes": [("level-note", "%s x %s x %s" % (plural(grids, "grid"), plural(blocks, "block"),
                                                               plural(threads, "thread")), MUTED)]})
    tree_panel(svg, rows, 60, {"cell": cell, "gap": gap, "row_h": row_h, "note_x": width - 20, "note_size": 11,
                               "note_y": 14, "note_dy": 0, "extra_x": width})
    svg.text("legend", 20, tree_h - 22, "dark cell: thread 0, the one launcher of its block; arrow: its launch.", 11,
             fill=MUTED)
    svg.text("legend", 20, tree_h - 9, "The records hold depth, block and thread only, so each chain is drawn under "
             "the top-level block that starts it.", 11, fill=MUTED)

    # Part B: levels that ran against the pending-launch limit.
    y0 = tree_h + 16
    svg.text("heading", 20, y0 + 8, "Part B: deep_chain, levels that ran, and the pending-launch limit",
             14, weight="bold")
    if chains:
        left, right = 190, width - 30
        scale = chain_scale([doc for _, doc in chains], left, right)
        for i, (case, doc) in enumerate(chains):
            chain_row(svg, case, doc, left, y0 + 26 + i * 34, scale)
        ref = chains[0][1]
        svg.text("caption", 20, y0 + 26 + len(chains) * 34 + 12, CHAIN_CAPTION, 11, fill=MUTED)
        svg.text("caption", 20, y0 + 26 + len(chains) * 34 + 26, "%s; each run with %s."
                 % (device_words(ref), params_words(ref)), 11, fill=MUTED)
    svg.write(out_path)
    return {"threads": len(solution["hello"]["records"]), "grids": sum(lv[1] for lv in levels),
            "launches": sum(lv[1] for lv in levels[1:]), "chains": len(chains)}


# ---------------------------------------------------------------- Lab 02: the race

RACE_ORDER = ["solution", "race-left-in", "second-write-dropped", "no-barrier", "null-stream-continuation"]


def race_docs(docs):
    found = [(case, doc) for (lab, case), doc in docs.items() if lab == "02" and "race" in doc]
    rank = {c: i for i, c in enumerate(RACE_ORDER)}
    return sorted(found, key=lambda cd: (rank.get(cd[0], len(rank)), cd[0]))


def draw_race(docs, out_path):
    runs = race_docs(docs)
    if not any(case == "solution" for case, _ in runs):
        raise FigureError("no lab02-solution.json: the race figure needs the solution's run")
    counts = [(case, race_counts(doc, "lab02-%s.json" % case)) for case, doc in runs]
    # The time order is drawn for the two runs the race is about: the fix and the race left in.
    timed = [(case, doc) for case, doc in runs if has_timeline(doc) and case in ("solution", "race-left-in")]
    width = 840  # room for the right-hand legend
    outcome_h = 84 + len(runs) * 30 + 30
    timeline_rows = 4 + 2 * len(timed) if timed else 0
    timeline_h = (70 + timeline_rows * 26 + 30) if timed else 60
    svg = Svg(width, outcome_h + timeline_h, "Lab 02: the race of Part A, from recorded runs")
    ref = dict(runs)["solution"]
    svg.text("heading", 20, 24, RACE_HEADING, 14, weight="bold")
    # Two lines: the harness's options do not fit beside the device in the figure's width.
    svg.text("caption", 20, 42, "%s; one run per submission, with" % device_words(ref), 11, fill=MUTED)
    svg.text("caption", 20, 56, params_words(ref), 11, fill=MUTED)
    race_outcome_panel(svg, counts, 70, 220, width - 170)

    y0 = outcome_h + 10
    if not timed:
        svg.text("heading", 20, y0 + 8, "Time order: not in these documents", 14, weight="bold")
        svg.text("note", 20, y0 + 28, "These runs predate the harness's %globaltimer stamps; `make figures` on a GPU "
                 "redraws this figure with the timeline.", 11, fill=MUTED)
        svg.write(out_path)
        return {"runs": len(runs), "timeline_rows": 0}

    probe_doc = dict(timed).get("solution", timed[0][1])
    rows = race_time_rows(probe_doc, timed)
    ends = [doc["timeline"]["submission"]["tree_done"] for _, doc in timed] + [probe_doc["timeline"]["probe"]["tree_done"]]
    race_time_panel(svg, rows, ends, probe_doc["timeline"]["submission"]["tree_done"], "solution's launch tree done",
                    y0, width, TIME_CAPTION % "", "The probe is the race written by the kit, with the parent's steps "
                    "stamped; the other rows are the submissions' children and tail launches.")
    svg.write(out_path)
    return {"runs": len(runs), "timeline_rows": len(rows)}


# ---------------------------------------------------------------- Lab 04: the curves

def draw_curves_figure(docs, out_path):
    doc = docs.get(("04", "solution"))
    if doc is None:
        raise FigureError("no lab04-solution.json: the curves are drawn from the solution's run")
    if "figure" not in doc:
        raise FigureError("lab04-solution.json holds no curves (its run had no --figure-lines)")
    return draw_curves(doc, out_path, "the solution", "solution")


# ---------------------------------------------------------------- Lab 05: kernel timelines

def draw_timelines_figure(docs, out_path):
    doc = docs.get(("05", "solution"))
    if doc is None:
        raise FigureError("no lab05-solution.json: the timelines are drawn from the solution's run")
    try:
        return draw_timelines(doc, out_path, "the solution", "solution", TIMELINE_WIDTH)
    except FigureError as e:
        raise FigureError("lab05-solution.json: %s" % e)


# ---------------------------------------------------------------- Lab 06: what an allocation costs

def draw_allocator(docs, out_path):
    doc = docs.get(("06", "solution"))
    if doc is None:
        raise FigureError("lab06-solution.json is missing")
    t = doc.get("timing") or {}
    if not t.get("ran"):
        raise FigureError("lab06-solution.json holds no timing (the harness ran with its timing off)")
    groups = [
        ("Part A: %s objects of %d bytes, one per thread" % ("{:,}".format(t["objects"]), t["object_bytes"]), [
            ("per-object device malloc (kit)", t["per_object_malloc"]["median_ms"], RED),
            ("one bulk malloc, carved into slots (kit)", t["bulk"]["median_ms"], BLUE),
            ("pool_alloc over a bulk allocation (solution)", t["pool"]["median_ms"], GREEN)]),
        ("Part B: %s counter requests, %d per thread of a full grid" % ("{:,}".format(t["take_requests"]),
                                                                      t["take_rounds"]), [
            ("one atomic per thread (kit)", t["take_per_thread"]["median_ms"], RED),
            ("warp-aggregated counter_take (solution)", t["take_student"]["median_ms"], GREEN)]),
    ]
    values = [v for _, bars in groups for _, v, _ in bars]
    if min(values) <= 0:
        raise FigureError("lab06-solution.json has a time of zero")
    low = 10 ** math.floor(math.log10(min(values)))
    high = 10 ** math.ceil(math.log10(max(values)))
    width, left, right = 840, 330, 120
    span = width - left - right
    row, bar_h = 30, 18
    height = 110 + sum(40 + row * len(bars) for _, bars in groups) + 50
    svg = Svg(width, height, "Lab 06: what an allocation costs, from a recorded run")

    def x_of(ms):
        return left + span * (math.log10(ms) - math.log10(low)) / (math.log10(high) - math.log10(low))

    svg.text("heading", 20, 28, "What an allocation costs (median ms, log scale)", 16, weight="bold")
    svg.text("caption", 20, 48, "%s; the solution's run with the harness's defaults, median of %d"
             % (device_words(doc), t["repeats"]), 11, fill=MUTED)
    y = 80
    decade = low
    while decade <= high * 1.0001:
        svg.line("axis-tick", x_of(decade), y - 8, x_of(decade), height - 40, stroke="#dddddd")
        svg.text("axis-label", x_of(decade), y - 12, ("%g ms" % decade), 11, anchor="middle", fill=MUTED)
        decade *= 10
    for title, bars in groups:
        y += 22
        svg.text("group", 20, y, title, 13, weight="bold")
        y += 14
        for label, ms, colour in bars:
            svg.text("bar-label", left - 8, y + bar_h - 5, label, 12, anchor="end")
            svg.rect("bar", left, y, x_of(ms) - left, bar_h, colour, tip="%s: %.4g ms" % (label, ms))
            svg.text("bar-value", x_of(ms) + 6, y + bar_h - 5,
                     ("{:,.0f} ms".format(ms) if ms >= 100 else "%.3g ms" % ms), 11)
            y += row
        ratio = bars[0][1] / bars[-1][1]
        svg.text("ratio", 20, y + 2, "%s / %s: %s" % (bars[0][0].split(" (")[0], bars[-1][0].split(" (")[0],
                                                     "{:,.0f}x".format(ratio) if ratio >= 100 else "%.1fx" % ratio),
                 11, fill=MUTED)
        y += 8
    svg.text("note", 20, height - 16, "Red: the kit's slow baseline; blue: one bulk allocation; green: the "
             "reference solution's pool and counter. Same run, same GPU.", 11, fill=MUTED)
    svg.write(out_path)
    return {"bars": len(values)}


# ---------------------------------------------------------------- Lab 07: the Mandelbrot set by subdivision

def draw_mandelbrot_figure(docs, out_path):
    """Lab 07's picture as a run's picture is drawn (draw_mandelbrot_run: the dwell of every pixel the
    document's "figure" holds, the leaf rectangles outlined, a dwell legend), an SVG that holds the PNG;
    the PNG drawn beside it on the way is not kept."""
    doc = docs.get(("07", "solution"))
    if doc is None:
        raise FigureError("no lab07-solution.json: the picture is drawn from the solution's run")
    png_path = os.path.splitext(out_path)[0] + ".png"
    try:
        facts = draw_mandelbrot_run(doc, png_path, case="solution")
    except FigureError as e:
        raise FigureError("lab07-solution.json: %s" % e)
    os.remove(png_path)
    return facts


# ---------------------------------------------------------------- Lab 07: where each version wins

# This figure is drawn from the bench's data, not from a result document: `make bench LAB=07` writes
# handouts/figures/data/bench-07.json (the reference solution as "CDP (yours)"), and the same bench of
# the one-thread-launches alternative wrote bench-07-one-thread-launches.json.
BENCH_DATA_DIR = os.path.join(KIT_ROOT, "handouts", "figures", "data")
BENCH_07_FILES = ("bench-07.json", "bench-07-one-thread-launches.json")
# The four versions timed in one run: (key of its time, name, cell fill, cell stroke).
BENCH_07_VERSIONS = (("exhaustive_ms", "exhaustive", "#e6e6e6", MUTED), ("worklist_ms", "worklist", "#d6e4f5", BLUE),
                     ("published_ms", "published", "#f8e3bd", AMBER), ("cdp_ms", "CDP", "#d5ecd9", GREEN))
BENCH_07_LEGEND = ("the exhaustive kernel", "the host worklist", "the published design",
                   "the reference solution, the lab's contract")


def bench_07_data(data_dir=BENCH_DATA_DIR):
    """(the reference solution's bench document, {(view, zoom, max_dwell, side): the alternative's row})."""
    loaded = []
    for name in BENCH_07_FILES:
        path = os.path.join(data_dir, name)
        if not os.path.exists(path):
            raise FigureError("no %s: the picture is drawn from make bench LAB=07's data" % shown_path(path))
        with open(path) as f:
            loaded.append(json.load(f))
    doc, other = loaded
    alternative = {(r["view"], r["zoom"], r["max_dwell"], r["side"]): r for r in other["bench"]}
    for r in doc["bench"]:
        if (r["view"], r["zoom"], r["max_dwell"], r["side"]) not in alternative:
            raise FigureError("%s has no row for %s, zoom %d, max dwell %d, %d x %d" % (
                BENCH_07_FILES[1], r["view"], r["zoom"], r["max_dwell"], r["side"], r["side"]))
    return doc, alternative


def bench_07_winner(row):
    """(index in BENCH_07_VERSIONS of the fastest version, its margin: the second-fastest time over its own)."""
    times = sorted((row[key], i) for i, (key, _, _, _) in enumerate(BENCH_07_VERSIONS))
    return times[0][1], times[1][0] / times[0][0], times[1][1]


def draw_where_cdp_wins(docs, out_path, data_dir=BENCH_DATA_DIR):
    """Lab 07: a cell per region (rows) and image size (columns), coloured by the fastest of the four
    versions of one bench run, with its margin over the next, the reference CDP's exhaustive / CDP and
    the one-thread-launches alternative's (from its own run). docs is not read: see BENCH_DATA_DIR."""
    doc, alternative = bench_07_data(data_dir)
    rows = doc["bench"]
    regions, sizes = [], sorted({r["side"] for r in rows})
    for r in rows:
        if (r["view"], r["zoom"], r["max_dwell"]) not in regions:
            regions.append((r["view"], r["zoom"], r["max_dwell"]))
    cell = {(r["view"], r["zoom"], r["max_dwell"], r["side"]): r for r in rows}
    left, cell_w, cell_h, gap, top = 190, 206, 64, 6, 104
    width = left + len(sizes) * (cell_w + gap) + 14
    height = top + len(regions) * (cell_h + gap) + 116
    svg = Svg(width, height, "Lab 07: the fastest version, region by image size, from make bench LAB=07")
    svg.text("heading", 20, 26, "Lab 07: which version was fastest, by region and image size", 15, weight="bold")
    svg.text("caption", 20, 45, "%s; make bench LAB=07, medians of %d runs, max_depth %d, min_side %d"
             % (device_words(doc), doc["repeats"], doc["max_depth"], doc["min_side"]), 11, fill=MUTED)
    svg.text("caption", 20, 60, "From handouts/figures/data/%s and %s (not from result documents)." % BENCH_07_FILES,
             11, fill=MUTED)
    for c, side in enumerate(sizes):
        svg.text("column", left + c * (cell_w + gap) + cell_w / 2, top - 10, "{:,} x {:,}".format(side, side), 12,
                 anchor="middle", weight="bold")
    wins = [0] * len(BENCH_07_VERSIONS)
    for k, (view, zoom, max_dwell) in enumerate(regions):
        y = top + k * (cell_h + gap)
        svg.text("region", 20, y + 26, "%s, zoom %d" % (view, zoom), 12, weight="bold")
        svg.text("region", 20, y + 42, "max dwell {:,}".format(max_dwell), 11, fill=MUTED)
        for c, side in enumerate(sizes):
            x = left + c * (cell_w + gap)
            r = cell.get((view, zoom, max_dwell, side))
            if r is None:
                svg.rect("missing", x, y, cell_w, cell_h, "white", stroke=MUTED, dash="3,3")
                continue
            best, margin, second = bench_07_winner(r)
            wins[best] += 1
            key, name, fill, stroke = BENCH_07_VERSIONS[best]
            alt = alternative[(view, zoom, max_dwell, side)]
            ratio, alt_ratio = r["exhaustive_ms"] / r["cdp_ms"], alt["exhaustive_ms"] / alt["cdp_ms"]
            svg.rect("win-" + name.lower(), x, y, cell_w, cell_h, fill, stroke=stroke, rx=3,
                     tip="%s: %.3f ms; %s" % (name, r[key], ", ".join(
                         "%s %.3f ms" % (n, r[k]) for k, n, _, _ in BENCH_07_VERSIONS if k != key)))
            svg.text("winner", x + 8, y + 16, name, 12, weight="bold")
            svg.text("margin", x + 8, y + 31, "%.2fx faster than %s" % (margin, BENCH_07_VERSIONS[second][1]), 11)
            svg.text("ratio", x + 8, y + 46, "exhaustive / CDP: %.2fx" % ratio, 11,
                     weight="bold" if ratio > 1 else "normal")
            svg.text("ratio-alternative", x + 8, y + 59, "thread 0 launching all: %.2fx" % alt_ratio, 11,
                     fill=MUTED)
    y = top + len(regions) * (cell_h + gap) + 14
    for i, (_, name, fill, stroke) in enumerate(BENCH_07_VERSIONS):
        x, y_i = 20 + (i % 2) * 400, y + (i // 2) * 20
        svg.rect("legend", x, y_i, 14, 14, fill, stroke=stroke, rx=2)
        svg.text("legend", x + 20, y_i + 11, "%s: %s, fastest in %d of %d" % (name, BENCH_07_LEGEND[i], wins[i],
                                                                           len(rows)), 11)
    y += 20
    svg.text("note", 20, y + 36, "Each cell: the fastest of the four, timed in one run, and how much faster it was than "
             "the next; exhaustive / CDP: the exhaustive", 11, fill=MUTED)
    svg.text("note", 20, y + 51, "kernel's time over the reference solution's (bold where CDP beat it); last, that "
             "ratio for the one-thread-launches alternative, in its own run.", 11, fill=MUTED)
    svg.write(out_path)
    return {"cells": sum(wins), "wins": " ".join("%s=%d" % (n, w)
                                                 for (_, n, _, _), w in zip(BENCH_07_VERSIONS, wins))}


# ---------------------------------------------------------------- Lab 08: a loop of rounds on the GPU

LOOP_FILL = "#eef3f9"   # a graph, or a WHILE node's body
LOOP_NODE = "#d9e2ec"   # a kernel node


def _loop_panel(svg, y, heading, container, nodes, back_label):
    """One way to loop on the GPU: the host's one launch, the graph (container: its label), its two
    kernel nodes (nodes: [(line, ...)] each), and the arrow back that starts the next round."""
    svg.text("heading", 20, y, heading, 13, weight="bold")
    top = y + 14
    svg.rect("host", 20, top + 34, 150, 46, "white", stroke=MUTED, rx=4)
    svg.text("label", 95, top + 53, "the host:", 11, anchor="middle")
    svg.text("label", 95, top + 69, "cudaGraphLaunch, once", 11, anchor="middle", mono=True)
    svg.line("arrow", 170, top + 57, 206, top + 57, arrow=True)
    svg.rect("graph", 210, top, 610, 128, LOOP_FILL, stroke=BLUE, rx=6, dash="5,3")
    svg.text("label", 222, top + 18, container, 11, fill=BLUE)
    x = 236
    widths = (200, 346)
    for k, (lines, w) in enumerate(zip(nodes, widths)):
        svg.rect("node", x, top + 30, w, 54, LOOP_NODE, stroke=INK, rx=4)
        for i, text in enumerate(lines):
            svg.text("label", x + 10, top + 47 + 15 * i, text, 11, mono=(i > 0))
        if k == 0:
            svg.line("arrow", x + w, top + 57, x + w + 24, top + 57, arrow=True)
        x += w + 28
    # Back from the second node to the first: the next round.
    right, left = 236 + 200 + 28 + 173, 236 + 100
    svg.polyline("back", [(right, top + 84), (right, top + 108), (left, top + 108)], INK, 1.0)
    svg.line("arrow", left, top + 108, left, top + 88, arrow=True)
    svg.text("label", left + 12, top + 122, back_label, 11)
    return top + 128


def draw_graph_loops(docs, out_path):
    """Lab 08, Parts B and C: a loop of rounds, each a refine_round kernel and a one-thread decide
    kernel, kept on the GPU after one host launch: a WHILE node whose body is the round, and a
    device graph whose last kernel tail-launches the graph again. A diagram: it draws no document."""
    svg = Svg(840, 392, "Lab 08: a loop decided on the GPU, with one host launch")
    svg.text("caption", 20, 20, "Each round: refine_round, a thread per line, then one thread that calls end_round "
             "after every block of the round.", 11, fill=MUTED)
    bottom = _loop_panel(svg, 46, "Part B: a WHILE conditional node",
                         "a WHILE node: its body runs while the value is not 0 (cudaGraphCondAssignDefault: 1 at "
                         "each launch)",
                         [("refine_round", "a thread per line"), ("decide, one thread:", "cudaGraphSetConditional(",
                                                         "    handle, end_round(r))")],
                         "read again when the body ends: 1, another round; 0, the node is done")
    _loop_panel(svg, bottom + 36, "Part C: a device graph that relaunches itself",
                "the graph, instantiated with cudaGraphInstantiateFlagDeviceLaunch",
                [("refine_round", "a thread per line"), ("decide, one thread: if end_round(r)",
                                                 "cudaGraphLaunch(cudaGetCurrentGraphExec(),",
                                                 "    cudaStreamGraphTailLaunch)")],
                "a tail launch: the same graph again, once this launch has finished")
    svg.write(out_path)
    return {"panels": 2}


FIGURES = [("01-divergent-counter-grids.svg", draw_grids), ("02-race-timeline.svg", draw_race),
           ("03-recursion-tree.svg", draw_recursion), ("04-bezier-curves.svg", draw_curves_figure),
           ("05-stream-timelines.svg", draw_timelines_figure), ("06-allocator-costs.svg", draw_allocator),
           ("07-mandelbrot.svg", draw_mandelbrot_figure), ("07-where-cdp-wins.svg", draw_where_cdp_wins),
           ("08-graph-loops.svg", draw_graph_loops)]
DIAGRAMS = ("08-graph-loops.svg",)  # figures that draw no document: drawn wherever the tool runs
FROM_DATA = ("07-where-cdp-wins.svg",)  # drawn from handouts/figures/data/, not from documents: wherever it runs


def draw_all(docs, out_dir):
    """Draws every figure; returns the problems (a figure not drawn), each as one line."""
    os.makedirs(out_dir, exist_ok=True)
    problems = []
    for name, draw in FIGURES:
        try:
            summary = draw(docs, os.path.join(out_dir, name))
            print("wrote %s (%s)" % (os.path.join(out_dir, name),
                                     ", ".join("%s %s" % (k, v) for k, v in sorted(summary.items()))))
        except (FigureError, KeyError, TypeError, ValueError) as e:
            problems.append("%s: not drawn: %s" % (name, e))
    return problems


# ---------------------------------------------------------------- make figures (needs a GPU)

RUN_TIMEOUT = 120        # the solution's and the alternatives' runs: ample for every recorded case
WRONG_RUN_TIMEOUT = 60   # a known-wrong submission's run: shorter, for the ones that hang on purpose


def submissions(lab):
    """(case, folder, known wrong) of the solution and every known-wrong and alternative submission of a lab."""
    found = [("solution", paths.solution_dir(lab), False)]
    for kind, kind_dir in (("incorrect", paths.incorrect_dir(lab)), ("alternative", paths.alternative_dir(lab))):
        found += [(case, os.path.join(kind_dir, case), kind == "incorrect") for case in paths.case_folders(kind_dir)]
    return found


def record_documents(docs_dir, work, labs=None):
    """Builds every submission of every lab and runs it on the lab's recorded case, writing each result
    document to docs_dir/labNN-CASE.json. Returns the problems: a build or run of the solution or an
    alternative that left no document. A known-wrong submission may fail to build (a refused flag) or
    to run (a deliberate hang): that is printed, not counted."""
    from gradelib import build, harness, registry  # the kit's own, standard library only
    problems = []
    jobs = []
    for lab in registry.all_labs().values():
        if labs and lab.number not in labs:
            continue
        build.lab_vars(lab.name)  # read once, before the builds run side by side
        for case, folder, wrong in submissions(lab.name):
            jobs.append((lab, case, folder, wrong, os.path.join(work, lab.name, case)))
    build.cuda_arch()
    # Builds side by side (they share the kit's objects safely); runs one at a time, on an idle GPU.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        built = list(pool.map(lambda job: harness.build_program(job[0], job[2], job[4]), jobs))

    def failed(wrong, line):
        if wrong:
            print(line + "\n(a known-wrong submission: no document kept)")
        else:
            problems.append(line)

    for (lab, case, _, wrong, _), (program, made) in zip(jobs, built):
        where = "lab %s, %s" % (lab.number, case)
        if program is None:
            failed(wrong, "%s: build failed:\n%s" % (where, build.compiler_errors(made.output)))
            continue
        timeout = WRONG_RUN_TIMEOUT if wrong else RUN_TIMEOUT
        ran, doc, why = harness.run(lab, program, lab.recorded_case, timeout)
        if doc is None:
            failed(wrong, "%s: no result document: %s (the run %s)\n%s"
                   % (where, why, ran.describe(timeout), ran.output[-2000:]))
            continue
        path = os.path.join(docs_dir, "lab%s-%s.json" % (lab.number, case))
        with open(path, "w") as f:  # the document as the grader read it from the harness's channel
            json.dump(doc, f, indent=1)
            f.write("\n")
        print("ran %s: %s%s" % (where, path, "" if ran.ok else " (the run %s)" % ran.describe(timeout)))
    return problems


def shown_path(path):
    """A path as a person reads it: relative to the kit when inside it."""
    rel = os.path.relpath(path, KIT_ROOT)
    return path if rel.startswith("..") else rel


def make_figures(out_dir, docs_dir, labs=None):
    from gradelib import exits, gpu as gpu_mod  # the kit's own, standard library only
    gpu = gpu_mod.detect()
    if not gpu.available:
        print("make figures needs a CUDA GPU, and this machine has none usable (%s); the figures in %s "
              "are left as they are." % (gpu.reason.splitlines()[0], shown_path(out_dir)))
        return exits.NOT_RUN
    print("GPU: %s (compute capability %s)" % (gpu.name, gpu.compute_capability))
    work = os.path.join(KIT_ROOT, "build", "figures")
    os.makedirs(docs_dir, exist_ok=True)
    for old in glob.glob(os.path.join(docs_dir, "lab[0-9][0-9]-*.json")):
        os.remove(old)
    problems = record_documents(docs_dir, work, labs)
    staged = os.path.join(work, "drawn")
    shutil.rmtree(staged, ignore_errors=True)
    recorded = os.path.join(KIT_ROOT, "grader", "tests", "data", "recorded")  # the other labs' documents
    docs = {k: d for k, d in load_docs(recorded).items() if k[0] not in labs} if labs else {}
    docs.update(load_docs(docs_dir))
    problems += draw_all(docs, staged)
    if problems:
        for p in problems:
            print(p)
        print("make figures: %d problem(s); the figures in %s are left as they are"
              % (len(problems), shown_path(out_dir)))
        return 1
    os.makedirs(out_dir, exist_ok=True)
    for name, _ in FIGURES:
        shutil.copy(os.path.join(staged, name), os.path.join(out_dir, name))
        print("updated %s" % shown_path(os.path.join(out_dir, name)))
    print("the result documents are in %s. Review the figures and the captions in the handouts, and copy the "
          "documents into grader/tests/data/recorded/ with them: the kit's tests check that the committed "
          "figures are drawn from the recorded documents." % shown_path(docs_dir))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", help="folder of labNN-CASE.json result documents to draw from")
    parser.add_argument("--gpu", action="store_true", help="run the harnesses on this machine's GPU first")
    parser.add_argument("--docs-out", help="with --gpu: where the result documents go (default build/figures/docs)")
    parser.add_argument("--out", help="folder to write the figures into (with --gpu: default handouts/figures)")
    parser.add_argument("--labs", help="with --gpu: only these labs' documents (NN,NN)")
    args = parser.parse_args(argv)
    labs = [n.strip() for n in args.labs.split(",")] if args.labs else None
    if args.gpu:
        if args.docs:
            parser.error("--gpu makes its own documents: give --docs-out DIR, not --docs")
        return make_figures(os.path.abspath(args.out or os.path.join(KIT_ROOT, "handouts", "figures")),
                            os.path.abspath(args.docs_out or os.path.join(KIT_ROOT, "build", "figures", "docs")), labs)
    if args.docs_out or labs:
        parser.error("--docs-out and --labs go with --gpu")
    if not args.docs or not args.out:
        parser.error("give --docs DIR --out DIR, or --gpu")
    problems = draw_all(load_docs(args.docs), args.out)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
