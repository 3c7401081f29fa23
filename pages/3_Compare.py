"""Compare two submissions (A = the sidebar's, B chosen here): metrics with CIs, agreement,
per-query and per-category differences, overlays, and the HTML report as a download."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pandas as pd
import streamlit as st

from ovearth_core import report
from ovearth_core.analysis.compare import Comparison, biggest_differences, compare_results
from ovearth_core.errors import OVEarthInputError
from ovearth_core.labels import METRIC_LABELS, MODALITY_LABELS
from ovearth_core.report import draw as report_draw
from pages.common import data, sidebar, state, views

st.set_page_config(page_title="OVEarth Inspector · Compare", layout="wide")
run = sidebar.render()
st.title("Compare two submissions")
if run is None:
    st.stop()


@st.cache_resource(show_spinner=False, max_entries=8)
def _comparison(gt: data.FileKey, a: data.FileKey, b: data.FileKey, options_a: data.Options,
                options_b: data.Options) -> Comparison:
    return compare_results(data.evaluate(gt, a, options_a).results,
                           data.evaluate(gt, b, options_b).results)


# B is evaluated with A's modalities (resolved when the sidebar says auto), so that the
# per-query rows pair up; A keeps the sidebar's options (its cached evaluation).
o = replace(run.options, modalities=tuple(run.evaluation.results["config"]["modalities"]))
others = [p for p in state.submissions(st.session_state["gt_path"])  # symlinks resolved
          if state.resolve(p).resolve() != Path(run.pred[0]).resolve()]
if not st.session_state.get("cmp_b_path") and others:
    st.session_state["cmp_b_path"] = others[0]  # remembered across pages from here on
b_text = st.selectbox("Submission B (type a path to use another file)", others,
                      accept_new_options=True, key="cmp_b_path",
                      format_func=lambda p: Path(p).stem if p in others else p)
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
with st.spinner("Bootstrapping…"):
    try:
        cmp = _comparison(run.gt, run.pred, b_key, run.options, o)
    except OVEarthInputError as err:
        views.problems_report(err.problems, Path(run.gt[0]), b_path)
        st.stop()
names = [Path(run.submission_name).stem, b_path.stem]
state.sync_url(task=o.task)
st.caption(f"**A** = {names[0]} · **B** = {names[1]} · {state.TASK_LABELS[o.task]} · "
           f"modalities {', '.join(o.modalities)} · {cmp.num_queries:,} queries · "
           f"Δ = B − A with {cmp.confidence:.0%} paired-bootstrap intervals "
           f"({cmp.n_resamples:,} resamples, seed {cmp.seed})")

st.header("Key metrics")
st.dataframe(pd.DataFrame([{
    "modality": MODALITY_LABELS[m.modality],
    "metric": METRIC_LABELS.get(m.metric, m.metric), "A": m.a, "B": m.b,
    "Δ B − A": m.diff, "CI low": m.ci_low, "CI high": m.ci_high} for m in cmp.metrics]),
    hide_index=True, width="stretch",
    column_config={c: st.column_config.NumberColumn(format="%.4f")
                   for c in ("A", "B", "Δ B − A", "CI low", "CI high")})
left, right = st.columns(2)
left.plotly_chart(report_draw.comparison_bars(cmp, names), key="cmp_bars")
right.plotly_chart(report_draw.difference_forest(cmp, names), key="cmp_forest")

st.header("Agreement and McNemar's exact test")
st.dataframe(pd.DataFrame([{
    "table": ag.name, "both right": ag.both_right, f"only {names[0]} right": ag.only_a,
    f"only {names[1]} right": ag.only_b, "both wrong": ag.both_wrong,
    "McNemar p": ag.p_value} for ag in cmp.agreements]), hide_index=True, width="stretch")

st.header("Per-query differences")
keys = [k for k, v in cmp.query_diffs.items() if v]
if keys:
    key = st.radio("Modality", keys, horizontal=True, key="cmp_modality",
                   format_func=MODALITY_LABELS.get)
    diffs = cmp.query_diffs[key]
    left, right = st.columns([2, 3])
    left.plotly_chart(report_draw.query_scatter(diffs, key, names), key="cmp_scatter")
    extremes = [d for side in biggest_differences(diffs, 10) for d in side]
    right.dataframe(pd.DataFrame([{"query": d.sample_id, "text": d.phrase,
                                   "category": d.category, "A": d.a, "B": d.b, "Δ": d.diff}
                                  for d in extremes]), hide_index=True, width="stretch")
    if extremes:
        query_id = st.selectbox("Overlay of", [d.sample_id for d in extremes], key="cmp_query")
        pair = []
        for pred, opts in ((run.pred, run.options), (b_key, o)):
            loaded = data.samples(run.gt, pred, o.task, opts.modalities, o.score_threshold,
                                  o.bbox_format)
            index = next(i for i, s in enumerate(loaded) if s.sample_id == query_id)
            pair.append((loaded[index], data.evaluate(run.gt, pred, opts).results[
                "per_sample"][index]))
        first = pair[0][0]
        image_args = (str(run.images_dir), first.image_path, first.width, first.height,
                      data.image_stamp(run.images_dir, first.image_path))
        display = data.display_image(*image_args)
        region = report_draw.shared_region([sample for sample, _ in pair])
        pixels = data.detail_image(*image_args, region) or display
        if display.notice:
            st.caption(display.notice)
        for col, name, (sample, row) in zip(st.columns(2), names, pair, strict=True):
            image = report_draw.overlay_thumbnail(pixels, sample, row, max_side=480,
                                                  region=region)
            col.image(image, caption=f"{name} · {query_id}")
            buf = io.BytesIO()
            image.save(buf, format="PNG")
            col.download_button(f"Download {name} overlay (PNG)", buf.getvalue(),
                                file_name=f"{query_id}_{name}.png", mime="image/png",
                                key=f"dl_{name}")

st.header("Per category")
st.dataframe(pd.DataFrame([{"category": c.category, "queries": c.num_queries,
                            **{f"{n} {s}": v[i] for n, v in c.values.items()
                               for i, s in enumerate(("A", "B", "Δ"))}}
                           for c in cmp.categories]), hide_index=True, width="stretch")


def _report_html() -> bytes:
    built = report.build_report_data(
        run.gt[0], [run.pred[0], b_key[0]], o.modalities, run.images_dir, [o.task],
        o.iou_threshold, o.score_threshold, o.bbox_format, names=names)
    return report.render_html(built).encode("utf-8")


st.download_button("Download the HTML report (A vs B)", _report_html,
                   file_name=f"ovearth_{o.task}_{names[0]}_vs_{names[1]}.html",
                   mime="text/html", key="dl_report", on_click="ignore")
