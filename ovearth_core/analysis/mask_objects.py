"""Object-level diagnosis of masks: a query's GT and predicted masks split into objects.

A query has one GT mask and one predicted mask (spec, "Segmentation"); the objects are
their *connected components*, 8-connected (pixels sharing an edge or a corner, as
``scipy.ndimage.label`` with a full 3 x 3 structure): a rasterised thin object at an
angle (a ship, a bridge, a road at 45 degrees) touches itself only at pixel corners, and
4-connectivity would cut it into dozens of one-pixel "background" blobs; the price is
that packed objects touching at a corner, or merged into one blob in the GT mask, are one
object (the GT mask holds no instance ids). Components are numbered in the RLE's pixel
order, column-major: by their first pixel, the leftmost column first, top to bottom
within a column (``scipy.ndimage.label``'s order on the transposed mask).

The IoU of two components is ``|A & B| / |A | B|`` in pixels. Matching and outcomes are
the boxes' (:mod:`.objects`, TIDE's kinds): GT and predicted components of a query are
matched one-to-one at the run's IoU threshold ``t_f`` by the evaluator's rule
(:func:`~ovearth_core.matching.match_pairs` on the overlapping pairs: most pairs, then
largest IoU); a predicted
component is ``localisation``, ``class confusion`` (IoU >= ``t_f`` with a GT component
of another category's query on the same image), ``duplicate``, ``background`` or
``both`` in TIDE's order, and a GT component ``matched``, ``mislocalised``, ``found as
other class`` or ``missed``. A split prediction (two halves of one GT object) gives one
half the match when it reaches ``t_f`` and the other ``localisation``; a merged
prediction over two GT objects matches neither unless one dominates. Masks carry no
score (``pred_score`` is ``nan``). Masks of two queries of one image with different
sizes share no pixel (the loader checks each GT mask against its image's size, so
only annotations without an image size can differ).

Everything is done on the masks' runs, in the RLE domain (no pixel is decoded): a mask's
runs (:func:`ovearth_core.masks.run_lengths`) are cut into at most three pieces each (the
part in the run's first column, its whole columns as one piece, the part in its last
column); pieces in neighbouring columns whose rows overlap or touch at a corner are
joined (``scipy.sparse.csgraph.connected_components``); intersections are the overlaps of
two sorted lists of pieces. Time and memory follow the number of runs, never the pixels
or the columns (issue 48: a 1 x 536,870,911 scene's few runs once became a segment per
pixel and a MemoryError): on the full-scale synthetic benchmark (masks
up to 5,200 x 5,200, 340 million foreground pixels in one persona's vocabulary task) a
decode-and-label version took 70 s, this one a small fraction (benchmarks/README.md). The
tests check it against pycocotools' decode and ``scipy.ndimage.label`` on the pixels.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .. import masks
from ..types import Sample
from .object_kinds import (
    BACKGROUND_IOU,
    QueryObjects,
    QueryOverlaps,
    classify_image,
    overlaps_of,
)

IntArray = npt.NDArray[np.intp]
FloatArray = npt.NDArray[np.float64]
MODALITY = "segmentation"


@dataclass(frozen=True)
class Components:
    """A mask's connected components as pieces of its runs: ``start`` / ``stop`` ``(S,)``
    the column-major flat indices (``x * height + y``) ``[start, stop)`` of each piece,
    sorted: foreground pixels within one column, or whole columns (a run's middle, one piece
    however many columns; :func:`_segments`); ``label`` ``(S,)`` the component of each
    (0-based, column-major order); ``area`` ``(K,)`` the pixels of each component."""

    size: tuple[int, int]
    start: npt.NDArray[np.int64]
    stop: npt.NDArray[np.int64]
    label: IntArray
    area: npt.NDArray[np.int64]

    @property
    def count(self) -> int:
        return int(self.area.size)


def _empty(size: tuple[int, int]) -> Components:
    none = np.zeros(0, dtype=np.int64)
    return Components(size, none, none, np.zeros(0, dtype=np.intp), none)


def _expand(lo: npt.NDArray[np.int64], hi: npt.NDArray[np.int64]
            ) -> tuple[IntArray, npt.NDArray[np.int64]]:
    """``(i, j)`` for every ``i`` and every ``j`` in ``[lo[i], hi[i])``."""
    n = np.maximum(hi - lo, 0)
    i = np.repeat(np.arange(n.size, dtype=np.intp), n)
    return i, np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n - lo, n)


def _segments(rle: masks.Rle, h: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The mask's foreground runs (:func:`ovearth_core.masks.run_lengths`) cut into at most
    three pieces each: the part in its first column, the whole columns it covers (one
    piece, however many), the part in its last column. ``[start, stop)`` flat, sorted; a
    piece lies in one column or covers whole columns, so there are at most three per run,
    whatever the mask's size (a 1 x 536,870,911 scene's run was a segment per pixel)."""
    runs = masks.run_lengths(rle)
    ends = np.cumsum(runs)
    start, stop = (ends - runs)[1::2], ends[1::2]
    keep = stop > start
    start, stop = start[keep], stop[keep]
    # Cut points: the end of the first column and the start of the last one, when inside.
    head = np.minimum((start // h + 1) * h, stop)
    tail = np.maximum((stop - 1) // h * h, head)
    bounds = np.stack([start, head, tail, stop], axis=1)
    lo, hi = bounds[:, :3].ravel(), bounds[:, 1:].ravel()
    piece = hi > lo
    return lo[piece], hi[piece]


def components(rle: masks.Rle | None) -> Components:
    """The 8-connected components of a mask (none for ``None``): :func:`components_of`."""
    return components_of([rle])[0]


def components_of(rles: Sequence[masks.Rle | None]) -> list[Components]:
    """The 8-connected components of each mask, from its runs: no pixel is decoded. Two
    pieces (:func:`_segments`) are connected when one's last column neighbours the other's
    first and their rows overlap or touch at a corner (rows ``[y0, y1]`` and ``[v0, v1]``
    with ``v0 <= y1 + 1`` and ``y0 <= v1 + 1``); pieces of one column are never neighbours
    (a background pixel lies between them). Time and memory follow the runs (at most three
    pieces each), never the pixels or the columns. The masks' pieces form one graph (no
    edge joins two masks): one call of ``connected_components`` for them all, whose fixed
    cost (about 0.5 ms) was most of the time with a call per mask."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    parts = []  # (size, start, stop, lo, hi) per mask with a foreground
    out: list[Components | None] = []
    for rle in rles:
        if rle is None:
            out.append(_empty((0, 0)))
            continue
        h, w = int(rle["size"][0]), int(rle["size"][1])
        start, stop = _segments(rle, h)
        if start.size == 0:
            out.append(_empty((h, w)))
            continue
        # A piece covers columns c0..c1: one column, or whole columns (rows 0..h-1), so its
        # rows are [y0, y1] in each of its columns.
        c0, c1 = start // h, (stop - 1) // h
        y0, y1 = start - c0 * h, stop - 1 - c1 * h
        # Keys with a stride of h + 2 per column: y - 1 and y + 1 stay in the column's slot.
        # A piece's neighbours on the right start in column c1 + 1 (none can start before
        # and reach it: a piece sharing a column with another lies in that column alone).
        stride = h + 2
        k0, k1 = c0 * stride + y0 + 1, c0 * stride + y1 + 1
        nxt = (c1 + 1) * stride
        lo = np.searchsorted(k1, nxt + y0, "left")
        hi = np.maximum(np.searchsorted(k0, nxt + y1 + 2, "right"), lo)
        parts.append(((h, w), start, stop, lo, hi))
        out.append(None)
    if not parts:
        return [c for c in out if c is not None]
    sizes = np.array([p[1].size for p in parts], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    n = int(offsets[-1])
    lo = np.concatenate([p[3] + off for p, off in zip(parts, offsets.tolist(), strict=False)])
    hi = np.concatenate([p[4] + off for p, off in zip(parts, offsets.tolist(), strict=False)])
    # The edges come out by source segment: the graph is built as CSR directly.
    _, targets = _expand(lo, hi)
    graph = csr_matrix((np.ones(targets.size, dtype=np.int8), targets,
                        np.concatenate(([0], np.cumsum(hi - lo)))), shape=(n, n))
    k, labels = connected_components(graph, directed=False)
    first = np.full(k, n, dtype=np.intp)
    np.minimum.at(first, labels, np.arange(n, dtype=np.intp))
    rank = np.empty(k, dtype=np.intp)
    rank[np.argsort(first)] = np.arange(k, dtype=np.intp)
    # Numbered by first segment: column-major within a mask, the masks one after another.
    label = rank[labels]
    made = iter(range(len(parts)))
    result = []
    for c in out:
        if c is not None:
            result.append(c)
            continue
        m = next(made)
        size, start, stop = parts[m][:3]
        own = label[offsets[m]:offsets[m + 1]]
        own = own - own[0]
        result.append(Components(size, start, stop, own, np.bincount(
            own, weights=stop - start).astype(np.int64)))
    return result


def overlaps(a: Components, b: Components) -> tuple[IntArray, IntArray, FloatArray]:
    """``(i, j, iou)`` of every pair of a component of ``a`` and one of ``b`` sharing at
    least one pixel (sorted by ``i``, then ``j``), from their segments."""
    if a.size != b.size or a.start.size == 0 or b.start.size == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, np.zeros(0)
    sa, sb = _expand(np.searchsorted(b.stop, a.start, "right"),
                     np.searchsorted(b.start, a.stop, "left"))
    shared = (np.minimum(a.stop[sa], b.stop[sb]) - np.maximum(a.start[sa], b.start[sb]))
    code = a.label[sa].astype(np.int64) * b.count + b.label[sb]
    pairs, where = np.unique(code, return_inverse=True)
    inter = np.bincount(where, weights=shared, minlength=pairs.size)
    i, j = (pairs // b.count).astype(np.intp), (pairs % b.count).astype(np.intp)
    return i, j, inter / (a.area[i] + b.area[j] - inter)


def _query(index: int, sample: Sample, gt: Components, pred: Components,
           pool: Sequence[Components], owners: list[tuple[int, int]],
           pool_first: Sequence[int], t_f: float) -> QueryOverlaps:
    """:func:`.object_kinds.overlaps_of` from the components' sparse overlaps (``pool``: the GT
    components of the image's other-category queries, their rows starting at
    ``pool_first``)."""
    parts = [overlaps(c, pred) for c in pool]
    none = np.zeros(0, dtype=np.intp)
    rows = (np.concatenate([i + first for (i, _, _), first in
                            zip(parts, pool_first, strict=True)]).astype(np.intp)
            if parts else none)
    cols = np.concatenate([j for _, j, _ in parts]).astype(np.intp) if parts else none
    vals = np.concatenate([v for _, _, v in parts]) if parts else np.zeros(0)
    return overlaps_of(index, sample, gt.count, pred.count, np.full(pred.count, np.nan),
                       overlaps(gt, pred), (rows, cols, vals), owners, t_f, None)


def _image_objects(samples: Sequence[Sample], indices: Sequence[int], t_f: float,
                   t_b: float) -> list[QueryObjects]:
    # A GT mask shared by several queries is labelled once; all of the image's masks in
    # one graph.
    targets = [s.gt_mask if not s.negative else None for s in samples]
    distinct = list({id(m): m for m in targets if m is not None}.values())
    every = components_of([*distinct, *(s.pred_mask for s in samples)])
    found = dict(zip(map(id, distinct), every[:len(distinct)], strict=True))
    gts = [found[id(m)] if m is not None else _empty((0, 0)) for m in targets]
    preds = every[len(distinct):]
    queries = []
    for pos, s in enumerate(samples):
        others = [q for q, other in enumerate(samples) if other.category != s.category
                  and gts[q].count]
        owners = [(q, g) for q in others for g in range(gts[q].count)]
        firsts = np.cumsum([0, *(gts[q].count for q in others)])[:-1].tolist()
        queries.append(_query(indices[pos], s, gts[pos], preds[pos],
                              [gts[q] for q in others], owners, firsts, t_f))
    return classify_image(queries, t_f, t_b, MODALITY)


def query_objects(samples: Sequence[Sample], iou_threshold: float,
                  background_iou: float = BACKGROUND_IOU) -> list[QueryObjects]:
    """Object outcomes of every query's mask components (in ``samples`` order), an image
    at a time: memory follows the segments of one image's masks."""
    by_image: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(samples):
        by_image[s.image_path].append(i)
    out: dict[int, QueryObjects] = {}
    for indices in by_image.values():
        for qo in _image_objects([samples[i] for i in indices], indices, iou_threshold,
                                 background_iou):
            out[qo.index] = qo
    return [out[i] for i in range(len(samples))]
