#!/usr/bin/env python3
"""Both sides of the grader's thresholds, measured with the kit's own harnesses, for the results page
(RESULTS.md) and the thresholds in the rubrics. Needs a GPU.

  python3 tools/measure_thresholds.py OUT_DIR

Lab 01: flat reference vs the CDP solution, CUDA-event timing (warm-up, repeats, median), several
processes per size. Lab 02: how often the races of the known-wrong submissions show, run after run
(the grader must reject them every time). Labs 04, 05 and 06: both sides of the timing thresholds,
the solution and the known-wrong submissions they must reject, 10 runs each on the grader's timing
cases. Lab 07: both sides of its timing threshold, and how many pixels the rule's own image differs
from the exhaustive one in, over every case the grader draws for 50 seeds. Lab 08: both sides of its
three timing thresholds on the heavy case. Every harness is built and
run through gradelib.harness, with each lab's own contract.
Writes OUT_DIR/thresholds.json and OUT_DIR/thresholds.md and prints the tables.

  python3 tools/measure_thresholds.py OUT_DIR lab07 [labNN ...]

measures only the labs named, and keeps the other labs' entries of the kit's recorded
handouts/figures/data/thresholds.json when it was recorded on a GPU of the same name; on another GPU
the document holds the labs named only (the kit keeps such a run beside it, as thresholds-h200.json).
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grader"))

from gradelib import exits, harness, paths, registry  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
from gradelib.figures import cuda_version  # noqa: E402
import quoted_figures  # noqa: E402
from rubrics import lab04 as lab04_rules  # noqa: E402

PROCESSES = 3   # separate runs of the harness per size
REPEATS = 9     # timed launches per run (after one warm-up), median taken

LAB01_SIZES = [
    {"K": 2, "M": 32, "N": 128},      # the textbook's parameters
    {"K": 1000, "M": 8, "N": 1000},
    {"K": 2048, "M": 32, "N": 128},
    {"K": 64, "M": 32, "N": 100000},
]


RACE_RUNS = 10  # runs of each racy submission


RUN_TIMEOUT = 300  # seconds for one harness run


def build_submission(lab_name, source_dir, tag):
    """The harness program of a lab built from source_dir (exits on a failed build)."""
    lab = registry.resolve(lab_name)
    program, made = harness.build_program(lab, source_dir, os.path.join(paths.BUILD_ROOT, "thresholds", lab_name, tag))
    if program is None:
        sys.exit("build failed:\n" + made.output)
    return program


def run_docs(lab, program, cases, what):
    """The result documents of one process's runs of cases (exits, naming what, on a run that is not clean)."""
    docs = []
    for outcome in harness.run_cases(lab, program, cases, RUN_TIMEOUT):
        if not outcome.result or not outcome.result.ok or not outcome.doc:
            sys.exit("%s: %s" % (what, outcome.why or "the run failed"))
        docs.append(outcome.doc)
    return docs


def run_case(lab_name, program, params):
    """The result document of one run of a lab's harness on one case (exits on a run that is not clean)."""
    ran, doc, why = harness.run(registry.resolve(lab_name), program, params, RUN_TIMEOUT)
    if not ran.ok or doc is None:
        sys.exit("harness %s %s: %s\n%s" % (program, params, why or ran.describe(RUN_TIMEOUT), ran.output))
    return doc


def lab01():
    lab = "01-divergent-counter"
    program = build_submission(lab, paths.solution_dir(lab), "solution")
    rows = []
    for size in LAB01_SIZES:
        flat, cdp = [], []
        for _ in range(PROCESSES):
            doc = run_case(lab, program, dict(size, repeats=REPEATS))
            flat.append(doc["timing"]["reference"]["median_ms"])
            cdp.append(doc["timing"]["student"]["median_ms"])
        row = dict(size, flat_ms=statistics.median(flat), cdp_ms=statistics.median(cdp),
                   flat_runs=flat, cdp_runs=cdp)
        row["flat_over_cdp"] = row["flat_ms"] / row["cdp_ms"]
        rows.append(row)
    return rows


def lab02():
    """Each racy submission RACE_RUNS times with the grader's Part A size; no-barrier at n=4097, T=256."""
    lab = "02-memory-visibility"
    rows = []
    for case, size, key in (("race-left-in", {"n": 1}, "race"),
                            ("no-barrier", {"n": 4097, "threads": 256}, "data")):
        program = build_submission(lab, os.path.join(paths.incorrect_dir(lab), case), case)
        runs = []
        for _ in range(RACE_RUNS):
            doc = run_case(lab, program, dict(size, blocks=16, trials=2))
            runs.append(doc["race"]["saw_second"] if key == "race" else doc["data"]["bad"])
        total = 4096 if key == "race" else 4097
        rows.append({"case": case, "runs": runs, "out_of": total, "min": min(runs), "max": max(runs)})
    return rows


LAB04_RUNS = 10


def lab04():
    """Both sides of Lab 04's timing thresholds: the solution (a created stream per thread), the
    fire-and-forget alternative, and the submissions whose children serialize (the NULL stream, one
    stream per block), LAB04_RUNS runs each, on each candidate workload; the ratios the grader thresholds."""
    lab = "04-bezier-streams"
    sides = {"solution": paths.solution_dir(lab),
             "fire-and-forget": os.path.join(paths.alternative_dir(lab), "fire-and-forget"),
             "null-stream": os.path.join(paths.incorrect_dir(lab), "null-stream"),
             "one-stream-per-block": os.path.join(paths.incorrect_dir(lab), "one-stream-per-block")}
    rows = []
    for side, source in sides.items():
        program = build_submission(lab, source, side)
        for name, cfg in lab04_rules.TIMING_CASES.items():
            null_over, flat_over = [], []
            for i in range(LAB04_RUNS):
                t = run_case(lab, program, dict(cfg, seed=i + 1, repeats=lab04_rules.TIMING_REPEATS))["timing_ms"]
                null_over.append(t["cdp_null"] / t["cdp_student"])
                flat_over.append(t["flat"] / t["cdp_student"])
            rows.append(dict(cfg, case=name, side=side, null_over_student=null_over, flat_over_student=flat_over))
    return rows


RECORDED = os.path.join(paths.KIT_ROOT, "handouts", "figures", "data", "thresholds.json")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(paths.BUILD_ROOT, "thresholds")
    only = sys.argv[2:]
    measures = {"lab01": lab01, "lab02": lab02, "lab04": lab04, "lab05": lab05, "lab06": lab06, "lab07": lab07,
                "lab08": lab08}
    unknown = [name for name in only if name not in measures]
    if unknown:
        print("unknown lab(s) %s: choose from %s" % (", ".join(unknown), ", ".join(measures)))
        return exits.USAGE
    os.makedirs(out_dir, exist_ok=True)
    gpu = gpu_mod.detect()
    if not gpu.available:
        print("no GPU: %s" % gpu.reason)
        return exits.NOT_RUN
    doc = {"device": gpu.device, "processes": PROCESSES, "repeats": REPEATS}
    with open(RECORDED) as f:
        recorded = json.load(f)
    if only and recorded["device"]["name"] == gpu.name:  # the other labs as the kit recorded them, on this GPU
        doc = dict(recorded, device=gpu.device)
    elif only:  # another GPU: the labs measured here only (RESULTS.md keeps such a run as thresholds-GPU.json)
        print("the kit's thresholds.json is from %s: this document holds the labs measured here only"
              % recorded["device"]["name"])
    for name, measure in measures.items():
        if not only or name in only:
            doc[name] = measure()
    with open(os.path.join(out_dir, "thresholds.json"), "w") as f:
        json.dump(doc, f, indent=2)
    # The tables RESULTS.md shows, drawn from the document as the page draws them (tools/quoted_figures.py).
    sources = {"thresholds": doc}
    parts = ["On %s (CUDA runtime %s, driver supports %s)." % (
        gpu.name, cuda_version(gpu.device.get("runtime_version")), cuda_version(gpu.device.get("driver_version")))]
    for lab in sorted(measures):
        if lab not in doc or ("thresholds-" + lab) not in quoted_figures.RENDERERS:
            continue
        parts += ["", "%s:" % lab, "", quoted_figures.render("thresholds-" + lab, cache=sources)]
    table = "\n".join(parts)
    with open(os.path.join(out_dir, "thresholds.md"), "w") as f:
        f.write(table + "\n")
    print(table)
    return 0


LAB05_RUNS = 10


def lab05():
    """Both sides of Lab 05's thresholds: the solution, the still-legacy submission, the one that waits
    for the whole device, and the two that put two kernels in a stream (half of them at once),
    LAB05_RUNS runs each on the grader's first case, on the largest sizes it draws and on 32 streams,
    the harness's limit; prints what the grader's thresholds compare, and returns the rows. Concurrency:
    pairs of workers that ran together in no round (0 wanted) next to the span ratios; Part B's wait:
    each thread's best round against the kit's reference wait (b_worst_wait_excess_us) next to the
    margin the kit's reference kernel gives it (b_min_wait_allowance_us)."""
    import random
    from rubrics import lab05 as rules
    lab = "05-default-streams"
    sides = {"solution": paths.solution_dir(lab),
             "still-legacy": os.path.join(paths.incorrect_dir(lab), "still-legacy"),
             "wait-for-everything": os.path.join(paths.incorrect_dir(lab), "wait-for-everything"),
             "streams-in-pairs": os.path.join(paths.incorrect_dir(lab), "streams-in-pairs"),
             "threads-in-pairs": os.path.join(paths.incorrect_dir(lab), "threads-in-pairs")}
    cases = [dict(rules.make_cases(random.Random(1))[0]),
             {"streams": 16, "threads": 12, "spin_us": 500, "thread_spin_us": 500, "repeats": rules.REPEATS},
             {"streams": rules.MAX_STREAMS, "threads": 8, "spin_us": rules.FULL_TABLE_SPIN_US, "thread_spin_us": 500,
              "repeats": rules.REPEATS}]
    rows = []
    for side, source in sides.items():
        program = build_submission(lab, source, side)
        for case in cases:
            got = {"a_ratio": [], "a_at_once": [], "a_best_at_once": [], "b_ratio": [], "b_at_once": [],
                   "b_best_at_once": [], "b_worst_late_us": [], "b_worst_wait_excess_us": [],
                   "b_min_wait_allowance_us": [], "a_pairs_never_overlapping": [], "b_pairs_never_overlapping": [],
                   "legacy_overlaps": [], "tampered_or_stray": []}
            for i in range(LAB05_RUNS):
                doc = run_case(lab, program, case)
                a, b = doc["part_a"], doc["part_b"]
                got["a_ratio"].append(rules.best_span(a["legacy"]) / rules.best_span(a["student"]))
                got["a_at_once"].append(a["student"]["max_concurrent"])
                got["a_best_at_once"].append(max(a["student"]["max_concurrent_runs"]))
                got["b_ratio"].append(rules.best_span(b["legacy"]) / rules.best_span(b["student"]))
                got["b_at_once"].append(b["student"]["max_concurrent"])
                got["b_best_at_once"].append(max(b["student"]["max_concurrent_runs"]))
                got["b_worst_late_us"].append(max(b["student"]["lateness_us"]))
                reference = b["student"]["reference_lateness_us"]
                got["b_worst_wait_excess_us"].append(max(l - reference for l in b["student"]["earliest_lateness_us"]))
                got["b_min_wait_allowance_us"].append(rules.WAIT_GAP_SHARE * min(b["student"]["device_wait_gap_us"]))
                got["a_pairs_never_overlapping"].append(a["student"]["pairs_never_overlapping"])
                got["b_pairs_never_overlapping"].append(b["student"]["pairs_never_overlapping"])
                got["legacy_overlaps"].append(a["legacy"]["overlapping_pairs"] + b["legacy"]["overlapping_pairs"])
                got["tampered_or_stray"].append(sum(doc[p][s]["tampered"] + doc[p][s]["stray"]
                                                    for p in ("part_a", "part_b") for s in ("legacy", "student")))
            rows.append(dict(case, side=side, **got))
    return rows


LAB06_RUNS = 10


def lab06():
    """Lab 06: both sides of the timing thresholds (the solution and the one-atomic-per-thread
    submission) on the grader's timing case, how many duplicates the racy counter hands out on the
    grader's uniqueness case, LAB06_RUNS runs each; and Part A at the source's size (a million
    128-byte objects). Prints the tables and returns the rows."""
    from rubrics import lab06 as rules
    lab = "06-parallel-allocator"
    timing_case = dict(rules.CASE_DEFAULTS, repeats=rules.TIMING_REPEATS, **rules.TIMING_CASE)
    unique_case = dict(rules.CASE_DEFAULTS, capacity=1 << 20, requests=4 << 20)
    sides = [("solution", paths.solution_dir(lab), timing_case),
             ("one-atomic-per-thread", os.path.join(paths.incorrect_dir(lab), "one-atomic-per-thread"), timing_case),
             ("racy-counter", os.path.join(paths.incorrect_dir(lab), "racy-counter"), unique_case)]
    rows = []
    for side, source, case in sides:
        program = build_submission(lab, source, side)
        got = {"malloc_over_pool": [], "malloc_over_bulk": [], "per_thread_over_yours": [], "duplicates": [],
               "malloc_failures": []}
        for i in range(LAB06_RUNS):
            doc = run_case(lab, program, dict(case, seed=i + 1))
            t, u = doc["timing"], doc["uniqueness"]
            if t["ran"]:
                got["malloc_over_pool"].append(t["per_object_malloc"]["median_ms"] / t["pool"]["median_ms"])
                got["malloc_over_bulk"].append(t["per_object_malloc"]["median_ms"] / t["bulk"]["median_ms"])
                got["per_thread_over_yours"].append(t["take_per_thread"]["median_ms"] / t["take_student"]["median_ms"])
                got["malloc_failures"].append(t["per_object_malloc"]["malloc_failures"])
            if u["ran"]:
                got["duplicates"].append(u["duplicates"])
        rows.append(dict(side=side, **got))
    program = build_submission(lab, paths.solution_dir(lab), "solution")
    part_a = run_case(lab, program, dict(rules.CASE_DEFAULTS, objects=1000000, repeats=3, seed=1))["timing"]
    rows.append({"side": "part-a", "timing": part_a})
    return rows


LAB07_RUNS = 10
LAB07_SURVEY_SEEDS = 50


def lab07():
    """Lab 07: both sides of the timing threshold (the solution, whose threads 0..15 each launch a square;
    the alternatives, among them the kit's first solution, whose thread 0 launches all sixteen; and the
    submission that computes uniform rectangles instead of filling them), LAB07_RUNS runs each of the
    uniform timing case, and the filaments case for the solution (reported, never thresholded); and the
    rule's own misses: every case the grader draws for LAB07_SURVEY_SEEDS seeds, run once with the
    solution, each case's pixels unlike the exhaustive image."""
    from gradelib import context
    from rubrics import lab07 as rules
    lab = registry.resolve("07-mandelbrot")
    sides = [("solution", paths.solution_dir(lab.name)),
             ("one-thread-launches", os.path.join(paths.alternative_dir(lab.name), "one-thread-launches")),
             ("created-streams", os.path.join(paths.alternative_dir(lab.name), "created-streams")),
             ("fill-computes", os.path.join(paths.incorrect_dir(lab.name), "fill-computes"))]
    timing = {}
    for side, source in sides:
        program = build_submission(lab.name, source, side)
        names = ["uniform"] + (["filaments"] if side == "solution" else [])
        for name in names:
            case = dict(rules.TIMING_CASES[name], repeats=rules.TIMING_REPEATS)
            ratios, exhaustive, yours = [], [], []
            for doc in run_docs(lab, program, [case] * LAB07_RUNS, "%s %s" % (side, name)):
                t = doc["timing_ms"]
                ratios.append(t["exhaustive"] / t["cdp_student"])
                exhaustive.append(t["exhaustive"])
                yours.append(t["cdp_student"])
            timing.setdefault(side, {})[name] = {"exhaustive_over_cdp": ratios, "exhaustive_ms": exhaustive,
                                                 "cdp_ms": yours}
    cases = []
    for seed in range(1, LAB07_SURVEY_SEEDS + 1):
        for case in lab.make_cases(context.case_rng(seed, lab.name, salt="")):
            case = {k: v for k, v in case.items() if k not in ("timing", "repeats", "figure")}
            if case not in cases:
                cases.append(case)
    program = build_submission(lab.name, sides[0][1], "solution")
    survey = []
    for case, outcome in zip(cases, harness.run_cases(lab, program, cases, RUN_TIMEOUT)):
        if not outcome.doc:
            sys.exit("survey %s: %s" % (case, outcome.why or "the run failed"))
        image, rule = outcome.doc["image"], outcome.doc["rule"]
        survey.append(dict(case, pixels=image["pixels"], rule_unlike_exhaustive=rule["unlike_exhaustive"],
                           child_grids=rule["child_grids"], filled=rule["filled_pixels"]))
    worst = max(survey, key=lambda row: row["rule_unlike_exhaustive"] / row["pixels"])
    return {"timing": timing, "survey_seeds": LAB07_SURVEY_SEEDS, "survey": survey,
            "worst_unlike_fraction": worst["rule_unlike_exhaustive"] / worst["pixels"]}


LAB08_RUNS = 10


def lab08():
    """Lab 08: both sides of the three same-run ratios of the heavy timing case (over a copy of the bytes,
    the kit's flat version over the student's, the kit's CDP version over the student's): the solution,
    the alternative whose every vertex makes its own binary search, and the known-wrong submission that
    goes back to one block per line after the scan, LAB08_RUNS runs each."""
    from rubrics import lab08 as rules
    lab = registry.resolve("08-device-graphs")
    sides = [("solution", paths.solution_dir(lab.name)),
             ("search-per-vertex", os.path.join(paths.alternative_dir(lab.name), "search-per-vertex")),
             ("block-per-line", os.path.join(paths.incorrect_dir(lab.name), "block-per-line"))]
    case = dict(rules.TIMING_CASE, repeats=rules.TIMING_REPEATS)
    timing, total = {}, None
    for side, source in sides:
        program = build_submission(lab.name, source, side)
        row = {k: [] for k in ("balanced_ms", "flat_ms", "cdp_ms", "copy_ms", "balanced_over_copy",
                               "flat_over_balanced", "cdp_over_balanced")}
        for doc in run_docs(lab, program, [case] * LAB08_RUNS, side):
            t, total = doc["timing_ms"], doc["total_vertices"]
            for key in ("balanced", "flat", "cdp", "copy"):
                row[key + "_ms"].append(t[key])
            row["balanced_over_copy"].append(t["balanced"] / t["copy"])
            row["flat_over_balanced"].append(t["flat"] / t["balanced"])
            row["cdp_over_balanced"].append(t["cdp"] / t["balanced"])
        timing[side] = row
    return {"case": rules.TIMING_CASE, "total_vertices": total, "timing": timing}


if __name__ == "__main__":
    sys.exit(main())
