"""The picture of one audit suspect (issue 36): the ground truth beside the consensus.

Two panels of the same window of the image, side by side: on the left the label as it is
(the GT box, green; none for a missing label), on the right every submission's vote (thin,
brighter the more confident) and the consensus box (orange, thick). Boxes are the
suspect's ``[x, y, w, h]`` in original pixels. No Streamlit here: the page shows the array.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw

RGB8 = npt.NDArray[np.uint8]
GT_COLOUR = (40, 200, 90)
CONSENSUS_COLOUR = (255, 140, 0)
VOTE_COLOUR = (80, 170, 255)
BLANK = (90, 90, 90)
GAP = 8


def _boxes(suspect: Mapping[str, Any]) -> list[list[float]]:
    out = [b for b in (suspect.get("bbox"), suspect.get("gt_bbox")) if b]
    return out + [v["bbox"] for v in suspect.get("votes", [])]


def window(suspect: Mapping[str, Any], pad: float = 1.0, least: float = 48.0
           ) -> tuple[float, float, float, float]:
    """``(left, top, right, bottom)`` around the suspect's boxes (its box, the GT box, the
    votes), grown by ``pad`` times their extent on each side, at least ``least`` px wide
    and high, inside the image (``width`` x ``height`` of the suspect)."""
    boxes = np.array(_boxes(suspect), dtype=float).reshape(-1, 4)
    x0, y0 = boxes[:, 0].min(), boxes[:, 1].min()
    x1, y1 = (boxes[:, 0] + boxes[:, 2]).max(), (boxes[:, 1] + boxes[:, 3]).max()
    w, h = max(x1 - x0, least / (1 + 2 * pad)), max(y1 - y0, least / (1 + 2 * pad))
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half_w, half_h = w * (0.5 + pad), h * (0.5 + pad)
    width, height = float(suspect["width"]), float(suspect["height"])
    return (max(0.0, cx - half_w), max(0.0, cy - half_h), min(width, cx + half_w),
            min(height, cy + half_h))


def suspect_picture(suspect: Mapping[str, Any], crop: RGB8 | None,
                    region: tuple[float, float, float, float], side: int = 280) -> RGB8:
    """The two panels ``(h, 2 * side + GAP, 3)``: ``crop`` is the image's pixels of
    ``region`` (any resolution; ``None``: a grey canvas, the image unreadable)."""
    left, top, right, bottom = region
    w, h = max(right - left, 1.0), max(bottom - top, 1.0)
    scale = side / max(w, h)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    base = (Image.fromarray(crop).convert("RGB").resize(size) if crop is not None
            else Image.new("RGB", size, BLANK))

    def rect(draw: ImageDraw.ImageDraw, b: list[float], colour: tuple[int, ...],
             width: int) -> None:
        x, y, bw, bh = b
        draw.rectangle([(x - left) * scale, (y - top) * scale, (x + bw - left) * scale,
                        (y + bh - top) * scale], outline=colour, width=width)

    label, consensus = base.copy(), base.copy()
    gt_box = suspect.get("gt_bbox") or (suspect.get("bbox") if suspect["kind"] == "spurious"
                                        else None)
    if gt_box:
        rect(ImageDraw.Draw(label), gt_box, GT_COLOUR, 3)
    draw = ImageDraw.Draw(consensus)
    for v in suspect.get("votes", []):
        c = float(v.get("confidence") or 0.0)
        tone = tuple(int(k * (0.4 + 0.6 * c)) for k in VOTE_COLOUR)
        rect(draw, v["bbox"], tone, 1)
    if suspect["kind"] != "spurious" and suspect.get("bbox"):
        rect(draw, suspect["bbox"], CONSENSUS_COLOUR, 3)
    out = Image.new("RGB", (2 * size[0] + GAP, size[1]), (255, 255, 255))
    out.paste(label, (0, 0))
    out.paste(consensus, (size[0] + GAP, 0))
    return np.asarray(out)
