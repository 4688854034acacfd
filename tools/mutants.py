#!/usr/bin/env python3
"""Mutation testing of the grader: does it reject small, plausible mistakes in a lab's solution?

  python3 tools/mutants.py LAB [--list] [--jobs J] [--seed S] [--baseline-seeds N] [--timeout SEC]
                           [--out DIR] [--only ID ...]

Applies CUDA-specific mutation operators (OPERATORS below) to the lab's reference solution, builds
every mutant in parallel, grades each with the real grader (runtime checks one mutant at a time, as
batch grading does), and classifies it:
  killed      some check took points (the report names which)
  survived    full marks: the grader missed the mistake
  equivalent  full marks, and listed in solutions/NN-name/equivalent-mutants.txt with the reason no
              correct grader could reject it (it behaves the same for every input the contract allows)
  stillborn   it does not compile
The unmutated solution and the lab's alternative solutions are graded with --baseline-seeds seeds
among the mutants, so that each grading runs on a host kept busy by the others (each records how many
others were running when it started): each must score full marks, or the run says so and fails.

Mutants are graded in passes, each only for those that survived the one before: the build and
static checks; the runtime checks without the lab's timing cases and timing checks; then, in labs
with timing checks, everything. --jobs mutants are graded at once; their runs share the GPU or hold
it alone as in any grading (gradelib.gpushare: timing cases alone).

--list prints the mutants without grading them (no GPU needed). Without a GPU the build and static
checks still run: a mutant they do not kill is reported "not run", never "survived".
Writes DIR/mutants.json, DIR/mutants.md and DIR/recorded.json (what grader/tests/data/mutants/ keeps
of a run; default DIR: build/mutants/NN-name) and prints a table
per operator. Exit status 0 when the baselines score full marks, no mutant survives, and every
entry of the equivalent list names a mutant that exists and survives; 1 otherwise; 2 bad usage.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import build, exits, paths, report, standard_checks  # noqa: E402
from gradelib import checks as chk  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
from gradelib import registry  # noqa: E402
from gradelib.grading import grade_lab  # noqa: E402
from gradelib.registry import times_something  # noqa: E402

MUTANT_TIMEOUT = 30

KILLED, SURVIVED, EQUIVALENT, STILLBORN, NOT_RUN = "killed", "survived", "equivalent", "stillborn", "not run"

# ---- the solution as the compiler sees it ------------------------------------------------------

_STARTER_BRANCH = re.compile(r"^[ \t]*#ifdef[ \t]+KIT_STARTER\b.*?^[ \t]*#else\b[^\n]*$|"
                             r"^[ \t]*#endif[ \t]*/\*[ \t]*KIT_STARTER[ \t]*\*/[^\n]*$", re.S | re.M)


def without_starter(text):
    """The solution without its starter branches and markers, each replaced by as many empty lines,
    so that line numbers stay those of the file in solutions/."""
    return _STARTER_BRANCH.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def code_mask(text):
    """mask[i] is True where text[i] is code: not a comment, a string or character literal, or a
    preprocessor line."""
    mask = [True] * len(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and text[i:].lstrip(" \t").startswith("#"):
            end = text.find("\n", i)
            end = n if end < 0 else end
            while end > 0 and text[end - 1] == "\\" and end < n:  # continued directive
                nxt = text.find("\n", end + 1)
                end = n if nxt < 0 else nxt
            mask[i:end] = [False] * (end - i)
            i = end
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif c in "\"'":
            end = i + 1
            while end < n and text[end] != c:
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
        else:
            line_start = c == "\n" or (line_start and c in " \t")
            i += 1
            continue
        mask[i:end] = [False] * (end - i)
        line_start = False
        i = end
    return mask


class Edit:
    """One mutation: replace text[start:end] with replacement; prelude goes after the includes."""

    def __init__(self, start, end, replacement, prelude=""):
        self.start, self.end, self.replacement, self.prelude = start, end, replacement, prelude


def _matches(pattern, text, mask, flags=0):
    return [m for m in re.finditer(pattern, text, flags) if mask[m.start()]]


def _statement_span(text, start):
    """[start, end) of the statement starting at start, through its ';' and the rest of its line's blanks."""
    end = text.index(";", start) + 1
    while end < len(text) and text[end] in " \t":
        end += 1
    if end < len(text) and text[end] == "\n":
        end += 1
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return start, end


def _close_paren(text, open_index):
    """Index just past the parenthesis matching text[open_index] == '('."""
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced parentheses")


def _split_args(text):
    """Top-level comma-separated parts of text."""
    parts, depth, last = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    return parts


def _device_function_spans(text, mask):
    """[(start, end, name, is_kernel)] of the bodies of __global__ and __device__ functions."""
    spans = []
    for m in _matches(r"__(global|device)__\s+[\w\s\*]*?\b(\w+)\s*\(", text, mask):
        close = _close_paren(text, m.end() - 1)
        rest = text[close:close + 200].lstrip()
        if not rest.startswith("{"):
            continue  # a declaration
        body_start = text.index("{", close)
        depth = 0
        for i in range(body_start, len(text)):
            if text[i] == "{" and mask[i]:
                depth += 1
            elif text[i] == "}" and mask[i]:
                depth -= 1
                if depth == 0:
                    spans.append((body_start, i + 1, m.group(2), m.group(1) == "global"))
                    break
    return spans


def _in_device_code(spans, pos):
    return any(s <= pos < e for s, e, _, _ in spans)


_LAUNCH = r"\b(\w+)\s*<<<(.*?)>>>"


def _launches(text, mask):
    return _matches(_LAUNCH, text, mask, re.S)


# ---- the operators: each returns [(Edit, what)] for one text ------------------------------------

def op_no_syncthreads(text, mask, lab):
    return [(Edit(*_statement_span(text, m.start()), replacement=""), "remove __syncthreads()")
            for m in _matches(r"__syncthreads\s*\(\s*\)\s*;", text, mask)]


def op_return_before_barrier(text, mask, lab):
    return [(Edit(m.start(), m.start(), "if (threadIdx.x == blockDim.x - 1) return; "),
             "the block's last thread returns before __syncthreads()")
            for m in _matches(r"__syncthreads\s*\(\s*\)\s*;", text, mask)]


def _launch_stream_edits(text, mask, new_stream, what, device_only=True):
    spans = _device_function_spans(text, mask)
    edits = []
    for m in _launches(text, mask):
        if device_only and not _in_device_code(spans, m.start()):
            continue
        args = _split_args(m.group(2))
        current = args[3].strip() if len(args) >= 4 else "0"
        if current == new_stream:
            continue
        if len(args) < 3:
            args.append(" 0")
        if len(args) < 4:
            args.append(" " + new_stream)
        else:
            args[3] = " " + new_stream
        start = m.start(2)
        edits.append((Edit(start, m.end(2), ",".join(args)), "%s: %s -> %s" % (what, current, new_stream)))
    return edits


def op_stream_null(text, mask, lab):
    return _launch_stream_edits(text, mask, "0", "device launch into the NULL stream")


def op_stream_fire_and_forget(text, mask, lab):
    return _launch_stream_edits(text, mask, "cudaStreamFireAndForget", "device launch fire-and-forget")


def op_stream_shared_by_block(text, mask, lab):
    """Every device launch of a kernel goes into one stream that thread 0 of the block creates."""
    edits = []
    for start, end, name, is_kernel in _device_function_spans(text, mask):
        if not is_kernel:
            continue
        body = text[start:end]
        if not [m for m in re.finditer(_LAUNCH, body, re.S) if mask[start + m.start()]]:
            continue
        inner = _launch_stream_edits(body, mask[start:end], "kit_mutant_block_stream", "", device_only=False)
        new_body = body
        for edit, _ in sorted(inner, key=lambda e: -e[0].start):
            new_body = new_body[:edit.start] + edit.replacement + new_body[edit.end:]
        new_body = ("{ __shared__ cudaStream_t kit_mutant_block_stream; if (threadIdx.x == 0) "
                    "cudaStreamCreateWithFlags(&kit_mutant_block_stream, cudaStreamNonBlocking); __syncthreads();"
                    + new_body[1:])
        edits.append((Edit(start, end, new_body), "%s launches into one stream shared by its block" % name))
    return edits


def op_host_stream_null(text, mask, lab):
    """A host launch into a stream the code chose, sent to the default stream instead."""
    spans = _device_function_spans(text, mask)
    edits = []
    for edit, what in _launch_stream_edits(text, mask, "0", "host launch into the default stream", device_only=False):
        if not _in_device_code(spans, edit.start):
            edits.append((edit, what))
    return edits


def op_launch_check_deleted(text, mask, lab):
    return [(Edit(*_statement_span(text, m.start()), replacement=""), "KIT_CHECK_LAUNCH() deleted")
            for m in _matches(r"KIT_CHECK_LAUNCH\s*\(\s*\)\s*;", text, mask)]


def op_launch_check_before_launch(text, mask, lab):
    edits = []
    for m in _matches(r"(\b\w+\s*<<<[^;]*?>>>\s*\([^;]*\)\s*;)(\s*)(KIT_CHECK_LAUNCH\s*\(\s*\)\s*;)", text, mask, re.S):
        edits.append((Edit(m.start(), m.end(), m.group(3) + m.group(2) + m.group(1)),
                      "KIT_CHECK_LAUNCH() moved before the launch"))
    return edits


def op_launch_config(text, mask, lab):
    edits = []
    for m in _launches(text, mask):
        args = _split_args(m.group(2))
        grid, block = args[0].strip(), args[1].strip()
        rest = "".join("," + a for a in args[2:])
        variants = [("grid + 1", _arith(grid, "+ 1"), block), ("grid - 1", _arith(grid, "- 1"), block),
                    ("block + 1", grid, _arith(block, "+ 1")), ("block - 1", grid, _arith(block, "- 1")),
                    ("grid halved", _arith(grid, "/ 2"), block), ("block halved", grid, _arith(block, "/ 2")),
                    ("grid and block swapped", block, grid)]
        seen = {(grid, block)}
        for what, g, b in variants:
            if (g, b) in seen:  # e.g. 1 - 1 and 1 / 2 are both 0: one mutant is enough
                continue
            seen.add((g, b))
            edits.append((Edit(m.start(2), m.end(2), "%s, %s%s" % (g, b, rest)),
                          "%s<<<%s, %s>>>: %s" % (m.group(1), grid, block, what)))
    return edits


def _arith(operand, change):
    """operand changed by "+ 1", "- 1" or "/ 2": computed when it is a literal, else as an expression."""
    if operand.isdigit():
        return str(eval("%s %s" % (operand, change.replace("/", "//"))))
    return "(%s) %s" % (operand, change)


_RELATIONAL = r"(?<![<>=!-])(<=|>=|<|>)(?![<>=])"
_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}


def op_relational(text, mask, lab):
    launch_spans = [(m.start(), m.end()) for m in _launches(text, mask)]
    edits = []
    for m in _matches(_RELATIONAL, text, mask):
        if any(s <= m.start() < e for s, e in launch_spans):
            continue
        op = m.group(1)
        edits.append((Edit(m.start(), m.end(), _SWAP[op]), "%s -> %s" % (op, _SWAP[op])))
    return edits


def op_bound_plus_minus_one(text, mask, lab):
    """An integer literal compared with something, +1 and -1."""
    edits = []
    launch_spans = [(m.start(), m.end()) for m in _launches(text, mask)]
    for m in _matches(r"(?:(?:<=|>=|==|!=|(?<![<>])<(?![<=])|(?<![->])>(?![>=]))\s*)(\d+)(u|U)?\b(?![.xX])",
                      text, mask):
        if any(s <= m.start() < e for s, e in launch_spans):
            continue
        value = int(m.group(1))
        for delta in (1, -1):
            if value + delta < 0:
                continue
            edits.append((Edit(m.start(1), m.end(1), str(value + delta)),
                          "compared with %d instead of %d" % (value + delta, value)))
    return edits


_PLAIN_HELPERS = """
/* mutant helpers: an atomic turned into a plain read-modify-write */
template <typename T, typename V> static __device__ T kit_mutant_plain_add(T *p, V v)
{ T old = *p; *p = old + (T)v; return old; }
template <typename T, typename V, typename W> static __device__ T kit_mutant_plain_cas(T *p, V expected, W value)
{ T old = *p; if (old == (T)expected) *p = (T)value; return old; }
"""


def op_atomic_plain(text, mask, lab):
    edits = []
    for m in _matches(r"\batomic(Add|CAS)\s*\(", text, mask):
        helper = "kit_mutant_plain_add" if m.group(1) == "Add" else "kit_mutant_plain_cas"
        edits.append((Edit(m.start(), m.end(), helper + "(", _PLAIN_HELPERS),
                      "atomic%s -> a plain read-modify-write" % m.group(1)))
    return edits


def op_rank_lane_minus_leader(text, mask, lab):
    pattern = r"__popc\s*\(\s*(\w+)\s*&\s*\(\s*\(\s*1u?\s*<<\s*(\w+)\s*\)\s*-\s*1u?\s*\)\s*\)"
    return [(Edit(m.start(), m.end(), "((%s) - (__ffs(%s) - 1))" % (m.group(2), m.group(1))),
             "rank = lane - leader instead of the active lanes below it") for m in _matches(pattern, text, mask)]


def op_size_32_bit(text, mask, lab):
    edits = [(Edit(m.start(), m.end(), ""), "(size_t) cast removed: 32-bit arithmetic")
             for m in _matches(r"\(\s*size_t\s*\)\s*", text, mask)]
    edits += [(Edit(m.start(), m.end(), "unsigned int "), "size_t variable -> unsigned int")
              for m in _matches(r"\bsize_t\s+(?=\w+\s*=)", text, mask)]
    return edits


def op_set_limit(text, mask, lab):
    edits = []
    for m in _matches(r"(?:KIT_CHECK\s*\(\s*)?cudaDeviceSetLimit\s*\(", text, mask):
        start, end = _statement_span(text, m.start())
        edits.append((Edit(start, end, ""), "cudaDeviceSetLimit deleted"))
        open_index = text.index("(", text.index("cudaDeviceSetLimit", m.start()))
        close = _close_paren(text, open_index)
        args = _split_args(text[open_index + 1:close - 1])
        if len(args) == 2:
            value = args[1].strip()
            edits.append((Edit(open_index + 1, close - 1, "%s, (%s) / 2" % (args[0].strip(), value)),
                          "cudaDeviceSetLimit(%s) halved" % args[0].strip()))
    return edits


def op_overhead_dropped(text, mask, lab):
    pattern = r"\s*\+\s*(?:\(\s*\w+\s*\)\s*)?\w+\s*\*\s*\w*OVERHEAD\w*"
    return [(Edit(m.start(), m.end(), ""), "per-allocation overhead term dropped") for m in _matches(pattern, text, mask)]


def op_free_deleted(text, mask, lab):
    return [(Edit(*_statement_span(text, m.start()), replacement=""), "%s deleted" % m.group(1))
            for m in _matches(r"(?:KIT_CHECK\w*\s*\(\s*)?\b(free|cudaFree|kit_free_vertices)\s*\(", text, mask)]


def op_wait_replaced(text, mask, lab):
    edits = []
    for m in _matches(r"(?:KIT_CHECK\s*\(\s*)?cudaStreamSynchronize\s*\(", text, mask):
        start, end = _statement_span(text, m.start())
        open_index = text.index("(", text.index("cudaStreamSynchronize", m.start()))
        close = _close_paren(text, open_index)
        stream = text[open_index + 1:close - 1].strip()
        edits.append((Edit(start, end, ""), "cudaStreamSynchronize(%s) deleted" % stream))
        edits.append((Edit(start, end, "usleep(1000);\n", "#include <unistd.h>\n"),
                      "cudaStreamSynchronize(%s) replaced by a 1 ms sleep" % stream))
        if stream != "0":
            edits.append((Edit(open_index + 1, close - 1, "0"), "cudaStreamSynchronize(%s) -> stream 0" % stream))
    return edits


def op_parent_keeps_work(text, mask, lab):
    """The lab's PARENT_WORK (the work the child took over) done by the parent too, after its launch check."""
    work = getattr(lab_module(lab), "PARENT_WORK", {})
    spans = _device_function_spans(text, mask)
    edits = []
    for start, end, name, _ in spans:
        if name not in work:
            continue
        for m in re.finditer(r"KIT_CHECK_LAUNCH\s*\(\s*\)\s*;", text[start:end]):
            at = start + m.end()
            if mask[start + m.start()]:
                edits.append((Edit(at, at, " " + work[name]), "%s also does the child's work itself" % name))
                break
    return edits


OPERATORS = [
    ("no-syncthreads", op_no_syncthreads),
    ("return-before-barrier", op_return_before_barrier),
    ("stream-null", op_stream_null),
    ("stream-shared-by-block", op_stream_shared_by_block),
    ("stream-fire-and-forget", op_stream_fire_and_forget),
    ("host-stream-default", op_host_stream_null),
    ("launch-check-deleted", op_launch_check_deleted),
    ("launch-check-before-launch", op_launch_check_before_launch),
    ("launch-config", op_launch_config),
    ("relational", op_relational),
    ("bound-plus-minus-one", op_bound_plus_minus_one),
    ("atomic-plain", op_atomic_plain),
    ("rank-lane-minus-leader", op_rank_lane_minus_leader),
    ("size-32-bit", op_size_32_bit),
    ("set-limit", op_set_limit),
    ("overhead-dropped", op_overhead_dropped),
    ("free-deleted", op_free_deleted),
    ("wait-replaced", op_wait_replaced),
    ("parent-keeps-work", op_parent_keeps_work),
]


def lab_module(lab):
    return sys.modules.get("rubrics.lab%s" % lab.number)


# ---- mutants ---------------------------------------------------------------------------------

class Mutant:
    def __init__(self, mutant_id, operator, file_name, line, what, before, text):
        self.id = mutant_id
        self.operator = operator
        self.file = file_name
        self.line = line
        self.what = what
        self.before = before  # the solution's line, for people
        self.text = text      # the whole mutated file

    def describe(self):
        return "%s  %s:%d  %s  [%s]" % (self.id, self.file, self.line, self.what, self.before.strip())


def _apply(text, edit):
    mutated = text[:edit.start] + edit.replacement + text[edit.end:]
    if edit.prelude and edit.prelude not in mutated:
        includes = list(re.finditer(r"^#include[^\n]*\n", mutated, re.M))
        at = includes[-1].end() if includes else 0
        mutated = mutated[:at] + edit.prelude + mutated[at:]
    return mutated


def solution_sources(lab):
    """{file name: text} of the solution's .cu files (the files mutated)."""
    found = {}
    for name in build.lab_vars(lab.name)["student_files"]:
        if name.endswith(".cu"):
            with open(os.path.join(paths.solution_dir(lab.name), name)) as f:
                found[name] = f.read()
    return found


def generate(lab):
    """Every mutant of the lab's solution, in a stable order, with ids OPERATOR@LINE (and .K when an
    operator makes several mutants on one line)."""
    mutants, taken = [], {}
    for file_name, original in sorted(solution_sources(lab).items()):
        text = without_starter(original)
        mask = code_mask(text)
        lines = text.splitlines()
        for op_name, op in OPERATORS:
            for edit, what in op(text, mask, lab):
                line = text.count("\n", 0, edit.start) + 1
                mutated = _apply(text, edit)
                if mutated == text:
                    continue
                base = "%s@%d" % (op_name, line)
                taken[base] = taken.get(base, 0) + 1
                mutant_id = base if taken[base] == 1 else "%s.%d" % (base, taken[base])
                mutants.append(Mutant(mutant_id, op_name, file_name, line, what, lines[line - 1], mutated))
    return mutants


def read_equivalent(lab):
    """{mutant id: reason} from solutions/NN-name/equivalent-mutants.txt ("ID: reason" lines, # comments)."""
    path = paths.equivalent_mutants_path(lab.name)
    found = {}
    if not os.path.isfile(path):
        return found
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            mutant_id, sep, reason = line.partition(":")
            if not sep or not reason.strip():
                raise ValueError("%s:%d: expected 'MUTANT_ID: reason'" % (paths.relative(path), number))
            found[mutant_id.strip()] = reason.strip()
    return found


def equivalent_list_problems(lab, mutants=None):
    """Entries of the lab's equivalent list that name no mutant of the current solution."""
    ids = {m.id for m in (mutants if mutants is not None else generate(lab))}
    return ["%s: the equivalent list names %s, which is not a mutant of the solution (the solution changed?)"
            % (lab.name, mutant_id) for mutant_id in sorted(read_equivalent(lab)) if mutant_id not in ids]


# ---- grading -----------------------------------------------------------------------------------

def without_timing(lab):
    """The lab with neither its timing cases nor its timing checks: a quick first pass."""
    return lab.restricted([c for c in lab.checks if not c.timing], lambda params: not times_something(params),
                          lab.title)


def _lost(rep):
    """Names of the checks that took points, and whether runtime checks were skipped for lack of a GPU."""
    lost = [r.name for r in rep.results if r.score < r.check.points and not r.no_gpu and r.status != chk.SKIPPED]
    return lost, any(r.no_gpu for r in rep.results)


NO_GPU_PASS = gpu_mod.GpuInfo(False, "the static pass: runtime checks come next")


def grade_mutant(lab, mutant, seed, timeout, gpu, scratch):
    """{status, killed_by, seconds} for one mutant: static checks first, then the runtime checks
    without the timing ones, then, for a survivor of a lab with timing checks, everything (its runs
    share the GPU with other mutants' or hold it alone as any grading does: gradelib.gpushare)."""
    started = time.monotonic()
    folder = tempfile.mkdtemp(prefix=mutant.id.replace("@", "-") + "-", dir=scratch)
    try:
        for name in build.lab_vars(lab.name)["student_files"]:
            shutil.copyfile(os.path.join(paths.solution_dir(lab.name), name), os.path.join(folder, name))
        with open(os.path.join(folder, mutant.file), "w") as f:
            f.write(mutant.text)
        result = {"status": None, "killed_by": [], "passes": 0}
        passes = [(without_timing(lab), NO_GPU_PASS)]
        if gpu.available:
            passes.append((without_timing(lab), gpu))
            if any(c.timing for c in lab.checks):
                passes.append((lab, gpu))
        for graded_lab, gpu_used in passes:
            rep = grade_lab(graded_lab, folder, seed, timeout=timeout, gpu=gpu_used)
            result["passes"] += 1
            compiled = rep.results[0]
            if compiled.status != chk.PASSED:
                result["status"], result["killed_by"] = STILLBORN, [standard_checks.COMPILES]
                result["message"] = compiled.message[:2000]
                break
            lost, no_gpu = _lost(rep)
            if lost:
                result["status"], result["killed_by"] = KILLED, lost
                result["message"] = "\n".join("%s: %s" % (r.name, r.message[:600]) for r in rep.results
                                              if r.name in lost)
                break
            result["status"] = NOT_RUN if no_gpu else SURVIVED
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def baseline_folders(lab):
    """[(what, folder)]: the reference solution, then each alternative solution."""
    folders = [("solution", paths.solution_dir(lab.name))]
    alternative = paths.alternative_dir(lab.name)
    folders += [("alternative " + c, os.path.join(alternative, c)) for c in paths.case_folders(alternative)]
    return folders


def grade_baseline(lab, what, folder, seed, timeout, gpu):
    """{what, seed, score, max_score, lost, messages} for one grading of a correct submission."""
    rep = grade_lab(lab, folder, seed, timeout=timeout, gpu=gpu)
    lost, _ = _lost(rep)
    return {"what": what, "seed": seed, "score": rep.score, "max_score": rep.max_score, "lost": lost,
            "messages": {r.name: r.message[:1500] for r in rep.results if r.name in lost}}


def interleave(mutants, baselines):
    """One queue: the baselines spread evenly among the mutants, so that each baseline is graded
    while mutants are graded beside it (the busy host a class batch makes)."""
    queue = list(mutants)
    for i, b in enumerate(baselines):
        queue.insert((2 * i + 1) * (len(mutants) + len(baselines)) // (2 * len(baselines)), b)
    return queue


class InFlight:
    """How many gradings run at once: each baseline records how many others ran when it started."""

    def __init__(self):
        self.lock, self.count = threading.Lock(), 0

    def run(self, grade):
        with self.lock:
            others = self.count
            self.count += 1
        try:
            return grade(), others
        finally:
            with self.lock:
                self.count -= 1


# ---- the report --------------------------------------------------------------------------------

def summarize(mutants, results, equivalent):
    """Per operator: counts of each status, and the kill rate over the mutants that count."""
    table = {}
    for m in mutants:
        status = results[m.id]["status"]
        if status == SURVIVED and m.id in equivalent:
            status = EQUIVALENT
        row = table.setdefault(m.operator, {KILLED: 0, SURVIVED: 0, EQUIVALENT: 0, STILLBORN: 0, NOT_RUN: 0})
        row[status] += 1
    return table


def kill_rate(row):
    counted = row[KILLED] + row[SURVIVED] + row[NOT_RUN]
    return None if counted == 0 else row[KILLED] / counted


def table_text(lab, table):
    lines = ["%-28s %7s %7s %7s %10s %9s %7s %9s" % ("operator", "mutants", "killed", "survived", "equivalent",
                                                       "stillborn", "not run", "kill rate")]
    total = {KILLED: 0, SURVIVED: 0, EQUIVALENT: 0, STILLBORN: 0, NOT_RUN: 0}
    for op_name, _ in OPERATORS:
        if op_name not in table:
            continue
        row = table[op_name]
        for k in total:
            total[k] += row[k]
        rate = kill_rate(row)
        lines.append("%-28s %7d %7d %7d %10d %9d %7d %9s" % (op_name, sum(row.values()), row[KILLED], row[SURVIVED],
                                                             row[EQUIVALENT], row[STILLBORN], row[NOT_RUN],
                                                             "-" if rate is None else "%.0f%%" % (100 * rate)))
    rate = kill_rate(total)
    lines.append("%-28s %7d %7d %7d %10d %9d %7d %9s" % ("all (%s)" % lab.name, sum(total.values()), total[KILLED],
                                                         total[SURVIVED], total[EQUIVALENT], total[STILLBORN],
                                                         total[NOT_RUN], "-" if rate is None else
                                                         "%.1f%%" % (100 * rate)))
    return "\n".join(lines)


def recorded(doc):
    """What grader/tests/data/mutants/ keeps of a run's mutants.json."""
    return {"lab": doc["lab"], "gpu": doc["gpu"]["device"].get("name"),
            "runtime_version": doc["gpu"]["device"].get("runtime_version"), "seconds": doc["seconds"],
            "baselines": [{k: b[k] for k in ("what", "seed", "score", "max_score", "others_running")}
                          for b in doc["baselines"]],
            "mutants": [{k: m[k] for k in ("id", "operator", "status", "killed_by")} for m in doc["mutants"]]}


def markdown(lab, mutants, results, equivalent, table, baselines, gpu, seconds):
    out = ["# Mutants of %s" % lab.name, "",
           "GPU: %s; %d mutants in %.0f s." % (gpu.name if gpu.available else "none (%s)" % gpu.reason.splitlines()[0],
                                               len(mutants), seconds), "",
           "```text", table_text(lab, table), "```", "", "## Baselines", ""]
    for b in baselines:
        out.append("- %s, seed %d: %g/%g%s" % (b["what"], b["seed"], b["score"], b["max_score"],
                                                ("; lost: " + ", ".join(b["lost"])) if b["lost"] else ""))
    out += ["", "## Every mutant", "", "| mutant | change | status | killed by |", "| --- | --- | --- | --- |"]
    for m in mutants:
        r = results[m.id]
        status = EQUIVALENT if r["status"] == SURVIVED and m.id in equivalent else r["status"]
        by = ", ".join(r["killed_by"]) if status == KILLED else equivalent.get(m.id, "")
        out.append("| `%s` | %s | %s | %s |" % (m.id, m.what.replace("|", "\\|"), status, by.replace("|", "\\|")))
    return "\n".join(out) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(prog="mutants.py", description="Mutation testing of the grader on one lab.")
    p.add_argument("lab", help="01, 1 or 01-divergent-counter")
    p.add_argument("--list", action="store_true", help="print the mutants, grade nothing")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="builds at once (default: one per core)")
    p.add_argument("--seed", type=int, default=1, help="the seed of the mutants' test cases (default 1)")
    p.add_argument("--baseline-seeds", type=int, default=1, metavar="N",
                   help="grade the solution and the alternatives on seeds 1..N among the mutants (default 1)")
    p.add_argument("--timeout", type=float, default=MUTANT_TIMEOUT,
                   help="seconds per harness run (default %(default)s: every solution case takes a few; a mutant "
                        "that recurses without end should not cost a minute)")
    p.add_argument("--out", metavar="DIR", help="where mutants.json and mutants.md go")
    p.add_argument("--only", nargs="+", metavar="ID", help="grade only these mutants")
    args = p.parse_args(argv)
    try:
        lab = registry.resolve(args.lab)
    except KeyError as err:
        print("mutants.py: %s" % err.args[0], file=sys.stderr)
        return 2
    mutants = generate(lab)
    try:
        equivalent = read_equivalent(lab)
    except ValueError as err:
        print("mutants.py: %s" % err, file=sys.stderr)
        return 2
    if args.list:
        for m in mutants:
            print(m.describe() + ("   EQUIVALENT: " + equivalent[m.id] if m.id in equivalent else ""))
        print("%d mutants" % len(mutants))
        return 0
    if args.only:
        unknown = sorted(set(args.only) - {m.id for m in mutants})
        if unknown:
            print("mutants.py: no such mutants: %s" % ", ".join(unknown), file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m.id in args.only]

    out = os.path.abspath(args.out or os.path.join(paths.BUILD_ROOT, "mutants", lab.name))
    os.makedirs(out, exist_ok=True)
    gpu = gpu_mod.detect()
    print("%s: %d mutants, %d listed as equivalent; GPU: %s" % (
        lab.name, len(mutants), len(equivalent), gpu.name if gpu.available else "none: runtime checks not run"),
        flush=True)
    started = time.monotonic()
    scratch = tempfile.mkdtemp(prefix="mutants-", dir=out)
    results, baselines, in_flight = {}, [], InFlight()
    queue = interleave(mutants, [(what, folder, seed) for what, folder in baseline_folders(lab)
                                 for seed in range(1, args.baseline_seeds + 1)])
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {}
            for task in queue:
                if isinstance(task, Mutant):
                    futures[pool.submit(in_flight.run, lambda m=task: grade_mutant(lab, m, args.seed, args.timeout,
                                                                                   gpu, scratch))] = task
                else:
                    futures[pool.submit(in_flight.run, lambda t=task: grade_baseline(lab, *t, args.timeout,
                                                                                     gpu))] = task
            done = 0
            with open(os.path.join(out, "progress.jsonl"), "w") as progress:  # what a run cut short had done
                for future in as_completed(futures):
                    task, (r, others) = futures[future], future.result()
                    progress.write(json.dumps(dict(r, id=getattr(task, "id", None), others_running=others)) + "\n")
                    progress.flush()
                    if not isinstance(task, Mutant):
                        r["others_running"] = others
                        baselines.append(r)
                        print("baseline %s, seed %d: %g/%g, %d other gradings running%s" % (
                            r["what"], r["seed"], r["score"], r["max_score"], others,
                            "".join("\n  LOST %s: %s" % item for item in r["messages"].items())), flush=True)
                        continue
                    m, done = task, done + 1
                    results[m.id] = r
                    print("[%d/%d] %-36s %-10s %5.1fs %s" % (
                        done, len(mutants), m.id, r["status"], r["seconds"],
                        ", ".join(r["killed_by"]) if r["status"] == KILLED else
                        (equivalent.get(m.id, m.what) if r["status"] == SURVIVED else "")), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    baselines.sort(key=lambda b: (b["what"] != "solution", b["what"], b["seed"]))
    seconds = time.monotonic() - started

    table = summarize(mutants, results, equivalent)
    problems = ["baseline %s, seed %d lost points: %s" % (b["what"], b["seed"], ", ".join(b["lost"]))
                for b in baselines if b["lost"]]
    problems += ["survived: %s" % m.describe() for m in mutants
                 if results[m.id]["status"] == SURVIVED and m.id not in equivalent]
    problems += ["listed as equivalent but killed by %s: %s" % (", ".join(results[m.id]["killed_by"]), m.id)
                 for m in mutants if m.id in equivalent and results[m.id]["status"] == KILLED]
    if not args.only:  # then mutants is every mutant of the solution
        problems += equivalent_list_problems(lab, mutants)
    doc = {"lab": lab.name, "gpu": gpu.to_dict(), "seed": args.seed, "seconds": round(seconds, 1),
           "baselines": baselines, "table": table, "problems": problems,
           "mutants": [dict(id=m.id, operator=m.operator, file=m.file, line=m.line, what=m.what,
                            equivalent=equivalent.get(m.id), **results[m.id]) for m in mutants]}
    report.write_json(os.path.join(out, "mutants.json"), doc)
    report.write_json(os.path.join(out, "recorded.json"), recorded(doc))
    report.write_text(os.path.join(out, "mutants.md"), markdown(lab, mutants, results, equivalent, table,
                                                                 baselines, gpu, seconds))
    print()
    print(table_text(lab, table))
    for line in problems:
        print("PROBLEM: " + line)
    print("%d mutants in %.0f s; wrote %s" % (len(mutants), seconds, paths.relative(out)))
    if problems:
        return 1
    if not gpu.available:  # the static checks' kills are real; the runtime checks' mutants were not graded
        print("NOT RUN: no usable GPU here, so the mutants only a runtime check can kill were not graded")
        return exits.NOT_RUN
    return 0


if __name__ == "__main__":
    sys.exit(main())
