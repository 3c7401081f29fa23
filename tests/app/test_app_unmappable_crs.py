"""AppTest: a GeoTIFF whose CRS cannot be mapped to WGS84 (a LOCAL_CS; corners outside the
projection's domain) shows a clear message in the explorer, never an exception box, and its
map coordinates where they exist (issue 35, item 9)."""

from __future__ import annotations

import numpy as np
import pytest
import rasterio
from app_fixtures import H, W, app_on, assert_ok, card_html, goto, write_dataset
from rasterio.crs import CRS
from rasterio.transform import from_origin

EXPLORER = "pages/Query_explorer.py"
LOCAL = ('LOCAL_CS["site grid",LOCAL_DATUM["site",0],UNIT["metre",1],AXIS["x",EAST],'
         'AXIS["y",NORTH]]')
pytestmark = pytest.mark.usefixtures("fresh_caches")


def _write(ds, crs: CRS, origin: tuple[float, float]) -> None:
    with rasterio.open(ds.images / "images" / "sixteen.tif", "w", driver="GTiff", width=W,
                       height=H, count=1, dtype="uint8", crs=crs,
                       transform=from_origin(*origin, 10.0, 10.0)) as dst:
        dst.write(np.full((1, H, W), 128, np.uint8))


CASES = {"local": (CRS.from_wkt(LOCAL), (1_000.0, 2_000.0)),
         # UTM 33N 50,000 km east of its false easting: outside the projection's domain
         "outside": (CRS.from_epsg(32633), (50_000_000.0, 4_000_000.0))}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("interactive", [False, True])
def test_unmappable_crs_gives_a_message(tmp_path, case: str, interactive: bool) -> None:
    ds = write_dataset(tmp_path / "d")
    crs, origin = CASES[case]
    _write(ds, crs, origin)
    at = app_on(ds, task="vocabulary", selected={"vocabulary": "ov_000003"},
                view_interactive=interactive)
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    text = card_html(at) if not interactive else " ".join(
        str(m.value) for m in (*at.markdown, *at.caption, *at.info, *at.warning))
    assert "no WGS84 position" in text, text[-3000:]
    # the map coordinates are still given: X of pixel 0 is the origin's
    labels = at.selectbox(key="_w_objects").options
    assert any(" X " in label for label in labels), labels


def test_a_scene_of_another_size_maps_the_annotation_pixels(tmp_path) -> None:
    """A scene twice the annotation's size is drawn stretched to it: annotation pixel (x, y)
    is scene pixel (2x, 2y), so a box centre at x lies at X = origin + 10 m * 2x."""
    import re

    ds = write_dataset(tmp_path / "d")
    with rasterio.open(ds.images / "images" / "sixteen.tif", "w", driver="GTiff",
                       width=2 * W, height=2 * H, count=1, dtype="uint8", crs="EPSG:32633",
                       transform=from_origin(500_000.0, 4_000_000.0, 10.0, 10.0)) as dst:
        dst.write(np.full((1, 2 * H, 2 * W), 128, np.uint8))
    at = app_on(ds, task="vocabulary", selected={"vocabulary": "ov_000003"})
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    card = card_html(at)
    x0, x1, y0, y1 = (float(v.replace(",", "")) for v in re.search(
        r"Showing x ([\d,.]+)–([\d,.]+), y ([\d,.]+)–([\d,.]+)", card).groups())
    mx, my = (float(v.replace(",", "")) for v in re.search(
        r"View centre: EPSG:32633 X ([\d,.]+), Y ([\d,.]+)", card).groups())
    assert mx == pytest.approx(500_000 + 20 * (x0 + x1) / 2, abs=20)
    assert my == pytest.approx(4_000_000 - 20 * (y0 + y1) / 2, abs=20)


PAGES = ["app.py", "pages/Gallery.py", "pages/Compare.py", "pages/Confusion.py",
         "pages/Slices.py", "pages/Annotation.py", EXPLORER]


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_page_on_an_unmappable_scene(tmp_path, case: str) -> None:
    """Every page (the Slices page by GSD, which reads the scene's ground distance) opens on
    a dataset whose scene cannot be mapped, without an exception box."""
    ds = write_dataset(tmp_path / "d")
    crs, origin = CASES[case]
    _write(ds, crs, origin)
    for page in PAGES:
        at = app_on(ds, task="vocabulary", selected={"vocabulary": "ov_000003"},
                    slice_attr="gsd")
        goto(at, page)
        at.run()
        assert_ok(at)
