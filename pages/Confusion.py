"""Category confusion: predicted category against GT category of the unmatched predicted
boxes (or mask components) lying on another category's GT object; a cell opens those boxes
in the Gallery (mask components: their queries in the explorer).

The first screen draws no plotly chart (benchmarks/README.md, "Issue 49: first paint"): the
matrix as a Markdown table and a button per cell; the clickable heatmap is in a lazy "Chart"
tab (``on_change="rerun"``), built and sent only once it is opened."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ovearth_core.analysis import objects
from ovearth_core.viz import analysis_figures as figs
from pages.common import analysis_data, explorer, gallery_views, state, views
from pages.common.run import current, in_frame

# The page's tabs: the matrix's numbers and buttons (the first screen), then the chart.
TABS = ("Numbers", "Chart")


def main() -> None:
    run = current()
    views.evaluated_caption(run)
    state.sync_url()
    modalities = analysis_data.evaluated_objects(run.evaluation.run) if run.evaluation.run else []
    if not modalities:
        st.info("No modality with objects (masks, HBB or OBB) was evaluated.")
        st.stop()
    modality = st.radio("Objects", modalities, horizontal=True,
                        format_func=explorer.OBJECT_LABELS.get, key="_conf_modality",
                        index=modalities.index(analysis_data.box_modality(run) or modalities[0]))
    per = analysis_data.object_outcomes(run.gt, run.pred, run.options, modality)
    threshold = run.options.iou_threshold
    matrix = objects.confusion(per, threshold)
    masks = modality == "segmentation"
    thing = "mask component (8-connected)" if masks else "box"
    st.caption(f"A predicted {thing} counts in row *P*, column *G* when its query asks for *P*, "
               f"the evaluation left it unmatched and its best IoU with a GT "
               f"{'object' if masks else 'box'} of category *G* on the same image (another "
               f"query's) reaches {threshold:g}. Click a button below, or a cell of the matrix "
               "in the \"Chart\" tab, to see "
               + ("their queries in the explorer." if masks else "those boxes in the Gallery."))
    if not matrix:
        st.info(f"No unmatched predicted {thing} reaches a GT object of another category at "
                f"IoU ≥ {threshold:g}.")
        st.stop()

    def open_cell(predicted: str, gt_category: str) -> None:
        if masks:
            explorer.open_objects([predicted], ["class confusion"], modality)
        else:
            gallery_views.open_cell(modality, predicted, gt_category)

    numbers, chart = st.tabs(list(TABS), key="conf_tab", on_change="rerun")
    if numbers.open:
        with numbers:
            st.markdown(figs.category_confusion_markdown(matrix, views.md_text))
            cells_ui(matrix, "mask objects" if masks else "boxes", open_cell)
    if chart.open:
        with chart:
            categories = sorted({r["category"] for r in run.evaluation.rows})
            cell = views.picked_point(st.plotly_chart(
                figs.category_confusion_figure(matrix, modality, categories), key="catconf",
                on_select="rerun", selection_mode="points"))
            if cell is not None and isinstance(cell.get("customdata"), list):
                open_cell(*cell["customdata"])


def cells_ui(matrix: dict[str, dict[str, int]], unit: str,
             open_cell: Callable[[str, str], None]) -> None:
    """A button per non-zero cell, the largest first, each opening its boxes (or queries)."""
    cells = [(p, g, n) for p, row in matrix.items() for g, n in row.items()]
    cols = st.columns(3)
    for i, (p, g, n) in enumerate(sorted(cells, key=lambda c: (-c[2], c[0], c[1]))):
        if cols[i % 3].button(f"{n:,} {p} {unit} on {g} →", key=f"conf_{i}", width="stretch"):
            open_cell(p, g)


in_frame(main)
