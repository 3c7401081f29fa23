"""The app's image loaders for images over ``SOURCE_MAX_PIXELS`` (issue 17): decoded at
display size and read window by window instead of kept at full resolution; the same
pixels as the full-resolution path they replace (the reference, run on the same file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ovearth_core.viz import images

pytestmark = pytest.mark.usefixtures("fresh_caches")
W, H = 3000, 1200  # over DISPLAY_MAX_SIDE, so display and detail differ from the original


@pytest.mark.parametrize("kind", ["sixteen.png", "rgb.png"])
def test_large_images_take_the_bounded_path_with_the_same_pixels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    from pages.common import data

    rng = np.random.default_rng(5)
    if kind == "sixteen.png":
        pixels = (np.linspace(0, 40000, W)[None, :] + rng.normal(0, 900, (H, W))).clip(0, 65535)
        Image.fromarray(pixels.astype(np.uint16)).save(tmp_path / kind)
    else:
        Image.fromarray(rng.integers(0, 255, (H, W, 3), dtype=np.uint8)).save(tmp_path / kind)
    stamp = data.image_stamp(tmp_path, kind)
    region = (1000.0, 500.0, 1100.0, 560.0)
    source = images.load_source_rgb(tmp_path, kind, W, H)  # the reference: full resolution
    assert source is not None
    expected_display = images.display_from_source(source)
    expected_detail = images.detail_crop(source, region)

    decoded: list[str] = []
    monkeypatch.setattr(data, "load_source_rgb",
                        lambda *args: decoded.append("full") or source)
    monkeypatch.setattr(data, "SOURCE_MAX_PIXELS", W * H - 1)
    shown = data.display_image(str(tmp_path), kind, W, H, stamp)
    detail = data.detail_image(str(tmp_path), kind, W, H, stamp, region)
    assert decoded == []  # no full-resolution image was made
    assert shown.notice is None and shown.scale == expected_display.scale
    np.testing.assert_array_equal(shown.rgb, expected_display.rgb)
    assert detail is not None and expected_detail is not None
    assert (detail.left, detail.top, detail.scale) == (expected_detail.left,
                                                       expected_detail.top, 1.0)
    np.testing.assert_array_equal(detail.rgb, expected_detail.rgb)
