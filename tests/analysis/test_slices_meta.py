"""Slices by ground sample distance and by image metadata (issue 29): ``--slice-by gsd``
(an annotation's ``image_meta.gsd``, DOTA's ``gsd:`` header, else the GeoTIFF's pixel size
in metres) and ``--slice-by meta:KEY``. Memberships worked by hand."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pytest
import rasterio
from app_fixtures import goto
from convert_helpers import DATA
from PIL import Image
from rasterio.transform import from_origin

from ovearth_core.analysis.__main__ import main as analysis_main
from ovearth_core.convert import from_dota

W, H = 64, 48


def _ann(ann_id: str, image: str, meta: dict | None) -> dict:
    out = {"id": ann_id, "image_path": image, "width": W, "height": H,
           "category_name": "plane", "segmentation": None, "bbox": [[10, 10, 20, 20]]}
    if meta is not None:
        out["image_meta"] = meta
    return out


def _dataset(root: Path) -> tuple[Path, Path]:
    """Five images: gsd 0.3 (header), 0.8 (header), a GeoTIFF at 2 m (UTM) and one at
    0.0001 degree (at 40° N: 11.1 m of latitude, 8.5 m of longitude on the ground, issue
    34.5: ">=5 m"), a plain PNG (unknown). Sensors: two "GF-2", two
    "WV-3", one without. q1..q5, one per image; q1, q3 found."""
    Image.new("RGB", (W, H)).save(root / "a.png")
    Image.new("RGB", (W, H)).save(root / "b.png")
    Image.new("RGB", (W, H)).save(root / "e.png")
    for name, crs, transform in (("c.tif", "EPSG:32633", from_origin(5e5, 4e6, 2.0, 2.0)),
                                 ("d.tif", "EPSG:4326", from_origin(10.0, 40.0, 1e-4, 1e-4))):
        with rasterio.open(root / name, "w", driver="GTiff", width=W, height=H, count=1,
                           dtype="uint8", crs=crs, transform=transform) as dst:
            dst.write(np.zeros((1, H, W), np.uint8))
    anns = [_ann("A", "a.png", {"gsd": 0.3, "sensor": "GF-2"}),
            _ann("B", "b.png", {"gsd": 0.8, "sensor": "WV-3"}),
            _ann("C", "c.tif", {"sensor": "GF-2"}), _ann("D", "d.tif", {"sensor": "WV-3"}),
            _ann("E", "e.png", None)]
    gt = {"annotations": anns, "tasks": {"open_vocabulary": [
        {"query_id": f"q{k}", "ann_id": a["id"], "type": "positive", "phrase": "plane"}
        for k, a in enumerate(anns, start=1)]}}
    pred = {"tasks": {"open_vocabulary": [
        {"query_id": q, "bbox": [{"bbox": [10, 10, 30, 30], "score": 0.9}]}
        for q in ("q1", "q3")]}}
    (root / "gt.json").write_text(json.dumps(gt))
    (root / "pred.json").write_text(json.dumps(pred))
    return root / "gt.json", root / "pred.json"


def _slices(tmp_path: Path, *attrs: str) -> dict:
    gt, pred = _dataset(tmp_path)
    out = tmp_path / "out.json"
    argv = ["--gt", str(gt), "--predictions", str(pred), "--task", "vocabulary",
            "--modalities", "bbox", "--output", str(out), "--slice-resamples", "1000"]
    for a in attrs:
        argv += ["--slice-by", a]
    assert analysis_main(argv) == 0
    return json.loads(out.read_text())["analysis"]["slices"]


def _members(table: dict) -> dict[str, tuple[int, float | None]]:
    """``{value: (queries, bbox recall)}`` in table order."""
    return {v["value"]: (v["num_queries"], next(
        m["value"] for m in v["metrics"] if m["name"] == "bbox_micro_recall"))
        for v in table["values"]}


GSD_SLICES = {"0.25-0.5 m": (1, 1.0), "0.5-1 m": (1, 0.0), "2-5 m": (1, 1.0),
              ">=5 m": (1, 0.0), "unknown": (1, 0.0)}


def test_gsd_slices_from_headers_and_geotiff_pixel_size(tmp_path: Path) -> None:
    """q1 (0.3 m, found), q2 (0.8 m), q3 (2 m from the GeoTIFF, found), q4 (about 10 m
    from the degrees), q5 unknown."""
    got = _members(_slices(tmp_path, "gsd")["gsd"])
    assert got == GSD_SLICES
    assert list(got) == ["0.25-0.5 m", "0.5-1 m", "2-5 m", ">=5 m", "unknown"]


def test_meta_key_slices(tmp_path: Path) -> None:
    got = _members(_slices(tmp_path, "meta:sensor")["meta:sensor"])
    assert got == {"GF-2": (2, 1.0), "WV-3": (2, 0.0), "(none)": (1, 0.0)}


@pytest.mark.parametrize("bad", ["meta:", "gsdx", "meta"])
def test_bad_slice_attributes_are_usage_errors(tmp_path: Path, bad: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    gt, pred = _dataset(tmp_path)
    with pytest.raises(SystemExit) as err:
        analysis_main(["--gt", str(gt), "--predictions", str(pred), "--task", "vocabulary",
                       "--modalities", "bbox", "--slice-by", bad])
    assert err.value.code == 2 and "--slice-by" in capsys.readouterr().err


def test_from_dota_keeps_the_header_as_image_meta(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    sample = DATA / "dota"
    from_dota(sample / "labelTxt", sample / "images", out)
    anns = json.loads((out / "ground_truth.json").read_text())["annotations"]
    meta = {a["id"].split("_")[0]: a.get("image_meta") for a in anns}
    assert meta["P0001"] == {"imagesource": "GoogleEarth", "gsd": 0.5}
    assert meta["P0002"] == {"imagesource": "GoogleEarth"}  # gsd:null: no value
    assert meta["P0003"] == {"imagesource": "GF2", "gsd": 0.8}


def _slices_page(tmp_path: Path, attribute: str, meta_key: str | None = None,
                 rewrite: bool = True):
    """The Slices page (AppTest) on :func:`_dataset` (written unless ``rewrite`` is off)
    sliced by ``attribute``."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()
    gt, pred = (_dataset(tmp_path) if rewrite else
                (tmp_path / "gt.json", tmp_path / "pred.json"))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                           default_timeout=120)
    for key, value in (("gt_path", str(gt)), ("images_dir", str(tmp_path)),
                       ("pred_path", str(pred)), ("task", "vocabulary")):
        at.session_state[key] = value
    at.run()
    goto(at, "pages/Slices.py")
    at.session_state["slice_attr"] = attribute
    at.session_state["slice_metric"] = "bbox_micro_recall"  # the interval column's
    if meta_key is not None:
        at.session_state["slice_meta_key"] = meta_key
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _page_members(at) -> dict[str, tuple[int, float | None]]:
    frame = at.dataframe[0].value
    return {v: (int(n), None if r != r else float(r)) for v, n, r in
            zip(frame["value"], frame["queries"], frame["HBB micro recall"], strict=True)}


def test_slices_page_by_gsd(tmp_path: Path) -> None:
    at = _slices_page(tmp_path, "gsd")
    assert _page_members(at) == GSD_SLICES
    assert all(re.fullmatch(r"\[\d\.\d{3}, \d\.\d{3}\]", i)
               for i in at.dataframe[0].value["interval"])


def test_slices_page_by_an_image_meta_key(tmp_path: Path) -> None:
    at = _slices_page(tmp_path, "meta", "sensor")
    picker = at.selectbox(key="_w_slice_meta_key")
    assert sorted(picker.options) == ["gsd", "sensor"]  # the keys the annotations have
    assert _page_members(at) == {"GF-2": (2, 1.0), "WV-3": (2, 0.0), "(none)": (1, 0.0)}


def test_report_slices_by_gsd_and_meta(tmp_path: Path) -> None:
    from ovearth_core.report.cli import main as report_main

    gt, pred = _dataset(tmp_path)
    out = tmp_path / "report.html"
    assert report_main(["--gt", str(gt), "--predictions", str(pred), "--task", "vocabulary",
                        "--modalities", "bbox", "--no-cache", "--out", str(out),
                        "--slice-by", "gsd", "--slice-by", "meta:sensor"]) == 0
    page = out.read_text()
    # Micro F1 by hand: q1 and q3 found exactly (F1 1), the others empty (F1 0).
    for title, expected in (("ground sample distance", GSD_SLICES), ("image_meta[sensor]", {
            "GF-2": (2, 1.0), "WV-3": (2, 0.0), "(none)": (1, 0.0)})):
        start = page.index(f"Results by {title}")
        table = page[start:page.index("</table>", start)]
        header = re.findall(r"<th[^>]*>([^<]*)</th>", table)
        got = {}
        for row in re.findall(r"<tr>(<td.*?)</tr>", table):
            cells = dict(zip(header, re.findall(r"<td[^>]*>([^<]*)</td>", row), strict=True))
            got[html.unescape(cells[header[0]])] = (int(cells["queries"]),
                                     float(cells["HBB micro F1"].split()[0]))
        assert got == expected, table
        assert re.search(r"\[\d\.\d{3}, \d\.\d{3}\]", table)


@pytest.mark.parametrize("bad", ["query_form", "group", "tag", "meta:"])
def test_report_refuses_slices_it_cannot_make(tmp_path: Path, bad: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from ovearth_core.report.cli import main as report_main

    gt, pred = _dataset(tmp_path)
    with pytest.raises(SystemExit) as err:
        report_main(["--gt", str(gt), "--predictions", str(pred), "--modalities", "bbox",
                     "--out", str(tmp_path / "r.html"), "--slice-by", bad])
    assert err.value.code == 2 and "--slice-by" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_slices_page_by_meta_without_any_image_meta(tmp_path: Path) -> None:
    gt, _ = _dataset(tmp_path)
    doc = json.loads(gt.read_text())
    for ann in doc["annotations"]:
        ann.pop("image_meta", None)
    gt.write_text(json.dumps(doc))
    at = _slices_page(tmp_path, "meta", rewrite=False)
    assert not at.dataframe
    assert any("No annotation of the ground truth has an image_meta" in i.value
               for i in at.info)
