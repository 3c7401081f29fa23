"""The batch (numpy) paths equal their item-by-item definitions exactly (issue 6).

The loader parses every box list of a file in one numpy batch
(``boxparse.parse_boxes`` / ``parse_obbs`` / ``parse_gt_boxes`` /
``parse_polygons``) and the evaluator builds all detection entries at once
(``metrics.det_entries``). Their meaning is the scalar functions'
(``parse_box``, ``parse_obb``, ``parse_gt_box``, ``parse_polygon``,
``det_entry``, themselves tested against the spec and independent
references), so these property tests demand identical values, indices, scores,
errors (field, expectation and found value) and entries, bit for bit, on
random mixtures of valid and broken items.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core import boxparse, metrics
from ovearth_core.masks import FieldError

# ------------------------------------------------------------------ strategies

odd_numbers = st.sampled_from([0, 0.0, -0.0, 1, 2.5, -3, 1e308, -1e308, math.inf, math.nan,
                               True, False, None, "1", 2**53 + 1, 2**63 - 1, -(2**63)])
numbers = st.one_of(st.floats(-1e4, 1e4), st.integers(-100, 10_000), odd_numbers)


@st.composite
def plausible_box(draw: Any) -> list[float]:
    x, y = draw(st.floats(0, 500)), draw(st.floats(0, 500))
    return [x, y, x + draw(st.floats(-2, 60)), y + draw(st.floats(-2, 60))]


box_coords = st.one_of(
    plausible_box(),
    st.lists(numbers, min_size=4, max_size=4),
    st.lists(numbers, min_size=0, max_size=6),
    st.just([0, 0, 0, 0]),
    st.just([0.0, -0.0, 0, 0.0]),
    numbers,
)
scores = st.one_of(st.floats(0, 1), st.sampled_from([0, 1, None, True, math.nan, math.inf, "0.5"]))


@st.composite
def rect(draw: Any) -> list[list[float]]:
    cx, cy = draw(st.floats(-1e3, 1e3)), draw(st.floats(-1e3, 1e3))
    w, h = draw(st.floats(0, 50)), draw(st.floats(0, 50))
    a = draw(st.floats(0, 2 * math.pi))
    c, s = math.cos(a), math.sin(a)
    pts = [[cx + px * c - py * s, cy + px * s + py * c]
           for px, py in ((-w, -h), (w, -h), (w, h), (-w, h))]
    if draw(st.booleans()):
        pts = pts[::-1]
    if draw(st.integers(0, 5)) == 0:
        pts[0], pts[1] = pts[1], pts[0]  # self-crossing
    return pts


polygon_coords = st.one_of(
    rect(),
    st.lists(st.lists(numbers, min_size=2, max_size=2), min_size=4, max_size=4),
    st.lists(st.lists(numbers, min_size=0, max_size=3), min_size=0, max_size=5),
    st.just([[1, 1], [2, 2], [3, 3], [4, 4]]),
    st.just([[0, 0], [0, 0], [0, 0], [0, 0]]),
    numbers,
)


def with_objects(coords: st.SearchStrategy[Any], key: str) -> st.SearchStrategy[Any]:
    """Shorthand items, ``{key: ..., "score": ...}`` objects, or a mixture."""
    obj = st.builds(lambda c, s, has: {key: c, "score": s} if has else {key: c},
                    coords, scores, st.booleans())
    broken = st.sampled_from([{}, {"score": 0.5}, "box", None, 3])
    return st.one_of(
        st.lists(coords, max_size=8),
        st.lists(obj, max_size=8),
        st.lists(st.one_of(coords, obj, broken), max_size=8),
    )


# ---------------------------------------------------------------- equivalence


def scalar_batch(items: list[Any], parse: Any) -> tuple[list[Any], list[int], list[float],
                                                         list[tuple[int, str, str, str]]]:
    values, index, found_scores, errors = [], [], [], []
    for j, item in enumerate(items):
        try:
            geom, score = parse(item)
        except FieldError as err:
            errors.append((j, err.field, err.expected, repr(err.found)))
            continue
        if geom is None:
            continue
        values.append(geom)
        index.append(j)
        found_scores.append(math.nan if score is None else score)
    return values, index, found_scores, errors


def assert_same_batch(batch: boxparse.ParsedBatch, items: list[Any], parse: Any,
                      shape: tuple[int, ...]) -> None:
    values, index, found_scores, errors = scalar_batch(items, parse)
    assert batch.index.tolist() == index
    expected = np.array(values, dtype=np.float64).reshape(-1, *shape)
    assert batch.values.shape == expected.shape
    assert batch.values.tobytes() == expected.tobytes()  # bit for bit, -0.0 included
    assert np.array_equal(batch.scores, np.array(found_scores, dtype=np.float64),
                          equal_nan=True)
    assert [(j, e.field, e.expected, repr(e.found)) for j, e in batch.errors] == errors


@settings(max_examples=300, deadline=None)
@given(with_objects(box_coords, "bbox"), st.sampled_from(["xyxy", "xywh"]))
def test_parse_boxes_equals_parse_box(items: list[Any], fmt: str) -> None:
    assert_same_batch(boxparse.parse_boxes(items, fmt), items,
                      lambda v: boxparse.parse_box(v, fmt), (4,))


@settings(max_examples=300, deadline=None)
@given(with_objects(polygon_coords, "polygon"))
def test_parse_obbs_equals_parse_obb(items: list[Any]) -> None:
    assert_same_batch(boxparse.parse_obbs(items), items, boxparse.parse_obb, (4, 2))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(box_coords, st.just({"bbox": [0, 0, 1, 1]})), max_size=8))
def test_parse_gt_boxes_equals_parse_gt_box(items: list[Any]) -> None:
    assert_same_batch(boxparse.parse_gt_boxes(items), items,
                      lambda v: (boxparse.parse_gt_box(v), None), (4,))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(polygon_coords, st.just({"polygon": [[0, 0], [1, 0], [1, 1]]})),
                max_size=8))
def test_parse_polygons_equals_parse_polygon(items: list[Any]) -> None:
    assert_same_batch(boxparse.parse_polygons(items), items,
                      lambda v: (boxparse.parse_polygon(v), None), (4, 2))


def test_parse_boxes_hand_worked() -> None:
    """Spec "Bounding Boxes": the sentinel is dropped, a bad item is reported by index."""
    batch = boxparse.parse_boxes(
        [{"bbox": [1, 2, 3, 4], "score": 0.5}, {"bbox": [0, 0, 0, 0], "score": 0.9},
         {"bbox": [5, 5, 4, 9], "score": 0.1}, {"bbox": [0, 0, 2, 2]}], "xyxy")
    assert batch.index.tolist() == [0, 3]
    assert batch.values.tolist() == [[1, 2, 3, 4], [0, 0, 2, 2]]
    assert batch.scores[0] == 0.5 and math.isnan(batch.scores[1])
    assert [(j, e.field) for j, e in batch.errors] == [(2, ".bbox")]


# ------------------------------------------------------------- detection entries


@st.composite
def iou_matrix(draw: Any) -> np.ndarray:
    g, p = draw(st.integers(0, 9)), draw(st.integers(0, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.integers(0, 3))
    if kind == 0:  # dense, with many shared boxes
        return rng.random((g, p))
    if kind == 1:  # sparse
        return np.where(rng.random((g, p)) < 0.2, rng.uniform(0.4, 1, (g, p)), 0.0)
    if kind == 2:  # ties on the thresholds
        return np.round(rng.random((g, p)) * 20) / 20
    m = np.zeros((g, p))  # a permutation: no shared boxes
    k = min(g, p)
    m[np.arange(k), rng.permutation(p)[:k]] = rng.uniform(0.3, 1, k)
    return m


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(iou_matrix(), st.booleans()), max_size=25),
       st.sampled_from([0.05, 0.3, 0.5, 0.55, 0.75, 0.95, 1.0]))
def test_det_entries_equal_det_entry(queries: list[tuple[np.ndarray, bool]],
                                     threshold: float) -> None:
    ious = [m for m, _ in queries]
    negatives = [neg for _, neg in queries]
    got = metrics.det_entries(ious, negatives, threshold)
    expected = [metrics.det_entry(m, neg, threshold) for m, neg in queries]
    assert orjson.dumps(got) == orjson.dumps(expected)
