"""Safe image loading for display: path confinement, decode caps, 8-bit RGB stretching.

Images are read with Pillow. Anything that is not plain 8-bit RGB is converted
for display: more than 8 bits (``I;16``, ``I``, ``F``) or floats are stretched
per band between the 2nd and 98th percentiles; grey becomes RGB; four or more
bands keep the first three. Failures never raise: :func:`load_display_image`
returns a blank canvas of the annotation's size and a notice saying why.

Images larger than ``DISPLAY_MAX_SIDE`` are drawn downscaled; so that zooming
onto a small object still shows its real pixels, :func:`detail_crop` cuts a
full-resolution window around the view from :func:`load_source_rgb`.

TIFFs (GeoTIFF, COG, tiled or striped, any number of bands and any depth) are read with
rasterio by window, never whole (:class:`_RasterSource`). Up to ``MAX_DECODE_PIXELS`` the
display is exactly the one of a whole-image conversion; beyond it (a 20,000 x 20,000
scene) the display image is read at display size through the file's overviews (a TIFF that
has no level within the cap is refused for the whole view, as Pillow refuses a large PNG,
but its windows are read), and a band's stretch percentiles come from a nearest-neighbour
sample of at most ``LIMITS_SAMPLE_SIDE`` a side. Only GDAL's TIFF driver is allowed (a
virtual raster named ``.tif`` could point anywhere), and GDAL writes no sidecar file.

Memory: beyond Pillow's decoded image at the file's own depth (PNG and TIFF decode whole;
2 bytes a pixel for 16 bits), the stretch, the reduction and a window's RGB run strip by
strip (:class:`_Pixels`), so a 10,000 x 10,000 16-bit image is displayed without any
full-resolution RGB or float copy.

A budget per read bounds what a small file can make a reader decode (issue 35): before any
pixel is read, :func:`check_read_budget` refuses (:class:`ReadBudgetError`, naming the file,
its layout and the budget) a TIFF whose one block, the unit GDAL inflates whole (a tile, or
a strip of rows; with every band when the file is pixel-interleaved), holds more than
``READ_BUDGET_BYTES`` (bands x block size x dtype: an 80 x 64 image stored as one 32,768^2
tile is 1 GiB, 128^2 tiles of 65,535 bands 1 GiB each), and any image whose one row of
display work (a strip is never less than a whole row, ``WORK_BYTES_PER_PIXEL`` a pixel)
exceeds it (a 10^8 x 1 TIFF: 5 GB).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import rasterio
from PIL import Image
from rasterio.enums import ColorInterp, Resampling
from rasterio.windows import Window

from ..files import open_input, size_text
from ..georef import is_tiff, open_raster
from ..image_paths import ImagePathError, resolve_image_path

MAX_DECODE_PIXELS = 100_000_000
# No image within the pixel cap needs more (four 64-bit bands); the input cap of JSON files
# (200 MB) would refuse large multi-band GeoTIFFs.
MAX_IMAGE_BYTES = 4 * 1024 ** 3
DISPLAY_MAX_SIDE = 2048
# A full-resolution window is cut only up to this size (larger views are zoomed out enough
# for the downscaled image, and a bigger window would slow every page that shows it).
DETAIL_MAX_PIXELS = 1_500_000
# Larger images are never held at full resolution by the app: their display image is
# decoded reduced and a detail window is read from the file (bounded memory, issue 17).
SOURCE_MAX_PIXELS = 30_000_000
BLANK_GREY = 40
# Over the pixel cap, a band's stretch percentiles are taken on a sample of this side.
LIMITS_SAMPLE_SIDE = 1024
Image.MAX_IMAGE_PIXELS = MAX_DECODE_PIXELS
# What one block of a TIFF may decode (GDAL inflates a block whole, beside its 64 MB block
# cache): a tiled 512 x 512 RGB block is 0.75 MB, GDAL's own strips a few kB; 256 MiB still
# takes a 9,000 x 9,000 RGB scene written as one strip, and refuses the 1 GiB blocks of
# issue 35's hostile files.
READ_BUDGET_BYTES = 256 * 1024 ** 2
# What one row of display work may take (a strip is never less than a row): 1,342,177
# pixels wide at WORK_BYTES_PER_PIXEL.
ROW_BUDGET_BYTES = 64 * 1024 ** 2
# The display's work per pixel of a strip: the read window, the float stretch temporaries,
# the RGB (the strips of :class:`_Pixels` hold about _STRIP_PIXELS pixels, never < one row).
WORK_BYTES_PER_PIXEL = 50

RGB8 = npt.NDArray[np.uint8]


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


@dataclass(frozen=True)
class DetailImage:
    """Pixels of a window of the image: ``rgb`` ``(h, w, 3)`` uint8 at ``scale`` pixels per
    original pixel, whose top-left corner is at original ``(left, top)``; pixel ``(r, c)``
    covers original ``x`` from ``left + c / scale`` to ``left + (c + 1) / scale``."""

    rgb: RGB8
    left: float
    top: float
    scale: float = 1.0


@contextmanager
def _open_image(path: str | Path) -> Iterator[Image.Image]:
    """Pillow's lazy image of a regular file. A named pipe or device in the images folder
    would block the decode forever: it is refused (``InputRefused``, a ``ValueError``)
    without waiting, like any unreadable file."""
    with open_input(path, MAX_IMAGE_BYTES) as handle, Image.open(handle) as img:
        yield img


def stretch_to_rgb8(array: npt.NDArray[np.generic],
                    limits: list[tuple[float, float] | None] | None = None) -> RGB8:
    """Convert an ``(H, W)`` or ``(H, W, B)`` array of any dtype to ``(H, W, 3)`` uint8.

    uint8 data is kept as is; other dtypes are stretched per band so the 2nd
    percentile maps to 0 and the 98th to 255 (a constant band becomes 0). One
    band is repeated to grey RGB; two bands use the first as grey; four or more
    keep the first three. ``limits``: the kept bands' ``(2nd, 98th)`` percentiles (``None``
    for a band without finite values) when ``array`` is a window of a larger image.
    """
    arr = np.asarray(array)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] == 0:
        raise ValueError(f"image array must be (H, W) or (H, W, B), got {arr.shape}")
    bands = _kept_bands(arr)
    if bands.dtype != np.uint8:
        bands = np.stack([_stretch_band(bands[:, :, b], _band_limits(bands[:, :, b])
                                        if limits is None else limits[b])
                          for b in range(bands.shape[2])], axis=2)
    if bands.shape[2] == 1:
        bands = np.repeat(bands, 3, axis=2)
    return np.ascontiguousarray(bands, dtype=np.uint8)


def _kept_bands(arr: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
    return arr[:, :, :3] if arr.shape[2] >= 3 else arr[:, :, :1]


def _stretch_band(band: npt.NDArray[np.generic], limits: tuple[float, float] | None) -> RGB8:
    """``band`` mapped linearly from ``limits = (low, high)`` to 0..255 (all 0 for ``None``
    or an empty range; NaN as ``low``)."""
    if limits is None or limits[1] <= limits[0]:
        return np.zeros(band.shape, dtype=np.uint8)
    low, high = limits
    values = band.astype(np.float64)
    scaled = (np.nan_to_num(values, nan=low) - low) / (high - low)
    return (np.clip(scaled, 0, 1) * 255 + 0.5).astype(np.uint8)


def _band_limits(band: npt.NDArray[np.generic]) -> tuple[float, float] | None:
    values = band.astype(np.float64)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None
    low, high = np.percentile(finite, [2, 98])
    return float(low), float(high)


# Pixels stretched at a time (the float temporaries take some 50 bytes per pixel).
_STRIP_PIXELS = 1 << 18


def _linear_percentiles(n: int, values_at: Callable[[list[int]], list[float]]
                        ) -> tuple[float, float]:
    """numpy's default ("linear") 2nd and 98th percentiles of ``n`` values, from
    ``values_at(ranks)``, the values of those ranks (0: the smallest); the same float
    operations as ``np.percentile``, so that the stretch is the one of a whole-array call."""
    q = np.true_divide(np.array([2.0, 98.0]), 100)
    virtual = n * q + (1 + q * (1 - 1 - 1)) - 1
    below = np.floor(virtual)
    above = below + 1
    top = virtual >= n - 1
    below[top] = above[top] = n - 1
    ranks = [int(k) for k in (*below, *above)]
    found = values_at(ranks)
    a, b = np.array(found[:2], dtype=np.float64), np.array(found[2:], dtype=np.float64)
    t = virtual - below
    diff = b - a
    out = np.add(a, diff * t)
    np.subtract(b, diff * (1 - t), out=out, where=t >= 0.5)
    return float(out[0]), float(out[1])


Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class _PillowSource:
    """A loaded Pillow image; windows are crops (palette, alpha and CMYK modes as RGB)."""

    img: Image.Image

    @property
    def size(self) -> tuple[int, int]:
        return self.img.size

    def array(self, box: Box) -> npt.NDArray[np.generic]:
        piece = self.img.crop(box)
        if piece.mode in _CONVERTED:
            piece = piece.convert("RGB")
        return np.asarray(piece)


class _RasterSource:
    """An open rasterio dataset; windows are read from the file (the first three bands, or
    the first alone for one or two), ``(h, w)`` or ``(h, w, 3)`` at the file's dtype."""

    def __init__(self, dataset: rasterio.io.DatasetReader):
        self.dataset = dataset
        self.size = (dataset.width, dataset.height)
        self.indexes = self.bands(dataset)

    @staticmethod
    def bands(dataset: rasterio.io.DatasetReader) -> list[int]:
        """The bands read: the first three, or the first alone for one or two."""
        return [1, 2, 3] if dataset.count >= 3 else [1]

    def check_overviews(self) -> None:
        """Raise ``ValueError`` unless the file has a level (itself or an overview) within
        the pixel cap: reading the whole image reduced costs a decode of that level."""
        w, h = self.size
        factors = self.dataset.overviews(1)
        coarsest = max(factors, default=1)
        if (w // coarsest) * (h // coarsest) > MAX_DECODE_PIXELS:
            raise ValueError(f"{w} x {h} pixels exceeds the {MAX_DECODE_PIXELS:,} cap and the "
                             f"file has no overview within it (overview factors: "
                             f"{factors or 'none'}); add overviews (a Cloud Optimized "
                             "GeoTIFF has them)")

    def array(self, box: Box, out_size: tuple[int, int] | None = None,
              resampling: Resampling = Resampling.average) -> npt.NDArray[np.generic]:
        """The window ``box`` at full resolution, or resampled to ``out_size = (columns,
        rows)`` (GDAL reads the overview level nearest above that resolution)."""
        left, top, right, bottom = box
        shape = None if out_size is None else (len(self.indexes), out_size[1], out_size[0])
        data = self.dataset.read(self.indexes, window=Window(left, top, right - left,
                                                             bottom - top),
                                 out_shape=shape, resampling=resampling)
        return data[0] if len(self.indexes) == 1 else np.moveaxis(data, 0, -1)


class _Pixels:
    """An image source turned into 8-bit RGB window by window with the stretch of the
    whole image (:func:`stretch_to_rgb8`'s percentiles, computed strip by strip: a
    histogram for integers of up to 16 bits, two counting passes for 32-bit values, else
    the finite values copied at their own dtype). ``sampled``: a raster over the pixel cap,
    whose percentiles are those of a sample read through its overviews instead."""

    def __init__(self, source: _PillowSource | _RasterSource, sampled: bool = False):
        self.source = source
        self.sampled = sampled
        self.width, self.height = source.size
        w = max(1, self.width)
        self.rows = max(1, _STRIP_PIXELS // w)
        probe = self._array((0, 0, min(1, self.width), min(1, self.height)))
        self.limits: list[tuple[float, float] | None] | None = None
        if probe.dtype != np.uint8:
            bands = _kept_bands(probe if probe.ndim == 3 else probe[:, :, None]).shape[2]
            if sampled:
                sample = self._sample()
                self.limits = [_band_limits(sample[:, :, b]) for b in range(bands)]
            else:
                self.limits = [self._limits(b, probe.dtype) for b in range(bands)]

    def _array(self, box: Box) -> npt.NDArray[np.generic]:
        return self.source.array(box)

    def _raster(self) -> _RasterSource:
        """The source, when it is a raster (the only kind read reduced by the file)."""
        if not isinstance(self.source, _RasterSource):
            raise ValueError("only a raster source is read reduced from its file")
        return self.source

    def _sample(self) -> npt.NDArray[np.generic]:
        """``(h, w, B)``: every band read nearest-neighbour at most ``LIMITS_SAMPLE_SIDE``
        a side (from the overviews when the file has them)."""
        raster = self._raster()
        raster.check_overviews()
        scale = min(1.0, LIMITS_SAMPLE_SIDE / max(self.width, self.height))
        size = (max(1, round(self.width * scale)), max(1, round(self.height * scale)))
        arr = raster.array((0, 0, self.width, self.height), size, Resampling.nearest)
        return arr if arr.ndim == 3 else arr[:, :, None]

    def _band_strips(self, band: int) -> Iterator[npt.NDArray[np.generic]]:
        for top in range(0, self.height, self.rows):
            arr = self._array((0, top, self.width, min(self.height, top + self.rows)))
            yield (arr if arr.ndim == 3 else arr[:, :, None])[:, :, band].ravel()

    def _limits(self, band: int, dtype: np.dtype) -> tuple[float, float] | None:
        if dtype.kind in "ui" and dtype.itemsize <= 2:
            offset = int(np.iinfo(dtype).min)
            counts = np.zeros(1 << (8 * dtype.itemsize), dtype=np.int64)
            for strip in self._band_strips(band):
                counts += np.bincount(strip.astype(np.int64) - offset, minlength=counts.size)
            if not counts.any():
                return None
            ends = np.cumsum(counts)
            return _linear_percentiles(int(ends[-1]), lambda ks: (
                np.searchsorted(ends, ks, side="right") + offset).tolist())
        if dtype.itemsize == 4:
            return self._radix_limits(band, dtype)
        values = np.empty(self.width * self.height, dtype=dtype)
        n = 0
        for strip in self._band_strips(band):
            finite = strip[np.isfinite(strip)] if dtype.kind == "f" else strip
            values[n:n + finite.size] = finite
            n += finite.size
        if n == 0:
            return None
        values = values[:n]

        def values_at(ks: list[int]) -> list[float]:
            values.partition(ks)  # in place: the buffer is this function's own
            return [float(values[k]) for k in ks]

        return _linear_percentiles(n, values_at)

    def _radix_limits(self, band: int, dtype: np.dtype) -> tuple[float, float] | None:
        """Percentiles of 32-bit values in two counting passes (no copy of the band): the
        values as order-preserving 32-bit keys, counted by their high 16 bits, then, in the
        bins holding the wanted ranks, by their low 16 bits."""
        sign = np.uint32(1 << 31)
        dtype = dtype.newbyteorder("=")

        def keys() -> Iterator[npt.NDArray[np.uint32]]:
            for raw in self._band_strips(band):
                strip = np.ascontiguousarray(raw, dtype=dtype)
                if dtype.kind == "f":
                    bits = strip[np.isfinite(strip)].view(np.uint32)
                    yield np.where(bits & sign, ~bits, bits | sign)
                else:
                    yield strip.view(np.uint32) ^ sign if dtype.kind == "i" else strip.view(
                        np.uint32)

        high = np.zeros(1 << 16, dtype=np.int64)
        for key in keys():
            high += np.bincount(key >> 16, minlength=high.size)
        n = int(high.sum())
        if n == 0:
            return None
        high_ends = np.cumsum(high)

        def values_at(ks: list[int]) -> list[float]:
            bins = np.searchsorted(high_ends, ks, side="right").tolist()
            low = {b: np.zeros(1 << 16, dtype=np.int64) for b in bins}
            for key in keys():
                top = key >> 16
                for b, counts in low.items():
                    counts += np.bincount(key[top == b] & 0xFFFF, minlength=counts.size)
            out = []
            for k, b in zip(ks, bins, strict=True):
                rank = k - (int(high_ends[b - 1]) if b else 0)
                found = np.uint32((b << 16) | int(np.searchsorted(np.cumsum(low[b]), rank,
                                                                  side="right")))
                if dtype.kind == "f":
                    found = found ^ sign if found & sign else ~found
                elif dtype.kind == "i":
                    found = found ^ sign
                out.append(float(np.array([found], dtype=np.uint32).view(dtype)[0]))
            return out

        return _linear_percentiles(n, values_at)

    def rgb(self, box: tuple[int, int, int, int] | None = None) -> RGB8:
        """8-bit RGB of the window ``box = (left, top, right, bottom)`` (default: all)."""
        left, top, right, bottom = box or (0, 0, self.width, self.height)
        out = np.empty((bottom - top, right - left, 3), dtype=np.uint8)
        for y in range(top, bottom, self.rows):
            end = min(bottom, y + self.rows)
            out[y - top:end - top] = stretch_to_rgb8(self._array((left, y, right, end)),
                                                     self.limits)
        return out

    def window(self, box: Box, size: tuple[int, int]) -> RGB8:
        """8-bit RGB of ``box`` resampled (averaged) to ``size = (columns, rows)``, read at
        that size from a raster source (its overviews), strip by strip."""
        raster = self._raster()
        left, top, right, bottom = box
        cols, rows = size
        out = np.empty((rows, cols, 3), dtype=np.uint8)
        step = max(1, _STRIP_PIXELS // max(1, cols))
        for r in range(0, rows, step):
            end = min(rows, r + step)
            # Strip edges in original rows: exact when the factor divides the window.
            y0 = top + (bottom - top) * r / rows
            y1 = top + (bottom - top) * end / rows
            piece = raster.array((left, y0, right, y1), (cols, end - r))
            out[r:end] = stretch_to_rgb8(piece, self.limits)
        return out

    def reduced(self, size: tuple[int, int]) -> RGB8:
        """The image resampled to ``size`` exactly as :func:`_resized` resamples
        :meth:`rgb`, without making the full-resolution RGB: Pillow's reduce (by integer
        factors, on strips of whole blocks), then its bilinear resize of the rest."""
        w, h = self.width, self.height
        if self.sampled:
            self._raster().check_overviews()
            return self.window((0, 0, w, h), size)
        fx, fy = int(w / size[0]) or 1, int(h / size[1]) or 1
        if (w, h) == size or (fx == 1 and fy == 1):
            return self.rgb() if (w, h) == size else _resized(self.rgb(), size)
        rows = fy * max(1, self.rows // fy)
        parts = [np.asarray(Image.fromarray(self.rgb((0, y, w, min(h, y + rows)))).reduce(
            (fx, fy))) for y in range(0, h, rows)]
        small = Image.fromarray(np.concatenate(parts))
        return np.asarray(small.resize(size, Image.Resampling.BILINEAR,
                                       box=(0, 0, w / fx, h / fy)))


_CONVERTED = ("P", "PA", "LA", "RGBA", "CMYK", "YCbCr", "1")


def read_rgb8(path: str | Path, max_side: int | None = DISPLAY_MAX_SIDE) -> tuple[RGB8, float]:
    """Decode an image file to 8-bit RGB, downscaled so its longer side is <= ``max_side``
    (``None``: full resolution, refused over the pixel cap).

    Beyond Pillow's decoded image at the file's own depth (2 bytes a pixel for 16 bits; none
    for a TIFF, read by window), the memory is the result and a strip of about
    ``_STRIP_PIXELS``: the stretch and the reduction run strip by strip.

    Returns ``(rgb, scale)``. Raises ``OSError``/``ValueError`` (incl. Pillow's
    ``DecompressionBombError``) for unreadable or too large files.
    """
    w, h = image_size(path)
    scale = 1.0 if max_side is None else min(1.0, max_side / max(w, h))
    with _pixels(path, scale) as (pixels, _):
        if scale >= 1:
            if pixels.sampled:
                raise ValueError(f"{w} x {h} pixels exceeds the {MAX_DECODE_PIXELS:,} cap "
                                 "for a full-resolution image")
            return pixels.rgb(), 1.0
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        return pixels.reduced(size), size[0] / w


def _resized(rgb: RGB8, size: tuple[int, int]) -> RGB8:
    """``rgb`` resampled (bilinear) to ``size = (columns, rows)``.

    ``reducing_gap=1``: large reductions first shrink by an integer factor (box filter),
    half the time of one bilinear pass over a 5200-pixel image for the same look.
    """
    return np.asarray(Image.fromarray(rgb).resize(size, Image.Resampling.BILINEAR,
                                                  reducing_gap=1.0))


def _is_palette(dataset: rasterio.io.DatasetReader) -> bool:
    return dataset.count == 1 and dataset.colorinterp[0] == ColorInterp.palette


def image_size(path: str | Path) -> tuple[int, int]:
    """``(width, height)`` of an image file, from its header."""
    if is_tiff(path):
        with open_raster(path) as dataset:
            return dataset.width, dataset.height
    with _open_image(path) as img:
        return img.size


class ReadBudgetError(ValueError):
    """An image whose one read would decode more than the budget (nothing was decoded)."""


def check_read_budget(path: str | Path, width: int, block_bytes: int, layout: str,
                      budget: int = READ_BUDGET_BYTES,
                      row_budget: int = ROW_BUDGET_BYTES) -> None:
    """Raise :class:`ReadBudgetError` when one block (``block_bytes``, as ``layout``
    describes it) exceeds ``budget`` bytes or one row of display work of a
    ``width``-pixel image exceeds ``row_budget``."""
    row = width * WORK_BYTES_PER_PIXEL
    if block_bytes <= budget and row <= row_budget:
        return
    if block_bytes > budget:
        what, limit = f"one block of {layout} is {size_text(block_bytes)}", budget
    else:
        what, limit = (f"one row of {width:,} pixels takes {size_text(row)} to display "
                       f"({WORK_BYTES_PER_PIXEL} bytes a pixel; a read is never less than a "
                       "row)"), row_budget
    raise ReadBudgetError(f"{Path(path).name}: {what}, over the budget of "
                          f"{size_text(limit)} per read, so it was not decoded (a small file "
                          "can hold a huge block; retile it, e.g. gdal_translate -co TILED=YES)")


def raster_block_bytes(dataset: rasterio.io.DatasetReader, indexes: list[int]
                       ) -> tuple[int, str]:
    """The bytes GDAL inflates for one block of the bands ``indexes`` (all bands when the
    file is pixel-interleaved: a block holds every band), and the layout in words."""
    bh, bw = max((dataset.block_shapes[i - 1] for i in indexes), key=lambda s: s[0] * s[1])
    itemsize = max(np.dtype(dataset.dtypes[i - 1]).itemsize for i in indexes)
    pixel = str(dataset.profile.get("interleave", "")).lower() == "pixel"
    bands = dataset.count if pixel and dataset.count > 1 else len(indexes)
    kind = "tile" if dataset.profile.get("tiled") else "strip"
    layout = (f"{bw:,} x {bh:,} pixels ({kind}) x {bands:,} band(s)"
              f"{' (pixel-interleaved: a block holds every band)' if pixel and bands > 1 else ''}"
              f" x {itemsize} byte(s)")
    return bh * bw * bands * itemsize, layout


@contextmanager
def _pixels(path: str | Path, scale: float) -> Iterator[tuple[_Pixels, tuple[int, int]]]:
    """The file's :class:`_Pixels` with at least ``scale`` pixels per original pixel, and
    the original ``(width, height)``: a TIFF (or a PNG over the cap) read by window,
    ``sampled`` over the pixel cap; else Pillow's decode at the file's own depth (JPEGs
    decoded reduced when that is enough)."""
    if is_tiff(path):
        with open_raster(path) as dataset:
            indexes = _RasterSource.bands(dataset)
            check_read_budget(path, dataset.width, *raster_block_bytes(dataset, indexes))
            if not _is_palette(dataset):
                sampled = dataset.width * dataset.height > MAX_DECODE_PIXELS
                yield _Pixels(_RasterSource(dataset), sampled), dataset.shape[::-1]
                return
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with _open_image(path) as img:
            w, h = img.size
            if w * h > MAX_DECODE_PIXELS:
                raise ValueError(f"{w} x {h} pixels exceeds the {MAX_DECODE_PIXELS:,} cap")
            check_read_budget(path, w, *_pillow_block_bytes(img))
            if img.format == "JPEG" and scale < 1:
                img.draft("RGB", (max(1, int(w * scale)), max(1, int(h * scale))))
            img.load()
            yield _Pixels(_PillowSource(img)), (w, h)


def _pillow_block_bytes(img: Image.Image) -> tuple[int, str]:
    """The largest decode unit of a Pillow image (``Image.tile``'s extents; a TIFF's tile or
    strip from its tags), with its bands and depth, and the layout in words."""
    w, h = img.size
    bands = len(img.getbands())
    itemsize = {"I;16": 2, "I;16B": 2, "I;16L": 2, "I": 4, "F": 4}.get(img.mode, 1)
    # A PNG, JPEG or BMP decodes whole: the pixel cap (MAX_DECODE_PIXELS, checked before)
    # bounds it, as it bounds any image, so its decode unit is not a block to budget.
    unit, kind = 0, "decoded whole (within the pixel cap)"
    tags = getattr(img, "tag_v2", None)
    if tags is not None:  # a TIFF: its tile (322 x 323) or strip (rows 278)
        tw, th, rows = tags.get(322), tags.get(323), tags.get(278)
        if tw and th:
            unit, kind = int(tw) * int(th), f"tile {int(tw):,} x {int(th):,}"
        elif rows:
            unit, kind = w * min(int(rows), 1 << 62), f"strip of {int(rows):,} rows"
    return unit * bands * itemsize, f"{w:,} x {h:,} pixels, {kind}, x {bands} band(s)"


def load_region(images_root: str | Path, relative: str, width: int, height: int,
                region: tuple[float, float, float, float], scale: float = 1.0
                ) -> DetailImage | None:
    """The window of ``region`` (original pixels) with at least ``scale`` pixels per
    original pixel: a reduced JPEG decode, or, for a TIFF over the pixel cap, a window read
    reduced (through its overviews), when that is enough; else full resolution.

    ``None`` as :func:`load_source_rgb` (unreadable, or not ``width`` x ``height``).
    """
    try:
        path = resolve_image_path(images_root, relative)
        with _pixels(path, min(1.0, scale)) as (pixels, size):
            if size != (width, height):
                return None
            if pixels.sampled and scale < 1:
                return _reduced_window(pixels, region, scale)
            s = pixels.width / width
            x0, y0, x1, y1 = region
            left, top = max(0, math.floor(x0 * s)), max(0, math.floor(y0 * s))
            right = min(pixels.width, max(left + 1, math.ceil(x1 * s)))
            bottom = min(pixels.height, max(top + 1, math.ceil(y1 * s)))
            return DetailImage(pixels.rgb((left, top, right, bottom)), left / s, top / s, s)
    except (ImagePathError, OSError, ValueError, Image.DecompressionBombError,
            Image.DecompressionBombWarning):
        return None


def _reduced_window(pixels: _Pixels, region: tuple[float, float, float, float],
                    scale: float) -> DetailImage:
    """The window of ``region`` read from a raster at ``scale`` (averaged), on whole
    original pixels: ``1 / scale``-pixel blocks from the block holding ``region``'s corner."""
    step = 1 / scale
    x0, y0, x1, y1 = region
    left = max(0.0, math.floor(x0 * scale) * step)
    top = max(0.0, math.floor(y0 * scale) * step)
    cols = max(1, math.ceil((min(pixels.width, x1) - left) * scale))
    rows = max(1, math.ceil((min(pixels.height, y1) - top) * scale))
    cols = max(1, min(cols, math.floor((pixels.width - left) * scale)))
    rows = max(1, min(rows, math.floor((pixels.height - top) * scale)))
    box = (left, top, min(pixels.width, left + cols * step),
           min(pixels.height, top + rows * step))
    return DetailImage(pixels.window(box, (cols, rows)), left, top, scale)


def display_shape(width: int, height: int,
                  max_side: int = DISPLAY_MAX_SIDE) -> tuple[tuple[int, int], float]:
    """``((rows, cols), scale)`` of the display image of a ``width`` x ``height`` image."""
    scale = min(1.0, max_side / max(width, height, 1))
    return (max(1, round(height * scale)), max(1, round(width * scale))), scale


def blank_canvas(width: int, height: int, max_side: int = DISPLAY_MAX_SIDE) -> tuple[RGB8, float]:
    """A dark grey canvas for an image of ``width`` x ``height``, downscaled like images."""
    shape, scale = display_shape(width, height, max_side)
    return np.full((*shape, 3), BLANK_GREY, dtype=np.uint8), scale


def decodes_reduced(images_root: str | Path, relative: str) -> bool:
    """Whether the image is a JPEG, which Pillow can decode at 1/2, 1/4 or 1/8 scale
    (``False`` when it cannot be opened)."""
    try:
        with _open_image(resolve_image_path(images_root, relative)) as img:
            return img.format == "JPEG"
    except (ImagePathError, OSError, ValueError, Image.DecompressionBombError):
        return False


def load_source_rgb(images_root: str | Path, relative: str, width: int,
                    height: int) -> RGB8 | None:
    """The annotation's image at full resolution, ``(height, width, 3)`` uint8.

    ``None`` when it cannot be read or is not ``width`` x ``height``:
    :func:`load_display_image` then gives the blank canvas or the resampled image
    with its notice, and there is no full-resolution detail.
    """
    try:
        rgb, _ = read_rgb8(resolve_image_path(images_root, relative), max_side=None)
    except (ImagePathError, OSError, ValueError, Image.DecompressionBombError,
            Image.DecompressionBombWarning):
        return None
    return rgb if rgb.shape[:2] == (height, width) else None


def display_from_source(rgb: RGB8, max_side: int = DISPLAY_MAX_SIDE) -> DisplayImage:
    """The display image of a full-resolution image (downscaled as :func:`read_rgb8` does)."""
    height, width = rgb.shape[:2]
    shape, scale = display_shape(width, height, max_side)
    if shape != (height, width):
        rgb = _resized(rgb, (shape[1], shape[0]))
    return DisplayImage(rgb, scale, width, height)


def detail_window(region: tuple[float, float, float, float], width: int, height: int,
                  pad: float = 0.5, max_pixels: int = DETAIL_MAX_PIXELS
                  ) -> tuple[int, int, int, int] | None:
    """``(left, top, right, bottom)``: the window of a ``width`` x ``height`` image around
    ``region`` (original pixels ``x0, y0, x1, y1``), grown by ``pad`` of its size on each
    side when that fits ``max_pixels``; ``None`` when even the bare region has more."""
    x0, y0, x1, y1 = region
    for grow in (pad, 0.0):
        dx, dy = (x1 - x0) * grow, (y1 - y0) * grow
        left, top = max(0, math.floor(x0 - dx)), max(0, math.floor(y0 - dy))
        right, bottom = min(width, math.ceil(x1 + dx)), min(height, math.ceil(y1 + dy))
        if right > left and bottom > top and (right - left) * (bottom - top) <= max_pixels:
            return left, top, right, bottom
    return None


def detail_crop(rgb: RGB8, region: tuple[float, float, float, float], pad: float = 0.5,
                max_pixels: int = DETAIL_MAX_PIXELS) -> DetailImage | None:
    """The :func:`detail_window` of ``rgb`` (full resolution) around ``region``."""
    window = detail_window(region, rgb.shape[1], rgb.shape[0], pad, max_pixels)
    if window is None:
        return None
    left, top, right, bottom = window
    return DetailImage(np.ascontiguousarray(rgb[top:bottom, left:right]), left, top)


def load_detail(images_root: str | Path, relative: str, width: int, height: int,
                region: tuple[float, float, float, float]) -> DetailImage | None:
    """:func:`detail_crop`'s window read from the file alone (no full-resolution RGB of
    the image is made); ``None`` as :func:`load_region` or :func:`detail_window`."""
    window = detail_window(region, width, height)
    if window is None:
        return None
    return load_region(images_root, relative, width, height, tuple(map(float, window)))


def load_display_image(images_root: str | Path, relative: str, width: int, height: int,
                       max_side: int = DISPLAY_MAX_SIDE) -> DisplayImage:
    """Load an annotation's image for display, or a blank canvas with a notice.

    ``width``/``height`` are the annotation's; they size the blank canvas and
    are the coordinate frame of all geometry (an image of another size is
    resampled to it, with a notice).
    """
    try:
        path = resolve_image_path(images_root, relative)
        if not path.exists():
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
        rgb = _resized(rgb, (target.shape[1], target.shape[0]))
    return DisplayImage(rgb, scale, width, height, notice)


def _blank(width: int, height: int, max_side: int, notice: str) -> DisplayImage:
    rgb, scale = blank_canvas(width, height, max_side)
    return DisplayImage(rgb, scale, width, height, notice + " — overlays are drawn on a blank "
                        f"{width} x {height} canvas")
