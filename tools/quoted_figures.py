#!/usr/bin/env python3
"""Every figure the kit's pages quote, tied to the recorded data it comes from.

A measured figure in a handout, a README, RESULTS.md or an answer key is written with a marker right
after it (an HTML comment: Markdown viewers and pandoc show nothing):

    one launch costs about 6.1 µs<!-- from costs: costs.device_launch_null_us.median -->
    the ratio stayed between 3.5<!-- from thresholds: min(pick(lab04, side="solution", case="streams").null_over_student) -->
    at least 1.5x<!-- from rubric/lab04: MIN_NULL_OVER_STUDENT --> wanted
    7.86 s<!-- cited: the source's profile -->   (a figure from outside the kit: say where)
    a 50 µs<!-- given: the child's length --> child   (an input, not a result: say what)

"from SOURCE: EXPR" is checked: EXPR is evaluated on SOURCE and must round to the number as written
(as many decimals as written; an integer's trailing zeros mean it was rounded to that many tens).
SOURCE is a recorded document the kit's own runs wrote:
    NAME            handouts/figures/data/NAME.json (costs, bench-04, bench-07, bench-07-one-thread-launches,
                    bench-08, thresholds, suite, toolkits)
    recorded/NAME   grader/tests/data/recorded/NAME.json (a lab's result document, make figures)
    mutants/NAME    grader/tests/data/mutants/NAME.json (a mutation run, make mutants)
    rubric/labNN    the constants of grader/rubrics/labNN.py (thresholds, points)
EXPR is a small expression: names are the document's top-level keys, a.b and a[0] and a["k"] look
inside, + - * / and min, max, median, sum, len, abs, round compute, and pick(LIST, key=value, ...) is
the one element of a list of objects with those values.

Which figures must carry a marker: every number outside code followed by a unit of time (ns, µs,
us, ms, s, seconds, minutes), by cycles, by x or × written against it (15,664x), or by "times"; the
first number of a range ("9.8 to 10.5 times"); and every number in a table column whose header
names such a unit ("(ms)", "ratio").

Tables the kit writes whole sit between "<!-- begin generated: NAME -->" and "<!-- end generated:
NAME -->": the checker renders NAME from its sources and fails when the block differs
(`python3 tools/check_handouts.py --write` rewrites them).
"""
import ast
import glob
import importlib
import json
import os
import re
import statistics
import sys

from gradelib import paths, registry  # noqa: E402  (grader/ is on sys.path wherever this module is imported)
from gradelib.figures import cuda_version
from selftest import read_note

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DATA_DIR = os.path.join("handouts", "figures", "data")
RECORDED_DIR = os.path.join("grader", "tests", "data", "recorded")
MUTANTS_DIR = os.path.join("grader", "tests", "data", "mutants")
VERDICTS_DIR = os.path.join("grader", "tests", "data", "verdicts")  # grader/selftest.py caught, KIT_VERDICTS_OUT

# The pages whose figures are checked (kit-relative globs).
PAGES = ["README.md", "grader/README.md", "RESULTS.md", "CONTRIBUTING.md", "handouts/*.md", "solutions/*/answers.md",
         "labs/*/README.md", "tools/student-README.md"]

MARKER = re.compile(r"<!--\s*(from|cited|given)\b\s*(.*?)\s*-->", re.S)
_NUMBER = r"(?<![\w.,/^=+-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
_UNIT = r"(?:\s?(?:ns|µs|μs|us|ms|s|seconds?|minutes?|cycles)\b|[x×](?![\w])|\s(?:times)\b)"
FIGURE = re.compile(_NUMBER + r"(" + _UNIT + r")")
RANGE_START = re.compile(_NUMBER + r"(?=\s*(?:to|-|–|\.\.)\s*" + _NUMBER + _UNIT + r")")
UNIT_HEADER = re.compile(r"\((?:[^)]*\b)?(?:ns|µs|μs|us|ms|s|cycles)\b[^)]*\)|\bratios?\b|\s/\s|\b[x×]\s*$", re.I)
# The number a marker belongs to: the last one before it on its line, its unit and closing emphasis between.
NUMBER_BEFORE_MARKER = re.compile(_NUMBER + r"(?:" + _UNIT + r"|\s?[A-Za-z]+)?[ \t*_)]*$")
GENERATED = re.compile(r"<!-- begin generated: ([\w./-]+) -->\n(.*?)<!-- end generated: \1 -->", re.S)


class SourceError(Exception):
    pass


# ---------------------------------------------------------------- sources and expressions

def load_source(name, kit=KIT_ROOT, cache=None):
    """The document (or a rubric's constants) a marker names."""
    cache = {} if cache is None else cache
    if name in cache:
        return cache[name]
    if name.startswith("rubric/"):
        sys.path.insert(0, os.path.join(kit, "grader"))
        try:
            module = importlib.import_module("rubrics." + name.split("/", 1)[1])
        except ImportError as e:
            raise SourceError("no rubric %s (%s)" % (name, e))
        value = {k: v for k, v in vars(module).items() if k.isupper()}
    else:
        if name.startswith("recorded/"):
            path = os.path.join(kit, RECORDED_DIR, name.split("/", 1)[1] + ".json")
        elif name.startswith("mutants/"):
            path = os.path.join(kit, MUTANTS_DIR, name.split("/", 1)[1] + ".json")
        else:
            path = os.path.join(kit, DATA_DIR, name + ".json")
        if not os.path.exists(path):
            raise SourceError("no recorded source %s (%s)" % (name, os.path.relpath(path, kit)))
        with open(path) as f:
            value = json.load(f)
    cache[name] = value
    return value


def pick(items, **conditions):
    found = [i for i in items if all(i.get(k) == v for k, v in conditions.items())]
    if len(found) != 1:
        raise SourceError("pick(%s) matched %d elements, not one" % (conditions, len(found)))
    return found[0]


_FUNCTIONS = {"min": min, "max": max, "median": statistics.median, "sum": sum, "len": len, "abs": abs,
              "round": round, "pick": pick}


def evaluate(expression, document):
    """The value of a marker's expression on a document (a safe subset of Python's expressions)."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as e:
        raise SourceError("cannot read the expression %r (%s)" % (expression, e.msg))

    def value(node):
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
            return node.value
        if isinstance(node, ast.Name):
            if isinstance(document, dict) and node.id in document:
                return document[node.id]
            raise SourceError("the source has no %r" % node.id)
        if isinstance(node, ast.Attribute):
            inner = value(node.value)
            if isinstance(inner, dict) and node.attr in inner:
                return inner[node.attr]
            raise SourceError("no %r in %s" % (node.attr, ast.unparse(node.value)))
        if isinstance(node, ast.Subscript):
            inner, key = value(node.value), value(node.slice)
            try:
                return inner[key]
            except (KeyError, IndexError, TypeError):
                raise SourceError("no [%r] in %s" % (key, ast.unparse(node.value)))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            left, right = value(node.left), value(node.right)
            try:
                return {ast.Add: lambda: left + right, ast.Sub: lambda: left - right,
                        ast.Mult: lambda: left * right, ast.Div: lambda: left / right}[type(node.op)]()
            except (TypeError, ZeroDivisionError) as e:
                raise SourceError("%s: %s" % (ast.unparse(node), e))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
            args = [value(a) for a in node.args]
            kwargs = {k.arg: value(k.value) for k in node.keywords}
            try:
                return _FUNCTIONS[node.func.id](*args, **kwargs)
            except (TypeError, ValueError, statistics.StatisticsError) as e:
                raise SourceError("%s: %s" % (ast.unparse(node), e))
        raise SourceError("%r is not allowed in a marker's expression" % ast.unparse(node))
    return value(tree)


def quoted_value(integer, decimals):
    """(value, half the last written digit's step) of a number as written: "1,100" -> (1100, 50)."""
    digits = integer.replace(",", "")
    if decimals:
        return float(digits + decimals), 0.5 * 10 ** -(len(decimals) - 1)
    zeros = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    return float(digits), 0.5 * 10 ** zeros


def matches(written_integer, written_decimals, actual):
    """Whether a measured value rounds to the number as written."""
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return False
    written, half_step = quoted_value(written_integer, written_decimals)
    return abs(actual - written) <= half_step * (1 + 1e-9)


# ---------------------------------------------------------------- finding figures on a page

def _blank(text, pattern):
    """text with every match of pattern replaced by spaces (so that offsets and lines stay)."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def prose_of(text):
    """The page with code blocks, inline code, generated blocks and link targets blanked out; markers kept."""
    text = _blank(text, re.compile(r"^```.*?^```[^\n]*$", re.S | re.M))
    text = _blank(text, GENERATED)
    text = _blank(text, re.compile(r"`[^`\n]*`"))
    text = _blank(text, re.compile(r"\]\([^)\s]*\)"))
    return text


def _marker_after(prose, end):
    """The marker that starts right after offset end (spaces and closing emphasis allowed), or None."""
    m = re.compile(r"[ \t*_)]*(<!--.*?-->)", re.S).match(prose, end)
    if not m:
        return None
    return MARKER.match(m.group(1))


def figures_of(prose):
    """(offset, integer, decimals, end, in a table cell) of every number on the page that must carry a
    marker."""
    found = {}
    for m in FIGURE.finditer(prose):
        found[m.start()] = (m.start(), m.group(1), m.group(2), m.end(), False)
    for m in RANGE_START.finditer(prose):
        found.setdefault(m.start(), (m.start(), m.group(1), m.group(2), m.end(), False))
    found.update({f[0]: f for f in _table_figures(prose)})
    # Text inside a marker is the marker's, never a figure of the page.
    comments = [(c.start(), c.end()) for c in re.finditer(r"<!--.*?-->", prose, re.S)]
    return sorted(f for f in found.values() if not any(a <= f[0] < b for a, b in comments))


def _table_figures(prose):
    """Numbers in the body cells of table columns whose header names a unit of time, cycles or a ratio."""
    figures = []
    lines = prose.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    k = 0
    while k + 1 < len(lines):
        header, rule = lines[k], lines[k + 1]
        if header.lstrip().startswith("|") and re.match(r"^\s*\|[\s:|-]+\|\s*$", rule) and "-" in rule:
            columns = [i for i, cell in enumerate(_cells(header)) if UNIT_HEADER.search(re.sub(r"<!--.*?-->", "", cell[1]))]
            row = k + 2
            while row < len(lines) and lines[row].lstrip().startswith("|"):
                for i, (start, cell) in enumerate(_cells(lines[row])):
                    if i not in columns:
                        continue
                    for m in re.finditer(_NUMBER, re.sub(r"<!--.*?-->", lambda c: " " * len(c.group(0)), cell)):
                        offset = offsets[row] + start + m.start()
                        figures.append((offset, m.group(1), m.group(2), offsets[row] + start + m.end(), True))
                row += 1
            k = row
        else:
            k += 1
    return figures


def _cells(line):
    """(offset in the line, text) of each cell of a Markdown table row."""
    bars = [m.start() for m in re.finditer(r"(?<!\\)\|", line)]
    return [(a + 1, line[a + 1:b]) for a, b in zip(bars, bars[1:])]


# ---------------------------------------------------------------- checking

def check_page(path, kit=KIT_ROOT, cache=None):
    """Problems with the figures of one page: FILE:LINE: message."""
    cache = {} if cache is None else cache
    rel = os.path.relpath(path, kit)
    with open(path) as f:
        text = f.read()
    prose = prose_of(text)
    problems = []

    def line_of(offset):
        return text.count("\n", 0, offset) + 1

    # Every figure that must carry a marker has one...
    for offset, integer, decimals, end, _ in figures_of(prose):
        if _marker_after(prose, end) is None:
            problems.append("%s:%d: the figure %s has no source: write <!-- from SOURCE: EXPR --> after it "
                            "(or cited:/given:, tools/quoted_figures.py)" % (rel, line_of(offset), integer + (decimals or "")))
    # ...and every marker, wherever it is, follows a number and holds for it.
    for m in MARKER.finditer(prose):
        where = "%s:%d" % (rel, line_of(m.start()))
        line_start = prose.rfind("\n", 0, m.start()) + 1
        before = NUMBER_BEFORE_MARKER.search(prose[line_start:m.start()])
        if before is None:
            problems.append("%s: a marker that follows no number: %s" % (where, m.group(0)))
            continue
        integer, decimals = before.group(1), before.group(2)
        kind, body = m.group(1), m.group(2)
        if kind in ("cited", "given"):
            if not body.strip(":").strip():
                problems.append("%s: the figure %s is %s without saying where or what"
                                % (where, integer + (decimals or ""), kind))
            continue
        problems += _from_problems(where, integer, decimals, body, kit, cache)
    for m in GENERATED.finditer(text):
        try:
            want = render(m.group(1), kit, cache)
        except SourceError as e:
            problems.append("%s:%d: generated block %s: %s" % (rel, line_of(m.start()), m.group(1), e))
            continue
        if m.group(2) != want:
            problems.append("%s:%d: generated block %s differs from its sources: run "
                            "python3 tools/check_handouts.py --write" % (rel, line_of(m.start()), m.group(1)))
    return problems


def _from_problems(where, integer, decimals, body, kit, cache):
    written = integer + (decimals or "")
    source, sep, expression = body.partition(":")
    if not sep or not expression.strip():
        return ["%s: the marker of %s does not read 'from SOURCE: EXPR': %s" % (where, written, body)]
    try:
        actual = evaluate(expression.strip(), load_source(source.strip(), kit, cache))
    except SourceError as e:
        return ["%s: the figure %s: %s" % (where, written, e)]
    if not matches(integer, decimals, actual):
        shown = ("%.6g" % actual) if isinstance(actual, (int, float)) and not isinstance(actual, bool) else repr(actual)
        return ["%s: the page says %s, but %s gives %s (%s)" % (where, written, source.strip(), shown,
                                                               expression.strip())]
    return []


def pages(kit=KIT_ROOT):
    found = []
    for pattern in PAGES:
        found += sorted(glob.glob(os.path.join(kit, pattern)))
    return found


def write_generated(path, kit=KIT_ROOT):
    """Rewrites the generated blocks of a page from their sources; returns whether it changed."""
    with open(path) as f:
        text = f.read()
    cache = {}

    def block(m):
        try:
            body = render(m.group(1), kit, cache)
        except SourceError as e:  # left as it is; the check names it
            print("%s: generated block %s not rewritten: %s" % (os.path.relpath(path, kit), m.group(1), e))
            body = m.group(2)
        return "<!-- begin generated: %s -->\n%s<!-- end generated: %s -->" % (m.group(1), body, m.group(1))
    new = GENERATED.sub(block, text)
    if new != text:
        with open(path, "w") as f:
            f.write(new)
    return new != text


# ---------------------------------------------------------------- generated tables

def render(name, kit=KIT_ROOT, cache=None):
    """The Markdown of a generated block, ending in a newline. A cache may hold documents not yet on
    disk (measure_thresholds prints its tables before they are copied into place)."""
    cache = {} if cache is None else cache
    if name not in RENDERERS:
        raise SourceError("no generated block called %s (tools/quoted_figures.py RENDERERS)" % name)
    try:
        return "\n".join(RENDERERS[name](lambda source: load_source(source, kit, cache))) + "\n"
    except (KeyError, TypeError, IndexError) as e:
        raise SourceError("its source lacks what it needs (%s: %s)" % (type(e).__name__, e))


def _number(v, decimals=2):
    return "{:,.{}f}".format(v, decimals)


def _spread(values, decimals=2):
    return "%s..%s" % (_number(min(values), decimals), _number(max(values), decimals))


def _costs_table(load):
    doc = load("costs")
    rows = ["| figure | median | fewest..most, %d runs | what is measured |" % doc["repeats"],
            "| --- | --- | --- | --- |"]
    for key, c in doc["costs"].items():
        decimals = 0 if c["unit"] == "cycles" else 2
        rows.append("| `%s` | %s %s | %s | %s |" % (key, _number(c["median"], decimals), c["unit"],
                                                    _spread(c["runs"], decimals), c["what"]))
    d = doc["defaults"]
    rows += ["", "Defaults before any `cudaDeviceSetLimit`: pending-launch count %s, device heap %s bytes (%s MiB), "
             "stack %s bytes per thread, printf FIFO %s bytes." % (
                 _number(d["pending_launch_count"], 0), _number(d["malloc_heap_bytes"], 0),
                 _number(d["malloc_heap_bytes"] / 1048576.0, 0), _number(d["stack_bytes"], 0),
                 _number(d["printf_fifo_bytes"], 0))]
    return rows


def _bench_table(load):
    doc = load("bench-04")
    bench = doc["bench"]
    rows = ["| workload | lines | vertices | " + " | ".join("%s (ms)" % v for v in bench["versions"]) + " |",
            "| --- | --- | --- | " + " | ".join("---" for _ in bench["versions"]) + " |"]
    for r in bench["rows"]:
        rows.append("| %s | %s | %s | %s |" % (r["workload"], _number(r["lines"], 0), _number(r["vertices"], 0),
                                               " | ".join(_number(ms, 3) for ms in r["median_ms"])))
    return rows


def _machine(load):
    rows = ["| source | GPU | compute capability | SMs | CUDA runtime | driver supports |",
            "| --- | --- | --- | --- | --- | --- |"]
    for source in ("suite", "thresholds", "costs", "bench-04", "recorded/lab04-solution"):
        try:
            device = load(source)["device"]
        except (SourceError, KeyError):
            continue
        rows.append("| %s | %s | %s.%s | %s | %s | %s |" % (
            source, device["name"], device["cc_major"], device["cc_minor"], device["sm_count"],
            cuda_version(device["runtime_version"]), cuda_version(device["driver_version"])))
    for name in sorted(f[:-len(".json")] for f in os.listdir(os.path.join(KIT_ROOT, MUTANTS_DIR))
                       if f.endswith(".json")):
        doc = load("mutants/" + name)  # a mutation run keeps the GPU's name and runtime only
        rows.append("| mutants/%s | %s | | | %s | |" % (name, doc["gpu"], cuda_version(doc["runtime_version"])
                                                       if doc.get("runtime_version") else ""))
    return rows


def _toolkits_table(load):
    """tools/toolkit_matrix.py's document: each toolkit and architecture, what was graded and whether it
    held; each toolkit that could not be had, and why."""
    doc = load("toolkits")
    rows = ["| toolkit | architecture | submissions built and statically checked | result |",
            "| --- | --- | --- | --- |"]
    for r in doc["rows"]:
        rows.append("| %s | sm_%s | %d | %s |" % (r["toolkit"], r["arch"], r["graded"],
                                                "as expected" if not r["problems"] else
                                                "%d problems" % len(r["problems"])))
    for u in doc["not_available"]:
        rows.append("| CUDA %s | %s | not available here | %s |" % (
            u["toolkit"], "sm_%s" % u["arch"] if "arch" in u else "", u["why"].replace("|", "/")))
    return rows


def _suite_table(load):
    doc = load("suite")
    rows = ["%d of %d tests passed, %d failed, %d not run; %s. By label:" % (
        doc["passed"], doc["total"], doc["failed"], doc["not_run"], doc["command"]), "",
        "| label | tests | passed | failed | not run |", "| --- | --- | --- | --- | --- |"]
    for label, c in sorted(doc["labels"].items()):
        rows.append("| %s | %d | %d | %d | %d |" % (label, c["total"], c["passed"], c["failed"], c["not_run"]))
    return rows


def _at_that_rate(c):
    """A class's wall time for all its submissions: its own where graded whole, else a stopped batch's
    scaled from the submissions it graded (None: none graded)."""
    if c["finished"]:
        return c["wall_s"]
    return c["submissions"] * c["wall_s"] / c["graded"] if c["graded"] else None


def _class_scale_by_lab(docs):
    """Each lab's class on one GPU and on each larger count measured, from the class that tells the most:
    nothing else on the host beside it, then graded whole, then the most graded; its document named."""
    best = {}
    for name, doc in docs:
        for c in doc["classes"]:
            if not c["graded"]:
                continue
            key = (c["lab"], c["gpus"])
            rank = (c.get("beside") is not None, not c["finished"], -c["graded"])
            if key not in best or rank < best[key][0]:
                best[key] = (rank, c, name, doc["device"])
    if not best:
        return []
    counts = sorted({gpus for _, gpus in best})
    rows = ["Each lab's class, from the class that tells the most (nothing beside it, then graded whole, then the "
            "most graded; its document's own table below):", "",
            "| lab | " + " | ".join("%d GPU%s: the class at that rate (s) | graded | on | document" % (
                n, "" if n == 1 else "s") for n in counts) + " |",
            "| --- |" + " --- | --- | --- | --- |" * len(counts)]
    for lab in sorted({lab for lab, _ in best}):
        cells = []
        for n in counts:
            if (lab, n) not in best:
                cells.append("not measured | | |")
                continue
            _, c, name, device = best[(lab, n)]
            cells.append("%s | %d of %d | %s | `%s`" % (_number(_at_that_rate(c), 0), c["graded"], c["submissions"],
                                                        device, name))
        rows.append("| %s | %s |" % (lab, " | ".join(cells)))
    return rows + [""]


def _class_scale_table(load, names=None):
    """Every class-scale document (tools/batch_throughput.py --gather, one per host): each class of a lab on
    one GPU and on all of the host's, the time per phase of a submission (medians), and what a student waits
    for. GPU alone is the time the median submission held the GPU alone; its floor, N times the mean
    submission's (the median's in documents before the mean) over G, bounds a class of N on G GPUs,
    whatever the jobs. Memcheck: its run under compute-sanitizer, which shares the GPU,
    and its wait for the GPU (documents before the kit timed it have none). Beside it: what else ran on
    the host meanwhile (another class on another GPU), which only makes a class slower. The class at that
    rate: the wall time of a class graded whole, else of a batch stopped early, scaled from the submissions
    it graded to all of them (what the targets are set in)."""
    names = names or sorted(f[:-len(".json")] for f in os.listdir(os.path.join(KIT_ROOT, DATA_DIR))
                            if f.startswith("class-scale") and f.endswith(".json"))
    docs = [(name, load(name)) for name in names]
    rows = _class_scale_by_lab(docs)
    for name, doc in docs:
        rows += ["On %d x %s, %d cores%s (`%s`):" % (
            doc["gpus_on_host"], doc["device"], doc["cores"],
            ", CUDA %s" % cuda_version(doc["runtime_version"]) if doc.get("runtime_version") else "", name), "",
            "| lab | GPUs | beside it | longest limit of a case (s) | graded | wall (s) | the class at that rate (s) "
            "| contexts | GPU alone (s) | its floor (s) | build (s) | waiting (s) | context (s) | cases (s) "
            "| memcheck, its wait (s) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for c in doc["classes"]:
            p = c["phases"]
            whole = _at_that_rate(c)
            head = "| %s | %d | %s | %s | %d of %d%s | %s | %s |" % (
                c["lab"], c["gpus"], c.get("beside") or "", _number(c["time_limit_s"], 0), c["graded"],
                c["submissions"], "" if c["finished"] else ", stopped", _number(c["wall_s"], 1),
                _number(whole, 0) if whole is not None else "")
            if p.get("alone_s") is None:  # nothing graded by then
                rows.append(head + " | | | | | | | |")
                continue
            memcheck = ("%s, %s" % (_number(p["memcheck_s"], 2), _number(p["memcheck_wait_s"], 2))
                        if p.get("memcheck_s") is not None else "")
            rows.append(head + " %g | %s | %s | %s | %s | %s | %s | %s |" % (
                c["contexts"], _number(p["alone_s"], 2),
                _number(c["submissions"] * (c.get("alone_mean_s") or p["alone_s"]) / c["gpus"], 0),
                _number(p["build_s"], 2), _number(p["wait_s"], 2), _number(p["context_s"], 2),
                _number(p["case_s"], 2), memcheck))
        if doc.get("latency"):
            rows += ["", "| lab | `make grade`, cold (s) | warm (s) | GPU alone (s) |", "| --- | --- | --- | --- |"]
            for lab, r in sorted(doc["latency"]["labs"].items()):
                rows.append("| %s | %s | %s | %s |" % (lab, _number(r["cold_s"], 1), _number(r["warm_s"], 1),
                                                       _number(r["alone_s"], 2) if "alone_s" in r else ""))
        rows.append("")
    return rows[:-1] or ["No class-scale document yet: `tools/gpu-suite.sh latency throughput` writes one."]


NOT_RECORDED = "not recorded yet"


def _mutation_runs(load):
    """[(lab, its recorded mutation run, or None where it has none yet)], every lab in name order."""
    runs = []
    for lab in sorted(registry.all_labs().values(), key=lambda lab: lab.name):
        try:
            runs.append((lab, load("mutants/" + lab.name)))
        except SourceError:
            runs.append((lab, None))
    return runs


def _mutants_table(load):
    import mutants  # tools/: its reading of the equivalent lists
    rows = ["| lab | mutants | killed | survived, argued equivalent | survived, not argued | GPU | seconds |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for lab, doc in _mutation_runs(load):
        if doc is None:
            rows.append("| %s | %s | | | | | |" % (lab.name, NOT_RECORDED))
            continue
        equivalent = mutants.read_equivalent(lab)
        status = [m["status"] for m in doc["mutants"]]
        survived = [m["id"] for m in doc["mutants"] if m["status"] == "survived"]
        argued = [i for i in survived if i in equivalent]
        rows.append("| %s | %d | %d | %d | %d | %s | %s |" % (
            lab.name, len(status), status.count("killed"), len(argued), len(survived) - len(argued), doc["gpu"],
            _number(doc["seconds"], 0)))
    return rows


def _thresholds_lab01(load):
    doc = load("thresholds")
    rows = ["Median of %d processes x %d timed launches each." % (doc["processes"], doc["repeats"]), "",
            "| K | M | N | flat reference (ms) | CDP solution (ms) | flat / CDP |", "| --- | --- | --- | --- | --- | --- |"]
    for r in doc["lab01"]:
        rows.append("| %s | %s | %s | %s | %s | %s |" % (_number(r["K"], 0), _number(r["M"], 0), _number(r["N"], 0),
                                                        _number(r["flat_ms"], 4), _number(r["cdp_ms"], 4),
                                                        _number(r["flat_over_cdp"], 2)))
    return rows


def _thresholds_lab02(load):
    rows = ["| known-wrong submission | wrong per run | runs | fewest | most |", "| --- | --- | --- | --- | --- |"]
    for r in load("thresholds")["lab02"]:
        what = ("children that saw the later value" if r["case"] == "race-left-in" else "elements wrong after the child")
        rows.append("| %s | %s, of %s | %d | %s | %s |" % (r["case"], what, _number(r["out_of"], 0), len(r["runs"]),
                                                          _number(r["min"], 0), _number(r["max"], 0)))
    return rows


def _thresholds_lab04(load):
    rows = ["| submission | case | workload | lines | runs | NULL / yours | flat / yours |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in load("thresholds")["lab04"]:
        rows.append("| %s | %s | %s | %s | %d | %s | %s |" % (
            r["side"], r["case"], r["workload"], _number(r["lines"], 0), len(r["null_over_student"]),
            _spread(r["null_over_student"]), _spread(r["flat_over_student"])))
    return rows


def _thresholds_lab05(load):
    rows = ["| submission | streams | threads | runs | A: legacy / yours | A: most at once | B: legacy / yours "
            "| B: most at once | B: worst lateness (us) | legacy overlaps |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in load("thresholds")["lab05"]:
        rows.append("| %s | %d | %d | %d | %s | %s | %s | %s | %s | %d |" % (
            r["side"], r["streams"], r["threads"], len(r["a_ratio"]), _spread(r["a_ratio"]),
            _spread(r["a_at_once"], 0), _spread(r["b_ratio"]), _spread(r["b_at_once"], 0),
            _spread(r["b_worst_late_us"], 0), sum(r["legacy_overlaps"])))
    return rows


def _thresholds_lab06(load):
    rows = ["| submission | runs | per-object malloc / pool | per-object malloc / bulk | one atomic per thread / yours "
            "| duplicates per run |", "| --- | --- | --- | --- | --- | --- |"]
    part_a = None
    for r in load("thresholds")["lab06"]:
        if r["side"] == "part-a":
            part_a = r["timing"]
            continue
        runs = max(len(r["malloc_over_pool"]), len(r["duplicates"]))
        rows.append("| %s | %d | %s | %s | %s | %s |" % (
            r["side"], runs, *(_spread(r[k]) if r[k] else "-" for k in
                               ("malloc_over_pool", "malloc_over_bulk", "per_thread_over_yours")),
            _spread(r["duplicates"], 0) if r["duplicates"] else "-"))
    if part_a:
        per_object, bulk, pool = (part_a[k]["median_ms"] for k in ("per_object_malloc", "bulk", "pool"))
        rows += ["", "Part A at the source's size, 1,000,000 objects of 128 bytes, median of 3: per-object malloc "
                 "%s ms (%d failed), bulk %s ms, pool %s ms: per-object / bulk %s, per-object / pool %s." % (
                     _number(per_object, 1), part_a["per_object_malloc"]["malloc_failures"], _number(bulk, 3),
                     _number(pool, 3), _number(per_object / bulk, 0), _number(per_object / pool, 0))]
    return rows


def _thresholds_lab07(load):
    doc = load("thresholds")["lab07"]
    rows = ["| submission | case | runs | kit's exhaustive kernel (ms) | its subdivision (ms) | exhaustive / subdivision |",
            "| --- | --- | --- | --- | --- | --- |"]
    for side, cases in doc["timing"].items():
        for case, r in cases.items():
            rows.append("| %s | %s | %d | %s | %s | %s |" % (side, case, len(r["exhaustive_over_cdp"]),
                                                            _spread(r["exhaustive_ms"], 1), _spread(r["cdp_ms"], 1),
                                                            _spread(r["exhaustive_over_cdp"])))
    survey = doc["survey"]
    rows += ["", "The rule's own image against the exhaustive one, over the %d distinct cases the grader draws for %d "
             "seeds: at most %s of the pixels differ (%d of the cases have a pixel that does)." % (
                 len(survey), doc["survey_seeds"], "%.4f%%" % (100 * doc["worst_unlike_fraction"]),
                 sum(1 for r in survey if r["rule_unlike_exhaustive"]))]
    return rows


def _percent_of_pixels(fraction):
    """A small fraction of an image's pixels as a percent, two significant digits, never in e-notation."""
    if not fraction:
        return "0"
    percent, digits = 100 * fraction, 0
    while percent * 10 ** digits < 10:
        digits += 1
    return "{:.{}f}%".format(percent, digits)


def _bench_07_table(load):
    """make bench LAB=07: the exhaustive kernel, the host worklist, NVIDIA's published design and the
    reference solution's CDP in one run (bench-07), and the one-thread-launches alternative's CDP from
    its own run (bench-07-one-thread-launches, its ratio over that run's exhaustive time); then the
    launches of the two launching designs, and their images against the exhaustive one."""
    doc = load("bench-07")
    other = {(r["view"], r["zoom"], r["max_dwell"], r["side"]): r
             for r in load("bench-07-one-thread-launches")["bench"]}

    def case(r):
        return "| %s | %d | %s | %s x %s |" % (r["view"], r["zoom"], _number(r["max_dwell"], 0),
                                               _number(r["side"], 0), _number(r["side"], 0))

    def timed(ms, exhaustive_ms, fastest=False):
        cell = _number(ms, 3)
        return "%s (%sx)" % ("**%s**" % cell if fastest else cell, _number(exhaustive_ms / ms, 2))

    rows = ["| view | zoom | max dwell | image | filled by the rule | exhaustive (ms) | host worklist (ms) "
            "| published (ms) | CDP, the reference (ms) | CDP, thread 0 makes all 16 launches (ms, its own run) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in doc["bench"]:
        alt = other[(r["view"], r["zoom"], r["max_dwell"], r["side"])]
        fastest = min(r["exhaustive_ms"], r["worklist_ms"], r["published_ms"], r["cdp_ms"])
        ex = r["exhaustive_ms"]
        rows.append("%s %s%% | %s | %s | %s | %s | %s |" % (
            case(r), _number(100 * r["filled_fraction"], 1),
            "**%s**" % _number(ex, 3) if ex == fastest else _number(ex, 3),
            timed(r["worklist_ms"], ex, r["worklist_ms"] == fastest),
            timed(r["published_ms"], ex, r["published_ms"] == fastest),
            timed(r["cdp_ms"], ex, r["cdp_ms"] == fastest), timed(alt["cdp_ms"], alt["exhaustive_ms"])))
    rows += ["", "In parentheses: the exhaustive kernel's time over that version's, in the same run (the last "
             "column: over its own run's exhaustive time). In bold: the fastest of the first four, which "
             "ran in one process, one after another on each case.", "",
             "| view | zoom | max dwell | image | child grids, the reference | child grids, published (split / "
             "fill / per pixel) | pending-launch limit, the reference / published | filled, the rule / published "
             "| pixels unlike the exhaustive image, the reference / published |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in doc["bench"]:
        rows.append("%s %s | %s (%s / %s / %s) | %s / %s | %s%% / %s%% | %s / %s |" % (
            case(r), _number(r["cdp_child_grids"], 0), _number(r["published_child_grids"], 0),
            _number(r["published_split_grids"], 0), _number(r["published_fill_grids"], 0),
            _number(r["published_pixel_grids"], 0), _number(r["cdp_pending_limit"], 0),
            _number(r["published_pending_limit"], 0), _number(100 * r["filled_fraction"], 1),
            _number(100 * r["published_filled_fraction"], 1),
            _percent_of_pixels(r["cdp_unlike_exhaustive_fraction"]),
            _percent_of_pixels(r["published_unlike_exhaustive_fraction"])))
    return rows


def _thresholds_lab08(load):
    doc = load("thresholds")["lab08"]
    rows = ["| submission | runs | yours (ms) | copy (ms) | yours / copy | flat / yours | CDP / yours |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for side, r in doc["timing"].items():
        rows.append("| %s | %d | %s | %s | %s | %s | %s |" % (
            side, len(r["balanced_ms"]), _spread(r["balanced_ms"], 3), _spread(r["copy_ms"], 3),
            _spread(r["balanced_over_copy"]), _spread(r["flat_over_balanced"]), _spread(r["cdp_over_balanced"])))
    case = doc["case"]
    rows += ["", "The heavy timing case: %s lines, at most %s vertices a line, %s vertices in all." % (
        _number(case["lines"], 0), _number(case["max"], 0), _number(doc["total_vertices"], 0))]
    return rows


def _bench_08_table(load):
    doc = load("bench-08")["bench"]
    versions = doc["versions"]
    rows = ["| workload | lines | max | vertices | " + " | ".join("%s (ms)" % v for v in versions)
            + " | flat / balanced |", "| --- | --- | --- | --- | " + " | ".join("---" for _ in versions) + " | --- |"]
    for r in doc["tessellation"]:
        ms = r["median_ms"]
        rows.append("| %s | %s | %s | %s | %s | %s |" % (
            r["workload"], _number(r["lines"], 0), _number(r["max_vertices"], 0), _number(r["vertices"], 0),
            " | ".join(_number(m, 3) for m in ms), _number(ms[1] / ms[0], 2)))
    rows += ["", "| one step of a chain of kernels, each deciding the next | µs per step |", "| --- | --- |"]
    for r in doc["chains"]:
        rows.append("| %s | %s |" % (r["way"], "not available" if r["us_per_step"] is None
                                     else _number(r["us_per_step"], 2)))
    rows += ["", "| from a launch on the device to the child's first instruction | µs, median |", "| --- | --- |"]
    for r in doc["launch_to_start"]:
        rows.append("| %s | %s |" % (r["way"], _number(r["us"], 2)))
    ref = doc["refinement"]
    rows += ["", "| the refinement of %s heavy lines, %d rounds | host launches | ms, one run |" % (
        _number(ref["lines"], 0), ref["rounds"]), "| --- | --- | --- |",
             "| the kit's loop, a host round trip per round | %d | %s |" % (ref["host_loop_launches"],
                                                                        _number(ref["host_loop_ms"], 3)),
             "| a WHILE conditional node | 1 | %s |" % _number(ref["while_ms"], 3),
             "| a device graph relaunched by tail launch | 1 | %s |" % _number(ref["device_graph_ms"], 3)]
    return rows


def _stability_table(load):
    """Each lab's solution and alternatives as graded among its mutants (tools/mutants.py
    --baseline-seeds): how many gradings, how many got full marks, how many other gradings ran beside."""
    rows = ["| lab | submission | gradings (seeds) | full marks | other gradings running at its start | GPU |",
            "| --- | --- | --- | --- | --- | --- |"]
    for lab, doc in _mutation_runs(load):
        if doc is None:
            rows.append("| %s | | %s | | | |" % (lab.name, NOT_RECORDED))
            continue
        for what in sorted({b["what"] for b in doc["baselines"]}, key=lambda w: (w != "solution", w)):
            mine = [b for b in doc["baselines"] if b["what"] == what]
            others = sorted(b["others_running"] for b in mine if "others_running" in b)
            seeds = sorted(b["seed"] for b in mine)
            rows.append("| %s | %s | %d (%s) | %d | %s | %s |" % (
                lab.name, what, len(mine), "%d..%d" % (seeds[0], seeds[-1]) if len(seeds) > 1 else seeds[0],
                sum(1 for b in mine if b["score"] >= b["max_score"]),
                "%d to %d" % (others[0], others[-1]) if others else "not recorded", doc["gpu"]))
    return rows


def _imports_block(number):
    """A lab README's list of what the student's code may call (gradelib.objects, the lab's Imports)."""
    def rows(load):
        lab = registry.resolve(number)
        device = sorted(lab.imports.device)
        host = sorted(lab.imports.host)
        return ["The grader reads your compiled file before anything of it runs, and refuses it (verdict "
                "\"refused code\", naming the call and its line) if it calls or runs anything else than:",
                "",
                "- in device code: the device runtime's calls (launches, errors, streams, events, memory), `printf`, "
                "`malloc`, `free`, `assert`, `KIT_CHECK_LAUNCH()`, `KIT_CHECK_DEVICE()`%s;" % (
                    "; for this lab also " + ", ".join("`%s`" % n for n in device) if device else ""),
                "- in host code: the CUDA runtime's calls for errors, devices and their limits, memory and copies, "
                "streams, events and kernel attributes, `KIT_CHECK()`, and the C library's printing (`printf`, "
                "`fprintf` to `stdout` or `stderr`), host memory and maths functions%s;" % (
                    "; for this lab also " + ", ".join("`%s`" % n for n in host) if host else ""),
                "- and nothing runs before `main`: no constructor, no global initialized by a function call; no "
                "system call of its own, no function named as a library's (`grader/gradelib/objects.py` has the "
                "whole list)."]
    return rows


def constant_text(value):
    """A rubric constant as a handout writes it: 1.5, 4, 1,000, 0.0001."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return "{:,}".format(value) if isinstance(value, int) else "%g" % value


def rubric_rows(lab):
    """A lab's "How it is graded" table, from its rubric: each check's name, points and when it passes
    (Check.passes, its {NAME} the rubric module's constant NAME)."""
    module = importlib.import_module("rubrics.lab%s" % lab.number)
    values = {k: constant_text(v) for k, v in vars(module).items()
              if isinstance(v, (int, float)) and not isinstance(v, bool)}
    rows = ["| check | points | passes when |", "| --- | --- | --- |"]
    for c in lab.checks:
        rows.append("| %s | %s | %s |" % (c.name, constant_text(c.points), c.passes.format(**values)))
    return rows


def _rubric_block(number):
    def rows(load):
        return rubric_rows(registry.resolve(number))
    return rows


def note_fields(case_dir):
    """A known-wrong case's note.txt: (check, {field: text}), the check from its first line (read_note)
    and the fields from its lines "mistake: ..." and "happens: ..." (what a handout's Common mistakes
    table shows)."""
    with open(os.path.join(case_dir, "note.txt")) as f:
        fields = dict(l.strip().split(":", 1) for l in f if re.match(r"(mistake|happens):", l))
    return read_note(case_dir)[0], {k: v.strip() for k, v in fields.items()}


def grader_words(message, limit=300):
    """What the grader said, as a table cell quotes it, on one line: its "actual:" part where it has
    one; else its first line and the first case under it ("3 of 11 runs were not clean: blocks=16 ...:
    ..."), without the run's output; paths inside the kit made relative to it; cut at limit characters."""
    actual = re.search(r"^actual:\s*(.*)", message, re.M | re.S)
    if actual:
        text = actual.group(1)
    else:
        lines = [l for l in message.splitlines() if l.strip() and not l.lstrip().startswith("|")]
        text = " ".join(lines[:2]) + (" ..." if len(lines) > 2 and lines[0].endswith(":") else "")
    text = re.sub(r"/\S*?/((?:common|labs|grader)/)", r"\1", " ".join(text.split()))
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " ..."
    text = text.replace("|", "\\|")
    return "``%s``" % text if "`" in text else "`%s`" % text


def mistake_rows(lab, kit=KIT_ROOT):
    """A lab handout's Common mistakes table: a row for each known-wrong submission whose note.txt has a
    "mistake:" line, in rubric order: the mistake, what happens, the check that catches it and what the
    grader said of that submission when the kit's tests last ran it (grader/tests/data/verdicts/)."""
    order = {c.name: i for i, c in enumerate(lab.checks)}
    folder = paths.incorrect_dir(lab.name, kit)
    cases = []
    for case in paths.case_folders(folder):
        check, fields = note_fields(os.path.join(folder, case))
        if "mistake" in fields:
            cases.append((order.get(check, len(order)), case, check, fields))
    gpus, rows = set(), []
    for _, case, check, fields in sorted(cases):
        path = os.path.join(kit, VERDICTS_DIR, lab.name, case + ".json")
        if os.path.exists(path):
            with open(path) as f:
                verdict = json.load(f)
            if verdict.get("gpu"):
                gpus.add(verdict["gpu"])
            said = "%s: %s" % (verdict["check"], grader_words(verdict["message"]))
        else:
            said = "%s (not recorded yet)" % check
        rows.append("| %s | %s | %s |" % (fields["mistake"], fields.get("happens", ""), said))
    where = " (runtime checks on an %s)" % " and an ".join(sorted(gpus)) if gpus else ""
    return (["Each row is a known-wrong submission the kit keeps, with what the grader said of it when the kit's "
             "tests last graded it%s; the numbers in its words are that run's." % where, "",
             "| mistake | what happens | caught by, and what the grader says |", "| --- | --- | --- |"] + rows)


def _mistakes_block(number):
    def rows(load):
        return mistake_rows(registry.resolve(number))
    return rows


RENDERERS = {
    "thresholds-lab01": _thresholds_lab01,
    "thresholds-lab02": _thresholds_lab02,
    "thresholds-lab04": _thresholds_lab04,
    "thresholds-lab05": _thresholds_lab05,
    "thresholds-lab06": _thresholds_lab06,
    "thresholds-lab07": _thresholds_lab07,
    "bench-07": _bench_07_table,
    "thresholds-lab08": _thresholds_lab08,
    "bench-08": _bench_08_table,
    "costs": _costs_table,
    "bench-04": _bench_table,
    "machines": _machine,
    "suite": _suite_table,
    "toolkits": _toolkits_table,
    "mutants": _mutants_table,
    "stability": _stability_table,
    "class-scale": _class_scale_table,
}
RENDERERS.update(("imports-%s" % lab.number, _imports_block(lab.number)) for lab in registry.all_labs().values())
RENDERERS.update(("rubric-%s" % lab.number, _rubric_block(lab.number)) for lab in registry.all_labs().values())
RENDERERS.update(("mistakes-%s" % lab.number, _mistakes_block(lab.number)) for lab in registry.all_labs().values())
