"""Evaluation of loaded samples into the spec's output JSON structure."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from . import coverage, field_metrics, geometry, metrics
from .errors import OVEarthInputError, Problem
from .formulas import ratio
from .gcpause import gc_paused
from .presence import presence_cell, presence_metrics
from .run import BoxFacts, Run
from .types import IOU_THRESHOLDS, MODALITIES, OUTPUT_KEYS, Sample, SampleList, check_pair_cap


def check_iou_threshold(iou_threshold: float) -> None:
    """Raise :class:`OVEarthInputError` unless ``iou_threshold`` is a number in (0, 1]."""
    if (isinstance(iou_threshold, bool) or not isinstance(iou_threshold, (int, float))
            or not math.isfinite(iou_threshold) or not 0 < iou_threshold <= 1):
        raise OVEarthInputError([Problem("(options)", "--iou-threshold",
                                         "a number in (0, 1]", repr(iou_threshold))])


def _per_sample(sample: Sample, modalities: Sequence[str],
                det: dict[str, dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "sample_id": sample.sample_id,
        "phrase": sample.phrase,
        "negative": sample.negative,
        "gt_present": not sample.negative,
        "pred_present": False,
        "image_path": sample.image_path,
        "ann_id": sample.ann_id,
        "category": sample.category,
        "seg": metrics.seg_entry(sample) if "segmentation" in modalities else None,
        "bbox": det.get("bbox"),
        "oriented_bbox": det.get("oriented_bbox"),
    }
    row["pred_present"] = any(row[OUTPUT_KEYS[m]]["pred_present"] for m in modalities)
    return row


def _det_entries(samples: Sequence[Sample], modality: str, iou_threshold: float,
                 open_vocab: bool, facts: dict[str, list[BoxFacts]] | None = None
                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-sample entries (with ``top1_iou``) and the field-metric summary keys.

    The IoU matrices are computed and used a block of queries at a time
    (:func:`~ovearth_core.geometry.pair_blocks`): only the numbers taken from them (the
    entries, each top-1 box's column, the box facts) outlive their block, so memory is
    bounded by the largest query, not by the file.
    """
    oriented = modality == "oriented_bbox"
    gts = [s.gt_obbs if oriented else s.gt_boxes for s in samples]
    preds = [s.pred_obbs if oriented else s.pred_boxes for s in samples]
    negatives = [s.negative for s in samples]
    # IoUs below every threshold in use change no result: let the geometry skip them,
    # unless the facts are kept (they need every overlapping pair's exact IoU).
    min_iou = 0.0 if facts is not None else min(iou_threshold, IOU_THRESHOLDS[0])
    boxes = field_metrics.EvaluatedBoxes.of(
        samples, modality, [not neg and len(g) > 0 for g, neg in zip(gts, negatives,
                                                                     strict=True)])
    top = dict(zip(boxes.where.tolist(), field_metrics.top1_boxes(boxes).tolist(),
                   strict=True))
    columns: dict[int, geometry.FloatArray] = {}
    entries: list[dict[str, Any]] = []
    kept: list[BoxFacts] = []
    for lo, hi in geometry.pair_blocks([len(g) * len(p) for g, p in zip(gts, preds,
                                                                         strict=True)]):
        ious = geometry.iou_matrices(gts[lo:hi], preds[lo:hi], oriented, min_iou=min_iou)
        block = metrics.det_entries(ious, negatives[lo:hi], iou_threshold)
        if facts is not None:
            kept += BoxFacts.of_many(ious, iou_threshold, [e["matches"] for e in block])
        entries += block
        for i, iou in enumerate(ious, start=lo):
            if top.get(i, -1) >= 0:
                columns[i] = iou[:, top[i]].copy()
    if facts is not None:
        facts[modality] = kept
    top1, extra = field_metrics.box_field_metrics(
        samples, entries, modality, open_vocab, boxes,
        [columns.get(i) for i in boxes.where.tolist()], min_iou)
    for entry, value in zip(entries, top1.tolist(), strict=True):
        entry["top1_iou"] = None if math.isnan(value) else value
    return entries, extra


def _per_category(samples: Sequence[Sample], rows: Sequence[dict[str, Any]],
                  open_vocab: bool) -> list[dict[str, Any]]:
    groups: dict[str, list[tuple[Sample, dict[str, Any]]]] = defaultdict(list)
    for s, r in zip(samples, rows, strict=True):
        groups[s.category].append((s, r))
    out = []
    for category in sorted(groups):
        members = groups[category]
        entry: dict[str, Any] = {
            "category": category,
            "num_queries": len(members),
            "num_positive": sum(not s.negative for s, _ in members),
            "num_negative": sum(s.negative for s, _ in members),
        }
        if open_vocab:
            counts = _presence_counts([r for _, r in members])
            entry["presence"] = {**counts, "accuracy": ratio(counts["tp"] + counts["tn"],
                                                             len(members))}
        seg = [r["seg"] for _, r in members if r["seg"] and r["seg"]["evaluated"]]
        entry["seg"] = None if members[0][1]["seg"] is None else {
            "num_evaluated": len(seg),
            "miou": metrics._mean([e["iou"] for e in seg]),
            "cum_iou": field_metrics.cum_iou(seg),
        }
        for key in ("bbox", "oriented_bbox"):
            if members[0][1][key] is None:
                entry[key] = None
                continue
            det = [r[key] for _, r in members if r[key]["evaluated"]]
            tp = sum(e["tp"] for e in det)
            fp = sum(e["fp"] for e in det)
            fn = sum(e["fn"] for e in det)
            entry[key] = {"num_evaluated": len(det), "tp": tp, "fp": fp, "fn": fn,
                          "micro_f1": metrics.micro_prf(tp, fp, fn)[2]}
        out.append(entry)
    return out


def _presence_counts(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    counts = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
    for r in rows:
        counts[presence_cell(r["gt_present"], r["pred_present"]).lower()] += 1
    return counts


def evaluate_samples(samples: SampleList, iou_threshold: float = 0.5,
                     modalities: Sequence[str] | None = None) -> dict[str, Any]:
    """Evaluate one task's samples.

    Args:
        samples: from one of the ``load_*_samples`` functions.
        iou_threshold: box matching threshold in (0, 1]; does not affect masks.
        modalities: defaults to the modalities the samples were loaded with.

    Returns:
        The spec's output dict: ``task``, ``config``, ``summary``, ``per_sample``,
        plus ``per_category``.
    """
    check_iou_threshold(iou_threshold)
    with gc_paused():
        return _evaluate(samples, iou_threshold, modalities)


def evaluate_run(samples: SampleList, iou_threshold: float = 0.5) -> Run:
    """:func:`evaluate_samples`, plus what later stages reuse (:class:`~ovearth_core.run.Run`):
    the samples and, per box modality and query, the :class:`~ovearth_core.run.BoxFacts`.
    ``run.results`` equals ``evaluate_samples(samples, iou_threshold)``."""
    check_iou_threshold(iou_threshold)
    facts: dict[str, list[BoxFacts]] = {}
    with gc_paused():
        results = _evaluate(samples, iou_threshold, None, facts)
    return Run(results, samples, facts)


def _evaluate(samples: SampleList, iou_threshold: float, modalities: Sequence[str] | None,
              facts: dict[str, list[BoxFacts]] | None = None) -> dict[str, Any]:
    mods = tuple(modalities if modalities is not None else samples.modalities)
    task = getattr(samples, "task", "open_vocabulary")
    open_vocab = task == "open_vocabulary"
    # Samples built by hand have not met the loader's check.
    check_pair_cap(samples, mods, "(samples)")
    det = {m: _det_entries(samples, m, iou_threshold, open_vocab, facts)
           for m in ("bbox", "oriented_bbox") if m in mods}
    rows = [_per_sample(s, mods, {m: entries[i] for m, (entries, _) in det.items()})
            for i, s in enumerate(samples)]
    positives = [s for s in samples if not s.negative]
    summary: dict[str, Any] = {"num_samples": len(samples), "num_positive": len(positives)}
    if open_vocab:
        counts = _presence_counts(rows)
        num_negative = counts["fp"] + counts["tn"]
        summary["num_negative"] = num_negative
        summary["negative_accuracy"] = ratio(counts["tn"], num_negative)
        summary["negative_false_positive_rate"] = ratio(counts["fp"], num_negative)
        summary["presence"] = presence_metrics(**counts)
    if "segmentation" in mods:
        seg_entries = [r["seg"] for r in rows]
        summary["seg"] = _with_keys(metrics.seg_summary(samples, seg_entries),
                                    field_metrics.seg_field_metrics(samples, seg_entries,
                                                                    open_vocab))
    else:
        summary["seg"] = None
    for key in ("bbox", "oriented_bbox"):
        summary[key] = (_with_keys(metrics.det_summary(det[key][0]), det[key][1])
                        if key in mods else None)
    config: dict[str, Any] = {
        "iou_threshold": iou_threshold,
        "modalities": sorted(mods),
        "score_threshold": getattr(samples, "score_threshold", None),
        "bbox_format": getattr(samples, "bbox_format", "xyxy"),
    }
    if getattr(samples, "concave_obb", False):  # an extension beyond the spec: said when used
        config["concave_obb"] = True
    cov = coverage.coverage(samples, mods, getattr(samples, "submitted", None),
                            getattr(samples, "unknown_task_keys", ()))
    return {
        "task": task,
        "config": config,
        "summary": summary,
        "per_sample": rows,
        "per_category": _per_category(samples, rows, open_vocab),
        "coverage": cov,
        "warnings": coverage.warnings(cov, task),
    }


def _with_keys(summary: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with the ``extra`` keys added before its ``key_metrics``."""
    key_metrics = summary.pop("key_metrics")
    return {**summary, **extra, "key_metrics": key_metrics}


def _evaluate_task(samples: SampleList, task: str, iou_threshold: float) -> dict[str, Any]:
    if isinstance(samples, SampleList) and samples.task != task:
        raise OVEarthInputError([Problem("(api)", "samples", f"samples of the {task} task",
                                         f"samples of the {samples.task} task")])
    if not isinstance(samples, SampleList):
        samples = SampleList(list(samples), task=task, modalities=MODALITIES,
                             score_threshold=None, bbox_format="xyxy")
    return evaluate_samples(samples, iou_threshold)


def evaluate_open_vocab(samples: SampleList, iou_threshold: float = 0.5) -> dict[str, Any]:
    """Evaluate open-vocabulary samples (presence, negatives and every enabled modality)."""
    return _evaluate_task(samples, "open_vocabulary", iou_threshold)


def evaluate_referring(samples: SampleList, iou_threshold: float = 0.5) -> dict[str, Any]:
    """Evaluate referring-expression samples."""
    return _evaluate_task(samples, "referring", iou_threshold)


def evaluate_reasoning(samples: SampleList, iou_threshold: float = 0.5) -> dict[str, Any]:
    """Evaluate reasoning samples."""
    return _evaluate_task(samples, "reasoning", iou_threshold)
