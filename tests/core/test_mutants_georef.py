"""Conventions of ``ovearth_core.georef`` that mutation testing found unpinned (issue 47):
a rotated or sheared transform (every term of the affine map, rasterio's order, checked
against ``rasterio.Affine``), and an annotation grid of another size (a pixel of the
annotation is ``W / width`` image pixels wide, and the origin stays the top-left corner)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from rasterio import Affine

from ovearth_core.georef import Georef, NoLonLat, _one_turn

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
