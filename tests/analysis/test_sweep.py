"""Confidence sweep: end points equal the fixed-threshold evaluator, matching counts equal the
evaluator's matcher, unscored boxes and best-threshold rules."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import orjson
import pytest
from analysis_fixtures import (
    make_ground_truth,
    make_predictions,
    sample,
    sample_list,
    write_pair,
)

from ovearth_core.analysis import analysis_report
from ovearth_core.analysis.sweep import (
    COCO_F1_KEY,
    best_index,
    default_thresholds,
    prefix_match_counts,
    score_sweep,
    sweep_to_dict,
)
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.matching import match
from ovearth_core.types import Sample

MODS = "segmentation,bbox,oriented_bbox"


@pytest.mark.parametrize("seed", range(30))
def test_prefix_match_counts_equal_matcher_on_every_prefix(seed: int) -> None:
    rng = np.random.default_rng(seed)
    g, p = rng.integers(1, 7), rng.integers(1, 9)
    iou = rng.random((g, p)) * (rng.random((g, p)) < 0.5)
    got = prefix_match_counts(iou >= 0.4)
    expected = [len(match(iou[:, : j + 1], 0.4)[0]) for j in range(p)]
    assert got.tolist() == expected


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    gt = make_ground_truth(seed=3, n_annotations=30)
    return write_pair(tmp_path_factory.mktemp("sweep"), gt, make_predictions(gt, seed=4,
                                                                               skill=0.6))


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize("task", ["vocabulary", "referring"])
def test_sweep_equals_evaluator_loaded_with_each_threshold(files: tuple[Path, Path],
                                                           task: str) -> None:
    gt_path, pred_path = files
    samples = load_samples(gt_path, pred_path, task, modalities=MODS)
    sweep = score_sweep(samples, 0.5)
    ts = sweep.thresholds
    assert ts.size > 20 and np.all(np.diff(ts) > 0)
    # Grid points plus thresholds between scores, below all and above all scores.
    checks = [float(ts[0]), float(ts[len(ts) // 3]), float(ts[-1]), 0.505, 0.0, 1.5]
    out = sweep_to_dict(score_sweep(samples, 0.5, thresholds=checks))
    for i, t in enumerate(checks):
        ref = evaluate_samples(load_samples(gt_path, pred_path, task, score_threshold=t,
                                            modalities=MODS), 0.5)["summary"]
        for m in ("bbox", "oriented_bbox"):
            for key in ("tp", "fp", "fn"):
                assert out[m][key][i] == ref[m][key], (t, m, key)
            for key in ("positive_micro_precision", "positive_micro_recall",
                        "positive_micro_f1", COCO_F1_KEY):
                assert _same(out[m][key][i], ref[m][key]), (t, m, key)
            assert out[m]["num_positive_evaluated"] == ref[m]["num_positive_evaluated"]
        if task == "vocabulary":
            for key in ("tp", "fp", "tn", "fn", "precision", "recall", "f1", "mcc"):
                assert _same(out["presence"][key][i], ref["presence"][key]), (t, key)
        else:
            assert out["presence"] is None


def test_lowest_default_threshold_is_the_unthresholded_evaluation(
        files: tuple[Path, Path]) -> None:
    samples = load_samples(*files, "vocabulary", modalities=MODS)
    ref = evaluate_samples(samples, 0.3)["summary"]
    out = sweep_to_dict(score_sweep(samples, 0.3))
    assert out["bbox"]["positive_micro_f1"][0] == pytest.approx(ref["bbox"]["positive_micro_f1"])
    assert out["presence"]["mcc"][0] == pytest.approx(ref["presence"]["mcc"])


def test_masks_keep_presence_regardless_of_scores() -> None:
    s = [sample("a", [[0, 0, 10, 10]], [[0, 0, 10, 10]], [0.2], with_masks=True),
         sample("b", [], [[20, 20, 30, 30]], [0.9], negative=True, with_masks=True)]
    sl = sample_list(s, modalities=("segmentation", "bbox"))
    p = score_sweep(sl, thresholds=[0.1, 0.5, 1.0]).presence
    assert p is not None
    assert p.tp.tolist() == [1, 1, 1] and p.fp.tolist() == [1, 1, 1]
    sl_boxes = sample_list(s, modalities=("bbox",))
    p = score_sweep(sl_boxes, thresholds=[0.1, 0.5, 1.0]).presence
    assert p is not None
    assert p.tp.tolist() == [1, 0, 0] and p.fp.tolist() == [1, 1, 0]


def test_unscored_boxes_are_kept_at_every_threshold() -> None:
    s = [sample("a", [[0, 0, 10, 10], [20, 20, 30, 30]],
                [[0, 0, 10, 10], [20, 20, 30, 30], [40, 40, 50, 50]], [np.nan, 0.8, 0.3])]
    sw = score_sweep(sample_list(s), thresholds=[0.1, 0.5, 0.9])
    d = sw.detection["bbox"]
    assert d.tp.tolist() == [2, 2, 1]
    assert d.fp.tolist() == [1, 0, 0]
    assert d.fn.tolist() == [0, 0, 1]
    assert sw.num_unscored == {"bbox": 1, "oriented_bbox": 1}
    assert default_thresholds(s, ("bbox",)).tolist() == [0.3, 0.8]


def test_ties_in_scores_enter_and_leave_together() -> None:
    s = [sample("a", [[0, 0, 10, 10]], [[0, 0, 10, 10], [1, 1, 11, 11]], [0.5, 0.5]),
         sample("b", [[0, 0, 10, 10]], [[30, 30, 40, 40]], [0.7])]
    d = score_sweep(sample_list(s), thresholds=[0.5, 0.6]).detection["bbox"]
    assert d.tp.tolist() == [1, 0] and d.fp.tolist() == [2, 1] and d.fn.tolist() == [1, 2]


def test_best_threshold_prefers_the_highest_among_ties_and_skips_undefined() -> None:
    ts = np.array([0.1, 0.2, 0.3, 0.4])
    assert best_index(np.array([0.5, 0.8, 0.8, np.nan]), ts) == 2
    assert best_index(np.array([np.nan, np.nan, np.nan, np.nan]), ts) is None


def test_default_thresholds_are_thinned_by_rank_keeping_the_extremes() -> None:
    scores = np.linspace(0.001, 1.0, 1000)
    s = [sample("a", [[0, 0, 10, 10]], [[0, 0, 10, 10]] * 1000, scores.tolist())]
    ts = default_thresholds(s, ("bbox",), max_points=101)
    assert ts.size == 101 and ts[0] == scores[0] and ts[-1] == scores[-1]
    assert np.all(np.isin(ts, scores))


def test_best_f1_threshold_beats_every_grid_point(files: tuple[Path, Path]) -> None:
    samples = load_samples(*files, "vocabulary", modalities=MODS)
    out = sweep_to_dict(score_sweep(samples, 0.5))
    best = out["bbox"]["best_f1"]
    f1 = [v for v in out["bbox"]["positive_micro_f1"] if v is not None]
    assert best["positive_micro_f1"] == max(f1)
    assert best["threshold"] in out["thresholds"]
    assert out["presence"]["best_mcc"]["mcc"] == max(
        v for v in out["presence"]["mcc"] if v is not None)


def test_no_boxes_gives_an_empty_sweep() -> None:
    s = [sample("a", [[0, 0, 10, 10]])]
    out = sweep_to_dict(score_sweep(sample_list(s)))
    assert out["thresholds"] == [] and out["bbox"]["best_f1"] is None


def test_analysis_report_is_json_ready_with_its_three_parts(files: tuple[Path, Path]) -> None:
    samples = load_samples(*files, "vocabulary", modalities=MODS)
    out = analysis_report(samples, 0.5)
    assert set(out) == {"loaded_score_threshold", "score_sweep", "average_precision",
                        "error_attribution", "failure_tags", "warnings"}
    assert orjson.loads(orjson.dumps(out)) == out  # no nan, no numpy scalars
    assert out["score_sweep"] == sweep_to_dict(score_sweep(samples, 0.5))
    assert out["average_precision"]["bbox"]["ap_every_point"] > 0
    assert [r["kind"] for r in out["error_attribution"]["kinds"]][0] == "hallucination"
    seg_only = load_samples(*files, "referring", modalities="segmentation")
    out = analysis_report(seg_only, 0.5)
    assert out["score_sweep"] is None and out["average_precision"] is None


def _filtered(s: Sample, t: float) -> Sample:
    """The sample as the loader would keep it at threshold ``t`` (unscored boxes kept)."""
    kb = ~(s.pred_box_scores < t)
    ko = ~(s.pred_obb_scores < t)
    return replace(s, pred_boxes=s.pred_boxes[kb], pred_box_scores=s.pred_box_scores[kb],
                   pred_obbs=s.pred_obbs[ko], pred_obb_scores=s.pred_obb_scores[ko])


@pytest.mark.parametrize("seed", range(15))
def test_sweep_equals_evaluator_on_random_samples_with_unscored_boxes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    samples = []
    for i in range(12):
        negative = i % 4 == 3
        g = 0 if negative else int(rng.integers(0, 4))
        gt = rng.integers(0, 40, (g, 2)).astype(float)
        gt = np.hstack([gt, gt + rng.integers(4, 16, (g, 2))])
        p = int(rng.integers(0, 7))
        pick = gt[rng.integers(0, g, p)] if g else np.zeros((0, 4))
        pred = pick + rng.integers(-3, 4, (len(pick), 4)) if g else rng.uniform(0, 40, (p, 4))
        pred = np.hstack([pred[:, :2], np.maximum(pred[:, 2:], pred[:, :2] + 2)]) if p else \
            np.zeros((0, 4))
        scores = rng.choice([0.2, 0.4, 0.6, 0.8, np.nan], len(pred))
        samples.append(sample(f"q{i}", gt.tolist(), pred.tolist(), scores.tolist(),
                              negative=negative))
    sl = sample_list(samples)
    ts = [0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 0.9]
    out = sweep_to_dict(score_sweep(sl, 0.5, thresholds=ts))
    for i, t in enumerate(ts):
        ref = evaluate_samples(sample_list([_filtered(s, t) for s in samples]), 0.5)["summary"]
        for m in ("bbox", "oriented_bbox"):
            assert [out[m][k][i] for k in ("tp", "fp", "fn")] == [ref[m][k] for k in
                                                                 ("tp", "fp", "fn")]
            assert _same(out[m][COCO_F1_KEY][i], ref[m][COCO_F1_KEY])
        for k in ("tp", "fp", "tn", "fn", "mcc"):
            assert _same(out["presence"][k][i], ref["presence"][k]), (t, k)
