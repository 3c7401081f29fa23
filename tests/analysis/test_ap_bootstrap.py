"""The weighted AP of a bootstrap resample (ovearth_core.analysis.ap_bootstrap) against brute
force: every query literally repeated c times (new query ids) and run through the observed
average_precision_report, whose COCO and devkit numbers the AP tests check against
pycocotools and DOTA_devkit."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from analysis_fixtures import random_query_boxes, sample, sample_list
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core.analysis import ap_bootstrap
from ovearth_core.analysis.ap import ap_numbers, average_precision_report
from ovearth_core.analysis.ap_bootstrap import ap_curves, ap_run, ap_values
from ovearth_core.analysis.compare import (
    Comparison,
    ap_differences,
    compare_results,
    resample_chunks,
    unit_counts,
)
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.labels import ap_keys
from ovearth_core.types import Sample

# The AP keys resampled: every one but those of a protocol an option adds (NMS-AP, AI-TOD).
BASE_KEYS = ap_keys(None)

MODALITIES = ("bbox", "oriented_bbox")


def _samples(seed: int, n: int = 24, crowds: bool = False) -> list[Sample]:
    """Random queries of four categories on n // 4 images; distinct scores (continuous
    draws); every sixth query negative, its phrase naming a category (so hard negatives
    count in that category's mAP); some GT boxes DOTA-difficult, some COCO crowds."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        negative = i % 6 == 5
        gt, pred = random_query_boxes(rng, negative, 0.3)
        g = len(gt)
        s = sample(f"q{i}", gt.tolist(), pred.tolist(), rng.random(len(pred)).tolist(),
                   negative=negative, category=f"c{i % 4}")
        s = replace(s, image_path=f"img{i // 4}.png", phrase=f"c{i % 4}" if negative else s.phrase,
                    gt_difficult=rng.random(g) < 0.2)
        if crowds and not negative and rng.random() < 0.3:
            s = replace(s, gt_ignore_boxes=pred[:1] + np.array([-3, -3, 3, 3]))
        out.append(s)
    return out


def _repeated(samples: list[Sample], counts: np.ndarray) -> list[Sample]:
    """Each sample c times in place, the copies under new query ids (their rank order:
    adjacent, the ranking being stable and the scores distinct)."""
    return [replace(s, sample_id=f"{s.sample_id}~{j}")
            for s, c in zip(samples, counts.tolist(), strict=True) for j in range(int(c))]


def _weighted(samples: list[Sample], counts: np.ndarray, modality: str,
              include_negatives: bool, max_detections: int = 100,
              iou: float = 0.5) -> dict[str, float]:
    """ap_values for per-sample multiplicities ``counts`` ``(R, N)``, per AP key ``(R,)``."""
    curves = ap_curves(samples, modality, iou, include_negatives, max_detections)
    col = {s.sample_id: i for i, s in enumerate(samples)}
    return ap_values(curves, counts[:, [col[q] for q in curves.query_ids]])


def _brute(samples: list[Sample], counts: np.ndarray, modality: str, include_negatives: bool,
           max_detections: int = 100, iou: float = 0.5) -> dict[str, float | None]:
    report = average_precision_report(_repeated(samples, counts), iou, (modality,),
                                      include_negatives, max_detections)
    return {k: v for k, (v, _) in ap_numbers(report[modality]).items()}


def _assert_same(weighted: float, brute: float | None) -> None:
    if brute is None:
        assert math.isnan(weighted)
    else:
        assert weighted == pytest.approx(brute, abs=1e-12, rel=0)


@pytest.mark.parametrize("search_from", [0, 10**9])  # either way of reading the levels
@pytest.mark.parametrize("crowds", [False, True])
@pytest.mark.parametrize("include_negatives", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_weighted_ap_equals_repeated_queries(seed: int, include_negatives: bool,
                                             crowds: bool, search_from: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ap_bootstrap, "_SEARCH_MIN_POINTS", search_from)
    samples = _samples(seed, crowds=crowds)
    rng = np.random.default_rng(seed + 50)
    counts = np.vstack([np.ones(len(samples)), rng.integers(0, 4, (4, len(samples))),
                        np.bincount(rng.integers(0, len(samples), len(samples)),
                                    minlength=len(samples))]).astype(float)
    for modality in MODALITIES:
        weighted = _weighted(samples, counts, modality, include_negatives)
        assert set(weighted) == set(BASE_KEYS)
        for r in range(counts.shape[0]):
            brute = _brute(samples, counts[r], modality, include_negatives)
            for key in BASE_KEYS:
                _assert_same(weighted[key][r], brute[key])


def test_all_ones_reproduce_the_observed_numbers() -> None:
    samples = _samples(7)
    report = average_precision_report(samples, 0.5, MODALITIES, True, 10)
    for modality in MODALITIES:
        weighted = _weighted(samples, np.ones((2, len(samples))), modality, True, 10)
        for key, (observed, _) in ap_numbers(report[modality]).items():
            assert observed is not None
            assert weighted[key].tolist() == pytest.approx([observed] * 2, abs=1e-12, rel=0)


@pytest.mark.parametrize(("iou", "cap"), [(0.3, 100), (0.7, 10), (0.5, 10)])
def test_options_are_respected(iou: float, cap: int) -> None:
    """The run's IoU threshold and COCO detection cap (10 keeps fewer boxes than some
    queries have) change the weighted numbers exactly as the observed ones."""
    samples = _samples(3, n=20)
    rng = np.random.default_rng(9)
    counts = rng.integers(0, 3, (3, len(samples))).astype(float)
    for r in range(3):
        brute = _brute(samples, counts[r], "bbox", False, cap, iou)
        weighted = _weighted(samples, counts[r:r + 1], "bbox", False, cap, iou)
        for key in BASE_KEYS:
            _assert_same(weighted[key][0], brute[key])


def test_image_unit_draws_equal_repeated_images() -> None:
    """A draw of images expanded to their queries (unit_counts) is a draw of query
    multiplicities like any other: brute force repeats each image's queries."""
    samples = _samples(4)
    groups = np.array([int(s.image_path[3:-4]) for s in samples])
    counts = unit_counts(np.random.default_rng(0), 4, groups)
    assert counts.shape == (4, len(samples))
    for r in range(4):  # all of an image's queries share its multiplicity
        assert all(len(set(counts[r, groups == g])) == 1 for g in set(groups.tolist()))
    weighted = _weighted(samples, counts, "bbox", True)
    for r in range(4):
        brute = _brute(samples, counts[r], "bbox", True)
        for key in BASE_KEYS:
            _assert_same(weighted[key][r], brute[key])


def test_category_absent_from_a_resample_is_left_out_of_the_mean() -> None:
    """Hand-worked: category a (one query, its one box found: AP 1), category b (one query,
    its box missed: AP 0). mAP = 1/2; a resample without b's query gives 1 (b left out, not
    counted 0); one without a's query gives 0; one without either, undefined."""
    a = sample("a1", [[0, 0, 10, 10]], [[0, 0, 10, 10]], [0.9], category="a")
    b = sample("b1", [[0, 0, 10, 10]], [[50, 50, 60, 60]], [0.8], category="b")
    counts = np.array([[1, 1], [2, 0], [0, 3], [0, 0]], dtype=float)
    w = _weighted([a, b], counts, "bbox", False)
    for key in ("coco.map@[0.5:0.95]", "coco.map@0.5", "voc_devkit.map_11_point",
                "voc_devkit.map_every_point"):
        assert w[key][:3].tolist() == [0.5, 1.0, 0.0], key
        assert math.isnan(w[key][3])
    # Pooled: one query of two boxes, the found one ranked first: AP 1/2 (every point: the
    # envelope is 1 up to recall 1/2); without b's query, recall 1 at precision 1.
    assert w["ap_every_point"][:3].tolist() == [0.5, 1.0, 0.0]
    assert math.isnan(w["ap_every_point"][3])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), counts=st.lists(st.integers(0, 4), min_size=12,
                                                    max_size=12),
       include_negatives=st.booleans(), modality=st.sampled_from(MODALITIES))
def test_weighted_ap_equals_repeated_queries_for_any_multiplicities(
        seed: int, counts: list[int], include_negatives: bool, modality: str) -> None:
    samples = _samples(seed, n=12, crowds=seed % 2 == 1)
    c = np.array([counts], dtype=float)
    weighted = _weighted(samples, c, modality, include_negatives, max_detections=10)
    brute = _brute(samples, c[0], modality, include_negatives, max_detections=10)
    for key in BASE_KEYS:
        _assert_same(weighted[key][0], brute[key])


# --- paired intervals in the comparison -------------------------------------------------------

def _results(samples: list[Sample]) -> dict[str, Any]:
    return evaluate_samples(sample_list(samples), 0.5)


def _pair(seed: int, n: int = 24, include_negatives: bool = False
          ) -> tuple[list[Sample], list[Sample], Comparison]:
    """Two submissions on the same GT (B: A's boxes nudged towards the GT and rescored)."""
    a = _samples(seed, n)
    rng = np.random.default_rng(seed + 1)
    b = []
    for s in a:
        shift = rng.normal(0, 1.5, (len(s.pred_boxes), 2))
        scores = rng.random(len(s.pred_boxes))
        b.append(replace(s, pred_boxes=s.pred_boxes + np.tile(shift, 2), pred_box_scores=scores,
                         pred_obbs=s.pred_obbs + shift[:, None, :],
                         pred_obb_scores=scores.copy()))
    runs = tuple(ap_run(x, 0.5, MODALITIES, include_negatives) for x in (a, b))
    cmp = compare_results(_results(a), _results(b), n_resamples=40, seed=3, unit="image",
                          ap=runs, ap_resamples=25)
    return a, b, cmp


def test_ap_resamples_are_the_first_of_the_key_metrics_stream() -> None:
    groups = np.repeat(np.arange(10), 3)
    few = np.vstack([c for _, _, c in resample_chunks(300, 5, groups)])
    many = np.vstack([c for _, _, c in resample_chunks(1000, 5, groups)])
    assert few.shape == (300, 30)
    assert np.array_equal(few, many[:300])


def test_ap_interval_is_the_brute_force_percentile_interval() -> None:
    """Observed A, B and Δ are the reports' numbers exactly; the interval is the percentile
    interval (numpy's, 95 %) of B − A over the same image draws, each computed by repeating
    queries and running average_precision_report on A and B."""
    a, b, cmp = _pair(11)
    assert cmp.ap_resamples == 25
    assert len(cmp.ap_metrics) == len(MODALITIES) * len(BASE_KEYS)
    groups = np.array([int(s.image_path[3:-4]) for s in a])
    draws = np.vstack([c for _, _, c in resample_chunks(25, 3, groups)])
    reports = [average_precision_report(x, 0.5, MODALITIES) for x in (a, b)]
    for modality in MODALITIES:
        brute = [[_brute(x, draws[r], modality, False) for r in range(25)] for x in (a, b)]
        for key in BASE_KEYS:
            m = cmp.ap_metric(modality, key)
            va, vb = (ap_numbers(rep[modality])[key][0] for rep in reports)
            assert (m.a, m.b) == (va, vb)
            assert m.diff == vb - va  # exactly
            diffs = np.array([np.nan if x is None or y is None else y - x
                              for x, y in zip(brute[0], brute[1], strict=True)
                              for x, y in [(x[key], y[key])]])
            ok = diffs[np.isfinite(diffs)]
            assert m.n_valid == ok.size
            low, high = np.percentile(ok, [2.5, 97.5])
            assert (m.ci_low, m.ci_high) == pytest.approx((low, high), abs=1e-12, rel=0)


def test_identical_submissions_give_zero_width_intervals() -> None:
    a = _samples(5)
    run = ap_run(a, 0.5, MODALITIES)
    result = _results(a)
    cmp = compare_results(result, result, n_resamples=30, ap=(run, run), ap_resamples=30)
    assert cmp.ap_metrics
    for m in cmp.ap_metrics:
        assert (m.diff, m.ci_low, m.ci_high, m.n_valid) == (0.0, 0.0, 0.0, 30)


def test_hand_worked_interval_contains_the_difference_and_warns_below_30_units() -> None:
    """Two queries of one category, each with one GT box. A finds query 1's box, B finds both:
    AP_A = 1/2, AP_B = 1 (VOC every point), Δ = 1/2. A resample drawing only query 2 gives
    0 and 1 (Δ 1), only query 1 gives 1 and 1 (Δ 0): every Δ lies in [0, 1]."""
    gt = [[0, 0, 10, 10]]
    a = [sample("q1", gt, gt, [0.9]), sample("q2", gt, [[50, 50, 60, 60]], [0.8])]
    b = [sample("q1", gt, gt, [0.9]), sample("q2", gt, gt, [0.8])]
    runs = tuple(ap_run(x, 0.5, MODALITIES) for x in (a, b))
    cmp = compare_results(_results(a), _results(b), n_resamples=200, ap=runs,
                          ap_resamples=200)
    m = cmp.ap_metric("bbox", "ap_every_point")
    assert (m.a, m.b, m.diff) == (0.5, 1.0, 0.5)
    assert 0.0 <= m.ci_low <= m.diff <= m.ci_high <= 1.0
    assert m.ci_low == 0.0 and m.ci_high == 1.0  # both extremes are drawn often enough
    assert cmp.warning is not None and "2 queries" in cmp.warning


def test_not_submitted_modality_has_no_ap_difference() -> None:
    a = _samples(2)
    b = [replace(s, pred_obbs=np.zeros((0, 4, 2)), pred_obb_scores=np.zeros(0)) for s in a]
    result_b = _results(b)
    result_b.setdefault("coverage", {})["not_submitted_modalities"] = ["oriented_bbox"]
    runs = (ap_run(a, 0.5, MODALITIES), ap_run(b, 0.5, MODALITIES))
    ap = ap_differences(_results(a), result_b, *runs, n_resamples=10)
    for m in ap:
        if m.modality == "oriented_bbox":
            assert (m.b, m.diff, m.ci_low, m.ci_high, m.n_valid) == (None, None, None, None, 0)
        else:
            assert m.ci_low is not None
