#!/usr/bin/env python3
"""Grade CUDA dynamic parallelism labs.

  python3 grader/grade.py [--lab NN ...] [--submission DIR] [--seed S] [--json FILE]
                          [--gradescope FILE] [--timeout SEC] [--verbose] [--no-sandbox]
  python3 grader/grade.py --lab NN --check "CHECK NAME" [...]    one check, and what it depends on
  python3 grader/grade.py batch SUBMISSIONS_DIR --lab NN [--out DIR] [--jobs J] [--timeout SEC]
                          [--regrade] [--seed S] [--shard I/N] [--roster FILE] [--no-sandbox]
  python3 grader/grade.py merge SHARD_OUT_DIR... --out DIR [--roster FILE]

(batch and merge: see gradelib/batch.py, which gives their own exit statuses.)

Exit status: 0 full marks with every check run; 1 points lost; 2 bad usage, no nvcc on PATH, or no sandbox
can be made here and --no-sandbox was not given;
77 no points lost, but checks were not run for what this machine lacks (a usable GPU, or compute-sanitizer
for the memcheck check);
141 the output was closed before the grader finished (e.g. `grade.py ... | head`): it stops quietly,
as a command killed by SIGPIPE does (128 + 13).
"""
import argparse
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gradelib import archives, batch, build, failures, feedback, grading  # noqa: E402
from gradelib import checks as chk  # noqa: E402
from gradelib import exits  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
from gradelib import registry  # noqa: E402
from gradelib import paths, report  # noqa: E402
from gradelib.grading import grade_lab  # noqa: E402


# What closing the output early costs: the status of a command killed by SIGPIPE (128 + 13).
BROKEN_PIPE = 141

SUBCOMMANDS_HELP = """\
grade a class, or merge the shards of one (each has its own --help):
  grade.py batch SUBMISSIONS_DIR --lab NN [--out DIR] [--jobs J] [--timeout SEC] [--regrade] [--seed S] [--shard I/N] [--roster FILE] [--no-sandbox]
  grade.py merge SHARD_OUT_DIR... --out DIR [--roster FILE]

exit status: 0 full marks; 1 points lost; 2 bad usage, no nvcc, or no sandbox (see --no-sandbox); 77 no points lost but checks not run (no GPU, or no compute-sanitizer);
141 output closed early (e.g. | head)"""


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="grade.py", description="Grade CUDA dynamic parallelism labs.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=SUBCOMMANDS_HELP)
    p.add_argument("--lab", action="append", metavar="NN",
                   help="lab to grade: 4, 04 or 04-bezier-streams (repeatable; default: every lab)")
    p.add_argument("--submission", metavar="DIR", default=paths.LABS_DIR,
                   help="folder with the lab's files, or with NN-name/ folders (default: labs/); also an "
                        "archive of one (.zip, .tar, .tar.gz, ...) or one lab file")
    p.add_argument("--seed", type=int, help="seed for the random test cases (default: a fresh one, printed)")
    p.add_argument("--json", metavar="FILE", help="write the full results as JSON")
    p.add_argument("--gradescope", metavar="FILE", help="write Gradescope's results.json")
    p.add_argument("--timeout", type=float, metavar="SEC",
                   help="time limit in seconds for each test case (default: 6 s, the lab's own time_limit "
                        "for its timing cases and those that need much GPU memory, and at least 20 s while "
                        "other runs share the GPU)")
    p.add_argument("--html", metavar="DIR",
                   help="also write each lab's feedback as a page, DIR/<lab>.html, with a picture of your run "
                        "where the lab has one (make grade: build/feedback/)")
    p.add_argument("--check", metavar="NAME",
                   help="grade one check of one lab (--lab NN), as its line in the report names it: the check, "
                        "those it depends on, and only the test cases it reads (a timing check: the timing "
                        "cases; another runtime check: the others). Quicker while you work on it; your grade "
                        "is the whole rubric's")
    p.add_argument("--verbose", action="store_true", help="show the message of every check")
    p.add_argument("--gpus", metavar="LIST", help="the GPUs it may grade on, as CUDA_VISIBLE_DEVICES entries: 0,2 "
                   "(default: $KIT_GPUS, else every GPU visible); it takes the one fewest of its graders use")
    p.add_argument("--no-sandbox", action="store_true",
                   help="build and run the submission without the sandbox (it then runs as you, with your files and "
                        "network): only for code you trust, on a machine where no sandbox can be made")
    p.add_argument("--in-container", action="store_true",
                   help="grading inside a throwaway container of one submission (Gradescope's autograder): where no "
                        "sandbox can be made there, grade without it and say so in the results")
    return p.parse_args(argv)


# What each exit status means, said on the grader's last line: `make grade` shows only "Error 77".
STATUS_WORDS = {exits.FAILED: "points lost", exits.NOT_RUN: "no points lost, but checks were not run for what "
                "this machine lacks (no usable GPU, or no compute-sanitizer); not a pass"}


def submission_folder(path, labs, scratch):
    """The folder to grade for --submission path: the folder itself; an archive unpacked into scratch;
    or one lab file, copied there (archives.Submission.open, as a batch does). Raises ValueError with
    what is expected."""
    if os.path.isdir(path):
        return path
    if not os.path.exists(path):
        raise ValueError("no such folder: %s" % path)
    name = os.path.basename(path)
    if archives.archive_suffix(name):
        return archives.Submission(name, archives.Submission.ARCHIVE, path).open(scratch)
    lab_files = [f for lab in labs for f in build.lab_vars(lab.name)["student_files"]]
    if name in lab_files:
        return archives.Submission(name, archives.Submission.FILES, files={name: path}).open(scratch)
    raise ValueError("%s is a file, but not an archive (%s) nor a lab file (%s): give the folder that holds "
                     "your files" % (path, ", ".join(archives.ARCHIVE_SUFFIXES), ", ".join(lab_files)))


def exit_status(reports):
    results = [r for rep in reports for r in rep.results]
    if chk.points_lost(results):
        return exits.FAILED
    if chk.lacked(results):
        return exits.NOT_RUN
    return exits.OK


def main(argv=None):
    """Every subcommand, with one answer to a closed output (`grade.py batch ... | head`): stop quietly,
    with BROKEN_PIPE, instead of a traceback."""
    try:
        try:
            return _main(sys.argv[1:] if argv is None else argv)
        finally:
            sys.stdout.flush()  # a closed pipe shows here, not as a warning at exit
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):  # nothing more to say, and Python's last flush must not fail
            try:
                os.dup2(devnull, stream.fileno())
            except (OSError, ValueError):
                pass
        return BROKEN_PIPE


def _main(argv):
    if argv and argv[0] == "batch":
        return batch.run_batch(argv[1:])
    if argv and argv[0] == "merge":
        return batch.run_merge(argv[1:])
    args = parse_args(argv)
    if args.check is not None and (len(args.lab or ()) != 1 or args.gradescope):
        print("grade.py: --check grades one check of one lab: give one --lab, and no --gradescope (a part of "
              "a lab is not a grade)", file=sys.stderr)
        return exits.USAGE
    try:
        labs = [registry.resolve(s) for s in args.lab] if args.lab else list(registry.all_labs().values())
        if args.check is not None:
            labs = [grading.one_check(labs[0], args.check)]
    except KeyError as err:
        print("grade.py: %s" % err.args[0], file=sys.stderr)
        return exits.USAGE
    scratch = tempfile.mkdtemp(prefix="submission-")
    try:
        return _grade(args, labs, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _grade(args, labs, scratch):
    problem = build.toolkit_problem()
    if problem:
        print("grade.py: %s" % problem)
        return exits.USAGE
    try:
        submission = os.path.abspath(submission_folder(args.submission, labs, scratch))
    except (ValueError, archives.BadArchive) as err:
        print("grade.py: %s" % err, file=sys.stderr)
        return exits.USAGE
    if args.timeout is not None and args.timeout <= 0:
        print("grade.py: --timeout must be positive", file=sys.stderr)
        return exits.USAGE
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10 ** 6)

    sandboxed, sandbox_line = grading.sandbox_choice(args.no_sandbox, in_container=args.in_container)
    salted = " with the instructor's salt" if paths.instructor_salt() else ""
    print("seed %d%s (grade.py --seed %d repeats these test cases%s)" % (seed, salted, seed, salted))
    print(sandbox_line)
    # One submission needs one GPU: the pool holds the first that passed its probe (or why none did).
    gpus, gpu_lines = gpu_mod.GpuPool.probed(sandboxed, args.gpus, need=1)
    gpu = gpus.shown
    if not gpu.available:
        gpu_lines.insert(0, "GPU: none usable. Build and static checks run; runtime checks will NOT run.\n     %s"
                         % gpu.reason.replace("\n", "\n     "))
    elif gpu.token is not None:
        gpu_lines.append("graded on GPU %s (%s)" % (gpu.token, gpu.pci_bus_id))
    print("\n".join(gpu_lines), flush=True)

    reports = []
    for lab in labs:
        try:
            rep = grade_lab(lab, submission, seed, timeout=args.timeout, gpu=gpu, sandboxed=sandboxed)
        except failures.MACHINE_PROBLEMS as err:
            print("grade.py: %s" % err, file=sys.stderr)
            return exits.FAILED
        reports.append(rep)
        print()
        print(report.lab_text(rep, verbose=args.verbose))
        sys.stdout.flush()

    status = exit_status(reports)
    total = round(sum(r.score for r in reports), 2)
    maximum = sum(r.max_score for r in reports)
    print()
    # What a status other than full marks means is said once, on the last line.
    if args.check is not None:
        print("TOTAL %g/%g on '%s' and the checks it depends on%s (make grade grades the whole rubric)"
              % (total, maximum, args.check, ": all passed" if status == exits.OK else ""))
    else:
        print("TOTAL %g/%g%s" % (total, maximum, ": full marks" if status == exits.OK else ""))
    if args.html:
        for rep in reports:
            page = feedback.write_page(os.path.join(args.html, rep.lab.name + ".html"), rep,
                                       "%s: your feedback" % rep.lab.title,
                                       ["Graded with seed %d on %s." % (seed, gpu.name if gpu.available else
                                                                        "a machine without a usable GPU")])
            print("feedback page: %s" % paths.relative(page))
        feedback.write_index(args.html)
    if status != exits.OK:
        print("exit status %d: %s" % (status, STATUS_WORDS[status]))
    if args.json:
        report.write_json(args.json, report.document(reports, seed, gpu, status))
    if args.gradescope:
        report.write_json(args.gradescope, report.gradescope(reports, seed, gpu,
                                                             notes=[] if sandboxed else [sandbox_line]))
    return status


if __name__ == "__main__":
    sys.exit(main())
