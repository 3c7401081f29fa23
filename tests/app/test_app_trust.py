"""The app as an instrument you can trust (issue 13): the file evaluated is the file named on
screen, a link reproduces a view, state survives page changes, "not submitted" is not zero,
coverage is reported, and the sidebar's options reach the evaluator.

Each test reproduces one observed defect; expected values come from the core evaluator run
here on the same files, never from the page under test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, card_html, goto, viewer_cards, write_dataset
from markdown_tokens import table_frames
from streamlit.testing.v1 import AppTest

from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

EXPLORER = "pages/Query_explorer.py"
COMPARE = "pages/Compare.py"
LEADERBOARD = "pages/Leaderboard.py"
TIMEOUT = 120

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    ds = write_dataset(tmp_path / "other_bench")
    # A third submission, so that B's default (the first other file) is not the one chosen,
    # and a box-free copy of model A (masks only) for the not-submitted checks.
    shutil.copy(ds.model_b, ds.root / "predictions" / "model_c.json")
    doc = json.loads(ds.model_a.read_text())
    for rows in doc["tasks"].values():
        for row in rows:
            row["bbox"], row["oriented_bbox"] = [], []
    (ds.root / "predictions" / "masks_only.json").write_text(json.dumps(doc))
    return ds


def _texts(at: AppTest) -> str:
    """Every text the page shows, the viewer's HTML block included."""
    return " ".join([e.value for kind in ("caption", "markdown", "warning", "info", "error")
                     for e in at.get(kind)] + [h.proto.body for h in at.get("html")]
                    + [c["html"] for c in viewer_cards(at)])


def _evaluated_file(at: AppTest) -> Path:
    return Path(at.session_state["pred_path"]).resolve()


def test_typing_another_ground_truth_switches_the_whole_dataset(ds: Dataset) -> None:
    """Defect 1: the dropdown listed the new folder's files while the demo's file was
    still evaluated."""
    at = app_on(None, TIMEOUT).run()
    assert_ok(at)
    at.sidebar.text_input(key="gt_path").set_value(str(ds.gt)).run()
    assert_ok(at)
    evaluated = _evaluated_file(at)
    assert evaluated.parent == (ds.root / "predictions").resolve()
    assert Path(at.session_state["images_dir"]).resolve() == ds.root.resolve()
    # The dropdown, the path field and the caption all name the file evaluated.
    assert Path(at.sidebar.selectbox(key="_w_pick").value).resolve() == evaluated
    assert str(evaluated.name) in _texts(at)
    want = evaluate_samples(load_samples(ds.gt, evaluated, "vocabulary", modalities="auto"))
    shown = {m.label: m.value for m in at.metric}
    assert shown["MCC"] == f"{want['summary']['presence']['mcc']:.3f}"


def test_a_link_reproduces_dataset_submission_query_and_options(ds: Dataset) -> None:
    """Defect 2: a copied explorer link opened the demo's query of the same id."""
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                           default_timeout=TIMEOUT)
    at.query_params.update({"data": str(ds.root), "sub": "model_b", "task": "vocabulary",
                            "q": "ov_000003", "iou": "0.3", "mods": "bbox,oriented_bbox",
                            "outcome": "TP,FP"})
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    assert Path(at.session_state["gt_path"]).resolve() == ds.gt.resolve()
    assert _evaluated_file(at) == ds.model_b.resolve()
    assert at.session_state["iou_threshold"] == 0.3
    assert at.session_state["flt_outcomes"] == ["TP", "FP"]
    assert at.session_state["selected"]["vocabulary"] == "ov_000003"
    results = evaluate_samples(load_samples(ds.gt, ds.model_b, "vocabulary",
                                            modalities="bbox,oriented_bbox"), 0.3)
    row = next(r for r in results["per_sample"] if r["sample_id"] == "ov_000003")
    assert row["category"] in _texts(at)
    assert "IoU threshold 0.3" in _texts(at)


@pytest.mark.parametrize("where", ["missing", "outside"])
def test_a_link_to_an_unknown_dataset_says_so_and_shows_no_numbers(ds: Dataset, tmp_path: Path,
                                                                    where: str) -> None:
    target = str(tmp_path / "no_such_bench") if where == "missing" else "/etc"
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                           default_timeout=TIMEOUT)
    at.query_params.update({"data": target, "task": "vocabulary"})
    at.run()
    assert not at.exception
    assert at.error and target in at.error[0].value
    assert not at.metric  # never the demo's numbers in place of the linked dataset's


def test_compare_b_survives_a_visit_to_another_page(ds: Dataset) -> None:
    """Defect 3: B silently went back to the first other submission."""
    at = app_on(ds, TIMEOUT)
    goto(at, COMPARE)
    at.run()
    assert_ok(at)
    at.selectbox(key="_w_cmp_b_path").set_value(
        next(o for o in at.selectbox(key="_w_cmp_b_path").options if "model_c" in o)).run()
    assert_ok(at)
    goto(at, "app.py")
    at.run()
    goto(at, COMPARE)
    at.run()
    assert_ok(at)
    assert at.selectbox(key="_w_cmp_b_path").value.endswith("model_c.json")
    assert "B** = model_c" in _texts(at)


def test_not_submitted_is_not_zero_on_overview_and_compare(ds: Dataset) -> None:
    """Defect 4: a submission without boxes showed HBB/OBB 0.000 with a difference."""
    masks_only = ds.root / "predictions" / "masks_only.json"
    at = app_on(ds, TIMEOUT, pred_path=str(masks_only), auto_modalities=False,
                modalities=["segmentation", "bbox", "oriented_bbox"]).run()
    assert_ok(at)
    assert "not submitted" in _texts(at).lower()
    hbb = [m for m in at.metric if m.label == "Micro F1"]
    assert hbb == [] or all(m.value == "—" for m in hbb)
    at = app_on(ds, TIMEOUT, auto_modalities=False,
                modalities=["segmentation", "bbox", "oriented_bbox"],
                cmp_b_path=str(masks_only))
    goto(at, COMPARE)
    at.run()
    assert_ok(at)
    table = table_frames(m.value for m in at.markdown)[0]  # a static table (issue 49)
    boxes = table[table["modality"].isin(["HBB", "OBB"])]
    assert len(boxes) == 8
    assert (boxes["B"] == "—").all() and (boxes["Δ B − A"] == "—").all()
    assert (boxes["CI low"] == "—").all()


def test_leaderboard_ranks_a_box_free_model_after_the_others_on_boxes(ds: Dataset) -> None:
    at = app_on(ds, TIMEOUT, auto_modalities=False,
                modalities=["segmentation", "bbox", "oriented_bbox"])
    goto(at, LEADERBOARD)
    at.run()
    assert_ok(at)
    table = at.dataframe[0].value
    row = table[table["model"] == "masks_only"].iloc[0]
    assert row["HBB micro F1"] is None or row["HBB micro F1"] != row["HBB micro F1"]  # — / NaN
    assert "not submitted" in _texts(at).lower()


def test_coverage_warnings_are_shown_beside_the_numbers(ds: Dataset) -> None:
    """Defect 5: 2 of 6 rows submitted, yet no word."""
    doc = json.loads(ds.model_a.read_text())
    doc["tasks"]["open_vocabulary"] = doc["tasks"]["open_vocabulary"][:2]
    partial = ds.root / "predictions" / "partial.json"
    partial.write_text(json.dumps(doc))
    at = app_on(ds, TIMEOUT, pred_path=str(partial)).run()
    assert not at.exception
    assert any("4 of 6" in w.value and "no prediction row" in w.value for w in at.warning)


def test_the_sidebar_iou_threshold_reaches_the_evaluator(ds: Dataset) -> None:
    """Defect 6: ov_000003's predicted box has IoU 48/232 = 0.207 with its GT box
    (intersection 8 x 6, union 140 + 140 - 48): a match at 0.2, none at 0.5."""
    at = app_on(ds, TIMEOUT)
    goto(at, EXPLORER)
    at.run()
    frame = at.dataframe[0].value
    assert frame.set_index("query_id").loc["ov_000003", "bbox_f1"] == 0.0
    at.sidebar.select_slider(key="iou_threshold").set_value(0.2).run()
    assert_ok(at)
    frame = at.dataframe[0].value
    assert frame.set_index("query_id").loc["ov_000003", "bbox_f1"] == 1.0
    assert "IoU threshold 0.2" in _texts(at)


def test_data_flag_opens_the_app_on_that_folder(ds: Dataset,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``streamlit run app.py -- --data DIR`` opens on DIR (its first submission)."""
    import sys

    monkeypatch.setattr(sys, "argv", ["app.py", "--data", str(ds.root)])
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                           default_timeout=TIMEOUT).run()
    assert_ok(at)
    assert Path(at.session_state["gt_path"]).resolve() == ds.gt.resolve()
    assert _evaluated_file(at).parent == (ds.root / "predictions").resolve()
    assert "other_bench" in _texts(at)


def test_user_text_is_shown_as_text_in_the_viewer(ds: Dataset) -> None:
    """A phrase written as a Markdown link or as HTML stays text (no clickable link, no
    element of the input's) in the viewer's HTML block and in any Markdown."""
    gt = json.loads(ds.gt.read_text())
    gt["tasks"]["open_vocabulary"][0]["phrase"] = ("tank [CLICK-ME](https://example.com) "
                                                   "<img src=x onerror=alert(1)>")
    ds.gt.write_text(json.dumps(gt))
    at = app_on(ds, TIMEOUT, selected={"vocabulary": "ov_000001"})
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    card = card_html(at)
    assert ("<b>tank [CLICK-ME](https://example.com) &lt;img src=x onerror=alert(1)&gt;</b>"
            in card)
    assert "<img src=x" not in card and "href='https://example.com" not in card
    shown = [m.value for m in at.markdown if "CLICK" in m.value]
    # Both brackets escaped: Markdown renders them as text, so no link exists.
    assert all("\\[CLICK-ME\\](https" in v for v in shown)
