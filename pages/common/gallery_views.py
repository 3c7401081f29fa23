"""Gallery widgets: the selector and filters (bound to ``gal_*`` state) and the tile grid."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ovearth_core import review
from ovearth_core.analysis import diagnose, gallery, objects

from . import data, state, tags, views
from .run import Run

COLUMNS = 6
MODALITY_LABELS = {"bbox": "HBB", "oriented_bbox": "OBB"}


def controls(run: Run, open_vocab: bool) -> dict[str, Any]:
    """Draw the selector, filters and sort; return ``selector``, ``modality``, ``sort``
    and the keyword arguments of :func:`gallery.filter_tiles` (under ``filters``)."""
    ss = st.session_state
    modalities = [m for m in gallery.BOX_MODALITIES if m in run.evaluation.run.box_facts]
    top = st.columns([2.4, 1, 2, 1.4])
    top[0].radio("Tiles", gallery.SELECTORS, horizontal=True,
                 **state.bind("gal_selector", gallery.SELECTORS))
    selector = ss["gal_selector"]
    top[1].selectbox("Boxes", modalities or ["—"], format_func=lambda m: MODALITY_LABELS.get(m, m),
                     disabled=selector == "queries" or not modalities,
                     **state.bind("gal_modality", modalities or ["—"]))
    outcomes = gallery.OUTCOMES.get(selector) or (
        diagnose.OUTCOMES_OV if open_vocab else diagnose.OUTCOMES_GROUNDING)
    top[2].multiselect("Outcome", outcomes, **state.bind("gal_outcomes", outcomes))
    top[3].selectbox("Sort", gallery.SORTS, **state.bind("gal_sort", gallery.SORTS))
    bottom = st.columns([2, 2, 1, 2, 2])
    bottom[0].multiselect("Failure tag", diagnose.TAGS,
                          **state.bind("gal_failures", diagnose.TAGS))
    categories = sorted({r["category"] for r in run.evaluation.rows})
    bottom[1].multiselect("Category", categories, **state.bind("gal_categories", categories))
    polarities = ("all", "positive", "negative") if open_vocab else ("all",)
    bottom[2].selectbox("Polarity", polarities, **state.bind("gal_polarity", polarities))
    bottom[3].multiselect("Size (√area px)", gallery.SIZE_NAMES,
                          help="AI-TOD bins: very_tiny < 8, tiny 8–16, small 16–32, "
                               "medium 32–96, large ≥ 96",
                          **state.bind("gal_sizes", gallery.SIZE_NAMES))
    ss["gal_iou"] = tuple(ss["gal_iou"])
    bottom[4].slider("IoU range", 0.0, 1.0, step=0.05, **state.bind("gal_iou"))
    review_tags = tags.query_tags(run)
    names = tags.current(run).all_tags()
    third = st.columns(3)
    third[0].multiselect("Review tag", names, **state.bind("gal_review_tags", names),
                         help="Tiles of queries with any of these tags (on the query or one "
                              "of its objects), as the explorer's review-tag filter.")
    boxes = selector != "queries" and bool(modalities)
    kinds = (objects.GT_OUTCOMES if selector == "GT boxes" else objects.PRED_OUTCOMES)[1:]
    third[1].multiselect("Object outcome", kinds, disabled=not boxes,
                         **state.bind("gal_errors", list(kinds)),
                         help="TIDE's kinds (docs/analysis.md, \"error_attribution.objects\").")
    third[2].multiselect("Confused with (category)", categories, disabled=not boxes,
                         **state.bind("gal_confused", categories),
                         help="A predicted box left unmatched on a GT box of this category "
                              "(a cell of the category confusion); a GT box left unmatched "
                              "whose nearest prediction is of this category.")
    wanted = set(ss["gal_review_tags"])
    ids = {q for q, t in review_tags.items() if t & wanted} if wanted else None
    return {"selector": selector,
            "modality": ss["gal_modality"] if ss["gal_modality"] in modalities else None,
            "sort": ss["gal_sort"],
            "filters": {"outcomes": ss["gal_outcomes"], "failures": ss["gal_failures"],
                        "categories": ss["gal_categories"], "polarity": ss["gal_polarity"],
                        "sizes": ss["gal_sizes"], "iou_range": tuple(ss["gal_iou"]),
                        "query_ids": ids, "errors": ss["gal_errors"] if boxes else [],
                        "confused_with": ss["gal_confused"] if boxes else []}}


def open_cell(modality: str, predicted: str, gt_category: str) -> None:
    """Open the Gallery on the predicted boxes of ``predicted`` left unmatched on a GT box
    of ``gt_category`` (a cell of the category confusion), every other filter reset."""
    ss = st.session_state
    for key, value in state.GALLERY_DEFAULTS.items():
        ss[key] = value.copy() if isinstance(value, list) else value
    ss.update(gal_selector="predicted boxes", gal_modality=modality,
              gal_categories=[predicted], gal_confused=[gt_category])
    st.switch_page(state.GALLERY_PAGE)


def pager(n_tiles: int) -> int:
    """The page number input (clamped to the pages there are); returns the page."""
    ss = st.session_state
    pages = gallery.page_count(n_tiles)
    ss["gal_page"] = min(max(1, int(ss["gal_page"])), pages)
    cols = st.columns([1, 5])
    cols[0].number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, step=1,
                         **state.bind("gal_page"))
    first = (ss["gal_page"] - 1) * gallery.PER_PAGE
    cols[1].caption(f"{n_tiles:,} tiles · showing {min(first + 1, n_tiles):,}–"
                    f"{min(first + gallery.PER_PAGE, n_tiles):,}")
    return ss["gal_page"]


def caption(tile: gallery.Tile) -> str:
    """The text under a tile: outcome, IoU, score, size; then the query's text."""
    parts = [tile.outcome]
    if tile.error not in ("", "matched", tile.outcome):
        parts.append(tile.error + (f" ({tile.confused_with})" if tile.confused_with else ""))
    if tile.iou is not None:
        parts.append(f"{'best ' if tile.outcome == 'missed' else ''}IoU {tile.iou:.2f}")
    if tile.score is not None:
        parts.append(f"score {tile.score:.2f}")
    if tile.size is not None:
        parts.append(f"{tile.size:.0f} px")
    return " · ".join(parts)


def tile_key(tile: gallery.Tile) -> str:
    return f"{tile.query_id}|{tile.kind}|{tile.modality}|{tile.box_index}"


def targets(task: str, tile: gallery.Tile) -> tuple[review.Target, review.Target]:
    """The review targets of a tile: its object (a query tile: its query) and its query."""
    query = review.Target(task, tile.query_id)
    if tile.kind == "query" or tile.modality is None or tile.box_index is None:
        return query, query
    return review.Target(task, tile.query_id, tile.kind, tile.modality, tile.box_index), query


def _tags_line(rs: review.ReviewState, task: str, tile: gallery.Tile) -> str:
    own, query = targets(task, tile)
    parts = sorted(tags.target_tags(rs, own))
    if own != query and tags.target_tags(rs, query):
        parts.append(f"(query: {', '.join(sorted(tags.target_tags(rs, query)))})")
    return ", ".join(parts)


def _notes_line(rs: review.ReviewState, task: str, tile: gallery.Tile) -> str:
    """The notes on the tile's object and on its query (``""``: none)."""
    own, query = targets(task, tile)
    notes = [(label, rs.notes.get(t)) for label, t in
             (("note", own), ("query note", query if query != own else None)) if t]
    return " · ".join(f"{label}: {views.md_text(n.text)}" for label, n in notes if n)


def _on_select(key: str, widget: str) -> None:
    ss = st.session_state
    chosen = [k for k in ss["gal_selected"] if k != key]
    ss["gal_selected"] = chosen + [key] if ss[widget] else chosen


def _select_page(keys: list[str]) -> None:
    ss = st.session_state
    ss["gal_selected"] = list(dict.fromkeys([*ss["gal_selected"], *keys]))
    ss["gal_sel_gen"] += 1


def _clear_selection() -> None:
    st.session_state["gal_selected"] = []
    st.session_state["gal_sel_gen"] += 1


def _after_tagging() -> None:
    _clear_selection()
    st.session_state["_gal_tagged"] = True


def tag_bar(run: Run, page_tiles: list[gallery.Tile], every: list[gallery.Tile]) -> None:
    """Tag the selected tiles (their objects or their queries) with one tag and a note."""
    ss = st.session_state
    task = review.task_key(run.options.task)
    by_key = {tile_key(t): t for t in every}
    selected = [by_key[k] for k in ss["gal_selected"] if k in by_key]
    cols = st.columns([2.2, 1, 1, 2])
    on = cols[0].radio("Tag what", ("objects", "queries"), horizontal=True,
                       help="objects: the GT or predicted box of each tile (a query tile: "
                            "its query); queries: the tiles' queries",
                       **state.bind("gal_tag_on", ("objects", "queries")))
    cols[1].button("Select page", on_click=_select_page,
                   args=([tile_key(t) for t in page_tiles],), width="stretch")
    cols[2].button("Clear selection", on_click=_clear_selection, width="stretch",
                   disabled=not selected)
    cols[3].caption(f"{len(selected)} tile{'s' * (len(selected) != 1)} selected (tick "
                    "“select” under a tile; the "
                    "selection is kept across pages)")
    chosen = list(dict.fromkeys(targets(task, t)[0 if on == "objects" else 1]
                                for t in selected))
    what = ("object", "objects") if on == "objects" else ("query", "queries")
    tags.bulk_bar(run, chosen, "_gal_bulk", what, done=_after_tagging)


def grid(run: Run, shown: list[gallery.Tile]) -> None:
    """The page's tiles, ``COLUMNS`` a row; each opens its query in the explorer and can
    be selected for tagging."""
    ss = st.session_state
    images_dir = str(run.images_dir)
    rs = tags.current(run)
    task = review.task_key(run.options.task)
    selected = set(ss["gal_selected"])
    for start in range(0, len(shown), COLUMNS):
        cols = st.columns(COLUMNS)
        for col, tile in zip(cols, shown[start:start + COLUMNS], strict=False):
            sample_path = run.evaluation.run.sample(tile.query_id).image_path
            stamp = data.image_stamp(run.images_dir, sample_path)
            with col:
                st.image(data.tile_jpeg(run.gt, run.pred, run.options, images_dir, tile,
                                        stamp), width="stretch")
                zoom = "GT and predictions" if tile.kind == "pred" else "GT target"
                url = state.view_url(filters=False, q=tile.query_id, zoom=zoom)
                st.markdown(f"**{caption(tile)}**  \n{views.md_text(tile.text[:80])}  \n"
                            f"[{views.md_text(tile.query_id)} ↗]({url})")
                key = tile_key(tile)
                widget = f"_gsel_{ss['gal_sel_gen']}_{key}"
                notes = _notes_line(rs, task, tile)
                if notes:
                    st.caption(notes)
                line = _tags_line(rs, task, tile)
                st.checkbox("select" + (f" · tagged **{views.md_text(line)}**" if line else ""),
                            value=key in selected, key=widget, on_change=_on_select,
                            args=(key, widget))


@st.fragment
def tiles_fragment(run: Run, shown: list[gallery.Tile]) -> None:
    """Tag bar, pager and grid: turning a page or tagging reruns only this part (not the
    sidebar and filters)."""
    ss = st.session_state
    if ss.pop("_rv_new_tag_made", False) or (ss.pop("_gal_tagged", False)
                                             and ss["gal_review_tags"]):
        # A new tag, or tags changed under the review-tag filter: the filters and the tile
        # list (outside this fragment) must be drawn again.
        st.rerun(scope="app")
    page_tiles = gallery.page(shown, pager(len(shown)))
    state.sync_url(**state.gallery_params())
    tag_bar(run, page_tiles, shown)
    grid(run, page_tiles)
    st.caption("Link to this gallery page (dataset, submission, options, tiles, filters, "
               "sort, page):")
    st.code(state.page_url("Gallery", state.link_params(**state.gallery_params())),
            language=None, wrap_lines=True)
