#!/usr/bin/env python3
"""Draws every figure of the handouts from harness result documents (JSON), so that every picture
shows a real run: the harnesses write data, this module draws. Standard library only.

  python3 tools/draw_figures.py --docs DIR --out DIR     draw from result documents already made
  python3 tools/draw_figures.py --gpu [--docs-out DIR] [--out DIR]
        `make figures`: on a GPU machine, build every lab's solution, known-wrong and alternative
        submissions, run each on its lab's recorded case (the rubric's recorded_case), write the
        documents to --docs-out (default build/figures/docs/) and redraw --out (default
        handouts/figures/). Without a GPU it says so and exits 77, touching nothing.

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
                         thread against the warp-aggregated counter (Part B), from the solution's run.

Each figure names the GPU and the runs it was drawn from. Exit status 1 when a document a figure
needs is missing or does not hold what the figure needs; each problem is printed.

draw_run_figure() draws the one-run pictures of Labs 04 and 05 (RUN_FIGURES) from a student's own
run: `make run LAB=05`, and `make run LAB=04` with --figure-lines, write them next to the program.
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
from xml.sax.saxutils import escape

FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
MONO = "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\""
INK = "#222222"
MUTED = "#777777"
BLUE = "#3b6fb6"
RED = "#c8453b"
GREEN = "#3c8d4f"
AMBER = "#d9962b"


class FigureError(ValueError):
    """A document a figure needs is missing, or lacks what the figure needs."""


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


class Svg:
    """A small SVG writer: elements in order, each with a class naming what it shows."""

    def __init__(self, width, height, title):
        self.width, self.height = width, height
        self.parts = ["<title>%s</title>" % escape(title),
                      '<rect class="background" x="0" y="0" width="%d" height="%d" fill="white"/>' % (width, height)]

    def rect(self, cls, x, y, w, h, fill, stroke="none", rx=0, tip=None, dash=None):
        inner = "<title>%s</title>" % escape(tip) if tip else ""
        end = ">%s</rect>" % inner if inner else "/>"
        if dash:
            end = ' stroke-dasharray="%s"%s' % (dash, end)
        self.parts.append('<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="%g" fill="%s" stroke="%s"%s'
                          % (cls, x, y, max(w, 0.0), h, rx, fill, stroke, end))

    def line(self, cls, x1, y1, x2, y2, stroke=INK, width=1.0, dash=None, arrow=False):
        extra = ' stroke-dasharray="%s"' % dash if dash else ""
        extra += ' marker-end="url(#arrow)"' if arrow else ""
        self.parts.append('<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%g"%s/>'
                          % (cls, x1, y1, x2, y2, stroke, width, extra))

    def circle(self, cls, x, y, r, fill, tip=None):
        end = "><title>%s</title></circle>" % escape(tip) if tip else "/>"
        self.parts.append('<circle class="%s" cx="%.1f" cy="%.1f" r="%g" fill="%s"%s' % (cls, x, y, r, fill, end))

    def polyline(self, cls, points, stroke, width=1.0):
        self.parts.append('<polyline class="%s" fill="none" stroke="%s" stroke-width="%g" points="%s"/>'
                          % (cls, stroke, width, " ".join("%.1f,%.1f" % p for p in points)))

    def text(self, cls, x, y, s, size=12, anchor="start", fill=INK, weight="normal", mono=False):
        self.parts.append('<text class="%s" x="%.1f" y="%.1f" font-size="%g" text-anchor="%s" fill="%s" font-weight="%s" %s>%s</text>'
                          % (cls, x, y, size, anchor, fill, weight, MONO if mono else FONT, escape(s)))

    def write(self, path):
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">\n'
                '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
                'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="%s"/></marker></defs>\n'
                % (self.width, self.height, self.width, self.height, INK))
        with open(path, "w") as f:
            f.write(head + "\n".join(self.parts) + "\n</svg>\n")


def cuda_version(number):
    """13000 -> '13.0' (the encoding of cudaRuntimeGetVersion and cudaDriverGetVersion)."""
    return "%d.%d" % (number // 1000, number % 1000 // 10) if number else "?"


def device_words(doc):
    dev = doc.get("device", {})
    runtime = dev.get("runtime_version")
    cuda = " with CUDA %s" % cuda_version(runtime) if runtime else ""
    return "%s (compute capability %s.%s)%s" % (dev.get("name", "unknown GPU"), dev.get("cc_major", "?"),
                                                dev.get("cc_minor", "?"), cuda)


def params_words(doc):
    """The run's parameters as the harness's options: {"child_spin_us": 0} -> "--child-spin-us 0"."""
    return " ".join("--%s %s" % (k.replace("_", "-"), v) for k, v in doc.get("params", {}).items())


def case_words(case):
    return "the solution's run" if case == "solution" else "the run of %s" % case


# ---------------------------------------------------------------- Lab 01: the parent grid and its children

DARK = "#1f4e79"
LANE = "#d9e2ec"
PANEL = "#f7f7f7"
CHILD = "#eef5ee"
MAX_BLOCKS_DRAWN = 6  # more: blocks 0, 1, ..., the last two, with an ellipsis between
MAX_WARPS_DRAWN = 4   # more: w0, w1, ..., the last


def drawn_indices(n, most):
    """The indices drawn out of n, None where an ellipsis stands: all of them up to most."""
    if n <= most:
        return list(range(n))
    return [0, 1, None] + list(range(n - (most - 3), n))


def draw_grids(docs, out_path):
    doc = docs.get(("01", "solution"))
    if doc is None:
        raise FigureError("no lab01-solution.json: the grids are drawn from the solution's run")
    k, m, n = doc["params"]["K"], doc["params"]["M"], doc["params"]["N"]
    shapes = doc["child_shapes"]
    one_child_per_block = (doc["child_grids"] == k and doc["child_grids_other_shapes"] == 0 and len(shapes) == 1
                           and shapes[0]["grid"] == [1, 1, 1] and shapes[0]["block"] == [m, 1, 1]
                           and shapes[0]["count"] == k)
    if not one_child_per_block:
        raise FigureError("lab01-solution.json: the run did not launch one child grid of <<<1, %d>>> per block "
                          "(child_grids %s, shapes %s)" % (m, doc["child_grids"], shapes))
    log = doc["launch_log"]
    blocks = drawn_indices(k, MAX_BLOCKS_DRAWN)
    warps = drawn_indices(m, MAX_WARPS_DRAWN)
    col_w, gap, left = 170, 15, 20
    width = max(660, left * 2 + len(blocks) * (col_w + gap) - gap + 20)  # + room for the last launch label
    top = 62
    block_h = 42 + len(warps) * 20 + 28
    child_y = top + block_h + 60
    child_h = 66
    text_y = child_y + child_h + 24
    height = text_y + 96
    svg = Svg(width, height, "Lab 01: a parent grid of %d blocks; thread 0 of each block launches one child grid of "
                             "one block of %d threads, from a recorded run" % (k, m))
    svg.text("heading", left, 24, "Parent grid: diverge_cta<<<K, 32*M>>>(foo, N) with K = %d, M = %d, N = %d"
             % (k, m, n), 14, weight="bold")
    svg.text("caption", left, 42, "%s; %s with %s" % (device_words(doc), case_words("solution"), params_words(doc)),
             11, fill=MUTED)
    lane_w = 112
    for column, b in enumerate(blocks):
        x = left + column * (col_w + gap)
        if b is None:
            svg.text("ellipsis", x + col_w / 2, top + block_h / 2, "\u2026", 22, "middle")
            svg.text("ellipsis", x + col_w / 2, child_y + child_h / 2 + 6, "\u2026", 22, "middle")
            continue
        svg.rect("block", x, top, col_w, block_h, PANEL, stroke=INK, rx=6, tip="block %d of %d: %d threads, %d warps"
                 % (b, k, 32 * m, m))
        svg.text("block-label", x + 10, top + 18, "block %d" % b, 11, weight="bold")
        svg.text("block-size", x + col_w - 10, top + 18, "%d threads" % (32 * m), 10, "end")
        for row, w in enumerate(warps):
            y = top + 30 + row * 20
            if w is None:
                svg.text("ellipsis", x + 10 + 36 + lane_w / 2, y + 10, "\u22ee", 14, "middle")
                continue
            svg.text("warp-label", x + 10, y + 10, "w%d" % w, 10)
            svg.rect("warp", x + 46, y, lane_w, 12, LANE, stroke="#555555",
                     tip="block %d, warp %d: lane 0 is its leader" % (b, w))
            svg.rect("leader", x + 46, y, lane_w / 32.0, 12, DARK, tip="block %d, thread %d: a leader" % (b, 32 * w))
        svg.text("shared-x", x + 10, top + block_h - 12, "shared x: thread 0 sets x = 5", 10)
        lx = x + 46 + lane_w / 64.0
        svg.line("launch", lx, top + block_h, lx, child_y - 2, INK, 1.5, arrow=True)
        svg.text("launch-label", lx + 8, top + block_h + 25, "thread 0 launches", 10)
        svg.text("launch-label", lx + 8, top + block_h + 38, "+ KIT_CHECK_LAUNCH()", 10, mono=True)
        svg.rect("child-grid", x, child_y, col_w, child_h, CHILD, stroke=INK, rx=6,
                 tip="the child grid of block %d: <<<1, %d>>>" % (b, m), dash="5,3")
        svg.text("child-label", x + 10, child_y + 17, "child grid: 1 block", 11, weight="bold")
        svg.rect("child-block", x + 46, child_y + 27, lane_w, 12, DARK, tip="%d threads, all active" % m)
        svg.text("child-size", x + 46 + lane_w / 2, child_y + 37, "%d threads, all active" % m, 10, "middle",
                 fill="white")
        svg.text("child-work", x + 10, child_y + 57, "entry_work(foo, %d) each" % n, 10, mono=True)
    svg.text("launches", left, text_y, "Each launch: entry_kernel<<<1, M>>>(foo, n), M = blockDim.x / 32 = %d. "
             "%d child grids in all; %d of %d launches checked, %d failed." % (m, doc["child_grids"], log["checked"],
                                                                             doc["child_grids"], log["failed"]), 11)
    svg.rect("legend-key", left, text_y + 12, 10, 12, DARK)
    svg.text("legend", left + 18, text_y + 22, "leader lane (threadIdx.x % 32 == 0) of each warp; in a child grid, "
             "every thread is active", 11)
    svg.rect("legend-key", left, text_y + 32, 10, 12, LANE, stroke="#555555")
    svg.text("legend", left + 18, text_y + 42, "other lanes: in the flat kernel they idle, masked off, while their "
             "leader runs the N-step loop", 11)
    svg.text("note", left, text_y + 66, "The parent grid completes only after all its child grids complete; every "
             "parent thread still reaches __syncthreads(),", 11)
    svg.text("note", left, text_y + 80, "then the M\u22121 leaders other than thread 0 add x to foo: foo = %d (the "
             "kit's flat version: %d)." % (doc["student_foo"], doc["reference_foo"]), 11)
    svg.write(out_path)
    return {"blocks": len([b for b in blocks if b is not None]), "warps": len([w for w in warps if w is not None]),
            "child_grids": doc["child_grids"]}


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
    svg.text("depth-label", 20, 56, "depth", 10, fill=MUTED)
    anchors = {}  # (depth, chain) -> (x of thread 0's centre, bottom y)
    for depth, grids, blocks, threads in levels:
        y = 60 + depth * row_h
        svg.text("depth-label", 34, y + 14, "%d" % depth, 11, "end", MUTED)
        if depth == 0:
            gx = column_x[0] - 6
            gw = column_x[-1] + block_w + 6 - gx
            svg.rect("grid", gx, y - 6, gw, cell + 32, "none", stroke=INK, rx=6,
                     tip="depth 0: 1 grid of %d blocks of %d threads" % (blocks, threads))
            for b in range(blocks):
                bx = column_x[b]
                svg.rect("block", bx, y, block_w, cell + 2 * gap, "#eef3fb", stroke=BLUE, rx=3)
                for t in range(threads):
                    svg.rect("thread", bx + gap + t * (cell + gap), y + gap, cell, cell,
                             BLUE if t == 0 else "#9fbbe0", tip="depth 0, block %d, thread %d" % (b, t))
                svg.text("block-label", bx + block_w / 2, y + cell + 20, "block %d" % b, 10, "middle", MUTED)
                anchors[(0, b)] = (bx + gap + cell / 2, y + cell + gap)
        else:
            for c in range(grids):
                bx = column_x[c] if c < len(column_x) else column_x[-1]
                w = threads * (cell + gap) + gap
                svg.rect("grid", bx - 4, y - 4, w + 8, cell + 2 * gap + 8, "none", stroke=INK, rx=6,
                         tip="depth %d: a grid of 1 block of %d threads" % (depth, threads))
                svg.rect("block", bx, y, w, cell + 2 * gap, "#eef3fb", stroke=BLUE, rx=3)
                for t in range(threads):
                    svg.rect("thread", bx + gap + t * (cell + gap), y + gap, cell, cell,
                             BLUE if t == 0 else "#9fbbe0", tip="depth %d, block 0, thread %d" % (depth, t))
                parent = anchors.get((depth - 1, c))
                if parent:
                    svg.line("launch", parent[0], parent[1] + 1, bx + gap + cell / 2, y - 5, INK, 1.2, arrow=True)
                anchors[(depth, c)] = (bx + gap + cell / 2, y + cell + gap)
        svg.text("level-note", width - 20, y + 14, "%d grid%s x %d block%s x %d thread%s" % (
            grids, "" if grids == 1 else "s", blocks, "" if blocks == 1 else "s", threads, "" if threads == 1 else "s"),
            11, "end", MUTED)
    svg.text("legend", 20, tree_h - 22, "dark cell: thread 0, the one launcher of its block; arrow: its launch.", 10,
             fill=MUTED)
    svg.text("legend", 20, tree_h - 9, "The records hold depth, block and thread only, so each chain is drawn under "
             "the top-level block that starts it.", 10, fill=MUTED)

    # Part B: levels that ran against the pending-launch limit.
    y0 = tree_h + 16
    svg.text("heading", 20, y0 + 8, "Part B: deep_chain, levels that ran, and the pending-launch limit",
             14, weight="bold")
    if chains:
        depth_target = max(doc["params"]["depth"] for _, doc in chains) + 1
        top = max([depth_target] + [doc.get("pending_launch_limit", 0) for _, doc in chains])
        left, right = 190, width - 30
        scale = (right - left) / float(top)
        for i, (case, doc) in enumerate(chains):
            y = y0 + 26 + i * 34
            ran = doc["deep"]["levels_ran"]
            failed = doc["deep"]["launch_log"]["failed"]
            wanted = doc["params"]["depth"] + 1
            svg.text("chain-label", left - 8, y + 14, case, 12, "end")
            svg.rect("chain-wanted", left, y + 2, wanted * scale, 16, "#eeeeee", tip="%d levels asked for" % wanted)
            svg.rect("chain", left, y + 2, ran * scale, 16, GREEN if ran == wanted and not failed else RED,
                     tip="%s: %d of %d levels ran, %d failed launch(es)" % (case, ran, wanted, failed))
            limit = doc.get("pending_launch_limit")
            if limit:
                lx = left + limit * scale
                svg.line("limit", lx, y - 1, lx, y + 21, INK, 2)
            svg.text("chain-value", left + 4, y + 14, "%d of %d levels%s; limit %s" % (
                ran, wanted, ", launch failed" if failed else "", "{:,}".format(limit) if limit else "?"),
                10, fill="white" if ran * scale > 220 else INK)
        ref = chains[0][1]
        svg.text("caption", 20, y0 + 26 + len(chains) * 34 + 12,
                 "Black tick: the pending-launch limit the run set; grey: the levels asked for (0 to --depth).",
                 10, fill=MUTED)
        svg.text("caption", 20, y0 + 26 + len(chains) * 34 + 26, "%s; each run with %s."
                 % (device_words(ref), params_words(ref)), 10, fill=MUTED)
    svg.write(out_path)
    return {"threads": len(solution["hello"]["records"]), "grids": sum(lv[1] for lv in levels),
            "launches": sum(lv[1] for lv in levels[1:]), "chains": len(chains)}


# ---------------------------------------------------------------- Lab 02: the race

RACE_ORDER = ["solution", "race-left-in", "second-write-dropped", "no-barrier", "null-stream-continuation"]


def race_docs(docs):
    found = [(case, doc) for (lab, case), doc in docs.items() if lab == "02" and "race" in doc]
    rank = {c: i for i, c in enumerate(RACE_ORDER)}
    return sorted(found, key=lambda cd: (rank.get(cd[0], len(rank)), cd[0]))


def has_timeline(doc):
    t = doc.get("timeline") or {}
    return bool(t.get("probe")) and bool(t.get("submission"))


def draw_race(docs, out_path):
    runs = race_docs(docs)
    if not any(case == "solution" for case, _ in runs):
        raise FigureError("no lab02-solution.json: the race figure needs the solution's run")
    for case, doc in runs:
        r = doc["race"]
        if r["saw_first"] + r["saw_second"] + r["saw_other"] != r["parents"]:
            raise FigureError("lab02-%s.json: the children's counts do not add up to the parents" % case)
    # The time order is drawn for the two runs the race is about: the fix and the race left in.
    timed = [(case, doc) for case, doc in runs if has_timeline(doc) and case in ("solution", "race-left-in")]
    width = 840  # room for the right-hand legend
    outcome_h = 70 + len(runs) * 30 + 30
    timeline_rows = 4 + 2 * len(timed) if timed else 0
    timeline_h = (70 + timeline_rows * 26 + 30) if timed else 60
    svg = Svg(width, outcome_h + timeline_h, "Lab 02: the race of Part A, from recorded runs")
    ref = dict(runs)["solution"]
    svg.text("heading", 20, 24, "Part A: what each child saw in its slot (1: written before the launch, "
             "2: written after it)", 14, weight="bold")
    svg.text("caption", 20, 42, "%s; one run per submission, %s" % (device_words(ref), params_words(ref)),
             11, fill=MUTED)
    left, right = 220, width - 170
    for i, (case, doc) in enumerate(runs):
        r = doc["race"]
        y = 56 + i * 30
        scale = (right - left) / float(r["parents"])
        svg.text("run-label", left - 8, y + 14, case, 12, "end")
        svg.rect("saw-first", left, y, r["saw_first"] * scale, 20, BLUE,
                 tip="%s: %d children saw 1" % (case, r["saw_first"]))
        svg.rect("saw-second", left + r["saw_first"] * scale, y, r["saw_second"] * scale, 20, RED,
                 tip="%s: %d children saw 2" % (case, r["saw_second"]))
        svg.rect("saw-other", left + (r["saw_first"] + r["saw_second"]) * scale, y, r["saw_other"] * scale, 20,
                 MUTED, tip="%s: %d children saw something else" % (case, r["saw_other"]))
        svg.text("run-value", right + 8, y + 14, "%d | %d | %d" % (r["saw_first"], r["saw_second"], r["ended_second"]),
                 11)
    y = 56 + len(runs) * 30 + 8
    svg.rect("legend-key", left, y, 12, 12, BLUE)
    svg.text("legend", left + 16, y + 10, "saw 1 (right)", 11)
    svg.rect("legend-key", left + 120, y, 12, 12, RED)
    svg.text("legend", left + 136, y + 10, "saw 2 (the race lost)", 11)
    svg.text("legend", right + 8, y + 10, "saw 1 | saw 2 | slots ending at 2", 10, fill=MUTED)

    y0 = outcome_h + 10
    if not timed:
        svg.text("heading", 20, y0 + 8, "Time order: not in these documents", 14, weight="bold")
        svg.text("note", 20, y0 + 28, "These runs predate the harness's %globaltimer stamps; `make figures` on a GPU "
                 "redraws this figure with the timeline.", 11, fill=MUTED)
        svg.write(out_path)
        return {"runs": len(runs), "timeline_rows": 0}

    svg.text("heading", 20, y0 + 8, "When each step happened", 14, weight="bold")
    svg.text("caption", 20, y0 + 24, "%globaltimer, microseconds after a kit kernel that ran just before the parent "
             "grid; dot: median, bar: 10th to 90th percentile", 11, fill=MUTED)
    y0 += 18
    rows = []
    probe_doc = dict(timed).get("solution", timed[0][1])
    probe = probe_doc["timeline"]["probe"]
    rows.append(("the kit's probe: parent wrote 1", probe["first_write"], BLUE))
    rows.append(("  launch statement returned", probe["launch_returned"], INK))
    rows.append(("  parent wrote 2", probe["second_write"], RED))
    rows.append(("  child read the slot (%d of %d saw 2)" % (probe["saw_second"], probe["parents"]),
                 probe["child_read"], AMBER))
    for case, doc in timed:
        sub = doc["timeline"]["submission"]
        if sub["read_saw_first"]["count"]:
            rows.append(("%s: child read, saw 1" % case, sub["read_saw_first"], BLUE))
        if sub["read_saw_second"]["count"]:
            rows.append(("%s: child read, saw 2" % case, sub["read_saw_second"], RED))
        if sub["tail_store"]["count"]:
            rows.append(("%s: tail-launched store of 2" % case, sub["tail_store"], GREEN))
    top = max([r[1]["max"] for r in rows if r[1]["count"]] +
              [doc["timeline"]["submission"]["tree_done"] for _, doc in timed] + [probe_doc["timeline"]["probe"]["tree_done"]])
    top_us = max(top / 1000.0, 1e-3)
    left, right = 300, width - 40
    scale = (right - left) / top_us
    ty = y0 + 24
    for k in range(6):
        x = left + k * (right - left) / 5.0
        svg.line("axis-tick", x, ty, x, ty + 6 + len(rows) * 26, "#dddddd", 1)
        svg.text("axis-label", x, ty - 2, "%.1f us" % (top_us * k / 5.0), 10, "middle", MUTED)
    for i, (label, s, colour) in enumerate(rows):
        y = ty + 14 + i * 26
        svg.text("row-label", left - 8, y + 4, label, 11, "end")
        if not s["count"]:
            continue
        svg.line("spread", left + s["p10"] / 1000.0 * scale, y, left + s["p90"] / 1000.0 * scale, y, colour, 4)
        svg.circle("median", left + s["median"] / 1000.0 * scale, y, 5, colour,
                   tip="%s: median %.2f us, %d samples" % (label.strip(), s["median"] / 1000.0, s["count"]))
    done = dict(timed).get("solution", timed[0][1])["timeline"]["submission"]["tree_done"] / 1000.0
    svg.line("tree-done", left + done * scale, ty, left + done * scale, ty + 6 + len(rows) * 26, INK, 1.2, dash="4 3")
    svg.text("tree-done-label", left + done * scale - 4, ty + 6 + len(rows) * 26, "solution's launch tree done",
             10, "end", INK)
    svg.text("caption", 20, ty + 14 + len(rows) * 26 + 10,
             "The probe is the race written by the kit, with the parent's steps stamped; the other rows are the "
             "submissions' children and tail launches.", 10, fill=MUTED)
    svg.write(out_path)
    return {"runs": len(runs), "timeline_rows": len(rows)}


# ---------------------------------------------------------------- Lab 04: the curves

CURVE_SCALE = 720 / 1.1  # pixels per unit: the unit square with a margin of 0.05 on each side


def vertex_colour(count, low, high):
    """Blue for low vertices ... red for high, by the line's count."""
    t = (count - low) / float(high - low) if high > low else 1.0
    red = int(255 * t)
    return "#%02x00%02x" % (red, 255 - red)


def draw_curves(doc, out_path, who="yours", case=None):
    """The curves of one Lab 04 run from its "figure" (--figure-lines N): each line's vertices, joined
    by a grey polyline and coloured by its count, blue (the fewest) to red (max_vertices)."""
    fig = doc.get("figure")
    if not fig or not fig.get("lines"):
        raise FigureError("the document holds no curves (the harness's --figure-lines N puts the first N lines in)")
    low, high = fig["min_vertices"], fig["max_vertices"]
    lines = fig["lines"]

    def px(x, y):
        return (x + 0.05) * CURVE_SCALE, (1.05 - y) * CURVE_SCALE

    width = 720
    plot_h = 1.1 * CURVE_SCALE
    height = int(plot_h + 70)
    svg = Svg(width, height, "Lab 04: %d curves tessellated by %s, vertices coloured by count" % (len(lines), who))
    vertices = 0
    for number, line in enumerate(lines):
        colour = vertex_colour(line["count"], low, high)
        shown_points = [v for v in line["vertices"] if v and None not in v]
        # The grey line joins the vertices near the square; a vertex far off (a wrong one) would
        # only stretch it across the picture.
        near = [px(x, y) for x, y in shown_points if abs(x) < 10 and abs(y) < 10]
        if len(near) > 1:
            svg.polyline("curve", near, "#bbbbbb", 1.3)
        for x, y in shown_points:
            if -0.05 <= x <= 1.05 and -0.05 <= y <= 1.05:
                cx, cy = px(x, y)
                svg.circle("vertex", cx, cy, 2, colour)
                vertices += 1
    svg.text("caption", 20, plot_h + 18, "%d curves; vertex colour: blue = %d vertices ... red = %d"
             % (len(lines), low, high), 13)
    whose = case_words(case) if case else "your run"
    svg.text("caption", 20, plot_h + 38, "%s; %s with %s:" % (device_words(doc), whose, params_words(doc)), 10,
             fill=MUTED)
    svg.text("caption", 20, plot_h + 52, "its first %d lines, each vertex where %s's dynamic version put it (%s)"
             % (len(lines), who, fig.get("from", "cdp")), 10, fill=MUTED)
    svg.write(out_path)
    return {"curves": len(lines), "vertices": vertices}


def draw_curves_figure(docs, out_path):
    doc = docs.get(("04", "solution"))
    if doc is None:
        raise FigureError("no lab04-solution.json: the curves are drawn from the solution's run")
    if "figure" not in doc:
        raise FigureError("lab04-solution.json holds no curves (its run had no --figure-lines)")
    return draw_curves(doc, out_path, "the solution", "solution")


# ---------------------------------------------------------------- Lab 05: kernel timelines

TIMELINE_WIDTH = 1000
TIMELINE_PANEL = 440
TIMELINE_LABEL = 60
TIMELINE_ROW = 14
WORKER_BLUE = "#4a7ebb"
TINY_ORANGE = "#e08a2c"
TIMELINE_PARTS = (("part_a", "Part A", "streams", "stream"), ("part_b", "Part B", "threads", "thread"))


def tick_step(span):
    """A step of 1, 2 or 5 times a power of ten that cuts span into about five parts."""
    step = 1.0
    while step * 10.0 <= span / 5.0:
        step *= 10.0
    if step * 5.0 <= span / 5.0:
        return step * 5.0
    if step * 2.0 <= span / 5.0:
        return step * 2.0
    return step


def timeline_side(doc, part, side):
    """(kernels of the median round, its span in us, kernels at once in it) of one side of a part."""
    s = doc[part][side]
    if "median_timeline" not in s:
        raise FigureError("%s.%s has no median_timeline (written by an older harness)" % (part, side))
    k = s["median_round"]
    return s["median_timeline"], s["spans_us"][k], s["max_concurrent_runs"][k]


def draw_panel(svg, part_title, row_word, n_workers, has_default, side_name, side, scale_us, x0, y0):
    kernels, span, at_once = side
    rows = n_workers + (1 if has_default else 0)
    plot_x, plot_w = x0 + TIMELINE_LABEL, TIMELINE_PANEL - TIMELINE_LABEL
    px_per_us = plot_w / scale_us
    svg.text("panel-title", x0, y0 - 6, "%s, %s: span %.0f us, %g at once" % (part_title, side_name, span, at_once),
             12, weight="bold")
    for row in range(rows):
        y = y0 + row * TIMELINE_ROW
        label = "default" if has_default and row == n_workers else "%s %d" % (row_word, row)
        svg.text("row-label", x0, y + 10, label, 10)
        svg.line("row-line", plot_x, y + TIMELINE_ROW, plot_x + plot_w, y + TIMELINE_ROW, "#eeeeee")
    for kern in kernels:
        row = kern["row"] if kern["worker"] else n_workers
        x = plot_x + kern["start_us"] * px_per_us
        w = max((kern["end_us"] - kern["start_us"]) * px_per_us, 1.5)  # tiny kernels stay visible
        svg.rect("worker" if kern["worker"] else "tiny", x, y0 + row * TIMELINE_ROW + 2, w, TIMELINE_ROW - 4,
                 WORKER_BLUE if kern["worker"] else TINY_ORANGE,
                 tip="%s %d: %.1f to %.1f us" % (row_word if kern["worker"] else "tiny kernel", kern["row"],
                                                 kern["start_us"], kern["end_us"]))
        if "returned_us" in kern:
            back = plot_x + kern["returned_us"] * px_per_us
            svg.line("returned", back, y0 + kern["row"] * TIMELINE_ROW, back, y0 + (kern["row"] + 1) * TIMELINE_ROW,
                     "#000000", 2)
    axis_y = y0 + rows * TIMELINE_ROW + 4
    svg.line("axis", plot_x, axis_y, plot_x + plot_w, axis_y, "#444444")
    step = tick_step(scale_us)
    v = 0.0
    while v <= scale_us + 1e-9:
        x = plot_x + v * px_per_us
        svg.line("axis-tick", x, axis_y, x, axis_y + 4, "#444444")
        svg.text("axis-label", x, axis_y + 14, "%g" % v, 9, "middle")
        v += step
    svg.text("axis-unit", plot_x + plot_w, axis_y + 26, "us", 9, "end")


def draw_timelines(doc, out_path, who="yours", case=None):
    """The median round of each part of one Lab 05 run: the kit's legacy build left, the submission
    right, both sides of a part on one time axis; black ticks: when each Part B thread's wait returned."""
    sides = {}
    heights = []
    for part, _, count_key, _ in TIMELINE_PARTS:
        if part not in doc:
            raise FigureError("the document has no %s" % part)
        sides[part] = [timeline_side(doc, part, side) for side in ("legacy", "student")]
        heights.append((doc["params"][count_key] + (1 if part == "part_a" else 0)) * TIMELINE_ROW + 60)
    height = 30 + sum(heights) + 72
    svg = Svg(TIMELINE_WIDTH, height, "Lab 05: kernel timelines of the median round, the kit's legacy build and %s"
              % who)
    y = 30
    bars = 0
    for (part, title, count_key, row_word), part_h in zip(TIMELINE_PARTS, heights):
        scale = max([1.0] + [span for _, span, _ in sides[part]])
        for s, side in enumerate(sides[part]):
            draw_panel(svg, title, row_word, doc["params"][count_key], part == "part_a",
                       "legacy (kit)" if s == 0 else who, side, scale, 20 + s * (TIMELINE_PANEL + 60), y + 14)
            bars += len(side[0])
        y += part_h
    p = doc["params"]
    svg.text("caption", 20, y + 10, "Kernel timelines measured with %%globaltimer on %s (the median of %d rounds)."
             % (device_words(doc), p["repeats"]), 12)
    svg.text("caption", 20, y + 26, "Blue: a worker kernel; orange: a tiny kernel on the default stream; black tick "
             "(Part B): when that thread's wait returned.", 12)
    svg.text("caption", 20, y + 42, "Left: the kit's legacy build; right: %s. Both sides of a part share one time "
             "axis." % who, 12)
    whose = case_words(case) if case else "your run"
    svg.text("caption", 20, y + 60, "%s with %s" % (whose[0].upper() + whose[1:], params_words(doc)), 10, fill=MUTED)
    svg.write(out_path)
    return {"kernels": bars}


def draw_timelines_figure(docs, out_path):
    doc = docs.get(("05", "solution"))
    if doc is None:
        raise FigureError("no lab05-solution.json: the timelines are drawn from the solution's run")
    try:
        return draw_timelines(doc, out_path, "the solution", "solution")
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
        svg.text("axis-label", x_of(decade), y - 12, ("%g ms" % decade), 10, anchor="middle", fill=MUTED)
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
             "reference solution's pool and counter. Same run, same GPU.", 10, fill=MUTED)
    svg.write(out_path)
    return {"bars": len(values)}


FIGURES = [("01-divergent-counter-grids.svg", draw_grids), ("02-race-timeline.svg", draw_race),
           ("03-recursion-tree.svg", draw_recursion), ("04-bezier-curves.svg", draw_curves_figure),
           ("05-stream-timelines.svg", draw_timelines_figure), ("06-allocator-costs.svg", draw_allocator)]

# Pictures of one run of a lab, drawn for the student by `make run` (grader/kit.py): file name and
# drawing function (document, output path, whose run) of each lab that has one.
RUN_FIGURES = {"04-bezier-streams": ("curves.svg", draw_curves),
               "05-default-streams": ("timeline.svg", draw_timelines)}


def draw_run_figure(lab_name, doc, out_dir, who="yours"):
    """Draws a lab's one-run picture from one result document into out_dir; returns its path, or
    None when the lab has none. Raises FigureError when the document lacks what it needs."""
    if lab_name not in RUN_FIGURES:
        return None
    name, draw = RUN_FIGURES[lab_name]
    path = os.path.join(out_dir, name)
    try:
        draw(doc, path, who)
    except FigureError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise FigureError("the document lacks what the picture needs (%s: %s)" % (type(e).__name__, e))
    return path


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

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RUN_TIMEOUT = 120        # the solution's and the alternatives' runs: ample for every recorded case
WRONG_RUN_TIMEOUT = 60   # a known-wrong submission's run: shorter, for the ones that hang on purpose


def submissions(lab):
    """(case, folder, known wrong) of the solution and every known-wrong and alternative submission of a lab."""
    found = [("solution", os.path.join(KIT_ROOT, "solutions", lab), False)]
    for kind in ("incorrect", "alternative"):
        for folder in sorted(glob.glob(os.path.join(KIT_ROOT, "solutions", kind, lab, "*", ""))):
            found.append((os.path.basename(os.path.dirname(folder)), folder, kind == "incorrect"))
    return [(case, folder, wrong) for case, folder, wrong in found if os.path.isdir(folder)]


def record_documents(docs_dir, work):
    """Builds every submission of every lab and runs it on the lab's recorded case, writing each result
    document to docs_dir/labNN-CASE.json. Returns the problems: a build or run of the solution or an
    alternative that left no document. A known-wrong submission may fail to build (a refused flag) or
    to run (a deliberate hang): that is printed, not counted."""
    from gradelib import build, harness, registry  # the kit's own, standard library only
    problems = []
    jobs = []
    for lab in registry.all_labs().values():
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
        with open(path, "wb") as f:  # as the harness wrote it, less the channel's nonce line
            f.write(ran.channel.partition(b"\n")[2])
        print("ran %s: %s%s" % (where, path, "" if ran.ok else " (the run %s)" % ran.describe(timeout)))
    return problems


def shown_path(path):
    """A path as a person reads it: relative to the kit when inside it."""
    rel = os.path.relpath(path, KIT_ROOT)
    return path if rel.startswith("..") else rel


def make_figures(out_dir, docs_dir):
    sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))
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
    problems = record_documents(docs_dir, work)
    staged = os.path.join(work, "drawn")
    shutil.rmtree(staged, ignore_errors=True)
    problems += draw_all(load_docs(docs_dir), staged)
    if problems:
        for p in problems:
            print(p)
        print("make figures: %d problem(s); the figures in %s are left as they are"
              % (len(problems), shown_path(out_dir)))
        return 1
    os.makedirs(out_dir, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(staged, "*.svg"))):
        shutil.copy(path, os.path.join(out_dir, os.path.basename(path)))
        print("updated %s" % shown_path(os.path.join(out_dir, os.path.basename(path))))
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
    args = parser.parse_args(argv)
    if args.gpu:
        if args.docs:
            parser.error("--gpu makes its own documents: give --docs-out DIR, not --docs")
        return make_figures(os.path.abspath(args.out or os.path.join(KIT_ROOT, "handouts", "figures")),
                            os.path.abspath(args.docs_out or os.path.join(KIT_ROOT, "build", "figures", "docs")))
    if args.docs_out:
        parser.error("--docs-out goes with --gpu")
    if not args.docs or not args.out:
        parser.error("give --docs DIR --out DIR, or --gpu")
    problems = draw_all(load_docs(args.docs), args.out)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
