"""The objects of one query, one source (the ground truth or a submission), per modality,
and the overlapping pairs of two object sets with their IoU.

Boxes are xyxy ``(N, 4)``, oriented boxes ``(N, 4, 2)`` (:mod:`ovearth_core.geometry`);
a mask's objects are its 8-connected components
(:mod:`ovearth_core.analysis.mask_objects`, no pixel decoded). Every object also has its
axis-aligned envelope, xyxy in pixels (the box a suspect is reported with), and a score
(``nan`` where the modality carries none: masks, unscored boxes).

Pairs are found from the envelopes first (an STRtree, :func:`geometry.overlapping_pairs`)
and intersected exactly only then, so the work follows the overlapping pairs, not every
pair; masks intersect their components' column segments directly.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    if modality == "bbox":
        boxes = sample.gt_boxes if side == "gt" else sample.pred_boxes
        scores = np.ones(len(boxes)) if side == "gt" else sample.pred_box_scores
        return Objects(boxes, boxes, np.asarray(scores, dtype=float))
    if modality == "oriented_bbox":
        polys = sample.gt_obbs if side == "gt" else sample.pred_obbs
        scores = np.ones(len(polys)) if side == "gt" else sample.pred_obb_scores
        return Objects(polys, geometry.envelope(polys), np.asarray(scores, dtype=float))
    from ..analysis.mask_objects import components

    comp = components(sample.gt_mask if side == "gt" else sample.pred_mask)
    fill = 1.0 if side == "gt" else np.nan
    return Objects(comp, _component_envelopes(comp), np.full(comp.count, fill))


def _component_envelopes(comp: Any) -> FloatArray:
    """xyxy envelopes of mask components (from their column segments; pixel edges)."""
    out = np.zeros((comp.count, 4))
    if comp.count == 0:
        return out
    h = comp.size[0]
    col = comp.start // h
    y0, y1 = comp.start - col * h, comp.stop - col * h
    out[:, :2] = np.inf
    out[:, 2:] = -np.inf
    np.minimum.at(out[:, 0], comp.label, col)
    np.minimum.at(out[:, 1], comp.label, y0)
    np.maximum.at(out[:, 2], comp.label, col + 1)
    np.maximum.at(out[:, 3], comp.label, y1)
    return out


def pairs(a: Objects, b: Objects, modality: str) -> tuple[IntArray, IntArray, FloatArray]:
    """``(i, j, iou)`` of every pair ``a[i]``, ``b[j]`` with a positive IoU."""
    if modality == "segmentation":
        from ..analysis.mask_objects import overlaps

        return overlaps(a.geom, b.geom)
    i, j = geometry.overlapping_pairs(a.envelope, b.envelope)
    return _iou(a.geom, b.geom, i, j, modality)


def _iou(ga: FloatArray, gb: FloatArray, i: IntArray, j: IntArray, modality: str
         ) -> tuple[IntArray, IntArray, FloatArray]:
    inter, union = geometry.pair_overlaps(ga, gb, i, j, modality == "oriented_bbox")
    iou = np.minimum(inter / np.where(union > 0, union, 1.0), 1.0)
    keep = iou > 0
    return i[keep], j[keep], iou[keep]


def pooled_pairs(sets: Sequence[Objects], modality: str
                 ) -> tuple[IntArray, IntArray, FloatArray]:
    """``(u, v, iou)``, ``u < v``, over the objects of ``sets`` numbered one set after
    another: every overlapping pair of objects of two different sets (or of one set: the
    caller keeps one object per set in a cluster)."""
    offsets = np.cumsum([0, *(len(s) for s in sets)])
    if modality != "segmentation":
        live = [s for s in sets if len(s)]
        if not live:
            empty = np.zeros(0, dtype=np.intp)
            return empty, empty, np.zeros(0)
        geom = np.concatenate([s.geom for s in live])
        env = np.concatenate([s.envelope for s in live])
        i, j = geometry.overlapping_pairs(env)
        return _iou(geom, geom, i, j, modality)
    from ..analysis.mask_objects import overlaps

    us, vs, ious = [], [], []
    for s, a in enumerate(sets):
        for t in range(s + 1, len(sets)):
            i, j, iou = overlaps(a.geom, sets[t].geom)
            us.append(i + offsets[s])
            vs.append(j + offsets[t])
            ious.append(iou)
    if not us:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, np.zeros(0)
    return (np.concatenate(us).astype(np.intp), np.concatenate(vs).astype(np.intp),
            np.concatenate(ious))


def xywh(envelope: FloatArray) -> list[float]:
    """An xyxy envelope as ``[x, y, w, h]`` (rounded to 0.01 px, for the output)."""
    x1, y1, x2, y2 = (float(v) for v in envelope)
    return [round(x1, 2), round(y1, 2), round(x2 - x1, 2), round(y2 - y1, 2)]
