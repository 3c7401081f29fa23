"""The one place that initialises session state, plus URL and widget-state helpers.

Persistent values live under plain keys (``task``, ``gt_path``, ``flt_outcomes``...).
Widgets use a shadow key (``_w_<name>``) filled from the plain key before each
render and copied back in ``on_change``: Streamlit deletes a widget's own key
when a page without that widget runs, the plain key survives page switches.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from ovearth_core import labels, paths
from ovearth_core.types import TASK_KEYS

APP_ROOT = Path(__file__).resolve().parents[2]
DEMO_DIR = Path("assets") / "demo"
TASKS: tuple[str, ...] = tuple(TASK_KEYS)
TASK_LABELS = {cli: labels.TASK_LABELS[key] for cli, key in TASK_KEYS.items()}
EXPLORER_PAGE = "pages/1_Query_explorer.py"
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
}
VIEWER_DEFAULTS: dict[str, Any] = {
    "view_layers": ["GT mask", "predicted mask", "GT HBB", "predicted HBB", "GT OBB",
                    "predicted OBB"],
    "view_opacity": 0.45, "view_pixel_mode": False, "view_zoom": "GT and predictions",
}


def first_submission(gt_path: str) -> str:
    """The first ``predictions/*.json`` next to the ground truth, relative to APP_ROOT."""
    found = submissions(gt_path)
    return found[0] if found else str(Path(gt_path).parent / "predictions" / "model.json")


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
        roots = ", ".join(_code(str(r)) for r in err.roots)
        st.error(f"**{label}**: {_code(err.path)} is outside the data roots ({roots}), so it "
                 f"was not read. {paths.HOW_TO_ALLOW}")
        return None


def _code(text: str) -> str:
    """``text`` as a Markdown code span: a typed path must not render as emphasis or math."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def defaults() -> dict[str, Any]:
    gt = str(DEMO_DIR / "ground_truth.json")
    return {
        "gt_path": gt, "images_dir": str(DEMO_DIR), "pred_path": first_submission(gt),
        "gt_upload": None, "pred_upload": None,
        "task": "vocabulary", "auto_modalities": True,
        "modalities": ["segmentation", "bbox", "oriented_bbox"],
        "iou_threshold": 0.5, "use_score_threshold": False, "score_threshold": 0.3,
        "bbox_format": "xyxy", "selected": {}, "cmp_b_path": "", "show_analysis": False,
        **FILTER_DEFAULTS, **VIEWER_DEFAULTS,
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
    params = st.query_params
    task = params.get("task")
    if task in TASKS:
        ss["task"] = task
    q = params.get("q")
    if q:
        ss["selected"] = {**ss["selected"], ss["task"]: q}
    if params.get("failed") in ("1", "true"):
        ss["flt_failed_only"] = True


def _copy_back(name: str) -> None:
    st.session_state[name] = st.session_state[f"_w_{name}"]


def bind(name: str, options: Sequence[Any] | None = None) -> dict[str, Any]:
    """Widget kwargs (``key``, ``on_change``) bound to the persistent key ``name``.

    With ``options``, the stored value is first restricted to them (a list value
    keeps its valid items; a scalar falls back to the first option).
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
    return {"key": f"_w_{name}", "on_change": _copy_back, "args": (name,)}


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


def sync_url(**params: str) -> None:
    """Make the URL's query string exactly ``params`` (only when it differs)."""
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)
