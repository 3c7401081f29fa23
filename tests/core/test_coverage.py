"""Coverage warnings (issue 13, defect 5): missing prediction rows, rows under unknown task
keys and modalities a submission does not contain are reported beside the numbers, by the
API (``coverage``, ``warnings``) and on the CLI's stderr, with the exit status unchanged.

Expected counts are derived here from the files the tests write, not from the evaluator.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ovearth_core import evaluate_files
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "assets" / "demo"
GT = DEMO / "ground_truth.json"


def _doc(name: str) -> dict:
    return json.loads((DEMO / "predictions" / f"{name}.json").read_text())


def _write(tmp_path: Path, doc: dict, name: str = "sub.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_only_some_rows_submitted(tmp_path: Path) -> None:
    doc = _doc("strong_localiser")
    rows = doc["tasks"]["open_vocabulary"][:10]
    doc["tasks"]["open_vocabulary"] = rows
    kept = {r["query_id"] for r in rows}
    all_ids = [q["query_id"] for q in json.loads(GT.read_text())["tasks"]["open_vocabulary"]]
    missing = [q for q in all_ids if q not in kept]
    result = evaluate_samples(load_samples(GT, _write(tmp_path, doc), "vocabulary",
                                           modalities="segmentation"))
    cov = result["coverage"]
    assert cov["num_queries"] == len(all_ids)
    assert cov["num_missing_prediction_rows"] == len(missing)
    assert cov["first_missing_query_ids"] == missing[:10]
    codes = [w["code"] for w in result["warnings"]]
    assert codes == ["missing_prediction_rows"]
    assert f"{len(missing)} of {len(all_ids)}" in result["warnings"][0]["message"]


def test_rows_under_a_misspelled_task_key(tmp_path: Path) -> None:
    doc = _doc("strong_localiser")
    doc["tasks"]["open_vocab"] = doc["tasks"].pop("open_vocabulary")
    path = _write(tmp_path, doc)
    proc = subprocess.run([sys.executable, "-m", "ovearth_core", "--gt", str(GT),
                           "--predictions", str(path), "--task", "vocabulary",
                           "--modalities", "segmentation"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0  # valid input: the exit status is the spec's
    out = json.loads(proc.stdout)
    assert out["coverage"]["unknown_task_keys"] == ["open_vocab"]
    assert out["coverage"]["num_with_prediction_row"] == 0
    assert "warning: the prediction file has rows under unknown task keys 'open_vocab'" \
        in proc.stderr
    assert "195 of 195 open_vocabulary queries have no prediction row" in proc.stderr
    assert {w["code"] for w in out["warnings"]} >= {"unknown_task_keys",
                                                    "missing_prediction_rows"}


def test_a_modality_the_submission_does_not_contain(tmp_path: Path) -> None:
    doc = _doc("box_detector")
    assert all(r.get("segmentation") in (None, {"size": [0, 0], "counts": []})
               or "segmentation" not in r for r in doc["tasks"]["open_vocabulary"])
    result = evaluate_samples(load_samples(GT, DEMO / "predictions" / "box_detector.json",
                                           "vocabulary",
                                           modalities="segmentation,bbox,oriented_bbox"))
    assert result["coverage"]["submitted_modalities"] == ["bbox", "oriented_bbox"]
    assert result["coverage"]["not_submitted_modalities"] == ["segmentation"]
    assert "modality_not_submitted" in [w["code"] for w in result["warnings"]]
    # The spec's numbers stay: an empty segmentation submission scores 0 on positives.
    assert result["summary"]["seg"]["positive_macro_miou"] == 0.0


def test_a_complete_submission_has_no_warning(tmp_path: Path) -> None:
    doc = _doc("strong_localiser")
    gt = json.loads(GT.read_text())
    for key, queries in gt["tasks"].items():
        have = {r["query_id"] for r in doc["tasks"].get(key, [])}
        doc["tasks"].setdefault(key, []).extend(
            {"query_id": q["query_id"]} for q in queries if q["query_id"] not in have)
    results = evaluate_files(GT, _write(tmp_path, doc), modalities="segmentation")
    for result in results.values():
        assert result["warnings"] == []
        assert result["coverage"]["num_missing_prediction_rows"] == 0


@pytest.mark.parametrize("module", ["ovearth_core", "ovearth_core.analysis"])
def test_commands_print_warnings_and_keep_exit_zero(tmp_path: Path, module: str) -> None:
    proc = subprocess.run([sys.executable, "-m", module, "--gt", str(GT), "--predictions",
                           str(DEMO / "predictions" / "box_detector.json"), "--task",
                           "vocabulary", "--modalities", "segmentation,bbox"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0
    assert "warning: the submission has no non-empty segmentation prediction" in proc.stderr
    assert json.loads(proc.stdout)["warnings"]
