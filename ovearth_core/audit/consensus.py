"""Label errors from the consensus of many submissions (issue 36; docs/audit.md).

Input: the samples of one task as each submission's load gave them (one ground truth, so
the same queries, GT objects and images in every list). Output: every GT object's support
and the ranked suspects (:func:`audit_samples`).

The score, in four steps (docs/audit.md has the reasoning):

1. *Matching.* Each submission's objects are matched one-to-one to the query's GT objects
   at the IoU threshold (:func:`ovearth_core.matching.match`, the evaluator's rule).
2. *Calibration and quality.* A submission's raw scores become calibrated confidences
   ``p``: the precision (matched share, smoothed ``(tp + 1) / (n + 2)``) of its objects in
   the same score decile, made non-decreasing in the score (pool adjacent violators).
   Scores of different models are then on one scale, and a score band a model spends on
   decoys is worth little. Its quality weight ``w`` is its best F1 over score thresholds.
3. *Votes.* A GT object's *evidence* is the noisy-OR ``1 - prod(1 - w p)`` over the
   submissions that matched it: one good model finding it confidently is enough to keep a
   label (hard objects). The submissions' unmatched objects are clustered (greedy, the
   most confident first, at most one object per submission, IoU >= the threshold with the
   seed); a cluster's *support* is the weighted mean ``sum(w p) / sum(w)`` over all
   submissions that answered the query (absent: 0): a missing label needs most models to
   agree confidently, so many low-score votes (decoys) add up to little.
4. *Suspects*, an image at a time. A confident cluster (``c >= CONSENSUS``) on one
   category's query covering a GT object of another category's query (their envelopes'
   IoU >= the threshold) makes a *wrong class* suspect scored ``(1 - e + c) / 2`` (low
   when the object is found under its own label too: a confusion, not a missing label).
   A GT object left with ``1 - e >= DOUBT`` and a confident cluster of its own query
   beside it (overlapping, or centres within twice the larger side) is *shifted* (reported
   once, the cluster's box the fix), scored ``(1 - e + c) / 2``; any other GT object is
   *spurious*, scored ``1 - e``. Every cluster not used so is a *missing* suspect scored
   ``c``; on a negative query, one suspect for the query (the category seems present):
   its best cluster, the other confident ones listed in ``also``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import geometry
from ..matching import match
from ..types import EMPTY_BOXES, EMPTY_POLYS, EMPTY_SCORES, Sample
from .shapes import (
    Objects,
    areas,
    objects_of,
    pairs_by_set,
    pooled_candidates,
    seed_ious,
    seed_search,
    xywh,
)

IntArray = npt.NDArray[np.intp]
FloatArray = npt.NDArray[np.float64]

KINDS = ("missing", "spurious", "shifted", "wrong_class")
# A cluster's support from which it can explain a GT object nobody matched (shifted, wrong
# class): a weighted quarter of the submissions, confidently.
CONSENSUS = 0.25
# A GT object is looked at as shifted when 1 - evidence reaches this (0.5 missed a mask
# label shifted onto a spot where a few submissions matched it by chance; docs/audit.md).
DOUBT = 0.4
MIN_SCORE = 0.2
# "Beside": centres at most this many times the larger side of the two boxes apart.
BESIDE = 2.0
SCORE_BINS = 10


@dataclass
class _Query:
    """One query across submissions: its GT objects, each submission's objects, matches."""

    sample: Sample
    category: str                 # a negative query's: the one its phrase names
    gt: Objects
    preds: list[Objects]          # per submission
    answered: npt.NDArray[np.bool_]  # (S,) the submission has a row for the query
    matched: list[IntArray]       # per submission: (G,) predicted object index or -1
    tp: list[npt.NDArray[np.bool_]]  # per submission: (P,) matched
    conf: list[FloatArray] = field(default_factory=list)  # per submission: (P,) calibrated


@dataclass
class _Cluster:
    members: IntArray    # pooled object indices
    owners: IntArray     # their submissions
    support: float       # weighted mean calibrated confidence
    share: float         # share of answering submissions
    envelope: FloatArray  # p-weighted mean xyxy envelope
    used: bool = False


def calibrate(scores: FloatArray, tp: npt.NDArray[np.bool_], bins: int = SCORE_BINS
              ) -> FloatArray:
    """Calibrated confidence ``(N,)`` of each object: the smoothed precision of its score
    decile, non-decreasing in the score; ``nan`` scores get the smoothed precision of all.

    >>> calibrate(np.array([0.1, 0.2, 0.8, 0.9]), np.array([False, False, True, True]), 2)
    array([0.25, 0.25, 0.75, 0.75])
    """
    out = np.full(scores.size, (tp.sum() + 1.0) / (tp.size + 2.0))
    ok = np.isfinite(scores)
    if ok.sum() == 0:
        return out
    s, t = scores[ok], tp[ok]
    edges = np.unique(np.quantile(s, np.linspace(0, 1, bins + 1)[1:-1]))
    b = np.searchsorted(edges, s, side="right")
    n = np.bincount(b, minlength=edges.size + 1).astype(float)
    hits = np.bincount(b, weights=t.astype(float), minlength=edges.size + 1)
    used = n > 0
    out[ok] = _increasing((hits[used] + 1) / (n[used] + 2), n[used])[
        np.searchsorted(np.flatnonzero(used), b)]
    return out


def _increasing(values: FloatArray, weights: FloatArray) -> FloatArray:
    """The weighted least-squares non-decreasing fit (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, weight, count]
    for v, w in zip(values.tolist(), weights.tolist(), strict=True):
        blocks.append([v, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, c2 = blocks.pop()
            v1, w1, c1 = blocks[-1]
            blocks[-1] = [(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, c1 + c2]
    return np.repeat([b[0] for b in blocks], [b[2] for b in blocks])


def best_f1(scores: FloatArray, tp: npt.NDArray[np.bool_], n_gt: int) -> float:
    """The best F1 of a submission over score thresholds (``nan`` scores rank last).

    >>> best_f1(np.array([0.9, 0.8, 0.1]), np.array([True, True, False]), 3)
    0.8
    """
    if n_gt == 0 or tp.size == 0:
        return 0.0
    order = np.argsort(-np.nan_to_num(scores, nan=-np.inf), kind="stable")
    hits = np.cumsum(tp[order])
    return float(np.max(2 * hits / (np.arange(1, tp.size + 1) + n_gt)))


def _match(gt: Objects, pred: Objects, found: tuple[IntArray, IntArray, FloatArray],
           threshold: float) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """One submission's objects ``pred`` matched to ``gt`` from their overlapping pairs
    ``found`` (GT index, prediction index, IoU): per GT object its match (-1: none), per
    prediction whether it matched."""
    gi, pi, iou = found
    matched = np.full(len(gt), -1, dtype=np.intp)
    tp = np.zeros(len(pred), dtype=bool)
    ok = iou >= threshold
    if ok.any():
        rows, r = np.unique(gi[ok], return_inverse=True)
        cols, c = np.unique(pi[ok], return_inverse=True)
        sub = np.zeros((rows.size, cols.size))
        sub[r, c] = iou[ok]
        mg, mp = match(sub, threshold)
        matched[rows[mg]] = cols[mp]
        tp[cols[mp]] = True
    return matched, tp


def _queries(submissions: Sequence[Sequence[Sample]], modality: str, threshold: float
             ) -> list[_Query]:
    from ..analysis.ranking import named_categories

    first = submissions[0]
    named = named_categories(first)
    by_id = [{s.sample_id: s for s in subs} for subs in submissions]
    gts = objects_of(first, modality, "gt")
    # A submission without the query answers nothing: the GT sample, no prediction.
    answers = [objects_of([ids.get(s.sample_id) or _unanswered(s) for s in first], modality,
                          "pred") for ids in by_id]
    out = []
    for k, sample in enumerate(first):
        gt = gts[k]
        rows = [ids.get(sample.sample_id) for ids in by_id]
        preds = [a[k] for a in answers]
        category = named.get(sample.phrase, sample.phrase) if sample.negative else (
            sample.category)
        q = _Query(sample, category, gt, preds,
                   np.array([r is not None and r.has_prediction_row for r in rows]), [], [])
        for p, found in zip(preds, pairs_by_set(gt, preds, modality), strict=True):
            m, tp = _match(gt, p, found, threshold)
            q.matched.append(m)
            q.tp.append(tp)
        out.append(q)
    return out


def _unanswered(sample: Sample) -> Sample:
    return replace(sample, pred_mask=None, pred_boxes=EMPTY_BOXES, pred_box_scores=EMPTY_SCORES,
                   pred_obbs=EMPTY_POLYS, pred_obb_scores=EMPTY_SCORES,
                   has_prediction_row=False)


def _weights(queries: list[_Query], n_subs: int) -> FloatArray:
    """Calibrate every submission (``q.conf``) and return its quality weight ``(S,)``."""
    n_gt = sum(len(q.gt) for q in queries)
    weights = np.zeros(n_subs)
    for s in range(n_subs):
        scores = np.concatenate([q.preds[s].scores for q in queries] or [np.zeros(0)])
        tp = np.concatenate([q.tp[s] for q in queries] or [np.zeros(0, dtype=bool)])
        conf = calibrate(scores, tp) if scores.size else scores
        weights[s] = best_f1(scores, tp, n_gt)
        start = 0
        for q in queries:
            n = len(q.preds[s])
            q.conf.append(conf[start:start + n])
            start += n
    return weights


def _clusters(q: _Query, w: FloatArray, modality: str, threshold: float
              ) -> tuple[list[_Cluster], IntArray, IntArray]:
    """Clusters of the submissions' unmatched objects on ``q``; and, per pooled object,
    its submission and its index within that submission."""
    sizes = [len(p) for p in q.preds]
    owner = np.repeat(np.arange(len(sizes)), sizes).astype(np.intp)
    local = np.concatenate([np.arange(n) for n in sizes]).astype(np.intp)
    conf = np.concatenate(q.conf)
    free = ~np.concatenate(q.tp)
    envs = np.concatenate([p.envelope for p in q.preds])
    # Only free objects of other submissions can join a seed: pruned before any pair is
    # listed. Masks: their pairs with IoUs, from one sweep over the free components' pieces;
    # boxes: one seed's candidates at a time from a spatial index, and only those whose
    # areas allow an IoU >= threshold (IoU <= smaller / larger area) are intersected.
    if modality == "segmentation":
        u, v, known = pooled_candidates(q.preds, modality, free)
        keep = (owner[u] != owner[v]) & (known >= threshold)
        u, v, known = u[keep], v[keep], known[keep]
        both_u, both_v = np.concatenate([u, v]), np.concatenate([v, u])
        order = np.argsort(both_u, kind="stable")
        both_u, both_v = both_u[order], both_v[order]
        both_iou = np.concatenate([known, known])[order]
        starts = np.searchsorted(both_u, np.arange(owner.size + 1))
    else:
        near = seed_search(q.preds, free)
        geom = np.concatenate([p.geom for p in q.preds])
        area = areas(q.preds, modality)
    total = float(w[q.answered].sum())
    assigned = ~free.copy()
    out = []
    for seed in np.lexsort((np.arange(conf.size), -conf)):
        if assigned[seed]:
            continue
        if modality == "segmentation":
            lo, hi = starts[seed], starts[seed + 1]
            others = both_v[lo:hi]
            open_ = ~assigned[others]
            others, ious = others[open_], both_iou[lo:hi][open_]
        else:
            # In the order the listed pairs gave: the later objects, then the earlier ones.
            found = near(int(seed))
            found = np.concatenate([found[found > seed], found[found < seed]])
            small = np.minimum(area[found], area[seed])
            large = np.maximum(area[found], area[seed])
            possible = small >= threshold * large * (1 - 1e-9)
            others = found[(owner[found] != owner[seed]) & ~assigned[found] & possible]
            ious = seed_ious(geom, int(seed), others, modality)
        best: dict[int, tuple[float, int]] = {int(owner[seed]): (2.0, int(seed))}
        for other, value in zip(others.tolist(), ious.tolist(), strict=True):
            o = int(owner[other])
            if value >= threshold and (o not in best or value > best[o][0]):
                best[o] = (value, other)
        members = np.array(sorted(m for _, m in best.values()), dtype=np.intp)
        assigned[members] = True
        c = conf[members]
        wp = w[owner[members]] * c
        support = float(wp.sum() / total) if total > 0 else 0.0
        weight = c if c.sum() > 0 else np.ones(c.size)
        out.append(_Cluster(members, owner[members], support,
                            members.size / max(int(q.answered.sum()), 1),
                            (envs[members] * weight[:, None]).sum(0) / weight.sum()))
    return out, owner, local


def _gt_to_pooled(gt: Objects, preds: list[Objects], modality: str) -> dict[tuple[int, int], float]:
    """``{(gt index, pooled index): iou}`` of the overlapping pairs."""
    out: dict[tuple[int, int], float] = {}
    start = 0
    for p, (gi, pi, iou) in zip(preds, pairs_by_set(gt, preds, modality), strict=True):
        for g, j, value in zip(gi.tolist(), pi.tolist(), iou.tolist(), strict=True):
            out[g, start + j] = value
        start += len(p)
    return out


def _beside(gt_env: FloatArray, cl: _Cluster, overlap: float) -> bool:
    if overlap > 0:
        return True
    gc = (gt_env[:2] + gt_env[2:]) / 2
    cc = (cl.envelope[:2] + cl.envelope[2:]) / 2
    side = max(*(gt_env[2:] - gt_env[:2]), *(cl.envelope[2:] - cl.envelope[:2]))
    return bool(np.hypot(*(gc - cc)) <= BESIDE * side)


def _vote(q: _Query, s: int, k: int, names: Sequence[str]) -> dict[str, Any]:
    """Submission ``s``'s object ``k`` on ``q`` as a vote: its box, raw score, confidence."""
    raw = float(q.preds[s].scores[k])
    return {"submission": names[s], "bbox": xywh(q.preds[s].envelope[k]),
            "score": raw if np.isfinite(raw) else None,
            "confidence": round(float(q.conf[s][k]), 4)}


def _votes(cl: _Cluster, q: _Query, owner: IntArray, local: IntArray, names: Sequence[str]
           ) -> list[dict[str, Any]]:
    return [_vote(q, int(owner[m]), int(local[m]), names) for m in cl.members.tolist()]


def _gt_votes(q: _Query, g: int, names: Sequence[str]) -> list[dict[str, Any]]:
    return [_vote(q, s, int(m[g]), names) for s, m in enumerate(q.matched) if m[g] >= 0]


def audit_samples(submissions: Sequence[Sequence[Sample]], names: Sequence[str],
                  modality: str = "bbox", iou_threshold: float = 0.5,
                  min_score: float = MIN_SCORE) -> dict[str, Any]:
    """Audit one task's ground truth with ``submissions`` (each the task's samples as
    loaded for one submission, named ``names``): ``{"suspects", "objects",
    "submissions"}`` as docs/audit.md describes; suspects scored below ``min_score`` are
    left out, the rest best first."""
    queries = _queries(submissions, modality, iou_threshold)
    w = _weights(queries, len(submissions))
    objects_out: list[dict[str, Any]] = []
    evidence: list[FloatArray] = []
    for q in queries:
        n = max(int(q.answered.sum()), 1)
        e = np.zeros(len(q.gt))
        found = np.zeros(len(q.gt), dtype=int)
        for s, m in enumerate(q.matched):
            hit = m >= 0
            found += hit
            e[hit] = 1 - (1 - e[hit]) * (1 - w[s] * q.conf[s][m[hit]])
        evidence.append(e)
        for g in range(len(q.gt)):
            objects_out.append({"query_id": q.sample.sample_id, "object": g,
                                "category": q.category,
                                "bbox": xywh(q.gt.envelope[g]),
                                "found": int(found[g]), "support": round(float(found[g]) / n, 4),
                                "evidence": round(float(e[g]), 4)})
    clustered = [_clusters(q, w, modality, iou_threshold) for q in queries]
    by_image: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(queries):
        by_image[q.sample.image_path].append(i)
    suspects: list[dict[str, Any]] = []
    for indices in by_image.values():
        suspects += _image_suspects(indices, queries, clustered, evidence, names, modality,
                                    iou_threshold)
    suspects = [s for s in suspects if s["score"] >= min_score]
    suspects.sort(key=lambda s: (-s["score"], s["query_id"], s["kind"]))
    for rank, s in enumerate(suspects, start=1):
        s["rank"] = rank
    return {"suspects": suspects, "objects": objects_out,
            "submissions": [{"name": n, "weight": round(float(x), 4)}
                            for n, x in zip(names, w, strict=True)],
            "modality": modality, "iou_threshold": iou_threshold}


def _suspect(q: _Query, kind: str, envelope: FloatArray | None, score: float,
             support: float, votes: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"query_id": q.sample.sample_id, "kind": kind,
            "bbox": None if envelope is None else xywh(envelope),
            "category": q.category, "support": round(float(support), 4),
            "score": round(float(score), 4), "negative": q.sample.negative,
            "image_path": q.sample.image_path, "width": q.sample.width,
            "height": q.sample.height, **extra, "votes": votes}


def _image_suspects(indices: list[int], queries: list[_Query],
                    clustered: list[tuple[list[_Cluster], IntArray, IntArray]],
                    evidence: list[FloatArray], names: Sequence[str], modality: str,
                    threshold: float) -> list[dict[str, Any]]:
    """The suspects of one image's queries ``indices``: wrong classes first (a confident
    cluster on one category's query covering a GT object of another's), then per GT object
    shifted or spurious, then the clusters left as missing labels (one suspect per
    negative query)."""
    out = []
    explained: set[tuple[int, int]] = set()
    for score, i, g, j, cl in _wrong_classes(indices, queries, clustered, evidence,
                                             threshold):
        if (i, g) in explained or cl.used:
            continue
        cl.used = True
        explained.add((i, g))
        q, other = queries[i], queries[j]
        _, owner, local = clustered[j]
        out.append(_suspect(q, "wrong_class", q.gt.envelope[g], score, cl.share,
                            _votes(cl, other, owner, local, names), object=g,
                            gt_bbox=xywh(q.gt.envelope[g]), proposed_category=other.category,
                            evidence_query_id=other.sample.sample_id))
    for i in indices:
        q = queries[i]
        own: dict[tuple[int, int], float] | None = None
        for g in range(len(q.gt)):
            if (i, g) in explained:
                continue
            doubt = 1 - float(evidence[i][g])
            if doubt >= DOUBT and own is None:
                own = _gt_to_pooled(q.gt, q.preds, modality)
            cl = _shift(q, g, clustered[i][0], own) if doubt >= DOUBT else None
            share = float(sum(int(m[g] >= 0) for m in q.matched)) / max(
                int(q.answered.sum()), 1)
            if cl is None:
                out.append(_suspect(q, "spurious", q.gt.envelope[g], doubt, share,
                                    _gt_votes(q, g, names), object=g,
                                    gt_bbox=xywh(q.gt.envelope[g])))
                continue
            cl.used = True
            _, owner, local = clustered[i]
            out.append(_suspect(q, "shifted", cl.envelope, (doubt + cl.support) / 2,
                                cl.share, _votes(cl, q, owner, local, names), object=g,
                                gt_bbox=xywh(q.gt.envelope[g])))
        clusters, owner, local = clustered[i]
        left = sorted((cl for cl in clusters if not cl.used), key=lambda c: -c.support)
        if q.sample.negative and left:
            best = left[0]
            out.append(_suspect(q, "missing", best.envelope, best.support, best.share,
                                _votes(best, q, owner, local, names), also=[
                                    {"bbox": xywh(c.envelope), "support": round(c.support, 4)}
                                    for c in left[1:] if c.support >= CONSENSUS]))
            continue
        for cl in left:
            out.append(_suspect(q, "missing", cl.envelope, cl.support, cl.share,
                                _votes(cl, q, owner, local, names)))
    return out


def _wrong_classes(indices: list[int], queries: list[_Query],
                   clustered: list[tuple[list[_Cluster], IntArray, IntArray]],
                   evidence: list[FloatArray], threshold: float
                   ) -> list[tuple[float, int, int, int, _Cluster]]:
    """``(score, query, GT object, other query, cluster)`` of every confident cluster on a
    query of the image covering (envelopes' IoU >= ``threshold``) a GT object of another
    category's query, best first; score ``(1 - e + c) / 2``."""
    gts = [(i, g) for i in indices for g in range(len(queries[i].gt))]
    cls = [(j, cl) for j in indices for cl in clustered[j][0] if cl.support >= CONSENSUS]
    if not gts or not cls:
        return []
    gt_env = np.stack([queries[i].gt.envelope[g] for i, g in gts])
    cl_env = np.stack([cl.envelope for _, cl in cls])
    a, b = geometry.envelope_pairs(gt_env, cl_env)
    inter, union = geometry.pair_overlaps(gt_env, cl_env, a, b, False)
    out = []
    for x, y, iou in zip(a.tolist(), b.tolist(), (inter / union).tolist(), strict=True):
        (i, g), (j, cl) = gts[x], cls[y]
        if iou >= threshold and queries[i].category != queries[j].category:
            out.append(((1 - float(evidence[i][g]) + cl.support) / 2, i, g, j, cl))
    out.sort(key=lambda t: (-t[0], t[1], t[2], t[3]))
    return out


def _shift(q: _Query, g: int, clusters: list[_Cluster],
           own: dict[tuple[int, int], float] | None) -> _Cluster | None:
    """The most supported unused confident cluster of ``q`` beside its GT object ``g``."""
    best = None
    for cl in clusters:
        if cl.used or cl.support < CONSENSUS:
            continue
        iou = max(((own or {}).get((g, int(m)), 0.0) for m in cl.members), default=0.0)
        if _beside(q.gt.envelope[g], cl, iou) and (best is None or cl.support > best.support):
            best = cl
    return best
