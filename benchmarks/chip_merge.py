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
import tempfile
import time
from pathlib import Path

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


def _all_pairs_neighbours(polys: np.ndarray) -> list[list[int]]:
    """The replaced path's neighbour lists (the group's IoU matrix, 512 rows at a time)."""
    from ovearth_core import geometry
    from ovearth_core.convert.chips import NMS_IOU

    over: list[list[int]] = [[] for _ in range(len(polys))]
    for lo in range(0, len(polys), BLOCK_ROWS):
        iou = geometry.iou_matrix(polys[lo:lo + BLOCK_ROWS], polys, True, NMS_IOU)
        rows, cols = np.nonzero(iou > NMS_IOU)
        for r, col in zip((rows + lo).tolist(), cols.tolist(), strict=True):
            if r != col:
                over[r].append(col)
    return over


def _task1_file(n: int, pitch: float, root: Path) -> Path:
    """A scene's label file and one Task1 file of the group's ``n`` detections on 1024-px
    chips (stride 824), in ``root``; no image (numbers-only)."""
    polys, scores = group(n, pitch)
    (root / "labelTxt").mkdir()
    (root / "labelTxt" / "S.txt").write_text("10 10 40 10 40 22 10 22 car 0\n")
    (root / "m").mkdir()
    lines = []
    for poly, score in zip(polys, scores, strict=True):
        cx, cy = poly.mean(axis=0)
        x0, y0 = (int(max(0, c - 512) // 824 * 824) for c in (cx, cy))
        local = (poly - (x0, y0)).ravel()
        lines.append(f"S__1__{x0}___{y0} {score!r} " + " ".join(f"{v:.2f}" for v in local))
    (root / "m" / "Task1_car.txt").write_text("\n".join(lines) + "\n")
    return root


def _end_to_end(method: str, root: Path) -> None:
    """The whole ``from_dota(..., merge_chips=True)`` on :func:`_task1_file`'s files, the
    merge's neighbour search swapped for the all-pairs one with ``all_pairs``."""
    from ovearth_core.convert import chips, from_dota

    if method == "all_pairs":
        chips._neighbours = _all_pairs_neighbours  # type: ignore[assignment]
    from_dota(root / "labelTxt", None, root / "bench", [root / "m"], merge_chips=True,
              chip_size=1024)


def _kept_scores(root: Path) -> list[int]:
    doc = json.loads((root / "bench" / "predictions" / "m.json").read_text())
    return [round(b["score"] * 1e6) for r in doc["tasks"]["open_vocabulary"]
            for b in r["oriented_bbox"]]


def _index(polys: np.ndarray, scores: list[float]) -> list[int]:
    from ovearth_core.convert.chips import ChipDetection, merge

    found = [ChipDetection("S", "car", sc, k, "S__1__0___0") for k, sc in enumerate(scores)]
    return [d.index for d, _ in merge(found, polys)]


def child(method: str, n: int, pitch: float) -> dict[str, object]:
    """One merge in this process: seconds, peak RSS and RSS before it (MB), kept count."""
    from ovearth_core import geometry

    geometry.shapely.STRtree  # noqa: B018 - import shapely before the clock starts
    with tempfile.TemporaryDirectory() as tmp:
        if method.startswith("e2e-"):
            import ovearth_core.convert  # noqa: F401 - imported before the clock starts

            root = _task1_file(n, pitch, Path(tmp))
        else:
            polys, scores = group(n, pitch)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start = time.perf_counter()
        if method.startswith("e2e-"):
            _end_to_end(method[4:], root)
        else:
            kept = (_index if method == "index" else _all_pairs)(polys, scores)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if method.startswith("e2e-"):
            kept = _kept_scores(root)
    return {"method": method, "n": n, "pitch": pitch, "seconds": round(seconds, 3),
            "peak_mb": round(peak, 1), "rss_before_mb": round(before, 1), "kept": len(kept),
            "digest": hashlib.sha256(json.dumps(kept).encode()).hexdigest()[:16]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 30000])
    parser.add_argument("--pitch", type=float, default=60.0,
                        help="about one object per PITCH x PITCH pixels (36: a packed car park)")
    parser.add_argument("--end-to-end", action="store_true",
                        help="time the whole from_dota(merge_chips=True) on a Task1 file of "
                        "the group's chip detections instead of the merge alone")
    parser.add_argument("--child", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.pitch)))
        return
    for n in args.sizes:
        rows = {}
        for method in ("index", "all_pairs"):
            child_method = f"e2e-{method}" if args.end_to_end else method
            out = subprocess.run([sys.executable, "-m", "benchmarks.chip_merge", "--child",
                                  child_method, str(n), "--pitch", str(args.pitch)],
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
