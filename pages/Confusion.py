"""Category confusion: predicted category against GT category of the unmatched predicted
boxes (or mask components) lying on another category's GT object; a cell opens those boxes
in the Gallery (mask components: their queries in the explorer)."""

from __future__ import annotations

import streamlit as st

from ovearth_core.analysis import objects
from ovearth_core.viz import analysis_figures as figs
from pages.common import analysis_data, explorer, gallery_views, state, views
from pages.common.run import current, in_frame


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
               f"query's) reaches {threshold:g}. Click a cell, or a button below, to see "
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


    categories = sorted({r["category"] for r in run.evaluation.rows})
    figure = figs.category_confusion_figure(matrix, modality, categories)
    cell = views.picked_point(st.plotly_chart(figure, key="catconf", on_select="rerun",
                                              selection_mode="points"))
    if cell is not None and isinstance(cell.get("customdata"), list):
        open_cell(*cell["customdata"])
    cells = [(p, g, n) for p, row in matrix.items() for g, n in row.items()]
    cols = st.columns(3)
    for i, (p, g, n) in enumerate(sorted(cells, key=lambda c: (-c[2], c[0], c[1]))):
        unit = "mask objects" if masks else "boxes"
        if cols[i % 3].button(f"{n:,} {p} {unit} on {g} →", key=f"conf_{i}", width="stretch"):
            open_cell(p, g)


in_frame(main)
