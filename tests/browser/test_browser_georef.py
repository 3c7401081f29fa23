"""A large georeferenced scene in Chromium (issue 29): a 10,240 x 10,240 GeoTIFF (over the
100M-pixel display cap, so the scene is displayed through its overviews) opened in the
explorer on its 10-px red target. The picture must show the target from the file's own
full-resolution pixels (the red square, and the noise band around it pixel for pixel as
rasterio reads it: an overview would average it away), and its caption the view centre in
EPSG:32633 and WGS84, checked against UTM's inverse written out below (Kruger's series, as
in Karney 2011). The screenshot goes to /tmp/ovearth_shots/georef_scene.png (with
``OVEARTH_SHOTS=1``).

The scene is benchmarks/geotiff.py's (10 s of CPU to write, 170 MB on disk).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import rasterio
from browser_support import MS, Server, settle, snap
from playwright.sync_api import Page
from rasterio.windows import Window

from benchmarks.geotiff import target, write_scene
from ovearth_core.viz.images import MAX_DECODE_PIXELS

SIDE = 10_240
PIXELS_AT = """(points) => { const i = document.querySelector('[data-testid=stMain] img.ov-view');
  const c = document.createElement('canvas'); c.width = i.naturalWidth;
  c.height = i.naturalHeight; const g = c.getContext('2d'); g.drawImage(i, 0, 0);
  return points.map(([x, y]) => Array.from(g.getImageData(x, y, 1, 1).data.slice(0, 3))); }"""
PLOT_READY = ("() => !!document.querySelector('[data-testid=stMain] .js-plotly-plot')"
              "?._fullLayout")
TO_SCREEN = """([x, y]) => {
  const p = document.querySelector('[data-testid=stMain] .js-plotly-plot');
  const l = p._fullLayout, r = p.getBoundingClientRect();
  return [r.left + l.xaxis._offset + l.xaxis.l2p(x), r.top + l.yaxis._offset + l.yaxis.l2p(y)]; }"""
PICTURE = ("() => { const i = document.querySelector('[data-testid=stMain] img.ov-view');"
           " return i && i.complete && i.naturalWidth > 0 ? [i.naturalWidth, i.naturalHeight]"
           " : null; }")


def utm_north_to_lonlat(easting: float, northing: float, zone: int) -> tuple[float, float]:
    """WGS84 ``(lon, lat)`` in degrees of a UTM north point (Kruger's series to n^3)."""
    a, f = 6_378_137.0, 1 / 298.257223563
    n = f / (2 - f)
    big_a = a / (1 + n) * (1 + n ** 2 / 4 + n ** 4 / 64)
    beta = (n / 2 - 2 * n ** 2 / 3 + 37 * n ** 3 / 96, n ** 2 / 48 + n ** 3 / 15,
            17 * n ** 3 / 480)
    delta = (2 * n - 2 * n ** 2 / 3 - 2 * n ** 3, 7 * n ** 2 / 3 - 8 * n ** 3 / 5,
             56 * n ** 3 / 15)
    xi = northing / (0.9996 * big_a)
    eta = (easting - 500_000.0) / (0.9996 * big_a)
    xi_p = xi - sum(b * math.sin(2 * j * xi) * math.cosh(2 * j * eta)
                    for j, b in enumerate(beta, 1))
    eta_p = eta - sum(b * math.cos(2 * j * xi) * math.sinh(2 * j * eta)
                      for j, b in enumerate(beta, 1))
    chi = math.asin(math.sin(xi_p) / math.cosh(eta_p))
    lat = chi + sum(d * math.sin(2 * j * chi) for j, d in enumerate(delta, 1))
    lon = math.radians(zone * 6 - 183) + math.atan(math.sinh(eta_p) / math.cos(xi_p))
    return math.degrees(lon), math.degrees(lat)


def _scene(root: Path) -> Path:
    """The benchmark's GeoTIFF with one query on its red target alone (found)."""
    write_scene(SIDE, root)
    x, y, s = target(SIDE)
    gt = {"annotations": [{"id": "t", "image_path": "scene.tif", "width": SIDE,
                           "height": SIDE, "category_name": "storage tank",
                           "segmentation": None, "bbox": [[x, y, s, s]], "oriented_bbox": []}],
          "tasks": {"open_vocabulary": [{"query_id": "ov_target", "ann_id": "t",
                                         "type": "positive", "phrase": "storage tank"}]}}
    pred = {"tasks": {"open_vocabulary": [{"query_id": "ov_target", "segmentation": None,
                                           "bbox": [{"bbox": [x, y, x + s, y + s],
                                                     "score": 0.9}]}]}}
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "predictions" / "detector.json").write_text(json.dumps(pred))
    return root


def test_a_georeferenced_scene_opens_on_its_real_pixels_with_map_coordinates(
        demo_server: Server, tmp_path: Path, new_page: Callable[..., Page]) -> None:
    """The scene opens by its link (``data=``, under the data roots) on the worker's shared
    ``demo_server``: the test only reads."""
    assert SIDE * SIDE > MAX_DECODE_PIXELS  # the overview path, not a full decode
    scene = _scene(tmp_path / "data" / "geo")
    x, y, s = target(SIDE)
    page = new_page(1500, 1400)
    page.goto(f"{demo_server.url}/Query_explorer?data={scene}&task=vocabulary"
              "&q=ov_target")
    settle(page, "View centre")
    page.wait_for_function(PICTURE, timeout=MS)
    natural_w, natural_h = page.evaluate(PICTURE)
    caption = page.get_by_text("Showing x ").first.inner_text()
    x0, x1, y0, y1 = (float(v.replace(",", "")) for v in re.search(
        r"Showing x ([\d,]+)–([\d,]+), y ([\d,]+)–([\d,]+)", caption).groups())
    assert x0 <= x and x + s <= x1 and y0 <= y and y + s <= y1, caption
    k = natural_w / (x1 - x0)
    # finer than the file's pixels (the picture's sides are rounded)
    assert k >= 1 and abs(natural_h / (y1 - y0) - k) <= 1 / (y1 - y0)
    assert "Full resolution around the target" in caption

    # Pixels at the centres of original pixels: the target's interior, then a
    # 16 x 16 patch of the scene beside it, compared with the file's own pixels.
    inner = [((x + i + 0.5 - x0) * k, (y + j + 0.5 - y0) * k)
             for i in range(2, s - 2) for j in range(2, s - 2)]
    px, py = x + s + 6, y + s + 6
    patch = [((px + i + 0.5 - x0) * k, (py + j + 0.5 - y0) * k)
             for j in range(16) for i in range(16)]
    got = np.array(page.evaluate(PIXELS_AT, [[int(a), int(b)] for a, b in
                                             inner + patch]), dtype=np.float64)
    red, shown = got[:len(inner)], got[len(inner):]
    assert (red[:, 0] >= 200).all() and (red[:, 1:] <= 60).all(), red
    with rasterio.open(scene / "scene.tif") as src:
        truth = src.read(window=Window(px, py, 16, 16)).reshape(3, -1).T
    assert np.abs(shown - truth).mean() < 8, (shown[:4], truth[:4])
    # Band 3 is per-pixel noise (60..89): only full-resolution pixels follow it.
    assert np.corrcoef(shown[:, 2], truth[:, 2])[0, 1] > 0.8

    text = re.search(r"View centre: EPSG:32633 X ([\d,.]+), Y ([\d,.]+) · "
                     r"lon ([\d.-]+)°, lat ([\d.-]+)°", caption)
    assert text is not None, caption
    mx, my, lon, lat = (float(v.replace(",", "")) for v in text.groups())
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2  # the file's transform: 0.5 m pixels
    # the caption rounds the shown bounds to whole pixels: 0.5 m
    assert abs(mx - (400_000 + 0.5 * cx)) <= 0.5
    assert abs(my - (5_000_000 - 0.5 * cy)) <= 0.5
    ref_lon, ref_lat = utm_north_to_lonlat(mx, my, 33)
    assert abs(lon - ref_lon) <= 2e-6 and abs(lat - ref_lat) <= 2e-6
    snap(page.locator("div.ov-card").first, "georef_scene.png")  # the view, its caption

    # The interactive view: hovering the target's top-left corner (an outline
    # vertex) shows that point's map coordinates.
    page.get_by_role("button", name="View options").click()
    choice = page.get_by_text("Interactive (zoom, pan, hover)", exact=True)
    choice.click()
    page.keyboard.press("Escape")
    choice.wait_for(state="hidden", timeout=MS)  # the popover closed: the plot is uncovered
    settle(page, "View centre")
    page.wait_for_function(PLOT_READY, timeout=MS)
    # The pointer reaches the plot only inside the viewport (the card's screenshot used to
    # scroll it there; it is taken only for a person now).
    page.locator("[data-testid=stMain] .js-plotly-plot").first.scroll_into_view_if_needed()
    page.mouse.move(*page.evaluate(TO_SCREEN, [x, y]))
    label = page.locator(".hoverlayer .hovertext").first
    label.wait_for(timeout=MS)
    hover = label.text_content()
    assert "EPSG:32633 X 403,160.00, Y 4,998,262.50" in hover, hover
    ref_lon, ref_lat = utm_north_to_lonlat(403_160.0, 4_998_262.5, 33)
    got = re.search(r"lon ([\d.-]+)°, ?lat ([\d.-]+)°", hover)
    assert got is not None, hover
    assert abs(float(got[1]) - ref_lon) <= 2e-6 and abs(float(got[2]) - ref_lat) <= 2e-6
    snap(page.locator('[data-testid="stPlotlyChart"]').first, "georef_scene_hover.png")
    assert page.locator('[data-testid="stException"]').count() == 0
