"""ovearth_core.presence against hand-computed corner cases and the spec's formulas."""

from __future__ import annotations

import math

import pytest
import refs
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core.presence import presence_metrics

N = None

CASES = [
    # tp, fp, tn, fn -> precision, recall, f1, accuracy, fpr, mcc
    ((0, 0, 0, 0), (N, N, N, N, N, N)),
    ((3, 0, 0, 1), (1.0, 0.75, 6 / 7, 0.75, N, N)),
    ((0, 2, 3, 0), (0.0, N, N, 0.6, 0.4, N)),
    ((4, 0, 6, 0), (1.0, 1.0, 1.0, 1.0, 0.0, 1.0)),
    ((0, 6, 0, 4), (0.0, 0.0, 0.0, 0.0, 1.0, -1.0)),
    ((0, 0, 5, 3), (N, 0.0, N, 5 / 8, 0.0, N)),
    ((2, 3, 0, 0), (0.4, 1.0, 4 / 7, 0.4, 1.0, N)),
    ((72, 3, 17, 8), (0.96, 0.9, 1.728 / 1.86, 0.89, 0.15, 1200 / math.sqrt(3_000_000))),
    ((1, 1, 1, 1), (0.5, 0.5, 0.5, 0.5, 0.5, 0.0)),
]
IDS = ["all-zero", "no-negatives", "no-positives", "perfect", "inverted", "never-present",
       "always-present", "spec-counts", "chance"]


@pytest.mark.parametrize(("counts", "expected"), CASES, ids=IDS)
def test_presence_corner_cases(counts: tuple[int, int, int, int],
                               expected: tuple[float | None, ...]) -> None:
    """Spec "Presence Metrics": each metric is null when its denominator is zero; F1 is 0.0
    when P + R == 0 and null when P or R is null (project convention)."""
    got = presence_metrics(*counts)
    assert (got["tp"], got["fp"], got["tn"], got["fn"]) == counts
    for key, value in zip(("precision", "recall", "f1", "accuracy", "fpr", "mcc"), expected,
                          strict=True):
        if value is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(value, abs=1e-12), key
    assert got["key_metrics"] == {"mcc": got["mcc"]}


counts = st.integers(0, 10_000)


@given(counts, counts, counts, counts)
@settings(deadline=None)
def test_presence_against_formulas(tp: int, fp: int, tn: int, fn: int) -> None:
    """Spec "Presence Metrics" table, including MCC = (TP TN - FP FN) / sqrt(...)."""
    got = presence_metrics(tp, fp, tn, fn)
    expected = refs.presence_reference(tp, fp, tn, fn)
    for key, value in expected.items():
        if value is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
    if got["mcc"] is not None:
        assert -1.0 - 1e-12 <= got["mcc"] <= 1.0 + 1e-12
    if got["f1"] is not None:
        assert 0.0 <= got["f1"] <= 1.0


@given(counts, counts, counts, counts)
@settings(deadline=None)
def test_mcc_symmetries(tp: int, fp: int, tn: int, fn: int) -> None:
    """MCC is unchanged when the classes are swapped and flips sign when predictions are."""
    mcc = presence_metrics(tp, fp, tn, fn)["mcc"]
    swapped = presence_metrics(tn, fn, tp, fp)["mcc"]
    flipped = presence_metrics(fn, tn, fp, tp)["mcc"]
    if mcc is None:
        assert swapped is None and flipped is None
    else:
        assert swapped == pytest.approx(mcc, abs=1e-12)
        assert flipped == pytest.approx(-mcc, abs=1e-12)
