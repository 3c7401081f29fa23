"""Object-level diagnosis: an outcome for every GT box and predicted box (TIDE's error kinds).

A query's boxes are matched one-to-one exactly as the evaluator does (:func:`~ovearth_core.
matching.match`, at the run's IoU threshold ``t_f``); a matched pair is ``matched``. Every
other predicted box gets one kind, tested in TIDE's order (Bolya et al. 2020, ``tidecv``'s
``TIDERun._eval_image``), with ``t_b`` = :data:`BACKGROUND_IOU`:

=================  ==========================================================================
``localisation``   its best IoU with a GT box of its own query is in ``[t_b, t_f)``
``class confusion`` IoU >= ``t_f`` with a GT box of *another category* on the same image
                   (the GT boxes of the other positive queries of that image)
``duplicate``      IoU >= ``t_f`` with a GT box of its own query, which is already matched
``background``     IoU < ``t_b`` with every GT box of the image, whatever its category
``both``           the rest: wrong category and ``t_b`` <= IoU < ``t_f`` (TIDE's "other")
=================  ==========================================================================

A GT box left unmatched is ``mislocalised`` when a ``localisation`` box of its query has it
as best GT, ``found as other class`` when a ``class confusion`` box (of another query of the
image) has it as best other-category GT, else ``missed`` (TIDE's rule: only a GT that no
localisation or class error can fix is missed).

A predicted box's *category* is its query's category (negative open-vocabulary queries
included: a "large vehicle" box on a small vehicle is a class confusion). Two differences
from ``tidecv``, both deliberate: the matching is the evaluator's (most pairs, then largest
IoU) rather than greedy by score, so the ``matched`` counts are the evaluator's TP; and a
box at exactly ``t_f`` on a matched GT is a duplicate (TIDE calls it localisation).
Masks get the same outcomes for their connected components (:mod:`.mask_objects`).

The category confusion counts, per predicted category and GT category, the unmatched
predicted boxes whose best IoU with a GT box of another category on the same image reaches
``t_f`` (attributed to that GT box's category), whatever TIDE's order then calls them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import geometry
from ..matching import match_pairs
from ..types import Sample
from .sweep import BOX_MODALITIES, box_fields

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BACKGROUND_IOU = 0.1  # TIDE's t_b
MATCHED = "matched"
PRED_OUTCOMES = (MATCHED, "localisation", "class confusion", "duplicate", "both",
                 "background")
GT_OUTCOMES = (MATCHED, "mislocalised", "found as other class", "missed")
# Every outcome but "matched", worst first: the filters' choices and the lists' order.
# Modalities with object outcomes, in the evaluator's order.
OBJECT_MODALITIES = ("segmentation", *BOX_MODALITIES)
ERRORS = ("missed", "found as other class", "mislocalised", "class confusion", "both",
          "localisation", "duplicate", "background")


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


def query_objects(samples: Sequence[Sample], modality: str, iou_threshold: float,
                  background_iou: float = BACKGROUND_IOU,
                  entries: Sequence[dict[str, Any] | None] | None = None,
                  ) -> list[QueryObjects]:
    """Object outcomes of every query (in ``samples`` order) in ``modality``: a box
    modality, or ``"segmentation"`` (the masks' connected components, :mod:`.mask_objects`;
    ``entries`` are then not needed: the evaluator matches no mask objects).

    ``entries``: the evaluator's per-sample entries of ``modality`` (same order), whose
    ``matches`` are then taken as they are, so that ``matched`` is exactly the evaluator's
    TP; without them the matching is recomputed (:func:`~ovearth_core.matching.match`).
    Queries are taken an image at a time, and within it only overlapping pairs are
    computed (:func:`~ovearth_core.geometry.iou_pairs`, :func:`overlaps_of`): memory
    follows the overlapping pairs of the image with the most boxes, never ``G x P`` nor
    the file.
    """
    if modality == "segmentation":
        from .mask_objects import query_objects as mask_query_objects

        return mask_query_objects(samples, iou_threshold, background_iou)
    if modality not in BOX_MODALITIES:
        raise ValueError(f"modality: one of {OBJECT_MODALITIES}, got {modality!r}")
    by_image: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(samples):
        by_image[s.image_path].append(i)
    out: dict[int, QueryObjects] = {}
    for indices in by_image.values():
        matches = [None if entries is None or entries[i] is None else entries[i]["matches"]
                   for i in indices]
        for qo in _image_objects([samples[i] for i in indices], indices, modality,
                                 iou_threshold, background_iou, matches):
            out[qo.index] = qo
    return [out[i] for i in range(len(samples))]


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


def _image_objects(samples: Sequence[Sample], indices: Sequence[int], modality: str,
                   t_f: float, t_b: float, matches: Sequence[Any]) -> list[QueryObjects]:
    oriented = modality == "oriented_bbox"
    fields = [box_fields(s, modality) for s in samples]
    gts = [np.zeros((0, *f[0].shape[1:])) if s.negative else f[0]
           for s, f in zip(samples, fields, strict=True)]
    queries = []
    for pos, (s, (_, pred, scores)) in enumerate(zip(samples, fields, strict=True)):
        owners = [(q, g) for q, other in enumerate(samples) if other.category != s.category
                  for g in range(len(gts[q]))]
        pool = (np.concatenate([gts[q][g:g + 1] for q, g in owners]) if owners
                else np.zeros((0, *pred.shape[1:])))
        queries.append(overlaps_of(
            indices[pos], s, len(gts[pos]), len(pred), scores,
            geometry.iou_pairs(gts[pos], pred, oriented),
            geometry.iou_pairs(pool, pred, oriented), owners, t_f, matches[pos]))
    return classify_image(queries, t_f, t_b, modality)


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


def confusion(objects: Sequence[QueryObjects], iou_threshold: float
              ) -> dict[str, dict[str, int]]:
    """``{predicted category: {GT category: n}}``: unmatched predicted boxes whose best IoU
    with a GT box of another category on the same image reaches ``iou_threshold``."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for qo in objects:
        for outcome, cat, iou in zip(qo.pred_outcome, qo.pred_other_category,
                                     qo.pred_other_iou.tolist(), strict=True):
            if outcome != MATCHED and iou >= iou_threshold:
                out[qo.category][cat] += 1
    return {p: dict(sorted(c.items())) for p, c in sorted(out.items())}


def objects_report(samples: Sequence[Sample], modalities: Sequence[str], iou_threshold: float,
                   background_iou: float = BACKGROUND_IOU,
                   per_sample: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    """JSON-ready ``{"objects": {modality: ...}, "confusion": {modality: ...}}``
    (``per_sample``: the evaluator's rows of these samples, for its matches).

    ``objects[m]``: the thresholds, total ``predictions`` / ``ground_truth`` outcome counts
    and ``per_query`` counts of the queries with at least one box.
    """
    objects: dict[str, Any] = {}
    conf: dict[str, Any] = {}
    for m in (m for m in OBJECT_MODALITIES if m in modalities):
        per = query_objects(samples, m, iou_threshold, background_iou,
                            None if per_sample is None or m not in BOX_MODALITIES
                            else [r[m] for r in per_sample])
        total = {"predictions": Counter(), "ground_truth": Counter()}
        per_query = {}
        for qo in per:
            c = qo.counts()
            if qo.pred_outcome or qo.gt_outcome:
                per_query[qo.query_id] = c
            for side in total:
                total[side].update(c[side])
        objects[m] = {"iou_threshold": iou_threshold, "background_iou": background_iou,
                      "predictions": {k: total["predictions"][k] for k in PRED_OUTCOMES},
                      "ground_truth": {k: total["ground_truth"][k] for k in GT_OUTCOMES},
                      "per_query": per_query}
        conf[m] = confusion(per, iou_threshold)
    return {"objects": objects, "confusion": conf}


def object_rows(qo: QueryObjects) -> list[dict[str, Any]]:
    """The query's boxes as table rows, errors first (:data:`ERRORS` order, then matched),
    each with ``role`` (``GT``/``pred``) and ``index`` (its position among the query's GT
    or predicted boxes), ``outcome``, ``iou`` (with its matched or best box of the query)
    and ``score``; ``near_category`` / ``near_iou`` / ``near_query``: for a GT box the
    nearest predicted box of the image (any query), for a predicted box its best GT box
    of another category (``""`` / 0 when none)."""
    rows = [{"role": "GT", "index": g, "outcome": o, "iou": float(qo.gt_iou[g]),
             "score": None, "near_category": qo.gt_near_category[g],
             "near_iou": float(qo.gt_near_iou[g]), "near_query": qo.gt_near_query[g]}
            for g, o in enumerate(qo.gt_outcome)]
    rows += [{"role": "pred", "index": p, "outcome": o, "iou": float(qo.pred_iou[p]),
              "score": None if np.isnan(qo.pred_score[p]) else float(qo.pred_score[p]),
              "near_category": qo.pred_other_category[p],
              "near_iou": float(qo.pred_other_iou[p]), "near_query": ""}
             for p, o in enumerate(qo.pred_outcome)]
    order = {o: i for i, o in enumerate((*ERRORS, MATCHED))}
    return sorted(rows, key=lambda r: (order[r["outcome"]], r["role"] != "GT", r["index"]))


def error_summary(qo: QueryObjects) -> str:
    """The query's object errors in a few words, worst first: ``"missed 5 · duplicate 3"``
    (``""`` when every box is matched)."""
    counts = Counter(qo.gt_outcome) + Counter(qo.pred_outcome)
    return " · ".join(f"{k} {counts[k]}" for k in ERRORS if counts[k])


def queries_with(objects: Sequence[QueryObjects], outcomes: Sequence[str]) -> set[str]:
    """Ids of the queries with at least one GT or predicted box of one of ``outcomes``."""
    wanted = set(outcomes)
    return {qo.query_id for qo in objects
            if wanted & set(qo.gt_outcome) or wanted & set(qo.pred_outcome)}
