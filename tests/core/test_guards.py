"""Guards for bug classes that once slipped past the tests (issue 27's planted bugs).

Each test here is hand-worked: its expected numbers come from the spec's rules applied by
hand (or from shapely directly), never from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely
from app_fixtures import Dataset, app_on, assert_ok, goto
from PIL import Image

from ovearth_core import cli, evaluate_open_vocab
from ovearth_core.io import load_open_vocab_samples

pytestmark = pytest.mark.usefixtures("fresh_caches")

W, H = 12, 10


def _ann(aid: str, category: str, box: tuple[float, float, float, float],
         obb: list[list[float]] | None = None) -> dict[str, Any]:
    x0, y0, x1, y1 = box
    return {"id": aid, "image_path": "images/img.png", "width": W, "height": H,
            "category_name": category, "segmentation": None,
            "bbox": [[x0, y0, x1 - x0, y1 - y0]],
            "oriented_bbox": [obb or [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]]}


def _query(qid: str, aid: str, negative: bool, phrase: str) -> dict[str, Any]:
    return {"query_id": qid, "ann_id": aid, "type": "negative" if negative else "positive",
            "phrase": phrase}


def _answer(qid: str, box: tuple[float, float, float, float] | None,
            obb: list[list[float]] | None = None) -> dict[str, Any]:
    if box is None:
        return {"query_id": qid, "bbox": [], "oriented_bbox": []}
    x0, y0, x1, y1 = box
    return {"query_id": qid, "bbox": [{"bbox": [x0, y0, x1, y1], "score": 0.9}],
            "oriented_bbox": [{"polygon": obb or [[x0, y0], [x1, y0], [x1, y1], [x0, y1]],
                               "score": 0.9}]}


def _write(root: Path, gt: dict[str, Any], pred: dict[str, Any]) -> Dataset:
    (root / "images").mkdir(parents=True)
    (root / "predictions").mkdir()
    Image.fromarray(np.full((H, W, 3), 90, np.uint8)).save(root / "images" / "img.png")
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "predictions" / "model.json").write_text(json.dumps(pred))
    model = root / "predictions" / "model.json"
    return Dataset(root, root / "ground_truth.json", root, model, model)


# ------------------------------------------------ per-category presence, hand-worked

def test_per_category_presence_counts_every_cell_by_hand(tmp_path: Path) -> None:
    """Spec "Presence": TP = positive with a prediction, FN = positive without, FP =
    negative with one, TN = negative without; accuracy = (TP + TN) / queries. A query's
    category is its linked annotation's (``category_name``). For "ship" below, by hand:
    TP 1, FN 1, FP 1, TN 2, accuracy 3/5 (a version that left the true negatives out gave
    1/3); "tank": TP 1, TN 1, accuracy 1."""
    box = (1.0, 1.0, 5.0, 5.0)
    anns = [_ann("s1", "ship", box), _ann("s2", "ship", box), _ann("s3", "ship", box),
            _ann("t1", "tank", box), _ann("t2", "tank", box)]
    queries = [_query("ship+1", "s1", False, "ship"), _query("ship+2", "s2", False, "ship"),
               _query("neg-1", "s3", True, "harbour"), _query("neg-2", "s3", True, "airport"),
               _query("neg-3", "s3", True, "bridge"),
               _query("tank+1", "t1", False, "tank"), _query("neg-4", "t2", True, "dam")]
    rows = [_answer("ship+1", box), _answer("ship+2", None), _answer("neg-1", box),
            _answer("neg-2", None), _answer("neg-3", None), _answer("tank+1", box),
            _answer("neg-4", None)]
    gt, pred = tmp_path / "gt.json", tmp_path / "pred.json"
    gt.write_text(json.dumps({"annotations": anns, "tasks": {"open_vocabulary": queries}}))
    pred.write_text(json.dumps({"tasks": {"open_vocabulary": rows}}))
    result = evaluate_open_vocab(load_open_vocab_samples(gt, pred, modalities={"bbox"}))
    by_cat = {c["category"]: c for c in result["per_category"]}
    assert (by_cat["ship"]["num_queries"], by_cat["ship"]["num_negative"]) == (5, 3)
    assert {k: by_cat["ship"]["presence"][k] for k in ("tp", "fn", "fp", "tn")} == \
        {"tp": 1, "fn": 1, "fp": 1, "tn": 2}
    assert by_cat["ship"]["presence"]["accuracy"] == pytest.approx(3 / 5, abs=1e-12)
    assert {k: by_cat["tank"]["presence"][k] for k in ("tp", "fn", "fp", "tn")} == \
        {"tp": 1, "fn": 0, "fp": 0, "tn": 1}
    assert by_cat["tank"]["presence"]["accuracy"] == pytest.approx(1.0, abs=1e-12)


# ------------------------------------- OBB IoU exactly at the threshold, CLI and app

# By shapely: IoU exactly 0.5 (area 0.99 of 1.98), while the envelope bound used to
# pre-screen candidate pairs computes 0.4999999999999982 in floating point: a candidate
# filter without its slack drops the pair, and the match becomes an FN.
GT_OBB = [[4.0, 6.4], [7.3, 6.4], [7.3, 7.0], [4.0, 7.0]]
PRED_OBB = [[4.0, 6.4], [7.3, 6.4], [7.3, 6.7], [4.0, 6.7]]


def _exact_half_dataset(root: Path) -> Dataset:
    gt = {"annotations": [_ann("a", "ship", (4.0, 6.4, 7.3, 7.0), GT_OBB)],
          "tasks": {"referring": [{"query_id": "r1", "ann_id": "a",
                                   "expression": "the ship"}]}}
    pred = {"tasks": {"referring": [{"query_id": "r1", "bbox": [],
                                     "oriented_bbox": [{"polygon": PRED_OBB, "score": 0.9}]}]}}
    return _write(root, gt, pred)


def test_exact_threshold_obb_premise() -> None:
    a, b = shapely.Polygon(GT_OBB), shapely.Polygon(PRED_OBB)
    assert a.intersection(b).area / a.union(b).area == 0.5


def test_obb_at_exactly_the_threshold_is_a_match_on_the_cli(tmp_path: Path) -> None:
    ds = _exact_half_dataset(tmp_path / "d")
    out = tmp_path / "r.json"
    assert cli.main(["--gt", str(ds.gt), "--predictions", str(ds.model_a), "--task",
                     "referring", "--modalities", "oriented_bbox", "--iou-threshold", "0.5",
                     "--output", str(out)]) == 0
    obb = json.loads(out.read_text())["per_sample"][0]["oriented_bbox"]
    assert (obb["tp"], obb["fp"], obb["fn"]) == (1, 0, 0)


def test_obb_at_exactly_the_threshold_is_a_match_in_the_app(tmp_path: Path) -> None:
    ds = _exact_half_dataset(tmp_path / "d")
    at = app_on(ds, 120, task="referring").run()
    assert_ok(at)
    goto(at, "pages/Query_explorer.py").run()
    assert_ok(at)
    table = at.dataframe[0].value
    row = table[table["query_id"] == "r1"].iloc[0]
    assert float(row["obb_f1"]) == 1.0
