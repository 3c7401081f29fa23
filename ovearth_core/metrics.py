"""Per-query metric entries and their summaries (the spec's "Metrics" section).

Conventions the spec leaves open (also in docs/metrics.md):

* A positive query is *evaluated* for a modality when it has usable ground
  truth there: a non-empty GT mask for segmentation, at least one GT box for
  bbox / oriented_bbox. Other queries get an entry with ``evaluated: false``
  and null quality metrics, and are left out of the modality's summary.
* An evaluated query with an empty prediction is a failure: pixel precision,
  Dice and IoU 0; detection precision, recall and F1 0.
* Negative queries never enter quality summaries; their entries carry the
  prediction size (``pred_area`` / ``num_pred``) and null quality metrics.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import masks
from .formulas import f1_score, ratio
from .matching import match
from .types import IOU_THRESHOLDS, PR_THRESHOLDS, Sample

SEG_KEY_METRICS = ("positive_macro_precision", "positive_macro_recall", "positive_macro_miou",
                   "positive_micro_miou")
DET_KEY_METRICS = ("positive_micro_precision", "positive_micro_recall", "positive_micro_f1",
                   "positive_mean_micro_f1@[0.5:0.95]")


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def seg_entry(sample: Sample) -> dict[str, Any]:
    """Per-query segmentation entry (spec keys plus ``evaluated``)."""
    gt_area = masks.area(sample.gt_mask)
    pred_area = masks.area(sample.pred_mask)
    inter = masks.intersection_area(sample.gt_mask, sample.pred_mask)
    union = gt_area + pred_area - inter
    evaluated = not sample.negative and gt_area > 0
    if evaluated:
        iou = inter / union
        dice = 2 * inter / (gt_area + pred_area)
        precision = inter / pred_area if pred_area else 0.0
        recall = inter / gt_area
    else:
        iou = dice = precision = recall = None
    return {
        "gt_area": gt_area, "pred_area": pred_area, "intersection": inter, "union": union,
        "iou": iou, "dice": dice, "precision": precision, "recall": recall, "f1": dice,
        "gt_present": gt_area > 0, "pred_present": pred_area > 0, "evaluated": evaluated,
    }


def det_entry(iou: np.ndarray, negative: bool, iou_threshold: float) -> dict[str, Any]:
    """Per-query detection entry from the ``(G, P)`` IoU matrix of its boxes.

    Beyond the spec's keys: ``evaluated``, ``matches`` (``[gt_index, pred_index,
    iou]`` at the run's threshold) and ``tp_at`` (matches at 0.50, 0.55, ..., 0.95).
    """
    n_gt, n_pred = iou.shape
    evaluated = not negative and n_gt > 0
    if not (evaluated and n_pred):
        return _entry(n_gt, n_pred, evaluated, [], None, [0] * len(IOU_THRESHOLDS))
    gi, pi = match(iou, iou_threshold)
    return _matched_entry(iou, gi, pi, _tp_at_thresholds(iou))


def _matched_entry(iou: np.ndarray, gi: np.ndarray, pi: np.ndarray,
                   tp_at: list[int]) -> dict[str, Any]:
    """Entry of an evaluated query with predictions, from its matched pairs ``(gi, pi)``."""
    pair_iou = iou[gi, pi]
    matches = [[g, p, v] for g, p, v in zip(gi.tolist(), pi.tolist(), pair_iou.tolist(),
                                            strict=True)]
    # The sum is numpy's (pairwise), divided as numpy's mean divides: the same float.
    mean = float(pair_iou.sum()) / len(matches) if matches else None
    return _entry(iou.shape[0], iou.shape[1], True, matches, mean, tp_at)


def _entry(n_gt: int, n_pred: int, evaluated: bool, matches: list[list[Any]],
           mean_matched_iou: float | None, tp_at: list[int]) -> dict[str, Any]:
    """The detection entry (every key, in output order)."""
    tp = len(matches)
    return {
        "num_gt": n_gt, "num_pred": n_pred, "tp": tp, "fp": n_pred - tp, "fn": n_gt - tp,
        "precision": (tp / n_pred if n_pred else 0.0) if evaluated else None,
        "recall": tp / n_gt if evaluated else None,
        "f1": f1_score(tp, n_pred - tp, n_gt - tp) if evaluated else None,
        "mean_matched_iou": mean_matched_iou,
        "gt_present": n_gt > 0, "pred_present": n_pred > 0, "evaluated": evaluated,
        "matches": matches, "tp_at": tp_at,
    }


@dataclass(frozen=True)
class _Pairs:
    """The candidate (GT, prediction) pairs of many queries, IoU at or above a floor.

    All arrays ``(C,)``: the pair's IoU, query, GT and prediction index within the query,
    and GT and prediction ids unique across queries.
    """

    iou: npt.NDArray[np.float64]
    query: npt.NDArray[np.intp]
    gt: npt.NDArray[np.intp]
    pred: npt.NDArray[np.intp]
    gt_id: npt.NDArray[np.intp]
    pred_id: npt.NDArray[np.intp]

    @classmethod
    def of(cls, ious: Sequence[np.ndarray], use: npt.NDArray[np.bool_],
           floor: float) -> _Pairs:
        """Pairs of the queries where ``use`` is set, with IoU >= ``floor``."""
        n_gt = np.fromiter((m.shape[0] for m in ious), dtype=np.intp, count=len(ious))
        n_pred = np.fromiter((m.shape[1] for m in ious), dtype=np.intp, count=len(ious))
        sizes = np.where(use, n_gt * n_pred, 0)
        flat = (np.concatenate([m.ravel() for m, u in zip(ious, use.tolist(), strict=True)
                                if u]) if sizes.sum() else np.zeros(0))
        keep = np.flatnonzero(flat >= floor)
        query = np.repeat(np.arange(len(ious)), sizes)[keep]
        local = keep - (np.cumsum(sizes) - sizes)[query]
        gt, pred = local // n_pred[query], local % n_pred[query]
        return cls(flat[keep], query, gt, pred, (np.cumsum(n_gt) - n_gt)[query] + gt,
                   (np.cumsum(n_pred) - n_pred)[query] + pred)

    def at(self, t: float, n: int) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Pairs at or above ``t``, and the ``n`` queries where two of them share a box."""
        at = self.iou >= t
        shared = np.zeros(n, dtype=bool)
        for box in (self.gt_id[at], self.pred_id[at]):
            if box.size:
                shared[self.query[at][np.bincount(box)[box] > 1]] = True
        return at, shared

    def sizes_at(self, t: float, n: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """The maximum matching size of each of the ``n`` queries at threshold ``t``, and the
        queries where it needs an assignment (their size is left 0).

        With no box shared, every pair matches; with no prediction shared, each GT box
        with a pair matches one of its predictions (the GT boxes do not compete), so the
        size is the number of such GT boxes; likewise with no GT box shared. Only a query
        where a GT box and a prediction are both shared needs an assignment.
        """
        at = self.iou >= t
        query = self.query[at]
        shared, distinct = [], []
        for box in (self.gt_id[at], self.pred_id[at]):
            is_shared = np.zeros(n, dtype=bool)
            count = np.zeros(n, dtype=np.int64)
            if box.size:
                is_shared[query[np.bincount(box)[box] > 1]] = True
                first = np.unique(box, return_index=True)[1]
                count = np.bincount(query[first], minlength=n)
            shared.append(is_shared)
            distinct.append(count)
        needs = shared[0] & shared[1]
        sizes = np.where(shared[1], distinct[1], distinct[0])  # no GT box / no prediction shared
        sizes[needs] = 0
        return sizes, needs


def det_entries(ious: Sequence[np.ndarray], negatives: Sequence[bool],
                iou_threshold: float) -> list[dict[str, Any]]:
    """:func:`det_entry` of many queries at once (same entries, same order).

    At each threshold, the matching size of a query where no GT box or no
    prediction is shared between its pairs at or above it needs no assignment
    (:meth:`_Pairs.sizes_at`). This is decided for all queries at once; only
    the (query, threshold) cases where both are shared are matched one by one
    (:func:`~ovearth_core.matching.match`), reusing a matching found at a lower
    threshold while all its pairs stay valid (the maximum size cannot grow with
    the threshold). At the run's threshold, a query with a shared box is
    matched by :func:`~ovearth_core.matching.match` (its pairs are needed).
    """
    n = len(ious)
    negative = np.fromiter(negatives, dtype=bool, count=n)
    active = np.array([not neg and min(m.shape) > 0  # evaluated, with predictions
                       for m, neg in zip(ious, negative.tolist(), strict=True)], dtype=bool)
    pairs = _Pairs.of(ious, active, min(iou_threshold, IOU_THRESHOLDS[0]))
    tp_at = np.zeros((n, len(IOU_THRESHOLDS)), dtype=np.int64)
    needs_match = np.zeros((n, len(IOU_THRESHOLDS)), dtype=bool)
    for k, t in enumerate(IOU_THRESHOLDS):
        tp_at[:, k], needs_match[:, k] = pairs.sizes_at(t, n)
    fresh: dict[int, dict[float, tuple[np.ndarray, np.ndarray]]] = {}
    for i in np.flatnonzero(needs_match.any(axis=1)).tolist():
        tp_at[i] = _tp_at_levels(ious[i], tp_at[i], needs_match[i], fresh.setdefault(i, {}))
    at, run_needs_match = pairs.at(iou_threshold, n)
    run = np.flatnonzero(at)
    bounds = np.searchsorted(pairs.query[run], np.arange(n + 1)).tolist()
    tp_lists = tp_at.tolist()
    out = []
    for i, iou in enumerate(ious):
        if not active[i]:
            out.append(det_entry(iou, bool(negative[i]), iou_threshold))
            continue
        if run_needs_match[i]:
            known = fresh.get(i, {}).get(iou_threshold)
            gi, pi = known if known is not None else match(iou, iou_threshold)
        else:  # every pair at or above the threshold matches
            rows = run[bounds[i]:bounds[i + 1]]
            gi, pi = pairs.gt[rows], pairs.pred[rows]
        out.append(_matched_entry(iou, gi, pi, tp_lists[i]))
    return out


def _tp_at_levels(iou: np.ndarray, counts: np.ndarray, needs_match: npt.NDArray[np.bool_],
                  fresh: dict[float, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Complete ``counts`` (pairs per threshold) with matching sizes where boxes are shared.

    Matchings computed here (not reused from a lower threshold) go into ``fresh`` by
    threshold: they are ``match(iou, t)`` exactly.
    """
    counts = counts.copy()
    gi = pi = None
    for k in np.flatnonzero(needs_match).tolist():
        t = IOU_THRESHOLDS[k]
        if gi is None or not (gi.size == 0 or bool((iou[gi, pi] >= t).all())):
            gi, pi = fresh[t] = match(iou, t)
        counts[k] = gi.size
    return counts


def _tp_at_thresholds(iou: np.ndarray) -> list[int]:
    """Maximum matching size at each of IOU_THRESHOLDS.

    The size cannot grow with the threshold, so a matching found at a lower
    threshold whose pairs all stay valid is still maximum; only re-match when
    one of its pairs drops out.
    """
    if min(iou.shape) == 1:
        best = float(iou.max())  # one GT or one prediction: at most one match
        return [int(best >= t) for t in IOU_THRESHOLDS]
    valid = iou >= IOU_THRESHOLDS[0]
    if valid.sum(axis=0).max() <= 1 and valid.sum(axis=1).max() <= 1:
        # No two candidate pairs share a box (usual at IoU >= 0.5): every valid pair
        # matches, at this threshold and every higher one.
        values = iou[valid]
        return [int(np.count_nonzero(values >= t)) for t in IOU_THRESHOLDS]
    counts: list[int] = []
    gi = pi = None
    for t in IOU_THRESHOLDS:
        if gi is not None and (gi.size == 0 or bool((iou[gi, pi] >= t).all())):
            counts.append(int(gi.size))
            continue
        gi, pi = match(iou, t)
        counts.append(int(gi.size))
    return counts


def seg_summary(samples: Sequence[Sample], entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Segmentation summary over evaluated positive queries, with key_metrics."""
    rows = [(s, e) for s, e in zip(samples, entries, strict=True) if e["evaluated"]]
    ious = [e["iou"] for _, e in rows]
    inter = sum(e["intersection"] for _, e in rows)
    union = sum(e["union"] for _, e in rows)
    out: dict[str, Any] = {
        "num_samples_evaluated": len(rows),
        "num_positive_evaluated": len(rows),
        "positive_micro_miou": ratio(inter, union),
        "positive_macro_miou": _mean(ious),
        "positive_macro_dice": _mean([e["dice"] for _, e in rows]),
        "positive_macro_precision": _mean([e["precision"] for _, e in rows]),
        "positive_macro_recall": _mean([e["recall"] for _, e in rows]),
    }
    for t in PR_THRESHOLDS:
        out[f"Pr@{t}"] = _mean([float(v >= t) for v in ious])
    out["annotation_macro_miou"] = _grouped_mean([(s.ann_id, e["iou"]) for s, e in rows])
    out["category_macro_miou"] = _grouped_mean([(s.category, e["iou"]) for s, e in rows])
    out["key_metrics"] = {k: out[k] for k in SEG_KEY_METRICS}
    return out


def _grouped_mean(pairs: Sequence[tuple[str, float]]) -> float | None:
    groups: dict[str, list[float]] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    return _mean([float(np.mean(v)) for v in groups.values()])


def micro_prf(tp: int, fp: int, fn: int) -> tuple[float | None, float | None, float | None]:
    """Micro precision, recall and F1 from summed counts (null on zero denominators)."""
    return ratio(tp, tp + fp), ratio(tp, tp + fn), f1_score(tp, fp, fn)


def det_summary(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Detection summary over evaluated positive queries, with key_metrics."""
    rows = [e for e in entries if e["evaluated"]]
    tp = sum(e["tp"] for e in rows)
    n_pred = sum(e["num_pred"] for e in rows)
    n_gt = sum(e["num_gt"] for e in rows)
    precision, recall, f1 = micro_prf(tp, n_pred - tp, n_gt - tp)
    f1_at = {}
    for i, t in enumerate(IOU_THRESHOLDS):
        tp_t = sum(e["tp_at"][i] for e in rows)
        f1_at[f"{t:.2f}"] = micro_prf(tp_t, n_pred - tp_t, n_gt - tp_t)[2]
    f1_values = [v for v in f1_at.values() if v is not None]
    matched = [m[2] for e in rows for m in e["matches"]]
    out: dict[str, Any] = {
        "num_samples_evaluated": len(rows),
        "num_positive_evaluated": len(rows),
        "tp": tp, "fp": n_pred - tp, "fn": n_gt - tp,
        "positive_micro_precision": precision,
        "positive_micro_recall": recall,
        "positive_micro_f1": f1,
        "positive_macro_f1": _mean([e["f1"] for e in rows]),
        "positive_macro_matched_iou": _mean([e["mean_matched_iou"] for e in rows
                                             if e["mean_matched_iou"] is not None]),
        "positive_mean_micro_f1@[0.5:0.95]": (float(np.mean(f1_values))
                                              if len(f1_values) == len(f1_at) else None),
        "positive_micro_matched_iou": _mean(matched),
        "positive_micro_f1_by_iou": f1_at,
    }
    out["key_metrics"] = {k: out[k] for k in DET_KEY_METRICS}
    return out
