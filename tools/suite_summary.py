#!/usr/bin/env python3
"""The kit's test suite as run on a GPU machine, summed up in one document the pages quote.

  python3 tools/suite_summary.py OUT.json DEVICE.json JUNIT.xml [JUNIT.xml ...] [--runs RUNS.jsonl] [--command TEXT]
                                 [--side-by-side]
  python3 tools/suite_summary.py --not-run CTEST_OUTPUT   (make test's last line)

JUNIT.xml: what `ctest --output-junit` wrote (tools/gpu-suite.sh tests); several files are the parts
of one suite run in pieces (CTEST_FILTER): a test in more than one keeps its last result. DEVICE.json:
the GPU probe's document (build/probe/sm_NN/probe.json, which `make doctor` writes), for the machine. Labels come from
`ctest --show-only=json-v1` in build/tests (configured by `make test`), so a test's labels are the
suite's own. Every test the suite has must appear in the results: a missing one is an error. total_s:
the suite's wall time, as CTest wrote it: summed over the files, or with --side-by-side (pieces that ran
at the same time, one per GPU) the longest. --command: how the suite was run, for
the pages (default: through tools/gpu-suite.sh tests).
RUNS.jsonl: the harness runs the tests made (KIT_RUN_LOG, gradelib/harness.py), summed up under "runs":
how many, the CUDA contexts they made (a run stopped before its end counts where its channel's first
line says its context was made) and the wall time those took between them (the driver makes them
about one at a time; the median and the longest, of the runs that ended with their clock line), the runs
that hit their time limit, what the runs that had the GPU alone held it for, and for each lab's
program the median of the contexts one grader process made (a test's grading of one submission);
and where the GPU's time went (gpu_time, the runs under compute-sanitizer's memcheck counted too).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import harness, process  # noqa: E402
TEST_BUILD = os.path.join(KIT_ROOT, "build", "tests")


def suite_labels():
    """{test name: [labels]} of every test CTest has (configures build/tests when needed)."""
    subprocess.run(["cmake", "-S", os.path.join(KIT_ROOT, "tests"), "-B", TEST_BUILD], check=True,
                   stdout=subprocess.DEVNULL)
    shown = subprocess.run(["ctest", "--show-only=json-v1"], cwd=TEST_BUILD, check=True, stdout=subprocess.PIPE,
                           universal_newlines=True).stdout
    labels = {}
    for test in json.loads(shown)["tests"]:
        found = [p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"]
        labels[test["name"]] = found[0] if found else []
    return labels


def results(junit_roots):
    """{test name: (status, seconds)}: status passed, failed or not_run (junit_roots: the files' parsed roots)."""
    found = {}
    for root in junit_roots:
        for case in root.iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                status = "failed"
            elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
                status = "not_run"
            else:
                status = "passed"
            found[case.get("name")] = (status, float(case.get("time") or 0))
    return found


def _merged(spans):
    """[(begin, end)] as the sorted spans, none overlapping, that cover the same wall time."""
    merged = []
    for begin, end in sorted(spans):
        if merged and begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([begin, end])
    return merged


def _union_s(spans):
    """Seconds of wall time that [(begin, end)] cover between them."""
    return sum(end - begin for begin, end in _merged(spans))


def _both(a, b):
    """The wall time that both lists of spans cover, as spans."""
    a, b, found = _merged(a), _merged(b), []
    i = j = 0
    while i < len(a) and j < len(b):
        begin, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if begin < end:
            found.append((begin, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return found


def gpu_time(runs):
    """How the GPUs' wall time went, each GPU over its runs' span, summed over the GPUs (KIT_RUN_LOG's runs,
    parsed; a run's GPU is its gate, "gpu", one GPU where the log has none): held by a run alone (alone_s);
    held by shared runs only (shared_s), and of that, while a run waited to be alone (draining_s: it lets
    no new shared run start, so the GPU runs fewer and fewer); and held by no run (idle_s: builds,
    contexts made before a hold, the graders between runs). A run holds the GPU for its last held_s
    seconds (the whole run in the logs of kits before held_s); a run alone waited for its hold its first
    cost's wait_s before that."""
    found = {"gpus": 0, "span_s": 0.0, "alone_s": 0.0, "shared_s": 0.0, "draining_s": 0.0, "idle_s": 0.0}
    for gpu in sorted(set(run.get("gpu") or "" for run in runs)):
        on_it = [run for run in runs if (run.get("gpu") or "") == gpu]
        alone, shared, waits = [], [], []
        for run in on_it:
            end = run["spawned_s"] + run["seconds"]
            held = (end - run.get("held_s", run["seconds"]), end)
            (alone if run["alone"] else shared).append(held)
            if run["alone"] and run["costs"]:
                waits.append((held[0] - run["costs"][0].get("wait_s", 0.0), held[0]))
        span = max(run["spawned_s"] + run["seconds"] for run in on_it) - min(run["spawned_s"] for run in on_it)
        held, held_alone = _union_s(alone + shared), _union_s(alone)
        waited_out = _both(waits, shared)
        found["gpus"] += 1
        found["span_s"] += span
        found["alone_s"] += held_alone
        found["shared_s"] += held - held_alone
        found["draining_s"] += _union_s(waited_out) - _union_s(_both(waited_out, alone))
        found["idle_s"] += span - held
    return {k: round(v, 1) for k, v in found.items()}


def runs_summary(lines):
    """The harness runs of KIT_RUN_LOG's lines (JSON text, one run each), summed up. Of the runs alone:
    how long they held the GPU, the hangs (a run that hit the time limit), and the other runs' process
    start, context and exit while they held it (a run started before its hold made its context first:
    only its exit counts)."""
    every_run = [json.loads(line) for line in lines if line.strip()]
    runs = [run for run in every_run if not run.get("tool")]  # the harness's own; a tool's (memcheck) in "gpu" only
    contexts, per_program, per_grader = [], {}, {}
    alone = {"runs": 0, "held_s": 0.0, "start_context_exit_s": 0.0, "timeouts": 0, "timeouts_s": 0.0}
    for run in runs:
        if not run.get("segment"):  # a later segment of a run is the same process
            per_program[run["program"]] = per_program.get(run["program"], 0) + 1
        first = run["costs"][0] if run["costs"] else {}
        made = per_grader.setdefault(run["program"], {})  # contexts, by the grader's process id
        made.setdefault(run.get("pid"), 0)
        if "context_s" in first:
            begin = run["spawned_s"] + first["start_s"]
            contexts.append((begin, begin + first["context_s"]))
        if harness.made_context(first):  # a run stopped before its end: made, its time unknown
            made[run.get("pid")] += 1
        if not run["alone"]:
            continue
        held = run.get("held_s", run["seconds"])
        alone["runs"] += 1
        alone["held_s"] += held
        if run.get("verdict") == process.TIMEOUT:  # a hang: the whole time limit, the GPU held alone
            alone["timeouts"] += 1
            alone["timeouts_s"] += held
        else:
            phases = ("exit_s",) if run.get("started_before") else ("start_s", "context_s", "exit_s")
            alone["start_context_exit_s"] += sum(c.get(k, 0) for c in run["costs"] for k in phases)
    span = [(run["spawned_s"], run["spawned_s"] + run["seconds"]) for run in runs]
    return {"harness_runs": sum(per_program.values()),
            "contexts_made": sum(sum(made.values()) for made in per_grader.values()),
            "span_s": round(max(e for _, e in span) - min(b for b, _ in span), 1) if span else 0.0,
            "context_sum_s": round(sum(e - b for b, e in contexts), 1),
            "context_union_s": round(_union_s(contexts), 1),
            "context_median_s": round(statistics.median(e - b for b, e in contexts), 1) if contexts else 0.0,
            "context_max_s": round(max(e - b for b, e in contexts), 1) if contexts else 0.0,
            "timeouts": sum(1 for run in runs if run.get("verdict") == process.TIMEOUT),
            "alone_runs": alone["runs"], "alone_s": round(alone["held_s"], 1),
            "alone_timeouts": alone["timeouts"], "alone_timeouts_s": round(alone["timeouts_s"], 1),
            "alone_start_context_exit_s": round(alone["start_context_exit_s"], 1),
            "runs_per_program": per_program, "gpu": gpu_time(every_run),
            "contexts_per_grader": {program: statistics.median(made.values()) for program, made in per_grader.items()}}


def summary(labels, ran, device, command):
    missing = sorted(set(labels) - set(ran))
    if missing:
        raise SystemExit("tests with no result in the JUnit files: %s" % ", ".join(missing))
    doc = {"device": device, "command": command, "total": len(labels), "labels": {}, "tests": []}
    for status in ("passed", "failed", "not_run"):
        doc[status] = sum(1 for name in labels if ran[name][0] == status)
    for name in sorted(labels):
        status, seconds = ran[name]
        doc["tests"].append({"name": name, "status": status, "seconds": round(seconds, 2), "labels": labels[name]})
        for label in labels[name]:
            counts = doc["labels"].setdefault(label, {"total": 0, "passed": 0, "failed": 0, "not_run": 0})
            counts["total"] += 1
            counts[status] += 1
    return doc


# CTest's list of the tests it did not run: "The following tests did not run:" then one line each,
# "\t 12 - 01-solution-full-marks (Skipped)".
_NOT_RUN_LINE = re.compile(r"^\s*\d+ - (\S+) \((Skipped|Not Run|Disabled)\)\s*$")


def not_run_line(ctest_output, labels):
    """The line make test prints last: how many tests CTest did not run, GPU tests apart, since its
    "100% tests passed" counts them among the passes. None when it ran every test."""
    names = []
    listing = False
    for line in ctest_output.splitlines():
        if line.startswith("The following tests did not run"):
            listing = True
        elif listing:
            found = _NOT_RUN_LINE.match(line)
            if not found:
                break
            names.append(found.group(1))
    if not names:
        return None
    gpu_total = sum(1 for l in labels.values() if "gpu" in l)
    gpu = [n for n in names if "gpu" in labels.get(n, [])]
    matrix = [n for n in names if "toolkits" in labels.get(n, [])]
    recorded = [n for n in names if n.endswith("-recorded") and n not in gpu]  # tests/test_recorded.py
    other = [n for n in names if n not in gpu and n not in matrix and n not in recorded]
    parts = []
    if gpu:
        parts.append("%d of the %d GPU tests (no usable GPU here)" % (len(gpu), gpu_total))
    if matrix:
        parts.append("%s (KIT_TOOLKIT_MATRIX=1 runs it: it installs CUDA toolkits and takes minutes)"
                     % ", ".join(matrix))
    if recorded:
        parts.append("%s (not recorded yet: tools/gpu-suite.sh record on a GPU)" % ", ".join(recorded))
    if other:
        parts.append("%s (a tool it needs is missing here)" % ", ".join(other))
    return ("NOT RUN: %s. CTest's percentage counts them, but they did not pass: they are listed above "
            "as (Skipped)." % " and ".join(parts))


def main(argv):
    if len(argv) == 2 and argv[0] == "--not-run":
        with open(argv[1], errors="replace") as f:
            line = not_run_line(f.read(), suite_labels())
        if line:
            print(line)
        return 0
    side_by_side = "--side-by-side" in argv
    argv = [a for a in argv if a != "--side-by-side"]
    given = {"--runs": "", "--command": "`make test` on the machine above, through `tools/gpu-suite.sh tests`"}
    for option in given:
        if option in argv:
            at = argv.index(option)
            given[option] = argv[at + 1] if at + 1 < len(argv) else None  # None: the option without its value
            argv = argv[:at] + argv[at + 2:]
    runs_path = given["--runs"]
    if len(argv) < 3 or None in given.values():
        print(__doc__)
        return 2
    out, device_path, junit = argv[0], argv[1], argv[2:]
    with open(device_path) as f:
        device = json.load(f)["device"]
    roots = [ET.parse(path).getroot() for path in junit]
    doc = summary(suite_labels(), results(roots), device, given["--command"])
    times = [float(root.get("time") or 0) for root in roots]
    doc["total_s"] = round(max(times) if side_by_side else sum(times), 1)
    if runs_path:
        with open(runs_path) as f:
            doc["runs"] = runs_summary(f)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("%s: %d of %d passed, %d failed, %d not run" % (out, doc["passed"], doc["total"], doc["failed"],
                                                          doc["not_run"]))
    return 1 if doc["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
