#!/usr/bin/env python3
"""How long a class takes, where the time goes, and whether every verdict holds at that scale.

  python3 tools/batch_throughput.py OUT_DIR [COUNT] [--lab NN] [--limit SEC] [--timeout SEC] [--jobs J]
                                   [--beside TEXT]   (default: 200 of Lab 01)
  python3 tools/batch_throughput.py OUT_DIR COUNT --sandbox-cost ROUNDS
  python3 tools/batch_throughput.py OUT_DIR --latency [--lab NN]   (default: every lab)
  python3 tools/batch_throughput.py OUT_DIR --gather CLASS_DIR...   (OUT_DIR/class-scale.json)

A class of COUNT submissions: the lab's reference solution and each of its known-wrong submissions in
turn (solutions/LAB/incorrect/), all but those whose note says they hit the time limit (a hang costs
its limit by design: measured apart). It is graded in one batch (grade.py batch, every core, the GPU
shared as gradelib.gpushare allows), and each submission's verdict is checked: the solution's full
marks, and for a known-wrong one the check its note names failing. A class of 200 holds each about
200 / (kinds) times: for a lab with timing checks, that many runs of the reference and of each
known-wrong timing submission, graded beside the rest of the class.

Writes OUT_DIR/throughput-LAB.json (wall time, the mix, the verdicts, the median and 90th percentile
of each phase of a submission's cost) and OUT_DIR/costs-LAB.tsv (each submission's cost, broken
down: build, static checks, waiting for the GPU, process start, CUDA context, each case, exit, the
shared runs whose case ran again alone, and memcheck's wait and run), with where the GPU's time went
(held alone, shared, draining before a run alone, held by no run: tools/suite_summary.py's gpu_time, of
the batch's run log, throughput/LAB/runs.jsonl), and prints a table. Exit status 0 when every verdict
is as expected and the batch graded everything, or was stopped at --limit.

--jobs: the batch's jobs (default: one per core). --beside: what else ran on the host meanwhile (another
class on another GPU, say), kept in the document and its table: such a class's time is an upper bound of
its time alone, since contexts are made one at a time for the whole host.

With --latency, what a student waits for: the lab's reference solution graded as `make grade` grades it
(grade.py --lab NN, the sandbox on), first with an empty build cache (cold: the kit's own objects already
built), then again (warm: the build found in the cache); writes OUT_DIR/latency.json.

With --sandbox-cost, grades the same class ROUNDS times with the sandbox and ROUNDS times without
(--no-sandbox), alternating, and writes OUT_DIR/sandbox-cost.json: each batch's wall time, the medians
and their ratio (the sandbox's cost on a class).
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import build, gpu, gpushare, harness, paths, registry  # noqa: E402
from gradelib.sheets import FULL_MARKS  # noqa: E402
from selftest import GRADE, lost_words, read_note  # noqa: E402
import suite_summary  # noqa: E402

# retried: the runs of a case before the one judged, their wait included: shared runs whose case ran again
# alone (it needed more memory than was free, or hit the time limit), and runs alone whose host was too busy
# to time them (gradelib.runs.BUSY_RUNS_AGAIN); alone: how long its runs alone held the GPU (held_s; a run started before its
# hold made its context outside it): a class on one GPU takes at least its size times this, whatever the jobs;
# memcheck_wait_s, memcheck_s: its memcheck run's wait for the GPU (shared), then the run itself
PHASES = ("build_s", "static_s", "runtime_s", "wait_s", "start_s", "context_s", "case_s", "exit_s", "retried_s",
          "alone_s", "memcheck_wait_s", "memcheck_s")
SOLUTION = "solution"


def kinds_of(lab):
    """[(kind, folder, check that must fail or None)]: the solution, then each known-wrong submission
    that finishes."""
    kinds = [(SOLUTION, paths.solution_dir(lab.name), None)]
    incorrect = paths.incorrect_dir(lab.name)
    for case in paths.case_folders(incorrect):
        check, why = read_note(os.path.join(incorrect, case))
        if "time limit" not in why:
            kinds.append((case, os.path.join(incorrect, case), check))
    return kinds


def make_class(lab, folder, count):
    """COUNT submissions, the kinds in turn; {submission id: (kind, check that must fail)}. Each .cu file
    ends with a comment naming its submission, so that no two submissions are the same files, as in a
    real class: the build cache (gradelib.build) serves none of them from another's build."""
    kinds = kinds_of(lab)
    members = {}
    for i in range(count):
        kind, source, check = kinds[i % len(kinds)]
        sub_id = "student-%03d" % i
        target = os.path.join(folder, sub_id)
        os.makedirs(target)
        for name in build.lab_vars(lab.name)["student_files"]:
            if os.path.isfile(os.path.join(source, name)):
                shutil.copy(os.path.join(source, name), target)
                if name.endswith(".cu"):
                    with open(os.path.join(target, name), "a") as f:
                        f.write("\n/* %s */\n" % sub_id)
        members[sub_id] = (kind, check)
    return members


def grade_class(lab, subs, graded, extra=(), limit=None, run_log=None):
    """(seconds, exit status, output, finished) of one batch of the class in subs, into graded; with
    limit, the batch is stopped (SIGTERM, then SIGKILL) after limit seconds, and finished is False: the
    submissions graded by then have their records. run_log: the file its runs are logged to (KIT_RUN_LOG)."""
    shutil.rmtree(graded, ignore_errors=True)
    env = dict(os.environ, **{harness.RUN_LOG_ENV: run_log}) if run_log else None
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, os.path.join(KIT_ROOT, "grader", "grade.py"), "batch", subs,
                             "--lab", lab.name, "--out", graded, "--seed", "2026"] + list(extra),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                            start_new_session=True, env=env)
    try:
        output = proc.communicate(timeout=limit)[0]
        return time.monotonic() - started, proc.returncode, output, True
    except subprocess.TimeoutExpired:
        seconds = time.monotonic() - started
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:  # gone already: what it wrote is still to be read
            pass
        try:
            output = proc.communicate(timeout=wait)[0]
            break
        except subprocess.TimeoutExpired:
            continue
    return seconds, proc.returncode, output, False


def wrong_verdict(record, kind, check):
    """Why a record's verdict is not the one its kind must get, or None."""
    if record is None:
        return "no record"
    if kind == SOLUTION:
        return None if record["verdict"] == FULL_MARKS else "the solution got %s (%g/%g)%s" % (
            record["verdict"], record["score"], record["max_score"], lost_words(record))
    checks = {c["name"]: c for c in record.get("report", {}).get("checks", [])}
    if checks.get(check, {}).get("status") != "failed":
        return "%s: '%s' was %s" % (kind, check, checks.get(check, {}).get("status", "not reported"))
    return None


def submission_costs(record):
    """{phase: seconds} of one submission (each run's phases summed; "contexts": the harness processes
    whose CUDA context its cases' runs made, memcheck's aside; alone_s: its holds alone, a memcheck run's
    included where it had the GPU alone) and [seconds of each case]."""
    costs = record.get("costs") or {}
    row = {k: costs.get(k, 0.0) for k in ("build_s", "static_s", "runtime_s")}
    runs = costs.get("runs", [])
    for key in ("wait_s", "start_s", "context_s", "case_s", "exit_s", "retried_s"):
        row[key] = round(sum(r.get(key, 0.0) for r in runs), 4)
    alone = [r for r in runs if r.get("alone")]
    if any("held_s" in r for r in runs):  # the holds themselves: a run started before its hold made its context outside
        row["alone_s"] = round(sum(r.get("held_s", 0.0) for r in alone), 4)
    else:  # records of a kit before held_s: the runs' phases
        row["alone_s"] = round(sum(r.get("total_s", 0.0) for r in alone), 4)
    memcheck = costs.get("memcheck", [])  # its runs: the wait for the GPU, then the run under compute-sanitizer
    row["memcheck_wait_s"] = round(sum(m.get("wait_s", 0.0) for m in memcheck), 4)
    row["memcheck_s"] = round(sum(m.get("total_s", 0.0) for m in memcheck), 4)
    row["alone_s"] = round(row["alone_s"] + sum(m.get("held_s", m.get("total_s", 0.0)) for m in memcheck
                                                if m.get("alone")), 4)  # before held_s: the whole run
    row["contexts"] = sum(1 for r in runs if harness.made_context(r))
    return row, [r.get("total_s", 0.0) for r in runs]


def spread(values):
    """Median, 90th percentile and mean: the mean bounds a class, where a few slow submissions count."""
    values = sorted(values)
    if not values:
        return {"median": None, "p90": None, "mean": None}
    return {"median": round(statistics.median(values), 4), "p90": round(values[int(0.9 * (len(values) - 1))], 4),
            "mean": round(statistics.fmean(values), 4)}


def sandbox_cost(lab, out, subs, count, rounds):
    """Grade the class with and without the sandbox, alternating; write and print what it cost."""
    times = {"sandbox": [], "no_sandbox": []}
    for _ in range(rounds):
        for key, extra in (("sandbox", ()), ("no_sandbox", ("--no-sandbox",))):
            seconds, status, output, _ = grade_class(lab, subs, os.path.join(out, "throughput", "graded-" + key),
                                                     extra)
            if status != 0:
                print(output)
                return status
            times[key].append(round(seconds, 2))
            print("%s: %.1f s" % (key, seconds), flush=True)
    medians = {k: statistics.median(v) for k, v in times.items()}
    result = {"submissions": count, "rounds": rounds, "wall_s": times, "median_s": medians,
              "ratio": round(medians["sandbox"] / medians["no_sandbox"], 3)}
    with open(os.path.join(out, "sandbox-cost.json"), "w") as f:
        json.dump(result, f, indent=2)
    print("sandbox cost, %d %s submissions, %d rounds: median %.1f s with the sandbox, %.1f s without: "
          "ratio %.3f (each: %s / %s)" % (count, lab.title.split(":")[0], rounds, medians["sandbox"],
                                          medians["no_sandbox"], result["ratio"], times["sandbox"], times["no_sandbox"]))
    return 0


def report(lab, out, members, seconds, batch_status, records, finished=True, time_limit=None, jobs=None,
           beside=None, runs=()):
    """Write throughput-LAB.json and costs-LAB.tsv; print the table; the exit status. A batch stopped at
    its limit (not finished) is reported on the submissions it graded; runs: its run log's runs (parsed),
    for where the GPU's time went (suite_summary.gpu_time)."""
    wrong = {}
    rows = []
    for sub_id, (kind, check) in sorted(members.items()):
        record = records.get(sub_id)
        if record is None and not finished:
            continue
        problem = wrong_verdict(record, kind, check)
        if problem:
            wrong[sub_id] = problem
        if record is not None:
            row, cases = submission_costs(record)
            rows.append((sub_id, kind, record["verdict"], record["seconds"], row, cases))
    mix = {}
    for kind, _ in members.values():
        mix[kind] = mix.get(kind, 0) + 1
    phases = {key: spread([row[key] for _, _, _, _, row, _ in rows]) for key in PHASES}
    contexts = spread([row["contexts"] for _, _, _, _, row, _ in rows])
    most_cases = max((len(c) for *_, c in rows), default=0)
    cases = [spread([c[k] for *_, c in rows if len(c) > k]) for k in range(most_cases)]
    with open(os.path.join(out, "costs-%s.tsv" % lab.number), "w") as f:
        f.write("\t".join(["id", "kind", "verdict", "seconds"] + list(PHASES) +
                          ["case_%d_s" % k for k in range(most_cases)]) + "\n")
        for sub_id, kind, verdict, total, row, case_seconds in rows:
            f.write("\t".join([sub_id, kind, verdict, "%.2f" % total] + ["%.3f" % row[k] for k in PHASES] +
                              ["%.3f" % s for s in case_seconds]) + "\n")
    graded = len(members) if finished else len(rows)
    result = {"lab": lab.name, "device": gpu.detect().name, "gpus_on_host": gpu.detect().count,
              "runtime_version": gpu.detect().device.get("runtime_version"),
              # the GPUs the batch used: how many, and which
              "gpus": len(os.environ[gpu.GPUS_ENV].split(",")) if os.environ.get(gpu.GPUS_ENV) else gpu.detect().count,
              "gpu_list": os.environ.get(gpu.GPUS_ENV, "all"),
              "submissions": len(members), "mix": mix, "jobs": jobs or os.cpu_count(), "cores": os.cpu_count(),
              "beside": beside,
              "time_limit_s": time_limit or lab.time_limit,  # the longest a case may run
              "sharers": gpushare.sharers(gpu.detect().device), "wall_s": round(seconds, 1),
              "finished": finished, "graded": graded,
              "per_submission_s": round(seconds / max(1, graded), 3), "exit_status": batch_status,
              "verdicts_as_expected": graded - len(wrong), "wrong_verdicts": wrong,
              "phases": phases, "contexts": contexts, "cases": cases,
              "gpu_time": suite_summary.gpu_time(list(runs)) if runs else None}
    with open(os.path.join(out, "throughput-%s.json" % lab.number), "w") as f:
        json.dump(result, f, indent=2)
    print("%s: %d submissions (%s), %d jobs, GPU shared by up to %d runs: %.1f s wall, %.2f s per submission"
          % (lab.title, len(members), ", ".join("%s %d" % kv for kv in sorted(mix.items())), result["jobs"],
             result["sharers"], seconds, result["per_submission_s"]))
    if not finished:
        print("STOPPED at the limit, %.0f s: %d of %d submissions graded by then" % (seconds, graded, len(members)))
    print("verdicts as expected: %d of %d graded" % (result["verdicts_as_expected"], graded))
    for sub_id, problem in sorted(wrong.items())[:10]:
        print("  WRONG %s: %s" % (sub_id, problem))
    print("cost of one submission, seconds (median / 90th percentile; a submission's runs summed):")
    for key in PHASES:
        print("  %-10s %8s / %s" % (key[:-2], phases[key]["median"], phases[key]["p90"]))
    for k, c in enumerate(cases):
        print("  case %-5d %8s / %s" % (k, c["median"], c["p90"]))
    print("CUDA contexts a submission's runs made (memcheck's aside): %s / %s" % (contexts["median"], contexts["p90"]))
    print("the GPU alone, a submission's mean: %s s (a class of N on one GPU takes at least N times it)"
          % phases["alone_s"]["mean"])
    if result["gpu_time"]:
        print("the GPU's time, seconds: held alone %(alone_s)s, shared %(shared_s)s (of it, %(draining_s)s draining "
              "before a run alone), by no run %(idle_s)s" % result["gpu_time"])
    return 0 if not wrong and (batch_status == 0 or not finished) else 1


def latency(labs, out):
    """Each lab's solution graded cold then warm, one after the other, nothing else running: seconds and
    exit status of each, in OUT/latency.json."""
    found = {"device": gpu.detect().name, "labs": {}}
    for lab in labs:
        cache = os.path.join(out, "latency-cache", lab.name)
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        env = dict(os.environ, **{build.CACHE_ENV: cache})
        row = {}
        for kind in ("cold", "warm"):
            run_log = os.path.join(cache, kind + "-runs.jsonl")
            began = time.monotonic()
            done = subprocess.run([sys.executable, GRADE, "--lab", lab.number, "--submission",
                                   paths.solution_dir(lab.name), "--seed", "1"],
                                  env=dict(env, **{harness.RUN_LOG_ENV: run_log}),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            row[kind + "_s"] = round(time.monotonic() - began, 2)
            row[kind + "_exit"] = done.returncode
        # the warm grading's time with the GPU held alone: a class of N on one GPU takes at least N times it
        with open(run_log) as f:
            row["alone_s"] = round(sum(r["held_s"] for r in map(json.loads, f) if r["alone"]), 3)
        found["labs"][lab.number] = row
        print("Lab %s: cold %.1f s (exit %d), warm %.1f s (exit %d), of which %.2f s with the GPU alone" % (
            lab.number, row["cold_s"], row["cold_exit"], row["warm_s"], row["warm_exit"], row["alone_s"]))
    with open(os.path.join(out, "latency.json"), "w") as f:
        json.dump(found, f, indent=1, sort_keys=True)
    return 0 if all(r["cold_exit"] == 0 and r["warm_exit"] == 0 for r in found["labs"].values()) else 1


def gather(out, folders):
    """OUT/class-scale.json from the classes in folders (each throughput-NN.json, one GPU or several) and
    OUT/latency.json where there is one: the class-scale table of RESULTS.md (tools/quoted_figures.py)."""
    found = {"classes": [], "latency": None}
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if name.startswith("throughput-") and name.endswith(".json"):
                with open(os.path.join(folder, name)) as f:
                    t = json.load(f)
                found.update(device=t["device"], gpus_on_host=t.get("gpus_on_host", t["gpus"]),
                             cores=t.get("cores", t["jobs"]),
                             runtime_version=t.get("runtime_version"))  # not in the documents of older kits
                found["classes"].append({
                    "lab": t["lab"][:2], "gpus": t["gpus"],
                    "submissions": t["submissions"], "graded": t["graded"], "finished": t["finished"],
                    "wall_s": t["wall_s"], "verdicts_as_expected": t["verdicts_as_expected"], "jobs": t["jobs"],
                    "time_limit_s": t.get("time_limit_s"), "beside": t.get("beside"),
                    "contexts": t["contexts"]["median"], "gpu_time": t.get("gpu_time"),
                    "alone_mean_s": t["phases"].get("alone_s", {}).get("mean"),  # older documents: none
                    "phases": {k: t["phases"][k]["median"] for k in PHASES if k in t["phases"]}})
    latency_doc = os.path.join(out, "latency.json")
    if os.path.isfile(latency_doc):
        with open(latency_doc) as f:
            found["latency"] = json.load(f)
    found["classes"].sort(key=lambda c: (c["lab"], c["gpus"]))
    with open(os.path.join(out, "class-scale.json"), "w") as f:
        json.dump(found, f, indent=1, sort_keys=True)
    for c in found["classes"]:
        print("Lab %s on %d GPU(s): %d of %d graded in %.0f s%s, %d as expected, contexts %s, alone %s s" % (
            c["lab"], c["gpus"], c["graded"], c["submissions"], c["wall_s"], "" if c["finished"] else " (stopped)",
            c["verdicts_as_expected"], c["contexts"], c["phases"].get("alone_s")))
    return 0 if found["classes"] else 1


def main(argv):
    p = argparse.ArgumentParser(prog="batch_throughput.py", description=__doc__.split("\n")[0])
    p.add_argument("out", metavar="OUT_DIR")
    p.add_argument("count", metavar="COUNT", type=int, nargs="?", default=200)
    p.add_argument("--lab", metavar="NN")
    p.add_argument("--sandbox-cost", type=int, metavar="ROUNDS")
    p.add_argument("--latency", action="store_true", help="time make grade of each lab's solution, cold and warm")
    p.add_argument("--gather", nargs="+", metavar="CLASS_DIR",
                   help="write OUT_DIR/class-scale.json from these folders' throughput-NN.json and OUT_DIR/latency.json")
    p.add_argument("--timeout", type=float, metavar="SEC",
                   help="grade.py batch's time limit for every case (default: each case its lab's)")
    p.add_argument("--limit", type=float, metavar="SEC",
                   help="stop the batch after SEC seconds and report on the submissions graded by then")
    p.add_argument("--jobs", type=int, metavar="J", help="the batch's jobs (default: one per core)")
    p.add_argument("--beside", metavar="TEXT", help="what else ran on the host meanwhile, for the record")
    args = p.parse_args(argv)
    out = os.path.abspath(args.out)
    if args.gather:
        return gather(out, args.gather)
    if args.latency:
        os.makedirs(out, exist_ok=True)
        return latency([registry.resolve(args.lab)] if args.lab else list(registry.all_labs().values()), out)
    lab = registry.resolve(args.lab or "01")
    work = os.path.join(out, "throughput", lab.name)
    shutil.rmtree(work, ignore_errors=True)
    subs = os.path.join(work, "submissions")
    os.makedirs(subs)
    members = make_class(lab, subs, args.count)
    if args.sandbox_cost:
        return sandbox_cost(lab, out, subs, args.count, args.sandbox_cost)
    graded = os.path.join(work, "graded")
    extra = ((["--timeout", str(args.timeout)] if args.timeout else []) +
             (["--jobs", str(args.jobs)] if args.jobs else []))
    run_log = os.path.join(work, "runs.jsonl")
    # The GPU the document names, probed before the class: after a batch stopped at its limit, a probe found
    # none once (an H200), and the document named no device.
    gpu.detect()
    seconds, batch_status, output, finished = grade_class(lab, subs, graded, extra, limit=args.limit, run_log=run_log)
    with open(os.path.join(work, "batch.log"), "w") as f:
        f.write(output)
    records = {}
    folder = os.path.join(graded, "records")
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        try:
            with open(os.path.join(folder, name)) as f:
                record = json.load(f)
        except ValueError:  # one being written when the batch was stopped
            continue
        records[record["id"]] = record
    runs = []
    if os.path.isfile(run_log):
        with open(run_log) as f:
            for line in f:
                try:
                    runs.append(json.loads(line))
                except ValueError:  # the line being written when the batch was stopped
                    continue
    status = report(lab, out, members, seconds, batch_status, records, finished, args.timeout, args.jobs, args.beside,
                    runs)
    if finished and batch_status != 0:
        print(output[-3000:])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
