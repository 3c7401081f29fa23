"""The COCO matcher and ``coco_eval`` against COCOeval's own loops written out in plain
Python here (``evaluateImg`` and ``accumulate`` of pycocotools' cocoeval.py, one image per
query), on random dense queries: ties in IoU and score, IoUs exactly at the thresholds,
crowd regions, GT and detection areas on the size ranges' edges, detection caps.

The inputs are IoU and coverage matrices drawn directly (no geometry): what is checked is
the matching and the accumulation, to 1e-12. ``rounds``: the fixed point's rounds before
the k-th-by-k-th sweep takes over (1 and 2 make the random cases go through both).
"""

from __future__ import annotations

from dataclasses import dataclass
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ovearth_core.analysis import coco
from ovearth_core.analysis.coco import (
    AI_TOD_RANGES,
    COCO_RANGES,
    IN_IGNORE_REGION,
    Matcher,
    coco_eval,
)
from ovearth_core.analysis.ranking import Ranked

THRESHOLDS = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
RECALL_LEVELS = np.linspace(0.0, 1.0, 101)
# (lo, hi, closed above): COCO's four ranges, then the AI-TOD bins (closed below, open above).
RANGES = [(0, 1e10, True), (0, 32 ** 2, True), (32 ** 2, 96 ** 2, True), (96 ** 2, 1e10, True),
          (0, 8 ** 2, False), (8 ** 2, 16 ** 2, False), (16 ** 2, 32 ** 2, False),
          (32 ** 2, 96 ** 2, False), (96 ** 2, np.inf, False)]
# IoUs at and next to every threshold, repeated values (ties), and small overlaps.
VALUES = np.array([0.1, 0.3, 0.49, 0.5, 0.5, 0.55, 0.6, 0.62, 0.65, 0.7, 0.7, 0.75, 0.8, 0.8,
                   0.85, 0.9, 0.95, 0.97, 1.0])
# Areas on the ranges' edges and between them.
AREAS = np.array([1.0, 50.0, 64.0, 100.0, 256.0, 500.0, 1024.0, 3000.0, 9216.0, 20000.0])


@dataclass
class Query:
    iou: np.ndarray  # (G, P), detections in file order
    cover: np.ndarray  # (R, P) crowd regions
    score: np.ndarray  # (P,)
    gt_area: np.ndarray  # (G,)
    det_area: np.ndarray  # (P,)
    category: int


def random_queries(seed: int, n_queries: int, n_cat: int, dense: bool) -> list[Query]:
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n_queries):
        big = dense and q == 0
        n_gt = int(rng.integers(0, 120 if big else 8))
        n_det = int(rng.integers(0, 100 if big else 12))
        n_reg = int(rng.choice([0, 0, 1, 2]))
        iou = np.zeros((n_gt, n_det))
        if n_gt:
            # Each detection overlaps a few GT boxes; duplicates make boxes share detections.
            for d in range(n_det):
                for g in rng.choice(n_gt, int(rng.integers(0, min(n_gt, 4) + 1)), False):
                    iou[g, d] = rng.choice(VALUES)
        cover = np.where(rng.random((n_reg, n_det)) < 0.5, rng.choice(VALUES, (n_reg, n_det)),
                         0.0)
        out.append(Query(iou=iou, cover=cover,
                         score=rng.choice([0.2, 0.5, 0.5, 0.7, 0.9, 0.9], n_det),
                         gt_area=rng.choice(AREAS, n_gt), det_area=rng.choice(AREAS, n_det),
                         category=int(rng.integers(0, n_cat))))
    return out


def capped(queries: list[Query], cap: int) -> list[Query]:
    """Each query's ``cap`` best detections (ties: the first), in file order."""
    out = []
    for q in queries:
        keep = np.sort(np.argsort(-q.score, kind="stable")[:cap])
        out.append(Query(q.iou[:, keep], q.cover[:, keep], q.score[keep], q.gt_area,
                         q.det_area[keep], q.category))
    return out


def ranked_of(queries: list[Query]) -> Ranked:
    """The detections of every query ranked by score, ties in query then box order."""
    query = np.concatenate([np.full(q.score.size, k) for k, q in enumerate(queries)]
                           ).astype(np.int64)
    box = np.concatenate([np.arange(q.score.size) for q in queries]).astype(np.int64)
    score = np.concatenate([q.score for q in queries])
    det_area = np.concatenate([q.det_area for q in queries])
    rank = np.argsort(-score, kind="stable")
    return Ranked(ious=[q.iou for q in queries], query=query[rank], box=box[rank],
                  score=score[rank], num_gt=sum(q.iou.shape[0] for q in queries),
                  categories=tuple(str(q.category) for q in queries),
                  negative=np.zeros(len(queries), dtype=bool),
                  gt_area=np.concatenate([q.gt_area for q in queries]),
                  det_area=det_area[rank], cover=[q.cover for q in queries])


def outside(area: float, rng: tuple[float, float, bool]) -> bool:
    lo, hi, closed = rng
    return area < lo or (area > hi if closed else area >= hi)


def evaluate_image(q: Query, rng: tuple[float, float, bool], max_det: int) -> dict:
    """COCOeval.evaluateImg: ``dtm[t][d]`` the GT (index into the query's boxes, then
    regions at G + r) each detection (by score, stable) takes, -1 for none."""
    n_gt, n_reg = q.iou.shape[0], q.cover.shape[0]
    gt_ig = [outside(a, rng) for a in q.gt_area.tolist()] + [True] * n_reg
    crowd = [False] * n_gt + [True] * n_reg
    g_order = sorted(range(n_gt + n_reg), key=lambda j: gt_ig[j])  # stable: mergesort
    d_order = sorted(range(q.score.size), key=lambda d: -q.score[d])[:max_det]
    value = np.concatenate([q.iou, q.cover])
    dtm, dt_ig = [], []
    for t in THRESHOLDS:
        gtm = [-1] * (n_gt + n_reg)
        row, ig = [-1] * len(d_order), [False] * len(d_order)
        for di, d in enumerate(d_order):
            iou, m = min(t, 1 - 1e-10), -1
            for j in g_order:
                if gtm[j] >= 0 and not crowd[j]:
                    continue
                if m > -1 and not gt_ig[m] and gt_ig[j]:
                    break
                if value[j, d] < iou:
                    continue
                iou, m = value[j, d], j
            if m == -1:
                ig[di] = outside(q.det_area[d], rng)
                continue
            ig[di], row[di], gtm[m] = gt_ig[m], m, d
        dtm.append(row)
        dt_ig.append(ig)
    return {"order": d_order, "dtm": np.array(dtm).reshape(len(THRESHOLDS), -1),
            "dt_ig": np.array(dt_ig, dtype=bool).reshape(len(THRESHOLDS), -1),
            "scores": q.score[d_order], "npig": sum(not g for g in gt_ig[:n_gt])}


def accumulate(queries: list[Query], n_cat: int, max_dets: list[int]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """COCOeval.accumulate: AP ``(A, T, K)`` (nan: no GT), AR ``(A, T, K, M)``, and the
    GT counts ``(A, K)``."""
    ap = np.full((len(RANGES), len(THRESHOLDS), n_cat), np.nan)
    ar = np.full((len(RANGES), len(THRESHOLDS), n_cat, len(max_dets)), np.nan)
    num_gt = np.zeros((len(RANGES), n_cat), dtype=np.int64)
    for a, rng in enumerate(RANGES):
        for k in range(n_cat):
            images = [q for q in queries if q.category == k
                      and (q.iou.shape[0] + q.cover.shape[0] or q.score.size)]
            ev = [evaluate_image(q, rng, max_dets[-1]) for q in images]
            npig = sum(e["npig"] for e in ev)
            num_gt[a, k] = npig
            if npig == 0:
                continue
            for m, max_det in enumerate(max_dets):
                scores = np.concatenate([e["scores"][:max_det] for e in ev])
                inds = np.argsort(-scores, kind="mergesort")
                dtm = np.concatenate([e["dtm"][:, :max_det] for e in ev], axis=1)[:, inds]
                dt_ig = np.concatenate([e["dt_ig"][:, :max_det] for e in ev], axis=1)[:, inds]
                tps = np.cumsum((dtm >= 0) & ~dt_ig, axis=1).astype(float)
                fps = np.cumsum((dtm < 0) & ~dt_ig, axis=1).astype(float)
                for t in range(len(THRESHOLDS)):
                    tp, fp = tps[t], fps[t]
                    rc = tp / npig
                    pr = (tp / (fp + tp + np.spacing(1))).tolist()
                    ar[a, t, k, m] = rc[-1] if tp.size else 0.0
                    if m < len(max_dets) - 1:
                        continue
                    for i in range(len(pr) - 1, 0, -1):
                        if pr[i] > pr[i - 1]:
                            pr[i - 1] = pr[i]
                    q = np.zeros(RECALL_LEVELS.size)
                    for ri, pi in enumerate(np.searchsorted(rc, RECALL_LEVELS, side="left")):
                        if pi < len(pr):
                            q[ri] = pr[pi]
                    ap[a, t, k] = q.mean()
    return ap, ar, num_gt


def our_matches(queries: list[Query], ranked: Ranked, rng: tuple[float, float, bool]
                ) -> dict[tuple[int, int, int], int]:
    """(threshold, query, box) -> the query's GT index (regions at G + r) our matcher
    gives, for the matched detections."""
    starts = np.cumsum([0] + [q.iou.shape[0] for q in queries])
    area = ranked.gt_area
    ignored = np.array([outside(a, rng) for a in area.tolist()], dtype=bool)
    matcher = Matcher(ranked)
    out = {}
    for t, thr in enumerate(THRESHOLDS):
        m = matcher.match(thr, ignored if ignored.any() else None)
        for row in np.flatnonzero(m != -1).tolist():
            q, b = int(ranked.query[row]), int(ranked.box[row])
            out[t, q, b] = (int(m[row] - starts[q]) if m[row] >= 0
                            else IN_IGNORE_REGION)
    return out


def reference_matches(queries: list[Query], rng: tuple[float, float, bool]
                      ) -> dict[tuple[int, int, int], int]:
    out = {}
    for k, q in enumerate(queries):
        ev = evaluate_image(q, rng, q.score.size)
        for t in range(len(THRESHOLDS)):
            for di, d in enumerate(ev["order"]):
                m = int(ev["dtm"][t, di])
                if m >= 0:
                    out[t, k, d] = m if m < q.iou.shape[0] else IN_IGNORE_REGION
    return out


def test_ranges_written_out_here_are_the_modules() -> None:
    assert [(r.lo, r.hi, r.closed) for r in COCO_RANGES + AI_TOD_RANGES] == RANGES


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), n_queries=st.integers(1, 8), n_cat=st.integers(1, 4),
       dense=st.booleans(), cap=st.sampled_from([1, 3, 10, 100]),
       rounds=st.sampled_from([1, 2, coco.FIXED_POINT_ROUNDS]))
def test_coco_eval_equals_cocoeval_loops(seed: int, n_queries: int, n_cat: int, dense: bool,
                                         cap: int, rounds: int) -> None:
    queries = capped(random_queries(seed, n_queries, n_cat, dense), cap)
    ranked = ranked_of(queries)
    max_dets = [1, 10, cap] if cap > 10 else [1, cap, cap]
    category = np.array([q.category for q in queries], dtype=np.int64)
    with mock.patch.object(coco, "FIXED_POINT_ROUNDS", rounds):
        got = coco_eval(ranked, category, n_cat, COCO_RANGES + AI_TOD_RANGES,
                        max_dets=tuple(max_dets))
    ap, ar, num_gt = accumulate(queries, n_cat, max_dets)
    assert np.array_equal(got["num_gt"], num_gt)
    assert np.array_equal(np.isnan(got["ap"]), np.isnan(ap))
    assert np.allclose(got["ap"], ap, rtol=0, atol=1e-12, equal_nan=True)
    # AR where a key reports it: every cap at "all", the last cap at every other range
    # (COCO's sizes; AI-TOD's, for the --aitod block's mar_verytiny ...).
    got_ar = np.concatenate([got["ar"][:1], got["ar"][1:, ..., -1:]], axis=None)
    want_ar = np.concatenate([ar[:1], ar[1:, ..., -1:]], axis=None)
    assert np.array_equal(np.isnan(got_ar), np.isnan(want_ar))
    assert np.allclose(got_ar, want_ar, rtol=0, atol=1e-12, equal_nan=True)
    assert np.isnan(got["ar"][1:, ..., :-1]).all()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), n_queries=st.integers(1, 8), dense=st.booleans(),
       a=st.integers(0, len(RANGES) - 1), rounds=st.sampled_from([1, 2, coco.FIXED_POINT_ROUNDS]))
def test_matches_equal_cocoeval_loop(seed: int, n_queries: int, dense: bool, a: int,
                                     rounds: int) -> None:
    queries = random_queries(seed, n_queries, 1, dense)
    with mock.patch.object(coco, "FIXED_POINT_ROUNDS", rounds):
        ours = our_matches(queries, ranked_of(queries), RANGES[a])
    assert ours == reference_matches(queries, RANGES[a])


@pytest.mark.parametrize("rounds", [1, coco.FIXED_POINT_ROUNDS, 200])
def test_a_chain_of_150_taken_boxes(rounds: int) -> None:
    # Detection i overlaps GT i-1 (IoU 0.9) and GT i (0.6), ranked i = 0, 1, ...: at 0.5
    # each finds GT i-1 taken by detection i-1 and takes GT i, a choice that depends on all
    # the detections before it. At 0.65 only the 0.9 pairs count: detection 0 takes GT 0,
    # detection 1 finds it taken, and every later i takes GT i-1.
    n = 150
    iou = np.zeros((n, n))
    iou[np.arange(n), np.arange(n)] = 0.6
    iou[np.arange(n - 1), np.arange(1, n)] = 0.9
    iou[0, 0] = 0.9
    q = Query(iou=iou, cover=np.zeros((0, n)), score=np.linspace(1, 0.1, n),
              gt_area=np.full(n, 100.0), det_area=np.full(n, 100.0), category=0)
    with mock.patch.object(coco, "FIXED_POINT_ROUNDS", rounds):  # 200: the fixed point alone
        matcher = Matcher(ranked_of([q]))
        assert matcher.match(0.5).tolist() == list(range(n))
        assert matcher.match(0.65).tolist() == [0, -1] + list(range(1, n - 1))
        assert matcher.match(0.95).tolist() == [-1] * n
