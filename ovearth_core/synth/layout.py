"""Object layout: the polygons of every annotation, generated before anything is drawn.

Each image is split into one region per annotation; instance objects are laid out in a region
as a jittered grid (tank farms, greenhouse rows, parking lots) or scattered without overlap;
area-type and linear targets become field blocks, blobs, shore bands or buffered polylines.
Masks and boxes derive from these polygons and the drawing paints the same polygons, so a
mask or box visibly fits its object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import geom
from .geom import Polygon
from .plan import AnnotationPlan, ImagePlan
from .taxonomy import SIZE_PX, STYLES

Box = tuple[float, float, float, float]
_GRID_STYLES = {"tank", "silo", "greenhouse", "long_shed", "solar_small", "container", "vehicle",
                "bus", "pool", "court", "pond", "mobile_home", "tent", "round_water", "hay",
                "cage", "salt", "house"}


@dataclass
class AnnotationLayout:
    """Geometry of one annotation.

    Attributes:
        plan: the annotation's plan.
        parts: instance polygons (one per box) or, for area types, the region parts.
        region: ``(x0, y0, x1, y1)`` part of the image reserved for the annotation.
        centreline: ``(m, 2)`` polyline of a linear target (road, rail, river, canal).
        line_width: width of a linear target in pixels.
        context: drawing-only polygons (the sea beside a beach).
    """

    plan: AnnotationPlan
    parts: list[Polygon]
    region: Box
    centreline: Polygon | None = None
    line_width: float = 0.0
    context: list[Polygon] = field(default_factory=list)


@dataclass
class ImageLayout:
    """All annotation geometry of one image."""

    plan: ImagePlan
    annotations: list[AnnotationLayout]


def _regions(rng: np.random.Generator, w: int, h: int, k: int) -> list[Box]:
    m = 0.03 * min(w, h)
    if k == 1:
        return [(m, m, w - m, h - m)]
    cuts = np.sort(rng.uniform(0.35, 0.65, k - 1)) if k == 2 else np.array([1 / 3, 2 / 3])
    edges = [0.0, *cuts.tolist(), 1.0]
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if w >= h:
            out.append((a * w + m, m, b * w - m, h - m))
        else:
            out.append((m, a * h + m, w - m, b * h - m))
    return out


def layout_image(plan: ImagePlan, seed: int) -> ImageLayout:
    """Polygons of every annotation of one image (seeded by the image index only)."""
    rng = np.random.default_rng([seed, 1, plan.index])
    regions = _regions(rng, plan.width, plan.height, len(plan.annotations))
    anns = [(_layout_area if a.category.is_area else _layout_instances)(rng, a, r, plan)
            for a, r in zip(plan.annotations, regions, strict=True)]
    return ImageLayout(plan, anns)


def _length(rng: np.random.Generator, a: AnnotationPlan, zoom: float) -> float:
    lo, hi = SIZE_PX[a.category.size]
    return float(rng.uniform(lo, hi) * zoom)


def _layout_instances(rng: np.random.Generator, a: AnnotationPlan, region: Box,
                      img: ImagePlan) -> AnnotationLayout:
    style = STYLES[a.category.style]
    rw, rh = region[2] - region[0], region[3] - region[1]
    n = a.n_instances
    # A lone target may fill most of its region (the paper has a few boxes over half the image).
    fit = 0.95 / math.sqrt(1.0 + 1.0 / style.aspect**2) if n == 1 else 0.5
    length = min(_length(rng, a, img.zoom), fit * min(rw, rh))
    grid = n > 40 or (a.category.style in _GRID_STYLES and n > 3 and rng.random() < 0.7)
    place = _grid if grid else _scatter
    centres, lengths, angles = place(rng, n, length, style.aspect, region)
    unit = geom.unit_shape(style.shape, style.aspect, rng)
    parts = []
    for (cx, cy), ln, ang in zip(centres, lengths, angles, strict=True):
        shape = geom.unit_shape(style.shape, style.aspect, rng) if style.shape == "blob" else unit
        parts.append(np.round(geom.place(shape, cx, cy, ln, ang), 2))
    return AnnotationLayout(a, parts, region)


def _radius(length: float, aspect: float) -> float:
    return 0.5 * length * math.sqrt(1.0 + 1.0 / aspect**2)


def _grid(rng: np.random.Generator, n: int, length: float, aspect: float,
          region: Box) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    theta = float(rng.uniform(0, math.pi))
    px = length * rng.uniform(1.15, 1.45)
    py = length / aspect * (rng.uniform(1.4, 2.2) if aspect > 1.3 else rng.uniform(1.15, 1.45))
    cols = max(1, math.ceil(math.sqrt(n * py / px)))
    rows = math.ceil(n / cols)
    rw, rh = region[2] - region[0], region[3] - region[1]
    c, s = abs(math.cos(theta)), abs(math.sin(theta))
    ex = c * cols * px + s * rows * py + length
    ey = s * cols * px + c * rows * py + length
    f = min(1.0, 0.95 * rw / ex, 0.95 * rh / ey)
    length, px, py, ex, ey = length * f, px * f, py * f, ex * f, ey * f
    cx = rng.uniform(region[0] + ex / 2, region[2] - ex / 2)
    cy = rng.uniform(region[1] + ey / 2, region[3] - ey / 2)
    idx = np.arange(n)
    local = np.stack([(idx % cols - (cols - 1) / 2) * px, (idx // cols - (rows - 1) / 2) * py], 1)
    local += rng.normal(0, 0.03, (n, 2)) * [px, py]
    cos, sin = math.cos(theta), math.sin(theta)
    centres = local @ np.array([[cos, sin], [-sin, cos]]) + [cx, cy]
    lengths = length * rng.uniform(0.94, 1.04, n)
    angles = theta + rng.normal(0, 0.03, n)
    return centres, lengths, angles


def _scatter(rng: np.random.Generator, n: int, length: float, aspect: float,
             region: Box) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    parallel = rng.random() < 0.5
    base = float(rng.uniform(0, 2 * math.pi))
    longest = 0.98 * min(region[2] - region[0], region[3] - region[1]) / math.sqrt(
        1.0 + 1.0 / aspect**2)
    while True:
        lengths = np.minimum(length * rng.uniform(0.85, 1.15, n), longest)
        radii = np.array([_radius(ln, aspect) for ln in lengths])
        centres = np.zeros((n, 2))
        ok = True
        for i in range(n):
            r = radii[i]
            for _ in range(80):
                p = rng.uniform([region[0] + r, region[1] + r], [region[2] - r, region[3] - r])
                d = np.hypot(*(centres[:i] - p).T)
                if np.all(d > (radii[:i] + r) * 1.1):
                    centres[i] = p
                    break
            else:
                ok = False
                break
        if ok:
            break
        length *= 0.85
    spread = 0.08 if parallel else math.pi
    angles = base + rng.uniform(-spread, spread, n)
    return centres, lengths, angles


def _layout_area(rng: np.random.Generator, a: AnnotationPlan, region: Box,
                 img: ImagePlan) -> AnnotationLayout:
    shape = STYLES[a.category.style].shape
    if shape in ("area_field", "area_paddy", "area_orchard"):
        return AnnotationLayout(a, _field_blocks(rng, region), region)
    if shape == "area_blob":
        rw, rh = region[2] - region[0], region[3] - region[1]
        cx, cy = (region[0] + region[2]) / 2, (region[1] + region[3]) / 2
        outline = geom.place(geom.blob(rng, 40), cx, cy, 0.95 * min(rw, rh), 0.0)
        outline[:, 0] = cx + (outline[:, 0] - cx) * max(1.0, rw / rh)
        outline[:, 1] = cy + (outline[:, 1] - cy) * max(1.0, rh / rw)
        return AnnotationLayout(a, [np.round(p, 2) for p in geom.clip_to_box(outline, region)],
                                region)
    # Shores, roads, rails and rivers run on to the image border where their region meets it.
    m = 0.05 * min(img.width, img.height)
    region = (0.0 if region[0] < m else region[0], 0.0 if region[1] < m else region[1],
              float(img.width) if region[2] > img.width - m else region[2],
              float(img.height) if region[3] > img.height - m else region[3])
    if shape == "area_band":
        return _shore(rng, a, region)
    return _linear(rng, a, shape, region, img.zoom)


def _field_blocks(rng: np.random.Generator, region: Box) -> list[Polygon]:
    rw, rh = region[2] - region[0], region[3] - region[1]
    theta = float(rng.uniform(-0.35, 0.35))
    c, s = abs(math.cos(theta)), abs(math.sin(theta))
    frac = rng.uniform(0.7, 0.9)
    bw, bh = frac * rw, frac * rh
    # Shrink the block until its rotated extent fits the region.
    f = min(1.0, rw / (c * bw + s * bh), rh / (s * bw + c * bh))
    bw, bh = bw * f * 0.98, bh * f * 0.98
    nx, ny = int(rng.integers(2, 4)), int(rng.integers(1, 3))
    gap = max(3.0, 0.015 * min(rw, rh))
    xs = np.sort(np.concatenate([[0, 1], rng.uniform(0.25, 0.75, nx - 1)])) * bw - bw / 2
    ys = np.sort(np.concatenate([[0, 1], rng.uniform(0.3, 0.7, ny - 1)])) * bh - bh / 2
    cx, cy = (region[0] + region[2]) / 2, (region[1] + region[3]) / 2
    cos, sin = math.cos(theta), math.sin(theta)
    rot = np.array([[cos, sin], [-sin, cos]])
    parts = []
    for i in range(nx):
        for j in range(ny):
            x0, x1 = xs[i] + gap / 2, xs[i + 1] - gap / 2
            y0, y1 = ys[j] + gap / 2, ys[j + 1] - gap / 2
            quad = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
            parts.append(np.round(quad @ rot + [cx, cy], 2))
    return parts


def _frame(region: Box, side: int, u: np.ndarray, v: np.ndarray) -> Polygon:
    """Map (along-edge ``u``, depth ``v``) in [0, 1] to pixels, measured from one region side."""
    x0, y0, x1, y1 = region
    if side == 0:
        pts = (x0 + v * (x1 - x0), y0 + u * (y1 - y0))
    elif side == 1:
        pts = (x1 - v * (x1 - x0), y0 + u * (y1 - y0))
    elif side == 2:
        pts = (x0 + u * (x1 - x0), y0 + v * (y1 - y0))
    else:
        pts = (x0 + u * (x1 - x0), y1 - v * (y1 - y0))
    return np.stack(pts, axis=1)


def _shore(rng: np.random.Generator, a: AnnotationPlan, region: Box) -> AnnotationLayout:
    side = int(rng.integers(0, 4))
    u = np.linspace(0, 1, 24)
    phase = rng.uniform(0, 2 * math.pi, 2)
    sea = 0.2 + 0.06 * np.sin(2 * math.pi * 1.3 * u + phase[0])
    land = sea + 0.16 + 0.05 * np.sin(2 * math.pi * 0.8 * u + phase[1])
    beach = np.vstack([_frame(region, side, u, sea), _frame(region, side, u[::-1], land[::-1])])
    water = np.vstack([_frame(region, side, u, np.zeros_like(u)),
                       _frame(region, side, u[::-1], sea[::-1])])
    return AnnotationLayout(a, [np.round(beach, 2)], region, context=[water])


def _linear(rng: np.random.Generator, a: AnnotationPlan, shape: str, region: Box,
            zoom: float) -> AnnotationLayout:
    x0, y0, x1, y1 = region
    widths = {"area_road": (12, 22), "area_rail": (9, 13), "area_river": (30, 80),
              "area_canal": (14, 26)}
    amp = {"area_road": 0.06, "area_rail": 0.04, "area_river": 0.16, "area_canal": 0.0}[shape]
    width = float(rng.uniform(*widths[shape]) * zoom)
    t = np.linspace(-0.05, 1.05, 40)
    freq, phase = rng.uniform(0.5, 1.4), rng.uniform(0, 2 * math.pi)
    lateral = rng.uniform(0.35, 0.65) + amp * np.sin(2 * math.pi * freq * t + phase)
    tilt = rng.uniform(-0.15, 0.15) * (t - 0.5)
    lateral = np.clip(lateral + tilt, 0.15, 0.85)
    if x1 - x0 >= y1 - y0:
        line = np.stack([x0 + t * (x1 - x0), y0 + lateral * (y1 - y0)], 1)
    else:
        line = np.stack([x0 + lateral * (x1 - x0), y0 + t * (y1 - y0)], 1)
    parts = [np.round(p, 2) for p in geom.buffer_line(line, width / 2, region)]
    return AnnotationLayout(a, parts, region, centreline=line, line_width=width)
