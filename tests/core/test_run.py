"""evaluate_run (ovearth_core.run): the same results as evaluate_samples, and box facts equal
to what exact IoU matrices say, so the explorer's failure tags need no second IoU pass.

References: the results of ``evaluate_samples`` (the spec's output), and IoU matrices computed
here pair by pair with shapely (OBB) and by formula (HBB), independently of the batch paths.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shapely

from ovearth_core.analysis import diagnose
from ovearth_core.evaluate import evaluate_run, evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.run import BoxFacts

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
ALL = "segmentation,bbox,oriented_bbox"


def _hbb_iou(a: np.ndarray, b: np.ndarray) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _obb_iou(a: np.ndarray, b: np.ndarray) -> float:
    pa, pb = shapely.Polygon(a), shapely.Polygon(b)
    inter = pa.intersection(pb).area
    return inter / (pa.area + pb.area - inter)


@pytest.mark.parametrize("persona", ["box_detector", "strong_localiser", "weak_baseline"])
@pytest.mark.parametrize("task", ["vocabulary", "referring", "reasoning"])
@pytest.mark.parametrize("threshold", [0.5, 0.3])
def test_run_equals_evaluate_samples_and_its_table(persona: str, task: str,
                                                   threshold: float) -> None:
    samples = load_samples(DEMO / "ground_truth.json", DEMO / "predictions" / f"{persona}.json",
                           task, modalities=ALL)
    run = evaluate_run(samples, threshold)
    results = evaluate_samples(samples, threshold)
    assert run.results == results
    assert run.config.iou_threshold == threshold and run.config.task == results["task"]
    assert diagnose.query_rows(run) == diagnose.query_rows(samples, results)


def _max_matching(valid: np.ndarray) -> int:
    """Maximum bipartite matching size by augmenting paths (Kuhn), GT rows x pred columns."""
    owner = [-1] * valid.shape[1]

    def augment(g: int, seen: set[int]) -> bool:
        for p in np.flatnonzero(valid[g]).tolist():
            if p not in seen:
                seen.add(p)
                if owner[p] < 0 or augment(owner[p], seen):
                    owner[p] = g
                    return True
        return False

    return sum(augment(g, set()) for g in range(valid.shape[0]))


def test_box_facts_duplicates_need_an_unmatchable_box() -> None:
    packed = np.array([[0.9, 0.55, 0.0], [0.0, 0.85, 0.0]])  # box 1 reaches GT 0 and 1
    assert not BoxFacts.of(packed, 0.5).duplicated
    doubled = np.array([[0.9, 0.6, 0.7], [0.0, 0.8, 0.0]])  # box 2: a third on 2 GT boxes
    assert BoxFacts.of(doubled, 0.5).duplicated
    assert _max_matching(doubled >= 0.5) == 2 and _max_matching(packed >= 0.5) == 2
    # GT 1 missed; box 1 matched to GT 0 grazes it, box 2 is far: no stray overlap.
    grazed = np.array([[0.9, 0.0], [0.2, 0.0]])
    assert not BoxFacts.of(grazed, 0.5).stray_overlap
    assert BoxFacts.of(np.array([[0.9, 0.0], [0.2, 0.05]]), 0.5).stray_overlap


def test_box_facts_equal_pairwise_ious() -> None:
    samples = load_samples(DEMO / "ground_truth.json", DEMO / "predictions" / "box_detector.json",
                           "vocabulary", modalities=ALL)
    run = evaluate_run(samples, 0.5)
    checked = 0
    for i, s in enumerate(samples):
        for key, gt, pred, iou in (("bbox", s.gt_boxes, s.pred_boxes, _hbb_iou),
                                   ("oriented_bbox", s.gt_obbs, s.pred_obbs, _obb_iou)):
            facts = run.facts(key, i)
            matrix = np.array([[iou(g, p) for p in pred] for g in gt]).reshape(len(gt),
                                                                                len(pred))
            want_best = float(matrix.max()) if matrix.size else 0.0
            assert facts.best_iou == pytest.approx(want_best, abs=1e-9)
            want_gt = matrix.max(axis=1) if matrix.size else np.zeros(len(gt))
            np.testing.assert_allclose(facts.gt_best_iou, want_gt, atol=1e-9)
            reaching = int((matrix >= 0.5).any(axis=0).sum()) if matrix.size else 0
            assert facts.duplicated == (reaching > _max_matching(matrix >= 0.5))
            pairs = run.per_sample[i][key]["matches"] if matrix.size else []
            free_gt = set(range(len(gt))) - {int(m[0]) for m in pairs}
            free_pred = set(range(len(pred))) - {int(m[1]) for m in pairs}
            assert facts.stray_overlap == any(matrix[g, p] >= 0.01 for g in free_gt
                                              for p in free_pred)
            checked += matrix.size > 0
    assert checked > 20


def test_box_facts_round_trip_through_the_cache_arrays_keeps_every_field() -> None:
    """The result cache stores box facts as arrays: every field must come back, including
    ``stray_overlap`` (left out once, so a cached run tagged "under-count" what a fresh one
    tagged "poor localisation"). A new field of BoxFacts fails here until it is stored."""
    import dataclasses

    from ovearth_core.run import BoxFacts, facts_arrays, facts_from_arrays

    facts = [BoxFacts(0.75, np.array([0.75, 0.25]), True, True),
             BoxFacts(0.0, np.zeros(0), False, False),
             BoxFacts(0.5, np.array([0.5]), False, True)]
    back = facts_from_arrays(facts_arrays({"bbox": facts}), ["bbox"])["bbox"]
    names = [f.name for f in dataclasses.fields(BoxFacts)]
    assert len(back) == len(facts)
    for a, b in zip(facts, back, strict=True):
        for name in names:
            x, y = getattr(a, name), getattr(b, name)
            if isinstance(x, np.ndarray):
                assert np.array_equal(x, y) and x.dtype == y.dtype, name
            else:
                assert x == y and type(x) is type(y), name


def test_box_facts_of_many_equal_one_by_one() -> None:
    """:meth:`BoxFacts.of_many` (the evaluator's, over a block of queries) against
    :meth:`BoxFacts.of` query by query, with the matching of :func:`match`: empty queries,
    queries without predictions or GT, duplicates, stray overlaps and ties."""
    from ovearth_core.matching import match

    rng = np.random.default_rng(7)
    for threshold in (0.5, 0.3, 0.75):
        ious, matches = [], []
        for _ in range(300):
            g, p = (int(v) for v in rng.integers(0, 5, 2))
            iou = rng.choice([0.0, 0.004, 0.02, 0.3, 0.5, 0.55, 0.8, 1.0], size=(g, p))
            ious.append(iou)
            gi, pi = match(iou, threshold) if iou.size else ([], [])
            matches.append([[int(a), int(b), float(iou[a, b])]
                            for a, b in zip(gi, pi, strict=True)])
        many = BoxFacts.of_many(ious, threshold, matches)
        assert len(many) == len(ious)
        kinds = set()
        for iou, m, got in zip(ious, matches, many, strict=True):
            want = BoxFacts.of(iou, threshold, m)
            assert got.best_iou == want.best_iou and type(got.best_iou) is float
            assert np.array_equal(got.gt_best_iou, want.gt_best_iou)
            assert got.gt_best_iou.shape == want.gt_best_iou.shape
            assert (got.duplicated, got.stray_overlap) == (want.duplicated, want.stray_overlap)
            # Every field (the failure tags' extra and missed too: merging perf38 over
            # tags34 once left them False for every query of a block).
            assert (got.extra, got.missed) == (want.extra, want.missed)
            kinds.add((iou.size > 0, want.duplicated, want.stray_overlap, want.extra,
                       want.missed))
        assert len(kinds) >= 8  # every kind of query met
