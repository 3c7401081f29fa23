"""End-to-end evaluation on small hand-worked files: the spec's rules, one case at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import refs

from ovearth_core import (
    OVEarthInputError,
    cli,
    evaluate_open_vocab,
    evaluate_reasoning,
    evaluate_referring,
)
from ovearth_core.io import load_open_vocab_samples, load_reasoning_samples, load_referring_samples

ALL = ("segmentation", "bbox", "oriented_bbox")
LOADERS = {"vocabulary": (load_open_vocab_samples, evaluate_open_vocab),
           "referring": (load_referring_samples, evaluate_referring),
           "reasoning": (load_reasoning_samples, evaluate_reasoning)}

# Mask of annotation A (4 x 5): a 2 x 3 block, area 6.
MASK_A = np.zeros((4, 5), dtype=np.uint8)
MASK_A[1:3, 1:4] = 1
# Mask of annotation B (4 x 5): a single column of 4, area 4.
MASK_B = np.zeros((4, 5), dtype=np.uint8)
MASK_B[:, 0] = 1
SQUARE = [[0, 0], [4, 0], [4, 4], [0, 4]]


def ann(aid: str, mask: np.ndarray | None, boxes: list[list[float]] = (),
        obbs: list[list[list[float]]] = (), category: str = "bell tower",
        h: int = 4, w: int = 5) -> dict[str, Any]:
    return {"id": aid, "image_path": f"images/{aid}.tif", "width": w, "height": h,
            "category_name": category,
            "segmentation": None if mask is None else refs.mask_json(mask, as_list=False),
            "bbox": [list(b) for b in boxes], "oriented_bbox": [list(o) for o in obbs]}


def ov(qid: str, aid: str, negative: bool = False) -> dict[str, Any]:
    return {"query_id": qid, "ann_id": aid, "type": "negative" if negative else "positive",
            "phrase": qid}


def run(tmp_path: Path, anns: list[dict[str, Any]], queries: list[dict[str, Any]],
        rows: list[dict[str, Any]], modalities: tuple[str, ...] = ALL, task: str = "vocabulary",
        iou_threshold: float = 0.5, **options: Any) -> dict[str, Any]:
    key = {"vocabulary": "open_vocabulary"}.get(task, task)
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps({"annotations": anns, "tasks": {key: queries}}))
    pred_path.write_text(json.dumps({"tasks": {key: rows}}))
    load, evaluate = LOADERS[task]
    samples = load(gt_path, pred_path, modalities=set(modalities), **options)
    return evaluate(samples, iou_threshold=iou_threshold)


def exact_row(qid: str, mask: np.ndarray, boxes: list[list[float]],
              obbs: list[list[list[float]]]) -> dict[str, Any]:
    """A prediction equal to the GT (boxes given as GT xywh, written as xyxy)."""
    return {"query_id": qid, "segmentation": refs.mask_json(mask, as_list=True),
            "bbox": [{"bbox": [x, y, x + w, y + h], "score": 0.9} for x, y, w, h in boxes],
            "oriented_bbox": [{"polygon": o, "score": 0.9} for o in obbs]}


def by_id(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["sample_id"]: r for r in result["per_sample"]}


# ------------------------------------------------------------------ negative queries


def test_negative_queries_do_not_enter_quality_averages(tmp_path: Path) -> None:
    """Spec "Negative Queries": a negative's linked annotation is not target geometry, its
    empty-empty pair does not enter IoU/Dice averages, and a hallucination is measured by
    presence and negative_false_positive_rate only (never as a detection FP)."""
    a = ann("A", MASK_A, [[1, 1, 3, 2]], [SQUARE])
    queries = [ov("pos", "A"), ov("neg-empty", "A", True), ov("neg-halluc", "A", True)]
    rows = [exact_row("pos", MASK_A, [[1, 1, 3, 2]], [SQUARE]),
            {"query_id": "neg-empty", "segmentation": None, "bbox": [], "oriented_bbox": []},
            exact_row("neg-halluc", MASK_A, [[1, 1, 3, 2]], [SQUARE])]
    res = run(tmp_path, [a], queries, rows)
    s = res["summary"]
    assert (s["num_samples"], s["num_positive"], s["num_negative"]) == (3, 1, 2)
    assert s["negative_accuracy"] == 0.5
    assert s["negative_false_positive_rate"] == 0.5
    p = s["presence"]
    assert (p["tp"], p["fp"], p["tn"], p["fn"]) == (1, 1, 1, 0)
    assert s["seg"]["num_positive_evaluated"] == 1
    for key in ("positive_micro_miou", "positive_macro_miou", "positive_macro_dice",
                "positive_macro_precision", "positive_macro_recall"):
        assert s["seg"][key] == 1.0, key
    for det in ("bbox", "oriented_bbox"):
        assert (s[det]["tp"], s[det]["fp"], s[det]["fn"]) == (1, 0, 0), det
        assert s[det]["positive_micro_precision"] == 1.0
    rows_out = by_id(res)
    halluc = rows_out["neg-halluc"]
    assert halluc["negative"] is True and halluc["gt_present"] is False
    assert halluc["pred_present"] is True
    assert halluc["seg"]["gt_area"] == 0 and halluc["seg"]["pred_area"] == 6
    assert halluc["seg"]["iou"] is None and halluc["seg"]["evaluated"] is False
    assert halluc["bbox"]["num_gt"] == 0 and halluc["bbox"]["num_pred"] == 1
    assert halluc["bbox"]["f1"] is None
    assert rows_out["neg-empty"]["pred_present"] is False
    assert rows_out["neg-empty"]["seg"]["iou"] is None


# ------------------------------------------------------------ missing and empty rows


def test_missing_row_scored_empty(tmp_path: Path) -> None:
    """Spec "Prediction File": omitting a known ID keeps the sample, scored as empty for every
    enabled modality (project convention: IoU, precision, Dice, P/R/F1 0)."""
    anns = [ann("A", MASK_A, [[1, 1, 3, 2]], [SQUARE]),
            ann("B", MASK_B, [[0, 0, 1, 4], [2, 0, 2, 2]], [SQUARE], category="pond")]
    res = run(tmp_path, anns, [ov("q1", "A"), ov("q2", "B")],
              [exact_row("q1", MASK_A, [[1, 1, 3, 2]], [SQUARE])])
    seg = res["summary"]["seg"]
    assert seg["num_positive_evaluated"] == 2
    assert seg["positive_macro_miou"] == 0.5
    assert seg["positive_micro_miou"] == pytest.approx(6 / (6 + 4))
    assert seg["positive_macro_precision"] == 0.5
    assert seg["positive_macro_recall"] == 0.5
    assert seg["positive_macro_dice"] == 0.5
    assert seg["category_macro_miou"] == 0.5  # two categories, one IoU each
    bbox = res["summary"]["bbox"]
    assert (bbox["tp"], bbox["fp"], bbox["fn"]) == (1, 0, 2)
    assert bbox["positive_micro_precision"] == 1.0
    assert bbox["positive_micro_recall"] == pytest.approx(1 / 3)
    assert bbox["positive_micro_f1"] == pytest.approx(0.5)
    assert bbox["positive_macro_f1"] == pytest.approx(0.5)
    assert bbox["positive_mean_micro_f1@[0.5:0.95]"] == pytest.approx(0.5)
    assert bbox["positive_macro_matched_iou"] == 1.0
    p = res["summary"]["presence"]
    assert (p["tp"], p["fn"]) == (1, 1)
    q2 = by_id(res)["q2"]
    assert q2["pred_present"] is False
    assert (q2["seg"]["pred_area"], q2["seg"]["iou"], q2["seg"]["precision"]) == (0, 0.0, 0.0)
    assert (q2["bbox"]["num_pred"], q2["bbox"]["precision"], q2["bbox"]["f1"]) == (0, 0.0, 0.0)


EMPTY_ROWS = [
    pytest.param({}, id="fields-missing"),
    pytest.param({"segmentation": None, "bbox": [], "oriented_bbox": []}, id="null-and-empty"),
    pytest.param({"segmentation": {"size": [0, 0], "counts": []}}, id="sentinel-mask"),
    pytest.param({"segmentation": {"size": [4, 5], "counts": [20]},
                  "bbox": [[0, 0, 0, 0]]}, id="all-zero-mask-and-box-sentinel"),
    pytest.param({"segmentation": {"size": [4, 5], "counts": "d0"}}, id="all-zero-string"),
]


@pytest.mark.parametrize("fields", EMPTY_ROWS)
def test_every_empty_form_scores_like_a_missing_row(tmp_path: Path,
                                                    fields: dict[str, Any]) -> None:
    """Spec "Modalities, Empty Predictions, and Duplicate IDs": null, [], an all-zero mask, a
    missing field, the [0, 0] sentinel and [0, 0, 0, 0] all score as empty predictions."""
    anns = [ann("A", MASK_A, [[1, 1, 3, 2]], [SQUARE])]
    missing = run(tmp_path, anns, [ov("q", "A")], [])
    empty = run(tmp_path, anns, [ov("q", "A")], [{"query_id": "q", **fields}])
    assert empty["summary"] == missing["summary"]
    assert empty["per_sample"] == missing["per_sample"]
    assert empty["summary"]["presence"]["fn"] == 1
    assert empty["per_sample"][0]["seg"]["iou"] == 0.0


def test_segmentation_summary_hand_worked(tmp_path: Path) -> None:
    """Spec "Segmentation Metrics" plus the project's Pr@ and grouped means. IoUs: q1 6/6,
    q2 3/6 (exactly 0.5 counts for Pr@0.5), q3 1/4; q1 and q2 share annotation A."""
    half = MASK_A.copy()
    half[2] = 0  # 3 of A's 6 pixels
    one = np.zeros_like(MASK_B)
    one[0, 0] = 1  # 1 of B's 4 pixels
    anns = [ann("A", MASK_A), ann("B", MASK_B)]
    rows = [{"query_id": "q1", "segmentation": refs.mask_json(MASK_A, as_list=False)},
            {"query_id": "q2", "segmentation": refs.mask_json(half, as_list=True)},
            {"query_id": "q3", "segmentation": refs.mask_json(one, as_list=False)}]
    res = run(tmp_path, anns, [ov("q1", "A"), ov("q2", "A"), ov("q3", "B")], rows,
              ("segmentation",))
    seg = res["summary"]["seg"]
    expected = {
        "num_positive_evaluated": 3,
        "positive_micro_miou": (6 + 3 + 1) / (6 + 6 + 4),
        "positive_macro_miou": (1 + 0.5 + 0.25) / 3,
        "positive_macro_dice": (1 + 6 / 9 + 2 / 5) / 3,
        "positive_macro_precision": 1.0,
        "positive_macro_recall": (1 + 0.5 + 0.25) / 3,
        "Pr@0.5": 2 / 3, "Pr@0.6": 1 / 3, "Pr@0.7": 1 / 3, "Pr@0.8": 1 / 3, "Pr@0.9": 1 / 3,
        "annotation_macro_miou": ((1 + 0.5) / 2 + 0.25) / 2,
        "category_macro_miou": (1 + 0.5 + 0.25) / 3,
    }
    for key, value in expected.items():
        assert seg[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.parametrize("iou_threshold", [0.0, -0.1, 1.5, float("nan"), True, "0.5"],
                         ids=["zero", "negative", "above-one", "nan", "bool", "string"])
def test_iou_threshold_outside_unit_interval_rejected(tmp_path: Path,
                                                      iou_threshold: object) -> None:
    """Spec "Command-Line Interface": --iou-threshold is a matching threshold in (0, 1]."""
    with pytest.raises(OVEarthInputError):
        run(tmp_path, [ann("A", MASK_A)], [ov("q", "A")], [], ("segmentation",),
            iou_threshold=iou_threshold)


def test_config_echoes_options(tmp_path: Path) -> None:
    """Spec "Output JSON": config holds the IoU threshold and the sorted modalities."""
    res = run(tmp_path, [ann("A", MASK_A, [[1, 1, 3, 2]])], [ov("q", "A")], [],
              ("segmentation", "bbox"), iou_threshold=0.7)
    assert res["config"]["iou_threshold"] == 0.7
    assert res["config"]["modalities"] == ["bbox", "segmentation"]


# --------------------------------------------------------------------- duplicates


def test_duplicate_rows_merged_by_union_and_concatenation(tmp_path: Path) -> None:
    """Spec "Modalities, Empty Predictions, and Duplicate IDs": equal-sized masks are merged by
    pixel union (overlap counted once); box lists are concatenated."""
    top, bottom = MASK_A.copy(), MASK_A.copy()
    top[2:] = 0
    bottom[:2] = 0
    boxes = [[0, 0, 2, 2], [3, 2, 2, 2]]
    obbs = [[[0, 0], [2, 0], [2, 2], [0, 2]], [[3, 2], [5, 2], [5, 4], [3, 4]]]
    a = ann("A", MASK_A, boxes, obbs)
    rows = [exact_row("q", top, boxes[:1], obbs[:1]),
            exact_row("q", bottom, boxes[1:], obbs[1:]),
            exact_row("q", MASK_A, [], []),  # overlaps both halves: union, not a sum
            {"query_id": "q", "segmentation": {"size": [0, 0], "counts": []}}]
    res = run(tmp_path, [a], [ov("q", "A")], rows)
    entry = res["per_sample"][0]
    assert entry["seg"]["pred_area"] == 6
    assert entry["seg"]["iou"] == 1.0
    for det in ("bbox", "oriented_bbox"):
        assert (entry[det]["num_pred"], entry[det]["tp"], entry[det]["fp"]) == (2, 2, 0), det


def test_duplicate_rows_with_different_mask_sizes_rejected(tmp_path: Path) -> None:
    """Spec: "Different mask sizes cause an error" (here the second row's size also differs
    from the GT's)."""
    a = ann("A", MASK_A)
    rows = [{"query_id": "q", "segmentation": refs.mask_json(MASK_A, as_list=True)},
            {"query_id": "q", "segmentation": refs.mask_json(MASK_A.T, as_list=True)}]
    with pytest.raises(OVEarthInputError):
        run(tmp_path, [a], [ov("q", "A")], rows)


@pytest.mark.parametrize(
    "segmentation",
    [{"size": [5, 4], "counts": [20]}, {"size": [4, 6], "counts": refs.encode_runs_string([24])},
     {"size": [5, 4], "counts": refs.runs_of(MASK_A.T)}],
    ids=["all-zero-list-transposed", "all-zero-string-wider", "non-empty-transposed"],
)
def test_mask_size_must_match_gt_even_when_empty(tmp_path: Path,
                                                 segmentation: dict[str, Any]) -> None:
    """Spec "Segmentation": except for the [0, 0] sentinel, the prediction size must match
    the query's GT mask size, including for all-zero masks."""
    with pytest.raises(OVEarthInputError) as err:
        run(tmp_path, [ann("A", MASK_A)], [ov("q", "A")],
            [{"query_id": "q", "segmentation": segmentation}], ("segmentation",))
    assert [p.field for p in err.value.problems] == ["tasks.open_vocabulary[0].segmentation.size"]


def test_unknown_prediction_id_rejected(tmp_path: Path) -> None:
    """Spec "Top-Level and Common Fields": an ID not in the selected GT task is an error."""
    with pytest.raises(OVEarthInputError):
        run(tmp_path, [ann("A", MASK_A)], [ov("q", "A")], [{"query_id": "nope"}])


# ------------------------------------------------------------- confidence filtering

GT_BOX = [[0, 0, 10, 10]]  # xywh
EXACT_LOW = {"bbox": [0, 0, 10, 10], "score": 0.2}
FAR_HIGH = {"bbox": [20, 20, 30, 30], "score": 0.9}


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [(None, (1, 1, 0)), (0.3, (0, 1, 1)), (0.2, (1, 1, 0)), (0.95, (0, 0, 1))],
    ids=["no-threshold", "drops-exact-box", "score-equal-to-threshold-kept", "drops-all"],
)
def test_score_threshold_filters_before_matching(tmp_path: Path, threshold: float | None,
                                                 expected: tuple[int, int, int]) -> None:
    """Spec "Confidence Filtering": boxes with score >= T are kept, filtering happens before
    IoU matching, so it changes TP/FP/FN (and presence)."""
    a = ann("A", None, GT_BOX, h=40, w=40)
    rows = [{"query_id": "q", "bbox": [EXACT_LOW, FAR_HIGH]}]
    res = run(tmp_path, [a], [ov("q", "A")], rows, ("bbox",), score_threshold=threshold)
    s = res["summary"]["bbox"]
    assert (s["tp"], s["fp"], s["fn"]) == expected
    assert res["summary"]["presence"]["tp"] == int(expected[0] + expected[1] > 0)


def test_score_threshold_changes_which_box_matches(tmp_path: Path) -> None:
    """Filtering first: with the exact low-score box gone, the 0.6-IoU box is matched."""
    a = ann("A", None, GT_BOX, h=40, w=40)
    partial = {"bbox": [0, 0, 6, 10], "score": 0.9}  # IoU 60 / 100
    rows = [{"query_id": "q", "bbox": [EXACT_LOW, partial]}]
    unfiltered = run(tmp_path, [a], [ov("q", "A")], rows, ("bbox",))["summary"]["bbox"]
    filtered = run(tmp_path, [a], [ov("q", "A")], rows, ("bbox",),
                   score_threshold=0.5)["summary"]["bbox"]
    assert (unfiltered["tp"], unfiltered["fp"]) == (1, 1)
    assert unfiltered["positive_macro_matched_iou"] == 1.0
    assert (filtered["tp"], filtered["fp"]) == (1, 0)
    assert filtered["positive_macro_matched_iou"] == pytest.approx(0.6)


def test_score_threshold_applies_to_presence_of_negatives(tmp_path: Path) -> None:
    """Spec "Presence Metrics": pred_present is decided after confidence filtering."""
    a = ann("A", None, GT_BOX, h=40, w=40)
    rows = [{"query_id": "n", "bbox": [EXACT_LOW],
             "oriented_bbox": [{"polygon": SQUARE, "score": 0.1}]}]
    res = run(tmp_path, [a], [ov("n", "A", True)], rows, ("bbox", "oriented_bbox"),
              score_threshold=0.3)
    assert res["summary"]["presence"]["tn"] == 1
    assert res["summary"]["negative_false_positive_rate"] == 0.0


def test_score_threshold_requires_scores(tmp_path: Path) -> None:
    """Spec "Confidence Filtering": with --score-threshold every non-empty box needs a score."""
    a = ann("A", None, GT_BOX, h=40, w=40)
    with pytest.raises(OVEarthInputError):
        run(tmp_path, [a], [ov("q", "A")], [{"query_id": "q", "bbox": [[0, 0, 10, 10]]}],
            ("bbox",), score_threshold=0.3)


# ------------------------------------------------------------------------ modalities


def test_disabled_modality_is_null_and_ignored(tmp_path: Path) -> None:
    """Spec "Output JSON": a disabled modality's summary and per-sample values are null; spec
    "Top-Level and Common Fields": its fields are ignored (even invalid ones), also for
    presence."""
    a = ann("A", MASK_A, [[1, 1, 3, 2]], [SQUARE])
    rows = [{"query_id": "q", "bbox": [[1, 1, 4, 3]],
             "segmentation": {"size": [9, 9], "counts": "not an rle"}},
            {"query_id": "n", "segmentation": refs.mask_json(MASK_A, as_list=True),
             "oriented_bbox": [SQUARE]}]
    res = run(tmp_path, [a], [ov("q", "A"), ov("n", "A", True)], rows, ("bbox",))
    assert res["summary"]["seg"] is None
    assert res["summary"]["oriented_bbox"] is None
    assert res["summary"]["bbox"]["tp"] == 1
    assert res["config"]["modalities"] == ["bbox"]
    for row in res["per_sample"]:
        assert row["seg"] is None and row["oriented_bbox"] is None
    assert res["summary"]["presence"]["tn"] == 1  # the negative's mask and OBB are ignored


def test_gt_without_usable_geometry_is_not_evaluated(tmp_path: Path) -> None:
    """Spec: "A positive query without usable GT for an enabled modality is excluded from
    that modality's statistics"; it still counts as a positive for presence."""
    a = ann("A", np.zeros((4, 5), dtype=np.uint8))
    res = run(tmp_path, [a], [ov("q", "A")],
              [exact_row("q", MASK_B, [[0, 0, 1, 1]], [SQUARE])])
    for key in ("seg", "bbox", "oriented_bbox"):
        assert res["summary"][key]["num_positive_evaluated"] == 0, key
        assert res["per_sample"][0][key]["evaluated"] is False
    seg, bbox = res["summary"]["seg"], res["summary"]["bbox"]
    assert seg["positive_micro_miou"] is None and seg["positive_macro_miou"] is None
    assert bbox["positive_micro_precision"] is None and bbox["positive_micro_f1"] is None
    assert bbox["positive_mean_micro_f1@[0.5:0.95]"] is None
    assert res["summary"]["presence"]["tp"] == 1


# ------------------------------------------------------------- IoU threshold sweep


@pytest.mark.parametrize("modality", ["bbox", "oriented_bbox"])
def test_iou_exactly_055_counts_at_055(tmp_path: Path, modality: str) -> None:
    """Spec "Detection Metrics": thresholds 0.50, 0.55, ..., 0.95 and TP means IoU "at or
    above" the threshold: an IoU of exactly 0.55 counts at 0.55 and not at 0.60."""
    a = ann("A", None, [[0, 0, 100, 1]], [[[0, 0], [100, 0], [100, 1], [0, 1]]], h=2, w=100)
    rows = [{"query_id": "q", "bbox": [[0, 0, 55, 1]],
             "oriented_bbox": [[[0, 0], [55, 0], [55, 1], [0, 1]]]}]
    res = run(tmp_path, [a], [ov("q", "A")], rows, (modality,))
    s = res["summary"][modality]
    expected = {"0.50": 1.0, "0.55": 1.0, "0.60": 0.0, "0.65": 0.0, "0.70": 0.0, "0.75": 0.0,
                "0.80": 0.0, "0.85": 0.0, "0.90": 0.0, "0.95": 0.0}
    assert s["positive_micro_f1_by_iou"] == expected
    assert s["positive_mean_micro_f1@[0.5:0.95]"] == pytest.approx(0.2)
    assert s["positive_macro_matched_iou"] == pytest.approx(0.55)
    at = run(tmp_path, [a], [ov("q", "A")], rows, (modality,), iou_threshold=0.55)
    assert at["summary"][modality]["tp"] == 1
    above = run(tmp_path, [a], [ov("q", "A")], rows, (modality,), iou_threshold=0.56)
    assert above["summary"][modality]["tp"] == 0


def test_greedy_trap_end_to_end(tmp_path: Path) -> None:
    """Spec "Detection Metrics": maximum-cardinality matching. P1 fits G1 best (IoU 9/11) but
    also G2 (8/12); P2 fits only G1 (0.8). Greedy finds one pair; the evaluator two.
    Sweep: two pairs up to 0.65, one from 0.70 to 0.80 (0.8 exactly counts), none above."""
    a = ann("A", None, [[0, 0, 10, 1], [3, 0, 10, 1]], h=2, w=20)
    rows = [{"query_id": "q", "bbox": [[1, 0, 11, 1], [0, 0, 8, 1]]}]
    s = run(tmp_path, [a], [ov("q", "A")], rows, ("bbox",))["summary"]["bbox"]
    assert (s["tp"], s["fp"], s["fn"]) == (2, 0, 0)
    assert s["positive_macro_matched_iou"] == pytest.approx((8 / 12 + 0.8) / 2)
    assert s["positive_mean_micro_f1@[0.5:0.95]"] == pytest.approx((4 * 1.0 + 3 * 0.5) / 10)


def test_matched_iou_uses_the_best_maximum_matching(tmp_path: Path) -> None:
    """Project rule (ovearth_core/matching.py, after the spec's maximum cardinality): among
    maximum matchings take the largest total IoU of the valid pairs. IoUs >= 0.5 here:
    G0-P0 5/7, G1-P0 6/7, G2-P1 2/3, G2-P2 0.8; the best two pairs are G1-P0 and G2-P2."""
    a = ann("A", None, [[5, 0, 5, 1], [5, 0, 6, 1], [3, 0, 4, 1]], h=2, w=20)
    rows = [{"query_id": "q", "bbox": [[5, 0, 12, 1], [1, 0, 7, 1], [3, 0, 8, 1]]}]
    res = run(tmp_path, [a], [ov("q", "A")], rows, ("bbox",))
    s = res["summary"]["bbox"]
    assert (s["tp"], s["fp"], s["fn"]) == (2, 1, 1)
    assert s["positive_macro_matched_iou"] == pytest.approx((6 / 7 + 0.8) / 2, abs=1e-12)
    assert s["positive_micro_matched_iou"] == pytest.approx((6 / 7 + 0.8) / 2, abs=1e-12)
    assert sorted(m[:2] for m in res["per_sample"][0]["bbox"]["matches"]) == [[1, 0], [2, 2]]


def test_xywh_and_xyxy_predictions_agree(tmp_path: Path) -> None:
    """Spec "Axis-Aligned Bounding Boxes": --bbox-format xywh is the same box as xyxy."""
    a = ann("A", None, [[1, 1, 3, 2], [5, 5, 4, 4]], h=12, w=12)
    xyxy = [{"bbox": [1.5, 1, 4, 3], "score": 0.4}, {"bbox": [5, 5.5, 9, 9.5], "score": 0.7}]
    xywh = [{"bbox": [1.5, 1, 2.5, 2], "score": 0.4}, {"bbox": [5, 5.5, 4, 4], "score": 0.7}]
    r1 = run(tmp_path, [a], [ov("q", "A")], [{"query_id": "q", "bbox": xyxy}], ("bbox",))
    r2 = run(tmp_path, [a], [ov("q", "A")], [{"query_id": "q", "bbox": xywh}], ("bbox",),
             bbox_format="xywh")
    assert r1["summary"]["bbox"] == r2["summary"]["bbox"]
    assert r1["summary"]["bbox"]["tp"] == 2


# ------------------------------------------------------------------- output schema

SPEC_CONFIG_KEYS = {"iou_threshold", "modalities"}
SPEC_OV_SUMMARY_KEYS = {"num_samples", "num_positive", "num_negative", "negative_accuracy",
                        "negative_false_positive_rate", "presence", "seg", "bbox",
                        "oriented_bbox"}
SPEC_PRESENCE_KEYS = {"tp", "fp", "tn", "fn", "precision", "recall", "f1", "accuracy", "fpr",
                      "mcc", "key_metrics"}
SPEC_SEG_SUMMARY_KEYS = {"num_samples_evaluated", "num_positive_evaluated",
                         "positive_micro_miou", "positive_macro_miou", "positive_macro_dice",
                         "positive_macro_precision", "positive_macro_recall", "key_metrics"}
SPEC_SEG_KEY_METRICS = {"positive_macro_precision", "positive_macro_recall",
                        "positive_macro_miou", "positive_micro_miou"}
SPEC_DET_SUMMARY_KEYS = {"num_samples_evaluated", "num_positive_evaluated", "tp", "fp", "fn",
                         "positive_micro_precision", "positive_micro_recall",
                         "positive_micro_f1", "positive_macro_f1", "positive_macro_matched_iou",
                         "positive_mean_micro_f1@[0.5:0.95]", "key_metrics"}
SPEC_DET_KEY_METRICS = {"positive_micro_precision", "positive_micro_recall",
                        "positive_micro_f1", "positive_mean_micro_f1@[0.5:0.95]"}
SPEC_SAMPLE_KEYS = {"sample_id", "phrase", "negative", "gt_present", "pred_present",
                    "image_path", "seg", "bbox", "oriented_bbox"}
SPEC_SEG_SAMPLE_KEYS = {"gt_area", "pred_area", "intersection", "union", "iou", "dice",
                        "precision", "recall", "f1", "gt_present", "pred_present"}
SPEC_DET_SAMPLE_KEYS = {"num_gt", "num_pred", "tp", "fp", "fn", "precision", "recall", "f1",
                        "mean_matched_iou", "gt_present", "pred_present"}
REF_ONLY_ABSENT = {"num_negative", "negative_accuracy", "negative_false_positive_rate",
                   "presence"}


def _benchmark_result(tmp_path: Path, task: str, seed: int = 21) -> dict[str, Any]:
    gt, pred = refs.random_benchmark(seed)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "pred.json").write_text(json.dumps(pred))
    load, evaluate = LOADERS[task]
    return evaluate(load(tmp_path / "gt.json", tmp_path / "pred.json", modalities=set(ALL)))


def _assert_superset(got: dict[str, Any], spec_keys: set[str], where: str) -> None:
    missing = spec_keys - set(got)
    assert not missing, f"{where} lacks the spec keys {sorted(missing)}"


@pytest.mark.parametrize("task", ["vocabulary", "referring", "reasoning"])
def test_output_keys_match_spec_example(tmp_path: Path, task: str) -> None:
    """Spec "Output JSON": every key of the example is present (extra keys allowed);
    key_metrics hold exactly the spec's key metrics; referring and reasoning summaries lack
    num_negative, negative_accuracy, negative_false_positive_rate and presence, and every
    per-sample negative value is false."""
    res = _benchmark_result(tmp_path, task)
    assert res["task"] == {"vocabulary": "open_vocabulary"}.get(task, task)
    _assert_superset(res["config"], SPEC_CONFIG_KEYS, "config")
    assert res["config"]["modalities"] == sorted(ALL)
    summary = res["summary"]
    if task == "vocabulary":
        _assert_superset(summary, SPEC_OV_SUMMARY_KEYS, "summary")
        _assert_superset(summary["presence"], SPEC_PRESENCE_KEYS, "presence")
        assert set(summary["presence"]["key_metrics"]) == {"mcc"}
    else:
        _assert_superset(summary, SPEC_OV_SUMMARY_KEYS - REF_ONLY_ABSENT, "summary")
        assert not REF_ONLY_ABSENT & set(summary)
        assert all(row["negative"] is False for row in res["per_sample"])
    _assert_superset(summary["seg"], SPEC_SEG_SUMMARY_KEYS, "seg")
    assert set(summary["seg"]["key_metrics"]) == SPEC_SEG_KEY_METRICS
    for det in ("bbox", "oriented_bbox"):
        _assert_superset(summary[det], SPEC_DET_SUMMARY_KEYS, det)
        assert set(summary[det]["key_metrics"]) == SPEC_DET_KEY_METRICS
    assert res["per_sample"]
    for row in res["per_sample"]:
        _assert_superset(row, SPEC_SAMPLE_KEYS, row["sample_id"])
        _assert_superset(row["seg"], SPEC_SEG_SAMPLE_KEYS, f"{row['sample_id']}.seg")
        for det in ("bbox", "oriented_bbox"):
            _assert_superset(row[det], SPEC_DET_SAMPLE_KEYS, f"{row['sample_id']}.{det}")


def test_cli_output_is_byte_identical_across_runs(tmp_path: Path) -> None:
    """Same input, same bytes: two CLI runs and an in-process dump_json agree exactly."""
    gt, pred = refs.random_benchmark(33)
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(pred))
    outputs = []
    for name in ("a.json", "b.json"):
        code = cli.main(["--gt", str(gt_path), "--predictions", str(pred_path), "--task",
                         "vocabulary", "--modalities", "segmentation,bbox,oriented_bbox",
                         "--output", str(tmp_path / name)])
        assert code == 0
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]
    in_process = cli.dump_json(evaluate_open_vocab(load_open_vocab_samples(
        gt_path, pred_path, modalities=set(ALL))))
    assert in_process == outputs[0]
    assert json.loads(outputs[0])["summary"]["num_samples"] == len(gt["tasks"]["open_vocabulary"])
