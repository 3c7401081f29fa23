"""A chip's picture with one object of its scene outlined (the explorer's chip link)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw

from ..convert.chips import Chip
from .images import DisplayImage


def chip_picture(shown: DisplayImage, chip: Chip, outline: npt.NDArray[np.float64],
                 colour: str, width: int = 3) -> npt.NDArray[np.uint8]:
    """``shown`` (the chip image's display) with ``outline`` ``(K, 2)``, in scene pixels,
    drawn where it lies in the chip: scene pixels minus the chip's corner, times the chip
    image's pixels per scene pixel (its rate), times the display's scale."""
    x0, y0, x1, y1 = chip.box
    per_scene = np.array([shown.width / (x1 - x0), shown.height / (y1 - y0)])
    points = (np.asarray(outline, dtype=np.float64) - (x0, y0)) * per_scene * shown.scale
    picture = Image.fromarray(shown.rgb)
    ImageDraw.Draw(picture).line([tuple(p) for p in points.tolist()], fill=colour,
                                 width=width)
    return np.asarray(picture)
