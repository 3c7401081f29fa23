"""Ranks with their uncertainty (issue 37): every number against an independent reference on
the same inputs -- statsmodels' ``multipletests`` (Holm, Benjamini-Hochberg), scipy's
``friedmanchisquare`` and ``rankdata``, scikit-posthocs' ``posthoc_nemenyi_friedman``,
Demsar's table of critical differences, and a brute-force bootstrap that duplicates every
query row of a drawn image and re-sums the evaluator's rows (no per-unit pieces)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scikit_posthocs as sp
from analysis_fixtures import make_ground_truth, make_predictions
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy.stats import friedmanchisquare, rankdata
from statsmodels.stats.multitest import multipletests

from ovearth_core.analysis import additive, multiple, rank_stats
from ovearth_core.analysis.compare import resample_counts
from ovearth_core.analysis.leaderboard import board_entry, pack_board, unpack_board
from ovearth_core.analysis.standings import leaderboard_report, query_pieces
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options

MODS = "segmentation,bbox,oriented_bbox"
METRIC = "seg_macro_miou"


def _results(tmp: Path, n_models: int = 4) -> tuple[list[str], list[dict[str, Any]]]:
    """Open-vocabulary results of ``n_models`` submissions of rising skill on 48 annotations,
    two annotations per image (so an image is not a query, nor an annotation)."""
    import json

    gt = make_ground_truth(seed=3, n_annotations=48, n_categories=5)
    for i, ann in enumerate(gt["annotations"]):
        ann["image_path"] = f"images/{i // 2}.png"
    gt_path = tmp / "ground_truth.json"
    gt_path.write_text(json.dumps(gt))
    names, results = [], []
    for m in range(n_models):
        path = tmp / f"model_{m}.json"
        path.write_text(json.dumps(make_predictions(gt, seed=40 + m, skill=0.45 + 0.1 * m)))
        samples = load_samples(gt_path, path, "vocabulary", modalities=MODS)
        names.append(f"model_{m}")
        results.append(evaluate_samples(samples, 0.5))
    return names, results


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[dict[str, Any]]]:
    return _results(tmp_path_factory.mktemp("ranks"))


def _brute_values(results: list[dict[str, Any]], name: str, counts: np.ndarray,
                  unit_of: list[int]) -> np.ndarray:
    """``(R, M)``: each resample's metric from the evaluator's rows, every row repeated as
    often as its image was drawn, summed again (``spec.value`` of the summed pieces)."""
    spec = additive.METRICS[name]
    out = np.empty((counts.shape[0], len(results)))
    for m, res in enumerate(results):
        rows = res["per_sample"]
        for r, c in enumerate(counts):
            expanded = [row for row, u in zip(rows, unit_of, strict=True)
                        for _ in range(int(c[u]))]
            out[r, m] = spec.value(spec.matrix(expanded).sum(axis=0)) if expanded else np.nan
    return out


def _units(results: list[dict[str, Any]]) -> list[int]:
    index: dict[str, int] = {}
    return [index.setdefault(r["image_path"], len(index)) for r in results[0]["per_sample"]]


def _draws(seed: int, n: int, n_units: int) -> np.ndarray:
    """The resamples' image multiplicities, drawn as the module draws them (chunks of 256
    from one generator)."""
    rng = np.random.default_rng(seed)
    return np.vstack([resample_counts(rng, min(256, n - s), n_units) for s in range(0, n, 256)])


# --- the corrections ------------------------------------------------------------------------

def test_holm_and_bh_hand_worked() -> None:
    # Holm: sorted 0.01, 0.03, 0.04 -> 3 * 0.01, 2 * 0.03, max(0.06, 1 * 0.04)
    assert multiple.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    # BH: 0.01 * 3 / 1, 0.03 * 3 / 2 = 0.045, 0.04 * 3 / 3, then the running minimum from the top
    assert multiple.benjamini_hochberg([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.04, 0.04])
    assert multiple.holm([None, 0.2, None]) == [None, 0.2, None]
    assert multiple.holm([]) == []


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.none() | hst.floats(0.0, 1.0), max_size=40))
def test_corrections_equal_multipletests(p: list[float | None]) -> None:
    tested = np.array([x for x in p if x is not None], dtype=float)
    for method, ours in (("holm", multiple.holm(p)),
                         ("fdr_bh", multiple.benjamini_hochberg(p))):
        assert [x is None for x in ours] == [x is None for x in p]
        if tested.size:
            expected = multipletests(tested, alpha=0.05, method=method)[1]
            assert [x for x in ours if x is not None] == pytest.approx(expected.tolist())


@pytest.mark.parametrize(("dist", "expected"), [
    ([0.1, 0.2, 0.3, -0.1], 0.8),  # k = 1 (one value <= 0), n = 4: 2 * 2 / 5
    ([0.1, 0.2, 0.3], 0.5),  # k = 0: 2 / 4
    ([0.0, 0.0], 1.0),  # all on both sides
    ([np.nan, 0.5, np.nan], 1.0),  # n = 1: 2 / 2
    ([np.nan], None),
])
def test_bootstrap_p_hand_worked(dist: list[float], expected: float | None) -> None:
    assert multiple.bootstrap_p(np.array(dist)) == expected


# --- groups that cannot be told apart -------------------------------------------------------

def _brute_runs(low: list[int], high: list[int]) -> list[tuple[int, int]]:
    n = len(low)
    ok = [(i, j) for i in range(n) for j in range(i, n)
          if max(low[i:j + 1]) <= min(high[i:j + 1])]
    return sorted((i, j) for i, j in ok
                  if not any((a, b) != (i, j) and a <= i and j <= b for a, b in ok))


@settings(max_examples=200, deadline=None)
@given(hst.lists(hst.tuples(hst.integers(1, 8), hst.integers(0, 4)), min_size=1, max_size=9))
def test_overlap_runs_are_the_maximal_overlapping_runs(spans: list[tuple[int, int]]) -> None:
    low = [a for a, _ in spans]
    high = [a + w for a, w in spans]
    assert rank_stats.overlap_runs(low, high) == _brute_runs(low, high)


def test_group_letters() -> None:
    assert rank_stats.group_letters([(0, 1), (1, 2), (3, 3)], 4) == ["a", "ab", "b", "c"]
    assert rank_stats._letter(26) == "aa"


# --- ranks, intervals and the leader's tests against a brute-force bootstrap ----------------

def test_rank_interval_takes_ranks_some_resample_gave() -> None:
    # quantile 0.25 of 1 1 2 3 at position 0.75: outward 1; 0.75 at 2.25: outward 3
    low, high = rank_stats.rank_interval(np.array([[1.0], [1.0], [2.0], [3.0]]), 0.5)
    assert (low.tolist(), high.tolist()) == ([1.0], [3.0])


@pytest.mark.parametrize(("metric", "path"), [
    (METRIC, ("seg", "positive_macro_miou")), ("presence_mcc", ("presence", "mcc")),
    ("bbox_mean_micro_f1", ("bbox", "positive_mean_micro_f1@[0.5:0.95]"))])
def test_rank_uncertainty_equals_a_brute_force_bootstrap(board: Any, metric: str,
                                                         path: tuple[str, str]) -> None:
    names, results = board
    n, seed, alpha = 120, 5, 0.1
    unit_of = _units(results)
    counts = _draws(seed, n, max(unit_of) + 1)
    brute = _brute_values(results, metric, counts, unit_of)
    observed = np.array([r["summary"][path[0]][path[1]] for r in results])

    report = leaderboard_report(names, results, n_subsets=20, seed=seed,
                                ranks=Options("vocabulary", MODS, rank_resamples=n,
                                              alpha=alpha))
    got = report["uncertainty"][metric]
    order = [names.index(m) for m in got["models"]]
    assert got["value"] == pytest.approx(observed[order].tolist(), abs=1e-12)
    assert got["num_units"] == max(unit_of) + 1 == 24
    # ranks: scipy's average ranks of the negated values, per resample
    ranks = np.vstack([rankdata(-row, method="average") for row in brute[:, order]])
    assert got["rank"] == rankdata(-observed[order]).tolist()
    assert got["rank_low"] == np.quantile(ranks, alpha / 2, axis=0, method="lower").tolist()
    assert got["rank_high"] == np.quantile(ranks, 1 - alpha / 2, axis=0,
                                           method="higher").tolist()
    assert got["first_share"] == pytest.approx((ranks == 1).mean(axis=0).tolist())
    # the leader against each: leader - model, p by the formula, Holm by statsmodels
    diffs = brute[:, [order[0]]] - brute[:, order]
    p = []
    for i in range(1, len(order)):
        d = diffs[:, i]
        k = min((d <= 0).sum(), (d >= 0).sum())
        p.append(min(1.0, 2 * (1 + k) / (1 + n)))
    assert got["p"][0] is None and got["p"][1:] == pytest.approx(p)
    assert got["p_holm"][1:] == pytest.approx(multipletests(p, method="holm")[1].tolist())
    lo, hi = np.percentile(diffs[:, 1:], [5, 95], axis=0)
    assert got["diff_low"][1:] == pytest.approx(lo.tolist())
    assert got["diff_high"][1:] == pytest.approx(hi.tolist())
    # best of N: the resamples' mean best score over the observed best
    assert got["best_of_n"]["optimism"] == pytest.approx(
        float(np.nanmax(brute, axis=1).mean() - observed.max()))
    assert got["best_of_n"]["num_models"] == len(names)


def test_query_unit_resamples_queries(board: Any) -> None:
    names, results = board
    # 300 resamples: Holm over 3 comparisons at 0.05 needs 2 / 301 * 3 <= 0.025
    report = leaderboard_report(names, results, n_subsets=20, unit="query",
                                ranks=Options("vocabulary", MODS, rank_resamples=300))
    got = report["uncertainty"]["bbox_micro_f1"]
    assert got["unit"] == "query" and got["num_units"] == len(results[0]["per_sample"])
    assert got["n_resamples"] == 300 and got["resolution_note"] is None
    n = len(results[0]["per_sample"])
    counts = _draws(0, 300, n)
    brute = _brute_values(results, "bbox_micro_f1", counts, list(range(n)))
    order = [names.index(m) for m in got["models"]]
    ranks = np.vstack([rankdata(-row) for row in brute[:, order]])
    assert got["rank_low"] == np.quantile(ranks, 0.025, axis=0, method="lower").tolist()


# --- Friedman and Nemenyi -------------------------------------------------------------------

def _image_scores(results: list[dict[str, Any]], name: str) -> np.ndarray:
    """(blocks, models): the metric on each image's rows alone, images where all are defined."""
    spec = additive.METRICS[name]
    unit_of = _units(results)
    cols = []
    for res in results:
        rows = res["per_sample"]
        cols.append([spec.value(spec.matrix([r for r, u in zip(rows, unit_of, strict=True)
                                             if u == img]).sum(axis=0))
                     for img in range(max(unit_of) + 1)])
    scores = np.array(cols, dtype=float).T
    return scores[np.isfinite(scores).all(axis=1)]


@pytest.mark.parametrize("metric", ["seg_macro_miou", "bbox_micro_f1"])
def test_friedman_and_nemenyi_equal_scipy_and_scikit_posthocs(board: Any, metric: str) -> None:
    names, results = board
    report = leaderboard_report(names, results, n_subsets=20,
                                ranks=Options("vocabulary", MODS, rank_resamples=100))
    got = report["uncertainty"][metric]["friedman"]
    scores = _image_scores(results, metric)
    assert got["num_blocks"] == scores.shape[0] > 2
    stat, p = friedmanchisquare(*scores.T)
    assert got["statistic"] == pytest.approx(stat) and got["p"] == pytest.approx(p)
    mean_rank = np.vstack([rankdata(-row) for row in scores]).mean(axis=0)
    order = [names.index(m) for m in got["models"]]
    assert got["mean_rank"] == pytest.approx(mean_rank[order].tolist())
    assert got["mean_rank"] == sorted(got["mean_rank"])
    nemenyi = sp.posthoc_nemenyi_friedman(scores).to_numpy()
    assert np.allclose(got["nemenyi_p"], nemenyi[np.ix_(order, order)])
    # Demsar (2006), Table 5: q_0.05 = 2.569 for k = 4 classifiers
    k, n = len(names), scores.shape[0]
    assert got["cd"] == pytest.approx(2.569 * np.sqrt(k * (k + 1) / (6 * n)), rel=1e-3)
    # a clique: a maximal run whose mean ranks differ by less than the CD
    for i, j in got["cliques"]:
        assert got["mean_rank"][j] - got["mean_rank"][i] < got["cd"]
        assert j + 1 == k or got["mean_rank"][j + 1] - got["mean_rank"][i] >= got["cd"]


def test_friedman_critical_difference_hand_worked() -> None:
    # Demsar (2006), Table 5: q_0.05 = 2.343 for k = 3, q_0.10 = 2.052
    scores = np.array([[3.0, 2.0, 1.0], [3.0, 1.0, 2.0], [2.0, 3.0, 1.0], [3.0, 2.0, 1.0]])
    got = rank_stats.friedman_nemenyi(["a", "b", "c"], scores)
    assert got["cd"] == pytest.approx(2.343 * np.sqrt(3 * 4 / (6 * 4)), rel=1e-3)
    assert got["models"] == ["a", "b", "c"]
    assert got["mean_rank"] == pytest.approx([1.25, 2.0, 2.75])  # (1+1+2+1)/4 ...
    stat, p = friedmanchisquare(*scores.T)
    assert (got["statistic"], got["p"]) == pytest.approx((stat, p))
    loose = rank_stats.friedman_nemenyi(["a", "b", "c"], scores, alpha=0.1)
    assert loose["cd"] == pytest.approx(2.052 * np.sqrt(3 * 4 / (6 * 4)), rel=1e-3)


def test_friedman_needs_three_models_and_two_blocks() -> None:
    assert "skipped" in rank_stats.friedman_nemenyi(["a", "b"], np.ones((5, 2)))
    assert "skipped" in rank_stats.friedman_nemenyi(["a", "b", "c"], np.ones((1, 3)))
    # every block a tie: scipy divides by zero; the test is skipped, saying why
    assert "ties" in rank_stats.friedman_nemenyi(["a", "b", "c"], np.ones((5, 3)))["skipped"]


# --- categories -----------------------------------------------------------------------------

def test_category_tests_equal_a_brute_force_and_bh(board: Any) -> None:
    names, results = board
    n, seed = 400, 2  # enough for BH over up to 5 categories at 0.05 (2 / 401 * 5 <= 0.025)
    report = leaderboard_report(names, results, n_subsets=20, seed=seed,
                                ranks=Options("vocabulary", MODS, rank_resamples=n,
                                              min_count=10))
    got = report["uncertainty"][METRIC]["categories"]
    a, b = names.index(got["a"]), names.index(got["b"])
    assert [got["a"], got["b"]] == report["uncertainty"][METRIC]["models"][:2]
    rows = results[0]["per_sample"]
    cats = sorted({r["category"] for r in rows})
    assert [r["category"] for r in got["rows"]] == cats
    unit_of = _units(results)
    rng = np.random.default_rng(seed)
    spec = additive.METRICS[METRIC]
    p = []
    for row, cat in zip(got["rows"], cats, strict=True):
        idx = [i for i, r in enumerate(rows) if r["category"] == cat]
        assert row["num_queries"] == len(idx)
        images = sorted({unit_of[i] for i in idx})
        assert row["num_units"] == len(images)
        va = spec.value(spec.matrix([results[a]["per_sample"][i] for i in idx]).sum(axis=0))
        vb = spec.value(spec.matrix([results[b]["per_sample"][i] for i in idx]).sum(axis=0))
        assert row["diff"] == pytest.approx(va - vb)
        if len(images) < 10:  # the minimum count is of images (the resampled units)
            assert row["p"] is None and row["q"] is None
            continue
        local = [images.index(unit_of[i]) for i in idx]
        counts = resample_counts(rng, n, len(images))
        sub = [{**results[0], "per_sample": [results[k]["per_sample"][i] for i in idx]}
               for k in (a, b)]
        brute = _brute_values(sub, METRIC, counts, local)
        d = brute[:, 0] - brute[:, 1]
        k = min((d <= 0).sum(), (d >= 0).sum())
        assert row["p"] == pytest.approx(min(1.0, 2 * (1 + k) / (1 + n)))
        assert row["n_resamples"] == n
        p.append(row["p"])
    assert p, "no category reached the minimum count"
    q = [r["q"] for r in got["rows"] if r["q"] is not None]
    assert q == pytest.approx(multipletests(p, method="fdr_bh")[1].tolist())


# --- the board entry carries the pieces -----------------------------------------------------

def test_a_cached_board_entry_gives_the_same_uncertainty(board: Any) -> None:
    names, results = board
    entries = [unpack_board(*pack_board(board_entry(r))) for r in results]
    opts = Options("vocabulary", MODS, rank_resamples=100)
    full = leaderboard_report(names, results, n_subsets=20, ranks=opts)
    cached = leaderboard_report(names, entries, n_subsets=20, ranks=opts)
    assert cached == full


def test_submissions_on_other_queries_are_refused(board: Any) -> None:
    names, results = board
    first = query_pieces(results[0])
    other = query_pieces({**results[1], "per_sample": results[1]["per_sample"][:-1]})
    with pytest.raises(OVEarthInputError, match="the same"):
        rank_stats.aligned_pieces([first, other], METRIC)


@pytest.mark.parametrize(("changes", "named"), [
    ({"n_resamples": 5}, "rank resamples"), ({"alpha": 0.9}, "alpha"),
    ({"min_count": 0}, "minimum count"), ({"blocks": "pixel"}, "Friedman blocks")])
def test_settings_out_of_range_are_named(changes: dict[str, Any], named: str) -> None:
    settings_ = {"n_resamples": 1000, "alpha": 0.05, "min_count": 10, "blocks": "image",
                 **changes}
    with pytest.raises(OVEarthInputError, match=named):
        rank_stats.check_settings(**settings_)


def test_the_statistics_libraries_load_on_first_use_only() -> None:
    """statsmodels and scikit-posthocs take about a second each to import: loading the
    modules that use them (and the pages' data layer of the leaderboard) imports neither."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import ovearth_core.analysis.rank_stats, ovearth_core.analysis.multiple\n"
            "import ovearth_core.analysis.slices, ovearth_core.analysis.compare\n"
            "import ovearth_core.analysis.leaderboard, ovearth_core.report.ranks\n"
            "import ovearth_core.viz.rank_figures\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'statsmodels', 'scikit_posthocs'}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
