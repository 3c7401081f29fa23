"""Display names of tasks, modalities and metrics: the one table every layer uses (the app,
the charts, the report), so a number has the same name wherever it is shown.

Keys are the output JSON's: task keys (``open_vocabulary``, ``referring``, ``reasoning``),
summary blocks (``presence``, ``seg``, ``bbox``, ``oriented_bbox``) and summary metric keys.
``PAPER_METRIC_LABELS`` are the benchmark paper's abbreviations (Table 2: ma-IoU, mi-F1),
used where a table reproduces the paper's.

>>> metric_label("seg", "positive_macro_miou")
'Segmentation macro mIoU'
>>> TASK_LABELS["open_vocabulary"]
'Open vocabulary'
"""

from __future__ import annotations

TASK_LABELS = {"open_vocabulary": "Open vocabulary", "referring": "Referring",
               "reasoning": "Reasoning"}
MODALITY_LABELS = {"presence": "Presence", "seg": "Segmentation", "bbox": "HBB",
                   "oriented_bbox": "OBB"}
METRIC_LABELS = {
    "mcc": "MCC",
    "positive_macro_precision": "macro precision", "positive_macro_recall": "macro recall",
    "positive_macro_miou": "macro mIoU", "positive_micro_miou": "micro mIoU",
    "positive_micro_precision": "micro precision", "positive_micro_recall": "micro recall",
    "positive_micro_f1": "micro F1", "positive_mean_micro_f1@[0.5:0.95]": "micro F1@[.5:.95]",
    # per-category entries (``per_category``)
    "accuracy": "accuracy", "miou": "mIoU", "micro_f1": "micro F1", "cum_iou": "cumulative IoU",
    # field metrics (ovearth_core.field_metrics)
    "category_cum_miou": "class-wise IoU", "gres_giou": "GRES gIoU", "gres_ciou": "GRES cIoU",
    "mean_iou": "top-1 mean IoU", "mae": "count MAE", "rmse": "count RMSE",
    "rmse_with_negatives": "count RMSE with negatives",
}
PAPER_METRIC_LABELS = {"positive_macro_miou": "ma-IoU", "mcc": "MCC", "positive_micro_f1": "mi-F1"}
NOT_SUBMITTED = "—"


def metric_label(modality: str, metric: str) -> str:
    """``"<modality> <metric>"``, e.g. ``"HBB micro F1"`` (unknown keys shown as they are)."""
    return f"{MODALITY_LABELS.get(modality, modality)} {METRIC_LABELS.get(metric, metric)}"
