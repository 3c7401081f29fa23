"""AppTest of the object-level views on a dense DOTA conversion: the category confusion and
its click-through to the Gallery, the Gallery's and explorer's object-outcome filters, the
explorer's object list, and the bootstrap unit and few-units warnings of Compare and Slices."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import APP, Dataset, app_on, assert_ok, card_params, goto
from dense_fixtures import write_dense_dota
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    root = write_dense_dota(tmp_path_factory.mktemp("dense"))
    preds = root / "predictions"
    return Dataset(root, root / "ground_truth.json", root, preds / "model_a.json",
                   preds / "model_b.json")


def _on(bench: Dataset, page: str, **state: object) -> AppTest:
    at = app_on(bench, timeout=180, modalities=["bbox", "oriented_bbox"],
                auto_modalities=False, **state)
    goto(at, page)
    return at.run()


def _tiles(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if "Query_explorer?" in m.value]


def test_confusion_cell_opens_those_boxes_in_the_gallery(bench: Dataset) -> None:
    at = _on(bench, "pages/Confusion.py")
    assert_ok(at)
    buttons = [b for b in at.button if b.key and b.key.startswith("conf_")]
    # model_a boxes two small vehicles of D0001 as large vehicles: one cell, 2 boxes.
    assert [b.label for b in buttons] == ["2 large-vehicle boxes on small-vehicle →"]
    buttons[0].click().run()
    assert_ok(at)
    assert at.session_state["gal_selector"] == "predicted boxes"
    assert at.session_state["gal_categories"] == ["large-vehicle"]
    assert at.session_state["gal_confused"] == ["small-vehicle"]
    tiles = _tiles(at)
    assert len(tiles) == 2
    assert all("class confusion (small-vehicle)" in t for t in tiles)


def test_a_cell_opens_the_gallery_of_the_linked_dataset_at_the_sidebar_options(
        bench: Dataset) -> None:
    """The dataset opened by a link (``data=``; the app's default is the demo) and an option
    changed in the sidebar (the IoU threshold, through its widget) stay what they were when
    a cell's button switches to the Gallery. The sidebar's widgets keep their values under
    their own keys; a page switch made by a button dropped them (Streamlit forgets a keyed
    widget's value on a page switch unless it persists for the session), and the Gallery
    silently evaluated the demo at the default threshold."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update(data=str(bench.root), mods="bbox,oriented_bbox")
    goto(at, "pages/Confusion.py")
    at.run()
    assert_ok(at)
    at.select_slider(key="iou_threshold").set_value(0.3).run()
    assert_ok(at)
    buttons = [b for b in at.button if b.key and b.key.startswith("conf_")]
    assert buttons, "no cell at IoU 0.3"
    buttons[0].click().run()
    assert_ok(at)
    assert at.session_state["gal_selector"] == "predicted boxes"
    assert at.session_state["gt_path"] == str(bench.root / "ground_truth.json")
    assert at.session_state["pred_path"] == str(bench.model_a)
    assert at.session_state["iou_threshold"] == 0.3
    assert at.query_params["data"] == str(bench.root)
    assert at.query_params["iou"] == "0.3"
    assert _tiles(at)


def test_confusion_first_screen_is_a_table_without_a_chart(bench: Dataset) -> None:
    """Issue 49: the matrix's cells as a Markdown table (hand-read from the fixture: model_a
    boxes two small vehicles of D0001 as large vehicles), no plotly chart until the "Chart"
    tab is opened."""
    at = _on(bench, "pages/Confusion.py")
    assert_ok(at)
    assert not at.get("plotly_chart")
    table = next(m.value for m in at.markdown if "predicted ↓ · GT →" in m.value)
    assert table.splitlines() == ["| predicted ↓ · GT → | small-vehicle |", "| --- | ---: |",
                                  "| large-vehicle | 2 |"]


def test_confusion_chart_cell_opens_those_boxes_in_the_gallery(bench: Dataset) -> None:
    """Issue 49: the heatmap is in the lazy "Chart" tab; a click on its cell (what plotly
    sends) opens the Gallery as the cell's button does."""
    at = _on(bench, "pages/Confusion.py")
    at.session_state["conf_tab"] = "Chart"
    at.run()
    assert_ok(at)
    assert [c.key for c in at.get("plotly_chart")] == ["catconf"]
    assert not [b for b in at.button if b.key and b.key.startswith("conf_")]
    at.session_state["catconf"] = {"selection": {
        "points": [{"customdata": ["large-vehicle", "small-vehicle"]}], "point_indices": [0],
        "box": [], "lasso": []}}
    at.run()
    assert_ok(at)
    assert at.session_state["gal_categories"] == ["large-vehicle"]
    assert at.session_state["gal_confused"] == ["small-vehicle"]
    tiles = _tiles(at)
    assert len(tiles) == 2 and all("class confusion (small-vehicle)" in t for t in tiles)


def test_gallery_filters_by_object_outcome(bench: Dataset) -> None:
    at = _on(bench, "pages/Gallery.py", gal_selector="predicted boxes",
             gal_errors=["duplicate"])
    assert_ok(at)
    tiles = _tiles(at)
    assert len(tiles) == 3 and all("duplicate" in t for t in tiles)  # the doubled ships
    at = _on(bench, "pages/Gallery.py", gal_errors=["found as other class"])
    assert_ok(at)
    tiles = _tiles(at)
    assert len(tiles) == 2
    assert all("found as other class (large-vehicle)" in t for t in tiles)


def test_explorer_object_filter_and_object_list_zoom(bench: Dataset) -> None:
    at = _on(bench, "pages/Query_explorer.py", flt_objects=["found as other class"])
    assert_ok(at)
    table = at.dataframe[0].value
    assert list(table["query_id"]) == ["ov_D0001_small-vehicle"]
    # Closed, the list is not drawn (a lazy expander: it cost every Next ~40 ms in the
    # browser); opened, it stays open for the following queries.
    (box,) = [e for e in at.expander if e.label == "Objects by outcome (HBB)"]
    assert not [s for s in at.selectbox if s.key == "_w_objlist"]
    at.session_state["_w_objects_open"] = True
    at.run()
    assert_ok(at)
    assert any(c.value.startswith("4 GT, ") and "found as other class 2" in c.value
               for c in at.caption)
    picker = at.selectbox(key="_w_objlist")
    labels = picker.options
    assert labels[0].startswith("GT ") and "found as other class" in labels[0]
    assert "large-vehicle · IoU 1.00 (ov_D0001_large-vehicle)" in labels[0]
    picker.select_index(0).run()
    assert_ok(at)
    focus = at.session_state["view_focus"]
    assert focus[0] == "ov_D0001_small-vehicle"
    assert focus[1] == int(labels[0].split(" · ")[0].split()[1]) - 1  # its GT index


def test_dense_query_with_f1_above_the_pass_level_is_not_failed(bench: Dataset) -> None:
    at = _on(bench, "pages/Query_explorer.py", flt_failed_only=True)
    assert_ok(at)
    failed = set(at.dataframe[0].value["query_id"])
    assert "ov_D0001_ship" not in failed  # 120 ships, F1 0.97, three real duplicates
    assert "ov_D0001_small-vehicle" in failed  # 2 of 4 found: F1 2/3
    at = _on(bench, "pages/Query_explorer.py")
    table = at.dataframe[0].value.set_index("query_id")
    assert table.loc["ov_D0001_ship", "failure"] == "ok"
    assert table.loc["ov_D0001_ship", "object_errors"] == "missed 5 · duplicate 3"
    assert table.loc["ov_D0001_small-vehicle", "object_errors"] == "found as other class 2"
    assert table.loc["ov_D0002_ship", "object_errors"] == ""


def test_compare_resamples_images_of_a_dota_conversion_and_warns(bench: Dataset) -> None:
    at = _on(bench, "pages/Compare.py", cmp_b_path=str(bench.model_b))
    assert_ok(at)
    caption = next(c.value for c in at.caption if "paired-bootstrap" in c.value)
    assert "over 2 images (6 queries)" in caption
    assert any("rest on 2 images" in w.value for w in at.warning)
    at.radio(key="_w_boot_unit").set_value("query").run()
    assert_ok(at)
    caption = next(c.value for c in at.caption if "paired-bootstrap" in c.value)
    assert "over 6 queries (6 queries)" in caption
    assert any("rest on 6 queries" in w.value for w in at.warning)


def test_slices_name_the_slices_with_few_units(bench: Dataset) -> None:
    at = _on(bench, "pages/Slices.py")
    assert_ok(at)
    assert any("over each slice's images" in c.value for c in at.caption)
    warning = next(w.value for w in at.warning if w.value.startswith("Thin evidence in"))
    assert "fewer than 30 images" in warning and "ship (2 images)" in warning


def test_confusion_page_without_confusion_says_so(bench: Dataset) -> None:
    at = _on(bench, "pages/Confusion.py")
    at.session_state["pred_path"] = str(bench.model_b)
    at.run()
    assert_ok(at)
    assert any("No unmatched predicted box" in i.value for i in at.info)


def test_pages_listed(bench: Dataset) -> None:
    from pages.common.nav import BY_FILE

    assert BY_FILE["pages/Confusion.py"].menu == "Category confusion"
    assert Path(__file__).resolve().parents[2].joinpath("pages/Confusion.py").is_file()


def test_object_filter_travels_in_the_link(bench: Dataset) -> None:
    at = _on(bench, "pages/Query_explorer.py", flt_objects=["found as other class"])
    assert_ok(at)
    params = card_params(at)  # the URL the viewer writes to the address bar
    value = params["obj"]
    assert (value[0] if isinstance(value, list) else value) == "found as other class"
    opened = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                               default_timeout=180)
    goto(opened, "pages/Query_explorer.py")
    for key, v in params.items():
        opened.query_params[key] = v[0] if isinstance(v, list) else v
    opened.run()
    assert_ok(opened)
    assert opened.session_state["flt_objects"] == ["found as other class"]
    assert list(opened.dataframe[0].value["query_id"]) == ["ov_D0001_small-vehicle"]
