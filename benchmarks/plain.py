"""The obvious implementation of the evaluator's metrics: the speed baseline and a test oracle.

Masks are decoded to numpy arrays and compared pixel by pixel; box IoU is
computed pair by pair in plain Python (oriented boxes by Sutherland-Hodgman
clipping, as the spec's "Oriented Bounding Box Evaluation" section describes);
matching is solved afresh at every threshold. It shares nothing with
``ovearth_core`` beyond the loaded samples and pycocotools' decoder.

``dense=True`` is for scenes of hundreds of boxes, where pairs in Python would take
minutes: each query's IoU matrix at once, axis-aligned boxes by pycocotools' ``iou``
(its C box IoU on ``[x, y, w, h]``), oriented boxes by shapely's intersection of
every pair (no pruning), and the assignment's weights built with numpy; the same
algorithm, still nothing of ``ovearth_core``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely
from pycocotools import mask as cocomask
from scipy.optimize import linear_sum_assignment

THRESHOLDS = [0.5 + 0.05 * i for i in range(10)]


def _area(poly: list[tuple[float, float]]) -> float:
    return 0.5 * abs(sum(poly[i][0] * poly[(i + 1) % len(poly)][1]
                         - poly[(i + 1) % len(poly)][0] * poly[i][1] for i in range(len(poly))))


def _clip(subject: list[tuple[float, float]], clipper: list[tuple[float, float]]):
    def ccw(p):
        s = sum(p[i][0] * p[(i + 1) % len(p)][1] - p[(i + 1) % len(p)][0] * p[i][1]
                for i in range(len(p)))
        return p if s > 0 else p[::-1]
    subject, clipper = ccw(list(subject)), ccw(list(clipper))
    out = subject
    for i in range(len(clipper)):
        a, b = clipper[i], clipper[(i + 1) % len(clipper)]

        def inside(p, a=a, b=b):
            return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= 0

        def cut(p, q, a=a, b=b):
            x1, y1, x2, y2 = p[0], p[1], q[0], q[1]
            x3, y3, x4, y4 = a[0], a[1], b[0], b[1]
            den = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
            t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / den
            return (x1 + t * (x2 - x1), y1 + t * (y2 - y1))
        inp, out = out, []
        if not inp:
            break
        prev = inp[-1]
        for cur in inp:
            if inside(cur):
                if not inside(prev):
                    out.append(cut(prev, cur))
                out.append(cur)
            elif inside(prev):
                out.append(cut(prev, cur))
            prev = cur
    return out


def poly_iou(a, b) -> float:
    a = [tuple(map(float, p)) for p in a]
    b = [tuple(map(float, p)) for p in b]
    inter_poly = _clip(a, b)
    inter = _area(inter_poly) if len(inter_poly) >= 3 else 0.0
    return inter / (_area(a) + _area(b) - inter)


def box_iou(a, b) -> float:
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def dense_iou(gt: np.ndarray, pred: np.ndarray, oriented: bool) -> np.ndarray:
    """IoU matrix ``(G, P)`` of every pair at once (see the module docstring)."""
    if len(gt) == 0 or len(pred) == 0:
        return np.zeros((len(gt), len(pred)))
    if not oriented:
        def xywh(b):
            return np.column_stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]])
        # pycocotools' iou(detections, ground truth, iscrowd) is (P, G).
        return np.asarray(cocomask.iou(xywh(pred), xywh(gt), [0] * len(gt))).T
    # Pairs whose envelopes do not overlap have no common area: IoU 0.
    lo_g, hi_g, lo_p, hi_p = gt.min(axis=1), gt.max(axis=1), pred.min(axis=1), pred.max(axis=1)
    gi, pi = np.nonzero((np.minimum(hi_g[:, None], hi_p[None]) > np.maximum(lo_g[:, None],
                                                                             lo_p[None])).all(-1))
    a, b = shapely.polygons(gt), shapely.polygons(pred)
    inter = shapely.area(shapely.intersection(a[gi], b[pi]))
    out = np.zeros((len(gt), len(pred)))
    out[gi, pi] = np.minimum(inter / (shapely.area(a)[gi] + shapely.area(b)[pi] - inter), 1.0)
    return out


def _match_count(iou, t: float) -> tuple[int, float]:
    if len(iou) == 0 or len(iou[0]) == 0:
        return 0, 0.0
    n = max(len(iou), len(iou[0]))
    big = n + 1.0  # a valid pair outweighs the summed IoU of any matching
    w = np.zeros((n, n))
    if isinstance(iou, np.ndarray):
        w[:iou.shape[0], :iou.shape[1]] = np.where(iou >= t, big + iou, 0.0)
    else:
        for i, row in enumerate(iou):
            for j, v in enumerate(row):
                if v >= t:
                    w[i, j] = big + v
    r, c = linear_sum_assignment(w, maximize=True)
    pairs = [(i, j) for i, j in zip(r, c, strict=True) if w[i, j] > 0]
    return len(pairs), sum(iou[i][j] for i, j in pairs)


def per_query(samples, iou_threshold: float = 0.5, dense: bool = False
              ) -> dict[str, list[dict[str, Any]]]:
    """Per box modality, each evaluated query's ``tp``, ``tp_at`` (0.50 ... 0.95) and
    ``matched_iou_sum`` at ``iou_threshold``, by ``sample_id``."""
    out: dict[str, list[dict[str, Any]]] = {}
    for key, oriented in (("bbox", False), ("oriented_bbox", True)):
        if key not in samples.modalities:
            continue
        out[key] = []
        for s in samples:
            gts = s.gt_obbs if oriented else s.gt_boxes
            preds = s.pred_obbs if oriented else s.pred_boxes
            if s.negative or len(gts) == 0:
                continue
            iou = _iou(gts, preds, oriented, dense)
            tp, total = _match_count(iou, iou_threshold)
            out[key].append({"sample_id": s.sample_id, "tp": tp, "matched_iou_sum": total,
                             "tp_at": [_match_count(iou, round(t, 2))[0] for t in THRESHOLDS]})
    return out


def _iou(gts, preds, oriented: bool, dense: bool):
    if dense:
        return dense_iou(gts, preds, oriented)
    f = poly_iou if oriented else box_iou
    return [[f(g.tolist(), p.tolist()) for p in preds] for g in gts]


def evaluate(samples, iou_threshold: float = 0.5, dense: bool = False) -> dict[str, Any]:
    """Summary metrics the obvious way (keys as in the evaluator's summary)."""
    mods = samples.modalities
    out: dict[str, Any] = {}
    if "segmentation" in mods:
        inter_sum = union_sum = 0
        ious = []
        for s in samples:
            if s.negative or s.gt_mask is None:
                continue
            gt = cocomask.decode(s.gt_mask).astype(bool)
            pred = (cocomask.decode(s.pred_mask).astype(bool) if s.pred_mask is not None
                    else np.zeros_like(gt))
            inter = int(np.logical_and(gt, pred).sum())
            union = int(np.logical_or(gt, pred).sum())
            inter_sum += inter
            union_sum += union
            ious.append(inter / union)
        out["seg"] = {"positive_micro_miou": inter_sum / union_sum if union_sum else None,
                      "positive_macro_miou": float(np.mean(ious)) if ious else None}
    for key, oriented in (("bbox", False), ("oriented_bbox", True)):
        if key not in mods:
            continue
        tp = n_pred = n_gt = 0
        tp_at = [0] * len(THRESHOLDS)
        for s in samples:
            gts = s.gt_obbs if oriented else s.gt_boxes
            preds = s.pred_obbs if oriented else s.pred_boxes
            if s.negative or len(gts) == 0:
                continue
            iou = _iou(gts, preds, oriented, dense)
            n_pred += len(preds)
            n_gt += len(gts)
            tp += _match_count(iou, iou_threshold)[0]
            for k, t in enumerate(THRESHOLDS):
                tp_at[k] += _match_count(iou, round(t, 2))[0]
        f1s = [2 * x / (n_pred + n_gt) for x in tp_at]
        out[key] = {"tp": tp, "fp": n_pred - tp, "fn": n_gt - tp,
                    "positive_micro_f1": 2 * tp / (n_pred + n_gt) if n_pred + n_gt else None,
                    "positive_mean_micro_f1@[0.5:0.95]": float(np.mean(f1s))}
    return out
