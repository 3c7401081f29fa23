"""Tests of ovearth_core.analysis.compare: McNemar, paired bootstrap, agreement, per-query diffs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from report_fixtures import build_dataset, synthetic_result

from ovearth_core import OVEarthInputError
from ovearth_core.analysis.compare import (
    agreement,
    compare_results,
    mcnemar_exact,
    paired_bootstrap,
    recompute_key_metrics,
    resample_counts,
)
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

ALL = ("segmentation", "bbox", "oriented_bbox")


def _binom_two_sided(k: int, n: int) -> float:
    """Exact two-sided binomial(n, 1/2) p-value by summing the table by hand."""
    probs = [math.comb(n, i) / 2**n for i in range(n + 1)]
    return min(1.0, sum(p for p in probs if p <= probs[k] * (1 + 1e-12)))


# Hand-worked: only_a=1, only_b=7 -> n=8, P(X<=1) = (1 + 8)/256, doubled = 18/256.
# only_a=2, only_b=8 -> n=10, P(X<=2) = (1 + 10 + 45)/1024, doubled = 112/1024.
# only_a=0, only_b=5 -> 2/32. only_a=3, only_b=3 -> 1. only_a=0, only_b=0 -> 1 (no discordance).
@pytest.mark.parametrize(("only_a", "only_b", "expected"), [
    (1, 7, 18 / 256),
    (7, 1, 18 / 256),
    (2, 8, 112 / 1024),
    (0, 5, 2 / 32),
    (3, 3, 1.0),
    (0, 0, 1.0),
    (0, 1, 1.0),
])
def test_mcnemar_hand_worked(only_a: int, only_b: int, expected: float) -> None:
    assert mcnemar_exact(only_a, only_b) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("only_a", "only_b"), [(4, 13), (20, 31), (9, 0), (50, 52)])
def test_mcnemar_matches_binomial_table(only_a: int, only_b: int) -> None:
    assert mcnemar_exact(only_a, only_b) == pytest.approx(
        _binom_two_sided(only_a, only_a + only_b), rel=1e-9)


def test_agreement_table_counts_and_flips() -> None:
    ids = ["q1", "q2", "q3", "q4", "q5", "q6"]
    right_a = [True, True, False, False, True, False]
    right_b = [True, False, True, False, False, False]
    table = agreement("presence", ids, right_a, right_b)
    assert (table.both_right, table.only_a, table.only_b, table.both_wrong) == (1, 2, 1, 2)
    assert table.only_a_ids == ("q2", "q5")
    assert table.only_b_ids == ("q3",)
    assert table.total == 6
    assert table.p_value == pytest.approx(1.0)  # 2 vs 1 discordant: 2 * P(X <= 1 | n=3) > 1


def test_resample_counts_are_draws_with_replacement() -> None:
    counts = resample_counts(np.random.default_rng(3), 500, 40)
    assert counts.shape == (500, 40)
    assert np.all(counts.sum(axis=1) == 40)
    # Each item is drawn Binomial(40, 1/40) times: mean 1, variance 39/40.
    assert counts.mean() == pytest.approx(1.0, abs=1e-12)
    assert counts.var() == pytest.approx(39 / 40, rel=0.05)


def _effect_data(rng: np.random.Generator, n: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Paired per-query IoUs: shared query difficulty, B better by ``delta`` on average."""
    difficulty = rng.uniform(0.2, 0.8, n)
    a = np.clip(difficulty + rng.normal(0, 0.1, n), 0, 1)
    b = np.clip(difficulty + delta + rng.normal(0, 0.1, n), 0, 1)
    return a, b


def test_bootstrap_ci_covers_true_difference_at_nominal_rate() -> None:
    # The true difference of population means: estimate it on a huge sample once.
    rng = np.random.default_rng(11)
    big_a, big_b = _effect_data(rng, 2_000_000, 0.05)
    true_delta = float(big_b.mean() - big_a.mean())
    covered = 0
    reps = 80
    for rep in range(reps):
        a, b = _effect_data(rng, 300, 0.05)
        cmp = compare_results(synthetic_result(a), synthetic_result(b), n_resamples=1000,
                              seed=rep)
        m = cmp.metric("seg", "positive_macro_miou")
        covered += m.ci_low <= true_delta <= m.ci_high
    assert 0.87 <= covered / reps <= 1.0


def test_bootstrap_ci_width_and_symmetry_match_paired_normal_theory() -> None:
    rng = np.random.default_rng(5)
    a, b = _effect_data(rng, 3000, 0.04)
    cmp = compare_results(synthetic_result(a), synthetic_result(b), n_resamples=2000, seed=1)
    m = cmp.metric("seg", "positive_macro_miou")
    d = b - a
    assert m.diff == pytest.approx(d.mean(), abs=1e-12)
    se = d.std(ddof=0) / math.sqrt(d.size)
    assert m.ci_high - m.ci_low == pytest.approx(2 * 1.959964 * se, rel=0.1)
    # The paired interval is much narrower than one ignoring the pairing.
    unpaired_se = math.sqrt(a.var() / a.size + b.var() / b.size)
    assert m.ci_high - m.ci_low < 2 * 1.96 * unpaired_se * 0.6
    left, right = m.diff - m.ci_low, m.ci_high - m.diff
    assert abs(left - right) < 0.15 * (m.ci_high - m.ci_low)
    assert m.ci_low > 0  # a real effect of 0.04 at N = 3000 is resolved
    assert m.n_valid == 2000


def test_zero_difference_gives_degenerate_interval_and_no_discordance() -> None:
    rng = np.random.default_rng(2)
    iou = rng.uniform(0, 1, 200)
    present = rng.uniform(0, 1, 200) < 0.5
    negative = np.arange(200) % 3 == 0
    res = synthetic_result(iou, present, negative)
    cmp = compare_results(res, res, n_resamples=1000, seed=0)
    for m in cmp.metrics:
        assert m.diff == 0
        # Exact up to BLAS summation order across columns.
        assert m.ci_low == pytest.approx(0.0, abs=1e-12)
        assert m.ci_high == pytest.approx(0.0, abs=1e-12)
    pres = cmp.agreements[0]
    assert pres.name == "presence"
    assert (pres.only_a, pres.only_b, pres.p_value) == (0, 0, 1.0)
    assert all(d.diff == 0 for d in cmp.query_diffs["seg"])


def test_seeded_determinism() -> None:
    rng = np.random.default_rng(9)
    a, b = _effect_data(rng, 500, 0.02)
    ra, rb = synthetic_result(a), synthetic_result(b)
    first = compare_results(ra, rb, n_resamples=1000, seed=42)
    again = compare_results(ra, rb, n_resamples=1000, seed=42)
    other = compare_results(ra, rb, n_resamples=1000, seed=43)
    assert first.metrics == again.metrics
    assert first.metrics != other.metrics


def test_paired_bootstrap_is_chunk_independent_of_resample_count() -> None:
    # The first 128 resamples do not depend on how many follow (chunked generation).
    rng = np.random.default_rng(4)
    x_a = rng.uniform(0, 1, (50, 1))
    x_b = rng.uniform(0, 1, (50, 1))

    def mean(s: np.ndarray) -> np.ndarray:
        return s[:, 0] / 50

    short = paired_bootstrap(x_a, x_b, mean, 128, seed=3)
    long = paired_bootstrap(x_a, x_b, mean, 1000, seed=3)
    np.testing.assert_array_equal(short, long[:128])
    # Brute force: resample indices, then mean of B - A over the drawn queries.
    idx = np.random.default_rng(3).integers(0, 50, size=(128, 50))
    np.testing.assert_allclose(short, (x_b[idx, 0] - x_a[idx, 0]).mean(axis=1), atol=1e-12)


def test_mcc_undefined_resamples_are_excluded() -> None:
    # B predicts "present" for everything: its MCC is undefined on every resample.
    negative = np.arange(60) % 2 == 0
    a = synthetic_result(np.full(60, 0.5), ~negative, negative)
    b = synthetic_result(np.full(60, 0.5), np.ones(60, dtype=bool), negative)
    m = compare_results(a, b, n_resamples=1000).metric("presence", "mcc")
    assert m.a == pytest.approx(1.0)
    assert m.b is None
    assert (m.diff, m.ci_low, m.ci_high, m.n_valid) == (None, None, None, 0)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    data = build_dataset(tmp_path_factory.mktemp("cmp"))
    out = {}
    for task in ("vocabulary", "referring", "reasoning"):
        pair = []
        for pred in (data.pred_a, data.pred_b):
            samples = load_samples(data.gt, pred, task, modalities=ALL)
            pair.append(evaluate_samples(samples, 0.5))
        out[task] = (pair[0], pair[1])
    return out


@pytest.mark.parametrize("task", ["vocabulary", "referring", "reasoning"])
def test_reducers_reproduce_evaluator_summary(results: dict[str, tuple[Any, Any]],
                                              task: str) -> None:
    for res in results[task]:
        recomputed = recompute_key_metrics(res)
        assert len(recomputed) == (13 if task == "vocabulary" else 12)
        for (modality, metric), value in recomputed.items():
            expected = res["summary"][modality][metric]
            assert value == pytest.approx(expected, abs=1e-12), (modality, metric)


def test_compare_on_evaluated_fixture(results: dict[str, tuple[Any, Any]]) -> None:
    a, b = results["vocabulary"]
    cmp = compare_results(a, b, n_resamples=1000, seed=0)
    m = cmp.metric("seg", "positive_macro_miou")
    assert m.diff == pytest.approx(b["summary"]["seg"]["positive_macro_miou"]
                                   - a["summary"]["seg"]["positive_macro_miou"])
    assert m.ci_low <= m.diff <= m.ci_high
    pres = cmp.agreements[0]
    rows = zip(a["per_sample"], b["per_sample"], strict=True)
    right = [(ra["pred_present"] == ra["gt_present"], rb["pred_present"] == rb["gt_present"])
             for ra, rb in rows]
    assert pres.only_a == sum(x and not y for x, y in right)
    assert pres.only_b == sum(y and not x for x, y in right)
    assert pres.total == len(a["per_sample"]) == 24
    assert cmp.presence_a == {k: a["summary"]["presence"][k] for k in ("tp", "fp", "tn", "fn")}
    diffs = cmp.query_diffs["seg"]
    assert [d.diff for d in diffs] == sorted(d.diff for d in diffs)
    by_id = {r["sample_id"]: r for r in b["per_sample"]}
    for d in diffs:
        assert d.b == by_id[d.sample_id]["seg"]["iou"]
    seg_cats = {c.category: c.values["Segmentation mIoU"] for c in cmp.categories}
    cat_a = {c["category"]: c["seg"]["miou"] for c in a["per_category"]}
    cat_b = {c["category"]: c["seg"]["miou"] for c in b["per_category"]}
    for name, (va, vb, dv) in seg_cats.items():
        assert (va, vb) == (cat_a[name], cat_b[name])
        assert dv == pytest.approx(vb - va)


def test_incomparable_results_are_rejected(results: dict[str, tuple[Any, Any]]) -> None:
    a, _ = results["vocabulary"]
    _, b = results["referring"]
    with pytest.raises(OVEarthInputError, match="task"):
        compare_results(a, b)
    other = dict(a, config=dict(a["config"], iou_threshold=0.7))
    with pytest.raises(OVEarthInputError, match="iou_threshold"):
        compare_results(a, other)


def test_compare_speed_scales_with_vectorised_resampling() -> None:
    # 3,000 queries x 1,000 resamples must not need a Python loop per resample:
    # count Python-level reducer calls instead of timing.
    rng = np.random.default_rng(0)
    a, b = _effect_data(rng, 3000, 0.01)
    calls = []

    def mean(s: np.ndarray) -> np.ndarray:
        calls.append(s.shape[0])
        return s[:, 0] / 3000

    paired_bootstrap(a[:, None], b[:, None], mean, 1000, seed=0)
    assert sum(calls) == 2000 and len(calls) <= 2 * math.ceil(1000 / 100)
