"""The field metrics the evaluator adds (ovearth_core.field_metrics), against references.

* RSVG (Zhan et al. 2022, ../shared/reference/rsvg-eval-notes.md): on single-target
  queries the grounding block equals the RSVG scoring recipe written out below, for
  axis-aligned boxes and (with the polygon IoU of tests/refs.py) oriented boxes.
* EarthVL (../shared/reference/earthvl-eval-notes.md): class-wise IoU with numpy on
  decoded pixels, as its ``compute_miou`` does.
* GRES gIoU / cIoU, counting, AI-TOD size bins and the top-1 conventions: small tables
  worked by hand.
The whole pipeline (JSON to summary) is also checked on random data in
tests/core/test_metrics.py against tests/refs.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import refs
from analysis_fixtures import SIZE, corners, sample, sample_list
from hypothesis import given
from hypothesis import strategies as st

from ovearth_core import geometry, masks
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.types import Sample

BOXES = ("bbox", "oriented_bbox")


def _run(samples: list[Sample], task: str = "referring", iou_threshold: float = 0.5,
         modalities: tuple[str, ...] = BOXES) -> dict[str, Any]:
    return evaluate_samples(sample_list(samples, task, modalities), iou_threshold)


# ------------------------------------------------------------------ RSVG grounding


def rsvg_score(predictions: list[Any], gold: list[Any], iou: Any, union_area: Any
               ) -> dict[str, float]:
    """The scoring recipe of rsvg-eval-notes.md: one predicted and one gold box per pair;
    Pr@t in percent (here divided by 100), meanIoU, and cumIoU = sum(IoU * U) / sum(U)."""
    ious = [iou(p, g) for p, g in zip(predictions, gold, strict=True)]
    metrics = {f"Pr@{t}": sum(1 for i in ious if i >= t) / len(ious) * 100 / 100
               for t in (0.5, 0.6, 0.7, 0.8, 0.9)}
    metrics["mean_iou"] = sum(ious) / len(ious)
    unions = [union_area(p, g) for p, g in zip(predictions, gold, strict=True)]
    metrics["cum_iou"] = sum(i * u for i, u in zip(ious, unions, strict=True)) / sum(unions)
    return metrics


def _box_union(a: Any, b: Any) -> float:
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - iw * ih


def _polygon_union(a: Any, b: Any) -> float:
    inter = refs.clip_polygon(a, b)
    overlap = abs(refs.signed_area(inter)) if len(inter) >= 3 else 0.0
    return abs(refs.signed_area(a)) + abs(refs.signed_area(b)) - overlap


@st.composite
def _box(draw: st.DrawFn) -> list[float]:
    x, y = draw(st.integers(0, 40)), draw(st.integers(0, 40))
    return [float(x), float(y), float(x + draw(st.integers(1, 24))),
            float(y + draw(st.integers(1, 24)))]


@st.composite
def single_target_queries(draw: st.DrawFn) -> list[tuple[list[float], list[list[float]],
                                                         list[float]]]:
    """Queries with one GT box and 1-3 predicted boxes with distinct scores."""
    out = []
    for _ in range(draw(st.integers(1, 12))):
        gt = draw(_box())
        n = draw(st.integers(1, 3))
        preds = [draw(_box()) for _ in range(n)]
        scores = draw(st.lists(st.integers(0, 100), min_size=n, max_size=n, unique=True))
        out.append((gt, preds, [s / 100 for s in scores]))
    return out


@given(single_target_queries(), st.floats(0, math.pi))
def test_grounding_equals_rsvg_on_single_target_queries(queries: list[Any], angle: float
                                                        ) -> None:
    samples = []
    for i, (gt, preds, scores) in enumerate(queries):
        s = sample(f"q{i}", [gt], preds, scores)
        s.gt_obbs = np.array([corners(gt, angle)])
        s.pred_obbs = np.array([corners(p, angle) for p in preds])
        samples.append(s)
    summary = _run(samples)["summary"]
    # RSVG's model outputs one box: the prediction of highest score.
    top = [preds[int(np.argmax(scores))] for _, preds, scores in queries]
    want_hbb = rsvg_score(top, [gt for gt, _, _ in queries], refs.box_iou, _box_union)
    want_obb = rsvg_score([corners(p, angle) for p in top],
                          [corners(gt, angle) for gt, _, _ in queries], refs.polygon_iou,
                          _polygon_union)
    for key, want in (("bbox", want_hbb), ("oriented_bbox", want_obb)):
        got = summary[key]["grounding"]
        assert got["num_evaluated"] == got["num_single_target"] == len(queries)
        for name, value in want.items():
            assert got[name] == pytest.approx(value, abs=1e-9), (key, name)


def test_grounding_conventions_by_hand() -> None:
    samples = [
        # Two GT boxes; the top-1 (score 0.9) overlaps the second: IoU 50/150 = 1/3.
        sample("multi", [[0, 0, 10, 10], [20, 0, 30, 10]], [[0, 0, 10, 10], [25, 0, 35, 10]],
               [0.5, 0.9]),
        # No prediction: IoU 0, I = 0, U = the larger GT box (200).
        sample("none", [[0, 0, 10, 10], [0, 20, 20, 30]], []),
        # Equal scores: the first box (a perfect one).
        sample("tie", [[0, 0, 10, 10]], [[0, 0, 10, 10], [40, 40, 50, 50]], [0.7, 0.7]),
        # No scores: the first box (disjoint: I = 0, U = 100 + 100).
        sample("unscored", [[0, 0, 10, 10]], [[40, 40, 50, 50], [0, 0, 10, 10]]),
        # An unscored box beats every score (it counts as +inf).
        sample("mixed", [[0, 0, 10, 10]], [[0, 0, 10, 10], [0, 0, 5, 10]], [0.99, np.nan]),
        # A negative and a positive without GT boxes are not evaluated.
        sample("neg", [], [[0, 0, 10, 10]], [0.9], negative=True),
        sample("no_gt", [], [[0, 0, 10, 10]], [0.9]),
    ]
    result = _run(samples, task="open_vocabulary")
    top1 = {r["sample_id"]: r["bbox"]["top1_iou"] for r in result["per_sample"]}
    assert top1 == {"multi": pytest.approx(1 / 3), "none": 0.0, "tie": 1.0, "unscored": 0.0,
                    "mixed": 0.5, "neg": None, "no_gt": None}
    g = result["summary"]["bbox"]["grounding"]
    assert (g["num_evaluated"], g["num_single_target"]) == (5, 3)
    assert g["Pr@0.5"] == pytest.approx(2 / 5) and g["Pr@0.9"] == pytest.approx(1 / 5)
    assert g["mean_iou"] == pytest.approx((1 / 3 + 0 + 1 + 0 + 0.5) / 5)
    # I and U: multi 50/150, none 0/200, tie 100/100, unscored 0/200, mixed 50/100.
    assert g["cum_iou"] == pytest.approx(200 / 750)
    assert result["summary"]["oriented_bbox"]["grounding"] == pytest.approx(g)


def test_oriented_top1_below_the_matching_floor_is_exact() -> None:
    # The evaluation's oriented IoU matrices skip pairs that cannot reach 0.5 (value 0);
    # a poor top-1 box must still get its exact IoU, against the GT box it overlaps most.
    gt = [[0, 0, 10, 10], [30, 0, 40, 10], [60, 0, 70, 10]]
    poly = corners([35, 0, 45, 10], 0.3)
    s = sample("poor", gt, [[33, 5, 43, 15]], [0.8])  # HBB: IoU 35 / 165
    s.pred_obbs = np.array([poly])
    skipped = geometry.iou_matrices([s.gt_obbs], [s.pred_obbs], True, min_iou=0.5)[0]
    assert not skipped.any()
    row = _run([s])["per_sample"][0]
    assert row["bbox"]["top1_iou"] == pytest.approx(35 / 165)
    want = max(refs.polygon_iou(corners(g), poly) for g in gt)
    assert 0.3 < want < 0.5
    assert row["oriented_bbox"]["top1_iou"] == pytest.approx(want, abs=1e-9)


# ------------------------------------------------------------- counting, size bins


def test_counting_by_hand() -> None:
    samples = [
        sample("a", [[0, 0, 4, 4]] * 3, [[0, 0, 4, 4]]),          # 1 for 3: error -2
        sample("b", [[0, 0, 4, 4]], [[0, 0, 4, 4]] * 4),           # 4 for 1: +3
        sample("c", [[0, 0, 4, 4]] * 2, [[0, 0, 4, 4]] * 2),       # exact
        sample("n1", [], [[0, 0, 4, 4]] * 2, negative=True),       # 2 for 0 (negatives only)
        sample("n2", [], [], negative=True),                       # 0 for 0
    ]
    c = _run(samples, task="open_vocabulary")["summary"]["bbox"]["counting"]
    assert c == pytest.approx({"num_evaluated": 3, "mae": 5 / 3, "rmse": math.sqrt(13 / 3),
                               "mean_gt": 2.0, "mean_pred": 7 / 3,
                               "rmse_with_negatives": math.sqrt(17 / 5)})
    assert "rmse_with_negatives" not in _run(samples[:3])["summary"]["bbox"]["counting"]


def test_size_bins_by_hand() -> None:
    # GT sides (sqrt of area): 7.9 and 8 at the very_tiny / tiny edge, 16 and 31.99
    # (small), 32 (medium), 96 (large).
    gt = [[0, 0, 7.9, 7.9], [10, 0, 18, 8], [20, 0, 36, 16], [0, 40, 31.99, 71.99],
          [100, 0, 132, 32], [200, 200, 296, 296]]
    pred = [[0, 0, 7.9, 7.9],        # matches the 7.9 box (very_tiny, both sides)
            [10, 0, 18, 8.5],        # matches the 8 x 8 box (pred side 8.2: tiny)
            [101, 1, 133, 31],       # matches the 32 box; pred area 960: small
            [400, 400, 420, 420]]    # unmatched, small
    samples = [sample("q", gt[:3], pred[:2], [0.9, 0.8]),
               sample("r", gt[3:], pred[2:], [0.7, 0.6])]
    by = _run(samples)["summary"]["bbox"]["by_size"]
    want = {"very_tiny": (1, 1, 1, 1), "tiny": (1, 1, 1, 1), "small": (2, 0, 2, 1),
            "medium": (1, 1, 0, 0), "large": (1, 0, 0, 0)}
    for name, (n_gt, tp, n_pred, matched) in want.items():
        b = by[name]
        assert (b["num_gt"], b["tp"], b["fn"], b["num_pred"], b["matched_pred"]) == (
            n_gt, tp, n_gt - tp, n_pred, matched), name
        recall = tp / n_gt
        precision = matched / n_pred if n_pred else None
        assert b["recall"] == pytest.approx(recall)
        assert b["precision"] == (None if precision is None else pytest.approx(precision))
        f1 = (None if precision is None else
              0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall))
        assert b["f1"] == (None if f1 is None else pytest.approx(f1)), name
    assert list(by) == ["very_tiny", "tiny", "small", "medium", "large"]


def test_field_metrics_of_nothing_are_null() -> None:
    result = _run([sample("n", [], [[0, 0, 4, 4]], negative=True)], task="open_vocabulary")
    box = result["summary"]["bbox"]
    assert box["grounding"] == {"num_evaluated": 0, "num_single_target": 0, "Pr@0.5": None,
                                "Pr@0.6": None, "Pr@0.7": None, "Pr@0.8": None,
                                "Pr@0.9": None, "mean_iou": None, "cum_iou": None}
    assert box["counting"] == {"num_evaluated": 0, "mae": None, "rmse": None, "mean_gt": None,
                               "mean_pred": None, "rmse_with_negatives": 1.0}
    assert all(b["recall"] is None and b["precision"] is None and b["f1"] is None
               for b in box["by_size"].values())
    assert _run([sample("p", [[0, 0, 4, 4]])], modalities=("bbox",))["summary"][
        "oriented_bbox"] is None


# ------------------------------------------------------------- masks: GRES, EarthVL


def _mask_sample(sid: str, category: str, gt: np.ndarray | None, pred: np.ndarray,
                 negative: bool = False) -> Sample:
    s = sample(sid, category=category, negative=negative)
    s.gt_mask = None if gt is None else masks.parse_rle(masks.encode(gt))[0]
    s.pred_mask = masks.parse_rle(masks.encode(pred))[0]
    return s


def _block(y: int, x: int, h: int, w: int) -> np.ndarray:
    out = np.zeros((SIZE, SIZE), dtype=np.uint8)
    out[y:y + h, x:x + w] = 1
    return out


def test_gres_by_hand() -> None:
    empty = np.zeros((SIZE, SIZE), dtype=np.uint8)
    samples = [
        _mask_sample("p1", "a", _block(0, 0, 10, 10), _block(0, 0, 10, 5)),   # I 50, U 100
        _mask_sample("p2", "a", _block(0, 0, 10, 10), empty),                 # I 0, U 100
        _mask_sample("n1", "b", None, empty, negative=True),                  # scores 1
        _mask_sample("n2", "b", None, _block(0, 0, 5, 4), negative=True),     # 0, U += 20
    ]
    seg = _run(samples, "open_vocabulary", modalities=("segmentation",))["summary"]["seg"]
    assert seg["gres_giou"] == pytest.approx((0.5 + 0 + 1 + 0) / 4)
    assert seg["gres_ciou"] == pytest.approx(50 / 220)
    # LAVT's oIoU / mIoU are the positive-only micro / macro IoU.
    assert seg["positive_micro_miou"] == pytest.approx(50 / 200)
    assert seg["positive_macro_miou"] == pytest.approx(0.25)
    only_empty_negatives = _run(samples[2:3], "open_vocabulary",
                                modalities=("segmentation",))["summary"]["seg"]
    assert (only_empty_negatives["gres_giou"], only_empty_negatives["gres_ciou"]) == (1.0, None)
    referring = _run(samples[:2], modalities=("segmentation",))["summary"]["seg"]
    assert "gres_giou" not in referring and "gres_ciou" not in referring


def earthvl_class_iou(preds: list[np.ndarray], gts: list[np.ndarray]) -> float:
    """EarthVL's compute_miou on binary maps of one class: intersection and union summed over
    every pixel of the class's images."""
    pred, gt = np.stack(preds).astype(bool), np.stack(gts).astype(bool)
    return float(np.sum(pred & gt) / np.sum(pred | gt))


@pytest.mark.parametrize("seed", range(5))
def test_category_cum_miou_equals_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    samples, by_cat = [], {}
    for i in range(int(rng.integers(4, 14))):
        cat = f"c{int(rng.integers(0, 4))}"
        gt = (rng.random((SIZE, SIZE)) < rng.uniform(0.01, 0.3)).astype(np.uint8)
        gt[0, 0] = 1  # usable GT
        pred = (rng.random((SIZE, SIZE)) < rng.uniform(0, 0.3)).astype(np.uint8)
        samples.append(_mask_sample(f"q{i}", cat, gt, pred))
        by_cat.setdefault(cat, ([], []))
        by_cat[cat][0].append(pred)
        by_cat[cat][1].append(gt)
    result = _run(samples, modalities=("segmentation",))
    want = np.mean([earthvl_class_iou(p, g) for p, g in by_cat.values()])
    assert result["summary"]["seg"]["category_cum_miou"] == pytest.approx(want, abs=1e-12)
    for entry in result["per_category"]:
        p, g = by_cat[entry["category"]]
        assert entry["seg"]["cum_iou"] == pytest.approx(earthvl_class_iou(p, g), abs=1e-12)


@st.composite
def _rotated(draw: st.DrawFn) -> list[list[float]]:
    box = draw(_box())
    return corners(box, draw(st.floats(0, math.pi)))


@given(st.lists(st.tuples(st.lists(_rotated(), min_size=1, max_size=5), _rotated()),
                min_size=1, max_size=6))
def test_best_matches_equal_brute_force(cases: list[Any]) -> None:
    gts = [np.array(g) for g, _ in cases]
    boxes = np.array([b for _, b in cases])
    best, iou = geometry.best_matches(gts, boxes, oriented=True)
    for (g, b), k, v in zip(cases, best.tolist(), iou.tolist(), strict=True):
        values = [refs.polygon_iou(x, b) for x in g]
        assert v == pytest.approx(max(values), abs=1e-9)
        # The first GT box of highest IoU (up to round-off between equal values).
        assert values[k] == pytest.approx(max(values), abs=1e-9)
        assert all(x < max(values) - 1e-9 for x in values[:k])
