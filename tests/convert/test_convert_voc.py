"""``from-voc``: Pascal VOC, DIOR and HRSC2016 XML (+ per-class results) into a benchmark
(issue 34, item 11). Expected values are worked by hand from the XML written here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from convert_helpers import blank_images, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core import evaluate_files
from ovearth_core.convert import from_voc
from ovearth_core.errors import OVEarthInputError


def _obj(name: str, box: tuple[float, ...], difficult: int | None = 0, extra: str = "") -> str:
    diff = "" if difficult is None else f"<difficult>{difficult}</difficult>"
    corners = "".join(f"<{k}>{v:g}</{k}>" for k, v in zip(("xmin", "ymin", "xmax", "ymax"), box,
                                                         strict=True))
    return f"<object><name>{name}</name>{diff}<bndbox>{corners}</bndbox>{extra}</object>"


def _voc(root: Path) -> tuple[Path, Path]:
    """Two VOC images (100 x 80): 000001 with a dog and a difficult person, 000002 with a
    cat (DIOR style: no difficult tag)."""
    ann = root / "Annotations"
    ann.mkdir(parents=True)
    (ann / "000001.xml").write_text(
        "<annotation>\n<filename>000001.jpg</filename>\n<size><width>100</width><height>80"
        "</height><depth>3</depth></size>\n" + _obj("dog", (10, 10, 50, 40)) + "\n"
        + _obj("person", (60, 5, 90, 75), 1) + "\n</annotation>\n")
    (ann / "000002.xml").write_text(
        "<annotation><filename>000002.jpg</filename><size><width>100</width><height>80</height>"
        "</size>" + _obj("cat", (20, 20, 60, 60), None) + "</annotation>")
    images = blank_images(root / "JPEGImages", {"000001.jpg": (100, 80), "000002.jpg": (100, 80)})
    return ann, images


def _gt(bench: Path) -> dict:
    return json.loads((bench / "ground_truth.json").read_text())


def test_voc_objects_become_queries_with_difficult_flags(tmp_path: Path) -> None:
    ann, images = _voc(tmp_path)
    from_voc(ann, images, tmp_path / "b")
    gt = _gt(tmp_path / "b")
    anns = {a["id"]: a for a in gt["annotations"]}
    assert anns["000001_dog"]["bbox"] == [[10, 10, 40, 30]]  # continuous: no VOC + 1
    assert anns["000001_person"]["difficult"] == [1]
    assert anns["000001_cat"]["bbox"] == [] and anns["000002_cat"]["difficult"] == [0]
    assert all(a["oriented_bbox"] == [] for a in anns.values())  # no rotated box anywhere
    types = {q["query_id"]: q["type"] for q in gt["tasks"]["open_vocabulary"]}
    assert types == {"ov_000001_cat": "negative", "ov_000001_dog": "positive",
                     "ov_000001_person": "positive", "ov_000002_cat": "positive",
                     "ov_000002_dog": "negative", "ov_000002_person": "negative"}
    assert gt["source"] == {"format": "VOC", "resample_unit": "image"}
    from_voc(ann, images, tmp_path / "ig", difficult="ignore")
    person = {a["id"]: a for a in _gt(tmp_path / "ig")["annotations"]}["000001_person"]
    assert person["bbox"] == [] and person["ignore_bbox"] == [[60, 5, 30, 70]]


def test_voc_results_evaluate_as_worked_by_hand(tmp_path: Path) -> None:
    """VOC comp4 files: the dog found (IoU 1), a false dog on 000002, the cat missed:
    per query TP / FP / FN."""
    ann, images = _voc(tmp_path)
    res = tmp_path / "model"
    res.mkdir()
    (res / "comp4_det_test_dog.txt").write_text("000001 0.9 10 10 50 40\n000002 0.4 1 1 9 9\n")
    (res / "comp4_det_test_cat.txt").write_text("000002 0.8 70 0 99 10\n")
    proc = run_cli("from-voc", "--annotations", str(ann), "--images", str(images), "--results",
                   str(res), "--out", str(tmp_path / "b"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    result = evaluate_files(tmp_path / "b" / "ground_truth.json",
                            tmp_path / "b" / "predictions" / "model.json", ["vocabulary"],
                            modalities="bbox")["open_vocabulary"]
    got = {s["sample_id"]: {k: s["bbox"][k] for k in ("tp", "fp", "fn")}
           for s in result["per_sample"] if s.get("bbox")}
    assert got["ov_000001_dog"] == {"tp": 1, "fp": 0, "fn": 0}
    assert got["ov_000002_cat"] == {"tp": 0, "fp": 1, "fn": 1}


def test_hrsc2016_rotated_boxes(tmp_path: Path) -> None:
    """HRSC2016: mbox 40 x 20 about (50, 40), angle pi/2: the width runs along y (cos, sin)
    = (0, 1): corners (60, 20), (60, 60), (40, 60), (40, 20) as a set; class ids named by
    the classes file."""
    ann = tmp_path / "Annotations"
    ann.mkdir()
    obj = ("<HRSC_Object><Class_ID>100000005</Class_ID><difficult>0</difficult>"
           "<box_xmin>40</box_xmin><box_ymin>20</box_ymin><box_xmax>60</box_xmax>"
           "<box_ymax>60</box_ymax><mbox_cx>50</mbox_cx><mbox_cy>40</mbox_cy><mbox_w>40</mbox_w>"
           f"<mbox_h>20</mbox_h><mbox_ang>{math.pi / 2!r}</mbox_ang></HRSC_Object>")
    (ann / "100000001.xml").write_text(
        "<HRSC_Image><Img_FileName>100000001</Img_FileName><Img_FileFmt>bmp</Img_FileFmt>"
        "<Img_SizeWidth>120</Img_SizeWidth><Img_SizeHeight>90</Img_SizeHeight>"
        f"<HRSC_Objects>{obj}</HRSC_Objects></HRSC_Image>")
    classes = tmp_path / "classes.txt"
    classes.write_text("100000001 ship\n100000005 warcraft\n")
    summary = from_voc(ann, None, tmp_path / "b", classes=classes)
    assert any("numbers-only" in w for w in summary["warnings"])
    ship = {a["id"]: a for a in _gt(tmp_path / "b")["annotations"]}["100000001_warcraft"]
    assert (ship["width"], ship["height"], ship["image_path"]) == (120, 90,
                                                                  "images/100000001.bmp")
    assert ship["bbox"] == [[40, 20, 20, 40]]
    corners = {(round(x, 9), round(y, 9)) for x, y in ship["oriented_bbox"][0]}
    assert corners == {(60, 20), (60, 60), (40, 60), (40, 20)}


@pytest.mark.parametrize(("rot", "expected"), [
    # roLabelImg: w 40, h 20 about (50, 40), angle 0.5: its reader turns a corner (dx, dy)
    # by rotatePoint(p, -angle), to (dx cos a - dy sin a, dx sin a + dy cos a).
    ("<cx>50</cx><cy>40</cy><w>40</w><h>20</h><angle>0.5</angle>",
     [(50 + dx * math.cos(0.5) - dy * math.sin(0.5), 40 + dx * math.sin(0.5) + dy * math.cos(0.5))
      for dx, dy in ((-20, -10), (20, -10), (20, 10), (-20, 10))]),
    # DIOR-R: the four corners as written.
    ("<x_left_top>10</x_left_top><y_left_top>10</y_left_top><x_right_top>40</x_right_top>"
     "<y_right_top>20</y_right_top><x_right_bottom>35</x_right_bottom><y_right_bottom>35"
     "</y_right_bottom><x_left_bottom>5</x_left_bottom><y_left_bottom>25</y_left_bottom>",
     [(10, 10), (40, 20), (35, 35), (5, 25)]),
])
def test_robndbox_forms(tmp_path: Path, rot: str, expected: list[tuple[float, float]]) -> None:
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "a.xml").write_text(
        "<annotation><size><width>100</width><height>80</height></size><object><name>ship"
        f"</name><robndbox>{rot}</robndbox></object></annotation>")
    from_voc(ann, None, tmp_path / "b")
    anns = {a["id"]: a for a in _gt(tmp_path / "b")["annotations"]}
    got = anns["a_ship"]["oriented_bbox"][0]
    assert [v for p in got for v in p] == pytest.approx([v for p in expected for v in p])
    xs, ys = [p[0] for p in expected], [p[1] for p in expected]
    assert anns["a_ship"]["bbox"][0] == pytest.approx([min(xs), min(ys), max(xs) - min(xs),
                                                       max(ys) - min(ys)])


@pytest.mark.parametrize(("xml", "field", "expected"), [
    ("<!DOCTYPE x [<!ENTITY a 'b'>]><annotation/>", "(document)", "without DOCTYPE"),
    ("<annotation><object>", "(document)", "well-formed"),
    ("<root/>", "(root)", "<HRSC_Image>"),
    ("<annotation><size><width>" + "9" * 5000 + "</width><height>5</height></size>"
     + _obj("dog", (1, 1, 5, 5)) + "</annotation>", "(size) width", "whole number"),
    ("<annotation><size><width>10</width><height>5</height></size>"
     + _obj("dog", (1, 1, 5, 5), 2) + "</annotation>", "<object> 0 <difficult>", "0 or 1"),
    ("<annotation><size><width>10</width><height>5</height></size>"
     + _obj("dog", (5, 1, 1, 5)) + "</annotation>", "<object> 0 <bndbox>", "xmax > xmin"),
    # a zero-width box (as 6 of DIOR's 192,518 objects): the field is the file's own tag
    ("<HRSC_Image><Img_FileName>h</Img_FileName><Img_FileFmt>bmp</Img_FileFmt>"
     "<Img_SizeWidth>10</Img_SizeWidth><Img_SizeHeight>5</Img_SizeHeight><HRSC_Objects>"
     "<HRSC_Object><Class_ID>1</Class_ID><difficult>0</difficult><box_xmin>1</box_xmin>"
     "<box_ymin>1</box_ymin><box_xmax>1</box_xmax><box_ymax>4</box_ymax><mbox_cx>2</mbox_cx>"
     "<mbox_cy>2</mbox_cy><mbox_w>2</mbox_w><mbox_h>2</mbox_h><mbox_ang>0</mbox_ang>"
     "</HRSC_Object></HRSC_Objects></HRSC_Image>",
     "<HRSC_Object> 0 <box_xmin> <box_ymin> <box_xmax> <box_ymax>", "box_xmax > box_xmin"),
    ("<annotation><size><width>10</width><height>5</height></size>"
     + _obj("dog", (1, 1, 1e300, 5)) + "</annotation>", "<object> 0 <xmax>", "1e100"),
    ("<annotation><size><width>10</width><height>5</height></size>"
     "<object><name>dog</name></object></annotation>", "<object> 0 <bndbox>", "<robndbox>"),
    ("<annotation><filename>../../etc/x.jpg</filename><size><width>10</width><height>5</height>"
     "</size>" + _obj("dog", (1, 1, 5, 5)) + "</annotation>", "(file name)", "relative"),
    ("<annotation>" + _obj("dog", (1, 1, 5, 5)) + "</annotation>", "(size)", "numbers-only"),
])
def test_hostile_or_broken_xml_is_refused_and_nothing_is_written(
        tmp_path: Path, xml: str, field: str, expected: str) -> None:
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "good.xml").write_text("<annotation><size><width>10</width><height>5</height>"
                                  "</size>" + _obj("dog", (1, 1, 5, 5)) + "</annotation>")
    (ann / "bad.xml").write_text(xml)
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, None, tmp_path / "b")
    problems = [p for p in err.value.problems if p.file.endswith("bad.xml")]
    assert problems and problems[0].field == field and expected in problems[0].expected, \
        err.value.problems
    assert not (tmp_path / "b").exists()


def test_classes_file_fixes_the_vocabulary(tmp_path: Path) -> None:
    ann, images = _voc(tmp_path)
    classes = tmp_path / "classes.txt"
    classes.write_text("dog\ncat\nperson\nbird\n")
    from_voc(ann, images, tmp_path / "b", classes=classes)
    phrases = {q["phrase"] for q in _gt(tmp_path / "b")["tasks"]["open_vocabulary"]}
    assert phrases == {"dog", "cat", "person", "bird"}
    classes.write_text("dog\ncat\n")
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, images, tmp_path / "c", classes=classes)
    assert "person" in str(err.value) and "--classes" in str(err.value)


def test_result_file_problems(tmp_path: Path) -> None:
    ann, images = _voc(tmp_path)
    res = tmp_path / "model"
    res.mkdir()
    (res / "comp4_det_test_horse.txt").write_text("000001 0.9 10 10 50 40\n")
    (res / "comp4_det_test_dog.txt").write_text("000009 0.9 10 10 50 40\n000001 x 1 1 2 2\n"
                                                "000001 0.5 1 1 2\n")
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, images, tmp_path / "b", [res])
    fields = sorted((Path(p.file).name, p.line, p.field) for p in err.value.problems)
    assert fields == [("comp4_det_test_dog.txt", 1, "image"),
                      ("comp4_det_test_dog.txt", 2, "(numbers)"),
                      ("comp4_det_test_dog.txt", 3, "(detection)"),
                      ("comp4_det_test_horse.txt", None, "(file name)")]


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_the_reader_never_crashes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    from ovearth_core.convert.common import Problems
    from ovearth_core.convert.voc import read_voc

    path = tmp_path_factory.mktemp("x") / "a.xml"
    path.write_bytes(b"<annotation><size><width>9</width><height>9</height></size><object>"
                     + data + b"</object></annotation>")
    bad = Problems()
    entry = read_voc(path, {}, None, {}, bad)
    assert (entry is None) == bool(bad.items)


def test_the_summary_says_what_was_converted_and_skipped(tmp_path: Path) -> None:
    """Issue 46: two XML files, one image found and one numbers-only; an image no XML names
    and an upper-case .XML file are skipped, each said with why."""
    ann, images = _voc(tmp_path)
    (images / "000002.jpg").unlink()
    blank_images(images, {"000009.jpg": (10, 10)})
    (ann / "000003.XML").write_text("<annotation/>")
    out = tmp_path / "b"
    proc = run_cli("from-voc", "--annotations", str(ann), "--images", str(images), "--out",
                   str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"wrote {out}: 2 images (1 with their files in images/, 1 "
                               "numbers-only), 6 annotations"), lines
    assert lines[1:] == [
        f"python -m ovearth_core.convert from-voc: skipped: 1 entries in {ann} are not .xml "
        "files (not read): 000003.XML",
        f"python -m ovearth_core.convert from-voc: skipped: 1 images in {images} are named by "
        "no XML file (not converted: no annotation): 000009.jpg"]
    assert "1 of 2 images are not in" in proc.stderr
    readme = (out / "README.md").read_text()
    assert "- 2 images (1 with their files in images/, 1 numbers-only);" in readme
    assert "000003.XML" in readme and "000009.jpg" in readme
    assert sorted(p.name for p in (out / "images").iterdir()) == ["000001.jpg"]
