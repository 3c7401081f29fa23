"""The shared sidebar: data panel (paths or uploads) and evaluation options.

app.py calls :func:`render` once per run, before the page: it initialises state, draws
the panel, runs the (cached) evaluation and returns a :class:`Run`, or shows the
validation report and returns ``None`` so that no page is drawn. The page menu above it
is ``st.navigation``'s (app.py).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ovearth_core.io import BBOX_FORMATS
from ovearth_core.options import MIN_MAX_DETECTIONS
from ovearth_core.types import MODALITIES

from . import data, links, state, tags, views
from .run import Run

IOU_CHOICES = state.IOU_CHOICES
UPLOADED = "(uploaded file)"


def _pick_submission() -> None:
    picked = st.session_state["_w_pick"]
    if picked != UPLOADED:
        state.set_submission(picked)


def _on_upload(role: str) -> None:
    """Store (or, when the user removed it, forget) an upload; callbacks only run on a
    user's change, so the upload survives page switches, which reset the widget."""
    file = st.session_state[f"_up_{role}"]
    st.session_state[f"{role}_upload"] = None if file is None else (
        file.name, str(data.save_upload(file.name, file.getvalue())))


def _upload(role: str, label: str) -> None:
    st.file_uploader(label, type="json", key=f"_up_{role}", on_change=_on_upload,
                     args=(role,))
    current = st.session_state[f"{role}_upload"]
    if current is not None:
        st.caption(f"Using the uploaded **{views.md_text(current[0])}** (not the path above).")
        if st.button("Use the path instead", key=f"_clear_{role}"):
            st.session_state[f"{role}_upload"] = None
            st.rerun()


def _data_panel() -> None:
    ss = st.session_state
    st.text_input("Ground truth JSON", **state.keep("gt_path", then=state.set_ground_truth),
                  help="Path (relative to the app folder or absolute). Its folder's images "
                       "and predictions/*.json come with it.")
    _upload("gt", "…or upload ground truth")
    st.text_input("Images folder", **state.keep("images_dir"),
                  help="image_path of every annotation is resolved inside this folder.")
    # The dropdown always shows the file evaluated: a typed path outside predictions/ and
    # an upload are options of their own, never hidden behind the first listed file.
    found = state.submissions(ss["gt_path"])
    current = UPLOADED if ss["pred_upload"] else ss["pred_path"]
    options = found + [p for p in (current,) if p and p not in found]
    if options:
        ss["_w_pick"] = current if current in options else options[0]
        st.selectbox("Submission", options, key="_w_pick", on_change=_pick_submission,
                     format_func=lambda p: p if p == UPLOADED else Path(p).stem
                     if p in found else f"{Path(p).name} (typed path)")
    st.text_input("Submission path", **state.keep("pred_path", then=state.set_submission))
    _upload("pred", "…or upload a submission")


def _options_panel() -> None:
    st.radio("Task", state.TASKS, format_func=state.TASK_LABELS.get, horizontal=True,
             **state.keep("task", state.TASKS))
    st.toggle("Modalities from the submission (auto)", **state.keep("auto_modalities"),
              help="Evaluate the modalities the submission has non-empty predictions for. "
                   "Turn off to declare them, as official runs do.")
    st.multiselect("Modalities", MODALITIES, disabled=st.session_state["auto_modalities"],
                   **state.keep("modalities", MODALITIES))
    st.select_slider("IoU threshold (box matching)", IOU_CHOICES,
                     **state.keep("iou_threshold", IOU_CHOICES))
    st.checkbox("Filter boxes by score", **state.keep("use_score_threshold"))
    if st.session_state["use_score_threshold"]:
        st.number_input("Score threshold", min_value=0.0, max_value=1.0, step=0.05,
                        **state.bind("score_threshold"))
    st.radio("Predicted bbox format", BBOX_FORMATS, horizontal=True,
             **state.keep("bbox_format", BBOX_FORMATS))
    st.toggle("Masks beyond the spec's cap (100,000,000 pixels)", **state.keep("large_masks"),
              help="Take predicted masks of up to 536,870,911 pixels (iSAID-size scenes). "
                   "The reference toolkit refuses them: off for official runs.")
    st.toggle("Concave oriented boxes (DOTA_devkit)", **state.keep("concave_obb"),
              help="Take concave quadrilaterals (ground truth and predictions), scored as "
                   "their polygons as DOTA_devkit scores them. The spec refuses them: off for "
                   "official runs. A self-crossing vertex order is refused either way.")
    st.markdown("**Average precision** (every box, whatever the score threshold)")
    st.toggle("Hard negatives: boxes on negative queries count as false positives (of the "
              "category their phrase names, in the mAP)", disabled=
              st.session_state["task"] != "vocabulary", **state.keep("ap_hard_negatives"),
              help="Open vocabulary only: referring and reasoning queries have no negatives.")
    nms_ok = st.session_state["task"] == "vocabulary" and st.session_state["ap_hard_negatives"]
    st.toggle("NMS-AP (OVDEval): NMS-mAP after the boxes competing for one object across "
              "phrases are suppressed", disabled=not nms_ok, **state.keep("ap_nms"),
              help="Needs hard negatives (open vocabulary): it suppresses the boxes of "
                   "negative queries that compete with a positive's for one object, so "
                   "those boxes must be ranked. Off for official runs.")
    st.toggle("AI-TOD's protocol: mAP of very tiny and tiny objects, 1,500 boxes, oLRP",
              **state.keep("ap_aitod"),
              help="AI-TOD's size ranges and caps, and the optimal LRP (lower is better).")
    st.number_input("COCO detection cap: boxes kept per query (COCOeval's maxDets; 100 is "
                    "COCO's, AI-TOD uses 1500)", min_value=MIN_MAX_DETECTIONS,
                    max_value=links.MAX_BOXES, step=100, **state.keep("ap_max_detections"))


def _saved_views(run: Run) -> None:
    """The benchmark's saved views (its review sidecar), each a link; save the current one."""
    st.subheader("Saved views")
    for view in tags.saved_views(run):
        st.markdown(tags.view_link(view))
    name = st.text_input("Save this view as", key="_view_name")
    if st.button("Save view") and name.strip():
        tags.save_view(run, name)
        st.rerun()
    names = [v.name for v in tags.saved_views(run)]
    if not names:
        return
    # Built only when opened (issue 49: every page's first paint draws the sidebar); its
    # widgets hold no option, only what to rename or delete next.
    with st.expander("Manage saved views", key="_w_manage_views_open",
                     on_change="rerun") as box:
        if box.open:
            picked = st.selectbox("Saved view", names, key="_view_pick")
            new = st.text_input("New name", key="_view_new_name")
            cols = st.columns(2)
            done = None
            if cols[0].button("Rename", key="_view_rename") and new.strip():
                done = tags.rename_view(run, picked, new.strip())
            if cols[1].button("Delete", key="_view_delete"):
                done = tags.delete_view(run, picked)
            if done:
                st.rerun()
            if done is False:
                tags.show_error()


def current_options() -> data.Options:
    ss = st.session_state
    return data.Options(
        task=ss["task"],
        modalities=("auto",) if ss["auto_modalities"] else tuple(
            m for m in MODALITIES if m in ss["modalities"]),
        iou_threshold=float(ss["iou_threshold"]),
        score_threshold=float(ss["score_threshold"]) if ss["use_score_threshold"] else None,
        bbox_format=ss["bbox_format"],
        hard_negatives=bool(ss["ap_hard_negatives"]) and ss["task"] == "vocabulary",
        max_detections=int(ss["ap_max_detections"]),
        nms_ap=bool(ss["ap_nms"]) and bool(ss["ap_hard_negatives"])
        and ss["task"] == "vocabulary", aitod=bool(ss["ap_aitod"]),
        large_masks=bool(ss["large_masks"]), concave_obb=bool(ss["concave_obb"]),
        rank_resamples=int(ss["rank_resamples"]), alpha=float(ss["alpha"]),
        min_count=int(ss["min_count"]), friedman_blocks=ss["friedman_blocks"])


def render() -> Run | None:
    """Draw the sidebar and evaluate; ``None`` (with the report shown) on bad input."""
    state.init_state()
    ss = st.session_state
    if state.link_error():
        # The linked dataset cannot be opened: say so on every page, show no numbers.
        st.error(state.link_error())
    for note in state.pop_link_notes():
        st.warning(note)
    with st.sidebar:
        st.subheader("Data")
        _data_panel()
        st.subheader("Evaluation options")
        _options_panel()
        if st.button("Reload files", help="Forget cached results and read the files again."):
            data.clear_caches()
    if state.link_error():
        return None
    # Typed paths are read only inside the data roots; uploads live in the app's own folder.
    gt_path = Path(ss["gt_upload"][1]) if ss["gt_upload"] else state.confined(
        ss["gt_path"], "Ground truth JSON")
    images_dir = state.confined(ss["images_dir"], "Images folder")
    if gt_path is None or images_dir is None:
        return None
    if not ss["pred_upload"] and not ss["pred_path"].strip():
        folder = state.code(str(Path(ss["gt_path"]).parent / "predictions"))
        st.info(f"No submission found in {folder}: type "
                "a submission path or upload one in the sidebar.")
        return None
    pred_path = Path(ss["pred_upload"][1]) if ss["pred_upload"] else state.confined(
        ss["pred_path"], "Submission path")
    if pred_path is None:
        return None
    options = current_options()
    gt, pred = data.file_key(gt_path), data.file_key(pred_path)
    try:
        with st.spinner(f"Evaluating {pred_path.name} ({state.TASK_LABELS[options.task]})…"):
            evaluation = data.evaluate(gt, pred, options)
    except Exception as err:  # a bug in the evaluator must not end the app
        views.unexpected_error(err, "The evaluator failed unexpectedly")
        return None
    if evaluation.problems:
        views.problems_report(evaluation.problems, gt_path, pred_path)
        return None
    if not images_dir.is_dir():
        st.warning(f"Images folder not found: {state.code(str(images_dir))}. Overlays are "
                   "drawn on blank canvases; "
                   "set the folder in the sidebar.")
    name = ss["pred_upload"][0] if ss["pred_upload"] else pred_path.name
    gt_name = ss["gt_upload"][0] if ss["gt_upload"] else ss["gt_path"]
    run = Run(evaluation, options, gt, pred, images_dir, name,
              gt_label=f"{gt_name} · sha256 {evaluation.gt_sha256[:12]}",
              pred_label=f"{name if ss['pred_upload'] else ss['pred_path']} · sha256 "
                         f"{evaluation.pred_sha256[:12]}")
    views.coverage_warnings(evaluation.view)
    with st.sidebar:
        _saved_views(run)
    return run
