"""Gallery tiles (viz/tiles.py): crop geometry and pixels against plain numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ovearth_core.types import Sample
from ovearth_core.viz import images, tiles

W, H = 200, 120


@pytest.mark.parametrize(("box", "expected"), [
    # margin 1.0: the box's side tripled, centred on it
    ((90, 50, 110, 70), (70.0, 30.0, 130.0, 90.0)),
    # 4-px box: min_side 24
    ((98, 58, 102, 62), (88.0, 48.0, 112.0, 72.0)),
    # at the top-left corner: shifted inside, same side
    ((0, 0, 10, 10), (0.0, 0.0, 30.0, 30.0)),
    # at the bottom-right corner
    ((195, 115, 200, 120), (176.0, 96.0, 200.0, 120.0)),
    # taller than the image: cut to the image's height only
    ((10, 0, 90, 80), (0.0, 0.0, 200.0, 120.0)),
    (None, (0.0, 0.0, 200.0, 120.0)),
])
def test_crop_region(box, expected) -> None:
    assert tiles.crop_region(box, W, H) == pytest.approx(expected)


def test_crop_region_stays_inside_the_image() -> None:
    rng = np.random.default_rng(1)
    for _ in range(200):
        x0, y0 = rng.uniform(0, W - 1), rng.uniform(0, H - 1)
        box = (x0, y0, min(W, x0 + rng.uniform(0.5, 60)), min(H, y0 + rng.uniform(0.5, 60)))
        r = tiles.crop_region(box, W, H)
        assert 0 <= r[0] < r[2] <= W and 0 <= r[1] < r[3] <= H
        assert r[0] <= box[0] + 1e-9 and r[2] >= box[2] - 1e-9  # the object is in view
        assert r[1] <= box[1] + 1e-9 and r[3] >= box[3] - 1e-9


def test_a_10_px_target_is_at_least_40_px_on_the_tile() -> None:
    box = (50.0, 50.0, 60.0, 60.0)
    region = tiles.crop_region(box, 1000, 1000)
    assert tiles.on_screen_size(box, region) >= 40
    big = (100.0, 100.0, 400.0, 300.0)  # a large object still fits its tile
    assert tiles.on_screen_size(big, tiles.crop_region(big, 1000, 1000)) <= tiles.TILE_PX


def _sample(**kw: object) -> Sample:
    base = {"sample_id": "q1", "phrase": "tank", "negative": False, "image_path": "a.png",
            "ann_id": "a", "category": "tank", "width": W, "height": H}
    return Sample(**{**base, **kw})  # type: ignore[arg-type]


def test_tile_pixels_are_the_original_pixels_enlarged(tmp_path: Path) -> None:
    rgb = np.random.default_rng(0).integers(0, 256, (H, W, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(tmp_path / "a.png")
    sample = _sample()
    region = tiles.crop_region((100, 60, 110, 70), W, H)  # (90, 50, 120, 80): 30 px
    window = images.load_region(tmp_path, "a.png", W, H, region, tiles.load_scale(region))
    tile = np.asarray(tiles.render_tile(window, sample, region, "bbox", None))
    assert tile.shape == (tiles.TILE_PX, tiles.TILE_PX, 3)
    k = tiles.TILE_PX / 30
    for r, c in [(0, 0), (17, 33), (80, 80), (159, 159)]:
        y, x = int(50 + (r + 0.5) / k), int(90 + (c + 0.5) / k)
        assert tuple(tile[r, c]) == tuple(rgb[y, x])


def test_tile_at_the_border_and_of_an_unreadable_image(tmp_path: Path) -> None:
    boxes = np.array([[0.0, 0.0, 6.0, 4.0]])
    sample = _sample(gt_boxes=boxes, image_path="missing.png")
    region = tiles.crop_region((0, 0, 6, 4), W, H)
    assert region == (0.0, 0.0, 24.0, 24.0)
    window = images.load_region(tmp_path, "missing.png", W, H, region, 1.0)
    assert window is None
    tile = np.asarray(tiles.render_tile(window, sample, region, "bbox", None, ("GT", 0)))
    assert tile.shape == (tiles.TILE_PX, tiles.TILE_PX, 3)
    # The missed GT box's outline is orange at its top edge, the rest grey canvas.
    assert tuple(tile[0, 20]) == (0xFF, 0x98, 0x00)
    assert tuple(tile[100, 100]) == (images.BLANK_GREY,) * 3
    assert tiles.jpeg_bytes(Image.fromarray(tile))[:2] == b"\xff\xd8"


@pytest.mark.parametrize("bits", [8, 16])
def test_a_window_of_the_decoded_image_is_the_window_read_from_the_file(
        tmp_path: Path, bits: int) -> None:
    """Issue 25: a tile cut from the image decoded once (the Gallery's cached source) has
    the window, origin and pixels a tile read from the file alone has."""
    rng = np.random.default_rng(bits)
    if bits == 8:
        Image.fromarray(rng.integers(0, 256, (H, W, 3), dtype=np.uint8)).save(tmp_path / "a.png")
    else:
        Image.fromarray(rng.integers(0, 4096, (H, W), dtype=np.uint16)).save(tmp_path / "a.png")
    source = images.load_source_rgb(tmp_path, "a.png", W, H)
    for box in [(100, 60, 110, 70), (0.4, 0.6, 5.2, 7.9), (190.5, 111.2, 200, 120),
                (10.0, 10.0, 10.5, 10.5)]:
        region = tiles.crop_region(box, W, H)
        assert tiles.load_scale(region) == 1.0
        read = images.load_region(tmp_path, "a.png", W, H, region, 1.0)
        cut = tiles.source_window(source, region)
        assert (cut.left, cut.top, cut.scale) == (read.left, read.top, read.scale)
        np.testing.assert_array_equal(cut.rgb, read.rgb)
