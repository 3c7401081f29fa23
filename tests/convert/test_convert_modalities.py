"""A modality a source does not have is absent, not invented (issue 46, item 1).

An axis-aligned result line is a box only (no rectangle as an oriented box: an HBB detector
would then get oriented-box scores and vote in oriented-box audits); a rotated line is an
oriented box only; a VOC ``<bndbox>`` object has no oriented box, so a data set where only
some objects have a rotated box gets none (with a warning); a COCO result without
``oriented_bbox`` has none. ``--modalities auto`` then infers what each submission gave.
"""

from __future__ import annotations

import json
from pathlib import Path

from convert_helpers import DATA

from ovearth_core.convert import from_coco, from_voc
from ovearth_core.io import load_samples

DIOR_R = ("<object><name>{name}</name><robndbox><x_left_top>{x}</x_left_top><y_left_top>10"
          "</y_left_top><x_right_top>{x2}</x_right_top><y_right_top>10</y_right_top>"
          "<x_right_bottom>{x2}</x_right_bottom><y_right_bottom>30</y_right_bottom>"
          "<x_left_bottom>{x}</x_left_bottom><y_left_bottom>30</y_left_bottom></robndbox>"
          "</object>")
SIZE = "<size><width>100</width><height>80</height></size>"


def _rows(bench: Path, name: str) -> dict[str, dict]:
    doc = json.loads((bench / "predictions" / f"{name}.json").read_text())
    return {r["query_id"]: r for r in doc["tasks"]["open_vocabulary"]}


def test_voc_results_keep_only_the_modality_they_give(tmp_path: Path) -> None:
    """DIOR-R ground truth (every object rotated): an HBB results folder becomes boxes
    only, an OBB one oriented boxes only; auto infers bbox for the one, oriented_bbox for
    the other."""
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "a.xml").write_text(f"<annotation>{SIZE}" + DIOR_R.format(name="ship", x=10, x2=40)
                               + DIOR_R.format(name="car", x=50, x2=60) + "</annotation>")
    hbb, obb = tmp_path / "hbb", tmp_path / "obb"
    hbb.mkdir()
    obb.mkdir()
    (hbb / "det_ship.txt").write_text("a 0.9 10 10 40 30\n")
    (obb / "det_ship.txt").write_text("a 0.8 10 10 40 10 40 30 10 30\n")
    from_voc(ann, None, tmp_path / "b", [hbb, obb])
    gt = json.loads((tmp_path / "b" / "ground_truth.json").read_text())
    assert all(len(a["oriented_bbox"]) == len(a["bbox"]) for a in gt["annotations"])
    assert {a["id"]: a["oriented_bbox"] for a in gt["annotations"]}["a_ship"] == [
        [[10, 10], [40, 10], [40, 30], [10, 30]]]
    ship_h, ship_o = _rows(tmp_path / "b", "hbb")["ov_a_ship"], _rows(tmp_path / "b",
                                                                     "obb")["ov_a_ship"]
    assert ship_h["bbox"] == [{"bbox": [10, 10, 40, 30], "score": 0.9}]
    assert ship_h["oriented_bbox"] == []
    assert ship_o["bbox"] == []
    assert ship_o["oriented_bbox"] == [{"polygon": [[10, 10], [40, 10], [40, 30], [10, 30]],
                                        "score": 0.8}]
    for name, inferred in (("hbb", ("bbox",)), ("obb", ("oriented_bbox",))):
        samples = load_samples(tmp_path / "b" / "ground_truth.json",
                               tmp_path / "b" / "predictions" / f"{name}.json", "vocabulary",
                               modalities="auto")
        assert tuple(samples.modalities) == inferred


def test_voc_objects_without_a_rotated_box_get_none(tmp_path: Path) -> None:
    """One object with a <robndbox>, one with only a <bndbox>: no oriented box is written
    (the <bndbox>'s rectangle would be invented), and a warning says why."""
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "a.xml").write_text(f"<annotation>{SIZE}" + DIOR_R.format(name="ship", x=10, x2=40)
                               + "</annotation>")
    (ann / "b.xml").write_text(
        f"<annotation>{SIZE}<object><name>car</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>")
    summary = from_voc(ann, None, tmp_path / "b")
    gt = json.loads((tmp_path / "b" / "ground_truth.json").read_text())
    assert all(a["oriented_bbox"] == [] for a in gt["annotations"])
    assert {a["id"]: a["bbox"] for a in gt["annotations"]}["a_ship"] == [[10, 10, 30, 20]]
    warning = [w for w in summary["warnings"] if "rotated box" in w]
    assert warning and "1 of 2 objects" in warning[0] and "b.xml" in warning[0]
    assert any(warning[0] in line for line in
               (tmp_path / "b" / "README.md").read_text().splitlines())


def test_coco_box_results_get_no_oriented_box(tmp_path: Path) -> None:
    """The sample's COCO results: one of them gives an ``oriented_bbox`` and is the only
    oriented box written (no box's rectangle, no mask's minimum-area rectangle)."""
    sample = DATA / "coco"
    given = [r for r in json.loads((sample / "results.json").read_text())
             if "oriented_bbox" in r]
    assert len(given) == 1
    from_coco(sample / "instances.json", sample / "images", tmp_path / "b",
              [sample / "results.json"])
    rows = _rows(tmp_path / "b", "results").values()
    assert sum(len(r["bbox"]) for r in rows) > 1
    assert [o for r in rows for o in r["oriented_bbox"]] == [
        {"polygon": given[0]["oriented_bbox"], "score": given[0]["score"]}]
