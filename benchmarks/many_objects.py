"""Object matching of 22,500 objects in one query (issue 35, item 4), time and memory.

    .venv/bin/python -m benchmarks.many_objects [--side 150] [--limit-mb 300]

One 900 x 900 mask of 150 x 150 objects (3 x 3 px squares every 6 px, the issue's 180 kB
RLE) and its prediction one row lower (IoU 6 / 12 = 0.5 per object); and the same objects as
xyxy boxes. Each case runs in a child process whose address space is capped
(``RLIMIT_AS``) at what it has mapped after its imports and a small warm-up, plus
``--limit-mb``: the matching must fit in that much more. Printed per case: wall time,
tracemalloc's peak (numpy's buffers included), and whether the run fit under the cap.
For comparison, ``dense`` is the matching the code did before (the overlapping pairs put
into a dense ``G x P`` matrix handed to :func:`ovearth_core.matching.match`) under the same
cap, and ``evaluate`` the evaluator on the mask case (RLE arithmetic: the baseline of the
same run). Nothing is asserted: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

CASES = ("masks", "boxes", "dense", "evaluate")


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _samples(side: int, case: str):
    from ovearth_core import masks
    from ovearth_core.types import Sample, SampleList

    n = 6 * side
    if case == "boxes":
        cells = np.array([(6.0 * j, 6.0 * i) for i in range(side) for j in range(side)])
        gt = np.concatenate([cells, cells + 3], axis=1)
        pred = gt + [0, 1, 0, 1]
        s = Sample("q", "ship", False, "a.png", "a", "ship", n, n, gt_boxes=gt,
                   pred_boxes=pred, pred_box_scores=np.full(len(pred), np.nan))
        modality = "bbox"
    else:
        grid = np.zeros((n, n), dtype=np.uint8)
        for i in range(side):
            for j in range(side):
                grid[6 * i:6 * i + 3, 6 * j:6 * j + 3] = 1
        s = Sample("q", "ship", False, "a.png", "a", "ship", n, n,
                   gt_mask=masks.encode(grid), pred_mask=masks.encode(np.roll(grid, 1, 0)))
        modality = "segmentation"
    return SampleList([s], task="open_vocabulary", modalities=(modality,),
                      score_threshold=None, bbox_format="xyxy"), modality


def _run(case: str, side: int):
    from ovearth_core.analysis import mask_objects, objects
    from ovearth_core.evaluate import evaluate_run
    from ovearth_core.matching import match

    samples, modality = _samples(side, case)
    if case == "evaluate":
        return lambda: evaluate_run(samples, 0.5)
    if case == "dense":
        def dense() -> int:
            gt = mask_objects.components(samples[0].gt_mask)
            pred = mask_objects.components(samples[0].pred_mask)
            gi, pi, iou = mask_objects.overlaps(gt, pred)
            block = np.zeros((gt.count, pred.count))
            block[gi, pi] = iou
            return len(match(block, 0.5)[0])
        return dense
    return lambda: objects.query_objects(samples, modality, 0.5)


def child(case: str, side: int, limit_mb: int) -> None:
    _run(case, 4)()  # imports and warm-up
    run = _run(case, side)
    cap = _vm_size() + limit_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
    tracemalloc.start()
    start = time.perf_counter()
    try:
        run()
        status = "fit"
    except MemoryError:
        status = "MemoryError"
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    print(f"{case:9s} {side * side:>7,} objects  {seconds:7.2f} s  peak traced "
          f"{peak / 2**20:7.1f} MB  under +{limit_mb} MB address space: {status}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.many_objects")
    parser.add_argument("--side", type=int, default=150, help="objects per side (150: 22,500)")
    parser.add_argument("--limit-mb", type=int, default=300)
    parser.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        child(args.case, args.side, args.limit_mb)
        return 0
    for case in CASES:
        subprocess.run([sys.executable, "-m", "benchmarks.many_objects", "--case", case,
                        "--side", str(args.side), "--limit-mb", str(args.limit_mb)],
                       check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
