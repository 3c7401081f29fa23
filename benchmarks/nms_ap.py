"""NMS-AP on dense scenes (issue 50), as a ratio to plain AP in the same run.

    .venv/bin/python -m benchmarks.nms_ap [--images 4] [--objects 600] [--queries 5]
                                          [--repeat 3] [--oriented]

Each image holds ``--objects`` ground-truth boxes of one class (small vehicles, 6-14 px,
on a 1,024 px tile) and ``--queries`` queries: the positive one (every object answered,
jittered, plus 10 % strays) and negatives naming other classes, each answering 60 % of the
objects with the positive's boxes jittered (the inflated case NMS-AP is for) and scoring
them lower or higher at random. Times (median of ``--repeat``) of the AP report of the
hard-negative view without and with ``nms_ap``, their ratio, and of the suppression alone
(:func:`ovearth_core.analysis.nms_ap.suppress`). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.analysis.nms_ap import suppress
from ovearth_core.types import Sample

CLASSES = ("small vehicle", "large vehicle", "ship", "plane", "storage tank", "bridge")


def _corners(boxes: np.ndarray) -> np.ndarray:
    x0, y0, x1, y1 = boxes.T
    return np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1), np.stack([x1, y1], 1),
                     np.stack([x0, y1], 1)], 1)


def _answer(rng: np.random.Generator, gt: np.ndarray, rows: np.ndarray,
            strays: float) -> np.ndarray:
    """The boxes of ``rows`` jittered, and ``strays`` of as many 10 px boxes anywhere."""
    b = gt[rows] + rng.normal(0, 0.8, (rows.size, 4))
    b[:, 2:] = np.maximum(b[:, 2:], b[:, :2] + 1)
    s = rng.uniform(0, 1000, (int(strays * rows.size), 2))
    return np.vstack([b, np.hstack([s, s + 10])])


def dense_images(n_images: int, n_objects: int, n_queries: int, seed: int = 0) -> list[Sample]:
    """The scenes of the module docstring (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    out: list[Sample] = []
    for i in range(n_images):
        xy = rng.uniform(0, 1000, (n_objects, 2))
        wh = rng.uniform(6, 14, (n_objects, 2))
        gt = np.hstack([xy, xy + wh])

        image = f"dense_{i}.png"
        for q in range(n_queries):
            negative = q > 0
            pred = _answer(rng, gt, np.arange(n_objects) if not negative
                           else np.flatnonzero(rng.random(n_objects) < 0.6), 0.1)
            scores = rng.random(len(pred))
            g = np.zeros((0, 4)) if negative else gt
            out.append(Sample(
                sample_id=f"d{i}_q{q}", phrase=CLASSES[q % len(CLASSES)], negative=negative,
                image_path=image, ann_id=f"a{i}", category=CLASSES[0], width=1024,
                height=1024, gt_boxes=g, gt_obbs=_corners(g), pred_boxes=pred,
                pred_box_scores=scores, pred_obbs=_corners(pred),
                pred_obb_scores=scores.copy(), has_prediction_row=True))
    return out


def _median(fn: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.nms_ap")
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--objects", type=int, default=600)
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--oriented", action="store_true", help="oriented boxes (rotated IoU)")
    args = parser.parse_args(argv)
    m = "oriented_bbox" if args.oriented else "bbox"
    samples = dense_images(args.images, args.objects, args.queries)
    n_pred = sum(len(s.pred_boxes) for s in samples)
    _, plain = _median(lambda: average_precision_report(samples, 0.5, (m,), True), args.repeat)
    report, nms = _median(lambda: average_precision_report(samples, 0.5, (m,), True,
                                                           nms_ap=True), args.repeat)
    result, alone = _median(lambda: suppress(samples, m), args.repeat)
    coco = report[m]["coco"]
    print(f"{args.images} images x {args.objects} GT boxes x {args.queries} queries "
          f"({n_pred:,} predicted boxes, {m}); median of {args.repeat}")
    print(f"  AP report, hard negatives      {plain:7.3f} s")
    print(f"  the same with --nms-ap         {nms:7.3f} s = {nms / plain:.2f}x plain AP")
    print(f"  the suppression alone          {alone:7.3f} s = {alone / plain:.2f}x plain AP "
          f"({len(result.removed):,} boxes removed)")
    print(f"  mAP@[.5:.95] {coco['map@[0.5:0.95]']:.4f}, NMS-mAP {coco['nms_map@[0.5:0.95]']:.4f}")


if __name__ == "__main__":
    main()
