"""One annotation across the three tasks: its vocabulary, referring and reasoning queries
side by side (did the model fail the object or the language?)."""

from __future__ import annotations

import streamlit as st

from pages.common import analysis_data, annotation_views, state, views
from pages.common.run import current, in_frame


def main() -> None:
    run = current()
    views.evaluated_caption(run, "all three tasks, with the modalities of the sidebar's task")
    evaluations = analysis_data.form_evaluations(run.gt, run.pred, run.options)
    if annotation_views.problems(run, evaluations):
        st.stop()
    joined = analysis_data.joined(run.gt, run.pred, run.options)
    if not joined:
        st.info("No annotation has a positive query in any task.")
        st.stop()
    ann_id = annotation_views.picker(joined)
    state.sync_url(ann=ann_id)
    annotation_views.render(run, evaluations, joined[ann_id])


in_frame(main)
