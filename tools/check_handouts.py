#!/usr/bin/env python3
"""Checks the handouts against the kit, so that what they quote keeps working.

  python3 tools/check_handouts.py [HANDOUT.md ...]     (default: every handouts/*.md)
  python3 tools/check_handouts.py --html build/handouts  (after `make handouts`: every local link
                                                         and image of the HTML resolves)
  python3 tools/check_handouts.py --write                 rewrite the generated tables of every page
                                                         from the recorded data (tools/quoted_figures.py)

- every relative link and image points at a file that exists, and every #anchor at a heading;
- every `make TARGET` quoted as code is a target of the top-level Makefile, every LAB=NN names a lab, and
  every option in ARGS="..." is one the lab's harness accepts;
- every grade.py option quoted exists;
- device-side cudaDeviceSynchronize is never presented as current: each line that names it must
  say it is legacy (removed, CDP1, older texts...) or be in a passage about the legacy model;
- every lab handout (handouts/NN-*.md, NN not 00) has exactly the template's `##` sections, in order,
  and its `###` subsections in section 2 are numbered 2.1, 2.2, ... in order;
- every measured figure a page quotes (the handouts, the READMEs, RESULTS.md, the answer keys) carries a
  marker naming its source, and rounds to what that recorded source holds; every generated table
  equals what its sources render (tools/quoted_figures.py says how);
- statements of the legacy model (CDP1) or of tools that the kit has corrected never come back as
  current rules (LEGACY_CLAIMS): device printf's buffer dropping further output (it is circular: older
  output is overwritten), CDP1's "virtualized" launch pool in host memory or always running the
  launch, a nesting-depth limit of 24 or 64 as today's limit, memcheck reporting failed CUDA calls
  without saying "from the host"; checked on the handouts, the labs' READMEs, the answer keys and
  README.md (or on the pages named);
- every grader hint (the hint of every check of every lab's rubric in grader/rubrics/) names
  sections that exist in that lab's handout with that number and title (checked whenever the kit's
  own handouts are checked: no arguments, or a list that includes them).
Exit status 0 when all hold; otherwise each problem is printed as FILE:LINE: message.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grader"))

import quoted_figures  # noqa: E402  (tools/, this script's folder; it imports gradelib)
from gradelib import build, harness, paths, registry  # noqa: E402

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LEGACY_WORDS = re.compile(r"CDP1|legacy|removed|gone|deprecat|older|textbook|no longer|CUDA 5|11\.6|"
                          r"then and now|undefined in device code|FORCE_CDP1|host|instead|replace|"
                          r"wait for (its|their) child|cannot|can no longer|never|\bno\b|without", re.I)


# Wrong statements the kit has corrected, which must not come back as current rules: (name, pattern,
# context a unit of text must also match, (words, characters before, characters after): words near a
# match that excuse it, message). A unit is a paragraph,
# a list item or a table row outside code blocks, its lines joined. The patterns are narrow on purpose:
# the corrected wording (see the handouts) must pass.
_LEGACY_WORDS = r"CDP1|legacy|older|books|texts"
LEGACY_CLAIMS = [
    ("printf dropped", re.compile(r"\b(?:dropped|discarded)\b|\bsilently\s+lost\b|\blost\s+silently\b", re.I),
     re.compile(r"printf|fifo", re.I), None,
     "device printf's buffer is circular: when a kernel prints more than fits, older output is "
     "overwritten (CUDA Programming Guide, Formatted Output), nothing is dropped"),
    ("virtualized pool in host memory", re.compile(r"(?<!not )(?<!not in )\bhost memory\b", re.I),
     re.compile(r"virtuali[sz]", re.I), None,
     "CDP1's \"virtualized\" launch pool was a slower buffer, not host memory"),
    ("virtualized pool always ran", re.compile(r"\bstill\s+r[au]n\b|\bslowly but correctly\b", re.I),
     re.compile(r"virtuali[sz]", re.I), None,
     "CDP1's \"virtualized\" launch pool could overflow too (cudaErrorLaunchPendingCountExceeded): "
     "do not say its launches always ran"),
    ("depth limit current", re.compile(r"\b(?:still|currently|today)\b[^.|]{0,40}\bmax(?:imum|\.)?\s+"
                                       r"(?:nesting\s+)?depth|\bmaximum\s+(?:nesting\s+depth\s+)?of\s+(?:24|64)"
                                       r"\s+levels?,?\s+then and now|\b(?:24|64)\s+levels?\s+in\s+hardware", re.I),
     None, None,
     "a nesting-depth limit stated as current: 24 is in the Guide's CDP1 section only, and the CDP2 "
     "restrictions list no depth limit"),
    ("depth limit unattributed: guide", re.compile(r"\b24\s+(?:levels\s+)?in\s+NVIDIA['\u2019]s\s+(?:current\s+)?guide", re.I),
     None, (re.compile(r"CDP1|legacy", re.I), 0, 40),
     "a nesting-depth limit of 24 in NVIDIA's guide without saying it is in its CDP1 section: the CDP2 "
     "restrictions list no depth limit"),
    ("depth limit unattributed", re.compile(r"\bdepth\s+(?:limit\s+)?(?:is|of)\s+(?:24|64)\b"
                                            r"|\b64\s+(?:levels\s+)?in\s+hardware", re.I),
     None, (re.compile(_LEGACY_WORDS, re.I), 60, 60),
     "a nesting-depth limit of 24 or 64 without saying it is CDP1's or older texts': the CDP2 "
     "restrictions list no depth limit"),
    ("memcheck and device calls", re.compile(r"\bfailed CUDA calls?\b(?!\s+made\s+from\s+the\s+host)", re.I),
     re.compile(r"memcheck", re.I), None,
     "memcheck does not check CUDA calls made on the GPU under dynamic parallelism (Compute Sanitizer "
     "release notes, Known Limitations): say the failed CUDA calls it reports are made from the host"),
]
UNIT_START = re.compile(r"^\s*(?:\||[-*] |\d+\. |#)")


def text_units(lines):
    """(line numbers, start offsets, text) of each paragraph, list item or table row outside code."""
    units, current, in_code = [], None, False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
            current = None
            continue
        if in_code or not line.strip():
            current = None
            continue
        if current is None or UNIT_START.match(line):
            current = ([], [], [])
            units.append(current)
        numbers, offsets, parts = current
        numbers.append(number)
        offsets.append(sum(len(p) + 1 for p in parts))
        parts.append(line.strip())
    return [(numbers, offsets, " ".join(parts)) for numbers, offsets, parts in units]


def legacy_claim_problems(path, lines):
    """Each unit of text that states a corrected legacy claim as a current rule (LEGACY_CLAIMS)."""
    rel = os.path.relpath(path, KIT_ROOT)
    problems = []
    for numbers, offsets, text in text_units(lines):
        for _name, pattern, context, excuse, message in LEGACY_CLAIMS:
            if context and not context.search(text):
                continue
            for m in pattern.finditer(text):
                if excuse and excuse[0].search(text[max(0, m.start() - excuse[1]):m.end() + excuse[2]]):
                    continue
                line = [n for n, o in zip(numbers, offsets) if o <= m.start()][-1]
                problems.append("%s:%d: %s" % (rel, line, message))
                break
    return problems


def legacy_claim_pages():
    """The pages checked for corrected legacy claims: the handouts, the labs' READMEs, the answer keys, README.md."""
    found = []
    for pattern in ("handouts/*.md", "labs/*/README.md", "solutions/*/answers.md", "README.md"):
        found += sorted(glob.glob(os.path.join(KIT_ROOT, pattern)))
    return found


# The sections every lab handout has, in this order (the kit's handout template).
TEMPLATE = ["1. Goal", "2. Background", "3. The lab, step by step", "4. How it is graded",
            "5. Common mistakes", "6. Check yourself", "7. Where next"]
LAB_HANDOUT = re.compile(r"^(?!00-)\d\d-[\w-]+\.md$")
# One section a hint names: "2.4 (errors are per thread)"; a title may hold one level of parentheses.
HINT_SECTION, HINT_TEXT = registry.HINT_SECTION, registry.HINT_TEXT  # the form registry.hint() writes


def headings_of(lines):
    """(line number, level, text) of every Markdown heading outside code blocks."""
    found, in_code = [], False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        m = None if in_code else re.match(r"^(#+)\s+(.*?)\s*$", line)
        if m:
            found.append((number, len(m.group(1)), m.group(2)))
    return found


def template_problems(path, lines):
    """A lab handout's ## sections must be the template's, in order; ### in section 2 numbered 2.k."""
    rel = os.path.relpath(path, KIT_ROOT)
    heads = headings_of(lines)
    problems = []
    sections = [text for _, level, text in heads if level == 2]
    if sections != TEMPLATE:
        missing = [t for t in TEMPLATE if t not in sections]
        extra = [t for t in sections if t not in TEMPLATE]
        detail = []
        if missing:
            detail.append("missing: " + "; ".join(missing))
        if extra:
            detail.append("not in the template: " + "; ".join(extra))
        if not missing and not extra:
            detail.append("out of order: " + "; ".join(sections))
        problems.append("%s:1: the ## sections are not the handout template's (%s)" % (rel, ", ".join(detail)))
    current, expected_sub = None, 1
    for number, level, text in heads:
        if level == 2:
            current = text.split(".", 1)[0]
            expected_sub = 1
        elif level == 3 and current == "2":
            m = re.match(r"2\.(\d+) \S", text)
            if not m or int(m.group(1)) != expected_sub:
                problems.append("%s:%d: subsection of Background should be numbered 2.%d: %s"
                                % (rel, number, expected_sub, text))
            expected_sub += 1
    return problems


# A lab handout's teaching text: its lines outside generated blocks and outside sections 4 and 5 (what
# the grader does and says). About 350 at most: past that a handout reads as a reference, not a lesson.
TEACHING_LINES_MAX = 350
GRADING_SECTIONS = ("4", "5")


def generated_flags(lines):
    """For each line, whether it belongs to a generated block (tools/quoted_figures.py), its markers included."""
    flags, inside = [], False
    for line in lines:
        inside = inside or line.startswith("<!-- begin generated:")
        flags.append(inside)
        inside = inside and not line.startswith("<!-- end generated:")
    return flags


def teaching_lines(lines):
    """How many of a lab handout's lines teach: outside generated blocks and outside sections 4 and 5."""
    count, section = 0, ""
    for line, generated in zip(lines, generated_flags(lines)):
        m = re.match(r"## (\d+)\.", line)
        if m:
            section = m.group(1)
        if not generated and section not in GRADING_SECTIONS:
            count += 1
    return count


def length_problems(path, lines):
    n = teaching_lines(lines)
    if n > TEACHING_LINES_MAX:
        return ["%s:1: %d lines of teaching text (outside sections 4 and 5 and generated blocks); at most %d"
                % (os.path.relpath(path, KIT_ROOT), n, TEACHING_LINES_MAX)]
    return []


def plain_title(text):
    return re.sub(r"\s+", " ", re.sub(r"[`*_]", "", text)).strip().lower()


def numbered_sections(path):
    """{number: title in lower case} of every numbered heading of a handout: "2.4" -> "errors are per thread"."""
    with open(path) as f:
        lines = f.read().splitlines()
    sections = {}
    for _, level, text in headings_of(lines):
        m = re.match(r"(\d+(?:\.\d+)*)\.?\s+(.*)$", text)
        if m and level >= 2:
            sections[m.group(1)] = plain_title(m.group(2))
    return sections


def hint_problems(hint_text, where, kit=None):
    """Problems with one grader hint: its handout must exist and hold each named section, by number and title."""
    kit = kit or KIT_ROOT
    if not hint_text:
        return ["%s: no hint" % where]
    m = HINT_TEXT.match(hint_text)
    if not m:
        return ["%s: hint does not read 'read handouts/NN-name.md, section N (title)': %s" % (where, hint_text)]
    handout = os.path.join(kit, m.group(1))
    if not os.path.exists(handout):
        return ["%s: hint names a missing handout: %s" % (where, m.group(1))]
    named = HINT_SECTION.findall(m.group(2))
    rest = HINT_SECTION.sub("", m.group(2)).replace("and", "").replace(",", "").strip()
    if not named or rest:
        return ["%s: hint's sections do not read 'N (title)' joined by 'and': %s" % (where, m.group(2))]
    sections = numbered_sections(handout)
    problems = []
    for number, title in named:
        if number not in sections:
            problems.append("%s: hint names section %s, which %s does not have" % (where, number, m.group(1)))
        elif sections[number] != plain_title(title):
            problems.append("%s: hint names section %s (%s), but in %s it is %s (%s)"
                            % (where, number, title, m.group(1), number, sections[number]))
    return problems


def lab_hints(lab):
    """(where, hint) for every check's hint of one grader Lab, "compiles" and "runs cleanly" included."""
    return [("lab %s check '%s'" % (lab.number, c.name), c.hint) for c in lab.checks]


def grader_hint_problems(labs=None, kit=None):
    """Every hint of every lab in grader/rubrics/ names a section its handout has; a lab's handout is its own."""
    if labs is None:
        sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))
        from gradelib import registry
        labs = list(registry.all_labs().values())
    problems = []
    for lab in labs:
        for where, text in lab_hints(lab):
            found = hint_problems(text, where, kit)
            if not found and not text.startswith("read %s," % lab.handout):
                found = ["%s: hint names another lab's handout: %s" % (where, text)]
            problems += found
    return problems


def anchors_of(path):
    with open(path) as f:
        return {registry.heading_anchor(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", f.read(), re.M)}


def makefile_targets():
    with open(os.path.join(KIT_ROOT, "Makefile")) as f:
        text = f.read()
    phony = re.search(r"^\.PHONY:(.*)$", text, re.M)
    return set(phony.group(1).split()) if phony else set()


def lab_dirs():
    return sorted(os.path.basename(d) for d in glob.glob(os.path.join(KIT_ROOT, "labs", "[0-9][0-9]-*")))


def lab_for(spec):
    spec = "%02d" % int(spec) if spec.isdigit() else spec
    for name in lab_dirs():
        if name == spec or name.startswith(spec + "-"):
            return name
    return None


_described = {}


def harness_options(lab):
    """The options a lab's harness takes: its own description (--describe) of the reference built in
    build/describe/ (make keeps it up to date there), and the kit's process options."""
    if lab not in _described:
        spec = registry.resolve(lab)
        with build.kit_build_lock():  # two checks side by side (make test) share the folder
            program, made = harness.build_program(spec, paths.solution_dir(spec.name),
                                                  os.path.join(paths.BUILD_ROOT, "describe", spec.name))
        if program is None:
            sys.exit("check_handouts: cannot build %s to read its options:\n%s" % (spec.name, made.output[-2000:]))
        _described[lab] = set(harness.describe(program)) | set(harness.PROCESS_OPTIONS) | {"--help"}
    return _described[lab]


def grader_options():
    """Options of grade.py and of its batch and merge commands."""
    options = set()
    for source in ("grade.py", os.path.join("gradelib", "batch.py")):
        with open(os.path.join(KIT_ROOT, "grader", source)) as f:
            options |= set(re.findall(r'add_argument\(\s*"(--[\w-]+)"', f.read()))
    return options


def check(path, targets, grade_opts):
    problems = []
    here = os.path.dirname(path)
    with open(path) as f:
        lines = f.read().splitlines()
    if LAB_HANDOUT.match(os.path.basename(path)) and os.path.basename(here) == "handouts":
        problems += template_problems(path, lines) + length_problems(path, lines)
    problems += legacy_claim_problems(path, lines)
    in_code = False
    section = ""
    recent = []  # the lines before a code block, for its legacy context
    for number, (line, generated) in enumerate(zip(lines, generated_flags(lines)), 1):
        where = "%s:%d" % (os.path.relpath(path, KIT_ROOT), number)
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not in_code and re.match(r"#+\s", line):
            section = line
        for target in re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append("%s: link to a missing file: %s" % (where, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors_of(dest):
                problems.append("%s: link to a missing heading: %s" % (where, target))
        # Commands: a code line, or an inline code span, that starts with make (after an optional "$ ").
        spans = [line] if in_code else re.findall(r"`([^`]*)`", line)
        commands = [m.group(1) for m in (re.match(r"\s*(?:\$\s+)?(make\b.*)", sp) for sp in spans) if m]
        for target, rest in [t for c in commands for t in re.findall(
                r"^make ([a-z][\w-]*)((?:\s+[A-Z_]+=(?:\"[^\"]*\"|'[^']*'|\S+))*)", c)]:
            if target not in targets:
                problems.append("%s: `make %s` is not a target of the kit's Makefile" % (where, target))
                continue
            lab_spec = re.search(r"\bLAB=([\w-]+)", rest)
            lab = lab_for(lab_spec.group(1)) if lab_spec else None
            if lab_spec and lab is None and lab_spec.group(1) != "NN":  # NN: "any lab"
                problems.append("%s: LAB=%s names no lab" % (where, lab_spec.group(1)))
            args = re.search(r"ARGS=(?:\"([^\"]*)\"|'([^']*)')", rest)
            if lab and args:
                known = harness_options(lab)
                for opt in re.findall(r"(--[\w-]+)", args.group(1) or args.group(2) or ""):
                    if opt not in known:
                        problems.append("%s: the %s harness has no option %s" % (where, lab, opt))
        if "grade.py" in line:
            for opt in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", line.split("grade.py", 1)[1]):
                if opt not in grade_opts:
                    problems.append("%s: grade.py has no option %s" % (where, opt))
        if "cudaDeviceSynchronize" in line and not generated:  # generated: the grader's words, not a rule
            context = " ".join([section] + recent[-6:] + [line])
            device_side = not re.search(r"\bhost\b", line, re.I)
            if device_side and not LEGACY_WORDS.search(context):
                problems.append("%s: cudaDeviceSynchronize named without saying it is legacy in device code" % where)
        recent.append(line)
    return problems


def check_html(directory):
    """Every local href/src of the rendered pages names a file that exists, and an id within it."""
    problems = []
    pages = sorted(glob.glob(os.path.join(directory, "*.html")))
    ids = {}
    for page in pages:
        with open(page) as f:
            ids[os.path.basename(page)] = set(re.findall(r'\bid="([^"]+)"', f.read()))
    for page in pages:
        with open(page) as f:
            text = f.read()
        if 'id="TOC"' not in text:
            problems.append("%s: no table of contents" % page)
        toc = text[text.find('id="TOC"'):text.find("</nav>", text.find('id="TOC"'))]
        for section in re.findall(r'<h3 id="([^"]+)"', text):  # the hints name sections such as 2.4
            if 'href="#%s"' % section not in toc:
                problems.append("%s: section %s is not in the table of contents" % (page, section))
        if "overflow-wrap" not in text:
            problems.append("%s: no style that wraps long table cells (the page would scroll sideways)" % page)
        for target in re.findall(r'(?:href|src)="([^"]+)"', text):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            name = os.path.basename(page) if not file_part else file_part
            if not os.path.exists(os.path.join(directory, name)):
                problems.append("%s: link to a missing file: %s" % (page, target))
            elif anchor and name.endswith(".html") and anchor not in ids.get(name, set()):
                problems.append("%s: link to a missing anchor: %s" % (page, target))
    return pages, problems


def main(paths):
    if paths[:1] == ["--html"]:
        pages, problems = check_html(paths[1] if len(paths) > 1 else os.path.join(KIT_ROOT, "build", "handouts"))
        for p in problems:
            print(p)
        print("%d pages checked, %d problems" % (len(pages), len(problems)))
        return 1 if problems or not pages else 0
    if paths[:1] == ["--write"]:
        for page in quoted_figures.pages():
            if quoted_figures.write_generated(page):
                print("rewrote the generated tables of %s" % os.path.relpath(page, KIT_ROOT))
        return 0
    kit_handouts = sorted(glob.glob(os.path.join(KIT_ROOT, "handouts", "*.md")))
    figure_pages = paths or quoted_figures.pages()
    paths = paths or kit_handouts
    targets, grade_opts = makefile_targets(), grader_options()
    problems = [p for path in paths for p in check(os.path.abspath(path), targets, grade_opts)]
    if paths == kit_handouts:  # the kit's own pages: the text of its other pages too
        for page in legacy_claim_pages():
            if page not in kit_handouts:
                with open(page) as f:
                    problems += legacy_claim_problems(page, f.read().splitlines())
    if set(kit_handouts) & {os.path.abspath(p) for p in paths}:
        problems += grader_hint_problems()
    cache = {}
    problems += [p for page in figure_pages for p in quoted_figures.check_page(os.path.abspath(page), cache=cache)]
    for p in problems:
        print(p)
    print("%d handouts checked, %d problems" % (len(paths), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
