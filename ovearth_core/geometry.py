"""Axis-aligned boxes and oriented boxes: parsing, validation and IoU matrices.

This is the only module that imports shapely.

Coordinates are absolute pixels, continuous (a box from x1 to x2 is x2 - x1
wide). Internally an axis-aligned box is ``[x1, y1, x2, y2]`` (arrays of shape
``(N, 4)``) and an oriented box is four boundary-ordered vertices ``[[x, y], ...]``
(arrays of shape ``(N, 4, 2)``), clockwise or counter-clockwise.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import shapely

from .masks import FieldError

FloatArray = npt.NDArray[np.float64]
BOX_SENTINEL = (0.0, 0.0, 0.0, 0.0)
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
    if (a, b, c, d) == BOX_SENTINEL:
        return None, score
    if bbox_format == "xywh":
        x2, y2 = a + c, b + d
        # x2 > a also rejects widths lost to rounding (1e20 + 1) and overflow to inf.
        if c <= 0 or d <= 0 or not (a < x2 < math.inf and b < y2 < math.inf):
            raise FieldError(prefix, "positive width and height, with x + width and y + height "
                             "finite and greater than x and y (--bbox-format xywh)", coords)
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
    x2, y2 = x + w, y + h
    if w <= 0 or h <= 0 or not (x < x2 < math.inf and y < y2 < math.inf):
        raise FieldError("", "positive width and height, with x + width and y + height "
                         "finite and greater than x and y", value)
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

    Every pair of every set is handled in one vectorised pass (no Python loop per
    set). Oriented boxes are intersected exactly with one shapely call over the
    candidate pairs: those whose IoU can reach ``min_iou`` by an upper bound from
    their envelopes and areas. Pairs ruled out get 0, so pass as ``min_iou`` the
    lowest threshold whose comparisons matter (values below it change no result).
    """
    shapes = [(len(g), len(p)) for g, p in zip(gts, preds, strict=True)]
    sizes = np.array([g * p for g, p in shapes], dtype=np.int64)
    flat = np.zeros(int(sizes.sum()))
    if flat.size:
        n_gt = np.array([g for g, _ in shapes], dtype=np.int64)
        n_pred = np.array([p for _, p in shapes], dtype=np.int64)
        owner = np.repeat(np.arange(len(shapes)), sizes)
        local = np.arange(flat.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        gi = (np.cumsum(n_gt) - n_gt)[owner] + local // n_pred[owner]
        pi = (np.cumsum(n_pred) - n_pred)[owner] + local % n_pred[owner]
        all_gt = np.concatenate([g for g in gts if len(g)])
        all_pred = np.concatenate([p for p in preds if len(p)])
        if oriented:
            flat[:] = _obb_pair_iou(all_gt, all_pred, gi, pi, min_iou)
        else:
            flat[:] = _box_pair_iou(all_gt[gi], all_pred[pi])
    out = []
    start = 0
    for (g, p), size in zip(shapes, sizes, strict=True):
        out.append(flat[start:start + size].reshape(g, p))
        start += int(size)
    return out


def _box_pair_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """IoU of aligned pairs of xyxy boxes, ``(N, 4)`` each."""
    inter = _box_pair_intersection(a, b)
    return inter / (box_area(a) + box_area(b) - inter)


def _box_pair_intersection(a: FloatArray, b: FloatArray) -> FloatArray:
    w = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    h = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    return np.clip(w, 0, None) * np.clip(h, 0, None)


def _obb_pair_iou(gt: FloatArray, pred: FloatArray, gi: npt.NDArray[np.int64],
                  pi: npt.NDArray[np.int64], min_iou: float) -> FloatArray:
    """Exact IoU of the oriented-box pairs ``(gt[gi], pred[pi])`` that can reach ``min_iou``."""
    out = np.zeros(gi.size)
    area_g, area_p = polygon_area(gt), polygon_area(pred)
    bound = np.minimum(_box_pair_intersection(envelope(gt)[gi], envelope(pred)[pi]),
                       np.minimum(area_g[gi], area_p[pi]))
    upper = bound / (area_g[gi] + area_p[pi] - bound)
    cand = np.flatnonzero((bound > 0) & (upper >= min_iou - 1e-9))
    if cand.size == 0:
        return out
    # One shapely geometry per box (not per pair), indexed per candidate pair.
    gpoly, ppoly = shapely.polygons(gt), shapely.polygons(pred)
    a, b = gpoly[gi[cand]], ppoly[pi[cand]]
    inter = shapely.area(shapely.intersection(a, b))
    # shapely's areas, not the shoelace on absolute coordinates: small boxes far from
    # the origin would otherwise get an IoU a hair above 1 with themselves.
    out[cand] = np.minimum(inter / (shapely.area(a) + shapely.area(b) - inter), 1.0)
    return out
