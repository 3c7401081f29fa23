"""The XML readers of ``from-voc`` and ``from-rsvg`` (issues 47 and 48): defusedxml for every
read (DOCTYPE, entities and external references refused: exit 2, nothing written) and an
incremental parse whose memory does not grow with the tree (each ``<object>`` dropped once
read)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from convert_helpers import run_cli

from ovearth_core.convert.common import Problems
from ovearth_core.convert.rsvg import read_annotation
from ovearth_core.convert.voc import read_voc

_OBJECT = ("  <object>\n    <name>{name}</name>\n    <pose>Unspecified</pose>\n"
           "    <truncated>0</truncated>\n    <difficult>0</difficult>\n    <bndbox>\n"
           "      <xmin>{x}</xmin>\n      <ymin>{y}</ymin>\n      <xmax>{x2}</xmax>\n"
           "      <ymax>{y2}</ymax>\n    </bndbox>\n    <description>a {name}</description>\n"
           "  </object>\n")


def _big_xml(path: Path, n: int) -> int:
    """A VOC annotation with ``n`` objects (both readers accept it); its size in bytes."""
    body = "".join(_OBJECT.format(name=("ship", "car")[k % 2], x=k % 900, y=k % 700,
                                  x2=k % 900 + 20, y2=k % 700 + 10) for k in range(n))
    path.write_text("<annotation>\n  <filename>a.jpg</filename>\n  <size><width>1000</width>"
                    f"<height>800</height></size>\n{body}</annotation>\n")
    return path.stat().st_size


@pytest.mark.parametrize("reader", ["voc", "rsvg"])
def test_memory_does_not_grow_with_the_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            reader: str) -> None:
    """A 1.7 MB file: the peak of traced memory beyond the bounded read's buffer (the input
    cap, 2 MiB here) stays under twice the file's size (its bytes, and the objects read).
    The whole tree with a line number per element took about 13 times the file's size
    (benchmarks/README.md, "Issue 48: the XML readers")."""
    monkeypatch.setenv("OVEARTH_MAX_INPUT_MB", "2")
    path = tmp_path / "a.xml"
    size = _big_xml(path, 6_000)
    assert 1_500_000 < size < 2_000_000
    bad = Problems()
    tracemalloc.start()
    try:
        entry = (read_voc(path, {}, None, {}, bad) if reader == "voc"
                 else read_annotation(path, {}, None, bad))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not bad.items and entry is not None and len(entry.objects) == 6_000
    assert peak - 2 * 2**20 < 2 * size, f"{peak / 1e6:.1f} MB traced for a {size / 1e6:.1f} MB file"


_HOSTILE = {
    "billion laughs": '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
                      + "".join(f'<!ENTITY lol{k} "{("&lol" + str(k - 1) + ";") * 10}">'
                                .replace("&lol0;", "&lol;") for k in range(1, 10))
                      + ']>\n<annotation><filename>&lol9;</filename></annotation>',
    "external entity": '<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY x SYSTEM '
                       '"file:///etc/passwd">]>\n<annotation><filename>&x;</filename>'
                       '</annotation>',
    "parameter entity": '<?xml version="1.0"?>\n<!DOCTYPE a [<!ENTITY % p SYSTEM '
                        '"http://127.0.0.1:9/x.dtd"> %p;]>\n<annotation/>',
    "external DTD": '<!DOCTYPE annotation SYSTEM "http://127.0.0.1:9/a.dtd">\n<annotation/>',
    "bare DOCTYPE": "\n\n<!DOCTYPE annotation>\n<annotation/>",
}


@pytest.mark.parametrize("command", ["from-voc", "from-rsvg"])
@pytest.mark.parametrize("kind", sorted(_HOSTILE))
def test_hostile_xml_is_refused_exit_2_nothing_written(tmp_path: Path, command: str,
                                                        kind: str) -> None:
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "good.xml").write_text(
        "<annotation><size><width>10</width><height>5</height></size>"
        + _OBJECT.format(name="ship", x=1, y=1, x2=5, y2=4) + "</annotation>")
    (ann / "evil.xml").write_text(_HOSTILE[kind])
    proc = run_cli(command, "--annotations", str(ann), "--out", str(tmp_path / "b"), "--quiet")
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "evil.xml" in proc.stderr and "XML without DOCTYPE or entities" in proc.stderr
    line = 3 if kind == "bare DOCTYPE" else (1 if kind == "external DTD" else 2)
    assert f"a DOCTYPE at line {line}" in proc.stderr, proc.stderr
    assert "root:" not in proc.stderr  # /etc/passwd was not read into the message
    assert not (tmp_path / "b").exists()


def test_every_xml_read_goes_through_defusedxml() -> None:
    """No module of the package parses XML but ``convert/xmlread.py``, and that one parses
    with defusedxml (a new reader elsewhere would bypass it)."""
    import ast

    root = Path(__file__).resolve().parents[2] / "ovearth_core"
    raw = ("xml.parsers", "xml.sax", "xml.dom", "lxml", "pyexpat")
    parsers = {"parse", "fromstring", "iterparse", "XML", "XMLParser", "XMLPullParser",
               "fromstringlist", "XMLID", "parseString"}
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if rel != "convert/xmlread.py" and any(n.startswith(raw) for n in names):
                found.append(f"{rel}:{node.lineno} imports {names}")
            if (isinstance(node, ast.Attribute) and node.attr in parsers
                    and isinstance(node.value, ast.Name) and node.value.id in ("ET", "etree")):
                found.append(f"{rel}:{node.lineno} calls {node.value.id}.{node.attr}")
    assert not found, found
    source = (root / "convert" / "xmlread.py").read_text(encoding="utf-8")
    assert "from defusedxml.sax import parseString" in source
    assert "forbid_dtd=True, forbid_entities=True" in source
