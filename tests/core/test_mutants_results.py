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


# ---- second pass (issue 47): the survivors of a full run, each rule stated -----------------

def _problems(results: dict[str, Any], file: str = "(results)") -> list[tuple]:
    with pytest.raises(OVEarthInputError) as err:
        Results.of(results, file) if file != "(results)" else Results.of(results)
    return [(p.file, p.field, p.expected, p.found, p.query_id) for p in err.value.problems]


def test_a_block_read_alone_names_the_file_it_was_given() -> None:
    """``RunConfig.of`` and ``Coverage.of`` name the caller's file in a problem, as
    ``Results.of`` does (kills ``RunConfig.of`` 4, ``Coverage.of`` 4, ``_block_of`` 2)."""
    with pytest.raises(OVEarthInputError) as err:
        RunConfig.of({"task": "referring", "config": {}}, "run_a.json")
    assert {p.file for p in err.value.problems} == {"run_a.json"}
    with pytest.raises(OVEarthInputError) as err:
        Coverage.of({"task": "referring", "coverage": []}, "run_b.json")
    assert [(p.file, p.field, p.found) for p in err.value.problems] == [
        ("run_b.json", "coverage", "list []")]


def test_a_problem_outside_every_row_names_no_query_and_shows_what_was_found() -> None:
    """A results value that is no object is shown as found; a problem outside ``per_sample``
    has no query_id (kills ``_Context.__init__`` 4, ``read_task`` 4)."""
    assert _problems(["x"]) == [("(results)", "(top level)",
                                 "an object (the evaluator's results)", "list ['x']", None)]
    assert _problems("results")[0][3] == "str 'results'"
    (problem,) = _problems({"task": "ranking"})
    assert problem == ("(results)", "task", "one of open_vocabulary, referring, reasoning",
                       "str 'ranking'", None)


def test_a_missing_list_or_mapping_says_what_it_should_have_been(
        two: dict[str, dict[str, Any]]) -> None:
    """A missing key is refused with the reader's own expectation: a list of records, an
    object of the named keys (kills ``_sequence`` 17, ``_mapping`` 34)."""
    results = copy.deepcopy(two["open_vocabulary"])
    del results["per_sample"]
    names = list(results["summary"]["oriented_bbox"]["key_metrics"])
    del results["summary"]["oriented_bbox"]["key_metrics"]
    assert _problems(results) == [
        ("(results)", "summary.oriented_bbox.key_metrics",
         f"an object with the keys {', '.join(names)} (a number or null each)",
         "no such key", None),
        ("(results)", "per_sample", "a list (an object (QueryRow) each)", "no such key", None)]


def test_a_mappings_values_are_read_at_their_own_path(two: dict[str, dict[str, Any]]) -> None:
    """A key metric of the wrong type is named by its path inside the mapping; a mapping of
    other keys is shown as found (kills ``_mapping`` 19, 25, 30, 31)."""
    results = copy.deepcopy(two["open_vocabulary"])
    results["summary"]["bbox"]["key_metrics"]["positive_micro_f1"] = "high"
    results["summary"]["seg"]["key_metrics"] = {"positive_micro_miou": 0.5}
    problems = _problems(results)
    assert [(p[1], p[3]) for p in problems] == [
        ("summary.seg.key_metrics", "object {'positive_micro_miou': 0.5}"),
        ("summary.bbox.key_metrics.positive_micro_f1", "str 'high'")]
    assert problems[1][2] == "a number or null"


def test_an_optional_record_of_the_wrong_type_may_also_be_null(
        two: dict[str, dict[str, Any]]) -> None:
    """A record that may be null (open vocabulary's presence, a modality's entry) says so
    when it is neither (kills ``_record`` 12, 17)."""
    results = copy.deepcopy(two["open_vocabulary"])
    results["summary"]["presence"] = 5
    results["per_sample"][0]["seg"] = []
    assert _problems(results) == [
        ("(results)", "summary.presence", "an object (Presence) or null", "int 5", None),
        ("(results)", "per_sample[0].seg", "an object (SegEntry) or null", "list []",
         results["per_sample"][0]["sample_id"])]


def test_matches_that_are_no_list_say_what_a_match_is(two: dict[str, dict[str, Any]]) -> None:
    """(kills ``_reader`` 26, 30, 31, 32: the match's expectation inside the list's)"""
    results = copy.deepcopy(two["open_vocabulary"])
    results["per_sample"][0]["bbox"]["matches"] = "x"
    ((_, field_, expected, found, _),) = _problems(results)
    assert (field_, expected, found) == ("per_sample[0].bbox.matches",
                                         "a list ([gt index, pred index, IoU] each)", "str 'x'")


def test_a_field_of_a_type_without_a_reader_is_a_type_error_naming_it() -> None:
    """A record class annotated with a type the reader does not know fails when its reader
    is built, naming the type (kills ``_reader`` 24, 44)."""
    from ovearth_core import results as results_module

    with pytest.raises(TypeError) as err:
        results_module._reader(set[int])
    assert str(err.value) == "no reader for set[int]"
    with pytest.raises(TypeError) as err:
        results_module._reader(set[int] | None)
    assert str(err.value) == "no reader for set[int] or null"


@pytest.mark.parametrize("sample_id", [5, None, "absent"])
def test_a_row_without_a_string_query_id_names_no_query(two: dict[str, dict[str, Any]],
                                                        sample_id: Any) -> None:
    """Only a string ``sample_id`` names the query of a row's problems (kills ``_read``
    18: ``or`` for ``and``, which took an integer as the query and a missing one as a
    KeyError)."""
    results = copy.deepcopy(two["open_vocabulary"])
    if sample_id == "absent":
        del results["per_sample"][1]["sample_id"]
        found = "no such key"
    else:
        results["per_sample"][1]["sample_id"] = sample_id
        found = "int 5" if sample_id == 5 else "null"
    assert _problems(results) == [("(results)", "per_sample[1].sample_id", "a string", found,
                                   None)]


def test_each_precision_at_key_is_read_at_its_own_path(two: dict[str, dict[str, Any]]) -> None:
    """``Pr@0.5`` ... ``Pr@0.9`` are keys of their block (kills ``_read`` 35, 36)."""
    results = copy.deepcopy(two["open_vocabulary"])
    del results["summary"]["seg"]["Pr@0.7"]
    results["summary"]["bbox"]["grounding"]["Pr@0.9"] = "x"
    assert [(p[1], p[2], p[3]) for p in _problems(results)] == [
        ("summary.seg.Pr@0.7", "a number or null", "no such key"),
        ("summary.bbox.grounding.Pr@0.9", "a number or null", "str 'x'")]


def test_concave_obb_is_a_key_of_the_config_only_and_only_when_on(
        two: dict[str, dict[str, Any]]) -> None:
    """The extension is written in the config when on (``RunConfig.OPTIONAL_KEYS``):
    read there, refused in any other record (kills ``_read`` 61, 67, 68)."""
    results = copy.deepcopy(two["referring"])
    assert Results.of(results).config.concave_obb is False
    results["config"]["concave_obb"] = True
    assert Results.of(results).config.concave_obb is True
    assert RunConfig.of(results).concave_obb is True
    results["coverage"]["concave_obb"] = True
    ((_, field_, expected, found, _),) = _problems(results)
    assert (field_, found) == ("coverage.concave_obb", "true")
    assert expected.startswith("only the keys first_missing_query_ids, not_submitted_modalities")


def test_a_renamed_key_is_refused_as_missing_and_as_unknown(two: dict[str, dict[str, Any]]
                                                            ) -> None:
    """A key spelled otherwise leaves the object as long as it was: both the missing key and
    the unknown one are problems (kills ``_read`` 69, 71)."""
    results = copy.deepcopy(two["referring"])
    n = results["coverage"]["num_queries"]
    results["coverage"]["num_querys"] = results["coverage"].pop("num_queries")
    problems = _problems(results)
    assert [(p[1], p[3]) for p in problems] == [("coverage.num_queries", "no such key"),
                                                ("coverage.num_querys", f"int {n}")]
    assert problems[1][2].startswith("only the keys ")


def test_an_unknown_modality_in_the_config_is_named(two: dict[str, dict[str, Any]]) -> None:
    """(kills ``_check_blocks`` 3-12)"""
    results = copy.deepcopy(two["referring"])
    results["config"]["modalities"].append("mask")
    assert _problems(results) == [("(results)", "config.modalities",
                                   "modalities among segmentation, bbox, oriented_bbox",
                                   "str 'mask'", None)]


def test_a_block_of_a_disabled_modality_is_shown_as_found_and_a_repeated_row_by_its_id(
        two: dict[str, dict[str, Any]]) -> None:
    """A block present while its modality is off is refused showing the block; a repeated
    row showing its query_id (kills ``_check_blocks`` 34, 45, 53)."""
    results = copy.deepcopy(two["referring"])
    results["config"]["modalities"] = []
    problems = _problems(results)
    assert problems[0][:3] == ("(results)", "summary.bbox", "null (bbox is not enabled)")
    assert problems[0][3].startswith("object {'by_size': {")  # the block itself
    results = copy.deepcopy(two["referring"])
    results["per_sample"].append(results["per_sample"][0])
    first = results["per_sample"][0]["sample_id"]
    n = len(results["per_sample"]) - 1
    assert _problems(results) == [("(results)", f"per_sample[{n}].sample_id",
                                   "each query_id once (a repeated row)", f"str '{first}'",
                                   first)]


# ---- the record classes' declarations (``_key``, ``_json``), run at import --------------------

@pytest.fixture
def executed_again() -> Any:
    """``ovearth_core.results`` executed once more, under its own name (mutmut switches a
    mutant by the function's module name), while the test runs; the imported module is put
    back after. ``_key`` and ``_json`` run while the record classes are defined, at import:
    a mutant of theirs is seen only by classes defined with it in force."""
    import importlib.util
    import sys

    name = "ovearth_core.results"
    original = sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, original.__file__)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the type hints of the new classes resolve in it
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules[name] = original


@pytest.mark.parametrize("task", ["open_vocabulary", "referring"])
def test_each_field_is_declared_with_its_key_task_and_names(
        two: dict[str, dict[str, Any]], executed_again: Any, task: str) -> None:
    """Every field reads the key declared beside it (``positive_mean_micro_f1@[0.5:0.95]``,
    the ``Pr@`` group), open vocabulary's keys only in that task, a mapping's names in their
    order: the classes as declared read the output field by field (kills ``_key`` 1-6, 9,
    10)."""
    results = two[task]
    same(executed_again.Results.of(results), results, "", task)


def test_a_mappings_declared_names_are_required_in_order(
        two: dict[str, dict[str, Any]], executed_again: Any) -> None:
    """(kills ``_key`` 7, 8: the names lost, so any keys were taken)"""
    results = copy.deepcopy(two["referring"])
    metrics = results["summary"]["bbox"]["key_metrics"]
    results["summary"]["bbox"]["key_metrics"] = dict(reversed(metrics.items()))
    with pytest.raises(OVEarthInputError) as err:
        executed_again.Results.of(results)
    (problem,) = err.value.problems
    assert problem.field == "summary.bbox.key_metrics"
    assert problem.expected == (f"an object with the keys {', '.join(metrics)} (a number or "
                                "null each)")


def test_a_records_json_is_keyword_only_unrepresented_uncompared_and_empty_by_default(
        executed_again: Any) -> None:
    """``json`` is what a record was read from: ``{}`` for one built by hand, given by name
    only, left out of ``repr`` and of equality (kills ``_json`` 1, 4-11)."""
    cls = executed_again.ResultWarning
    built = cls("c", "m")
    assert built.json == {}
    read = cls("c", "m", json={"code": "c", "message": "m"})
    assert built == read
    assert repr(read) == "ResultWarning(code='c', message='m')"
    with pytest.raises(TypeError):
        cls("c", "m", {"code": "c"})
