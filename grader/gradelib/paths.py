"""Where the kit's folders are. Everything is found from this file's location, so the grader
works from any current directory."""
import os

KIT_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LABS_DIR = os.path.join(KIT_ROOT, "labs")
SOLUTIONS_DIR = os.path.join(KIT_ROOT, "solutions")
INCORRECT_DIR = os.path.join(SOLUTIONS_DIR, "incorrect")
ALTERNATIVE_DIR = os.path.join(SOLUTIONS_DIR, "alternative")
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


def lab_makefile(lab_name):
    return os.path.join(LABS_DIR, lab_name, "Makefile")


def relative(path):
    """A path as a user should see it: relative to the kit when inside it."""
    path = os.path.abspath(path)
    if path == KIT_ROOT or path.startswith(KIT_ROOT + os.sep):
        return os.path.relpath(path, KIT_ROOT)
    return path
