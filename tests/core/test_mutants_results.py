"""The results view's rules, fast (issue 47): the field-by-field check of
``tests/core/test_results.py`` on the app's small dataset in two tasks (open vocabulary, every
modality; referring, boxes only), without the demo's and the generated benchmark's twelve
submissions, so mutmut can run it per mutant; plus the reader's rules its table of malformed
dicts leaves open (a query's lookup, the keys named in a refusal, a match's types)."""

from __future__ import annotations

import copy
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from app_fixtures import write_dataset
from test_results import _evaluated, _fresh_readers, same  # noqa: F401 (a fixture)

from ovearth_core.errors import OVEarthInputError
from ovearth_core.results import Coverage, Results, RunConfig


@pytest.fixture(scope="module")
def two() -> dict[str, dict[str, Any]]:
    with TemporaryDirectory() as tmp:
        ds = write_dataset(Path(tmp))
        return {"open_vocabulary": _evaluated(ds.gt, ds.model_a, "vocabulary",
                                              "segmentation,bbox,oriented_bbox"),
                "referring": _evaluated(ds.gt, ds.model_b, "referring", "bbox")}


@pytest.mark.parametrize("task", ["open_vocabulary", "referring"])
def test_the_view_is_the_dict_field_by_field(two: dict[str, dict[str, Any]], task: str
                                             ) -> None:
    results = two[task]
    view = Results.of(results)
    assert view.task == task == view.config.task
    same(view, results, "", task)
    assert RunConfig.of(results) == view.config and Coverage.of(results) == view.coverage
    for row in results["per_sample"]:
        assert view.has(row["sample_id"]) and view.row(row["sample_id"]).json is row


def test_an_unknown_query_is_a_key_error_naming_it_the_rows_and_the_task(
        two: dict[str, dict[str, Any]]) -> None:
    view = Results.of(two["referring"])
    n = len(two["referring"]["per_sample"])
    with pytest.raises(KeyError) as err:
        view.row("nope")
    assert err.value.args[0] == (f"query_id 'nope' is not among the {n} per_sample rows of "
                                 "this run (task 'referring')")
    assert not view.has("nope")


def test_a_block_asked_by_a_key_that_is_no_modalitys_is_a_key_error(
        two: dict[str, dict[str, Any]]) -> None:
    view = Results.of(two["open_vocabulary"])
    row = view.per_sample[0]
    assert row.block("bbox") is row.bbox and row.block("seg") is row.seg
    assert row.block("oriented_bbox") is row.oriented_bbox
    for record in (view.summary, view.per_category[0]):
        assert record.block("seg") is record.seg and record.block("bbox") is record.bbox
        assert record.block("oriented_bbox") is record.oriented_bbox
        with pytest.raises(KeyError, match="'segmentation' is not a modality's output key"):
            record.block("segmentation")
    with pytest.raises(KeyError) as err:
        row.block("mask")
    assert err.value.args[0] == "'mask' is not a modality's output key (seg, bbox, oriented_bbox)"


def test_an_unknown_key_is_named_with_the_keys_the_record_takes(
        two: dict[str, dict[str, Any]]) -> None:
    results = copy.deepcopy(two["referring"])
    results["coverage"]["zz"] = 1
    results["coverage"]["aa"] = None
    with pytest.raises(OVEarthInputError) as err:
        Results.of(results)
    keys = ", ".join(sorted(k for k in two["referring"]["coverage"]))
    problems = [(p.field, p.expected, p.found) for p in err.value.problems]
    assert problems == [
        ("coverage.zz", f"only the keys {keys} (Coverage, referring task)", "int 1"),
        ("coverage.aa", f"only the keys {keys} (Coverage, referring task)", "null")]


@pytest.mark.parametrize("match, ok", [([0, 1, 0.5], True), ([0, 1, 1], True),
                                       ([0.0, 1, 0.5], False), ([0, True, 0.5], False),
                                       ([0, 1, "0.5"], False), ([0, 1, 0.5, 2], False),
                                       ((0, 1, 0.5), False)])
def test_a_match_is_two_integer_indices_and_a_number(two: dict[str, dict[str, Any]],
                                                     match: Any, ok: bool) -> None:
    results = copy.deepcopy(two["open_vocabulary"])
    row = next(i for i, r in enumerate(results["per_sample"])
               if r["bbox"] and r["bbox"]["matches"])
    results["per_sample"][row]["bbox"]["matches"][0] = match
    if ok:
        got = Results.of(results).per_sample[row].bbox.matches[0]
        assert (got.gt, got.pred, got.iou) == tuple(match)
        return
    with pytest.raises(OVEarthInputError) as err:
        Results.of(results)
    (problem,) = err.value.problems
    assert problem.field == f"per_sample[{row}].bbox.matches[0]"
    assert problem.expected == "[gt index, pred index, IoU]"
    assert problem.query_id == results["per_sample"][row]["sample_id"]
