"""``from-voc --skip-degenerate``: objects (and result lines) whose box has zero area are
left out and named, instead of refusing the whole data set (the published DIOR-R holds four
such rotated boxes, DIOR six such ``<bndbox>`` es). Without the flag they stay refused, as
the spec's rule. Expected values are counted by hand from the XML written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from convert_helpers import run_cli

SIZE = "<size><width>100</width><height>80</height><depth>3</depth></size>"


def _bnd(box: tuple[int, int, int, int]) -> str:
    keys = ("xmin", "ymin", "xmax", "ymax")
    return "<bndbox>" + "".join(f"<{k}>{v}</{k}>" for k, v in zip(keys, box, strict=True)) \
        + "</bndbox>"


def _voc(box: tuple[int, int, int, int], difficult: int) -> str:
    return f"<object><name>ship</name><difficult>{difficult}</difficult>{_bnd(box)}</object>"


def _dior_r(corners: list[tuple[int, int]], difficult: int) -> str:
    keys = ("x_left_top", "y_left_top", "x_right_top", "y_right_top", "x_right_bottom",
            "y_right_bottom", "x_left_bottom", "y_left_bottom")
    values = [v for xy in corners for v in xy]
    rot = "".join(f"<{k}>{v}</{k}>" for k, v in zip(keys, values, strict=True))
    return (f"<object><name>ship</name><difficult>{difficult}</difficult>"
            f"<robndbox>{rot}</robndbox></object>")


def _hrsc(box: tuple[int, int, int, int], w: int, difficult: int) -> str:
    """An HRSC2016 object: its box, and an mbox of angle 0 about the box's centre, the
    box's height and width ``w`` (0: zero area, the box itself still positive)."""
    x1, y1, x2, y2 = box
    keys = ("box_xmin", "box_ymin", "box_xmax", "box_ymax")
    corners = "".join(f"<{k}>{v}</{k}>" for k, v in zip(keys, box, strict=True))
    return (f"<HRSC_Object><Class_ID>ship</Class_ID><difficult>{difficult}</difficult>"
            f"{corners}<mbox_cx>{(x1 + x2) / 2}</mbox_cx><mbox_cy>{(y1 + y2) / 2}</mbox_cy>"
            f"<mbox_w>{w}</mbox_w><mbox_h>{y2 - y1}</mbox_h><mbox_ang>0</mbox_ang>"
            "</HRSC_Object>")


def _annotation(objects: list[str]) -> str:
    """Objects on lines 3, 4, 5, ... (one a line)."""
    return ("<annotation>\n<filename>a.jpg</filename>" + SIZE + "\n" + "\n".join(objects)
            + "\n</annotation>\n")


def _hrsc_image(objects: list[str]) -> str:
    return ("<HRSC_Image><Img_FileName>a</Img_FileName><Img_FileFmt>jpg</Img_FileFmt>"
            "<Img_SizeWidth>100</Img_SizeWidth><Img_SizeHeight>80</Img_SizeHeight>\n"
            "<HRSC_Objects>\n" + "\n".join(objects) + "\n</HRSC_Objects></HRSC_Image>\n")


# Each case: a.xml with object 0 (kept, not difficult), object 1 of zero area on line 4,
# object 2 (kept, difficult) after it; b.xml one kept object. The XML holds 4 objects.
CASES = {
    "voc-zero-width-bndbox": (
        _annotation([_voc((10, 10, 40, 30), 0), _voc((20, 10, 20, 30), 0),
                     _voc((50, 40, 90, 70), 1)]),
        _voc((5, 5, 25, 25), 0), "<object> 1 <bndbox>"),
    "dior-r-robndbox-a-line": (
        _annotation([_dior_r([(10, 10), (40, 10), (40, 30), (10, 30)], 0),
                     _dior_r([(10, 10), (20, 20), (30, 30), (40, 40)], 0),
                     _dior_r([(50, 40), (90, 40), (90, 70), (50, 70)], 1)]),
        _dior_r([(5, 5), (25, 5), (25, 25), (5, 25)], 0), "<object> 1 <robndbox>"),
    "hrsc-mbox-zero-width": (
        _hrsc_image([_hrsc((10, 10, 40, 30), 30, 0), _hrsc((20, 10, 30, 30), 0, 0),
                     _hrsc((50, 40, 90, 70), 40, 1)]),
        _hrsc((5, 5, 25, 25), 20, 0), "<HRSC_Object> 1 <mbox>"),
}


def _write(root: Path, case: str) -> Path:
    first, other, _ = CASES[case]
    ann = root / "Annotations"
    ann.mkdir(parents=True)
    (ann / "a.xml").write_text(first)
    if case == "hrsc-mbox-zero-width":
        (ann / "b.xml").write_text(_hrsc_image([other]).replace(">a<", ">b<"))
    else:
        (ann / "b.xml").write_text(_annotation([other]).replace("a.jpg", "b.jpg"))
    return ann


@pytest.mark.parametrize("case", sorted(CASES))
def test_zero_area_object_refused_by_default(tmp_path: Path, case: str) -> None:
    ann, field = _write(tmp_path, case), CASES[case][2]
    out = tmp_path / "b"
    proc = run_cli("from-voc", "--annotations", str(ann), "--out", str(out), "--quiet")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    line = next(t for t in proc.stderr.splitlines() if field in t)
    assert "a.xml" in line and "line 4" in line and "--skip-degenerate" in line
    assert not out.exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_zero_area_object_left_out_and_named_with_the_flag(tmp_path: Path, case: str) -> None:
    ann, field = _write(tmp_path, case), CASES[case][2]
    out = tmp_path / "b"
    proc = run_cli("from-voc", "--annotations", str(ann), "--out", str(out), "--quiet",
                   "--skip-degenerate")
    assert proc.returncode == 0, proc.stderr
    gt = json.loads((out / "ground_truth.json").read_text())
    anns = {a["id"]: a for a in gt["annotations"]}
    assert sum(len(a["bbox"]) for a in anns.values()) == 4 - 1
    # a.xml: objects 0 and 2 kept, in order; the difficult flags follow them (0, then 1).
    assert len(anns["a_ship"]["bbox"]) == 2
    assert anns["a_ship"]["difficult"] == [0, 1]
    assert anns["a_ship"]["bbox"][1] == [50, 40, 40, 30]  # object 2's box, not object 1's
    assert anns["b_ship"]["difficult"] == [0] and len(anns["b_ship"]["bbox"]) == 1
    warnings = [t for t in proc.stderr.splitlines() if "warning:" in t and field in t]
    assert len(warnings) == 1
    assert "1 object " in warnings[0] and "a.xml line 4" in warnings[0]
    assert "--skip-degenerate" in warnings[0]
    readme = [t for t in (out / "README.md").read_text().splitlines() if field in t]
    assert len(readme) == 1 and "a.xml line 4" in readme[0] and "1 object " in readme[0]


def test_zero_width_result_line_left_out_with_the_flag(tmp_path: Path) -> None:
    """A VOC result line of zero width is refused by default, left out (and named) with the
    flag; the other lines of the file are kept."""
    ann = tmp_path / "Annotations"
    ann.mkdir()
    for stem in "ab":
        (ann / f"{stem}.xml").write_text(_annotation([_voc((10, 10, 40, 30), 0)])
                                         .replace("a.jpg", f"{stem}.jpg"))
    res = tmp_path / "model"
    res.mkdir()
    (res / "comp4_det_test_ship.txt").write_text("a 0.9 10 10 40 30\na 0.8 30 10 30 30\n"
                                                 "b 0.7 5 5 25 25\n")
    args = ["from-voc", "--annotations", str(ann), "--results", str(res), "--quiet"]
    proc = run_cli(*args, "--out", str(tmp_path / "refused"))
    assert proc.returncode == 2 and not (tmp_path / "refused").exists()
    assert any("comp4_det_test_ship.txt" in t and "line 2" in t and "(box)" in t
               for t in proc.stderr.splitlines())
    proc = run_cli(*args, "--out", str(tmp_path / "b"), "--skip-degenerate")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "b" / "predictions" / "model.json").read_text())
    boxes = {r["query_id"]: r["bbox"] for r in rows["tasks"]["open_vocabulary"]}
    assert boxes == {"ov_a_ship": [{"bbox": [10, 10, 40, 30], "score": 0.9}],
                     "ov_b_ship": [{"bbox": [5, 5, 25, 25], "score": 0.7}]}
    warning = next(t for t in proc.stderr.splitlines() if "result line" in t)
    assert "comp4_det_test_ship.txt line 2 (box)" in warning
    assert "comp4_det_test_ship.txt line 2 (box)" in (tmp_path / "b" / "README.md").read_text()


def test_dota_zero_area_label_and_result_lines(tmp_path: Path) -> None:
    """from-dota: a label line whose four corners lie on a line (line 2, between a kept line
    and a kept difficult one) and a Task1 line of zero area: refused without the flag,
    left out and named with it; the difficult flags stay with their boxes."""
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    (labels / "P1.txt").write_text("10 10 40 10 40 30 10 30 ship 0\n"
                                   "10 10 20 20 30 30 40 40 ship 0\n"
                                   "50 40 90 40 90 70 50 70 ship 1\n")
    (labels / "P2.txt").write_text("5 5 25 5 25 25 5 25 ship 0\n")
    res = tmp_path / "model"
    res.mkdir()
    (res / "Task1_ship.txt").write_text("P1 0.9 10 10 40 10 40 30 10 30\n"
                                        "P1 0.8 1 1 1 1 1 1 1 1\n")
    args = ["from-dota", "--labels", str(labels), "--results", str(res), "--quiet"]
    proc = run_cli(*args, "--out", str(tmp_path / "refused"))
    assert proc.returncode == 2 and not (tmp_path / "refused").exists()
    problems = [t for t in proc.stderr.splitlines() if "x1 y1 x2 y2 x3 y3 x4 y4" in t]
    assert any("P1.txt" in t and "line 2" in t and "--skip-degenerate" in t for t in problems)
    assert any("Task1_ship.txt" in t and "line 2" in t for t in problems)
    out = tmp_path / "b"
    proc = run_cli(*args, "--out", str(out), "--skip-degenerate")
    assert proc.returncode == 0, proc.stderr
    anns = {a["id"]: a for a in json.loads((out / "ground_truth.json").read_text())
            ["annotations"]}
    assert sum(len(a["bbox"]) for a in anns.values()) == 4 - 1
    p1 = next(a for a in anns.values() if a["image_path"].endswith("P1.png"))
    assert p1["difficult"] == [0, 1] and p1["bbox"][1] == [50, 40, 40, 30]
    warnings = [t for t in proc.stderr.splitlines() if "warning:" in t and "zero area" in t]
    assert len(warnings) == 2
    assert "1 object " in warnings[0] and "P1.txt line 2" in warnings[0]
    assert "1 result line " in warnings[1] and "Task1_ship.txt line 2" in warnings[1]
    readme = (out / "README.md").read_text()
    assert "P1.txt line 2" in readme and "Task1_ship.txt line 2" in readme
    rows = json.loads((out / "predictions" / "model.json").read_text())["tasks"]
    scores = sorted(d["score"] for r in rows["open_vocabulary"] for d in r["oriented_bbox"])
    assert scores == [0.9]


def test_rsvg_zero_height_object_and_its_prediction(tmp_path: Path) -> None:
    """from-rsvg: object 1 of a.xml has zero height; without the flag refused, with it its
    expression is left out (ids of the others keep their XML index) and so is its
    prediction."""
    def obj(box: tuple[int, int, int, int], text: str) -> str:
        return f"<object><name>ship</name>{_bnd(box)}<description>{text}</description></object>"

    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "a.xml").write_text(_annotation([obj((10, 10, 40, 30), "the left ship"),
                                            obj((20, 10, 40, 10), "a flat ship"),
                                            obj((50, 40, 90, 70), "the right ship")]))
    pred = tmp_path / "model.json"
    pred.write_text(json.dumps([{"image": "a", "object": k, "bbox": [10, 10, 40, 30]}
                                for k in range(3)]))
    args = ["from-rsvg", "--annotations", str(ann), "--predictions", str(pred), "--quiet"]
    proc = run_cli(*args, "--out", str(tmp_path / "refused"))
    assert proc.returncode == 2 and not (tmp_path / "refused").exists()
    assert any("a.xml" in t and "line 4" in t and "<object> 1 <bndbox>" in t
               and "--skip-degenerate" in t for t in proc.stderr.splitlines())
    out = tmp_path / "b"
    proc = run_cli(*args, "--out", str(out), "--skip-degenerate")
    assert proc.returncode == 0, proc.stderr
    gt = json.loads((out / "ground_truth.json").read_text())
    assert {q["query_id"]: q["query"] for q in gt["tasks"]["referring"]} == {
        "ref_a_0": "the left ship", "ref_a_2": "the right ship"}
    assert {a["id"]: a["bbox"] for a in gt["annotations"]} == {
        "a_0": [[10, 10, 30, 20]], "a_2": [[50, 40, 40, 30]]}
    rows = json.loads((out / "predictions" / "model.json").read_text())["tasks"]["referring"]
    assert sorted(r["query_id"] for r in rows) == ["ref_a_0", "ref_a_2"]
    warning = next(t for t in proc.stderr.splitlines() if "zero area" in t)
    assert "1 object " in warning and "a.xml line 4 <object> 1 <bndbox>" in warning
    assert "a.xml line 4 <object> 1 <bndbox>" in (out / "README.md").read_text()


def test_dota_task2_zero_width_line_follows_the_flag(tmp_path: Path) -> None:
    """from-dota: a Task2 line of zero width (``xmax`` equal to ``xmin``, line 2) is refused
    without the flag, naming the flag, and left out and named with it, as a Task1 line of
    zero area is; a reversed line (``ymax`` below ``ymin``) stays a problem with the flag."""
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    (labels / "P1.txt").write_text("10 10 40 10 40 30 10 30 ship 0\n")
    res = tmp_path / "model"
    res.mkdir()
    (res / "Task2_ship.txt").write_text("P1 0.9 10 10 40 30\nP1 0.8 12 5 12 25\n")
    args = ["from-dota", "--labels", str(labels), "--results", str(res), "--quiet"]
    proc = run_cli(*args, "--out", str(tmp_path / "refused"))
    assert proc.returncode == 2 and not (tmp_path / "refused").exists()
    problem = next(t for t in proc.stderr.splitlines() if "Task2_ship.txt" in t)
    assert "line 2" in problem and "xmax" in problem and "--skip-degenerate" in problem

    out = tmp_path / "b"
    proc = run_cli(*args, "--out", str(out), "--skip-degenerate")
    assert proc.returncode == 0, proc.stderr
    warning = next(t for t in proc.stderr.splitlines() if "result line" in t)
    assert "1 result line " in warning and "Task2_ship.txt line 2 xmax" in warning
    assert "Task2_ship.txt line 2" in (out / "README.md").read_text()
    rows = json.loads((out / "predictions" / "model.json").read_text())["tasks"]
    boxes = [(d["bbox"], d["score"]) for r in rows["open_vocabulary"] for d in r["bbox"]]
    assert boxes == [([10, 10, 40, 30], 0.9)]  # a prediction box is x1 y1 x2 y2 (the spec)

    (res / "Task2_ship.txt").write_text("P1 0.9 10 10 40 30\nP1 0.8 12 25 30 5\n")
    proc = run_cli(*args, "--out", str(tmp_path / "c"), "--skip-degenerate")
    assert proc.returncode == 2 and not (tmp_path / "c").exists()
    problem = next(t for t in proc.stderr.splitlines() if "Task2_ship.txt" in t)
    assert "line 2" in problem and "ymax" in problem and "a number above ymin" in problem
