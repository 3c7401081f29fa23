"""Confidence sweep: box and presence metrics as functions of the score threshold.

For every threshold ``T`` the sweep gives what the fixed-threshold evaluator reports after
loading the submission with ``score_threshold=T`` (boxes with ``score >= T`` kept, masks
untouched): micro precision / recall / F1 and mean micro F1@[0.5:0.95] of axis-aligned and
oriented boxes over evaluated positive queries, and presence precision / recall / F1 / MCC
for open vocabulary.

The samples must be loaded *without* a score threshold. Conventions:

* A box without a score (``nan``) is treated as score ``+inf``: it is kept at every
  threshold. (The evaluator itself refuses a score threshold when a box has no score; the
  sweep instead reports how many such boxes there are.)
* Default thresholds are the distinct finite box scores of the enabled box modalities,
  ascending; when there are more than ``max_points`` of them, ``max_points`` of them evenly
  spaced by rank (the lowest and highest score included). Every threshold is then an actual
  score, so the lowest one keeps every box.
* Undefined values (zero denominators; the evaluator's ``null``) are ``nan`` in the arrays
  and ``None`` in :func:`sweep_to_dict`.
* Best thresholds maximise F1 (boxes) or MCC (presence); ties go to the highest threshold
  (the fewest boxes).

Cost: one IoU matrix per evaluated query and modality; the number of matched pairs after
each score level of a query is obtained incrementally (one augmenting-path search per
predicted box, Berge's theorem), and the per-query step functions are summed with one sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import geometry, masks
from ..field_metrics import box_fields
from ..formulas import f1_array, f1_from_pr_array, mcc_array, ratio_array
from ..types import IOU_THRESHOLDS, Sample

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BOX_MODALITIES = ("bbox", "oriented_bbox")
COCO_F1_KEY = "positive_mean_micro_f1@[0.5:0.95]"


@dataclass(frozen=True)
class DetectionSweep:
    """Micro detection counts and metrics at each threshold (arrays of shape ``(M,)``;
    ``tp_at`` is ``(M, 10)`` for IoU 0.50, 0.55, ..., 0.95)."""

    tp: IntArray
    fp: IntArray
    fn: IntArray
    tp_at: IntArray
    precision: FloatArray
    recall: FloatArray
    f1: FloatArray
    mean_f1: FloatArray
    num_evaluated: int


@dataclass(frozen=True)
class PresenceSweep:
    """Presence 2x2 counts and metrics at each threshold (arrays of shape ``(M,)``)."""

    tp: IntArray
    fp: IntArray
    tn: IntArray
    fn: IntArray
    precision: FloatArray
    recall: FloatArray
    f1: FloatArray
    mcc: FloatArray


@dataclass(frozen=True)
class ScoreSweep:
    thresholds: FloatArray
    iou_threshold: float
    detection: dict[str, DetectionSweep]
    presence: PresenceSweep | None
    num_unscored: dict[str, int]


def score_key(scores: FloatArray) -> FloatArray:
    """Scores with ``nan`` (no score) replaced by ``+inf`` (always kept)."""
    return np.where(np.isnan(scores), np.inf, scores)


def iou_matrix(gt: FloatArray, pred: FloatArray, modality: str) -> FloatArray:
    if modality == "bbox":
        return geometry.box_iou_matrix(gt, pred)
    return geometry.obb_iou_matrix(gt, pred)


def prefix_match_counts(valid: npt.NDArray[np.bool_]) -> IntArray:
    """Maximum matching size of the bipartite graph ``valid`` ``(G, P)`` restricted to its
    first ``j + 1`` columns, for every ``j`` (shape ``(P,)``).

    Adding one column raises the maximum by at most one, exactly when an augmenting path
    starts at the new column, so one search per column suffices.
    """
    n_gt, n_pred = valid.shape
    out = np.zeros(n_pred, dtype=np.int64)
    if n_gt == 0 or n_pred == 0 or not valid.any():
        return out
    if n_gt == 1:
        return np.minimum(np.cumsum(valid[0]), 1).astype(np.int64)
    adjacency = [np.flatnonzero(valid[:, j]).tolist() for j in range(n_pred)]
    owner = [-1] * n_gt

    def augment(col: int, seen: list[bool]) -> bool:
        for g in adjacency[col]:
            if not seen[g]:
                seen[g] = True
                if owner[g] < 0 or augment(owner[g], seen):
                    owner[g] = col
                    return True
        return False

    size = 0
    for j in range(n_pred):
        if adjacency[j] and augment(j, [False] * n_gt):
            size += 1
        out[j] = size
    return out


def default_thresholds(samples: Sequence[Sample], modalities: Sequence[str],
                       max_points: int | None = 101) -> FloatArray:
    """Distinct finite box scores (ascending), thinned by rank to ``max_points``."""
    parts = [box_fields(s, m)[2] for s in samples for m in modalities if m in BOX_MODALITIES]
    scores = np.concatenate(parts) if parts else np.zeros(0)
    unique = np.unique(scores[np.isfinite(scores)])
    if max_points is not None and unique.size > max_points:
        idx = np.unique(np.round(np.linspace(0, unique.size - 1, max_points)).astype(np.int64))
        unique = unique[idx]
    return unique


def _step_sum(levels: FloatArray, deltas: npt.NDArray[np.int64], base: npt.NDArray[np.int64],
              thresholds: FloatArray) -> IntArray:
    """``base + sum(deltas[e] for events e with levels[e] >= T)`` for each threshold ``T``."""
    order = np.argsort(levels, kind="stable")
    lv = levels[order]
    suffix = np.zeros((lv.size + 1,) + deltas.shape[1:], dtype=np.int64)
    suffix[:-1] = np.cumsum(deltas[order][::-1], axis=0)[::-1]
    return base + suffix[np.searchsorted(lv, thresholds, side="left")]


def detection_sweep(samples: Sequence[Sample], modality: str, iou_threshold: float,
                    thresholds: FloatArray) -> DetectionSweep:
    """Micro detection metrics of one box modality at each threshold."""
    ious = (iou_threshold, *IOU_THRESHOLDS)
    levels: list[FloatArray] = []
    d_tp: list[IntArray] = []
    d_pred: list[IntArray] = []
    base_tp = np.zeros(len(ious), dtype=np.int64)
    base_pred = 0
    evaluated = [box_fields(s, modality) for s in samples
                 if not s.negative and len(box_fields(s, modality)[0])]
    n_eval, n_gt = len(evaluated), sum(len(gt) for gt, _, _ in evaluated)
    ranked = []  # (gt, predictions best first, their score keys)
    for gt, pred, scores in evaluated:
        if len(pred):
            key = score_key(scores)
            order = np.argsort(-key, kind="stable")
            ranked.append((gt, pred[order], key[order]))
    # Exact where it matters: IoUs below every threshold in use compare alike as 0.
    matrices = geometry.iter_iou_matrices([gt for gt, _, _ in ranked],
                                          [p for _, p, _ in ranked],
                                          oriented=modality == "oriented_bbox", min_iou=min(ious))
    for (_, _, key), iou in zip(ranked, matrices, strict=True):
        prefix = np.stack([prefix_match_counts(iou >= t) for t in ious], axis=1)  # (P, K)
        # Last position of each run of equal scores: the kept set is a prefix ending there.
        last = np.flatnonzero(np.append(key[1:] != key[:-1], True))
        finite = np.isfinite(key[last])
        counts = np.vstack([np.zeros((1, len(ious)), dtype=np.int64), prefix[last]])
        n_kept = np.append(0, last + 1)
        step_tp = np.diff(counts, axis=0)
        step_pred = np.diff(n_kept)
        base_tp += step_tp[~finite].sum(axis=0)
        base_pred += int(step_pred[~finite].sum())
        levels.append(key[last][finite])
        d_tp.append(step_tp[finite])
        d_pred.append(step_pred[finite])
    lv = np.concatenate(levels) if levels else np.zeros(0)
    tp_all = _step_sum(lv, np.vstack(d_tp) if d_tp else np.zeros((0, len(ious)), np.int64),
                       base_tp, thresholds)
    n_pred = _step_sum(lv, np.concatenate(d_pred) if d_pred else np.zeros(0, np.int64),
                       np.int64(base_pred), thresholds)
    tp, tp_at = tp_all[:, 0], tp_all[:, 1:]
    fp, fn = n_pred - tp, n_gt - tp
    precision, recall = ratio_array(tp, tp + fp), ratio_array(tp, tp + fn)
    f1 = f1_array(tp, fp, fn)
    f1_at = f1_array(tp_at, n_pred[:, None] - tp_at, n_gt - tp_at)
    mean_f1 = f1_at.mean(axis=1) if len(IOU_THRESHOLDS) else np.full(len(tp), np.nan)
    return DetectionSweep(tp=tp, fp=fp, fn=fn, tp_at=tp_at, precision=precision, recall=recall,
                          f1=f1, mean_f1=mean_f1, num_evaluated=n_eval)


def presence_key(sample: Sample, modalities: Sequence[str]) -> float:
    """Highest threshold at which the query still has a non-empty prediction: ``+inf`` with a
    mask or an unscored box, ``-inf`` with no prediction at all."""
    if "segmentation" in modalities and masks.area(sample.pred_mask) > 0:
        return np.inf
    best = -np.inf
    for m in BOX_MODALITIES:
        if m in modalities:
            scores = box_fields(sample, m)[2]
            if scores.size:
                best = max(best, float(score_key(scores).max()))
    return best


def presence_sweep(samples: Sequence[Sample], modalities: Sequence[str],
                   thresholds: FloatArray) -> PresenceSweep:
    """Presence counts and metrics at each threshold (open-vocabulary samples)."""
    keys = np.array([presence_key(s, modalities) for s in samples], dtype=np.float64)
    negative = np.array([s.negative for s in samples], dtype=bool)
    pos, neg = np.sort(keys[~negative]), np.sort(keys[negative])
    tp = (pos.size - np.searchsorted(pos, thresholds, side="left")).astype(np.int64)
    fp = (neg.size - np.searchsorted(neg, thresholds, side="left")).astype(np.int64)
    fn, tn = pos.size - tp, neg.size - fp
    precision, recall = ratio_array(tp, tp + fp), ratio_array(tp, tp + fn)
    return PresenceSweep(tp=tp, fp=fp, tn=tn, fn=fn, precision=precision, recall=recall,
                         f1=f1_from_pr_array(precision, recall), mcc=mcc_array(tp, fp, tn, fn))


def score_sweep(samples: Sequence[Sample], iou_threshold: float = 0.5,
                thresholds: npt.ArrayLike | None = None, max_points: int | None = 101,
                modalities: Sequence[str] | None = None, task: str | None = None) -> ScoreSweep:
    """Sweep the score threshold over samples loaded without one.

    Args:
        samples: a :class:`~ovearth_core.types.SampleList` (its ``modalities`` and ``task``
            are used unless given).
        iou_threshold: box matching threshold, as in the evaluator.
        thresholds: explicit thresholds; default :func:`default_thresholds`.
        max_points: cap on the number of default thresholds.
    """
    mods = tuple(modalities if modalities is not None
                 else getattr(samples, "modalities", ("segmentation", *BOX_MODALITIES)))
    task = task or getattr(samples, "task", "open_vocabulary")
    ts = (default_thresholds(samples, mods, max_points) if thresholds is None
          else np.asarray(thresholds, dtype=np.float64).reshape(-1))
    detection = {m: detection_sweep(samples, m, iou_threshold, ts)
                 for m in BOX_MODALITIES if m in mods}
    presence = presence_sweep(samples, mods, ts) if task == "open_vocabulary" else None
    unscored = {m: int(sum(np.isnan(box_fields(s, m)[2]).sum() for s in samples))
                for m in BOX_MODALITIES if m in mods}
    return ScoreSweep(thresholds=ts, iou_threshold=iou_threshold, detection=detection,
                      presence=presence, num_unscored=unscored)


def best_index(values: FloatArray, thresholds: FloatArray) -> int | None:
    """Index of the largest defined value (ties: the highest threshold); ``None`` if none."""
    defined = ~np.isnan(values)
    if not defined.any():
        return None
    top = np.nanmax(values)
    candidates = np.flatnonzero(defined & (values == top))
    return int(candidates[np.argmax(thresholds[candidates])])


def _json_list(values: npt.NDArray[Any]) -> list[Any]:
    if values.dtype.kind in "iu":
        return [int(v) for v in values]
    return [None if np.isnan(v) else float(v) for v in values]


def _pick(arrays: dict[str, npt.NDArray[Any]], i: int | None,
          thresholds: FloatArray) -> dict[str, Any] | None:
    if i is None:
        return None
    out: dict[str, Any] = {"threshold": float(thresholds[i])}
    out.update({k: _json_list(v[i:i + 1])[0] for k, v in arrays.items()})
    return out


def sweep_to_dict(sweep: ScoreSweep) -> dict[str, Any]:
    """JSON-ready form (lists, ``None`` for undefined) with best-F1 / best-MCC thresholds."""
    ts = sweep.thresholds
    out: dict[str, Any] = {
        "thresholds": _json_list(ts),
        "iou_threshold": sweep.iou_threshold,
        "unscored_boxes": sweep.num_unscored,
        "unscored_policy": "boxes without a score are kept at every threshold (score +inf)",
    }
    for m in BOX_MODALITIES:
        d = sweep.detection.get(m)
        if d is None:
            out[m] = None
            continue
        arrays = {"tp": d.tp, "fp": d.fp, "fn": d.fn, "positive_micro_precision": d.precision,
                  "positive_micro_recall": d.recall, "positive_micro_f1": d.f1,
                  COCO_F1_KEY: d.mean_f1}
        out[m] = {"num_positive_evaluated": d.num_evaluated,
                  **{k: _json_list(v) for k, v in arrays.items()},
                  "best_f1": _pick(arrays, best_index(d.f1, ts), ts)}
    p = sweep.presence
    if p is None:
        out["presence"] = None
    else:
        arrays = {"tp": p.tp, "fp": p.fp, "tn": p.tn, "fn": p.fn, "precision": p.precision,
                  "recall": p.recall, "f1": p.f1, "mcc": p.mcc}
        out["presence"] = {**{k: _json_list(v) for k, v in arrays.items()},
                           "best_mcc": _pick(arrays, best_index(p.mcc, ts), ts)}
    return out
