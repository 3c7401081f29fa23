"""The leaderboard command's ranks with their uncertainty (issue 37): on by default, the
flags reach the numbers (the Options fields of the same names), ``--no-ranks`` leaves them
out, and a setting out of range is a usage error naming the flag."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("board")
    shutil.copy(DEMO / "ground_truth.json", root / "ground_truth.json")
    shutil.copytree(DEMO / "predictions", root / "predictions")
    return root


def _run(folder: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ovearth_core.leaderboard", str(folder),
                           "--task", "vocabulary", "--no-cache", "--subsets", "20", *flags],
                          capture_output=True, text=True, cwd=REPO, timeout=600)


def test_the_flags_reach_the_numbers(folder: Path) -> None:
    done = _run(folder, "--rank-resamples", "200", "--alpha", "0.1", "--min-count", "6",
                "--friedman-blocks", "query", "--bootstrap-unit", "query", "--seed", "3")
    assert done.returncode == 0, done.stderr
    ranks = json.loads(done.stdout)["open_vocabulary"]["uncertainty"]["seg_macro_miou"]
    assert (ranks["n_resamples"], ranks["alpha"], ranks["seed"], ranks["unit"]) == (
        200, 0.1, 3, "query")
    assert ranks["num_units"] == 195  # the demo's open-vocabulary queries
    assert ranks["friedman"]["blocks"] == "query"
    assert ranks["categories"]["min_count"] == 6
    # the unit is the query here: the minimum count is of queries
    assert {r["category"] for r in ranks["categories"]["rows"] if r["p"] is not None} == {
        r["category"] for r in ranks["categories"]["rows"] if r["num_units"] >= 6} != set()
    assert all(r["num_units"] == r["num_queries"] for r in ranks["categories"]["rows"])


def test_no_ranks_leaves_them_out(folder: Path) -> None:
    done = _run(folder, "--no-ranks")
    assert done.returncode == 0, done.stderr
    assert "uncertainty" not in json.loads(done.stdout)["open_vocabulary"]


@pytest.mark.parametrize(("flags", "named"), [
    (("--alpha", "0.9"), "--alpha: expected a number at least 0.001 and at most 0.5"),
    (("--alpha", "nan"), "--alpha: expected a number"),
    (("--rank-resamples", "10"), "--rank-resamples: expected a whole number from 100 to 20,000"),
    (("--min-count", "0"), "--min-count: expected a whole number from 1 to 100,000")])
def test_a_setting_out_of_range_is_a_usage_error(folder: Path, flags: tuple[str, ...],
                                                 named: str) -> None:
    done = _run(folder, *flags)
    assert done.returncode == 2
    assert named in done.stderr
    assert "Traceback" not in done.stderr
