"""Hostile coordinates in converter sources (issue 26 item 10): a coordinate beyond the
evaluator's ±1e100 bound (``boxparse.MAX_COORDINATE``: beyond it IoU arithmetic overflows)
is refused by every converter with the file, the line or id, and the field, before any of
it reaches GEOS or pycocotools (no RuntimeWarning, no GEOSException)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
from convert_helpers import DATA
from pycocotools import mask as cocomask

from ovearth_core.convert import from_coco, from_dota, from_rsvg
from ovearth_core.convert.common import Problems
from ovearth_core.convert.dota import Quads, parse_label_lines, parse_task1_lines
from ovearth_core.errors import OVEarthInputError

HUGE = ["1e300", "-1e300", "1.0000001e100", "-2e100"]
FINE = ["1e100", "-1e100", "9.99e99"]  # the bound itself is accepted, as by the evaluator


def _problems(call) -> list:
    """The problems ``call`` raises, with every warning an error (none may be emitted)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(OVEarthInputError) as err:
            call()
    return err.value.problems


@pytest.mark.parametrize("value", HUGE)
def test_dota_label_line_beyond_the_bound(value: str) -> None:
    quads, bad = Quads([], [], []), Problems()
    lines = ["10 10 30 10 30 20 10 20 plane 0", f"0 0 {value} 0 5 5 0 5 ship 0"]
    found = parse_label_lines(lines, Path("P9.txt"), quads, bad)
    assert [(p.file, p.line, p.field) for p in bad.items] == [("P9.txt", 2, "x2")]
    assert "1e100" in bad.items[0].expected and value in bad.items[0].found
    assert len(found) == len(quads.points) == 1


@pytest.mark.parametrize("value", FINE)
def test_dota_label_line_at_the_bound_is_read(value: str) -> None:
    quads, bad = Quads([], [], []), Problems()
    parse_label_lines([f"0 0 {value} 0 5 5 0 5 ship 0"], Path("P9.txt"), quads, bad)
    assert not bad.items and quads.points[0][2] == float(value)


@pytest.mark.parametrize("value", HUGE)
def test_dota_task1_line_beyond_the_bound(value: str) -> None:
    quads, bad = Quads([], [], []), Problems()
    got = parse_task1_lines([f"P1 0.5 1 2 3 4 5 6 7 {value}"], Path("Task1_x.txt"), quads, bad)
    assert got == [] and [(p.line, p.field) for p in bad.items] == [(1, "y4")]
    assert "1e100" in bad.items[0].expected


def test_from_dota_refuses_hostile_labels_and_results(tmp_path: Path) -> None:
    labels = tmp_path / "labelTxt"
    shutil.copytree(DATA / "dota" / "labelTxt", labels)
    (labels / "P0001.txt").write_text("0 0 1e300 0 1e300 1e300 0 1e300 plane 0\n")
    results = tmp_path / "results" / "model_a"
    results.mkdir(parents=True)
    (results / "Task1_plane.txt").write_text("P0002 0.9 0 0 1e300 0 1e300 1e300 0 1e300\n")
    problems = _problems(lambda: from_dota(labels, DATA / "dota" / "images",
                                           tmp_path / "out", results=[results]))
    where = {(Path(p.file).name, p.line, p.field) for p in problems}
    assert where == {("P0001.txt", 1, "x2"), ("Task1_plane.txt", 1, "x2")}
    assert not (tmp_path / "out").exists()


def _coco(tmp_path: Path, ann: dict | None = None, result: dict | None = None
          ) -> tuple[Path, list[Path]]:
    doc = json.loads((DATA / "coco" / "instances.json").read_text())
    if ann is not None:
        doc["annotations"][0].update(ann)
    (tmp_path / "i.json").write_text(json.dumps(doc))
    rows = json.loads((DATA / "coco" / "results.json").read_text())
    if result is not None:
        rows[0].update(result)
        rows[0] = {k: v for k, v in rows[0].items() if v is not None}  # None: no such key
    (tmp_path / "r.json").write_text(json.dumps(rows))
    return tmp_path / "i.json", [tmp_path / "r.json"]


@pytest.mark.parametrize(("ann", "result", "field"), [
    ({"bbox": [1e300, 4, 10, 6]}, None, "annotations[0].bbox"),
    ({"bbox": [4, 4, 1e300, 6]}, None, "annotations[0].bbox"),
    ({"segmentation": [[4, 4, 1e300, 4, 1e300, 1e300, 4, 1e300]]}, None,
     "annotations[0].segmentation[0]"),
    ({"segmentation": [[4, 4, 14, 4, 14, -2e100, 4, 10]]}, None,
     "annotations[0].segmentation[0]"),
    ({"segmentation": [[4, 4, 1e7, 4, 1e7, 1e7]]}, None, "annotations[0].segmentation[0]"),
    ({"segmentation": [[4, 4, 81, 4, 14, 10]]}, None, "annotations[0].segmentation[0]"),
    (None, {"bbox": [1e300, 4, 10, 6]}, "[0].bbox"),
    (None, {"bbox": None, "segmentation": [[4, 4, 1e300, 4, 1e300, 1e300]]},
     "[0].segmentation[0]"),
])
def test_from_coco_refuses_coordinates_beyond_the_bound(tmp_path: Path, ann: dict | None,
                                                        result: dict | None,
                                                        field: str) -> None:
    instances, results = _coco(tmp_path, ann, result)
    problems = _problems(lambda: from_coco(instances, DATA / "coco" / "images",
                                           tmp_path / "out", results=results, negatives=0))
    (problem,) = problems
    head, tail = field.split(".", 1)
    assert problem.field.startswith(head) and problem.field.endswith("." + tail), problem.field
    assert "1e100" in problem.expected
    assert Path(problem.file).name == ("i.json" if ann else "r.json")


def test_polygons_near_the_image_are_read(tmp_path: Path) -> None:
    """Vertices up to the image grown by its size (40 x 30: x in [-40, 80], y in [-30, 60])
    are kept; pycocotools clips them to the image when it rasterises."""
    instances, results = _coco(tmp_path, {"segmentation": [[-40, -30, 80, -30, 80, 60,
                                                             -40, 60]]})
    from_coco(instances, DATA / "coco" / "images", tmp_path / "out", results=results,
              negatives=0)
    gt = json.loads((tmp_path / "out" / "ground_truth.json").read_text())
    areas = [int(cocomask.area(a["segmentation"])) for a in gt["annotations"]
             if a["segmentation"] is not None]
    assert 40 * 30 in areas  # the whole image, and nothing else changed


def test_from_rsvg_refuses_coordinates_beyond_the_bound(tmp_path: Path) -> None:
    annotations = tmp_path / "Annotations"
    shutil.copytree(DATA / "rsvg" / "Annotations", annotations)
    xml = (annotations / "00001.xml").read_text()
    start = xml.index("<xmax>") + len("<xmax>")
    end = xml.index("</xmax>")
    (annotations / "00001.xml").write_text(xml[:start] + "1e300" + xml[end:])
    problems = _problems(lambda: from_rsvg(annotations, DATA / "rsvg" / "JPEGImages",
                                           tmp_path / "out"))
    assert [(Path(p.file).name, p.field) for p in problems] == [
        ("00001.xml", "<object> 0 <bndbox><xmax>")]
    assert problems[0].line is not None and "1e100" in problems[0].expected
