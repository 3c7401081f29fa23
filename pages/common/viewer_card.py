"""The explorer's viewer card as one custom element (``st.components.v2``): the navigator
("◀ Previous", the query's position, "Next ▶"), the query's picture, notes, metric table
and facts in one block whose content is swapped per query, and the view's URL written by
the same element (``history.replaceState``), so a query switch changes one element of the
page and sends no URL message of its own.

The HTML is built on the server (user text escaped, as for ``st.html``); the script
(``viewer_card.js``, next to this file, read once) only puts it in place. Only the public
``st.components.v2`` API is used: the navigator's buttons report a click with the
component's trigger ``nav`` (``"next"`` / ``"prev"``, applied by the ``on_nav`` callback
before the rerun, as a button's ``on_click``), and the pictures travel in the element's
data, content-addressed: the HTML names each JPEG by its digest (``data-pic``), and the
bytes of the ones this session's browser was not sent yet go along as an Arrow table
(``pictures``: binary, no base64), which the script turns into Blob URLs and decodes
(``img.decode()``, off the main thread) when they arrive. No network.
"""

from __future__ import annotations

import hashlib
import html
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import streamlit as st

NAME = "ovearth_viewer_card"
KEY = "_w_viewer_card"
# The card's place atop the viewer (a container), made before what follows the card and
# filled last: the card is the run's last element, so its arrival says the run has drawn
# everything after it (issue 49: no end marker of its own).
SLOT = "_w_viewer_card_slot"
# Every update of the element carries its script: sent without its comment lines.
_JS = "\n".join(line for line in (Path(__file__).with_name("viewer_card.js")).read_text(
    encoding="utf-8").splitlines() if not line.lstrip().startswith("//"))
# Global (isolate_styles=False): the navigator's buttons look like Streamlit's secondary
# buttons (the theme's variables the component is given).
_CSS = (".ov-bar{display:flex;align-items:center;gap:1rem;margin:0 0 .75rem}"
        ".ov-bar .ov-nav,.ov-bar .ov-errnav{flex:1 1 0;margin:0}"
        ".ov-errnav{font-size:.875rem;opacity:.75;text-align:center}"
        ".ov-go{font:inherit;font-size:var(--st-base-font-size,1rem);line-height:1.6;"
        "min-height:2.5rem;padding:.25rem .75rem;cursor:pointer;white-space:nowrap;"
        "color:var(--st-text-color,inherit);background:var(--st-background-color,transparent);"
        "border:1px solid var(--st-border-color,rgba(49,51,63,.2));"
        "border-radius:var(--st-button-radius,.5rem)}"
        ".ov-go:hover:not(:disabled){border-color:var(--st-primary-color,#ff4b4b);"
        "color:var(--st-primary-color,#ff4b4b)}"
        ".ov-go:focus-visible{outline:2px solid var(--st-primary-color,#ff4b4b);"
        "outline-offset:1px}"
        ".ov-go:disabled{cursor:not-allowed;opacity:.4}")
_mount = st.components.v2.component(NAME, js=_JS, css=_CSS, isolate_styles=False)
_SENT = itertools.count(1)  # numbers each card sent: the script tells a new one from a redraw
NAV = {"prev": "◀ Previous", "next": "Next ▶"}
# The error navigator (a query's box errors, one at a time): its own row under the query's.
ERROR_NAV = {"prev_err": "◁ Previous error", "next_err": "Next error ▷"}

# The digests of the pictures this session's browser was sent, least recently used first
# (the script keeps at least twice as many, used in the same order: it holds every one
# listed here unless a message was lost, which it then reports: ``missing``).
HELD = "_ov_card_pictures"
HELD_MAX = 16  # (the script keeps 32: PICTURES_MAX)


def address(jpeg: bytes) -> str:
    """The picture's content address: the name the card's HTML gives it (``data-pic``)."""
    return hashlib.blake2b(jpeg, digest_size=12).hexdigest()


def bar(head: str, nav: tuple[bool, bool] | None,
        errors: tuple[str, bool, bool] | None = None) -> str:
    """The navigator's line: "◀ Previous", ``head`` (plain text, escaped here) and
    "Next ▶"; ``nav`` says which of the two can be pressed (``None``: no buttons).
    ``errors`` (``(text, previous enabled, next enabled)``): under it, the error
    navigator's line, "◁ Previous error", ``text`` and "Next error ▷"."""
    text = f"<p class='ov-nav'>{html.escape(head)}</p>" if head else ""
    if nav is None:
        return text
    out = _row(text, (("prev", nav[0]), ("next", nav[1])))
    if errors is not None:
        out += _row(f"<p class='ov-errnav'>{html.escape(errors[0])}</p>",
                    (("prev_err", errors[1]), ("next_err", errors[2])))
    return out


def _row(text: str, buttons: tuple[tuple[str, bool], tuple[str, bool]]) -> str:
    prev, nxt = (f"<button type='button' class='ov-go' data-go='{go}'"
                 f"{'' if on else ' disabled'}>{NAV.get(go) or ERROR_NAV[go]}</button>"
                 for go, on in buttons)
    return f"<div class='ov-bar'>{prev}{text or '<p class=ov-nav></p>'}{nxt}</div>"


def payload(html_text: str, url: str | None,
            pictures: dict[str, bytes] | None = None) -> dict[str, Any]:
    """A card: its HTML, its digest (the script swaps the content only when it changed),
    the query string to show in the address bar (``None``: leave it) and the pictures its
    HTML names (:func:`address` -> JPEG; kept on the server, sent by :func:`show` to a
    browser that does not hold them)."""
    return {"html": html_text,
            "digest": hashlib.blake2b(html_text.encode(), digest_size=12).hexdigest(),
            "url": url, "pictures": pictures or {}}


def _to_send(cards: list[dict[str, Any]]) -> pa.Table | None:
    """The pictures of ``cards`` this session's browser was not sent yet, as an Arrow
    table (``digest``, ``jpeg``); each one named is marked as just used."""
    ss = st.session_state
    held: dict[str, bool] = ss.setdefault(HELD, {})
    named: dict[str, bytes] = {}
    for card in cards:
        named.update(card["pictures"])
    new = {d: jpeg for d, jpeg in named.items() if d not in held}
    for d in named:  # the script marks them used (or new) in the same order
        held.pop(d, None)
        held[d] = True
    while len(held) > HELD_MAX:
        held.pop(next(iter(held)))
    if not new:
        return None
    return pa.table({"digest": pa.array(list(new), pa.string()),
                     "jpeg": pa.array(list(new.values()), pa.binary())})


def _forget() -> None:
    """The script lacks a picture it was sent (a message lost to a rerun that cut the one
    before): send every picture again."""
    st.session_state[HELD] = {}


def show(card: dict[str, Any], ahead: dict[str, dict[str, Any]] | None = None,
         on_nav: Callable[[str], None] | None = None) -> None:
    """Mount (or update) the card (a :func:`payload`); write its ``url`` (``?a=b&…``) to
    the address bar. ``ahead``: the cards the navigator's buttons open (``next`` /
    ``prev``), put in place when that button is clicked, before the rerun that confirms
    it (their pictures are sent and decoded beforehand). ``on_nav`` is called with
    ``"next"`` or ``"prev"`` when a button is clicked (or an arrow key pressed), and with
    ``"next_err"`` / ``"prev_err"`` for the error navigator's (Shift + arrow), before the
    rerun that click starts."""
    ahead = ahead or {}
    pictures = _to_send([card, *ahead.values()])
    sent = next(_SENT)

    def nav() -> None:
        go = (st.session_state[KEY] or {}).get("nav")
        if on_nav is not None and (go in NAV or go in ERROR_NAV):
            on_nav(go)

    def plain(c: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in c.items() if k != "pictures"}

    _mount(key=KEY, data={**plain(card), "ahead": {s: plain(c) for s, c in ahead.items()},
                          "sent": sent, "host": f"st-key-{SLOT}", "pictures": pictures},
           height="content", on_nav_change=nav, on_missing_change=_forget)


def slot() -> Any:
    """The card's place (a container keyed :data:`SLOT`): made where the card shows, before
    what follows it, and filled (``with slot: show(...)``) after all of that, so the card
    is the last element of the run (its script undims what follows it when it arrives)."""
    return st.container(key=SLOT)
