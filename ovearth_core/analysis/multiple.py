"""Tests made many at once: the paired-bootstrap p-value and the corrections for
multiplicity (issue 37), one place for the Leaderboard, Compare and Slices.

* :func:`bootstrap_p`: two-sided p-value of a paired bootstrap distribution of differences.
* :func:`holm`: Holm's step-down correction (family-wise error), for a few tests whose any
  false positive matters (each submission against the leader, Compare's McNemar tests):
  numpy, equal to statsmodels' (whose Holm calls ``gc.collect()``, see there).
* :func:`benjamini_hochberg`: Benjamini-Hochberg q-values (false discovery rate), for
  tables of many tests (categories, slices): statsmodels' ``multipletests`` (imported on
  first use: ~0.9 s).
* :func:`resolved_resamples` and :func:`resolution_note`: a bootstrap p-value is at least
  ``2 / (1 + n)``, and Holm's and Benjamini-Hochberg's corrections multiply the smallest
  p-value of ``m`` tests by ``m``: with 1,000 resamples and 36 tests, no test could ever pass
  at 0.05 (issue 46 §4). A p-value's resolution must allow its correction, so the resamples
  are chosen from ``m`` and ``alpha``, within :data:`~ovearth_core.bounds.MAX_RESAMPLES`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..bounds import MAX_RESAMPLES
from ..options import ALPHA as DEFAULT_ALPHA

# The smallest bootstrap p-value, times the correction's factor m, is at most alpha / 2: a
# test whose difference keeps its sign in every resample but one still passes.
RESOLUTION_MARGIN = 2


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


def needed_resamples(n_tests: int, alpha: float) -> int:
    """The fewest resamples whose smallest p-value ``2 / (1 + n)``, times ``n_tests`` (the
    factor Holm and Benjamini-Hochberg give the smallest p-value), is at most ``alpha /``
    :data:`RESOLUTION_MARGIN` (0 without a test).

    >>> needed_resamples(36, 0.05)  # 2 / 2,880 * 36 = 0.025
    2879
    """
    if n_tests < 1:
        return 0
    return math.ceil(2 * RESOLUTION_MARGIN * n_tests / alpha) - 1


def resolved_resamples(asked: int, n_tests: int, alpha: float) -> int:
    """The resamples to draw: ``asked``, or more when :func:`needed_resamples` asks for
    more, at most :data:`~ovearth_core.bounds.MAX_RESAMPLES`."""
    return min(MAX_RESAMPLES, max(asked, needed_resamples(n_tests, alpha)))


def resolution_note(asked: int, used: int, n_tests: int, alpha: float,
                    correction: str) -> str | None:
    """What :func:`resolved_resamples` did and why (``None`` when it drew ``asked``):
    more resamples than asked, or the cap, and whether any test can pass ``correction``
    at ``alpha`` then.

    >>> resolution_note(1000, 2879, 36, 0.05, "Holm's correction")[:60]
    "2,879 resamples drawn (1,000 asked): Holm's correction over "
    """
    needed = needed_resamples(n_tests, alpha)
    if used == asked and needed <= used:
        return None
    why = (f"{correction} over {n_tests:,} tests at α = {alpha:g} multiplies the smallest "
           f"p-value by {n_tests:,}, and a bootstrap p-value is at least 2 / (1 + "
           "resamples)")
    if needed <= used:
        return f"{used:,} resamples drawn ({asked:,} asked): {why}."
    floor = 2 / (1 + used) * n_tests
    verdict = ("no test can pass; the groups are not corrected for the many comparisons"
               if floor > alpha else "a test passes only if its difference keeps its sign "
               "in nearly every resample")
    return (f"{used:,} resamples drawn ({asked:,} asked; {needed:,} needed, above the cap of "
            f"{MAX_RESAMPLES:,} resamples): {why}, here at least {floor:.2g}: {verdict}.")
