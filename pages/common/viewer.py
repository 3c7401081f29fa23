"""The viewer of one query: overlay figure, thumbnail, query facts and metrics."""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ovearth_core import georef
from ovearth_core.convert import chips
from ovearth_core.errors import OVEarthInputError
from ovearth_core.results import DetEntry, QueryRow
from ovearth_core.viz import overlay, tiles
from ovearth_core.viz.chips import chip_picture

from . import analysis_data, data, state, viewer_card, views
from .run import Run

# The view caches' keys name the run's options: hashed by their text (every field, plain
# values), not field by field as Streamlit hashes a dataclass (a copy of it as a dict),
# which was most of the cache's argument hashing on every "Next" (issue 49).
_KEY_HASH = {data.Options: repr}


def _sample_and_row(run: Run, query_id: str) -> tuple[Any, QueryRow]:
    """The query's sample and its typed row (its ``json``: what the drawing reads)."""
    entry = run.evaluation.run.entry(query_id)
    return entry.sample, entry.row


# The metric table's IoU column: the mask IoU on the mask row, the mean IoU of the matched
# pairs on the box rows (the evaluator's ``mean_matched_iou``), said under the table.
IOU_COLUMN = "IoU †"
IOU_NOTE = ("† Mask row: the mask IoU. HBB and OBB rows: the mean IoU of their matched box "
            "pairs (— with none matched), not the best IoU of any pair.")


def _metrics_rows(row: QueryRow) -> list[dict[str, str]]:
    """The metric table's rows (mask, HBB, OBB: those evaluated), as shown."""
    out = []
    seg = row.seg
    if seg is not None:
        out.append({"modality": "mask", IOU_COLUMN: views.fmt(seg.iou), "F1/Dice": views.fmt(
            seg.dice), "P": views.fmt(seg.precision), "R": views.fmt(seg.recall),
            "GT / pred": f"{seg.gt_area:,} / {seg.pred_area:,} px"})
    for e, label in ((row.bbox, "HBB"), (row.oriented_bbox, "OBB")):
        if e is not None:
            out.append({"modality": label, IOU_COLUMN: views.fmt(e.mean_matched_iou),
                        "F1/Dice": views.fmt(e.f1), "P": views.fmt(e.precision),
                        "R": views.fmt(e.recall),
                        "GT / pred": f"{e.num_gt} / {e.num_pred} (TP {e.tp})"})
    return out


def _metrics_table(row: QueryRow) -> pd.DataFrame:
    return pd.DataFrame(_metrics_rows(row))


def _picked_kinds(row: QueryRow) -> list[tuple[DetEntry, bool, str]]:
    """The box modalities of the box picker, ``(entry, oriented, kind)``: every evaluated
    HBB, then every evaluated OBB (a query failing in OBB is zoomed to its OBB's envelope).
    The HBBs come first, so an HBB's place is the one it had alone."""
    return [(entry, oriented, kind) for entry, oriented, kind in
            ((row.bbox, False, "HBB"), (row.oriented_bbox, True, "OBB")) if entry is not None]


def _picked_items(sample: Any, row: QueryRow) -> list[dict[str, Any]]:
    """The picker's boxes as :func:`overlay.box_groups` gives them, each with its ``kind``
    (``HBB`` / ``OBB``) and ``number`` among its kind and role: GT HBBs, predicted HBBs, GT
    OBBs, predicted OBBs."""
    out: list[dict[str, Any]] = []
    for entry, oriented, kind in _picked_kinds(row):
        counts = {"GT": 0, "pred": 0}
        for item in overlay.box_groups(sample, entry.json, oriented):
            counts[item["role"]] += 1
            out.append({**item, "kind": kind, "number": counts[item["role"]]})
    return out


@dataclass(frozen=True)
class Picker:
    """The box picker's boxes of one query (:func:`_picked_items`' order): each box's
    label (with its centre in map coordinates and, missed or false on a scene merged from
    chips, where it fell among them), status, colour and that place (``""``: none)."""

    labels: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    colours: tuple[str, ...] = ()
    places: tuple[str, ...] = ()


@st.cache_resource(show_spinner=False, max_entries=16, hash_funcs=_KEY_HASH)
def _picker(_run: Run, key: tuple[Any, ...], query_id: str, _ref: georef.Georef | None,
            _scene: analysis_data.SceneChips | None) -> Picker:
    """The :class:`Picker` of ``query_id``, built once per query (and in the background for
    the next one: a dense scene has 8,000 boxes). ``key`` (files, options, images folder,
    image stamp) decides the georeference and the chips too, so they are not hashed."""
    sample, row = _sample_and_row(_run, query_id)
    items = _picked_items(sample, row)
    if not items:
        return Picker()
    centres = _centres(items, _ref)
    places = _chip_places(_scene, items)
    labels = tuple(f"{o['role']} {o['kind']} {o['number']} · {o['status']} · {o['label']} · "
                   f"{'envelope ' if o['kind'] == 'OBB' else ''}"
                   f"{np.ptp(o['outline'][:, 0]):.0f} × "
                   f"{np.ptp(o['outline'][:, 1]):.0f} px{centres[n]}"
                   + (f" · {places[n]}" if places[n] else "") for n, o in enumerate(items))
    return Picker(labels, tuple(o["status"] for o in items),
                  tuple(o["colour"] for o in items), tuple(places))


def _object_outline(sample: Any, row: QueryRow, n: int) -> Any:
    """The outline ``(5, 2)`` of the picker's box ``n`` (:func:`_picked_items`' order);
    ``None`` past the last box."""
    for _, oriented, _ in _picked_kinds(row):
        for boxes in ((sample.gt_obbs, sample.pred_obbs) if oriented
                      else (sample.gt_boxes, sample.pred_boxes)):
            if n < len(boxes):
                return overlay.closed_outlines([boxes[n]], oriented)[0]
            n -= len(boxes)
    return None


def error_boxes(sample: Any, row: QueryRow) -> list[tuple[int, str]]:
    """The query's box errors, in the box picker's order (:func:`_picked_items`): ``(its
    number in the picker, 0-based; text)`` of every box the evaluator left unmatched, a
    missed GT box or a false positive ("missed · GT HBB 17")."""
    out: list[tuple[int, str]] = []
    n = 0
    for entry, oriented, kind in _picked_kinds(row):
        gt, pred = ((sample.gt_obbs, sample.pred_obbs) if oriented
                    else (sample.gt_boxes, sample.pred_boxes))
        gs, ps, _, _ = overlay.match_status(len(gt), len(pred), entry.matches)
        for role, statuses in (("GT", gs), ("pred", ps)):
            out += [(n + k, f"{status} · {role} {kind} {k + 1}")
                    for k, status in enumerate(statuses) if status != "matched"]
            n += len(statuses)
    return out


def _opening(sample: Any, row: QueryRow, zoom: str,
             errors: list[tuple[int, str]]) -> tuple[int | None, overlay.Region]:
    """The box a query opens on (its number in the picker; ``None``: none) and the view:
    a dense query ("GT target", whose objects cannot all show together) with box errors
    opens on its first error, zoomed to it; any other on ``zoom``'s region."""
    if errors and zoom == "GT target" and overlay.too_dense(sample):
        first = errors[0][0]
        return first, overlay.object_region(sample, _object_outline(sample, row, first))
    return None, overlay.zoom_region(sample, zoom)


def _error_bar(errors: list[tuple[int, str]], at: int | None
               ) -> tuple[str, bool, bool] | None:
    """The error navigator's line for a view on picker box ``at``: ``(text, previous
    enabled, next enabled)``; ``None`` without errors."""
    if not errors:
        return None
    numbers = [n for n, _ in errors]
    if at in numbers:
        k = numbers.index(at)
        return (f"Error {k + 1:,} of {len(errors):,} · {errors[k][1]} · Shift+← / Shift+→",
                k > 0, k < len(errors) - 1)
    plural = "s" if len(errors) > 1 else ""
    return (f"{len(errors):,} box error{plural} (missed or false) · “Next error” opens the "
            "first · Shift+→", False, True)


def _step_error(query_id: str, errors: list[tuple[int, str]], at: int | None,
                slot: str) -> None:
    """Focus the error before or after picker box ``at`` (the first error when ``at`` is
    none of them)."""
    numbers = [n for n, _ in errors]
    if not numbers:
        return
    k = numbers.index(at) if at in numbers else -1
    k = min(max(k + (1 if slot == "next_err" else -1), 0), len(numbers) - 1)
    st.session_state["view_focus"] = (query_id, numbers[k])


def _on_object(query_id: str) -> None:
    picked = st.session_state["_w_objects"]
    st.session_state["view_focus"] = None if picked is None else (query_id, picked)


def _centres(objects: list[dict[str, Any]], ref: georef.Georef | None) -> list[str]:
    """Each object's centre (its envelope's: a rectangle's centre) in map coordinates,
    ``" · centre EPSG:… X …, Y … · lon …, lat …"``; ``""`` each without a georeference."""
    if ref is None or not objects:
        return [""] * len(objects)
    ends = np.array([(o["outline"].min(axis=0), o["outline"].max(axis=0)) for o in objects])
    mid = ends.mean(axis=1)
    return [f" · centre {t}" for t in georef.coordinate_texts(ref, mid[:, 0], mid[:, 1])]


_ASTRAY = ("missed", "false positive")


def _envelope(outline: np.ndarray) -> tuple[float, float, float, float]:
    return (float(outline[:, 0].min()), float(outline[:, 1].min()),
            float(outline[:, 0].max()), float(outline[:, 1].max()))


def _chip_places(scene: analysis_data.SceneChips | None,
                 objects: list[dict[str, Any]]) -> list[str]:
    """Where each missed or false object fell among the scene's chips (``""`` else)."""
    if scene is None or not scene.chips:
        return [""] * len(objects)
    return [chips.place_text(chips.place(_envelope(o["outline"]), scene.chips),
                             len(scene.chips)) if o["status"] in _ASTRAY else ""
            for o in objects]


def _scene_chips(run: Run, sample: Any, quiet: bool = False
                 ) -> analysis_data.SceneChips | None:
    """The chips the submission names for the sample's scene (``None``: unreadable, said
    in a caption unless ``quiet``)."""
    try:
        return analysis_data.scene_chips(run.pred, str(run.images_dir), sample.image_path,
                                         sample.width, sample.height)
    except (OVEarthInputError, OSError) as err:
        if not quiet:
            st.caption("The submission's chip names could not be read: "
                       f"{views.md_text(str(err))}")
        return None


def _chip_link(query_id: str, sample: Any, row: QueryRow, picker: Picker,
               scene: analysis_data.SceneChips | None, run: Run) -> None:
    """For the picked object, missed or false, of a scene merged from chips: where it fell,
    and each chip it fell in whose image is in the images folder, to open."""
    focus = st.session_state.get("view_focus")
    places = picker.places
    if (scene is None or not focus or focus[0] != query_id or focus[1] >= len(places)
            or not places[focus[1]]):
        return
    outline = _object_outline(sample, row, focus[1])
    kind, names = chips.place(_envelope(outline), scene.chips)
    unsized = [c for c in scene.chips if c.name in names and not c.sized]
    st.caption(f"The picked {picker.statuses[focus[1]]} object is {places[focus[1]]}"
               + (f" (no chip image in the images folder for "
                  f"{', '.join(c.name for c in unsized)}: taken as a {unsized[0].side}-px "
                  f"chip, from {unsized[0].source})" if unsized else "") + ".")
    for chip in scene.chips:
        if chip.name not in names or chip.name not in scene.files:
            continue
        relative, (w, h) = scene.files[chip.name]
        x0, y0, x1, y1 = chip.box
        with st.expander(f"Chip {chip.name} ↗"):
            stamp = data.image_stamp(run.images_dir, relative)
            shown = data.display_image(str(run.images_dir), relative, w, h, stamp)
            if shown.notice:
                st.info(shown.notice, icon=":material/broken_image:")
            st.image(chip_picture(shown, chip, outline, picker.colours[focus[1]]),
                     width=min(512, shown.rgb.shape[1]))
            st.caption(f"{relative}: x {x0:,.0f}–{x1:,.0f}, y {y0:,.0f}–{y1:,.0f} of the "
                       "scene; the object outlined.")


# More boxes than this: the picker is a box number, not a list. A list is sent with every
# query: 8,128 labels were 436 KiB and 0.5 s of each "Next" in Chromium (issue 25).
PICKER_OPTIONS = 500


def _on_object_no(query_id: str) -> None:
    picked = st.session_state["_w_object_no"]
    st.session_state["view_focus"] = None if picked is None else (query_id, int(picked) - 1)


def _number_ranges(labels: tuple[str, ...]) -> str:
    """Which numbers are which boxes: ``GT HBB 1–880, pred HBB 881–1,760``."""
    runs: list[list[Any]] = []
    for n, label in enumerate(labels, start=1):
        group = " ".join(label.split(" ", 2)[:2])
        if runs and runs[-1][0] == group:
            runs[-1][2] = n
        else:
            runs.append([group, n, n])
    return ", ".join(f"{g} {a:,}–{b:,}" for g, a, b in runs)


def _object_picker(query_id: str, labels: tuple[str, ...]) -> None:
    """A picker of the query's boxes: choosing one zooms the view to it (in a dense scene,
    by its number, the chosen box's label shown under it). Each label lists the box's
    centre in map coordinates when the image is georeferenced and, missed or false on a
    scene merged from chips, where it fell among them."""
    if not labels:
        return

    focus = st.session_state.get("view_focus")
    if len(labels) > PICKER_OPTIONS:
        shown = focus[1] if focus and focus[0] == query_id else None
        st.session_state["_w_object_no"] = None if shown is None else shown + 1
        st.number_input(f"Zoom to one of the query's {len(labels):,} boxes by number "
                        f"({_number_ranges(labels)})", min_value=1,
                        max_value=len(labels), value=None, step=1, key="_w_object_no",
                        placeholder="the view it opened on", on_change=_on_object_no,
                        args=(query_id,))
        if shown is not None:
            st.caption(labels[shown])
        return
    # One key for every query (a new widget per query costs the browser a mount): its
    # value is set from the focus each run, its options are the query's boxes.
    key = "_w_objects"
    st.session_state[key] = focus[1] if focus and focus[0] == query_id else None
    st.selectbox(f"Zoom to one of the query's {len(labels):,} boxes", range(len(labels)),
                 format_func=labels.__getitem__, key=key, placeholder="the view it opened on",
                 on_change=_on_object, args=(query_id,))


def _view_options() -> None:
    st.slider("Mask opacity", 0.0, 1.0, step=0.05, **state.bind("view_opacity"))
    st.toggle("TP/FP/FN pixels", **state.bind("view_pixel_mode"))
    st.toggle("Box labels", help="Off: no label hides an object; the box picker below the "
              "view (and, in the interactive view, each outline's hover text) gives IoU and "
              "score.", **state.bind("view_labels"))
    st.toggle("Interactive (zoom, pan, hover)", help="A plotly figure instead of one picture "
              "drawn on the server (which switches queries faster).",
              **state.bind("view_interactive"))
    st.selectbox("Open zoomed to", overlay.ZOOM_TARGETS,
                 help="GT target: the GT objects, or the smallest one alone when "
                      "all of them would be too small to see",
                 **state.bind("view_zoom", overlay.ZOOM_TARGETS))


def _on_layers(shown: tuple[str, ...]) -> None:
    """The pills' choice, keeping the layers they do not offer here as they were (chosen
    for data that has that geometry)."""
    ss = st.session_state
    picked = ss["_w_view_layers"] or []
    ss["view_layers"] = [layer for layer in overlay.LAYERS if layer in picked
                         or (layer not in shown and layer in ss["view_layers"])]


VIEW_OPTIONS_OPEN = "_w_view_options_open"  # the "View options" popover's state


def toolbar(run: Run, review: bool) -> None:
    """The viewer's toolbar (:func:`_toolbar`) for ``run``: the layers its evaluated samples
    have geometry for, the review switch with a review panel (``review``). Drawn by the
    page outside the fragment that "Next" reruns: nothing in it changes from one query to
    the next, and every element a fragment's rerun sends again costs the browser a redraw
    (issue 49)."""
    evaluated = run.evaluation.run
    _toolbar(review, overlay.layers_with_geometry(evaluated.samples)
             if evaluated is not None else overlay.LAYERS)


def _toolbar(review: bool, shown: tuple[str, ...] = overlay.LAYERS) -> None:
    """Layer toggles, always visible (chips hid the OBB ones); the other view options in a
    popover (built and drawn only when opened); switches for the review panel and the link. Nothing
    here changes from one query to the next while the panels are off: a query switch then
    costs the browser no redraw of them."""
    cols = st.columns([5.4, 1.4, 1.3, 1.0] if review else [5.4, 1.4, 1.0],
                      vertical_alignment="bottom")
    ss = st.session_state
    ss["_w_view_layers"] = [layer for layer in ss["view_layers"] if layer in shown]
    cols[0].pills("Layers", shown, selection_mode="multi", key="_w_view_layers",
                  on_change=_on_layers, args=(shown,),
                  help="Only the layers this benchmark has geometry for.")
    # Lazy: its five widgets are built and sent only while it is open (each "Next" sent
    # them again, unchanged: issue 49); their values live in their persistent keys.
    with cols[1].popover("View options", width="stretch", key=VIEW_OPTIONS_OPEN,
                         on_change="rerun") as options:
        if options.open:
            _view_options()
    if review:
        cols[2].toggle("Tag / note", help="The review panel of this query and its boxes "
                       "(stays open from query to query).", **state.bind("view_review"))
    cols[-1].toggle("Link", help="The link to this view, to copy.", **state.bind("view_link"))


@dataclass(frozen=True)
class Drawn:
    """The drawn pieces of one view of a query (cached: a revisit or a prefetched query
    costs no image work)."""

    figure: go.Figure | None  # the interactive view, or
    picture: bytes | None  # the static one (JPEG)
    thumbnail: bytes  # JPEG
    notice: str | None
    scale: float
    detail_shape: tuple[int, int] | None
    legend: str  # the boxes' colours and line styles (box_legend)


Controls = tuple[tuple[str, ...], float, bool, bool, bool]


def _controls_key() -> Controls:
    ss = st.session_state
    return tuple(ss["view_layers"]), float(ss["view_opacity"]), bool(ss["view_pixel_mode"]), \
        bool(ss["view_labels"]), bool(ss["view_interactive"])


@st.cache_resource(show_spinner=False, max_entries=16, hash_funcs=_KEY_HASH)
def _drawn(_run: Run, key: tuple[Any, ...], query_id: str, region: overlay.Region,
           controls: Controls) -> Drawn:
    """Figure and thumbnail of ``query_id`` opened on ``region``; ``key`` (files, options,
    images folder, image stamp) names the run, which is not hashed."""
    run, stamp = _run, key[-1]
    layers, opacity, pixel_mode, labels, interactive = controls
    sample, row = _sample_and_row(run, query_id)
    gone = suppressed_positions(run, query_id)
    image = data.display_image(str(run.images_dir), sample.image_path, sample.width,
                               sample.height, stamp)
    detail = data.detail_image(str(run.images_dir), sample.image_path, sample.width,
                               sample.height, stamp, region)
    if interactive:
        fig = overlay.overlay_figure(image, sample, row.json, layers, opacity, pixel_mode, region,
                                     detail=detail,
                                     height=overlay.figure_height(sample.width, sample.height),
                                     labels=labels, suppressed=gone)
        _hover_map_coordinates(fig, _georef(run, sample))
        picture = None
    else:
        fig = None
        picture = tiles.jpeg_bytes(overlay.static_view(
            image, sample, row.json, layers, opacity, pixel_mode, region, detail, labels,
            suppressed=gone), 85)
    thumb = tiles.jpeg_bytes(overlay.thumbnail(image, region,
                                               overlay.box_outlines(sample, row.json)), 85)
    return Drawn(fig, picture, thumb, image.notice, image.scale,
                 None if detail is None else detail.rgb.shape[:2],
                 box_legend(sample, any(gone.values())))


def suppressed_positions(run: Run, query_id: str) -> overlay.Suppressed:
    """The positions, per box modality, of the query's drawn boxes NMS-AP removed
    (none unless the options ask for NMS-AP)."""
    out: dict[str, set[int]] = {}
    for box in analysis_data.nms_suppressed(run.gt, run.pred, run.options, query_id):
        if box.box is not None:
            out.setdefault(box.modality, set()).add(box.box)
    return {m: frozenset(v) for m, v in out.items()}


def suppressed_panel(run: Run, query_id: str) -> None:
    """What NMS-AP removed on this query: each box and the box that won it (when on)."""
    if not run.options.nms_ap:
        return
    removed = analysis_data.nms_suppressed(run.gt, run.pred, run.options, query_id)
    if not removed:
        st.caption("NMS-AP suppressed none of this query's boxes.")
        return
    lines = [f"**{len(removed)} box{'es' * (len(removed) != 1)} {overlay.SUPPRESSED_NAME}** "
             "(drawn grey, dotted): another phrase's box on the same object scored higher."]
    for b in removed:
        where = ("hidden by the score threshold" if b.box is None
                 else f"predicted {MODALITY_TAGS[b.modality]} #{b.box + 1}")
        lines.append(
            f"- {where} (score {views.fmt(b.score)}) lost to {state.code(b.winner_query_id)} "
            f"“{views.md_text(b.winner_phrase)}” (its box #{b.winner_box + 1}, score "
            f"{views.fmt(b.winner_score)}), IoU {b.iou:.2f} with the GT box they overlap")
    if _sample_and_row(run, query_id)[0].negative:
        lines.append("\nA negative phrase answered with a positive's box: plain AP counts it "
                     "in this phrase's category alone; NMS-AP removes it.")
    st.markdown("\n".join(lines))


MODALITY_TAGS = {"bbox": "HBB", "oriented_bbox": "OBB"}


def _hover_map_coordinates(fig: go.Figure, ref: georef.Georef | None) -> None:
    """Each outline vertex's hover text gains its point in the CRS and WGS84 (``customdata``
    ``(X, Y, lon, lat)``) when the image is georeferenced."""
    if ref is None:
        return
    for trace in fig.data:
        if not (isinstance(trace, go.Scatter) and trace.mode == "lines"
                and trace.hovertext is not None):
            continue
        x, y = (np.asarray(v, dtype=np.float64) for v in (trace.x, trace.y))
        mx, my = ref.to_map(x, y)
        name = ref.crs if ref.epsg is not None else "map"
        head = f"%{{hovertext}}<br>{name} X %{{customdata[0]:,.2f}}, Y %{{customdata[1]:,.2f}}"
        drawn = np.isfinite(x) & np.isfinite(y)  # not the gaps between outlines
        try:
            lon, lat = ref.to_lonlat(x[drawn], y[drawn])
        except georef.NoLonLat as err:
            trace.update(customdata=np.column_stack([mx, my]),
                         hovertemplate=f"{head}<br>no WGS84 position "
                         f"({html.escape(str(err)).replace('%', '%%')})<extra></extra>")
            continue
        full_lon, full_lat = np.full_like(x, np.nan), np.full_like(y, np.nan)
        full_lon[drawn], full_lat[drawn] = lon, lat
        trace.update(customdata=np.column_stack([mx, my, full_lon, full_lat]),
                     hovertemplate=f"{head}<br>lon %{{customdata[2]:.6f}}°, "
                     "lat %{customdata[3]:.6f}°<extra></extra>")


def _key(run: Run, sample: Any) -> tuple[Any, ...]:
    return (run.gt, run.pred, run.options, str(run.images_dir),
            data.image_stamp(run.images_dir, sample.image_path))


# One background worker draws the query "Next" would show while the user looks at this one
# (the figure cache shares the result; a click meanwhile waits for it, never draws twice).
_PREFETCH = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ovearth-prefetch")


# The static views drawn to the end (by the worker or for the page), by their ``_drawn``
# arguments: a card sent ahead (:func:`card_ahead`) is built only from one of these, never
# drawn while the page waits. Insertion-ordered, the oldest dropped past _READY_MAX (as
# many as ``_drawn`` keeps).
_READY: dict[tuple[Any, ...], Drawn] = {}
_READY_MAX = 16
_READY_LOCK = threading.Lock()  # the worker and the page's script threads both add


def _drawn_ready(run: Run, key: tuple[Any, ...], query_id: str, region: overlay.Region,
                 controls: Controls) -> Drawn:
    drawn = _drawn(run, key, query_id, region, controls)
    if drawn.picture is not None:
        ready = (key, query_id, region, controls)
        with _READY_LOCK:
            _READY.pop(ready, None)
            _READY[ready] = drawn
            while len(_READY) > _READY_MAX:
                _READY.pop(next(iter(_READY)))
    return drawn


def _prefetch(run: Run, query_id: str, zoom: str, controls: Controls) -> None:
    try:
        sample, row = _sample_and_row(run, query_id)
        key = _key(run, sample)
        _, region = _opening(sample, row, zoom, error_boxes(sample, row))
        _drawn_ready(run, key, query_id, region, controls)
        _picker(run, key, query_id, _georef(run, sample), _scene_chips(run, sample, quiet=True))
    except Exception as err:  # noqa: BLE001 - a failed prefetch is redrawn (and shown) later
        state.LOG.info("prefetch of %s failed: %s", query_id, err)


def prefetch(run: Run, *query_ids: str | None) -> None:
    """Draw ``query_ids`` in the background, in order (each opened as its zoom setting
    opens it); ``None`` is skipped."""
    for query_id in query_ids:
        if query_id is not None:
            _PREFETCH.submit(_prefetch, run, query_id, st.session_state["view_zoom"],
                             _controls_key())


def card_ahead(run: Run, query_id: str, table_row: dict[str, Any], tags: str | None = None,
               head: str = "", url: str | None = None,
               nav: tuple[bool, bool] | None = None) -> dict[str, Any] | None:
    """The card ``query_id`` would show when the navigator opens it (its zoom setting's
    region; a picked box belongs to the query shown now), for the card element to put in
    place at the click, before the rerun that confirms it (a :func:`viewer_card.payload`:
    its pictures go along, content-addressed). ``None`` unless its view is drawn already
    (never drawn here: the page does not wait for it), static, and without a notice (an
    image that could not be read is said outside the card), nor for a query with a picked
    box (it reopens zoomed to that box)."""
    ss = st.session_state
    focus = ss.get("view_focus")
    if ss["view_interactive"] or (focus and focus[0] == query_id):
        return None  # (a box picked in that query: it reopens zoomed to it, drawn then)
    sample, row = _sample_and_row(run, query_id)
    key = _key(run, sample)
    errors = error_boxes(sample, row)
    at, region = _opening(sample, row, ss["view_zoom"], errors)
    controls = _controls_key()
    with _READY_LOCK:
        drawn = _READY.get((key, query_id, region, controls))
    if drawn is None or drawn.notice:
        return None
    html_text, pictures = _card(query_id, sample, row, table_row, drawn, region, tags,
                                _map_note(_georef(run, sample), region), head, nav,
                                _error_bar(errors, at))
    return viewer_card.payload(html_text, url, pictures)


_CARD_CSS = ("<style>.ov-card{display:flex;gap:1.25rem;align-items:flex-start}"
             ".ov-main{flex:3 1 0;min-width:0}.ov-side{flex:1.25 1 0;min-width:0}"
             ".ov-card img.ov-view{width:100%;display:block}"
             ".ov-cap{font-size:.85rem;opacity:.7;margin:.3rem 0 .6rem}"
             ".ov-card table{border-collapse:collapse;width:100%;font-size:.9rem}"
             ".ov-card th,.ov-card td{border-bottom:1px solid rgba(128,128,128,.3);"
             "padding:.25rem .5rem;text-align:left;white-space:nowrap}"
             ".ov-card h3{margin:0 0 .5rem}.ov-card p{margin:0 0 .6rem}"
             ".ov-nav{font-size:.875rem;opacity:.75;margin:0 0 .75rem;text-align:center}"
             "</style>")


def _scores(table_row: dict[str, Any]) -> str:
    """The query's scores line (both views' facts)."""
    scores = [f"{label} {views.fmt(table_row[col])}" for col, label in
              (("seg_iou", "mask IoU"), ("bbox_f1", "HBB F1"), ("obb_f1", "OBB F1"))
              if table_row[col] is not None]
    return "Scores: " + (" · ".join(scores) if scores else
                         "— (negative query: no score, only presence)")


def _metrics_html(row: QueryRow) -> str:
    # Plain rows, no DataFrame: three cards per "Next" (the query's and the two sent
    # ahead) built a DataFrame each, ~10 % of the fragment's server time (issue 49).
    rows = _metrics_rows(row)
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r.values())
                   + "</tr>" for r in rows)
    return (f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<p class='ov-cap'>{html.escape(IOU_NOTE)}</p>")


def _card(query_id: str, sample: Any, row: QueryRow, table_row: dict[str, Any],
          drawn: Drawn, region: overlay.Region, tags: str | None,
          map_note: list[str], head: str = "", nav: tuple[bool, bool] | None = None,
          errors: tuple[str, bool, bool] | None = None) -> tuple[str, dict[str, bytes]]:
    """The navigator (``head``, ``nav``, ``errors``: :func:`viewer_card.bar`), the static
    view, its
    notes, the metric table and the query's facts as one HTML block: a query switch
    changes one element of the page, not a dozen (each changed element costs the browser
    a render of the whole page). User text is escaped; the two pictures are named by
    their content address (``data-pic``), returned beside the HTML (address -> JPEG)."""
    e = html.escape
    view, thumbnail = drawn.picture or b"", drawn.thumbnail
    picture, thumb = viewer_card.address(view), viewer_card.address(thumbnail)
    x0, y0, x1, y1 = region
    notes = [f"Showing x {x0:,.0f}–{x1:,.0f}, y {y0:,.0f}–{y1:,.0f} of the "
             f"{sample.width} × {sample.height} image.", *map_note]
    if drawn.detail_shape is not None:
        h, w = drawn.detail_shape
        notes.append(f"Full resolution around the target ({w} × {h} px); the rest of the "
                     f"image is shown at {drawn.scale:.0%}.")
    notes.append("“Interactive” (in View options) zooms, pans and shows each outline's text "
                 "on hover; “Tag / note” opens the review panel under the view; the → and ← "
                 "keys open the next and previous query, with Shift the next and previous "
                 "box error.")
    side = [f"<h3><code>{e(query_id)}</code></h3>", f"<p><b>{e(sample.phrase)}</b></p>",
            f"<p>Category: <b>{e(sample.category)}</b> · {e(table_row['polarity'])} query<br>"
            f"Outcome: <b>{e(table_row['outcome'])}</b> · Failure: "
            f"<b>{e(table_row['failure'])}</b></p>"]
    if table_row["failure_detail"]:
        side.append(f"<p class='ov-cap'>{e(table_row['failure_detail'])}</p>")
    side.append(f"<p>{e(_scores(table_row))}</p>")
    if tags is not None:
        side.append(f"<p>Review tags: {e(tags) if tags else '—'}</p>")
    side += [f"<p><a href='{e(state.annotation_url(sample.ann_id))}' target='_self'>"
             "Same object in other tasks ↗</a></p>",
             f"<p class='ov-cap'>Image <code>{e(sample.image_path)}</code> · "
             f"{sample.width} × {sample.height} px</p>",
             f"<img class='ov-thumb' data-pic='{thumb}' style='max-width:240px' "
             "alt='the full image with all boxes'>",
             "<p class='ov-cap'>Full image with all boxes; yellow = the view it opened on. "
             f"{e(drawn.legend)}</p>"]
    return (f"{_CARD_CSS}{viewer_card.bar(head, nav, errors)}<div class='ov-card'>"
            "<div class='ov-main'>"
            f"<img class='ov-view' data-pic='{picture}' "
            f"alt='view of query {e(query_id)}'><p class='ov-cap'>{e(' '.join(notes))}</p>"
            f"{_metrics_html(row)}</div><div class='ov-side'>{''.join(side)}</div></div>",
            {picture: view, thumb: thumbnail})


def box_legend(sample: Any, suppressed: bool = False) -> str:
    """The boxes' and masks' colours and line styles (DOTA's difficult GT boxes, dotted,
    when the query has one; grey dotted predictions when NMS-AP removed some)."""
    hard = bool(np.asarray(sample.gt_difficult, dtype=bool).any())
    return ("Boxes: green matched · red false positive · orange missed GT; GT solid, "
            "prediction dashed" + (", difficult GT (DOTA) dotted" if hard else "")
            + (f", grey dotted: prediction {overlay.SUPPRESSED_NAME}" if suppressed else "")
            + ". Masks: GT cyan, prediction magenta (or TP green, FP red, FN orange).")


def _georef(run: Run, sample: Any) -> georef.Georef | None:
    """The image's georeference in the annotation's pixels (an image of another size is
    drawn stretched to the annotation, so its transform is scaled alike)."""
    ref = data.image_georef(str(run.images_dir), sample.image_path,
                            data.image_stamp(run.images_dir, sample.image_path))
    return None if ref is None else ref.in_frame(sample.width, sample.height)


def _map_note(ref: georef.Georef | None, region: overlay.Region) -> list[str]:
    """The view centre's map and WGS84 coordinates when the image is georeferenced."""
    if ref is None:
        return []
    x0, y0, x1, y1 = region
    return [f"View centre: {georef.coordinate_text(ref, (x0 + x1) / 2, (y0 + y1) / 2)}."]


def _facts(query_id: str, sample: Any, table_row: dict[str, Any], tags: str | None) -> str:
    """The query's facts as one markdown block (the interactive view's side column)."""
    lines = [f"### {state.code(query_id)}", f"**{views.md_text(sample.phrase)}**",
             f"Category: **{views.md_text(sample.category)}** · {table_row['polarity']} query  \n"
             f"Outcome: **{table_row['outcome']}** · Failure: **{table_row['failure']}**"]
    if table_row["failure_detail"]:
        lines.append(f"*{views.md_text(table_row['failure_detail'])}*")
    lines.append(_scores(table_row))
    if tags is not None:
        lines.append(f"Review tags: {views.md_text(tags) if tags else '—'}")
    lines.append(f"[Same object in other tasks ↗]({state.annotation_url(sample.ann_id)})")
    lines.append(f"Image {state.code(sample.image_path)} · {sample.width} × {sample.height} px")
    return "\n\n".join(lines)


def render(run: Run, query_id: str, table_row: dict[str, Any],
           review: Callable[[], None] | None = None, tags: str | None = None,
           head: str = "", url: str | None = None,
           ahead: Callable[[], dict[str, Any]] | None = None,
           nav: tuple[bool, bool] | None = None,
           on_nav: Callable[[str], None] | None = None,
           after: Callable[[], None] | None = None) -> None:
    """The viewer of ``query_id`` (its toolbar is :func:`toolbar`, drawn apart); ``review``
    draws the review panel (under the view, when
    its switch is on) and ``tags`` lists the query's review tags (``None``: no review on
    this page); ``after`` draws what the page shows under the viewer. The card is the
    last element sent, into its place atop the viewer (:func:`viewer_card.slot`): its
    arrival tells the browser the run has drawn everything (no end marker of its own,
    issue 49). ``head`` (plain text) is the navigator's position line atop the card,
    between its "◀ Previous" and "Next ▶" buttons (``nav``: which of them can be pressed;
    ``None``: no buttons), whose clicks call ``on_nav`` (``"prev"`` / ``"next"``) before
    the rerun they start; ``url`` is the query string the card writes to the address bar
    (``None``: left alone); ``ahead`` gives the cards the navigator's buttons open
    (:func:`card_ahead`, by button: ``next`` / ``prev``), which the card puts in place at
    the click."""
    sample, row = _sample_and_row(run, query_id)
    ss = st.session_state
    if ss["view_link"]:
        st.caption("Link to this view (dataset, submission, options, filters, query, picked "
                   "box, zoom, layers and view options):")
        st.code(state.view_url(**state.view_params(query_id)), language=None,
                wrap_lines=True)
    key = _key(run, sample)
    ref = _georef(run, sample)
    scene = _scene_chips(run, sample)
    picker = _picker(run, key, query_id, ref, scene)
    focus = ss.get("view_focus")
    errors = error_boxes(sample, row)
    if focus and focus[0] == query_id and focus[1] < len(picker.labels):
        at: int | None = focus[1]
        region = overlay.object_region(sample, _object_outline(sample, row, focus[1]))
    else:
        at, region = _opening(sample, row, ss["view_zoom"], errors)
    error_bar = _error_bar(errors, at)

    def navigate(slot: str) -> None:
        if slot in viewer_card.ERROR_NAV:
            _step_error(query_id, errors, at, slot)
        elif on_nav is not None:
            on_nav(slot)

    drawn = _drawn_ready(run, key, query_id, region, _controls_key())
    map_note = _map_note(ref, region)
    if drawn.figure is None:
        if drawn.notice:
            st.info(views.md_text(drawn.notice), icon=":material/broken_image:")
        slot = viewer_card.slot()
        suppressed_panel(run, query_id)
        _object_picker(query_id, picker.labels)
        _chip_link(query_id, sample, row, picker, scene, run)
        _review_panel(review)
        if after is not None:
            after()
        # No card ahead while this query says more outside the card (its image's notice,
        # a picked box's chips): at the click it would stay beside the next query's card.
        said = drawn.notice or (focus and focus[0] == query_id)
        html_text, pictures = _card(query_id, sample, row, table_row, drawn, region, tags,
                                    map_note, head, nav, error_bar)
        with slot:
            viewer_card.show(viewer_card.payload(html_text, url, pictures),
                             ahead() if ahead is not None and not said else None, navigate)
        return
    slot = viewer_card.slot()
    left, right = st.columns([3, 1.25])
    with left:
        if drawn.notice:
            st.info(views.md_text(drawn.notice), icon=":material/broken_image:")
        st.plotly_chart(drawn.figure, key="overlay", config={"scrollZoom": True})
        notes = ["Scroll or drag to zoom and pan; double-click resets the view.",
                 *map_note]
        if drawn.detail_shape is not None:
            h, w = drawn.detail_shape
            notes.insert(0, f"Full resolution around the target ({w} × {h} px); the rest of "
                         f"the {sample.width} × {sample.height} image is shown at "
                         f"{drawn.scale:.0%}.")
        st.caption(" ".join(notes))
        st.table(_metrics_table(row).set_index("modality"))
        st.caption(IOU_NOTE)
        suppressed_panel(run, query_id)
        _object_picker(query_id, picker.labels)
        _chip_link(query_id, sample, row, picker, scene, run)
    with right:
        st.markdown(_facts(query_id, sample, table_row, tags))
        st.image(drawn.thumbnail, caption="Full image with all boxes; yellow = the view it "
                 "opened on", width=240)
        st.caption(drawn.legend)
    _review_panel(review)
    if after is not None:
        after()
    with slot:
        viewer_card.show(viewer_card.payload(
            f"{_CARD_CSS}{viewer_card.bar(head, nav, error_bar)}", url), on_nav=navigate)


def _review_panel(review: Callable[[], None] | None) -> None:
    if review is not None and st.session_state["view_review"]:
        review()
