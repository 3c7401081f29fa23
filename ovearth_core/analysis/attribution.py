"""Error attribution in the spirit of TIDE, adapted to this benchmark's key metrics.

Every error of a submission is given exactly one kind; for each kind an oracle fixes only the
errors of that kind and the key metrics are recomputed with the evaluator. The rise of a metric
is the share of its gap that the kind is responsible for. Key metrics: presence MCC (open
vocabulary), segmentation positive macro mIoU, and micro F1 of axis-aligned and oriented boxes
at the run's IoU threshold.

Kinds and their oracle fixes:

``hallucination``
    A negative open-vocabulary query with a non-empty prediction in any enabled modality.
    Fix: clear its predictions. (Only presence sees it.)
``miss``
    A positive query with usable GT in a modality and an empty prediction there. Fix: predict
    the GT. (A positive query empty in every modality is a presence miss.)
``localisation``
    Boxes: an unmatched box overlapping (IoU >= ``background_iou`` and > 0) an unmatched GT
    box but below the IoU threshold; boxes and GT are paired one-to-one (most pairs, then
    largest IoU). Masks: a mask overlapping the GT with IoU below 1 (masks have no
    threshold). Fix: snap the box / mask to its GT.
``wrong_object``
    Boxes: an unmatched box overlapping no GT box, paired with an unmatched GT box that has no
    localisation pair (the model put a box on something else instead). Masks: a non-empty
    mask not overlapping the GT. Fix: move the box / mask onto its GT.
``count``
    Boxes only: the remainder after that pairing. Over-count: a box overlapping no GT with no
    unfound GT left to pair with. Under-count: an unmatched GT box without a localisation pair,
    with no stray box left to pair with. Fix: remove the extra box / add the missing one.
``duplicate``
    Boxes only: any other unmatched box, i.e. an extra box on a GT that is already matched (or
    already claimed by a localisation pair). Fix: remove it.

Boxes are first matched one-to-one at the IoU threshold exactly as the evaluator does;
matched boxes are never errors. "Overlapping" means IoU >= ``background_iou`` and > 0; the
default is the explorer's rule (``OVERLAP_EPS`` = 0.01), so a query tagged "wrong object"
there has its errors counted as ``wrong_object`` here (TIDE uses 0.1; 0 means any positive
IoU). Only queries the evaluator evaluates carry box or mask errors; boxes on
negative queries affect presence only (as in the evaluator).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import geometry, masks, metrics
from ..evaluate import evaluate_samples
from ..matching import match
from ..presence import presence_cell, presence_metrics
from ..types import OUTPUT_KEYS, OVERLAP_EPS, Sample, SampleList
from .sweep import BOX_MODALITIES, box_fields, iou_matrix

KINDS = ("hallucination", "miss", "localisation", "wrong_object", "count", "duplicate")
METRICS = ("presence_mcc", "seg_macro_miou", "bbox_micro_f1", "oriented_bbox_micro_f1")
# The smallest positive float: match() keeps pairs with IoU >= it, i.e. IoU > 0.
_ANY_OVERLAP = float(np.nextafter(0.0, 1.0))


@dataclass(frozen=True)
class Fix:
    """One error and its oracle fix.

    ``op`` is ``clear`` (drop every prediction of the query), ``fill`` (predict the GT of
    ``modality``), ``snap`` (box ``pred`` := GT box ``gt``), ``remove`` (drop box ``pred``) or
    ``add`` (append GT box ``gt``). ``modality`` is ``presence``, ``segmentation``, ``bbox`` or
    ``oriented_bbox``.
    """

    kind: str
    modality: str
    op: str
    pred: int = -1
    gt: int = -1


def classify_boxes(gt: npt.NDArray[np.float64], pred: npt.NDArray[np.float64], modality: str,
                   iou_threshold: float, background_iou: float = OVERLAP_EPS,
                   iou: npt.NDArray[np.float64] | None = None) -> list[Fix]:
    """Errors of one evaluated positive query in one box modality (see the module doc).

    ``iou``: the exact ``(G, P)`` IoU matrix of ``gt`` and ``pred`` when already known.
    """
    if len(gt) == 0:
        return []
    if len(pred) == 0:
        return [Fix("miss", modality, "fill")]
    if iou is None:
        iou = iou_matrix(gt, pred, modality)
    gi, pi = match(iou, iou_threshold)
    free_gt = np.setdiff1d(np.arange(len(gt)), gi)
    free_pred = np.setdiff1d(np.arange(len(pred)), pi)
    # A box reaching the threshold on an already matched GT is a duplicate, not a localisation.
    on_matched = (iou[np.ix_(gi, free_pred)] >= iou_threshold).any(axis=0)
    candidates = free_pred[~on_matched]
    sub = iou[np.ix_(free_gt, candidates)]
    lg, lp = match(np.where(_overlapping(sub, background_iou), sub, 0.0), _ANY_OVERLAP)
    fixes = [Fix("localisation", modality, "snap", int(candidates[p]), int(free_gt[g]))
             for g, p in zip(lg, lp, strict=True)]
    taken_pred = set(candidates[lp].tolist())
    overlaps = _overlapping(iou, background_iou).any(axis=0)
    stray = [int(p) for p in free_pred if p not in taken_pred and not overlaps[p]]
    fixes += [Fix("duplicate", modality, "remove", int(p)) for p in free_pred
              if p not in taken_pred and overlaps[p]]
    snapped_gt = set(free_gt[lg].tolist())
    unfound = [int(g) for g in free_gt if g not in snapped_gt]
    n = min(len(stray), len(unfound))
    fixes += [Fix("wrong_object", modality, "snap", p, g)
              for p, g in zip(stray[:n], unfound[:n], strict=True)]
    fixes += [Fix("count", modality, "remove", p) for p in stray[n:]]
    fixes += [Fix("count", modality, "add", gt=g) for g in unfound[n:]]
    return fixes


def _overlapping(iou: npt.NDArray[np.float64], background_iou: float) -> npt.NDArray[np.bool_]:
    return (iou >= background_iou) & (iou > 0)


def classify_mask(sample: Sample, background_iou: float = OVERLAP_EPS) -> list[Fix]:
    """Segmentation error of one positive query (none when IoU is 1 or GT is unusable)."""
    gt_area = masks.area(sample.gt_mask)
    if sample.negative or gt_area == 0:
        return []
    pred_area = masks.area(sample.pred_mask)
    if pred_area == 0:
        return [Fix("miss", "segmentation", "fill")]
    inter = masks.intersection_area(sample.gt_mask, sample.pred_mask)
    union = gt_area + pred_area - inter
    if inter == 0 or inter / union < background_iou:
        return [Fix("wrong_object", "segmentation", "fill")]
    if inter < union:
        return [Fix("localisation", "segmentation", "fill")]
    return []


def _has_prediction(sample: Sample, modalities: Sequence[str]) -> bool:
    return (("segmentation" in modalities and masks.area(sample.pred_mask) > 0)
            or any(len(box_fields(sample, m)[1]) > 0 for m in BOX_MODALITIES
                   if m in modalities))


def classify_sample(sample: Sample, modalities: Sequence[str], iou_threshold: float,
                    background_iou: float = OVERLAP_EPS, open_vocab: bool = True,
                    ious: dict[str, npt.NDArray[np.float64]] | None = None) -> list[Fix]:
    """Every error of one query over the enabled modalities.

    ``ious``: exact IoU matrices of the query's box modalities, when already known.
    """
    if sample.negative:
        if open_vocab and _has_prediction(sample, modalities):
            return [Fix("hallucination", "presence", "clear")]
        return []
    fixes = classify_mask(sample, background_iou) if "segmentation" in modalities else []
    for m in BOX_MODALITIES:
        if m in modalities:
            gt, pred, _ = box_fields(sample, m)
            fixes += classify_boxes(gt, pred, m, iou_threshold, background_iou,
                                    None if ious is None else ious[m])
    return fixes


def classify_samples(samples: Sequence[Sample], modalities: Sequence[str], iou_threshold: float,
                     background_iou: float = OVERLAP_EPS, open_vocab: bool = True
                     ) -> list[list[Fix]]:
    """:func:`classify_sample` of every query, box IoUs computed in batches per modality
    (a block of queries at a time: :func:`~ovearth_core.geometry.iter_iou_matrices`)."""
    box_mods = [m for m in BOX_MODALITIES if m in modalities]
    streams = [geometry.iter_iou_matrices([box_fields(s, m)[0] for s in samples],
                                          [box_fields(s, m)[1] for s in samples],
                                          oriented=m == "oriented_bbox")
               for m in box_mods]
    return [classify_sample(s, modalities, iou_threshold, background_iou, open_vocab,
                            dict(zip(box_mods, ious, strict=True)))
            for s, *ious in zip(samples, *streams, strict=True)]


def _fix_boxes(gt: npt.NDArray[np.float64], pred: npt.NDArray[np.float64],
               scores: npt.NDArray[np.float64], fixes: Sequence[Fix],
               ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    if any(f.op == "fill" for f in fixes):
        return gt.copy(), np.full(len(gt), np.nan)
    pred, scores = pred.copy(), scores.copy()
    for f in fixes:
        if f.op == "snap":
            pred[f.pred] = gt[f.gt]
    keep = np.ones(len(pred), dtype=bool)
    keep[[f.pred for f in fixes if f.op == "remove"]] = False
    added = [f.gt for f in fixes if f.op == "add"]
    return (np.concatenate([pred[keep], gt[added]]),
            np.concatenate([scores[keep], np.full(len(added), np.nan)]))


def apply_fixes(sample: Sample, fixes: Sequence[Fix]) -> Sample:
    """The sample with the given errors fixed by the oracle."""
    if not fixes:
        return sample
    if any(f.op == "clear" for f in fixes):
        return replace(sample, pred_mask=None, pred_boxes=np.zeros((0, 4)),
                       pred_box_scores=np.zeros(0), pred_obbs=np.zeros((0, 4, 2)),
                       pred_obb_scores=np.zeros(0))
    changes: dict[str, Any] = {}
    if any(f.modality == "segmentation" for f in fixes):
        changes["pred_mask"] = sample.gt_mask
    for m, (box_key, score_key) in {"bbox": ("pred_boxes", "pred_box_scores"),
                                    "oriented_bbox": ("pred_obbs", "pred_obb_scores")}.items():
        mine = [f for f in fixes if f.modality == m]
        if mine:
            gt, pred, scores = box_fields(sample, m)
            changes[box_key], changes[score_key] = _fix_boxes(gt, pred, scores, mine)
    return replace(sample, **changes)


def _key_metrics(samples: Sequence[Sample], rows: Sequence[dict[str, Any]],
                 modalities: Sequence[str], open_vocab: bool) -> dict[str, float | None]:
    out: dict[str, float | None] = dict.fromkeys(METRICS)
    if open_vocab:
        counts = Counter(presence_cell(r["gt_present"], r["pred_present"]).lower()
                         for r in rows)
        out["presence_mcc"] = presence_metrics(counts["tp"], counts["fp"], counts["tn"],
                                               counts["fn"])["mcc"]
    if "segmentation" in modalities:
        out["seg_macro_miou"] = metrics.seg_summary(
            samples, [r["seg"] for r in rows])["positive_macro_miou"]
    for m in BOX_MODALITIES:
        if m in modalities:
            out[f"{m}_micro_f1"] = metrics.det_summary([r[m] for r in rows])["positive_micro_f1"]
    return out


def _delta(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


def error_attribution(samples: SampleList, iou_threshold: float = 0.5,
                      background_iou: float = OVERLAP_EPS,
                      evaluated: dict[str, Any] | None = None) -> dict[str, Any]:
    """Table of metric rises when only one kind of error is fixed.

    ``evaluated``: :func:`~ovearth_core.evaluate.evaluate_samples` of these very samples
    at ``iou_threshold`` when the caller has it (saves evaluating them again).

    Returns a JSON-ready dict: ``base`` and ``oracle_all`` (every error fixed) key metrics,
    and ``kinds``: one row per kind with ``counts`` (errors per modality; boxes for box
    errors, queries otherwise), ``fixed`` metrics and ``delta`` = fixed - base (``None``
    where a metric is undefined).
    """
    mods = tuple(samples.modalities)
    open_vocab = samples.task == "open_vocabulary"
    fixes = classify_samples(samples, mods, iou_threshold, background_iou, open_vocab)
    if evaluated is None or evaluated["config"]["iou_threshold"] != iou_threshold:
        evaluated = evaluate_samples(samples, iou_threshold)
    base_rows = evaluated["per_sample"]
    base = _key_metrics(samples, base_rows, mods, open_vocab)

    def fixed_metrics(kinds: Sequence[str]) -> dict[str, float | None]:
        chosen = [[f for f in fx if f.kind in kinds] for fx in fixes]
        changed = [i for i, fx in enumerate(chosen) if fx]
        fixed = list(samples)
        for i in changed:
            fixed[i] = apply_fixes(samples[i], chosen[i])
        rows = list(base_rows)
        if not changed:
            return base
        # Re-evaluate only the changed queries, in the modalities the fixes touch.
        touched = {f.modality for i in changed for f in chosen[i]}
        redo = mods if "presence" in touched else tuple(m for m in mods if m in touched)
        sub = SampleList([fixed[i] for i in changed], task=samples.task, modalities=redo,
                         score_threshold=samples.score_threshold,
                         bbox_format=samples.bbox_format)
        for i, new in zip(changed, evaluate_samples(sub, iou_threshold)["per_sample"],
                          strict=True):
            row = dict(rows[i])
            row.update({OUTPUT_KEYS[m]: new[OUTPUT_KEYS[m]] for m in redo})
            row["pred_present"] = any(row[OUTPUT_KEYS[m]]["pred_present"] for m in mods)
            rows[i] = row
        return _key_metrics(fixed, rows, mods, open_vocab)

    table = []
    for kind in KINDS:
        counts = Counter(f.modality for fx in fixes for f in fx if f.kind == kind)
        if kind == "miss" and open_vocab:
            counts["presence"] = sum(not s.negative and not _has_prediction(s, mods)
                                     for s in samples)
            counts = +counts  # drop a zero count
        after = fixed_metrics((kind,))
        table.append({"kind": kind, "counts": dict(sorted(counts.items())), "fixed": after,
                      "delta": {k: _delta(after[k], base[k]) for k in METRICS}})
    return {"iou_threshold": iou_threshold, "background_iou": background_iou,
            "metrics": list(METRICS), "base": base, "oracle_all": fixed_metrics(KINDS),
            "kinds": table}
