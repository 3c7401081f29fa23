"""Key metrics as functions of additive per-query pieces: one registry for every analysis
that re-sums queries (the paired bootstrap of :mod:`.compare`, the category subsets of
:mod:`.leaderboard`).

Every key metric of an evaluator summary is a ratio of sums over queries. Each is written
here once as the fields of a ``per_sample`` row that make a query's contribution, its
*pieces* (``size`` numbers; none when the query does not count, e.g. not evaluated for that
modality), and ``value(sums)``, which maps summed pieces ``(..., size)`` to the metric
``(...)`` with ``nan`` where it is undefined. ``matrix(rows)`` reads the pieces of many rows
in one pass per field (``pieces(row)``: one row's).
Over all queries, ``value`` of the summed pieces equals the evaluator's summary value
(``tests/analysis/test_additive.py`` pins every entry to the evaluator).

>>> m = METRICS["bbox_micro_f1"]
>>> float(m.value(np.array([3.0, 1.0, 2.0])))  # TP, FP, FN summed: 6 / (6 + 1 + 2)
0.6666666666666666
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..formulas import f1_array, mcc_array, ratio_array
from ..presence import presence_cell
from ..types import IOU_THRESHOLDS

FloatArray = npt.NDArray[np.float64]
Row = dict[str, Any]
Pieces = tuple[float, ...]
BOX_KEYS = ("bbox", "oriented_bbox")


# A piece that is 1 for every query that counts (the macro mean's denominator).
ONE = "1"
# Fields of a row's block that hold one number per IoU threshold (spread over that many pieces).
PER_THRESHOLD = frozenset({"tp_at"})
# The presence cells, in the order of the presence pieces.
CELLS = ("TP", "FP", "TN", "FN")


@dataclass(frozen=True)
class AdditiveMetric:
    """One key metric as additive per-query pieces.

    ``name`` is the registry key (e.g. ``"seg_macro_miou"``); ``modality`` and ``metric``
    locate the same number in the evaluator's ``summary[modality][metric]``.
    ``block``: the ``per_sample`` row's key whose entry holds the pieces (``"seg"``,
    ``"bbox"``, ``"oriented_bbox"``; a query counts when that entry is there and
    ``evaluated``), or ``None`` for the presence cells; ``fields``: the entry's fields, in
    order (:data:`ONE`: 1 for each query that counts; a :data:`PER_THRESHOLD` field: one
    piece per IoU threshold), or for presence the :data:`CELLS` (1 where the query's cell
    is that one).
    """

    name: str
    modality: str
    metric: str
    block: str | None
    fields: tuple[str, ...]
    value: Callable[[FloatArray], FloatArray]

    @property
    def summary_path(self) -> tuple[str, str]:
        return self.modality, self.metric

    @property
    def size(self) -> int:
        """The number of pieces of a query."""
        return sum(len(IOU_THRESHOLDS) if f in PER_THRESHOLD else 1 for f in self.fields)

    def pieces(self, row: Row) -> Pieces | None:
        """One query's pieces (``None`` when it does not count)."""
        if self.block is None:
            cell = presence_cell(row["gt_present"], row["pred_present"])
            return tuple(float(cell == c) for c in self.fields)
        e = _entry(row, self.block)
        if e is None:
            return None
        out: list[float] = []
        for f in self.fields:
            if f in PER_THRESHOLD:
                out += e[f]
            else:
                out.append(1.0 if f == ONE else e[f])
        return tuple(out)

    def matrix(self, rows: Sequence[Row]) -> FloatArray:
        """``(len(rows), size)`` pieces of ``rows`` (zeros where a row does not count), equal
        to :meth:`pieces` row by row (tested), one pass over the rows per field."""
        if self.block is None:
            # The pieces of each (gt_present, pred_present) combination, at 2 * gt + pred.
            table = np.array([[presence_cell(g, p) == c for c in self.fields]
                              for g in (False, True) for p in (False, True)], dtype=np.float64)
            gt, pred = (np.array(list(map(itemgetter(k), rows)), dtype=bool).reshape(-1)
                        for k in ("gt_present", "pred_present"))
            return table[2 * gt.astype(np.intp) + pred]
        out = np.zeros((len(rows), self.size))
        block = self.block
        entries = list(map(dict.get, rows, repeat(block)))
        counted = [i for i, e in enumerate(entries) if e is not None and e["evaluated"]]
        if counted:
            found = [entries[i] for i in counted]
            out[counted] = np.hstack([_column(found, f) for f in self.fields])
        return out


def _column(entries: list[dict[str, Any]], field: str) -> FloatArray:
    """The pieces of ``field`` of each entry, ``(len(entries), width)``."""
    if field == ONE:
        return np.ones((len(entries), 1))
    values = list(map(itemgetter(field), entries))
    if field not in PER_THRESHOLD:
        return np.array(values, dtype=np.float64)[:, None]
    width = len(IOU_THRESHOLDS)
    if set(map(len, values)) != {width}:
        raise ValueError(f"{field}: expected {width} numbers in every entry")
    return np.array(list(chain.from_iterable(values)), dtype=np.float64).reshape(-1, width)


def _entry(row: Row, key: str) -> dict[str, Any] | None:
    e = row.get(key)
    return e if e is not None and e["evaluated"] else None


def _quotient(s: FloatArray) -> FloatArray:
    return ratio_array(s[..., 0], s[..., 1])


def _mean_f1(s: FloatArray) -> FloatArray:
    n = len(IOU_THRESHOLDS)
    return ratio_array(2 * s[..., :n], s[..., n:n + 1] + s[..., n + 1:n + 2]).mean(axis=-1)


def _registry() -> dict[str, AdditiveMetric]:
    ms = [AdditiveMetric("presence_mcc", "presence", "mcc", None, CELLS,
                         lambda s: mcc_array(s[..., 0], s[..., 1], s[..., 2], s[..., 3]))]
    for short, field in (("precision", "precision"), ("recall", "recall"), ("miou", "iou")):
        ms.append(AdditiveMetric(f"seg_macro_{short}", "seg", f"positive_macro_{short}", "seg",
                                 (field, ONE), _quotient))
    ms.append(AdditiveMetric("seg_micro_miou", "seg", "positive_micro_miou", "seg",
                             ("intersection", "union"), _quotient))
    for key in BOX_KEYS:
        ms += [
            AdditiveMetric(f"{key}_micro_precision", key, "positive_micro_precision", key,
                           ("tp", "num_pred"), _quotient),
            AdditiveMetric(f"{key}_micro_recall", key, "positive_micro_recall", key,
                           ("tp", "num_gt"), _quotient),
            AdditiveMetric(f"{key}_micro_f1", key, "positive_micro_f1", key,
                           ("tp", "fp", "fn"),
                           lambda s: f1_array(s[..., 0], s[..., 1], s[..., 2])),
            AdditiveMetric(f"{key}_mean_micro_f1", key, "positive_mean_micro_f1@[0.5:0.95]",
                           key, ("tp_at", "num_pred", "num_gt"), _mean_f1),
        ]
    return {m.name: m for m in ms}


METRICS: dict[str, AdditiveMetric] = _registry()


def metrics_of(result: dict[str, Any], names: Sequence[str] | None = None,
               ) -> list[AdditiveMetric]:
    """Registry entries (all, or ``names`` in that order) whose modality ``result`` has."""
    chosen = [METRICS[n] for n in names] if names is not None else list(METRICS.values())
    return [m for m in chosen if result["summary"].get(m.modality) is not None]


def recompute(result: dict[str, Any]) -> dict[tuple[str, str], float | None]:
    """``(modality, metric) -> value`` of every applicable entry, from the per-query pieces
    summed over all queries (equal to the evaluator's summary; ``None`` where undefined)."""
    out: dict[tuple[str, str], float | None] = {}
    for m in metrics_of(result):
        value = float(m.value(m.matrix(result["per_sample"]).sum(axis=0)))
        out[(m.modality, m.metric)] = value if np.isfinite(value) else None
    return out
