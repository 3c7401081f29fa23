"""Plotly figures of the overview page, checked against hand-made summaries."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from ovearth_core.types import IOU_THRESHOLDS
from ovearth_core.viz import figures

DET = {
    "key_metrics": {"positive_micro_precision": 0.8, "positive_micro_recall": 0.5,
                    "positive_micro_f1": None, "positive_mean_micro_f1@[0.5:0.95]": 0.4},
    "positive_micro_f1_by_iou": {f"{t:.2f}": round(1 - t, 2) for t in IOU_THRESHOLDS},
}
SUMMARY = {
    "seg": {"key_metrics": {"positive_macro_miou": 0.6, "positive_micro_miou": 0.55},
            "Pr@0.5": 0.7, "Pr@0.6": 0.6, "Pr@0.7": None, "Pr@0.8": 0.2, "Pr@0.9": 0.1},
    "bbox": DET,
    "oriented_bbox": None,
}


def test_confusion_matrix_counts_and_row_rates() -> None:
    fig = figures.confusion_matrix({"tp": 30, "fn": 10, "fp": 5, "tn": 0})
    heat = fig.data[0]
    assert isinstance(heat, go.Heatmap)
    assert [list(r) for r in heat.z] == [[0.75, 0.25], [1.0, 0.0]]
    assert heat.text[0][0] == "TP<br>30<br>75.0%" and heat.text[1][1] == "TN<br>0<br>0.0%"
    assert list(heat.x) == ["predicted present", "predicted absent"]
    empty = figures.confusion_matrix({"tp": 0, "fn": 0, "fp": 2, "tn": 2})
    assert empty.data[0].text[0][0].endswith("n/a")


def test_key_metric_bars_skip_null_and_disabled() -> None:
    fig = figures.key_metric_bars(SUMMARY)
    assert [t.name for t in fig.data] == ["Segmentation", "HBB"]
    hbb = fig.data[1]
    assert list(hbb.x) == ["micro precision", "micro recall", "micro F1@[.5:.95]"]
    assert list(hbb.y) == [0.8, 0.5, 0.4]


def test_iou_histogram_uses_positive_evaluated_rows() -> None:
    rows = [
        {"polarity": "positive", "seg_iou": 0.9, "bbox_iou": 0.8, "obb_iou": None,
         "bbox_f1": 1.0, "obb_f1": None},
        {"polarity": "positive", "seg_iou": 0.0, "bbox_iou": None, "obb_iou": None,
         "bbox_f1": 0.0, "obb_f1": None},
        {"polarity": "negative", "seg_iou": None, "bbox_iou": None, "obb_iou": None,
         "bbox_f1": None, "obb_f1": None},
    ]
    fig = figures.iou_histogram(rows)
    assert [t.name for t in fig.data] == ["Segmentation", "HBB"]
    assert list(fig.data[0].x) == [0.9, 0.0]
    assert list(fig.data[1].x) == [0.8, 0.0]  # evaluated without boxes counts as IoU 0


def test_f1_vs_iou_line() -> None:
    fig = figures.f1_vs_iou(SUMMARY)
    (line,) = fig.data
    assert line.name == "HBB"
    assert list(line.x) == list(IOU_THRESHOLDS)
    assert list(line.y) == pytest.approx([1 - t for t in IOU_THRESHOLDS])


def test_precision_at_skips_null() -> None:
    fig = figures.precision_at(SUMMARY)
    assert list(fig.data[0].x) == ["Pr@0.5", "Pr@0.6", "Pr@0.8", "Pr@0.9"]
    assert list(fig.data[0].y) == [0.7, 0.6, 0.2, 0.1]
    assert list(figures.precision_at({"seg": None}).data[0].x) == []


def test_weakest_categories_bars() -> None:
    rows = [{"category": "a", "m": 0.1}, {"category": "b", "m": 0.3}]
    fig = figures.weakest_categories(rows, "m", "mIoU")
    assert list(fig.data[0].y) == ["a", "b"] and list(fig.data[0].x) == [0.1, 0.3]
    assert fig.layout.yaxis.autorange == "reversed"
    assert "2 weakest categories by mIoU" in fig.layout.title.text


def test_confusion_matrix_cells_are_selectable_points_named_by_outcome() -> None:
    """A heatmap cannot be selected: each cell has a point at its centre whose customdata
    is the cell's outcome (rows truth present/absent, columns predicted present/absent)."""
    fig = figures.confusion_matrix({"tp": 30, "fn": 10, "fp": 5, "tn": 0}, clickable=True)
    (cells,) = [t for t in fig.data if isinstance(t, go.Scatter)]
    where = {c: (x, y) for x, y, c in zip(cells.x, cells.y, cells.customdata, strict=True)}
    assert where == {"TP": ("predicted present", "GT present (positive)"),
                     "FN": ("predicted absent", "GT present (positive)"),
                     "FP": ("predicted present", "GT absent (negative)"),
                     "TN": ("predicted absent", "GT absent (negative)")}
    assert fig.layout.clickmode == "event+select"


def test_static_confusion_matrix_does_not_invite_a_click() -> None:
    """The report's matrix (static HTML: a click opens nothing) has no click targets and
    says nothing about clicking; the hover still shows each cell."""
    fig = figures.confusion_matrix({"tp": 30, "fn": 10, "fp": 5, "tn": 0})
    assert [type(t) for t in fig.data] == [go.Heatmap]
    assert "click" not in fig.to_json().lower()
    assert "%{text}" in fig.data[0].hovertemplate


def test_weakest_category_bars_carry_their_category() -> None:
    fig = figures.weakest_categories([{"category": "a", "m": 0.1}, {"category": "b", "m": 0.3}],
                                     "m")
    assert list(fig.data[0].customdata) == ["a", "b"]
