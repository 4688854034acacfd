"""compute-sanitizer's memcheck over a lab's harness: where the tool is, the one command the kit runs it
with (the grader's memcheck check and `make sanitize`), and what its report says.

memcheck supports dynamic parallelism: it sees every grid, child grids too, and with
--check-device-heap yes the allocations made by malloc in a kernel. racecheck, synccheck and initcheck
do not support it (they report hazards that are not there), so the kit runs none of them.
"""
import os
import re
import shutil

from . import exits

TOOL = "compute-sanitizer"
ERRORS_EXIT = exits.MEMCHECK_ERRORS  # compute-sanitizer's status when memcheck found an error
PRINT_LIMIT = 10  # errors memcheck prints in full; the summary still counts them all
OPTIONS = ["--tool", "memcheck", "--check-device-heap", "yes", "--print-limit", str(PRINT_LIMIT),
           "--error-exitcode", str(ERRORS_EXIT)]

_PREFIX = "========= "
_SUMMARY = re.compile(r"^========= ERROR SUMMARY: (\d+) errors?\s*$", re.M)
# Lines of an error that say nothing of the student's code: where the host was when the kernel was launched.
_HOST_LINES = re.compile(r"Host Frame|Saved host backtrace|Device Frame:.*\b(?:kit_|__cudaCDP2)")
_SHOWN_LINES = 6  # of each error: what, where (file:line), which thread, the address
# memcheck's lines that are no error of their own: its banner, its summaries, the target's exit status
_NOT_ERRORS = ("ERROR SUMMARY", "COMPUTE-SANITIZER", "LEAK SUMMARY", "Target application returned an error")


def find():
    """compute-sanitizer's path: on PATH, else beside nvcc (the toolkit's bin/), else None."""
    found = shutil.which(TOOL)
    nvcc = shutil.which("nvcc")
    if found is None and nvcc is not None:
        beside = os.path.join(os.path.dirname(os.path.realpath(nvcc)), TOOL)
        found = beside if os.access(beside, os.X_OK) else None
    return found


def command(sanitizer):
    """The argv prefix that runs a program under memcheck, as the kit does."""
    return [sanitizer] + OPTIONS


def tool_folder(sanitizer):
    """The folder that holds the tool and its libraries (a sandboxed run must see it)."""
    return os.path.dirname(os.path.realpath(sanitizer))


class Report:
    """What memcheck said: errors (the count of its last ERROR SUMMARY line, or None when there was
    none: memcheck did not finish) and the first errors, each a few lines, sources named by file:line."""

    def __init__(self, errors, first):
        self.errors = errors
        self.first = first


def read(output, strip_prefix=""):
    """The Report in a run's output (the harness's lines among memcheck's). strip_prefix: a folder
    removed from the paths shown (the build's scratch folder)."""
    found = _SUMMARY.findall(output)
    errors = int(found[-1]) if found else None
    blocks, current = [], None
    for line in output.splitlines():
        if not line.startswith(_PREFIX.rstrip()):
            continue
        text = line[len(_PREFIX):] if line.startswith(_PREFIX) else ""
        if not text.strip() or text.startswith(_NOT_ERRORS):
            current = None
            continue
        if not text.startswith(" "):  # an error's first line; its details are indented
            current = [text.strip()]
            blocks.append(current)
        elif current is not None and not _HOST_LINES.search(text) and len(current) < _SHOWN_LINES:
            current.append(text.strip())
    if strip_prefix:
        blocks = [[l.replace(strip_prefix.rstrip(os.sep) + os.sep, "") for l in b] for b in blocks]
    return Report(errors, ["\n".join(b) for b in blocks])
