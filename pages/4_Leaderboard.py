"""Leaderboard: every submission of a folder ranked on the sidebar's task, the stability of
the ranking on random category subsets, and the MCC-versus-mIoU rank correlation."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pages.common import analysis_data, analysis_views, sidebar, state

st.set_page_config(page_title="OVEarth Inspector · Leaderboard", layout="wide")
run = sidebar.render()
st.title("Leaderboard")
if run is None:
    st.stop()

default = Path(run.gt[0]).parent / "predictions"  # an uploaded GT has none: type a folder
try:
    default_text = str(default.relative_to(state.APP_ROOT)) if default.is_dir() else ""
except ValueError:
    default_text = str(default)
top = st.columns([3, 1, 1])
folder_text = top[0].text_input("Submissions folder (every *.json in it is ranked)",
                                value=default_text, key=f"lb_folder_{default_text}")
n_subsets = top[1].number_input("Subsets per size", min_value=200, max_value=5000,
                                value=1000, step=100, key="lb_subsets")
seed = top[2].number_input("Seed", min_value=0, value=0, step=1, key="lb_seed")
folder = state.confined(folder_text, "Submissions folder") if folder_text.strip() else None
if folder is None:
    st.info("Type the folder that holds the submissions to rank.")
    st.stop()
preds = analysis_data.prediction_files(folder)
if not preds:
    st.info(f"No submissions (*.json) found in {folder}.")
    st.stop()

options = analysis_data.leaderboard_options(run.options)
with st.spinner(f"Ranking {len(preds)} submissions…"):
    board = analysis_data.leaderboard(run.gt, preds, options, int(n_subsets), int(seed))
report = board.report
state.sync_url()
st.caption(f"**{state.TASK_LABELS[options.task]}** (change the task in the sidebar) · "
           f"{len(report['models'])} of {len(preds)} submissions ranked on modalities "
           f"{', '.join(options.modalities)}, every box (no score filter), IoU threshold "
           f"{options.iou_threshold:g} · ranked in {board.seconds:.2f} s")
for name, why in board.skipped:
    st.warning(f"`{name}` left out: {why}.")
if not report["models"]:
    st.stop()

st.header("Ranking")
analysis_views.leaderboard_table(report)
st.header("Category-subset stability")
analysis_views.stability_charts(report)
analysis_views.mcc_vs_miou(report)
