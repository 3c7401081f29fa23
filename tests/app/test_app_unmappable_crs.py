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
