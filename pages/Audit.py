"""Audit: label errors suspected from the consensus of the folder's submissions (issue 36;
docs/audit.md), each with its picture and votes; confirm or reject them into the review
sidecar, then write the ground truth with the confirmed ones fixed and see the submissions
ranked on both."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ovearth_core.audit import MODALITIES
from ovearth_core.audit.fix import suspect_key
from pages.common import analysis_data, analysis_views, audit_data, audit_views, state, views
from pages.common.run import current, in_frame


def inputs_ui(run: Any) -> tuple[tuple, str, int]:
    cols = st.columns([3, 2, 1])
    folder = analysis_views.submissions_folder_ui(
        run, "Submissions folder (every *.json in it votes)", "audit_folder", cols[0])
    modality = cols[1].radio("Geometry audited", MODALITIES, horizontal=True,
                             **state.bind("audit_modality", MODALITIES))
    shown = int(cols[2].number_input("Suspects shown", 1, 200, **state.bind("audit_shown")))
    state.sync_url(**state.audit_params())
    listed = analysis_data.prediction_files(folder) if folder is not None else None
    if listed is not None:
        analysis_views.refused_ui(listed)
    preds = listed.keys if listed is not None else ()
    if len(preds) < 2:
        st.info("Type a folder that holds at least two submissions (\\*.json).")
        st.stop()
    return preds, modality, shown


def main() -> None:
    run = current()
    views.evaluated_caption(run)
    preds, modality, shown = inputs_ui(run)
    options = audit_data.audit_options(run.options, modality)
    with st.spinner(f"Auditing with {len(preds)} submissions…"):
        audited = audit_data.audited(run.gt, preds, options)
    if audited.result is None:
        st.error(views.md_text("\n".join(map(str, audited.problems))))
        st.stop()
    if error := st.session_state.pop("_audit_error", None):
        st.error(views.md_text(error))
    result = audited.result
    for w in result["warnings"]:
        st.warning(views.md_text(w["message"]))
    suspects = result["suspects"]
    decided = audit_data.decisions(run.gt, run.options.task, suspects)
    st.caption(audit_data.summary(result, decided))
    for s in suspects[:shown]:
        audit_views.suspect_ui(run, s, decided.get(suspect_key(s)))
    confirmed = audit_data.confirmed(suspects, decided)
    audit_views.what_if_ui(run, preds, options, confirmed)


in_frame(main)
