"""Every ratio-shaped formula of the project, once: safe division, F1 and MCC.

Scalar forms take counts (or sums) and return ``float`` or ``None`` when the denominator is
zero, which the output JSON writes as null (the spec: "every metric with a zero denominator
is null"). Vectorised forms (``*_array``) take broadcastable arrays, typically column sums of
bootstrap resamples or category subsets, and return float64 arrays with ``nan`` there.

>>> ratio(1, 4), ratio(3, 0)
(0.25, None)
>>> f1_score(tp=2, fp=1, fn=1), f1_from_pr(0.0, 0.0)
(0.6666666666666666, 0.0)
>>> mcc(tp=5, fp=0, tn=5, fn=0), mcc(tp=5, fp=5, tn=0, fn=0) is None
(1.0, True)
>>> ratio_array([1.0, 3.0], [4.0, 0.0]).tolist()
[0.25, nan]
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or ``None`` when ``den == 0``."""
    return None if den == 0 else num / den


def ratio_array(num: npt.ArrayLike, den: npt.ArrayLike) -> FloatArray:
    """Element-wise ``num / den`` with ``nan`` where ``den == 0`` (no warning)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, np.nan, num / np.where(den == 0, 1.0, den))


def f1_score(tp: float, fp: float, fn: float) -> float | None:
    """``2TP / (2TP + FP + FN)`` (detection F1 from counts); ``None`` if all are 0."""
    return ratio(2 * tp, 2 * tp + fp + fn)


def f1_array(tp: npt.ArrayLike, fp: npt.ArrayLike, fn: npt.ArrayLike) -> FloatArray:
    """Vectorised :func:`f1_score`."""
    tp = np.asarray(tp, dtype=np.float64)
    return ratio_array(2 * tp, 2 * tp + np.asarray(fp) + np.asarray(fn))


def f1_from_pr(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean of precision and recall, the spec's presence F1.

    ``None`` when either is undefined; 0 when both are 0 (TP = 0 with predictions and
    positives: the limit of ``2TP / (2TP + FP + FN)``).
    """
    if precision is None or recall is None:
        return None
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def f1_from_pr_array(precision: npt.ArrayLike, recall: npt.ArrayLike) -> FloatArray:
    """Vectorised :func:`f1_from_pr` (``nan`` where either is ``nan``)."""
    p = np.asarray(precision, dtype=np.float64)
    r = np.asarray(recall, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p + r == 0, 0.0, 2 * p * r / (p + r))


def mcc(tp: int, fp: int, tn: int, fn: int) -> float | None:
    """Matthews correlation coefficient of a 2 x 2 table; ``None`` when a margin is empty.

    Exact for integer counts (the product under the root is a Python int).
    """
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return None if den == 0 else (tp * tn - fp * fn) / math.sqrt(den)


def mcc_array(tp: npt.ArrayLike, fp: npt.ArrayLike, tn: npt.ArrayLike,
              fn: npt.ArrayLike) -> FloatArray:
    """Vectorised :func:`mcc` (``nan`` where a margin is empty)."""
    tp, fp, tn, fn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, tn, fn))
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return ratio_array(tp * tn - fp * fn, np.sqrt(den))
