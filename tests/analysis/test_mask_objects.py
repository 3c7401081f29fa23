"""Object-level outcomes of mask components: hand-worked scenes and a brute-force reference
(per-pixel numpy IoUs, scipy's labels on the whole mask, every matching enumerated)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import ndimage

from ovearth_core import masks
from ovearth_core.analysis import mask_objects, objects
from ovearth_core.types import Sample

H, W = 30, 80
IMAGE = "images/scene.png"


def _mask(rects: list[tuple[int, int, int, int]], shape: tuple[int, int] = (H, W)
          ) -> np.ndarray:
    """0/1 mask with each ``(row0, row1, col0, col1)`` (inclusive) set."""
    m = np.zeros(shape, dtype=np.uint8)
    for r0, r1, c0, c1 in rects:
        m[r0:r1 + 1, c0:c1 + 1] = 1
    return m


def _rle(pixels: np.ndarray) -> masks.Rle | None:
    return masks.parse_rle(masks.encode(pixels))[0]


def _sample(qid: str, category: str, gt: np.ndarray | None, pred: np.ndarray | None,
            negative: bool = False, image: str = IMAGE) -> Sample:
    h, w = (gt if gt is not None else pred).shape
    return Sample(qid, category, negative, image, f"ann-{qid}", category, w, h,
                  gt_mask=None if gt is None else _rle(gt),
                  pred_mask=None if pred is None else _rle(pred))


# Ships in rows 2-7: S0 (cols 0-9), S1 (14-23), S2 (28-34), S3 (36-40), S4 (46-51).
SHIPS = _mask([(2, 7, 0, 9), (2, 7, 14, 23), (2, 7, 28, 34), (2, 7, 36, 40), (2, 7, 46, 51)])
SHIP_PRED = _mask([
    (2, 7, 0, 9),     # P0 = S0: matched
    (2, 7, 14, 20),   # P1 split of S1, 42/60 = 0.7: matched
    (2, 7, 22, 23),   # P2 its other half, 12/60 = 0.2: localisation (S1 already matched)
    (2, 7, 27, 41),   # P3 merged over S2 and S3 (42/90, 30/90): localisation -> S2
    (15, 20, 56, 65),  # P4 = small vehicle V0: class confusion
    (15, 20, 68, 70),  # P5 on small vehicle V1, 18/60 = 0.3, no ship: both
    (25, 27, 72, 76),  # P6 a blob on nothing: background
])
# Small vehicles in rows 15-20: V0 (cols 56-65), V1 (68-77); their query finds V0.
SVS = _mask([(15, 20, 56, 65), (15, 20, 68, 77)])
SV_PRED = _mask([(15, 20, 56, 65)])
# A negative "large vehicle" query paints V1 (class confusion) and a blob (background).
LV_PRED = _mask([(15, 20, 68, 77), (2, 5, 72, 76)])


def _scene() -> list[Sample]:
    return [_sample("q-ship", "ship", SHIPS, SHIP_PRED),
            _sample("q-sv", "small vehicle", SVS, SV_PRED),
            _sample("q-lv", "large vehicle", None, LV_PRED, negative=True)]


def test_hand_worked_scene() -> None:
    ship, sv, lv = objects.query_objects(_scene(), "segmentation", 0.5)
    assert ship.modality == "segmentation"
    assert ship.pred_outcome == ("matched", "matched", "localisation", "localisation",
                                 "class confusion", "both", "background")
    # S2 is mislocalised (the merged blob's best GT), S3 missed beside it, S4 missed.
    assert ship.gt_outcome == ("matched", "matched", "mislocalised", "missed", "missed")
    assert sv.pred_outcome == ("matched",)
    assert sv.gt_outcome == ("matched", "found as other class")
    assert lv.pred_outcome == ("class confusion", "background")
    assert lv.gt_outcome == ()
    assert ship.pred_iou.tolist() == pytest.approx([1, 42 / 60, 12 / 60, 42 / 90, 0, 0, 0])
    assert ship.pred_gt.tolist() == [0, 1, 1, 2, 0, 0, 0]
    assert ship.pred_other_category[4:] == ("small vehicle", "small vehicle", "")
    assert ship.pred_other_iou.tolist() == pytest.approx([0, 0, 0, 0, 1, 18 / 60, 0])
    assert ship.gt_iou.tolist() == pytest.approx([1, 42 / 60, 42 / 90, 30 / 90, 0])
    assert np.isnan(ship.pred_score).all()
    # The V1 the small-vehicle query missed: nearest prediction is the large vehicle's.
    assert (sv.gt_near_query[1], sv.gt_near_category[1], sv.gt_near_index[1]) == \
        ("q-lv", "large vehicle", 0)
    assert sv.gt_near_iou[1] == pytest.approx(1.0)


def test_confusion_and_report() -> None:
    out = objects.objects_report(_scene(), ("segmentation",), 0.5)
    # P4 on V0 at IoU 1 and the large vehicle's blob on V1; P5 reaches only 0.3.
    assert out["confusion"]["segmentation"] == {"large vehicle": {"small vehicle": 1},
                                                "ship": {"small vehicle": 1}}
    block = out["objects"]["segmentation"]
    assert block["predictions"] == {"matched": 3, "localisation": 2, "class confusion": 2,
                                    "duplicate": 0, "both": 1, "background": 2}
    assert block["ground_truth"] == {"matched": 3, "mislocalised": 1,
                                     "found as other class": 1, "missed": 2}
    assert set(block["per_query"]) == {"q-ship", "q-sv", "q-lv"}


def test_duplicate_at_a_lower_threshold() -> None:
    # Two disjoint pieces of one 60-pixel GT object: 30/60 and 24/60. At t = 0.3 both
    # reach it; the larger is matched, the other is a duplicate. At 0.5: matched, localisation.
    gt = _mask([(0, 5, 0, 9)], (8, 12))
    pred = _mask([(0, 5, 0, 4), (0, 5, 6, 9)], (8, 12))
    got = objects.query_objects([_sample("q", "ship", gt, pred)], "segmentation", 0.3)[0]
    assert got.pred_outcome == ("matched", "duplicate")
    assert got.gt_outcome == ("matched",)
    got = objects.query_objects([_sample("q", "ship", gt, pred)], "segmentation", 0.5)[0]
    assert got.pred_outcome == ("matched", "localisation")


def test_diagonal_pixels_are_one_object() -> None:
    # A one-pixel-wide diagonal line: one 8-connected object (4-connectivity: six).
    line = np.eye(6, dtype=np.uint8)
    got = mask_objects.components(_rle(line))
    assert got.count == 1 and got.area.tolist() == [6]
    got = objects.query_objects([_sample("q", "bridge", line, line)], "segmentation", 0.5)[0]
    assert got.gt_outcome == ("matched",) and got.pred_outcome == ("matched",)


def test_empty_prediction_misses_every_object() -> None:
    got = objects.query_objects([_sample("q", "ship", SHIPS, None)], "segmentation", 0.5)[0]
    assert got.pred_outcome == () and got.gt_outcome == ("missed",) * 5


def test_other_images_do_not_confuse() -> None:
    scene = _scene()
    moved = [scene[0], _sample("q-sv", "small vehicle", SVS, SV_PRED, image="other.png"),
             scene[2]]
    ship, _, lv = objects.query_objects(moved, "segmentation", 0.5)
    assert ship.pred_outcome[4:] == ("background",) * 3
    assert lv.pred_outcome == ("background", "background")


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 7).flatmap(lambda h: st.integers(1, 9).flatmap(
    lambda w: st.lists(st.booleans(), min_size=h * w, max_size=h * w).map(
        lambda v: np.array(v, dtype=np.uint8).reshape(h, w)))))
def test_components_are_scipys_on_the_pixels(pixels: np.ndarray) -> None:
    # From the runs alone (segments joined across columns) against pycocotools' decode
    # labelled by scipy (8-connected, column-major numbering), pixel for pixel.
    rle = _rle(pixels)
    got = mask_objects.components(rle)
    want = [] if rle is None else _labels(masks.decode(rle))
    assert got.count == len(want)
    h, w = pixels.shape
    for k, ref in enumerate(want):
        mine = np.zeros(h * w, dtype=bool)
        for a, b in zip(got.start[got.label == k], got.stop[got.label == k], strict=True):
            mine[a:b] = True
        assert np.array_equal(mine.reshape(w, h).T, ref), k
        assert got.area[k] == ref.sum()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6).flatmap(lambda h: st.lists(
    st.booleans(), min_size=h * 5, max_size=h * 5).map(
        lambda v, h=h: np.array(v, dtype=np.uint8).reshape(h, 5))), max_size=5))
def test_masks_labelled_together_as_one_by_one(many: list[np.ndarray]) -> None:
    rles = [_rle(m) for m in many]
    together = mask_objects.components_of(rles)
    for got, rle in zip(together, rles, strict=True):
        want = mask_objects.components(rle)
        assert got.size == want.size
        for field in ("start", "stop", "label", "area"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), field


# -- brute force ---------------------------------------------------------------------------

def _labels(pixels: np.ndarray) -> list[np.ndarray]:
    """Boolean masks of the 8-connected components, in column-major order (scipy's order
    on the whole transposed mask)."""
    lab, n = ndimage.label(pixels.T, structure=np.ones((3, 3)))
    return [(lab == k).T for k in range(1, n + 1)]


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.logical_and(a, b).sum() / np.logical_or(a, b).sum())


def _optimum(iou: np.ndarray, t: float) -> tuple[int, float]:
    """Most pairs with IoU >= t, then the largest IoU sum, over every matching (each GT
    object left alone or paired with any free prediction reaching t)."""
    g, p = iou.shape

    def search(row: int, free: frozenset[int]) -> tuple[int, float]:
        if row == g:
            return 0, 0.0
        best = search(row + 1, free)
        for c in free:
            if iou[row, c] >= t:
                k, total = search(row + 1, free - {c})
                best = max(best, (k + 1, total + float(iou[row, c])))
        return best

    return search(0, frozenset(range(p)))


def _first_best(values: list[float]) -> tuple[float, int]:
    """Largest value and its first position (0, 0 when empty)."""
    if not values:
        return 0.0, 0
    top = max(values)
    return top, values.index(top)


def _reference(samples: list[Sample], got: list[objects.QueryObjects], t_f: float,
               t_b: float = objects.BACKGROUND_IOU) -> None:
    gts = [[] if s.negative or s.gt_mask is None else _labels(masks.decode(s.gt_mask))
           for s in samples]
    preds = [[] if s.pred_mask is None else _labels(masks.decode(s.pred_mask))
             for s in samples]
    explained: dict[tuple[int, int], str] = {}
    kinds_of = []
    for q, s in enumerate(samples):
        qo = got[q]
        assert len(qo.gt_outcome) == len(gts[q]) and len(qo.pred_outcome) == len(preds[q])
        iou = np.array([[_iou(g, p) for p in preds[q]] for g in gts[q]]).reshape(
            len(gts[q]), len(preds[q]))
        # The code's matching: pairs at >= t_f, one-to-one, and an optimum.
        pairs = [(int(qo.pred_gt[p]), p) for p, o in enumerate(qo.pred_outcome)
                 if o == "matched"]
        assert len({g for g, _ in pairs}) == len(pairs)
        assert all(iou[g, p] >= t_f for g, p in pairs)
        k, total = _optimum(iou, t_f)
        assert len(pairs) == k
        assert sum(iou[g, p] for g, p in pairs) == pytest.approx(total, abs=1e-12)
        matched_g = {g for g, _ in pairs}
        matched_p = {p for _, p in pairs}
        pool = [(r, g) for r, other in enumerate(samples) if other.category != s.category
                for g in range(len(gts[r]))]
        kinds = []
        for p, pm in enumerate(preds[q]):
            own, own_g = _first_best([float(iou[g, p]) for g in range(len(gts[q]))])
            other, other_i = _first_best([_iou(gts[r][g], pm) for r, g in pool])
            if p in matched_p:
                kind = "matched"
            elif t_b <= own < t_f:
                kind = "localisation"
                if own_g not in matched_g:
                    explained[(q, own_g)] = "mislocalised"
            elif other >= t_f:
                kind = "class confusion"
                explained.setdefault(pool[other_i], "found as other class")
            elif own >= t_f:
                kind = "duplicate"
            elif max(own, other) < t_b:
                kind = "background"
            else:
                kind = "both"
            kinds.append(kind)
            assert qo.pred_iou[p] == pytest.approx(
                iou[qo.pred_gt[p], p] if p in matched_p else own, abs=1e-12)
            assert qo.pred_other_iou[p] == pytest.approx(other, abs=1e-12)
        kinds_of.append(kinds)
    for q, s in enumerate(samples):
        assert list(got[q].pred_outcome) == kinds_of[q], s.sample_id
        matched_g = {int(got[q].pred_gt[p]) for p, o in enumerate(got[q].pred_outcome)
                     if o == "matched"}
        want = ["matched" if g in matched_g else
                explained.get((q, g), "missed") for g in range(len(gts[q]))]
        # "mislocalised" outranks "found as other class" (TIDE's order of fixes).
        assert list(got[q].gt_outcome) == want, s.sample_id


SIZE = (12, 16)
_RECT = st.tuples(st.integers(0, SIZE[0] - 1), st.integers(0, SIZE[1] - 1),
                  st.integers(1, 5), st.integers(1, 6))  # row, col, height, width
# A query: its GT rectangles; predictions copying any query's GT rectangle (by index over
# the image's, so other categories' too) shifted by a pixel, some split in two by
# a cleared column (duplicates, localisation); extra rectangles.
_QUERY = st.tuples(st.lists(_RECT, max_size=4),
                   st.lists(st.tuples(st.integers(0, 11), st.integers(-1, 1),
                                      st.integers(-1, 1), st.booleans()), max_size=4),
                   st.lists(_RECT, max_size=1), st.sampled_from(["a", "b"]),
                   st.booleans())


def _paint(rects: list[tuple[int, int, int, int]]) -> np.ndarray:
    return _mask([(r, r + h - 1, c, c + w - 1) for r, c, h, w in rects], SIZE)


@settings(max_examples=200, deadline=None)
@given(st.lists(_QUERY, min_size=1, max_size=3), st.sampled_from([0.3, 0.5, 0.7]),
       st.lists(st.tuples(st.integers(0, SIZE[0] - 1), st.integers(0, SIZE[1] - 1)),
                max_size=3))
def test_against_brute_force(queries: list, t_f: float, speckle: list) -> None:
    samples = _build(queries, speckle)
    _reference(samples, objects.query_objects(samples, "segmentation", t_f), t_f)


@pytest.mark.parametrize("seed", range(40))
def test_against_brute_force_seeded(seed: int) -> None:
    # Larger objects than hypothesis draws, copied (split half the time) by every query:
    # duplicates (t = 0.3, two pieces of one object) and class confusions show up here.
    rng = np.random.default_rng(seed)

    def rect() -> tuple[int, ...]:
        return (int(rng.integers(0, 9)), int(rng.integers(0, 11)), int(rng.integers(2, 5)),
                int(rng.integers(3, 7)))

    queries = [([rect() for _ in range(rng.integers(0, 4))],
                [(int(rng.integers(0, 12)), int(rng.integers(-1, 2)), int(rng.integers(-1, 2)),
                  bool(rng.random() < 0.5)) for _ in range(rng.integers(0, 5))],
                [rect()] if rng.random() < 0.3 else [], str(rng.choice(["a", "b"])),
                bool(rng.random() < 0.2)) for _ in range(rng.integers(1, 4))]
    samples = _build(queries, [])
    for t_f in (0.3, 0.5):
        _reference(samples, objects.query_objects(samples, "segmentation", t_f), t_f)


def _build(queries: list, speckle: list) -> list[Sample]:
    """The samples of one image: each query's GT rectangles painted, its predictions
    (copies of the image's GT rectangles, shifted, some split by a cleared column, and
    extra rectangles); ``speckle``: pixels added to the first query's prediction."""
    every = [r for gt, *_ in queries for r in gt]
    samples = []
    for k, (gt, copies, extra, cat, negative) in enumerate(queries):
        moved = [(max(every[i % len(every)][0] + dr, 0), max(every[i % len(every)][1] + dc, 0),
                  *every[i % len(every)][2:], split)
                 for i, dr, dc, split in copies] if every else []
        pred = _paint([r[:4] for r in moved] + extra)
        for r, c, h, w, split in moved:
            if split and w >= 3 and c + w // 2 < SIZE[1]:
                pred[r:r + h, c + w // 2] = 0
        for r, c in speckle if k == 0 else ():  # one-pixel blobs, diagonal bridges
            pred[r, c] = 1
        samples.append(_sample(f"q{k}", cat, _paint(gt), pred, negative=negative))
    return samples


def test_merged_over_equal_objects_explains_the_first() -> None:
    # One 48-pixel blob over two equal 12-pixel objects (IoU 12/48 each): as a dense
    # matrix's argmax, the first object in column-major order is its best GT (mislocalised).
    gt = _mask([(0, 3, 0, 2), (0, 3, 4, 6)], (6, 8))
    pred = _mask([(0, 5, 0, 7)], (6, 8))
    got = objects.query_objects([_sample("q", "ship", gt, pred)], "segmentation", 0.5)[0]
    assert got.pred_outcome == ("localisation",)
    assert got.pred_gt.tolist() == [0] and got.pred_iou.tolist() == pytest.approx([0.25])
    assert got.gt_outcome == ("mislocalised", "missed")
