"""Drawing one query's ground truth and prediction over its image.

Coordinates are original image pixels (continuous, x right, y down), the frame
of the annotation's ``width`` x ``height``; a :class:`~.images.DisplayImage`
may be downscaled by ``scale`` display pixels per original pixel.

Match colours: matched boxes green, false-positive predictions red, missed GT
boxes orange. Masks: GT cyan, prediction magenta, or in the pixel mode TP green,
FP red, FN orange. GT outlines are solid, predicted outlines dashed, DOTA's difficult GT
boxes dotted; a predicted box NMS-AP suppressed (``suppressed``: its positions per box
modality) is grey and dotted, "suppressed by NMS-AP" in its label.
"""

from __future__ import annotations

import base64
import functools
import io
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import plotly.graph_objects as go
from PIL import Image, ImageDraw, ImageFont

from .. import masks
from ..types import Sample
from .images import DetailImage, DisplayImage

Region = tuple[float, float, float, float]  # x0, y0, x1, y1
RGB8 = npt.NDArray[np.uint8]

MATCHED = "#1db954"
FALSE_POSITIVE = "#e53935"
MISSED = "#ff9800"
STATUS_COLOURS = {"matched": MATCHED, "false positive": FALSE_POSITIVE, "missed": MISSED}
MASK_COLOURS: dict[str, tuple[int, int, int]] = {
    "GT mask": (0, 190, 255), "predicted mask": (255, 0, 200),
    "TP pixels": (29, 185, 84), "FP pixels": (229, 57, 53), "FN pixels": (255, 152, 0),
}
LAYERS: tuple[str, ...] = ("GT mask", "predicted mask", "GT HBB", "predicted HBB",
                           "GT OBB", "predicted OBB")
MAX_LABELS = 40
SUPPRESSED = "#9e9e9e"  # a predicted box NMS-AP removed (docs/metrics.md)
SUPPRESSED_NAME = "suppressed by NMS-AP"
# Positions of the predicted boxes NMS-AP removed, per box modality (``bbox``,
# ``oriented_bbox``); an empty mapping: none.
Suppressed = dict[str, frozenset[int]]


def layers_with_geometry(samples: Sequence[Sample]) -> tuple[str, ...]:
    """The :data:`LAYERS` some sample has geometry for (GT or predicted masks, HBBs, OBBs;
    a box-only benchmark has no mask layers), in :data:`LAYERS` order."""
    kinds = {"mask": any(s.gt_mask is not None or s.pred_mask is not None for s in samples),
             "HBB": any(len(s.gt_boxes) or len(s.pred_boxes) for s in samples),
             "OBB": any(len(s.gt_obbs) or len(s.pred_obbs) for s in samples)}
    return tuple(layer for layer in LAYERS if kinds[layer.split()[-1]])
# With more boxes than this, GT boxes go unlabelled (their hover text still tells).
MAX_GT_LABELS_BOXES = 12


def geometry_extent(sample: Sample, predictions: bool = True) -> Region | None:
    """Envelope of every GT (and, with ``predictions``, predicted) mask, box and oriented
    box; ``None`` if there is none."""
    pairs = [(sample.gt_boxes, sample.gt_obbs, sample.gt_mask)]
    if predictions:
        pairs.append((sample.pred_boxes, sample.pred_obbs, sample.pred_mask))
    boxes = []
    for hbb, polys, rle in pairs:
        boxes.append(np.asarray(hbb, dtype=float).reshape(-1, 4))
        if len(polys):
            boxes.append(np.concatenate([polys.min(axis=1), polys.max(axis=1)], axis=1))
        env = masks.bbox_of(rle)
        if env is not None:
            x, y, w, h = env
            boxes.append(np.array([[x, y, x + w, y + h]]))
    stacked = np.concatenate(boxes)
    if stacked.size == 0:
        return None
    return (float(stacked[:, 0].min()), float(stacked[:, 1].min()),
            float(stacked[:, 2].max()), float(stacked[:, 3].max()))


ZOOM_TARGETS: tuple[str, ...] = ("GT target", "GT only", "GT and predictions", "full image")
# "GT target" opens on the GT envelope unless that draws its smallest object below
# MIN_OBJECT_PX on a VIEW_PX-wide plot; it then opens on that object alone.
MIN_OBJECT_PX = 40.0
VIEW_PX = 640.0
LARGE_SCENE = 1024


def figure_height(width: int, height: int) -> int:
    """The viewer's plot height in screen pixels for a ``width`` x ``height`` image: 760
    for a large scene (a side of ``LARGE_SCENE`` px or more), else 620."""
    return 760 if max(width, height) >= LARGE_SCENE else 620


def _gt_objects(sample: Sample) -> npt.NDArray[np.float64]:
    """Envelopes ``(N, 4)`` xyxy of every GT box and oriented box."""
    parts = [np.asarray(sample.gt_boxes, dtype=float).reshape(-1, 4)]
    if len(sample.gt_obbs):
        parts.append(np.concatenate([sample.gt_obbs.min(axis=1), sample.gt_obbs.max(axis=1)],
                                    axis=1))
    return np.concatenate(parts)


def zoom_region(sample: Sample, target: str = "GT and predictions", margin: float = 0.25,
                min_size: float = 96.0) -> Region:
    """The region to open on, in original pixels.

    ``target`` (one of ``ZOOM_TARGETS``): the envelope of the GT and predicted
    geometry, of the GT only (falling back to the predictions when there is no GT),
    or the whole image; ``GT target`` is the GT only view unless that shows its
    smallest GT box below ``MIN_OBJECT_PX`` on a ``VIEW_PX`` plot, then the view of that
    box alone (so a 10-pixel target opens at 40 pixels or more). The envelope grows
    by ``margin`` of its size on each side, to a square at least ``min_size`` pixels
    wide, clipped to the image. Without any geometry: the whole image.
    """
    full = (0.0, 0.0, float(sample.width), float(sample.height))
    if target == "full image":
        return full
    if target == "GT target":
        region = zoom_region(sample, "GT only", margin, min_size)
        smallest = _too_small(sample, region)
        if smallest is None:
            return region
        x0, y0, x1, y1 = _gt_objects(sample)[smallest]
        return _square(x0, y0, x1, y1, sample, margin, min_size)
    extent = geometry_extent(sample, predictions=target != "GT only")
    if extent is None:
        extent = geometry_extent(sample)
    if extent is None:
        return full
    return _square(*extent, sample, margin, min_size)


def _too_small(sample: Sample, region: Region) -> int | None:
    """The smallest GT object when, in ``region`` on a ``VIEW_PX`` plot, it is below
    ``MIN_OBJECT_PX`` (``None``: every GT object shows, or there is none)."""
    objects = _gt_objects(sample)
    if not len(objects):
        return None
    sides = np.maximum(objects[:, 2] - objects[:, 0], objects[:, 3] - objects[:, 1])
    view = max(region[2] - region[0], region[3] - region[1])
    smallest = int(np.argmin(sides))
    return None if sides[smallest] * VIEW_PX / view >= MIN_OBJECT_PX else smallest


def too_dense(sample: Sample, margin: float = 0.25, min_size: float = 96.0) -> bool:
    """Whether the "GT target" view cannot show every GT object at ``MIN_OBJECT_PX`` or
    more together (it then opens on one object alone: a dense query)."""
    return _too_small(sample, zoom_region(sample, "GT only", margin, min_size)) is not None


def _square(x0: float, y0: float, x1: float, y1: float, sample: Sample, margin: float,
            min_size: float) -> Region:
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half_w = max((x1 - x0) * (1 + 2 * margin), min_size) / 2
    half_h = max((y1 - y0) * (1 + 2 * margin), min_size) / 2
    # Square-ish view so that thin objects keep context on their short side.
    half = max(half_w, half_h)
    nx0, nx1 = _clip_span(cx - half, cx + half, sample.width)
    ny0, ny1 = _clip_span(cy - half, cy + half, sample.height)
    return (nx0, ny0, nx1, ny1)


def object_region(sample: Sample, outline: npt.NDArray[np.float64], margin: float = 0.25,
                  min_size: float = 96.0) -> Region:
    """The view of one object (an outline ``(K, 2)`` of :func:`box_groups`), grown and
    clipped as :func:`zoom_region` grows an envelope."""
    return _square(float(outline[:, 0].min()), float(outline[:, 1].min()),
                   float(outline[:, 0].max()), float(outline[:, 1].max()), sample, margin,
                   min_size)


def _clip_span(low: float, high: float, limit: float) -> tuple[float, float]:
    """Shift ``[low, high]`` inside ``[0, limit]`` (shrinking only when it is longer)."""
    span = min(high - low, limit)
    low = min(max(low, 0.0), limit - span)
    return low, low + span


def match_status(n_gt: int, n_pred: int,
                 matches: Sequence[Sequence[float]]) -> tuple[list[str], list[str],
                                                              list[float | None],
                                                              list[float | None]]:
    """Status and matched IoU of every GT and predicted box from ``[[g, p, iou], ...]``.

    Returns ``(gt_status, pred_status, gt_iou, pred_iou)``: ``matched`` or
    ``missed`` per GT, ``matched`` or ``false positive`` per prediction.
    """
    gt_status, pred_status = ["missed"] * n_gt, ["false positive"] * n_pred
    gt_iou: list[float | None] = [None] * n_gt
    pred_iou: list[float | None] = [None] * n_pred
    for g, p, iou in matches:
        g, p = int(g), int(p)
        gt_status[g], pred_status[p] = "matched", "matched"
        gt_iou[g] = pred_iou[p] = float(iou)
    return gt_status, pred_status, gt_iou, pred_iou


def _fit(full: masks.Runs | None, shape: tuple[int, int],
         window: DetailImage | None = None) -> npt.NDArray[np.bool_]:
    """A mask (its runs) as a boolean ``shape`` array: on the pixel grid of ``window``, or
    else the whole mask resampled (nearest by pixel centres, as PIL's NEAREST); only those
    pixels are looked up (:func:`~ovearth_core.masks.take`), never the whole scene."""
    if full is None:
        return np.zeros(shape, dtype=bool)
    h, w = full.shape
    if window is not None:
        rows = np.floor(window.top + (np.arange(shape[0]) + 0.5) / window.scale).astype(np.intp)
        cols = np.floor(window.left + (np.arange(shape[1]) + 0.5) / window.scale).astype(np.intp)
    else:
        rows = ((np.arange(shape[0]) + 0.5) * h / shape[0]).astype(np.intp)
        cols = ((np.arange(shape[1]) + 0.5) * w / shape[1]).astype(np.intp)
    return masks.take(full, rows.clip(0, h - 1), cols.clip(0, w - 1))


Decoded = tuple[masks.Runs | None, masks.Runs | None]


def decode_masks(sample: Sample) -> Decoded:
    """The GT and predicted masks ready for drawing (their runs, ``None`` when empty):
    nothing is decoded, whatever the scene's size."""
    return tuple(None if rle is None else masks.runs_of(rle)  # type: ignore[return-value]
                 for rle in (sample.gt_mask, sample.pred_mask))


def mask_layers(sample: Sample, shape: tuple[int, int], pixel_mode: bool,
                layers: Collection[str], window: DetailImage | None = None,
                decoded: Decoded | None = None) -> list[tuple[str, npt.NDArray[np.bool_]]]:
    """The coloured mask layers to paint, as ``(name in MASK_COLOURS, boolean (h, w))``:
    the whole image resampled to ``shape``, or on the pixel grid of ``window``."""
    gt_full, pred_full = decoded if decoded is not None else decode_masks(sample)
    if pixel_mode:
        gt, pred = _fit(gt_full, shape, window), _fit(pred_full, shape, window)
        return [("TP pixels", gt & pred), ("FP pixels", pred & ~gt), ("FN pixels", gt & ~pred)]
    return [(name, _fit(full, shape, window))
            for name, full in (("GT mask", gt_full), ("predicted mask", pred_full))
            if name in layers]


def _blend(rgb: RGB8, layers: list[tuple[str, npt.NDArray[np.bool_]]], opacity: float) -> RGB8:
    # Only the pixels under some mask are blended (in float, rounded once): a mask covers a
    # sliver of a large scene, and converting the whole image cost most of a query switch.
    out = rgb.copy()
    if not layers:
        return out
    under = np.logical_or.reduce([mask for _, mask in layers])
    picked = out[under].astype(np.float32)
    for name, mask in layers:
        colour = np.array(MASK_COLOURS[name], dtype=np.float32)
        inside = mask[under]
        picked[inside] = (1 - opacity) * picked[inside] + opacity * colour
    out[under] = np.clip(picked + 0.5, 0, 255).astype(np.uint8)
    return out


def compose(image: DisplayImage, sample: Sample, layers: Collection[str] = LAYERS,
            opacity: float = 0.45, pixel_mode: bool = False,
            decoded: Decoded | None = None) -> RGB8:
    """The display image with the mask layers alpha-blended in, ``(h, w, 3)`` uint8."""
    return _blend(image.rgb, mask_layers(sample, image.rgb.shape[:2], pixel_mode, layers,
                                         decoded=decoded), opacity)


def compose_detail(detail: DetailImage, sample: Sample, layers: Collection[str] = LAYERS,
                   opacity: float = 0.45, pixel_mode: bool = False,
                   decoded: Decoded | None = None) -> RGB8:
    """A window of the image with the mask layers blended in on its pixel grid."""
    return _blend(detail.rgb, mask_layers(sample, detail.rgb.shape[:2], pixel_mode, layers,
                                          detail, decoded), opacity)


def _geoms(sample: Sample, oriented: bool) -> tuple[Any, Any, Any]:
    """GT boxes, predicted boxes and their scores of one modality."""
    if oriented:
        return sample.gt_obbs, sample.pred_obbs, sample.pred_obb_scores
    return sample.gt_boxes, sample.pred_boxes, sample.pred_box_scores


def envelopes(geoms: Any, oriented: bool) -> npt.NDArray[np.float64]:
    """Envelopes ``(N, 4)`` xyxy of ``N`` xyxy boxes or ``(N, 4, 2)`` oriented boxes."""
    if oriented:
        polys = np.asarray(geoms, dtype=float).reshape(-1, 4, 2)
        return np.concatenate([polys.min(axis=1), polys.max(axis=1)], axis=1)
    boxes = np.asarray(geoms, dtype=float).reshape(-1, 4)
    return np.concatenate([np.minimum(boxes[:, :2], boxes[:, 2:]),
                           np.maximum(boxes[:, :2], boxes[:, 2:])], axis=1)


def touching(env: npt.NDArray[np.float64], view: Region) -> npt.NDArray[np.bool_]:
    """Which envelopes ``(N, 4)`` meet ``view`` (edges included)."""
    x0, y0, x1, y1 = view
    return (env[:, 2] >= x0) & (env[:, 0] <= x1) & (env[:, 3] >= y0) & (env[:, 1] <= y1)


def box_groups(sample: Sample, entry: dict[str, Any] | None, oriented: bool,
               gt_index: Sequence[int] | None = None,
               pred_index: Sequence[int] | None = None,
               suppressed: Collection[int] = ()) -> list[dict[str, Any]]:
    """Every GT and predicted box of one modality with its status and label (only those
    of ``gt_index`` / ``pred_index`` when given, in that order; a dense scene's view
    builds the few it draws, not thousands).

    Each item: ``role`` (``GT``/``pred``), ``status``, ``outline`` ``(5, 2)``,
    ``label`` (IoU and score), ``colour`` and ``difficult`` (a GT box DOTA flags difficult:
    drawn dotted, "difficult" in its label; ``False`` for predictions) and ``suppressed``
    (a predicted box of ``suppressed``, positions NMS-AP removed: grey, its label says so).
    """
    gt, pred, scores = _geoms(sample, oriented)
    hard = difficult_flags(sample, len(gt))
    matches = entry["matches"] if entry else []
    gs, ps, giou, piou = match_status(len(gt), len(pred), matches)
    gi = list(range(len(gt)) if gt_index is None else gt_index)
    pi = list(range(len(pred)) if pred_index is None else pred_index)
    # every outline in one array operation (a dense scene has thousands)
    g_out = closed_outlines(np.asarray(gt, dtype=float)[gi], oriented) if gi else []
    p_out = closed_outlines(np.asarray(pred, dtype=float)[pi], oriented) if pi else []
    items = []
    for i, outline in zip(gi, g_out, strict=True):
        label = f"GT IoU {giou[i]:.2f}" if giou[i] is not None else "GT missed"
        items.append({"role": "GT", "status": gs[i], "outline": outline,
                      "label": label + (" · difficult" if hard[i] else ""),
                      "colour": STATUS_COLOURS[gs[i]], "difficult": bool(hard[i]),
                      "suppressed": False})
    for i, outline in zip(pi, p_out, strict=True):
        parts = []
        if i < len(scores) and not np.isnan(scores[i]):
            parts.append(f"score {scores[i]:.2f}")
        parts.append(f"IoU {piou[i]:.2f}" if piou[i] is not None else "FP")
        gone = i in suppressed
        if gone:
            parts.append(SUPPRESSED_NAME)
        items.append({"role": "pred", "status": ps[i], "outline": outline,
                      "label": " · ".join(parts),
                      "colour": SUPPRESSED if gone else STATUS_COLOURS[ps[i]],
                      "difficult": False, "suppressed": gone})
    return items


def difficult_flags(sample: Sample, n_gt: int) -> npt.NDArray[np.bool_]:
    """DOTA's difficult flag of each of the ``n_gt`` GT boxes (all ``False`` when the
    annotation has none: ``gt_difficult`` is parallel to the boxes or empty)."""
    flags = np.asarray(sample.gt_difficult, dtype=bool)
    return flags if flags.size == n_gt else np.zeros(n_gt, dtype=bool)


@dataclass(frozen=True)
class ShownBox:
    """One box outline to draw: ``item`` of :func:`box_groups`, its modality ``tag``
    (``HBB`` / ``OBB``), and its ``label`` text placed at ``anchor`` (original pixels; HBB
    labels above the box, OBB labels below, so the two do not collide); unlabelled:
    ``label`` ``None`` and ``anchor`` NaN."""

    item: dict[str, Any]
    tag: str
    oriented: bool
    label: str | None
    anchor: tuple[float, float]


def shown_boxes(sample: Sample, row: dict[str, Any], layers: Collection[str] = LAYERS,
                labels: bool = True, view: Region | None = None,
                suppressed: Suppressed | None = None) -> list[ShownBox]:
    """The boxes of the shown ``layers``, GT before predictions per modality, labelled (up
    to ``MAX_LABELS``; GT boxes only in scenes of at most ``MAX_GT_LABELS_BOXES``) when
    ``labels``.

    ``view`` (original pixels): only the boxes whose envelope meets it, and the labelled
    ones (the same boxes are labelled with or without a ``view``); ``suppressed``: the
    predicted boxes NMS-AP removed (:data:`Suppressed`), drawn as such."""
    out = []
    written = 0
    for key, oriented, tag in (("bbox", False, "HBB"), ("oriented_bbox", True, "OBB")):
        geoms = _geoms(sample, oriented)[:2]
        label_gt = len(geoms[0]) + len(geoms[1]) <= MAX_GT_LABELS_BOXES
        picked, labelled = [], []
        for role, found, layer in (("GT", geoms[0], f"GT {tag}"),
                                   ("pred", geoms[1], f"predicted {tag}")):
            n = len(found) if layer in layers else 0
            first = 0
            if labels and (label_gt or role == "pred"):
                first = max(0, min(n, MAX_LABELS - written))
                written += first
            index = np.arange(n)
            if view is not None and n:
                index = np.flatnonzero(touching(envelopes(found, oriented), view)
                                       | (index < first))
            picked.append(index.tolist())
            labelled.append(first)
        items = box_groups(sample, row.get(key), oriented, *picked,
                           suppressed=(suppressed or {}).get(key, frozenset()))
        ranks = [(0, i) for i in picked[0]] + [(1, i) for i in picked[1]]
        for item, (side, i) in zip(items, ranks, strict=True):
            label, anchor = None, (math.nan, math.nan)
            if i < labelled[side]:
                xy = item["outline"]
                corner = xy[:-1][(np.argmax if oriented else np.argmin)(xy[:-1, 1])]
                label, anchor = f"{tag} {item['label']}", (float(corner[0]), float(corner[1]))
            out.append(ShownBox(item, tag, oriented, label, anchor))
    return out


def box_outlines(sample: Sample, row: dict[str, Any]
                 ) -> list[tuple[npt.NDArray[np.float64], str]]:
    """``(outline (5, 2), colour)`` of every box of the evaluated modalities (HBB, then
    OBB; GT before predictions), without labels: what a thumbnail of the whole image
    draws, built in a few array operations for a scene of thousands of boxes."""
    out: list[tuple[npt.NDArray[np.float64], str]] = []
    for key, oriented in (("bbox", False), ("oriented_bbox", True)):
        if not row.get(key):
            continue
        gt, pred, _ = _geoms(sample, oriented)
        gs, ps, _, _ = match_status(len(gt), len(pred), row[key]["matches"])
        for geoms, status in ((gt, gs), (pred, ps)):
            out += zip(closed_outlines(geoms, oriented), [STATUS_COLOURS[s] for s in status],
                       strict=True)
    return out


def closed_outlines(geoms: Any, oriented: bool) -> npt.NDArray[np.float64]:
    """Closed outlines ``(N, 5, 2)`` of ``N`` xyxy boxes or ``(N, 4, 2)`` oriented boxes
    (the first corner repeated last)."""
    if oriented:
        pts = np.asarray(geoms, dtype=float).reshape(-1, 4, 2)
    else:
        b = np.asarray(geoms, dtype=float).reshape(-1, 4)
        pts = np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1)
    return np.concatenate([pts, pts[:, :1]], axis=1)


def _image_uri(rgb: RGB8) -> str:
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def overlay_figure(image: DisplayImage, sample: Sample, row: dict[str, Any],
                   layers: Collection[str] = LAYERS, opacity: float = 0.45,
                   pixel_mode: bool = False, region: Region | None = None,
                   height: int = 560, detail: DetailImage | None = None,
                   labels: bool = True, suppressed: Suppressed | None = None) -> go.Figure:
    """A zoomable plotly figure of the query: image + masks raster, box outlines on top.

    Args:
        image: the display image (or blank canvas) of the query's annotation.
        sample: the query's geometry.
        row: the query's per-sample result row (``bbox`` / ``oriented_bbox`` entries
            give the matches).
        layers: names from ``LAYERS`` to show.
        region: initial view in original pixels (default: the whole image).
        detail: a full-resolution window (:func:`~.images.detail_crop`) drawn over the
            downscaled image, so that zooming in shows real pixels there.
        labels: write IoU / score labels beside the boxes (up to ``MAX_LABELS``); without,
            they are in each outline's hover text only, and no label hides an object.
        suppressed: the predicted boxes NMS-AP removed (:data:`Suppressed`): grey, dotted,
            a legend entry of their own.
    """
    fig = go.Figure()
    decoded = decode_masks(sample)
    raster = compose(image, sample, layers, opacity, pixel_mode, decoded)
    step = 1.0 / image.scale
    fig.add_trace(go.Image(source=_image_uri(raster), x0=step / 2, y0=step / 2, dx=step, dy=step,
                           hoverinfo="skip", name="image"))
    if detail is not None:
        fig.add_trace(go.Image(source=_image_uri(compose_detail(detail, sample, layers, opacity,
                                                                pixel_mode, decoded)),
                               x0=detail.left + 0.5 / detail.scale,
                               y0=detail.top + 0.5 / detail.scale,
                               dx=1 / detail.scale, dy=1 / detail.scale,
                               hoverinfo="skip", name="full resolution"))
    for name in (("TP pixels", "FP pixels", "FN pixels") if pixel_mode else
                 [n for n in ("GT mask", "predicted mask") if n in layers]):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                 marker={"symbol": "square", "size": 12,
                                         "color": f"rgb{MASK_COLOURS[name]}"}))
    # One trace per (role, modality, status), outlines separated by gaps: a 200-box scene
    # is a handful of traces for plotly to draw, not hundreds. Every vertex carries its
    # box's hover text.
    groups: dict[tuple[str, str, str, bool, bool], dict[str, list[Any]]] = {}
    notes: list[dict[str, Any]] = []
    gap = np.full((1, 2), np.nan)
    for box in shown_boxes(sample, row, layers, labels, suppressed=suppressed):
        item, tag, xy = box.item, box.tag, box.item["outline"]
        group = groups.setdefault((item["role"], tag, item["status"], item["difficult"],
                                   item["suppressed"]), {"xy": [], "text": []})
        hover = f"{item['role']} {tag} — {item['status']}<br>{item['label']}"
        group["xy"] += [xy, gap]
        group["text"] += [hover] * len(xy) + [""]
        if box.label is not None:
            notes.append({"x": box.anchor[0], "y": box.anchor[1], "text": box.label,
                          "showarrow": False, "yanchor": "top" if box.oriented else "bottom",
                          "xanchor": "left", "font": {"size": 10, "color": "white"},
                          "bgcolor": item["colour"], "opacity": 0.9})
    for (role, tag, status, hard, gone), group in groups.items():
        # numpy arrays, NaN between outlines (a gap in the line): plotly checks a list item
        # by item (~0.1 s for a 200-box scene) and sends an array as one binary block.
        xy = np.concatenate(group["xy"])
        fig.add_trace(go.Scatter(
            x=xy[:, 0], y=xy[:, 1], mode="lines", hoverinfo="text",
            hovertext=np.array(group["text"]),
            line={"color": SUPPRESSED if gone else STATUS_COLOURS[status],
                  "width": 2.5 if role == "GT" else 2,
                  "dash": "dot" if hard or gone else "solid" if role == "GT" else "dash"},
            name=f"{role} {tag} {status}{' difficult' if hard else ''}"
                 f"{' ' + SUPPRESSED_NAME if gone else ''}",
            legendgroup=f"{role}{tag}{status}{hard}{gone}", showlegend=False))
    for role, dash in (("GT", "solid"), ("pred", "dash")):
        for status, colour in STATUS_COLOURS.items():
            if (role, status) in (("GT", "false positive"), ("pred", "missed")):
                continue
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines",
                                     name=f"{role} box {status}",
                                     line={"color": colour, "dash": dash, "width": 2.5}))
    if any(gone for *_, gone in groups):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines",
                                 name=f"pred box {SUPPRESSED_NAME}",
                                 line={"color": SUPPRESSED, "dash": "dot", "width": 2}))
    if any(hard for *_, hard, _ in groups):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines",
                                 name="GT box difficult (DOTA)",
                                 line={"color": "#bbbbbb", "dash": "dot", "width": 2.5}))
    x0, y0, x1, y1 = region or (0.0, 0.0, float(image.width), float(image.height))
    fig.update_xaxes(range=[x0, x1], showgrid=False, zeroline=False, constrain="domain")
    fig.update_yaxes(range=[y1, y0], showgrid=False, zeroline=False, scaleanchor="x",
                     constrain="domain")
    # One assignment: each add_annotation copies every annotation before it (40 labels
    # took 2.5 s).
    fig.update_layout(annotations=notes, height=height,
                      margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      dragmode="pan", legend={"orientation": "h", "y": -0.02, "yanchor": "top"},
                      uirevision=f"{sample.sample_id}:{region}", plot_bgcolor="#202020")
    return fig


def thumbnail(image: DisplayImage, region: Region | None,
              outlines: Sequence[tuple[npt.NDArray[np.float64], str]] = (),
              max_side: int = 220) -> Image.Image:
    """A small full-image view with box ``outlines`` (``(K, 2)`` points, ``#rrggbb``)
    and the zoom ``region`` outlined in yellow (none when ``region`` is ``None``)."""
    h, w = image.rgb.shape[:2]
    factor = min(1.0, max_side / max(h, w))
    thumb = Image.fromarray(image.rgb).resize((max(1, round(w * factor)),
                                               max(1, round(h * factor))),
                                              Image.Resampling.BILINEAR)
    k = image.scale * factor
    draw = ImageDraw.Draw(thumb)
    for points, colour in outlines:
        # a flat list of coordinates: the same line, without a tuple per point
        draw.line((np.asarray(points, dtype=float) * k).ravel().tolist(), fill=colour,
                  width=2)
    if region is not None:
        x0, y0, x1, y1 = (v * k for v in region)
        draw.rectangle([x0, y0, max(x0 + 2, x1 - 1), max(y0 + 2, y1 - 1)],
                       outline=(255, 235, 0), width=2)
    return thumb


# The static view's long side in pixels: sharp in the viewer's column (about 700-1,000
# screen pixels wide) without sending more than a JPEG of about 100-250 KB.
STATIC_PX = 1024
_BACKGROUND = (32, 32, 32)


def _paste(canvas: Image.Image, rgb: RGB8, left: float, top: float, scale: float,
           region: Region, k: float) -> None:
    """Draw the pixels ``rgb`` (covering original x from ``left`` to ``left + w / scale``,
    y likewise) into ``canvas``, which shows ``region`` at ``k`` canvas pixels per
    original pixel. Enlarged by 2x or more: nearest (each image pixel a visible square)."""
    x0, y0, x1, y1 = region
    h, w = rgb.shape[:2]
    sx0, sy0 = max(x0, left), max(y0, top)
    sx1, sy1 = min(x1, left + w / scale), min(y1, top + h / scale)
    ox0, oy0 = round((sx0 - x0) * k), round((sy0 - y0) * k)
    ox1, oy1 = round((sx1 - x0) * k), round((sy1 - y0) * k)
    if ox1 <= ox0 or oy1 <= oy0:
        return
    box = ((sx0 - left) * scale, (sy0 - top) * scale, (sx1 - left) * scale,
           (sy1 - top) * scale)
    resample = Image.Resampling.NEAREST if k / scale >= 2 else Image.Resampling.BILINEAR
    canvas.paste(Image.fromarray(rgb).resize((ox1 - ox0, oy1 - oy0), resample, box=box),
                 (ox0, oy0))


DOT = 3.0  # dash length of a dotted (difficult GT) outline, picture pixels


def dashed_line(draw: ImageDraw.ImageDraw, points: npt.NDArray[np.float64], colour: str,
                width: int, dash: float = 6.0) -> None:
    """A dashed polyline through ``points`` ``(K, 2)`` (picture pixels), dashes and gaps
    about ``dash`` long (how a still picture draws a predicted outline): each edge cut into
    ``max(1, length // dash)`` equal steps, every other step drawn, from the first."""
    dashed_lines(draw, [points], [colour], width, dash)


def dashed_lines(draw: ImageDraw.ImageDraw, polylines: Any, colours: Sequence[str],
                 width: int, dash: float = 6.0) -> None:
    """:func:`dashed_line` of each polyline of ``polylines`` ``(N, K, 2)`` in
    ``colours[n]``, in order, the dashes of all of them computed in a few array
    operations (a dense view has thousands of predicted outlines)."""
    pts = np.asarray(polylines, dtype=float)
    if not pts.size:
        return
    start, end = pts[:, :-1].reshape(-1, 2), pts[:, 1:].reshape(-1, 2)
    delta = end - start
    # Python's hypot and float floor division, edge by edge: the same steps as one by one.
    steps = np.array([max(1, int(math.hypot(dx, dy) // dash)) for dx, dy in delta.tolist()])
    per_edge = (steps + 1) // 2
    edge = np.repeat(np.arange(len(steps)), per_edge)
    k = 2 * (np.arange(len(edge)) - np.repeat(np.cumsum(per_edge) - per_edge, per_edge))
    n = steps[edge]
    t0, t1 = k / n, np.minimum(1.0, (k + 1) / n)
    a, d = start[edge], delta[edge]
    segments = np.concatenate([a + d * t0[:, None], a + d * t1[:, None]], axis=1)
    owner = edge // (pts.shape[1] - 1)
    for segment, i in zip(segments.tolist(), owner.tolist(), strict=True):
        draw.line(segment, fill=colours[i], width=width)


@functools.cache
def _label_font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font at label size, loaded once (not per picture)."""
    return ImageFont.load_default(size=13)


def static_view(image: DisplayImage, sample: Sample, row: dict[str, Any],
                layers: Collection[str] = LAYERS, opacity: float = 0.45,
                pixel_mode: bool = False, region: Region | None = None,
                detail: DetailImage | None = None, labels: bool = True,
                long_side: int = STATIC_PX, suppressed: Suppressed | None = None
                ) -> Image.Image:
    """The view of ``region`` (default: the whole image) as one RGB picture, long side
    ``long_side`` pixels: what :func:`overlay_figure` opens on, drawn on the server (the
    image, the ``detail`` window's full-resolution pixels over it, the masks blended in,
    GT outlines solid and predicted ones dashed, those of ``suppressed`` grey and dotted,
    labels as ``labels`` asks), for a viewer
    that sends one JPEG per query instead of a plotly figure."""
    x0, y0, x1, y1 = region or (0.0, 0.0, float(image.width), float(image.height))
    k = long_side / max(x1 - x0, y1 - y0)
    canvas = Image.new("RGB", (max(1, round((x1 - x0) * k)), max(1, round((y1 - y0) * k))),
                       _BACKGROUND)
    view = (x0, y0, x1, y1)
    _paste(canvas, image.rgb, 0.0, 0.0, image.scale, view, k)
    if detail is not None:
        _paste(canvas, detail.rgb, detail.left, detail.top, detail.scale, view, k)
    # The masks are blended on the picture's own pixel grid, from the full-resolution
    # masks: sharp edges at any zoom, and no whole-image blend per query.
    grid = DetailImage(np.asarray(canvas), x0, y0, k)
    canvas = Image.fromarray(compose_detail(grid, sample, layers, opacity, pixel_mode))
    draw = ImageDraw.Draw(canvas)
    # Only the boxes that can touch the picture (a line 3 px wide reaches 2 px beyond its
    # box): a 96-px view of a 4,000-box scene draws a few dozen, not 500,000 dashes.
    pad = 4 / k
    boxes = shown_boxes(sample, row, layers, labels, (x0 - pad, y0 - pad, x1 + pad, y1 + pad),
                        suppressed)
    dashed: list[ShownBox] = []  # consecutive predictions, drawn together in order
    for box in [*boxes, None]:
        if box is not None and box.item["role"] != "GT" and not box.item["suppressed"]:
            dashed.append(box)
            continue
        if dashed:
            dashed_lines(draw, [(b.item["outline"] - (x0, y0)) * k for b in dashed],
                         [b.item["colour"] for b in dashed], 2)
            dashed = []
        if box is not None and box.item["difficult"]:  # dotted: short dashes, GT's width
            dashed_line(draw, (box.item["outline"] - (x0, y0)) * k, box.item["colour"], 3,
                        DOT)
        elif box is not None and box.item["suppressed"]:  # dotted, GT's width: it is faint
            dashed_line(draw, (box.item["outline"] - (x0, y0)) * k, box.item["colour"], 3,
                        DOT)
        elif box is not None:
            xy = (box.item["outline"] - (x0, y0)) * k
            draw.line(xy.ravel().tolist(), fill=box.item["colour"], width=3, joint="curve")
    for box in boxes:
        if box.label is None:
            continue
        font = _label_font()
        x, y = (box.anchor[0] - x0) * k, (box.anchor[1] - y0) * k
        left, top, right, bottom = draw.textbbox((x, y), box.label, font=font,
                                                 anchor="la" if box.oriented else "ld")
        draw.rectangle([left - 2, top - 2, right + 2, bottom + 2], fill=box.item["colour"])
        draw.text((x, y), box.label, font=font, fill="white",
                  anchor="la" if box.oriented else "ld")
    return canvas
