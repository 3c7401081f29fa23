"""The app's evaluation path through the on-disk result cache (issue 17): a restarted
server (every in-memory cache gone) shows the same numbers, says they come from the cache,
and evaluates nothing; the cached run equals a fresh evaluate_run (results and box facts)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest
import streamlit as st
from app_fixtures import assert_ok
from streamlit.testing.v1 import AppTest

from ovearth_core.cache import ResultCache
from ovearth_core.evaluate import evaluate_run
from ovearth_core.io import load_samples
from pages.common import data

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
DEMO = REPO / "assets" / "demo"
PRED = DEMO / "predictions" / "strong_localiser.json"
OPTIONS = data.Options("vocabulary", ("segmentation", "bbox", "oriented_bbox"), 0.5, None,
                       "xyxy")

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _restart() -> None:
    """What a server restart forgets: every in-memory cache."""
    data.clear_caches()
    st.cache_data.clear()
    st.cache_resource.clear()


def _overview() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["pred_path"] = "assets/demo/predictions/strong_localiser.json"
    return at.run()


def _first_caption(at: AppTest) -> str:
    return at.caption[0].value


def test_a_restarted_server_loads_the_numbers_from_the_cache(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    first = _overview()
    assert_ok(first)
    assert "evaluated in" in _first_caption(first)
    assert "result cache" not in _first_caption(first)
    cards = {m.label: m.value for m in first.metric}
    assert len(ResultCache(tmp_path / "cache").entries()) == 1

    _restart()
    calls: list[object] = []
    import ovearth_core.evaluate as core_evaluate

    real = core_evaluate.evaluate_run
    monkeypatch.setattr(core_evaluate, "evaluate_run",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    second = _overview()
    assert_ok(second)
    assert "the numbers from the result cache" in _first_caption(second)
    assert calls == []  # nothing evaluated
    assert {m.label: m.value for m in second.metric} == cards


def test_the_cached_run_equals_a_fresh_one(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    gt, pred = data.file_key(DEMO / "ground_truth.json"), data.file_key(PRED)
    cold = data.evaluate(gt, pred, OPTIONS)
    _restart()
    warm = data.evaluate(gt, pred, OPTIONS)
    assert not cold.from_cache and warm.from_cache
    fresh = evaluate_run(load_samples(DEMO / "ground_truth.json", PRED, "vocabulary",
                                      modalities=OPTIONS.modalities), 0.5)
    assert warm.results == fresh.results == cold.results
    # Every key in order, every float to the bit, ints stay ints (issue 26: JSON entries).
    assert orjson.dumps(warm.results) == orjson.dumps(fresh.results)
    assert warm.rows == cold.rows
    assert set(warm.run.box_facts) == set(fresh.box_facts) == {"bbox", "oriented_bbox"}
    for modality, facts in fresh.box_facts.items():
        for a, b in zip(warm.run.box_facts[modality], facts, strict=True):
            assert a.best_iou == b.best_iou and a.duplicated == b.duplicated
            assert (type(a.best_iou), type(a.duplicated)) == (type(b.best_iou),
                                                              type(b.duplicated))
            assert a.gt_best_iou.dtype == b.gt_best_iou.dtype
            np.testing.assert_array_equal(a.gt_best_iou, b.gt_best_iou)
    assert len(warm.run.samples) == len(fresh.samples)


def test_other_options_are_another_entry(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    gt, pred = data.file_key(DEMO / "ground_truth.json"), data.file_key(PRED)
    a = data.evaluate(gt, pred, OPTIONS)
    _restart()
    other = data.Options(**{**OPTIONS.__dict__, "iou_threshold": 0.75})
    b = data.evaluate(gt, pred, other)
    assert not b.from_cache and b.results["config"]["iou_threshold"] == 0.75
    assert b.results != a.results
    assert len(ResultCache(tmp_path / "cache").entries()) == 2


def test_with_the_cache_off_nothing_is_written(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OVEARTH_CACHE", "off")
    gt, pred = data.file_key(DEMO / "ground_truth.json"), data.file_key(PRED)
    assert not data.evaluate(gt, pred, OPTIONS).from_cache
    _restart()
    assert not data.evaluate(gt, pred, OPTIONS).from_cache
    assert not (tmp_path / "cache").exists()


# Issue 26: numbers are never those of other bytes than the ones named.


def _same_size_versions(tmp_path: Path) -> tuple[Path, bytes, bytes]:
    """Two versions of a submission of the same length (the shorter padded with spaces)."""
    import json

    doc = json.loads(PRED.read_text())
    a = json.dumps(doc).encode()
    doc["tasks"]["open_vocabulary"] = doc["tasks"]["open_vocabulary"][::2]
    b = json.dumps(doc).encode()
    a, b = a.ljust(max(len(a), len(b))), b.ljust(max(len(a), len(b)))
    pred = tmp_path / "pred.json"
    pred.write_bytes(a)
    return pred, a, b


def _fresh(pred: Path) -> dict:
    return evaluate_run(load_samples(DEMO / "ground_truth.json", pred, "vocabulary",
                                     modalities=OPTIONS.modalities), 0.5).results


def test_a_same_size_rewrite_with_the_mtime_restored_is_seen(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    pred, a, b = _same_size_versions(tmp_path)
    gt = data.file_key(DEMO / "ground_truth.json")
    before = os.stat(pred)
    first = data.evaluate(gt, data.file_key(pred), OPTIONS)
    sha_a = data.digest(data.file_key(pred))
    with open(pred, "r+b") as handle:  # in place: same inode, same size
        handle.write(b)
    os.utime(pred, ns=(before.st_atime_ns, before.st_mtime_ns))
    while os.stat(pred).st_ctime_ns == before.st_ctime_ns:  # a coarse clock: step it
        os.utime(pred, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(pred)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    second = data.evaluate(gt, data.file_key(pred), OPTIONS)  # a new session: new keys
    assert data.digest(data.file_key(pred)) != sha_a
    assert first.results == _fresh_of(a, tmp_path)
    assert second.results == _fresh(pred) != first.results


def _fresh_of(content: bytes, tmp_path: Path) -> dict:
    other = tmp_path / "copy" / "pred.json"
    other.parent.mkdir(exist_ok=True)
    other.write_bytes(content)
    return _fresh(other)


def test_the_app_stores_the_numbers_of_the_bytes_it_hashed(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The submission is saved again right after the app read it: the entry stored is of the
    bytes evaluated, so the new version is never shown with the old version's numbers."""
    from ovearth_core import files

    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    pred, a, b = _same_size_versions(tmp_path)
    fresh_a, fresh_b = _fresh_of(a, tmp_path), _fresh_of(b, tmp_path)
    real = files.read_bounded
    fired = []

    def read_then_rewrite(path, *args, **kwargs):  # noqa: ANN001, ANN202
        out = real(path, *args, **kwargs)
        if Path(path) == pred and not fired:
            fired.append(path)
            pred.write_bytes(b)
        return out

    monkeypatch.setattr(files, "read_bounded", read_then_rewrite)
    gt = data.file_key(DEMO / "ground_truth.json")
    first = data.evaluate(gt, data.file_key(pred), OPTIONS)
    monkeypatch.setattr(files, "read_bounded", real)
    assert fired and first.results == fresh_a
    _restart()  # a new session on the file as it is now (version b)
    second = data.evaluate(gt, data.file_key(pred), OPTIONS)
    assert second.results == fresh_b


def test_a_shared_cache_folder_is_refused_and_said(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(folder))
    store, note = data.result_cache()
    assert store is None and "writable by group or others" in note and str(folder) in note
    gt, pred = data.file_key(DEMO / "ground_truth.json"), data.file_key(PRED)
    assert not data.evaluate(gt, pred, OPTIONS).from_cache
    assert list(folder.iterdir()) == []
