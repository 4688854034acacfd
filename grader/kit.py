#!/usr/bin/env python3
"""The kit's helper commands (the top-level Makefile calls these).

  kit.py run LAB [ARGS...]      build the student's lab (labs/) and run its harness (Labs 04 and 05:
                                and draw the run's picture next to the program)
  kit.py doctor                 toolkit, GPU, whether dynamic parallelism runs, what will be skipped
  kit.py starters [--check]     regenerate labs/ starters from solutions/ (--check: fail on drift)
  kit.py lab-dir LAB            print the lab's folder name (01 -> 01-divergent-counter)
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gradelib import build, paths, starters  # noqa: E402
from gradelib import gpu as gpu_mod  # noqa: E402
from gradelib import registry  # noqa: E402


def resolve_or_exit(spec):
    try:
        return registry.resolve(spec)
    except KeyError as err:
        sys.exit("kit.py: %s" % err.args[0])


def _run_figures():
    """tools/draw_figures.py, which draws the pictures of one run (Labs 04 and 05), or None where
    this kit has no tools/draw_figures.py."""
    tools = os.path.join(paths.KIT_ROOT, "tools")
    if not os.path.exists(os.path.join(tools, "draw_figures.py")):
        return None
    sys.path.insert(0, tools)
    import draw_figures
    return draw_figures


def cmd_run(args):
    if not args:
        sys.exit("usage: kit.py run LAB [harness arguments...]   (make run LAB=01 ARGS='...')")
    lab = resolve_or_exit(args[0])
    makefile = paths.lab_makefile(lab.name)
    arch = build.cuda_arch()
    made = subprocess.run(["make", "--no-print-directory", "-f", makefile, "CUDA_ARCH=" + arch, "all"],
                          cwd=paths.KIT_ROOT, env=build.make_env())
    if made.returncode != 0:
        return made.returncode
    program = os.path.join(paths.BUILD_ROOT, "labs", lab.name, "sm_" + arch, build.lab_vars(lab.name)["program"])
    harness_args = args[1:]
    print("$ %s %s" % (paths.relative(program), " ".join(harness_args)), flush=True)
    # A lab with a picture of one run (Lab 04's curves, Lab 05's timelines): its result document goes
    # next to the program, and the picture is drawn from it.
    figures = _run_figures()
    doc_path = None
    if figures is not None and lab.name in figures.RUN_FIGURES:
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
    ctest = shutil.which("ctest")
    print("ctest:   %s" % (_version_line([ctest, "--version"]) if ctest else "NOT FOUND: `make test` needs CMake/CTest"))
    smi = shutil.which("nvidia-smi")
    print("driver:  %s" % (_version_line(["nvidia-smi", "--query-gpu=name,compute_cap,driver_version",
                                        "--format=csv,noheader"]) if smi else "nvidia-smi not found"))
    if not nvcc:
        return 1
    arch = build.cuda_arch()
    print("builds:  sm_%s%s" % (arch, " (set CUDA_ARCH=NN to override)" if not os.environ.get("CUDA_ARCH") else
                                 " (from CUDA_ARCH)"))
    info = gpu_mod.detect()
    if info.available:
        print("GPU:     %s, compute capability %s" % (info.name, info.compute_capability))
        print("dynamic parallelism: works (a kernel launched a child grid and the host saw its write)")
        print("grading: build, static and runtime checks all run")
        return 0
    print("GPU:     none usable: %s" % info.reason)
    print("grading: build and static checks run; runtime checks will be reported NOT RUN")
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
    for path in differing:
        print("wrote " + paths.relative(path))
    return 0


def cmd_lab_dir(args):
    print(resolve_or_exit(args[0] if args else "").name)
    return 0


COMMANDS = {"run": cmd_run, "doctor": cmd_doctor, "starters": cmd_starters, "lab-dir": cmd_lab_dir}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    sys.exit(COMMANDS[sys.argv[1]](sys.argv[2:]))
