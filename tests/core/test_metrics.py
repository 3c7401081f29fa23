"""Every summary and per-sample number of the evaluator against an independent pipeline.

Random ground truth and predictions (``refs.random_benchmark``) are written as
JSON, loaded with ``ovearth_core.io.load_*_samples`` and evaluated with
``evaluate_open_vocab/referring/reasoning``; the expected numbers come from
``refs.reference_evaluation``, which reads the same JSON documents with
pycocotools decode + numpy for masks, scalar box IoU, Sutherland-Hodgman polygon
IoU and brute-force matching.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import refs

from ovearth_core import (
    evaluate_open_vocab,
    evaluate_reasoning,
    evaluate_referring,
    geometry,
    metrics,
)
from ovearth_core.io import load_open_vocab_samples, load_reasoning_samples, load_referring_samples
from ovearth_core.types import Sample

ALL = ("segmentation", "bbox", "oriented_bbox")
TASKS = {
    "vocabulary": ("open_vocabulary", load_open_vocab_samples, evaluate_open_vocab),
    "referring": ("referring", load_referring_samples, evaluate_referring),
    "reasoning": ("reasoning", load_reasoning_samples, evaluate_reasoning),
}
OUT = {"segmentation": "seg", "bbox": "bbox", "oriented_bbox": "oriented_bbox"}
# Keys of refs' per-query detection stats that are the reference's working data.
FIELD_REFERENCE_KEYS = {"matched_total", "top1", "gt_bins", "pred_bins", "gt_hit", "pred_hit"}


def assert_same(got: Any, expected: Any, where: str) -> None:
    """Recursive comparison: every key of ``expected`` must be in ``got`` with the same value
    (floats within 1e-9, nulls as nulls, integers exactly)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: expected an object, got {got!r}"
        for key, value in expected.items():
            assert key in got, f"{where}: missing key {key!r}"
            assert_same(got[key], value, f"{where}.{key}")
    elif expected is None:
        assert got is None, f"{where}: expected null, got {got!r}"
    elif isinstance(expected, bool):
        assert got is expected, f"{where}: expected {expected}, got {got!r}"
    elif isinstance(expected, int):
        assert got == expected and not isinstance(got, bool), f"{where}: {got!r} != {expected}"
    elif isinstance(expected, float):
        assert isinstance(got, float | int) and not isinstance(got, bool), f"{where}: {got!r}"
        assert math.isclose(got, expected, rel_tol=0, abs_tol=1e-9), \
            f"{where}: {got!r} != {expected!r}"
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def run(tmp_path: Path, gt: dict[str, Any], pred: dict[str, Any], task: str,
        modalities: tuple[str, ...], iou_threshold: float = 0.5,
        score_threshold: float | None = None, bbox_format: str = "xyxy") -> dict[str, Any]:
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(pred))
    _, load, evaluate = TASKS[task]
    samples = load(gt_path, pred_path, score_threshold=score_threshold, bbox_format=bbox_format,
                   modalities=set(modalities))
    return evaluate(samples, iou_threshold=iou_threshold)


SCENARIOS = [
    pytest.param(dict(seed=1, task="vocabulary", modalities=ALL), id="ov-all"),
    pytest.param(dict(seed=2, task="vocabulary", modalities=("segmentation",)), id="ov-seg"),
    pytest.param(dict(seed=3, task="vocabulary", modalities=("bbox",), score_threshold=0.3),
                 id="ov-bbox-score0.3"),
    pytest.param(dict(seed=4, task="vocabulary", modalities=("bbox", "oriented_bbox"),
                      bbox_format="xywh", iou_threshold=0.3, scored=False), id="ov-det-xywh-t0.3"),
    pytest.param(dict(seed=5, task="vocabulary", modalities=ALL, iou_threshold=0.55,
                      score_threshold=0.5), id="ov-all-t0.55-score0.5"),
    pytest.param(dict(seed=6, task="vocabulary", modalities=("oriented_bbox",), scored=False),
                 id="ov-obb"),
    pytest.param(dict(seed=7, task="referring", modalities=ALL, scored=False), id="ref-all"),
    pytest.param(dict(seed=8, task="referring", modalities=("segmentation", "bbox"),
                      iou_threshold=0.75, bbox_format="xywh"), id="ref-seg-bbox-t0.75"),
    pytest.param(dict(seed=9, task="reasoning", modalities=ALL, score_threshold=0.3),
                 id="rea-all-score0.3"),
    pytest.param(dict(seed=10, task="reasoning", modalities=("oriented_bbox",),
                      iou_threshold=0.9), id="rea-obb-t0.9"),
]


def _scenario(tmp_path: Path, cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    cfg = dict(cfg)
    seed, task, modalities = cfg.pop("seed"), cfg.pop("task"), cfg.pop("modalities")
    scored = cfg.pop("scored", True)
    bbox_format = cfg.get("bbox_format", "xyxy")
    gt, pred = refs.random_benchmark(seed, bbox_format=bbox_format, scored=scored,
                                     n_ov=40 if task == "vocabulary" else 8,
                                     n_ref=16, n_rea=16)
    got = run(tmp_path, gt, pred, task, modalities, **cfg)
    expected = refs.reference_evaluation(gt, pred, TASKS[task][0], modalities,
                                         cfg.get("iou_threshold", 0.5),
                                         cfg.get("score_threshold"), bbox_format)
    return got, expected


@pytest.mark.parametrize("cfg", SCENARIOS)
def test_summary_matches_reference(tmp_path: Path, cfg: dict[str, Any]) -> None:
    """Spec "Metrics" (presence, segmentation, detection tables), "Negative Queries" and
    "Modalities, Empty Predictions, and Duplicate IDs": every summary number equals the
    independent pipeline's, including Pr@, annotation/category macro mIoU, matched IoU and
    micro F1 at each IoU threshold 0.50, 0.55, ..., 0.95; and the added field metrics
    (class-wise cumulative IoU, GRES gIoU/cIoU, top-1 grounding, counting, size bins)."""
    got, expected = _scenario(tmp_path, cfg)
    assert_same(got["summary"], expected["summary"], "summary")
    for mod in ALL:
        key = OUT[mod]
        if mod not in cfg["modalities"]:
            assert got["summary"][key] is None
            continue
        summary = got["summary"][key]
        assert summary["num_samples_evaluated"] > 0  # the scenario exercises this modality
        keys = metrics.SEG_KEY_METRICS if key == "seg" else metrics.DET_KEY_METRICS
        assert summary["key_metrics"] == {k: summary[k] for k in keys}
        assert set(summary["key_metrics"]) == set(keys)
    if "presence" in got["summary"]:
        assert got["summary"]["presence"]["key_metrics"] == {
            "mcc": got["summary"]["presence"]["mcc"]}


@pytest.mark.parametrize("cfg", SCENARIOS)
def test_per_sample_matches_reference(tmp_path: Path, cfg: dict[str, Any]) -> None:
    """Spec "Output JSON" per-sample entries: pixel counts and ratios, detection counts,
    per-query P/R/F1 and mean matched IoU, presence flags; in ground-truth order."""
    got, expected = _scenario(tmp_path, cfg)
    rows = got["per_sample"]
    assert [r["sample_id"] for r in rows] == [e["id"] for e in expected["per_query"]]
    for row, exp in zip(rows, expected["per_query"], strict=True):
        where = row["sample_id"]
        assert row["negative"] is exp["negative"]
        assert row["gt_present"] is (not exp["negative"])
        assert row["pred_present"] is exp["pred_present"]
        if "segmentation" in cfg["modalities"]:
            st = exp["seg"]
            seg = dict(st)
            if st["evaluated"]:
                i, u, g, p = st["intersection"], st["union"], st["gt_area"], st["pred_area"]
                seg.update(iou=i / u, dice=2 * i / (g + p), f1=2 * i / (g + p),
                           precision=i / p if p else 0.0, recall=i / g)
            else:
                seg.update(iou=None, dice=None, f1=None, precision=None, recall=None)
            seg.update(gt_present=st["gt_area"] > 0, pred_present=st["pred_area"] > 0)
            assert_same(row["seg"], seg, f"{where}.seg")
        else:
            assert row["seg"] is None
        for mod in ("bbox", "oriented_bbox"):
            if mod not in cfg["modalities"]:
                assert row[mod] is None
                continue
            det = {k: v for k, v in exp[mod].items() if k not in FIELD_REFERENCE_KEYS}
            det.update(gt_present=det["num_gt"] > 0, pred_present=det["num_pred"] > 0,
                       top1_iou=exp[mod]["top1"][0] if exp[mod]["top1"] else None)
            assert_same(row[mod], det, f"{where}.{mod}")
            assert len(row[mod]["matches"]) == row[mod]["tp"]
            if row[mod]["tp"]:
                assert sum(m[2] for m in row[mod]["matches"]) == pytest.approx(
                    exp[mod]["matched_total"], abs=1e-9)


@pytest.mark.parametrize("cfg", SCENARIOS[:3] + SCENARIOS[6:7])
def test_per_category_matches_reference(tmp_path: Path, cfg: dict[str, Any]) -> None:
    """Project addition: ``per_category`` groups queries by the annotation's category."""
    got, expected = _scenario(tmp_path, cfg)
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in expected["per_query"]:
        groups.setdefault(e["category"], []).append(e)
    assert [c["category"] for c in got["per_category"]] == sorted(groups)
    for entry in got["per_category"]:
        members = groups[entry["category"]]
        assert entry["num_queries"] == len(members)
        assert entry["num_negative"] == sum(e["negative"] for e in members)
        if "segmentation" in cfg["modalities"]:
            ious = [e["seg"]["intersection"] / e["seg"]["union"] for e in members
                    if e["seg"]["evaluated"]]
            assert entry["seg"]["num_evaluated"] == len(ious)
            assert_same(entry["seg"]["miou"], sum(ious) / len(ious) if ious else None,
                        f"{entry['category']}.seg.miou")
            union = sum(e["seg"]["union"] for e in members if e["seg"]["evaluated"])
            assert_same(entry["seg"]["cum_iou"],
                        sum(e["seg"]["intersection"] for e in members if e["seg"]["evaluated"])
                        / union if union else None, f"{entry['category']}.seg.cum_iou")
        if "bbox" in cfg["modalities"]:
            ev = [e["bbox"] for e in members if e["bbox"]["evaluated"]]
            tp = sum(e["tp"] for e in ev)
            n = sum(e["num_pred"] + e["num_gt"] for e in ev)
            assert entry["bbox"]["tp"] == tp
            assert_same(entry["bbox"]["micro_f1"], 2 * tp / n if n else None,
                        f"{entry['category']}.bbox.micro_f1")


# --------------------------------------------------------- per-query entries by hand


def _sample(**kw: Any) -> Sample:
    base = dict(sample_id="q", phrase="p", negative=False, image_path="i.tif", ann_id="a",
                category="c", width=4, height=3)
    base.update(kw)
    return Sample(**base)


def _rle(mask: list[list[int]]) -> dict[str, Any]:
    from pycocotools import mask as cocomask

    return cocomask.encode(np.asfortranarray(np.asarray(mask, dtype=np.uint8)))


GT3x4 = [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]]


@pytest.mark.parametrize(
    ("pred", "negative", "expected"),
    [
        (GT3x4, False, dict(intersection=4, union=4, iou=1.0, dice=1.0, precision=1.0,
                            recall=1.0, evaluated=True)),
        ([[0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]], False,
         dict(intersection=2, union=6, iou=2 / 6, dice=0.5, precision=0.5, recall=0.5,
              evaluated=True)),
        ([[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], False,
         dict(intersection=1, union=4, iou=0.25, dice=2 / 5, precision=1.0, recall=0.25,
              evaluated=True)),
        (None, False, dict(intersection=0, union=4, iou=0.0, dice=0.0, precision=0.0,
                           recall=0.0, evaluated=True, pred_present=False)),
        (GT3x4, True, dict(intersection=0, gt_area=0, iou=None, dice=None, precision=None,
                           recall=None, evaluated=False, pred_present=True)),
    ],
    ids=["exact", "half-shift", "subset", "empty-pred", "negative"],
)
def test_seg_entry_hand_worked(pred: list[list[int]] | None, negative: bool,
                               expected: dict[str, Any]) -> None:
    """Spec "Segmentation Metrics": IoU = I/U, Dice = 2I/(|GT|+|Pred|), precision I/|Pred|,
    recall I/|GT|; an empty prediction on a positive scores 0 (project convention); a
    negative query has no target geometry and null quality metrics."""
    sample = _sample(negative=negative, gt_mask=None if negative else _rle(GT3x4),
                     pred_mask=None if pred is None else _rle(pred))
    assert_same(metrics.seg_entry(sample), expected, "seg")


@pytest.mark.parametrize(
    ("gt", "pred", "threshold", "expected"),
    [
        ([[0, 0, 100, 1]], [[0, 0, 55, 1]], 0.5,
         dict(tp=1, fp=0, fn=0, mean_matched_iou=0.55, tp_at=[1, 1] + [0] * 8)),
        ([[0, 0, 100, 1]], [[0, 0, 55, 1]], 0.55, dict(tp=1, tp_at=[1, 1] + [0] * 8)),
        ([[0, 0, 100, 1]], [[0, 0, 55, 1]], 0.56, dict(tp=0, fp=1, fn=1, f1=0.0,
                                                       mean_matched_iou=None)),
        ([[0, 0, 10, 10], [10, 0, 20, 10]], [[0, 0, 10, 10], [0, 0, 10, 10], [30, 0, 40, 10]],
         0.5, dict(tp=1, fp=2, fn=1, precision=1 / 3, recall=0.5, f1=2 / 5,
                   mean_matched_iou=1.0, tp_at=[1] * 10)),
        ([[0, 0, 10, 10]], [], 0.5, dict(tp=0, fp=0, fn=1, precision=0.0, recall=0.0, f1=0.0,
                                         evaluated=True, pred_present=False)),
        ([], [[0, 0, 10, 10]], 0.5, dict(tp=0, fp=1, fn=0, precision=None, recall=None,
                                         f1=None, evaluated=False, gt_present=False)),
    ],
    ids=["iou-0.55-at-0.5", "iou-0.55-at-0.55", "iou-0.55-at-0.56", "duplicate-pred",
         "empty-pred", "no-usable-gt"],
)
def test_det_entry_hand_worked(gt: list[list[float]], pred: list[list[float]], threshold: float,
                               expected: dict[str, Any]) -> None:
    """Spec "Detection Metrics": one-to-one pairs with IoU at or above the threshold (an IoU of
    exactly 0.55 matches at 0.55); duplicates are false positives; an empty prediction on an
    evaluated query scores P/R/F1 0 (project convention); no GT boxes -> not evaluated."""
    g = np.asarray(gt, float).reshape(-1, 4)
    p = np.asarray(pred, float).reshape(-1, 4)
    entry = metrics.det_entry(geometry.box_iou_matrix(g, p), False, threshold)
    assert_same(entry, expected, "bbox")
    poly = [[[x1, y1], [x2, y1], [x2, y2], [x1, y2]] for x1, y1, x2, y2 in gt]
    ppoly = [[[x1, y1], [x1, y2], [x2, y2], [x2, y1]] for x1, y1, x2, y2 in pred]  # CW
    oriented = metrics.det_entry(
        geometry.obb_iou_matrix(np.asarray(poly, float).reshape(-1, 4, 2),
                                np.asarray(ppoly, float).reshape(-1, 4, 2)), False, threshold)
    assert_same(oriented, expected, "oriented_bbox")
