"""The typed view of a run's results (ovearth_core.results, issue 39).

Reference: the results dict itself, walked here by its own keys. Each field of a record is
the value under the key of the same name (the renames are this file's own table, not the
module's), of the same type (no number converted); every key of the dict is some field's,
so nothing is left out; lists are tuples in the same order; ``json`` is the very object.
Over the demo's four submissions, the app's test dataset and a generated benchmark, each
task, several modality sets, a modality not submitted, missing rows and negative queries.
Then a table of malformed dicts, each refused with the field path, expected and found.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest
from app_fixtures import write_dataset

from ovearth_core import results as results_module
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_run
from ovearth_core.io import load_samples
from ovearth_core.results import Coverage, Match, Results, RunConfig
from ovearth_core.synth import generate

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
TASKS = ("vocabulary", "referring", "reasoning")
MODALITY_SETS = ("segmentation,bbox,oriented_bbox", "bbox", "segmentation,oriented_bbox")
# Keys that are no Python names, and the field each is read into.
RENAMES = {"positive_mean_micro_f1@[0.5:0.95]": "positive_mean_micro_f1_50_95"}
PR_AT = {"Pr@0.5": 0.5, "Pr@0.6": 0.6, "Pr@0.7": 0.7, "Pr@0.8": 0.8, "Pr@0.9": 0.9}
OPEN_VOCAB_ONLY = {"num_negative", "negative_accuracy", "negative_false_positive_rate",
                   "presence", "gres_giou", "gres_ciou", "rmse_with_negatives"}


@pytest.fixture(autouse=True)
def _fresh_readers() -> None:
    """The record readers are cached once built (``_fields``, ``_keys``): built again for
    each test, so that mutation testing (issue 47), which runs each mutant in a process
    forked after the import, reads with the mutated builder."""
    results_module._fields.cache_clear()
    results_module._keys.cache_clear()


def same(view: Any, value: Any, path: str, task: str) -> None:
    """Assert the typed ``view`` is the JSON ``value`` at ``path``, field by field."""
    if is_dataclass(view):
        assert isinstance(value, dict), path
        assert view.json is value, path
        names = {f.name for f in fields(view)} - {"json"}
        covered = {"json"}
        if type(view).__name__ == "RunConfig":
            covered.add("task")  # from the output's top level (checked by the caller)
        for key, v in value.items():
            if key == "task" and not path:
                continue  # the output's task: the config's (checked by the caller)
            name = RENAMES.get(key, key)
            if key in PR_AT:
                assert view.precision_at[PR_AT[key]] == v, f"{path}.{key}"
                assert type(view.precision_at[PR_AT[key]]) is type(v), f"{path}.{key}"
                covered.add("precision_at")
                continue
            assert name in names, f"{path}.{key}: no field"
            covered.add(name)
            same(getattr(view, name), v, f"{path}.{key}", task)
        for name in names - covered:  # fields without a key here: the other tasks' only
            assert name in OPEN_VOCAB_ONLY and task != "open_vocabulary", f"{path}.{name}"
            assert getattr(view, name) is None, f"{path}.{name}"
        if task == "open_vocabulary":
            assert not (names & OPEN_VOCAB_ONLY) - covered, path
    elif isinstance(view, Match):
        assert list(view) == value and [type(x) for x in view] == [type(x) for x in value], path
    elif isinstance(view, tuple):
        assert isinstance(value, list) and len(view) == len(value), path
        for i, (a, b) in enumerate(zip(view, value, strict=True)):
            same(a, b, f"{path}[{i}]", task)
    elif isinstance(view, Mapping):
        assert isinstance(value, dict) and list(view) == list(value), path
        for key in value:
            same(view[key], value[key], f"{path}.{key}", task)
    else:
        assert view == value and type(view) is type(value), f"{path}: {view!r} != {value!r}"


def _evaluated(gt: Path, pred: Path, task: str, modalities: str, **options: Any
               ) -> dict[str, Any]:
    samples = load_samples(gt, pred, task, modalities=modalities,
                           score_threshold=options.get("score_threshold"))
    return evaluate_run(samples, options.get("iou_threshold", 0.5)).results


@pytest.fixture(scope="module")
def benchmarks(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, list[Path]]]:
    """(ground truth, submissions) of the demo, the app's dataset and a generated one."""
    app = write_dataset(tmp_path_factory.mktemp("app"))
    synth = tmp_path_factory.mktemp("synth")
    generate("tiny", synth, seed=0, images=False, workers=1)
    return [(DEMO / "ground_truth.json", sorted((DEMO / "predictions").glob("*.json"))),
            (app.gt, [app.model_a, app.model_b]),
            (synth / "ground_truth.json", sorted((synth / "predictions").glob("*.json")))]


def test_the_view_is_the_dict_field_by_field(benchmarks: list[tuple[Path, list[Path]]]
                                             ) -> None:
    seen: set[str] = set()
    for gt, submissions in benchmarks:
        for pred in submissions:
            for task in TASKS:
                for modalities in MODALITY_SETS:
                    results = _evaluated(gt, pred, task, modalities)
                    text = json.dumps(results)
                    view = Results.of(results)
                    assert json.dumps(results) == text  # read, never changed
                    assert view.task == results["task"] == view.config.task
                    same(view, results, "", results["task"])
                    assert view.json is results
                    for row in results["per_sample"]:
                        assert view.row(row["sample_id"]).json is row
                    assert RunConfig.of(results) == view.config
                    assert Coverage.of(results) == view.coverage
                    cov = results["coverage"]
                    seen |= {name for name, there in (
                        (task, True), ("not submitted", cov["not_submitted_modalities"]),
                        ("missing rows", cov["num_missing_prediction_rows"]),
                        ("negatives", results["summary"].get("num_negative")),
                        ("matches", any((r["bbox"] or {}).get("matches")
                                        for r in results["per_sample"]))) if there}
    assert seen == {*TASKS[1:], "vocabulary", "not submitted", "missing rows", "negatives",
                    "matches"}


def test_options_reach_the_config(benchmarks: list[tuple[Path, list[Path]]]) -> None:
    gt, (pred, *_) = benchmarks[0]
    results = _evaluated(gt, pred, "vocabulary", "auto", iou_threshold=0.3,
                         score_threshold=0.25)
    view = Results.of(results)
    same(view, results, "", "open_vocabulary")
    assert (view.config.iou_threshold, view.config.score_threshold) == (0.3, 0.25)


def test_an_unknown_query_id_is_a_key_error_naming_it(benchmarks) -> None:
    gt, (pred, *_) = benchmarks[1]
    view = Results.of(_evaluated(gt, pred, "referring", "bbox"))
    with pytest.raises(KeyError, match="'nope'.*per_sample"):
        view.row("nope")
    assert not view.has("nope") and view.has("ref_000001")


@pytest.fixture(scope="module")
def small() -> dict[str, Any]:
    """The app dataset's open-vocabulary results, every modality (ov_000002: a negative)."""
    from tempfile import TemporaryDirectory

    with TemporaryDirectory() as tmp:
        ds = write_dataset(Path(tmp))
        return _evaluated(ds.gt, ds.model_a, "vocabulary", "segmentation,bbox,oriented_bbox")


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def change(results: dict[str, Any]) -> None:
        *head, last = path
        obj = results
        for k in head:
            obj = obj[k]
        if value is _DELETE:
            del obj[last]
        else:
            obj[last] = value
    return change


_DELETE = object()


def _referring(results: dict[str, Any]) -> None:
    results["task"] = "referring"  # open vocabulary's keys are then too many


def _disable_bbox(results: dict[str, Any]) -> None:
    results["config"]["modalities"].remove("bbox")


def _repeat_row(results: dict[str, Any]) -> None:
    results["per_sample"].append(results["per_sample"][0])


def _two(results: dict[str, Any]) -> None:
    _set(("summary", "num_samples"), "6")(results)
    _set(("coverage", "submitted_modalities"), "bbox")(results)


@pytest.mark.parametrize(("change", "messages"), [
    (_set(("summary", "seg", "positive_micro_miou"), _DELETE),
     ["field summary.seg.positive_micro_miou: expected a number or null, found no such key"]),
    (_set(("per_sample", 2, "bbox", "num_pred"), "1"),
     ["query_id ov_000003, field per_sample[2].bbox.num_pred: expected an integer, "
      "found str '1'"]),
    (_set(("summary", "bbox", "tp"), True),
     ["field summary.bbox.tp: expected an integer, found true"]),
    (_set(("per_sample", 1, "negative"), 0),
     ["query_id ov_000002, field per_sample[1].negative: expected true or false, found int 0"]),
    (_set(("summary", "extra"), 1),
     ["field summary.extra: expected only the keys"]),
    (_set(("summary", "presence"), _DELETE),
     ["field summary.presence: expected an object (Presence) or null, found no such key"]),
    (_referring, ["field summary.presence: expected only the keys",
                  "field summary.seg.gres_giou: expected only the keys"]),
    (_set(("task",), "vocab"),
     ["field task: expected one of open_vocabulary, referring, reasoning, found str 'vocab'"]),
    (_set(("config", "modalities"), "bbox"),
     ["field config.modalities: expected a list (a string each), found str 'bbox'"]),
    (_set(("config", "score_threshold"), "high"),
     ["field config.score_threshold: expected a number or null, found str 'high'"]),
    (_disable_bbox, ["field summary.bbox: expected null (bbox is not enabled)",
                     "query_id ov_000001, field per_sample[0].bbox: expected null (bbox is not "
                     "enabled)", "field per_category[0].bbox: expected null"]),
    (_set(("per_sample", 0, "seg"), None),
     ["query_id ov_000001, field per_sample[0].seg: expected an object (segmentation is "
      "enabled), found null"]),
    (_repeat_row, ["query_id ov_000001, field per_sample[6].sample_id: expected each query_id "
                   "once"]),
    (_set(("summary", "seg", "key_metrics"), {"positive_micro_miou": 0.5}),
     ["field summary.seg.key_metrics: expected an object with the keys "
      "positive_macro_precision, positive_macro_recall, positive_macro_miou, "
      "positive_micro_miou"]),
    (_set(("per_sample", 4, "bbox", "matches"), [[0, 1]]),
     ["query_id ov_000005, field per_sample[4].bbox.matches[0]: expected [gt index, pred "
      "index, IoU], found list [0, 1]"]),
    (_set(("per_category",), {}),
     ["field per_category: expected a list (an object (CategoryRow) each), found object {}"]),
    (_set(("coverage", "num_queries"), 6.0),
     ["field coverage.num_queries: expected an integer, found float 6.0"]),
    (_set(("warnings",), [{"code": "x"}]),
     ["field warnings[0].message: expected a string, found no such key"]),
    (_two, ["2 problems found", "field summary.num_samples: expected an integer",
            "field coverage.submitted_modalities: expected a list"]),
])
def test_a_malformed_dict_is_refused_saying_where_and_what(small: dict[str, Any], change: Any,
                                                          messages: list[str]) -> None:
    results = copy.deepcopy(small)
    change(results)
    with pytest.raises(OVEarthInputError) as err:
        Results.of(results)
    for message in messages:
        assert message in str(err.value)
    assert all(p.file == "(results)" for p in err.value.problems)


def test_the_view_pickles_whole(small: dict[str, Any]) -> None:
    # A forked child sends its results back pickled (ovearth_core.forked).
    view = Results.of(small)
    back = pickle.loads(pickle.dumps(view))
    assert back == view and back.json == small
    with pytest.raises(TypeError):
        view.summary.seg.key_metrics["positive_micro_miou"] = 1.0  # type: ignore[index]


def test_a_block_read_alone_is_refused_as_in_the_whole() -> None:
    with pytest.raises(OVEarthInputError, match="field coverage: expected an object "
                                                r"\(Coverage\), found no such key"):
        Coverage.of({"task": "referring"})
    with pytest.raises(OVEarthInputError, match="field config.bbox_format: expected a "
                                                "string, found no such key"):
        RunConfig.of({"task": "referring", "config": {
            "iou_threshold": 0.5, "modalities": ["bbox"], "score_threshold": None}})


def test_not_a_results_dict_at_all() -> None:
    for value in ([], None, "results"):
        with pytest.raises(OVEarthInputError, match=r"field \(top level\): expected an object"):
            Results.of(value)  # type: ignore[arg-type]
    with pytest.raises(OVEarthInputError, match="field task: expected one of .* found no "
                                                "such key"):
        Results.of({})
