"""The kit's drawing code for the pictures of one run, and what the handout figures share with them
(tools/draw_figures.py draws those from the same code). Standard library only.

draw_run_figure() draws a picture of one run (RUN_FIGURES) from a student's own result document, with
the handout figures' drawing code, at most 900 pixels wide: `make run LAB=NN` writes it next to the
program (grader/kit.py; Lab 04's with --figure-lines), and the grader puts one into each submission's
HTML feedback (gradelib/feedback.py).

  01 grids.svg     the parent grid and one child grid per block (a run that launched other shapes
                   has no picture); a foo other than the flat version's, and unchecked launches, marked
  02 race.svg      what the children saw, one bar, against what the lab asks, and when the document has
                   the stamps, when each step happened (the kit's probe above the run's own rows)
  03 tree.svg      Part A's launch tree as grader/rubrics/lab03.py expects it from --blocks and
                   --threads, each cell a record of the run; in red: an outlined empty cell (class
                   "missing") where a record is not there, a filled cell (class "extra") for a record
                   the tree does not have, after the expected cells of its depth; large trees drawn in
                   part, every depth's counts in words; then Part B's chain of the run
  04 curves.svg    the curves of the run's first --figure-lines lines
  05 timeline.svg  the median round's kernel timelines, the kit's legacy build and the run
  07 mandelbrot.png  the run's image (its "figure", --figure S) and its leaf rectangles; beside it
                   mandelbrot.svg, the PNG with its caption and legend, which the feedback page shows;
                   pixels nobody wrote, and dwells past --max-dwell, in red

What a picture marks wrong carries a class of WRONG_CLASSES, in RED (marks_wrong() tells).
"""
import base64
import collections
import math
import os
import re
import struct
import zlib
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

    def image(self, cls, x, y, w, h, png_bytes):
        """A PNG, held in the SVG itself (a data URI), drawn at its own size: no resampling."""
        data = base64.b64encode(png_bytes).decode("ascii")
        self.parts.append('<image class="%s" x="%d" y="%d" width="%d" height="%d" href="data:image/png;base64,%s"/>'
                          % (cls, x, y, w, h, data))

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
MAX_WARPS_DRAWN = 4   # more: w0, w1, ..., the last


def drawn_indices(n, most):
    """The indices drawn out of n, None where an ellipsis stands: all of them up to most."""
    if n <= most:
        return list(range(n))
    return [0, 1, None] + list(range(n - (most - 3), n))


RUN_BLOCKS_DRAWN = 4  # a run's picture: blocks 0, 1, ..., the last, to stay within 900 pixels


def draw_grids_run(doc, out_path, who="yours", case=None, most_blocks=RUN_BLOCKS_DRAWN, mark=True):
    """The parent grid of one Lab 01 run and the child grid each block's thread 0 launched. Only a run
    that launched one child grid of <<<1, M>>> per block is drawn (FigureError otherwise); a foo other
    than the kit's flat version's, and launches not checked once each, are marked (unless not mark: the
    handout's figure, drawn from the solution)."""
    missing = [key for key in ("params", "child_shapes", "child_grids", "child_grids_other_shapes", "launch_log",
                               "student_foo", "reference_foo") if key not in doc]
    missing += [key for key in ("K", "M", "N") if key not in doc.get("params", {})]
    if missing:
        raise FigureError("the document has no %s: the grids are drawn from them" % ", ".join(missing))
    k, m, n = doc["params"]["K"], doc["params"]["M"], doc["params"]["N"]
    shapes = doc["child_shapes"]
    one_child_per_block = (doc["child_grids"] == k and doc["child_grids_other_shapes"] == 0 and len(shapes) == 1
                           and shapes[0]["grid"] == [1, 1, 1] and shapes[0]["block"] == [m, 1, 1]
                           and shapes[0]["count"] == k)
    if not one_child_per_block:
        raise FigureError("the run did not launch one child grid of <<<1, %d>>> per block "
                          "(child_grids %s, shapes %s)" % (m, doc["child_grids"], shapes))
    log = doc["launch_log"]
    # What the picture marks wrong, one line each: a foo other than the flat version's, and launches not
    # checked once each (as grading counts them: checks == grids that ran + launches that failed).
    wrong = []
    if mark and doc["student_foo"] != doc["reference_foo"]:
        wrong.append("foo should equal the flat version's %d; %s run left %d."
                     % (doc["reference_foo"], "this" if case else "your", doc["student_foo"]))
    checked_all = not mark or log["checked"] == doc["child_grids"] + log["failed"]
    if not checked_all:
        wrong.append("Every launch should be checked once, right after it: %d launch(es), %d check(s) counted."
                     % (doc["child_grids"] + log["failed"], log["checked"]))
    blocks = drawn_indices(k, most_blocks)
    warps = drawn_indices(m, MAX_WARPS_DRAWN)
    col_w, gap, left = 170, 15, 20
    width = max(660, left * 2 + len(blocks) * (col_w + gap) - gap + 20)  # + room for the last launch label
    top = 62
    block_h = 42 + len(warps) * 20 + 28
    child_y = top + block_h + 60
    child_h = 66
    text_y = child_y + child_h + 24
    height = text_y + 96 + 16 * len(wrong)
    svg = Svg(width, height, "Lab 01: a parent grid of %d blocks; thread 0 of each block launches one child grid of "
                             "one block of %d threads, from %s" % (k, m, "a recorded run" if case else "your run"))
    svg.text("heading", left, 24, "Parent grid: diverge_cta<<<K, 32*M>>>(foo, N) with K = %d, M = %d, N = %d"
             % (k, m, n), 14, weight="bold")
    svg.text("caption", left, 42, "%s; %s with %s" % (device_words(doc), case_words(case) if case else "your run",
                                                     params_words(doc)), 11, fill=MUTED)
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
        svg.text("block-size", x + col_w - 10, top + 18, "%d threads" % (32 * m), 11, "end")
        for row, w in enumerate(warps):
            y = top + 30 + row * 20
            if w is None:
                svg.text("ellipsis", x + 10 + 36 + lane_w / 2, y + 10, "\u22ee", 14, "middle")
                continue
            svg.text("warp-label", x + 10, y + 10, "w%d" % w, 11)
            svg.rect("warp", x + 46, y, lane_w, 12, LANE, stroke="#555555",
                     tip="block %d, warp %d: lane 0 is its leader" % (b, w))
            svg.rect("leader", x + 46, y, lane_w / 32.0, 12, DARK, tip="block %d, thread %d: a leader" % (b, 32 * w))
        svg.text("shared-x", x + 10, top + block_h - 12, "thread 0: shared x = 5", 11)
        lx = x + 46 + lane_w / 64.0
        svg.line("launch", lx, top + block_h, lx, child_y - 2, INK, 1.5, arrow=True)
        svg.text("launch-label", lx + 8, top + block_h + 25, "thread 0 launches", 11)
        if checked_all:
            svg.text("launch-label", lx + 8, top + block_h + 38, "+ KIT_CHECK_LAUNCH()", 11, mono=True)
        svg.rect("child-grid", x, child_y, col_w, child_h, CHILD, stroke=INK, rx=6,
                 tip="the child grid of block %d: <<<1, %d>>>" % (b, m), dash="5,3")
        svg.text("child-label", x + 10, child_y + 17, "child grid: 1 block", 11, weight="bold")
        svg.rect("child-block", x + 46, child_y + 27, lane_w, 12, DARK, tip="%d threads, all active" % m)
        svg.text("child-size", x + 46 + lane_w / 2, child_y + 37, "%d threads, all active" % m, 11, "middle",
                 fill="white")
        svg.text("child-work", x + 10, child_y + 57, "entry_work(foo, %d) each" % n, 11, mono=True)
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
    for i, line in enumerate(wrong):
        svg.text("wrong", left, text_y + 96 + 16 * i, line, 11, fill=RED)
    svg.write(out_path)
    return {"blocks": len([b for b in blocks if b is not None]), "warps": len([w for w in warps if w is not None]),
            "child_grids": doc["child_grids"]}


# ---------------------------------------------------------------- Lab 03: the launch tree

LIGHT_BLUE = "#9fbbe0"
BLOCK_FILL = "#eef3fb"


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def tree_cell(svg, x, y, size, depth, block, thread, state, why=None):
    """One (depth, block, thread) cell: "thread" (a record where the tree has it: dark for thread 0, the
    launcher), "missing" (no record: an empty cell outlined in red) or "extra" (a record the tree does
    not have: red, why says what is wrong)."""
    where = "depth %d, block %d, thread %d" % (depth, block, thread)
    if state == "thread":
        svg.rect("thread", x, y, size, size, BLUE if thread == 0 else LIGHT_BLUE, tip=where)
    elif state == "missing":
        svg.rect("missing", x, y, size, size, "white", stroke=RED, tip="%s: no record" % where)
    else:
        svg.rect("extra", x, y, size, size, RED, tip="%s: %s" % (where, why))


def tree_panel(svg, rows, y_top, style):
    """The launch tree, one row per depth from y_top. A row: "depth"; "boxes", each a block drawn at "x"
    ({"chain", "block", "threads", "slots": [(thread, state), or None for an ellipsis]}) or an elided
    run of chains ({"ellipsis": True}); "top": the boxes are the blocks of one grid (depth 0), else one
    grid each, launched by thread 0 of the same chain's box a row above; "blocks" and "threads" of its
    grids; "extras", [(record, why)] drawn after the boxes, and "more", how many more not drawn; "notes",
    [(class, text, colour)] on the right; "h", its height where not style's row_h. style: cell, gap,
    row_h, note_x, note_size, note_y, note_dy, extra_x (where a row's extras start, when it has boxes).
    Returns the y below the last row."""
    cell, gap = style["cell"], style["gap"]
    pitch = cell + gap
    anchors = {}  # (depth, chain) -> (x of thread 0's centre, bottom y)
    y = y_top
    for row in rows:
        depth = row["depth"]
        svg.text("depth-label", 34, y + 14, "%d" % depth, 11, "end", MUTED)
        boxes = row["boxes"]
        if row.get("top") and boxes:
            gx = boxes[0]["x"] - 6
            gw = boxes[-1]["x"] + len(boxes[-1]["slots"]) * pitch + gap + 6 - gx
            svg.rect("grid", gx, y - 6, gw, cell + 32, "none", stroke=INK, rx=6,
                     tip="depth %d: 1 grid of %d blocks of %d threads" % (depth, row["blocks"], row["threads"]))
        for box in boxes:
            bx = box["x"]
            if box.get("ellipsis"):
                svg.text("ellipsis", bx + 10, y + cell / 2.0 + 6, "\u2026", 16, "middle", MUTED)
                continue
            w = len(box["slots"]) * pitch + gap
            if not row.get("top"):
                svg.rect("grid", bx - 4, y - 4, w + 8, cell + 2 * gap + 8, "none", stroke=INK, rx=6,
                         tip="depth %d: a grid of 1 block of %d threads" % (depth, box["threads"]))
            svg.rect("block", bx, y, w, cell + 2 * gap, BLOCK_FILL, stroke=BLUE, rx=3)
            for k, slot in enumerate(box["slots"]):
                x = bx + gap + k * pitch
                if slot is None:
                    svg.text("ellipsis", x + cell / 2.0, y + gap + cell - 3, "\u2026", 12, "middle", MUTED)
                else:
                    tree_cell(svg, x, y + gap, cell, depth, box["block"], slot[0], slot[1])
            if row.get("top"):
                svg.text("block-label", bx + w / 2.0, y + cell + 20, "block %d" % box["block"], 11, "middle", MUTED)
            else:
                parent = anchors.get((depth - 1, box["chain"]))
                if parent:
                    svg.line("launch", parent[0], parent[1] + 1, bx + gap + cell / 2, y - 5, INK, 1.2, arrow=True)
            anchors[(depth, box["chain"])] = (bx + gap + cell / 2, y + cell + gap)
        x = style["extra_x"] if boxes else boxes_left(rows)
        for k, ((d, b, t), why) in enumerate(row.get("extras", [])):
            tree_cell(svg, x + k * pitch, y + gap, cell, d, b, t, "extra", why)
        if row.get("more"):
            svg.text("extra-more", x + len(row["extras"]) * pitch + 2, y + gap + cell - 3,
                     "+%s" % "{:,}".format(row["more"]), 11, fill=RED)
        for k, (cls, text, colour) in enumerate(row["notes"]):
            svg.text(cls, style["note_x"], y + style["note_y"] + k * style["note_dy"], text, style["note_size"],
                     "end", colour)
        y += row.get("h", style["row_h"])
    return y


def boxes_left(rows):
    """The x of the first box of the tree: where a row without boxes starts its extras."""
    return min(box["x"] for row in rows for box in row["boxes"]) if any(row["boxes"] for row in rows) else 70


def chain_scale(docs, left, right):
    """Pixels per level of Part B's bars: the deepest chain asked for, or the highest limit, fills left..right."""
    depth_target = max(doc["params"]["depth"] for doc in docs) + 1
    top = max([depth_target] + [doc.get("pending_launch_limit", 0) for doc in docs])
    return (right - left) / float(top)


def chain_row(svg, label, doc, left, y, scale):
    """Part B of one run: the levels that ran against those asked for, and its pending-launch limit.
    Returns whether every level ran with no failed launch."""
    ran = doc["deep"]["levels_ran"]
    failed = doc["deep"]["launch_log"]["failed"]
    wanted = doc["params"]["depth"] + 1
    svg.text("chain-label", left - 8, y + 14, label, 12, "end")
    svg.rect("chain-wanted", left, y + 2, wanted * scale, 16, "#eeeeee", tip="%d levels asked for" % wanted)
    svg.rect("chain", left, y + 2, ran * scale, 16, GREEN if ran == wanted and not failed else RED,
             tip="%s: %d of %d levels ran, %d failed launch(es)" % (label, ran, wanted, failed))
    limit = doc.get("pending_launch_limit")
    if limit:
        lx = left + limit * scale
        svg.line("limit", lx, y - 1, lx, y + 21, INK, 2)
    svg.text("chain-value", left + 4, y + 14, "%d of %d levels%s; limit %s" % (
        ran, wanted, ", launch failed" if failed else "", "{:,}".format(limit) if limit else "?"),
        11, fill="white" if ran * scale > 220 else INK)
    return ran == wanted and not failed


CHAIN_CAPTION = "Black tick: the pending-launch limit the run set; grey: the levels asked for (0 to --depth)."


# A run's tree is drawn within 900 pixels: at most this many cells of a block (thread 0, 1, ..., the
# last few), chains (0, 1, ..., the last), red cells after a row's expected ones, and rows.
RUN_CELLS_DRAWN = 7
RUN_CHAINS_DRAWN = 4
RUN_EXTRAS_DRAWN = 4
RUN_ROWS_DRAWN = 12
RUN_TREE_WIDTH = 900


def expected_tree_rule():
    """expected_records(blocks, threads) of grader/rubrics/lab03.py, the one statement of the tree the
    grader checks the records against. Raises FigureError where it cannot be imported."""
    try:
        from rubrics import lab03  # grader/rubrics, on sys.path beside gradelib
    except ImportError as e:
        raise FigureError("the expected tree is stated in grader/rubrics/lab03.py, which could not be "
                          "imported (%s)" % e)
    return lab03.expected_records


def hello_records(doc):
    """The document's Part A records as (depth, block, thread) tuples, its count and its blocks and threads."""
    hello = doc.get("hello")
    params = doc.get("params")
    if not isinstance(hello, dict) or not isinstance(hello.get("records"), list) or not isinstance(
            hello.get("count"), int):
        raise FigureError("the document holds no hello records (Part A's \"hello\": \"records\" and \"count\")")
    if not isinstance(params, dict) or "blocks" not in params or "threads" not in params:
        raise FigureError("the document's params have no blocks and threads: the expected tree is made from them")
    blocks, threads = params["blocks"], params["threads"]
    if not all(isinstance(v, int) and v >= 1 for v in (blocks, threads)):
        raise FigureError("the document's blocks (%r) and threads (%r) do not make a tree" % (blocks, threads))
    records = []
    for r in hello["records"]:
        if not (isinstance(r, (list, tuple)) and len(r) == 3 and all(isinstance(v, int) for v in r)):
            raise FigureError("a hello record is not a (depth, block, thread) triple: %r" % (r,))
        records.append(tuple(r))
    return records, hello["count"], blocks, threads


def extra_why(record, expected, expected_depths, found):
    depth = record[0]
    if record in expected:
        return "a duplicate: %d records of it, %d expected" % (found[record], expected[record])
    if depth in expected_depths:
        return "no such thread at depth %d in the expected tree" % depth
    return "the expected tree has no grid at depth %d" % depth


def tree_rows(records, blocks, threads, style):
    """The rows of tree_panel for one run: the expected tree's cells, each a record ("thread") or not
    ("missing"), and the records the tree does not have ("extra"), drawn within the RUN_* caps; sets
    style's extra_x. Returns (rows, {depth: (missing, extra)}, depths not drawn, whether cells or chains
    were left out, how many records the tree has)."""
    expected = collections.Counter(expected_tree_rule()(blocks, threads))
    found = collections.Counter(records)
    missing, extra = expected - found, found - expected
    depths = sorted({r[0] for r in expected})
    counts = {d: [0, 0] for d in depths}
    for k, differing in enumerate((missing, extra)):
        for r, n in differing.items():
            counts.setdefault(r[0], [0, 0])[k] += n
    counts = {d: tuple(counts[d]) for d in sorted(counts)}
    extra_only = [d for d in counts if d not in depths]
    shown_depths = sorted(depths + extra_only[:max(0, RUN_ROWS_DRAWN - len(depths))])
    not_shown = [d for d in extra_only if d not in shown_depths]

    cell, gap, col_gap = style["cell"], style["gap"], style["col_gap"]
    pitch = cell + gap
    chains = drawn_indices(blocks, RUN_CHAINS_DRAWN)
    top_slots = drawn_indices(threads, RUN_CELLS_DRAWN)
    block_w = len(top_slots) * pitch + gap
    column_x, x = [], style["left"]
    for c in chains:
        column_x.append(x)
        x += (20 if c is None else block_w) + col_gap
    style["extra_x"] = column_x[-1] + block_w + 6 + 12
    elided = len(chains) < blocks or len(top_slots) < threads

    def state(record, instance):
        """The instance-th expected copy of record is there when the run left more than instance of it:
        the records below depth 0 do not name their chain, so the missing ones are the last chains'."""
        return "thread" if found.get(record, 0) > instance else "missing"

    rows = []
    for d in shown_depths:
        boxes = []
        if d in depths:
            size = len({r[2] for r in expected if r[0] == d})
            slots_of = drawn_indices(size, RUN_CELLS_DRAWN)
            for c, cx in zip(chains, column_x):
                if c is None:
                    boxes.append({"x": cx, "ellipsis": True})
                    continue
                block, instance = (c, 0) if d == 0 else (0, c)
                slots = [None if t is None else (t, state((d, block, t), instance)) for t in slots_of]
                boxes.append({"x": cx, "chain": c, "block": block, "threads": size, "slots": slots})
            shape = ("%s of %s" % (plural(blocks, "block"), plural(size, "thread")) if d == 0 else
                     "%s of %s" % (plural(blocks, "grid"), plural(size, "thread")))
            elided = elided or len(slots_of) < size
        else:
            shape = "no grid expected"
        extras = sorted(r for r, n in extra.items() if r[0] == d for _ in range(n))
        lost, more = counts.get(d, (0, 0))
        if lost or more:
            problem = ("row-problem", "depth %d: %s" % (d, ", ".join(
                w for w in ("{:,} missing".format(lost) if lost else "", "{:,} extra".format(more) if more else "")
                if w)), RED)
        else:
            problem = ("row-ok", "all {:,} there".format(sum(n for r, n in expected.items() if r[0] == d)), MUTED)
        rows.append({"depth": d, "top": d == 0, "boxes": boxes, "blocks": blocks, "threads": threads,
                     "h": style["row_h"] if boxes else 32,
                     "extras": [(r, extra_why(r, expected, depths, found)) for r in extras[:RUN_EXTRAS_DRAWN]],
                     "more": max(0, len(extras) - RUN_EXTRAS_DRAWN),
                     "notes": [("level-note", shape, MUTED), problem]})
    return rows, counts, not_shown, elided, sum(expected.values())


def draw_tree_run(doc, out_path, who="yours", case=None):
    """Part A of one Lab 03 run: the expected launch tree of its --blocks and --threads (the rule of
    grader/rubrics/lab03.py), each cell a (depth, block, thread) record of the run; what differs in red:
    an outlined empty cell ("missing") where a record is not there, a red cell ("extra") for a record
    the tree does not have, after the expected cells of its depth. Large trees are drawn in part, with
    every row's counts. Then Part B's chain of the run, when the document has "deep"."""
    records, count, blocks, threads = hello_records(doc)
    style = {"cell": 14, "gap": 3, "col_gap": 18, "left": 56, "row_h": 56, "note_x": RUN_TREE_WIDTH - 20,
             "note_size": 10, "note_y": 10, "note_dy": 13}
    rows, counts, not_shown, elided, expected_total = tree_rows(records, blocks, threads, style)
    lost = sum(m for m, _ in counts.values())
    more = sum(e for _, e in counts.values())
    unkept = max(0, count - len(records))
    wrong = bool(lost or more or unkept)
    below_zero_lost = any(m for d, (m, _) in counts.items() if d > 0)
    deep = "deep" in doc
    chain_right = not deep or (doc["deep"]["levels_ran"] == doc["params"]["depth"] + 1
                               and not doc["deep"]["launch_log"]["failed"])
    width = RUN_TREE_WIDTH
    y_top = 90
    tree_bottom = y_top + sum(row["h"] for row in rows) - (14 if rows[-1]["boxes"] else 0)
    notes_h = 18 * (1 + (1 if not_shown else 0) + 2 + (1 if below_zero_lost else 0) + (1 if elided else 0))
    chain_y = tree_bottom + notes_h + 20
    height = chain_y + ((80 if chain_right else 98) if deep else 0) + 10
    svg = Svg(width, height, "Lab 03: the launch tree of %s against the expected tree%s"
              % ("this run" if case else "your run", ", and its deep chain" if deep else ""))
    svg.text("heading", 20, 24, "Part A: the launch tree of nested_hello<<<%d, %d>>>, one cell per (depth, block, "
             "thread) record" % (blocks, threads), 14, weight="bold")
    svg.text("caption", 20, 42, device_words(doc), 11, fill=MUTED)
    whose = case_words(case) if case else "your run"
    svg.text("caption", 20, 57, "%s with %s: %s record%s, %s expected" % (
        whose[0].upper() + whose[1:], params_words(doc), "{:,}".format(len(records)), "" if len(records) == 1 else "s",
        "{:,}".format(expected_total)), 11, fill=MUTED)
    svg.text("depth-label", 20, y_top - 14, "depth", 11, fill=MUTED)
    tree_panel(svg, rows, y_top, style)

    y = tree_bottom + 18
    if wrong:
        words = "%s of %s expected records are there: %s missing, %s extra" % (
            "{:,}".format(expected_total - lost), "{:,}".format(expected_total), "{:,}".format(lost),
            "{:,}".format(more))
        if unkept:
            words += "; %s more counted but not kept (the kit's log was full)" % "{:,}".format(unkept)
        svg.text("wrong", 20, y, words + ".", 12, fill=RED, weight="bold")
    else:
        svg.text("summary", 20, y, "All %s records are where the expected tree puts them." % "{:,}".format(
            expected_total), 12, weight="bold")
    if not_shown:
        y += 18
        svg.text("wrong", 20, y, "Depths %d to %d (%d depths) are not drawn: %s extra records there." % (
            min(not_shown), max(not_shown), len(not_shown), "{:,}".format(sum(counts[d][1] for d in not_shown))),
            11, fill=RED)
    y += 18
    svg.rect("legend-key", 20, y - 10, 10, 10, BLUE)
    svg.rect("legend-key", 34, y - 10, 10, 10, LIGHT_BLUE)
    svg.text("legend", 50, y, "a record where the expected tree has it (dark: thread 0, the launcher of its block); "
             "arrow: a launch of the expected tree", 11, fill=MUTED)
    y += 18
    if wrong:
        svg.rect("legend-key", 20, y - 10, 10, 10, "white", stroke=RED)
        svg.rect("legend-key", 34, y - 10, 10, 10, RED)
        svg.text("legend", 50, y, "red: outlined, a record missing; filled, a record the tree does not have "
                 "(extra, duplicated or at a wrong depth), after its depth's cells", 11, fill=MUTED)
    else:
        svg.text("legend", 20, y, "Red would mark a record missing (an outlined cell) or one the expected tree does "
                 "not have (a filled cell, after its depth's cells); there are none.", 11, fill=MUTED)
    if below_zero_lost:
        y += 18
        svg.text("legend", 20, y, "The records below depth 0 do not name their chain: a missing one is drawn in "
                 "the last chains.", 11, fill=MUTED)
    if elided:
        y += 18
        svg.text("legend", 20, y, "\u2026: cells and chains not drawn; the counts on the right are of every cell "
                 "of the depth.", 11, fill=MUTED)

    if deep:
        svg.text("heading", 20, chain_y + 8, "Part B: deep_chain, levels that ran, and the pending-launch limit",
                 14, weight="bold")
        left = 120
        chain_row(svg, who, doc, left, chain_y + 26, chain_scale([doc], left, width - 30))
        svg.text("caption", 20, chain_y + 72, CHAIN_CAPTION, 11, fill=MUTED)
        if not chain_right:
            d = doc["deep"]
            svg.text("wrong", 20, chain_y + 90, "Levels 0 to %d should all run; %d ran, %d launch(es) failed%s."
                     % (doc["params"]["depth"], d["levels_ran"], d["launch_log"]["failed"],
                        " (%s)" % d["launch_log"]["first_error"] if d["launch_log"].get("first_error") else ""),
                     11, fill=RED)
    svg.write(out_path)
    return {"records": len(records), "missing": lost, "extra": more, "rows": len(rows), "chain_ran": chain_right}


# ---------------------------------------------------------------- Lab 02: the race

def has_timeline(doc):
    t = doc.get("timeline") or {}
    return bool(t.get("probe")) and bool(t.get("submission"))


RACE_KEYS = ("parents", "saw_first", "saw_second", "saw_other", "ended_second")


def race_counts(doc, name):
    """doc's "race": the children's counts, checked to add up to the parents."""
    r = doc.get("race")
    if not isinstance(r, dict) or not all(isinstance(r.get(k), int) for k in RACE_KEYS):
        raise FigureError("%s has no race counts (\"race\": %s)" % (name, ", ".join(RACE_KEYS)))
    if r["parents"] <= 0 or r["saw_first"] + r["saw_second"] + r["saw_other"] != r["parents"]:
        raise FigureError("%s: the children's counts do not add up to the parents" % name)
    return r


def race_outcome_panel(svg, runs, top, left, right, other_key=False):
    """One bar per run of what its children saw, [(label, counts)], from top; the legend below. Returns
    the legend's y."""
    for i, (label, r) in enumerate(runs):
        y = top + i * 30
        scale = (right - left) / float(r["parents"])
        svg.text("run-label", left - 8, y + 14, label, 12, "end")
        svg.rect("saw-first", left, y, r["saw_first"] * scale, 20, BLUE,
                 tip="%s: %d children saw 1" % (label, r["saw_first"]))
        svg.rect("saw-second", left + r["saw_first"] * scale, y, r["saw_second"] * scale, 20, RED,
                 tip="%s: %d children saw 2" % (label, r["saw_second"]))
        svg.rect("saw-other", left + (r["saw_first"] + r["saw_second"]) * scale, y, r["saw_other"] * scale, 20,
                 MUTED, tip="%s: %d children saw something else" % (label, r["saw_other"]))
        svg.text("run-value", right + 8, y + 14, "%d | %d | %d" % (r["saw_first"], r["saw_second"], r["ended_second"]),
                 11)
    y = top + len(runs) * 30 + 8
    svg.rect("legend-key", left, y, 12, 12, BLUE)
    svg.text("legend", left + 16, y + 10, "saw 1 (right)", 11)
    svg.rect("legend-key", left + 120, y, 12, 12, RED)
    svg.text("legend", left + 136, y + 10, "saw 2 (the race lost)", 11)
    if other_key:
        svg.rect("legend-key", left + 290, y, 12, 12, MUTED)
        svg.text("legend", left + 306, y + 10, "something else", 11)
    svg.text("legend", right + 8, y + 10, "saw 1 | saw 2 | ended at 2", 11, fill=MUTED)
    return y


def race_time_rows(probe_doc, timed):
    """The rows of the time panel: the kit's probe (from probe_doc), then each (label, document) of timed."""
    probe = probe_doc["timeline"]["probe"]
    rows = [("the kit's probe: parent wrote 1", probe["first_write"], BLUE),
            ("  launch statement returned", probe["launch_returned"], INK),
            ("  parent wrote 2", probe["second_write"], RED),
            ("  child read the slot (%d of %d saw 2)" % (probe["saw_second"], probe["parents"]),
             probe["child_read"], AMBER)]
    for label, doc in timed:
        sub = doc["timeline"]["submission"]
        if sub["read_saw_first"]["count"]:
            rows.append(("%s: child read, saw 1" % label, sub["read_saw_first"], BLUE))
        if sub["read_saw_second"]["count"]:
            rows.append(("%s: child read, saw 2" % label, sub["read_saw_second"], RED))
        if sub["tail_store"]["count"]:
            rows.append(("%s: tail-launched store of 2" % label, sub["tail_store"], GREEN))
    return rows


def race_time_panel(svg, rows, ends_ns, done_ns, done_label, y0, width, caption, footer):
    """When each step happened: a dot (median) and a bar (10th to 90th percentile) per row, on one axis
    reaching the latest of the rows and ends_ns; a dashed line where done_ns is."""
    svg.text("heading", 20, y0 + 8, "When each step happened", 14, weight="bold")
    svg.text("caption", 20, y0 + 24, caption, 11, fill=MUTED)
    y0 += 18
    top = max([r[1]["max"] for r in rows if r[1]["count"]] + ends_ns)
    top_us = max(top / 1000.0, 1e-3)
    left, right = 300, width - 40
    scale = (right - left) / top_us
    ty = y0 + 24
    for k in range(6):
        x = left + k * (right - left) / 5.0
        svg.line("axis-tick", x, ty, x, ty + 6 + len(rows) * 26, "#dddddd", 1)
        svg.text("axis-label", x, ty - 2, "%.1f us" % (top_us * k / 5.0), 11, "middle", MUTED)
    for i, (label, s, colour) in enumerate(rows):
        y = ty + 14 + i * 26
        svg.text("row-label", left - 8, y + 4, label, 11, "end")
        if not s["count"]:
            continue
        svg.line("spread", left + s["p10"] / 1000.0 * scale, y, left + s["p90"] / 1000.0 * scale, y, colour, 4)
        svg.circle("median", left + s["median"] / 1000.0 * scale, y, 5, colour,
                   tip="%s: median %.2f us, %d samples" % (label.strip(), s["median"] / 1000.0, s["count"]))
    done = done_ns / 1000.0
    svg.line("tree-done", left + done * scale, ty, left + done * scale, ty + 6 + len(rows) * 26, INK, 1.2, dash="4 3")
    svg.text("tree-done-label", left + done * scale - 4, ty + 6 + len(rows) * 26, done_label, 11, "end", INK)
    svg.text("caption", 20, ty + 14 + len(rows) * 26 + 10, footer, 11, fill=MUTED)


TIME_CAPTION = ("%%globaltimer, microseconds after a kit kernel that ran just before the parent grid%s; dot: median, "
                "bar: 10th to 90th percentile")
RACE_HEADING = "Part A: what each child saw in its slot (1: written before the launch, 2: written after it)"


def draw_race_run(doc, out_path, who="yours", case=None):
    """Part A of one Lab 02 run: what its children saw, one bar, with the counts against what the lab
    asks (every child sees 1, every slot ends at 2; what differs is marked), and, when the document has
    the harness's %globaltimer stamps, when each step happened, the kit's probe above this run."""
    r = race_counts(doc, "the document")
    params = doc.get("params", {})
    trials = params.get("trials", 1)
    timed = has_timeline(doc)
    rows = race_time_rows(doc, [(who, doc)]) if timed else []
    width = 840
    outcome_h = 180
    height = outcome_h + ((10 + 70 + len(rows) * 26 + 10) if timed else 0)
    svg = Svg(width, height, "Lab 02: what the children of %s saw" % ("this run" if case else "your run"))
    svg.text("heading", 20, 24, RACE_HEADING, 14, weight="bold")
    svg.text("caption", 20, 42, device_words(doc), 11, fill=MUTED)
    whose = case_words(case) if case else "your run"
    svg.text("caption", 20, 57, "%s with %s: %s children (%d trial%s of %s parents)"
             % (whose[0].upper() + whose[1:], params_words(doc), "{:,}".format(r["parents"]), trials,
                "" if trials == 1 else "s", "{:,}".format(r["parents"] // max(trials, 1))), 11, fill=MUTED)
    y = race_outcome_panel(svg, [(who, r)], 72, 220, width - 200, other_key=r["saw_other"] > 0)
    parents = "{:,}".format(r["parents"])
    saw_right = r["saw_first"] == r["parents"]
    svg.text("outcome" if saw_right else "wrong", 20, y + 38,
             "Saw 1: %s of %s children; saw 2: %s; something else: %s. Expected: every child sees 1."
             % ("{:,}".format(r["saw_first"]), parents, "{:,}".format(r["saw_second"]), "{:,}".format(r["saw_other"])),
             12, fill=INK if saw_right else RED)
    ended_right = r["ended_second"] == r["parents"]
    svg.text("outcome" if ended_right else "wrong", 20, y + 56,
             "Slots ending at 2: %s of %s. Expected: every slot ends at 2, the parent's second write."
             % ("{:,}".format(r["ended_second"]), parents), 12, fill=INK if ended_right else RED)
    if timed:
        timeline = doc["timeline"]
        first = " (the first of %d trials)" % trials if trials > 1 else ""
        race_time_panel(svg, rows, [timeline["submission"]["tree_done"], timeline["probe"]["tree_done"]],
                        timeline["submission"]["tree_done"], "launch tree done", outcome_h + 10, width,
                        TIME_CAPTION % first, "The probe is the race written by the kit, with the parent's steps "
                        "stamped; the rows below it are the children and tail launches of %s." % whose)
    svg.write(out_path)
    return {"runs": 1, "timeline_rows": len(rows)}


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
    height = int(plot_h + 84)
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
    svg.text("caption", 20, plot_h + 38, "%s;" % device_words(doc), 11, fill=MUTED)
    svg.text("caption", 20, plot_h + 52, "%s with %s:" % (whose, params_words(doc)), 11, fill=MUTED)
    owner = "your" if who == "yours" else who + "'s"
    svg.text("caption", 20, plot_h + 66, "its first %d lines, each vertex where %s dynamic version put it (%s)"
             % (len(lines), owner, fig.get("from", "cdp")), 11, fill=MUTED)
    svg.write(out_path)
    return {"curves": len(lines), "vertices": vertices}


# ---------------------------------------------------------------- Lab 05: kernel timelines

TIMELINE_WIDTH = 1000     # the handout's figure
RUN_TIMELINE_WIDTH = 880  # a run's picture, within 900 pixels
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


def timeline_panel_width(width):
    """The width of each of the two panels side by side in a figure width wide (440 in 1,000)."""
    return (width - 120) // 2


def draw_panel(svg, part_title, row_word, n_workers, has_default, side_name, side, scale_us, x0, y0, panel_w):
    kernels, span, at_once = side
    rows = n_workers + (1 if has_default else 0)
    plot_x, plot_w = x0 + TIMELINE_LABEL, panel_w - TIMELINE_LABEL
    px_per_us = plot_w / scale_us
    svg.text("panel-title", x0, y0 - 6, "%s, %s: span %.0f us, %g at once" % (part_title, side_name, span, at_once),
             12, weight="bold")
    for row in range(rows):
        y = y0 + row * TIMELINE_ROW
        label = "default" if has_default and row == n_workers else "%s %d" % (row_word, row)
        svg.text("row-label", x0, y + 10, label, 11)
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
        svg.text("axis-label", x, axis_y + 14, "%g" % v, 11, "middle")
        v += step
    svg.text("axis-unit", plot_x + plot_w, axis_y + 26, "us", 11, "end")


def draw_timelines(doc, out_path, who="yours", case=None, width=RUN_TIMELINE_WIDTH):
    """The median round of each part of one Lab 05 run: the kit's legacy build left, the submission
    right, both sides of a part on one time axis; black ticks: when each Part B thread's wait returned."""
    panel_w = timeline_panel_width(width)
    sides = {}
    heights = []
    for part, _, count_key, _ in TIMELINE_PARTS:
        if part not in doc:
            raise FigureError("the document has no %s" % part)
        sides[part] = [timeline_side(doc, part, side) for side in ("legacy", "student")]
        heights.append((doc["params"][count_key] + (1 if part == "part_a" else 0)) * TIMELINE_ROW + 60)
    height = 30 + sum(heights) + 72
    svg = Svg(width, height, "Lab 05: kernel timelines of the median round, the kit's legacy build and %s"
              % who)
    y = 30
    bars = 0
    for (part, title, count_key, row_word), part_h in zip(TIMELINE_PARTS, heights):
        scale = max([1.0] + [span for _, span, _ in sides[part]])
        for s, side in enumerate(sides[part]):
            draw_panel(svg, title, row_word, doc["params"][count_key], part == "part_a",
                       "legacy (kit)" if s == 0 else who, side, scale, 20 + s * (panel_w + 60), y + 14,
                       panel_w)
            bars += len(side[0])
        y += part_h
    p = doc["params"]
    size = 12 if width >= TIMELINE_WIDTH else 11  # a narrower picture: room for a longer GPU name
    svg.text("caption", 20, y + 10, "Kernel timelines measured with %%globaltimer on %s (the median of %d rounds)."
             % (device_words(doc), p["repeats"]), size)
    svg.text("caption", 20, y + 26, "Blue: a worker kernel; orange: a tiny kernel on the default stream; black tick "
             "(Part B): when that thread's wait returned.", size)
    svg.text("caption", 20, y + 42, "Left: the kit's legacy build; right: %s. Both sides of a part share one time "
             "axis." % who, size)
    whose = case_words(case) if case else "your run"
    svg.text("caption", 20, y + 60, "%s with %s" % (whose[0].upper() + whose[1:], params_words(doc)), 11, fill=MUTED)
    svg.write(out_path)
    return {"kernels": bars}


# ---------------------------------------------------------------- Lab 07: the Mandelbrot set by subdivision

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunk(tag, data):
    """One PNG chunk: length, tag, data and the CRC-32 of tag and data."""
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xffffffff)


def png_bytes(width, height, rows):
    """An 8-bit RGB PNG of rows (height rows of 3 * width bytes each), every row unfiltered (filter 0)."""
    if width < 1 or height < 1 or len(rows) != height or any(len(row) != 3 * width for row in rows):
        raise ValueError("a %d x %d picture needs %d rows of %d bytes" % (width, height, height, 3 * width))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, RGB, deflate, filter 0, no interlace
    pixels = zlib.compress(b"".join(b"\x00" + bytes(row) for row in rows), 9)
    return PNG_SIGNATURE + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", pixels) + png_chunk(b"IEND", b"")


# Lab 07's picture: each pixel's dwell on a smooth map (viridis: dark violet where a point escapes at
# once, yellow near the set), black inside the set (dwell max_dwell), RED where nobody wrote; the leaf
# rectangles outlined in white.
DWELL_MAP = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))
INSIDE = (0, 0, 0)
OUTLINE = (255, 255, 255)           # a leaf rectangle filled with its border's dwell
COMPUTED_OUTLINE = (255, 128, 0)    # a leaf rectangle computed pixel by pixel (no colour of DWELL_MAP)
UNWRITTEN = 0xffff  # the harness's -1, a pixel nobody wrote, in 4 hex digits
PICTURE_SIDE = 512  # about the picture's long side: the figure scaled up by a whole factor
LEGEND_STEPS = 48   # boxes in the legend's colour bar


def rgb(colour):
    """"#c8453b" -> (200, 69, 59)."""
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def svg_colour(colour):
    return "#%02x%02x%02x" % colour


def dwell_colour(dwell, max_dwell):
    """The colour of a dwell of 0..max_dwell: black at max_dwell (inside the set), else its place on
    DWELL_MAP by its logarithm (most points escape within a few steps: the log spreads those apart)."""
    if dwell >= max_dwell:
        return INSIDE
    t = math.log1p(dwell) / math.log1p(max_dwell) * (len(DWELL_MAP) - 1)
    k = min(int(t), len(DWELL_MAP) - 2)
    a, b = DWELL_MAP[k], DWELL_MAP[k + 1]
    return tuple(int(round(a[i] + (b[i] - a[i]) * (t - k))) for i in range(3))


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def mandelbrot_figure(doc):
    """What a Lab 07 document's "figure" holds, checked: (dwells, one list per row, rects as (x, y, side,
    depth) tuples, the set of those the rule computes pixel by pixel).
    Raises FigureError where the picture cannot be drawn from it."""
    fig = doc.get("figure")
    if not isinstance(fig, dict):
        raise FigureError("the document holds no figure (the harness's --figure S puts the image and the "
                          "rectangles in)")
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    missing = [k for k in ("every", "width", "height", "dwell_rows", "rects") if k not in fig]
    missing += ["params." + k for k in ("width", "height", "max_dwell") if k not in params]
    if missing:
        raise FigureError("the document has no %s: the picture is drawn from them" % ", ".join(missing))
    if not all(is_int(v) and v >= 1 for v in (fig["every"], fig["width"], fig["height"], params["width"],
                                               params["height"], params["max_dwell"])):
        raise FigureError("the figure's every, width and height, and the image's width, height and max_dwell, "
                          "should be whole numbers of at least 1")
    fw, fh, rows = fig["width"], fig["height"], fig["dwell_rows"]
    if not isinstance(rows, list) or len(rows) != fh or not all(isinstance(r, str) and len(r) == 4 * fw for r in rows):
        raise FigureError("the figure's dwell_rows should be %d strings of %d hex digits" % (fh, 4 * fw))
    try:
        dwells = [[int(row[i:i + 4], 16) for i in range(0, 4 * fw, 4)] for row in rows]
    except ValueError:
        raise FigureError("the figure's dwell_rows hold something other than hex digits")
    rects = fig["rects"]
    if not isinstance(rects, list) or not all(isinstance(r, list) and len(r) in (4, 5) and all(is_int(v) for v in r)
                                              for r in rects):
        raise FigureError("the figure's rects should be [x, y, side, depth, computed] lists of whole numbers")
    # computed (the fifth, where the harness writes it): the rule computes the rectangle pixel by pixel
    return dwells, [tuple(r[:4]) for r in rects], {tuple(r[:4]) for r in rects if len(r) == 5 and r[4]}


def leaf_rects(rects):
    """The rectangles (x, y, side, depth), each once, that have no rectangle of depth + 1 inside them
    (its corner (x, y) within): those filled by their border's dwell or computed pixel by pixel."""
    by_depth = collections.defaultdict(list)
    for r in sorted(set(rects)):
        by_depth[r[3]].append(r)
    split = set()
    for depth, parents in by_depth.items():
        children = by_depth.get(depth + 1)
        if not children:
            continue
        # Parents in buckets as wide as the widest: a child's parent lies in its bucket or the one
        # left of it, above it, or both.
        bucket = max(1, max(p[2] for p in parents))
        buckets = collections.defaultdict(list)
        for p in parents:
            buckets[(p[0] // bucket, p[1] // bucket)].append(p)
        for cx, cy, _, _ in children:
            bx, by = cx // bucket, cy // bucket
            for key in ((bx, by), (bx - 1, by), (bx, by - 1), (bx - 1, by - 1)):
                for p in buckets.get(key, ()):
                    if p[0] <= cx < p[0] + p[2] and p[1] <= cy < p[1] + p[2]:
                        split.add(p)
    return [r for depth in sorted(by_depth) for r in by_depth[depth] if r not in split]


def mandelbrot_picture(doc):
    """The pixels of a Lab 07 run's picture: (width, height, rows of RGB bytes, facts). The figure is
    scaled up by a whole factor to about PICTURE_SIDE on its long side; each leaf rectangle's outline,
    mapped from image pixels (divided by the figure's every, times the factor), drawn 1 pixel wide,
    where neighbours share an edge on one line, and clipped at the picture's edges."""
    dwells, rects, computed = mandelbrot_figure(doc)
    fig, params = doc["figure"], doc["params"]
    every, max_dwell = fig["every"], params["max_dwell"]
    image_w, image_h = params["width"], params["height"]
    scale = max(1, int(round(PICTURE_SIDE / float(max(fig["width"], fig["height"])))))
    width, height = fig["width"] * scale, fig["height"] * scale
    wrong_colour = rgb(RED)
    colours = {}
    rows = []
    unwritten = past_max = 0
    for line in dwells:
        row = bytearray()
        for d in line:
            if d not in colours:
                colours[d] = bytes(wrong_colour if d > max_dwell else dwell_colour(d, max_dwell)) * scale
            row += colours[d]
        unwritten += line.count(UNWRITTEN)
        past_max += sum(1 for d in line if max_dwell < d != UNWRITTEN)
        rows += [bytearray(row) for _ in range(scale)]
    leaves = leaf_rects(rects)
    for x, y, side, depth in leaves:
        outline = bytes(COMPUTED_OUTLINE if (x, y, side, depth) in computed else OUTLINE)
        if side <= 0 or x >= image_w or y >= image_h or x + side <= 0 or y + side <= 0:
            continue  # nothing of it in the image
        # A rectangle cut off at the image's edge ends at the picture's edge.
        left, top = max(x, 0) * scale // every, max(y, 0) * scale // every
        right = width - 1 if x + side >= image_w else min((x + side) * scale // every, width - 1)
        bottom = height - 1 if y + side >= image_h else min((y + side) * scale // every, height - 1)
        right, bottom = max(right, left), max(bottom, top)
        for py in (top, bottom):
            rows[py][3 * left:3 * (right + 1)] = outline * (right - left + 1)
        for py in range(top, bottom + 1):
            for px in (left, right):
                rows[py][3 * px:3 * px + 3] = outline
    facts = {"pixels": fig["width"] * fig["height"], "unwritten": unwritten, "past_max_dwell": past_max,
             "rects": len(rects), "leaves": len(leaves), "scale": scale,
             "computed_leaves": sum(1 for r in leaves if r in computed),
             "kinds_known": all(len(r) == 5 for r in fig["rects"])}  # the harness writes all five or none
    return width, height, rows, facts


def page_svg_path(picture_path):
    """The SVG a page inlines to show the run picture at picture_path: the picture itself, or for a
    PNG, the SVG drawn beside it (same name, .svg) that holds it with its caption."""
    return os.path.splitext(picture_path)[0] + ".svg"


def draw_mandelbrot_run(doc, out_path, who="yours", case=None):
    """One Lab 07 run's picture: the PNG at out_path (draw_mandelbrot) and, beside it (page_svg_path),
    an SVG that shows it at its size with what it was drawn from and a legend, and marks wrong, in
    RED, pixels nobody wrote and dwells past max_dwell."""
    width, height, rows, facts = mandelbrot_picture(doc)
    png = png_bytes(width, height, rows)
    with open(out_path, "wb") as f:
        f.write(png)
    fig, params = doc["figure"], doc["params"]
    max_dwell, every = params["max_dwell"], fig["every"]
    image = doc.get("image") if isinstance(doc.get("image"), dict) else {}
    wrong = []
    # The whole image's count, where the document has it: the picture shows one pixel in every few.
    whole = image.get("unwritten") if is_int(image.get("unwritten")) and is_int(image.get("pixels")) else None
    if facts["unwritten"]:
        wrong.append("Red: {:,} of the picture's {:,} pixels were never written{}. Every pixel should hold its "
                     "dwell.".format(facts["unwritten"], facts["pixels"], "" if not whole else
                                     " ({:,} of the image's {:,})".format(whole, image["pixels"])))
    elif whole:
        wrong.append("{:,} of the image's {:,} pixels were never written (none of those the picture shows)."
                     .format(whole, image["pixels"]))
    if facts["past_max_dwell"]:
        wrong.append("Red: {:,} of the picture's pixels hold a dwell past --max-dwell {}."
                     .format(facts["past_max_dwell"], max_dwell))
    shown = ("Every pixel" if every == 1 else "One pixel in every {0} x {0}".format(every))
    notes = ["{} of the {} x {} image, each drawn {} x {}.".format(shown, params["width"], params["height"],
                                                                 facts["scale"], facts["scale"]),
             "{:,} rectangles reported, {:,} of them leaves (no rectangle of the next depth inside), outlined."
             .format(facts["rects"], facts["leaves"])]
    if facts["kinds_known"]:
        notes.append("{:,} leaves filled with their border's dwell (white), {:,} computed pixel by pixel (orange)."
                     .format(facts["leaves"] - facts["computed_leaves"], facts["computed_leaves"]))
    more = fig.get("rects_left_out", 0)
    if is_int(more) and more > 0:
        notes.append("{:,} more rectangles were reported than the document lists: some outlined as leaves may "
                     "have been split.".format(more))
    left, top = 20, 70
    svg_w = max(width + 2 * left, 720)
    legend_y = top + height + 16
    svg_h = legend_y + 28 + 16 * (len(notes) + len(wrong))
    svg = Svg(svg_w, svg_h, "Lab 07: the dwell of every pixel of %s, and the leaf rectangles of its subdivision"
              % ("this run" if case else "your run"))
    svg.text("heading", left, 24, "The dwell of each pixel, and the rectangles the subdivision left whole", 14,
             weight="bold")
    svg.text("caption", left, 42, device_words(doc), 11, fill=MUTED)
    whose = case_words(case) if case else "your run"
    options = {"params": {k: v for k, v in params.items() if k != "top_side"}}  # top_side: no option, derived
    svg.text("caption", left, 57, "%s with %s" % (whose[0].upper() + whose[1:], params_words(options)), 11,
             fill=MUTED)
    svg.image("dwell", left, top, width, height, png)
    # The legend: the map from dwell 0 to max_dwell - 1, then black, white and (where drawn) red.
    step_w = 4
    svg.text("legend", left, legend_y + 11, "dwell 0", 11)
    bar_x = left + 48
    for k in range(LEGEND_STEPS):
        dwell = int(round(math.expm1(math.log1p(max_dwell - 1) * k / (LEGEND_STEPS - 1))))
        svg.rect("legend-key", bar_x + k * step_w, legend_y, step_w, 14, svg_colour(dwell_colour(dwell, max_dwell)))
    x = bar_x + LEGEND_STEPS * step_w + 6
    svg.text("legend", x, legend_y + 11, "%d" % (max_dwell - 1), 11)
    x += 8 + 7 * len("%d" % (max_dwell - 1))
    keys = [(svg_colour(INSIDE), "none", "%d: inside the set" % max_dwell)]
    if facts["kinds_known"]:
        keys += [(svg_colour(DWELL_MAP[1]), svg_colour(OUTLINE), "filled leaf"),
                 (svg_colour(DWELL_MAP[1]), svg_colour(COMPUTED_OUTLINE), "computed leaf")]
    else:
        keys.append((svg_colour(DWELL_MAP[1]), svg_colour(OUTLINE), "a leaf rectangle"))
    if facts["unwritten"] or facts["past_max_dwell"]:
        keys.append((RED, "none", "wrong"))
    for fill, stroke, label in keys:
        svg.rect("legend-key", x, legend_y, 14, 14, fill, stroke=stroke)
        svg.text("legend", x + 20, legend_y + 11, label, 11)
        x += 32 + 6.5 * len(label)
    y = legend_y + 34
    for line in notes:
        svg.text("note", left, y, line, 11)
        y += 16
    for line in wrong:
        svg.text("wrong", left, y, line, 11, fill=RED)
        y += 16
    svg.write(page_svg_path(out_path))
    return facts

# Pictures of one run of a lab, drawn for the student by `make run` (grader/kit.py) and into the
# grader's HTML feedback (grader/gradelib/feedback.py): file name and drawing function (document,
# output path, whose run, case) of each lab that has one. Each is at most 900 pixels wide. A picture
# written as a PNG comes with an SVG beside it that holds it (page_svg_path): the one a page shows.
RUN_FIGURES = {"01-divergent-counter": ("grids.svg", draw_grids_run),
               "02-memory-visibility": ("race.svg", draw_race_run),
               "03-nested-recursion": ("tree.svg", draw_tree_run),
               "04-bezier-streams": ("curves.svg", draw_curves),
               "05-default-streams": ("timeline.svg", draw_timelines),
               "07-mandelbrot": ("mandelbrot.png", draw_mandelbrot_run)}


def draw_run_figure(lab_name, doc, out_dir, who="yours"):
    """Draws a lab's one-run picture from one result document into out_dir; returns its path, or
    None when the lab has none. Raises FigureError when the document lacks what it needs."""
    if lab_name not in RUN_FIGURES:
        return None
    name, draw = RUN_FIGURES[lab_name]
    path = os.path.join(out_dir, name)
    if not isinstance(doc, dict):
        raise FigureError("the document is not a JSON object")
    try:
        draw(doc, path, who)
    except FigureError:
        raise
    except (LookupError, TypeError, ValueError, AttributeError, ArithmeticError) as e:
        raise FigureError("the document lacks what the picture needs (%s: %s)" % (type(e).__name__, e))
    return path


# The classes of what a run's picture marks wrong, in RED: a Lab 03 record missing from the expected
# tree or one it does not have, and a line that says what differs from what the lab asks.
WRONG_CLASSES = ("missing", "extra", "wrong")


def marks_wrong(svg_text):
    """Whether a picture (its SVG text, the file at page_svg_path) marks something wrong in the run it
    shows."""
    return re.search(r'class="(%s)"' % "|".join(WRONG_CLASSES), svg_text) is not None
