"""ovearth_core.formulas against definitions written independently here.

MCC is checked as sklearn's ``matthews_corrcoef`` defines it, the Pearson correlation of the
true and predicted 0/1 label vectors (built from the counts, then ``numpy.corrcoef``); F1 as
sklearn's ``f1_score`` with ``zero_division=nan``: the harmonic mean of precision and recall
over the expanded label vectors. Spec: "Presence Metrics" (a zero denominator is null).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovearth_core import formulas

counts = st.integers(min_value=0, max_value=60)


def _labels(tp: int, fp: int, tn: int, fn: int) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.array([1] * tp + [0] * fp + [0] * tn + [1] * fn, dtype=np.int64)
    y_pred = np.array([1] * tp + [1] * fp + [0] * tn + [0] * fn, dtype=np.int64)
    return y_true, y_pred


def _pearson_mcc(tp: int, fp: int, tn: int, fn: int) -> float | None:
    y_true, y_pred = _labels(tp, fp, tn, fn)
    if y_true.size == 0 or y_true.std() == 0 or y_pred.std() == 0:
        return None
    return float(np.corrcoef(y_true, y_pred)[0, 1])


def _label_f1(tp: int, fp: int, fn: int) -> float | None:
    y_true, y_pred = _labels(tp, fp, 0, fn)
    hits = int((y_true & y_pred).sum())
    if y_pred.sum() == 0 and y_true.sum() == 0:
        return None
    precision = hits / y_pred.sum() if y_pred.sum() else 0.0
    recall = hits / y_true.sum() if y_true.sum() else 0.0
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@given(counts, counts, counts, counts)
def test_mcc_is_the_correlation_of_the_label_vectors(tp: int, fp: int, tn: int, fn: int) -> None:
    want = _pearson_mcc(tp, fp, tn, fn)
    got = formulas.mcc(tp, fp, tn, fn)
    vec = float(formulas.mcc_array([tp], [fp], [tn], [fn])[0])
    if want is None:
        assert got is None and math.isnan(vec)
    else:
        assert got == pytest.approx(want, abs=1e-12)
        assert vec == pytest.approx(want, abs=1e-12)


@given(counts, counts, counts)
def test_f1_from_counts_is_the_harmonic_mean_of_label_precision_and_recall(
        tp: int, fp: int, fn: int) -> None:
    want = _label_f1(tp, fp, fn)
    got = formulas.f1_score(tp, fp, fn)
    vec = float(formulas.f1_array(tp, fp, fn))
    if want is None:
        assert got is None and math.isnan(vec)
    else:
        assert got == pytest.approx(want, abs=1e-12)
        assert vec == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize(("precision", "recall", "want"), [
    (None, 0.5, None), (0.5, None, None), (0.0, 0.0, 0.0), (1.0, 0.5, 2 / 3), (0.25, 0.25, 0.25),
])
def test_f1_from_precision_and_recall_corner_table(precision: float | None,
                                                   recall: float | None,
                                                   want: float | None) -> None:
    got = formulas.f1_from_pr(precision, recall)
    assert got == (None if want is None else pytest.approx(want))
    if want is not None:
        assert float(formulas.f1_from_pr_array(precision, recall)) == pytest.approx(want)


@pytest.mark.parametrize(("num", "den", "want"), [(1, 4, 0.25), (0, 5, 0.0), (3, 0, None),
                                                  (0, 0, None), (-2, 4, -0.5)])
def test_ratio_corner_table(num: float, den: float, want: float | None) -> None:
    assert formulas.ratio(num, den) == want
    vec = float(formulas.ratio_array(num, den))
    assert (math.isnan(vec) if want is None else vec == want)


def test_vectorised_forms_broadcast_without_warnings() -> None:
    with np.errstate(all="raise"):
        out = formulas.ratio_array(np.array([[1.0], [2.0]]), np.array([0.0, 2.0, 4.0]))
        assert out.shape == (2, 3)
        assert np.isnan(out[:, 0]).all() and out[1, 2] == 0.5
        assert np.isnan(formulas.mcc_array([0, 3], [0, 1], [0, 2], [0, 0])[0])
