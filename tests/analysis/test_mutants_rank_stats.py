"""Rules of ``ovearth_core.analysis.rank_stats`` that mutation testing found unpinned (issue 47).

Each test states one rule of the ranks with their uncertainty: the direction of a rank
(the highest value is rank 1, an undefined one last), ties (their mean rank; ties for first
count for each), the interval's quantile levels (``alpha / 2`` taken down, ``1 - alpha / 2``
taken up), the resamples drawn (``ceil(4 m / alpha) - 1`` for ``m = M - 1`` tests, capped),
Holm's step-down order (statsmodels), who counts in a category's units and at the minimum
count (at it: tested; below it: no test and no group), Friedman's blocks and Nemenyi's order
(scipy, scikit-posthocs), the settings' inclusive bounds. Expected values come from scipy,
statsmodels, scikit-posthocs, numpy on hand-expanded resamples, or are worked by hand.
Synthetic per-query pieces, no evaluation: fast enough for mutmut to run them per mutant.
The AP metrics' resamples (``resampled_ap``, ``ap_rank_uncertainty``) likewise on hand-built
curves, against VOC's AP of each resample expanded by hand (every detection repeated as often
as its unit was drawn).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
import scikit_posthocs as sp
from scipy.stats import friedmanchisquare, rankdata
from statsmodels.stats.multitest import multipletests

from ovearth_core.analysis import additive, rank_stats
from ovearth_core.analysis.ap import RECALL_11
from ovearth_core.analysis.ap_bootstrap import EVERY_POINT, APCurves, Curve, Family, Group
from ovearth_core.analysis.standings import QueryPieces
from ovearth_core.bounds import MAX_RESAMPLES
from ovearth_core.errors import OVEarthInputError

SPEC = additive.METRICS["seg_macro_miou"]  # pieces (IoU, 1): the mean IoU of the queries


def _pieces(iou: np.ndarray) -> np.ndarray:
    """``(M, N, 2)`` pieces of the mean IoU from per-query IoUs ``(M, N)``."""
    iou = np.asarray(iou, dtype=np.float64)
    return np.stack([iou, np.ones_like(iou)], axis=2)


def _draws(seed: int, n: int, n_units: int) -> np.ndarray:
    """The resamples' unit multiplicities as documented: one ``default_rng(seed)``, chunks
    of 256 resamples, each unit drawn ``n_units`` times with replacement."""
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, n, 256):
        size = min(256, n - start)
        idx = rng.integers(0, n_units, size=(size, n_units))
        out.append(np.stack([np.bincount(row, minlength=n_units) for row in idx]))
    return np.vstack(out).astype(np.float64)


def _brute_means(iou: np.ndarray, unit_of: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(R, M)``: each resample's mean IoU, every query repeated as often as its unit was
    drawn (no per-unit sums)."""
    out = np.empty((counts.shape[0], iou.shape[0]))
    for r, c in enumerate(counts):
        reps = c[unit_of].astype(int)
        for m in range(iou.shape[0]):
            expanded = np.repeat(iou[m], reps)
            out[r, m] = expanded.mean() if expanded.size else np.nan
    return out


# Three submissions on 12 images of 2 queries: "mid" is listed first, "top" last, so the
# observed order is not the given one; image 11 holds queries 22 and 23.
NAMES = ["mid", "low", "top"]
RNG = np.random.default_rng(11)
IOU = np.vstack([RNG.random(24) * 0.6 + 0.2, RNG.random(24) * 0.6, RNG.random(24) * 0.6 + 0.4])
UNIT_OF = np.repeat(np.arange(12), 2).astype(np.intp)


# --- settings ---------------------------------------------------------------------------------

def test_settings_bounds_are_inclusive() -> None:
    """Resamples 100..20,000, alpha 0.001..0.5, minimum count 1..100,000: both ends pass."""
    rank_stats.check_settings(100, 0.001, 1, "image")
    rank_stats.check_settings(20000, 0.5, 100000, "query")
    rank_stats.check_settings(1000, 1 / 20, 10)  # alpha a float, blocks "image" by default


@pytest.mark.parametrize(("settings", "named", "expected", "found"), [
    ((99, 0.05, 10, "image"), "rank resamples", "a whole number from 100 to 20,000", "99"),
    ((20001, 0.05, 10, "image"), "rank resamples", "a whole number from 100 to 20,000",
     "20001"),
    ((1000.0, 0.05, 10, "image"), "rank resamples", "a whole number", "1000.0"),
    ((1000, 0.0009, 10, "image"), "alpha", "a number from 0.001 to 0.5", "0.0009"),
    ((1000, 0.51, 10, "image"), "alpha", "a number from 0.001 to 0.5", "0.51"),
    ((1000, "0.05", 10, "image"), "alpha", "a number from 0.001 to 0.5", "'0.05'"),
    ((1000, 0.05, 0, "image"), "minimum count", "a whole number from 1 to 100,000", "0"),
    ((1000, 0.05, 100001, "image"), "minimum count", "a whole number from 1 to 100,000",
     "100001"),
    ((1000, 0.05, 10.0, "image"), "minimum count", "a whole number", "10.0"),
    ((1000, 0.05, 10, "pixel"), "Friedman blocks", "image or query", "'pixel'"),
])
def test_a_setting_out_of_range_is_named_with_its_range(settings: tuple[Any, ...], named: str,
                                                        expected: str, found: str) -> None:
    """One problem per setting out of range: the field, its range and what was given."""
    with pytest.raises(OVEarthInputError) as caught:
        rank_stats.check_settings(*settings)
    (problem,) = caught.value.problems
    assert (problem.file, problem.field, problem.found) == ("(options)", named, found)
    assert problem.expected.startswith(expected)


def test_every_setting_out_of_range_is_named_at_once() -> None:
    with pytest.raises(OVEarthInputError) as caught:
        rank_stats.check_settings(5, 0.9, 0, "pixel")
    assert [p.field for p in caught.value.problems] == [
        "rank resamples", "alpha", "minimum count", "Friedman blocks"]


# --- per-unit pieces, resamples, ranks --------------------------------------------------------

def test_unit_pieces_sum_each_units_queries() -> None:
    """Units numbered 0..U-1 in any order of the queries; a unit's pieces are the sum of its
    queries' (queries 0 and 3 share unit 2)."""
    pieces = np.arange(2 * 4 * 3, dtype=np.float64).reshape(2, 4, 3)
    groups = np.array([2, 0, 1, 2], dtype=np.intp)
    got = rank_stats.unit_pieces(pieces, groups)
    assert got.shape == (2, 3, 3)
    for m in range(2):
        for u in range(3):
            assert got[m, u].tolist() == pieces[m, groups == u].sum(axis=0).tolist()
    assert rank_stats.unit_pieces(pieces[:, :0], groups[:0]).shape == (2, 0, 3)


def test_resampled_values_equal_expanded_resamples_over_several_chunks() -> None:
    """600 resamples, more than one chunk and a shorter last one, drawn in turn from one
    generator; each value the mean of the queries repeated as often as their unit was
    drawn."""
    units = rank_stats.unit_pieces(_pieces(IOU), UNIT_OF)
    got = rank_stats.resampled_values(units, SPEC, 600, seed=4)
    want = _brute_means(IOU, UNIT_OF, _draws(4, 600, 12))
    assert got.shape == (600, 3)
    assert np.allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(7,), (5, 6), (2, 3, 8)])
def test_average_ranks_equal_scipys_average_ranks_with_ties(shape: tuple[int, ...]) -> None:
    values = np.random.default_rng(sum(shape)).integers(0, 4, size=shape).astype(float)
    want = rankdata(values, method="average", axis=-1)
    assert rank_stats.average_ranks(values).tolist() == want.tolist()


def test_ranks_of_gives_rank_one_to_the_highest_and_last_to_undefined() -> None:
    values = np.array([[0.2, np.nan, 0.9, 0.2], [np.nan, np.nan, 0.1, 0.3]])
    assert rank_stats.ranks_of(values).tolist() == [[2.5, 4.0, 1.0, 2.5],
                                                    [3.5, 3.5, 2.0, 1.0]]


def test_first_share_counts_ties_for_first_for_each_and_undefined_never() -> None:
    values = np.array([[0.5, 0.5, 0.1], [0.2, 0.9, np.nan], [np.nan, np.nan, np.nan],
                       [0.7, 0.3, 0.7]])
    # row 1: a and b tie first; row 2: b; row 3: no first; row 4: a and c
    assert rank_stats.first_shares(values).tolist() == [2 / 4, 2 / 4, 1 / 4]


def test_rank_interval_levels_are_alpha_halves_taken_outward() -> None:
    """Sorted ranks 1 2 2 3 3 3 4 4 4 5, alpha 0.2: quantile 0.1 sits at position 0.9
    (down: 1, up: 2), quantile 0.9 at 8.1 (down: 4, up: 5)."""
    column = np.array([3, 1, 4, 2, 5, 3, 4, 2, 4, 3], dtype=float)[:, None]
    low, high = rank_stats.rank_interval(column, 0.2)
    assert (low.tolist(), high.tolist()) == ([1.0], [5.0])
    # alpha 0.4: 0.2 at 1.8 (down: 2), 0.8 at 7.2 (up: 4)
    low, high = rank_stats.rank_interval(column, 0.4)
    assert (low.tolist(), high.tolist()) == ([2.0], [4.0])


def test_overlap_runs_share_a_point_at_their_ends() -> None:
    """Intervals that only touch ([1, 2] and [2, 3]) share the point 2: one run."""
    assert rank_stats.overlap_runs([1, 2], [2, 3]) == [(0, 1)]
    assert rank_stats.overlap_runs([1, 3], [2, 3]) == [(0, 0), (1, 1)]
    assert rank_stats.maximal_runs(0, lambda i, j: True) == []
    assert rank_stats.maximal_runs(3, lambda i, j: True) == [(0, 2)]
    assert rank_stats.maximal_runs(3, lambda i, j: False) == [(0, 0), (1, 1), (2, 2)]


def test_group_letters_count_like_spreadsheet_columns() -> None:
    """a..z, then aa..zz, then aaa: bijective base 26."""
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    names = [*alphabet, *("".join(p) for p in itertools.product(alphabet, repeat=2)), "aaa"]
    assert [rank_stats._letter(g) for g in range(len(names))] == names
    runs = [(i, i) for i in range(28)]
    assert rank_stats.group_letters(runs, 28)[25:] == ["z", "aa", "ab"]
    assert rank_stats.group_letters([(0, 2), (2, 3)], 5) == ["a", "a", "ab", "b", ""]


# --- the leader's tests and the groups ----------------------------------------------------------

def test_rank_uncertainty_against_a_hand_expanded_bootstrap() -> None:
    """The observed order is best first (higher mean IoU is rank 1); every resampled number
    equals the one from resamples expanded by hand; Holm is statsmodels' over the M - 1
    tests; 2 tests at 0.1 need ceil(4 * 2 / 0.1) - 1 = 79 resamples, fewer than the 100
    asked: 100 drawn, no note."""
    alpha, seed = 0.1, 3
    out = rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, n_resamples=100,
                                      seed=seed, alpha=alpha, unit="image", min_count=12)
    observed = IOU.mean(axis=1)
    order = list(np.argsort(-observed))
    assert out["models"] == [NAMES[i] for i in order] == ["top", "mid", "low"]
    assert out["value"] == pytest.approx(observed[order].tolist())
    assert out["rank"] == [1.0, 2.0, 3.0]
    assert out["diff"][0] is None
    assert out["diff"][1:] == pytest.approx((observed[order[0]] - observed[order[1:]]).tolist())
    assert {k: out[k] for k in ("metric", "unit", "num_units", "n_resamples_asked", "seed",
                                 "alpha", "min_count")} == {
        "metric": "seg_macro_miou", "unit": "image", "num_units": 12,
        "n_resamples_asked": 100, "seed": seed, "alpha": alpha, "min_count": 12}
    drawn = max(100, math.ceil(4 * 2 / alpha) - 1)
    assert out["n_resamples"] == drawn == 100 and out["resolution_note"] is None
    values = _brute_means(IOU, UNIT_OF, _draws(seed, drawn, 12))[:, order]
    ranks = np.vstack([rankdata(-row) for row in values])
    assert out["rank_low"] == np.quantile(ranks, alpha / 2, axis=0, method="lower").tolist()
    assert out["rank_high"] == np.quantile(ranks, 1 - alpha / 2, axis=0,
                                           method="higher").tolist()
    first = np.vstack([rankdata(-row, method="min") for row in values]) == 1
    assert out["first_share"] == pytest.approx(first.mean(axis=0).tolist())
    diffs = values[:, :1] - values
    p = [min(1.0, 2 * (1 + min((d <= 0).sum(), (d >= 0).sum())) / (1 + drawn))
         for d in diffs[:, 1:].T]
    assert out["p"][0] is None and out["p"][1:] == pytest.approx(p)
    assert out["p_holm"][0] is None
    assert out["p_holm"][1:] == pytest.approx(multipletests(p, method="holm")[1].tolist())
    lo, hi = np.percentile(diffs[:, 1:], [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    assert out["diff_low"][0] is None and out["diff_high"][0] is None
    assert out["diff_low"][1:] == pytest.approx(lo.tolist())
    assert out["diff_high"][1:] == pytest.approx(hi.tolist())
    assert out["best_of_n"] == {"num_models": 3, "best": pytest.approx(observed.max()),
                                "optimism": pytest.approx(values.max(axis=1).mean()
                                                          - observed.max())}
    assert out["warning"].startswith("Thin evidence: the intervals and tests rest on 12 images")
    assert "skipped" not in out


def test_resamples_drawn_are_ceil_4m_over_alpha_minus_one_for_m_minus_one_tests() -> None:
    """Holm over M - 1 = 2 tests at 0.05: ceil(4 * 2 / 0.05) - 1 = 159 resamples, with a
    note; 300 asked: 300 drawn, no note."""
    out = rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, n_resamples=100,
                                      min_count=2)
    assert out["n_resamples"] == 159
    assert out["resolution_note"].startswith("159 resamples drawn (100 asked): Holm's "
                                             "correction over 2 tests at α = 0.05")
    out = rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, n_resamples=300,
                                      min_count=2)
    assert out["n_resamples"] == 300 and out["resolution_note"] is None


def test_the_seed_picks_the_resamples() -> None:
    a = rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, n_resamples=200,
                                    seed=1, min_count=2)
    values = _brute_means(IOU, UNIT_OF, _draws(1, 200, 12))[:, [2, 0, 1]]
    d = values[:, 0] - values[:, 1]
    assert a["p"][1] == pytest.approx(min(1.0, 2 * (1 + min((d <= 0).sum(), (d >= 0).sum()))
                                          / 201))


def test_the_groups_are_the_runs_of_overlapping_rank_intervals() -> None:
    """Two twins far ahead of a third: the twins share rank 1.5 in every resample and one
    group; the third is apart, in a group of its own."""
    iou = np.vstack([IOU[0] * 0.1, np.full(24, 0.9), np.full(24, 0.9)])
    out = rank_stats.rank_uncertainty(["x", "y", "z"], _pieces(iou), SPEC, UNIT_OF,
                                      n_resamples=200, min_count=2)
    assert out["models"] == ["y", "z", "x"]  # ties keep the given order
    assert out["rank"] == [1.5, 1.5, 3.0]
    assert out["rank_low"] == [1.5, 1.5, 3.0] and out["rank_high"] == [1.5, 1.5, 3.0]
    assert out["first_share"] == [1.0, 1.0, 0.0]
    assert out["runs"] == [[0, 1], [2, 2]]
    assert out["groups"] == ["a", "a", "b"]
    assert out["p"][1] == 1.0  # equal twins: leader - twin is 0 in every resample


def test_the_minimum_count_is_of_units_and_reached_at_it() -> None:
    """12 images: min_count 12 tests; 13 gives no test, no group, no interval, and says
    why; the observed ranks and values stay."""
    at = rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, n_resamples=200,
                                     min_count=12)
    assert "skipped" not in at and at["p"][1] is not None
    below = rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, n_resamples=200,
                                        min_count=13, unit="query")
    none = [None, None, None]
    assert below["skipped"].startswith("No test and no groups: 12 queries (fewer than the "
                                       "minimum count, 13)")
    assert below["models"] == ["top", "mid", "low"] and below["rank"] == [1.0, 2.0, 3.0]
    assert {k: below[k] for k in ("n_resamples", "resolution_note", "rank_low", "rank_high",
                                  "first_share", "groups", "runs", "diff_low", "diff_high",
                                  "p", "p_holm", "disagreement")} == {
        "n_resamples": 0, "resolution_note": None, "rank_low": none, "rank_high": none,
        "first_share": none, "groups": ["", "", ""], "runs": [], "diff_low": none,
        "diff_high": none, "p": none, "p_holm": none,
        "disagreement": {"groups_only": [], "tests_only": [], "note": None}}
    assert below["best_of_n"] == {"num_models": 3,
                                  "best": pytest.approx(IOU.mean(axis=1).max()),
                                  "optimism": None}
    assert below["n_resamples_asked"] == 200 and below["num_units"] == 12
    # two queries each of 12 images counted as 12 units, not 24 queries
    by_query = rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC,
                                           np.arange(24, dtype=np.intp), n_resamples=200,
                                           min_count=13, unit="query")
    assert "skipped" not in by_query and by_query["num_units"] == 24


def test_below_the_minimum_count_with_no_defined_value_has_no_best() -> None:
    pieces = np.zeros((3, 2, 2))  # no query counts: every mean undefined
    out = rank_stats.rank_uncertainty(NAMES, pieces, SPEC, np.array([0, 1], dtype=np.intp),
                                      min_count=10)
    assert out["best_of_n"] == {"num_models": 3, "best": None, "optimism": None}
    assert out["value"] == [None, None, None]


# --- disagreement, best of N, notes -------------------------------------------------------------

def test_disagreement_reads_the_leaders_run_and_holm_at_alpha_inclusive() -> None:
    """The leader's group reaches index 1; c is apart but Holm's p is above alpha (groups
    only); b shares the leader's group yet Holm's p equals alpha (tests only: at most
    alpha passes); d is apart and passes (agreement)."""
    out = rank_stats.disagreement(["a", "b", "c", "d"], [(0, 1), (2, 3)],
                                  [None, 0.05, 0.5, 0.01], 0.05)
    assert out["groups_only"] == ["c"] and out["tests_only"] == ["b"]
    assert out["note"] == (
        "c shares no group with the leader, yet Holm's test does not tell it apart: a group "
        "compares 95 % rank intervals one at a time, uncorrected for the 3 comparisons, "
        "while Holm's correction keeps the chance of any false claim among them below "
        "α = 0.05. b shares a group with the leader, yet Holm's test tells it apart: the "
        "test reads the paired difference in each resample, while a rank interval also "
        "moves with every other submission's draws.")


def test_disagreement_names_many_with_share_and_them() -> None:
    models = ["lead", *(f"m{i}" for i in range(7))]
    out = rank_stats.disagreement(models, [(0, 0), (1, 7)], [None] * 8, 0.1)
    assert out["groups_only"] == models[1:]
    assert out["tests_only"] == []
    assert out["note"].startswith("m0, m1, m2, m3, m4 and 2 more share no group with the "
                                  "leader, yet Holm's test does not tell them apart: a group "
                                  "compares 90 % rank intervals")
    together = rank_stats.disagreement(models[:3], [(0, 2)], [None, 0.001, 0.002], 0.05)
    assert together["tests_only"] == ["m0", "m1"]
    assert together["note"].startswith("m0, m1 share a group with the leader, yet Holm's "
                                       "test tells them apart")
    assert rank_stats.disagreement(["a", "b"], [], [None, None], 0.05)["groups_only"] == ["b"]
    agree = rank_stats.disagreement(["a", "b"], [(0, 1)], [None, 0.3], 0.05)
    assert agree == {"groups_only": [], "tests_only": [], "note": None}


def test_best_of_n_is_the_mean_resampled_best_minus_the_observed_best() -> None:
    """Rows with no defined value are left out; a row's best is its best defined value."""
    observed = np.array([0.5, 0.7])
    sampled = np.array([[0.6, 0.8], [np.nan, 0.4], [np.nan, np.nan], [0.9, np.nan]])
    got = rank_stats.best_of_n(observed, sampled)
    assert got["num_models"] == 2 and got["best"] == 0.7
    assert got["optimism"] == pytest.approx((0.8 + 0.4 + 0.9) / 3 - 0.7)
    assert rank_stats.best_of_n(np.array([np.nan, 0.2]), np.full((3, 2), np.nan)) == {
        "num_models": 2, "best": 0.2, "optimism": None}
    assert rank_stats.best_of_n(np.array([np.nan]), np.array([[0.1]]))["optimism"] is None


def test_rank_notes_order_the_reason_the_resolution_and_the_disagreement() -> None:
    ranks = {"skipped": "S", "warning": "W", "resolution_note": "R",
             "disagreement": {"note": "D"}}
    assert rank_stats.rank_notes(ranks) == ["S", "R", "D"]
    assert rank_stats.rank_notes({**ranks, "skipped": None}) == ["W", "R", "D"]
    assert rank_stats.rank_notes({"warning": None, "resolution_note": None}) == []


# --- categories ----------------------------------------------------------------------------------

def test_category_tests_count_units_and_test_from_the_minimum_count() -> None:
    """Category "even" spans 12 images (its queries 0, 2, ..., 22: one per image), "few"
    queries 1 and 3 (2 images), "odd" the other 10 odd queries (10 images). min_count 10:
    "even" and "odd" tested, "few" not (no p, no q). The pair's difference is pair[0] -
    pair[1]; p and BH q by hand and statsmodels."""
    category = np.array([0 if q % 2 == 0 else (1 if q in (1, 3) else 2) for q in range(24)],
                        dtype=np.intp)
    rows = rank_stats.category_tests(["even", "few", "odd"], category, _pieces(IOU), SPEC,
                                     UNIT_OF, (2, 0), n_resamples=100, seed=5, min_count=10)
    assert [r["category"] for r in rows] == ["even", "few", "odd"]
    assert [r["num_queries"] for r in rows] == [12, 2, 10]
    assert [r["num_units"] for r in rows] == [12, 2, 10]
    assert all("local" not in r and "idx" not in r for r in rows)
    few = rows[1]
    assert few["p"] is None and few["q"] is None and few["n_resamples"] == 0
    assert few["diff_low"] is None and few["diff_high"] is None
    assert few["a"] == pytest.approx(IOU[2, [1, 3]].mean())
    assert few["b"] == pytest.approx(IOU[0, [1, 3]].mean())
    assert few["diff"] == pytest.approx(few["a"] - few["b"])
    drawn = math.ceil(4 * 2 / 0.05) - 1  # BH over the 2 tested categories
    rng = np.random.default_rng(5)
    p = []
    for row, c in ((rows[0], 0), (rows[2], 2)):
        idx = np.flatnonzero(category == c)
        units = np.unique(UNIT_OF[idx], return_inverse=True)[1]
        counts = rng.integers(0, row["num_units"], size=(drawn, row["num_units"]))
        counts = np.stack([np.bincount(r, minlength=row["num_units"]) for r in counts])
        values = _brute_means(IOU[[2, 0]][:, idx], units, counts.astype(float))
        d = values[:, 0] - values[:, 1]
        assert row["n_resamples"] == drawn
        assert row["diff"] == pytest.approx(IOU[2, idx].mean() - IOU[0, idx].mean())
        assert row["p"] == pytest.approx(min(1.0, 2 * (1 + min((d <= 0).sum(),
                                                               (d >= 0).sum())) / (1 + drawn)))
        lo, hi = np.percentile(d, [2.5, 97.5])
        assert (row["diff_low"], row["diff_high"]) == pytest.approx((lo, hi))
        p.append(row["p"])
    assert [rows[0]["q"], rows[2]["q"]] == pytest.approx(
        multipletests(p, method="fdr_bh")[1].tolist())
    at = rank_stats.category_tests(["even", "few", "odd"], category, _pieces(IOU), SPEC,
                                   UNIT_OF, (2, 0), n_resamples=100, min_count=12)
    assert [r["p"] is not None for r in at] == [True, False, False]


def test_a_category_with_an_undefined_side_is_not_tested() -> None:
    iou = IOU[:2].copy()
    pieces = _pieces(iou)
    pieces[1, :12] = 0.0  # submission 1 counts no query of category 0
    category = (np.arange(24) >= 12).astype(np.intp)
    rows = rank_stats.category_tests(["a", "b"], category, pieces, SPEC, UNIT_OF, (0, 1),
                                     n_resamples=100, alpha=0.01, min_count=2)
    assert rows[0]["b"] is None and rows[0]["diff"] is None and rows[0]["p"] is None
    assert rows[1]["p"] is not None
    # BH over the one category tested at 0.01: ceil(4 * 1 / 0.01) - 1 = 399 resamples
    assert rows[1]["n_resamples"] == 399 and rows[0]["n_resamples"] == 0


# --- Friedman and Nemenyi -----------------------------------------------------------------------

def test_block_scores_keep_units_where_every_submission_is_defined() -> None:
    pieces = _pieces(IOU)
    pieces[1, 4:6] = 0.0  # submission 1 counts neither query of image 2
    scores, n_units = rank_stats.block_scores(pieces, SPEC, UNIT_OF)
    assert n_units == 12 and scores.shape == (11, 3)
    keep = [u for u in range(12) if u != 2]
    want = IOU.reshape(3, 12, 2).mean(axis=2)[:, keep].T
    assert np.allclose(scores, want)


def _scores() -> np.ndarray:
    """(10 blocks, 4 submissions): c best, then a, d, b, with noise."""
    rng = np.random.default_rng(2)
    return rng.random((10, 4)) * 0.3 + np.array([0.5, 0.1, 0.7, 0.3])


def test_friedman_orders_by_mean_rank_best_first_against_the_libraries() -> None:
    scores = _scores()
    got = rank_stats.friedman_nemenyi(["a", "b", "c", "d"], scores, alpha=0.1, min_count=10,
                                      blocks="query")
    mean_rank = np.vstack([rankdata(-row) for row in scores]).mean(axis=0)
    order = list(np.argsort(mean_rank, kind="stable"))
    assert got["models"] == ["abcd"[i] for i in order] and got["models"][0] == "c"
    assert got["mean_rank"] == pytest.approx(mean_rank[order].tolist())
    stat, p = friedmanchisquare(*scores.T)
    assert (got["statistic"], got["p"]) == pytest.approx((stat, p))
    nemenyi = sp.posthoc_nemenyi_friedman(scores).to_numpy()[np.ix_(order, order)]
    assert np.allclose(got["nemenyi_p"], nemenyi)
    # Demsar (2006), Table 5: q_0.10 = 2.291 for k = 4
    assert got["cd"] == pytest.approx(2.291 * np.sqrt(4 * 5 / (6 * 10)), rel=1e-3)
    assert got["num_blocks"] == 10 and got["alpha"] == 0.1
    assert got["warning"].startswith("Thin evidence: the intervals and tests rest on 10 "
                                     "queries")
    # cliques: maximal runs (two or more) whose first and last Nemenyi does not tell apart
    brute = [(i, j) for i in range(4) for j in range(i + 1, 4) if nemenyi[i, j] > 0.1]
    maximal = [r for r in brute if not any(o != r and o[0] <= r[0] and r[1] <= o[1]
                                           for o in brute)]
    assert got["cliques"] == [list(r) for r in maximal]


def test_friedman_cliques_leave_out_single_submissions() -> None:
    """Three submissions told apart on 40 blocks: no clique (a submission alone is none)."""
    scores = np.tile([0.9, 0.5, 0.1], (40, 1)) + np.random.default_rng(0).random((40, 3)) * 0.01
    got = rank_stats.friedman_nemenyi(["a", "b", "c"], scores, min_count=2)
    assert got["cliques"] == [] and got["warning"] is None


@pytest.mark.parametrize(("k", "n_blocks", "skipped"), [
    (2, 30, "Friedman's test needs at least 3 submissions and 2 blocks (here 2 and 30)"),
    (3, 1, "Friedman's test needs at least 3 submissions and 2 blocks (here 3 and 1)"),
])
def test_friedman_needs_three_submissions_and_two_blocks(k: int, n_blocks: int,
                                                         skipped: str) -> None:
    scores = np.random.default_rng(1).random((n_blocks, k))
    assert rank_stats.friedman_nemenyi(list("abc")[:k], scores, min_count=1) == {
        "skipped": skipped, "num_blocks": n_blocks}


def test_friedman_at_the_minimum_count_runs_and_below_says_why() -> None:
    scores = _scores()
    assert "statistic" in rank_stats.friedman_nemenyi(list("abcd"), scores[:3], min_count=3)
    assert "statistic" in rank_stats.friedman_nemenyi(list("abcd"), scores[:2])
    got = rank_stats.friedman_nemenyi(list("abcd"), scores[:3], min_count=4, blocks="query")
    assert got == {"skipped": "No test and no groups: 3 queries (fewer than the minimum "
                              "count, 4); a test over so few says nothing (a bootstrap's "
                              "intervals are points and its p-value the smallest it can "
                              "give, whatever the submissions)", "num_blocks": 3}
    ties = rank_stats.friedman_nemenyi(list("abc"), np.ones((4, 3)))
    assert ties == {"skipped": "Friedman's test is undefined when every block ties every "
                               "submission", "num_blocks": 4}


# --- aligned pieces and the whole analysis of one metric ---------------------------------------

def _entry(order: list[int], iou: np.ndarray, categories: tuple[str, ...] = ("p", "q"),
           ) -> QueryPieces:
    """A submission's pieces with its queries in ``order`` (query k: image k // 2, category
    k % 2)."""
    ids = tuple(f"q{k}" for k in order)
    images = tuple(dict.fromkeys(f"img{k // 2}" for k in order))
    return QueryPieces(ids, categories, np.array([k % 2 for k in order], dtype=np.intp),
                       images, np.array([images.index(f"img{k // 2}") for k in order],
                                        dtype=np.intp),
                       {"seg_macro_miou": _pieces(iou[None, order])[0]})


def test_aligned_pieces_look_rows_up_by_query_id() -> None:
    """The second submission lists its queries in reverse: its rows are looked up by query
    id in the first one's order, never paired by position."""
    n = 24
    first = _entry(list(range(n)), IOU[0])
    second = _entry(list(reversed(range(n))), IOU[1])
    pieces, ids, images = rank_stats.aligned_pieces([first, second], "seg_macro_miou")
    assert ids == [f"q{k}" for k in range(n)]
    assert images == [f"img{k // 2}" for k in range(n)]
    assert pieces[0, :, 0].tolist() == IOU[0].tolist()
    assert pieces[1, :, 0].tolist() == IOU[1].tolist()


def test_aligned_pieces_refuse_other_queries_naming_the_submission() -> None:
    first = _entry(list(range(24)), IOU[0])
    short = _entry(list(range(23)), IOU[1])
    with pytest.raises(OVEarthInputError) as caught:
        rank_stats.aligned_pieces([first, first, short], "seg_macro_miou")
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == ("(leaderboard)", "per_sample.sample_id")
    assert problem.expected == "the same 24 queries in every submission's result"
    assert problem.found == "23 queries in submission 3"


def test_metric_ranks_wires_unit_blocks_and_the_leaders_pair() -> None:
    """Resampling unit and Friedman's blocks are chosen apart (query units, image blocks);
    the categories compare the leader and the runner-up, named, over the same units."""
    entries = [_entry(list(range(24)), IOU[m]) for m in range(3)]
    out = rank_stats.metric_ranks(NAMES, entries, "seg_macro_miou", n_resamples=100, seed=2,
                                  alpha=0.04, min_count=11, unit="query", blocks="image")
    assert out["unit"] == "query" and out["num_units"] == 24 and out["seed"] == 2
    assert out["models"] == ["top", "mid", "low"] and out["min_count"] == 11
    assert out["n_resamples"] == math.ceil(4 * 2 / 0.04) - 1 == 199
    friedman = out["friedman"]
    assert friedman["blocks"] == "image" and friedman["num_units"] == 12
    assert friedman["num_blocks"] == 12 and friedman["alpha"] == 0.04
    image_scores = IOU.reshape(3, 12, 2).mean(axis=2).T
    assert friedman["statistic"] == pytest.approx(friedmanchisquare(*image_scores.T)[0])
    cats = out["categories"]
    assert (cats["a"], cats["b"], cats["unit"], cats["min_count"]) == ("top", "mid", "query",
                                                                       11)
    assert [r["category"] for r in cats["rows"]] == ["p", "q"]
    assert [r["num_units"] for r in cats["rows"]] == [12, 12]  # queries are the units
    assert cats["rows"][0]["diff"] == pytest.approx(IOU[2, ::2].mean() - IOU[0, ::2].mean())
    drawn = math.ceil(4 * 2 / 0.04) - 1
    assert cats["n_resamples"] == drawn == cats["rows"][0]["n_resamples"]
    assert cats["resolution_note"].startswith(f"{drawn} resamples drawn (100 asked): "
                                              "Benjamini-Hochberg's correction over 2 tests")
    assert cats["warning"].startswith("Thin evidence in 2 of 2 categories tested: p (12 "
                                      "queries), q (12 queries)")


def test_metric_ranks_by_image_and_blocks_by_query() -> None:
    entries = [_entry(list(range(24)), IOU[m]) for m in range(3)]
    out = rank_stats.metric_ranks(NAMES, entries, "seg_macro_miou", n_resamples=300,
                                  min_count=7, unit="image", blocks="query")
    assert out["unit"] == "image" and out["num_units"] == 12
    assert out["friedman"]["blocks"] == "query" and out["friedman"]["num_units"] == 24
    assert out["friedman"]["num_blocks"] == 24
    cats = out["categories"]
    assert [r["num_units"] for r in cats["rows"]] == [12, 12]  # each image once per category
    assert cats["n_resamples"] == 300 and cats["resolution_note"] is None
    assert cats["warning"] == ("Thin evidence in 2 of 2 categories tested: p (12 images), q "
                               "(12 images); their intervals and tests rest on fewer than 30 "
                               "images, so they are rough: intervals usually too narrow, "
                               "p-values too small.")
    none = rank_stats.metric_ranks(NAMES, entries, "seg_macro_miou", n_resamples=300,
                                   min_count=13)
    assert none["categories"]["rows"][0]["p"] is None
    assert none["categories"]["n_resamples"] == 300
    assert none["categories"]["resolution_note"] is None
    assert none["categories"]["warning"] is None


def test_metric_ranks_of_one_submission_has_no_categories_and_two_have() -> None:
    entries = [_entry(list(range(24)), IOU[m]) for m in range(3)]
    one = rank_stats.metric_ranks(NAMES[:1], entries[:1], "seg_macro_miou", n_resamples=100,
                                  min_count=2)
    assert "categories" not in one
    two = rank_stats.metric_ranks(NAMES[:2], entries[:2], "seg_macro_miou", n_resamples=100,
                                  min_count=2)
    assert (two["categories"]["a"], two["categories"]["b"]) == ("mid", "low")


def test_metric_ranks_checks_its_settings() -> None:
    entries = [_entry(list(range(24)), IOU[m]) for m in range(2)]
    with pytest.raises(OVEarthInputError, match="Friedman blocks"):
        rank_stats.metric_ranks(NAMES[:2], entries, "seg_macro_miou", blocks="pixel")


def test_the_cap_bounds_the_resamples_drawn() -> None:
    """Holm over 2 tests at 0.001 needs ceil(4 * 2 / 0.001) - 1 = 7,999: drawn; the cap
    (100,000) is not reached."""
    out = rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, n_resamples=100,
                                      alpha=0.001, min_count=2)
    assert out["n_resamples"] == 7999 < MAX_RESAMPLES


def test_a_categorys_units_are_its_images_not_its_queries() -> None:
    """Two categories of 12 queries each on 6 images (two queries an image): the minimum
    count is of images. min_count 6: both tested; 7: neither (12 queries, but 6 units)."""
    category = (np.arange(24) >= 12).astype(np.intp)
    at = rank_stats.category_tests(["a", "b"], category, _pieces(IOU), SPEC, UNIT_OF, (2, 0),
                                   n_resamples=100, min_count=6)
    assert [(r["num_queries"], r["num_units"]) for r in at] == [(12, 6), (12, 6)]
    assert all(r["p"] is not None for r in at)
    below = rank_stats.category_tests(["a", "b"], category, _pieces(IOU), SPEC, UNIT_OF,
                                      (2, 0), n_resamples=100, min_count=7)
    assert all(r["p"] is None and r["q"] is None for r in below)


# --- survivors of the first mutmut run ----------------------------------------------------------

def test_rank_interval_levels_on_a_hundred_distinct_ranks() -> None:
    """Ranks 1..100, alpha 0.2: the 0.1 quantile taken down is 10, the 0.9 one taken up 91
    (positions 9.9 and 89.1); a level of alpha / 3 would give 7 and 94."""
    low, high = rank_stats.rank_interval(np.arange(100, 0, -1, dtype=float)[:, None], 0.2)
    assert (low.tolist(), high.tolist()) == ([10.0], [91.0])


def test_overlap_runs_need_every_interval_of_the_run_and_no_other() -> None:
    """[1, 3] and [2, 3] share 2..3; the third, [0, 1.5], shares nothing with the second:
    it does not cut the first run short."""
    assert rank_stats.overlap_runs([1, 2, 0], [3, 3, 1.5]) == [(0, 1), (2, 2)]


def test_the_default_seed_is_zero() -> None:
    """Issue 37: the seed is 0 unless given (the leaderboard's JSON names it)."""
    kwargs = {"n_resamples": 100, "min_count": 2}
    assert (rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, **kwargs)
            == rank_stats.rank_uncertainty(NAMES, _pieces(IOU), SPEC, UNIT_OF, seed=0,
                                           **kwargs))
    category = (np.arange(24) % 2).astype(np.intp)
    assert (rank_stats.category_tests(["a", "b"], category, _pieces(IOU), SPEC, UNIT_OF,
                                      (2, 0), **kwargs)
            == rank_stats.category_tests(["a", "b"], category, _pieces(IOU), SPEC, UNIT_OF,
                                         (2, 0), seed=0, **kwargs))
    entries = [_entry(list(range(24)), IOU[m]) for m in range(3)]
    assert (rank_stats.metric_ranks(NAMES, entries, "seg_macro_miou", **kwargs)
            == rank_stats.metric_ranks(NAMES, entries, "seg_macro_miou", seed=0, **kwargs))


def test_tied_submissions_keep_their_given_order() -> None:
    """40 submissions at two levels (odd ones ahead): the observed order is the odd ones in
    their given order, then the even ones; Friedman's mean-rank order too."""
    names = [f"s{i:02d}" for i in range(40)]
    iou = np.array([[0.9 if i % 2 else 0.1] * 2 for i in range(40)])
    out = rank_stats.rank_uncertainty(names, _pieces(iou), SPEC, np.arange(2, dtype=np.intp),
                                      min_count=10)
    want = names[1::2] + names[0::2]
    assert out["models"] == want
    assert out["rank"] == [10.5] * 20 + [30.5] * 20
    scores = np.vstack([iou[:, 0], iou[:, 0] * 0.5 + np.linspace(0, 0.01, 40)])
    got = rank_stats.friedman_nemenyi(names, scores, min_count=2)
    mean_rank = np.vstack([rankdata(-row) for row in scores]).mean(axis=0)
    assert got["models"] == [names[i] for i in np.argsort(mean_rank, kind="stable")]


def test_the_full_analysis_reports_where_groups_and_tests_agree() -> None:
    """Two twins far ahead of a third: the twin shares the leader's group and Holm's p is 1;
    the third is apart and Holm's p (2 / 201, times 2) passes: no disagreement."""
    iou = np.vstack([IOU[0] * 0.1, np.full(24, 0.9), np.full(24, 0.9)])
    out = rank_stats.rank_uncertainty(["x", "y", "z"], _pieces(iou), SPEC, UNIT_OF,
                                      n_resamples=200, min_count=2)
    assert out["p_holm"] == [None, 1.0, pytest.approx(2 * 2 / 201)]
    assert out["disagreement"] == {"groups_only": [], "tests_only": [], "note": None}


def test_disagreement_at_alpha_passes_and_names_five_then_more() -> None:
    """Holm's p equal to alpha passes: apart and passing is agreement. Five names are all
    written; a sixth is counted."""
    out = rank_stats.disagreement(["a", "b", "c"], [(0, 0), (1, 2)], [None, 0.05, 0.05], 0.05)
    assert out == {"groups_only": [], "tests_only": [], "note": None}
    models = ["lead", *"bcdef"]
    five = rank_stats.disagreement(models, [(0, 0), (1, 5)], [None] * 6, 0.05)["note"]
    assert five.startswith("b, c, d, e, f share no group with the leader")
    six = rank_stats.disagreement([*models, "g"], [(0, 0), (1, 6)], [None] * 7, 0.05)["note"]
    assert six.startswith("b, c, d, e, f and 1 more share no group with the leader")


def test_nothing_defined_warns_nothing() -> None:
    """No defined value: the best is None and no RuntimeWarning reaches the user (numpy's
    all-NaN maximum warns); nor does Friedman's test when every block ties."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = rank_stats.rank_uncertainty(NAMES, np.zeros((3, 2, 2)), SPEC,
                                          np.array([0, 1], dtype=np.intp), min_count=10)
        assert out["best_of_n"]["best"] is None
        got = rank_stats.best_of_n(np.array([np.nan, np.nan]), np.array([[0.2, 0.1]]))
        assert got == {"num_models": 2, "best": None, "optimism": None}
        ties = rank_stats.friedman_nemenyi(list("abc"), np.ones((4, 3)))
        assert "skipped" in ties


def test_a_category_without_queries_has_no_units_and_no_test() -> None:
    category = (np.arange(24) % 2).astype(np.intp)
    rows = rank_stats.category_tests(["a", "b", "none"], category, _pieces(IOU), SPEC,
                                     UNIT_OF, (2, 0), n_resamples=100, min_count=1)
    assert (rows[2]["num_queries"], rows[2]["num_units"], rows[2]["p"]) == (0, 0, None)
    assert rows[2]["a"] is None and rows[2]["q"] is None


def test_metric_ranks_wire_the_seed_blocks_and_one_tested_category() -> None:
    """Category 0 spans images 0..9, category 1 images 10 and 11: at min_count 5 only
    category 0 is tested, and the categories' resamples are its own; the seed given reaches
    the categories; Friedman's blocks name their unit in its warning."""
    base = _entry(list(range(24)), IOU[0])
    category = np.array([0] * 20 + [1] * 4, dtype=np.intp)
    entries = [QueryPieces(base.query_ids, ("c0", "c1"), category, base.images, base.image,
                           {"seg_macro_miou": _pieces(IOU[m:m + 1])[0]}) for m in range(3)]
    out = rank_stats.metric_ranks(NAMES, entries, "seg_macro_miou", n_resamples=100, seed=7,
                                  alpha=0.01, min_count=5, blocks="query")
    cats = out["categories"]
    assert [r["p"] is not None for r in cats["rows"]] == [True, False]
    assert cats["n_resamples"] == cats["rows"][0]["n_resamples"] == math.ceil(4 / 0.01) - 1
    direct = rank_stats.category_tests(["c0", "c1"], category, _pieces(IOU[[0, 1, 2]]), SPEC,
                                       UNIT_OF, (2, 0), n_resamples=100, seed=7, alpha=0.01,
                                       min_count=5)
    assert cats["rows"] == direct
    assert out["friedman"]["warning"].startswith("Thin evidence: the intervals and tests rest "
                                                 "on 24 queries")


# --- AP metrics: recomputed in each resample (resampled_ap, ap_rank_uncertainty) ---------------
# Hand-built curves of the pooled VOC family (one IoU threshold, every-point and 11-point AP);
# the reference expands each resample by hand: every detection repeated as often as its
# query's unit was drawn (the copies adjacent), the GT counted as often, and VOC's own
# every-point / 11-point AP of that ranked list (no weights, nothing of ap_bootstrap).

AP_UNITS = 12  # unit 11 holds no query: it is still drawn
AP_RNG = np.random.default_rng(23)
AP_QUERY_UNIT = AP_RNG.integers(0, AP_UNITS - 1, size=16)  # each query's unit
AP_GT = AP_RNG.integers(0, 3, size=16)  # GT boxes of each query (some none)


def _ap_detections(seed: int, hit_rate: float, lift: float,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """A submission's detections, ranked: their queries (of the 16) and true-positive
    flags (at most the query's GT count of hits per query; hits ranked ahead by ``lift``
    on average)."""
    rng = np.random.default_rng(seed)
    query, tp = [], []
    for q in range(16):
        hits = int(rng.binomial(AP_GT[q], hit_rate))
        misses = int(rng.integers(0, 3))
        query += [q] * (hits + misses)
        tp += [True] * hits + [False] * misses
    order = np.argsort(rng.random(len(query)) - np.array(tp) * lift, kind="stable")
    return np.array(query)[order], np.array(tp)[order]


# Three submissions, each listing the 16 queries in its own order (so each has its own
# query -> unit array): "fair", "poor", "good" (the observed order is not the given one).
AP_NAMES = ["fair", "poor", "good"]
AP_DETECTIONS = [_ap_detections(1, 0.7, 0.4), _ap_detections(2, 0.4, 0.2),
                 _ap_detections(3, 0.8, 0.4)]
AP_ORDERS = [np.arange(16), np.arange(16)[::-1].copy(), np.random.default_rng(5).permutation(16)]


def _ap_curves(m: int) -> APCurves:
    """Submission ``m``'s curves in its own query order (query k of it: ``AP_ORDERS[m][k]``)."""
    order = AP_ORDERS[m]
    position = np.argsort(order)  # the submission's index of each query
    query, tp = AP_DETECTIONS[m]
    gt = AP_GT[order]
    has = np.flatnonzero(gt > 0)
    group = Group(has, gt[has].astype(np.float64), (Curve(position[query], tp),))
    return APCurves(tuple(f"q{k}" for k in order),
                    {"voc": Family((EVERY_POINT, RECALL_11), (group,))})


def _voc_ap(tp: np.ndarray, num_gt: float, eleven: bool) -> float:
    """VOC's AP of a ranked list of true/false positives (VOC 2010 code for every-point,
    VOC 2007's for 11 points: the best precision at recall >= t, 0 beyond)."""
    if num_gt == 0:
        return math.nan
    ctp = np.cumsum(tp)
    recall = ctp / num_gt
    precision = ctp / np.arange(1, tp.size + 1)
    if eleven:
        return float(np.mean([precision[recall >= t].max() if (recall >= t).any() else 0.0
                              for t in np.arange(11) / 10]))
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.concatenate([[0.0], precision, [0.0]])
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]  # VOC's backward loop of maxima
    i = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def _brute_ap(counts: np.ndarray, eleven: bool = False) -> np.ndarray:
    """``(R, 3)``: each submission's AP in each resample of unit multiplicities ``counts``,
    every detection repeated as often as its query's unit was drawn."""
    out = np.empty((counts.shape[0], len(AP_DETECTIONS)))
    for r, c in enumerate(counts):
        per_query = c[AP_QUERY_UNIT].astype(int)
        for m, (query, tp) in enumerate(AP_DETECTIONS):
            out[r, m] = _voc_ap(np.repeat(tp, per_query[query]),
                                float(per_query @ AP_GT), eleven)
    return out


def _ap_args() -> tuple[list[APCurves], list[np.ndarray]]:
    return ([_ap_curves(m) for m in range(3)],
            [AP_QUERY_UNIT[AP_ORDERS[m]].astype(np.intp) for m in range(3)])


def test_resampled_ap_equals_expanded_resamples_over_several_chunks() -> None:
    """300 resamples (a chunk of 256 and a shorter one, drawn in turn from one generator)
    of 12 units, one of them holding no query: each submission's AP, read through its own
    query -> unit array, is VOC's AP of the resample expanded by hand. The key chosen is
    the one computed (every-point, then 11-point)."""
    curves, units = _ap_args()
    got = rank_stats.resampled_ap(curves, "ap_every_point", units, AP_UNITS, 300, 8)
    counts = _draws(8, 300, AP_UNITS)
    assert got.shape == (300, 3)
    assert np.allclose(got, _brute_ap(counts), rtol=0, atol=1e-12, equal_nan=True)
    eleven = rank_stats.resampled_ap(curves, "ap_11_point", units, AP_UNITS, 20, 8)
    assert np.allclose(eleven, _brute_ap(counts[:20], eleven=True), rtol=0, atol=1e-12)
    assert not np.allclose(eleven, got[:20])  # the two keys differ here


def test_resampled_ap_is_undefined_where_no_gt_is_drawn() -> None:
    """One submission whose only GT query is in unit 0, of 2 units: a resample without unit
    0 has no GT (AP nan); with it, the one hit ranked second gives every-point AP 1/2
    (precision 1/2 at recall 1), whatever the multiplicity."""
    curve = APCurves(("a", "b"), {"voc": Family((EVERY_POINT, RECALL_11), (
        Group(np.array([0]), np.array([1.0]), (Curve(np.array([1, 0]),
                                                     np.array([False, True])),)),))})
    got = rank_stats.resampled_ap([curve], "ap_every_point", [np.array([0, 1])], 2, 40, 3)
    counts = _draws(3, 40, 2)
    want = np.where(counts[:, 0] > 0, 0.5, np.nan)[:, None]
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(want).any()
    # with unit 0 drawn c0 times and unit 1 c1 times: precision c0 / (c0 + c1) at recall 1
    defined = counts[:, 0] > 0
    assert got[defined, 0] == pytest.approx((counts[defined, 0]
                                             / counts[defined].sum(axis=1)).tolist())


def test_resampled_ap_refuses_curves_without_their_units() -> None:
    """Three curves and two query -> unit arrays: refused, never paired short."""
    curves, units = _ap_args()
    with pytest.raises(ValueError):
        rank_stats.resampled_ap(curves, "ap_every_point", units[:2], AP_UNITS, 10, 0)


def _assert_ranks(out: dict[str, Any], values: np.ndarray, alpha: float) -> None:
    """Every resampled number of ``out`` against ``values`` ``(R, M)`` (observed order):
    ranks 1 = best with undefined last, quantiles taken outward, bootstrap p and Holm."""
    ranks = np.vstack([rankdata(np.where(np.isnan(row), np.inf, -row)) for row in values])
    assert out["rank_low"] == np.quantile(ranks, alpha / 2, axis=0, method="lower").tolist()
    assert out["rank_high"] == np.quantile(ranks, 1 - alpha / 2, axis=0,
                                           method="higher").tolist()
    diffs = values[:, :1] - values
    p = []
    for d in diffs[:, 1:].T:
        d = d[np.isfinite(d)]
        p.append(min(1.0, 2 * (1 + min((d <= 0).sum(), (d >= 0).sum())) / (1 + d.size)))
    assert out["p"][0] is None and out["p"][1:] == pytest.approx(p)
    assert out["p_holm"][1:] == pytest.approx(multipletests(p, method="holm")[1].tolist())
    first = np.vstack([rankdata(np.where(np.isnan(row), np.inf, -row), method="min")
                       for row in values]) == 1
    assert out["first_share"] == pytest.approx(first.mean(axis=0).tolist())
    lo, hi = np.percentile(diffs[:, 1:], [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    assert out["diff_low"][1:] == pytest.approx(lo.tolist())
    assert out["diff_high"][1:] == pytest.approx(hi.tolist())


def test_ap_rank_uncertainty_by_default() -> None:
    """Defaults: 1,000 resamples asked and drawn (Holm over 2 tests at 0.05 needs 159),
    seed 0, alpha 0.05, image units, minimum count 10 (12 units: tested), Friedman's
    blocks images and no Friedman test for AP, saying why. The observed values are those
    given (best first), not recomputed; every resampled number is that of the expanded
    resamples."""
    curves, units = _ap_args()
    observed = _brute_ap(np.ones((1, AP_UNITS)))[0]
    out = rank_stats.ap_rank_uncertainty(AP_NAMES, observed, curves, "ap_every_point", units,
                                         AP_UNITS, metric="bbox_voc_ap")
    order = list(np.argsort(-observed))
    assert out["models"] == [AP_NAMES[i] for i in order] == ["good", "fair", "poor"]
    assert out["value"] == observed[order].tolist() and out["rank"] == [1.0, 2.0, 3.0]
    assert {k: out[k] for k in ("metric", "unit", "num_units", "n_resamples_asked", "seed",
                                 "alpha", "min_count", "n_resamples", "resolution_note")} == {
        "metric": "bbox_voc_ap", "unit": "image", "num_units": 12, "n_resamples_asked": 1000,
        "seed": 0, "alpha": 0.05, "min_count": 10, "n_resamples": 1000,
        "resolution_note": None}
    assert "skipped" not in out
    assert out["warning"].startswith("Thin evidence: the intervals and tests rest on 12 images")
    _assert_ranks(out, _brute_ap(_draws(0, 1000, AP_UNITS))[:, order], 0.05)
    friedman = out["friedman"]
    assert friedman["skipped"].startswith("AP ranks boxes across queries: it has no value per "
                                          "image or query, so there is no Friedman test")
    assert {k: friedman[k] for k in ("blocks", "num_blocks", "num_units")} == {
        "blocks": "image", "num_blocks": None, "num_units": 12}


def test_ap_rank_uncertainty_passes_every_setting_on() -> None:
    """Seed 4, alpha 0.2, 150 asked (Holm over 2 tests at 0.2 needs 39), query units, minimum
    count 12 (reached), Friedman's blocks queries: each reaches the report; then minimum
    count 13: no test, saying why; then settings out of range: refused, naming them."""
    curves, units = _ap_args()
    observed = np.array([0.5, 0.25, 0.75])  # reported values, taken as given
    out = rank_stats.ap_rank_uncertainty(
        AP_NAMES, observed, curves, "ap_every_point", units, AP_UNITS, metric="m",
        n_resamples=150, seed=4, alpha=0.2, unit="query", min_count=12, blocks="query")
    assert out["models"] == ["good", "fair", "poor"] and out["value"] == [0.75, 0.5, 0.25]
    assert {k: out[k] for k in ("metric", "unit", "n_resamples_asked", "seed", "alpha",
                                 "min_count", "n_resamples")} == {
        "metric": "m", "unit": "query", "n_resamples_asked": 150, "seed": 4, "alpha": 0.2,
        "min_count": 12, "n_resamples": 150}
    assert out["warning"].startswith("Thin evidence: the intervals and tests rest on 12 "
                                     "queries")
    _assert_ranks(out, _brute_ap(_draws(4, 150, AP_UNITS))[:, [2, 0, 1]], 0.2)
    assert out["friedman"]["blocks"] == "query" and out["friedman"]["num_units"] == 12
    below = rank_stats.ap_rank_uncertainty(
        AP_NAMES, observed, curves, "ap_every_point", units, AP_UNITS, metric="m",
        n_resamples=150, min_count=13)
    assert below["skipped"].startswith("No test and no groups: 12 images (fewer than the "
                                       "minimum count, 13)")
    assert below["p"] == [None, None, None] and below["n_resamples"] == 0
    assert below["friedman"]["skipped"].startswith("AP ranks boxes across queries")
    for bad, field in (({"blocks": "pixel"}, "Friedman blocks"),
                       ({"n_resamples": 99}, "rank resamples"),
                       ({"alpha": 0.6}, "alpha"), ({"min_count": 0}, "minimum count")):
        with pytest.raises(OVEarthInputError) as caught:
            rank_stats.ap_rank_uncertainty(AP_NAMES, observed, curves, "ap_every_point",
                                           units, AP_UNITS, metric="m", **bad)
        assert [p.field for p in caught.value.problems] == [field]


# --- survivors of the second mutmut run ---------------------------------------------------------

def test_every_block_tied_is_undefined_without_a_warning_whatever_the_counts() -> None:
    """21 blocks of 5 submissions, all tied: Friedman's tie correction is 0 and scipy's
    numerator comes out a round-off away from 0 (x / 0, not 0 / 0): still "undefined",
    and no RuntimeWarning reaches the user. Kills friedman_nemenyi 28, 30 (division by
    zero no longer silenced)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rank_stats.friedman_nemenyi(list("abcde"), np.ones((21, 5)), min_count=2)
    assert got == {"skipped": "Friedman's test is undefined when every block ties every "
                              "submission", "num_blocks": 21}


def test_friedman_ties_in_mean_rank_keep_the_given_order() -> None:
    """40 submissions, the odd ones ahead in each of 3 blocks and tied among themselves:
    mean ranks 10.5 (odd) and 30.5 (even); the diagram lists the odd ones in their given
    order, then the even ones (a stable sort). Kills friedman_nemenyi 54, 56 (numpy's
    default sort, which is not stable)."""
    names = [f"s{i:02d}" for i in range(40)]
    scores = np.tile([0.9 if i % 2 else 0.1 for i in range(40)], (3, 1))
    got = rank_stats.friedman_nemenyi(names, scores, min_count=2)
    assert got["models"] == names[1::2] + names[0::2]
    assert got["mean_rank"] == [10.5] * 20 + [30.5] * 20


def test_metric_ranks_of_submissions_without_queries_say_why_without_a_traceback() -> None:
    """Every submission evaluated on no query (a modality no query has): no test, no group,
    no Friedman test, no category tested, each saying why; the per-image unit array of no
    image is still an index array. Kills metric_ranks 23, 25 (``dtype=np.intp`` left out:
    ``np.array([])`` is float64, and numpy refuses float indices)."""
    empty = [QueryPieces((), ("p",), np.zeros(0, dtype=np.intp), (), np.zeros(0, dtype=np.intp),
                         {"seg_macro_miou": np.zeros((0, 2))}) for _ in range(3)]
    out = rank_stats.metric_ranks(NAMES, empty, "seg_macro_miou", n_resamples=100)
    assert out["num_units"] == 0 and out["value"] == [None, None, None]
    assert out["skipped"].startswith("No test and no groups: 0 images")
    assert out["friedman"]["skipped"].startswith("Friedman's test needs at least 3 "
                                                 "submissions and 2 blocks (here 3 and 0)")
    assert [(r["category"], r["num_units"], r["p"]) for r in out["categories"]["rows"]] == [
        ("p", 0, None)]


def test_ranks_from_values_by_default() -> None:
    """The one rule of every ranked metric, called with its defaults: 1,000 resamples asked
    of ``sample`` (Holm over 1 test at 0.05 needs 79), seed 0 and image units named in the
    report, alpha 0.05, minimum count 10 (10 units tested, 9 not). Kills ranks_from_values
    1 (seed 1), 2, 3 (the unit's name)."""
    asked = []

    def sample(n: int) -> np.ndarray:
        asked.append(n)
        return np.random.default_rng(1).random((n, 2))

    out = rank_stats.ranks_from_values("m", ["a", "b"], np.array([0.2, 0.4]), sample, 10)
    assert asked == [1000]
    assert {k: out[k] for k in ("metric", "models", "num_units", "n_resamples_asked", "seed",
                                 "alpha", "min_count", "unit", "n_resamples")} == {
        "metric": "m", "models": ["b", "a"], "num_units": 10, "n_resamples_asked": 1000,
        "seed": 0, "alpha": 0.05, "min_count": 10, "unit": "image", "n_resamples": 1000}
    assert out["warning"].startswith("Thin evidence: the intervals and tests rest on 10 images")
    below = rank_stats.ranks_from_values("m", ["a", "b"], np.array([0.2, 0.4]), sample, 9)
    assert below["skipped"].startswith("No test and no groups: 9 images (fewer than the "
                                       "minimum count, 10)") and asked == [1000]
