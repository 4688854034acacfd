#!/usr/bin/env python3
"""A lab's GPU-recorded data, read on a machine without a GPU.

  tests/test_recorded.py LAB     the lab's mutation run (grader/tests/data/mutants/LAB.json): it graded
                                 the mutants of today's solution, every mutant listed as equivalent
                                 survived, every other was killed, and every correct submission got full
                                 marks in each of its BASELINE_SEEDS gradings beside others; and the
                                 solution's recorded harness document (grader/tests/data/recorded/)

Exit status 0 passed, 1 failed, 77 not run: nothing recorded yet for the lab (a new lab), with the one
command that records it. A lab's recorded data never turns the CPU suite red before it exists.
"""
import json
import os
import sys

KIT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT, "grader"))
sys.path.insert(0, os.path.join(KIT, "tools"))

import mutants  # noqa: E402
from gradelib import registry  # noqa: E402

NOT_RUN = 77
BASELINE_SEEDS = 10  # each correct submission's gradings in a recorded run (tools/gpu-suite.sh mutants)
MUTANTS_DIR = os.path.join(KIT, "grader", "tests", "data", "mutants")
RECORDED_DIR = os.path.join(KIT, "grader", "tests", "data", "recorded")


def record_command(lab):
    return "MUTANT_LABS=%s tools/gpu-suite.sh record" % lab.number


def missing(lab):
    """What the lab has not recorded yet (file names), empty when it has everything."""
    wanted = [os.path.join(MUTANTS_DIR, lab.name + ".json"),
              os.path.join(RECORDED_DIR, "lab%s-solution.json" % lab.number)]
    return [os.path.relpath(p, KIT) for p in wanted if not os.path.exists(p)]


def mutation_run_problems(lab, recorded):
    """What is wrong with a lab's recorded mutation run, as a list of lines."""
    problems = []
    ids = sorted(m["id"] for m in recorded["mutants"])
    if ids != sorted(m.id for m in mutants.generate(lab)):
        problems.append("the solution or the operators changed since the recorded run: record it again (%s)"
                        % record_command(lab))
    status = {m["id"]: m["status"] for m in recorded["mutants"]}
    equivalent = mutants.read_equivalent(lab)
    for mutant_id in sorted(equivalent):
        if status.get(mutant_id) != mutants.SURVIVED:
            problems.append("%s is listed as equivalent, but the recorded run says %s"
                            % (mutant_id, status.get(mutant_id)))
    survivors = sorted(i for i, s in status.items()
                       if i not in equivalent and s not in (mutants.KILLED, mutants.STILLBORN))
    if survivors:
        problems.append("mutants neither killed nor argued equivalent: %s" % ", ".join(survivors))
    baselines = recorded["baselines"]
    for b in baselines:
        if b["score"] < b["max_score"]:
            problems.append("%s, seed %d: %s of %s (%s)" % (b["what"], b["seed"], b["score"], b["max_score"],
                                                           b.get("lost")))
    for what, _ in mutants.baseline_folders(lab):
        mine = [b for b in baselines if b["what"] == what]
        if sorted(b["seed"] for b in mine) != list(range(1, BASELINE_SEEDS + 1)):
            problems.append("%s: graded on seeds %s, not 1..%d" % (what, sorted(b["seed"] for b in mine),
                                                                 BASELINE_SEEDS))
        # the very first grading of a run may start before the others: the rest start beside them
        elif sum(b.get("others_running", 0) > 0 for b in mine) < BASELINE_SEEDS - 1:
            problems.append("%s: fewer than %d of its gradings ran beside others" % (what, BASELINE_SEEDS - 1))
    return problems


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    lab = registry.resolve(argv[0])
    absent = missing(lab)
    if absent:
        print("not run: not recorded yet (%s): %s on a GPU machine records it" % (", ".join(absent), record_command(lab)))
        return NOT_RUN
    with open(os.path.join(MUTANTS_DIR, lab.name + ".json")) as f:
        problems = mutation_run_problems(lab, json.load(f))
    for line in problems:
        print("FAILED: %s: %s" % (lab.name, line))
    if problems:
        return 1
    print("%s: the recorded mutation run and harness document hold" % lab.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
