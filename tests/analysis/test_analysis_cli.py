"""Command lines of the analysis (issue 8): ``ovearth_core.analysis`` and ``.leaderboard``.

The analysis command takes the evaluator's options unchanged (spec "Command-Line
Interface") and adds a top-level ``analysis`` key; spec keys stay as they are.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_inprocess import run_module

from ovearth_core.analysis import analysis_report
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import TASK_KEYS

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "assets" / "demo"
GT = DEMO / "ground_truth.json"
BOXES = DEMO / "predictions" / "box_detector.json"


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m module *args`` in this process (tests/cli_inprocess.py)."""
    return run_module(module, *args, cwd=ROOT)


def _run_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m *args`` as a real process (the shipped entry point)."""
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_analysis_cli_adds_analysis_and_keeps_spec_output(tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    proc = _run("ovearth_core.analysis", "--gt", str(GT), "--predictions", str(BOXES),
                "--modalities", "bbox", "--score-threshold", "0.5", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    samples = load_samples(GT, BOXES, "vocabulary", score_threshold=0.5, modalities="bbox")
    plain = json.loads(json.dumps(evaluate_samples(samples)))
    assert result["summary"] == plain["summary"]
    # The sweep and AP see every box, not only those above the run's threshold.
    every_box = load_samples(GT, BOXES, "vocabulary", modalities="bbox")
    expected = json.loads(json.dumps(analysis_report(every_box)))
    assert result["analysis"]["average_precision"] == expected["average_precision"]
    n_boxes = sum(len(s.pred_boxes) for s in every_box if not s.negative and len(s.gt_boxes))
    assert result["analysis"]["average_precision"]["bbox"]["num_detections"] == n_boxes


def test_analysis_cli_warns_of_tied_scores(tmp_path: Path) -> None:
    # The demo's box detector writes two-decimal scores: many detections share one.
    out = tmp_path / "a.json"
    proc = _run("ovearth_core.analysis", "--gt", str(GT), "--predictions", str(BOXES),
                "--modalities", "bbox", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    ties = result["analysis"]["average_precision"]["bbox"]["score_ties"]
    scores = [s for r in json.loads(BOXES.read_text())["tasks"]["open_vocabulary"]
              for b in r.get("bbox") or [] if isinstance(b, dict) for s in [b["score"]]]
    assert ties["share_tied"] >= 0.1 and ties["num_tied"] <= len(scores)
    tie_warnings = [w for w in result["warnings"] if w["code"] == "score_ties"]
    assert tie_warnings == [w for w in result["analysis"]["warnings"]
                            if w["code"] == "score_ties"] and len(tie_warnings) == 1
    assert tie_warnings[0]["message"] in proc.stderr


def test_analysis_cli_bad_input_exits_2_without_output(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": {"open_vocabulary": [{"query_id": "nope"}]}}')
    out = tmp_path / "a.json"
    proc = _run_process("ovearth_core.analysis", "--gt", str(GT), "--predictions", str(bad),
                        "--modalities", "bbox", "--output", str(out))
    assert proc.returncode == 2
    assert "nope" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("task", ["vocabulary", "reasoning"])
def test_leaderboard_cli_ranks_every_persona(task: str) -> None:
    proc = _run("ovearth_core.leaderboard", str(DEMO), "--task", task, "--subsets", "50")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)[TASK_KEYS[task]]
    personas = sorted(p.stem for p in (DEMO / "predictions").glob("*.json"))
    assert sorted(report["models"]) == personas
    values = dict(zip(report["models"], report["metrics"]["seg_macro_miou"], strict=True))
    # A persona without masks (box_detector) is not submitted there: null, ranked last.
    assert values["box_detector"] is None
    assert report["not_submitted"]["seg_macro_miou"] == ["box_detector"]
    assert report["ranking"]["seg_macro_miou"] == sorted(
        values, key=lambda m: (values[m] is None, -(values[m] or 0.0)))


def test_leaderboard_cli_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    proc = _run("ovearth_core.leaderboard", str(tmp_path / "nowhere"))
    assert proc.returncode == 2
    assert "ground_truth.json" in proc.stderr and "Traceback" not in proc.stderr


def test_the_ranking_module_run_as_a_command_names_the_command() -> None:
    """The command imports the ranking, not the other way round (issue 47: no import circle);
    running the ranking module says which command to run, without a traceback."""
    proc = _run_process("ovearth_core.analysis.leaderboard", "--help")
    assert proc.returncode != 0
    assert "run python -m ovearth_core.leaderboard" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_bad_slice_attribute_is_named_with_the_choices() -> None:
    """argparse said "invalid slice_attribute value" (the function's name) before."""
    proc = _run("ovearth_core.analysis", "--gt", "g.json", "--predictions", "p.json",
                "--modalities", "bbox", "--slice-by", "nonsense")
    assert proc.returncode == 2
    assert "--slice-by: expected one of category, group" in proc.stderr
    assert "slice_attribute" not in proc.stderr and "Traceback" not in proc.stderr
