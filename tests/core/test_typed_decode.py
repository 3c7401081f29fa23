"""Issue 49: a boxes-only load decodes the two files typed (ovearth_core.typed_decode) and runs
io's checker only when that decode or one of its checks does not pass.

The judge is the checker itself (``io.TYPED_DECODE = False``, the code of before): on every
input here, valid or not, both loads end the same way, field by field: the same samples (and
the same COCO AP), or the same problems with the same messages. The inputs: the bundled demo,
every row of the bad-input corpus, hostile documents (numbers beyond the double range, bad
UTF-8, lone surrogates, duplicate keys, deep nesting, unknown keys) in fields a boxes-only
run does not score, and random small documents (hypothesis). A valid file is never handed to
the checker (the point of the fast path), which fails on the code before it.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import fields
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from bad_inputs.cases import CASES, BadCase
from docs_helpers import ld_files, ld_gt, ld_pred, ld_write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ovearth_core import io, typed_decode
from ovearth_core.analysis.ap import coco_average_precision
from ovearth_core.errors import OVEarthInputError
from ovearth_core.synth.writer import generate
from ovearth_core.typed_decode import in_double_range

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "assets" / "demo"


def _outcome(gt: Path, pred: Path, task: str, typed: bool, **options: Any) -> Any:
    io.TYPED_DECODE = typed
    try:
        return io.load_samples(gt, pred, task, modalities="bbox", **options)
    except OVEarthInputError as err:
        return ("error", [(p.file, p.field, p.expected, p.found, p.query_id)
                          for p in err.problems], err.total, str(err))
    finally:
        io.TYPED_DECODE = True


def _assert_same(a: Any, b: Any) -> None:
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    assert len(a) == len(b)
    for name in ("task", "modalities", "score_threshold", "bbox_format", "submitted",
                 "unknown_task_keys", "concave_obb"):
        assert getattr(a, name) == getattr(b, name), name
    for x, y in zip(a, b, strict=True):
        for f in fields(x):
            u, v = getattr(x, f.name), getattr(y, f.name)
            if isinstance(u, np.ndarray):
                assert u.dtype == v.dtype and u.shape == v.shape, f.name
                assert np.array_equal(u, v, equal_nan=u.dtype.kind == "f"), f.name
            else:
                assert u == v, f.name


def _same(gt: Path, pred: Path, task: str = "vocabulary", **options: Any) -> Any:
    typed = _outcome(gt, pred, task, True, **options)
    _assert_same(typed, _outcome(gt, pred, task, False, **options))
    return typed


@pytest.mark.parametrize("task", ["vocabulary", "referring", "reasoning"])
@pytest.mark.parametrize("options", [{}, {"bbox_format": "xywh"}])
def test_the_demo_loads_the_same_and_scores_the_same_ap(task: str, options: dict) -> None:
    gt = DEMO / "ground_truth.json"
    for pred in sorted((DEMO / "predictions").glob("*.json")):
        samples = _same(gt, pred, task, **options)
        assert not isinstance(samples, tuple), samples
        io.TYPED_DECODE = False
        try:
            checked = io.load_samples(gt, pred, task, modalities="bbox", **options)
        finally:
            io.TYPED_DECODE = True
        assert (coco_average_precision(samples, "bbox")
                == coco_average_precision(checked, "bbox"))


def test_a_valid_boxes_only_load_never_runs_the_checker(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("the checker ran on a valid file")

    for name in ("parse_ground_truth", "parse_predictions", "parse_json"):
        monkeypatch.setattr(io, name, refuse)
    gt = DEMO / "ground_truth.json"
    pred = sorted((DEMO / "predictions").glob("*.json"))[0]
    assert len(io.load_samples(gt, pred, "vocabulary", modalities="bbox")) > 10
    assert io.load_samples(*ld_files(tmp_path), "referring", modalities="bbox")
    assert io.load_samples(*ld_files(tmp_path), "vocabulary", modalities="bbox",
                           bbox_format="xywh")


def test_what_a_boxes_only_run_does_not_score_is_skipped(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """The masks, the oriented boxes and the other tasks' boxes are kept as raw JSON, never
    materialised (a mask string is most of a file's bytes): values there that the checker
    takes in a boxes-only run (it reads none of them) keep the fast path, with the checker's
    samples; the decoded ground truth holds its mask strings raw."""
    gt, pred = ld_gt(), ld_pred()
    gt["annotations"][0]["oriented_bbox"] = "none"
    gt["annotations"][1]["segmentation"] = {"size": "x", "counts": 5}
    gt["annotations"][2]["ignore_oriented_bbox"] = {"any": ["json", 1e30]}
    pred["tasks"]["open_vocabulary"][0]["segmentation"] = {"size": [1], "counts": [3, 4]}
    pred["tasks"]["open_vocabulary"][0]["oriented_bbox"] = [{"polygon": "x", "score": None}]
    pred["tasks"]["referring"][0]["bbox"] = {"not": "a list"}
    gt_path, pred_path = ld_files(tmp_path, gt, pred)
    checked = _outcome(gt_path, pred_path, "vocabulary", False)
    assert not isinstance(checked, tuple), checked

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("the checker ran on a file it takes")

    for name in ("parse_ground_truth", "parse_predictions", "parse_json"):
        monkeypatch.setattr(io, name, refuse)
    _assert_same(io.load_samples(gt_path, pred_path, "vocabulary", modalities="bbox"), checked)
    decoded = typed_decode.decode_ground_truth(ld_files(tmp_path)[0].read_bytes())
    assert isinstance(decoded.annotations[0].segmentation.counts, msgspec.Raw)


def test_an_invalid_file_still_gets_the_checkers_messages(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    pred = ld_pred()
    pred["tasks"]["open_vocabulary"][0]["bbox"][0]["bbox"] = [4, 1, 1, 3]  # x2 < x1
    gt_path, pred_path = ld_files(tmp_path, pred=pred)
    with pytest.raises(OVEarthInputError) as info:
        io.load_samples(gt_path, pred_path, "vocabulary", modalities="bbox")
    assert info.value.problems[0].field == "tasks.open_vocabulary[0].bbox[0].bbox"
    assert "x2 > x1" in info.value.problems[0].expected


FILE_CASES = [c for c in CASES if c.file in ("gt", "pred") and c.api_pred is None]


@pytest.mark.parametrize("case", FILE_CASES, ids=[c.id for c in FILE_CASES])
def test_every_bad_input_ends_the_same_in_a_boxes_only_run(case: BadCase,
                                                           tmp_path: Path) -> None:
    gt_path, pred_path = ld_files(tmp_path, case.gt, case.pred)
    _same(gt_path, pred_path, case.task, score_threshold=case.score_threshold,
          bbox_format=case.bbox_format)


def test_the_corpus_reaches_the_typed_path() -> None:
    assert len(FILE_CASES) >= 100


def _with(doc: dict, path: tuple, value: Any) -> dict:
    """A copy of ``doc`` with ``value`` at ``path`` (a deep copy: the helpers' documents
    share their polygon lists with every test of the session)."""
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


# Raw JSON spliced into a valid document where a boxes-only run reads nothing: orjson refuses
# some of them (so a boxes-only run does, today), the typed decode must not accept them.
HOSTILE = {
    "beyond the double range": b"1e400",
    "negative beyond": b"-1.8e308",
    "a 400-digit integer": b"1" * 400,
    "NaN": b"NaN",
    "Infinity": b"-Infinity",
    "bad UTF-8": b'"\xff\xfe"',
    "encoded surrogate": b'"\xed\xa0\x80"',
    "lone surrogate": b'"\\ud800"',
    "deep nesting": b"[" * 2000 + b"]" * 2000,
    "nesting of 1,000": b"[" * 1000 + b"]" * 1000,
    "nesting of 1,030": b"[" * 1030 + b"]" * 1030,
    "nesting of 1,500": b"[" * 1500 + b"]" * 1500,
    "upper-case exponent": b"-2E+400",
    "a long mantissa": b"1" * 250 + b"e99",
    "a small number": b"1e-300",
    "an object": b'{"x": [1, 2, {"y": "z"}]}',
    "the double's largest": b"1.7976931348623157e308",
    "just beyond it": b"1.7976931348623159e308",
    "underflow": b"1e-400",
    "a big integer": b"123456789012345678901234567890",
}
PLACES = {  # (file, where the marker goes)
    "pred oriented box": ("pred", ("tasks", "open_vocabulary", 0, "oriented_bbox", 0,
                                   "polygon", 0, 0)),
    "pred other task": ("pred", ("tasks", "referring", 0, "oriented_bbox", 0, 0, 1)),
    "pred mask counts": ("pred", ("tasks", "open_vocabulary", 0, "segmentation", "counts")),
    "pred unknown key": ("pred", ("tasks", "open_vocabulary", 0, "extra")),
    "pred unknown task": ("pred", ("tasks", "detection")),
    "pred top level": ("pred", ("model",)),
    "gt oriented box": ("gt", ("annotations", 0, "oriented_bbox", 0, 1, 0)),
    "gt mask counts": ("gt", ("annotations", 1, "segmentation", "counts")),
    "gt unknown key": ("gt", ("annotations", 0, "gsd")),
    "gt query": ("gt", ("tasks", "referring", 0, "note")),
}
MARK = "@@HOSTILE@@"


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_hostile_values_where_nothing_is_scored_end_as_today(place: str, hostile: str,
                                                             tmp_path: Path) -> None:
    which, path = PLACES[place]
    doc = _with(ld_gt() if which == "gt" else ld_pred(), path, MARK)
    data = json.dumps(doc).encode().replace(f'"{MARK}"'.encode(), HOSTILE[hostile])
    target = tmp_path / ("gt.json" if which == "gt" else "pred.json")
    gt_path, pred_path = ld_files(tmp_path)
    target.write_bytes(data)
    outcome = _same(gt_path, pred_path, "vocabulary")
    if hostile in ("beyond the double range", "negative beyond", "a 400-digit integer", "NaN",
                   "Infinity", "bad UTF-8", "encoded surrogate", "lone surrogate",
                   "deep nesting", "just beyond it", "upper-case exponent", "a long mantissa"):
        assert isinstance(outcome, tuple), "refused today, refused still"


@pytest.mark.parametrize("doc", [
    b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[9, 9, 1, 1]], '
    b'"bbox": [[1, 1, 4, 3]]}]}}',  # duplicate key: the last one, as orjson
    b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[1, 1, 4, 3]]}]}, '
    b'"tasks": {}}',
    b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[true, 1, 4, 3]]}]}}',
    b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [{"bbox": [1, 1, 4, 3], '
    b'"score": null}]}]}}',
    b'{"tasks": {"open_vocabulary": [{"query_id": "ov9", "bbox": []}]}}',
    b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[0, 0, 0, 0]]}]}}',
    b'{"tasks": null}',
    b'[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "score": 1}]',
    b'\xef\xbb\xbf{"tasks": {}}',
    b'{"tasks": {}} x',
    b"",
])
def test_prediction_documents_end_as_today(doc: bytes, tmp_path: Path) -> None:
    gt_path, pred_path = ld_files(tmp_path)
    pred_path.write_bytes(doc)
    for threshold in (None, 0.5):
        _same(gt_path, pred_path, "vocabulary", score_threshold=threshold)


@pytest.mark.parametrize("change", [
    ("annotations", 0, "width", 4.0), ("annotations", 0, "width", True),
    ("annotations", 0, "width", 2 ** 63), ("annotations", 0, "width", 2 ** 64 - 1),
    ("annotations", 0, "width", 2 ** 70), ("annotations", 0, "id", 2 ** 64),
    ("annotations", 0, "id", -(2 ** 63) - 1), ("annotations", 0, "id", ""),
    ("annotations", 0, "id", 7), ("annotations", 1, "id", "a1"),
    ("annotations", 0, "difficult", [True]), ("annotations", 0, "difficult", [2]),
    ("annotations", 0, "difficult", [1, 0]), ("annotations", 0, "area", [-0.0]),
    ("annotations", 0, "area", [-1]), ("annotations", 0, "category_name", None),
    ("annotations", 0, "oriented_bbox", "none"), ("annotations", 0, "bbox", [[1, 1, 0, 2]]),
    ("tasks", "open_vocabulary", 0, "type", "maybe"), ("tasks", "referring", 0, "type", 5),
    ("tasks", "referring", 0, "query_id", "ov1"), ("tasks", "reasoning", 0, "ann_id", "zz"),
    ("tasks", "referring", 0, "query", None), ("tasks", "referring", 0, "phrase", "x"),
    ("tasks", "open_vocabulary", 0, "phrase", 3), ("tasks", "referring", None),
    ("tasks", "unknown", []),
])
def test_ground_truth_changes_end_as_today(change: tuple, tmp_path: Path) -> None:
    doc = _with(ld_gt(), change[:-1], change[-1])
    gt_path, pred_path = ld_files(tmp_path, json.dumps(doc).encode())  # orjson: 64-bit ints
    for task in ("vocabulary", "referring"):
        _same(gt_path, pred_path, task)


# Random small documents: ids, sizes, boxes in both forms with and without scores (valid,
# degenerate, sentinel, huge), difficult / area lists, oriented boxes and masks it skips.
_coord = st.one_of(st.integers(-5, 50), st.floats(-1e3, 1e3, allow_nan=False),
                   st.sampled_from([0, 1e100, -1e100, 1e101, 5e-324, 0.1, 2 ** 53 + 1]))
_box = st.lists(_coord, min_size=4, max_size=4)
_score = st.one_of(st.floats(0, 1), st.integers(0, 1))
_pred_box = st.one_of(_box, st.builds(lambda b, s: {"bbox": b, "score": s}, _box, _score),
                      st.builds(lambda b: {"bbox": b}, _box), st.just([0, 0, 0, 0]))
_obb = st.lists(st.lists(_coord, min_size=2, max_size=2), min_size=4, max_size=4)


@st.composite
def _documents(draw: st.DrawFn) -> tuple[dict, dict]:
    anns = []
    for i in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 3))
        ann: dict[str, Any] = {"id": draw(st.sampled_from([f"a{i}", i + 1])),
                               "image_path": "x.png", "width": draw(st.integers(0, 9)) or 8,
                               "height": 8, "category_name": draw(st.sampled_from(["c", "d"])),
                               "bbox": draw(st.lists(_box, min_size=n, max_size=n))}
        if draw(st.booleans()):
            ann["oriented_bbox"] = draw(st.lists(_obb, min_size=n, max_size=n))
        if draw(st.booleans()):
            ann["difficult"] = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
        if draw(st.booleans()):
            ann["area"] = draw(st.lists(st.floats(0, 100), min_size=n, max_size=n))
        if draw(st.booleans()):
            ann["segmentation"] = {"size": [8, 8], "counts": [64]}
        anns.append(ann)
    ids = [a["id"] for a in anns]
    queries = [{"query_id": f"q{k}", "ann_id": draw(st.sampled_from(ids)),
                "type": draw(st.sampled_from(["positive", "negative"])), "phrase": "p"}
               for k in range(draw(st.integers(1, 4)))]
    rows = [{"query_id": f"q{draw(st.integers(0, 4))}",
             "bbox": draw(st.one_of(st.none(), st.lists(_pred_box, max_size=4))),
             "oriented_bbox": draw(st.lists(_obb, max_size=2))}
            for _ in range(draw(st.integers(0, 5)))]
    return ({"annotations": anns, "tasks": {"open_vocabulary": queries}},
            {"tasks": {"open_vocabulary": rows}})


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=_documents(), threshold=st.sampled_from([None, 0.5]),
       bbox_format=st.sampled_from(["xyxy", "xywh"]))
def test_random_documents_end_the_same(docs: tuple[dict, dict], threshold: float | None,
                                       bbox_format: str, tmp_path: Path) -> None:
    gt, pred = docs
    gt_path = ld_write(tmp_path / "gt.json", gt)
    pred_path = tmp_path / "pred.json"
    pred_path.write_text(json.dumps(pred))  # json.dumps: 1e101 and the like written as is
    _same(gt_path, pred_path, "vocabulary", score_threshold=threshold, bbox_format=bbox_format)


@pytest.mark.parametrize("phrase", ["東京 tower", "caf\u00e9"])
def test_a_document_beyond_ascii_is_decoded_in_full(phrase: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond ASCII the lean decode does not vouch for the UTF-8 of what it skips: the full
    decode reads every string (and a number beyond the double range is still refused)."""
    pred = ld_pred()
    for row in pred["tasks"]["referring"]:
        row["query"] = phrase
    gt_path, pred_path = ld_files(tmp_path, pred=pred)
    assert not isinstance(_same(gt_path, pred_path, "vocabulary"), tuple)
    pred["tasks"]["referring"][0]["oriented_bbox"] = [[[0, 0], [1, 0], [1, 1], [0, MARK]]]
    pred_path.write_bytes(json.dumps(pred, ensure_ascii=False).encode().replace(
        f'"{MARK}"'.encode(), b"1e400"))
    assert isinstance(_same(gt_path, pred_path, "vocabulary"), tuple)


@settings(max_examples=400, deadline=None)
@given(sign=st.sampled_from(["", "-"]), whole=st.from_regex(r"\A(0|[1-9][0-9]{0,320})\Z"),
       frac=st.from_regex(r"\A(\.[0-9]{1,30})?\Z"),
       exp=st.from_regex(r"\A([eE][-+]?[0-9]{1,5})?\Z"))
def test_every_literal_beyond_the_double_range_is_caught(sign: str, whole: str, frac: str,
                                                         exp: str) -> None:
    """The lean decode's number check has false alarms, never a miss: Python's float()
    (the reference) overflowing means in_double_range says no."""
    literal = f"{sign}{whole}{frac}{exp}"
    if math.isinf(float(literal)):
        assert not in_double_range(f"[[{literal}, 1]]".encode())


@pytest.mark.parametrize("seed", [0, 1])
def test_generated_benchmarks_load_the_same(seed: int, tmp_path: Path) -> None:
    """The generator's tiny scale (every persona, task, with and without a threshold): the
    same samples or the same problems both ways, and the typed decode vouched for them."""
    generate("tiny", tmp_path, seed=seed, images=False, workers=1)
    gt = tmp_path / "ground_truth.json"
    assert typed_decode.decode_ground_truth(gt.read_bytes()) is not None
    for pred in sorted((tmp_path / "predictions").glob("*.json")):
        assert typed_decode.decode_predictions(pred.read_bytes(), "referring") is not None
        for task in ("vocabulary", "referring", "reasoning"):
            for threshold in (None, 0.5):
                _same(gt, pred, task, score_threshold=threshold)
