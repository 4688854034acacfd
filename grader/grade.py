#!/usr/bin/env python3
"""Grade CUDA dynamic parallelism labs.

  python3 grader/grade.py [--lab NN ...] [--submission DIR] [--seed S] [--json FILE]
                          [--gradescope FILE] [--timeout SEC] [--verbose]
  python3 grader/grade.py batch SUBMISSIONS_DIR --lab NN [--out DIR] [--jobs J] [--timeout SEC]
                          [--regrade] [--seed S] [--shard I/N]
  python3 grader/grade.py merge SHARD_OUT_DIR... --out DIR

(batch and merge: see gradelib/batch.py.)

Exit status: 0 full marks with every check run; 1 points lost; 2 bad usage;
77 no points lost, but runtime checks were not run because no GPU could run them.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gradelib import batch  # noqa: E402
from gradelib import checks as chk  # noqa: E402
from gradelib import exits  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
from gradelib import registry  # noqa: E402
from gradelib import paths, report  # noqa: E402
from gradelib.grading import DEFAULT_TIMEOUT, grade_lab  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="grade.py", description="Grade CUDA dynamic parallelism labs.",
        epilog="Exit status: 0 full marks; 1 points lost; 2 bad usage; 77 no points lost but "
               "runtime checks not run (no GPU).")
    p.add_argument("--lab", action="append", metavar="NN",
                   help="lab to grade: 4, 04 or 04-bezier-streams (repeatable; default: every lab)")
    p.add_argument("--submission", metavar="DIR", default=paths.LABS_DIR,
                   help="folder with the lab's files, or with NN-name/ folders (default: labs/)")
    p.add_argument("--seed", type=int, help="seed for the random test cases (default: a fresh one, printed)")
    p.add_argument("--json", metavar="FILE", help="write the full results as JSON")
    p.add_argument("--gradescope", metavar="FILE", help="write Gradescope's results.json")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SEC",
                   help="time limit for each harness run (default %(default)s)")
    p.add_argument("--verbose", action="store_true", help="show the message of every check")
    return p.parse_args(argv)


def exit_status(reports):
    results = [r for rep in reports for r in rep.results]
    if chk.points_lost(results):
        return exits.FAILED
    if chk.not_run_for_lack_of_gpu(results):
        return exits.NOT_RUN
    return exits.OK


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "batch":
        return batch.run_batch(argv[1:])
    if argv and argv[0] == "merge":
        return batch.run_merge(argv[1:])
    args = parse_args(argv)
    try:
        labs = [registry.resolve(s) for s in args.lab] if args.lab else list(registry.all_labs().values())
    except KeyError as err:
        print("grade.py: %s" % err.args[0], file=sys.stderr)
        return exits.USAGE
    if not os.path.isdir(args.submission):
        print("grade.py: no such folder: %s" % args.submission, file=sys.stderr)
        return exits.USAGE
    if args.timeout <= 0:
        print("grade.py: --timeout must be positive", file=sys.stderr)
        return exits.USAGE
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10 ** 6)

    salted = " with the instructor's salt" if paths.instructor_salt() else ""
    print("seed %d%s (grade.py --seed %d repeats these test cases%s)" % (seed, salted, seed, salted))
    gpu = gpu_mod.detect()
    if gpu.available:
        print("GPU: %s (compute capability %s)" % (gpu.name, gpu.compute_capability))
    else:
        print("GPU: none usable. Build and static checks run; runtime checks will NOT run.\n     %s"
              % gpu.reason.replace("\n", "\n     "))
    sys.stdout.flush()

    reports = []
    for lab in labs:
        rep = grade_lab(lab, os.path.abspath(args.submission), seed, timeout=args.timeout, gpu=gpu)
        reports.append(rep)
        print()
        print(report.lab_text(rep, verbose=args.verbose))
        sys.stdout.flush()

    status = exit_status(reports)
    total = round(sum(r.score for r in reports), 2)
    maximum = sum(r.max_score for r in reports)
    print()
    if status == exits.OK:
        print("TOTAL %g/%g: full marks" % (total, maximum))
    elif status == exits.NOT_RUN:
        print("TOTAL %g/%g: no points lost so far, but runtime checks were NOT RUN (no GPU); "
              "this is not a pass" % (total, maximum))
    else:
        print("TOTAL %g/%g" % (total, maximum))
    if args.json:
        report.write_json(args.json, report.document(reports, seed, gpu, status))
    if args.gradescope:
        report.write_json(args.gradescope, report.gradescope(reports, seed, gpu))
    return status


if __name__ == "__main__":
    sys.exit(main())
