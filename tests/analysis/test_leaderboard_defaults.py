"""Leaderboard defaults (issue 27 defect 4): the page ranks by a metric some submission has,
the command ranks oriented boxes by default, and a task without queries is skipped with a
note instead of being ranked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from app_fixtures import app_on, assert_ok, goto, write_dataset

ROOT = Path(__file__).resolve().parents[2]
LEADERBOARD = "pages/Leaderboard.py"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _box_only(root: Path, drop_task: str | None = None):
    """The tiny dataset with every mask removed from both submissions (a box-only
    benchmark, like a converted DOTA) and, optionally, a task without queries."""
    ds = write_dataset(root)
    for path in (ds.model_a, ds.model_b):
        doc = json.loads(path.read_text())
        for rows in doc["tasks"].values():
            for row in rows:
                row.pop("segmentation", None)
        if drop_task:
            doc["tasks"][drop_task] = []
        path.write_text(json.dumps(doc))
    if drop_task:
        gt = json.loads(ds.gt.read_text())
        gt["tasks"][drop_task] = []
        ds.gt.write_text(json.dumps(gt))
    return ds


def test_the_page_ranks_by_a_metric_some_submission_has(tmp_path: Path) -> None:
    ds = _box_only(tmp_path / "bench")
    at = app_on(ds, task="vocabulary")
    goto(at, LEADERBOARD)
    at.run()
    assert_ok(at)
    by = at.selectbox(key="lb_rank_by").value
    assert not by.startswith("seg_") and "mask" not in by, by


def test_the_page_does_not_rank_a_task_without_queries(tmp_path: Path) -> None:
    ds = _box_only(tmp_path / "bench", drop_task="reasoning")
    # Declared modalities: "auto" has nothing to infer them from and says so in the sidebar.
    at = app_on(ds, task="reasoning", auto_modalities=False,
                modalities=["bbox", "oriented_bbox"])
    goto(at, LEADERBOARD)
    at.run()
    assert not at.exception
    assert any("no queries" in i.value for i in at.info), [i.value for i in at.info]
    assert not at.get("arrow_data_frame")


def _command(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ovearth_core.leaderboard", str(folder),
                           "--subsets", "200", "--workers", "1", "--no-cache", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_the_command_ranks_oriented_boxes_and_skips_empty_tasks(tmp_path: Path) -> None:
    ds = _box_only(tmp_path / "bench", drop_task="reasoning")
    proc = _command(ds.root)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert "oriented_bbox_micro_f1" in out["open_vocabulary"]["metrics"]
    assert out["reasoning"]["models"] == []
    assert "reasoning" in proc.stderr and "no queries" in proc.stderr
