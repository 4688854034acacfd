#!/usr/bin/env python3
"""The kit's helper commands (the top-level Makefile calls these).

  kit.py run LAB [ARGS...]      build the student's lab (labs/) and run its harness (and, for a lab with a
                                picture of a run, draw it next to the program)
  kit.py legacy LAB             the lab's legacy-API demonstration (make legacy LAB=02)
  kit.py bench LAB [ARGS...]    the lab's timing table on this GPU (make bench LAB=04)
  kit.py sanitize LAB [ARGS...] build the student's lab and run its harness under compute-sanitizer's
                                memcheck, the device heap checked too (make sanitize LAB=04); without
                                ARGS, on the case the memcheck check runs
  kit.py doctor                 toolkit, GPU, whether dynamic parallelism runs, what will be skipped
  kit.py starters [--check]     regenerate labs/ starters from solutions/ (--check: fail on drift)
  kit.py need-gpu COMMAND       exit 77 with make COMMAND's one line where no GPU can run it (make costs)
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gradelib import build, exits, figures, memcheck, paths, sandbox, starters  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
from gradelib import registry  # noqa: E402


USAGE = {"run": "make run LAB=01 [ARGS='--K 8 --M 4 --N 1000']", "legacy": "make legacy LAB=NN",
         "bench": "make bench LAB=NN [ARGS='--repeats 9']", "sanitize": "make sanitize LAB=NN [ARGS='...']"}


def resolve_or_exit(spec, command=None):
    """The lab spec names, or exit 2 with the usage of `make COMMAND` and the labs that have it."""
    if not spec:
        print("usage: %s%s" % (USAGE.get(command, "kit.py %s LAB" % command), _labs_with(command)))
        sys.exit(2)
    try:
        return registry.resolve(spec)
    except KeyError as err:
        print("make %s: %s" % (command, err.args[0]) if command else "kit.py: %s" % err.args[0])
        sys.exit(2)


def lab_commands(lab):
    """The extra make targets a lab's Makefile has (legacy, bench)."""
    with open(paths.lab_makefile(lab.name)) as f:
        return set(re.findall(r"^(legacy|bench):", f.read(), re.M))


def _labs_with(command):
    if command not in ("legacy", "bench"):
        return ""
    having = [lab.name for lab in registry.all_labs().values() if command in lab_commands(lab)]
    return " (labs with one: %s)" % ", ".join(having)


def no_gpu_exit(command, lab=None):
    """Exit 77 with one line when no GPU here can run dynamic parallelism; return otherwise."""
    info = gpu_mod.detect()
    if info.available:
        return
    print("make %s%s: not run: no usable GPU here: %s" % (command, " LAB=%s" % lab.number if lab else "",
                                                          info.reason.splitlines()[0]))
    sys.exit(exits.NOT_RUN)


def cmd_need_gpu(args):
    """kit.py need-gpu COMMAND: the one line and status 77 of a command that needs the GPU, where none is."""
    no_gpu_exit(args[0] if args else "this")
    return 0


def _lab_make(lab, targets, variables=()):
    """make -f the lab's Makefile TARGETS, for this machine's architecture; its exit status."""
    return subprocess.run(["make", "--no-print-directory", "-f", paths.lab_makefile(lab.name),
                           "CUDA_ARCH=" + build.cuda_arch()] + list(variables) + list(targets),
                          cwd=paths.KIT_ROOT, env=build.make_env()).returncode


def _build_lab(lab):
    """make the lab's program from labs/ (make all); its exit status. Two commands at once (a test suite)
    take turns, so neither runs a program the other is writing."""
    with build.kit_build_lock():
        return _lab_make(lab, ["all"])


def _student_program(lab):
    """The program _build_lab makes from the student's files in labs/."""
    return os.path.join(paths.BUILD_ROOT, "labs", lab.name, "sm_" + build.cuda_arch(),
                        build.lab_vars(lab.name)["program"])


def cmd_run(args):
    lab = resolve_or_exit(args[0] if args else "", "run")
    made = _build_lab(lab)
    if made != 0:
        return made
    program = _student_program(lab)
    harness_args = args[1:]
    if harness_args in (["--help"], ["--describe"]):  # the program's options table: no GPU needed
        return subprocess.run([program] + harness_args, env=build.make_env()).returncode
    no_gpu_exit("run", lab)
    print("$ %s %s" % (paths.relative(program), " ".join(harness_args)), flush=True)
    # A lab with a picture of one run (figures.RUN_FIGURES): its result document goes
    # next to the program, and the picture is drawn from it.
    doc_path = None
    if lab.name in figures.RUN_FIGURES:
        if "--json" in harness_args[:-1]:  # the student's own document: drawn from there
            doc_path = harness_args[harness_args.index("--json") + 1]
        else:
            doc_path = os.path.join(os.path.dirname(program), "run.json")
            if os.path.exists(doc_path):
                os.remove(doc_path)
            harness_args = harness_args + ["--json", doc_path]
    code = subprocess.run([program] + harness_args, env=build.make_env()).returncode
    if code != 0 or doc_path is None or not os.path.isfile(doc_path):
        return code
    try:
        with open(doc_path) as f:
            doc = json.load(f)
        picture = figures.draw_run_figure(lab.name, doc, os.path.dirname(program))
    except ValueError as err:  # json's error, and the figure's (FigureError is one)
        print("\nno picture: %s" % err)
        return code
    print("\npicture of this run: %s" % paths.relative(picture))
    return code


def cmd_sanitize(args):
    lab = resolve_or_exit(args[0] if args else "", "sanitize")
    sanitizer = memcheck.find()
    if sanitizer is None:
        print("make sanitize LAB=%s: not run: no compute-sanitizer here (it comes with the CUDA toolkit, in "
              "its bin/ folder beside nvcc)" % lab.number)
        return exits.NOT_RUN
    made = _build_lab(lab)
    if made != 0:
        return made
    no_gpu_exit("sanitize", lab)
    program = _student_program(lab)
    harness_args = args[1:] or lab.harness_args(lab.memcheck_case)
    argv = memcheck.command(sanitizer) + [program] + harness_args
    print("$ %s" % " ".join(paths.relative(a) if a == program else a for a in argv), flush=True)
    code = subprocess.run(argv, env=build.make_env()).returncode
    if code == memcheck.ERRORS_EXIT:
        print("make sanitize LAB=%s: memcheck found errors (above: what, and where in your file)" % lab.number)
    return code


def _lab_command(command, args, needs_gpu):
    lab = resolve_or_exit(args[0] if args else "", command)
    if command not in lab_commands(lab):
        print("make %s LAB=%s: %s has no %s command%s" % (command, args[0], lab.title, command, _labs_with(command)))
        return 2
    if needs_gpu:
        made = _build_lab(lab)
        if made != 0:
            return made
        no_gpu_exit(command, lab)
    return _lab_make(lab, [command], ["ARGS=" + " ".join(args[1:])] if args[1:] else [])


def cmd_legacy(args):
    return _lab_command("legacy", args, needs_gpu=False)


def cmd_bench(args):
    return _lab_command("bench", args, needs_gpu=True)


def _version_line(argv, containing=None):
    """The line of a tool's version output worth showing: the first, or the first containing a word."""
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    except OSError as err:
        return "cannot run %s: %s" % (argv[0], err.strerror)
    lines = [l for l in out.stdout.splitlines() if l.strip() and (containing is None or containing in l)]
    return lines[0] if lines else ""


def cmd_doctor(_args):
    print("kit:     %s" % paths.KIT_ROOT)
    nvcc = shutil.which("nvcc")
    print("nvcc:    %s" % ((_version_line(["nvcc", "--version"], containing="release") + "  (" + nvcc + ")") if nvcc else
                           "NOT FOUND: install the CUDA toolkit (12.0 or newer) and put nvcc on PATH"))
    print("make:    %s" % _version_line(["make", "--version"]))
    print("python:  %s" % sys.version.split()[0])
    # The kit's own tests are the full kit's (course staff): the student kit has no solutions/ (as
    # the Makefile's KIT_ONLY tells them apart) and says nothing of them.
    full_kit = os.path.isdir(paths.SOLUTIONS_DIR)
    if full_kit:
        ctest = shutil.which("ctest")
        print("ctest:   %s" % (_version_line([ctest, "--version"]) if ctest else "NOT FOUND: `make test` needs CMake/CTest"))
    sanitizer = memcheck.find()
    print("compute-sanitizer: %s" % ("%s  (%s)" % (_version_line([sanitizer, "--version"], containing="Version"), sanitizer)
                                     if sanitizer else "NOT FOUND: the memcheck check and make sanitize will be NOT "
                                     "RUN (it comes with the CUDA toolkit, in bin/ beside nvcc)"))
    smi = shutil.which("nvidia-smi")
    print("driver:  %s" % (_version_line(["nvidia-smi", "--query-gpu=name,compute_cap,driver_version",
                                        "--format=csv,noheader"]) if smi else "nvidia-smi not found"))
    if not nvcc:
        return 1
    arch = build.cuda_arch()
    print("builds:  sm_%s%s" % (arch, " (set CUDA_ARCH=NN to override)" if not os.environ.get("CUDA_ARCH") else
                                 " (from CUDA_ARCH)"))
    sandboxed, why = sandbox.works()
    if sandboxed:
        print("sandbox: works: each build and run of a submission is sandboxed (user, mount, PID and network "
              "namespaces%s)" % (", as nobody: you are root" if os.geteuid() == 0 else ""))
    else:
        print("sandbox: CANNOT be made here: %s\n         the grader refuses to grade unless given --no-sandbox "
              "(make grade NO_SANDBOX=1): only for code you trust: it then runs as you, with your files and "
              "network" % why)
    info = gpu_mod.detect(sandboxed)
    if info.available:
        print("GPU:     %s, compute capability %s" % (info.name, info.compute_capability))
        print("dynamic parallelism: works (a kernel launched a child grid and the host saw its write)")
        print("grading: build, static and runtime checks all run%s" % (
            "" if sanitizer else ", but for memcheck (no compute-sanitizer)"))
        return 0
    print("GPU:     none usable: %s" % info.reason)
    print("grading: build and static checks run; runtime checks will be reported NOT RUN")
    if full_kit:
        print("tests:   `make test` reports the GPU tests as not run (skipped), never as passed")
    return 0


def cmd_starters(args):
    check_only = "--check" in args
    try:
        differing = starters.generate(check_only=check_only)
    except starters.MarkerError as err:
        sys.exit("kit.py starters: %s" % err)
    if check_only:
        if differing:
            print("starters out of date (run `make starters`):")
            for path in differing:
                print("  " + paths.relative(path))
            return 1
        print("starters match their solutions (%d files)" % len(starters.pairs()))
        return 0
    for path, kept in differing:
        print("wrote %s%s" % (paths.relative(path), " (the file it replaced is kept as %s)" % paths.relative(kept)
                                                     if kept else ""))
    if not differing:
        print("starters already match their solutions (%d files): nothing to write" % len(starters.pairs()))
    return 0


COMMANDS = {"run": cmd_run, "legacy": cmd_legacy, "bench": cmd_bench, "sanitize": cmd_sanitize, "doctor": cmd_doctor,
            "starters": cmd_starters, "need-gpu": cmd_need_gpu}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    # --help right after a command (or anywhere for one that takes no lab) does nothing else
    if sys.argv[2:3] in (["--help"], ["-h"]) or (sys.argv[1] in ("starters", "doctor") and
                                                 {"--help", "-h"} & set(sys.argv[2:])):
        print(__doc__)
        sys.exit(0)
    sys.exit(COMMANDS[sys.argv[1]](sys.argv[2:]))
