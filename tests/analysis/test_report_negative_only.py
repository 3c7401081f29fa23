"""``report --compare`` where one task has only negative queries (issue 35 item 7).

The issue saw an IndexError and no report for any task; not reproduced on this main with
the demo or the tiny synthetic benchmark (every modality, both bootstrap units, hard
negatives, one or two queries): this keeps it so, and checks what such a task shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).parents[2] / "assets" / "demo"


def _negative_only(tmp_path: Path, keep: int | None) -> tuple[Path, list[Path]]:
    gt = json.loads((DEMO / "ground_truth.json").read_text())
    negatives = [q for q in gt["tasks"]["open_vocabulary"] if q["type"] == "negative"]
    gt["tasks"]["open_vocabulary"] = negatives[:keep]
    ids = {q["query_id"] for q in gt["tasks"]["open_vocabulary"]}
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    preds = []
    for name in ("box_detector", "cautious_segmenter"):
        sub = json.loads((DEMO / "predictions" / f"{name}.json").read_text())
        sub["tasks"]["open_vocabulary"] = [p for p in sub["tasks"]["open_vocabulary"]
                                           if p["query_id"] in ids]
        (tmp_path / f"{name}.json").write_text(json.dumps(sub))
        preds.append(tmp_path / f"{name}.json")
    return tmp_path / "gt.json", preds


@pytest.mark.parametrize(("keep", "extra"), [
    (None, ["--modalities", "segmentation,bbox,oriented_bbox", "--hard-negatives"]),
    (None, ["--modalities", "auto", "--bootstrap-unit", "image"]),
    (1, ["--modalities", "bbox"]),
])
def test_compare_with_a_negative_only_task_reports_every_task(tmp_path: Path, keep: int | None,
                                                              extra: list[str]) -> None:
    gt, (a, b) = _negative_only(tmp_path, keep)
    out = tmp_path / "r.html"
    proc = subprocess.run(
        [sys.executable, "-m", "ovearth_core.report", "--gt", str(gt), "--images", str(DEMO),
         "--predictions", str(a), "--compare", str(b), "--out", str(out), "--no-cache",
         "--resamples", "1000", "--worst", "2", *extra],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    html = out.read_text()
    # Every task of the ground truth has its section, the negative-only one included.
    for task in ("open_vocabulary", "referring", "reasoning"):
        assert f'id="task-{task}"' in html or f'data-task="{task}"' in html, task
