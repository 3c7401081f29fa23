"""COCO's mAP per category and size, AR@1/10/100 and the tie rule, against pycocotools'
COCOeval; DOTA_devkit's voc_eval, its conventions written out below (not imported).

Each query is a COCO image holding one category (the query's), its GT boxes the image's
annotations (area: the sample's ``gt_area`` where given, else w * h) and its scored boxes the
detections (area w * h, as ``loadRes`` sets it). COCOeval runs with our IoU
thresholds (exact decimals 0.50, 0.55, ..., 0.95; its own linspace gives
0.6000000000000001) and its own summary (``ev.stats``) is the reference.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
from typing import Any

import numpy as np
import pytest
import refs
from analysis_fixtures import corners, sample, sample_list
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from ovearth_core.analysis.ap import (
    average_precision_report,
    coco_average_precision,
    voc_average_precision,
    voc_devkit_report,
)
from ovearth_core.types import IOU_THRESHOLDS, Sample

AI_TOD = (("very_tiny", 0, 8), ("tiny", 8, 16), ("small", 16, 32), ("medium", 32, 96),
          ("large", 96, math.inf))


def _xywh(b: Any) -> list[float]:
    return [float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])]


class _PolygonEval(COCOeval):
    """COCOeval whose IoUs are polygon IoUs (Sutherland-Hodgman, tests/refs.py) of the
    annotations' ``poly``; everything else is COCOeval's own."""

    def computeIoU(self, imgId: int, catId: int) -> Any:  # noqa: N802 (COCOeval's name)
        p = self.params
        if p.useCats:
            gt, dt = self._gts[imgId, catId], self._dts[imgId, catId]
        else:  # COCOeval's own useCats=0 branch: every category's boxes of the image
            gt = [g for c in p.catIds for g in self._gts[imgId, c]]
            dt = [d for c in p.catIds for d in self._dts[imgId, c]]
        if not gt or not dt:
            return []
        order = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in order[:self.params.maxDets[-1]]]
        return np.array([[refs.polygon_iou(d["poly"], g["poly"]) for g in gt] for d in dt])


def cocoeval(samples: list[Sample], oriented: bool = False, area_ranges: Any = None,
             use_negatives: bool = False, one_class: bool = False,
             use_cats: bool = True) -> COCOeval:
    """COCOeval (evaluated and accumulated) on the queries; ``area_ranges``: (name, lo, hi);
    ``use_cats=False``: COCOeval's own ``params.useCats = 0`` (every category as one)."""
    cats = sorted({s.category for s in samples})
    images, anns, dets = [], [], []
    for i, s in enumerate(samples, start=1):
        if s.negative and not use_negatives:
            continue
        images.append({"id": i})
        cat = 1 if one_class else cats.index(s.category) + 1
        gts = s.gt_obbs if oriented else s.gt_boxes
        # COCO's area where the sample has one (an instance mask's pixel count), else w * h.
        given = s.gt_area.tolist() if s.gt_area.size == len(gts) else [None] * len(gts)
        for g, b, area in zip(gts, s.gt_boxes, given, strict=True):
            own = abs(refs.signed_area(g)) if oriented else (b[2] - b[0]) * (b[3] - b[1])
            ann = {"id": len(anns) + 1, "image_id": i, "category_id": cat, "iscrowd": 0,
                   "bbox": _xywh(b), "area": own if area is None else area}
            if oriented:
                ann["poly"] = [tuple(p) for p in g]
            anns.append(ann)
        for b in ([] if oriented else s.gt_ignore_boxes):  # crowd regions, after the boxes
            anns.append({"id": len(anns) + 1, "image_id": i, "category_id": cat, "iscrowd": 1,
                         "bbox": _xywh(b), "area": (b[2] - b[0]) * (b[3] - b[1])})
        preds = s.pred_obbs if oriented else s.pred_boxes
        scores = s.pred_obb_scores if oriented else s.pred_box_scores
        for p, b, sc in zip(preds, s.pred_boxes, scores, strict=True):
            det = {"image_id": i, "category_id": cat, "score": float(sc), "bbox": _xywh(b)}
            if oriented:
                det["poly"] = [tuple(x) for x in p]
            dets.append(det)
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": anns,
                      "categories": [{"id": k + 1} for k in range(1 if one_class else
                                                                   len(cats))]}
        gt.createIndex()
        dt = gt.loadRes(dets) if dets else COCO()
        if oriented:
            for d in dt.dataset["annotations"]:
                d["area"] = abs(refs.signed_area(d["poly"]))
        ev = (_PolygonEval if oriented else COCOeval)(gt, dt, "bbox")
        ev.params.iouThrs = np.array(IOU_THRESHOLDS)
        ev.params.useCats = int(use_cats)
        if area_ranges is not None:
            ev.params.areaRng = [[lo, hi] for _, lo, hi in area_ranges]
            ev.params.areaRngLbl = [name for name, _, _ in area_ranges]
        ev.evaluate()
        ev.accumulate()
        if area_ranges is None:
            ev.summarize()
    return ev


def _mean_valid(values: np.ndarray) -> float | None:
    valid = values[values > -1]
    return float(valid.mean()) if valid.size else None


def random_queries(seed: int, n: int = 30, n_cat: int = 4, oriented: bool = False
                   ) -> list[Sample]:
    """Queries with integer boxes of every COCO and AI-TOD size, jittered and duplicated
    detections, background boxes, scores with ties (two decimals), negatives."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        negative = i % 7 == 6
        scale = float(rng.choice([5, 12, 24, 60, 140]))
        gt = []
        for _ in range(0 if negative else int(rng.integers(1, 5))):
            x, y = rng.integers(0, 300, 2)
            w, h = np.maximum(1, rng.normal(scale, scale / 4, 2).round())
            gt.append([float(x), float(y), float(x + w), float(y + h)])
        pred = []
        for b in gt:
            for _ in range(int(rng.choice([0, 1, 1, 1, 2]))):
                d = rng.normal(0, (b[2] - b[0]) / 8, 4).round()
                box = [b[0] + d[0], b[1] + d[1], b[2] + d[2], b[3] + d[3]]
                box[2], box[3] = max(box[2], box[0] + 1), max(box[3], box[1] + 1)
                pred.append(box)
        for _ in range(int(rng.integers(0, 3))):
            x, y = rng.integers(0, 300, 2)
            w, h = rng.integers(1, 150, 2)
            pred.append([float(x), float(y), float(x + w), float(y + h)])
        scores = rng.random(len(pred)).round(2).tolist()
        s = sample(f"q{i}", gt, pred, scores, negative=negative,
                   category=f"cat{int(rng.integers(0, n_cat))}")
        if oriented:
            s.gt_obbs = np.array([corners(b, float(rng.uniform(0, 3))) for b in gt]
                                 ).reshape(-1, 4, 2)
            s.pred_obbs = np.array([corners(b, float(rng.uniform(0, 0.3))) for b in pred]
                                   ).reshape(-1, 4, 2)
        out.append(s)
    return out


# COCOeval's stats[0:12]: AP, AP50, AP75, AP small/medium/large, AR@1/10/100, AR by size;
# each key once per basis, pooled (useCats=0) and per-category mean (useCats=1).
STAT_NAMES = ("@[0.5:0.95]", "@0.5", "@0.75", "_small", "_medium", "_large",
              "@1", "@10", "@100", "_small", "_medium", "_large")
POOLED_KEYS = tuple(("ap" if k < 6 else "ar") + n for k, n in enumerate(STAT_NAMES))
MEAN_KEYS = tuple("m" + k for k in POOLED_KEYS)
STAT_KEYS = MEAN_KEYS  # the per-category block (negative queries' boxes in no category here)


def _stats(ev: COCOeval) -> list[float | None]:
    return [None if v == -1 else float(v) for v in ev.stats[:12]]


def _check_against_cocoeval(samples: list[Sample], oriented: bool, hard: bool) -> None:
    modality = "oriented_bbox" if oriented else "bbox"
    ours = coco_average_precision(samples, modality, include_negatives=hard)
    ev = cocoeval(samples, oriented)
    # Per-category means: COCOeval as COCO runs it (useCats=1).
    for key, want in zip(MEAN_KEYS, _stats(ev), strict=True):
        assert ours[key] == (None if want is None else pytest.approx(want, abs=1e-9)), key
    # Pooled: the same images and categories, COCOeval with useCats=0 (the hard negatives'
    # boxes included when asked).
    pooled = cocoeval(samples, oriented, use_negatives=hard, use_cats=False)
    for key, want in zip(POOLED_KEYS, _stats(pooled), strict=True):
        assert ours[key] == (None if want is None else pytest.approx(want, abs=1e-9)), key
    for k, t in enumerate(IOU_THRESHOLDS):
        want = _mean_valid(pooled.eval["precision"][k, :, :, 0, -1])
        assert ours["ap_by_iou"][f"{t:.2f}"] == pytest.approx(want, abs=1e-9), t
    cats = sorted({s.category for s in samples})
    prec = ev.eval["precision"][:, :, :, 0, -1]  # (T, R, K) at area "all", 100 boxes
    for k, name in enumerate(cats):
        want = _mean_valid(prec[:, :, k])
        got = ours["per_category"].get(name)
        if want is None:
            assert got is None
            continue
        assert got["ap@[0.5:0.95]"] == pytest.approx(want, abs=1e-9), name
        assert got["ap@0.5"] == pytest.approx(_mean_valid(prec[0, :, k]), abs=1e-9)
        assert got["ap@0.75"] == pytest.approx(_mean_valid(prec[5, :, k]), abs=1e-9)
    assert ours["num_categories"] == len(ours["per_category"])
    # The AI-TOD bins, closed below and open above (COCOeval's are closed at both ends:
    # the upper end one float below the bin's edge gives the open bound).
    ranges = [("all", 0, 1e10)] + [(n, lo * lo, np.nextafter(hi * hi, 0)) for n, lo, hi in
                                   AI_TOD]
    tod = cocoeval(samples, oriented, ranges)
    tod_pooled = cocoeval(samples, oriented, ranges, use_negatives=hard, use_cats=False)
    for a, (name, _, _) in enumerate(AI_TOD, start=1):
        for key, run in (("map_by_size", tod), ("ap_by_size", tod_pooled)):
            want = _mean_valid(run.eval["precision"][:, :, :, a, -1])
            got = ours[key][name]
            assert got == (None if want is None else pytest.approx(want, abs=1e-9)), (key, name)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_map_sizes_and_recall_equal_cocoeval(seed: int, hard: bool) -> None:
    samples = random_queries(seed)
    sizes = {s.category for s in samples}
    assert len(sizes) > 1
    _check_against_cocoeval(samples, oriented=False, hard=hard)


@pytest.mark.parametrize("seed", range(6))
def test_map_sizes_and_recall_with_crowd_regions_equal_cocoeval(seed: int) -> None:
    # Ignore regions (COCO crowds) with detections inside, half inside and around them, in
    # queries with targets of every size and in crowd-only queries.
    rng = np.random.default_rng(seed + 300)
    samples = random_queries(300 + seed)
    for k, s in enumerate(samples):
        if s.negative or rng.random() < 0.4:
            continue
        x, y = (float(v) for v in rng.integers(0, 200, 2))
        w, h = (float(v) for v in rng.integers(10, 120, 2))
        s.gt_ignore_boxes = np.array([[x, y, x + w, y + h]])
        if k % 4 == 0:
            s.gt_boxes = s.gt_boxes[:0]
        inside = [[x + a * w, y + b * h, x + a * w + w / 3, y + b * h + h / 3]
                  for a, b in rng.uniform(0, 0.6, (3, 2)).round(1)]
        s.pred_boxes = np.concatenate([s.pred_boxes.reshape(-1, 4), inside,
                                       [[x - w / 4, y, x + w / 4, y + h / 4]]])
        s.pred_box_scores = np.concatenate([s.pred_box_scores, rng.random(4).round(2)])
    assert any(len(s.gt_ignore_boxes) and not len(s.gt_boxes) for s in samples)
    _check_against_cocoeval(samples, oriented=False, hard=False)


@pytest.mark.parametrize("seed", range(3))
def test_oriented_map_equals_cocoeval_with_polygon_iou(seed: int) -> None:
    _check_against_cocoeval(random_queries(100 + seed, n=20, oriented=True), oriented=True,
                            hard=False)


def _with_mask_areas(samples: list[Sample], seed: int, share: float = 1.0) -> list[Sample]:
    """Give a ``share`` of the positive queries an instance area per GT box that is not
    its box's: a mask filling 20-100 % of it, some set exactly on COCO's and AI-TOD's edges
    (32**2, 96**2, 8**2) while the box is elsewhere, as COCO's own areas are."""
    rng = np.random.default_rng(seed)
    edges = [32.0 ** 2, 96.0 ** 2, 8.0 ** 2, 16.0 ** 2]
    for s in samples:
        s.gt_area = np.zeros(0)
        if s.negative or not len(s.gt_boxes) or rng.random() >= share:
            continue
        w, h = (s.gt_boxes[:, 2] - s.gt_boxes[:, 0]), (s.gt_boxes[:, 3] - s.gt_boxes[:, 1])
        area = (w * h * rng.uniform(0.2, 1.0, len(w))).round()
        on_edge = rng.random(len(w)) < 0.2
        area[on_edge] = rng.choice(edges, int(on_edge.sum()))
        s.gt_area = area
    return samples


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_size_keys_range_gt_by_its_area_as_cocoeval(seed: int, hard: bool) -> None:
    """Issue 46: COCOeval puts a GT box in a size range by its annotation's ``area`` (an
    instance mask's pixel count), not by w * h; a detection by its box's w * h."""
    samples = _with_mask_areas(random_queries(seed), seed)
    boxes = np.concatenate([s.gt_boxes for s in samples if s.gt_area.size])
    given = np.concatenate([s.gt_area for s in samples if s.gt_area.size])
    own = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    range_of = np.digitize  # a box changes COCO range or AI-TOD bin: the test can tell
    assert (range_of(given, [32 ** 2, 96 ** 2]) != range_of(own, [32 ** 2, 96 ** 2])).any()
    assert (range_of(given, [64, 256, 1024, 9216]) != range_of(own, [64, 256, 1024, 9216])
            ).any()
    _check_against_cocoeval(samples, oriented=False, hard=hard)
    basis = coco_average_precision(samples, "bbox")["size_basis"]
    assert basis == {"ground_truth": "annotation area", "detections": "box area (w x h)",
                     "num_gt_with_area": len(given), "num_gt": len(given)}


@pytest.mark.parametrize("seed", range(3))
def test_size_keys_with_areas_on_some_queries_only_equal_cocoeval(seed: int) -> None:
    samples = _with_mask_areas(random_queries(40 + seed), 40 + seed, share=0.5)
    n_given = sum(s.gt_area.size for s in samples)
    n_gt = sum(len(s.gt_boxes) for s in samples)
    assert 0 < n_given < n_gt
    _check_against_cocoeval(samples, oriented=False, hard=False)
    basis = coco_average_precision(samples, "bbox")["size_basis"]
    assert basis == {"ground_truth": "annotation area where given, else box area (w x h)",
                     "detections": "box area (w x h)", "num_gt_with_area": n_given,
                     "num_gt": n_gt}


@pytest.mark.parametrize("seed", range(2))
def test_oriented_size_keys_range_gt_by_its_area_as_cocoeval(seed: int) -> None:
    samples = _with_mask_areas(random_queries(100 + seed, n=20, oriented=True), seed)
    _check_against_cocoeval(samples, oriented=True, hard=False)
    plain = coco_average_precision(random_queries(100 + seed, n=20, oriented=True),
                                   "oriented_bbox")["size_basis"]
    assert plain == {"ground_truth": "polygon area", "detections": "polygon area",
                     "num_gt_with_area": 0, "num_gt": plain["num_gt"]}


def test_two_gt_tie_takes_the_last_gt_as_cocoeval() -> None:
    # D1 has IoU 90/110 with both GT boxes; COCOeval gives it the last (B), so D2 (equal to
    # A) matches A at every threshold. Taking the first (A) would leave D2 with B (IoU 2/3),
    # a false positive from 0.70 on.
    a, b = [0, 0, 10, 10], [2, 0, 12, 10]
    samples = [sample("tie", [a, b], [[1, 0, 11, 10], a], [0.9, 0.8]),
               sample("other", [[50, 50, 60, 60]], [[50, 50, 60, 61], [0, 0, 5, 5]],
                      [0.85, 0.95])]
    assert refs.box_iou([1, 0, 11, 10], a) == refs.box_iou([1, 0, 11, 10], b)
    ours = coco_average_precision(samples, "bbox")
    ev = cocoeval(samples, one_class=True)
    assert ours["ap@[0.5:0.95]"] == pytest.approx(float(ev.stats[0]), abs=1e-12)
    assert ours["map@[0.5:0.95]"] == pytest.approx(float(ev.stats[0]), abs=1e-12)
    # The first-GT rule (the old behaviour) gives a different number on this case.
    first_gt = _first_gt_rule_ap(samples)
    assert abs(first_gt - ours["ap@[0.5:0.95]"]) > 0.05


def _first_gt_rule_ap(samples: list[Sample]) -> float:
    """COCO AP with ties going to the first GT box (written out; every query one class)."""
    dets = sorted(((-sc, i, k) for i, s in enumerate(samples)
                   for k, sc in enumerate(s.pred_box_scores)))
    n_gt = sum(len(s.gt_boxes) for s in samples)
    aps = []
    for t in IOU_THRESHOLDS:
        taken: set[tuple[int, int]] = set()
        hits = []
        for _, i, k in dets:
            s = samples[i]
            ious = [refs.box_iou(g, s.pred_boxes[k]) for g in s.gt_boxes]
            free = [(v, -g) for g, v in enumerate(ious) if v >= t and (i, g) not in taken]
            if free:
                taken.add((i, -max(free)[1]))
            hits.append(bool(free))
        tp = np.cumsum(hits)
        precision, recall = tp / np.arange(1, len(hits) + 1), tp / n_gt
        levels = np.linspace(0, 1, 101)
        aps.append(np.mean([max([p for p, r in zip(precision, recall, strict=True) if r >= x],
                                default=0.0) for x in levels]))
    return float(np.mean(aps))


def test_size_range_edges_and_in_range_preference_as_cocoeval() -> None:
    samples = [
        # A detection with IoU >= 0.5 to a small GT box (900 px) and, higher, to a medium
        # one (1600 px): in "small" COCOeval gives it the small box (inside the range).
        sample("prefer", [[0, 0, 30, 30], [0, 0, 40, 40]], [[0, 0, 36, 36], [100, 0, 130, 30]],
               [0.9, 0.3], category="a"),
        # Boxes exactly on the edges: 32 x 32 (COCO small and medium; AI-TOD medium), 8 x 8
        # (AI-TOD tiny), 96 x 96 (COCO medium and large; AI-TOD large), matched and not.
        sample("edges", [[0, 0, 32, 32], [50, 0, 58, 8], [100, 0, 196, 96]],
               [[0, 0, 32, 32], [50, 0, 58, 8], [300, 0, 396, 96], [0, 200, 32, 232]],
               [0.8, 0.7, 0.6, 0.5], category="b"),
        sample("more", [[0, 0, 16, 16], [40, 40, 72, 72]], [[1, 1, 17, 17], [40, 40, 72, 71]],
               [0.4, 0.95], category="a"),
    ]
    _check_against_cocoeval(samples, oriented=False, hard=False)
    ours = coco_average_precision(samples, "bbox")
    assert ours["ap_small"] is not None and ours["ap_by_size"]["tiny"] is not None
    assert ours["map_small"] is not None and ours["map_by_size"]["tiny"] is not None


def test_negative_queries_have_no_category_of_their_own() -> None:
    samples = random_queries(3)
    assert any(s.negative and len(s.pred_boxes) for s in samples)
    plain = coco_average_precision(samples, "bbox")
    hard = coco_average_precision(samples, "bbox", include_negatives=True)
    assert hard["ap@[0.5:0.95]"] < plain["ap@[0.5:0.95]"]
    assert hard["num_detections"] > plain["num_detections"]
    for key in STAT_KEYS + ("map_by_size", "per_category", "num_categories"):
        assert hard[key] == plain[key], key


def test_a_category_with_gt_but_no_detection_scores_zero() -> None:
    samples = [sample("a", [[0, 0, 10, 10]], [[0, 0, 10, 10]], [0.9], category="found"),
               sample("b", [[0, 0, 10, 10]], [], category="missed")]
    ours = coco_average_precision(samples, "bbox")
    assert ours["per_category"]["missed"]["ap@[0.5:0.95]"] == 0.0
    assert ours["per_category"]["found"]["ap@[0.5:0.95]"] == 1.0
    assert ours["map@[0.5:0.95]"] == 0.5
    assert ours["map_by_size"]["small"] is None  # no GT box of side 16-32: left out, not 0
    assert ours["ap_by_size"]["small"] is None
    ev = cocoeval(samples)
    assert ours["map@[0.5:0.95]"] == pytest.approx(float(ev.stats[0]))


# ------------------------------------------------------------- DOTA_devkit's voc_eval


def devkit_voc_eval(samples: list[Sample], ovthresh: float, use_07_metric: bool,
                    oriented: bool) -> float:
    """DOTA_devkit's voc_eval for one class (dota_evaluation_task1/2.py), written out.

    One image per query, its GT boxes (none difficult) and its detections in file order;
    detections sorted by ``np.argsort(-confidence)``; for axis-aligned boxes the IoU with
    the +1 pixel convention (task 2), for oriented boxes the polygon IoU (task 1's polyiou);
    ``jmax = np.argmax(overlaps)``; a hit when ``ovmax > ovthresh``; the first hit on a GT
    box is a TP, later ones FPs; rec = tp / npos, prec = tp / max(tp + fp, eps); voc_ap with
    the 11 levels of ``np.arange(0., 1.1, 0.1)`` or the area under the envelope.
    """
    image_ids, confidence, boxes = [], [], []
    for i, s in enumerate(samples):
        preds = s.pred_obbs if oriented else s.pred_boxes
        scores = s.pred_obb_scores if oriented else s.pred_box_scores
        for p, sc in zip(preds, scores, strict=True):
            image_ids.append(i)
            confidence.append(float(sc))
            boxes.append(p)
    confidence_arr = np.array(confidence)
    sorted_ind = np.argsort(-confidence_arr)
    det = {i: [False] * len(s.gt_boxes) for i, s in enumerate(samples)}
    npos = sum(len(s.gt_boxes) for s in samples)
    tp, fp = np.zeros(len(sorted_ind)), np.zeros(len(sorted_ind))
    for d, j in enumerate(sorted_ind):
        s = samples[image_ids[j]]
        bb = boxes[j]
        ovmax = -np.inf
        gts = s.gt_obbs if oriented else s.gt_boxes
        if len(gts) > 0:
            if oriented:
                overlaps = np.array([refs.polygon_iou(g, bb) for g in gts])
            else:
                overlaps = refs.devkit_box_iou(np.asarray(gts, dtype=float), bb)
            ovmax = np.max(overlaps)
            jmax = np.argmax(overlaps)
        if ovmax > ovthresh:
            if not det[image_ids[j]][jmax]:
                tp[d] = 1.
                det[image_ids[j]][jmax] = True
            else:
                fp[d] = 1.
        else:
            fp[d] = 1.
    return refs.devkit_voc_ap(tp, fp, npos, use_07_metric)


@pytest.mark.parametrize("oriented", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_devkit_option_reproduces_voc_eval(seed: int, oriented: bool) -> None:
    samples = [s for s in random_queries(200 + seed, oriented=oriented) if not s.negative]
    modality = "oriented_bbox" if oriented else "bbox"
    for t in (0.5, 0.7):
        report = voc_devkit_report(samples, modality, t)
        assert report["ap_11_point"] == pytest.approx(
            devkit_voc_eval(samples, t, True, oriented), abs=1e-12)
        assert report["ap_every_point"] == pytest.approx(
            devkit_voc_eval(samples, t, False, oriented), abs=1e-12)
        cats = sorted({s.category for s in samples})
        want = {c: devkit_voc_eval([s for s in samples if s.category == c], t, True, oriented)
                for c in cats}
        assert {c: v["ap_11_point"] for c, v in report["per_category"].items()} == (
            pytest.approx(want, abs=1e-12))
        assert report["map_11_point"] == pytest.approx(np.mean(list(want.values())), abs=1e-12)


def test_devkit_and_exact_conventions_differ_where_they_should() -> None:
    # IoU exactly 0.5 (continuous coordinates): a hit for IoU >= t, a miss for the devkit's
    # IoU > t -- with the +1 pixel convention the IoU is 11*11 / (11*21 + ...) anyway, so
    # check the strict test on oriented boxes (no pixel convention).
    half = sample("half", [[0, 0, 10, 10]], [[0, 0, 10, 5]], [0.9])
    exact = voc_average_precision([half], "oriented_bbox", 0.5)
    devkit = voc_average_precision([half], "oriented_bbox", 0.5, convention="devkit")
    assert (exact["num_tp"], devkit["num_tp"]) == (1, 0)
    # Recall exactly 0.3 (3 of 10 GT boxes found at precision 1): level 0.3 counts for the
    # exact i/10 levels, not for the devkit's 0.30000000000000004.
    gt = [[20.0 * i, 0, 20.0 * i + 10, 10] for i in range(10)]
    three = sample("three", gt, gt[:3], [0.9, 0.8, 0.7])
    assert voc_average_precision([three], "oriented_bbox", 0.5)["ap_11_point"] == (
        pytest.approx(4 / 11))
    assert voc_average_precision([three], "oriented_bbox", 0.5, convention="devkit")[
        "ap_11_point"] == pytest.approx(3 / 11)


# ------------------------------------------------------------------ score ties


def _voc_ap_in_order(samples: list[Sample], order: list[tuple[int, int]], t: float) -> float:
    """VOC every-point AP of the detections ``(query, box)`` in the given order: the first
    GT of highest IoU, a TP when IoU >= t and not yet taken (written out)."""
    taken: set[tuple[int, int]] = set()
    tp = []
    for q, k in order:
        s = samples[q]
        ious = [refs.box_iou(g, s.pred_boxes[k]) for g in s.gt_boxes]
        g = int(np.argmax(ious))
        tp.append(ious[g] >= t and (q, g) not in taken)
        if tp[-1]:
            taken.add((q, g))
    ctp = np.cumsum(tp)
    rec = ctp / sum(len(s.gt_boxes) for s in samples)
    prec = ctp / np.arange(1, len(tp) + 1)
    mrec, mpre = np.concatenate(([0.], rec, [1.])), np.concatenate(([0.], prec, [0.]))
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = max(mpre[i - 1], mpre[i])
    i = np.where(mrec[1:] != mrec[:-1])[0]
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def test_score_tie_range_is_the_range_over_every_order() -> None:
    # Two groups of equal scores (0.9 x 3, 0.5 x 3) with duplicates on one GT box.
    samples = [sample("a", [[0, 0, 10, 10], [20, 0, 30, 10]],
                      [[0, 0, 10, 10], [1, 0, 11, 10], [40, 0, 50, 10]], [0.9, 0.9, 0.5]),
               sample("b", [[0, 0, 10, 10]], [[0, 0, 10, 10], [30, 30, 40, 40], [0, 1, 10, 11]],
                      [0.9, 0.5, 0.5])]
    dets = [(q, k, float(sc)) for q, s in enumerate(samples)
            for k, sc in enumerate(s.pred_box_scores)]
    groups = [[(q, k) for q, k, sc in dets if sc == v] for v in (0.9, 0.5)]
    values = [_voc_ap_in_order(samples, list(first) + list(second), 0.5)
              for first in itertools.permutations(groups[0])
              for second in itertools.permutations(groups[1])]
    assert max(values) > min(values)
    ties = average_precision_report(sample_list(samples), 0.5, ("bbox",))["bbox"]["score_ties"]
    assert ties["voc_ap_every_point_range"] == pytest.approx([min(values), max(values)])
    assert (ties["num_tied"], ties["largest_group"], ties["share_tied"]) == (6, 3, 1.0)
    assert f"[{min(values):.4f}, {max(values):.4f}]" in ties["warning"]


@pytest.mark.parametrize("seed", range(12))
def test_score_tie_range_on_random_queries(seed: int) -> None:
    rng = np.random.default_rng(seed)
    while True:  # draw until the case has detections and few enough orders to enumerate
        samples = []
        for i in range(3):
            gt = [[float(x), 0.0, float(x) + 10, 10.0] for x in rng.choice(60, 2, replace=False)]
            pred = [[g[0] + float(rng.integers(-4, 5)), 0.0, g[2] + float(rng.integers(-4, 5)),
                     10.0] for g in gt for _ in range(int(rng.integers(0, 3)))]
            scores = rng.choice([0.9, 0.5, 0.2], len(pred)).tolist()
            samples.append(sample(f"q{i}", gt, pred, scores))
        dets = [(q, k, sc) for q, s in enumerate(samples)
                for k, sc in enumerate(s.pred_box_scores)]
        groups = [[(q, k) for q, k, sc in dets if sc == v] for v in (0.9, 0.5, 0.2)]
        if dets and math.prod(math.factorial(len(g)) for g in groups) <= 5000:
            break
    values = [_voc_ap_in_order(samples, [d for part in parts for d in part], 0.5)
              for parts in itertools.product(*(itertools.permutations(g) for g in groups))]
    ties = average_precision_report(sample_list(samples), 0.5, ("bbox",))["bbox"]["score_ties"]
    assert ties["voc_ap_every_point_range"] == pytest.approx([min(values), max(values)],
                                                            abs=1e-12)


def test_score_tie_warning_threshold() -> None:
    distinct = [sample("a", [[0, 0, 10, 10]], [[0, 0, 10, 10], [5, 5, 9, 9]], [0.9, 0.8])]
    report = average_precision_report(sample_list(distinct), 0.5, ("bbox",))
    assert report["bbox"]["score_ties"]["warning"] is None
    # One tie among ten scored boxes: 2 of 10 tied, at the 10 % threshold.
    boxes = [[10.0 * i, 0, 10.0 * i + 8, 8] for i in range(10)]
    scores = [0.1 * i for i in range(9)] + [0.0]
    report = average_precision_report(sample_list([sample("b", boxes, boxes, scores)]), 0.5,
                                      ("bbox",))
    assert report["bbox"]["score_ties"]["share_tied"] == 0.2
    assert report["bbox"]["score_ties"]["warning"] is not None


def test_report_carries_map_devkit_and_ties() -> None:
    samples = sample_list(random_queries(7))
    entry = average_precision_report(samples, 0.5, ("bbox",))["bbox"]
    assert entry["coco"]["map@[0.5:0.95]"] == pytest.approx(
        coco_average_precision(samples, "bbox")["map@[0.5:0.95]"])
    assert entry["voc_devkit"]["ap_11_point"] == pytest.approx(
        devkit_voc_eval([s for s in samples if not s.negative], 0.5, True, False))
    assert entry["score_ties"]["num_detections"] == entry["num_detections"]


def test_hard_negative_boxes_count_in_the_category_their_phrase_names() -> None:
    """Issue 25, worked by hand. Category "ship": one positive query (phrase "ship"), one GT
    box found exactly at score 0.9. A negative query whose phrase is "ship" holds a box at
    0.95: with hard negatives it is ship's false positive, ranked first, so ship's precision
    at recall 1 is 1/2 and its AP 0.5 at every IoU (and DOTA's 11-point AP 0.5). A negative
    whose phrase names no category ("lake") or two ("tank": two categories use it) counts
    in none; a phrase equal to a category's name counts there ("plane", whose positive's
    phrase is "aircraft")."""
    box = [[10.0, 10.0, 30.0, 30.0]]
    ship = sample("ship", box, box, [0.9], category="ship")
    plane = sample("aircraft", box, box, [0.9], category="plane")
    tank_a = sample("tank", box, box, [0.9], category="storage-tank")
    tank_b = sample("tank", box, box, [0.9], category="oil-tank")
    tank_b.sample_id = "tank_b"
    negatives = [sample(p, [], box, [0.95], negative=True, category="other")
                 for p in ("ship", "lake", "tank", "plane")]
    samples = [ship, plane, tank_a, tank_b, *negatives]
    plain = coco_average_precision(samples, "bbox")
    hard = coco_average_precision(samples, "bbox", include_negatives=True)
    devkit = voc_devkit_report(samples, "bbox", 0.5, include_negatives=True)
    assert {c: v["ap@[0.5:0.95]"] for c, v in plain["per_category"].items()} == {
        "ship": 1.0, "plane": 1.0, "storage-tank": 1.0, "oil-tank": 1.0}
    assert {c: v["ap@[0.5:0.95]"] for c, v in hard["per_category"].items()} == (
        pytest.approx({"ship": 0.5, "plane": 0.5, "storage-tank": 1.0, "oil-tank": 1.0}))
    assert hard["map@[0.5:0.95]"] == pytest.approx(0.75)
    assert {c: v["ap_11_point"] for c, v in devkit["per_category"].items()} == pytest.approx(
        {"ship": 0.5, "plane": 0.5, "storage-tank": 1.0,
         "oil-tank": 1.0})
