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


# ------------------------------------------------------------------ dense scenes (issue 17)
# Parking lots and harbours: hundreds of boxes per query, crowded enough that boxes overlap
# many others, with exact duplicates (GT and predicted), copies of a GT box (IoU 1, several
# per GT box: ties for the assignment), half boxes (IoU exactly 0.5) and tied scores.

def _dense_benchmark(tmp_path, seed: int, queries: int, low: int, high: int):
    rng = np.random.default_rng(seed)
    anns, qs, rows = [], [], []
    for i in range(queries):
        n = int(rng.integers(low, high + 1))
        side = int(12 * np.sqrt(n))  # about one box per 12 x 12 pixels: dense overlaps
        xy = rng.integers(0, side, (n, 2)).astype(float)
        wh = 2.0 * rng.integers(3, 10, (n, 2))  # even sizes: exact half boxes
        gt = np.concatenate([xy, wh], axis=1)
        gt[rng.random(n) < 0.1] = gt[0]  # duplicated GT boxes
        pick = rng.integers(0, n, int(rng.integers(low, high + 1)))
        pred = gt[pick].copy()
        pred[:, 2:] += pred[:, :2]  # xyxy
        kind = rng.random(pick.size)
        shift = rng.integers(-2, 3, (pick.size, 2)).astype(float)
        moved = kind < 0.6
        pred[moved] += np.tile(shift[moved], 2)
        half = (kind >= 0.6) & (kind < 0.7)
        pred[half, 2] = pred[half, 0] + (pred[half, 2] - pred[half, 0]) / 2
        false_pos = kind >= 0.9
        pred[false_pos, :2] = rng.integers(0, side, (int(false_pos.sum()), 2))
        pred[false_pos, 2:] = pred[false_pos, :2] + 6.0
        angles = rng.choice([0.0, 0.3, np.pi / 2], n)
        obbs = [_rect_obb(*b, a) for b, a in zip(gt.tolist(), angles.tolist(), strict=True)]
        pred_obbs = [_rect_obb(x1, y1, x2 - x1, y2 - y1, float(angles[g]))
                     for (x1, y1, x2, y2), g in zip(pred.tolist(), pick.tolist(), strict=True)]
        scores = (rng.integers(0, 5, pick.size) / 4).tolist()  # many equal scores
        aid = f"{i:06d}"
        anns.append({"id": aid, "image_path": f"images/{i}.png", "width": 2 * side + 40,
                     "height": 2 * side + 40, "category_name": f"cat{i % 3}",
                     "segmentation": None, "bbox": gt.tolist(), "oriented_bbox": obbs})
        qs.append({"query_id": f"ov_{2 * i:06d}", "ann_id": aid, "phrase": "car",
                   "type": "positive"})
        qs.append({"query_id": f"ov_{2 * i + 1:06d}", "ann_id": aid, "phrase": "boat",
                   "type": "negative"})
        rows.append({"query_id": f"ov_{2 * i:06d}", "segmentation": None,
                     "bbox": [{"bbox": b, "score": sc} for b, sc in zip(pred.tolist(), scores,
                                                                         strict=True)],
                     "oriented_bbox": [{"polygon": p, "score": sc}
                                       for p, sc in zip(pred_obbs, scores, strict=True)]})
        rows.append({"query_id": f"ov_{2 * i + 1:06d}", "segmentation": None,
                     "bbox": pred[:5].tolist(), "oriented_bbox": pred_obbs[:5]})
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps({"annotations": anns, "tasks": {"open_vocabulary": qs}}))
    pred_path.write_text(json.dumps({"tasks": {"open_vocabulary": rows}}))
    return load_samples(gt_path, pred_path, "vocabulary", modalities="bbox,oriented_bbox")


@pytest.mark.parametrize(("modality", "queries", "low", "high"),
                         [("bbox", 20, 300, 1000), ("oriented_bbox", 8, 300, 1000)])
def test_dense_scenes_equal_plain(tmp_path, modality: str, queries: int, low: int,
                                  high: int) -> None:
    samples = _dense_benchmark(tmp_path, 17, queries, low, high)
    samples.modalities = (modality,)
    results = evaluate_samples(samples, 0.5)
    slow = plain.evaluate(samples, 0.5, dense=True)[modality]
    for key, expected in slow.items():
        assert results["summary"][modality][key] == pytest.approx(expected, abs=1e-9), key
    entries = {row["sample_id"]: row[modality] for row in results["per_sample"]}
    checked = plain.per_query(samples, 0.5, dense=True)[modality]
    assert len(checked) == queries
    for ref in checked:
        entry = entries[ref["sample_id"]]
        assert (entry["tp"], entry["tp_at"]) == (ref["tp"], ref["tp_at"]), ref["sample_id"]
        # Equal optima may pair other boxes: their count and summed IoU are what is fixed.
        assert sum(m[2] for m in entry["matches"]) == pytest.approx(ref["matched_iou_sum"],
                                                                    abs=1e-9)
    # The scene is what it claims: crowded, with matchings that need an assignment.
    assert sum(r["tp_at"][0] for r in checked) > queries * 100


def _dumped(result) -> bytes:
    import orjson
    return orjson.dumps(result, option=orjson.OPT_SERIALIZE_NUMPY)


def test_dense_scenes_every_path_gives_the_same_output(tmp_path, monkeypatch) -> None:
    """Streaming blocks, the dense per-query path and the flat chunks agree on every key
    of the results (and on the run's box facts)."""
    from ovearth_core import geometry
    from ovearth_core.evaluate import evaluate_run

    samples = _dense_benchmark(tmp_path, 5, 6, 200, 400)
    samples.modalities = ("bbox", "oriented_bbox")

    def run() -> bytes:
        r = evaluate_run(samples, 0.5)
        facts = {m: [(f.best_iou, f.gt_best_iou, f.duplicated) for f in v]
                 for m, v in r.box_facts.items()}
        return _dumped([r.results, facts, evaluate_samples(samples, 0.75)])

    default = run()
    monkeypatch.setattr(geometry, "_BLOCK_PAIRS", 1)  # every query its own block
    assert run() == default
    monkeypatch.setattr(geometry, "_BLOCK_PAIRS", 1 << 40)  # the whole file at once
    monkeypatch.setattr(geometry, "_DENSE_PAIRS", 1 << 40)  # and only the flat chunks
    monkeypatch.setattr(geometry, "_PAIRS_PER_CHUNK", 1 << 12)
    assert run() == default


def test_dense_scene_memory_is_bounded_by_the_largest_query(tmp_path, monkeypatch) -> None:
    """Peak traced memory of evaluating 16 queries of 500 x 500 boxes, each query its own
    block: a few of one query's IoU matrices (2 MB each), not the file's (32 MB each)."""
    import tracemalloc

    from ovearth_core import geometry

    samples = _dense_benchmark(tmp_path, 3, 16, 500, 500)
    samples.modalities = ("bbox",)
    matrix_bytes = 500 * 500 * 8
    monkeypatch.setattr(geometry, "_BLOCK_PAIRS", 1, raising=False)  # absent before issue 17
    tracemalloc.start()
    try:
        evaluate_samples(samples, 0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * matrix_bytes, f"peak {peak / 1e6:.1f} MB"
