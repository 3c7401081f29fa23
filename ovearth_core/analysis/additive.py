"""Key metrics as functions of additive per-query pieces: one registry for every analysis
that re-sums queries (the paired bootstrap of :mod:`.compare`, the category subsets of
:mod:`.leaderboard`).

Every key metric of an evaluator summary is a ratio of sums over queries. Each is written
here once as ``pieces(row)``, the query's contribution (``size`` numbers; ``None`` when the
query does not count, e.g. not evaluated for that modality), and ``value(sums)``, which maps
summed pieces ``(..., size)`` to the metric ``(...)`` with ``nan`` where it is undefined.
Over all queries, ``value`` of the summed pieces equals the evaluator's summary value
(``tests/analysis/test_additive.py`` pins every entry to the evaluator).

>>> m = METRICS["bbox_micro_f1"]
>>> float(m.value(np.array([3.0, 1.0, 2.0])))  # TP, FP, FN summed: 6 / (6 + 1 + 2)
0.6666666666666666
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class AdditiveMetric:
    """One key metric as additive per-query pieces.

    ``name`` is the registry key (e.g. ``"seg_macro_miou"``); ``modality`` and ``metric``
    locate the same number in the evaluator's ``summary[modality][metric]``.
    """

    name: str
    modality: str
    metric: str
    size: int
    pieces: Callable[[Row], Pieces | None]
    value: Callable[[FloatArray], FloatArray]

    @property
    def summary_path(self) -> tuple[str, str]:
        return self.modality, self.metric

    def matrix(self, rows: Sequence[Row]) -> FloatArray:
        """``(len(rows), size)`` pieces of ``rows`` (zeros where a row does not count)."""
        out = np.zeros((len(rows), self.size))
        for i, row in enumerate(rows):
            p = self.pieces(row)
            if p is not None:
                out[i] = p
        return out


def _entry(row: Row, key: str) -> dict[str, Any] | None:
    e = row.get(key)
    return e if e is not None and e["evaluated"] else None


def _presence(row: Row) -> Pieces:
    cell = presence_cell(row["gt_present"], row["pred_present"])
    return tuple(cell == c for c in ("TP", "FP", "TN", "FN"))


def _seg(*fields: str) -> Callable[[Row], Pieces | None]:
    def pieces(row: Row) -> Pieces | None:
        e = _entry(row, "seg")
        return None if e is None else tuple(1.0 if f == "1" else e[f] for f in fields)
    return pieces


def _box(key: str, *fields: str) -> Callable[[Row], Pieces | None]:
    def pieces(row: Row) -> Pieces | None:
        e = _entry(row, key)
        return None if e is None else tuple(e[f] for f in fields)
    return pieces


def _box_at(key: str) -> Callable[[Row], Pieces | None]:
    def pieces(row: Row) -> Pieces | None:
        e = _entry(row, key)
        return None if e is None else (*e["tp_at"], e["num_pred"], e["num_gt"])
    return pieces


def _quotient(s: FloatArray) -> FloatArray:
    return ratio_array(s[..., 0], s[..., 1])


def _mean_f1(s: FloatArray) -> FloatArray:
    n = len(IOU_THRESHOLDS)
    return ratio_array(2 * s[..., :n], s[..., n:n + 1] + s[..., n + 1:n + 2]).mean(axis=-1)


def _registry() -> dict[str, AdditiveMetric]:
    ms = [AdditiveMetric("presence_mcc", "presence", "mcc", 4, _presence,
                         lambda s: mcc_array(s[..., 0], s[..., 1], s[..., 2], s[..., 3]))]
    for short, field in (("precision", "precision"), ("recall", "recall"), ("miou", "iou")):
        ms.append(AdditiveMetric(f"seg_macro_{short}", "seg", f"positive_macro_{short}", 2,
                                 _seg(field, "1"), _quotient))
    ms.append(AdditiveMetric("seg_micro_miou", "seg", "positive_micro_miou", 2,
                             _seg("intersection", "union"), _quotient))
    for key in BOX_KEYS:
        ms += [
            AdditiveMetric(f"{key}_micro_precision", key, "positive_micro_precision", 2,
                           _box(key, "tp", "num_pred"), _quotient),
            AdditiveMetric(f"{key}_micro_recall", key, "positive_micro_recall", 2,
                           _box(key, "tp", "num_gt"), _quotient),
            AdditiveMetric(f"{key}_micro_f1", key, "positive_micro_f1", 3,
                           _box(key, "tp", "fp", "fn"),
                           lambda s: f1_array(s[..., 0], s[..., 1], s[..., 2])),
            AdditiveMetric(f"{key}_mean_micro_f1", key, "positive_mean_micro_f1@[0.5:0.95]",
                           len(IOU_THRESHOLDS) + 2, _box_at(key), _mean_f1),
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
