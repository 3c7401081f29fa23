"""The one place that holds session state: defaults, the dataset, the URL, widget binding.

Persistent values live under plain keys (``task``, ``gt_path``, ``flt_outcomes``...).
Widgets use a shadow key (``_w_<name>``) filled from the plain key before each
render and copied back in ``on_change``: Streamlit deletes a widget's own key
when a page without that widget runs, the plain key survives page switches.
No page binds a widget to a plain key directly.

**The dataset** is one explicit thing: a benchmark folder (``ground_truth.json``, the
images under it, ``predictions/*.json``), or ground truth, images folder and submission
given separately. Changing the ground truth re-derives the images folder and the
submission (:func:`set_ground_truth`); the submission evaluated is always the one named
in the sidebar and in each page's caption.

**The URL** (:func:`link_params`, applied once per session by :func:`init_state`)
reproduces a view on a fresh server: ``data`` (benchmark folder), or ``gt`` and
``images``; ``sub`` (submission: its name in ``predictions/``, or a path); ``b`` (Compare's
B); ``task``; ``mods`` (comma list; absent: auto), ``iou``, ``score``, ``fmt``; explorer
filters ``failed``, ``outcome``, ``tag`` (failure tags), ``rtag`` (review tags), ``obj``
(object outcomes), ``cat``,
``pol``, ``mod``, ``iou_lo``, ``iou_hi``, ``text``; ``q`` (query) and ``zoom``; the
gallery's ``g*`` parameters (:func:`gallery_params`); ``ann`` (the Annotation page's
annotation). Paths are
relative to the app folder or absolute, and must lie in the data roots. A number a widget
would not accept (out of :data:`LINK_RANGES`, not finite, ``iou_lo`` above ``iou_hi``) is
dropped with a notice naming the parameter (:func:`pop_link_notes`); the rest applies.
A dataset in a link that is missing or outside the roots is an error on every page
(:func:`link_error`), never the demo in its place. A saved view
(:mod:`ovearth_core.review`) stores these parameters.
"""

from __future__ import annotations

import logging
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from ovearth_core import labels, paths
from ovearth_core.analysis.ap import COCO_MAX_DETECTIONS
from ovearth_core.types import MODALITIES, TASK_KEYS
from ovearth_core.viz.overlay import ZOOM_TARGETS

APP_ROOT = Path(__file__).resolve().parents[2]
DEMO_DIR = Path("assets") / "demo"
TASKS: tuple[str, ...] = tuple(TASK_KEYS)
TASK_LABELS = {cli: labels.TASK_LABELS[key] for cli, key in TASK_KEYS.items()}
GT_NAME = "ground_truth.json"
IOU_CHOICES = tuple(round(0.05 * i, 2) for i in range(1, 21))
BBOX_FORMATS = ("xyxy", "xywh")
EXPLORER_PAGE = "pages/1_Query_explorer.py"
GALLERY_PAGE = "pages/2_Gallery.py"
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
    "flt_review_tags": [], "flt_objects": [],
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
    """Prediction files in the ``predictions/`` folder next to the ground-truth file
    (none when that folder is outside the data roots: it is not even listed)."""
    folder = resolve(gt_path).parent / "predictions"
    try:
        paths.confine(folder, data_roots())
    except paths.OutsideDataRootError:
        return []
    if not folder.is_dir():
        return []
    out = []
    for p in sorted(folder.glob("*.json")):
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
    text = str(text).replace("\n", " ").replace("\r", " ")
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or runs else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def default_dataset() -> str:
    """The folder the app opens on: the first ``--data DIR`` of the command line, else
    the bundled demo."""
    given = paths.dataset_args(sys.argv[1:])
    return given[0] if given else str(DEMO_DIR)


def dataset_paths(folder: str) -> dict[str, str]:
    """Ground truth, images folder and first submission of a benchmark folder."""
    gt = str(Path(folder) / GT_NAME)
    return {"gt_path": gt, "images_dir": folder, "pred_path": first_submission(gt)}


def defaults() -> dict[str, Any]:
    return {
        **dataset_paths(default_dataset()),
        "gt_upload": None, "pred_upload": None, "_link_error": None,
        "task": "vocabulary", "auto_modalities": True,
        "modalities": ["segmentation", "bbox", "oriented_bbox"],
        "iou_threshold": 0.5, "use_score_threshold": False, "score_threshold": 0.3,
        "bbox_format": "xyxy", "selected": {}, "cmp_b_path": "", "cmp_modality": "seg",
        "cmp_query": "", "show_analysis": False, "ap_max_detections": COCO_MAX_DETECTIONS,
        "slice_attr": "category", "slice_metric": "", "slice_taxonomy": "", "boot_unit": "auto",
        "slice_meta_key": "",
        **FILTER_DEFAULTS, **VIEWER_DEFAULTS, **GALLERY_DEFAULTS,
        "gal_selected": [], "gal_sel_gen": 0, "gal_tag_on": "objects", "ann_id": "",
        "_link_notes": [],
    }


def init_state() -> None:
    """Fill missing session keys with defaults; on a session's first run apply the URL."""
    ss = st.session_state
    for key, value in defaults().items():
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
    _apply_options(params, notes)
    _apply_filters(params, notes)
    _apply_gallery(params, notes)
    if params.get("ann"):
        ss["ann_id"] = params["ann"]
    ss["_link_notes"] = notes


def pop_link_notes() -> list[str]:
    """The notices of the link this session was opened with, once (the first page shows
    them)."""
    notes = st.session_state.get("_link_notes") or []
    st.session_state["_link_notes"] = []
    return list(notes)


# The link's numbers, with the range their widget accepts (``iou`` is also one of
# IOU_CHOICES after rounding to two decimals; ``gpage`` is a whole number).
MAX_PAGE = 10**9
LINK_RANGES: dict[str, tuple[float, float]] = {
    "iou": (IOU_CHOICES[0], IOU_CHOICES[-1]), "score": (0.0, 1.0),
    "iou_lo": (0.0, 1.0), "iou_hi": (0.0, 1.0), "giou_lo": (0.0, 1.0), "giou_hi": (0.0, 1.0),
    "gpage": (1, MAX_PAGE),
}


def _dropped(name: str, text: str, expected: str) -> str:
    shown = text if len(text) <= 40 else text[:40] + "…"
    return (f"The link's {code(name)} ({code(shown)}) was ignored: expected {expected}. "
            "The rest of the link applies.")


def _link_number(params: dict[str, str], name: str, notes: list[str]) -> float | None:
    """The link's number ``name`` if its widget would accept it; else ``None`` (with a note
    when the link gives one). An empty value is no value."""
    text = params.get(name)
    if text is None or not str(text).strip():
        return None
    lo, hi = LINK_RANGES[name]
    value = _float(str(text))
    if value is None or not math.isfinite(value) or not lo <= value <= hi:
        notes.append(_dropped(name, str(text), f"a number from {lo:g} to {hi:g}"))
        return None
    return value


def _choice(params: dict[str, str], name: str, choices: Sequence[str],
            notes: list[str]) -> str | None:
    """The link's value of ``name`` if it is one of ``choices``; else ``None`` (with a note
    when the link gives another). An empty value is no value."""
    value = params.get(name)
    if value is None or not str(value).strip():
        return None
    if value in choices:
        return value
    notes.append(_dropped(name, str(value), "one of " + ", ".join(choices)))
    return None


def _link_range(params: dict[str, str], names: tuple[str, str],
                notes: list[str]) -> tuple[float, float] | None:
    """An IoU range ``(lo, hi)`` of the link (a missing end is 0 or 1), or ``None``."""
    lo, hi = (_link_number(params, n, notes) for n in names)
    if lo is not None and hi is not None and lo > hi:
        a, b = names
        notes.append(f"The link's {code(a)} ({code(params[a][:40])}) and {code(b)} "
                     f"({code(params[b][:40])}) were ignored: expected {a} at most {b}. "
                     "The rest of the link applies.")
        return None
    if lo is None and hi is None:
        return None
    return (lo if lo is not None else 0.0, hi if hi is not None else 1.0)


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


def _apply_options(params: dict[str, str], notes: list[str]) -> None:
    ss = st.session_state
    if _choice(params, "task", TASKS, notes):
        ss["task"] = params["task"]
    mods = [m for m in params.get("mods", "").split(",") if m in MODALITIES]
    if mods:
        ss.update(auto_modalities=False, modalities=mods)
    iou = _link_number(params, "iou", notes)
    if iou is not None and round(iou, 2) in IOU_CHOICES:
        ss["iou_threshold"] = round(iou, 2)
    elif iou is not None:
        notes.append(_dropped("iou", params["iou"], "a multiple of 0.05 from 0.05 to 1"))
    score = _link_number(params, "score", notes)
    if score is not None:
        ss.update(use_score_threshold=True, score_threshold=score)
    if _choice(params, "fmt", BBOX_FORMATS, notes):
        ss["bbox_format"] = params["fmt"]


def _apply_filters(params: dict[str, str], notes: list[str]) -> None:
    ss = st.session_state
    if _choice(params, "failed", ("1", "true", "0", "false"), notes) in ("1", "true"):
        ss["flt_failed_only"] = True
    for key, name in (("outcome", "flt_outcomes"), ("tag", "flt_failures"),
                      ("cat", "flt_categories"), ("rtag", "flt_review_tags"),
                      ("obj", "flt_objects")):
        if params.get(key):
            ss[name] = [v for v in params[key].split(",") if v]
    if _choice(params, "pol", ("positive", "negative"), notes):
        ss["flt_polarity"] = params["pol"]
    if _choice(params, "mod", ("segmentation", "bbox", "oriented_bbox"), notes):
        ss["flt_modality"] = params["mod"]
    iou_range = _link_range(params, ("iou_lo", "iou_hi"), notes)
    if iou_range is not None:
        ss["flt_iou"] = iou_range
    if params.get("text"):
        ss["flt_text"] = params["text"]
    if params.get("q"):
        ss["selected"] = {**ss["selected"], ss["task"]: params["q"]}
    if _choice(params, "zoom", tuple(ZOOM_TARGETS), notes):
        ss["view_zoom"] = params["zoom"]


# The gallery's link parameters (all prefixed ``g``): gsel (gt, pred, queries), gmod, gout,
# gtag (failure tags), gcat, gpol, gsize, giou_lo, giou_hi, gsort (worst, smallest,
# largest), gpage, grtag (review tags), gerr (object outcomes), gconf (confused with a
# category). Comma lists like the explorer's.
GALLERY_SELECTORS = {"gt": "GT boxes", "pred": "predicted boxes", "queries": "queries"}
GALLERY_SORTS = {"worst": "worst first", "smallest": "smallest first",
                 "largest": "largest first"}
_GALLERY_LISTS = (("gout", "gal_outcomes"), ("gtag", "gal_failures"), ("gcat", "gal_categories"),
                  ("gsize", "gal_sizes"), ("grtag", "gal_review_tags"),
                  ("gerr", "gal_errors"), ("gconf", "gal_confused"))


def _apply_gallery(params: dict[str, str], notes: list[str]) -> None:
    """Set the gallery's selector, filters, sort and page from a link (values a widget
    does not offer are dropped by :func:`bind` when the page draws it)."""
    ss = st.session_state
    if _choice(params, "gsel", tuple(GALLERY_SELECTORS), notes):
        ss["gal_selector"] = GALLERY_SELECTORS[params["gsel"]]
    if _choice(params, "gmod", ("bbox", "oriented_bbox"), notes):
        ss["gal_modality"] = params["gmod"]
    for key, name in _GALLERY_LISTS:
        if params.get(key):
            ss[name] = [v for v in params[key].split(",") if v]
    if _choice(params, "gpol", ("positive", "negative"), notes):
        ss["gal_polarity"] = params["gpol"]
    iou_range = _link_range(params, ("giou_lo", "giou_hi"), notes)
    if iou_range is not None:
        ss["gal_iou"] = iou_range
    if _choice(params, "gsort", tuple(GALLERY_SORTS), notes):
        ss["gal_sort"] = GALLERY_SORTS[params["gsort"]]
    page = params.get("gpage", "")
    if re.fullmatch(r"[0-9]{1,10}", page) and 1 <= int(page) <= MAX_PAGE:
        ss["gal_page"] = int(page)
    elif page.strip():
        notes.append(_dropped("gpage", page, f"a whole number from 1 to {MAX_PAGE:,}"))


def gallery_params() -> dict[str, str]:
    """The gallery's own URL parameters (only those not at their default)."""
    ss = st.session_state
    d = GALLERY_DEFAULTS
    out: dict[str, str] = {}
    if ss["gal_selector"] != d["gal_selector"]:
        out["gsel"] = next(k for k, v in GALLERY_SELECTORS.items() if v == ss["gal_selector"])
    if ss["gal_modality"] != d["gal_modality"] and ss["gal_modality"] in ("bbox",
                                                                          "oriented_bbox"):
        out["gmod"] = ss["gal_modality"]
    for key, name in _GALLERY_LISTS:
        if ss[name]:
            out[key] = ",".join(ss[name])
    if ss["gal_polarity"] != "all":
        out["gpol"] = ss["gal_polarity"]
    lo, hi = ss["gal_iou"]
    if (lo, hi) != (0.0, 1.0):
        out.update(giou_lo=_number(lo), giou_hi=_number(hi))
    if ss["gal_sort"] != d["gal_sort"]:
        out["gsort"] = next(k for k, v in GALLERY_SORTS.items() if v == ss["gal_sort"])
    if int(ss["gal_page"]) != 1:
        out["gpage"] = str(int(ss["gal_page"]))
    return out


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


def _number(value: float) -> str:
    """A link's number: short (``0.5``, ``1``) and exact (``0.8515625``, which ``:g``
    would write as 0.851562: a link of a linked view must be the same view)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def _float(text: str | None) -> float | None:
    try:
        return None if text is None else float(text)
    except ValueError:
        return None


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
    if not ss["auto_modalities"]:
        out["mods"] = ",".join(m for m in MODALITIES if m in ss["modalities"])
    if ss["iou_threshold"] != 0.5:
        out["iou"] = _number(ss["iou_threshold"])
    if ss["use_score_threshold"]:
        out["score"] = _number(ss["score_threshold"])
    if ss["bbox_format"] != "xyxy":
        out["fmt"] = ss["bbox_format"]
    if filters:
        out.update(_filter_params())
    return {**out, **page}


def _filter_params() -> dict[str, str]:
    """The explorer filters' URL parameters (only those not at their default)."""
    ss = st.session_state
    out: dict[str, str] = {}
    if ss["flt_failed_only"]:
        out["failed"] = "1"
    for key, name in (("outcome", "flt_outcomes"), ("tag", "flt_failures"),
                      ("cat", "flt_categories"), ("rtag", "flt_review_tags"),
                      ("obj", "flt_objects")):
        if ss[name]:
            out[key] = ",".join(ss[name])
    if ss["flt_polarity"] != "all":
        out["pol"] = ss["flt_polarity"]
    if ss["flt_modality"] != "any":
        out["mod"] = ss["flt_modality"]
    lo, hi = ss["flt_iou"]
    if (lo, hi) != (0.0, 1.0):
        out.update(iou_lo=_number(lo), iou_hi=_number(hi))
    if ss["flt_text"]:
        out["text"] = ss["flt_text"]
    return out


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


def bind(name: str, options: Sequence[Any] | None = None,
         then: Callable[[Any], None] | None = None) -> dict[str, Any]:
    """Widget kwargs (``key``, ``on_change``) bound to the persistent key ``name``.

    With ``options``, the stored value is first restricted to them (a list value
    keeps its valid items; a scalar falls back to the first option). With ``then``, a
    user's change calls ``then(new value)`` instead of storing it (it stores what it must).
    """
    ss = st.session_state
    value = ss[name]
    if options is not None:
        if isinstance(value, list):
            value = [v for v in value if v in options]
        elif value not in options:
            value = options[0] if options else None
        ss[name] = value
    ss[f"_w_{name}"] = value
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


def sync_url(**page: str) -> None:
    """Make the URL reproduce the current view: :func:`link_params` plus ``page``'s own
    parameters (only written when it differs)."""
    params = link_params(**page)
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)
