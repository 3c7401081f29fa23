"""``--nms-ap`` and ``--aitod`` reach every command that computes average precision
(analysis, report, leaderboard), are refused where they cannot apply, and are named in
what each writes. The numbers themselves are checked against references in
test_nms_ap.py and test_aitod.py; here, that each command's output holds the same numbers
as the library call for the same options (and differs from a run without the option)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_inprocess import run_module

from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.io import load_samples

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "assets" / "demo"
GT = DEMO / "ground_truth.json"
STRONG = DEMO / "predictions" / "strong_localiser.json"


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m module *args`` in this process (tests/cli_inprocess.py)."""
    return run_module(module, *args, cwd=ROOT)


@pytest.mark.parametrize("command", [
    ("ovearth_core.analysis", "--gt", str(GT), "--predictions", str(STRONG), "--modalities",
     "bbox"),
    ("ovearth_core.report", "--gt", str(GT), "--predictions", str(STRONG), "--modalities",
     "bbox"),
    ("ovearth_core.leaderboard", str(DEMO), "--average-precision"),
])
def test_nms_ap_without_hard_negatives_exits_2_and_writes_nothing(
        command: tuple[str, ...], tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    flag = "--out" if command[0] == "ovearth_core.report" else "--output"
    proc = _run(*command, "--nms-ap", flag, str(out))
    assert proc.returncode == 2, proc.stderr
    assert "--nms-ap needs --hard-negatives" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_leaderboard_protocols_need_average_precision(tmp_path: Path) -> None:
    proc = _run("ovearth_core.leaderboard", str(DEMO), "--aitod", "--output",
                str(tmp_path / "lb.json"))
    assert proc.returncode == 2
    assert "--average-precision" in proc.stderr and "Traceback" not in proc.stderr


def test_analysis_command_adds_both_protocols(tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    proc = _run("ovearth_core.analysis", "--gt", str(GT), "--predictions", str(STRONG),
                "--modalities", "bbox,oriented_bbox", "--hard-negatives", "--nms-ap",
                "--aitod", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    ap = json.loads(out.read_text())["analysis"]["average_precision"]
    assert ap["nms_ap"] is True and ap["aitod"] is True
    samples = load_samples(GT, STRONG, "vocabulary", modalities="bbox,oriented_bbox")
    want = json.loads(json.dumps(average_precision_report(
        samples, 0.5, ("bbox", "oriented_bbox"), True, nms_ap=True, aitod=True)))
    plain = json.loads(json.dumps(average_precision_report(
        samples, 0.5, ("bbox", "oriented_bbox"), True)))
    for m in ("bbox", "oriented_bbox"):
        coco = ap[m]["coco"]
        assert coco["nms_removed"] > 0  # the demo's negatives answer with the tanks' boxes
        for key in ("nms_map@[0.5:0.95]", "nms_map@0.5", "nms_map@0.75", "nms_removed"):
            assert coco[key] == want[m]["coco"][key], (m, key)
        # The suppression changes the number (up: copies on negatives go; down: a negative's
        # better-scored copy removes the positive's own box).
        assert coco["nms_map@[0.5:0.95]"] != plain[m]["coco"]["map@[0.5:0.95]"]
        assert ap[m]["aitod"] == want[m]["aitod"]
        assert "aitod" not in plain[m] and "nms_map@0.5" not in plain[m]["coco"]


def test_report_names_the_protocols_and_shows_their_columns(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = _run("ovearth_core.report", "--gt", str(GT), "--predictions", str(STRONG),
                "--modalities", "bbox", "--hard-negatives", "--nms-ap", "--aitod", "--out",
                str(out))
    assert proc.returncode == 0, proc.stderr
    html = out.read_text(encoding="utf-8")
    for label in ("NMS-mAP@[.5:.95]", "AI-TOD mAP", "AI-TOD AP_vt", "oLRP"):
        assert label in html, label
    assert "ap_nms_ap" in html and "ap_aitod" in html
    plain = tmp_path / "plain.html"
    assert _run("ovearth_core.report", "--gt", str(GT), "--predictions", str(STRONG),
                "--modalities", "bbox", "--out", str(plain)).returncode == 0
    assert "NMS-mAP" not in plain.read_text(encoding="utf-8")


def test_leaderboard_ranks_by_nms_map_and_aitod_map(tmp_path: Path) -> None:
    folder = tmp_path / "board"
    folder.mkdir()
    shutil.copy(GT, folder / "ground_truth.json")
    (folder / "predictions").mkdir()
    for name in ("strong_localiser", "box_detector", "weak_baseline"):
        shutil.copy(DEMO / "predictions" / f"{name}.json", folder / "predictions")
    out = tmp_path / "lb.json"
    proc = _run("ovearth_core.leaderboard", str(folder), "--average-precision",
                "--hard-negatives", "--nms-ap", "--aitod", "--no-ranks", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    board = json.loads(out.read_text())
    table = next(iter(board.values()))
    metrics = table["metrics"]
    assert "bbox_nms_map" in metrics and "bbox_aitod_map" in metrics
    order = table["ranking"]["bbox_nms_map"]
    values = dict(zip(table["models"], metrics["bbox_nms_map"], strict=True))
    ranked = [v for v in (values[n] for n in order) if v is not None]
    assert ranked == sorted(ranked, reverse=True)
