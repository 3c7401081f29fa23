"""Axis-aligned boxes and oriented boxes: areas, intersections and IoU matrices (their
parsing and validation: :mod:`ovearth_core.boxparse`).

This is the only module that imports shapely.

Coordinates are absolute pixels, continuous (a box from x1 to x2 is x2 - x1
wide). Internally an axis-aligned box is ``[x1, y1, x2, y2]`` (arrays of shape
``(N, 4)``) and an oriented box is four boundary-ordered vertices ``[[x, y], ...]``
(arrays of shape ``(N, 4, 2)``), clockwise or counter-clockwise.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from .boxparse import polygon_checks
from .lazymodule import LazyModule

# shapely is imported on first use (``--help`` of the commands does not need it).
shapely: Any = LazyModule("shapely", globals(), "shapely")

FloatArray = npt.NDArray[np.float64]


def box_area(boxes: FloatArray) -> FloatArray:
    """Areas of ``(N, 4)`` xyxy boxes."""
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_intersection(a: FloatArray, b: FloatArray) -> FloatArray:
    """Intersection areas of xyxy boxes ``a`` and ``b`` (``(..., 4)``, broadcast against
    each other: aligned pairs ``(N, 4)`` and ``(N, 4)``, or every pair with ``a[:, None]``
    and ``b[None]``). The one box-intersection routine of the package."""
    w = np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0])
    h = np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1])
    return np.clip(w, 0, None) * np.clip(h, 0, None)


def box_iou_matrix(gt: FloatArray, pred: FloatArray) -> FloatArray:
    """IoU of every GT box (rows) with every predicted box (columns), shape ``(G, P)``."""
    if len(gt) == 0 or len(pred) == 0:
        return np.zeros((len(gt), len(pred)))
    inter = box_intersection(gt[:, None], pred[None, :])
    union = box_area(gt)[:, None] + box_area(pred)[None, :] - inter
    return inter / union


def envelope_pairs(a: FloatArray, b: FloatArray | None = None
                   ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """``(i, j)`` of the xyxy envelopes ``a[i]`` and ``b[j]`` that overlap (positive
    intersection area), found with an STRtree: the work follows the overlapping pairs, not
    every pair. With ``b`` omitted, the pairs of ``a`` with itself, ``i < j``. The one
    candidate search of every sparse pairing (:func:`iou_pairs`, :func:`overlapping_pairs`,
    the audit's clusters).

    >>> envelope_pairs(np.array([[0., 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]]))
    (array([0]), array([1]))
    """
    other = a if b is None else b
    if len(a) == 0 or len(other) == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    tree = shapely.STRtree(shapely.box(*other.T))
    i, j = tree.query(shapely.box(*a.T))
    keep = box_intersection(a[i], other[j]) > 0
    if b is None:
        keep &= i < j
    order = np.lexsort((j[keep], i[keep]))
    return i[keep][order].astype(np.intp), j[keep][order].astype(np.intp)


def envelope_search(a: FloatArray, eligible: npt.NDArray[np.bool_] | None = None
                    ) -> Callable[[int], npt.NDArray[np.intp]]:
    """A search over the xyxy envelopes ``a``: ``near(k)`` is the indices ``j != k`` of
    ``eligible`` envelopes overlapping ``a[k]`` (positive intersection area, as
    :func:`envelope_pairs`), ascending. One STRtree over the eligible envelopes, queried
    one envelope at a time: memory follows one envelope's neighbours, never every pair
    (a crowded query's pairs grow with the square of its boxes).

    >>> near = envelope_search(np.array([[0., 0, 2, 2], [1, 1, 3, 3], [2, 2, 4, 4]]))
    >>> near(1), near(0)
    (array([0, 2]), array([1]))
    """
    idx = np.flatnonzero(np.ones(len(a), dtype=bool) if eligible is None else eligible)
    tree = shapely.STRtree(shapely.box(*a[idx].T)) if idx.size else None

    def near(k: int) -> npt.NDArray[np.intp]:
        if tree is None:
            return np.zeros(0, dtype=np.intp)
        hits = idx[tree.query(shapely.box(*a[k]))]
        hits = hits[(hits != k) & (box_intersection(a[k], a[hits]) > 0)]
        return np.sort(hits).astype(np.intp)

    return near


def polygon_area(polys: FloatArray) -> FloatArray:
    """Shoelace areas of ``(N, K, 2)`` polygons."""
    x, y = polys[..., 0], polys[..., 1]
    return 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y, axis=-1))


def envelope(polys: FloatArray) -> FloatArray:
    """Axis-aligned envelopes ``(N, 4)`` xyxy of ``(N, K, 2)`` polygons."""
    if len(polys) == 0:
        return np.zeros((0, 4))
    return np.concatenate([polys.min(axis=1), polys.max(axis=1)], axis=1)


def coverage_matrix(regions: FloatArray, dets: FloatArray, oriented: bool) -> FloatArray:
    """Share of each detection's area inside each region, ``(R, P)``: COCO's crowd "IoU".

    ``regions`` and ``dets`` are xyxy boxes ``(N, 4)`` or, with ``oriented``, polygons
    ``(N, 4, 2)``. COCOeval scores a detection against a crowd region by
    intersection / detection area; oriented boxes are intersected exactly (shapely).
    """
    if len(regions) == 0 or len(dets) == 0:
        return np.zeros((len(regions), len(dets)))
    if oriented:
        reg, det = shapely.polygons(regions), shapely.polygons(dets)
        inter = shapely.area(shapely.intersection(reg[:, None], det[None, :]))
        return np.minimum(inter / shapely.area(det)[None, :], 1.0)
    return box_intersection(regions[:, None], dets[None, :]) / box_area(dets)[None, :]


def obb_iou_matrix(gt: FloatArray, pred: FloatArray) -> FloatArray:
    """Exact polygon IoU of every GT oriented box with every predicted one, ``(G, P)``.

    Pairs whose envelopes do not overlap are skipped (IoU 0); the others are
    intersected with shapely, vectorised over the pairs.
    """
    out = np.zeros((len(gt), len(pred)))
    if len(gt) == 0 or len(pred) == 0:
        return out
    env_iou = box_iou_matrix(envelope(gt), envelope(pred))
    gi, pi = np.nonzero(env_iou > 0)
    if gi.size == 0:
        return out
    gpoly = shapely.polygons(gt)
    ppoly = shapely.polygons(pred)
    inter = shapely.area(shapely.intersection(gpoly[gi], ppoly[pi]))
    # shapely's areas, not the shoelace on absolute coordinates: small boxes far from
    # the origin would otherwise get an IoU a hair above 1 with themselves.
    union = shapely.area(gpoly)[gi] + shapely.area(ppoly)[pi] - inter
    out[gi, pi] = np.minimum(inter / union, 1.0)
    return out


def iou_matrices(gts: list[FloatArray], preds: list[FloatArray], oriented: bool,
                 min_iou: float = 0.0) -> list[FloatArray]:
    """IoU matrices of many (GT, prediction) box sets at once, ``(G_i, P_i)`` each.

    Sets of at least ``_DENSE_PAIRS`` pairs are computed one by one
    (:func:`iou_matrix`); the others together, in vectorised passes over chunks of
    about ``_PAIRS_PER_CHUNK`` pairs (no Python loop per set; bounded temporaries, so
    time grows linearly with the number of sets). Oriented boxes are intersected
    exactly with shapely, in one call over the candidate pairs of all chunks:
    those whose IoU can reach ``min_iou`` by an upper bound from their envelopes
    and areas. Pairs ruled out get 0, so pass as ``min_iou`` the lowest threshold
    whose comparisons matter (values below it change no result). Every value is the
    same whichever path computes it.
    """
    out: list[FloatArray | None] = [None] * len(gts)
    small: list[int] = []
    for i, (g, p) in enumerate(zip(gts, preds, strict=True)):
        if len(g) * len(p) >= _DENSE_PAIRS:
            out[i] = iou_matrix(g, p, oriented, min_iou)
        else:
            small.append(i)
    if len(small) == len(gts):
        return _small_iou_matrices(gts, preds, oriented, min_iou)
    for i, iou in zip(small, _small_iou_matrices([gts[i] for i in small],
                                                 [preds[i] for i in small], oriented, min_iou),
                      strict=True):
        out[i] = iou
    return out  # type: ignore[return-value]


def iou_matrix(gt: FloatArray, pred: FloatArray, oriented: bool, min_iou: float = 0.0
               ) -> FloatArray:
    """IoU matrix ``(G, P)`` of one dense box set, as :func:`iou_matrices` computes it.

    Axis-aligned boxes by broadcasting, ``_PAIRS_PER_CHUNK`` pairs of rows at a time;
    oriented boxes intersected exactly where an upper bound from envelopes and areas can
    reach ``min_iou``, the pairs with overlapping envelopes found with an STRtree (no
    pass over all ``G x P`` pairs). Temporaries stay below a constant beside the output.
    """
    out = np.zeros((len(gt), len(pred)))
    if out.size == 0:
        return out
    if not oriented:
        area_g, area_p = box_area(gt), box_area(pred)
        step = max(1, _PAIRS_PER_CHUNK // len(pred))
        for lo in range(0, len(gt), step):
            inter = box_intersection(gt[lo:lo + step, None, :], pred)
            out[lo:lo + step] = inter / (area_g[lo:lo + step, None] + area_p - inter)
        return out
    env_g, env_p = envelope(gt), envelope(pred)
    tree = shapely.STRtree(shapely.box(*env_p.T))
    gi, pi = tree.query(shapely.box(*env_g.T))
    cand = _obb_candidates(gi, pi, min_iou, env_g, env_p, polygon_area(gt), polygon_area(pred))
    out[gi[cand], pi[cand]] = _obb_pair_iou(gt, pred, gi[cand], pi[cand])
    return out


def iou_pairs(gt: FloatArray, pred: FloatArray, oriented: bool
              ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], FloatArray]:
    """The overlapping pairs of two box sets, sparse: ``(gi, pi, iou)`` ``(K,)`` each,
    every pair with IoU > 0, sorted by ``gi`` then ``pi``; the nonzero entries of
    :func:`iou_matrix` (same values), found from the boxes' envelopes with an STRtree, so
    that time and memory follow the overlapping pairs, never ``G x P``."""
    none = np.zeros(0, dtype=np.intp)
    if len(gt) == 0 or len(pred) == 0:
        return none, none, np.zeros(0)
    if len(gt) * len(pred) < _DENSE_PAIRS:  # small: the dense matrix is cheaper than a tree
        dense = iou_matrix(gt, pred, oriented)
        gi, pi = np.nonzero(dense > 0)
        return gi.astype(np.intp), pi.astype(np.intp), dense[gi, pi]
    env_g, env_p = (envelope(gt), envelope(pred)) if oriented else (gt, pred)
    gi, pi = envelope_pairs(env_g, env_p)  # touching envelopes (no area in common): IoU 0
    if oriented:
        keep = _obb_candidates(gi, pi, 0.0, env_g, env_p, polygon_area(gt), polygon_area(pred))
        gi, pi = gi[keep], pi[keep]
        iou = _obb_pair_iou(gt, pred, gi, pi)
    else:
        iou = _box_pair_iou(gt[gi], pred[pi])
    keep = iou > 0
    order = np.lexsort((pi[keep], gi[keep]))
    return gi[keep][order], pi[keep][order], iou[keep][order]


def overlapping_pairs(polys: FloatArray, min_iou: float
                      ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], FloatArray]:
    """The pairs ``i < j`` of oriented boxes ``(N, 4, 2)`` whose IoU is over ``min_iou``,
    and that IoU (three arrays ``(K,)``).

    Candidates come from an STRtree of the envelopes (pairs whose envelopes meet), then the
    envelope-and-area bound; only those are intersected, exactly: two convex quadrilaterals
    by :func:`convex_intersection_areas` (numpy, a chunk of pairs at a time), a concave one
    with shapely. Time and memory follow the number of overlapping pairs, never ``N x N``.
    """
    n = len(polys)
    if n < 2:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, np.zeros(0)
    env = envelope(polys)
    a, b = envelope_pairs(env)  # touching envelopes (no area in common) have IoU 0
    area = areas(polys, True)
    cand = _obb_candidates(a, b, min_iou, env, env, area, area)
    a, b = a[cand], b[cand]
    inter = np.zeros(a.size)
    convex = _convex(polys)
    both = convex[a] & convex[b]
    for lo in range(0, a.size, _CLIP_PAIRS):
        part = np.flatnonzero(both[lo:lo + _CLIP_PAIRS]) + lo
        inter[part] = convex_intersection_areas(polys[a[part]], polys[b[part]])
    rest = np.flatnonzero(~both)
    if rest.size:  # a concave polygon: GEOS
        inter[rest] = _intersection_areas(_polygons_at(polys, a[rest]),
                                          _polygons_at(polys, b[rest]))
    iou = np.minimum(inter / (area[a] + area[b] - inter), 1.0)
    over = iou > min_iou
    return a[over].astype(np.intp), b[over].astype(np.intp), iou[over]


def _convex(polys: FloatArray) -> npt.NDArray[np.bool_]:
    """Which quadrilaterals ``(N, 4, 2)`` turn one way at every vertex (convex)."""
    u = np.roll(polys, -1, axis=1) - polys  # edge k: vertex k to k + 1
    v = np.roll(u, -1, axis=1)  # edge k + 1
    cross = u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]
    return (cross >= 0).all(axis=1) | (cross <= 0).all(axis=1)


def convex_intersection_areas(a: FloatArray, b: FloatArray) -> FloatArray:
    """Intersection areas ``(K,)`` of convex quadrilaterals ``a[k]`` and ``b[k]``
    (``(K, 4, 2)``, either orientation): ``a`` clipped by each edge of ``b`` in turn
    (Sutherland-Hodgman), vectorised over the pairs (up to 8 vertices after the four clips),
    then the shoelace. Coordinates are taken relative to ``a``'s first vertex, so boxes far
    from the origin keep their precision. Agrees with GEOS to about 1e-13 of the areas."""
    k, m = len(a), 8
    origin = a[:, :1, :]
    a, b = a - origin, b - origin
    b = np.where((_shoelace2(b) < 0)[:, None, None], b[:, ::-1], b)
    poly = np.zeros((k, m, 2))
    poly[:, :4] = a
    count = np.full(k, 4)
    idx = np.arange(m)[None, :]
    rows = np.arange(k)[:, None]
    for e in range(4):
        e0, e1 = b[:, e][:, None, :], b[:, (e + 1) % 4][:, None, :]
        d = e1 - e0
        side = d[..., 0] * (poly[..., 1] - e0[..., 1]) - d[..., 1] * (poly[..., 0] - e0[..., 0])
        valid = idx < count[:, None]
        prev = np.clip(np.where(idx == 0, count[:, None] - 1, idx - 1), 0, m - 1)
        p_prev, s_prev = poly[rows, prev], side[rows, prev]
        inside = side >= 0
        crossing = valid & (inside != (s_prev >= 0))
        t = s_prev / np.where(crossing, s_prev - side, 1.0)
        point = p_prev + t[..., None] * (poly - p_prev)
        # Each vertex yields the crossing into or out of the half-plane, then itself if in.
        cand = np.stack([point, poly], axis=2).reshape(k, 2 * m, 2)
        keep = np.stack([crossing, valid & inside], axis=2).reshape(k, 2 * m)
        order = np.argsort(~keep, axis=1, kind="stable")[:, :m]
        poly = np.take_along_axis(cand, order[..., None], axis=1)
        count = np.minimum(keep.sum(axis=1), m)
    valid = idx < count[:, None]
    nxt = poly[rows, np.where(idx + 1 >= count[:, None], 0, idx + 1)]
    cross = poly[..., 0] * nxt[..., 1] - nxt[..., 0] * poly[..., 1]
    area = 0.5 * np.abs(np.where(valid, cross, 0.0).sum(axis=1))
    return np.where(count >= 3, area, 0.0)


def _shoelace2(p: FloatArray) -> FloatArray:
    """Twice the signed areas of ``(..., K, 2)`` polygons."""
    x, y = p[..., 0], p[..., 1]
    return np.sum(x * np.roll(y, -1, axis=-1) - np.roll(x, -1, axis=-1) * y, axis=-1)


def _small_iou_matrices(gts: list[FloatArray], preds: list[FloatArray], oriented: bool,
                        min_iou: float) -> list[FloatArray]:
    """:func:`iou_matrices` of many small sets: all their pairs in flat chunks."""
    shapes = [(len(g), len(p)) for g, p in zip(gts, preds, strict=True)]
    n_gt = np.array([g for g, _ in shapes], dtype=np.int64)
    n_pred = np.array([p for _, p in shapes], dtype=np.int64)
    sizes = n_gt * n_pred
    flat = np.zeros(int(sizes.sum()))
    if flat.size:
        all_gt = np.concatenate([g for g in gts if len(g)])
        all_pred = np.concatenate([p for p in preds if len(p)])
        gt_start, pred_start = np.cumsum(n_gt) - n_gt, np.cumsum(n_pred) - n_pred
        pair_start = np.cumsum(sizes) - sizes
        if oriented:
            bounds = (envelope(all_gt), envelope(all_pred), polygon_area(all_gt),
                      polygon_area(all_pred))
            found: list[tuple[npt.NDArray[np.int64], ...]] = []
        else:
            columns = _BoxColumns(all_gt), _BoxColumns(all_pred)
        for lo, hi in _chunks(sizes):
            part = sizes[lo:hi]
            # Pairs row-major per set: each GT box (contiguous across the chunk's sets)
            # with every prediction of its set, in order.
            set_of_gt = np.repeat(np.arange(lo, hi), n_gt[lo:hi])
            per_gt = n_pred[set_of_gt]
            gi = np.repeat(np.arange(gt_start[lo], gt_start[lo] + set_of_gt.size), per_gt)
            pi = np.arange(gi.size) + np.repeat(pred_start[set_of_gt] - (np.cumsum(per_gt)
                                                                         - per_gt), per_gt)
            if oriented:
                cand = _obb_candidates(gi, pi, min_iou, *bounds)
                found.append((cand + pair_start[lo], gi[cand], pi[cand]))
            else:
                flat[pair_start[lo]:pair_start[lo] + part.sum()] = _column_pair_iou(
                    *columns, gi, pi)
        if oriented:
            at, gi, pi = (np.concatenate(cols) for cols in zip(*found, strict=True))
            flat[at] = _obb_pair_iou(all_gt, all_pred, gi, pi)
    out = []
    start = 0
    for (g, p), size in zip(shapes, sizes.tolist(), strict=True):
        out.append(flat[start:start + size].reshape(g, p))
        start += size
    return out


def iter_iou_matrices(gts: list[FloatArray], preds: list[FloatArray], oriented: bool,
                      min_iou: float = 0.0) -> Iterator[FloatArray]:
    """:func:`iou_matrices`, one matrix at a time: computed a block of sets at a time
    (:func:`pair_blocks`), so a caller that keeps only what it takes from each matrix holds
    one block's, not every set's."""
    for lo, hi in pair_blocks([len(g) * len(p) for g, p in zip(gts, preds, strict=True)]):
        yield from iou_matrices(gts[lo:hi], preds[lo:hi], oriented, min_iou)


def pair_blocks(sizes: Sequence[int], block: int | None = None) -> Iterator[tuple[int, int]]:
    """Consecutive ranges ``[lo, hi)`` of sets with at most ``block`` pairs in all
    (``_BLOCK_PAIRS`` by default), a larger set alone in its range: what to hold at once
    so that memory is bounded by the largest set, never by the number of sets."""
    block = _BLOCK_PAIRS if block is None else block
    lo, total = 0, 0
    for i, size in enumerate(sizes):
        if i > lo and total + size > block:
            yield lo, i
            lo, total = i, 0
        total += size
    if lo < len(sizes):
        yield lo, len(sizes)


_PAIRS_PER_CHUNK = 1 << 17
# Pairs clipped at once by convex_intersection_areas (its temporaries: ~1 kB a pair).
_CLIP_PAIRS = 1 << 14
# A set this large is computed on its own (broadcasting / STRtree), not in the flat chunks.
_DENSE_PAIRS = 1 << 14
# Pairs held at once by a streaming caller (pair_blocks): 8 MB per float64 matrix set.
_BLOCK_PAIRS = 1 << 20


def _chunks(sizes: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """Consecutive ranges of sets with about ``_PAIRS_PER_CHUNK`` pairs each (at least one set)."""
    chunk = (np.cumsum(sizes) - 1) // _PAIRS_PER_CHUNK
    edges = np.flatnonzero(np.diff(chunk)) + 1
    cuts = [0, *edges.tolist(), len(sizes)]
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _box_pair_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """IoU of aligned pairs of xyxy boxes, ``(N, 4)`` each."""
    inter = box_intersection(a, b)
    return inter / (box_area(a) + box_area(b) - inter)


class _BoxColumns:
    """xyxy boxes ``(N, 4)`` as four contiguous coordinate columns and their areas
    (:func:`box_area`): what :func:`_column_pair_iou` gathers pair by pair."""

    def __init__(self, boxes: FloatArray) -> None:
        self.x1, self.y1, self.x2, self.y2 = np.ascontiguousarray(boxes.T)
        self.area = box_area(boxes)


def _column_pair_iou(a: _BoxColumns, b: _BoxColumns, ai: npt.NDArray[np.int64],
                     bi: npt.NDArray[np.int64]) -> FloatArray:
    """:func:`_box_pair_iou` of the pairs ``(a[ai], b[bi])``, the same arithmetic in the
    same order (so the same values), one coordinate column at a time: gathers of
    contiguous columns and operations in place, not rows of four."""
    inter = np.minimum(a.x2.take(ai), b.x2.take(bi))
    inter -= np.maximum(a.x1.take(ai), b.x1.take(bi))
    h = np.minimum(a.y2.take(ai), b.y2.take(bi))
    h -= np.maximum(a.y1.take(ai), b.y1.take(bi))
    np.clip(inter, 0, None, out=inter)
    np.clip(h, 0, None, out=h)
    inter *= h
    union = a.area.take(ai)
    union += b.area.take(bi)
    union -= inter
    inter /= union
    return inter


def _obb_candidates(gi: npt.NDArray[np.int64], pi: npt.NDArray[np.int64], min_iou: float,
                    env_g: FloatArray, env_p: FloatArray, area_g: FloatArray,
                    area_p: FloatArray) -> npt.NDArray[np.int64]:
    """Positions of the oriented-box pairs ``(gi, pi)`` whose IoU can reach ``min_iou``."""
    bound, upper = _obb_upper_bound(gi, pi, env_g, env_p, area_g, area_p)
    return np.flatnonzero((bound > 0) & (upper >= min_iou - 1e-9))


def _obb_upper_bound(gi: npt.NDArray[np.int64], pi: npt.NDArray[np.int64], env_g: FloatArray,
                     env_p: FloatArray, area_g: FloatArray, area_p: FloatArray
                     ) -> tuple[FloatArray, FloatArray]:
    """A bound on the intersection of each pair (envelopes' overlap, smaller area) and the
    IoU bound it gives."""
    bound = np.minimum(box_intersection(env_g[gi], env_p[pi]),
                       np.minimum(area_g[gi], area_p[pi]))
    return bound, bound / (area_g[gi] + area_p[pi] - bound)


def best_matches(gts: list[FloatArray], boxes: FloatArray, oriented: bool
                 ) -> tuple[npt.NDArray[np.intp], FloatArray]:
    """For each box ``boxes[q]``, the first GT box of ``gts[q]`` (non-empty) with the highest
    IoU, and that IoU (arrays ``(Q,)``).

    Oriented pairs are intersected only where an upper bound from envelopes and areas
    can reach the best IoU found: first the pair of highest bound of each box, then
    every pair whose bound reaches that pair's IoU.
    """
    counts = np.array([len(g) for g in gts], dtype=np.intp)
    owner = np.repeat(np.arange(len(gts)), counts)
    flat = np.concatenate(gts) if gts else np.zeros((0, *boxes.shape[1:]))
    gi = np.arange(owner.size)
    iou = np.full(owner.size, -1.0)
    if oriented:
        bound, upper = _obb_upper_bound(gi, owner, envelope(flat), envelope(boxes),
                                        polygon_area(flat), polygon_area(boxes))
        upper = np.where(bound > 0, upper, 0.0)
        first = _first_max_per_owner(upper, owner, len(gts))
        iou[first] = _pair_iou(flat, boxes, first, owner[first], True)
        rest = np.flatnonzero((upper >= iou[first][owner] - 1e-9) & (bound > 0))
        rest = rest[iou[rest] < 0]
        iou[rest] = _pair_iou(flat, boxes, rest, owner[rest], True)
        iou = np.maximum(iou, 0.0)  # never intersected: IoU 0
    else:
        iou = _pair_iou(flat, boxes, gi, owner, False)
    best = _first_max_per_owner(iou, owner, len(gts))
    starts = np.cumsum(counts) - counts
    return best - starts, iou[best]


def _first_max_per_owner(values: FloatArray, owner: npt.NDArray[np.intp], n: int
                         ) -> npt.NDArray[np.intp]:
    """Position of the first largest value of each owner ``0 .. n-1`` (``owner`` sorted)."""
    order = np.lexsort((np.arange(owner.size), -values, owner))
    return order[np.searchsorted(owner[order], np.arange(n))]


def _pair_iou(gt: FloatArray, pred: FloatArray, gi: npt.NDArray[np.intp],
              pi: npt.NDArray[np.intp], oriented: bool) -> FloatArray:
    inter, union = pair_overlaps(gt, pred, gi, pi, oriented)
    return np.minimum(inter / union, 1.0) if oriented else inter / union


def _obb_pair_iou(gt: FloatArray, pred: FloatArray, gi: npt.NDArray[np.int64],
                  pi: npt.NDArray[np.int64]) -> FloatArray:
    """Exact IoU of the oriented-box pairs ``(gt[gi], pred[pi])`` (candidates: their
    envelopes overlap). Pairs :func:`apart` are 0 without intersecting them (GEOS would
    find the empty intersection: the same 0; about a third of the candidates of a run
    that keeps every overlapping pair's IoU)."""
    out = np.zeros(gi.size)
    meet = np.flatnonzero(~apart(gt[gi], pred[pi]))
    if meet.size:
        inter, union = _polygon_overlaps(gt, pred, gi[meet], pi[meet])
        out[meet] = np.minimum(inter / union, 1.0)
    return out


# How far apart two projections must be, relative to the largest they could be (a
# projection's rounding error is below 1e-15 of that).
_APART = 1e-9


def apart(a: FloatArray, b: FloatArray) -> npt.NDArray[np.bool_]:
    """Which pairs of polygons ``a[k]``, ``b[k]`` (``(K, V, 2)`` each) are disjoint by a
    clear gap: on the normal ``n`` of some edge of either, their vertices' projections are
    apart by more than ``1e-9 * R * (|n_x| + |n_y|)`` (``R``: the pair's largest absolute
    coordinate, so the gap is far above the projections' rounding). The separating-axis
    theorem: it proves disjointness for any polygons, convex or not, as each lies within
    the convex hull of its vertices. A pair not found apart may still be disjoint, or
    barely touch: an exact intersection decides.

    >>> square = np.array([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]])
    >>> diamond = np.array([[[1.6, 0.8], [2.4, 1.6], [1.6, 2.4], [0.8, 1.6]]])  # envelopes meet
    >>> apart(square, diamond).tolist(), apart(square, square + 0.5).tolist()
    ([True], [False])
    """
    if len(a) == 0:
        return np.zeros(0, dtype=bool)
    # (2, V, K): coordinate, vertex, pair; every operand below is contiguous, (E, K).
    pa, pb = (np.ascontiguousarray(p.transpose(2, 1, 0)) for p in (a, b))
    edges = np.concatenate([np.roll(pa, -1, axis=1) - pa, np.roll(pb, -1, axis=1) - pb], axis=1)
    nx, ny = -edges[1], edges[0]  # each edge's normal

    def extent(p: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Lowest and highest projection of each polygon's vertices on each normal."""
        along = [p[0, v] * nx + p[1, v] * ny for v in range(p.shape[1])]
        return np.minimum.reduce(along), np.maximum.reduce(along)

    (low_a, high_a), (low_b, high_b) = extent(pa), extent(pb)
    gap = np.maximum(low_b - high_a, low_a - high_b)
    size = np.maximum(np.abs(pa).max(axis=(0, 1)), np.abs(pb).max(axis=(0, 1)))
    return (gap > _APART * size * (np.abs(nx) + np.abs(ny))).any(axis=0)


def pair_overlaps(gt: FloatArray, pred: FloatArray, gi: npt.NDArray[np.intp],
                  pi: npt.NDArray[np.intp], oriented: bool) -> tuple[FloatArray, FloatArray]:
    """Intersection and union areas ``(K,)`` of the pairs ``(gt[gi], pred[pi])``.

    ``gt`` and ``pred`` are xyxy boxes ``(N, 4)`` or, with ``oriented``, polygons
    ``(N, 4, 2)``. Their IoU is ``inter / union`` (capped at 1 for oriented boxes, as in
    :func:`iou_matrices`, which uses the same areas). Oriented pairs whose envelopes do
    not overlap are not intersected: I = 0, U = the sum of their :func:`areas`.
    """
    if not oriented:
        a, b = gt[gi], pred[pi]
        inter = box_intersection(a, b)
        return inter, box_area(a) + box_area(b) - inter
    inter = np.zeros(gi.size)
    union = areas(gt[gi], True) + areas(pred[pi], True)
    touch = np.flatnonzero(box_intersection(envelope(gt[gi]), envelope(pred[pi])) > 0)
    if touch.size:
        inter[touch], union[touch] = _polygon_overlaps(gt, pred, gi[touch], pi[touch])
    return inter, union


def _polygon_overlaps(gt: FloatArray, pred: FloatArray, gi: npt.NDArray[np.intp],
                      pi: npt.NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
    """Exact intersection and union areas of the oriented-box pairs ``(gt[gi], pred[pi])``."""
    # One shapely geometry per box that has a candidate pair (few of all boxes).
    a, b = _polygons_at(gt, gi), _polygons_at(pred, pi)
    inter = _intersection_areas(a, b)
    # shapely's areas, not the shoelace on absolute coordinates: small boxes far from
    # the origin would otherwise get an IoU a hair above 1 with themselves.
    return inter, shapely.area(a) + shapely.area(b) - inter


def areas(boxes: FloatArray, oriented: bool) -> FloatArray:
    """Areas ``(N,)`` of xyxy boxes ``(N, 4)`` or, with ``oriented``, polygons ``(N, 4, 2)``
    (the shoelace formula on coordinates relative to each polygon's first vertex, so that
    boxes far from the origin keep their precision)."""
    if not oriented:
        return box_area(boxes)
    return polygon_area(boxes - boxes[:, :1, :]) if len(boxes) else np.zeros(0)


_PAIRS_PER_THREAD = 2000
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _intersection_areas(a: npt.NDArray[np.object_], b: npt.NDArray[np.object_]) -> FloatArray:
    """Areas of the pairwise intersections; GEOS releases the GIL, so large batches
    are split over the CPU cores (same values: each pair is computed alike)."""
    parts = min(os.cpu_count() or 1, 4, a.size // _PAIRS_PER_THREAD)
    if parts < 2:
        return shapely.area(shapely.intersection(a, b))
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ovearth-geos")
    chunks = np.array_split(np.arange(a.size), parts)
    return np.concatenate(list(_pool.map(
        lambda idx: shapely.area(shapely.intersection(a[idx], b[idx])), chunks)))


def _polygons_at(polys: FloatArray, index: npt.NDArray[np.int64]) -> npt.NDArray[np.object_]:
    """shapely polygons of ``polys[index]``, each distinct box built once."""
    unique, inverse = np.unique(index, return_inverse=True)
    return shapely.polygons(polys[unique])[inverse]


# ------------------------------------------------------------------ conversion helpers


def min_area_rects(point_sets: list[FloatArray]) -> FloatArray:
    """Minimum-area rotated rectangles ``(N, 4, 2)`` of point sets (each ``(K, 2)``).

    Vertices follow the rectangle's boundary (shapely's exterior ring, closing vertex
    dropped). A set whose points are collinear has no rectangle of positive area: its row
    is ``nan``.
    """
    out = np.full((len(point_sets), 4, 2), np.nan)
    if not point_sets:
        return out
    sizes = [len(p) for p in point_sets]
    points = np.concatenate([np.asarray(p, dtype=np.float64).reshape(-1, 2)
                             for p in point_sets])
    empty = np.array(sizes) == 0
    rects = np.full(len(point_sets), None, dtype=object)
    if not empty.all():
        # Collinear sets divide by zero inside GEOS (their rows become nan below).
        with np.errstate(divide="ignore", invalid="ignore"):
            rects[~empty] = shapely.oriented_envelope(shapely.multipoints(
                points, indices=np.repeat(np.arange(int((~empty).sum())),
                                          np.array(sizes)[~empty])))
    is_poly = shapely.get_type_id(rects) == shapely.GeometryType.POLYGON  # None gives -1
    if is_poly.any():
        rings = shapely.get_coordinates(shapely.get_exterior_ring(rects[is_poly]))
        sizes = shapely.get_num_coordinates(rects[is_poly])
        if (sizes == 5).all():
            out[is_poly] = rings.reshape(-1, 5, 2)[:, :4]
        else:  # GEOS may keep a collinear vertex: fall back to one at a time
            for k, rect in zip(np.flatnonzero(is_poly), rects[is_poly], strict=True):
                out[k] = _four_corners(rect)
    bad = ~np.isfinite(out).all(axis=(1, 2))
    bad[~bad] = polygon_area(out[~bad]) <= 0
    out[bad] = np.nan
    return out


def _four_corners(rect: Any) -> FloatArray:
    ring = shapely.get_coordinates(shapely.get_exterior_ring(rect))[:-1]
    if len(ring) == 4:
        return ring
    simple = shapely.get_coordinates(shapely.get_exterior_ring(
        shapely.simplify(rect, 0.0)))[:-1]
    return simple if len(simple) == 4 else np.full((4, 2), np.nan)


# Outcome of :func:`boundary_order` per quadrilateral.
QUAD_KEPT, QUAD_REORDERED, QUAD_DEGENERATE = 0, 1, 3


def boundary_order(quads: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int8]]:
    """Make quadrilaterals ``(N, 4, 2)`` valid oriented boxes, changing as little as possible.

    Returns the boxes and an outcome per box: ``QUAD_KEPT`` (already a simple polygon,
    convex or concave, unchanged), ``QUAD_REORDERED`` (self-crossing vertex order: vertices
    sorted by angle around their centroid, clockwise on screen, the first vertex kept first)
    or ``QUAD_DEGENERATE`` (no positive area; its row is ``nan``). Four points with one
    inside the triangle of the others are simple in every order, so a self-crossing order
    is always of four points in convex position, and sorting makes it convex.
    """
    quads = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    out = quads.copy()
    status = np.zeros(len(quads), dtype=np.int8)
    _, ok, _ = polygon_checks(quads, concave=True)
    todo = np.flatnonzero(~ok)
    if todo.size == 0:
        return out, status
    sub = quads[todo]
    centre = sub.mean(axis=1, keepdims=True)
    angle = np.arctan2(sub[..., 1] - centre[..., 1], sub[..., 0] - centre[..., 0])
    # Angles relative to the first vertex, so the sort keeps it first.
    rel = np.mod(angle - angle[:, :1], 2 * np.pi)
    order = np.argsort(rel, axis=1, kind="stable")
    sorted_quads = np.take_along_axis(sub, order[..., None], axis=1)
    _, sorted_ok, _ = polygon_checks(sorted_quads, concave=True)
    out[todo[sorted_ok]] = sorted_quads[sorted_ok]
    status[todo[sorted_ok]] = QUAD_REORDERED
    status[todo[~sorted_ok]] = QUAD_DEGENERATE
    out[todo[~sorted_ok]] = np.nan
    return out, status


def valid_polygons(polys: FloatArray, concave: bool = False) -> npt.NDArray[np.bool_]:
    """Which of ``(N, 4, 2)`` polygons :func:`parse_polygon` accepts (finite, convex, area >
    0; with ``concave``, simple)."""
    return polygon_checks(np.asarray(polys, dtype=np.float64).reshape(-1, 4, 2), concave)[1]
