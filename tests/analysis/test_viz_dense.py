"""Dense, large scenes (issue 25): the static view, the thumbnail and the Gallery tile draw
what a scene of thousands of boxes shows, at a cost that follows the view, not the scene.

References: pixel colours at the places a box's outline must be (worked out here from its
corners), and the same picture drawn from a scene holding only the boxes near the view
(boxes elsewhere must change nothing).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image, ImageColor, ImageDraw

from ovearth_core.types import Sample
from ovearth_core.viz import overlay, tiles
from ovearth_core.viz.images import DetailImage, DisplayImage

W, H = 3333, 3546
PITCH = 40  # one box per 40 x 40 cell: 83 x 88 cells, a packed car park


def _scene(n: int = 4000, seed: int = 0) -> tuple[Sample, dict]:
    """``n`` GT boxes (HBB 20 x 10, OBB the same rectangles) on a grid, a prediction
    shifted by 1 px for every GT box but each 7th (missed), and 200 false positives between
    the cells; the row's ``matches`` say so (prediction ``i`` matches GT ``i``)."""
    rng = np.random.default_rng(seed)
    cols = W // PITCH
    idx = rng.choice(cols * (H // PITCH), size=n, replace=False)
    x = (idx % cols) * PITCH + 8.0
    y = (idx // cols) * PITCH + 8.0
    gt = np.stack([x, y, x + 20, y + 10], axis=1)
    found = np.arange(n) % 7 != 0
    fp_x = rng.uniform(0, W - 30, 200)
    fp_y = rng.uniform(0, H - 30, 200)
    pred = np.concatenate([gt[found] + 1.0, np.stack([fp_x, fp_y, fp_x + 12, fp_y + 12], 1)])
    matches = [[int(g), int(p), 0.7] for p, g in enumerate(np.flatnonzero(found))]

    def corners(b: np.ndarray) -> np.ndarray:
        return np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1)

    sample = Sample(sample_id="dense", phrase="car", negative=False, image_path="x.jpg",
                    ann_id="a", category="car", width=W, height=H, gt_boxes=gt,
                    pred_boxes=pred, pred_box_scores=np.full(len(pred), 0.8),
                    gt_obbs=corners(gt), pred_obbs=corners(pred),
                    pred_obb_scores=np.full(len(pred), 0.8))
    entry = {"matches": matches}
    return sample, {"bbox": entry, "oriented_bbox": entry}


def _near(sample: Sample, row: dict, region: overlay.Region, pad: float) -> tuple[Sample, dict]:
    """The scene with only the boxes whose envelope comes within ``pad`` of ``region``
    (matches renumbered)."""
    x0, y0, x1, y1 = region

    def keep(boxes: np.ndarray) -> np.ndarray:
        return ((boxes[:, 2] >= x0 - pad) & (boxes[:, 0] <= x1 + pad)
                & (boxes[:, 3] >= y0 - pad) & (boxes[:, 1] <= y1 + pad))

    kg, kp = keep(sample.gt_boxes), keep(sample.pred_boxes)
    new_g = np.cumsum(kg) - 1
    new_p = np.cumsum(kp) - 1
    matches = [[int(new_g[g]), int(new_p[p]), iou] for g, p, iou in row["bbox"]["matches"]
               if kg[g] and kp[p]]
    near = Sample(sample_id="near", phrase="car", negative=False, image_path="x.jpg",
                  ann_id="a", category="car", width=W, height=H,
                  gt_boxes=sample.gt_boxes[kg], pred_boxes=sample.pred_boxes[kp],
                  pred_box_scores=sample.pred_box_scores[kp], gt_obbs=sample.gt_obbs[kg],
                  pred_obbs=sample.pred_obbs[kp], pred_obb_scores=sample.pred_obb_scores[kp])
    entry = {"matches": matches}
    return near, {"bbox": entry, "oriented_bbox": entry}


def _display(scale: float = 1024 / H) -> DisplayImage:
    h, w = round(H * scale), round(W * scale)
    return DisplayImage(np.full((h, w, 3), 60, dtype=np.uint8), scale, W, H)


@pytest.fixture()
def line_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts ``ImageDraw.line`` calls (each outline or dash drawn)."""
    calls = [0]
    real = ImageDraw.ImageDraw.line

    def counting(self, *args, **kwargs):
        calls[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "line", counting)
    return calls


# A view of about 5 x 5 cells in the middle of the scene, and one across its top-left
# corner (boxes cut by the picture's edge).
VIEWS = [(1600.0, 1700.0, 1800.0, 1900.0), (0.0, 0.0, 130.0, 130.0)]


@pytest.mark.parametrize("region", VIEWS)
def test_static_view_draws_only_what_is_near_the_view(region, line_calls) -> None:
    sample, row = _scene()
    overlay.static_view(_display(), sample, row, region=region, labels=False)
    # at most ~40 cells in view, 2 modalities x (GT + pred): a few hundred strokes with
    # the dashes, never one per box of the scene (16,000 outlines, ~500,000 dashes)
    assert line_calls[0] < 1500


@pytest.mark.parametrize("region", VIEWS)
@pytest.mark.parametrize("layers", [overlay.LAYERS, ("GT HBB",), ("predicted OBB",)])
def test_boxes_away_from_the_view_change_nothing(region, layers) -> None:
    sample, row = _scene()
    near, near_row = _near(sample, row, region, pad=40.0)
    assert 0 < len(near.gt_boxes) < 60
    image = _display()
    dense = np.asarray(overlay.static_view(image, sample, row, layers, region=region,
                                           labels=False))
    alone = np.asarray(overlay.static_view(image, near, near_row, layers, region=region,
                                           labels=False))
    np.testing.assert_array_equal(dense, alone)


def test_dense_view_outlines_in_their_colours_at_their_places() -> None:
    sample, row = _scene()
    region = VIEWS[0]
    x0, y0, x1, y1 = region
    k = overlay.STATIC_PX / max(x1 - x0, y1 - y0)
    picture = np.asarray(overlay.static_view(_display(), sample, row, ("GT HBB",),
                                             region=region, labels=False))
    missed = {g for g in range(len(sample.gt_boxes))} - {m[0] for m in row["bbox"]["matches"]}
    inside = [g for g, b in enumerate(sample.gt_boxes)
              if b[0] >= x0 and b[2] <= x1 and b[1] >= y0 and b[3] <= y1]
    assert len(inside) >= 10 and any(g in missed for g in inside)
    for g in inside:
        bx0, by0, bx1, by1 = (sample.gt_boxes[g] - (x0, y0, x0, y0)) * k
        colour = ImageColor.getrgb(overlay.MISSED if g in missed else overlay.MATCHED)
        mid_x, mid_y = round((bx0 + bx1) / 2), round((by0 + by1) / 2)
        for px, py in ((mid_x, round(by0)), (mid_x, round(by1)), (round(bx0), mid_y),
                       (round(bx1), mid_y)):
            assert tuple(picture[py, px]) == colour, (g, px, py)
        assert tuple(picture[mid_y, mid_x]) == (60, 60, 60)  # inside: the image


def test_a_box_cut_by_the_views_edge_is_drawn() -> None:
    sample, row = _scene()
    g = 0
    bx0, by0, bx1, by1 = sample.gt_boxes[g]
    region = (bx0 + 10, by0 - 100, bx0 + 210, by0 + 100)  # the box's right half in view
    k = overlay.STATIC_PX / 200
    picture = np.asarray(overlay.static_view(_display(), sample, row, ("GT HBB",),
                                             region=region, labels=False))
    colour = ImageColor.getrgb(overlay.MATCHED if any(m[0] == g for m in row["bbox"][
        "matches"]) else overlay.MISSED)
    top = round((by0 - region[1]) * k)
    right = round((bx1 - region[0]) * k)
    assert tuple(picture[top, 5]) == colour  # its top edge, from the picture's left side
    assert tuple(picture[top + 20, right]) == colour  # its right edge


def test_labels_of_a_dense_view_are_the_first_predictions_as_before() -> None:
    """Labels go to the first ``MAX_LABELS`` predictions of the scene (GT boxes unlabelled
    in a dense scene), wherever the view is; which are in view keep theirs."""
    sample, row = _scene()
    shown = overlay.shown_boxes(sample, row)
    labelled = [b for b in shown if b.label is not None]
    assert len(labelled) == overlay.MAX_LABELS
    assert all(b.item["role"] == "pred" and b.tag == "HBB" for b in labelled)
    p0 = sample.pred_boxes[0]
    region = (p0[0] - 20, p0[1] - 20, p0[0] + 80, p0[1] + 80)
    near = overlay.shown_boxes(sample, row, view=region)
    assert labelled[0].label in [b.label for b in near]
    assert len(near) < 100


def test_thumbnail_of_a_dense_scene_shows_every_box() -> None:
    sample, row = _scene(n=600)
    image = _display()
    outlines = [(i["outline"], i["colour"]) for key, oriented in (("bbox", False),)
                for i in overlay.box_groups(sample, row[key], oriented)]
    thumb = np.asarray(overlay.thumbnail(image, None, outlines, max_side=1000))
    k = image.scale * min(1.0, 1000 / max(image.rgb.shape[:2]))
    for (bx0, by0, _, _), (_, colour) in zip(sample.pred_boxes, outlines[600:], strict=True):
        x, y = round(bx0 * k), round(by0 * k)
        patch = thumb[max(0, y - 1):y + 2, max(0, x - 1):x + 2].reshape(-1, 3)
        assert (patch != 60).any(axis=1).any(), (bx0, by0, colour)


def _window(region: overlay.Region) -> DetailImage:
    x0, y0, x1, y1 = (int(v) for v in region)
    return DetailImage(np.full((y1 - y0, x1 - x0, 3), 60, dtype=np.uint8), x0, y0, 1.0)


@pytest.mark.parametrize("modality", ["bbox", "oriented_bbox"])
def test_a_dense_tile_draws_only_its_neighbours(modality, line_calls) -> None:
    sample, row = _scene()
    g = 123
    region = tiles.crop_region(tuple(sample.gt_boxes[g]), W, H)
    drawn = np.asarray(tiles.render_tile(_window(region), sample, region, modality, row,
                                         ("GT", g)))
    assert line_calls[0] < 50
    near, near_row = _near(sample, row, region, pad=10.0)
    own = int(np.flatnonzero((near.gt_boxes == sample.gt_boxes[g]).all(axis=1))[0])
    alone = np.asarray(tiles.render_tile(_window(region), near, region, modality, near_row,
                                         ("GT", own)))
    np.testing.assert_array_equal(drawn, alone)


def test_the_interactive_figure_writes_its_labels_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its 40 labels are set in one go: each ``add_annotation`` copied every label before
    it (860 label objects, 2.5 s, for 40 labels)."""
    from plotly.graph_objs.layout import Annotation

    made = [0]
    real = Annotation.__init__

    def counting(self, *args, **kwargs):
        made[0] += 1
        real(self, *args, **kwargs)

    sample, row = _scene(n=300)
    monkeypatch.setattr(Annotation, "__init__", counting)
    fig = overlay.overlay_figure(_display(), sample, row)
    assert len(fig.layout.annotations) == overlay.MAX_LABELS
    assert made[0] <= 3 * overlay.MAX_LABELS
    texts = [a.text for a in fig.layout.annotations]
    assert texts == [b.label for b in overlay.shown_boxes(sample, row) if b.label]


def _reference_dashes(draw: ImageDraw.ImageDraw, points: np.ndarray, colour: str,
                      width: int, dash: float = 6.0) -> None:
    """The dash rule written out: each edge cut into ``max(1, length // dash)`` equal
    steps, every other step drawn, from the first."""
    for (ax, ay), (bx, by) in zip(points[:-1].tolist(), points[1:].tolist(), strict=True):
        steps = max(1, int(math.hypot(bx - ax, by - ay) // dash))
        for k in range(0, steps, 2):
            t0, t1 = k / steps, min(1.0, (k + 1) / steps)
            draw.line([(ax + (bx - ax) * t0, ay + (by - ay) * t0),
                       (ax + (bx - ax) * t1, ay + (by - ay) * t1)], fill=colour, width=width)


def test_many_dashed_outlines_at_once_are_the_dashes_one_by_one() -> None:
    """A dense view draws all its predicted outlines in one call, in order (a later
    outline over an earlier one), with the dashes of the rule above, at every zoom (edges
    shorter than a dash, exactly a dash, and many dashes long)."""
    rng = np.random.default_rng(3)
    centres = rng.uniform(0, 400, (600, 1, 2))
    sizes = rng.choice([2.0, 6.0, 12.0, 40.0, 91.7], (600, 1, 1))
    angle = rng.uniform(0, np.pi, 600)
    unit = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1], [1, 1]], dtype=float) / 2
    rot = np.stack([np.stack([np.cos(angle), -np.sin(angle)], 1),
                    np.stack([np.sin(angle), np.cos(angle)], 1)], 1)
    polys = centres + sizes * np.einsum("kj,nij->nki", unit, rot)
    colours = [rng.choice([overlay.MATCHED, overlay.FALSE_POSITIVE]) for _ in polys]
    together, one_by_one = (Image.new("RGB", (400, 400)) for _ in range(2))
    overlay.dashed_lines(ImageDraw.Draw(together), polys, colours, 2)
    draw = ImageDraw.Draw(one_by_one)
    for points, colour in zip(polys, colours, strict=True):
        _reference_dashes(draw, points, colour, 2)
    np.testing.assert_array_equal(np.asarray(together), np.asarray(one_by_one))
