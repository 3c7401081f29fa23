"""AppTest: the explorer's caption gives the view centre in the image's CRS and in WGS84
when the image is georeferenced, and nothing of the kind otherwise (issue 29)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import rasterio
from app_fixtures import H, W, app_on, assert_ok, card_html, goto, write_dataset
from rasterio.transform import from_origin

EXPLORER = "pages/Query_explorer.py"
R = 6_378_137.0

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _card(ds, query: str) -> str:
    at = app_on(ds, task="vocabulary", selected={"vocabulary": query})
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    return card_html(at)


def _write_mercator(ds) -> None:
    """images/sixteen.tif rewritten in Web Mercator, 10 m pixels from (1,000 km, 5,000 km)."""
    with rasterio.open(ds.images / "images" / "sixteen.tif", "w", driver="GTiff", width=W,
                       height=H, count=1, dtype="uint16", crs="EPSG:3857",
                       transform=from_origin(1_000_000.0, 5_000_000.0, 10.0, 10.0)) as dst:
        dst.write(np.linspace(1000, 3000, W * H).reshape(1, H, W).astype(np.uint16))


def test_view_centre_in_map_and_lon_lat(tmp_path: Path) -> None:
    ds = write_dataset(tmp_path / "d")
    _write_mercator(ds)
    card = _card(ds, "ov_000003")
    x0, x1, y0, y1 = (float(v.replace(",", "")) for v in re.search(
        r"Showing x ([\d,.]+)–([\d,.]+), y ([\d,.]+)–([\d,.]+)", card).groups())
    text = re.search(r"View centre: EPSG:3857 X ([\d,.]+), Y ([\d,.]+) · lon ([\d.-]+)°, "
                     r"lat ([\d.-]+)°", card)
    assert text is not None, card[-2000:]
    mx, my, lon, lat = (float(v.replace(",", "")) for v in text.groups())
    # the shown region's bounds are rounded to whole pixels in the caption: 1 px = 10 m
    assert mx == pytest.approx(1_000_000 + 10 * (x0 + x1) / 2, abs=10)
    assert my == pytest.approx(5_000_000 - 10 * (y0 + y1) / 2, abs=10)
    assert lon == pytest.approx(math.degrees(mx / R), abs=1e-6)
    assert lat == pytest.approx(math.degrees(2 * math.atan(math.exp(my / R)) - math.pi / 2),
                                abs=1e-6)


def test_no_map_coordinates_for_a_plain_image(tmp_path: Path) -> None:
    ds = write_dataset(tmp_path / "d")
    assert "View centre" not in _card(ds, "ov_000001")  # rgb.png


def _mercator_lonlat(mx: float, my: float) -> tuple[float, float]:
    return (math.degrees(mx / R),
            math.degrees(2 * math.atan(math.exp(my / R)) - math.pi / 2))


def test_each_object_centre_in_map_and_lon_lat(tmp_path: Path) -> None:
    """The box picker lists every box's centre (GT and predicted) in the CRS and WGS84."""
    ds = write_dataset(tmp_path / "d")
    _write_mercator(ds)
    at = app_on(ds, task="vocabulary", selected={"vocabulary": "ov_000003"})
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    picker = at.selectbox(key="_w_objects")
    labels = picker.options
    gt = json.loads(ds.gt.read_text())
    (ann,) = [a for a in gt["annotations"] if a["image_path"] == "images/sixteen.tif"]
    gx, gy, gw, gh = ann["bbox"][0]
    pred = json.loads(ds.model_a.read_text())["tasks"]["open_vocabulary"]
    (boxes,) = [q["bbox"] for q in pred if q["query_id"] == "ov_000003"]
    expected = [(gx + gw / 2, gy + gh / 2)] + [((b["bbox"][0] + b["bbox"][2]) / 2,
                                                (b["bbox"][1] + b["bbox"][3]) / 2)
                                               for b in boxes]
    expected += expected  # then the OBBs (issue 27): the same rectangles, app_fixtures._obb
    assert len(labels) == len(expected), labels
    for label, (cx, cy) in zip(labels, expected, strict=True):
        found = re.search(r"centre EPSG:3857 X ([\d,.]+), Y ([\d,.]+) · lon ([\d.-]+)°, "
                          r"lat ([\d.-]+)°", label)
        assert found is not None, label
        mx, my, lon, lat = (float(v.replace(",", "")) for v in found.groups())
        assert mx == pytest.approx(1_000_000 + 10 * cx, abs=0.005)
        assert my == pytest.approx(5_000_000 - 10 * cy, abs=0.005)
        ref_lon, ref_lat = _mercator_lonlat(mx, my)
        assert lon == pytest.approx(ref_lon, abs=1e-6)
        assert lat == pytest.approx(ref_lat, abs=1e-6)


def test_no_object_centres_in_map_for_a_plain_image(tmp_path: Path) -> None:
    ds = write_dataset(tmp_path / "d")
    at = app_on(ds, task="vocabulary", selected={"vocabulary": "ov_000001"})
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    labels = at.selectbox(key="_w_objects").options
    assert labels and not any("centre" in label for label in labels)


def test_interactive_outlines_hover_with_map_coordinates(tmp_path: Path) -> None:
    """Every outline vertex of the plotly view carries its point in the CRS and WGS84."""
    ds = write_dataset(tmp_path / "d")
    _write_mercator(ds)
    at = app_on(ds, task="vocabulary", selected={"vocabulary": "ov_000003"},
                view_interactive=True)
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    outlines = [t for t in fig["data"] if t.get("mode") == "lines" and t.get("hovertext")]
    assert outlines
    for trace in outlines:
        assert "customdata" in trace and "%{customdata[0]" in trace["hovertemplate"]
        xs, ys, data = (_values(trace[k]) for k in ("x", "y", "customdata"))
        for x, y, (mx, my, lon, lat) in zip(xs, ys, data, strict=True):
            if x is None or x != x:  # the gap between two outlines
                continue
            assert mx == pytest.approx(1_000_000 + 10 * x, abs=1e-6)
            assert my == pytest.approx(5_000_000 - 10 * y, abs=1e-6)
            assert (lon, lat) == pytest.approx(_mercator_lonlat(mx, my), abs=1e-9)


def _values(column):
    """A plotly JSON column: a list, or a typed array ``{"dtype", "bdata", "shape"}``."""
    if isinstance(column, dict):
        import base64

        arr = np.frombuffer(base64.b64decode(column["bdata"]), dtype=column["dtype"])
        return arr.reshape([int(s) for s in str(column.get("shape", len(arr))).split(",")]
                           ).tolist()
    return column
