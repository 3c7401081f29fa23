"""COCOeval's AP and AR of ranked detections: per category, per size range, at 1/10/100 boxes.

Each query is one COCO *image* holding one *category* (its annotation's); COCOeval with
``iouType="bbox"`` on such a dataset gives the numbers here, to round-off (the tests run
pycocotools on the same inputs). What COCOeval does, and so what this module does:

* Matching, per query and IoU threshold ``t``, detections in rank order: a detection takes,
  among the GT boxes not yet taken with IoU >= t, the one of highest IoU, the *last* of
  several equal ones (COCOeval's ``if ious[d, g] < iou: continue`` lets an equal IoU replace
  the match so far), preferring a GT box inside the size range to one outside it.
* A GT box's size is its annotation's ``area`` where the ground truth gives one (COCO's
  ``area``, an instance mask's pixel count, as COCOeval ranges a GT by it), else the box's
  own area (w x h; an oriented box's polygon area); a detection's is its box's own area,
  as COCOeval's ``loadRes`` sets a box result's (:func:`size_basis` names both).
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
from .ranking import RECALL_101, Ranked, counted_categories

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


# Rounds of the fixed point before the rest is matched k-th detection by k-th (_sweep).
FIXED_POINT_ROUNDS = 8
IN_IGNORE_REGION = -2  # "matched" to an ignore region (a COCO crowd): the detection is ignored


class Matcher:
    """COCOeval's greedy matching of :class:`Ranked` detections, at any thresholds and range.

    A query's ignore regions (COCO crowds) come after its GT boxes, count as ignored GT
    boxes scored by coverage (intersection / detection area) and are never taken: a
    detection that ends on one is ignored.

    The greedy runs for every query and threshold at once, as a fixed point: each
    detection takes its best candidate among the GT boxes that no detection ranked before
    it (in the same query) holds, and this repeats until nothing changes. A detection's
    choice depends only on those ranked before it, so after round ``n`` the first ``n``
    detections of every query hold COCOeval's choice for good; the only fixed point is
    COCOeval's matching, reached within (longest chain of detections whose choices depend
    on one another) + 1 rounds, each a few numpy calls over all candidate pairs (3 rounds
    on the benchmark). After :data:`FIXED_POINT_ROUNDS` rounds a longer chain is finished
    k-th detection by k-th, all queries and thresholds together (:func:`_sweep`), so no
    chain costs more than one pass per detection of its query.
    """

    def __init__(self, ranked: Ranked) -> None:
        self.ranked = ranked
        row, gt, _, value = ranked.overlapping
        crowd_row, region, _, crowd_value = ranked.covering
        self.n_gt = ranked.gt_area.size
        # Every candidate pair: (ranked detection, GT box or region, IoU or coverage).
        self.row = np.concatenate([row, crowd_row])
        self.value = np.concatenate([value, crowd_value])
        self.is_box = np.concatenate([np.ones(row.size, bool), np.zeros(crowd_row.size, bool)])
        self.col = np.concatenate([gt, region])
        # COCOeval's order of a query's GT: its boxes, then its regions (later wins ties).
        self.order_key = np.where(self.is_box, self.col, self.n_gt + self.col)
        self._base: dict[tuple[float, ...], IntArray] = {}

    def match(self, t: float, gt_ignored: npt.NDArray[np.bool_] | None = None) -> IntArray:
        """GT box id (numbered across queries) taken by each ranked detection,
        :data:`IN_IGNORE_REGION`, or -1, ``(D,)``."""
        return self.match_all((t,), gt_ignored)[0]

    def match_all(self, thresholds: tuple[float, ...],
                  gt_ignored: npt.NDArray[np.bool_] | None = None) -> IntArray:
        """:meth:`match` at each threshold, ``(T, D)``; ``gt_ignored`` ``(G,)``: the GT boxes
        outside the size range (a box inside it beats them and the regions)."""
        pool = np.flatnonzero(self.value >= min(_limits(thresholds), default=np.inf))
        if thresholds not in self._base:
            self._base[thresholds] = self._greedy(thresholds, None, pool)
        base = self._base[thresholds]
        if gt_ignored is None:
            return base
        # Only a detection with an ignored box among two or more candidates can rank them
        # differently: its query's matching is redone, the others' are the base's.
        boxes = pool[self.is_box[pool]]
        n_candidates = np.bincount(self.row[pool], minlength=self.ranked.query.size)
        swayed = boxes[gt_ignored[self.col[boxes]] & (n_candidates[self.row[boxes]] > 1)]
        if swayed.size == 0:
            return base
        redone = np.zeros(len(self.ranked.ious), dtype=bool)
        redone[self.ranked.query[self.row[swayed]]] = True
        rows = redone[self.ranked.query]
        out = base.copy()
        out[:, rows] = self._greedy(thresholds, gt_ignored, pool[rows[self.row[pool]]])[:, rows]
        return out

    def _greedy(self, thresholds: tuple[float, ...], gt_ignored: npt.NDArray[np.bool_] | None,
                pool: IntArray) -> IntArray:
        """The matching ``(T, D)`` from the candidate pairs ``pool`` (each detection's all or
        none; the detections without one get -1)."""
        n_det, n_gt, n_t = self.ranked.query.size, self.n_gt, len(thresholds)
        out = np.full(n_t * n_det, -1, dtype=np.int64)
        inside = self.is_box.copy()
        if gt_ignored is not None:
            inside[self.is_box] = ~gt_ignored[self.col[self.is_box]]
        # Each detection's candidates, least preferred first: outside the range (or a
        # region) before inside, then by IoU, then in COCOeval's GT order.
        pool = pool[np.lexsort((self.order_key[pool], self.value[pool], inside[pool],
                                self.row[pool]))]
        parts = [pool[self.value[pool] >= t] for t in _limits(thresholds)]
        e = np.concatenate(parts) if parts else pool
        if e.size == 0:
            return out.reshape(n_t, n_det)
        level = np.repeat(np.arange(n_t), [p.size for p in parts])
        det = self.row[e]
        seg = level * n_det + det  # one segment per (threshold, detection), in order
        starts = np.flatnonzero(np.concatenate([[True], seg[1:] != seg[:-1]]))
        seg_det = det[starts]
        is_box = self.is_box[e]
        box_key = np.where(is_box, level * n_gt + self.col[e], 0)
        positions = np.arange(e.size)
        holder = np.empty(max(1, n_t * n_gt), dtype=np.int64)
        choice = np.full(starts.size, -1, dtype=np.int64)
        for _ in range(FIXED_POINT_ROUNDS):
            holder.fill(n_det)  # the best-ranked detection holding each GT box
            held = choice >= 0
            held[held] = is_box[choice[held]]
            np.minimum.at(holder, box_key[choice[held]], seg_det[held])
            free = ~is_box | (holder[box_key] >= det)
            last = np.maximum.reduceat(np.where(free, positions, -1), starts)
            new = np.where(last >= starts, last, -1)
            if np.array_equal(new, choice):
                break
            choice = new
        else:
            # A long chain: the first FIXED_POINT_ROUNDS detections of each (threshold,
            # query) are settled; the others are matched k-th by k-th.
            group = level[starts] * len(self.ranked.ious) + self.ranked.query[seg_det]
            _sweep(choice, group, starts, seg_det, is_box, box_key, holder, n_det)
        took = choice >= 0
        pick = choice[took]
        out[seg[starts[took]]] = np.where(is_box[pick], self.col[e[pick]], IN_IGNORE_REGION)
        return out.reshape(n_t, n_det)


def _sweep(choice: IntArray, group: IntArray, starts: IntArray, seg_det: IntArray,
           is_box: npt.NDArray[np.bool_], box_key: IntArray, holder: IntArray,
           n_det: int) -> None:
    """Finish the matching (``choice``, in place) of segments (one per threshold and
    detection, their candidate pairs from ``starts`` on, least preferred first) whose first
    :data:`FIXED_POINT_ROUNDS` of each ``group`` (threshold, query) are settled: the k-th
    segments of every group together, k = FIXED_POINT_ROUNDS, FIXED_POINT_ROUNDS + 1, ...
    (each one's earlier ones settled before it)."""
    order = np.argsort(group, kind="stable")  # each group's segments in rank order
    first = np.searchsorted(group[order], group[order])
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size) - first
    ends = np.append(starts[1:], is_box.size)
    settled = (pos < FIXED_POINT_ROUNDS) & (choice >= 0)
    settled[settled] = is_box[choice[settled]]
    holder.fill(n_det)
    holder[box_key[choice[settled]]] = seg_det[settled]
    by_pos = np.argsort(pos, kind="stable")
    bounds = np.searchsorted(pos[by_pos], np.arange(FIXED_POINT_ROUNDS, pos.max() + 2))
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        seg = by_pos[lo:hi]
        size = ends[seg] - starts[seg]
        offset = np.cumsum(size) - size
        pairs = np.arange(int(size.sum())) + np.repeat(starts[seg] - offset, size)
        free = ~is_box[pairs] | (holder[box_key[pairs]] == n_det)
        last = np.maximum.reduceat(np.where(free, pairs, -1), offset)
        choice[seg] = last  # -1 when none is free
        took = last >= 0
        took[took] = is_box[last[took]]
        holder[box_key[last[took]]] = seg_det[seg[took]]


def _limits(thresholds: tuple[float, ...]) -> list[float]:
    """COCOeval's ``iou = min(t, 1 - 1e-10)``: a match needs IoU >= that."""
    return [min(t, 1 - 1e-10) for t in thresholds]


def _per_category_ap(tp: npt.NDArray[np.bool_], keep: npt.NDArray[np.bool_],
                     category: IntArray, num_gt: IntArray,
                     by_category: IntArray | None = None,
                     sorted_groups: IntArray | None = None) -> FloatArray:
    """101-point AP ``(T, C)`` of each category's kept detections (rank order) at each
    threshold (``tp``, ``keep`` ``(T, D)``); ``nan`` without GT. ``by_category``: the
    detections sorted by category, stably (computed when not given); ``sorted_groups``
    ``(T * D,)``: the group ``k * C + c`` of each detection so sorted at each threshold
    (:func:`_sorted_groups`, computed when not given).

    Level ``l`` of a category gets the highest precision among its detections whose recall
    reaches it, so each detection covers the levels up to its recall: the largest
    precision per (threshold, category, number of levels covered), then a running maximum
    from the top level down. Only true positives are placed: a false positive has the
    recall of the true positive before it (or 0) and no higher precision.
    """
    n_t, n_det = tp.shape
    n_cat = num_gt.size
    if n_cat > 1 and by_category is None:
        by_category = np.argsort(category, kind="stable")
    if sorted_groups is None:
        sorted_groups = _sorted_groups(category, n_cat, n_t, by_category)
    # Threshold k's category c is the group k * C + c: the groups come out sorted.
    if n_cat == 1:  # one category: the rank order is the category's
        flat = np.flatnonzero(keep)
        hits = tp.ravel()[flat]
    else:
        flat = np.flatnonzero(keep[:, by_category])
        hits = tp[:, by_category].ravel()[flat]
    cat = sorted_groups[flat]
    groups = n_t * n_cat
    counts = np.bincount(cat, minlength=groups)
    start = np.cumsum(counts) - counts
    totals = np.tile(num_gt, n_t)
    # Only the groups with GT have an AP (most size ranges hold few categories); only those
    # with a true positive need the 101 levels (the others score 0).
    defined = totals > 0
    csum = np.cumsum(hits)
    at = np.flatnonzero(hits & defined[cat])
    cat_at = cat[at]  # sorted: the groups come out in order
    ctp = csum[at] - np.concatenate([[0], csum])[start[cat_at]]
    precision = ctp / (at - start[cat_at] + 1)
    levels = np.searchsorted(RECALL_101, ctp / totals[cat_at], side="right")
    new_group = np.concatenate([[True], cat_at[1:] != cat_at[:-1]]) if at.size else at
    column = np.cumsum(new_group) - 1
    # Levels down the rows: the running maximum then runs over whole rows at a time. Within
    # a group the true positives come in rank order, so their recall, hence their level,
    # never decreases: each (level, group) cell is one run, its maximum one reduceat.
    best = np.zeros((RECALL_101.size + 1, int(column[-1]) + 1 if at.size else 0))
    if at.size:
        cell = np.flatnonzero(new_group | np.concatenate([[True], levels[1:] != levels[:-1]]))
        best[levels[cell], column[cell]] = np.maximum.reduceat(precision, cell)
    sampled = np.maximum.accumulate(best[:0:-1], axis=0)
    out = np.where(defined, 0.0, np.nan)
    out[cat_at[new_group]] = sampled.mean(axis=0)
    return out.reshape(n_t, n_cat)


def _sorted_groups(category: IntArray, n_cat: int, n_t: int,
                   by_category: IntArray | None) -> IntArray:
    """The group ``k * C + c`` (threshold ``k``, category ``c``) of each detection at each
    threshold, ``(T * D,)``, the detections in ``by_category`` order (rank order with one
    category)."""
    det_cat = category if by_category is None else category[by_category]
    return (np.arange(n_t)[:, None] * n_cat + (det_cat if n_cat > 1 else 0 * det_cat)).ravel()


def _count_per_category(mask: npt.NDArray[np.bool_], category: IntArray, n: int) -> IntArray:
    return np.bincount(category[mask], minlength=n)


def coco_eval(ranked: Ranked, category: IntArray, n_categories: int,
              ranges: tuple[AreaRange, ...] = COCO_RANGES, matcher: Matcher | None = None,
              max_dets: tuple[int, ...] = MAX_DETS) -> dict[str, Any]:
    """AP ``(R, T, C)`` and AR ``(R, T, C, len(max_dets))`` of the ranked detections
    (already capped at ``max_dets[-1]`` per query, COCOeval's ``maxDets``), ``category[q]``
    being query ``q``'s category (``nan`` where a category has no GT in a range), with the
    GT counts ``(R, C)``. One category for every query is COCOeval's ``useCats=0``. AR is
    computed where a key reports it (``nan`` elsewhere): at every cap for ``ranges[0]``,
    at the last cap for the other ranges.
    """
    return coco_evals(ranked, ((category, n_categories),), ranges, matcher, max_dets)[0]


@dataclass
class _Grouping:
    """One grouping of the queries into categories and what :func:`coco_evals` fills in."""

    n: int  # categories
    det_cat: IntArray  # (D,) each ranked detection's category
    gt_cat: IntArray  # (G,) each GT box's category
    by_category: IntArray | None  # the detections sorted by category (None: one category)
    sorted_groups: IntArray  # (T * D,) the groups of the detections so sorted
    group: IntArray  # (T * D,) threshold k's category c is the group k * C + c
    ap: FloatArray  # (R, T, C)
    ar: FloatArray  # (R, T, C, len(max_dets))
    num_gt: IntArray  # (R, C)


def coco_evals(ranked: Ranked, groupings: tuple[tuple[IntArray, int], ...],
               ranges: tuple[AreaRange, ...] = COCO_RANGES, matcher: Matcher | None = None,
               max_dets: tuple[int, ...] = MAX_DETS) -> list[dict[str, Any]]:
    """:func:`coco_eval` of each ``(category, n_categories)`` grouping of the queries, the
    matching of each range done once for all (it does not depend on the categories)."""
    r = ranked
    matcher = matcher or Matcher(r)
    n_t, n_r = len(IOU_THRESHOLDS), len(ranges)
    gt_counts = np.diff(np.append(r.gt_start, r.gt_area.size))
    plans = []
    for category, n_cat in groupings:
        det_cat = category[r.query]
        by_category = None if n_cat == 1 else np.argsort(det_cat, kind="stable")
        plans.append(_Grouping(
            n_cat, det_cat, np.repeat(category, gt_counts), by_category,
            _sorted_groups(det_cat, n_cat, n_t, by_category),
            (np.arange(n_t)[:, None] * n_cat + det_cat).ravel(),
            np.full((n_r, n_t, n_cat), np.nan), np.full((n_r, n_t, n_cat, len(max_dets)), np.nan),
            np.zeros((n_r, n_cat), dtype=np.int64)))
    within = [r.query_rank < cap for cap in max_dets]
    for a, rng in enumerate(ranges):
        gt_in = rng.contains(r.gt_area)
        det_in = rng.contains(r.det_area)
        m = matcher.match_all(IOU_THRESHOLDS, None if gt_in.all() else ~gt_in)
        hit = m >= 0
        tp = np.zeros(m.shape, dtype=bool)
        tp[hit] = gt_in[m[hit]]
        keep = np.where(hit, tp, det_in & (m != IN_IGNORE_REGION))
        # AR where a key reports it: every cap at "all", the last cap at the other ranges.
        caps = range(len(within)) if a == 0 else (len(within) - 1,)
        found_at = {j: (tp & within[j]).ravel() for j in caps}
        for g in plans:
            num_gt = g.num_gt[a] = _count_per_category(gt_in, g.gt_cat, g.n)
            g.ap[a] = _per_category_ap(tp, keep, g.det_cat, num_gt, g.by_category,
                                       g.sorted_groups)
            with np.errstate(divide="ignore", invalid="ignore"):
                for j, found in found_at.items():
                    n_found = _count_per_category(found, g.group, n_t * g.n)
                    g.ar[a, :, :, j] = np.where(num_gt > 0, n_found.reshape(n_t, g.n) / num_gt,
                                                np.nan)
    return [{"ap": g.ap, "ar": g.ar, "num_gt": g.num_gt} for g in plans]


BOX_AREA, POLYGON_AREA, ANNOTATION_AREA = "box area (w x h)", "polygon area", "annotation area"


def size_basis(ranked: Ranked, oriented: bool) -> dict[str, Any]:
    """What the size keys (``*_small`` / ``_medium`` / ``_large``, ``*_by_size``) measure:
    ``ground_truth`` :data:`ANNOTATION_AREA` when every GT box has its annotation's
    ``area``, its own area (:data:`BOX_AREA`, :data:`POLYGON_AREA` for oriented boxes) when
    none has, else both, said so; ``detections`` always their own area; with the counts."""
    own = POLYGON_AREA if oriented else BOX_AREA
    n, given = int(ranked.gt_area.size), ranked.gt_area_given
    gt = (ANNOTATION_AREA if n and given == n else own if given == 0
          else f"{ANNOTATION_AREA} where given, else {own}")
    return {"ground_truth": gt, "detections": own, "num_gt_with_area": given, "num_gt": n}


def _mean(values: FloatArray) -> float | None:
    """Mean of the defined values (COCOeval's ``mean(s[s > -1])``), ``None`` if there are none."""
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else None


def _defined(value: float) -> float | None:
    return None if value != value else value  # nan: undefined


def ar_key(cap: int, prefix: str = "") -> str:
    """``"ar@100"`` (``"mar@100"`` with ``prefix="m"``), ``"ar@all"`` without a cap."""
    return f"{prefix}ar@all" if cap == UNCAPPED else f"{prefix}ar@{cap}"


def stat_block(ev: dict[str, Any], max_dets: tuple[int, ...], prefix: str = ""
               ) -> dict[str, Any]:
    """COCOeval's ``stats[0:12]`` of one :func:`coco_eval` (ranges :data:`COCO_RANGES`
    then :data:`AI_TOD_RANGES`) as named keys, each the mean over the categories with GT
    (one category: COCOeval's ``useCats=0``, the pooled value): ``{prefix}ap@[0.5:0.95]``,
    ``@0.5``, ``@0.75``, ``{prefix}ap_small`` / ``_medium`` / ``_large``,
    ``{prefix}ar@k`` per cap, ``{prefix}ar_small`` / ``_medium`` / ``_large`` (at the last
    cap), ``{prefix}ap_by_size`` (AP@[0.5:0.95] in the AI-TOD bins)."""
    ap, ar = ev["ap"], ev["ar"]
    i50, i75 = IOU_THRESHOLDS.index(0.5), IOU_THRESHOLDS.index(0.75)
    out: dict[str, Any] = {f"{prefix}ap@[0.5:0.95]": _mean(ap[0].mean(axis=0)),
                           f"{prefix}ap@0.5": _mean(ap[0, i50]),
                           f"{prefix}ap@0.75": _mean(ap[0, i75])}
    for a, rng in enumerate(COCO_RANGES[1:], start=1):
        out[f"{prefix}ap_{rng.name}"] = _mean(ap[a].mean(axis=0))
    for j, cap in enumerate(max_dets):
        out[ar_key(cap, prefix)] = _mean(ar[0, :, :, j].mean(axis=0))
    for a, rng in enumerate(COCO_RANGES[1:], start=1):
        out[f"{prefix}ar_{rng.name}"] = _mean(ar[a, :, :, -1].mean(axis=0))
    base = len(COCO_RANGES)
    out[f"{prefix}ap_by_size"] = {rng.name: _mean(ap[base + a].mean(axis=0))
                                  for a, rng in enumerate(AI_TOD_RANGES)}
    return out


def coco_summary(ranked: Ranked, category: IntArray, names: list[str],
                 matcher: Matcher | None = None, max_dets: tuple[int, ...] = MAX_DETS,
                 ev: dict[str, Any] | None = None) -> dict[str, Any]:
    """COCO's mAP as COCO defines it (COCOeval, ``useCats=1``): :func:`stat_block` with
    the prefix ``m`` (``map@[0.5:0.95]``, ``map_small``, ``mar@100``, ``map_by_size`` ...),
    each a mean over the categories with GT; ``per_category``: category name ->
    AP@[0.5:0.95], AP@0.5, AP@0.75 and its GT count. ``ev``: the :func:`coco_eval` of
    this grouping over :data:`COCO_RANGES` + :data:`AI_TOD_RANGES`, when the caller has it.
    """
    if ev is None:
        ev = coco_eval(ranked, category, len(names), COCO_RANGES + AI_TOD_RANGES, matcher,
                       max_dets)
    ap = ev["ap"]
    i50, i75 = IOU_THRESHOLDS.index(0.5), IOU_THRESHOLDS.index(0.75)
    out = stat_block(ev, max_dets, "m")
    out["num_categories"] = int(np.count_nonzero(ev["num_gt"][0]))
    # Plain floats: one numpy call per category and key costs more than the rest here.
    cat_ap, cat50, cat75 = ap[0].mean(axis=0).tolist(), ap[0, i50].tolist(), ap[0, i75].tolist()
    cat_gt = ev["num_gt"][0].tolist()
    out["per_category"] = {
        name: {"ap@[0.5:0.95]": _defined(cat_ap[c]), "ap@0.5": _defined(cat50[c]),
               "ap@0.75": _defined(cat75[c]), "num_gt": cat_gt[c]}
        for c, name in enumerate(names) if cat_gt[c] > 0}
    return out


def coco_categories(ranked: Ranked) -> tuple[IntArray, list[str]]:
    """COCOeval's ``useCats=1`` classes of the ranked queries: ``category[q]`` indexes
    ``names`` (the positive queries' categories, sorted, then ``"(negative queries)"``): a
    positive query's own category, a negative query's the one its phrase names (hard-negative
    view); a negative query whose phrase names no category of these queries goes to the last,
    a class without GT, left out of every mean."""
    names = sorted(set(c for c, neg in zip(ranked.categories, ranked.negative, strict=True)
                       if not neg))
    index = {name: k for k, name in enumerate(names)}
    counted = counted_categories(ranked.categories, ranked.negative, ranked.counted_as)
    category = np.array([index.get(c, len(names)) if c is not None else len(names)
                         for c in counted], dtype=np.int64)
    return category, names + ["(negative queries)"]
