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
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from typing import BinaryIO

PathLike = str | os.PathLike[str]
MAX_INPUT_MB_VAR = "OVEARTH_MAX_INPUT_MB"
DEFAULT_MAX_INPUT_MB = 200  # .streamlit/config.toml server.maxUploadSize (Streamlit's MB)
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
    1 MB = 2**20 bytes as Streamlit counts its upload cap), default 200 MB."""
    text = (os.environ if environ is None else environ).get(MAX_INPUT_MB_VAR, "").strip()
    try:
        mb = float(text) if text else DEFAULT_MAX_INPUT_MB
    except ValueError:
        mb = DEFAULT_MAX_INPUT_MB
    return int(mb * _MB) if mb > 0 else DEFAULT_MAX_INPUT_MB * _MB


def kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a named pipe (FIFO)", ...)."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
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
    cap = max_input_bytes() if max_bytes is None else max_bytes
    if st.st_size > cap:
        raise InputRefused(path, f"a file of at most {_cap_text(cap)} (the upload limit; "
                                 f"{MAX_INPUT_MB_VAR} changes it)", size_text(st.st_size))


def open_input(path: PathLike, max_bytes: int | None = None) -> BinaryIO:
    """Open a regular file of at most ``max_bytes`` for reading, without ever blocking.

    Raises :class:`InputRefused` for anything else (checked before opening and again on
    the open descriptor) and ``OSError`` (missing, unreadable) as ``open`` would.
    """
    check_input_stat(path, os.stat(path), max_bytes)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        check_input_stat(path, os.fstat(fd), max_bytes)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: PathLike, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (:func:`open_input`'s checks).

    At most ``max_bytes + 1`` bytes are read, so a file that grows after the check, or
    one whose size the kernel reports as 0 (``/proc``), is refused instead of read whole.
    """
    cap = max_input_bytes() if max_bytes is None else max_bytes
    with open_input(path, cap) as handle:
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


def _replace(target: str, data: bytes, st: os.stat_result | None,
             notify: Callable[[str], None]) -> None:
    """Atomic write: a temporary file beside ``target``, fsync, rename over it."""
    folder, name = os.path.split(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if st is not None and stat.S_ISREG(st.st_mode):
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            if os.geteuid() == 0:  # root replacing a user's file must not take it over
                with contextlib.suppress(OSError):
                    os.chown(tmp, st.st_uid, st.st_gid)
            if st.st_nlink > 1:
                notify(f"note: {target} had {st.st_nlink} hard links; the other names keep "
                       "the previous content")
        else:
            # mkstemp creates 0600 files; give the result the mode a plain open() would.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
