"""Plotly figures of the analysis blocks (score sweep, average precision, error attribution,
leaderboard), and the small lookups the app shows next to them.

Inputs are the JSON-ready dicts of :func:`ovearth_core.analysis.sweep.sweep_to_dict`,
:func:`ovearth_core.analysis.ap.average_precision_report`,
:func:`ovearth_core.analysis.attribution.error_attribution` and
:func:`ovearth_core.analysis.standings.leaderboard_report`. Undefined values (``None``) are
gaps in lines and are left out of bars, never drawn as 0. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import plotly.graph_objects as go

from ..analysis import additive
from ..analysis.ap import ap_numbers
from ..analysis.slices import SliceTable
from ..labels import AP_METRICS, AP_RANKED, METRIC_LABELS, MODALITY_LABELS, ap_keys, metric_label
from .figures import COLOURS

BOX_MODALITIES = ("bbox", "oriented_bbox")
# (sweep key, label, dash) of the lines drawn for each part of the sweep.
DETECTION_SERIES = (("positive_micro_precision", "precision", "dot"),
                    ("positive_micro_recall", "recall", "dash"),
                    ("positive_micro_f1", "F1", "solid"))
PRESENCE_SERIES = (("precision", "precision", "dot"), ("recall", "recall", "dash"),
                   ("mcc", "MCC", "solid"))
PRESENCE_COLOUR = "#7f3c8d"
KIND_LABELS = {"hallucination": "hallucination", "miss": "miss", "localisation": "localisation",
               "wrong_object": "wrong object", "count": "count", "duplicate": "duplicate"}
ALL_KINDS_LABEL = "fix everything"
# Leaderboard and attribution metrics are entries of the additive registry; their names are
# the labels table's (modality, metric) names.
LEADERBOARD_METRIC_LABELS = {
    **{name: metric_label(m.modality, m.metric) for name, m in additive.METRICS.items()},
    **{name: f"{metric_label(m, key)} ("
             f"{'pooled' if AP_METRICS[key][2] == 'pooled' else 'mean over categories'})"
       for name, (m, key) in AP_RANKED.items()}}
ATTRIBUTION_METRIC_LABELS = LEADERBOARD_METRIC_LABELS
METRIC_COLOURS = {"presence_mcc": PRESENCE_COLOUR, "seg_macro_miou": COLOURS["seg"],
                  "seg_micro_miou": "#19d3f3", "bbox_micro_f1": COLOURS["bbox"],
                  "bbox_mean_micro_f1": "#b6e880",
                  "oriented_bbox_micro_f1": COLOURS["oriented_bbox"]}
_LAYOUT = {"margin": {"l": 40, "r": 10, "t": 40, "b": 40}, "height": 360}


def _layout(fig: go.Figure, title: str, **extra: Any) -> go.Figure:
    fig.update_layout(title={"text": title, "font": {"size": 15}}, **{**_LAYOUT, **extra})
    return fig


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def sweep_point(sweep: dict[str, Any], index: int) -> dict[str, dict[str, float | None]]:
    """Metrics at threshold ``sweep["thresholds"][index]``: ``{"bbox": {"precision": ...,
    "recall": ..., "F1": ...}, "oriented_bbox": ..., "presence": {"precision", "recall",
    "MCC"}}`` for the parts the sweep has."""
    out: dict[str, dict[str, float | None]] = {}
    for m in BOX_MODALITIES:
        if sweep.get(m):
            out[m] = {label: sweep[m][key][index] for key, label, _ in DETECTION_SERIES}
    if sweep.get("presence"):
        out["presence"] = {label: sweep["presence"][key][index]
                           for key, label, _ in PRESENCE_SERIES}
    return out


def best_points(sweep: dict[str, Any]) -> list[dict[str, Any]]:
    """The sweep's best-F1 (boxes) and best-MCC (presence) operating points, one row each:
    ``part``, ``criterion``, ``threshold``, ``precision``, ``recall``, ``value``."""
    rows = []
    for m in BOX_MODALITIES:
        best = (sweep.get(m) or {}).get("best_f1")
        if best:
            rows.append({"part": MODALITY_LABELS[m], "criterion": "best F1",
                         "threshold": best["threshold"],
                         "precision": best["positive_micro_precision"],
                         "recall": best["positive_micro_recall"],
                         "value": best["positive_micro_f1"]})
    best = (sweep.get("presence") or {}).get("best_mcc")
    if best:
        rows.append({"part": "Presence", "criterion": "best MCC", "threshold": best["threshold"],
                     "precision": best["precision"], "recall": best["recall"],
                     "value": best["mcc"]})
    return rows


def sweep_figure(sweep: dict[str, Any], current: float | None = None) -> go.Figure:
    """Precision, recall and F1 (boxes) or MCC (presence) against the score threshold.

    Each best point of :func:`best_points` gets a marker and a dotted vertical line;
    ``current`` (the chosen threshold) a solid grey one.
    """
    fig = go.Figure()
    x = sweep["thresholds"]
    parts = [(m, MODALITY_LABELS[m], COLOURS[m], DETECTION_SERIES) for m in BOX_MODALITIES
             if sweep.get(m)]
    if sweep.get("presence"):
        parts.append(("presence", "Presence", PRESENCE_COLOUR, PRESENCE_SERIES))
    for key, label, colour, series in parts:
        for metric, name, dash in series:
            fig.add_trace(go.Scatter(x=x, y=sweep[key][metric], mode="lines",
                                     name=f"{label} {name}",
                                     line={"color": colour, "dash": dash}))
    colour_of = {"HBB": COLOURS["bbox"], "OBB": COLOURS["oriented_bbox"],
                 "Presence": PRESENCE_COLOUR}
    for row in best_points(sweep):
        colour = colour_of[row["part"]]
        fig.add_trace(go.Scatter(
            x=[row["threshold"]], y=[row["value"]], mode="markers",
            name=f"{row['part']} {row['criterion']} {_fmt(row['value'])} "
                 f"@ {row['threshold']:.3f}",
            marker={"color": colour, "size": 12, "symbol": "star",
                    "line": {"color": "black", "width": 1}}))
        fig.add_vline(x=row["threshold"], line={"color": colour, "dash": "dot", "width": 1})
    if current is not None:
        fig.add_vline(x=current, line={"color": "#555", "width": 2},
                      annotation_text=f"T = {current:.3f}", annotation_position="top")
    fig.update_xaxes(title="score threshold (boxes with score ≥ T kept)")
    fig.update_yaxes(title="metric", range=[-0.05, 1.05])
    return _layout(fig, "Metrics against the score threshold", height=520,
                   legend={"orientation": "h", "y": -0.2, "x": 0})


def ap_cards(report: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """``{"HBB": {"AP": ..., "AP 11-pt": ..., "AP@[.5:.95]": ...}, "OBB": ...}``: VOC
    every-point and 11-point AP and COCO AP of an AP report (modalities without AP left
    out)."""
    out = {}
    for m in BOX_MODALITIES:
        entry = report.get(m)
        if entry:
            out[MODALITY_LABELS[m]] = {"AP": entry["ap_every_point"],
                                       "AP 11-pt": entry["ap_11_point"],
                                       "AP@[.5:.95]": entry["coco"]["ap@[0.5:0.95]"]}
    return out


def map_cards(report: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """``{"HBB": {"mAP@[.5:.95]": ..., "mAP@.5": ..., "DOTA mAP (VOC07)": ...,
    "DOTA mAP (every point)": ...}, "OBB": ...}``: the per-category means of an AP report
    (COCO's and DOTA_devkit's mAP; modalities without AP left out)."""
    out = {}
    for m in BOX_MODALITIES:
        if report.get(m):
            out[MODALITY_LABELS[m]] = {
                METRIC_LABELS[key]: value for key, (value, _) in ap_numbers(report[m]).items()
                if AP_METRICS[key][2] == "mean" and key in ap_keys(report)}
    return out


def pr_figure(report: dict[str, Any]) -> go.Figure:
    """Interpolated (101-point) precision against recall at the report's IoU threshold."""
    fig = go.Figure()
    for m in BOX_MODALITIES:
        entry = report.get(m)
        if not entry or entry["pr_curve"]["precision"] is None:
            continue
        fig.add_trace(go.Scatter(
            x=entry["pr_curve"]["recall"], y=entry["pr_curve"]["precision"], mode="lines",
            name=f"{MODALITY_LABELS[m]} (AP {_fmt(entry['ap_every_point'])})",
            line={"color": COLOURS[m], "shape": "hv"}))
    fig.update_xaxes(title="recall", range=[0, 1.02])
    fig.update_yaxes(title="precision (interpolated)", range=[0, 1.05])
    view = " · hard negatives as false positives" if report["hard_negatives"] else ""
    return _layout(fig, f"Precision–recall, IoU ≥ {report['iou_threshold']:g}{view}")


def attribution_rows(attribution: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per failure kind and a last ``fix everything`` row: ``kind``, ``errors``
    (total count) and the rise of each defined key metric (``None`` where undefined)."""
    base = attribution["base"]
    metrics = [m for m in attribution["metrics"] if base[m] is not None]
    rows = [{"kind": KIND_LABELS[r["kind"]], "errors": sum(r["counts"].values()),
             **{m: r["delta"][m] for m in metrics}} for r in attribution["kinds"]]
    top = attribution["oracle_all"]
    rows.append({"kind": ALL_KINDS_LABEL, "errors": sum(r["errors"] for r in rows),
                 **{m: None if top[m] is None else top[m] - base[m] for m in metrics}})
    return rows


def attribution_figure(attribution: dict[str, Any]) -> go.Figure:
    """Horizontal bars: the rise of each key metric if only one kind of error were fixed,
    and (last) if every error were fixed -- the bound on any improvement."""
    rows = attribution_rows(attribution)
    metrics = [m for m in attribution["metrics"] if attribution["base"][m] is not None]
    fig = go.Figure()
    for m in metrics:
        shown = [r for r in rows if r[m] is not None]
        fig.add_trace(go.Bar(y=[r["kind"] for r in shown], x=[r[m] for r in shown],
                             orientation="h", name=ATTRIBUTION_METRIC_LABELS[m],
                             marker_color=METRIC_COLOURS[m],
                             text=[f"{r[m]:+.3f}" for r in shown], textposition="outside"))
    fig.update_yaxes(autorange="reversed", categoryorder="array",
                     categoryarray=[r["kind"] for r in rows])
    values = [r[m] for r in rows for m in metrics if r[m] is not None]
    low, high = min([0.0, *values]), max([0.0, *values])
    pad = 0.18 * (high - low or 1.0)  # room for the value labels outside the bars
    fig.update_xaxes(title="metric rise if only this kind were fixed",
                     range=[low - (pad if low < 0 else 0), high + pad])
    return _layout(fig, f"Error attribution (IoU ≥ {attribution['iou_threshold']:g})",
                   barmode="group", height=max(360, 140 + 22 * len(rows) * max(1, len(metrics))),
                   legend={"orientation": "h", "yanchor": "top", "y": -0.12, "x": 0},
                   margin={**_LAYOUT["margin"], "b": 100})


def stability_figure(stability: dict[str, dict[str, Any]], field: str,
                     title: str, y_title: str) -> go.Figure:
    """One line per metric of ``field`` (e.g. ``median_spearman``) against the subset size;
    the median Spearman gets its interquartile range as error bars."""
    fig = go.Figure()
    for metric, block in stability.items():
        sizes = [r for r in block["sizes"] if r[field] is not None]
        error = None
        if field == "median_spearman":
            error = {"type": "data", "symmetric": False, "thickness": 1,
                     "array": [r["q75_spearman"] - r[field] for r in sizes],
                     "arrayminus": [r[field] - r["q25_spearman"] for r in sizes]}
        fig.add_trace(go.Scatter(x=[r["size"] for r in sizes], y=[r[field] for r in sizes],
                                 mode="lines+markers", error_y=error,
                                 name=LEADERBOARD_METRIC_LABELS.get(metric, metric),
                                 line={"color": METRIC_COLOURS.get(metric)}))
    fig.update_xaxes(title="categories in the subset")
    fig.update_yaxes(title=y_title, range=[-1.05 if field == "median_spearman" else 0, 1.05])
    return _layout(fig, title)


def rank_scatter(names: Sequence[str], mcc: Sequence[float | None],
                 miou: Sequence[float | None], rho: float | None) -> go.Figure:
    """Presence MCC against segmentation macro mIoU, one labelled point per model (models
    with either undefined left out)."""
    points = [(n, a, b) for n, a, b in zip(names, mcc, miou, strict=True)
              if a is not None and b is not None]
    fig = go.Figure(go.Scatter(x=[p[1] for p in points], y=[p[2] for p in points],
                               mode="markers+text", text=[p[0] for p in points],
                               textposition="top center", marker={"size": 11},
                               cliponaxis=False, showlegend=False))
    fig.update_xaxes(title="presence MCC")
    fig.update_yaxes(title="seg macro mIoU")
    return _layout(fig, f"MCC vs mIoU across models (Spearman ρ = {_fmt(rho)})",
                   margin={"l": 60, "r": 90, "t": 50, "b": 40})


def slice_rows(table: SliceTable, metric: str) -> list[dict[str, Any]]:
    """One row per slice value: counts, every metric's value (``None`` where undefined or
    not applicable) and the interval of ``metric`` (a registry name) as columns."""
    rows = []
    for v in table.values:
        by_name = {m.name: m for m in v.metrics}
        chosen = by_name.get(metric)
        rows.append({
            "value": v.value, "queries": v.num_queries, "positive": v.num_positive,
            "negative": v.num_negative, "GT boxes": v.num_gt_boxes,
            **{LEADERBOARD_METRIC_LABELS[m.name]: m.value for m in v.metrics},
            "interval": _interval(chosen, "ci_low", "ci_high")})
        if table.paired:
            rows[-1].update({"B": None if chosen is None else chosen.b,
                             "B − A": None if chosen is None else chosen.diff,
                             "B − A interval": _interval(chosen, "diff_low", "diff_high"),
                             P_COLUMN: None if chosen is None else p_text(chosen.p_value),
                             Q_COLUMN: None if chosen is None else p_text(chosen.q_value)})
    return rows


# The columns of a paired slice table's tests (which correction, said in the header).
P_COLUMN = "p (B − A, paired bootstrap)"
Q_COLUMN = "q (Benjamini–Hochberg)"


def p_text(value: float | None) -> str | None:
    """A p- or q-value as shown (3 significant digits; ``None``: not tested; 0, below the
    smallest double, as ``< 1e-300``)."""
    if value is None:
        return None
    if value == 0:
        return "< 1e-300"
    return f"{value:.3g}" if value >= 1e-3 else f"{value:.1e}"


def p_is(value: float | None) -> str:
    """``p``'s relation as written after its name: ``= 0.002``, ``< 1e-300``, ``= —``."""
    text = p_text(value)
    return "= —" if text is None else text if text.startswith("<") else f"= {text}"


def _interval(m: Any, low: str, high: str) -> str:
    if m is None or getattr(m, low) is None:
        return "—"
    return f"[{getattr(m, low):.3f}, {getattr(m, high):.3f}]"


def slice_figure(table: SliceTable, metric: str) -> go.Figure:
    """``metric`` (a registry name) per slice value with its bootstrap interval as error
    bars (paired tables: B − A and its paired interval, with a zero line); undefined values
    are left out (never drawn as 0), the query count is in the hover."""
    value, low, high = ("diff", "diff_low", "diff_high") if table.paired else (
        "value", "ci_low", "ci_high")
    points = [(v, getattr(m, value), getattr(m, low), getattr(m, high))
              for v in table.values for m in v.metrics
              if m.name == metric and getattr(m, value) is not None]
    fig = go.Figure(go.Scatter(
        x=[p[0].value for p in points], y=[p[1] for p in points], mode="markers",
        marker={"size": 10, "color": METRIC_COLOURS.get(metric, COLOURS["seg"])},
        error_y={"type": "data", "symmetric": False, "thickness": 1.2,
                 "array": [0.0 if hi is None else hi - y for _, y, _, hi in points],
                 "arrayminus": [0.0 if lo is None else y - lo for _, y, lo, _ in points]},
        customdata=[p[0].num_queries for p in points],
        hovertemplate="%{x}<br>%{y:.3f} (%{customdata} queries)<extra></extra>"))
    label = LEADERBOARD_METRIC_LABELS.get(metric, metric)
    label = f"B − A {label}" if table.paired else label
    if table.paired:
        fig.add_hline(y=0, line={"color": "#888", "width": 1, "dash": "dot"})
    fig.update_xaxes(title=table.attribute, type="category", categoryorder="array",
                     categoryarray=[v.value for v in table.values])
    fig.update_yaxes(title=label)
    kind = "paired bootstrap" if table.paired else "bootstrap"
    return _layout(fig, f"{label} by {table.attribute} ({table.confidence:.0%} {kind} "
                        f"intervals, {table.n_resamples} resamples)")


def category_confusion_markdown(matrix: dict[str, dict[str, int]],
                                text: Callable[[str], str] = str) -> str:
    """:func:`category_confusion_figure`'s non-zero cells as a Markdown table (the Confusion
    page's first screen, drawn without plotly): a row per predicted category, a column per
    GT category that has a cell, sorted by name; the diagonal is "·", an empty cell blank.
    ``text`` escapes a category name for Markdown (the app's ``md_text``).

    >>> print(category_confusion_markdown({"ship": {"harbor": 2}}))
    | predicted ↓ · GT → | harbor |
    | --- | ---: |
    | ship | 2 |
    """
    preds = sorted(p for p, row in matrix.items() if any(row.values()))
    gts = sorted({g for row in matrix.values() for g, n in row.items() if n})
    lines = ["| predicted ↓ · GT → | " + " | ".join(text(g) for g in gts) + " |",
             "| --- |" + " ---: |" * len(gts)]
    lines += ["| " + text(p) + " | " + " | ".join(
        "·" if p == g else f"{matrix[p].get(g, 0):,}" if matrix[p].get(g, 0) else ""
        for g in gts) + " |" for p in preds]
    return "\n".join(lines)


def category_confusion_figure(matrix: dict[str, dict[str, int]], modality: str,
                              categories: Sequence[str] = ()) -> go.Figure:
    """Predicted category (rows) against GT category (columns) of unmatched predicted boxes
    on another category's GT box (:func:`ovearth_core.analysis.objects.confusion`), over
    ``categories`` and those of the matrix (the diagonal is not counted: "·").

    Every non-zero cell has an invisible square marker carrying ``[predicted, GT]`` in
    ``customdata``: a heatmap cell cannot be selected, a marker can (as the presence matrix).
    """
    names = sorted({*categories, *matrix, *(g for row in matrix.values() for g in row)})
    preds = gts = names
    z = [[matrix.get(p, {}).get(g, 0) for g in gts] for p in preds]
    text = [["·" if p == g else f"{v:,}" if v else "" for g, v in zip(gts, row, strict=True)]
            for p, row in zip(preds, z, strict=True)]
    fig = go.Figure(go.Heatmap(z=z, x=gts, y=preds, text=text, texttemplate="%{text}",
                               colorscale=[[0, "#f7fbff"], [1, "#cb181d"]], showscale=False,
                               hoverinfo="skip"))
    cells = [(p, g, n) for p, row in matrix.items() for g, n in row.items() if n]
    fig.add_trace(go.Scatter(
        x=[g for _, g, _ in cells], y=[p for p, _, _ in cells],
        customdata=[[p, g] for p, g, _ in cells], mode="markers", showlegend=False,
        marker={"symbol": "square", "size": 40, "opacity": 0}, name="cells",
        text=[f"{n:,}" for _, _, n in cells],
        hovertemplate="predicted %{y} on GT %{x}: %{text} boxes<br>click: open them in the "
                      "Gallery<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title="predicted category (the query's)")
    fig.update_xaxes(title="GT category")
    height = max(320, 160 + 44 * len(preds))
    what = ("mask components", "GT object") if modality == "segmentation" else ("boxes",
                                                                               "GT box")
    label = MODALITY_LABELS["seg" if modality == "segmentation" else modality]
    return _layout(fig, f"{label}: unmatched predicted {what[0]} on another category's "
                        f"{what[1]} · click a cell", height=height,
                   clickmode="event+select")
