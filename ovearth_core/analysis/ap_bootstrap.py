"""Average precision of a bootstrap resample: AP and per-category mAP with query multiplicities.

AP ranks boxes across queries, so it is no sum of per-query pieces and the ``c @ X``
bootstrap of :mod:`ovearth_core.analysis.compare` cannot carry it. A resample is still a
vector ``c`` of query multiplicities (the same draw as the additive metrics', per query or
per image expanded to its queries). Duplicating a query changes nothing in its matching:
at each IoU threshold every detection keeps its true/false-positive flag (VOC's, COCO's and
the devkit's matchings are all per query). So a resample's AP is the AP of the once-ranked
detections with weight ``w_d = c[query(d)]`` and ``num_gt = sum_q c_q * gt_q``: its points
are the weighted cumulative sums ``(sum w tp, sum w)`` after each detection.

Why evaluating only there, with weight, equals brute-force duplication (each query repeated
``c_q`` times, the copies of a detection adjacent in rank order): within the block of the
``w`` copies of a true positive, precision ``(T + j) / (n + j)`` and recall rise with ``j``,
so every point before the block's last one has lower precision *and* lower recall than it;
within a block of false positives recall stays and precision falls, so each point is
below the point before the block (a block at the very start sits at precision 0). A
point dominated so never sets the precision envelope (the best precision at this or any
higher recall), and every interpolation here reads only that envelope: every-point AP is
its area, the 11- and 101-point APs its value at fixed recall levels (0 beyond the highest
recall). A query drawn 0 times gives weight 0: its detections repeat the point before
(or sit at 0 / 0, counted as precision 0), which moves nothing. By the same argument a
false positive's point is below the point before it, so only the points after true
positives are evaluated (the running weight sum still counts every detection). Recall
``T / num_gt`` and precision ``T / n`` are ratios of the same integers as the brute force's,
so the two agree to round-off in the sum of every-point AP (1e-12 in the tests).

Tie rule: detections are ranked once, exactly as the observed AP ranks them (stable order
of equal scores: query order, then box order; the devkit's own sort for DOTA's mAP), and
each detection's copies count as one block at its place. That is the brute force in which
every query's copies follow it directly in query order, as long as no two boxes of one
query share a score (the copies of tied boxes of one query would interleave there; the
order of tied detections is arbitrary anyway, see :func:`~ovearth_core.analysis.ap.score_ties`).

Per-category mAP: each category's AP in the resample, then the mean over the categories
with GT in that resample; a category none of whose GT queries was drawn is left out, as
COCOeval and DOTA_devkit leave out a class without GT. The category a hard negative's boxes
count in (the one its phrase names) is that of the full query set, fixed for every resample.
A resample without any GT leaves its AP undefined (``nan``).

The protocols an option adds (issue 50) resample the same way where their number is a COCO
mAP of per-query curves: NMS-AP's ``coco.nms_map@[0.5:0.95]`` and ``@0.5`` (the suppression
is done once, on the full submission: it is per image, so a drawn image keeps exactly the
boxes it kept, and a duplicated image is an image of its own, suppressed the same way) and
AI-TOD's ``aitod.map@[0.5:0.95]`` (COCO's mAP at range all, 1,500 boxes per query). Their
other numbers (the size ranges, oLRP) have no resampled curves (:data:`RESAMPLED_OPTIONAL`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..field_metrics import box_fields
from ..labels import AP_METRICS, AP_OPTIONAL
from ..options import COCO_MAX_DETECTIONS
from ..types import IOU_THRESHOLDS, Sample
from .aitod import AITOD_MAX_DETS
from .ap import (
    DEVKIT_RECALL_11,
    RECALL_11,
    _first_hits,
    _voc_hits,
    _voc_tp,
    average_precision_report,
)
from .coco import COCO_RANGES, IN_IGNORE_REGION, Matcher
from .nms_ap import suppress
from .ranking import RECALL_101, Candidates, candidates, counted_categories, ignore_regions
from .sweep import BOX_MODALITIES

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# Resamples x detections of one array in one pass (several such arrays live at once).
_BUDGET = 1 << 20
EVERY_POINT = None  # the interpolation of every-point AP (no recall levels)
# From this many points on, a sampled AP searches every row at once (_first_reaching); below,
# it counts the points under each level (_points_below). Same numbers; speed only.
_SEARCH_MIN_POINTS = 128
# The optional protocols' keys that have resampled curves, and the option adding each
# (the others of labels.AP_OPTIONAL have none: no interval).
RESAMPLED_OPTIONAL = {"coco.nms_map@[0.5:0.95]": "nms_ap", "coco.nms_map@0.5": "nms_ap",
                      "aitod.map@[0.5:0.95]": "aitod"}
_OPTIONAL_FAMILY = {"nms_ap": "nms_categories", "aitod": "aitod_categories"}


@dataclass(frozen=True)
class Curve:
    """One precision/recall curve: its ranked detections' queries (``query`` ``(D,)``,
    indices into :attr:`APCurves.query_ids`) and their true-positive flags."""

    query: IntArray
    tp: BoolArray


@dataclass(frozen=True)
class Group:
    """One category (or, pooled, every query): the GT count of each of its queries that has
    GT (``gt_query``, ``gt_count``) and one curve per IoU threshold; its AP is the mean of
    its curves' APs."""

    gt_query: IntArray
    gt_count: FloatArray
    curves: tuple[Curve, ...]


@dataclass(frozen=True)
class Family:
    """Groups ranked and matched one way, each curve interpolated in each of ``levels``
    (recall levels, or :data:`EVERY_POINT`)."""

    levels: tuple[FloatArray | None, ...]
    groups: tuple[Group, ...]


@dataclass(frozen=True)
class APCurves:
    """What a resample's AP numbers of one box modality need: the chosen queries' ids
    (``query_ids``) and the families ``voc`` (pooled, the run's IoU threshold), ``coco``
    (pooled, ten thresholds), ``coco_categories`` and ``devkit`` (per category), and when
    their option asked for them ``nms_categories`` (NMS-AP) and ``aitod_categories``
    (AI-TOD's mAP)."""

    query_ids: tuple[str, ...]
    families: dict[str, Family]


@dataclass(frozen=True)
class APRun:
    """One submission's :func:`average_precision_report` and the curves of each modality
    it has (what :func:`ap_values` reweights)."""

    report: dict[str, Any]
    curves: dict[str, APCurves]


def ap_run(samples: Sequence[Sample], iou_threshold: float = 0.5,
           modalities: Sequence[str] = BOX_MODALITIES, include_negatives: bool = False,
           max_detections: int = COCO_MAX_DETECTIONS,
           report: dict[str, Any] | None = None, nms_ap: bool = False,
           aitod: bool = False) -> APRun:
    """The observed AP report and the curves to resample, with the very same options
    (``report``: that :func:`average_precision_report` of these samples and options, when
    the caller has it, e.g. cached). NMS-AP and AI-TOD (``nms_ap``, ``aitod``) add the
    curves of their keys in :data:`RESAMPLED_OPTIONAL`."""
    if report is None:
        report = average_precision_report(samples, iou_threshold, modalities,
                                          include_negatives, max_detections, nms_ap, aitod)
    curves = {m: ap_curves(samples, m, iou_threshold, include_negatives, max_detections,
                           nms_ap, aitod)
              for m in BOX_MODALITIES if m in modalities}
    return APRun(report, curves)


def chosen_queries(samples: Sequence[Sample], modality: str,
                   include_negatives: bool) -> list[int]:
    """Indices of the samples :func:`~ovearth_core.analysis.ranking.candidates` keeps (its
    query numbering): positives with GT boxes or ignore regions, negatives when asked."""
    return [i for i, s in enumerate(samples)
            if (include_negatives if s.negative
                else len(box_fields(s, modality)[0]) + len(ignore_regions(s, modality)) > 0)]


def ap_curves(samples: Sequence[Sample], modality: str, iou_threshold: float = 0.5,
              include_negatives: bool = False,
              max_detections: int = COCO_MAX_DETECTIONS, nms_ap: bool = False,
              aitod: bool = False) -> APCurves:
    """The curves of every AP number of :data:`~ovearth_core.labels.AP_METRICS` but the
    optional ones, and of those of :data:`RESAMPLED_OPTIONAL` that ``nms_ap`` and ``aitod``
    ask for, ranked and matched as :func:`average_precision_report` does with these
    options."""
    chosen = chosen_queries(samples, modality, include_negatives)
    cands = candidates(samples, modality, include_negatives)
    if len(cands.ious) != len(chosen):  # the two filters must agree
        raise AssertionError("ap_curves: query selection differs from candidates()")
    ids = tuple(samples[i].sample_id for i in chosen)
    families = {"voc": _voc_family(cands, iou_threshold), **_coco_families(cands, max_detections)}
    dev = (candidates(samples, modality, include_negatives, legacy_pixel=True)
           if modality == "bbox" else cands)
    families["devkit"] = _devkit_family(dev, iou_threshold)
    if aitod:
        families["aitod_categories"] = _coco_families(
            cands, AITOD_MAX_DETS[-1])["coco_categories"]
    if nms_ap:
        # The suppression removes predicted boxes only: the same queries are chosen.
        kept = candidates(suppress(samples, modality).samples, modality, True)
        if len(kept.ious) != len(chosen) or not include_negatives:
            raise AssertionError("ap_curves: NMS-AP is of the hard-negative view's queries")
        families["nms_categories"] = _coco_families(kept, max_detections)["coco_categories"]
    return APCurves(ids, families)


def _group(num_gt: IntArray, curves: tuple[Curve, ...]) -> Group:
    q = np.flatnonzero(num_gt > 0)
    return Group(q, num_gt[q].astype(np.float64), curves)


def _voc_family(cands: Candidates, threshold: float) -> Family:
    ranked = cands.ranked()
    curve = Curve(ranked.query, _voc_tp(ranked, threshold))
    return Family((EVERY_POINT, RECALL_11), (_group(cands.num_gt, (curve,)),))


def _coco_families(cands: Candidates, max_detections: int) -> dict[str, Family]:
    """COCOeval's matching at range ``all`` (as :func:`~ovearth_core.analysis.coco.coco_eval`
    does it), pooled and per category."""
    r = cands.ranked(max_detections=max_detections)
    matcher = Matcher(r)
    everything = COCO_RANGES[0]
    gt_in = everything.contains(r.gt_area)
    det_in = everything.contains(r.det_area)
    ignored = None if gt_in.all() else ~gt_in
    n_q = cands.num_gt.size  # every query ranked, in the candidates' order
    gt_query = np.repeat(np.arange(n_q), cands.num_gt)
    num_gt = np.bincount(gt_query[gt_in], minlength=n_q)
    names = sorted({c for c, neg in zip(r.categories, r.negative, strict=True) if not neg})
    index = {name: k for k, name in enumerate(names)}
    counted = counted_categories(r.categories, r.negative, r.counted_as)
    category = np.array([index.get(c, -1) if c is not None else -1 for c in counted],
                        dtype=np.int64)
    det_cat = category[r.query] if r.query.size else np.zeros(0, dtype=np.int64)
    pooled: list[Curve] = []
    per_cat: list[list[Curve]] = [[] for _ in names]
    last_keep: BoolArray | None = None
    queries: dict[int, IntArray] = {}
    for t in IOU_THRESHOLDS:
        m = matcher.match(t, ignored)
        hit = m >= 0
        tp = np.zeros(hit.size, dtype=bool)
        tp[hit] = gt_in[m[hit]]
        keep = np.where(hit, tp, det_in & (m != IN_IGNORE_REGION))
        if last_keep is None or not np.array_equal(keep, last_keep):
            # Thresholds keeping the same detections share their query arrays (and so
            # their weights, computed once per pass).
            last_keep = keep
            queries = {-1: r.query[keep]}
            for k in range(len(names)):
                queries[k] = r.query[keep & (det_cat == k)]
        pooled.append(Curve(queries[-1], tp[keep]))
        for k in range(len(names)):
            per_cat[k].append(Curve(queries[k], tp[keep & (det_cat == k)]))
    groups = []
    for k in range(len(names)):
        gt_k = np.where(category == k, num_gt, 0)
        if gt_k.any():
            groups.append(_group(gt_k, tuple(per_cat[k])))
    return {"coco": Family((RECALL_101,), (_group(num_gt, tuple(pooled)),)),
            "coco_categories": Family((RECALL_101,), tuple(groups))}


def _devkit_family(cands: Candidates, threshold: float) -> Family:
    """DOTA_devkit's ``voc_eval`` per category (as
    :func:`~ovearth_core.analysis.ap.voc_devkit_report`): each category sorted on its own,
    IoU > t, difficult GT boxes out of ``npos`` and detections on them out of the curve."""
    positive = {c for c, neg in zip(cands.categories, cands.negative, strict=True) if not neg}
    by_cat: dict[str, list[int]] = {}
    counted = counted_categories(cands.categories, cands.negative, cands.counted_as)
    for q, name in enumerate(counted):
        if name in positive:
            by_cat.setdefault(name, []).append(q)
    groups = []
    for name in sorted(by_cat):
        qs = np.asarray(by_cat[name], dtype=np.int64)
        ranked = cands.ranked("devkit", qs.tolist())
        hit, best_gt = _voc_hits(ranked, threshold, strict=True)
        difficult = ranked.gt_difficult
        if difficult is None or difficult.size == 0:
            difficult = np.zeros(max(int(cands.num_gt[qs].sum()), 1), dtype=bool)
        keep = ~(hit & difficult[np.maximum(best_gt, 0)])
        tp = _first_hits(hit & keep, best_gt)
        per_query = cands.num_gt[qs]
        owner = np.repeat(np.arange(qs.size), per_query)
        hard = np.bincount(owner[difficult[:owner.size]], minlength=qs.size)
        num_gt = np.zeros(cands.num_gt.size, dtype=np.int64)
        num_gt[qs] = per_query - hard
        if num_gt.any():
            groups.append(_group(num_gt, (Curve(qs[ranked.query[keep]], tp[keep]),)))
    return Family((EVERY_POINT, DEVKIT_RECALL_11), tuple(groups))


# --- weighted AP ----------------------------------------------------------------------------

def curve_ap(curve: Curve, counts: FloatArray, num_gt: FloatArray,
             levels: Sequence[FloatArray | None], cache: dict[str, Any] | None = None,
             ) -> FloatArray:
    """AP ``(len(levels), R)`` of one curve in each interpolation for the ``(R, Q)`` query
    multiplicities ``counts`` (``num_gt`` ``(R,)``, > 0). ``cache`` (one pass's) keeps the
    weights and their running sum of the last query array seen."""
    r = counts.shape[0]
    if curve.query.size == 0:
        return np.zeros((len(levels), r))
    # Only the points after true positives can set the envelope: a false positive keeps
    # the recall of the point before it at a lower precision (see the module docstring).
    hits = np.flatnonzero(curve.tp)
    if hits.size == 0:
        return np.zeros((len(levels), r))
    w, n = _weights(curve.query, counts, cache)
    ctp = np.cumsum(w[:, hits], axis=1)
    n = n[:, hits]
    precision = np.divide(ctp, n, out=np.zeros_like(ctp), where=n > 0)
    env = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
    out = np.empty((len(levels), r))
    for i, lv in enumerate(levels):
        if lv is None:  # area under the envelope: each point's recall step times it
            recall = ctp / num_gt[:, None]
            out[i] = np.sum(np.diff(recall, axis=1, prepend=0.0) * env, axis=1)
            continue
        # Level l reads the envelope at the first point whose recall reaches it (0 past
        # the last point): found by one search of every row when points are many, else by
        # counting the points below each level (fewer, smaller calls).
        if ctp.shape[1] >= _SEARCH_MIN_POINTS:
            first = _first_reaching(ctp, _fewest_reaching(lv, num_gt))
        else:
            first = _points_below(ctp / num_gt[:, None], lv)
        padded = np.hstack([env, np.zeros((r, 1))])
        out[i] = np.take_along_axis(padded, first, axis=1).mean(axis=1)
    return out


def _points_below(recall: FloatArray, levels: FloatArray) -> IntArray:
    """``(R, L)``: per row, how many points have recall below each level (recall
    non-decreasing along the row): those covering fewer than ``l + 1`` levels."""
    r, n_lv = recall.shape[0], levels.size
    covered = np.searchsorted(levels, recall, side="right")
    flat = (covered + (n_lv + 1) * np.arange(r)[:, None]).ravel()
    return np.cumsum(np.bincount(flat, minlength=r * (n_lv + 1)).reshape(r, n_lv + 1),
                     axis=1)[:, :n_lv]


def _fewest_reaching(levels: FloatArray, num_gt: FloatArray) -> FloatArray:
    """``(R, L)``: the least whole ``k`` with ``k / num_gt >= level`` as floating point
    computes it (the recall test of :func:`~ovearth_core.analysis.ap.interpolated_precision`;
    ``k / g`` never decreases with ``k``, and ``ceil(level * g)`` is at most one off)."""
    g = num_gt[:, None]
    k = np.ceil(levels[None, :] * g)
    k = np.where((k - 1) / g >= levels, k - 1, k)
    return np.where(k / g < levels, k + 1, k)


def _first_reaching(ctp: FloatArray, fewest: FloatArray) -> IntArray:
    """``(R, L)``: per row, the first column whose ``ctp`` (whole, non-decreasing along the
    row) reaches ``fewest`` (``P`` when none does). One search of the rows laid end to end,
    each shifted by a whole number above every count (exact in float64)."""
    r, p = ctp.shape
    shift = float(max(ctp[:, -1].max(initial=0.0), fewest.max(initial=0.0)) + 1.0)
    offset = shift * np.arange(r)[:, None]
    found = np.searchsorted((ctp + offset).ravel(), (fewest + offset).ravel(), side="left")
    return found.reshape(fewest.shape) - p * np.arange(r)[:, None]


def _weights(query: IntArray, counts: FloatArray, cache: dict[str, Any] | None,
             ) -> tuple[FloatArray, FloatArray]:
    if cache is not None and cache.get("query") is query:
        return cache["w"], cache["n"]
    w = counts[:, query]
    n = np.cumsum(w, axis=1)
    if cache is not None:
        cache.update(query=query, w=w, n=n)
    return w, n


def family_ap(family: Family, counts: FloatArray) -> tuple[FloatArray, BoolArray]:
    """Each group's AP per curve ``(G, T, len(levels), R)`` (``nan`` where the group has no
    GT; every group of a family has its ``T`` curves, one per IoU threshold) and whether it
    has GT ``(G, R)``, for multiplicities ``counts`` ``(R, Q)``."""
    r = counts.shape[0]
    n_t = len(family.groups[0].curves) if family.groups else 0
    ap = np.full((len(family.groups), n_t, len(family.levels), r), np.nan)
    has = np.zeros((len(family.groups), r), dtype=bool)
    for g, group in enumerate(family.groups):
        num_gt = counts[:, group.gt_query] @ group.gt_count
        has[g] = num_gt > 0
        safe = np.where(has[g], num_gt, 1.0)
        d = max((c.query.size for c in group.curves), default=0)
        step = max(1, _BUDGET // max(d, 1))
        for start in range(0, r, step):
            stop = min(start + step, r)
            cache: dict[str, Any] = {}
            for t, curve in enumerate(group.curves):
                ap[g, t, :, start:stop] = curve_ap(curve, counts[start:stop],
                                                   safe[start:stop], family.levels, cache)
        ap[g][:, :, ~has[g]] = np.nan
    return ap, has


def _mean_with_gt(values: FloatArray, has: BoolArray) -> FloatArray:
    """Mean over groups (axis 0) of those with GT (``nan`` where none has)."""
    n = has.sum(axis=0)
    total = np.where(has, values, 0.0).sum(axis=0)
    return np.divide(total, n, out=np.full(n.shape, np.nan), where=n > 0)


def resampled_keys(curves: APCurves) -> set[str]:
    """The AP keys whose resampled values :func:`ap_values` gives for ``curves``."""
    return (set(AP_METRICS) - set(AP_OPTIONAL)) | {
        key for key, option in RESAMPLED_OPTIONAL.items()
        if _OPTIONAL_FAMILY[option] in curves.families}


def ap_values(curves: APCurves, counts: FloatArray,
              keys: Sequence[str] | None = None) -> dict[str, FloatArray]:
    """Every AP number of :data:`~ovearth_core.labels.AP_METRICS` but the optional ones
    (:data:`~ovearth_core.labels.AP_OPTIONAL`), and those of :data:`RESAMPLED_OPTIONAL`
    whose curves ``curves`` holds, ``(R,)`` for the ``(R, Q)`` multiplicities of
    :attr:`APCurves.query_ids` (``nan`` where undefined); all ones give the observed
    :func:`average_precision_report` numbers (to round-off). ``keys``: only these (each
    family is weighted only when a key asks for it)."""
    fam = curves.families
    done: dict[str, tuple[FloatArray, BoolArray]] = {}

    def of(name: str) -> tuple[FloatArray, BoolArray]:
        if name not in done:
            done[name] = family_ap(fam[name], counts)
        return done[name]

    i50 = IOU_THRESHOLDS.index(0.5)

    def cat_map(name: str, threshold: int | None) -> FloatArray:
        ap, has = of(name)
        per = ap[:, :, 0].mean(axis=1) if threshold is None else ap[:, threshold, 0]
        return _mean_with_gt(per, has)

    compute = {
        "ap_every_point": lambda: of("voc")[0][0, 0, 0],
        "ap_11_point": lambda: of("voc")[0][0, 0, 1],
        "coco.ap@[0.5:0.95]": lambda: of("coco")[0][0, :, 0].mean(axis=0),
        "coco.map@[0.5:0.95]": lambda: cat_map("coco_categories", None),
        "coco.map@0.5": lambda: cat_map("coco_categories", i50),
        "voc_devkit.map_11_point": lambda: _mean_with_gt(of("devkit")[0][:, 0, 1],
                                                         of("devkit")[1]),
        "voc_devkit.map_every_point": lambda: _mean_with_gt(of("devkit")[0][:, 0, 0],
                                                            of("devkit")[1])}
    # The table and this function must name the same numbers.
    if set(compute) != set(AP_METRICS) - set(AP_OPTIONAL):
        raise AssertionError("ap_values does not cover AP_METRICS")
    if "nms_categories" in fam:
        compute["coco.nms_map@[0.5:0.95]"] = lambda: cat_map("nms_categories", None)
        compute["coco.nms_map@0.5"] = lambda: cat_map("nms_categories", i50)
    if "aitod_categories" in fam:
        compute["aitod.map@[0.5:0.95]"] = lambda: cat_map("aitod_categories", None)
    if set(compute) != resampled_keys(curves):
        raise AssertionError("ap_values and resampled_keys name other keys")
    return {key: compute[key]() for key in (compute if keys is None else keys)}
