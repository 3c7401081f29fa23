"""Leaderboard: every submission of a folder ranked on the sidebar's task, the ranks with
their uncertainty (intervals, groups, tests against the leader, Friedman and Nemenyi, per
category), the stability of the ranking on random category subsets, and the MCC-versus-mIoU
rank correlation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from pages.common import analysis_data, analysis_views, links, rank_views, state, views
from pages.common.run import current, in_frame


def main() -> None:
    run = current()
    if not run.evaluation.rows:
        st.info(f"The ground truth has no queries for the task "
                f"**{state.TASK_LABELS[run.options.task]}**: nothing to rank. Pick another task "
                "in the sidebar.")
        st.stop()
    listed, n_subsets, seed, unit = inputs_ui(run)
    preds = listed.keys
    options = analysis_data.leaderboard_options(run.options)
    shared = shared_ui(run, options, preds)
    bar = st.progress(0.0, text=f"Ranking {len(preds)} submissions…")

    def _progress(done: int, total: int, name: str, cached: bool) -> None:
        bar.progress(done / max(total, 1),
                     text=f"Evaluated {done} of {total} submissions"
                          f" · {name}{' (cached)' if cached else ''}")

    with_ap = st.toggle("Also rank by AP and mAP (COCO's and DOTA's, per category; each "
                        "submission's AP is computed: seconds each on the full benchmark)",
                        **state.bind("lb_ap"))
    board = analysis_data.leaderboard(run.gt, preds, options, n_subsets, seed,
                                      shared=shared, progress=_progress, with_ap=with_ap,
                                      unit=unit)
    bar.empty()
    state.sync_url(**state.leaderboard_params())
    caption_ui(board, options, listed)
    if not board.report["models"]:
        st.stop()
    st.header("Ranking")
    by = analysis_views.leaderboard_table(board.report)
    if with_ap:
        st.caption(f"AP and mAP: every box; {views.ap_options(options)} (the sidebar's AP "
                   "options). They rank boxes across queries, so they have no category-subset "
                   "stability below.")
    st.header("Ranks with their uncertainty")
    rank_views.section(board.report, by)
    st.header("Category-subset stability")
    analysis_views.stability_charts(board.report)
    analysis_views.mcc_vs_miou(board.report)


def inputs_ui(run: Any) -> tuple[Any, int, int, str]:
    """The submissions folder, the stability's subsets and seed, the rank settings (the
    page stops, saying why, without submissions)."""
    top = st.columns([3, 1, 1])
    folder = analysis_views.submissions_folder_ui(
        run, "Submissions folder (every *.json in it is ranked)", "lb_folder", top[0])
    n_subsets = top[1].number_input("Subsets per size", min_value=links.LB_SUBSET_BOUNDS[0],
                                    max_value=links.LB_SUBSET_BOUNDS[1], step=100,
                                    **state.bind("lb_subsets"))
    seed = top[2].number_input("Seed", min_value=0, max_value=2**32 - 1, step=1,
                               **state.bind("lb_seed"))
    unit = rank_views.settings_ui(run.gt)
    if folder is None:
        st.info("Type the folder that holds the submissions to rank.")
        st.stop()
    listed = analysis_data.prediction_files(folder)
    if not listed.keys:
        analysis_views.refused_ui(listed)
        st.info(f"No submissions (\\*.json) found in {state.code(str(folder))}.")
        st.stop()
    return listed, int(n_subsets), int(seed), unit


def shared_ui(run: Any, options: Any, preds: list[Any]) -> tuple[Any, Any] | None:
    """The sidebar's submission ranked with its own evaluation when the options are the
    same; otherwise it is evaluated again for the ranking, and the page says why."""
    if options == run.options:
        return run.pred, run.evaluation
    if run.pred in preds:
        differ = [f"{label} {ours} here, {theirs} in the sidebar"
                  for label, ours, theirs in (
                      ("modalities", ", ".join(options.modalities),
                       ", ".join(run.options.modalities)),
                      ("score threshold", options.score_threshold, run.options.score_threshold),
                      ("IoU threshold", options.iou_threshold, run.options.iou_threshold),
                      ("box format", options.bbox_format, run.options.bbox_format))
                  if ours != theirs]
        st.info(f"{state.code(Path(run.pred[0]).stem)} (the sidebar's submission) is ranked "
                f"under the leaderboard's options, not the sidebar's: {'; '.join(differ)}.")
    return None


def caption_ui(board: Any, options: Any, listed: Any) -> None:
    """What was ranked, under which options, how long it took and where from."""
    report = board.report
    where = [f"{board.num_cached} from the result cache" if board.num_cached else "",
             f"{state.code(board.shared)} shared with the sidebar" if board.shared else ""]
    st.caption(f"**{state.TASK_LABELS[options.task]}** (change the task in the sidebar) · "
               f"{len(report['models'])} of {listed.total} submissions ranked on modalities "
               f"{', '.join(options.modalities)}, every box (no score filter), IoU threshold "
               f"{options.iou_threshold:g} · ranked in {board.seconds:.2f} s "
               f"({f'{board.workers} worker processes' if board.workers else 'in this process'}"
               f"{''.join(f'; {w}' for w in where if w)})"
               f" · {board.cache_note} · {views.ap_options(options)}")
    analysis_views.refused_ui(listed)
    for name, why in board.skipped:
        st.warning(f"{state.code(name)} left out: {views.md_text(why)}.")


in_frame(main)
