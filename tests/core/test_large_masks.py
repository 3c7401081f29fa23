"""Masks on scenes of any size (issue 34, item 6): a 20,000 x 20,000 scene (400 million
pixels, DOTA's and iSAID's largest) is parsed, scored and drawn in the RLE domain, never
decoded whole; the one remaining cap (2**29 - 1 pixels, pycocotools' compressed-string
codec) refuses with its reason."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import refs

from ovearth_core import masks
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.types import Sample, SampleList
from ovearth_core.viz import overlay
from ovearth_core.viz.images import DetailImage

H = W = 20_000  # 400,000,000 pixels: four times the old cap
BUDGET = 60 * 2**20  # traced bytes: a decoded mask alone is 400 MB


def _runs(rects: list[tuple[int, int, int, int]], h: int, w: int) -> list[int]:
    """Column-major runs (background first) of the union of ``(y0, y1, x0, x1)`` rects
    (half-open, disjoint columns or rows)."""
    spans = sorted((x * h + y0, x * h + y1) for y0, y1, x0, x1 in rects for x in range(x0, x1))
    runs, at = [], 0
    for lo, hi in spans:
        runs += [lo - at, hi - lo]
        at = hi
    return [*runs, h * w - at]


def _rle(rects: list[tuple[int, int, int, int]]) -> masks.Rle:
    rle, _ = masks.parse_rle({"size": [H, W],
                              "counts": refs.encode_runs_string(_runs(rects, H, W))})
    return rle


GT = [(100, 140, 200, 260), (19_000, 19_050, 15_000, 15_040)]  # 2,400 + 2,000 px
PRED = [(110, 140, 200, 260), (19_000, 19_050, 15_020, 15_060)]  # 1,800 on GT 0; 1,000 on GT 1


def _peak(run):
    tracemalloc.start()
    try:
        out = run()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_400_megapixel_mask_is_scored_without_decoding() -> None:
    def score():
        s = Sample("q", "ship", False, "big.tif", "a", "ship", W, H, gt_mask=_rle(GT),
                   pred_mask=_rle(PRED))
        sl = SampleList([s], task="open_vocabulary", modalities=("segmentation",),
                        score_threshold=None, bbox_format="xyxy")
        return evaluate_samples(sl, 0.5)["per_sample"][0]["seg"]
    seg, peak = _peak(score)
    # I = 30 * 60 + 50 * 20 = 2,800; U = 4,400 + 3,800 - 2,800 = 5,400
    assert seg["iou"] == pytest.approx(2800 / 5400)
    assert peak < BUDGET, f"{peak / 2**20:.0f} MB traced"


def test_a_window_of_a_400_megapixel_mask_is_drawn_from_its_runs() -> None:
    s = Sample("q", "ship", False, "big.tif", "a", "ship", W, H, gt_mask=_rle(GT),
               pred_mask=_rle(PRED))
    # A 512 x 512 window at full resolution around GT 1 (rows 18,800.., cols 14,800..).
    window = DetailImage(np.zeros((512, 512, 3), dtype=np.uint8), left=14_800, top=18_800,
                         scale=1.0)
    layers, peak = _peak(lambda: dict(overlay.mask_layers(
        s, (512, 512), False, ("GT mask", "predicted mask"), window)))
    expected = np.zeros((512, 512), dtype=bool)
    expected[200:250, 200:240] = True
    np.testing.assert_array_equal(layers["GT mask"], expected)
    assert layers["predicted mask"].sum() == 50 * 40
    assert peak < BUDGET, f"{peak / 2**20:.0f} MB traced"
    # The whole scene drawn at 1,000 x 1,000 (nearest by pixel centres, every 20th pixel).
    whole, peak = _peak(lambda: dict(overlay.mask_layers(s, (1000, 1000), False,
                                                         ("GT mask",))))
    rows, cols = np.nonzero(whole["GT mask"])
    assert set(rows.tolist()) == {5, 6, 950, 951} and peak < BUDGET


def test_take_equals_decoding_on_small_masks() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        pixels = (rng.random((h, w)) < rng.random()).astype(np.uint8)
        rle = masks.parse_rle(masks.encode(pixels))[0]
        rows, cols = np.sort(rng.integers(0, h, 17)), np.sort(rng.integers(0, w, 13))
        got = (masks.take(masks.runs_of(rle), rows, cols) if rle is not None
               else np.zeros((17, 13), dtype=bool))
        np.testing.assert_array_equal(got, pixels[np.ix_(rows, cols)].astype(bool))


def test_beyond_the_codec_cap_is_refused_with_its_reason() -> None:
    with pytest.raises(masks.FieldError) as err:
        masks.parse_rle({"size": [32_768, 16_384], "counts": [2**29]})
    assert "536,870,911" in err.value.expected and "pycocotools" in err.value.expected
    rle, size = masks.parse_rle({"size": [256_999, 2_089], "counts": [2**29 - 1]})
    assert rle is None and size == (256_999, 2_089)


def test_the_cap_is_where_pycocotools_codec_breaks() -> None:
    """The reason docs/cli.md gives, checked on pycocotools itself: a run difference beyond
    -2**29 (seven characters) comes back wrong, one within it right."""
    from pycocotools import mask as cocomask

    for big, right in ((500_000_000, True), (600_000_000, False)):
        runs = [1, big, 1, 5, 3]
        rle = {"size": [sum(runs), 1], "counts": refs.encode_runs_string(runs).encode()}
        assert (int(cocomask.area(rle)) == big + 5) is right
