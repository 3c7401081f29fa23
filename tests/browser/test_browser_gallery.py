"""The Gallery in Chromium on a non-demo dataset (issue 14): tiles are drawn, and a tile's
link opens its query in the explorer. The screenshot goes to /tmp/ovearth_shots/gallery.png
(with ``OVEARTH_SHOTS=1``).

The dataset is a copy of the bundled demo's files in a folder of its own, opened with
``--data``; the app's own demo folder holds the tests' tiny dataset, so a fallback to it
cannot pass (its queries have other ids and texts): ``browser_support.harbour_app``, served
by the worker's shared ``harbour_server`` (the test only reads it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import parse_qsl, urlsplit

from browser_support import MS, Server, settle, snap
from playwright.sync_api import Page, expect


def test_gallery_draws_tiles_and_a_tile_opens_its_query(
        harbour_server: Server, new_page: Callable[..., Page]) -> None:
    page = new_page(1500, 1900)
    page.goto(f"{harbour_server.url}/Gallery")
    settle(page, "tiles · showing 1–")
    main = page.locator('[data-testid="stMain"]')
    images = main.locator('[data-testid="stImage"] img')
    expect(images).to_have_count(48, timeout=MS)
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMain] "
        "[data-testid=stImage] img')].every(i => i.complete && i.naturalWidth > 0)",
        timeout=MS)
    assert main.get_by_text("harbour_bench", exact=False).count() > 0
    snap(page, "gallery.png")
    link = main.locator("a", has_text="↗").nth(2)
    href = link.get_attribute("href") or ""
    query = dict(parse_qsl(urlsplit(href).query))["q"]
    assert urlsplit(href).path == "/Query_explorer" and "harbour_bench" in href
    if link.get_attribute("target") == "_blank":
        with page.context.expect_page() as opened:
            link.click()
        explorer = opened.value
    else:
        link.click()
        explorer = page
    settle(explorer, "Viewer")
    header = explorer.locator("h3").filter(has_text=re.compile(r"ov_\d+")).first
    assert header.inner_text().strip() == query
    assert explorer.locator('[data-testid="stException"]').count() == 0
    snap(explorer, "gallery_opened.png")
