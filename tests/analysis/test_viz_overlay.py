"""Overlay drawing: zoom region, match colours, mask compositing and the plotly figure."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from app_fixtures import rect_mask

from ovearth_core.geometry import box_iou_matrix
from ovearth_core.masks import encode as encode_json
from ovearth_core.masks import parse_rle
from ovearth_core.metrics import det_entry
from ovearth_core.types import Sample
from ovearth_core.viz import overlay
from ovearth_core.viz.images import DisplayImage

H, W = 48, 64


def _rle(box: tuple[int, int, int, int]) -> dict:
    return parse_rle(encode_json(rect_mask(*box)))[0]


def _obb(x1: float, y1: float, x2: float, y2: float) -> list:
    return [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]


def _sample(**kw) -> Sample:
    base = {"sample_id": "q1", "phrase": "tank", "negative": False, "image_path": "x.png",
            "ann_id": "a", "category": "tank", "width": W, "height": H}
    return Sample(**{**base, **kw})


def _image(value: int = 0, scale: float = 1.0) -> DisplayImage:
    h, w = round(H * scale), round(W * scale)
    return DisplayImage(np.full((h, w, 3), value, dtype=np.uint8), scale, W, H)


def test_extent_and_zoom_region() -> None:
    s = _sample(gt_boxes=np.array([[10.0, 10, 20, 20]]),
                pred_obbs=np.array([_obb(30, 12, 34, 16)], dtype=float),
                pred_mask=_rle((40, 30, 42, 33)))
    assert overlay.geometry_extent(s) == (10.0, 10.0, 42.0, 33.0)
    x0, y0, x1, y1 = overlay.zoom_region(s, margin=0.1, min_size=4)
    assert (x0, x1) == pytest.approx((10 - 3.2, 42 + 3.2))  # 32 wide, 0.1 margin each side
    assert y1 - y0 == pytest.approx(x1 - x0)  # square view around the centre
    assert 0 <= y0 and y1 <= H
    assert overlay.geometry_extent(s, predictions=False) == (10.0, 10.0, 20.0, 20.0)
    assert overlay.zoom_region(s, "GT only", margin=0.5, min_size=4) == (5.0, 5.0, 25.0, 25.0)
    assert overlay.zoom_region(s, "full image") == (0.0, 0.0, W, H)
    preds_only = _sample(pred_boxes=np.array([[30.0, 30, 34, 34]]))
    assert overlay.zoom_region(preds_only, "GT only", 0, 4) == (30.0, 30.0, 34.0, 34.0)


def test_zoom_region_clips_and_defaults_to_full_image() -> None:
    assert overlay.zoom_region(_sample()) == (0.0, 0.0, W, H)
    corner = _sample(gt_boxes=np.array([[0.0, 0, 2, 2]]))
    assert overlay.zoom_region(corner, min_size=10) == (0.0, 0.0, 10.0, 10.0)
    huge = _sample(gt_boxes=np.array([[1.0, 1, 63, 47]]))
    assert overlay.zoom_region(huge) == (0.0, 0.0, W, H)


def test_match_status() -> None:
    gs, ps, giou, piou = overlay.match_status(3, 2, [[2, 0, 0.75]])
    assert gs == ["missed", "missed", "matched"] and ps == ["matched", "false positive"]
    assert giou == [None, None, 0.75] and piou == [0.75, None]


def test_compose_gt_and_pred_masks() -> None:
    s = _sample(gt_mask=_rle((0, 0, 10, 10)), pred_mask=_rle((5, 0, 15, 10)))
    out = overlay.compose(_image(100), s, opacity=1.0)
    assert tuple(out[5, 2]) == overlay.MASK_COLOURS["GT mask"]
    assert tuple(out[5, 12]) == overlay.MASK_COLOURS["predicted mask"]
    assert tuple(out[5, 7]) == overlay.MASK_COLOURS["predicted mask"]  # drawn last
    assert tuple(out[30, 30]) == (100, 100, 100)
    only_gt = overlay.compose(_image(100), s, layers={"GT mask"}, opacity=0.5)
    assert tuple(only_gt[5, 12]) == (100, 100, 100)
    assert tuple(only_gt[5, 2]) == tuple(
        round(0.5 * 100 + 0.5 * c) for c in overlay.MASK_COLOURS["GT mask"])


def test_compose_pixel_mode_on_downscaled_image() -> None:
    s = _sample(gt_mask=_rle((0, 0, 20, 20)), pred_mask=_rle((10, 0, 30, 20)))
    out = overlay.compose(_image(0, scale=0.5), s, opacity=1.0, pixel_mode=True)
    assert out.shape == (24, 32, 3)
    assert tuple(out[4, 2]) == overlay.MASK_COLOURS["FN pixels"]  # x 4 in original
    assert tuple(out[4, 7]) == overlay.MASK_COLOURS["TP pixels"]  # x 14
    assert tuple(out[4, 12]) == overlay.MASK_COLOURS["FP pixels"]  # x 24
    assert tuple(out[20, 20]) == (0, 0, 0)


def _detection_sample() -> tuple[Sample, dict]:
    gt = np.array([[10.0, 10, 20, 20], [40, 30, 50, 40]])
    pred = np.array([[10.0, 10, 20, 21], [0, 0, 5, 5]])
    s = _sample(gt_boxes=gt, pred_boxes=pred, pred_box_scores=np.array([0.9, np.nan]))
    return s, {"bbox": det_entry(box_iou_matrix(gt, pred), False, 0.5), "oriented_bbox": None}


def test_box_groups_colours_and_labels() -> None:
    s, row = _detection_sample()
    items = overlay.box_groups(s, row["bbox"], oriented=False)
    assert [(i["role"], i["status"]) for i in items] == [
        ("GT", "matched"), ("GT", "missed"), ("pred", "matched"), ("pred", "false positive")]
    assert [i["colour"] for i in items] == [overlay.MATCHED, overlay.MISSED, overlay.MATCHED,
                                            overlay.FALSE_POSITIVE]
    assert items[0]["label"] == "GT IoU 0.91" and items[1]["label"] == "GT missed"
    assert items[2]["label"] == "score 0.90 · IoU 0.91" and items[3]["label"] == "FP"
    np.testing.assert_array_equal(items[0]["outline"][[0, -1]], [[10, 10], [10, 10]])


def test_oriented_outline_is_closed_polygon() -> None:
    poly = np.array([_obb(1, 2, 5, 6)], dtype=float)
    s = _sample(gt_obbs=poly)
    (item,) = overlay.box_groups(s, None, oriented=True)
    assert item["outline"].shape == (5, 2) and item["status"] == "missed"


def _outlines(fig: go.Figure) -> list[go.Scatter]:
    return [t for t in fig.data if isinstance(t, go.Scatter) and t.mode == "lines"
            and t.x[0] is not None]


def test_overlay_figure() -> None:
    s, row = _detection_sample()
    region = (5.0, 5.0, 25.0, 25.0)
    fig = overlay.overlay_figure(_image(50), s, row, region=region)
    assert isinstance(fig, go.Figure)
    kinds = [type(t).__name__ for t in fig.data]
    assert kinds[0] == "Image" and fig.data[0].source.startswith("data:image/jpeg;base64,")
    boxes = _outlines(fig)
    assert len(boxes) == 4
    assert {t.line.color for t in boxes} == {overlay.MATCHED, overlay.MISSED,
                                             overlay.FALSE_POSITIVE}
    assert [t.line.dash for t in boxes] == ["solid", "solid", "dash", "dash"]
    assert tuple(fig.layout.xaxis.range) == (5.0, 25.0)
    assert tuple(fig.layout.yaxis.range) == (25.0, 5.0)  # y down
    assert {a.text for a in fig.layout.annotations} >= {"HBB GT missed", "HBB FP"}
    legend = {t.name for t in fig.data if isinstance(t, go.Scatter) and t.showlegend is not False}
    assert {"GT box matched", "GT box missed", "pred box false positive", "GT mask"} <= legend


def test_overlay_figure_layers_hide_boxes() -> None:
    s, row = _detection_sample()
    fig = overlay.overlay_figure(_image(), s, row, layers={"GT HBB"})
    boxes = _outlines(fig)
    assert len(boxes) == 2 and all(t.line.dash == "solid" for t in boxes)
    assert tuple(fig.layout.xaxis.range) == (0.0, W)


def test_thumbnail_marks_region() -> None:
    box = np.array([[20.0, 20], [28, 20], [28, 28], [20, 28], [20, 20]])
    thumb = overlay.thumbnail(_image(0, scale=0.5), (16.0, 8.0, 48.0, 40.0),
                              [(box, "#ff0000")], max_side=64)
    arr = np.asarray(thumb)
    assert arr.shape == (24, 32, 3)
    assert tuple(arr[4, 8]) == (255, 235, 0)  # the region's top-left corner (x 16, y 8) / 2
    assert tuple(arr[10, 12]) == (255, 0, 0)  # the box's corner (20, 20) / 2
    assert tuple(arr[12, 16]) == (0, 0, 0)  # inside, not outlined
    plain = np.asarray(overlay.thumbnail(_image(0, scale=0.5), None, max_side=64))
    assert plain.max() == 0


def test_many_gt_boxes_are_not_labelled() -> None:
    gt = np.array([[i * 4.0, 0, i * 4 + 3, 3] for i in range(15)])
    s = _sample(gt_boxes=gt, pred_boxes=np.array([[30.0, 30, 40, 40]]))
    row = {"bbox": det_entry(box_iou_matrix(gt, s.pred_boxes), False, 0.5)}
    fig = overlay.overlay_figure(_image(), s, row)
    assert [a.text for a in fig.layout.annotations] == ["HBB FP"]
    # 16 outlines in two traces (GT missed, pred FP), each outline ended by a NaN gap
    assert [int(np.isnan(t.x).sum()) for t in _outlines(fig)] == [15, 1]


def test_mask_resampling_is_nearest_by_pixel_centre() -> None:
    """Display masks sample the full-resolution mask at each display pixel's centre."""
    from ovearth_core import masks as masks_mod

    rng = np.random.default_rng(7)
    for _ in range(20):
        h, w = (int(v) for v in rng.integers(30, 400, 2))
        full = (rng.random((h, w)) < 0.3).astype(np.uint8)
        shape = (int(rng.integers(10, h + 1)), int(rng.integers(10, w + 1)))
        rle = masks_mod.encode(full)
        rle["counts"] = rle["counts"].encode()
        rows = np.floor((np.arange(shape[0]) + 0.5) * h / shape[0]).astype(int)
        cols = np.floor((np.arange(shape[1]) + 0.5) * w / shape[1]).astype(int)
        sample = _sample(width=w, height=h, gt_mask=rle)
        (name, shown), = overlay.mask_layers(sample, shape, False, ["GT mask"])
        assert name == "GT mask"
        assert np.array_equal(shown, full[rows][:, cols].astype(bool))


def _scene(gt: list[list[float]], pred: list[list[float]], size: int = 4000) -> Sample:
    return Sample(sample_id="q", phrase="car", negative=False, image_path="x.png", ann_id="a",
                  category="car", width=size, height=size,
                  gt_boxes=np.array(gt, dtype=float).reshape(-1, 4),
                  pred_boxes=np.array(pred, dtype=float).reshape(-1, 4))


@pytest.mark.parametrize(("gt", "pred"), [
    ([[2000, 2000, 2010, 2010]], [[10, 10, 300, 300]]),  # a scattered prediction
    ([[2000, 2000, 2010, 2010], [100, 3800, 160, 3860]], []),  # GT boxes far apart
    ([[3995, 0, 4000, 10]], []),  # at the image's corner
])
def test_gt_target_shows_a_10_px_target_at_40_px_or_more(gt, pred) -> None:
    s = _scene(gt, pred)
    x0, y0, x1, y1 = overlay.zoom_region(s, "GT target")
    assert 0 <= x0 < x1 <= 4000 and 0 <= y0 < y1 <= 4000
    g = np.array(gt[0])
    assert x0 <= g[0] and g[2] <= x1 and y0 <= g[1] and g[3] <= y1  # the target is in view
    side = max(g[2] - g[0], g[3] - g[1])
    assert side * overlay.VIEW_PX / max(x1 - x0, y1 - y0) >= 40
    # The old default widened to the prediction or to every GT box.
    wide = overlay.zoom_region(s, "GT and predictions")
    assert max(wide[2] - wide[0], wide[3] - wide[1]) >= max(x1 - x0, y1 - y0)


def test_gt_target_keeps_the_envelope_when_every_object_is_big_enough() -> None:
    s = _scene([[100, 100, 160, 160], [300, 300, 360, 360]], [])
    assert overlay.zoom_region(s, "GT target") == overlay.zoom_region(s, "GT only")


def test_figure_height_suits_the_image() -> None:
    assert overlay.figure_height(4484, 3000) >= 700
    assert overlay.figure_height(1024, 600) >= 700
    assert overlay.figure_height(64, 48) < 700


def test_labels_off_leaves_hover_text_only() -> None:
    s = _scene([[10, 10, 20, 20]], [[12, 12, 22, 22]], size=64)
    s = Sample(**{**s.__dict__, "width": W, "height": H})
    row = {"bbox": {"matches": []}, "oriented_bbox": None}
    fig = overlay.overlay_figure(DisplayImage(np.zeros((H, W, 3), np.uint8), 1.0, W, H), s,
                                 row, labels=False)
    assert not fig.layout.annotations
    hovers = [h for t in fig.data if getattr(t, "hovertext", None) is not None
              for h in t.hovertext if h]
    assert any("GT missed" in h for h in hovers) and any("FP" in h for h in hovers)


def test_object_region_is_the_view_of_one_box() -> None:
    s = _scene([[2000, 2000, 2010, 2010], [100, 3800, 160, 3860]], [])
    (first, second) = overlay.box_groups(s, None, oriented=False)
    x0, y0, x1, y1 = overlay.object_region(s, second["outline"])
    assert (x1 - x0, y1 - y0) == (96.0, 96.0) and x0 <= 100 and x1 >= 160
    assert overlay.object_region(s, first["outline"]) == (1957.0, 1957.0, 2053.0, 2053.0)
