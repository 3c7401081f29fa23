"""Average precision of scored boxes over positive queries (all queries form one class).

Detections of every evaluated positive query (usable GT in the modality) are ranked by
confidence over all queries; ties keep query order, then box order (a stable sort, as the
PASCAL VOC devkit and COCOeval do). Boxes without a score count as score ``+inf`` (ranked
first), as in :mod:`ovearth_core.analysis.sweep`. Optionally (``include_negatives``, the
hard-negative view of OVDEval) every box predicted on a negative query joins the ranking as a false
positive.

Matching, per query, in ranking order:

* ``"voc"`` (PASCAL VOC, Padilla's toolkit): a detection is a true positive when the GT of
  highest IoU in its query reaches the threshold and is not yet taken; otherwise (also when
  that GT is taken) a false positive.
* ``"coco"`` (COCOeval): a detection takes the not-yet-taken GT of highest IoU among those
  reaching the threshold; COCO keeps the ``max_detections`` best boxes of each query. A
  detection left unmatched that lies in an *ignore region* of its query (a COCO crowd region:
  ``Sample.gt_ignore_boxes`` / ``gt_ignore_obbs``) by at least the threshold, measured as COCO
  does (intersection / detection area), is ignored: neither true nor false positive. A positive
  query with ignore regions but no target box still takes part, as COCOeval scores a
  crowd-only image. VOC matching sees ignore regions as background.

Interpolations of the precision/recall curve (precision made non-increasing from the right):

* every point (VOC 2010+): the area under that envelope;
* 11 points (VOC 2007): its mean at recall 0, 0.1, ..., 1 (written ``i / 10``, so a recall of
  exactly 0.3 counts at 0.3 -- the devkit's ``arange(0, 1.1, 0.1)`` gives 0.30000000000000004);
* 101 points (COCO): its mean at ``linspace(0, 1, 101)``, 0 beyond the highest recall.

Coordinates are continuous (a box from x1 to x2 is x2 - x1 wide) unless ``legacy_pixel``
asks for the old VOC convention (x2 - x1 + 1, axis-aligned boxes only). With no usable GT the
AP is undefined (``nan``; ``None`` in JSON); with GT but no detection it is 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import geometry
from ..geometry import iou_matrices
from ..types import IOU_THRESHOLDS, Sample
from .sweep import BOX_MODALITIES, box_fields, score_key

FloatArray = npt.NDArray[np.float64]
RECALL_101 = np.linspace(0.0, 1.0, 101)
RECALL_11 = np.arange(11) / 10
COCO_MAX_DETECTIONS = 100


@dataclass(frozen=True)
class Ranked:
    """Detections of one modality ranked over all queries.

    ``ious[q]`` is the ``(G_q, P_q)`` IoU matrix of query ``q`` (``G_q = 0`` for negative
    queries in the hard-negative view); ``query``, ``box`` and ``score`` ``(D,)`` give each
    ranked detection.
    """

    ious: list[FloatArray]
    query: npt.NDArray[np.int64]
    box: npt.NDArray[np.int64]
    score: FloatArray
    num_gt: int
    # (R_q, P_q) share of each predicted box inside each ignore region of query q.
    cover: list[FloatArray] | None = None

    @cached_property
    def rows_by_query(self) -> list[npt.NDArray[np.int64]]:
        """Ranked positions of each query's detections, best first."""
        order = np.argsort(self.query, kind="stable")
        bounds = np.searchsorted(self.query[order], np.arange(len(self.ious) + 1))
        return [order[bounds[q]:bounds[q + 1]] for q in range(len(self.ious))]

    @cached_property
    def overlapping(self) -> tuple[npt.NDArray[np.int64], ...]:
        """``(row, gt, query, iou)`` of every ranked detection and GT box with IoU > 0
        (GT ids numbered across queries)."""
        rows_, gts, queries, values = [], [], [], []
        offset = 0
        for q, (iou, rows) in enumerate(zip(self.ious, self.rows_by_query, strict=True)):
            if iou.shape[0] and rows.size:
                g, k = np.nonzero(iou[:, self.box[rows]] > 0)
                rows_.append(rows[k])
                gts.append(g + offset)
                queries.append(np.full(g.size, q))
                values.append(iou[g, self.box[rows[k]]])
            offset += iou.shape[0]
        if not rows_:
            return tuple(np.zeros(0, dtype=np.int64) for _ in range(3)) + (np.zeros(0),)
        return tuple(np.concatenate(a) for a in (rows_, gts, queries, values))


@dataclass(frozen=True)
class PRCurve:
    """Cumulative precision/recall after each ranked detection (arrays ``(D,)``)."""

    score: FloatArray
    tp: npt.NDArray[np.bool_]
    precision: FloatArray
    recall: FloatArray
    num_gt: int


def legacy_box_iou_matrix(gt: FloatArray, pred: FloatArray) -> FloatArray:
    """Axis-aligned IoU ``(G, P)`` with the legacy VOC pixel convention (width x2 - x1 + 1);
    boxes that do not touch have IoU 0."""
    if len(gt) == 0 or len(pred) == 0:
        return np.zeros((len(gt), len(pred)))
    lo = np.maximum(gt[:, None, :2], pred[None, :, :2])
    hi = np.minimum(gt[:, None, 2:], pred[None, :, 2:])
    touch = np.all(lo <= hi, axis=-1)
    inter = np.where(touch, np.prod(hi - lo + 1, axis=-1), 0.0)
    area_g = np.prod(gt[:, 2:] - gt[:, :2] + 1, axis=-1)
    area_p = np.prod(pred[:, 2:] - pred[:, :2] + 1, axis=-1)
    return inter / (area_g[:, None] + area_p[None, :] - inter)


def rank_detections(samples: Sequence[Sample], modality: str = "bbox",
                    include_negatives: bool = False, legacy_pixel: bool = False,
                    max_detections: int | None = None) -> Ranked:
    """Compute each query's IoU matrix once and rank all detections by confidence."""
    if legacy_pixel and modality != "bbox":
        raise ValueError("legacy_pixel applies to axis-aligned boxes (modality 'bbox') only")
    chosen = [s for s in samples
              if (include_negatives if s.negative
                  else len(box_fields(s, modality)[0]) + len(_ignore_regions(s, modality)) > 0)]
    pairs = [box_fields(s, modality)[:2] for s in chosen]
    oriented = modality == "oriented_bbox"
    cover = None
    if any(len(_ignore_regions(s, modality)) for s in chosen):
        cover = [geometry.coverage_matrix(_ignore_regions(s, modality), pred, oriented)
                 for s, (_, pred) in zip(chosen, pairs, strict=True)]
    if legacy_pixel:
        ious = [legacy_box_iou_matrix(gt, pred) for gt, pred in pairs]
    else:  # exact IoU of every pair, all queries in one batch
        ious = iou_matrices([gt for gt, _ in pairs], [pred for _, pred in pairs],
                            oriented=oriented)
    queries, boxes, scores = [], [], []
    num_gt = 0
    for q, s in enumerate(chosen):
        gt, _, sc = box_fields(s, modality)
        key = score_key(sc)
        keep = np.argsort(-key, kind="stable")
        if max_detections is not None:
            keep = keep[:max_detections]
        num_gt += len(gt)
        keep = np.sort(keep)
        queries.append(np.full(keep.size, q, dtype=np.int64))
        boxes.append(keep.astype(np.int64))
        scores.append(key[keep])
    query = np.concatenate(queries) if queries else np.zeros(0, np.int64)
    box = np.concatenate(boxes) if boxes else np.zeros(0, np.int64)
    score = np.concatenate(scores) if scores else np.zeros(0)
    order = np.argsort(-score, kind="stable")
    return Ranked(ious=ious, query=query[order], box=box[order], score=score[order],
                  num_gt=num_gt, cover=cover)


def _ignore_regions(sample: Sample, modality: str) -> FloatArray:
    return sample.gt_ignore_obbs if modality == "oriented_bbox" else sample.gt_ignore_boxes


def _coco_ignored(ranked: Ranked, threshold: float, tp: npt.NDArray[np.bool_]
                  ) -> npt.NDArray[np.bool_]:
    """Detections COCOeval ignores: unmatched, and inside an ignore region by >= threshold."""
    ignored = np.zeros(tp.size, dtype=bool)
    if ranked.cover is None:
        return ignored
    for cover, rows in zip(ranked.cover, ranked.rows_by_query, strict=True):
        if cover.shape[0] and rows.size:
            inside = cover[:, ranked.box[rows]].max(axis=0) >= threshold
            ignored[rows] = inside & ~tp[rows]
    return ignored


def _voc_tp(ranked: Ranked, threshold: float) -> npt.NDArray[np.bool_]:
    d = ranked.query.size
    best_gt = np.full(d, -1, dtype=np.int64)
    best_iou = np.zeros(d)
    for iou, rows in zip(ranked.ious, ranked.rows_by_query, strict=True):
        if iou.shape[0] == 0 or rows.size == 0:
            continue
        cols = iou[:, ranked.box[rows]]
        best_gt[rows] = np.argmax(cols, axis=0)
        best_iou[rows] = cols[best_gt[rows], np.arange(rows.size)]
    hit = best_iou >= threshold
    tp = np.zeros(d, dtype=bool)
    # The first (best-ranked) hit on each (query, GT) takes it; later ones are false positives.
    idx = np.flatnonzero(hit)
    pairs = np.stack([ranked.query[idx], best_gt[idx]], axis=1)
    _, first = np.unique(pairs, axis=0, return_index=True)
    tp[idx[first]] = True
    return tp


def _coco_tp(ranked: Ranked, threshold: float) -> npt.NDArray[np.bool_]:
    """COCO's greedy matching: in rank order, each detection takes the free GT of highest IoU.

    Where no two pairs at or above the threshold share a detection or a GT, that is just
    "has such a pair" (decided for all queries at once); the other queries are walked.
    """
    tp = np.zeros(ranked.query.size, dtype=bool)
    row, gt, query, value = ranked.overlapping
    at = value >= threshold
    shared = np.zeros(len(ranked.ious), dtype=bool)
    for ids in (row[at], gt[at]):
        shared[query[at][np.bincount(ids)[ids] > 1]] = True
    simple = at & ~shared[query]
    tp[row[simple]] = True
    for q in np.flatnonzero(shared).tolist():
        iou, rows = ranked.ious[q], ranked.rows_by_query[q]
        free = np.ones(iou.shape[0], dtype=bool)
        for r in rows:
            col = np.where(free, iou[:, ranked.box[r]], -1.0)
            g = int(np.argmax(col))
            if col[g] >= threshold:
                free[g] = False
                tp[r] = True
    return tp


def pr_curve(ranked: Ranked, threshold: float, matching: str = "voc") -> PRCurve:
    """Match ranked detections at ``threshold`` and accumulate precision and recall."""
    if matching not in ("voc", "coco"):
        raise ValueError(f"matching must be 'voc' or 'coco', got {matching!r}")
    if matching == "voc":
        tp, score = _voc_tp(ranked, threshold), ranked.score
    else:
        tp = _coco_tp(ranked, threshold)
        # Ignored detections leave the ranking (COCOeval keeps them as points that repeat
        # the previous precision and recall, which changes no interpolated value).
        keep = ~_coco_ignored(ranked, threshold, tp)
        tp, score = tp[keep], ranked.score[keep]
    ctp = np.cumsum(tp)
    n = np.arange(1, tp.size + 1)
    recall = ctp / ranked.num_gt if ranked.num_gt else np.full(tp.size, np.nan)
    return PRCurve(score=score, tp=tp, precision=ctp / n, recall=recall,
                   num_gt=ranked.num_gt)


def precision_envelope(precision: FloatArray) -> FloatArray:
    """Precision made non-increasing: the best precision at this or any higher recall."""
    return np.maximum.accumulate(precision[::-1])[::-1] if precision.size else precision


def ap_every_point(curve: PRCurve) -> float:
    """Area under the precision envelope (PASCAL VOC 2010+)."""
    if curve.num_gt == 0:
        return float("nan")
    rec = np.concatenate([[0.0], curve.recall, [1.0]])
    pre = precision_envelope(np.concatenate([[0.0], curve.precision, [0.0]]))
    step = np.flatnonzero(rec[1:] != rec[:-1]) + 1
    return float(np.sum((rec[step] - rec[step - 1]) * pre[step]))


def ap_sampled(curve: PRCurve, recall_levels: FloatArray) -> float:
    """Mean envelope precision at the given recall levels (0 beyond the highest recall)."""
    if curve.num_gt == 0:
        return float("nan")
    return float(np.mean(interpolated_precision(curve, recall_levels)))


def interpolated_precision(curve: PRCurve, recall_levels: FloatArray) -> FloatArray:
    env = np.append(precision_envelope(curve.precision), 0.0)
    return env[np.searchsorted(curve.recall, recall_levels, side="left")]


def ap_11_point(curve: PRCurve) -> float:
    """Mean envelope precision at recall 0, 0.1, ..., 1 (PASCAL VOC 2007)."""
    return ap_sampled(curve, RECALL_11)


def ap_101_point(curve: PRCurve) -> float:
    """Mean envelope precision at recall 0, 0.01, ..., 1 (COCO)."""
    return ap_sampled(curve, RECALL_101)


def voc_average_precision(samples: Sequence[Sample], modality: str = "bbox",
                          iou_threshold: float = 0.5, include_negatives: bool = False,
                          legacy_pixel: bool = False) -> dict[str, Any]:
    """VOC every-point and 11-point AP at one IoU threshold, with counts."""
    ranked = rank_detections(samples, modality, include_negatives, legacy_pixel)
    curve = pr_curve(ranked, iou_threshold, "voc")
    return {"ap_every_point": ap_every_point(curve), "ap_11_point": ap_11_point(curve),
            "num_gt": curve.num_gt, "num_detections": int(curve.tp.size),
            "num_tp": int(curve.tp.sum())}


def coco_average_precision(samples: Sequence[Sample], modality: str = "bbox",
                           include_negatives: bool = False,
                           max_detections: int | None = COCO_MAX_DETECTIONS,
                           ) -> dict[str, Any]:
    """COCO-style AP@[0.5:0.95] (101-point, COCO matching) and AP at each IoU threshold."""
    return coco_ap_from_ranked(rank_detections(samples, modality, include_negatives,
                                               max_detections=max_detections))


def coco_ap_from_ranked(ranked: Ranked) -> dict[str, Any]:
    """COCO-style AP of already ranked (and capped) detections."""
    by_iou = {f"{t:.2f}": ap_101_point(pr_curve(ranked, t, "coco")) for t in IOU_THRESHOLDS}
    values = np.array(list(by_iou.values()))
    return {"ap@[0.5:0.95]": float(values.mean()), "ap_by_iou": by_iou,
            "num_gt": ranked.num_gt, "num_detections": int(ranked.query.size)}


def _none_if_nan(value: Any) -> Any:
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _none_if_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_none_if_nan(v) for v in value]
    return value


def average_precision_report(samples: Sequence[Sample], iou_threshold: float = 0.5,
                             modalities: Sequence[str] = BOX_MODALITIES,
                             include_negatives: bool = False) -> dict[str, Any]:
    """JSON-ready AP of each enabled box modality: VOC every-point / 11-point at the run's
    IoU threshold, COCO-style AP@[0.5:0.95], and the 101-point interpolated PR curve."""
    out: dict[str, Any] = {"iou_threshold": iou_threshold,
                           "hard_negatives": include_negatives}
    for m in BOX_MODALITIES:
        if m not in modalities:
            out[m] = None
            continue
        ranked = rank_detections(samples, m, include_negatives)
        curve = pr_curve(ranked, iou_threshold, "voc")
        entry = {"ap_every_point": ap_every_point(curve), "ap_11_point": ap_11_point(curve),
                 "num_gt": curve.num_gt, "num_detections": int(curve.tp.size),
                 "num_tp": int(curve.tp.sum()),
                 # Unscored boxes rank first in input order: AP is arbitrary if these abound.
                 "num_unscored": int(np.isinf(ranked.score).sum())}
        per_query = np.bincount(ranked.query, minlength=1).max(initial=0)
        entry["coco"] = (coco_ap_from_ranked(ranked) if per_query <= COCO_MAX_DETECTIONS
                         else coco_average_precision(samples, m, include_negatives))
        entry["pr_curve"] = {
            "recall": RECALL_101.tolist(),
            "precision": (interpolated_precision(curve, RECALL_101).tolist()
                          if curve.num_gt else None)}
        out[m] = _none_if_nan(entry)
    return out
