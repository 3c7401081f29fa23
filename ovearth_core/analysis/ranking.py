"""Detections of one box modality ranked by confidence over all queries (AP's input).

Each chosen query -- a positive with usable GT in the modality, or with
``include_negatives`` a negative too -- has its IoU matrix computed once. Boxes without a
score count as score ``+inf`` (ranked first), as in :mod:`ovearth_core.analysis.sweep`.
Ties in score keep query order, then box order (a stable sort, as COCOeval and the PASCAL
VOC Matlab devkit do); ``order="devkit"`` sorts as DOTA_devkit's and the Python VOC
devkits' ``np.argsort(-confidence)`` does (numpy's default, unstable sort, whose order of
tied scores depends on the numpy build and CPU, as the devkits' does).

Coordinates are continuous (a box from x1 to x2 is x2 - x1 wide) unless ``legacy_pixel``
asks for the old VOC convention (x2 - x1 + 1, axis-aligned boxes only). Ignore regions (COCO
crowds, ``Sample.gt_ignore_boxes`` / ``gt_ignore_obbs``) are kept as each detection's share
inside each region (``cover``, intersection / detection area, as COCOeval measures a crowd);
only the COCO matching uses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ..field_metrics import box_fields
from ..geometry import areas, coverage_matrix, iou_matrices
from ..types import Sample
from .sweep import score_key

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
RECALL_101 = np.linspace(0.0, 1.0, 101)


@dataclass(frozen=True)
class Ranked:
    """Detections of one modality ranked over the chosen queries.

    ``ious[q]`` is the ``(G_q, P_q)`` IoU matrix of query ``q`` (``G_q = 0`` for negative
    queries in the hard-negative view); ``query``, ``box``, ``score`` and ``det_area``
    ``(D,)`` give each ranked detection; ``categories`` and ``negative`` ``(Q,)`` each
    query's category and polarity; ``gt_area`` the areas of every GT box, query by query.
    """

    ious: list[FloatArray]
    query: IntArray
    box: IntArray
    score: FloatArray
    num_gt: int
    categories: tuple[str, ...]
    negative: npt.NDArray[np.bool_]
    gt_area: FloatArray
    det_area: FloatArray
    # (R_q, P_q) share of each predicted box inside each ignore region of query q.
    cover: list[FloatArray] | None = None
    # What the IoU matrices say per detection, computed once by the Candidates the ranking
    # came from (shared by every ranking of them): ``source`` ``(D,)`` is each ranked
    # detection's position in file order there.
    shared: DetectionOverlaps | None = None
    source: IntArray | None = None
    # DOTA's difficult flag of every GT box (like ``gt_area``), and the category each query's
    # boxes count in per category: its own for a positive, the category its phrase names for
    # a negative (None: no category; see :func:`named_categories`).
    gt_difficult: npt.NDArray[np.bool_] | None = None
    counted_as: tuple[str | None, ...] | None = None
    # How many of the GT boxes have their annotation's ``area`` as ``gt_area`` (the others:
    # their own area, w x h or the polygon's): see :func:`size_basis`.
    gt_area_given: int = 0

    @cached_property
    def best_gt(self) -> tuple[IntArray, FloatArray]:
        """Each ranked detection's GT box of highest IoU (the first of equal ones; ids
        numbered across queries, -1 without GT) and that IoU (0 without GT), ``(D,)``."""
        if self.shared is None or self.source is None:
            return _best_gt(self.ious, self.rows_by_query, self.box, self.gt_start,
                            self.query.size)
        local, value = self.shared.best_gt[self.source], self.shared.best_iou[self.source]
        return np.where(local >= 0, self.gt_start[self.query] + local, -1), value

    @cached_property
    def rows_by_query(self) -> list[IntArray]:
        """Ranked positions of each query's detections, best first."""
        order = np.argsort(self.query, kind="stable")
        bounds = np.searchsorted(self.query[order], np.arange(len(self.ious) + 1))
        return [order[bounds[q]:bounds[q + 1]] for q in range(len(self.ious))]

    @cached_property
    def gt_start(self) -> IntArray:
        """Id of each query's first GT box (ids numbered across queries), ``(Q,)``."""
        counts = np.array([m.shape[0] for m in self.ious], dtype=np.int64)
        return np.cumsum(counts) - counts

    @cached_property
    def query_rank(self) -> IntArray:
        """Position of each ranked detection among its query's, best first, ``(D,)``."""
        order = np.argsort(self.query, kind="stable")
        start = np.searchsorted(self.query[order], self.query[order])
        rank = np.empty(self.query.size, dtype=np.int64)
        rank[order] = np.arange(order.size) - start
        return rank

    @cached_property
    def overlapping(self) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
        """``(row, gt, query, iou)`` of every ranked detection and GT box with IoU > 0
        (GT ids numbered across queries)."""
        if self.shared is None or self.source is None:
            return _pairs(self.ious, self.rows_by_query, self.box, self.gt_start)
        det, gt, value = self.shared.overlaps
        row = np.full(self.shared.query.size, -1, dtype=np.int64)
        row[self.source] = np.arange(self.source.size)
        keep = row[det] >= 0
        rows = row[det[keep]]
        query = self.query[rows]
        return rows, self.gt_start[query] + gt[keep], query, value[keep]

    @cached_property
    def covering(self) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
        """``(row, region, query, cover)`` of every ranked detection inside an ignore region
        (cover > 0; region ids numbered across queries)."""
        if self.cover is None:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, np.zeros(0)
        counts = np.array([c.shape[0] for c in self.cover], dtype=np.int64)
        return _pairs(self.cover, self.rows_by_query, self.box, np.cumsum(counts) - counts)


def _pairs(matrices: list[FloatArray], rows_by_query: list[IntArray], box: IntArray,
           start: IntArray) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
    """``(row, column id, query, value)`` of the positive entries of each query's ``(C, P)``
    matrix at its ranked detections (column ids numbered across queries from ``start``)."""
    rows_, cols, queries, values = [], [], [], []
    for q, (m, rows) in enumerate(zip(matrices, rows_by_query, strict=True)):
        if m.shape[0] and rows.size:
            c, k = np.nonzero(m[:, box[rows]] > 0)
            rows_.append(rows[k])
            cols.append(c + start[q])
            queries.append(np.full(c.size, q))
            values.append(m[c, box[rows[k]]])
    if not rows_:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, np.zeros(0)
    row, col, query, value = (np.concatenate(a) for a in (rows_, cols, queries, values))
    return row, col, query, value


def _best_gt(matrices: list[FloatArray], rows_by_query: list[IntArray], box: IntArray,
             start: IntArray, n: int) -> tuple[IntArray, FloatArray]:
    """Per detection, the first row of highest value in its query's column (numbered from
    ``start``; -1 and 0 for a query without rows)."""
    best = np.full(n, -1, dtype=np.int64)
    value = np.zeros(n)
    for q, (m, rows) in enumerate(zip(matrices, rows_by_query, strict=True)):
        if m.shape[0] == 0 or rows.size == 0:
            continue
        cols = m[:, box[rows]]
        local = np.argmax(cols, axis=0)
        value[rows] = cols[local, np.arange(rows.size)]
        best[rows] = start[q] + local
    return best, value


@dataclass(frozen=True)
class DetectionOverlaps:
    """What the IoU matrices of :class:`Candidates` say about each detection (file order:
    query ``q``'s detections are the columns of ``ious[q]``, in order), each read when first
    asked for: ``best_gt`` / ``best_iou`` ``(D,)`` its GT box of highest IoU within its query
    (the first of equal ones; -1 and 0 without GT), and ``overlaps`` ``(det, gt, iou)`` of
    every detection and GT box with IoU > 0 (GT indices within the query)."""

    ious: list[FloatArray]
    query: IntArray

    @classmethod
    def of(cls, ious: list[FloatArray], query: IntArray) -> DetectionOverlaps:
        return cls(ious, query)

    @cached_property
    def _best(self) -> tuple[IntArray, FloatArray]:
        bounds = np.searchsorted(self.query, np.arange(len(self.ious) + 1))
        rows = [np.arange(bounds[q], bounds[q + 1]) for q in range(len(self.ious))]
        box = np.arange(self.query.size) - bounds[self.query]
        return _best_gt(self.ious, rows, box, np.zeros(len(self.ious), dtype=np.int64),
                        self.query.size)

    @property
    def best_gt(self) -> IntArray:
        return self._best[0]

    @property
    def best_iou(self) -> FloatArray:
        return self._best[1]

    @cached_property
    def overlaps(self) -> tuple[IntArray, IntArray, FloatArray]:
        # Every matrix flattened into one array (row-major: GT box, then detection), its
        # positive entries located by offsets: no per-query numpy calls but the ravel.
        shapes = np.array([m.shape for m in self.ious], dtype=np.int64).reshape(-1, 2)
        sizes = shapes[:, 0] * shapes[:, 1]
        if not sizes.sum():
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0)
        flat = np.concatenate([m.ravel() for m in self.ious])
        at = np.flatnonzero(flat > 0)
        ends = np.cumsum(sizes)
        q = np.searchsorted(ends, at, side="right")
        local = at - (ends - sizes)[q]
        gt, col = np.divmod(local, shapes[q, 1])
        first = np.searchsorted(self.query, np.arange(len(self.ious)))
        return first[q] + col, gt, flat[at]


def legacy_box_iou_matrix(gt: FloatArray, pred: FloatArray) -> FloatArray:
    """Axis-aligned IoU ``(G, P)`` with the legacy VOC pixel convention (width x2 - x1 + 1);
    boxes that do not touch have IoU 0."""
    if len(gt) == 0 or len(pred) == 0:
        return np.zeros((len(gt), len(pred)))
    area_g = (gt[:, 2] - gt[:, 0] + 1) * (gt[:, 3] - gt[:, 1] + 1)
    area_p = (pred[:, 2] - pred[:, 0] + 1) * (pred[:, 3] - pred[:, 1] + 1)
    lo_x, hi_x = np.maximum(gt[:, None, 0], pred[:, 0]), np.minimum(gt[:, None, 2], pred[:, 2])
    lo_y, hi_y = np.maximum(gt[:, None, 1], pred[:, 1]), np.minimum(gt[:, None, 3], pred[:, 3])
    inter = np.where((lo_x <= hi_x) & (lo_y <= hi_y), (hi_x - lo_x + 1) * (hi_y - lo_y + 1), 0.0)
    return inter / (area_g[:, None] + area_p - inter)


@dataclass(frozen=True)
class Candidates:
    """The chosen queries' IoU matrices and every detection in file order (query by query,
    boxes in input order), before ranking; all arrays of detections ``(D,)``."""

    ious: list[FloatArray]
    query: IntArray
    box: IntArray
    score: FloatArray
    det_area: FloatArray
    num_gt: IntArray
    gt_area: list[FloatArray]
    categories: tuple[str, ...]
    negative: npt.NDArray[np.bool_]
    cover: list[FloatArray] | None = None
    gt_difficult: list[npt.NDArray[np.bool_]] | None = None
    counted_as: tuple[str | None, ...] | None = None
    # (Q,) whether each query's GT boxes have their annotation's ``area`` as ``gt_area``.
    area_given: npt.NDArray[np.bool_] | None = None

    @cached_property
    def overlaps(self) -> DetectionOverlaps:
        """Each detection's best GT box and overlapping pairs, read from the IoU matrices
        once for every ranking of these candidates (VOC, COCO, ties, devkit)."""
        return DetectionOverlaps.of(self.ious, self.query)

    def ranked(self, order: str = "stable", queries: Sequence[int] | None = None,
               max_detections: int | None = None) -> Ranked:
        """Detections of ``queries`` (default all, renumbered in the given order) ranked by
        score: ``"stable"`` or ``"devkit"`` (see the module docstring); with
        ``max_detections``, each query's best boxes only (ties: the first boxes)."""
        if order not in ("stable", "devkit"):
            raise ValueError(f"order must be 'stable' or 'devkit', got {order!r}")
        chosen = np.arange(len(self.ious)) if queries is None else np.asarray(queries, int)
        new_id = np.full(len(self.ious), -1, dtype=np.int64)
        new_id[chosen] = np.arange(chosen.size)
        use = new_id[self.query] >= 0
        if max_detections is not None:
            best = np.lexsort((self.box, -self.score, self.query))
            first = np.searchsorted(self.query[best], self.query[best])
            within = np.empty(best.size, dtype=np.int64)
            within[best] = np.arange(best.size) - first
            use &= within < max_detections
        rows = np.flatnonzero(use)
        score = self.score[rows]
        # "devkit": the devkits' own np.argsort(-confidence), numpy's default (unstable) kind.
        rank = rows[np.argsort(-score, kind="stable") if order == "stable"
                    else np.argsort(-score)]
        pick = chosen.tolist()
        return Ranked(ious=[self.ious[q] for q in pick], query=new_id[self.query[rank]],
                      box=self.box[rank], score=self.score[rank],
                      num_gt=int(self.num_gt[chosen].sum()),
                      categories=tuple(self.categories[q] for q in pick),
                      negative=self.negative[chosen],
                      cover=None if self.cover is None else [self.cover[q] for q in pick],
                      gt_area=(np.concatenate([self.gt_area[q] for q in pick]) if pick
                               else np.zeros(0)),
                      det_area=self.det_area[rank], shared=self.overlaps, source=rank,
                      gt_difficult=(None if self.gt_difficult is None else np.concatenate(
                          [self.gt_difficult[q] for q in pick] or [np.zeros(0, bool)])),
                      counted_as=(None if self.counted_as is None
                                  else tuple(self.counted_as[q] for q in pick)),
                      gt_area_given=(0 if self.area_given is None else
                                     int(self.num_gt[chosen][self.area_given[chosen]].sum())))


def candidates(samples: Sequence[Sample], modality: str = "bbox",
               include_negatives: bool = False, legacy_pixel: bool = False) -> Candidates:
    """Compute each chosen query's IoU matrix once."""
    if legacy_pixel and modality != "bbox":
        raise ValueError("legacy_pixel applies to axis-aligned boxes (modality 'bbox') only")
    oriented = modality == "oriented_bbox"
    # A positive query with ignore regions but no target box still takes part, as COCOeval
    # scores a crowd-only image.
    chosen = [s for s in samples
              if (include_negatives if s.negative
                  else len(box_fields(s, modality)[0]) + len(ignore_regions(s, modality)) > 0)]
    fields = [box_fields(s, modality) for s in chosen]
    cover = None
    if any(len(ignore_regions(s, modality)) for s in chosen):
        cover = [coverage_matrix(ignore_regions(s, modality), pred, oriented)
                 for s, (_, pred, _) in zip(chosen, fields, strict=True)]
    if legacy_pixel:
        ious = [legacy_box_iou_matrix(gt, pred) for gt, pred, _ in fields]
    else:  # exact IoU of every pair, all queries in one batch
        ious = iou_matrices([gt for gt, _, _ in fields], [pred for _, pred, _ in fields],
                            oriented=oriented)
    shape = (4, 2) if oriented else (4,)
    counts = np.array([len(pred) for _, pred, _ in fields], dtype=np.int64)
    query = np.repeat(np.arange(len(fields)), counts)
    box = np.arange(query.size) - np.repeat(np.cumsum(counts) - counts, counts)
    all_pred = (np.concatenate([p.reshape(-1, *shape) for _, p, _ in fields]) if fields
                else np.zeros((0, *shape)))
    all_scores = np.concatenate([sc for _, _, sc in fields]) if fields else np.zeros(0)
    gts = [gt.reshape(-1, *shape) for gt, _, _ in fields]
    num_gt = np.array([len(g) for g in gts], dtype=np.int64)
    # A target's size: its annotation's area (COCO's, as COCOeval ranges a GT by it) where
    # given, else the box's own area.
    given = np.array([s.gt_area.size == n > 0 for s, n in zip(chosen, num_gt.tolist(),
                                                              strict=True)], dtype=bool)
    gt_area = areas(np.concatenate(gts), oriented) if gts else np.zeros(0)
    if given.any():
        gt_area[np.repeat(given, num_gt)] = np.concatenate(
            [s.gt_area for s, g in zip(chosen, given.tolist(), strict=True) if g])
    difficult = [s.gt_difficult if s.gt_difficult.size == n else np.zeros(n, dtype=bool)
                 for s, n in zip(chosen, num_gt.tolist(), strict=True)]
    named = named_categories(samples)
    return Candidates(ious=ious, query=query, box=box, score=score_key(all_scores),
                      det_area=areas(all_pred, oriented), num_gt=num_gt,
                      gt_area=np.split(gt_area, np.cumsum(num_gt)[:-1]) if gts else [],
                      categories=tuple(s.category for s in chosen),
                      negative=np.array([s.negative for s in chosen], dtype=bool), cover=cover,
                      gt_difficult=difficult if any(d.any() for d in difficult) else None,
                      counted_as=tuple(named.get(s.phrase) if s.negative else s.category
                                       for s in chosen),
                      area_given=given if given.any() else None)


def named_categories(samples: Sequence[Sample]) -> dict[str, str]:
    """The category each phrase names: the category of the positive queries with that
    phrase (as converted COCO, DOTA and LVIS data write them: the category's name, or DOTA's
    ``storage-tank`` as "storage tank"), else the category of that very name. A phrase two
    categories share names neither. A negative query's boxes are false positives of the
    category its phrase names (COCOeval's and the devkit's detections of a class on an image
    without it); a phrase naming no category leaves them in no category."""
    by_phrase: dict[str, set[str]] = {}
    names = set()
    for s in samples:
        if not s.negative:
            by_phrase.setdefault(s.phrase, set()).add(s.category)
            names.add(s.category)
    named = {p: next(iter(c)) for p, c in by_phrase.items() if len(c) == 1}
    return {**{n: n for n in names if n not in by_phrase}, **named}


def counted_categories(categories: Sequence[str], negative: npt.NDArray[np.bool_],
                counted_as: Sequence[str | None] | None) -> list[str | None]:
    """The category each query's boxes count in: a positive's own, a negative's named one
    (:func:`~ovearth_core.analysis.ranking.named_categories`) or ``None``."""
    if counted_as is not None:
        return list(counted_as)
    return [None if neg else c for c, neg in zip(categories, negative, strict=True)]


def ignore_regions(sample: Sample, modality: str) -> FloatArray:
    """The sample's ignore regions (COCO crowds) of a box modality."""
    return sample.gt_ignore_obbs if modality == "oriented_bbox" else sample.gt_ignore_boxes


def rank_detections(samples: Sequence[Sample], modality: str = "bbox",
                    include_negatives: bool = False, legacy_pixel: bool = False,
                    max_detections: int | None = None, order: str = "stable") -> Ranked:
    """Compute each query's IoU matrix once and rank all detections by confidence.

    ``max_detections`` keeps each query's best boxes (COCO's 100); ``order`` is
    ``"stable"`` or ``"devkit"`` (see the module docstring).
    """
    return candidates(samples, modality, include_negatives, legacy_pixel).ranked(
        order, max_detections=max_detections)
