"""COCOeval's AP and AR of ranked detections: per category, per size range, at 1/10/100 boxes.

Each query is one COCO *image* holding one *category* (its annotation's); COCOeval with
``iouType="bbox"`` on such a dataset gives the numbers here, to round-off (the tests run
pycocotools on the same inputs). What COCOeval does, and so what this module does:

* Matching, per query and IoU threshold ``t``, detections in rank order: a detection takes,
  among the GT boxes not yet taken with IoU >= t, the one of highest IoU, the *last* of
  several equal ones (COCOeval's ``if ious[d, g] < iou: continue`` lets an equal IoU replace
  the match so far), preferring a GT box inside the size range to one outside it.
* Size ranges ignore GT boxes outside them, the detections matched to those, and unmatched
  detections outside them. COCO's ranges are closed at both ends (``all`` [0, 1e10],
  ``small`` [0, 32**2], ``medium`` [32**2, 96**2], ``large`` [96**2, 1e10]), so a box of
  area exactly 32**2 is in ``small`` and in ``medium``; the AI-TOD bins of
  :data:`ovearth_core.field_metrics.SIZE_BINS` are closed below and open above.
* AP of a category: the precision envelope sampled at the 101 recall levels
  ``linspace(0, 1, 101)`` (0 beyond the highest recall), averaged over the IoU thresholds
  0.50, 0.55, ..., 0.95 (exact decimals; COCOeval's ``linspace`` gives 0.6000000000000001:
  the tests set its thresholds to ours). AR: the final recall with at most 1, 10 or 100
  detections per query (by score), averaged over thresholds. A category without GT in a
  range is left out of that range's means; one with GT but no detection scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..field_metrics import SIZE_BINS
from ..types import IOU_THRESHOLDS
from .ranking import RECALL_101, Ranked

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
MAX_DETS = (1, 10, 100)
UNCAPPED = int(np.iinfo(np.int64).max)  # a cap no query reaches: AR "ar@all"


@dataclass(frozen=True)
class AreaRange:
    """Boxes of area ``lo <= a <= hi`` (``closed``, COCO) or ``lo <= a < hi`` (AI-TOD)."""

    name: str
    lo: float
    hi: float
    closed: bool

    def contains(self, area: FloatArray) -> npt.NDArray[np.bool_]:
        return (area >= self.lo) & ((area <= self.hi) if self.closed else (area < self.hi))


COCO_RANGES = (AreaRange("all", 0.0, 1e10, True), AreaRange("small", 0.0, 32.0 ** 2, True),
               AreaRange("medium", 32.0 ** 2, 96.0 ** 2, True),
               AreaRange("large", 96.0 ** 2, 1e10, True))
AI_TOD_RANGES = tuple(AreaRange(name, lo * lo, (SIZE_BINS[k + 1][1] ** 2 if k + 1 < len(SIZE_BINS)
                                                else np.inf), False)
                      for k, (name, lo) in enumerate(SIZE_BINS))


IN_IGNORE_REGION = -2  # "matched" to an ignore region (a COCO crowd): the detection is ignored


class Matcher:
    """COCOeval's greedy matching of :class:`Ranked` detections, at any threshold and range.

    A query's ignore regions (COCO crowds) come after its GT boxes, count as ignored GT
    boxes scored by coverage (intersection / detection area) and are never taken: a
    detection that ends on one is ignored. Where no two pairs at or above the threshold
    share a detection or a GT box, every such pair matches whatever the range (decided for
    all queries at once). The other queries are walked detection by detection; a range
    needs its own walk only for the queries with a GT box outside it (and a box inside it
    or an ignore region, which the walk ranks differently).
    """

    def __init__(self, ranked: Ranked) -> None:
        self.ranked = ranked
        self.row, self.gt, self.query, self.value = ranked.overlapping
        self.crowd_row, _, self.crowd_query, self.crowd_value = ranked.covering
        self.has_crowd = np.zeros(len(ranked.ious), dtype=bool)
        self.has_crowd[self.crowd_query] = True
        self._walked: dict[float, tuple[npt.NDArray[np.bool_], IntArray]] = {}

    def _base(self, t: float) -> tuple[npt.NDArray[np.bool_], IntArray]:
        """Queries with shared pairs at ``t``, and the matching ignoring no GT box."""
        if t not in self._walked:
            r = self.ranked
            matched = np.full(r.query.size, -1, dtype=np.int64)
            at, crowd = self.value >= t, self.crowd_value >= t
            shared = np.zeros(len(r.ious), dtype=bool)
            # A detection with two candidates (GT boxes or regions), or a GT box with two.
            rows = np.concatenate([self.row[at], self.crowd_row[crowd]])
            queries = np.concatenate([self.query[at], self.crowd_query[crowd]])
            for ids, owners in ((rows, queries), (self.gt[at], self.query[at])):
                if ids.size:
                    shared[owners[np.bincount(ids)[ids] > 1]] = True
            simple = at & ~shared[self.query]
            matched[self.row[simple]] = self.gt[simple]
            in_region = crowd & ~shared[self.crowd_query]
            matched[self.crowd_row[in_region]] = IN_IGNORE_REGION
            for q in np.flatnonzero(shared).tolist():
                self._walk(q, t, None, matched)
            self._walked[t] = (shared, matched)
        return self._walked[t]

    def match(self, t: float, gt_ignored: npt.NDArray[np.bool_] | None = None) -> IntArray:
        """GT box id (numbered across queries) taken by each ranked detection,
        :data:`IN_IGNORE_REGION`, or -1."""
        shared, matched = self._base(t)
        if gt_ignored is None:
            return matched
        r = self.ranked
        matched = matched.copy()
        for q in np.flatnonzero(shared).tolist():
            ig = gt_ignored[r.gt_start[q]:r.gt_start[q] + r.ious[q].shape[0]]
            if ig.any() and (not ig.all() or self.has_crowd[q]):
                self._walk(q, t, ig, matched)
        return matched

    def _walk(self, q: int, t: float, ignored: npt.NDArray[np.bool_] | None,
              matched: IntArray) -> None:
        """COCOeval's loop over one query's detections (few pairs: plain Python)."""
        r = self.ranked
        rows = r.rows_by_query[q]
        n_gt = r.ious[q].shape[0]
        cols = r.ious[q][:, r.box[rows]]
        if r.cover is not None and r.cover[q].shape[0]:
            cols = np.concatenate([cols, r.cover[q][:, r.box[rows]]])
        cols = cols.T  # (detections in rank order, GT boxes then ignore regions)
        det, gt = np.nonzero(cols >= t)
        candidates: list[list[tuple[int, float]]] = [[] for _ in range(rows.size)]
        for d, g, v in zip(det.tolist(), gt.tolist(), cols[det, gt].tolist(), strict=True):
            candidates[d].append((g, v))
        inside = ([True] * n_gt if ignored is None else (~ignored).tolist())
        inside += [False] * (cols.shape[1] - n_gt)
        free = [True] * cols.shape[1]
        start = int(r.gt_start[q])
        for d, pairs in zip(rows.tolist(), candidates, strict=True):
            best, best_iou, best_inside = -1, -1.0, False
            for g, v in pairs:
                # A GT box inside the range beats one outside (and an ignore region); then
                # the higher IoU, the later box on ties (COCOeval's "<" test).
                if free[g] and (best < 0 or (inside[g] and not best_inside)
                                or (inside[g] == best_inside and v >= best_iou)):
                    best, best_iou, best_inside = g, v, inside[g]
            if best < 0:
                matched[d] = -1
            elif best >= n_gt:
                matched[d] = IN_IGNORE_REGION  # regions are never taken
            else:
                free[best] = False
                matched[d] = start + best


def _per_category_ap(tp: npt.NDArray[np.bool_], keep: npt.NDArray[np.bool_],
                     category: IntArray, num_gt: IntArray) -> FloatArray:
    """101-point AP ``(C,)`` of each category's kept detections (rank order); ``nan``
    without GT.

    Level ``l`` of a category gets the highest precision among its detections whose recall
    reaches it, so each detection covers the levels up to its recall: the largest
    precision per (category, number of levels covered), then a running maximum from the
    top level down.
    """
    n_cat = num_gt.size
    rows = np.flatnonzero(keep)
    order = rows[np.argsort(category[rows], kind="stable")]
    cat = category[order]
    hits = tp[order].astype(np.int64)
    start = np.searchsorted(cat, np.arange(n_cat))
    csum = np.cumsum(hits)
    before = np.concatenate([[0], csum])[start]
    ctp = csum - before[cat]
    n = np.arange(cat.size) - start[cat] + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = ctp / n
        recall = ctp / num_gt[cat]
    levels = np.searchsorted(RECALL_101, recall, side="right")
    best = np.zeros((n_cat, RECALL_101.size + 1))
    np.maximum.at(best, (cat, levels), precision)
    sampled = np.maximum.accumulate(best[:, :0:-1], axis=1)[:, ::-1]
    return np.where(num_gt > 0, sampled.mean(axis=1), np.nan)


def _count_per_category(mask: npt.NDArray[np.bool_], category: IntArray, n: int) -> IntArray:
    return np.bincount(category[mask], minlength=n)


def coco_eval(ranked: Ranked, category: IntArray, n_categories: int,
              ranges: tuple[AreaRange, ...] = COCO_RANGES, matcher: Matcher | None = None,
              max_dets: tuple[int, ...] = MAX_DETS) -> dict[str, Any]:
    """AP ``(R, T, C)`` and AR ``(T, C, len(max_dets))`` at range ``"all"`` of the ranked
    detections (already capped at ``max_dets[-1]`` per query, COCOeval's ``maxDets``),
    ``category[q]`` being query ``q``'s category (``nan`` where a category has no GT in a
    range), with the GT counts ``(R, C)``.

    ``ranges[0]`` must be the range of AR (COCO's ``all``).
    """
    r = ranked
    matcher = matcher or Matcher(r)
    det_cat = category[r.query]
    gt_cat = np.repeat(category, np.diff(np.append(r.gt_start, r.gt_area.size)))
    ap = np.full((len(ranges), len(IOU_THRESHOLDS), n_categories), np.nan)
    ar = np.full((len(IOU_THRESHOLDS), n_categories, len(max_dets)), np.nan)
    num_gt = np.zeros((len(ranges), n_categories), dtype=np.int64)
    for a, rng in enumerate(ranges):
        gt_in = rng.contains(r.gt_area)
        det_in = rng.contains(r.det_area)
        num_gt[a] = _count_per_category(gt_in, gt_cat, n_categories)
        ignored = None if gt_in.all() else ~gt_in
        for k, t in enumerate(IOU_THRESHOLDS):
            m = matcher.match(t, ignored)
            hit = m >= 0
            tp = np.zeros(hit.size, dtype=bool)
            tp[hit] = gt_in[m[hit]]
            keep = np.where(hit, tp, det_in & (m != IN_IGNORE_REGION))
            ap[a, k] = _per_category_ap(tp, keep, det_cat, num_gt[a])
            if a == 0:
                with np.errstate(divide="ignore", invalid="ignore"):
                    for j, cap in enumerate(max_dets):
                        found = _count_per_category(tp & (r.query_rank < cap), det_cat,
                                                    n_categories)
                        ar[k, :, j] = np.where(num_gt[0] > 0, found / num_gt[0], np.nan)
    return {"ap": ap, "ar": ar, "num_gt": num_gt}


def _mean(values: FloatArray) -> float | None:
    """Mean of the defined values (COCOeval's ``mean(s[s > -1])``), ``None`` if there are none."""
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else None


def coco_summary(ranked: Ranked, category: IntArray, names: list[str],
                 matcher: Matcher | None = None, max_dets: tuple[int, ...] = MAX_DETS,
                 ) -> dict[str, Any]:
    """COCO's mAP as COCO defines it, per category, by size and recall at ``max_dets``
    boxes (COCOeval's ``maxDets``, default 1/10/100).

    ``map@...``: means over the categories with GT of each category's AP; ``per_category``:
    category name -> AP@[0.5:0.95], AP@0.5, AP@0.75 and its GT count; ``ap_small`` ...:
    COCO's size ranges; ``ar@k``; ``ap_by_size``: AP@[0.5:0.95] in the AI-TOD bins.
    """
    ranges = COCO_RANGES + AI_TOD_RANGES
    ev = coco_eval(ranked, category, len(names), ranges, matcher, max_dets)
    ap, ar = ev["ap"], ev["ar"]
    i50, i75 = IOU_THRESHOLDS.index(0.5), IOU_THRESHOLDS.index(0.75)
    per_cat = ap[0].mean(axis=0)
    out: dict[str, Any] = {
        "map@[0.5:0.95]": _mean(per_cat),
        "map@0.5": _mean(ap[0, i50]),
        "map@0.75": _mean(ap[0, i75]),
        "num_categories": int(np.count_nonzero(ev["num_gt"][0])),
    }
    for a, rng in enumerate(COCO_RANGES[1:], start=1):
        out[f"ap_{rng.name}"] = _mean(ap[a].mean(axis=0))
    for j, cap in enumerate(max_dets):
        out["ar@all" if cap == UNCAPPED else f"ar@{cap}"] = _mean(ar[:, :, j].mean(axis=0))
    base = len(COCO_RANGES)
    out["ap_by_size"] = {rng.name: _mean(ap[base + a].mean(axis=0))
                         for a, rng in enumerate(AI_TOD_RANGES)}
    out["per_category"] = {
        name: {"ap@[0.5:0.95]": _mean(per_cat[c:c + 1]), "ap@0.5": _mean(ap[0, i50, c:c + 1]),
               "ap@0.75": _mean(ap[0, i75, c:c + 1]), "num_gt": int(ev["num_gt"][0, c])}
        for c, name in enumerate(names) if ev["num_gt"][0, c] > 0}
    return out
