"""One frozen ``Options`` value and one cache key built from it (issue 27): every field
changes the key (the fields are iterated, so a new one is covered without editing this
file), and each evaluating layer (leaderboard, report, app) keys its cached results by the
options it evaluated with: a second run at another score threshold gets its own numbers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from analysis_fixtures import make_ground_truth, make_predictions

from ovearth_core.cache import ResultCache, key
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options

GT, PRED = "a" * 64, "b" * 64
MODS = ("segmentation", "bbox", "oriented_bbox")
# The options only the average precision reads (written out here, not taken from the code).
AP_ONLY = {"hard_negatives", "max_detections", "nms_ap", "aitod"}
# The statistics' settings (issue 37): they change no evaluation either.
STATISTICS_ONLY = {"rank_resamples", "alpha", "min_count", "friedman_blocks"}
BASE = Options("vocabulary", MODS, 0.5, 0.3, "xyxy", False, 100)


def _other(value: Any) -> Any:
    """A different value of the same kind (by the value's type, so that a new field of any
    of these types is covered)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.125
    if value is None:
        return 0.5
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, tuple):
        return value[:-1]
    raise AssertionError(f"no other value for {value!r}: extend _other")


def _variants() -> list[tuple[str, Options]]:
    out = []
    for f in dataclasses.fields(Options):
        changed = dataclasses.replace(BASE, **{f.name: _other(getattr(BASE, f.name))})
        assert getattr(changed, f.name) != getattr(BASE, f.name), f.name
        out.append((f.name, changed))
    return out


def test_every_field_changes_the_key() -> None:
    keys = {key("evaluate_samples", GT, PRED, BASE)}
    for name, changed in _variants():
        new = key("evaluate_samples", GT, PRED, changed)
        assert new not in keys, f"the key ignores Options.{name}"
        keys.add(new)
    assert key("evaluate_run", GT, PRED, BASE) not in keys
    assert key("evaluate_samples", PRED, GT, BASE) not in keys


def test_the_evaluator_key_keeps_every_field_but_the_ap_ones() -> None:
    base = key("evaluate_samples", GT, PRED, BASE.evaluator())
    for name, changed in _variants():
        same = key("evaluate_samples", GT, PRED, changed.evaluator()) == base
        assert same == (name in AP_ONLY | STATISTICS_ONLY), name


@pytest.mark.parametrize(("given", "expected"), [
    ("segmentation, bbox", ("segmentation", "bbox")),
    (["segmentation", "bbox"], ("segmentation", "bbox")),
    ("bbox,segmentation", ("bbox", "segmentation")),  # the order asked is kept
    (" auto", ("auto",)),
    ("auto", ("auto",)),
])
def test_modalities_are_normalised_once(given: object, expected: tuple[str, ...]) -> None:
    assert Options("vocabulary", given).modalities == expected  # type: ignore[arg-type]


def test_options_are_frozen_and_hashable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        BASE.task = "referring"  # type: ignore[misc]
    assert hash(BASE) == hash(Options("vocabulary", list(MODS), 0.5, 0.3))
    assert Options("vocabulary", MODS, 1).iou_threshold == 1.0
    assert type(Options("vocabulary", MODS, 1).iou_threshold) is float


# The planted bug of issue 27: a cache-key call site that leaves out one option.


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("options_pair")
    gt = make_ground_truth(seed=5, n_annotations=16, n_categories=4)
    (root / "gt.json").write_text(json.dumps(gt))
    (root / "pred.json").write_text(json.dumps(make_predictions(gt, seed=6, skill=0.6)))
    return root / "gt.json", root / "pred.json"


def _fresh(gt: Path, pred: Path, score: float) -> dict[str, Any]:
    return evaluate_samples(load_samples(gt, pred, "vocabulary", score, "xyxy", MODS), 0.5)


def _f1(result: dict[str, Any]) -> float:
    return result["summary"]["bbox"]["positive_micro_f1"]


def test_fixture_f1_depends_on_the_score_threshold(files: tuple[Path, Path]) -> None:
    assert _f1(_fresh(*files, 0.2)) != _f1(_fresh(*files, 0.8))


@pytest.mark.parametrize("layer", ["leaderboard", "report", "app"])
def test_another_score_threshold_gets_its_own_numbers(layer: str, files: tuple[Path, Path],
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    gt, pred = files
    store = ResultCache(tmp_path / "cache")
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(store.folder))

    def run(score: float) -> dict[str, Any]:
        if layer == "leaderboard":
            from ovearth_core.analysis.leaderboard import evaluate_submissions

            [outcome] = evaluate_submissions(gt, [pred], "vocabulary", MODS, 0.5, score,
                                             cache=store, workers=1)
            return outcome.result
        if layer == "report":
            from ovearth_core.report.build import build_report_data

            built = build_report_data(gt, [pred], Options("vocabulary", MODS,
                                                          score_threshold=score),
                                      tasks=["vocabulary"], worst=0, cache=store)
            return built.submissions[0].results["open_vocabulary"]
        from pages.common import data

        data.clear_caches()
        evaluated = data.evaluate(data.file_key(gt), data.file_key(pred),
                                  data.Options("vocabulary", MODS, 0.5, score, "xyxy"))
        return evaluated.results

    for score in (0.2, 0.8, 0.2, 0.8):  # the second pair from the cache
        got = run(score)
        assert got["config"]["score_threshold"] == score
        assert _f1(got) == _f1(_fresh(gt, pred, score)), (layer, score)
    assert store.hits >= 2 or layer == "app"


def test_options_from_a_command_line_take_every_flag_it_has() -> None:
    from ovearth_core.cli import build_parser

    args = build_parser().parse_args(["--gt", "g.json", "--prediction", "p.json", "--task",
                                      "referring", "--modalities", "bbox", "--iou-threshold",
                                      "0.7", "--score-threshold", "0.25", "--bbox-format",
                                      "xywh"])
    assert Options.from_args(args) == Options("referring", ("bbox",), 0.7, 0.25, "xywh",
                                              False, 100)
    args.hard_negatives, args.max_detections = True, 1500
    assert Options.from_args(args) == Options("referring", ("bbox",), 0.7, 0.25, "xywh",
                                              True, 1500)
