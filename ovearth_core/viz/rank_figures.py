"""Plotly figures of the ranks with their uncertainty (issue 37): each submission's rank and
its interval, and Demsar's critical-difference diagram.

Inputs are one metric's entry of ``leaderboard_report(...)["uncertainty"]``
(:func:`ovearth_core.analysis.rank_stats.metric_ranks`) and its ``friedman`` part. No
Streamlit here.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from .analysis_figures import p_is

INTERVAL_COLOUR = "#636efa"
CLIQUE_COLOUR = "#222222"
# Rows of the diagram: the axis at 0, one label row per submission below it.
_ROW = 1.0


def rank_interval_figure(ranks: dict[str, Any], label: str) -> go.Figure:
    """Each submission (best first, top to bottom) at its observed rank, with a bar over its
    ``1 - alpha`` rank interval; hover: the groups it shares."""
    models = ranks["models"]
    rank, low, high = ranks["rank"], ranks["rank_low"], ranks["rank_high"]
    level = round(100 * (1 - ranks["alpha"]))
    fig = go.Figure(go.Scatter(
        x=rank, y=models, mode="markers", name="observed rank",
        marker={"color": INTERVAL_COLOUR, "size": 8},
        error_x={"type": "data", "symmetric": False,
                 "array": [h - r for r, h in zip(rank, high, strict=True)],
                 "arrayminus": [r - lo for r, lo in zip(rank, low, strict=True)],
                 "thickness": 2, "width": 4},
        customdata=[[lo, h, g] for lo, h, g in zip(low, high, ranks["groups"], strict=True)],
        hovertemplate="%{y}: rank %{x}, " + f"{level} %" + " interval [%{customdata[0]}, "
                      "%{customdata[1]}], group %{customdata[2]}<extra></extra>"))
    unit = "images" if ranks["unit"] == "image" else "queries"
    fig.update_layout(
        title={"text": f"Rank by {label}, {level} % interval ({ranks['n_resamples']:,} "
                       f"resamples of {ranks['num_units']:,} {unit})", "font": {"size": 15}},
        xaxis={"title": "rank (1 = best)", "range": [0.5, len(models) + 0.5], "dtick": 1
               if len(models) <= 20 else 5},
        yaxis={"autorange": "reversed", "type": "category"},
        height=120 + 22 * len(models), margin={"l": 10, "r": 10, "t": 50, "b": 40},
        showlegend=False)
    return fig


def critical_difference_figure(friedman: dict[str, Any], label: str) -> go.Figure:
    """Demsar's diagram: the submissions on an axis of mean ranks (1 = best, on the left),
    labels of the better half on the left and of the worse half on the right, a thick bar
    under each clique Nemenyi cannot tell apart, and the critical difference drawn above
    the axis. Traces: ``axis``, ``cd``, one ``clique`` each, ``models`` (markers at
    ``(mean rank, 0)``), and the label lines."""
    models, mean_rank = friedman["models"], friedman["mean_rank"]
    k = len(models)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[1, k], y=[0, 0], mode="lines", name="axis",
                             line={"color": "black", "width": 1}, hoverinfo="skip"))
    cd = friedman["cd"]
    fig.add_trace(go.Scatter(x=[1, 1 + cd], y=[0.8, 0.8], mode="lines+text", name="cd",
                             line={"color": "black", "width": 2},
                             text=["", f"CD = {cd:.2f}"], textposition="middle right",
                             hovertemplate=f"critical difference {cd:.3f}<extra></extra>"))
    half = (k + 1) // 2
    cliques = friedman["cliques"]
    for n, (i, j) in enumerate(cliques):
        y = -0.35 - 0.25 * n
        fig.add_trace(go.Scatter(
            x=[mean_rank[i] - 0.03, mean_rank[j] + 0.03], y=[y, y], mode="lines",
            name="clique", line={"color": CLIQUE_COLOUR, "width": 5},
            hovertemplate=f"{j - i + 1} not told apart: {models[i]} … {models[j]}"
                          "<extra></extra>"))
    depth = -0.35 - 0.25 * len(cliques) - 0.3
    xs, ys, texts, positions = [], [], [], []
    for idx, (name, r) in enumerate(zip(models, mean_rank, strict=True)):
        left = idx < half
        row = depth - _ROW * (idx if left else k - 1 - idx) * 0.5
        edge = 0.6 if left else k + 0.4
        fig.add_trace(go.Scatter(x=[r, r, edge], y=[0, row, row], mode="lines",
                                 line={"color": "#888888", "width": 1}, hoverinfo="skip",
                                 showlegend=False, name="label line"))
        xs.append(edge)
        ys.append(row)
        texts.append(f"{name} ({r:.2f})")
        positions.append("middle left" if left else "middle right")
    fig.add_trace(go.Scatter(x=mean_rank, y=[0] * k, mode="markers", name="models",
                             marker={"color": "black", "size": 7}, text=models,
                             hovertemplate="%{text}: mean rank %{x:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="text", text=texts, textposition=positions,
                             name="labels", hoverinfo="skip", cliponaxis=False))
    side = 20 + 7 * max((len(t) for t in texts), default=0)  # the labels, outside the axis
    blocks = "images" if friedman.get("blocks") == "image" else "queries"
    p = friedman.get("p")
    bottom = min(ys, default=depth) - 0.5
    fig.update_layout(
        title={"text": f"Critical difference (Nemenyi, α = {friedman['alpha']:g}) of "
                       f"{label} over {friedman['num_blocks']:,} {blocks}; Friedman p {p_is(p)}",
               "font": {"size": 15}},
        xaxis={"title": "mean rank (1 = best)", "range": [0.6, k + 0.4], "zeroline": False,
               "tickvals": list(range(1, k + 1, 1 if k <= 20 else 5))},
        yaxis={"visible": False, "range": [bottom, 1.3]}, showlegend=False,
        plot_bgcolor="white",
        height=max(260, int(140 + 40 * (1.3 - bottom))),
        margin={"l": side, "r": side, "t": 50, "b": 40})
    return fig
