"""Safe image loading for display: path confinement, decode caps, 8-bit RGB stretching.

Images are read with Pillow. Anything that is not plain 8-bit RGB is converted
for display: more than 8 bits (``I;16``, ``I``, ``F``) or floats are stretched
per band between the 2nd and 98th percentiles; grey becomes RGB; four or more
bands keep the first three. Failures never raise: :func:`load_display_image`
returns a blank canvas of the annotation's size and a notice saying why.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from PIL import Image

MAX_DECODE_PIXELS = 100_000_000
DISPLAY_MAX_SIDE = 2048
BLANK_GREY = 40
Image.MAX_IMAGE_PIXELS = MAX_DECODE_PIXELS

RGB8 = npt.NDArray[np.uint8]


class ImagePathError(ValueError):
    """An image path that points outside the images folder (or is not a relative path)."""


@dataclass(frozen=True)
class DisplayImage:
    """An image ready to draw on.

    ``rgb`` is ``(h, w, 3)`` uint8 covering the whole original image at ``scale``
    display pixels per original pixel (``scale <= 1``); ``notice`` is ``None``
    when the file was read, else why the canvas is blank.
    """

    rgb: RGB8
    scale: float
    width: int
    height: int
    notice: str | None = None


def resolve_image_path(images_root: str | Path, relative: str) -> Path:
    """Resolve ``relative`` inside ``images_root``; reject escapes.

    Raises:
        ImagePathError: for an absolute path, a ``..`` component, or a path that
            (through symlinks) resolves outside the folder.
    """
    parts = relative.replace("\\", "/").split("/")
    if not relative or Path(relative).is_absolute() or relative.startswith(("/", "\\")) \
            or (len(relative) > 1 and relative[1] == ":"):
        raise ImagePathError(f"image path {relative!r} is not a relative path")
    if ".." in parts:
        raise ImagePathError(f"image path {relative!r} leaves the images folder ('..')")
    rel = Path(*[p for p in parts if p])
    root = Path(images_root).resolve()
    target = (root / rel).resolve()
    if not target.is_relative_to(root):
        raise ImagePathError(f"image path {relative!r} resolves outside the images folder")
    return target


def stretch_to_rgb8(array: npt.NDArray[np.generic]) -> RGB8:
    """Convert an ``(H, W)`` or ``(H, W, B)`` array of any dtype to ``(H, W, 3)`` uint8.

    uint8 data is kept as is; other dtypes are stretched per band so the 2nd
    percentile maps to 0 and the 98th to 255 (a constant band becomes 0). One
    band is repeated to grey RGB; two bands use the first as grey; four or more
    keep the first three.
    """
    arr = np.asarray(array)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] == 0:
        raise ValueError(f"image array must be (H, W) or (H, W, B), got {arr.shape}")
    bands = arr[:, :, :3] if arr.shape[2] >= 3 else arr[:, :, :1]
    if bands.dtype != np.uint8:
        bands = np.stack([_stretch_band(bands[:, :, b]) for b in range(bands.shape[2])], axis=2)
    if bands.shape[2] == 1:
        bands = np.repeat(bands, 3, axis=2)
    return np.ascontiguousarray(bands, dtype=np.uint8)


def _stretch_band(band: npt.NDArray[np.generic]) -> RGB8:
    values = band.astype(np.float64)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return np.zeros(band.shape, dtype=np.uint8)
    low, high = np.percentile(finite, [2, 98])
    if high <= low:
        return np.zeros(band.shape, dtype=np.uint8)
    scaled = (np.nan_to_num(values, nan=low) - low) / (high - low)
    return (np.clip(scaled, 0, 1) * 255 + 0.5).astype(np.uint8)


def read_rgb8(path: str | Path, max_side: int = DISPLAY_MAX_SIDE) -> tuple[RGB8, float]:
    """Decode an image file to 8-bit RGB, downscaled so its longer side is <= ``max_side``.

    Returns ``(rgb, scale)``. Raises ``OSError``/``ValueError`` (incl. Pillow's
    ``DecompressionBombError``) for unreadable or too large files.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with Image.open(path) as img:
            w, h = img.size
            if w * h > MAX_DECODE_PIXELS:
                raise ValueError(f"{w} x {h} pixels exceeds the {MAX_DECODE_PIXELS:,} cap")
            scale = min(1.0, max_side / max(w, h))
            if img.format == "JPEG" and scale < 1:
                img.draft("RGB", (max(1, int(w * scale)), max(1, int(h * scale))))
            img.load()
            if img.mode in ("P", "PA", "LA", "RGBA", "CMYK", "YCbCr", "1"):
                img = img.convert("RGB")
            rgb = stretch_to_rgb8(np.asarray(img))
    if scale < 1:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        rgb = np.asarray(Image.fromarray(rgb).resize(size, Image.Resampling.BILINEAR))
        scale = size[0] / w
    return rgb, scale


def blank_canvas(width: int, height: int, max_side: int = DISPLAY_MAX_SIDE) -> tuple[RGB8, float]:
    """A dark grey canvas for an image of ``width`` x ``height``, downscaled like images."""
    scale = min(1.0, max_side / max(width, height, 1))
    size = (max(1, round(height * scale)), max(1, round(width * scale)), 3)
    return np.full(size, BLANK_GREY, dtype=np.uint8), scale


def load_display_image(images_root: str | Path, relative: str, width: int, height: int,
                       max_side: int = DISPLAY_MAX_SIDE) -> DisplayImage:
    """Load an annotation's image for display, or a blank canvas with a notice.

    ``width``/``height`` are the annotation's; they size the blank canvas and
    are the coordinate frame of all geometry (an image of another size is
    resampled to it, with a notice).
    """
    try:
        path = resolve_image_path(images_root, relative)
        if not path.is_file():
            raise FileNotFoundError(f"image file not found: {relative} (in {images_root})")
        rgb, _ = read_rgb8(path, max_side)
    except (ImagePathError, FileNotFoundError) as err:
        return _blank(width, height, max_side, str(err))
    except (OSError, ValueError, Image.DecompressionBombError,
            Image.DecompressionBombWarning) as err:
        return _blank(width, height, max_side, f"image {relative} could not be read: {err}")
    notice = None
    target, scale = blank_canvas(width, height, max_side)
    if rgb.shape[:2] != target.shape[:2]:
        if abs(rgb.shape[1] / rgb.shape[0] - width / height) > 0.01:
            notice = (f"image {relative} is not {width} x {height} as the annotation says; "
                      "it is stretched to that size")
        rgb = np.asarray(Image.fromarray(rgb).resize((target.shape[1], target.shape[0]),
                                                     Image.Resampling.BILINEAR))
    return DisplayImage(rgb, scale, width, height, notice)


def _blank(width: int, height: int, max_side: int, notice: str) -> DisplayImage:
    rgb, scale = blank_canvas(width, height, max_side)
    return DisplayImage(rgb, scale, width, height, notice + " — overlays are drawn on a blank "
                        f"{width} x {height} canvas")
