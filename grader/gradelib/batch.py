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
import csv
import hashlib
import io
import json
import os
import random
import re
import shutil
import stat
import sys
import tarfile
import tempfile
import threading
import time
import traceback
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed

from . import build, paths, process, report
from . import checks as chk
from . import gpu as gpu_mod
from . import labs as lab_registry
from .grading import DEFAULT_TIMEOUT, all_checks, grade_lab

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")
MAX_ARCHIVE_MEMBERS = 2000
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024  # unpacked; a lab submission is a few KiB

FULL_MARKS = "full marks"
POINTS_LOST = "points lost"
NOT_RUN_NO_GPU = "runtime not run (no GPU)"
BAD_ARCHIVE = "bad archive"
GRADER_ERROR = "grader error"


class BadArchive(Exception):
    pass


# ---- finding and unpacking submissions -------------------------------------------------------

def submission_id(entry_name):
    for suffix in ARCHIVE_SUFFIXES:
        if entry_name.lower().endswith(suffix):
            return entry_name[: -len(suffix)]
    return entry_name


def find_submissions(root):
    """[(id, path)] sorted by id: every folder and archive in root. When a folder and an archive
    would share an id, the archive keeps its full file name as its id."""
    found = {}
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name.startswith(".") or os.path.islink(path):
            continue
        is_archive = os.path.isfile(path) and name.lower().endswith(ARCHIVE_SUFFIXES)
        if not (os.path.isdir(path) or is_archive):
            continue
        sub_id = submission_id(name) if is_archive else name
        if sub_id in found:
            sub_id = name
        found[sub_id] = path
    return sorted(found.items())


def _safe_member_path(dest, name):
    """Where an archive member may go, or BadArchive: no absolute paths, no '..', nothing outside dest."""
    normalized = name.replace("\\", "/")
    parts = [p for p in normalized.split("/") if p not in ("", ".")]
    if normalized.startswith("/") or ".." in parts or not parts:
        raise BadArchive("member %r points outside the submission" % name)
    target = os.path.realpath(os.path.join(dest, *parts))
    if not target.startswith(os.path.realpath(dest) + os.sep):
        raise BadArchive("member %r points outside the submission" % name)
    return target


class _Budget:
    """Counts members and unpacked bytes against the caps."""

    def __init__(self):
        self.members = 0
        self.bytes = 0

    def member(self):
        self.members += 1
        if self.members > MAX_ARCHIVE_MEMBERS:
            raise BadArchive("more than %d files" % MAX_ARCHIVE_MEMBERS)

    def add(self, n):
        self.bytes += n
        if self.bytes > MAX_ARCHIVE_BYTES:
            raise BadArchive("more than %d MiB unpacked" % (MAX_ARCHIVE_BYTES // (1024 * 1024)))


def _copy_capped(source, target, budget):
    with open(target, "wb") as out:
        while True:
            chunk = source.read(65536)
            if not chunk:
                break
            budget.add(len(chunk))  # counts what really comes out, not what the header claims
            out.write(chunk)


def unpack(archive, dest):
    """Unpack a .zip or .tar.gz into dest: regular files and folders only, within the caps."""
    budget = _Budget()
    os.makedirs(dest, exist_ok=True)
    try:
        if archive.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    budget.member()
                    target = _safe_member_path(dest, info.filename)
                    mode = info.external_attr >> 16
                    if stat.S_ISLNK(mode):
                        raise BadArchive("member %r is a link" % info.filename)
                    if info.filename.endswith("/"):
                        os.makedirs(target, exist_ok=True)
                        continue
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with z.open(info) as source:
                        _copy_capped(source, target, budget)
        else:
            with tarfile.open(archive, "r:*") as t:
                for member in t:
                    budget.member()
                    target = _safe_member_path(dest, member.name)
                    if member.isdir():
                        os.makedirs(target, exist_ok=True)
                    elif member.isfile():
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        _copy_capped(t.extractfile(member), target, budget)
                    else:
                        raise BadArchive("member %r is a link or a device, not a file" % member.name)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, RuntimeError) as err:
        raise BadArchive("cannot be unpacked: %s" % err)


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
    for lab_name in lab_registry.all_labs():
        with open(paths.lab_makefile(lab_name), "rb") as f:
            digest.update(f.read())
    digest.update(paths.instructor_salt().encode())
    return digest.hexdigest()[:16]


def fingerprint(path):
    """A hash of what was submitted: the archive's bytes, or every file of the folder."""
    digest = hashlib.sha256()
    if os.path.isfile(path):
        with open(path, "rb") as f:
            digest.update(f.read())
    else:
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(folder, name)
                digest.update(os.path.relpath(full, path).encode())
                if os.path.isfile(full) and not os.path.islink(full):
                    with open(full, "rb") as f:
                        digest.update(f.read())
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


def verdict_of(rep):
    """One short phrase for the score sheet: what happened to the submission."""
    by_name = {r.name: r for r in rep.results}
    built = by_name[lab_registry.COMPILES]
    if built.status == chk.FAILED:
        if "missing file" in built.message:
            return "missing file"
        if "symbolic link" in built.message or "larger than" in built.message:
            return "refused file"
        return "compile error"
    ran = by_name[lab_registry.RUNS_CLEANLY]
    if ran.status == chk.FAILED:
        bad = [r for r in rep.runs if r.problem]
        kinds = [r.result.verdict for r in bad]
        if process.TIMEOUT in kinds:
            return "timeout"
        if process.CRASHED in kinds:
            return "crash"
        if process.FLOOD in kinds:
            return "output flood"
        if any(r.problem.startswith("CUDA error") for r in bad):
            return "CUDA error"
        if any("device-side launch" in r.problem or "device runtime call" in r.problem for r in bad):
            return "failed device launches"
        if any("without a valid result" in r.problem for r in bad):
            return "no valid result"
        return "runs not clean"
    lost = any(r.score < r.check.points and not r.no_gpu for r in rep.results)
    if lost:
        return POINTS_LOST
    if any(r.no_gpu for r in rep.results):
        return NOT_RUN_NO_GPU
    return FULL_MARKS


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
    max_score = sum(c.points for c in all_checks(lab))
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
        record.update(verdict=verdict_of(rep), score=rep.score, max_score=rep.max_score,
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


def scores_csv(lab, records, expected_ids):
    """The score sheet: a row for every expected id (graded or not), a column per check."""
    names = [c.name for c in all_checks(lab)]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["id", "verdict", "score", "max_score"] + names + ["review"])
    max_score = sum(c.points for c in all_checks(lab))
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
                     % (graded_now, _clock(seconds), seconds / graded_now))
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


def _clock(seconds):
    seconds = int(round(seconds))
    return "%d:%02d" % (seconds // 60, seconds % 60) if seconds < 3600 else \
        "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


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


def _progress(done, total, failures, started, graded_now, line):
    """One line per finished submission, on stderr: done/total, failures so far, time left."""
    elapsed = time.monotonic() - started
    left = ""
    if graded_now and done < total:
        left = ", about %s left" % _clock(elapsed / graded_now * (total - done))
    print("[%d/%d] %s | %d failures | %s elapsed%s" % (done, total, line, failures, _clock(elapsed), left),
          file=sys.stderr, flush=True)


def run_batch(argv):
    try:
        args = parse_batch_args(argv)
        lab = lab_registry.resolve(args.lab)
    except KeyError as err:
        print("grade.py batch: %s" % err.args[0], file=sys.stderr)
        return 2
    if not os.path.isdir(args.submissions):
        print("grade.py batch: no such folder: %s" % args.submissions, file=sys.stderr)
        return 2
    if args.jobs < 1 or args.timeout <= 0:
        print("grade.py batch: --jobs and --timeout must be positive", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out or os.path.join("grading", lab.name))
    os.makedirs(out, exist_ok=True)
    meta_path = os.path.join(out, "batch.json")
    previous = {}
    if os.path.isfile(meta_path):
        with open(meta_path) as f:
            previous = json.load(f)
    if previous and previous.get("lab") != lab.name:
        print("grade.py batch: %s holds a batch of %s; use another --out" % (out, previous.get("lab")),
              file=sys.stderr)
        return 2
    batch_seed = args.seed if args.seed is not None else previous.get("seed") or \
        random.SystemRandom().randrange(1, 10 ** 6)

    everything = find_submissions(args.submissions)
    mine = shard_of(everything, args.shard)
    version = kit_version()
    meta = {"lab": lab.name, "seed": batch_seed, "kit_version": version,
            "shard": "%d/%d" % args.shard if args.shard else None,
            "all_ids": [i for i, _ in everything], "ids": [i for i, _ in mine],
            "submissions": os.path.abspath(args.submissions)}
    report.write_json(meta_path, meta)

    gpu = gpu_mod.detect()
    print("%s: %d submissions%s in %s, batch seed %d%s, kit version %s" % (
        lab.title, len(mine), " (shard %s of %d in all)" % (meta["shard"], len(everything)) if args.shard else "",
        args.submissions, batch_seed, " with the instructor's salt" if paths.instructor_salt() else "", version))
    print("GPU: %s" % (gpu.name if gpu.available else "none: runtime checks will NOT run (%s)"
                       % gpu.reason.splitlines()[0]), flush=True)

    records = load_records(out)
    todo = []
    for sub_id, path in mine:
        old = records.get(sub_id) or {}
        files = fingerprint(path)
        if (not args.regrade and old.get("kit_version") == version and old.get("fingerprint") == files
                and old.get("seed") == submission_seed(batch_seed, sub_id)):
            continue
        todo.append((sub_id, path, files))
    skipped = len(mine) - len(todo)
    if skipped:
        print("%d already graded with this kit version, seed and files (--regrade grades them again)" % skipped)

    scratch_root = tempfile.mkdtemp(prefix="batch-", dir=out)
    lock = threading.Lock()
    started = time.monotonic()
    done, graded_now, failures = skipped, 0, 0
    interrupted = False
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    futures = {}
    try:
        futures = {pool.submit(grade_submission, lab, sub_id, path, files, batch_seed, version, gpu, args.timeout,
                               lock, scratch_root): sub_id for sub_id, path, files in todo}
        for future in as_completed(futures):
            record, scores, feedback = future.result()
            save(out, record, scores, feedback)
            records[record["id"]] = record
            done += 1
            graded_now += 1
            if record["verdict"] not in (FULL_MARKS, POINTS_LOST, NOT_RUN_NO_GPU):
                failures += 1  # did not build, run or unpack
            _progress(done, len(mine), failures, started, graded_now,
                      "%s: %g/%g %s" % (record["id"], record["score"], record["max_score"], record["verdict"]))
    except KeyboardInterrupt:
        interrupted = True
        for future in futures:
            future.cancel()
        print("\ninterrupted: what is graded is kept; run the same command again to go on", file=sys.stderr)
    finally:
        pool.shutdown(wait=not interrupted)
        shutil.rmtree(scratch_root, ignore_errors=True)
    mine_ids = [i for i, _ in mine]
    mine_records = {i: records[i] for i in mine_ids if i in records}
    text = write_sheets(out, lab, mine_records, mine_ids, time.monotonic() - started, graded_now)
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
    lab = lab_registry.resolve(labs.pop())
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
    text = write_sheets(out, lab, merged, expected)
    print(text, end="")
    print("wrote %s from %d shard folders" % (paths.relative(out), len(args.shards)))
    return 0 if set(expected) <= set(merged) else 1
