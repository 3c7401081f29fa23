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

from typing import Any

TASK_LABELS = {"open_vocabulary": "Open vocabulary", "referring": "Referring",
               "reasoning": "Reasoning"}
MODALITY_LABELS = {"presence": "Presence", "seg": "Segmentation", "bbox": "HBB",
                   "oriented_bbox": "OBB"}
# Average precision, keys of ``analysis.average_precision.<modality>`` (dotted: the key's
# block): (label, convention, "pooled" | "mean"). Pooled: every query's boxes ranked as one
# class (class-agnostic); mean: each category's AP first, then the mean, as COCO and DOTA
# report mAP. Their labels are METRIC_LABELS entries like any other.
AP_METRICS = {
    "ap_every_point": ("AP", "VOC every point", "pooled"),
    "ap_11_point": ("AP 11-pt", "VOC 2007, 11 points", "pooled"),
    "coco.ap@[0.5:0.95]": ("AP@[.5:.95]", "COCO-style, 101 points", "pooled"),
    "coco.map@[0.5:0.95]": ("mAP@[.5:.95]", "COCO's mAP, 101 points", "mean"),
    "coco.map@0.5": ("mAP@.5", "COCO's mAP at IoU 0.5", "mean"),
    "voc_devkit.map_11_point": ("DOTA mAP (VOC07)", "DOTA_devkit voc_eval, 11 points, IoU > t",
                                "mean"),
    "voc_devkit.map_every_point": ("DOTA mAP (every point)",
                                   "DOTA_devkit voc_eval, every point, IoU > t", "mean"),
    # Published protocols asked for by an option (AP_OPTIONAL): present only when computed.
    "coco.nms_map@[0.5:0.95]": ("NMS-mAP@[.5:.95]", "OVDEval's NMS-AP: COCO's mAP after the "
                                "boxes competing for one object across labels are suppressed",
                                "mean"),
    "coco.nms_map@0.5": ("NMS-mAP@.5", "OVDEval's NMS-AP at IoU 0.5", "mean"),
    "aitod.map@[0.5:0.95]": ("AI-TOD mAP", "AI-TOD's protocol: COCO's mAP at 1,500 boxes",
                             "mean"),
    "aitod.map_verytiny": ("AI-TOD AP_vt", "AI-TOD's mAP of very tiny objects (area <= 8²)",
                           "mean"),
    "aitod.map_tiny": ("AI-TOD AP_t", "AI-TOD's mAP of tiny objects (8² <= area <= 16²)",
                       "mean"),
    "aitod.olrp": ("oLRP", "AI-TOD's optimal LRP at IoU 0.5 (lower is better)", "mean"),
}
# The AP_METRICS keys an option adds (the name of the AP report's flag that says it is on).
AP_OPTIONAL = {key: ("nms_ap" if key.startswith("coco.nms_") else "aitod")
               for key in AP_METRICS if key.startswith(("coco.nms_", "aitod."))}
# Ranked average precision (every box): name -> (box modality, key of AP_METRICS), the names
# the leaderboard ranks by and a hosted bundle's columns may name. Here, beside the keys, so
# that naming a column imports no AP code (the hosted scorer's start-up).
AP_RANKED: dict[str, tuple[str, str]] = {
    f"{m}_{short}": (m, key) for m in ("bbox", "oriented_bbox")
    for short, key in (("ap", "ap_every_point"), ("coco_map", "coco.map@[0.5:0.95]"),
                       ("dota_map", "voc_devkit.map_11_point"),
                       ("nms_map", "coco.nms_map@[0.5:0.95]"),
                       ("aitod_map", "aitod.map@[0.5:0.95]"))}
# AP keys where lower is better (never ranked as a score).
AP_LOWER_IS_BETTER = frozenset({"aitod.olrp"})
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
    # average precision (analysis.average_precision.<modality>)
    **{key: label for key, (label, _, _) in AP_METRICS.items()},
}
PAPER_METRIC_LABELS = {"positive_macro_miou": "ma-IoU", "mcc": "MCC", "positive_micro_f1": "mi-F1"}
NOT_SUBMITTED = "—"


POOLED_SCOPE = "pooled over all queries, class-agnostic"


def ap_keys(report: dict[str, Any] | None) -> list[str]:
    """The :data:`AP_METRICS` keys an average-precision report holds: every key but those
    of an option (:data:`AP_OPTIONAL`) the report was not computed with.

    >>> ap_keys({"nms_ap": True, "aitod": False})[-2:]
    ['coco.nms_map@[0.5:0.95]', 'coco.nms_map@0.5']
    """
    report = report or {}
    return [k for k in AP_METRICS if k not in AP_OPTIONAL or report.get(AP_OPTIONAL[k])]


def ap_scope(key: str, num_categories: int | None) -> str:
    """What an AP key of :data:`AP_METRICS` averages: ``"pooled over all queries,
    class-agnostic"`` (every query's boxes ranked as one class) or ``"mean over N
    categories"`` (each category's AP first, as COCO and DOTA report mAP).

    >>> ap_scope("coco.map@[0.5:0.95]", 15)
    'mean over 15 categories'
    """
    if AP_METRICS[key][2] == "pooled":
        return POOLED_SCOPE
    n = "?" if num_categories is None else f"{num_categories:,}"
    return f"mean over {n} categor{'y' if num_categories == 1 else 'ies'}"


def ap_description(key: str, num_categories: int | None) -> str:
    """``"<label>: <convention>, <scope>"``, e.g. ``"AP: VOC every point, pooled over all
    queries, class-agnostic"``."""
    label, convention, _ = AP_METRICS[key]
    return f"{label}: {convention}, {ap_scope(key, num_categories)}"


def metric_label(modality: str, metric: str) -> str:
    """``"<modality> <metric>"``, e.g. ``"HBB micro F1"`` (unknown keys shown as they are)."""
    return f"{MODALITY_LABELS.get(modality, modality)} {METRIC_LABELS.get(metric, metric)}"
