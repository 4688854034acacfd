#!/usr/bin/env python3
"""Draws the handouts' figures from harness result documents (JSON), so that every picture shows a
real run. Standard library only.

  python3 tools/draw_figures.py --docs DIR --out DIR     draw from result documents already made
  python3 tools/draw_figures.py --gpu [--out DIR]        `make figures`: on a GPU machine, build the
        solutions and known-wrong submissions, run the harnesses, keep the documents in
        build/figures/docs/ and redraw DIR (default handouts/figures/), including the figures the
        harnesses draw themselves (--svg: Lab 04's curves, and every other lab whose harness has
        --svg, such as Lab 05). Without a GPU it says so and exits 77, touching nothing.

DIR holds result documents named labNN-CASE.json (CASE: solution, or a known-wrong submission's
folder name), as in grader/tests/data/recorded/ or as `make figures` writes them. Draws, where the
documents are there:

  02-race-timeline.svg   Lab 02, Part A: what the children saw, submission by submission, and, when
                         the documents carry the harness's %globaltimer stamps ("timeline"), when
                         each step of the race happened;
  03-recursion-tree.svg  Lab 03: the launch tree of Part A, one box per grid and one cell per
                         (depth, block, thread) record of the solution's run, and Part B's chain
                         against the pending-launch limit, submission by submission.
  06-allocator-costs.svg Lab 06: what an allocation costs, on a log scale: per-object device malloc
                         against one bulk allocation and the pool (Part A), and one atomic per
                         thread against the warp-aggregated counter (Part B), from the solution's run.

Each figure names the GPU and the runs it was drawn from. Exit status 1 when a document a figure
needs is missing or does not hold what the figure needs; each problem is printed.
"""
import argparse
import glob
import json
import math
import os
import re
import shutil
import sys
from xml.sax.saxutils import escape

FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
INK = "#222222"
MUTED = "#777777"
BLUE = "#3b6fb6"
RED = "#c8453b"
GREEN = "#3c8d4f"
AMBER = "#d9962b"


class FigureError(Exception):
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

    def rect(self, cls, x, y, w, h, fill, stroke="none", rx=0, tip=None):
        inner = "<title>%s</title>" % escape(tip) if tip else ""
        end = ">%s</rect>" % inner if inner else "/>"
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

    def text(self, cls, x, y, s, size=12, anchor="start", fill=INK, weight="normal"):
        self.parts.append('<text class="%s" x="%.1f" y="%.1f" font-size="%g" text-anchor="%s" fill="%s" font-weight="%s" %s>%s</text>'
                          % (cls, x, y, size, anchor, fill, weight, FONT, escape(s)))

    def write(self, path):
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">\n'
                '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
                'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="%s"/></marker></defs>\n'
                % (self.width, self.height, self.width, self.height, INK))
        with open(path, "w") as f:
            f.write(head + "\n".join(self.parts) + "\n</svg>\n")


def device_words(doc):
    dev = doc.get("device", {})
    runtime = dev.get("runtime_version")
    cuda = " with CUDA %d.%d" % (runtime // 1000, runtime % 1000 // 10) if runtime else ""
    return "%s (compute capability %s.%s)%s" % (dev.get("name", "unknown GPU"), dev.get("cc_major", "?"),
                                                dev.get("cc_minor", "?"), cuda)


def params_words(doc):
    return " ".join("--%s %s" % (k, v) for k, v in doc.get("params", {}).items())


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


FIGURES = [("02-race-timeline.svg", draw_race), ("03-recursion-tree.svg", draw_recursion),
           ("06-allocator-costs.svg", draw_allocator)]


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

KIT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
NO_GPU = 77
# The runs the figures are drawn from: the same small sizes as the documents in
# grader/tests/data/recorded/, so a redrawn figure and the recorded one can be compared.
DOC_RUNS = {
    "02-memory-visibility": ["--blocks 8", "--trials 1", "--n 300", "--threads 128"],
    "03-nested-recursion": ["--blocks 2", "--threads 6", "--depth 2500", "--print 0"],
}
# Labs whose figure needs only the solution's run (at the harness's defaults).
SOLUTION_DOC_RUNS = {"06-parallel-allocator": []}
# Figures a harness draws itself with --svg FILE, from the solution's run: file name and arguments.
# A lab whose harness accepts --svg and is not listed here gets LAB-NAME.svg with its defaults.
SVG_RUNS = {
    "04-bezier-streams": ("04-bezier-curves.svg", ["--lines", "60", "--factor", "64", "--max", "256", "--seed", "3"]),
    "05-default-streams": ("05-stream-timelines.svg", []),
}
RUN_TIMEOUT = 120


def harness_has_svg(lab):
    for path in glob.glob(os.path.join(KIT, "common", "harness", lab, "*.cu")):
        with open(path) as f:
            m = re.search(r"options\[\]\s*=\s*\{([^}]*)\}", f.read())
        if m and '"--svg"' in m.group(1):
            return True
    return False


def submissions(lab):
    """(case, folder) of the solution and every known-wrong and alternative submission of a lab."""
    found = [("solution", os.path.join(KIT, "solutions", lab))]
    for kind in ("incorrect", "alternative"):
        for folder in sorted(glob.glob(os.path.join(KIT, "solutions", kind, lab, "*", ""))):
            found.append((os.path.basename(os.path.dirname(folder)), folder))
    return [(case, folder) for case, folder in found if os.path.isdir(folder)]


def make_figures(out_dir):
    sys.path.insert(0, os.path.join(KIT, "grader"))
    from gradelib import build, gpu as gpu_mod, process  # the kit's own, standard library only
    gpu = gpu_mod.detect()
    if not gpu.available:
        print("make figures needs a CUDA GPU, and this machine has none usable (%s); the figures in %s "
              "are left as they are." % (gpu.reason.splitlines()[0], os.path.relpath(out_dir, KIT)))
        return NO_GPU
    print("GPU: %s (compute capability %s)" % (gpu.name, gpu.compute_capability))
    work = os.path.join(KIT, "build", "figures")
    docs_dir = os.path.join(work, "docs")
    os.makedirs(docs_dir, exist_ok=True)
    for old in glob.glob(os.path.join(docs_dir, "*.json")):
        os.remove(old)
    problems = []

    def build_and_run(lab, case, folder, args):
        build_dir = os.path.join(work, lab, case)
        made = build.make(lab, folder, build_dir, ["all"], build.cuda_arch())
        if not made.ok:
            problems.append("%s %s: build failed:\n%s" % (lab, case, made.output[-2000:]))
            return None
        program = os.path.join(build_dir, build.lab_vars(lab)["program"])
        ran = process.run_bounded([program] + args, RUN_TIMEOUT)
        if not ran.ok:
            problems.append("%s %s: %s\n%s" % (lab, case, ran.describe(RUN_TIMEOUT), ran.output[-2000:]))
            return None
        return ran

    for lab, args in sorted(DOC_RUNS.items()):
        argv = [word for arg in args for word in arg.split()]
        for case, folder in submissions(lab):
            doc = os.path.join(docs_dir, "lab%s-%s.json" % (lab[:2], case))
            if build_and_run(lab, case, folder, argv + ["--json", doc]) is not None:
                print("ran %s %s: %s" % (lab, case, os.path.relpath(doc, KIT)))
    for lab, argv in sorted(SOLUTION_DOC_RUNS.items()):
        doc = os.path.join(docs_dir, "lab%s-solution.json" % lab[:2])
        if build_and_run(lab, "solution", os.path.join(KIT, "solutions", lab), argv + ["--json", doc]) is not None:
            print("ran %s solution: %s" % (lab, os.path.relpath(doc, KIT)))
    staged = os.path.join(work, "drawn")
    problems += draw_all(load_docs(docs_dir), staged)
    labs = sorted(os.path.basename(d) for d in glob.glob(os.path.join(KIT, "labs", "[0-9][0-9]-*")))
    for lab in labs:
        if not harness_has_svg(lab):
            continue
        name, args = SVG_RUNS.get(lab, (lab + ".svg", []))
        if build_and_run(lab, "solution", os.path.join(KIT, "solutions", lab),
                         args + ["--svg", os.path.join(staged, name)]) is not None:
            print("wrote %s (by the %s harness)" % (os.path.join(staged, name), lab))
    if problems:
        for p in problems:
            print(p)
        print("make figures: %d problem(s); the figures in %s are left as they are"
              % (len(problems), os.path.relpath(out_dir, KIT)))
        return 1
    os.makedirs(out_dir, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(staged, "*.svg"))):
        shutil.copy(path, os.path.join(out_dir, os.path.basename(path)))
        print("updated %s" % os.path.relpath(os.path.join(out_dir, os.path.basename(path)), KIT))
    print("the result documents are in %s. Review the figures and the captions in the handouts, and copy the "
          "documents into grader/tests/data/recorded/ with them: the kit's tests check that the committed "
          "figures are drawn from the recorded documents." % os.path.relpath(docs_dir, KIT))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", help="folder of labNN-CASE.json result documents")
    parser.add_argument("--gpu", action="store_true", help="run the harnesses on this machine's GPU first")
    parser.add_argument("--out", help="folder to write the figures into (with --gpu: handouts/figures)")
    args = parser.parse_args(argv)
    if args.gpu:
        return make_figures(os.path.abspath(args.out or os.path.join(KIT, "handouts", "figures")))
    if not args.docs or not args.out:
        parser.error("give --docs DIR --out DIR, or --gpu")
    problems = draw_all(load_docs(args.docs), args.out)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
