"""The object outcomes of one image's queries from their reduced overlaps (TIDE's kinds,
defined in :mod:`.objects`): shared by the boxes (:mod:`.objects`) and the masks' connected
components (:mod:`.mask_objects`), which both import it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..matching import match_pairs
from ..types import Sample

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BACKGROUND_IOU = 0.1  # TIDE's t_b
MATCHED = "matched"
PRED_OUTCOMES = (MATCHED, "localisation", "class confusion", "duplicate", "both",
                 "background")
GT_OUTCOMES = (MATCHED, "mislocalised", "found as other class", "missed")


@dataclass(frozen=True)
class QueryObjects:
    """Outcomes of one query's boxes in one box modality (arrays in box order), or of its
    mask components (``modality`` ``"segmentation"``, in column-major order; no score).

    Predicted boxes ``(P,)``: ``pred_outcome``; ``pred_score`` (``nan``: no score);
    ``pred_gt`` its matched GT box, else its best GT box of the query (``-1``: none) and
    ``pred_iou`` that IoU; ``pred_other_category`` / ``pred_other_iou``: its best GT box
    of another category on the image (``""`` / 0 when none overlaps).
    GT boxes ``(G,)``: ``gt_outcome``; ``gt_pred`` its matched predicted box, else its
    best predicted box of the query (``-1``), ``gt_iou`` that IoU; ``gt_near_query`` /
    ``gt_near_category`` / ``gt_near_index`` / ``gt_near_iou``: the nearest predicted box
    of the whole image (any query, so a missed small vehicle shows the "large vehicle" box
    on it).
    """

    index: int
    query_id: str
    category: str
    modality: str
    pred_outcome: tuple[str, ...]
    pred_score: FloatArray
    pred_gt: IntArray
    pred_iou: FloatArray
    pred_other_category: tuple[str, ...]
    pred_other_iou: FloatArray
    gt_outcome: tuple[str, ...]
    gt_pred: IntArray
    gt_iou: FloatArray
    gt_near_query: tuple[str, ...]
    gt_near_category: tuple[str, ...]
    gt_near_index: IntArray
    gt_near_iou: FloatArray

    def counts(self) -> dict[str, dict[str, int]]:
        """``{"predictions": {outcome: n}, "ground_truth": {outcome: n}}`` (zeros kept)."""
        return {"predictions": _count(self.pred_outcome, PRED_OUTCOMES),
                "ground_truth": _count(self.gt_outcome, GT_OUTCOMES)}


def _count(values: Sequence[str], names: Sequence[str]) -> dict[str, int]:
    c = Counter(values)
    return {n: c[n] for n in names}


@dataclass
class QueryOverlaps:
    """One query of an image, its IoU matrices reduced to what the outcomes need (the
    matrices themselves are dropped: memory follows one query's block, not the image)."""

    index: int
    sample: Sample
    n_gt: int
    scores: FloatArray
    owners: list[tuple[int, int]]  # pool row -> (query position in the image, GT index)
    matched_gt: IntArray  # (G,) matched pred or -1
    matched_pred: IntArray  # (P,) matched GT or -1
    own_best: FloatArray  # (P,) best IoU with a GT box of the query
    own_arg: IntArray  # (P,) that GT box (0 with none)
    pair_iou: FloatArray  # (P,) IoU with the matched GT box, else own_best
    gt_best: FloatArray  # (G,) best IoU with a box of the query
    gt_arg: IntArray  # (G,) that box (-1 with none)
    gt_pair_iou: FloatArray  # (G,) IoU with the matched box, else gt_best
    other_best: FloatArray  # (P,) best IoU with another category's GT box of the image
    other_arg: IntArray  # (P,) that pool row (0 with none)
    pool_best: FloatArray  # (O,) per pool row, best IoU with a box of this query
    pool_arg: IntArray  # (O,) that box
    owner_arr: IntArray  # (O, 2) ``owners`` as an array


Pairs = tuple[IntArray, IntArray, FloatArray]  # (rows, cols, iou) of overlapping pairs


def best_per(keys: IntArray, other: IntArray, iou: FloatArray, n: int
             ) -> tuple[FloatArray, IntArray]:
    """Per key ``0..n-1``: the largest ``iou`` of its pairs and its ``other`` (the smallest
    on ties; 0 and 0 for a key without pairs), as a dense matrix's max and argmax give."""
    best, arg = np.zeros(n), np.zeros(n, dtype=np.intp)
    if keys.size:
        order = np.lexsort((other, -iou, keys))
        first = order[np.r_[True, keys[order][1:] != keys[order][:-1]]]
        best[keys[first]], arg[keys[first]] = iou[first], other[first]
    return best, arg


def overlaps_of(index: int, sample: Sample, n_gt: int, n_pred: int, scores: FloatArray,
                own: Pairs, other: Pairs, owners: list[tuple[int, int]], t_f: float,
                matches: Sequence[Sequence[float]] | None) -> QueryOverlaps:
    """The reductions :func:`classify_image` needs, from sparse overlaps: ``own``, the
    query's overlapping (GT, predicted) pairs; ``other``, its predicted objects' overlaps
    with ``owners``' GT objects (the image's other-category queries', one pool row each).
    Work and memory follow the overlapping pairs, never ``G x P`` (issue 35)."""
    gi, pi, iou = own
    if matches is None or n_gt == 0:
        mg, mp = match_pairs(gi, pi, iou, t_f)
    else:
        mg = np.array([int(m[0]) for m in matches], dtype=np.intp)
        mp = np.array([int(m[1]) for m in matches], dtype=np.intp)
    matched_gt = np.full(n_gt, -1, dtype=np.intp)
    matched_pred = np.full(n_pred, -1, dtype=np.intp)
    matched_gt[mg], matched_pred[mp] = mp, mg
    own_best, own_arg = best_per(pi, gi, iou, n_pred)
    gt_best, gt_arg = best_per(gi, pi, iou, n_gt)
    pair_iou, gt_pair_iou = own_best.copy(), gt_best.copy()
    if mg.size:
        # the matched pairs' IoUs, looked up among the pairs (sorted by GT, then pred)
        code = gi.astype(np.int64) * max(n_pred, 1) + pi
        want = mg.astype(np.int64) * max(n_pred, 1) + mp
        pair_iou[mp] = gt_pair_iou[mg] = iou[np.searchsorted(code, want)]
    gt_arg = np.where(matched_gt >= 0, matched_gt, gt_arg if n_pred else -1)
    rows, cols, vals = other
    other_best, other_arg = best_per(cols, rows, vals, n_pred)
    pool_best, pool_arg = best_per(rows, cols, vals, len(owners))
    return QueryOverlaps(index, sample, n_gt, scores, owners, matched_gt, matched_pred,
                         own_best, own_arg, pair_iou, gt_best, gt_arg.astype(np.intp),
                         gt_pair_iou, other_best, other_arg, pool_best, pool_arg,
                         np.array(owners, dtype=np.intp).reshape(len(owners), 2))


def classify_image(queries: Sequence[QueryOverlaps], t_f: float, t_b: float, modality: str
                   ) -> list[QueryObjects]:
    """TIDE's kinds and the GT outcomes of one image's queries, from their reduced IoUs
    (boxes here, mask components in :mod:`.mask_objects`)."""
    explained: dict[tuple[int, int], str] = {}
    pred_kinds = []
    for pos, q in enumerate(queries):
        kinds = _pred_kinds(q, t_f, t_b)
        pred_kinds.append(kinds)
        for p, kind in enumerate(kinds):
            if kind == "localisation":
                g = int(q.own_arg[p])
                if q.matched_gt[g] < 0:
                    explained[(pos, g)] = "mislocalised"
            elif kind == "class confusion":
                owner = q.owners[int(q.other_arg[p])]
                if queries[owner[0]].matched_gt[owner[1]] < 0:
                    explained.setdefault(owner, "found as other class")
    return [_result(pos, q, queries, pred_kinds[pos], explained, modality)
            for pos, q in enumerate(queries)]


def _pred_kinds(q: QueryOverlaps, t_f: float, t_b: float) -> list[str]:
    kinds = []
    for p in range(len(q.matched_pred)):
        own, other = q.own_best[p], q.other_best[p]
        if q.matched_pred[p] >= 0:
            kinds.append(MATCHED)
        elif t_b <= own < t_f:
            kinds.append("localisation")
        elif other >= t_f:
            kinds.append("class confusion")
        elif own >= t_f:
            kinds.append("duplicate")
        elif max(own, other) < t_b:
            kinds.append("background")
        else:
            kinds.append("both")
    return kinds


def _result(pos: int, q: QueryOverlaps, queries: Sequence[QueryOverlaps], kinds: list[str],
            explained: dict[tuple[int, int], str], modality: str) -> QueryObjects:
    n_gt = q.n_gt
    pred_gt = np.where(q.matched_pred >= 0, q.matched_pred, q.own_arg if n_gt else -1)
    other_cat = tuple(queries[q.owners[o][0]].sample.category if v > 0 else ""
                      for o, v in zip(q.other_arg.tolist(), q.other_best.tolist(),
                                      strict=True))
    gt_outcome = tuple(MATCHED if q.matched_gt[g] >= 0 else explained.get((pos, g), "missed")
                       for g in range(n_gt))
    return QueryObjects(
        q.index, q.sample.sample_id, q.sample.category, modality, tuple(kinds), q.scores,
        pred_gt.astype(np.intp), q.pair_iou, other_cat, q.other_best, gt_outcome, q.gt_arg,
        q.gt_pair_iou, *_nearest(pos, q, queries))


def _nearest(pos: int, q: QueryOverlaps, queries: Sequence[QueryOverlaps]
             ) -> tuple[tuple[str, ...], tuple[str, ...], IntArray, FloatArray]:
    """For each GT box of query ``pos``: the predicted box of the image overlapping it most
    (its own query's boxes first on ties)."""
    best = q.gt_best.copy()
    idx = q.gt_arg.copy()
    who = np.full(q.n_gt, pos, dtype=np.intp)
    for other_pos, other in enumerate(queries):
        owner = other.owner_arr
        rows = np.flatnonzero(owner[:, 0] == pos)  # each GT box of ``pos`` once at most
        g, cand = owner[rows, 1], other.pool_best[rows]
        better = cand > best[g]
        best[g[better]] = cand[better]
        idx[g[better]] = other.pool_arg[rows][better]
        who[g[better]] = other_pos
    found = best > 0
    who = np.where(found, who, -1)
    return (tuple(queries[w].sample.sample_id if w >= 0 else "" for w in who.tolist()),
            tuple(queries[w].sample.category if w >= 0 else "" for w in who.tolist()),
            np.where(found, idx, -1).astype(np.intp), best)
