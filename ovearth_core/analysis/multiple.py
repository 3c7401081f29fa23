"""Tests made many at once: the paired-bootstrap p-value and the corrections for
multiplicity (issue 37), one place for the Leaderboard, Compare and Slices.

* :func:`bootstrap_p`: two-sided p-value of a paired bootstrap distribution of differences.
* :func:`holm`: Holm's step-down correction (family-wise error), for a few tests whose any
  false positive matters (each submission against the leader, Compare's McNemar tests):
  numpy, equal to statsmodels' (whose Holm calls ``gc.collect()``, see there).
* :func:`benjamini_hochberg`: Benjamini-Hochberg q-values (false discovery rate), for
  tables of many tests (categories, slices): statsmodels' ``multipletests`` (imported on
  first use: ~0.9 s).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..options import ALPHA as DEFAULT_ALPHA


def adjusted(p_values: Sequence[float | None], method: str, alpha: float = DEFAULT_ALPHA,
             ) -> list[float | None]:
    """``p_values`` corrected by ``statsmodels.stats.multitest.multipletests`` (``"holm"``
    or ``"fdr_bh"``, Benjamini-Hochberg's q-values) over the values given (``None``: not
    tested, kept ``None`` and not counted in the family)."""
    tested = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    if not tested:
        return out
    from statsmodels.stats.multitest import multipletests  # ~0.9 s: on first use

    _, corrected, _, _ = multipletests(np.array([p_values[i] for i in tested], dtype=float),
                                       alpha=alpha, method=method)
    for i, q in zip(tested, corrected, strict=True):
        out[i] = float(q)
    return out


def holm(p_values: Sequence[float | None], alpha: float = DEFAULT_ALPHA) -> list[float | None]:
    """Holm's step-down adjusted p-values (family-wise error at ``alpha``): the ``i``-th
    smallest of ``n`` times ``n - i`` (``i`` from 0), made non-decreasing in that order,
    at most 1 -- ``multipletests(p, method="holm")``'s numbers (tested equal), computed
    here because statsmodels' Holm branch calls ``gc.collect()`` on every call (0.9 s with
    49 evaluations in memory, measured in benchmarks/README.md). ``alpha`` is not needed for
    the adjusted values; kept for the signature of :func:`adjusted`.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    tested = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    p = np.array([p_values[i] for i in tested], dtype=float)
    order = np.argsort(p, kind="stable")
    steps = p[order] * (p.size - np.arange(p.size))
    corrected = np.empty(p.size)
    corrected[order] = np.minimum(1.0, np.maximum.accumulate(steps)) if p.size else steps
    for i, q in zip(tested, corrected, strict=True):
        out[i] = float(q)
    return out


def benjamini_hochberg(p_values: Sequence[float | None], alpha: float = DEFAULT_ALPHA,
                       ) -> list[float | None]:
    """Benjamini-Hochberg q-values (false discovery rate)."""
    return adjusted(p_values, "fdr_bh", alpha)


def bootstrap_p(dist: npt.NDArray[np.float64]) -> float | None:
    """Two-sided paired-bootstrap p-value of a distribution of differences (its finite
    values): ``min(1, 2 (1 + k) / (1 + n))``, ``k`` the fewer of the values ``<= 0`` and
    ``>= 0``; ``None`` without a finite value.

    >>> bootstrap_p(np.array([0.1, 0.2, 0.3, -0.1]))  # k = 1, n = 4: 2 * 2 / 5
    0.8
    """
    valid = dist[np.isfinite(dist)]
    if valid.size == 0:
        return None
    k = min(int((valid <= 0).sum()), int((valid >= 0).sum()))
    return float(min(1.0, 2.0 * (1 + k) / (1 + valid.size)))
