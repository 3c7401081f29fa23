"""Rules of the GeoJSON export (``ovearth_core.analysis.export``) that mutation testing found
unpinned (issue 47), called directly (no command, no GeoTIFF: each scene's
:class:`~ovearth_core.georef.Georef` is written out by hand).

References: box corners worked by hand; rasterio's ``Affine`` for the map coordinates;
pyproj's ``Transformer`` (``always_xy``: longitude first) for other CRSs; shapely's
``is_ccw`` for the rings' sense. Transforms are asymmetric (x and y pixel sizes differ),
rotated and away from the origin, so a swapped or dropped term moves a corner."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyproj
import pytest
import shapely
from rasterio import Affine
from rasterio.crs import CRS

import ovearth_core.analysis.export as export
from ovearth_core.analysis.export import (
    PIXEL_CRS,
    _counterclockwise,
    _names,
    _number,
    _Placer,
    _rings,
    _where,
    geojson,
    target_crs,
)
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_run
from ovearth_core.georef import WGS84, Georef, NoLonLat
from ovearth_core.io import load_samples

W, H = 40, 30  # the annotations' size
# 0.7 x 0.9 m pixels turned by a few degrees, sheared, the origin in UTM 33N's Europe.
T = (0.7, -0.3, 500_123.0, 0.2, -0.9, 5_000_456.0)
UTM33_WKT = CRS.from_epsg(32633).to_wkt()
SCENE = Georef("EPSG:32633", UTM33_WKT, 32633, T, W, H)
LOCAL = ('LOCAL_CS["site grid",LOCAL_DATUM["site",0],UNIT["metre",1],AXIS["x",EAST],'
         'AXIS["y",NORTH]]')

# GT boxes (xywh): (2, 3)-(12, 10) and (20, 11)-(26, 20)
GT_BOXES = [[2.0, 3.0, 10.0, 7.0], [20.0, 11.0, 6.0, 9.0]]
PRED = [{"bbox": [2.0, 3.0, 12.0, 10.0], "score": 0.75},    # GT 0 exactly: TP, IoU 1
        {"bbox": [33.0, 1.0, 38.0, 4.0], "score": 0.25}]    # far from both: FP, background


def _run(tmp_path: Path, images: tuple[str, ...] = ("s.tif",), difficult: list | None = None,
         oriented: bool = False):
    """One annotation per image (W x H, two cars, GT_BOXES), a positive query ``q<k>``
    with PRED and a negative one ``n<k>`` with one box."""
    anns, queries, preds = [], [], []
    for k, image in enumerate(images):
        ann = {"id": f"a{k}", "image_path": image, "width": W, "height": H,
               "category_name": "car", "segmentation": None, "bbox": GT_BOXES}
        if difficult is not None:
            ann["difficult"] = difficult
        if oriented:  # GT 0 its box; GT 1 a quadrilateral inside its box, not the box
            ann["oriented_bbox"] = [[[2.0, 3.0], [12.0, 3.0], [12.0, 10.0], [2.0, 10.0]],
                                    [[23.0, 11.0], [26.0, 15.0], [23.0, 20.0], [20.0, 15.0]]]
        anns.append(ann)
        queries += [{"query_id": f"q{k}", "ann_id": f"a{k}", "type": "positive",
                     "phrase": "red car"},
                    {"query_id": f"n{k}", "ann_id": f"a{k}", "type": "negative",
                     "phrase": "boat"}]
        if oriented:
            preds += [{"query_id": f"q{k}", "oriented_bbox": [
                {"polygon": [[2.0, 3.0], [12.0, 3.0], [12.0, 10.0], [2.0, 10.0]],
                 "score": 0.75}]},
                {"query_id": f"n{k}", "oriented_bbox": [
                    {"polygon": [[30.0, 20.0], [36.0, 22.0], [35.0, 25.0], [29.0, 23.0]],
                     "score": 0.5}]}]
        else:
            preds += [{"query_id": f"q{k}", "bbox": PRED},
                      {"query_id": f"n{k}", "bbox": [{"bbox": [0.0, 20.0, 4.0, 28.0],
                                                      "score": 0.5}]}]
    (tmp_path / "gt.json").write_text(json.dumps({"annotations": anns,
                                                  "tasks": {"open_vocabulary": queries}}))
    (tmp_path / "pred.json").write_text(json.dumps({"tasks": {"open_vocabulary": preds}}))
    modality = "oriented_bbox" if oriented else "bbox"
    samples = load_samples(tmp_path / "gt.json", tmp_path / "pred.json", "vocabulary",
                           modalities=(modality,))
    return evaluate_run(samples, 0.5)


def _features(doc: dict) -> dict[tuple[str, str, int], dict]:
    return {(f["properties"]["query_id"], f["properties"]["kind"], f["properties"]["index"]): f
            for f in doc["features"]}


def _ring(feature: dict) -> np.ndarray:
    (ring,) = feature["geometry"]["coordinates"]
    return np.array(ring)


def _same_corners(ring: np.ndarray, corners: np.ndarray, atol: float) -> None:
    """A closed ring of the four ``corners``, counterclockwise, starting anywhere."""
    assert ring.shape == (5, 2)
    np.testing.assert_array_equal(ring[0], ring[-1])
    assert shapely.is_ccw(shapely.LinearRing(ring)), ring
    got = ring[:-1]
    order = [int(np.argmin(np.hypot(*(got - p).T))) for p in corners]
    assert sorted(order) == [0, 1, 2, 3], (got, corners)
    np.testing.assert_allclose(got[order], corners, rtol=0, atol=atol)


def _box_corners(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])


def _mapped(transform: tuple[float, ...], corners: np.ndarray) -> np.ndarray:
    affine = Affine(*transform)
    return np.array([affine * (float(x), float(y)) for x, y in corners])


# --- rings -------------------------------------------------------------------------------

def test_a_box_is_a_closed_ring_of_its_corners_in_pixel_order() -> None:
    """xyxy (1, 2, 5, 9): top-left, top-right, bottom-right, bottom-left, top-left again;
    each box its own ring (the second box's numbers never mix in)."""
    rings = _rings(np.array([[1.0, 2.0, 5.0, 9.0], [10.0, 20.0, 13.0, 24.0]]), False)
    np.testing.assert_array_equal(rings, [
        [[1, 2], [5, 2], [5, 9], [1, 9], [1, 2]],
        [[10, 20], [13, 20], [13, 24], [10, 24], [10, 20]]])


def test_an_oriented_box_is_closed_by_its_first_vertex() -> None:
    obbs = np.array([[[0, 0], [4, 1], [3, 5], [-1, 4]], [[9, 9], [8, 7], [6, 8], [7, 9]]],
                    dtype=np.float64)
    rings = _rings(obbs, True)
    np.testing.assert_array_equal(rings[:, :4], obbs)
    np.testing.assert_array_equal(rings[:, 4], obbs[:, 0])
    assert _rings(np.zeros((0, 4)), False).shape == (0, 5, 2)


def test_clockwise_rings_are_reversed_and_the_others_kept() -> None:
    """RFC 7946: exterior rings counterclockwise (x east, y north). A clockwise ring is
    reversed, a counterclockwise one and a degenerate one (no area) kept as they are; each
    ring by its own area (shapely's ``is_ccw`` the judge)."""
    cw = [[0.0, 0.0], [0.0, 2.0], [3.0, 2.0], [3.0, 0.0], [0.0, 0.0]]
    ccw = [[5.0, 5.0], [9.0, 5.0], [9.0, 6.0], [5.0, 6.0], [5.0, 5.0]]
    flat = [[0.0, 0.0], [1.0, 1.0], [3.0, 3.0], [2.0, 2.0], [0.0, 0.0]]  # on a line
    rings = np.array([cw, ccw, flat])
    assert not shapely.is_ccw(shapely.LinearRing(cw)) and shapely.is_ccw(shapely.LinearRing(ccw))
    out = _counterclockwise(rings)
    np.testing.assert_array_equal(out[0], cw[::-1])
    np.testing.assert_array_equal(out[1], ccw)
    np.testing.assert_array_equal(out[2], flat)
    np.testing.assert_array_equal(rings[0], cw)  # the input is left alone
    # a thin clockwise ring (area 0.5, shoelace's terms unequal): reversed too
    thin = np.array([[[0.0, 0.0], [0.0, 1.0], [1.0, 0.5], [1.0, 0.0], [0.0, 0.0]]])
    assert not shapely.is_ccw(shapely.LinearRing(thin[0]))
    assert shapely.is_ccw(shapely.LinearRing(_counterclockwise(thin)[0]))


def test_a_score_that_is_nan_is_null() -> None:
    assert _number(float("nan")) is None
    got = _number(np.float32(0.25))
    assert got == 0.25 and type(got) is float


def test_a_notice_names_five_images_then_counts_the_rest() -> None:
    assert _names(list("abcde")) == "a, b, c, d, e"
    assert _names(list("abcdef")) == "a, b, c, d, e and 1 more"
    assert _names(list("abcdefgh")) == "a, b, c, d, e and 3 more"
    assert _names(["x"]) == "x"


def test_the_summary_names_the_coordinates_written() -> None:
    assert _where(None) == "pixel coordinates"
    assert _where(WGS84) == "WGS84 longitude / latitude (RFC 7946)"
    assert _where("EPSG:32633") == "EPSG:32633 coordinates"


# --- --crs -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [(None, ("EPSG:4326", 4326)),
                                        ("EPSG:32633", ("EPSG:32633", 32633)),
                                        (" epsg:3857 ", ("EPSG:3857", 3857))])
def test_the_target_crs_is_named_by_its_code(text: str | None, want: tuple[str, int]) -> None:
    assert target_crs(text) == want


def test_an_unknown_crs_names_the_option_and_the_text() -> None:
    with pytest.raises(OVEarthInputError) as err:
        target_crs("EPSG:999999")
    (problem,) = err.value.problems
    assert (problem.file, problem.field, problem.expected) == (
        "(options)", "--crs", "a CRS such as EPSG:32633")
    assert problem.found.startswith("'EPSG:999999' (")


def test_a_crs_without_a_code_is_refused() -> None:
    with pytest.raises(OVEarthInputError) as err:
        target_crs(LOCAL)
    (problem,) = err.value.problems
    assert (problem.file, problem.field, problem.found) == ("(options)", "--crs", LOCAL)
    assert problem.expected == "a CRS with an EPSG code (GeoJSON names its CRS by code)"


# --- placing -----------------------------------------------------------------------------

def test_pixel_corners_are_the_boxes_own_numbers_not_pixel_centres(tmp_path: Path) -> None:
    """In the scene's own CRS a box's corner (x, y) lands where the affine map puts the
    pixel *corner* (x, y) (origin at the top-left corner of the top-left pixel): no half
    pixel added, every term of the rotated transform used (rasterio's ``Affine``)."""
    doc, notes = geojson(_run(tmp_path), "bbox", {"s.tif": SCENE}, "EPSG:32633")
    assert notes == []
    got = _features(doc)
    _same_corners(_ring(got[("q0", "gt", 0)]), _mapped(T, _box_corners(2, 3, 12, 10)), 1e-6)
    _same_corners(_ring(got[("q0", "gt", 1)]), _mapped(T, _box_corners(20, 11, 26, 20)), 1e-6)
    _same_corners(_ring(got[("q0", "prediction", 1)]),
                  _mapped(T, _box_corners(33, 1, 38, 4)), 1e-6)
    assert doc["crs"] == {"type": "name",
                          "properties": {"name": "urn:ogc:def:crs:EPSG::32633"}}


def test_wgs84_is_longitude_then_latitude_and_has_no_crs_member(tmp_path: Path) -> None:
    """RFC 7946: x is the longitude, y the latitude (pyproj's ``always_xy`` order); the
    file has only ``type`` and ``features``; rings counterclockwise on the map although
    the pixel grid's y runs south."""
    doc, _ = geojson(_run(tmp_path), "bbox", {"s.tif": SCENE})
    assert list(doc) == ["type", "features"] and doc["type"] == "FeatureCollection"
    to = pyproj.Transformer.from_crs("EPSG:32633", "EPSG:4326", always_xy=True)
    for key, box in ((("q0", "gt", 0), (2, 3, 12, 10)), (("n0", "prediction", 0), (0, 20, 4, 28))):
        mx, my = _mapped(T, _box_corners(*box)).T
        lon, lat = to.transform(mx, my)
        assert 14 < min(lon) and max(lon) < 16 and 45 < min(lat) and max(lat) < 46
        _same_corners(_ring(_features(doc)[key]), np.column_stack([lon, lat]), 1e-9)


def test_another_geographic_target_is_named_and_longitude_first(tmp_path: Path) -> None:
    doc, _ = geojson(_run(tmp_path), "bbox", {"s.tif": SCENE}, "EPSG:4258")
    assert doc["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::4258"
    mx, my = _mapped(T, _box_corners(20, 11, 26, 20)).T
    lon, lat = pyproj.Transformer.from_crs("EPSG:32633", "EPSG:4258",
                                           always_xy=True).transform(mx, my)
    _same_corners(_ring(_features(doc)[("q0", "gt", 1)]), np.column_stack([lon, lat]), 1e-9)


def test_pixel_output_keeps_pixels_and_names_the_pixel_crs(tmp_path: Path) -> None:
    doc, notes = geojson(_run(tmp_path), "bbox", {"s.tif": None}, None)
    assert doc["crs"] == {"type": "name", "properties": {"name": PIXEL_CRS}}
    assert notes == []
    ring = _ring(_features(doc)[("q0", "gt", 1)])
    np.testing.assert_array_equal(ring[0], ring[-1])
    assert sorted(map(tuple, ring[:-1].tolist())) == [(20, 11), (20, 20), (26, 11), (26, 20)]
    # a georeferenced scene is written in pixels too
    doc, _ = geojson(_run(tmp_path), "bbox", {"s.tif": SCENE}, None)
    ring = _ring(_features(doc)[("q0", "gt", 1)])
    assert sorted(map(tuple, ring[:-1].tolist())) == [(20, 11), (20, 20), (26, 11), (26, 20)]


def test_oriented_boxes_are_placed_vertex_by_vertex(tmp_path: Path) -> None:
    doc, _ = geojson(_run(tmp_path, oriented=True), "oriented_bbox", {"s.tif": SCENE},
                     "EPSG:32633")
    quad = np.array([[30.0, 20.0], [36.0, 22.0], [35.0, 25.0], [29.0, 23.0]])
    _same_corners(_ring(_features(doc)[("n0", "prediction", 0)]), _mapped(T, quad), 1e-6)
    diamond = np.array([[23.0, 11.0], [26.0, 15.0], [23.0, 20.0], [20.0, 15.0]])
    _same_corners(_ring(_features(doc)[("q0", "gt", 1)]), _mapped(T, diamond), 1e-6)
    assert _features(doc)[("q0", "gt", 0)]["properties"]["outcome"] == "TP"


def test_an_annotation_of_another_size_is_stretched_to_the_scene_with_a_notice(
        tmp_path: Path) -> None:
    """The scene is 80 x 90 pixels, its annotation 40 x 30: annotation pixel (x, y) is
    scene pixel (2x, 3y)."""
    big = Georef("EPSG:32633", UTM33_WKT, 32633, T, 2 * W, 3 * H)
    doc, notes = geojson(_run(tmp_path), "bbox", {"s.tif": big}, "EPSG:32633")
    assert notes == ["s.tif is 80 x 90 pixels, its annotation 40 x 30: the annotation's "
                     "boxes are stretched to the scene (as the app draws it)"]
    corners = _box_corners(20, 11, 26, 20) * [2.0, 3.0]
    _same_corners(_ring(_features(doc)[("q0", "gt", 1)]), _mapped(T, corners), 1e-6)


def test_the_round_trip_tolerance_is_a_hundredth_of_the_longer_pixel_side(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``place_in_crs`` gets a hundredth of the longer of the (stretched) pixel's two sides,
    each the length of a column of the transform: (a, d) and (b, e)."""
    seen = []

    def spy(src, dst, mx, my, tolerance):  # noqa: ANN001, ANN202
        seen.append((src, dst, tolerance))
        return mx, my

    monkeypatch.setattr(export, "place_in_crs", spy)
    placer = _Placer({"s.tif": SCENE, "w.tif": Georef(LOCAL, LOCAL, None, T, W, H)},
                     "EPSG:32633")
    rings = _rings(np.array([[0.0, 0.0, 1.0, 1.0]]), False)
    placer.place("s.tif", W, H, rings)
    placer.place("s.tif", W // 2, H, rings)  # pixels twice as wide: (2a, 2d)
    placer.place("w.tif", W, H, rings)
    side_x, side_y = math.hypot(0.7, 0.2), math.hypot(-0.3, -0.9)  # 0.728, 0.949
    assert [s[:2] for s in seen] == [("EPSG:32633", "EPSG:32633")] * 2 + [(LOCAL, "EPSG:32633")]
    assert [s[2] for s in seen] == pytest.approx(
        [0.01 * side_y, 0.01 * 2 * side_x, 0.01 * side_y], rel=1e-12)


def test_a_placer_leaves_pixels_no_scene_and_no_boxes_alone() -> None:
    rings = _rings(np.array([[0.0, 0.0, 1.0, 1.0]]), False)
    assert _Placer({"s.tif": SCENE}, None).place("s.tif", W, H, rings) is rings
    assert _Placer({"p.png": None}, WGS84).place("p.png", W, H, rings) is rings
    empty = np.zeros((0, 5, 2))
    placer = _Placer({"s.tif": Georef("EPSG:32633", UTM33_WKT, 32633, T, 2 * W, H)}, WGS84)
    assert placer.place("s.tif", W, H, empty) is empty
    assert placer.notes == {} and placer.problems == {}


# --- properties --------------------------------------------------------------------------

def test_every_box_keeps_its_fields(tmp_path: Path) -> None:
    """Outcomes, scores, IoU, error types by hand: prediction 0 is GT 0 exactly (TP, IoU 1),
    prediction 1 lies far from both GT boxes (FP, "background"), GT 1 is not found (FN,
    "missed"); the negative query's box is an FP. ``difficult``: the annotation's flag per
    GT box (the second one here), ``null`` for predictions."""
    doc, _ = geojson(_run(tmp_path, difficult=[0, 1]), "bbox", {"s.tif": SCENE}, "EPSG:32633")
    props = {k: f["properties"] for k, f in _features(doc).items()}
    # RFC 7946: each box a Feature whose geometry is a Polygon of one ring
    assert {(f["type"], f["geometry"]["type"], len(f["geometry"]["coordinates"]))
            for f in doc["features"]} == {("Feature", "Polygon", 1)}
    assert all(set(f) == {"type", "geometry", "properties"} for f in doc["features"])
    assert sorted(props) == [("n0", "prediction", 0), ("q0", "gt", 0), ("q0", "gt", 1),
                             ("q0", "prediction", 0), ("q0", "prediction", 1)]
    base = {"image_path": "s.tif", "category": "car"}
    assert props[("q0", "gt", 0)] == {**base, "query_id": "q0", "kind": "gt", "index": 0,
                                      "outcome": "TP", "phrase": "red car", "negative": False,
                                      "score": None, "difficult": False, "iou": 1.0,
                                      "error_type": None}
    assert props[("q0", "gt", 1)] == {**base, "query_id": "q0", "kind": "gt", "index": 1,
                                      "outcome": "FN", "phrase": "red car", "negative": False,
                                      "score": None, "difficult": True, "iou": None,
                                      "error_type": "missed"}
    assert props[("q0", "prediction", 0)] == {
        **base, "query_id": "q0", "kind": "prediction", "index": 0, "outcome": "TP",
        "phrase": "red car", "negative": False, "score": 0.75, "difficult": None, "iou": 1.0,
        "error_type": None}
    assert props[("q0", "prediction", 1)] == {
        **base, "query_id": "q0", "kind": "prediction", "index": 1, "outcome": "FP",
        "phrase": "red car", "negative": False, "score": 0.25, "difficult": None,
        "iou": None, "error_type": "background"}
    assert props[("n0", "prediction", 0)] == {
        **base, "query_id": "n0", "kind": "prediction", "index": 0, "outcome": "FP",
        "phrase": "boat", "negative": True, "score": 0.5, "difficult": None, "iou": None,
        "error_type": "background"}


def test_a_gt_box_without_a_difficult_list_is_not_difficult(tmp_path: Path) -> None:
    doc, _ = geojson(_run(tmp_path), "bbox", {"s.tif": SCENE}, "EPSG:32633")
    assert [f["properties"]["difficult"] for f in doc["features"]
            if f["properties"]["kind"] == "gt"] == [False] * len(
        [f for f in doc["features"] if f["properties"]["kind"] == "gt"])


# --- which images ------------------------------------------------------------------------

def test_images_without_a_crs_are_left_out_with_a_notice(tmp_path: Path) -> None:
    run = _run(tmp_path, images=("s.tif", "p1.png", "p2.png"))
    frames = {"s.tif": SCENE, "p1.png": None, "p2.png": None}
    doc, notes = geojson(run, "bbox", frames, "EPSG:32633")
    assert {f["properties"]["image_path"] for f in doc["features"]} == {"s.tif"}
    assert notes == ["2 image(s) without a CRS left out (their boxes have no place on a map; "
                     "--pixel writes pixel coordinates): p1.png, p2.png"]
    # only the images asked for; then pixels for all of them
    doc, notes = geojson(run, "bbox", frames, "EPSG:32633", {"s.tif"})
    assert notes == [] and {f["properties"]["image_path"] for f in doc["features"]} == {"s.tif"}
    doc, notes = geojson(run, "bbox", frames, None)
    assert {f["properties"]["image_path"] for f in doc["features"]} == {"s.tif", "p1.png",
                                                                        "p2.png"}
    assert notes == []


def test_no_image_with_a_crs_is_refused(tmp_path: Path) -> None:
    run = _run(tmp_path, images=("s.tif", "p1.png"))
    with pytest.raises(OVEarthInputError) as err:
        geojson(run, "bbox", {"s.tif": SCENE, "p1.png": None}, WGS84, {"p1.png"})
    (problem,) = err.value.problems
    assert (problem.file, problem.field, problem.found) == ("(images)", "image_path",
                                                           "1 without a CRS: p1.png")
    assert problem.expected == ("at least one georeferenced image (a GeoTIFF with a CRS; "
                                "--pixel writes pixel coordinates)")


def test_a_scene_whose_boxes_have_no_place_is_refused_naming_it(tmp_path: Path) -> None:
    """A site grid (LOCAL_CS) has no transformation to WGS84: one problem for the image
    (not one per box), GDAL's reason and the transform in it; the other scene is fine."""
    run = _run(tmp_path, images=("s.tif", "w.tif"))
    site = Georef(LOCAL, LOCAL, None, T, W, H)
    with pytest.raises(OVEarthInputError) as err:
        geojson(run, "bbox", {"s.tif": SCENE, "w.tif": site}, WGS84)
    (problem,) = err.value.problems
    assert (problem.file, problem.field) == ("w.tif", "geotransform")
    assert problem.expected == (
        "boxes with a position in EPSG:4326 (a finite geotransform, corners inside the "
        "domain of the scene's CRS and of the target's: latitudes within ±90°, no box across "
        "the antimeridian)")
    assert problem.found == (
        "<the CRS 'site grid' (LOCAL_CS) cannot be transformed to EPSG:4326: Cannot find "
        f"coordinate operations; transform {T}>")


def test_a_coded_scene_outside_its_domain_is_named_by_its_code(tmp_path: Path) -> None:
    far = Georef("EPSG:32633", UTM33_WKT, 32633, (1.0, 0.0, 30_000_000.0, 0.0, -1.0,
                                                  1_000_000.0), W, H)
    with pytest.raises(OVEarthInputError) as err:
        geojson(_run(tmp_path), "bbox", {"s.tif": far}, WGS84)
    (problem,) = err.value.problems
    # GDAL either refuses the transformation or answers with infinities (which one depends
    # on what the process did before); either way the scene is named by its code
    assert problem.found.startswith(("<EPSG:32633 cannot be transformed to EPSG:4326: ",
                                     "<points outside the domain of EPSG:32633 (no position "
                                     "in EPSG:4326)"))


def test_a_placing_problem_keeps_the_pixels_and_goes_on(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    def refuse(*args):  # noqa: ANN002, ANN202
        raise NoLonLat("why")

    monkeypatch.setattr(export, "place_in_crs", refuse)
    placer = _Placer({"s.tif": SCENE}, WGS84)
    rings = _rings(np.array([[0.0, 0.0, 1.0, 1.0]]), False)
    assert placer.place("s.tif", W, H, rings) is rings
    placer.place("s.tif", W, H, rings)
    assert list(placer.problems) == ["s.tif"]
    assert placer.problems["s.tif"].found == f"<why; transform {T}>"


# --- the command, in process -------------------------------------------------------------

def _main(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str,
          out: str = "out.geojson") -> tuple[int, str, Path]:
    code = export.main(["geojson", "--gt", str(tmp_path / "gt.json"), "--predictions",
                        str(tmp_path / "pred.json"), "--task", "vocabulary", "--images",
                        str(tmp_path), "--out", str(tmp_path / out), *extra])
    return code, capsys.readouterr().err, tmp_path / out


def test_the_command_writes_pixels_and_says_what_it_wrote(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--pixel``: no image is read (none exists here); the file is the FeatureCollection
    of pixel boxes, and the summary counts boxes and queries and names the coordinates."""
    _run(tmp_path, images=("a.png", "b.png"))
    code, err, out = _main(tmp_path, capsys, "--pixel")
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["crs"]["properties"]["name"] == PIXEL_CRS
    assert len(doc["features"]) == 10
    prefix = "python -m ovearth_core.export geojson"
    assert err == f"{prefix}: wrote {out}: 10 boxes of 4 queries in pixel coordinates\n"


def test_the_command_matches_at_the_iou_threshold_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Prediction 1 of q0 moved onto GT 1 at IoU 6 x 7 / (6 x 9 + 6 x 9 - 6 x 7) = 42 / 66
    = 0.636: a TP at the default 0.5, an FP at --iou-threshold 0.7 (by hand)."""
    _run(tmp_path)
    pred = json.loads((tmp_path / "pred.json").read_text())
    pred["tasks"]["open_vocabulary"][0]["bbox"][1]["bbox"] = [20.0, 13.0, 26.0, 22.0]
    (tmp_path / "pred.json").write_text(json.dumps(pred))
    outcomes = []
    for extra in ((), ("--iou-threshold", "0.7")):
        code, err, out = _main(tmp_path, capsys, "--pixel", *extra)
        assert code == 0, err
        f = _features(json.loads(out.read_text()))
        outcomes.append((f[("q0", "prediction", 1)]["properties"]["outcome"],
                         f[("q0", "prediction", 1)]["properties"]["iou"]))
    assert outcomes[0] == ("TP", pytest.approx(42 / 66))
    assert outcomes[1] == ("FP", None)


def test_the_command_reads_xywh_and_a_score_threshold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--bbox-format xywh`` reads the predictions' boxes as x, y, w, h; a score threshold
    of 0.5 drops q0's 0.25 box."""
    _run(tmp_path)
    pred = json.loads((tmp_path / "pred.json").read_text())
    pred["tasks"]["open_vocabulary"][0]["bbox"][0]["bbox"] = [2.0, 3.0, 10.0, 7.0]
    (tmp_path / "pred.json").write_text(json.dumps(pred))
    code, err, out = _main(tmp_path, capsys, "--pixel", "--bbox-format", "xywh",
                           "--score-threshold", "0.5")
    assert code == 0, err
    f = _features(json.loads(out.read_text()))
    assert f[("q0", "prediction", 0)]["properties"]["outcome"] == "TP"
    assert ("q0", "prediction", 1) not in f


def test_the_command_writes_oriented_boxes_when_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, oriented=True)
    code, err, out = _main(tmp_path, capsys, "--pixel", "--boxes", "oriented_bbox")
    assert code == 0, err
    ring = _ring(_features(json.loads(out.read_text()))[("n0", "prediction", 0)])
    assert sorted(map(tuple, ring[:-1].tolist())) == [(29, 23), (30, 20), (35, 25), (36, 22)]


def test_the_command_keeps_only_the_images_asked_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, images=("a.png", "b.png", "c.png"))
    code, err, out = _main(tmp_path, capsys, "--pixel", "--image", "b.png", "--image", "c.png")
    assert code == 0, err
    got = {f["properties"]["image_path"] for f in json.loads(out.read_text())["features"]}
    assert got == {"b.png", "c.png"}


def test_an_image_not_in_the_task_is_refused_naming_the_task_images(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, images=("a.png", "b.png"))
    code, err, out = _main(tmp_path, capsys, "--pixel", "--image", "z.png", "--image", "a.png")
    assert code == 2 and not out.exists()
    assert err == ("python -m ovearth_core.export geojson: invalid input\n1 problem found in "
                   "the input:\n  - (options), field --image: expected an image_path of the "
                   "task's queries (a.png, b.png), found z.png\n")


def test_a_bad_crs_is_refused_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path)
    code, err, out = _main(tmp_path, capsys, "--crs", LOCAL)
    assert code == 2 and not out.exists()
    assert err.startswith("python -m ovearth_core.export geojson: invalid input\n1 problem "
                          "found in the input:\n  - (options), field --crs: expected a CRS "
                          "with an EPSG code")


def test_unreadable_images_are_each_named(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Without --pixel each image is read for its CRS: a missing one and one that is no
    image are both named, with what was expected; nothing is written."""
    _run(tmp_path, images=("gone.tif", "junk.tif"))
    (tmp_path / "junk.tif").write_bytes(b"II*\0" + b"\0" * 60)  # a TIFF header, no TIFF
    code, err, out = _main(tmp_path, capsys)
    assert code == 2 and not out.exists()
    lines = err.splitlines()
    assert lines[0] == "python -m ovearth_core.export geojson: invalid input"
    expected = ("expected a readable image (its CRS decides the coordinates; --pixel writes "
                "pixel coordinates)")
    assert lines[1] == "2 problems found in the input:"
    assert lines[2].startswith(f"  - gone.tif, field image_path: {expected}, found <")
    assert lines[3].startswith(f"  - junk.tif, field image_path: {expected}, found <")
    assert "Traceback" not in err


def test_images_without_a_crs_are_left_out_with_a_note_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from PIL import Image

    _run(tmp_path, images=("s.tif", "p.png"))
    Image.new("L", (W, H)).save(tmp_path / "p.png")
    import rasterio

    with rasterio.open(tmp_path / "s.tif", "w", driver="GTiff", width=W, height=H, count=1,
                       dtype="uint8", crs="EPSG:32633", transform=Affine(*T)) as dst:
        dst.write(np.zeros((1, H, W), np.uint8))
    code, err, out = _main(tmp_path, capsys, "--crs", "EPSG:32633")
    assert code == 0, err
    prefix = "python -m ovearth_core.export geojson"
    assert err.splitlines() == [
        f"{prefix}: note: 1 image(s) without a CRS left out (their boxes have no place on a "
        "map; --pixel writes pixel coordinates): p.png",
        f"{prefix}: wrote {out}: 5 boxes of 4 queries in EPSG:32633 coordinates"]
    _same_corners(_ring(_features(json.loads(out.read_text()))[("q0", "gt", 1)]),
                  _mapped(T, _box_corners(20, 11, 26, 20)), 1e-6)


def test_the_output_may_not_overwrite_an_input(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path)
    before = (tmp_path / "gt.json").read_bytes()
    code, err, _ = _main(tmp_path, capsys, "--pixel", out="gt.json")
    assert code == 2 and "Traceback" not in err
    assert (tmp_path / "gt.json").read_bytes() == before


@pytest.mark.parametrize("argv", [
    ["geojson", "--gt", "g", "--predictions", "p", "--task", "vocabulary"],  # no --out
    ["geojson", "--gt", "g", "--predictions", "p", "--out", "o"],  # no --task
    ["geojson", "--gt", "g", "--predictions", "p", "--task", "vocabulary", "--out", "o",
     "--pixel", "--crs", "EPSG:4326"],  # one of --pixel / --crs
    ["geojson", "--gt", "g", "--predictions", "p", "--task", "vocabulary", "--out", "o",
     "--boxes", "segmentation"],
    ["--gt", "g"],  # no command
])
def test_the_parser_refuses_what_the_command_cannot_do(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as err:
        export.build_parser().parse_args(argv)
    assert err.value.code == 2


def test_the_parsers_defaults() -> None:
    args = export.build_parser().parse_args(
        ["geojson", "--gt", "g", "--predictions", "p", "--task", "referring", "--out", "o"])
    assert (args.command, args.task, args.boxes, args.crs, args.pixel, args.image,
            args.images) == ("geojson", "referring", "bbox", None, False, None, None)
    assert (args.iou_threshold, args.concave_obb) == (0.5, False)


def test_each_stretched_scene_gets_its_own_notice(tmp_path: Path) -> None:
    """Two scenes of other sizes than their annotations: one notice each, naming it.
    Kills ``_Placer.place``'s ``notes.setdefault(None, ...)`` (one notice for all)."""
    big = Georef("EPSG:32633", UTM33_WKT, 32633, T, 2 * W, 3 * H)
    small = Georef("EPSG:32633", UTM33_WKT, 32633, T, W // 2, H)
    _, notes = geojson(_run(tmp_path, images=("a.tif", "b.tif")), "bbox",
                       {"a.tif": big, "b.tif": small}, "EPSG:32633")
    assert sorted(notes) == [
        "a.tif is 80 x 90 pixels, its annotation 40 x 30: the annotation's boxes are "
        "stretched to the scene (as the app draws it)",
        "b.tif is 20 x 30 pixels, its annotation 40 x 30: the annotation's boxes are "
        "stretched to the scene (as the app draws it)"]


def test_a_missing_image_is_named_once_with_the_systems_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An ``OSError``'s found value is its reason (``strerror``), the file being named
    already; another error its text. Kills ``image_frames``'s ``getattr(err,
    'strerror', None) or err`` mutants (26, 27, 31, 32, 33; a path out of the folder is an
    error without ``strerror``)."""
    _run(tmp_path, images=("gone.tif", "junk.tif", "../out.tif"))
    (tmp_path / "junk.tif").write_bytes(b"II*\0" + b"\0" * 60)
    with pytest.raises(OVEarthInputError) as err:
        export.image_frames(evaluate_run(load_samples(
            tmp_path / "gt.json", tmp_path / "pred.json", "vocabulary",
            modalities=("bbox",))), tmp_path)
    out, gone, junk = err.value.problems  # sorted by path
    assert (out.file, out.found) == ("../out.tif", "<image path '../out.tif' leaves the "
                                     "images folder ('..')>")  # no strerror: its text
    assert (gone.file, gone.found) == ("gone.tif", "<No such file or directory>")
    assert junk.file == "junk.tif" and junk.found.startswith("<") and len(junk.found) > 2
    assert "No such file" not in junk.found


def _no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("work done before the output was checked")

    monkeypatch.setattr(export, "load_samples", boom)
    monkeypatch.setattr(export, "evaluate_run", boom)


def test_an_output_over_an_input_is_refused_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """--out naming the ground truth: refused (exit 2, the command named) before anything
    is read or matched. Kills ``main``'s first ``output_refused`` given ``None`` for the
    program, the output or the reads (mutants 14, 15, 19)."""
    _run(tmp_path)
    before = (tmp_path / "gt.json").read_bytes()
    _no_work(monkeypatch)
    code, err, _ = _main(tmp_path, capsys, "--pixel", out="gt.json")
    assert code == 2
    assert err.startswith("python -m ovearth_core.export geojson: ")
    assert (tmp_path / "gt.json").read_bytes() == before


def test_an_output_over_a_scene_is_refused_before_the_matching(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """--out naming one of the task's images: refused once the images are known, before
    the matching. Kills the second ``output_refused``'s mutants (43, 44, 48)."""
    _run(tmp_path, images=("s.png",))
    (tmp_path / "s.png").write_bytes(b"image")

    def boom(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("matched before the output was checked")

    monkeypatch.setattr(export, "evaluate_run", boom)
    code, err, _ = _main(tmp_path, capsys, "--pixel", out="s.png")
    assert code == 2 and err.startswith("python -m ovearth_core.export geojson: ")
    assert (tmp_path / "s.png").read_bytes() == b"image"


def test_images_are_found_beside_the_ground_truth_or_in_images(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --images the ground truth's folder holds the images; with it, that folder.
    Kills ``images_of(None, ...)`` and ``images_of(args.gt, None)`` (mutants 5, 6)."""
    _run(tmp_path)
    (tmp_path / "gt").mkdir()
    (tmp_path / "gt.json").rename(tmp_path / "gt" / "gt.json")
    gt, pred, out = tmp_path / "gt" / "gt.json", tmp_path / "pred.json", tmp_path / "o.json"
    import rasterio

    for folder, pixel in ((tmp_path / "gt", 1.0), (tmp_path, 3.0)):
        with rasterio.open(folder / "s.tif", "w", driver="GTiff", width=W, height=H,
                           count=1, dtype="uint8", crs="EPSG:32633",
                           transform=Affine(pixel, 0.0, 500_000.0, 0.0, -pixel,
                                            5_000_000.0)) as dst:
            dst.write(np.zeros((1, H, W), np.uint8))
    base = ["geojson", "--gt", str(gt), "--predictions", str(pred), "--task", "vocabulary",
            "--crs", "EPSG:32633", "--out", str(out)]
    for extra, pixel in (([], 1.0), (["--images", str(tmp_path)], 3.0)):
        assert export.main(base + extra) == 0, capsys.readouterr().err
        ring = _ring(_features(json.loads(out.read_text()))[("q0", "gt", 0)])
        assert ring[:, 0].min() == 500_000.0 + 2 * pixel  # x0 = 2 pixels of that scene
        out.unlink()


def test_concave_oriented_boxes_need_the_option(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A concave GT quadrilateral: refused without --concave-obb, written with it. Kills
    ``load_samples`` called without ``concave_obb`` (mutant 39)."""
    _run(tmp_path, oriented=True)
    gt = json.loads((tmp_path / "gt.json").read_text())
    gt["annotations"][0]["oriented_bbox"][1] = [[20.0, 11.0], [26.0, 11.0], [22.0, 13.0],
                                                [20.0, 20.0]]  # a dart: (22, 13) inside
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    code, err, out = _main(tmp_path, capsys, "--pixel", "--boxes", "oriented_bbox")
    assert code == 2 and "--concave-obb" in err and not out.exists()
    code, err, out = _main(tmp_path, capsys, "--pixel", "--boxes", "oriented_bbox",
                           "--concave-obb")
    assert code == 0, err


def test_a_write_that_fails_is_named_by_the_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An output in a folder that does not exist: exit 2, the command named. Kills
    ``emit(None, ...)`` (mutant 108)."""
    _run(tmp_path)
    code, err, _ = _main(tmp_path, capsys, "--pixel", out="no/such/folder/out.geojson")
    assert code == 2 and err.startswith("python -m ovearth_core.export geojson: "), err


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as err:
        export.build_parser().parse_args(argv)
    assert err.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_the_help_says_each_options_meaning_and_default(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The help is the command's documentation: its program name, what it writes, and for
    each of its own options what it does and its default. Kills ``build_parser``'s text
    mutants (prog, description, each help and metavar)."""
    top = _help(["--help"], capsys)
    assert top.startswith("usage: python -m ovearth_core.export ")
    assert ("every GT object and predicted box, with its outcome, as GeoJSON for a GIS "
            "(QGIS, geopandas).") in top
    assert "Coordinates" not in top  # the first paragraph only
    assert "geojson GT and predicted boxes with their outcomes as GeoJSON" in top
    sub = _help(["geojson", "--help"], capsys)
    assert sub.startswith("usage: python -m ovearth_core.export geojson ")
    for phrase in (
            "--task {vocabulary,referring,reasoning}",
            "--out OUT GeoJSON path (written atomically)",
            "--images IMAGES folder that image_path values are relative to (default: the "
            "ground truth's folder)",
            "--boxes {bbox,oriented_bbox} which boxes to match and write (default bbox)",
            "--crs CRS write every box in this CRS (an EPSG code, e.g. EPSG:32633; default: "
            "WGS84 longitude / latitude, RFC 7946)",
            "--pixel pixel coordinates of every image, georeferenced or not",
            "--image PATH only the boxes of this image (an image_path of the ground truth; "
            "repeatable)"):
        assert phrase in sub, phrase


def test_the_parser_needs_a_command_and_a_known_task(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    """Kills ``add_subparsers(required=...)`` and ``--task``'s ``choices`` mutants."""
    for argv in ([], ["geojson", "--gt", "g", "--predictions", "p", "--task", "bogus",
                      "--out", "o"]):
        with pytest.raises(SystemExit) as err:
            export.build_parser().parse_args(argv)
        assert err.value.code == 2
