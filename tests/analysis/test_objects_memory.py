"""Object matching of many objects works on overlapping pairs only (issue 35, item 4):
memory follows the pairs that overlap, not the square of the object count. A 60 x 60 grid
(3,600 objects) as masks and as boxes: a dense 3,600^2 float64 matrix alone is 104 MB; the
sparse path stays far below (figures for 22,500 objects: benchmarks/README.md)."""

from __future__ import annotations

import tracemalloc

import numpy as np

from ovearth_core import masks
from ovearth_core.analysis import objects
from ovearth_core.types import Sample

N = 60  # objects per side
LIMIT = 30 * 2**20  # bytes traced at the peak, far below one dense matrix


def _grid_mask(shift: int) -> np.ndarray:
    m = np.zeros((6 * N, 6 * N), dtype=np.uint8)
    for i in range(N):
        for j in range(N):
            m[6 * i + shift:6 * i + shift + 3, 6 * j:6 * j + 3] = 1
    return m


def _peak(run) -> tuple[object, int]:
    tracemalloc.start()
    try:
        out = run()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_mask_components_match_without_a_dense_matrix() -> None:
    gt, pred = _grid_mask(0), _grid_mask(1)  # each object shifted one row: IoU 6 / 12
    s = Sample("q", "ship", False, "a.png", "a", "ship", 6 * N, 6 * N,
               gt_mask=masks.encode(gt), pred_mask=masks.encode(pred))
    (qo,), peak = _peak(lambda: objects.query_objects([s], "segmentation", 0.5))
    assert qo.gt_outcome.count("matched") == N * N
    assert peak < LIMIT, f"{peak / 2**20:.0f} MB traced"


def test_boxes_match_without_a_dense_matrix() -> None:
    cells = np.array([(6.0 * j, 6.0 * i) for i in range(N) for j in range(N)])
    gt = np.concatenate([cells, cells + 3], axis=1)
    pred = gt + [0, 1, 0, 1]  # IoU 6 / 12
    s = Sample("q", "ship", False, "a.png", "a", "ship", 6 * N, 6 * N, gt_boxes=gt,
               pred_boxes=pred, pred_box_scores=np.full(len(pred), np.nan))
    (qo,), peak = _peak(lambda: objects.query_objects([s], "bbox", 0.5))
    assert qo.gt_outcome.count("matched") == N * N
    assert peak < LIMIT, f"{peak / 2**20:.0f} MB traced"
