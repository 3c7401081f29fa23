"""Synthetic submissions from model personas that fail the way the paper's models do.

A persona decides per query whether it answers (positives: detection rate per task; negatives:
hallucination rate), then produces instance polygons: perturbed ground-truth polygons (shifted,
grown or shrunk), a partial answer, a coarse blob, or the wrong object. Masks, boxes and oriented
boxes are derived from those polygons. Realistic faults are injected: missing rows, ``null`` and
``{"size": [0, 0], "counts": []}`` masks, valid all-zero masks (uncompressed ``counts``),
duplicate rows, bare and scored boxes, duplicate and false-positive boxes.

Prediction boxes are absolute-pixel ``[x1, y1, x2, y2]`` with ``x2 > x1`` and ``y2 > y1``;
oriented boxes are 4-corner rotated rectangles in boundary order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import geom
from .groundtruth import GroundTruth, QueryRecord
from .layout import AnnotationLayout


@dataclass(frozen=True)
class Persona:
    """Behaviour of one synthetic model.

    Attributes:
        name: file stem of the submission (``predictions/<name>.json``).
        detect: probability of a non-empty answer to a positive query, per task.
        hallucinate: probability of a non-empty answer to a negative query.
        modes: weights of the answer modes ``good``, ``partial``, ``coarse`` and ``wrong``.
        jitter: centre shift of a ``good`` answer, as a fraction of the object size.
        scale: range of the size factor of a ``good`` answer.
        recall: share of the instances of a multi-instance target that a ``good`` answer keeps.
        masks: whether the persona outputs segmentation masks.
        boxes: ``scored`` (objects with a score), ``bare`` (shorthand lists) or ``none``.
        duplicate_boxes: probability of a near-duplicate box per detection.
        false_boxes: mean number of false-positive boxes per answered query.
        missing: probability that a row is left out.
        duplicate_rows: probability that a query gets a second row.
        sentinel: probability that an empty mask is the ``[0, 0]`` sentinel rather than ``null``.
        zero_mask: probability that an empty mask is a valid all-zero RLE.
    """

    name: str
    detect: dict[str, float]
    hallucinate: float
    modes: tuple[float, float, float, float]
    jitter: float
    scale: tuple[float, float]
    recall: float
    masks: bool = True
    boxes: str = "scored"
    duplicate_boxes: float = 0.0
    false_boxes: float = 0.0
    missing: float = 0.01
    duplicate_rows: float = 0.004
    sentinel: float = 0.2
    zero_mask: float = 0.0


PERSONAS: tuple[Persona, ...] = (
    Persona("strong_localiser",
            {"open_vocabulary": 0.97, "referring": 0.98, "reasoning": 0.97},
            hallucinate=0.86, modes=(0.5, 0.2, 0.1, 0.2), jitter=0.09, scale=(0.88, 1.15),
            recall=0.7, boxes="scored", duplicate_boxes=0.1, false_boxes=1.5),
    Persona("cautious_segmenter",
            {"open_vocabulary": 0.74, "referring": 0.8, "reasoning": 0.72},
            hallucinate=0.13, modes=(0.25, 0.2, 0.45, 0.1), jitter=0.15, scale=(1.1, 1.45),
            recall=0.7, boxes="none", missing=0.015, sentinel=0.5),
    Persona("box_detector",
            {"open_vocabulary": 0.9, "referring": 0.85, "reasoning": 0.8},
            hallucinate=0.5, modes=(0.55, 0.2, 0.05, 0.2), jitter=0.16, scale=(0.8, 1.25),
            recall=0.6, masks=False, boxes="scored", duplicate_boxes=0.2, false_boxes=2.5,
            missing=0.005),
    Persona("weak_baseline",
            {"open_vocabulary": 0.93, "referring": 0.9, "reasoning": 0.9},
            hallucinate=0.9, modes=(0.1, 0.15, 0.35, 0.4), jitter=0.35, scale=(0.7, 1.6),
            recall=0.5, boxes="bare", false_boxes=0.6, missing=0.03, duplicate_rows=0.01,
            sentinel=0.3, zero_mask=0.2),
)

_MODES = ("good", "partial", "coarse", "wrong")
Stack = npt.NDArray[np.float64]  # (n, k, 2) polygons with k vertices each


def _sizes(b: Stack) -> npt.NDArray[np.float64]:
    span = b.max(axis=1) - b.min(axis=1)
    return np.maximum(2.0, np.sqrt(span[:, 0] * span[:, 1]))


def _transform(b: Stack, shift: npt.NDArray[np.float64], scale: npt.NDArray[np.float64],
               angle: npt.NDArray[np.float64]) -> Stack:
    """Scale and rotate each polygon about its vertex mean, then shift it: ``(n, k, 2)``."""
    c = b.mean(axis=1, keepdims=True)
    co, si = np.cos(angle)[:, None], np.sin(angle)[:, None]
    d = (b - c) * scale[:, None, None]
    rot = np.stack([d[..., 0] * co - d[..., 1] * si, d[..., 0] * si + d[..., 1] * co], axis=-1)
    return rot + c + shift[:, None, :]


def _good(rng: np.random.Generator, stacks: list[Stack], persona: Persona,
          keep: float) -> list[Stack]:
    total = sum(len(b) for b in stacks)
    # Small objects are found less often, as in the paper's small-target analysis.
    masks = [rng.random(len(b)) < keep * np.clip(np.sqrt(_sizes(b) / 24), 0.3, 1.0)
             if total > 1 else np.ones(len(b), bool) for b in stacks]
    if not any(m.any() for m in masks):
        masks[0][int(rng.integers(len(masks[0])))] = True
    out = []
    for b, m in zip(stacks, masks, strict=True):
        b = b[m]
        n = len(b)
        shift = rng.normal(0, 1, (n, 2)) * (persona.jitter * _sizes(b))[:, None]
        out.append(_transform(b, shift, rng.uniform(*persona.scale, n), rng.normal(0, 0.05, n)))
    return [b for b in out if len(b)]


def _partial(rng: np.random.Generator, stacks: list[Stack], persona: Persona) -> list[Stack]:
    if sum(len(b) for b in stacks) > 1:
        return _good(rng, stacks, persona, float(rng.uniform(0.2, 0.5)))
    p = stacks[0][0]
    # Squash the object towards one end of a random axis: the model found only part of it.
    d = rng.normal(size=2)
    d /= np.linalg.norm(d)
    proj = (p - p.mean(axis=0)) @ d
    t = float(rng.uniform(0.35, 0.65))
    return [(p - np.outer((proj - proj.min()) * (1 - t), d))[None]]


def _coarse(rng: np.random.Generator, stacks: list[Stack]) -> list[Stack]:
    n = sum(len(b) for b in stacks)
    if n > 3 and rng.random() < 0.6:
        parts = [p for b in stacks for p in b]
        hull = geom.hull_buffer(parts, 0.5 * float(np.median(np.concatenate(
            [_sizes(b) for b in stacks]))))
        if hull:
            return geom.batches(hull)
    out = []
    for b in stacks:
        r = geom.min_rects(b)
        out.append(_transform(r, np.zeros((len(r), 2)), rng.uniform(1.25, 1.7, len(r)),
                              np.zeros(len(r))))
    return out


def _elsewhere(rng: np.random.Generator, q: QueryRecord, stacks_of: _StackCache) -> list[Stack]:
    """The wrong object: another annotation of the image, or a look-alike elsewhere."""
    others = [a for a in q.image.annotations if a is not q.ann]
    if others and rng.random() < 0.6:
        o = stacks_of(others[int(rng.integers(len(others)))])
        return [b[rng.permutation(len(b))[:max(1, len(b) // 2)]] for b in o]
    w, h = q.image.plan.width, q.image.plan.height
    b = stacks_of(q.ann)[0]
    p = b[int(rng.integers(len(b)))]
    s = float(_sizes(p[None])[0])
    centre = rng.uniform([s, s], [max(s + 1, w - s), max(s + 1, h - s)])
    return [(p - p.mean(axis=0) + centre)[None]]


def _answer(rng: np.random.Generator, q: QueryRecord, persona: Persona,
            stacks_of: _StackCache) -> list[Stack]:
    own = stacks_of(q.ann)
    if q.negative:
        if rng.random() < 0.6:
            return _good(rng, own, persona, persona.recall)
        return _elsewhere(rng, q, stacks_of)
    mode = _MODES[int(rng.choice(4, p=np.array(persona.modes) / sum(persona.modes)))]
    if mode == "good":
        return _good(rng, own, persona, persona.recall)
    if mode == "partial":
        return _partial(rng, own, persona)
    if mode == "coarse":
        return _coarse(rng, own)
    return _elsewhere(rng, q, stacks_of)


def _clip(stacks: list[Stack], w: int, h: int) -> list[Stack]:
    """Clip vertices to the image; drop polygons thinner than 2 px; round to 0.01 px."""
    out = []
    for b in stacks:
        c = np.clip(b, 0.0, [w, h])
        span = c.max(axis=1) - c.min(axis=1)
        c = c[(span[:, 0] >= 2) & (span[:, 1] >= 2)]
        if len(c):
            out.append(np.round(c, 2))
    return out


def _false_rects(rng: np.random.Generator, q: QueryRecord, k: int) -> Stack:
    w, h = q.image.plan.width, q.image.plan.height
    p = q.ann.parts[0]
    s = 0.1 * min(w, h) if q.ann.plan.category.is_area else float(_sizes(p[None])[0])
    ln = s * rng.uniform(0.6, 1.5, k)
    aspect = rng.uniform(1.0, 2.5, k)
    unit = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])
    rects = unit[None] * np.stack([ln, ln / aspect], axis=1)[:, None, :]
    centre = rng.uniform([0, 0], [w, h], (k, 2))
    return _transform(rects, centre, np.ones(k), rng.uniform(0, math.pi, k))


def _envelopes(b: Stack) -> npt.NDArray[np.float64]:
    return np.concatenate([b.min(axis=1), b.max(axis=1)], axis=1)


def _boxes(rng: np.random.Generator, q: QueryRecord, persona: Persona,
           stacks: list[Stack]) -> tuple[list[Any], list[Any]]:
    """Axis-aligned and oriented boxes of the answer, with duplicates and false positives.

    A box is the envelope of an answer polygon and an oriented box its minimum-area
    rectangle. Hallucinated answers to negative queries get lower confidence, as real
    detectors do.
    """
    top = 0.6 if q.negative else 1.0
    rects = [geom.min_rects(b) for b in stacks]
    envs = [_envelopes(b) for b in stacks]
    scores = [rng.uniform(0.45, 0.97, len(r)) * top for r in rects]
    dup = [rng.random(len(r)) < persona.duplicate_boxes for r in rects]
    for r, s, d in list(zip(rects, scores, dup, strict=True)):
        if d.any():
            k = int(d.sum())
            shift = rng.normal(0, 1, (k, 2)) * (0.08 * _sizes(r[d]))[:, None]
            rects.append(_transform(r[d], shift, np.full(k, 1.05), np.zeros(k)))
            envs.append(_envelopes(rects[-1]))
            scores.append(s[d] * rng.uniform(0.3, 0.8, k))
    k = int(rng.poisson(persona.false_boxes))
    if k:
        rects.append(_false_rects(rng, q, k))
        envs.append(_envelopes(rects[-1]))
        scores.append(rng.uniform(0.05, 0.45, k))
    w, h = q.image.plan.width, q.image.plan.height
    raw = np.concatenate(rects)
    allr = np.clip(raw, 0.0, [w, h])
    xyxy = np.clip(np.concatenate(envs), 0.0, [w, h, w, h])
    alls = np.concatenate(scores)
    lo, hi = allr.min(axis=1), allr.max(axis=1)
    ok = np.all(hi - lo >= 2, axis=1) & np.all(xyxy[:, 2:] - xyxy[:, :2] >= 2, axis=1)
    allr, alls, xyxy, raw = allr[ok], alls[ok], xyxy[ok], raw[ok]
    # Clipping can bend a rotated rectangle at the border: re-fit a rectangle to the clip.
    bent = np.any(allr != raw, axis=(1, 2))
    if bent.any():
        allr[bent] = geom.min_rects(allr[bent])
    obbs = np.round(allr, 2).tolist()
    boxes = np.round(xyxy, 1).tolist()
    if persona.boxes == "bare":
        return boxes, obbs
    sc = np.round(alls, 3)
    osc = np.round(sc * 0.97, 3).tolist()
    return ([{"bbox": b, "score": s} for b, s in zip(boxes, sc.tolist(), strict=True)],
            [{"polygon": o, "score": s} for o, s in zip(obbs, osc, strict=True)])


def _empty_mask(rng: np.random.Generator, persona: Persona, q: QueryRecord) -> Any:
    r = rng.random()
    if r < persona.zero_mask:
        # A valid all-zero mask, written as an uncompressed RLE (one run of zeros).
        h, w = q.image.plan.height, q.image.plan.width
        return {"size": [h, w], "counts": [h * w]}
    if r < persona.zero_mask + persona.sentinel:
        return {"size": [0, 0], "counts": []}
    return None


def _row(q: QueryRecord, persona: Persona, stacks: list[Stack],
         rng: np.random.Generator) -> dict[str, Any]:
    w, h = q.image.plan.width, q.image.plan.height
    row: dict[str, Any] = {"query_id": q.query_id,
                           "phrase" if q.task == "open_vocabulary" else "query": q.text}
    if persona.masks:
        row["segmentation"] = (geom.rle_json(geom.rle(stacks, h, w)) if stacks
                               else _empty_mask(rng, persona, q))
    else:
        row["segmentation"] = None
    if persona.boxes != "none":
        boxes, obbs = _boxes(rng, q, persona, stacks) if stacks else ([], [])
        row["bbox"], row["oriented_bbox"] = boxes, obbs
    return row


class _StackCache:
    """Polygon stacks of each annotation, computed once per submission."""

    def __init__(self) -> None:
        self._cache: dict[str, list[Stack]] = {}

    def __call__(self, ann: AnnotationLayout) -> list[Stack]:
        key = ann.plan.ann_id
        if key not in self._cache:
            self._cache[key] = geom.batches(ann.parts)
        return self._cache[key]


def submission(gt: GroundTruth, persona: Persona, seed: int) -> dict[str, Any]:
    """The prediction document of one persona over all three tasks."""
    index = [p.name for p in PERSONAS].index(persona.name) if persona in PERSONAS else 99
    tasks: dict[str, list[dict[str, Any]]] = {t: [] for t in
                                               ("open_vocabulary", "referring", "reasoning")}
    stacks_of = _StackCache()
    rng = np.random.default_rng([seed, 3, index])
    for q in gt.queries:
        if rng.random() < persona.missing:
            continue
        answered = rng.random() < (persona.hallucinate if q.negative else persona.detect[q.task])
        w, h = q.image.plan.width, q.image.plan.height
        stacks = _clip(_answer(rng, q, persona, stacks_of), w, h) if answered else []
        tasks[q.task].append(_row(q, persona, stacks, rng))
        if rng.random() < persona.duplicate_rows:
            extra = _clip(_good(rng, stacks_of(q.ann), persona, 0.3), w, h) if answered else []
            tasks[q.task].append(_row(q, persona, extra, rng))
    return {"tasks": tasks}
