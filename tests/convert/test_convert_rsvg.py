"""from-rsvg: the sample XML into referring queries and a submission, the XML reader (DTDs and
entities refused, problems with line numbers) and hypothesis properties of the parser."""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from convert_helpers import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core import evaluate_files
from ovearth_core.convert import from_rsvg
from ovearth_core.convert.common import Problems
from ovearth_core.convert.rsvg import read_annotation
from ovearth_core.convert.xmlread import XmlMalformed, XmlRefused, read_xml

SAMPLE = DATA / "rsvg"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rsvg") / "bench"
    from_rsvg(SAMPLE / "Annotations", SAMPLE / "JPEGImages", out, [SAMPLE / "predictions.json"])
    return out


def test_objects_become_referring_queries(bench: Path) -> None:
    gt = json.loads((bench / "ground_truth.json").read_text())
    assert gt["tasks"] == {"referring": [
        {"query_id": "ref_00001_0", "ann_id": "00001_0",
         "query": "the vehicle in the upper left corner"},
        {"query_id": "ref_00001_1", "ann_id": "00001_1",
         "query": "the large storage tank on the right"},
        {"query_id": "ref_00002_0", "ann_id": "00002_0",
         "query": "the bridge over the river & the road"}]}
    anns = {a["id"]: a for a in gt["annotations"]}
    assert anns["00001_0"]["bbox"] == [[4, 6, 16, 12]]  # continuous: xmax - xmin, no + 1
    assert anns["00002_0"]["bbox"] == [[2.5, 10, 35.5, 6]]
    assert (anns["00002_0"]["image_path"], anns["00002_0"]["width"]) == ("images/00002.jpg", 40)
    assert anns["00001_1"]["category_name"] == "storagetank"


def test_predictions_evaluate_as_worked_by_hand(bench: Path) -> None:
    s = evaluate_files(bench / "ground_truth.json", bench / "predictions" / "predictions.json",
                       ["referring"], modalities="bbox")["referring"]["summary"]["bbox"]
    # Exact vehicle box; tank box shifted by 5 px: IoU 300 / 500 = 0.6; bridge not predicted.
    assert (s["tp"], s["fp"], s["fn"]) == (2, 0, 1)
    assert s["positive_micro_matched_iou"] == pytest.approx((1 + 0.6) / 2)


@pytest.mark.parametrize("xml", [
    b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "yyyy">]><annotation>&x;</annotation>',
    b'<!DOCTYPE annotation SYSTEM "http://example.com/a.dtd"><annotation/>',
    b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><a/>',
    '<?xml version="1.0" encoding="utf-16"?><!DOCTYPE a><annotation/>'.encode("utf-16"),
])
def test_doctype_and_entities_are_refused(xml: bytes) -> None:
    with pytest.raises(XmlRefused):
        read_xml(xml)


def _read(tmp_path: Path, xml: str) -> tuple[object, Problems]:
    (tmp_path / "a.xml").write_text(xml, encoding="utf-8")
    (tmp_path / "a.jpg").write_bytes((SAMPLE / "JPEGImages" / "00002.jpg").read_bytes())
    bad = Problems()
    return read_annotation(tmp_path / "a.xml", {"a": tmp_path / "a.jpg"}, tmp_path, bad), bad


OBJ = ("<object><name>ship</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>9</xmax>"
       "<ymax>8</ymax></bndbox><description>a ship</description></object>")


@pytest.mark.parametrize(("xml", "line", "field", "expected"), [
    ("<annotation>\n<object>", 2, "(document)", "well-formed XML"),
    ("<annot/>", 1, "<annotation>", "an <annotation> root"),
    ("<annotation>\n</annotation>", 1, "<object>", "at least one <object>"),
    ("<annotation>" + OBJ.replace("<name>ship</name>", "") + "</annotation>", 1,
     "<object> 0 <name>", "a non-empty category name"),
    ("<annotation>\n" + OBJ + "\n</annotation", 3, "(document)", "well-formed XML"),
    ("<annotation>\n\n" + OBJ.replace("<description>a ship</description>", "") +
     "</annotation>", 3, "<object> 0 <description>", "a non-empty referring expression"),
    ("<annotation>" + OBJ.replace("<xmax>9</xmax>", "<xmax>1</xmax>") + "</annotation>", 1,
     "<object> 0 <bndbox>", "xmax > xmin"),
    ("<annotation>" + OBJ.replace("<ymin>2</ymin>", "<ymin>two</ymin>") + "</annotation>", 1,
     "<object> 0 <bndbox><ymin>", "a finite number"),
    ("<annotation>" + OBJ.replace("<bndbox>", "<box>").replace("</bndbox>", "</box>") +
     "</annotation>", 1, "<object> 0 <bndbox>", "<xmin> <ymin> <xmax> <ymax>"),
    ("<annotation><filename>../x.jpg</filename>" + OBJ + "</annotation>", 1, "<filename>",
     "a relative image path"),
    ("<annotation>\n<size><width>41</width><height>40</height></size>" + OBJ +
     "</annotation>", 2, "<size>", "the size of a.jpg: 40 x 40"),
    ("<annotation><size><width>-1</width></size>" + OBJ + "</annotation>", 1,
     "<size><width>", "a whole number of pixels"),
])
def test_xml_problems(tmp_path: Path, xml: str, line: int, field: str, expected: str) -> None:
    entry, bad = _read(tmp_path, xml)
    assert entry is None
    p = bad.items[0]
    assert (p.file, p.line, p.field) == (str(tmp_path / "a.xml"), line, field)
    assert expected in p.expected and p.found


texts = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30
                ).filter(lambda s: s.strip())
coords = st.floats(0, 1000, allow_nan=False).map(lambda v: round(v, 2))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(texts, texts, coords, coords, st.floats(0.5, 200),
                          st.floats(0.5, 200)), min_size=1, max_size=6),
       st.booleans())
def test_xml_round_trip(tmp_path_factory: pytest.TempPathFactory,
                        objs: list[tuple[str, str, float, float, float, float]],
                        pretty: bool) -> None:
    """Whatever names, descriptions (escaped) and boxes are written, they are read back;
    whitespace inside a text is collapsed to single spaces."""
    sep = "\n  " if pretty else ""
    body = "".join(
        f"{sep}<object><name>{escape(n)}</name><bndbox><xmin>{x}</xmin><ymin>{y}</ymin>"
        f"<xmax>{x + w}</xmax><ymax>{y + h}</ymax></bndbox>"
        f"<description>{escape(d)}</description></object>" for n, d, x, y, w, h in objs)
    entry, bad = _read(tmp_path_factory.mktemp("x"), f"<annotation>{body}\n</annotation>")
    assert not bad.items and entry is not None
    assert [(o.category, o.description) for o in entry.objects] == [
        (" ".join(n.split()), " ".join(d.split())) for n, d, *_ in objs]
    assert [o.box for o in entry.objects] == [(x, y, x + w, y + h) for *_, x, y, w, h in objs]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_xml_reader_never_crashes(data: bytes) -> None:
    """Any bytes: a tree, XmlRefused or XmlMalformed, nothing else."""
    try:
        read_xml(b"<annotation>" + data)
    except (XmlRefused, XmlMalformed):
        pass
