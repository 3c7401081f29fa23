"""Average precision of scored boxes: VOC and COCO, pooled over all queries and per category.

Detections (:mod:`ovearth_core.analysis.ranking`) of every evaluated positive query (usable
GT in the modality) are ranked by confidence over all queries; ties keep query order, then
box order (a stable sort, as COCOeval and the PASCAL VOC Matlab devkit do). Boxes without
a score count as score ``+inf`` (ranked first). Optionally (``include_negatives``, the
hard-negative view of OVDEval) every box predicted on a negative query joins the pooled
ranking as a false positive; per-category numbers never include negative queries (a
negative query's annotation is another object, so it has no category of its own).

Matching, per query, in ranking order:

* ``"voc"`` (PASCAL VOC, Padilla's toolkit): a detection is a true positive when the GT of
  highest IoU in its query (the first of equal ones) reaches the threshold and is not yet
  taken; otherwise (also when that GT is taken) a false positive.
* ``"coco"`` (COCOeval, :mod:`ovearth_core.analysis.coco`): a detection takes the
  not-yet-taken GT of highest IoU among those reaching the threshold, the last of equal
  ones; COCO keeps the ``max_detections`` best boxes of each query.

Interpolations of the precision/recall curve (precision made non-increasing from the right):

* every point (VOC 2010+): the area under that envelope;
* 11 points (VOC 2007): its mean at recall 0, 0.1, ..., 1 (written ``i / 10``, so a recall of
  exactly 0.3 counts at 0.3 -- the devkit's ``arange(0, 1.1, 0.1)`` gives 0.30000000000000004);
* 101 points (COCO): its mean at ``linspace(0, 1, 101)``, 0 beyond the highest recall.

``convention="devkit"`` (and the ``voc_devkit`` block) reproduces DOTA_devkit's ``voc_eval``
instead: IoU > t, the devkit's 11 levels and sort, +1 pixel widths for axis-aligned boxes.

With no usable GT the AP is undefined (``nan``; ``None`` in JSON); with GT but no detection
it is 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..field_metrics import box_fields
from ..labels import AP_METRICS, AP_OPTIONAL
from ..options import COCO_MAX_DETECTIONS, MIN_MAX_DETECTIONS
from ..types import IOU_THRESHOLDS, Sample
from .aitod import aitod_block
from .coco import (
    AI_TOD_RANGES,
    COCO_RANGES,
    IN_IGNORE_REGION,
    MAX_DETS,
    UNCAPPED,
    Matcher,
    coco_categories,
    coco_evals,
    coco_summary,
    size_basis,
    stat_block,
)
from .nms_ap import suppress
from .ranking import (
    RECALL_101,
    Candidates,
    Ranked,
    candidates,
    counted_categories,
    rank_detections,
)
from .sweep import BOX_MODALITIES

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
RECALL_11 = np.arange(11) / 10
# The 11 levels of DOTA_devkit's and the Python VOC devkits' voc_ap: np.arange(0., 1.1, 0.1)
# (0.30000000000000004, 0.6000000000000001, 0.7000000000000001 among them).
DEVKIT_RECALL_11 = np.arange(0.0, 1.1, 0.1)
# Warn when at least this share of ranked detections shares its score with another one.
TIE_WARNING_SHARE = 0.1


@dataclass(frozen=True)
class PRCurve:
    """Cumulative precision/recall after each ranked detection (arrays ``(D,)``)."""

    score: FloatArray
    tp: npt.NDArray[np.bool_]
    precision: FloatArray
    recall: FloatArray
    num_gt: int


def _voc_hits(ranked: Ranked, threshold: float, strict: bool = False
              ) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Each detection's best GT (the first of equal IoUs; ids numbered across queries) and
    whether it reaches IoU >= ``threshold`` (``> threshold`` when ``strict``, as the devkits
    test it)."""
    best_gt, best_iou = ranked.best_gt
    return ((best_iou > threshold) if strict else (best_iou >= threshold)), best_gt


def _voc_tp(ranked: Ranked, threshold: float, strict: bool = False) -> npt.NDArray[np.bool_]:
    """VOC matching: a detection whose best GT it hits (:func:`_voc_hits`) is a true
    positive when it is the first in rank order to hit that GT."""
    return _first_hits(*_voc_hits(ranked, threshold, strict))


def _first_hits(hit: npt.NDArray[np.bool_], best_gt: IntArray) -> npt.NDArray[np.bool_]:
    tp = np.zeros(hit.size, dtype=bool)
    idx = np.flatnonzero(hit)
    _, first = np.unique(best_gt[idx], return_index=True)
    tp[idx[first]] = True
    return tp


def pr_curve(ranked: Ranked, threshold: float, matching: str = "voc") -> PRCurve:
    """Match ranked detections at ``threshold`` and accumulate precision and recall."""
    if matching not in ("voc", "coco"):
        raise ValueError(f"matching must be 'voc' or 'coco', got {matching!r}")
    if matching == "voc":
        return _curve(ranked, _voc_tp(ranked, threshold))
    matched = Matcher(ranked).match(threshold)
    # Detections in an ignore region leave the ranking (COCOeval keeps them as points that
    # repeat the previous precision and recall, which changes no interpolated value).
    keep = matched != IN_IGNORE_REGION
    return _curve_of(ranked.score[keep], matched[keep] >= 0, ranked.num_gt)


def _curve(ranked: Ranked, tp: npt.NDArray[np.bool_]) -> PRCurve:
    return _curve_of(ranked.score, tp, ranked.num_gt)


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
                          legacy_pixel: bool = False, convention: str = "exact",
                          ) -> dict[str, Any]:
    """VOC every-point and 11-point AP at one IoU threshold, with counts.

    ``convention="devkit"`` reproduces DOTA_devkit's ``voc_eval`` (and the Python VOC
    devkits it comes from): detections sorted by ``np.argsort(-confidence)``, a hit when
    IoU > t (not >=), the 11 levels of ``np.arange(0., 1.1, 0.1)``, and for axis-aligned
    boxes the legacy pixel convention (``legacy_pixel`` is then implied).
    """
    if convention not in ("exact", "devkit"):
        raise ValueError(f"convention must be 'exact' or 'devkit', got {convention!r}")
    devkit = convention == "devkit"
    ranked = rank_detections(samples, modality, include_negatives,
                             legacy_pixel or (devkit and modality == "bbox"),
                             order="devkit" if devkit else "stable")
    return _voc_entry(ranked, iou_threshold, devkit)


def _voc_entry(ranked: Ranked, threshold: float, devkit: bool) -> dict[str, Any]:
    """VOC AP of ranked detections. The devkit's (``devkit``) ignores difficult GT boxes
    (DOTA's flag) as ``voc_eval`` does: not counted in ``npos``, and a detection whose
    best GT box is a difficult one it hits is neither a true nor a false positive (it leaves
    the curve, which moves no point of it)."""
    hit, best_gt = _voc_hits(ranked, threshold, strict=devkit)
    difficult = ranked.gt_difficult if devkit else None
    if difficult is None:
        curve = _curve(ranked, _first_hits(hit, best_gt))
        extra = {}
    else:
        keep = ~(hit & difficult[np.maximum(best_gt, 0)])
        tp = _first_hits(hit & keep, best_gt)
        curve = _curve_of(ranked.score[keep], tp[keep], ranked.num_gt - int(difficult.sum()))
        extra = {"num_difficult": int(difficult.sum()),
                 "num_on_difficult": int(keep.size - keep.sum())}
    return {"ap_every_point": ap_every_point(curve),
            "ap_11_point": ap_sampled(curve, DEVKIT_RECALL_11 if devkit else RECALL_11),
            "num_gt": curve.num_gt, "num_detections": int(hit.size),
            "num_tp": int(curve.tp.sum()), **extra}


def voc_devkit_report(samples: Sequence[Sample], modality: str, iou_threshold: float,
                      include_negatives: bool = False, cands: Candidates | None = None,
                      ) -> dict[str, Any]:
    """DOTA_devkit's ``voc_eval`` on all queries as one class and on each category as its
    class (positive queries only), with the devkit's mAP: the mean over categories with GT.
    Each category's detections are sorted on their own, as the devkit sorts each class file.

    ``cands``: the :func:`candidates` of these samples and options, when the caller has them
    (their IoUs must follow the devkit: the legacy pixel convention for ``"bbox"``).
    """
    if cands is None:
        cands = candidates(samples, modality, include_negatives,
                           legacy_pixel=modality == "bbox")
    pooled = _voc_entry(cands.ranked("devkit"), iou_threshold, devkit=True)
    positive = {c for c, neg in zip(cands.categories, cands.negative, strict=True) if not neg}
    by_cat: dict[str, list[int]] = {}
    counted = counted_categories(cands.categories, cands.negative, cands.counted_as)
    for q, name in enumerate(counted):
        if name in positive:
            by_cat.setdefault(name, []).append(q)
    per_category = {}
    for name in sorted(by_cat):
        entry = _voc_entry(cands.ranked("devkit", by_cat[name]), iou_threshold, devkit=True)
        per_category[name] = {k: entry[k] for k in ("ap_every_point", "ap_11_point",
                                                    "num_gt", "num_tp")}
    # The mean over the categories with (non-difficult) GT: a category of difficult objects
    # only has no AP (the devkit's 0 / 0).
    values = [v for v in per_category.values() if v["num_gt"] > 0]
    return {**pooled,
            "map_every_point": (float(np.mean([v["ap_every_point"] for v in values]))
                                if values else float("nan")),
            "map_11_point": (float(np.mean([v["ap_11_point"] for v in values]))
                             if values else float("nan")),
            "num_categories": len(values), "per_category": per_category}


def coco_average_precision(samples: Sequence[Sample], modality: str = "bbox",
                           include_negatives: bool = False,
                           max_detections: int | None = COCO_MAX_DETECTIONS,
                           ) -> dict[str, Any]:
    """COCO-style AP@[0.5:0.95] (101-point, COCO matching) and AP at each IoU threshold of
    all queries as one class, with COCO's per-category mAP, sizes and recall
    (:func:`coco_ap_from_ranked`)."""
    return coco_ap_from_ranked(rank_detections(samples, modality, include_negatives,
                                               max_detections=max_detections), max_detections,
                               modality)


def coco_ap_from_ranked(ranked: Ranked, max_detections: int | None = COCO_MAX_DETECTIONS,
                        modality: str = "bbox") -> dict[str, Any]:
    """COCO-style AP of already ranked detections, capped at ``max_detections`` per query
    (COCOeval's ``maxDets = [1, 10, max_detections]``; ``None``: no cap, ``ar@all``).

    Two blocks of the same keys (:func:`~ovearth_core.analysis.coco.stat_block`,
    COCOeval's ``stats[0:12]``): ``ap*`` / ``ar*`` and ``ap_by_iou`` pooled, every query in
    one class (COCOeval's ``useCats=0``; the hard negatives' boxes included when ranked);
    ``map*`` / ``mar*`` and ``per_category``
    (:func:`~ovearth_core.analysis.coco.coco_summary`) the means over categories, each
    positive query in its category (``useCats=1``, COCO's mAP); there a negative query's
    boxes (hard-negative view) count as false positives of the category its phrase names,
    as COCOeval counts detections of a category on an image without it. ``size_basis``
    (:func:`~ovearth_core.analysis.coco.size_basis`): what the size keys measure
    (``modality`` ``"oriented_bbox"``: polygon areas).
    """
    max_dets = (*MAX_DETS[:2], UNCAPPED if max_detections is None else max_detections)
    category, names = coco_categories(ranked)
    ev, by_category = coco_evals(
        ranked, ((np.zeros(len(ranked.ious), dtype=np.int64), 1), (category, len(names))),
        COCO_RANGES + AI_TOD_RANGES, Matcher(ranked), max_dets)
    pooled = ev["ap"][0, :, 0]
    by_iou = {f"{t:.2f}": float(v) for t, v in zip(IOU_THRESHOLDS, pooled, strict=True)}
    summary = coco_summary(ranked, category, names, max_dets=max_dets, ev=by_category)
    return {**stat_block(ev, max_dets), "ap_by_iou": by_iou,
            "num_gt": ranked.num_gt, "num_detections": int(ranked.query.size),
            "max_detections": max_detections, **summary,
            "size_basis": size_basis(ranked, modality == "oriented_bbox")}


def score_ties(ranked: Ranked, iou_threshold: float) -> dict[str, Any]:
    """How many ranked detections share their score with another one (``+inf``, no score,
    included), the largest such group, and the range of the VOC every-point AP at
    ``iou_threshold`` over every order of tied detections.

    The range is exact. Whatever the order, a group of equal scores holds the same
    detections that miss (IoU below the threshold, or a GT taken by a higher group) and,
    per GT first hit in the group, one true positive and its duplicates. The best order
    puts the true positives first; the worst puts the misses first, then each true positive
    followed by its duplicates, the GT with the most duplicates first (every true positive
    then sits as late as it can). A warning when tied detections are
    :data:`TIE_WARNING_SHARE` or more of all: AP then depends on their order (ours is
    COCOeval's: query order, then box order).
    """
    score = ranked.score
    _, start, counts = np.unique(-score, return_index=True, return_counts=True)
    tied = int(counts[counts > 1].sum())
    share = tied / score.size if score.size else None
    group = np.repeat(np.arange(counts.size), counts)
    hit, best_gt = _voc_hits(ranked, iou_threshold)
    first_group = np.full(max(ranked.gt_area.size, 1), counts.size)
    np.minimum.at(first_group, best_gt[hit], group[hit])
    member = hit & (first_group[np.maximum(best_gt, 0)] == group)
    best = np.zeros(score.size, dtype=bool)
    worst = np.zeros(score.size, dtype=bool)
    for g in np.flatnonzero(np.bincount(group[member], minlength=counts.size)).tolist():
        blocks = np.sort(np.unique(best_gt[member & (group == g)], return_counts=True)[1])[::-1]
        misses = counts[g] - int(blocks.sum())
        best[start[g]:start[g] + blocks.size] = True
        worst[start[g] + misses + np.cumsum(blocks) - blocks] = True
    lo, hi = (ap_every_point(_curve_of(score, tp, ranked.num_gt)) for tp in (worst, best))
    warning = None
    if share is not None and share >= TIE_WARNING_SHARE:
        warning = (f"{tied:,} of {score.size:,} detections ({share:.0%}) share their score "
                   "with another one: AP depends on their order (here COCOeval's: query "
                   "order, then box order)")
        if ranked.num_gt:
            warning += (f"; over all orders, VOC every-point AP at IoU {iou_threshold:g} lies "
                        f"in [{lo:.4f}, {hi:.4f}]")
    return {"num_detections": int(score.size), "num_tied": tied,
            "largest_group": int(counts.max(initial=0)), "share_tied": share,
            "voc_ap_every_point_range": [lo, hi], "warning": warning}


def _curve_of(score: FloatArray, tp: npt.NDArray[np.bool_], num_gt: int) -> PRCurve:
    ctp = np.cumsum(tp)
    n = np.arange(1, tp.size + 1)
    recall = ctp / num_gt if num_gt else np.full(tp.size, np.nan)
    return PRCurve(score=score, tp=tp, precision=ctp / n, recall=recall, num_gt=num_gt)


def cap_check(samples: Sequence[Sample], modality: str, max_detections: int,
              shown: int = 5) -> dict[str, Any]:
    """The positive queries with more GT boxes than the COCO detection cap (their COCO
    recall can never reach 1: a dense DOTA scene holds 500+ ships), and a warning naming
    the cap and the queries (``None`` when there are none)."""
    over = [s.sample_id for s in samples
            if not s.negative and len(box_fields(s, modality)[0]) > max_detections]
    warning = None
    if over:
        names = ", ".join(over[:shown]) + (f" and {len(over) - shown:,} more"
                                          if len(over) > shown else "")
        warning = (f"{len(over):,} queries have more GT boxes than the COCO detection cap "
                   f"of {max_detections:,} per query ({names}): their COCO-style AP and AR "
                   "cannot reach 1; raise the cap with --max-detections (AI-TOD uses 1500)")
    return {"queries_over_cap": over, "cap_warning": warning}


def ap_numbers(entry: dict[str, Any] | None, keys: Sequence[str] | None = None,
               ) -> dict[str, tuple[float | None, int | None]]:
    """Each AP of :data:`~ovearth_core.labels.AP_METRICS` in one modality's block of
    :func:`average_precision_report` (``None`` for a modality without AP), with the number
    of categories its mean is over (``None`` for a pooled AP), in the table's order.
    ``keys``: these keys (``None`` where the block lacks one); default: every key but those
    of a protocol (:data:`~ovearth_core.labels.AP_OPTIONAL`) the block was not computed
    with."""
    out: dict[str, tuple[float | None, int | None]] = {}
    for key in AP_METRICS if keys is None else keys:
        scope = AP_METRICS[key][2]
        block, dot, name = key.partition(".")  # "coco.map@[0.5:0.95]": block, then key
        holder = (entry or {}).get(block) if dot else entry
        name = name if dot else key
        if keys is None and key in AP_OPTIONAL and name not in (holder or {}):
            continue
        value = (holder or {}).get(name)
        out[key] = (value, (holder or {}).get("num_categories") if scope == "mean" else None)
    return out


NMS_NEEDS_HARD_NEGATIVES = (
    "NMS-AP (--nms-ap) needs the hard-negative view (--hard-negatives): it suppresses the "
    "boxes of negative queries that compete with a positive's for one object, so those boxes "
    "must be ranked")


def nms_block(samples: Sequence[Sample], modality: str,
              max_detections: int = COCO_MAX_DETECTIONS) -> dict[str, Any]:
    """OVDEval's NMS-AP (:mod:`ovearth_core.analysis.nms_ap`): COCO's mAP (``useCats=1``,
    hard-negative view, ``max_detections`` per query after the suppression) of the boxes
    that survive it, as ``nms_map@[0.5:0.95]``, ``nms_map@0.5``, ``nms_map@0.75``, with
    ``nms_removed`` (boxes suppressed) and ``nms_num_detections`` (boxes before it)."""
    result = suppress(samples, modality)
    kept = coco_average_precision(result.samples, modality, True, max_detections)
    return {"nms_map@[0.5:0.95]": kept["map@[0.5:0.95]"], "nms_map@0.5": kept["map@0.5"],
            "nms_map@0.75": kept["map@0.75"], "nms_removed": len(result.removed),
            "nms_num_detections": result.num_detections}


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
                             include_negatives: bool = False,
                             max_detections: int = COCO_MAX_DETECTIONS, nms_ap: bool = False,
                             aitod: bool = False) -> dict[str, Any]:
    """JSON-ready AP of each enabled box modality: VOC every-point / 11-point at the run's
    IoU threshold, COCO-style AP@[0.5:0.95] with at most ``max_detections`` boxes per query
    (COCO's 100; a query with more GT boxes than that gets a warning, ``coco.cap_warning``),
    and the 101-point interpolated PR curve. ``nms_ap`` (needs ``include_negatives``) adds
    OVDEval's NMS-AP to the COCO block (:func:`nms_block`); ``aitod`` adds AI-TOD's protocol
    as the block ``aitod`` (:func:`~ovearth_core.analysis.aitod.aitod_block`)."""
    if isinstance(max_detections, bool) or not isinstance(max_detections, int) \
            or max_detections < MIN_MAX_DETECTIONS:
        raise ValueError(f"max_detections must be an integer of at least {MIN_MAX_DETECTIONS},"
                         f" got {max_detections!r}")
    if nms_ap and not include_negatives:
        raise ValueError(NMS_NEEDS_HARD_NEGATIVES)
    out: dict[str, Any] = {"iou_threshold": iou_threshold,
                           "hard_negatives": include_negatives,
                           "max_detections": max_detections, "nms_ap": nms_ap, "aitod": aitod}
    for m in BOX_MODALITIES:
        if m not in modalities:
            out[m] = None
            continue
        cands = candidates(samples, m, include_negatives)
        ranked = cands.ranked()
        curve = pr_curve(ranked, iou_threshold, "voc")
        entry = {"ap_every_point": ap_every_point(curve), "ap_11_point": ap_11_point(curve),
                 "num_gt": curve.num_gt, "num_detections": int(curve.tp.size),
                 "num_tp": int(curve.tp.sum()),
                 # Unscored boxes rank first in input order: AP is arbitrary if these abound.
                 "num_unscored": int(np.isinf(ranked.score).sum())}
        entry["coco"] = coco_ap_from_ranked(cands.ranked(max_detections=max_detections),
                                            max_detections, m)
        entry["coco"].update(cap_check(samples, m, max_detections))
        if nms_ap:
            entry["coco"].update(nms_block(samples, m, max_detections))
        if aitod:
            entry["aitod"] = aitod_block(cands)
        ties = score_ties(ranked, iou_threshold)
        del ranked
        if m == "bbox":  # the devkit's own (legacy-pixel) IoUs: not both sets held at once
            del cands
            entry["voc_devkit"] = voc_devkit_report(samples, m, iou_threshold,
                                                    include_negatives)
        else:
            entry["voc_devkit"] = voc_devkit_report(samples, m, iou_threshold,
                                                    include_negatives, cands)
        entry["score_ties"] = ties
        entry["pr_curve"] = {
            "recall": RECALL_101.tolist(),
            "precision": (interpolated_precision(curve, RECALL_101).tolist()
                          if curve.num_gt else None)}
        out[m] = _none_if_nan(entry)
    return out
