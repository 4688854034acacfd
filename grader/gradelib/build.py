"""Stage a submission next to pristine kit files and build it with the kit's make rules.

Only the files a lab names (its Makefile's STUDENT_FILES) are copied from a submission, into a
fresh folder; everything else (harness, headers, make rules) comes from the kit. Builds happen
under build/, never in labs/ or in the submission.
"""
import contextlib
import difflib
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time

from . import failures, paths, process, sandbox
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


# Builds yield the CPU to harness runs: a timing case's host threads (Lab 05 times when each thread's
# wait returns) must not queue behind a class's compilers on the same cores.
BUILD_NICENESS = 10


def niced(argv):
    """argv run at BUILD_NICENESS, where the machine has nice(1)."""
    nice = shutil.which("nice")
    return [nice, "-n", str(BUILD_NICENESS)] + argv if nice else argv


def run_make(makefile, variables, targets=(), timeout=BUILD_TIMEOUT):
    """make -f MAKEFILE VAR=value... TARGETS, bounded, from the kit's top folder."""
    argv = ["make", "--no-print-directory", "-f", makefile] + \
        ["%s=%s" % kv for kv in sorted(variables.items())] + list(targets)
    return run_bounded(niced(argv), timeout, cwd=paths.KIT_ROOT, env=make_env())


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
    per grader run: a sandboxed build sees them read-only and cannot change them. Raises
    failures.MachineProblem when they do not build (a kit or toolkit problem, never a student's)."""
    with _kit_objects_lock:  # a batch's builds share them
        if (lab_name, cuda_arch) in _kit_objects_made:
            return
        with kit_build_lock():
            made = run_make(paths.lab_makefile(lab_name), {"CUDA_ARCH": cuda_arch}, ["kit-objects"])
        if made.ok:
            _kit_objects_made.add((lab_name, cuda_arch))
    if not made.ok:
        raise failures.MachineProblem("the kit's own objects for %s did not build (%s):\n%s"
                           % (lab_name, made.describe(BUILD_TIMEOUT), compiler_errors(made.output)))


def toolkit_problem():
    """Why this machine cannot build a lab (no nvcc where make looks for it, or a TMPDIR nvcc cannot
    write its temporary files in), or None: the machine's problem, said before anything is graded,
    never a student's compile error."""
    nvcc = os.environ.get("NVCC") or "nvcc"
    tmp = os.environ.get("TMPDIR")
    if tmp and not (os.path.isdir(tmp) and os.access(tmp, os.W_OK | os.X_OK)):
        return ("TMPDIR=%s is not a folder this user can write, and nvcc writes its temporary files there, so no "
                "lab can be built and nothing is graded: create it (mkdir -p %s) or unset TMPDIR" % (tmp, tmp))
    if shutil.which(nvcc):
        return None
    usual = "/usr/local/cuda/bin"
    fix = ("the CUDA toolkit is in %s here: export PATH=%s:$PATH" % (usual, usual)
           if os.path.exists(os.path.join(usual, "nvcc")) else
           "install the CUDA toolkit, or add the folder that holds nvcc to PATH (export PATH=/that/folder:$PATH)")
    return "no nvcc on this machine's PATH (%s), so no lab can be built and nothing is graded: %s" % (nvcc, fix)


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
    return run_bounded(niced(sandbox.wrap(policy, argv)), timeout, cwd=paths.KIT_ROOT)


_arch = None


def cuda_arch():
    """The architecture every build of this grader run uses: $CUDA_ARCH, else detected once."""
    global _arch
    if _arch is None:
        _arch = os.environ.get("CUDA_ARCH") or subprocess.run(
            [os.path.join(paths.KIT_ROOT, "common", "detect-arch.sh")],
            stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout.strip() or "75"
    return _arch


# ---- the build cache ----------------------------------------------------------------------------
#
# A lab build depends on nothing but its inputs: the staged student files, what the build sees of the
# kit (the lab's Makefile and every file under common/: make rules, headers, harness and shared
# sources), the targets, the architecture, whether it ran in the sandbox, and the toolchain (nvcc's
# and the host compiler's versions, and the variables that change what they do). cached_make keeps
# each build's outputs with make's verdict and log under a hash of all of these, so that the same
# files built again (a resubmission, the starter in many class folders, the kit's own tests) cost a
# copy instead of an nvcc run. A submission decides only its own files, hence only its own key.
#
# Kept: builds that succeeded, and builds that failed with a clean log (a compile error gives the same
# message again). Never kept: a timeout, a flood, a crash, the sandbox's own failure, or a failure
# whose log shows the machine's trouble (a compiler killed, a full disk): those may not happen again.
#
# Entries live in BUILD_ROOT/cache/KEY/ (or in the folder $KIT_BUILD_CACHE names; 0 turns the cache
# off). Each is written in a temporary folder and renamed into place, so a grader side by side never
# sees half of one, and a lock per key makes a second grader wait for the first's build rather than
# repeat it. The least recently used entries go beyond CACHE_MAX_ENTRIES or CACHE_MAX_BYTES.

CACHE_ENV = "KIT_BUILD_CACHE"
CACHE_MAX_ENTRIES = 400
CACHE_MAX_BYTES = 1 << 30
CACHE_MAX_ENTRY_BYTES = 64 << 20  # a build's outputs are a few MiB; a larger one is not kept
CACHE_OFF = ("0", "off", "no", "false")
_CACHE_FORMAT = b"kit-build-cache 1"
_KEY = re.compile(r"[0-9a-f]{64}$")
_STALE_SECONDS = 24 * 3600  # a temporary folder or lock file this old is a crashed grader's leftover
# Variables that change what make or nvcc do with the same files.
_BUILD_ENV = ("NVCC", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "EXTRA_NVCC_FLAGS", "CPATH",
              "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "LD_LIBRARY_PATH")
_MACHINE_TROUBLE = re.compile(r"died due to signal|\bKilled\b|\bTerminated\b|Segmentation fault|core dumped|"
                              r"No space left|Disk quota|Cannot allocate memory|out of memory|Resource temporarily "
                              r"unavailable|File size limit exceeded|Too many open files|Interrupt", re.I)


def cache_dir():
    """The build cache's folder: $KIT_BUILD_CACHE when it is an absolute path, else BUILD_ROOT/cache;
    None when $KIT_BUILD_CACHE is 0 (the cache is off)."""
    setting = os.environ.get(CACHE_ENV, "").strip()
    if setting.lower() in CACHE_OFF:
        return None
    return setting if os.path.isabs(setting) else os.path.join(paths.BUILD_ROOT, "cache")


_toolchain = None
_toolchain_lock = threading.Lock()


def toolchain_id():
    """What the toolchain is, for the cache's key: where nvcc and the host compilers are and what their
    --version says. Asked once per process."""
    global _toolchain
    with _toolchain_lock:
        if _toolchain is None:
            parts = []
            for tool in (os.environ.get("NVCC") or "nvcc", "gcc", "g++"):
                found = shutil.which(tool)
                said = ""
                if found:
                    try:
                        said = subprocess.run([found, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                              universal_newlines=True, timeout=60, check=False).stdout
                    except (OSError, subprocess.SubprocessError) as err:
                        said = "no answer: %s" % err
                parts.append("%s at %s:\n%s" % (tool, found and os.path.realpath(found), said))
            _toolchain = "\n".join(parts)
    return _toolchain


def _files_below(top):
    """[(path relative to top, path)] of every file below top, in a fixed order."""
    found = []
    for folder, dirs, names in os.walk(top):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, top), path))
    return found


def build_key(lab_name, src_dir, targets, cuda_arch, sandboxed):
    """The hash of everything a lab build's outcome depends on (see the top of this section)."""
    digest = hashlib.sha256(_CACHE_FORMAT)

    def add(label, data):
        label = label.encode()
        digest.update(b"%d:%s %d:" % (len(label), label, len(data)))  # lengths first: no two inputs read alike
        digest.update(data)

    def read(path):
        with open(path, "rb") as f:
            return f.read()
    add("toolchain", toolchain_id().encode())
    add("environment", json.dumps({k: os.environ.get(k) for k in _BUILD_ENV}, sort_keys=True).encode())
    add("lab", lab_name.encode())
    add("targets", json.dumps(list(targets)).encode())
    add("arch", str(cuda_arch).encode())
    add("sandboxed", b"yes" if sandboxed else b"no")
    add("makefile", read(paths.lab_makefile(lab_name)))
    for name, path in _files_below(src_dir):
        add("student/" + name, read(path))
    for name, path in _files_below(os.path.join(paths.KIT_ROOT, "common")):
        add("common/" + name, read(path))
    return digest.hexdigest()


def cached_make(lab_name, src_dir, build_dir, targets, cuda_arch, sandboxed=True, timeout=BUILD_TIMEOUT):
    """sandboxed_make (or make, unsandboxed) through the build cache: on a hit, the kept outputs are
    copied into build_dir as new files and make's verdict and log come back as a RunResult, the log's
    folders those of this build; on a miss, the build runs and is kept when it may be. A cache that
    cannot be read or written costs the build, never the grade."""
    run = sandboxed_make if sandboxed else make
    root = cache_dir()
    if root is None:
        return run(lab_name, src_dir, build_dir, targets, cuda_arch, timeout)
    try:
        key = build_key(lab_name, src_dir, targets, cuda_arch, sandboxed)
        os.makedirs(os.path.join(root, "locks"), exist_ok=True)
    except OSError:
        return run(lab_name, src_dir, build_dir, targets, cuda_arch, timeout)
    with _key_lock(root, key):
        hit = _fetch(root, key, src_dir, build_dir)
        if hit is not None:
            if sandboxed:
                sandbox.give_to_sandbox(build_dir)  # as a sandboxed build would have left it
            return hit
        made = run(lab_name, src_dir, build_dir, targets, cuda_arch, timeout)
        # Kept only if no input changed while it ran (a kit file saved meanwhile): else the build may be
        # of other files than those the key names.
        try:
            unchanged = build_key(lab_name, src_dir, targets, cuda_arch, sandboxed) == key
        except OSError:
            unchanged = False
        if unchanged and keepable(made):
            _store(root, key, made, src_dir, build_dir)
    return made


def keepable(made):
    """Whether a build's outcome is the same every time its inputs are: a success, or a failure with
    a clean log; never a timeout, a flood, a crash, the sandbox's own failure or the machine's trouble."""
    if made.verdict == process.OK:
        return True
    return (made.verdict == process.EXITED and not sandbox.setup_failure(made.output)
            and not _MACHINE_TROUBLE.search(made.output))


@contextlib.contextmanager
def _key_lock(root, key):
    """Held while one key is looked up and built: a second grader waits, then finds the first's entry."""
    try:
        fd = os.open(os.path.join(root, "locks", key + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.utime(fd)  # in use: eviction leaves it
        yield
    finally:
        os.close(fd)


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _fetch(root, key, src_dir, build_dir):
    """The kept build of key, copied into build_dir, as a RunResult; None when there is none (or it
    cannot be read whole and as it was written: then it is dropped, and the build runs)."""
    started = time.monotonic()
    entry = os.path.join(root, key)
    try:
        with open(os.path.join(entry, "entry.json")) as f:
            meta = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        _drop(root, entry)
        return None
    written = []
    try:
        os.makedirs(build_dir, exist_ok=True)
        for item in meta["files"]:
            name = item["name"]
            if os.path.isabs(name) or ".." in name.split(os.sep):
                raise ValueError("a file outside the build folder: %s" % name)
            with open(os.path.join(entry, "files", name), "rb") as f:
                data = f.read()
            if len(data) != item["size"] or _sha256(data) != item["sha256"]:
                raise ValueError("%s is not as it was kept" % name)
            target = os.path.join(build_dir, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.lexists(target):
                os.remove(target)
            written.append(target)
            with open(target, "wb") as out:  # a new file: nothing done to it reaches the entry
                out.write(data)
            os.chmod(target, item["mode"] & 0o777)
        # The log speaks of this build's folders: each kept folder replaced in one pass, longest first,
        # so that a folder put in is never replaced again.
        folders = {meta["src_dir"]: src_dir, meta["build_dir"]: build_dir, meta["kit_root"]: paths.KIT_ROOT}
        pattern = "|".join(re.escape(f) for f in sorted(folders, key=len, reverse=True))
        output = re.sub(pattern, lambda m: folders[m.group(0)], meta["output"])
        hit = process.RunResult(meta["verdict"], meta["returncode"], output, time.monotonic() - started,
                                meta["total_bytes"])
    except (OSError, ValueError, KeyError, TypeError):
        for path in written:
            with contextlib.suppress(OSError):
                os.remove(path)
        _drop(root, entry)
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # recently used: eviction takes the oldest first
    return hit


def _store(root, key, made, src_dir, build_dir):
    """Keep build_dir's files and make's verdict and log under key, if the build left only plain files
    and not too many bytes."""
    files = []
    total = 0
    try:
        for folder, dirs, _ in os.walk(build_dir):
            if any(os.path.islink(os.path.join(folder, d)) for d in dirs):
                return  # a link: not kept
        for name, path in _files_below(build_dir):
            info = os.lstat(path)
            total += info.st_size
            if not stat.S_ISREG(info.st_mode) or total > CACHE_MAX_ENTRY_BYTES:
                return  # a link or something stranger, or too large: not kept
            files.append((name, path, stat.S_IMODE(info.st_mode)))
        tmp = tempfile.mkdtemp(prefix=".tmp-", dir=root)
    except OSError:
        return
    try:
        items = []
        for name, path, mode in files:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as f:
                data = f.read()
            target = os.path.join(tmp, "files", name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(data)
            items.append({"name": name, "size": len(data), "sha256": _sha256(data), "mode": mode})
        with open(os.path.join(tmp, "entry.json"), "w") as f:
            json.dump({"verdict": made.verdict, "returncode": made.returncode, "output": made.output,
                       "total_bytes": made.total_bytes, "src_dir": src_dir, "build_dir": build_dir,
                       "kit_root": paths.KIT_ROOT, "files": items}, f)
        os.chmod(tmp, 0o755)
        os.rename(tmp, os.path.join(root, key))  # whole, or not at all
    except OSError:  # a full disk, or another grader kept the same build first
        shutil.rmtree(tmp, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        evict(root)


def _drop(root, entry):
    """Remove an entry: renamed away first, so no grader finds it half removed."""
    trash = os.path.join(root, ".trash-%s-%s" % (os.path.basename(entry), os.urandom(6).hex()))
    try:
        os.rename(entry, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)


def _bytes_below(top):
    return sum(os.lstat(path).st_size for _, path in _files_below(top))


def evict(root, max_entries=None, max_bytes=None):
    """Drop the least recently used entries beyond max_entries or max_bytes (default CACHE_MAX_ENTRIES,
    CACHE_MAX_BYTES), and what crashed graders left: temporary folders and old lock files."""
    max_entries = CACHE_MAX_ENTRIES if max_entries is None else max_entries
    max_bytes = CACHE_MAX_BYTES if max_bytes is None else max_bytes
    now = time.time()
    entries = []
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        path = os.path.join(root, name)
        try:
            if _KEY.match(name):
                entries.append((os.stat(path).st_mtime, _bytes_below(path), path))
            elif name.startswith((".tmp-", ".trash-")) and now - os.stat(path).st_mtime > _STALE_SECONDS:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue  # gone meanwhile
    entries.sort(reverse=True)  # the most recently used first
    kept = kept_bytes = 0
    for _, size, path in entries:
        if kept < max_entries and kept_bytes + size <= max_bytes:
            kept += 1
            kept_bytes += size
        else:
            _drop(root, path)
    locks = os.path.join(root, "locks")
    for name in os.listdir(locks) if os.path.isdir(locks) else []:
        path = os.path.join(locks, name)
        with contextlib.suppress(OSError):
            if now - os.stat(path).st_mtime > _STALE_SECONDS:
                os.remove(path)


# Where a build log's diagnostics start: a compiler error, or one of the linker's lines above its
# closing "collect2: error: ld returned 1 exit status", which name what is missing.
_ECHOED = re.compile(r"^(\S+\.cuh?)\((\d+)\): (?:error|warning)")  # nvcc's "file.cu(12): error: ...", then the line


def _as_written(lines, source_dir):
    """lines with each echoed source line that differs from the file's own line (a macro expanded)
    replaced by the file's line, and its caret, which points into the expansion, left out."""
    out, i = [], 0
    while i < len(lines):
        out.append(lines[i])
        found = _ECHOED.match(lines[i])
        if found and i + 1 < len(lines) and lines[i + 1].startswith(" "):
            path = os.path.join(source_dir, found.group(1))
            written = None
            if os.path.isfile(path):
                with open(path, errors="replace") as f:
                    source = f.read().splitlines()
                number = int(found.group(2))
                written = source[number - 1].strip() if 0 < number <= len(source) else None
            if written and lines[i + 1].strip() != written:
                out.append("      %s   (line %s as you wrote it)" % (written, found.group(2)))
                i += 2
                if i < len(lines) and lines[i].strip() == "^":
                    i += 1
                continue
        i += 1
    return out


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


_NVCC_SAYS = re.compile(r"nvcc (?:fatal|error|warning)\s*:")


def compiler_errors(output, limit=30, source_dir=None):
    """What a student needs from a build log: the compiler's or the linker's messages from the first
    one on, without make's echo of each command; for a link that failed on a missing function, first
    a line that names it (an empty file, a misnamed kernel or a changed signature). With source_dir,
    where nvcc echoes a line of the student's file after macro expansion (KIT_CHECK_LAUNCH() shown as
    the kit's call), the line as the student wrote it instead."""
    lines = [l for l in output.splitlines()  # make's echo of its commands out; nvcc's own "nvcc fatal :" kept
             if l.strip() and (_NVCC_SAYS.match(l) or not l.startswith(("nvcc ", "make", "mkdir ")))]
    if source_dir:
        lines = _as_written(lines, source_dir)
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
