"""Small OVEarth-Bench datasets for the comparison and report tests.

``build_dataset`` writes a ground truth with all three tasks, two prediction files
(A and B) and PNG images. Each annotation is a filled rectangle on a 96 × 80
(width × height) image, so masks, boxes and oriented boxes are all hand-checkable;
A predicts the rectangle shifted by 4 px, B by 8 px (B is worse on positives) and the
two submissions answer different negative queries.

``synthetic_result`` builds an evaluation-result dict directly from per-query IoUs and
presence flags (no masks) for statistical tests on thousands of queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
from PIL import Image

from ovearth_core.masks import encode

WIDTH, HEIGHT = 96, 80
CATEGORIES = ("pond", "bell tower", "ship")


@dataclass(frozen=True)
class Dataset:
    gt: Path
    pred_a: Path
    pred_b: Path
    images: Path


def _rect(x0: int, y0: int, x1: int, y1: int) -> npt.NDArray[np.uint8]:
    mask = np.zeros((HEIGHT, WIDTH), dtype=np.uint8)
    mask[y0:y1, x0:x1] = 1
    return mask


def _corners(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def _target(i: int) -> tuple[int, int, int, int]:
    k = i % 6
    return 10 + 5 * k, 12 + 3 * k, 50 + 5 * k, 44 + 3 * k


def _prediction(i: int, shift: int, qid: str) -> dict[str, Any]:
    x0, y0, x1, y1 = _target(i)
    x0, x1 = x0 + shift, x1 + shift
    return {
        "query_id": qid,
        "segmentation": encode(_rect(x0, y0, x1, y1)),
        "bbox": [{"bbox": [x0, y0, x1, y1], "score": 0.9}],
        "oriented_bbox": [{"polygon": _corners(x0, y0, x1, y1), "score": 0.8}],
    }


def _empty(qid: str) -> dict[str, Any]:
    return {"query_id": qid, "segmentation": None, "bbox": [], "oriented_bbox": []}


def build_dataset(root: Path, n_annotations: int = 6, missing_images: tuple[int, ...] = (),
                  write_images: bool = True) -> Dataset:
    """Write ``gt.json``, ``pred_a.json``, ``pred_b.json`` and ``images/`` under ``root``.

    Per annotation i: open vocabulary has two positive and two negative queries,
    referring and reasoning one query each. A misses every third positive vocabulary
    query (empty answer) and answers negatives with i even; B answers every positive and
    the negatives with i divisible by 3. Images listed in ``missing_images`` are not
    written.
    """
    root.mkdir(parents=True, exist_ok=True)
    images = root / "images"
    images.mkdir(exist_ok=True)
    rng = np.random.default_rng(7)
    annotations, ov, ref, rea = [], [], [], []
    preds: dict[str, dict[str, list[dict[str, Any]]]] = {
        name: {"open_vocabulary": [], "referring": [], "reasoning": []} for name in "ab"}
    for i in range(n_annotations):
        x0, y0, x1, y1 = _target(i)
        category = CATEGORIES[i % len(CATEGORIES)]
        image_path = f"images/img_{i}.png"
        if write_images and i not in missing_images:
            pixels = rng.integers(40, 120, size=(HEIGHT, WIDTH, 3), dtype=np.uint8)
            pixels[y0:y1, x0:x1] = (200, 180, 60)
            Image.fromarray(pixels).save(root / image_path)
        ann_id = f"{i + 1:06d}"
        annotations.append({
            "id": ann_id, "image_path": image_path, "width": WIDTH, "height": HEIGHT,
            "category_name": category, "segmentation": encode(_rect(x0, y0, x1, y1)),
            "bbox": [[x0, y0, x1 - x0, y1 - y0]], "oriented_bbox": [_corners(x0, y0, x1, y1)],
        })
        for j, kind in enumerate(("positive", "positive", "negative", "negative")):
            qid = f"ov_{4 * i + j + 1:06d}"
            ov.append({"query_id": qid, "ann_id": ann_id, "type": kind,
                       "phrase": f"{category} {kind} {j}"})
            if kind == "positive":
                a_empty = (2 * i + j) % 3 == 0
                preds["a"]["open_vocabulary"].append(
                    _empty(qid) if a_empty else _prediction(i, 4, qid))
                preds["b"]["open_vocabulary"].append(_prediction(i, 8, qid))
            else:
                preds["a"]["open_vocabulary"].append(
                    _prediction(i, 0, qid) if i % 2 == 0 else _empty(qid))
                preds["b"]["open_vocabulary"].append(
                    _prediction(i, 0, qid) if i % 3 == 0 else _empty(qid))
        for key, rows, prefix in (("referring", ref, "ref"), ("reasoning", rea, "rea")):
            qid = f"{prefix}_{i + 1:06d}"
            rows.append({"query_id": qid, "ann_id": ann_id,
                         "query": f"the {category} number {i} ({key})"})
            preds["a"][key].append(_prediction(i, 4 + i % 6, qid))
            preds["b"][key].append(_prediction(i, 10 - i % 6, qid))
    gt = {"annotations": annotations,
          "tasks": {"open_vocabulary": ov, "referring": ref, "reasoning": rea}}
    paths = Dataset(root / "gt.json", root / "pred_a.json", root / "pred_b.json", images)
    paths.gt.write_bytes(orjson.dumps(gt))
    paths.pred_a.write_bytes(orjson.dumps({"tasks": preds["a"]}))
    paths.pred_b.write_bytes(orjson.dumps({"tasks": preds["b"]}))
    return paths


def synthetic_result(iou: npt.ArrayLike, pred_present: npt.ArrayLike | None = None,
                     negative: npt.ArrayLike | None = None) -> dict[str, Any]:
    """An evaluation-result dict with a ``seg`` modality from per-query IoUs.

    Every positive query is evaluated with IoU ``iou[i]`` (intersection ``100·iou``,
    union 100, precision = recall = IoU). With ``negative`` given the task is open
    vocabulary and presence counts are filled in from ``pred_present``. Summary values
    are computed here with plain numpy, independently of :mod:`ovearth_core.analysis.compare`.
    """
    ious = np.asarray(iou, dtype=np.float64)
    n = ious.size
    neg = np.zeros(n, dtype=bool) if negative is None else np.asarray(negative, dtype=bool)
    present = (np.ones(n, dtype=bool) if pred_present is None
               else np.asarray(pred_present, dtype=bool))
    rows = []
    for i in range(n):
        evaluated = not neg[i]
        rows.append({
            "sample_id": f"q{i:05d}", "phrase": f"query {i}", "category": f"c{i % 5}",
            "negative": bool(neg[i]), "gt_present": not neg[i], "pred_present": bool(present[i]),
            "seg": {"evaluated": evaluated, "iou": float(ious[i]) if evaluated else None,
                    "precision": float(ious[i]) if evaluated else None,
                    "recall": float(ious[i]) if evaluated else None,
                    "intersection": 100 * float(ious[i]) if evaluated else 0, "union": 100.0},
            "bbox": None, "oriented_bbox": None,
        })
    pos = ~neg
    macro = float(ious[pos].mean())
    seg = {"positive_macro_precision": macro, "positive_macro_recall": macro,
           "positive_macro_miou": macro, "positive_micro_miou": macro}
    summary: dict[str, Any] = {"seg": seg, "bbox": None, "oriented_bbox": None}
    task = "referring"
    if negative is not None:
        task = "open_vocabulary"
        tp, fp = int((pos & present).sum()), int((neg & present).sum())
        tn, fn = int((neg & ~present).sum()), int((pos & ~present).sum())
        den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
        summary["presence"] = {"tp": tp, "fp": fp, "tn": tn, "fn": fn,
                               "mcc": None if den == 0 else (tp * tn - fp * fn) / den ** 0.5}
    return {"task": task, "config": {"iou_threshold": 0.5, "modalities": ["segmentation"]},
            "summary": summary, "per_sample": rows, "per_category": []}
