"""One pipeline: a submission's bytes, hashed and parsed once, evaluated through the result
cache under one entry (issue 39).

The app (``pages.common.data``), the reviewer report (:mod:`ovearth_core.report.build`) and
the leaderboard (:mod:`ovearth_core.analysis.leaderboard`) all evaluate here, so one input
is one cache entry whoever asks first: an evaluation the app made is found by the
leaderboard and the report, and the other way round.

An entry (kind :data:`KIND`) holds the evaluator's result and the box facts of
:func:`~ovearth_core.evaluate.evaluate_run` (``{"results", "facts"}`` and the facts'
arrays), keyed by the SHA-256 of the very bytes parsed and the evaluator's options
(:meth:`Options.evaluator`: the average precision's own options do not change a result).

Example::

    >>> from ovearth_core.cache import ResultCache
    >>> loaded = load("gt.json", "pred.json", Options("vocabulary", "auto"))  # doctest: +SKIP
    >>> run, from_cache = evaluate_cached(loaded, ResultCache("cache"))       # doctest: +SKIP
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .cache import LOG, MISS, ResultCache, encode, read_hashed
from .cache import key as cache_key
from .gcpause import gc_paused
from .options import Options
from .run import Run, facts_arrays, facts_from_arrays
from .types import SampleList

KIND = "evaluation"
PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Loaded:
    """One submission's samples under ``options``, and the SHA-256 of the ground-truth and
    prediction bytes they were parsed from."""

    samples: SampleList
    options: Options
    gt_sha256: str
    pred_sha256: str


def entry_key(gt_sha256: str, pred_sha256: str, options: Options) -> str:
    """The cache key of one evaluation (the evaluator's options only)."""
    return cache_key(KIND, gt_sha256, pred_sha256, options.evaluator())


def read_ground_truth(gt_path: PathLike) -> tuple[Any, str]:
    """The parsed ground truth and the SHA-256 of the very bytes it was parsed from (one
    read; raises :class:`~ovearth_core.errors.OVEarthInputError`)."""
    from .io import parse_ground_truth, parse_json

    with gc_paused():
        data, sha = read_hashed(gt_path, "ground-truth")
        return parse_ground_truth(parse_json(data, str(gt_path)), str(gt_path)), sha


def load(gt_path: PathLike, pred_path: PathLike, options: Options, *,
         ground_truth: Any = None, gt_sha256: str | None = None,
         predictions_doc: Any = None, pred_sha256: str | None = None) -> Loaded:
    """The validated samples of one task (raises
    :class:`~ovearth_core.errors.OVEarthInputError`). Each file is read once and hashed from
    those bytes, unless the caller hands over what it parsed with the digest of the bytes
    it parsed (``ground_truth`` with ``gt_sha256``; ``predictions_doc`` with
    ``pred_sha256``): it vouches that they belong together."""
    from .io import load_samples, parse_json

    with gc_paused():  # the documents are freed before collection resumes
        if ground_truth is None or gt_sha256 is None:
            ground_truth, gt_sha256 = read_ground_truth(gt_path)
        if predictions_doc is None or pred_sha256 is None:
            data, pred_sha256 = read_hashed(pred_path, "prediction")
            predictions_doc = parse_json(data, str(pred_path))
            del data
        samples = load_samples(gt_path, pred_path, options.task, options.score_threshold,
                               options.bbox_format, options.modalities,
                               ground_truth=ground_truth, predictions_doc=predictions_doc,
                               large_masks=options.large_masks,
                               concave_obb=options.concave_obb)
    return Loaded(samples, options, gt_sha256, pred_sha256)


def cached(store: ResultCache, key: str) -> tuple[dict[str, Any], dict[str, Any]] | Any:
    """``(results, box facts)`` of the entry ``key``, or :data:`MISS`. An entry that decodes
    but lacks its results or facts is reported and removed (a miss), never an error."""
    found = store.get_arrays(key)
    if found is MISS:
        return MISS
    value, arrays = found
    try:
        return value["results"], facts_from_arrays(arrays, list(value["facts"]))
    except (KeyError, TypeError, ValueError) as why:
        store.reject(key, f"not an evaluation entry ({type(why).__name__}: {why})")
        return MISS


def entry(run: Run) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run as a cache entry's ``(value, arrays)`` (ValueError when it cannot be one)."""
    return {"results": run.results, "facts": list(run.box_facts)}, facts_arrays(run.box_facts)


def encoded(key: str, run: Run) -> bytes | None:
    """The bytes of ``run``'s entry under ``key`` (``None``: it cannot be stored, as a NaN
    or facts of mixed dtypes; logged)."""
    try:
        return encode(key, *entry(run))
    except ValueError as err:
        LOG.warning("result cache: not stored (%s)", err)
        return None


def lookup(store: ResultCache, gt_sha256: str, pred_sha256: str, options: Options) -> Any:
    """``(results, box facts)`` stored for these digests under ``options``, or :data:`MISS`
    (for a caller that has not parsed the files: the leaderboard's warm run)."""
    return cached(store, entry_key(gt_sha256, pred_sha256, options))


def evaluate_cached(loaded: Loaded, store: ResultCache | None) -> tuple[Run, bool]:
    """The evaluation of ``loaded`` through ``store`` (``None``: no cache) and whether it
    came from there; a miss is evaluated and stored."""
    run, from_cache, _ = evaluate_stored(loaded, store)
    return run, from_cache


def evaluate_stored(loaded: Loaded, store: ResultCache | None
                    ) -> tuple[Run, bool, bytes | None]:
    """:func:`evaluate_cached`, and the bytes of the entry stored just now (``None`` on a
    hit, without a cache, or when the run cannot be stored): a worker process sends them
    back instead of pickling the result."""
    from .evaluate import evaluate_run

    key = entry_key(loaded.gt_sha256, loaded.pred_sha256, loaded.options)
    if store is not None and (found := cached(store, key)) is not MISS:
        return Run(found[0], loaded.samples, found[1]), True, None
    run = evaluate_run(loaded.samples, loaded.options.iou_threshold)
    blob = None if store is None else encoded(key, run)
    if blob is not None and store is not None:
        store.put_blob(key, blob)
    return run, False, blob
