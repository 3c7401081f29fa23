"""Ranks with their uncertainty (issue 37): rank intervals from resampled images, groups that
cannot be told apart, each submission against the leader with Holm's correction, categories
with Benjamini-Hochberg q-values, and Friedman's test with Nemenyi's critical difference.

Every ranked metric is a ratio of sums of per-query pieces (:mod:`.additive`), so a
resample's metric is the registry's ``value`` of the resample's summed pieces: each
submission's queries are matched once, by the evaluator, and only their pieces are summed
again. The pieces are first summed per resampling unit (an image, or a query), an array
``(M, U, K)`` (submissions, units, pieces); a resample is a row ``c`` of unit multiplicities
(drawn with replacement, the same draw for every submission: the comparisons are paired)
and its sums for every submission are one product ``c @ pieces``, ``R`` resamples one
``(R, U) @ (U, M * K)`` product in chunks (:func:`resampled_values`).

Conventions (JSON-ready numbers out, ``None`` where undefined):

* Rank 1 is the best (higher values are better); a value undefined in a resample (zero
  denominator) ranks last there; ties share their mean rank (:func:`average_ranks`).
* Rank interval: the ``alpha / 2`` and ``1 - alpha / 2`` quantiles of a submission's ranks
  over the resamples, taken outward (numpy's ``lower`` and ``higher`` methods), so both ends
  are ranks some resample gave.
* Groups that cannot be told apart: the maximal runs of submissions, in the observed order,
  whose rank intervals share a rank; each gets a letter and a submission lists the letters
  of the runs it is in (a compact letter display: no common letter, told apart).
* Against the leader (the observed rank 1): the paired bootstrap distribution of
  leader - submission; its two-sided p-value ``min(1, 2 * (1 + k) / (1 + n))`` with ``k``
  the resamples on the far side of 0 (the leader not ahead, or the submission not behind,
  whichever is fewer) and ``n`` the resamples in which both are defined; Holm's step-down
  correction over the M - 1 tests (``statsmodels.stats.multitest.multipletests``).
* Categories: per category whose queries span at least ``min_count`` units (images, or
  queries), the same paired test of two submissions (the leader and the runner-up) over
  the category's units;
  Benjamini-Hochberg q-values over the categories tested.
* Friedman: blocks are the units (images or queries) on which every submission's metric is
  defined; ``scipy.stats.friedmanchisquare`` over them, average ranks per block (1 = best)
  and Nemenyi's pairwise p-values (``scikit_posthocs.posthoc_nemenyi_friedman``); the
  critical difference ``q_alpha * sqrt(k (k + 1) / (6 n))`` with ``q_alpha`` the studentized
  range quantile over sqrt(2) (Demsar, JMLR 2006); a clique of the diagram is a maximal run,
  in mean-rank order, whose first and last submissions Nemenyi does not tell apart.
* Best of N: the top score of N submissions estimates the state of the art optimistically
  (the winner's curse); the bootstrap estimate of that optimism is the mean over the
  resamples of the best score minus the observed best.

The corrections and the bootstrap p-value live in :mod:`.multiple` (Compare and Slices use
them too). statsmodels and scikit-posthocs import in about a second each: imported on first
use only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import OVEarthInputError, Problem
from ..options import ALPHA as DEFAULT_ALPHA
from ..options import ALPHA_BOUNDS, MIN_COUNT_BOUNDS, RANK_RESAMPLE_BOUNDS
from ..options import MIN_COUNT as DEFAULT_MIN_COUNT
from ..options import RANK_RESAMPLES as DEFAULT_RANK_RESAMPLES
from . import additive
from .compare import distinct_columns, percentile_interval, resample_counts, resampled_sums
from .evidence import below_minimum, thin_evidence, thin_rows
from .multiple import (
    benjamini_hochberg,
    bootstrap_p,
    holm,
    resolution_note,
    resolved_resamples,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BLOCKS = ("image", "query")
# Resamples per product: R x (M * K) float64 sums (49 x 12 pieces: 1.2 MB a chunk).
_CHUNK = 256


def check_settings(n_resamples: int, alpha: float, min_count: int, blocks: str = "image",
                   ) -> None:
    """Raise :class:`OVEarthInputError` naming every setting out of its range."""
    problems = []
    lo, hi = RANK_RESAMPLE_BOUNDS
    if type(n_resamples) is not int or not lo <= n_resamples <= hi:
        problems.append(Problem("(options)", "rank resamples", f"a whole number from {lo:,} "
                                f"to {hi:,}", repr(n_resamples)))
    lo_a, hi_a = ALPHA_BOUNDS
    if not isinstance(alpha, float | int) or not lo_a <= alpha <= hi_a:
        problems.append(Problem("(options)", "alpha", f"a number from {lo_a:g} to {hi_a:g}",
                                repr(alpha)))
    lo, hi = MIN_COUNT_BOUNDS
    if type(min_count) is not int or not lo <= min_count <= hi:
        problems.append(Problem("(options)", "minimum count", f"a whole number from {lo} to "
                                f"{hi:,}", repr(min_count)))
    if blocks not in BLOCKS:
        problems.append(Problem("(options)", "Friedman blocks", " or ".join(BLOCKS),
                                repr(blocks)))
    if problems:
        raise OVEarthInputError(problems)


# --- per-unit pieces and their resamples ----------------------------------------------------

def unit_pieces(pieces: FloatArray, groups: IntArray) -> FloatArray:
    """``(M, U, K)`` per-unit sums of per-query ``pieces`` ``(M, N, K)`` (``groups``: each
    query's unit, ``0..U-1``)."""
    n_units = int(groups.max()) + 1 if groups.size else 0
    out = np.zeros((pieces.shape[0], n_units, pieces.shape[2]))
    np.add.at(out, (slice(None), groups), pieces)
    return out


def resampled_values(units: FloatArray, spec: additive.AdditiveMetric, n_resamples: int,
                     seed: int) -> FloatArray:
    """``(R, M)``: the metric of every submission in each of ``n_resamples`` resamples of the
    ``U`` units of ``units`` ``(M, U, K)`` (``numpy.random.default_rng(seed)``, chunks of
    :data:`_CHUNK` resamples drawn in turn: the first resamples of more are these).
    Submissions with equal pieces get equal values in every resample
    (:func:`.compare.distinct_columns`)."""
    m, u, k = units.shape
    columns = distinct_columns(units.transpose(1, 0, 2).reshape(u, m * k))
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, m))
    for start in range(0, n_resamples, _CHUNK):
        stop = min(start + _CHUNK, n_resamples)
        counts = resample_counts(rng, stop - start, u)
        out[start:stop] = spec.value(resampled_sums(counts, columns).reshape(stop - start,
                                                                             m, k))
    return out


def average_ranks(values: FloatArray) -> FloatArray:
    """Ranks ``1..n`` along the last axis, ties sharing their mean rank (what
    ``scipy.stats.rankdata`` calls ``"average"``; here without importing scipy.stats, which
    took 0.5-1 s of every leaderboard command). No NaN (rank ``-inf`` for an undefined value).

    >>> average_ranks(np.array([0.5, 0.1, 0.5, 0.9])).tolist()
    [2.5, 1.0, 2.5, 4.0]
    """
    n = values.shape[-1]
    order = np.argsort(values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-1)
    starts = np.ones(values.shape, dtype=bool)  # the first of each run of equal values
    starts[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    ends = np.ones(values.shape, dtype=bool)  # the last of each run
    ends[..., :-1] = starts[..., 1:]
    position = np.broadcast_to(np.arange(n), values.shape)
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, position, n - 1), -1),
                                         axis=-1), -1)
    out = np.empty(values.shape, dtype=np.float64)
    np.put_along_axis(out, order, (first + last) / 2 + 1, axis=-1)
    return out


def first_shares(values: FloatArray) -> FloatArray:
    """Per column of ``values`` ``(R, M)``, the share of rows in which it is first: defined
    and equal to the row's best (ties for first count for each of them; a row where no
    value is defined has no first).

    >>> first_shares(np.array([[0.5, 0.5, 0.1], [0.2, 0.9, np.nan]])).tolist()
    [0.5, 1.0, 0.0]
    """
    defined = np.isfinite(values)
    best = np.max(np.where(defined, values, -np.inf), axis=1, keepdims=True)
    return (defined & (values == best)).mean(axis=0)


def ranks_of(values: FloatArray) -> FloatArray:
    """Ranks along the last axis, 1 = the highest value, ties their mean rank, an undefined
    (``nan``) value last."""
    return average_ranks(-np.where(np.isnan(values), -np.inf, values))


def rank_interval(ranks: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Per column of ``ranks`` ``(R, M)``, the ``alpha / 2`` quantile (numpy ``lower``) and
    the ``1 - alpha / 2`` quantile (``higher``)."""
    return (np.quantile(ranks, alpha / 2, axis=0, method="lower"),
            np.quantile(ranks, 1 - alpha / 2, axis=0, method="higher"))


def maximal_runs(n: int, holds: Callable[[int, int], bool]) -> list[tuple[int, int]]:
    """The maximal runs ``(first, last)`` of ``n`` ordered items for which ``holds(first,
    last)`` (a property that holds for every sub-run of a run that has it), none inside
    another, in order."""
    runs: list[tuple[int, int]] = []
    end = -1
    for i in range(n):
        j = max(i, end)
        while j + 1 < n and holds(i, j + 1):
            j += 1
        if j > end:
            runs.append((i, j))
            end = j
    return runs


def overlap_runs(low: Sequence[float], high: Sequence[float]) -> list[tuple[int, int]]:
    """The maximal runs ``(first, last)`` of consecutive items whose intervals
    ``[low, high]`` share a point (items in their shown order).

    >>> overlap_runs([1, 1, 3, 4], [2, 3, 4, 4])
    [(0, 1), (1, 2), (2, 3)]
    """
    return maximal_runs(len(low), lambda i, j: max(low[i:j + 1]) <= min(high[i:j + 1]))


def group_letters(runs: Sequence[tuple[int, int]], n: int) -> list[str]:
    """Per item, the letters of the runs it is in (``a``, ``b``, ... ``z``, ``aa``...)."""
    out = [""] * n
    for g, (first, last) in enumerate(runs):
        letter = _letter(g)
        for i in range(first, last + 1):
            out[i] += letter
    return out


def _letter(g: int) -> str:
    name = ""
    g += 1
    while g:
        g, r = divmod(g - 1, 26)
        name = chr(ord("a") + r) + name
    return name


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _interval(dist: FloatArray, alpha: float) -> tuple[float | None, float | None]:
    """The ``1 - alpha`` percentile interval of the finite values (``None``: none)."""
    low, high, _ = percentile_interval(dist, 1 - alpha)
    return low, high


# --- the analysis ---------------------------------------------------------------------------

def rank_uncertainty(names: Sequence[str], pieces: FloatArray, spec: additive.AdditiveMetric,
                     groups: IntArray, *, n_resamples: int = DEFAULT_RANK_RESAMPLES,
                     seed: int = 0, alpha: float = DEFAULT_ALPHA, unit: str = "image",
                     min_count: int = DEFAULT_MIN_COUNT) -> dict[str, Any]:
    """Ranks, rank intervals, groups and each submission against the leader, from per-query
    ``pieces`` ``(M, N, K)`` of ``spec`` (rows: ``names``) and each query's unit ``groups``.

    Returns JSON-ready lists in the observed order (best first): ``models``, ``value``,
    ``rank``, ``rank_low``, ``rank_high``, ``first_share`` (share of resamples ranking it
    first, ties for first included), ``groups`` (letters), ``diff`` / ``diff_low`` /
    ``diff_high`` (leader - model and its percentile interval), ``p`` and ``p_holm``
    (``None`` for the leader itself), ``best_of_n`` (:func:`best_of_n`) and
    ``disagreement`` (:func:`disagreement`). ``n_resamples`` is what was drawn:
    ``n_resamples_asked`` or more, so that Holm's correction over the M - 1 tests can pass
    at ``alpha`` (:func:`.multiple.resolved_resamples`; ``resolution_note`` says so).
    ``warning``: :func:`.evidence.thin_evidence` of the units. Below ``min_count`` units,
    ``skipped`` says why (:func:`.evidence.below_minimum`) and every resampled number is
    ``None`` (no interval, test or group).
    """
    units = unit_pieces(pieces, groups)
    return ranks_from_values(
        spec.name, names, spec.value(pieces.sum(axis=1)),
        lambda drawn: resampled_values(units, spec, drawn, seed), int(units.shape[1]),
        n_resamples=n_resamples, seed=seed, alpha=alpha, unit=unit, min_count=min_count)


def ranks_from_values(metric: str, names: Sequence[str], observed: FloatArray,
                      sample: Callable[[int], FloatArray], n_units: int, *,
                      n_resamples: int = DEFAULT_RANK_RESAMPLES, seed: int = 0,
                      alpha: float = DEFAULT_ALPHA, unit: str = "image",
                      min_count: int = DEFAULT_MIN_COUNT) -> dict[str, Any]:
    """:func:`rank_uncertainty`'s report of ``metric`` from each submission's ``observed``
    value ``(M,)`` (``nan``: undefined) and ``sample(R)``, its values ``(R, M)`` in ``R``
    resamples of the ``n_units`` units (drawn with ``seed``): the one rule of every ranked
    metric, additive (:func:`rank_uncertainty`) or not (:func:`ap_rank_uncertainty`)."""
    order = np.argsort(ranks_of(observed), kind="stable")
    observed = observed[order]
    m = len(order)
    out: dict[str, Any] = {
        "metric": metric, "unit": unit, "num_units": n_units, "n_resamples_asked":
        n_resamples, "seed": seed, "alpha": alpha, "min_count": min_count,
        "models": [names[i] for i in order], "value": [_finite(v) for v in observed],
        "rank": ranks_of(observed).tolist(),
        "diff": [None] + [_finite(observed[0] - v) for v in observed[1:]],
        "warning": thin_evidence(n_units, unit)}
    skipped = below_minimum(n_units, unit, min_count)
    if skipped is not None:
        none = [None] * m
        return {**out, "n_resamples": 0, "resolution_note": None, "skipped": skipped,
                "rank_low": none, "rank_high": none, "first_share": none,
                "groups": [""] * m, "runs": [], "diff_low": none, "diff_high": none,
                "p": none, "p_holm": none,
                "best_of_n": {"num_models": m, "best": _finite(np.nanmax(observed))
                              if np.isfinite(observed).any() else None, "optimism": None},
                "disagreement": {"groups_only": [], "tests_only": [], "note": None}}
    drawn = resolved_resamples(n_resamples, m - 1, alpha)
    sampled = sample(drawn)[:, order]
    ranks = ranks_of(sampled)
    low, high = rank_interval(ranks, alpha)
    runs = overlap_runs(low.tolist(), high.tolist())
    diffs = sampled[:, :1] - sampled  # leader - model, (R, M)
    p = [None] + [bootstrap_p(diffs[:, i]) for i in range(1, m)]
    intervals = [(None, None)] + [_interval(diffs[:, i], alpha) for i in range(1, m)]
    p_holm = holm(p, alpha)
    return {
        **out, "n_resamples": drawn,
        "resolution_note": resolution_note(n_resamples, drawn, m - 1, alpha,
                                           "Holm's correction"),
        "rank_low": low.tolist(), "rank_high": high.tolist(),
        "first_share": first_shares(sampled).tolist(),
        "groups": group_letters(runs, m),
        "runs": [list(r) for r in runs],
        "diff_low": [lo for lo, _ in intervals], "diff_high": [hi for _, hi in intervals],
        "p": p, "p_holm": p_holm,
        "best_of_n": best_of_n(observed, sampled),
        "disagreement": disagreement(out["models"], runs, p_holm, alpha),
    }


# --- average precision: no additive pieces, recomputed in each resample ---------------------

# Why an AP metric has no Friedman test (and no per-category tests): the one wording.
AP_NO_BLOCKS = ("AP ranks boxes across queries: it has no value per image or query, so "
                "there is no Friedman test or per-category test of it; its rank intervals "
                "recompute AP in each resample")


def resampled_ap(curves: Sequence[Any], key: str, query_units: Sequence[IntArray],
                 n_units: int, n_resamples: int, seed: int) -> FloatArray:
    """``(R, M)``: AP ``key`` (:func:`.ap_bootstrap.ap_values`) of every submission in each
    of ``n_resamples`` resamples of ``n_units`` units, drawn as :func:`resampled_values`
    draws them (``numpy.random.default_rng(seed)``, chunks of :data:`_CHUNK`: the same
    resamples as an additive metric's over the same units). ``curves[m]``: submission
    ``m``'s :class:`~.ap_bootstrap.APCurves` of the key's modality; ``query_units[m]``: the
    unit of each of its ``query_ids``. A resample's AP weights each query by its unit's
    multiplicity (the curves matched once); ``nan`` where undefined (no GT drawn)."""
    from .ap_bootstrap import ap_values

    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, len(curves)))
    for start in range(0, n_resamples, _CHUNK):
        stop = min(start + _CHUNK, n_resamples)
        counts = resample_counts(rng, stop - start, n_units)
        for m, (c, units) in enumerate(zip(curves, query_units, strict=True)):
            out[start:stop, m] = ap_values(c, counts[:, units], (key,))[key]
    return out


def ap_rank_uncertainty(names: Sequence[str], observed: FloatArray, curves: Sequence[Any],
                        key: str, query_units: Sequence[IntArray], n_units: int, *,
                        metric: str, n_resamples: int = DEFAULT_RANK_RESAMPLES,
                        seed: int = 0, alpha: float = DEFAULT_ALPHA, unit: str = "image",
                        min_count: int = DEFAULT_MIN_COUNT,
                        blocks: str = "image") -> dict[str, Any]:
    """:func:`ranks_from_values` of an AP ``metric`` (its ``key`` of
    :data:`~ovearth_core.labels.AP_METRICS`; ``observed``: each submission's reported value)
    with :func:`resampled_ap`: the rank intervals, groups and tests against the leader of
    the additive metrics, under the same thin-evidence rule, minimum count and resample
    count. ``friedman`` is skipped (:data:`AP_NO_BLOCKS`); no ``categories``."""
    check_settings(n_resamples, alpha, min_count, blocks)
    out = ranks_from_values(
        metric, names, observed,
        lambda drawn: resampled_ap(curves, key, query_units, n_units, drawn, seed), n_units,
        n_resamples=n_resamples, seed=seed, alpha=alpha, unit=unit, min_count=min_count)
    out["friedman"] = {"skipped": AP_NO_BLOCKS, "blocks": blocks, "num_blocks": None,
                       "num_units": n_units}
    return out


def disagreement(models: Sequence[str], runs: Sequence[tuple[int, int]],
                 p_holm: Sequence[float | None], alpha: float) -> dict[str, Any]:
    """Where the groups and Holm's tests against the leader (``models[0]``) disagree, and
    why: ``groups_only`` (no letter in common with the leader, yet Holm's p above
    ``alpha``), ``tests_only`` (Holm's p at most ``alpha``, yet a letter in common) and
    ``note`` (``None`` when they agree). The leader's letters are those of the first run
    (the only runs that hold it start at it)."""
    apart = runs[0][1] if runs else 0
    groups_only = [models[i] for i in range(1, len(models))
                   if i > apart and not (p_holm[i] is not None and p_holm[i] <= alpha)]
    tests_only = [models[i] for i in range(1, len(models))
                  if i <= apart and p_holm[i] is not None and p_holm[i] <= alpha]
    level = round(100 * (1 - alpha))
    notes = []
    if groups_only:
        notes.append(f"{_names(groups_only)} no group with the leader, yet Holm's test does "
                     f"not tell {'it' if len(groups_only) == 1 else 'them'} apart: a group "
                     f"compares {level} % rank intervals one at a time, uncorrected for the "
                     f"{len(models) - 1} comparisons, while Holm's correction keeps the "
                     f"chance of any false claim among them below α = {alpha:g}.")
    if tests_only:
        notes.append(f"{_names(tests_only)} a group with the leader, yet Holm's test tells "
                     f"{'it' if len(tests_only) == 1 else 'them'} apart: the test reads the "
                     "paired difference in each resample, while a rank interval also moves "
                     "with every other submission's draws.")
    return {"groups_only": groups_only, "tests_only": tests_only,
            "note": " ".join(notes) or None}


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"{shown} {'shares' if len(names) == 1 else 'share'}"


def best_of_n(observed: FloatArray, sampled: FloatArray) -> dict[str, Any]:
    """The best observed score of N, and the bootstrap estimate of its optimism: the mean
    over the resamples of their best score, minus the observed best (``None`` when
    undefined)."""
    best = np.nanmax(observed) if np.isfinite(observed).any() else np.nan
    finite = np.isfinite(sampled).any(axis=1)
    top = np.nanmax(np.where(np.isfinite(sampled[finite]), sampled[finite], -np.inf), axis=1)
    bias = float(top.mean() - best) if top.size and np.isfinite(best) else None
    return {"num_models": int(observed.size), "best": _finite(best), "optimism": bias}


def category_tests(categories: Sequence[str], query_category: IntArray, pieces: FloatArray,
                   spec: additive.AdditiveMetric, groups: IntArray, pair: tuple[int, int],
                   *, n_resamples: int = DEFAULT_RANK_RESAMPLES, seed: int = 0,
                   alpha: float = DEFAULT_ALPHA, min_count: int = DEFAULT_MIN_COUNT,
                   ) -> list[dict[str, Any]]:
    """Per category, submission ``pair[0]`` - submission ``pair[1]`` with a paired bootstrap
    over the category's units (its queries' units, each drawn with all of the category's
    queries it holds), a p-value (:func:`bootstrap_p`) and a Benjamini-Hochberg q-value over
    the categories tested: those whose queries span at least ``min_count`` units (a
    bootstrap over one or two images says nothing: its interval is a point and its p
    minimal). Each tested category draws :func:`.multiple.resolved_resamples` of
    ``n_resamples`` for that many tests (``n_resamples`` of each row: what it drew).
    ``pieces``: ``(M, N, K)``; ``query_category``: each query's index in ``categories``;
    ``groups``: each query's unit. Categories drawn in order from one
    ``numpy.random.default_rng(seed)`` stream."""
    a, b = pair
    two = pieces[[a, b]]
    rng = np.random.default_rng(seed)
    rows = []
    for c, name in enumerate(categories):
        idx = np.flatnonzero(query_category == c)
        _, local = np.unique(groups[idx], return_inverse=True)
        n_units = int(local.max()) + 1 if local.size else 0
        va, vb = (_finite(v) for v in spec.value(two[:, idx].sum(axis=1)))
        rows.append({"category": name, "num_queries": int(idx.size), "num_units": n_units,
                     "a": va, "b": vb, "diff": None if va is None or vb is None else va - vb,
                     "diff_low": None, "diff_high": None, "p": None, "n_resamples": 0,
                     "local": local.astype(np.intp), "idx": idx})
    tested = [r for r in rows if r["num_units"] >= min_count and r["diff"] is not None]
    drawn = resolved_resamples(n_resamples, len(tested), alpha)
    for row in tested:
        units = unit_pieces(two[:, row["idx"]], row["local"])
        u = units.shape[1]
        counts = resample_counts(rng, drawn, u)
        sums = resampled_sums(counts, distinct_columns(units.transpose(1, 0, 2).reshape(u, -1)))
        values = spec.value(sums.reshape(drawn, 2, -1))
        dist = values[:, 0] - values[:, 1]
        row["diff_low"], row["diff_high"] = _interval(dist, alpha)
        row["p"] = bootstrap_p(dist)
        row["n_resamples"] = drawn
    for row, q in zip(rows, benjamini_hochberg([r["p"] for r in rows], alpha), strict=True):
        row["q"] = q
        del row["local"], row["idx"]
    return rows


def block_scores(pieces: FloatArray, spec: additive.AdditiveMetric, groups: IntArray,
                 ) -> tuple[FloatArray, int]:
    """``(B, M)``: each submission's metric on each unit (block) where every submission's
    metric is defined, and how many units there are in all."""
    units = unit_pieces(pieces, groups)
    values = spec.value(units).T  # (U, M)
    keep = np.isfinite(values).all(axis=1)
    return values[keep], int(units.shape[1])


def friedman_nemenyi(names: Sequence[str], scores: FloatArray, alpha: float = DEFAULT_ALPHA,
                     min_count: int = 2, blocks: str = "image") -> dict[str, Any]:
    """Friedman's test and Nemenyi's critical difference over ``scores`` ``(B, M)`` (blocks x
    submissions, higher is better): ``statistic`` and ``p`` (scipy's
    ``friedmanchisquare``), ``models`` in mean-rank order and their ``mean_rank`` (1 = best),
    ``cd``, ``nemenyi_p`` (scikit-posthocs' pairwise p-values, in that order) and
    ``cliques`` (index runs). ``skipped`` says why when there are fewer than 3 submissions,
    2 blocks or ``min_count`` blocks (``blocks``: ``image`` or ``query``,
    :func:`.evidence.below_minimum`); ``warning``: :func:`.evidence.thin_evidence`."""
    n_blocks, k = scores.shape
    if k < 3 or n_blocks < 2:
        return {"skipped": f"Friedman's test needs at least 3 submissions and 2 blocks "
                           f"(here {k} and {n_blocks})", "num_blocks": n_blocks}
    if (few := below_minimum(n_blocks, blocks, min_count)) is not None:
        return {"skipped": few.removesuffix("."), "num_blocks": n_blocks}
    from scikit_posthocs import posthoc_nemenyi_friedman  # ~1 s: on first use
    from scipy.stats import friedmanchisquare, studentized_range

    with np.errstate(divide="ignore", invalid="ignore"):
        statistic, p = friedmanchisquare(*scores.T)
    if not np.isfinite(statistic):
        return {"skipped": "Friedman's test is undefined when every block ties every "
                           "submission", "num_blocks": n_blocks}
    mean_rank = ranks_of(scores).mean(axis=0)
    order = np.argsort(mean_rank, kind="stable")
    pairwise = posthoc_nemenyi_friedman(scores).to_numpy()[np.ix_(order, order)]
    q_alpha = float(studentized_range.ppf(1 - alpha, k, np.inf)) / np.sqrt(2.0)
    cd = q_alpha * np.sqrt(k * (k + 1) / (6.0 * n_blocks))
    # in mean-rank order the run's first and last are its farthest pair (its least p)
    cliques = [(i, j) for i, j in maximal_runs(k, lambda i, j: pairwise[i, j] > alpha)
               if j > i]
    return {"statistic": _finite(statistic), "p": _finite(p), "num_blocks": n_blocks,
            "models": [names[i] for i in order], "mean_rank": mean_rank[order].tolist(),
            "cd": float(cd), "alpha": alpha, "nemenyi_p": pairwise.tolist(),
            "cliques": [list(c) for c in cliques], "warning": thin_evidence(n_blocks, blocks)}


def aligned_pieces(entries: Sequence[Any], name: str) -> tuple[FloatArray, list[str],
                                                                    list[str]]:
    """``(pieces (M, N, K), query ids, image of each query)`` of metric ``name`` from the
    :class:`~ovearth_core.analysis.standings.QueryPieces` of each submission, rows looked up
    by query id in the first one's order; raises :class:`OVEarthInputError` when the
    submissions were not evaluated on the same queries."""
    first = entries[0]
    ids = list(first.query_ids)
    out = np.zeros((len(entries), len(ids), additive.METRICS[name].size))
    for m, entry in enumerate(entries):
        if list(entry.query_ids) == ids:
            out[m] = entry.pieces[name]
            continue
        row = {q: i for i, q in enumerate(entry.query_ids)}
        if set(row) != set(ids):
            raise OVEarthInputError([Problem("(leaderboard)", "per_sample.sample_id",
                                             f"the same {len(ids)} queries in every "
                                             "submission's result",
                                             f"{len(row)} queries in submission {m + 1}")])
        out[m] = entry.pieces[name][[row[q] for q in ids]]
    return out, ids, list(first.query_images())


def metric_ranks(names: Sequence[str], entries: Sequence[Any], metric: str, *,
                 n_resamples: int = DEFAULT_RANK_RESAMPLES, seed: int = 0,
                 alpha: float = DEFAULT_ALPHA, min_count: int = DEFAULT_MIN_COUNT,
                 unit: str = "image", blocks: str = "image") -> dict[str, Any]:
    """Everything of this module for one ranked ``metric`` of the submissions ``names``
    (their :class:`~ovearth_core.analysis.standings.QueryPieces`, ``entries``): the
    :func:`rank_uncertainty` resampling ``unit`` (``image`` or ``query``), ``friedman``
    (:func:`friedman_nemenyi` over ``blocks``) and ``categories`` (:func:`category_tests`
    of the leader and the runner-up)."""
    check_settings(n_resamples, alpha, min_count, blocks)
    spec = additive.METRICS[metric]
    pieces, ids, images = aligned_pieces(entries, metric)
    image_of: dict[str, int] = {}
    by_image = np.array([image_of.setdefault(p, len(image_of)) for p in images], dtype=np.intp)
    by_query = np.arange(len(ids), dtype=np.intp)
    groups = by_image if unit == "image" else by_query
    out = rank_uncertainty(names, pieces, spec, groups, n_resamples=n_resamples, seed=seed,
                           alpha=alpha, unit=unit, min_count=min_count)
    scores, n_units = block_scores(pieces, spec, by_image if blocks == "image" else by_query)
    out["friedman"] = {**friedman_nemenyi(names, scores, alpha, min_count, blocks),
                       "blocks": blocks, "num_units": n_units}
    first = entries[0]
    if len(names) >= 2:
        index = {n: i for i, n in enumerate(names)}
        pair = (index[out["models"][0]], index[out["models"][1]])
        rows = category_tests(list(first.categories), first.category, pieces, spec, groups,
                              pair, n_resamples=n_resamples, seed=seed, alpha=alpha,
                              min_count=min_count)
        tested = [r for r in rows if r["p"] is not None]
        drawn = tested[0]["n_resamples"] if tested else n_resamples
        out["categories"] = {
            "a": out["models"][0], "b": out["models"][1], "min_count": min_count,
            "unit": unit, "rows": rows, "n_resamples": drawn,
            "resolution_note": resolution_note(n_resamples, drawn, len(tested), alpha,
                                               "Benjamini-Hochberg's correction")
            if tested else None,
            "warning": thin_rows([(r["category"], r["num_units"]) for r in tested], unit,
                                 "categories tested")}
    return out



def rank_notes(ranks: dict[str, Any]) -> list[str]:
    """What every surface says with one metric's ranks (:func:`metric_ranks`), in order: why
    there is no test (``skipped``) or the thin-evidence warning, then the resamples drawn
    beyond those asked (``resolution_note``), then where the groups and Holm disagree and
    why (``disagreement``). The leaderboard page, the report and the command's JSON hold
    the same texts."""
    out = [ranks.get("skipped") or ranks.get("warning"), ranks.get("resolution_note"),
           (ranks.get("disagreement") or {}).get("note")]
    return [text for text in out if text]
