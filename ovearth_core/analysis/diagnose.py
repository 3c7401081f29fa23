"""Failure tags and the per-query table of the inspection app (plain dicts and lists).

A query's *failure tag* names the worst error it has, most severe first. For boxes the
errors are the outcomes of its objects under the evaluator's matching (at the run's IoU
threshold; :class:`~ovearth_core.run.BoxFacts` records which outcomes occur):

==================  =====================================================================
tag                 rule (per enabled modality that has usable ground truth)
==================  =====================================================================
hallucination       negative query with a non-empty prediction in any enabled modality
miss                positive query whose prediction is empty (in that modality)
wrong object        a prediction exists but it does not overlap the ground truth
                    (mask IoU < ``OVERLAP_EPS``; no predicted box has IoU >= ``OVERLAP_EPS``
                    with any GT box)
poor localisation   overlap, but mask IoU < the IoU threshold; for boxes: a *mislocalised*
                    GT box, left unmatched and overlapped (IoU >= ``OVERLAP_EPS``) by a
                    predicted box left unmatched too (a box matched to a packed neighbour
                    does not count)
duplicates          a predicted box left unmatched reaches IoU >= threshold with a GT box
                    (no maximum matching can use it beside the others: packed
                    neighbours are not duplicates)
over-count          a predicted box left unmatched that is neither of those: a box on no
                    target (the query's other boxes found theirs)
under-count         a GT box left unmatched that no unmatched predicted box overlaps
ok                  none of the above (every box matched, mask IoU >= the threshold)
==================  =====================================================================

A query with every error kind (531 ships: 7 duplicates, 74 mislocalised, 160 missed) is
tagged *poor localisation*, the worst of them; counts of boxes never decide a tag (a query
with as many boxes as ships, one of them on open water, is *over-count*).

The query's tag is the most severe of its modality tags (order above), except that a
positive query *passes* (tag ``ok``, its modality tags kept in ``failure_detail``) when
every evaluated modality does: mask IoU >= the threshold, box F1 >= :data:`PASS_F1`. So a
dense query with 531 ships and F1 0.9 is not a failure, while a query of one or two
objects with any box error (F1 <= 2/3) keeps its tag. The IoU threshold is the
evaluation run's (``results["config"]["iou_threshold"]``).

*Outcome*: for open vocabulary the presence cell (``TP``, ``FP``, ``TN``,
``FN``); for referring and reasoning ``hit`` when the query's IoU (mask IoU,
else the best box IoU, else the best oriented-box IoU) is >= 0.5, else ``miss``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np

from .. import geometry
from ..presence import presence_cell
from ..run import BoxFacts, Run
from ..types import OVERLAP_EPS, Sample

HIT_IOU = 0.5
PASS_F1 = 0.8  # box F1 at which a query's boxes pass (see the module doc)
TAGS: tuple[str, ...] = ("hallucination", "miss", "wrong object", "poor localisation",
                         "duplicates", "over-count", "under-count", "ok")
OUTCOMES_OV: tuple[str, ...] = ("TP", "FP", "TN", "FN")
OUTCOMES_GROUNDING: tuple[str, ...] = ("hit", "miss")
# Modality -> (per-sample key, short column prefix)
_MODS = (("segmentation", "seg"), ("bbox", "bbox"), ("oriented_bbox", "obb"))


def seg_tag(entry: dict[str, Any] | None, threshold: float) -> str | None:
    """Tag of a segmentation entry; ``None`` when the modality is off or not evaluated."""
    if entry is None or not entry["evaluated"]:
        return None
    if entry["pred_area"] == 0:
        return "miss"
    if entry["iou"] < OVERLAP_EPS:
        return "wrong object"
    if entry["iou"] < threshold:
        return "poor localisation"
    return "ok"


def det_tag(entry: dict[str, Any] | None, iou: BoxFacts | np.ndarray,
            threshold: float) -> str | None:
    """Tag of a detection entry given the query's :class:`~ovearth_core.run.BoxFacts` (or
    the exact ``(G, P)`` IoU matrix of all its GT/pred pairs, from which they are taken)."""
    if entry is None or not entry["evaluated"]:
        return None
    facts = iou if isinstance(iou, BoxFacts) else BoxFacts.of(iou, threshold,
                                                               entry["matches"])
    if entry["num_pred"] == 0:
        return "miss"
    if facts.best_iou < OVERLAP_EPS:
        return "wrong object"
    for flag, tag in ((facts.stray_overlap, "poor localisation"),
                      (facts.duplicated, "duplicates"), (facts.extra, "over-count"),
                      (facts.missed, "under-count")):
        if flag:
            return tag
    return "ok"


def found(failure: str) -> bool:
    """The one rule for "found" (the explorer's "not failed", the Annotation page's
    "right"): the query's failure tag is ``ok``. A query whose best box overlaps well but
    whose F1 fails (one of 25 ships found) is not found."""
    return failure == "ok"


def _worst(tags: Iterable[str | None]) -> str:
    present = [t for t in tags if t is not None]
    return min(present, key=TAGS.index) if present else "ok"


def query_row(sample: Sample, row: dict[str, Any], threshold: float, open_vocab: bool,
              box_iou: BoxFacts, obb_iou: BoxFacts, pass_f1: float = PASS_F1,
              ) -> dict[str, Any]:
    """One table row for a query.

    Args:
        sample: the query's geometry.
        row: its per-sample result row.
        threshold: the run's IoU threshold.
        open_vocab: whether outcomes are presence cells (else hit/miss).
        box_iou, obb_iou: the box facts of its HBBs and OBBs.
        pass_f1: box F1 at which a modality's boxes pass (:data:`PASS_F1`).
    """
    seg, bbox, obb = row["seg"], row["bbox"], row["oriented_bbox"]
    if sample.negative:
        tags = {"hallucination" if row["pred_present"] else "ok"}
        detail = "hallucination" if row["pred_present"] else ""
        per_mod = {}
    else:
        per_mod = {"seg": seg_tag(seg, threshold), "bbox": det_tag(bbox, box_iou, threshold),
                   "obb": det_tag(obb, obb_iou, threshold)}
        detail = ", ".join(f"{k}: {v}" for k, v in per_mod.items() if v not in (None, "ok"))
        passed = all(v in (None, "ok") or (k != "seg" and entry["f1"] >= pass_f1)
                     for (k, v), entry in zip(per_mod.items(), (seg, bbox, obb), strict=True))
        tags = {"ok"} if passed else set(per_mod.values())
    seg_iou = seg["iou"] if seg else None
    bbox_best = box_iou.best_iou if bbox and bbox["evaluated"] else None
    obb_best = obb_iou.best_iou if obb and obb["evaluated"] else None
    if open_vocab:
        outcome = presence_cell(row["gt_present"], row["pred_present"])
    else:
        primary = next((v for v in (seg_iou, bbox_best, obb_best) if v is not None), 0.0)
        outcome = "hit" if primary >= HIT_IOU else "miss"
    metrics = [v for v in (seg_iou, bbox and bbox["f1"], obb and obb["f1"]) if v is not None]
    if sample.negative:
        quality = 0.0 if row["pred_present"] else 1.0
    else:
        quality = float(np.mean(metrics)) if metrics else 0.0
    return {
        "query_id": sample.sample_id,
        "text": sample.phrase,
        "category": sample.category,
        "polarity": "negative" if sample.negative else "positive",
        "outcome": outcome,
        "failure": _worst(tags),
        "failure_detail": detail,
        "failure_by_modality": {k: v for k, v in per_mod.items() if v is not None},
        "seg_iou": seg_iou,
        "bbox_f1": bbox["f1"] if bbox else None,
        "obb_f1": obb["f1"] if obb else None,
        "bbox_iou": bbox_best,
        "obb_iou": obb_best,
        "num_gt": max(len(sample.gt_boxes), len(sample.gt_obbs)),
        "num_pred": max(len(sample.pred_boxes), len(sample.pred_obbs)),
        "quality": quality,
        "image_path": sample.image_path,
    }


def query_rows(samples: Sequence[Sample] | Run, results: dict[str, Any] | None = None,
               ) -> list[dict[str, Any]]:
    """The explorer table: one row per query, sorted worst first (failed, low quality, id).

    Args:
        samples: a :class:`~ovearth_core.run.Run` (its kept box facts are used), or the
            evaluated samples, in the order of ``results["per_sample"]`` (the box facts are
            then computed here from exact IoU matrices).
        results: the output of :func:`ovearth_core.evaluate.evaluate_samples` (with samples).
    """
    if isinstance(samples, Run):
        run = samples
    elif results is None:
        raise TypeError("query_rows(samples, results): results are needed with samples")
    else:
        run = Run(results, samples, _exact_facts(samples, results["config"]["iou_threshold"]))
    threshold = run.config.iou_threshold
    open_vocab = run.config.task == "open_vocabulary"
    none = BoxFacts.of(np.zeros((0, 0)), threshold)
    rows = [query_row(s, run.row(s.sample_id), threshold, open_vocab,
                      run.facts("bbox", i) or none, run.facts("oriented_bbox", i) or none)
            for i, s in enumerate(run.samples)]
    return sort_worst_first(rows)


def _exact_facts(samples: Sequence[Sample], threshold: float) -> dict[str, list[BoxFacts]]:
    out = {}
    for key in ("bbox", "oriented_bbox"):
        oriented = key == "oriented_bbox"
        ious = geometry.iter_iou_matrices(
            [s.gt_obbs if oriented else s.gt_boxes for s in samples],
            [s.pred_obbs if oriented else s.pred_boxes for s in samples], oriented)
        out[key] = [BoxFacts.of(iou, threshold) for iou in ious]
    return out


def sort_worst_first(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["failure"] == "ok", r["quality"], r["query_id"]))


def _in_range(value: float | None, low: float, high: float) -> bool:
    if low <= 0 and high >= 1:
        return True
    return value is not None and low <= value <= high


def _haystack(row: dict[str, Any]) -> str:
    return f"{row['query_id']} {row['text']} {row['category']}".lower()


def filter_rows(rows: Sequence[dict[str, Any]], *, categories: Sequence[str] = (),
                outcomes: Sequence[str] = (), failures: Sequence[str] = (),
                polarity: str = "all", modality: str = "any",
                iou_range: tuple[float, float] = (0.0, 1.0), text: str = "",
                failed_only: bool = False, query_ids: Collection[str] | None = None,
                ) -> list[dict[str, Any]]:
    """Rows passing every filter, order kept. Empty selections mean "no filter".

    ``modality`` (``any``, ``segmentation``, ``bbox``, ``oriented_bbox``) keeps the
    queries evaluated in that modality and picks the IoU the ``iou_range`` applies
    to (mask IoU, best box IoU or best oriented-box IoU; ``any``: the first present).
    A full ``iou_range`` of (0, 1) keeps rows without an IoU. ``text`` matches the
    query text, id or category, case-insensitively. ``query_ids`` (``None``: no filter)
    keeps only those queries (e.g. the ones with a review tag).
    """
    column = {"segmentation": ("seg_iou",), "bbox": ("bbox_iou",),
              "oriented_bbox": ("obb_iou",), "any": ("seg_iou", "bbox_iou", "obb_iou")}[modality]
    needle = text.strip().lower()
    low, high = iou_range
    out = []
    for r in rows:
        iou = next((r[c] for c in column if r[c] is not None), None)
        if ((categories and r["category"] not in categories)
                or (outcomes and r["outcome"] not in outcomes)
                or (failures and r["failure"] not in failures)
                or (polarity != "all" and r["polarity"] != polarity)
                or (failed_only and found(r["failure"]))
                or (query_ids is not None and r["query_id"] not in query_ids)
                or (modality != "any" and iou is None)
                or not _in_range(iou, low, high)
                or (needle and needle not in _haystack(r))):
            continue
        out.append(r)
    return out


def failure_counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Number of queries per failure tag, in severity order (zero counts included)."""
    counts = dict.fromkeys(TAGS, 0)
    for r in rows:
        counts[r["failure"]] += 1
    return counts


def outcome_counts(rows: Iterable[dict[str, Any]], outcomes: Sequence[str]) -> dict[str, int]:
    """Number of queries per outcome, for the given outcomes in their order."""
    counts = dict.fromkeys(outcomes, 0)
    for r in rows:
        if r["outcome"] in counts:
            counts[r["outcome"]] += 1
    return counts


def category_rows(per_category: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flatten ``results["per_category"]`` into table rows (null metrics stay ``None``)."""
    out = []
    for c in per_category:
        row: dict[str, Any] = {"category": c["category"], "queries": c["num_queries"],
                               "positive": c["num_positive"], "negative": c["num_negative"]}
        presence = c.get("presence")
        if presence is not None:
            row["presence_accuracy"] = presence["accuracy"]
            row["false_positives"] = presence["fp"]
        if c["seg"] is not None:
            row["seg_miou"] = c["seg"]["miou"]
        for key, prefix in (("bbox", "bbox"), ("oriented_bbox", "obb")):
            if c[key] is not None:
                row[f"{prefix}_micro_f1"] = c[key]["micro_f1"]
        out.append(row)
    return out


def weakest(rows: Sequence[dict[str, Any]], metric: str, n: int = 15) -> list[dict[str, Any]]:
    """The ``n`` rows with the lowest non-null ``metric``, weakest first."""
    valued = [r for r in rows if r.get(metric) is not None and not math.isnan(r[metric])]
    return sorted(valued, key=lambda r: (r[metric], r["category"]))[:n]


def primary_metric(rows: Sequence[dict[str, Any]]) -> str | None:
    """The first per-category metric column present: seg mIoU, bbox F1, OBB F1."""
    for metric in ("seg_miou", "bbox_micro_f1", "obb_micro_f1"):
        if any(r.get(metric) is not None for r in rows):
            return metric
    return None
