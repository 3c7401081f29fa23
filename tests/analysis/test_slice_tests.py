"""Paired slice tables carry tests (issue 37): each slice of at least ``min_count`` queries
gets the paired-bootstrap p-value of B - A, computed here by brute force (each drawn query
row repeated, the evaluator's rows summed again), and the Benjamini-Hochberg q-values over
the slices tested equal statsmodels' ``multipletests`` on those p-values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from ovearth_core.analysis import additive, slices
from ovearth_core.analysis.compare import resample_counts
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
MODS = ("segmentation", "bbox", "oriented_bbox")


def _load(persona: str) -> tuple[Any, dict[str, Any]]:
    samples = load_samples(DEMO / "ground_truth.json", DEMO / "predictions" / f"{persona}.json",
                           "vocabulary", modalities=MODS)
    return samples, evaluate_samples(samples, 0.5)


def _value(name: str, rows: list[dict[str, Any]]) -> float:
    spec = additive.METRICS[name]
    return float(spec.value(spec.matrix(rows).sum(axis=0))) if rows else float("nan")


@pytest.mark.parametrize("min_count", [1, 12])
def test_slice_p_and_q_values_equal_a_brute_force_and_statsmodels(min_count: int) -> None:
    samples, a = _load("strong_localiser")
    _, b = _load("weak_baseline")
    n, seed = 60, 4  # enough resamples for p-values of several sizes; each is brute-forced below
    table = slices.slice_table(a, samples, "category", result_b=b, n_resamples=n, seed=seed,
                               min_count=min_count)
    assert table.min_count == min_count
    rng = np.random.default_rng(seed)
    rows_a, rows_b = a["per_sample"], b["per_sample"]
    p_of: dict[str, list[float | None]] = {}
    for v in table.values:
        idx = [i for i, s in enumerate(samples) if s.category == v.value]
        counts = resample_counts(rng, n, len(idx))  # unit: query, drawn slice by slice
        for m in v.metrics:
            diffs = np.array([
                _value(m.name, [rows_b[idx[j]] for j, c in enumerate(row) for _ in range(int(c))])
                - _value(m.name, [rows_a[idx[j]] for j, c in enumerate(row) for _ in range(int(c))])
                for row in counts])
            valid = diffs[np.isfinite(diffs)]
            if len(idx) < min_count or m.diff is None or valid.size == 0:
                assert m.p_value is None and m.q_value is None
                p_of.setdefault(m.name, []).append(None)
                continue
            k = min((valid <= 0).sum(), (valid >= 0).sum())
            assert m.p_value == pytest.approx(min(1.0, 2 * (1 + k) / (1 + valid.size)))
            p_of.setdefault(m.name, []).append(m.p_value)
    for name, ps in p_of.items():
        tested = [p for p in ps if p is not None]
        q = [m.q_value for v in table.values for m in v.metrics
             if m.name == name and m.q_value is not None]
        assert len(q) == len(tested)
        if tested:
            assert q == pytest.approx(multipletests(tested, method="fdr_bh")[1].tolist())
    # the minimum count bites: some slice is left untested for having too few queries
    assert any(v.num_queries < min_count for v in table.values) == (min_count > 1)


def test_unpaired_tables_have_no_tests() -> None:
    samples, a = _load("strong_localiser")
    table = slices.slice_table(a, samples, "category", n_resamples=100)
    assert all(m.p_value is None and m.q_value is None for v in table.values for m in v.metrics)
    doc = slices.table_to_dict(table)
    assert "q_value" not in doc["values"][0]["metrics"][0]
