"""The numbers other benchmarks report, from the evaluator's per-query entries.

Added summary keys (docs/metrics.md, "Added keys"); every one is null when its denominator is zero.

* Grounding (RSVG, Zhan et al. 2022), boxes: each evaluated positive query's *top-1*
  box -- the highest score, a box without a score counting as ``+inf`` as in the
  analyses, the first box on ties (so without scores: the first box) -- against the GT
  box of highest IoU (the first on ties). ``Pr@t`` is the share of queries with
  IoU >= t; ``mean_iou`` their mean; ``cum_iou`` sum I / sum U over those pairs, a
  query without prediction adding I = 0 and U = its largest GT box's area.
* GRES (Liu et al. 2023), open-vocabulary masks: ``gres_giou`` is the mean over
  evaluated positives and all negatives of a per-query IoU, a negative scoring 1 when
  its mask is empty and 0 otherwise; ``gres_ciou`` is sum I / sum U over the same
  queries, a negative's predicted pixels adding to U.
* Class-wise IoU (land-cover benchmarks, EarthVL): ``category_cum_miou`` is the mean
  over categories of sum I / sum U of each category's evaluated queries.
* Counting: predicted box count (after the score threshold) against GT box count over
  evaluated positives; ``rmse_with_negatives`` (open vocabulary) adds every negative
  query with a GT count of 0.
* Size bins (AI-TOD, Wang et al. 2021): boxes binned by sqrt(area) in pixels,
  ``[0, 8)``, ``[8, 16)``, ``[16, 32)``, ``[32, 96)``, ``[96, inf)``, i.e. by area
  against 64, 256, 1024 and 9216. A GT box counts in its own bin (``tp`` when matched at
  the run's IoU threshold), a predicted box in its own bin (``matched_pred`` when
  matched), so ``recall`` and ``precision`` of a bin describe different boxes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import geometry
from .formulas import f1_from_pr, ratio
from .types import PR_THRESHOLDS, Sample

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# AI-TOD's bins of sqrt(area): name and lower edge in pixels (the next bin's edge is the upper).
SIZE_BINS: tuple[tuple[str, float], ...] = (
    ("very_tiny", 0.0), ("tiny", 8.0), ("small", 16.0), ("medium", 32.0), ("large", 96.0))
_AREA_EDGES = np.array([lo * lo for _, lo in SIZE_BINS])


def size_bin(area: FloatArray) -> npt.NDArray[np.intp]:
    """Index into :data:`SIZE_BINS` of each area ``(N,)`` (bins closed below, open above)."""
    return np.searchsorted(_AREA_EDGES, area, side="right") - 1


def _mean(values: FloatArray) -> float | None:
    return float(values.mean()) if values.size else None


def box_fields(sample: Sample, modality: str) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(gt, pred, scores)`` of one box modality of a sample."""
    if modality == "bbox":
        return sample.gt_boxes, sample.pred_boxes, sample.pred_box_scores
    return sample.gt_obbs, sample.pred_obbs, sample.pred_obb_scores


@dataclass(frozen=True)
class EvaluatedBoxes:
    """The boxes of the evaluated queries of one modality, flattened query by query.

    ``where`` ``(E,)``: the samples' positions; ``fields``: their ``(gt, pred, scores)``;
    ``gt_area`` / ``pred_area``: every box's area; ``gt_start`` / ``pred_start`` ``(E,)``:
    each query's first box in those arrays.
    """

    where: IntArray
    fields: list[tuple[FloatArray, FloatArray, FloatArray]]
    gt_area: FloatArray
    pred_area: FloatArray
    gt_start: IntArray
    pred_start: IntArray

    @classmethod
    def of(cls, samples: Sequence[Sample], modality: str, evaluated: Sequence[bool]
           ) -> EvaluatedBoxes:
        oriented = modality == "oriented_bbox"
        where = np.flatnonzero(np.asarray(evaluated, dtype=bool))
        fields = [box_fields(samples[i], modality) for i in where.tolist()]
        shape = (4, 2) if oriented else (4,)

        def flat(k: int) -> tuple[FloatArray, IntArray]:
            parts = [f[k] for f in fields]
            counts = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
            boxes = np.concatenate(parts) if parts else np.zeros((0, *shape))
            return geometry.areas(boxes, oriented), np.cumsum(counts) - counts

        (gt_area, gt_start), (pred_area, pred_start) = flat(0), flat(1)
        return cls(where, fields, gt_area, pred_area, gt_start, pred_start)

    @property
    def num_gt(self) -> IntArray:
        return np.diff(np.append(self.gt_start, self.gt_area.size))

    @property
    def num_pred(self) -> IntArray:
        return np.diff(np.append(self.pred_start, self.pred_area.size))


def top1_boxes(boxes: EvaluatedBoxes) -> IntArray:
    """Index of each evaluated query's top-1 box in its predictions, ``(E,)`` (-1 without
    predictions): the highest score, ``+inf`` without one, the first of equal ones."""
    n_pred = boxes.num_pred
    owner = np.repeat(np.arange(boxes.where.size), n_pred)
    scores = (np.concatenate([sc for _, _, sc in boxes.fields]) if boxes.fields
              else np.zeros(0))
    order = np.lexsort((np.arange(owner.size), -np.where(np.isnan(scores), np.inf, scores),
                        owner))
    has = np.flatnonzero(n_pred > 0)
    top = np.full(boxes.where.size, -1, dtype=np.int64)
    top[has] = order[np.searchsorted(owner[order], has)] - boxes.pred_start[has]
    return top


def top1_overlaps(boxes: EvaluatedBoxes, n: int, columns: Sequence[FloatArray | None],
                  floor: float, oriented: bool) -> tuple[FloatArray, FloatArray, FloatArray]:
    """IoU, intersection and union ``(n,)`` of each sample's top-1 box and its best GT box.

    ``columns[k]``: the ``(G,)`` IoUs of evaluated query ``k``'s top-1 box
    (:func:`top1_boxes`) with its GT boxes, a column of the evaluation's IoU matrix
    (``None`` without predictions), exact wherever the IoU can reach ``floor``
    (:func:`~ovearth_core.geometry.iou_matrices`). Where the top-1 box's best entry
    reaches ``floor`` it is the best GT box; otherwise
    :func:`~ovearth_core.geometry.best_matches` finds it. ``nan`` IoU (and zero areas)
    where the sample is not evaluated; IoU 0, I = 0 and U = the largest GT box area for an
    evaluated sample without predictions.
    """
    iou, inter, union = np.full(n, np.nan), np.zeros(n), np.zeros(n)
    where, fields = boxes.where, boxes.fields
    if where.size == 0:
        return iou, inter, union
    empty = boxes.num_pred == 0
    iou[where[empty]] = 0.0
    union[where[empty]] = np.maximum.reduceat(boxes.gt_area, boxes.gt_start)[empty]
    has = np.flatnonzero(~empty)
    top = top1_boxes(boxes)
    best = np.zeros(where.size, dtype=np.int64)
    value = np.zeros(where.size)
    unknown = []
    for k in has.tolist():
        column = columns[k]
        g = int(np.argmax(column))
        if column[g] >= floor or not oriented:
            best[k], value[k] = g, column[g]
        else:
            unknown.append(k)
    if unknown:
        found, found_iou = geometry.best_matches(
            [fields[k][0] for k in unknown],
            np.stack([fields[k][1][top[k]] for k in unknown]), oriented)
        best[unknown], value[unknown] = found, found_iou
    at = where[has]
    iou[at] = value[has]
    # I / (A + B - I) = IoU, so U = (A + B) / (1 + IoU) and I = IoU * U.
    union[at] = (boxes.gt_area[boxes.gt_start[has] + best[has]]
                 + boxes.pred_area[boxes.pred_start[has] + top[has]]) / (1 + iou[at])
    inter[at] = iou[at] * union[at]
    return iou, inter, union


def grounding_summary(iou: FloatArray, inter: FloatArray, union: FloatArray,
                      num_gt: npt.NDArray[np.int64]) -> dict[str, Any]:
    """RSVG-style summary of evaluated queries' top-1 overlaps (arrays ``(E,)``)."""
    out: dict[str, Any] = {"num_evaluated": int(iou.size),
                           "num_single_target": int(np.count_nonzero(num_gt == 1))}
    for t in PR_THRESHOLDS:
        out[f"Pr@{t}"] = _mean((iou >= t).astype(float))
    out["mean_iou"] = _mean(iou)
    out["cum_iou"] = ratio(float(inter.sum()), float(union.sum()))
    return out


def counting_summary(num_gt: npt.NDArray[np.int64], num_pred: npt.NDArray[np.int64],
                     negative_preds: npt.NDArray[np.int64] | None) -> dict[str, Any]:
    """Count errors of evaluated queries ``(E,)``; with ``negative_preds`` (open
    vocabulary: predicted counts of the negative queries) ``rmse_with_negatives`` too."""
    err = (num_pred - num_gt).astype(float)
    out: dict[str, Any] = {
        "num_evaluated": int(err.size),
        "mae": _mean(np.abs(err)),
        "rmse": None if err.size == 0 else float(np.sqrt(np.mean(err ** 2))),
        "mean_gt": _mean(num_gt.astype(float)),
        "mean_pred": _mean(num_pred.astype(float)),
    }
    if negative_preds is not None:
        both = np.concatenate([err, negative_preds.astype(float)])
        out["rmse_with_negatives"] = (None if both.size == 0
                                      else float(np.sqrt(np.mean(both ** 2))))
    return out


def size_summary(boxes: EvaluatedBoxes, entries: Sequence[dict[str, Any]]
                 ) -> dict[str, dict[str, Any]]:
    """Recall, precision and F1 per AI-TOD size bin over evaluated queries (``entries``:
    every sample's, matched pairs at the run's threshold)."""
    gt_hit = np.zeros(boxes.gt_area.size, dtype=bool)
    pred_hit = np.zeros(boxes.pred_area.size, dtype=bool)
    pairs = [(g0 + g, p0 + p) for i, g0, p0 in zip(boxes.where.tolist(), boxes.gt_start.tolist(),
                                                   boxes.pred_start.tolist(), strict=True)
             for g, p, _ in entries[i]["matches"]]
    if pairs:
        g, p = np.array(pairs).T
        gt_hit[g] = pred_hit[p] = True
    k = len(SIZE_BINS)
    (n_gt, tp), (n_pred, matched) = (
        (np.bincount(which, minlength=k), np.bincount(which[hit], minlength=k))
        for which, hit in ((size_bin(boxes.gt_area), gt_hit),
                           (size_bin(boxes.pred_area), pred_hit)))
    out = {}
    for j, (name, _) in enumerate(SIZE_BINS):
        recall = ratio(int(tp[j]), int(n_gt[j]))
        precision = ratio(int(matched[j]), int(n_pred[j]))
        out[name] = {"num_gt": int(n_gt[j]), "tp": int(tp[j]), "fn": int(n_gt[j] - tp[j]),
                     "recall": recall, "num_pred": int(n_pred[j]),
                     "matched_pred": int(matched[j]), "precision": precision,
                     "f1": f1_from_pr(precision, recall)}
    return out


def box_field_metrics(samples: Sequence[Sample], entries: Sequence[dict[str, Any]],
                      modality: str, open_vocab: bool, boxes: EvaluatedBoxes,
                      columns: Sequence[FloatArray | None], floor: float
                      ) -> tuple[FloatArray, dict[str, Any]]:
    """Per-sample top-1 IoU (``nan`` where not evaluated) and the ``grounding``,
    ``counting`` and ``by_size`` summaries of one box modality (``boxes``: the evaluated
    queries' boxes; ``columns`` and ``floor``: see :func:`top1_overlaps`)."""
    iou, inter, union = top1_overlaps(boxes, len(samples), columns, floor,
                                      modality == "oriented_bbox")
    where = boxes.where
    num_gt, num_pred = boxes.num_gt, boxes.num_pred
    negatives = (np.array([e["num_pred"] for s, e in zip(samples, entries, strict=True)
                           if s.negative], dtype=np.int64) if open_vocab else None)
    return iou, {
        "grounding": grounding_summary(iou[where], inter[where], union[where], num_gt),
        "counting": counting_summary(num_gt, num_pred, negatives),
        "by_size": size_summary(boxes, entries),
    }


def seg_field_metrics(samples: Sequence[Sample], entries: Sequence[dict[str, Any]],
                      open_vocab: bool) -> dict[str, Any]:
    """``category_cum_miou`` and, for open vocabulary, ``gres_giou`` and ``gres_ciou``."""
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s, e in zip(samples, entries, strict=True):
        if e["evaluated"]:
            sums[s.category][0] += e["intersection"]
            sums[s.category][1] += e["union"]
    out: dict[str, Any] = {}
    if open_vocab:
        scores, inter, union = [], 0, 0
        for s, e in zip(samples, entries, strict=True):
            if s.negative:
                scores.append(float(e["pred_area"] == 0))
                union += e["pred_area"]
            elif e["evaluated"]:
                scores.append(e["iou"])
                inter += e["intersection"]
                union += e["union"]
        out["gres_giou"] = _mean(np.array(scores, dtype=float))
        out["gres_ciou"] = ratio(inter, union)
    out["category_cum_miou"] = _mean(np.array([i / u for i, u in sums.values()]))
    return out


def cum_iou(entries: Sequence[dict[str, Any]]) -> float | None:
    """sum I / sum U of the evaluated segmentation entries among ``entries``."""
    rows = [e for e in entries if e["evaluated"]]
    return ratio(sum(e["intersection"] for e in rows), sum(e["union"] for e in rows))
