"""AppTest of review in the app (issue 19): tagging and notes from the explorer land in the
sidecar and survive a restart (a new AppTest, caches cleared), another session's tag is
kept, the review-tag filter and its link, saved views in the sidebar, and the Slices page."""

from __future__ import annotations

import json
import os
from pathlib import Path

import app_fixtures
import pytest
from app_fixtures import Dataset, app_on, assert_ok, goto, open_page, write_dataset
from streamlit.testing.v1 import AppTest

from ovearth_core import review

EXPLORER = "pages/Query_explorer.py"
SLICES = "pages/Slices.py"
TIMEOUT = 120
OV = "open_vocabulary"

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def _explorer(ds: Dataset, **state: object) -> AppTest:
    at = app_on(ds, TIMEOUT, **{"view_review": True, **state}).run()  # the panel's switch on
    goto(at, EXPLORER)
    return at.run()


def _tags_widget(at: AppTest):
    return next(m for m in at.multiselect if m.label == "Tags of this query")


def _restart() -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def test_tags_and_notes_from_the_explorer_persist(ds: Dataset) -> None:
    at = _explorer(ds, selected={"vocabulary": "ov_000003"})
    assert_ok(at)
    _tags_widget(at).set_value(["gt_error"]).run()
    assert_ok(at)
    at.text_input(key="_rv_new").set_value("shadow [link](http://x)")
    next(b for b in at.button if b.label == "Add tag").click().run()
    note = next(t for t in at.text_area if t.label == "Note")
    note.set_value("two tanks, one *annotated*")
    next(b for b in at.button if b.label == "Save note").click().run()
    assert_ok(at)
    path = review.sidecar_for(ds.gt)
    state = review.load_state(path)
    target = review.Target(OV, "ov_000003")
    assert state.tags[target] == {"gt_error", "shadow [link](http://x)"}
    assert state.notes[target].text == "two tanks, one *annotated*"
    # Another session tags the same query meanwhile; removing gt_error here keeps its tag.
    review.tag(path, target, "duplicate")
    _restart()
    at2 = _explorer(ds, selected={"vocabulary": "ov_000003"})
    assert_ok(at2)
    widget = _tags_widget(at2)
    assert set(widget.value) == {"gt_error", "shadow [link](http://x)", "duplicate"}
    widget.set_value(["duplicate", "shadow [link](http://x)"]).run()
    assert review.load_state(path).tags[target] == {"duplicate", "shadow [link](http://x)"}
    assert next(t for t in at2.text_area if t.label == "Note").value == \
        "two tanks, one *annotated*"


def test_object_tag_and_review_tag_filter(ds: Dataset) -> None:
    path = review.sidecar_for(ds.gt)
    review.tag(path, review.Target(OV, "ov_000005"), "model_error")
    at = _explorer(ds, selected={"vocabulary": "ov_000002"})
    assert at.selectbox(key="_rv_obj").value == ("pred", "bbox", 0)  # a negative query
    at.selectbox(key="_rv_obj_tag").set_value("duplicate")
    next(b for b in at.button if b.label == "Tag object").click().run()
    assert_ok(at)
    assert review.load_state(path).query_tags(OV) == {"ov_000005": {"model_error"},
                                                      "ov_000002": {"duplicate"}}
    at.multiselect(key="_w_flt_review_tags").set_value(["model_error", "duplicate"]).run()
    assert_ok(at)
    assert sorted(at.dataframe[0].value["query_id"]) == ["ov_000002", "ov_000005"]
    assert app_fixtures.card_params(at)["rtag"] == "model_error,duplicate"  # the viewer's URL


def test_saved_view_is_listed_with_its_link(ds: Dataset) -> None:
    at = _explorer(ds)
    at.toggle(key="_w_flt_failed_only").set_value(True).run()
    at.text_input(key="_view_name").set_value("failures [of] A")
    next(b for b in at.button if b.label == "Save view").click().run()
    assert_ok(at)
    views = review.load_state(review.sidecar_for(ds.gt)).views
    assert views["failures [of] A"].params["failed"] == "1"
    links = [m.value for m in at.sidebar.markdown if "Query_explorer?" in m.value]
    assert links and links[0].startswith(r"[failures \[of\] A](Query_explorer?")
    assert "failed=1" in links[0]


def test_saved_view_keeps_the_query_its_layers_and_zoom(ds: Dataset) -> None:
    """"Save view" saves what is on screen: the explorer's query, its layers and zoom (at
    non-default values), not only the options and filters; opening it restores them."""
    layers = ["GT mask", "predicted HBB"]
    at = _explorer(ds, selected={"vocabulary": "ov_000003"}, view_layers=layers,
                   view_zoom="full image")
    at.text_input(key="_view_name").set_value("ships")
    next(b for b in at.button if b.label == "Save view").click().run()
    assert_ok(at)
    params = review.load_state(review.sidecar_for(ds.gt)).views["ships"].params
    assert params["q"] == "ov_000003"
    assert params["layers"] == "gmask,phbb"
    assert params["zoom"] == "full image"
    _restart()
    again = open_page(EXPLORER, params, TIMEOUT)
    assert_ok(again)
    assert again.session_state["selected"]["vocabulary"] == "ov_000003"
    assert again.session_state["view_layers"] == layers
    assert again.session_state["view_zoom"] == "full image"


def test_slices_page_shows_table_chart_and_links(ds: Dataset) -> None:
    at = app_on(ds, TIMEOUT).run()
    goto(at, SLICES)
    at.run()
    assert_ok(at)
    assert at.dataframe, "the slice table"
    assert at.get("plotly_chart"), "the chart"
    at.selectbox(key="_w_slice_attr").set_value("polarity").run()
    assert_ok(at)
    values = list(at.dataframe[0].value["value"])
    assert values == ["positive", "negative"]
    at.selectbox(key="_w_slice_attr").set_value("gt_size").run()
    assert_ok(at)
    assert any("has no filter" in c.value for c in at.caption)
    at.selectbox(key="_w_slice_attr").set_value("polarity").run()
    at.selectbox(key="_slice_open").set_value("negative").run()
    next(b for b in at.button if b.label == "Open in the explorer →").click().run()
    assert_ok(at)
    assert at.session_state["flt_polarity"] == "negative"
    assert set(at.dataframe[0].value["polarity"]) == {"negative"}


def test_slices_by_group_use_the_taxonomy_beside_the_ground_truth(ds: Dataset) -> None:
    at = app_on(ds, TIMEOUT, slice_attr="group").run()
    goto(at, SLICES)
    at.run()
    assert any("needs a taxonomy" in i.value for i in at.info)
    (ds.root / "taxonomy.json").write_text('{"storage tank": "Industry"}')
    at.run()
    assert_ok(at)
    assert list(at.dataframe[0].value["value"]) == ["Industry", "(no group)"]
    at.selectbox(key="_slice_open").set_value("Industry").run()
    next(b for b in at.button if b.label == "Open in the explorer →").click().run()
    assert at.session_state["flt_categories"] == ["storage tank"]


def test_slices_paired_with_compares_b(ds: Dataset) -> None:
    at = app_on(ds, TIMEOUT, cmp_b_path=str(ds.model_b), slice_attr="polarity").run()
    goto(at, SLICES)
    at.run()
    assert "B − A" not in at.dataframe[0].value.columns
    at.toggle(key="_slice_paired").set_value(True).run()
    assert_ok(at)
    frame = at.dataframe[0].value
    assert {"B", "B − A", "B − A interval"} <= set(frame.columns)
    assert "paired bootstrap" in at.get("plotly_chart")[0].proto.spec


def test_the_export_button_never_writes_through_a_link(ds: Dataset, tmp_path: Path) -> None:
    """Issue 26, item 1: "Write the benchmark without them" writes
    DIR/.ovearth/exports/without_<tag> as a whole; a ground_truth.json there that links to
    a file elsewhere is replaced by the export, the file it named keeps its bytes."""
    victim = tmp_path / "victim.json"
    victim.write_bytes(b"precious\n")
    out = ds.root / ".ovearth" / "exports" / "without_gt_error"  # where docs/review.md says
    out.mkdir(parents=True)
    (out / "ground_truth.json").symlink_to(victim)
    review.tag(review.sidecar_for(ds.gt), review.Target(OV, "ov_000003"), "gt_error")
    at = _explorer(ds, selected={"vocabulary": "ov_000003"})
    at.selectbox(key="_rv_export").set_value("gt_error")
    next(b for b in at.button if b.label == "Write the benchmark without them").click().run()
    assert_ok(at)
    assert victim.read_bytes() == b"precious\n"
    assert not (out / "ground_truth.json").is_symlink()
    kept = json.loads((out / "ground_truth.json").read_text())["tasks"][OV]
    assert "ov_000003" not in {r["query_id"] for r in kept} and kept
    assert any("Left out 1 queries" in s.value for s in at.success)


def test_save_view_into_a_linked_sidecar_folder_is_a_message(ds: Dataset,
                                                              tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ds.root / ".ovearth").symlink_to(elsewhere)
    at = _explorer(ds)
    at.text_input(key="_view_name").set_value("mine")
    next(b for b in at.button if b.label == "Save view").click().run()
    assert not at.exception
    assert list(elsewhere.iterdir()) == []
    assert any("Not saved" in e.value and "symbolic link" in e.value for e in at.error)


def test_a_pipe_as_the_sidecar_is_an_error_not_a_hang(ds: Dataset) -> None:
    """Issue 26, item 8: the explorer with a named pipe as review.jsonl renders (it hung
    before) and says the file cannot be read."""
    path = review.sidecar_for(ds.gt)
    path.parent.mkdir()
    os.mkfifo(path)
    at = _explorer(ds, selected={"vocabulary": "ov_000003"})
    assert not at.exception
    assert any("review file cannot be read" in e.value and "named pipe" in e.value
               for e in at.error)
