"""AppTest of the Gallery page: tiles, a filter, pagination, a tile's link, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from app_fixtures import Dataset, app_on, assert_ok, card_html, goto, write_dataset
from streamlit.testing.v1 import AppTest

GALLERY = "pages/Gallery.py"
EXPLORER = "pages/Query_explorer.py"

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def _gallery(ds: Dataset, **state: object) -> AppTest:
    at = app_on(ds, **state)
    goto(at, GALLERY)
    return at.run()


def _tiles(at: AppTest) -> list[str]:
    """The tiles' caption markdown (one per tile: outcome line, text, explorer link)."""
    return [m.value for m in at.markdown if "Query_explorer?" in m.value]


def _link(text: str) -> dict[str, str]:
    url = text.rsplit("](", 1)[1].rstrip(")")
    assert urlsplit(url).path.endswith("Query_explorer")
    return dict(parse_qsl(urlsplit(url).query))


def test_gallery_shows_one_tile_per_gt_box_worst_first(ds: Dataset) -> None:
    at = _gallery(ds)
    assert_ok(at)
    tiles = _tiles(at)
    assert len(tiles) == 4 == len(at.get("image"))
    assert [t.split("**")[1].split(" ·")[0] for t in tiles] == [
        "missed", "missed", "matched", "matched"]
    assert "best IoU 0.21" in tiles[1] and "ship" in tiles[1]


def test_outcome_filter_and_selector(ds: Dataset) -> None:
    at = _gallery(ds)
    at.multiselect(key="_w_gal_outcomes").set_value(["matched"]).run()
    assert_ok(at)
    assert len(_tiles(at)) == 2
    at.radio(key="_w_gal_selector").set_value("predicted boxes").run()
    assert_ok(at)
    # "matched" is no outcome of predicted boxes: the filter falls away, all 5 are shown.
    assert len(_tiles(at)) == 5
    at.multiselect(key="_w_gal_outcomes").set_value(["FP"]).run()
    assert len(_tiles(at)) == 3
    at.multiselect(key="_w_gal_sizes").set_value(["large"]).run()
    assert_ok(at)
    assert not _tiles(at) and "No tile matches" in at.info[0].value


def test_a_tiles_link_opens_its_query_in_the_explorer(ds: Dataset) -> None:
    # An explorer filter that hides ov_000003 must not travel in the tile's link.
    at = _gallery(ds, flt_categories=["bridge"])
    params = _link(_tiles(at)[1])
    assert params["q"] == "ov_000003" and "cat" not in params
    assert params["sub"] == "model_a" and params["task"] == "vocabulary"
    explorer = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                                 default_timeout=120)
    goto(explorer, EXPLORER)
    for key, value in params.items():
        explorer.query_params[key] = value
    explorer.run()
    assert_ok(explorer)
    assert "<h3><code>ov_000003</code></h3>" in card_html(explorer)  # the viewer


def _crowded(ds: Dataset) -> Dataset:
    """Adds query ov_000007: 60 GT boxes of 2 x 2 px on rgb.png, no prediction row."""
    gt = json.loads(ds.gt.read_text())
    boxes = [[1 + 6 * (i % 10), 1 + 6 * (i // 10), 2, 2] for i in range(60)]
    gt["annotations"].append({"id": "a5", "image_path": "images/rgb.png", "width": 64,
                              "height": 48, "category_name": "car", "segmentation": None,
                              "bbox": boxes, "oriented_bbox": []})
    gt["tasks"]["open_vocabulary"].append({"query_id": "ov_000007", "ann_id": "a5",
                                           "type": "positive", "phrase": "car"})
    ds.gt.write_text(json.dumps(gt))
    return ds


def test_pages_of_48_tiles(ds: Dataset) -> None:
    at = _gallery(_crowded(ds))  # 4 + 60 GT boxes
    assert not at.exception
    assert len(_tiles(at)) == 48
    assert "64 tiles · showing 1–48" in [c.value for c in at.caption]
    at.number_input(key="_w_gal_page").set_value(2).run()
    assert not at.exception
    assert len(_tiles(at)) == 16
    at.multiselect(key="_w_gal_categories").set_value(["car"]).run()  # 60 left: 2 pages
    assert len(_tiles(at)) == 12 and all("\ncar  \n" in t for t in _tiles(at))


@pytest.mark.parametrize("state", [
    {"gal_page": 10_000}, {"gal_selector": "pixels"}, {"gal_sort": "by colour"},
    {"gal_sizes": ["huge"]}, {"gal_modality": "segmentation"}])
def test_bad_state_never_shows_a_traceback(ds: Dataset, state: dict) -> None:
    at = _gallery(ds, **state)
    assert_ok(at)
    assert _tiles(at)


def test_segmentation_only_and_bad_files(ds: Dataset, tmp_path: Path) -> None:
    at = _gallery(ds, auto_modalities=False, modalities=["segmentation"])
    assert_ok(at)
    assert "No box modality" in at.info[0].value
    at.radio(key="_w_gal_selector").set_value("queries").run()
    assert_ok(at)
    assert len(_tiles(at)) == 6
    bad = tmp_path / "data" / "bad.json"
    bad.write_text("{not json")
    at = _gallery(ds, pred_path=str(bad))
    assert not at.exception and not _tiles(at)


def test_a_page_of_one_image_decodes_it_once(ds: Dataset,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: the 48 tiles of a page cut from one image decode it once (a 3,333 x
    3,546 mosaic's JPEG took ~70 ms a tile; the window's pixels are the same, see
    test_viz_tiles)."""
    from pages.common import data

    reads: list[str] = []
    real_region, real_source = data.load_region, data.load_source_rgb
    monkeypatch.setattr(data, "load_region",
                        lambda *a, **kw: reads.append(a[1]) or real_region(*a, **kw))
    monkeypatch.setattr(data, "load_source_rgb",
                        lambda *a, **kw: reads.append(a[1]) or real_source(*a, **kw))
    at = _gallery(_crowded(ds), gal_categories=["car"])
    assert_ok(at)
    shown = at.get("image")
    assert len(shown) == 48
    assert reads.count("images/rgb.png") == 1


def test_a_page_of_one_querys_tiles_decodes_its_masks_once(
        ds: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: 48 tiles of one query with masks decode its GT mask once, not once a
    tile (a dense 3,333 x 3,546 mask: 30 ms a decode)."""
    from ovearth_core import masks

    gt = json.loads(_crowded(ds).gt.read_text())
    gt["annotations"][-1]["segmentation"] = {"size": [48, 64], "counts": [0, 48 * 64]}
    ds.gt.write_text(json.dumps(gt))
    decoded: list[tuple[int, int]] = []
    real = masks.decode
    monkeypatch.setattr(masks, "decode",
                        lambda rle, *a, **kw: decoded.append(1) or real(rle, *a, **kw))
    at = _gallery(ds, gal_categories=["car"])
    assert_ok(at)
    assert len(at.get("image")) == 48
    assert len(decoded) <= 2  # the query's GT mask (and a prediction's, had it one)
