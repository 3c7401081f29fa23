"""The explorer's viewer card in Chromium (issue 28): one element whose content is
swapped per query. "Next" and "Previous" change the query it shows and the address bar
(written by the card itself), the address bar reopens that view in a new session, the
pictures load from the Blob URLs the card's script made of the bytes sent in its data
(issue 39: no media endpoint), and nothing else on the page shows the position or has
the buttons (they are the card's own, issue 39). Each test is a new session on the
worker's shared ``demo_server`` (what the server sends is per session).
Screenshot: /tmp/ovearth_shots/explorer_card.png (a query with masks and boxes)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from browser_support import MS, Server, navigate, settle, shoot
from playwright.sync_api import Page, expect

PICTURES = ("() => [...document.querySelectorAll('[data-testid=stMain] .ov-card img')]"
            ".map(i => [i.className, i.getAttribute('src'), i.complete && i.naturalWidth])")


def _shown(page: Page) -> str:
    """The query id in the card's heading."""
    return page.locator(".ov-card h3 code").first.inner_text().strip()


def _address_query(page: Page) -> str:
    return parse_qs(urlparse(page.url).query)["q"][0]


def test_next_and_previous_swap_the_card_and_the_address(
        demo_server: Server, new_page: Callable[..., Page], tmp_path: Path) -> None:
    page = new_page(1500, 2000)
    page.goto(f"{demo_server.url}/Query_explorer")
    settle(page, "Query 1 of 6 in the filtered list")
    first = _shown(page)
    assert page.locator(".ov-nav").count() == 1  # the position line is in the card
    # The navigator's buttons are the card's: one of each on the page, in the card,
    # beside the position line; no "Previous" on the first query.
    for label in ("Next ▶", "◀ Previous"):
        button = page.get_by_role("button", name=label)
        expect(button).to_have_count(1)
        assert button.evaluate("b => !!b.closest('.ov-viewer .ov-bar')")
    expect(page.get_by_role("button", name="◀ Previous")).to_be_disabled()
    expect(page.get_by_role("button", name="Next ▶")).to_be_enabled()
    navigate(page, "Next ▶", "Query 2 of 6 in the filtered list")
    second = _shown(page)
    assert second != first
    expect(page).to_have_url(re.compile(rf"[?&]q={second}(&|$)"), timeout=MS)
    assert _address_query(page) == second
    # The pictures come from Blob URLs the card's script made, loaded.
    pictures = page.wait_for_function(
        f"() => {{ const p = ({PICTURES})(); return p.length == 2 && p.every(x => x[2] > 0)"
        " && p; }", timeout=MS).json_value()
    assert {c for c, _, _ in pictures} == {"ov-view", "ov-thumb"}
    assert all(src.startswith("blob:") for _, src, _ in pictures)
    shoot(page, tmp_path, "explorer_card.png")
    navigate(page, "◀ Previous", "Query 1 of 6 in the filtered list")
    assert _shown(page) == first
    expect(page).to_have_url(re.compile(rf"[?&]q={first}(&|$)"), timeout=MS)
    navigate(page, "Next ▶", "Query 2 of 6 in the filtered list")
    # The address bar, opened in a new session, shows the same view.
    fresh = page.context.new_page()
    fresh.goto(page.url)
    settle(fresh, "Query 2 of 6 in the filtered list")
    assert _shown(fresh) == second


# At the click, before the rerun: what the card shows, and the script's state (a listener
# on the document, in the bubbling phase: it runs after the card's own, on the card's
# element, which puts the card "Previous" opens in place).
AT_CLICK = ("() => { window.atClick = null; document.addEventListener('click', () => { "
            "window.atClick = [document.querySelector('.ov-card h3 code').innerText.trim(), "
            "document.querySelector('[data-testid=stApp]').getAttribute("
            "'data-test-script-state'), new URLSearchParams(location.search).get('q'), "
            "[...document.querySelectorAll('[data-ov-stale]')].map(e => e.innerText).join("
            "' | ')]; }, {once: true}); }")
STALE = "() => document.querySelectorAll('[data-ov-stale], [style*=\"opacity: 0.4\"]').length"


def test_previous_shows_the_query_at_the_click_and_the_rerun_keeps_it(
        demo_server: Server, new_page: Callable[..., Page], tmp_path: Path) -> None:
    """The card "Previous" opens (the query just seen, so drawn) is sent ahead with the
    card: the click puts it in place, with its address, before the rerun starts; the rerun
    then sends the same card (the card stays; nothing reverts). Screenshot:
    explorer_card_previous.png (the settled page after "Previous")."""
    page = new_page(1500, 2000)
    page.goto(f"{demo_server.url}/Query_explorer")
    settle(page, "Query 1 of 6 in the filtered list")
    # Queries 3 and 4 (query 2's image is missing: no card is sent ahead from it).
    navigate(page, "Next ▶", "Query 2 of 6 in the filtered list")
    navigate(page, "Next ▶", "Query 3 of 6 in the filtered list")
    first = _shown(page)
    navigate(page, "Next ▶", "Query 4 of 6 in the filtered list")
    second = _shown(page)
    page.evaluate(AT_CLICK)
    sent = page.evaluate("() => document.querySelector('.ov-viewer').dataset.sent")
    navigate(page, "◀ Previous", "Query 3 of 6 in the filtered list")
    shown, script, address, dimmed = page.evaluate("() => window.atClick")
    assert (shown, address) == (first, first) and second != first
    assert script == "notRunning"  # before the rerun: the click alone swapped the card
    # What follows the card is still the old query's until the rerun: dimmed, the box
    # picker among it ("Zoom to one of the query's N boxes"), not the card or buttons.
    assert "Zoom to one of the query" in dimmed and first not in dimmed
    assert "Next" not in dimmed and "Layers" not in dimmed
    assert page.evaluate(STALE) == 0  # the rerun ended: nothing is dimmed
    # The rerun's card arrived (a new one from the server) and is the same query.
    assert page.evaluate("() => document.querySelector('.ov-viewer').dataset.sent") != sent
    assert _shown(page) == first
    expect(page).to_have_url(re.compile(rf"[?&]q={first}(&|$)"), timeout=MS)
    assert page.evaluate(f"() => ({PICTURES})().every(x => x[2] > 0)")
    shoot(page, tmp_path, "explorer_card_previous.png")


def test_the_arrow_keys_open_the_next_and_previous_query_but_not_in_a_text_field(
        demo_server: Server, new_page: Callable[..., Page]) -> None:
    page = new_page(1500, 2000)
    page.goto(f"{demo_server.url}/Query_explorer")
    settle(page, "Query 1 of 6 in the filtered list")
    first = _shown(page)
    navigate(page, "Next ▶", "Query 2 of 6 in the filtered list", key="ArrowRight")
    second = _shown(page)
    assert second != first and _address_query(page) == second
    # In a text field the keys move the caret: no query switch, no rerun.
    field = page.get_by_role("textbox", name="Search text / id")
    field.click()
    field.press("ArrowLeft")
    field.press("ArrowRight")
    page.wait_for_timeout(1000)
    page.wait_for_selector('[data-test-script-state="notRunning"]', timeout=MS)
    assert _shown(page) == second
    expect(page.get_by_text("Query 2 of 6 in the filtered list")).to_be_visible()
    page.locator("h1").first.click()  # the focus out of the field
    navigate(page, "◀ Previous", "Query 1 of 6 in the filtered list", key="ArrowLeft")
    assert _shown(page) == first and _address_query(page) == first
    # At the first query "Previous" is disabled: the key does nothing.
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(1000)
    assert _shown(page) == first
    # In the query table (a data grid, first row: this query) the keys move the grid's
    # cell: no query switch.
    grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    page.mouse.click(grid["x"] + 350, grid["y"] + 55)
    page.wait_for_timeout(500)
    page.wait_for_selector('[data-test-script-state="notRunning"]', timeout=MS)
    assert page.evaluate(  # the grid's canvas (or, later, a cell of its table)
        "() => !!document.activeElement.closest('[data-testid=stDataFrame]')")
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(1000)
    page.wait_for_selector('[data-test-script-state="notRunning"]', timeout=MS)
    assert _shown(page) == first
    expect(page.get_by_text("Query 1 of 6 in the filtered list")).to_be_visible()


LOADED = (f"() => {{ const p = ({PICTURES})(); return p.length == 2 && p.every(x => x[2] > 0)"
          " && p.every(x => x[1] && x[1].startsWith('blob:')); }")


def test_a_page_that_lost_its_pictures_is_sent_them_again(
        demo_server: Server, new_page: Callable[..., Page]) -> None:
    """The server sends each picture once per session (by its content address); a page
    that lacks one the card names (here: its store emptied by hand; in use, a message
    lost to a rerun that cut the one before) says so (the trigger ``missing``) and the
    server sends them all again: the card ends with both pictures loaded."""
    page = new_page(1500, 2000)
    page.goto(f"{demo_server.url}/Query_explorer")
    settle(page, "Query 1 of 6 in the filtered list")
    navigate(page, "Next ▶", "Query 2 of 6 in the filtered list")
    navigate(page, "Next ▶", "Query 3 of 6 in the filtered list")
    third = _shown(page)
    navigate(page, "Next ▶", "Query 4 of 6 in the filtered list")
    # Query 3's pictures were sent (with it, and ahead with query 4): the server will
    # not send them again, and the page no longer has them.
    page.evaluate("() => { for (const e of window.ovCardPictures.values()) "
                  "URL.revokeObjectURL(e.url); window.ovCardPictures.clear(); }")
    navigate(page, "◀ Previous", "Query 3 of 6 in the filtered list")
    page.wait_for_function(LOADED, timeout=MS)
    settle(page, "Query 3 of 6 in the filtered list")
    assert _shown(page) == third
    assert page.evaluate("() => window.ovCardPictures.size") >= 2
