#!/usr/bin/env python3
"""What compute-sanitizer's memcheck costs and finds, lab by lab (needs a GPU and compute-sanitizer).

  tools/memcheck_costs.py DATA_DIR [--repeats N] [--lab NN ...]

For each lab: its solution built, and its memcheck case (Lab.memcheck_case) run plain and under
memcheck as the grader runs it (gradelib.memcheck.command), N times each, alternating, outside the
sandbox and alone on the GPU, with the GPU memory every process held sampled while it ran; then the
solution and each known-wrong submission whose note names the memcheck check, graded by that check
(grade.py --check, as the kit's tests do). Writes DATA_DIR/memcheck.json and prints a table.
Exit status 0 when the solution passed and every such known-wrong submission failed the check, 1
otherwise, 77 when there is no GPU or no compute-sanitizer.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grader"))

from gradelib import exits, harness, memcheck, paths, process, registry, standard_checks  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
import selftest  # noqa: E402

RUN_LIMIT = 300  # seconds for one run, plain or under memcheck


class MemorySampler(threading.Thread):
    """The most GPU memory, in MiB, all processes held at once while it ran (nvidia-smi, every 0.2 s)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak_mib = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            out = subprocess.run(["nvidia-smi", "--query-compute-apps=used_memory", "--format=csv,noheader,nounits"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True).stdout
            used = sum(int(x) for x in out.split() if x.isdigit())
            self.peak_mib = max(self.peak_mib, used)
            self.done.wait(0.2)


def timed(argv):
    """(seconds, peak GPU MiB, RunResult) of one run."""
    sampler = MemorySampler()
    sampler.start()
    try:
        result = process.run_bounded(argv, RUN_LIMIT)
    finally:
        sampler.done.set()
        sampler.join()
    return result.seconds, sampler.peak_mib, result


def measure(lab, sanitizer, repeats, build_root):
    program, made = harness.build_program(lab, paths.solution_dir(lab.name),
                                          os.path.join(build_root, lab.name))
    if program is None:
        return {"error": "the solution did not build:\n" + made.output[-2000:]}
    args = lab.harness_args(lab.memcheck_case)
    plain, checked, problems = [], [], []
    memcheck_output = ""  # of the last run under memcheck: what memcheck said of the solution
    for _ in range(repeats):
        for argv, into in (([program] + args, plain), (memcheck.command(sanitizer) + [program] + args, checked)):
            seconds, peak, result = timed(argv)
            into.append((seconds, peak))
            if into is checked:
                memcheck_output = result.output
            if not result.ok:
                problems.append("%s: %s\n%s" % (" ".join(argv[-len(args) - 1:]), result.describe(), result.output[-1500:]))
    found = memcheck.read(memcheck_output)
    row = {"case": " ".join(args), "repeats": repeats,
           "plain_s": round(statistics.median(s for s, _ in plain), 3),
           "memcheck_s": round(statistics.median(s for s, _ in checked), 3),
           "plain_peak_mib": max(m for _, m in plain), "memcheck_peak_mib": max(m for _, m in checked),
           "solution_errors": found.errors, "problems": problems}
    row["slowdown"] = round(row["memcheck_s"] / row["plain_s"], 1) if row["plain_s"] else None
    row["extra_s"] = round(row["memcheck_s"] - row["plain_s"], 3)
    return row


def memcheck_submissions(lab):
    """[(name, folder)]: the solution, and the known-wrong submissions whose note names the memcheck check."""
    cases = [("solution", paths.solution_dir(lab.name))]
    incorrect = paths.incorrect_dir(lab.name)
    for case in paths.case_folders(incorrect):
        if selftest.read_note(os.path.join(incorrect, case))[0] == standard_checks.MEMCHECK:
            cases.append((case, os.path.join(incorrect, case)))
    return cases


def verdicts(lab, sanitizer, build_root, raw_dir):
    """[{submission, status of the memcheck check, its message}] for memcheck_submissions, each graded by
    the check; memcheck's own output of each, run outside the grader, kept in raw_dir (the grader's
    tests read such outputs)."""
    rows = []
    for name, folder in memcheck_submissions(lab):
        _, checks, _ = selftest.grade(lab, folder, check=standard_checks.MEMCHECK)
        result = checks[standard_checks.MEMCHECK]
        rows.append({"submission": name, "status": result["status"], "message": result["message"]})
        program, _ = harness.build_program(lab, folder, os.path.join(build_root, lab.name + "-" + name))
        if program is not None:
            run = process.run_bounded(memcheck.command(sanitizer) + [program] + lab.harness_args(lab.memcheck_case),
                                      RUN_LIMIT)
            with open(os.path.join(raw_dir, "%s-%s.txt" % (lab.number, name)), "w") as f:
                f.write("# exit %s, %s\n%s" % (run.returncode, run.describe(), run.output))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("data_dir")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--lab", action="append", metavar="NN")
    args = p.parse_args(argv)
    sanitizer = memcheck.find()
    info = gpu_mod.detect()
    if sanitizer is None or not info.available:
        print("not run: %s" % ("no compute-sanitizer here" if sanitizer is None else info.reason.splitlines()[0]))
        return exits.NOT_RUN
    version = subprocess.run([sanitizer, "--version"], stdout=subprocess.PIPE, universal_newlines=True).stdout
    labs = [registry.resolve(s) for s in args.lab] if args.lab else list(registry.all_labs().values())
    doc = {"device": info.name, "sanitizer": version.strip().splitlines()[-1], "labs": {}}
    good = True
    raw_dir = os.path.join(args.data_dir, "memcheck-raw")
    os.makedirs(raw_dir, exist_ok=True)
    os.makedirs(paths.BUILD_ROOT, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=paths.BUILD_ROOT) as build_root:
        for lab in labs:
            row = measure(lab, sanitizer, args.repeats, build_root)
            row["verdicts"] = verdicts(lab, sanitizer, build_root, raw_dir)
            doc["labs"][lab.number] = row
            for v in row["verdicts"]:
                want = "passed" if v["submission"] == "solution" else "failed"
                v["as_expected"] = v["status"] == want
                good = good and v["as_expected"]
            print("lab %s: %s" % (lab.number, json.dumps(row, indent=1)), flush=True)
    with open(os.path.join(args.data_dir, "memcheck.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print("\n%s, %s" % (doc["device"], doc["sanitizer"]))
    print("%-4s %-9s %-11s %-8s %-10s %-12s %s" % ("lab", "plain s", "memcheck s", "x", "extra s", "peak MiB",
                                                "verdicts (expected?)"))
    for number, row in doc["labs"].items():
        if "error" in row:
            print("%-4s %s" % (number, row["error"].splitlines()[0]))
            good = False
            continue
        print("%-4s %-9s %-11s %-8s %-10s %-12s %s" % (
            number, row["plain_s"], row["memcheck_s"], row["slowdown"], row["extra_s"],
            "%d/%d" % (row["plain_peak_mib"], row["memcheck_peak_mib"]),
            ", ".join("%s %s%s" % (v["submission"], v["status"], "" if v["as_expected"] else " (NOT EXPECTED)")
                      for v in row["verdicts"])))
    return exits.OK if good else exits.FAILED


if __name__ == "__main__":
    sys.exit(main())
