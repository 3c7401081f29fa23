"""NaN, Infinity and 1e400 located field by field (ovearth_core.nonfinite, via io.read_json).

The reference for every located value is an independent recursive walk of the Python
document before it was written with ``json.dumps`` (``allow_nan=True``, its default).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ovearth_core.errors import MAX_REPORTED, OVEarthInputError
from ovearth_core.io import read_json
from ovearth_core.nonfinite import EXPECTED, MAX_LOCATED, locate_non_finite


def _reference(value: Any, where: str = "", query_id: str | None = None, row: bool = False
               ) -> list[tuple[str, str | None, str]]:
    """``(field, query_id, literal)`` of every non-finite float, in document order; a row
    is a dict in a list in the document's ``tasks`` object, whose ``query_id`` applies to
    everything in it."""
    if isinstance(value, float) and not math.isfinite(value):
        return [(where or "(document)", query_id,
                 "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"))]
    out = []
    if isinstance(value, dict):
        if row and isinstance(value.get("query_id"), str):
            query_id = value["query_id"]
        for key, child in value.items():
            out += _reference(child, f"{where}.{key}" if where else key, query_id)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += _reference(child, f"{where}[{i}]", query_id)
    return out


def _reference_document(doc: Any) -> list[tuple[str, str | None, str]]:
    if not (isinstance(doc, dict) and isinstance(doc.get("tasks"), dict)):
        return _reference(doc)
    out = []
    for key, child in doc.items():
        if key != "tasks":
            out += _reference(child, key)
            continue
        for task, rows in child.items():
            if not isinstance(rows, list):
                out += _reference(rows, f"tasks.{task}")
                continue
            for i, r in enumerate(rows):
                out += _reference(r, f"tasks.{task}[{i}]", row=True)
    return out


def _prediction_doc(rows: int, nan_at: int) -> dict[str, Any]:
    out = []
    for i in range(rows):
        box = [float(i % 500), 3.25, float(i % 500) + 20.5, 40.125]
        score = math.nan if i == nan_at else (i % 97) / 97
        out.append({"query_id": f"ov_{i:06d}", "phrase": "storage tank",
                    "segmentation": None, "bbox": [{"bbox": box, "score": score}] * 3,
                    "oriented_bbox": []})
    return {"tasks": {"open_vocabulary": out}}


def test_the_issues_one_line_file(tmp_path: Path) -> None:
    """A 6 MB one-line file from ``json.dump`` with one NaN score: orjson said only "line
    1 column N"; now the problem names the query_id and the field."""
    doc = _prediction_doc(25_000, nan_at=17_321)
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(doc))
    assert path.stat().st_size > 6e6
    started = time.perf_counter()
    with pytest.raises(OVEarthInputError) as info:
        read_json(path, "prediction")
    seconds = time.perf_counter() - started
    print(f"located one NaN in {path.stat().st_size / 1e6:.1f} MB in {seconds:.2f} s")
    problems = info.value.problems
    assert [(p.file, p.query_id, p.field, p.found) for p in problems] == [
        (str(path), "ov_017321", "tasks.open_vocabulary[17321].bbox[0].score", "NaN"),
        (str(path), "ov_017321", "tasks.open_vocabulary[17321].bbox[1].score", "NaN"),
        (str(path), "ov_017321", "tasks.open_vocabulary[17321].bbox[2].score", "NaN")]
    assert problems[0].expected == EXPECTED
    message = str(info.value)
    assert "query_id ov_017321, field tasks.open_vocabulary[17321].bbox[0].score" in message
    assert "allow_nan=False" in message and "column" not in message


def test_more_than_the_kept_problems_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "preds.json"
    path.write_text(json.dumps({"values": [math.inf] * (MAX_LOCATED + 500)}))
    with pytest.raises(OVEarthInputError) as info:
        read_json(path, "prediction")
    assert len(info.value.problems) == MAX_LOCATED and info.value.total == MAX_LOCATED + 500
    head = str(info.value).splitlines()[0]
    assert head == f"{MAX_LOCATED + 500} problems found in the input (showing the first " \
                   f"{MAX_REPORTED}):"


@pytest.mark.parametrize("data", [
    b"{'a': NaN}",  # not JSON for other reasons too
    b'{"a": [NaN,]}',
    b"[" * 5000 + b"NaN" + b"]" * 5000,  # deeper than the standard library recurses
    b'{"a": "\xff", "b": NaN}',  # not UTF-8
    b"\xef\xbb\xbf" + b'{"a": NaN}',  # a byte-order mark
    b'{"a": nan}',
    b'{"a": [1, 2]}',  # nothing to locate
])
def test_documents_with_other_faults_give_nothing_to_locate(data: bytes) -> None:
    assert locate_non_finite(data, "f.json") == ([], 0)


def test_long_overflowing_literals_are_shortened() -> None:
    problems, total = locate_non_finite(b'{"a": [1' + b"0" * 500 + b", -1e999]}", "f.json")
    assert total == 2
    assert problems[0].found == f"1{'0' * 19}...{'0' * 12} (501 characters) (beyond the double " \
                                "range)"
    assert problems[1].found == "-1e999 (beyond the double range)"
    assert locate_non_finite(b'[1' + b"0" * 300 + b"]", "f.json") == ([], 0)  # fits a double


finite_leaves = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                          st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])
leaves = st.one_of(finite_leaves, finite_leaves, non_finite)
keys = st.sampled_from(["query_id", "bbox", "score", "tasks", "open_vocabulary", "size",
                        "polygon", "x.y", "[0]", ""]) | st.text(max_size=4)
trees = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=5)), max_leaves=30)
rows = st.lists(st.fixed_dictionaries({"query_id": st.sampled_from(["ov1", "q 2", ""]),
                                       "bbox": st.lists(trees, max_size=3)},
                                      optional={"score": leaves}), max_size=4)
documents = st.one_of(trees, st.fixed_dictionaries(
    {"tasks": st.dictionaries(st.sampled_from(["open_vocabulary", "referring", "x"]), rows,
                              max_size=3)}, optional={"meta": trees}))


@settings(max_examples=1500, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(doc=documents)
def test_located_exactly_where_the_reference_walk_finds_them(doc: Any) -> None:
    """1,500 random documents: every non-finite value is found, at its path and row, and
    orjson refuses exactly the documents that have one."""
    data = json.dumps(doc).encode()
    expected = _reference_document(doc)
    problems, total = locate_non_finite(data, "f.json")
    assert [(p.field, p.query_id, p.found) for p in problems] == expected
    assert total == len(expected)
    try:
        orjson.loads(data)
        refused = False
    except orjson.JSONDecodeError:
        refused = True
    assert refused == bool(expected)
