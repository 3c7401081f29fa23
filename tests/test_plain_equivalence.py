"""The optimised evaluator equals the plain implementation (benchmarks/plain.py) on random data.

Issue 6: "Metrics are identical before and after each optimisation". The plain
implementation decodes masks to pixels, computes box IoU pair by pair in Python
(oriented boxes by Sutherland-Hodgman clipping) and re-solves the matching at
every threshold, so it shares none of the optimised code paths.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from benchmarks import plain
from ovearth_core import masks
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples


def _rect_obb(x: float, y: float, w: float, h: float, angle: float) -> list[list[float]]:
    cx, cy, c, s = x + w / 2, y + h / 2, math.cos(angle), math.sin(angle)
    return [[cx + px * c - py * s, cy + px * s + py * c]
            for px, py in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))]


def _random_benchmark(tmp_path, seed: int):
    rng = np.random.default_rng(seed)
    anns, queries, rows = [], [], []
    for i in range(25):
        h, w = (int(v) for v in rng.integers(20, 70, 2))
        k = int(rng.integers(0, 6))
        boxes = []
        for _ in range(k):
            bw, bh = (float(v) for v in rng.integers(3, 15, 2))
            boxes.append([float(rng.integers(0, w - bw)), float(rng.integers(0, h - bh)), bw, bh])
        gt = np.zeros((h, w), np.uint8)
        for x, y, bw, bh in boxes:
            gt[int(y):int(y + bh), int(x):int(x + bw)] = 1
        aid = f"{i:06d}"
        anns.append({"id": aid, "image_path": f"images/{i}.png", "width": w, "height": h,
                     "category_name": f"cat{i % 4}",
                     "segmentation": masks.encode(gt) if gt.any() or rng.random() < 0.5 else None,
                     "bbox": boxes,
                     "oriented_bbox": [_rect_obb(*b, float(rng.uniform(0, 1))) for b in boxes]})
        for j in range(3):
            qid = f"ov_{3 * i + j:06d}"
            negative = j == 2
            queries.append({"query_id": qid, "ann_id": aid, "phrase": "thing",
                            "type": "negative" if negative else "positive"})
            if rng.random() < 0.1:
                continue  # missing row: scored empty
            pred = (rng.random((h, w)) < 0.3).astype(np.uint8) | (
                np.roll(gt, int(rng.integers(-3, 4)), axis=int(rng.integers(0, 2))))
            pboxes = [[x + rng.normal(0, 2), y + rng.normal(0, 2), bw, bh] for x, y, bw, bh in
                      boxes if rng.random() < 0.8]
            pboxes += [[float(rng.integers(0, w - 5)), float(rng.integers(0, h - 5)), 4.0, 4.0]
                       for _ in range(int(rng.integers(0, 3)))]
            rows.append({
                "query_id": qid,
                "segmentation": masks.encode(pred) if rng.random() < 0.8 else None,
                "bbox": [[x, y, x + bw, y + bh] for x, y, bw, bh in pboxes],
                "oriented_bbox": [_rect_obb(*b, float(rng.uniform(0, 1))) for b in pboxes],
            })
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps({"annotations": anns, "tasks": {"open_vocabulary": queries}}))
    pred_path.write_text(json.dumps({"tasks": {"open_vocabulary": rows}}))
    return gt_path, pred_path


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("iou_threshold", [0.3, 0.5, 0.75])
def test_optimised_equals_plain(tmp_path, seed: int, iou_threshold: float) -> None:
    gt, pred = _random_benchmark(tmp_path, seed)
    samples = load_samples(gt, pred, "vocabulary",
                           modalities="segmentation,bbox,oriented_bbox")
    fast = evaluate_samples(samples, iou_threshold)["summary"]
    slow = plain.evaluate(samples, iou_threshold)
    for modality, values in slow.items():
        for key, expected in values.items():
            assert fast[modality][key] == pytest.approx(expected, abs=1e-9), (modality, key)
