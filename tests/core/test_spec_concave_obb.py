"""The spec's rule on oriented boxes, kept by default; ``concave_obb`` goes beyond it (issue 46).

Spec, Oriented Bounding Boxes: "The polygon must be convex and have positive area.
Self-crossing vertex order is invalid." Issue 34 (item 4) took DOTA's concave labels as the
polygons DOTA_devkit scores; on review the spec's rule became the default again and the
devkit parity the option ``concave_obb`` (``--concave-obb``, the app's "Concave oriented
boxes", link ``concave``), reaching every command that evaluates, named in the output's
config. The evaluator's own command keeps exactly the spec's flags and its rule. Expected
IoUs: DOTA_devkit's polygon IoU written out (:func:`refs.devkit_poly_iou`) and the shoelace
by hand (the concave box inside the 60 x 60 square: area 1,200, IoU 1,200 / 3,600)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from concave_helpers import OV2_IOU, write_benchmark

from ovearth_core import pipeline
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options

ROOT = Path(__file__).resolve().parents[2]
REFUSED = "expected a convex polygon (the spec's rule"
OPTS = Options("vocabulary", "oriented_bbox", iou_threshold=0.3)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def _check_scores(result: dict) -> None:
    rows = {r["sample_id"]: r["oriented_bbox"] for r in result["per_sample"]}
    assert OV2_IOU == pytest.approx(1 / 3)
    assert rows["ov1"]["mean_matched_iou"] == pytest.approx(1.0)
    assert rows["ov2"]["mean_matched_iou"] == pytest.approx(OV2_IOU)
    assert result["config"]["concave_obb"] is True


def test_the_spec_rule_is_the_default_for_the_ground_truth(tmp_path: Path) -> None:
    gt, pred = write_benchmark(tmp_path)
    with pytest.raises(OVEarthInputError) as err:
        load_samples(gt, pred, "vocabulary", modalities="oriented_bbox")
    text = str(err.value)
    assert f"{gt}, field annotations[0].oriented_bbox[0]: {REFUSED}" in text
    # The concave box of the ground truth is not looked at for other modalities.
    load_samples(gt, pred, "vocabulary", modalities="bbox")


def test_the_spec_rule_is_the_default_for_a_prediction(tmp_path: Path) -> None:
    gt, pred = write_benchmark(tmp_path, gt_concave=False)
    with pytest.raises(OVEarthInputError) as err:
        load_samples(gt, pred, "vocabulary", modalities="oriented_bbox")
    text = str(err.value)
    assert (f"{pred}, query_id ov1, field tasks.open_vocabulary[0].oriented_bbox[0].polygon: "
            f"{REFUSED}") in text
    assert "query_id ov2, field tasks.open_vocabulary[1].oriented_bbox[0].polygon" in text
    assert "--concave-obb of the analysis, report, suite, leaderboard, audit and hosting" in text


def test_the_option_takes_them_and_scores_them_as_the_devkit(tmp_path: Path) -> None:
    gt, pred = write_benchmark(tmp_path)
    loaded = pipeline.load(gt, pred, Options("vocabulary", "oriented_bbox", iou_threshold=0.3,
                                             concave_obb=True))
    _check_scores(evaluate_samples(loaded.samples, 0.3))


def test_a_self_crossing_order_stays_refused_with_the_option(tmp_path: Path) -> None:
    gt, pred = write_benchmark(tmp_path, gt_concave=False)
    doc = json.loads(pred.read_text())
    doc["tasks"]["open_vocabulary"][0]["oriented_bbox"] = [[[0, 0], [60, 60], [60, 0], [0, 60]]]
    pred.write_text(json.dumps(doc))
    with pytest.raises(OVEarthInputError, match="not self-crossing"):
        load_samples(gt, pred, "vocabulary", modalities="oriented_bbox", concave_obb=True)


def test_the_option_is_in_the_cache_key_and_the_config_only_when_on(tmp_path: Path) -> None:
    a, b = Options("vocabulary", "oriented_bbox"), Options("vocabulary", "oriented_bbox",
                                                           concave_obb=True)
    assert pipeline.entry_key("0" * 64, "1" * 64, a) != pipeline.entry_key("0" * 64, "1" * 64, b)
    assert b.evaluator().concave_obb and b.loader().concave_obb
    gt, pred = write_benchmark(tmp_path / "convex", gt_concave=False)
    doc = json.loads(pred.read_text())
    for row in doc["tasks"]["open_vocabulary"]:
        row["oriented_bbox"] = []
    pred.write_text(json.dumps(doc))
    off = evaluate_samples(load_samples(gt, pred, "vocabulary", modalities="oriented_bbox"), 0.5)
    assert "concave_obb" not in off["config"]  # the spec's output, byte for byte


def test_the_evaluator_keeps_the_spec_rule(tmp_path: Path) -> None:
    """The evaluator's command has exactly the spec's flags (tests/core/test_cli.py), and its
    rule: no --concave-obb there, and its message names the commands that take it."""
    gt, pred = write_benchmark(tmp_path)
    out = tmp_path / "o.json"
    proc = _run("ovearth_core", "--gt", str(gt), "--predictions", str(pred), "--modalities",
                "oriented_bbox", "--output", str(out))
    assert proc.returncode == 2 and REFUSED in proc.stderr and not out.exists()
    assert "Traceback" not in proc.stderr
    assert _run("ovearth_core", "--gt", str(gt), "--predictions", str(pred), "--modalities",
                "oriented_bbox", "--concave-obb").returncode == 2  # argparse: no such flag


@pytest.mark.parametrize("module", ["ovearth_core.analysis", "ovearth_core.suite"])
def test_every_evaluating_command_takes_the_flag(tmp_path: Path, module: str) -> None:
    gt, pred = write_benchmark(tmp_path)
    suite = module.endswith("suite")
    out = ["--output-dir", str(tmp_path / "suite")] if suite else [
        "--output", str(tmp_path / "out.json")]
    task = ["--tasks", "vocabulary"] if suite else ["--task", "vocabulary"]
    base = [module, "--gt", str(gt), "--predictions", str(pred), "--modalities",
            "oriented_bbox", "--iou-threshold", "0.3", *out, *task]
    refused = _run(*base)
    assert refused.returncode == 2 and REFUSED in refused.stderr, refused.stderr
    taken = _run(*base, "--concave-obb")
    assert taken.returncode == 0, taken.stderr
    found = (tmp_path / "suite" / "vocabulary.json") if suite else tmp_path / "out.json"
    _check_scores(json.loads(found.read_text()))


def test_the_geojson_export_takes_the_flag(tmp_path: Path) -> None:
    gt, pred = write_benchmark(tmp_path)
    out = tmp_path / "boxes.geojson"
    base = ["ovearth_core.export", "geojson", "--gt", str(gt), "--predictions", str(pred),
            "--task", "vocabulary", "--boxes", "oriented_bbox", "--pixel", "--out", str(out)]
    refused = _run(*base)
    assert refused.returncode == 2 and REFUSED in refused.stderr and not out.exists()
    taken = _run(*base, "--concave-obb")
    assert taken.returncode == 0, taken.stderr
    assert len(json.loads(out.read_text())["features"]) == 4  # two GT boxes, two predictions


def test_the_report_says_when_the_option_is_on(tmp_path: Path) -> None:
    from ovearth_core.report.build import build_report_data

    gt, pred = write_benchmark(tmp_path)
    on = build_report_data(gt, [pred], Options("vocabulary", "oriented_bbox", iou_threshold=0.3,
                                               concave_obb=True), None, ["vocabulary"],
                           worst=0)
    assert on.options["concave_obb"] is True
    _check_scores(on.submissions[0].results["open_vocabulary"])
    with pytest.raises(OVEarthInputError, match="convex polygon"):
        build_report_data(gt, [pred], OPTS, None, ["vocabulary"], worst=0)
    html = tmp_path / "r.html"
    base = ["ovearth_core.report", "--gt", str(gt), "--predictions", str(pred), "--task",
            "vocabulary", "--modalities", "oriented_bbox", "--worst", "0", "--out", str(html)]
    refused = _run(*base)
    assert refused.returncode == 2 and REFUSED in refused.stderr and not html.exists()
    taken = _run(*base, "--concave-obb")
    assert taken.returncode == 0, taken.stderr
    assert "concave_obb" in html.read_text()


def test_the_leaderboard_command_takes_the_flag(tmp_path: Path) -> None:
    write_benchmark(tmp_path / "bench")
    base = ["ovearth_core.leaderboard", str(tmp_path / "bench"), "--task", "vocabulary",
            "--modalities", "oriented_bbox", "--iou-threshold", "0.3", "--no-cache",
            "--subsets", "5", "--no-ranks"]
    refused = _run(*base)
    assert refused.returncode == 2 and REFUSED in refused.stderr
    taken = _run(*base, "--concave-obb")
    assert taken.returncode == 0, taken.stderr
    assert "dart" in json.dumps(json.loads(taken.stdout)["open_vocabulary"])
