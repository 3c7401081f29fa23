"""The GSD and image-metadata slices of ``ovearth_core.analysis.slices`` (issue 47, item 3:
the GSD code outside ``georef.py``), called directly. Bins and memberships worked by hand;
a GeoTIFF's GSD by hand on UTM 33N's central meridian (scale factor 0.9996).

Each test names the mutants it was written for (the functions ``_bin``, ``query_values``'s
meta branch, ``_meta_values``, ``_meta_text``, ``needs_meta``, ``image_meta`` and
``image_meta_of``)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import rasterio
from rasterio import Affine

from ovearth_core.analysis.slices import (
    GSD_BINS,
    _bin,
    image_meta,
    image_meta_of,
    needs_meta,
    query_values,
)

K0 = 0.9996  # UTM's scale factor on the central meridian


def _samples(*ann_ids: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(ann_id=a) for a in ann_ids]


@pytest.mark.parametrize("gsd, name", [
    (0.1, "<0.25 m"), (0.2499, "<0.25 m"), (0.25, "0.25-0.5 m"), (0.4999, "0.25-0.5 m"),
    (0.5, "0.5-1 m"), (1.0, "1-2 m"), (1.9999, "1-2 m"), (2.0, "2-5 m"), (4.999, "2-5 m"),
    (5.0, ">=5 m"), (1e9, ">=5 m"),
])
def test_a_gsd_bin_holds_its_lower_bound_not_its_upper(gsd: float, name: str) -> None:
    """The bins' names say [lower, upper): 0.25 m is "0.25-0.5 m", 5 m is ">=5 m". Kills
    ``_bin``'s ``x < upper`` made ``<=`` and the GSD branch's bins."""
    assert _bin(gsd, GSD_BINS) == name
    assert query_values(_samples("a"), "gsd", meta={"a": {"gsd": gsd}}) == [(name,)]


@pytest.mark.parametrize("value", [None, 0, 0.0, -0.5, float("nan"), float("inf"), True,
                                   "0.3", [0.3]])
def test_a_gsd_that_is_no_positive_finite_number_is_unknown(value: object) -> None:
    """Only a positive finite number (not a boolean, not text) is a GSD. Kills mutants of
    ``_meta_values``'s ``ok`` (each of its four conditions dropped or inverted, ``and``
    made ``or``, ``> 0`` made ``>= 0``)."""
    assert query_values(_samples("a"), "gsd", meta={"a": {"gsd": value}}) == [("unknown",)]


def test_a_gsd_of_an_int_counts_and_each_query_has_its_own() -> None:
    """An integer GSD (3 m) is a number; each query reads its own annotation's; a query
    whose annotation has no metadata at all is unknown; no ``meta`` at all neither fails."""
    meta = {"a": {"gsd": 3}, "b": {"gsd": 0.3}, "c": {"sensor": "GF-2"}}
    assert query_values(_samples("a", "b", "c", "d"), "gsd", meta=meta) == [
        ("2-5 m",), ("0.25-0.5 m",), ("unknown",), ("unknown",)]
    assert query_values(_samples("a"), "gsd") == [("unknown",)]


@pytest.mark.parametrize("value, text", [
    ("GF-2", "GF-2"), (None, "(none)"), (2.0, "2"), (2.5, "2.5"), (7, "7"),
    ({"b": 1, "a": [1, 2]}, '{"a": [1, 2], "b": 1}'), (False, "false"),
])
def test_a_meta_key_slice_is_the_value_as_text(value: object, text: str) -> None:
    """``meta:KEY``: text as it is, a whole float without its ".0", anything else as
    sorted JSON; a missing key or annotation "(none)". Kills ``_meta_text``'s mutants and
    the key taken after the prefix (``attribute[len(META_PREFIX):]``)."""
    meta = {"a": {"sensor": value, "gsd": 9.0}}
    assert query_values(_samples("a", "z"), "meta:sensor", meta=meta) == [(text,), ("(none)",)]


def test_which_attributes_need_the_metadata() -> None:
    assert needs_meta("gsd") and needs_meta("meta:sensor") and needs_meta("meta:")
    assert not needs_meta("category") and not needs_meta("xmeta:sensor")
    assert not needs_meta("gsd2")


def _utm(path: Path, pixel: float, w: int, h: int) -> Path:
    """A w x h scene of ``pixel`` m square pixels centred on 15° E (UTM 33N's meridian)."""
    transform = Affine(pixel, 0.0, 500_000.0 - pixel * w / 2, 0.0, -pixel,
                       4_000_000.0 + pixel * h / 2)
    with rasterio.open(path, "w", driver="GTiff", width=w, height=h, count=1, dtype="uint8",
                       crs="EPSG:32633", transform=transform) as dst:
        dst.write(np.zeros((1, h, w), np.uint8))
    return path


def _ann(ann_id: object, image: object, width: object = 40, height: object = 30,
         meta: object = None) -> dict:
    out = {"id": ann_id, "image_path": image, "width": width, "height": height}
    if meta is not None:
        out["image_meta"] = meta
    return out


def test_the_gsd_comes_from_the_scene_in_the_annotations_frame(tmp_path: Path) -> None:
    """A 40 x 30 scene of 0.5 m pixels: an annotation of the same size has GSD 0.5 / 0.9996;
    one of 20 x 30 (pixels 1 m wide, 0.5 m high) 0.75 / 0.9996; one of 20 x 15 1.0 /
    0.9996: each frame its own value although the image is the same (the cache is keyed
    by image *and* frame). A width that is no integer (``True``, "40") is no frame: the
    scene's own pixels. Kills ``image_meta_of``'s frame and cache-key mutants."""
    _utm(tmp_path / "s.tif", 0.5, 40, 30)
    doc = {"annotations": [_ann("a", "s.tif"), _ann("b", "s.tif", 20, 30),
                           _ann("c", "s.tif", 20, 15), _ann("d", "s.tif", True, 15),
                           _ann("e", "s.tif", "40", 30), _ann("f", "s.tif")]}
    got = image_meta_of(doc, tmp_path, with_gsd=True)
    want = {"a": 0.5, "b": 0.75, "c": 1.0, "d": 0.5, "e": 0.5, "f": 0.5}
    assert set(got) == set(want)
    for k, v in want.items():
        assert got[k] == {"gsd": pytest.approx(v / K0, rel=2e-6)}, k


def test_a_gsd_given_is_kept_and_other_metadata_too(tmp_path: Path) -> None:
    """An annotation's own ``gsd`` (DOTA's header) wins over the scene's; its other keys
    are kept; without ``with_gsd`` no scene is read."""
    _utm(tmp_path / "s.tif", 0.5, 40, 30)
    doc = {"annotations": [_ann("a", "s.tif", meta={"gsd": 0.3, "sensor": "GF-2"}),
                           _ann("b", "s.tif", meta={"sensor": "WV-3"})]}
    got = image_meta_of(doc, tmp_path, with_gsd=True)
    assert got["a"] == {"gsd": 0.3, "sensor": "GF-2"}
    assert got["b"] == {"sensor": "WV-3", "gsd": pytest.approx(0.5 / K0, rel=2e-6)}
    assert image_meta_of(doc, tmp_path) == {"a": {"gsd": 0.3, "sensor": "GF-2"},
                                            "b": {"sensor": "WV-3"}}


def test_annotations_without_a_usable_image_have_no_gsd(tmp_path: Path) -> None:
    """A plain image, a missing file, a path out of the folder, a non-text path: no
    ``gsd`` (unknown), never an error; the metadata object is still there."""
    (tmp_path / "p.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    doc = {"annotations": [_ann("a", "p.png"), _ann("b", "gone.tif"),
                           _ann("c", "../outside.tif"), _ann("d", 7, meta={"k": 1})]}
    assert image_meta_of(doc, tmp_path, with_gsd=True) == {"a": {}, "b": {}, "c": {},
                                                          "d": {"k": 1}}


def test_annotations_are_keyed_by_their_id_as_text_and_junk_is_skipped(tmp_path: Path
                                                                      ) -> None:
    doc = {"annotations": [_ann(12, "x.png", meta={"k": 1}), _ann(None, "x.png"),
                           "not an object", {"image_path": "x.png"},
                           _ann("m", "x.png", meta=["not", "an", "object"])]}
    assert image_meta_of(doc, tmp_path) == {"12": {"k": 1}, "m": {}}
    assert image_meta_of({"annotations": "none"}, tmp_path) == {}
    assert image_meta_of([], tmp_path) == {}


def test_image_meta_reads_the_file_and_finds_images_beside_it(tmp_path: Path) -> None:
    """``image_meta``: the ground truth's folder is the images' root unless one is given."""
    (tmp_path / "data").mkdir()
    (tmp_path / "imgs").mkdir()
    _utm(tmp_path / "data" / "s.tif", 0.5, 40, 30)
    _utm(tmp_path / "imgs" / "s.tif", 2.0, 40, 30)
    gt = tmp_path / "data" / "gt.json"
    gt.write_text(json.dumps({"annotations": [_ann("a", "s.tif")]}))
    assert image_meta(gt, with_gsd=True)["a"]["gsd"] == pytest.approx(0.5 / K0, rel=2e-6)
    assert image_meta(gt, tmp_path / "imgs", with_gsd=True)["a"]["gsd"] == pytest.approx(
        2.0 / K0, rel=2e-6)
    assert image_meta(gt) == {"a": {}}
    assert math.isclose(0.5 / K0, 0.50020008, rel_tol=1e-8)
