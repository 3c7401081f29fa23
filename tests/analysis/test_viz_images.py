"""Image loading for display: confinement to the images folder, stretching, caps, notices."""

from __future__ import annotations

import math
import os
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from app_fixtures import H, W, write_images
from PIL import Image

from ovearth_core.viz import images
from ovearth_core.viz.images import ImagePathError, load_display_image, resolve_image_path


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    write_images(tmp_path / "images")
    return tmp_path


@pytest.mark.parametrize("bad", ["/etc/passwd", "../secret.png", "images/../../x.png",
                                 "images\\..\\..\\x.png", "C:/x.png", "\\\\server\\x.png", ""])
def test_escaping_paths_are_rejected(root: Path, bad: str) -> None:
    with pytest.raises(ImagePathError):
        resolve_image_path(root, bad)


def test_symlink_escape_is_rejected(root: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "x.png"
    outside.write_bytes(b"x")
    os.symlink(outside, root / "images" / "link.png")
    with pytest.raises(ImagePathError, match="outside"):
        resolve_image_path(root, "images/link.png")


def test_relative_path_resolves_inside(root: Path) -> None:
    assert resolve_image_path(root, "images/rgb.png") == (root / "images" / "rgb.png").resolve()
    assert resolve_image_path(root, "images//./rgb.png").name == "rgb.png"


def test_uint8_rgb_is_kept_exactly() -> None:
    arr = np.random.default_rng(1).integers(0, 255, (5, 7, 3), dtype=np.uint8)
    np.testing.assert_array_equal(images.stretch_to_rgb8(arr), arr)


def test_sixteen_bit_is_stretched_between_percentiles() -> None:
    band = np.arange(100, dtype=np.uint16).reshape(10, 10) * 100  # 0 ... 9900
    out = images.stretch_to_rgb8(band)
    low, high = np.percentile(band.astype(float), [2, 98])
    assert out.shape == (10, 10, 3) and out.dtype == np.uint8
    assert (out[..., 0] == out[..., 1]).all() and (out[..., 1] == out[..., 2]).all()
    assert out[band <= low].max() == 0 and out[band >= high].min() == 255
    mid = (band > low) & (band < high)
    expected = np.round((band[mid] - low) / (high - low) * 255)
    np.testing.assert_allclose(out[..., 0][mid], expected, atol=1)


def test_four_bands_keep_the_first_three_stretched_per_band() -> None:
    arr = np.zeros((4, 4, 4), dtype=np.uint16)
    arr[..., 0] = np.arange(16).reshape(4, 4)
    arr[..., 1] = 1000 + np.arange(16).reshape(4, 4) * 10
    arr[..., 3] = 60000
    out = images.stretch_to_rgb8(arr)
    assert out.shape == (4, 4, 3)
    np.testing.assert_array_equal(out[..., 0], out[..., 1])  # same ranks, per-band stretch
    assert (out[..., 2] == 0).all()  # constant band


def test_float_with_nan_and_bad_shapes() -> None:
    arr = np.array([[np.nan, 0.0], [0.5, 1.0]])
    out = images.stretch_to_rgb8(arr)
    assert out.shape == (2, 2, 3) and out[1, 1, 0] == 255
    assert (images.stretch_to_rgb8(np.full((2, 2), np.nan)) == 0).all()
    with pytest.raises(ValueError, match="shape|must be"):
        images.stretch_to_rgb8(np.zeros(5))


@pytest.mark.parametrize("name", ["rgb.png", "sixteen.tif", "four_band.tif"])
def test_fixture_images_load_as_rgb8(root: Path, name: str) -> None:
    shown = load_display_image(root, f"images/{name}", W, H)
    assert shown.notice is None
    assert shown.rgb.shape == (H, W, 3) and shown.rgb.dtype == np.uint8
    assert shown.scale == 1.0
    if name == "sixteen.tif":  # a vertical gradient: first row dark, last row bright
        assert shown.rgb[0].max() == 0 and shown.rgb[-1].min() == 255


def test_large_image_is_downscaled(tmp_path: Path) -> None:
    Image.fromarray(np.zeros((300, 600, 3), dtype=np.uint8)).save(tmp_path / "big.jpg")
    shown = load_display_image(tmp_path, "big.jpg", 600, 300, max_side=200)
    assert shown.rgb.shape == (100, 200, 3)
    assert shown.scale == pytest.approx(1 / 3)


def test_missing_image_gives_blank_canvas_and_notice(root: Path) -> None:
    shown = load_display_image(root, "images/missing.png", 640, 480)
    assert shown.rgb.shape == (480, 640, 3) and (shown.rgb == images.BLANK_GREY).all()
    assert "not found" in shown.notice and "640 x 480" in shown.notice


def test_unreadable_and_escaping_images_give_notices(root: Path) -> None:
    (root / "images" / "broken.png").write_bytes(b"not a png at all")
    broken = load_display_image(root, "images/broken.png", 30, 20)
    assert broken.rgb.shape == (20, 30, 3) and "could not be read" in broken.notice
    escaped = load_display_image(root, "../../etc/passwd", 30, 20)
    assert "leaves the images folder" in escaped.notice


def test_pixel_cap(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(images, "MAX_DECODE_PIXELS", 100)
    shown = load_display_image(root, "images/rgb.png", W, H)
    assert "cap" in shown.notice and (shown.rgb == images.BLANK_GREY).all()


def test_size_mismatch_is_resampled_with_notice(root: Path) -> None:
    shown = load_display_image(root, "images/rgb.png", 2 * W, H)
    assert shown.rgb.shape == (H, 2 * W, 3)
    assert "stretched" in shown.notice
    assert images.MAX_DECODE_PIXELS == Image.MAX_IMAGE_PIXELS


def test_truncated_image_gives_notice_not_crash(root: Path) -> None:
    """A file cut short mid-stream (an interrupted copy) is reported, never raised."""
    source = root / "images" / "big.png"
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)).save(source)
    data = source.read_bytes()
    (root / "images" / "cut.png").write_bytes(data[: len(data) // 2])
    shown = load_display_image(root, "images/cut.png", 160, 120)
    assert shown.rgb.shape == (120, 160, 3)
    assert "could not be read" in shown.notice


def test_decompression_bomb_is_refused_before_decoding(root: Path) -> None:
    """A tiny file whose header declares a huge image: refused from the header alone."""
    bomb = root / "images" / "bomb.png"
    Image.new("1", (20_000, 20_000)).save(bomb, optimize=True)  # 400 M pixels, a few KB
    assert bomb.stat().st_size < 200_000
    shown = load_display_image(root, "images/bomb.png", 64, 48)
    assert shown.rgb.shape == (48, 64, 3) and (shown.rgb == images.BLANK_GREY).all()
    assert shown.notice


# --- strip-by-strip decoding (issue 17): the old whole-image path as the reference ---------


def _old_read_rgb8(path: Path, max_side: int | None) -> tuple[np.ndarray, float]:
    """The display decode of commit 9cdefcc, copied: the whole image as one array,
    stretched with ``np.percentile`` over all its finite values, then Pillow's resize."""
    with Image.open(path) as img:
        w, h = img.size
        scale = 1.0 if max_side is None else min(1.0, max_side / max(w, h))
        if img.format == "JPEG" and scale < 1:
            img.draft("RGB", (max(1, int(w * scale)), max(1, int(h * scale))))
        img.load()
        if img.mode in ("P", "PA", "LA", "RGBA", "CMYK", "YCbCr", "1"):
            img = img.convert("RGB")
        arr = np.asarray(img)
    arr = arr[:, :, None] if arr.ndim == 2 else arr
    bands = arr[:, :, :3] if arr.shape[2] >= 3 else arr[:, :, :1]
    if bands.dtype != np.uint8:
        out = []
        for b in range(bands.shape[2]):
            values = bands[:, :, b].astype(np.float64)
            finite = values[np.isfinite(values)]
            if finite.size == 0:
                out.append(np.zeros(values.shape, np.uint8))
                continue
            low, high = np.percentile(finite, [2, 98])
            if high <= low:
                out.append(np.zeros(values.shape, np.uint8))
                continue
            scaled = (np.nan_to_num(values, nan=low) - low) / (high - low)
            out.append((np.clip(scaled, 0, 1) * 255 + 0.5).astype(np.uint8))
        bands = np.stack(out, axis=2)
    rgb = np.ascontiguousarray(np.repeat(bands, 3, axis=2) if bands.shape[2] == 1 else bands)
    if scale < 1:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        rgb = np.asarray(Image.fromarray(rgb).resize(size, Image.Resampling.BILINEAR,
                                                     reducing_gap=1.0))
        scale = size[0] / w
    return rgb, scale


def _write(path: Path, kind: str, h: int, w: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    if kind == "uint16":
        Image.fromarray(rng.gamma(2.0, 3000, (h, w)).clip(0, 65535).astype(np.uint16)).save(path)
    elif kind == "uint16_big_endian":
        Image.fromarray(rng.gamma(2.0, 3000, (h, w)).clip(0, 65535).astype(">u2")).save(path)
    elif kind == "uint16_constant":
        Image.fromarray(np.full((h, w), 7, np.uint16)).save(path)
    elif kind == "int32":
        Image.fromarray(rng.integers(-2**31, 2**31 - 1, (h, w), dtype=np.int32)).save(path)
    elif kind == "float":
        arr = rng.normal(0, 1, (h, w)).astype(np.float32)
        arr[rng.random((h, w)) < 0.1] = np.nan
        arr[0, 0], arr[-1, -1] = np.inf, -np.inf
        Image.fromarray(arr).save(path)
    elif kind == "float_nan":
        Image.fromarray(np.full((h, w), np.nan, np.float32)).save(path)
    elif kind == "rgba":
        Image.fromarray(rng.integers(0, 255, (h, w, 4), dtype=np.uint8)).save(path)
    elif kind == "palette":
        Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)).convert(
            "P", palette=Image.Palette.ADAPTIVE).save(path)
    else:  # rgb (PNG or JPEG by the suffix)
        Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)).save(path)


KINDS = {"uint16": "png", "uint16_big_endian": "tif", "uint16_constant": "png",
         "int32": "tif", "float": "tif", "float_nan": "tif", "rgba": "png", "palette": "png",
         "rgb": "png", "jpeg": "jpg"}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize(("h", "w", "max_side"), [(97, 203, 40), (130, 61, 50), (90, 70, 64),
                                                  (33, 45, None), (40, 41, 100)])
def test_strips_give_the_pixels_of_the_whole_image_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, h: int, w: int,
        max_side: int | None) -> None:
    """Stretched and reduced strip by strip (strips of a few rows here, so that reduce
    blocks and percentiles span many strips): exactly the pixels and scale of the old
    whole-image decode, for every mode; windows (``load_region``) equal its crops."""
    monkeypatch.setattr(images, "_STRIP_PIXELS", 3 * w + 1)
    path = tmp_path / f"img.{KINDS[kind]}"
    _write(path, "rgb" if kind == "jpeg" else kind, h, w, seed=h * w)
    expected, scale = _old_read_rgb8(path, max_side)
    got, got_scale = images.read_rgb8(path, max_side)
    assert got_scale == scale
    np.testing.assert_array_equal(got, expected)
    full, _ = _old_read_rgb8(path, None)
    window = images.load_region(tmp_path, path.name, w, h, (w / 5, h / 3, w / 2, h - 2))
    assert window is not None and window.scale == 1.0
    left, top = int(window.left), int(window.top)
    np.testing.assert_array_equal(
        window.rgb, full[top:top + window.rgb.shape[0], left:left + window.rgb.shape[1]])
    assert window.rgb.shape[:2] == (h - 2 - top, math.ceil(w / 2) - left)


def test_sixteen_bit_display_allocates_a_bounded_amount(tmp_path: Path) -> None:
    """A 5000 x 2000 16-bit image: the old decode allocated its float copies (over 300 MB,
    traced here as well); strip by strip, the arrays made stay within the display size and
    a few strips (under 40 MB; Pillow's own decoded image is not traced)."""
    rng = np.random.default_rng(0)
    h, w = 2000, 5000
    pixels = (np.linspace(0, 60000, w)[None, :] + rng.normal(0, 500, (h, w))).clip(0, 65535)
    Image.fromarray(pixels.astype(np.uint16)).save(tmp_path / "wide16.png")
    del pixels
    peaks = []
    for decode in (lambda: images.read_rgb8(tmp_path / "wide16.png"),
                   lambda: _old_read_rgb8(tmp_path / "wide16.png", images.DISPLAY_MAX_SIDE)):
        tracemalloc.start()
        try:
            rgb, _ = decode()
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert rgb.shape == (819, 2048, 3)
    assert peaks[0] < 40 * 2**20 < 8 * h * w < peaks[1]
