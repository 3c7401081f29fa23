"""Issue 39 in Chromium: app.py is the frame, ``st.navigation`` the menu.

Every page's URL, opened directly on a freshly started server (one server per page: a
fresh server runs the pages/ folder in Streamlit's old mode until a session calls
``st.navigation``: the page file a URL names runs alone and hands over to app.py), shows
that page's title and the sidebar's evaluation options (app.py ran), and no "Page not
found" dialog; a link's parameters are kept;
one menu (Streamlit's, Overview first, the pages' titles) and no second list of links;
the menu moves between pages within the session, its options kept.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import IDLE, MS, Server, settle, shoot
from doc_urls import DIRECT_LINKS
from playwright.sync_api import Page, expect

from pages.common import nav

MENU = [p.menu for p in nav.PAGES]


def _url(page: nav.AppPage) -> str:
    return "" if page == nav.PAGES[0] else page.url_path


def _assert_frame(page: Page, shown: nav.AppPage) -> None:
    """``shown``'s title, the frame's sidebar and exactly one navigation menu; no "Page
    not found" dialog (a fresh server's pages/ mode shows one for a URL naming no file)."""
    expect(page.locator("h1").first).to_have_text(shown.heading, timeout=MS)
    page.wait_for_selector(IDLE, timeout=MS)
    expect(page.get_by_text("Page not found")).to_have_count(0)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("Evaluation options", exact=True)).to_have_count(1)
    menu = page.get_by_test_id("stSidebarNav")
    expect(menu).to_have_count(1)
    assert [t.strip() for t in menu.get_by_test_id("stSidebarNavLink").all_inner_texts()] \
        == MENU
    # no page link of the app's own beside the menu (the old hand-drawn list)
    expect(page.get_by_test_id("stPageLink")).to_have_count(0)
    assert page.title() == f"OVEarth Inspector · {shown.tab}"


@pytest.mark.parametrize("shown", nav.PAGES, ids=[p.url_path for p in nav.PAGES])
def test_a_direct_link_on_a_fresh_server_runs_app_py_then_the_page(
        app_dir: Path, new_page: Callable[..., Page], tmp_path: Path,
        shown: nav.AppPage) -> None:
    assert DIRECT_LINKS[f"/{_url(shown)}"] is shown  # the docs' URLs this test opens
    with Server(app_dir, tmp_path / "server.log") as server:
        page = new_page()
        page.goto(f"{server.url}/{_url(shown)}")
        _assert_frame(page, shown)
        assert page.url.split("?")[0].rstrip("/") == f"{server.url}/{_url(shown)}" \
            .rstrip("/")
        if shown in (nav.PAGES[0], nav.BY_FILE[nav.COMPARE]):
            settle(page, shown.heading)  # charts and tables drawn, no skeleton
            shoot(page, tmp_path, f"navigation_{shown.url_path}.png")


def test_a_link_with_parameters_keeps_them(app_dir: Path, new_page: Callable[..., Page],
                                           tmp_path: Path) -> None:
    """On a fresh server, as every direct link above: the page file that runs alone hands
    the link's parameters over to app.py."""
    with Server(app_dir, tmp_path / "server.log") as server:
        page = new_page()
        page.goto(f"{server.url}/Compare?b=model_b&cap=10")
        _assert_frame(page, nav.BY_FILE[nav.COMPARE])
        settle(page, "at most 10 boxes per query (COCO)")
        # kept (the app writes B back as its path in the data folder)
        assert "cap=10" in page.url and "model_b" in page.url, page.url
        settle(page, "B = model_b")
        expect(page.get_by_role("spinbutton", name="COCO detection cap")).to_have_value("10")


def test_the_menu_moves_between_pages_keeping_the_options(
        demo_server: Server, new_page: Callable[..., Page]) -> None:
    """Within one session (the worker's shared server: the test needs no fresh one)."""
    page = new_page()
    page.goto(demo_server.url)
    _assert_frame(page, nav.PAGES[0])
    page.get_by_role("slider", name="IoU threshold (box matching)").focus()
    for _ in range(4):  # 0.5 -> 0.7 in steps of 0.05
        page.keyboard.press("ArrowRight")
    settle(page, "IoU threshold 0.7")
    page.get_by_test_id("stSidebarNav").get_by_text("Compare", exact=True).click()
    _assert_frame(page, nav.BY_FILE[nav.COMPARE])
    settle(page, "Key metrics")
    first = page.get_by_test_id("stCaptionContainer").first.inner_text()
    assert "IoU threshold 0.7" in first, first
    assert page.url.split("?")[0] == f"{demo_server.url}/Compare"
    page.get_by_test_id("stSidebarNav").get_by_text("Overview", exact=True).click()
    _assert_frame(page, nav.PAGES[0])
    first = page.get_by_test_id("stCaptionContainer").first.inner_text()
    assert "IoU threshold 0.7" in first, first


def test_an_unknown_url_on_a_fresh_server_says_so_and_opens_the_overview(
        app_dir: Path, new_page: Callable[..., Page], tmp_path: Path) -> None:
    with Server(app_dir, tmp_path / "server.log") as server:
        page = new_page()
        page.goto(f"{server.url}/No_such_page")
        expect(page.get_by_text("Page not found")).to_have_count(1, timeout=MS)
        expect(page.locator("h1").first).to_have_text(nav.PAGES[0].heading, timeout=MS)
