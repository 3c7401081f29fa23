"""Issue 50 in Chromium: the explorer opened by a link on the demo's inflated case, with
NMS-AP on (``hardneg=1&nmsap=1``). ``strong_localiser`` answers the negative query
``ov_000004`` ("chimney", on the storage-tank image) with the tank's box, which the
positive query ``ov_000001`` ("fuel tank") finds with a higher score: the viewer draws the
chimney's box grey and dotted, its legend says "suppressed by NMS-AP", and the list under
the view names the box that won, "fuel tank", and the IoU (computed here by the core)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from browser_support import MS, Server, settle, shoot
from PIL import Image
from playwright.sync_api import Page, expect

from ovearth_core.analysis.nms_ap import suppress
from ovearth_core.io import load_samples
from ovearth_core.viz.overlay import SUPPRESSED

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"


def _grey_pixels(png: bytes) -> int:
    """Pixels of the suppressed boxes' grey (±12 a channel) in a screenshot."""
    import io

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    want = np.array([int(SUPPRESSED[k:k + 2], 16) for k in (1, 3, 5)])
    return int((np.abs(rgb - want) <= 12).all(axis=-1).sum())


def test_the_explorer_shows_the_chimneys_box_suppressed_by_the_fuel_tank(
        harbour_server: Server, new_page: Callable[..., Page], tmp_path: Path) -> None:
    samples = load_samples(DEMO / "ground_truth.json",
                           DEMO / "predictions" / "strong_localiser.json", "vocabulary",
                           modalities="auto")
    (gone,) = [r for r in suppress(samples, "bbox").removed if r.query_id == "ov_000004"]
    assert gone.winner_phrase == "fuel tank"
    page = new_page(1500, 1800)
    page.goto(f"{harbour_server.url}/Query_explorer?sub=strong_localiser&q=ov_000004"
              "&hardneg=1&nmsap=1")
    settle(page, "suppressed by NMS-AP")
    main = page.locator('[data-testid="stMain"]')
    listed = main.get_by_text("lost to", exact=False).first
    expect(listed).to_contain_text("fuel tank", timeout=MS)
    expect(listed).to_contain_text("ov_000001", timeout=MS)
    expect(listed).to_contain_text(f"IoU {gone.iou:.2f}", timeout=MS)
    card = page.locator(".ov-viewer")
    expect(card).to_contain_text("grey dotted: prediction suppressed by NMS-AP", timeout=MS)
    view = card.locator("img.ov-view")
    page.wait_for_function("() => { const i = document.querySelector('.ov-viewer "
                           "img.ov-view'); return i && i.complete && i.naturalWidth > 0 }",
                           timeout=MS)
    listed.scroll_into_view_if_needed()
    shoot(page, tmp_path, "explorer_nms_ap.png")
    grey_with = _grey_pixels(view.screenshot())
    assert page.locator('[data-testid="stException"]').count() == 0
    # Without NMS-AP the same view has no grey box and no list.
    page = new_page(1500, 1800)
    page.goto(f"{harbour_server.url}/Query_explorer?sub=strong_localiser&q=ov_000004"
              "&hardneg=1")
    settle(page, "Same object in other tasks")
    page.wait_for_function("() => { const i = document.querySelector('.ov-viewer "
                           "img.ov-view'); return i && i.complete && i.naturalWidth > 0 }",
                           timeout=MS)
    assert page.locator('[data-testid="stMain"]').get_by_text("lost to").count() == 0
    grey_without = _grey_pixels(page.locator(".ov-viewer img.ov-view").screenshot())
    assert grey_with > grey_without + 100, (grey_with, grey_without)  # the box drawn grey
