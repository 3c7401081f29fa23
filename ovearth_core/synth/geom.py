"""Polygon geometry of the generator: shapes, RLE masks, boxes (the synth package's only
pycocotools and shapely importer).

Coordinates are absolute pixels, ``x`` to the right and ``y`` down, with pixel ``(row i, col j)``
covering ``[j, j+1) x [i, i+1)``. A polygon is a float array of shape ``(k, 2)`` holding ``k``
boundary-ordered ``[x, y]`` vertices (not closed). Masks are COCO RLEs as produced by
``pycocotools.mask`` (``counts`` bytes); :func:`rle_json` turns one into the JSON form. Areas
are never taken in batches (``pycocotools.mask.area`` overflows on more than 255 RLEs at once
under numpy 2).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import shapely
from pycocotools import mask as mask_utils

Polygon = npt.NDArray[np.float64]


def _circle(n: int) -> Polygon:
    t = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    return np.stack([np.cos(t), np.sin(t)], axis=1) * 0.5


_PLANE = np.array([
    [0.5, 0.03], [0.38, 0.06], [0.12, 0.06], [-0.08, 0.5], [-0.16, 0.5], [-0.06, 0.06],
    [-0.36, 0.06], [-0.46, 0.17], [-0.5, 0.17], [-0.5, -0.17], [-0.46, -0.17], [-0.36, -0.06],
    [-0.06, -0.06], [-0.16, -0.5], [-0.08, -0.5], [0.12, -0.06], [0.38, -0.06], [0.5, -0.03]])


def _turbine() -> Polygon:
    pts = []
    for k in range(3):
        a = k * 2 * math.pi / 3
        for r, d in ((0.09, -0.45), (0.5, -0.08), (0.5, 0.08), (0.09, 0.45)):
            pts.append([r * math.cos(a + d), r * math.sin(a + d)])
    return np.array(pts)


def _fan() -> Polygon:
    t = np.linspace(-math.pi / 4, math.pi / 4, 10)
    arc = np.stack([np.cos(t), np.sin(t)], axis=1) * 0.7
    return np.vstack([[[-0.35, 0.0]], arc - [0.35, 0.0]])


def _track(aspect: float) -> Polygon:
    w = 0.5 / aspect
    c = 0.5 - w
    t = np.linspace(-math.pi / 2, math.pi / 2, 10)
    right = np.stack([c + w * np.cos(t), w * np.sin(t)], axis=1)
    return np.vstack([right, -right])


def unit_shape(shape: str, aspect: float, rng: np.random.Generator) -> Polygon:
    """Footprint of one object, long side 1 along ``x``, centred on the origin.

    Returns:
        ``(k, 2)`` vertices; the same ``shape``/``aspect`` always gives the same ``k``.
    """
    w = 1.0 / aspect
    if shape == "circle":
        return _circle(20)
    if shape == "octagon":
        return _circle(8)
    if shape == "rect":
        return np.array([[-0.5, -w / 2], [0.5, -w / 2], [0.5, w / 2], [-0.5, w / 2]])
    if shape == "lshape":
        return np.array([[-0.5, -w / 2], [0.5, -w / 2], [0.5, w / 2], [0.1, w / 2],
                         [0.1, 0.0], [-0.5, 0.0]])
    if shape == "ship":
        # A blunt bow: a sub-pixel spike would fall between pixel centres and leave the box
        # edge without mask pixels.
        return np.array([[-0.5, -w / 2], [0.22, -w / 2], [0.5, -w / 8], [0.5, w / 8],
                         [0.22, w / 2], [-0.5, w / 2]])
    if shape == "plane":
        return _PLANE.copy()
    if shape == "turbine":
        return _turbine()
    if shape == "fan":
        return _fan()
    if shape == "track":
        return _track(aspect)
    if shape == "blob":
        return blob(rng, 28)
    raise ValueError(f"unknown shape {shape!r}")


def blob(rng: np.random.Generator, n: int) -> Polygon:
    """Star-shaped irregular outline of radius about 0.5 (a smooth random radial profile)."""
    t = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    r = np.ones(n)
    for k in (2, 3, 5):
        r += rng.uniform(0.04, 0.16) / (k / 2) * np.cos(k * t + rng.uniform(0, 2 * math.pi))
    r = 0.5 * r / r.max()
    return np.stack([r * np.cos(t), r * np.sin(t)], axis=1)


def place(unit: Polygon, cx: float, cy: float, length: float, angle: float) -> Polygon:
    """Scale a unit footprint to ``length``, rotate by ``angle`` radians, move to ``(cx, cy)``."""
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, s], [-s, c]])
    return unit * length @ rot + [cx, cy]


def batches(parts: list[Polygon]) -> list[npt.NDArray[np.float64]]:
    """Group polygons into ``(n, k, 2)`` stacks of equal vertex count ``k`` (order kept)."""
    out: list[list[Polygon]] = []
    for p in parts:
        if out and len(out[-1][0]) == len(p):
            out[-1].append(p)
        else:
            out.append([p])
    return [np.stack(group) for group in out]


def _instance_rles(stacks: list[npt.NDArray[np.float64]], height: int,
                   width: int) -> tuple[list[dict], list[list[float]]]:
    flat = [row for b in stacks for row in b.reshape(len(b), -1).tolist()]
    return (mask_utils.frPyObjects(flat, height, width) if flat else []), flat


def _union(rles: list[dict], height: int, width: int) -> dict:
    if not rles:
        return mask_utils.encode(np.zeros((height, width), dtype=np.uint8, order="F"))
    return mask_utils.merge(rles, intersect=0) if len(rles) > 1 else rles[0]


def rle(stacks: list[npt.NDArray[np.float64]], height: int, width: int) -> dict:
    """Union mask of polygon stacks (``(n, k, 2)`` arrays) as one COCO RLE (``counts`` bytes)."""
    return _union(_instance_rles(stacks, height, width)[0], height, width)


def rle_and_boxes(stacks: list[npt.NDArray[np.float64]], height: int,
                  width: int) -> tuple[dict, list[list[int]]]:
    """Union mask of polygon stacks and each polygon's COCO ``[x, y, w, h]`` box.

    The box is the envelope of the polygon's rasterised pixels, which is the polygon envelope
    snapped to whole pixels: it differs from ``floor``/``ceil`` of the vertices only where a
    sub-pixel sliver of a corner covers no pixel centre. A polygon covering no pixel keeps its
    vertex envelope.
    """
    rles, flat = _instance_rles(stacks, height, width)
    if not rles:
        return _union(rles, height, width), []
    boxes = []
    for (x, y, w, h), poly in zip(np.round(mask_utils.toBbox(rles)).astype(int).tolist(), flat,
                                  strict=True):
        boxes.append([x, y, w, h] if w > 0 and h > 0 else
                     envelope_xywh(np.reshape(poly, (-1, 2)), width, height))
    return _union(rles, height, width), boxes


def rle_json(r: dict) -> dict:
    """The JSON form ``{"size": [h, w], "counts": str}`` of a pycocotools RLE."""
    return {"size": [int(r["size"][0]), int(r["size"][1])], "counts": r["counts"].decode("ascii")}


def envelope_xywh(part: Polygon, width: int, height: int) -> list[int]:
    """COCO ``[x, y, w, h]`` integer envelope of a polygon, clipped to the image."""
    x0 = max(0, math.floor(part[:, 0].min()))
    y0 = max(0, math.floor(part[:, 1].min()))
    x1 = min(width, math.ceil(part[:, 0].max()))
    y1 = min(height, math.ceil(part[:, 1].max()))
    return [x0, y0, max(1, x1 - x0), max(1, y1 - y0)]


def min_rects(stack: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Minimum-area rotated rectangles (rotating calipers) of a ``(n, k, 2)`` polygon stack.

    Returns:
        ``(n, 4, 2)`` corners in boundary order; a degenerate polygon gets its envelope.
    """
    if len(stack) == 0:
        return np.zeros((0, 4, 2))
    rects = shapely.minimum_rotated_rectangle(shapely.polygons(stack))
    ok = (shapely.get_type_id(rects) == 3) & (shapely.area(rects) > 0)
    out = np.empty((len(stack), 4, 2))
    if ok.any():
        out[ok] = shapely.get_coordinates(shapely.get_exterior_ring(rects[ok])).reshape(-1, 5, 2)[
            :, :4]
    lo, hi = stack.min(axis=1), stack.max(axis=1)
    env = np.stack([lo, np.stack([hi[:, 0], lo[:, 1]], 1), hi, np.stack([lo[:, 0], hi[:, 1]], 1)],
                   axis=1)
    out[~ok] = env[~ok]
    return out


def clip_to_box(poly: Polygon, box: tuple[float, float, float, float]) -> list[Polygon]:
    """Parts of a polygon inside an axis-aligned box ``(x0, y0, x1, y1)``."""
    return _parts(shapely.intersection(shapely.make_valid(shapely.Polygon(poly)),
                                       shapely.box(*box)))


def buffer_line(line: Polygon, half_width: float,
                box: tuple[float, float, float, float]) -> list[Polygon]:
    """Flat-capped buffer of a polyline, clipped to a box: a road, rail or river footprint."""
    shape = shapely.LineString(line).buffer(half_width, cap_style="flat", quad_segs=3)
    return _parts(shapely.intersection(shape, shapely.box(*box)).simplify(0.25))


def hull_buffer(parts: list[Polygon], margin: float) -> list[Polygon]:
    """Rounded outline around a group of polygons (a harbour basin, an apron)."""
    hull = shapely.convex_hull(shapely.MultiPolygon([shapely.Polygon(p) for p in parts]))
    return _parts(hull.buffer(margin, quad_segs=4))


def obstacles(parts: list[Polygon], margin: float) -> shapely.Geometry:
    """Union of polygons grown by ``margin``, prepared for fast intersection tests."""
    geom = shapely.union_all([shapely.Polygon(p) for p in parts]).buffer(margin, quad_segs=2)
    shapely.prepare(geom)
    return geom


def blocked_by(obstacle: shapely.Geometry, line: Polygon, half_width: float) -> bool:
    """True if a polyline of the given half width would touch the obstacle."""
    return bool(shapely.intersects(obstacle, shapely.LineString(line).buffer(half_width,
                                                                            quad_segs=2)))


def _parts(geom: shapely.Geometry) -> list[Polygon]:
    polys = [g for g in shapely.get_parts(geom) if isinstance(g, shapely.Polygon) and g.area > 1]
    return [np.asarray(g.exterior.coords)[:-1] for g in polys]
