"""Submissions as they arrive in a class folder, each with an id; archives unpacked safely (regular
files and folders only, no paths leading out, capped in members and bytes); and the fingerprint that
tells a re-run whether a submission changed.

What each entry at the top of a class folder becomes (scan_class):

  a folder                  a submission; its id is the folder's name
  an archive                a submission; its id is the name without the suffix: .zip, .tar, .tar.gz,
                            .tgz, .tar.bz2, .tbz2, .tar.xz, .txz
  a lone lab file           a one-file submission when its name is ID, a separator (_ - .) and one of
                            the lab's files: alice_divergent_counter.cu is alice's Lab 01 (the names a
                            course site's bulk download gives). Lone files with one id and different
                            lab files (bob_default_streams.cu, bob_nvcc.flags) are one submission.
  a Canvas download's file  LOGIN_[LATE_]USERID_SUBMISSIONID_FILE, as Canvas's "Download Submissions"
                            names them: a submission with id LOGIN, FILE being an archive or one of
                            the lab's files; FILE may carry -N before its extension (Canvas numbers
                            a file the student submitted again), and where two copies of one file
                            come, the highest N is graded and the others are refused as superseded;
                            LATE marks the submission late (Submission.late) and stays out of the id
  a symbolic link           refused: "a symbolic link: not followed" (it may lead anywhere)
  a hidden name (.name)     refused: "a hidden name (it starts with a dot)"
  the lab's file, no id     refused: divergent_counter.cu alone names no student
  anything else             refused: "not a folder or an archive" (notes.txt, alice.rar, a FIFO)
  OS litter                 ignored without a word, and only these: .DS_Store, ._* (macOS), Thumbs.db,
                            desktop.ini (Windows), __MACOSX (macOS's zip tool)

Where two entries would take one id (alice/ and alice.zip), the later in name order keeps its full
entry name as its id (alice.zip).
"""
import hashlib
import lzma
import os
import re
import stat
import tarfile
import zipfile
import zlib

from . import build

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar", ".zip")
MAX_ARCHIVE_MEMBERS = 2000
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024  # unpacked; a lab submission is a few KiB
# A lone lab file is copied up to one byte past the size a lab file may have, so that the build's
# own check refuses it as too large without copying all of it.
MAX_LONE_FILE_BYTES = build.MAX_STUDENT_FILE_BYTES + 1

# What file managers leave in a folder; nobody submits these.
OS_LITTER = {".DS_Store", "Thumbs.db", "desktop.ini", "__MACOSX"}
OS_LITTER_PREFIX = "._"

# Why an entry of the class folder is not graded (each printed with the entry's name).
SYMLINK = "a symbolic link: not followed"
HIDDEN = "a hidden name (it starts with a dot)"
NOT_FOLDER_OR_ARCHIVE = "not a folder or an archive"
LONE_FILE_SEPARATORS = "_-."
# Canvas's bulk download: LOGIN_[LATE_]USERID_SUBMISSIONID_FILE, FILE with -N before its extension for a
# file submitted again.
CANVAS_NAME = re.compile(r"^(?P<login>[^_]+(?:_[^_]+)*?)_(?P<late>LATE_)?(?P<user>[0-9]+)_[0-9]+_(?P<file>.+)$")
CANVAS_COPY = re.compile(r"^(?P<stem>.+)-(?P<copy>[0-9]+)(?P<ext>(\.[^.]+)*)$")


class BadArchive(Exception):
    """An archive that cannot be graded; its message completes "could not be graded: ..." as a
    sentence, e.g. "the archive has more than 2000 files"."""


# ---- the class folder ------------------------------------------------------------------------

class Submission:
    """One student's submission: kind FOLDER (path), ARCHIVE (path) or FILES (lab file name -> the
    lone file holding it)."""
    FOLDER = "folder"
    ARCHIVE = "archive"
    FILES = "files"

    def __init__(self, sub_id, kind, path=None, files=None):
        self.id = sub_id
        self.kind = kind
        self.path = path
        self.files = dict(files or {})
        self.late = False  # Canvas named it late (LATE_)
        self.canvas_user_id = None  # Canvas's user id, where Canvas named it

    def take_canvas_name(self, entry):
        """What a Canvas name says of the student (entry: CanvasEntry, or None)."""
        if entry is not None:
            self.late = self.late or entry.late
            self.canvas_user_id = entry.user_id

    @property
    def entries(self):
        """The names of the class folder's entries this submission is made of."""
        if self.kind == self.FILES:
            return sorted(os.path.basename(p) for p in self.files.values())
        return [os.path.basename(self.path)]

    @property
    def source(self):
        """What the student handed in, as the sheets and feedback name it."""
        return ", ".join(self.entries)

    def fingerprint(self):
        """A hash of what was submitted: the archive's bytes, every file of the folder, or the lone
        files with the lab file each one stands for."""
        if self.kind == self.FILES:
            digest = hashlib.sha256()
            for name in sorted(self.files):
                digest.update(name.encode() + b"\0")
                _hash_file(digest, self.files[name])
            return digest.hexdigest()[:16]
        return fingerprint(self.path)

    def open(self, scratch):
        """The folder to look for the lab's files in: the folder itself, the archive unpacked under
        scratch (BadArchive if it cannot be), or the lone files copied there under the lab's names."""
        if self.kind == self.FOLDER:
            return self.path
        root = os.path.join(scratch, "unpacked" if self.kind == self.ARCHIVE else "files")
        if self.kind == self.ARCHIVE:
            unpack(self.path, root)
            return root
        os.makedirs(root, exist_ok=True)
        for name, path in self.files.items():
            with open(path, "rb") as source, open(os.path.join(root, name), "wb") as target:
                target.write(source.read(MAX_LONE_FILE_BYTES))
        return root

    def __repr__(self):
        return "Submission(%r, %s, %s)" % (self.id, self.kind, self.source)


class ClassFolder:
    """What scan_class found: submissions (sorted by id), refused [(entry name, reason)] and the
    ignored OS litter."""

    def __init__(self, submissions, refused, ignored):
        self.submissions = submissions
        self.refused = refused
        self.ignored = ignored


def is_os_litter(name):
    return name in OS_LITTER or name.startswith(OS_LITTER_PREFIX)


def archive_suffix(name):
    for suffix in ARCHIVE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return suffix
    return None


def submission_id(entry_name):
    suffix = archive_suffix(entry_name)
    return entry_name[: -len(suffix)] if suffix else entry_name


def lone_file_id(name, lab_files):
    """(id, lab file) for a lone file named ID + separator + lab file; (None, lab file) for the lab's file
    with no id before it; else (None, None)."""
    for lab_file in sorted(lab_files, key=len, reverse=True):
        if name == lab_file:
            return None, lab_file
        if name.endswith(lab_file) and name[-len(lab_file) - 1] in LONE_FILE_SEPARATORS:
            return name[: -len(lab_file)].rstrip(LONE_FILE_SEPARATORS) or None, lab_file
    return None, None


class CanvasEntry:
    """What the name of a Canvas download's entry says: the student's login, Canvas's user id, late or
    not, the file as the student named it, and its copy number (0 for the first)."""

    def __init__(self, login, user_id, late, file_name, copy):
        self.login, self.user_id, self.late, self.file_name, self.copy = login, user_id, late, file_name, copy


def canvas_entry(name, lab_files):
    """The CanvasEntry of an entry named as Canvas's bulk download names it, whose file is an archive or
    one of the lab's files; else None."""
    m = CANVAS_NAME.match(name)
    if m is None:
        return None
    file_name, copy = m.group("file"), 0
    numbered = CANVAS_COPY.match(file_name)
    if numbered:
        unnumbered = numbered.group("stem") + numbered.group("ext")
        if unnumbered in lab_files or archive_suffix(unnumbered):
            file_name, copy = unnumbered, int(numbered.group("copy"))
    if file_name not in lab_files and not archive_suffix(file_name):
        return None
    return CanvasEntry(m.group("login"), m.group("user"), bool(m.group("late")), file_name, copy)


def _superseded(canvas_entries, lab_files):
    """{entry: the entry that supersedes it} among Canvas entries ({name: CanvasEntry}) with one login
    and one file: the highest copy number wins."""
    best = {}
    for name, entry in canvas_entries.items():
        key = (entry.login, entry.file_name if entry.file_name in lab_files else "archive")
        best.setdefault(key, []).append((entry.copy, name))
    superseded = {}
    for copies in best.values():
        winner = max(copies)[1]
        superseded.update((name, winner) for _, name in copies if name != winner)
    return superseded


def _lone_file_hint(name, lab_files):
    """For a file that looks like a lab file (its extension) but is not named like one: how to name it."""
    extensions = {os.path.splitext(f)[1] for f in lab_files} - {""}
    if any(name.endswith(e) for e in extensions):
        return " (a lone file is graded when its name is a student id, '_' and the lab's file: %s)" % (
            " or ".join("ID_" + f for f in lab_files))
    return ""


def scan_class(root, lab_files=()):
    """Every entry at the top of root, as a submission, a refusal with its reason, or ignored litter
    (the module's docstring says which is which). lab_files: the lab's student files (lone files)."""
    refused, ignored = [], []
    candidates = []  # (entry name, preferred id, Submission without its id)
    lone = {}  # preferred id -> the candidate gathering its lone files
    names = sorted(os.listdir(root))
    canvas_entries = {}  # the regular files named as Canvas's download names them
    for name in names:
        path = os.path.join(root, name)
        entry = None if os.path.islink(path) or not os.path.isfile(path) else canvas_entry(name, lab_files)
        if entry is not None:
            canvas_entries[name] = entry
    superseded = _superseded(canvas_entries, lab_files)
    for name in names:
        path = os.path.join(root, name)
        canvas = canvas_entries.get(name)
        if is_os_litter(name):
            ignored.append(name)
        elif os.path.islink(path):
            refused.append((name, SYMLINK))
        elif name.startswith("."):
            refused.append((name, HIDDEN))
        elif os.path.isdir(path):
            candidates.append((name, name, Submission(None, Submission.FOLDER, path)))
        elif not os.path.isfile(path):
            refused.append((name, NOT_FOLDER_OR_ARCHIVE))
        elif name in superseded:
            refused.append((name, "superseded by %s (Canvas numbers a file submitted again -1, -2, ...)"
                                  % superseded[name]))
        elif canvas is not None and canvas.file_name not in lab_files:
            sub = Submission(None, Submission.ARCHIVE, path)
            sub.take_canvas_name(canvas)
            candidates.append((name, canvas.login, sub))
        elif archive_suffix(name):
            candidates.append((name, submission_id(name), Submission(None, Submission.ARCHIVE, path)))
        else:
            sub_id, lab_file = (canvas.login, canvas.file_name) if canvas else lone_file_id(name, lab_files)
            if sub_id is None and lab_file is not None:
                refused.append((name, "the lab's file with no student id in its name (name it ID_%s, or put it "
                                      "in a folder named after the student)" % lab_file))
            elif sub_id is None:
                refused.append((name, NOT_FOLDER_OR_ARCHIVE + _lone_file_hint(name, lab_files)))
            elif sub_id in lone and lab_file not in lone[sub_id][2].files:
                lone[sub_id][2].files[lab_file] = path
                lone[sub_id][2].take_canvas_name(canvas)
            else:
                candidate = (name, sub_id, Submission(None, Submission.FILES, files={lab_file: path}))
                candidate[2].take_canvas_name(canvas)
                lone.setdefault(sub_id, candidate)
                candidates.append(candidate)
    taken = {}
    for name, preferred, sub in candidates:  # in entry name order
        sub_id = preferred if preferred not in taken else name
        n = 2
        while sub_id in taken:
            sub_id = "%s~%d" % (name, n)
            n += 1
        sub.id = sub_id
        taken[sub_id] = sub
    return ClassFolder(sorted(taken.values(), key=lambda s: s.id), refused, ignored)


# ---- unpacking archives ----------------------------------------------------------------------

def _safe_member_path(dest, name):
    """Where an archive member may go, or BadArchive: no absolute paths, no '..', nothing outside dest."""
    normalized = name.replace("\\", "/")
    parts = [p for p in normalized.split("/") if p not in ("", ".")]
    if normalized.startswith("/") or ".." in parts or not parts:
        raise BadArchive("the archive's member %r points outside the submission" % name)
    target = os.path.realpath(os.path.join(dest, *parts))
    if not target.startswith(os.path.realpath(dest) + os.sep):
        raise BadArchive("the archive's member %r points outside the submission" % name)
    return target


class _Budget:
    """Counts members and unpacked bytes against the caps."""

    def __init__(self):
        self.members = 0
        self.bytes = 0

    def member(self):
        self.members += 1
        if self.members > MAX_ARCHIVE_MEMBERS:
            raise BadArchive("the archive has more than %d files" % MAX_ARCHIVE_MEMBERS)

    def add(self, n):
        self.bytes += n
        if self.bytes > MAX_ARCHIVE_BYTES:
            raise BadArchive("the archive unpacks to more than %d MiB" % (MAX_ARCHIVE_BYTES // (1024 * 1024)))


def _copy_capped(source, target, budget):
    with open(target, "wb") as out:
        while True:
            chunk = source.read(65536)
            if not chunk:
                break
            budget.add(len(chunk))  # counts what really comes out, not what the header claims
            out.write(chunk)


def unpack(archive, dest):
    """Unpack a .zip or a tar (plain or compressed) into dest: regular files and folders only, within
    the caps. BadArchive says why not, as a clause: "the archive ..."."""
    budget = _Budget()
    os.makedirs(dest, exist_ok=True)
    try:
        if archive.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    budget.member()
                    target = _safe_member_path(dest, info.filename)
                    mode = info.external_attr >> 16
                    if stat.S_ISLNK(mode):
                        raise BadArchive("the archive's member %r is a link" % info.filename)
                    if info.filename.endswith("/"):
                        os.makedirs(target, exist_ok=True)
                        continue
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with z.open(info) as source:
                        _copy_capped(source, target, budget)
        else:
            with tarfile.open(archive, "r:*") as t:  # plain, gzip, bzip2 or xz
                for member in t:
                    budget.member()
                    target = _safe_member_path(dest, member.name)
                    if member.isdir():
                        os.makedirs(target, exist_ok=True)
                    elif member.isfile():
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        _copy_capped(t.extractfile(member), target, budget)
                    else:
                        raise BadArchive("the archive's member %r is a link or a device, not a file" % member.name)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, RuntimeError, ValueError, zlib.error,
            lzma.LZMAError) as err:
        raise BadArchive("the archive cannot be unpacked (%s)" % err)


# ---- fingerprints ----------------------------------------------------------------------------

def _hash_file(digest, path):
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)


def fingerprint(path):
    """A hash of what was submitted: the archive's bytes, or every file of the folder."""
    digest = hashlib.sha256()
    if os.path.isfile(path):
        _hash_file(digest, path)
    else:
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(folder, name)
                digest.update(os.path.relpath(full, path).encode())
                if os.path.isfile(full) and not os.path.islink(full):
                    _hash_file(digest, full)
    return digest.hexdigest()[:16]
