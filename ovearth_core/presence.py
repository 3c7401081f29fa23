"""Presence (is the queried concept in the image?) metrics from a 2x2 table.

Formulas from the spec's "Presence Metrics" table; a metric whose denominator
is zero is ``None`` (JSON null).
"""

from __future__ import annotations

import math
from typing import Any


def ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def presence_metrics(tp: int, fp: int, tn: int, fn: int) -> dict[str, Any]:
    """TP/FP/TN/FN counts to precision, recall, F1, accuracy, FPR and MCC."""
    precision = ratio(tp, tp + fp)
    recall = ratio(tp, tp + fn)
    if precision is None or recall is None:
        f1 = None
    elif precision + recall == 0:
        f1 = 0.0  # TP = 0 with predictions and positives: the limit of 2TP / (2TP + FP + FN)
    else:
        f1 = 2 * precision * recall / (precision + recall)
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    mcc = None if den == 0 else (tp * tn - fp * fn) / math.sqrt(den)
    out: dict[str, Any] = {
        "tp": tp, "fp": fp, "tn": tn, "fn": fn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "accuracy": ratio(tp + tn, tp + fp + tn + fn),
        "fpr": ratio(fp, fp + tn),
        "mcc": mcc,
    }
    out["key_metrics"] = {"mcc": mcc}
    return out
