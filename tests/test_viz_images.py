"""Image loading for display: confinement to the images folder, stretching, caps, notices."""

from __future__ import annotations

import os
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
