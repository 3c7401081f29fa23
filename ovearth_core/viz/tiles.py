"""Gallery tiles: a small picture of one object, cut from the original pixels around it.

Coordinates are original image pixels (x right, y down). :func:`crop_region` picks the
square around an object (its box grown by ``margin`` of its size on each side, at least
``min_side`` pixels, shifted inside the image at its borders); :func:`render_tile` scales
that window to ``tile_px`` (nearest neighbour when enlarging, so a 10-pixel target shows
its real pixels as blocks), blends the GT and predicted masks, and outlines every box of
the modality in the match colours of :mod:`.overlay` (the tile's own object thicker).
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator

import numpy as np
from PIL import Image, ImageDraw

from ..types import Sample
from .images import BLANK_GREY, RGB8, DetailImage
from .overlay import (
    STATUS_COLOURS,
    Decoded,
    Region,
    closed_outlines,
    compose_detail,
    decode_masks,
    envelopes,
    match_status,
    touching,
)

TILE_PX = 160
MARGIN = 1.0
MIN_SIDE = 24.0


def crop_region(box: Region | None, width: int, height: int, margin: float = MARGIN,
                min_side: float = MIN_SIDE) -> Region:
    """The square window to cut around ``box`` (xyxy), in original pixels.

    Side: the box's longer side times ``1 + 2 * margin``, at least ``min_side``; the
    window is shifted inside the image at its borders (cut only where the image is smaller
    than the side). ``None`` (nothing to show): the whole image.

    >>> crop_region((10, 10, 20, 20), 100, 100)
    (0.0, 0.0, 30.0, 30.0)
    >>> crop_region((0, 0, 10, 10), 100, 100)
    (0.0, 0.0, 30.0, 30.0)
    """
    if box is None:
        return (0.0, 0.0, float(width), float(height))
    x0, y0, x1, y1 = box
    side = max(max(x1 - x0, y1 - y0) * (1 + 2 * margin), min_side)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    left, right = _shift_inside(cx - side / 2, side, width)
    top, bottom = _shift_inside(cy - side / 2, side, height)
    return (left, top, right, bottom)


def _shift_inside(low: float, span: float, limit: float) -> tuple[float, float]:
    span = min(span, float(limit))
    low = min(max(low, 0.0), limit - span)
    return float(low), float(low + span)


def tile_scale(region: Region, tile_px: int = TILE_PX) -> float:
    """Tile pixels per original pixel for ``region`` (its longer side fills the tile)."""
    x0, y0, x1, y1 = region
    return tile_px / max(x1 - x0, y1 - y0, 1e-9)


def _resample(window: DetailImage | None, region: Region, scale: float) -> DetailImage:
    """``region`` at ``scale`` tile pixels per original pixel, from ``window`` (grey where
    the window has no pixels)."""
    x0, y0, x1, y1 = region
    cols = max(1, round((x1 - x0) * scale))
    rows = max(1, round((y1 - y0) * scale))
    out = np.full((rows, cols, 3), BLANK_GREY, dtype=np.uint8)
    if window is not None:
        # Each tile pixel takes the window pixel under its centre.
        xs = x0 + (np.arange(cols) + 0.5) / scale
        ys = y0 + (np.arange(rows) + 0.5) / scale
        c = np.floor((xs - window.left) * window.scale).astype(np.intp)
        r = np.floor((ys - window.top) * window.scale).astype(np.intp)
        h, w = window.rgb.shape[:2]
        okc, okr = (c >= 0) & (c < w), (r >= 0) & (r < h)
        out[np.ix_(okr, okc)] = window.rgb[np.ix_(r[okr], c[okc])]
    return DetailImage(out, x0, y0, scale)


def render_tile(window: DetailImage | None, sample: Sample, region: Region,
                modality: str | None, row: dict | None, focus: tuple[str, int] | None = None,
                tile_px: int = TILE_PX, opacity: float = 0.35,
                decoded: Decoded | None = None) -> Image.Image:
    """The tile of ``region``: a ``tile_px`` square RGB image.

    Args:
        window: pixels around ``region`` (:func:`~.images.load_region`), ``None`` for a
            grey canvas (unreadable image).
        sample: the query's geometry; its masks are blended in (GT cyan, prediction magenta).
        modality: ``bbox`` or ``oriented_bbox``: whose boxes are outlined (``None``: both).
        row: the query's per-sample result row (its ``matches`` colour the boxes).
        focus: ``("GT" | "pred", box index)`` of the tile's own object, drawn thicker.
    """
    scale = tile_scale(region, tile_px)
    grid = _resample(window, region, scale)
    rgb = compose_detail(grid, sample, ("GT mask", "predicted mask"), opacity,
                         decoded=decoded if decoded is not None else decode_masks(sample))
    canvas = Image.new("RGB", (tile_px, tile_px), (BLANK_GREY,) * 3)
    canvas.paste(Image.fromarray(rgb), (0, 0))
    draw = ImageDraw.Draw(canvas)
    x0, y0, x1, y1 = region
    # Only the boxes that can touch the tile (a 3-px line reaches 2 px beyond its box): a
    # tile of a 4,000-box scene draws its few neighbours, not every box of the scene.
    pad = 3 / scale
    view = (x0 - pad, y0 - pad, x1 + pad, y1 + pad)
    for key in (modality,) if modality else ("bbox", "oriented_bbox"):
        for role, points, colour in _outlines(sample, row, key, view):
            own = focus == role
            draw.line(((points - (x0, y0)) * scale).ravel().tolist(), fill=colour,
                      width=3 if own else 1)
    return canvas


def _outlines(sample: Sample, row: dict | None, key: str, view: Region
              ) -> Iterator[tuple[tuple[str, int], np.ndarray, str]]:
    """``((role, index), closed outline (5, 2), colour)`` of every box of ``key`` whose
    envelope meets ``view``, predictions first."""
    oriented = key == "oriented_bbox"
    gt = sample.gt_obbs if oriented else sample.gt_boxes
    pred = sample.pred_obbs if oriented else sample.pred_boxes
    entry = row.get(key) if row else None
    gs, ps, _, _ = match_status(len(gt), len(pred), entry["matches"] if entry else [])
    for role, geoms, status in (("pred", pred, ps), ("GT", gt, gs)):
        if not len(geoms):
            continue
        near = np.flatnonzero(touching(envelopes(geoms, oriented), view))
        shapes = closed_outlines(np.asarray(geoms)[near], oriented)
        for i, outline in zip(near.tolist(), shapes, strict=True):
            yield (role, i), outline, STATUS_COLOURS[status[i]]


def on_screen_size(box: Region, region: Region, tile_px: int = TILE_PX) -> float:
    """The longer side of ``box`` in tile pixels."""
    x0, y0, x1, y1 = box
    return max(x1 - x0, y1 - y0) * tile_scale(region, tile_px)


def jpeg_bytes(image: Image.Image, quality: int = 88) -> bytes:
    """``image`` as JPEG bytes (what the app sends: a few kB per tile)."""
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def source_window(rgb: RGB8, region: Region) -> DetailImage:
    """The window of a full-resolution decode ``rgb`` covering ``region`` (original
    pixels), as :func:`~.images.load_region` reads it at scale 1 from the file: a page of
    tiles cut from one decoded image instead of one decode per tile."""
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = region
    left, top = max(0, math.floor(x0)), max(0, math.floor(y0))
    right = min(w, max(left + 1, math.ceil(x1)))
    bottom = min(h, max(top + 1, math.ceil(y1)))
    return DetailImage(np.ascontiguousarray(rgb[top:bottom, left:right]), float(left),
                       float(top), 1.0)


def load_scale(region: Region, tile_px: int = TILE_PX) -> float:
    """The decode scale a tile of ``region`` needs (at most 1: full resolution)."""
    return min(1.0, tile_scale(region, tile_px))
