"""Synthetic ground truth and submissions for the analysis tests (sweep, AP, attribution, ranks).

Everything is seeded and small (64 x 64 images) so that tests run in seconds. Documents are
plain JSON-ready dicts in the spec's formats; ``write_pair`` puts them on disk for
``io.load_samples``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ovearth_core import masks
from ovearth_core.types import Sample, SampleList

SIZE = 64


def rect_mask(boxes: list[list[float]], size: int = SIZE) -> np.ndarray:
    """0/1 ``(size, size)`` mask, the union of integer-rounded xyxy rectangles."""
    out = np.zeros((size, size), dtype=np.uint8)
    for x1, y1, x2, y2 in boxes:
        out[int(round(y1)):int(round(y2)), int(round(x1)):int(round(x2))] = 1
    return out


def corners(box: list[float], angle: float = 0.0) -> list[list[float]]:
    """Four boundary-ordered vertices of an xyxy box rotated by ``angle`` radians about its
    centre."""
    x1, y1, x2, y2 = box
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    pts = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]]) - [cx, cy]
    c, s = np.cos(angle), np.sin(angle)
    rot = pts @ np.array([[c, s], [-s, c]]) + [cx, cy]
    return [[round(float(x), 3), round(float(y), 3)] for x, y in rot]


def _random_box(rng: np.random.Generator) -> list[float]:
    w, h = rng.integers(6, 20, size=2)
    x, y = rng.integers(0, SIZE - w), rng.integers(0, SIZE - h)
    return [float(x), float(y), float(x + w), float(y + h)]


def _jitter(box: list[float], rng: np.random.Generator, scale: float) -> list[float]:
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    dx, dy = rng.normal(0, scale * w), rng.normal(0, scale * h)
    nx1 = float(np.clip(round(x1 + dx), 0, SIZE - 2))
    ny1 = float(np.clip(round(y1 + dy), 0, SIZE - 2))
    return [nx1, ny1, float(min(SIZE, nx1 + max(2, round(w)))),
            float(min(SIZE, ny1 + max(2, round(h))))]


def make_ground_truth(seed: int = 0, n_annotations: int = 24, n_categories: int = 6,
                      ) -> dict[str, Any]:
    """A ground-truth document with 1-4 boxes per annotation, masks = union of the boxes,
    oriented boxes = the boxes' corners, two positive and two negative open-vocabulary
    queries and one referring query per annotation."""
    rng = np.random.default_rng(seed)
    anns, ov, ref = [], [], []
    for i in range(n_annotations):
        boxes = [_random_box(rng) for _ in range(int(rng.integers(1, 5)))]
        ann_id = f"{i:06d}"
        anns.append({
            "id": ann_id, "image_path": f"images/{i}.png", "width": SIZE, "height": SIZE,
            "category_name": f"cat{i % n_categories}",
            "segmentation": masks.encode(rect_mask(boxes)),
            "bbox": [[b[0], b[1], b[2] - b[0], b[3] - b[1]] for b in boxes],
            "oriented_bbox": [corners(b) for b in boxes],
        })
        for kind in ("positive", "positive", "negative", "negative"):
            ov.append({"query_id": f"ov_{len(ov) + 1:06d}", "ann_id": ann_id, "type": kind,
                       "phrase": f"{kind} {i}"})
        ref.append({"query_id": f"ref_{i + 1:06d}", "ann_id": ann_id, "query": f"ref {i}"})
    return {"annotations": anns, "tasks": {"open_vocabulary": ov, "referring": ref,
                                           "reasoning": []}}


def make_predictions(gt: dict[str, Any], seed: int = 1, skill: float = 0.7,
                     scored: bool = True) -> dict[str, Any]:
    """A noisy submission for every task of ``gt``: jittered boxes of the ground truth,
    duplicates, background boxes, empty rows, hallucinations on negatives; scores rounded to
    two decimals (so that ties occur)."""
    rng = np.random.default_rng(seed)
    anns = {a["id"]: a for a in gt["annotations"]}
    out: dict[str, list[dict[str, Any]]] = {}
    for task, rows in gt["tasks"].items():
        preds = []
        for q in rows:
            ann = anns[q["ann_id"]]
            gt_boxes = [[x, y, x + w, y + h] for x, y, w, h in ann["bbox"]]
            negative = q.get("type") == "negative"
            boxes: list[list[float]] = []
            if negative:
                if rng.random() < 1 - skill:
                    boxes = [_random_box(rng) for _ in range(int(rng.integers(1, 3)))]
            elif rng.random() < 0.1 + 0.3 * (1 - skill):
                boxes = []
            else:
                for b in gt_boxes:
                    if rng.random() < skill:
                        boxes.append(_jitter(b, rng, 0.25 * (1 - skill) + 0.02))
                        if rng.random() < 0.15:
                            boxes.append(_jitter(b, rng, 0.1))
                boxes += [_random_box(rng) for _ in range(int(rng.poisson(1 - skill)))]
            def score() -> float:
                return round(float(rng.uniform(0.05, 1.0)), 2)
            row: dict[str, Any] = {
                "query_id": q["query_id"],
                "bbox": [{"bbox": b, "score": score()} if scored else b for b in boxes],
                "oriented_bbox": [
                    {"polygon": corners(b, float(rng.normal(0, 0.1))), "score": score()}
                    if scored else corners(b, float(rng.normal(0, 0.1))) for b in boxes],
                "segmentation": masks.encode(rect_mask(boxes)) if boxes else None,
            }
            preds.append(row)
        out[task] = preds
    return {"tasks": out}


def write_pair(tmp: Path, gt: dict[str, Any], preds: dict[str, Any],
               name: str = "predictions.json") -> tuple[Path, Path]:
    """Write the two documents as JSON files in ``tmp``; returns ``(gt_path, pred_path)``."""
    gt_path, pred_path = tmp / "ground_truth.json", tmp / name
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(preds))
    return gt_path, pred_path


def random_query_boxes(rng: np.random.Generator, negative: bool, duplicate_rate: float
                       ) -> tuple[np.ndarray, np.ndarray]:
    """A random query's GT boxes ``(g, 4)`` (none when ``negative``, else 1-4) and predicted
    boxes ``(p, 4)``, xyxy: each GT found with probability 0.8 (jittered), found twice with
    ``duplicate_rate``, plus 0-2 background boxes; every box at least 1 px wide and high."""
    g = 0 if negative else int(rng.integers(1, 5))
    gt = rng.uniform(0, 80, (g, 2))
    gt = np.hstack([gt, gt + rng.uniform(5, 30, (g, 2))])
    preds = [b + rng.normal(0, 4, 4) for b in gt if rng.random() < 0.8]
    preds += [b + rng.normal(0, 2, 4) for b in gt if rng.random() < duplicate_rate]
    k = int(rng.integers(0, 3))
    extra = rng.uniform(0, 80, (k, 2))
    preds += list(np.hstack([extra, extra + rng.uniform(5, 30, (k, 2))]))
    pred = np.array(preds).reshape(-1, 4)
    pred[:, 2:] = np.maximum(pred[:, 2:], pred[:, :2] + 1)
    return gt, pred


def sample(sample_id: str, gt_boxes: list[list[float]] | None = None,
           pred_boxes: list[list[float]] | None = None, scores: list[float] | None = None,
           negative: bool = False, category: str = "c", with_masks: bool = False,
           pred_mask_boxes: list[list[float]] | None = None) -> Sample:
    """A hand-made sample (xyxy boxes; oriented boxes = the same rectangles).

    Masks (when ``with_masks``) are the unions of the rectangles: the GT mask from
    ``gt_boxes``, the predicted mask from ``pred_mask_boxes`` (default ``pred_boxes``)."""
    gt = np.asarray(gt_boxes or [], dtype=np.float64).reshape(-1, 4)
    pred = np.asarray(pred_boxes or [], dtype=np.float64).reshape(-1, 4)
    sc = (np.asarray(scores, dtype=np.float64) if scores is not None
          else np.full(len(pred), np.nan))
    s = Sample(sample_id=sample_id, phrase=sample_id, negative=negative,
               image_path=f"{sample_id}.png", ann_id=sample_id, category=category,
               width=SIZE, height=SIZE,
               gt_boxes=gt, gt_obbs=np.array([corners(list(b)) for b in gt]).reshape(-1, 4, 2),
               pred_boxes=pred, pred_box_scores=sc,
               pred_obbs=np.array([corners(list(b)) for b in pred]).reshape(-1, 4, 2),
               pred_obb_scores=sc.copy(), has_prediction_row=True)
    if with_masks:
        s.gt_mask = _rle(rect_mask(gt.tolist())) if not negative else None
        mboxes = pred.tolist() if pred_mask_boxes is None else pred_mask_boxes
        s.pred_mask = _rle(rect_mask(mboxes))
    return s


def _rle(mask: np.ndarray) -> masks.Rle | None:
    return masks.parse_rle(masks.encode(mask))[0]


def sample_list(samples: list[Sample], task: str = "open_vocabulary",
                modalities: tuple[str, ...] = ("bbox", "oriented_bbox")) -> SampleList:
    return SampleList(samples, task=task, modalities=modalities, score_threshold=None,
                      bbox_format="xyxy")


def thin_board(root: Path, n_images: int) -> Path:
    """A leaderboard folder (issue 46 §4): ``ground_truth.json`` of 24 annotations on
    ``n_images`` images and ``predictions/`` of four submissions, the best two
    byte-identical (``a_twin``, ``b_twin``), then ``c_mid`` and ``d_weak``."""
    gt = make_ground_truth(seed=3, n_annotations=24, n_categories=4)
    for i, ann in enumerate(gt["annotations"]):
        ann["image_path"] = f"images/{i % n_images}.png"
    (root / "images").mkdir(parents=True, exist_ok=True)
    from PIL import Image

    for i in range(n_images):
        Image.new("RGB", (SIZE, SIZE)).save(root / "images" / f"{i}.png")
    (root / "ground_truth.json").write_text(json.dumps(gt))
    preds = root / "predictions"
    preds.mkdir(exist_ok=True)
    best = json.dumps(make_predictions(gt, seed=40, skill=0.95))
    for name, text in (("a_twin", best), ("b_twin", best),
                       ("c_mid", json.dumps(make_predictions(gt, seed=41, skill=0.6))),
                       ("d_weak", json.dumps(make_predictions(gt, seed=42, skill=0.3)))):
        (preds / f"{name}.json").write_text(text)
    return root
