"""Query explorer: every query of the task, filterable, worst first, with a viewer."""

from __future__ import annotations

import streamlit as st

from ovearth_core.analysis import diagnose
from pages.common import explorer, state, tags, views
from pages.common.run import current, in_frame


def main() -> None:
    run = current()
    task, rows = run.options.task, run.evaluation.rows
    views.evaluated_caption(run)
    with st.expander("Filters", expanded=True):
        chosen = explorer.filters(rows, open_vocab=task == "vocabulary",
                                  review_tags=tags.query_tags(run), run=run)
        if st.button("Reset filters"):
            state.set_filters()
            st.rerun()
    shown = diagnose.filter_rows(rows, **chosen)
    ids = [r["query_id"] for r in shown]
    query_id = explorer.resolve_selection(task, ids, {r["query_id"] for r in rows})
    explorer.table(task, shown, len(rows), run)
    if query_id is None:
        state.sync_url()
        st.info("No query matches the filters. Loosen them, or press “Reset filters”.")
        st.stop()
    st.subheader("Viewer")
    explorer.viewer_fragment(run, task, shown)


in_frame(main)
