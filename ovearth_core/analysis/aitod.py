"""AI-TOD's evaluation protocol: COCOeval's mAP and mAR at AI-TOD's sizes and caps, with the
optimal LRP family, as the toolkit computes them.

Wang et al., "Tiny Object Detection in Aerial Images" (ICPR 2020) and the NWD paper; the
toolkit is ``cocoapi-aitod``, published as ``faster-coco-eval-aitod`` (its ``COCOeval`` with
``iouType="bbox"``, ``useCats=1``; its numbers are the tests' reference). What it changes
from COCO's protocol, and so what this module does:

* boxes per image (here: per query) ``maxDets = [1, 100, 1500]``; AP at the last;
* size ranges by area, closed at both ends as COCOeval tests them (``area < lo or
  area > hi`` is outside): all [0, 1e10], very tiny [0, 8²], tiny [8², 16²], small
  [16², 32²], medium [32², 1e10] (an area of exactly 64 is very tiny *and* tiny);
* the optimal LRP (Oksuz et al., ECCV 2018; the toolkit's own definition) per category at
  IoU 0.5, size "all", 1,500 boxes: over the score-sorted detections, after each one,
  ``LRP = (loc / (1 - 0.5) + FP + FN) / (TP + FP + FN)`` with ``loc`` the sum of
  ``1 - IoU`` of the true positives; oLRP is the smallest value (the first of equal ones)
  and its components at that point are ``olrp_loc = loc / TP`` (0 without TP),
  ``olrp_fp = FP / (TP + FP)`` (0 without detection), ``olrp_fn = FN / #GT``. A category
  with GT but no detection has oLRP 1 and oLRP FN 1, its oLRP Loc and FP undefined (the
  toolkit's -1); a category without GT has none. Each key is the mean over the categories
  where it is defined (the toolkit's ``mean(s[s > -1])``), ``None`` where none is (-1).

The area of a box is COCO's ``area`` basis of the ranked detections and GT boxes (see
:mod:`ovearth_core.analysis.coco`): an oriented box's is its polygon's area.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..types import IOU_THRESHOLDS
from .coco import AreaRange, Matcher, coco_categories, coco_eval
from .ranking import Candidates, Ranked

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
AITOD_MAX_DETS = (1, 100, 1500)
AITOD_RANGES = (AreaRange("all", 0.0, 1e10, True), AreaRange("verytiny", 0.0, 8.0 ** 2, True),
                AreaRange("tiny", 8.0 ** 2, 16.0 ** 2, True),
                AreaRange("small", 16.0 ** 2, 32.0 ** 2, True),
                AreaRange("medium", 32.0 ** 2, 1e10, True))
LRP_IOU = 0.5
# The block's keys, in the toolkit's ``stats`` order (its stats[1], AP at IoU 0.25, is not
# among its IoU thresholds and always -1: left out).
AITOD_KEYS = ("map@[0.5:0.95]", "map@0.5", "map@0.75", "map_verytiny", "map_tiny",
              "map_small", "map_medium", "mar@1", "mar@100", "mar@1500", "mar_verytiny",
              "mar_tiny", "mar_small", "mar_medium", "olrp", "olrp_loc", "olrp_fp", "olrp_fn")


def _mean(values: FloatArray) -> float | None:
    """The toolkit's ``mean(s[s > -1])`` over the defined values (``nan`` is undefined)."""
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else None


def aitod_block(cands: Candidates, hard_negatives_view: bool = False) -> dict[str, Any]:
    """AI-TOD's numbers (:data:`AITOD_KEYS`) of the queries of ``cands`` (the hard-negative
    view when they include negative queries), with ``num_categories`` (with GT)."""
    ranked = cands.ranked(max_detections=AITOD_MAX_DETS[-1])
    category, names = coco_categories(ranked)
    matcher = Matcher(ranked)
    ev = coco_eval(ranked, category, len(names), AITOD_RANGES, matcher, AITOD_MAX_DETS)
    ap, ar = ev["ap"], ev["ar"]
    i50, i75 = IOU_THRESHOLDS.index(0.5), IOU_THRESHOLDS.index(0.75)
    out: dict[str, Any] = {"map@[0.5:0.95]": _mean(ap[0].mean(axis=0)),
                           "map@0.5": _mean(ap[0, i50]), "map@0.75": _mean(ap[0, i75])}
    for a, rng in enumerate(AITOD_RANGES[1:], start=1):
        out[f"map_{rng.name}"] = _mean(ap[a].mean(axis=0))
    for j, cap in enumerate(AITOD_MAX_DETS):
        out[f"mar@{cap}"] = _mean(ar[0, :, :, j].mean(axis=0))
    for a, rng in enumerate(AITOD_RANGES[1:], start=1):
        out[f"mar_{rng.name}"] = _mean(ar[a, :, :, -1].mean(axis=0))
    lrp = optimal_lrp(ranked, matcher, category, ev["num_gt"][0])
    out.update({key: _mean(lrp[key]) for key in ("olrp", "olrp_loc", "olrp_fp", "olrp_fn")})
    out["num_categories"] = int(np.count_nonzero(ev["num_gt"][0]))
    out["max_detections"] = AITOD_MAX_DETS[-1]
    out["size_ranges"] = {rng.name: [rng.lo, rng.hi] for rng in AITOD_RANGES}
    return out


def optimal_lrp(ranked: Ranked, matcher: Matcher, category: IntArray,
                num_gt: IntArray) -> dict[str, FloatArray]:
    """oLRP and its components per category ``(C,)`` (``nan`` where the toolkit has -1) of
    detections ranked and capped at 1,500 per query, ``category[q]`` being query ``q``'s and
    ``num_gt`` ``(C,)`` each category's GT boxes (see the module docstring)."""
    matched = matcher.match(LRP_IOU)
    tp = matched >= 0
    fp = matched == -1  # one in an ignore region (COCO crowd, IN_IGNORE_REGION) is neither
    iou = np.zeros(matched.size)
    if tp.any():
        det = np.flatnonzero(tp)
        q = ranked.query[det]
        local = matched[det] - ranked.gt_start[q]
        iou[det] = [float(ranked.ious[qq][gg, bb]) for qq, gg, bb in
                    zip(q.tolist(), local.tolist(), ranked.box[det].tolist(), strict=True)]
    det_cat = category[ranked.query]
    out = {key: np.full(num_gt.size, np.nan) for key in ("olrp", "olrp_loc", "olrp_fp",
                                                          "olrp_fn")}
    for c in np.flatnonzero(num_gt).tolist():
        rows = np.flatnonzero(det_cat == c)  # rank order
        n = int(num_gt[c])
        if rows.size == 0:
            out["olrp"][c] = out["olrp_fn"][c] = 1.0
            continue
        ctp = np.cumsum(tp[rows])
        cfp = np.cumsum(fp[rows])
        loc = ctp - np.cumsum(np.where(tp[rows], iou[rows], 0.0))
        fn = n - ctp
        lrp = (loc / (1 - LRP_IOU) + cfp + fn) / (ctp + cfp + fn)
        k = int(np.argmin(lrp))
        out["olrp"][c] = lrp[k]
        out["olrp_loc"][c] = loc[k] / ctp[k] if ctp[k] > 0 else 0.0
        out["olrp_fp"][c] = cfp[k] / (ctp[k] + cfp[k]) if ctp[k] + cfp[k] > 0 else 0.0
        out["olrp_fn"][c] = fn[k] / n
    return out

