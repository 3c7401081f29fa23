"""Still images and comparison figures for the HTML report (no Streamlit).

Gallery thumbnails reuse the app's drawing code (:mod:`ovearth_core.viz.images`
for loading, :mod:`ovearth_core.viz.overlay` for the zoom region, mask colours and
the box match status) and add what a static page needs: the masks blended into a
thumbnail of the zoom region only (a full-image blend costs ~90 ms per query at 1225²),
box outlines drawn with Pillow (GT solid, predictions dashed; green matched, red false
positive, orange missed) and a JPEG ``data:`` URI. Coordinates are original image
pixels; a display image may be downscaled by its ``scale``.

The comparison figures (A vs B) take a :class:`~ovearth_core.analysis.compare.Comparison`.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import plotly.graph_objects as go
from PIL import Image, ImageDraw

from .. import masks
from ..analysis.compare import Comparison, QueryDiff
from ..labels import MODALITY_LABELS, metric_label
from ..types import Sample
from ..viz.images import DetailImage, DisplayImage, load_display_image, load_region
from ..viz.overlay import MASK_COLOURS, Region, box_groups, dashed_line, zoom_region

THUMB_SIDE = 256
MAX_UPSCALE = 6.0
MASK_OPACITY = 0.45
COLOURS = ("#636efa", "#ef553b")


def _blend_masks(rgb: npt.NDArray[np.uint8], sample: Sample, left: int, top: int,
                 factor: float, scale: float,
                 origin: tuple[int, int] = (0, 0)) -> npt.NDArray[np.uint8]:
    """Blend both masks into a thumbnail ``(h, w, 3)`` of the crop at ``(left, top)`` of
    pixels at ``scale`` whose top-left is original pixel ``origin``.

    Each thumbnail pixel takes the mask value of the original pixel under its centre
    (nearest), so only thumbnail-sized arrays are blended, whatever the image size.
    """
    out = rgb.astype(np.float32)
    xs = ((left + (np.arange(rgb.shape[1]) + 0.5) / factor) / scale + origin[0]).astype(np.intp)
    ys = ((top + (np.arange(rgb.shape[0]) + 0.5) / factor) / scale + origin[1]).astype(np.intp)
    xs, ys = xs.clip(0, sample.width - 1), ys.clip(0, sample.height - 1)
    for name, rle in (("GT mask", sample.gt_mask), ("predicted mask", sample.pred_mask)):
        if rle is None:
            continue
        m = masks.take(masks.runs_of(rle), ys, xs)
        colour = np.array(MASK_COLOURS[name], dtype=np.float32)
        out[m] = (1 - MASK_OPACITY) * out[m] + MASK_OPACITY * colour
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def load_display(images_root: str | Path, sample: Sample) -> DisplayImage:
    """The sample's image for drawing, or a blank canvas with a notice (never raises)."""
    return load_display_image(images_root, sample.image_path, sample.width, sample.height)


def load_view(images_root: str | Path, sample: Sample, region: Region,
              max_side: int = THUMB_SIDE) -> tuple[DisplayImage | DetailImage, str | None]:
    """Pixels to draw ``region`` of the sample's image from, and the notice if any.

    The window of the region with enough pixels for a ``max_side`` thumbnail (up to the
    original pixels: crisp small objects in large images; JPEGs decoded reduced when
    the region is large), else the display image or the blank canvas of
    :func:`load_display`. Never raises.
    """
    x0, y0, x1, y1 = region
    detail = load_region(images_root, sample.image_path, sample.width, sample.height, region,
                         max_side / max(x1 - x0, y1 - y0, 1e-9))
    if detail is not None:
        return detail, None
    display = load_display(images_root, sample)
    return display, display.notice


def shared_region(samples: Sequence[Sample]) -> Region:
    """One view for the same query of several submissions: the union of their zoom regions."""
    regions = np.array([zoom_region(s) for s in samples])
    return (float(regions[:, 0].min()), float(regions[:, 1].min()),
            float(regions[:, 2].max()), float(regions[:, 3].max()))


def overlay_thumbnail(display: DisplayImage | DetailImage, sample: Sample, row: dict[str, Any],
                      max_side: int = THUMB_SIDE, region: Region | None = None) -> Image.Image:
    """The query's zoom region with GT and prediction drawn, at most ``max_side`` pixels.

    Args:
        display: from :func:`load_display` (its ``notice`` says when it is a blank canvas),
            or a full-resolution window covering the region (:func:`load_view`).
        sample: the query's geometry.
        row: the query's ``per_sample`` result row (box entries give the match status).
        region: ``(x0, y0, x1, y1)`` in original pixels; default ``zoom_region(sample)``.
    """
    x0, y0, x1, y1 = region or zoom_region(sample)
    if isinstance(display, DetailImage):
        s, origin = display.scale, (display.left, display.top)
    else:
        s, origin = display.scale, (0, 0)
    x0, x1, y0, y1 = x0 - origin[0], x1 - origin[0], y0 - origin[1], y1 - origin[1]
    h, w = display.rgb.shape[:2]
    left = min(w - 1, max(0, int(math.floor(x0 * s))))
    top = min(h - 1, max(0, int(math.floor(y0 * s))))
    right = min(w, max(left + 1, int(math.ceil(x1 * s))))
    bottom = min(h, max(top + 1, int(math.ceil(y1 * s))))
    factor = min(MAX_UPSCALE, max_side / max(right - left, bottom - top))
    size = (max(1, round((right - left) * factor)), max(1, round((bottom - top) * factor)))
    base = Image.fromarray(display.rgb[top:bottom, left:right]).resize(
        size, Image.Resampling.NEAREST if factor > 1 else Image.Resampling.BILINEAR)
    thumb = Image.fromarray(_blend_masks(np.asarray(base), sample, left, top, factor, s,
                                         origin))
    draw = ImageDraw.Draw(thumb)
    for key, oriented in (("bbox", False), ("oriented_bbox", True)):
        if row.get(key) is None:
            continue
        for item in box_groups(sample, row[key], oriented):
            pts = ((item["outline"] - np.array(origin)) * s - np.array([left, top])) * factor
            if item["role"] == "GT":
                draw.line([tuple(p) for p in pts], fill=item["colour"], width=3)
            else:
                dashed_line(draw, pts, item["colour"], 2)
    return thumb


def jpeg_data_uri(image: Image.Image, quality: int = 85) -> str:
    """``data:image/jpeg;base64,...`` of an RGB image."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _layout(fig: go.Figure, title: str, height: int = 340, **extra: Any) -> go.Figure:
    fig.update_layout(title={"text": title, "font": {"size": 15}}, height=height,
                      margin={"l": 50, "r": 20, "t": 45, "b": 50}, **extra)
    return fig


def comparison_bars(cmp: Comparison, names: Sequence[str]) -> go.Figure:
    """Grouped bars of every key metric, A beside B (null metrics left out)."""
    fig = go.Figure()
    for side, name, colour in zip(("a", "b"), names, COLOURS, strict=True):
        items = [(metric_label(m.modality, m.metric), getattr(m, side)) for m in cmp.metrics]
        items = [(label, v) for label, v in items if v is not None]
        fig.add_trace(go.Bar(x=[n for n, _ in items], y=[v for _, v in items], name=name,
                             marker_color=colour, text=[f"{v:.3f}" for _, v in items],
                             textposition="outside"))
    fig.update_yaxes(range=[min(0.0, *(m.b or 0 for m in cmp.metrics),
                                *(m.a or 0 for m in cmp.metrics)) - 0.05, 1.1])
    return _layout(fig, "Key metrics", barmode="group")


def difference_forest(cmp: Comparison, names: Sequence[str]) -> go.Figure:
    """Each key metric's difference B − A with its bootstrap interval."""
    rows = [m for m in cmp.metrics if m.diff is not None and m.ci_low is not None]
    labels = [metric_label(m.modality, m.metric) for m in rows]
    fig = go.Figure(go.Scatter(
        x=[m.diff for m in rows], y=labels, mode="markers", marker={"size": 9, "color": "#222"},
        error_x={"type": "data", "symmetric": False,
                 "array": [m.ci_high - m.diff for m in rows],
                 "arrayminus": [m.diff - m.ci_low for m in rows]},
        hovertemplate="%{y}: Δ %{x:.4f}<extra></extra>", name="B − A"))
    fig.add_vline(x=0, line={"color": "#999", "dash": "dot"})
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title=f"{names[1]} − {names[0]} ({cmp.confidence:.0%} bootstrap CI)")
    return _layout(fig, "Differences with confidence intervals",
                   height=max(260, 60 + 28 * len(rows)), showlegend=False)


def query_scatter(diffs: Sequence[QueryDiff], key: str, names: Sequence[str]) -> go.Figure:
    """Per-query score of A (x) against B (y) with the diagonal."""
    score = "IoU" if key == "seg" else "F1"
    a = np.array([d.a for d in diffs], dtype=np.float64)
    b = np.array([d.b for d in diffs], dtype=np.float64)
    fig = go.Figure(go.Scatter(
        x=a, y=b, mode="markers",
        marker={"size": 6, "opacity": 0.6, "color": b - a, "colorscale": "RdBu", "cmid": 0,
                "showscale": False},
        text=np.array([d.sample_id for d in diffs], dtype=object),
        hovertemplate="%{text}<br>A %{x:.3f} · B %{y:.3f}<extra></extra>"))
    fig.add_shape(type="line", x0=0, y0=0, x1=1, y1=1, line={"color": "#999", "dash": "dot"})
    fig.update_xaxes(title=f"{names[0]} {score}", range=[-0.02, 1.02])
    fig.update_yaxes(title=f"{names[1]} {score}", range=[-0.02, 1.02])
    return _layout(fig, f"Per-query {MODALITY_LABELS[key]} {score}: A vs B", showlegend=False)
