"""A link with a picked box, opened in Chromium on a fresh server, shows that box's view
(issue 27 item 1), and the box picker lists the OBBs with their match status (defect 2).
Screenshots: /tmp/ovearth_shots/link_picked_box.png, box_picker_obbs.png."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

from app_fixtures import diamond as _diamond
from app_fixtures import rect as _rect
from app_fixtures import write_ship_scene as _write
from browser_support import MS, Server, copy_app, settle, shoot
from playwright.sync_api import Page, expect


def test_a_link_with_a_picked_obb_opens_on_it(tmp_path: Path,
                                              new_page: Callable[..., Page]) -> None:
    app_dir = copy_app(tmp_path / "app")
    ds = _write(tmp_path / "data" / "bench", [[100, 100, 40, 20]], [_rect(100, 100, 140, 120)],
                [[100, 100, 140, 120]], [_diamond(900, 700, 40)])
    link = urlencode({"data": str(ds.root), "sub": "model", "task": "referring",
                      "mods": "bbox,oriented_bbox", "q": "ref_1", "box": "4",
                      "layers": "ghbb,gobb,pobb"})
    with Server(app_dir, tmp_path / "server.log", ["--data-root", str(tmp_path)]) as server:
        page = new_page(1500, 2600)
        page.goto(f"{server.url}/Query_explorer?{link}")
        settle(page, "Showing x")
        shown = page.get_by_text("Showing x", exact=False).first.inner_text()
        x0, x1, y0, y1 = (float(v.replace(",", "")) for v in re.search(
            r"Showing x ([\d,]+)–([\d,]+), y ([\d,]+)–([\d,]+)", shown).groups())
        assert x0 <= 860 and x1 >= 940 and y0 <= 660 and y1 >= 740 and x0 > 140, shown
        shoot(page, tmp_path, "link_picked_box.png")
        picker = page.get_by_role("combobox", name=re.compile("Zoom to one of"))
        picker.scroll_into_view_if_needed()
        box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Zoom to one of")
        assert "pred OBB 1 · false positive" in box.inner_html(timeout=MS // 10), \
            box.inner_html()
        expect(page.get_by_role("button", name="predicted HBB")).to_be_visible()
        expect(page.get_by_role("button", name="GT mask")).to_have_count(0)  # box-only
        picker.click()
        expect(page.get_by_role("option", name=re.compile("GT OBB 1 · missed"))
               ).to_be_visible(timeout=MS)
        shoot(page, tmp_path, "box_picker_obbs.png")
