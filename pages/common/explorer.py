"""Explorer widgets: filters, the query table and the viewer with its previous/next
navigation."""

from __future__ import annotations

from functools import partial
from typing import Any

import streamlit as st

from ovearth_core import review
from ovearth_core.analysis import diagnose, objects

from . import analysis_data, state, tags, viewer, views
from .run import Run

MODALITY_FILTERS = ("any", "segmentation", "bbox", "oriented_bbox")


def filters(rows: list[dict[str, Any]], open_vocab: bool,
            review_tags: dict[str, frozenset[str]] | None = None,
            run: Run | None = None) -> dict[str, Any]:
    """Draw the filter widgets; return keyword arguments for ``diagnose.filter_rows``
    (``review_tags``: ``{query_id: tags}`` of the review sidecar, for the tag filter;
    ``run``: for the object-outcome filter)."""
    ss = st.session_state
    top = st.columns([1.2, 2, 2, 1.3])
    top[0].toggle("Failed queries only", **state.bind("flt_failed_only"))
    outcomes = diagnose.OUTCOMES_OV if open_vocab else diagnose.OUTCOMES_GROUNDING
    top[1].multiselect("Outcome", outcomes, **state.bind("flt_outcomes", outcomes))
    top[2].multiselect("Failure tag", diagnose.TAGS, **state.bind("flt_failures", diagnose.TAGS))
    top[3].text_input("Search text / id", **state.bind("flt_text"))
    bottom = st.columns([2, 1, 1.3, 1.7])
    categories = sorted({r["category"] for r in rows})
    bottom[0].multiselect("Category", categories, **state.bind("flt_categories", categories))
    polarities = ("all", "positive", "negative") if open_vocab else ("all",)
    bottom[1].selectbox("Polarity", polarities, **state.bind("flt_polarity", polarities))
    bottom[2].selectbox("Modality (for IoU range)", MODALITY_FILTERS,
                        **state.bind("flt_modality", MODALITY_FILTERS))
    ss["flt_iou"] = tuple(ss["flt_iou"])
    bottom[3].slider("IoU range", 0.0, 1.0, step=0.05, **state.bind("flt_iou"))
    review_tags = review_tags or {}
    names = [*review.BUILTIN_TAGS,
             *sorted(set().union(*review_tags.values()) - set(review.BUILTIN_TAGS))]
    cols = st.columns(2)
    cols[0].multiselect("Review tag", names, **state.bind("flt_review_tags", names),
                        help="Queries with any of these tags (on the query or one of its "
                             "objects).")
    object_ids = object_filter(cols[1], run)
    wanted = set(ss["flt_review_tags"])
    ids = {q for q, t in review_tags.items() if t & wanted} if wanted else None
    if object_ids is not None:
        ids = object_ids if ids is None else ids & object_ids
    return {"query_ids": ids, "categories": ss["flt_categories"], "outcomes": ss["flt_outcomes"],
            "failures": ss["flt_failures"], "polarity": ss["flt_polarity"],
            "modality": ss["flt_modality"], "iou_range": tuple(ss["flt_iou"]),
            "text": ss["flt_text"], "failed_only": ss["flt_failed_only"]}


OBJECT_LABELS = {"segmentation": "masks", "bbox": "HBB", "oriented_bbox": "OBB"}
OBJECTS_OPEN = "_w_objects_open"  # the "Objects by outcome" expander's state


def object_modality(run: Run | None) -> str | None:
    """The object views' modality: the chosen one ("Objects of") when evaluated, else HBB,
    else OBB (the viewer's box picker's), else masks (``None``: none evaluated)."""
    evaluated = [] if run is None or run.evaluation.run is None else \
        analysis_data.evaluated_objects(run.evaluation.run)
    chosen = st.session_state["flt_obj_modality"]
    if chosen in evaluated:
        return chosen
    box = analysis_data.box_modality(run)
    return box if box in evaluated else next(iter(evaluated), None)


def object_filter(where: Any, run: Run | None) -> set[str] | None:
    """The object-outcome filter: ids of the queries with a box or mask component of a
    chosen outcome in :func:`object_modality` (``None``: no filter, or no modality)."""
    evaluated = [] if run is None or run.evaluation.run is None else \
        analysis_data.evaluated_objects(run.evaluation.run)
    modality = object_modality(run)
    pick, outcome = where.columns([1, 2])
    choices = ["auto", *evaluated]
    pick.selectbox("Objects of", choices, disabled=len(evaluated) < 2,
                   format_func=lambda m: OBJECT_LABELS.get(m, m),
                   **state.bind("flt_obj_modality", choices),
                   help="Boxes, or the masks' connected components (docs/analysis.md, "
                        "\"error_attribution.objects\"); auto: HBB, else OBB, else masks.")
    outcome.multiselect(f"Object outcome ({OBJECT_LABELS[modality]})"
                        if modality else "Object outcome", objects.ERRORS,
                        disabled=modality is None,
                        **state.bind("flt_objects", objects.ERRORS),
                        help="Queries with a GT or predicted object of any of these "
                             "outcomes (TIDE's kinds; docs/analysis.md, "
                             "\"error_attribution.objects\").")
    chosen = st.session_state["flt_objects"]
    if not chosen or modality is None:
        return None
    return objects.queries_with(
        analysis_data.object_outcomes(run.gt, run.pred, run.options, modality), chosen)


def _on_object_row(query_id: str, rows: list[dict[str, Any]], n_gt: int) -> None:
    picked = st.session_state["_w_objlist"]
    if picked is not None and picked < len(rows):
        r = rows[picked]
        # The viewer's box picker counts GT boxes first, then predictions.
        st.session_state["view_focus"] = (query_id, r["index"] + (n_gt if r["role"] == "pred"
                                                                  else 0))


def object_list(run: Run, query_id: str) -> None:
    """The query's boxes (or mask components) by outcome (errors first): a missed GT box
    with its nearest prediction of the image and that prediction's category; picking a box
    zooms the viewer to it (mask components are not in the viewer's box picker)."""
    modality = object_modality(run)
    if modality is None:
        return
    # Drawn only while open (a lazy expander; open or closed, it stays so from query to
    # query): its table and picker changed with every query and cost the browser ~40 ms
    # of each "Next" (benchmarks/README.md, issue 28). Same label for every query: a new
    # label would be a new expander, closed again.
    with st.expander(f"Objects by outcome ({OBJECT_LABELS[modality]})", key=OBJECTS_OPEN,
                     on_change="rerun") as box:
        if not box.open:
            return
        per = analysis_data.object_outcomes(run.gt, run.pred, run.options, modality)
        qo = next((q for q in per if q.query_id == query_id), None)
        if qo is None or not (qo.gt_outcome or qo.pred_outcome):
            st.caption("No object in this query.")
            return
        rows = objects.object_rows(qo)
        errors = {k: v for side in qo.counts().values() for k, v in side.items()
                  if v and k != objects.MATCHED}
        frame = views.object_frame(rows)
        st.caption(f"{len(qo.gt_outcome)} GT, {len(qo.pred_outcome)} predicted: "
                   + (" · ".join(f"{k} {v}" for k, v in errors.items())
                      or "every object matched"))
        if modality == "segmentation":
            _mask_object_table(frame, len(rows))
            return
        labels = [" · ".join(str(v) for v in r.values()) for r in frame.to_dict("records")]
        st.session_state["_w_objlist"] = None  # a picker, not a state: the focus is kept
        st.selectbox("Zoom to an object (errors first)", range(len(rows)),
                     format_func=labels.__getitem__, key="_w_objlist",
                     placeholder="pick a box to zoom the viewer to it",
                     on_change=_on_object_row, args=(query_id, rows, len(qo.gt_outcome)))
        st.dataframe(frame, hide_index=True, placeholder="—", width="stretch",
                     height=min(400, 38 + 35 * len(rows)))
        st.caption("For a GT box: the nearest predicted box of the image, any query (a "
                   "missed small vehicle boxed as a large vehicle shows it here); for a "
                   "predicted box: its best GT box of another category.")


def _mask_object_table(frame: Any, n_rows: int) -> None:
    frame = frame.rename(columns={"box": "object", "nearest box": "nearest object"})
    st.dataframe(frame, hide_index=True, placeholder="—", width="stretch",
                 height=min(400, 38 + 35 * n_rows))
    st.caption("Objects: the 8-connected components of the GT and predicted masks, "
               "numbered column by column (left to right). For a GT object: the nearest "
               "predicted component of the image, any query; for a predicted one: its best "
               "GT object of another category.")


def open_objects(categories: list[str], outcomes: list[str], modality: str) -> None:
    """Open the explorer on the queries of ``categories`` with objects of ``outcomes`` in
    ``modality``, every other filter reset."""
    state.set_filters(categories=categories, objects=outcomes, obj_modality=modality)
    st.switch_page(state.EXPLORER_PAGE)


def resolve_selection(task: str, ids: list[str], all_ids: set[str]) -> str | None:
    """The query to show: the stored one if it passes the filters, else the first shown."""
    wanted = state.selected_query(task)
    if wanted in ids:
        return wanted
    if wanted and wanted not in all_ids:
        st.warning(f"Query {state.code(wanted)} is not in the {state.TASK_LABELS[task]} task; "
                   "showing the first query of the list instead.")
    if not ids:
        return None
    state.select_query(task, ids[0])
    return ids[0]


def _on_table_select(task: str, ids: list[str]) -> None:
    picked = st.session_state["qtable"].selection.rows
    if picked and picked[0] < len(ids):
        state.select_query(task, ids[picked[0]])


def table(task: str, shown: list[dict[str, Any]], total: int, run: Run | None = None) -> None:
    """The query table (with ``run``: a column of each query's object errors)."""
    ids = [r["query_id"] for r in shown]
    modality = object_modality(run)
    errors = None if modality is None else analysis_data.object_errors(
        run.gt, run.pred, run.options, modality)
    st.caption(f"{len(shown):,} of {total:,} queries, worst first · click a row to view it")
    st.dataframe(views.rows_frame(shown, errors), hide_index=True, placeholder="—",
                 width="stretch", height=300,
                 column_config=views.TABLE_CONFIG, on_select=partial(_on_table_select, task, ids),
                 selection_mode="single-row", key="qtable")
    jump_box(task, shown)


def _step(task: str, ids: list[str], current: str, delta: int) -> None:
    i = ids.index(current)
    state.select_query(task, ids[min(max(i + delta, 0), len(ids) - 1)])


def _label(row: dict[str, Any]) -> str:
    return f"{row['query_id']} — {row['text'][:60]} [{row['failure']}]"


def _on_jump(task: str) -> None:
    picked = st.session_state["_w_jump"]
    if picked is not None:
        state.select_query(task, picked)
    st.session_state["_w_jump"] = None  # a search box, not the current query


def jump_box(task: str, shown: list[dict[str, Any]]) -> None:
    """A searchable picker of the shown queries (filtered order) that opens the one picked.
    Outside the viewer's fragment: its thousands of labels are not sent again with every
    "Next" (on the full benchmark they were most of a switch's bytes and redraw)."""
    labels = {r["query_id"]: _label(r) for r in shown}
    st.session_state.setdefault("_w_jump", None)
    st.selectbox("Jump to a query", list(labels), key="_w_jump", format_func=labels.get,
                 placeholder="type an id or words of its text", on_change=_on_jump,
                 args=(task,))


def position(shown: list[dict[str, Any]], current: str) -> str:
    """The navigator's line: the current query's position and label (plain text)."""
    i = [r["query_id"] for r in shown].index(current)
    return f"Query {i + 1:,} of {len(shown):,} in the filtered list · {_label(shown[i])}"


@st.fragment
def viewer_fragment(run: Run, task: str, shown: list[dict[str, Any]]) -> None:
    """Toolbar, navigator and viewer of the selected query. A fragment: the viewer's
    controls rerun only this part, not the sidebar, filters, table and jump box. The
    toolbar (layers, view options, the review and link switches) is drawn here, the rest
    by :func:`_viewer`, a fragment inside this one: "Next" and "Previous" rerun that one
    alone, which does not send the toolbar again (issue 49); a toolbar change reruns
    both."""
    viewer.toolbar(run, review=True)
    _viewer(run, task, shown)


@st.fragment
def _viewer(run: Run, task: str, shown: list[dict[str, Any]]) -> None:
    """Navigator and viewer of the selected query (inside :func:`viewer_fragment`).
    The navigator is the viewer card's own line: "◀ Previous", the query's position
    (:func:`position`) and "Next ▶" (filtered order; no "Previous" on the first query, no
    "Next" on the last), whose clicks the card reports (its trigger ``nav``); "Objects
    by outcome" under it; the card is sent last (:func:`viewer.render`)."""
    ids = [r["query_id"] for r in shown]
    current = state.selected_query(task)
    if current not in ids:
        current = ids[0]
        state.select_query(task, current)
    i = ids.index(current)
    query_tags = tags.query_tags(run)
    # The session's link parameters, read once for the three cards of a run (the query's
    # and the two sent ahead): each read walks the session state (issue 49).
    base = state.link_params()

    def card(j: int) -> dict[str, Any]:
        """The card's own arguments for the ``j``-th query shown."""
        return {"tags": ", ".join(sorted(query_tags.get(ids[j], frozenset()))),
                "head": position(shown, ids[j]),
                "url": state.query_string({**base, **state.view_params(ids[j])}),
                "nav": (j > 0, j < len(ids) - 1)}

    def ahead() -> dict[str, Any]:
        # The cards "Next" and "Previous" open, when drawn already: the card element puts
        # one in place at the click, so the next query shows before the rerun ends.
        cards = {slot: viewer.card_ahead(run, ids[j], shown[j], **card(j))
                 for slot, j in (("next", i + 1), ("prev", i - 1)) if 0 <= j < len(ids)}
        return {slot: c for slot, c in cards.items() if c is not None}

    def go(slot: str) -> None:
        # Before the rerun the click starts, as the old buttons' on_click (this run's list).
        _step(task, ids, current, 1 if slot == "next" else -1)

    # The URL is written by the viewer's card (one element; no message of its own).
    viewer.render(run, current, shown[i], review=partial(tags.panel, run, current),
                  ahead=ahead, on_nav=go, after=partial(object_list, run, current),
                  **card(i))
    # Two ahead: the card sent with the next query's run is then drawn already.
    viewer.prefetch(run, *ids[i + 1:i + 3])
