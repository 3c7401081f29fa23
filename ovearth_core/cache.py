"""A persistent on-disk cache of evaluation results (data only: JSON and raw numpy buffers).

A restarted app server, a second leaderboard run or a report of the same files costs only
reading the files' bytes (to hash them) and loading the stored result. An entry is keyed by
the SHA-256 of:

- a *kind* (what was computed: ``"evaluation"`` for every evaluation, made by
  :mod:`ovearth_core.pipeline` alone; ``"leaderboard_entry"``, ...),
- the SHA-256 of the ground-truth file's bytes and of the prediction file's bytes,
- every field of the evaluation options (:class:`~ovearth_core.options.Options`: task,
  modalities as requested, IoU and score thresholds, box format, AP's detection cap and
  hard negatives), as canonical JSON (:func:`key`),
- the package version, the Python version and the versions of the numeric libraries, and
- a digest of the evaluator's own source files (every ``ovearth_core/*.py``),

so that editing the evaluator, or upgrading numpy/shapely/pycocotools, can never serve a
number computed by other code. A cached value is always equal to a fresh evaluation of the
same inputs, or it is not found.

Location: ``$OVEARTH_CACHE_DIR`` if set; else ``platformdirs.user_cache_dir`` of
``ovearth-inspector`` (``$XDG_CACHE_HOME/ovearth-inspector`` or
``~/.cache/ovearth-inspector`` on Linux, ``~/Library/Caches/ovearth-inspector`` on macOS,
``%LOCALAPPDATA%\\ovearth-inspector\\Cache`` on Windows). ``OVEARTH_CACHE=off`` (or ``0``, ``no``,
``false``) disables it. Size cap: ``OVEARTH_CACHE_MAX_BYTES`` (bytes, or with a ``K``/``M``/
``G`` suffix; default 1 GiB); the least recently used entries are removed when it is over.

Entries hold data, never code: nothing is unpickled or imported on load, so a file
planted in the folder can at worst be refused. An entry is a header (magic, its key, the
lengths and the SHA-256 of its payload) and the payload: a JSON document (orjson: the key
again, the value, and an index of arrays) followed by raw little-endian numpy buffers
(``numpy.frombuffer`` of a whitelisted dtype; never ``allow_pickle``). A value is stored
only when it reads back equal (a NaN, which JSON would turn into ``null``, or a tuple, which
would come back a list, is not stored). A truncated, corrupted, foreign or old-format
(pickle, before issue 26) file, or one under another key, is a miss: it is removed, the
value is recomputed and the file is reported (``ResultCache.rejected``, a logged warning,
:func:`hits_line`); it is never an exception and never loaded.

The folder is refused (cache off, with a warning) when it is a symbolic link, is not
owned by this user, or group or others can write it: whoever can write there could plant
an entry with other numbers. It is created ``0700``. Entries are written to a new
temporary file (``O_EXCL | O_NOFOLLOW``, ``0600``) in the folder and renamed into place
(atomic; two processes writing the same key both leave a complete entry).

The spec's plain command ``python -m ovearth_core`` never uses the cache (its options and
output stay exactly the spec's); the leaderboard, the report and the app do.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import logging
import math
import os
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from .files import InputRefused, open_input
from .gcpause import gc_paused
from .options import Options

ENV_DIR = "OVEARTH_CACHE_DIR"
ENV_SWITCH = "OVEARTH_CACHE"
ENV_MAX_BYTES = "OVEARTH_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 1 << 30
MAX_SIZE_BYTES = 1 << 50  # 1 PiB: the largest cache cap taken
APP_NAME = "ovearth-inspector"
FORMAT = 2  # 1: pickles (never loaded again: every key changed with this number)
MAGIC = b"OVEARTH-DATA\x00\x02"
LEGACY_MAGIC = b"OVEARTH-CACHE\x00"
SUFFIX = ".entry"
TMP_SUFFIX = ".tmp"  # ovearth_core.files.atomic_write's temporary files: ".<name>.<hex>.tmp"
STALE_TMP_SECONDS = 3600
# magic, key, JSON length, payload length, payload SHA-256
_HEADER = len(MAGIC) + 32 + 8 + 8 + 32
# The dtypes an entry may hold (raw little-endian buffers; never an object array).
DTYPES = frozenset({"<f8", "<f4", "<i8", "<i4", "<u4", "|u1", "|b1"})
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)
# Libraries whose versions can change a number (key part).
NUMERIC_LIBRARIES = ("numpy", "pycocotools", "shapely", "scipy", "orjson")
LOG = logging.getLogger("ovearth_core.cache")
if TYPE_CHECKING:  # numpy is imported where arrays are encoded: a --help loads none
    import numpy as np

Arrays = Mapping[str, "np.ndarray"]


class _Miss:
    def __repr__(self) -> str:
        return "MISS"


MISS: Any = _Miss()


class Rejected(ValueError):
    """An entry that is not loaded (damaged, foreign, old format, another key)."""


def disabled() -> bool:
    """``OVEARTH_CACHE`` is ``off`` / ``0`` / ``no`` / ``false``."""
    return os.environ.get(ENV_SWITCH, "").strip().lower() in ("off", "0", "no", "false")


def default_dir() -> Path:
    """The cache folder: ``$OVEARTH_CACHE_DIR`` or the platform's user cache folder."""
    override = os.environ.get(ENV_DIR)
    if override:
        return Path(override).expanduser()
    import platformdirs  # the platform's convention (XDG, ~/Library/Caches, %LOCALAPPDATA%)

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def parse_size(text: str) -> int:
    """``"1073741824"``, ``"500M"``, ``"2G"``, ``"64k"`` -> bytes, at most
    :data:`MAX_SIZE_BYTES` (``ValueError`` otherwise: ``inf``, ``1e400``, ``-5``, ``lots``)."""
    from .bounds import parse_float

    t = text.strip().upper().removesuffix("B")
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    number = t[:-1] if factor != 1 else t
    value = parse_float(number, name="size", low=0, high=MAX_SIZE_BYTES / factor)
    return int(value * factor)


def max_bytes_from_env() -> int:
    """``OVEARTH_CACHE_MAX_BYTES`` or the default (a bad value is a clear ValueError)."""
    raw = os.environ.get(ENV_MAX_BYTES)
    if raw is None or not raw.strip():
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(raw)
    except (ValueError, IndexError):
        raise ValueError(f"{ENV_MAX_BYTES}={raw!r}: expected a size in bytes such as "
                         f"1073741824, 500M or 2G") from None


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of an input file's bytes (hex), read through
    :func:`~ovearth_core.files.open_input` (a regular file within the input cap, as the
    loader reads it); ``OSError`` for anything else (a pipe or a device is never read here:
    the loader reports it)."""
    h = hashlib.sha256()
    try:
        handle = open_input(path)
    except InputRefused as err:
        raise OSError(str(err)) from None
    with handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_hashed(path: str | os.PathLike[str], role: str) -> tuple[bytes, str]:
    """The bytes of an input file (:func:`~ovearth_core.io.read_input`: a regular file
    within the input cap) and their SHA-256 (hex): the digest is of the very bytes
    returned, which the caller parses (never a second read)."""
    from .io import read_input

    data = read_input(path, role)
    return data, hashlib.sha256(data).hexdigest()


def source_files() -> list[Path]:
    """The evaluator's source files (the flat ``ovearth_core/*.py``), sorted."""
    return sorted(Path(__file__).resolve().parent.glob("*.py"))


def files_digest(paths: Sequence[Path]) -> str:
    """SHA-256 over source files, in the order given (name and bytes of each)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode() + b"\x00")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 over the evaluator's source files (name and bytes of each): any edit of the
    evaluator changes every key."""
    return files_digest(source_files())


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, str]:
    """Package, Python and numeric library versions (a key part)."""
    from importlib import metadata

    from . import __version__

    versions = {"ovearth_core": __version__, "python": sys.version.split()[0]}
    for name in NUMERIC_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def make_key(kind: str, parts: dict[str, Any], code: str | None = None,
             env: dict[str, str] | None = None) -> str:
    """The entry key: SHA-256 (hex) of the canonical JSON of ``kind``, ``parts`` (file
    digests, options), the environment and the code digest."""
    doc = {"format": FORMAT, "kind": kind, "parts": parts,
           "environment": environment() if env is None else env,
           "code": code_digest() if code is None else code}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def key(kind: str, gt_sha256: str, pred_sha256: str, options: Options,
        **parts: str) -> str:
    """The key of ``kind`` (e.g. ``"evaluation"``) computed from a ground truth and a
    submission (file SHA-256s) under ``options``: every field of :class:`Options` is in it
    (:meth:`Options.key_parts`), so no call site can leave one out. ``modalities`` as
    requested (``auto`` stays ``auto``: the file digests decide what it resolves to).
    ``parts``: more of what the value depends on, such as the digest of the analysis
    code that derived it from the evaluator's result (:func:`files_digest`)."""
    return make_key(kind, {"gt_sha256": gt_sha256, "pred_sha256": pred_sha256,
                           **options.key_parts(), **parts})


class ResultCache:
    """A folder of entries ``<key>.entry``, at most ``max_bytes`` in total (LRU).

    ``rejected``: ``(path, reason)`` of every file found under a key and not loaded;
    ``refused``: why the folder itself is not used (``None`` while it is).
    """

    def __init__(self, folder: str | os.PathLike[str] | None = None,
                 max_bytes: int | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_dir()
        self.max_bytes = max_bytes_from_env() if max_bytes is None else max_bytes
        self.hits = 0
        self.misses = 0
        self.rejected: list[tuple[Path, str]] = []
        self.refused: str | None = None

    def __repr__(self) -> str:
        return f"ResultCache({str(self.folder)!r}, max_bytes={self.max_bytes})"

    def path(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

    def check(self) -> str | None:
        """Why the folder is refused, or ``None`` (also when it does not exist yet: it is
        created ``0700`` by the first :meth:`put`). Checked again before every use."""
        self.refused = folder_refusal(self.folder)
        return self.refused

    def get(self, key: str) -> Any:
        """The stored value, or :data:`MISS` (absent, refused folder, or a file that is not
        an entry of this key: such a file is removed and reported in :attr:`rejected`)."""
        found = self.get_arrays(key)
        return found if found is MISS else found[0]

    def get_arrays(self, key: str) -> Any:
        """``(value, arrays)`` of an entry stored with arrays, or :data:`MISS`."""
        path = self.path(key)
        blob = None if self.check() is not None else self._read(path)
        if blob is None:
            self.misses += 1
            return MISS
        try:
            found = decode(blob, key)
        except Rejected as why:
            self._reject(path, str(why))
            self.misses += 1
            return MISS
        self.hits += 1
        return found

    def _read(self, path: Path) -> bytes | None:
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return None
        except OSError as err:
            if err.errno == errno.ELOOP or path.is_symlink():
                self._reject(path, "a symbolic link, not an entry")
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self._reject(path, "not a regular file")
                return None
            blob = handle.read()
            try:  # the entry's modification time is its last use (LRU)
                os.utime(fd) if os.utime in os.supports_fd else os.utime(path)
            except OSError:
                pass
        return blob

    def reject(self, key: str, reason: str) -> None:
        """The entry of ``key`` decoded but is not what its reader expects (a damaged
        layout): removed and reported like any damaged entry (:attr:`rejected`)."""
        self._reject(self.path(key), reason)

    def _reject(self, path: Path, reason: str) -> None:
        self.rejected.append((path, reason))
        LOG.warning("result cache: ignored %s (%s); the result is computed again", path,
                    reason)
        _unlink(path)

    def put(self, key: str, value: Any, arrays: Arrays | None = None) -> bool:
        """Store ``value`` (JSON data) and ``arrays`` atomically; then evict to the cap.
        ``False`` when not stored (it would not read back equal, it is larger than the
        cap, or the folder is refused or not writable)."""
        try:
            blob = encode(key, value, arrays)
        except ValueError as err:
            LOG.warning("result cache: not stored (%s)", err)
            return False
        return self.put_blob(key, blob)

    def put_blob(self, key: str, blob: bytes) -> bool:
        """:meth:`put` of an entry already made with :func:`encode` (a worker process
        encodes its result once: for the cache and for the trip back)."""
        if len(blob) > self.max_bytes:
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError:
            return False
        if self.check() is not None:
            return False
        try:
            write_entry(self.folder, self.path(key).name, blob)
        except OSError:
            return False
        self.evict()
        return True

    def entries(self) -> list[tuple[float, int, Path]]:
        """``(last use, size, path)`` of every entry, oldest first (old-format files too:
        never loaded, they age out like any other)."""
        out: list[tuple[float, int, Path]] = []
        if self.check() is not None:
            return out
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        for name in names:
            path = self.folder / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if name.endswith(SUFFIX):
                out.append((st.st_mtime, st.st_size, path))
            elif (name.startswith(".") and name.endswith(TMP_SUFFIX)
                  and time.time() - st.st_mtime > STALE_TMP_SECONDS):
                _unlink(path)  # left by a writer that died
        out.sort()
        return out

    def size(self) -> int:
        return sum(size for _, size, _ in self.entries())

    def evict(self, max_bytes: int | None = None) -> int:
        """Remove the least recently used entries until the total is within the cap;
        returns the number removed."""
        cap = self.max_bytes if max_bytes is None else max_bytes
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in entries:
            if total <= cap:
                break
            _unlink(path)
            total -= size
            removed += 1
        return removed

    def clear(self) -> None:
        for _, _, path in self.entries():
            _unlink(path)


def folder_refusal(folder: Path) -> str | None:
    """Why ``folder`` must not hold the cache (a symbolic link, another owner, writable by
    group or others), or ``None`` (fine, or absent)."""
    try:
        st = os.lstat(folder)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return f"{folder} is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return None  # not a folder: every read misses and every write fails
    getuid = getattr(os, "getuid", None)
    if getuid is not None and st.st_uid != getuid():
        return f"{folder} is owned by user id {st.st_uid}, not by this user ({getuid()})"
    if os.name != "nt" and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"{folder} is writable by group or others (mode "
                f"{stat.S_IMODE(st.st_mode):04o}); make it 0700 or use another folder")
    return None


def write_entry(folder: Path, name: str, blob: bytes) -> None:
    """``folder/name`` holds ``blob``, atomically and ``0600``
    (:func:`ovearth_core.files.atomic_write`); nothing half-written is ever under ``name``."""
    from .files import atomic_write

    atomic_write(folder / name, blob, mode=0o600)


def encode(key: str, value: Any, arrays: Arrays | None = None) -> bytes:
    """An entry: the header, then the JSON document (key, value as :func:`pack` lays it
    out, array index), then the arrays' raw buffers (each at an 8-byte boundary).

    Raises ValueError for what would not read back exactly: a type JSON lacks, a NaN or
    infinity (JSON has none), a tuple (it would come back a list), an array of another
    dtype than :data:`DTYPES`.
    """
    import numpy as np

    index: dict[str, list[Any]] = {}
    chunks: list[bytes] = []
    at = 0
    for name, array in (arrays or {}).items():
        a = np.ascontiguousarray(array)
        if a.dtype.str not in DTYPES:
            raise ValueError(f"array {name!r}: dtype {a.dtype.str} is not stored")
        raw = a.tobytes()
        index[name] = [a.dtype.str, list(a.shape), at, len(raw)]
        chunks.append(raw + b"\x00" * (-len(raw) % 8))
        at += len(chunks[-1])
    with gc_paused():
        packed, deep = pack(value)
        try:
            doc = orjson.dumps({"key": key, "value": packed, "deep": deep, "arrays": index})
        except orjson.JSONEncodeError as err:
            raise ValueError(f"not JSON data: {err}") from None
        # Compared as laid out (unpack is pack's inverse on JSON data: tested): what JSON
        # would change (NaN -> null, a tuple -> a list) differs here.
        if orjson.loads(doc)["value"] != packed:
            raise ValueError("the value would not read back equal (a NaN, an infinity or "
                             "a tuple)")
    parts = [doc, b" " * (-len(doc) % 8), *chunks]
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    length = sum(map(len, parts))
    return b"".join([MAGIC, bytes.fromhex(key), (len(doc) + len(parts[1])).to_bytes(8, "little"),
                     length.to_bytes(8, "little"), h.digest(), *parts])


def decode(blob: bytes, key: str) -> tuple[Any, dict[str, np.ndarray]]:
    """``(value, arrays)`` of an entry made by :func:`encode` under ``key``; raises
    :class:`Rejected` saying why anything else is not loaded."""
    import numpy as np

    if blob.startswith(LEGACY_MAGIC):
        raise Rejected("an entry of the old pickle format: not loaded")
    if len(blob) < _HEADER or not blob.startswith(MAGIC):
        raise Rejected("not a cache entry, or truncated" if blob.startswith(MAGIC[:4])
                       else "not a cache entry")
    at = len(MAGIC)
    if blob[at:at + 32] != bytes.fromhex(key):
        raise Rejected("an entry of another key")
    json_len = int.from_bytes(blob[at + 32:at + 40], "little")
    length = int.from_bytes(blob[at + 40:at + 48], "little")
    payload = memoryview(blob)[_HEADER:]
    if len(payload) != length or json_len > length:
        raise Rejected(f"truncated or extended: {len(payload)} payload bytes, "
                       f"{length} recorded")
    if hashlib.sha256(payload).digest() != blob[at + 48:at + 80]:
        raise Rejected("damaged: the payload's SHA-256 does not match")
    try:
        with gc_paused():
            doc = orjson.loads(payload[:json_len])
            index = _array_index(doc, key, length - json_len)
            value = unpack(doc["value"]) if doc["deep"] else doc["value"]
        arrays = {}
        base = _HEADER + json_len
        for name, dtype, shape, offset, nbytes in index:
            arrays[name] = np.frombuffer(blob, np.dtype(dtype), nbytes // np.dtype(
                dtype).itemsize, base + offset).reshape(shape)
        return value, arrays
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, IndexError,
            AttributeError) as err:
        if isinstance(err, Rejected):
            raise
        raise Rejected(f"unreadable payload ({type(err).__name__})") from None


_DOC_FIELDS = frozenset({"key", "value", "deep", "arrays"})
_MAX_DIMS = 32  # numpy's own limit is 64; no entry we write has more than 2


def _whole(value: Any) -> bool:
    return type(value) is int and value >= 0


def _array_index(doc: Any, key: str, data_len: int) -> list[tuple[str, str, list[int], int,
                                                                  int]]:
    """The arrays an entry's JSON document lists, each field checked (issue 35 item 11):
    :class:`Rejected` naming the field for anything :func:`encode` would not write (an
    index that is a list or a string, a negative or overlong extent, a shape whose size is
    not the extent's), so a damaged entry with a valid checksum is a miss, never an
    exception or an array served from the wrong bytes."""
    if type(doc) is not dict or set(doc) != _DOC_FIELDS:
        raise Rejected("header: expected the fields key, value, deep and arrays")
    if doc["key"] != key:
        raise Rejected("an entry of another key")
    if type(doc["deep"]) is not bool:
        raise Rejected(f"header field deep: expected true or false, found {doc['deep']!r:.40}")
    if type(doc["arrays"]) is not dict:
        raise Rejected(f"header field arrays: expected an object, found "
                       f"{type(doc['arrays']).__name__}")
    out = []
    for name, entry in doc["arrays"].items():
        where = f"header field arrays[{name!r:.40}]"
        if type(entry) is not list or len(entry) != 4:
            raise Rejected(f"{where}: expected [dtype, shape, offset, bytes]")
        dtype, shape, offset, nbytes = entry
        if type(dtype) is not str or dtype not in DTYPES:
            raise Rejected(f"{where}: dtype {dtype!r:.40} is not stored")
        if (type(shape) is not list or len(shape) > _MAX_DIMS
                or not all(_whole(n) for n in shape)):
            raise Rejected(f"{where}: expected a shape of at most {_MAX_DIMS} sizes >= 0")
        if not (_whole(offset) and _whole(nbytes)) or offset % 8:
            raise Rejected(f"{where}: expected an offset (a multiple of 8) and a length "
                           f">= 0, found {offset!r:.40} and {nbytes!r:.40}")
        if math.prod(shape) * int(dtype[2:]) != nbytes:
            raise Rejected(f"{where}: shape {shape} of {dtype} is not {nbytes} bytes")
        if offset + nbytes > data_len:
            raise Rejected(f"{where}: bytes {offset}..{offset + nbytes} beyond the entry's "
                           f"{data_len}")
        out.append((name, dtype, shape, offset, nbytes))
    return out


# The layout of a packed value (:func:`pack`). A list of at least TABLE_MIN_ROWS dicts with
# the same keys in the same order (the spec's per_sample rows, the per-category rows) is
# stored as columns: its keys once, not once per row. The columns themselves stay plain
# JSON (the rows' seg/bbox blocks are parsed into dicts by orjson, in C): filling the rows
# in Python costs one assignment per top-level field, and loading matches unpickling
# (benchmarks/cache_load.py). Dicts and lists holding a table say which of their items to
# unpack, so unpacking visits nothing else.
_TABLE, _DICT, _LIST = "\x00table", "\x00dict", "\x00list"
_RESERVED = (_TABLE, _DICT, _LIST)
TABLE_MIN_ROWS = 8


def pack(value: Any) -> tuple[Any, bool]:
    """``(JSON data, whether it holds a table)``: ``value`` laid out for :func:`unpack`.
    ValueError for a dict with one of the layout's own keys."""
    kind = type(value)
    if kind is dict:
        if any(k in value for k in _RESERVED):
            raise ValueError("a dict with a reserved key of the cache's layout")
        out, deep = {}, []
        for k, item in value.items():
            out[k], inner = pack(item)
            if inner:
                deep.append(k)
        return ({_DICT: out, "deep": deep}, True) if deep else (out, False)
    if kind is list:
        if len(value) >= TABLE_MIN_ROWS and type(value[0]) is dict:
            keys = tuple(value[0])
            if (all(type(row) is dict and tuple(row) == keys for row in value)
                    and not any(k in keys for k in _RESERVED)):
                return {_TABLE: list(keys),
                        "columns": [[row[k] for row in value] for k in keys]}, True
        items, deep = [], []
        for i, item in enumerate(value):
            packed, inner = pack(item)
            items.append(packed)
            if inner:
                deep.append(i)
        return ({_LIST: items, "deep": deep}, True) if deep else (items, False)
    return value, False


def unpack(packed: dict[str, Any]) -> Any:
    """The value :func:`pack` laid out (``packed``: a part that holds a table)."""
    if _TABLE in packed:
        keys, columns = packed[_TABLE], packed["columns"]
        # One presized template copied per row, then filled column by column: ~1.5x
        # faster than dict(zip(keys, row)), which resizes each dict as it grows.
        template = dict.fromkeys(keys)
        rows = [template.copy() for _ in range(len(columns[0]) if columns else 0)]
        for k, column in zip(keys, columns, strict=True):
            for row, item in zip(rows, column, strict=True):  # ValueError: damaged
                row[k] = item
        return rows
    inner = packed[_DICT] if _DICT in packed else packed[_LIST]
    for k in packed["deep"]:
        inner[k] = unpack(inner[k])
    return inner


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def add_cache_arguments(parser: Any) -> None:
    """The ``--cache-dir`` and ``--no-cache`` options every command that evaluates shares
    (read back as ``args.cache_dir`` and ``args.no_cache``; see ``open_cache``)."""
    parser.add_argument("--cache-dir", default=None,
                        help="result cache folder (default: $OVEARTH_CACHE_DIR or the user's "
                             "cache folder; OVEARTH_CACHE=off disables it)")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the result cache")


def opened(folder: str | os.PathLike[str] | None = None) -> tuple[ResultCache | None, str]:
    """The cache to use (``None`` when ``OVEARTH_CACHE=off`` or the folder is refused) and
    one line saying which (:func:`describe`, or why it is off)."""
    if disabled():
        return None, describe(None)
    store = ResultCache(folder)
    reason = store.check()
    if reason is not None:
        return None, f"result cache off: {reason}"
    return store, describe(store)


def open_cache(folder: str | os.PathLike[str] | None = None) -> ResultCache | None:
    """The cache to use, or ``None`` when ``OVEARTH_CACHE=off`` or the folder is refused
    (:func:`folder_refusal`; a warning on stderr says why). ``folder`` (a CLI flag)
    overrides ``OVEARTH_CACHE_DIR``."""
    store, note = opened(folder)
    if store is None and not disabled():
        print(f"warning: {note}", file=sys.stderr)
    return store


def describe(cache: ResultCache | None) -> str:
    """One line for a command's stderr: where the cache is, or that it is off."""
    if cache is None:
        return "result cache off"
    if cache.refused is not None:
        return f"result cache off: {cache.refused}"
    return f"result cache {cache.folder}"


def hits_line(cache: ResultCache | None, sources: Sequence[bool]) -> str:
    """``"3 of 49 from the cache"``-style summary of which results came from the cache,
    and the entries found damaged (ignored, recomputed)."""
    if cache is None:
        return "cache off"
    n = sum(bool(s) for s in sources)
    return f"{n} of {len(sources)} from the cache" + (
        f"; {rejected_note(cache)}" if cache.rejected else "")


def rejected_note(cache: ResultCache) -> str:
    """``"1 damaged entry ignored and recomputed (<file>: <why>)"``, or ``""``."""
    if not cache.rejected:
        return ""
    k = len(cache.rejected)
    path, why = cache.rejected[0]
    return (f"{k} damaged entr{'y' if k == 1 else 'ies'} ignored and recomputed "
            f"({path.name}: {why}{', ...' if k > 1 else ''})")
