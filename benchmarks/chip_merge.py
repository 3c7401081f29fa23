"""Chip merging (``from-dota --merge-chips``) on one dense scene-and-class group (issue 38).

    PYTHONPATH=. .venv/bin/python -m benchmarks.chip_merge [--sizes 10000 30000]

Each size is ``N`` detections of one class in one scene: ``N / 3`` objects (30 x 12 px
rotated rectangles) scattered over a square scene holding about one object per 60 x 60 px
(``--pitch``), each found three times with jitter (as overlapping chips find it), scores on
a 0.05 grid (many ties). Two ways to merge, each in a fresh process (time of the merge alone and the
process's peak RSS, with the RSS before the merge beside it):

* ``index``: :func:`ovearth_core.convert.chips.merge` (STRtree candidate pairs);
* ``all_pairs``: the path it replaced, written out here: the group's IoU matrix in blocks of
  512 rows (:func:`ovearth_core.geometry.iou_matrix` over every column), pairs over 0.3
  kept, the same devkit order and suppression.

Both must keep the same detections in the same order (checked: the digest of the kept
indices). The ratio index / all-pairs is the figure; times in seconds are for reference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time

import numpy as np

BLOCK_ROWS = 512


def group(n: int, pitch: float = 60.0, seed: int = 38) -> tuple[np.ndarray, list[float]]:
    """``n`` oriented boxes ``(n, 4, 2)`` and their scores (see the module docstring), about
    one object per ``pitch`` x ``pitch`` pixels."""
    rng = np.random.default_rng(seed)
    objects = max(1, n // 3)
    side = pitch * np.sqrt(objects)
    centres = rng.uniform(20, side - 20, (objects, 2))[np.arange(n) % objects]
    centres = centres + rng.normal(0, 2, (n, 2))
    length, width = 30 * rng.uniform(0.8, 1.2, n), 12 * rng.uniform(0.8, 1.2, n)
    angle = rng.uniform(0, 3, n)
    c, s = np.cos(angle), np.sin(angle)
    unit = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])
    dx, dy = unit[None, :, 0] * length[:, None], unit[None, :, 1] * width[:, None]
    x = centres[:, None, 0] + dx * c[:, None] - dy * s[:, None]
    y = centres[:, None, 1] + dx * s[:, None] + dy * c[:, None]
    return np.round(np.stack([x, y], axis=2), 2), (np.round(rng.uniform(0, 1, n) * 20) / 20
                                                   ).tolist()


def _all_pairs(polys: np.ndarray, scores: list[float]) -> list[int]:
    from ovearth_core import geometry
    from ovearth_core.convert.chips import NMS_IOU, devkit_order

    n = len(polys)
    over: list[list[int]] = [[] for _ in range(n)]
    for lo in range(0, n, BLOCK_ROWS):
        iou = geometry.iou_matrix(polys[lo:lo + BLOCK_ROWS], polys, True, NMS_IOU)
        rows, cols = np.nonzero(iou > NMS_IOU)
        for r, col in zip((rows + lo).tolist(), cols.tolist(), strict=True):
            if r != col:
                over[r].append(col)
    suppressed = np.zeros(n, dtype=bool)
    kept = []
    for j in devkit_order(scores):
        if suppressed[j]:
            continue
        suppressed[[m for m in over[j] if not suppressed[m]]] = True
        suppressed[j] = True
        kept.append(j)
    return kept


def _index(polys: np.ndarray, scores: list[float]) -> list[int]:
    from ovearth_core.convert.chips import ChipDetection, merge

    found = [ChipDetection("S", "car", sc, k, "S__1__0___0") for k, sc in enumerate(scores)]
    return [d.index for d, _ in merge(found, polys)]


def child(method: str, n: int, pitch: float) -> dict[str, object]:
    """One merge in this process: seconds, peak RSS and RSS before it (MB), kept count."""
    from ovearth_core import geometry

    polys, scores = group(n, pitch)
    geometry.shapely.STRtree  # noqa: B018 - import shapely before the clock starts
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    kept = (_index if method == "index" else _all_pairs)(polys, scores)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"method": method, "n": n, "pitch": pitch, "seconds": round(seconds, 3),
            "peak_mb": round(peak, 1), "rss_before_mb": round(before, 1), "kept": len(kept),
            "digest": hashlib.sha256(json.dumps(kept).encode()).hexdigest()[:16]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 30000])
    parser.add_argument("--pitch", type=float, default=60.0,
                        help="about one object per PITCH x PITCH pixels (36: a packed car park)")
    parser.add_argument("--child", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.pitch)))
        return
    for n in args.sizes:
        rows = {}
        for method in ("index", "all_pairs"):
            out = subprocess.run([sys.executable, "-m", "benchmarks.chip_merge", "--child",
                                  method, str(n), "--pitch", str(args.pitch)],
                                 check=True, capture_output=True, text=True)
            rows[method] = json.loads(out.stdout)
            print(json.dumps(rows[method]))
        same = rows["index"]["digest"] == rows["all_pairs"]["digest"]
        print(f"N={n}: index {rows['index']['seconds']} s / all pairs "
              f"{rows['all_pairs']['seconds']} s = "
              f"{rows['index']['seconds'] / rows['all_pairs']['seconds']:.3f}x; peak "
              f"{rows['index']['peak_mb']} MB vs {rows['all_pairs']['peak_mb']} MB; same kept: "
              f"{same}")


if __name__ == "__main__":
    main()
