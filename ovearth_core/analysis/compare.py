"""Paired comparison of two evaluation results (submission A and B) of one task.

Both results must come from :func:`ovearth_core.evaluate.evaluate_samples` on the
same ground truth, task and options, so that their ``per_sample`` rows pair up
query by query. Every difference is **B − A**.

Uncertainty comes from a paired bootstrap over queries: each resample draws the
task's N queries with replacement (the same draw for A and B) and recomputes
each key metric from per-query contributions. With ``unit="image"`` the M images
are drawn instead (a drawn image brings all its queries), as a DOTA or COCO
conversion needs: its queries are (image, class) pairs of a few images, and the
queries of one image are not independent. Intervals and tests resting on fewer than
:data:`.evidence.MIN_UNITS` units carry the one warning of every surface
(:func:`.evidence.thin_evidence`). All key metrics are ratios of sums of per-query
quantities (counts, IoUs, pixel areas), so a resample is a row of multiplicities ``c``
(length N, summing to N) and its sums are ``c @ X`` for a per-query contribution matrix
``X`` (N × k) built once; R resamples are one ``(R × N) @ (N × k)`` product, done in chunks of rows.

Edge cases:

* A metric whose denominator is zero in a resample (e.g. MCC with no predicted
  positives) is undefined there; such resamples are left out of its interval,
  and ``n_valid`` says how many remained. With no valid resample, or a null
  observed value, the interval is ``None``.
* McNemar's exact test with no discordant pair has p = 1.
* Queries without usable ground truth for a modality have no per-query score
  there and do not enter its per-query differences or hit agreement.

Average precision is no ratio of per-query sums; :func:`ap_differences` (and
``compare_results(..., ap=...)``) gives its numbers the same paired intervals from the same
resamples, reweighting the once-ranked detections (:mod:`.ap_bootstrap`). It may use fewer
resamples (:data:`DEFAULT_AP_RESAMPLES`): the first ones of the same stream.

>>> mcnemar_exact(only_a=1, only_b=7)  # 2 * P(X <= 1), X ~ Binomial(8, 1/2) = 18/256
0.0703125
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import orjson

from ..errors import OVEarthInputError, Problem
from ..files import read_bounded
from ..labels import MODALITY_LABELS, metric_label
from ..types import OUTPUT_KEYS
from . import additive
from .evidence import thin_evidence

if TYPE_CHECKING:  # the AP modules (ranking, COCO matching) load when AP is compared
    from .ap_bootstrap import APRun

FloatArray = npt.NDArray[np.float64]
DEFAULT_RESAMPLES = 2000
# AP reweights every ranked detection per resample (benchmarks/README.md, "AP intervals"):
# fewer resamples by default, the first ones of the additive metrics' stream.
DEFAULT_AP_RESAMPLES = 1000
DEFAULT_SEED = 0
CONFIDENCE = 0.95
HIT_THRESHOLD = 0.5
_CHUNK = 128  # resamples per matrix product: bounds memory at 128 × N float64
UNITS = ("query", "image")
DET_KEYS = additive.BOX_KEYS


@dataclass(frozen=True)
class MetricDiff:
    """One key metric of A and B, their difference B − A and its bootstrap interval."""

    modality: str  # "presence", "seg", "bbox" or "oriented_bbox" (summary keys)
    metric: str  # key of the modality's summary, e.g. "positive_macro_miou"
    a: float | None
    b: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    n_valid: int  # resamples in which the metric was defined for both A and B


@dataclass(frozen=True)
class Agreement:
    """2 × 2 table of per-query correctness of A and B, with McNemar's exact test.

    ``only_a`` counts queries A got right and B wrong (their ids: ``only_a_ids``).
    """

    name: str
    both_right: int
    only_a: int
    only_b: int
    both_wrong: int
    p_value: float
    only_a_ids: tuple[str, ...] = ()
    only_b_ids: tuple[str, ...] = ()
    # Holm's correction over the comparison's McNemar tests (several at once, issue 37).
    p_holm: float | None = None

    @property
    def total(self) -> int:
        return self.both_right + self.only_a + self.only_b + self.both_wrong


@dataclass(frozen=True)
class QueryDiff:
    """Per-query score of A and B (seg: IoU; boxes: per-query F1) and B − A."""

    sample_id: str
    phrase: str
    category: str
    a: float
    b: float
    diff: float


@dataclass(frozen=True)
class CategoryDiff:
    """One category's metrics of A and B: ``values[name] = (a, b, b − a)``."""

    category: str
    num_queries: int
    values: dict[str, tuple[float | None, float | None, float | None]]


@dataclass(frozen=True)
class Comparison:
    task: str
    num_queries: int
    n_resamples: int
    seed: int
    confidence: float
    metrics: list[MetricDiff]
    presence_a: dict[str, int] | None
    presence_b: dict[str, int] | None
    agreements: list[Agreement]
    query_diffs: dict[str, list[QueryDiff]] = field(default_factory=dict)
    categories: list[CategoryDiff] = field(default_factory=list)
    unit: str = "query"  # what the bootstrap resamples: "query" or "image"
    num_units: int = 0  # how many of them
    warning: str | None = None  # :func:`.evidence.thin_evidence` (num_units < MIN_UNITS)
    # Average precision of every box (keys of labels.AP_METRICS as ``metric``), with
    # intervals from the first ``ap_resamples`` resamples (none: not asked for).
    ap_metrics: list[MetricDiff] = field(default_factory=list)
    ap_resamples: int = 0

    def metric(self, modality: str, metric: str) -> MetricDiff:
        """The :class:`MetricDiff` for ``modality``/``metric`` (KeyError when absent)."""
        for m in self.metrics:
            if m.modality == modality and m.metric == metric:
                return m
        raise KeyError(f"{modality}.{metric}")

    def ap_metric(self, modality: str, key: str) -> MetricDiff:
        """The AP :class:`MetricDiff` of ``modality`` and AP key (KeyError when absent)."""
        for m in self.ap_metrics:
            if m.modality == modality and m.metric == key:
                return m
        raise KeyError(f"{modality}.{key}")


# --- bootstrap --------------------------------------------------------------------------------

Reducer = Callable[[FloatArray], FloatArray]


def recompute_key_metrics(result: dict[str, Any]) -> dict[tuple[str, str], float | None]:
    """Key metrics recomputed from per-query pieces (the bootstrap's reducers,
    :mod:`.additive`); equal to the evaluator's ``summary`` values."""
    return additive.recompute(result)


def resample_counts(rng: np.random.Generator, n_resamples: int, n: int) -> FloatArray:
    """``(n_resamples, n)`` multiplicities of n draws with replacement from n items."""
    idx = rng.integers(0, n, size=(n_resamples, n))
    flat = (idx + n * np.arange(n_resamples)[:, None]).ravel()
    return np.bincount(flat, minlength=n_resamples * n).reshape(n_resamples, n).astype(np.float64)


def distinct_columns(flat: FloatArray) -> tuple[FloatArray, npt.NDArray[np.intp]]:
    """``flat`` ``(U, C)`` as its distinct columns and, per column, which one it is:
    ``distinct[:, inverse]`` is ``flat``. A resample's sums multiply each distinct column
    once (:func:`resampled_sums`), so equal pieces give equal sums, bit for bit. (BLAS
    sums the columns of one product in different orders -- the last columns go to a
    remainder kernel -- so two equal columns came out 1-2 ulp apart, and exact ties became
    ranks 4.0 and 4.5 in some resamples; issue 46 §4.) Compare's B − A of two equal
    submissions is 0 in every resample for the same reason."""
    distinct, inverse = np.unique(flat, axis=1, return_inverse=True)
    return distinct, inverse.reshape(-1).astype(np.intp)


def resampled_sums(counts: FloatArray, columns: tuple[FloatArray, npt.NDArray[np.intp]],
                   ) -> FloatArray:
    """``counts @ flat`` (``(R, U) @ (U, C)``) of ``columns = distinct_columns(flat)``."""
    distinct, inverse = columns
    return (counts @ distinct)[:, inverse]


def unit_groups(rows: Sequence[dict[str, Any]], unit: str) -> npt.NDArray[np.intp]:
    """Per row, the index of its resampling unit (``query``: itself; ``image``: its
    ``image_path``, numbered in order of first appearance)."""
    if unit not in UNITS:
        raise OVEarthInputError([Problem("(options)", "bootstrap unit", " or ".join(UNITS),
                                         repr(unit))])
    if unit == "query":
        return np.arange(len(rows), dtype=np.intp)
    index: dict[str, int] = {}
    return np.array([index.setdefault(r["image_path"], len(index)) for r in rows],
                    dtype=np.intp)


def resample_chunks(n_resamples: int, seed: int, groups: npt.NDArray[np.intp],
                    ) -> Iterator[tuple[int, int, FloatArray]]:
    """The resamples ``[start, stop)`` and their ``(stop - start, N)`` row multiplicities,
    chunk by chunk (:data:`_CHUNK` rows): the one stream every interval of a comparison
    reads, so that fewer resamples are the first ones of more."""
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, _CHUNK):
        stop = min(start + _CHUNK, n_resamples)
        yield start, stop, unit_counts(rng, stop - start, groups)


def unit_counts(rng: np.random.Generator, n_resamples: int,
                groups: npt.NDArray[np.intp]) -> FloatArray:
    """``(n_resamples, N)`` row multiplicities when the ``max(groups) + 1`` units are drawn
    with replacement and a row counts as often as its unit (``groups``: per row, its unit)."""
    n_units = int(groups.max()) + 1 if groups.size else 0
    return resample_counts(rng, n_resamples, n_units)[:, groups]


def default_unit(gt_path: str | Path) -> str:
    """The bootstrap unit a ground-truth file asks for: ``source.resample_unit`` as the
    DOTA and COCO converters write it (``image``), else ``query`` (also for a file that is
    not a JSON object, or one the bounded reader refuses: the loader reports those)."""
    try:
        doc = orjson.loads(read_bounded(gt_path))
    except (OSError, ValueError):  # InputRefused and orjson.JSONDecodeError are ValueErrors
        return "query"
    source = doc.get("source") if isinstance(doc, dict) else None
    unit = source.get("resample_unit") if isinstance(source, dict) else None
    return unit if unit in UNITS else "query"


def paired_bootstrap(x_a: FloatArray, x_b: FloatArray, reducer: Reducer, n_resamples: int,
                     seed: int) -> FloatArray:
    """Bootstrap distribution of ``reducer(B sums) − reducer(A sums)`` (NaN where undefined).

    Args:
        x_a, x_b: ``(N, k)`` per-query contributions of A and B, rows paired by query.
        reducer: maps ``(R, k)`` column sums to ``(R,)`` metric values.
        n_resamples: R.
        seed: seed of the ``numpy.random.Generator`` drawing the resamples.
    """
    return _bootstrap_many(np.hstack([x_a, x_b]), [(x_a.shape[1], [reducer])], n_resamples,
                           seed)[0]


def _bootstrap_many(x: FloatArray, parts: Sequence[tuple[int, Sequence[Reducer]]],
                    n_resamples: int, seed: int,
                    groups: npt.NDArray[np.intp] | None = None) -> list[FloatArray]:
    """Differences B − A for several metrics from one set of resamples.

    ``x`` holds, for each part in order, its ``k`` columns of A followed by its ``k``
    columns of B; every reducer of a part reads those columns. ``groups``: per row, its
    resampling unit (:func:`unit_groups`; ``None``: each row its own). Returns one
    ``(R,)`` array per reducer, in order.
    """
    if groups is None:
        groups = np.arange(x.shape[0], dtype=np.intp)
    outs = [np.empty(n_resamples) for _, reducers in parts for _ in reducers]
    columns = distinct_columns(x)
    for start, stop, counts in resample_chunks(n_resamples, seed, groups):
        sums = resampled_sums(counts, columns)
        col, i = 0, 0
        for k, reducers in parts:
            sa, sb = sums[:, col:col + k], sums[:, col + k:col + 2 * k]
            for reducer in reducers:
                outs[i][start:stop] = reducer(sb) - reducer(sa)
                i += 1
            col += 2 * k
    return outs


def percentile_interval(dist: FloatArray, confidence: float,
                        ) -> tuple[float | None, float | None, int]:
    """Two-sided percentile interval of the finite values of ``dist`` and their count
    (``(None, None, 0)`` when none is finite)."""
    valid = dist[np.isfinite(dist)]
    if valid.size == 0:
        return None, None, 0
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(valid, [tail, 100 - tail])
    return float(low), float(high), int(valid.size)


# --- agreement and McNemar -------------------------------------------------------------------

def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of the discordant pairs at 1/2."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    from scipy.stats import binomtest  # ~0.5-1 s to import: only when a p-value is asked

    return float(binomtest(only_a, n, 0.5, alternative="two-sided").pvalue)


def agreement(name: str, ids: Sequence[str], right_a: npt.ArrayLike,
              right_b: npt.ArrayLike) -> Agreement:
    """Agreement table of two boolean correctness vectors over the same queries."""
    ra = np.asarray(right_a, dtype=bool)
    rb = np.asarray(right_b, dtype=bool)
    only_a = ra & ~rb
    only_b = ~ra & rb
    return Agreement(
        name=name, both_right=int((ra & rb).sum()), only_a=int(only_a.sum()),
        only_b=int(only_b.sum()), both_wrong=int((~ra & ~rb).sum()),
        p_value=mcnemar_exact(int(only_a.sum()), int(only_b.sum())),
        only_a_ids=tuple(ids[i] for i in np.flatnonzero(only_a)),
        only_b_ids=tuple(ids[i] for i in np.flatnonzero(only_b)))


def with_holm(agreements: Sequence[Agreement]) -> list[Agreement]:
    """``agreements`` with Holm's adjusted p-values over their McNemar tests (a comparison
    shows them all at once: presence and each modality's hits)."""
    from dataclasses import replace

    from .multiple import holm

    adjusted = holm([ag.p_value for ag in agreements])
    return [replace(ag, p_holm=p) for ag, p in zip(agreements, adjusted, strict=True)]


def biggest_differences(diffs: Sequence[QueryDiff], n: int,
                        ) -> tuple[list[QueryDiff], list[QueryDiff]]:
    """The ``n`` biggest wins of B (largest B − A first) and of A (most negative first).

    ``diffs`` sorted by difference ascending, as in :attr:`Comparison.query_diffs`; ties
    (0) are neither.
    """
    return [d for d in reversed(diffs) if d.diff > 0][:n], [d for d in diffs if d.diff < 0][:n]


def query_score(row: dict[str, Any], key: str) -> float | None:
    """Per-query score of a modality: IoU for ``seg``, F1 for boxes; None if not evaluated."""
    entry = row[key]
    if entry is None or not entry["evaluated"]:
        return None
    return float(entry["iou"] if key == "seg" else entry["f1"])


# --- the comparison --------------------------------------------------------------------------

def check_comparable(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Raise :class:`OVEarthInputError` unless A and B share task, options and queries."""
    problems = []
    if a["task"] != b["task"]:
        problems.append(Problem("(comparison)", "task", f"the same task as A ({a['task']})",
                                str(b["task"])))
    for key in sorted(set(a["config"]) | set(b["config"])):
        if a["config"].get(key) != b["config"].get(key):
            problems.append(Problem("(comparison)", f"config.{key}",
                                    f"the same value as A ({a['config'].get(key)!r})",
                                    repr(b["config"].get(key))))
    ids_a = [r["sample_id"] for r in a["per_sample"]]
    ids_b = [r["sample_id"] for r in b["per_sample"]]
    if ids_a != ids_b:
        first = next((y for x, y in zip(ids_a, ids_b, strict=False) if x != y), "the end")
        problems.append(Problem("(comparison)", "per_sample.sample_id",
                                f"the same {len(ids_a)} queries in the same order as A",
                                f"{len(ids_b)} queries, first difference at {first!r}"))
    if problems:
        raise OVEarthInputError(problems)


def compare_results(a: dict[str, Any], b: dict[str, Any], n_resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED, confidence: float = CONFIDENCE,
                    hit_threshold: float = HIT_THRESHOLD, unit: str = "query",
                    ap: tuple[APRun, APRun] | None = None,
                    ap_resamples: int = DEFAULT_AP_RESAMPLES) -> Comparison:
    """Compare two results of :func:`~ovearth_core.evaluate.evaluate_samples` (B − A).

    Args:
        a, b: evaluation results of the same task, ground truth and options.
        n_resamples: bootstrap resamples (R); one ``(R × N) @ (N × k)`` product in chunks.
        seed: seed of the ``numpy.random.Generator``; same seed, same intervals.
        confidence: two-sided level of the percentile intervals.
        hit_threshold: per-query score at which a query counts as right in the
            per-modality agreement tables (IoU for masks, F1 for boxes).
        unit: what the bootstrap resamples, ``query`` or ``image`` (:data:`UNITS`).
        ap: A's and B's average precision of every box (:func:`.ap_bootstrap.ap_run`), to
            compare with intervals (:func:`ap_differences`) in ``ap_metrics``.
        ap_resamples: resamples of the AP intervals (the first ones of ``n_resamples``'s).
    """
    if ap is not None and ap_resamples > n_resamples:
        raise ValueError(f"{ap_resamples:,} AP resamples asked of {n_resamples:,}: the AP "
                         "intervals use the first ones of the key metrics' resamples")
    check_comparable(a, b)
    rows_a, rows_b = a["per_sample"], b["per_sample"]
    groups = unit_groups(rows_a, unit)
    n_units = int(groups.max()) + 1 if groups.size else 0
    # A modality one side does not contain at all is "not submitted" there: its values are
    # None (shown as —) and it gets no difference, interval or per-query comparison.
    missing = not_submitted(a) | not_submitted(b)
    specs = [m for m in additive.metrics_of(a) if m.modality not in missing]
    blocks: list[FloatArray] = []
    parts: list[tuple[int, list[Reducer]]] = []
    for spec in specs:
        blocks += [spec.matrix(rows_a), spec.matrix(rows_b)]
        parts.append((spec.size, [spec.value]))
    names = [(spec.modality, spec.metric) for spec in specs]
    bootstrapped = set(names)
    n = len(rows_a)
    dists = (_bootstrap_many(np.hstack(blocks), parts, n_resamples, seed, groups)
             if blocks and n else [np.full(n_resamples, np.nan) for _ in names])
    by_name = dict(zip(names, dists, strict=True))
    metrics = []
    for spec in additive.metrics_of(a):
        modality, metric = spec.modality, spec.metric
        va = None if modality in not_submitted(a) else a["summary"][modality].get(metric)
        vb = None if modality in not_submitted(b) else b["summary"][modality].get(metric)
        diff = None if va is None or vb is None else vb - va
        low, high, n_valid = (percentile_interval(by_name[(modality, metric)], confidence)
                              if diff is not None and (modality, metric) in bootstrapped
                              else (None, None, 0))
        metrics.append(MetricDiff(modality, metric, va, vb, diff, low, high, n_valid))
    ids = [r["sample_id"] for r in rows_a]
    agreements = []
    presence = a["summary"].get("presence")
    if presence is not None:
        agreements.append(agreement(
            "presence", ids, [r["pred_present"] == r["gt_present"] for r in rows_a],
            [r["pred_present"] == r["gt_present"] for r in rows_b]))
    query_diffs: dict[str, list[QueryDiff]] = {}
    for key in ("seg", *DET_KEYS):
        if a["summary"].get(key) is None or key in missing:
            continue
        diffs = [QueryDiff(ra["sample_id"], ra["phrase"], ra.get("category", ""), sa, sb, sb - sa)
                 for ra, rb in zip(rows_a, rows_b, strict=True)
                 if (sa := query_score(ra, key)) is not None
                 and (sb := query_score(rb, key)) is not None]
        diffs.sort(key=lambda d: (d.diff, d.sample_id))
        query_diffs[key] = diffs
        score = "IoU" if key == "seg" else "F1"
        agreements.append(agreement(
            f"{MODALITY_LABELS[key]} hit ({score} ≥ {hit_threshold:g})",
            [d.sample_id for d in diffs],
            [d.a >= hit_threshold for d in diffs], [d.b >= hit_threshold for d in diffs]))
    return Comparison(
        task=a["task"], num_queries=n, n_resamples=n_resamples, seed=seed,
        confidence=confidence, metrics=metrics,
        presence_a=_counts(a["summary"].get("presence")),
        presence_b=_counts(b["summary"].get("presence")),
        agreements=with_holm(agreements), query_diffs=query_diffs,
        categories=category_diffs(a.get("per_category", []), b.get("per_category", [])),
        unit=unit, num_units=n_units, warning=thin_evidence(n_units, unit),
        ap_metrics=([] if ap is None else ap_differences(a, b, *ap, ap_resamples, seed,
                                                         confidence, unit)),
        ap_resamples=0 if ap is None else ap_resamples)


def ap_differences(a: dict[str, Any], b: dict[str, Any], run_a: APRun, run_b: APRun,
                   n_resamples: int = DEFAULT_AP_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = CONFIDENCE, unit: str = "query") -> list[MetricDiff]:
    """Each AP of :data:`~ovearth_core.labels.AP_METRICS` of A and B per box modality, B − A
    and its paired percentile interval.

    ``a``, ``b``: the evaluation results compared (their rows are what the resamples draw,
    with the same seed as :func:`compare_results`, so the resamples are the key metrics'
    first ``n_resamples``); ``run_a``, ``run_b``: their AP of every box
    (:func:`.ap_bootstrap.ap_run`, whose options -- IoU threshold, hard negatives, detection
    cap -- the resampled numbers keep). A and B are the runs' reported numbers and the
    difference exactly theirs; a modality one side did not submit, or an AP undefined on
    one side, has no difference or interval; a resample in which an AP is undefined (no GT
    drawn) is left out (``n_valid``).
    """
    from ..labels import ap_keys
    from .ap import ap_numbers
    from .ap_bootstrap import ap_values

    check_comparable(a, b)
    rows = a["per_sample"]
    groups = unit_groups(rows, unit)
    row_of = {r["sample_id"]: i for i, r in enumerate(rows)}
    gone_a, gone_b = not_submitted(a), not_submitted(b)
    observed: list[tuple[str, str, float | None, float | None]] = []
    columns: dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]] = {}
    for m in DET_KEYS:  # the box modalities, in the AP report's order
        entry_a, entry_b = run_a.report.get(m), run_b.report.get(m)
        if not entry_a:
            continue
        keys = ap_keys(run_a.report)
        na = ap_numbers(None if m in gone_a else entry_a, keys)
        nb = ap_numbers(None if m in gone_b else entry_b, keys)
        observed += [(m, key, na[key][0], nb[key][0]) for key in keys]
        if m not in gone_a | gone_b and entry_b and m in run_a.curves and m in run_b.curves:
            columns[m] = (_rows_of(run_a.curves[m].query_ids, row_of),
                          _rows_of(run_b.curves[m].query_ids, row_of))
    dists = {(m, key): np.full(n_resamples, np.nan) for m, key, _, _ in observed}
    if columns and rows:
        for start, stop, counts in resample_chunks(n_resamples, seed, groups):
            for m, (cols_a, cols_b) in columns.items():
                va = ap_values(run_a.curves[m], counts[:, cols_a])
                vb = ap_values(run_b.curves[m], counts[:, cols_b])
                for key, value in vb.items():
                    dists[(m, key)][start:stop] = value - va[key]
    out = []
    for m, key, va, vb in observed:
        diff = None if va is None or vb is None else vb - va
        low, high, n_valid = (percentile_interval(dists[(m, key)], confidence)
                              if diff is not None and m in columns else (None, None, 0))
        out.append(MetricDiff(m, key, va, vb, diff, low, high, n_valid))
    return out


def _rows_of(query_ids: Sequence[str], row_of: dict[str, int]) -> npt.NDArray[np.intp]:
    """The result rows of an AP run's queries (an id the results lack: the run is of other
    samples, a caller's mistake)."""
    try:
        return np.array([row_of[q] for q in query_ids], dtype=np.intp)
    except KeyError as err:
        raise ValueError(f"AP run of query {err.args[0]!r}, which the compared results "
                         "do not have") from None


def not_submitted(result: dict[str, Any]) -> set[str]:
    """Summary keys (``seg``, ``bbox``, ``oriented_bbox``) of the modalities the result's
    submission does not contain (``coverage.not_submitted_modalities``)."""
    names = result.get("coverage", {}).get("not_submitted_modalities", ())
    return {OUTPUT_KEYS[m] for m in names}


def _counts(presence: dict[str, Any] | None) -> dict[str, int] | None:
    return None if presence is None else {k: presence[k] for k in ("tp", "fp", "tn", "fn")}


def category_values(entry: dict[str, Any]) -> dict[str, float | None]:
    """Headline numbers of one ``per_category`` entry (absent modalities left out)."""
    out: dict[str, float | None] = {}
    if entry.get("presence") is not None:
        out[metric_label("presence", "accuracy")] = entry["presence"]["accuracy"]
    if entry.get("seg") is not None:
        out[metric_label("seg", "miou")] = entry["seg"]["miou"]
    for key in DET_KEYS:
        if entry.get(key) is not None:
            out[metric_label(key, "micro_f1")] = entry[key]["micro_f1"]
    return out


def category_diffs(cats_a: Sequence[dict[str, Any]],
                   cats_b: Sequence[dict[str, Any]]) -> list[CategoryDiff]:
    """Per-category A, B and B − A, in the evaluator's (alphabetical) category order."""
    by_b = {c["category"]: c for c in cats_b}
    out = []
    for ca in cats_a:
        va = category_values(ca)
        vb = category_values(by_b.get(ca["category"], {}))
        values = {}
        for name, x in va.items():
            y = vb.get(name)
            values[name] = (x, y, None if x is None or y is None else y - x)
        out.append(CategoryDiff(ca["category"], ca["num_queries"], values))
    return out
