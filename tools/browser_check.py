#!/usr/bin/env python3
"""Feedback pages and rendered handouts looked at in a real browser (headless Chromium).

  python3 tools/browser_check.py [--keep DIR] PAGE.html...
  python3 tools/browser_check.py --handouts DIR     (after `make handouts`: DIR/*.html)

Handouts, each loaded in a window HANDOUT_WIDTH wide: the page does not scroll sideways; its table of
contents lists the 2.x sections where the page has them; every image is found and loaded, lies within the
window, and each SVG figure's smallest text is shown at MIN_FIGURE_TEXT_PX or more.

Feedback pages: each page is rendered to a screenshot, and so is the picture of the run it holds, alone;
the two screenshots are compared.

For every page (its screenshot as tall as the page): the screenshot is not blank; where the page holds
a run's picture (an inline SVG), the picture drawn alone is found in the page's screenshot (locate()), with
at least MIN_SAME of its inked pixels the same there (within PIXEL_TOLERANCE), so that the page shows the whole
picture at its size; and the page has exactly as many pixels of the figures' red
(gradelib/figures.py's RED: what the picture marks wrong) as the picture alone. Prints one line per page with
those counts; the kit's tests compare the red between a right and a wrong submission.
Exit 0: every page passed; 1: a page failed; 77: no Chromium here (nothing was checked).
--keep DIR keeps the screenshots (PNG) there, to look at.

One headless Chromium takes every screenshot of a run (Browser, over its DevTools pipe), the next
pages' while the last ones are compared (check_pages). The PNG reader is the standard library's zlib
and the PNG filters (8-bit RGB or RGBA, as Chromium writes its screenshots).
"""
import base64
import concurrent.futures
import fcntl
import glob
import json
import operator
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grader"))
from gradelib import figures  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome", "headless_shell")
WIDTH = 1000        # wider than any figure (900 at most) and the page's text column
HEIGHT = 3000       # a first screenshot's height; taller where the page goes on below it
MAX_HEIGHT = 24000
BLANK_BOTTOM = 40   # rows at the bottom of a screenshot that must be blank for it to hold the whole page
WHITE_ROW = b"\xff" * (WIDTH * 3)
MIN_SAME = 0.98     # the share of the picture's inked pixels the page must show unchanged
PIXEL_TOLERANCE = 16  # levels a colour channel may differ by (anti-aliasing elsewhere on the page)
NOT_RUN = 77
TIMEOUT = 120       # seconds Chromium may take to start, load a page or answer


def find_browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser(object):
    """One headless Chromium for many screenshots, driven over its DevTools pipe (file descriptors 3 and
    4, one JSON message per NUL-terminated record): a launch costs about as much as the screenshots of
    ten pages, so a run of pages pays for one. A screenshot is the viewport of the window size that
    --screenshot would take (pixel for pixel the same picture); the PNG is asked for fast (one filter,
    Up, for every row), which read_png decodes row by row without a loop over the bytes.

      with Browser(find_browser()) as browser: browser.screenshot(html, png, height=...)
    """

    def __init__(self, path):
        self.path, self.next_id, self.buffered, self.events, self.session = path, 0, b"", [], None
        # Its own profile (and log), removed on close: two runs at once do not share one.
        self.home = tempfile.mkdtemp(prefix="chromium-")
        self.log = open(os.path.join(self.home, "log"), "w+b")
        # The pipe ends Chromium is to see as 3 (its input) and 4 (its output), first moved above both
        # numbers so that placing one cannot close the other.
        to_browser, self.to_browser = os.pipe()
        self.from_browser, from_browser = os.pipe()
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]
        for fd in (to_browser, from_browser):
            os.close(fd)
        for fd in theirs:
            os.set_inheritable(fd, False)  # Popen passes on only 3 and 4, made from these

        def as_3_and_4():
            os.dup2(theirs[0], 3)
            os.dup2(theirs[1], 4)

        argv = [path, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                "--force-device-scale-factor=1", "--window-size=%d,%d" % (WIDTH, HEIGHT),
                "--user-data-dir=%s" % os.path.join(self.home, "profile"),
                "--remote-debugging-pipe", "about:blank"]
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                            preexec_fn=as_3_and_4, pass_fds=(3, 4))
        except BaseException:
            for fd in (self.to_browser, self.from_browser):
                os.close(fd)
            self.log.close()
            shutil.rmtree(self.home, ignore_errors=True)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        try:
            page = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
            self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
            self.call("Page.enable")
        except Exception:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def close(self):
        # Asked to close, Chromium ends its other processes first, which could still be writing in the
        # profile removed below; killed only where it does not.
        if self.process.poll() is None:
            try:
                self._send("Browser.close", {}, to_page=False)
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def _failed(self, why):
        self.log.seek(0)
        return RuntimeError("%s %s (exit %s): %s" % (self.path, why, self.process.poll(),
                                                      self.log.read()[-500:].decode("utf-8", "replace")))

    def _message(self, deadline):
        while b"\0" not in self.buffered:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise self._failed("did not answer in %d s" % TIMEOUT)
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise self._failed("closed its DevTools pipe")
            self.buffered += chunk
        message, _, self.buffered = self.buffered.partition(b"\0")
        return json.loads(message.decode("utf-8"))

    def _send(self, method, params, to_page=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and to_page:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode("utf-8") + b"\0")

    def call(self, method, **params):
        """The result of one DevTools command (to the page, once attached); events met on the way are kept."""
        try:
            self._send(method, params)
        except OSError:
            raise self._failed("closed its DevTools pipe")
        deadline = time.time() + TIMEOUT
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise self._failed("refused %s: %s" % (method, answer["error"]))
                return answer["result"]
            self.events.append(answer)

    def load(self, html_path, width=WIDTH, height=HEIGHT):
        """Loads a local file afresh in a viewport of width x height, and waits for its load event."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)
        self.events = []
        self.call("Page.navigate", url="file://" + os.path.abspath(html_path))
        deadline = time.time() + TIMEOUT
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._message(deadline))

    def evaluate(self, expression):
        """The value of a JavaScript expression in the loaded page."""
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self, html_path, png_path, width=WIDTH, height=HEIGHT):
        """Renders a local file, loaded afresh in a viewport of width x height, into png_path."""
        self.load(html_path, width, height)
        shot = self.call("Page.captureScreenshot", format="png", optimizeForSpeed=True)
        with open(png_path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))


def _add_bytes(a, b):
    """a + b byte by byte, modulo 256, over whole rows at once: the 7 low bits of each byte added
    (no carry reaches the next byte), the top bit as the exclusive or of the three."""
    n = len(a)
    low, top = _masks(n)
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    return (((x & low) + (y & low)) ^ ((x ^ y) & top)).to_bytes(n, "big")


_MASKS = {}


def _masks(n):
    if n not in _MASKS:
        _MASKS[n] = (int.from_bytes(b"\x7f" * n, "big"), int.from_bytes(b"\x80" * n, "big"))
    return _MASKS[n]


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
    rows, previous = [], bytes(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)]
        # None and Up (what Chromium writes when asked for speed) take whole rows; the others go byte by byte.
        if kind == 2:
            line = _add_bytes(line, previous)
        elif kind != 0:
            line = bytearray(line)
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up = previous[i]
                if kind == 1:
                    line[i] = (line[i] + left) & 255
                elif kind == 3:
                    line[i] = (line[i] + ((left + up) >> 1)) & 255
                elif kind == 4:
                    corner = previous[i - channels] if i >= channels else 0
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
            line = bytes(line)
        previous = line
        if channels == 4:
            rgb = bytearray(width * 3)
            for c in range(3):
                rgb[c::3] = line[c::4]
            line = bytes(rgb)
        rows.append(line)
    return width, height, rows


def hex_rgb(colour):
    return bytes(int(colour[k:k + 2], 16) for k in (1, 3, 5))


def page_figure(page_text):
    """The inline SVG of a feedback page (its run's picture), or None."""
    found = re.search(r"<svg\b.*?</svg>", page_text, re.S)
    return found.group(0) if found else None


def rows_of(browser, html_path, png_path, first=None, height=HEIGHT):
    """The screenshot's rows (RGB bytes), taken tall enough for the whole page: a screenshot whose
    last rows are not blank is taken again, twice as tall. browser: a Browser; height: the first
    screenshot's; first: that screenshot when it is being taken ahead (a future)."""
    while True:
        if first is None:
            browser.screenshot(html_path, png_path, height=height)
        else:
            first.result()
            first = None
        _, _, rows = read_png(png_path)
        if height >= MAX_HEIGHT or all(row == WHITE_ROW[:len(row)] for row in rows[-BLANK_BOTTOM:]):
            return rows
        height *= 2


def _pixels_where(row, tables):
    """How many pixels of an RGB row have all three channels mapped to 255 by their translate tables:
    each channel taken whole (row[c::3]), the three and-ed together as integers, one byte a pixel."""
    both = -1
    for c in range(3):
        both &= int.from_bytes(row[c::3].translate(tables[c]), "big")
    return both.to_bytes(len(row) // 3, "big").count(b"\xff")


def _equal_to(value):
    return bytes(255 if v == value else 0 for v in range(256))


_WHITE = (_equal_to(255),) * 3
_ZERO = (_equal_to(0),) * 3


def inked_pixels(row):
    """The pixels of an RGB row that are not white."""
    return len(row) // 3 - _pixels_where(row, _WHITE)


def ink_of(rows, colour=figures.RED):
    """(the inked pixels, not white, of each row; the pixels of exactly colour in all), in one pass."""
    target = tuple(_equal_to(v) for v in hex_rgb(colour))
    inked, marked = [], 0
    for row in rows:
        n = 0
        if row != WHITE_ROW[:len(row)]:
            n = inked_pixels(row)
            marked += _pixels_where(row, target)
        inked.append(n)
    return inked, marked


def _same_pixels(a, b):
    """How many pixels of a and b (RGB, over the shorter's length) are exactly the same: the exclusive
    or of the two, whose pixels are zero in all three channels where they agree."""
    n = min(len(a), len(b)) // 3 * 3
    differ = (int.from_bytes(a[:n], "big") ^ int.from_bytes(b[:n], "big")).to_bytes(n, "big")
    return _pixels_where(differ, _ZERO)


def _first_run(profile, counts):
    """The first index where counts holds profile's numbers one after another, or None."""
    needle = struct.pack(">%dI" % len(profile), *profile)
    haystack = struct.pack(">%dI" % len(counts), *counts)
    at = haystack.find(needle)
    while at > 0 and at % 4:
        at = haystack.find(needle, at + 1)
    return None if at < 0 else at // 4


def _lanes(channel):
    """The bytes of one channel as an integer of 16-bit lanes, one byte a lane, each lane plus 256."""
    wide = bytearray(b"\x01" * (2 * len(channel)))
    wide[1::2] = channel
    return int.from_bytes(wide, "big")


_NEAR = (bytes(255 if v == 1 else 0 for v in range(256)),
         bytes(255 if v <= 2 * PIXEL_TOLERANCE else 0 for v in range(256)))


def _near_pixels(fig_row, page_row):
    """How many inked pixels of fig_row (RGB) have every channel within PIXEL_TOLERANCE of page_row's (a row
    as long). Per channel, over the whole row at once: a lane holds 256 + page - fig + PIXEL_TOLERANCE,
    between 256 and 256 + 2 * PIXEL_TOLERANCE (high byte 1, low byte at most twice the tolerance)
    exactly where the two are near; no lane borrows from the next, every lane staying above 0."""
    n = len(fig_row) // 3
    near = int.from_bytes(fig_row[0::3].translate(_WHITE[0]), "big")
    near &= int.from_bytes(fig_row[1::3].translate(_WHITE[0]), "big")
    near &= int.from_bytes(fig_row[2::3].translate(_WHITE[0]), "big")
    near ^= int.from_bytes(b"\xff" * n, "big")  # the inked pixels
    tolerance = _lanes(bytes([PIXEL_TOLERANCE]) * n)
    for c in range(3):
        lanes = (_lanes(page_row[c::3]) - _lanes(fig_row[c::3]) + tolerance).to_bytes(2 * n, "big")
        near &= int.from_bytes(lanes[0::2].translate(_NEAR[0]), "big")
        near &= int.from_bytes(lanes[1::2].translate(_NEAR[1]), "big")
    return near.to_bytes(n, "big").count(b"\xff")


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
    # The first place where every row's count is the same is the best (cost 0) and the first found: one
    # search of the counts packed as bytes; only a page without one goes through every place.
    exact = _first_run(profile, page_ink)
    best = None if exact is None else (0, exact - top)
    for y in range(len(page_rows) - len(profile) + 1) if best is None else ():
        cost = sum(map(abs, map(operator.sub, page_ink[y:y + len(profile)], profile)))
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
        n = inked_pixels(fig[y])
        total += n
        # A row the page shows unchanged has every inked pixel the same.
        same += n if page_part == fig[y] else _near_pixels(fig[y], page_part)
    return dx, dy, same / float(total)


def _alone(page_path, work, name):
    """(the page's picture, a page in work that holds it alone, the height of a first screenshot of that
    page), or (None, None, None) for a page without one. The first screenshot is as tall as the picture
    says it is and the blank rows below it: Chromium renders fewer rows, and read_png decodes fewer (a
    taller picture than it says is taken again, taller, as any page)."""
    with open(page_path) as f:
        svg = page_figure(f.read())
    if svg is None:
        return None, None, None
    tall = re.search(r'<svg\b[^>]*?\sheight="([\d.]+)"', svg)
    height = min(HEIGHT, int(float(tall.group(1))) + 2 * BLANK_BOTTOM) if tall else HEIGHT
    alone_html = os.path.join(work, name + "-figure.html")
    with open(alone_html, "w") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}</style></head><body>%s'
                "</body></html>\n" % svg)
    return svg, alone_html, height


def check_page(browser, page_path, work, name=None, ahead=None):
    """(problem or None, facts): the page's screenshot against its picture's. browser: a Browser, or
    the path of a Chromium to start for this page alone. name: what its files in work are called (the
    page's own name by default); ahead: what check_pages prepared (the picture alone, the first
    screenshots)."""
    if isinstance(browser, str):
        with Browser(browser) as started:
            return check_page(started, page_path, work, name, ahead)
    name = name or os.path.splitext(os.path.basename(page_path))[0]
    ahead = ahead or {}
    page_rows = rows_of(browser, page_path, os.path.join(work, name + ".png"), ahead.get("page"))
    page_ink, page_red = ink_of(page_rows)
    page_inked = sum(page_ink)
    facts = {"page_inked": page_inked, "page_red": page_red, "page_height": len(page_rows)}
    if page_inked == 0:
        return "the page rendered blank", facts
    svg, alone_html, alone_height = ahead["alone"] if "alone" in ahead else _alone(page_path, work, name)
    if svg is None:
        return None, facts
    width = int(float(re.search(r'width="([\d.]+)"', svg).group(1)))
    figure_rows = rows_of(browser, alone_html, os.path.join(work, name + "-figure.png"), ahead.get("figure"),
                          alone_height)
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


class _InTurn(object):
    """A Browser whose screenshots one thread takes in turn, ahead of when they are looked at:
    Chromium renders the next pages on one core while Python compares the last ones on another."""

    def __init__(self, browser):
        self.browser, self.pool, self.queued = browser, concurrent.futures.ThreadPoolExecutor(1), []

    def ahead(self, html_path, png_path, height=HEIGHT):
        self.queued.append(self.pool.submit(self.browser.screenshot, html_path, png_path, height=height))
        return self.queued[-1]

    def screenshot(self, html_path, png_path, height=HEIGHT):
        return self.ahead(html_path, png_path, height).result()

    def close(self):
        for shot in self.queued:
            shot.cancel()
        self.pool.shutdown(wait=True)


def check_pages(browser, page_paths, work):
    """(page path, problem or None, facts) for each page, in order, as check_page; every page's first
    screenshots are queued at once (a taller one, where a page needs it, waits its turn behind them).
    Files in work are numbered: two pages of the same name do not share them."""
    in_turn = _InTurn(browser)
    try:
        prepared = []
        for i, page_path in enumerate(page_paths):
            name = "%02d-%s" % (i, os.path.splitext(os.path.basename(page_path))[0])
            ahead = {"alone": _alone(page_path, work, name),
                     "page": in_turn.ahead(page_path, os.path.join(work, name + ".png"))}
            _, alone_html, alone_height = ahead["alone"]
            if alone_html:
                ahead["figure"] = in_turn.ahead(alone_html, os.path.join(work, name + "-figure.png"), alone_height)
            prepared.append((page_path, name, ahead))
        for page_path, name, ahead in prepared:
            problem, facts = check_page(in_turn, page_path, work, name, ahead)
            yield page_path, problem, facts
    finally:
        in_turn.close()


HANDOUT_WIDTH = 1280      # a laptop's window
MIN_FIGURE_TEXT_PX = 11
# What a handout's page shows, read in the page: how far it scrolls sideways, the table of contents'
# third-level entries and the page's third-level headings, and each image's place and size.
HANDOUT_FACTS = """JSON.stringify({
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  toc_level3: document.querySelectorAll('#TOC ul ul li').length,
  headings_level3: document.querySelectorAll('h3').length,
  window: window.innerWidth,
  images: Array.from(document.images).map(i => {
    const box = i.getBoundingClientRect();
    return {src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0, width: box.width,
            left: box.left, right: box.right};
  })
})"""
_FONT_SIZE = re.compile(r'font-size[=:]\s*"?([0-9.]+)')
_VIEW_WIDTH = re.compile(r'<svg[^>]*\bviewBox="[-0-9.]+\s+[-0-9.]+\s+([0-9.]+)')


def svg_text_px(svg_text, shown_width):
    """The smallest text of an SVG figure, in pixels, shown shown_width wide; None without text."""
    sizes = [float(s) for s in _FONT_SIZE.findall(svg_text)]
    view = _VIEW_WIDTH.search(svg_text)
    if not sizes or not view:
        return None
    return min(sizes) * shown_width / float(view.group(1))


def handout_problems(facts, page_dir):
    """What is wrong with a rendered handout (HANDOUT_FACTS, read in the browser), as a list."""
    problems = []
    if facts["overflow"] > 0:
        problems.append("the page scrolls sideways by %d px" % facts["overflow"])
    if facts["headings_level3"] and not facts["toc_level3"]:
        problems.append("the table of contents lists none of the page's %d third-level sections"
                        % facts["headings_level3"])
    for image in facts["images"]:
        if not image["loaded"]:
            problems.append("%s: not found or not loaded" % image["src"])
            continue
        if image["left"] < 0 or image["right"] > facts["window"]:
            problems.append("%s: shown from x = %d to %d, outside the window" % (image["src"], image["left"],
                                                                                 image["right"]))
        if image["src"].endswith(".svg"):
            with open(os.path.join(page_dir, image["src"])) as f:
                px = svg_text_px(f.read(), image["width"])
            if px is not None and px < MIN_FIGURE_TEXT_PX:
                problems.append("%s: its smallest text shown at %.1f px, below %d" % (image["src"], px,
                                                                                      MIN_FIGURE_TEXT_PX))
    return problems


def check_handouts(browser, folder):
    """Each rendered handout in folder: yields (page, problems, facts)."""
    for page in sorted(glob.glob(os.path.join(folder, "*.html"))):
        browser.load(page, HANDOUT_WIDTH, HEIGHT)
        facts = json.loads(browser.evaluate(HANDOUT_FACTS))
        yield page, handout_problems(facts, os.path.dirname(page)), facts


def main_handouts(folder):
    pages = glob.glob(os.path.join(folder, "*.html"))
    if not pages:
        print("not run: no rendered handouts in %s (`make handouts` renders them; it needs pandoc)" % folder)
        return NOT_RUN
    browser = find_browser()
    if browser is None:
        print("not run: no Chromium here (apt-get install chromium); the handouts were not looked at")
        return NOT_RUN
    failed = 0
    with Browser(browser) as started:
        for page, problems, facts in check_handouts(started, folder):
            shown = [image["src"] for image in facts["images"]]
            print("%s %s: %d images%s, %d sections of level 3 in the contents%s" % (
                "FAIL" if problems else "ok  ", page, len(shown), " (%s)" % ", ".join(shown) if shown else "",
                facts["toc_level3"], "".join("\n     " + p for p in problems)))
            failed += bool(problems)
    return 1 if failed else 0


def main(argv):
    if argv[:1] == ["--handouts"] and len(argv) == 2:
        return main_handouts(argv[1])
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
        with Browser(browser) as started:
            for page_path, problem, facts in check_pages(started, argv, work):
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
