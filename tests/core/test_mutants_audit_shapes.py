"""Rules of the label audit's shapes and pairs (ovearth_core/audit/shapes.py) that mutants of it
broke while every other test passed (issue 47; docs/tests.md, "Mutation testing").

Independent references: pycocotools decode + scipy.ndimage labels for mask components,
shapely for polygon areas and IoUs, hand-worked boxes. Inputs are asymmetric on purpose
(non-square images, objects off the origin, rotated polygons) so that a swapped axis, a
dropped pixel edge or a wrong base shows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import shapely
from scipy import ndimage

from ovearth_core import masks
from ovearth_core.analysis.mask_objects import components
from ovearth_core.audit import shapes
from ovearth_core.audit.shapes import Objects
from ovearth_core.types import Sample

H, W = 30, 50  # a non-square image: rows != columns


def _pixels(boxes: list[tuple[int, int, int, int]]) -> np.ndarray:
    out = np.zeros((H, W), dtype=np.uint8)
    for x1, y1, x2, y2 in boxes:
        out[y1:y2, x1:x2] = 1
    return out


def _labels(pixels: np.ndarray) -> np.ndarray:
    """8-connected components in column-major order (mask_objects numbers them so)."""
    lab, _ = ndimage.label(pixels.T, structure=np.ones((3, 3)))
    return lab.T


def test_a_mask_objects_envelope_is_its_pixels_edges() -> None:
    """Rule: a mask component's envelope is xyxy in pixel edges: from its first column and
    row to one past its last (a 1-pixel object at (x, y) is [x, y, x + 1, y + 1]). Three
    components on a 30 x 50 mask: a tall one spanning whole columns, an L shape, one pixel;
    reference: pycocotools decode, scipy labels, numpy min/max. Kills the
    ``_component_envelopes`` mutants (a row for a column, a missing ``+ 1``, the start for
    the stop)."""
    pixels = _pixels([(3, 0, 6, 30), (10, 5, 20, 8), (17, 8, 20, 20), (40, 25, 41, 26)])
    rle = masks.encode(pixels)
    assert (masks.decode(rle) == pixels).all()
    comp = components(rle)
    lab = _labels(pixels)
    want = []
    for k in range(1, lab.max() + 1):
        ys, xs = np.nonzero(lab == k)
        want.append([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])
    assert shapes._component_envelopes(comp).tolist() == want
    assert want == [[3, 0, 6, 30], [10, 5, 20, 20], [40, 25, 41, 26]]


def _sample(**kw: Any) -> Sample:
    return Sample("q1", "plane", False, "a.png", "a1", "plane", W, H, **kw)


def test_objects_carry_their_side_and_their_scores() -> None:
    """Rule: GT objects score 1, predictions their own scores (``nan`` kept); mask
    predictions have none (``nan``), GT mask objects 1; oriented boxes' envelopes are their
    polygons' extents. Kills the ``objects_of`` mutants of the side test, the score source
    and the fill values."""
    boxes = np.array([[1, 2, 5, 9], [10, 3, 20, 4]], dtype=float)
    polys = np.array([[[10, 0], [14, 4], [10, 8], [6, 4]]], dtype=float)  # a diamond
    s = _sample(gt_boxes=boxes[:1], pred_boxes=boxes, pred_box_scores=np.array([0.3, np.nan]),
                gt_obbs=polys, pred_obbs=polys, pred_obb_scores=np.array([0.7]),
                gt_mask=masks.encode(_pixels([(1, 1, 3, 3)])),
                pred_mask=masks.encode(_pixels([(1, 1, 3, 3), (8, 8, 9, 9)])))
    gt = shapes.objects(s, "bbox", "gt")
    assert gt.scores.tolist() == [1.0] and gt.envelope.tolist() == [[1, 2, 5, 9]]
    pred = shapes.objects(s, "bbox", "pred")
    assert pred.scores[0] == 0.3 and np.isnan(pred.scores[1]) and len(pred) == 2
    ogt, opred = shapes.objects(s, "oriented_bbox", "gt"), shapes.objects(s, "oriented_bbox",
                                                                           "pred")
    assert ogt.scores.tolist() == [1.0] and opred.scores.tolist() == [0.7]
    assert opred.envelope.tolist() == [[6, 0, 14, 8]]
    mgt, mpred = shapes.objects(s, "segmentation", "gt"), shapes.objects(s, "segmentation",
                                                                          "pred")
    assert mgt.scores.tolist() == [1.0] and len(mpred) == 2 and np.isnan(mpred.scores).all()
    assert mpred.envelope.tolist() == [[1, 1, 3, 3], [8, 8, 9, 9]]
    empty = shapes.objects(_sample(), "segmentation", "pred")
    assert len(empty) == 0 and empty.envelope.shape == (0, 4)


def _square(cx: float, cy: float, half: float, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float) * half
    return np.array([cx, cy]) + corners @ np.array([[c, s], [-s, c]])


def test_polygon_areas_and_ious_are_the_polygons_not_their_envelopes() -> None:
    """Rule (IoU basis): oriented boxes are intersected as polygons, not as their upright
    envelopes; their areas are the polygons' (shapely). A square turned 30 degrees and a
    rectangle off the origin; an upright box pair for the xyxy formula. Kills the
    ``areas`` / ``_iou`` / ``seed_ious`` mutants passing ``oriented`` wrong or dropping
    the clip at 1."""
    polys = np.stack([_square(20, 20, 10, np.pi / 6), _square(25, 22, 8, 0.0),
                      np.array([[40, 5], [70, 5], [70, 9], [40, 9]], dtype=float)])
    want_area = [shapely.Polygon(p).area for p in polys]
    sets = [Objects(polys[:1], shapes.geometry.envelope(polys[:1]), np.ones(1)),
            Objects(polys[1:], shapes.geometry.envelope(polys[1:]), np.ones(2))]
    assert shapes.areas(sets, "oriented_bbox") == pytest.approx(want_area)
    exact = shapely.Polygon(polys[0]).intersection(shapely.Polygon(polys[1])).area
    want_iou = exact / (want_area[0] + want_area[1] - exact)
    assert shapes.seed_ious(polys, 0, np.array([1, 2]), "oriented_bbox") == pytest.approx(
        [want_iou, 0.0])
    i, j, iou = shapes.pairs(sets[0], sets[1], "oriented_bbox")
    assert (i.tolist(), j.tolist()) == ([0], [0]) and iou == pytest.approx([want_iou])
    boxes = np.array([[10, 20, 30, 60], [20, 30, 50, 40], [100, 100, 101, 101]], dtype=float)
    assert shapes.areas([Objects(boxes, boxes, np.ones(3))], "bbox").tolist() == [800, 300, 1]
    # [20, 30, 30, 40]: 10 x 10 = 100 shared, union 800 + 300 - 100
    assert shapes.seed_ious(boxes, 0, np.array([1, 2]), "bbox") == pytest.approx([0.1, 0.0])
    assert shapes.seed_ious(boxes, 1, np.zeros(0, dtype=np.intp), "bbox").size == 0
    assert shapes.areas([], "bbox").size == 0


def test_pairs_keep_only_positive_ious() -> None:
    """Rule: ``pairs`` lists the pairs with a positive IoU: envelopes that only touch (a
    shared edge) are no pair. Kills ``_iou`` mutants (``iou >= 0``, the union guard)."""
    a = np.array([[0, 0, 10, 10]], dtype=float)
    b = np.array([[10, 0, 20, 10], [5, 0, 15, 10]], dtype=float)
    i, j, iou = shapes.pairs(Objects(a, a, np.ones(1)), Objects(b, b, np.ones(2)), "bbox")
    assert (i.tolist(), j.tolist()) == ([0], [1]) and iou == pytest.approx([50 / 150])


def test_pooled_candidates_keep_only_the_eligible() -> None:
    """Rule: with ``eligible`` given, no pair holds an object left out (matched objects do
    not cluster); numbering runs one set after another. Boxes and masks."""
    b = np.array([[0, 0, 10, 10], [2, 2, 12, 12], [4, 4, 14, 14]], dtype=float)
    sets = [Objects(b[:1], b[:1], np.ones(1)), Objects(b[1:], b[1:], np.ones(2))]
    u, v, known = shapes.pooled_candidates(sets, "bbox")
    assert sorted(zip(u.tolist(), v.tolist(), strict=True)) == [(0, 1), (0, 2), (1, 2)]
    assert known is None
    u, v, _ = shapes.pooled_candidates(sets, "bbox", np.array([True, False, True]))
    assert sorted(zip(u.tolist(), v.tolist(), strict=True)) == [(0, 2)]
    near = shapes.seed_search(sets, np.array([True, False, True]))
    assert near(0).tolist() == [2]  # the others, not itself
    ma = components(masks.encode(_pixels([(0, 0, 10, 10), (30, 0, 40, 10)])))
    mb = components(masks.encode(_pixels([(5, 0, 15, 10), (32, 0, 42, 10)])))
    msets = [Objects(c, shapes._component_envelopes(c), np.ones(c.count)) for c in (ma, mb)]
    u, v, iou = shapes.pooled_candidates(msets, "segmentation")
    assert sorted(zip(u.tolist(), v.tolist(), strict=True)) == [(0, 2), (1, 3)]
    # [5, 10) x 10 rows shared of 100 + 100: 50 / 150; [32, 40): 80 / 120
    got = dict(zip(zip(u.tolist(), v.tolist(), strict=True), iou.tolist(), strict=True))
    assert got[0, 2] == pytest.approx(50 / 150) and got[1, 3] == pytest.approx(80 / 120)
    u, v, iou = shapes.pooled_candidates(msets, "segmentation",
                                         np.array([True, False, True, False]))
    assert list(zip(u.tolist(), v.tolist(), strict=True)) == [(0, 2)]


def test_masks_of_another_size_share_no_pixel() -> None:
    """Rule: masks of a size other than the first non-empty one share no pixel with it."""
    a = components(masks.encode(_pixels([(0, 0, 10, 10)])))
    b = components(masks.encode(np.ones((H + 1, W), dtype=np.uint8)))
    sets = [Objects(c, shapes._component_envelopes(c), np.ones(c.count)) for c in (a, b)]
    u, v, iou = shapes.pooled_candidates(sets, "segmentation")
    assert u.size == v.size == iou.size == 0


@pytest.mark.parametrize(("env", "want"), [
    ([10.004, 20.006, 40.5, 60.0], [10.0, 20.01, 30.5, 39.99]),
    ([0, 0, 1, 2], [0.0, 0.0, 1.0, 2.0]), ([3.456, 7.891, 5.0, 9.0], [3.46, 7.89, 1.54, 1.11])])
def test_xywh_is_corner_and_size_to_the_hundredth(env: list[float], want: list[float]) -> None:
    assert shapes.xywh(np.array(env, dtype=float)) == want


# ---- second pass (issue 47: the first mutmut run of this module, 453 / 525) -------------

def test_objects_are_the_sides_own_geometry_as_floats() -> None:
    """Rule: ``objects`` of the ground truth are the GT's boxes, polygons or mask
    components, of the prediction the prediction's (two different sets here, of different
    counts: a swapped side shows), the geometry itself kept (what pairs are intersected
    on), scores float64 even when a file gave whole numbers. Kills ``objects_of`` 11, 13,
    28, 36, 38, 45-49, 64."""
    gt_polys = np.array([[[10, 0], [14, 4], [10, 8], [6, 4]]], dtype=float)
    pred_polys = np.array([[[30, 10], [36, 10], [36, 12], [30, 12]],
                           [[1, 1], [3, 1], [3, 2], [1, 2]]], dtype=float)
    s = _sample(gt_boxes=np.array([[1, 2, 5, 9]], dtype=float),
                pred_boxes=np.array([[0, 0, 1, 1], [2, 2, 4, 4]], dtype=float),
                pred_box_scores=np.array([1, 0]),  # integers
                gt_obbs=gt_polys, pred_obbs=pred_polys, pred_obb_scores=np.array([1, 0]),
                gt_mask=masks.encode(_pixels([(1, 1, 3, 3)])),
                pred_mask=masks.encode(_pixels([(1, 1, 3, 3), (8, 8, 9, 9)])))
    for modality in ("bbox", "oriented_bbox"):
        pred = shapes.objects(s, modality, "pred")
        assert pred.scores.dtype == np.float64 and pred.scores.tolist() == [1.0, 0.0]
    ogt, opred = (shapes.objects(s, "oriented_bbox", side) for side in ("gt", "pred"))
    assert ogt.geom.tolist() == gt_polys.tolist() and len(ogt) == 1
    assert opred.geom.tolist() == pred_polys.tolist() and len(opred) == 2
    assert opred.envelope.tolist() == [[30, 10, 36, 12], [1, 1, 3, 2]]
    mpred = shapes.objects(s, "segmentation", "pred")
    assert mpred.geom.count == 2 and mpred.geom.size == (H, W)


def test_a_single_mask_object_and_one_ending_at_a_columns_top_have_envelopes() -> None:
    """Rule: a mask with one component has its envelope (not the empty's zeros); a
    component whose last pixel is the first row of a column ends one past that column and
    one past that row. Reference: the pixels drawn. Kills ``_component_envelopes`` 5 and
    12."""
    one = components(masks.encode(_pixels([(7, 0, 8, 1)])))
    assert shapes._component_envelopes(one).tolist() == [[7, 0, 8, 1]]
    pixels = _pixels([(4, 0, 5, 30), (5, 0, 6, 1)])  # all of column 4, then (5, 0)
    comp = components(masks.encode(pixels))
    assert comp.count == 1
    assert shapes._component_envelopes(comp).tolist() == [[4, 0, 6, 30]]


def _mask_objects(boxes: list[tuple[int, int, int, int]], shape: tuple[int, int] = (H, W)
                  ) -> Objects:
    pixels = np.zeros(shape, dtype=np.uint8)
    for x1, y1, x2, y2 in boxes:
        pixels[y1:y2, x1:x2] = 1
    c = components(masks.encode(pixels))
    return Objects(c, shapes._component_envelopes(c), np.ones(c.count))


def test_mask_pairs_are_the_shared_pixels_of_components() -> None:
    """Rule: masks pair by the pixels their components share (IoU by pixel counts, numpy),
    a with each set's components in that set's own numbering: ``pairs`` and
    ``pairs_by_set`` of masks. a: [0, 10) x [0, 10) and [30, 40) x [0, 10); b: [5, 15) x
    [0, 10) (50 shared of 100 + 100), c: [32, 42) x [0, 10) (80 of 100 + 100). Kills
    ``pairs`` 2-7 and ``pairs_by_set`` 1-4, 6-11."""
    a = _mask_objects([(0, 0, 10, 10), (30, 0, 40, 10)])
    b, c = _mask_objects([(5, 0, 15, 10)]), _mask_objects([(32, 0, 42, 10)])
    i, j, iou = shapes.pairs(a, b, "segmentation")
    assert (i.tolist(), j.tolist()) == ([0], [0]) and iou == pytest.approx([50 / 150])
    got = shapes.pairs_by_set(a, [b, c], "segmentation")
    assert [(i.tolist(), j.tolist()) for i, j, _ in got] == [([0], [0]), ([1], [0])]
    assert [iou.tolist() for _, _, iou in got] == [pytest.approx([50 / 150]),
                                                   pytest.approx([80 / 120])]


def test_no_set_no_pairs_and_no_object_no_candidates() -> None:
    """Rule: nothing to pair with is no pair, not an error: ``pairs_by_set`` of no set is
    empty; pooled candidates and a seed search over no set find none. Kills
    ``pairs_by_set`` 5, ``pooled_candidates`` 7, 9, ``seed_search`` 4, 6."""
    box = np.array([[0, 0, 10, 10]], dtype=float)
    a = Objects(box, box, np.ones(1))
    assert shapes.pairs_by_set(a, [], "bbox") == []
    u, v, iou = shapes.pooled_candidates([], "bbox")
    assert u.size == v.size == 0 and iou is None
    near = shapes.seed_search([], np.zeros(0, dtype=bool))
    assert callable(near)


def test_ious_of_sub_pixel_boxes_are_their_ratio() -> None:
    """Rule: IoU is intersection over union at any size: boxes smaller than a pixel
    (union 0.375 px²) have IoU 0.125 / 0.375 = 1/3, not the intersection alone; two
    zero-area boxes at one point have IoU 0, not ``nan``. Kills ``_iou`` 28,
    ``seed_ious`` 37, 38."""
    boxes = np.array([[0, 0, 0.5, 0.5], [0.25, 0, 0.75, 0.5], [2, 2, 2, 2], [2, 2, 2, 2]])
    assert shapes.seed_ious(boxes, 0, np.array([1]), "bbox") == pytest.approx([1 / 3])
    i, j, iou = shapes.pairs(Objects(boxes[:1], boxes[:1], np.ones(1)),
                             Objects(boxes[1:2], boxes[1:2], np.ones(1)), "bbox")
    assert iou == pytest.approx([1 / 3])
    got = shapes.seed_ious(boxes, 2, np.array([3]), "bbox")
    assert got.tolist() == [0.0] and got.dtype == np.float64


# A rotated box whose polygon clipped with itself comes out a hair larger than its own area
# in floating point (found by drawing boxes at random): its IoU with itself computes as
# 1.0000000000000002 before the clip.
TURNED = np.array([[107.10387411734321, 39.46682366482273],
                   [85.73130246074905, 48.467432872496985],
                   [84.92105030676329, 46.54343286078609],
                   [106.29362196335745, 37.54282365311184]])


def test_an_identical_rotated_box_has_iou_exactly_one() -> None:
    """Rule: IoU never exceeds 1, even where floating point makes the intersection a hair
    larger than the union (a rotated box with itself): a tie at the threshold, a
    consensus's mean IoU and a "same object" test rely on it. Kills ``_iou`` 30 and
    ``seed_ious`` 40."""
    from ovearth_core import geometry

    two = np.stack([TURNED, TURNED])
    inter, union = geometry.pair_overlaps(two, two, np.array([0]), np.array([1]), True)
    assert inter[0] / union[0] > 1.0  # the floating-point excess the clip removes
    assert shapes.seed_ious(two, 0, np.array([1]), "oriented_bbox").tolist() == [1.0]
    env = geometry.envelope(two)
    _, _, iou = shapes.pairs(Objects(two[:1], env[:1], np.ones(1)),
                             Objects(two[1:], env[1:], np.ones(1)), "oriented_bbox")
    assert iou.tolist() == [1.0]


def test_rotated_boxes_whose_envelopes_overlap_but_not_they_are_no_pair() -> None:
    """Rule: ``pairs`` lists only a positive IoU: two diamonds, diagonal neighbours, whose
    upright envelopes overlap but whose polygons do not touch (shapely says they are
    disjoint) are no pair. Kills ``_iou`` 32."""
    from ovearth_core import geometry

    d1 = np.array([[[10, 0], [20, 10], [10, 20], [0, 10]]], dtype=float)
    d2 = d1 + np.array([15.0, 15.0])  # edges x + y = 30 and x + y = 40: apart
    assert not shapely.Polygon(d1[0]).intersects(shapely.Polygon(d2[0]))
    a = Objects(d1, geometry.envelope(d1), np.ones(1))
    b = Objects(d2, geometry.envelope(d2), np.ones(1))
    assert geometry.envelope_pairs(a.envelope, b.envelope)[0].size == 1  # envelopes overlap
    i, j, iou = shapes.pairs(a, b, "oriented_bbox")
    assert i.size == j.size == iou.size == 0


def test_masks_pair_with_the_first_non_empty_masks_size() -> None:
    """Rule: the masks paired are those of the first non-empty mask's size, wherever the
    others are: sizes (30 x 50), (31 x 50), (30 x 50) pair the first and the third; one
    non-empty mask pairs with nothing; the indices are integers (they index the pooled
    objects), empty or not. Kills ``_mask_pairs`` 9, 12, 14."""
    a = _mask_objects([(0, 0, 10, 10)])
    other = _mask_objects([(0, 0, 10, 10)], (H + 1, W))
    c = _mask_objects([(5, 0, 15, 10)])
    u, v, iou = shapes.pooled_candidates([a, other, c], "segmentation")
    assert (u.tolist(), v.tolist()) == ([0], [2]) and iou == pytest.approx([50 / 150])
    empty = _mask_objects([])
    u, v, iou = shapes.pooled_candidates([a, empty], "segmentation")
    assert u.size == v.size == iou.size == 0
    assert u.dtype.kind == v.dtype.kind == "i"
