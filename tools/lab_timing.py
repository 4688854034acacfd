#!/usr/bin/env python3
"""Timing figures for the results page: each lab's reference solution, harness-timed with CUDA events
(warm-up, repeats, median), several processes per size.

  python3 tools/lab_timing.py OUT_DIR

Writes OUT_DIR/timing.json and OUT_DIR/timing.md; prints the table. Needs a GPU.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grader"))

from gradelib import build, paths, process  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402

PROCESSES = 3   # separate runs of the harness per size
REPEATS = 9     # timed launches per run (after one warm-up), median taken

LAB01_SIZES = [
    {"K": 2, "M": 32, "N": 128},      # the textbook's parameters
    {"K": 1000, "M": 8, "N": 1000},
    {"K": 2048, "M": 32, "N": 128},
    {"K": 64, "M": 32, "N": 100000},
]


def build_solution(lab_name, out_dir):
    build_dir = os.path.join(paths.BUILD_ROOT, "timing", lab_name)
    made = build.make(lab_name, os.path.join(paths.SOLUTIONS_DIR, lab_name), build_dir, ["all"], build.cuda_arch())
    if not made.ok:
        sys.exit("build failed:\n" + made.output)
    return os.path.join(build_dir, build.lab_vars(lab_name)["program"]), build_dir


def lab01(out_dir):
    program, build_dir = build_solution("01-divergent-counter", out_dir)
    rows = []
    for size in LAB01_SIZES:
        flat, cdp = [], []
        for i in range(PROCESSES):
            doc_path = os.path.join(build_dir, "timing-%d.json" % i)
            argv = [program, "--K", str(size["K"]), "--M", str(size["M"]), "--N", str(size["N"]),
                    "--repeats", str(REPEATS), "--json", doc_path]
            ran = process.run_bounded(argv, 300)
            if not ran.ok:
                sys.exit("harness %s: %s\n%s" % (size, ran.describe(300), ran.output))
            with open(doc_path) as f:
                doc = json.load(f)
            flat.append(doc["timing"]["reference"]["median_ms"])
            cdp.append(doc["timing"]["student"]["median_ms"])
        row = dict(size, flat_ms=statistics.median(flat), cdp_ms=statistics.median(cdp),
                   flat_runs=flat, cdp_runs=cdp)
        row["flat_over_cdp"] = row["flat_ms"] / row["cdp_ms"]
        rows.append(row)
    return rows


def cuda_version(number):
    """13000 -> '13.0' (the encoding of cudaRuntimeGetVersion and cudaDriverGetVersion)."""
    return "%d.%d" % (number // 1000, number % 1000 // 10) if number else "?"


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(paths.BUILD_ROOT, "timing")
    os.makedirs(out_dir, exist_ok=True)
    gpu = gpu_mod.detect()
    if not gpu.available:
        print("no GPU: %s" % gpu.reason)
        return 77
    rows = lab01(out_dir)
    doc = {"device": gpu.device, "processes": PROCESSES, "repeats": REPEATS, "lab01": rows}
    with open(os.path.join(out_dir, "timing.json"), "w") as f:
        json.dump(doc, f, indent=2)
    lines = ["Lab 01 on %s (CUDA runtime %s, driver supports %s): median of %d processes x %d timed launches"
             % (gpu.name, cuda_version(gpu.device.get("runtime_version")),
                cuda_version(gpu.device.get("driver_version")), PROCESSES, REPEATS),
             "", "| K | M | N | flat reference (ms) | CDP solution (ms) | flat / CDP |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %d | %d | %.4f | %.4f | %.2f |" % (r["K"], r["M"], r["N"], r["flat_ms"], r["cdp_ms"],
                                                             r["flat_over_cdp"]))
    table = "\n".join(lines)
    with open(os.path.join(out_dir, "timing.md"), "w") as f:
        f.write(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
