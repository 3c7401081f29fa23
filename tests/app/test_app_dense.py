"""AppTest of the explorer and the Gallery on a dense mosaic (issue 25): the scene of
``benchmarks.dense_scene`` (3,333 x 3,546 px, packed vehicles), smaller in box count so
that it evaluates in a test's time. Expected counts come from the files written."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from app_fixtures import Dataset, app_on, assert_ok, card_html, card_picture, goto, record_pictures
from PIL import Image

from benchmarks import dense_scene

pytestmark = pytest.mark.usefixtures("fresh_caches")

DENSE_GT = 900


@pytest.fixture(scope="module")
def mosaic(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    root = dense_scene.write_mosaic(tmp_path_factory.mktemp("mosaic"), dense_gt=DENSE_GT,
                                    dense_queries=1)
    pred = root / "predictions" / "packed.json"
    return Dataset(root, root / "ground_truth.json", root, pred, pred)


def _rows(ds: Dataset) -> dict[str, dict]:
    return {r["query_id"]: r for r in json.loads(ds.model_a.read_text())["tasks"][
        "open_vocabulary"]}


def test_the_scene_is_deterministic_and_dense(tmp_path: Path, mosaic: Dataset) -> None:
    again = dense_scene.write_mosaic(tmp_path / "again", dense_gt=DENSE_GT, dense_queries=1)
    for name in ("ground_truth.json", "predictions/packed.json", "images/mosaic.jpg"):
        assert (again / name).read_bytes() == (mosaic.root / name).read_bytes()
    gt = json.loads(mosaic.gt.read_text())
    dense = next(a for a in gt["annotations"] if a["id"] == "dense")
    assert (dense["width"], dense["height"]) == (3333, 3546)
    assert len(dense["bbox"]) == len(dense["oriented_bbox"]) == DENSE_GT
    assert len(_rows(mosaic)["dense_00"]["bbox"]) > 0.9 * DENSE_GT


def test_the_dense_query_in_the_explorer(mosaic: Dataset,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    served = record_pictures(monkeypatch)
    at = app_on(mosaic, selected={"vocabulary": "dense_00"})
    goto(at, "pages/Query_explorer.py")
    at.run()
    assert_ok(at)
    card = card_html(at)
    assert "<code>dense_00</code>" in card
    n_pred = len(_rows(mosaic)["dense_00"]["bbox"])
    # more boxes than a list can carry cheaply: a box number instead of 1,760 options
    assert not [s for s in at.selectbox if s.key == "_w_objects"]
    number = at.number_input(key="_w_object_no")
    n_obb = len(_rows(mosaic)["dense_00"]["oriented_bbox"])  # then the OBBs (issue 27)
    total = 2 * DENSE_GT + n_pred + n_obb
    assert (number.min, number.max) == (1, total)
    assert f"{total:,} boxes" in number.label and f"GT HBB 1–{DENSE_GT}" in number.label
    picture = np.asarray(Image.open(io.BytesIO(card_picture(at, served))))
    assert max(picture.shape[:2]) == 1024
    # the view opens on one small vehicle: its green (matched) or orange (missed) GT
    # outline is in the picture
    green = (picture[..., 1] > 150) & (picture[..., 0] < 90) & (picture[..., 2] < 130)
    orange = (picture[..., 0] > 200) & (picture[..., 1] > 110) & (picture[..., 2] < 60)
    assert (green | orange).sum() > 500


def test_a_gallery_page_of_the_mosaic(mosaic: Dataset) -> None:
    at = app_on(mosaic)
    goto(at, "pages/Gallery.py")
    at.run()
    assert_ok(at)
    assert len(at.get("image")) == 48
    total = DENSE_GT + 5 * 1  # one sparse query of 5 GT boxes
    assert f"{total:,} tiles · showing 1–48" in [c.value for c in at.caption]


def test_a_box_number_zooms_to_that_box(mosaic: Dataset) -> None:
    at = app_on(mosaic, selected={"vocabulary": "dense_00"})
    goto(at, "pages/Query_explorer.py")
    at.run()
    gt = json.loads(mosaic.gt.read_text())
    boxes = next(a for a in gt["annotations"] if a["id"] == "dense")["bbox"]
    for number, (x, y, w, h) in ((3, boxes[2]), (DENSE_GT, boxes[-1])):
        at.number_input(key="_w_object_no").set_value(number).run()
        assert_ok(at)
        assert not at.warning  # no widget-state warning either
        assert at.session_state["view_focus"] == ("dense_00", number - 1)
        x0, x1, y0, y1 = (float(v.replace(",", "")) for v in re.search(
            r"Showing x ([\d,.]+)–([\d,.]+), y ([\d,.]+)–([\d,.]+)",
            card_html(at)).groups())
        assert x0 <= x and x + w <= x1 and y0 <= y and y + h <= y1
        assert x1 - x0 <= 96.0 + 1  # that box alone, not the scene
        assert any(c.value.startswith(f"GT HBB {number} · ") for c in at.caption)
    at.number_input(key="_w_object_no").set_value(None).run()
    assert at.session_state["view_focus"] is None
