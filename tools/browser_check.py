#!/usr/bin/env python3
"""Feedback pages looked at in a real browser: each page is rendered by headless Chromium to a
screenshot, and so is the picture of the run it holds, alone; the two screenshots are compared.

  python3 tools/browser_check.py [--keep DIR] PAGE.html...

For every page (its screenshot as tall as the page): the screenshot is not blank; where the page holds
a run's picture (an inline SVG), the picture drawn alone is found in the page's screenshot (locate()), with
at least MIN_SAME of its inked pixels the same there (within PIXEL_TOLERANCE), so that the page shows the whole
picture at its size; and the page has exactly as many pixels of the figures' red
(draw_figures.RED: what the picture marks wrong) as the picture alone. Prints one line per page with
those counts; the kit's tests compare the red between a right and a wrong submission.
Exit 0: every page passed; 1: a page failed; 77: no Chromium here (nothing was checked).
--keep DIR keeps the screenshots (PNG) there, to look at.

The PNG reader is the standard library's zlib and the PNG filters (8-bit RGB or RGBA, as Chromium
writes its screenshots).
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import draw_figures  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome", "headless_shell")
WIDTH = 1000        # wider than any figure (900 at most) and the page's text column
HEIGHT = 3000       # a first screenshot's height; taller where the page goes on below it
MAX_HEIGHT = 24000
BLANK_BOTTOM = 40   # rows at the bottom of a screenshot that must be blank for it to hold the whole page
WHITE_ROW = b"\xff" * (WIDTH * 3)
MIN_SAME = 0.98     # the share of the picture's inked pixels the page must show unchanged
PIXEL_TOLERANCE = 16  # levels a colour channel may differ by (anti-aliasing elsewhere on the page)
NOT_RUN = 77


def find_browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(browser, html_path, png_path, width=WIDTH, height=HEIGHT):
    """Renders a local file with headless Chromium into png_path."""
    argv = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
            "--force-device-scale-factor=1", "--window-size=%d,%d" % (width, height),
            "--screenshot=%s" % png_path, "file://" + os.path.abspath(html_path)]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=120)
    if not os.path.isfile(png_path):
        raise RuntimeError("%s wrote no screenshot (exit %d): %s" % (browser, done.returncode, done.stdout[-500:]))


def read_png(path):
    """(width, height, rows): rows[y] is a bytes object of width * 3 (RGB; alpha dropped)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s is not a PNG" % path)
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("%s: only 8-bit RGB/RGBA, not interlaced (depth %d, colour type %d)" % (path, depth, colour))
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 255
            elif kind == 4:
                corner = previous[i - channels] if i >= channels else 0
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        previous = line
        rows.append(bytes(line) if channels == 3 else bytes(b for k, b in enumerate(line) if k % 4 != 3))
    return width, height, rows


def hex_rgb(colour):
    return bytes(int(colour[k:k + 2], 16) for k in (1, 3, 5))


def page_figure(page_text):
    """The inline SVG of a feedback page (its run's picture), or None."""
    found = re.search(r"<svg\b.*?</svg>", page_text, re.S)
    return found.group(0) if found else None


def rows_of(browser, html_path, png_path):
    """The screenshot's rows (RGB bytes), taken tall enough for the whole page: a screenshot whose
    last rows are not blank is taken again, twice as tall."""
    height = HEIGHT
    while True:
        screenshot(browser, html_path, png_path, height=height)
        _, _, rows = read_png(png_path)
        if height >= MAX_HEIGHT or all(row == WHITE_ROW[:len(row)] for row in rows[-BLANK_BOTTOM:]):
            return rows
        height *= 2


def ink_of(rows, colour=draw_figures.RED):
    """(the inked pixels, not white, of each row; the pixels of exactly colour in all), in one pass."""
    target = hex_rgb(colour)
    inked, marked = [], 0
    for row in rows:
        n = 0
        if row != WHITE_ROW[:len(row)]:
            for k in range(0, len(row), 3):
                px = row[k:k + 3]
                if px != b"\xff\xff\xff":
                    n += 1
                    marked += px == target
        inked.append(n)
    return inked, marked


def _same_pixels(a, b):
    return sum(1 for k in range(0, min(len(a), len(b)), 3) if a[k:k + 3] == b[k:k + 3])


def locate(figure_rows, figure_ink, width, page_rows, page_ink):
    """Where the picture drawn alone (at the top left of its screenshot, width pixels wide) lies in the
    page's screenshot (the inked pixels of each row: ink_of), and how alike the two are there: (x, y, share of the picture's inked pixels
    that are the same pixel for pixel in the page), or None when the page has no place for it.

    The place: the rows whose counts of inked pixels follow the picture's best (the picture is a block
    of its own, nothing beside it), then the column where its most inked row matches best. Paths drawn
    at another place on the page are anti-aliased a little differently (a channel off by a few
    levels): a pixel is the same within PIXEL_TOLERANCE. The same picture one pixel off matches in
    a few percent of its pixels only."""
    fig = [row[:width * 3] for row in figure_rows]
    inked = figure_ink  # the page around the picture alone is blank: its rows' ink is the picture's
    top = next((y for y, n in enumerate(inked) if n), None)
    if top is None:
        return None
    bottom = max(y for y, n in enumerate(inked) if n) + 1
    profile = inked[top:bottom]
    best = None
    for y in range(len(page_rows) - len(profile) + 1):
        cost = 0
        for k, n in enumerate(profile):
            cost += abs(page_ink[y + k] - n)
            if best is not None and cost >= best[0]:
                break
        else:
            if best is None or cost < best[0]:
                best = (cost, y - top)
    if best is None:
        return None
    dy = best[1]
    richest = max(range(top, bottom), key=lambda y: inked[y])
    dx = max(range(0, (len(page_rows[0]) - len(fig[richest])) // 3 + 1),
             key=lambda x: _same_pixels(page_rows[richest + dy][x * 3:], fig[richest]))
    same = total = 0
    for y in range(top, bottom):
        page_part = page_rows[y + dy][dx * 3:dx * 3 + len(fig[y])]
        for k in range(0, len(fig[y]), 3):
            if fig[y][k:k + 3] != b"\xff\xff\xff":
                total += 1
                same += all(abs(fig[y][k + c] - page_part[k + c]) <= PIXEL_TOLERANCE for c in range(3))
    return dx, dy, same / float(total)


def check_page(browser, page_path, work):
    """(problem or None, facts): the page's screenshot against its picture's."""
    name = os.path.splitext(os.path.basename(page_path))[0]
    page_rows = rows_of(browser, page_path, os.path.join(work, name + ".png"))
    page_ink, page_red = ink_of(page_rows)
    page_inked = sum(page_ink)
    facts = {"page_inked": page_inked, "page_red": page_red, "page_height": len(page_rows)}
    if page_inked == 0:
        return "the page rendered blank", facts
    with open(page_path) as f:
        svg = page_figure(f.read())
    if svg is None:
        return None, facts
    width = int(float(re.search(r'width="([\d.]+)"', svg).group(1)))
    alone_html = os.path.join(work, name + "-figure.html")
    with open(alone_html, "w") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}</style></head><body>%s'
                "</body></html>\n" % svg)
    figure_rows = rows_of(browser, alone_html, os.path.join(work, name + "-figure.png"))
    figure_ink, fig_red = ink_of(figure_rows)
    fig_inked = sum(figure_ink)
    facts.update(figure_inked=fig_inked, figure_red=fig_red)
    if fig_inked == 0:
        return "the run's picture rendered blank on its own", facts
    where = locate(figure_rows, figure_ink, width, page_rows, page_ink)
    if where is None or where[2] < MIN_SAME:
        return ("the page does not show its picture as the picture alone looks: %s" % (
            "no place in the page's screenshot fits it" if where is None else
            "only %.1f%% of its inked pixels are the same there" % (100 * where[2]))), facts
    facts.update(figure_x=where[0], figure_y=where[1], same_percent=round(100 * where[2]))
    # The figures' red appears in the page only inside its picture (the page's own colours avoid it).
    if abs(page_red - fig_red) > max(2, 0.02 * fig_red):
        return ("the page shows %d pixels of the figures' red, its picture alone %d" % (page_red, fig_red)), facts
    return None, facts


def main(argv):
    keep = None
    if argv[:1] == ["--keep"]:
        keep, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__)
        return 2
    browser = find_browser()
    if browser is None:
        print("not run: no Chromium here (apt-get install chromium); the pages were not looked at")
        return NOT_RUN
    work = keep or tempfile.mkdtemp(prefix="pages-")
    os.makedirs(work, exist_ok=True)
    failed = 0
    try:
        for page_path in argv:
            problem, facts = check_page(browser, page_path, work)
            words = ", ".join("%s %d" % kv for kv in sorted(facts.items()))
            print("%s %s: %s%s" % ("FAIL" if problem else "ok  ", page_path, words,
                                   "\n     " + problem if problem else ""))
            failed += problem is not None
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
