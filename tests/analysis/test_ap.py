"""Average precision: Padilla's worked example (both pixel conventions), COCOeval on seeded
random data, interpolation corner cases."""

from __future__ import annotations

import ast
import contextlib
import io
import math
from pathlib import Path

import numpy as np
import pytest
from analysis_fixtures import random_query_boxes, sample, sample_list
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from ovearth_core.analysis.ap import (
    PRCurve,
    ap_11_point,
    ap_101_point,
    ap_every_point,
    average_precision_report,
    coco_average_precision,
    pr_curve,
    voc_average_precision,
)
from ovearth_core.analysis.ranking import legacy_box_iou_matrix, rank_detections
from ovearth_core.geometry import box_iou_matrix
from ovearth_core.types import IOU_THRESHOLDS, Sample

LOCAL = Path(__file__).resolve().parents[1] / "data" / "padilla_ap_sample"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference" / "padilla-ap-sample"
DATA_DIRS = [LOCAL] + ([SHARED] if SHARED.is_dir() else [])
FILES = ["LICENSE", "results.txt"] + [f"{kind}/0000{i}.txt" for kind in
                                      ("groundtruths", "detections") for i in range(1, 8)]


def padilla_samples(folder: Path) -> list[Sample]:
    """One query per image; files hold ``class left top width height`` (detections with a
    confidence after the class)."""
    out = []
    for gt_file in sorted((folder / "groundtruths").glob("*.txt")):
        gts = [[float(v) for v in line.split()[1:]] for line in gt_file.read_text().splitlines()
               if line.strip()]
        dets = [[float(v) for v in line.split()[1:]]
                for line in (folder / "detections" / gt_file.name).read_text().splitlines()
                if line.strip()]
        out.append(sample(gt_file.stem, [[x, y, x + w, y + h] for x, y, w, h in gts],
                          [[x, y, x + w, y + h] for _, x, y, w, h in dets],
                          [c for c, *_ in dets]))
    return out


def test_local_copy_is_complete_and_licensed() -> None:
    for name in FILES:
        assert (LOCAL / name).is_file(), name
    assert "MIT License" in (LOCAL / "LICENSE").read_text()
    if SHARED.is_dir():
        for name in FILES:
            assert (LOCAL / name).read_bytes() == (SHARED / name).read_bytes(), name


@pytest.mark.parametrize("folder", DATA_DIRS, ids=lambda p: p.parent.name)
def test_padilla_continuous_coordinates(folder: Path) -> None:
    r = voc_average_precision(padilla_samples(folder), "bbox", 0.3)
    assert (r["num_gt"], r["num_detections"], r["num_tp"]) == (15, 24, 6)
    assert round(100 * r["ap_every_point"], 2) == 22.54
    assert round(100 * r["ap_11_point"], 2) == 26.84


@pytest.mark.parametrize("folder", DATA_DIRS, ids=lambda p: p.parent.name)
def test_padilla_legacy_pixel_convention(folder: Path) -> None:
    samples = padilla_samples(folder)
    r = voc_average_precision(samples, "bbox", 0.3, legacy_pixel=True)
    assert r["num_tp"] == 7
    # Published as 24.56 % (truncated) in the text and 24.57 % (rounded) in results.txt.
    assert math.floor(1e4 * r["ap_every_point"]) / 100 == 24.56
    assert round(100 * r["ap_every_point"], 2) == 24.57
    assert round(100 * r["ap_11_point"], 2) == 26.84
    # The toolkit's own precision / recall lists, detection by detection.
    text = (folder / "results.txt").read_text()
    lists = [ast.literal_eval(line.split(":", 1)[1].strip()) for line in text.splitlines()
             if line.startswith(("Precision:", "Recall:"))]
    curve = pr_curve(rank_detections(samples, "bbox", legacy_pixel=True), 0.3)
    assert [f"{v:.2f}" for v in curve.precision] == lists[0]
    assert [f"{v:.2f}" for v in curve.recall] == lists[1]


def test_legacy_iou_adds_one_pixel() -> None:
    gt = np.array([[0.0, 0.0, 9.0, 9.0]])
    pred = np.array([[5.0, 0.0, 14.0, 9.0], [10.0, 0.0, 19.0, 9.0], [9.0, 9.0, 12.0, 12.0]])
    got = legacy_box_iou_matrix(gt, pred)[0]
    assert got.tolist() == pytest.approx([50 / 150, 0.0, 1 / 115])
    assert box_iou_matrix(gt, pred)[0].tolist() == pytest.approx([36 / 126, 0.0, 0.0])


def _random_samples(seed: int, n: int = 25) -> list[Sample]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        negative = i % 5 == 4
        gt, pred = random_query_boxes(rng, negative, 0.2)
        scores = rng.random(len(pred)).round(2)  # ties across queries
        out.append(sample(f"q{i}", gt.tolist(), pred.tolist(), scores.tolist(),
                          negative=negative))
    return out


def _cocoeval_ap(samples: list[Sample], include_negatives: bool) -> np.ndarray:
    """AP at each IoU threshold by pycocotools' COCOeval (each query an image, one class)."""
    images, anns, dets = [], [], []
    for i, s in enumerate(samples):
        if s.negative and not include_negatives:
            continue
        images.append({"id": i})
        for boxes, crowd in ((s.gt_boxes, 0), (s.gt_ignore_boxes, 1)):
            for b in boxes:
                w, h = b[2] - b[0], b[3] - b[1]
                anns.append({"id": len(anns) + 1, "image_id": i, "category_id": 1,
                             "bbox": [b[0], b[1], w, h], "area": w * h, "iscrowd": crowd})
        for b, sc in zip(s.pred_boxes, s.pred_box_scores, strict=True):
            dets.append({"image_id": i, "category_id": 1, "score": float(sc),
                         "bbox": [b[0], b[1], b[2] - b[0], b[3] - b[1]]})
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": anns, "categories": [{"id": 1}]}
        gt.createIndex()
        ev = COCOeval(gt, gt.loadRes(dets), "bbox")
        ev.params.iouThrs = np.array(IOU_THRESHOLDS)
        ev.evaluate()
        ev.accumulate()
    prec = ev.eval["precision"][:, :, 0, 0, -1]  # (T, R) at area "all", maxDets 100
    return np.array([row[row > -1].mean() for row in prec])


@pytest.mark.parametrize("include_negatives", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_coco_style_ap_equals_cocoeval(seed: int, include_negatives: bool) -> None:
    samples = _random_samples(seed)
    ours = coco_average_precision(samples, "bbox", include_negatives)
    ref = _cocoeval_ap(samples, include_negatives)
    assert list(ours["ap_by_iou"].values()) == pytest.approx(ref.tolist(), abs=1e-9)
    assert ours["ap@[0.5:0.95]"] == pytest.approx(float(ref.mean()), abs=1e-9)


def _with_ignore_regions(samples: list[Sample], seed: int) -> list[Sample]:
    """Add crowd regions to some positive queries, and detections inside (and half inside)
    them, including queries whose only ground truth is a crowd region."""
    rng = np.random.default_rng(seed + 100)
    for k, s in enumerate(samples):
        if s.negative or rng.random() < 0.4:
            continue
        x, y = rng.uniform(0, 60, 2)
        region = np.array([[x, y, x + rng.uniform(15, 30), y + rng.uniform(15, 30)]])
        s.gt_ignore_boxes = region
        if k % 4 == 0:
            s.gt_boxes = s.gt_boxes[:0]
        w, h = region[0, 2] - x, region[0, 3] - y
        inside = [[x + a * w, y + b * h, x + a * w + w / 3, y + b * h + h / 3]
                  for a, b in rng.uniform(0, 0.6, (3, 2))]
        half = [[x - w / 4, y, x + w / 4, y + h / 4]]  # coverage 0.5
        s.pred_boxes = np.concatenate([s.pred_boxes.reshape(-1, 4), inside, half])
        s.pred_box_scores = np.concatenate([s.pred_box_scores, rng.random(4).round(3)])
    return samples


@pytest.mark.parametrize("include_negatives", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_coco_style_ap_with_ignore_regions_equals_cocoeval_with_crowd(
        seed: int, include_negatives: bool) -> None:
    samples = _with_ignore_regions(_random_samples(seed), seed)
    assert any(len(s.gt_ignore_boxes) and not len(s.gt_boxes) for s in samples)
    ours = coco_average_precision(samples, "bbox", include_negatives)
    ref = _cocoeval_ap(samples, include_negatives)
    assert list(ours["ap_by_iou"].values()) == pytest.approx(ref.tolist(), abs=1e-9)


def test_ignore_regions_hand_worked() -> None:
    """One target A and a crowd region C. Ranked: 0.9 on A (TP), 0.8 inside C (ignored),
    0.7 half inside C (ignored at IoU 0.5, a false positive above), 0.6 on A again (A is
    taken: a false positive, not ignored as it lies outside C)."""
    s = sample("q", [[0, 0, 10, 10]], [[0, 0, 10, 10], [22, 2, 28, 8], [15, 0, 25, 10],
                                       [0, 0, 10, 10]], [0.9, 0.8, 0.7, 0.6])
    s.gt_ignore_boxes = np.array([[20.0, 0.0, 40.0, 20.0]])
    by_iou = coco_average_precision([s], "bbox")["ap_by_iou"]
    # One GT found first: precision 1 at every recall level, whatever follows.
    assert set(by_iou.values()) == {1.0}
    voc = voc_average_precision([s], "bbox", 0.5)  # VOC sees the region as background
    assert (voc["num_tp"], voc["num_detections"]) == (1, 4)
    # A crowd-only query has no target: alone, AP is undefined (COCOeval: -1); beside the
    # first one, its detections outside the region are false positives.
    crowd = sample("r", [], [[22, 2, 28, 8], [50, 50, 60, 60]], [0.95, 0.85])
    crowd.gt_ignore_boxes = s.gt_ignore_boxes
    assert coco_average_precision([crowd], "bbox")["ap@[0.5:0.95]"] is None  # no GT
    # Ranked 0.95 ignored, 0.9 TP, 0.85 FP, ...: precision 1 at recall 1 still.
    assert set(coco_average_precision([s, crowd], "bbox")["ap_by_iou"].values()) == {1.0}
    crowd.pred_box_scores = np.array([0.95, 0.99])  # the FP now ranks first: precision 1/2
    assert set(coco_average_precision([s, crowd], "bbox")["ap_by_iou"].values()) == {0.5}


def test_hard_negatives_only_add_false_positives() -> None:
    samples = _random_samples(11)
    plain = voc_average_precision(samples, "bbox", 0.5)
    hard = voc_average_precision(samples, "bbox", 0.5, include_negatives=True)
    n_neg = sum(len(s.pred_boxes) for s in samples if s.negative)
    assert n_neg > 0
    assert hard["num_detections"] == plain["num_detections"] + n_neg
    assert (hard["num_tp"], hard["num_gt"]) == (plain["num_tp"], plain["num_gt"])
    assert hard["ap_every_point"] < plain["ap_every_point"]


def _curve(tp: list[bool], num_gt: int) -> PRCurve:
    t = np.array(tp, dtype=bool)
    c = np.cumsum(t)
    n = np.arange(1, t.size + 1)
    return PRCurve(score=-n.astype(float), tp=t, precision=c / n, recall=c / num_gt,
                   num_gt=num_gt)


@pytest.mark.parametrize(("tp", "num_gt", "every", "eleven", "coco"), [
    ([True, True], 2, 1.0, 1.0, 1.0),
    ([False, True], 1, 0.5, 0.5, 0.5),
    ([True, False], 2, 0.5, 6 / 11, 51 / 101),
    ([], 3, 0.0, 0.0, 0.0),
    ([False, False], 2, 0.0, 0.0, 0.0),
    ([True, False, True], 4, 0.25 + 0.25 * 2 / 3, (3 + 3 * 2 / 3) / 11,
     (26 + 25 * 2 / 3) / 101),
])
def test_interpolation_table(tp: list[bool], num_gt: int, every: float, eleven: float,
                             coco: float) -> None:
    c = _curve(tp, num_gt)
    assert ap_every_point(c) == pytest.approx(every)
    assert ap_11_point(c) == pytest.approx(eleven)
    assert ap_101_point(c) == pytest.approx(coco)


def test_no_ground_truth_gives_undefined_ap() -> None:
    s = sample_list([sample("n", [], [[0, 0, 5, 5]], [0.9], negative=True)])
    r = voc_average_precision(s, "bbox", 0.5, include_negatives=True)
    assert math.isnan(r["ap_every_point"]) and r["num_detections"] == 1
    report = average_precision_report(s, 0.5)
    assert report["bbox"]["ap_every_point"] is None
    assert report["bbox"]["coco"]["ap@[0.5:0.95]"] is None


def test_voc_and_coco_matching_differ_on_a_taken_best_gt() -> None:
    # The second detection's best GT (a) is taken by the first; VOC calls it a false
    # positive, COCO gives it the other GT (b) it also overlaps enough.
    s = [sample("q", [[0, 0, 10, 10], [6, 0, 16, 10]], [[0, 0, 10, 10], [2, 0, 12, 10]],
                [0.9, 0.8])]
    ranked = rank_detections(s, "bbox")
    assert pr_curve(ranked, 0.4, "voc").tp.tolist() == [True, False]
    assert pr_curve(ranked, 0.4, "coco").tp.tolist() == [True, True]


def test_report_covers_both_box_modalities() -> None:
    samples = sample_list(_random_samples(2))
    report = average_precision_report(samples, 0.5)
    for m in ("bbox", "oriented_bbox"):
        assert 0 < report[m]["ap_every_point"] <= 1
        assert len(report[m]["pr_curve"]["precision"]) == 101
    # Oriented boxes here are the same rectangles: same AP up to polygon round-off.
    assert report["oriented_bbox"]["ap_every_point"] == pytest.approx(
        report["bbox"]["ap_every_point"], abs=1e-9)


def test_coco_keeps_the_best_hundred_boxes_of_a_query_like_cocoeval() -> None:
    rng = np.random.default_rng(42)
    gt = [[10.0 * i, 0.0, 10.0 * i + 8, 8.0] for i in range(10)]
    corners = rng.uniform(0, 100, (150, 2))
    pred = np.hstack([corners, corners + 8]).tolist() + gt
    scores = np.append(rng.uniform(0.5, 1.0, 150), np.full(10, 0.1)).tolist()
    samples = _random_samples(0) + [sample("crowded", gt, pred, scores)]
    ours = coco_average_precision(samples, "bbox")
    uncapped = coco_average_precision(samples, "bbox", max_detections=None)
    ref = _cocoeval_ap(samples, False)
    assert ours["ap@[0.5:0.95]"] == pytest.approx(float(ref.mean()), abs=1e-9)
    assert uncapped["ap@[0.5:0.95]"] > ours["ap@[0.5:0.95]"]
    report = average_precision_report(sample_list(samples), 0.5, ("bbox",))
    assert report["bbox"]["coco"]["ap@[0.5:0.95]"] == pytest.approx(ours["ap@[0.5:0.95]"])


def test_report_counts_unscored_detections() -> None:
    s = [sample("a", [[0, 0, 10, 10]], [[0, 0, 10, 10], [20, 20, 30, 30]], [np.nan, 0.4])]
    report = average_precision_report(sample_list(s), 0.5, ("bbox",))
    assert report["bbox"]["num_unscored"] == 1
    assert report["bbox"]["ap_every_point"] == 1.0  # the unscored true positive ranks first


def test_report_reads_each_iou_matrix_once_and_shares_it(monkeypatch) -> None:
    """Issue 17: the report's VOC, COCO (capped at 100 boxes a query), score-tie and devkit
    rankings share one reading of the IoU matrices per set of candidates (exact IoU; the
    devkit's legacy-pixel IoU for axis-aligned boxes), and what each ranking gets from it
    equals reading its own matrices: the best GT box of every detection and every pair
    with IoU > 0."""
    from ovearth_core.analysis import ranking

    rng = np.random.default_rng(7)
    gt = [[10.0 * i, 0.0, 10.0 * i + 8, 8.0] for i in range(10)]
    corners = rng.integers(0, 100, (150, 2)).astype(float)
    pred = np.hstack([corners, corners + 8]).tolist() + gt + gt  # duplicates: ties
    scores = np.append(rng.integers(0, 4, 150) / 4, np.full(20, 0.5)).tolist()
    samples = _random_samples(3) + [sample("crowded", gt, pred, scores)]
    reads = []
    real = ranking.DetectionOverlaps.of
    monkeypatch.setattr(ranking.DetectionOverlaps, "of",
                        lambda *args: reads.append(1) or real(*args))
    average_precision_report(sample_list(samples), 0.5, ("bbox",))
    assert len(reads) == 2  # exact IoU, legacy-pixel IoU
    cands = ranking.candidates(samples, "bbox")
    for ranked in (cands.ranked(), cands.ranked("devkit"), cands.ranked(max_detections=100),
                   cands.ranked(queries=[5, 0, len(cands.ious) - 1])):
        alone = ranking.Ranked(**{k: getattr(ranked, k) for k in (
            "ious", "query", "box", "score", "num_gt", "categories", "negative", "gt_area",
            "det_area", "cover")})
        for got, expected in zip(ranked.best_gt, alone.best_gt, strict=True):
            assert np.array_equal(got, expected)
        assert (sorted(zip(*(a.tolist() for a in ranked.overlapping), strict=True))
                == sorted(zip(*(a.tolist() for a in alone.overlapping), strict=True)))
        assert ranked.overlapping[0].size > 0
