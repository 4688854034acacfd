"""Submissions as they arrive: folders and .zip/.tar.gz archives in one folder, each with an id, and
archives unpacked safely (regular files and folders only, no paths leading out, capped in members and
bytes), and the fingerprint that tells a re-run whether a submission changed."""
import hashlib
import os
import stat
import tarfile
import zipfile

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")
MAX_ARCHIVE_MEMBERS = 2000
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024  # unpacked; a lab submission is a few KiB


class BadArchive(Exception):
    pass


# ---- finding and unpacking submissions -------------------------------------------------------

def submission_id(entry_name):
    for suffix in ARCHIVE_SUFFIXES:
        if entry_name.lower().endswith(suffix):
            return entry_name[: -len(suffix)]
    return entry_name


def find_submissions(root):
    """[(id, path)] sorted by id: every folder and archive in root. When a folder and an archive
    would share an id, the archive keeps its full file name as its id."""
    found = {}
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name.startswith(".") or os.path.islink(path):
            continue
        is_archive = os.path.isfile(path) and name.lower().endswith(ARCHIVE_SUFFIXES)
        if not (os.path.isdir(path) or is_archive):
            continue
        sub_id = submission_id(name) if is_archive else name
        if sub_id in found:
            sub_id = name
        found[sub_id] = path
    return sorted(found.items())


def _safe_member_path(dest, name):
    """Where an archive member may go, or BadArchive: no absolute paths, no '..', nothing outside dest."""
    normalized = name.replace("\\", "/")
    parts = [p for p in normalized.split("/") if p not in ("", ".")]
    if normalized.startswith("/") or ".." in parts or not parts:
        raise BadArchive("member %r points outside the submission" % name)
    target = os.path.realpath(os.path.join(dest, *parts))
    if not target.startswith(os.path.realpath(dest) + os.sep):
        raise BadArchive("member %r points outside the submission" % name)
    return target


class _Budget:
    """Counts members and unpacked bytes against the caps."""

    def __init__(self):
        self.members = 0
        self.bytes = 0

    def member(self):
        self.members += 1
        if self.members > MAX_ARCHIVE_MEMBERS:
            raise BadArchive("more than %d files" % MAX_ARCHIVE_MEMBERS)

    def add(self, n):
        self.bytes += n
        if self.bytes > MAX_ARCHIVE_BYTES:
            raise BadArchive("more than %d MiB unpacked" % (MAX_ARCHIVE_BYTES // (1024 * 1024)))


def _copy_capped(source, target, budget):
    with open(target, "wb") as out:
        while True:
            chunk = source.read(65536)
            if not chunk:
                break
            budget.add(len(chunk))  # counts what really comes out, not what the header claims
            out.write(chunk)


def unpack(archive, dest):
    """Unpack a .zip or .tar.gz into dest: regular files and folders only, within the caps."""
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
                        raise BadArchive("member %r is a link" % info.filename)
                    if info.filename.endswith("/"):
                        os.makedirs(target, exist_ok=True)
                        continue
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with z.open(info) as source:
                        _copy_capped(source, target, budget)
        else:
            with tarfile.open(archive, "r:*") as t:
                for member in t:
                    budget.member()
                    target = _safe_member_path(dest, member.name)
                    if member.isdir():
                        os.makedirs(target, exist_ok=True)
                    elif member.isfile():
                        os.makedirs(os.path.dirname(target), exist_ok=True)
                        _copy_capped(t.extractfile(member), target, budget)
                    else:
                        raise BadArchive("member %r is a link or a device, not a file" % member.name)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, RuntimeError) as err:
        raise BadArchive("cannot be unpacked: %s" % err)


def fingerprint(path):
    """A hash of what was submitted: the archive's bytes, or every file of the folder."""
    digest = hashlib.sha256()
    if os.path.isfile(path):
        with open(path, "rb") as f:
            digest.update(f.read())
    else:
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(folder, name)
                digest.update(os.path.relpath(full, path).encode())
                if os.path.isfile(full) and not os.path.islink(full):
                    with open(full, "rb") as f:
                        digest.update(f.read())
    return digest.hexdigest()[:16]


