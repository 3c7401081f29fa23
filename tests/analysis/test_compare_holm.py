"""Compare's McNemar tests are several at once (presence, each modality's hits): their
Holm-corrected p-values equal statsmodels' ``multipletests`` on the exact p-values, and each
exact p-value is scipy's binomial test on the discordant counts (issue 37)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from ovearth_core.analysis.compare import compare_results
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
MODS = ("segmentation", "bbox", "oriented_bbox")


def _result(persona: str) -> dict:
    return evaluate_samples(load_samples(DEMO / "ground_truth.json",
                                         DEMO / "predictions" / f"{persona}.json",
                                         "vocabulary", modalities=MODS), 0.5)


def test_mcnemar_p_values_are_holm_corrected_over_the_table() -> None:
    cmp = compare_results(_result("strong_localiser"), _result("weak_baseline"),
                          n_resamples=200)
    assert len(cmp.agreements) == 4  # presence, masks, HBB and OBB hits
    exact = [binomtest(ag.only_a, ag.only_a + ag.only_b, 0.5).pvalue
             if ag.only_a + ag.only_b else 1.0 for ag in cmp.agreements]
    assert [ag.p_value for ag in cmp.agreements] == pytest.approx(exact)
    assert [ag.p_holm for ag in cmp.agreements] == pytest.approx(
        multipletests(exact, method="holm")[1].tolist())
    assert any(ag.p_holm > ag.p_value for ag in cmp.agreements)  # the correction bites
