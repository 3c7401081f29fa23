"""Presence (is the queried concept in the image?) metrics from a 2x2 table.

Formulas from the spec's "Presence Metrics" table; a metric whose denominator
is zero is ``None`` (JSON null).
"""

from __future__ import annotations

from typing import Any

from .formulas import f1_from_pr, mcc, ratio


def presence_metrics(tp: int, fp: int, tn: int, fn: int) -> dict[str, Any]:
    """TP/FP/TN/FN counts to precision, recall, F1, accuracy, FPR and MCC."""
    precision = ratio(tp, tp + fp)
    recall = ratio(tp, tp + fn)
    value = mcc(tp, fp, tn, fn)
    out: dict[str, Any] = {
        "tp": tp, "fp": fp, "tn": tn, "fn": fn,
        "precision": precision,
        "recall": recall,
        "f1": f1_from_pr(precision, recall),
        "accuracy": ratio(tp + tn, tp + fp + tn + fn),
        "fpr": ratio(fp, fp + tn),
        "mcc": value,
    }
    out["key_metrics"] = {"mcc": value}
    return out


def presence_cell(gt_present: bool, pred_present: bool) -> str:
    """The presence confusion cell of a query: ``TP`` (target there, predicted), ``FN``
    (there, nothing predicted), ``FP`` (absent, something predicted), ``TN``."""
    if gt_present:
        return "TP" if pred_present else "FN"
    return "FP" if pred_present else "TN"
