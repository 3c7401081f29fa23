"""Matching from sparse candidate pairs (issue 35, item 4): ``match_pairs`` gives the dense
:func:`~ovearth_core.matching.match`'s optimum (most pairs, then largest total IoU) from the
overlapping pairs alone, one connected component of the candidate graph at a time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core import matching
from ovearth_core.matching import match, match_pairs


def _sparse(iou: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gi, pi = np.nonzero(iou > 0)
    return gi, pi, iou[gi, pi]


def _check(iou: np.ndarray, threshold: float, exact: bool, **kw) -> None:
    dg, dp = match(iou, threshold)
    sg, sp = match_pairs(*_sparse(iou), threshold, **kw)
    assert len(sg) == len(dg)
    assert len(set(sg.tolist())) == len(sg) and len(set(sp.tolist())) == len(sp)
    assert np.all(iou[sg, sp] >= threshold)
    assert float(iou[sg, sp].sum()) == pytest.approx(float(iou[dg, dp].sum()), abs=1e-9)
    assert sg.tolist() == sorted(sg.tolist())
    if exact:  # distinct weights: the optimum is unique
        assert (sg.tolist(), sp.tolist()) == (dg.tolist(), dp.tolist())


@st.composite
def sparse_ious(draw: st.DrawFn, distinct: bool) -> np.ndarray:
    g, p = draw(st.integers(0, 14)), draw(st.integers(0, 14))
    density = draw(st.sampled_from([0.05, 0.15, 0.3, 0.7]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = (rng.random((g, p)) if distinct
              else rng.choice([0.2, 0.5, 0.55, 0.6, 0.75, 0.9, 1.0], (g, p)))
    return np.where(rng.random((g, p)) < density, values, 0.0)


@given(sparse_ious(distinct=True), st.sampled_from([0.3, 0.5, 0.75]))
@settings(deadline=None, max_examples=300)
def test_pairs_equal_the_dense_matching(iou: np.ndarray, threshold: float) -> None:
    _check(iou, threshold, exact=True)


@given(sparse_ious(distinct=False), st.sampled_from([0.5, 0.55, 0.75]))
@settings(deadline=None, max_examples=300)
def test_pairs_reach_the_dense_optimum_with_ties(iou: np.ndarray, threshold: float) -> None:
    _check(iou, threshold, exact=False)


@given(sparse_ious(distinct=False), st.sampled_from([0.5, 0.75]))
@settings(deadline=None, max_examples=200)
def test_large_components_through_the_sparse_solver(iou: np.ndarray, threshold: float
                                                    ) -> None:
    # Every component over one cell goes to scipy's sparse min-weight full matching.
    _check(iou, threshold, exact=False, dense_cells=1)


def test_chain_of_thousands_is_one_sparse_component() -> None:
    # 4,000 packed boxes, each reaching its own GT box and the next: one component of
    # 8,000 nodes, whose dense block would hold 16 million cells.
    n = 4000
    gi = np.concatenate([np.arange(n), np.arange(n - 1)])
    pi = np.concatenate([np.arange(n), np.arange(1, n)])
    iou = np.concatenate([np.full(n, 0.8), np.full(n - 1, 0.6)])
    g, p = match_pairs(gi, pi, iou, 0.5)
    assert g.tolist() == list(range(n)) and p.tolist() == list(range(n))


def test_no_pairs() -> None:
    none = np.zeros(0, dtype=np.intp)
    g, p = match_pairs(none, none, np.zeros(0), 0.5)
    assert g.size == p.size == 0
    assert matching.match_pairs(np.array([0]), np.array([0]), np.array([0.4]), 0.5)[0].size == 0


@given(sparse_ious(distinct=True), st.sampled_from([0.3, 0.5]))
@settings(deadline=None, max_examples=200)
def test_sparse_solver_equals_the_dense_matching(iou: np.ndarray, threshold: float) -> None:
    _check(iou, threshold, exact=True, dense_cells=1)
