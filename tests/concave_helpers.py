"""A benchmark whose oriented boxes are concave: DOTA's "dart" (tests/core/test_spec_concave_obb.py,
tests/app/test_app_concave_obb.py).

One open-vocabulary query ``ov1`` on a 200 x 200 image: its ground-truth oriented box is the
dart ``(0, 0), (100, 0), (20, 20), (0, 100)`` (the vertex (20, 20) inside the triangle of the
other three; area 2,000 by the shoelace formula), predicted once, as the same dart (score
0.9). A second query ``ov2`` has a convex square, predicted by a concave box inside it, so a
prediction alone can be what the spec refuses. By DOTA_devkit's polygon IoU
(:func:`refs.devkit_poly_iou`): the dart against itself 1; ``ov2``'s prediction against its
square, :data:`OV2_IOU`.
"""

from __future__ import annotations

import json
from pathlib import Path

import refs
from PIL import Image

DART = [[0, 0], [100, 0], [20, 20], [0, 100]]
SQUARE = [[0, 0], [60, 0], [60, 60], [0, 60]]
INSIDE = [[0, 0], [60, 0], [30, 10], [0, 60]]  # concave: (30, 10) inside the other three's
OV2_IOU = refs.devkit_poly_iou([tuple(p) for p in INSIDE], [tuple(p) for p in SQUARE])


def write_benchmark(root: Path, gt_concave: bool = True) -> tuple[Path, Path]:
    """``root/ground_truth.json`` and ``root/predictions/dart.json``; without ``gt_concave``
    the first ground truth is the square too (only the predictions are concave)."""
    first = DART if gt_concave else SQUARE
    anns = [{"id": f"a{k}", "image_path": "images/p.png", "width": 200, "height": 200,
             "category_name": "plane", "bbox": [[0, 0, 100, 100]], "oriented_bbox": [poly]}
            for k, poly in ((1, first), (2, SQUARE))]
    gt = {"annotations": anns,
          "tasks": {"open_vocabulary": [
              {"query_id": "ov1", "ann_id": "a1", "type": "positive", "phrase": "plane"},
              {"query_id": "ov2", "ann_id": "a2", "type": "positive", "phrase": "plane"}],
              "referring": [], "reasoning": []}}
    pred = {"tasks": {"open_vocabulary": [
        {"query_id": "ov1", "oriented_bbox": [{"polygon": DART, "score": 0.9}]},
        {"query_id": "ov2", "oriented_bbox": [{"polygon": INSIDE, "score": 0.8}]}]}}
    (root / "predictions").mkdir(parents=True, exist_ok=True)
    (root / "images").mkdir(exist_ok=True)
    Image.new("RGB", (200, 200), (90, 110, 90)).save(root / "images" / "p.png")
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "predictions" / "dart.json").write_text(json.dumps(pred))
    return root / "ground_truth.json", root / "predictions" / "dart.json"
