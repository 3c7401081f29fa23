"""Thresholded maximum-cardinality one-to-one matching of boxes.

Among all matchings that pair the most GT/prediction couples with IoU >= t,
take the one with the largest total IoU (the rule TrackEval uses): solve a
linear assignment on ``(iou >= t) * (big + iou)`` and keep the valid pairs
(invalid pairs weigh 0, so their IoU cannot sway the choice).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .errors import OVEarthInputError, Problem

if TYPE_CHECKING:  # a type only: matching stays free of pycocotools (types -> masks)
    from .types import Sample

IntArray = npt.NDArray[np.intp]
# At most this many GT x predicted box pairs in one query and modality: beyond it one
# query's IoU matrix alone (8 bytes a pair, with its temporaries) would take gigabytes.
# The reference toolkit has no cap (docs/cli.md: the input rules).
MAX_PAIRS_PER_QUERY = 50_000_000
_BOX_FIELDS = {"bbox": ("gt_boxes", "pred_boxes"), "oriented_bbox": ("gt_obbs", "pred_obbs")}


def check_pair_cap(samples: Sequence[Sample], modalities: Sequence[str], file: str) -> None:
    """Refuse queries with more than :data:`MAX_PAIRS_PER_QUERY` GT x predicted box pairs in
    an enabled box modality, before any IoU matrix is allocated.

    Raises:
        OVEarthInputError: one problem per such query and modality, naming ``file``, the
        query_id, the counts and the cap.
    """
    cap = MAX_PAIRS_PER_QUERY
    problems = []
    for modality in (m for m in _BOX_FIELDS if m in modalities):
        gt_field, pred_field = _BOX_FIELDS[modality]
        for s in samples:
            n_gt, n_pred = len(getattr(s, gt_field)), len(getattr(s, pred_field))
            if n_gt * n_pred > cap:
                problems.append(Problem(
                    file, modality,
                    f"at most {cap:,} GT x predicted box pairs in one query (the evaluator's "
                    "cap MAX_PAIRS_PER_QUERY)",
                    f"{n_gt:,} GT boxes x {n_pred:,} predicted boxes = {n_gt * n_pred:,} pairs",
                    s.sample_id))
    if problems:
        raise OVEarthInputError(problems)


def match(iou: npt.NDArray[np.float64], threshold: float) -> tuple[IntArray, IntArray]:
    """Return ``(gt_indices, pred_indices)`` of the matched pairs, sorted by GT index.

    Args:
        iou: ``(G, P)`` IoU matrix.
        threshold: pairs need ``iou >= threshold``.
    """
    valid = iou >= threshold
    rows = np.flatnonzero(valid.any(axis=1))
    if rows.size == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    cols = np.flatnonzero(valid.any(axis=0))
    sub_valid = valid[rows][:, cols]
    if rows.size == cols.size == np.count_nonzero(sub_valid):
        # Each candidate row and column has exactly one valid pair: they all match.
        r, c = np.nonzero(sub_valid)
        return rows[r], cols[c]
    sub_iou = iou[rows][:, cols]
    if rows.size == 1 or cols.size == 1:
        # One candidate row or column: the best valid IoU is the optimum.
        r, c = np.unravel_index(int(np.argmax(np.where(sub_valid, sub_iou, -1.0))), sub_iou.shape)
        return rows[[r]], cols[[c]]
    # Every valid pair outweighs the summed IoU of any matching (at most min(G, P) <= 1 each).
    big = float(min(rows.size, cols.size) + 1)
    weights = np.where(sub_valid, big + sub_iou, 0.0)
    stars = _star_matching(sub_valid, weights)
    if stars is not None:
        return rows[stars[0]], cols[stars[1]]
    r, c = assignment_solver()(weights, maximize=True)
    keep = sub_valid[r, c]
    return rows[r[keep]], cols[c[keep]]


# Two weights closer than this are treated as a tie (left to the solver, whose choice among
# equal optima the results have always followed).
_TIE = 1e-9


def _star_matching(valid: npt.NDArray[np.bool_], weights: npt.NDArray[np.float64]
                   ) -> tuple[IntArray, IntArray] | None:
    """The optimum of ``weights`` when no column (or no row) has two valid pairs, else None.

    No prediction shared between valid pairs: every GT row with a valid pair takes its
    heaviest one (the rows do not compete), and that is the only optimum when each row's
    heaviest valid pair is heavier than its next by more than ``_TIE``; the same with rows
    and columns swapped. Ties are left to the solver (``None``): the matching it picks
    among equal optima is what the results have always been.
    """
    for axis in (0, 1):  # 0: columns with one valid pair each (stars around rows)
        if valid.sum(axis=axis).max() > 1:
            continue
        w = weights if axis == 0 else weights.T
        order = np.argsort(-w, axis=1, kind="stable")
        best = np.take_along_axis(w, order[:, :2], axis=1)
        if not bool((best[:, 0] - best[:, 1] > _TIE).all()):  # an invalid second weighs 0
            return None
        own = np.arange(w.shape[0])
        if axis == 0:
            return own, order[:, 0]
        rows = order[:, 0]
        sort = np.argsort(rows, kind="stable")
        return rows[sort], own[sort]
    return None


# ------------------------------------------------------------------ the assignment solver

_SOLVER: list[Callable[..., Any]] = []  # the loaded solver (filled on first use)
_SOLVER_LOCK = threading.Lock()  # the app evaluates in several threads
_LSAP = "scipy.optimize._lsap"


def assignment_solver() -> Callable[..., Any]:
    """scipy's ``linear_sum_assignment(cost, maximize)``, loaded on first use.

    ``import scipy.optimize`` costs 0.4-0.65 s (most of it scipy parsing its own docstrings
    and importing scipy.linalg, scipy.special, numpy.f2py ...), paid by every CLI process with
    one query that needs an assignment. The solver itself is the extension module
    ``scipy/optimize/_lsap``, which loads alone in under a millisecond: load that file
    directly, without executing ``scipy/__init__.py`` or ``scipy/optimize/__init__.py``.
    ``_lsap`` is a private module of scipy (1.17 here; ``linear_sum_assignment`` is
    re-exported from it unchanged, ``scipy/optimize/__init__.py``): when the file is missing
    or does not load, use the public ``scipy.optimize.linear_sum_assignment`` (same solver,
    same results; only the import is slower). Not registered in ``sys.modules``, so a later
    ``import scipy.optimize`` is unaffected.
    """
    if not _SOLVER:
        with _SOLVER_LOCK:
            if not _SOLVER:
                _SOLVER.append(_load_lsap() or _public_solver())
    return _SOLVER[0]


def _public_solver() -> Callable[..., Any]:
    from scipy.optimize import linear_sum_assignment as solver

    return solver


def _lsap_paths() -> list[Path]:
    """Where scipy's ``optimize/_lsap`` extension would be, without importing scipy."""
    spec = importlib.util.find_spec("scipy")  # a top-level name: scipy is not executed
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(folder) / "optimize" / f"_lsap{suffix}"
            for folder in spec.submodule_search_locations
            for suffix in importlib.machinery.EXTENSION_SUFFIXES]


def _load_lsap() -> Callable[..., Any] | None:
    """``linear_sum_assignment`` of scipy's private ``_lsap`` extension, or ``None``."""
    loaded = sys.modules.get(_LSAP)  # scipy.optimize already imported: its own module
    if loaded is None:
        path = next((p for p in _lsap_paths() if p.is_file()), None)
        if path is None:
            return None
        try:
            loader = importlib.machinery.ExtensionFileLoader(_LSAP, str(path))
            spec = importlib.util.spec_from_file_location(_LSAP, path, loader=loader)
            if spec is None:
                return None
            loaded = importlib.util.module_from_spec(spec)
            loader.exec_module(loaded)
        except Exception:  # noqa: BLE001 - any failure of a private module: the public path
            return None
        finally:
            # Loading a single-phase extension registers it in sys.modules without its
            # parent packages: drop it, so that a later ``import scipy.optimize`` loads and
            # binds ``scipy.optimize._lsap`` as usual.
            sys.modules.pop(_LSAP, None)
    solver = getattr(loaded, "linear_sum_assignment", None)
    return solver if callable(solver) else None
