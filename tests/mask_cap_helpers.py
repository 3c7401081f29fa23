"""A benchmark whose one prediction mask is over the spec's 100,000,000 pixels
(tests/core/test_spec_mask_cap.py, tests/app/test_app_large_masks.py)."""

from __future__ import annotations

import json
from pathlib import Path

import refs

H, W = 10_000, 12_000  # 120,000,000 pixels: over the spec's cap, within the codec's


def runs(y0: int, y1: int, x0: int, x1: int) -> list[int]:
    """Column-major runs (background first) of the rectangle rows y0..y1, cols x0..x1."""
    runs, at = [], 0
    for x in range(x0, x1):
        runs += [x * H + y0 - at, y1 - y0]
        at = x * H + y1
    return [*runs, H * W - at]


def write_benchmark(tmp_path: Path) -> tuple[Path, Path]:
    gt_rle = {"size": [H, W], "counts": refs.encode_runs_string(runs(100, 300, 50, 150))}
    pred_rle = {"size": [H, W], "counts": refs.encode_runs_string(runs(200, 300, 50, 250))}
    gt = {"annotations": [{"id": "a1", "image_path": "big.tif", "width": W, "height": H,
                           "category_name": "ship", "segmentation": gt_rle}],
          "tasks": {"open_vocabulary": [{"query_id": "ov1", "ann_id": "a1",
                                         "type": "positive", "phrase": "ship"}],
                    "referring": [], "reasoning": []}}
    pred = {"tasks": {"open_vocabulary": [{"query_id": "ov1", "segmentation": pred_rle}]}}
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "pred.json").write_text(json.dumps(pred))
    return tmp_path / "gt.json", tmp_path / "pred.json"
