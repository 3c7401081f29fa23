"""AppTest of the mask components' object outcomes: the Confusion page offers masks and its
cells open their queries in the explorer; the explorer's "Objects of" choice, its
object-outcome filter and "Objects by outcome" list show mask components."""

from __future__ import annotations

import json

import numpy as np
import pytest
from app_fixtures import Dataset, app_on, assert_ok, goto
from PIL import Image
from streamlit.testing.v1 import AppTest

from ovearth_core.masks import encode

pytestmark = pytest.mark.usefixtures("fresh_caches")

H, W = 30, 80
# (row0, row1, col0, col1), inclusive; the scene of tests/analysis/test_mask_objects.py.
SHIPS = [(2, 7, 0, 9), (2, 7, 14, 23), (2, 7, 28, 34), (2, 7, 36, 40), (2, 7, 46, 51)]
SHIP_PRED = [(2, 7, 0, 9), (2, 7, 14, 20), (2, 7, 22, 23), (2, 7, 27, 41), (15, 20, 56, 65),
             (15, 20, 68, 70), (25, 27, 72, 76)]
SVS = [(15, 20, 56, 65), (15, 20, 68, 77)]
SV_PRED = [(15, 20, 56, 65)]
LV_PRED = [(15, 20, 68, 77), (2, 5, 72, 76)]  # a negative query: V1 and a blob


def _mask(rects: list[tuple[int, int, int, int]]) -> dict:
    m = np.zeros((H, W), dtype=np.uint8)
    for r0, r1, c0, c1 in rects:
        m[r0:r1 + 1, c0:c1 + 1] = 1
    return encode(m)


def _boxes(rects: list[tuple[int, int, int, int]]) -> list[list[int]]:
    return [[c0, r0, c1 + 1 - c0, r1 + 1 - r0] for r0, r1, c0, c1 in rects]


def _ann(ann_id: str, category: str, rects: list[tuple[int, int, int, int]]) -> dict:
    return {"id": ann_id, "image_path": "images/scene.png", "width": W, "height": H,
            "category_name": category, "segmentation": _mask(rects), "bbox": _boxes(rects)}


def _pred(qid: str, rects: list[tuple[int, int, int, int]]) -> dict:
    return {"query_id": qid, "segmentation": _mask(rects),
            "bbox": [{"bbox": [x, y, x + w, y + h], "score": 0.9}
                     for x, y, w, h in _boxes(rects)]}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    root = tmp_path_factory.mktemp("masks")
    (root / "images").mkdir()
    pixels = np.random.default_rng(0).integers(0, 255, (H, W, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(root / "images" / "scene.png")
    gt = {"annotations": [_ann("ships", "ship", SHIPS), _ann("svs", "small vehicle", SVS),
                          _ann("lv", "large vehicle", [(25, 28, 0, 5)])],
          "tasks": {"open_vocabulary": [
              {"query_id": "ov_ship", "ann_id": "ships", "type": "positive", "phrase": "ship"},
              {"query_id": "ov_sv", "ann_id": "svs", "type": "positive",
               "phrase": "small vehicle"},
              {"query_id": "ov_lv", "ann_id": "lv", "type": "negative",
               "phrase": "large vehicle"}]}}
    pred = {"tasks": {"open_vocabulary": [_pred("ov_ship", SHIP_PRED),
                                          _pred("ov_sv", SV_PRED), _pred("ov_lv", LV_PRED)]}}
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "pred.json").write_text(json.dumps(pred))
    return Dataset(root, root / "ground_truth.json", root, root / "pred.json",
                   root / "pred.json")


def _on(bench: Dataset, page: str, modalities: list[str], **state: object) -> AppTest:
    at = app_on(bench, timeout=120, modalities=modalities, auto_modalities=False, **state)
    goto(at, page)
    return at.run()


def test_confusion_page_counts_mask_components_and_opens_the_explorer(bench: Dataset
                                                                        ) -> None:
    at = _on(bench, "pages/Confusion.py", ["segmentation"])
    assert_ok(at)
    assert at.radio(key="_conf_modality").options == ["masks"]
    buttons = [b for b in at.button if b.key and b.key.startswith("conf_")]
    # The large vehicle's blob on V1 and the ship component on V0 (IoU 1 each); the ship
    # component on V1 reaches only 18/60.
    assert [b.label for b in buttons] == ["1 large vehicle mask objects on small vehicle →",
                                          "1 ship mask objects on small vehicle →"]
    buttons[1].click().run()
    assert_ok(at)
    assert at.session_state["flt_categories"] == ["ship"]
    assert at.session_state["flt_objects"] == ["class confusion"]
    assert at.session_state["flt_obj_modality"] == "segmentation"
    assert list(at.dataframe[0].value["query_id"]) == ["ov_ship"]


def test_confusion_page_offers_masks_beside_boxes(bench: Dataset) -> None:
    at = _on(bench, "pages/Confusion.py", ["segmentation", "bbox"])
    assert_ok(at)
    radio = at.radio(key="_conf_modality")
    assert radio.options == ["masks", "HBB"] and radio.value == "bbox"
    radio.set_value("segmentation").run()
    assert_ok(at)
    labels = [b.label for b in at.button if b.key and b.key.startswith("conf_")]
    assert labels[0].endswith("mask objects on small vehicle →")


def test_explorer_filter_and_object_list_show_mask_components(bench: Dataset) -> None:
    at = _on(bench, "pages/Query_explorer.py", ["segmentation"],
             flt_objects=["found as other class"], _w_objects_open=True)
    assert_ok(at)
    assert at.multiselect(key="_w_flt_objects").label == "Object outcome (masks)"
    assert list(at.dataframe[0].value["query_id"]) == ["ov_sv"]
    objects = at.dataframe[1].value  # "Objects by outcome" of the shown query
    assert list(objects["object"]) == ["GT 2", "GT 1", "pred 1"]
    assert list(objects["outcome"]) == ["found as other class", "matched", "matched"]
    assert objects["nearest object"].iloc[0] == "large vehicle · IoU 1.00 (ov_lv)"
    assert not [s for s in at.selectbox if s.key == "_w_objlist"]  # no box to zoom to
    expander = [e.label for e in at.expander if e.label.startswith("Objects by outcome")]
    assert expander == ["Objects by outcome (masks)"]
    assert any(c.value.startswith("2 GT, 1 predicted: ") for c in at.caption)


def test_explorer_objects_of_switches_between_boxes_and_masks(bench: Dataset) -> None:
    at = _on(bench, "pages/Query_explorer.py", ["segmentation", "bbox"],
             flt_objects=["mislocalised"])
    assert_ok(at)
    pick = at.selectbox(key="_w_flt_obj_modality")
    assert pick.options == ["auto", "masks", "HBB"]
    assert at.multiselect(key="_w_flt_objects").label == "Object outcome (HBB)"
    # As boxes, the merged prediction (cols 27-41) has IoU 0.47 with ship S2's box: the
    # ship query is mislocalised in HBB too; switch to masks and it stays, by components.
    pick.set_value("segmentation").run()
    assert_ok(at)
    assert at.multiselect(key="_w_flt_objects").label == "Object outcome (masks)"
    assert list(at.dataframe[0].value["query_id"]) == ["ov_ship"]
    table = at.dataframe[0].value
    assert "mislocalised 1" in table["object_errors"].iloc[0]
