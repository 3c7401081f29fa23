"""The explorer's viewer card as one custom element (``st.components.v2``): the query's
position, picture, notes, metric table and facts in one block whose content is swapped per
query, and the view's URL written by the same element (``history.replaceState``), so a
query switch changes one element of the page and sends no URL message of its own.

The HTML is built on the server (user text escaped, as for ``st.html``); the script
(``viewer_card.js``, next to this file, read once) only puts it in place. No network.
"""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import Any

import streamlit as st

NAME = "ovearth_viewer_card"
KEY = "_w_viewer_card"
_JS = (Path(__file__).with_name("viewer_card.js")).read_text(encoding="utf-8")
_mount = st.components.v2.component(NAME, js=_JS, isolate_styles=False)
_SENT = itertools.count(1)  # numbers each card sent: the script tells a new one from a redraw


def media_url(jpeg: bytes, slot: str) -> str:
    """``jpeg`` served by Streamlit's media endpoint (as ``st.image`` serves a picture), at
    this session's ``slot`` of the card (``picture`` or ``thumbnail``: the previous query's
    file there is released): the card's HTML then names a URL, not the picture's bytes."""
    from streamlit import runtime

    # Relative ("media/…"): under a server base path the page is "<base>/Query_explorer".
    url = runtime.get_instance().media_file_mgr.add(jpeg, "image/jpeg", f"{KEY}.{slot}")
    return url.lstrip("/")


def payload(html: str, url: str | None) -> dict[str, Any]:
    """The element's data: the card's HTML, its digest (the script swaps the content only
    when it changed) and the query string to show in the address bar (``None``: leave it)."""
    return {"html": html, "digest": hashlib.blake2b(html.encode(), digest_size=12).hexdigest(),
            "url": url}


def show(html: str, url: str | None, ahead: dict[str, dict[str, Any]] | None = None) -> None:
    """Mount (or update) the card with ``html``; write ``url`` (``?a=b&…``) to the
    address bar. ``ahead``: the :func:`payload` of the card each navigator button opens
    (``next`` / ``prev``), put in place when that button is clicked, before the rerun
    that confirms it (its pictures are fetched beforehand)."""
    _mount(key=KEY, data={**payload(html, url), "ahead": ahead or {}, "sent": next(_SENT)},
           height="content")
