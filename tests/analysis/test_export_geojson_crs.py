"""The GeoJSON export across CRSs (issue 34, item 12) and its refusals of geometry that
cannot be right (issue 35, items 2 and 3). Read back with pyogrio; every coordinate checked
against pyproj's transformation of rasterio's affine map of the box corners (the export
transforms with GDAL, so the reference is independent of the code under test)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyogrio.raw
import pyproj
import pytest
import rasterio
import shapely
from PIL import Image
from rasterio.transform import Affine, from_origin

from ovearth_core.analysis.export import main

W, H = 80, 64
BOX = (10.0, 12.0, 30.0, 40.0)  # x0, y0, x1, y1 of each image's GT box
PRED = (50.0, 20.0, 70.0, 30.0)  # each image's predicted box (an FP)
UTM32 = from_origin(690_000.0, 5_340_000.0, 0.5, 0.5)  # near Munich, zone 32
UTM33 = from_origin(300_000.0, 5_340_000.0, 0.5, 0.5)  # near Vienna... west of it, zone 33


def _tif(path: Path, crs: str | None, transform: Affine | None, w: int = W, h: int = H) -> None:
    profile = {"driver": "GTiff", "width": w, "height": h, "count": 1, "dtype": "uint8"}
    if crs is not None:
        profile.update(crs=crs, transform=transform)
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.zeros((1, h, w), np.uint8))


def _dataset(root: Path, images: list[str]) -> tuple[Path, Path]:
    """One annotation (W x H) and one positive query per image: GT box BOX, prediction PRED."""
    anns, queries, preds = [], [], []
    for k, image in enumerate(images):
        x0, y0, x1, y1 = BOX
        anns.append({"id": f"a{k}", "image_path": image, "width": W, "height": H,
                     "category_name": "car", "segmentation": None,
                     "bbox": [[x0, y0, x1 - x0, y1 - y0]]})
        queries.append({"query_id": f"q{k}", "ann_id": f"a{k}", "type": "positive",
                        "phrase": "car"})
        preds.append({"query_id": f"q{k}", "bbox": [{"bbox": list(PRED), "score": 0.5}]})
    (root / "gt.json").write_text(json.dumps({"annotations": anns,
                                              "tasks": {"open_vocabulary": queries}}))
    (root / "pred.json").write_text(json.dumps({"tasks": {"open_vocabulary": preds}}))
    return root / "gt.json", root / "pred.json"


def _export(root: Path, *extra: str) -> int:
    gt, pred = root / "gt.json", root / "pred.json"
    return main(["geojson", "--gt", str(gt), "--predictions", str(pred), "--task",
                 "vocabulary", "--images", str(root), "--out", str(root / "out.geojson"),
                 *extra])


def _read(path: Path) -> tuple[dict, list[dict], list[shapely.Geometry]]:
    meta, _, wkb, fields = pyogrio.raw.read(path)
    names = list(meta["fields"])
    rows = [{n: fields[k][i] for k, n in enumerate(names)} for i in range(len(wkb))]
    return meta, rows, [shapely.from_wkb(g) for g in wkb]


def _corners(box: tuple[float, float, float, float]) -> np.ndarray:
    x0, y0, x1, y1 = box
    return np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], dtype=np.float64)


def _expected(affine: Affine, crs: str, to: str, box, scale: float = 1.0) -> np.ndarray:
    """The box's corners mapped by ``affine`` (pixels scaled by ``scale`` first) and
    transformed by pyproj from ``crs`` to ``to`` (x = longitude for EPSG:4326)."""
    px = _corners(box) * scale
    mx, my = zip(*(affine * (float(x), float(y)) for x, y in px), strict=True)
    x, y = pyproj.Transformer.from_crs(crs, to, always_xy=True).transform(mx, my)
    return np.column_stack([x, y])


def _assert_ring(geom: shapely.Geometry, expected: np.ndarray, atol: float) -> None:
    ring = shapely.get_coordinates(geom.exterior)
    assert np.allclose(ring[0], ring[-1])
    got = ring[:-1]
    assert len(got) == 4
    # the same four corners, in some rotation and direction (RFC 7946: counterclockwise)
    matched = [min(range(4), key=lambda j: np.hypot(*(got[j] - p))) for p in expected]
    assert sorted(matched) == [0, 1, 2, 3], (got, expected)
    np.testing.assert_allclose(got[matched], expected, atol=atol, rtol=0)


def _by_query(rows: list[dict], geoms: list[shapely.Geometry]) -> dict:
    return {(r["image_path"], r["kind"]): g for r, g in zip(rows, geoms, strict=True)}


def test_two_utm_zones_and_a_plain_image_give_rfc7946(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Scenes in UTM zones 32N and 33N and a PNG: WGS84 lon / lat (RFC 7946) for both scenes,
    the PNG left out with a notice naming it; only "type" and "features" at the top."""
    _tif(tmp_path / "z32.tif", "EPSG:32632", UTM32)
    _tif(tmp_path / "z33.tif", "EPSG:32633", UTM33)
    Image.new("L", (W, H)).save(tmp_path / "plain.png")
    _dataset(tmp_path, ["z32.tif", "z33.tif", "plain.png"])
    assert _export(tmp_path) == 0
    err = capsys.readouterr().err
    assert "plain.png" in err and "left out" in err, err
    doc = json.loads((tmp_path / "out.geojson").read_text())
    assert set(doc) == {"type", "features"}, set(doc)
    meta, rows, geoms = _read(tmp_path / "out.geojson")
    assert meta["crs"] in ("EPSG:4326", "OGC:CRS84")
    got = _by_query(rows, geoms)
    assert {p for p, _ in got} == {"z32.tif", "z33.tif"}
    for image, crs, affine in (("z32.tif", "EPSG:32632", UTM32), ("z33.tif", "EPSG:32633", UTM33)):
        for kind, box in (("gt", BOX), ("prediction", PRED)):
            geom = got[(image, kind)]
            assert shapely.is_ccw(geom.exterior), "RFC 7946: exteriors counterclockwise"
            _assert_ring(geom, _expected(affine, crs, "EPSG:4326", box), atol=1e-9)
    for geom in geoms:  # lon / lat, not metres
        lon, lat = shapely.get_coordinates(geom).T
        assert ((5 < lon) & (lon < 20)).all() and ((45 < lat) & (lat < 50)).all()


def test_one_named_crs(tmp_path: Path) -> None:
    """--crs EPSG:32633: both zones' boxes in zone 33's metres, the file naming that CRS."""
    _tif(tmp_path / "z32.tif", "EPSG:32632", UTM32)
    _tif(tmp_path / "z33.tif", "EPSG:32633", UTM33)
    _dataset(tmp_path, ["z32.tif", "z33.tif"])
    assert _export(tmp_path, "--crs", "EPSG:32633") == 0
    meta, rows, geoms = _read(tmp_path / "out.geojson")
    assert meta["crs"] == "EPSG:32633"
    got = _by_query(rows, geoms)
    for image, crs, affine in (("z32.tif", "EPSG:32632", UTM32), ("z33.tif", "EPSG:32633", UTM33)):
        _assert_ring(got[(image, "gt")], _expected(affine, crs, "EPSG:32633", BOX), atol=1e-3)


def test_image_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _tif(tmp_path / "z32.tif", "EPSG:32632", UTM32)
    _tif(tmp_path / "z33.tif", "EPSG:32633", UTM33)
    _dataset(tmp_path, ["z32.tif", "z33.tif"])
    assert _export(tmp_path, "--image", "z33.tif") == 0
    _, rows, _ = _read(tmp_path / "out.geojson")
    assert {r["image_path"] for r in rows} == {"z33.tif"} and len(rows) == 2
    capsys.readouterr()
    assert _export(tmp_path, "--image", "nowhere.tif") == 2
    err = capsys.readouterr().err
    assert "nowhere.tif" in err and "Traceback" not in err


def test_pixel_coordinates_for_every_image(tmp_path: Path) -> None:
    _tif(tmp_path / "z32.tif", "EPSG:32632", UTM32)
    Image.new("L", (W, H)).save(tmp_path / "plain.png")
    _dataset(tmp_path, ["z32.tif", "plain.png"])
    assert _export(tmp_path, "--pixel") == 0
    meta, rows, geoms = _read(tmp_path / "out.geojson")
    assert meta["crs"].startswith('LOCAL_CS["image pixels')
    for (_, kind), geom in _by_query(rows, geoms).items():
        _assert_ring(geom, _corners(BOX if kind == "gt" else PRED), atol=0)


def test_no_georeferenced_image_is_refused_without_pixel(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Image.new("L", (W, H)).save(tmp_path / "plain.png")
    _dataset(tmp_path, ["plain.png"])
    assert _export(tmp_path) == 2
    err = capsys.readouterr().err
    assert "plain.png" in err and "--pixel" in err and "Traceback" not in err
    assert not (tmp_path / "out.geojson").exists()


def test_a_scene_of_another_size_is_scaled_with_a_notice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 160 x 128 scene under 80 x 64 annotations (issue 35, item 2): the annotation's
    pixel (x, y) is the scene's (2x, 2y), as the app stretches the image; a notice names it."""
    _tif(tmp_path / "big.tif", "EPSG:32633", UTM33, w=2 * W, h=2 * H)
    _dataset(tmp_path, ["big.tif"])
    assert _export(tmp_path, "--crs", "EPSG:32633") == 0
    err = capsys.readouterr().err
    assert "big.tif" in err and "160 x 128" in err and "80 x 64" in err, err
    _, rows, geoms = _read(tmp_path / "out.geojson")
    got = _by_query(rows, geoms)
    _assert_ring(got[("big.tif", "gt")],
                 _expected(UTM33, "EPSG:32633", "EPSG:32633", BOX, scale=2.0), atol=1e-6)


@pytest.mark.parametrize("transform", [
    Affine(float("nan"), 0.0, 500_000.0, 0.0, -0.5, 4_000_000.0),
    Affine(1e308, 0.0, 500_000.0, 0.0, -1e308, 4_000_000.0),  # overflows to inf at x = 10
])
@pytest.mark.parametrize("extra", [(), ("--crs", "EPSG:32633")])
def test_non_finite_geometry_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        transform: Affine, extra: tuple[str, ...]) -> None:
    """A NaN or overflowing geotransform (issue 35, item 3): refused, naming the image;
    nothing written (never ``null`` coordinates)."""
    _tif(tmp_path / "bad.tif", "EPSG:32633", transform)
    with rasterio.open(tmp_path / "bad.tif") as src:  # GDAL keeps what it was given
        assert not all(math.isfinite(v) for v in (src.transform * (BOX[2], BOX[3])))
    _dataset(tmp_path, ["bad.tif"])
    assert _export(tmp_path, *extra) == 2
    err = capsys.readouterr().err
    assert "bad.tif" in err and "finite" in err and "Traceback" not in err, err
    assert not (tmp_path / "out.geojson").exists()


def test_a_named_geographic_crs_keeps_longitude_first(tmp_path: Path) -> None:
    """--crs EPSG:4258 (ETRS89, degrees): x is the longitude, as GeoJSON's readers take it."""
    _tif(tmp_path / "z32.tif", "EPSG:32632", UTM32)
    _dataset(tmp_path, ["z32.tif"])
    assert _export(tmp_path, "--crs", "EPSG:4258") == 0
    meta, rows, geoms = _read(tmp_path / "out.geojson")
    assert meta["crs"] == "EPSG:4258"
    _assert_ring(_by_query(rows, geoms)[("z32.tif", "gt")],
                 _expected(UTM32, "EPSG:32632", "EPSG:4258", BOX), atol=1e-9)


def test_an_unknown_crs_is_a_usage_problem(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _tif(tmp_path / "z32.tif", "EPSG:32632", UTM32)
    _dataset(tmp_path, ["z32.tif"])
    assert _export(tmp_path, "--crs", "EPSG:999999") == 2
    err = capsys.readouterr().err
    assert "--crs" in err and "EPSG:999999" in err and "Traceback" not in err
