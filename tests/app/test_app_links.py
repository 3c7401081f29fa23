"""Link values validated like widget input (issue 26 item 9): an out-of-range or non-finite
number in a link is dropped with a notice naming the parameter, and the rest of the link
still applies. AppTest on the demo, and a hypothesis fuzz of the link parser."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from app_fixtures import assert_ok
from app_fixtures import open_page as _open
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from pages.common import state

APP = str(Path(__file__).resolve().parents[2] / "app.py")
EXPLORER = "pages/Query_explorer.py"
GALLERY = "pages/Gallery.py"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _warnings(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning)


@pytest.mark.parametrize(("params", "named"), [
    ({"iou_lo": "5", "iou_hi": "-3"}, ["iou_lo", "iou_hi"]),
    ({"iou_lo": "inf"}, ["iou_lo"]),
    ({"iou_lo": "nan", "iou_hi": "0.5"}, ["iou_lo"]),
    ({"iou_lo": "0.8", "iou_hi": "0.2"}, ["iou_lo", "iou_hi"]),
    ({"iou": "7"}, ["iou"]),
    ({"score": "-inf"}, ["score"]),
])
def test_bad_explorer_link_numbers_are_dropped_with_a_notice(params: dict[str, str],
                                                             named: list[str]) -> None:
    at = _open(EXPLORER, {"task": "referring", "mod": "bbox", **params})
    assert_ok(at)
    notes = _warnings(at)
    for name in named:
        assert f"`{name}`" in notes
    # The rest of the link applies.
    assert at.session_state["task"] == "referring"
    assert at.session_state["flt_modality"] == "bbox"
    lo, hi = at.session_state["flt_iou"]
    assert 0.0 <= lo <= hi <= 1.0


def test_a_good_half_of_a_range_is_kept() -> None:
    at = _open(EXPLORER, {"iou_lo": "0.25", "iou_hi": "inf"})
    assert_ok(at)
    assert "`iou_hi`" in _warnings(at) and "`iou_lo`" not in _warnings(at)
    assert tuple(at.session_state["flt_iou"]) == (0.25, 1.0)


def test_bad_gallery_link_numbers_are_dropped_with_a_notice() -> None:
    at = _open(GALLERY, {"giou_lo": "2", "giou_hi": "-1", "gpol": "negative", "gpage": "0"})
    assert_ok(at)
    notes = _warnings(at)
    assert "`giou_lo`" in notes and "`giou_hi`" in notes and "`gpage`" in notes
    assert tuple(at.session_state["gal_iou"]) == (0.0, 1.0)
    assert at.session_state["gal_polarity"] == "negative"


# --- the parser on its own: any query string ---------------------------------------------

NUMBER_KEYS = ["iou", "score", "iou_lo", "iou_hi", "giou_lo", "giou_hi", "gpage"]
OTHER_KEYS = ["task", "mods", "fmt", "failed", "outcome", "tag", "cat", "rtag", "pol", "mod",
              "text", "q", "zoom", "gsel", "gmod", "gout", "gtag", "gcat", "gpol", "gsize",
              "gsort", "grtag", "ann", "b"]
NUMBERISH = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                      st.sampled_from(["inf", "-inf", "nan", "1e999", "", " ", "0x1", "1_0",
                                       "٣", "0.5", "-0", "1e-400"]),
                      st.integers(-10**30, 10**30).map(str), st.text(max_size=8))


def _fresh() -> dict[str, Any]:
    return {**state.defaults(), "_url_applied": True}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(NUMBER_KEYS + OTHER_KEYS) | st.text(max_size=6),
                       NUMBERISH | st.text(max_size=20), max_size=12))
def test_any_query_string_applies_without_raising(params: dict[str, str]) -> None:
    ss = _fresh()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state.st, "session_state", ss)
        state.apply_link(params)
    for key in ("flt_iou", "gal_iou"):
        lo, hi = ss[key]
        assert math.isfinite(lo) and math.isfinite(hi) and 0.0 <= lo <= hi <= 1.0
    assert ss["iou_threshold"] in state.IOU_CHOICES
    assert math.isfinite(ss["score_threshold"]) and 0.0 <= ss["score_threshold"] <= 1.0
    assert isinstance(ss["gal_page"], int) and 1 <= ss["gal_page"] <= state.MAX_PAGE
    assert all(isinstance(n, str) for n in ss.get("_link_notes", []))


ROUNDED = st.integers(0, 20).map(lambda i: round(i * 0.05, 2))


@settings(max_examples=200, deadline=None)
@given(lo=ROUNDED, hi=ROUNDED, glo=ROUNDED, ghi=ROUNDED, iou=st.sampled_from(state.IOU_CHOICES),
       score=st.floats(0.0, 1.0), page=st.integers(1, 10**6))
def test_valid_link_values_survive(lo: float, hi: float, glo: float, ghi: float, iou: float,
                                   score: float, page: int) -> None:
    lo, hi = min(lo, hi), max(lo, hi)
    glo, ghi = min(glo, ghi), max(glo, ghi)
    params = {"iou_lo": f"{lo:g}", "iou_hi": f"{hi:g}", "giou_lo": f"{glo:g}",
              "giou_hi": f"{ghi:g}", "iou": f"{iou:g}", "score": repr(score),
              "gpage": str(page), "task": "reasoning"}
    ss = _fresh()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state.st, "session_state", ss)
        state.apply_link(params)
    assert tuple(ss["flt_iou"]) == (lo, hi)
    assert tuple(ss["gal_iou"]) == (glo, ghi)
    assert ss["iou_threshold"] == iou
    assert ss["score_threshold"] == score and ss["use_score_threshold"] is True
    assert ss["gal_page"] == page
    assert ss["task"] == "reasoning"
    assert not ss.get("_link_notes")


@pytest.mark.parametrize(("name", "value"), [
    ("task", "segmentation"), ("fmt", "cxcywh"), ("pol", "both"), ("mod", "mask"),
    ("zoom", "everything"), ("gsel", "tiles"), ("gmod", "segmentation"), ("gpol", "all"),
    ("gsort", "best"), ("failed", "yes please")])
def test_a_choice_no_widget_offers_is_dropped_with_a_notice(name: str, value: str) -> None:
    ss = _fresh()
    before = dict(ss)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state.st, "session_state", ss)
        state.apply_link({name: value, "iou": "0.3"})
    (note,) = ss["_link_notes"]
    assert f"`{name}`" in note and f"`{value}`" in note
    assert ss["iou_threshold"] == 0.3  # the rest of the link applies
    changed = {k for k in ss if ss[k] != before.get(k)} - {"_link_notes", "iou_threshold"}
    assert changed == set()
