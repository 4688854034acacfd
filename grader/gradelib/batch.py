"""Grade a whole class: every submission gets a row, whatever happened to it.

  grade.py batch SUBMISSIONS_DIR --lab NN [--out DIR] [--jobs J] [--timeout SEC] [--regrade]
                 [--seed S] [--shard I/N]
  grade.py merge SHARD_OUT_DIR... --out DIR

A submission is a folder or a .zip/.tar.gz/.tgz archive in SUBMISSIONS_DIR; its name (without the
archive suffix) is its id. Archives are unpacked with caps and without links or paths leading out; the lab's files may sit
in a folder or two inside (build.find_submission_dir).
Builds and static checks run in parallel (--jobs, default one per core); runtime checks run one
submission at a time, so timing checks see an idle GPU.

Written under --out (default: grading/<lab>/):
  records/<id>.json   everything the grader found, plus what makes a re-run skip it
  results/<id>.json   Gradescope's results.json for the submission
  feedback/<id>.md    what the student reads
  scores.csv          one row per submission, a column per check, the total
  summary.txt         score distribution, verdicts, most-failed checks (also printed)
  batch.json          the batch's lab, seed, kit version, shard and the ids it covers
Records are written as each submission finishes, so an interrupted batch loses nothing already
graded; a re-run skips a submission graded with the same kit version, seed and files unless
--regrade.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed

from . import build, paths, report, sheets
from . import gpu as gpu_mod
from . import registry
from .archives import BadArchive, find_submissions, fingerprint, unpack
from .grading import DEFAULT_TIMEOUT, grade_lab
from .sheets import BAD_ARCHIVE, FULL_MARKS, GRADER_ERROR, NOT_RUN_NO_GPU, POINTS_LOST

# ---- what makes a re-run skip a submission ---------------------------------------------------

def _hash_tree(digest, top, skip_dirs=()):
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
    _hash_tree(digest, os.path.join(paths.KIT_ROOT, "grader"), skip_dirs=("tests", "__pycache__"))
    _hash_tree(digest, os.path.join(paths.KIT_ROOT, "common"))
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

# Host-side constructs a lab's device code has no use for; the sheet lists them for a person to
# read. They change no score: an instructor decides.
REVIEW_PATTERNS = [
    ("runs before main", re.compile(r"__attribute__\s*\(\(\s*constructor")),
    ("reads /proc", re.compile(r"/proc/")),
    ("touches descriptors", re.compile(r"\b(dprintf|fdopen|dup2?|close)\s*\(")),
    ("opens files", re.compile(r"\b(fopen|open|creat)\s*\(")),
    ("exits", re.compile(r"\b(_?exit|abort|quick_exit)\s*\(")),
    ("starts processes", re.compile(r"\b(fork|system|popen|exec[lv]p?e?)\s*\(")),
    ("mentions the nonce", re.compile(r"nonce", re.IGNORECASE)),
]


def review_flags(lab_dir, lab_name):
    """What in the student's files an instructor may want to read (REVIEW_PATTERNS)."""
    found = []
    for name in build.lab_vars(lab_name)["student_files"]:
        path = os.path.join(lab_dir, name)
        if not os.path.isfile(path) or os.path.islink(path) or os.path.getsize(path) > build.MAX_STUDENT_FILE_BYTES:
            continue
        with open(path, errors="replace") as f:
            text = f.read()
        found += [label for label, pattern in REVIEW_PATTERNS if pattern.search(text) and label not in found]
    return found


def _failure_gradescope(message, max_score):
    return {"score": 0, "max_score": max_score, "output": message, "visibility": "visible",
            "stdout_visibility": "visible",
            "tests": [{"name": "submission", "score": 0, "max_score": max_score, "status": "failed",
                       "output": message, "visibility": "visible"}]}


def _feedback(lab, sub_id, record, text):
    lines = ["# %s: feedback for %s" % (lab.title, sub_id), "",
             "**Score: %g / %g** (%s)" % (record["score"], record["max_score"], record["verdict"]), "",
             "Graded with seed %s%s, kit version %s, on %s." % (
                 record["seed"], " and the course's private salt" if record["salted"] else "",
                 record["kit_version"], record["gpu"]), "",
             "```text", text, "```", ""]
    if "report" in record and record["verdict"] != FULL_MARKS:
        lines += ["Each failed check above says what went wrong and which handout section to read.", ""]
    return "\n".join(lines)


def grade_submission(lab, sub_id, path, files, batch_seed, version, gpu, timeout, runtime_lock, scratch_root):
    """Grade one submission; return (record, gradescope document, feedback text). Never raises.
    files: the submission's fingerprint, kept in the record so that a re-run can skip it."""
    record = {"id": sub_id, "source": os.path.basename(path), "lab": lab.name,
              "seed": submission_seed(batch_seed, sub_id), "batch_seed": batch_seed,
              "kit_version": version, "fingerprint": files,
              "salted": bool(paths.instructor_salt()),
              "gpu": gpu.name if gpu.available else "no GPU (%s)" % gpu.reason.splitlines()[0],
              "graded_at": time.strftime("%Y-%m-%dT%H:%M:%S"), "checks": {}}
    max_score = lab.max_score
    scratch = tempfile.mkdtemp(prefix="sub-", dir=scratch_root)
    started = time.monotonic()
    try:
        root = path
        if os.path.isfile(path):
            root = os.path.join(scratch, "unpacked")
            unpack(path, root)
        lab_dir = build.find_submission_dir(lab.name, root)
        record["review"] = review_flags(lab_dir, lab.name)
        rep = grade_lab(lab, lab_dir, record["seed"], timeout=timeout, gpu=gpu, runtime_lock=runtime_lock)
        record.update(verdict=sheets.verdict_of(rep), score=rep.score, max_score=rep.max_score,
                      checks={r.name: r.score for r in rep.results}, report=rep.to_dict())
        record["report"]["submission"] = record["source"]
        text = report.lab_text(rep).replace(rep.submission_dir_label, record["source"])
        scores = report.gradescope([rep], record["seed"], gpu)
    except BadArchive as err:
        text = "The submission %s could not be graded: the archive %s." % (record["source"], err)
        record.update(verdict=BAD_ARCHIVE, score=0, max_score=max_score, problem=str(err))
        scores = _failure_gradescope(text, max_score)
    except Exception:  # a grader bug must cost one row, never the batch
        text = "The grader failed on this submission (a bug in the grader):\n" + traceback.format_exc(limit=4)
        record.update(verdict=GRADER_ERROR, score=0, max_score=max_score, problem=text)
        scores = _failure_gradescope(text, max_score)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    record["seconds"] = round(time.monotonic() - started, 2)
    return record, scores, _feedback(lab, sub_id, record, text)


# ---- outputs ---------------------------------------------------------------------------------

def save(out, record, scores, feedback):
    """Results first, the record last: a record on disk means the submission is fully written."""
    sub_id = record["id"]
    report.write_json(os.path.join(out, "results", sub_id + ".json"), scores)
    report.write_text(os.path.join(out, "feedback", sub_id + ".md"), feedback)
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


def parse_batch_args(argv):
    p = argparse.ArgumentParser(prog="grade.py batch", description="Grade a folder of submissions of one lab.")
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR", help="one folder or .zip/.tar.gz per student")
    p.add_argument("--lab", required=True, metavar="NN", help="the lab: 1, 01 or 01-divergent-counter")
    p.add_argument("--out", metavar="DIR", help="where the sheets go (default: grading/<lab>/)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="J",
                   help="parallel builds (default: one per core, %(default)s here)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SEC",
                   help="time limit for each harness run (default %(default)s)")
    p.add_argument("--regrade", action="store_true", help="grade again what is already graded")
    p.add_argument("--seed", type=int, help="batch seed (default: the one this --out already used, else fresh)")
    p.add_argument("--shard", type=parse_shard, metavar="I/N", help="grade only shard I of N (1 <= I <= N)")
    return p.parse_args(argv)


class UsageError(Exception):
    """A bad command line or --out folder: its message is printed, and the exit status is 2."""


def _open_batch(args, lab):
    """The --out folder, made, and the batch seed: given, else the one this folder already used,
    else fresh. UsageError when the folder holds another lab's batch."""
    out = os.path.abspath(args.out or os.path.join("grading", lab.name))
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


def _to_grade(mine, records, batch_seed, version, regrade):
    """[(id, path, fingerprint)] of the submissions that need grading: all with regrade, else those
    whose record is missing or was made with another kit version, seed or files."""
    todo = []
    for sub_id, path in mine:
        old = records.get(sub_id) or {}
        files = fingerprint(path)
        if (not regrade and old.get("kit_version") == version and old.get("fingerprint") == files
                and old.get("seed") == submission_seed(batch_seed, sub_id)):
            continue
        todo.append((sub_id, path, files))
    return todo


def _grade_all(lab, todo, out, records, batch_seed, version, gpu, args, progress):
    """Grade todo, builds in parallel (args.jobs) and runtime checks one submission at a time, saving
    each record as it finishes (into records too). Returns True when interrupted (Ctrl-C)."""
    scratch_root = tempfile.mkdtemp(prefix="batch-", dir=out)
    lock = threading.Lock()
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    futures = {}
    interrupted = False
    try:
        futures = {pool.submit(grade_submission, lab, sub_id, path, files, batch_seed, version, gpu, args.timeout,
                               lock, scratch_root): sub_id for sub_id, path, files in todo}
        for future in as_completed(futures):
            record, scores, feedback = future.result()
            save(out, record, scores, feedback)
            records[record["id"]] = record
            progress(record)
    except KeyboardInterrupt:
        interrupted = True
        for future in futures:
            future.cancel()
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
        if record["verdict"] not in (FULL_MARKS, POINTS_LOST, NOT_RUN_NO_GPU):
            self.failures += 1  # did not build, run or unpack
        elapsed = self.seconds()
        left = ""
        if self.done < self.total:
            left = ", about %s left" % sheets.clock(elapsed / self.graded_now * (self.total - self.done))
        print("[%d/%d] %s: %g/%g %s | %d failures | %s elapsed%s" % (
            self.done, self.total, record["id"], record["score"], record["max_score"], record["verdict"],
            self.failures, sheets.clock(elapsed), left), file=sys.stderr, flush=True)

    def seconds(self):
        return time.monotonic() - self.started


def run_batch(argv):
    try:
        args = parse_batch_args(argv)
        lab = registry.resolve(args.lab)
        if not os.path.isdir(args.submissions):
            raise UsageError("no such folder: %s" % args.submissions)
        if args.jobs < 1 or args.timeout <= 0:
            raise UsageError("--jobs and --timeout must be positive")
        out, batch_seed = _open_batch(args, lab)
    except (KeyError, UsageError) as err:
        print("grade.py batch: %s" % err.args[0], file=sys.stderr)
        return 2

    everything = find_submissions(args.submissions)
    mine = shard_of(everything, args.shard)
    version = kit_version()
    shard = "%d/%d" % args.shard if args.shard else None
    report.write_json(os.path.join(out, "batch.json"), {
        "lab": lab.name, "seed": batch_seed, "kit_version": version, "shard": shard,
        "all_ids": [i for i, _ in everything], "ids": [i for i, _ in mine],
        "submissions": os.path.abspath(args.submissions)})

    gpu = gpu_mod.detect()
    print("%s: %d submissions%s in %s, batch seed %d%s, kit version %s" % (
        lab.title, len(mine), " (shard %s of %d in all)" % (shard, len(everything)) if shard else "",
        args.submissions, batch_seed, " with the instructor's salt" if paths.instructor_salt() else "", version))
    print("GPU: %s" % (gpu.name if gpu.available else "none: runtime checks will NOT run (%s)"
                       % gpu.reason.splitlines()[0]), flush=True)

    records = load_records(out)
    todo = _to_grade(mine, records, batch_seed, version, args.regrade)
    if len(mine) > len(todo):
        print("%d already graded with this kit version, seed and files (--regrade grades them again)"
              % (len(mine) - len(todo)))
    progress = _Progress(len(mine), len(mine) - len(todo))
    interrupted = _grade_all(lab, todo, out, records, batch_seed, version, gpu, args, progress)

    mine_ids = [i for i, _ in mine]
    mine_records = {i: records[i] for i in mine_ids if i in records}
    text = sheets.write_sheets(out, lab, mine_records, mine_ids, progress.seconds(), progress.graded_now)
    print()
    print(text, end="")
    print("wrote %s (scores.csv, summary.txt, feedback/, results/, records/)" % paths.relative(out))
    if interrupted:
        return 130
    return 0 if len(mine_records) == len(mine_ids) else 1


# ---- merging shards --------------------------------------------------------------------------

def run_merge(argv):
    p = argparse.ArgumentParser(prog="grade.py merge",
                                description="Merge the --out folders of batch shards into one score sheet.")
    p.add_argument("shards", nargs="+", metavar="SHARD_OUT_DIR")
    p.add_argument("--out", required=True, metavar="DIR")
    args = p.parse_args(argv)
    metas, records = [], {}
    for shard_dir in args.shards:
        meta_path = os.path.join(shard_dir, "batch.json")
        if not os.path.isfile(meta_path):
            print("grade.py merge: %s has no batch.json (not a batch --out folder)" % shard_dir, file=sys.stderr)
            return 2
        with open(meta_path) as f:
            metas.append(json.load(f))
        for sub_id, record in load_records(shard_dir).items():
            kept = records.get(sub_id)
            if kept is None or record["graded_at"] >= kept[0]["graded_at"]:
                records[sub_id] = (record, shard_dir)
    labs = {m["lab"] for m in metas}
    if len(labs) != 1:
        print("grade.py merge: the shards grade different labs: %s" % ", ".join(sorted(labs)), file=sys.stderr)
        return 2
    lab = registry.resolve(labs.pop())
    for key in ("seed", "kit_version"):
        values = {m[key] for m in metas}
        if len(values) > 1:
            print("warning: the shards differ in %s (%s): their grades are not comparable"
                  % (key, ", ".join(str(v) for v in sorted(values, key=str))), file=sys.stderr)
    out = os.path.abspath(args.out)
    expected = sorted({i for m in metas for i in m["all_ids"]})
    for sub_id, (record, shard_dir) in records.items():
        for folder, suffix in (("results", ".json"), ("feedback", ".md"), ("records", ".json")):
            source = os.path.join(shard_dir, folder, sub_id + suffix)
            target = os.path.join(out, folder, sub_id + suffix)
            if os.path.abspath(source) != os.path.abspath(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(source, target)
    merged = {sub_id: rec for sub_id, (rec, _) in records.items()}
    report.write_json(os.path.join(out, "batch.json"), {
        "lab": lab.name, "seed": metas[0]["seed"], "kit_version": metas[0]["kit_version"], "shard": None,
        "all_ids": expected, "ids": expected, "merged_from": [os.path.abspath(d) for d in args.shards]})
    text = sheets.write_sheets(out, lab, merged, expected)
    print(text, end="")
    print("wrote %s from %d shard folders" % (paths.relative(out), len(args.shards)))
    return 0 if set(expected) <= set(merged) else 1
