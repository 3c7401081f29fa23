"""Compare two submissions (A = the sidebar's, B chosen here): metrics with CIs, agreement,
flipped presence, per-query and per-category differences, overlays side by side, and the
HTML report as a download.

The first screen draws no plotly chart and no data grid (benchmarks/README.md, "Issue 49:
first paint"): the small tables are static (``st.table``), the long ones (every query, every
category, the flipped queries) in lazy expanders and the three charts in a lazy "Charts" tab
(``on_change="rerun"``), built and sent only once opened."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import streamlit as st

from ovearth_core import report
from ovearth_core.analysis.ap_bootstrap import ap_run
from ovearth_core.analysis.compare import (
    DEFAULT_AP_RESAMPLES,
    Comparison,
    MetricDiff,
    ap_differences,
    compare_results,
)
from ovearth_core.errors import OVEarthInputError
from ovearth_core.labels import MODALITY_LABELS
from ovearth_core.report import draw as report_draw
from pages.common import analysis_data, analysis_views, compare_views, data, state, tags, views
from pages.common.run import current, in_frame

# Compare's tabs: the tables, overlays and AP (the first screen), then the charts.
TABS = ("Numbers and tables", "Charts")


@st.cache_resource(show_spinner=False, max_entries=8)
def _comparison(gt: data.FileKey, a: data.FileKey, b: data.FileKey, options_a: data.Options,
                options_b: data.Options, unit: str) -> Comparison:
    return compare_results(data.evaluate(gt, a, options_a).results,
                           data.evaluate(gt, b, options_b).results, unit=unit)


@st.cache_resource(show_spinner=False, max_entries=8)
def _ap_comparison(gt: data.FileKey, a: data.FileKey, b: data.FileKey, options_a: data.Options,
                   options_b: data.Options, unit: str) -> list[MetricDiff]:
    """AP of every box of A and B (the Overview's numbers, at the options' AP settings)
    with paired intervals over the key metrics' first resamples."""
    runs = []
    for key, opts in ((a, options_a), (b, options_b)):
        every = analysis_data.every_box(opts)
        samples = data.samples(gt, key, every)
        runs.append(ap_run(samples, opts.iou_threshold, samples.modalities,
                           opts.hard_negatives, opts.max_detections, nms_ap=opts.nms_ap,
                           aitod=opts.aitod,
                           report=analysis_data.average_precision(gt, key, opts).value))
    return ap_differences(data.evaluate(gt, a, options_a).results,
                          data.evaluate(gt, b, options_b).results, *runs, unit=unit)


def main() -> None:
    run = current()
    # B is evaluated with A's modalities (resolved when the sidebar says auto), so that the
    # per-query rows pair up; A keeps the sidebar's options (its cached evaluation).
    o = replace(run.options, modalities=run.config.modalities)
    b_text, b_path, b_key, evaluation_b = b_ui(run, o)
    unit = analysis_data.unit_picker(run.gt)
    with st.spinner("Bootstrapping…"):
        try:
            cmp = _comparison(run.gt, run.pred, b_key, run.options.evaluator(), o.evaluator(), unit)
        except OVEarthInputError as err:
            views.problems_report(err.problems, Path(run.gt[0]), b_path)
            st.stop()
    names = [Path(run.submission_name).stem, b_path.stem]
    state.sync_url(b=b_text)
    views.evaluated_caption(run, f"**A** = {names[0]} · **B** = {names[1]} "
                                 f"({state.code(b_text)} · sha256 {data.digest(b_key)[:12]})")
    views.coverage_warnings(evaluation_b.view, f"B ({names[1]})")
    st.caption(f"Δ = B − A with {cmp.confidence:.0%} paired-bootstrap intervals "
               f"({cmp.n_resamples:,} resamples, seed {cmp.seed}) over {cmp.num_units:,} "
               f"{'images' if cmp.unit == 'image' else 'queries'} ({cmp.num_queries:,} queries) "
               "· —: not submitted or undefined (no difference or interval)")
    if cmp.warning:
        st.warning(cmp.warning, icon=":material/warning:")
    tables, charts = st.tabs(list(TABS), key="cmp_tab", on_change="rerun")
    if tables.open:
        with tables:
            key_metrics_ui(cmp)
            flipped = agreement_ui(cmp, names)
            per_query_ui(run, cmp, flipped, b_key, o, names)
            categories_ui(cmp)
            if analysis_data.has_boxes(o.modalities):
                average_precision_ui(run, cmp, b_key, b_path, o, evaluation_b, unit)
    if charts.open:
        with charts:
            charts_ui(cmp, names)
    report_ui(run, b_key, o, names)


def b_ui(run: Any, o: Any) -> tuple[str, Path, data.FileKey, Any]:
    """Submission B, chosen and evaluated under A's options (the page stops, saying why,
    when there is none or it does not validate)."""
    b_text = compare_views.choose_b(run)
    if not b_text:
        st.info("Choose a second submission to compare with.")
        st.stop()
    b_path = state.confined(b_text, "Submission B")
    if b_path is None:
        st.stop()
    b_key = data.file_key(b_path)
    evaluation_b = data.evaluate(run.gt, b_key, o)
    if evaluation_b.problems:
        views.problems_report(evaluation_b.problems, Path(run.gt[0]), b_path)
        st.stop()
    return b_text, b_path, b_key, evaluation_b


def key_metrics_ui(cmp: Any) -> None:
    st.header("Key metrics")
    views.static_table(compare_views.metrics_frame(cmp), compare_views.DIFF_FORMATS)


def charts_ui(cmp: Any, names: list[str]) -> None:
    """The "Charts" tab: A and B's key metrics, B − A with its intervals, and the per-query
    scatter of the modality picked (the same choice as the per-query table's)."""
    st.header("Key metrics")
    left, right = st.columns(2)
    left.plotly_chart(report_draw.comparison_bars(cmp, names), key="cmp_bars")
    right.plotly_chart(report_draw.difference_forest(cmp, names), key="cmp_forest")
    key = modality_ui(cmp)
    if key is not None:
        st.plotly_chart(report_draw.query_scatter(cmp.query_diffs[key], key, names),
                        key="cmp_scatter")


def modality_ui(cmp: Any) -> str | None:
    """The modality of the per-query differences (``None`` when no modality has any)."""
    st.header("Per-query differences")
    keys = [k for k, v in cmp.query_diffs.items() if v]
    if not keys:
        return None
    return st.radio("Modality", keys, horizontal=True, format_func=MODALITY_LABELS.get,
                    **state.bind("cmp_modality", keys))


def agreement_ui(cmp: Any, names: list[str]) -> list[str]:
    """Agreement tables with McNemar's tests (Holm), and the queries whose presence flipped."""
    st.header("Agreement and McNemar's exact test")
    views.static_table(compare_views.agreement_frame(cmp, names),
                       compare_views.AGREEMENT_FORMATS)
    st.caption("McNemar p (Holm): the exact p-values corrected by Holm's method over the "
               f"{len(cmp.agreements)} tests of this table (several at once: the chance that "
               "any of them is a false positive stays at the level).")
    st.subheader("Flipped presence")
    return list(compare_views.flipped_presence(cmp, names))


def per_query_ui(run: Any, cmp: Any, flipped: list[str], b_key: data.FileKey, o: Any,
                 names: list[str]) -> None:
    """Per-query differences, and a query's overlays side by side with its review tags."""
    key = modality_ui(cmp)
    candidates = list(flipped)
    if key is not None:
        diffs = sorted(cmp.query_diffs[key], key=lambda d: (-abs(d.diff), d.sample_id))
        with st.expander(f"Every query's difference, largest first ({len(diffs):,} queries; "
                         "the scatter is in the \"Charts\" tab)", key="_w_cmp_diffs_open",
                         on_change="rerun") as box:
            if box.open:
                st.dataframe(compare_views.diffs_frame(diffs), hide_index=True,
                             placeholder="—", width="stretch", height=380,
                             column_config={"explorer": compare_views.LINK})
        candidates = [d.sample_id for d in diffs] + [q for q in flipped
                                                     if q not in {d.sample_id for d in diffs}]
    if candidates:
        query_id = st.selectbox("Overlays side by side of", candidates,
                                **state.bind("cmp_query", candidates))
        compare_views.overlays(run, b_key, o, names, query_id)
        # Built only when opened (issue 49): its nine widgets were a third of the first
        # screen's; the tags live in the review sidecar, so nothing is lost while closed.
        with st.expander("Review: this query's tags and note", key="_w_cmp_review_open",
                         on_change="rerun") as box:
            if box.open:
                tags.panel(run, query_id, key="_rvc", export=False)
                st.caption(f"Predicted objects are {views.md_text(names[0])}'s (A); the tags "
                           "are the benchmark's, shared with the explorer and the gallery.")


def categories_ui(cmp: Any) -> None:
    st.header("Per category")
    with st.expander(f"Each category's A, B and Δ ({len(cmp.categories):,} categories)",
                     key="_w_cmp_categories_open", on_change="rerun") as box:
        if box.open:
            st.dataframe(compare_views.categories_frame(cmp), hide_index=True,
                         placeholder="—", width="stretch")
    st.caption("Differences only. Each category's B − A with a paired-bootstrap test and "
               "Benjamini–Hochberg q-values over the categories (many tests at once): the "
               "Slices page, sliced by category and paired with this B.")


def average_precision_ui(run: Any, cmp: Any, b_key: data.FileKey, b_path: Path, o: Any,
                         evaluation_b: Any, unit: str) -> None:
    """AP of every box of A and B, with paired intervals on request for large runs."""
    st.header("Average precision (every box)")
    ap_a, ap_b = (analysis_data.average_precision(run.gt, key, opts).value
                  for key, opts in ((run.pred, run.options), (b_key, o)))
    boxes = compare_views.box_count(run.view) + compare_views.box_count(evaluation_b.view)
    ap_key = (run.gt, run.pred, b_key, run.options, o, unit)
    wanted = boxes <= compare_views.AUTO_AP_BOXES or st.session_state.get("_ap_ci") == ap_key
    if not wanted and st.button(f"Bootstrap the AP intervals ({DEFAULT_AP_RESAMPLES:,} "
                                f"resamples of {boxes:,} boxes)", key="_ap_ci_button"):
        st.session_state["_ap_ci"] = ap_key
        wanted = True
    ap_diffs: list[MetricDiff] = []
    if wanted:
        with st.spinner("Bootstrapping average precision…"):
            try:
                ap_diffs = _ap_comparison(*ap_key)
            except OVEarthInputError as err:
                views.problems_report(err.problems, Path(run.gt[0]), b_path)
                st.stop()
    else:
        st.info(f"AP intervals are computed on request here: each of the "
                f"{DEFAULT_AP_RESAMPLES:,} resamples ranks all {boxes:,} predicted boxes "
                "of A and B again (tens of seconds on the full benchmark). The table shows "
                "A, B and Δ meanwhile.", icon=":material/timer:")
    views.static_table(compare_views.ap_frame(
        ap_a, ap_b, set(run.not_submitted),
        set(evaluation_b.view.coverage.not_submitted_modalities), ap_diffs),
        compare_views.DIFF_FORMATS)
    st.caption(f"Δ = B − A with {cmp.confidence:.0%} paired-bootstrap intervals: the first "
               f"{DEFAULT_AP_RESAMPLES:,} of the key metrics' resamples (seed {cmp.seed}, "
               f"over {'images' if cmp.unit == 'image' else 'queries'}), each ranking the "
               "boxes once and weighting each query by how often it was drawn; a resample "
               "without GT in a category leaves the category out of that resample's mAP "
               "(the resampled mAP of many small categories tends to run high, so its "
               "interval can sit to one side of Δ). "
               f"{views.ap_options(o)} (the sidebar's AP options).")
    if cmp.warning:
        st.warning(f"AP intervals. {cmp.warning}", icon=":material/warning:")
    analysis_views.cap_warnings(ap_a, o.max_detections)  # (A and B: one ground truth)


def report_ui(run: Any, b_key: data.FileKey, o: Any, names: list[str]) -> None:
    """The HTML report of A against B, built when downloaded."""
    def _report_html() -> bytes:
        built = report.build_report_data(run.gt[0], [run.pred[0], b_key[0]], o, run.images_dir,
                                         [o.task], names=names)
        return report.render_html(built).encode("utf-8")

    st.download_button("Download the HTML report (A vs B)", _report_html,
                       file_name=f"ovearth_{o.task}_{names[0]}_vs_{names[1]}.html",
                       mime="text/html", key="dl_report", on_click="ignore")


in_frame(main)
