"""A box whose corners are each within ±1e100 but 2e100 apart (issue 48): its width overflows
what the evaluator takes (``boxparse.parse_gt_box``), so the converter refuses it itself,
naming the source file, its line and the field, not the converted ground truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from ovearth_core.convert import from_dota, from_rsvg, from_voc
from ovearth_core.errors import OVEarthInputError

SIZE = "<size><width>100</width><height>80</height></size>"
GOOD = ("<object><name>car</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax>"
        "<ymax>5</ymax></bndbox><description>a car</description></object>")


def _refused(call, out: Path) -> list:
    with pytest.raises(OVEarthInputError) as err:
        call()
    assert not out.exists()
    assert not any("converted" in p.file for p in err.value.problems), err.value.problems
    return err.value.problems


@pytest.mark.parametrize(("obj", "line", "field", "expected"), [
    # Each corner at the bound, the width 2e100 (the line: the <bndbox>'s).
    ("<object><name>dog</name>\n<bndbox><xmin>-1e100</xmin><ymin>1</ymin><xmax>1e100</xmax>"
     "<ymax>5</ymax></bndbox></object>", 4, "<object> 0 <xmax>", "xmax - xmin within ±1e100"),
    ("<object><name>dog</name>\n<bndbox><xmin>1</xmin><ymin>-6e99</ymin><xmax>5</xmax>"
     "<ymax>6e99</ymax></bndbox></object>", 4, "<object> 0 <ymax>", "ymax - ymin within ±1e100"),
    # DIOR-R corners, a diamond: the envelope (the box written) 2e100 wide and tall.
    ("<object><name>dog</name>\n<robndbox><x_left_top>-1e100</x_left_top><y_left_top>0"
     "</y_left_top><x_right_top>0</x_right_top><y_right_top>-1e100</y_right_top>"
     "<x_right_bottom>1e100</x_right_bottom><y_right_bottom>0</y_right_bottom>"
     "<x_left_bottom>0</x_left_bottom><y_left_bottom>1e100</y_left_bottom></robndbox>"
     "</object>", 4, "<object> 0 <robndbox>", "largest x - smallest x within ±1e100"),
])
def test_voc_box_too_wide_names_the_xml(tmp_path: Path, obj: str, line: int, field: str,
                                        expected: str) -> None:
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "a.xml").write_text(f"<annotation>\n{SIZE}\n{obj}{GOOD}</annotation>")
    problems = _refused(lambda: from_voc(ann, None, tmp_path / "b"), tmp_path / "b")
    assert [(Path(p.file).name, p.line, p.field) for p in problems] == [("a.xml", line, field)]
    assert expected in problems[0].expected


def test_hrsc_box_too_wide_names_the_xml(tmp_path: Path) -> None:
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "1.xml").write_text(
        "<HRSC_Image><Img_SizeWidth>100</Img_SizeWidth><Img_SizeHeight>80</Img_SizeHeight>\n"
        "<HRSC_Objects>\n<HRSC_Object><Class_ID>1</Class_ID><box_xmin>-1e100</box_xmin>"
        "<box_ymin>1</box_ymin><box_xmax>1e100</box_xmax><box_ymax>5</box_ymax><mbox_cx>3"
        "</mbox_cx><mbox_cy>3</mbox_cy><mbox_w>4</mbox_w><mbox_h>4</mbox_h><mbox_ang>0"
        "</mbox_ang></HRSC_Object></HRSC_Objects></HRSC_Image>")
    problems = _refused(lambda: from_voc(ann, None, tmp_path / "b"), tmp_path / "b")
    assert [(Path(p.file).name, p.line, p.field) for p in problems] == [
        ("1.xml", 3, "<HRSC_Object> 0 <box_xmax>")]


def test_rsvg_box_too_wide_names_the_xml(tmp_path: Path) -> None:
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "a.xml").write_text(
        f"<annotation>{SIZE}\n<object><name>ship</name>\n<bndbox><xmin>-1e100</xmin><ymin>1"
        "</ymin><xmax>1e100</xmax><ymax>5</ymax></bndbox><description>a ship</description>"
        f"</object>{GOOD}</annotation>")
    problems = _refused(lambda: from_rsvg(ann, None, tmp_path / "b"), tmp_path / "b")
    assert [(Path(p.file).name, p.line, p.field) for p in problems] == [
        ("a.xml", 3, "<object> 0 <bndbox><xmax>")]
    assert "xmax - xmin within ±1e100" in problems[0].expected


@pytest.mark.parametrize(("quad", "field"), [
    ("-1e100 0 1e100 0 1e100 10 -1e100 10", "x1 x2 x3 x4"),
    ("0 -1e100 10 -1e100 10 1e100 0 1e100", "y1 y2 y3 y4"),
])
def test_dota_label_too_wide_names_the_line(tmp_path: Path, quad: str, field: str) -> None:
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    (labels / "P1.txt").write_text(f"imagesource:x\n1 1 5 1 5 5 1 5 car 0\n{quad} ship 0\n")
    sizes = tmp_path / "sizes.txt"
    sizes.write_text("P1 100 80\n")
    problems = _refused(lambda: from_dota(labels, None, tmp_path / "b", sizes=sizes),
                        tmp_path / "b")
    assert [(Path(p.file).name, p.line, p.field) for p in problems] == [("P1.txt", 3, field)]
    assert "within ±1e100" in problems[0].expected
