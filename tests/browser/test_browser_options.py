"""Issue 39 in Chromium: the average precision's options travel in a Compare link.

A user opens Compare, sets the sidebar's COCO detection cap to 10 and turns hard negatives
on, and copies the address bar (on the worker's shared ``demo_server``: the sender only
reads). A fresh server of the same app, which no session has used, is opened on that
address in a fresh browser context: the AP table shows the numbers the sender saw, equal
to ``average_precision_report`` at those options (computed here), not at COCO's 100
without hard negatives (a fresh server's defaults, which give other numbers here).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import IDLE, MS, Server, settle, shoot
from playwright.sync_api import Page

from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.io import load_samples

ALL = ("segmentation", "bbox", "oriented_bbox")


def _ap_rows(page: Page) -> dict[tuple[str, str], tuple[str, str]]:
    """(modality, metric) -> the A and B cells of the AP table, as shown (a Markdown table
    since issue 49: its cells are the HTML table's)."""
    cells = [c.inner_text().strip().replace("\u2060", "") for c in page.locator(
        '[data-testid="stMain"] [data-testid="stMarkdownContainer"] table td').all()]
    out = {}
    for i in range(len(cells) - 4):
        if cells[i] in ("HBB", "OBB") and cells[i + 2].startswith(("pooled", "mean over")):
            out[(cells[i], cells[i + 1])] = (cells[i + 3], cells[i + 4])
    return out


def test_a_compare_link_at_cap_10_with_hard_negatives_opens_on_a_fresh_server(
        demo_server: Server, tmp_path: Path, new_page: Callable[..., Page]) -> None:
    demo = demo_server.app_dir / "assets" / "demo"
    gt, subs = demo / "ground_truth.json", [demo / "predictions" / f"model_{x}.json"
                                            for x in "ab"]
    reports = {hard_cap: [average_precision_report(s, 0.5, s.modalities, *hard_cap) for s in (
        load_samples(gt, p, "vocabulary", modalities=ALL) for p in subs)]
        for hard_cap in ((True, 10), (False, 100))}
    want = reports[(True, 10)]
    # Premise: a fresh server's defaults would show other numbers.
    default = reports[(False, 100)]
    assert abs(want[0]["bbox"]["ap_every_point"] - default[0]["bbox"]["ap_every_point"]) > 1e-3
    page = new_page(1500, 2400)
    page.goto(f"{demo_server.url}/Compare?b=model_b")
    settle(page, "Average precision (every box)")
    cap = page.get_by_role("spinbutton", name="COCO detection cap")
    cap.fill("10")
    cap.press("Enter")
    settle(page, "at most 10 boxes per query (COCO), hard negatives off")
    page.get_by_text("Hard negatives: boxes on negative queries").click()
    settle(page, "at most 10 boxes per query (COCO), hard negatives on")
    link = page.url
    assert "cap=10" in link and "hardneg=1" in link, link
    with Server(demo_server.app_dir, tmp_path / "fresh.log") as server:
        page = new_page(1500, 2400)
        page.goto(link.replace(link.split("/Compare")[0], server.url))
        settle(page, "Average precision (every box)")
        page.wait_for_selector(IDLE, timeout=MS)
        shoot(page, tmp_path, "compare_link_cap10.png")
        assert page.get_by_text("at most 10 boxes per query (COCO), hard negatives on"
                                ).first.is_visible()
        rows = _ap_rows(page)
        for key, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
            a, b = rows[(label, "AP")]
            # As shown (rounded to at most 4 decimals).
            assert float(a) == pytest.approx(want[0][key]["ap_every_point"], abs=5e-5)
            assert float(b) == pytest.approx(want[1][key]["ap_every_point"], abs=5e-5)
