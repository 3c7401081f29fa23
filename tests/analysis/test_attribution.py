"""Error attribution: a submission whose only errors are of one kind gets the whole gap
attributed to that kind; every error gets exactly one kind; fixing all reaches the ceiling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from analysis_fixtures import make_ground_truth, make_predictions, sample, sample_list, write_pair

from ovearth_core.analysis import diagnose
from ovearth_core.analysis.attribution import (
    KINDS,
    METRICS,
    apply_fixes,
    classify_boxes,
    classify_sample,
    error_attribution,
)
from ovearth_core.analysis.sweep import iou_matrix
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.geometry import box_iou_matrix
from ovearth_core.io import load_samples
from ovearth_core.metrics import det_entry
from ovearth_core.types import Sample

ALL = ("segmentation", "bbox", "oriented_bbox")
G = [40.0, 4.0, 60.0, 20.0]


def _clean() -> list[Sample]:
    return [
        sample("p1", [[4, 4, 20, 20]], [[4, 4, 20, 20]], with_masks=True),
        sample("p2", [[30, 30, 50, 46], [5, 40, 15, 60]], [[30, 30, 50, 46], [5, 40, 15, 60]],
               with_masks=True),
        sample("n1", negative=True, with_masks=True),
        sample("n2", negative=True, with_masks=True),
    ]


# One extra query per case; every error in the submission is of the named kind.
CASES: dict[str, Sample | list[Sample]] = {
    "hallucination": sample("n3", [], [[10, 10, 20, 20]], negative=True, with_masks=True),
    "miss": sample("p3", [G], [], with_masks=True),
    "localisation": sample("p3", [G], [[48, 4, 68, 20]], with_masks=True,
                           pred_mask_boxes=[G]),
    "wrong_object": sample("p3", [G], [[0, 44, 20, 60]], with_masks=True, pred_mask_boxes=[G]),
    "count": [sample("p3", [G, [4, 24, 14, 34]], [G], with_masks=True,
                     pred_mask_boxes=[G, [4, 24, 14, 34]]),
              sample("p4", [G], [G, [20, 50, 30, 60]], with_masks=True, pred_mask_boxes=[G])],
    "duplicate": sample("p3", [G], [G, [41, 5, 61, 21]], with_masks=True, pred_mask_boxes=[G]),
    "seg_localisation": sample("p3", [G], [G], with_masks=True,
                               pred_mask_boxes=[[40, 4, 50, 20]]),
    "seg_wrong_object": sample("p3", [G], [G], with_masks=True,
                               pred_mask_boxes=[[0, 44, 20, 60]]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_single_kind_submission_gets_the_whole_gap(case: str) -> None:
    kind = case.removeprefix("seg_")
    extra = CASES[case]
    samples = sample_list(_clean() + (extra if isinstance(extra, list) else [extra]),
                          modalities=ALL)
    out = error_attribution(samples, 0.5)
    base = out["base"]
    assert out["oracle_all"] == dict.fromkeys(METRICS, 1.0)
    gaps = {m: 1.0 - base[m] for m in METRICS}
    assert max(gaps.values()) > 0.05
    rows = {r["kind"]: r for r in out["kinds"]}
    assert list(rows) == list(KINDS)
    for k, row in rows.items():
        for m in METRICS:
            expected = gaps[m] if k == kind else 0.0
            assert row["delta"][m] == pytest.approx(expected, abs=1e-12), (k, m)
        assert bool(row["counts"]) == (k == kind), (k, row["counts"])


def test_count_case_splits_into_over_and_under_count() -> None:
    fixes = classify_boxes(np.array([G]), np.array([G, [0, 44, 10, 54]]), "bbox", 0.5)
    assert [(f.kind, f.op) for f in fixes] == [("count", "remove")]
    fixes = classify_boxes(np.array([G, [4, 24, 14, 34]]), np.array([G]), "bbox", 0.5)
    assert [(f.kind, f.op, f.gt) for f in fixes] == [("count", "add", 1)]


def test_box_on_a_matched_gt_is_a_duplicate_not_a_localisation() -> None:
    gt = np.array([[0, 0, 10, 10], [9, 0, 19, 10]], dtype=float)
    pred = np.array([[0, 0, 10, 10], [1, 0, 11, 10]], dtype=float)
    fixes = classify_boxes(gt, pred, "bbox", 0.5)
    kinds = sorted((f.kind, f.op) for f in fixes)
    assert kinds == [("count", "add"), ("duplicate", "remove")]


def test_localisation_pairs_are_one_to_one() -> None:
    gt = np.array([G], dtype=float)
    pred = np.array([[48, 4, 68, 20], [47, 4, 67, 20]], dtype=float)
    fixes = classify_boxes(gt, pred, "bbox", 0.5)
    assert sorted((f.kind, f.pred) for f in fixes) == [("duplicate", 0), ("localisation", 1)]


def test_background_iou_moves_small_overlaps_to_wrong_object() -> None:
    gt = np.array([G])
    barely = np.array([[58, 18, 78, 38]], dtype=float)  # IoU 0.0056 with G
    assert classify_boxes(gt, barely, "bbox", 0.5, background_iou=0.0)[0].kind == "localisation"
    assert classify_boxes(gt, barely, "bbox", 0.5)[0].kind == "wrong_object"  # default 0.01
    some = np.array([[55, 14, 75, 34]], dtype=float)  # IoU 0.043 with G
    assert classify_boxes(gt, some, "bbox", 0.5)[0].kind == "localisation"
    assert classify_boxes(gt, some, "bbox", 0.5, background_iou=0.1)[0].kind == "wrong_object"


@pytest.mark.parametrize(("pred", "tag", "kind"), [
    ([58, 18, 78, 38], "wrong object", "wrong_object"),       # IoU 0.0056
    ([59.5, 19.5, 79.5, 39.5], "wrong object", "wrong_object"),  # IoU 0.0003
    ([55, 14, 75, 34], "poor localisation", "localisation"),  # IoU 0.043
    ([44, 6, 64, 22], "poor localisation", "localisation"),   # IoU 0.54 < 0.75
    ([100, 100, 120, 116], "wrong object", "wrong_object"),   # no overlap
])
def test_explorer_tag_and_attribution_agree_on_overlap(pred: list[float], tag: str,
                                                        kind: str) -> None:
    """The explorer's failure tag (diagnose) and the attribution's error kind use one
    overlap rule (IoU >= OVERLAP_EPS), so a query never reads "wrong object" in one and
    "localisation" in the other."""
    gt, boxes = np.array([G]), np.array([pred], dtype=float)
    iou = box_iou_matrix(gt, boxes)
    assert diagnose.det_tag(det_entry(iou, False, 0.75), iou, 0.75) == tag
    assert [f.kind for f in classify_boxes(gt, boxes, "bbox", 0.75)] == [kind]


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    gt = make_ground_truth(seed=5, n_annotations=30)
    return write_pair(tmp_path_factory.mktemp("attr"), gt, make_predictions(gt, seed=6,
                                                                               skill=0.5))


@pytest.mark.parametrize("task", ["vocabulary", "referring"])
def test_every_box_error_gets_one_kind(noisy: tuple[Path, Path], task: str) -> None:
    samples = load_samples(*noisy, task, modalities=",".join(ALL))
    seen: set[str] = set()
    for s in samples:
        if s.negative:
            continue
        for m, gt, pred in (("bbox", s.gt_boxes, s.pred_boxes),
                            ("oriented_bbox", s.gt_obbs, s.pred_obbs)):
            fixes = classify_boxes(gt, pred, m, 0.5)
            entry = det_entry(iou_matrix(gt, pred, m), False, 0.5)
            fp = sum(f.op in ("snap", "remove") for f in fixes)
            fn = sum(f.op in ("snap", "add") for f in fixes) + sum(
                len(gt) for f in fixes if f.op == "fill")
            assert (fp, fn) == (entry["fp"], entry["fn"]), s.sample_id
            removed = [f.pred for f in fixes if f.pred >= 0]
            assert len(removed) == len(set(removed))
            seen |= {f.kind for f in fixes}
    assert {"miss", "localisation", "duplicate", "count"} <= seen


@pytest.mark.parametrize("task", ["vocabulary", "referring"])
def test_fixing_every_error_reaches_the_ceiling(noisy: tuple[Path, Path], task: str) -> None:
    samples = load_samples(*noisy, task, modalities=",".join(ALL))
    out = error_attribution(samples, 0.5)
    expected = {m: 1.0 for m in METRICS}
    if task != "vocabulary":
        expected["presence_mcc"] = None
    assert out["oracle_all"] == expected
    for row in out["kinds"]:
        for m in METRICS:
            if row["delta"][m] is not None:
                assert row["delta"][m] >= -1e-12, (row["kind"], m)
    assert any(r["delta"]["bbox_micro_f1"] > 0 for r in out["kinds"])


def test_hallucination_fix_clears_every_modality() -> None:
    s = CASES["hallucination"]
    assert isinstance(s, Sample)
    fixed = apply_fixes(s, classify_sample(s, ALL, 0.5))
    assert fixed.pred_mask is None and len(fixed.pred_boxes) == 0 and len(fixed.pred_obbs) == 0
    assert len(s.pred_boxes) == 1  # the input is untouched


@pytest.mark.parametrize("task", ["vocabulary", "referring"])
def test_given_evaluation_changes_nothing(noisy: tuple[Path, Path], task: str) -> None:
    """Passing the run's own evaluation (as the app does) skips re-evaluating the base; the
    table is the same. One at another IoU threshold is not used."""
    samples = load_samples(*noisy, task, modalities=",".join(ALL))
    expected = error_attribution(samples, 0.5)
    assert error_attribution(samples, 0.5, evaluated=evaluate_samples(samples, 0.5)) == expected
    assert error_attribution(samples, 0.5, evaluated=evaluate_samples(samples, 0.3)) == expected
