"""Parsing and validating boxes from JSON: axis-aligned boxes, oriented boxes and polygons,
one at a time (``parse_box`` ...) or a column at a time (``parse_boxes`` ...: one
:class:`ParsedBatch` of arrays and the problems found). Validation only: areas and IoU
live in :mod:`ovearth_core.geometry` (issue 39: parsing apart from IoU). No shapely here.

Coordinates are absolute pixels, continuous (a box from x1 to x2 is x2 - x1 wide). An
axis-aligned box becomes ``[x1, y1, x2, y2]`` (``(N, 4)``), an oriented box four
boundary-ordered vertices ``[[x, y], ...]`` (``(N, 4, 2)``), clockwise or counter-clockwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from .masks import FieldError
from .options import EXTENSION_COMMANDS

FloatArray = npt.NDArray[np.float64]
BOX_SENTINEL = (0.0, 0.0, 0.0, 0.0)
# IoU multiplies coordinates: areas and cross products two at a time, GEOS's polygon
# intersection up to three (its overlay fails from about 5e102, the cube root of the largest
# double). Within +-1e100 every such product is a finite double, so no IoU overflows; larger
# coordinates are a validation problem, not a RuntimeWarning and an IoU of nan.
MAX_COORDINATE = 1e100
IN_RANGE = "coordinates within ±1e100 (absolute pixels; larger ones overflow IoU arithmetic)"
_NUMBER_TYPES = {int, float}  # exact types: JSON booleans (bool) are not numbers here
# The spec's rule on an oriented box, and the extension beyond it (issue 46): the flag is named
# with the commands that take it (the evaluator's own command keeps exactly the spec's flags).
CONVEX = ("a convex polygon (the spec's rule; a concave quadrilateral, as DOTA labels have, is "
          f"taken by --concave-obb of {EXTENSION_COMMANDS}, or 'Concave oriented boxes' in the "
          "app)")


def finite_number(value: object) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def parse_score(value: object) -> float:
    if not finite_number(value):
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
            or not all(finite_number(v) for v in value)):
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


def parse_polygon(value: object, concave: bool = False) -> tuple[tuple[float, float], ...]:
    """Validate an oriented box: four finite vertices in boundary order (not self-crossing),
    area > 0, convex (the spec's rule). With ``concave`` (the option ``concave_obb``, an
    extension) a concave quadrilateral, as DOTA labels sometimes are (one vertex inside the
    triangle of the other three), is taken too and scored as the polygon itself, as
    DOTA_devkit scores it. A self-crossing order is refused either way.

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
        if not _one_inside(unit, tol):
            raise FieldError("", "a polygon with vertices in boundary order (not self-crossing)",
                             value)
        if not concave:
            raise FieldError("", CONVEX, value)
    if abs(area2) <= tol:
        raise FieldError("", "a polygon with positive area", value)
    return tuple(pts)


def _one_inside(unit: list[tuple[float, float]], tol: float) -> bool:
    """Whether a vertex lies strictly inside the triangle of the other three: then every
    order of the four is a simple (concave) quadrilateral; four points in convex position
    have one simple order, the convex one."""
    for k in range(4):
        px, py = unit[k]
        tri = [unit[(k + i) % 4] for i in (1, 2, 3)]
        sides = [(bx - ax) * (py - ay) - (by - ay) * (px - ax)
                 for (ax, ay), (bx, by) in zip(tri, tri[1:] + tri[:1], strict=True)]
        if all(c > tol for c in sides) or all(c < -tol for c in sides):
            return True
    return False


def parse_obb(value: object, concave: bool = False
              ) -> tuple[tuple[tuple[float, float], ...], float | None]:
    """Parse one predicted oriented box (object or shorthand form) to ``(polygon, score)``
    (``concave``: as :func:`parse_polygon`)."""
    if isinstance(value, dict):
        if "polygon" not in value:
            raise FieldError(".polygon", "present in an oriented box object", "<missing>")
        score = parse_score(value.get("score")) if "score" in value else None
        try:
            return parse_polygon(value["polygon"], concave), score
        except FieldError as err:
            raise FieldError(".polygon" + err.field, err.expected, err.found) from None
    return parse_polygon(value, concave), None


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
                        lambda a: box_checks(a, bbox_format))


def parse_obbs(items: list[object], concave: bool = False) -> ParsedBatch:
    """:func:`parse_obb` over a list of predicted oriented boxes, checked with numpy."""
    return _parse_batch(items, (4, 2), "polygon", lambda v: parse_obb(v, concave),
                        lambda a: polygon_checks(a, concave))


def parse_gt_boxes(items: list[object]) -> ParsedBatch:
    """:func:`parse_gt_box` over a list of COCO ``[x, y, w, h]`` boxes (values xyxy)."""
    return _parse_batch(items, (4,), None, lambda v: (parse_gt_box(v), None), gt_box_checks)


def parse_polygons(items: list[object], concave: bool = False) -> ParsedBatch:
    """:func:`parse_polygon` over a list of ground-truth polygons."""
    return _parse_batch(items, (4, 2), None, lambda v: (parse_polygon(v, concave), None),
                        lambda a: polygon_checks(a, concave))


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


def box_checks(a: FloatArray, bbox_format: str
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


def gt_box_checks(a: FloatArray
                   ) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """xyxy values and validity of ``(N, 4)`` COCO ground-truth boxes (no sentinel)."""
    x, y, w, h = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    with np.errstate(over="ignore", invalid="ignore"):
        x2, y2 = x + w, y + h
        ok = ((np.abs(a) <= MAX_COORDINATE).all(axis=1) & (w > 0) & (h > 0) & (x < x2)
              & (x2 <= MAX_COORDINATE) & (y < y2) & (y2 <= MAX_COORDINATE))
    return np.stack([x, y, x2, y2], axis=1), ok, np.zeros(len(a), dtype=bool)


def polygon_checks(a: FloatArray, concave: bool = False
                   ) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Validity of ``(N, 4, 2)`` polygons: :func:`parse_polygon`'s tests, same arithmetic
    (``concave``: concave quadrilaterals are valid too)."""
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
        inside = np.zeros(n, dtype=bool)
        for k in range(4):
            p = unit[:, k]
            tri = unit[:, [(k + 1) % 4, (k + 2) % 4, (k + 3) % 4]]
            edge = np.roll(tri, -1, axis=1) - tri
            rel = p[:, None, :] - tri
            sides = edge[..., 0] * rel[..., 1] - edge[..., 1] * rel[..., 0]
            inside |= (sides > tol).all(axis=1) | (sides < -tol).all(axis=1)
        ok = finite & (~(positive & negative) | (inside & concave)) & (np.abs(area2) > tol)
    return a, ok, np.zeros(n, dtype=bool)


def concave_polygons(a: FloatArray) -> npt.NDArray[np.bool_]:
    """Which of ``(N, 4, 2)`` polygons, valid with ``concave`` on, are concave: those
    :func:`polygon_checks` takes only with it."""
    return polygon_checks(a, concave=True)[1] & ~polygon_checks(a)[1]


