"""Pascal VOC, DIOR and HRSC2016 XML annotations (+ detection results) to a benchmark
(``from-voc``).

Pascal VOC (and DIOR, DeepForest, roLabelImg, DIOR-R): one XML file per image::

    <annotation>
      <filename>000001.jpg</filename>
      <size><width>353</width><height>500</height><depth>3</depth></size>
      <object>
        <name>dog</name> <difficult>0</difficult>
        <bndbox><xmin>48</xmin><ymin>240</ymin><xmax>195</xmax><ymax>371</ymax></bndbox>
        <robndbox>...</robndbox>   (rotated, optional; instead of or beside <bndbox>)
      </object>
    </annotation>

``<robndbox>`` is read in either of its two published forms: roLabelImg's ``<cx> <cy> <w>
<h> <angle>`` (radians; a corner ``(dx, dy) = (±w/2, ±h/2)`` from the centre goes to
``(dx cos a - dy sin a, dx sin a + dy cos a)``: the width along ``(cos a, sin a)``, a positive
angle turning clockwise on screen, as roLabelImg's own reader places the corners, its
``rotatePoint`` with ``-angle``) or DIOR-R's four corners ``<x_left_top> <y_left_top>
<x_right_top> ... <y_left_bottom>``.

HRSC2016: ``<HRSC_Image>`` with ``<Img_FileName>``, ``<Img_FileFmt>``, ``<Img_SizeWidth>``,
``<Img_SizeHeight>`` and ``<HRSC_Objects><HRSC_Object>`` holding ``<Class_ID>``,
``<difficult>``, ``<box_xmin> ... <box_ymax>`` and the rotated box ``<mbox_cx> <mbox_cy>
<mbox_w> <mbox_h> <mbox_ang>`` (radians, the standard rotation in image coordinates: the
width axis along ``(cos a, sin a)``, as mmrotate's HRSC loader reads it).

Each (image, class present) becomes a positive open-vocabulary query (phrase: the class name
with ``-`` and ``_`` as spaces), the absent classes negatives (all, or N per image); the
annotation holds the objects' boxes (the given ``<bndbox>``, else the rotated box's envelope)
and, when every object of the data set has a rotated box, their oriented boxes. A modality a
source does not have is absent, not invented: an object with only a ``<bndbox>`` has no
oriented box, so a data set mixing both gets none (with a warning naming how many objects
lack one), and a ``<bndbox>``'s rectangle is never written as an oriented box. Box corners
are continuous coordinates: the old VOC ``+ 1`` is not applied. ``difficult`` objects are
flagged targets or, with ``difficult="ignore"``, ignore regions, as ``from-dota``. A classes
file (one name a line, or ``<id> <name>``, e.g. HRSC's class ids) fixes the vocabulary and
names numeric classes; an object of a class not in it is a problem.

Results (each folder a submission) are per-class text files ``<anything>_<class>.txt`` or
``<class>.txt`` (VOC's ``comp4_det_test_dog.txt``), one detection a line: ``<image> <score>
<xmin> <ymin> <xmax> <ymax>`` (a box: ``bbox`` only) or, rotated, ``<image> <score> x1 y1 ...
x4 y4`` (an oriented box: ``oriented_bbox`` only). A detector is scored on what it gave.

XML is read by :func:`~ovearth_core.convert.xmlread.read_xml` (defusedxml: no DOCTYPE, no
entities; one object at a time; files read bounded),
every problem is collected with its file, line and field, and nothing is written unless all
is well.
"""

from __future__ import annotations

import math
import random
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import geometry
from ..errors import OVEarthInputError
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
    parse_side,
    phrase_of,
    prediction_row,
    progress,
    read_source,
    read_text_lines,
    relative_path,
    shown,
    skipped_files,
    source_files,
    write_benchmark,
)
from .dota import negatives_option, submission_name
from .xmlread import LineOf, XmlMalformed, XmlRefused, read_xml

# The elements read one at a time (each dropped once read), by root tag.
_UNITS = {"annotation": ("object",), "HRSC_Image": ("HRSC_Objects", "HRSC_Object")}
_DIOR_CORNERS = ("x_left_top", "y_left_top", "x_right_top", "y_right_top", "x_right_bottom",
                 "y_right_bottom", "x_left_bottom", "y_left_bottom")


@dataclass
class VocObject:
    category: str
    difficult: bool
    box: tuple[float, float, float, float]  # xyxy
    obb: np.ndarray | None  # (4, 2), when the annotation gives a rotated box


@dataclass
class VocImage:
    stem: str
    name: str  # the image's path relative to the images folder
    image: Path | None  # None: not in the images folder (numbers-only)
    width: int
    height: int
    objects: list[VocObject]


@dataclass
class _Reader:
    """One XML file being read: where problems go and each element's line."""

    path: Path
    bad: Problems
    line: LineOf
    degenerate: Degenerate

    def text(self, parent: ET.Element, key: str) -> str | None:
        elem = parent.find(key)
        return None if elem is None else " ".join("".join(elem.itertext()).split()) or None

    def number(self, parent: ET.Element, key: str, where: str) -> float | None:
        text = self.text(parent, key)
        try:
            value = float(text) if text is not None and len(text) <= 64 else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or far_out([value]) is not None:
            self.bad.add(self.path, f"{where}<{key}>", COORDINATE if math.isfinite(value)
                         else "a finite number", (text or "<missing>")[:40],
                         line=self.line(parent))
            return None
        return value


def read_voc(path: Path, images: dict[str, Path], folder: Path | None,
             class_ids: dict[str, str], bad: Problems, degenerate: Degenerate | None = None
             ) -> VocImage | None:
    """One VOC / DIOR / HRSC2016 XML file (problems with line numbers to ``bad``; an
    object with a box of zero area to ``degenerate``: a problem, or left out)."""
    degenerate = degenerate or Degenerate(False)
    objects: list[VocObject | None] = []
    before = len(bad)

    def on_object(obj: ET.Element, line: LineOf) -> None:
        read = _voc_object if obj.tag == "object" else _hrsc_object
        objects.append(read(_Reader(path, bad, line, degenerate), obj, len(objects),
                            class_ids))

    try:
        root, line = read_xml(read_source(path, "VOC / HRSC2016 XML file"), _UNITS, on_object)
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
    r = _Reader(path, bad, line, degenerate)
    if root.tag == "annotation":
        filename = r.text(root, "filename")
        size = root.find("size")
        dims = (r.text(size, "width"), r.text(size, "height")) if size is not None else None
    elif root.tag == "HRSC_Image":
        name, fmt = r.text(root, "Img_FileName"), r.text(root, "Img_FileFmt")
        filename = f"{name}.{fmt}" if name and fmt else name
        dims = (r.text(root, "Img_SizeWidth"), r.text(root, "Img_SizeHeight"))
    else:
        bad.add(path, "(root)", "an <annotation> (VOC, DIOR) or <HRSC_Image> (HRSC2016) root",
                f"<<{root.tag[:40]}>>", line=r.line(root))
        return None
    size = _size(r, root, dims)
    name, image = _image(r, root, filename, images, folder)
    if len(bad) > before or name is None:
        return None
    kept = [o for o in objects if o is not None]
    if image is None:
        if size is None:
            where = f"in {folder}" if folder is not None else "(no --images given)"
            bad.add(path, "(size)", f"the image {name} {where}, or the XML's size (<size> or "
                    "<Img_SizeWidth>/<Img_SizeHeight>) to convert it numbers-only",
                    "<neither>", line=r.line(root))
            return None
        return VocImage(path.stem, name, None, size[0], size[1], kept)
    try:
        width, height = image_size(image)
    except OSError as err:
        bad.add(image, "(image)", "a readable image", f"<{err.strerror or err}>")
        return None
    if size is not None and size != (width, height):
        bad.add(path, "(size)", f"the size of {image.name}: {width} x {height}",
                f"<{size[0]} x {size[1]}>", line=r.line(root))
        return None
    return VocImage(path.stem, name, image, width, height, kept)


def _size(r: _Reader, root: ET.Element, dims: tuple[str | None, str | None] | None
          ) -> tuple[int, int] | None:
    if dims is None or dims == (None, None):
        return None
    values = [parse_side(d) for d in dims]
    for key, text, value in zip(("width", "height"), dims, values, strict=True):
        if value is None:
            r.bad.add(r.path, f"(size) {key}", f"a whole number of pixels from 1 to {MAX_SIDE:,}",
                      (text or "<missing>")[:20], line=r.line(root))
            return None
    return values[0], values[1]  # type: ignore[return-value]


def _image(r: _Reader, root: ET.Element, filename: str | None, images: dict[str, Path],
           folder: Path | None) -> tuple[str | None, Path | None]:
    """The image's path relative to the images folder and its file (``None``: missing);
    ``(None, None)`` with a problem for a file name that is no safe relative path."""
    if filename:
        rel = relative_path(filename)
        if rel is None or not image_path_ok(rel):
            r.bad.add(r.path, "(file name)", "a relative image path (no root, no ..)",
                      filename[:60], line=r.line(root))
            return None, None
        found = folder / rel if folder is not None else None
        if found is not None and found.is_file():
            return rel, found
        if Path(rel).stem in images and Path(rel).parent == Path("."):
            return images[Path(rel).stem].name, images[Path(rel).stem]
        return rel, None
    if r.path.stem in images:
        return images[r.path.stem].name, images[r.path.stem]
    return f"{r.path.stem}.jpg", None


def _category(r: _Reader, elem: ET.Element, key: str, where: str,
              class_ids: dict[str, str]) -> str | None:
    name = r.text(elem, key)
    if not name or " " in name:
        r.bad.add(r.path, f"{where}<{key}>", "a class name without spaces",
                  (name or "<missing>")[:40], line=r.line(elem))
        return None
    if class_ids and name not in class_ids:
        r.bad.add(r.path, f"{where}<{key}>", "a class of the --classes file",
                  name[:40], line=r.line(elem))
        return None
    return class_ids.get(name, name)


def _difficult(r: _Reader, elem: ET.Element, where: str) -> bool | None:
    text = r.text(elem, "difficult")
    if text not in (None, "0", "1"):
        r.bad.add(r.path, f"{where}<difficult>", "0 or 1", text[:20], line=r.line(elem))
        return None
    return text == "1"


def _voc_object(r: _Reader, obj: ET.Element, k: int, class_ids: dict[str, str]
                ) -> VocObject | None:
    where = f"<object> {k} "
    category = _category(r, obj, "name", where, class_ids)
    difficult = _difficult(r, obj, where)
    box_elem, rot = obj.find("bndbox"), obj.find("robndbox")
    if box_elem is None and rot is None:
        r.bad.add(r.path, f"{where}<bndbox>", "<bndbox> (xmin ymin xmax ymax) or <robndbox>",
                  "<missing>", line=r.line(obj))
        return None
    box = _box(r, box_elem, ("xmin", "ymin", "xmax", "ymax"), where) if box_elem is not None \
        else None
    obb = None
    if rot is not None:
        if rot.find("cx") is not None:
            values = [r.number(rot, key, where + "<robndbox>")
                      for key in ("cx", "cy", "w", "h", "angle")]
            obb = None if None in values else _rotated(*values)  # type: ignore
        else:
            values = [r.number(rot, key, where + "<robndbox>") for key in _DIOR_CORNERS]
            obb = None if None in values else np.array(values, float).reshape(4, 2)
        obb = _valid_obb(r, obb, rot, where + "<robndbox>")
        if obb is None:
            return None
    if category is None or difficult is None or (box_elem is not None and box is None):
        return None
    if box is None:
        box = _envelope(obb)  # type: ignore[arg-type]
    return VocObject(category, difficult, box, obb)  # type: ignore[arg-type]


def _hrsc_object(r: _Reader, obj: ET.Element, k: int, class_ids: dict[str, str]
                 ) -> VocObject | None:
    where = f"<HRSC_Object> {k} "
    category = _category(r, obj, "Class_ID", where, class_ids)
    difficult = _difficult(r, obj, where)
    box = _box(r, obj, ("box_xmin", "box_ymin", "box_xmax", "box_ymax"), where)
    values = [r.number(obj, key, where) for key in ("mbox_cx", "mbox_cy", "mbox_w", "mbox_h",
                                                    "mbox_ang")]
    obb = None if None in values else _rotated(*values)  # type: ignore
    obb = _valid_obb(r, obb, obj, where + "<mbox>") if obb is not None else None
    if category is None or difficult is None or box is None or obb is None:
        return None
    return VocObject(category, difficult, box, obb)


def _box(r: _Reader, elem: ET.Element, keys: tuple[str, str, str, str], where: str
         ) -> tuple[float, float, float, float] | None:
    values = [r.number(elem, key, where) for key in keys]
    if None in values:
        return None
    x1, y1, x2, y2 = values  # type: ignore[misc]
    if not (x2 > x1 and y2 > y1):  # type: ignore[operator]
        field = "<bndbox>" if keys[0] == "xmin" else " ".join(f"<{key}>" for key in keys)
        expected = f"{keys[2]} > {keys[0]} and {keys[3]} > {keys[1]}"
        if x2 >= x1 and y2 >= y1:  # type: ignore[operator]  # zero width or height
            r.degenerate.add(r.bad, r.path, where + field, expected, values,
                             line=r.line(elem), obj=_object_of(where))
        else:
            r.bad.add(r.path, where + field, expected, values, line=r.line(elem))
        return None
    for lo, hi, side in ((0, 2, "width"), (1, 3, "height")):
        if not extent_ok(values[lo], values[hi]):  # type: ignore[arg-type]
            r.bad.add(r.path, f"{where}<{keys[hi]}>", EXTENT.format(hi=keys[hi], lo=keys[lo],
                                                                    side=side),
                      [values[lo], values[hi]], line=r.line(elem))
            return None
    return x1, y1, x2, y2  # type: ignore[return-value]


def _object_of(where: str) -> str:
    """The object a field is of: ``<object> 3`` of ``<object> 3 <robndbox>``."""
    return " ".join(where.split()[:2])


def _rotated(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    """The corners ``(4, 2)`` of a ``w`` x ``h`` rectangle about ``(cx, cy)`` turned by
    ``angle`` radians in image coordinates: a corner offset ``(dx, dy)`` goes to ``(dx cos a
    - dy sin a, dx sin a + dy cos a)``, the width along ``(cos a, sin a)``. Both rotated forms
    mean this: roLabelImg's reader turns its corners by ``rotatePoint(p, -angle)``, which is
    this rotation, and mmrotate reads HRSC2016's ``<mbox>`` so."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[cx + dx * c - dy * s, cy + dx * s + dy * c]
                     for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2),
                                    (-w / 2, h / 2))])


def _valid_obb(r: _Reader, obb: np.ndarray | None, elem: ET.Element, where: str
               ) -> np.ndarray | None:
    if obb is None:
        return None
    if not (np.abs(obb) <= 1e100).all() or not geometry.valid_polygons(obb[None])[0]:
        expected = "a rotated box of positive area (corners in boundary order, within ±1e100)"
        found = np.round(obb, 3).tolist()
        if (np.abs(obb) <= 1e100).all() and \
                geometry.boundary_order(obb[None])[1][0] == geometry.QUAD_DEGENERATE:
            r.degenerate.add(r.bad, r.path, where, expected, found, line=r.line(elem),
                             obj=_object_of(where))
        else:
            r.bad.add(r.path, where, expected, found, line=r.line(elem))
        return None
    lo, hi = obb.min(axis=0).tolist(), obb.max(axis=0).tolist()
    for axis, side in ((0, "width"), (1, "height")):
        if not extent_ok(lo[axis], hi[axis]):
            r.bad.add(r.path, where, "a rotated box whose envelope's " + EXTENT.format(
                hi="largest " + "xy"[axis], lo="smallest " + "xy"[axis], side=side),
                np.round(obb, 3).tolist(), line=r.line(elem))
            return None
    return obb


def read_classes(path: Path, bad: Problems) -> dict[str, str]:
    """A classes file: ``<name>`` or ``<id> <name>`` per line; the name of each id (a
    name's own id is itself)."""
    out: dict[str, str] = {}
    for n, raw in enumerate(read_text_lines(path, bad, "classes file") or [], start=1):
        tokens = raw.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        if len(tokens) > 2 or tokens[0] in out:
            bad.add(path, "(line)", "<name> or <id> <name>, each id once", raw.strip()[:60],
                    line=n)
            continue
        out[tokens[0]] = tokens[-1]
    return out


@dataclass
class _Detection:
    image: str
    category: str
    score: float
    box: tuple[float, float, float, float] | None  # a box line's (None: a rotated line)
    obb: np.ndarray | None  # a rotated line's (None: a box line)


def read_results(folder: Path, vocab: set[str], stems: set[str], bad: Problems,
                 degenerate: Degenerate | None = None) -> list[_Detection]:
    """The per-class result files of ``folder`` (see the module docstring); a line whose
    box has zero area to ``degenerate`` (a problem, or left out)."""
    degenerate = degenerate or Degenerate(False)
    if not folder.is_dir():
        bad.add(folder, "--results", "a folder of <class>.txt result files", "<not a folder>")
        return []
    files = source_files(folder, bad, "*.txt")
    if not files and not bad:
        bad.add(folder, "--results", "<anything>_<class>.txt result files", "<none>")
    out = []
    for path in files:
        cls = max((c for c in vocab if path.stem == c or path.stem.endswith(f"_{c}")),
                  key=len, default=None)
        if cls is None:
            bad.add(path, "(file name)", "<anything>_<class>.txt with a class of the "
                    "annotations (or --classes)", path.name)
            continue
        for n, raw in enumerate(read_text_lines(path, bad, "result file") or [], start=1):
            found = _result_line(raw, path, n, cls, stems, bad, degenerate)
            if found is not None:
                out.append(found)
    return out


def _result_line(raw: str, path: Path, n: int, cls: str, stems: set[str], bad: Problems,
                 degenerate: Degenerate) -> _Detection | None:
    tokens = raw.split()
    if not tokens:
        return None
    if len(tokens) not in (6, 10):
        bad.add(path, "(detection)", "<image> <score> xmin ymin xmax ymax, or <image> <score> "
                "x1 y1 ... x4 y4", f"<{len(tokens)} fields>", line=n)
        return None
    if tokens[0] not in stems:
        bad.add(path, "image", "the name of an annotated image (its XML file's stem)",
                tokens[0][:60], line=n)
        return None
    try:
        values = [float(t) for t in tokens[1:]]
    except ValueError:
        values = [math.nan]
    if not all(math.isfinite(v) for v in values) or far_out(values[1:]) is not None:
        bad.add(path, "(numbers)", "a finite score and coordinates within ±1e100",
                raw.strip()[:60], line=n)
        return None
    score, coords = values[0], values[1:]
    if len(coords) == 4:
        x1, y1, x2, y2 = coords
        if not (x2 > x1 and y2 > y1):
            if x2 >= x1 and y2 >= y1:  # zero width or height
                degenerate.add(bad, path, "(box)", "xmax > xmin and ymax > ymin", coords,
                               line=n)
            else:
                bad.add(path, "(box)", "xmax > xmin and ymax > ymin", coords, line=n)
            return None
        return _Detection(tokens[0], cls, score, (x1, y1, x2, y2), None)
    quad, status = geometry.boundary_order(np.array(coords).reshape(1, 4, 2))
    if status[0] == geometry.QUAD_DEGENERATE:
        degenerate.add(bad, path, "(quadrilateral)", "a quadrilateral with positive area",
                       coords, line=n)
        return None
    return _Detection(tokens[0], cls, score, None, quad[0])


def _envelope(obb: np.ndarray) -> tuple[float, float, float, float]:
    x1, y1 = obb.min(axis=0).tolist()
    x2, y2 = obb.max(axis=0).tolist()
    return x1, y1, x2, y2


def from_voc(annotations: PathLike, images: PathLike | None, out: PathLike,
             results: Sequence[PathLike] = (), classes: PathLike | None = None,
             negatives: int | str = "all", seed: int = 0, difficult: str = "target",
             force: bool = False, link: bool = True, show_progress: bool = False,
             command: str = "ovearth_core.convert.from_voc(...)",
             skip_degenerate: bool = False) -> dict[str, Any]:
    """Convert Pascal VOC / DIOR / HRSC2016 XML (and result folders) into a benchmark.

    Args:
        annotations: the folder of ``.xml`` files, one per image.
        images: the folder of the images (``None``, or an image missing: numbers-only, by
            the XML's declared size, with a warning).
        out: the benchmark folder to write.
        results: folders of per-class result files; each becomes a submission named after
            its folder.
        classes: a classes file (names, or ``<id> <name>``) fixing the vocabulary.
        negatives, seed, difficult: as :func:`~ovearth_core.convert.dota.from_dota`.
        force, link, show_progress: as :func:`~ovearth_core.convert.common.write_benchmark`.
        skip_degenerate: leave objects (and result lines) whose box has zero area out,
            each named in a warning and the folder's README, instead of refusing them
            (``--skip-degenerate``; the spec refuses a box of zero area).
    """
    inputs = [p for p in (annotations, images, classes, *results) if p is not None]
    check_target(out, force, inputs)
    if difficult not in ("target", "ignore"):
        raise fail("(options)", "--difficult", "target or ignore", difficult)
    negatives = negatives_option(negatives)
    annotations = Path(annotations)
    folder = None if images is None else Path(images)
    if not annotations.is_dir():
        raise fail(annotations, "--annotations", "a folder of VOC / HRSC2016 XML files",
                   "<not a folder>")
    bad = Problems()
    files = source_files(annotations, bad, "*.xml")
    bad.raise_if_any()
    if not files:
        raise fail(annotations, "--annotations", "VOC / DIOR / HRSC2016 .xml files", "<none>")
    by_stem = images_by_stem(folder, bad)
    class_ids = read_classes(Path(classes), bad) if classes is not None else {}
    bad.raise_if_any()
    degenerate = Degenerate(skip_degenerate)
    parsed = [read_voc(path, by_stem, folder, class_ids, bad, degenerate)
              for path in progress(files, "reading annotations", show_progress)]
    bad.raise_if_any()
    entries = [e for e in parsed if e is not None]
    vocab = sorted(set(class_ids.values()) | {o.category for e in entries for o in e.objects})
    found = {submission_name(f): read_results(Path(f), set(vocab), {e.stem for e in entries},
                                               bad, degenerate) for f in results}
    bad.raise_if_any()
    rotated, mixed = _oriented(entries)
    missing = MissingImages(folder)
    for entry in entries:
        if entry.image is None:
            missing.add(entry.name, "the XML's size")
    bench = Benchmark(command, inputs=inputs, source={"format": "VOC", "resample_unit": "image"},
                      warnings=missing.warning(len(entries)) + mixed + degenerate.warnings(),
                      skipped=_skipped(annotations, files, folder, by_stem, entries))
    queries = _add_queries(bench, entries, vocab, rotated, negatives, seed, difficult)
    for name, dets in found.items():
        bench.submissions[name] = _submission(dets, queries)
        dropped = sum((d.image, d.category) not in queries for d in dets)
        if dropped:
            bench.notes.append(f"predictions/{name}.json: {dropped} detections on (image, "
                               "class) pairs that are no query (--negatives N) were left out")
    n_objects = sum(len(e.objects) for e in entries)
    hard = sum(o.difficult for e in entries for o in e.objects)
    bench.notes += [
        f"source: {len(files)} VOC / HRSC2016 XML files, {n_objects} objects ({hard} "
        f"difficult" + (f"; {len(degenerate.objects)} more of zero area left out, "
                        f"{SKIP_DEGENERATE}" if degenerate.objects else "")
        + f"), {len(vocab)} classes: {', '.join(vocab)}",
        "each (image, class present) is a positive query, the absent classes negatives "
        + ("(all)" if negatives == "all" else f"({negatives} per image, seed {seed})"),
        "boxes as given (continuous coordinates, no VOC + 1); " + (
            "oriented boxes from the rotated boxes (<robndbox>, <mbox>)" if rotated else
            "no oriented boxes (not every object has a rotated box; none is invented)"),
        "results: a box line is a box (bbox), a rotated line an oriented box (oriented_bbox); "
        "neither is made from the other",
        ("difficult objects are targets, flagged in the annotation's difficult list"
         if difficult == "target" else "difficult objects are ignore regions")]
    write_benchmark(bench, out, force, link, show_progress)
    return bench.counts()


def _skipped(annotations: Path, files: list[Path], folder: Path | None,
             by_stem: dict[str, Path], entries: list[VocImage]) -> list[str]:
    """What the folders held that was not converted: entries of the annotations folder
    that are not ``.xml`` files, images of the images folder no XML file names."""
    read = set(files)
    other = [shown(p.name) for p in annotations.iterdir() if p not in read]
    used = {e.image for e in entries}
    unused = [p.name for p in by_stem.values() if p not in used]
    return (skipped_files("entries", annotations, other, "are not .xml files (not read)")
            + (skipped_files("images", folder, unused, "are named by no XML file (not "
                             "converted: no annotation)") if folder is not None else []))


def _add_queries(bench: Benchmark, entries: list[VocImage], vocab: list[str], rotated: bool,
                 negatives: int | str, seed: int, difficult: str
                 ) -> dict[tuple[str, str], str]:
    queries: dict[tuple[str, str], str] = {}
    for entry in sorted(entries, key=lambda e: e.stem):
        image_path = f"images/{entry.name}"
        if entry.image is not None:
            bench.images[image_path] = entry.image
        present: dict[str, list[VocObject]] = defaultdict(list)
        for obj in entry.objects:
            present[obj.category].append(obj)
        absent = [c for c in vocab if c not in present]
        if negatives != "all":
            rng = random.Random(f"{seed}:{entry.stem}")
            absent = sorted(rng.sample(absent, min(int(negatives), len(absent))))
        for cat in sorted(set(present) | set(absent)):
            group = present.get(cat, [])
            ann_id, qid = f"{entry.stem}_{cat}", f"ov_{entry.stem}_{cat}"
            targets = [o for o in group if not (o.difficult and difficult == "ignore")]
            ignore = [o for o in group if o.difficult and difficult == "ignore"]
            extra: dict[str, Any] = {}
            if group and difficult == "target":
                extra["difficult"] = [int(o.difficult) for o in targets]
            if ignore:
                extra["ignore_bbox"] = [_xywh(o.box) for o in ignore]
                if rotated:
                    extra["ignore_oriented_bbox"] = [_obb(o) for o in ignore]
            bench.add_annotation(ann_id, image_path, entry.width, entry.height, cat, None,
                                 [_xywh(o.box) for o in targets],
                                 [_obb(o) for o in targets] if rotated else [], **extra)
            bench.add_query("open_vocabulary", qid, ann_id, phrase_of(cat),
                            negative=not group)
            queries[(entry.stem, cat)] = qid
    return queries


def _xywh(box: tuple[float, float, float, float]) -> list[float]:
    x1, y1, x2, y2 = box
    return [x1, y1, x2 - x1, y2 - y1]


def _obb(obj: VocObject) -> list[list[float]]:
    return obj.obb.tolist()  # type: ignore[union-attr]  # every object has one (_oriented)


def _oriented(entries: list[VocImage]) -> tuple[bool, list[str]]:
    """Whether the ground truth has oriented boxes (every object a rotated box), and the
    warning when some objects have one and others not (none is then written)."""
    objects = [(e, o) for e in entries for o in e.objects]
    without = [e for e, o in objects if o.obb is None]
    if not without or len(without) == len(objects):
        return bool(objects) and not without, []
    files = sorted({f"{e.stem}.xml" for e in without})
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5:,} more" if len(files) > 5 else "")
    return False, [f"{len(objects) - len(without):,} of {len(objects):,} objects have a rotated "
                   f"box (<robndbox> or <mbox>), {len(without):,} only a <bndbox> ({shown}): "
                   "the ground truth has no oriented boxes (one is not invented from a "
                   "<bndbox>; oriented-box metrics need every object's)"]


def _submission(dets: list[_Detection], queries: dict[tuple[str, str], str]
                ) -> dict[str, list[dict[str, Any]]]:
    per_query: dict[str, list[_Detection]] = defaultdict(list)
    for d in dets:
        qid = queries.get((d.image, d.category))
        if qid is not None:
            per_query[qid].append(d)
    rows = []
    for (_, cat), qid in queries.items():
        found = per_query.get(qid, [])
        hbb = [{"bbox": list(d.box), "score": d.score} for d in found if d.box is not None]
        obb = [{"polygon": d.obb.tolist(), "score": d.score} for d in found
               if d.obb is not None]
        rows.append(prediction_row(qid, "phrase", phrase_of(cat), None, hbb, obb))
    return {"open_vocabulary": rows}
