#!/usr/bin/env python3
"""Whether correct work keeps full marks on a busy host: each lab's reference solution and every
alternative (solutions/alternative/LAB/) graded with seeds 1..SEEDS, one after another, while a class
batch of another lab is graded beside them on the same GPU, again and again until they are done.

  python3 tools/stability.py OUT_DIR [--labs 01 05 ...] [--seeds 10] [--gpus 0,1,...] [--limit SEC]

Each GPU of the host (CUDA_VISIBLE_DEVICES, or --gpus) takes a share of the labs, balanced by their
cost; every grader on a GPU sees that GPU alone and has a gate of its own (gradelib.gpushare's folder
under a TMPDIR of its own), so the GPUs work side by side. Writes OUT_DIR/stability.json: the GPU, the
toolkit, and per lab and submission how many gradings got full marks, and for each that did not, the
seed and the checks that lost points, with their messages. Prints a table. Exit status 0 when every
grading got full marks.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import build, gpu, paths, registry  # noqa: E402

GRADE = os.path.join(KIT_ROOT, "grader", "grade.py")
LOAD_CLASS_SIZE = 16
LOAD_JOBS = 4  # the batch beside the gradings grades this many submissions at once
# What one grading costs, roughly, in seconds on an H100 (README: a student's wait), to share the labs
# among the GPUs.
COST = {"04": 22, "06": 16, "02": 11, "05": 10, "01": 9, "07": 6, "08": 5, "03": 4}


def submissions(lab):
    """[(name, folder)]: the reference solution, then each alternative."""
    found = [("solution", os.path.join(paths.SOLUTIONS_DIR, lab.name))]
    alternative = os.path.join(paths.ALTERNATIVE_DIR, lab.name)
    for case in sorted(os.listdir(alternative)) if os.path.isdir(alternative) else []:
        found.append(("alternative " + case, os.path.join(alternative, case)))
    return found


def load_lab_for(lab):
    """The lab whose class is graded beside lab's gradings: Lab 04's (eleven processes a submission, the
    heaviest), or Lab 06's beside Lab 04 itself."""
    return registry.resolve("06" if lab.number == "04" else "04")


def share(labs, gpus):
    """{gpu: [lab, ...]}, the costliest labs first, each to the GPU with the least cost so far."""
    shares = {g: [] for g in gpus}
    load = {g: 0 for g in gpus}
    for lab in sorted(labs, key=lambda lab: -COST.get(lab.number, 10) * len(submissions(lab))):
        g = min(gpus, key=lambda g: load[g])
        shares[g].append(lab)
        load[g] += COST.get(lab.number, 10) * len(submissions(lab))
    return shares


def environment(gpu_id, tmp):
    return dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu_id), TMPDIR=tmp, PYTHONUNBUFFERED="1")


class Load:
    """A class batch of another lab (its solution, LOAD_CLASS_SIZE times), graded again and again
    beside the gradings until stop()."""

    def __init__(self, lab, env, work):
        self.lab, self.env, self.work = lab, env, work
        self.class_dir = os.path.join(work, "load-class")
        first = build.lab_vars(lab.name)["student_files"]
        for i in range(LOAD_CLASS_SIZE):
            folder = os.path.join(self.class_dir, "student-%02d" % i)
            os.makedirs(folder)
            for name in first:
                shutil.copyfile(os.path.join(paths.SOLUTIONS_DIR, lab.name, name), os.path.join(folder, name))
        self.batches = 0
        self.proc = None
        self.running = True
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while self.running:
            out = os.path.join(self.work, "load-out-%d" % self.batches)
            self.proc = subprocess.Popen([sys.executable, GRADE, "batch", self.class_dir, "--lab", self.lab.name,
                                          "--out", out, "--seed", str(self.batches), "--jobs", str(LOAD_JOBS)], env=self.env,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.proc.wait()
            shutil.rmtree(out, ignore_errors=True)
            self.batches += 1

    def stop(self):
        self.running = False
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
        self.thread.join()


def grade_once(lab, folder, seed, env, work, limit):
    """(score, max_score, [(check, message)] of the checks that lost points) of one grading."""
    doc_path = os.path.join(work, "grade.json")
    proc = subprocess.run([sys.executable, GRADE, "--lab", lab.name, "--submission", folder, "--seed", str(seed),
                           "--json", doc_path] + (["--timeout", str(limit)] if limit else []), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    try:
        with open(doc_path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return 0, None, [("grade.py", "no result document (exit status %d): %s" % (proc.returncode, proc.stdout[-500:]))]
    report = doc["labs"][0] if "labs" in doc else doc
    lost = [(c["name"], c["message"][:400]) for c in report["checks"]
            if c["score"] < c["points"] and not c.get("not_run_lacking")]
    return report["score"], report["max_score"], lost


def run_gpu(gpu_id, labs, seeds, limit, rows, lock, save):
    tmp = tempfile.mkdtemp(prefix="stability-gpu%s-" % gpu_id)
    env = environment(gpu_id, tmp)
    try:
        for lab in labs:
            load = Load(load_lab_for(lab), env, os.path.join(tmp, "load-" + lab.number))
            started = time.monotonic()
            for name, folder in submissions(lab):
                row = {"lab": lab.name, "submission": name, "gpu_index": gpu_id, "load": load.lab.name,
                       "gradings": 0, "full_marks": 0, "failures": []}
                for seed in range(1, seeds + 1):
                    score, max_score, lost = grade_once(lab, folder, seed, env, tmp, limit)
                    row["gradings"] += 1
                    if max_score is not None and score >= max_score and not lost:
                        row["full_marks"] += 1
                    else:
                        row["failures"].append({"seed": seed, "score": score, "max_score": max_score,
                                                "checks": [{"name": n, "message": m} for n, m in lost]})
                with lock:
                    rows.append(row)
                    save(rows)
                    print("GPU %s  %-22s %-34s %2d of %2d full marks" % (gpu_id, lab.name, name, row["full_marks"],
                                                                         row["gradings"]), flush=True)
            load.stop()
            with lock:
                print("GPU %s  %s: %.0f s, %d batches of %s beside it" % (gpu_id, lab.name, time.monotonic() - started,
                                                                        load.batches, load.lab.name), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def visible_gpus():
    """"0,1,..." for every GPU nvidia-smi lists, else "0"."""
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        listed = ""
    count = sum(1 for line in listed.splitlines() if line.startswith("GPU "))
    return ",".join(str(i) for i in range(max(count, 1)))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--labs", nargs="*", default=None)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--gpus", default=None, help="GPU indices, e.g. 0,1 (default: every GPU visible)")
    parser.add_argument("--limit", type=int, default=None, help="grade.py --timeout")
    args = parser.parse_args(argv)
    device = gpu.detect()
    if not device.available:
        print("not run: no usable GPU here (%s)" % device.reason)
        return 77
    gpus = [g.strip() for g in (args.gpus or os.environ.get("CUDA_VISIBLE_DEVICES") or visible_gpus()).split(",")
            if g.strip()]
    labs = [registry.resolve(n) for n in args.labs] if args.labs else list(registry.all_labs().values())
    for lab in labs:  # the kit's objects once, before the GPUs' graders build side by side
        build.make_kit_objects(lab.name, build.cuda_arch())
    rows, lock, threads = [], threading.Lock(), []
    started = time.monotonic()
    os.makedirs(args.out_dir, exist_ok=True)

    def save(rows):
        """stability.json as it stands (after every submission: a run cut short keeps what it did)."""
        doc = {"gpu": device.name, "gpus": len(gpus), "runtime_version": device.device.get("runtime_version"),
               "seeds": args.seeds, "seconds": round(time.monotonic() - started, 1),
               "rows": sorted(rows, key=lambda r: (r["lab"], r["submission"]))}
        with open(os.path.join(args.out_dir, "stability.json"), "w") as f:
            json.dump(doc, f, indent=1)
        return doc
    for g, share_of in share(labs, gpus).items():
        t = threading.Thread(target=run_gpu, args=(g, share_of, args.seeds, args.limit, rows, lock, save))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    doc = save(rows)
    bad = [r for r in rows if r["full_marks"] < r["gradings"]]
    print("%d submissions, %d gradings, %d with full marks, %.0f s on %d GPU(s) (%s)" % (
        len(rows), sum(r["gradings"] for r in rows), sum(r["full_marks"] for r in rows), doc["seconds"], len(gpus),
        device.name))
    for r in bad:
        for f in r["failures"]:
            print("LOST %s %s seed %d: %s" % (r["lab"], r["submission"], f["seed"],
                                              "; ".join("%s: %s" % (c["name"], c["message"][:160]) for c in f["checks"])))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
