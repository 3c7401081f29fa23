"""The Slices page's widgets: attribute and metric pickers, the table, the chart and the
click-through to the explorer (for the attributes the explorer can filter on)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from ovearth_core.analysis import slices
from ovearth_core.analysis.evidence import thin_rows
from ovearth_core.viz import analysis_figures as figs

from . import analysis_data, data, links, state, views
from .run import Run

ATTRIBUTE_LABELS = {"category": "category", "group": "category group (taxonomy)",
                    "polarity": "polarity",
                    "gt_size": "GT size (AI-TOD bins: queries with a GT box of that size)",
                    "num_gt": "number of GT boxes", "phrase_words": "phrase length (words)",
                    "image_size": "image size (long side)", "tag": "review tag",
                    slices.GSD: "ground sample distance (m / pixel)",
                    slices.QUERY_FORM: "same target, query form (all three tasks)"}
META = "meta"  # the picker's choice "image metadata": meta:KEY, KEY picked beside it
PICKABLE = links.SLICE_ATTRIBUTES


def attribute_label(attribute: str) -> str:
    """What the page calls ``attribute`` (``meta:KEY``: ``image_meta[KEY]``)."""
    if attribute == META:
        return "image metadata (image_meta[KEY])"
    if attribute.startswith(slices.META_PREFIX):
        return f"image_meta[{attribute[len(slices.META_PREFIX):]}]"
    return ATTRIBUTE_LABELS[attribute]


def taxonomy_path(gt_path: str) -> str:
    """The typed taxonomy, else ``taxonomy.json`` beside the ground truth (``""``: none)."""
    typed = st.session_state["slice_taxonomy"].strip()
    if typed:
        return typed
    beside = Path(gt_path).parent / "taxonomy.json"
    return str(beside) if beside.is_file() else ""


def pickers(run: Run) -> str | None:
    """The attribute picker and the taxonomy field (or, for image metadata, the key
    picker); returns the attribute (``meta:KEY``; ``None``: no annotation has metadata)."""
    cols = st.columns([2, 3])
    cols[0].selectbox("Slice by", PICKABLE, format_func=attribute_label,
                      **state.bind("slice_attr", PICKABLE))
    attribute = st.session_state["slice_attr"]
    if attribute != META:
        cols[1].text_input("Taxonomy JSON (category → group)", **state.bind("slice_taxonomy"),
                           placeholder="default: taxonomy.json beside the ground truth",
                           help="An object {category: group}; used to slice by category "
                                "group.")
        return attribute
    keys = analysis_data.image_meta_keys(run.gt)
    if not keys:
        st.info("No annotation of the ground truth has an image_meta object (per-image "
                "metadata: sensor, date, gsd; from-dota writes DOTA's header there).")
        return None
    cols[1].selectbox("image_meta key", keys, **state.bind("slice_meta_key", keys),
                      help="Each query is in the slice of its annotation's image_meta[KEY] "
                           f"({slices.NO_META} without it).")
    return slices.META_PREFIX + st.session_state["slice_meta_key"]


def paired_b(run: Run) -> tuple[data.FileKey, data.Options] | None:
    """Compare's B (its file key and options), when one is chosen and the user pairs the
    slices with it; a B that cannot be evaluated shows its report and stops the page."""
    b_text = st.session_state["cmp_b_path"]
    if not b_text or not st.toggle(f"Paired with Compare's B ({Path(b_text).stem}): B and "
                                   "B − A per slice", key="_slice_paired"):
        return None
    b_path = state.confined(b_text, "Submission B")
    if b_path is None:
        st.stop()
    # As on Compare: B with A's resolved modalities, so that the per-query rows pair up.
    options = replace(run.options, modalities=run.config.modalities)
    key = data.file_key(b_path)
    evaluation = data.evaluate(run.gt, key, options)
    if evaluation.problems:
        views.problems_report(evaluation.problems, Path(run.gt[0]), b_path)
        st.stop()
    return key, options


def form_problems(run: Run, evaluations: dict[str, data.Evaluation], pred: Path) -> bool:
    """Show the validation report of a task that could not be evaluated (``True``: shown)."""
    for form, problems in analysis_data.form_problems(evaluations):
        st.error(f"The {state.TASK_LABELS[form]} task of {state.code(pred.name)} could not be "
                 "evaluated; the query-form slice needs all three.")
        views.problems_report(problems, Path(run.gt[0]), pred)
        return True
    return False


def query_form_caption() -> None:
    st.caption("Each task's positive queries on the annotations that all three tasks ask "
               "for (the same targets, named by a category phrase, a referring expression "
               "or a reasoning question): a drop in one form is the language, not the "
               "object. One annotation's three results: the Annotation page.")


def gt_size_caption() -> None:
    """What a GT-size slice scores (issue 34): the queries, whole."""
    st.caption("GT size: a query is in the bin of each of its GT boxes, and its metrics count "
               "whole queries: a bin's numbers are those of the queries that have a box of "
               "that size, not of those boxes alone (a query's false positives have no GT "
               "size, and its presence, mask IoU and F1 are one number each). Scores of the "
               "boxes of one size: COCO's AP small / medium / large (Overview, average "
               "precision), which leave out the GT boxes of other sizes.")


def few_units(table: slices.SliceTable) -> None:
    """The one thin-evidence warning (:func:`~ovearth_core.analysis.evidence.thin_rows`),
    naming the slices whose intervals and tests rest on fewer than its minimum of units."""
    note = thin_rows([(v.value, v.num_units) for v in table.values], table.unit, "slices")
    if note:
        st.warning(views.md_text(note), icon=":material/warning:")


def metric_picker(table: slices.SliceTable) -> str:
    names = [m.name for m in table.values[0].metrics] if table.values else []
    st.selectbox("Metric (chart and interval column)", names,
                 format_func=lambda n: figs.LEADERBOARD_METRIC_LABELS.get(n, n),
                 **state.bind("slice_metric", names))
    return st.session_state["slice_metric"]


def render(table: slices.SliceTable, metric: str) -> None:
    """The table (every metric, the chosen one's interval) and the chart."""
    frame = pd.DataFrame(figs.slice_rows(table, metric))
    number = {c: st.column_config.NumberColumn(c, format="%.3f")
              for c in frame.columns if c in figs.LEADERBOARD_METRIC_LABELS.values()}
    st.dataframe(frame, hide_index=True, placeholder="—", width="stretch", column_config={
        "value": st.column_config.TextColumn(attribute_label(table.attribute)), **number})
    st.plotly_chart(figs.slice_figure(table, metric), width="stretch")


def explorer_filters(attribute: str, value: str, taxonomy: dict[str, str] | None,
                     categories: list[str]) -> dict[str, Any] | None:
    """The explorer filters that show exactly one slice (``None``: no such filter)."""
    if attribute == "category":
        return {"categories": [value]}
    if attribute == "group" and taxonomy is not None:
        return {"categories": [c for c in categories
                               if taxonomy.get(c, slices.NO_GROUP) == value]}
    if attribute == "polarity":
        return {"polarity": value}
    if attribute == "tag" and value != slices.UNTAGGED:
        return {"review_tags": [value]}
    return None


def click_through(table: slices.SliceTable, taxonomy: dict[str, str] | None,
                  categories: list[str]) -> None:
    """A slice picker and a button opening the explorer filtered to that slice."""
    if table.attribute == slices.QUERY_FORM:
        st.page_link("pages/Annotation.py", label="One annotation's three results side by "
                     "side: the Annotation page →")
        return
    links = {v.value: f for v in table.values
             if (f := explorer_filters(table.attribute, v.value, taxonomy, categories))}
    if not links:
        st.caption(f"The explorer has no filter for "
                   f"{attribute_label(table.attribute)}; the table lists every slice.")
        return
    counts = {v.value: v.num_queries for v in table.values}
    cols = st.columns([3, 1])
    picked = cols[0].selectbox("Slice to open", list(links), key="_slice_open",
                               format_func=lambda v: f"{v} ({counts[v]} queries)")
    with cols[1]:
        views.go_to_explorer("Open in the explorer →", "_slice_go", **links[picked])
