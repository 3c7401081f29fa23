"""Rendering of the analysis sections: the Overview's operating point, average precision
and error attribution, and the Leaderboard page's table and charts."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from ovearth_core.analysis import standings
from ovearth_core.analysis.ap import ap_numbers
from ovearth_core.labels import (
    AP_LOWER_IS_BETTER,
    METRIC_LABELS,
    MODALITY_LABELS,
    POOLED_SCOPE,
    ap_description,
    ap_keys,
    ap_scope,
)
from ovearth_core.viz import analysis_figures as af

from . import analysis_data, state, views
from .run import Run

NUMBER = st.column_config.NumberColumn(format="%.3f")


def _widget_key(name: str, run: Run) -> str:
    """A widget key per submission and options (but the sidebar's score filter, which the
    sweep ignores): another file starts from the defaults instead of carrying a value that
    is not among the new options."""
    key = (run.gt, run.pred, analysis_data.every_box(run.options))
    digest = hashlib.sha1(repr(key).encode()).hexdigest()[:10]
    return f"{name}_{digest}"


LOWER_IS_BETTER = frozenset(METRIC_LABELS[k] for k in AP_LOWER_IS_BETTER)


def _cards(title: str, values: dict[str, float | None]) -> None:
    for col, (label, value) in zip(st.columns(len(values)), values.items(), strict=True):
        lower = " (lower is better)" if label in LOWER_IS_BETTER else ""
        col.metric(f"{title} {label}{lower}", views.fmt(value))


def operating_point(run: Run) -> None:
    """Score-threshold slider over the cached sweep, live metrics, chart and best points."""
    st.header("Operating point")
    timed = analysis_data.sweep(run.gt, run.pred, run.options)
    sweep = timed.value
    thresholds = sweep["thresholds"]
    if not thresholds:
        st.caption("No scored boxes in this submission: there is no score threshold to choose.")
        return
    index_of = {t: i for i, t in enumerate(thresholds)}
    chosen = st.select_slider(
        "Score threshold T (boxes with score ≥ T kept; every value is a score of the file)",
        options=thresholds, value=thresholds[0], format_func=lambda t: f"{t:.3f}",
        key=_widget_key("op_threshold", run))
    unscored = sum(sweep["unscored_boxes"].values())
    st.caption(f"Sweep of {len(thresholds)} thresholds, computed once in {timed.seconds:.2f} s "
               f"from every box (the sidebar's score filter is ignored here)."
               + (f" {unscored:,} boxes without a score are kept at every T." if unscored
                  else ""))
    left, right = st.columns([2, 3])
    with left:
        for part, values in af.sweep_point(sweep, index_of[chosen]).items():
            _cards(MODALITY_LABELS[part], values)
        st.markdown("**Best operating points**")
        st.dataframe(pd.DataFrame(af.best_points(sweep)), hide_index=True, placeholder="—",
                     width="stretch",
                     column_config={k: NUMBER for k in ("threshold", "precision", "recall",
                                                        "value")})
    right.plotly_chart(af.sweep_figure(sweep, chosen), key="sweep_chart")


def average_precision(run: Run) -> None:
    """PR curves and AP cards (VOC every point / 11 points, COCO) of every box."""
    if not analysis_data.has_boxes(run.config.modalities):
        return
    st.header("Average precision")
    if not analysis_data.sweep(run.gt, run.pred, run.options).value["thresholds"]:
        st.caption("No scored boxes in this submission: detections cannot be ranked.")
        return
    st.caption(f"{views.ap_options(run.options)}: set in the sidebar, under "
               "Evaluation options.")
    cap = run.options.max_detections
    timed = analysis_data.average_precision(run.gt, run.pred, run.options)
    report = timed.value
    left, right = st.columns([2, 3])
    with left:
        st.markdown(f"**Pooled AP** — {POOLED_SCOPE}")
        for part, values in af.ap_cards(report).items():
            _cards(part, values)
        first = next(report[m] for m in af.BOX_MODALITIES if report.get(m))
        st.markdown(f"**mAP** — {ap_scope('coco.map@[0.5:0.95]', first['coco']['num_categories'])}"
                    ": each category's AP, then the mean (the number COCO and DOTA papers "
                    "report)")
        for part, values in af.map_cards(report).items():
            items = list(values.items())  # two a row: the labels are long
            for k in range(0, len(items), 2):
                _cards(part, dict(items[k:k + 2]))
        cap_warnings(report, cap)
        nms_note(report)
        unscored = sum((report.get(m) or {}).get("num_unscored", 0) for m in af.BOX_MODALITIES)
        if unscored:
            st.warning(f"{unscored:,} boxes have no score: they rank first in file order, so "
                       "AP depends on that order.")
        st.caption(ap_caption(report) + f" Every box, computed in {timed.seconds:.2f} s.")
    right.plotly_chart(af.pr_figure(report), key="pr_chart")


def cap_warnings(report: dict[str, Any], cap: int) -> None:
    """A warning per box modality whose queries have more GT boxes than the COCO detection
    cap (``report``: :func:`analysis_data.average_precision`'s; the Overview's and
    Compare's AP, one text)."""
    for m in af.BOX_MODALITIES:
        over = (report.get(m) or {}).get("coco", {}).get("queries_over_cap") or []
        if over:
            st.warning(f"{MODALITY_LABELS[m]} COCO AP / mAP: {len(over):,} queries have "
                       f"more GT boxes than the detection cap of {cap:,} per query "
                       f"({', '.join(over[:5])}{' …' if len(over) > 5 else ''}): their "
                       "recall cannot reach 1. Raise the cap in the sidebar (Evaluation "
                       "options).")


def nms_note(report: dict[str, Any]) -> None:
    """How many boxes NMS-AP suppressed, per box modality (when it is on)."""
    for m in af.BOX_MODALITIES:
        coco = (report.get(m) or {}).get("coco", {})
        if "nms_removed" in coco:
            st.caption(f"{MODALITY_LABELS[m]} NMS-AP: {coco['nms_removed']:,} of "
                       f"{coco['nms_num_detections']:,} boxes suppressed (a box of one phrase "
                       "on an object another phrase answered with a higher score); the "
                       "explorer draws them on each query.")


def ap_caption(report: dict[str, Any]) -> str:
    """What each AP card is: convention and scope (pooled, or mean over N categories)."""
    entry = next(report[m] for m in af.BOX_MODALITIES if report.get(m))
    shown = ap_keys(report)
    parts = [ap_description(key, n) for key, (_, n) in ap_numbers(entry).items()
             if key in shown]
    return (f"IoU ≥ {report['iou_threshold']:g} (DOTA: > {report['iou_threshold']:g}, "
            "difficult objects ignored as DOTA_devkit does); COCO-style at most "
            f"{report['max_detections']:,} boxes per query. " + "; ".join(parts) + ".")


def error_attribution(run: Run) -> None:
    """Bars of the metric rise per fixed failure kind, and the table behind them."""
    st.header("Error attribution")
    timed = analysis_data.attribution(run.gt, run.pred, run.options)
    left, right = st.columns([3, 2])
    left.plotly_chart(af.attribution_figure(timed.value), key="attribution_chart")
    rows = af.attribution_rows(timed.value)
    labels = {m: af.ATTRIBUTION_METRIC_LABELS[m] for m in rows[0] if m not in ("kind", "errors")}
    right.dataframe(pd.DataFrame(rows).rename(columns=labels), hide_index=True,
                    placeholder="—", width="stretch",
                    column_config={v: NUMBER for v in labels.values()})
    right.caption("Each kind is fixed by an oracle alone, then the key metrics are recomputed "
                  f"(TIDE-style); computed in {timed.seconds:.2f} s.")


def submissions_folder_ui(run: Run, label: str, name: str, column: Any = st) -> Any:
    """The folder of submissions a page ranks or audits: the one typed (session key
    ``name``, in the page's link), else ``predictions/`` beside the ground truth (shown as
    the field's placeholder, and followed when the ground truth changes). ``None``, with
    the reason on the page, when it is outside the data roots or there is none."""
    default = Path(run.gt[0]).parent / "predictions"  # an uploaded GT has none: type a folder
    try:
        default_text = str(default.relative_to(state.APP_ROOT)) if default.is_dir() else ""
    except ValueError:
        default_text = str(default)
    typed = column.text_input(label, placeholder=default_text or "a folder of *.json files",
                              help="Empty: predictions/ beside the ground truth.",
                              **state.bind(name)).strip()
    text = typed or default_text
    return state.confined(text, label) if text else None


def refused_ui(listed: Any) -> None:
    """One warning per file of a submissions folder the gate refused (named, never read:
    nothing of its content can be shown)."""
    for name, why in listed.refused:
        st.warning(f"{state.code(name)} left out: {views.md_text(why)}.")


def leaderboard_frame(report: dict[str, Any], by: str) -> pd.DataFrame:
    """Models with their key metrics, ordered and ranked by the metric ``by``."""
    order = report["ranking"][by]
    rows = [{"rank": order.index(name) + 1, "model": name,
             **{af.LEADERBOARD_METRIC_LABELS[m]: values[i]
                for m, values in report["metrics"].items()}}
            for i, name in enumerate(report["models"])]
    return pd.DataFrame(rows).sort_values("rank")


def leaderboard_table(report: dict[str, Any]) -> str:
    """The ranking table; returns the metric it is ranked by."""
    metrics = list(report["metrics"])
    first = standings.default_metric(report)  # not a modality no submission has
    by = st.selectbox("Rank by", metrics, format_func=af.LEADERBOARD_METRIC_LABELS.get,
                      index=metrics.index(first) if first in metrics else 0,
                      key="lb_rank_by")
    frame = leaderboard_frame(report, by)
    st.dataframe(frame, hide_index=True, placeholder="—", width="stretch",
                 column_config={af.LEADERBOARD_METRIC_LABELS[m]: NUMBER for m in metrics})
    st.caption("Click a column header to sort by it. Empty cells are undefined or not "
               "submitted; both rank last.")
    for metric, names in report.get("not_submitted", {}).items():
        if names:
            st.caption(f"{af.LEADERBOARD_METRIC_LABELS[metric]}: not submitted by "
                       f"{', '.join(map(views.md_text, names))} (ranked last, left out of the "
                       "correlations and the rank intervals).")
    return str(by)


def stability_charts(report: dict[str, Any]) -> None:
    stability = report["stability"]
    if not stability:
        n = len(report["models"])
        st.info("The stability view compares rankings, so it needs at least two submissions "
                f"of a metric's modalities: {n} submission{'' if n == 1 else 's'} ranked.")
        return
    some = next(iter(stability.values()))
    st.caption(f"{some['num_subsets']:,} random category subsets per size (seed "
               f"{some['seed']}), {some['num_categories']} categories with data, top-k with "
               f"k = {some['k']}.")
    a, b = st.columns(2)
    a.plotly_chart(af.stability_figure(stability, "median_spearman",
                                       "Rank stability on category subsets",
                                       "median Spearman ρ (IQR bars)"), key="lb_spearman")
    b.plotly_chart(af.stability_figure(stability, "mean_top_k_recovery",
                                       f"Top-{some['k']} recovery on category subsets",
                                       "mean share of the full top-k"), key="lb_topk")


def mcc_vs_miou(report: dict[str, Any]) -> None:
    block = report["mcc_vs_miou"]
    metrics = report["metrics"]
    if block is None or "presence_mcc" not in metrics or "seg_macro_miou" not in metrics:
        return
    if block["num_models"] < 2:
        st.info("Presence MCC versus segmentation mIoU (a rank correlation) needs two models "
                f"with both defined: {block['num_models']} here.")
        return
    st.subheader("Presence MCC versus segmentation mIoU")
    left, right = st.columns([1, 2])
    left.metric("Spearman ρ (MCC vs mIoU)", views.fmt(block["spearman"]))
    left.caption(f"Over {block['num_models']} models with both defined. A low ρ means that "
                 "recognising absence and segmenting well are different skills.")
    right.plotly_chart(af.rank_scatter(report["models"], metrics["presence_mcc"],
                                       metrics["seg_macro_miou"], block["spearman"]),
                       key="lb_scatter")
