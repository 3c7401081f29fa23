"""Conventions of ``ovearth_core.georef`` that mutation testing found unpinned (issue 47):
a rotated or sheared transform (every term of the affine map, rasterio's order, checked
against ``rasterio.Affine``), and an annotation grid of another size (a pixel of the
annotation is ``W / width`` image pixels wide, and the origin stays the top-left corner)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pyproj
import pytest
import rasterio
from PIL import Image
from rasterio import Affine
from rasterio.crs import CRS

from ovearth_core.georef import (
    Georef,
    NoLonLat,
    _first_line,
    _latitudes,
    _one_turn,
    _short,
    coordinate_text,
    coordinate_texts,
    is_tiff,
    map_to_crs,
    pixel_size_m,
    place_in_crs,
    read_georef,
)

# A rotated, sheared, non-square transform: no term is 0, 1 or another's negative.
T = (0.7, -0.3, 500_000.0, 0.2, -0.9, 4_100_000.0)
PIXELS = (np.array([0.0, 1.0, 0.0, 37.5, 400.0]), np.array([0.0, 0.0, 1.0, 12.25, 300.0]))


def _ref(transform: tuple[float, ...], x: np.ndarray, y: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray]:
    affine = Affine(*transform)
    pts = [affine * (float(u), float(v)) for u, v in zip(x, y, strict=True)]
    return np.array([p[0] for p in pts]), np.array([p[1] for p in pts])


def test_to_map_is_rasterios_affine_with_rotation_terms() -> None:
    g = Georef("EPSG:32631", "", 32631, T, 400, 300)
    got = g.to_map(*PIXELS)
    want = _ref(T, *PIXELS)
    np.testing.assert_allclose(got[0], want[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=0, atol=1e-6)


def test_an_overflow_or_nan_is_a_value_for_the_caller_never_a_warning() -> None:
    """Callers check finiteness; the transform itself stays silent (warnings as errors)."""
    g = Georef("EPSG:32631", "", 32631, (1e308, 0.0, 0.0, 0.0, 1.0, 0.0), 4, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, y = g.to_map(np.array([10.0, np.inf]), np.array([0.0, np.nan]))
    assert np.isinf(x[0]) and np.isnan(x[1]) and np.isnan(y[1])


@pytest.mark.parametrize("width, height", [(200, 100), (800, 600), (400, 150)])
def test_an_annotation_grid_of_another_size_maps_to_the_same_ground(width: int,
                                                                    height: int) -> None:
    """Annotation pixel (x, y) is image pixel (x * 400 / width, y * 300 / height)."""
    g = Georef("EPSG:32631", "", 32631, T, 400, 300)
    framed = g.in_frame(width, height)
    assert (framed.width, framed.height) == (width, height)
    x, y = PIXELS
    got = framed.to_map(x, y)
    want = _ref(T, x * 400 / width, y * 300 / height)
    np.testing.assert_allclose(got[0], want[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=0, atol=1e-6)


def test_the_same_grid_or_an_unknown_image_size_keeps_the_transform() -> None:
    g = Georef("EPSG:32631", "", 32631, T, 400, 300)
    assert g.in_frame(400, 300) == g
    unknown = Georef("EPSG:32631", "", 32631, T, 0, 0)
    assert unknown.in_frame(200, 100) == unknown
    half = Georef("EPSG:32631", "", 32631, T, 400, 0)
    assert half.in_frame(200, 100) == half


@pytest.mark.parametrize("ring, want", [
    ([10.0, 20.0], [10.0, 20.0]),
    ([190.0, 200.0], [-170.0, -160.0]),           # one turn east: back by 360
    ([-190.0, -185.0], [170.0, 175.0]),           # one turn west
    ([-181.0, -180.5], [179.0, 179.5]),           # just past -180
    ([550.0, 560.0], [-170.0, -160.0]),           # two turns
    ([1262.0, 1263.0], [-178.0, -177.0]),         # four turns, just past the fourth
    ([0.0, 180.0], [0.0, 180.0]),                 # exactly half a turn wide: kept
    ([-180.0, -170.0], [-180.0, -170.0]),         # on the line: inside [-180, 180]
    ([170.0, 180.0], [170.0, 180.0]),
])
def test_each_ring_is_shifted_by_whole_turns_into_the_range(ring: list[float],
                                                             want: list[float]) -> None:
    out = _one_turn(np.array([ring]), "EPSG:4326")
    np.testing.assert_allclose(out, [want], rtol=0, atol=1e-9)


def test_rings_are_shifted_each_by_its_own_turns() -> None:
    rings = np.array([[10.0, 20.0], [190.0, 200.0], [-190.0, -185.0]])
    out = _one_turn(rings, "EPSG:4326")
    np.testing.assert_allclose(out, [[10, 20], [-170, -160], [170, 175]], rtol=0, atol=1e-9)


@pytest.mark.parametrize("ring, shown", [
    ([170.0, 190.0], "170° to 190°"),              # across +180
    ([-180.0, 180.0], "-180° to 180°"),            # wider than half a turn
    ([-180.5, -170.5], "-180.5° to -170.5°"),      # across -180
    ([-100.0, 80.5], "-100° to 80.5°"),            # just over half a turn wide
    ([170.0, 180.5], "170° to 180.5°"),            # just across +180
])
def test_a_ring_across_the_antimeridian_is_refused_naming_its_longitudes(
        ring: list[float], shown: str) -> None:
    with pytest.raises(NoLonLat) as err:
        _one_turn(np.array([[10.0, 20.0], ring]), "EPSG:4326")
    assert str(err.value) == (
        f"a box crossing the antimeridian in EPSG:4326 (longitudes {shown}; RFC 7946 asks "
        "for such a polygon cut in two, which this export does not do)")


# --- captions, messages and domains (issue 47, second pass) -------------------------------
# References: rasterio's ``Affine`` for the map coordinates, pyproj's ``Transformer``
# (``always_xy``: longitude first) for WGS84, hand-written strings for the messages.

UTM33_WKT = CRS.from_epsg(32633).to_wkt()
LOCAL = ('LOCAL_CS["site grid",LOCAL_DATUM["site",0],UNIT["metre",1],AXIS["x",EAST],'
         'AXIS["y",NORTH]]')
# Rotated, sheared, non-square, away from the origin: a swapped or dropped term moves
# every point by metres, so every caption digit tells.
T33 = (0.7, -0.3, 500_123.0, 0.2, -0.9, 4_000_456.0)


def _lonlat(crs: str, mx: np.ndarray, my: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lon, lat = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True).transform(mx, my)
    return np.asarray(lon), np.asarray(lat)


def test_a_caption_is_the_map_position_then_lon_lat_by_hand() -> None:
    """Pixel (50, 20) of a 0.5 m UTM 33N grid from (500,000, 4,000,000): X 500,025, Y
    3,999,990 (x right, y down), then WGS84 longitude first, six decimals. Kills mutants of
    ``coordinate_text`` (the wrong element, a dropped argument) and of the caption format."""
    g = Georef("EPSG:32633", UTM33_WKT, 32633, (0.5, 0.0, 500_000.0, 0.0, -0.5, 4_000_000.0),
               1000, 1000)
    lon, lat = _lonlat("EPSG:32633", np.array([500_025.0]), np.array([3_999_990.0]))
    assert 15.0 < lon[0] < 15.001 and 36.14 < lat[0] < 36.15  # lon first, not lat
    assert coordinate_text(g, 50.0, 20.0) == (
        f"EPSG:32633 X 500,025.00, Y 3,999,990.00 · lon {lon[0]:.6f}°, lat {lat[0]:.6f}°")


def test_captions_of_many_points_keep_each_points_own_position() -> None:
    """Five pixels of a rotated transform, one caption each, in order: the map X / Y of each
    (rasterio's ``Affine``), its lon / lat (pyproj). Kills mutants of ``coordinate_texts``
    that pair a point with another's values, swap X and Y or lon and lat, or drop a term."""
    g = Georef("EPSG:32633", UTM33_WKT, 32633, T33, 400, 300)
    x, y = PIXELS
    mx, my = _ref(T33, x, y)
    lon, lat = _lonlat("EPSG:32633", mx, my)
    got = coordinate_texts(g, x, y)
    assert got == [f"EPSG:32633 X {a:,.2f}, Y {b:,.2f} · lon {c:.6f}°, lat {d:.6f}°"
                   for a, b, c, d in zip(mx, my, lon, lat, strict=True)]
    assert len(set(got)) == 5


def test_a_crs_without_a_code_is_named_map_and_has_no_wgs84_position() -> None:
    """A LOCAL_CS site grid (no EPSG code, no datum): the caption calls its coordinates
    "map" (not the WKT), and says why there is no longitude / latitude, for every point.
    Kills ``coordinate_texts``: the name's condition, the no-position branch's format and pairs;
    ``coordinate_text``'s element and arguments."""
    g = Georef(LOCAL, LOCAL, None, (2.0, 0.0, 1_000.0, 0.0, -3.0, 20_000.0), 100, 100)
    why = ("the CRS 'site grid' (LOCAL_CS) cannot be transformed to EPSG:4326: Cannot find "
           "coordinate operations")
    assert coordinate_texts(g, [10.0, 0.5], [4.0, 1_000.0]) == [
        f"map X 1,020.00, Y 19,988.00 · no WGS84 position ({why})",
        f"map X 1,001.00, Y 17,000.00 · no WGS84 position ({why})"]
    assert coordinate_text(g, 0.0, 0.0) == (
        f"map X 1,000.00, Y 20,000.00 · no WGS84 position ({why})")


def test_a_coded_crs_outside_its_domain_keeps_its_code_in_the_caption() -> None:
    """EPSG:32633 at X 10^9 m (outside the projection's domain): its code names the map
    coordinates; no WGS84 position, and GDAL's reason.
    Kills ``coordinate_texts``: ``name = "map"`` always, ``epsg is None``."""
    g = Georef("EPSG:32633", UTM33_WKT, 32633, (1e8, 0.0, 0.0, 0.0, -1.0, 0.0), 10, 10)
    utm = "the CRS 'WGS 84 / UTM zone 33N' (PROJCS)"
    # GDAL either refuses the point or answers with infinities (which one depends on what
    # the process asked it before): both are "no WGS84 position", with the reason
    assert coordinate_texts(g, [10.0], [0.0])[0] in (
        f"EPSG:32633 X 1,000,000,000.00, Y 0.00 · no WGS84 position ({utm} cannot be "
        "transformed to EPSG:4326: Point outside of projection domain)",
        f"EPSG:32633 X 1,000,000,000.00, Y 0.00 · no WGS84 position (points outside the "
        f"domain of {utm} (no position in EPSG:4326))")


@pytest.mark.parametrize("crs, short", [
    ("EPSG:4326", "EPSG:4326"),
    (LOCAL, "the CRS 'site grid' (LOCAL_CS)"),
    ('PROJCS["a","b"]', "the CRS 'a' (PROJCS)"),
    ('ENGCRS["site"]', "the CRS 'site' (ENGCRS)"),  # exactly two quotes: a name
    # one quote only: the first 60 characters stand for the name
    ('ENGCRS["' + "x" * 70, "the CRS " + repr('ENGCRS["' + "x" * 52) + " (ENGCRS)"),
    ("epsg:4326", "the CRS 'epsg:4326' (epsg:4326)"),  # only "EPSG:" is a code as given
])
def test_a_crs_in_a_message_is_its_code_or_its_wkt_name(crs: str, short: str) -> None:
    """``_short``: a code as given; else the WKT's name (the first quoted text, or the first
    60 characters when there is none) and its kind (the text before the first "[").
    Kills ``_short`` mutants (the prefix, the split character and index, ``>= 2`` made ``> 2`` /
    ``>= 3`` (12, 13), the 60)."""
    assert _short(crs) == short


@pytest.mark.parametrize("message, line", [
    ("Point outside of projection domain", "Point outside of projection domain"),
    ("first line\nsecond line", "first line"),
    # GDAL quotes a CRS as PROJJSON: the caller names it, the message keeps its head
    ("Cannot find coordinate operations from '{\n \"type\": \"EngineeringCRS\"}' to "
     "'EPSG:4326'", "Cannot find coordinate operations"),
    ("bad value '{x}' here", "bad value"),
    ("it's fine, no JSON from 'here'", "it's fine, no JSON from 'here'"),
    ("y" * 160, "y" * 160),
    ("z" * 161, "z" * 157 + "..."),
])
def test_gdals_message_is_its_first_line_without_projjson_and_at_most_160(
        message: str, line: str) -> None:
    """Kills ``_first_line`` mutants (the line index, the ``'{`` test, the two splits,
    ``strip``, the 160 / 157 boundary and the ellipsis)."""
    assert _first_line(RuntimeError(message)) == line


def test_an_empty_message_is_the_errors_kind() -> None:
    """Kills ``_first_line``: the empty-message branch."""
    assert _first_line(KeyError()) == "KeyError"
    assert _first_line(ValueError("")) == "ValueError"


@pytest.mark.parametrize("lat", [[90.0, -90.0, 0.0], [], [89.999999]])
def test_latitudes_up_to_90_pass(lat: list[float]) -> None:
    """Kills ``_latitudes``: ``> 90`` made ``>= 90``, ``np.abs`` dropped (with the next test),
    an empty array's ``np.max``."""
    _latitudes(np.array(lat), "EPSG:4326")  # no exception


@pytest.mark.parametrize("lat, worst", [([10.0, 90.5, -3.0], "90.5"),
                                        ([-91.25, 0.0], "91.25"),
                                        ([90.0000001], "90")])
def test_latitudes_beyond_90_either_way_are_refused_naming_the_worst(
        lat: list[float], worst: str) -> None:
    """Kills ``_latitudes``: ``> 91``, ``np.min``, the message and its format."""
    with pytest.raises(NoLonLat) as err:
        _latitudes(np.array(lat), "EPSG:4258")
    assert str(err.value) == f"latitudes beyond ±90° in EPSG:4258 (up to {worst}°)"


@pytest.mark.parametrize("mx, my", [([1.0, np.nan], [2.0, 3.0]), ([1.0, 2.0], [np.inf, 3.0]),
                                    ([-np.inf], [np.nan])])
def test_map_coordinates_that_are_not_finite_are_refused_before_gdal(mx: list[float],
                                                                     my: list[float]) -> None:
    """One NaN or infinity in either coordinate is enough (``or``, not ``and``).
    Kills ``map_to_crs``: ``and`` for ``or``, one check dropped, the message."""
    with pytest.raises(NoLonLat) as err:
        map_to_crs("EPSG:32633", "EPSG:4326", np.array(mx), np.array(my))
    assert str(err.value) == "map coordinates that are not finite numbers, in EPSG:32633"


def test_no_points_give_no_points_of_the_same_shape() -> None:
    """Kills ``map_to_crs``: ``if mx.size`` inverted, the copies."""
    mx, my = np.zeros((0, 5)), np.zeros((0, 5))
    x, y = map_to_crs("EPSG:32633", "EPSG:4326", mx, my)
    assert x.shape == y.shape == (0, 5)
    assert x is not mx and y is not my  # fresh arrays: the caller may write to them


def test_a_grid_of_points_keeps_its_shape_and_each_points_position() -> None:
    """``(2, 3)`` points: longitude in x, latitude in y, each at its own place (pyproj).
    Kills ``map_to_crs``: ``src`` / ``dst`` swapped or dropped, ``mx`` / ``my`` swapped, the
    reshape to the other's shape."""
    mx = np.array([[500_000.0, 510_000.0, 520_000.0], [400_000.0, 300_000.0, 600_000.0]])
    my = np.array([[4_000_000.0, 4_100_000.0, 4_200_000.0], [5_000_000.0, 3_000_000.0,
                                                             1_000_000.0]])
    x, y = map_to_crs("EPSG:32633", "EPSG:4326", mx, my)
    lon, lat = _lonlat("EPSG:32633", mx, my)
    assert x.shape == y.shape == (2, 3) and x.dtype == y.dtype == np.float64
    np.testing.assert_allclose(x, lon, rtol=0, atol=1e-9)
    np.testing.assert_allclose(y, lat, rtol=0, atol=1e-9)


def test_a_crs_gdal_cannot_transform_is_named_with_gdals_reason() -> None:
    """Kills ``map_to_crs``: the message, ``from None`` dropped."""
    with pytest.raises(NoLonLat) as err:
        map_to_crs(LOCAL, "EPSG:4326", np.array([1.0]), np.array([2.0]))
    assert str(err.value) == ("the CRS 'site grid' (LOCAL_CS) cannot be transformed to "
                              "EPSG:4326: Cannot find coordinate operations")
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_a_position_gdal_gives_as_infinite_is_outside_the_domain(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """GDAL (here a stand-in) answering with an infinite latitude for one point: refused,
    naming both CRSs; a finite answer for every point passes.
    Kills ``map_to_crs``: the result's finiteness check (``and``, one side dropped) and its
    message."""
    import ovearth_core.georef as georef

    def fake(src, dst, xs, ys):  # noqa: ANN001, ANN202
        return [float(v) for v in xs], [np.inf if v > 1 else float(v) for v in ys]

    monkeypatch.setattr(georef, "warp_transform", fake)
    x, y = map_to_crs("EPSG:3857", "EPSG:4326", np.array([5.0, 6.0]), np.array([0.5, 1.0]))
    np.testing.assert_array_equal(x, [5.0, 6.0])
    np.testing.assert_array_equal(y, [0.5, 1.0])
    for mx, my in (([5.0, 6.0], [0.5, 2.0]), ([5.0], [3.0])):
        with pytest.raises(NoLonLat) as err:
            map_to_crs("EPSG:3857", "EPSG:4326", np.array(mx), np.array(my))
        assert str(err.value) == ("points outside the domain of EPSG:3857 (no position in "
                                  "EPSG:4326)")
    monkeypatch.setattr(georef, "warp_transform",
                        lambda s, d, xs, ys: ([np.nan] * len(xs), list(ys)))
    with pytest.raises(NoLonLat, match="points outside the domain"):
        map_to_crs("EPSG:3857", "EPSG:4326", np.array([5.0]), np.array([0.5]))


# place_in_crs: rings (N, K) of map coordinates placed in the target, each domain checked.

def test_a_geographic_scene_over_the_pole_is_refused_even_without_a_transformation() -> None:
    """Latitudes of a geographic source are checked before anything else, also when the
    target is the same CRS, and when it is a projected one.
    Kills ``place_in_crs``: the source's latitude check dropped, its CRS name."""
    for dst in ("EPSG:4326", "EPSG:3857"):
        with pytest.raises(NoLonLat) as err:
            place_in_crs("EPSG:4326", dst, np.array([[10.0, 11.0]]), np.array([[89.0, 90.5]]),
                         0.01)
        assert str(err.value) == "latitudes beyond ±90° in EPSG:4326 (up to 90.5°)"


def test_the_same_crs_gives_the_points_back_unchanged() -> None:
    """Kills ``place_in_crs``: the unchanged branch swapping ``mx`` and ``my``."""
    mx, my = np.array([[300_000.0, 700_000.25]]), np.array([[4_000_000.0, 5_000_000.5]])
    x, y = place_in_crs("EPSG:32633", "EPSG:32633", mx, my, 0.0)
    np.testing.assert_array_equal(x, mx)
    np.testing.assert_array_equal(y, my)


def test_points_that_are_not_finite_are_refused_in_the_same_crs_too() -> None:
    """Kills ``place_in_crs``: its finiteness check (``and``, one side dropped), the message."""
    with pytest.raises(NoLonLat) as err:
        place_in_crs("EPSG:32633", "EPSG:32633", np.array([[1.0, 2.0]]),
                     np.array([[np.nan, 3.0]]), 0.01)
    assert str(err.value) == "map coordinates that are not finite numbers, in EPSG:32633"
    with pytest.raises(NoLonLat, match="not finite"):
        place_in_crs("EPSG:32633", "EPSG:32633", np.array([[np.inf]]), np.array([[3.0]]),
                     0.01)


def test_a_projected_scene_exactly_given_back_passes_a_zero_tolerance() -> None:
    """Web Mercator to WGS84 and back is exact at the origin and on the equator: ``off``
    is 0, which a tolerance of 0 allows (``<=``).
    Kills ``place_in_crs``: ``off <= tolerance`` made ``<``."""
    x, y = place_in_crs("EPSG:3857", "EPSG:4326", np.array([[0.0, 0.0]]),
                        np.array([[0.0, 0.0]]), 0.0)
    np.testing.assert_array_equal(x, [[0.0, 0.0]])
    np.testing.assert_array_equal(y, [[0.0, 0.0]])


def test_no_rings_pass_whatever_the_tolerance() -> None:
    """Kills ``place_in_crs``: ``else 0.0`` made ``1.0``, ``if mx.size`` inverted."""
    x, y = place_in_crs("EPSG:32633", "EPSG:4326", np.zeros((0, 5)), np.zeros((0, 5)), 0.5)
    assert x.shape == y.shape == (0, 5)


def test_a_projection_whose_inverse_lands_elsewhere_is_refused_with_the_distance() -> None:
    """Equidistant cylindrical (EPSG:4087) at X 25,000 km: beyond the world's width, GDAL's
    longitude wraps, so the inverse lands one equator (40,075 km) west: refused, the
    distance said (pyproj's equator length is the reference).
    Kills ``place_in_crs``: the round trip dropped or reversed (``dst``, ``src``), ``np.min``,
    ``bx - my``, the message and its format."""
    equator = 2 * np.pi * 6_378_137.0
    with pytest.raises(NoLonLat) as err:
        place_in_crs("EPSG:4087", "EPSG:4326", np.array([[24_000_000.0, 25_000_000.0]]),
                     np.array([[0.0, 0.0]]), 0.01)
    assert str(err.value) == ("points outside the domain of EPSG:4087: its inverse projection "
                              f"does not give them back (off by {equator:.6g} map units)")


def test_the_tolerance_is_in_map_units_of_the_source() -> None:
    """Within the domain a round trip is off by far less than a millimetre: a hundredth
    of a 0.5 m pixel passes in zone 33 far west of its meridian, as does a tolerance of a
    micrometre.
    Kills ``place_in_crs``: the round trip compared with the wrong points."""
    mx, my = np.array([[-1_000_000.0, 900_000.0]]), np.array([[5_000_000.0, 6_000_000.0]])
    for tol in (0.005, 1e-6):
        x, y = place_in_crs("EPSG:32633", "EPSG:4326", mx, my, tol)
        lon, lat = _lonlat("EPSG:32633", mx, my)
        np.testing.assert_allclose(x, lon, rtol=0, atol=1e-9)
        np.testing.assert_allclose(y, lat, rtol=0, atol=1e-9)


@pytest.mark.parametrize("dst", ["EPSG:4326", "EPSG:4258"])
def test_a_geographic_target_gets_each_ring_in_one_turn(dst: str) -> None:
    """A scene in the 0-360° convention placed in a geographic target: each ring shifted by
    whole turns (the first 360° west, the second not at all), the latitudes kept.
    Kills ``place_in_crs``: ``_one_turn`` not applied, applied to ``y``."""
    mx = np.array([[190.0, 190.5, 190.5, 190.0], [10.0, 10.5, 10.5, 10.0]])
    my = np.array([[40.0, 40.0, 40.5, 40.5], [-40.0, -40.0, -40.5, -40.5]])
    x, y = place_in_crs("EPSG:4326", dst, mx, my, 0.01)
    want = pyproj.Transformer.from_crs("EPSG:4326", dst, always_xy=True).transform(mx - [[360],
                                                                                          [0]],
                                                                                   my)
    np.testing.assert_allclose(x, want[0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(y, want[1], rtol=0, atol=1e-9)


def test_a_geographic_target_refuses_a_ring_across_the_antimeridian() -> None:
    """UTM zone 1N near its west edge (X 166 km, beyond 180° W for the northern rows): the
    ring in WGS84 crosses the antimeridian, refused naming the target.
    Kills ``place_in_crs``: ``_one_turn``'s CRS name."""
    mx = np.array([[100_000.0, 500_000.0]])
    my = np.array([[7_000_000.0, 7_000_000.0]])
    lon, _ = _lonlat("EPSG:32601", mx, my)
    assert lon[0, 0] > 0 > lon[0, 1]  # pyproj: the first point is east of 180° W (wrapped)
    with pytest.raises(NoLonLat) as err:
        place_in_crs("EPSG:32601", "EPSG:4326", mx, my, 0.01)
    assert str(err.value).startswith("a box crossing the antimeridian in EPSG:4326")


def test_a_projected_target_has_no_latitude_rule_and_no_turns() -> None:
    """A projected target's coordinates are metres: no ±90 rule (Y 9,000 km passes), no
    shift by whole turns (X 500 km stays), and a transformation between two projected CRSs
    is pyproj's.
    Kills ``place_in_crs``: ``is_geographic`` made ``is_projected`` / negated."""
    x, y = place_in_crs("EPSG:3857", "EPSG:3395", np.array([[0.0, 100.0]]),
                        np.array([[0.0, 100.0]]), 0.01)
    want = pyproj.Transformer.from_crs("EPSG:3857", "EPSG:3395", always_xy=True).transform(
        [0.0, 100.0], [0.0, 100.0])
    np.testing.assert_allclose(x, [want[0]], rtol=0, atol=1e-6)
    np.testing.assert_allclose(y, [want[1]], rtol=0, atol=1e-6)
    x, y = place_in_crs("EPSG:32633", "EPSG:32633", np.array([[500_000.0]]),
                        np.array([[9_000_000.0]]), 0.01)
    assert (x[0, 0], y[0, 0]) == (500_000.0, 9_000_000.0)


# read_georef and the ground sample distance: real GeoTIFFs written by rasterio.

def _write(path: Path, crs: object, transform: Affine | None, w: int = 40, h: int = 30) -> Path:
    profile = {"driver": "GTiff", "width": w, "height": h, "count": 1, "dtype": "uint8"}
    if crs is not None:
        profile["crs"] = crs
    if transform is not None:
        profile["transform"] = transform
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rasterio's NotGeoreferencedWarning
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(np.zeros((1, h, w), np.uint8))
    return path


def test_read_georef_keeps_every_term_of_a_rotated_transform_and_the_size(
        tmp_path: Path) -> None:
    """A 40 x 30 scene with a rotated, sheared transform: the Georef holds rasterio's terms
    in rasterio's order (a, b, c, d, e, f), the code and its WKT, the size (width first).
    Kills ``read_georef``: a term or the size dropped or swapped, ``epsg`` made ``None``, the
    code's condition."""
    path = _write(tmp_path / "r.tif", "EPSG:32633", Affine(*T33))
    g = read_georef(path)
    assert g == Georef("EPSG:32633", UTM33_WKT, 32633, T33, 40, 30)


def test_read_georef_of_a_crs_without_a_code_is_its_wkt(tmp_path: Path) -> None:
    """Kills ``read_georef``: ``epsg is not None`` made ``is None`` / always true."""
    path = _write(tmp_path / "l.tif", CRS.from_wkt(LOCAL), Affine(2.0, 0.0, 1.0, 0.0, -3.0, 9.0))
    g = read_georef(path)
    assert g is not None and g.epsg is None and g.crs == g.wkt
    assert g.wkt.startswith('LOCAL_CS["site grid"')
    assert g.transform == (2.0, 0.0, 1.0, 0.0, -3.0, 9.0) and (g.width, g.height) == (40, 30)


def test_read_georef_none_without_tiff_crs_or_transform(tmp_path: Path) -> None:
    """A PNG, a TIFF without a CRS (but with a transform), a TIFF with a CRS but only the
    identity transform: not georeferenced.
    Kills ``read_georef``: ``not is_tiff`` dropped, ``or`` made ``and`` (5), the identity test."""
    Image.new("L", (8, 8)).save(tmp_path / "p.png")
    assert read_georef(tmp_path / "p.png") is None
    assert read_georef(_write(tmp_path / "n.tif", None, Affine(*T33))) is None
    assert read_georef(_write(tmp_path / "i.tif", "EPSG:32633", Affine.identity())) is None


def test_read_georef_refuses_a_geotransform_that_is_not_finite(tmp_path: Path) -> None:
    """Kills ``read_georef``: the finiteness check and its message."""
    path = _write(tmp_path / "nan.tif", "EPSG:32633",
                  Affine(0.5, 0.0, 500_000.0, 0.0, float("nan"), 4_000_000.0))
    with pytest.raises(ValueError) as err:
        read_georef(path)
    assert str(err.value) == ("a geotransform that is not finite (expected finite numbers): "
                              "(0.5, 0.0, 500000.0, 0.0, nan, 4000000.0)")


# GSD by hand. UTM 33N on its central meridian (15° E) has scale factor 0.9996, so a grid
# metre is 1 / 0.9996 ground metres in every direction there.
K0 = 0.9996


def _utm_scene(tmp_path: Path, a: float, b: float, d: float, e: float,
               w: int = 40, h: int = 30) -> Path:
    # the centre pixel (w / 2, h / 2) on the central meridian X = 500,000 at 4,000 km N
    c = 500_000.0 - a * w / 2 - b * h / 2
    f = 4_000_000.0 - d * w / 2 - e * h / 2
    return _write(tmp_path / "u.tif", "EPSG:32633", Affine(a, b, c, d, e, f), w, h)


def test_gsd_of_a_rotated_asymmetric_pixel_by_hand(tmp_path: Path) -> None:
    """A pixel rotated by atan(4/3): its width is the vector (a, d) = (0.3, 0.4), 0.5 grid m,
    its height (b, e) = (1.2, -0.9), 1.5 grid m: GSD the mean, 1.0 / 0.9996 m (not a, not
    e, not the width or height alone).
    Kills ``ground_sample_distance``: a point index or offset, one side alone."""
    got = pixel_size_m(_utm_scene(tmp_path, 0.3, 1.2, 0.4, -0.9))
    assert got == pytest.approx(1.0 / K0, rel=2e-6)


def test_gsd_of_the_pixels_of_an_annotation_of_another_size(tmp_path: Path) -> None:
    """A 40 x 30 scene of 0.5 m pixels under a 20 x 30 annotation: its pixels are 1.0 m
    wide and 0.5 m high, GSD 0.75 / 0.9996 m; with only one of width / height given the
    scene's own pixels count (0.5 / 0.9996).
    Kills ``pixel_size_m``: ``and`` made ``or``, ``in_frame`` dropped or given ``(height,
    width)``."""
    path = _utm_scene(tmp_path, 0.5, 0.0, 0.0, -0.5)
    assert pixel_size_m(path, 20, 30) == pytest.approx(0.75 / K0, rel=2e-6)
    assert pixel_size_m(path, 40, 15) == pytest.approx(0.75 / K0, rel=2e-6)
    assert pixel_size_m(path) == pytest.approx(0.5 / K0, rel=2e-6)
    assert pixel_size_m(path, 20, None) == pytest.approx(0.5 / K0, rel=2e-6)
    assert pixel_size_m(path, None, 15) == pytest.approx(0.5 / K0, rel=2e-6)


def test_gsd_of_a_geographic_scene_is_degrees_at_its_latitude_by_hand(tmp_path: Path) -> None:
    """1e-5° x 3e-5° pixels centred at 48° N: one degree of longitude is
    (pi / 180) N cos(lat) on the WGS84 ellipsoid, one of latitude (pi / 180) M, with N and
    M its radii of curvature: GSD the mean of the pixel's two lengths."""
    lat = math.radians(48.0)
    a, f = 6_378_137.0, 1 / 298.257223563
    e2 = f * (2 - f)
    n = a / math.sqrt(1 - e2 * math.sin(lat) ** 2)
    m = a * (1 - e2) / (1 - e2 * math.sin(lat) ** 2) ** 1.5
    width, height = math.radians(1e-5) * n * math.cos(lat), math.radians(3e-5) * m
    w, h = 40, 30
    path = _write(tmp_path / "g.tif", "EPSG:4326",
                  Affine(1e-5, 0.0, 11.0 - 1e-5 * w / 2, 0.0, -3e-5, 48.0 + 3e-5 * h / 2), w, h)
    assert pixel_size_m(path) == pytest.approx((width + height) / 2, rel=1e-6)


def test_gsd_of_a_scene_in_us_feet_is_in_metres(tmp_path: Path) -> None:
    """EPSG:2263 (NAD83 / New York Long Island, US survey feet): a 2 ft x 1 ft pixel is
    about 0.4572 m on average (1 ft = 1200 / 3937 m), within the projection's scale
    (1 +- 1e-4 there, pyproj's factor the reference).
    Kills ``ground_sample_distance``: the ellipsoid."""
    w, h = 40, 30
    path = _write(tmp_path / "f.tif", "EPSG:2263",
                  Affine(2.0, 0.0, 980_000.0, 0.0, -1.0, 200_000.0), w, h)
    proj = pyproj.Proj("EPSG:2263")
    lon, lat = pyproj.Transformer.from_crs("EPSG:2263", "EPSG:4326", always_xy=True).transform(
        980_000.0 + w, 200_000.0 - h / 2)
    k = proj.get_factors(lon, lat).meridional_scale
    assert pixel_size_m(path) == pytest.approx(1.5 * 1200 / 3937 / k, rel=1e-5)


def test_gsd_of_a_site_grid_or_a_scene_outside_the_domain_is_none(tmp_path: Path) -> None:
    """Kills ``pixel_size_m``: the ``NoLonLat`` branch."""
    local = _write(tmp_path / "l.tif", CRS.from_wkt(LOCAL), Affine(2.0, 0.0, 1.0, 0.0, -3.0, 9.0))
    assert pixel_size_m(local) is None
    assert pixel_size_m(local, 20, 15) is None
    far = _write(tmp_path / "far.tif", "EPSG:32633",
                 Affine(1.0, 0.0, 30_000_000.0, 0.0, -1.0, 1_000_000.0))
    assert pixel_size_m(far) is None


def test_a_geographic_source_is_not_checked_by_a_round_trip() -> None:
    """Only a projected source's domain is checked by its inverse; a geographic one's is
    its latitudes. WGS84 to UTM and back is off by about 1e-15° (pyproj), which a
    tolerance of 0 would refuse: a geographic source passes it. Kills ``place_in_crs``'s
    ``is_projected or not same``."""
    lon, lat = np.array([[15.123456789]]), np.array([[45.987654321]])
    there = pyproj.Transformer.from_crs("EPSG:4326", "EPSG:32633", always_xy=True)
    back = there.transform(*there.transform(lon, lat), direction="INVERSE")
    assert np.hypot(back[0] - lon, back[1] - lat).max() > 0  # the round trip is not exact
    x, y = place_in_crs("EPSG:4326", "EPSG:32633", lon, lat, 0.0)
    want = there.transform(lon, lat)
    np.testing.assert_allclose(x, want[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(y, want[1], rtol=0, atol=1e-6)


def test_latitudes_beyond_90_in_a_geographic_target_name_the_target(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """GDAL (a stand-in here) placing a projected scene's point at 95° N in EPSG:4326 and
    giving it back exactly: refused by the target's latitude rule, naming the target.
    Kills ``_latitudes(y, None)`` (a crash instead of the message)."""
    import ovearth_core.georef as georef

    def fake(src, dst, mx, my):  # noqa: ANN001, ANN202
        return (mx, np.full_like(my, 95.0)) if dst == "EPSG:4326" else (mx, np.full_like(
            my, 4_000_000.0))

    monkeypatch.setattr(georef, "map_to_crs", fake)
    with pytest.raises(NoLonLat) as err:
        place_in_crs("EPSG:32633", "EPSG:4326", np.array([[15.0]]), np.array([[4_000_000.0]]),
                     0.01)
    assert str(err.value) == "latitudes beyond ±90° in EPSG:4326 (up to 95°)"


def test_a_tiff_larger_than_the_upload_limit_is_still_read(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """A scene is read by window, so the upload limit (``OVEARTH_MAX_INPUT_MB``, here 1 MB)
    does not apply to it: a 2 MB GeoTIFF is recognised and georeferenced. Kills ``is_tiff``
    opening it with the default cap (``None`` or no argument)."""
    monkeypatch.setenv("OVEARTH_MAX_INPUT_MB", "1")
    path = tmp_path / "big.tif"
    with rasterio.open(path, "w", driver="GTiff", width=1500, height=1400, count=1,
                       dtype="uint8", crs="EPSG:32633", transform=Affine(*T33)) as dst:
        dst.write(np.arange(1500 * 1400, dtype=np.uint64).reshape(1, 1400, 1500).astype(
            np.uint8))
    assert path.stat().st_size > 2 * 1024 * 1024
    assert is_tiff(path)
    assert read_georef(path) == Georef("EPSG:32633", UTM33_WKT, 32633, T33, 1500, 1400)


def test_gsd_is_measured_at_the_scenes_centre_by_hand(tmp_path: Path) -> None:
    """A geographic scene turned a quarter turn: pixel x runs south, 0.1° of latitude per
    pixel, pixel y east, 1e-4° of longitude. 400 x 30 pixels from 60° N: the centre pixel
    (200, 15) is at 40° N, where its width is 0.1° of meridian (M, the meridian's radius of
    curvature) and its height 1e-4° of the 40th parallel (N cos(lat)); at 46.7° N or
    beyond the scene the height would differ by 10 % and more."""
    lat = math.radians(40.0)
    a, f = 6_378_137.0, 1 / 298.257223563
    e2 = f * (2 - f)
    n = a / math.sqrt(1 - e2 * math.sin(lat) ** 2)
    m = a * (1 - e2) / (1 - e2 * math.sin(lat) ** 2) ** 1.5
    width, height = math.radians(0.1) * m, math.radians(1e-4) * n * math.cos(lat)
    path = _write(tmp_path / "turned.tif", "EPSG:4326",
                  Affine(0.0, 1e-4, 20.0, -0.1, 0.0, 60.0), 400, 30)
    assert pixel_size_m(path) == pytest.approx((width + height) / 2, rel=1e-5)
