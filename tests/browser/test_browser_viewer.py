"""The viewer in Chromium (issue 14): a 10-px target opens at 40 px or more on screen, in
the default static view (the picture's width on the page over the region its caption
names) and in the interactive one (the plotly axis ranges and lengths on the page, in a
plot at least 700 px tall for a large scene); screenshots of the tiny target and of a
dense scene go to /tmp/ovearth_shots/ (tiny_target*.png, dense_scene*.png; with
``OVEARTH_SHOTS=1``).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
from browser_support import MS, REPO, Server, settle, snap
from PIL import Image
from playwright.sync_api import Page

AXES = """() => { const p = document.querySelector('[data-testid=stMain] .js-plotly-plot');
  const l = p._fullLayout; return {x: l.xaxis.range, y: l.yaxis.range,
  w: l.xaxis._length, h: l.yaxis._length, height: l.height}; }"""


def _tiny_target(root: Path) -> Path:
    """A 10 x 10 px car on a 3000 x 2000 image; the prediction is scattered (one box on the
    car, one far away), so "GT and predictions" would open on most of the image."""
    (root / "images").mkdir(parents=True)
    rgb = np.random.default_rng(0).integers(60, 120, (2000, 3000, 3), dtype=np.uint8)
    rgb[1500:1510, 2200:2210] = (250, 250, 250)
    Image.fromarray(rgb).save(root / "images" / "scene.jpg", quality=90)
    gt = {"annotations": [{"id": "1", "image_path": "images/scene.jpg", "width": 3000,
                           "height": 2000, "category_name": "car", "segmentation": None,
                           "bbox": [[2200, 1500, 10, 10]], "oriented_bbox": []}],
          "tasks": {"referring": [{"query_id": "ref_1", "ann_id": "1", "query": "the car"}]}}
    pred = {"tasks": {"referring": [{"query_id": "ref_1",
                                     "bbox": [[2201, 1501, 2211, 1511], [50, 40, 400, 300]]}]}}
    (root / "predictions").mkdir()
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "predictions" / "model.json").write_text(json.dumps(pred))
    return root


PICTURE = ("() => { const i = document.querySelector('[data-testid=stMain] "
           "img.ov-view'); return i && i.complete && i.naturalWidth > 0 "
           "? {w: i.getBoundingClientRect().width, natural: i.naturalWidth} : null; }")


def _settle(page: Page, text: str, interactive: bool = False) -> None:
    settle(page, text)
    if interactive:
        page.wait_for_function("() => !!document.querySelector("
                               "'[data-testid=stMain] .js-plotly-plot')?._fullLayout",
                               timeout=MS)
    else:
        page.wait_for_function(PICTURE, timeout=MS)


def _toggle_interactive(page: Page) -> None:
    """The "Interactive" switch, in the "View options" popover (closed again after)."""
    page.get_by_role("button", name="View options").click()
    page.get_by_text("Interactive (zoom, pan, hover)", exact=True).click()
    page.keyboard.press("Escape")


def _static_px_per_orig(page: Page) -> float:
    """Screen pixels per original pixel of the static view: its width on the page over the
    width of the region its caption names."""
    picture = page.evaluate(PICTURE)
    caption = page.get_by_text("Showing x ").first.inner_text()
    x0, x1 = (float(v.replace(",", "")) for v in
              re.search(r"Showing x ([\d,]+)–([\d,]+)", caption).groups())
    return picture["w"] / (x1 - x0)


def test_a_10_px_target_opens_at_40_px_and_a_dense_scene_is_readable(
        demo_server: Server, tmp_path: Path, new_page: Callable[..., Page]) -> None:
    """Both datasets open by their links (``data=``, under the data roots) on the worker's
    shared ``demo_server``: the test only reads."""
    tiny = _tiny_target(tmp_path / "data" / "tiny")
    dense = tmp_path / "data" / "bench"
    shutil.copytree(REPO / "assets" / "demo", dense)
    page = new_page(1500, 1400)
    page.goto(f"{demo_server.url}/Query_explorer?data={tiny}&task=referring&q=ref_1")
    _settle(page, "Viewer")
    assert 10 * _static_px_per_orig(page) >= 40
    page.locator('img.ov-view').first.scroll_into_view_if_needed()
    snap(page, "tiny_target_static.png")
    _toggle_interactive(page)
    _settle(page, "Viewer", interactive=True)
    axes = page.evaluate(AXES)
    px_per_orig = min(axes["w"] / abs(axes["x"][1] - axes["x"][0]),
                      axes["h"] / abs(axes["y"][1] - axes["y"][0]))
    assert 10 * px_per_orig >= 40, axes
    assert axes["height"] >= 700
    page.locator('[data-testid="stPlotlyChart"]').first.scroll_into_view_if_needed()
    snap(page, "tiny_target.png")
    page.goto(f"{demo_server.url}/Query_explorer?data={dense}&q=ov_000036")
    _settle(page, "Viewer")  # a new session: the static view again
    page.locator('img.ov-view').first.scroll_into_view_if_needed()
    snap(page, "dense_scene_static.png")
    _toggle_interactive(page)
    _settle(page, "Viewer", interactive=True)
    page.locator('[data-testid="stPlotlyChart"]').first.scroll_into_view_if_needed()
    snap(page, "dense_scene.png")
    assert page.locator('[data-testid="stException"]').count() == 0
