"""A typed view of one evaluation run, and what the evaluation keeps for later stages.

:func:`ovearth_core.evaluate.evaluate_run` returns a :class:`Run`: the spec's output dict
(``results``, unchanged) together with the samples it scored and, per box modality and
query, the :class:`BoxFacts` the failure tags and the explorer need (best IoU of any pair,
each GT box's best IoU, duplicate hits). They are taken from the IoU matrices the
evaluation computes anyway, so nothing downstream computes an IoU matrix again. Only these
few numbers per query are kept, never the matrices (memory stays bounded by the largest
query, not the file). ``run.view`` is ``results`` typed (:class:`~ovearth_core.results.Results`,
read once): what pages read; ``results`` is what the core's readers of the output take.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from .matching import match
from .results import DetEntry, QueryRow, Results, RunConfig, SegEntry
from .types import OVERLAP_EPS, Sample, SampleList

FloatArray = npt.NDArray[np.float64]
BOX_KEYS = ("bbox", "oriented_bbox")


@dataclass(frozen=True)
class BoxFacts:
    """What one query's ``(G, P)`` box IoU matrix says beyond the matching.

    ``best_iou``: the highest IoU of any GT/predicted pair (0 with no pair);
    ``gt_best_iou``: per GT box, its highest IoU with any prediction, ``(G,)``;
    ``duplicated``: some prediction reaches IoU >= the run's threshold with a GT box, yet
    no maximum matching can use it beside the others (more predictions reach a GT box than
    the maximum matching pairs). Packed neighbours, each box also overlapping the next GT
    box, are no duplicates.
    ``stray_overlap``: a GT box the matching left unmatched is overlapped (IoU >=
    ``OVERLAP_EPS``) by a predicted box it left unmatched too (a box matched to a packed
    neighbour does not count): a *mislocalised* GT box.
    ``extra``: a predicted box left unmatched that is neither of those (no IoU >= the
    threshold with any GT box, no overlap with an unmatched GT box): a box too many.
    ``missed``: a GT box left unmatched that no unmatched predicted box overlaps.

    Each flag says that the query has at least one object with that outcome; the failure
    tags (:func:`ovearth_core.analysis.diagnose.det_tag`) take the worst one present.
    """

    best_iou: float
    gt_best_iou: FloatArray
    duplicated: bool
    stray_overlap: bool = False
    extra: bool = False
    missed: bool = False

    @classmethod
    def of(cls, iou: FloatArray, threshold: float,
           matches: Sequence[Sequence[float]] | None = None) -> BoxFacts:
        """Facts of an exact IoU matrix ``(G, P)`` at matching threshold ``threshold``;
        ``matches``: the evaluator's ``[gt, pred, iou]`` pairs of it (computed here with
        :func:`~ovearth_core.matching.match` when not given)."""
        if iou.size == 0:
            return cls(0.0, np.zeros(iou.shape[0]), False, False, extra=iou.shape[1] > 0,
                       missed=iou.shape[0] > 0)
        if matches is None:
            gi, pi = match(iou, threshold)
        else:
            gi = np.array([int(m[0]) for m in matches], dtype=np.intp)
            pi = np.array([int(m[1]) for m in matches], dtype=np.intp)
        free_gt = np.ones(iou.shape[0], dtype=bool)
        free_pred = np.ones(iou.shape[1], dtype=bool)
        free_gt[gi], free_pred[pi] = False, False
        # A maximum matching leaves a box reaching a GT box unmatched only when no maximum
        # matching can use it beside the others.
        hits = (iou[:, free_pred] >= threshold).any(axis=0)
        strays = iou[np.ix_(free_gt, free_pred)] >= OVERLAP_EPS
        return cls(float(iou.max()), iou.max(axis=1), bool(hits.any()), bool(strays.any()),
                   extra=bool((~hits & ~strays.any(axis=0)).any()),
                   missed=bool((~strays.any(axis=1)).any()))

    @classmethod
    def of_many(cls, ious: Sequence[FloatArray], threshold: float,
                matches: Sequence[Sequence[Sequence[float]]]) -> list[BoxFacts]:
        """:meth:`of` of many matrices with their matches, equal to it (tested), in a few
        numpy passes over all their pairs at once (no numpy call per query). The flags
        look at the pairs of IoU >= ``min(threshold, OVERLAP_EPS)`` only (others decide
        nothing: the threshold is positive), usually a few percent of all pairs."""
        n = len(ious)
        n_gt = np.array([m.shape[0] for m in ious], dtype=np.int64)
        n_pred = np.array([m.shape[1] for m in ious], dtype=np.int64)
        sizes = n_gt * n_pred
        filled = np.flatnonzero(sizes)
        # Per query, whether any of its boxes is a box on no target (extra) or a GT box
        # nothing overlaps (missed), from per-box flags: counted by prefix sums, as queries
        # without pairs (every box free) are included.
        gt_first = np.cumsum(n_gt) - n_gt
        pred_first = np.cumsum(n_pred) - n_pred
        free_gt = np.ones(int(n_gt.sum()), dtype=bool)
        free_pred = np.ones(int(n_pred.sum()), dtype=bool)
        taken = np.array([m[:2] for m in chain.from_iterable(matches)],
                         dtype=np.int64).reshape(-1, 2)
        owner = np.repeat(np.arange(n), list(map(len, matches)))
        free_gt[gt_first[owner] + taken[:, 0]] = False
        free_pred[pred_first[owner] + taken[:, 1]] = False
        hit_pred = np.zeros(free_pred.size, dtype=bool)
        stray_pred = np.zeros(free_pred.size, dtype=bool)
        stray_gt = np.zeros(free_gt.size, dtype=bool)
        best: list[float] = []
        rows = np.zeros(0)
        duplicated = np.zeros(filled.size, dtype=bool)
        stray = np.zeros(filled.size, dtype=bool)
        if filled.size:
            flat = np.concatenate([ious[i].ravel() for i in filled.tolist()])
            size = sizes[filled]
            starts = np.cumsum(size) - size
            # Each GT row's first pair (rows are contiguous): the maxima by row and query.
            row_query = np.repeat(np.arange(filled.size), n_gt[filled])
            row_start = starts[row_query] + (np.arange(row_query.size) - (
                np.cumsum(n_gt[filled]) - n_gt[filled])[row_query]) * n_pred[filled][row_query]
            best = np.maximum.reduceat(flat, starts).tolist()
            rows = np.maximum.reduceat(flat, row_start)
            # The pairs that can set a flag: each one's query (among the filled ones), GT
            # box and predicted box.
            at = np.flatnonzero(flat >= min(threshold, OVERLAP_EPS))
            value = flat[at]
            query = np.searchsorted(starts, at, side="right") - 1
            k = at - starts[query]
            width = n_pred[filled][query]
            gt_at = gt_first[filled][query] + k // width
            pred_at = pred_first[filled][query] + k % width
            hits = value >= threshold
            hit_pred[pred_at[hits]] = True
            stray_pair = free_gt[gt_at] & free_pred[pred_at] & (value >= OVERLAP_EPS)
            stray_pred[pred_at[stray_pair]] = True
            stray_gt[gt_at[stray_pair]] = True
            duplicated[query[free_pred[pred_at] & hits]] = True
            stray[query[stray_pair]] = True
        extra = _any_in(free_pred & ~hit_pred & ~stray_pred, pred_first, n_pred)
        missed = _any_in(free_gt & ~stray_gt, gt_first, n_gt)
        # A query without pairs: its GT boxes' best IoUs are 0 (views of one read-only row);
        # such queries share their (immutable) facts.
        zeros = np.zeros(int(n_gt.max(initial=0)))
        zeros.flags.writeable = False
        empty: dict[tuple[int, bool, bool], BoxFacts] = {}
        place = np.full(n, -1, dtype=np.int64)
        place[filled] = np.arange(filled.size)
        ends = np.cumsum(n_gt[filled]).tolist()
        dup, st = duplicated.tolist(), stray.tolist()
        out = []
        for j, g, e, m in zip(place.tolist(), n_gt.tolist(), extra, missed, strict=True):
            if j >= 0:
                out.append(cls(best[j], rows[ends[j] - g:ends[j]], dup[j], st[j], e, m))
            elif (g, e, m) in empty:
                out.append(empty[g, e, m])
            else:
                out.append(empty.setdefault((g, e, m), cls(0.0, zeros[:g], False, False, e, m)))
        return out


def _any_in(flags: npt.NDArray[np.bool_], first: npt.NDArray[np.int64],
            counts: npt.NDArray[np.int64]) -> list[bool]:
    """For each segment ``[first, first + count)`` of ``flags``, whether any is set."""
    total = np.concatenate([[0], np.cumsum(flags, dtype=np.int64)])
    return (total[first + counts] > total[first]).tolist()


@dataclass(frozen=True)
class Run:
    """One evaluated task: results JSON, its samples (same order) and kept box facts."""

    results: dict[str, Any]
    samples: SampleList
    box_facts: dict[str, list[BoxFacts]]

    @property
    def config(self) -> RunConfig:
        """The options the run was evaluated with (read alone, without the whole
        :attr:`view`)."""
        return RunConfig.of(self.results)

    @cached_property
    def view(self) -> Results:
        """:attr:`results` typed (:meth:`Results.of`, built on first use; raises
        :class:`~ovearth_core.errors.OVEarthInputError` for a dict that is not the
        evaluator's output)."""
        return Results.of(self.results)

    @property
    def summary(self) -> dict[str, Any]:
        return self.results["summary"]

    @property
    def per_sample(self) -> list[dict[str, Any]]:
        return self.results["per_sample"]

    def facts(self, modality: str, index: int) -> BoxFacts | None:
        """Box facts of query ``index`` (``None`` when the modality was not evaluated)."""
        kept = self.box_facts.get(modality)
        return None if kept is None else kept[index]

    # Keyed views (issue 27): a query's sample and row are looked up by its query_id,
    # each in its own list, never paired by position.

    @cached_property
    def _positions(self) -> dict[str, int]:
        return _unique({s.sample_id: i for i, s in enumerate(self.samples)}, self.samples,
                       "samples")

    @cached_property
    def _rows(self) -> dict[str, dict[str, Any]]:
        return _unique({r["sample_id"]: r for r in self.per_sample}, self.per_sample,
                       "per_sample rows")

    def has(self, query_id: str) -> bool:
        """The query is in this run (its samples and its rows)."""
        return query_id in self._positions and query_id in self._rows

    def position(self, query_id: str) -> int:
        """Where the query is in :attr:`samples` (and in the box facts)."""
        try:
            return self._positions[query_id]
        except KeyError:
            raise KeyError(self._absent(query_id, "samples")) from None

    def sample(self, query_id: str) -> Sample:
        """The query's loaded sample (GT and predictions); KeyError naming it if absent."""
        return self.samples[self.position(query_id)]

    def row(self, query_id: str) -> dict[str, Any]:
        """The query's ``per_sample`` row of the results; KeyError naming it if absent."""
        try:
            return self._rows[query_id]
        except KeyError:
            raise KeyError(self._absent(query_id, "per_sample rows")) from None

    def entry(self, query_id: str) -> QueryEntry:
        """The query's sample and its typed row together."""
        return QueryEntry(self.sample(query_id), self.view.row(query_id))

    def _absent(self, query_id: str, where: str) -> str:
        return (f"query_id {query_id!r} is not among the {len(self.samples)} queries' "
                f"{where} of this run (task {self.results.get('task')!r})")


@dataclass(frozen=True)
class QueryEntry:
    """One query of a run: its loaded sample and its typed ``per_sample`` row
    (:class:`~ovearth_core.results.QueryRow`)."""

    sample: Sample
    row: QueryRow

    @property
    def query_id(self) -> str:
        return self.sample.sample_id

    @property
    def negative(self) -> bool:
        return self.row.negative

    @property
    def gt_present(self) -> bool:
        return self.row.gt_present

    @property
    def pred_present(self) -> bool:
        return self.row.pred_present

    @property
    def presence(self) -> str:
        """:func:`~ovearth_core.presence.presence_cell` of the query."""
        return self.row.presence

    def metrics(self, output_key: str) -> SegEntry | DetEntry | None:
        """The row's entry of one modality (``seg``, ``bbox``, ``oriented_bbox``), or
        ``None`` when it was not evaluated."""
        return self.row.block(output_key)


def _unique(by_id: dict[str, Any], items: Sequence[Any], where: str) -> dict[str, Any]:
    """``by_id`` when every query_id of ``items`` is in it once (the loader guarantees it:
    a hand-made run with a repeated id would otherwise pair the wrong row)."""
    if len(by_id) != len(items):
        raise ValueError(f"the run's {where} repeat a query_id ({len(items)} items, "
                         f"{len(by_id)} distinct ids)")
    return by_id


_SCALAR_FACTS = ("best_iou", "duplicated", "stray_overlap", "extra", "missed")  # all but one
_SCALAR_DTYPES = {"best_iou": np.float64, "duplicated": bool, "stray_overlap": bool,
                  "extra": bool, "missed": bool}


def facts_arrays(box_facts: dict[str, list[BoxFacts]]) -> dict[str, np.ndarray]:
    """The box facts as flat arrays (for the result cache): per modality ``m`` and scalar
    field ``f`` (``best_iou``, ``duplicated``, ``stray_overlap``, ``extra``, ``missed``),
    ``m/f`` ``(Q,)``;
    ``m/num_gt`` ``(Q,)`` and every query's ``gt_best_iou`` joined, ``m/gt_best_iou``
    ``(sum num_gt,)``. ValueError when the queries' ``gt_best_iou`` dtypes differ (joining
    would convert them)."""
    out: dict[str, np.ndarray] = {}
    for modality, facts in box_facts.items():
        dtypes = {f.gt_best_iou.dtype for f in facts}
        if len(dtypes) > 1:
            raise ValueError(f"{modality}: gt_best_iou of several dtypes "
                             f"{sorted(map(str, dtypes))}")
        for name in _SCALAR_FACTS:
            out[f"{modality}/{name}"] = np.array([getattr(f, name) for f in facts],
                                                 dtype=_SCALAR_DTYPES[name])
        out[f"{modality}/num_gt"] = np.array([f.gt_best_iou.size for f in facts],
                                             dtype=np.int64)
        out[f"{modality}/gt_best_iou"] = (np.concatenate([f.gt_best_iou for f in facts])
                                          if facts else np.zeros(0))
    return out


def facts_from_arrays(arrays: dict[str, np.ndarray], modalities: list[str]
                      ) -> dict[str, list[BoxFacts]]:
    """:func:`facts_arrays` inverted (Python floats and bools, as :meth:`BoxFacts.of`
    makes them; each ``gt_best_iou`` a view of the joined array)."""
    out: dict[str, list[BoxFacts]] = {}
    for modality in modalities:
        counts = arrays[f"{modality}/num_gt"]
        parts = np.split(arrays[f"{modality}/gt_best_iou"], np.cumsum(counts)[:-1]) if len(
            counts) else []
        scalars = [arrays[f"{modality}/{name}"].tolist() for name in _SCALAR_FACTS]
        out[modality] = [BoxFacts(b, g, d, s, e, m) for b, g, d, s, e, m in zip(
            scalars[0], parts, *scalars[1:], strict=True)]
    return out
