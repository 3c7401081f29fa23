"""Issue 39: every number equal before and after the one pipeline, on real-shaped data.

The reference is the spec's own path, which the redesign did not touch:
``evaluate_samples(load_samples(...))`` (what ``python -m ovearth_core`` prints). Each of
the places that now evaluate through :mod:`ovearth_core.pipeline` (the app's
``data.evaluate``, the report's ``build_report_data``, the leaderboard's ``evaluate_with``)
must give exactly that result, cold and from the cache, on:

- the bundled demo (every submission, every task, automatic modalities);
- a DOTA conversion (``from_dota`` of the devkit-style sample: dense oriented boxes);
- the full synthetic benchmark (``--scale full``: the paper's counts; ``slow``).

Also the CLI's JSON on the demo, since the assignment solver moved to scipy's public API.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ovearth_core.analysis.leaderboard import evaluate_with
from ovearth_core.cache import ResultCache
from ovearth_core.convert import from_dota
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import TASK_KEYS, Options
from ovearth_core.report.build import build_report_data
from pages.common import data

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"
DOTA = REPO / "tests" / "data" / "convert" / "dota"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _tasks(gt: Path) -> list[str]:
    doc = json.loads(gt.read_text())
    return [cli for cli, key in TASK_KEYS.items() if doc["tasks"].get(key)]


def _check_every_path(gt: Path, preds: list[Path], cache_dir: Path,
                      monkeypatch: pytest.MonkeyPatch, modalities: object = "auto") -> int:
    """Every pipeline user's result equals the spec path's, cold and warm; the number of
    (submission, task) pairs checked."""
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(cache_dir))
    checked = 0
    for task in _tasks(gt):
        options = Options(task, modalities)
        refs = [evaluate_samples(load_samples(gt, p, task, modalities=modalities), 0.5)
                for p in preds]
        for round_ in ("cold", "warm"):
            data.clear_caches()
            for pred, ref in zip(preds, refs, strict=True):
                app = data.evaluate(data.file_key(gt), data.file_key(pred), options)
                assert not app.problems, app.problems[:3]
                assert app.results == ref, (pred.name, task, round_, "app")
                assert app.from_cache is (round_ == "warm")
                built = build_report_data(gt, [pred], options, tasks=[task], worst=0,
                                          cache=ResultCache(cache_dir))
                assert built.submissions[0].results[TASK_KEYS[task]] == ref, (pred.name, task)
                assert built.num_cached == 1
                checked += 1
            outcomes = evaluate_with(gt, preds, options, cache=ResultCache(cache_dir),
                                     workers=1)
            assert [o.result for o in outcomes] == refs, (task, round_, "leaderboard")
            assert all(o.cached for o in outcomes)
    return checked


def test_the_demo_gives_the_spec_paths_numbers_everywhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    preds = sorted((DEMO / "predictions").glob("*.json"))
    assert _check_every_path(DEMO / "ground_truth.json", preds, tmp_path / "c",
                             monkeypatch) == 2 * 3 * len(preds)


def test_a_dota_conversion_gives_the_spec_paths_numbers_everywhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "bench"
    from_dota(DOTA / "labelTxt", DOTA / "images", out, [DOTA / "results" / "model_a"])
    preds = sorted((out / "predictions").glob("*.json"))
    assert preds
    assert _check_every_path(out / "ground_truth.json", preds, tmp_path / "c", monkeypatch,
                             modalities="bbox,oriented_bbox") >= 2


@pytest.mark.slow
def test_the_full_synthetic_benchmark_gives_the_spec_paths_numbers_everywhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "full"
    subprocess.run([sys.executable, "-m", "ovearth_core.synth", "--scale", "full", "--out",
                    str(out), "--no-images"], cwd=REPO, check=True, capture_output=True,
                   timeout=900)
    preds = sorted((out / "predictions").glob("*.json"))[:2]  # two personas: time
    assert _check_every_path(out / "ground_truth.json", preds, tmp_path / "c",
                             monkeypatch) == 2 * 3 * len(preds)


def test_the_cli_json_is_the_spec_paths_result(tmp_path: Path) -> None:
    """``python -m ovearth_core`` (no cache, public solver) prints what the spec path
    returns, on a submission whose box queries need the assignment solver."""
    pred = DEMO / "predictions" / "strong_localiser.json"
    gt = DEMO / "ground_truth.json"
    for task in ("vocabulary", "referring"):
        proc = subprocess.run([sys.executable, "-m", "ovearth_core", "--gt", str(gt),
                               "--predictions", str(pred), "--task", task, "--modalities",
                               "segmentation,bbox,oriented_bbox"], cwd=REPO,
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
        ref = evaluate_samples(load_samples(gt, pred, task,
                                            modalities="segmentation,bbox,oriented_bbox"))
        assert json.loads(proc.stdout) == json.loads(json.dumps(ref))
