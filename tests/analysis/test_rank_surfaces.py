"""One rule, one wording, everywhere an interval or a test is shown (issue 46 §4, issue 48):
the leaderboard command's JSON, the report's HTML and Compare hold the core's thin-evidence
warning and minimum-count reason (:mod:`ovearth_core.analysis.evidence`) on a board of five
images, and ties for first count for two byte-identical leaders. The expected texts are
written here, not produced by the code under test."""

from __future__ import annotations

import html as htmllib
import json
from pathlib import Path

import pytest
from analysis_fixtures import thin_board
from cli_inprocess import run_module

REPO = Path(__file__).resolve().parents[2]
THIN = ("Thin evidence: the intervals and tests rest on 5 images (fewer than 30), so they "
        "are rough: intervals usually too narrow, p-values too small.")
BELOW = ("No test and no groups: 5 images (fewer than the minimum count, 10); a test over so "
         "few says nothing (a bootstrap's intervals are points and its p-value the smallest "
         "it can give, whatever the submissions).")


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return thin_board(tmp_path_factory.mktemp("thin"), 5)


def _leaderboard(board: Path, *flags: str) -> dict:
    done = run_module("ovearth_core.leaderboard", str(board), "--task", "vocabulary",
                      "--no-cache", "--subsets", "20", *flags, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["open_vocabulary"]["uncertainty"]


def test_the_command_json_flags_thin_evidence_and_counts_ties_for_first(board: Path) -> None:
    got = _leaderboard(board, "--min-count", "2")["seg_macro_miou"]
    assert got["num_units"] == 5 and got["warning"] == THIN
    assert got["friedman"]["warning"] == THIN
    assert got["models"][:2] == ["a_twin", "b_twin"]
    assert got["first_share"][:2] == [1.0, 1.0]  # tied first in every resample
    assert got["rank"][:2] == [1.5, 1.5] and got["rank_low"][0] == got["rank_low"][1]
    assert got["p"][1] == 1.0  # leader - twin is 0 in every resample


def test_the_command_json_below_the_minimum_count_has_no_test(board: Path) -> None:
    for metric, got in _leaderboard(board).items():
        assert got["skipped"] == BELOW, metric
        assert got["p"] == [None] * 4 and got["groups"] == [""] * 4
        assert got["friedman"]["skipped"] == BELOW.removesuffix(".")


def _report(board: Path, out: Path, *flags: str) -> str:
    done = run_module(
        "ovearth_core.report", "--gt", str(board / "ground_truth.json"),
        "--predictions", str(board / "predictions" / "a_twin.json"),
        "--compare", str(board / "predictions" / "d_weak.json"),
        "--rank", str(board / "predictions"), "--task", "vocabulary", "--out", str(out),
        "--no-cache", "--bootstrap-unit", "image", "--modalities",
        "segmentation,bbox,oriented_bbox", *flags, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return htmllib.unescape(out.read_text())


def test_the_report_shows_the_same_wording(board: Path, tmp_path: Path) -> None:
    page = _report(board, tmp_path / "thin.html", "--min-count", "2")
    ranks = page[page.index("Ranks with their uncertainty"):]
    assert THIN in ranks
    assert "ranks first (alone or tied) in 100 % of the resamples" in ranks
    assert THIN in page[:page.index("Ranks with their uncertainty")]  # Compare's intervals
    below = _report(board, tmp_path / "below.html")
    assert BELOW in below[below.index("Ranks with their uncertainty"):]


def test_compare_uses_the_same_wording(board: Path) -> None:
    from ovearth_core.analysis.compare import compare_results
    from ovearth_core.evaluate import evaluate_samples
    from ovearth_core.io import load_samples

    results = [evaluate_samples(load_samples(board / "ground_truth.json",
                                             board / "predictions" / f"{n}.json",
                                             "vocabulary", modalities="bbox"), 0.5)
               for n in ("a_twin", "b_twin")]
    cmp = compare_results(*results, n_resamples=200, unit="image")
    assert cmp.warning == THIN
    # equal submissions: B - A is 0 in every resample
    assert all(m.ci_low == m.ci_high == 0 for m in cmp.metrics if m.diff is not None)
