"""Ground sample distance for any CRS (issue 34, item 5): the geodesic length on the WGS84
ellipsoid of one pixel's width and height at the image centre (their mean), not the
pixel's size in the CRS's units. Checked against pyproj's geodesics (``Geod.inv``) of the
pixel's edges transformed by pyproj (the code under test transforms with GDAL), and by hand
for Web Mercator (scale factor 1 / cos(latitude)) and UTM (0.9996 on the central meridian)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyproj
import pytest
import rasterio
from PIL import Image
from rasterio.transform import Affine, from_origin

from ovearth_core.georef import pixel_size_m

W, H = 100, 80
GEOD = pyproj.Geod(ellps="WGS84")


def _tif(path: Path, crs: str, transform: Affine) -> Path:
    with rasterio.open(path, "w", driver="GTiff", width=W, height=H, count=1, dtype="uint8",
                       crs=crs, transform=transform) as dst:
        dst.write(np.zeros((1, H, W), np.uint8))
    return path


def _reference(crs: str, transform: Affine, width: int = W, height: int = H) -> float:
    """The mean geodesic length of the centre pixel's width and height, by pyproj."""
    cx, cy = width / 2, height / 2
    pts = [(cx - 0.5, cy), (cx + 0.5, cy), (cx, cy - 0.5), (cx, cy + 0.5)]
    mx, my = zip(*(transform * p for p in pts), strict=True)
    lon, lat = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True).transform(mx, my)
    _, _, d = GEOD.inv([lon[0], lon[2]], [lat[0], lat[2]], [lon[1], lon[3]], [lat[1], lat[3]])
    return float(np.mean(d))


CASES = {  # name: (crs, transform)
    # rasterio's Web-Mercator COG: 0.597 Mercator m at about 38.3° N is about 0.47 ground m
    "web mercator": ("EPSG:3857", from_origin(-8_590_000.0, 4_620_000.0, 0.5972, 0.5972)),
    "utm 17N off its central meridian": ("EPSG:32617", from_origin(220_000.0, 3_300_000.0,
                                                                  0.1, 0.1)),
    "utm 33N on its central meridian": ("EPSG:32633", from_origin(499_975.0, 4_000_000.0,
                                                                 0.5, 0.5)),
    "geographic degrees": ("EPSG:4326", from_origin(11.0, 48.0, 1e-5, 1e-5)),
    "state plane in US feet": ("EPSG:2263", from_origin(980_000.0, 200_000.0, 1.0, 1.0)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gsd_is_the_geodesic_pixel_size(tmp_path: Path, case: str) -> None:
    crs, transform = CASES[case]
    got = pixel_size_m(_tif(tmp_path / "s.tif", crs, transform))
    assert got is not None
    assert got == pytest.approx(_reference(crs, transform), rel=1e-6)


def test_web_mercator_by_hand(tmp_path: Path) -> None:
    """Web Mercator's scale is 1 / cos(latitude) on the sphere: 0.5972 Mercator m at the
    centre's latitude is 0.5972 cos(lat) ground m (within the ellipsoid's 0.7%)."""
    crs, transform = CASES["web mercator"]
    _, my = transform * (W / 2, H / 2)
    lat = 2 * math.atan(math.exp(my / 6_378_137.0)) - math.pi / 2
    got = pixel_size_m(_tif(tmp_path / "m.tif", crs, transform))
    assert got == pytest.approx(0.5972 * math.cos(lat), rel=0.007)
    assert 0.46 < got < 0.48  # no longer in the 0.5-1 m slice


def test_utm_on_its_central_meridian_by_hand(tmp_path: Path) -> None:
    """UTM's scale factor on the central meridian is 0.9996: a 0.5 m grid pixel is
    0.5 / 0.9996 m on the ground."""
    crs, transform = CASES["utm 33N on its central meridian"]
    got = pixel_size_m(_tif(tmp_path / "u.tif", crs, transform))
    assert got == pytest.approx(0.5 / 0.9996, rel=1e-5)


def test_no_gsd_without_a_position(tmp_path: Path) -> None:
    """A plain image and a LOCAL_CS site grid have no ground position: no GSD (unknown)."""
    Image.new("L", (W, H)).save(tmp_path / "p.png")
    assert pixel_size_m(tmp_path / "p.png") is None
    local = ('LOCAL_CS["site",LOCAL_DATUM["site",0],UNIT["metre",1],AXIS["x",EAST],'
             'AXIS["y",NORTH]]')
    with rasterio.open(tmp_path / "l.tif", "w", driver="GTiff", width=W, height=H, count=1,
                       dtype="uint8", crs=rasterio.crs.CRS.from_wkt(local),
                       transform=from_origin(1_000.0, 2_000.0, 1.0, 1.0)) as dst:
        dst.write(np.zeros((1, H, W), np.uint8))
    assert pixel_size_m(tmp_path / "l.tif") is None
