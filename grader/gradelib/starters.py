"""Starter files are generated from the solutions (one source for both).

In a solution file, the part a student writes is marked like this:

    #ifdef KIT_STARTER
        ... what the student receives (a TODO comment, perhaps code to change) ...
    #else
        ... the reference solution ...
    #endif /* KIT_STARTER */

and a part only the solution has (removed from the starter, nothing in its place):

    #ifndef KIT_STARTER
        ...
    #endif /* KIT_STARTER */

The starter keeps the first branch and drops the markers; the solution file still compiles as is
(and with -DKIT_STARTER, as the starter). Markers do not nest.
"""
import os
import re

from . import build, paths

BEGIN_STARTER = "#ifdef KIT_STARTER"
BEGIN_SOLUTION_ONLY = "#ifndef KIT_STARTER"
ELSE = "#else"
END = "#endif /* KIT_STARTER */"


class MarkerError(ValueError):
    pass


def starter_text(solution_text, filename="<solution>"):
    out = []
    state = None  # None outside a block; "starter" or "solution" for the branch being read
    opened_at = 0
    inner = 0  # depth of other #if blocks inside the current branch
    for number, line in enumerate(solution_text.splitlines(keepends=True), 1):
        directive = line.strip()
        if state is None:
            if directive in (BEGIN_STARTER, BEGIN_SOLUTION_ONLY):
                state = "starter" if directive == BEGIN_STARTER else "solution"
                opened_at, inner = number, 0
            elif directive == END:
                raise MarkerError("%s:%d: '%s' without an opening marker" % (filename, number, END))
            else:
                out.append(line)
            continue
        if directive in (BEGIN_STARTER, BEGIN_SOLUTION_ONLY):
            raise MarkerError("%s:%d: markers do not nest (block opened at line %d)" % (filename, number, opened_at))
        if inner == 0 and directive == ELSE:
            if state != "starter":
                raise MarkerError("%s:%d: a second #else in the block opened at line %d" % (filename, number, opened_at))
            state = "solution"
            continue
        if inner == 0 and directive == END:
            state = None
            continue
        if directive.startswith("#if"):
            inner += 1
        elif directive.startswith("#endif"):
            inner -= 1
        if state == "starter":
            out.append(line)
    if state is not None:
        raise MarkerError("%s: the block opened at line %d is not closed with '%s'" % (filename, opened_at, END))
    return "".join(out)


def pairs():
    """(solution file, starter file) for every student file of every lab with a solution."""
    result = []
    for lab_name in sorted(os.listdir(paths.SOLUTIONS_DIR)):
        solution_dir = paths.solution_dir(lab_name)
        if not re.match(r"\d\d-", lab_name) or not os.path.isdir(solution_dir):
            continue  # README.md and hostile/ are not labs
        for name in build.lab_vars(lab_name)["student_files"]:
            result.append((os.path.join(solution_dir, name), os.path.join(paths.LABS_DIR, lab_name, name)))
    return result


def starter_of(solution):
    """The starter text the kit makes from a solution file."""
    with open(solution) as f:
        return starter_text(f.read(), paths.relative(solution))


def pristine(lab_name):
    """A folder with the lab's starter files as the kit makes them from its solution
    (build/starters/LAB/), so that the kit's own tests never read a student's work in progress in
    labs/; labs/LAB itself where the kit has no solution (the student kit)."""
    solution_dir = paths.solution_dir(lab_name)
    if not os.path.isdir(solution_dir):
        return os.path.join(paths.LABS_DIR, lab_name)
    folder = os.path.join(paths.BUILD_ROOT, "starters", lab_name)
    os.makedirs(folder, exist_ok=True)
    for name in build.lab_vars(lab_name)["student_files"]:
        wanted = starter_of(os.path.join(solution_dir, name))
        target = os.path.join(folder, name)
        if os.path.exists(target):
            with open(target) as f:
                if f.read() == wanted:
                    continue  # unchanged: its time stays, and builds from it stay cached
        temporary = "%s.%d.tmp" % (target, os.getpid())  # tests side by side write it at once
        with open(temporary, "w") as f:
            f.write(wanted)
        os.replace(temporary, target)
    return folder


def generate(check_only=False):
    """Write (or with check_only, compare) every starter. Returns the starters that differ: with
    check_only, their paths; else (path, where the file it replaced was kept, or None where there was
    none): an edited starter is a student's work, never lost."""
    differing = []
    for solution, starter in pairs():
        wanted = starter_of(solution)
        current = None
        if os.path.exists(starter):
            with open(starter) as f:
                current = f.read()
        if current == wanted:
            continue
        if check_only:
            differing.append(starter)
            continue
        kept = None
        if current is not None:
            kept = _free_name(starter + ".before-starters")
            with open(kept, "w") as f:
                f.write(current)
        with open(starter, "w") as f:
            f.write(wanted)
        differing.append((starter, kept))
    return differing


def _free_name(path):
    """path, or path.2, path.3, ...: the first that does not exist."""
    n, found = 1, path
    while os.path.exists(found):
        n += 1
        found = "%s.%d" % (path, n)
    return found
