"""The GeoJSON export refuses positions outside the domain (issue 48, item 2).

A scene in EPSG:4326 whose geotransform puts it over a pole gave latitudes above 90° in a
file called RFC 7946. Now: latitudes beyond ±90° (of a geographic scene, or of the
target) are refused, exit status 2 naming the image, nothing written; longitudes beyond
±180° are normalised by whole turns, box by box (the 0-360° convention lands at the same
place), and a box across the antimeridian is refused (RFC 7946, 3.1.9, asks for it cut in
two; this export does not cut); a projected scene placed where its projection's inverse
does not give the points back is refused. The reference is pyproj: the expected
coordinates, and whether a projected point lies in its projection's domain (its round trip).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyproj
import pytest
from rasterio.transform import from_origin

from ovearth_core.analysis.export import main
from tests.analysis.test_export_geojson_crs import BOX, PRED, _corners, _dataset, _tif

POLE = from_origin(10.0, 90.5, 0.02, 0.02)  # EPSG:4326 rows from 90.5° N down to 89.22°
EAST = from_origin(180.2, 10.0, 0.001, 0.001)  # longitudes 180.2-180.28 (0-360°)
ACROSS = from_origin(179.98, 10.0, 0.001, 0.001)  # longitudes 179.98-180.06


def _run(tmp_path: Path, crs: str, transform, *extra: str) -> tuple[int, str]:
    _tif(tmp_path / "s.tif", crs, transform)
    gt, pred = _dataset(tmp_path, ["s.tif"])
    out = tmp_path / "out.geojson"
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["geojson", "--gt", str(gt), "--predictions", str(pred), "--task",
                     "vocabulary", "--images", str(tmp_path), "--out", str(out), *extra])
    return code, err.getvalue()


def _refused(tmp_path: Path, code: int, err: str, wanted: str) -> None:
    assert code == 2, err
    assert "s.tif" in err and wanted in err and "Traceback" not in err, err
    assert not (tmp_path / "out.geojson").exists()


def test_a_geographic_scene_over_the_pole_is_refused(tmp_path: Path) -> None:
    # pyproj's own verdict: 90.26° N is no latitude.
    lat = POLE * (BOX[0], BOX[1])
    assert not np.isfinite(pyproj.Transformer.from_crs(
        "EPSG:4326", "EPSG:3857", always_xy=True).transform(*lat)[1]) or lat[1] > 90
    code, err = _run(tmp_path, "EPSG:4326", POLE)
    _refused(tmp_path, code, err, "latitudes beyond ±90°")


def test_the_pole_is_refused_in_a_projected_target_too(tmp_path: Path) -> None:
    code, err = _run(tmp_path, "EPSG:4326", POLE, "--crs", "EPSG:3413")
    _refused(tmp_path, code, err, "latitudes beyond ±90°")


def test_longitudes_beyond_180_are_normalised_box_by_box(tmp_path: Path) -> None:
    code, err = _run(tmp_path, "EPSG:4326", EAST)
    assert code == 0, err
    doc = json.loads((tmp_path / "out.geojson").read_text())
    for feature, box in zip(doc["features"], (BOX, PRED), strict=True):
        ring = np.array(feature["geometry"]["coordinates"][0])
        lon, lat = zip(*(EAST * (float(x), float(y)) for x, y in _corners(box)), strict=True)
        # pyproj's normalisation of the same position (a geographic round trip through a
        # projected CRS lands in [-180, 180]).
        to = pyproj.Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True)
        want_lon, want_lat = to.transform(*to.transform(lon, lat), direction="INVERSE")
        assert np.all(np.abs(ring[:, 0]) <= 180)
        assert sorted(map(tuple, np.round(ring[:-1], 9))) == sorted(
            zip(np.round(want_lon, 9), np.round(want_lat, 9), strict=True))


def test_a_box_across_the_antimeridian_is_refused(tmp_path: Path) -> None:
    code, err = _run(tmp_path, "EPSG:4326", ACROSS)
    _refused(tmp_path, code, err, "crossing the antimeridian")


@pytest.mark.parametrize(("crs", "origin", "inside"), [
    ("EPSG:32633", (500_000.0, 5_000_000.0), True),     # central Europe in zone 33
    ("EPSG:32633", (-4_000_000.0, 5_000_000.0), True),  # far west, still a position
    ("EPSG:32633", (30_000_000.0, 1_000_000.0), False),  # nowhere (PROJ: inf)
    ("EPSG:4087", (0.0, 12_000_000.0), False),  # equidistant cylindrical: latitude 107.8
    ("EPSG:4087", (25_000_000.0, 0.0), False),  # beyond the world's width: wrapped
    ("EPSG:3857", (25_000_000.0, 0.0), False),  # the same in Web Mercator
])
def test_a_projected_scene_is_placed_only_inside_its_domain(tmp_path: Path, crs: str,
                                                            origin: tuple,
                                                            inside: bool) -> None:
    transform = from_origin(*origin, 10.0, 10.0)
    corners = [transform * (float(x), float(y)) for x, y in _corners(BOX)]
    mx, my = map(np.array, zip(*corners, strict=True))
    to = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
    with np.errstate(invalid="ignore"):
        lon, lat = to.transform(mx, my)
        bx, by = to.transform(lon, lat, direction="INVERSE")
        back = np.hypot(bx - mx, by - my)
    # pyproj's verdict: a position, a latitude, and the projection gives the point back.
    valid = bool(np.all(np.isfinite(lon)) and np.all(np.abs(lat) <= 90)
                 and np.all(back <= 0.1))
    assert valid is inside
    code, err = _run(tmp_path, crs, transform)
    if valid:
        assert code == 0, err
        ring = np.array(json.loads((tmp_path / "out.geojson").read_text())
                        ["features"][0]["geometry"]["coordinates"][0])
        got = sorted(map(tuple, np.round(ring[:-1], 7)))
        assert got == sorted(zip(np.round(lon, 7), np.round(lat, 7), strict=True))
    else:
        _refused(tmp_path, code, err, "geotransform")
