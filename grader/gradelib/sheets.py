"""The class's score sheets: each submission's verdict (one short phrase), scores.csv and summary.txt."""
import csv
import io
import os

from . import checks as chk
from . import failures, report
from .grading import COMPILES, RUNS_CLEANLY

# Verdicts beside those of gradelib.failures.VERDICTS (a submission that did not build or run cleanly).
FULL_MARKS = "full marks"
POINTS_LOST = "points lost"
NOT_RUN_NO_GPU = "runtime not run (no GPU)"
BAD_ARCHIVE = "bad archive"
GRADER_ERROR = "grader error"


def verdict_of(rep):
    """One short phrase for the score sheet: what happened to the submission, read from the failure
    kinds the kit's checks return (gradelib.failures), never from the words of their messages."""
    for name in (COMPILES, RUNS_CLEANLY):
        result = next(r for r in rep.results if r.name == name)
        if result.status == chk.FAILED:
            return failures.VERDICTS[result.failure]
    if chk.points_lost(rep.results):
        return POINTS_LOST
    if chk.not_run_for_lack_of_gpu(rep.results):
        return NOT_RUN_NO_GPU
    return FULL_MARKS


def scores_csv(lab, records, expected_ids):
    """The score sheet: a row for every expected id (graded or not), a column per check."""
    names = [c.name for c in lab.checks]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "verdict", "score", "max_score"] + names + ["review"])
    max_score = lab.max_score
    for sub_id in sorted(set(expected_ids) | set(records)):
        record = records.get(sub_id)
        if record is None:
            writer.writerow([sub_id, "not graded", "", max_score] + [""] * len(names) + [""])
            continue
        writer.writerow([sub_id, record["verdict"], "%g" % record["score"], "%g" % record["max_score"]]
                        + ["%g" % record["checks"][n] if n in record["checks"] else "" for n in names]
                        + ["; ".join(record.get("review", []))])
    return buf.getvalue()


def summary_text(lab, records, expected_ids, seconds=None, graded_now=0):
    rows = [records[i] for i in sorted(records)]
    lines = ["%s: %d submissions, %d with a record" % (lab.title, len(set(expected_ids) | set(records)), len(rows))]
    if seconds is not None and graded_now:
        lines.append("graded %d now in %s (%.1f s per submission, wall clock)"
                     % (graded_now, clock(seconds), seconds / graded_now))
    missing = sorted(set(expected_ids) - set(records))
    if missing:
        lines.append("NOT GRADED: %s" % ", ".join(missing))
    bins = [("100%", 100, 101), ("90-99%", 90, 100), ("70-89%", 70, 90), ("50-69%", 50, 70),
            ("1-49%", 1e-9, 50), ("0%", 0, 1e-9)]
    lines.append("score distribution:")
    for label, low, high in bins:
        n = sum(1 for r in rows if r["max_score"] and low <= 100.0 * r["score"] / r["max_score"] < high)
        lines.append("  %-7s %4d  %s" % (label, n, "#" * min(n, 60)))
    verdicts = {}
    for r in rows:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    lines.append("verdicts: " + ", ".join("%s %d" % kv for kv in sorted(verdicts.items(), key=lambda kv: -kv[1])))
    failed = {}
    for r in rows:
        for c in (r.get("report") or {}).get("checks", []):
            if c["status"] == chk.FAILED:
                failed[c["name"]] = failed.get(c["name"], 0) + 1
    top = sorted(failed.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    lines.append("most-failed checks: " + (", ".join("%s (%d)" % kv for kv in top) if top else "none"))
    flagged = [r["id"] for r in rows if r.get("review")]
    if flagged:
        lines.append("to read (the review column of scores.csv): " + ", ".join(flagged))
    return "\n".join(lines) + "\n"


def write_sheets(out, lab, records, expected_ids, seconds=None, graded_now=0):
    report.write_text(os.path.join(out, "scores.csv"), scores_csv(lab, records, expected_ids))
    text = summary_text(lab, records, expected_ids, seconds, graded_now)
    report.write_text(os.path.join(out, "summary.txt"), text)
    return text


def clock(seconds):
    seconds = int(round(seconds))
    return "%d:%02d" % (seconds // 60, seconds % 60) if seconds < 3600 else \
        "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


