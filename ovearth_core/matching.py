"""Thresholded maximum-cardinality one-to-one matching of boxes.

Among all matchings that pair the most GT/prediction couples with IoU >= t,
take the one with the largest total IoU (the rule TrackEval uses): solve a
linear assignment on ``big * (iou >= t) + iou`` and keep the valid pairs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

IntArray = npt.NDArray[np.intp]


def match(iou: npt.NDArray[np.float64], threshold: float) -> tuple[IntArray, IntArray]:
    """Return ``(gt_indices, pred_indices)`` of the matched pairs, sorted by GT index.

    Args:
        iou: ``(G, P)`` IoU matrix.
        threshold: pairs need ``iou >= threshold``.
    """
    valid = iou >= threshold
    if not valid.any():
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    rows = np.flatnonzero(valid.any(axis=1))
    cols = np.flatnonzero(valid.any(axis=0))
    if rows.size == 1 or cols.size == 1:
        # One candidate row or column: the best valid IoU is the optimum.
        sub = np.where(valid[np.ix_(rows, cols)], iou[np.ix_(rows, cols)], -1.0)
        r, c = np.unravel_index(int(np.argmax(sub)), sub.shape)
        return rows[[r]], cols[[c]]
    sub_valid = valid[np.ix_(rows, cols)]
    # Every valid pair outweighs the summed IoU of any matching (at most min(G, P) <= 1 each).
    big = float(min(rows.size, cols.size) + 1)
    weight = big * sub_valid + iou[np.ix_(rows, cols)]
    r, c = linear_sum_assignment(weight, maximize=True)
    keep = sub_valid[r, c]
    return rows[r[keep]], cols[c[keep]]
