"""Every app URL README.md and docs/*.md write, opened in Chromium on a freshly started
server (issue 46): the page it names, with the frame's sidebar, and no "Page not found"
(a fresh server runs Streamlit's old pages/ mode until a session calls ``st.navigation``:
an address naming no page file shows that dialog, e.g. `/Overview`, which docs/app.md
gave as the Overview's address). One server per URL: only a server's first session meets
the old mode.

A URL that is exactly a page's own address (`/`, `/Compare`, ...) is opened, on a fresh
server of its own, by test_browser_navigation.py's
``test_a_direct_link_on_a_fresh_server_runs_app_py_then_the_page``, which checks all this
and more (the menu, the address kept): only the others are opened here (a second fresh
server for the same first session would prove nothing new)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import IDLE, MS, Server
from doc_urls import DIRECT_LINKS, app_urls, page_of
from playwright.sync_api import Page, expect

URLS = sorted(url for url in app_urls() if url not in DIRECT_LINKS)


def test_the_urls_left_to_the_navigation_test_are_its_direct_links() -> None:
    """The URLs not opened here are opened by the navigation test, as written."""
    left = set(app_urls()) - set(URLS)
    assert left <= set(DIRECT_LINKS)
    assert all(page_of(url) is DIRECT_LINKS[url] for url in left)


@pytest.mark.parametrize("url", URLS)
def test_a_url_the_docs_write_opens_its_page(app_dir: Path, new_page: Callable[..., Page],
                                            tmp_path: Path, url: str) -> None:
    shown = page_of(url)
    with Server(app_dir, tmp_path / "server.log") as server:
        page = new_page()
        page.goto(f"{server.url}{url}")
        page.wait_for_selector(IDLE, timeout=MS)
        expect(page.locator("h1").first).to_be_visible(timeout=MS)
        assert page.get_by_text("Page not found").count() == 0, (
            f"{url} ({', '.join(app_urls()[url])}): Page not found")
        assert shown is not None, f"{url} ({', '.join(app_urls()[url])}) names no page"
        expect(page.locator("h1").first).to_have_text(shown.heading, timeout=MS)
        expect(page.get_by_text("Page not found")).to_have_count(0)
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("Evaluation options", exact=True)).to_have_count(1)
        assert page.title() == f"OVEarth Inspector · {shown.tab}"
