#!/usr/bin/env python3
"""Ship the kit.

  python3 tools/dist.py student OUT.tar.gz     the student kit (make dist)
  python3 tools/dist.py gradescope LAB OUT_DIR a Gradescope autograder for one lab, OUT_DIR/gradescope-NN-name.zip
                                               (make gradescope LAB=NN)

The student kit is the kit without what only course staff may hold: no solutions/ (reference
solutions, answers, known-wrong, alternative and hostile submissions), no instructor salt, no kit
self-tests or maintainer tools; its README.md is tools/student-README.md.

Shipped Markdown pages lose their staff-only passages: everything from "<!-- staff -->" to the next
"<!-- /staff -->", markers included (a passage that fills whole lines goes with its lines); a page
whose markers do not pair up stops the build (CONTRIBUTING.md, "Staff-only passages in the pages students get").

The Gradescope zip holds setup.sh and run_autograder at its top and the student kit under kit/,
plus the instructor's salt when there is one (the autograder zip is never given to students).
Files come from `git ls-files` in a git checkout (tracked files, and new ones not ignored), else from
the folder. The students' files in labs/ ship as the kit makes them from the solutions (an instructor's
solved or edited lab never ships; dist.py names those it left behind), and a new file in labs/ that
git does not track (a backup, a student's work) stops the build, named.
"""
import io
import os
import re
import subprocess
import sys
import tarfile
import zipfile

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(KIT_ROOT, "grader"))

from gradelib import build, paths, registry, starters  # noqa: E402

TOP = "cdp-labs"
STUDENT_README = "tools/student-README.md"
SHIPPED = ("Makefile", "common/", "grader/", "labs/", "handouts/", "tools/render_handouts.sh", "tools/draw_figures.py")
NOT_SHIPPED = ("grader/tests/", "grader/selftest.py", "grader/slurm/", "grader/README.md", os.path.relpath(paths.SALT_FILE, KIT_ROOT))


def kit_files():
    """The kit's files, relative to its top folder."""
    if os.path.isdir(os.path.join(KIT_ROOT, ".git")):
        # Tracked and new (not ignored) files that are there: a kit with changes not yet committed
        # ships as it is on disk, never with a stale file list.
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=KIT_ROOT, stdout=subprocess.PIPE, check=True)
        files = sorted({f for f in listed.stdout.decode().split("\0")
                        if f and os.path.isfile(os.path.join(KIT_ROOT, f))})
    else:
        files = []
        for folder, dirs, names in os.walk(KIT_ROOT):
            dirs[:] = [d for d in dirs if d not in ("build", ".git", "__pycache__")]
            files += [os.path.relpath(os.path.join(folder, n), KIT_ROOT) for n in names]
    return sorted(f for f in files if os.path.isfile(os.path.join(KIT_ROOT, f)))


class StrayLabFiles(ValueError):
    pass


def untracked_lab_files():
    """Files in labs/ that git does not track (nor ignore), in a git checkout; else none."""
    if not os.path.isdir(os.path.join(KIT_ROOT, ".git")):
        return []
    listed = subprocess.run(["git", "ls-files", "-z", "--others", "--exclude-standard", "--", "labs"],
                            cwd=KIT_ROOT, stdout=subprocess.PIPE, check=True)
    return sorted(f for f in listed.stdout.decode().split("\0") if f)


def lab_of_student_file(path):
    """The lab whose student file path (labs/NN-name/FILE) is, or None."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != "labs" or not os.path.isdir(paths.solution_dir(parts[1])):
        return None
    return parts[1] if parts[2] in build.lab_vars(parts[1])["student_files"] else None


def edited_starters():
    """The student files in labs/ that differ from the starters the kit ships in their place."""
    edited = []
    for source, _ in student_files():
        lab = lab_of_student_file(source)
        if lab:
            with open(os.path.join(KIT_ROOT, source), "rb") as f:
                if f.read() != shipped_bytes(source):
                    edited.append(source)
    return edited


def student_files():
    """[(path in the kit, path in the student kit)]. Raises StrayLabFiles for new files in labs/."""
    stray = untracked_lab_files()
    if stray:
        raise StrayLabFiles("labs/ holds files the kit does not track, which would ship to every student: %s "
                            "(move them out of labs/, or add them to git if they belong to the kit)" % ", ".join(stray))
    chosen = [(STUDENT_README, "README.md")]
    for f in kit_files():
        shipped = any(f == s or (s.endswith("/") and f.startswith(s)) for s in SHIPPED)
        held_back = any(f == s or (s.endswith("/") and f.startswith(s)) for s in NOT_SHIPPED)
        if shipped and not held_back and not f.endswith(".pyc"):
            chosen.append((f, f))
    return chosen


STAFF_BEGIN = "<!-- staff -->"
STAFF_END = "<!-- /staff -->"
# A passage; the whitespace before an opening marker that starts its line, and the end of the line
# after a closing marker that ends one, so that a passage of whole lines goes with its lines.
_STAFF_PASSAGE = re.compile(r"(^[ \t]*)?" + re.escape(STAFF_BEGIN) + r".*?" + re.escape(STAFF_END) + r"([ \t]*\n)?",
                            re.S | re.M)


class StaffMarkerError(ValueError):
    pass


def without_staff_passages(text, name="<page>"):
    """A Markdown page as the student kit ships it: every staff-only passage dropped, nothing else.
    Raises StaffMarkerError when the markers do not pair up."""
    def line(offset):
        return text.count("\n", 0, offset) + 1
    opened = None
    for m in re.finditer(re.escape(STAFF_BEGIN) + "|" + re.escape(STAFF_END), text):
        if m.group(0) == STAFF_BEGIN and opened is not None:
            raise StaffMarkerError("%s:%d: %s inside the passage opened at line %d (passages do not nest)"
                                   % (name, line(m.start()), STAFF_BEGIN, line(opened)))
        if m.group(0) == STAFF_END and opened is None:
            raise StaffMarkerError("%s:%d: %s with no passage open" % (name, line(m.start()), STAFF_END))
        opened = m.start() if m.group(0) == STAFF_BEGIN else None
    if opened is not None:
        raise StaffMarkerError("%s:%d: %s never closed" % (name, line(opened), STAFF_BEGIN))

    def drop(m):
        if m.group(1) is not None and m.group(2) is not None:
            return ""  # whole lines
        return (m.group(1) or "") + (m.group(2) or "")
    return _STAFF_PASSAGE.sub(drop, text)


def shipped_bytes(source):
    """The content of a kit file as the student kit holds it: a student file of labs/ as the kit's
    starter made from its solution, whatever labs/ holds now."""
    lab = lab_of_student_file(source)
    if lab:
        source = os.path.relpath(os.path.join(starters.pristine(lab), os.path.basename(source)), KIT_ROOT)
    with open(os.path.join(KIT_ROOT, source), "rb") as f:
        data = f.read()
    if source.endswith(".md"):
        data = without_staff_passages(data.decode("utf-8"), source).encode("utf-8")
    return data


def _mode(path):
    return 0o755 if os.access(os.path.join(KIT_ROOT, path), os.X_OK) else 0o644


def write_student_tar(out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    files = [(source, name, shipped_bytes(source)) for source, name in student_files()]  # before any write
    with tarfile.open(out, "w:gz") as tar:
        for source, name, data in files:
            info = tar.gettarinfo(os.path.join(KIT_ROOT, source), arcname="%s/%s" % (TOP, name))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mode = _mode(source)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return len(files)


RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this once per submission. The student's files are in $ROOT/submission; the
# results go to $ROOT/results/results.json. AUTOGRADER_ROOT replaces /autograder (for testing).
ROOT=${AUTOGRADER_ROOT:-/autograder}
KIT=$ROOT/source/kit
mkdir -p "$ROOT/results"
cd "$KIT" || exit 1
# --in-container: where Docker's seccomp profile leaves no user namespaces for the kit's sandbox, the
# autograder's container (one per submission) is the isolation boundary, and results.json says so.
python3 grader/grade.py --lab %(lab)s --submission "$ROOT/submission" --gradescope "$ROOT/results/results.json" \\
    --in-container
status=$?
if [ ! -s "$ROOT/results/results.json" ]; then
    # The grader itself failed: say so, rather than leave Gradescope without a result.
    printf '{"score": 0, "output": "The autograder failed (grade.py exit status %%s); please tell your instructor.", "tests": []}\\n' \\
        "$status" > "$ROOT/results/results.json"
fi
exit 0
"""

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image. The kit needs GNU Make, Python 3
# and the CUDA toolkit (nvcc), and a GPU at grading time for the runtime checks; without a GPU
# the grader still builds and runs the static checks, and says the runtime checks were not run.
set -e
if ! command -v make > /dev/null || ! command -v python3 > /dev/null; then
    apt-get update && apt-get install -y make python3
fi
export PATH=$PATH:/usr/local/cuda/bin
command -v nvcc > /dev/null || { echo "setup.sh: nvcc not found: use an image with the CUDA toolkit (12.0 or newer)"; exit 1; }
nvcc --version | tail -n 1
cd /autograder/source/kit && make doctor || true
"""


def write_gradescope_zip(lab_spec, out_dir):
    lab = registry.resolve(lab_spec)
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "gradescope-%s.zip" % lab.name)
    files = [(source, name, shipped_bytes(source)) for source, name in student_files()]  # before any write
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        def add_text(name, text, mode=0o755):
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100000 | mode) << 16
            z.writestr(info, text)
        add_text("run_autograder", RUN_AUTOGRADER % {"lab": lab.number})
        add_text("setup.sh", SETUP)
        for source, name, data in files:
            info = zipfile.ZipInfo("kit/" + name)
            info.external_attr = (0o100000 | _mode(source)) << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
        salt = paths.instructor_salt()
        if salt:
            add_text("kit/grader/salt.txt", salt + "\n", 0o600)
    return lab, out


def main(argv):
    try:
        for source in edited_starters():
            print("dist.py: %s differs from its starter: the kit's starter ships in its place" % source)
    except StrayLabFiles as err:
        print("dist.py: %s" % err, file=sys.stderr)
        return 1
    if len(argv) == 2 and argv[0] == "student":
        try:
            n = write_student_tar(argv[1])
        except StaffMarkerError as err:
            print("dist.py: %s" % err, file=sys.stderr)
            return 1
        print("wrote %s: the student kit, %d files (no solutions, no salt, no kit self-tests)" % (argv[1], n))
        return 0
    if len(argv) == 3 and argv[0] == "gradescope":
        try:
            lab, out = write_gradescope_zip(argv[1], argv[2])
        except KeyError as err:
            print("dist.py: %s" % err.args[0], file=sys.stderr)
            return 2
        except StaffMarkerError as err:
            print("dist.py: %s" % err, file=sys.stderr)
            return 1
        print("wrote %s: Gradescope autograder for %s%s (upload it as the assignment's autograder; "
              "it needs an image with the CUDA toolkit and a GPU)"
              % (out, lab.title, ", with the instructor's salt" if paths.instructor_salt() else ""))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
