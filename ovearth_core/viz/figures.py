"""Plotly figures of an evaluation's results (the overview page's charts).

Every function takes plain result dicts (``results["summary"]``, the explorer's
table rows, ``diagnose.category_rows``) and returns a ``plotly.graph_objects.Figure``.
Null metrics (zero denominators) are left out of bars and lines, never drawn as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from ..labels import METRIC_LABELS, MODALITY_LABELS
from ..types import IOU_THRESHOLDS, PR_THRESHOLDS

IOU_COLUMNS = {"seg": "seg_iou", "bbox": "bbox_iou", "oriented_bbox": "obb_iou"}
COLOURS = {"seg": "#636efa", "bbox": "#00a884", "oriented_bbox": "#ef553b"}
_LAYOUT = {"margin": {"l": 40, "r": 10, "t": 40, "b": 40}, "height": 320}


def _layout(fig: go.Figure, title: str, **extra: Any) -> go.Figure:
    fig.update_layout(title={"text": title, "font": {"size": 15}}, **{**_LAYOUT, **extra})
    return fig


_CM_COLUMNS = ("predicted present", "predicted absent")
_CM_ROWS = ("GT present (positive)", "GT absent (negative)")


def confusion_matrix(presence: dict[str, Any], clickable: bool = False) -> go.Figure:
    """2 x 2 presence matrix: rows = truth (present / absent), columns = prediction.

    Cells show the count and the rate within the row (recall for present,
    FPR / TNR for absent). ``clickable`` (the app) adds what a click selects; a static
    figure (the report) neither has it nor invites a click.
    """
    counts, names, rates = _confusion_cells(presence)
    text = [[f"{names[i][j]}<br>{counts[i][j]:,}<br>{_pct(rates[i][j])}" for j in range(2)]
            for i in range(2)]
    hover = ({"hoverinfo": "skip"} if clickable
             else {"hovertemplate": "%{y} / %{x}<br>%{text}<extra></extra>"})
    fig = go.Figure(go.Heatmap(
        z=[[r if r is not None else 0 for r in row] for row in rates],
        x=list(_CM_COLUMNS), y=list(_CM_ROWS),
        text=text, texttemplate="%{text}", textfont={"size": 16}, zmin=0, zmax=1,
        colorscale=[[0, "#f7fbff"], [1, "#2171b5"]], showscale=False, **hover))
    fig.update_yaxes(autorange="reversed")
    title = "Presence confusion matrix (rate within row)"
    if not clickable:
        return _layout(fig, title)
    # A heatmap cell cannot be selected (plotly selects points): one invisible square marker
    # per cell, its outcome in ``customdata``, is what a click selects (and what hovers).
    fig.add_trace(go.Scatter(
        x=[fig.data[0].x[j] for i in range(2) for j in range(2)],
        y=[fig.data[0].y[i] for i in range(2) for j in range(2)],
        customdata=[names[i][j] for i in range(2) for j in range(2)],
        text=[text[i][j] for i in range(2) for j in range(2)], mode="markers",
        marker={"symbol": "square", "size": 90, "opacity": 0}, showlegend=False,
        name="cells", hovertemplate="%{y} / %{x}<br>%{text}<br>click: open these queries"
                                    "<extra></extra>"))
    return _layout(fig, f"{title} · click a cell", clickmode="event+select")


def _confusion_cells(presence: dict[str, Any]) -> tuple[list[list[int]], list[list[str]],
                                                        list[list[float | None]]]:
    """The presence matrix's counts, outcome names and rates within the row, row by row
    (truth present, absent), column by column (predicted present, absent)."""
    tp, fp, tn, fn = (presence[k] for k in ("tp", "fp", "tn", "fn"))
    counts = [[tp, fn], [fp, tn]]
    names = [["TP", "FN"], ["FP", "TN"]]
    rates = [[_rate(v, sum(row)) for v in row] for row in counts]
    return counts, names, rates


def confusion_matrix_markdown(presence: dict[str, Any]) -> str:
    """The presence matrix as a Markdown table (the app's first screen, drawn without plotly):
    each cell its outcome, count and rate within the row, as :func:`confusion_matrix` shows."""
    counts, names, rates = _confusion_cells(presence)
    lines = ["| | " + " | ".join(_CM_COLUMNS) + " |", "| --- | ---: | ---: |"]
    lines += ["| " + _CM_ROWS[i] + " | " + " | ".join(
        f"{names[i][j]} **{counts[i][j]:,}** ({_pct(rates[i][j])})" for j in range(2)) + " |"
        for i in range(2)]
    return "\n".join(lines)


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _pct(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.1%}"


def key_metric_bars(summary: dict[str, Any]) -> go.Figure:
    """Key metrics of every enabled modality, one bar group per modality."""
    fig = go.Figure()
    for key in ("seg", "bbox", "oriented_bbox"):
        label = MODALITY_LABELS[key]
        block = summary.get(key)
        if not block:
            continue
        items = [(METRIC_LABELS.get(k, k), v) for k, v in block["key_metrics"].items()
                 if v is not None]
        fig.add_trace(go.Bar(x=[n for n, _ in items], y=[v for _, v in items], name=label,
                             marker_color=COLOURS[key], text=[f"{v:.3f}" for _, v in items],
                             textposition="outside"))
    fig.update_yaxes(range=[0, 1.1])
    return _layout(fig, "Key metrics per modality", barmode="group")


def iou_histogram(rows: Sequence[dict[str, Any]], bins: int = 20) -> go.Figure:
    """IoU over positive queries per modality: mask IoU, best box IoU (0 for no box)."""
    fig = go.Figure()
    positives = [r for r in rows if r["polarity"] == "positive"]
    for key, column in IOU_COLUMNS.items():
        values = [r[column] if r[column] is not None else 0.0 for r in positives
                  if _evaluated(r, key)]
        if not values:
            continue
        fig.add_trace(go.Histogram(x=values, name=MODALITY_LABELS[key], opacity=0.65,
                                   marker_color=COLOURS[key],
                                   xbins={"start": 0, "end": 1.0001, "size": 1 / bins}))
    fig.update_xaxes(title="IoU", range=[0, 1])
    fig.update_yaxes(title="positive queries")
    return _layout(fig, "IoU distribution over positive queries", barmode="overlay")


def _evaluated(row: dict[str, Any], key: str) -> bool:
    metric = {"seg": "seg_iou", "bbox": "bbox_f1", "oriented_bbox": "obb_f1"}[key]
    return row[metric] is not None


def f1_vs_iou(summary: dict[str, Any]) -> go.Figure:
    """Micro F1 against the IoU threshold 0.50 ... 0.95 for HBB and OBB."""
    fig = go.Figure()
    for key in ("bbox", "oriented_bbox"):
        block = summary.get(key)
        if not block:
            continue
        by_iou = block["positive_micro_f1_by_iou"]
        points = [(t, by_iou.get(f"{t:.2f}")) for t in IOU_THRESHOLDS]
        points = [(t, v) for t, v in points if v is not None]
        fig.add_trace(go.Scatter(x=[t for t, _ in points], y=[v for _, v in points],
                                 mode="lines+markers", name=MODALITY_LABELS[key],
                                 line={"color": COLOURS[key]}))
    fig.update_xaxes(title="IoU threshold", range=[0.48, 0.97], dtick=0.05)
    fig.update_yaxes(title="micro F1", range=[0, 1.05])
    return _layout(fig, "Micro F1 vs IoU threshold")


def precision_at(summary: dict[str, Any]) -> go.Figure:
    """Segmentation Pr@0.5 ... Pr@0.9: share of positive queries with mask IoU >= t."""
    seg = summary.get("seg") or {}
    points = [(f"Pr@{t}", seg.get(f"Pr@{t}")) for t in PR_THRESHOLDS]
    points = [(n, v) for n, v in points if v is not None]
    fig = go.Figure(go.Bar(x=[n for n, _ in points], y=[v for _, v in points],
                           marker_color=COLOURS["seg"], text=[f"{v:.1%}" for _, v in points],
                           textposition="outside"))
    fig.update_yaxes(range=[0, 1.1])
    return _layout(fig, "Segmentation Pr@IoU")


def weakest_categories(rows: Sequence[dict[str, Any]], metric: str,
                       label: str | None = None) -> go.Figure:
    """Horizontal bars of the given (already selected, weakest first) category rows."""
    fig = go.Figure(go.Bar(y=[r["category"] for r in rows], x=[r[metric] for r in rows],
                           orientation="h", marker_color="#ef553b",
                           customdata=[r["category"] for r in rows],
                           text=[f"{r[metric]:.3f}" for r in rows], textposition="outside",
                           hovertemplate="%{y}: %{x:.3f}<br>click: open its queries"
                                         "<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, 1.1], title=label or metric)
    return _layout(fig, f"{len(rows)} weakest categories by {label or metric}",
                   height=max(320, 26 * len(rows) + 80))
