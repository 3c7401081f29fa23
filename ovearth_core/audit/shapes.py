"""The objects of one query, one source (the ground truth or a submission), per modality,
and the overlapping pairs of two object sets with their IoU.

Boxes are xyxy ``(N, 4)``, oriented boxes ``(N, 4, 2)`` (:mod:`ovearth_core.geometry`);
a mask's objects are its 8-connected components
(:mod:`ovearth_core.analysis.mask_objects`, no pixel decoded). Every object also has its
axis-aligned envelope, xyxy in pixels (the box a suspect is reported with), and a score
(``nan`` where the modality carries none: masks, unscored boxes).

Pairs are found from the envelopes first (an STRtree, :func:`geometry.envelope_pairs`)
and intersected exactly only then, so the work follows the overlapping pairs, not every
pair; masks intersect their components' column segments directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import geometry
from ..types import Sample

IntArray = npt.NDArray[np.intp]
FloatArray = npt.NDArray[np.float64]
MODALITIES = ("bbox", "oriented_bbox", "segmentation")


@dataclass(frozen=True)
class Objects:
    """One source's objects on one query: ``geom`` (xyxy ``(N, 4)``, polygons
    ``(N, 4, 2)`` or mask components), ``envelope`` xyxy ``(N, 4)``, ``scores`` ``(N,)``."""

    geom: Any
    envelope: FloatArray
    scores: FloatArray

    def __len__(self) -> int:
        return len(self.scores)


def objects(sample: Sample, modality: str, side: str) -> Objects:
    """The ground truth's (``side="gt"``) or the prediction's (``"pred"``) objects of a
    query in ``modality``."""
    return objects_of([sample], modality, side)[0]


def objects_of(samples: Sequence[Sample], modality: str, side: str) -> list[Objects]:
    """:func:`objects` of many queries; masks split into components in one pass for them
    all (:func:`~ovearth_core.analysis.mask_objects.components_of`: its fixed cost is paid
    once, not per query)."""
    if modality == "bbox":
        return [Objects(b, b, np.asarray(np.ones(len(b)) if side == "gt" else sc, dtype=float))
                for b, sc in ((s.gt_boxes if side == "gt" else s.pred_boxes, s.pred_box_scores)
                              for s in samples)]
    if modality == "oriented_bbox":
        return [Objects(p, geometry.envelope(p),
                        np.asarray(np.ones(len(p)) if side == "gt" else sc, dtype=float))
                for p, sc in ((s.gt_obbs if side == "gt" else s.pred_obbs, s.pred_obb_scores)
                              for s in samples)]
    from ..analysis.mask_objects import components_of

    fill = 1.0 if side == "gt" else np.nan
    comps = components_of([s.gt_mask if side == "gt" else s.pred_mask for s in samples])
    return [Objects(c, _component_envelopes(c), np.full(c.count, fill)) for c in comps]


def _component_envelopes(comp: Any) -> FloatArray:
    """xyxy envelopes of mask components (from their pieces: one column, or whole columns
    with rows 0..h-1; pixel edges)."""
    out = np.zeros((comp.count, 4))
    if comp.count == 0:
        return out
    h = comp.size[0]
    c0, c1 = comp.start // h, (comp.stop - 1) // h
    y0, y1 = comp.start - c0 * h, comp.stop - c1 * h
    out[:, :2] = np.inf
    out[:, 2:] = -np.inf
    np.minimum.at(out[:, 0], comp.label, c0)
    np.minimum.at(out[:, 1], comp.label, y0)
    np.maximum.at(out[:, 2], comp.label, c1 + 1)
    np.maximum.at(out[:, 3], comp.label, y1)
    return out


def pairs(a: Objects, b: Objects, modality: str) -> tuple[IntArray, IntArray, FloatArray]:
    """``(i, j, iou)`` of every pair ``a[i]``, ``b[j]`` with a positive IoU."""
    if modality == "segmentation":
        from ..analysis.mask_objects import overlaps

        return overlaps(a.geom, b.geom)
    i, j = geometry.envelope_pairs(a.envelope, b.envelope)
    return _iou(a.geom, b.geom, i, j, modality)


def _iou(ga: FloatArray, gb: FloatArray, i: IntArray, j: IntArray, modality: str
         ) -> tuple[IntArray, IntArray, FloatArray]:
    inter, union = geometry.pair_overlaps(ga, gb, i, j, modality == "oriented_bbox")
    iou = np.minimum(inter / np.where(union > 0, union, 1.0), 1.0)
    keep = iou > 0
    return i[keep], j[keep], iou[keep]


def pairs_by_set(a: Objects, sets: Sequence[Objects], modality: str
                 ) -> list[tuple[IntArray, IntArray, FloatArray]]:
    """:func:`pairs` of ``a`` with each of ``sets``; boxes in one pass over the sets pooled
    (one STRtree for them all), masks set by set."""
    if modality == "segmentation" or not sets:
        return [pairs(a, b, modality) for b in sets]
    pooled = Objects(np.concatenate([b.geom for b in sets]),
                     np.concatenate([b.envelope for b in sets]),
                     np.concatenate([b.scores for b in sets]))
    i, j, iou = pairs(a, pooled, modality)
    offsets = np.cumsum([0, *(len(b) for b in sets)])
    owner = np.searchsorted(offsets, j, side="right") - 1
    order = np.argsort(owner, kind="stable")
    i, j, iou, owner = i[order], j[order], iou[order], owner[order]
    cuts = np.searchsorted(owner, np.arange(len(sets) + 1))
    return [(i[lo:hi], j[lo:hi] - offsets[k], iou[lo:hi])
            for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True))]


def pooled_candidates(sets: Sequence[Objects], modality: str,
                      eligible: npt.NDArray[np.bool_] | None = None
                      ) -> tuple[IntArray, IntArray, FloatArray | None]:
    """``(u, v, iou)``, ``u < v``, over the objects of ``sets`` numbered one set after
    another (only ``eligible`` ones, when given): the pairs that may overlap. Boxes: those
    whose envelopes overlap, ``iou`` ``None``; every pair is listed, so a clustering
    searches one seed at a time instead (:func:`seed_search`); masks: every pair of
    components of two sets sharing a pixel, with its IoU."""
    if modality != "segmentation":
        envelopes = np.concatenate([s.envelope for s in sets] or [np.zeros((0, 4))])
        keep = np.ones(len(envelopes), dtype=bool) if eligible is None else eligible
        idx = np.flatnonzero(keep)
        i, j = geometry.envelope_pairs(envelopes[idx])
        return idx[i], idx[j], None
    return _mask_pairs([s.geom for s in sets], eligible)


def seed_search(sets: Sequence[Objects], eligible: npt.NDArray[np.bool_]
                ) -> Callable[[int], IntArray]:
    """Boxes: ``near(k)``, the ``eligible`` pooled objects (numbered one set after another)
    whose envelopes overlap object ``k``'s, ascending (:func:`geometry.envelope_search`):
    a clustering asks for one seed's candidates at a time, so memory follows the seed's
    neighbours, never every pair of a crowded query (10 x 1,000 boxes on one query listed
    about 50 million pairs before anything was pruned)."""
    envelopes = np.concatenate([s.envelope for s in sets] or [np.zeros((0, 4))])
    return geometry.envelope_search(envelopes, eligible)


def areas(sets: Sequence[Objects], modality: str) -> FloatArray:
    """Areas ``(N,)`` of the pooled boxes (xyxy or polygons)."""
    geom = np.concatenate([s.geom for s in sets]) if sets else np.zeros((0, 4))
    if modality == "oriented_bbox":
        return geometry.polygon_area(geom.reshape(-1, 4, 2))
    return (geom[:, 2] - geom[:, 0]) * (geom[:, 3] - geom[:, 1]) if len(geom) else np.zeros(0)


def _mask_pairs(comps: Sequence[Any], eligible: npt.NDArray[np.bool_] | None = None
                ) -> tuple[IntArray, IntArray, FloatArray]:
    """``(u, v, iou)``, ``u < v``, of the components of ``comps`` (numbered one mask after
    another; only ``eligible`` ones, when given, their pieces dropped before the sweep) of
    two different masks sharing a pixel: one sweep over every mask's pieces sorted by
    start (a piece meets the later ones starting before it ends), their shared pixels
    summed per pair of components. Masks of another size than the first non-empty one
    share no pixel with it (as ``overlaps``)."""
    sizes = [c.size for c in comps if c.count]
    offsets = np.cumsum([0, *(c.count for c in comps)])
    parts = [(k, c) for k, c in enumerate(comps) if c.count and c.size == sizes[0]]
    empty = np.zeros(0, dtype=np.intp)
    if len(parts) < 2:
        return empty, empty, np.zeros(0)
    start = np.concatenate([c.start for _, c in parts])
    stop = np.concatenate([c.stop for _, c in parts])
    label = np.concatenate([c.label + offsets[k] for k, c in parts])
    mask = np.concatenate([np.full(c.start.size, k) for k, c in parts])
    area = np.zeros(int(offsets[-1]))
    for k, c in parts:
        area[offsets[k]:offsets[k + 1]] = c.area
    if eligible is not None:
        keep = eligible[label]
        start, stop, label, mask = start[keep], stop[keep], label[keep], mask[keep]
    order = np.argsort(start, kind="stable")
    start, stop, label, mask = start[order], stop[order], label[order], mask[order]
    # Segment i meets every later j with start[j] < stop[i].
    first = np.arange(start.size) + 1
    last = np.searchsorted(start, stop, side="left")
    n = np.maximum(last - first, 0)
    i = np.repeat(np.arange(start.size), n)
    j = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n - first, n)
    keep = mask[i] != mask[j]
    i, j = i[keep], j[keep]
    shared = np.minimum(stop[i], stop[j]) - start[j]
    a, b = np.minimum(label[i], label[j]), np.maximum(label[i], label[j])
    pairs_, where = np.unique(a.astype(np.int64) * offsets[-1] + b, return_inverse=True)
    inter = np.bincount(where, weights=shared, minlength=pairs_.size)
    u, v = (pairs_ // offsets[-1]).astype(np.intp), (pairs_ % offsets[-1]).astype(np.intp)
    return u, v, inter / (area[u] + area[v] - inter)


def seed_ious(geom: FloatArray, seed: int, others: IntArray, modality: str) -> FloatArray:
    """IoU ``(K,)`` of the box ``geom[seed]`` with each of ``geom[others]`` (xyxy
    ``(N, 4)`` or polygons ``(N, 4, 2)`` of the sets pooled)."""
    if others.size == 0:
        return np.zeros(0)
    seeds = np.full(others.size, seed, dtype=np.intp)
    inter, union = geometry.pair_overlaps(geom, geom, seeds, others,
                                          modality == "oriented_bbox")
    return np.minimum(inter / np.where(union > 0, union, 1.0), 1.0)


def xywh(envelope: FloatArray) -> list[float]:
    """An xyxy envelope as ``[x, y, w, h]`` (rounded to 0.01 px, for the output)."""
    x1, y1, x2, y2 = (float(v) for v in envelope)
    return [round(x1, 2), round(y1, 2), round(x2 - x1, 2), round(y2 - y1, 2)]
