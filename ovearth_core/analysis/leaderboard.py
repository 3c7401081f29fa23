"""A folder of submissions ranked per task, and the paper's category-subset stability analysis.

Layout read by :func:`evaluate_folder`: ``<folder>/ground_truth.json`` and
``<folder>/predictions/<model>.json`` (one file per model, any subset of the three task
lists), every file checked by :func:`folder_files` before any is read (inside the folder or
the given roots, a regular file within the input cap). A model whose file has no row for a
task is left out of that task's ranking (the paper ranks 49 models on vocabulary but 32 on
referring).

The ranking and the stability maths live in :mod:`ovearth_core.analysis.standings`; the
worker processes' start (fork, forkserver or spawn; the main script not run again) in
:mod:`ovearth_core.workers`; this module evaluates and caches (issue 39: one job each).

Many submissions (the paper ranks 49): :func:`evaluate_submissions` evaluates them in
worker processes (one per core), loading what the on-disk result cache
(:mod:`ovearth_core.cache`) already holds and storing the rest, and reports progress as each
one finishes; the results equal one in-process evaluation after the other (tested).
What the ranking and the stability analysis use of each result, its *board entry*
(:func:`board_entry`: summary, coverage, and the per-category sums of every ranked metric),
is cached beside the result and is what a worker sends back: a warm run loads a few KB per
submission, parses no ground truth and sums no per-query rows, and its report is the same
to the bit.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import multiprocessing
import multiprocessing.context
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .. import pipeline
from .. import workers as worker_pool
from ..cache import (
    MISS,
    Rejected,
    ResultCache,
    decode,
    encode,
    file_digest,
    files_digest,
    make_key,
    read_hashed,
)
from ..cache import key as cache_key
from ..errors import OVEarthInputError, Problem
from ..evaluate import evaluate_samples
from ..gcpause import gc_paused
from ..io import load_samples, parse_ground_truth, parse_json, read_json
from ..options import Options
from ..paths import OutsideDataRootError, folder_inputs, refusal
from ..types import TASK_KEYS
from . import additive, standings
from .ap import average_precision_report
from .ap_bootstrap import APRun, ap_run
from .standings import (
    BOARD_KEYS,
    METRICS,
    PIECES,
    SUMS,
    FloatArray,
    QueryPieces,
    leaderboard_report,
    query_pieces,
)
from .sweep import BOX_MODALITIES


def board_entry(result: dict[str, Any]) -> dict[str, Any]:
    """What :func:`leaderboard_report` uses of an evaluator result: its :data:`BOARD_KEYS`,
    under :data:`PIECES` its per-query :func:`query_pieces` (the rank resampling's) and
    under :data:`SUMS` their per-category sums (a board entry is its own)."""
    if SUMS in result:
        return result
    pieces = query_pieces(result)
    return {**{k: result[k] for k in BOARD_KEYS if k in result}, PIECES: pieces,
            SUMS: pieces.sums()}


@functools.lru_cache(maxsize=1)
def _board_code() -> str:
    """Digest of the analysis code that derives a board entry from a result (a key part:
    the evaluator's own code is in every key already)."""
    return files_digest([Path(additive.__file__), Path(standings.__file__), Path(__file__)])


def board_key(gt_sha256: str, pred_sha256: str, options: Options) -> str:
    """The result cache key of a :func:`board_entry` (of the evaluator result under the
    same digests and ``options``, and of the analysis code that derived it)."""
    return cache_key("leaderboard_entry", gt_sha256, pred_sha256, options,
                     analysis_code=_board_code())


def pack_board(entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, FloatArray]]:
    """A board entry as a cache entry's ``(value, arrays)`` (:func:`~ovearth_core.cache.encode`):
    its per-query pieces (the per-category sums are derived from them again)."""
    pieces: QueryPieces = entry[PIECES]
    value = {**{k: entry[k] for k in BOARD_KEYS if k in entry},
             "categories": list(pieces.categories), "query_ids": list(pieces.query_ids),
             "images": list(pieces.images)}
    return value, {"category": pieces.category.astype(np.int64),
                   "image": pieces.image.astype(np.int64),
                   **{f"pieces.{name}": array for name, array in pieces.pieces.items()}}


def unpack_board(value: dict[str, Any], arrays: dict[str, FloatArray]) -> dict[str, Any]:
    """:func:`pack_board`'s inverse; :class:`~ovearth_core.cache.Rejected` when the entry
    lacks the task, summary or coverage, its categories, queries or images, or does not
    hold every metric's pieces in the shape of its queries."""
    lists = [value.pop(k, None) for k in ("categories", "query_ids", "images")]
    if not all(type(v) is list and set(map(type, v)) <= {str} for v in lists):
        raise Rejected("a leaderboard entry without its categories, queries or images")
    categories, ids, images = lists
    if not (isinstance(value.get("task"), str) and isinstance(value.get("summary"), dict)
            and isinstance(value.get("coverage"), dict)):
        raise Rejected("a leaderboard entry without its task, summary or coverage")
    index = {}
    for name, bound in (("category", len(categories)), ("image", len(images))):
        array = arrays.get(name)
        if (array is None or array.dtype != np.int64 or array.shape != (len(ids),)
                or (array.size and not 0 <= array.min() <= array.max() < bound)):
            raise Rejected(f"a leaderboard entry whose query {name}s are missing or wrong")
        index[name] = array.astype(np.intp)
    pieces = {}
    for name, spec in METRICS.items():
        array = arrays.get(f"pieces.{name}")
        if (array is None or array.dtype != np.float64
                or array.shape != (len(ids), spec.size)):
            raise Rejected(f"a leaderboard entry whose {name} pieces are missing or of "
                           f"another shape")
        pieces[name] = array
    found = QueryPieces(tuple(ids), tuple(categories), index["category"], tuple(images),
                        index["image"], pieces)
    return {**value, PIECES: found, SUMS: found.sums()}


# Libraries whose numbers the ranks with their uncertainty hold (beside the key's numeric
# libraries): their versions are in a cached rank report's key, read without importing them.
RANK_LIBRARIES = ("statsmodels", "scikit-posthocs", "pandas")


@functools.lru_cache(maxsize=1)
def _rank_code() -> dict[str, str]:
    """Digest of the analysis code (every ``analysis/*.py``: the rank statistics and all
    they call) and the versions of :data:`RANK_LIBRARIES` (key parts of a rank report)."""
    from importlib import metadata

    versions = {}
    for name in RANK_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return {"analysis_code": files_digest(sorted(Path(__file__).parent.glob("*.py"))),
            **versions}


def _piece_digest(h: Any, array: np.ndarray) -> None:
    h.update(f"{array.dtype.str}{array.shape}".encode())
    h.update(np.ascontiguousarray(array).tobytes())


def rank_key(names: Sequence[str], results: Sequence[dict[str, Any]],
             pieces: Sequence[QueryPieces], options: Options, seed: int, unit: str) -> str:
    """The result cache key of :func:`~.standings.rank_uncertainties` of these arguments:
    the SHA-256 of every input it reads (per ranked metric, the names of the models it
    ranks and their query ids, categories, images and per-query pieces of the metric),
    every field of ``options``, ``seed``, ``unit``, the analysis code and the statistics'
    library versions (:func:`_rank_code`)."""
    h = hashlib.sha256()
    each = []
    for p in pieces:  # the queries of each model, once
        g = hashlib.sha256(orjson.dumps([p.query_ids, p.categories, p.images]))
        _piece_digest(g, p.category)
        _piece_digest(g, p.image)
        each.append(g.digest())
    for metric, kept in standings.ranked_models(results).items():
        h.update(orjson.dumps([metric, [names[i] for i in kept]]))
        for i in kept:
            h.update(each[i])
            _piece_digest(h, pieces[i].pieces[metric])
    return make_key("rank_uncertainty", {"inputs": h.hexdigest(), **options.key_parts(),
                                         "seed": seed, "unit": unit, **_rank_code()})


def cached_uncertainty(store: ResultCache | None) -> standings.Uncertainty:
    """:func:`~.standings.rank_uncertainties` through the result cache (issue 49): an
    unchanged board's ranks, tests and Friedman's test are read back, to the bit, and the
    statistics' libraries (statsmodels, scikit-posthocs, scipy.stats: 1.4 s of imports) are
    not loaded; a changed input, option, code or library version computes them again."""

    def uncertainty(names: Sequence[str], results: Sequence[dict[str, Any]],
                    pieces: Sequence[QueryPieces], options: Options, seed: int,
                    unit: str) -> dict[str, Any]:
        if store is None:
            return standings.rank_uncertainties(names, results, pieces, options, seed, unit)
        entry = rank_key(names, results, pieces, options, seed, unit)
        found = store.get(entry)
        expected = list(standings.ranked_models(results))
        if type(found) is dict and list(found) == expected:
            return found
        if found is not MISS:
            store.reject(entry, "not the rank statistics of this board")
        out = standings.rank_uncertainties(names, results, pieces, options, seed, unit)
        store.put(entry, out)  # stored only when it reads back equal, to the bit
        return out

    return uncertainty


# What the rank statistics import on first use (1.4 s in the profile): loaded while
# the workers evaluate a cold leaderboard, never by a warm one (issue 49).
RANK_IMPORTS = ("statsmodels.stats.multitest", "scikit_posthocs", "scipy.stats")


class _RankImports:
    """The progress callback of a leaderboard with ranks: the first submission evaluated
    (not from the cache) starts a thread importing :data:`RANK_IMPORTS`, so that a cold
    run's imports overlap its evaluations (they run on the core the caller leaves idle
    while its workers evaluate, and in the pool's tail); :meth:`join` before anything
    else forks (the next task's pool) and before the ranks are computed."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.thread: threading.Thread | None = None

    def __call__(self, done: int, total: int, outcome: Outcome) -> None:
        if self.thread is None and not outcome.cached:
            self.thread = threading.Thread(target=_import_all, args=(RANK_IMPORTS,),
                                           name="ovearth-rank-imports", daemon=True)
            self.thread.start()
        if self.progress is not None:
            self.progress(done, total, outcome)

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


def _import_all(names: Sequence[str]) -> None:
    for name in names:
        importlib.import_module(name)


def folder_files(folder: str | Path, pred_dir: str | Path | None = None,
                 roots: Sequence[Path] | None = None) -> tuple[Path, list[Path]]:
    """``(ground truth, sorted prediction files)`` of a benchmark folder, every one checked
    like a typed path of the app (:func:`~ovearth_core.paths.check_input`): inside
    ``roots`` (default: the folder itself, so a symbolic link may not leave it), a regular
    file, within the input size cap. Raises :class:`OVEarthInputError` naming every file
    refused; none is read."""
    folder = Path(folder)
    roots = tuple(roots) if roots else (folder.resolve(),)
    gt_path = folder / "ground_truth.json"
    problems = [Problem(str(gt_path), "(file)", *why)
                for why in (refusal(gt_path, roots),) if why is not None]
    try:
        preds, refused = folder_inputs(pred_dir or folder / "predictions", "*.json", roots)
    except OutsideDataRootError as err:
        raise OVEarthInputError([*problems, Problem(err.path, "(folder)", "a folder inside "
                                 f"{', '.join(map(str, roots))}", f"a path that resolves "
                                 f"to {err.resolved}")]) from None
    problems += [Problem(str(r.path), "(file)", r.expected, r.found) for r in refused]
    if problems:
        raise OVEarthInputError(problems)
    return gt_path, preds


@dataclass
class Outcome:
    """One submission's evaluation: its result (a :func:`board_entry` when the leaderboard
    asked for one; ``None`` with the problems that stopped it) and whether the result came
    from the on-disk cache."""

    name: str
    path: Path
    result: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)
    cached: bool = False
    num_problems: int = 0  # found in all (``problems`` may hold only the first of them)
    in_worker: bool = False  # evaluated in a worker process
    sha256: str = ""  # of the prediction bytes the result is of ("" when none was read)

    @property
    def has_rows(self) -> bool:
        """Whether the submission has any prediction row for the task."""
        return self.result is not None and self.result["coverage"]["num_with_prediction_row"] > 0


Progress = Callable[[int, int, Outcome], None]
# Prediction bytes left to evaluate below which ``workers=None`` evaluates in this process.
PARALLEL_MIN_BYTES = 16 << 20


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
# Per process: (path, sha256) -> the ground truth parsed from bytes of that digest. Kept in
# a worker for its life; in the calling process only while it forks workers (they inherit
# it), then dropped.
_WORKER_GT: dict[tuple[str, str], Any] = {}


def _worker_gt(gt_path: str, gt_sha: str) -> Any:
    """The ground truth of digest ``gt_sha``, parsed once per process from one read of
    ``gt_path``; a file that no longer has that digest (rewritten during the run) is a
    problem: every result of a run is of one ground truth, the one its keys name."""
    if (gt_path, gt_sha) not in _WORKER_GT:
        data, sha = read_hashed(gt_path, "ground-truth")
        if sha != gt_sha:
            raise OVEarthInputError([Problem(
                gt_path, "(file)", f"the ground truth read at the start of the run "
                f"(SHA-256 {gt_sha[:12]}...)", f"other bytes (SHA-256 {sha[:12]}...): the "
                "file changed during the run; run it again")])
        _WORKER_GT.clear()
        _WORKER_GT[(gt_path, gt_sha)] = parse_ground_truth(parse_json(data, gt_path), gt_path)
    return _WORKER_GT[(gt_path, gt_sha)]


@dataclass(frozen=True)
class _Encoded:
    """A worker's result as the bytes of its cache entry (sent back instead of the value:
    pickling bytes costs nothing), a board entry when ``board``."""

    key: str
    blob: bytes
    board: bool


@dataclass(frozen=True)
class Job:
    """One submission to evaluate (picklable: sent to a worker process). ``index``: its
    place among the run's submissions; ``gt_sha``: the digest the ground truth must have;
    ``cache_spec``: ``(folder, max_bytes)`` of the result cache (``None``: none);
    ``board``: the leaderboard's entry is wanted, not the full result; ``lookup``: the
    caller has not looked the submission up in the cache (the job does, under the digest
    of the bytes it reads, before parsing them)."""

    index: int
    gt_path: str
    gt_sha: str
    pred_path: str
    options: Options
    cache_spec: tuple[str, int] | None
    board: bool
    lookup: bool = False


@dataclass(frozen=True)
class JobResult:
    """What a :class:`Job` gives back: ``value`` (the result, a board entry, an
    :class:`_Encoded` entry from a worker, or ``None`` with ``problems``: the first of
    ``num_problems``), whether it came from the cache, the SHA-256 of the prediction
    bytes evaluated (``""`` when none was read), and the cache entries the job found
    damaged (``ResultCache.rejected``: reported by the caller's cache)."""

    index: int
    value: Any
    problems: tuple[Problem, ...] = ()
    cached: bool = False
    num_problems: int = 0
    sha256: str = ""
    rejected: tuple[tuple[Path, str], ...] = ()


def _evaluate_job(job: Job) -> JobResult:
    """One submission in a worker process: with a cache, its result (or board entry)
    encoded once (:func:`~ovearth_core.cache.encode`), stored in the cache and sent back as
    those bytes; without, the value itself."""
    return _run_job(job, encoded=True)


def _run_job(job: Job, encoded: bool) -> JobResult:
    """One submission: the result, or with ``job.board`` its
    :func:`board_entry` (or, ``encoded``, an :class:`_Encoded`), or the problems that
    stopped it, and the SHA-256 of the bytes evaluated. The prediction file is read once:
    the cache keys are of the bytes parsed, never of an earlier read (with
    ``job.lookup``, what the cache holds for those bytes is returned unparsed). With a
    cache, the result is stored too (the report and the app use it), and the board entry
    beside it."""
    store = None if job.cache_spec is None else ResultCache(*job.cache_spec)
    # Collection paused for the whole job, as in the sequential loop: everything it makes
    # is freed by reference counting, and a collection once the evaluation's pause ended
    # walked its ~10^5 rows again (5-7 ms a job).
    with gc_paused():
        out = _job(job, store, encoded)
    return out if store is None or not store.rejected else replace(
        out, rejected=tuple(store.rejected))


def _job(job: Job, store: ResultCache | None, encoded: bool) -> JobResult:
    index, gt_sha, options, board = job.index, job.gt_sha, job.options, job.board
    try:
        ground_truth = _worker_gt(job.gt_path, gt_sha)
        data, pred_sha = read_hashed(job.pred_path, "prediction")
        if store is not None and job.lookup:
            found = _cached(store, gt_sha, pred_sha, options, board)
            if found is not MISS:
                return JobResult(index, found, cached=True, sha256=pred_sha)
        doc = parse_json(data, job.pred_path)
        del data
        loaded = pipeline.load(job.gt_path, job.pred_path, options, ground_truth=ground_truth,
                               gt_sha256=gt_sha, predictions_doc=doc, pred_sha256=pred_sha)
        del doc
        run, _, blob = pipeline.evaluate_stored(loaded, store)
    except OVEarthInputError as err:
        return JobResult(index, None, tuple(err.problems), num_problems=err.total)
    result = run.results
    del loaded, run
    if not board:
        if encoded and blob is not None:
            key = pipeline.entry_key(gt_sha, pred_sha, options)
            return JobResult(index, _Encoded(key, blob, False), sha256=pred_sha)
        return JobResult(index, result, sha256=pred_sha)
    value = board_entry(result)
    if store is not None:
        stored = _store(store, board_key(gt_sha, pred_sha, options), *pack_board(value),
                        board=True)
        if encoded and stored is not None:
            return JobResult(index, stored, sha256=pred_sha)
    return JobResult(index, value, sha256=pred_sha)


def _store(store: ResultCache, key: str, value: Any, arrays: dict[str, Any],
           board: bool = False) -> _Encoded | None:
    """``value`` stored under ``key``; its entry's bytes (``None``: it cannot be stored
    and ``put`` said why)."""
    try:
        blob = encode(key, value, arrays)
    except ValueError:
        store.put(key, value, arrays)  # says why it is not stored
        return None
    store.put_blob(key, blob)
    return _Encoded(key, blob, board)


def _cached(store: ResultCache, gt_sha: str, pred_sha: str, options: Options,
            board: bool) -> Any:
    """The cached result (``board``: board entry) of these digests, or :data:`MISS`. A
    board entry not stored yet is derived from a stored result, and stored; one that
    decodes to anything but a board entry is reported and removed (a miss)."""
    if board:
        entry = board_key(gt_sha, pred_sha, options)
        found = store.get_arrays(entry)
        if found is not MISS:
            try:
                return unpack_board(*found)
            except Rejected as why:
                store.reject(entry, str(why))
    full = pipeline.lookup(store, gt_sha, pred_sha, options)
    if full is MISS or not board:
        return full if full is MISS else full[0]
    value = board_entry(full[0])
    store.put(entry, *pack_board(value))
    return value


# Imported by a forkserver before it forks any worker, so that workers start warm (the
# evaluator imports pycocotools and shapely on first use: named here).
_PRELOAD = ["ovearth_core.analysis.leaderboard", "ovearth_core.evaluate", "ovearth_core.io",
            "pycocotools.mask", "shapely"]
# Imported before forking workers: the preload, and the matching's assignment solver, which
# a batch large enough for a pool needs (imported in each worker, it cost every one 0.4-0.6 s
# of CPU; a forkserver imports no scipy up front, issue 17).
_BEFORE_FORK = [*_PRELOAD, "scipy.optimize"]


def _pool_context() -> multiprocessing.context.BaseContext:
    """The start method of this run's workers (:func:`ovearth_core.workers.pool_context`),
    a forkserver preloading :data:`_PRELOAD`."""
    return worker_pool.pool_context(_PRELOAD)


def evaluate_submissions(gt_path: str | Path, preds: Sequence[str | Path], task: str,
                         modalities: object = ("segmentation", "bbox"),
                         iou_threshold: float = 0.5, score_threshold: float | None = None,
                         bbox_format: str = "xyxy", *, cache: ResultCache | None = None,
                         workers: int | None = None, progress: Progress | None = None,
                         gt_sha256: str | None = None, board: bool = False,
                         ground_truth: Any = None,
                         digests: dict[Path, str] | None = None,
                         large_masks: bool = False, concave_obb: bool = False
                         ) -> list[Outcome]:
    """Evaluate every submission on one task, in parallel processes (``workers``; default
    ``None``: one per core, or this process when the files left to evaluate hold less than
    :data:`PARALLEL_MIN_BYTES`), through the on-disk ``cache`` (``None``: none).

    Cached results are loaded first, in this process, up to the first submission the cache
    does not hold; the rest go to a ``ProcessPoolExecutor`` (in-process when one worker or
    one submission is left), each job looking its own submission up first.
    ``progress(done, total, outcome)`` is called in this thread as each one finishes.
    Returns the outcomes in the order of ``preds``; invalid files come back with their
    problems, never raised. ``board``: each outcome's result is the :func:`board_entry`
    the leaderboard uses (cached as such beside the result: a warm run loads neither
    the per-query rows nor sums them again). ``ground_truth``: parsed from the very bytes
    of ``gt_sha256`` (the caller vouches), used instead of parsing them again.
    ``digests``: the SHA-256 of submissions hashed earlier in the same run, used for their
    cache lookups (the numbers found are of the bytes hashed then), and given the digest
    of every file read now; a job that evaluates reads and hashes the file it parses, as
    always.
    """
    return evaluate_with(gt_path, preds, Options(task, modalities, iou_threshold,
                                                 score_threshold, bbox_format,
                                                 large_masks=large_masks,
                                                 concave_obb=concave_obb),
                         cache=cache, workers=workers, progress=progress, gt_sha256=gt_sha256,
                         board=board, ground_truth=ground_truth, digests=digests)


def evaluate_with(gt_path: str | Path, preds: Sequence[str | Path], options: Options, *,
                  cache: ResultCache | None = None, workers: int | None = None,
                  progress: Progress | None = None,
                  gt_sha256: str | None = None, board: bool = False,
                  ground_truth: Any = None,
                  digests: dict[Path, str] | None = None) -> list[Outcome]:
    """:func:`evaluate_submissions` under one :class:`~ovearth_core.options.Options`
    value (its evaluator's options: the AP's do not change a result or its cache entry)."""
    # Paused throughout: loading cached results and unpickling the workers' results make
    # ~10^5 containers each, and every collection would walk all of them again.
    try:
        if ground_truth is not None and gt_sha256:
            _WORKER_GT.clear()
            _WORKER_GT[(str(gt_path), gt_sha256)] = ground_truth
        with gc_paused():
            return _evaluate_submissions(gt_path, preds, options.evaluator(), cache, workers,
                                         progress, gt_sha256, board,
                                         {} if digests is None else digests)
    finally:
        _WORKER_GT.clear()


def _evaluate_submissions(gt_path: str | Path, preds: Sequence[str | Path], options: Options,
                          cache: ResultCache | None, workers: int | None,
                          progress: Progress | None, gt_sha256: str | None,
                          board: bool, digests: dict[Path, str]) -> list[Outcome]:
    gt_path = Path(gt_path)
    paths = [Path(p) for p in preds]
    total = len(paths)
    outcomes: list[Outcome | None] = [None] * total
    done = 0

    def finish(done_job: JobResult) -> Outcome:
        nonlocal done
        index, result = done_job.index, done_job.value
        if isinstance(result, _Encoded):  # a worker's entry
            try:
                value, arrays = decode(result.blob, result.key)
                # a board entry, or an evaluation entry (:mod:`ovearth_core.pipeline`)
                result = unpack_board(value, arrays) if result.board else value["results"]
            except Rejected as why:  # cannot happen short of a bug: say so, never guess
                raise RuntimeError(f"a worker's result for {paths[index]}: {why}") from None
        outcome = Outcome(paths[index].stem, paths[index], result, list(done_job.problems),
                          done_job.cached, done_job.num_problems, sha256=done_job.sha256)
        if done_job.sha256:
            digests.setdefault(paths[index], done_job.sha256)
        if cache is not None:
            cache.rejected += done_job.rejected
        outcomes[index] = outcome
        done += 1
        if progress is not None:
            progress(done, total, outcome)
        return outcome

    # Every job checks that the ground truth it parses has this digest (one ground truth
    # per run, the one the keys name).
    gt_sha = gt_sha256 or ""
    if not gt_sha:
        try:
            gt_sha = file_digest(gt_path)
        except OSError:
            cache = None  # unreadable: every job reports it
    spec = None if cache is None else (str(cache.folder), cache.max_bytes)
    pending = []
    # Files are hashed here for their lookups until one is not in the cache (a warm run is
    # looked up without a worker); each later one is looked up by its job, under the digest
    # of the bytes it reads anyway (a cold run hashes each file once, in parallel).
    hashing = True
    for i, path in enumerate(paths):
        pred_sha = digests.get(path, "")
        if cache is not None and hashing and not pred_sha:
            try:
                pred_sha = file_digest(path)
            except OSError:
                pass  # the job reports why it cannot be read
        if cache is not None and pred_sha:
            value = _cached(cache, gt_sha, pred_sha, options, board)
            if value is not MISS:  # the numbers of the bytes hashed
                finish(JobResult(i, value, cached=True, sha256=pred_sha))
                continue
            hashing = False
        pending.append(Job(i, str(gt_path), gt_sha, str(path), options, spec, board,
                           lookup=cache is not None and not pred_sha))
    if workers is None:
        # Starting workers costs about a second (imports, and parsing the ground truth in
        # each when they are not forked): small batches are faster here.
        size = sum(_size(job.pred_path) for job in pending)
        workers = worker_pool.worker_count() if size >= PARALLEL_MIN_BYTES else 1
    n_workers = min(workers, len(pending))
    if n_workers <= 1:
        for job in pending:
            finish(_run_job(job, encoded=False))
    else:
        _run_pool(pending, n_workers, str(gt_path), gt_sha, finish)
    if cache is not None:
        cache.evict()
    return [o for o in outcomes if o is not None]


def _run_pool(pending: list[Job], n_workers: int, gt_path: str, gt_sha: str,
              finish: Callable[..., Outcome]) -> None:
    """The ``pending`` jobs in ``n_workers`` processes, each result to ``finish`` as it
    comes (marked ``in_worker``); the jobs a dead worker left run in this process."""
    context = _pool_context()
    if context.get_start_method() == "fork":
        # Parsed and imported once here; every forked worker inherits them.
        for name in _BEFORE_FORK:
            importlib.import_module(name)
        try:
            _worker_gt(gt_path, gt_sha)
        except OVEarthInputError:
            pass  # each job reports the problem
    left = {job.index: job for job in pending}
    # Largest files first: a large one left for last would keep one worker busy while
    # the others idle (longest-processing-time order); outcomes keep ``preds``' order.
    by_size = sorted(pending, key=lambda job: -_size(job.pred_path))
    try:
        with ProcessPoolExecutor(max_workers=n_workers, mp_context=context) as pool:
            with worker_pool.skip_main(context):  # workers start at the first submits
                futures = [pool.submit(_evaluate_job, job) for job in by_size]
            for future in as_completed(futures):
                done = future.result()
                finish(done).in_worker = True
                del left[done.index]
    except BrokenProcessPool:
        # A worker died (killed for memory, say): the rest run here, where a failure
        # is the evaluator's own error or message, not a lost process.
        for job in sorted(left.values(), key=lambda job: job.index):
            finish(_run_job(job, encoded=False))


def evaluate_folder(folder: str | Path, task: str, modalities: object = ("segmentation", "bbox"),
                    iou_threshold: float = 0.5, pred_dir: str | Path | None = None,
                    roots: Sequence[Path] | None = None, *, cache: ResultCache | None = None,
                    workers: int | None = 1, progress: Progress | None = None,
                    board: bool = False, gt_sha256: str | None = None,
                    ground_truth: Any = None, digests: dict[Path, str] | None = None,
                    large_masks: bool = False, concave_obb: bool = False,
                    ) -> tuple[list[str], list[dict[str, Any]]]:
    """Evaluate every ``predictions/*.json`` of ``folder`` on one task (files checked by
    :func:`folder_files`). Returns ``(model names, evaluator results)``, sorted by name,
    leaving out models without any row for the task.

    ``workers=1`` (default) evaluates in this process, one file after the other (ground
    truth parsed once); more (``None``: one per core for large batches) uses
    :func:`evaluate_submissions` (``board``: results as board entries; ``gt_sha256`` and
    ``ground_truth``, parsed from the bytes of that digest; ``digests``: see there).
    The first invalid file (by name) raises its :class:`OVEarthInputError`.
    """
    gt_path, preds = folder_files(folder, pred_dir, roots)
    if workers == 1 and cache is None:
        names, results = [], []
        with gc_paused():
            gt = ground_truth if ground_truth is not None else parse_ground_truth(
                read_json(gt_path, "ground-truth"), str(gt_path))
            for path in preds:
                samples = load_samples(gt_path, path, task, modalities=modalities,
                                       ground_truth=gt, large_masks=large_masks,
                                       concave_obb=concave_obb)
                if not any(s.has_prediction_row for s in samples):
                    continue
                names.append(path.stem)
                results.append(evaluate_samples(samples, iou_threshold))
        return names, results
    outcomes = evaluate_submissions(gt_path, preds, task, modalities, iou_threshold,
                                    cache=cache, workers=workers, progress=progress,
                                    board=board, gt_sha256=gt_sha256,
                                    ground_truth=ground_truth, digests=digests,
                                    large_masks=large_masks, concave_obb=concave_obb)
    for outcome in outcomes:
        if outcome.problems:
            raise OVEarthInputError(outcome.problems, outcome.num_problems)
    kept = [o for o in outcomes if o.has_rows]
    return [o.name for o in kept], [o.result for o in kept]  # type: ignore[misc]


def folder_leaderboard(folder: str | Path, tasks: Sequence[str] = ("vocabulary", "referring",
                                                                    "reasoning"),
                       modalities: object = ("segmentation", "bbox"),
                       iou_threshold: float = 0.5, *, cache: ResultCache | None = None,
                       workers: int | None = 1,
                       progress: Callable[[str], Progress | None] | None = None,
                       average_precision: Options | None = None,
                       note: Callable[[str], None] | None = None,
                       large_masks: bool = False, concave_obb: bool = False,
                       **stability: Any) -> dict[str, Any]:
    """:func:`leaderboard_report` of every task for a submissions folder (see module doc),
    keyed by the task as the JSON names it (``open_vocabulary``, ``referring``, ``reasoning``);
    ``stability`` is passed on (``sizes``, ``n_subsets``, ``seed``, ``k``,
    ``stability_metrics``); ``cache``, ``workers`` go to :func:`evaluate_folder`, with
    ``progress(task)`` as its progress callback. ``average_precision``: the options whose AP
    fields (``hard_negatives``, ``max_detections``, ``nms_ap``, ``aitod``) rank by AP and
    mAP as well, computed here for each model (every box), with their curves
    (:func:`~.ap_bootstrap.ap_run`) when ranks are asked (their rank intervals). A task
    without queries in the ground truth is not evaluated: its report is empty and ``note``
    is told."""
    out: dict[str, Any] = {}
    gt_path, preds = folder_files(folder)
    gt_sha, counts, gt = _ground_truth(gt_path, cache)
    # Each submission hashed once for the lookups of every task (one snapshot per run): the
    # first task's reads give the digests the others look up.
    digests: dict[Path, str] = {}
    for task in tasks:
        key = TASK_KEYS.get(task, task)  # the report's key: the task as the JSON names it
        if not counts.get(task):
            why = "the ground truth has no queries for this task"
            out[key] = {**leaderboard_report([], []), "skipped": why}
            if note is not None:
                note(f"{task}: skipped, {why}")
            continue
        told = progress(task) if progress else None
        imports = _RankImports(told) if stability.get("ranks") is not None else None
        try:
            names, results = evaluate_folder(folder, task, modalities, iou_threshold,
                                             cache=cache, workers=workers, board=True,
                                             gt_sha256=gt_sha, ground_truth=gt,
                                             digests=digests, progress=imports or told,
                                             large_masks=large_masks,
                                             concave_obb=concave_obb)
        finally:
            if imports is not None:
                imports.join()
        reports = None
        if average_precision is not None:
            gt_path, preds = folder_files(folder)
            by_name = {p.stem: p for p in preds}
            reports = []
            with gc_paused():
                if gt is None:
                    gt = parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path))
                for name in names:
                    samples = load_samples(gt_path, by_name[name], task, modalities=modalities,
                                           ground_truth=gt, large_masks=large_masks,
                                           concave_obb=concave_obb)
                    reports.append(_ap(samples, iou_threshold, average_precision,
                                       stability.get("ranks") is not None))
        out[key] = leaderboard_report(names, results, average_precision=reports,
                                      uncertainty=cached_uncertainty(cache), **stability)
    return out


def _ap(samples: Any, iou_threshold: float, options: Options, curves: bool,
        ) -> APRun | dict[str, Any] | None:
    """A submission's AP under ``options``' AP fields: the report, with its curves when
    ``curves`` (the rank intervals resample them); ``None`` without a box modality."""
    if not any(m in BOX_MODALITIES for m in samples.modalities):
        return None
    report = average_precision_report(samples, iou_threshold, samples.modalities,
                                      options.hard_negatives, options.max_detections,
                                      options.nms_ap, options.aitod)
    if not curves:
        return report
    return ap_run(samples, iou_threshold, samples.modalities, options.hard_negatives,
                  options.max_detections, report, options.nms_ap, options.aitod)


def _ground_truth(gt_path: Path, cache: ResultCache | None) -> tuple[str, dict[str, int], Any]:
    """One read of a folder's ground truth: ``(its SHA-256, the number of queries of each
    task, the ground truth parsed from those bytes)``. With a cache, the counts of a ground
    truth seen before are stored data, and nothing is parsed (``None``): a warm leaderboard
    needs no more of it."""
    data, sha = read_hashed(gt_path, "ground-truth")
    entry = make_key("query_counts", {"gt_sha256": sha})
    if cache is not None:
        counts = cache.get(entry)
        if (type(counts) is dict and list(counts) == list(TASK_KEYS)
                and all(type(n) is int and n >= 0 for n in counts.values())):
            return sha, counts, None
        if counts is not MISS:
            cache.reject(entry, "not the query counts of a ground truth")
    with gc_paused():
        gt = parse_ground_truth(parse_json(data, str(gt_path)), str(gt_path))
    del data
    counts = {cli: len(gt.tasks.get(key, ())) for cli, key in TASK_KEYS.items()}
    if cache is not None:
        cache.put(entry, counts)
    return sha, counts, gt


def query_counts(folder: str | Path) -> dict[str, int]:
    """The number of queries of each task (CLI name) in the folder's ground truth."""
    gt_path, _ = folder_files(folder)
    with gc_paused():
        gt = parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path))
    return {cli: len(gt.tasks.get(key, ())) for cli, key in TASK_KEYS.items()}


if __name__ == "__main__":  # the command imports this module, not the other way round
    raise SystemExit("python -m ovearth_core.analysis.leaderboard is not a command: run "
                     "python -m ovearth_core.leaderboard")
