"""The Audit page in Chromium (issue 36), on the hand-built scene of tests/audit_scene.py as
the app's demo: the suspects with their pictures, a suspect confirmed (in the review
sidecar), the cleaned ground truth written and the submissions re-ranked (screenshots in
/tmp/ovearth_shots)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from audit_scene import write_audit_dataset
from browser_support import IDLE, MS, Server, copy_app, settle, shoot
from playwright.sync_api import Page, expect

from ovearth_core import review
from ovearth_core.audit import fix


@pytest.mark.browser
def test_confirm_write_and_rerank(tmp_path: Path, new_page: Callable[..., Page]) -> None:
    app_dir = copy_app(tmp_path / "app")
    gt, _ = write_audit_dataset(app_dir / "assets" / "demo")
    # a server of its own: the test writes the review sidecar and the cleaned ground truth
    with Server(app_dir, tmp_path / "server.log") as server:
        page = new_page(height=2400)
        page.goto(f"{server.url}/Audit")
        settle(page, "suspects (")
        expect(page.get_by_text("spurious label", exact=False).first).to_be_visible(timeout=MS)
        images = page.locator('[data-testid="stImage"] img')
        expect(images.first).to_be_visible(timeout=MS)
        assert images.count() >= 5
        shoot(page, tmp_path, "audit_queue.png")
        page.get_by_role("button", name="Confirm").first.click()
        page.wait_for_selector(IDLE, timeout=MS)
        expect(page.get_by_text("confirmed (review sidecar)")).to_be_visible(timeout=MS)
        tags = review.load_state(review.sidecar_for(gt)).query_tags("open_vocabulary")
        assert tags.get("q3_plane") and all(t.startswith(fix.CONFIRMED)
                                            for t in tags["q3_plane"])
        page.get_by_role("button", name="Write the cleaned ground truth (1 fix) and "
                                        "re-rank").click()
        settle(page, "Wrote")
        expect(page.get_by_text("Ranked by", exact=False)).to_be_visible(timeout=MS)
        expect(page.locator('[data-testid="stDataFrame"]').last).to_be_visible(timeout=MS)
        cleaned = json.loads(fix.cleaned_path(gt).read_text())
        ann = next(a for a in cleaned["annotations"] if a["id"] == "3_plane")
        assert [90, 160, 30, 30] not in ann["bbox"]  # the spurious box is gone
        page.locator('[data-testid="stDataFrame"]').last.scroll_into_view_if_needed()
        shoot(page, tmp_path, "audit_reranked.png")
        assert page.locator('[data-testid="stException"]').count() == 0
