"""Thresholded maximum-cardinality one-to-one matching of boxes.

Among all matchings that pair the most GT/prediction couples with IoU >= t,
take the one with the largest total IoU (the rule TrackEval uses): solve a
linear assignment on ``(iou >= t) * (big + iou)`` and keep the valid pairs
(invalid pairs weigh 0, so their IoU cannot sway the choice).

:func:`match_pairs` gives the same optimum from the overlapping pairs alone (a sparse
``(gi, pi, iou)`` list, as object diagnosis of thousands of boxes or mask components
produces): one connected component of the candidate graph at a time, so work and memory
follow the pairs, never ``G x P``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.intp]


def match(iou: npt.NDArray[np.float64], threshold: float) -> tuple[IntArray, IntArray]:
    """Return ``(gt_indices, pred_indices)`` of the matched pairs, sorted by GT index.

    Args:
        iou: ``(G, P)`` IoU matrix.
        threshold: pairs need ``iou >= threshold``.
    """
    valid = iou >= threshold
    rows = np.flatnonzero(valid.any(axis=1))
    if rows.size == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    cols = np.flatnonzero(valid.any(axis=0))
    sub_valid = valid[rows][:, cols]
    if rows.size == cols.size == np.count_nonzero(sub_valid):
        # Each candidate row and column has exactly one valid pair: they all match.
        r, c = np.nonzero(sub_valid)
        return rows[r], cols[c]
    sub_iou = iou[rows][:, cols]
    if rows.size == 1 or cols.size == 1:
        # One candidate row or column: the best valid IoU is the optimum.
        r, c = np.unravel_index(int(np.argmax(np.where(sub_valid, sub_iou, -1.0))), sub_iou.shape)
        return rows[[r]], cols[[c]]
    # Every valid pair outweighs the summed IoU of any matching (at most min(G, P) <= 1 each).
    big = float(min(rows.size, cols.size) + 1)
    weights = np.where(sub_valid, big + sub_iou, 0.0)
    stars = _star_matching(sub_valid, weights)
    if stars is not None:
        return rows[stars[0]], cols[stars[1]]
    r, c = assignment_solver()(weights, maximize=True)
    keep = sub_valid[r, c]
    return rows[r[keep]], cols[c[keep]]


# A component of the candidate graph whose dense block has more cells than this is solved
# by scipy's sparse min-weight full matching instead (a block of this size is 8 MB).
DENSE_CELLS = 1 << 20


def match_pairs(gi: IntArray, pi: IntArray, iou: npt.NDArray[np.float64], threshold: float,
                dense_cells: int = DENSE_CELLS) -> tuple[IntArray, IntArray]:
    """:func:`match` of the sparse IoU matrix whose nonzero entries are ``iou[k]`` at
    ``(gi[k], pi[k])`` (absent pairs: IoU 0): ``(gt_indices, pred_indices)`` sorted by GT
    index, the most pairs with IoU >= ``threshold``, then the largest total IoU.

    The pairs reaching ``threshold`` form a bipartite graph; a matching never joins two of
    its connected components, so each is solved alone: a single row or column takes its
    best pair, a block of at most ``dense_cells`` cells goes to :func:`match`, a larger one
    to ``scipy.sparse.csgraph.min_weight_full_bipartite_matching`` (every GT node given a
    private dummy partner at a cost above any pair's, so that a full matching exists and
    the most real pairs win first). Ties between equal optima may be broken otherwise
    than by the dense matching.
    """
    ok = np.asarray(iou) >= threshold
    gi, pi, w = np.asarray(gi)[ok], np.asarray(pi)[ok], np.asarray(iou, dtype=float)[ok]
    empty = np.zeros(0, dtype=np.intp)
    if gi.size == 0:
        return empty, empty
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rows, r = np.unique(gi, return_inverse=True)
    cols, c = np.unique(pi, return_inverse=True)
    nr, nc = rows.size, cols.size
    graph = coo_matrix((np.ones(r.size, dtype=np.int8), (r, nr + c)), shape=(nr + nc,) * 2)
    k, label = connected_components(graph, directed=False)
    comp = label[r]
    n_rows = np.bincount(label[:nr], minlength=k)
    n_cols = np.bincount(label[nr:], minlength=k)
    star = (n_rows == 1) | (n_cols == 1)
    # A component with one row or one column: its best pair (first in row-major order on
    # ties, as the dense argmax).
    sel = np.flatnonzero(star[comp])
    order = sel[np.lexsort((c[sel], r[sel], -w[sel], comp[sel]))]
    first = order[np.r_[True, comp[order][1:] != comp[order][:-1]]] if order.size else order
    out_r, out_c = [r[first]], [c[first]]
    rest = np.flatnonzero(~star[comp])
    rest = rest[np.argsort(comp[rest], kind="stable")]
    bounds = np.flatnonzero(np.r_[True, comp[rest][1:] != comp[rest][:-1], True])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        at = rest[lo:hi]
        lr, br = np.unique(r[at], return_inverse=True)
        lc, bc = np.unique(c[at], return_inverse=True)
        if lr.size * lc.size <= dense_cells:
            block = np.zeros((lr.size, lc.size))
            block[br, bc] = w[at]
            mr, mc = match(block, threshold)
        else:
            mr, mc = _sparse_optimum(br, bc, w[at], lr.size, lc.size)
        out_r.append(lr[mr])
        out_c.append(lc[mc])
    mg, mp = rows[np.concatenate(out_r)], cols[np.concatenate(out_c)]
    order = np.argsort(mg, kind="stable")
    return mg[order].astype(np.intp), mp[order].astype(np.intp)


def _sparse_optimum(r: IntArray, c: IntArray, w: npt.NDArray[np.float64], nr: int, nc: int
                    ) -> tuple[IntArray, IntArray]:
    """Most pairs, then largest total ``w``, of a sparse bipartite graph (``nr`` rows,
    ``nc`` columns, every pair valid): min-weight full matching of the rows, each row also
    joined to a dummy column of its own whose cost exceeds any real pair's by more than
    the largest total weight."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    big = float(min(nr, nc) + 1)
    own = np.arange(nr)
    cost = np.concatenate([2.0 - w, np.full(nr, big + 2.0)])  # every cost >= 1: no zeros
    graph = csr_matrix((cost, (np.concatenate([r, own]), np.concatenate([c, nc + own]))),
                       shape=(nr, nc + nr))
    mr, mc = min_weight_full_bipartite_matching(graph)
    keep = mc < nc
    return mr[keep].astype(np.intp), mc[keep].astype(np.intp)


# Two weights closer than this are treated as a tie (left to the solver, whose choice among
# equal optima the results have always followed).
_TIE = 1e-9


def _star_matching(valid: npt.NDArray[np.bool_], weights: npt.NDArray[np.float64]
                   ) -> tuple[IntArray, IntArray] | None:
    """The optimum of ``weights`` when no column (or no row) has two valid pairs, else None.

    No prediction shared between valid pairs: every GT row with a valid pair takes its
    heaviest one (the rows do not compete), and that is the only optimum when each row's
    heaviest valid pair is heavier than its next by more than ``_TIE``; the same with rows
    and columns swapped. Ties are left to the solver (``None``): the matching it picks
    among equal optima is what the results have always been.
    """
    for axis in (0, 1):  # 0: columns with one valid pair each (stars around rows)
        if valid.sum(axis=axis).max() > 1:
            continue
        w = weights if axis == 0 else weights.T
        order = np.argsort(-w, axis=1, kind="stable")
        best = np.take_along_axis(w, order[:, :2], axis=1)
        if not bool((best[:, 0] - best[:, 1] > _TIE).all()):  # an invalid second weighs 0
            return None
        own = np.arange(w.shape[0])
        if axis == 0:
            return own, order[:, 0]
        rows = order[:, 0]
        sort = np.argsort(rows, kind="stable")
        return rows[sort], own[sort]
    return None


# ------------------------------------------------------------------ the assignment solver

_SOLVER: list[Callable[..., Any]] = []  # the solver, once imported (filled on first use)


def assignment_solver() -> Callable[..., Any]:
    """scipy's public ``scipy.optimize.linear_sum_assignment(cost, maximize)``, imported on
    first use: only a query whose candidate pairs share a box needs it, so a run without
    such a query never imports ``scipy.optimize`` (0.5-0.7 s on this machine). Public API
    only (issue 39): no module of scipy's own internals is loaded."""
    if not _SOLVER:
        from scipy.optimize import linear_sum_assignment  # import is thread-safe

        _SOLVER.append(linear_sum_assignment)
    return _SOLVER[0]


