"""NMS-AP (OVDEval) against its definition: the suppression of OVDEval's ``eval.py`` written
out here from the paper and that script's behaviour (per image, every label's boxes; IoU in
xywh, strictly above 0.5, a zero union IoU 0; the highest score kept per GT box, the later in
file order of equal ones; removed unless kept for another GT box), then pycocotools' COCOeval
(useCats=1, COCO's 100 boxes per image and category) on what stays. Nothing of
``ovearth_core.analysis.nms_ap`` is called by the reference.
"""

from __future__ import annotations

import collections
import contextlib
import io
from typing import Any

import numpy as np
import pytest
import refs
from analysis_fixtures import corners
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from ovearth_core.analysis.ap import NMS_NEEDS_HARD_NEGATIVES, average_precision_report
from ovearth_core.analysis.nms_ap import suppress
from ovearth_core.types import IOU_THRESHOLDS, Sample


def _xywh(b: Any) -> list[float]:
    return [float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])]


def _sample(qid: str, image: str, ann: str, category: str, phrase: str, negative: bool,
            gt: list[list[float]], pred: list[list[float]], scores: list[float],
            angles: tuple[float, float] = (0.0, 0.0)) -> Sample:
    g = np.asarray(gt, dtype=np.float64).reshape(-1, 4)
    p = np.asarray(pred, dtype=np.float64).reshape(-1, 4)
    sc = np.asarray(scores, dtype=np.float64)
    return Sample(sample_id=qid, phrase=phrase, negative=negative, image_path=image,
                  ann_id=ann, category=category, width=512, height=512, gt_boxes=g,
                  gt_obbs=np.array([corners(list(b), angles[0]) for b in g]).reshape(-1, 4, 2),
                  pred_boxes=p, pred_box_scores=sc,
                  pred_obbs=np.array([corners(list(b), angles[1]) for b in p]).reshape(-1, 4, 2),
                  pred_obb_scores=sc.copy(), has_prediction_row=True)


CATEGORIES = ("ship", "plane", "tank", "bridge", "car")


def scenes(seed: int, n_images: int = 12) -> list[Sample]:
    """Images holding 1-3 categories (one positive query each, 1-6 boxes) and negative
    queries naming absent categories; answers: the positives' boxes jittered (some twice),
    the negatives answered with a positive's box (the inflated case) or a stray box,
    background boxes. Scores continuous (no ties). No synonyms, no crowds. The oriented
    boxes turn each image's boxes by one angle (predictions by up to 0.1 rad more)."""
    rng = np.random.default_rng(seed)
    out: list[Sample] = []
    for i in range(n_images):
        image = f"img{i}.png"
        turn = float(rng.uniform(0, 1.5))
        present = list(rng.choice(len(CATEGORIES), size=int(rng.integers(1, 4)), replace=False))
        objects: list[list[float]] = []
        for c in present:
            gt = []
            for _ in range(int(rng.integers(1, 7))):
                x, y = rng.uniform(0, 400, 2)
                w, h = rng.uniform(6, 90, 2)
                gt.append([x, y, x + w, y + h])
            pred = []
            for b in gt:
                for _ in range(int(rng.choice([0, 1, 1, 2]))):
                    d = rng.normal(0, (b[2] - b[0]) / 10, 4)
                    pred.append([b[0] + d[0], b[1] + d[1], max(b[2] + d[2], b[0] + d[0] + 1),
                                 max(b[3] + d[3], b[1] + d[1] + 1)])
            if rng.random() < 0.5:
                x, y = rng.uniform(0, 400, 2)
                pred.append([x, y, x + 30, y + 20])
            objects += gt
            name = CATEGORIES[c]
            out.append(_sample(f"i{i}_{name}", image, f"a{i}_{name}", name, name, False, gt,
                               pred, rng.random(len(pred)).tolist(),
                               (turn, turn + float(rng.uniform(0, 0.1)))))
        for c in [c for c in range(len(CATEGORIES)) if c not in present][:2]:
            pred = []
            for _ in range(int(rng.integers(0, 4))):
                if rng.random() < 0.7 and objects:
                    b = objects[int(rng.integers(len(objects)))]
                    d = rng.normal(0, 2, 4)
                    pred.append([b[0] + d[0], b[1] + d[1], b[2] + d[2] + 1, b[3] + d[3] + 1])
                else:
                    x, y = rng.uniform(0, 400, 2)
                    pred.append([x, y, x + 40, y + 40])
            name = CATEGORIES[c]
            ann = f"a{i}_{CATEGORIES[present[0]]}"
            out.append(_sample(f"i{i}_not_{name}", image, ann, CATEGORIES[present[0]], name,
                               True, [], pred, rng.random(len(pred)).tolist(),
                               (turn, turn + float(rng.uniform(0, 0.1)))))
    return out


# --- the reference: OVDEval's eval.py, written out ------------------------------------------

def ovdeval_iou(box: list[float], boxes: np.ndarray) -> np.ndarray:
    """eval.py's ``calculate_iou``: xywh, no +1, a zero union gives 0."""
    x1, y1, w1, h1 = box
    x2, y2, w2, h2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    inter = (np.maximum(0, np.minimum(x1 + w1, x2 + w2) - np.maximum(x1, x2))
             * np.maximum(0, np.minimum(y1 + h1, y2 + h2) - np.maximum(y1, y2)))
    union = w1 * h1 + w2 * h2 - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union == 0, 0, inter / union)


def ovdeval_nms(gts: list[dict], preds: list[dict], iou_fn: Any) -> list[dict]:
    """eval.py's ``nms_threaded`` rule: per GT box, the candidates of IoU > 0.5; keep the
    best score (a stable ascending sort reversed: the later of equal scores), remove the
    rest unless kept for another GT box."""
    if not preds:
        return []
    scores = np.array([p["score"] for p in preds])
    keep, remove = set(), []
    for g in gts:
        iou = iou_fn(g, preds)
        idx = np.flatnonzero(iou > 0.5).tolist()
        if idx:
            order = [idx[k] for k in np.argsort(scores[idx], kind="stable")[::-1].tolist()]
            keep.add(order[0])
            remove += order[1:]
    gone = {i for i in remove if i not in keep}
    return [p for i, p in enumerate(preds) if i not in gone]


def _hbb_iou(g: dict, preds: list[dict]) -> np.ndarray:
    return ovdeval_iou(g["bbox"], np.array([p["bbox"] for p in preds], dtype=np.float64))


def _poly_iou(g: dict, preds: list[dict]) -> np.ndarray:
    return np.array([refs.polygon_iou(g["poly"], p["poly"]) for p in preds])


class _PolygonEval(COCOeval):
    """COCOeval whose IoUs are the polygons' (tests/refs.py), everything else its own."""

    def computeIoU(self, imgId: int, catId: int) -> Any:  # noqa: N802 (COCOeval's name)
        gt, dt = self._gts[imgId, catId], self._dts[imgId, catId]
        if not gt or not dt:
            return []
        order = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in order[:self.params.maxDets[-1]]]
        return np.array([[refs.polygon_iou(d["poly"], g["poly"]) for g in gt] for d in dt])


def reference_nms_map(samples: list[Sample], oriented: bool) -> tuple[list[float], int]:
    """COCO's (image, category) dataset of the queries as OVDEval builds one (an image per
    image file, a category per phrase's category), eval.py's suppression, COCOeval's
    stats[0:3]; and the number of boxes removed."""
    images = {p: k + 1 for k, p in enumerate(dict.fromkeys(s.image_path for s in samples))}
    cats = {c: k + 1 for k, c in enumerate(sorted({s.category for s in samples
                                                   if not s.negative}))}
    anns: list[dict] = []
    dets: list[dict] = []
    for s in samples:
        img = images[s.image_path]
        if not s.negative:
            for g, b in zip(s.gt_obbs if oriented else s.gt_boxes, s.gt_boxes, strict=True):
                anns.append({"id": len(anns) + 1, "image_id": img, "category_id": cats[s.category],
                             "iscrowd": 0, "bbox": _xywh(b),
                             "area": abs(refs.signed_area(g)) if oriented
                             else (b[2] - b[0]) * (b[3] - b[1]),
                             "poly": [tuple(p) for p in g] if oriented else None})
        cat = cats.get(s.phrase)  # the category the phrase names (here: its name)
        if cat is None:
            continue
        for p, b, sc in zip(s.pred_obbs if oriented else s.pred_boxes, s.pred_boxes,
                            s.pred_obb_scores if oriented else s.pred_box_scores, strict=True):
            dets.append({"image_id": img, "category_id": cat, "score": float(sc),
                         "bbox": _xywh(b), "poly": [tuple(x) for x in p] if oriented else None})
    by_image: dict[int, list[dict]] = collections.defaultdict(list)
    gt_by_image: dict[int, list[dict]] = collections.defaultdict(list)
    for d in dets:
        by_image[d["image_id"]].append(d)
    for a in anns:
        gt_by_image[a["image_id"]].append(a)
    kept = []
    for img, preds in by_image.items():
        kept += ovdeval_nms(gt_by_image[img], preds, _poly_iou if oriented else _hbb_iou)
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": [{"id": k} for k in images.values()], "annotations": anns,
                      "categories": [{"id": k} for k in cats.values()]}
        gt.createIndex()
        dt = gt.loadRes([dict(d) for d in kept])
        if oriented:
            for d in dt.dataset["annotations"]:
                d["area"] = abs(refs.signed_area(d["poly"]))
        ev = (_PolygonEval if oriented else COCOeval)(gt, dt, "bbox")
        ev.params.iouThrs = np.array(IOU_THRESHOLDS)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return [float(v) for v in ev.stats[:3]], len(dets) - len(kept)


@pytest.mark.parametrize("oriented", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nms_map_equals_ovdeval_then_cocoeval(seed: int, oriented: bool) -> None:
    samples = scenes(seed, n_images=8 if oriented else 14)
    modality = "oriented_bbox" if oriented else "bbox"
    report = average_precision_report(samples, 0.5, (modality,), include_negatives=True,
                                      nms_ap=True)
    coco = report[modality]["coco"]
    want, removed = reference_nms_map(samples, oriented)
    assert removed > 0  # the data exercises the rule
    assert coco["nms_removed"] == removed
    for key, value in zip(("nms_map@[0.5:0.95]", "nms_map@0.5", "nms_map@0.75"), want,
                          strict=True):
        assert coco[key] == pytest.approx(value, abs=1e-9), key
    # The suppression removes the negatives' copies of the positives' boxes: AP rises.
    assert coco["nms_map@[0.5:0.95]"] != pytest.approx(coco["map@[0.5:0.95]"], abs=1e-6)


def _box(x: float, y: float, w: float, h: float) -> list[float]:
    return [x, y, x + w, y + h]


def test_the_inflated_case_a_negative_answered_with_the_positives_box() -> None:
    """ "ship" is on the image; "plane" is not, and the model answers it with the ship's box
    at a lower score. Plain AP hardly notices (plane has no GT); NMS-AP removes the copy,
    names the box that won and its phrase."""
    ship = _box(10, 10, 40, 20)
    pos = _sample("q_ship", "a.png", "a1", "ship", "ship", False, [ship], [ship], [0.9])
    neg = _sample("q_plane", "a.png", "a1", "ship", "plane", True, [], [ship], [0.8])
    plane = _sample("q_plane2", "b.png", "b1", "plane", "plane", False,
                    [_box(5, 5, 30, 30)], [_box(5, 5, 30, 30)], [0.7])
    result = suppress([pos, neg, plane], "bbox")
    assert [(r.query_id, r.box, r.winner_query_id, r.winner_box, r.winner_phrase)
            for r in result.removed] == [("q_plane", 0, "q_ship", 0, "ship")]
    assert result.removed[0].iou == pytest.approx(1.0)
    assert len(result.samples[1].pred_boxes) == 0 and len(result.samples[0].pred_boxes) == 1
    report = average_precision_report([pos, neg, plane], 0.5, ("bbox",), True, nms_ap=True)
    coco = report["bbox"]["coco"]
    # plane's AP: its own box (0.7) ranks below the stray copy (0.8) -> precision 1/2 at
    # recall 1 without NMS; after NMS the copy is gone.
    assert coco["map@[0.5:0.95]"] == pytest.approx((1.0 + 0.5) / 2)
    assert coco["nms_map@[0.5:0.95]"] == pytest.approx(1.0)
    assert coco["nms_removed"] == 1 and coco["nms_num_detections"] == 3


def test_iou_must_exceed_one_half_strictly() -> None:
    gt = _box(0, 0, 10, 10)
    half = _box(0, 0, 10, 5)  # IoU exactly 0.5: no candidate, stays
    more = _box(0, 0, 10, 6)  # IoU 0.6
    pos = _sample("p", "a.png", "a1", "ship", "ship", False, [gt], [gt], [0.9])
    neg = _sample("n", "a.png", "a1", "ship", "plane", True, [], [half, more], [0.8, 0.7])
    removed = suppress([pos, neg], "bbox").removed
    assert [(r.query_id, r.box) for r in removed] == [("n", 1)]


def test_equal_scores_the_later_box_in_file_order_wins() -> None:
    gt = _box(0, 0, 10, 10)
    pos = _sample("p", "a.png", "a1", "ship", "ship", False, [gt], [gt], [0.5])
    neg = _sample("n", "a.png", "a1", "ship", "plane", True, [], [gt], [0.5])
    removed = suppress([pos, neg], "bbox").removed
    assert [(r.query_id, r.winner_query_id) for r in removed] == [("p", "n")]
    # The same, queries in the other order: the positive is later and wins.
    removed = suppress([neg, pos], "bbox").removed
    assert [(r.query_id, r.winner_query_id) for r in removed] == [("n", "p")]


def test_a_box_kept_for_another_gt_box_stays_and_strays_stay() -> None:
    """GT boxes A and C, two pixels apart. X (0.7) overlaps both (IoU 0.82 each); Y (0.9)
    overlaps A only (0.67; 0.43 with C). For A, Y wins and X is removed; for C, X is the
    only candidate and is kept: X stays. A stray box far away is no candidate: it stays."""
    a, c = [0.0, 0.0, 10.0, 10.0], [0.0, 2.0, 10.0, 12.0]
    x, y = [0.0, 1.0, 10.0, 11.0], [0.0, -2.0, 10.0, 8.0]
    stray = _box(200, 200, 5, 5)
    pos = _sample("p", "a.png", "a1", "ship", "ship", False, [a, c], [x], [0.7])
    neg = _sample("n", "a.png", "a1", "ship", "plane", True, [], [y, stray], [0.9, 0.99])
    assert suppress([pos, neg], "bbox").removed == ()
    # Without C, X is removed (Y beats it on A, its only GT box).
    pos_a = _sample("p", "a.png", "a1", "ship", "ship", False, [a], [x], [0.7])
    removed = suppress([pos_a, neg], "bbox").removed
    assert [(r.query_id, r.box, r.winner_query_id, r.winner_box) for r in removed] == [
        ("p", 0, "n", 0)]


def test_synonyms_answer_one_label_and_do_not_suppress_each_other() -> None:
    """Worked example of docs/metrics.md: "storage tank" and "oil tank" are positive
    queries of one annotation; "ship" is a negative on the same image. All three answer the
    tank with a box: the synonyms' best boxes stay, the negative's goes; a second box of
    "oil tank" on the same tank goes too (a duplicate within its own query)."""
    tank = _box(100, 100, 30, 30)
    near = _box(101, 100, 30, 30)
    st = _sample("st", "a.png", "t1", "storage tank", "storage tank", False, [tank], [tank],
                 [0.9])
    ot = _sample("ot", "a.png", "t1", "storage tank", "oil tank", False, [tank],
                 [near, tank], [0.8, 0.6])
    ship = _sample("sh", "a.png", "t1", "storage tank", "ship", True, [], [tank], [0.85])
    removed = suppress([st, ot, ship], "bbox").removed
    assert sorted((r.query_id, r.box, r.winner_query_id) for r in removed) == [
        ("ot", 1, "st"), ("sh", 0, "st")]
    # Without the synonym rule (OVDEval's, every query its own label) "oil tank"'s best box
    # would go too: the rule is what keeps it.
    assert ("ot", 0) not in {(r.query_id, r.box) for r in removed}


def test_nms_ap_needs_hard_negatives() -> None:
    s = _sample("p", "a.png", "a1", "ship", "ship", False, [_box(0, 0, 5, 5)],
                [_box(0, 0, 5, 5)], [0.9])
    with pytest.raises(ValueError, match="--hard-negatives") as err:
        average_precision_report([s], 0.5, ("bbox",), include_negatives=False, nms_ap=True)
    assert str(err.value) == NMS_NEEDS_HARD_NEGATIVES
