"""Full-resolution detail windows over downscaled images (viewer, Compare page, report).

Images larger than DISPLAY_MAX_SIDE are drawn downscaled; the window around the view
is drawn from the original pixels. Checked against plain numpy slicing of the decoded
image and masks (pycocotools decode), and against the thumbnail of the same image
when it needs no downscaling.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ovearth_core.masks import decode, parse_rle
from ovearth_core.masks import encode as encode_json
from ovearth_core.report import draw as report_draw
from ovearth_core.types import Sample
from ovearth_core.viz import images, overlay

H, W = 300, 400


def _noise_image(path: Path, w: int = W, h: int = H, seed: int = 0) -> np.ndarray:
    rgb = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rgb).save(path)  # PNG: lossless, so pixels compare exactly
    return rgb


def _sample(**kw: object) -> Sample:
    base = {"sample_id": "q1", "phrase": "tank", "negative": False,
            "image_path": "images/a.png", "ann_id": "a", "category": "tank",
            "width": W, "height": H}
    return Sample(**{**base, **kw})  # type: ignore[arg-type]


def _rle(x0: int, y0: int, x1: int, y1: int) -> dict:
    mask = np.zeros((H, W), dtype=np.uint8)
    mask[y0:y1, x0:x1] = 1
    return parse_rle(encode_json(mask))[0]


def test_load_source_rgb_is_the_file_at_full_resolution(tmp_path: Path) -> None:
    rgb = _noise_image(tmp_path / "images" / "a.png")
    np.testing.assert_array_equal(images.load_source_rgb(tmp_path, "images/a.png", W, H), rgb)
    # Missing, escaping or mis-sized: no source (the display path gives the notice).
    assert images.load_source_rgb(tmp_path, "images/missing.png", W, H) is None
    assert images.load_source_rgb(tmp_path, "../a.png", W, H) is None
    assert images.load_source_rgb(tmp_path, "images/a.png", W + 1, H) is None


def test_display_from_source_matches_the_display_canvas(tmp_path: Path) -> None:
    rgb = _noise_image(tmp_path / "images" / "a.png")
    small = images.display_from_source(rgb, max_side=100)
    canvas, scale = images.blank_canvas(W, H, max_side=100)
    assert small.rgb.shape == canvas.shape and small.scale == scale == 0.25
    assert (small.width, small.height, small.notice) == (W, H, None)
    same = images.display_from_source(rgb)  # already small enough: the pixels themselves
    assert same.scale == 1.0 and same.rgb is rgb


@pytest.mark.parametrize(("region", "pad", "expected"), [
    ((100.0, 50.0, 140.0, 90.0), 0.0, (100, 50, 140, 90)),
    ((100.0, 50.0, 140.0, 90.0), 0.5, (80, 30, 160, 110)),      # grown by half each side
    ((10.5, 20.2, 30.1, 40.9), 0.0, (10, 20, 31, 41)),          # whole pixels covering it
    ((0.0, 0.0, 40.0, 40.0), 0.5, (0, 0, 60, 60)),              # clipped to the image
    ((380.0, 280.0, 400.0, 300.0), 1.0, (360, 260, 400, 300)),
])
def test_detail_crop_window(region: tuple[float, float, float, float], pad: float,
                            expected: tuple[int, int, int, int]) -> None:
    rgb = np.random.default_rng(1).integers(0, 256, (H, W, 3), dtype=np.uint8)
    detail = images.detail_crop(rgb, region, pad=pad)
    assert detail is not None
    left, top, right, bottom = expected
    assert (detail.left, detail.top) == (left, top)
    np.testing.assert_array_equal(detail.rgb, rgb[top:bottom, left:right])


def test_detail_crop_gives_up_on_large_windows() -> None:
    rgb = np.zeros((H, W, 3), dtype=np.uint8)
    # Padded window too large, bare region fits: the bare region.
    detail = images.detail_crop(rgb, (0.0, 0.0, 40.0, 40.0), pad=2.0, max_pixels=2000)
    assert detail is not None and detail.rgb.shape[:2] == (40, 40)
    assert images.detail_crop(rgb, (0.0, 0.0, 100.0, 100.0), max_pixels=2000) is None


def _trace_pixels(trace: object) -> np.ndarray:
    data = trace.source.split(",", 1)[1]  # type: ignore[attr-defined]
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))


def test_compose_detail_blends_full_resolution_masks() -> None:
    """Masks in the window are the decoded full-resolution masks (a 3 x 3 speck, at most
    one pixel of the display image at scale 0.25), pixel for pixel, in both mask modes."""
    rgb = np.full((H, W, 3), 128, dtype=np.uint8)
    gt, pred = _rle(200, 100, 203, 103), _rle(202, 100, 206, 104)
    sample = _sample(gt_mask=gt, pred_mask=pred)
    detail = images.detail_crop(rgb, (190.0, 90.0, 215.0, 115.0), pad=0.0)
    assert detail is not None
    g, p = decode(gt)[90:115, 190:215].astype(bool), decode(pred)[90:115, 190:215].astype(bool)
    for pixel_mode, expected in ((False, {"GT mask": g & ~p, "predicted mask": p}),
                                 (True, {"TP pixels": g & p, "FP pixels": p & ~g,
                                         "FN pixels": g & ~p})):
        shown = overlay.compose_detail(detail, sample, opacity=1.0, pixel_mode=pixel_mode)
        for name, where in expected.items():
            colour = np.array(overlay.MASK_COLOURS[name])
            np.testing.assert_array_equal((shown == colour).all(axis=2), where, name)


def test_overlay_figure_places_the_window() -> None:
    rgb = np.full((H, W, 3), 128, dtype=np.uint8)
    sample = _sample(gt_mask=_rle(195, 95, 210, 110))
    display = images.display_from_source(rgb, max_side=100)
    detail = images.detail_crop(rgb, (190.0, 90.0, 215.0, 115.0), pad=0.0)
    fig = overlay.overlay_figure(display, sample, {"bbox": None, "oriented_bbox": None},
                                 ["GT mask"], 1.0, region=(190.0, 90.0, 215.0, 115.0),
                                 detail=detail)
    traces = [t for t in fig.data if t.type == "image"]
    assert [t.name for t in traces] == ["image", "full resolution"]
    window = traces[1]
    assert (window.x0, window.y0, window.dx, window.dy) == (190.5, 90.5, 1, 1)
    shown = _trace_pixels(window).astype(int)
    assert shown.shape == (25, 25, 3)
    assert np.abs(shown[12, 12] - overlay.MASK_COLOURS["GT mask"]).sum() < 40  # inside
    assert np.abs(shown[1, 1] - 128).sum() < 40  # outside


def test_overlay_figure_without_detail_has_one_image() -> None:
    rgb = np.zeros((H, W, 3), dtype=np.uint8)
    fig = overlay.overlay_figure(images.display_from_source(rgb), _sample(),
                                 {"bbox": None, "oriented_bbox": None})
    assert [t.name for t in fig.data if t.type == "image"] == ["image"]


def test_thumbnail_from_window_equals_thumbnail_from_full_image() -> None:
    """When the image needs no downscaling, drawing the region from its full-resolution
    window gives the very same thumbnail as drawing it from the whole image."""
    rgb = np.random.default_rng(3).integers(0, 256, (H, W, 3), dtype=np.uint8)
    sample = _sample(gt_mask=_rle(120, 60, 150, 90), gt_boxes=np.array([[118.0, 58, 151, 92]]),
                     pred_boxes=np.array([[125.0, 65, 160, 95]]))
    row = {"bbox": {"matches": []}, "oriented_bbox": None}
    region = (100.0, 40.5, 170.2, 110.0)
    whole = report_draw.overlay_thumbnail(images.display_from_source(rgb), sample, row,
                                          region=region)
    window = images.detail_crop(rgb, region, pad=0.0)
    assert window is not None
    cropped = report_draw.overlay_thumbnail(window, sample, row, region=region)
    np.testing.assert_array_equal(np.asarray(cropped), np.asarray(whole))


def test_load_view_prefers_the_window(tmp_path: Path) -> None:
    rgb = _noise_image(tmp_path / "images" / "a.png")
    view, notice = report_draw.load_view(tmp_path, _sample(), (10.0, 10.0, 50.0, 50.0))
    assert notice is None and isinstance(view, images.DetailImage)
    np.testing.assert_array_equal(view.rgb, rgb[10:50, 10:50])
    blank, notice = report_draw.load_view(tmp_path, _sample(image_path="images/none.png"),
                                          (10.0, 10.0, 50.0, 50.0))
    assert isinstance(blank, images.DisplayImage) and "not found" in (notice or "")


def test_load_region_decodes_jpeg_reduced_when_enough(tmp_path: Path) -> None:
    """A large region for a small thumbnail needs fewer pixels: the JPEG is decoded at a
    reduced scale (at least the one asked for); PNGs keep their full resolution."""
    w, h = 1600, 1200
    yy, xx = np.mgrid[0:h, 0:w]
    smooth = np.stack([xx * 255 // w, yy * 255 // h, (xx + yy) * 255 // (w + h)],
                      axis=2).astype(np.uint8)
    (tmp_path / "images").mkdir()
    Image.fromarray(smooth).save(tmp_path / "images" / "big.jpg", quality=95)
    Image.fromarray(smooth).save(tmp_path / "images" / "big.png")
    region = (200.0, 100.0, 1200.0, 1100.0)
    reduced = images.load_region(tmp_path, "images/big.jpg", w, h, region, scale=0.25)
    assert reduced is not None and 0.25 <= reduced.scale < 1
    pixel = 1 / reduced.scale
    assert abs(reduced.left - 200) < pixel and abs(reduced.top - 100) < pixel
    rows, cols = reduced.rgb.shape[:2]
    assert abs(rows - 1000 * reduced.scale) <= 2 and abs(cols - 1000 * reduced.scale) <= 2
    # Pixel (r, c) shows the original around its centre.
    r, c = rows // 3, cols // 2
    x = int(reduced.left + (c + 0.5) / reduced.scale)
    y = int(reduced.top + (r + 0.5) / reduced.scale)
    assert np.abs(reduced.rgb[r, c].astype(int) - smooth[y, x]).max() <= 6
    full = images.load_region(tmp_path, "images/big.png", w, h, region, scale=0.25)
    assert full is not None and full.scale == 1.0
    np.testing.assert_array_equal(full.rgb, smooth[100:1100, 200:1200])
    assert images.load_region(tmp_path, "images/big.png", w + 1, h, region) is None


def test_decodes_reduced_only_for_jpeg(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    rgb = np.zeros((20, 30, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(tmp_path / "images" / "a.jpg")
    Image.fromarray(rgb).save(tmp_path / "images" / "a.png")
    (tmp_path / "images" / "broken.jpg").write_bytes(b"not an image")
    assert images.decodes_reduced(tmp_path, "images/a.jpg")
    assert not images.decodes_reduced(tmp_path, "images/a.png")
    assert not images.decodes_reduced(tmp_path, "images/broken.jpg")
    assert not images.decodes_reduced(tmp_path, "images/missing.jpg")
    assert not images.decodes_reduced(tmp_path, "../a.jpg")
