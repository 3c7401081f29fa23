"""Object-level diagnosis on a dense DOTA-like scene (issue 25), as a ratio to evaluating.

    .venv/bin/python -m benchmarks.objects [--repeats 3]

Seven images, one with 531 packed ships (as DOTA's densest harbour), 984 GT objects in 15
categories, one query per (image, category), absent categories as negatives; predictions
jittered, some dropped, doubled, or boxed as another category. Prints the median time of
:func:`ovearth_core.evaluate.evaluate_run` (HBB + OBB) and of
:func:`ovearth_core.analysis.objects.objects_report` on the same samples, and their ratio.
With ``--masks``, the same scene as 1,200 x 1,200 masks (segmentation; the masks'
connected components, :mod:`ovearth_core.analysis.mask_objects`), against the box
scene's diagnosis in the same run (evaluating masks is RLE arithmetic, a few ms: no
useful ratio). Nothing is asserted:
the figures depend on the machine.
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


def dense_mask_scene(seed: int = 0, size: int = 1200) -> SampleList:
    """The same counts as masks on ``size`` x ``size`` images: objects of 6-20 px on a
    40-px grid (packed, not touching: a GT mask is their union, one component each),
    predicted as jittered rectangles, some dropped, some grown into a neighbour (merged),
    some cut in two (split), some painted as another category, plus stray blobs."""
    from ovearth_core import masks

    rng = np.random.default_rng(seed)
    counts = [551, 110, 90, 80, 65, 50, 38]
    per_row = size // 40
    samples = []
    for i, n_img in enumerate(counts):
        cats = rng.integers(1, len(CATEGORIES), size=n_img)
        cats[: 531 if i == 0 else n_img * 3 // 4] = 0 if i == 0 else int(cats[0])
        gt = np.zeros((len(CATEGORIES), size, size), dtype=np.uint8)
        pred = np.zeros_like(gt)
        for k, c in enumerate(cats):
            y, x = 40 * (k // per_row) + 10, 40 * (k % per_row) + 10
            h, w = rng.integers(6, 21, 2)
            gt[c, y:y + h, x:x + w] = 1
            r = rng.random()
            if r < 0.08:
                continue
            target = int(rng.integers(len(CATEGORIES))) if r > 0.95 else int(c)
            dy, dx = rng.integers(-1, 2, 2)
            grow = 30 if r < 0.11 else 0  # reaches the next object: a merged prediction
            pred[target, y + dy:y + dy + h, x + dx:x + dx + w + grow] = 1
            if 0.11 <= r < 0.14:
                pred[target, y + dy:y + dy + h, x + dx + w // 2] = 0  # split in two
        for _ in range(20):
            y, x = rng.integers(0, size - 8, 2)
            pred[int(rng.integers(len(CATEGORIES))), y:y + 5, x:x + 5] = 1
        for c, name in enumerate(CATEGORIES):
            g = masks.parse_rle(masks.encode(gt[c]))[0]
            samples.append(Sample(f"img{i}_{name}", name, g is None, f"img{i}.png",
                                  f"a{i}_{c}", name, size, size, gt_mask=g,
                                  pred_mask=masks.parse_rle(masks.encode(pred[c]))[0]))
    return SampleList(samples, task="open_vocabulary", modalities=("segmentation",),
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
    parser.add_argument("--masks", action="store_true",
                        help="the scene as masks on 1,200 x 1,200 images (segmentation)")
    args = parser.parse_args(argv)
    samples = dense_mask_scene() if args.masks else dense_scene()
    evaluate = _median(lambda: evaluate_run(samples, 0.5), args.repeats)
    report = objects_report(samples, samples.modalities, 0.5)
    diagnose = _median(lambda: objects_report(samples, samples.modalities, 0.5), args.repeats)
    first = samples.modalities[0]
    block = report["objects"][first]
    if args.masks:
        print(f"{len(samples)} queries, {sum(block['ground_truth'].values())} GT and "
              f"{sum(block['predictions'].values())} predicted mask components "
              "(1,200 x 1,200 masks)")
    else:
        print(f"{len(samples)} queries, {sum(len(s.gt_boxes) for s in samples)} GT boxes, "
              f"{sum(len(s.pred_boxes) for s in samples)} predicted boxes (HBB + OBB)")
    print(f"evaluate_run      {evaluate:.3f} s (median of {args.repeats})")
    ratio = "" if args.masks else f"  = {diagnose / evaluate:.2f}x evaluate_run"
    print(f"objects_report    {diagnose:.3f} s{ratio}")
    if args.masks:  # the same counts as boxes, diagnosed in the same run
        boxes = dense_scene()
        box_time = _median(lambda: objects_report(boxes, boxes.modalities, 0.5), args.repeats)
        print(f"objects_report of the box scene (HBB + OBB) {box_time:.3f} s: masks take "
              f"{diagnose / box_time:.2f}x the boxes' diagnosis")
    print(f"{first} predictions:", block["predictions"])
    print(f"{first} ground truth:", block["ground_truth"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
