#!/usr/bin/env python3
"""Write the skeleton of a new lab, which builds and passes the kit's CPU tests as it is.

  python3 tools/new_lab.py NN NAME        (make new-lab NN=09 NAME=example-lab)

NN is the lab's number (two digits, 01 to 99, not yet a lab's); NAME its folder name after the number
(lower-case words joined by hyphens: example-lab). The lab's parts (CONTRIBUTING.md, "Add a lab") are
made from the templates in tools/lab-template/: every file under kit/ goes to the same place in the kit,
its path and text with these placeholders filled in:

  @NN@     the number (09)              @LAB@    the lab's folder name (09-example-lab)
  @NAME@   the name (example-lab)       @WORDS@  the name in words (example lab)
  @TITLE@  the words capitalized (Example lab)
  @IDENT@  a C identifier from the name (example_lab): the student's file, header and program
  @GUARD@  the header's include guard (EXAMPLE_LAB_H)

readme-row.md and overview-row.md become the lab's rows of the tables in README.md and
handouts/00-overview.md, in the order of the lab numbers. Then `grader/kit.py starters` writes the
starter from the solution's KIT_STARTER markers, and `tools/check_handouts.py --write` fills the
generated blocks of the lab's README and handout (imports-NN, rubric-NN, mistakes-NN) from the new
rubric, and those of other pages that list every lab (RESULTS.md's mutation runs).

The exercise is a placeholder, small but real: each block's thread 0 launches one child grid of the
kit's fill_part, which writes the block's part of an array, and checks the launch. CONTRIBUTING.md
says what to replace.

Exit status 0 when written; 2 for a bad or missing NN or NAME, a lab number or a file that exists
already (nothing is written then); 1 when a step failed after writing began (what was written is
taken back).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import build  # noqa: E402

TEMPLATE_DIR = os.path.join(KIT_ROOT, "tools", "lab-template")
TREE = os.path.join(TEMPLATE_DIR, "kit")
USAGE = "make new-lab NN=09 NAME=example-lab"
USAGE_ERROR = 2

NUMBER_FORM = re.compile(r"\d\d$")
NAME_FORM = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
NAME_MAX = 40
PLACEHOLDER = re.compile(r"@[A-Z]+@")
# The tables a lab has a row in: (page, a row's pattern with the lab's number in group 1, the row's template).
TABLES = [
    ("README.md", re.compile(r"^\| (\d\d) [^\n]*\| `handouts/\d\d-[\w-]+\.md` \|$", re.M), "readme-row.md"),
    (os.path.join("handouts", "00-overview.md"),
     re.compile(r"^\| (\d\d) [^\n]*\| \[\d\d-[\w-]+\.md\]\(\d\d-[\w-]+\.md\) \|$", re.M), "overview-row.md"),
]


class Refused(Exception):
    """Why the lab cannot be made as asked; nothing has been written."""


def read(relative):
    with open(os.path.join(KIT_ROOT, relative)) as f:
        return f.read()


def placeholder_values(number, name):
    ident = name.replace("-", "_")
    words = name.replace("-", " ")
    return {"@NN@": number, "@NAME@": name, "@LAB@": "%s-%s" % (number, name), "@WORDS@": words,
            "@TITLE@": words[0].upper() + words[1:], "@IDENT@": ident, "@GUARD@": ident.upper() + "_H"}


def fill(text, values, where):
    for key, value in values.items():
        text = text.replace(key, value)
    left = PLACEHOLDER.search(text)
    if left:
        raise ValueError("%s: unknown placeholder %s in the template" % (where, left.group(0)))
    return text


def planned_files(values):
    """[(template file, kit-relative path it becomes)], every file of the template tree."""
    return [(template, fill(relative, values, template)) for relative, template in build._files_below(TREE)]


def lab_places(number):
    """What the kit already has of a lab with this number (kit-relative paths)."""
    found = []
    for folder in ("labs", "solutions", os.path.join("common", "harness"), "handouts"):
        top = os.path.join(KIT_ROOT, folder)
        found += [os.path.join(folder, n) for n in sorted(os.listdir(top)) if n.startswith(number + "-")]
    for path in (os.path.join("grader", "rubrics", "lab%s.py" % number),
                 os.path.join("grader", "tests", "test_lab%s.py" % number)):
        if os.path.exists(os.path.join(KIT_ROOT, path)):
            found.append(path)
    for page, pattern, _ in TABLES:
        rows = [m.group(1) for m in pattern.finditer(read(page))]
        if not rows:
            raise Refused("%s: no labs table found to add the lab's row to" % page)
        if number in rows:
            found.append("%s (its row)" % page)
    return found


def check_request(number, name):
    """The placeholder values for NN and NAME; raises Refused where they cannot make a new lab."""
    if not number or not name:
        raise Refused("give the lab's number and name: %s" % USAGE)
    if not NUMBER_FORM.match(number) or number == "00":
        raise Refused("NN=%s: the lab's number is two digits, 01 to 99 (00 is the overview): %s" % (number, USAGE))
    if not NAME_FORM.match(name) or len(name) > NAME_MAX:
        raise Refused("NAME=%s: the lab's name is lower-case words of letters and digits joined by hyphens, at most "
                      "%d characters, starting with a letter: %s" % (name, NAME_MAX, USAGE))
    values = placeholder_values(number, name)
    ident = values["@IDENT@"]
    if ident == "harness" or os.path.exists(os.path.join(KIT_ROOT, "common", "include", ident + ".h")):
        raise Refused("NAME=%s: %s.cu and %s.h would stand for one of the kit's own files; choose another name"
                      % (name, ident, ident))
    taken = lab_places(number)
    if taken:
        raise Refused("lab %s exists already: %s" % (number, ", ".join(taken)))
    present = [target for _, target in planned_files(values) if os.path.lexists(os.path.join(KIT_ROOT, target))]
    if present:
        raise Refused("the kit has these files already: %s" % ", ".join(present))
    return values


def with_row(text, pattern, row, number):
    """text with row inserted among the table's rows, in the order of their numbers."""
    rows = list(pattern.finditer(text))  # check_request saw some
    before = [m for m in rows if m.group(1) < number]
    at = before[-1].end() + 1 if before else rows[0].start()
    return text[:at] + row + text[at:]


class Changes:
    """What this run wrote, so that a step that fails takes all of it back."""

    def __init__(self):
        self.new_folders, self.new_files, self.originals = [], [], {}

    def write(self, relative, text):
        path = os.path.join(KIT_ROOT, relative)
        folder = os.path.dirname(path)
        top = folder
        while not os.path.exists(os.path.dirname(top)):
            top = os.path.dirname(top)
        if not os.path.exists(top) and top not in self.new_folders:
            self.new_folders.append(top)  # with what is written below it
        os.makedirs(folder, exist_ok=True)
        if os.path.exists(path):
            with open(path) as f:
                self.originals.setdefault(path, f.read())
        elif not self.is_new(path):
            self.new_files.append(path)
        with open(path, "w") as f:
            f.write(text)

    def is_new(self, path):
        return path in self.new_files or any(path.startswith(d + os.sep) for d in self.new_folders)

    def keep_original(self, relative, text):
        """Take back a file a later step rewrites (text: as it was before that step)."""
        path = os.path.join(KIT_ROOT, relative)
        if not self.is_new(path):
            self.originals.setdefault(path, text)

    def undo(self):
        for path in self.new_files:
            if os.path.exists(path):
                os.remove(path)
        for folder in self.new_folders:
            shutil.rmtree(folder, ignore_errors=True)
        for path, text in self.originals.items():
            with open(path, "w") as f:
                f.write(text)


def run_kit_command(argv, what):
    """Run a kit command (python3 ARGV...) in the kit's top folder; raise RuntimeError with its output
    when it fails."""
    made = subprocess.run([sys.executable] + argv, cwd=KIT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if made.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (what, made.stdout))


def generated_pages():
    """The pages whose generated blocks `check_handouts.py --write` rewrites (tools/quoted_figures.py)."""
    sys.path.insert(0, os.path.join(KIT_ROOT, "tools"))
    import quoted_figures  # imported once the lab's rubric is written: it reads every lab's
    return [os.path.relpath(page, KIT_ROOT) for page in quoted_figures.pages()]


def check_generated_blocks(pages):
    """Every generated block of the lab's pages is filled (a block its sources cannot render stays empty)."""
    for page in pages:
        empty = re.search(r"<!-- begin generated: ([\w-]+) -->\n<!-- end generated", read(page))
        if empty:
            raise RuntimeError("%s: the generated block %s could not be filled" % (page, empty.group(1)))


def make_lab(values):
    """Write the lab's files and rows, its starter and generated blocks; return what was written."""
    changes = Changes()
    lab = values["@LAB@"]
    try:
        written = []
        for template, target in planned_files(values):
            with open(template) as f:
                changes.write(target, fill(f.read(), values, template))
            written.append(target)
        for page, pattern, row_template in TABLES:
            with open(os.path.join(TEMPLATE_DIR, row_template)) as f:
                row = fill(f.read(), values, row_template)
            changes.write(page, with_row(read(page), pattern, row, values["@NN@"]))
            written.append(page + " (the lab's row)")
        run_kit_command([os.path.join("grader", "kit.py"), "starters"], "grader/kit.py starters")
        written.append(os.path.join("labs", lab, values["@IDENT@"] + ".cu") + " (the starter, by grader/kit.py starters)")
        # The lab's blocks (imports-NN, rubric-NN, mistakes-NN), and those of other pages that list every lab.
        originals = {page: read(page) for page in generated_pages()}
        run_kit_command([os.path.join("tools", "check_handouts.py"), "--write"], "tools/check_handouts.py --write")
        for page, text in originals.items():
            changes.keep_original(page, text)
        written += ["%s (its generated blocks)" % p for p in sorted(originals) if read(p) != originals[p]]
        check_generated_blocks([os.path.join("labs", lab, "README.md"), os.path.join("handouts", lab + ".md")])
    except BaseException:
        changes.undo()
        raise
    return written


NEXT_STEPS = """
Lab {lab} is a placeholder exercise that passes the kit's CPU tests. Next (CONTRIBUTING.md, "Add a lab"):
git add its files (make dist stops at files in labs/ that git does not track), then replace the exercise in solutions/{lab}/ (then make starters), common/harness/{lab}/, the rubric
grader/rubrics/lab{nn}.py and its tests grader/tests/test_lab{nn}.py; the handout handouts/{lab}.md, the
README labs/{lab}/README.md and the answers; the known-wrong and hostile submissions; the rows in README.md
and handouts/00-overview.md. Then make test, and on a GPU tools/gpu-suite.sh tests."""


def main(argv):
    parser = argparse.ArgumentParser(prog="new_lab.py", usage="%(prog)s NN NAME   (" + USAGE + ")",
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("number", metavar="NN", help="the lab's number, two digits (09)")
    parser.add_argument("name", metavar="NAME", help="the lab's name, lower-case words joined by hyphens (example-lab)")
    args = parser.parse_args(argv)
    try:
        values = check_request(args.number.strip(), args.name.strip())
    except Refused as why:
        print("new-lab: %s; nothing written" % why)
        return USAGE_ERROR
    try:
        written = make_lab(values)
    except Exception as err:  # the kit is as it was: say what failed
        print("new-lab: %s\nnothing written (what was written is taken back)" % err)
        return 1
    print("new-lab: wrote lab %s:\n  %s" % (values["@LAB@"], "\n  ".join(written)))
    print(NEXT_STEPS.format(lab=values["@LAB@"], nn=values["@NN@"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
