"""Review in Chromium (issue 19): a tag set in one browser context is in the sidecar and is
seen by a second, fresh context on the same server; the Slices page renders its table and
chart (screenshots in /tmp/ovearth_shots)."""

from __future__ import annotations

import shutil
from pathlib import Path

from app_fixtures import write_dataset
from browser_support import CHROMIUM, CHROMIUM_ARGS, IDLE, MS, Server, copy_app
from playwright.sync_api import Page, expect, sync_playwright

from ovearth_core import review

SHOTS = Path("/tmp/ovearth_shots")


def _settle(page: Page, text: str) -> None:
    expect(page.get_by_text(text, exact=False).first).to_be_visible(timeout=MS)
    page.wait_for_selector(IDLE, timeout=MS)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=MS)


def _shoot(page: Page, tmp_path: Path, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(500)
    page.screenshot(path=str(tmp_path / name), full_page=True)
    shutil.copy(tmp_path / name, SHOTS / name)


def _tags_box(page: Page):
    return page.locator('[data-testid="stMultiSelect"]').filter(has_text="Tags of this query")


def test_a_tag_set_in_one_context_is_seen_in_another(tmp_path: Path) -> None:
    app_dir = copy_app(tmp_path / "app")
    ds = write_dataset(app_dir / "assets" / "demo")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        server = Server(app_dir, tmp_path / "server.log")
        try:
            one = browser.new_context(viewport={"width": 1500, "height": 2600}).new_page()
            one.goto(f"{server.url}/Query_explorer")
            _settle(one, "Review")
            _tags_box(one).locator("input").click()
            one.get_by_role("option", name="gt_error").click()
            one.keyboard.press("Escape")
            one.wait_for_selector(IDLE, timeout=MS)
            expect(_tags_box(one)).to_contain_text("gt_error", timeout=MS)
            state = review.load_state(review.sidecar_for(ds.gt))
            assert [t.query_id for t in state.tags] == ["ov_000002"]
            _shoot(one, tmp_path, "review_tagged.png")
            two = browser.new_context(viewport={"width": 1500, "height": 2600}).new_page()
            two.goto(f"{server.url}/Query_explorer?q=ov_000002")
            _settle(two, "Review")
            expect(_tags_box(two)).to_contain_text("gt_error", timeout=MS)
            two.goto(f"{server.url}/Slices")
            _settle(two, "slices of")
            expect(two.locator(".js-plotly-plot").first).to_be_visible(timeout=MS)
            _shoot(two, tmp_path, "slices.png")
            assert two.locator('[data-testid="stException"]').count() == 0
        finally:
            server.stop()
            browser.close()
