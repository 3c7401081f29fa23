"""Axis-aligned boxes and oriented boxes: parsing, validation and IoU matrices.

This is the only module that imports shapely.

Coordinates are absolute pixels, continuous (a box from x1 to x2 is x2 - x1
wide). Internally an axis-aligned box is ``[x1, y1, x2, y2]`` (arrays of shape
``(N, 4)``) and an oriented box is four boundary-ordered vertices ``[[x, y], ...]``
(arrays of shape ``(N, 4, 2)``), clockwise or counter-clockwise.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from .lazymodule import LazyModule
from .masks import FieldError

# shapely is imported on first use (``--help`` of the commands does not need it).
shapely: Any = LazyModule("shapely", globals(), "shapely")

FloatArray = npt.NDArray[np.float64]
BOX_SENTINEL = (0.0, 0.0, 0.0, 0.0)
# IoU multiplies coordinates: areas and cross products two at a time, GEOS's polygon
# intersection up to three (its overlay fails from about 5e102, the cube root of the largest
# double). Within +-1e100 every such product is a finite double, so no IoU overflows; larger
# coordinates are a validation problem, not a RuntimeWarning and an IoU of nan.
MAX_COORDINATE = 1e100
IN_RANGE = "coordinates within ±1e100 (absolute pixels; larger ones overflow IoU arithmetic)"
_NUMBER_TYPES = {int, float}  # exact types: JSON booleans (bool) are not numbers here


def _finite_number(value: object) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def parse_score(value: object) -> float:
    if not _finite_number(value):
        raise FieldError(".score", "a finite number", value)
    return float(value)


def parse_box(value: object, bbox_format: str) -> tuple[tuple[float, float, float, float] | None,
                                                         float | None]:
    """Parse one predicted box (object or shorthand form) to ``(xyxy, score)``.

    The ``[0, 0, 0, 0]`` compatibility sentinel gives ``(None, score)``.
    """
    score = None
    coords = value
    if isinstance(value, dict):
        if "bbox" not in value:
            raise FieldError(".bbox", "present in a box object {\"bbox\": [...], \"score\": s}",
                             "<missing>")
        coords = value["bbox"]
        if value.get("score") is not None or "score" in value:
            score = parse_score(value.get("score"))
        prefix = ".bbox"
    else:
        prefix = ""
    if type(coords) is not list or len(coords) != 4:
        raise FieldError(prefix, f"a box of four numbers [{_format_names(bbox_format)}]", coords)
    if not set(map(type, coords)) <= _NUMBER_TYPES or not all(map(math.isfinite, coords)):
        raise FieldError(prefix, "four finite numbers", coords)
    a, b, c, d = float(coords[0]), float(coords[1]), float(coords[2]), float(coords[3])
    if not max(abs(a), abs(b), abs(c), abs(d)) <= MAX_COORDINATE:
        raise FieldError(prefix, f"four {IN_RANGE}", coords)
    if (a, b, c, d) == BOX_SENTINEL:
        return None, score
    if bbox_format == "xywh":
        x2, y2 = a + c, b + d
        # x2 > a also rejects widths lost to rounding (1e20 + 1).
        if c <= 0 or d <= 0 or not (a < x2 <= MAX_COORDINATE and b < y2 <= MAX_COORDINATE):
            raise FieldError(prefix, "positive width and height, with x + width and y + height "
                             "within ±1e100 and greater than x and y (--bbox-format xywh)",
                             coords)
        return (a, b, x2, y2), score
    if c <= a or d <= b or not (math.isfinite(c - a) and math.isfinite(d - b)):
        raise FieldError(prefix, "x2 > x1 and y2 > y1, with a finite width and height "
                         "(--bbox-format xyxy)", coords)
    return (a, b, c, d), score


def _format_names(bbox_format: str) -> str:
    return "x, y, width, height" if bbox_format == "xywh" else "x1, y1, x2, y2"


def parse_gt_box(value: object) -> tuple[float, float, float, float]:
    """Parse one ground-truth COCO ``[x, y, width, height]`` box to xyxy."""
    if (not isinstance(value, list) or len(value) != 4
            or not all(_finite_number(v) for v in value)):
        raise FieldError("", "a COCO box [x, y, width, height] of four finite numbers", value)
    x, y, w, h = (float(v) for v in value)
    if not max(abs(x), abs(y), abs(w), abs(h)) <= MAX_COORDINATE:
        raise FieldError("", f"a COCO box [x, y, width, height] of four {IN_RANGE}", value)
    x2, y2 = x + w, y + h
    if w <= 0 or h <= 0 or not (x < x2 <= MAX_COORDINATE and y < y2 <= MAX_COORDINATE):
        raise FieldError("", "positive width and height, with x + width and y + height "
                         "within ±1e100 and greater than x and y", value)
    return x, y, x2, y2


def _four_vertices(value: object) -> list[tuple[float, float]] | None:
    """Fast path: the vertices of a well-formed ``[[x, y] * 4]`` of finite numbers, else None."""
    if type(value) is not list or len(value) != 4:
        return None
    try:
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = value
    except (TypeError, ValueError):
        return None
    coords = (x0, y0, x1, y1, x2, y2, x3, y3)
    if not set(map(type, coords)) <= _NUMBER_TYPES or not all(map(math.isfinite, coords)):
        return None
    if not all(type(v) is list for v in value):
        return None
    return [(float(x0), float(y0)), (float(x1), float(y1)), (float(x2), float(y2)),
            (float(x3), float(y3))]


def parse_polygon(value: object) -> tuple[tuple[float, float], ...]:
    """Validate an oriented box: four finite vertices, boundary order, convex, area > 0.

    Plain Python on purpose: for four vertices it is several times faster than numpy.
    """
    pts = _four_vertices(value)
    if pts is None:
        if not isinstance(value, list) or len(value) != 4:
            raise FieldError("", "exactly four vertices [[x, y], [x, y], [x, y], [x, y]]",
                             value)
        raise FieldError("", "vertices of two finite numbers [x, y]", value)
    # Tests run on coordinates divided by their scale, so huge values cannot overflow.
    scale = max(abs(c) for p in pts for c in p) or 1.0
    if not scale <= MAX_COORDINATE:
        raise FieldError("", f"vertices of two {IN_RANGE}", value)
    unit = [(x / scale, y / scale) for x, y in pts]
    tol = 1e-12
    positive = negative = False
    area2 = 0.0
    for i in range(4):
        (ax, ay), (bx, by), (cx, cy) = unit[i], unit[(i + 1) % 4], unit[(i + 2) % 4]
        cross = (bx - ax) * (cy - by) - (by - ay) * (cx - bx)
        positive |= cross > tol
        negative |= cross < -tol
        area2 += ax * by - bx * ay
    if positive and negative:
        raise FieldError("", "a convex polygon with vertices in boundary order (not self-crossing)",
                         value)
    if abs(area2) <= tol:
        raise FieldError("", "a polygon with positive area", value)
    return tuple(pts)


def parse_obb(value: object) -> tuple[tuple[tuple[float, float], ...], float | None]:
    """Parse one predicted oriented box (object or shorthand form) to ``(polygon, score)``."""
    if isinstance(value, dict):
        if "polygon" not in value:
            raise FieldError(".polygon", "present in an oriented box object", "<missing>")
        score = parse_score(value.get("score")) if "score" in value else None
        try:
            return parse_polygon(value["polygon"]), score
        except FieldError as err:
            raise FieldError(".polygon" + err.field, err.expected, err.found) from None
    return parse_polygon(value), None


# ------------------------------------------------------------------ batch parsing
# The parsers above define what is valid, item by item. The batch versions below
# check whole lists at once with numpy and hand every item they cannot vouch for
# (wrong types, failed checks, sentinels aside) back to the item parser, so
# they accept exactly what it accepts, with the same values and errors.

_ABSENT = object()  # "no score key", as opposed to a score of null


@dataclass(frozen=True)
class ParsedBatch:
    """Parsed items of one list: the kept geometries and the rejected items' errors.

    ``values[k]`` (a box ``(4,)`` or a polygon ``(4, 2)``) came from item
    ``index[k]``, with ``scores[k]`` (``nan`` without a score). Items that are the
    ``[0, 0, 0, 0]`` sentinel are neither kept nor errors.
    """

    values: FloatArray
    index: npt.NDArray[np.intp]
    scores: FloatArray
    errors: list[tuple[int, FieldError]]


def parse_boxes(items: list[object], bbox_format: str) -> ParsedBatch:
    """:func:`parse_box` over a list of predicted boxes, checked with numpy."""
    return _parse_batch(items, (4,), "bbox", lambda v: parse_box(v, bbox_format),
                        lambda a: _box_checks(a, bbox_format))


def parse_obbs(items: list[object]) -> ParsedBatch:
    """:func:`parse_obb` over a list of predicted oriented boxes, checked with numpy."""
    return _parse_batch(items, (4, 2), "polygon", parse_obb, _polygon_checks)


def parse_gt_boxes(items: list[object]) -> ParsedBatch:
    """:func:`parse_gt_box` over a list of COCO ``[x, y, w, h]`` boxes (values xyxy)."""
    return _parse_batch(items, (4,), None, lambda v: (parse_gt_box(v), None), _gt_box_checks)


def parse_polygons(items: list[object]) -> ParsedBatch:
    """:func:`parse_polygon` over a list of ground-truth polygons."""
    return _parse_batch(items, (4, 2), None, lambda v: (parse_polygon(v), None), _polygon_checks)


def _parse_batch(items: list[object], shape: tuple[int, ...], key: str | None,
                 scalar: Callable[[object], tuple[Any, float | None]],
                 checks: Callable[[FloatArray], tuple[FloatArray, npt.NDArray[np.bool_],
                                                      npt.NDArray[np.bool_]]]) -> ParsedBatch:
    n = len(items)
    values = np.zeros((n, *shape))
    ok = np.zeros(n, dtype=bool)
    skip = np.zeros(n, dtype=bool)
    scores = np.full(n, math.nan)
    # Each form (objects, shorthand lists) is checked in its own batch; anything else, and
    # every item a batch cannot vouch for, goes to the item parser.
    kinds = list(map(type, items))
    forms = set(kinds)
    for form in (dict, list):
        if form not in forms:
            continue
        where = (np.arange(n) if len(forms) == 1
                 else np.array([j for j, kind in enumerate(kinds) if kind is form]))
        fast = _numbers(items if len(forms) == 1 else [items[j] for j in where], shape, key)
        if fast is None:
            continue
        coords, found_scores, score_ok = fast
        found_values, found_ok, found_skip = checks(coords)
        trusted = (found_ok | found_skip) & score_ok
        values[where], scores[where] = found_values, found_scores
        ok[where], skip[where] = found_ok & trusted, found_skip & trusted
    recheck = ~(ok | skip)
    errors = []
    for j in np.flatnonzero(recheck).tolist():
        try:
            geom, score = scalar(items[j])
        except FieldError as err:
            errors.append((j, err))
            continue
        if geom is None:
            skip[j] = True
            continue
        values[j] = geom
        ok[j] = True
        scores[j] = math.nan if score is None else score
    index = np.flatnonzero(ok)
    return ParsedBatch(values[index], index, scores[index], errors)


def _numbers(items: list[object], shape: tuple[int, ...], key: str | None
             ) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]] | None:
    """Coordinates ``(N, *shape)`` and scores of items of one uniform, well-typed form.

    ``None`` when the list mixes forms or holds anything but nested lists of
    JSON numbers (the item parser then sorts it out); scores that are not finite
    numbers are flagged in the returned mask rather than rejected here.
    """
    n = len(items)
    kinds = set(map(type, items))
    absent: list[object] = [_ABSENT]
    if kinds == {dict} and key is not None:
        try:
            coords = [item[key] for item in items]  # type: ignore[index]
        except KeyError:
            return None
        raw_scores = [item.get("score", _ABSENT) for item in items]  # type: ignore[attr-defined]
    elif kinds <= {list}:
        coords, raw_scores = items, absent * n
    else:
        return None
    for size in shape:
        if set(map(type, coords)) - {list} or set(map(len, coords)) - {size}:
            return None
        coords = list(chain.from_iterable(coords))
    if set(map(type, coords)) - _NUMBER_TYPES:
        return None
    try:
        arr = np.array(coords, dtype=np.float64).reshape(n, *shape)
        scores = np.array([s if type(s) in _NUMBER_TYPES else math.nan for s in raw_scores],
                          dtype=np.float64).reshape(n)
    except OverflowError:  # integers beyond float range: the item parser reports them
        return None
    score_ok = np.array([s is _ABSENT or type(s) in _NUMBER_TYPES for s in raw_scores],
                        dtype=bool).reshape(n)
    absent_score = np.array([s is _ABSENT for s in raw_scores], dtype=bool).reshape(n)
    score_ok &= absent_score | np.isfinite(scores)
    return arr, scores, score_ok


def _box_checks(a: FloatArray, bbox_format: str
                ) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """xyxy values, validity and sentinel masks of ``(N, 4)`` predicted boxes."""
    x1, y1, c, d = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    finite = (np.abs(a) <= MAX_COORDINATE).all(axis=1)  # nan compares false
    sentinel = finite & (a == 0).all(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        if bbox_format == "xywh":
            x2, y2 = x1 + c, y1 + d
            ok = ((c > 0) & (d > 0) & (x1 < x2) & (x2 <= MAX_COORDINATE) & (y1 < y2)
                  & (y2 <= MAX_COORDINATE))
            values = np.stack([x1, y1, x2, y2], axis=1)
        else:
            ok = (c > x1) & (d > y1) & np.isfinite(c - x1) & np.isfinite(d - y1)
            values = a.copy()
    return values, finite & ok & ~sentinel, sentinel


def _gt_box_checks(a: FloatArray
                   ) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """xyxy values and validity of ``(N, 4)`` COCO ground-truth boxes (no sentinel)."""
    x, y, w, h = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    with np.errstate(over="ignore", invalid="ignore"):
        x2, y2 = x + w, y + h
        ok = ((np.abs(a) <= MAX_COORDINATE).all(axis=1) & (w > 0) & (h > 0) & (x < x2)
              & (x2 <= MAX_COORDINATE) & (y < y2) & (y2 <= MAX_COORDINATE))
    return np.stack([x, y, x2, y2], axis=1), ok, np.zeros(len(a), dtype=bool)


def _polygon_checks(a: FloatArray
                    ) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Validity of ``(N, 4, 2)`` polygons: :func:`parse_polygon`'s tests, same arithmetic."""
    n = len(a)
    finite = (np.abs(a) <= MAX_COORDINATE).all(axis=(1, 2))  # nan compares false
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.abs(a).max(axis=(1, 2), initial=0.0)
        scale[scale == 0] = 1.0
        unit = a / scale[:, None, None]
        positive = np.zeros(n, dtype=bool)
        negative = np.zeros(n, dtype=bool)
        area2 = np.zeros(n)
        tol = 1e-12
        for i in range(4):
            ax, ay = unit[:, i, 0], unit[:, i, 1]
            bx, by = unit[:, (i + 1) % 4, 0], unit[:, (i + 1) % 4, 1]
            cx, cy = unit[:, (i + 2) % 4, 0], unit[:, (i + 2) % 4, 1]
            cross = (bx - ax) * (cy - by) - (by - ay) * (cx - bx)
            positive |= cross > tol
            negative |= cross < -tol
            area2 = area2 + (ax * by - bx * ay)
        ok = finite & ~(positive & negative) & (np.abs(area2) > tol)
    return a, ok, np.zeros(n, dtype=bool)


def box_area(boxes: FloatArray) -> FloatArray:
    """Areas of ``(N, 4)`` xyxy boxes."""
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou_matrix(gt: FloatArray, pred: FloatArray) -> FloatArray:
    """IoU of every GT box (rows) with every predicted box (columns), shape ``(G, P)``."""
    if len(gt) == 0 or len(pred) == 0:
        return np.zeros((len(gt), len(pred)))
    x1 = np.maximum(gt[:, None, 0], pred[None, :, 0])
    y1 = np.maximum(gt[:, None, 1], pred[None, :, 1])
    x2 = np.minimum(gt[:, None, 2], pred[None, :, 2])
    y2 = np.minimum(gt[:, None, 3], pred[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    union = box_area(gt)[:, None] + box_area(pred)[None, :] - inter
    return inter / union


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
    w = (np.minimum(regions[:, None, 2], dets[None, :, 2])
         - np.maximum(regions[:, None, 0], dets[None, :, 0]))
    h = (np.minimum(regions[:, None, 3], dets[None, :, 3])
         - np.maximum(regions[:, None, 1], dets[None, :, 1]))
    inter = np.clip(w, 0, None) * np.clip(h, 0, None)
    return inter / box_area(dets)[None, :]


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
            a = gt[lo:lo + step, None, :]
            w = np.minimum(a[..., 2], pred[:, 2]) - np.maximum(a[..., 0], pred[:, 0])
            h = np.minimum(a[..., 3], pred[:, 3]) - np.maximum(a[..., 1], pred[:, 1])
            inter = np.clip(w, 0, None) * np.clip(h, 0, None)
            out[lo:lo + step] = inter / (area_g[lo:lo + step, None] + area_p - inter)
        return out
    env_g, env_p = envelope(gt), envelope(pred)
    tree = shapely.STRtree(shapely.box(*env_p.T))
    gi, pi = tree.query(shapely.box(*env_g.T))
    cand = _obb_candidates(gi, pi, min_iou, env_g, env_p, polygon_area(gt), polygon_area(pred))
    out[gi[cand], pi[cand]] = _obb_pair_iou(gt, pred, gi[cand], pi[cand])
    return out


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
                flat[pair_start[lo]:pair_start[lo] + part.sum()] = _box_pair_iou(all_gt[gi],
                                                                                 all_pred[pi])
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
    inter = _box_pair_intersection(a, b)
    return inter / (box_area(a) + box_area(b) - inter)


def _box_pair_intersection(a: FloatArray, b: FloatArray) -> FloatArray:
    w = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    h = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    return np.clip(w, 0, None) * np.clip(h, 0, None)


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
    bound = np.minimum(_box_pair_intersection(env_g[gi], env_p[pi]),
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
    envelopes overlap)."""
    if gi.size == 0:
        return np.zeros(0)
    inter, union = _polygon_overlaps(gt, pred, gi, pi)
    return np.minimum(inter / union, 1.0)


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
        inter = _box_pair_intersection(a, b)
        return inter, box_area(a) + box_area(b) - inter
    inter = np.zeros(gi.size)
    union = areas(gt[gi], True) + areas(pred[pi], True)
    touch = np.flatnonzero(_box_pair_intersection(envelope(gt[gi]), envelope(pred[pi])) > 0)
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
QUAD_KEPT, QUAD_REORDERED, QUAD_RECTIFIED, QUAD_DEGENERATE = 0, 1, 2, 3


def boundary_order(quads: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int8]]:
    """Make quadrilaterals ``(N, 4, 2)`` valid oriented boxes, changing as little as possible.

    Returns the boxes and an outcome per box: ``QUAD_KEPT`` (already convex in boundary
    order, unchanged), ``QUAD_REORDERED`` (self-crossing vertex order: vertices sorted by angle
    around their centroid, clockwise on screen, the first vertex kept first),
    ``QUAD_RECTIFIED`` (not convex in any order: its minimum-area rectangle) or
    ``QUAD_DEGENERATE`` (no positive area; its row is ``nan``).
    """
    quads = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    out = quads.copy()
    status = np.zeros(len(quads), dtype=np.int8)
    _, ok, _ = _polygon_checks(quads)
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
    _, sorted_ok, _ = _polygon_checks(sorted_quads)
    out[todo[sorted_ok]] = sorted_quads[sorted_ok]
    status[todo[sorted_ok]] = QUAD_REORDERED
    rest = todo[~sorted_ok]
    if rest.size:
        rects = min_area_rects(list(quads[rest]))
        finite = np.isfinite(rects).all(axis=(1, 2))
        if finite.any():
            _, rect_ok, _ = _polygon_checks(rects[finite])
            finite[finite] = rect_ok
        out[rest] = rects
        status[rest] = np.where(finite, QUAD_RECTIFIED, QUAD_DEGENERATE)
        out[rest[~finite]] = np.nan
    return out, status


def valid_polygons(polys: FloatArray) -> npt.NDArray[np.bool_]:
    """Which of ``(N, 4, 2)`` polygons :func:`parse_polygon` accepts (finite, convex, area > 0)."""
    return _polygon_checks(np.asarray(polys, dtype=np.float64).reshape(-1, 4, 2))[1]
