"""Hypothesis fuzzing of the loaders and parsers: succeed or raise our own error, never crash.

Documents are mutated from the valid ones of ``docs_helpers`` (type swaps,
deletions, extreme numbers, random RLE strings, random polygons, appended junk)
and raw bytes are mutated from their serialisation. Any exception other than
``OVEarthInputError`` (or ``FieldError`` for the single-value parsers) fails.

Examples per run (``max_examples``) are set per test (``EXAMPLES``): a local run explores
that many new random examples each time. CI (``CI`` set: hypothesis's ``ci`` profile, a fixed
seed, tests/conftest.py) replays the same examples on every run, so it runs a fifth of them
(``CI_SHARE``): what it can still catch is a regression on those, and a fifth keeps every
kind of mutation the strategies draw (the budget left the suite's longest file at about
60 s of CPU in CI, for examples already passed on every earlier run).
"""

from __future__ import annotations

import copy
import json
import math
import os
import warnings
from typing import Any

import numpy as np
import orjson
import pytest
import shapely
from docs_helpers import ld_gt, ld_pred, ld_runs
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pycocotools import mask as cocomask

from ovearth_core.analysis import analysis_report
from ovearth_core.boxparse import parse_box, parse_obb, parse_polygon
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples, parse_ground_truth, read_json
from ovearth_core.masks import MAX_PIXELS, FieldError, parse_rle

EXAMPLES = {
    "predictions": 1500,
    "ground_truth": 600,
    "bytes": 400,
    "rle": 1500,
    "rle_roundtrip": 400,
    "box": 1500,
    "polygon": 1500,
    "polygon_exact": 1500,
    "extreme_coordinates": 1000,
}


CI_SHARE = 5 if os.environ.get("CI") else 1


def _fuzz(name: str) -> settings:
    return settings(max_examples=EXAMPLES[name] // CI_SHARE, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


GT = parse_ground_truth(ld_gt(), "gt.json")
RLE_ALPHABET = "".join(chr(c) for c in range(48, 112))
KEYS = ["query_id", "segmentation", "bbox", "oriented_bbox", "score", "polygon", "size",
        "counts", "tasks", "open_vocabulary", "referring", "reasoning", "id", "ann_id",
        "type", "width", "height", "annotations", "image_path", "category_name", "phrase",
        "query"]
QUERY_IDS = ["ov1", "ov2", "ov3", "ref1", "rea1", "a1", "", "ov1 "]

extreme_ints = st.sampled_from([0, -1, 1, 2**31, -(2**31), 2**53 + 1, 2**63 - 1, -(2**63),
                                2**64, 10**30, MAX_PIXELS, MAX_PIXELS + 1, 24, 15])
extreme_floats = st.sampled_from([0.0, -0.0, 1e-320, 5e-324, 1e308, -1e308, 1.7976931348623157e308,
                                  1e200, 0.5, 1.0000000000000002, math.nan, math.inf, -math.inf])
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(-1000, 1000), extreme_ints, extreme_floats,
    st.floats(), st.text(max_size=12), st.text(alphabet=RLE_ALPHABET, max_size=24),
    st.sampled_from(QUERY_IDS), st.sampled_from(["positive", "negative", "xyxy", "auto"]),
)
json_values = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner,
                                            max_size=5)),
    max_leaves=16,
)
vertex = st.lists(st.one_of(st.integers(-50, 50), st.floats(), extreme_floats, leaves),
                  min_size=0, max_size=3)
polygons = st.lists(st.one_of(st.lists(st.integers(-20, 20), min_size=2, max_size=2), vertex),
                    min_size=3, max_size=5)
rle_values = st.fixed_dictionaries({
    "size": st.one_of(st.lists(st.integers(0, 6), min_size=2, max_size=2),
                      st.lists(st.one_of(extreme_ints, st.integers(-3, 3)), max_size=3),
                      json_values),
    "counts": st.one_of(st.text(alphabet=RLE_ALPHABET, max_size=16),
                        st.text(max_size=6),
                        st.lists(st.integers(0, 30), max_size=8),
                        st.lists(st.one_of(extreme_ints, st.integers(-5, 5)), max_size=4),
                        json_values),
})
boxes = st.lists(st.one_of(st.integers(-10, 10), extreme_floats, extreme_ints, st.floats(),
                           leaves), min_size=3, max_size=5)
# Values worth planting anywhere: generic JSON plus well-formed-looking fields.
plants = st.one_of(json_values, rle_values, polygons, boxes,
                   st.lists(st.one_of(polygons, boxes,
                                      st.fixed_dictionaries({"bbox": boxes,
                                                             "score": leaves}),
                                      st.fixed_dictionaries({"polygon": polygons,
                                                             "score": leaves})),
                            max_size=3))


def _slots(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) pair below ``node``, in document order."""
    out: list[tuple[Any, Any]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, child in list(items):
        out.append((node, key))
        if isinstance(child, (dict, list)):
            out.extend(_slots(child))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """``base`` with one to four random mutations."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        slots = _slots(doc)
        if not slots:
            break
        parent, key = draw(st.sampled_from(slots))
        op = draw(st.sampled_from(["replace", "plant", "delete", "wrap", "stringify",
                                   "duplicate", "append", "number"]))
        value = parent[key]
        if op == "replace":
            parent[key] = draw(json_values)
        elif op == "plant":
            parent[key] = draw(plants)
        elif op == "delete":
            del parent[key]
        elif op == "wrap":
            parent[key] = [value] if draw(st.booleans()) else {"bbox": value}
        elif op == "stringify":
            parent[key] = json.dumps(value)
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(value))
        elif op == "append" and isinstance(value, list):
            value.append(draw(plants))
        else:
            parent[key] = draw(st.one_of(extreme_ints, extreme_floats))
    return doc


def _check_error(err: OVEarthInputError) -> None:
    assert err.problems
    for p in err.problems:
        assert all(isinstance(v, str) for v in (p.file, p.field, p.expected, p.found))
        assert p.query_id is None or isinstance(p.query_id, str)
    message = str(err)
    assert message.startswith(f"{len(err.problems)} problem")


def _load_and_evaluate(doc: dict[str, Any], task: str, modalities: str,
                       threshold: float | None, bbox_format: str,
                       gt: Any = GT) -> None:
    try:
        samples = load_samples("gt.json", "pred.json", task, score_threshold=threshold,
                               bbox_format=bbox_format, modalities=modalities,
                               ground_truth=gt, predictions_doc=doc)
    except OVEarthInputError as err:
        _check_error(err)
        return
    result = evaluate_samples(samples, 0.5)
    key = {"vocabulary": "open_vocabulary"}.get(task, task)
    assert result["summary"]["num_samples"] == len(gt.tasks[key])


tasks = st.sampled_from(["vocabulary", "referring", "reasoning"])
modality_options = st.sampled_from(["segmentation", "bbox", "oriented_bbox",
                                    "segmentation,bbox,oriented_bbox", "auto"])
thresholds = st.one_of(st.none(), st.floats(0, 1), st.sampled_from([0.3, 0.5, 0.8, 0.9]))
formats = st.sampled_from(["xyxy", "xywh"])


@_fuzz("predictions")
@given(doc=mutated(ld_pred()), task=tasks, modalities=modality_options, threshold=thresholds,
       bbox_format=formats)
def test_prediction_loader_never_crashes(doc: dict[str, Any], task: str, modalities: str,
                                         threshold: float | None, bbox_format: str) -> None:
    """Mutated prediction documents load (and evaluate) or raise OVEarthInputError."""
    _load_and_evaluate(doc, task, modalities, threshold, bbox_format)


@_fuzz("ground_truth")
@given(doc=mutated(ld_gt()), task=tasks, modalities=modality_options)
def test_ground_truth_loader_never_crashes(doc: dict[str, Any], task: str,
                                           modalities: str) -> None:
    """Mutated ground truths parse or raise OVEarthInputError; parsed ones then evaluate."""
    try:
        gt = parse_ground_truth(doc, "gt.json")
    except OVEarthInputError as err:
        _check_error(err)
        return
    _load_and_evaluate(ld_pred(), task, modalities, None, "xyxy", gt=gt)


@st.composite
def mutated_bytes(draw: st.DrawFn) -> bytes:
    data = bytearray(orjson.dumps(draw(st.sampled_from([ld_pred(), ld_gt()]))))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "insert", "delete"]))
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[i] = draw(st.integers(0, 255))
        elif op == "truncate":
            del data[i:]
        elif op == "insert":
            data[i:i] = draw(st.sampled_from([b"NaN", b"Infinity", b"\xff", b"\xc3", b"[", b"{",
                                               b",", b"1e999", b"-", b'"', b"\\u0000", b"\x00"]))
        else:
            del data[i]
    return bytes(data)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return tmp_path_factory.mktemp("fuzz_bytes")


@_fuzz("bytes")
@given(data=st.one_of(mutated_bytes(), st.binary(max_size=64)), task=tasks,
       modalities=modality_options)
def test_files_never_crash(scratch: Any, data: bytes, task: str, modalities: str) -> None:
    """Arbitrary bytes as the prediction file, and as the ground-truth file."""
    path = scratch / "doc.json"
    path.write_bytes(data)
    try:
        doc = read_json(path, "prediction")
    except OVEarthInputError as err:
        _check_error(err)
        return
    assert isinstance(doc, dict)
    _load_and_evaluate(doc, task, modalities, None, "xyxy")
    try:
        parse_ground_truth(doc, str(path))
    except OVEarthInputError as err:
        _check_error(err)


# --- single-value parsers ------------------------------------------------------------------


@_fuzz("rle")
@given(value=st.one_of(rle_values, json_values))
def test_parse_rle_never_crashes(value: Any) -> None:
    """parse_rle returns a decodable mask of the declared size, or raises FieldError."""
    try:
        rle, size = parse_rle(value)
    except FieldError as err:
        assert err.field in ("", ".size", ".counts") and err.expected
        return
    assert rle is None or isinstance(rle, dict)
    if rle is not None:
        h, w = value["size"]
        pixels = cocomask.decode(rle)
        assert pixels.shape == (h, w) == size
        assert int(pixels.sum()) == int(cocomask.area(rle)) > 0


@_fuzz("rle_roundtrip")
@given(h=st.integers(1, 7), w=st.integers(1, 7), data=st.data())
def test_parse_rle_decodes_both_encodings(h: int, w: int, data: st.DataObject) -> None:
    """Spec "Segmentation": list and compressed counts give the same pixels as the source."""
    pixels = np.array(data.draw(st.lists(st.integers(0, 1), min_size=h * w, max_size=h * w)),
                      dtype=np.uint8).reshape(h, w)
    compressed = cocomask.encode(np.asfortranarray(pixels))["counts"].decode("ascii")
    for counts in (ld_runs(pixels), compressed):
        rle, size = parse_rle({"size": [h, w], "counts": counts})
        assert size == (h, w)
        if pixels.any():
            np.testing.assert_array_equal(cocomask.decode(rle), pixels)
        else:
            assert rle is None


@_fuzz("box")
@given(value=st.one_of(boxes, json_values,
                       st.fixed_dictionaries({"bbox": boxes}, optional={"score": leaves})),
       bbox_format=formats)
def test_parse_box_never_crashes(value: Any, bbox_format: str) -> None:
    """parse_box returns a finite box with positive size (or the sentinel), or FieldError."""
    try:
        box, score = parse_box(value, bbox_format)
    except FieldError as err:
        assert err.expected
        return
    assert score is None or math.isfinite(score)
    if box is not None:
        x1, y1, x2, y2 = box
        assert all(math.isfinite(v) for v in box)
        assert x2 > x1 and y2 > y1


def _is_simple(pts: list[list[float]]) -> bool:
    """A simple ring (convex or concave; not self-crossing or self-touching) of positive area."""
    poly = shapely.Polygon(pts)
    return bool(poly.is_valid) and poly.area > 0


@_fuzz("polygon")
@given(value=st.one_of(polygons, json_values, st.lists(st.lists(st.one_of(
    extreme_floats, st.floats(allow_nan=False, allow_infinity=False)), min_size=2, max_size=2),
    min_size=4, max_size=4)))
def test_parse_polygon_never_crashes(value: Any) -> None:
    """parse_polygon returns four finite vertices of a simple polygon, or raises FieldError."""
    try:
        poly = parse_polygon(value)
    except FieldError as err:
        assert err.expected
        return
    assert len(poly) == 4
    assert all(math.isfinite(c) for v in poly for c in v)
    obb, score = parse_obb({"polygon": value, "score": 1})
    assert obb == poly and score == 1.0


@_fuzz("polygon_exact")
@given(value=st.lists(st.lists(st.integers(-1000, 1000), min_size=2, max_size=2),
                      min_size=4, max_size=4))
def test_parse_polygon_matches_shapely_on_integers(value: list[list[int]]) -> None:
    """Spec "Oriented Bounding Boxes": accepted iff simple, convex and of positive area;
    with the option concave_obb (issue 46; DOTA parity, issue 34) iff simple and of
    positive area.

    Integer vertices keep every cross product exact, so shapely's validity (and, for
    convexity, a ring equal in area to its convex hull) is an independent reference.
    """
    for concave in (False, True):
        try:
            parse_polygon(value, concave)
            accepted = True
        except FieldError:
            accepted = False
        simple = _is_simple(value)
        convex = simple and shapely.Polygon(value).convex_hull.area == shapely.Polygon(value).area
        assert accepted == (simple if concave else convex), concave


@pytest.mark.parametrize("scale", [1e150, 1e200, 1e300, -1e300])
def test_parse_polygon_huge_finite_square(scale: float) -> None:
    """Huge but finite vertices: accepted, or rejected with FieldError (never another error)."""
    square = [[0.0, 0.0], [scale, 0.0], [scale, scale], [0.0, scale]]
    try:
        poly = parse_polygon(square)
    except FieldError as err:
        assert err.expected
    else:
        assert poly == tuple((x, y) for x, y in square)


# --- coordinates near and beyond the range whose areas stay finite (issue 18) ---------------

in_range = st.one_of(
    st.integers(-50, 50), st.floats(-1e3, 1e3),
    st.sampled_from([1e100, -1e100, 9.999999999999999e99, 5e99, -7e99, 2.0**332, 10**100]),
    st.builds(lambda m, e: m * 10.0 ** e, st.floats(-1, 1), st.integers(0, 100)))
beyond = st.sampled_from([1.0000000000000002e100, 1e101, 1e200, 1.7e308, -1.7e308, 5e102,
                          2**340, 10**101])


def _ordered_box(values: tuple[float, float, float, float]) -> list[float]:
    x1, x2 = sorted(values[:2])
    y1, y2 = sorted(values[2:])
    return [x1, y1, x2, y2]


def _scaled(exponent: int, mantissas: list[float]) -> tuple[float, ...]:
    return tuple(m * 10.0 ** exponent for m in mantissas)


# One magnitude per box (mixed ones mostly make slivers that the validator refuses).
mantissas = st.integers(-1000, 1000).map(lambda k: k / 1000)
extreme_boxes = st.one_of(
    st.tuples(in_range, in_range, in_range, in_range),
    *[st.builds(_scaled, st.integers(0, 100), st.lists(mantissas, min_size=4, max_size=4))] * 3,
).map(_ordered_box).filter(lambda b: b[0] < b[2] and b[1] < b[3])


def _axis_polygon(box: list[float]) -> list[list[float]]:
    x1, y1, x2, y2 = box
    return [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]


def _diamond(box: list[float]) -> list[list[float]]:
    x1, y1, x2, y2 = box
    cx, cy = x1 / 2 + x2 / 2, y1 / 2 + y2 / 2
    return [[cx, y1], [x2, cy], [cx, y2], [x1, cy]]


extreme_polygons = st.one_of(
    *[extreme_boxes.map(_axis_polygon), extreme_boxes.map(_diamond)] * 3,
    st.builds(lambda e, m: [list(_scaled(e, m[i:i + 2])) for i in range(0, 8, 2)],
              st.integers(0, 100), st.lists(mantissas, min_size=8, max_size=8)))


def _as_xywh(box: list[float]) -> list[float]:
    x1, y1, x2, y2 = box
    return [x1, y1, x2 - x1, y2 - y1]


def _spoil(doc: Any, slot: int, value: float) -> None:
    """Replace the ``slot``-th number (mod the count) of ``doc``'s box lists by ``value``."""
    numbers = [(parent, key) for parent, key in _slots(doc)
               if type(parent[key]) in (int, float) and not isinstance(parent, dict)]
    parent, key = numbers[slot % len(numbers)]
    parent[key] = value


@_fuzz("extreme_coordinates")
@given(boxes=st.lists(extreme_boxes, min_size=1, max_size=3),
       polys=st.lists(extreme_polygons, min_size=1, max_size=3),
       gt_box=st.one_of(st.none(), extreme_boxes), gt_poly=st.one_of(st.none(), extreme_polygons),
       bbox_format=formats, scored=st.booleans(),
       spoil=st.one_of(st.none(), st.tuples(st.booleans(), st.integers(0, 100), beyond)))
def test_extreme_coordinates_never_warn(boxes: list[list[float]], polys: list[list[list[float]]],
                                        gt_box: list[float] | None,
                                        gt_poly: list[list[float]] | None, bbox_format: str,
                                        scored: bool, spoil: tuple[bool, int, float] | None
                                        ) -> None:
    """Coordinates up to ±1e100 (and, spoiled, one beyond, up to 1.7e308) in predictions and
    ground truth: a validation problem, or IoUs in [0, 1] computed (with the analyses)
    without any RuntimeWarning."""
    gt_doc = copy.deepcopy(ld_gt())  # its polygons are shared module constants
    if gt_box is not None:
        gt_doc["annotations"][0]["bbox"] = [_as_xywh(gt_box)]
    if gt_poly is not None:
        gt_doc["annotations"][0]["oriented_bbox"] = [gt_poly]
    if bbox_format == "xywh":
        boxes = [_as_xywh(b) for b in boxes]
    pred = {"query_id": "ov1",
            "bbox": [{"bbox": b, "score": 0.5 + i / 10} if scored else b
                     for i, b in enumerate(boxes)],
            "oriented_bbox": [{"polygon": p, "score": 0.9} if scored else p for p in polys]}
    doc = {"tasks": {"open_vocabulary": [pred, {"query_id": "ov2", "bbox": copy.deepcopy(
        pred["bbox"])}]}}
    if spoil is not None:
        in_gt, slot, value = spoil
        _spoil(gt_doc["annotations"][0] if in_gt else doc, slot, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            gt = parse_ground_truth(gt_doc, "gt.json")
            samples = load_samples("gt.json", "pred.json", "vocabulary", bbox_format=bbox_format,
                                   modalities="bbox,oriented_bbox", ground_truth=gt,
                                   predictions_doc=doc)
        except OVEarthInputError as err:
            _check_error(err)
            event("refused (spoiled)" if spoil else "refused")
            return
        event("evaluated (spoiled)" if spoil else "evaluated")
        result = evaluate_samples(samples, 0.5)
        analysis_report(samples, 0.5, hard_negatives=True)
    for row in result["per_sample"]:
        for key in ("bbox", "oriented_bbox"):
            for _, _, iou in row[key]["matches"]:
                assert 0.0 <= iou <= 1.0
            if row[key]["mean_matched_iou"] is not None:
                assert 0.0 <= row[key]["mean_matched_iou"] <= 1.0
