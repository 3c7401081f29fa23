"""User text is never a link in the browser (issue 26 item 12): Streamlit's Markdown
(remark-gfm) turns bare URLs and e-mail addresses into links by matching the text, so
escaping alone does not stop it. In Chromium, every hostile string rendered through
``views.md_text`` (st.markdown, st.caption, st.error, a widget label) and ``state.code``
shows as its own text and makes no ``<a>``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from browser_support import Server, copy_app, settle
from playwright.sync_api import Page

HOSTILE = ["https://evil.example/login", "HTTP://EVIL.EXAMPLE", "www.evil.example",
           "mail me: someone@evil.example", "mailto:someone@evil.example",
           "xmpp:someone@evil.example", "see [here](https://evil.example)",
           "<https://evil.example>", "ov_1 https://evil.example/?q=1&a=[2]"]

SCRIPT = '''
import json
import streamlit as st
from pages.common import state, views

for i, text in enumerate(json.loads({texts!r})):
    st.markdown(f"md {{i}}: " + views.md_text(text))
    st.caption(f"caption {{i}}: " + views.md_text(text))
    st.error(f"error {{i}}: " + views.md_text(text))
    st.checkbox(f"label {{i}}: " + views.md_text(text), key=f"c{{i}}")
    st.markdown(f"code {{i}}: " + state.code(text))
st.markdown("all drawn")
'''


def test_hostile_user_text_renders_as_text_without_links(
        tmp_path: Path, new_page: Callable[..., Page]) -> None:
    app_dir = copy_app(tmp_path / "app")
    (app_dir / "app.py").write_text(SCRIPT.format(texts=json.dumps(HOSTILE)))
    with Server(app_dir, tmp_path / "server.log") as server:
        page = new_page(1400, 4000)
        page.goto(server.url)
        settle(page, "all drawn")
        hrefs = page.eval_on_selector_all("[data-testid='stMain'] a",
                                          "els => els.map(e => e.href)")
        text = page.locator("[data-testid='stMain']").inner_text().replace("\u2060", "")
    assert [h for h in hrefs if "evil" in h] == []
    for i, hostile in enumerate(HOSTILE):
        for kind in ("md", "caption", "error", "label", "code"):
            assert f"{kind} {i}: {hostile}" in text, (kind, hostile)
