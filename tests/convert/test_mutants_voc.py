"""Rules of ``from-voc`` (``ovearth_core/convert/voc.py``) that mutation testing found
unpinned (issue 47): the rotated boxes' sense and unit, DIOR-R's corner order, continuous
corners, which flag marks an object difficult, which objects are left out and which are
counted, zero-area against tiny boxes, result lines. In-process calls (no subprocess), so
mutmut's mutants are what runs. Expected corners are worked by hand and checked against
shapely's rotation; nothing expected is produced by the converter.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import shapely
from shapely import affinity

from ovearth_core.convert import from_voc
from ovearth_core.convert.common import Degenerate, Problems
from ovearth_core.convert.voc import read_classes, read_results, read_voc
from ovearth_core.errors import OVEarthInputError

SIZE = "<size><width>200</width><height>150</height></size>"
A30 = math.pi / 6  # 30 degrees: neither 45 nor 90, so a swapped sine and cosine shows


def _shapely_corners(cx: float, cy: float, w: float, h: float, a: float) -> list[tuple]:
    """The corners of the w x h rectangle about (cx, cy) turned by ``a`` radians with
    shapely (its rotation is ``(x cos a - y sin a, x sin a + y cos a)``, which in image
    coordinates, y down, turns clockwise on screen), in the rectangle's own order: from
    (-w/2, -h/2), then (+w/2, -h/2), (+w/2, +h/2), (-w/2, +h/2)."""
    rect = shapely.Polygon([(cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2),
                            (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2)])
    turned = affinity.rotate(rect, a, origin=(cx, cy), use_radians=True)
    return list(turned.exterior.coords)[:4]


def _write(root: Path, xml: dict[str, str]) -> Path:
    ann = root / "Annotations"
    ann.mkdir(parents=True)
    for stem, text in xml.items():
        (ann / f"{stem}.xml").write_text(text)
    return ann


def _anns(bench: Path) -> dict[str, dict]:
    gt = json.loads((bench / "ground_truth.json").read_text())
    return {a["id"]: a for a in gt["annotations"]}


def _obj(name: str, box: tuple[float, ...] | None = None, difficult: str | None = "0",
         extra: str = "") -> str:
    diff = "" if difficult is None else f"<difficult>{difficult}</difficult>"
    bnd = "" if box is None else "<bndbox>" + "".join(
        f"<{k}>{v}</{k}>" for k, v in zip(("xmin", "ymin", "xmax", "ymax"), box,
                                          strict=True)) + "</bndbox>"
    return f"<object><name>{name}</name>{diff}{bnd}{extra}</object>"


def _annotation(*objects: str, filename: str | None = None, size: str = SIZE) -> str:
    name = "" if filename is None else f"<filename>{filename}</filename>"
    return f"<annotation>{name}{size}" + "".join(objects) + "</annotation>"


def _hrsc_object(cls: str, box: tuple[float, ...], mbox: tuple[float, ...],
                 difficult: str = "0") -> str:
    keys = ("box_xmin", "box_ymin", "box_xmax", "box_ymax")
    mkeys = ("mbox_cx", "mbox_cy", "mbox_w", "mbox_h", "mbox_ang")
    return (f"<HRSC_Object><Class_ID>{cls}</Class_ID><difficult>{difficult}</difficult>"
            + "".join(f"<{k}>{v!r}</{k}>" for k, v in zip(keys, box, strict=True))
            + "".join(f"<{k}>{v!r}</{k}>" for k, v in zip(mkeys, mbox, strict=True))
            + "</HRSC_Object>")


def _hrsc(*objects: str, name: str = "100000001", fmt: str = "bmp") -> str:
    return (f"<HRSC_Image><Img_FileName>{name}</Img_FileName><Img_FileFmt>{fmt}</Img_FileFmt>"
            "<Img_SizeWidth>200</Img_SizeWidth><Img_SizeHeight>150</Img_SizeHeight>"
            "<HRSC_Objects>" + "".join(objects) + "</HRSC_Objects></HRSC_Image>")


def _read(tmp_path: Path, xml: str, skip: bool | None = None, class_ids: dict | None = None,
          name: str = "a.xml"):
    path = tmp_path / name
    path.write_text(xml)
    bad = Problems()
    degenerate = Degenerate(skip) if skip is not None else None
    entry = read_voc(path, {}, None, class_ids or {}, bad, degenerate)
    return entry, bad, degenerate


# ---------------------------------------------------------------- rotation: sense and unit

# w 40 (the longer side), h 16 about (70, 60), turned by 30 degrees. By hand, with cos 30 =
# 0.8660254, sin 30 = 0.5: the corner (-20, -8) goes to (-20 * 0.8660 + 8 * 0.5, -20 * 0.5
# - 8 * 0.8660) = (-13.3205, -16.9282), so (56.6795, 43.0718); (20, -8) to (17.3205 + 4,
# 10 - 6.9282) = (21.3205, 3.0718), so (91.3205, 63.0718); the others mirror them through
# the centre. The width runs along (cos 30, sin 30): right and down on screen.
TURNED = [(56.67949, 43.07180), (91.32051, 63.07180), (83.32051, 76.92820),
          (48.67949, 56.92820)]


def test_hand_worked_corners_agree_with_shapely() -> None:
    """The reference itself: the hand-worked corners are shapely's rotation."""
    assert np.allclose(_shapely_corners(70, 60, 40, 16, A30), TURNED, atol=1e-5)


@pytest.mark.parametrize("form", ["robndbox", "hrsc"])
def test_rotated_box_turns_clockwise_on_screen_by_radians(tmp_path: Path, form: str) -> None:
    """roLabelImg's ``<robndbox>`` (its own reader turns the corners by ``rotatePoint(p,
    -angle)``: ``(dx cos a - dy sin a, dx sin a + dy cos a)``) and HRSC2016's ``<mbox>``
    (mmrotate: the width along ``(cos a, sin a)``) mean the same rotation: corners in the
    rectangle's order from ``(-w/2, -h/2)``, the angle in radians, the width along
    ``(cos a, sin a)``. Kills the mirrored sense (``s = -s``, the old roLabelImg reading),
    swapped cos/sin, w and h swapped, a sign of any term or a corner's offset, the angle
    read in degrees, cx/cy swapped."""
    if form == "robndbox":
        xml = _annotation(_obj("ship", None, extra=(
            f"<robndbox><cx>70</cx><cy>60</cy><w>40</w><h>16</h><angle>{A30!r}</angle>"
            "</robndbox>")))
    else:
        xml = _hrsc(_hrsc_object("ship", (48, 43, 92, 77), (70.0, 60.0, 40.0, 16.0, A30)))
    entry, bad, _ = _read(tmp_path, xml)
    assert not bad.items, bad.items
    (obj,) = entry.objects
    assert np.allclose(obj.obb, TURNED, atol=1e-5)
    assert np.allclose(obj.obb, _shapely_corners(70, 60, 40, 16, A30), atol=1e-9)
    width_axis = obj.obb[1] - obj.obb[0]
    assert np.allclose(width_axis / 40, [math.cos(A30), math.sin(A30)])


def test_robndbox_without_bndbox_gets_the_rotated_box_envelope(tmp_path: Path) -> None:
    """An object with only a ``<robndbox>``: its box is the rotated box's envelope, by hand
    from TURNED: x from 48.67949 to 91.32051, y from 43.07180 to 76.92820."""
    entry, bad, _ = _read(tmp_path, _annotation(_obj("ship", None, extra=(
        f"<robndbox><cx>70</cx><cy>60</cy><w>40</w><h>16</h><angle>{A30!r}</angle>"
        "</robndbox>"))))
    assert not bad.items
    assert entry.objects[0].box == pytest.approx((48.67949, 43.07180, 91.32051, 76.92820),
                                                 abs=1e-5)


def test_hrsc_bndbox_is_its_own_box_not_the_envelope(tmp_path: Path) -> None:
    """HRSC's ``<box_xmin ...>`` is the object's box as given (here not the mbox's envelope:
    the benchmark keeps what the source says)."""
    entry, bad, _ = _read(tmp_path, _hrsc(_hrsc_object("ship", (40.5, 41, 95, 79.25),
                                                       (70.0, 60.0, 40.0, 16.0, A30))))
    assert not bad.items
    assert entry.objects[0].box == (40.5, 41, 95, 79.25)


def test_dior_r_corners_are_left_top_right_top_right_bottom_left_bottom(tmp_path: Path
                                                                         ) -> None:
    """DIOR-R's eight fields are the corners in the order x/y of left top, right top, right
    bottom, left bottom (a boundary order); every value distinct so a swapped key shows;
    written in a shuffled element order (the names count, not the positions)."""
    values = {"x_left_top": 12, "y_left_top": 20, "x_right_top": 60, "y_right_top": 8,
              "x_right_bottom": 70, "y_right_bottom": 45, "x_left_bottom": 22,
              "y_left_bottom": 57}
    order = ["y_right_bottom", "x_left_top", "y_left_bottom", "x_right_top", "y_left_top",
             "x_left_bottom", "y_right_top", "x_right_bottom"]
    rot = "".join(f"<{k}>{values[k]}</{k}>" for k in order)
    entry, bad, _ = _read(tmp_path, _annotation(_obj("ship", None,
                                                     extra=f"<robndbox>{rot}</robndbox>")))
    assert not bad.items, bad.items
    assert entry.objects[0].obb.tolist() == [[12, 20], [60, 8], [70, 45], [22, 57]]
    assert entry.objects[0].box == (12, 8, 70, 57)


# ---------------------------------------------------------------- pixel base, flags


def test_voc_corners_are_kept_as_given_no_plus_or_minus_one(tmp_path: Path) -> None:
    """VOC's 1-based pixel corners are continuous coordinates here: neither ``xmin - 1``
    nor ``xmax + 1`` is applied; the width is xmax - xmin (48 -> 195 is 147 wide, not 148),
    each corner from its own key."""
    ann = _write(tmp_path, {"000001": _annotation(_obj("dog", (48, 240, 195, 371)),
                                                  filename="000001.jpg",
                                                  size="<size><width>353</width><height>500"
                                                  "</height></size>")})
    from_voc(ann, None, tmp_path / "b")
    assert _anns(tmp_path / "b")["000001_dog"]["bbox"] == [[48, 240, 147, 131]]


def test_difficult_not_truncated_marks_an_object_difficult(tmp_path: Path) -> None:
    """Only ``<difficult>`` feeds the difficult flag: a truncated object is a plain target,
    a difficult one is flagged (target mode) or an ignore region (ignore mode); a missing
    tag is not difficult."""
    ship_a = _obj("ship", (10, 10, 50, 30), "0", extra="<truncated>1</truncated>")
    ship_b = _obj("ship", (60, 20, 90, 40), "1", extra="<truncated>0</truncated>")
    ship_c = _obj("ship", (100, 50, 130, 80), None)
    ann = _write(tmp_path, {"a": _annotation(ship_a, ship_b, ship_c)})
    from_voc(ann, None, tmp_path / "t")
    ship = _anns(tmp_path / "t")["a_ship"]
    assert ship["bbox"] == [[10, 10, 40, 20], [60, 20, 30, 20], [100, 50, 30, 30]]
    assert ship["difficult"] == [0, 1, 0]
    assert "ignore_bbox" not in ship
    from_voc(ann, None, tmp_path / "i", difficult="ignore")
    ship = _anns(tmp_path / "i")["a_ship"]
    assert ship["bbox"] == [[10, 10, 40, 20], [100, 50, 30, 30]]
    assert ship["ignore_bbox"] == [[60, 20, 30, 20]]
    assert "difficult" not in ship


def test_ignore_mode_keeps_rotated_ignore_regions(tmp_path: Path) -> None:
    """With every object rotated and ``difficult="ignore"``, a difficult object's rotated box
    goes to ``ignore_oriented_bbox`` (beside its box in ``ignore_bbox``), the others stay
    targets with their oriented boxes."""
    keep = _annotation(
        _obj("ship", None, "0", extra="<robndbox><cx>30</cx><cy>30</cy><w>20</w><h>10</h>"
             "<angle>0</angle></robndbox>"),
        _obj("ship", None, "1", extra="<robndbox><cx>100</cx><cy>80</cy><w>30</w><h>12</h>"
             "<angle>0</angle></robndbox>"))
    ann = _write(tmp_path, {"a": keep})
    from_voc(ann, None, tmp_path / "b", difficult="ignore")
    ship = _anns(tmp_path / "b")["a_ship"]
    assert ship["bbox"] == [[20, 25, 20, 10]]
    assert ship["oriented_bbox"] == [[[20, 25], [40, 25], [40, 35], [20, 35]]]
    assert ship["ignore_bbox"] == [[85, 74, 30, 12]]
    assert ship["ignore_oriented_bbox"] == [[[85, 74], [115, 74], [115, 86], [85, 86]]]


@pytest.mark.parametrize("text", ["2", "true", "-1", "01"])
def test_difficult_is_0_or_1_only(tmp_path: Path, text: str) -> None:
    entry, bad, _ = _read(tmp_path, _annotation(_obj("dog", (1, 1, 5, 5), text)))
    assert entry is None
    assert [(p.field, p.expected, p.found) for p in bad.items] == [
        ("<object> 0 <difficult>", "0 or 1", f"str '{text}'")]


# ---------------------------------------------------------------- zero area, tiny, counts


def test_tiny_box_is_kept_zero_width_is_degenerate_inverted_is_refused(tmp_path: Path
                                                                       ) -> None:
    """A box 0.01 wide (or high) has area and is kept; one of zero width is degenerate (left
    out with the flag, named); one whose xmax < xmin is refused even with the flag (a broken
    box, not a zero-area one)."""
    tiny = _annotation(_obj("dog", (10, 10, 10.01, 20)), _obj("dog", (10, 10, 20, 10.01)))
    entry, bad, _ = _read(tmp_path, tiny, skip=False)
    assert not bad.items and [o.box for o in entry.objects] == [(10, 10, 10.01, 20),
                                                                (10, 10, 20, 10.01)]
    for box in ((10, 10, 10, 20), (10, 10, 20, 10)):
        entry, bad, deg = _read(tmp_path, _annotation(_obj("dog", (1, 1, 5, 5)),
                                                      _obj("dog", box)), skip=True)
        assert not bad.items and [o.box for o in entry.objects] == [(1, 1, 5, 5)]
        assert list(deg.objects) == [(str(tmp_path / "a.xml"), "<object> 1")]
        entry, bad, _ = _read(tmp_path, _annotation(_obj("dog", box)), skip=False)
        assert entry is None and len(bad.items) == 1
        assert "--skip-degenerate" in bad.items[0].expected
    for box in ((20, 10, 10, 20), (10, 20, 20, 10), (20, 10, 10, 10)):
        entry, bad, deg = _read(tmp_path, _annotation(_obj("dog", box)), skip=True)
        assert entry is None and not deg.objects
        assert [(p.field, p.expected) for p in bad.items] == [
            ("<object> 0 <bndbox>", "xmax > xmin and ymax > ymin")]


def test_hrsc_zero_area_box_names_the_file_own_tags(tmp_path: Path) -> None:
    """An HRSC object's zero-height box is degenerate under its own tag names and is left
    out with the flag; an inverted one is refused."""
    obj = _hrsc_object("ship", (10, 10, 30, 10), (20.0, 10.0, 20.0, 4.0, 0.0))
    entry, bad, deg = _read(tmp_path, _hrsc(obj), skip=True)
    assert not bad.items and entry.objects == []
    assert list(deg.objects) == [(str(tmp_path / "a.xml"), "<HRSC_Object> 0")]
    text = next(iter(deg.objects.values()))
    assert "<box_xmin> <box_ymin> <box_xmax> <box_ymax>" in text
    assert "box_xmax > box_xmin and box_ymax > box_ymin" in text


def test_rotated_box_on_a_line_is_degenerate_a_bowtie_is_refused(tmp_path: Path) -> None:
    """DIOR-R corners on one line have zero area: left out with the flag. Corners that
    cross (a bow tie, positive area but not in boundary order) are refused even with it."""
    def dior(vals: list[int]) -> str:
        keys = ("x_left_top", "y_left_top", "x_right_top", "y_right_top", "x_right_bottom",
                "y_right_bottom", "x_left_bottom", "y_left_bottom")
        rot = "".join(f"<{k}>{v}</{k}>" for k, v in zip(keys, vals, strict=True))
        return _obj("ship", None, extra=f"<robndbox>{rot}</robndbox>")

    line = dior([10, 10, 20, 20, 30, 30, 40, 40])
    entry, bad, deg = _read(tmp_path, _annotation(line), skip=True)
    assert not bad.items and entry.objects == []
    assert list(deg.objects) == [(str(tmp_path / "a.xml"), "<object> 0")]
    bowtie = dior([10, 10, 40, 10, 10, 30, 40, 30])
    entry, bad, deg = _read(tmp_path, _annotation(bowtie), skip=True)
    assert entry is None and not deg.objects
    assert [p.field for p in bad.items] == ["<object> 0 <robndbox>"]


def test_notes_count_kept_objects_difficult_and_left_out(tmp_path: Path) -> None:
    """The README's source note: the XML files, the objects converted (the one of zero
    area not among them), how many of those are difficult, how many more were left out,
    and the classes. By hand: a.xml 3 objects (one difficult, one of zero width), b.xml 2
    (one difficult) -> 4 objects, 2 difficult, 1 more left out, 2 classes."""
    ann = _write(tmp_path, {
        "a": _annotation(_obj("ship", (10, 10, 40, 30)), _obj("ship", (20, 10, 20, 30)),
                         _obj("storage-tank", (50, 40, 90, 70), "1")),
        "b": _annotation(_obj("ship", (5, 5, 25, 25), "1"), _obj("ship", (30, 5, 50, 25)))})
    summary = from_voc(ann, None, tmp_path / "b", skip_degenerate=True)
    readme = (tmp_path / "b" / "README.md").read_text()
    assert ("- source: 2 VOC / HRSC2016 XML files, 4 objects (2 difficult; 1 more of zero "
            "area left out, --skip-degenerate), 2 classes: ship, storage-tank") in readme
    assert summary["boxes"] == 4
    assert any(w.startswith("1 object of zero area left out of the ground truth")
               for w in summary["warnings"])
    assert "difficult objects are targets, flagged in the annotation's difficult list" \
        in readme
    phrases = {q["phrase"] for q in json.loads((tmp_path / "b" / "ground_truth.json")
                                                 .read_text())["tasks"]["open_vocabulary"]}
    assert phrases == {"ship", "storage tank"}
    from_voc(ann, None, tmp_path / "c", skip_degenerate=True, difficult="ignore",
             negatives=1, seed=3)
    readme = (tmp_path / "c" / "README.md").read_text()
    assert "difficult objects are ignore regions" in readme
    assert "the absent classes negatives (1 per image, seed 3)" in readme


def test_notes_without_anything_left_out_say_no_more(tmp_path: Path) -> None:
    ann = _write(tmp_path, {"a": _annotation(_obj("ship", (10, 10, 40, 30), "1"))})
    from_voc(ann, None, tmp_path / "b")
    readme = (tmp_path / "b" / "README.md").read_text()
    assert ("- source: 1 VOC / HRSC2016 XML files, 1 objects (1 difficult), 1 classes: "
            "ship") in readme
    assert "the absent classes negatives (all)" in readme
    assert "no oriented boxes (not every object has a rotated box; none is invented)" \
        in readme


# ---------------------------------------------------------------- result lines


def _results(tmp_path: Path, files: dict[str, str], vocab: set[str], stems: set[str],
             skip: bool = False):
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    bad, deg = Problems(), Degenerate(skip)
    return read_results(folder, vocab, stems, bad, deg), bad, deg


def test_result_file_class_is_the_longest_class_its_name_ends_with(tmp_path: Path) -> None:
    """``comp4_det_test_storage-tank.txt`` is storage-tank, not tank; ``tank.txt`` is tank;
    a file named after no class is a problem."""
    dets, bad, _ = _results(tmp_path, {"comp4_det_test_storage-tank.txt": "a 0.5 1 1 5 5\n",
                                       "tank.txt": "a 0.25 2 2 6 6\n",
                                       "comp4_det_test_ship.txt": "a 0.5 1 1 5 5\n"},
                            {"tank", "storage-tank"}, {"a"})
    assert sorted((d.category, d.score) for d in dets) == [("storage-tank", 0.5),
                                                           ("tank", 0.25)]
    assert [(Path(p.file).name, p.field) for p in bad.items] == [
        ("comp4_det_test_ship.txt", "(file name)")]


def test_result_lines_box_or_rotated_and_their_problems(tmp_path: Path) -> None:
    """A 6-field line is a box (xmin ymin xmax ymax, as given), a 10-field line a rotated
    box (its four corners); zero width is degenerate, left out with the flag, an inverted
    box is refused, a quad on a line is degenerate; blank lines are skipped."""
    text = ("a 0.9 10 10 40 30\n\n"
            "a 0.8 10 10 40 10 40 30 10 30\n"
            "a 0.7 30 10 30 30\n"
            "a 0.6 1 1 2 2 3 3 4 4\n"
            "a 0.5 10 30 40 30\n")
    dets, bad, deg = _results(tmp_path, {"ship.txt": text}, {"ship"}, {"a"}, skip=True)
    assert not bad.items, bad.items
    assert [(d.score, d.box) for d in dets if d.box is not None] == [(0.9, (10, 10, 40, 30))]
    (rot,) = [d for d in dets if d.obb is not None]
    assert rot.score == 0.8 and rot.box is None
    assert shapely.Polygon(rot.obb).equals(shapely.box(10, 10, 40, 30))
    assert len(deg.lines) == 3
    assert "ship.txt line 4 (box)" in deg.lines[0]
    assert "ship.txt line 5 (quadrilateral)" in deg.lines[1]
    assert "ship.txt line 6 (box): zero area (xmax > xmin and ymax > ymin; found list " \
        "[10.0, 30.0, 40.0, 30.0])" in deg.lines[2]
    dets, bad, _ = _results(tmp_path, {"ship.txt": "a 0.9 40 10 10 30\na 0.9 10 30 40 10\n"},
                            {"ship"}, {"a"}, skip=True)
    assert dets == []
    assert [(p.file, p.field, p.line, p.expected, p.found) for p in bad.items] == [
        (str(tmp_path / "model" / "ship.txt"), "(box)", 1, "xmax > xmin and ymax > ymin",
         "list [40.0, 10.0, 10.0, 30.0]"),
        (str(tmp_path / "model" / "ship.txt"), "(box)", 2, "xmax > xmin and ymax > ymin",
         "list [10.0, 30.0, 40.0, 10.0]")]


FIELDS = ("<image> <score> xmin ymin xmax ymax, or <image> <score> x1 y1 ... x4 y4")
NUMBERS = "a finite score and coordinates within ±1e100"


@pytest.mark.parametrize(("line", "field", "expected", "found"), [
    ("a 0.9 1 1 5", "(detection)", FIELDS, "5 fields"),
    ("a 0.9 1 1 5 5 6", "(detection)", FIELDS, "7 fields"),
    ("b 0.9 1 1 5 5", "image", "the name of an annotated image (its XML file's stem)",
     "str 'b'"),
    ("a nan 1 1 5 5", "(numbers)", NUMBERS, "str 'a nan 1 1 5 5'"),
    ("a 0.9 1 1 5 inf", "(numbers)", NUMBERS, "str 'a 0.9 1 1 5 inf'"),
    ("a 0.9 1 1 5 1e101", "(numbers)", NUMBERS, "str 'a 0.9 1 1 5 1e101'"),
    ("a 0.9 1 1 5 x", "(numbers)", NUMBERS, "str 'a 0.9 1 1 5 x'"),
    ("a 0.9 1 1 1 1 1 1 1 -1e101", "(numbers)", NUMBERS, "str 'a 0.9 1 1 1 1 1 1 1 -1e101'"),
    ("a 0.9 -1e101 1 5 5", "(numbers)", NUMBERS, "str 'a 0.9 -1e101 1 5 5'"),
    ("a 0.9 1 1e101 5 5", "(numbers)", NUMBERS, "str 'a 0.9 1 1e101 5 5'"),
])
def test_result_line_problems_name_line_field_expected_found(
        tmp_path: Path, line: str, field: str, expected: str, found: str) -> None:
    """Each bad line is one problem: the file, its line (from 1), the field, what was
    expected and what was found; the good line before it is kept."""
    dets, bad, _ = _results(tmp_path, {"ship.txt": "a 0.5 1 1 5 5\n" + line + "\n"},
                            {"ship"}, {"a"})
    assert len(dets) == 1
    assert [(Path(p.file).name, p.field, p.line, p.expected, p.found) for p in bad.items] == [
        ("ship.txt", field, 2, expected, found)]


def test_a_score_beyond_the_coordinate_bound_is_a_score(tmp_path: Path) -> None:
    """The ±1e100 bound is on coordinates only: a score of 1e200 is a finite score."""
    dets, bad, _ = _results(tmp_path, {"ship.txt": "a 1e200 1 1 5 5\n"}, {"ship"}, {"a"})
    assert not bad.items and dets[0].score == 1e200


def test_results_folder_problems(tmp_path: Path) -> None:
    """Not a folder, or a folder without result files: one problem naming --results and the
    folder; other files than ``.txt`` are not read; a ``.txt`` named after no class and one
    whose name is not UTF-8 are each a problem naming the file."""
    bad = Problems()
    assert read_results(tmp_path / "none", {"ship"}, {"a"}, bad) == []
    assert [(p.file, p.field, p.expected, p.found) for p in bad.items] == [
        (str(tmp_path / "none"), "--results", "a folder of <class>.txt result files",
         "not a folder")]
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "ship.csv").write_text("a 0.5 1 1 5 5\n")
    bad = Problems()
    assert read_results(tmp_path / "empty", {"ship"}, {"a"}, bad) == []
    assert [(p.file, p.field, p.expected, p.found) for p in bad.items] == [
        (str(tmp_path / "empty"), "--results", "<anything>_<class>.txt result files", "none")]
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "det_plane.txt").write_text("a 0.5 1 1 5 5\n")
    (folder / "README.md").write_text("not a result file\n")
    (folder / b"det_\xe9ship.txt".decode("utf-8", "surrogateescape")).write_text("x\n")
    bad = Problems()
    assert read_results(folder, {"ship"}, {"a"}, bad) == []
    assert sorted((Path(p.file).name, p.field) for p in bad.items) == [
        ("det_\\xe9ship.txt", "(file name)"), ("det_plane.txt", "(file name)")]
    plane = next(p for p in bad.items if p.file.endswith("det_plane.txt"))
    assert plane.expected == ("<anything>_<class>.txt with a class of the annotations (or "
                              "--classes)") and plane.found == "str 'det_plane.txt'"


def test_a_zero_area_result_line_is_a_problem_by_default(tmp_path: Path) -> None:
    """Without a ``Degenerate`` (the default) a zero-width line is refused, naming the flag
    that would leave it out; with one that skips, it is listed instead."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "ship.txt").write_text("a 0.5 1 1 5 5\na 0.5 3 1 3 5\n")
    bad = Problems()
    dets = read_results(folder, {"ship"}, {"a"}, bad)
    assert len(dets) == 1
    assert [(p.field, p.line) for p in bad.items] == [("(box)", 2)]
    assert bad.items[0].expected == ("xmax > xmin and ymax > ymin (a box of zero area; "
                                     "--skip-degenerate leaves it out)")
    assert bad.items[0].found == "list [3.0, 1.0, 3.0, 5.0]"
    bad = Problems()
    assert len(read_results(folder, {"ship"}, {"a"}, bad, Degenerate(True))) == 1
    assert not bad.items


# ---------------------------------------------------------------- classes


def test_classes_file_names_ids_and_refuses_repeats(tmp_path: Path) -> None:
    """One ``<name>`` or ``<id> <name>`` a line (line numbers from 1, comments and blank
    lines skipped, reading on after them and after a bad line); an id twice or three
    tokens is a problem naming the line; a file that is not UTF-8 is one problem."""
    path = tmp_path / "classes.txt"
    path.write_text("# HRSC\n100000001 ship\n\nwarcraft\n100000001 again\na b c\n"
                    "  # note\n100000002 tanker\n")
    bad = Problems()
    assert read_classes(path, bad) == {"100000001": "ship", "warcraft": "warcraft",
                                       "100000002": "tanker"}
    assert [(p.file, p.field, p.line, p.expected, p.found) for p in bad.items] == [
        (str(path), "(line)", 5, "<name> or <id> <name>, each id once",
         "str '100000001 again'"),
        (str(path), "(line)", 6, "<name> or <id> <name>, each id once", "str 'a b c'")]
    path.write_bytes(b"ship\n\xff\n")
    bad = Problems()
    assert read_classes(path, bad) == {}
    assert [p.expected for p in bad.items] == ["a UTF-8 text classes file"]


def test_class_ids_are_named_by_the_classes_file(tmp_path: Path) -> None:
    entry, bad, _ = _read(tmp_path, _hrsc(_hrsc_object("100000005", (48, 43, 92, 77),
                                                       (70.0, 60.0, 40.0, 16.0, A30), "1")),
                          class_ids={"100000005": "warcraft"})
    assert not bad.items
    assert [(o.category, o.difficult) for o in entry.objects] == [("warcraft", True)]
    entry, bad, _ = _read(tmp_path, _annotation(_obj("dog", (1, 1, 5, 5))),
                          class_ids={"cat": "cat"})
    assert entry is None
    assert [(p.field, p.expected) for p in bad.items] == [
        ("<object> 0 <name>", "a class of the --classes file")]


@pytest.mark.parametrize("name", ["", "two words"])
def test_a_class_name_is_one_word(tmp_path: Path, name: str) -> None:
    entry, bad, _ = _read(tmp_path, _annotation(_obj(name, (1, 1, 5, 5))))
    assert entry is None
    assert [(p.field, p.expected) for p in bad.items] == [
        ("<object> 0 <name>", "a class name without spaces")]


# ---------------------------------------------------------------- image, size, file name


def test_image_name_from_filename_or_stem_and_hrsc_format(tmp_path: Path) -> None:
    """The image is ``<filename>``; without it the XML's stem with ``.jpg``; HRSC's is
    ``<Img_FileName>.<Img_FileFmt>``; the size comes from the XML (numbers-only)."""
    entry, bad, _ = _read(tmp_path, _annotation(_obj("dog", (1, 1, 5, 5)),
                                                filename="sub/x.png"))
    assert not bad.items and (entry.name, entry.image, entry.width, entry.height) == (
        "sub/x.png", None, 200, 150)
    entry, bad, _ = _read(tmp_path, _annotation(_obj("dog", (1, 1, 5, 5))), name="q7.xml")
    assert (entry.stem, entry.name) == ("q7", "q7.jpg")
    entry, bad, _ = _read(tmp_path, _hrsc(_hrsc_object(
        "ship", (48, 43, 92, 77), (70.0, 60.0, 40.0, 16.0, A30)), name="1001", fmt="png"))
    assert not bad.items and entry.name == "1001.png"


@pytest.mark.parametrize(("size", "field"), [
    ("<size><width>0</width><height>150</height></size>", "(size) width"),
    ("<size><width>200</width><height>-3</height></size>", "(size) height"),
    ("<size><width>200</width></size>", "(size) height"),
])
def test_size_sides_are_whole_positive_numbers(tmp_path: Path, size: str, field: str
                                               ) -> None:
    entry, bad, _ = _read(tmp_path, _annotation(_obj("dog", (1, 1, 5, 5)), size=size))
    assert entry is None and [p.field for p in bad.items] == [field]


def test_image_found_in_the_folder_and_its_size_checked(tmp_path: Path) -> None:
    from convert_helpers import blank_images

    images = blank_images(tmp_path / "img", {"p.png": (200, 150), "q.png": (30, 20)})
    by_stem = {"p": images / "p.png", "q": images / "q.png"}
    for xml, name in ((_annotation(_obj("dog", (1, 1, 5, 5)), filename="p.jpg"), "p.png"),
                      (_annotation(_obj("dog", (1, 1, 5, 5))), "p.png")):
        path = tmp_path / "p.xml"
        path.write_text(xml)
        bad = Problems()
        entry = read_voc(path, by_stem, images, {}, bad)
        assert not bad.items and (entry.name, entry.image, entry.width) == (
            name, images / "p.png", 200)
    path = tmp_path / "q.xml"
    path.write_text(_annotation(_obj("dog", (1, 1, 5, 5)), filename="q.png"))
    bad = Problems()
    assert read_voc(path, by_stem, images, {}, bad) is None
    assert [(p.field, p.expected, p.found) for p in bad.items] == [
        ("(size)", "the size of q.png: 30 x 20", "200 x 150")]


def test_missing_image_and_no_size_is_a_problem_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "a.xml"
    path.write_text("<annotation>" + _obj("dog", (1, 1, 5, 5)) + "</annotation>")
    bad = Problems()
    assert read_voc(path, {}, tmp_path, {}, bad) is None
    assert [p.field for p in bad.items] == ["(size)"]
    assert f"in {tmp_path}" in bad.items[0].expected


def test_problems_before_a_broken_document_are_not_reported(tmp_path: Path) -> None:
    """A file that turns out not well-formed is one problem (the document), not also the
    problems of the objects read before the break."""
    xml = _annotation(_obj("dog", (5, 1, 1, 5)))[:-len("</annotation>")] + "<object>"
    entry, bad, _ = _read(tmp_path, xml)
    assert entry is None
    assert [p.field for p in bad.items] == ["(document)"]
    assert bad.items[0].expected == "well-formed XML"


def test_whitespace_in_values_is_collapsed(tmp_path: Path) -> None:
    xml = ("<annotation>" + SIZE + "<object><name>\n  dog \n</name><difficult> 1 </difficult>"
           "<bndbox><xmin> 1 </xmin><ymin>2</ymin><xmax>\n5\n</xmax><ymax>6</ymax></bndbox>"
           "</object></annotation>")
    entry, bad, _ = _read(tmp_path, xml)
    assert not bad.items
    assert [(o.category, o.difficult, o.box) for o in entry.objects] == [
        ("dog", True, (1, 2, 5, 6))]


@pytest.mark.parametrize(("value", "expected"), [
    ("", "a finite number"), ("x", "a finite number"), ("nan", "a finite number"),
    ("1" * 65, "a finite number"), ("1e101", "a finite number within ±1e100")])
def test_a_coordinate_is_a_finite_number_within_the_bound(tmp_path: Path, value: str,
                                                          expected: str) -> None:
    xml = _annotation(_obj("dog", None, extra=(
        f"<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>{value}</xmax><ymax>5</ymax></bndbox>")))
    entry, bad, _ = _read(tmp_path, xml)
    assert entry is None
    assert [p.field for p in bad.items] == ["<object> 0 <xmax>"]
    assert bad.items[0].expected.startswith(expected)


# ---------------------------------------------------------------- from_voc: the whole


def test_options_and_folders_are_checked_first(tmp_path: Path) -> None:
    """Each refusal names its option: --difficult not target/ignore, --annotations not a
    folder or holding no .xml; nothing is written."""
    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5)))})
    cases = [({"difficult": "skip"}, ann, "--difficult"),
             ({}, tmp_path / "nowhere", "--annotations")]
    empty = tmp_path / "empty"
    empty.mkdir()
    cases.append(({}, empty, "--annotations"))
    for kwargs, folder, field in cases:
        with pytest.raises(OVEarthInputError) as err:
            from_voc(folder, None, tmp_path / "b", **kwargs)
        assert [p.field for p in err.value.problems] == [field]
        assert not (tmp_path / "b").exists()
    with pytest.raises(OVEarthInputError) as err:
        from_voc(empty, None, tmp_path / "b")
    assert err.value.problems[0].expected == "VOC / DIOR / HRSC2016 .xml files"


def test_every_class_is_a_query_on_every_image(tmp_path: Path) -> None:
    """Positive queries for the classes present (their boxes in the XML's order), negatives
    for the absent ones (``negatives="all"``), with ids ``<stem>_<class>`` and
    ``ov_<stem>_<class>``, the image path under ``images/`` and the XML's size."""
    ann = _write(tmp_path, {
        "a": _annotation(_obj("ship", (30, 5, 50, 25)), _obj("car", (1, 2, 3, 4)),
                         _obj("ship", (5, 5, 25, 25)), filename="a.png"),
        "b": _annotation(_obj("car", (2, 2, 8, 8)))})
    summary = from_voc(ann, None, tmp_path / "b")
    gt = json.loads((tmp_path / "b" / "ground_truth.json").read_text())
    anns = {a["id"]: a for a in gt["annotations"]}
    assert {k: (a["image_path"], a["width"], a["height"], a["category_name"], a["bbox"])
            for k, a in anns.items()} == {
        "a_car": ("images/a.png", 200, 150, "car", [[1, 2, 2, 2]]),
        "a_ship": ("images/a.png", 200, 150, "ship", [[30, 5, 20, 20], [5, 5, 20, 20]]),
        "b_car": ("images/b.jpg", 200, 150, "car", [[2, 2, 6, 6]]),
        "b_ship": ("images/b.jpg", 200, 150, "ship", [])}
    queries = {q["query_id"]: (q["ann_id"], q["type"])
               for q in gt["tasks"]["open_vocabulary"]}
    assert queries == {"ov_a_car": ("a_car", "positive"), "ov_a_ship": ("a_ship", "positive"),
                       "ov_b_car": ("b_car", "positive"), "ov_b_ship": ("b_ship", "negative")}
    assert summary["open_vocabulary"] == {"positive": 3, "negative": 1}


def test_n_negatives_per_image_from_its_absent_classes(tmp_path: Path) -> None:
    """``negatives=N``: each image gets min(N, absent) negatives, each an absent class; the
    same seed gives the same choice; a detection on a pair that is no query is left out
    and counted in a note."""
    classes = tmp_path / "classes.txt"
    classes.write_text("ship\ncar\nplane\nbridge\nport\n")
    ann = _write(tmp_path, {"a": _annotation(_obj("ship", (1, 1, 5, 5))),
                            "b": _annotation(_obj("ship", (1, 1, 5, 5)),
                                             _obj("car", (1, 1, 5, 5)),
                                             _obj("plane", (1, 1, 5, 5)),
                                             _obj("bridge", (1, 1, 5, 5)))})
    res = tmp_path / "model"
    res.mkdir()
    for cls in ("ship", "car", "plane", "bridge", "port"):
        (res / f"comp4_det_test_{cls}.txt").write_text("a 0.5 1 1 5 5\nb 0.5 1 1 5 5\n")
    chosen = []
    for out in ("n1", "n2"):
        from_voc(ann, None, tmp_path / out, [res], classes=classes, negatives=2, seed=7)
        gt = json.loads((tmp_path / out / "ground_truth.json").read_text())
        pairs = {q["query_id"]: q["type"] for q in gt["tasks"]["open_vocabulary"]}
        negatives = sorted(k for k, t in pairs.items() if t == "negative")
        chosen.append(negatives)
        a_neg = [k for k in negatives if k.startswith("ov_a_")]
        b_neg = [k for k in negatives if k.startswith("ov_b_")]
        assert len(a_neg) == 2 and len(b_neg) == 1 and b_neg == ["ov_b_port"]
        assert all(k[len("ov_a_"):] in {"car", "plane", "bridge", "port"} for k in a_neg)
        assert sorted(k for k, t in pairs.items() if t == "positive") == [
            "ov_a_ship", "ov_b_bridge", "ov_b_car", "ov_b_plane", "ov_b_ship"]
        readme = (tmp_path / out / "README.md").read_text()
        # 10 detections, on 5 + 3 = 8 queries: 2 left out (a's third and fourth absent class)
        assert ("predictions/model.json: 2 detections on (image, class) pairs that are no "
                "query (--negatives N) were left out") in readme
        rows = json.loads((tmp_path / out / "predictions" / "model.json").read_text())
        assert sorted(r["query_id"] for r in rows["tasks"]["open_vocabulary"]) == sorted(pairs)
    assert chosen[0] == chosen[1]


def test_results_go_to_their_query_by_image_and_class(tmp_path: Path) -> None:
    """A detection goes to the query of its image and its file's class: box lines as
    ``bbox`` rows, rotated lines as ``polygon`` rows, each with its score; a query with no
    detection gets an empty row; phrases have spaces for - and _."""
    ann = _write(tmp_path, {"a": _annotation(_obj("storage_tank", (1, 1, 5, 5))),
                            "b": _annotation(_obj("ship", (2, 2, 9, 9)))})
    res = tmp_path / "m"
    res.mkdir()
    (res / "det_ship.txt").write_text("a 0.25 1 2 3 4\nb 0.5 1 1 9 1 9 9 1 9\n")
    (res / "det_storage_tank.txt").write_text("a 0.75 0 0 6 6\n")
    from_voc(ann, None, tmp_path / "b", [res])
    rows = {r["query_id"]: r for r in json.loads(
        (tmp_path / "b" / "predictions" / "m.json").read_text())["tasks"]["open_vocabulary"]}
    assert rows["ov_a_ship"]["bbox"] == [{"bbox": [1, 2, 3, 4], "score": 0.25}]
    assert rows["ov_a_ship"]["oriented_bbox"] == [] and rows["ov_a_ship"]["phrase"] == "ship"
    assert rows["ov_b_ship"]["bbox"] == []
    (poly,) = rows["ov_b_ship"]["oriented_bbox"]
    assert poly["score"] == 0.5 and shapely.Polygon(poly["polygon"]).equals(
        shapely.box(1, 1, 9, 9))
    assert rows["ov_a_storage_tank"]["bbox"] == [{"bbox": [0, 0, 6, 6], "score": 0.75}]
    assert rows["ov_a_storage_tank"]["phrase"] == "storage tank"
    assert rows["ov_b_storage_tank"]["bbox"] == [] and \
        rows["ov_b_storage_tank"]["oriented_bbox"] == []


def test_mixed_rotated_and_plain_objects_warn_naming_the_files(tmp_path: Path) -> None:
    """7 files: one with a rotated box, six with only a <bndbox>: no oriented box anywhere,
    a warning counting 1 of 7 objects and naming the first five files and "1 more"."""
    rot = _obj("ship", None, extra="<robndbox><cx>30</cx><cy>30</cy><w>20</w><h>10</h>"
               "<angle>0</angle></robndbox>")
    xml = {"r": _annotation(rot)}
    xml.update({f"p{k}": _annotation(_obj("ship", (1, 1, 5, 5))) for k in range(6)})
    summary = from_voc(_write(tmp_path, xml), None, tmp_path / "b")
    (warning,) = [w for w in summary["warnings"] if "rotated box" in w]
    assert warning.startswith("1 of 7 objects have a rotated box (<robndbox> or <mbox>), 6 "
                              "only a <bndbox> (p0.xml, p1.xml, p2.xml, p3.xml, p4.xml and 1 "
                              "more): ")
    assert all(a["oriented_bbox"] == [] for a in _anns(tmp_path / "b").values())
    summary = from_voc(_write(tmp_path / "all", {"r": _annotation(rot)}), None,
                       tmp_path / "c")
    assert not [w for w in summary["warnings"] if "rotated box" in w]
    assert _anns(tmp_path / "c")["r_ship"]["oriented_bbox"] == [
        [[20, 25], [40, 25], [40, 35], [20, 35]]]
    assert "oriented boxes from the rotated boxes (<robndbox>, <mbox>)" in (
        tmp_path / "c" / "README.md").read_text()


def test_skipped_entries_and_unused_images_are_named(tmp_path: Path) -> None:
    """Not converted: a file of the annotations folder that is not ``.xml`` (named), an
    image no XML names; the images an XML names are used, not listed."""
    from convert_helpers import blank_images

    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5)), filename="a.png")})
    (ann / "notes.txt").write_text("x")
    images = blank_images(tmp_path / "img", {"a.png": (200, 150), "z.png": (4, 4)})
    summary = from_voc(ann, images, tmp_path / "b")
    assert summary["skipped"] == [
        f"1 entries in {ann} are not .xml files (not read): notes.txt",
        f"1 images in {images} are named by no XML file (not converted: no annotation): "
        "z.png"]
    assert summary["image_files"] == 1 and summary["numbers_only"] == 0
    summary = from_voc(ann, None, tmp_path / "c")
    assert summary["skipped"] == [f"1 entries in {ann} are not .xml files (not read): "
                                  "notes.txt"]
    assert summary["numbers_only"] == 1


@pytest.mark.parametrize(("change", "field", "expected"), [
    (("<Class_ID>ship</Class_ID>", "<Class_ID>a ship</Class_ID>"), "<HRSC_Object> 1 <Class_ID>",
     "a class name without spaces"),
    (("<difficult>0</difficult>", "<difficult>yes</difficult>"), "<HRSC_Object> 1 <difficult>",
     "0 or 1"),
    (("<mbox_w>40.0</mbox_w>", "<mbox_w>wide</mbox_w>"), "<HRSC_Object> 1 <mbox_w>",
     "a finite number"),
    (("<mbox_ang>0.5235987755982988</mbox_ang>", "<mbox_ang>inf</mbox_ang>"),
     "<HRSC_Object> 1 <mbox_ang>", "a finite number"),
    (("<box_ymax>77</box_ymax>", "<box_ymax></box_ymax>"), "<HRSC_Object> 1 <box_ymax>",
     "a finite number"),
    (("<mbox_h>16.0</mbox_h>", "<mbox_h>0.0</mbox_h>"), "<HRSC_Object> 1 <mbox>",
     "a rotated box of positive area"),
])
def test_hrsc_problems_name_the_object_and_its_tag(tmp_path: Path, change: tuple[str, str],
                                                   field: str, expected: str) -> None:
    """A problem of HRSC's second object (index 1) names it and its own tag; the first
    object, fine, adds none."""
    good = _hrsc_object("ship", (48, 43, 92, 77), (70.0, 60.0, 40.0, 16.0, A30))
    assert change[0] in good
    entry, bad, _ = _read(tmp_path, _hrsc(good, good.replace(*change)), skip=False)
    assert entry is None
    assert [p.field for p in bad.items] == [field], bad.items
    assert bad.items[0].expected.startswith(expected)


def test_problems_name_the_line_of_their_element(tmp_path: Path) -> None:
    """A problem names the line where its element starts: HRSC's second object on line 4
    (a zero-height <mbox>, and a bad <difficult>), a <robndbox> on line 5
    (corners crossing), a <bndbox> on line 5 (xmax < xmin)."""
    good = _hrsc_object("ship", (48, 43, 92, 77), (70.0, 60.0, 40.0, 16.0, A30))
    flat = good.replace("<mbox_h>16.0</mbox_h>", "<mbox_h>0.0</mbox_h>").replace(
        "<difficult>0</difficult>", "<difficult>2</difficult>")
    xml = _hrsc(f"\n{good}\n\n{flat}\n")
    entry, bad, _ = _read(tmp_path, xml, skip=False)
    assert entry is None
    assert sorted((p.field, p.line) for p in bad.items) == [
        ("<HRSC_Object> 1 <difficult>", 4), ("<HRSC_Object> 1 <mbox>", 4)]
    bowtie = ("<robndbox><x_left_top>10</x_left_top><y_left_top>10</y_left_top><x_right_top>40"
              "</x_right_top><y_right_top>10</y_right_top><x_right_bottom>10</x_right_bottom>"
              "<y_right_bottom>30</y_right_bottom><x_left_bottom>40</x_left_bottom>"
              "<y_left_bottom>30</y_left_bottom></robndbox>")
    xml = ("<annotation>" + SIZE + "\n" + _obj("dog", (1, 1, 5, 5)) + "\n<object>\n<name>dog"
           "</name>\n" + bowtie + "</object>\n<object><name>dog</name>\n<bndbox><xmin>9</xmin>"
           "<ymin>1</ymin><xmax>2</xmax><ymax>5</ymax></bndbox></object></annotation>")
    entry, bad, _ = _read(tmp_path, xml, skip=True)
    assert entry is None
    assert [(p.field, p.line) for p in bad.items] == [("<object> 1 <robndbox>", 5),
                                                      ("<object> 2 <bndbox>", 7)]


# ---------------------------------------------------------------- second pass (mutmut on the
# whole module): refusals of rotated boxes, result files, the mixed-boxes warning


def _dior(corners: list[tuple[float, float]]) -> str:
    """An object with only DIOR-R's eight corner fields."""
    rot = "".join(f"<{k}>{v!r}</{k}>" for k, v in zip(
        ("x_left_top", "y_left_top", "x_right_top", "y_right_top", "x_right_bottom",
         "y_right_bottom", "x_left_bottom", "y_left_bottom"),
        [c for xy in corners for c in xy], strict=True))
    return _obj("ship", None, extra=f"<robndbox>{rot}</robndbox>")


OBB_EXPECTED = "a rotated box of positive area (corners in boundary order, within ±1e100)"


def test_a_crossing_rotated_box_is_refused_naming_file_and_corners(tmp_path: Path) -> None:
    """A bow tie (corners crossing) is one problem: the XML file, the object's
    ``<robndbox>``, what a rotated box must be, and the corners as read, rounded to three
    decimals (10.12345 shows as 10.123). Kills ``_valid_obb`` 13, 16, 17, 18 (the corners
    dropped or rounded otherwise), 43 (no file), 45 (no expected), 46 (no found)."""
    entry, bad, _ = _read(tmp_path, _annotation(_dior([(10.12345, 10), (40, 10), (10, 30),
                                                       (40, 30)])), skip=True)
    assert entry is None
    assert [(p.file, p.field, p.expected, p.found) for p in bad.items] == [
        (str(tmp_path / "a.xml"), "<object> 0 <robndbox>", OBB_EXPECTED,
         "list [[10.123, 10.0], [40.0, 10.0], [10.0, 30.0], [40.0, 30.0]]")]


def test_a_flat_rotated_box_names_its_corners_and_the_bound_is_inclusive(tmp_path: Path
                                                                        ) -> None:
    """Corners on one line are a box of zero area: refused by default with the corners
    (rounded to three decimals) and the flag that leaves it out; left out with the flag.
    A corner at exactly 1e100 is within the bound (``|v| <= 1e100``), so the flat box at
    x = 1e100 is of zero area too (left out with the flag), not refused as out of bounds.
    Kills ``_valid_obb`` 31 (the corners not given to the zero-area entry) and 21
    (``< 1e100``)."""
    flat = _dior([(0.12345, 5), (20, 5), (30, 5), (40, 5)])
    entry, bad, _ = _read(tmp_path, _annotation(flat), skip=False)
    assert entry is None
    assert [(p.field, p.expected, p.found) for p in bad.items] == [
        ("<object> 0 <robndbox>", OBB_EXPECTED + " (a box of zero area; --skip-degenerate "
         "leaves it out)", "list [[0.123, 5.0], [20.0, 5.0], [30.0, 5.0], [40.0, 5.0]]")]
    entry, bad, deg = _read(tmp_path, _annotation(flat), skip=True)
    assert not bad.items and entry.objects == []
    assert "found list [[0.123, 5.0], [20.0, 5.0], [30.0, 5.0], [40.0, 5.0]]" in \
        deg.objects[(str(tmp_path / "a.xml"), "<object> 0")]
    edge = _dior([(0, 0), (1e100, 0), (1e100, 0), (0, 0)])
    entry, bad, deg = _read(tmp_path, _annotation(_obj("ship", (1, 1, 5, 5)), edge),
                            skip=True)
    assert not bad.items, bad.items
    assert [o.box for o in entry.objects] == [(1, 1, 5, 5)]
    assert list(deg.objects) == [(str(tmp_path / "a.xml"), "<object> 1")]


def test_a_rotated_box_envelope_is_bounded_per_axis(tmp_path: Path) -> None:
    """The envelope of a rotated box, x over all corners and y over all corners, must be
    within ±1e100 wide and high (the evaluator's COCO box). By hand: the rectangle x 0..5e99,
    y -6e99..3e99 is 5e99 wide and 9e99 high: kept, its box the envelope (a per-corner
    minimum would pair x 5e99 with y -6e99: 1.1e100). The diamond x -6e99..6e99 is 1.2e100
    wide (refused naming the width), the one y -6e99..6e99 1.2e100 high (the height); the
    corners shown rounded to three decimals. Kills ``_valid_obb`` 56 (``min(axis=1)``), 60,
    61, 63, 64 (the side's name), 73, 101, 102, 103 (the corners), 81, 82, 85 (the
    expected text)."""
    entry, bad, _ = _read(tmp_path, _annotation(_dior([(0, -6e99), (5e99, -6e99), (5e99, 3e99),
                                                       (0, 3e99)])))
    assert not bad.items, bad.items
    assert entry.objects[0].box == (0, -6e99, 5e99, 3e99)
    wide = [(0.12345, -4e99), (6e99, 0), (0.5, 4e99), (-6e99, 0)]
    high = [(0.12345, -6e99), (4e99, 0), (0.5, 6e99), (-4e99, 0)]
    tail = " within ±1e100 (the box's {}: a larger one overflows IoU arithmetic)"
    for corners, axis, side in ((wide, "x", "width"), (high, "y", "height")):
        entry, bad, _ = _read(tmp_path, _annotation(_dior(corners)))
        assert entry is None
        assert [(p.file, p.field, p.expected) for p in bad.items] == [
            (str(tmp_path / "a.xml"), "<object> 0 <robndbox>",
             f"a rotated box whose envelope's largest {axis} - smallest {axis}"
             + tail.format(side))]
        assert bad.items[0].found.startswith(f"list [[0.123, {corners[0][1]!r}], ")


def test_result_file_class_is_the_longest_matching_name_not_the_last_in_order(
        tmp_path: Path) -> None:
    """``det_storage_tank.txt`` ends with both ``_tank`` and ``_storage_tank``: the longer
    class is its class (``tank`` sorts after ``storage_tank``, so a maximum by name would
    pick it). Kills ``read_results`` 49, 51 (the key ``len`` dropped)."""
    dets, bad, _ = _results(tmp_path, {"det_storage_tank.txt": "a 0.5 1 1 5 5\n"},
                            {"tank", "storage_tank"}, {"a"})
    assert not bad.items
    assert [d.category for d in dets] == ["storage_tank"]


def test_a_result_file_that_is_not_utf8_is_one_problem_naming_it(tmp_path: Path) -> None:
    """A result file whose bytes are not UTF-8 is one problem naming the file and what it
    should be (a UTF-8 text result file); the other files are still read. Kills
    ``read_results`` 78 (no problem list), 79, 83, 84 (the role's name)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "det_ship.txt").write_bytes(b"a 0.5 1 1 5 5\n\xff\n")
    (folder / "det_car.txt").write_text("a 0.25 1 1 5 5\n")
    bad = Problems()
    dets = read_results(folder, {"ship", "car"}, {"a"}, bad)
    assert [(d.category, d.score) for d in dets] == [("car", 0.25)]
    assert [(p.file, p.field, p.expected) for p in bad.items] == [
        (str(folder / "det_ship.txt"), "(file)", "a UTF-8 text result file")]


def test_a_flat_rotated_result_line_is_a_problem_by_default(tmp_path: Path) -> None:
    """A rotated result line whose corners are on one line has zero area: by default a
    problem naming the file, line, field, what was expected, the flag, and the corners as
    read. Kills ``_result_line`` 134 (no problem list), 137, 148, 149 (the expected text),
    138 (the corners)."""
    dets, bad, _ = _results(tmp_path, {"ship.txt": "a 0.5 1 1 5 5\na 0.6 1 1 2 2 3 3 4 4\n"},
                            {"ship"}, {"a"})
    assert len(dets) == 1
    assert [(Path(p.file).name, p.line, p.field, p.expected, p.found) for p in bad.items] == [
        ("ship.txt", 2, "(quadrilateral)", "a quadrilateral with positive area (a box of zero "
         "area; --skip-degenerate leaves it out)",
         "list [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]")]


def test_mixed_boxes_warning_with_five_files_names_all_five(tmp_path: Path) -> None:
    """Five files of objects without a rotated box (and one with): the warning, word for
    word, names all five and says nothing of more. Kills ``_oriented`` 18, 21 (" and 0
    more" / " and -N more"), 23 (a filler), 26 to 29 (its text)."""
    rot = _obj("ship", None, extra="<robndbox><cx>30</cx><cy>30</cy><w>20</w><h>10</h>"
               "<angle>0</angle></robndbox>")
    xml = {"r": _annotation(rot)}
    xml.update({f"p{k}": _annotation(_obj("ship", (1, 1, 5, 5))) for k in range(5)})
    summary = from_voc(_write(tmp_path, xml), None, tmp_path / "b")
    assert [w for w in summary["warnings"] if "rotated box" in w] == [
        "1 of 6 objects have a rotated box (<robndbox> or <mbox>), 5 only a <bndbox> (p0.xml, "
        "p1.xml, p2.xml, p3.xml, p4.xml): the ground truth has no oriented boxes (one is not "
        "invented from a <bndbox>; oriented-box metrics need every object's)"]


def test_the_output_folder_is_checked_before_anything_is_read(tmp_path: Path) -> None:
    """The output folder is checked first (before any XML is read, so a refusal costs
    nothing and says only that): a benchmark folder is replaced only with ``force``, and
    not even then when it holds the annotations (it would delete the source). Here every
    XML is also broken: the one problem is --out's. Kills ``from_voc`` 16, 19 (the inputs
    not given to the first check) and 18 (``force`` dropped: the inputs taken for it); the
    writer's own check would refuse too, but only after reading."""
    ann = _write(tmp_path / "data", {"a": _annotation(_obj("dog", (1, 1, 5, 5)))})
    bench = tmp_path / "b"
    from_voc(ann, None, bench)
    (ann / "a.xml").write_text("<annotation><object>")
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, None, bench)
    assert [p.field for p in err.value.problems] == ["--out"]
    inside = _write(bench / "src", {"a": "<annotation><object>"})
    with pytest.raises(OVEarthInputError) as err:
        from_voc(inside, None, bench, force=True)
    assert [p.field for p in err.value.problems] == ["--out"]
    assert (inside / "a.xml").is_file()


def test_an_unknown_difficult_mode_is_one_problem_naming_the_option(tmp_path: Path) -> None:
    """``difficult="skip"``: one problem, of the options (no file), naming --difficult,
    the two accepted values and the value given. Kills ``from_voc`` 25, 27, 28, 33, 34."""
    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5)))})
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, None, tmp_path / "b", difficult="skip")
    assert [(p.file, p.field, p.expected, p.found) for p in err.value.problems] == [
        ("(options)", "--difficult", "target or ignore", "str 'skip'")]


def test_from_voc_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """By default: images hard-linked into the benchmark (not copied), no progress on
    stderr (even when the work takes long: the wait before a progress line is made zero
    here), the README names the call that made it, N negatives drawn with seed 0; an
    existing benchmark is replaced only with ``force``. Kills ``from_voc`` 3 (seed 1), 6
    (force), 7 (link), 8 (progress), 10, 160 (the command), 15, 266 (``force`` not passed
    on), 267, 271, 272 (``link`` not passed on)."""
    from convert_helpers import blank_images

    from ovearth_core.convert import common

    monkeypatch.setattr(common, "PROGRESS_AFTER", 0.0)
    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5)), filename="a.png"),
                            "b": _annotation(_obj("cat", (1, 1, 5, 5)))})
    images = blank_images(tmp_path / "img", {"a.png": (200, 150)})
    from_voc(ann, images, tmp_path / "b", negatives=1)
    assert capsys.readouterr().err == ""
    linked = tmp_path / "b" / "images" / "a.png"
    assert linked.stat().st_ino == (images / "a.png").stat().st_ino
    readme = (tmp_path / "b" / "README.md").read_text()
    assert "Made by `ovearth_core.convert.from_voc(...)`" in readme
    assert "the absent classes negatives (1 per image, seed 0)" in readme
    with pytest.raises(OVEarthInputError):
        from_voc(ann, images, tmp_path / "b")
    from_voc(ann, images, tmp_path / "b", force=True)


def test_reading_progress_is_named_and_follows_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``show_progress`` (and the wait before a line made zero) stderr (not a terminal)
    says "reading annotations: 1/2 (50 %)" and "2/2 (100 %)", and the writer "writing
    images". Kills ``from_voc`` 120, 125, 126 (the label) and 121, 268, 273 (the flag not
    passed on)."""
    from ovearth_core.convert import common

    monkeypatch.setattr(common, "PROGRESS_AFTER", 0.0)
    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5))),
                            "b": _annotation(_obj("dog", (1, 1, 5, 5)))})
    from_voc(ann, None, tmp_path / "b", show_progress=True)
    err = capsys.readouterr().err.splitlines()
    assert "reading annotations: 1/2 (50 %)" in err
    assert "reading annotations: 2/2 (100 %)" in err
    # and the writer's, for the images (kills from_voc 268, 273: the flag not passed on)
    from convert_helpers import blank_images

    images = blank_images(tmp_path / "img", {"a.png": (200, 150)})
    from_voc(ann, images, tmp_path / "c", show_progress=True)
    assert "writing images: 1/1 (100 %)" in capsys.readouterr().err.splitlines()


def test_annotations_folder_refusals_in_full(tmp_path: Path) -> None:
    """Not a folder: the path, --annotations, "a folder of VOC / HRSC2016 XML files", "not a
    folder"; a folder without .xml: the folder, --annotations, "VOC / DIOR / HRSC2016 .xml
    files", "none". Kills ``from_voc`` 49, 51, 52, 59 to 63, 75, 78, 88, 89."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder, expected, found in (
            (tmp_path / "nowhere", "a folder of VOC / HRSC2016 XML files", "not a folder"),
            (empty, "VOC / DIOR / HRSC2016 .xml files", "none")):
        with pytest.raises(OVEarthInputError) as err:
            from_voc(folder, None, tmp_path / "b")
        assert [(p.file, p.field, p.expected, p.found) for p in err.value.problems] == [
            (str(folder), "--annotations", expected, found)]


def test_problems_of_the_folders_and_classes_file_are_reported(tmp_path: Path) -> None:
    """Each source's problems reach the error: an XML whose name is not UTF-8 (named), an
    images path that is no folder, a classes file naming an id twice (its line). Kills
    ``from_voc`` 67, 92, 99 (the problem list not given to the reader)."""
    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5)))})
    odd = ann / b"\xe9.xml".decode("utf-8", "surrogateescape")
    odd.write_text(_annotation(_obj("dog", (1, 1, 5, 5))))
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, None, tmp_path / "b")
    assert [Path(p.file).name for p in err.value.problems] == ["\\xe9.xml"]
    odd.unlink()
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, tmp_path / "no-images", tmp_path / "b")
    assert [(p.file, p.field, p.expected) for p in err.value.problems] == [
        (str(tmp_path / "no-images"), "(folder)", "a folder of images")]
    classes = tmp_path / "classes.txt"
    classes.write_text("dog\ndog\n")
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, None, tmp_path / "b", classes=classes)
    assert [(p.file, p.line) for p in err.value.problems] == [(str(classes), 2)]


def test_an_image_in_a_subfolder_named_by_filename_is_found(tmp_path: Path) -> None:
    """``<filename>sub/a.png</filename>``: the image is looked up under the images folder,
    so it is found (an image file, its size read), not numbers-only. Kills ``from_voc``
    109 (the images folder not given to ``read_voc``)."""
    from convert_helpers import blank_images

    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5)), filename="sub/a.png")})
    images = tmp_path / "img"
    blank_images(images / "sub", {"a.png": (200, 150)})
    summary = from_voc(ann, images, tmp_path / "b")
    assert (summary["image_files"], summary["numbers_only"]) == (1, 0)
    assert (tmp_path / "b" / "images" / "sub" / "a.png").is_file()


def test_skip_degenerate_reaches_the_result_lines(tmp_path: Path) -> None:
    """``skip_degenerate`` leaves a zero-width result line out (named in a warning) as it
    does a zero-area object; without it the line is refused. Kills ``from_voc`` 139 (the
    results read with the default, refusing ``Degenerate``)."""
    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5)))})
    res = tmp_path / "m"
    res.mkdir()
    (res / "dog.txt").write_text("a 0.5 1 1 5 5\na 0.5 3 1 3 5\n")
    summary = from_voc(ann, None, tmp_path / "b", [res], skip_degenerate=True)
    assert any("1 result line of zero area left out of the predictions" in w
               and "dog.txt line 2 (box)" in w for w in summary["warnings"])
    with pytest.raises(OVEarthInputError) as err:
        from_voc(ann, None, tmp_path / "c", [res])
    assert [(p.field, p.line) for p in err.value.problems] == [("(box)", 2)]


def test_a_missing_image_is_named_with_its_folder_and_size_source(tmp_path: Path) -> None:
    """An XML whose image is not in the images folder: converted numbers-only, the warning
    names the folder, the image and where its size came from (the XML's size). Kills
    ``from_voc`` 150 (no folder), 153, 156, 157, 158 (the size's source)."""
    from convert_helpers import blank_images

    ann = _write(tmp_path, {"a": _annotation(_obj("dog", (1, 1, 5, 5)), filename="a.png"),
                            "b": _annotation(_obj("dog", (1, 1, 5, 5)), filename="b.png")})
    images = blank_images(tmp_path / "img", {"a.png": (200, 150)})
    summary = from_voc(ann, images, tmp_path / "b")
    assert [w for w in summary["warnings"] if "numbers-only" in w] == [
        f"1 of 2 images are not in {images}: b.png. Converted numbers-only (the benchmark "
        "holds no pixels for them; the app shows none); sizes: 1 from the XML's size"]


def test_negatives_are_drawn_by_the_seed_given(tmp_path: Path) -> None:
    """``negatives=1`` over 20 images with 9 absent classes each: the same seed draws the
    same negatives, seeds 1 and 2 draw different ones (the chance that 20 independent
    draws of 1 in 9 all agree is 9**-20). Kills ``from_voc`` 197 (the seed not passed on:
    every seed the same) and ``_add_queries`` 19 (``random.Random(None)``: not
    reproducible)."""
    classes = [f"c{k}" for k in range(10)]
    (tmp_path / "classes.txt").write_text("\n".join(classes) + "\n")
    ann = _write(tmp_path, {f"i{k:02d}": _annotation(_obj(classes[k % 10], (1, 1, 5, 5)))
                            for k in range(20)})

    def negatives(seed: int, out: str) -> list[str]:
        from_voc(ann, None, tmp_path / out, classes=tmp_path / "classes.txt", negatives=1,
                 seed=seed)
        gt = json.loads((tmp_path / out / "ground_truth.json").read_text())
        chosen = sorted(q["query_id"] for q in gt["tasks"]["open_vocabulary"]
                        if q["type"] == "negative")
        assert len(chosen) == 20
        return chosen

    first = negatives(1, "s1")
    assert negatives(1, "s1b") == first
    assert negatives(2, "s2") != first


def test_notes_say_how_boxes_and_results_were_read(tmp_path: Path) -> None:
    """The README's notes on boxes and results, word for word: without rotated boxes, and
    with them. Kills ``from_voc`` 242 to 254 (their text)."""
    ann = _write(tmp_path, {"a": _annotation(_obj("ship", (1, 1, 5, 5)))})
    from_voc(ann, None, tmp_path / "b")
    readme = (tmp_path / "b" / "README.md").read_text()
    assert ("- boxes as given (continuous coordinates, no VOC + 1); no oriented boxes (not "
            "every object has a rotated box; none is invented)\n") in readme
    assert ("- results: a box line is a box (bbox), a rotated line an oriented box "
            "(oriented_bbox); neither is made from the other\n") in readme
    rot = _obj("ship", None, extra="<robndbox><cx>30</cx><cy>30</cy><w>20</w><h>10</h>"
               "<angle>0</angle></robndbox>")
    from_voc(_write(tmp_path / "r", {"a": _annotation(rot)}), None, tmp_path / "c")
    assert ("- boxes as given (continuous coordinates, no VOC + 1); oriented boxes from the "
            "rotated boxes (<robndbox>, <mbox>)\n") in (tmp_path / "c" / "README.md").read_text()


def test_notes_say_what_difficult_objects_became(tmp_path: Path) -> None:
    """The README's difficult note is one line, word for word, in each mode. Kills
    ``from_voc`` 257, 262 (the text)."""
    ann = _write(tmp_path, {"a": _annotation(_obj("ship", (1, 1, 5, 5), "1"))})
    for mode, line in (("target", "difficult objects are targets, flagged in the "
                                  "annotation's difficult list"),
                       ("ignore", "difficult objects are ignore regions")):
        from_voc(ann, None, tmp_path / mode, difficult=mode)
        assert f"\n- {line}\n" in (tmp_path / mode / "README.md").read_text()


def test_an_object_without_a_box_names_its_line(tmp_path: Path) -> None:
    """An ``<object>`` with neither ``<bndbox>`` nor ``<robndbox>`` (on line 2): one problem
    with the file, the object, what it needs, "missing" and the object's line. Kills
    ``_voc_object`` 37, 38, 43, 44, 46, 47, 48."""
    entry, bad, _ = _read(tmp_path, "<annotation>" + SIZE + "\n<object><name>dog</name>"
                          "</object></annotation>")
    assert entry is None
    assert [(p.file, p.field, p.expected, p.found, p.line) for p in bad.items] == [
        (str(tmp_path / "a.xml"), "<object> 0 <bndbox>",
         "<bndbox> (xmin ymin xmax ymax) or <robndbox>", "missing", 2)]


def test_a_bad_robndbox_number_names_the_rotated_box_and_key(tmp_path: Path) -> None:
    """A roLabelImg ``<w>`` that is no number: the field is the object's
    ``<robndbox><w>``. Kills ``_voc_object`` 79, 84, 85."""
    entry, bad, _ = _read(tmp_path, _annotation(_obj("ship", None, extra=(
        "<robndbox><cx>70</cx><cy>60</cy><w>wide</w><h>16</h><angle>0</angle></robndbox>"))))
    assert entry is None
    assert [(p.field, p.found) for p in bad.items] == [
        ("<object> 0 <robndbox><w>", "str 'wide'")]


def test_bndbox_problems_name_values_line_and_side(tmp_path: Path) -> None:
    """A ``<bndbox>`` (on line 3) of zero width: refused by default with its four values and
    its line; an inverted one: refused with its values and line; one wider (higher) than
    1e100: refused naming xmax (ymax), the side, and the two values. Kills ``_box`` 37, 38,
    48 (zero area), 53 (inverted), 64, 65, 68, 69, 78, 87 (too wide or high)."""
    def one(box: tuple[float, ...]) -> list[tuple]:
        entry, bad, _ = _read(tmp_path, "<annotation>" + SIZE + "\n<object><name>dog</name>"
                              "\n" + _obj("dog", box)[len("<object><name>dog</name>"):]
                              + "</annotation>", skip=False)
        assert entry is None
        return [(p.field, p.expected, p.found, p.line) for p in bad.items]

    zero = "xmax > xmin and ymax > ymin"
    assert one((10, 10, 10, 20)) == [
        ("<object> 0 <bndbox>", zero + " (a box of zero area; --skip-degenerate leaves it "
         "out)", "list [10.0, 10.0, 10.0, 20.0]", 3)]
    assert one((20, 10, 10, 20)) == [
        ("<object> 0 <bndbox>", zero, "list [20.0, 10.0, 10.0, 20.0]", 3)]
    tail = " within ±1e100 (the box's {}: a larger one overflows IoU arithmetic)"
    assert one((-6e99, 1, 5e99, 5)) == [
        ("<object> 0 <xmax>", "xmax - xmin" + tail.format("width"), "list [-6e+99, 5e+99]",
         3)]
    assert one((1, -6e99, 5, 5e99)) == [
        ("<object> 0 <ymax>", "ymax - ymin" + tail.format("height"), "list [-6e+99, 5e+99]",
         3)]


def test_size_and_file_name_problems_name_found_text_and_root_line(tmp_path: Path) -> None:
    """Problems of the image's size and file name name what was found (a side's text cut to
    20 characters, "missing" for an absent side; the file name as written) and the root
    element's line (2: after the declaration). A file name inside the benchmark's own
    ``predictions/`` folder is refused like one with ``..``. Kills ``_size`` 23, 24, 29, 31 to
    34 and ``_image`` 3 (``or`` made ``and``), 10, 11."""
    decl = '<?xml version="1.0"?>\n'
    for size, found in (("<size><width>123456789012345678901234</width><height>5</height>"
                         "</size>", "str '12345678901234567890'"),
                        ("<size><width>20</width></size>", "missing")):
        entry, bad, _ = _read(tmp_path, decl + _annotation(_obj("dog", (1, 1, 5, 5)),
                                                           size=size))
        assert entry is None
        assert [(p.found, p.line) for p in bad.items] == [(found, 2)]
    for name in ("predictions/a.png", "../a.png"):
        entry, bad, _ = _read(tmp_path, decl + _annotation(_obj("dog", (1, 1, 5, 5)),
                                                           filename=name))
        assert entry is None
        assert [(p.field, p.expected, p.found, p.line) for p in bad.items] == [
            ("(file name)", "a relative image path (no root, no ..)", f"str {name!r}", 2)]


def test_a_missing_dior_corner_names_the_rotated_box_and_key(tmp_path: Path) -> None:
    """A DIOR-R ``<robndbox>`` without ``<y_left_bottom>``: one problem naming the object's
    ``<robndbox><y_left_bottom>``, nothing else (no crash on the corner not read). Kills
    ``_voc_object`` 103, 108, 109 (the field), 111 (the box built from a missing corner)
    and 97 for roLabelImg's form (see ``test_a_bad_robndbox_number...``)."""
    rot = ("<robndbox><x_left_top>12</x_left_top><y_left_top>20</y_left_top><x_right_top>60"
           "</x_right_top><y_right_top>8</y_right_top><x_right_bottom>70</x_right_bottom>"
           "<y_right_bottom>45</y_right_bottom><x_left_bottom>22</x_left_bottom></robndbox>")
    entry, bad, _ = _read(tmp_path, _annotation(_obj("ship", None, extra=rot)))
    assert entry is None
    assert [(p.field, p.found) for p in bad.items] == [
        ("<object> 0 <robndbox><y_left_bottom>", "missing")]


# ---------------------------------------------------------------- third pass (the survivors
# of read_voc, _Reader, _image, _category and _difficult, first run in full afterwards)


def test_a_coordinate_is_read_up_to_64_characters(tmp_path: Path) -> None:
    """A number of exactly 64 characters is read (65 is refused, above): kills ``len(text)
    < 64`` (``_Reader.number`` 12)."""
    value = "0" * 63 + "7"
    assert len(value) == 64
    xml = _annotation(_obj("dog", None, extra=(
        f"<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>{value}</xmax><ymax>5</ymax></bndbox>")))
    entry, bad, _ = _read(tmp_path, xml)
    assert not bad.items
    assert [o.box for o in entry.objects] == [(1, 1, 7, 5)]


def test_a_bad_coordinate_names_its_element_line_rule_and_text(tmp_path: Path) -> None:
    """A coordinate that is no number: the problem's line is where the element holding it
    starts (the ``<bndbox>`` on line 3, not its ``<object>`` on line 2 nor the value's own
    line 4), the rule is "a finite number" (not the bound, which is for numbers beyond it),
    and the text found is shown up to its first 40 characters, whitespace collapsed.
    Kills ``_Reader.number`` 24, 29, 39 (the line dropped or of no element), 31 (the
    bound's text for a non-number), 38 (``[:41]``)."""
    junk = "abcdefghij" * 4 + "KLMNOPQRSTUVWXYZ"  # 56 characters, not a number
    xml = ("<annotation>" + SIZE + "\n<object><name>dog</name>\n<bndbox><xmin>1</xmin>"
           f"<ymin>1</ymin>\n<xmax>{junk}</xmax><ymax>5</ymax></bndbox></object>\n"
           "<object><name>dog</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>9</xmax>"
           "\n\n<ymax>1e101</ymax></bndbox></object></annotation>")
    entry, bad, _ = _read(tmp_path, xml)
    assert entry is None
    assert [(p.field, p.line, p.expected, p.found) for p in bad.items] == [
        ("<object> 0 <xmax>", 3, "a finite number", "str '" + "abcdefghij" * 4 + "'"),
        ("<object> 1 <ymax>", 5, "a finite number within ±1e100 (absolute pixels; larger "
         "ones overflow IoU arithmetic)", "str '1e101'")]


def test_a_value_is_all_its_text_whitespace_runs_made_one_space(tmp_path: Path) -> None:
    """An element's value is all of its text, the text inside a child element included
    and joined to it without anything in between (``<name>stor<i>age</i>tank</name>`` is
    ``storagetank``), and a run of whitespace is one space (a two-word class is shown
    ``two words``). Kills ``_Reader.text`` 9 (``"XX XX".join``) and 11 (``"XXXX".join``)."""
    xml = _annotation("<object><name>stor<i>age</i>tank</name><difficult>0</difficult>"
                      "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax>"
                      "</bndbox></object>")
    entry, bad, _ = _read(tmp_path, xml)
    assert not bad.items
    assert [o.category for o in entry.objects] == ["storagetank"]
    entry, bad, _ = _read(tmp_path, _annotation(_obj("two \n\t words", (1, 1, 5, 5))),
                          name="b.xml")
    assert entry is None
    assert [(p.field, p.found) for p in bad.items] == [("<object> 0 <name>",
                                                        "str 'two words'")]


def test_a_zero_area_box_is_a_problem_when_no_degenerate_is_given(tmp_path: Path) -> None:
    """``read_voc`` without a ``Degenerate`` refuses a box of zero area (the spec's rule;
    leaving it out is the opt-in ``--skip-degenerate``). Kills ``read_voc`` 4
    (``Degenerate(True)`` as the default)."""
    path = tmp_path / "a.xml"
    path.write_text(_annotation(_obj("dog", (3, 1, 3, 5)), _obj("dog", (1, 1, 5, 5))))
    bad = Problems()
    assert read_voc(path, {}, None, {}, bad) is None
    assert [(p.field, p.expected) for p in bad.items] == [
        ("<object> 0 <bndbox>", "xmax > xmin and ymax > ymin (a box of zero area; "
         "--skip-degenerate leaves it out)")]


def test_an_unreadable_xml_file_is_one_problem_naming_the_file_kind(tmp_path: Path) -> None:
    """A file that cannot be read is one problem: the file, ``(file)``, "a readable VOC /
    HRSC2016 XML file" and the system's reason; what was in ``bad`` before stays. Kills
    ``read_voc`` 38, 41-43 (the kind's text) and 44 (the problems not added)."""
    bad = Problems()
    bad.add(tmp_path / "other.xml", "(root)", "x", "<y>")
    missing = tmp_path / "none.xml"
    assert read_voc(missing, {}, None, {}, bad) is None
    assert [(p.file, p.field, p.expected, p.found) for p in bad.items] == [
        (str(tmp_path / "other.xml"), "(root)", "x", "y"),
        (str(missing), "(file)", "a readable VOC / HRSC2016 XML file",
         "No such file or directory")]


def test_a_doctype_is_one_problem_saying_what_and_where(tmp_path: Path) -> None:
    """A DOCTYPE where XML allows none is malformed: one problem on the document naming
    expat's reason and the line (2); before the root, it is refused: "XML without DOCTYPE
    or entities" expected, the refusal (with its line, 3) found; the problems of other
    files are kept. Kills ``read_voc`` 48 (the refusal's text not shown), 55 (the expected
    text), 62 and 67 (the malformed document's line dropped)."""
    bad = Problems()
    bad.add(tmp_path / "other.xml", "(root)", "x", "<y>")
    path = tmp_path / "a.xml"
    path.write_text("<annotation>\n<!DOCTYPE a>\n</annotation>")
    assert read_voc(path, {}, None, {}, bad) is None
    path.write_text('<?xml version="1.0"?>\n\n<!DOCTYPE a>\n<annotation/>')
    assert read_voc(path, {}, None, {}, bad) is None
    assert [(p.field, p.expected, p.found, p.line) for p in bad.items[1:]] == [
        ("(document)", "well-formed XML", "not well-formed (invalid token)", 2),
        ("(document)", "XML without DOCTYPE or entities",
         "a DOCTYPE at line 3 (DTDs and entities are not accepted)", None)]
    assert bad.items[0].field == "(root)"


def test_hrsc_file_name_needs_both_parts_else_the_name_or_the_stem(tmp_path: Path) -> None:
    """HRSC2016's image is ``<Img_FileName>.<Img_FileFmt>`` when both are given; with no
    format it is the bare name; with no name it is the XML's stem with ``.jpg`` (the format
    alone names nothing). Kills ``read_voc`` 134 (``or True``: ``1001.None``,
    ``None.png``) and 135 (``name or fmt``)."""
    obj = _hrsc_object("ship", (48, 43, 92, 77), (70.0, 60.0, 40.0, 16.0, A30))
    no_fmt = _hrsc(obj, name="1001").replace("<Img_FileFmt>bmp</Img_FileFmt>", "")
    no_name = _hrsc(obj, fmt="png").replace("<Img_FileName>100000001</Img_FileName>", "")
    names = []
    for k, xml in enumerate((no_fmt, no_name)):
        entry, bad, _ = _read(tmp_path, xml, name=f"h{k}.xml")
        assert not bad.items
        names.append(entry.name)
    assert names == ["1001", "h1.jpg"]


def test_an_unknown_root_names_its_tag_cut_to_40_and_its_line(tmp_path: Path) -> None:
    """A document whose root is neither ``<annotation>`` nor ``<HRSC_Image>``: one problem
    naming what is expected, the root's tag as ``<tag>`` cut to 40 characters, and the
    root's line (3: after the declaration and a comment). Kills ``read_voc`` 154 (nothing
    found), 155, 160, 167 (the line), 163 (the expected text), 166 (``[:41]``)."""
    tag = "Annotation_of_a_very_long_root_element_name_x"  # 45 characters
    entry, bad, _ = _read(tmp_path, f'<?xml version="1.0"?>\n<!-- c -->\n<{tag}><filename>a.jpg'
                                    f"</filename></{tag}>")
    assert entry is None
    assert [(p.field, p.expected, p.found, p.line) for p in bad.items] == [
        ("(root)", "an <annotation> (VOC, DIOR) or <HRSC_Image> (HRSC2016) root",
         "<Annotation_of_a_very_long_root_element_n>", 3)]


def test_no_image_and_no_size_without_images_folder_says_so(tmp_path: Path) -> None:
    """No images folder and no size in the XML: the problem says no ``--images`` was given,
    found "neither", on the root's line (2). Kills ``read_voc`` 195 (``in None``), 197, 198,
    211, 212 (the text), 202, 214, 215 (found), 203, 208, 216 (the line)."""
    entry, bad, _ = _read(tmp_path, '<?xml version="1.0"?>\n' + _annotation(
        _obj("dog", (1, 1, 5, 5)), filename="x.png", size=""))
    assert entry is None
    assert [(p.field, p.expected, p.found, p.line) for p in bad.items] == [
        ("(size)", "the image x.png (no --images given), or the XML's size (<size> or "
         "<Img_SizeWidth>/<Img_SizeHeight>) to convert it numbers-only", "neither", 2)]


def test_a_found_image_that_cannot_be_read_is_a_problem_of_the_image(tmp_path: Path
                                                                     ) -> None:
    """An image file found for the XML but unreadable (not an image): one problem naming
    the image file (not the XML), ``(image)``, "a readable image" and the reader's reason.
    Kills ``read_voc`` 232 to 243 (the file, field, expected or found dropped or changed)
    and 244 (``strerror and err``: "None" for an error without a system reason)."""
    images = tmp_path / "img"
    images.mkdir()
    (images / "p.png").write_bytes(b"not a png")
    path = tmp_path / "p.xml"
    path.write_text(_annotation(_obj("dog", (1, 1, 5, 5)), filename="p.png"))
    bad = Problems()
    assert read_voc(path, {"p": images / "p.png"}, images, {}, bad) is None
    assert [(p.file, p.field, p.expected, p.line) for p in bad.items] == [
        (str(images / "p.png"), "(image)", "a readable image", None)]
    assert bad.items[0].found.startswith("not an image Pillow can read (cannot identify")


def test_a_found_image_of_another_size_is_a_problem_of_the_xml(tmp_path: Path) -> None:
    """An image found whose size is not the XML's ``<size>``: the problem is the XML's (on
    its root's line, 2), naming the image's own size and the XML's. Kills ``read_voc`` 248
    (no file), 252, 257, 262 (the line)."""
    from convert_helpers import blank_images

    images = blank_images(tmp_path / "img", {"p.png": (30, 20)})
    path = tmp_path / "p.xml"
    path.write_text('<?xml version="1.0"?>\n'
                    + _annotation(_obj("dog", (1, 1, 5, 5)), filename="p.png"))
    bad = Problems()
    assert read_voc(path, {"p": images / "p.png"}, images, {}, bad) is None
    assert [(p.file, p.field, p.expected, p.found, p.line) for p in bad.items] == [
        (str(path), "(size)", "the size of p.png: 30 x 20", "200 x 150", 2)]


def test_class_name_problems_name_file_text_cut_to_40_and_object_line(tmp_path: Path
                                                                      ) -> None:
    """A class name with a space, a missing one, and one not in the classes file: each
    problem names the XML file, the text found (cut to its first 40 characters; "missing"
    for no name) and the line where its ``<object>`` starts (3, 5, 8). Kills ``_category``
    10, 29 (no file), 13 (nothing found), 14, 19, 26, 33, 38, 42 (the line), 23, 24 (the
    "missing" text), 25, 41 (``[:41]``)."""
    long_pair = "a" * 38 + " bcdef"  # 44 characters, a space at 39
    long_one = "c" * 45
    xml = ('<?xml version="1.0"?>\n<annotation>' + SIZE + "\n" + _obj(long_pair, (1, 1, 5, 5))
           + "\n\n<object><difficult>0</difficult>\n<bndbox><xmin>1</xmin><ymin>1</ymin>"
           "<xmax>5</xmax><ymax>5</ymax></bndbox></object>\n\n"
           + _obj(long_one, (1, 1, 5, 5)) + "</annotation>")
    entry, bad, _ = _read(tmp_path, xml, class_ids={"dog": "dog"})
    assert entry is None
    assert [(p.file, p.field, p.expected, p.found, p.line) for p in bad.items] == [
        (str(tmp_path / "a.xml"), "<object> 0 <name>", "a class name without spaces",
         "str '" + "a" * 38 + " b'", 3),
        (str(tmp_path / "a.xml"), "<object> 1 <name>", "a class name without spaces",
         "missing", 5),
        (str(tmp_path / "a.xml"), "<object> 2 <name>", "a class of the --classes file",
         "str '" + "c" * 40 + "'", 8)]


def test_a_bad_difficult_shows_its_first_20_characters(tmp_path: Path) -> None:
    """``<difficult>`` neither 0 nor 1: the text found is its first 20 characters. Kills
    ``_difficult`` 23 (``[:21]``)."""
    entry, bad, _ = _read(tmp_path, _annotation(_obj("dog", (1, 1, 5, 5),
                                                     difficult="0123456789abcdefghijKLM")))
    assert entry is None
    assert [(p.field, p.found) for p in bad.items] == [
        ("<object> 0 <difficult>", "str '0123456789abcdefghij'")]


def test_a_refused_file_name_in_angle_brackets_is_shown_as_text(tmp_path: Path) -> None:
    """A refused ``<filename>`` is shown as the text written, a string cut to its first 60
    characters, even when it is written like a note in angle brackets: a 61-character
    ``<a/../../...>`` name is shown quoted from its ``<`` (``errors.describe`` takes a text
    wrapped in ``<...>`` as a note of ours and unwraps it, which a cut at 61 would let
    through). Kills ``_image`` 21 (``filename[:61]``)."""
    name = "<a/../../" + "x" * 51 + ">"
    assert len(name) == 61
    written = name.replace("<", "&lt;").replace(">", "&gt;")
    entry, bad, _ = _read(tmp_path, _annotation(_obj("dog", (1, 1, 5, 5)), filename=written))
    assert entry is None
    assert [(p.field, p.found) for p in bad.items] == [
        ("(file name)", "str " + repr(name[:60])[:57] + "...")]
