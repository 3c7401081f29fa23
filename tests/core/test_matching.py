"""ovearth_core.matching.match against brute force over every one-to-one matching."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import refs
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ovearth_core import geometry, matching, types
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.matching import match
from ovearth_core.types import Sample, SampleList


def check_against_brute_force(iou: np.ndarray, threshold: float) -> None:
    gi, pi = match(iou, threshold)
    count, total = refs.brute_force_match(iou, threshold)
    assert len(gi) == len(pi) == count
    assert len(set(gi.tolist())) == len(gi), "a GT box matched twice"
    assert len(set(pi.tolist())) == len(pi), "a prediction matched twice"
    assert np.all(iou[gi, pi] >= threshold)
    assert float(iou[gi, pi].sum()) == pytest.approx(total, abs=1e-9)
    assert gi.tolist() == sorted(gi.tolist())


@pytest.mark.parametrize("threshold", [0.5, 0.75, 0.3], ids=["t050", "t075", "t030"])
def test_match_equals_brute_force_on_random_matrices(threshold: float) -> None:
    """Spec "Detection Metrics": the most pairs with IoU >= t, then (project rule, TrackEval)
    the largest total IoU among those, on 1,500 random matrices up to 5 x 5."""
    rng = np.random.default_rng(int(threshold * 100))
    for _ in range(1500):
        g, p = (int(v) for v in rng.integers(1, 6, 2))
        iou = rng.random((g, p))
        if rng.random() < 0.5:
            iou = np.round(iou, 1)  # ties and values exactly at the threshold
        check_against_brute_force(iou, threshold)


@given(arrays(np.float64, st.tuples(st.integers(0, 5), st.integers(0, 5)),
              elements=st.sampled_from([0.0, 0.2, 0.45, 0.5, 0.55, 0.6, 0.75, 0.9, 1.0])),
       st.sampled_from([0.5, 0.55, 0.75]))
@settings(deadline=None, max_examples=400)
def test_match_properties(iou: np.ndarray, threshold: float) -> None:
    check_against_brute_force(iou, threshold)


@pytest.mark.parametrize(
    ("iou", "threshold", "pairs", "total"),
    [
        ([[0.9, 0.6], [0.6, 0.0]], 0.5, 2, 1.2),
        ([[0.8, 0.7, 0.0], [0.75, 0.0, 0.0], [0.0, 0.0, 0.0]], 0.5, 2, 1.45),
        ([[0.15, 0.6, 0.16], [0.57, 0.34, 0.76], [0.49, 0.82, 0.35]], 0.5, 2, 1.58),
        ([[0.55]], 0.55, 1, 0.55),
        ([[0.5499999]], 0.55, 0, 0.0),
        ([[0.4, 0.3], [0.2, 0.1]], 0.5, 0, 0.0),
        ([[0.6, 0.7, 0.9]], 0.5, 1, 0.9),
        ([[0.6], [0.9], [0.7]], 0.5, 1, 0.9),
    ],
    ids=["greedy-trap", "greedy-trap-3x3", "invalid-pair-tiebreak", "exactly-at-threshold",
         "just-below", "nothing-valid", "one-gt", "one-pred"],
)
def test_match_hand_worked(iou: list[list[float]], threshold: float, pairs: int,
                           total: float) -> None:
    """Spec "Detection Metrics": matching maximises the number of valid pairs (greedy
    highest-IoU first under-counts in the trap cases); ties go to the larger total IoU of
    the valid pairs only."""
    m = np.asarray(iou)
    gi, pi = match(m, threshold)
    assert len(gi) == pairs
    assert float(m[gi, pi].sum()) == pytest.approx(total, abs=1e-12)


@pytest.mark.parametrize("iou", [[[0.9, 0.6], [0.6, 0.0]],
                                 [[0.8, 0.7, 0.0], [0.75, 0.0, 0.0], [0.0, 0.0, 0.0]]],
                         ids=["2x2", "3x3"])
def test_greedy_trap_is_a_trap(iou: list[list[float]]) -> None:
    """The trap matrices really defeat greedy matching, so the hand-worked cases above test
    something greedy would get wrong."""
    m = np.asarray(iou)
    assert refs.greedy_match_count(m, 0.5) < refs.brute_force_match(m, 0.5)[0]
    assert len(match(m, 0.5)[0]) == refs.brute_force_match(m, 0.5)[0]


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0)], ids=["0x0", "0x3", "3x0"])
def test_match_empty(shape: tuple[int, int]) -> None:
    gi, pi = match(np.zeros(shape), 0.5)
    assert gi.size == 0 and pi.size == 0


# ------------------------------------------------------------------ the pair cap (issue 17)

def _box_sample(sample_id: str, n_gt: int, n_pred: int) -> Sample:
    box = np.array([[0.0, 0.0, 10.0, 10.0]])
    return Sample(sample_id, "car", False, "i.png", "a", "c", 10, 10,
                  gt_boxes=np.repeat(box, n_gt, axis=0), pred_boxes=np.repeat(box, n_pred, 0),
                  pred_box_scores=np.ones(n_pred))


def _samples(*samples: Sample) -> SampleList:
    return SampleList(list(samples), task="referring", modalities=("bbox",),
                      score_threshold=None, bbox_format="xyxy")


def test_pair_cap_small_cap_refuses_before_matching(monkeypatch) -> None:
    """With a cap of 100 pairs, 10 x 10 boxes are evaluated; 10 x 11 and 11 x 10 are refused
    with one problem each (query_id, counts, cap), before any IoU matrix is built."""
    monkeypatch.setattr(types, "MAX_PAIRS_PER_QUERY", 100)
    ok = evaluate_samples(_samples(_box_sample("q_ok", 10, 10)))
    assert ok["per_sample"][0]["bbox"]["tp"] == 10  # ten identical boxes: all match
    built = []
    monkeypatch.setattr(geometry, "iou_matrices", lambda *a, **k: built.append(a))
    with pytest.raises(OVEarthInputError) as err:
        evaluate_samples(_samples(_box_sample("q_ok", 10, 10), _box_sample("q_wide", 10, 11),
                                  _box_sample("q_tall", 11, 10)))
    assert built == []
    assert [(p.query_id, p.field) for p in err.value.problems] == [("q_wide", "bbox"),
                                                                    ("q_tall", "bbox")]
    assert err.value.problems[0].found == "10 GT boxes x 11 predicted boxes = 110 pairs"
    assert "at most 100 GT x predicted box pairs" in err.value.problems[0].expected


def test_pair_cap_is_fifty_million_and_named_by_the_loader(tmp_path: Path) -> None:
    """The real cap: 5,000 x 10,000 pairs pass the check, 5,000 x 10,001 are refused by the
    loader, the message naming the prediction file, the query, the counts and the cap. The
    check needs only the counts, so this costs no IoU matrix."""
    assert types.MAX_PAIRS_PER_QUERY == 50_000_000
    types.check_pair_cap(_samples(_box_sample("q", 5000, 10000)), ("bbox",), "f.json")
    gt = tmp_path / "gt.json"
    pred = tmp_path / "pred.json"
    gt.write_text(json.dumps({
        "annotations": [{"id": "a", "image_path": "i.png", "width": 100, "height": 100,
                         "category_name": "car", "segmentation": None,
                         "bbox": [[1, 1, 5, 5]] * 5000}],
        "tasks": {"referring": [{"query_id": "q_dense", "ann_id": "a", "query": "cars"}]}}))
    pred.write_text(json.dumps({"tasks": {"referring": [
        {"query_id": "q_dense", "bbox": [[1, 1, 6, 6]] * 10001}]}}))
    with pytest.raises(OVEarthInputError) as err:
        load_samples(gt, pred, "referring", modalities="bbox")
    assert str(err.value) == (
        f"1 problem found in the input:\n  - {pred}, query_id q_dense, field bbox: expected at "
        "most 50,000,000 GT x predicted box pairs in one query (the evaluator's cap "
        "MAX_PAIRS_PER_QUERY), found 5,000 GT boxes x 10,001 predicted boxes = 50,005,000 "
        "pairs")
    proc = subprocess.run([sys.executable, "-m", "ovearth_core", "--gt", str(gt),
                           "--predictions", str(pred), "--task", "referring",
                           "--modalities", "bbox"], capture_output=True, timeout=120,
                          check=False)
    assert proc.returncode == 2
    assert b"50,005,000 pairs" in proc.stderr and b"Traceback" not in proc.stderr


_CLI_IMPORTS = """
import atexit, runpy, sys
def report():
    from ovearth_core import matching
    print("SOLVER=%s SCIPY_OPTIMIZE=%s" % (bool(matching._SOLVER),
          "scipy.optimize" in sys.modules), file=sys.stderr)
atexit.register(report)
sys.argv = ["ovearth_core"] + sys.argv[1:]
runpy.run_module("ovearth_core", run_name="__main__", alter_sys=True)
"""


def _cli_imports(tmp_path: Path, pred_boxes: list[list[float]],
                 gt_boxes: list[list[float]]) -> tuple[int, str]:
    """Run the CLI (``python -m ovearth_core``) on one query with these GT boxes (COCO
    xywh) and predictions (xyxy), in a fresh interpreter: its bbox TP count, and whether it
    loaded the assignment solver and whether ``scipy.optimize`` was imported."""
    gt, pred = tmp_path / "gt.json", tmp_path / "pred.json"
    gt.write_text(json.dumps({
        "annotations": [{"id": "a", "image_path": "i.png", "width": 40, "height": 20,
                         "category_name": "car", "segmentation": None,
                         "bbox": gt_boxes}],
        "tasks": {"referring": [{"query_id": "q", "ann_id": "a", "query": "cars"}]}}))
    pred.write_text(json.dumps({"tasks": {"referring": [{"query_id": "q",
                                                          "bbox": pred_boxes}]}}))
    proc = subprocess.run([sys.executable, "-c", _CLI_IMPORTS, "--gt", str(gt),
                           "--predictions", str(pred), "--task", "referring",
                           "--modalities", "bbox"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    tp = json.loads(proc.stdout)["summary"]["bbox"]["tp"]
    return tp, proc.stderr.strip().splitlines()[-1]


def test_the_cli_imports_scipy_optimize_only_for_a_conflict(tmp_path: Path) -> None:
    """Issue 17: the assignment solver is loaded only for a query whose candidate pairs
    share a box (``scipy.optimize`` takes 0.5-0.7 s to import); issue 39: then through
    scipy's public ``scipy.optimize.linear_sum_assignment``."""
    apart = [[0, 0, 10, 10], [20, 0, 10, 10]]
    assert _cli_imports(tmp_path, [[0, 0, 10, 10], [20, 0, 30, 10]], apart) == (
        2, "SOLVER=False SCIPY_OPTIMIZE=False")
    # Two predictions on the first GT box: no prediction is shared, so each GT box takes
    # its best prediction, without the solver either.
    assert _cli_imports(tmp_path, [[0, 0, 10, 10], [0, 0, 10, 9], [20, 0, 30, 10],
                                   [21, 0, 30, 10]], apart) == (
        2, "SOLVER=False SCIPY_OPTIMIZE=False")
    # Two overlapping GT boxes (IoU 0.67) and two predictions, each valid with both: a
    # real conflict, solved by the assignment.
    assert _cli_imports(tmp_path, [[1, 0, 11, 10], [0, 0, 10, 10]],
                        [[0, 0, 10, 10], [2, 0, 10, 10]]) == (
        2, "SOLVER=True SCIPY_OPTIMIZE=True")


# ------------------------------------------------------------------ the assignment solver

def _cost_matrices() -> list[np.ndarray]:
    """Seeded dense, rectangular and tied matrices (ties: values rounded to one decimal,
    whole rows and columns equal, all-zero)."""
    rng = np.random.default_rng(17)
    out = []
    for _ in range(300):
        g, p = (int(v) for v in rng.integers(1, 40, 2))
        m = rng.random((g, p)) * rng.choice([1.0, 3.0, 40.0])
        kind = int(rng.integers(0, 4))
        if kind == 1:
            m = np.round(m, 1)
        elif kind == 2:
            m[:, : max(1, p // 2)] = m[:, :1]
            m[: max(1, g // 2)] = m[:1]
        elif kind == 3:
            m = np.where(rng.random((g, p)) < 0.7, 0.0, np.round(m, 0))
        out.append(m)
    out += [np.zeros((5, 7)), np.ones((6, 6)), np.ones((1, 9)), np.zeros((9, 1))]
    return out


def test_the_solver_is_scipys_public_function() -> None:
    """Issue 39: no private module of scipy (``_lsap``) is loaded by path any more."""
    from scipy.optimize import linear_sum_assignment as public

    assert matching.assignment_solver() is public
    for m in _cost_matrices()[:20]:  # and match() solves with it: brute force agrees
        if m.shape[0] <= 6 and m.shape[1] <= 6:
            check_against_brute_force(np.clip(m / max(m.max(), 1e-9), 0, 1), 0.5)


# ------------------------------------------------------------------ stars (issue 17)

def _star(rng: np.random.Generator, g: int, p: int, ties: bool) -> np.ndarray:
    """A ``(g, p)`` IoU matrix where every prediction has at most one valid GT box at 0.5
    (stars around GT boxes), dense below the threshold; with ``ties``, some predictions
    are exact copies of another of the same GT box."""
    iou = rng.uniform(0.0, 0.49, (g, p))
    owner = rng.integers(-1, g, p)  # -1: a prediction valid with no GT box
    for col, row in enumerate(owner.tolist()):
        if row >= 0:
            iou[row, col] = rng.uniform(0.5, 1.0)
    if ties and p > 1:
        for col in rng.choice(p, size=max(1, p // 3), replace=False).tolist():
            other = int(rng.integers(0, p))
            iou[:, col] = iou[:, other]
    return iou


def _solver_match(iou: np.ndarray, threshold: float) -> tuple[list[int], list[int]]:
    """The matching as it was always computed: scipy's public assignment solver on
    ``(iou >= t) * (big + iou)`` over the candidate rows and columns, invalid pairs
    dropped (the module docstring's rule), written out here independently."""
    from scipy.optimize import linear_sum_assignment as public

    valid = iou >= threshold
    rows, cols = np.flatnonzero(valid.any(axis=1)), np.flatnonzero(valid.any(axis=0))
    sub_valid, sub = valid[np.ix_(rows, cols)], iou[np.ix_(rows, cols)]
    big = float(min(rows.size, cols.size) + 1)
    r, c = public(np.where(sub_valid, big + sub, 0.0), maximize=True)
    keep = sub_valid[r, c]
    return rows[r[keep]].tolist(), cols[c[keep]].tolist()


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("transpose", [False, True], ids=["gt-stars", "pred-stars"])
def test_star_matching_equals_the_solver(ties: bool, transpose: bool) -> None:
    """Issue 17: when no prediction (or no GT box) is shared between valid pairs, each GT
    box (prediction) takes its best pair without the solver; the pairs are exactly the
    solver's, and with exact ties the solver still decides (the same pairs as always)."""
    rng = np.random.default_rng(1700 + 2 * ties + transpose)
    for _ in range(400):
        g, p = (int(v) for v in rng.integers(2, 30, 2))
        iou = _star(rng, g, p, ties)
        if transpose:
            iou = iou.T.copy()
        gi, pi = match(iou, 0.5)
        assert (gi.tolist(), pi.tolist()) == _solver_match(iou, 0.5)


def test_star_matching_equals_brute_force() -> None:
    """Spec "Detection Metrics" on small stars (both orientations, ties included): the most
    pairs, then the largest total IoU."""
    rng = np.random.default_rng(1717)
    for k in range(1500):
        g, p = (int(v) for v in rng.integers(1, 7, 2))
        iou = _star(rng, g, p, ties=k % 3 == 0)
        check_against_brute_force(iou if k % 2 else iou.T.copy(), 0.5)


def test_star_matching_needs_no_solver(monkeypatch) -> None:
    """The star case really skips the solver (else the equivalence above tests nothing
    new): a solver that fails is never called for distinct stars, and is for a conflict."""
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the solver was called")

    monkeypatch.setattr(matching, "_SOLVER", [refuse])
    iou = np.array([[0.9, 0.6, 0.1], [0.2, 0.1, 0.7]])  # GT 0 has two predictions
    assert [v.tolist() for v in match(iou, 0.5)] == [[0, 1], [0, 2]]
    assert [v.tolist() for v in match(iou.T.copy(), 0.5)] == [[0, 2], [0, 1]]
    with pytest.raises(AssertionError, match="the solver was called"):
        match(np.array([[0.9, 0.6], [0.6, 0.0]]), 0.5)  # a GT box and a prediction shared


def _small_queries(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Random small IoU matrices of every kind: stars both ways, conflicts, values on the
    thresholds (0.05 steps), one-to-one, empty rows or columns."""
    out = []
    for k in range(n):
        g, p = (int(v) for v in rng.integers(0, 7, 2))
        kind = k % 4
        if kind == 0 and g and p:
            iou = _star(rng, g, p, ties=k % 8 == 0)
            iou = iou if k % 3 else iou.T.copy()
        elif kind == 1:
            iou = np.round(rng.random((g, p)) * 20) / 20
        elif kind == 2:
            iou = np.where(rng.random((g, p)) < 0.3, rng.uniform(0.45, 1.0, (g, p)), 0.0)
        else:
            iou = rng.random((g, p))
        out.append(iou)
    return out


@pytest.mark.parametrize("run_threshold", [0.5, 0.3, 0.75, 0.62])
def test_det_entries_sizes_equal_brute_force(run_threshold: float) -> None:
    """Issue 17: ``det_entries`` takes most matching sizes from pair counts (no shared GT
    box or no shared prediction) and reuses matchings across thresholds; every size at
    0.50 ... 0.95 and the run threshold's TP count and total IoU equal brute force."""
    from ovearth_core import metrics
    from ovearth_core.types import IOU_THRESHOLDS

    rng = np.random.default_rng(int(run_threshold * 100))
    ious = _small_queries(rng, 400)
    negatives = [bool(v) for v in rng.random(len(ious)) < 0.1]
    entries = metrics.det_entries(ious, negatives, run_threshold)
    checked = 0
    for iou, negative, entry in zip(ious, negatives, entries, strict=True):
        if negative or not iou.size:
            assert entry["tp"] == 0 and entry["tp_at"] == [0] * len(IOU_THRESHOLDS)
            continue
        assert entry["tp_at"] == [refs.brute_force_match(iou, t)[0] for t in IOU_THRESHOLDS]
        count, total = refs.brute_force_match(iou, run_threshold)
        assert entry["tp"] == count
        assert sum(m[2] for m in entry["matches"]) == pytest.approx(total, abs=1e-9)
        checked += 1
    assert checked > 250
