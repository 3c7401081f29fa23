"""A participant's archive, however strange, read within fixed limits (issue 48).

Two shapes reach the scorer: a folder a platform unpacked (Codabench's ``input/res``) and the
uploaded ``.zip`` itself (EvalAI). Both are untrusted. :func:`find_json` walks the folder
without recursion and without following links, and stops at :data:`MAX_ENTRIES` entries or
:data:`MAX_DEPTH` nested folders; :func:`read_json_member` checks the zip's end record (its
entry count) before the zip module parses a byte of the central directory, then every entry
(name, type, encryption, compression method, duplicates, a folder named like a file) before
one byte is decompressed, and reads at most the competition's size limit of the one JSON
file. Whatever is wrong is an :class:`~ovearth_core.errors.OVEarthInputError` naming the
archive and the entry: the submission's fault, never the bundle's.
"""

from __future__ import annotations

import lzma
import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from ..errors import OVEarthInputError, Problem
from ..files import size_text

MAX_ENTRIES = 10_000  # files and folders of one submission archive
MAX_DEPTH = 64  # nested folders of one entry
SKIPPED = ("__MACOSX",)  # macOS resource forks beside the files
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate",
            zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}
_EXPECTED_ONE = "one prediction JSON file (e.g. predictions.json) in the"
# What the zip module and its decompressors raise on data they cannot read.
_UNREADABLE = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, NotImplementedError,
               RuntimeError, ValueError, zlib.error, lzma.LZMAError, struct.error)
_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"


def shown(name: str) -> str:
    """``name`` printable: undecodable bytes (surrogate escapes) and control characters as
    backslash escapes, so a message about it can always be printed and serialised."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _refused(file: str, field: str, expected: str, found: str) -> OVEarthInputError:
    return OVEarthInputError([Problem(shown(file), field, expected, found)])


def find_json(res: Path) -> Path:
    """The one ``.json`` file of the unpacked submission ``res`` (anywhere inside; hidden
    entries and ``__MACOSX`` skipped; links never followed).

    The walk is a loop over a stack, not a recursion, and refuses a tree of more than
    :data:`MAX_ENTRIES` entries or deeper than :data:`MAX_DEPTH` folders."""
    found: list[Path] = []
    others: list[str] = []  # shown when no JSON file is there
    stack: list[tuple[Path, int]] = [(res, 0)]
    seen = 0
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError as err:
            raise _refused(str(folder), "(submission)", "a readable folder",
                           err.strerror or str(err)) from None
        seen += len(entries)
        if seen > MAX_ENTRIES:
            raise _refused(str(res), "(submission)", f"at most {MAX_ENTRIES:,} files and "
                           "folders in the submitted zip", f"more than {MAX_ENTRIES:,}")
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SKIPPED:
                continue
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_DEPTH:
                    inside = shown(str(path.relative_to(res)))[:120]
                    raise _refused(str(res), "(submission)", f"folders nested at most "
                                   f"{MAX_DEPTH} deep in the submitted zip",
                                   f"more than {MAX_DEPTH} ({inside}...)")
                stack.append((path, depth + 1))
            elif entry.name.lower().endswith(".json"):
                found.append(path)
            else:
                others.append(shown(str(path.relative_to(res))))
    found.sort()
    if len(found) == 1:
        return found[0]
    expected = f"{_EXPECTED_ONE} submitted zip"
    if not found:
        listed = ", ".join(sorted(others)[:5]) or "nothing"
        raise _refused(str(res), "(submission)", expected,
                       f"no .json file (the zip holds: {listed})")
    names = ", ".join(shown(str(p.relative_to(res))) for p in found[:5])
    raise _refused(str(res), "(submission)", expected, f"{len(found)} .json files: {names}")


def declared_entries(path: Path) -> int:
    """The entry count the zip's end-of-central-directory record declares (zip64's when
    the classic field is saturated), read before the zip module parses the directory.
    Raises ``OVEarthInputError`` when there is no such record."""
    size = os.stat(path).st_size
    with open(path, "rb") as handle:
        start = max(0, size - (22 + 0xFFFF))
        handle.seek(start)
        tail = handle.read()
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < 22:
            raise _refused(str(path), "(file)", "a readable zip archive",
                           "no end-of-central-directory record (not a zip, or truncated)")
        entries = struct.unpack_from("<H", tail, at + 10)[0]
        if entries == 0xFFFF and at >= 20 and tail[at - 20:at - 16] == _ZIP64_LOCATOR:
            offset = struct.unpack_from("<Q", tail, at - 20 + 8)[0]
            handle.seek(offset)
            record = handle.read(56)
            if len(record) == 56 and record[:4] == _ZIP64_EOCD:
                entries = struct.unpack_from("<Q", record, 32)[0]
    return entries


def _entry_problems(archive: zipfile.ZipFile, label: str) -> list[Problem]:
    problems: list[Problem] = []
    names: set[str] = set()
    folders: set[str] = set()

    def add(info: zipfile.ZipInfo, expected: str, found: str) -> None:
        problems.append(Problem(shown(f"{label}:{info.filename}")[:300], "(zip entry)",
                                expected, found))

    for info in archive.infolist():
        name = info.filename
        parts = name.rstrip("/").split("/")
        mode = info.external_attr >> 16
        if info.flag_bits & 0x1:
            add(info, "an unencrypted entry", "an encrypted entry (a password is needed)")
        if info.compress_type not in _METHODS:
            add(info, "an entry compressed with " + ", ".join(_METHODS.values()),
                f"compression method {info.compress_type}")
        if name.startswith("/") or "\\" in name or "\x00" in name or (
                len(name) > 1 and name[1] == ":") or ".." in parts or "" in parts[:-1]:
            add(info, "a relative name without '..', '\\' or an empty folder",
                "an absolute or escaping name")
        depth = len(parts) - (not info.is_dir())  # a folder entry's last part is a folder
        if depth > MAX_DEPTH:
            add(info, f"a name nested at most {MAX_DEPTH} folders deep", f"{depth} folders")
        if info.create_system == 3 and stat.S_ISLNK(mode):
            add(info, "a regular file or folder", "a symbolic link")
        key = name.rstrip("/")
        if key in names and not info.is_dir():
            add(info, "each name once", "a duplicate name")
        if not info.is_dir():
            names.add(key)
        folders.update("/".join(parts[:i]) for i in range(1, len(parts) + (info.is_dir())))
    for name in sorted(names & folders)[:5]:
        problems.append(Problem(shown(f"{label}:{name}")[:300], "(zip entry)",
                                "a name that is a file or a folder, not both",
                                "both a file and a folder"))
    return problems


def read_json_member(path: Path, max_bytes: int, max_mb: float) -> tuple[str, bytes]:
    """``(name, bytes)`` of the one ``.json`` file of the zip at ``path`` (hidden entries
    and ``__MACOSX`` skipped), after every entry was checked, at most ``max_bytes`` read.
    Raises ``OVEarthInputError`` naming the archive (and entry) for anything else."""
    label = str(path)
    expected_size = f"a file of at most {max_mb:g} MB (this competition's limit)"
    try:
        entries = declared_entries(path)
        if entries > MAX_ENTRIES:
            raise _refused(label, "(submission)", f"at most {MAX_ENTRIES:,} entries in the "
                           "zip", f"{entries:,} entries")
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_ENTRIES:
                raise _refused(label, "(submission)", f"at most {MAX_ENTRIES:,} entries in "
                               "the zip", f"{len(infos):,} entries")
            problems = _entry_problems(archive, label)
            if problems:
                raise OVEarthInputError(problems)
            members = [i for i in infos if not i.is_dir()
                       and i.filename.lower().endswith(".json")
                       and not any(p.startswith(".") or p in SKIPPED
                                   for p in PurePosixPath(i.filename).parts)]
            if len(members) != 1:
                names = ", ".join(shown(i.filename) for i in members[:5]) or "no .json file"
                raise _refused(label, "(submission)", f"{_EXPECTED_ONE} zip",
                               f"{len(members)}: {names}")
            member = members[0]
            where = f"{label}:{member.filename}"
            if member.file_size > max_bytes:
                raise _refused(where, "(file size)", expected_size,
                               size_text(member.file_size))
            with archive.open(member) as handle:
                data = handle.read(max_bytes + 1)
    except OVEarthInputError:
        raise
    except _UNREADABLE as err:
        raise _refused(label, "(file)", "a readable zip archive",
                       f"{type(err).__name__}: {err}"[:300]) from None
    if len(data) > max_bytes:
        raise _refused(where, "(file size)", expected_size, f"more than {size_text(max_bytes)}")
    return member.filename, data

