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
from typing import Any

import numpy as np

from .. import geometry
from ..types import Sample
from .object_kinds import (
    BACKGROUND_IOU,
    GT_OUTCOMES,
    MATCHED,
    PRED_OUTCOMES,
    QueryObjects,
    classify_image,
    overlaps_of,
)
from .sweep import BOX_MODALITIES, box_fields

# Modalities with object outcomes, in the evaluator's order.
OBJECT_MODALITIES = ("segmentation", *BOX_MODALITIES)
# Every outcome but "matched", worst first: the filters' choices and the lists' order.
ERRORS = ("missed", "found as other class", "mislocalised", "class confusion", "both",
          "localisation", "duplicate", "background")


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
