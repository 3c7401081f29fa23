"""``python -m ovearth_core.export geojson``: every GT object and predicted box with its
outcome, in the image's CRS (issue 29). Read back with pyogrio; geometries checked with
shapely against rasterio's own transform of the box corners; outcomes worked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyogrio.raw
import pytest
import rasterio
import shapely
from PIL import Image
from rasterio.transform import from_origin

from ovearth_core import georef
from ovearth_core.analysis.export import main

W, H = 200, 100


def _tif(path: Path, crs: str | None, transform: object = None) -> None:
    profile = {"driver": "GTiff", "width": W, "height": H, "count": 1, "dtype": "uint8"}
    if crs is not None:
        profile.update(crs=crs, transform=transform)
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.zeros((1, H, W), np.uint8))


def _dataset(root: Path, image: str) -> tuple[Path, Path]:
    """One annotation (two planes) on ``image``: query ov_1 (positive) and ov_2 (negative).

    ov_1's predictions: [10, 10, 30, 30] (0.9) on GT 0 (IoU 1: TP); [110, 45, 150, 65] (0.5)
    on GT 1 [100, 40, 140, 60]: intersection 30 x 15 = 450, union 800 + 800 - 450 = 1150,
    IoU 0.391 < 0.5, so an FP and GT 1 an FN. ov_2 (negative): [0, 0, 5, 5] (0.7), an FP.
    """
    gt = {"annotations": [{"id": "a", "image_path": image, "width": W, "height": H,
                           "category_name": "plane", "segmentation": None,
                           "bbox": [[10, 10, 20, 20], [100, 40, 40, 20]]}],
          "tasks": {"open_vocabulary": [
              {"query_id": "ov_1", "ann_id": "a", "type": "positive", "phrase": "plane"},
              {"query_id": "ov_2", "ann_id": "a", "type": "negative", "phrase": "ship"}]}}
    pred = {"tasks": {"open_vocabulary": [
        {"query_id": "ov_1", "bbox": [{"bbox": [10, 10, 30, 30], "score": 0.9},
                                      {"bbox": [110, 45, 150, 65], "score": 0.5}]},
        {"query_id": "ov_2", "bbox": [{"bbox": [0, 0, 5, 5], "score": 0.7}]}]}}
    (root / "gt.json").write_text(json.dumps(gt))
    (root / "pred.json").write_text(json.dumps(pred))
    return root / "gt.json", root / "pred.json"


# Error types by TIDE's rules (t_f = 0.5, t_b = 0.1), by hand: ov_1's second prediction
# overlaps the second GT box at IoU 450 / 1150 = 0.39 (same category, below t_f, above t_b):
# "localisation", and that GT box, left unmatched, is "mislocalised"; ov_2 (a negative query)
# has a box far from every GT box of the image: "background". Matched boxes have none.
EXPECTED = [  # (query, kind, index, outcome, score, iou, box xyxy, error type)
    ("ov_1", "gt", 0, "TP", None, 1.0, (10, 10, 30, 30), None),
    ("ov_1", "gt", 1, "FN", None, None, (100, 40, 140, 60), "mislocalised"),
    ("ov_1", "prediction", 0, "TP", 0.9, 1.0, (10, 10, 30, 30), None),
    ("ov_1", "prediction", 1, "FP", 0.5, None, (110, 45, 150, 65), "localisation"),
    ("ov_2", "prediction", 0, "FP", 0.7, None, (0, 0, 5, 5), "background"),
]


def _read(path: Path) -> tuple[dict, list[dict], list[shapely.Geometry]]:
    meta, _, wkb, fields = pyogrio.raw.read(path)
    names = list(meta["fields"])
    rows = [{n: fields[k][i] for k, n in enumerate(names)} for i in range(len(wkb))]
    return meta, rows, [shapely.from_wkb(g) for g in wkb]


def _run(root: Path, gt: Path, pred: Path, *extra: str) -> int:
    return main(["geojson", "--gt", str(gt), "--predictions", str(pred), "--task",
                 "vocabulary", "--images", str(root), "--out", str(root / "errors.geojson"),
                 *extra])


def _check_rows(rows: list[dict], geoms: list[shapely.Geometry], corner) -> None:
    got = sorted(zip(((r["query_id"], r["kind"], int(r["index"])) for r in rows),
                     rows, geoms, strict=True), key=lambda t: t[0])
    assert [k for k, _, _ in got] == [(q, k, i) for q, k, i, *_ in EXPECTED]
    for (_, row, geom), (_, _, _, outcome, score, iou, box, error) in zip(got, EXPECTED,
                                                                          strict=True):
        assert row["outcome"] == outcome and row["category"] == "plane"
        assert row["error_type"] == error, (row, error)
        assert (None if row["score"] is None or math.isnan(row["score"]) else row["score"]) == (
            pytest.approx(score) if score is not None else None)
        got_iou = None if row["iou"] is None or math.isnan(row["iou"]) else row["iou"]
        assert got_iou == (pytest.approx(iou) if iou is not None else None)
        x0, y0, x1, y1 = box
        expected = shapely.Polygon([corner(x0, y0), corner(x1, y0), corner(x1, y1),
                                    corner(x0, y1)])
        assert shapely.equals(geom, expected), (geom, expected)


def test_georeferenced_boxes_are_written_in_the_image_crs(tmp_path: Path) -> None:
    """--crs the image's own CRS: the corners exactly as the affine maps them (other CRSs
    and the RFC 7946 default: test_export_geojson_crs.py)."""
    _tif(tmp_path / "geo.tif", "EPSG:32633", from_origin(500_000.0, 4_000_000.0, 0.5, 0.5))
    gt, pred = _dataset(tmp_path, "geo.tif")
    assert _run(tmp_path, gt, pred, "--crs", "EPSG:32633") == 0
    meta, rows, geoms = _read(tmp_path / "errors.geojson")
    assert meta["crs"] == "EPSG:32633"
    with rasterio.open(tmp_path / "geo.tif") as src:
        affine = src.transform
    _check_rows(rows, geoms, lambda x, y: affine @ (x, y))


def test_pixel_coordinates_of_an_image_without_crs(tmp_path: Path) -> None:
    Image.new("L", (W, H)).save(tmp_path / "plain.png")
    gt, pred = _dataset(tmp_path, "plain.png")
    assert _run(tmp_path, gt, pred, "--pixel") == 0
    meta, rows, geoms = _read(tmp_path / "errors.geojson")
    assert meta["crs"].startswith('LOCAL_CS["image pixels')  # not read as lon / lat
    doc = json.loads((tmp_path / "errors.geojson").read_text())
    assert set(doc) == {"type", "crs", "features"}
    _check_rows(rows, geoms, lambda x, y: (x, y))


def test_a_plain_image_beside_a_scene_is_left_out(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Boxes of a georeferenced and a plain image in one file would mix metres and pixels:
    the plain image's boxes are left out, with a notice naming it."""
    _tif(tmp_path / "geo.tif", "EPSG:32633", from_origin(500_000.0, 4_000_000.0, 0.5, 0.5))
    Image.new("L", (W, H)).save(tmp_path / "plain.png")
    gt, pred = _dataset(tmp_path, "geo.tif")
    doc = json.loads(gt.read_text())
    doc["annotations"].append({**doc["annotations"][0], "id": "b", "image_path": "plain.png"})
    doc["tasks"]["open_vocabulary"].append({"query_id": "ov_3", "ann_id": "b",
                                            "type": "positive", "phrase": "plane"})
    gt.write_text(json.dumps(doc))
    assert _run(tmp_path, gt, pred, "--crs", "EPSG:32633") == 0
    err = capsys.readouterr().err
    assert "plain.png" in err and "left out" in err and "Traceback" not in err
    _, rows, _ = _read(tmp_path / "errors.geojson")
    assert {r["image_path"] for r in rows} == {"geo.tif"} and len(rows) == len(EXPECTED)


def test_lon_lat_of_web_mercator_by_its_formula(tmp_path: Path) -> None:
    """EPSG:3857 to WGS84 by the spherical formulas: lon = X / R, lat = 2 atan(e^(Y / R)) -
    pi / 2 (R = 6,378,137 m)."""
    _tif(tmp_path / "m.tif", "EPSG:3857", from_origin(1_000_000.0, 5_000_000.0, 10.0, 10.0))
    ref = georef.read_georef(tmp_path / "m.tif")
    assert ref is not None and ref.crs == "EPSG:3857"
    x, y = np.array([0.0, 150.5]), np.array([0.0, 80.25])
    mx, my = 1_000_000.0 + 10 * x, 5_000_000.0 - 10 * y
    np.testing.assert_allclose(ref.to_map(x, y), (mx, my))
    lon, lat = ref.to_lonlat(x, y)
    r = 6_378_137.0
    np.testing.assert_allclose(lon, np.degrees(mx / r), atol=1e-9)
    np.testing.assert_allclose(lat, np.degrees(2 * np.arctan(np.exp(my / r)) - np.pi / 2),
                               atol=1e-9)
    _tif(tmp_path / "n.tif", None)
    assert georef.read_georef(tmp_path / "n.tif") is None


def test_the_viewer_caption_gives_map_and_lon_lat_coordinates(tmp_path: Path) -> None:
    """Pixel (50, 20) of a Web Mercator image at 10 m from (1,000,000, 5,000,000): X =
    1,000,500, Y = 4,999,800, and lon / lat by the spherical formulas."""
    _tif(tmp_path / "m.tif", "EPSG:3857", from_origin(1_000_000.0, 5_000_000.0, 10.0, 10.0))
    ref = georef.read_georef(tmp_path / "m.tif")
    r = 6_378_137.0
    lon = math.degrees(1_000_500.0 / r)
    lat = math.degrees(2 * math.atan(math.exp(4_999_800.0 / r)) - math.pi / 2)
    assert georef.coordinate_text(ref, 50.0, 20.0) == (
        f"EPSG:3857 X 1,000,500.00, Y 4,999,800.00 · lon {lon:.6f}°, lat {lat:.6f}°")
