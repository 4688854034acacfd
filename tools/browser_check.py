#!/usr/bin/env python3
"""Feedback pages looked at in a real browser: each page is rendered by headless Chromium to a
screenshot, and so is the picture of the run it holds, alone; the two screenshots are compared.

  python3 tools/browser_check.py [--keep DIR] PAGE.html...

For every page: the screenshot is not blank; where the page holds a run's picture (an inline SVG),
the picture drawn inside the page covers as many inked pixels as the picture drawn alone (within
TOLERANCE), and as many pixels of the figures' red (draw_figures.RED: what the picture marks wrong),
so that the page shows the whole picture, at its size, with its marks. Prints one line per page and
the red pixel count, which the kit's tests compare between a right and a wrong submission.
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
HEIGHT = 4000       # taller than a page: the whole page fits in one screenshot
TOLERANCE = 0.02    # inked pixels may differ this much (anti-aliasing at other offsets)
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


def pixel_counts(png_path, colour=draw_figures.RED):
    """(inked pixels: not white, pixels of exactly colour) of a screenshot."""
    _, _, rows = read_png(png_path)
    target = hex_rgb(colour)
    inked = marked = 0
    for row in rows:
        for k in range(0, len(row), 3):
            px = row[k:k + 3]
            if px != b"\xff\xff\xff":
                inked += 1
                if px == target:
                    marked += 1
    return inked, marked


def page_figure(page_text):
    """The inline SVG of a feedback page (its run's picture), or None."""
    found = re.search(r"<svg\b.*?</svg>", page_text, re.S)
    return found.group(0) if found else None


def check_page(browser, page_path, work):
    """(problem or None, facts): the page's screenshot against its picture's."""
    name = os.path.splitext(os.path.basename(page_path))[0]
    shot = os.path.join(work, name + ".png")
    screenshot(browser, page_path, shot)
    page_inked, page_red = pixel_counts(shot)
    facts = {"page_inked": page_inked, "page_red": page_red}
    if page_inked == 0:
        return "the page rendered blank", facts
    with open(page_path) as f:
        svg = page_figure(f.read())
    if svg is None:
        return None, facts
    alone_html = os.path.join(work, name + "-figure.html")
    with open(alone_html, "w") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}</style></head><body>%s'
                "</body></html>\n" % svg)
    alone = os.path.join(work, name + "-figure.png")
    screenshot(browser, alone_html, alone)
    fig_inked, fig_red = pixel_counts(alone)
    facts.update(figure_inked=fig_inked, figure_red=fig_red)
    if fig_inked == 0:
        return "the run's picture rendered blank on its own", facts
    # The page holds the table and text too: it has at least the picture's ink, and exactly its red.
    if page_inked < fig_inked * (1 - TOLERANCE):
        return ("the page shows %d inked pixels, fewer than its picture alone (%d): the picture is cut or "
                "shrunk" % (page_inked, fig_inked)), facts
    if abs(page_red - fig_red) > max(2, TOLERANCE * fig_red):
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
