"""A leaderboard's maths: ranking, Spearman's rho and the paper's category-subset stability
(pure functions of evaluator results or their board entries; no files, no processes).

Every ranked metric is a function of per-category additive components (e.g. summed IoU and
query count for the macro mIoU, TP/FP/FN for micro F1, the 2x2 table for MCC). Per-model
per-category sums are computed once, an array ``(models, categories, components)``; the
metric of any category subset is then one matrix product with the subsets' 0/1 indicator
matrix. Over the full category set each metric equals the evaluator's summary value.

Ranking conventions: higher is better; ties in the top-k keep model order; a metric that is
undefined for a model (``None`` in the evaluator, e.g. MCC with an empty margin) ranks last.
Spearman's rho is the Pearson correlation of average ranks (ties get the mean rank); it is
undefined (``nan``) when either ranking is constant.

:mod:`ovearth_core.analysis.leaderboard` evaluates the submissions (worker processes, the
result cache) and calls these; issue 39 split the two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..formulas import ratio_array
from ..labels import AP_RANKED, ap_keys
from ..options import Options
from . import additive
from .ap import ap_numbers
from .ap_bootstrap import APRun, resampled_keys
from .compare import not_submitted
from .rank_stats import ap_rank_uncertainty, average_ranks, metric_ranks

FloatArray = npt.NDArray[np.float64]


Row = dict[str, Any]
# rank_uncertainties' signature: (names, results, pieces, options, seed, unit) -> report
Uncertainty = Callable[[Sequence[str], Sequence[dict[str, Any]], Sequence["QueryPieces"],
                        Options, int, str], dict[str, Any]]


SUBSET_SIZES = (5, 20, 50, 100, 150)


# The ranked metrics, in output order: entries of the shared registry (:mod:`.additive`).
METRICS: dict[str, additive.AdditiveMetric] = {n: additive.METRICS[n] for n in (
    "seg_macro_miou", "seg_micro_miou", "bbox_micro_f1", "bbox_mean_micro_f1",
    "oriented_bbox_micro_f1", "presence_mcc")}


# Ranked average precision: labels.AP_RANKED. Ranks, never sums: AP is no function of
# per-category additive pieces, so it has no category-subset stability.


def add_ap_ranking(table: dict[str, Any], results: Sequence[dict[str, Any]],
                   reports: Sequence[dict[str, Any] | None]) -> None:
    """Add the :data:`AP_RANKED` metrics of each model's
    :func:`~ovearth_core.analysis.ap.average_precision_report` to a :func:`rank_table`
    (``None`` where the model does not submit the modality; it ranks last)."""
    names = table["models"]
    for name, (m, key) in AP_RANKED.items():
        if not any(r is not None and r.get(m) and key in ap_keys(r) for r in reports):
            continue
        vals = [None if r is None or not r.get(m) or m in not_submitted(res)
                else ap_numbers(r[m], (key,))[key][0]
                for res, r in zip(results, reports, strict=True)]
        table["metrics"][name] = vals
        table["not_submitted"][name] = [n for n, res in zip(names, results, strict=True)
                                        if m in not_submitted(res)]
        arr = np.array([np.nan if v is None else v for v in vals], dtype=np.float64)
        table["ranking"][name] = [names[i] for i in top_k(arr, len(names))]


def available_metrics(result: dict[str, Any]) -> list[str]:
    """Metrics an evaluator result supports (its task and enabled modalities)."""
    return [m.name for m in additive.metrics_of(result, list(METRICS))]


@dataclass(frozen=True)
class CategorySums:
    """One submission's per-category summed pieces of every ranked metric.

    ``categories``: sorted, every category of a ``per_sample`` row (counted or not);
    ``sums[metric]``: ``(len(categories), size)`` float64, the metric's pieces
    (:mod:`.additive`) summed per category in row order (zeros where none counts).
    """

    categories: tuple[str, ...]
    sums: dict[str, FloatArray]


# What the leaderboard keeps of an evaluator result (a *board entry*, :func:`board_entry`):
# everything but its per-query and per-category rows, and the per-category sums.
BOARD_KEYS = ("task", "config", "summary", "coverage", "warnings")


SUMS = "category_sums"


PIECES = "query_pieces"


@dataclass(frozen=True)
class QueryPieces:
    """One submission's per-query pieces of every ranked metric (what the rank resampling
    re-sums, issue 37), in ``per_sample`` order.

    ``query_ids`` ``(N,)``; ``category`` ``(N,)``: each query's index in ``categories``
    (sorted); ``image`` ``(N,)``: each query's index in ``images`` (in order of first
    appearance); ``pieces[metric]``: ``(N, size)`` float64 (zeros where a query does not
    count)."""

    query_ids: tuple[str, ...]
    categories: tuple[str, ...]
    category: npt.NDArray[np.intp]
    images: tuple[str, ...]
    image: npt.NDArray[np.intp]
    pieces: dict[str, FloatArray]

    def query_images(self) -> list[str]:
        """The image of each query."""
        return [self.images[i] for i in self.image]

    def sums(self) -> CategorySums:
        """The :class:`CategorySums` of these pieces (each category's queries added in
        row order, from zero: ``np.bincount`` adds one after the other, as ``np.add.at``
        does, in a tenth of its time)."""
        n = len(self.categories)
        return CategorySums(self.categories, {
            name: np.stack([np.bincount(self.category, weights=column, minlength=n)
                            for column in array.T], axis=1)
            for name, array in self.pieces.items()})


def query_pieces(result: dict[str, Any], metrics: Sequence[str] | None = None) -> QueryPieces:
    """The :class:`QueryPieces` of an evaluator result (of ``metrics``, default every ranked
    metric), or the ones a board entry holds."""
    if PIECES in result:
        return result[PIECES]
    rows = result["per_sample"]
    ids, query_categories, query_images = (list(map(itemgetter(k), rows))
                                           for k in ("sample_id", "category", "image_path"))
    categories = sorted(set(query_categories))
    images = list(dict.fromkeys(query_images))  # in order of first appearance
    return QueryPieces(tuple(ids), tuple(categories), _positions(query_categories, categories),
                       tuple(images), _positions(query_images, images),
                       {name: METRICS[name].matrix(rows) for name in metrics or METRICS})


def _positions(values: list[str], keys: Sequence[str]) -> npt.NDArray[np.intp]:
    """Where each value is among ``keys`` (every value is one of them)."""
    index = {k: i for i, k in enumerate(keys)}
    return np.array(list(map(index.__getitem__, values)), dtype=np.intp)


def category_sums(result: dict[str, Any], metrics: Sequence[str] | None = None,
                  ) -> CategorySums:
    """The :class:`CategorySums` of an evaluator result, of ``metrics`` (default: every
    ranked metric), or the ones a board entry holds."""
    if SUMS in result:
        return result[SUMS]
    return query_pieces(result, metrics).sums()


def category_stats(results: Sequence[dict[str, Any]], metric: str,
                   ) -> tuple[list[str], FloatArray]:
    """Per-model per-category summed components: ``(categories, array (M, C, K))``.

    ``results`` are evaluator outputs (or their :func:`board_entry`) of the same task and
    ground truth; a category a model has no row of is zeros.
    """
    parts = [category_sums(res, (metric,)) for res in results]
    categories = sorted(set().union(*(p.categories for p in parts)))
    index = {c: i for i, c in enumerate(categories)}
    out = np.zeros((len(results), len(categories), METRICS[metric].size))
    for m, part in enumerate(parts):
        if part.categories:
            out[m, [index[c] for c in part.categories]] = part.sums[metric]
    return categories, out


def metric_values(stats: FloatArray, metric: str) -> FloatArray:
    """The metric of each model over all categories, ``(M,)`` (``nan`` if undefined)."""
    return METRICS[metric].value(stats.sum(axis=1))


def _rank_ready(values: FloatArray) -> FloatArray:
    return np.where(np.isnan(values), -np.inf, values)


def spearman_rows(reference: FloatArray, values: FloatArray) -> FloatArray:
    """Spearman's rho of ``reference`` ``(M,)`` with each row of ``values`` ``(S, M)``."""
    ra = average_ranks(_rank_ready(reference))
    rb = average_ranks(_rank_ready(np.atleast_2d(values)))
    da = ra - ra.mean()
    db = rb - rb.mean(axis=1, keepdims=True)
    den = np.sqrt((da ** 2).sum() * (db ** 2).sum(axis=1))
    return ratio_array(db @ da, den)


def spearman(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Spearman's rho of two equally long score vectors (``nan`` if undefined)."""
    return float(spearman_rows(np.asarray(a, dtype=np.float64),
                               np.asarray(b, dtype=np.float64))[0])


def top_k(values: FloatArray, k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` best along the last axis (ties: lower index first)."""
    return np.argsort(-_rank_ready(values), axis=-1, kind="stable")[..., :k]


def random_subsets(n_categories: int, size: int, n_subsets: int,
                   rng: np.random.Generator) -> FloatArray:
    """0/1 indicator matrix ``(n_subsets, n_categories)`` of uniform random subsets."""
    pick = np.argsort(rng.random((n_subsets, n_categories)), axis=1)[:, :size]
    out = np.zeros((n_subsets, n_categories))
    np.put_along_axis(out, pick, 1.0, axis=1)
    return out


def subset_stability(stats: FloatArray, metric: str, sizes: Sequence[int] = SUBSET_SIZES,
                     n_subsets: int = 1000, seed: int = 0, k: int = 5) -> dict[str, Any]:
    """Spearman of the full ranking with rankings on random category subsets, per size.

    Categories without any contribution (no evaluated query for this metric) are not drawn.
    Sizes above the number of usable categories are skipped; ``k`` is capped at the number
    of models minus one. Returns JSON-ready lists.
    """
    usable = stats.sum(axis=(0, 2)) != 0
    stats = stats[:, usable]
    n_models, n_cat = stats.shape[:2]
    spec = METRICS[metric]
    full = spec.value(stats.sum(axis=1))
    # The top n of n models is always recovered: cap k below the number of models.
    k = max(1, min(k, n_models - 1))
    in_full_top = np.zeros(n_models, dtype=bool)
    in_full_top[top_k(full, k)] = True
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        if size > n_cat:
            continue
        subsets = random_subsets(n_cat, size, n_subsets, rng)
        values = spec.value(np.einsum("mck,sc->smk", stats, subsets))  # (S, M)
        rho = spearman_rows(full, values)
        recovery = in_full_top[top_k(values, k)].sum(axis=1) / k
        valid = rho[~np.isnan(rho)]
        rows.append({
            "size": size,
            "median_spearman": float(np.median(valid)) if valid.size else None,
            "q25_spearman": float(np.quantile(valid, 0.25)) if valid.size else None,
            "q75_spearman": float(np.quantile(valid, 0.75)) if valid.size else None,
            "num_defined": int(valid.size),
            "median_top_k_recovery": float(np.median(recovery)),
            "mean_top_k_recovery": float(np.mean(recovery)),
        })
    return {"metric": metric, "num_models": n_models, "num_categories": n_cat,
            "num_subsets": n_subsets, "seed": seed, "k": k, "sizes": rows}


def _json_float(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def submits(result: dict[str, Any], metric: str) -> bool:
    """Whether the result's submission contains the metric's modality (coverage)."""
    return METRICS[metric].modality not in not_submitted(result)


def rank_table(names: Sequence[str], results: Sequence[dict[str, Any]],
               metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """Key metrics of each model (evaluator summary values) and the ranking by each.

    A model that does not submit a metric's modality gets ``None`` there (not its
    empty-submission zero) and ranks after every model that does; ``not_submitted``
    lists them per metric.
    """
    metrics = list(metrics or available_metrics(results[0]))
    table: dict[str, list[float | None]] = {}
    ranking: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    for metric in metrics:
        a, b = METRICS[metric].summary_path
        vals = [res["summary"][a][b] if res["summary"].get(a) and submits(res, metric)
                else None for res in results]
        table[metric] = vals
        missing[metric] = [n for n, res in zip(names, results, strict=True)
                           if not submits(res, metric)]
        arr = np.array([np.nan if v is None else v for v in vals], dtype=np.float64)
        ranking[metric] = [names[i] for i in top_k(arr, len(names))]
    return {"models": list(names), "metrics": table, "ranking": ranking,
            "not_submitted": missing}


def mcc_vs_miou(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Spearman of presence MCC with segmentation macro mIoU across models (open vocabulary),
    over the models where both are defined."""
    mcc, miou = [], []
    for res in results:
        if not (submits(res, "presence_mcc") and submits(res, "seg_macro_miou")):
            continue
        s = res["summary"]
        m = (s.get("presence") or {}).get("mcc")
        i = (s.get("seg") or {}).get("positive_macro_miou")
        if m is not None and i is not None:
            mcc.append(m)
            miou.append(i)
    rho = spearman(mcc, miou) if len(mcc) >= 2 else float("nan")
    return {"spearman": _json_float(rho), "num_models": len(mcc)}


def leaderboard_report(names: Sequence[str], results: Sequence[dict[str, Any]],
                       stability_metrics: Sequence[str] | None = None,
                       sizes: Sequence[int] = SUBSET_SIZES, n_subsets: int = 1000,
                       seed: int = 0, k: int = 5,
                       average_precision: Sequence[APRun | dict[str, Any] | None] | None
                       = None, ranks: Options | None = None, unit: str = "image",
                       uncertainty: Uncertainty | None = None) -> dict[str, Any]:
    """Ranking table, category-subset stability of each metric, and (open vocabulary) the
    MCC-versus-mIoU rank correlation, for evaluator results of one task.

    ``average_precision`` (each model's AP report, or ``None``) adds the pooled AP and
    COCO's and DOTA's per-category mAP to the ranking (:data:`AP_RANKED`); given as
    :class:`~.ap_bootstrap.APRun` (the report and its curves), each AP metric also gets its
    ranks with their uncertainty (:func:`ap_uncertainties`). ``ranks``: the
    options whose statistics' settings (``rank_resamples``, ``alpha``, ``min_count``,
    ``friedman_blocks``) give each metric its ranks with their uncertainty under
    ``uncertainty`` (:func:`~ovearth_core.analysis.rank_stats.metric_ranks`, resampling
    ``unit`` with ``seed``; issue 37), computed by ``uncertainty`` (default
    :func:`rank_uncertainties`; the leaderboard's command passes one that keeps them in the
    result cache, issue 49)."""
    if not results:
        return {"models": [], "metrics": {}, "ranking": {}, "stability": {},
                "mcc_vs_miou": None}
    out = rank_table(names, results)
    if average_precision is not None:
        add_ap_ranking(out, results, [r.report if isinstance(r, APRun) else r
                                      for r in average_precision])
    metrics = list(stability_metrics or available_metrics(results[0]))
    # Each full result's rows read once for every metric (a board entry holds its pieces).
    wanted = list(dict.fromkeys([*metrics, *(available_metrics(results[0]) if ranks else [])]))
    pieces = [query_pieces(r, wanted) for r in results]
    summed = [r if SUMS in r else {**r, SUMS: p.sums()}
              for r, p in zip(results, pieces, strict=True)]
    out["stability"] = {}
    for metric in metrics:
        # Models that do not submit the metric's modality are left out of its correlations.
        kept = [r for r in summed if submits(r, metric)]
        if len(kept) < 2:
            continue
        _, stats = category_stats(kept, metric)
        out["stability"][metric] = subset_stability(stats, metric, sizes, n_subsets, seed, k)
    out["mcc_vs_miou"] = (mcc_vs_miou(results) if results[0]["task"] == "open_vocabulary"
                          else None)
    if ranks is not None:
        out["uncertainty"] = (uncertainty or rank_uncertainties)(names, results, pieces, ranks,
                                                                  seed, unit)
        if average_precision is not None:
            out["uncertainty"].update(ap_uncertainties(out, results, pieces, average_precision,
                                                       ranks, seed, unit))
    return out


def ap_uncertainties(table: dict[str, Any], results: Sequence[dict[str, Any]],
                     pieces: Sequence[QueryPieces],
                     runs: Sequence[APRun | dict[str, Any] | None], options: Options,
                     seed: int, unit: str) -> dict[str, Any]:
    """:func:`~ovearth_core.analysis.rank_stats.ap_rank_uncertainty` of every
    :data:`AP_RANKED` metric of a :func:`rank_table` (with :func:`add_ap_ranking`) whose
    curves are resampled (:data:`~.ap_bootstrap.RESAMPLED_OPTIONAL` for the optional
    protocols), over the models given as :class:`~.ap_bootstrap.APRun` that submit its
    modality (at least two). The units are those of the additive metrics (each query's
    image, or the query, of the first result's rows), drawn with the same seed: the same
    resamples."""
    first = pieces[0]
    if unit == "image":
        unit_of = dict(zip(first.query_ids, first.image.tolist(), strict=True))
        n_units = len(first.images)
    else:
        unit_of = {q: k for k, q in enumerate(first.query_ids)}
        n_units = len(first.query_ids)
    out = {}
    for name, values in table["metrics"].items():
        if name not in AP_RANKED:
            continue
        m, key = AP_RANKED[name]
        kept = [i for i, (res, run) in enumerate(zip(results, runs, strict=True))
                if isinstance(run, APRun) and m in run.curves
                and key in resampled_keys(run.curves[m]) and m not in not_submitted(res)]
        if len(kept) < 2:
            continue
        curves = [runs[i].curves[m] for i in kept]  # type: ignore[union-attr]
        out[name] = ap_rank_uncertainty(
            [table["models"][i] for i in kept],
            np.array([np.nan if values[i] is None else values[i] for i in kept]), curves,
            key, [np.array([unit_of[q] for q in c.query_ids], dtype=np.intp) for c in curves],
            n_units, metric=name, n_resamples=options.rank_resamples, seed=seed,
            alpha=options.alpha, unit=unit, min_count=options.min_count,
            blocks=options.friedman_blocks)
    return out


def rank_uncertainties(names: Sequence[str], results: Sequence[dict[str, Any]],
                       pieces: Sequence[QueryPieces], options: Options, seed: int,
                       unit: str) -> dict[str, Any]:
    """:func:`~ovearth_core.analysis.rank_stats.metric_ranks` of every ranked metric the
    first result has, over the models that submit its modality (at least two:
    :func:`ranked_models`)."""
    out = {}
    for metric, kept in ranked_models(results).items():
        out[metric] = metric_ranks(
            [names[i] for i in kept], [pieces[i] for i in kept], metric,
            n_resamples=options.rank_resamples, seed=seed, alpha=options.alpha,
            min_count=options.min_count, unit=unit, blocks=options.friedman_blocks)
    return out


def ranked_models(results: Sequence[dict[str, Any]]) -> dict[str, list[int]]:
    """Per ranked metric of the first result, the indices of the models
    :func:`rank_uncertainties` ranks by it (those that submit its modality; metrics with
    fewer than two left out)."""
    out = {}
    for metric in available_metrics(results[0]):
        kept = [i for i, r in enumerate(results) if submits(r, metric)]
        if len(kept) >= 2:
            out[metric] = kept
    return out


def default_metric(report: dict[str, Any]) -> str | None:
    """The first ranked metric that at least one model has a value for (``None``: none)."""
    return next((m for m, values in report["metrics"].items()
                 if any(v is not None for v in values)), None)
