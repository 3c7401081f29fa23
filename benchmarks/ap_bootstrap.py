"""Paired AP intervals (issue 25) against the key metrics' bootstrap, as ratios.

    .venv/bin/python -m benchmarks.ap_bootstrap --data /work/bench/full [--resamples 1000]

On a benchmark folder (open vocabulary, A = strong_localiser, B = weak_baseline, HBB + OBB)
and on the dense in-memory scene of :mod:`benchmarks.objects` (531 ships on one image; B:
A's scores redrawn), prints the time of ``compare_results`` without AP (the key metrics,
2000 resamples), of building both AP runs (``ap_run``: the observed report and the curves),
and of ``ap_differences`` at ``--resamples``, with the ratios. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from benchmarks.objects import dense_scene
from ovearth_core.analysis.ap_bootstrap import ap_run
from ovearth_core.analysis.compare import DEFAULT_RESAMPLES, ap_differences, compare_results
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.types import SampleList

MODALITIES = ("bbox", "oriented_bbox")


def _timed(fn):  # noqa: ANN001, ANN202 - a benchmark helper
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def _measure(name: str, pair: list[SampleList], resamples: int, unit: str) -> None:
    results, evaluate = _timed(lambda: [evaluate_samples(s, 0.5) for s in pair])
    _, key = _timed(lambda: compare_results(*results, n_resamples=DEFAULT_RESAMPLES,
                                            unit=unit))
    runs, build = _timed(lambda: [ap_run(s, 0.5, MODALITIES) for s in pair])
    diffs, boot = _timed(lambda: ap_differences(*results, *runs, resamples, unit=unit))
    n_det = sum(len(s.pred_boxes) for s in pair[0])
    print(f"{name}: {len(pair[0])} queries, {n_det} HBB predictions in A, unit {unit}")
    print(f"  evaluate A and B          {evaluate:7.2f} s")
    print(f"  key metrics, {DEFAULT_RESAMPLES} resamples {key:7.2f} s")
    print(f"  ap_run A and B            {build:7.2f} s = {build / evaluate:.2f}x evaluate")
    print(f"  AP intervals, {resamples} resamples {boot:7.2f} s = {boot / key:.1f}x key metrics"
          f" = {boot / evaluate:.2f}x evaluate ({boot / resamples * 1000:.1f} ms per resample)")
    for m in diffs:
        if m.metric in ("coco.map@[0.5:0.95]", "ap_every_point") and m.ci_low is not None:
            print(f"    {m.modality} {m.metric}: Δ {m.diff:+.4f} [{m.ci_low:+.4f}, "
                  f"{m.ci_high:+.4f}] ({m.n_valid})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ap_bootstrap")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args(argv)
    gt = args.data / "ground_truth.json"
    pair = [load_samples(gt, args.data / "predictions" / f"{p}.json", "open_vocabulary",
                         modalities=MODALITIES) for p in ("strong_localiser", "weak_baseline")]
    _measure(str(args.data), pair, args.resamples, "query")
    dense = dense_scene()
    rng = np.random.default_rng(1)
    other = SampleList([replace(s, pred_box_scores=(sc := rng.random(len(s.pred_boxes))),
                                pred_obb_scores=sc.copy()) for s in dense],
                       task=dense.task, modalities=dense.modalities, score_threshold=None,
                       bbox_format="xyxy")
    _measure("dense scene (benchmarks.objects)", [dense, other], args.resamples, "image")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
