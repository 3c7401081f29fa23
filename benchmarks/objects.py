"""Object-level diagnosis on a dense DOTA-like scene (issue 25), as a ratio to evaluating.

    .venv/bin/python -m benchmarks.objects [--repeats 3]

Seven images, one with 531 packed ships (as DOTA's densest harbour), 984 GT objects in 15
categories, one query per (image, category), absent categories as negatives; predictions
jittered, some dropped, doubled, or boxed as another category. Prints the median time of
:func:`ovearth_core.evaluate.evaluate_run` (HBB + OBB) and of
:func:`ovearth_core.analysis.objects.objects_report` on the same samples, and their ratio.
Nothing is asserted: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ovearth_core.analysis.objects import objects_report
from ovearth_core.evaluate import evaluate_run
from ovearth_core.types import Sample, SampleList

CATEGORIES = [f"class_{k:02d}" for k in range(15)]


def _obbs(boxes: np.ndarray) -> np.ndarray:
    x0, y0, x1, y1 = boxes.T
    return np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1),
                     np.stack([x1, y1], 1), np.stack([x0, y1], 1)], 1)


def dense_scene(seed: int = 0) -> SampleList:
    rng = np.random.default_rng(seed)
    counts = [551, 110, 90, 80, 65, 50, 38]  # GT objects per image: 984
    samples = []
    for i, n_img in enumerate(counts):
        cats = rng.integers(1, len(CATEGORIES), size=n_img)
        # Most objects of an image are of one class: 531 ships on the first image.
        cats[: 531 if i == 0 else n_img * 3 // 4] = 0 if i == 0 else int(cats[0])
        side = int(np.ceil(np.sqrt(n_img)))
        cells = np.array([(8 * (k % side), 8 * (k // side)) for k in range(n_img)], dtype=float)
        boxes = np.concatenate([cells, cells + 10], axis=1)
        gt_by = {c: boxes[cats == c] for c in range(len(CATEGORIES))}
        pred_by: dict[int, list[np.ndarray]] = {c: [] for c in range(len(CATEGORIES))}
        for b, c in zip(boxes, cats, strict=True):
            r = rng.random()
            if r < 0.08:
                continue
            target = int(rng.integers(len(CATEGORIES))) if r > 0.95 else int(c)
            pred_by[target].append(b + rng.uniform(-1, 1, 4))
            if rng.random() < 0.03:
                pred_by[target].append(b + rng.uniform(-1, 1, 4))
        for c, name in enumerate(CATEGORIES):
            gt = gt_by[c]
            pred = np.array(pred_by[c]).reshape(-1, 4)
            scores = rng.random(len(pred))
            samples.append(Sample(f"img{i}_{name}", name, len(gt) == 0, f"img{i}.png",
                                  f"a{i}_{c}", name, 400, 400, gt_boxes=gt, gt_obbs=_obbs(gt),
                                  pred_boxes=pred, pred_box_scores=scores,
                                  pred_obbs=_obbs(pred), pred_obb_scores=scores))
    return SampleList(samples, task="open_vocabulary", modalities=("bbox", "oriented_bbox"),
                      score_threshold=None, bbox_format="xyxy")


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.objects")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    samples = dense_scene()
    n_gt = sum(len(s.gt_boxes) for s in samples)
    n_pred = sum(len(s.pred_boxes) for s in samples)
    evaluate = _median(lambda: evaluate_run(samples, 0.5), args.repeats)
    report = objects_report(samples, samples.modalities, 0.5)
    diagnose = _median(lambda: objects_report(samples, samples.modalities, 0.5), args.repeats)
    print(f"{len(samples)} queries, {n_gt} GT boxes, {n_pred} predicted boxes (HBB + OBB)")
    print(f"evaluate_run      {evaluate:.3f} s (median of {args.repeats})")
    print(f"objects_report    {diagnose:.3f} s  = {diagnose / evaluate:.2f}x evaluate_run")
    print("HBB predictions:", report["objects"]["bbox"]["predictions"])
    print("HBB ground truth:", report["objects"]["bbox"]["ground_truth"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
