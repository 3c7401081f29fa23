"""Thresholded maximum-cardinality one-to-one matching of boxes.

Among all matchings that pair the most GT/prediction couples with IoU >= t,
take the one with the largest total IoU (the rule TrackEval uses): solve a
linear assignment on ``(iou >= t) * (big + iou)`` and keep the valid pairs
(invalid pairs weigh 0, so their IoU cannot sway the choice).
"""

from __future__ import annotations

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
    # Imported on first use: scipy.optimize takes ~0.3 s to import, a third of a CLI run
    # that never needs it (masks only, or no box shared between candidate pairs).
    from scipy.optimize import linear_sum_assignment

    # Every valid pair outweighs the summed IoU of any matching (at most min(G, P) <= 1 each).
    big = float(min(rows.size, cols.size) + 1)
    r, c = linear_sum_assignment(np.where(sub_valid, big + sub_iou, 0.0), maximize=True)
    keep = sub_valid[r, c]
    return rows[r[keep]], cols[c[keep]]
