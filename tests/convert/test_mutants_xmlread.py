"""Rules of the XML reader ``ovearth_core/convert/xmlread.py`` that mutation testing found
unpinned (issue 47): each element's start line, which elements are units (the path below
the root, by root tag), units handed over once complete and dropped with their line
numbers, attributes and text kept, and what is refused (with the line) or malformed. Called
in-process; every expected line is counted by hand in the XML written here."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.parsers.expat import errors as expat_errors

import pytest
from defusedxml import (
    DefusedXmlException,
    DTDForbidden,
    EntitiesForbidden,
    ExternalReferenceForbidden,
)

from ovearth_core.convert import xmlread
from ovearth_core.convert.xmlread import XmlMalformed, XmlRefused, read_xml

UNITS = {"annotation": ("object",), "HRSC_Image": ("HRSC_Objects", "HRSC_Object")}


def _collect(data: bytes, units=UNITS):
    seen: list[tuple[str, int, list[tuple[str, int]], int]] = []

    def on_unit(elem: ET.Element, line) -> None:
        seen.append((elem.findtext("name") or elem.findtext("Class_ID") or "",
                     line(elem), [(e.tag, line(e)) for e in elem.iter()], len(elem)))

    root, line = read_xml(data, units, on_unit)
    return root, line, seen


def test_each_element_keeps_its_start_line() -> None:
    """Lines counted by hand: the root on line 2 (after the declaration), <size> on 3, its
    <width> on 4, an element spanning lines 5-7 keeps 5; an element not of this tree is
    line 1."""
    data = (b'<?xml version="1.0"?>\n<annotation>\n<size>\n<width>9</width></size>\n'
            b"<filename>\na.jpg\n</filename>\n</annotation>\n")
    root, line, seen = _collect(data)
    assert seen == []
    assert [(e.tag, line(e)) for e in root.iter()] == [
        ("annotation", 2), ("size", 3), ("width", 4), ("filename", 5)]
    assert line(None) == 1 and line(ET.Element("other")) == 1
    assert root.find("size/width").text == "9"
    assert root.findtext("filename").strip() == "a.jpg"


def test_units_are_handed_over_complete_then_dropped() -> None:
    """Three <object>s on lines 3, 4-6 and 7: each handed over complete (its children and
    their lines), in order, then removed from the root and from the line table, so the
    memory holds one at a time; the rest of the tree stays."""
    data = (b"<annotation>\n<filename>a.jpg</filename>\n"
            b"<object><name>dog</name><bndbox><xmin>1</xmin></bndbox></object>\n"
            b"<object>\n<name>cat</name>\n</object>\n"
            b"<object><name>cow</name></object>\n</annotation>")
    root, line, seen = _collect(data)
    assert seen == [
        ("dog", 3, [("object", 3), ("name", 3), ("bndbox", 3), ("xmin", 3)], 2),
        ("cat", 4, [("object", 4), ("name", 5)], 1),
        ("cow", 7, [("object", 7), ("name", 7)], 1)]
    assert [e.tag for e in root] == ["filename"]
    assert line(root.find("filename")) == 2
    # only the root and <filename> are left in the line table
    assert len(line.__self__.lines) == 2


def test_a_unit_is_only_at_its_path_below_its_root() -> None:
    """An <object> nested deeper than the root's child, an <HRSC_Object> outside
    <HRSC_Objects>, or units of another root's table are not units (they stay in the tree);
    HRSC's units are the <HRSC_Object>s directly in <HRSC_Objects> directly in the root."""
    data = (b"<annotation><part><object><name>deep</name></object></part>"
            b"<object><name>top</name></object></annotation>")
    root, _, seen = _collect(data)
    assert [s[0] for s in seen] == ["top"]
    assert root.find("part/object/name").text == "deep"
    data = (b"<HRSC_Image>\n<HRSC_Object><Class_ID>loose</Class_ID></HRSC_Object>\n"
            b"<HRSC_Objects>\n<HRSC_Object><Class_ID>1</Class_ID></HRSC_Object>\n"
            b"<HRSC_Object><Class_ID>2</Class_ID></HRSC_Object>\n"
            b"<x><HRSC_Object><Class_ID>nested</Class_ID></HRSC_Object></x>\n"
            b"</HRSC_Objects>\n<other><HRSC_Objects><HRSC_Object><Class_ID>3</Class_ID>"
            b"</HRSC_Object></HRSC_Objects></other>\n"
            b"<Objects><HRSC_Object><Class_ID>4</Class_ID></HRSC_Object></Objects></HRSC_Image>")
    root, line, seen = _collect(data)
    assert [(s[0], s[1]) for s in seen] == [("1", 4), ("2", 5)]
    assert [e.findtext("Class_ID") for e in root.iter("HRSC_Object")] == ["loose", "nested",
                                                                          "3", "4"]
    assert line(root.find("HRSC_Objects")) == 3
    # a root of another name has no units: VOC's <object> in an <HRSC_Image> stays
    root, _, seen = _collect(b"<HRSC_Image><object><name>x</name></object></HRSC_Image>")
    assert seen == [] and root.find("object/name").text == "x"
    # and a root whose own tag is a unit's is not one
    root, _, seen = _collect(b"<object><name>x</name></object>", {"object": ("object",)})
    assert seen == [] and root.tag == "object"


def test_without_units_nothing_is_handed_over_or_dropped() -> None:
    root, line = read_xml(b"<annotation>\n<object><name>a</name></object></annotation>")
    assert root.find("object/name").text == "a" and line(root.find("object")) == 2


def test_attributes_and_the_declared_encoding_are_kept() -> None:
    data = ('<?xml version="1.0" encoding="ISO-8859-1"?>\n<annotation verified="yes">'
            '<object kind="r\u00e9el"><name>caf\u00e9</name></object></annotation>'
            ).encode("latin-1")
    root, _, seen = _collect(data, {})
    assert root.attrib == {"verified": "yes"}
    assert root.find("object").attrib == {"kind": "r\u00e9el"}
    assert root.findtext("object/name") == "caf\u00e9"
    root, _ = read_xml(b"<a/>")
    assert root.attrib == {}


@pytest.mark.parametrize(("data", "line"), [
    (b"\n\n<!DOCTYPE annotation>\n<annotation/>", 3),
    (b'<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY x "y">]>\n<a>&x;</a>', 2),
    (b'<!DOCTYPE annotation SYSTEM "http://127.0.0.1:9/a.dtd">\n<annotation/>', 1),
])
def test_a_doctype_is_refused_with_its_line(data: bytes, line: int) -> None:
    with pytest.raises(XmlRefused) as err:
        read_xml(data)
    assert str(err.value) == (f"a DOCTYPE at line {line} (DTDs and entities are not "
                              "accepted)")


@pytest.mark.parametrize(("error", "text"), [
    (EntitiesForbidden("x", "y", None, None, None, None), "an entity declaration"),
    (ExternalReferenceForbidden(None, None, "file:///etc/passwd", None),
     "ExternalReferenceForbidden"),
    (DefusedXmlException("other"), "DefusedXmlException"),
])
def test_whatever_defusedxml_refuses_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                error: Exception, text: str) -> None:
    """defusedxml's other refusals (behind the DOCTYPE one, which comes first in a
    document) are refusals too, never a crash or a parse result: the parser is made to
    raise each after reading two lines."""
    def refusing(data, handler, **kwargs):
        assert kwargs == {"forbid_dtd": True, "forbid_entities": True,
                          "forbid_external": True}

        class Locator:
            def getLineNumber(self) -> int:  # noqa: N802
                return 2

        handler.setDocumentLocator(Locator())
        raise error

    monkeypatch.setattr(xmlread, "parseString", refusing)
    with pytest.raises(XmlRefused) as err:
        read_xml(b"<a/>")
    assert str(err.value) == f"{text} at line 2 (DTDs and entities are not accepted)"


@pytest.mark.parametrize(("data", "line", "why"), [
    (b"<annotation>\n<object>\n</annotation>", 3, expat_errors.XML_ERROR_TAG_MISMATCH),
    (b"<annotation>\n\n\n<a></b></annotation>", 4, expat_errors.XML_ERROR_TAG_MISMATCH),
    (b"", 1, expat_errors.XML_ERROR_NO_ELEMENTS),
    (b"<a/>\n<b/>", 2, expat_errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT),
])
def test_malformed_xml_says_where_and_why(data: bytes, line: int, why: str) -> None:
    """The line, and expat's reason as its own table words it (``xml.parsers.expat.errors``:
    "mismatched tag", "no element found", "junk after document element"). Kills
    ``XmlMalformed.__init__`` 1 and ``read_xml`` 32 (the message dropped: "None")."""
    with pytest.raises(XmlMalformed) as err:
        read_xml(data)
    assert err.value.line == line
    assert str(err.value) == why


def test_text_between_elements_and_tails_are_kept() -> None:
    root, _ = read_xml(b"<a>head<b>in</b>tail</a>")
    assert (root.text, root.find("b").text, root.find("b").tail) == ("head", "in", "tail")


def test_an_object_inside_an_object_is_part_of_it_not_a_unit() -> None:
    """Only an <object> at exactly the unit's depth is a unit: one nested in another stays
    inside the outer one (kills ``len(path) >= len(unit)``)."""
    root, _, seen = _collect(b"<annotation><object><name>outer</name><object><name>inner"
                             b"</name></object></object></annotation>")
    assert [(s[0], [tag for tag, _ in s[2]]) for s in seen] == [
        ("outer", ["object", "name", "object", "name"])]


def test_a_refusal_before_the_parser_has_a_locator_is_at_line_1(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal raised before the parser has given its locator (nothing read yet) is at
    line 1, the document's first, never a crash on the missing locator. Kills
    ``_Builder.here`` 2 (the locator used when there is none), 4 (line 2) and
    ``_Builder.__init__`` 8 (the locator starting as ``""``, not ``None``)."""
    def refusing(data, handler, **kwargs):
        raise DTDForbidden("a", None, None)

    monkeypatch.setattr(xmlread, "parseString", refusing)
    with pytest.raises(XmlRefused) as err:
        read_xml(b"<a/>")
    assert str(err.value) == "a DOCTYPE at line 1 (DTDs and entities are not accepted)"


def test_a_parse_error_without_a_line_is_at_line_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parse error that carries no line (expat's count starts at 1, but a SAX parser may
    report none) is placed on the document's first line. Kills ``read_xml`` 37 (``or 2``),
    which the first run counted killed by a timeout only."""
    from xml.sax import SAXParseException

    class NoLine:
        def getLineNumber(self) -> None:  # noqa: N802
            return None

        def getColumnNumber(self) -> None:  # noqa: N802
            return None

        def getSystemId(self) -> None:  # noqa: N802
            return None

        def getPublicId(self) -> None:  # noqa: N802
            return None

    def failing(data, handler, **kwargs):
        raise SAXParseException("broken", None, NoLine())

    monkeypatch.setattr(xmlread, "parseString", failing)
    with pytest.raises(XmlMalformed) as err:
        read_xml(b"<a/>")
    assert (str(err.value), err.value.line) == ("broken", 1)
