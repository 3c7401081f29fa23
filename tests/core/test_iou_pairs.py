"""geometry.iou_pairs: the nonzero entries of the dense IoU matrix, found from envelopes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core import geometry


def _boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    xy = rng.integers(0, 40, (n, 2)).astype(float)
    wh = rng.integers(1, 12, (n, 2)).astype(float)
    return np.concatenate([xy, xy + wh], axis=1)


def _rotated(rng: np.random.Generator, n: int) -> np.ndarray:
    centre = rng.uniform(0, 40, (n, 1, 2))
    half = rng.uniform(1, 8, (n, 1, 2)) * [[1, 1], [-1, 1], [-1, -1], [1, -1]]
    a = rng.uniform(0, np.pi, (n, 1, 1))
    rot = np.concatenate([np.cos(a), -np.sin(a), np.sin(a), np.cos(a)], axis=2)
    return centre + np.einsum("nij,nkj->nki", rot.reshape(n, 2, 2), half)


@given(st.integers(0, 30), st.integers(0, 30), st.booleans(), st.integers(0, 2**32 - 1))
@settings(deadline=None, max_examples=150)
def test_pairs_are_the_dense_matrix_nonzeros(g: int, p: int, oriented: bool, seed: int
                                             ) -> None:
    rng = np.random.default_rng(seed)
    make = _rotated if oriented else _boxes
    gt, pred = make(rng, g), make(rng, p)
    dense = geometry.iou_matrix(gt, pred, oriented)
    gi, pi, iou = geometry.iou_pairs(gt, pred, oriented)
    want_g, want_p = np.nonzero(dense > 0)
    assert (gi.tolist(), pi.tolist()) == (want_g.tolist(), want_p.tolist())
    np.testing.assert_allclose(iou, dense[want_g, want_p], rtol=1e-12, atol=0)


@pytest.mark.parametrize("oriented", [False, True], ids=["hbb", "obb"])
@pytest.mark.parametrize("seed", range(4))
def test_large_sets_through_the_tree_equal_the_dense_matrix(oriented: bool, seed: int) -> None:
    # 200 x 150 = 30,000 pairs: beyond the dense shortcut, found with the STRtree
    rng = np.random.default_rng(seed)
    make = _rotated if oriented else _boxes
    gt, pred = make(rng, 200) * 4, make(rng, 150) * 4
    dense = geometry.iou_matrix(gt, pred, oriented)
    gi, pi, iou = geometry.iou_pairs(gt, pred, oriented)
    want_g, want_p = np.nonzero(dense > 0)
    assert gi.size > 100
    assert (gi.tolist(), pi.tolist()) == (want_g.tolist(), want_p.tolist())
    np.testing.assert_allclose(iou, dense[want_g, want_p], rtol=1e-12, atol=0)
