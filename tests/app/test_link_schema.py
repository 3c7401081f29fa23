"""The link schema (issue 27 item 1): one table drives applying a link and writing one, so
state -> link -> state is the identity for every parameter, 0, empty and boundary values
included; a link with a picked box reopens on that box (AppTest)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from app_fixtures import app_on, assert_ok, card_html, card_params, goto, write_large_image_dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from pages.common import links, state

EXPLORER = "pages/Query_explorer.py"
APP = str(Path(__file__).resolve().parents[2] / "app.py")
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
# Commas and backslashes included: a category such as "boat, small" must survive a link.
ITEM = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)


def _value(p: links.Param) -> st.SearchStrategy[Any]:
    """Any session value the parameter's widget could hold, written out from the table's
    kinds independently of the parser."""
    if p.kind == "choice":
        return st.sampled_from(sorted(p.codes.values()))
    if p.kind == "number":
        if p.grid is not None:
            return st.sampled_from(p.grid)
        return st.floats(*p.bounds) | st.sampled_from(p.bounds)
    if p.kind in ("whole", "box"):
        lo, hi = p.bounds
        return st.integers(int(lo), int(hi)) | st.sampled_from([int(lo), int(hi)])
    if p.kind == "flag":
        return st.booleans()
    if p.kind == "list":
        if p.codes is None:
            return st.lists(ITEM, max_size=4)
        order = list(p.codes.values())  # a choice of pills or modalities, in their order
        return st.lists(st.sampled_from(order), unique=True, max_size=6).map(
            lambda v: sorted(v, key=order.index))
    if p.kind == "range":
        ends = st.floats(0.0, 1.0) | st.sampled_from([0.0, 1.0])
        return st.tuples(ends, ends).map(lambda t: (min(t), max(t)))
    assert p.kind == "text"
    return TEXT


SESSION = st.fixed_dictionaries({p.name: _value(p) for p in links.SCHEMA
                                 if p.name not in ("q", "box")})


def _fresh() -> dict[str, Any]:
    return {**state.defaults(), "_url_applied": True}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=SESSION, query=st.text(st.characters(blacklist_categories=("Cs",)),
                                     min_size=1, max_size=12),
       box=st.none() | st.integers(0, links.MAX_BOXES - 1) | st.just(0))
def test_state_to_link_to_state_is_the_identity(values: dict[str, Any], query: str,
                                                box: int | None) -> None:
    ss = _fresh()
    for p in links.SCHEMA:
        if p.name in values:
            ss[p.key] = values[p.name]
    ss["auto_modalities"] = False
    ss["use_score_threshold"] = True
    ss["selected"] = {ss["task"]: query}
    ss["view_focus"] = None if box is None else (query, box)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state.st, "session_state", ss)
        params = {**state.link_params(), **state.view_params(query),
                  **state.gallery_params(), **state.slices_params(),
                  **state.leaderboard_params(), **state.audit_params(),
                  **links.emit(ss, ["annotation"])}
    url = urlencode(params)
    back = _fresh()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state.st, "session_state", back)
        state.apply_link(dict(parse_qsl(url, keep_blank_values=True)))
    assert back["_link_notes"] == []
    for p in links.SCHEMA:
        if p.name in ("q", "box"):
            continue
        assert back[p.key] == ss[p.key] or (
            p.kind == "range" and tuple(back[p.key]) == tuple(ss[p.key])), p.name
    assert back["selected"] == {ss["task"]: query}
    assert back["view_focus"] == ss["view_focus"]
    assert back["auto_modalities"] is False and back["use_score_threshold"] is True


def test_defaults_write_no_parameter_and_match_the_session_defaults() -> None:
    ss = _fresh()
    assert links.emit(ss, [p for p in links.PAGES if p != "explorer"]) == {}
    assert links.emit(ss, ["explorer"], "q1") == {"q": "q1"}
    for p in links.SCHEMA:
        if p.name not in ("q", "box"):
            assert ss[p.key] == (list(p.default) if isinstance(p.default, list)
                                 else p.default), p.name
    # Every filter, gallery and view setting a user sets on a page is in the table.
    table = {p.key for p in links.SCHEMA}
    assert set(state.FILTER_DEFAULTS) | set(state.GALLERY_DEFAULTS) <= table
    assert set(state.VIEWER_DEFAULTS) - table == {"view_review", "view_link"}


@pytest.mark.parametrize(("params", "named"), [
    ({"box": "2"}, "box"),  # a box needs its query
    ({"q": "a", "box": "0"}, "box"),  # 1-based
    ({"q": "a", "box": "-1"}, "box"),
    ({"layers": "ghbb,sky"}, "layers"),
    ({"opacity": "1.5"}, "opacity"),
    ({"labels": "maybe"}, "labels"),
    ({"mods": "bbox,lidar"}, "mods"),
])
def test_a_value_no_widget_takes_is_dropped_with_a_notice(params: dict[str, str],
                                                          named: str) -> None:
    ss = _fresh()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state.st, "session_state", ss)
        state.apply_link(params)
    assert any(f"`{named}`" in n for n in ss["_link_notes"])


def test_an_empty_layer_selection_travels_as_none() -> None:
    ss = _fresh()
    ss["view_layers"] = []
    assert links.emit(ss, ["explorer"], "q")["layers"] == "none"


def _region(card: str) -> tuple[float, float, float, float]:
    x0, x1, y0, y1 = (float(v.replace(",", "")) for v in re.search(
        r"Showing x ([\d,]+)–([\d,]+), y ([\d,]+)–([\d,]+)", card).groups())
    return x0, y0, x1, y1


@pytest.mark.usefixtures("fresh_caches")
def test_a_link_with_a_picked_box_reopens_on_that_box(tmp_path: Path) -> None:
    ds = write_large_image_dataset(tmp_path / "big")
    # The picked box, its view's link, and the link opened on a fresh session.
    at = app_on(ds, task="referring", view_focus=("ref_1", 1), view_layers=["GT HBB"])
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    picked = _region(card_html(at))
    link = card_params(at)  # the URL the viewer writes to the address bar
    assert link.get("box") == "2"
    fresh = AppTest.from_file(APP, default_timeout=120)
    goto(fresh, EXPLORER)
    for key, value in link.items():
        fresh.query_params[key] = value[0] if isinstance(value, list) else value
    fresh.run()
    assert_ok(fresh)
    assert fresh.session_state["view_focus"] == ("ref_1", 1)
    assert fresh.session_state["view_layers"] == ["GT HBB"]
    assert _region(card_html(fresh)) == picked
    assert fresh.selectbox(key="_w_objects").value == 1
