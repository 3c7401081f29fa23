"""The viewer of one query: overlay figure, thumbnail, query facts and metrics."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from PIL import Image

from ovearth_core.viz import overlay

from . import data, state, views
from .sidebar import Run


def _sample_and_row(run: Run, query_id: str) -> tuple[Any, dict[str, Any]]:
    o = run.options
    loaded = data.samples(run.gt, run.pred, o.task, o.modalities, o.score_threshold,
                          o.bbox_format)
    index = next(i for i, s in enumerate(loaded) if s.sample_id == query_id)
    return loaded[index], run.evaluation.results["per_sample"][index]


def _metrics_table(row: dict[str, Any]) -> pd.DataFrame:
    out = []
    seg = row["seg"]
    if seg:
        out.append({"modality": "mask", "IoU": views.fmt(seg["iou"]), "F1/Dice": views.fmt(
            seg["dice"]), "P": views.fmt(seg["precision"]), "R": views.fmt(seg["recall"]),
            "GT / pred": f"{seg['gt_area']:,} / {seg['pred_area']:,} px"})
    for key, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
        e = row[key]
        if e:
            out.append({"modality": label, "IoU": views.fmt(e["mean_matched_iou"]),
                        "F1/Dice": views.fmt(e["f1"]), "P": views.fmt(e["precision"]),
                        "R": views.fmt(e["recall"]),
                        "GT / pred": f"{e['num_gt']} / {e['num_pred']} (TP {e['tp']})"})
    return pd.DataFrame(out)


def _objects(sample: Any, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The query's boxes (HBB, else OBB) as :func:`overlay.box_groups` gives them."""
    key = "bbox" if row["bbox"] else "oriented_bbox" if row["oriented_bbox"] else None
    return [] if key is None else overlay.box_groups(sample, row[key], key == "oriented_bbox")


def _on_object(query_id: str) -> None:
    picked = st.session_state[f"_objects_{query_id}"].selection.rows
    st.session_state["view_focus"] = (query_id, picked[0]) if picked else None


def _object_list(query_id: str, objects: list[dict[str, Any]]) -> None:
    if not objects:
        return
    gts = sum(o["role"] == "GT" for o in objects)  # box_groups lists GT boxes first
    frame = pd.DataFrame([{"object": f"{o['role']} {n + 1 if n < gts else n - gts + 1}",
                           "status": o["status"], "IoU / score": o["label"],
                           "size (px)": f"{np.ptp(o['outline'][:, 0]):.0f} × "
                                        f"{np.ptp(o['outline'][:, 1]):.0f}"}
                          for n, o in enumerate(objects)])
    st.caption("The query's boxes: click one to zoom to it (click again to go back).")
    st.dataframe(frame, hide_index=True, width="stretch", height=min(320, 38 + 35 * len(frame)),
                 on_select=partial(_on_object, query_id), selection_mode="single-row",
                 key=f"_objects_{query_id}")


def _controls() -> None:
    # Pills, not a multiselect: every layer toggle stays visible (chips hid the OBB ones).
    st.pills("Layers", overlay.LAYERS, selection_mode="multi",
             **state.bind("view_layers", overlay.LAYERS))
    cols = st.columns([1.3, 1, 1, 1.3])
    cols[0].slider("Mask opacity", 0.0, 1.0, step=0.05, **state.bind("view_opacity"))
    cols[1].toggle("TP/FP/FN pixels", **state.bind("view_pixel_mode"))
    cols[2].toggle("Box labels", help="Off: a box's IoU and score are in its hover text, "
                   "so no label hides an object.", **state.bind("view_labels"))
    cols[3].selectbox("Open zoomed to", overlay.ZOOM_TARGETS,
                      help="GT target: the GT objects, or the smallest one alone when "
                           "all of them would be too small to see",
                      **state.bind("view_zoom", overlay.ZOOM_TARGETS))


@dataclass(frozen=True)
class Drawn:
    """The drawn pieces of one view of a query (cached: a revisit or a prefetched query
    costs no image work)."""

    figure: go.Figure
    thumbnail: Image.Image
    notice: str | None
    scale: float
    detail_shape: tuple[int, int] | None


def _controls_key() -> tuple[tuple[str, ...], float, bool, bool]:
    ss = st.session_state
    return tuple(ss["view_layers"]), float(ss["view_opacity"]), bool(ss["view_pixel_mode"]), \
        bool(ss["view_labels"])


@st.cache_resource(show_spinner=False, max_entries=16)
def _drawn(_run: Run, key: tuple[Any, ...], query_id: str, region: overlay.Region,
           controls: tuple[tuple[str, ...], float, bool, bool]) -> Drawn:
    """Figure and thumbnail of ``query_id`` opened on ``region``; ``key`` (files, options,
    images folder, image stamp) names the run, which is not hashed."""
    run, stamp = _run, key[-1]
    layers, opacity, pixel_mode, labels = controls
    sample, row = _sample_and_row(run, query_id)
    image = data.display_image(str(run.images_dir), sample.image_path, sample.width,
                               sample.height, stamp)
    detail = data.detail_image(str(run.images_dir), sample.image_path, sample.width,
                               sample.height, stamp, region)
    fig = overlay.overlay_figure(image, sample, row, layers, opacity, pixel_mode, region,
                                 detail=detail,
                                 height=overlay.figure_height(sample.width, sample.height),
                                 labels=labels)
    outlines = [(i["outline"], i["colour"])
                for k, oriented in (("bbox", False), ("oriented_bbox", True))
                for i in overlay.box_groups(sample, row[k], oriented) if row[k]]
    thumb = overlay.thumbnail(image, region, outlines)
    return Drawn(fig, thumb, image.notice, image.scale,
                 None if detail is None else detail.rgb.shape[:2])


def _key(run: Run, sample: Any) -> tuple[Any, ...]:
    return (run.gt, run.pred, run.options, str(run.images_dir),
            data.image_stamp(run.images_dir, sample.image_path))


# One background worker draws the query "Next" would show while the user looks at this one
# (the figure cache shares the result; a click meanwhile waits for it, never draws twice).
_PREFETCH = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ovearth-prefetch")


def _prefetch(run: Run, query_id: str, zoom: str,
              controls: tuple[tuple[str, ...], float, bool, bool]) -> None:
    try:
        sample, _ = _sample_and_row(run, query_id)
        _drawn(run, _key(run, sample), query_id, overlay.zoom_region(sample, zoom), controls)
    except Exception as err:  # noqa: BLE001 - a failed prefetch is redrawn (and shown) later
        state.LOG.info("prefetch of %s failed: %s", query_id, err)


def prefetch(run: Run, query_id: str | None) -> None:
    """Draw ``query_id`` in the background (opened as its zoom setting opens it)."""
    if query_id is not None:
        _PREFETCH.submit(_prefetch, run, query_id, st.session_state["view_zoom"],
                         _controls_key())


def render(run: Run, query_id: str, table_row: dict[str, Any]) -> None:
    sample, row = _sample_and_row(run, query_id)
    ss = st.session_state
    _controls()
    objects = _objects(sample, row)
    focus = ss.get("view_focus")
    if focus and focus[0] == query_id and focus[1] < len(objects):
        region = overlay.object_region(sample, objects[focus[1]]["outline"])
    else:
        region = overlay.zoom_region(sample, ss["view_zoom"])
    drawn = _drawn(run, _key(run, sample), query_id, region, _controls_key())
    left, right = st.columns([3, 1.25])
    with left:
        if drawn.notice:
            st.info(drawn.notice, icon=":material/broken_image:")
        st.plotly_chart(drawn.figure, key="overlay", config={"scrollZoom": True})
        if drawn.detail_shape is not None:
            h, w = drawn.detail_shape
            st.caption(f"Full resolution around the target ({w} × {h} px); the rest of the "
                       f"{sample.width} × {sample.height} image is shown at "
                       f"{drawn.scale:.0%}.")
        st.dataframe(_metrics_table(row), hide_index=True, width="stretch")
        _object_list(query_id, objects)
    with right:
        st.markdown(f"### {state.code(query_id)}")
        st.markdown(f"**{views.md_text(sample.phrase)}**")
        st.markdown(f"Category: **{views.md_text(sample.category)}** · {table_row['polarity']} "
                    f"query  \nOutcome: **{table_row['outcome']}** · Failure: "
                    f"**{table_row['failure']}**")
        if table_row["failure_detail"]:
            st.caption(table_row["failure_detail"])
        scores = [f"{label} {views.fmt(table_row[col])}" for col, label in
                  (("seg_iou", "mask IoU"), ("bbox_f1", "HBB F1"), ("obb_f1", "OBB F1"))
                  if table_row[col] is not None]
        st.caption("Scores: " + (" · ".join(scores) if scores else
                                 "— (negative query: no score, only presence)"))
        st.caption("Link to this view (dataset, submission, options, filters, query, zoom):")
        st.code(state.view_url(q=query_id, zoom=ss["view_zoom"]), language=None,
                wrap_lines=True)
        st.markdown(f"[Same object in other tasks ↗]({state.annotation_url(sample.ann_id)})")
        st.caption(f"Image `{sample.image_path}` · {sample.width} × {sample.height} px")
        st.image(drawn.thumbnail, caption="Full image with all boxes; yellow = the view it "
                 "opened on", width=240)
        st.caption("Boxes: green matched · red false positive · orange missed GT; "
                   "GT solid, prediction dashed. Scroll or drag to zoom and pan; "
                   "double-click resets the view.")
