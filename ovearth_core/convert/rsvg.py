"""DIOR-RSVG annotations (VOC-style XML with a description per object) to referring queries.

DIOR-RSVG format (Zhan et al., "RSVG: Exploring Data and Models for Visual Grounding on
Remote Sensing Data", 2023; PASCAL VOC XML): one XML file per image::

    <annotation>
      <filename>00001.jpg</filename>
      <size><width>800</width><height>800</height><depth>3</depth></size>
      <object>
        <name>vehicle</name>
        <bndbox><xmin>10</xmin><ymin>20</ymin><xmax>40</xmax><ymax>60</ymax></bndbox>
        <description>the gray vehicle on the left</description>
      </object>
      ...
    </annotation>

Each ``<object>`` becomes a referring query (its ``<description>``) with an annotation of its
own (category ``<name>``, one box; no mask, no oriented box). Box corners are read as
continuous coordinates (a box from ``xmin`` to ``xmax`` is ``xmax - xmin`` wide, as the
evaluator measures; the old VOC ``+ 1`` is not applied). Query ids are
``ref_<xml stem>_<object index>`` (0-based, in file order).

A prediction file (RSVG models predict one box per expression; there is no standard file, so
this is ours) is a JSON list of ``{"image": <xml stem>, "object": <index>, "bbox": [x1, y1,
x2, y2]}`` with an optional ``"score"``; it becomes a referring submission.

XML is read by :func:`~ovearth_core.convert.xmlread.read_xml` (defusedxml, one ``<object>``
at a time); documents declaring a DOCTYPE or any entity are refused (no entity expansion, no
external resources).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import boxparse
from ..errors import OVEarthInputError
from ..masks import FieldError
from .common import (
    COORDINATE,
    EXTENT,
    MAX_SIDE,
    SKIP_DEGENERATE,
    Benchmark,
    Degenerate,
    MissingImages,
    PathLike,
    Problems,
    check_target,
    extent_ok,
    fail,
    far_out,
    image_path_ok,
    image_size,
    images_by_stem,
    load_json,
    parse_side,
    prediction_row,
    progress,
    read_source,
    relative_path,
    shown,
    source_files,
    utf8_ok,
    write_benchmark,
)
from .xmlread import LineOf, XmlMalformed, XmlRefused, read_xml


@dataclass
class RsvgObject:
    category: str
    box: tuple[float, float, float, float]  # xyxy
    description: str
    index: int = 0  # the <object>'s, 0-based in file order (ids keep it when some are skipped)


@dataclass
class RsvgImage:
    stem: str
    image: Path | None  # None: not in the images folder (numbers-only, the declared size)
    width: int
    height: int
    objects: list[RsvgObject]
    name: str = ""  # the image's path relative to the images folder
    seen: int = 0  # <object> elements read (those of zero area left out too)


def read_annotation(path: Path, images: dict[str, Path], folder: Path | None, bad: Problems,
                    degenerate: Degenerate | None = None) -> RsvgImage | None:
    """Read and validate one DIOR-RSVG XML file (problems with line numbers go to ``bad``;
    an object whose box has zero area to ``degenerate``: a problem, or left out)."""
    degenerate = degenerate or Degenerate(False)
    objects: list[RsvgObject] = []
    seen = [0]  # <object> elements read, valid or not
    before = len(bad)

    def on_object(obj: ET.Element, line: LineOf) -> None:
        found = _object(obj, seen[0], path, bad, line, degenerate)
        seen[0] += 1
        if found is not None:
            objects.append(found)

    try:
        root, line = read_xml(read_source(path, "DIOR-RSVG XML file"),
                              {"annotation": ("object",)}, on_object)
    except OVEarthInputError as err:
        bad.items.extend(err.problems)
        return None
    except XmlRefused as err:
        del bad.items[before:]  # what was read before the refusal is not reported
        bad.add(path, "(document)", "XML without DOCTYPE or entities", f"<{err}>")
        return None
    except XmlMalformed as err:
        del bad.items[before:]
        bad.add(path, "(document)", "well-formed XML", f"<{err}>", line=err.line)
        return None
    if root.tag != "annotation":
        bad.add(path, "<annotation>", "an <annotation> root element", f"<<{root.tag}>>",
                line=line(root))
        return None
    name, image = _image_of(root, path, images, folder, bad, line)
    size = _declared_size(root, path, bad, line)
    if not seen[0]:
        bad.add(path, "<object>", "at least one <object> with a <description>", "<none>",
                line=line(root))
    if name is None or len(bad) > before:
        return None
    if image is None:
        if size is None:
            where = f"in {folder}" if folder is not None else "(no --images given)"
            bad.add(path, "<size>", f"the image {name} {where}, or a <size> in the XML to "
                    "convert it numbers-only", "<neither>", line=line(root))
            return None
        return RsvgImage(path.stem, None, size[0], size[1], objects, name, seen[0])
    try:
        width, height = image_size(image)
    except OSError as err:
        bad.add(image, "(image)", "a readable image", f"<{err.strerror or err}>")
        return None
    if size is not None and size != (width, height):
        bad.add(path, "<size>", f"the size of {image.name}: {width} x {height}",
                f"<{size[0]} x {size[1]}>", line=line(root.find("size")))  # type: ignore
        return None
    return RsvgImage(path.stem, image, width, height, objects, name, seen[0])


def _text(elem: ET.Element | None) -> str | None:
    if elem is None:
        return None
    return " ".join("".join(elem.itertext()).split())


def _image_of(root: ET.Element, path: Path, images: dict[str, Path], folder: Path | None,
              bad: Problems, line: Any) -> tuple[str | None, Path | None]:
    """The image's path relative to the images folder (``<filename>``, else the XML file's
    stem) and its file, ``None`` when it is not there (numbers-only); ``(None, None)`` with
    a problem for a ``<filename>`` that is no safe relative path."""
    name = _text(root.find("filename"))
    if name:
        rel = relative_path(name)
        if rel is None or not image_path_ok(rel):
            bad.add(path, "<filename>", "a relative image path (no root, no ..)", name,
                    line=line(root.find("filename")))
            return None, None
        found = folder / rel if folder is not None else None
        return rel, found if found is not None and found.is_file() else None
    if path.stem in images:
        return images[path.stem].name, images[path.stem]
    return f"{path.stem}.jpg", None


def _declared_size(root: ET.Element, path: Path, bad: Problems, line: Any
                   ) -> tuple[int, int] | None:
    size = root.find("size")
    if size is None:
        return None
    dims = []
    for key in ("width", "height"):
        text = _text(size.find(key))
        value = parse_side(text)
        if value is None:
            bad.add(path, f"<size><{key}>", f"a whole number of pixels from 1 to {MAX_SIDE:,}",
                    (text or "<missing>")[:20], line=line(size))
            return None
        dims.append(value)
    return dims[0], dims[1]


def _object(obj: ET.Element, k: int, path: Path, bad: Problems, line: Any,
            degenerate: Degenerate) -> RsvgObject | None:
    where = f"<object> {k}"
    name = _text(obj.find("name"))
    description = _text(obj.find("description"))
    box = obj.find("bndbox")
    ok = True
    if not name:
        bad.add(path, f"{where} <name>", "a non-empty category name", name or "<missing>",
                line=line(obj))
        ok = False
    if not description:
        bad.add(path, f"{where} <description>", "a non-empty referring expression",
                description or "<missing>", line=line(obj))
        ok = False
    if box is None:
        bad.add(path, f"{where} <bndbox>", "<xmin> <ymin> <xmax> <ymax>", "<missing>",
                line=line(obj))
        return None
    values = []
    for key in ("xmin", "ymin", "xmax", "ymax"):
        text = _text(box.find(key))
        try:
            value = float(text) if text is not None else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            bad.add(path, f"{where} <bndbox><{key}>", "a finite number", text or "<missing>",
                    line=line(box))
            return None
        if far_out([value]) is not None:
            bad.add(path, f"{where} <bndbox><{key}>", COORDINATE, text, line=line(box))
            return None
        values.append(value)
    x1, y1, x2, y2 = values
    if not (x2 > x1 and y2 > y1):
        if x2 >= x1 and y2 >= y1 and ok:  # zero width or height (left out only if all else is)
            degenerate.add(bad, path, f"{where} <bndbox>", "xmax > xmin and ymax > ymin",
                           values, line=line(box), obj=where)
        else:
            bad.add(path, f"{where} <bndbox>", "xmax > xmin and ymax > ymin", values,
                    line=line(box))
        return None
    for lo, hi, keys, side in ((x1, x2, ("xmin", "xmax"), "width"),
                               (y1, y2, ("ymin", "ymax"), "height")):
        if not extent_ok(lo, hi):
            bad.add(path, f"{where} <bndbox><{keys[1]}>",
                    EXTENT.format(hi=keys[1], lo=keys[0], side=side), [lo, hi], line=line(box))
            return None
    if not ok:
        return None
    return RsvgObject(name, (x1, y1, x2, y2), description, k)  # type: ignore[arg-type]


def read_predictions(path: Path, known: dict[tuple[str, int], str], bad: Problems,
                     skipped: frozenset[tuple[str, int]] = frozenset()
                     ) -> dict[str, dict[str, Any]]:
    """An RSVG prediction file: the box (and score) of each query by query id; rows of the
    ``skipped`` objects (zero area, ``--skip-degenerate``) left out."""
    rows = load_json(path, "RSVG prediction", list)
    out: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(rows):
        where = f"[{i}]"
        if not isinstance(row, dict):
            bad.add(path, where, "{\"image\": <xml stem>, \"object\": <index>, \"bbox\": "
                    "[x1, y1, x2, y2]}", row)
            continue
        key = (row.get("image"), row.get("object"))
        qid = known.get(key) if isinstance(key[0], str) and isinstance(key[1], int) else None
        if qid is None and key in skipped:
            continue
        if qid is None:
            bad.add(path, f"{where}.image/object", "the xml stem and 0-based object index of "
                    "an annotated expression", [row.get("image"), row.get("object")])
            continue
        if qid in out:
            bad.add(path, f"{where}.image/object", "one box per expression", list(key),
                    query_id=qid)
            continue
        try:
            box, score = boxparse.parse_box(row.get("bbox", "<missing>"), "xyxy")
        except FieldError as err:
            bad.add(path, f"{where}.bbox{err.field}", err.expected, err.found, query_id=qid)
            continue
        if "score" in row:
            try:
                score = boxparse.parse_score(row["score"])
            except FieldError as err:
                bad.add(path, f"{where}.score", err.expected, err.found, query_id=qid)
                continue
        out[qid] = {"bbox": list(box) if box else None}
        if score is not None:
            out[qid]["score"] = score
    return out


def from_rsvg(annotations: PathLike, images: PathLike | None, out: PathLike,
              predictions: Sequence[PathLike] = (), force: bool = False, link: bool = True,
              show_progress: bool = False,
              command: str = "ovearth_core.convert.from_rsvg(...)",
              skip_degenerate: bool = False) -> dict[str, Any]:
    """Convert DIOR-RSVG XML annotations (and prediction files) into a referring benchmark.

    Args:
        annotations: the folder of XML files (``Annotations/``).
        images: the folder of images (``JPEGImages/``).
        out: the benchmark folder to write.
        predictions: RSVG prediction files; each becomes ``predictions/<file stem>.json``.
        force, link, show_progress: as :func:`~ovearth_core.convert.common.write_benchmark`.
        skip_degenerate: leave objects whose box has zero area out (and the predictions of
            their expressions), each named in a warning and the folder's README, instead of
            refusing them (``--skip-degenerate``; the spec refuses a box of zero area).
    """
    inputs = [p for p in (annotations, images, *predictions) if p is not None]
    check_target(out, force, inputs)
    annotations = Path(annotations)
    images = None if images is None else Path(images)
    if not annotations.is_dir():
        raise fail(annotations, "--annotations", "a folder of DIOR-RSVG XML files",
                   "<not a folder>")
    bad = Problems()
    files = source_files(annotations, bad, "*.xml")
    bad.raise_if_any()
    if not files:
        raise fail(annotations, "--annotations", "DIOR-RSVG .xml files", "<none>")
    by_stem = images_by_stem(images, bad)
    bad.raise_if_any()
    degenerate = Degenerate(skip_degenerate)
    parsed = [read_annotation(path, by_stem, images, bad, degenerate)
              for path in progress(files, "reading annotations", show_progress)]
    bad.raise_if_any()
    missing = MissingImages(images)
    for entry in (e for e in parsed if e is not None and e.image is None):
        missing.add(entry.name, "the XML's <size>")
    bench = Benchmark(command, inputs=inputs,
                      warnings=missing.warning(len(parsed)) + degenerate.warnings())
    skipped: set[tuple[str, int]] = set()
    known: dict[tuple[str, int], str] = {}
    for entry in (e for e in parsed if e is not None):  # all are: problems were raised
        image_path = f"images/{entry.name}"
        if entry.image is not None:
            bench.images[image_path] = entry.image
        kept = {obj.index for obj in entry.objects}
        skipped |= {(entry.stem, k) for k in range(entry.seen) if k not in kept}
        for obj in entry.objects:
            k = obj.index
            ann_id, qid = f"{entry.stem}_{k}", f"ref_{entry.stem}_{k}"
            x1, y1, x2, y2 = obj.box
            bench.add_annotation(ann_id, image_path, entry.width, entry.height, obj.category,
                                 None, [[x1, y1, x2 - x1, y2 - y1]], [])
            bench.add_query("referring", qid, ann_id, obj.description)
            known[(entry.stem, k)] = qid
    names = [Path(p).stem for p in predictions]
    for path, name in zip(predictions, names, strict=True):
        if (names.count(name) > 1 or relative_path(f"{name}.json") is None
                or not utf8_ok(name)):
            raise fail("(options)", "--predictions", "files with distinct UTF-8 names",
                       f"<{shown(name)}>")
        boxes = read_predictions(Path(path), known, bad, frozenset(skipped))
        texts = {row["query_id"]: row["query"] for row in bench.tasks["referring"]}
        bench.submissions[name] = {"referring": [
            prediction_row(qid, "query", texts[qid], None,
                           [boxes[qid]] if qid in boxes and boxes[qid]["bbox"] else [])
            for qid in texts]}
    bad.raise_if_any()
    bench.notes += [f"source: {len(files)} DIOR-RSVG XML files, "
                    f"{len(bench.tasks['referring'])} expressions" + (
                        f" ({len(skipped):,} more of zero area left out, {SKIP_DEGENERATE}; "
                        "their predictions too)" if skipped else ""),
                    "each <object> is a referring query with its own annotation (one box, "
                    "continuous coordinates, no +1); query ids ref_<xml stem>_<object index>"]
    write_benchmark(bench, out, force, link, show_progress)
    return bench.counts()
