"""Grade a whole class: every entry of the class folder gets a row, whatever happened to it.

  grade.py batch SUBMISSIONS_DIR --lab NN [--out DIR] [--jobs J] [--timeout SEC] [--regrade]
                 [--seed S] [--shard I/N] [--roster FILE] [--no-sandbox]
  grade.py merge SHARD_OUT_DIR... --out DIR [--roster FILE]

A submission is a folder, an archive (.zip, .tar, .tar.gz, .tgz, .tar.bz2, .tar.xz) or a lone lab file
named ID_<the lab's file> in SUBMISSIONS_DIR; its id is the name (without the archive suffix, or
without _<the lab's file>). Any other entry is refused by name, with the reason, in the output and in
summary.txt and scores.csv; only OS litter (.DS_Store, ._*, Thumbs.db, desktop.ini, __MACOSX) is passed
over without a word (gradelib.archives). Archives are unpacked with caps and without links or paths
leading out; the lab's files may sit in a folder or two inside (build.find_submission_dir).
The --out folder must lie outside SUBMISSIONS_DIR (else it would be graded as a student): a batch whose
--out (or default grading/<lab>/) is inside is refused before anything is written, with status 2.
Submissions are graded --jobs at a time (default one per core). Their harness runs that time nothing
share the GPU; a run that times something has it alone, so timing checks see an idle GPU
(gradelib.gpushare). Every build and run is sandboxed (gradelib.sandbox):
no submission can change another's files, the kit or this batch's records; where no sandbox can be
made, a batch runs only with --no-sandbox.

Written under --out (default: grading/<lab>/):
  records/<id>.json   everything the grader found, plus what makes a re-run skip it
  results/<id>.json   Gradescope's results.json for the submission
  feedback/<id>.md    what the student reads
  feedback/<id>.html  the same as a page, with a picture of the submission's run where the lab has one
  scores.csv          one row per submission and per refused entry, a column per check, the total
  canvas.csv          the scores as Canvas's gradebook import reads them (gradelib.sheets)
  gradescope.csv      the scores as Gradescope's score upload reads them (gradelib.sheets)
  summary.txt         score distribution, verdicts, refusals, most-failed checks, what to know before
                      importing (also printed)
  batch.json          the batch's lab, seed, kit version, shard, the ids it covers and the refusals
Records are written as each submission finishes, so an interrupted batch loses nothing already
graded; a re-run skips a submission graded with the same kit version, seed and files unless
--regrade, or unless it was not graded (a grader error). A grader error (a check that raised, or what
this machine could not do: a sandbox not made under load) is graded once more, GRADE_AGAIN_AFTER_S
later; its record keeps the first attempt's problem.

Exit status (batch and merge), the order of grade.py's own: 1 when something could not be graded (an
entry refused, a grader error, a submission with no record), else 77 when runtime checks were not run
for want of a GPU (build and static checks only: no pass), else 0; 2 bad usage; 130 interrupted (what
is graded is kept). A bad archive, like a compile error, is the submission's own failure: a graded row.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed

from . import build, exits, failures, feedback, paths, report, sheets
from . import checks as chk
from . import gpu as gpu_mod
from . import registry
from .archives import BadArchive, scan_class
from .grading import grade_lab, sandbox_choice
from .sheets import BAD_ARCHIVE, FULL_MARKS, GRADER_ERROR

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C

# ---- what makes a re-run skip a submission ---------------------------------------------------

def hash_tree(digest, top, skip_dirs=()):
    """Add every file below top (path and bytes, in a fixed order) to digest, but for the folders named in
    skip_dirs, hidden folders, .pyc files and the instructor's salt file."""
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in skip_dirs and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".pyc") or name == os.path.basename(paths.SALT_FILE):
                continue
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, paths.KIT_ROOT).encode())
            with open(path, "rb") as f:
                digest.update(f.read())


def kit_version():
    """A short hash of everything that decides a grade: the grader, the harnesses, headers and make
    rules, the labs' Makefiles, and the instructor's salt (hashed, never stored)."""
    digest = hashlib.sha256()
    hash_tree(digest, os.path.join(paths.KIT_ROOT, "grader"), skip_dirs=("tests", "__pycache__"))
    hash_tree(digest, os.path.join(paths.KIT_ROOT, "common"))
    for lab_name in registry.all_labs():
        with open(paths.lab_makefile(lab_name), "rb") as f:
            digest.update(f.read())
    digest.update(paths.instructor_salt().encode())
    return digest.hexdigest()[:16]


def submission_seed(batch_seed, sub_id):
    """Each submission's own seed, drawn from the batch seed: students get different cases, and any
    one grade can be repeated with grade.py --seed."""
    return int(hashlib.sha256(("%s:%s" % (batch_seed, sub_id)).encode()).hexdigest()[:8], 16) % 10 ** 6


# ---- one submission ----

def _failure_gradescope(message, max_score):
    return {"score": 0, "max_score": max_score, "output": message, "visibility": "visible",
            "stdout_visibility": "visible",
            "tests": [{"name": "submission", "score": 0, "max_score": max_score, "status": "failed",
                       "output": message, "visibility": "visible"}]}


def _feedback_heading(lab, sub_id):
    return "%s: feedback for %s" % (lab.title, sub_id)


def _feedback_meta(record):
    return "Graded with seed %s%s, kit version %s, on %s." % (
        record["seed"], " and the course's private salt" if record["salted"] else "", record["kit_version"],
        record["gpu"])


def _feedback(lab, sub_id, record, text):
    lines = ["# " + _feedback_heading(lab, sub_id), "",
             "**Score: %g / %g** (%s)" % (record["score"], record["max_score"], record["verdict"]), "",
             _feedback_meta(record), "", "```text", text, "```", ""]
    if "report" in record and record["verdict"] != FULL_MARKS:
        lines += ["Each failed check above says what went wrong and which handout section to read.", ""]
    return "\n".join(lines)


def grade_submission(lab, sub, files, batch_seed, version, gpu, timeout, scratch_root, sandboxed=True):
    """Grade one submission (an archives.Submission); return (record, gradescope document, feedback
    text, feedback page). Never raises. files: the submission's fingerprint, kept in the record so that a re-run can
    skip it."""
    sub_id = sub.id
    record = {"id": sub_id, "source": sub.source, "lab": lab.name,
              "seed": submission_seed(batch_seed, sub_id), "batch_seed": batch_seed,
              "kit_version": version, "fingerprint": files,
              "salted": bool(paths.instructor_salt()), "sandboxed": sandboxed,
              "gpu": gpu.name if gpu.available else "no GPU (%s)" % gpu.reason.splitlines()[0],
              "graded_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "checks": {}}
    if sub.canvas_user_id is not None:  # named as Canvas's bulk download names it
        record.update(canvas_user_id=sub.canvas_user_id, late=sub.late)
    max_score = lab.max_score
    scratch = tempfile.mkdtemp(prefix="sub-", dir=scratch_root)
    started = time.monotonic()
    page = None  # the graded report's page; where none was made, the text's
    try:
        lab_dir = build.find_submission_dir(lab.name, sub.open(scratch))
        rep = grade_lab(lab, lab_dir, record["seed"], timeout=timeout, gpu=gpu, sandboxed=sandboxed)
        record.update(verdict=sheets.verdict_of(rep), score=rep.score, max_score=rep.max_score,
                      checks={r.name: r.score for r in rep.results}, report=rep.to_dict(),
                      runtime_not_run=bool(chk.lacked(rep.results)), costs=rep.costs())
        record["report"]["submission"] = record["source"]
        if record["verdict"] == GRADER_ERROR:
            record["problem"] = "\n".join("%s: %s" % (r.name, r.message) for r in rep.results
                                           if r.failure == failures.GRADER_BUG)
        text = report.lab_text(rep).replace(rep.submission_dir_label, record["source"])
        scores = report.gradescope([rep], record["seed"], gpu)
        page = feedback.page_with_figure(rep, _feedback_heading(lab, sub_id), [_feedback_meta(record)],
                                         shown_as=record["source"])
    except BadArchive as err:
        text = "The submission %s could not be graded: %s." % (record["source"], err)
        record.update(verdict=BAD_ARCHIVE, score=0, max_score=max_score, problem=str(err))
        scores = _failure_gradescope(text, max_score)
    except failures.MACHINE_PROBLEMS as err:
        text = "This machine could not grade the submission (not the submission's doing): %s" % err
        record.update(verdict=GRADER_ERROR, score=0, max_score=max_score, problem=text)
        scores = _failure_gradescope(text, max_score)
    except Exception:  # a grader bug must cost one row, never the batch
        text = "The grader failed on this submission (a bug in the grader):\n" + traceback.format_exc(limit=4)
        record.update(verdict=GRADER_ERROR, score=0, max_score=max_score, problem=text)
        scores = _failure_gradescope(text, max_score)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    record["seconds"] = round(time.monotonic() - started, 2)
    if page is None:
        page = feedback.text_page(_feedback_heading(lab, sub_id), [_feedback_meta(record)], text,
                                  (record["score"], record["max_score"]) if record["verdict"] == BAD_ARCHIVE else None)
    return record, scores, _feedback(lab, sub_id, record, text), page


# ---- outputs ---------------------------------------------------------------------------------

def save(out, record, scores, feedback_text, feedback_page):
    """Results first, the record last: a record on disk means the submission is fully written."""
    sub_id = record["id"]
    report.write_json(os.path.join(out, "results", sub_id + ".json"), scores)
    report.write_text(os.path.join(out, "feedback", sub_id + ".md"), feedback_text)
    report.write_text(os.path.join(out, "feedback", sub_id + ".html"), feedback_page)
    report.write_json(os.path.join(out, "records", sub_id + ".json"), record)


def load_records(out):
    records = {}
    folder = os.path.join(out, "records")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".json"):
            try:
                with open(os.path.join(folder, name)) as f:
                    record = json.load(f)
                records[record["id"]] = record
            except (ValueError, KeyError, OSError):
                continue  # a damaged record is graded again
    return records


# ---- the batch -------------------------------------------------------------------------------

def parse_shard(text):
    """'2/4' -> (2, 4): shard 2 of 4, counting from 1."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError("--shard takes I/N, e.g. 2/4")
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError("--shard I/N needs 1 <= I <= N")
    return index, count


def shard_of(items, shard):
    """The items of one shard: every N-th, starting at the I-th, of the sorted list."""
    if shard is None:
        return list(items)
    index, count = shard
    return [item for k, item in enumerate(items) if k % count == index - 1]


EXIT_STATUS_HELP = ("exit status: 0 every submission graded with every check; 1 something could not be graded "
                    "(a refused entry, a grader error, a submission with no record), or merged shards differ in "
                    "seed or kit version; 2 bad usage; 77 runtime checks not run (no GPU): build and static checks "
                    "only; 130 interrupted")


PARTIAL_IMPORTS_HELP = ("write canvas.csv and gradescope.csv even from scores with checks not run (no GPU or no "
                        "compute-sanitizer here); without it they are not written then")


def parse_batch_args(argv):
    p = argparse.ArgumentParser(prog="grade.py batch", description="Grade a folder of submissions of one lab.",
                                epilog=EXIT_STATUS_HELP)
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                   help="one folder, archive (.zip, .tar, .tar.gz, ...) or ID_<lab file> per student")
    p.add_argument("--lab", required=True, metavar="NN", help="the lab: 1, 01 or 01-divergent-counter")
    p.add_argument("--out", metavar="DIR", help="where the sheets go, outside SUBMISSIONS_DIR (default: grading/<lab>/)")
    p.add_argument("--gpus", metavar="LIST", help="the GPUs to grade on, as CUDA_VISIBLE_DEVICES entries: 0,2 "
                   "(default: $KIT_GPUS, else every GPU visible; one that fails the kit's probe is left out)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="J",
                   help="parallel builds (default: one per core, %(default)s here)")
    p.add_argument("--timeout", type=float, metavar="SEC",
                   help="time limit in seconds for each test case (default: 6 s, the lab's own time_limit "
                        "for its timing cases and those that need much GPU memory, and at least 20 s while "
                        "other runs share the GPU)")
    p.add_argument("--regrade", action="store_true", help="grade again what is already graded")
    p.add_argument("--seed", type=int, help="batch seed (default: the one this --out already used, else fresh)")
    p.add_argument("--partial-imports", action="store_true", help=PARTIAL_IMPORTS_HELP)
    p.add_argument("--shard", type=parse_shard, metavar="I/N", help="grade only shard I of N (1 <= I <= N)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="build and run submissions without the sandbox: only where none can be made, for code you "
                        "trust (grader/README.md, \"Trust the result\")")
    p.add_argument("--roster", metavar="FILE", help="CSV mapping submission ids to students for canvas.csv and "
                   "gradescope.csv (columns: %s; id required)" % ",".join(sheets.ROSTER_COLUMNS))
    return p.parse_args(argv)


class UsageError(Exception):
    """A bad command line or --out folder: its message is printed, and the exit status is 2."""


def _inside(path, folder):
    """Whether path is folder or lies inside it (links resolved)."""
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _open_batch(args, lab):
    """The --out folder, made, and the batch seed: given, else the one this folder already used,
    else fresh. UsageError when the folder lies inside the class folder (its records would be graded
    as a student's) or holds another lab's batch."""
    out = os.path.abspath(args.out or os.path.join("grading", lab.name))
    if _inside(out, args.submissions):
        raise UsageError("the out folder %s is inside the class folder %s, where it would be graded as a "
                         "submission; give --out a folder outside it" % (out, os.path.abspath(args.submissions)))
    os.makedirs(out, exist_ok=True)
    previous = {}
    meta_path = os.path.join(out, "batch.json")
    if os.path.isfile(meta_path):
        with open(meta_path) as f:
            previous = json.load(f)
    if previous and previous.get("lab") != lab.name:
        raise UsageError("%s holds a batch of %s; use another --out" % (out, previous.get("lab")))
    seed = args.seed if args.seed is not None else previous.get("seed") or random.SystemRandom().randrange(1, 10 ** 6)
    return out, seed


def _read_roster(path):
    """The roster (sheets.read_roster) or None; UsageError for a roster that cannot be used."""
    if path is None:
        return None
    try:
        return sheets.read_roster(path)
    except sheets.RosterError as err:
        raise UsageError(str(err))


def _to_grade(mine, records, batch_seed, version, regrade, sandboxed=True):
    """[(submission, fingerprint)] of the submissions that need grading: all with regrade, else those
    whose record is missing or was made with another kit version, seed or files, or without the sandbox
    when this batch has it, or that were not graded (a grader error)."""
    todo = []
    for sub in mine:
        old = records.get(sub.id) or {}
        files = sub.fingerprint()
        if (not regrade and old.get("kit_version") == version and old.get("fingerprint") == files
                and old.get("seed") == submission_seed(batch_seed, sub.id)
                and (old.get("sandboxed") or not sandboxed) and old.get("verdict") != GRADER_ERROR):
            continue
        todo.append((sub, files))
    return todo


GRADE_AGAIN_AFTER_S = 5  # a grader error's second attempt: the machine's trouble of a moment has passed


def _grade_on_a_gpu(gpus, lab, sub, files, batch_seed, version, timeout, scratch_root, sandboxed):
    """grade_submission on the GPU of gpus (a gpu.GpuPool) that has the fewest submissions of this
    batch on it; a grader error once more, GRADE_AGAIN_AFTER_S later, its record keeping the first
    attempt's problem."""
    with gpus.checkout() as picked:
        graded = grade_submission(lab, sub, files, batch_seed, version, picked, timeout, scratch_root, sandboxed)
        if graded[0]["verdict"] != GRADER_ERROR:
            return graded
        first = graded[0]["problem"]
        time.sleep(GRADE_AGAIN_AFTER_S)
        graded = grade_submission(lab, sub, files, batch_seed, version, picked, timeout, scratch_root, sandboxed)
        graded[0]["first_attempt"] = first
        return graded


def _grade_all(lab, todo, out, records, batch_seed, version, gpus, args, progress):
    """Grade todo, args.jobs submissions at a time (their harness runs share the GPU or hold it alone
    through gradelib.gpushare), saving each record as it finishes (into records too). Returns True when interrupted (Ctrl-C). When the
    output is gone (a closed pipe), stops as for Ctrl-C and lets the BrokenPipeError through."""
    scratch_root = tempfile.mkdtemp(prefix="batch-", dir=out)
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    futures = {}
    interrupted = False
    try:
        futures = {pool.submit(_grade_on_a_gpu, gpus, lab, sub, files, batch_seed, version, args.timeout,
                               scratch_root, args.sandboxed): sub.id for sub, files in todo}
        for future in as_completed(futures):
            record, scores, feedback_text, feedback_page = future.result()
            save(out, record, scores, feedback_text, feedback_page)
            records[record["id"]] = record
            progress(record)
    except (KeyboardInterrupt, BrokenPipeError) as err:
        interrupted = True
        for future in futures:
            future.cancel()
        if isinstance(err, BrokenPipeError):
            raise
        print("\ninterrupted: what is graded is kept; run the same command again to go on", file=sys.stderr)
    finally:
        pool.shutdown(wait=not interrupted)
        shutil.rmtree(scratch_root, ignore_errors=True)
    return interrupted


class _Progress:
    """One line per finished submission, on stderr: done/total, failures so far, time left."""

    def __init__(self, total, already_done):
        self.total = total
        self.done = already_done
        self.graded_now = 0
        self.failures = 0
        self.started = time.monotonic()

    def __call__(self, record):
        self.done += 1
        self.graded_now += 1
        if not sheets.scored(record["verdict"]):
            self.failures += 1  # did not build, run or unpack
        elapsed = self.seconds()
        left = ""
        if self.done < self.total:
            left = ", about %s left" % sheets.clock(elapsed / self.graded_now * (self.total - self.done))
        print("[%d/%d] %s: %g/%g %s | so far %s did not build, run or unpack | %s elapsed%s" % (
            self.done, self.total, record["id"], record["score"], record["max_score"], record["verdict"],
            report.plural(self.failures, "submission"), sheets.clock(elapsed), left), file=sys.stderr, flush=True)

    def seconds(self):
        return time.monotonic() - self.started


def batch_status(records, expected_ids, refused=(), interrupted=False):
    """The exit status of a batch or a merge, decided in the order of grade.py's exit_status: a failure
    first (here: something could not be graded: a refused entry, a grader error, an expected submission
    with no record), then runtime checks not run for want of a GPU (exits.NOT_RUN: no pass), else
    exits.OK. INTERRUPTED before all: the batch did not finish."""
    if interrupted:
        return INTERRUPTED
    graded = [records[i] for i in expected_ids if i in records]
    if refused or len(graded) < len(set(expected_ids)) or any(r["verdict"] == GRADER_ERROR for r in graded):
        return exits.FAILED
    if any(sheets.runtime_not_run(r) for r in graded):
        return exits.NOT_RUN
    return exits.OK


STATUS_LINES = {
    exits.FAILED: "exit status 1: some of the class folder could not be graded (see REFUSED, NOT GRADED and "
                  "grader error above)",
    exits.NOT_RUN: "exit status 77: checks were NOT RUN for what this machine lacks (a GPU, or compute-sanitizer): "
                   "these scores leave them out; grade on a machine that has them",
}


def _print_refusals(refused):
    if refused:
        print("refused, not graded (%d):" % len(refused))
        for name, reason in refused:
            print("  %s: %s" % (name, reason))


def run_batch(argv):
    try:
        args = parse_batch_args(argv)
        lab = registry.resolve(args.lab)
        if not os.path.isdir(args.submissions):
            raise UsageError("no such folder: %s" % args.submissions)
        if args.jobs < 1 or (args.timeout is not None and args.timeout <= 0):
            raise UsageError("--jobs and --timeout must be positive")
        roster = _read_roster(args.roster)
        out, batch_seed = _open_batch(args, lab)
    except (KeyError, UsageError) as err:
        print("grade.py batch: %s" % err.args[0], file=sys.stderr)
        return exits.USAGE
    problem = build.toolkit_problem()
    if problem:
        print("grade.py batch: %s" % problem)
        return exits.USAGE

    args.sandboxed, sandbox_line = sandbox_choice(args.no_sandbox, "grade.py batch")
    folder = scan_class(args.submissions, build.lab_vars(lab.name)["student_files"])
    everything = folder.submissions
    mine = shard_of(everything, args.shard)
    version = kit_version()
    shard = "%d/%d" % args.shard if args.shard else None
    report.write_json(os.path.join(out, "batch.json"), {
        "lab": lab.name, "seed": batch_seed, "kit_version": version, "shard": shard,
        "all_ids": [s.id for s in everything], "ids": [s.id for s in mine],
        "refused": folder.refused, "ignored": folder.ignored,
        "submissions": os.path.abspath(args.submissions), "sandboxed": args.sandboxed})

    gpus, gpu_lines = gpu_mod.GpuPool.probed(args.sandboxed, args.gpus, need=args.jobs)
    gpu = gpus.shown
    print("%s: %d submissions%s in %s, batch seed %d%s, kit version %s" % (
        lab.title, len(mine), " (shard %s of %d in all)" % (shard, len(everything)) if shard else "",
        args.submissions, batch_seed, " with the instructor's salt" if paths.instructor_salt() else "", version))
    _print_refusals(folder.refused)
    print(sandbox_line)
    if not gpu.available:
        gpu_lines.insert(0, "GPU: none: runtime checks will NOT run (%s)" % gpu.reason.splitlines()[0])
    print("\n".join(gpu_lines), flush=True)

    records = load_records(out)
    todo = _to_grade(mine, records, batch_seed, version, args.regrade, args.sandboxed)
    if len(mine) > len(todo):
        print("%d already graded with this kit version, seed and files (--regrade grades them again)"
              % (len(mine) - len(todo)))
    progress = _Progress(len(mine), len(mine) - len(todo))
    interrupted = _grade_all(lab, todo, out, records, batch_seed, version, gpus, args, progress)

    mine_ids = [s.id for s in mine]
    mine_records = {i: records[i] for i in mine_ids if i in records}
    text = sheets.write_sheets(out, lab, mine_records, mine_ids, progress.seconds(), progress.graded_now,
                               refused=folder.refused, roster=roster, partial_imports=args.partial_imports)
    print()
    print(text, end="")
    print("wrote %s (%s, feedback/, results/, records/)" % (paths.relative(out), ", ".join(
        n for n in ("scores.csv", sheets.CANVAS_FILE, sheets.GRADESCOPE_FILE, "summary.txt")
        if os.path.exists(os.path.join(out, n)))))
    status = batch_status(mine_records, mine_ids, folder.refused, interrupted)
    print_status_lines(status, mine_records)
    return status


def print_status_lines(status, records):
    """The exit status's line, and the NOT RUN line beside a failure too: both are true at once."""
    if status in STATUS_LINES:
        print(STATUS_LINES[status])
    if status == exits.FAILED and any(sheets.runtime_not_run(r) for r in records.values()):
        print(STATUS_LINES[exits.NOT_RUN].replace("exit status 77: ", "and "))


# ---- merging shards --------------------------------------------------------------------------

def run_merge(argv):
    p = argparse.ArgumentParser(prog="grade.py merge", epilog=EXIT_STATUS_HELP,
                                description="Merge the --out folders of batch shards into one score sheet.")
    p.add_argument("shards", nargs="+", metavar="SHARD_OUT_DIR")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--roster", metavar="FILE", help="CSV mapping submission ids to students (as for batch)")
    p.add_argument("--partial-imports", action="store_true", help=PARTIAL_IMPORTS_HELP)
    args = p.parse_args(argv)
    try:
        roster = _read_roster(args.roster)
    except UsageError as err:
        print("grade.py merge: %s" % err, file=sys.stderr)
        return exits.USAGE
    metas, records = [], {}
    for shard_dir in args.shards:
        meta_path = os.path.join(shard_dir, "batch.json")
        if not os.path.isfile(meta_path):
            print("grade.py merge: %s has no batch.json (not a batch --out folder)" % shard_dir, file=sys.stderr)
            return exits.USAGE
        with open(meta_path) as f:
            metas.append(json.load(f))
        for sub_id, record in load_records(shard_dir).items():
            kept = records.get(sub_id)
            if kept is None or record["graded_at"] >= kept[0]["graded_at"]:
                records[sub_id] = (record, shard_dir)
    labs = {m["lab"] for m in metas}
    if len(labs) != 1:
        print("grade.py merge: the shards grade different labs: %s" % ", ".join(sorted(labs)), file=sys.stderr)
        return exits.USAGE
    lab = registry.resolve(labs.pop())
    differ = []  # said in summary.txt, on the last line and in the exit status, not only at the top
    for key in ("seed", "kit_version"):
        values = {m[key] for m in metas}
        if len(values) > 1:
            differ.append("NOT COMPARABLE: the shards differ in %s (%s): grade them again with one %s"
                          % (key, ", ".join(str(v) for v in sorted(values, key=str)), key.replace("_", " ")))
    out = os.path.abspath(args.out)
    expected = sorted({i for m in metas for i in m["all_ids"]})
    refused = sorted({tuple(r) for m in metas for r in m.get("refused", [])})
    for sub_id, (record, shard_dir) in records.items():
        for folder, suffix in (("results", ".json"), ("feedback", ".md"), ("feedback", ".html"), ("records", ".json")):
            source = os.path.join(shard_dir, folder, sub_id + suffix)
            target = os.path.join(out, folder, sub_id + suffix)
            if os.path.abspath(source) != os.path.abspath(target) and os.path.exists(source):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(source, target)
    merged = {sub_id: rec for sub_id, (rec, _) in records.items()}
    report.write_json(os.path.join(out, "batch.json"), {
        "lab": lab.name, "seed": metas[0]["seed"], "kit_version": metas[0]["kit_version"], "shard": None,
        "all_ids": expected, "ids": expected, "refused": refused,
        "merged_from": [os.path.abspath(d) for d in args.shards]})
    text = sheets.write_sheets(out, lab, merged, expected, refused=refused, roster=roster, notes=differ,
                               partial_imports=args.partial_imports)
    print(text, end="")
    print("wrote %s from %s" % (paths.relative(out), report.plural(len(args.shards), "shard folder")))
    status = batch_status(merged, expected, refused)
    print_status_lines(status, merged)
    for line in differ:
        print(line)
    return exits.FAILED if differ else status
