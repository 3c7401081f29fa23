"""XML of the VOC-style converters (``from-voc``, ``from-rsvg``), read safely and incrementally.

Every XML document goes through defusedxml's SAX parser (expat underneath) with DTDs, entity
declarations and external references forbidden: a ``<!DOCTYPE>`` is refused before anything
in it is read, so no entity is expanded and no external resource is fetched
(:class:`XmlRefused`). The document is fed to it in 64 KiB pieces and built into an
``xml.etree`` tree as it comes, each element's start line kept beside it (the locator's line:
problems name the file, the line and the field). A *unit* element (a VOC ``<object>``, an
``<HRSC_Object>``) is handed to the caller as soon as it is complete and then removed from
the tree with its line numbers, so memory holds one unit at a time whatever the number of
objects; without this a 50 MB annotation took 2.4 GB (benchmarks/README.md, "Issue 48: the
XML readers").
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from xml.sax import SAXParseException
from xml.sax.handler import ContentHandler
from xml.sax.xmlreader import Locator

from defusedxml import DefusedXmlException, DTDForbidden, EntitiesForbidden
from defusedxml.sax import parseString

LineOf = Callable[[ET.Element | None], int]
OnUnit = Callable[[ET.Element, LineOf], None]


class XmlRefused(ValueError):
    """A construct that is not read: a DOCTYPE, an entity declaration, an external entity."""


class XmlMalformed(ValueError):
    """XML that is not well-formed; ``line`` says where."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class _Builder(ContentHandler):
    """Builds the tree; hands each complete unit to ``on_unit`` and drops it."""

    def __init__(self, units: Mapping[str, tuple[str, ...]], on_unit: OnUnit) -> None:
        super().__init__()
        self.tree = ET.TreeBuilder()
        self.characters = self.tree.data  # type: ignore[method-assign]  # the hot path
        self.lines: dict[int, int] = {}
        self.path: list[ET.Element] = []
        self.units = units
        self.on_unit = on_unit
        self.unit: tuple[str, ...] = ()
        self.locator: Locator | None = None

    def setDocumentLocator(self, locator: Locator) -> None:  # noqa: N802 (SAX's name)
        self.locator = locator

    def here(self) -> int:
        return self.locator.getLineNumber() if self.locator is not None else 1

    def line(self, elem: ET.Element | None) -> int:
        return self.lines.get(id(elem), 1)

    def startElement(self, name: str, attrs: Mapping[str, str]) -> None:  # noqa: N802
        elem = self.tree.start(name, dict(attrs) if len(attrs) else {})
        self.lines[id(elem)] = self.here()
        if not self.path:
            self.unit = self.units.get(name, ())
        self.path.append(elem)

    def endElement(self, name: str) -> None:  # noqa: N802
        elem = self.tree.end(name)
        path = self.path
        path.pop()
        unit = self.unit
        if (unit and name == unit[-1] and len(path) == len(unit)
                and all(e.tag == tag for e, tag in zip(path[1:], unit, strict=False))):
            self.on_unit(elem, self.line)
            path[-1].remove(elem)
            for done in elem.iter():
                self.lines.pop(id(done), None)


def read_xml(data: bytes, units: Mapping[str, tuple[str, ...]] | None = None,
             on_unit: OnUnit | None = None) -> tuple[ET.Element, LineOf]:
    """Parse ``data``: the root (units removed) and the start line of each element kept.

    Args:
        data: the document's bytes (its declared encoding is honoured).
        units: by root tag, the path below the root of the unit elements (``{"annotation":
            ("object",)}``): each is given to ``on_unit`` with the line function once
            complete, then removed from the tree.
        on_unit: what to do with a unit (its problems are the caller's).

    Raises:
        XmlRefused: a DOCTYPE, an entity declaration or an external entity (with its line).
        XmlMalformed: malformed XML.
    """
    builder = _Builder(units or {}, on_unit or (lambda elem, line: None))
    try:
        parseString(data, builder, forbid_dtd=True, forbid_entities=True,
                    forbid_external=True)
    except DTDForbidden:
        raise XmlRefused(f"a DOCTYPE at line {builder.here()} (DTDs and entities are not "
                         "accepted)") from None
    except EntitiesForbidden:
        raise XmlRefused(f"an entity declaration at line {builder.here()} (DTDs and entities "
                         "are not accepted)") from None
    except DefusedXmlException as err:
        raise XmlRefused(f"{type(err).__name__} at line {builder.here()} (DTDs and entities "
                         "are not accepted)") from None
    except SAXParseException as err:
        raise XmlMalformed(err.getMessage(), err.getLineNumber() or 1) from None
    root = builder.tree.close()
    return root, builder.line

