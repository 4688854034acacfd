"""The class's score sheets: each submission's verdict (one short phrase), scores.csv, summary.txt,
and the two files a gradebook imports: canvas.csv and gradescope.csv (with a roster, or the submission
ids standing in for the students)."""
import csv
import io
import os

from . import checks as chk
from . import failures, report
from .standard_checks import COMPILES, RUNS_CLEANLY

# Verdicts beside those of gradelib.failures.VERDICTS (a submission that did not build or run cleanly).
FULL_MARKS = "full marks"
POINTS_LOST = "points lost"
NOT_RUN_NO_GPU = "runtime not run (no GPU)"
NOT_RUN_LACKING = "checks not run (no %s)"  # % what the machine lacks (a tool: compute-sanitizer)
BAD_ARCHIVE = "bad archive"
GRADER_ERROR = failures.VERDICTS[failures.GRADER_BUG]  # or this machine's trouble (gradelib.batch)
NOT_GRADED = "not graded"
REFUSED = "refused: "  # + the reason an entry of the class folder is no submission (gradelib.archives)


def verdict_of(rep):
    """One short phrase for the score sheet: what happened to the submission, read from the failure
    kinds the kit's checks return (gradelib.failures), never from the words of their messages. A check
    that raised (a grader bug) leaves the submission ungraded, whatever the others found."""
    if any(r.failure == failures.GRADER_BUG for r in rep.results):
        return GRADER_ERROR
    for name in (COMPILES, RUNS_CLEANLY):
        result = next(r for r in rep.results if r.name == name)
        if result.status == chk.FAILED:
            return failures.VERDICTS[result.failure]
    if chk.points_lost(rep.results):
        return POINTS_LOST
    if chk.not_run_for_lack_of_gpu(rep.results):
        return NOT_RUN_NO_GPU
    lacked = chk.lacked(rep.results)
    if lacked:
        return NOT_RUN_LACKING % ", ".join(lacked)
    return FULL_MARKS


def scored(verdict):
    """Whether a verdict is that of a submission that built and ran (its score says the rest)."""
    return verdict in (FULL_MARKS, POINTS_LOST, NOT_RUN_NO_GPU) or verdict.startswith(NOT_RUN_LACKING.split("%")[0])


def scores_csv(lab, records, expected_ids, refused=()):
    """The score sheet: a row for every expected id (graded or not) and for every refused entry of the
    class folder (its name, "refused: " and why), a column per check. A grader error is no grade: its
    row has no scores, whatever the checks that ran before it found."""
    names = [c.name for c in lab.checks]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "verdict", "score", "max_score"] + names)
    max_score = lab.max_score
    reasons = dict(refused)
    graded = importable(records)
    for sub_id in sorted(set(expected_ids) | set(records) | set(reasons)):
        record = graded.get(sub_id)
        if record is None:  # no grade: a grader error, refused or not graded
            verdict = (records[sub_id]["verdict"] if sub_id in records else
                       REFUSED + reasons[sub_id] if sub_id in reasons else NOT_GRADED)
            writer.writerow([sub_id, verdict, "", max_score] + [""] * len(names))
            continue
        writer.writerow([sub_id, record["verdict"], "%g" % record["score"], "%g" % record["max_score"]]
                        + ["%g" % record["checks"][n] if n in record["checks"] else "" for n in names])
    return buf.getvalue()


def summary_text(lab, records, expected_ids, seconds=None, graded_now=0, refused=(), notes=()):
    rows = [records[i] for i in sorted(records)]
    lines = ["%s: %d submissions, %d with a record%s" % (
        lab.title, len(set(expected_ids) | set(records)), len(rows),
        "; %d %s of the class folder refused" % (len(refused), "entry" if len(refused) == 1 else "entries")
        if refused else "")]
    late = [i for i in sorted(records) if records[i].get("late")]
    if late:
        lines.append("late, as Canvas named them: %s" % ", ".join(late))
    if seconds is not None and graded_now:
        lines.append("graded %d now in %s (%.1f s per submission, wall clock)"
                     % (graded_now, clock(seconds), seconds / graded_now))
    missing = sorted(set(expected_ids) - set(records))
    if missing:
        lines.append("NOT GRADED: %s" % ", ".join(missing))
    for name, reason in refused:
        lines.append("REFUSED, not graded: %s: %s" % (name, reason))
    bins = [("100%", 100, 101), ("90-99%", 90, 100), ("70-89%", 70, 90), ("50-69%", 50, 70),
            ("1-49%", 1e-9, 50), ("0%", 0, 1e-9)]
    lines.append("score distribution%s:" % (" (grader errors aside: no grade)" if any(
        r["verdict"] == GRADER_ERROR for r in rows) else ""))
    graded = importable(records).values()
    for label, low, high in bins:
        n = sum(1 for r in graded if r["max_score"] and low <= 100.0 * r["score"] / r["max_score"] < high)
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
    unverified = unverified_checks(records)
    if unverified:
        wants = sorted({c.get("not_run_lacking") or chk.GPU for lacked in unverified.values() for c in lacked})
        lines.append("UNVERIFIED: %d of %d scores were made with checks NOT CHECKED (%g points each at most, for want "
                     "of %s): %s" % (len(unverified), len(rows), max(sum(c["points"] for c in lacked)
                                                                     for lacked in unverified.values()),
                                     " or ".join(wants), ", ".join(unverified)))
    lines += list(notes)
    return "\n".join(lines) + "\n"


def lacked_checks(record):
    """A graded submission's checks left unrun for what the machine lacked, a GPU or compute-sanitizer
    (older records name only the GPU's: skipped_no_gpu)."""
    return [c for c in (record.get("report") or {}).get("checks", [])
            if c.get("not_run_lacking") or c.get("skipped_no_gpu")]


def runtime_not_run(record):
    """Whether a graded submission had checks left unrun for what the machine lacked (checks.lacked,
    kept in the record; read from its checks for older records)."""
    if "runtime_not_run" in record:
        return record["runtime_not_run"]
    return bool(lacked_checks(record))


def unverified_checks(records):
    """{submission id: [its checks not run for what the machine lacked]}, for those that have any."""
    return {sub_id: lacked_checks(records[sub_id]) for sub_id in sorted(records)
            if runtime_not_run(records[sub_id]) and lacked_checks(records[sub_id])}


def write_sheets(out, lab, records, expected_ids, seconds=None, graded_now=0, refused=(), roster=None, notes=(),
                 partial_imports=False):
    """scores.csv, canvas.csv, gradescope.csv and summary.txt (whose text is returned): refused lists the
    class folder's refused entries [(name, reason)], roster maps ids to students (read_roster) or is None,
    notes are lines for summary.txt. The two import files are written from scores with checks not run
    (no GPU) only with partial_imports: a gradebook must not take them by accident."""
    report.write_text(os.path.join(out, "scores.csv"), scores_csv(lab, records, expected_ids, refused))
    notes = list(notes)
    if any(runtime_not_run(r) for r in records.values()) and not partial_imports:
        for name in (CANVAS_FILE, GRADESCOPE_FILE):
            if os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))  # an earlier run's: no longer this batch's scores
        notes.append("%s and %s NOT WRITTEN: scores with checks NOT CHECKED (UNVERIFIED above) are no grade; "
                     "grade on a machine that has what they need, or give --partial-imports to write them "
                     "anyway" % (CANVAS_FILE, GRADESCOPE_FILE))
    else:
        _write_utf8(os.path.join(out, CANVAS_FILE), canvas_csv(lab, records, roster))
        _write_utf8(os.path.join(out, GRADESCOPE_FILE), gradescope_csv(records, roster))
        notes += import_notes(records, expected_ids, refused, roster)
    text = summary_text(lab, records, expected_ids, seconds, graded_now, refused, notes)
    report.write_text(os.path.join(out, "summary.txt"), text)
    return text


# ---- gradebook imports -----------------------------------------------------------------------
#
# A submission's id is its folder or archive name; a gradebook knows students by its own ids. The roster
# (--roster FILE) maps one to the other: a CSV with a header row and these columns, id required, the rest
# optional (a column left out, or a cell left empty, stays empty in the import files):
ROSTER_COLUMNS = ("id", "name", "email", "sis_id", "sis_login", "section", "canvas_id")
#   id         the submission id (the folder or archive name, as in scores.csv)
#   name       the student's name as the gradebook shows it ("Smith, Jane" for Canvas)
#   email      the address the student has in Gradescope
#   sis_id     the institution's student number (Canvas: SIS User ID; Gradescope: SID)
#   sis_login  the institution's login (Canvas: SIS Login ID)
#   section    the Canvas section
#   canvas_id  Canvas's own user ID (the ID column of a Canvas gradebook export)
# Without a roster the submission id stands where the student's identifier goes (Canvas: Student and
# SIS Login ID; Gradescope: Name and SID), which a gradebook matches only where ids are those logins.

CANVAS_FILE = "canvas.csv"
GRADESCOPE_FILE = "gradescope.csv"

# Canvas's gradebook import reads the CSV its gradebook export writes: the five student columns below,
# in this order, then one column per assignment, titled "Assignment Name (assignment id)" for an
# existing assignment; a column whose title names no assignment creates one. The row after the header
# is the export's "Points Possible" row (its first cell indented by four spaces, the student columns
# empty). Only one of Student, ID and SIS User ID is needed to match a student.
#   https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades
#   (which follows Instructure's guide, https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807)
# Fields are quoted as RFC 4180 says (a name holding a comma is quoted), UTF-8, as Canvas's CSV imports
# ask: https://developerdocs.instructure.com/services/canvas/sis/file.sis_csv
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS_POSSIBLE = "    Points Possible"

# Gradescope's score upload takes a CSV with a column that identifies the student and a score column.
# Gradescope knows a student by the roster's Name, Email and SID
# (https://guides.gradescope.com/hc/en-us/articles/21926598776333); the file carries all three and the
# score. Map the columns in Gradescope's upload dialog (Email, or SID, and Score) on first use.
GRADESCOPE_COLUMNS = ["Name", "SID", "Email", "Score"]


class RosterError(Exception):
    """A roster file that cannot be used; the message says why."""


def read_roster(path):
    """{submission id: {column: value}} from a roster CSV (ROSTER_COLUMNS), or RosterError."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:  # -sig: the byte-order mark Excel writes
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as err:
        raise RosterError("cannot read the roster %s (%s)" % (path, err))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise RosterError("the roster %s is empty: it needs a header row (%s)" % (path, ",".join(ROSTER_COLUMNS)))
    header = [h.strip().lower() for h in rows[0]]
    unknown = [h for h in header if h not in ROSTER_COLUMNS]
    if unknown or "id" not in header or len(set(header)) != len(header):
        raise RosterError("the roster %s has the columns %s; it takes %s (id required, each once)"
                          % (path, ",".join(rows[0]), ",".join(ROSTER_COLUMNS)))
    roster = {}
    for number, row in enumerate(rows[1:], 2):
        entry = {column: (row[k].strip() if k < len(row) else "") for k, column in enumerate(header)}
        if not entry["id"]:
            raise RosterError("the roster %s, row %d: no id" % (path, number))
        if entry["id"] in roster:
            raise RosterError("the roster %s, row %d: the id %s comes twice" % (path, number, entry["id"]))
        roster[entry["id"]] = entry
    return roster


def number(value):
    """A score as the gradebooks read it: a plain decimal number (17, 13.5), never an exponent."""
    text = "%.4f" % value
    return text.rstrip("0").rstrip(".") if "." in text else text


def importable(records):
    """The records whose score goes to a gradebook, by id: graded (a bad archive is graded, 0), not a
    grader error (a bug of the grader is no grade)."""
    return {i: r for i, r in records.items() if r.get("verdict") != GRADER_ERROR and "score" in r}


def _student(sub_id, roster, record):
    """The roster's entry for a submission id; without one, the id in place of the identifiers, and
    Canvas's user id where Canvas's download named the submission (record: its record)."""
    entry = (roster or {}).get(sub_id)
    if entry is not None:
        return {c: entry.get(c, "") for c in ROSTER_COLUMNS}
    return dict({c: "" for c in ROSTER_COLUMNS}, id=sub_id, name=sub_id, sis_id="", sis_login=sub_id,
                canvas_id=record.get("canvas_user_id", ""))


def canvas_csv(lab, records, roster=None):
    """Canvas's gradebook import: the student columns, one column for the lab (titled after it: Canvas
    makes it an assignment, or give the column an existing assignment's "Name (id)"), the Points Possible
    row, then a row per graded submission."""
    buf = io.StringIO()
    writer = csv.writer(buf)  # RFC 4180: CRLF, quotes where needed
    writer.writerow(CANVAS_STUDENT_COLUMNS + [lab.title])
    writer.writerow([CANVAS_POINTS_POSSIBLE, "", "", "", "", number(lab.max_score)])
    for sub_id, record in sorted(importable(records).items()):
        s = _student(sub_id, roster, record)
        writer.writerow([s["name"], s["canvas_id"], s["sis_id"], s["sis_login"], s["section"], number(record["score"])])
    return buf.getvalue()


def gradescope_csv(records, roster=None):
    """Gradescope's score upload: Name, SID, Email and the score, a row per graded submission. Without a
    roster, the submission id in Name and in SID."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(GRADESCOPE_COLUMNS)
    for sub_id, record in sorted(importable(records).items()):
        s = _student(sub_id, roster, record)
        sid = s["sis_id"] if roster and sub_id in roster else sub_id
        writer.writerow([s["name"], sid, s["email"], number(record["score"])])
    return buf.getvalue()


def import_notes(records, expected_ids, refused, roster):
    """What an instructor must know before importing canvas.csv or gradescope.csv."""
    files = "%s and %s" % (CANVAS_FILE, GRADESCOPE_FILE)
    notes = []
    scored = importable(records)
    left_out = sorted((set(expected_ids) | set(records)) - set(scored)) + [name for name, _ in refused]
    if left_out:
        notes.append("not in %s (no score to import): %s" % (files, ", ".join(left_out)))
    if roster is None and scored and all("canvas_user_id" in r for r in scored.values()):
        notes.append("%s: no --roster; every submission came named as Canvas's download names it, so %s "
                     "carries Canvas's user ID (its ID column, which Canvas matches); %s needs --roster FILE "
                     "(columns %s)" % (files, CANVAS_FILE, GRADESCOPE_FILE, ",".join(ROSTER_COLUMNS)))
        return notes
    if roster is None:
        notes.append("%s: no --roster, so the submission id stands where the student's identifier goes "
                     "(Canvas: Student and SIS Login ID; Gradescope: Name and SID): a gradebook matches "
                     "those rows only where the ids are its logins; a real import needs --roster FILE "
                     "(columns %s)" % (files, ",".join(ROSTER_COLUMNS)))
        return notes
    unknown = sorted(set(scored) - set(roster))
    if unknown:
        notes.append("no roster row for: %s (the submission id stands in for the student in %s)"
                     % (", ".join(unknown), files))
    absent = sorted(set(roster) - set(expected_ids) - set(records))
    if absent:
        notes.append("in the roster, no submission: %s (not in %s)" % (", ".join(absent), files))
    return notes


def _write_utf8(path, text):
    """Write a file whole or not at all, in UTF-8 whatever the locale (names may be anything)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def clock(seconds):
    seconds = int(round(seconds))
    return "%d:%02d" % (seconds // 60, seconds % 60) if seconds < 3600 else \
        "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


