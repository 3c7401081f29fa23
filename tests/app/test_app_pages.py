"""AppTest of every page: loading, options, filters, selection, navigation, bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from app_fixtures import (
    Dataset,
    app_on,
    assert_ok,
    card_buttons,
    card_html,
    card_params,
    goto,
    press,
    write_dataset,
    write_large_image_dataset,
)
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
EXPLORER = "pages/Query_explorer.py"
TIMEOUT = 120


pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def _app(ds: Dataset | None = None, **state) -> AppTest:
    return app_on(ds, TIMEOUT, **state)


def _explorer(at: AppTest) -> AppTest:
    goto(at, EXPLORER)
    return at.run()


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _buttons(at: AppTest) -> list[str]:
    return [b.label for b in at.button]


def test_default_start_opens_the_bundled_demo() -> None:
    at = _app().run()
    assert_ok(at)
    assert at.session_state["gt_path"] == "assets/demo/ground_truth.json"
    assert at.session_state["images_dir"] == "assets/demo"
    assert at.session_state["pred_path"].startswith("assets/demo/predictions/")
    assert "MCC" in _metrics(at)
    assert any(label.startswith("Show ") for label in _buttons(at))


def test_overview_shows_metrics_matrix_and_category_table(ds: Dataset) -> None:
    at = _app(ds).run()
    assert_ok(at)
    metrics = _metrics(at)
    assert metrics["MCC"] == "0.250" and metrics["F1"] == "0.750"
    assert metrics["Macro mIoU"] == "0.552"
    assert "Show 1 false positives →" in _buttons(at)
    assert "Show 4 failed queries →" in _buttons(at)
    assert at.query_params["task"] == ["vocabulary"] or at.query_params["task"] == "vocabulary"
    # Issue 49: the per-category table (a data grid) waits in its lazy expander.
    assert not at.dataframe
    at.session_state["_w_categories_open"] = True
    at.run()
    assert_ok(at)
    categories = at.dataframe[-1].value
    assert sorted(categories["category"]) == ["bridge", "ship", "storage tank"]


def test_options_change_task_and_threshold(ds: Dataset) -> None:
    at = _app(ds).run()
    at.sidebar.radio(key="task").set_value("referring").run()
    assert_ok(at)
    assert "Show 1 hits (IoU ≥ 0.5) →" in _buttons(at)
    assert "MCC" not in _metrics(at)
    at.sidebar.select_slider(key="iou_threshold").set_value(0.2).run()
    assert_ok(at)
    assert "IoU threshold 0.2" in at.caption[0].value


def test_bad_option_shows_report_and_sidebar_keeps_working(ds: Dataset) -> None:
    at = _app(ds).run()
    at.sidebar.toggle(key="auto_modalities").set_value(False).run()
    at.sidebar.multiselect(key="modalities").set_value([]).run()
    assert not at.exception
    assert "--modalities" in at.error[0].value and "expected" in at.error[0].value
    at.sidebar.multiselect(key="modalities").set_value(["bbox"]).run()
    assert_ok(at)
    assert "Micro F1" in _metrics(at) and "Macro mIoU" not in _metrics(at)


def test_auto_modalities_follow_the_submission(ds: Dataset, tmp_path: Path) -> None:
    doc = json.loads(ds.model_a.read_text())
    for row in doc["tasks"]["open_vocabulary"]:
        del row["segmentation"], row["oriented_bbox"]
    boxes_only = tmp_path / "boxes_only.json"
    boxes_only.write_text(json.dumps(doc))
    at = _app(ds, pred_path=str(boxes_only)).run()
    assert_ok(at)
    assert "modalities bbox ·" in at.caption[0].value
    assert "Micro F1" in _metrics(at) and "Macro mIoU" not in _metrics(at)
    at.sidebar.toggle(key="auto_modalities").set_value(False).run()
    assert_ok(at)  # declared: the masks it never gave are "not submitted" (issue 13), not 0
    assert _metrics(at)["Macro mIoU"] == "—"


def test_bad_ground_truth_shows_report_not_traceback(ds: Dataset, tmp_path: Path) -> None:
    bad = tmp_path / "bad_gt.json"
    doc = json.loads(ds.gt.read_text())
    doc["annotations"][0]["width"] = -3
    doc["tasks"]["open_vocabulary"][3]["type"] = "maybe"
    bad.write_text(json.dumps(doc))
    at = _app(ds, gt_path=str(bad)).run()
    assert not at.exception
    report = at.error[0].value
    assert "problems found" in report
    assert "annotations[0].width" in report and "a positive integer" in report
    assert "ov_000004" in report and "maybe" in report
    _explorer(at)
    assert not at.exception and at.error  # the explorer shows the same report
    at.sidebar.text_input(key="gt_path").set_value(str(ds.gt)).run()
    assert_ok(at)


def test_unreadable_files_show_report(ds: Dataset, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    at = _app(ds, pred_path=str(broken)).run()
    assert not at.exception and "valid UTF-8 JSON" in at.error[0].value
    at = _app(ds, gt_path=str(tmp_path / "nope.json")).run()
    assert not at.exception and "readable ground-truth JSON" in at.error[0].value


def test_bad_prediction_row_names_the_query(ds: Dataset, tmp_path: Path) -> None:
    doc = json.loads(ds.model_a.read_text())
    doc["tasks"]["open_vocabulary"][0]["bbox"] = [[5, 5, 1, 1]]
    bad = tmp_path / "bad_pred.json"
    bad.write_text(json.dumps(doc))
    at = _app(ds, pred_path=str(bad)).run()
    assert not at.exception
    assert "ov_000001" in at.error[0].value and "x2 > x1" in at.error[0].value
    at.sidebar.radio(key="task").set_value("reasoning").run()
    assert_ok(at)  # other tasks of the same file still work


def test_unexpected_evaluator_error_is_a_message(ds: Dataset,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    at = _app(ds).run()
    assert_ok(at)
    data = sys.modules["ovearth_core.evaluate"]  # where the app's pipeline evaluates

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(data, "evaluate_run", boom)
    at.sidebar.select_slider(key="iou_threshold").set_value(0.7).run()
    assert not at.exception
    assert "RuntimeError: boom" in at.error[0].value
    monkeypatch.undo()
    at.sidebar.select_slider(key="iou_threshold").set_value(0.5).run()
    assert_ok(at)


def test_confusion_cell_leads_to_explorer(ds: Dataset) -> None:
    at = _app(ds).run()
    next(b for b in at.button if b.label == "Show 1 false positives →").click().run()
    assert_ok(at)
    assert at.title[0].value == "Query explorer"
    assert at.session_state["flt_outcomes"] == ["FP"]
    assert at.session_state["selected"]["vocabulary"] == "ov_000002"
    assert list(at.dataframe[0].value["query_id"]) == ["ov_000002"]


def test_explorer_filters_select_and_navigate(ds: Dataset) -> None:
    at = _explorer(_app(ds).run())
    assert_ok(at)
    table = at.dataframe[0].value
    assert list(table["query_id"][:4]) == ["ov_000002", "ov_000006", "ov_000003", "ov_000005"]
    at.toggle(key="_w_flt_failed_only").set_value(True).run()
    assert len(at.dataframe[0].value) == 4
    at.multiselect(key="_w_flt_failures").set_value(["miss", "duplicates"]).run()
    assert list(at.dataframe[0].value["query_id"]) == ["ov_000006", "ov_000005"]
    at.selectbox(key="_w_jump").set_value("ov_000005").run()
    assert_ok(at)
    assert at.session_state["selected"]["vocabulary"] == "ov_000005"
    assert at.selectbox(key="_w_jump").value is None  # a search box: empty again
    assert card_params(at)["q"] == "ov_000005"  # the URL the viewer writes
    assert card_buttons(card_html(at)) == {"prev": True, "next": False}  # the last one
    press(at, "prev")
    assert at.session_state["selected"]["vocabulary"] == "ov_000006"
    assert card_buttons(card_html(at)) == {"prev": False, "next": True}  # the first one
    press(at, "next")
    assert at.session_state["selected"]["vocabulary"] == "ov_000005"
    at.text_input(key="_w_flt_text").set_value("no such thing").run()
    assert not at.exception and "No query matches" in at.info[0].value
    next(b for b in at.button if b.label == "Reset filters").click().run()
    assert_ok(at)
    assert len(at.dataframe[0].value) == 6


def test_viewer_notices_for_missing_and_tiff_images(ds: Dataset) -> None:
    at = _app(ds, selected={"vocabulary": "ov_000006"})
    at = _explorer(at.run())
    assert_ok(at)
    notices = [i.value for i in at.info]
    assert any("image file not found" in n and "blank 64 x 48 canvas" in n for n in notices)
    at.selectbox(key="_w_jump").set_value("ov_000003").run()  # a 16-bit TIFF
    assert_ok(at)
    assert not any("image" in i.value for i in at.info)
    assert "poor localisation" in card_html(at)  # the viewer's card
    at.session_state["_w_view_options_open"] = True  # the lazy "View options" popover
    at.run()
    at.toggle(key="_w_view_pixel_mode").set_value(True).run()
    at.slider(key="_w_view_opacity").set_value(0.8).run()
    at.selectbox(key="_w_view_zoom").set_value("GT only").run()
    at.selectbox(key="_w_view_zoom").set_value("full image").run()
    assert_ok(at)


def test_deep_link_opens_the_query(ds: Dataset) -> None:
    at = _app(ds)
    at.query_params["task"] = "referring"
    at.query_params["q"] = "ref_000002"
    at = _explorer(at.run())
    assert_ok(at)
    assert at.session_state["task"] == "referring"
    assert at.session_state["selected"]["referring"] == "ref_000002"
    assert "<code>ref_000002</code>" in card_html(at)  # the viewer's card


def test_deep_link_to_unknown_query_warns(ds: Dataset) -> None:
    at = _app(ds)
    at.query_params["task"] = "vocabulary"
    at.query_params["q"] = "ov_999999"
    at = _explorer(at.run())
    assert not at.exception
    assert "ov_999999" in at.warning[0].value
    assert at.session_state["selected"]["vocabulary"] == "ov_000002"


def test_filters_survive_a_round_trip_through_the_overview(ds: Dataset) -> None:
    at = _explorer(_app(ds).run())
    at.multiselect(key="_w_flt_outcomes").set_value(["FN"]).run()
    goto(at, "app.py")
    at.run()
    assert_ok(at)
    at = _explorer(at)
    assert list(at.dataframe[0].value["query_id"]) == ["ov_000006"]


def test_viewer_shows_small_objects_of_large_images_at_full_resolution(tmp_path: Path) -> None:
    """A 2600-pixel image is displayed at 79 %; the view around the 12 x 8 car comes from
    the original pixels (a second image layer at 1 original pixel per step)."""
    ds = write_large_image_dataset(tmp_path / "big")
    at = _explorer(_app(ds, task="referring", view_interactive=True).run())
    assert_ok(at)
    captions = " ".join(c.value for c in at.caption)
    assert "Full resolution around the target" in captions, captions
    assert "2600 × 1800 image is shown at 79%" in captions
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    layers = [t for t in spec["data"] if t["type"] == "image"]
    assert [t["name"] for t in layers] == ["image", "full resolution"]
    assert (layers[1]["dx"], layers[1]["dy"]) == (1, 1)
    assert layers[1]["x0"] < 2000 < layers[1]["x0"] + 200


@pytest.mark.parametrize("page", ["app.py", EXPLORER, "pages/Compare.py",
                                  "pages/Leaderboard.py", "pages/Slices.py"])
def test_missing_values_in_tables_show_a_dash(ds: Dataset, page: str) -> None:
    """A cell without a value (no score for a negative query, a modality not submitted)
    reads "—", not Streamlit's default "None" (a grey word that looks like a value)."""
    at = _app(ds, cmp_b_path=str(ds.model_b))
    at.run()
    goto(at, page)
    at.run()
    assert_ok(at)
    for frame in at.dataframe:
        assert frame.proto.placeholder == "—", page
    if page == EXPLORER:  # negative queries have no IoU: the table does hold missing values
        assert at.dataframe[0].value["seg_iou"].isna().any()
