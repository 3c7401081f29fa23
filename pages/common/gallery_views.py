"""Gallery widgets: the selector and filters (bound to ``gal_*`` state) and the tile grid."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ovearth_core.analysis import diagnose, gallery

from . import data, state, views
from .sidebar import Run

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
    return {"selector": selector,
            "modality": ss["gal_modality"] if ss["gal_modality"] in modalities else None,
            "sort": ss["gal_sort"],
            "filters": {"outcomes": ss["gal_outcomes"], "failures": ss["gal_failures"],
                        "categories": ss["gal_categories"], "polarity": ss["gal_polarity"],
                        "sizes": ss["gal_sizes"], "iou_range": tuple(ss["gal_iou"])}}


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
    if tile.iou is not None:
        parts.append(f"{'best ' if tile.outcome == 'missed' else ''}IoU {tile.iou:.2f}")
    if tile.score is not None:
        parts.append(f"score {tile.score:.2f}")
    if tile.size is not None:
        parts.append(f"{tile.size:.0f} px")
    return " · ".join(parts)


def grid(run: Run, shown: list[gallery.Tile]) -> None:
    """The page's tiles, ``COLUMNS`` a row; each opens its query in the explorer."""
    images_dir = str(run.images_dir)
    for start in range(0, len(shown), COLUMNS):
        cols = st.columns(COLUMNS)
        for col, tile in zip(cols, shown[start:start + COLUMNS], strict=False):
            sample_path = run.evaluation.run.samples[tile.index].image_path
            stamp = data.image_stamp(run.images_dir, sample_path)
            with col:
                st.image(data.tile_jpeg(run.gt, run.pred, run.options, images_dir, tile,
                                        stamp), width="stretch")
                zoom = "GT and predictions" if tile.kind == "pred" else "GT target"
                url = state.view_url(filters=False, q=tile.query_id, zoom=zoom)
                st.markdown(f"**{caption(tile)}**  \n{views.md_text(tile.text[:80])}  \n"
                            f"[{views.md_text(tile.query_id)} ↗]({url})")


@st.fragment
def tiles_fragment(run: Run, shown: list[gallery.Tile]) -> None:
    """Pager and grid: turning a page reruns only this part (not the sidebar and filters)."""
    grid(run, gallery.page(shown, pager(len(shown))))
