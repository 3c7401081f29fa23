"""The comparison report in headless Chromium: charts render offline, images decode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import MS, snap
from playwright.sync_api import Page
from report_fixtures import build_dataset

from ovearth_core.report import main


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    data = build_dataset(root / "data", missing_images=(3,))
    out = root / "report.html"
    assert main(["--gt", str(data.gt), "--predictions", str(data.pred_a), "--compare",
                 str(data.pred_b), "--modalities", "segmentation,bbox,oriented_bbox",
                 "--out", str(out), "--resamples", "1000", "--worst", "6"]) == 0
    return out


def test_report_renders_charts_offline_in_chromium(report: Path,
                                                  new_page: Callable[..., Page]) -> None:
    requests: list[str] = []
    errors: list[str] = []
    page = new_page(1280, 1000)
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(report.as_uri())
    page.wait_for_function(
        "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3",
        timeout=MS)
    plots = page.locator(".js-plotly-plot").count()
    svgs = page.locator(".js-plotly-plot .main-svg").count()
    bars = page.locator(".js-plotly-plot .barlayer .point").count()
    # Every plot fits the grid cell it sits in (none drawn at a stale width).
    overflow = page.evaluate(
        "Array.from(document.querySelectorAll('.figs > div')).map(cell => {"
        " const svg = cell.querySelector('.main-svg');"
        " return svg ? svg.getBoundingClientRect().width"
        " - cell.getBoundingClientRect().width : 0; })")
    images = page.evaluate(
        "Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
    shot = page.screenshot(full_page=False)  # the first screen, read below
    snap(page, "report.png")
    page.locator("#open_vocabulary ~ .grid .card").first.scroll_into_view_if_needed()
    snap(page, "report_gallery.png")
    assert svgs >= 3
    assert overflow and max(overflow) <= 1.0
    # Every figure the HTML declares was drawn by plotly.js (no figure failed).
    assert plots == report.read_text(encoding="utf-8").count("Plotly.newPlot")
    assert bars > 0
    assert images and all(done and width > 0 for done, width in images)
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
    assert errors == []
    assert len(shot) > 10_000
