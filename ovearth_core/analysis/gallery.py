"""The gallery (patches view): one tile per GT box, per predicted box or per query.

A :class:`Tile` names an object of an evaluated :class:`~ovearth_core.run.Run` and what the
evaluation says about it; the app crops the image around ``box`` and draws it.

==================  ===========================================================================
selector            tiles, ``outcome``, ``iou``, ``score``
==================  ===========================================================================
GT boxes            every GT box of the modality; ``matched`` / ``missed`` (from the run's
                    ``matches``); ``iou``: the matched IoU, for a missed box its best IoU with
                    any prediction (0 with none); ``score``: the matched prediction's
predicted boxes     every predicted box; ``TP`` / ``FP``; ``iou``: the matched IoU (``None``
                    for a false positive); ``score``: its own (``None`` when not given)
queries             every query; its explorer outcome; ``iou``: mask IoU, else best box IoU,
                    else best oriented-box IoU; ``box``: the envelope of its GT geometry (of
                    the prediction for a query without GT; ``None`` with neither)
==================  ===========================================================================

With :func:`with_objects`, box tiles also carry ``error``, the box's object-level outcome
(:mod:`.objects`: TIDE's kinds), and ``confused_with``: for a predicted box left unmatched,
the category of a GT box of another category it reaches at the IoU threshold (the
category confusion's cell); for a GT box left unmatched, the category of the nearest
predicted box of the image when that is another category and reaches the threshold.

Boxes are xyxy in original image pixels. ``size`` is the square root of the object's
area (box ``w * h``; an oriented box's polygon area; a query: its GT envelope's), binned
as AI-TOD does (:data:`SIZE_BUCKETS`). Failure tag, category and polarity are the query's
(:mod:`.diagnose`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import masks
from ..run import Run
from ..types import Sample

Box = tuple[float, float, float, float]
SELECTORS: tuple[str, ...] = ("GT boxes", "predicted boxes", "queries")
BOX_MODALITIES: tuple[str, ...] = ("bbox", "oriented_bbox")
OUTCOMES = {"GT boxes": ("missed", "matched"), "predicted boxes": ("FP", "TP")}
# AI-TOD's bins of sqrt(area) in pixels: [low, high).
SIZE_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("very_tiny", 0.0, 8.0), ("tiny", 8.0, 16.0), ("small", 16.0, 32.0),
    ("medium", 32.0, 96.0), ("large", 96.0, math.inf))
SIZE_NAMES: tuple[str, ...] = tuple(name for name, _, _ in SIZE_BUCKETS)
SORTS: tuple[str, ...] = ("worst first", "smallest first", "largest first")
PER_PAGE = 48


@dataclass(frozen=True)
class Tile:
    """One object of the gallery (see the module docstring for each selector's fields).

    ``index``: the query's position in ``run.samples``; ``box_index``: the box's position
    in the query's GT or predicted boxes of ``modality`` (``None`` for a query tile).
    """

    query_id: str
    index: int
    kind: str  # "gt", "pred" or "query"
    modality: str | None
    box_index: int | None
    box: Box | None
    outcome: str
    iou: float | None
    score: float | None
    size: float | None
    text: str
    category: str
    polarity: str
    failure: str
    error: str = ""  # object-level outcome (with_objects), "" when not computed
    confused_with: str = ""  # another category's GT / prediction at the threshold

    @property
    def size_bucket(self) -> str | None:
        return size_bucket(self.size)

    @property
    def key(self) -> tuple[str, str, int | None]:
        """What identifies the tile's picture: query, kind and box."""
        return (self.query_id, self.kind, self.box_index)


def size_bucket(size: float | None) -> str | None:
    """The AI-TOD bin of ``sqrt(area)`` (``None`` for ``None`` or ``nan``).

    >>> size_bucket(7.9), size_bucket(8.0), size_bucket(96.0)
    ('very_tiny', 'tiny', 'large')
    """
    if size is None or math.isnan(size):
        return None
    return next(name for name, low, high in SIZE_BUCKETS if low <= size < high)


def _polygon_area(poly: np.ndarray) -> float:
    x, y = poly[:, 0], poly[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def _envelope(geom: np.ndarray, oriented: bool) -> Box:
    if oriented:
        return (float(geom[:, 0].min()), float(geom[:, 1].min()),
                float(geom[:, 0].max()), float(geom[:, 1].max()))
    return tuple(float(v) for v in geom)  # type: ignore[return-value]


def _size(geom: np.ndarray, oriented: bool) -> float:
    if oriented:
        return math.sqrt(_polygon_area(geom))
    x1, y1, x2, y2 = geom
    return math.sqrt(max(0.0, x2 - x1) * max(0.0, y2 - y1))


def _score(scores: np.ndarray, i: int) -> float | None:
    return float(scores[i]) if i < len(scores) and not np.isnan(scores[i]) else None


def query_extent(sample: Sample) -> Box | None:
    """Envelope of a query's GT masks and boxes, else of its prediction's, else ``None``."""
    for boxes, polys, rle in ((sample.gt_boxes, sample.gt_obbs, sample.gt_mask),
                              (sample.pred_boxes, sample.pred_obbs, sample.pred_mask)):
        parts = [np.asarray(boxes, dtype=float).reshape(-1, 4)]
        if len(polys):
            parts.append(np.concatenate([polys.min(axis=1), polys.max(axis=1)], axis=1))
        env = masks.bbox_of(rle)
        if env is not None:
            x, y, w, h = env
            parts.append(np.array([[x, y, x + w, y + h]], dtype=float))
        stacked = np.concatenate(parts)
        if stacked.size:
            return (float(stacked[:, 0].min()), float(stacked[:, 1].min()),
                    float(stacked[:, 2].max()), float(stacked[:, 3].max()))
    return None


def default_modality(run: Run) -> str | None:
    """The box modality the gallery shows first: HBB when evaluated, else OBB."""
    return next((m for m in BOX_MODALITIES if m in run.box_facts), None)


def tiles(run: Run, rows: Sequence[dict[str, Any]], selector: str,
          modality: str | None = None) -> list[Tile]:
    """Every tile of ``selector`` (one of :data:`SELECTORS`), in the run's query order.

    Args:
        run: the evaluated run.
        rows: its explorer table (:func:`.diagnose.query_rows`), for tags and outcomes.
        selector: ``GT boxes``, ``predicted boxes`` or ``queries``.
        modality: ``bbox`` or ``oriented_bbox`` for the box selectors (no tiles when that
            modality was not evaluated).
    """
    if selector not in SELECTORS:
        raise ValueError(f"selector must be one of {SELECTORS}, got {selector!r}")
    by_id = {r["query_id"]: r for r in rows}
    out: list[Tile] = []
    for index, sample in enumerate(run.samples):
        result, row = run.row(sample.sample_id), by_id[sample.sample_id]
        common = {"query_id": sample.sample_id, "index": index, "text": sample.phrase,
                  "category": sample.category, "polarity": row["polarity"],
                  "failure": row["failure"]}
        if selector == "queries":
            extent = query_extent(sample)
            gt_extent = extent if sample.gt_mask is not None or len(sample.gt_boxes) or len(
                sample.gt_obbs) else None
            size = None if gt_extent is None else math.sqrt(
                (gt_extent[2] - gt_extent[0]) * (gt_extent[3] - gt_extent[1]))
            iou = next((row[c] for c in ("seg_iou", "bbox_iou", "obb_iou")
                        if row[c] is not None), None)
            out.append(Tile(**common, kind="query", modality=None, box_index=None, box=extent,
                            outcome=row["outcome"], iou=iou, score=None, size=size))
            continue
        entry = result.get(modality) if modality in BOX_MODALITIES else None
        facts = run.facts(modality, index) if entry else None
        if entry is None or facts is None:
            continue
        out.extend(_box_tiles(sample, entry, facts.gt_best_iou, selector, modality, common))
    return out


def _box_tiles(sample: Sample, entry: dict[str, Any], gt_best: np.ndarray, selector: str,
               modality: str, common: dict[str, Any]) -> list[Tile]:
    oriented = modality == "oriented_bbox"
    gt = sample.gt_obbs if oriented else sample.gt_boxes
    pred = sample.pred_obbs if oriented else sample.pred_boxes
    scores = sample.pred_obb_scores if oriented else sample.pred_box_scores
    by_gt = {int(g): (int(p), float(iou)) for g, p, iou in entry["matches"]}
    by_pred = {p: (g, iou) for g, (p, iou) in by_gt.items()}
    out = []
    if selector == "GT boxes":
        for g, geom in enumerate(gt):
            p, iou = by_gt.get(g, (None, float(gt_best[g]) if g < len(gt_best) else 0.0))
            out.append(Tile(**common, kind="gt", modality=modality, box_index=g,
                            box=_envelope(geom, oriented),
                            outcome="matched" if p is not None else "missed", iou=iou,
                            score=None if p is None else _score(scores, p),
                            size=_size(geom, oriented)))
    else:
        for p, geom in enumerate(pred):
            hit = by_pred.get(p)
            out.append(Tile(**common, kind="pred", modality=modality, box_index=p,
                            box=_envelope(geom, oriented), outcome="TP" if hit else "FP",
                            iou=hit[1] if hit else None, score=_score(scores, p),
                            size=_size(geom, oriented)))
    return out


def with_objects(items: Sequence[Tile], objects: Sequence[Any], iou_threshold: float,
                 ) -> list[Tile]:
    """Box tiles with ``error`` and ``confused_with`` from the run's object outcomes
    (:func:`.objects.query_objects` of the tiles' modality, in query order); query tiles
    unchanged."""
    out = []
    for t in items:
        qo = objects[t.index] if t.box_index is not None else None
        if qo is None or qo.modality != t.modality:
            out.append(t)
            continue
        i = t.box_index
        if t.kind == "gt":
            error = qo.gt_outcome[i]
            other = (qo.gt_near_category[i] if error != "matched"
                     and qo.gt_near_category[i] not in ("", t.category)
                     and qo.gt_near_iou[i] >= iou_threshold else "")
        else:
            error = qo.pred_outcome[i]
            other = (qo.pred_other_category[i] if error != "matched"
                     and qo.pred_other_iou[i] >= iou_threshold else "")
        out.append(replace(t, error=error, confused_with=other))
    return out


def _in_range(value: float | None, low: float, high: float) -> bool:
    if low <= 0 and high >= 1:
        return True
    return value is not None and low <= value <= high


def filter_tiles(items: Sequence[Tile], *, outcomes: Sequence[str] = (),
                 failures: Sequence[str] = (), categories: Sequence[str] = (),
                 polarity: str = "all", sizes: Sequence[str] = (),
                 iou_range: tuple[float, float] = (0.0, 1.0),
                 query_ids: Collection[str] | None = None, errors: Sequence[str] = (),
                 confused_with: Sequence[str] = ()) -> list[Tile]:
    """Tiles passing every filter, order kept; an empty selection means "no filter".

    A full ``iou_range`` (0, 1) keeps tiles without an IoU (false positives, queries
    without one); a narrower range drops them. ``sizes`` are :data:`SIZE_NAMES`.
    ``query_ids`` (``None``: no filter) keeps the tiles of those queries, as the
    explorer's ``query_ids`` does (the review-tag filter: queries with a tag on the query
    or on one of its objects). ``errors``: object-level outcomes; ``confused_with``: the
    other category (both need :func:`with_objects`).
    """
    low, high = iou_range
    return [t for t in items
            if not (query_ids is not None and t.query_id not in query_ids)
            and not (outcomes and t.outcome not in outcomes)
            and not (failures and t.failure not in failures)
            and not (categories and t.category not in categories)
            and not (polarity != "all" and t.polarity != polarity)
            and not (sizes and t.size_bucket not in sizes)
            and not (errors and t.error not in errors)
            and not (confused_with and t.confused_with not in confused_with)
            and _in_range(t.iou, low, high)]


_BAD_OUTCOMES = {"missed", "FP", "FN", "miss"}


def _worst_key(t: Tile) -> tuple[Any, ...]:
    """Failures first; among them the most confident false positive, the least overlapped
    miss; then the lowest IoU."""
    failed = t.outcome in _BAD_OUTCOMES or (t.kind == "query" and t.failure != "ok")
    score = -(t.score or 0.0) if t.kind == "pred" else 0.0
    return (not failed, score, t.iou if t.iou is not None else -1.0, t.query_id,
            t.box_index or 0)


def sort_tiles(items: Sequence[Tile], order: str = "worst first") -> list[Tile]:
    """``items`` in one of :data:`SORTS`; tiles without a size go last in a size order."""
    if order == "worst first":
        return sorted(items, key=_worst_key)
    if order not in SORTS:
        raise ValueError(f"order must be one of {SORTS}, got {order!r}")
    sign = 1.0 if order == "smallest first" else -1.0
    return sorted(items, key=lambda t: (t.size is None, sign * (t.size or 0.0), t.query_id,
                                        t.box_index or 0))


def page_count(n: int, per_page: int = PER_PAGE) -> int:
    """Pages needed for ``n`` tiles (at least one, so an empty gallery has page 1)."""
    return max(1, math.ceil(n / per_page))


def page(items: Sequence[Tile], number: int, per_page: int = PER_PAGE) -> list[Tile]:
    """Tiles of page ``number`` (1-based, clamped to the pages there are)."""
    number = min(max(1, number), page_count(len(items), per_page))
    return list(items[(number - 1) * per_page: number * per_page])
