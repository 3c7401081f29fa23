"""NMS-AP (OVDEval): the boxes that compete for one object across labels are suppressed
before COCO's mAP, so that answering a hard negative with the positive's box costs AP.

Yao et al., "How to Evaluate the Generalization of Detection? A Benchmark for Comprehensive
Open-Vocabulary Detection", AAAI 2024; the rule of their ``eval.py`` (om-ai-lab/OVDEval),
written out here (not imported):

* per image, for each ground-truth box ``g``: the candidates are the predicted boxes of that
  image, of every query and label, whose IoU with ``g`` is **strictly** above
  :data:`NMS_IOU` (0.5; a zero union is IoU 0);
* the highest-scored candidate is kept for ``g``, the others are removed for ``g``; of equal
  scores the one later in file order wins (``eval.py``'s ascending sort, reversed);
* a box removed for one ground-truth box but kept for another stays; a box that is no
  candidate of any ground-truth box stays;
* then COCO's mAP of what stays (the suppression comes before COCO's per-image box cap).

OVEarth's "image" is an annotation's ``image_path``; its ground-truth boxes are those of the
annotations that a positive query of the task targets (each annotation once, its ignore
regions, COCO crowds, with them, as ``eval.py`` takes every annotation of the image), and
file order is query order (ground-truth order), then box order. A box without a score ranks
first (score ``+inf``), as everywhere in AP.

One rule beyond OVDEval's data: queries that are *positive for the same annotation* (synonym
phrases, "storage tank" and "oil tank" on one object) answer one label. For ``g`` the
winning label is that of the highest-scored candidate; every query of that label keeps its
own highest-scored candidate and everything else is removed. Without synonyms a label is one
query and this is OVDEval's rule exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from ..field_metrics import box_fields
from ..geometry import iou_matrices
from ..types import Sample
from .ranking import ignore_regions
from .sweep import score_key

NMS_IOU = 0.5


@dataclass(frozen=True)
class Suppressed:
    """One removed box: ``query_id``'s box ``box`` (its position in that query's boxes of
    the modality), removed for a ground-truth box whose kept box is ``winner_query_id``'s
    box ``winner_box`` (phrase ``winner_phrase``), at IoU ``iou`` with that GT box."""

    query_id: str
    box: int
    winner_query_id: str
    winner_box: int
    winner_phrase: str
    iou: float


@dataclass(frozen=True)
class NmsResult:
    """The samples with the suppressed boxes of one modality removed, and what went."""

    samples: list[Sample]
    removed: tuple[Suppressed, ...]
    num_detections: int  # boxes before the suppression, on every query of the images


def _image_groups(samples: Sequence[Sample]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for k, s in enumerate(samples):
        groups.setdefault(s.image_path, []).append(k)
    return groups


def suppress(samples: Sequence[Sample], modality: str = "bbox") -> NmsResult:
    """OVDEval's suppression of one box modality (see the module docstring)."""
    if modality not in ("bbox", "oriented_bbox"):
        raise ValueError(f"NMS-AP is defined for boxes: modality 'bbox' or 'oriented_bbox', "
                         f"got {modality!r}")
    oriented = modality == "oriented_bbox"
    shape = (4, 2) if oriented else (4,)
    removed_mask = [np.zeros(len(box_fields(s, modality)[1]), dtype=bool) for s in samples]
    records: list[Suppressed] = []
    total = sum(m.size for m in removed_mask)
    gts_per_image, preds_per_image, plans = [], [], []
    for members in _image_groups(samples).values():
        owners: list[int] = []
        boxes: list[npt.NDArray[np.float64]] = []
        scores: list[npt.NDArray[np.float64]] = []
        for k in members:
            _, pred, sc = box_fields(samples[k], modality)
            owners += [k] * len(pred)
            boxes.append(pred.reshape(-1, *shape))
            scores.append(score_key(sc))
        if not owners:
            continue
        seen: set[str] = set()
        gt: list[npt.NDArray[np.float64]] = []
        for k in members:
            s = samples[k]
            if s.negative or s.ann_id in seen:
                continue
            seen.add(s.ann_id)
            gt += [box_fields(s, modality)[0].reshape(-1, *shape),
                   ignore_regions(s, modality).reshape(-1, *shape)]
        gt_all = np.concatenate(gt) if gt else np.zeros((0, *shape))
        if not len(gt_all):
            continue
        gts_per_image.append(gt_all)
        preds_per_image.append(np.concatenate(boxes))
        plans.append((members, np.array(owners, dtype=np.int64), np.concatenate(scores)))
    ious = iou_matrices(gts_per_image, preds_per_image, oriented) if plans else []
    for (members, owner, score), iou in zip(plans, ious, strict=True):
        _suppress_image(samples, members, owner, score, iou, removed_mask, records)
    kept = [_without(s, modality, gone) if gone.any() else s
            for s, gone in zip(samples, removed_mask, strict=True)]
    return NmsResult(kept, tuple(records), total)


def _suppress_image(samples: Sequence[Sample], members: list[int], owner: npt.NDArray[np.int64],
                    score: npt.NDArray[np.float64], iou: npt.NDArray[np.float64],
                    removed_mask: list[npt.NDArray[np.bool_]],
                    records: list[Suppressed]) -> None:
    """The suppression on one image: ``owner`` ``(P,)`` each box's sample, ``score``
    ``(P,)``, ``iou`` ``(G, P)``; marks ``removed_mask`` and appends ``records``."""
    n = owner.size
    # Rank by (score, file position), ascending: the highest rank wins (later wins ties).
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), score))] = np.arange(n)
    label = _labels(samples, members)
    box_label = np.array([label[k] for k in owner.tolist()], dtype=np.int64)
    position = np.arange(n) - np.searchsorted(owner, owner)  # owners come in runs
    # Every (GT box, candidate) pair at once, in GT order (np.nonzero is row-major): on a
    # dense image a loop over the GT boxes, each over every box, took most of the time.
    gt_of, box = np.nonzero(iou > NMS_IOU)
    kept_any = np.zeros(n, dtype=bool)
    removed_for = np.full(n, -1, dtype=np.int64)  # the winner of the first GT removing it
    removed_iou = np.zeros(n)
    if gt_of.size:
        # Each GT box's winner: its candidate of the highest rank (the last of its run).
        by_rank = np.lexsort((rank[box], gt_of))
        top = np.ones(by_rank.size, dtype=bool)
        top[:-1] = gt_of[by_rank[1:]] != gt_of[by_rank[:-1]]
        winner_of = np.full(iou.shape[0], -1, dtype=np.int64)
        winner_of[gt_of[by_rank[top]]] = box[by_rank[top]]
        winner = winner_of[gt_of]
        # Kept for a GT box: per query of the winner's label, its candidate of the highest
        # rank (the last of each (GT box, query) run).
        same = np.flatnonzero(box_label[box] == box_label[winner])
        run = same[np.lexsort((rank[box[same]], owner[box[same]], gt_of[same]))]
        last = np.ones(run.size, dtype=bool)
        last[:-1] = ((gt_of[run[1:]] != gt_of[run[:-1]])
                     | (owner[box[run[1:]]] != owner[box[run[:-1]]]))
        kept = np.zeros(gt_of.size, dtype=bool)
        kept[run[last]] = True
        kept_any[box[kept]] = True
        # Removed: by the first GT box (in order) it is a candidate of and not kept for.
        lost = np.flatnonzero(~kept)
        first_box, first = np.unique(box[lost], return_index=True)
        removed_for[first_box] = winner[lost[first]]
        removed_iou[first_box] = iou[gt_of[lost[first]], first_box]
    gone = (removed_for >= 0) & ~kept_any
    for p in np.flatnonzero(gone).tolist():
        k, w = int(owner[p]), int(removed_for[p])
        removed_mask[k][position[p]] = True
        won = samples[int(owner[w])]
        records.append(Suppressed(samples[k].sample_id, int(position[p]), won.sample_id,
                                  int(position[w]), won.phrase, float(removed_iou[p])))


def _labels(samples: Sequence[Sample], members: list[int]) -> dict[int, int]:
    """Each sample's label on its image: positive queries of one annotation share one
    (synonyms), every other query is its own."""
    by_ann: dict[str, int] = {}
    out = {}
    for k in members:
        s = samples[k]
        if s.negative:
            out[k] = len(samples) + k
        else:
            out[k] = by_ann.setdefault(s.ann_id, k)
    return out


def _without(s: Sample, modality: str, gone: npt.NDArray[np.bool_]) -> Sample:
    if modality == "bbox":
        return replace(s, pred_boxes=s.pred_boxes[~gone], pred_box_scores=s.pred_box_scores[~gone])
    return replace(s, pred_obbs=s.pred_obbs[~gone], pred_obb_scores=s.pred_obb_scores[~gone])
