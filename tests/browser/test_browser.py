"""Real browser tests: headless Chromium (Python playwright) against `streamlit run app.py`.

The app code (app.py, pages/, .streamlit/) is copied next to a tiny dataset written as
``assets/demo`` in a temporary folder, so the app opens on it with no arguments, as it
opens on the bundled demo (the worker's shared ``demo_server``, for the tests that only
read it, the large image by its link; the deep link gets a fresh server). Screenshots
go to the test's tmp dir and /tmp/ovearth_shots/ (with ``OVEARTH_SHOTS=1``).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from app_fixtures import write_large_image_dataset
from browser_support import (
    MS,
    Server,
    navigate,
    settle,
    shoot,
)
from PIL import Image
from playwright.sync_api import Page, expect


@pytest.fixture()
def fresh_server(app_dir: Path, tmp_path: Path) -> Iterator[Server]:
    """Another server process, started for the test alone (nothing cached)."""
    with Server(app_dir, tmp_path / "fresh_server.log") as server:
        yield server


@pytest.fixture()
def page(new_page: Callable[..., Page]) -> Page:
    return new_page(1500, 2400)


def _viewer_shows(page: Page, query_id: str) -> None:
    expect(page.locator("h3", has_text=query_id)).to_be_visible(timeout=MS)
    expect(page.locator("img.ov-view").first).to_be_visible(timeout=MS)  # the static view
    assert page.locator('[data-testid="stException"]').count() == 0


def test_overview_cell_link_leads_to_query(demo_server: Server, page: Page,
                                           tmp_path: Path) -> None:
    page.goto(demo_server.url)
    settle(page, "Presence confusion matrix")
    expect(page.get_by_text("Key metrics", exact=True)).to_be_visible()
    assert page.locator('[data-testid="stMetric"]').count() >= 8
    # Issue 49: the first screen is numbers and tables; the charts wait in their tab.
    expect(page.get_by_text("Per category", exact=True)).to_be_visible()
    assert page.locator(".js-plotly-plot").count() == 0
    shoot(page, tmp_path, "overview.png")
    page.get_by_role("tab", name="Charts").click()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 4",
                           timeout=MS)
    shoot(page, tmp_path, "overview_charts.png")
    page.get_by_role("tab", name="Numbers and tables").click()
    page.get_by_role("button", name="Show 1 false positives →").click()
    page.wait_for_url("**/Query_explorer**", timeout=MS)
    settle(page, "Viewer")
    _viewer_shows(page, "ov_000002")
    assert "q=ov_000002" in page.url and "task=vocabulary" in page.url
    shoot(page, tmp_path, "explorer_false_positive.png")
    expect(page.get_by_role("button", name="Next ▶")).to_be_disabled()  # the only FP query
    page.goto(demo_server.url)
    settle(page, "Presence confusion matrix")
    page.get_by_role("button", name="Show 4 failed queries →").click()
    page.wait_for_url("**/Query_explorer**", timeout=MS)
    settle(page, "Viewer")
    _viewer_shows(page, "ov_000002")
    navigate(page, "Next ▶", "Query 2 of 4")
    _viewer_shows(page, "ov_000006")
    assert "q=ov_000006" in page.url


def test_deep_link_in_fresh_server(fresh_server: Server, page: Page, tmp_path: Path) -> None:
    page.goto(f"{fresh_server.url}/Query_explorer?task=vocabulary&q=ov_000006")
    settle(page, "image file not found")
    _viewer_shows(page, "ov_000006")
    expect(page.get_by_text("blank 64 x 48 canvas").first).to_be_visible()
    shoot(page, tmp_path, "explorer_missing_image.png")
    page.goto(f"{fresh_server.url}/Query_explorer?task=vocabulary&q=ov_000003")
    settle(page, "Viewer")
    _viewer_shows(page, "ov_000003")
    assert page.get_by_text("image file not found").count() == 0
    shoot(page, tmp_path, "explorer_tiff.png")
    page.goto(f"{fresh_server.url}/Query_explorer?task=referring&q=ref_000002")
    settle(page, "Viewer")
    _viewer_shows(page, "ref_000002")
    expect(page.get_by_text("Outcome: miss", exact=False).first).to_be_visible()


def test_uploaded_bad_ground_truth_shows_report(demo_server: Server, page: Page,
                                                tmp_path: Path) -> None:
    bad = tmp_path / "uploaded_gt.json"
    bad.write_text('{"annotations": [{"id": "a1", "image_path": "x.png", "width": 0}], '
                   '"tasks": {}}')
    page.goto(demo_server.url)
    settle(page, "Presence confusion matrix")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(bad))
    settle(page, "could not be evaluated")
    expect(page.get_by_text("annotations[0].width", exact=False).first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, tmp_path, "bad_upload_report.png")
    expect(page.get_by_text("uploaded_gt.json, field", exact=False).first).to_be_visible()
    page.get_by_role("button", name="Remove uploaded_gt.json").click()
    settle(page, "Presence confusion matrix")
    assert page.get_by_text("could not be evaluated").count() == 0
    # an upload survives a page switch; "Use the path instead" drops it
    again = tmp_path / "again.json"
    again.write_text(bad.read_text())
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(again))
    settle(page, "could not be evaluated")
    page.get_by_role("link", name="Query explorer").click()
    page.wait_for_url("**/Query_explorer**", timeout=MS)
    settle(page, "again.json, field")
    page.get_by_role("button", name="Use the path instead").first.click()
    settle(page, "Viewer")
    _viewer_shows(page, "ov_000002")


def test_small_object_of_a_large_image_is_drawn_at_full_resolution(
        demo_server: Server, page: Page, tmp_path: Path) -> None:
    """A 12 x 8 car on a 2600-px image of one-pixel stripes: the viewer's picture is drawn
    from the original pixels around it, so it shows the stripes (the downscaled image at
    79 % blurs them to grey). The dataset opens by its link (``data=``, under the data
    roots) on the worker's shared ``demo_server``: the test only reads."""
    big = tmp_path / "big"
    write_large_image_dataset(big)
    page.goto(f"{demo_server.url}/Query_explorer?data={big}&task=referring&q=ref_1")
    settle(page, "Full resolution around the target")
    _viewer_shows(page, "ref_1")
    overlay = page.locator("img.ov-view").first
    page.wait_for_function("() => document.querySelector('img.ov-view')?.naturalWidth > 0",
                           timeout=MS)
    shot = overlay.screenshot()  # the picture as shown, read below
    shoot(page, tmp_path, "explorer_full_resolution.png")
    grey = np.asarray(Image.open(io.BytesIO(shot)).convert("L"), dtype=float)
    # The view opens on about 100 x 100 original pixels: each stripe is a few screen
    # pixels wide and black and white alternate across the picture. The downscaled image
    # alone blurs them to an even grey (a box outline adds a handful of edges only).
    row = grey[grey.shape[0] // 3]
    edges = np.count_nonzero(np.abs(np.diff(row)) > 100)
    assert edges >= 30, edges
