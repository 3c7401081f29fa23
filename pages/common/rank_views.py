"""The Leaderboard's ranks with their uncertainty (issue 37): the settings, the table of rank
intervals, groups and tests against the leader (Holm), the two figures, Friedman's test, the
best-of-N note and the per-category table (Benjamini-Hochberg)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from ovearth_core.analysis.rank_stats import rank_notes
from ovearth_core.options import ALPHA_BOUNDS, MIN_COUNT_BOUNDS, RANK_RESAMPLE_BOUNDS
from ovearth_core.viz import analysis_figures as af
from ovearth_core.viz import rank_figures as rf

from . import analysis_data, data, state, views

BLOCK_LABELS = {"image": "images", "query": "queries"}


def settings_ui(gt: data.FileKey) -> str:
    """The statistics' settings (session keys of :class:`~ovearth_core.options.Options`'
    fields, read by the sidebar's options); returns the resampling unit."""
    with st.expander("Rank uncertainty settings", expanded=False):
        cols = st.columns(4)
        cols[0].number_input("Rank resamples", min_value=RANK_RESAMPLE_BOUNDS[0],
                             max_value=RANK_RESAMPLE_BOUNDS[1], step=100,
                             **state.bind("rank_resamples"))
        cols[1].number_input("α (tests; intervals at 1 − α)", min_value=ALPHA_BOUNDS[0],
                             max_value=ALPHA_BOUNDS[1], step=0.01, format="%.3f",
                             **state.bind("alpha"))
        cols[2].number_input("Minimum count (images or queries, as resampled) to test a "
                             "category or slice", min_value=MIN_COUNT_BOUNDS[0],
                             max_value=MIN_COUNT_BOUNDS[1], step=1, **state.bind("min_count"))
        cols[3].radio("Friedman blocks", list(BLOCK_LABELS), horizontal=True,
                      format_func=BLOCK_LABELS.get,
                      **state.bind("friedman_blocks", list(BLOCK_LABELS)))
        return analysis_data.unit_picker(gt, auto="image")


def rank_frame(ranks: dict[str, Any]) -> pd.DataFrame:
    """One row per submission, best first: rank, interval, share ranked first, groups,
    leader − submission with its interval, p and Holm's p."""
    level = round(100 * (1 - ranks["alpha"]))
    rows = []
    for i, name in enumerate(ranks["models"]):
        lo, hi = ranks["diff_low"][i], ranks["diff_high"][i]
        rows.append({
            "rank": ranks["rank"][i], "submission": name, "value": ranks["value"][i],
            f"rank {level} % interval": _span(ranks["rank_low"][i], ranks["rank_high"][i]),
            "ranked first": _share(ranks["first_share"][i]),
            "group": ranks["groups"][i],
            "leader − this": ranks["diff"][i],
            f"{level} % interval": None if lo is None else f"[{lo:.3f}, {hi:.3f}]",
            "p (paired bootstrap)": af.p_text(ranks["p"][i]),
            "p (Holm)": af.p_text(ranks["p_holm"][i])})
    return pd.DataFrame(rows)


def _span(low: float | None, high: float | None) -> str | None:
    return None if low is None else f"{low:g}–{high:g}"


def _share(share: float | None) -> str | None:
    return None if share is None else f"{100 * share:.0f} %"


def category_frame(categories: dict[str, Any]) -> pd.DataFrame:
    """One row per category: the two submissions' values, their difference, its interval,
    p and Benjamini-Hochberg's q (``—`` below the minimum count)."""
    a, b = categories["a"], categories["b"]
    units = BLOCK_LABELS[categories["unit"]]
    return pd.DataFrame([{
        "category": r["category"], "queries": r["num_queries"], units: r["num_units"],
        a: r["a"], b: r["b"], "leader − runner-up": r["diff"],
        "interval": None if r["diff_low"] is None else
        f"[{r['diff_low']:.3f}, {r['diff_high']:.3f}]",
        "p (paired bootstrap)": af.p_text(r["p"]), "q (Benjamini–Hochberg)": af.p_text(r["q"])}
        for r in categories["rows"]])


def section(report: dict[str, Any], metric: str) -> None:
    """The ranks with their uncertainty of ``metric`` (the table's "Rank by")."""
    label = af.LEADERBOARD_METRIC_LABELS.get(metric, metric)
    ranks = report.get("uncertainty", {}).get(metric)
    if ranks is None:
        st.info(f"{label}: no rank intervals. They need at least two submissions of the "
                "metric's modality.")
        return
    unit = BLOCK_LABELS[ranks["unit"]]
    level = round(100 * (1 - ranks["alpha"]))
    st.caption(f"{label}: {ranks['n_resamples']:,} resamples of the {ranks['num_units']:,} "
               f"{unit} (seed {ranks['seed']}; {_resampled(ranks)}). Rank interval: the "
               f"{level} % "
               "percentile interval of the ranks; a letter is a group of submissions whose "
               "intervals share a rank (no common letter: told apart). Leader − this: "
               "paired bootstrap on the same resamples, p-values corrected by Holm's method "
               f"over the {len(ranks['models']) - 1} comparisons with the leader.")
    for note in rank_notes(ranks):
        st.warning(views.md_text(note), icon=":material/warning:")
    frame = rank_frame(ranks)
    st.dataframe(frame, hide_index=True, placeholder="—", width="stretch", column_config={
        "value": _number(), "leader − this": _number()})
    if "skipped" not in ranks:
        st.plotly_chart(rf.rank_interval_figure(ranks, label), width="stretch",
                        key="lb_rank_intervals")
    best = ranks["best_of_n"]
    if best["best"] is not None and best["optimism"] is not None:
        st.info(f"The best of {best['num_models']} scores ({best['best']:.3f}, "
                f"{views.md_text(ranks['models'][0])}) is an optimistic estimate of the state "
                f"of the art: picking the top of many noisy scores favours the lucky. On "
                f"resampled {unit}, the best score averages {best['optimism']:+.4f} against "
                f"it, and the leader ranks first (alone or tied) in "
                f"{_share(ranks['first_share'][0])} of the resamples.", icon=":material/info:")
    _friedman(ranks["friedman"], label)
    _categories(ranks.get("categories"), label, unit)


def _resampled(ranks: dict[str, Any]) -> str:
    """What a resample recomputes: an additive metric's per-unit sums, or AP (issue 50)."""
    if ranks["friedman"].get("num_blocks") is None:  # an AP metric (rank_stats.AP_NO_BLOCKS)
        return ("each submission's boxes ranked and matched once, its AP recomputed with "
                f"each query weighted by how often its {ranks['unit']} is drawn")
    return f"each submission's matching reused, only its per-{ranks['unit']} sums drawn again"


def _number() -> Any:
    return st.column_config.NumberColumn(format="%.3f")


def _friedman(friedman: dict[str, Any], label: str) -> None:
    st.subheader("Friedman test and critical-difference diagram")
    blocks = BLOCK_LABELS[friedman["blocks"]]
    if friedman.get("num_blocks") is None:  # an AP metric: no value per block
        st.info(f"{friedman['skipped']}.")
        return
    if "skipped" in friedman:
        st.info(f"{friedman['skipped']}: {friedman['num_blocks']:,} of "
                f"{friedman['num_units']:,} {blocks} have {label} defined for every "
                "submission.")
        return
    if friedman.get("warning"):
        st.warning(views.md_text(friedman["warning"]), icon=":material/warning:")
    st.caption(f"Friedman χ² = {friedman['statistic']:.2f}, p {af.p_is(friedman['p'])} over "
               f"{friedman['num_blocks']:,} {blocks} (those of the {friedman['num_units']:,} "
               f"where every submission's {label} is defined), average ranks per "
               f"{friedman['blocks']} (1 = best). Nemenyi's critical difference at α = "
               f"{friedman['alpha']:g}: {friedman['cd']:.3f}; a bar joins submissions it "
               "cannot tell apart (scikit-posthocs' pairwise p-values).")
    st.plotly_chart(rf.critical_difference_figure(friedman, label), width="stretch",
                    key="lb_cd_diagram")


def _categories(categories: dict[str, Any] | None, label: str, unit: str) -> None:
    if not categories:
        return
    st.subheader(f"Per category: {views.md_text(categories['a'])} against "
                 f"{views.md_text(categories['b'])}")
    tested = sum(r["q"] is not None for r in categories["rows"])
    st.caption(f"{label} of the leader and the runner-up on each category's queries, with a "
               f"paired bootstrap over its {unit}; q-values by Benjamini–Hochberg over the "
               f"{tested} categories tested (those spanning at least "
               f"{categories['min_count']} {unit}, the minimum count; — below: a bootstrap "
               "over one or two images says nothing).")
    for note in (categories.get("warning"), categories.get("resolution_note")):
        if note:
            st.warning(views.md_text(note), icon=":material/warning:")
    frame = category_frame(categories)
    st.dataframe(frame, hide_index=True, placeholder="—", width="stretch", column_config={
        c: _number() for c in frame.columns[3:6]})
