"""The viewer card's rules, by direct calls (issue 47): the navigator's and the error
navigator's lines (``bar``), a card's payload, which pictures go to the browser
(``_to_send``), what ``show`` mounts and which clicks reach ``on_nav``. Its tests were
AppTest runs (``test_app_viewer_card.py``, ``test_error_navigation.py``); here the
component's mount functions and Streamlit's session are recorded (``tests/st_recorder.py``)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import st_recorder

from pages.common import viewer_card

PREV, NEXT = "◀ Previous", "Next ▶"
PREV_ERR, NEXT_ERR = "◁ Previous error", "Next error ▷"


def _button(go: str, label: str, on: bool) -> str:
    return (f"<button type='button' class='ov-go' data-go='{go}'{'' if on else ' disabled'}>"
            f"{label}</button>")


def test_a_pictures_address_is_its_12_byte_blake2b_digest() -> None:
    """The same bytes, the same address; other bytes, another; 24 hex digits."""
    assert viewer_card.address(b"JPEG1") == hashlib.blake2b(b"JPEG1",
                                                             digest_size=12).hexdigest()
    assert len(viewer_card.address(b"")) == 24
    assert viewer_card.address(b"a") != viewer_card.address(b"b")


def test_the_navigator_line_has_its_buttons_on_each_side_of_the_escaped_head() -> None:
    """"◀ Previous", the head (escaped), "Next ▶"; each button disabled as ``nav`` says
    (previous off, next on here); the error line under it, its own buttons enabled as
    its flags say (previous on, next off)."""
    line = viewer_card.bar("Query 3 of 9 <i>", (False, True),
                           ("Error 2 of 4 · <b>", True, False))
    assert line == (
        "<div class='ov-bar'>" + _button("prev", PREV, False)
        + "<p class='ov-nav'>Query 3 of 9 &lt;i&gt;</p>" + _button("next", NEXT, True)
        + "</div><div class='ov-bar'>" + _button("prev_err", PREV_ERR, True)
        + "<p class='ov-errnav'>Error 2 of 4 · &lt;b&gt;</p>"
        + _button("next_err", NEXT_ERR, False) + "</div>")


def test_without_buttons_the_navigator_is_the_head_alone() -> None:
    """``nav`` ``None``: the head line only, and no error line even with errors; no
    head either: nothing. Buttons without a head keep an empty line between them; no
    errors: no error line."""
    assert viewer_card.bar("Q <1>", None, ("Error 1 of 1", True, True)) == (
        "<p class='ov-nav'>Q &lt;1&gt;</p>")
    assert viewer_card.bar("", None) == ""
    assert viewer_card.bar("", (True, False)) == (
        "<div class='ov-bar'>" + _button("prev", PREV, True) + "<p class=ov-nav></p>"
        + _button("next", NEXT, False) + "</div>")
    assert viewer_card.bar("h", (True, True), None).count("ov-bar") == 1


def test_a_payload_names_its_html_by_digest_and_keeps_url_and_pictures() -> None:
    card = viewer_card.payload("<p>é</p>", "?q=1", {"d1": b"J"})
    assert card == {"html": "<p>é</p>",
                    "digest": hashlib.blake2b("<p>é</p>".encode(), digest_size=12).hexdigest(),
                    "url": "?q=1", "pictures": {"d1": b"J"}}
    assert viewer_card.payload("x", None)["pictures"] == {}
    assert viewer_card.payload("x", None)["url"] is None


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> st_recorder.Recorder:
    return st_recorder.install(monkeypatch, viewer_card)


def _card(*pictures: str) -> dict[str, Any]:
    return {"pictures": {p: p.encode() for p in pictures}}


def test_only_pictures_the_browser_was_not_sent_go_along(session: st_recorder.Recorder
                                                         ) -> None:
    """The pictures of the card and the cards ahead not sent yet go as a table (digest,
    JPEG bytes), each once, in order; sent again: nothing (``None``)."""
    table = viewer_card._to_send([_card("a", "b"), _card("b", "c")])
    assert table.column_names == ["digest", "jpeg"]
    assert table.column("digest").to_pylist() == ["a", "b", "c"]
    assert table.column("jpeg").to_pylist() == [b"a", b"b", b"c"]
    assert viewer_card._to_send([_card("c", "a")]) is None
    table = viewer_card._to_send([_card("a", "d")])
    assert table.column("digest").to_pylist() == ["d"]


def test_the_held_pictures_are_the_last_used_up_to_the_limit(
        session: st_recorder.Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The browser is taken to hold the ``HELD_MAX`` pictures used last (a picture named
    again is used again): with room for 3, after a, b, c, then a, then d, b is the one
    dropped, sent again when named; exactly 3 are held."""
    monkeypatch.setattr(viewer_card, "HELD_MAX", 3)
    for names in (("a", "b", "c"), ("a",), ("d",)):
        viewer_card._to_send([_card(*names)])
    assert list(session.session_state[viewer_card.HELD]) == ["c", "a", "d"]
    assert viewer_card._to_send([_card("a", "c", "d")]) is None
    assert viewer_card._to_send([_card("b")]).column("digest").to_pylist() == ["b"]
    viewer_card._forget()  # the browser lost one: send them all again
    assert viewer_card._to_send([_card("a")]).column("digest").to_pylist() == ["a"]


@pytest.fixture
def mounted(monkeypatch: pytest.MonkeyPatch, session: st_recorder.Recorder
            ) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    monkeypatch.setattr(viewer_card, "_mount", lambda **kw: out.append(kw))
    return out


def test_show_mounts_the_card_with_the_cards_ahead_and_their_new_pictures(
        mounted: list[dict[str, Any]], session: st_recorder.Recorder) -> None:
    """The element is mounted under its key with the card (HTML, digest, URL), the cards
    ahead by button without their pictures, the pictures not sent yet (the card's and
    those ahead), its number (counting up from one card to the next), its host's class
    (its slot's: what follows the slot is dimmed at a click), sized to its content, the
    clicks to ``nav``, a missing picture to ``_forget``."""
    card = viewer_card.payload("<p>1</p>", "?q=1", {"p1": b"1"})
    ahead = {"next": viewer_card.payload("<p>2</p>", "?q=2", {"p2": b"2"})}
    viewer_card.show(card, ahead)
    (kw,) = mounted
    data = kw.pop("data")
    assert kw["key"] == "_w_viewer_card" and kw["height"] == "content"
    assert kw["on_missing_change"] is viewer_card._forget and callable(kw["on_nav_change"])
    assert set(kw) == {"key", "height", "on_missing_change", "on_nav_change"}
    pictures = data.pop("pictures")
    assert pictures.column("digest").to_pylist() == ["p1", "p2"]
    sent = data.pop("sent")
    assert data == {"html": "<p>1</p>", "digest": card["digest"], "url": "?q=1",
                    "ahead": {"next": {"html": "<p>2</p>", "digest": ahead["next"]["digest"],
                                       "url": "?q=2"}},
                    "host": "st-key-_w_viewer_card_slot"}
    viewer_card.show(card)
    assert mounted[1]["data"]["sent"] == sent + 1
    assert mounted[1]["data"]["ahead"] == {} and mounted[1]["data"]["pictures"] is None


def test_the_navigators_clicks_reach_on_nav_and_nothing_else_does(
        mounted: list[dict[str, Any]], session: st_recorder.Recorder) -> None:
    """A click's trigger value ``nav`` goes to ``on_nav``: "next", "prev", "next_err",
    "prev_err"; any other value (or no value) is ignored; without ``on_nav``, a click
    does nothing."""
    got: list[str] = []
    viewer_card.show(viewer_card.payload("x", None), on_nav=got.append)
    nav = mounted[0]["on_nav_change"]
    for value in ("next", "prev_err", "bogus", None, "next_err", "prev"):
        session.session_state["_w_viewer_card"] = {"nav": value}
        nav()
    session.session_state["_w_viewer_card"] = None
    nav()
    assert got == ["next", "prev_err", "next_err", "prev"]
    viewer_card.show(viewer_card.payload("x", None))
    session.session_state["_w_viewer_card"] = {"nav": "next"}
    mounted[1]["on_nav_change"]()  # no on_nav: no error


def test_the_cards_slot_is_a_container_keyed_as_its_host_class_says(
        session: st_recorder.Recorder) -> None:
    """The card's place is a container whose key is the host class the card's script
    dims after (``st-key-<key>``)."""
    made = viewer_card.slot()
    assert made == st_recorder.Call("container", (), {"key": "_w_viewer_card_slot"})
