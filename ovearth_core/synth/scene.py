"""Procedural overhead imagery: terrain, roads, buildings with shadows, and the target objects.

The picture is painted in layers:

1. land cover: a rotated, jittered mesh of parcels (fields with crop rows, grass, forest, bare
   soil, built-up ground) plus the area-type targets and the water or pavement under objects,
   all rasterised into one parcel-label map and textured per class with numpy;
2. background roads and buildings, placed away from every target;
3. shadows of the targets, then the targets themselves, drawn from the annotation polygons;
4. haze, a colour cast and sensor noise.

Only the targets are annotated, and they are drawn from the same polygons as their masks.
Arrays are ``(height, width, 3)`` float32 RGB in ``[0, 255]`` until the final uint8 image.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageChops, ImageDraw

from . import geom
from .geom import Polygon
from .layout import AnnotationLayout, ImageLayout
from .taxonomy import STYLES, Style

RGB = tuple[int, int, int]
# Land-cover classes of the label map and their colour palettes.
CLASSES = ("field", "grass", "forest", "soil", "urban", "water", "paved", "paddy", "orchard",
           "wetland", "beach", "road", "rail")
_PALETTE: dict[str, list[RGB]] = {
    "field": [(150, 160, 90), (122, 150, 72), (182, 172, 112), (104, 132, 64), (196, 182, 132),
              (160, 140, 96)],
    "grass": [(112, 150, 82), (130, 160, 92), (120, 142, 80)],
    "forest": [(42, 76, 42), (50, 86, 46), (38, 66, 40)],
    "soil": [(172, 146, 112), (152, 126, 96), (190, 166, 132)],
    "urban": [(156, 154, 144), (166, 162, 150), (146, 146, 140)],
    "water": [(48, 82, 102), (42, 76, 92), (56, 92, 108)],
    "paved": [(150, 150, 148), (138, 138, 136)],
    "paddy": [(88, 140, 112), (100, 150, 104), (80, 124, 112)],
    "orchard": [(140, 150, 96), (150, 156, 104)],
    "wetland": [(86, 110, 78), (96, 116, 84)],
    "beach": [(226, 212, 172), (220, 204, 164)],
    "road": [(92, 92, 94), (100, 100, 102)],
    "rail": [(124, 110, 96), (116, 104, 92)],
}
# Texture coefficients per class: low-frequency, mid-frequency, stripes, dots, fine noise.
_TEXTURE = {
    "field": (0.12, 0.04, 0.09, 0.0, 0.03), "grass": (0.14, 0.06, 0.0, 0.0, 0.03),
    "forest": (0.10, 0.55, 0.0, 0.0, 0.06), "soil": (0.22, 0.05, 0.0, 0.0, 0.05),
    "urban": (0.06, 0.04, 0.0, 0.0, 0.04), "water": (0.08, 0.02, 0.0, 0.0, 0.01),
    "paved": (0.04, 0.02, 0.0, 0.0, 0.04), "paddy": (0.10, 0.03, 0.05, 0.0, 0.02),
    "orchard": (0.08, 0.03, 0.0, 0.5, 0.03), "wetland": (0.18, 0.35, 0.0, 0.0, 0.04),
    "beach": (0.06, 0.02, 0.0, 0.0, 0.04), "road": (0.03, 0.0, 0.0, 0.0, 0.03),
    "rail": (0.05, 0.05, 0.0, 0.0, 0.08),
}
_BACKGROUND = ("field", "grass", "forest", "soil", "urban")
_BACKGROUND_WEIGHTS = (0.34, 0.2, 0.18, 0.1, 0.18)
_AREA_CLASS = {"field": "field", "paddy": "paddy", "orchard": "orchard", "forest": "forest",
               "grass": "grass", "soil": "soil", "wetland": "wetland", "beach": "beach",
               "road": "road", "rail": "rail", "water": "water"}
_CONFLICT = {"field": "field", "paddy": "field", "orchard": "field", "forest": "forest",
             "grass": "grass", "soil": "soil"}
_ROOFS: list[RGB] = [(170, 82, 62), (150, 150, 150), (204, 202, 196), (122, 64, 52),
                     (96, 104, 122), (212, 184, 152), (176, 176, 168)]
_CARS: list[RGB] = [(230, 230, 232), (30, 30, 34), (160, 30, 30), (40, 70, 140), (170, 170, 174),
                    (200, 200, 60)]


def _noise(rng: np.random.Generator, h: int, w: int, cell: float) -> npt.NDArray[np.float32]:
    """Smooth value noise in ``[0, 1]`` with features about ``cell`` pixels wide."""
    gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
    small = Image.fromarray(rng.random((gh, gw), dtype=np.float32), mode="F")
    return np.asarray(small.resize((w, h), Image.Resampling.BICUBIC), dtype=np.float32)


def _shrink(p: Polygon, t: float, about: npt.NDArray[np.float64] | None = None) -> Polygon:
    c = p.mean(axis=0) if about is None else about
    return c + (p - c) * t


def _pts(p: Polygon) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in p]


def _shade(c: RGB, f: float) -> RGB:
    return (min(255, int(c[0] * f)), min(255, int(c[1] * f)), min(255, int(c[2] * f)))


def _jitter(rng: np.random.Generator, c: RGB, amount: float = 10.0) -> RGB:
    d = rng.normal(0, amount, 3)
    return tuple(int(np.clip(v + dv, 0, 255)) for v, dv in zip(c, d, strict=True))  # type: ignore


class _Canvas:
    """The parcel-label map: polygons with a land-cover class, textured in one numpy pass."""

    def __init__(self, w: int, h: int) -> None:
        self.image = Image.new("L", (w, h), 0)
        self.draw = ImageDraw.Draw(self.image)
        self.classes: list[int] = [0]
        self.colours: list[RGB] = [(150, 160, 90)]
        self.angles: list[float] = [0.0]
        self.periods: list[float] = [6.0]

    def add(self, poly: Polygon, cls: str, colour: RGB, angle: float, period: float,
            edge: int | None = None) -> int:
        """Add a parcel (optionally outlined by parcel ``edge``); returns its label."""
        self.classes.append(CLASSES.index(cls))
        self.colours.append(colour)
        self.angles.append(angle)
        self.periods.append(period)
        label = len(self.classes) - 1
        self.draw.polygon(_pts(poly), fill=label, outline=edge, width=2 if edge else 0)
        return label

    def texture(self, rng: np.random.Generator) -> Image.Image:
        """Texture every parcel by its class: crop rows, tree crowns, mottled soil, water.

        Works in blocks of rows so that the temporaries stay small on huge images.
        """
        label_all = np.asarray(self.image)
        h, w = label_all.shape
        cls = np.asarray(self.classes, dtype=np.int32)
        coef = np.asarray([_TEXTURE[CLASSES[c]] for c in cls], dtype=np.float32).T
        ang = np.asarray(self.angles, dtype=np.float32)
        per = np.asarray(self.periods, dtype=np.float32)
        cos_p, sin_p = np.cos(ang) / per, np.sin(ang) / per
        colours = np.asarray(self.colours, dtype=np.float32).T
        low = _noise(rng, h, w, 60) - 0.5
        mid = _noise(rng, h, w, 5) - 0.5
        fine = rng.random((h, w), dtype=np.float32)
        out = np.empty((3, h, w), dtype=np.uint8)
        x = np.arange(w, dtype=np.float32)[None, :]
        two_pi = np.float32(2 * np.pi)
        for r0 in range(0, h, 128):
            r1 = min(h, r0 + 128)
            label = label_all[r0:r1]
            y = np.arange(r0, r1, dtype=np.float32)[:, None]
            ca, sa = cos_p[label], sin_p[label]
            u = x * ca + y * sa
            mult = 1 + coef[2][label] * np.sin(u * two_pi)
            if coef[3].any():
                v = y * ca - x * sa
                dots = np.sin(u * np.float32(np.pi)) * np.sin(v * np.float32(np.pi))
                mult -= coef[3][label] * np.clip(dots * dots * 2 - 1, 0, 1)
            mult += coef[0][label] * low[r0:r1]
            mult += coef[1][label] * mid[r0:r1]
            mult += coef[4][label] * fine[r0:r1]
            for i in range(3):
                out[i, r0:r1] = np.clip(colours[i][label] * mult, 0, 255)
        return Image.merge("RGB", [Image.fromarray(plane) for plane in out])


def _land_cover(rng: np.random.Generator, canvas: _Canvas, w: int, h: int, zoom: float,
                banned: set[str]) -> None:
    names = [c for c in _BACKGROUND if c not in banned]
    # Each scene gets its own mix (farmland, woodland, arid, suburban) around the mean.
    mix = rng.dirichlet(np.asarray(_BACKGROUND_WEIGHTS) * 6)
    weights = np.array([wt for c, wt in zip(_BACKGROUND, mix, strict=True) if c not in banned])
    side = math.hypot(w, h)
    # At most 14 x 14 parcels: the label map holds 255 parcels, targets included.
    cell = max(float(rng.uniform(150, 330) * zoom), side / 12)
    theta = float(rng.uniform(-0.5, 0.5))
    n = int(side / cell) + 2
    grid = np.stack(np.meshgrid(np.arange(n + 1), np.arange(n + 1)), -1).astype(float) * cell
    grid += rng.uniform(-0.3, 0.3, grid.shape) * cell
    grid -= side / 2 + cell
    co, si = math.cos(theta), math.sin(theta)
    grid = grid @ np.array([[co, si], [-si, co]]) + [w / 2, h / 2]
    # Field boundaries: dirt tracks and hedges, drawn as the outline of every parcel.
    track = canvas.add(np.zeros((3, 2)), "soil", _jitter(rng, (178, 160, 126), 8), 0.0, 6.0)
    for i in range(n):
        for j in range(n):
            quad = np.array([grid[i, j], grid[i, j + 1], grid[i + 1, j + 1], grid[i + 1, j]])
            if quad[:, 0].max() < 0 or quad[:, 1].max() < 0 or quad[:, 0].min() > w \
                    or quad[:, 1].min() > h:
                continue
            cls = names[int(rng.choice(len(names), p=weights / weights.sum()))]
            colour = _jitter(rng, _PALETTE[cls][int(rng.integers(len(_PALETTE[cls])))], 6)
            angle = theta + (math.pi / 2 if rng.random() < 0.5 else 0.0)
            canvas.add(quad, cls, colour, angle, float(rng.uniform(3.5, 8.0) * zoom), track)


def _area_ground(rng: np.random.Generator, canvas: _Canvas, ann: AnnotationLayout,
                 zoom: float) -> None:
    style = STYLES[ann.plan.category.style]
    cls = _AREA_CLASS[style.pattern]
    for poly in ann.context:
        canvas.add(poly, "water", _PALETTE["water"][0], 0.0, 6.0)
    for poly in ann.parts:
        colour = _jitter(rng, _PALETTE[cls][int(rng.integers(len(_PALETTE[cls])))], 6)
        edge = poly[1] - poly[0]
        angle = math.atan2(edge[1], edge[0]) + (math.pi / 2 if rng.random() < 0.5 else 0.0)
        period = rng.uniform(4.0, 8.0) * zoom if cls != "orchard" else rng.uniform(7, 10) * zoom
        canvas.add(poly, cls, colour, angle, float(period))


def _settings(rng: np.random.Generator, canvas: _Canvas, ann: AnnotationLayout) -> list[Polygon]:
    """Water under vessels, pavement under vehicles and containers, clipped to the region.

    Returns:
        the painted polygons (roads and buildings keep clear of them).
    """
    style = STYLES[ann.plan.category.style]
    if style.setting == "land":
        return []
    sizes = [float(np.ptp(p, axis=0).max()) for p in ann.parts]
    margin = max(12.0, 1.5 * float(np.median(sizes)))
    cls = "water" if style.setting == "water" else "paved"
    out = []
    for hull in geom.hull_buffer(ann.parts, margin):
        for part in geom.clip_to_box(hull, ann.region):
            canvas.add(part, cls, _PALETTE[cls][int(rng.integers(len(_PALETTE[cls])))], 0.0, 6.0)
            out.append(part)
    return out


def _linear_marks(draw: ImageDraw.ImageDraw, ann: AnnotationLayout) -> None:
    """Lane markings of a road section, rails and sleepers of a railway section."""
    pattern = STYLES[ann.plan.category.style].pattern
    if ann.centreline is None or pattern not in ("road", "rail"):
        return
    x0, y0, x1, y1 = ann.region
    line = ann.centreline
    inside = (line[:, 0] > x0 + 2) & (line[:, 0] < x1 - 2) & (line[:, 1] > y0 + 2) & \
             (line[:, 1] < y1 - 2)
    line = line[inside]
    if len(line) < 2:
        return
    d = np.gradient(line, axis=0)
    normal = np.stack([-d[:, 1], d[:, 0]], 1) / np.maximum(np.hypot(*d.T), 1e-6)[:, None]
    hw = ann.line_width / 2
    if pattern == "road":
        _dashes(draw, line, 10.0, max(1, int(hw / 6)))
        return
    for i in range(len(line) - 1):
        a, b = line[i], line[i + 1]
        for t in np.linspace(0, 1, max(2, int(np.hypot(*(b - a)) / 4)))[:-1]:
            p = a + (b - a) * t
            n = normal[i] * hw * 0.6
            draw.line(_pts(np.array([p - n, p + n])), fill=(92, 76, 62), width=1)
    for off in (-0.3, 0.3):
        draw.line(_pts(line + normal * hw * off), fill=(70, 70, 74), width=1)


def _dashes(draw: ImageDraw.ImageDraw, line: Polygon, step: float, width: int) -> None:
    """A dashed white centre line along a polyline (dash and gap of ``step`` pixels)."""
    for a, b in zip(line[:-1], line[1:], strict=True):
        n = int(np.hypot(*(b - a)) / step)
        for i in range(0, n, 2):
            draw.line(_pts(np.array([a + (b - a) * i / n, a + (b - a) * (i + 1) / n])),
                      fill=(226, 224, 214), width=width)


def _roads(rng: np.random.Generator, w: int, h: int, zoom: float,
           blocked: object) -> list[tuple[Polygon, float]]:
    roads = []
    for _ in range(int(rng.integers(1, 4))):
        for _try in range(15):
            c = rng.uniform([0, 0], [w, h])
            a = float(rng.uniform(0, math.pi))
            d = np.array([math.cos(a), math.sin(a)]) * math.hypot(w, h)
            bend = np.array([-d[1], d[0]]) * rng.uniform(-0.08, 0.08)
            line = np.array([c - d, c + bend, c + d])
            width = float(rng.uniform(6, 16) * zoom)
            if not geom.blocked_by(blocked, line, width / 2 + 4):
                roads.append((line, width))
                break
    return roads


def _free(occupied: npt.NDArray[np.bool_], poly: Polygon) -> bool:
    """Claim the quarter-resolution cells under a polygon if none is taken yet."""
    x0, y0 = np.floor(poly.min(axis=0) / 4).astype(int) - 1
    x1, y1 = np.ceil(poly.max(axis=0) / 4).astype(int) + 1
    if x0 < 0 or y0 < 0 or x1 >= occupied.shape[1] or y1 >= occupied.shape[0]:
        return False
    if occupied[y0:y1, x0:x1].any():
        return False
    occupied[y0:y1, x0:x1] = True
    return True


def _buildings(rng: np.random.Generator, canvas: _Canvas, occupied: npt.NDArray[np.bool_],
               zoom: float) -> list[tuple[Polygon, RGB, float]]:
    """Houses on built-up parcels and trees on grass and soil, never touching targets or roads.

    Returns:
        ``(polygon, colour, shadow length)`` per object; trees have 20 vertices.
    """
    label = np.asarray(canvas.image)
    h, w = label.shape
    cls = np.asarray(canvas.classes)[label[::4, ::4]]
    out: list[tuple[Polygon, RGB, float]] = []
    for name, density, size in (("urban", 1 / 1400, (18, 44)), ("grass", 1 / 9000, (6, 14)),
                                ("soil", 1 / 20000, (6, 12)), ("field", 1 / 40000, (6, 12))):
        cells = np.argwhere(cls == CLASSES.index(name)) * 4
        count = min(800, int(len(cells) * 16 * density / (zoom * zoom)))
        if len(cells) == 0:
            continue
        for idx in rng.integers(0, len(cells), count):
            cy, cx = cells[idx] + rng.uniform(0, 4, 2)
            ln = float(rng.uniform(*size) * zoom)
            if name == "urban":
                angle = canvas.angles[label[min(int(cy), h - 1), min(int(cx), w - 1)]]
                unit = geom.unit_shape("rect", float(rng.uniform(1.1, 2.0)), rng)
                colour = _jitter(rng, _ROOFS[int(rng.integers(len(_ROOFS)))], 8)
                height = float(rng.uniform(0.2, 0.5)) * ln
            else:
                angle, unit = 0.0, geom.unit_shape("circle", 1.0, rng)
                colour = _jitter(rng, (46, 78, 40), 6)
                height = 0.5 * ln
            poly = geom.place(unit, float(cx), float(cy), ln, angle)
            if _free(occupied, poly):
                out.append((poly, colour, height))
    return out


def _draw_object(draw: ImageDraw.ImageDraw, rng: np.random.Generator, p: Polygon, style: Style,
                 colour: RGB) -> None:
    """Paint one target polygon with its inner pattern; details stay inside the polygon."""
    pat = style.pattern
    draw.polygon(_pts(p), fill=colour)
    four = len(p) == 4
    c = p.mean(axis=0)
    if pat in ("rim", "cooling"):
        draw.polygon(_pts(_shrink(p, 0.8)), fill=_shade(colour, 0.86 if pat == "rim" else 0.5))
        draw.polygon(_pts(_shrink(p, 0.18)), fill=_shade(colour, 0.75))
    elif pat == "dome":
        for t, f in ((0.8, 1.06), (0.55, 1.14), (0.3, 1.22)):
            draw.polygon(_pts(_shrink(p, t, c - np.ptp(p, axis=0) * 0.05)), fill=_shade(colour, f))
    elif pat in ("pool", "water"):
        if pat == "pool":
            draw.polygon(_pts(p), fill=(214, 212, 204))
            draw.polygon(_pts(_shrink(p, 0.82)), fill=colour)
        draw.polygon(_pts(_shrink(p, 0.6)), fill=_shade(colour, 1.08))
    elif pat == "rings":
        for i, t in enumerate((0.8, 0.6, 0.4, 0.2)):
            draw.polygon(_pts(_shrink(p, t)), fill=_shade(colour, 0.9 if i % 2 == 0 else 1.05))
    elif pat == "roundabout":
        draw.polygon(_pts(_shrink(p, 0.56)), fill=(86, 130, 70))
    elif pat == "helipad":
        draw.polygon(_pts(_shrink(p, 0.82)), outline=(236, 236, 236), width=2)
        r = np.ptp(p, axis=0).max() * 0.2
        for dx in (-r / 2, r / 2):
            draw.line([(c[0] + dx, c[1] - r / 1.5), (c[0] + dx, c[1] + r / 1.5)],
                      fill=(240, 240, 240), width=2)
        draw.line([(c[0] - r / 2, c[1]), (c[0] + r / 2, c[1])], fill=(240, 240, 240), width=2)
    elif pat in ("ridge", "tent") and four:
        half = np.array([p[0], p[1], (p[1] + p[2]) / 2, (p[3] + p[0]) / 2])
        draw.polygon(_pts(half), fill=_shade(colour, 0.8))
    elif pat == "roof":
        draw.polygon(_pts(_shrink(p, 0.86)), fill=_shade(colour, 1.06))
        for _ in range(int(rng.integers(0, 3))):
            q = c + (p[int(rng.integers(len(p)))] - c) * rng.uniform(0.2, 0.5)
            draw.polygon(_pts(_shrink(p, 0.12, q)), fill=_shade(colour, 0.8))
    elif pat in ("stripes", "grid", "parking", "runway") and four:
        _lines(draw, p, pat, colour, rng)
    elif pat in ("court", "pitch") and four:
        _court(draw, p, pat, colour)
    elif pat == "fan":
        apex, mid = p[0], p[len(p) // 2 + 1]
        infield = np.array([apex, apex + 0.3 * (p[1] - apex), apex + 0.42 * (mid - apex),
                            apex + 0.3 * (p[-1] - apex)])
        draw.polygon(_pts(infield), fill=(180, 140, 100))
    elif pat in ("stripes", "track", "deck"):
        about = p[0] if style.shape == "fan" else c
        draw.polygon(_pts(_shrink(p, 0.74, about)), fill=(84, 140, 70) if pat == "track"
                     else _shade(colour, 0.84))
        if pat == "deck":
            stern = (p[0] + p[-1]) / 2
            draw.polygon(_pts(_shrink(p, 0.22, stern + 0.25 * (c - stern))),
                         fill=(238, 238, 236))
    elif pat == "car":
        draw.polygon(_pts(_shrink(p, 0.55)), fill=_shade(colour, 0.45))
    elif pat in ("dots", "speckle", "lawn"):
        _dots(draw, rng, p, pat, colour)
    if style.shape == "turbine":
        r = np.ptp(p, axis=0).max() * 0.05
        draw.ellipse([c[0] - r, c[1] - r, c[0] + r, c[1] + r], fill=(200, 200, 200))


def _lines(draw: ImageDraw.ImageDraw, p: Polygon, pat: str, colour: RGB,
           rng: np.random.Generator) -> None:
    long_ = np.hypot(*(p[1] - p[0]))
    short = np.hypot(*(p[3] - p[0]))
    tint = (226, 226, 220) if pat in ("parking", "runway") else _shade(colour, 0.7)
    if pat in ("stripes", "grid"):
        k = max(2, int(short / 3))
        for t in np.linspace(0, 1, k + 2)[1:-1]:
            draw.line(_pts(np.array([p[0] + (p[3] - p[0]) * t, p[1] + (p[2] - p[1]) * t])),
                      fill=tint, width=1)
    if pat == "grid":
        for t in np.linspace(0, 1, max(2, int(long_ / 4)) + 2)[1:-1]:
            draw.line(_pts(np.array([p[0] + (p[1] - p[0]) * t, p[3] + (p[2] - p[3]) * t])),
                      fill=_shade(colour, 1.5), width=1)
    if pat == "parking":
        for t in np.linspace(0.04, 0.96, max(3, int(long_ / 7))):
            a, b = p[0] + (p[1] - p[0]) * t, p[3] + (p[2] - p[3]) * t
            for s0, s1 in ((0.05, 0.4), (0.6, 0.95)):
                draw.line(_pts(np.array([a + (b - a) * s0, a + (b - a) * s1])), fill=tint)
                if rng.random() < 0.45:
                    q = a + (b - a) * (s0 + s1) / 2 + (p[1] - p[0]) * 0.5 / max(3, long_ / 7)
                    car = _shrink(p, 0.06 * min(1.0, 40 / long_), q)
                    draw.polygon(_pts(car), fill=_CARS[int(rng.integers(len(_CARS)))])
    if pat == "runway":
        a, b = (p[0] + p[3]) / 2, (p[1] + p[2]) / 2
        for t in np.arange(0.08, 0.9, 0.04):
            draw.line(_pts(np.array([a + (b - a) * t, a + (b - a) * (t + 0.02)])), fill=tint,
                      width=max(1, int(short / 20)))


def _court(draw: ImageDraw.ImageDraw, p: Polygon, pat: str, colour: RGB) -> None:
    if pat == "pitch":
        for i in range(8):
            t0, t1 = i / 8, (i + 1) / 8
            band = np.array([p[0] + (p[1] - p[0]) * t0, p[0] + (p[1] - p[0]) * t1,
                             p[3] + (p[2] - p[3]) * t1, p[3] + (p[2] - p[3]) * t0])
            draw.polygon(_pts(band), fill=_shade(colour, 1.08 if i % 2 else 0.96))
        inner = _shrink(p, 0.9)
    else:
        draw.polygon(_pts(p), fill=_shade(colour, 0.75))
        inner = _shrink(p, 0.78)
        draw.polygon(_pts(inner), fill=colour)
    white = (236, 236, 232)
    draw.polygon(_pts(inner), outline=white, width=1)
    draw.line(_pts(np.array([(inner[0] + inner[1]) / 2, (inner[3] + inner[2]) / 2])), fill=white)
    if pat == "pitch":
        c = p.mean(axis=0)
        r = np.hypot(*(p[3] - p[0])) * 0.12
        draw.ellipse([c[0] - r, c[1] - r, c[0] + r, c[1] + r], outline=white)


def _dots(draw: ImageDraw.ImageDraw, rng: np.random.Generator, p: Polygon, pat: str,
          colour: RGB) -> None:
    c = p.mean(axis=0)
    size = float(np.ptp(p, axis=0).max())
    if pat == "lawn":
        draw.polygon(_pts(_shrink(p, 0.65)), fill=_shade(colour, 1.12))
    n = {"dots": 60, "speckle": 80, "lawn": 6}[pat]
    r = max(0.8, size * (0.012 if pat != "lawn" else 0.03))
    for _ in range(n):
        q = c + (p[int(rng.integers(len(p)))] - c) * rng.uniform(0.05, 0.78)
        tint = (196, 172, 120) if pat == "lawn" else _shade(colour, float(rng.uniform(0.6, 1.4)))
        draw.ellipse([q[0] - r, q[1] - r, q[0] + r, q[1] + r], fill=tint)


def _occupancy(w: int, h: int, polys: list[Polygon],
               roads: list[tuple[Polygon, float]]) -> npt.NDArray[np.bool_]:
    occ = Image.new("L", (w // 4 + 1, h // 4 + 1), 0)
    d = ImageDraw.Draw(occ)
    for p in polys:
        lo, hi = p.min(axis=0) / 4 - 2, p.max(axis=0) / 4 + 2
        d.rectangle([lo[0], lo[1], hi[0], hi[1]], fill=255)
    for line, width in roads:
        d.line(_pts(line / 4), fill=255, width=int(width / 4) + 3)
    return np.asarray(occ) > 0


def render(image: ImageLayout, seed: int) -> npt.NDArray[np.uint8]:
    """Paint one image of the benchmark.

    Returns:
        ``(height, width, 3)`` uint8 RGB.
    """
    plan = image.plan
    w, h, zoom = plan.width, plan.height, plan.zoom
    rng = np.random.default_rng([seed, 2, plan.index])
    sun_angle = float(rng.uniform(0, 2 * math.pi))
    sun = np.array([math.cos(sun_angle), math.sin(sun_angle)])
    areas = [a for a in image.annotations if a.plan.category.is_area]
    banned = {_CONFLICT.get(STYLES[a.plan.category.style].pattern, "") for a in areas}
    canvas = _Canvas(w, h)
    _land_cover(rng, canvas, w, h, zoom, banned)
    for a in areas:
        _area_ground(rng, canvas, a, zoom)
    grounds = [p for a in image.annotations if not a.plan.category.is_area
               for p in _settings(rng, canvas, a)]
    targets = [p for a in image.annotations for p in a.parts] + grounds
    linear = any(a.centreline is not None for a in areas)
    blocked = geom.obstacles(targets, 6.0)
    roads = [] if linear else _roads(rng, w, h, zoom, blocked)
    occupied = _occupancy(w, h, targets, roads)
    buildings = _buildings(rng, canvas, occupied, zoom)
    img = canvas.texture(rng)
    draw = ImageDraw.Draw(img)
    for line, width in roads:
        draw.line(_pts(line), fill=(96, 96, 98), width=int(width), joint="curve")
        if width > 10:
            _dashes(draw, line, 12.0, max(1, int(width / 8)))
    for a in areas:
        _linear_marks(draw, a)
    shadow = Image.new("L", (w, h), 0)
    sdraw = ImageDraw.Draw(shadow)
    for a in image.annotations:
        style = STYLES[a.plan.category.style]
        if style.height <= 0 or a.plan.category.is_area:
            continue
        for p in a.parts:
            width = float(min(np.ptp(p, axis=0)))
            length = style.height * width
            steps = max(1, min(12, int(length / 2)))
            for t in np.linspace(0, 1, steps + 1)[1:]:
                sdraw.polygon(_pts(p + sun * length * t), fill=255)
    for poly, _roof, height in buildings:
        for t in np.linspace(0.0, 1.0, 4)[1:]:
            sdraw.polygon(_pts(poly + sun * height * t), fill=255)
    img = Image.composite(img.point(lambda v: v // 2), img, shadow)
    draw = ImageDraw.Draw(img)
    for poly, colour, _height in buildings:
        draw.polygon(_pts(poly), fill=colour)
        if len(poly) == 4:
            half = np.array([poly[0], poly[1], (poly[1] + poly[2]) / 2, (poly[3] + poly[0]) / 2])
            draw.polygon(_pts(half), fill=_shade(colour, 0.82))
        else:
            crown = poly.mean(axis=0) - sun * 0.15 * float(np.ptp(poly, axis=0).max())
            draw.polygon(_pts(_shrink(poly, 0.5, crown)), fill=_shade(colour, 1.25))
    for a in image.annotations:
        if a.plan.category.is_area:
            continue
        style = STYLES[a.plan.category.style]
        base = style.colour
        for p in a.parts:
            colour = (_CARS[int(rng.integers(len(_CARS)))] if style.pattern == "car"
                      and rng.random() < 0.7 else _jitter(rng, base, 8))
            _draw_object(draw, rng, p, style, colour)
    return _finish(rng, img)


def _finish(rng: np.random.Generator, img: Image.Image) -> npt.NDArray[np.uint8]:
    """Optics and sensor: haze, colour cast, noise."""
    haze = float(rng.uniform(0.0, 0.12))
    cast = rng.uniform(0.97, 1.03, 3)
    lut = [int(min(255, v * (1 - haze) * c + haze * 200)) for c in cast for v in range(256)]
    img = img.point(lut)
    w, h = img.size
    noise = (128 + rng.standard_normal((h, w), dtype=np.float32) * 2.0).astype(np.uint8)
    grain = Image.fromarray(noise)
    return np.asarray(ImageChops.add(img, Image.merge("RGB", [grain] * 3), 1.0, -128))
