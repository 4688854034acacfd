"""Reports: text for people, the grader's JSON document, and Gradescope's results.json."""
import json
import os

from . import checks as chk
from . import failures

_MARK = {chk.PASSED: "OK", chk.FAILED: "FAIL", chk.SKIPPED: "SKIP"}


def fmt_points(points):
    return ("%g" % points)


def _indent(text, prefix="      "):
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def hint(result, lab):
    """Where a failed check sends the student: the check's handout section, or, when the lab's files
    were not there to build, the lab's README, which names them."""
    if result.status != chk.FAILED:
        return ""
    if result.failure in (failures.MISSING_FILE, failures.REFUSED_FILE):
        return "read labs/%s/README.md: it names the files the grader takes from your folder" % lab.name
    return result.check.hint


def plural(n, word):
    """"1 word", "2 words"."""
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def lab_text(report, verbose=False):
    """The report a student reads: one line per check, then what went wrong and where to read."""
    lines = ["== %s  (%s) ==" % (report.lab.title, report.submission_dir_label)]
    width = max(len(r.name) for r in report.results) + 2
    for r in report.results:
        lines.append("  %-*s %-4s %5s/%s  [%s]" % (width, r.name + " " + "." * (width - len(r.name) - 1),
                                                   _MARK[r.status], fmt_points(r.score), fmt_points(r.check.points),
                                                   r.check.kind))
        if r.status == chk.FAILED or (verbose and r.message):
            if r.message:
                lines.append(_indent(r.message))
            if hint(r, report.lab):
                lines.append("      hint: " + hint(r, report.lab))
    no_gpu = [r for r in report.results if r.no_gpu]
    skipped_by_parent = [r for r in report.results if r.status == chk.SKIPPED and not r.lacking]
    if skipped_by_parent:
        lines.append("  skipped because a check they depend on did not pass: "
                     + ", ".join(r.name for r in skipped_by_parent))
    if no_gpu:
        # Why there is no GPU is said once, where the grader starts; each lab only counts what it lost.
        lines.append("  runtime checks NOT RUN (%d checks, %s points): no usable GPU"
                     % (len(no_gpu), fmt_points(sum(r.check.points for r in no_gpu))))
    for lacking in chk.lacked(report.results):
        if lacking != chk.GPU:
            lacked = [r for r in report.results if r.lacking == lacking]
            lines.append("  NOT RUN for want of %s (%s, %s points): not held against you, not a pass"
                         % (lacking, ", ".join(r.name for r in lacked), fmt_points(sum(r.check.points for r in lacked))))
    unverified = unchecked_note(report)
    lines.append("  score: %s/%s%s" % (fmt_points(report.score), fmt_points(report.max_score),
                                       " (%s)" % unverified if unverified else ""))
    return "\n".join(lines)


def unchecked_note(report):
    """What a score leaves unchecked for want of a GPU or a tool, in one sentence, or "" when every
    check ran: a score with its runtime checks not run is no verdict on the student's work."""
    lacked = [r for r in report.results if r.lacking]
    if not lacked:
        return ""
    unchecked = sum(r.check.points for r in lacked)
    checkable = report.max_score - unchecked
    wants = sorted({"usable GPU" if r.no_gpu else r.lacking for r in lacked})
    return "%s of %s checkable points; %s points NOT CHECKED (no %s): your results are unverified" % (
        fmt_points(report.score), fmt_points(checkable), fmt_points(unchecked), ", no ".join(wants))


def document(reports, seed, gpu, exit_status):
    """The grader's own JSON document (--json)."""
    score = round(sum(r.score for r in reports), 2)
    max_score = sum(r.max_score for r in reports)
    return {
        "seed": seed,
        "gpu": gpu.to_dict(),
        "score": score,
        "max_score": max_score,
        "exit_status": exit_status,
        "labs": [r.to_dict() for r in reports],
    }


# The fields Gradescope's results.json may hold (its autograder documentation).
GRADESCOPE_TOP = {"score", "max_score", "execution_time", "output", "output_format", "test_output_format",
                  "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
GRADESCOPE_TEST = {"score", "max_score", "status", "name", "name_format", "number", "output",
                   "output_format", "tags", "visibility", "extra_data"}
GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def gradescope_problems(doc):
    """What in a results.json Gradescope would not take: unknown fields, bad status, visibility or scores."""
    problems = ["unknown field %r" % k for k in sorted(set(doc) - GRADESCOPE_TOP)]
    for t in doc.get("tests", []):
        problems += ["test %r: unknown field %r" % (t.get("name"), k) for k in sorted(set(t) - GRADESCOPE_TEST)]
        if t.get("status") not in ("passed", "failed"):
            problems.append("test %r: status %r" % (t.get("name"), t.get("status")))
        if t.get("visibility", "visible") not in GRADESCOPE_VISIBILITY:
            problems.append("test %r: visibility %r" % (t.get("name"), t.get("visibility")))
        if not isinstance(t.get("score"), (int, float)) or t["score"] > t.get("max_score", t["score"]):
            problems.append("test %r: score %r of %r" % (t.get("name"), t.get("score"), t.get("max_score")))
    return problems


def gradescope(reports, seed, gpu, notes=()):
    """Gradescope's results.json: score, max_score, and one test per check that ran or was skipped for
    the submission's sake; notes: lines added to its output (how it was graded, e.g. without the sandbox).
    Gradescope knows a test only as passed or failed (its autograder specification), so a check this
    machine could not run (no GPU, no compute-sanitizer) is no test: the output names it, its points and
    why, as not run and not held against the student."""
    tests = []
    not_run, not_run_points = [], 0
    for report in reports:
        for r in report.results:
            output = r.message or ""
            if hint(r, report.lab):
                output += ("\n" if output else "") + "hint: " + hint(r, report.lab)
            if r.lacking:
                not_run.append("  %s: %s (%g points): %s" % (report.lab.title, r.name, r.check.points,
                                                             (r.message or "").splitlines()[0] if r.message else ""))
                not_run_points += r.check.points
                continue
            if r.status == chk.SKIPPED:
                output = "NOT RUN: " + output
            tests.append({
                "name": "%s: %s" % (report.lab.title, r.name),
                "score": r.score,
                "max_score": r.check.points,
                "status": "passed" if r.status == chk.PASSED else "failed",
                "output": output,
                "visibility": "visible",
            })
    lines = ["seed %s; %s" % (seed, ("GPU: %s" % gpu.name) if gpu.available else
                              "runtime checks not run: %s" % gpu.reason)] + list(notes)
    if not_run:
        lines += ["NOT RUN on this machine, so not shown as tests (their %g points are not yet yours, and not "
                  "held against you: they are checked where the course grades on a GPU):"
                  % not_run_points] + not_run
    summary = "\n".join(lines)
    return {
        "score": round(sum(r.score for r in reports), 2),
        "max_score": sum(r.max_score for r in reports),
        "output": summary,
        "visibility": "visible",
        "stdout_visibility": "visible",
        "tests": tests,
    }


def write_text(path, text):
    """Write a file whole or not at all (a temporary name, then a rename), making its folder."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json(path, doc):
    write_text(path, json.dumps(doc, indent=2) + "\n")
