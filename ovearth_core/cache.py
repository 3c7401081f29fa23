"""A persistent on-disk cache of evaluation results (standard library only).

A restarted app server, a second leaderboard run or a report of the same files costs only
reading the files' bytes (to hash them) and loading the stored result. An entry is keyed by
the SHA-256 of:

- a *kind* (what was computed, e.g. ``"evaluate_samples"``),
- the SHA-256 of the ground-truth file's bytes and of the prediction file's bytes,
- the evaluation options (task, modalities as requested, IoU and score thresholds, box
  format), as canonical JSON,
- the package version, the Python version and the versions of the numeric libraries, and
- a digest of the evaluator's own source files (every ``ovearth_core/*.py``),

so that editing the evaluator, or upgrading numpy/shapely/pycocotools, can never serve a
number computed by other code. A cached value is always equal to a fresh evaluation of the
same inputs, or it is not found.

Location (platformdirs-style, ``ovearth-inspector`` under the user's cache folder):
``$OVEARTH_CACHE_DIR`` if set; else ``%LOCALAPPDATA%\\ovearth-inspector\\Cache`` on Windows,
``~/Library/Caches/ovearth-inspector`` on macOS, ``$XDG_CACHE_HOME/ovearth-inspector`` or
``~/.cache/ovearth-inspector`` elsewhere. ``OVEARTH_CACHE=off`` (or ``0``, ``no``,
``false``) disables it. Size cap: ``OVEARTH_CACHE_MAX_BYTES`` (bytes, or with a ``K``/``M``/
``G`` suffix; default 1 GiB); the least recently used entries are removed when it is over.

Entries are written to a temporary file in the same folder and renamed into place
(atomic; two processes writing the same key both leave a complete entry). Each entry
carries a magic header, its key, its length and the SHA-256 of its payload: a truncated,
corrupted or foreign file is ignored (and removed) and the value recomputed.

The payload is a pickle: the cache folder is the user's own (created ``0700``); anyone who
can write there can already run code as the user.

The spec's plain command ``python -m ovearth_core`` never uses the cache (its options and
output stay exactly the spec's); the leaderboard, the report and the app do.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .gcpause import gc_paused

ENV_DIR = "OVEARTH_CACHE_DIR"
ENV_SWITCH = "OVEARTH_CACHE"
ENV_MAX_BYTES = "OVEARTH_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 1 << 30
APP_NAME = "ovearth-inspector"
FORMAT = 1
MAGIC = b"OVEARTH-CACHE\x00"
SUFFIX = ".entry"
TMP_PREFIX = ".tmp-"
STALE_TMP_SECONDS = 3600
_HEADER = len(MAGIC) + 32 + 8 + 32  # magic, key, payload length, payload SHA-256
# Libraries whose versions can change a number (key part).
NUMERIC_LIBRARIES = ("numpy", "pycocotools", "shapely", "scipy", "orjson")


class _Miss:
    def __repr__(self) -> str:
        return "MISS"


MISS: Any = _Miss()


def disabled() -> bool:
    """``OVEARTH_CACHE`` is ``off`` / ``0`` / ``no`` / ``false``."""
    return os.environ.get(ENV_SWITCH, "").strip().lower() in ("off", "0", "no", "false")


def default_dir() -> Path:
    """The cache folder: ``$OVEARTH_CACHE_DIR`` or the platform's user cache folder."""
    override = os.environ.get(ENV_DIR)
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / APP_NAME / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / APP_NAME
    base = os.environ.get("XDG_CACHE_HOME") or ""
    # The XDG spec: a relative path is invalid and is to be ignored.
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / APP_NAME


def parse_size(text: str) -> int:
    """``"1073741824"``, ``"500M"``, ``"2G"``, ``"64k"`` -> bytes (ValueError otherwise)."""
    t = text.strip().upper().removesuffix("B")
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    number = t[:-1] if factor != 1 else t
    value = int(float(number) * factor)
    if value < 0:
        raise ValueError(f"negative size {text!r}")
    return value


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
    """SHA-256 of a regular file's bytes (hex); OSError for anything else (a pipe or a
    device is never read here: the loader reports it)."""
    h = hashlib.sha256()
    with open(path, "rb", opener=_regular_opener) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _regular_opener(path: str, flags: int) -> int:
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path}: not a regular file")
    return fd


def source_files() -> list[Path]:
    """The evaluator's source files (the flat ``ovearth_core/*.py``), sorted."""
    return sorted(Path(__file__).resolve().parent.glob("*.py"))


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 over the evaluator's source files (name and bytes of each): any edit of the
    evaluator changes every key."""
    h = hashlib.sha256()
    for path in source_files():
        h.update(path.name.encode() + b"\x00")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


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


def evaluation_key(gt_sha256: str, pred_sha256: str, task: str, modalities: object,
                   iou_threshold: float, score_threshold: float | None = None,
                   bbox_format: str = "xyxy", kind: str = "evaluate_samples") -> str:
    """The key of one evaluation of a ground truth and a submission (file SHA-256s) under
    the given options; ``modalities`` as requested (``"auto"`` stays ``"auto"``: the file
    digests decide what it resolves to)."""
    # "seg,bbox" (the command line) and ("seg", "bbox") (the app) are the same request.
    if isinstance(modalities, str):
        mods: object = (modalities.strip() if modalities.strip() == "auto"
                        else [m.strip() for m in modalities.split(",")])
    else:
        mods = [str(m) for m in modalities]  # type: ignore[attr-defined]
    return make_key(kind, {
        "gt_sha256": gt_sha256, "pred_sha256": pred_sha256, "task": task,
        "modalities": mods, "iou_threshold": float(iou_threshold),
        "score_threshold": None if score_threshold is None else float(score_threshold),
        "bbox_format": bbox_format})


class ResultCache:
    """A folder of entries ``<key>.entry``, at most ``max_bytes`` in total (LRU)."""

    def __init__(self, folder: str | os.PathLike[str] | None = None,
                 max_bytes: int | None = None) -> None:
        self.folder = Path(folder) if folder is not None else default_dir()
        self.max_bytes = max_bytes_from_env() if max_bytes is None else max_bytes
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"ResultCache({str(self.folder)!r}, max_bytes={self.max_bytes})"

    def path(self, key: str) -> Path:
        return self.folder / f"{key}{SUFFIX}"

    def get(self, key: str) -> Any:
        """The stored value, or :data:`MISS` (absent, unreadable, truncated, corrupted, or
        of another key: such a file is removed)."""
        path = self.path(key)
        try:
            with open(path, "rb") as handle:
                blob = handle.read()
        except OSError:
            self.misses += 1
            return MISS
        value = _decode(blob, key)
        if value is MISS:
            self.misses += 1
            _unlink(path)
            return MISS
        self.hits += 1
        try:  # the entry's modification time is its last use (LRU)
            os.utime(path)
        except OSError:
            pass
        return value

    def put(self, key: str, value: Any) -> bool:
        """Store ``value`` atomically; then evict to the cap. ``False`` when not stored
        (larger than the cap, or the folder is not writable)."""
        return self.put_payload(key, dumps(value))

    def put_payload(self, key: str, payload: bytes) -> bool:
        """:meth:`put` of a value already pickled with :func:`dumps` (a worker process
        pickles its result once: for the cache and for the trip back)."""
        blob = (MAGIC + bytes.fromhex(key) + len(payload).to_bytes(8, "little")
                + hashlib.sha256(payload).digest() + payload)
        if len(blob) > self.max_bytes:
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=TMP_PREFIX)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(blob)
                os.replace(tmp, self.path(key))
            except BaseException:
                _unlink(Path(tmp))
                raise
        except OSError:
            return False
        self.evict()
        return True

    def entries(self) -> list[tuple[float, int, Path]]:
        """``(last use, size, path)`` of every entry, oldest first."""
        out = []
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        for name in names:
            path = self.folder / name
            try:
                st = path.stat()
            except OSError:
                continue
            if name.endswith(SUFFIX):
                out.append((st.st_mtime, st.st_size, path))
            elif name.startswith(TMP_PREFIX) and time.time() - st.st_mtime > STALE_TMP_SECONDS:
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


def dumps(value: Any) -> bytes:
    """The payload of an entry (a pickle, made with the cyclic collector paused)."""
    with gc_paused():
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def loads(payload: bytes) -> Any:
    """The value of a payload (:func:`dumps`), loaded with the collector paused: a result
    is ~10^5 small containers and no cycles, and the collector would walk every object
    alive in the process again and again while loading."""
    with gc_paused():
        return pickle.loads(payload)


def _decode(blob: bytes, key: str) -> Any:
    if len(blob) < _HEADER or not blob.startswith(MAGIC):
        return MISS
    at = len(MAGIC)
    if blob[at:at + 32] != bytes.fromhex(key):
        return MISS
    length = int.from_bytes(blob[at + 32:at + 40], "little")
    digest = blob[at + 40:at + 72]
    payload = blob[_HEADER:]
    if len(payload) != length or hashlib.sha256(payload).digest() != digest:
        return MISS
    try:
        return loads(payload)
    except Exception:  # a payload from an incompatible build: recompute
        return MISS


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


def open_cache(folder: str | os.PathLike[str] | None = None) -> ResultCache | None:
    """The cache to use, or ``None`` when ``OVEARTH_CACHE=off``. ``folder`` (a CLI flag)
    overrides ``OVEARTH_CACHE_DIR``."""
    if disabled():
        return None
    return ResultCache(folder)


def evaluate_file(gt_path: str | os.PathLike[str], pred_path: str | os.PathLike[str],
                  task: str, modalities: object = ("segmentation", "bbox"),
                  iou_threshold: float = 0.5, score_threshold: float | None = None,
                  bbox_format: str = "xyxy", *, cache: ResultCache | None = None,
                  gt_sha256: str | None = None, ground_truth: Any = None,
                  ground_truth_loader: Callable[[], Any] | None = None,
                  ) -> tuple[dict[str, Any], bool]:
    """``evaluate_samples(load_samples(...))`` of one submission, through ``cache``.

    Returns ``(result, from_cache)``. ``gt_sha256`` saves hashing the ground truth again;
    ``ground_truth`` (parsed) or ``ground_truth_loader`` (called only on a miss) saves
    parsing it. Invalid input raises :class:`~ovearth_core.errors.OVEarthInputError` and
    is never stored.
    """
    key = None
    if cache is not None:
        try:
            key = evaluation_key(gt_sha256 or file_digest(gt_path), file_digest(pred_path),
                                 task, modalities, iou_threshold, score_threshold, bbox_format)
        except OSError:
            key = None  # unreadable: the loader below says why
        value = MISS if key is None else cache.get(key)
        if value is not MISS:
            return value, True
    from .evaluate import evaluate_samples
    from .gcpause import gc_paused
    from .io import load_samples

    with gc_paused():
        if ground_truth is None and ground_truth_loader is not None:
            ground_truth = ground_truth_loader()
        samples = load_samples(gt_path, pred_path, task, score_threshold, bbox_format,
                               modalities, ground_truth=ground_truth)
        result = evaluate_samples(samples, iou_threshold)
        del samples
    if cache is not None and key is not None:
        cache.put(key, result)
    return result, False


def describe(cache: ResultCache | None) -> str:
    """One line for a command's stderr: where the cache is, or that it is off."""
    if cache is None:
        return "result cache off"
    return f"result cache {cache.folder}"


def hits_line(cache: ResultCache | None, sources: Sequence[bool]) -> str:
    """``"3 of 49 cached"``-style summary of which results came from the cache."""
    n = sum(bool(s) for s in sources)
    return f"{n} of {len(sources)} from the cache" if cache is not None else "cache off"
