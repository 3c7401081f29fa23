"""Issue 25 in headless Chromium: the Overview and the report show COCO's and DOTA's
per-category mAP beside the pooled AP, each labelled with what it averages.

The app runs (``streamlit run app.py``, the worker's shared ``demo_server``) on the tiny
dataset of ``app_fixtures`` written as ``assets/demo``; the report is the report command's
on the same files. Screenshots go to the test's tmp dir and /tmp/ovearth_shots/
(``overview_map.png``, ``report_map.png``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import MS, Server, settle, shoot, snap
from playwright.sync_api import Page, expect

from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.io import load_samples
from ovearth_core.report import main as report_main


@pytest.fixture()
def page(new_page: Callable[..., Page]) -> Page:
    return new_page(1500, 1800)


def _expected(app_dir: Path) -> dict:
    demo = app_dir / "assets" / "demo"
    samples = load_samples(demo / "ground_truth.json", demo / "predictions" / "model_a.json",
                           "vocabulary", modalities="auto")
    return average_precision_report(samples, 0.5, samples.modalities)


def _metric(page: Page, label: str) -> str:
    card = page.locator('[data-testid="stMetric"]', has_text=label).first
    return card.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_overview_shows_per_category_map_beside_the_pooled_ap(demo_server: Server, page: Page,
                                                              tmp_path: Path) -> None:
    page.goto(demo_server.url)
    settle(page, "Presence confusion matrix")
    page.get_by_text("Show the score sweep, average precision").click()
    settle(page, "each category's AP, then the mean")
    report = _expected(demo_server.app_dir)
    coco = report["bbox"]["coco"]
    expect(page.get_by_text("HBB mAP@[.5:.95]", exact=True)).to_be_visible(timeout=MS)
    assert _metric(page, "HBB mAP@[.5:.95]") == f"{coco['map@[0.5:0.95]']:.3f}"
    assert _metric(page, "HBB DOTA mAP (VOC07)") == (
        f"{report['bbox']['voc_devkit']['map_11_point']:.3f}")
    assert _metric(page, "HBB AP@[.5:.95]") == f"{coco['ap@[0.5:0.95]']:.3f}"
    n = coco["num_categories"]
    expect(page.get_by_text(f"mean over {n} categories", exact=False).first).to_be_visible()
    expect(page.get_by_text("pooled over all queries, class-agnostic", exact=False).first
           ).to_be_visible()
    page.get_by_text("Average precision", exact=True).first.scroll_into_view_if_needed()
    shoot(page, tmp_path, "overview_map.png")
    assert page.locator('[data-testid="stException"]').count() == 0


def test_report_shows_per_category_map_in_chromium(app_dir: Path, page: Page,
                                                   tmp_path: Path) -> None:
    demo = app_dir / "assets" / "demo"
    out = tmp_path / "report.html"
    assert report_main(["--gt", str(demo / "ground_truth.json"), "--predictions",
                        str(demo / "predictions" / "model_a.json"), "--task", "vocabulary",
                        "--modalities", "auto", "--worst", "2", "--no-cache",
                        "--out", str(out)]) == 0
    report = _expected(app_dir)
    page.goto(out.as_uri())
    heading = page.locator("#ap-open_vocabulary")
    expect(heading).to_be_visible(timeout=MS)
    table = heading.locator("xpath=following-sibling::table[1]")
    cell = table.locator('td[data-modality="bbox"][data-ap="coco.map@[0.5:0.95]"]')
    assert cell.inner_text() == f"{report['bbox']['coco']['map@[0.5:0.95]']:.4f}"
    dota = table.locator('td[data-modality="bbox"][data-ap="voc_devkit.map_11_point"]')
    assert dota.inner_text() == f"{report['bbox']['voc_devkit']['map_11_point']:.4f}"
    n = report["bbox"]["coco"]["num_categories"]
    expect(page.get_by_text(f"mean over {n} categories").first).to_be_visible()
    heading.scroll_into_view_if_needed()
    snap(page, "report_map.png")
