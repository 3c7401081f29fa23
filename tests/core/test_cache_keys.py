"""The on-disk result cache never serves one option's result for another (issue 27).

For every evaluation option and every place that builds a cache key (the app's
``pages.common.data.evaluate``, ``ovearth_core.pipeline.evaluate_cached``, the report's
``build_report_data`` and the leaderboard's ``evaluate_submissions``), two runs that differ
only in that option go through one temporary ``OVEARTH_CACHE_DIR``, with every in-memory
cache forgotten in between: the second run must equal a fresh evaluation under its own
options (``load_samples`` + ``evaluate_samples`` with no cache at all), numbers and config.
The planted bug this guards: a call site that leaves one option out of the key (a second
run at another score threshold returned the first run's F1, and its config said the other
threshold)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import streamlit as st

from ovearth_core import pipeline
from ovearth_core.analysis.leaderboard import evaluate_submissions
from ovearth_core.cache import ResultCache
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.report.build import build_report_data
from ovearth_core.types import TASK_KEYS
from pages.common import data

REPO = Path(__file__).resolve().parents[2]
GT = REPO / "assets" / "demo" / "ground_truth.json"
# Every box carries a score, and the file has all three modalities: each option below
# changes its numbers.
PRED = REPO / "assets" / "demo" / "predictions" / "strong_localiser.json"
ALL = ("segmentation", "bbox", "oriented_bbox")
BASE: dict[str, Any] = {"task": "vocabulary", "modalities": ALL, "iou_threshold": 0.5,
                        "score_threshold": None, "bbox_format": "xyxy"}
# (option, the first run's value, the second run's value): both runs differ in that one only.
VARIANTS = [
    ("task", "vocabulary", "referring"),
    ("modalities", ALL, ("bbox",)),
    ("iou_threshold", 0.5, 0.75),
    ("score_threshold", None, 0.5),
    ("score_threshold", 0.3, 0.6),
    ("bbox_format", "xyxy", "xywh"),
]
IDS = [f"{name}={a}->{b}" for name, a, b in VARIANTS]

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _fresh(o: dict[str, Any]) -> dict[str, Any]:
    """The reference: the evaluator itself, no cache anywhere."""
    from ovearth_core.io import load_samples

    return evaluate_samples(load_samples(GT, PRED, o["task"], o["score_threshold"],
                                         o["bbox_format"], o["modalities"]),
                            o["iou_threshold"])


def _forget_memory() -> None:
    """What a restarted server forgets: every in-memory cache (the disk cache stays)."""
    data.clear_caches()
    st.cache_data.clear()
    st.cache_resource.clear()


def _app(o: dict[str, Any], folder: Path) -> tuple[dict[str, Any], bool]:
    evaluation = data.evaluate(data.file_key(GT), data.file_key(PRED), data.Options(**o))
    assert not evaluation.problems
    return evaluation.results, evaluation.from_cache


def _pipeline(o: dict[str, Any], folder: Path) -> tuple[dict[str, Any], bool]:
    run, cached = pipeline.evaluate_cached(pipeline.load(GT, PRED, data.Options(**o)),
                                           ResultCache(folder))
    return run.results, cached


def _report(o: dict[str, Any], folder: Path) -> tuple[dict[str, Any], bool]:
    built = build_report_data(GT, [PRED], data.Options(**o), GT.parent, [o["task"]],
                              n_resamples=10, cache=ResultCache(folder))
    return built.submissions[0].results[TASK_KEYS[o["task"]]], built.num_cached == 1


def _leaderboard(o: dict[str, Any], folder: Path) -> tuple[dict[str, Any], bool]:
    (outcome,) = evaluate_submissions(GT, [PRED], o["task"], o["modalities"],
                                      o["iou_threshold"], o["score_threshold"],
                                      o["bbox_format"], cache=ResultCache(folder), workers=1)
    assert outcome.result is not None, outcome.problems
    return outcome.result, outcome.cached


CALL_SITES: dict[str, Callable[[dict[str, Any], Path], tuple[dict[str, Any], bool]]] = {
    "app data.evaluate": _app, "pipeline.evaluate_cached": _pipeline,
    "report build_report_data": _report, "leaderboard evaluate_submissions": _leaderboard,
}


@pytest.mark.parametrize(("name", "first", "second"), VARIANTS, ids=IDS)
def test_the_variants_change_the_numbers(name: str, first: object, second: object) -> None:
    """Premise: each pair of runs really differs in its numbers, not only in its config."""
    a, b = _fresh({**BASE, name: first}), _fresh({**BASE, name: second})
    assert a["summary"] != b["summary"]


@pytest.mark.parametrize("site", list(CALL_SITES))
@pytest.mark.parametrize(("name", "first", "second"), VARIANTS, ids=IDS)
def test_runs_that_differ_in_one_option_never_share_a_result(
        site: str, name: str, first: object, second: object,
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(folder))
    run = CALL_SITES[site]
    a_options, b_options = {**BASE, name: first}, {**BASE, name: second}
    a, a_cached = run(a_options, folder)
    assert not a_cached
    _forget_memory()
    b, b_cached = run(b_options, folder)
    expected = _fresh(b_options)
    assert not b_cached, f"{site}: the {name}={second!r} run was served from the cache"
    assert b["summary"] == expected["summary"]
    assert b["config"] == expected["config"]
    assert b == expected
    # Both are stored, and each is found again under its own options.
    _forget_memory()
    again, again_cached = run(a_options, folder)
    assert again_cached and again == _fresh(a_options)
