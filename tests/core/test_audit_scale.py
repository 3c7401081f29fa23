"""The audit's clusters on crowded queries (issue 48, item 3).

Every overlapping pair of a query's pooled boxes was listed before any was pruned: 10
submissions x 1,000 boxes on one query took 3.9 GB and 190 s (benchmarks/README.md). The
clusters now search one seed's candidates at a time. Here: the clusters equal a brute-force
reading of the rule (docs/audit.md: the most confident free object first; from every other
submission the free object of highest IoU >= the threshold, IoU by formula over every pair;
ties to the first in the order the listed pairs gave), for boxes and oriented boxes; and a
crowded query is audited in a child under a 1 GiB address-space limit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import shapely

from ovearth_core.audit import consensus
from ovearth_core.types import Sample

ROOT = Path(__file__).resolve().parents[2]


def _subs(rng: np.random.Generator, n_subs: int, n_boxes: int, oriented: bool,
          grid: bool = False) -> list[list[Sample]]:
    gt = np.array([[10, 10, 40, 40], [60, 60, 90, 100]], dtype=float)
    out = []
    for _ in range(n_subs):
        if grid:  # coordinates on a coarse grid: equal IoUs (ties) happen
            xy = rng.integers(0, 8, (n_boxes, 2)) * 10.0
            wh = rng.integers(1, 5, (n_boxes, 2)) * 10.0
        else:
            xy = rng.uniform(0, 80, (n_boxes, 2))
            wh = rng.uniform(5, 40, (n_boxes, 2))
        boxes = np.concatenate([xy, xy + wh], axis=1)
        scores = (rng.integers(0, 4, n_boxes) / 4 if grid else rng.uniform(0, 1, n_boxes))
        kw: dict = {"gt_boxes": gt, "pred_boxes": boxes, "pred_box_scores": scores}
        if oriented:
            x1, y1, x2, y2 = boxes.T
            polys = np.stack([np.stack([x1, y1], 1), np.stack([x2, y1], 1),
                              np.stack([x2, y2], 1), np.stack([x1, y2], 1)], axis=1)
            turn = rng.uniform(-0.5, 0.5, n_boxes)
            centre = polys.mean(axis=1, keepdims=True)
            c, s = np.cos(turn)[:, None], np.sin(turn)[:, None]
            d = polys - centre
            polys = centre + np.stack([d[..., 0] * c - d[..., 1] * s,
                                       d[..., 0] * s + d[..., 1] * c], axis=-1)
            gpoly = np.array([[[10, 10], [40, 10], [40, 40], [10, 40]],
                              [[60, 60], [90, 60], [90, 100], [60, 100]]], dtype=float)
            kw = {"gt_obbs": gpoly, "pred_obbs": polys, "pred_obb_scores": scores}
        out.append([Sample("q1", "ship", False, "a.png", "a1", "ship", 128, 128,
                           has_prediction_row=True, **kw)])
    return out


def _iou(a: np.ndarray, b: np.ndarray, oriented: bool) -> float:
    if oriented:
        pa, pb = shapely.Polygon(a), shapely.Polygon(b)
        union = pa.union(pb).area
        return min(pa.intersection(pb).area / union, 1.0) if union > 0 else 0.0
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


def _reference(q: consensus._Query, threshold: float, oriented: bool) -> list[list[int]]:
    owner = np.concatenate([np.full(len(p), s) for s, p in enumerate(q.preds)])
    geom = np.concatenate([p.geom for p in q.preds])
    conf = np.concatenate(q.conf)
    free = ~np.concatenate(q.tp)
    assigned = ~free
    clusters = []
    for seed in sorted(range(conf.size), key=lambda k: (-conf[k], k)):
        if assigned[seed]:
            continue
        order = [*range(seed + 1, conf.size), *range(seed)]
        best = {owner[seed]: (2.0, seed)}
        for other in order:
            if assigned[other] or owner[other] == owner[seed]:
                continue
            value = _iou(geom[seed], geom[other], oriented)
            o = owner[other]
            if value >= threshold and value > 0 and (o not in best or value > best[o][0]):
                best[o] = (value, other)
        members = sorted(m for _, m in best.values())
        assigned[members] = True
        clusters.append(members)
    return clusters


@pytest.mark.parametrize("oriented", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_clusters_equal_the_brute_force_rule(oriented: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    subs = _subs(rng, 4, 25, oriented, grid=seed % 2 == 0)
    modality = "oriented_bbox" if oriented else "bbox"
    queries = consensus._queries(subs, modality, 0.5)
    w = consensus._weights(queries, len(subs))
    clusters, _, _ = consensus._clusters(queries[0], w, modality, 0.5)
    assert [c.members.tolist() for c in clusters] == _reference(queries[0], 0.5, oriented)
    assert any(len(c.members) > 1 for c in clusters)


CHILD = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import numpy as np
    from benchmarks.audit_pairs import _crowd_samples
    from ovearth_core.audit.consensus import audit_samples
    subs = _crowd_samples(8, 1000)
    result = audit_samples(subs, list("abcdefgh"), "bbox", 0.5, 0.0)
    print(len(result["suspects"]))
""")


def test_a_crowded_query_is_audited_within_a_memory_limit() -> None:
    """8 submissions x 1,000 boxes over one 512 x 512 image: about 20 million overlapping
    pairs, which the listing held several times over (about 2.5 GB) before pruning."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", CHILD.format(limit=1 << 30)],
                         capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-1500:]
    assert int(run.stdout.split()[-1]) > 0
