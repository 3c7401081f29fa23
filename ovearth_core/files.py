"""Reading input files and writing output files safely (standard library only).

Inputs (:func:`open_input`, :func:`read_bounded`): only regular files of at most
``max_input_bytes()`` (200 MB, the app's upload cap; ``OVEARTH_MAX_INPUT_MB`` changes it)
are read. A named pipe, a device, a socket or a folder is refused with
:class:`InputRefused` before anything is read, and the check never blocks: the file is
opened with ``O_NONBLOCK`` and checked again with ``fstat`` on the open descriptor, so a
pipe swapped in after the first check cannot hang the caller (callers parse inside
:func:`~ovearth_core.gcpause.gc_paused`, where blocking would stall the whole server).

Outputs (:func:`write_output`, the one function every command writes with):

* ``None`` or ``-``: standard output; ``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``:
  that open descriptor, as the shell set it up (appending if it appends).
* a new path or an existing regular file: written atomically (a temporary file in the same
  folder, flushed to disk, then renamed over the target); an existing file keeps its
  permission bits (and, for root, its owner).
* a named pipe or a character device (``>(jq .)``, a terminal, a null device): streamed,
  never replaced.
* a symbolic link: its target is written, and ``notify`` says so.
* refused with :class:`OutputRefused`: a folder, a block device, a socket, and any file
  that is one of the command's inputs (same ``st_dev`` and ``st_ino``, so hard links and
  symbolic links to an input are caught too).

Confined writes (the app's sidecar, saved views and exports, the converters' folders, the
suite's outputs): :func:`write_confined` (one file), :func:`write_files` (several files,
all or nothing), :func:`folder_writer` (a new folder, built beside its target and renamed
into place) and :func:`append_line` (the review sidecar). Each takes a ``root`` and a path
inside it; every folder below the root is opened with ``O_NOFOLLOW`` through the one
above it (``dir_fd``), so no symbolic link inside the root is followed, and only regular
files are written or replaced (a link, a pipe, a device, a socket or a folder in the way
is refused with :class:`OutputRefused`). Files are written to a temporary name, flushed
and renamed, so a reader sees the old or the new content, never part of it. A name that
comes from data is checked with :func:`is_component` first.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import BinaryIO

PathLike = str | os.PathLike[str]
MAX_INPUT_MB_VAR = "OVEARTH_MAX_INPUT_MB"
DEFAULT_MAX_INPUT_MB = 200  # .streamlit/config.toml server.maxUploadSize (Streamlit's MB)
MAX_INPUT_MB = 1 << 20  # 1 TB: the largest OVEARTH_MAX_INPUT_MB taken
_MB = 1024 * 1024
_FD_ALIAS = re.compile(r"^/(?:dev/(?P<std>stdout|stderr)|dev/fd/(?P<fd>\d+)"
                       r"|proc/(?:self|(?P<pid>\d+))/fd/(?P<pfd>\d+))$")


class FileRefused(ValueError):
    """A file that is not read or written, with what was expected and what was found."""

    def __init__(self, path: PathLike, expected: str, found: str):
        self.path, self.expected, self.found = os.fspath(path), expected, found
        super().__init__(f"{self.path}: expected {expected}, found {found}")


class InputRefused(FileRefused):
    """An input that is not a regular file, or larger than the cap."""


class OutputRefused(FileRefused):
    """An output path that must not be written (a folder, a block device, an input...)."""


def max_input_bytes(environ: dict[str, str] | os._Environ[str] | None = None) -> int:
    """The input size cap in bytes: ``OVEARTH_MAX_INPUT_MB`` (a positive number of MB,
    1 MB = 2**20 bytes as Streamlit counts its upload cap, at most :data:`MAX_INPUT_MB`),
    default 200 MB. ``ValueError`` naming the variable for anything else (``inf``, ``0``,
    ``lots``): a limit is never guessed."""
    from .bounds import parse_float

    text = (os.environ if environ is None else environ).get(MAX_INPUT_MB_VAR, "").strip()
    if not text:
        return DEFAULT_MAX_INPUT_MB * _MB
    mb = parse_float(text, name=MAX_INPUT_MB_VAR, low=0, high=MAX_INPUT_MB, low_open=True)
    return max(1, int(mb * _MB))


def input_cap(path: PathLike, max_bytes: int | None = None) -> int:
    """``max_bytes``, or the environment's cap; a bad ``OVEARTH_MAX_INPUT_MB`` refuses the
    file about to be read, saying why (a message, never a traceback)."""
    if max_bytes is not None:
        return max_bytes
    try:
        return max_input_bytes()
    except ValueError as err:
        raise InputRefused(path, f"a readable size limit ({err})", "none read") from None


def kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a named pipe (FIFO)", ...)."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def size_text(n: int) -> str:
    """``n`` bytes in MB or GB (Streamlit's units), with the exact count."""
    if n >= 1024 * _MB:
        return f"{n / (1024 * _MB):.1f} GB ({n:,} bytes)"
    return f"{n / _MB:.1f} MB ({n:,} bytes)"


def _cap_text(cap: int) -> str:
    return f"{cap / _MB:.3g} MB"


def check_input_stat(path: PathLike, st: os.stat_result, max_bytes: int | None = None) -> None:
    """Raise :class:`InputRefused` unless ``st`` is a regular file within the cap."""
    if not stat.S_ISREG(st.st_mode):
        raise InputRefused(path, "a regular file", kind(st.st_mode))
    cap = input_cap(path, max_bytes)
    if st.st_size > cap:
        raise InputRefused(path, f"a file of at most {_cap_text(cap)} (the upload limit; "
                                 f"{MAX_INPUT_MB_VAR} changes it)", size_text(st.st_size))


def open_input(path: PathLike, max_bytes: int | None = None, *,
               follow_links: bool = True) -> BinaryIO:
    """Open a regular file of at most ``max_bytes`` for reading, without ever blocking.

    Raises :class:`InputRefused` for anything else (checked before opening and again on
    the open descriptor; with ``follow_links=False`` a symbolic link too) and ``OSError``
    (missing, unreadable) as ``open`` would.
    """
    check_input_stat(path, os.stat(path, follow_symlinks=follow_links), max_bytes)
    nofollow = 0 if follow_links else os.O_NOFOLLOW
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | nofollow)
    try:
        check_input_stat(path, os.fstat(fd), max_bytes)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: PathLike, max_bytes: int | None = None, *,
                 follow_links: bool = True) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (:func:`open_input`'s checks).

    At most ``max_bytes + 1`` bytes are read, so a file that grows after the check, or
    one whose size the kernel reports as 0 (``/proc``), is refused instead of read whole.
    """
    cap = input_cap(path, max_bytes)
    with open_input(path, cap, follow_links=follow_links) as handle:
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise InputRefused(path, f"a file of at most {_cap_text(cap)}",
                           f"more than {size_text(cap)}")
    return data


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _fd_alias(path: str) -> int | None:
    """The descriptor named by ``/dev/stdout``, ``/dev/fd/N`` or ``/proc/self/fd/N``, when
    it is open in this process."""
    match = _FD_ALIAS.match(os.path.abspath(path))
    if match is None or (match["pid"] and int(match["pid"]) != os.getpid()):
        return None
    fd = {"stdout": 1, "stderr": 2}.get(match["std"] or "") or int(match["fd"] or match["pfd"])
    try:
        os.fstat(fd)
    except OSError:
        return None
    return fd


def _same_file(st: os.stat_result, inputs: Iterable[PathLike]) -> str | None:
    for item in inputs:
        try:
            other = os.stat(item)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return os.fspath(item)
    return None


def _refuse_inputs(path: str, st: os.stat_result, inputs: Iterable[PathLike]) -> None:
    same = _same_file(st, inputs)
    if same is not None:
        raise OutputRefused(path, "an output path that is none of the inputs",
                            f"the input {same}" if same != path else "an input file")


def _refuse_kind(path: str, st: os.stat_result) -> None:
    mode = st.st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        raise OutputRefused(path, "a new file, a regular file, a named pipe, a character "
                                  "device or - (standard output)", kind(mode))


def _refuse_empty(text: str) -> None:
    if not text:
        raise OutputRefused(text, "a file path or - (standard output)", "an empty path")


def check_output(path: PathLike | None, inputs: Iterable[PathLike] = ()) -> None:
    """Raise :class:`OutputRefused` now if :func:`write_output` would refuse ``path``
    (so a command can refuse before its work, not after); ``OSError`` as ``stat``."""
    if path is None or os.fspath(path) == "-":
        return
    text = os.fspath(path)
    _refuse_empty(text)
    fd = _fd_alias(text)
    try:
        st = os.fstat(fd) if fd is not None else os.stat(text)
    except FileNotFoundError:
        return
    _refuse_kind(text, st)
    _refuse_inputs(text, st, inputs)


def write_output(path: PathLike | None, data: bytes, *, inputs: Iterable[PathLike] = (),
                 notify: Callable[[str], None] = _stderr) -> str:
    """Write ``data`` to ``path`` as the module docstring says; the path written.

    ``inputs`` are the files the command read (never overwritten); ``notify`` receives
    the notes a user should see (a symbolic link followed, a pipe waiting for its
    reader, hard links left with the old content). Raises :class:`OutputRefused` or
    ``OSError``; on any error the target is left as it was (a stream may have received
    part of ``data``).
    """
    inputs = list(inputs)
    if path is None or os.fspath(path) == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return "-"
    text = os.fspath(path)
    _refuse_empty(text)
    fd = _fd_alias(text)
    if fd is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        _write_all(fd, data)
        return text
    try:
        st: os.stat_result | None = os.stat(text)
    except FileNotFoundError:
        st = None
    if st is not None:
        _refuse_kind(text, st)
        _refuse_inputs(text, st, inputs)
    target = text
    if os.path.islink(text):
        target = os.path.realpath(text)
        notify(f"note: {text} is a symbolic link; writing its target {target}")
    if st is not None and not stat.S_ISREG(st.st_mode):
        _stream(text, data, inputs, notify)
    else:
        _replace(target, data, st, notify)
    return target


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _stream(path: str, data: bytes, inputs: list[PathLike],
            notify: Callable[[str], None]) -> None:
    """Write to an existing pipe or character device through an ordinary open."""
    flags = os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags | os.O_NONBLOCK)
    except OSError as err:
        if err.errno != errno.ENXIO:  # a pipe nobody reads yet
            raise
        notify(f"note: waiting for a reader of the named pipe {path}")
        fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
            raise OutputRefused(path, "the named pipe or device it was a moment before",
                                kind(st.st_mode))
        _refuse_inputs(path, st, inputs)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        _write_all(fd, data)
    finally:
        os.close(fd)


def atomic_write(target: PathLike, data: bytes, *, mode: int = 0o666,
                 keep: os.stat_result | None = None) -> None:
    """``target`` holds ``data``, all or nothing: the one atomic write of the package (the
    result cache's entries, uploads, outputs; :func:`write_files` stages its files the same
    way). A new temporary file beside ``target`` (``O_CREAT | O_EXCL | O_NOFOLLOW``) is
    written in full, fsynced and renamed over it; on any failure it is removed and
    ``target`` is untouched. The temporary file is created with ``mode`` (the process's
    umask narrows it as for any new file: the umask is never read or changed), or with
    ``keep``'s mode and owner (an existing file being replaced)."""
    folder, name = os.path.split(os.fspath(target))
    dfd = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        tmp = _write_temp(dfd, name, data, keep, mode)
        try:
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    finally:
        os.close(dfd)


def _replace(target: str, data: bytes, st: os.stat_result | None,
             notify: Callable[[str], None]) -> None:
    """Atomic write over ``target`` (:func:`atomic_write`); an existing regular file's mode
    and owner are kept (a new file gets the mode a plain ``open()`` would)."""
    old = st if st is not None and stat.S_ISREG(st.st_mode) else None
    if old is not None and old.st_nlink > 1:
        notify(f"note: {target} had {old.st_nlink} hard links; the other names keep the "
               "previous content")
    atomic_write(target, data, keep=old)


# --- confined writes ------------------------------------------------------------------------

COMPONENT = "a single file name (not empty, . or ..; no /, \\ or control characters)"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NAME_MAX = 255


def is_component(name: object) -> bool:
    """Whether ``name`` can be used as one file name as it is: a non-empty string, not
    ``.`` or ``..``, without ``/``, ``\\``, NUL or other control characters, of at most
    255 UTF-8 bytes (names that come from data are checked with this before use).

    >>> [is_component(n) for n in ("model_a", "../x", "a/b", "..", "", "x\\ny")]
    [True, False, False, False, False, False]
    """
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name:
        return False
    if not name.isprintable():
        return False
    try:
        return len(name.encode("utf-8")) <= _NAME_MAX
    except UnicodeEncodeError:  # a lone surrogate (undecodable bytes of a command line)
        return False


def _parts(root: PathLike, path: PathLike) -> tuple[str, list[str]]:
    """``(resolved root, components of path below it)``; ``path`` is relative to ``root``
    or absolute inside it (as given or resolved). No ``..`` is accepted."""
    real = os.path.realpath(root)
    text = os.fspath(path)
    if not text or "\x00" in text:
        raise OutputRefused(text or "''", "a path inside " + real, "an empty path or a NUL byte")
    parts = PurePath(text).parts
    if ".." in parts:
        raise OutputRefused(text, f"a path inside {real} without ..", "a .. component")
    if not os.path.isabs(text):
        rel = list(parts)
    else:
        for base in (os.path.abspath(root), real):
            base_parts = PurePath(base).parts
            if tuple(parts[:len(base_parts)]) == base_parts:
                rel = list(parts[len(base_parts):])
                break
        else:
            raise OutputRefused(text, f"a path inside {real}", "a path outside it")
    if not rel:
        raise OutputRefused(text, f"a path below {real}", "the folder itself")
    return real, rel


def _refused(shown: str, st: os.stat_result, expected: str) -> OutputRefused:
    return OutputRefused(shown, expected, kind(st.st_mode))


def _open_dirs(real: str, names: list[str], create: bool = True) -> int:
    """A descriptor of ``real/names...``, each folder opened without following a link
    (created when missing and ``create``)."""
    fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    shown = real
    try:
        for name in names:
            shown = os.path.join(shown, name)
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as err:
                if err.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                raise _refused(shown, st, "a folder (links are not followed)") from None
            os.close(fd)
            fd = sub
        return fd
    except BaseException:
        os.close(fd)
        raise


def _existing(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _tmp_name(name: str, suffix: str) -> str:
    return f".{name[:180]}.{secrets.token_hex(4)}{suffix}"


def _check_file(shown: str, st: os.stat_result | None, inputs: Iterable[PathLike]) -> None:
    if st is None:
        return
    if not stat.S_ISREG(st.st_mode):
        raise _refused(shown, st, "a new or regular file (links and special files are "
                                  "not written)")
    _refuse_inputs(shown, st, inputs)


def _write_temp(dfd: int, name: str, data: bytes, st: os.stat_result | None,
                new_mode: int = 0o666) -> str:
    """``data`` in a new temporary file beside ``name`` (fsynced), with ``st``'s mode and
    owner (an existing file) or ``new_mode`` (narrowed by the umask); its name."""
    tmp = _tmp_name(name, ".tmp")
    mode = stat.S_IMODE(st.st_mode) if st is not None else new_mode
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 mode, dir_fd=dfd)
    try:
        try:
            if st is not None:
                os.fchmod(fd, mode)
                if os.geteuid() == 0:
                    with contextlib.suppress(OSError):
                        os.fchown(fd, st.st_uid, st.st_gid)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    return tmp


def _open_parent(root: PathLike, path: PathLike) -> tuple[str, str, int | None]:
    """``(path as shown, its last component, a descriptor of the folder holding it)``,
    every folder on the way opened without following a link; the descriptor is ``None``
    when a folder on the way does not exist yet."""
    real, parts = _parts(root, path)
    shown = os.path.join(real, *parts)
    try:
        return shown, parts[-1], _open_dirs(real, parts[:-1], create=False)
    except FileNotFoundError:
        return shown, parts[-1], None


def check_confined(root: PathLike, path: PathLike, *, inputs: Iterable[PathLike] = ()) -> Path:
    """Raise :class:`OutputRefused` now if :func:`write_confined` would refuse ``path``
    (a link on the way, a link or special file in its place, one of ``inputs``), so a
    command can refuse before its work; the path. Missing folders are fine."""
    shown, name, dfd = _open_parent(root, path)
    if dfd is None:
        return Path(shown)
    try:
        _check_file(shown, _existing(dfd, name), inputs)
    finally:
        os.close(dfd)
    return Path(shown)


def write_confined(root: PathLike, path: PathLike, data: bytes, *,
                   inputs: Iterable[PathLike] = ()) -> Path:
    """Write ``data`` atomically to ``path`` inside ``root``; the path written.

    Folders below ``root`` are created as needed; none may be a symbolic link, and the
    file must be new or a regular file that is none of ``inputs`` (its permission bits
    are kept). Raises :class:`OutputRefused` or ``OSError``; the target is then as it was.
    """
    return write_files(root, {path: data}, inputs=inputs)[0]


def write_files(root: PathLike, items: Mapping[PathLike, bytes], *,
                inputs: Iterable[PathLike] = ()) -> list[Path]:
    """Write several files inside ``root``, all or nothing (:func:`write_confined` each).

    Every file is first written to a temporary name beside it; only when all are on disk
    are they renamed into place (an old file is kept aside until every rename succeeded,
    and put back if one fails). A full disk therefore leaves every target as it was.
    """
    inputs = list(inputs)
    staged: list[tuple[int, str, str, bool]] = []  # (dir fd, name, temporary, existed)
    done: list[tuple[int, str, str | None, bool]] = []  # (dir fd, name, old kept as, existed)
    out = []
    try:
        for path, data in items.items():
            real, parts = _parts(root, path)
            dfd = _open_dirs(real, parts[:-1])
            shown = os.path.join(real, *parts)
            try:
                st = _existing(dfd, parts[-1])
                _check_file(shown, st, inputs)
                staged.append((dfd, parts[-1], _write_temp(dfd, parts[-1], data, st),
                               st is not None))
            except BaseException:
                os.close(dfd)
                raise
            out.append(Path(shown))
        for dfd, name, tmp, existed in staged:
            old = _tmp_name(name, ".old") if existed and len(staged) > 1 else None
            if old is not None:
                try:
                    os.link(name, old, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
                except OSError:  # no hard links here: this one cannot be put back
                    old = None
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            done.append((dfd, name, old, existed))
        for dfd, _, old, _ in done:
            if old is not None:
                with contextlib.suppress(OSError):
                    os.unlink(old, dir_fd=dfd)
            with contextlib.suppress(OSError):
                os.fsync(dfd)
        return out
    except BaseException:
        for dfd, name, old, existed in reversed(done):
            with contextlib.suppress(OSError):
                if old is not None:
                    os.replace(old, name, src_dir_fd=dfd, dst_dir_fd=dfd)
                elif not existed:
                    os.unlink(name, dir_fd=dfd)
        for dfd, _, tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
        raise
    finally:
        for dfd in {s[0] for s in staged}:
            os.close(dfd)


@dataclass(frozen=True)
class TornLine:
    """A file that ended mid-line before an append: its last line (1-based) and the
    start of what it held; the appended line starts on the next line."""

    line: int
    kept: bytes


def append_line(root: PathLike, path: PathLike, line: bytes) -> TornLine | None:
    """Append ``line`` (ending in ``\\n``) to the regular file ``path`` inside ``root``.

    The file is opened with ``O_APPEND | O_NOFOLLOW | O_NONBLOCK`` (folders as in
    :func:`write_confined`; a link, pipe or device is refused without blocking, and so is
    a file with several hard links, whose other names may be outside the root), locked
    with an exclusive ``flock``, written with one ``write`` (finished if a signal cuts it
    short) and synced. When the file does not end with a newline (a crash or a full disk
    cut its last line), the line starts on a fresh line and the torn line is returned.
    """
    real, parts = _parts(root, path)
    shown = os.path.join(real, *parts)
    dfd = _open_dirs(real, parts[:-1])
    try:
        st = _existing(dfd, parts[-1])
        if st is not None and not stat.S_ISREG(st.st_mode):  # never even opened
            raise _refused(shown, st, "a regular file (links and special files are not "
                                      "written)")
        try:
            # Read-write: the last byte is read to see whether the file ends mid-line.
            fd = os.open(parts[-1], os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o666, dir_fd=dfd)
        except OSError as err:
            if err.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EWOULDBLOCK):
                raise
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
            raise _refused(shown, st, "a regular file (links and special files are not "
                                      "written)") from None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refused(shown, st, "a regular file (links and special files are not "
                                      "written)")
        if st.st_nlink > 1:  # appending would write the other names' file too
            raise OutputRefused(shown, "a regular file with one name",
                                f"a file with {st.st_nlink} hard links")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        fcntl.flock(fd, fcntl.LOCK_EX)
        torn = _torn_end(fd, os.fstat(fd).st_size)
        _write_all(fd, (b"\n" if torn else b"") + line)
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock
    return torn


def _torn_end(fd: int, size: int) -> TornLine | None:
    """The last line of the open file when it lacks its newline (``None`` otherwise)."""
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    newlines, start, offset, chunk = 0, 0, 0, 1 << 20
    while offset < size:
        block = os.pread(fd, min(chunk, size - offset), offset)
        if not block:
            break
        count = block.count(b"\n")
        if count:
            newlines += count
            start = offset + block.rfind(b"\n") + 1
        offset += len(block)
    return TornLine(newlines + 1, os.pread(fd, min(80, size - start), start))


class FolderWriter:
    """A temporary folder being filled (:func:`folder_writer`): its files are written
    with :meth:`write` and :meth:`place`, confined to it."""

    def __init__(self, path: Path, target: Path):
        self.path, self.target = path, target  # the temporary folder, the final one

    def write(self, rel: str, data: bytes) -> Path:
        """Write ``data`` as ``rel`` (a relative path, folders created) inside the folder."""
        return write_confined(self.path, rel, data)

    def place(self, rel: str, source: PathLike, link: bool = False) -> Path:
        """A copy (or, with ``link``, a hard link when the file system allows) of the
        regular file ``source`` as ``rel`` inside the folder (:class:`InputRefused` for a
        pipe, a device or a folder)."""
        real, parts = _parts(self.path, rel)
        dfd = _open_dirs(real, parts[:-1])
        try:
            if link:
                # A hard link shares the file itself: only a regular file is linked (a pipe
                # or a device is refused here as the copy below refuses it).
                check_input_stat(source, os.stat(source), 1 << 62)
                try:
                    os.link(source, parts[-1], dst_dir_fd=dfd)
                    return Path(real, *parts)
                except OSError:  # another file system, or links not allowed: copy
                    pass
            # Any size (satellite scenes are large), but a regular file: a pipe never blocks.
            with open_input(source, 1 << 62) as src:
                fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o666, dir_fd=dfd)
                try:
                    _copy(src.fileno(), fd)
                finally:
                    os.close(fd)
        finally:
            os.close(dfd)
        return Path(real, *parts)


def _copy(src: int, dest: int) -> None:
    """Copy an open regular file into another (``sendfile`` in the kernel where it can)."""
    offset = 0
    try:
        while sent := os.sendfile(dest, src, offset, 1 << 30):
            offset += sent
    except OSError as err:
        if offset or err.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
        while block := os.read(src, 1 << 20):
            _write_all(dest, block)


def holds_input(folder: PathLike, inputs: Iterable[PathLike]) -> str | None:
    """The first of ``inputs`` that is ``folder`` or lies below it (resolved), or ``None``."""
    real = Path(os.path.realpath(folder))
    for item in inputs:
        try:
            resolved = Path(os.path.realpath(item))
        except (OSError, ValueError):
            continue
        if resolved == real or resolved.is_relative_to(real):
            return os.fspath(item)
    return None


def check_folder(root: PathLike, folder: PathLike, *, replace: bool = False,
                 inputs: Iterable[PathLike] = ()) -> Path:
    """Raise :class:`OutputRefused` unless :func:`folder_writer` may write ``folder``
    (inside ``root``): it is new or an empty folder, or ``replace`` is set and it holds
    none of ``inputs``, and no folder on the way is a link. The folder's path."""
    shown, name, dfd = _open_parent(root, folder)
    if dfd is None:
        return Path(shown)
    try:
        st = _existing(dfd, name)
        if st is None:
            return Path(shown)
        if not stat.S_ISDIR(st.st_mode):
            raise _refused(shown, st, "a folder to create, or an empty folder (links are "
                                      "not followed)")
        if _non_empty(dfd, name):
            if not replace:
                raise OutputRefused(shown, "a new or empty folder (or --force to replace it)",
                                    "a non-empty folder")
            held = holds_input(shown, inputs)
            if held is not None:
                raise OutputRefused(shown, "an output folder to replace (one that holds "
                                    "none of the command's inputs)",
                                    f"a folder that holds the input {held}")
        return Path(shown)
    finally:
        os.close(dfd)


def _non_empty(dfd: int, name: str) -> bool:
    fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
    try:
        with os.scandir(fd) as entries:
            return any(True for _ in entries)
    finally:
        os.close(fd)


@contextlib.contextmanager
def folder_writer(root: PathLike, folder: PathLike, *, replace: bool = False,
                  inputs: Iterable[PathLike] = ()) -> Iterator[FolderWriter]:
    """Build the folder ``folder`` (inside ``root``) all or nothing.

    Yields a :class:`FolderWriter` on a new temporary sibling (``.NAME.xxxx.partial``);
    when the block succeeds it is renamed to ``folder`` (an existing non-empty folder is
    moved aside first and removed after, only with ``replace`` and never when it holds
    one of ``inputs`` (:func:`check_folder`)); when the block fails it is removed and
    ``folder`` is untouched.
    """
    inputs = list(inputs)
    target = check_folder(root, folder, replace=replace, inputs=inputs)
    real, parts = _parts(root, folder)
    pfd = _open_dirs(real, parts[:-1])
    name = parts[-1]
    tmp = _tmp_name(name, ".partial")
    try:
        os.mkdir(tmp, 0o777, dir_fd=pfd)  # the umask narrows it, as for any new folder
        parent = target.parent
        try:
            yield FolderWriter(parent / tmp, target)
            check_folder(root, folder, replace=replace, inputs=inputs)
            st = _existing(pfd, name)
            if st is not None and _non_empty(pfd, name):
                old = _tmp_name(name, ".old")
                os.rename(name, old, src_dir_fd=pfd, dst_dir_fd=pfd)
                try:
                    os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
                except BaseException:
                    os.rename(old, name, src_dir_fd=pfd, dst_dir_fd=pfd)
                    raise
                shutil.rmtree(parent / old, ignore_errors=True)
            else:
                os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)  # new, or over empty
            with contextlib.suppress(OSError):
                os.fsync(pfd)
        except BaseException:
            shutil.rmtree(parent / tmp, ignore_errors=True)
            raise
    finally:
        os.close(pfd)


