"""ovearth_core.matching.match against brute force over every one-to-one matching."""

from __future__ import annotations

import numpy as np
import pytest
import refs
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ovearth_core.matching import match


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
