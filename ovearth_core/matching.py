"""Thresholded maximum-cardinality one-to-one matching of boxes.

Among all matchings that pair the most GT/prediction couples with IoU >= t,
take the one with the largest total IoU (the rule TrackEval uses): solve a
linear assignment on ``(iou >= t) * (big + iou)`` and keep the valid pairs
(invalid pairs weigh 0, so their IoU cannot sway the choice).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .errors import OVEarthInputError, Problem

if TYPE_CHECKING:  # a type only: matching stays free of pycocotools (types -> masks)
    from .types import Sample

IntArray = npt.NDArray[np.intp]
# At most this many GT x predicted box pairs in one query and modality: beyond it one
# query's IoU matrix alone (8 bytes a pair, with its temporaries) would take gigabytes.
# The reference toolkit has no cap (README, "Command line": the input rules).
MAX_PAIRS_PER_QUERY = 50_000_000
_BOX_FIELDS = {"bbox": ("gt_boxes", "pred_boxes"), "oriented_bbox": ("gt_obbs", "pred_obbs")}


def check_pair_cap(samples: Sequence[Sample], modalities: Sequence[str], file: str) -> None:
    """Refuse queries with more than :data:`MAX_PAIRS_PER_QUERY` GT x predicted box pairs in
    an enabled box modality, before any IoU matrix is allocated.

    Raises:
        OVEarthInputError: one problem per such query and modality, naming ``file``, the
        query_id, the counts and the cap.
    """
    cap = MAX_PAIRS_PER_QUERY
    problems = []
    for modality in (m for m in _BOX_FIELDS if m in modalities):
        gt_field, pred_field = _BOX_FIELDS[modality]
        for s in samples:
            n_gt, n_pred = len(getattr(s, gt_field)), len(getattr(s, pred_field))
            if n_gt * n_pred > cap:
                problems.append(Problem(
                    file, modality,
                    f"at most {cap:,} GT x predicted box pairs in one query (the evaluator's "
                    "cap MAX_PAIRS_PER_QUERY)",
                    f"{n_gt:,} GT boxes x {n_pred:,} predicted boxes = {n_gt * n_pred:,} pairs",
                    s.sample_id))
    if problems:
        raise OVEarthInputError(problems)


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
