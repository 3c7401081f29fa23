"""Ranks that never contradict themselves (issue 46 §4, issue 48), on boards built of per-image
pieces: equal pieces give equal resampled values, the p-values' resolution allows Holm's
correction, ties for first count, thin evidence is flagged by one rule, and a board below the
minimum count has no test and no groups. References: exact sums (``math.fsum``, correctly
rounded whatever the order), scipy's ``rankdata``, statsmodels' ``multipletests``, and the
bound written out (``2 / (1 + n)`` times the number of tests)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from analysis_fixtures import make_ground_truth, make_predictions
from scipy.stats import rankdata
from statsmodels.stats.multitest import multipletests

from ovearth_core.analysis import additive, rank_stats
from ovearth_core.analysis.compare import resample_counts
from ovearth_core.analysis.standings import leaderboard_report
from ovearth_core.bounds import MAX_RESAMPLES
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options

MODS = "segmentation,bbox,oriented_bbox"

SPEC = additive.METRICS["seg_macro_miou"]  # pieces (IoU, 1): the mean IoU


def _board(n_models: int, n_images: int, twins: tuple[int, ...] = (), lead: float = 0.0,
           seed: int = 7) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Names, pieces ``(M, N, 2)`` (one query per image) and each query's image: IoUs drawn
    at random, the rows ``twins`` equal to the first of them, submission 0 ahead by ``lead``
    on every image."""
    rng = np.random.default_rng(seed)
    iou = rng.random((n_models, n_images)) * (1 - lead)
    iou[0] += lead
    if twins:
        iou[list(twins)] = iou[twins[0]]
    pieces = np.stack([iou, np.ones_like(iou)], axis=2)
    return [f"s{m:02d}" for m in range(n_models)], pieces, np.arange(n_images, dtype=np.intp)


def _draws(seed: int, n: int, n_units: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.vstack([resample_counts(rng, min(256, n - s), n_units) for s in range(0, n, 256)])


def _exact_values(pieces: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(R, M)``: each resample's mean IoU from correctly rounded sums (``math.fsum``)."""
    out = np.empty((counts.shape[0], pieces.shape[0]))
    for r, c in enumerate(counts):
        n = math.fsum(c)
        for m in range(pieces.shape[0]):
            out[r, m] = math.fsum(c * pieces[m, :, 0]) / n
    return out


# --- 1. equal pieces, equal resampled values ------------------------------------------------

def test_equal_pieces_give_equal_resampled_values_and_equal_rank_intervals() -> None:
    """49 submissions, four of them equal: OpenBLAS summed the last column (a remainder
    kernel) in another order than the others when a chunk had one row (1,025 resamples:
    four chunks of 256 and one), 1-2 ulp apart, and exact ties became ranks 4.0 and 4.5 in
    some resamples (on this machine's OpenBLAS 0.3.31, Haswell kernels; before the fix the
    twin in the last column differed in one resample)."""
    twins = (3, 4, 17, 48)
    names, pieces, groups = _board(49, 40, twins)
    units = rank_stats.unit_pieces(pieces, groups)
    sampled = rank_stats.resampled_values(units, SPEC, 1025, 0)
    for t in twins[1:]:
        assert np.array_equal(sampled[:, twins[0]], sampled[:, t])
    out = rank_stats.rank_uncertainty(names, pieces, SPEC, groups, n_resamples=1025)
    n = out["n_resamples"]
    exact = _exact_values(pieces, _draws(0, n, 40))
    order = [names.index(m) for m in out["models"]]
    ranks = np.vstack([rankdata(-row, method="average") for row in exact[:, order]])
    assert out["rank_low"] == np.quantile(ranks, 0.025, axis=0, method="lower").tolist()
    assert out["rank_high"] == np.quantile(ranks, 0.975, axis=0, method="higher").tolist()
    shown = [out["models"].index(names[t]) for t in twins]
    assert len({(out["rank_low"][i], out["rank_high"][i], out["first_share"][i],
                 out["rank"][i]) for i in shown}) == 1


# --- 2. a p-value's resolution allows its correction ----------------------------------------

def test_holm_can_pass_when_the_groups_call_the_leader_apart() -> None:
    """37 submissions, the leader far ahead on every one of 60 images: with 1,000 resamples
    the smallest p-value, 2 / 1,001, times Holm's 36 is 0.072, so no comparison could pass
    at 0.05 while the groups called the leader apart from all."""
    names, pieces, groups = _board(37, 60, lead=0.5)
    out = rank_stats.rank_uncertainty(names, pieces, SPEC, groups, n_resamples=1000)
    n, tests = out["n_resamples"], 36
    assert 2 / (1 + n) * tests <= 0.05 / 2  # the bound written out
    assert out["n_resamples_asked"] == 1000 and "Holm" in out["resolution_note"]
    reject = multipletests(out["p"][1:], alpha=0.05, method="holm")[0]
    assert reject.all()
    assert out["p_holm"][1:] == pytest.approx(
        multipletests(out["p"][1:], method="holm")[1].tolist())
    assert all(g and out["groups"][0][0] not in g for g in out["groups"][1:])
    assert out["disagreement"] == {"groups_only": [], "tests_only": [], "note": None}


def test_above_the_cap_the_resamples_stop_there_and_the_note_says_why() -> None:
    """Holm over 59 tests at α = 0.001 needs 236,000 resamples: the cap (100,000) is drawn,
    no comparison can pass (2 / 100,001 * 59 > 0.001), and the groups that call the leader
    apart carry the reason."""
    names, pieces, groups = _board(60, 30, lead=0.5)
    out = rank_stats.rank_uncertainty(names, pieces, SPEC, groups, n_resamples=1000,
                                      alpha=0.001)
    assert out["n_resamples"] == MAX_RESAMPLES
    assert 2 / (1 + MAX_RESAMPLES) * 59 > 0.001
    assert f"{MAX_RESAMPLES:,}" in out["resolution_note"]
    assert "no test can pass" in out["resolution_note"]
    assert not any(multipletests(out["p"][1:], alpha=0.001, method="holm")[0])
    apart = out["disagreement"]["groups_only"]
    assert apart and "uncorrected" in out["disagreement"]["note"]


def test_category_tests_draw_enough_for_benjamini_hochberg() -> None:
    """40 categories of 10 images, the two submissions equal but on one category, where the
    first is far ahead: with 1,000 resamples its p-value, 2 / 1,001, times
    Benjamini-Hochberg's 40 is 0.08, and no category could pass."""
    names, pieces, groups = _board(2, 400, twins=(0, 1))
    category = (np.arange(400) % 40).astype(np.intp)
    pieces[0, category == 0, 0] += 1.0
    rows = rank_stats.category_tests([f"c{i}" for i in range(40)], category, pieces, SPEC,
                                     groups, (0, 1), n_resamples=1000, min_count=10)
    p = [r["p"] for r in rows]
    assert all(x is not None for x in p)
    reject = multipletests(p, alpha=0.05, method="fdr_bh")[0]
    assert reject.tolist() == [True] + [False] * 39
    assert all(2 / (1 + r["n_resamples"]) * 40 <= 0.025 for r in rows)
    assert p[1:] == [1.0] * 39  # equal pieces: B - A is 0 in every resample


# --- 3. ties for first count ----------------------------------------------------------------

def test_three_equal_leaders_each_rank_first_in_every_resample() -> None:
    names, pieces, groups = _board(5, 40, twins=(0, 1, 2), lead=0.4)
    out = rank_stats.rank_uncertainty(names, pieces, SPEC, groups, n_resamples=500)
    exact = _exact_values(pieces, _draws(0, out["n_resamples"], 40))
    order = [names.index(m) for m in out["models"]]
    first = np.vstack([rankdata(-row, method="min") for row in exact[:, order]]) == 1
    assert out["first_share"] == first.mean(axis=0).tolist()
    assert out["first_share"][:3] == [1.0, 1.0, 1.0]


# --- 4 and 5. thin evidence, and below the minimum count (through the leaderboard) ---------

def _evaluated(tmp: Path, n_images: int, n_models: int = 4) -> tuple[list[str], list[dict]]:
    """Open-vocabulary results of ``n_models`` submissions of rising skill on 24
    annotations spread over ``n_images`` images."""
    gt = make_ground_truth(seed=3, n_annotations=24, n_categories=4)
    for i, ann in enumerate(gt["annotations"]):
        ann["image_path"] = f"images/{i % n_images}.png"
    gt_path = tmp / "ground_truth.json"
    gt_path.write_text(json.dumps(gt))
    names, results = [], []
    for m in range(n_models):
        path = tmp / f"model_{m}.json"
        path.write_text(json.dumps(make_predictions(gt, seed=40 + m, skill=0.3 + 0.2 * m)))
        names.append(f"model_{m}")
        results.append(evaluate_samples(load_samples(gt_path, path, "vocabulary",
                                                     modalities=MODS), 0.5))
    return names, results


def test_five_images_are_flagged_with_the_one_wording(tmp_path: Path) -> None:
    names, results = _evaluated(tmp_path, 5)
    report = leaderboard_report(names, results, n_subsets=20, ranks=Options(
        "vocabulary", MODS, rank_resamples=500, min_count=5))
    got = report["uncertainty"]["seg_macro_miou"]
    assert got["num_units"] == 5 and got["p"][1] is not None
    assert got["warning"].startswith("Thin evidence: the intervals and tests rest on 5 images")
    assert got["friedman"]["warning"] == got["warning"]


@pytest.mark.parametrize(("n_images", "min_count"), [(1, 10), (1, 1), (5, 10)])
def test_below_the_minimum_count_no_test_and_no_groups(tmp_path: Path, n_images: int,
                                                       min_count: int) -> None:
    """Issue 48: every query on one image gave p = 2 / 1,001 and separate groups (the
    per-category tests had the guard, the leader's tests did not)."""
    names, results = _evaluated(tmp_path, n_images)
    report = leaderboard_report(names, results, n_subsets=20, ranks=Options(
        "vocabulary", MODS, min_count=min_count))
    for metric, got in report["uncertainty"].items():
        assert got["num_units"] == n_images, metric
        assert got["p"] == [None] * 4 and got["p_holm"] == [None] * 4
        assert got["groups"] == [""] * 4 and got["rank_low"] == [None] * 4
        assert got["skipped"].startswith(f"No test and no groups: {n_images} image")
        assert "skipped" in got["friedman"]
