"""A boxes-only load (``--modalities bbox``) parses only the geometry it scores (issue 38):
every bad input of the corpus that concerns what it scores is still refused with the same
problem; the ground truth's masks and oriented boxes, which it does not score, are neither
decoded nor checked (documented in docs/metrics.md); the samples it builds equal those of a
full parse, field by field."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest
from bad_inputs.cases import CASES, BadCase
from docs_helpers import ld_files, ld_gt

from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples, parse_ground_truth, read_json

SKIPPED = ("segmentation", "oriented_bbox")  # fields a boxes-only run does not score


def _scores_boxes(case: BadCase) -> bool:
    """A case about something a boxes-only run reads: not a mask or an oriented box, and
    one whose own run scores axis-aligned boxes (its problem does not hinge on another
    modality being enabled)."""
    return (case.file in ("gt", "pred") and "bbox" in case.modalities.split(",")
            and not any(f in case.field for f in SKIPPED) and case.api_pred is None)


BOX_CASES = [c for c in CASES if _scores_boxes(c)]


def test_the_boxes_only_corpus_is_large() -> None:
    assert len(BOX_CASES) >= 60
    assert {c.file for c in BOX_CASES} == {"gt", "pred"}


@pytest.mark.parametrize("case", BOX_CASES, ids=[c.id for c in BOX_CASES])
def test_a_boxes_only_run_refuses_every_bad_input_it_scores(case: BadCase,
                                                            tmp_path: Path) -> None:
    gt_path, pred_path = ld_files(tmp_path, case.gt, case.pred)
    with pytest.raises(OVEarthInputError) as info:
        samples = load_samples(gt_path, pred_path, case.task,
                               score_threshold=case.score_threshold,
                               bbox_format=case.bbox_format, modalities="bbox")
        evaluate_samples(samples, case.iou_threshold)
    first = info.value.problems[0]
    assert first.file == str(gt_path if case.file == "gt" else pred_path)
    assert (first.field, first.query_id) == (case.field, case.query_id)
    assert case.expected in first.expected


def test_a_bad_ground_truth_mask_is_refused_when_masks_are_scored_only(tmp_path: Path) -> None:
    gt = ld_gt()
    gt["annotations"][0]["segmentation"]["counts"] = "not RLE at all {"
    gt["annotations"][1]["oriented_bbox"] = [[[0, 0], [1, 0]]]  # two vertices
    gt_path, pred_path = ld_files(tmp_path, gt)
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, pred_path, "vocabulary", modalities="bbox,segmentation")
    assert [p.field for p in info.value.problems][0] == "annotations[0].segmentation.counts"
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, pred_path, "vocabulary", modalities="oriented_bbox")
    assert [p.field for p in info.value.problems][0].startswith("annotations[1].oriented_bbox")
    samples = load_samples(gt_path, pred_path, "vocabulary", modalities="bbox")
    assert all(s.gt_mask is None and not len(s.gt_obbs) for s in samples)


def test_a_ground_truth_parsed_for_boxes_is_not_used_for_masks(tmp_path: Path) -> None:
    gt_path, pred_path = ld_files(tmp_path)
    boxes_only = parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path), ("bbox",))
    with pytest.raises(ValueError, match="parsed for bbox only"):
        load_samples(gt_path, pred_path, "vocabulary", modalities="segmentation",
                     ground_truth=boxes_only)


@pytest.mark.parametrize("task", ["vocabulary", "referring", "reasoning"])
def test_boxes_only_samples_equal_a_full_parse(task: str) -> None:
    data = Path(__file__).resolve().parents[2] / "assets" / "demo"
    gt_path = data / "ground_truth.json"
    pred_path = sorted((data / "predictions").glob("*.json"))[0]
    full = parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path))
    fast = load_samples(gt_path, pred_path, task, modalities="bbox")
    slow = load_samples(gt_path, pred_path, task, modalities="bbox", ground_truth=full)
    assert len(fast) == len(slow) > 10
    assert sum(len(s.pred_boxes) for s in fast) > 10
    for a, b in zip(fast, slow, strict=True):
        # The full parse keeps masks and oriented boxes a boxes-only run never reads.
        b = replace(b, gt_mask=None, gt_obbs=a.gt_obbs, gt_ignore_obbs=a.gt_ignore_obbs)
        for f in fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if isinstance(x, np.ndarray):
                assert np.array_equal(x, y) and x.shape == y.shape, f.name
            else:
                assert x == y, f.name


def test_difficult_flags_of_oriented_boxes_only_pass_a_boxes_only_run(tmp_path: Path) -> None:
    gt = ld_gt()
    gt["annotations"][0]["bbox"] = []  # its one oriented box is flagged difficult
    gt["annotations"][0]["difficult"] = [1]
    gt_path, pred_path = ld_files(tmp_path, gt)
    for modalities in ("bbox", "oriented_bbox", "bbox,oriented_bbox"):
        assert load_samples(gt_path, pred_path, "vocabulary", modalities=modalities)
    gt["annotations"][0]["difficult"] = [1, 0]  # two flags, one box: refused either way
    gt_path, pred_path = ld_files(tmp_path, gt)
    for modalities in ("bbox", "oriented_bbox"):
        with pytest.raises(OVEarthInputError, match="difficult"):
            load_samples(gt_path, pred_path, "vocabulary", modalities=modalities)
