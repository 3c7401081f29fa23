"""Converters read image sizes from the TIFFs satellite scenes come as: 16-bit, 4 or more bands
(multispectral), tiled, BigTIFF. Pillow cannot open a 16-bit RGB(+NIR) TIFF at all; rasterio
(GDAL) can. The size comes from the header, no pixels decoded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import rasterio
from convert_helpers import DATA
from rasterio.transform import from_origin

from ovearth_core.convert import from_dota
from ovearth_core.convert.common import image_size


def _bigtiff(path: Path, width: int, height: int, bands: int = 4, dtype: str = "uint16"
             ) -> Path:
    with rasterio.open(path, "w", driver="GTiff", width=width, height=height, count=bands,
                       dtype=dtype, BIGTIFF="YES", tiled=True, blockxsize=16, blockysize=16,
                       compress="deflate", crs="EPSG:32633",
                       transform=from_origin(500000.0, 4000000.0, 0.5, 0.5)) as out:
        out.write(np.full((bands, height, width), 90, dtype=dtype))
    assert path.read_bytes()[:4] in (b"II+\x00", b"MM\x00+"), "not written as BigTIFF"
    return path


@pytest.mark.parametrize(("bands", "dtype"), [(4, "uint16"), (3, "uint16"), (8, "uint16"),
                                              (3, "uint8"), (1, "float32")])
def test_image_size_of_a_bigtiff(tmp_path: Path, bands: int, dtype: str) -> None:
    path = _bigtiff(tmp_path / "scene.tif", 123, 77, bands, dtype)
    assert image_size(path) == (123, 77)


def test_image_size_of_a_non_image_still_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tif"
    bad.write_bytes(b"II+\x00" + b"\x00" * 20)  # a BigTIFF signature, no valid header
    with pytest.raises(OSError):
        image_size(bad)


def test_from_dota_with_a_bigtiff_scene(tmp_path: Path) -> None:
    src = DATA / "dota"
    images = tmp_path / "images"
    images.mkdir()
    for path in sorted((src / "images").iterdir()):
        with rasterio.open(path) as ds:  # the sample's own sizes, written as BigTIFF
            _bigtiff(images / f"{path.stem}.tif", ds.width, ds.height)
    labels = tmp_path / "labelTxt"
    shutil.copytree(src / "labelTxt", labels)
    out = tmp_path / "bench"
    from_dota(labels, images, out, [src / "results" / "model_a"])
    gt = json.loads((out / "ground_truth.json").read_text())
    sizes = {Path(a["image_path"]).stem: (a["width"], a["height"]) for a in gt["annotations"]}
    expected = {}
    for path in sorted((src / "images").iterdir()):
        with rasterio.open(path) as ds:
            expected[path.stem] = (ds.width, ds.height)
    assert sizes == expected


def test_image_size_of_a_folder_is_an_os_error(tmp_path: Path) -> None:
    folder = tmp_path / "scene.tif"
    folder.mkdir()
    with pytest.raises(OSError, match="folder"):
        image_size(folder)
