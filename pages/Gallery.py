"""Gallery (patches view): a grid of crops, one per GT box, predicted box or query."""

from __future__ import annotations

import streamlit as st

from ovearth_core.analysis import gallery
from pages.common import analysis_data, gallery_views, state, views
from pages.common.run import current, in_frame


def main() -> None:
    run = current()
    views.evaluated_caption(run)
    with st.expander("Tiles and filters", expanded=True):
        chosen = gallery_views.controls(run, open_vocab=run.options.task == "vocabulary")
    state.sync_url(**state.gallery_params())
    if chosen["selector"] != "queries" and chosen["modality"] is None:
        st.info("No box modality (HBB or OBB) was evaluated for this submission: choose "
                "“queries”, or enable bbox / oriented_bbox in the sidebar.")
        st.stop()
    every = analysis_data.tiles_with_objects(run.gt, run.pred, run.options, chosen["selector"],
                                             chosen["modality"])
    shown = gallery.sort_tiles(gallery.filter_tiles(every, **chosen["filters"]), chosen["sort"])
    st.caption(f"{len(shown):,} of {len(every):,} {chosen['selector']} pass the filters · tiles "
               "are cut from the original pixels around the object (GT mask cyan, prediction "
               "magenta; boxes green matched, red false positive, orange missed; the tile's own "
               "object thicker) · the link under a tile opens its query in the explorer; tick "
               "“select” under tiles to tag them")
    if not shown:
        st.info("No tile matches the filters. Loosen them.")
        st.stop()
    gallery_views.tiles_fragment(run, shown)


in_frame(main)
