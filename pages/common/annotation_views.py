"""The Annotation page's pieces: the annotation picker and its queries in the three forms
side by side (crop with GT and that task's prediction, text, numbers, verdict)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ovearth_core.analysis import crosstask
from ovearth_core.report import draw as report_draw

from . import analysis_data, data, state, views
from .run import Run

VERDICT_HELP = {
    crosstask.RIGHT: "every query form finds it",
    crosstask.LANGUAGE: "found when named one way, missed when named another: the language",
    crosstask.OBJECT: "missed in every query form: the object itself",
    crosstask.ONE_FORM: "missed, and only one task asks for it",
}
ALL = "every annotation"


def problems(run: Run, evaluations: dict[str, data.Evaluation]) -> bool:
    """Show the report of a task that could not be evaluated (``True``: shown)."""
    for form, found in analysis_data.form_problems(evaluations):
        st.error(f"The {state.TASK_LABELS[form]} task of {state.code(Path(run.pred[0]).name)} "
                 "could not "
                 "be evaluated, so this page cannot show it beside the others.")
        views.problems_report(found, Path(run.gt[0]), Path(run.pred[0]))
        return True
    return False


def picker(joined: dict[str, crosstask.AnnotationJoin]) -> str:
    """Verdict filter and annotation picker (bound to ``ann_id``); returns the id shown."""
    ss = st.session_state
    counts = crosstask.verdict_counts(joined)
    cols = st.columns([2, 3])
    verdicts = [ALL, *(v for v, n in counts.items() if n)]
    chosen = cols[0].selectbox("Verdict", verdicts, key="_ann_verdict",
                               on_change=lambda: ss.update(ann_id=""),
                               format_func=lambda v: v if v == ALL else f"{v} ({counts[v]})")
    ids = [a for a, j in joined.items() if chosen == ALL or j.verdict == chosen]
    if ss["ann_id"] and ss["ann_id"] not in joined:
        st.warning(f"Annotation {state.code(ss['ann_id'])} has no positive query in any task; "
                   "showing the first annotation instead.")
    if not ss["ann_id"]:  # first visit or a new verdict: one every task asks for, if any
        every = crosstask.in_every_form(joined)
        ss["ann_id"] = next((a for a in every if a in ids), ids[0])
    if ss["ann_id"] in joined and ss["ann_id"] not in ids:
        ids = [ss["ann_id"], *ids]  # a linked annotation stays visible under any filter
    cols[1].selectbox("Annotation", ids, format_func=lambda a: (
        f"{a} · {joined[a].category} · {', '.join(joined[a].forms)} · {joined[a].verdict}"),
        **state.bind("ann_id", ids))
    st.caption(" · ".join(f"{v}: {n}" for v, n in counts.items())
               + f" (of {len(joined):,} annotations with a positive query; "
               f"{len(crosstask.in_every_form(joined)):,} asked by all three tasks)")
    return ss["ann_id"]


def numbers(q: crosstask.FormQuery) -> str:
    """The query's scores as the explorer shows them ("—": not evaluated)."""
    parts = [(label, value) for label, value in (
        ("mask IoU", q.seg_iou), ("HBB best IoU", q.bbox_iou), ("HBB F1", q.bbox_f1),
        ("OBB best IoU", q.obb_iou), ("OBB F1", q.obb_f1), ("top score", q.score))]
    return " · ".join(f"{label} {views.fmt(value)}" for label, value in parts)


def render(run: Run, evaluations: dict[str, data.Evaluation],
           ann: crosstask.AnnotationJoin) -> None:
    """The annotation's verdict, then one column per form with each of its queries."""
    st.markdown(f"### {state.code(ann.ann_id)} · {views.md_text(ann.category)}")
    st.markdown(f"Where it fails: **{ann.verdict}** — {VERDICT_HELP[ann.verdict]}")
    pairs = {f: [(evaluations[f].run.sample(q.query_id), evaluations[f].run.row(q.query_id))
                 for q in ann.queries.get(f, ())] for f in crosstask.FORMS}
    everything = [s for f in crosstask.FORMS for s, _ in pairs[f]]
    first = everything[0]
    image_args = (str(run.images_dir), first.image_path, first.width, first.height,
                  data.image_stamp(run.images_dir, first.image_path))
    display = data.display_image(*image_args)
    region = report_draw.shared_region(everything)
    pixels = data.detail_image(*image_args, region) or display
    if display.notice:
        st.caption(display.notice)
    st.caption(f"Image {state.code(ann.image_path)} · the same crop in every column: GT cyan "
               "/ solid, the task's prediction magenta / dashed (boxes green matched, red "
               "false positive, orange missed)")
    for col, form in zip(st.columns(3), crosstask.FORMS, strict=True):
        with col:
            st.subheader(state.TASK_LABELS[form])
            queries = ann.queries.get(form, ())
            if not queries:
                st.markdown("— (no positive query of this task on the annotation)")
            for q, (sample, row) in zip(queries, pairs[form], strict=True):
                st.image(report_draw.overlay_thumbnail(pixels, sample, row, max_side=420,
                                                       region=region), width="stretch")
                url = state.view_url(filters=False, task=form, q=q.query_id)
                st.markdown(f"**{views.md_text(q.text)}**  \n"
                            f"[{views.md_text(q.query_id)} ↗]({url}) · outcome **{q.outcome}** "
                            f"· failure **{q.failure}** · "
                            f"{'**found**' if q.right else '**not found**'} (IoU ≥ 0.5)")
                st.caption(numbers(q))
