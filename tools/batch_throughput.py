#!/usr/bin/env python3
"""How long a class takes: batch-grade COUNT copies of Lab 01's reference solution and known-wrong
submissions (those that finish; a hang costs its time limit by design), on this machine.

  python3 tools/batch_throughput.py OUT_DIR [COUNT]     (default 200)
  python3 tools/batch_throughput.py OUT_DIR COUNT --sandbox-cost ROUNDS

Writes OUT_DIR/throughput.json and prints the wall time, the time per submission and the verdicts.
With --sandbox-cost, grades the same class ROUNDS times with the sandbox and ROUNDS times without
(--no-sandbox), alternating, and writes OUT_DIR/sandbox-cost.json: each batch's wall time, the medians
and their ratio (the sandbox's cost on a class).
"""
import statistics
import json
import os
import shutil
import subprocess
import sys
import time

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LAB = "01-divergent-counter"
HANGS = ("spins-forever",)  # each would cost the full time limit: measured apart, not in the mix


def make_class(folder, count):
    sources = [os.path.join(KIT_ROOT, "solutions", LAB)]
    incorrect = os.path.join(KIT_ROOT, "solutions", "incorrect", LAB)
    sources += [os.path.join(incorrect, c) for c in sorted(os.listdir(incorrect)) if c not in HANGS]
    mix = {}
    for i in range(count):
        source = sources[i % len(sources)]
        kind = "solution" if i % len(sources) == 0 else os.path.basename(source)
        target = os.path.join(folder, "student-%03d" % i)
        os.makedirs(target)
        shutil.copy(os.path.join(source, "divergent_counter.cu"), target)
        mix[kind] = mix.get(kind, 0) + 1
    return mix


def grade_class(subs, graded, extra=()):
    """(seconds, the finished batch process) for one batch of the class in subs, into graded."""
    shutil.rmtree(graded, ignore_errors=True)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, os.path.join(KIT_ROOT, "grader", "grade.py"), "batch", subs, "--lab", LAB,
                           "--out", graded, "--seed", "2026"] + list(extra),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    return time.monotonic() - started, proc


def sandbox_cost(out, subs, count, rounds):
    """Grade the class with and without the sandbox, alternating; write and print what it cost."""
    times = {"sandbox": [], "no_sandbox": []}
    for _ in range(rounds):
        for key, extra in (("sandbox", ()), ("no_sandbox", ("--no-sandbox",))):
            seconds, proc = grade_class(subs, os.path.join(out, "throughput", "graded-" + key), extra)
            if proc.returncode != 0:
                print(proc.stdout)
                return proc.returncode
            times[key].append(round(seconds, 2))
            print("%s: %.1f s" % (key, seconds), flush=True)
    medians = {k: statistics.median(v) for k, v in times.items()}
    result = {"submissions": count, "rounds": rounds, "wall_s": times, "median_s": medians,
              "ratio": round(medians["sandbox"] / medians["no_sandbox"], 3)}
    with open(os.path.join(out, "sandbox-cost.json"), "w") as f:
        json.dump(result, f, indent=2)
    print("sandbox cost, %d Lab 01 submissions, %d rounds: median %.1f s with the sandbox, %.1f s without: "
          "ratio %.3f (each: %s / %s)" % (count, rounds, medians["sandbox"], medians["no_sandbox"], result["ratio"],
                                          times["sandbox"], times["no_sandbox"]))
    return 0


def main(argv):
    if not argv:
        sys.exit(__doc__)
    out = os.path.abspath(argv[0])
    count = int(argv[1]) if len(argv) > 1 else 200
    work = os.path.join(out, "throughput")
    shutil.rmtree(work, ignore_errors=True)
    subs = os.path.join(work, "submissions")
    os.makedirs(subs)
    mix = make_class(subs, count)
    if "--sandbox-cost" in argv:
        return sandbox_cost(out, subs, count, int(argv[argv.index("--sandbox-cost") + 1]))
    seconds, proc = grade_class(subs, os.path.join(work, "graded"))
    with open(os.path.join(work, "batch.log"), "w") as f:
        f.write(proc.stdout)
    with open(os.path.join(work, "graded", "summary.txt")) as f:
        summary = f.read()
    result = {"submissions": count, "mix": mix, "jobs": os.cpu_count(), "wall_s": round(seconds, 1),
              "per_submission_s": round(seconds / count, 2), "exit_status": proc.returncode, "summary": summary}
    with open(os.path.join(out, "throughput.json"), "w") as f:
        json.dump(result, f, indent=2)
    print("batch of %d Lab 01 submissions (%s), %d build jobs: %.1f s wall, %.2f s per submission"
          % (count, ", ".join("%s %d" % kv for kv in sorted(mix.items())), os.cpu_count(), seconds, seconds / count))
    print(summary, end="")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
