"""Category confusion: predicted category against GT category of the unmatched predicted
boxes lying on another category's GT box; a cell opens those boxes in the Gallery."""

from __future__ import annotations

import streamlit as st

from ovearth_core.analysis import objects
from ovearth_core.viz import analysis_figures as figs
from pages.common import analysis_data, gallery_views, sidebar, state, views

run = sidebar.page("Category confusion", "Category confusion")
views.evaluated_caption(run)
state.sync_url()
modalities = [m for m in ("bbox", "oriented_bbox") if m in (run.evaluation.run.box_facts
                                                             if run.evaluation.run else {})]
if not modalities:
    st.info("No box modality (HBB or OBB) was evaluated: the confusion compares boxes.")
    st.stop()
modality = st.radio("Boxes", modalities, horizontal=True,
                    format_func=gallery_views.MODALITY_LABELS.get, key="_conf_modality")
per = analysis_data.object_outcomes(run.gt, run.pred, run.options, modality)
threshold = run.options.iou_threshold
matrix = objects.confusion(per, threshold)
st.caption(f"A predicted box counts in row *P*, column *G* when its query asks for *P*, the "
           f"evaluation left it unmatched and its best IoU with a GT box of category *G* on "
           f"the same image (another query's) reaches {threshold:g}. Click a cell, or a "
           "button below, to see those boxes in the Gallery.")
if not matrix:
    st.info(f"No unmatched predicted box reaches a GT box of another category at IoU ≥ "
            f"{threshold:g}.")
    st.stop()
categories = sorted({r["category"] for r in run.evaluation.rows})
figure = figs.category_confusion_figure(matrix, modality, categories)
cell = views.picked_point(st.plotly_chart(figure, key="catconf", on_select="rerun",
                                          selection_mode="points"))
if cell is not None and isinstance(cell.get("customdata"), list):
    gallery_views.open_cell(modality, *cell["customdata"])
cells = [(p, g, n) for p, row in matrix.items() for g, n in row.items()]
cols = st.columns(3)
for i, (p, g, n) in enumerate(sorted(cells, key=lambda c: (-c[2], c[0], c[1]))):
    if cols[i % 3].button(f"{n:,} {p} boxes on {g} →", key=f"conf_{i}", width="stretch"):
        gallery_views.open_cell(modality, p, g)
