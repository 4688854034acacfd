"""Where the kit's folders are. Everything is found from this file's location, so the grader
works from any current directory."""
import os

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LABS_DIR = os.path.join(KIT_ROOT, "labs")
SOLUTIONS_DIR = os.path.join(KIT_ROOT, "solutions")
# What every lab's hostile class shares: the attacks and the imports to refuse (solutions/README.md).
HOSTILE_DIR = os.path.join(SOLUTIONS_DIR, "hostile")
BUILD_ROOT = os.path.join(KIT_ROOT, "build")
PROBE_MAKEFILE = os.path.join(KIT_ROOT, "common", "probe", "Makefile")
# The instructor's private salt (never in the student kit; see grader/README.md, "For instructors").
SALT_ENV = "KIT_GRADER_SALT"
SALT_FILE = os.path.join(KIT_ROOT, "grader", "salt.txt")


def instructor_salt():
    """The salt mixed into every test case draw: $KIT_GRADER_SALT, else grader/salt.txt, else ""."""
    salt = os.environ.get(SALT_ENV, "")
    if not salt and os.path.isfile(SALT_FILE):
        with open(SALT_FILE) as f:
            salt = f.read().strip()
    return salt


# A lab's staff material, all in solutions/NN-name/ (solutions/README.md): the reference solution's files,
# and these.
def solution_dir(lab_name, kit=KIT_ROOT):
    """The lab's reference solution, and the folder of all its staff material."""
    return os.path.join(kit, "solutions", lab_name)


def incorrect_dir(lab_name, kit=KIT_ROOT):
    """The lab's known-wrong submissions, one folder each."""
    return os.path.join(solution_dir(lab_name, kit), "incorrect")


def alternative_dir(lab_name, kit=KIT_ROOT):
    """The lab's other correct solutions, one folder each."""
    return os.path.join(solution_dir(lab_name, kit), "alternative")


def hostile_dir(lab_name, kit=KIT_ROOT):
    """The lab's own hostile submissions, one folder each."""
    return os.path.join(solution_dir(lab_name, kit), "hostile")


def answers_path(lab_name, kit=KIT_ROOT):
    """The answers to the lab's handout questions."""
    return os.path.join(solution_dir(lab_name, kit), "answers.md")


def equivalent_mutants_path(lab_name, kit=KIT_ROOT):
    """The lab's equivalent mutants (tools/mutants.py)."""
    return os.path.join(solution_dir(lab_name, kit), "equivalent-mutants.txt")


def case_folders(folder):
    """The cases of a folder of submissions (incorrect/, alternative/, hostile/, the attacks): its
    subfolders that hold a file, sorted ([] where folder is not there). An empty one, which git cannot
    hold, is left over from a case that was removed."""
    if not os.path.isdir(folder):
        return []
    return sorted(d for d in os.listdir(folder)
                  if os.path.isdir(os.path.join(folder, d)) and os.listdir(os.path.join(folder, d)))


def lab_makefile(lab_name):
    return os.path.join(LABS_DIR, lab_name, "Makefile")


def relative(path):
    """A path as a user should see it: relative to the kit when inside it."""
    path = os.path.abspath(path)
    if path == KIT_ROOT or path.startswith(KIT_ROOT + os.sep):
        return os.path.relpath(path, KIT_ROOT)
    return path
