"""Image readers bounded by what they decode, not by pixel counts (issue 35, item 5): a small
file whose one block (a tile, or a strip of rows, with every band when pixel-interleaved) or
one row of display work is huge is refused before GDAL inflates anything, with the file, its
block layout and the budget named; the app shows a blank canvas with that notice.

Each hostile file is read in a child process under an address-space limit of 1 GiB
(``RLIMIT_AS``), which the refusal must not need. On the unchanged code the huge tile ended
in a MemoryError, the long strip in GDAL's "Read failed", the two others were decoded (the
sparse bands cost little, the PNG row is 8-bit): none was refused with the budget's message.
Figures without the limit: benchmarks/read_budget.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import rasterio
from PIL import Image

from ovearth_core.viz import images

ROOT = Path(__file__).resolve().parents[2]


def _one_huge_tile(path: Path) -> str:
    """80 x 64 stored as one 32,768^2 tile (1 GiB decoded; the file is 158 bytes: GDAL's
    sparse tiles)."""
    with rasterio.open(path, "w", driver="GTiff", width=80, height=64, count=1, dtype="uint8",
                       tiled=True, blockxsize=32768, blockysize=32768, sparse_ok=True):
        pass
    return "32,768 x 32,768 pixels (tile) x 1 band(s)"


def _many_bands(path: Path) -> str:
    """80 x 64 with 65,535 pixel-interleaved bands in 128^2 tiles: 1 GiB a tile."""
    with rasterio.open(path, "w", driver="GTiff", width=80, height=64, count=65535,
                       dtype="uint8", interleave="pixel", tiled=True, blockxsize=128,
                       blockysize=128, sparse_ok=True):
        pass
    return "128 x 128 pixels (tile) x 65,535 band(s)"


def _one_long_row(path: Path) -> str:
    """10^8 x 1 (within the pixel cap; under 0.2 MB deflated), one strip = the whole row."""
    with rasterio.open(path, "w", driver="GTiff", width=100_000_000, height=1, count=1,
                       dtype="uint8", compress="deflate") as dst:
        dst.write(np.zeros((1, 1, 100_000_000), np.uint8))
    # Its strip (95 MB) is within the block budget; the row of display work is not.
    return "one row of 100,000,000 pixels"


def _long_row_png(path: Path) -> str:
    """A 2,000,000 x 1 PNG: Pillow decodes it whole (2 MB), but one row of display work is
    100 MB."""
    Image.new("L", (2_000_000, 1)).save(path)
    return "one row of 2,000,000 pixels"


CASES = {"one 32768^2 tile": (_one_huge_tile, "t.tif"),
         "65,535 bands": (_many_bands, "b.tif"),
         "10^8 x 1 strip": (_one_long_row, "r.tif"),
         "2,000,000 x 1 PNG": (_long_row_png, "r.png")}

CHILD = textwrap.dedent("""
    import resource, sys
    sys.path.insert(0, {root!r})
    from ovearth_core.viz import images
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    try:
        images.read_rgb8({path!r})
    except Exception as err:
        print(type(err).__name__, err)
    else:
        print("decoded")
""")


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_huge_decode_is_refused_before_it_starts(tmp_path: Path, case: str) -> None:
    make, name = CASES[case]
    path = tmp_path / name
    layout = make(path)
    assert path.stat().st_size < 2_000_000  # a small file
    child = CHILD.format(root=str(ROOT), limit=1 << 30, path=str(path))
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         timeout=120, check=False).stdout
    assert out.startswith("ReadBudgetError"), out
    budget = "64.0 MB" if layout.startswith("one row") else "256.0 MB"
    assert name in out and layout in out and f"over the budget of {budget}" in out, out


def test_the_app_shows_the_notice(tmp_path: Path) -> None:
    _one_huge_tile(tmp_path / "t.tif")
    shown = images.load_display_image(tmp_path, "t.tif", 80, 64)
    assert shown.notice is not None and "budget" in shown.notice and "t.tif" in shown.notice
    assert shown.rgb.shape == (64, 80, 3)


@pytest.mark.parametrize("layout", [
    {"tiled": True, "blockxsize": 512, "blockysize": 512},  # a COG's blocks
    {"tiled": False},  # GDAL's strips
])
def test_ordinary_layouts_pass(tmp_path: Path, layout: dict) -> None:
    """A 3-band 3,000 x 2,000 scene in tiles or strips is displayed as before."""
    data = (np.arange(3 * 2000 * 3000) % 251).astype(np.uint8).reshape(3, 2000, 3000)
    with rasterio.open(tmp_path / "s.tif", "w", driver="GTiff", width=3000, height=2000,
                       count=3, dtype="uint8", compress="deflate", **layout) as dst:
        dst.write(data)
    rgb, scale = images.read_rgb8(tmp_path / "s.tif")
    assert rgb.shape == (1365, 2048, 3) and scale == pytest.approx(2048 / 3000)


def test_the_budget_figures() -> None:
    """Bands x block x dtype, by hand: 128 x 128 x 65,535 x 1 byte = 1,073,725,440 bytes."""
    with pytest.raises(images.ReadBudgetError, match="1,073,725,440 bytes"):
        images.check_read_budget("x.tif", 80, 128 * 128 * 65535, "layout")
    images.check_read_budget("x.tif", 80, images.READ_BUDGET_BYTES, "layout")  # at the budget
    with pytest.raises(images.ReadBudgetError, match="one row of 1,342,178 pixels"):
        images.check_read_budget("x.png", 1_342_178, 1, "layout")  # 50 B x width > 64 MiB


def test_large_ordinary_images_are_not_refused(tmp_path: Path) -> None:
    """Real scenes stay readable: a 6,000 x 6,000 RGB PNG (a DOTA-size image, 108 MB
    decoded whole, within the pixel cap that bounds every whole decode) and a 5,000 x
    5,000 RGB GeoTIFF written as one strip (a 75 MB block). A 64 MB block budget refused
    both (found when merging)."""
    Image.new("RGB", (6000, 6000), (10, 120, 200)).save(tmp_path / "big.png")
    rgb, scale = images.read_rgb8(tmp_path / "big.png")
    assert rgb.shape == (2048, 2048, 3) and tuple(rgb[5, 5]) == (10, 120, 200)
    with rasterio.open(tmp_path / "strip.tif", "w", driver="GTiff", width=5000, height=5000,
                       count=3, dtype="uint8", compress="deflate", blockysize=5000) as dst:
        dst.write(np.full((3, 5000, 5000), 77, np.uint8))
        assert dst.block_shapes[0] == (5000, 5000)
    rgb, scale = images.read_rgb8(tmp_path / "strip.tif")
    assert rgb.shape == (2048, 2048, 3) and scale == pytest.approx(2048 / 5000)
