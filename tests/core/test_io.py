"""Accepted input forms of the loader (the spec's "Data Formats" section).

Expected values are worked out by hand from the small documents of
``docs_helpers`` (masks decoded by pycocotools, boxes written out).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from docs_helpers import (
    LD_H,
    LD_MASK_A1,
    LD_MASK_A2,
    LD_POLY_A1,
    LD_W,
    ld_compressed,
    ld_decode,
    ld_files,
    ld_gt,
    ld_pred,
    ld_runs,
)

from ovearth_core import evaluate_open_vocab, evaluate_reasoning, evaluate_referring
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import (
    load_open_vocab_samples,
    load_reasoning_samples,
    load_referring_samples,
    load_samples,
)
from ovearth_core.masks import parse_rle

ALL = "segmentation,bbox,oriented_bbox"
POLY_B = [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]


def _ov(*rows: dict[str, Any]) -> dict[str, Any]:
    return {"tasks": {"open_vocabulary": list(rows)}}


def _load(tmp_path: Path, pred: Any, task: str = "vocabulary", gt: Any = None,
          **options: Any) -> dict[str, Any]:
    """Load and index the samples by sample_id."""
    options.setdefault("modalities", ALL)
    gt_path, pred_path = ld_files(tmp_path, gt, pred)
    samples = load_samples(gt_path, pred_path, task, **options)
    return {s.sample_id: s for s in samples}


# --- axis-aligned boxes ------------------------------------------------------------------


def test_box_object_and_shorthand_forms(tmp_path: Path) -> None:
    """Spec "Axis-Aligned Bounding Boxes": object form with score and bare arrays."""
    row = {"query_id": "ov1", "bbox": [{"bbox": [1, 1, 4, 3], "score": 0.9}, [0, 0, 2, 2],
                                       {"bbox": [0.5, 0.5, 1.5, 2.5]}]}
    s = _load(tmp_path, _ov(row))["ov1"]
    np.testing.assert_array_equal(s.pred_boxes, [[1, 1, 4, 3], [0, 0, 2, 2],
                                                 [0.5, 0.5, 1.5, 2.5]])
    assert s.pred_box_scores[0] == 0.9
    assert math.isnan(s.pred_box_scores[1]) and math.isnan(s.pred_box_scores[2])


def test_box_sentinel_is_ignored(tmp_path: Path) -> None:
    """Spec: [0, 0, 0, 0] is accepted as a compatibility sentinel and ignored."""
    rows = [{"query_id": "ov1", "bbox": [[0, 0, 0, 0]]},
            {"query_id": "ov3", "bbox": [{"bbox": [0, 0, 0, 0], "score": 0.7}, [0, 0, 2, 1]]}]
    s = _load(tmp_path, _ov(*rows), modalities="bbox")
    assert s["ov1"].pred_boxes.shape == (0, 4)
    np.testing.assert_array_equal(s["ov3"].pred_boxes, [[0, 0, 2, 1]])


def test_box_sentinel_needs_no_score_under_threshold(tmp_path: Path) -> None:
    """Spec: the sentinel is ignored, so --score-threshold does not ask it for a score."""
    s = _load(tmp_path, _ov({"query_id": "ov1", "bbox": [[0, 0, 0, 0]]}), modalities="bbox",
              score_threshold=0.5)
    assert s["ov1"].pred_boxes.shape == (0, 4)


@pytest.mark.parametrize("bbox_format", ["xyxy", "xywh"])
def test_box_sentinel_in_both_formats(tmp_path: Path, bbox_format: str) -> None:
    s = _load(tmp_path, _ov({"query_id": "ov1", "bbox": [[0, 0, 0, 0]]}), modalities="bbox",
              bbox_format=bbox_format)
    assert s["ov1"].pred_boxes.shape == (0, 4)


def test_xywh_conversion(tmp_path: Path) -> None:
    """Spec: with --bbox-format xywh, boxes are [x, y, width, height]; converted to xyxy."""
    row = {"query_id": "ov1", "bbox": [[1, 1, 3, 2], {"bbox": [2.5, 0, 0.5, 4], "score": 1}]}
    s = _load(tmp_path, _ov(row), modalities="bbox", bbox_format="xywh")["ov1"]
    np.testing.assert_array_equal(s.pred_boxes, [[1, 1, 4, 3], [2.5, 0, 3, 4]])


def test_xywh_does_not_touch_ground_truth_or_oriented_boxes(tmp_path: Path) -> None:
    """Spec: --bbox-format affects predicted bbox only (GT is COCO xywh; OBBs unaffected)."""
    row = {"query_id": "ov1", "oriented_bbox": [LD_POLY_A1]}
    s = _load(tmp_path, _ov(row), bbox_format="xywh")["ov1"]
    np.testing.assert_array_equal(s.gt_boxes, [[1, 1, 4, 3]])
    np.testing.assert_array_equal(s.pred_obbs, [LD_POLY_A1])


def test_xyxy_large_absolute_coordinates_accepted(tmp_path: Path) -> None:
    """Spec: coordinates are absolute pixels; any finite x2 > x1, y2 > y1 is accepted."""
    row = {"query_id": "ov1", "bbox": [[-5, -5, 1e6, 2e6]]}
    s = _load(tmp_path, _ov(row), modalities="bbox")["ov1"]
    np.testing.assert_array_equal(s.pred_boxes, [[-5, -5, 1e6, 2e6]])


# --- oriented boxes ----------------------------------------------------------------------


def test_polygon_object_and_shorthand_forms(tmp_path: Path) -> None:
    """Spec "Oriented Bounding Boxes": object form and shorthand, either orientation."""
    clockwise = list(reversed(POLY_B))
    row = {"query_id": "ov1", "oriented_bbox": [{"polygon": LD_POLY_A1, "score": 0.8},
                                                clockwise, {"polygon": POLY_B}]}
    s = _load(tmp_path, _ov(row), modalities="oriented_bbox")["ov1"]
    np.testing.assert_array_equal(s.pred_obbs, [LD_POLY_A1, clockwise, POLY_B])
    assert s.pred_obb_scores[0] == 0.8
    assert math.isnan(s.pred_obb_scores[1]) and math.isnan(s.pred_obb_scores[2])


def test_rotated_rectangle_accepted(tmp_path: Path) -> None:
    """The spec's own example polygon is a valid oriented box."""
    poly = [[1036.4, 714.39], [919.0, 706.0], [921.29, 673.88], [1038.7, 682.26]]
    s = _load(tmp_path, _ov({"query_id": "ov1", "oriented_bbox": [poly]}),
              modalities="oriented_bbox")["ov1"]
    np.testing.assert_array_equal(s.pred_obbs, [poly])


# --- masks -------------------------------------------------------------------------------


@pytest.mark.parametrize("compressed", [False, True], ids=["list", "string"])
def test_mask_compressed_and_list_counts(tmp_path: Path, compressed: bool) -> None:
    """Spec "Segmentation": compressed strings and integer lists are both accepted."""
    counts: Any = ld_compressed(LD_MASK_A1) if compressed else ld_runs(LD_MASK_A1)
    row = {"query_id": "ov1", "segmentation": {"size": [LD_H, LD_W], "counts": counts}}
    s = _load(tmp_path, _ov(row), modalities="segmentation")["ov1"]
    np.testing.assert_array_equal(ld_decode(s.pred_mask), LD_MASK_A1)


def test_spec_list_rle_example_decodes_column_major(tmp_path: Path) -> None:
    """Spec example {"size": [2, 3], "counts": [2, 1, 3]}: the third pixel in column order.

    Column-major order over a 2 x 3 image visits (0,0), (1,0), (0,1), ...; runs 2
    background, 1 foreground, 3 background set pixel (0, 1) only.
    """
    gt = ld_gt()
    gt["annotations"][0].update(width=3, height=2, segmentation={"size": [2, 3],
                                                                 "counts": [0, 6]})
    row = {"query_id": "ov1", "segmentation": {"size": [2, 3], "counts": [2, 1, 3]}}
    s = _load(tmp_path, _ov(row), gt=gt, modalities="segmentation")["ov1"]
    np.testing.assert_array_equal(ld_decode(s.pred_mask), [[0, 1, 0], [0, 0, 0]])
    assert s.gt_mask is not None


EMPTY_MASKS = {
    "null": None,
    "sentinel": {"size": [0, 0], "counts": []},
    "all-zero-list": {"size": [LD_H, LD_W], "counts": [LD_H * LD_W]},
    "all-zero-string": {"size": [LD_H, LD_W],
                        "counts": ld_compressed(np.zeros((LD_H, LD_W), np.uint8))},
}


@pytest.mark.parametrize("value", list(EMPTY_MASKS.values()), ids=list(EMPTY_MASKS))
def test_empty_mask_forms(tmp_path: Path, value: Any) -> None:
    """Spec: null, a valid all-zero RLE and the [0, 0] sentinel are empty predictions."""
    s = _load(tmp_path, _ov({"query_id": "ov1", "segmentation": value}),
              modalities="segmentation")["ov1"]
    assert s.pred_mask is None


def test_missing_segmentation_field_is_empty(tmp_path: Path) -> None:
    s = _load(tmp_path, _ov({"query_id": "ov1"}), modalities="segmentation")["ov1"]
    assert s.pred_mask is None and s.has_prediction_row


def test_all_empty_predictions_are_not_present(tmp_path: Path) -> None:
    """Spec "Presence Metrics": an all-zero mask and empty lists give pred_present false."""
    row = {"query_id": "ov1", "segmentation": EMPTY_MASKS["all-zero-string"], "bbox": [],
           "oriented_bbox": []}
    rows = [row, {"query_id": "ov2", "segmentation": EMPTY_MASKS["sentinel"],
                  "bbox": [[0, 0, 0, 0]]}]
    gt_path, pred_path = ld_files(tmp_path, pred=_ov(*rows))
    result = evaluate_samples(load_samples(gt_path, pred_path, "vocabulary", modalities=ALL))
    present = {r["sample_id"]: r["pred_present"] for r in result["per_sample"]}
    assert present == {"ov1": False, "ov2": False, "ov3": False}
    presence = result["summary"]["presence"]
    assert (presence["tp"], presence["fp"], presence["tn"], presence["fn"]) == (0, 0, 1, 2)


def test_mask_at_pixel_cap_accepted() -> None:
    """Spec: at most 100,000,000 pixels; here raised to 2**29 - 1 (docs/cli.md), inclusive."""
    rle, size = parse_rle({"size": [20_000, 20_000], "counts": [400_000_000]})
    assert rle is None and size == (20_000, 20_000)


# --- duplicates, missing rows, missing lists ----------------------------------------------


def test_duplicate_rows_merged(tmp_path: Path) -> None:
    """Spec: masks merged by pixel union; bbox and oriented-bbox lists concatenated."""
    top = np.zeros((LD_H, LD_W), np.uint8)
    top[0, :] = 1
    rows = [
        {"query_id": "ov1", "segmentation": {"size": [LD_H, LD_W], "counts": ld_runs(top)},
         "bbox": [[0, 0, 1, 1]], "oriented_bbox": [POLY_B]},
        {"query_id": "ov3", "bbox": [[0, 0, 2, 1]]},
        {"query_id": "ov1", "segmentation": {"size": [LD_H, LD_W],
                                             "counts": ld_compressed(LD_MASK_A1)},
         "bbox": [[1, 1, 4, 3], [2, 2, 3, 3]], "oriented_bbox": [LD_POLY_A1]},
        {"query_id": "ov1", "segmentation": None, "bbox": [], "oriented_bbox": []},
    ]
    s = _load(tmp_path, _ov(*rows))
    np.testing.assert_array_equal(ld_decode(s["ov1"].pred_mask), top | LD_MASK_A1)
    np.testing.assert_array_equal(s["ov1"].pred_boxes, [[0, 0, 1, 1], [1, 1, 4, 3],
                                                        [2, 2, 3, 3]])
    np.testing.assert_array_equal(s["ov1"].pred_obbs, [POLY_B, LD_POLY_A1])
    np.testing.assert_array_equal(s["ov3"].pred_boxes, [[0, 0, 2, 1]])


def test_missing_rows_scored_empty(tmp_path: Path) -> None:
    """Spec: omitting a known ID scores it as empty for every enabled modality."""
    gt_path, pred_path = ld_files(tmp_path, pred=_ov({"query_id": "ov2"}))
    samples = load_samples(gt_path, pred_path, "vocabulary", modalities=ALL)
    assert [s.sample_id for s in samples] == ["ov1", "ov2", "ov3"]
    assert [s.has_prediction_row for s in samples] == [False, True, False]
    result = evaluate_samples(samples)
    ov1 = result["per_sample"][0]
    assert ov1["pred_present"] is False
    assert (ov1["bbox"]["tp"], ov1["bbox"]["fp"], ov1["bbox"]["fn"]) == (0, 0, 1)
    assert ov1["seg"]["pred_area"] == 0 and ov1["seg"]["iou"] == 0.0
    assert result["summary"]["bbox"]["num_positive_evaluated"] == 2
    assert result["summary"]["bbox"]["fn"] == 2


@pytest.mark.parametrize("doc", [{}, {"tasks": {}}, {"tasks": {"referring": []}},
                                 {"tasks": {"open_vocabulary": []}}, {"tasks": None}],
                         ids=["no-tasks", "empty-tasks", "other-task-only", "empty-list",
                              "tasks-null"])
def test_missing_tasks_or_lists_are_empty(tmp_path: Path, doc: dict[str, Any]) -> None:
    """Spec "Top-Level and Common Fields": missing tasks / task lists are treated as empty."""
    s = _load(tmp_path, doc)
    assert list(s) == ["ov1", "ov2", "ov3"]
    assert all(x.pred_mask is None and len(x.pred_boxes) == 0 and len(x.pred_obbs) == 0
               for x in s.values())


def test_samples_follow_ground_truth_order(tmp_path: Path) -> None:
    rows = [{"query_id": q, "bbox": []} for q in ("ov3", "ov1", "ov2")]
    gt_path, pred_path = ld_files(tmp_path, pred=_ov(*rows))
    samples = load_samples(gt_path, pred_path, "vocabulary", modalities="bbox")
    assert [s.sample_id for s in samples] == ["ov1", "ov2", "ov3"]


# --- scores ------------------------------------------------------------------------------


def test_score_threshold_keeps_scores_at_or_above(tmp_path: Path) -> None:
    """Spec "Confidence Filtering": boxes with score >= T are retained (T itself kept)."""
    row = {"query_id": "ov1",
           "bbox": [{"bbox": [0, 0, 1, 1], "score": 0.29}, {"bbox": [0, 0, 2, 2], "score": 0.3},
                    {"bbox": [0, 0, 3, 3], "score": 0.95}],
           "oriented_bbox": [{"polygon": POLY_B, "score": 0.3},
                             {"polygon": LD_POLY_A1, "score": 0.1}]}
    s = _load(tmp_path, _ov(row), score_threshold=0.3)["ov1"]
    np.testing.assert_array_equal(s.pred_boxes, [[0, 0, 2, 2], [0, 0, 3, 3]])
    np.testing.assert_array_equal(s.pred_box_scores, [0.3, 0.95])
    np.testing.assert_array_equal(s.pred_obbs, [POLY_B])


def test_score_threshold_does_not_apply_to_masks(tmp_path: Path) -> None:
    """Spec: score and --score-threshold do not apply to segmentation masks."""
    row = {"query_id": "ov1", "segmentation": {"size": [LD_H, LD_W],
                                               "counts": ld_runs(LD_MASK_A1)}}
    s = _load(tmp_path, _ov(row), score_threshold=0.99, modalities="segmentation")["ov1"]
    np.testing.assert_array_equal(ld_decode(s.pred_mask), LD_MASK_A1)


def test_all_boxes_filtered_out_means_not_present(tmp_path: Path) -> None:
    """Spec: filtering happens before matching and presence."""
    row = {"query_id": "ov2", "bbox": [{"bbox": [0, 0, 1, 1], "score": 0.1}]}
    gt_path, pred_path = ld_files(tmp_path, pred=_ov(row))
    result = evaluate_samples(load_samples(gt_path, pred_path, "vocabulary",
                                           modalities="bbox", score_threshold=0.5))
    assert result["per_sample"][1]["pred_present"] is False
    assert result["summary"]["presence"]["tn"] == 1


def test_scores_optional_without_threshold(tmp_path: Path) -> None:
    row = {"query_id": "ov1", "bbox": [[1, 1, 4, 3]], "oriented_bbox": [LD_POLY_A1]}
    s = _load(tmp_path, _ov(row))["ov1"]
    assert len(s.pred_boxes) == 1 and len(s.pred_obbs) == 1


# --- modalities --------------------------------------------------------------------------


def test_fields_outside_modalities_ignored_even_if_invalid(tmp_path: Path) -> None:
    """Spec: fields outside --modalities are ignored."""
    row = {"query_id": "ov1", "segmentation": "not a mask", "oriented_bbox": {"x": 1},
           "bbox": [[1, 1, 4, 3]]}
    s = _load(tmp_path, _ov(row), modalities="bbox")["ov1"]
    assert s.pred_mask is None and len(s.pred_obbs) == 0
    np.testing.assert_array_equal(s.pred_boxes, [[1, 1, 4, 3]])


def test_other_task_lists_ignored_even_if_invalid(tmp_path: Path) -> None:
    """Spec: each run reads only the list selected by --task; fields outside it are ignored."""
    doc = {"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[1, 1, 4, 3]]}],
                     "referring": "junk", "reasoning": [{"query_id": 5}]}}
    s = _load(tmp_path, doc, modalities="bbox")
    assert len(s["ov1"].pred_boxes) == 1


def test_metadata_fields_not_used_for_matching(tmp_path: Path) -> None:
    """Spec: phrase / query are readable metadata; query_id alone matches."""
    row = {"query_id": "ov1", "phrase": "something else", "query": 7, "extra": {"any": 1},
           "bbox": [[1, 1, 4, 3]]}
    s = _load(tmp_path, _ov(row), modalities="bbox")
    assert len(s["ov1"].pred_boxes) == 1 and s["ov1"].phrase == "tower"


@pytest.mark.parametrize(("rows", "expected"), [
    ([{"query_id": "ov1", "bbox": [[1, 1, 4, 3]]}], ("bbox",)),
    ([{"query_id": "ov3", "segmentation": {"size": [3, 5], "counts": ld_runs(LD_MASK_A2)}},
      {"query_id": "ov1", "oriented_bbox": [LD_POLY_A1]}], ("segmentation", "oriented_bbox")),
    ([{"query_id": "ov2", "bbox": [[0, 0, 1, 1]], "segmentation": None}], ("bbox",)),
], ids=["bbox", "seg+obb", "negative-query-counts"])
def test_modalities_auto(tmp_path: Path, rows: list[dict[str, Any]],
                         expected: tuple[str, ...]) -> None:
    """Spec: --modalities auto infers modalities from non-empty predictions."""
    gt_path, pred_path = ld_files(tmp_path, pred=_ov(*rows))
    samples = load_samples(gt_path, pred_path, "vocabulary", modalities="auto")
    assert samples.modalities == expected
    assert evaluate_samples(samples)["config"]["modalities"] == sorted(expected)


@pytest.mark.parametrize("modalities", [{"bbox", "segmentation"}, ["segmentation", "bbox"],
                                        "bbox, segmentation", ("bbox", "segmentation")])
def test_modalities_accepted_forms(tmp_path: Path, modalities: Any) -> None:
    """Python API: a set (as in the spec's example), a list or a comma-separated string."""
    gt_path, pred_path = ld_files(tmp_path)
    samples = load_samples(gt_path, pred_path, "vocabulary", modalities=modalities)
    assert set(samples.modalities) == {"segmentation", "bbox"}


# --- negative queries and ground truth -----------------------------------------------------


def test_negative_queries_carry_no_gt_geometry(tmp_path: Path) -> None:
    """Spec "Negative Queries": the linked annotation is not target geometry."""
    s = _load(tmp_path, ld_pred())
    assert s["ov2"].negative and not s["ov1"].negative
    assert s["ov2"].gt_mask is None
    assert s["ov2"].gt_boxes.shape == (0, 4) and s["ov2"].gt_obbs.shape == (0, 4, 2)
    np.testing.assert_array_equal(ld_decode(s["ov1"].gt_mask), LD_MASK_A1)
    np.testing.assert_array_equal(s["ov1"].gt_boxes, [[1, 1, 4, 3]])
    np.testing.assert_array_equal(s["ov1"].gt_obbs, [LD_POLY_A1])


def test_prediction_on_negative_query_is_a_false_positive(tmp_path: Path) -> None:
    """Spec: any non-empty prediction on a negative query sets pred_present = true."""
    doc = _ov({"query_id": "ov2", "oriented_bbox": [POLY_B]})
    gt_path, pred_path = ld_files(tmp_path, pred=doc)
    result = evaluate_samples(load_samples(gt_path, pred_path, "vocabulary", modalities=ALL))
    assert result["per_sample"][1]["pred_present"] is True
    assert result["summary"]["presence"]["fp"] == 1
    assert result["summary"]["negative_false_positive_rate"] == 1.0


def test_ground_truth_without_geometry_lists(tmp_path: Path) -> None:
    """GT annotations with no bbox / oriented_bbox / segmentation load with no usable GT."""
    gt = ld_gt()
    for key in ("bbox", "oriented_bbox", "segmentation"):
        del gt["annotations"][1][key]
    s = _load(tmp_path, ld_pred(), gt=gt)
    assert s["ov3"].gt_mask is None and s["ov3"].gt_boxes.shape == (0, 4)


def test_referring_and_reasoning_are_positive(tmp_path: Path) -> None:
    """Spec "Tasks": referring and reasoning queries are all positive; text from "query"."""
    ref = _load(tmp_path, ld_pred(), task="referring")["ref1"]
    rea = _load(tmp_path, ld_pred(), task="reasoning")["rea1"]
    assert not ref.negative and not rea.negative
    assert ref.phrase == "the tower" and rea.phrase == "a roof"


def test_spec_python_api_example(tmp_path: Path) -> None:
    """Spec "Python API": the documented calls work; perfect predictions score 1."""
    pred = ld_pred()
    pred["tasks"]["open_vocabulary"][2]["bbox"] = [{"bbox": [0, 0, 2, 1], "score": 0.5}]
    gt_path, pred_path = ld_files(tmp_path, pred=pred)
    samples = load_open_vocab_samples(gt_path, pred_path, score_threshold=0.3,
                                      bbox_format="xyxy", modalities={"segmentation", "bbox"})
    results = evaluate_open_vocab(samples, iou_threshold=0.5)
    assert results["summary"]["presence"]["f1"] == 1.0
    assert results["summary"]["negative_accuracy"] == 1.0
    assert results["summary"]["seg"]["positive_micro_miou"] == 1.0
    assert results["summary"]["bbox"]["positive_micro_f1"] == 1.0
    assert results["summary"]["bbox"]["positive_mean_micro_f1@[0.5:0.95]"] == 1.0
    referring = evaluate_referring(load_referring_samples(gt_path, pred_path,
                                                          modalities={"bbox"}))
    assert referring["summary"]["bbox"]["positive_micro_f1"] == 1.0
    assert "presence" not in referring["summary"]
    reasoning = evaluate_reasoning(load_reasoning_samples(gt_path, pred_path,
                                                          modalities={"segmentation"}))
    assert reasoning["summary"]["seg"]["positive_micro_miou"] == 1.0
    assert [r["sample_id"] for r in reasoning["per_sample"]] == ["rea1"]


# --- DOTA's difficult flags (issue 25) ---------------------------------------------------


def test_difficult_flags_are_read_parallel_to_the_boxes(tmp_path: Path) -> None:
    gt = ld_gt()
    gt["annotations"][0]["difficult"] = [1]
    samples = _load(tmp_path, None, gt=gt)
    assert samples["ov1"].gt_difficult.tolist() == [True]
    assert samples["ov3"].gt_difficult.size == 0  # no flags: none difficult
    assert samples["ov2"].gt_difficult.size == 0  # a negative query has no targets


@pytest.mark.parametrize(("value", "field", "expected", "found"), [
    ([1, 0], "annotations[0].difficult", "one flag per target box", "2 flags"),
    ([2], "annotations[0].difficult[0]", "0 or 1", "2"),
    ([0.5], "annotations[0].difficult[0]", "0 or 1", "0.5"),
    ("yes", "annotations[0].difficult", "a list of 0 / 1 flags", "yes"),
])
def test_bad_difficult_flags_are_named(tmp_path: Path, value: Any, field: str, expected: str,
                                       found: str) -> None:
    gt = ld_gt()
    gt["annotations"][0]["difficult"] = value
    with pytest.raises(OVEarthInputError) as err:
        _load(tmp_path, None, gt=gt)
    text = str(err.value)
    assert field in text and expected in text and found in text and "gt.json" in text



# --- COCO's per-target area (issue 46) ---------------------------------------------------


def test_area_is_read_parallel_to_the_boxes_and_changes_no_spec_output(tmp_path: Path) -> None:
    gt = ld_gt()
    pred = _ov({"query_id": "ov1", "bbox": [{"bbox": [1, 1, 3, 2], "score": 0.9}]},
               {"query_id": "ov3", "bbox": [[0, 0, 1, 1]]})
    for sub in ("plain", "sized"):
        (tmp_path / sub).mkdir()
    plain = ld_files(tmp_path / "plain", gt, pred)
    gt["annotations"][0]["area"] = [1.5]
    gt["annotations"][1]["area"] = [0]
    sized = ld_files(tmp_path / "sized", gt, pred)
    samples = {s.sample_id: s for s in load_samples(*sized, "vocabulary", modalities=ALL)}
    assert samples["ov1"].gt_area.tolist() == [1.5]
    assert samples["ov3"].gt_area.tolist() == [0.0]
    assert samples["ov2"].gt_area.size == 0  # a negative query has no targets
    outputs = [evaluate_samples(load_samples(*paths, "vocabulary", modalities=ALL), 0.5)
               for paths in (plain, sized)]
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize(("value", "field", "expected", "found"), [
    ([4, 5], "annotations[0] (id a1).area", "one area per target box (as many as bbox / "
     "oriented_bbox: 1)", "2 areas"),
    ([-1], "annotations[0] (id a1).area[0]", "a finite number >= 0", "int -1"),
    (["4"], "annotations[0] (id a1).area[0]", "a finite number >= 0", "str '4'"),
    ([True], "annotations[0] (id a1).area[0]", "a finite number >= 0", "true"),
    ([None], "annotations[0] (id a1).area[0]", "a finite number >= 0", "null"),
    (12, "annotations[0] (id a1).area", "a list of areas, one per target box", "int 12"),
])
def test_bad_areas_are_named(tmp_path: Path, value: Any, field: str, expected: str,
                             found: str) -> None:
    gt = ld_gt()
    gt["annotations"][0]["area"] = value
    with pytest.raises(OVEarthInputError) as err:
        _load(tmp_path, None, gt=gt)
    text = str(err.value)
    assert f"field {field}: expected {expected}" in text, text
    assert f"found {found}" in text and "gt.json" in text


def test_area_of_an_annotation_without_boxes_is_refused(tmp_path: Path) -> None:
    gt = ld_gt()
    gt["annotations"][2].update(bbox=[], oriented_bbox=[], area=[7])
    with pytest.raises(OVEarthInputError) as err:
        _load(tmp_path, None, gt=gt)
    assert "annotations[2] (id a3).area: expected one area per target box (as many as " \
           "bbox / oriented_bbox: 0), found 1 areas" in str(err.value)
