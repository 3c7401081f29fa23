"""A dense query in Chromium opens on its first error, and "Next error ▷" (or Shift+→)
moves to the second, zoomed to it (issue 34, item 8). Screenshots:
/tmp/ovearth_shots/errors_first.png, errors_second.png, errors_back.png (with
``OVEARTH_SHOTS=1``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import Server, navigate, settle, shots_wanted, snap
from playwright.sync_api import Page

from benchmarks import dense_scene

pytestmark = pytest.mark.browser


def _shoot(page, tmp_path: Path, name: str) -> None:
    if shots_wanted():
        page.locator(".ov-viewer").first.scroll_into_view_if_needed()
        snap(page, name)


def _view(page) -> str:
    return page.locator(".ov-viewer").get_by_text("Showing x", exact=False).first.inner_text()


def test_a_dense_query_opens_on_its_first_error_and_steps(
        demo_server: Server, tmp_path: Path, new_page: Callable[..., Page]) -> None:
    """The mosaic opens by its link (``data=``, under the data roots) on the worker's
    shared ``demo_server``: the test only reads."""
    bench = dense_scene.write_mosaic(tmp_path / "mosaic", dense_gt=400, dense_queries=1)
    page = new_page(1500, 1300)
    page.goto(f"{demo_server.url}/Query_explorer?data={bench}&sub=packed&q=dense_00")
    settle(page, "Error 1 of")
    assert page.locator('[data-testid="stException"]').count() == 0
    line = page.locator(".ov-viewer").get_by_text("Error 1 of", exact=False).first
    first = line.inner_text()
    total = re.search(r"Error 1 of ([\d,]+)", first).group(1)
    first_view = _view(page)
    assert re.search(r"Showing x [\d,]+–[\d,]+", first_view)
    x0, x1 = (int(v.replace(",", "")) for v in
              re.search(r"Showing x ([\d,]+)–([\d,]+)", first_view).groups())
    assert x1 - x0 < 200  # zoomed to one box, not the 3,333-px scene
    _shoot(page, tmp_path, "errors_first.png")
    navigate(page, "Next error ▷", f"Error 2 of {total}")
    second_view = _view(page)
    assert second_view != first_view  # zoomed to the second error
    assert page.locator(".ov-viewer").get_by_text("dense_00").count() > 0
    _shoot(page, tmp_path, "errors_second.png")
    page.locator("h1").first.click()  # the focus on the page, not a widget
    navigate(page, "", f"Error 1 of {total}", key="Shift+ArrowLeft")
    assert _view(page) == first_view
    _shoot(page, tmp_path, "errors_back.png")
