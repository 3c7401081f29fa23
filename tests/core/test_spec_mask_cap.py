"""The spec's cap on a predicted mask, kept by default; ``large_masks`` goes beyond it.

Spec, Segmentation: "A single mask may contain at most 100,000,000 pixels." Issue 34
(item 6) raised the cap for iSAID-size scenes; on merging, the spec's rule stayed the
default (what we accept the reference toolkit accepts) and the larger cap became the option
``large_masks`` (``--large-masks``, the app's "Masks beyond the spec's cap", link
``bigmask``), reaching every command that evaluates masks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inprocess import run_module
from mask_cap_helpers import H, W, write_benchmark
from pycocotools import mask as cocomask

from ovearth_core import pipeline
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.masks import SPEC_MAX_PIXELS
from ovearth_core.options import Options

ROOT = Path(__file__).resolve().parents[2]
def _expected_iou(gt: Path, pred: Path) -> float:
    """pycocotools' own IoU of the two RLEs (no decode), the independent reference."""
    g = json.loads(gt.read_text())["annotations"][0]["segmentation"]
    p = json.loads(pred.read_text())["tasks"]["open_vocabulary"][0]["segmentation"]
    return float(cocomask.iou([p], [g], [0])[0, 0])


def test_the_spec_cap_is_the_default(tmp_path: Path) -> None:
    assert H * W > SPEC_MAX_PIXELS
    gt, pred = write_benchmark(tmp_path)
    with pytest.raises(OVEarthInputError) as err:
        load_samples(gt, pred, "vocabulary", modalities="segmentation")
    text = str(err.value)
    assert "pred.json" in text and "ov1" in text and "segmentation.size" in text
    assert "at most 100,000,000 pixels (the spec's cap on a predicted mask" in text
    assert "--large-masks" in text


def test_large_masks_takes_them_and_scores_them_exactly(tmp_path: Path) -> None:
    gt, pred = write_benchmark(tmp_path)
    loaded = pipeline.load(gt, pred, Options("vocabulary", "segmentation", large_masks=True))
    result = evaluate_samples(loaded.samples, 0.5)
    # I = 100 rows x 100 cols = 10,000; U = 20,000 + 20,000 - 10,000 = 30,000
    assert result["per_sample"][0]["seg"]["iou"] == pytest.approx(_expected_iou(gt, pred))
    assert result["per_sample"][0]["seg"]["iou"] == pytest.approx(1 / 3)


def test_the_option_is_in_the_cache_key() -> None:
    a, b = Options("vocabulary", "segmentation"), Options("vocabulary", "segmentation",
                                                          large_masks=True)
    assert pipeline.entry_key("0" * 64, "1" * 64, a) != pipeline.entry_key("0" * 64, "1" * 64, b)
    assert b.evaluator().large_masks  # not an AP option: it changes what is evaluated


def test_the_evaluator_keeps_the_spec_rule(tmp_path: Path) -> None:
    """The evaluator's command has exactly the spec's flags (tests/core/test_cli.py), and its
    rule: no --large-masks there."""
    gt, pred = write_benchmark(tmp_path)
    proc = run_module("ovearth_core", "--gt", str(gt), "--predictions", str(pred), "--task",
                      "vocabulary", "--modalities", "segmentation", "--output",
                      str(tmp_path / "o.json"), cwd=ROOT)
    assert proc.returncode == 2 and "the spec's cap on a predicted mask" in proc.stderr


@pytest.mark.parametrize("module", ["ovearth_core.analysis", "ovearth_core.suite"])
def test_every_evaluating_command_takes_the_flag(tmp_path: Path, module: str) -> None:
    gt, pred = write_benchmark(tmp_path)
    out = ["--output-dir", str(tmp_path / "suite")] if module.endswith("suite") else [
        "--output", str(tmp_path / "out.json")]
    task = ["--tasks", "vocabulary"] if module.endswith("suite") else ["--task", "vocabulary"]
    base = ["--gt", str(gt), "--predictions", str(pred), "--modalities", "segmentation", *out,
            *task]
    refused = run_module(module, *base, cwd=ROOT)
    assert refused.returncode == 2, refused.stderr
    assert "the spec's cap on a predicted mask" in refused.stderr
    taken = run_module(module, *base, "--large-masks", cwd=ROOT)
    assert taken.returncode == 0, taken.stderr
    found = (tmp_path / "suite" / "vocabulary.json") if module.endswith("suite") else (
        tmp_path / "out.json")
    iou = json.loads(found.read_text())["per_sample"][0]["seg"]["iou"]
    assert iou == pytest.approx(_expected_iou(gt, pred))


def test_the_report_says_when_the_option_is_on(tmp_path: Path) -> None:
    from ovearth_core.report.build import build_report_data

    gt, pred = write_benchmark(tmp_path)
    on = build_report_data(gt, [pred], Options("vocabulary", "segmentation", large_masks=True),
                           None, ["vocabulary"], worst=0)
    assert on.options["large_masks"] is True
    assert on.submissions[0].results["open_vocabulary"]["per_sample"][0]["seg"]["iou"] == \
        pytest.approx(_expected_iou(gt, pred))
    with pytest.raises(OVEarthInputError, match="the spec's cap"):
        build_report_data(gt, [pred], Options("vocabulary", "segmentation"), None,
                          ["vocabulary"], worst=0)


def test_the_leaderboard_command_takes_the_flag(tmp_path: Path) -> None:
    gt, pred = write_benchmark(tmp_path)
    folder = tmp_path / "bench"
    (folder / "predictions").mkdir(parents=True)
    gt.rename(folder / "ground_truth.json")
    pred.rename(folder / "predictions" / "huge.json")
    base = [str(folder), "--task", "vocabulary", "--modalities", "segmentation", "--no-cache",
            "--subsets", "5", "--no-ranks"]
    refused = run_module("ovearth_core.leaderboard", *base, cwd=ROOT)
    assert refused.returncode == 2 and "the spec's cap on a predicted mask" in refused.stderr
    taken = run_module("ovearth_core.leaderboard", *base, "--large-masks", cwd=ROOT)
    assert taken.returncode == 0, taken.stderr
    board = json.loads(taken.stdout)["open_vocabulary"]
    assert board["models"] == ["huge"] or "huge" in json.dumps(board)
