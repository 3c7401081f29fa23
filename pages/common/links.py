r"""The link schema: one table of URL parameters that both applies a link and writes one.

Each :class:`Param` names its URL parameter, the session key it sets, its kind (how the
text reads and is written), the values it accepts, its default and the page it belongs to.
:func:`apply` reads a link's parameters into a session (any mapping: Streamlit's session
state or a plain dict); :func:`emit` writes the parameters of one page that are not at
their default. The two are inverse: ``apply(emit(s))`` restores ``s`` for every parameter
(``tests/app/test_link_schema.py``). A value a widget would not accept is dropped with a note
naming the parameter, what was expected and what was found; the rest of the link applies.

Kinds: ``choice`` (one of ``codes``: URL text -> session value), ``number`` (finite, within
``bounds``; with ``grid`` also one of those values after rounding to two decimals),
``whole`` (a whole number within ``bounds``), ``flag`` (``1`` / ``0``), ``list`` (comma
list; with ``codes`` each item one of them, written in their order, ``none`` for an empty
list when the default is not empty; without ``codes`` a comma or backslash inside an item is
written ``\,`` / ``\\``, so a category such as ``boat, small`` survives a link), ``text``,
``range`` (the session value ``(lo, hi)`` under two parameters, ``name`` and ``pair``; a
missing end is 0 or 1; lo at most hi) and ``box`` (the picked box of the linked query,
1-based in the box picker's list). A ``gate`` ``(key, value)`` marks a parameter that only
holds while ``key`` is ``value`` (``mods`` while modalities are not automatic, ``score``
while the score threshold is on): applying sets the gate, writing happens only when it is
set. No Streamlit here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ovearth_core.analysis import slices
from ovearth_core.options import (
    ALPHA,
    ALPHA_BOUNDS,
    COCO_MAX_DETECTIONS,
    MIN_COUNT,
    MIN_COUNT_BOUNDS,
    MIN_MAX_DETECTIONS,
    RANK_RESAMPLE_BOUNDS,
    RANK_RESAMPLES,
)
from ovearth_core.types import MODALITIES, TASK_KEYS
from ovearth_core.viz.overlay import LAYERS, ZOOM_TARGETS

IOU_CHOICES = tuple(round(0.05 * i, 2) for i in range(1, 21))
BBOX_FORMATS = ("xyxy", "xywh")
MAX_PAGE = 10**9
MAX_BOXES = 10**9
GALLERY_SELECTORS = {"gt": "GT boxes", "pred": "predicted boxes", "queries": "queries"}
GALLERY_SORTS = {"worst": "worst first", "smallest": "smallest first",
                 "largest": "largest first"}
LAYER_CODES = dict(zip(("gmask", "pmask", "ghbb", "phbb", "gobb", "pobb"), LAYERS,
                       strict=True))
NO_ITEMS = "none"
# The Slices page's "slice by" choices ("meta": image metadata, its key beside it).
SLICE_ATTRIBUTES = (*slices.ATTRIBUTES, slices.GSD, "meta", slices.QUERY_FORM)
# Pages: "all" (every page's link: the options), "filters" (the explorer's filters, in
# every link that keeps them), "explorer" (the viewer: query, picked box, zoom, layers and
# view options), "gallery", "annotation", "slices", "leaderboard", "audit".
PAGES = ("all", "filters", "explorer", "gallery", "annotation", "slices", "leaderboard",
         "audit")
AUDIT_GEOMETRIES = ("bbox", "oriented_bbox", "segmentation")  # ovearth_core.audit.MODALITIES
# The bootstrap unit's choices ("auto": the ground truth's own), the Leaderboard's subsets.
UNIT_CHOICES = ("auto", "image", "query")
LB_SUBSETS, LB_SUBSET_BOUNDS = 1000, (200, 5000)


def _same(values: Sequence[Any]) -> dict[str, Any]:
    return {str(v): v for v in values}


@dataclass(frozen=True)
class Param:
    name: str
    key: str
    kind: str
    default: Any
    page: str
    codes: Mapping[str, Any] | None = None
    bounds: tuple[float, float] | None = None
    grid: tuple[float, ...] | None = None
    pair: str | None = None
    gate: tuple[str, bool] | None = None
    doc: str = field(default="", compare=False)


_EXPLORER_LISTS = (("outcome", "flt_outcomes", "outcomes"), ("tag", "flt_failures",
                   "failure tags"), ("cat", "flt_categories", "categories"),
                   ("rtag", "flt_review_tags", "review tags"),
                   ("obj", "flt_objects", "object outcomes"))
_GALLERY_LISTS = (("gout", "gal_outcomes", "outcomes"), ("gtag", "gal_failures",
                  "failure tags"), ("gcat", "gal_categories", "categories"),
                  ("gsize", "gal_sizes", "size bins"), ("grtag", "gal_review_tags",
                  "review tags"), ("gerr", "gal_errors", "object outcomes"),
                  ("gconf", "gal_confused", "confused with a category"))

SCHEMA: tuple[Param, ...] = (
    Param("task", "task", "choice", "vocabulary", "all", codes=_same(TASK_KEYS)),
    Param("mods", "modalities", "list", ["segmentation", "bbox", "oriented_bbox"], "all",
          codes=_same(MODALITIES), gate=("auto_modalities", False),
          doc="modalities evaluated (absent: automatic)"),
    Param("iou", "iou_threshold", "number", 0.5, "all", bounds=(0.05, 1.0), grid=IOU_CHOICES),
    Param("score", "score_threshold", "number", 0.3, "all", bounds=(0.0, 1.0),
          gate=("use_score_threshold", True), doc="score threshold (absent: off)"),
    Param("fmt", "bbox_format", "choice", "xyxy", "all", codes=_same(BBOX_FORMATS)),
    Param("hardneg", "ap_hard_negatives", "flag", False, "all",
          doc="AP: boxes on negative queries count as false positives"),
    Param("nmsap", "ap_nms", "flag", False, "all",
          doc="AP: OVDEval's NMS-AP (needs hardneg and the vocabulary task)"),
    Param("aitod", "ap_aitod", "flag", False, "all", doc="AP: AI-TOD's protocol"),
    Param("bigmask", "large_masks", "flag", False, "all",
          doc="predicted masks beyond the spec's 100,000,000 pixels are taken"),
    Param("concave", "concave_obb", "flag", False, "all",
          doc="concave oriented boxes are taken, scored as DOTA_devkit scores them"),
    Param("cap", "ap_max_detections", "whole", COCO_MAX_DETECTIONS, "all",
          bounds=(MIN_MAX_DETECTIONS, MAX_BOXES), doc="AP: COCO detection cap per query"),
    Param("unit", "boot_unit", "choice", "auto", "all", codes=_same(UNIT_CHOICES),
          doc="what the bootstrap resamples (Compare, Slices, the Leaderboard's ranks)"),
    Param("alpha", "alpha", "number", ALPHA, "all", bounds=ALPHA_BOUNDS,
          doc="level of the tests (Holm, Benjamini-Hochberg, Nemenyi); intervals at 1 - alpha"),
    Param("minn", "min_count", "whole", MIN_COUNT, "all", bounds=MIN_COUNT_BOUNDS,
          doc="fewest images (or queries) a category or slice is tested on"),
    Param("failed", "flt_failed_only", "flag", False, "filters"),
    *(Param(n, k, "list", [], "filters", doc=d) for n, k, d in _EXPLORER_LISTS),
    Param("pol", "flt_polarity", "choice", "all", "filters",
          codes=_same(("positive", "negative"))),
    Param("mod", "flt_modality", "choice", "any", "filters",
          codes=_same(("segmentation", "bbox", "oriented_bbox"))),
    Param("objm", "flt_obj_modality", "choice", "auto", "filters",
          codes=_same(("segmentation", "bbox", "oriented_bbox")),
          doc="modality of the object outcomes (absent: HBB, else OBB, else masks)"),
    Param("iou_lo", "flt_iou", "range", (0.0, 1.0), "filters", bounds=(0.0, 1.0),
          pair="iou_hi"),
    Param("text", "flt_text", "text", "", "filters"),
    Param("q", "selected", "text", None, "explorer", doc="the query (of the link's task)"),
    Param("box", "view_focus", "box", None, "explorer", bounds=(1, MAX_BOXES),
          doc="the picked box, 1-based in the box picker"),
    Param("zoom", "view_zoom", "choice", "GT target", "explorer", codes=_same(ZOOM_TARGETS)),
    Param("layers", "view_layers", "list", list(LAYERS), "explorer", codes=LAYER_CODES),
    Param("opacity", "view_opacity", "number", 0.45, "explorer", bounds=(0.0, 1.0)),
    Param("pixels", "view_pixel_mode", "flag", False, "explorer", doc="TP/FP/FN pixels"),
    Param("labels", "view_labels", "flag", False, "explorer", doc="box labels"),
    Param("live", "view_interactive", "flag", False, "explorer", doc="interactive view"),
    Param("gsel", "gal_selector", "choice", "GT boxes", "gallery", codes=GALLERY_SELECTORS),
    Param("gmod", "gal_modality", "choice", "bbox", "gallery",
          codes=_same(("bbox", "oriented_bbox"))),
    *(Param(n, k, "list", [], "gallery", doc=d) for n, k, d in _GALLERY_LISTS),
    Param("gpol", "gal_polarity", "choice", "all", "gallery",
          codes=_same(("positive", "negative"))),
    Param("giou_lo", "gal_iou", "range", (0.0, 1.0), "gallery", bounds=(0.0, 1.0),
          pair="giou_hi"),
    Param("gsort", "gal_sort", "choice", "worst first", "gallery", codes=GALLERY_SORTS),
    Param("gpage", "gal_page", "whole", 1, "gallery", bounds=(1, MAX_PAGE)),
    Param("ann", "ann_id", "text", "", "annotation"),
    Param("sattr", "slice_attr", "choice", "category", "slices",
          codes=_same(SLICE_ATTRIBUTES), doc="slice by"),
    Param("smetric", "slice_metric", "text", "", "slices"),
    Param("smeta", "slice_meta_key", "text", "", "slices", doc="image_meta key"),
    Param("lbsub", "lb_subsets", "whole", LB_SUBSETS, "leaderboard", bounds=LB_SUBSET_BOUNDS,
          doc="category subsets per size"),
    Param("lbseed", "lb_seed", "whole", 0, "leaderboard", bounds=(0, 2**32 - 1),
          doc="the seed of the stability and of the rank resamples"),
    Param("lbap", "lb_ap", "flag", False, "leaderboard", doc="also rank by AP and mAP"),
    Param("rres", "rank_resamples", "whole", RANK_RESAMPLES, "leaderboard",
          bounds=RANK_RESAMPLE_BOUNDS, doc="resamples of the rank intervals"),
    Param("fblk", "friedman_blocks", "choice", "image", "leaderboard",
          codes=_same(("image", "query")), doc="blocks of Friedman's test"),
    Param("lbdir", "lb_folder", "text", "", "leaderboard",
          doc="the Leaderboard's submissions folder (absent: predictions/ beside the GT)"),
    Param("auddir", "audit_folder", "text", "", "audit",
          doc="the Audit page's submissions folder (absent: predictions/ beside the GT)"),
    Param("audgeo", "audit_modality", "choice", "bbox", "audit",
          codes=_same(AUDIT_GEOMETRIES), doc="the Audit page's geometry audited"),
    Param("audn", "audit_shown", "whole", 10, "audit", bounds=(1, 200),
          doc="suspects shown on the Audit page"),
)
BY_NAME = {p.name: p for p in SCHEMA}
URL_NAMES = frozenset(BY_NAME) | {p.pair for p in SCHEMA if p.pair}


def code(text: str) -> str:
    """``text`` as a Markdown code span (see :func:`pages.common.state.code`)."""
    text = str(text).replace("\n", " ").replace("\r", " ")
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if runs else ""  # (a text that starts or ends with a backtick has a run)
    return f"{fence}{pad}{text}{pad}{fence}"


def dropped(name: str, text: str, expected: str) -> str:
    shown = text if len(text) <= 40 else text[:40] + "…"
    return (f"The link's {code(name)} ({code(shown)}) was ignored: expected {expected}. "
            "The rest of the link applies.")


def list_text(items: Sequence[str]) -> str:
    """Free items as one comma list: ``,`` and ``\\`` inside an item escaped by ``\\``."""
    return ",".join(str(v).replace("\\", "\\\\").replace(",", "\\,") for v in items)


def list_items(text: str) -> list[str]:
    """The items of :func:`list_text` (empty items dropped; a lone trailing ``\\`` kept)."""
    items, item, escaped = [], [], False
    for ch in text:
        if escaped:
            item.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            items.append("".join(item))
            item = []
        else:
            item.append(ch)
    if escaped:
        item.append("\\")
    items.append("".join(item))
    return [v for v in items if v]


def number_text(value: float) -> str:
    """The shortest text that reads back as exactly ``value``."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def _number(p: Param, name: str, text: str, notes: list[str]) -> float | None:
    lo, hi = p.bounds or (-math.inf, math.inf)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not lo <= value <= hi:
        notes.append(dropped(name, text, f"a number from {lo:g} to {hi:g}"))
        return None
    if p.grid is not None:
        if round(value, 2) not in p.grid:
            notes.append(dropped(name, text, f"a multiple of 0.05 from {lo:g} to {hi:g}"))
            return None
        return round(value, 2)
    return value


def _whole(p: Param, text: str, notes: list[str]) -> int | None:
    lo, hi = p.bounds or (0, MAX_PAGE)
    if re.fullmatch(r"[0-9]{1,10}", text) and lo <= int(text) <= hi:
        return int(text)
    notes.append(dropped(p.name, text, f"a whole number from {lo:,.0f} to {hi:,.0f}"))
    return None


def _read(p: Param, text: str, notes: list[str]) -> tuple[bool, Any]:
    """``(True, session value)`` of a link's text, or ``(False, None)`` (noted)."""
    if p.kind == "choice":
        assert p.codes is not None
        if text in p.codes:
            return True, p.codes[text]
        notes.append(dropped(p.name, text, "one of " + ", ".join(p.codes)))
        return False, None
    if p.kind == "number":
        value = _number(p, p.name, text, notes)
        return value is not None, value
    if p.kind in ("whole", "box"):
        value = _whole(p, text, notes)
        return value is not None, value
    if p.kind == "flag":
        if text in ("1", "true", "0", "false"):
            return True, text in ("1", "true")
        notes.append(dropped(p.name, text, "1 or 0"))
        return False, None
    if p.kind == "list":
        if text == NO_ITEMS and p.default:
            return True, []
        if p.codes is None:
            items = list_items(text)
            return bool(items), items
        items = [v for v in text.split(",") if v]
        unknown = [v for v in items if v not in p.codes]
        if unknown:
            notes.append(dropped(p.name, ",".join(unknown), "items from "
                                 + ", ".join(p.codes)))
        known = [p.codes[v] for v in items if v in p.codes]
        return bool(known), known
    return True, text


def apply(params: Mapping[str, str], ss: MutableMapping[str, Any], notes: list[str]) -> None:
    """Set ``ss`` from a link's ``params`` by :data:`SCHEMA` (in its order: the task before
    the query, the query before its box). An empty value is no value."""
    for p in SCHEMA:
        if p.kind == "range":
            _apply_range(p, params, ss, notes)
            continue
        text = params.get(p.name)
        if not text or not str(text).strip() and p.kind not in ("text", "list"):
            continue
        ok, value = _read(p, str(text), notes)
        if not ok:
            continue
        if p.name == "q":
            ss["selected"] = {**ss["selected"], ss["task"]: value}
        elif p.kind == "box":
            query = params.get("q") or None
            if query is None:
                notes.append(dropped("box", str(text), "a box of the link's query `q`, "
                                     "which the link does not name"))
                continue
            ss["view_focus"] = (query, value - 1)
        else:
            ss[p.key] = value
        if p.gate is not None:
            ss[p.gate[0]] = p.gate[1]


def _apply_range(p: Param, params: Mapping[str, str], ss: MutableMapping[str, Any],
                 notes: list[str]) -> None:
    assert p.pair is not None
    ends = []
    for name in (p.name, p.pair):
        text = params.get(name)
        empty = text is None or not str(text).strip()
        ends.append(None if empty else _number(p, name, str(text), notes))
    lo, hi = ends
    if lo is not None and hi is not None and lo > hi:
        notes.append(f"The link's {code(p.name)} ({code(params[p.name][:40])}) and "
                     f"{code(p.pair)} ({code(params[p.pair][:40])}) were ignored: expected "
                     f"{p.name} at most {p.pair}. The rest of the link applies.")
        return
    if lo is not None or hi is not None:
        ss[p.key] = (lo if lo is not None else 0.0, hi if hi is not None else 1.0)


def _write(p: Param, value: Any) -> str:
    if p.kind == "choice":
        assert p.codes is not None
        return next(k for k, v in p.codes.items() if v == value)
    if p.kind == "number":
        return number_text(value)
    if p.kind in ("whole", "box"):
        return str(int(value))
    if p.kind == "flag":
        return "1" if value else "0"
    if p.kind == "list":
        if not value:
            return NO_ITEMS
        if p.codes is None:
            return list_text(value)
        chosen = set(value)  # in the table's order: the same choice is the same link
        return ",".join(k for k, v in p.codes.items() if v in chosen) or NO_ITEMS
    return str(value)


def _value(p: Param, ss: Mapping[str, Any], query: str | None) -> Any:
    if p.name == "q":
        return query
    if p.kind == "box":
        focus = ss.get("view_focus")
        return focus[1] + 1 if focus and query is not None and focus[0] == query else None
    return ss.get(p.key, p.default)


def emit(ss: Mapping[str, Any], pages: Sequence[str],
         query: str | None = None) -> dict[str, str]:
    """The URL parameters of ``pages`` (see :data:`PAGES`) whose session value is not the
    default (``query``: the explorer's query, which the box belongs to)."""
    out: dict[str, str] = {}
    for p in SCHEMA:
        if p.page not in pages:
            continue
        value = _value(p, ss, query)
        if p.gate is not None and ss.get(p.gate[0]) != p.gate[1]:
            continue
        if p.gate is None and (value is None or _equal(value, p.default)):
            continue
        if p.kind == "range":
            lo, hi = value
            out.update({p.name: number_text(lo), p.pair or "": number_text(hi)})
        elif p.kind == "choice" and value not in (p.codes or {}).values():
            continue  # a value no link can carry stays out of it
        else:
            out[p.name] = _write(p, value)
    return out


def _equal(value: Any, default: Any) -> bool:
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        return list(value) == list(default)
    return bool(value == default)

