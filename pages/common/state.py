"""The one place that holds session state: defaults, the dataset, the URL, widget binding.

Persistent values live under plain keys (``task``, ``gt_path``, ``flt_outcomes``...).
The sidebar's widgets, which the frame (app.py) draws on every run, are keyed by the plain
key itself (:func:`keep`): Streamlit keeps the value of a widget drawn on every run. A
page's widgets, and the sidebar's conditional score-threshold field, use a shadow key
(``_w_<name>``, :func:`bind`) filled from the plain key before each render and copied back
in ``on_change``: Streamlit deletes a widget's own key when a run does not draw it (another
page), while the plain key survives.

**The dataset** is one explicit thing: a benchmark folder (``ground_truth.json``, the
images under it, ``predictions/*.json``), or ground truth, images folder and submission
given separately. Changing the ground truth re-derives the images folder and the
submission (:func:`set_ground_truth`); the submission evaluated is always the one named
in the sidebar and in each page's caption.

**The URL** (:func:`link_params`, applied once per session by :func:`init_state`)
reproduces a view on a fresh server: ``data`` (benchmark folder), or ``gt`` and
``images``; ``sub`` (submission: its name in ``predictions/``, or a path); ``b`` (Compare's
B); and every parameter of the link schema (:data:`links.SCHEMA`: options, the explorer's
filters, its query, picked box, zoom, layers and view options, the gallery's, the
Annotation page's and the Slices page's), which both applies a link and writes one. Paths
are relative to the app folder or absolute, and must lie in the data roots. A value a
widget would not accept is dropped with a notice naming the parameter
(:func:`pop_link_notes`); the rest applies.
A dataset in a link that is missing or outside the roots is an error on every page
(:func:`link_error`), never the demo in its place. A saved view
(:mod:`ovearth_core.review`) stores these parameters.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from ovearth_core import labels, paths
from ovearth_core.analysis.ap import COCO_MAX_DETECTIONS
from ovearth_core.options import ALPHA, MIN_COUNT, RANK_RESAMPLES
from ovearth_core.types import TASK_KEYS

from . import links

APP_ROOT = Path(__file__).resolve().parents[2]
DEMO_DIR = Path("assets") / "demo"
TASKS: tuple[str, ...] = tuple(TASK_KEYS)
TASK_LABELS = {cli: labels.TASK_LABELS[key] for cli, key in TASK_KEYS.items()}
GT_NAME = "ground_truth.json"
IOU_CHOICES = links.IOU_CHOICES
BBOX_FORMATS = links.BBOX_FORMATS
MAX_PAGE = links.MAX_PAGE
GALLERY_SELECTORS = links.GALLERY_SELECTORS
GALLERY_SORTS = links.GALLERY_SORTS
ZOOM_TARGETS = links.ZOOM_TARGETS
EXPLORER_PAGE = "pages/Query_explorer.py"  # see pages/common/nav.py
GALLERY_PAGE = "pages/Gallery.py"
# The app's log (e.g. data.evaluate's "evaluated ..." line, one per computed evaluation)
# goes to the server's stderr at INFO.
LOG = logging.getLogger("ovearth_inspector")
if not LOG.handlers:  # the module is imported once per server; a re-import must not double up
    _handler = logging.StreamHandler()
    _handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    LOG.addHandler(_handler)
    LOG.setLevel(logging.INFO)

FILTER_DEFAULTS: dict[str, Any] = {
    "flt_failed_only": False, "flt_outcomes": [], "flt_failures": [], "flt_categories": [],
    "flt_polarity": "all", "flt_modality": "any", "flt_iou": (0.0, 1.0), "flt_text": "",
    "flt_review_tags": [], "flt_objects": [], "flt_obj_modality": "auto",
}
GALLERY_DEFAULTS: dict[str, Any] = {
    "gal_selector": "GT boxes", "gal_modality": "bbox", "gal_outcomes": [], "gal_failures": [],
    "gal_categories": [], "gal_polarity": "all", "gal_sizes": [], "gal_iou": (0.0, 1.0),
    "gal_sort": "worst first", "gal_page": 1, "gal_review_tags": [], "gal_errors": [],
    "gal_confused": [],
}
VIEWER_DEFAULTS: dict[str, Any] = {
    "view_layers": ["GT mask", "predicted mask", "GT HBB", "predicted HBB", "GT OBB",
                    "predicted OBB"],
    "view_opacity": 0.45, "view_pixel_mode": False, "view_zoom": "GT target",
    "view_labels": False, "view_focus": None, "view_interactive": False,
    "view_review": False, "view_link": False,
}


def first_submission(gt_path: str) -> str:
    """The first ``predictions/*.json`` next to the ground truth, relative to APP_ROOT
    (``""`` when there is none: the sidebar then asks for one, nothing is evaluated)."""
    found = submissions(gt_path)
    return found[0] if found else ""


def submissions(gt_path: str) -> list[str]:
    """Prediction files in the ``predictions/`` folder next to the ground-truth file that
    pass the gate (:func:`ovearth_core.paths.folder_inputs`: none when that folder is
    outside the data roots, as it is not even listed; a link out of them is not offered)."""
    folder = resolve(gt_path).parent / "predictions"
    try:
        accepted, _ = paths.folder_inputs(folder, "*.json", data_roots())
    except paths.OutsideDataRootError:
        return []
    out = []
    for p in accepted:
        try:
            out.append(str(p.relative_to(APP_ROOT)))
        except ValueError:
            out.append(str(p))
    return out


def resolve(path: str) -> Path:
    """A user-typed path: ``~`` expanded, relative paths taken from the app's folder."""
    p = Path(path.strip()).expanduser()
    return p if p.is_absolute() else APP_ROOT / p


def data_roots() -> tuple[Path, ...]:
    """The folders typed paths may point into (see :mod:`ovearth_core.paths`); read on
    every call so that the command line and environment of this server decide."""
    return paths.data_roots(sys.argv[1:], os.environ, Path.cwd(), [APP_ROOT / DEMO_DIR])


def confined(path: str, label: str) -> Path | None:
    """The resolved path typed in the field ``label``, or ``None`` (with an error shown on
    the page) when it lies outside the data roots."""
    try:
        return paths.confine(resolve(path), data_roots())
    except paths.OutsideDataRootError as err:
        roots = ", ".join(code(str(r)) for r in err.roots)
        st.error(f"**{label}**: {code(err.path)} is outside the data roots ({roots}), so it "
                 f"was not read. {paths.HOW_TO_ALLOW}")
        return None


def code(text: str) -> str:
    """``text`` as a Markdown code span: a typed path or an id from a file must not render as
    emphasis, math or a link. The fence is longer than any run of backticks inside, so the
    text cannot close it; newlines become spaces (a code span is one line)."""
    return links.code(text)


def default_dataset() -> str:
    """The folder the app opens on: the first ``--data DIR`` of the command line, else
    the bundled demo."""
    given = paths.dataset_args(sys.argv[1:])
    return given[0] if given else str(DEMO_DIR)


def dataset_paths(folder: str) -> dict[str, str]:
    """Ground truth, images folder and first submission of a benchmark folder."""
    gt = str(Path(folder) / GT_NAME)
    return {"gt_path": gt, "images_dir": folder, "pred_path": first_submission(gt)}


DATASET_KEYS = ("gt_path", "images_dir", "pred_path")  # dataset_paths' keys


def defaults(dataset: bool = True) -> dict[str, Any]:
    """Every session key's default; without ``dataset``, the default dataset's paths
    (:data:`DATASET_KEYS`) are left out: they read the command line and list its folder."""
    return {
        **(dataset_paths(default_dataset()) if dataset else {}),
        "gt_upload": None, "pred_upload": None, "_link_error": None,
        "task": "vocabulary", "auto_modalities": True,
        "modalities": ["segmentation", "bbox", "oriented_bbox"],
        "iou_threshold": 0.5, "use_score_threshold": False, "score_threshold": 0.3,
        "bbox_format": "xyxy", "selected": {}, "cmp_b_path": "", "cmp_modality": "seg",
        "cmp_query": "", "show_analysis": False, "ap_max_detections": COCO_MAX_DETECTIONS,
        "ap_hard_negatives": False, "ap_nms": False, "ap_aitod": False, "large_masks": False,
        "concave_obb": False,
        "slice_attr": "category", "slice_metric": "", "slice_taxonomy": "", "boot_unit": "auto",
        "slice_meta_key": "", "lb_subsets": links.LB_SUBSETS, "lb_seed": 0, "lb_ap": False,
        "audit_modality": "bbox", "audit_shown": 10, "lb_folder": "", "audit_folder": "",
        "rank_resamples": RANK_RESAMPLES, "alpha": ALPHA, "min_count": MIN_COUNT,
        "friedman_blocks": "image",
        **FILTER_DEFAULTS, **VIEWER_DEFAULTS, **GALLERY_DEFAULTS,
        "gal_selected": [], "gal_sel_gen": 0, "gal_tag_on": "objects", "ann_id": "",
        "_link_notes": [],
    }


def init_state() -> None:
    """Fill missing session keys with defaults; on a session's first run apply the URL."""
    ss = st.session_state
    # Every run of every page comes here: the dataset's defaults (the folder listed) only
    # when one of them is missing, as on a session's first run (issue 49).
    for key, value in defaults(dataset=any(k not in ss for k in DATASET_KEYS)).items():
        if key not in ss:
            ss[key] = value.copy() if isinstance(value, (list, dict)) else value
    if ss.get("_url_applied"):
        return
    ss["_url_applied"] = True
    apply_link(dict(st.query_params))


def _display_path(path: Path) -> str:
    try:
        return str(path.relative_to(APP_ROOT))
    except ValueError:
        return str(path)


def _linked_file(text: str, folder: str | None) -> str:
    """A link's ``sub`` / ``b``: a name in ``<folder>/predictions`` or a path."""
    if folder and "/" not in text and not text.endswith(".json"):
        return str(Path(folder) / "predictions" / f"{text}.json")
    return text


def apply_link(params: dict[str, str]) -> None:
    """Set the session from a link's parameters (see the module docstring); the numbers
    dropped are noted in ``_link_notes``."""
    ss = st.session_state
    notes: list[str] = []
    folder, gt = params.get("data"), params.get("gt")
    if folder or gt:
        gt = gt or str(Path(folder) / GT_NAME)
        problem = _link_problem(gt, "ground truth")
        if problem:
            ss["_link_error"] = problem
            return
        images = params.get("images") or folder or str(Path(gt).parent)
        ss.update(gt_path=gt, images_dir=images, pred_path=first_submission(gt),
                  gt_upload=None, pred_upload=None, selected={}, cmp_b_path="")
    sub = params.get("sub")
    base = folder or str(Path(ss["gt_path"]).parent)
    if sub:
        ss["pred_path"] = _linked_file(sub, base)
        problem = _link_problem(ss["pred_path"], "submission")
        if problem:
            ss["_link_error"] = problem
            return
    if params.get("b"):
        ss["cmp_b_path"] = _linked_file(params["b"], base)
    links.apply(params, ss, notes)
    ss["_link_notes"] = notes


def pop_link_notes() -> list[str]:
    """The notices of the link this session was opened with, once (the first page shows
    them)."""
    notes = st.session_state.get("_link_notes") or []
    st.session_state["_link_notes"] = []
    return list(notes)


def _link_problem(path: str, what: str) -> str | None:
    """Why a linked file cannot be opened (``None`` when it can)."""
    try:
        resolved = paths.confine(resolve(path), data_roots())
    except paths.OutsideDataRootError:
        return (f"The link names the {what} {path}, which is outside this server's data "
                f"roots, so it was not opened. {paths.HOW_TO_ALLOW}")
    if not resolved.is_file():
        return (f"The link names the {what} {path}, which does not exist on this server. "
                "Open the app without the link, or start it with that data.")
    return None


def annotation_url(ann_id: str) -> str:
    """The Annotation page of ``ann_id`` with this session's dataset, submission and
    options (not the explorer's filters)."""
    return page_url("Annotation", link_params(filters=False, ann=ann_id))


def page_url(page: str, params: dict[str, str]) -> str:
    """The URL of the app page ``page`` (its URL name, e.g. ``Gallery``) with ``params``;
    relative when the browser's address is unknown."""
    from urllib.parse import urlencode

    base = (st.context.url or "").split("?")[0]
    root = base.rsplit("/", 1)[0] + "/" if base else ""
    return f"{root}{page}?{urlencode(params)}"


def link_error() -> str | None:
    """The problem with the link this session was opened with, if any."""
    return st.session_state.get("_link_error")


def link_params(*, filters: bool = True, **page: str) -> dict[str, str]:
    """The URL parameters that reproduce the current view (plus the page's own); without
    ``filters``, the explorer's filters are left out (a link that must show its query)."""
    ss = st.session_state
    out: dict[str, str] = {}
    gt, images = Path(ss["gt_path"]), ss["images_dir"]
    folder = _display_path(resolve(str(gt.parent))) if gt.name == GT_NAME else None
    if folder and resolve(images) == resolve(folder):
        out["data"] = folder
    else:
        out.update(gt=ss["gt_path"], images=images)
    pred = Path(ss["pred_path"])
    in_folder = resolve(str(pred.parent)) == resolve(str(gt.parent / "predictions"))
    if ss["pred_path"]:
        out["sub"] = pred.stem if in_folder else ss["pred_path"]
    out["task"] = ss["task"]
    out.update(links.emit(ss, ["all", "filters"] if filters else ["all"]))
    return {**out, **page}


def view_params(query_id: str) -> dict[str, str]:
    """The explorer viewer's own URL parameters for ``query_id``: the query, the picked box
    (when it is one of this query's), the zoom, the layers and the view options (those not
    at their default)."""
    return links.emit(st.session_state, ["explorer"], query_id)


def gallery_params() -> dict[str, str]:
    """The gallery's own URL parameters (only those not at their default)."""
    return links.emit(st.session_state, ["gallery"])


def leaderboard_params() -> dict[str, str]:
    """The Leaderboard page's own URL parameters (only those not at their default)."""
    return links.emit(st.session_state, ["leaderboard"])


def audit_params() -> dict[str, str]:
    """The Audit page's own URL parameters (only those not at their default)."""
    return links.emit(st.session_state, ["audit"])


def slices_params() -> dict[str, str]:
    """The Slices page's own URL parameters (only those not at their default)."""
    return links.emit(st.session_state, ["slices"])


def view_url(*, filters: bool = True, **page: str) -> str:
    """The absolute URL of the explorer view described by :func:`link_params` (relative
    when the browser's address is unknown, as under AppTest)."""
    return url_of(link_params(filters=filters, **page))


def url_of(params: dict[str, str]) -> str:
    """The explorer URL of link parameters (e.g. a saved view's); relative when the
    browser's address is unknown."""
    from urllib.parse import urlencode

    base = (st.context.url or "").split("?")[0]
    root = base.rsplit("/", 1)[0] + "/" if base else ""
    return f"{root}Query_explorer?{urlencode(params)}"


def set_ground_truth(gt_path: str) -> None:
    """A new ground truth: its folder's images and first submission come with it (and
    nothing chosen for the previous dataset survives: B, selected queries, uploads)."""
    ss = st.session_state
    folder = str(Path(gt_path).parent)
    ss.update(gt_path=gt_path, images_dir=folder, pred_path=first_submission(gt_path),
              gt_upload=None, pred_upload=None, selected={}, cmp_b_path="", _link_error=None)


def set_submission(pred_path: str) -> None:
    st.session_state.update(pred_path=pred_path, pred_upload=None, _link_error=None)


def _copy_back(name: str, then: Callable[[Any], None] | None = None) -> None:
    value = st.session_state[f"_w_{name}"]
    if then is None:
        st.session_state[name] = value
    else:
        then(value)


def _restricted(name: str, options: Sequence[Any] | None) -> Any:
    """The stored value of ``name``, restricted to ``options`` (a list keeps its valid
    items; a scalar not among them becomes the first option), stored back."""
    ss = st.session_state
    value = ss[name]
    if options is not None:
        if isinstance(value, list):
            value = [v for v in value if v in options]
        elif value not in options:
            value = options[0] if options else None
        ss[name] = value
    return value


def _changed(name: str, then: Callable[[Any], None]) -> None:
    then(st.session_state[name])


def keep(name: str, options: Sequence[Any] | None = None,
         then: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """Widget kwargs of a widget the frame draws on every run (the sidebar's): its key is
    the persistent key ``name`` itself (no shadow key), kept for the whole session
    (``persist_state="session"``): a page switched by a button (a Confusion cell, a
    failure tag) interrupts the run, and without it Streamlit dropped the value, so the
    next page evaluated the default dataset instead of the linked or typed one
    (tests/app/test_app_objects.py). ``options`` and ``then`` as in :func:`bind` (``then``
    is called with the new value after Streamlit stored it)."""
    _restricted(name, options)
    kept = {"key": name, "persist_state": "session"}
    if then is None:
        return kept
    return {**kept, "on_change": _changed, "args": (name, then)}


def bind(name: str, options: Sequence[Any] | None = None,
         then: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """Widget kwargs (``key``, ``on_change``) bound to the persistent key ``name``.

    With ``options``, the stored value is first restricted to them (a list value
    keeps its valid items; a scalar falls back to the first option). With ``then``, a
    user's change calls ``then(new value)`` instead of storing it (it stores what it must).
    """
    st.session_state[f"_w_{name}"] = _restricted(name, options)
    return {"key": f"_w_{name}", "on_change": _copy_back, "args": (name, then)}


def set_filters(**values: Any) -> None:
    """Reset every explorer filter, then apply ``values`` (names without ``flt_``)."""
    for key, value in FILTER_DEFAULTS.items():
        st.session_state[key] = value.copy() if isinstance(value, list) else value
    for key, value in values.items():
        st.session_state[f"flt_{key}"] = value


def selected_query(task: str) -> str | None:
    return st.session_state["selected"].get(task)


def select_query(task: str, query_id: str) -> None:
    st.session_state["selected"] = {**st.session_state["selected"], task: query_id}


def query_string(params: dict[str, str]) -> str:
    """``params`` (:func:`link_params` plus a page's own) as the address bar's query string
    (``?a=b&…``, ``""`` for none): what :func:`sync_url` would write, for an element that
    writes it in the browser (the explorer's viewer card)."""
    from urllib.parse import urlencode

    return f"?{urlencode(params)}" if params else ""


def sync_url(**page: str) -> None:
    """Make the URL reproduce the current view: :func:`link_params` plus ``page``'s own
    parameters (only written when it differs)."""
    params = link_params(**page)
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)
