"""Feedback to read in a browser: one self-contained HTML page per graded lab (the checks, what went
wrong and where to read) with a picture of the submission's own run where the lab has one. The
picture is drawn by gradelib/figures.py, the kit's one figure code (the handout figures are drawn
with it too), from the result document of one of the grader's own harness runs of that submission:
no extra run is made for it.

`make grade` writes build/feedback/<lab>.html (grade.py --html DIR); a batch writes
feedback/<id>.html beside feedback/<id>.md.
"""
import html
import os
import tempfile

from . import checks as chk
from . import figures, harness, paths, registry, report

_STATUS_WORDS = {chk.PASSED: "OK", chk.FAILED: "FAIL", chk.SKIPPED: "skipped"}

# The page's own colours stay clear of the figures' (figures.RED marks what is wrong in a
# picture), so that a look at the picture is not confused by the table beside it. Line heights are
# whole pixels, so that the picture sits on whole pixels and looks as it does alone (the kit's
# browser check compares the two, pixel for pixel).
STYLE = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; color: #222; margin: 24px; max-width: 960px;
       line-height: 20px; }
h1 { font-size: 22px; line-height: 28px; margin-bottom: 4px; }
h2 { font-size: 18px; line-height: 24px; margin-top: 28px; }
h3 { font-size: 16px; line-height: 22px; }
pre { line-height: 18px; }
figure svg { display: block; }
.meta { color: #666; font-size: 13px; }
.score { font-size: 18px; font-weight: bold; }
.unverified { background: #fff3cd; border: 1px solid #c9a227; padding: 8px; font-weight: bold; }
table.checks { border-collapse: collapse; margin-top: 12px; font-size: 14px; }
table.checks td, table.checks th { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: left; }
td.points { text-align: right; font-variant-numeric: tabular-nums; }
tr.passed td.status { color: #1d6b30; font-weight: bold; }
tr.failed td.status { color: #7a1f5c; font-weight: bold; }
tr.skipped td.status, tr.not-run td.status { color: #666; }
section.failure { border-left: 4px solid #7a1f5c; padding: 2px 12px; margin: 14px 0; }
section.failure pre { white-space: pre-wrap; font-size: 13px; background: #f6f6f6; padding: 8px; }
p.hint { font-size: 14px; }
figure { margin: 12px 0; }
figcaption { color: #666; font-size: 13px; margin-top: 6px; }
""".strip()


def run_figure(lab, runs):
    """(SVG text, caption) of the lab's picture of one of these runs (gradelib.context.CaseRun), or
    (None, why there is none). A run whose picture marks something wrong is preferred: that is the
    run the student needs to see. A picture drawn as a PNG is shown by the SVG drawn beside it
    (figures.page_svg_path), which holds it as a data URI: every page stays one file."""
    if lab.name not in figures.RUN_FIGURES:
        return None, "this lab has no picture of a run"
    drawn = []
    reasons = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            if not run.doc or harness.NOT_RUN in run.doc:
                continue
            try:
                path = figures.draw_run_figure(lab.name, run.doc, tmp)
            except figures.FigureError as err:
                reasons.append(str(err))
                continue
            with open(figures.page_svg_path(path)) as f:  # a PNG picture: the SVG beside it that holds it
                svg = f.read()
            caption = "Your run with %s." % run.label()
            if figures.marks_wrong(svg):
                return svg, caption
            drawn.append((svg, caption))
    if drawn:
        return drawn[0]
    return None, ("no run left what the picture needs" + (": " + reasons[0] if reasons else
                                                           " (no harness run finished)"))


def _inline_svg(svg):
    """An SVG file's text as an element of the page (without its XML declaration, if any)."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""


def hint_html(hint, handouts):
    """A hint as the page shows it: each section it names a link to that heading of the rendered handout
    (handouts: the folder of make handouts's pages, as a link from the page; None: words only)."""
    m = registry.HINT_TEXT.match(hint)
    if handouts is None or m is None:
        return html.escape("Hint: " + hint, quote=False)
    target = "%s/%s.html" % (handouts, os.path.splitext(os.path.basename(m.group(1)))[0])

    def link(section):
        anchor = registry.section_anchor(m.group(1), section.group(1))
        if anchor is None:
            return section.group(0)
        return '<a href="%s#%s">%s</a>' % (html.escape(target), anchor, section.group(0))
    return (html.escape("Hint: read %s, section " % m.group(1), quote=False)
            + registry.HINT_SECTION.sub(link, html.escape(m.group(2), quote=False)))


def page(rep, heading, meta_lines, figure=None, shown_as=None, handouts=None):
    """The page of one graded lab. rep: gradelib.grading.LabReport; heading: the page's title;
    meta_lines: plain-text lines under it (seed, GPU); figure: (svg, caption) or (None, why not);
    shown_as: the name messages give the submission's folder (a batch's scratch folder is no name
    for a student); handouts: where the rendered handouts are, as a link from the page (hint_html)."""
    def esc(text):
        if shown_as:
            text = text.replace(rep.submission_dir_label, shown_as)
        return html.escape(text)
    rows = []
    failures = []
    for r in rep.results:
        status = "not-run" if r.lacking else r.status
        word = ("NOT RUN (no GPU)" if r.no_gpu else "NOT RUN (no %s)" % r.lacking) if r.lacking else _STATUS_WORDS[r.status]
        rows.append('<tr class="%s"><td class="name">%s</td><td class="status">%s</td>'
                    '<td class="points">%s / %s</td><td class="kind">%s</td></tr>'
                    % (status, esc(r.name), word, report.fmt_points(r.score), report.fmt_points(r.check.points),
                       esc(r.check.kind)))
        if r.status == chk.FAILED:
            hint = report.hint(r, rep.lab)
            failures.append('<section class="failure"><h3>%s</h3><pre>%s</pre>%s</section>'
                            % (esc(r.name), esc(r.message or ""),
                               '<p class="hint">%s</p>' % hint_html(hint, handouts) if hint else ""))
    parts = ['<p class="score">Score: %s / %s</p>' % (report.fmt_points(rep.score), report.fmt_points(rep.max_score))]
    unverified = report.unchecked_note(rep)
    if unverified:
        parts.append('<p class="unverified">%s</p>' % esc(unverified[0].upper() + unverified[1:]))
    parts += ['<p class="meta">%s</p>' % esc(line) for line in meta_lines]
    parts.append('<table class="checks"><tr><th>check</th><th>result</th><th>points</th><th>kind</th></tr>%s</table>'
                 % "".join(rows))
    if failures:
        parts.append("<h2>What went wrong</h2>")
        parts += failures
    if figure is not None:
        svg, caption = figure
        parts.append("<h2>A picture of your run</h2>")
        if svg:
            parts.append('<figure class="run-figure">%s<figcaption>%s</figcaption></figure>'
                         % (_inline_svg(svg), esc(caption)))
        else:
            parts.append('<p class="meta">No picture: %s.</p>' % esc(caption))
    return _document(heading, parts)


def page_with_figure(rep, heading, meta_lines, shown_as=None, handouts=None):
    """page(), with the picture of one of rep's runs where the lab has one, or why there is none."""
    if rep.runs:
        figure = run_figure(rep.lab, rep.runs)
    elif rep.lab.name in figures.RUN_FIGURES:
        no_gpu = any(r.no_gpu for r in rep.results)
        figure = (None, "your code did not run here, so there is no run to draw (%s)" % (
            "no usable GPU: the runtime checks were not run" if no_gpu else "a check it needs did not pass"))
    else:
        figure = None
    return page(rep, heading, meta_lines, figure, shown_as, handouts)


def text_page(heading, meta_lines, text, score=None):
    """The page of a submission that could not be graded: its score (score, max_score) where it has
    one, then what happened, as text."""
    parts = ['<p class="score">Score: %s / %s</p>' % tuple(report.fmt_points(p) for p in score)] if score else []
    return _document(heading, parts + ['<p class="meta">%s</p>' % html.escape(l) for l in meta_lines] +
                     ['<section class="failure"><pre>%s</pre></section>' % html.escape(text)])


def _document(heading, body_parts):
    """A whole page: the kit's style, heading as its title and first line, then body_parts (HTML)."""
    return "\n".join(["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                      "<title>%s</title>" % html.escape(heading), "<style>%s</style></head><body>" % STYLE,
                      "<h1>%s</h1>" % html.escape(heading)] + body_parts + ["</body></html>"]) + "\n"


def write_page(path, rep, heading, meta_lines):
    """Writes the page of rep to path (make grade's), with its run's picture and its hints linked to the
    handouts make handouts renders into build/handouts; returns path."""
    handouts = os.path.relpath(os.path.join(paths.BUILD_ROOT, "handouts"), os.path.dirname(os.path.abspath(path)))
    report.write_text(path, page_with_figure(rep, heading, meta_lines, handouts=handouts))
    return path


def write_index(folder):
    """folder/index.html: a link to each lab's page in folder (make grade keeps one per lab graded)."""
    items = []
    for lab in sorted(registry.all_labs().values(), key=lambda lab: lab.name):
        name = lab.name + ".html"
        if os.path.isfile(os.path.join(folder, name)):
            items.append('<li><a href="%s">%s</a></li>' % (html.escape(name), html.escape(lab.title)))
    report.write_text(os.path.join(folder, "index.html"), _document(
        "Your feedback", ["<p>One page per lab, from its latest <code>make grade</code>:</p>",
                          "<ul>%s</ul>" % "".join(items)]))
