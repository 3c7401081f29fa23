"""Slices: every key metric per value of a per-query attribute, with counts and bootstrap
intervals, and a click-through to the explorer filtered to one slice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from ovearth_core.analysis import slices
from ovearth_core.errors import OVEarthInputError
from pages.common import analysis_data, data, slice_views, state, tags, views
from pages.common.run import current, in_frame


def main() -> None:
    run = current()
    views.evaluated_caption(run)
    attribute = slice_views.pickers(run)
    if attribute is None:
        st.stop()
    taxonomy = taxonomy_ui(run) if attribute == "group" else None
    b = slice_views.paired_b(run)
    unit = analysis_data.unit_picker(run.gt)
    review_tags = tuple(sorted((q, tuple(sorted(t))) for q, t in tags.query_tags(run).items()))
    if attribute == slices.QUERY_FORM:
        slice_views.query_form_caption()
        for pred, opts in [(run.pred, run.options), *([b] if b else [])]:
            if slice_views.form_problems(run, analysis_data.form_evaluations(run.gt, pred, opts),
                                         Path(pred[0])):
                st.stop()
    with st.spinner("Slicing…"):
        table = (analysis_data.query_form_slices(run.gt, run.pred, run.options, 1000, 0, b, unit)
                 if attribute == slices.QUERY_FORM else
                 analysis_data.slices(run.gt, run.pred, run.options, attribute,
                                      None if taxonomy is None else tuple(sorted(taxonomy.items())),
                                      review_tags, 1000, 0, b, unit=unit,
                                      images_dir=str(run.images_dir)))
    state.sync_url(**state.slices_params())
    if attribute == slices.QUERY_FORM and not table.num_queries:
        st.info("No annotation has a positive query in all three tasks: nothing to compare.")
        st.stop()
    captions_ui(table, attribute)
    if not table.values or not table.values[0].metrics:
        st.info("No key metric to slice: the submission has no evaluated modality.")
        st.stop()
    metric = slice_views.metric_picker(table)
    slice_views.render(table, metric)
    slice_views.click_through(table, taxonomy, sorted({r["category"] for r in run.evaluation.rows}))


def taxonomy_ui(run: Any) -> dict[str, str]:
    """The taxonomy slicing by category group needs (the page stops, saying why, without)."""
    path = slice_views.taxonomy_path(run.gt[0])
    if not path:
        st.info("Slicing by category group needs a taxonomy: type a JSON file mapping "
                "category → group (the synthetic benchmark writes taxonomy.json).")
        st.stop()
    where = state.confined(path, "Taxonomy JSON")
    if where is None:
        st.stop()
    try:
        return analysis_data.taxonomy(data.file_key(where))
    except OVEarthInputError as err:
        st.error(f"The taxonomy could not be read:\n\n{views.md_text(str(err))}")
        st.stop()


def captions_ui(table: Any, attribute: str) -> None:
    """What the table holds: slices, bootstrap, the tests of B − A and their correction."""
    unit = "images" if table.unit == "image" else "queries"
    st.caption(f"{len(table.values)} slices of {table.num_queries} queries · percentile bootstrap "
               f"over each slice's {unit}, {table.n_resamples} resamples, seed {table.seed}"
               + (" · a query with several tags is in several slices"
                  if attribute == "tag" else ""))
    if attribute == "gt_size":
        slice_views.gt_size_caption()
    if table.paired:
        st.caption(f"Tests of B − A: a paired-bootstrap p-value for each slice spanning at "
                   f"least {table.min_count} {unit} (the minimum count, set on the "
                   "Leaderboard's rank settings or by the link's minn), and q-values by "
                   "Benjamini–Hochberg over the slices tested (many tests at once: the false "
                   "discovery rate).")
    slice_views.few_units(table)


in_frame(main)
