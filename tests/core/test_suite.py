"""evaluate_files (several tasks, files read once) and the GC pause around loading.

evaluate_files promises the results of one load_samples + evaluate_samples per
task with the same options (docs/python-api.md); checked on the bundled demo
for every persona and option set, byte for byte.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import orjson
import pytest

from ovearth_core import OVEarthInputError, evaluate_files, gc_paused
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import TASK_KEYS

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
GT = DEMO / "ground_truth.json"
PERSONAS = sorted((DEMO / "predictions").glob("*.json"))
TASKS = ("vocabulary", "referring", "reasoning")


@pytest.mark.parametrize("pred", PERSONAS, ids=[p.stem for p in PERSONAS])
@pytest.mark.parametrize("options", [
    {"modalities": "auto"},
    {"modalities": "segmentation,bbox,oriented_bbox", "iou_threshold": 0.3},
    {"modalities": "bbox,oriented_bbox", "score_threshold": 0.4, "iou_threshold": 0.75},
], ids=["auto", "all-0.3", "boxes-scored-0.75"])
def test_evaluate_files_equals_one_call_per_task(pred: Path, options: dict) -> None:
    """Same results, or the same first error (weak_baseline has unscored boxes)."""
    iou = options.get("iou_threshold", 0.5)
    expected = {}
    try:
        for task in TASKS:
            samples = load_samples(GT, pred, task, options.get("score_threshold"), "xyxy",
                                   options["modalities"])
            expected[task] = evaluate_samples(samples, iou)
    except OVEarthInputError as err:
        with pytest.raises(OVEarthInputError) as got_err:
            evaluate_files(GT, pred, TASKS, **options)
        assert str(got_err.value) == str(err)
        return
    got = evaluate_files(GT, pred, TASKS, **options)
    # Keyed as the JSON names each task (issue 46): the results' own "task".
    assert list(got) == ["open_vocabulary", "referring", "reasoning"]
    for task in TASKS:
        key = TASK_KEYS[task]
        assert got[key]["task"] == key
        assert orjson.dumps(got[key]) == orjson.dumps(expected[task]), task


def test_evaluate_files_subset_and_bad_input(tmp_path: Path) -> None:
    """A subset of tasks in the given order; bad input raises as the per-task calls do."""
    got = evaluate_files(GT, PERSONAS[0], ["reasoning", "vocabulary"])
    assert list(got) == ["reasoning", "open_vocabulary"]
    # The JSON names are accepted too, and give the same keys.
    assert list(evaluate_files(GT, PERSONAS[0], ["open_vocabulary"])) == ["open_vocabulary"]
    broken = tmp_path / "pred.json"
    broken.write_text(json.dumps({"tasks": {"referring": [{"query_id": 7}]}}))
    with pytest.raises(OVEarthInputError) as err:
        evaluate_files(GT, broken, ["referring"])
    assert "tasks.referring[0].query_id" in str(err.value)
    assert gc.isenabled()  # the pause ended with the error


def test_gc_paused_nests_and_restores() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_gc_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
