"""AI-TOD's protocol (``--aitod``) against the toolkit's own numbers.

The reference is pycocotools' COCOeval set up as ``cocoapi-aitod`` sets it up
(``maxDets = [1, 100, 1500]``, the areas all / very tiny / tiny / small / medium) and its
``eval["precision"]`` / ``eval["recall"]`` read as the toolkit's ``summarize`` reads them;
the optimal LRP is written out here from the toolkit's definition (faster-coco-eval-aitod's
``ComputePrecisionRecallCurve``: IoU 0.5, the score-sorted detections of each category, the
smallest LRP over the prefixes, its -1 rules) over COCOeval's own matches (``evalImgs``) and
IoUs (``ious``). Nothing of ``ovearth_core.analysis.aitod`` is called by the reference.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from analysis_fixtures import corners
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from ovearth_core.analysis.aitod import AITOD_KEYS
from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.types import IOU_THRESHOLDS, Sample

AREAS = (("all", 0, 1e10), ("verytiny", 0, 64), ("tiny", 64, 256), ("small", 256, 1024),
         ("medium", 1024, 1e10))
MAX_DETS = [1, 100, 1500]


def _xywh(b: Any) -> list[float]:
    return [float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])]


def coco_dataset(samples: list[Sample], hard: bool) -> tuple[dict[str, Any], list[dict]]:
    """The queries as the COCO dataset and results COCOeval reads: each evaluated query a
    COCO image holding its category (a positive with GT boxes; a negative query's boxes, with
    ``hard``, in the category its phrase names: the positive queries' category of that
    phrase when they agree on one, else the category of that very name)."""
    cats = sorted({s.category for s in samples if not s.negative})
    # The category a negative query's phrase names: that of the positive queries with the
    # phrase when they agree on one, else the category of that very name.
    by_phrase: dict[str, set[str]] = {}
    for s in samples:
        if not s.negative:
            by_phrase.setdefault(s.phrase, set()).add(s.category)
    images, anns, dets = [], [], []
    for i, s in enumerate(samples, start=1):
        if s.negative and not hard:
            continue
        if not s.negative and len(s.gt_boxes) == 0:
            continue  # no usable GT in the modality: not evaluated (as in the COCO block)
        named = by_phrase.get(s.phrase, set())
        name = (s.category if not s.negative else next(iter(named)) if len(named) == 1 else
                None if named else s.phrase)
        if name not in cats:
            continue
        images.append({"id": i})
        cat = cats.index(name) + 1
        for b in s.gt_boxes:
            anns.append({"id": len(anns) + 1, "image_id": i, "category_id": cat, "iscrowd": 0,
                         "bbox": _xywh(b), "area": float((b[2] - b[0]) * (b[3] - b[1]))})
        for b, sc in zip(s.pred_boxes, s.pred_box_scores, strict=True):
            dets.append({"image_id": i, "category_id": cat, "score": float(sc),
                         "bbox": _xywh(b)})
    categories = [{"id": k + 1} for k in range(len(cats))]
    return {"images": images, "annotations": anns, "categories": categories}, dets


def toolkit(samples: list[Sample], hard: bool) -> dict[str, float | None]:
    """The toolkit's 18 numbers (its stats without the always -1 AP@0.25) of the queries
    (:func:`coco_dataset`)."""
    dataset, dets = coco_dataset(samples, hard)
    evals = []
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = dataset
        gt.createIndex()
        dt = gt.loadRes(dets)
        # One COCOeval per category over the images holding its GT or detections: COCOeval
        # evaluates each (category, area, image) on its own and accumulates a category over
        # the images where it has either (the others give no entry), so these are the
        # numbers of one COCOeval over all categories and images, without its (categories x
        # images) empty pairs (172 x 3,000 on the full synthetic benchmark: 20 s a model).
        images_of: dict[int, set[int]] = {}
        for a in [*dataset["annotations"], *dets]:
            images_of.setdefault(a["category_id"], set()).add(a["image_id"])
        for cat in sorted(gt.getCatIds()):
            ev = COCOeval(gt, dt, "bbox")
            ev.params.catIds = [cat]
            ev.params.imgIds = sorted(images_of.get(cat, ()))
            ev.params.iouThrs = np.array(IOU_THRESHOLDS)
            ev.params.maxDets = MAX_DETS
            ev.params.areaRng = [[lo, hi] for _, lo, hi in AREAS]
            ev.params.areaRngLbl = [name for name, _, _ in AREAS]
            ev.evaluate()
            ev.accumulate()
            evals.append(ev)

    def mean(values: np.ndarray) -> float | None:
        values = values[~np.isnan(values)]
        values = values[values > -1]
        return float(values.mean()) if values.size else None

    # (T, R, K, A, M), (T, K, A, M): the categories side by side, as one COCOeval has them
    prec = np.concatenate([ev.eval["precision"] for ev in evals], axis=2)
    rec = np.concatenate([ev.eval["recall"] for ev in evals], axis=1)
    t50, t75 = IOU_THRESHOLDS.index(0.5), IOU_THRESHOLDS.index(0.75)
    out = {"map@[0.5:0.95]": mean(prec[:, :, :, 0, 2]), "map@0.5": mean(prec[t50, :, :, 0, 2]),
           "map@0.75": mean(prec[t75, :, :, 0, 2])}
    for a, (name, _, _) in enumerate(AREAS[1:], start=1):
        out[f"map_{name}"] = mean(prec[:, :, :, a, 2])
    for m, cap in enumerate(MAX_DETS):
        out[f"mar@{cap}"] = mean(rec[:, :, 0, m])
    for a, (name, _, _) in enumerate(AREAS[1:], start=1):
        out[f"mar_{name}"] = mean(rec[:, :, a, 2])
    lrp = {k: [] for k in ("olrp", "olrp_loc", "olrp_fp", "olrp_fn")}
    for ev in evals:
        for key, value in _category_lrp(ev, 0, ev.params.catIds[0]).items():
            lrp[key].append(value)
    out.update({key: mean(np.array(v, dtype=float)) for key, v in lrp.items()})
    return out


def _category_lrp(ev: COCOeval, k: int, cat: int) -> dict[str, float]:
    """The toolkit's oLRP of one category (area all, 1,500 boxes, IoU 0.5), -1 where it
    leaves -1."""
    p = ev.params
    n_img, n_area = len(p.imgIds), len(p.areaRng)
    scores, tp, fp, ious = [], [], [], []
    n_gt = 0
    for i, img in enumerate(p.imgIds):
        e = ev.evalImgs[k * n_area * n_img + i]  # area 0 ("all")
        if e is None:
            continue
        gts = ev._gts[img, cat]
        gt_index = {g["id"]: j for j, g in enumerate(gts)}
        iou = ev.ious[img, cat]
        d = len(e["dtScores"][:1500])
        for j in range(d):
            match, ignored = e["dtMatches"][0, j], e["dtIgnore"][0, j]
            scores.append(e["dtScores"][j])
            tp.append(match > 0 and not ignored)
            fp.append(match == 0 and not ignored)
            ious.append(iou[j, gt_index[int(match)]] if match > 0 else 0.0)
        n_gt += int(np.count_nonzero(~np.asarray(e["gtIgnore"], dtype=bool)))
    if n_gt == 0:
        return {"olrp": -1, "olrp_loc": -1, "olrp_fp": -1, "olrp_fn": -1}
    if not scores:
        return {"olrp": 1.0, "olrp_loc": -1, "olrp_fp": -1, "olrp_fn": 1.0}
    order = np.argsort(-np.array(scores), kind="stable")
    best = None
    ctp = cfp = 0
    iou_sum = 0.0
    for j in order.tolist():
        if tp[j]:
            ctp += 1
            iou_sum += ious[j]
        elif fp[j]:
            cfp += 1
        fn = n_gt - ctp
        lrp = ((ctp - iou_sum) / 0.5 + cfp + fn) / (ctp + cfp + fn)
        if best is None or lrp < best[0]:
            best = (lrp, ctp, cfp, iou_sum)
    lrp, ctp, cfp, iou_sum = best
    return {"olrp": lrp, "olrp_loc": (ctp - iou_sum) / ctp if ctp else 0.0,
            "olrp_fp": cfp / (ctp + cfp) if ctp + cfp else 0.0, "olrp_fn": (n_gt - ctp) / n_gt}


def _sample(qid: str, category: str, phrase: str, negative: bool, gt: list[list[float]],
            pred: list[list[float]], scores: list[float]) -> Sample:
    g = np.asarray(gt, dtype=np.float64).reshape(-1, 4)
    p = np.asarray(pred, dtype=np.float64).reshape(-1, 4)
    sc = np.asarray(scores, dtype=np.float64)
    return Sample(sample_id=qid, phrase=phrase, negative=negative, image_path=f"{qid}.png",
                  ann_id=qid, category=category, width=800, height=800, gt_boxes=g,
                  gt_obbs=np.array([corners(list(b)) for b in g]).reshape(-1, 4, 2),
                  pred_boxes=p, pred_box_scores=sc,
                  pred_obbs=np.array([corners(list(b)) for b in p]).reshape(-1, 4, 2),
                  pred_obb_scores=sc.copy(), has_prediction_row=True)


def dense_tiny(seed: int, n_queries: int = 6, per_query: int = 300) -> list[Sample]:
    """Queries with hundreds of boxes under 16 px (some up to 40 px, areas on the range
    edges 64 and 256 among them), 1,600+ detections on some (over the 1,500 cap), misses,
    duplicates, background boxes, a category without detections and negatives."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n_queries):
        cat = f"c{q % 3}" if q < n_queries - 1 else "lonely"
        gt = []
        for _ in range(per_query + int(rng.integers(0, 60))):
            x, y = rng.uniform(0, 760, 2)
            side = rng.choice([4.0, 8.0, 12.0, 16.0, rng.uniform(2, 40)])
            gt.append([x, y, x + side, y + float(rng.choice([side, side / 2]))])
        pred, scores = [], []
        if cat != "lonely":
            for b in gt:
                for _ in range(int(rng.choice([0, 1, 1, 1, 2, 3]))):
                    d = rng.normal(0, (b[2] - b[0]) / 6, 4)
                    pred.append([b[0] + d[0], b[1] + d[1], max(b[2] + d[2], b[0] + d[0] + 0.5),
                                 max(b[3] + d[3], b[1] + d[1] + 0.5)])
            for _ in range(int(rng.integers(0, 200)) + (1300 if q == 0 else 0)):
                x, y = rng.uniform(0, 790, 2)
                w, h = rng.uniform(1, 20, 2)
                pred.append([x, y, x + w, y + h])
            scores = rng.random(len(pred)).round(3).tolist()  # ties among them
        out.append(_sample(f"q{q}", cat, cat, False, gt, pred, scores))
    for q in range(2):
        pred = [[10.0 * k, 10.0, 10.0 * k + 8, 18.0] for k in range(40)]
        out.append(_sample(f"n{q}", "c0", "c1", True, [], pred, rng.random(40).tolist()))
    return out


def _check(samples: list[Sample], hard: bool) -> None:
    report = average_precision_report(samples, 0.5, ("bbox",), include_negatives=hard,
                                      aitod=True)
    ours = report["bbox"]["aitod"]
    want = toolkit(samples, hard)
    assert set(AITOD_KEYS) <= set(ours)
    for key in AITOD_KEYS:
        assert (ours[key] is None) == (want[key] is None), key
        if want[key] is not None:
            assert ours[key] == pytest.approx(want[key], abs=1e-9), key


def test_dense_tiny_objects_equal_the_toolkit() -> None:
    samples = dense_tiny(0, n_queries=4, per_query=250)
    assert max(len(s.pred_boxes) for s in samples) > 1500
    _check(samples, hard=True)


def test_dense_tiny_second_seed_equals_the_toolkit() -> None:
    _check(dense_tiny(1, n_queries=4, per_query=150), hard=False)


def test_the_lrp_rules_on_a_worked_case() -> None:
    """One category, two GT boxes of 10 x 10; detections at 0.9 (IoU 0.81 with the first),
    0.8 (a false positive), 0.7 (IoU 1 with the second). After the first: LRP =
    (0.19 / 0.5 + 0 + 1) / 2 = 0.69; after two: (0.38 + 1 + 1) / 3 = 0.7933; after three:
    ((0.19 + 0) / 0.5 + 1 + 0) / 3 = 0.46: oLRP 0.46, Loc 0.095, FP 1/3, FN 0. A category
    with GT and no detection: oLRP 1, FN 1, Loc and FP undefined (left out of their means)."""
    a, b = [0.0, 0.0, 10.0, 10.0], [50.0, 50.0, 60.0, 60.0]
    first = [0.0, 0.0, 10.0, 8.1]  # IoU 0.81
    samples = [_sample("q1", "ship", "ship", False, [a, b], [first, [200, 200, 210, 210], b],
                       [0.9, 0.8, 0.7]),
               _sample("q2", "tank", "tank", False, [a], [], [])]
    ours = average_precision_report(samples, 0.5, ("bbox",), aitod=True)["bbox"]["aitod"]
    assert ours["olrp"] == pytest.approx((0.46 + 1.0) / 2)
    assert ours["olrp_loc"] == pytest.approx(0.19 / 2)  # tank's undefined: ship's alone
    assert ours["olrp_fp"] == pytest.approx(1 / 3)
    assert ours["olrp_fn"] == pytest.approx((0.0 + 1.0) / 2)
    _check(samples, hard=False)


def test_areas_on_the_range_edges_count_in_both_ranges() -> None:
    """COCOeval's ranges are closed: an 8 x 8 box (area 64) is very tiny and tiny."""
    gt = [[0.0, 0.0, 8.0, 8.0]]
    samples = [_sample("q", "ship", "ship", False, gt, gt, [0.9])]
    ours = average_precision_report(samples, 0.5, ("bbox",), aitod=True)["bbox"]["aitod"]
    assert ours["map_verytiny"] == ours["map_tiny"] == 1.0
    assert ours["map_small"] is None and ours["map_medium"] is None
    _check(samples, hard=False)


@pytest.mark.slow
def test_the_synthetic_full_benchmark_equals_the_toolkit(tmp_path: Path) -> None:
    from ovearth_core.io import load_samples
    from ovearth_core.synth import generate

    generate("full", tmp_path, seed=0, images=False)
    checked = 0
    for pred in sorted((tmp_path / "predictions").glob("*.json")):
        samples = list(load_samples(tmp_path / "ground_truth.json", pred, "vocabulary",
                                    modalities=("bbox",)))
        if not any(len(s.pred_boxes) for s in samples):
            continue  # a mask-only persona: no box to rank
        _check(samples, hard=True)
        checked += 1
        if checked == 2:
            break  # two personas' boxes (the dense-tiny tests above add their own scenes)
    assert checked == 2
    assert json.loads((tmp_path / "ground_truth.json").read_text())["annotations"]
