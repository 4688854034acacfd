"""Stage a submission next to pristine kit files and build it with the kit's make rules.

Only the files a lab names (its Makefile's STUDENT_FILES) are copied from a submission, into a
fresh folder; everything else (harness, headers, make rules) comes from the kit. Builds happen
under build/, never in labs/ or in the submission.
"""
import contextlib
import difflib
import fcntl
import os
import re
import shutil
import subprocess
import threading

from . import failures, paths, sandbox
from .process import run_bounded

BUILD_TIMEOUT = 600  # seconds for one make call (nvcc can be slow on a loaded machine)

_lab_vars = {}


def lab_vars(lab_name):
    """PROGRAM and STUDENT_FILES as the lab's Makefile declares them (its single source)."""
    if lab_name not in _lab_vars:
        out = subprocess.run(
            ["make", "-s", "--no-print-directory", "-f", paths.lab_makefile(lab_name),
             "CUDA_ARCH=0", "print-lab"], env=make_env(),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        if out.returncode != 0:
            raise RuntimeError("cannot read %s: %s" % (paths.lab_makefile(lab_name), out.stdout))
        values = {}
        for line in out.stdout.splitlines():
            key, _, value = line.partition("=")
            values[key.strip()] = value.split()
        _lab_vars[lab_name] = {"program": values["PROGRAM"][0], "student_files": values["STUDENT_FILES"]}
    return _lab_vars[lab_name]


def find_submission_dir(lab_name, submission_root):
    """Where a submission keeps the lab's files: the folder itself, a folder named after the lab,
    or else the shallowest folder below that holds the lab's first file (archives and uploads
    often wrap everything in a folder or two). The folder itself when none does."""
    first = lab_vars(lab_name)["student_files"][0]
    for candidate in (submission_root, os.path.join(submission_root, lab_name)):
        if os.path.isfile(os.path.join(candidate, first)):
            return candidate
    nested = os.path.join(submission_root, lab_name)
    if os.path.isdir(nested):
        return nested  # the lab's folder, with its file missing: say so about that folder
    best = None
    for folder, dirs, files in os.walk(submission_root):
        dirs.sort()
        if first in files:
            depth = os.path.relpath(folder, submission_root).count(os.sep)
            if best is None or depth < best[0]:
                best = (depth, folder)
    return best[1] if best else submission_root


MAX_STUDENT_FILE_BYTES = 1024 * 1024  # a lab's source file is a few KiB; more is a mistake or an attack


def stage(lab_name, submission_dir, work_dir):
    """Copy the lab's student files into work_dir/src. Returns (src_dir, problems): one (failure kind,
    line) per file that is missing or refused (a link, which could point at files outside the
    submission, or a file too large to be a source file)."""
    src_dir = os.path.join(work_dir, "src")
    os.makedirs(src_dir, exist_ok=True)
    problems = []
    for name in lab_vars(lab_name)["student_files"]:
        source = os.path.join(submission_dir, name)
        if os.path.islink(source):
            problems.append((failures.REFUSED_FILE, "%s is a symbolic link; submit the file itself" % name))
        elif not os.path.isfile(source):
            problems.append((failures.MISSING_FILE, "missing file: %s%s" % (name, _look_alike(submission_dir, name))))
        elif os.path.getsize(source) > MAX_STUDENT_FILE_BYTES:
            problems.append((failures.REFUSED_FILE, "%s is larger than %d KiB; it cannot be the lab's source file"
                             % (name, MAX_STUDENT_FILE_BYTES // 1024)))
        else:
            shutil.copyfile(source, os.path.join(src_dir, name))
    return src_dir, problems


def _look_alike(folder, name):
    """", but there is NAME2" for a file in folder whose name differs from name only in case or by a
    typo (a student's Divergent_Counter.cu or divergent_couter.cu), else ""."""
    try:
        present = [f for f in os.listdir(folder) if os.path.isfile(os.path.join(folder, f))]
    except OSError:
        return ""
    same_case = [f for f in present if f.lower() == name.lower()]
    close = same_case or difflib.get_close_matches(name, present, n=1, cutoff=0.8)
    if not close:
        return ""
    return " (there is %s: rename it to %s)" % (close[0], name)


def make_env():
    """The environment for the kit's make calls, without what an outer make passes down: run from
    `make grade LAB=01`, MAKEFLAGS would carry LAB=01 and any other command-line variable into
    every lab build."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}


def run_make(makefile, variables, targets=(), timeout=BUILD_TIMEOUT):
    """make -f MAKEFILE VAR=value... TARGETS, bounded, from the kit's top folder."""
    argv = ["make", "--no-print-directory", "-f", makefile] + \
        ["%s=%s" % kv for kv in sorted(variables.items())] + list(targets)
    return run_bounded(argv, timeout, cwd=paths.KIT_ROOT, env=make_env())


def make(lab_name, src_dir, build_dir, targets, cuda_arch, timeout=BUILD_TIMEOUT):
    return run_make(paths.lab_makefile(lab_name),
                    {"SRC_DIR": src_dir, "BUILD_DIR": build_dir, "CUDA_ARCH": cuda_arch}, targets, timeout)


def kit_objects_dir(cuda_arch):
    """Where the kit-owned objects every build links are kept (kit.mk's KIT_OBJ_DIR)."""
    return os.path.join(paths.BUILD_ROOT, "kit", "sm_%s" % cuda_arch)


_kit_objects_lock = threading.Lock()
_kit_objects_made = set()


@contextlib.contextmanager
def kit_build_lock():
    """Held while the kit builds its own objects or its GPU probe: graders running side by side (a
    test suite's tests, two terminals) take turns, so none links or runs a file another is writing."""
    os.makedirs(paths.BUILD_ROOT, exist_ok=True)
    fd = os.open(os.path.join(paths.BUILD_ROOT, ".kit-build.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def make_kit_objects(lab_name, cuda_arch):
    """Build (or find up to date) the kit-owned objects a lab's programs link, outside any sandbox, once
    per grader run: a sandboxed build sees them read-only and cannot change them. Raises RuntimeError
    when they do not build (a kit or toolkit problem, never a student's)."""
    with _kit_objects_lock:  # a batch's builds share them
        if (lab_name, cuda_arch) in _kit_objects_made:
            return
        with kit_build_lock():
            made = run_make(paths.lab_makefile(lab_name), {"CUDA_ARCH": cuda_arch}, ["kit-objects"])
        if made.ok:
            _kit_objects_made.add((lab_name, cuda_arch))
    if not made.ok:
        raise RuntimeError("the kit's own objects for %s did not build (%s):\n%s"
                           % (lab_name, made.describe(BUILD_TIMEOUT), compiler_errors(made.output)))


def toolkit_roots():
    """The CUDA toolkit's folder when nvcc lives outside the system's folders (a pip or a home install),
    for a sandbox to see; else nothing."""
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return []
    root = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    return [] if sandbox.under(root, sandbox.SYSTEM_ROOTS) else [root]


def sandboxed_make(lab_name, src_dir, build_dir, targets, cuda_arch, timeout=BUILD_TIMEOUT):
    """make as make() does, for a submission's files, in a sandbox (gradelib.sandbox) that sees the kit's
    headers, harness sources and make rules, the kit-owned objects (read-only, built by make_kit_objects
    first) and the staged files, and can write only build_dir: the submission's code is compiled where
    an #include of the grader, its salt, the reference solutions or another submission finds nothing."""
    make_kit_objects(lab_name, cuda_arch)
    os.makedirs(build_dir, exist_ok=True)
    policy = sandbox.Policy(
        read_only=[os.path.join(paths.KIT_ROOT, "common"), paths.lab_makefile(lab_name), kit_objects_dir(cuda_arch),
                   src_dir] + toolkit_roots(),
        writable=[build_dir], devices=("/dev/null",), cwd=paths.KIT_ROOT, tmp_bytes=1 << 30)
    argv = ["make", "--no-print-directory", "-f", paths.lab_makefile(lab_name),
            "SRC_DIR=" + src_dir, "BUILD_DIR=" + build_dir, "CUDA_ARCH=" + cuda_arch] + list(targets)
    return run_bounded(sandbox.wrap(policy, argv), timeout, cwd=paths.KIT_ROOT)


_arch = None


def cuda_arch():
    """The architecture every build of this grader run uses: $CUDA_ARCH, else detected once."""
    global _arch
    if _arch is None:
        _arch = os.environ.get("CUDA_ARCH") or subprocess.run(
            [os.path.join(paths.KIT_ROOT, "common", "detect-arch.sh")],
            stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout.strip() or "75"
    return _arch


# Where a build log's diagnostics start: a compiler error, or one of the linker's lines above its
# closing "collect2: error: ld returned 1 exit status", which name what is missing.
_DIAGNOSTIC = re.compile(r"error|undefined reference|multiple definition|/ld: |nvlink", re.I)
# The linker's names of the object a reference is in, which say nothing to a student:
# "tmpxft_000071ed_00000000-6_harness.cudafe1.cpp:(.text.startup+0x37c): ".
_LINKER_PLACE = re.compile(r"\S*tmpxft_\S+?\.cudafe1\.cpp:\([^)]*\):\s*")
# nvlink names device functions mangled: "Undefined reference to '_Z11diverge_ctaPyi' in '...'".
_MANGLED = re.compile(r"[`'](_Z\w+)'")
_UNDEFINED = re.compile(r"undefined reference to [`'](.+?)'", re.I)


def demangled(names):
    """{mangled: readable} for C++ symbol names, through c++filt where the machine has it."""
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), stdout=subprocess.PIPE,
                             universal_newlines=True, check=False, timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(zip(names, out)) if len(out) == len(names) else {}


def compiler_errors(output, limit=30):
    """What a student needs from a build log: the compiler's or the linker's messages from the first
    one on, without make's echo of each command; for a link that failed on a missing function, first
    a line that names it (an empty file, a misnamed kernel or a changed signature)."""
    lines = [l for l in output.splitlines()
             if not l.startswith(("nvcc ", "make", "mkdir ")) and l.strip()]
    mangled = sorted({m for l in lines for m in _MANGLED.findall(l)})
    readable = demangled(mangled) if mangled else {}
    lines = [_MANGLED.sub(lambda m: "`%s'" % readable.get(m.group(1), m.group(1)), _LINKER_PLACE.sub("", l))
             for l in lines]
    first = next((i for i, l in enumerate(lines) if _DIAGNOSTIC.search(l)), 0)
    shown = lines[first:first + limit]
    if len(lines) > first + limit:
        shown.append("[... %d more lines ...]" % (len(lines) - first - limit))
    missing = []
    for l in lines:
        for name in _UNDEFINED.findall(l) + [readable.get(m, m) for m in _MANGLED.findall(l) if "ndefined" in l]:
            if name not in missing:
                missing.append(name)
    if missing:
        shown.insert(0, "the kit's code calls %s, which your files do not define (an empty or unsaved file, a "
                        "misspelt name, or parameters that differ from the lab's header):" % ", ".join(missing))
    return "\n".join(shown)
