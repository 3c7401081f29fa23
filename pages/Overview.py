"""Overview: key metrics, hits and misses, failure tags, AP and per category; the charts
(the confusion matrix, modalities, weakest categories) in a tab of their own.

The first screen draws no plotly chart and no data grid: Streamlit's plotly element is a
4.7 MB script whose first chart on a page costs a trivial page's whole first paint again,
and a data grid about half of it (benchmarks/README.md, "Issue 49: first paint"). The
"Charts" tab and the per-category table's expander are lazy (``on_change="rerun"``): their
content is built and sent only once opened."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ovearth_core.analysis import diagnose
from ovearth_core.labels import MODALITY_LABELS
from ovearth_core.results import CategoryRow, Summary
from ovearth_core.types import OUTPUT_KEYS
from ovearth_core.viz import figures
from pages.common import analysis_views, state, views
from pages.common.run import current, in_frame

# The Overview's tabs: the numbers and tables (the first screen), then the charts.
TABS = ("Numbers and tables", "Charts")
CATEGORIES_OPEN = "_w_categories_open"  # the per-category table's expander (lazy)


def main() -> None:
    run = current()
    summary = run.view.summary
    state.sync_url()
    views.evaluated_caption(run, f"{summary.num_samples:,} queries "
                                 f"({summary.num_positive:,} positive) · "
                                 + (f"loaded in {run.evaluation.seconds:.1f} s, the numbers from "
                                    "the result cache" if run.evaluation.from_cache else
                                    f"evaluated in {run.evaluation.seconds:.1f} s"))
    key_metrics_ui(run)
    numbers, charts = st.tabs(list(TABS), key="overview_tab", on_change="rerun")
    if numbers.open:
        with numbers:
            left, right = st.columns(2)
            with left:
                outcomes_ui(run)
            with right:
                failure_tags_ui(run.evaluation.rows)
            analysis_ui(run)
            categories_ui(run.view.per_category)
    if charts.open:
        with charts:
            charts_ui(run)


def key_metrics_ui(run: Any) -> None:
    """Presence (open vocabulary) and each evaluated modality's key metrics."""
    summary = run.view.summary
    st.header("Key metrics")
    if run.options.task == "vocabulary":
        presence = summary.presence
        views.metric_cards("Presence", {"mcc": presence.mcc, "F1": presence.f1,
                                        "FPR (negatives)": presence.fpr,
                                        "Negative accuracy": summary.negative_accuracy})
    for modality, key in OUTPUT_KEYS.items():
        block = summary.block(key)
        if block is not None:
            views.metric_cards(MODALITY_LABELS[key], block.key_metrics,
                               submitted=modality not in run.not_submitted)


def outcomes_ui(run: Any) -> None:
    """The presence confusion matrix (open vocabulary) or hits and misses, each cell a way
    into the explorer."""
    summary, rows = run.view.summary, run.evaluation.rows
    if run.options.task == "vocabulary":
        st.subheader("Presence confusion matrix")
        st.markdown(figures.confusion_matrix_markdown(summary.presence.json))
        outcomes = ("TP", "FN", "FP", "TN")  # the matrix's cells, row by row
    else:
        st.subheader("Hits and misses (IoU ≥ 0.5)")
        outcomes = diagnose.OUTCOMES_GROUNDING
    counts = diagnose.outcome_counts(rows, outcomes)
    cols = st.columns(2)
    for i, outcome in enumerate(outcomes):
        with cols[i % 2]:
            views.go_to_explorer(f"Show {counts[outcome]:,} {views.OUTCOME_WORDS[outcome]} →",
                                 key=f"cell_{outcome}", outcomes=[outcome])


def failure_tags_ui(rows: list[dict[str, Any]]) -> None:
    """The failure tags' counts, each (and the failed queries) a way into the explorer."""
    st.subheader("Failure tags")
    tags = diagnose.failure_counts(rows)
    views.go_to_explorer(f"Show {len(rows) - tags['ok']:,} failed queries →", key="failed",
                         failed_only=True)
    # Every tag's count is its shortcut, "ok" included (a tag no query has is shown,
    # disabled): the buttons are the table, without a data grid on the first screen.
    cols = st.columns(2)
    for i, tag in enumerate(diagnose.TAGS):
        with cols[i % 2]:
            views.go_to_explorer(f"{tags[tag]:,} × {tag} →", key=f"tag_{tag}",
                                 disabled=not tags[tag], failures=[tag])


def charts_ui(run: Any) -> None:
    """The "Charts" tab: the clickable confusion matrix, the modalities' charts and the
    weakest categories' bars (a cell or a bar opens the explorer)."""
    summary = run.view.summary
    if run.options.task == "vocabulary":
        cell = views.picked_point(st.plotly_chart(
            figures.confusion_matrix(summary.presence.json, clickable=True), key="cm",
            on_select="rerun", selection_mode="points"))
        if cell is not None and cell.get("customdata") in diagnose.OUTCOMES_OV:
            views.explore(outcomes=[cell["customdata"]])
    modalities_ui(summary, run.evaluation.rows)
    weakest_ui(run.view.per_category)


def modalities_ui(summary: Summary, rows: list[dict[str, Any]]) -> None:
    st.header("Modalities")
    a, b = st.columns(2)
    a.plotly_chart(figures.key_metric_bars(summary.json), key="bars")
    b.plotly_chart(figures.iou_histogram(rows), key="hist")
    if summary.bbox is not None or summary.oriented_bbox is not None:
        a.plotly_chart(figures.f1_vs_iou(summary.json), key="f1iou")
    if summary.seg is not None:
        b.plotly_chart(figures.precision_at(summary.json), key="prat")


def analysis_ui(run: Any) -> None:
    """The score sweep, average precision and error attribution, on demand."""
    st.header("Operating point, AP and error attribution")
    if st.toggle("Show the score sweep, average precision and error attribution (computed on "
                 "demand: a few seconds on the full benchmark)", **state.bind("show_analysis")):
        analysis_views.operating_point(run)
        analysis_views.average_precision(run)
        analysis_views.error_attribution(run)


def categories_ui(per_category: tuple[CategoryRow, ...]) -> None:
    """The per-category table, each row a way into the explorer."""
    st.header("Per category")
    with st.expander(f"The {len(per_category):,} categories' table: click a row to open "
                     "that category's queries in the explorer (the weakest categories' chart "
                     "is in the \"Charts\" tab)", key=CATEGORIES_OPEN,
                     on_change="rerun") as box:
        if not box.open:
            return
        cat_rows = diagnose.category_rows([c.json for c in per_category])
        row = views.picked_row(st.dataframe(cat_rows, hide_index=True, placeholder="—",
                                            width="stretch", height=460,
                                            on_select="rerun", selection_mode="single-row",
                                            key="cat_table"))
    if row is not None:
        views.explore(categories=[cat_rows[row]["category"]])


def weakest_ui(per_category: tuple[CategoryRow, ...]) -> None:
    """The weakest categories' bars, each a way into the explorer."""
    cat_rows = diagnose.category_rows([c.json for c in per_category])
    metric = diagnose.primary_metric(cat_rows)
    if metric is None:
        return
    st.header("Weakest categories")
    st.caption("Click a bar to open that category's queries in the explorer.")
    weakest = diagnose.weakest(cat_rows, metric, 15)
    bar = views.picked_point(st.plotly_chart(
        figures.weakest_categories(weakest, metric, metric.replace("_", " ")), key="weak",
        on_select="rerun", selection_mode="points"))
    if bar is not None and bar.get("customdata") in {r["category"] for r in cat_rows}:
        views.explore(categories=[bar["customdata"]])


in_frame(main)
