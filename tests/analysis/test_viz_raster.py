"""GeoTIFFs and large rasters read by window and overview (issue 29).

References are rasterio's whole-array read of the same file, numpy's percentiles and
hand-made block images; never the windowed reader under test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
from PIL import Image
from rasterio.enums import Resampling
from rasterio.transform import from_origin

from ovearth_core.viz import images

W, H = 301, 203


def _write_tif(path: Path, data: np.ndarray, *, crs: bool, tiled: bool,
               overviews: tuple[int, ...] = ()) -> None:
    """``data``: ``(bands, rows, cols)``."""
    profile = {"driver": "GTiff", "width": data.shape[2], "height": data.shape[1],
               "count": data.shape[0], "dtype": data.dtype.name, "compress": "deflate"}
    if tiled:
        profile.update(tiled=True, blockxsize=64, blockysize=64)
    if crs:
        profile.update(crs="EPSG:32633", transform=from_origin(500000.0, 4000000.0, 0.5, 0.5))
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)
        if overviews:
            dst.build_overviews(list(overviews), Resampling.average)


def _reference(path: Path) -> np.ndarray:
    """The whole file read at once and stretched with numpy's percentiles."""
    with rasterio.open(path) as src:
        arr = src.read()
    return images.stretch_to_rgb8(np.moveaxis(arr, 0, -1))


CASES = [  # (bands, dtype, crs, tiled)
    (3, "uint8", True, True), (3, "uint8", False, False), (1, "uint16", True, False),
    (4, "uint16", True, True), (4, "uint16", False, False), (3, "uint16", False, True),
    (1, "float32", True, True), (2, "int16", False, True),
]


def _data(bands: int, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "uint8":
        return rng.integers(0, 256, (bands, H, W), dtype=np.uint8)
    ramp = np.linspace(0, 3000, W)[None, None, :] * np.arange(1, bands + 1)[:, None, None]
    return (ramp + rng.normal(0, 300, (bands, H, W))).clip(-30000, 30000).astype(dtype)


@pytest.mark.parametrize(("bands", "dtype", "crs", "tiled"), CASES)
def test_a_window_equals_the_same_region_of_a_full_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bands: int, dtype: str, crs: bool,
        tiled: bool) -> None:
    monkeypatch.setattr(images, "_STRIP_PIXELS", 7 * W)  # many strips per window
    path = tmp_path / "scene.tif"
    _write_tif(path, _data(bands, dtype, bands * 7 + len(dtype)), crs=crs, tiled=tiled)
    full = _reference(path)
    region = (40.5, 17.2, 190.0, 150.9)
    window = images.load_region(tmp_path, "scene.tif", W, H, region)
    assert window is not None and window.scale == 1.0
    assert (window.left, window.top) == (40, 17)
    np.testing.assert_array_equal(window.rgb, full[17:151, 40:190])
    rgb, scale = images.read_rgb8(path, max_side=None)
    assert scale == 1.0
    np.testing.assert_array_equal(rgb, full)


@pytest.mark.parametrize(("bands", "dtype", "crs", "tiled"), CASES[:4])
def test_small_display_equals_the_whole_image_conversion(
        tmp_path: Path, bands: int, dtype: str, crs: bool, tiled: bool) -> None:
    """Under the decode cap a TIFF's display is today's: the full-resolution stretch,
    resampled by Pillow (the conversion of ``display_from_source``)."""
    path = tmp_path / "scene.tif"
    _write_tif(path, _data(bands, dtype, 3), crs=crs, tiled=tiled)
    full = _reference(path)
    expected = images.display_from_source(full, max_side=100)
    got = images.load_display_image(tmp_path, "scene.tif", W, H, max_side=100)
    assert got.notice is None and got.scale == expected.scale
    np.testing.assert_array_equal(got.rgb, expected.rgb)


def _blocks(side: int, block: int) -> np.ndarray:
    """``(3, side, side)`` uint8 of constant ``block`` x ``block`` squares, colours from
    the block's row and column: any averaging reduction by ``block`` gives them back."""
    n = side // block
    r, c = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    small = np.stack([(r * 37) % 256, (c * 53) % 256, ((r + c) * 11) % 256]).astype(np.uint8)
    return np.repeat(np.repeat(small, block, axis=1), block, axis=2)


def test_over_the_decode_cap_the_display_comes_from_the_overviews(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiled GeoTIFF over the pixel cap (which Pillow refuses): the display is read at
    display size (through the overviews) and equals the block colours; a window is the
    file's own pixels; no sidecar file is written beside the image."""
    side, block = 1024, 16
    data = _blocks(side, block)
    _write_tif(tmp_path / "big.tif", data, crs=True, tiled=True, overviews=(2, 4, 8, 16))
    monkeypatch.setattr(images, "MAX_DECODE_PIXELS", side * side - 1)
    shown = images.load_display_image(tmp_path, "big.tif", side, side, max_side=side // block)
    assert shown.notice is None and shown.scale == 1 / block
    np.testing.assert_array_equal(shown.rgb, np.moveaxis(data[:, ::block, ::block], 0, -1))
    window = images.load_region(tmp_path, "big.tif", side, side, (500.0, 300.0, 530.0, 310.0))
    assert window is not None and (window.left, window.top, window.scale) == (500, 300, 1.0)
    np.testing.assert_array_equal(window.rgb, np.moveaxis(data[:, 300:310, 500:530], 0, -1))
    reduced = images.load_region(tmp_path, "big.tif", side, side, (256.0, 128.0, 512.0, 384.0),
                                 scale=1 / 4)
    assert reduced is not None and reduced.scale == 1 / 4 and reduced.rgb.shape == (64, 64, 3)
    np.testing.assert_array_equal(reduced.rgb,
                                  np.moveaxis(data[:, 128:384:4, 256:512:4], 0, -1))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.tif"]


def test_sixteen_bit_over_the_cap_is_stretched_by_sampled_percentiles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the cap, a 16-bit band's 2nd/98th percentiles come from a sample of the
    overview (documented); on blocks of constant values they are the exact ones."""
    side, block = 512, 16
    data = (_blocks(side, block).astype(np.uint16) * 200)[:1]
    _write_tif(tmp_path / "big16.tif", data, crs=False, tiled=True, overviews=(2, 4, 8, 16))
    monkeypatch.setattr(images, "MAX_DECODE_PIXELS", side * side - 1)
    shown = images.load_display_image(tmp_path, "big16.tif", side, side,
                                      max_side=side // block)
    assert shown.notice is None
    small = data[0, ::block, ::block].astype(np.float64)
    low, high = np.percentile(small, [2, 98])
    expected = (np.clip((small - low) / (high - low), 0, 1) * 255 + 0.5).astype(np.uint8)
    np.testing.assert_array_equal(shown.rgb[:, :, 0], expected)


def test_only_real_tiffs_are_read_by_gdal(tmp_path: Path) -> None:
    """A GDAL virtual raster named ``.tif`` (it could point at any file) is not opened as
    one: the image is reported unreadable, with no traceback."""
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(tmp_path / "secret.png")
    (tmp_path / "x.tif").write_text(
        '<VRTDataset rasterXSize="8" rasterYSize="8"><VRTRasterBand dataType="Byte" band="1">'
        f'<SimpleSource><SourceFilename>{tmp_path / "secret.png"}</SourceFilename>'
        '<SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>')
    shown = images.load_display_image(tmp_path, "x.tif", 8, 8)
    assert shown.notice is not None and "could not be read" in shown.notice
    assert images.load_region(tmp_path, "x.tif", 8, 8, (0.0, 0.0, 4.0, 4.0)) is None


def test_over_the_cap_without_overviews_the_view_is_refused_but_windows_are_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the whole of a large TIFF without overviews would decode all of it: the
    display says so (no traceback); a window around an object is still its own pixels."""
    data = _blocks(256, 16)
    _write_tif(tmp_path / "flat.tif", data, crs=True, tiled=False)
    monkeypatch.setattr(images, "MAX_DECODE_PIXELS", 256 * 256 - 1)
    shown = images.load_display_image(tmp_path, "flat.tif", 256, 256, max_side=64)
    assert shown.notice is not None and "no overview" in shown.notice
    assert (shown.rgb == images.BLANK_GREY).all()
    window = images.load_region(tmp_path, "flat.tif", 256, 256, (10.0, 20.0, 50.0, 30.0))
    assert window is not None
    np.testing.assert_array_equal(window.rgb, np.moveaxis(data[:, 20:30, 10:50], 0, -1))


def test_a_reduced_window_at_a_fractional_scale_has_the_promised_geometry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``load_region`` at scale 0.3 (a gallery tile of a large object) in a TIFF over the
    cap (under it, windows are full resolution, as before): rows and columns
    cover ``1 / scale`` original pixels each from ``(left, top)``; on blocks of 10 pixels
    the centre of every output pixel shows the block under it."""
    data = _blocks(300, 10)
    _write_tif(tmp_path / "s.tif", data, crs=False, tiled=True, overviews=(2, 4))
    monkeypatch.setattr(images, "MAX_DECODE_PIXELS", 300 * 300 - 1)
    window = images.load_region(tmp_path, "s.tif", 300, 300, (33.0, 47.0, 233.0, 147.0), 0.3)
    assert window is not None and window.scale == 0.3
    rows, cols = window.rgb.shape[:2]
    assert window.left <= 33 and window.top <= 47
    assert window.left + cols / 0.3 >= 233 - 1 / 0.3 and window.top + rows / 0.3 >= 147 - 1 / 0.3
    ys = (window.top + (np.arange(rows) + 0.5) / 0.3).astype(int)
    xs = (window.left + (np.arange(cols) + 0.5) / 0.3).astype(int)
    block_centre = (ys % 10 >= 3) & (ys % 10 <= 6)
    inner = np.ix_(block_centre, (xs % 10 >= 3) & (xs % 10 <= 6))
    expected = np.moveaxis(data, 0, -1)[np.ix_(ys, xs)]
    np.testing.assert_array_equal(window.rgb[inner], expected[inner])


def test_a_tiff_is_read_whatever_its_size_on_disk(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The upload cap (``OVEARTH_MAX_INPUT_MB``) bounds files read whole, not a TIFF read
    by window (a 20,000 x 20,000 scene is hundreds of MB on disk)."""
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, (3, 700, 700), dtype=np.uint8)  # ~1.4 MB, incompressible
    _write_tif(tmp_path / "noise.tif", data, crs=True, tiled=True)
    monkeypatch.setenv("OVEARTH_MAX_INPUT_MB", "1")
    window = images.load_region(tmp_path, "noise.tif", 700, 700, (100.0, 200.0, 150.0, 260.0))
    assert window is not None
    np.testing.assert_array_equal(window.rgb, np.moveaxis(data[:, 200:260, 100:150], 0, -1))


@pytest.mark.parametrize("mode", ["1", "CMYK", "P"])
def test_tiffs_whose_samples_are_not_intensities_look_as_pillow_shows_them(
        tmp_path: Path, mode: str) -> None:
    """Bilevel (0/1 samples), CMYK and palette TIFFs: the display is Pillow's RGB
    conversion of them (GDAL would give raw 0/1 bits, C/M/Y as R/G/B, palette indices)."""
    rng = np.random.default_rng(3)
    rgb = Image.fromarray(rng.integers(0, 256, (H, W, 3), dtype=np.uint8))
    img = {"1": rgb.convert("1"), "CMYK": rgb.convert("CMYK"),
           "P": rgb.convert("P", palette=Image.Palette.ADAPTIVE)}[mode]
    img.save(tmp_path / "x.tif")
    expected = np.asarray(Image.open(tmp_path / "x.tif").convert("RGB"))
    got = images.load_display_image(tmp_path, "x.tif", W, H)
    assert got.notice is None
    np.testing.assert_array_equal(got.rgb, expected)
