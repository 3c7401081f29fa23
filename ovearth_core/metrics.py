"""Per-query metric entries and their summaries (the spec's "Metrics" section).

Conventions the spec leaves open (also in README's metric section):

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
from typing import Any

import numpy as np
import numpy.typing as npt

from . import masks
from .matching import match
from .presence import ratio
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
    if evaluated and n_pred:
        gi, pi = match(iou, iou_threshold)
        pair_iou = iou[gi, pi]
        tp_at = _tp_at_thresholds(iou)
        matches = [[int(g), int(p), float(v)] for g, p, v in zip(gi, pi, pair_iou, strict=True)]
    else:
        pair_iou = np.zeros(0)
        tp_at = [0] * len(IOU_THRESHOLDS)
        matches = []
    tp = len(matches)
    entry: dict[str, Any] = {
        "num_gt": n_gt, "num_pred": n_pred, "tp": tp, "fp": n_pred - tp, "fn": n_gt - tp,
        "precision": None, "recall": None, "f1": None,
        "mean_matched_iou": float(pair_iou.mean()) if tp else None,
        "gt_present": n_gt > 0, "pred_present": n_pred > 0, "evaluated": evaluated,
        "matches": matches, "tp_at": tp_at,
    }
    if evaluated:
        entry["precision"] = tp / n_pred if n_pred else 0.0
        entry["recall"] = tp / n_gt
        entry["f1"] = 2 * tp / (n_pred + n_gt)
    return entry


def det_entries(ious: Sequence[np.ndarray], negatives: Sequence[bool],
                iou_threshold: float) -> list[dict[str, Any]]:
    """:func:`det_entry` of many queries at once (same entries, same order).

    At each threshold, a query whose pairs at or above it share no box needs
    no assignment: all those pairs match. This is decided for all queries at
    once; only the (query, threshold) cases with a shared box are matched one
    by one (:func:`~ovearth_core.matching.match`), reusing a matching found at
    a lower threshold while all its pairs stay valid (the maximum size cannot
    grow with the threshold).
    """
    n = len(ious)
    n_gt = np.fromiter((m.shape[0] for m in ious), dtype=np.int64, count=n)
    n_pred = np.fromiter((m.shape[1] for m in ious), dtype=np.int64, count=n)
    negative = np.fromiter(negatives, dtype=bool, count=n)
    active = ~negative & (n_gt > 0) & (n_pred > 0)  # evaluated, with predictions
    sizes = np.where(active, n_gt * n_pred, 0)
    flat = (np.concatenate([m.ravel() for m, a in zip(ious, active.tolist(), strict=True) if a])
            if sizes.sum() else np.zeros(0))
    owner = np.repeat(np.arange(n), sizes)
    local = np.arange(flat.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    cand = np.flatnonzero(flat >= min(iou_threshold, IOU_THRESHOLDS[0]))
    values, c_owner = flat[cand], owner[cand]
    c_gt = (np.cumsum(n_gt) - n_gt)[c_owner] + local[cand] // n_pred[c_owner]
    c_pred = (np.cumsum(n_pred) - n_pred)[c_owner] + local[cand] % n_pred[c_owner]

    def level(t: float) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Pairs at or above ``t``, and the queries where two of them share a box."""
        at = values >= t
        shared = np.zeros(n, dtype=bool)
        for box in (c_gt[at], c_pred[at]):
            if box.size:
                shared[c_owner[at][np.bincount(box)[box] > 1]] = True
        return at, shared

    tp_at = np.zeros((n, len(IOU_THRESHOLDS)), dtype=np.int64)
    needs_match = np.zeros((n, len(IOU_THRESHOLDS)), dtype=bool)
    for k, t in enumerate(IOU_THRESHOLDS):
        at, needs_match[:, k] = level(t)
        tp_at[:, k] = np.bincount(c_owner[at], minlength=n)
    at, run_needs_match = level(iou_threshold)
    run_pairs = np.flatnonzero(at)
    bounds = np.searchsorted(c_owner[run_pairs], np.arange(n + 1)).tolist()
    pair_g = (local[cand] // n_pred[c_owner]).tolist()
    pair_p = (local[cand] % n_pred[c_owner]).tolist()
    pair_iou = values.tolist()
    fresh: dict[int, dict[float, tuple[np.ndarray, np.ndarray]]] = {}
    for i in np.flatnonzero(needs_match.any(axis=1)).tolist():
        tp_at[i] = _tp_at_levels(ious[i], tp_at[i], needs_match[i], fresh.setdefault(i, {}))
    tp_lists = tp_at.tolist()
    out = []
    for i, iou in enumerate(ious):
        if not active[i]:
            out.append(det_entry(iou, bool(negative[i]), iou_threshold))
            continue
        if run_needs_match[i]:
            known = fresh.get(i, {}).get(iou_threshold)
            gi, pi = known if known is not None else match(iou, iou_threshold)
            matched = iou[gi, pi]
            matches = [[int(g), int(p), float(v)] for g, p, v in zip(gi, pi, matched, strict=True)]
        else:
            rows = run_pairs[bounds[i]:bounds[i + 1]].tolist()
            matches = [[pair_g[r], pair_p[r], pair_iou[r]] for r in rows]
            matched = values[rows] if len(rows) > 1 else None
        tp, g, p = len(matches), int(n_gt[i]), int(n_pred[i])
        # numpy's own mean (its summation order), as det_entry has it
        mean = (None if tp == 0 else matches[0][2] if tp == 1 else float(matched.mean()))
        out.append({
            "num_gt": g, "num_pred": p, "tp": tp, "fp": p - tp, "fn": g - tp,
            "precision": tp / p, "recall": tp / g, "f1": 2 * tp / (p + g),
            "mean_matched_iou": mean,
            "gt_present": True, "pred_present": True, "evaluated": True,
            "matches": matches, "tp_at": tp_lists[i],
        })
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
    return ratio(tp, tp + fp), ratio(tp, tp + fn), ratio(2 * tp, 2 * tp + fp + fn)


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
