"""The gallery's selection (analysis/gallery.py): tile counts, filters, sorts, pages.

Counts are checked against the evaluator's own ``matches`` (GT boxes missed = GT boxes
minus matched pairs) and against the hand count of the fixture's comments
(tests/app_fixtures.py), never against the gallery code itself.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from app_fixtures import write_dataset

from ovearth_core import io
from ovearth_core.analysis import diagnose, gallery
from ovearth_core.evaluate import evaluate_run


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory):
    return write_dataset(tmp_path_factory.mktemp("gallery") / "data")


def _run(ds, pred: Path, task: str = "vocabulary", iou: float = 0.5):
    samples = io.load_samples(str(ds.gt), str(pred), task, None, "xyxy", ("auto",))
    run = evaluate_run(samples, iou)
    return run, diagnose.query_rows(run)


@pytest.mark.parametrize("modality", ["bbox", "oriented_bbox"])
@pytest.mark.parametrize("which", ["model_a", "model_b"])
def test_box_tile_counts_match_the_evaluators_matches(dataset, modality: str,
                                                      which: str) -> None:
    run, rows = _run(dataset, getattr(dataset, which))
    n_gt = sum(r[modality]["num_gt"] for r in run.per_sample if r[modality])
    n_pred = sum(r[modality]["num_pred"] for r in run.per_sample if r[modality])
    n_matched = sum(len(r[modality]["matches"]) for r in run.per_sample if r[modality])
    gt = gallery.tiles(run, rows, "GT boxes", modality)
    pred = gallery.tiles(run, rows, "predicted boxes", modality)
    assert len(gt) == n_gt and len(pred) == n_pred
    assert sum(t.outcome == "missed" for t in gt) == n_gt - n_matched
    assert sum(t.outcome == "matched" for t in gt) == n_matched
    assert sum(t.outcome == "TP" for t in pred) == n_matched
    assert sum(t.outcome == "FP" for t in pred) == n_pred - n_matched


def test_hand_count_of_model_a(dataset) -> None:
    # app_fixtures.MODEL_A: ov_000001 and ov_000005 matched; ov_000003 (IoU 48/232) and
    # ov_000006 (no prediction) missed; FPs: ov_000002 (negative), ov_000003, the
    # duplicate of ov_000005.
    run, rows = _run(dataset, dataset.model_a)
    gt = gallery.tiles(run, rows, "GT boxes", "bbox")
    assert sorted((t.query_id, t.outcome) for t in gt) == [
        ("ov_000001", "matched"), ("ov_000003", "missed"), ("ov_000005", "matched"),
        ("ov_000006", "missed")]
    missed = {t.query_id: t.iou for t in gt if t.outcome == "missed"}
    assert missed["ov_000003"] == pytest.approx(48 / 232) and missed["ov_000006"] == 0.0
    pred = gallery.tiles(run, rows, "predicted boxes", "bbox")
    assert sorted((t.query_id, t.outcome) for t in pred) == [
        ("ov_000001", "TP"), ("ov_000002", "FP"), ("ov_000003", "FP"), ("ov_000005", "FP"),
        ("ov_000005", "TP")]
    assert all(t.score == pytest.approx(0.9) for t in pred)
    queries = gallery.tiles(run, rows, "queries")
    assert [t.query_id for t in queries] == [s.sample_id for s in run.samples]
    assert {t.query_id: t.box for t in queries}["ov_000004"] is None  # TN: nothing to show
    assert {t.query_id: t.polarity for t in pred}["ov_000002"] == "negative"


@pytest.mark.parametrize(("size", "bucket"), [
    (0.0, "very_tiny"), (7.99, "very_tiny"), (8.0, "tiny"), (15.9, "tiny"), (16.0, "small"),
    (31.9, "small"), (32.0, "medium"), (95.9, "medium"), (96.0, "large"), (5000.0, "large"),
    (None, None), (math.nan, None)])
def test_ai_tod_size_buckets(size: float | None, bucket: str | None) -> None:
    assert gallery.size_bucket(size) == bucket


def test_sizes_are_sqrt_of_area(dataset) -> None:
    run, rows = _run(dataset, dataset.model_b)  # every prediction is (0, 0, 6, 6)
    pred = gallery.tiles(run, rows, "predicted boxes", "oriented_bbox")
    assert {t.size for t in pred} == {6.0} and {t.size_bucket for t in pred} == {"very_tiny"}
    gt = {t.query_id: t.size for t in gallery.tiles(run, rows, "GT boxes", "bbox")}
    assert gt["ov_000003"] == pytest.approx(math.sqrt(14 * 10))


def test_filters(dataset) -> None:
    run, rows = _run(dataset, dataset.model_a)
    pred = gallery.tiles(run, rows, "predicted boxes", "bbox")
    assert len(gallery.filter_tiles(pred, outcomes=["FP"])) == 3
    assert [t.query_id for t in gallery.filter_tiles(pred, polarity="negative")] == [
        "ov_000002"]
    assert {t.query_id for t in gallery.filter_tiles(pred, failures=["duplicates"])} == {
        "ov_000005"}
    assert {t.category for t in gallery.filter_tiles(pred, categories=["bridge"])} == {
        "bridge"}
    # A narrowed IoU range drops the FPs (no IoU); the full range keeps them.
    assert {t.outcome for t in gallery.filter_tiles(pred, iou_range=(0.5, 1.0))} == {"TP"}
    assert len(gallery.filter_tiles(pred, iou_range=(0.0, 1.0))) == len(pred)
    assert gallery.filter_tiles(pred, sizes=["large"]) == []


def test_worst_first_and_size_orders(dataset) -> None:
    run, rows = _run(dataset, dataset.model_a)
    gt = gallery.sort_tiles(gallery.tiles(run, rows, "GT boxes", "bbox"))
    assert [t.outcome for t in gt] == ["missed", "missed", "matched", "matched"]
    assert gt[0].iou <= gt[1].iou
    pred = gallery.sort_tiles(gallery.tiles(run, rows, "predicted boxes", "bbox"))
    assert [t.outcome for t in pred][:3] == ["FP"] * 3
    sizes = [t.size for t in gallery.sort_tiles(gt, "smallest first")]
    assert sizes == sorted(sizes)
    assert [t.size for t in gallery.sort_tiles(gt, "largest first")] == sorted(sizes)[::-1]
    with pytest.raises(ValueError, match="order must be one of"):
        gallery.sort_tiles(gt, "by colour")


@pytest.mark.parametrize(("n", "number", "expected"), [
    (100, 1, 48), (100, 2, 48), (100, 3, 4), (100, 9, 4), (100, 0, 48), (0, 1, 0), (48, 1, 48)])
def test_pages_of_48(dataset, n: int, number: int, expected: int) -> None:
    run, rows = _run(dataset, dataset.model_a)
    one = gallery.tiles(run, rows, "queries")[0]
    items = [one] * n
    assert len(gallery.page(items, number)) == expected
    assert gallery.page_count(n) == max(1, math.ceil(n / 48))


def test_unknown_selector_is_a_value_error(dataset) -> None:
    run, rows = _run(dataset, dataset.model_a)
    with pytest.raises(ValueError, match="selector must be one of"):
        gallery.tiles(run, rows, "pixels")
    assert gallery.tiles(run, rows, "GT boxes", "segmentation") == []
