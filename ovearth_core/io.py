"""Loading and validation of ground truth and predictions (validate at the edge, once).

``load_open_vocab_samples``, ``load_referring_samples`` and ``load_reasoning_samples``
read the two JSON files, check every rule of the spec's "Data Formats" section,
and return a :class:`~ovearth_core.types.SampleList` in ground-truth order. All
problems found (not only the first) are raised together as one
:class:`~ovearth_core.errors.OVEarthInputError`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import chain
from typing import Any

import numpy as np
import orjson

from . import boxparse, files, masks
from .batching import ListColumn, OrderedProblems
from .errors import MAX_REPORTED, OVEarthInputError, Problem, ProblemCollector, describe
from .gcpause import gc_paused
from .masks import FieldError, Rle
from .nonfinite import locate_non_finite
from .types import (
    EMPTY_BOXES,
    EMPTY_POLYS,
    EMPTY_SCORES,
    MODALITIES,
    TASK_KEYS,
    Sample,
    SampleList,
    check_pair_cap,
)

BBOX_FORMATS = ("xyxy", "xywh")
PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Annotation:
    """One ground-truth target: its image, category and geometry (validated)."""

    id: str
    image_path: str
    width: int
    height: int
    category: str
    mask: Rle | None
    boxes: np.ndarray  # (N, 4) xyxy
    obbs: np.ndarray  # (N, 4, 2)
    # Ignore regions (COCO crowd): only the COCO-style AP reads them.
    ignore_boxes: np.ndarray = field(default_factory=lambda: EMPTY_BOXES)  # (R, 4) xyxy
    ignore_obbs: np.ndarray = field(default_factory=lambda: EMPTY_POLYS)  # (R, 4, 2)
    # DOTA's difficult flags (N,) bool, parallel to boxes / obbs; empty when not given.
    difficult: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # Each target's size (N,) float, parallel to boxes / obbs (COCO's ``area``: an instance
    # mask's pixel count); empty when not given. Only the COCO-style AP's size ranges read it.
    area: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class Query:
    query_id: str
    ann_id: str
    text: str
    negative: bool


@dataclass(frozen=True)
class GroundTruth:
    """The validated annotations and queries; ``modalities``: the geometry parsed (and
    validated): an annotation's mask is ``None`` and its oriented boxes are empty when
    ``segmentation`` / ``oriented_bbox`` is not among them."""

    annotations: dict[str, Annotation]
    tasks: dict[str, list[Query]]
    modalities: tuple[str, ...] = MODALITIES
    # The concave quadrilaterals of oriented_bbox / ignore_oriented_bbox, each as the problem
    # it is under the spec's rule: parsed either way (one parse for every option), refused by
    # load_samples unless the option ``concave_obb`` is on.
    concave: tuple[Problem, ...] = ()


@dataclass
class _Prediction:
    mask: Rle | None = None
    mask_size: tuple[int, int] = (0, 0)
    # Non-empty masks of the query's rows, in row order, until their union becomes ``mask``.
    row_masks: list[Rle] = field(default_factory=list)
    # Kept boxes of each of the query's rows, in row order (non-empty arrays only).
    boxes: list[np.ndarray] = field(default_factory=list)
    box_scores: list[np.ndarray] = field(default_factory=list)
    obbs: list[np.ndarray] = field(default_factory=list)
    obb_scores: list[np.ndarray] = field(default_factory=list)


def read_json(path: PathLike, role: str, max_bytes: int | None = None) -> Any:
    """Read a UTF-8 JSON document; the top level must be an object.

    :func:`read_input` then :func:`parse_json`: the file must be a regular file of at
    most ``max_bytes`` (a named pipe, a device, a folder or a larger file is a problem
    reported without reading it or waiting for it); NaN, Infinity and out-of-range
    numbers are located field by field (:mod:`~ovearth_core.nonfinite`).
    """
    return parse_json(read_input(path, role, max_bytes), str(path))


def read_input(path: PathLike, role: str, max_bytes: int | None = None) -> bytes:
    """The bytes of an input file (``role``: "prediction", "ground-truth"...), read with
    :func:`~ovearth_core.files.read_bounded` (regular files of at most ``max_bytes``,
    default :func:`~ovearth_core.files.max_input_bytes`, 200 MB; never waits).

    Raises :class:`OVEarthInputError` naming the file for anything else.
    """
    name = str(path)
    try:
        return files.read_bounded(path, max_bytes)
    except files.InputRefused as err:
        raise OVEarthInputError([Problem(name, "(file)", f"a {role} JSON file: {err.expected}",
                                         err.found)]) from None
    except (OSError, ValueError) as err:  # ValueError: a path with a NUL byte
        found = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise OVEarthInputError([Problem(name, "(file)", f"a readable {role} JSON file",
                                         found or type(err).__name__)]) from None


def parse_json(data: bytes, name: str) -> Any:
    """Parse the bytes of file ``name`` as a UTF-8 JSON object (see :func:`read_json`).

    A COCO, DOTA, VOC or DIOR-RSVG file is one problem naming the converter to use
    (:func:`foreign_format`), not the many its fields would give."""
    try:
        with gc_paused():
            doc = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        located, total = locate_non_finite(data, name)
        if located:
            raise OVEarthInputError(located, total) from None
        _refuse_foreign(None, data, name)
        raise OVEarthInputError([Problem(name, "(document)",
                                         "valid UTF-8 JSON (no NaN/Infinity, nesting under 1024)",
                                         _parse_error(err, data))]) from None
    if not isinstance(doc, dict):
        _refuse_foreign(doc, data, name)
        raise OVEarthInputError([Problem(name, "(document)", "a JSON object at the top level",
                                         f"a JSON {type(doc).__name__}")])
    return doc


_CONVERT = "python -m ovearth_core.convert"
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def foreign_format(doc: Any, data: bytes, name: str) -> tuple[str, str] | None:
    """What a file in another benchmark format looks like and the command that converts it,
    or ``None``: a COCO instances object or results list (``doc``, the parsed JSON, if
    any), DOTA ``labelTxt`` or Task1 lines, VOC / HRSC2016 or DIOR-RSVG XML (``data``)."""
    if isinstance(doc, dict) and "tasks" not in doc and all(
            isinstance(doc.get(k), list) for k in ("images", "annotations", "categories")):
        return ("a COCO instances file (images, annotations, categories)",
                f"{_CONVERT} from-coco --instances {name} --images IMAGES --out BENCH")
    if isinstance(doc, list):
        first = doc[0] if doc else None
        if isinstance(first, dict) and "image_id" in first and "category_id" in first:
            return ("a COCO results list", f"{_CONVERT} from-coco --instances INSTANCES.json "
                    f"--results {name} --images IMAGES --out BENCH")
        return None
    if doc is not None:
        return None
    head = data[:1 << 16].decode("utf-8", "ignore").lstrip("\ufeff \t\r\n")
    if head.startswith("<"):
        if "<description>" in head:
            return ("DIOR-RSVG XML", f"{_CONVERT} from-rsvg --annotations FOLDER "
                    "--images IMAGES --out BENCH")
        if "<annotation" in head or "<HRSC_Image" in head:
            return ("Pascal VOC / DIOR / HRSC2016 XML", f"{_CONVERT} from-voc --annotations "
                    "FOLDER --images IMAGES --out BENCH")
        return None
    for line in head.splitlines()[:20]:
        tokens = line.split()
        if not tokens or line.lower().startswith(("imagesource", "gsd")):
            continue
        numbers = [bool(_NUMBER.match(t)) for t in tokens]
        if len(tokens) == 10 and all(numbers[:8]) and not numbers[8]:
            return ("a DOTA labelTxt file", f"{_CONVERT} from-dota --labels FOLDER "
                    "--images IMAGES --out BENCH")
        if len(tokens) == 10 and all(numbers[1:]):
            return ("a DOTA Task1 results file", f"{_CONVERT} from-dota --results FOLDER "
                    "--labels LABELS --images IMAGES --out BENCH")
        return None
    return None


def _refuse_foreign(doc: Any, data: bytes, name: str) -> None:
    """Raise one problem naming the converter when ``name`` is in another format."""
    found = foreign_format(doc, data, name)
    if found is not None:
        raise OVEarthInputError([Problem(name, "(document)", "an OVEarth JSON file; convert "
                                         f"this one first: {found[1]}", f"<{found[0]}>")])


def _parse_error(err: orjson.JSONDecodeError, data: bytes, context: int = 30) -> str:
    """orjson's message, with the text around the offending character (a one-line file's
    "column 5,000,123" alone does not help)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return str(err)
    if not text or not 0 <= err.pos <= len(text):
        return str(err)
    lo, hi = max(0, err.pos - context), min(len(text), err.pos + context)
    return f"{err}, near {'...' if lo else ''}{text[lo:hi]!r}{'...' if hi < len(text) else ''}"


def _int_field(obj: dict[str, Any], key: str) -> int | None:
    value = obj.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _id(value: object) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def parse_ground_truth(doc: dict[str, Any], name: str,
                       modalities: tuple[str, ...] = MODALITIES) -> GroundTruth:
    """Validate a ground-truth document (all tasks) into typed annotations and queries.

    Annotations are walked once; their boxes and oriented boxes are then parsed
    in one batch each, and problems are reported in document order. Only the geometry of
    ``modalities`` is parsed and validated: without ``segmentation`` the masks are neither
    decoded nor checked (a boxes-only run scores none), without ``oriented_bbox`` neither
    are ``oriented_bbox`` / ``ignore_oriented_bbox``; ``bbox`` is always read.
    """
    with gc_paused():
        return _parse_ground_truth(doc, name, modalities)


def _parse_ground_truth(doc: dict[str, Any], name: str,
                        modalities: tuple[str, ...]) -> GroundTruth:
    _refuse_foreign(doc, b"", name)
    found = OrderedProblems(name)
    raw_anns = doc.get("annotations")
    if not isinstance(raw_anns, list):
        found.add((0,), "annotations", "a list of annotation objects",
                  raw_anns if raw_anns is not None else "<missing>")
        raw_anns = []
    concave: list[Problem] = []
    annotations, broken = _parse_annotations(raw_anns, found, modalities, concave)
    bad = found.settle()
    raw_tasks = doc.get("tasks")
    tasks: dict[str, list[Query]] = {}
    if not isinstance(raw_tasks, dict):
        bad.add("tasks", "an object of task lists", raw_tasks if raw_tasks is not None
                else "<missing>")
        raw_tasks = {}
    seen: set[str] = set()
    for key in TASK_KEYS.values():
        rows = raw_tasks.get(key, [])
        if not isinstance(rows, list):
            bad.add(f"tasks.{key}", "a list of queries", rows)
            rows = []
        tasks[key] = [q for q in (_parse_query(row, key, f"tasks.{key}[{i}]", annotations,
                                               seen, bad, broken)
                                  for i, row in enumerate(rows)) if q is not None]
    bad.raise_if_any()
    return GroundTruth(annotations, tasks, tuple(m for m in MODALITIES if m in modalities),
                       tuple(concave))


def _parse_annotations(raw_anns: list[object], found: OrderedProblems,
                       modalities: tuple[str, ...], concave: list[Problem]
                       ) -> tuple[dict[str, Annotation], set[str]]:
    """Valid annotations by id, and the ids of those reported invalid (the geometry of
    ``modalities`` only, see :func:`parse_ground_truth`); the concave oriented boxes go to
    ``concave``."""
    with_masks = "segmentation" in modalities
    stats = masks.compressed_stats(_string_counts(raw_anns)) if with_masks else {}
    pending: list[tuple[int, Annotation, str]] = []
    columns = {name: ListColumn(name) for name in GT_BOX_FIELDS
               if "oriented_bbox" in modalities or name not in _OBB_FIELDS}
    for i, ann in enumerate(raw_anns):
        where = f"annotations[{i}]"
        if not isinstance(ann, dict):
            found.add((1, i), where, "an annotation object", ann)
            continue
        fields = _parse_annotation(ann, where, found, (1, i), stats, with_masks)
        if fields is None:  # no id: nothing else is checked
            pending.append((i, _INVALID, ""))
            continue
        pending.append((i, fields, _id(ann.get("id")) or ""))
        for column in columns.values():
            stage = _GT_STAGE[column.field]
            value = ann.get(column.field)
            if value is None:
                value = []
            if isinstance(value, list):
                column.add(i, value, tag=len(pending) - 1)
            else:
                found.add((1, i, stage), f"{where}.{column.field}", "a list", value)
                pending[-1] = (i, _INVALID, pending[-1][2])
    parsed = {name: _gt_arrays(column, _GT_PARSERS[name], _GT_STAGE[name], len(pending), found,
                               concave if name in _OBB_FIELDS else None)
              for name, column in columns.items()}
    skipped = [EMPTY_POLYS] * len(pending)
    for name in _OBB_FIELDS:
        parsed.setdefault(name, skipped)
    annotations: dict[str, Annotation] = {}
    broken: set[str] = set()
    for k, (i, fields, ann_id) in enumerate(pending):
        arrays = [parsed[name][k] for name in GT_BOX_FIELDS]
        if fields is _INVALID or any(a is None for a in arrays):
            broken.add(ann_id)
        elif fields.id in annotations:
            found.add((1, i, len(GT_BOX_FIELDS) + 1), f"annotations[{i}].id",
                      "a unique annotation id", fields.id)
        else:
            boxes, obbs, ignore_boxes, ignore_obbs = arrays
            counts = {len(a) for a in (boxes, obbs) if len(a)}
            if "oriented_bbox" not in columns:  # not parsed: their number is enough here
                raw = raw_anns[i].get("oriented_bbox")  # type: ignore[union-attr]
                counts |= {len(raw)} if isinstance(raw, list) and raw else set()
            unpaired = [(name, values.size, what) for name, values, what in (
                (f"annotations[{i}].difficult", fields.difficult, "flag"),
                (f"{_named(i, ann_id)}.area", fields.area, "area"))
                if values.size and counts != {values.size}]
            for name, size, what in unpaired:
                found.add((1, i, len(GT_BOX_FIELDS) + 2), name,
                          f"one {what} per target box (as many as bbox / oriented_bbox: "
                          f"{' or '.join(map(str, sorted(counts))) or 0})",
                          f"<{size} {what}s>")
            if unpaired:
                broken.add(ann_id)
                continue
            annotations[fields.id] = replace(fields, boxes=boxes, obbs=obbs,
                                             ignore_boxes=ignore_boxes, ignore_obbs=ignore_obbs)
    return annotations, broken


# Box lists of a ground-truth annotation, in checking order; the ignore_* lists are optional.
GT_BOX_FIELDS = ("bbox", "oriented_bbox", "ignore_bbox", "ignore_oriented_bbox")
# The lists of an annotation read index by index, one item per target object (the ignore
# regions are not objects): a derived ground truth moves an object's items together.
GT_OBJECT_FIELDS = ("bbox", "oriented_bbox", "difficult")
_OBB_FIELDS = ("oriented_bbox", "ignore_oriented_bbox")
_GT_STAGE = {name: stage for stage, name in enumerate(GT_BOX_FIELDS, start=1)}
_CONCAVE_POLYGONS = partial(boxparse.parse_polygons, concave=True)
_GT_PARSERS = {"bbox": boxparse.parse_gt_boxes, "oriented_bbox": _CONCAVE_POLYGONS,
               "ignore_bbox": boxparse.parse_gt_boxes,
               "ignore_oriented_bbox": _CONCAVE_POLYGONS}


def _gt_arrays(column: ListColumn, parse_batch: Any, stage: int, n: int,
               found: OrderedProblems, concave: list[Problem] | None = None
               ) -> list[np.ndarray | None]:
    """Per pending annotation: its parsed list, or ``None`` (first bad item reported);
    oriented boxes (``concave`` given) are parsed concave or not, each concave one added to
    ``concave`` as the problem it is under the spec's rule."""
    batch = column.parse(parse_batch)
    if concave is not None and len(batch.values):
        for k in np.flatnonzero(boxparse.concave_polygons(batch.values)).tolist():
            item = int(batch.index[k])
            slot, j = column.locate(item)
            concave.append(Problem(found.bad.file, f"annotations[{column.rows[slot]}]."
                                   f"{column.field}[{j}]", boxparse.CONVEX,
                                   describe(batch.values[k].tolist())))
    shape = batch.values.shape[1:]
    out: list[np.ndarray | None] = [None] * n
    for tag in column.tags:
        out[tag] = np.zeros((0, *shape))
    failed: set[int] = set()
    for item, err in batch.errors:
        slot, j = column.locate(item)
        if slot not in failed:
            failed.add(slot)
            row = column.rows[slot]
            found.add((1, row, stage), f"annotations[{row}].{column.field}[{j}]{err.field}",
                      err.expected, err.found)
            out[column.tags[slot]] = None
    for slot, lo, hi in column.spans(batch.index):
        if slot not in failed:
            out[column.tags[slot]] = batch.values[lo:hi]
    return out


def _string_counts(rows: object) -> list[str]:
    """Compressed RLE strings of the rows' ``segmentation`` fields (for batch checking)."""
    if not isinstance(rows, list):
        return []
    out = []
    for row in rows:
        seg = row.get("segmentation") if isinstance(row, dict) else None
        if isinstance(seg, dict) and isinstance(seg.get("counts"), str):
            out.append(seg["counts"])
    return out


def _parse_annotation(ann: dict[str, Any], where: str, found: OrderedProblems,
                      key: tuple[int, ...], stats: dict[str, tuple[int, int]],
                      with_mask: bool = True) -> Annotation | None:
    """The scalar fields of one annotation (no boxes yet; its mask when ``with_mask``),
    problems reported.

    ``None`` without an id (nothing else is checked then); ``_INVALID`` when
    another field is wrong (its box lists are still checked and reported).
    """
    ann_id = _id(ann.get("id"))
    if ann_id is None:
        found.add(key, f"{where}.id", "a non-empty string id", ann.get("id", "<missing>"))
        return None
    ok = True
    image_path = ann.get("image_path")
    if not isinstance(image_path, str) or not image_path:
        found.add(key, f"{where}.image_path", "a non-empty string path",
                  ann.get("image_path", "<missing>"))
        ok = False
    width, height = _int_field(ann, "width"), _int_field(ann, "height")
    for name, value in (("width", width), ("height", height)):
        if value is None:
            found.add(key, f"{where}.{name}", "a positive integer", ann.get(name, "<missing>"))
            ok = False
    category = ann.get("category_name", "")
    if not isinstance(category, str):
        found.add(key, f"{where}.category_name", "a string", category)
        ok = False
    mask = None
    try:
        mask, size = (masks.parse_rle(ann.get("segmentation"), stats) if with_mask
                      else (None, (0, 0)))
        if width and height and size != (0, 0) and size != (height, width):
            found.add(key, f"{where}.segmentation.size", f"[height, width] = [{height}, {width}]",
                      list(size))
            ok = False
    except FieldError as err:
        found.add(key, f"{where}.segmentation{err.field}", err.expected, err.found)
        ok = False
    difficult = _difficult_flags(ann.get("difficult"), where, found, key)
    area = _areas(ann.get("area"), _named(key[-1], ann_id), found, key)
    if difficult is None or area is None or not ok:
        return _INVALID
    return Annotation(ann_id, image_path, width, height, category, mask,  # type: ignore[arg-type]
                      EMPTY_BOXES, EMPTY_POLYS, difficult=difficult, area=area)


def _named(i: int, ann_id: str) -> str:
    """``annotations[3] (id 1_2)``: an annotation's position and id."""
    return f"annotations[{i}] (id {ann_id})"


def _areas(value: object, where: str, found: OrderedProblems, key: tuple[int, ...]
           ) -> np.ndarray | None:
    """The optional ``area`` list (one size per target box, COCO's ``area``: finite and
    >= 0) as a float array, empty when not given; ``None`` if invalid (every bad item
    reported)."""
    if value is None:
        return np.zeros(0)
    if not isinstance(value, list):
        found.add(key, f"{where}.area", "a list of areas, one per target box (finite numbers "
                  ">= 0, in square pixels)", value)
        return None
    bad = [(j, v) for j, v in enumerate(value)
           if not boxparse.finite_number(v) or v < 0]
    for j, v in bad:
        found.add(key, f"{where}.area[{j}]", "a finite number >= 0 (square pixels)", v)
    return None if bad else np.array(value, dtype=np.float64)


def _difficult_flags(value: object, where: str, found: OrderedProblems, key: tuple[int, ...]
                     ) -> np.ndarray | None:
    """DOTA's ``difficult`` list (0/1 or booleans) as a bool array; ``None`` if invalid."""
    if value is None:
        return np.zeros(0, dtype=bool)
    if not isinstance(value, list):
        found.add(key, f"{where}.difficult", "a list of 0 / 1 flags", value)
        return None
    for j, flag in enumerate(value):
        if flag not in (0, 1) or isinstance(flag, float):
            found.add(key, f"{where}.difficult[{j}]", "0 or 1", flag)
            return None
    return np.array(value, dtype=bool)


_INVALID = Annotation("", "", 0, 0, "", None, EMPTY_BOXES, EMPTY_POLYS)


def _parse_query(row: object, key: str, where: str, annotations: dict[str, Annotation],
                 seen: set[str], bad: ProblemCollector, broken: set[str]) -> Query | None:
    if not isinstance(row, dict):
        bad.add(where, "a query object", row)
        return None
    qid = row.get("query_id")
    if not isinstance(qid, str) or not qid:
        bad.add(f"{where}.query_id", "a non-empty string", row.get("query_id", "<missing>"))
        return None
    if qid in seen:
        bad.add(f"{where}.query_id", "a query_id unique across the ground truth", qid, qid)
        return None
    seen.add(qid)
    ann_id = _id(row.get("ann_id"))
    if ann_id is None or ann_id not in annotations:
        if ann_id not in broken:
            bad.add(f"{where}.ann_id", "the id of an existing annotation",
                    row.get("ann_id", "<missing>"), qid)
        return None
    negative = False
    text_key = "query"
    if key == "open_vocabulary":
        text_key = "phrase"
        kind = row.get("type")
        if kind not in ("positive", "negative"):
            bad.add(f"{where}.type", "\"positive\" or \"negative\"", row.get("type", "<missing>"),
                    qid)
            return None
        negative = kind == "negative"
    text = row.get(text_key, row.get("phrase", row.get("query", "")))
    if not isinstance(text, str):
        bad.add(f"{where}.{text_key}", "a string", text, qid)
        return None
    return Query(qid, ann_id, text, negative)


def parse_modalities(modalities: object) -> tuple[str, ...] | None:
    """Normalise the modalities option; ``None`` means ``auto``."""
    if isinstance(modalities, str):
        items = [m.strip() for m in modalities.split(",") if m.strip()]
    elif isinstance(modalities, Iterable):
        items = [str(m).strip() for m in modalities]
    else:
        items = []
    if items == ["auto"]:
        return None
    unknown = [m for m in items if m not in MODALITIES]
    if not items or unknown:
        raise OVEarthInputError([Problem("(options)", "--modalities",
                                         "a comma-separated subset of segmentation, bbox, "
                                         "oriented_bbox, or auto",
                                         ", ".join(items) if items else "nothing")])
    return tuple(m for m in MODALITIES if m in items)


def _check_options(score_threshold: float | None, bbox_format: str) -> None:
    problems = []
    if bbox_format not in BBOX_FORMATS:
        problems.append(Problem("(options)", "--bbox-format", "xyxy or xywh", repr(bbox_format)))
    if score_threshold is not None and (
            isinstance(score_threshold, bool) or not isinstance(score_threshold, (int, float))
            or not math.isfinite(score_threshold)):
        problems.append(Problem("(options)", "--score-threshold", "a finite number",
                                repr(score_threshold)))
    if problems:
        raise OVEarthInputError(problems)


def parse_predictions(doc: dict[str, Any], name: str, task_key: str, queries: list[Query],
                      annotations: dict[str, Annotation], modalities: tuple[str, ...],
                      score_threshold: float | None, bbox_format: str,
                      large_masks: bool = False, concave_obb: bool = False
                      ) -> dict[str, _Prediction]:
    """Validate the selected task's prediction rows, merging duplicates by query_id.
    Masks are taken up to the spec's 100,000,000 pixels (:data:`masks.SPEC_MAX_PIXELS`), up
    to the codec's cap with ``large_masks``; oriented boxes convex (the spec's rule), concave
    quadrilaterals too with ``concave_obb``.

    Rows are walked once; the box fields of all rows are then parsed in one batch
    per field (:mod:`~ovearth_core.geometry`'s ``parse_boxes`` / ``parse_obbs``).
    """
    max_pixels = masks.MAX_PIXELS if large_masks else masks.SPEC_MAX_PIXELS
    bad = ProblemCollector(name)
    tasks = doc.get("tasks", {})
    if tasks is None:
        tasks = {}
    if not isinstance(tasks, dict):
        bad.add("tasks", "an object of task lists", tasks)
        bad.raise_if_any()
    rows = tasks.get(task_key, [])
    if rows is None:
        rows = []
    if not isinstance(rows, list):
        bad.add(f"tasks.{task_key}", "a list of prediction rows", rows)
        bad.raise_if_any()
    found = OrderedProblems(name)
    by_id = {q.query_id: q for q in queries}
    preds: dict[str, _Prediction] = {}
    stats = masks.compressed_stats(_string_counts(rows)) if "segmentation" in modalities else {}
    columns = {m: ListColumn(m) for m in ("bbox", "oriented_bbox") if m in modalities}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            found.add((i,), f"tasks.{task_key}[{i}]", "a prediction row object", row)
            continue
        qid = row.get("query_id")
        if not isinstance(qid, str):
            found.add((i,), f"tasks.{task_key}[{i}].query_id", "a string query_id",
                      row.get("query_id", "<missing>"))
            continue
        query = by_id.get(qid)
        if query is None:
            found.add((i,), f"tasks.{task_key}[{i}].query_id",
                      f"a query_id of the ground truth's {task_key} task",
                      f"<unknown id {qid[:40]!r}{'...' if len(qid) > 40 else ''}>", qid[:40])
            continue
        pred = preds.get(qid)
        if pred is None:
            pred = preds[qid] = _Prediction()
        if "segmentation" in modalities:
            ann = annotations[query.ann_id]
            _merge_mask(pred, row.get("segmentation"), (ann.height, ann.width),
                        f"tasks.{task_key}[{i}]", qid, found, i, stats, max_pixels)
        for stage, column in enumerate(columns.values(), start=2):
            value = row.get(column.field)
            if value is None:
                continue
            if not isinstance(value, list):
                found.add((i, stage, -1), f"tasks.{task_key}[{i}].{column.field}",
                          "a list of boxes ([] for none)", value, qid)
                continue
            column.add(i, value, tag=(qid, pred))
    for stage, column in enumerate(columns.values(), start=2):
        _file_boxes(column, stage, f"tasks.{task_key}", found, score_threshold, bbox_format,
                    concave_obb)
    found.raise_if_any()
    for pred in preds.values():  # once per query: merging row by row is quadratic
        pred.mask, pred.row_masks = masks.union(pred.row_masks), []
    return preds


def _merge_mask(pred: _Prediction, value: object, gt_size: tuple[int, int], where: str,
                qid: str, found: OrderedProblems, row: int,
                stats: dict[str, tuple[int, int]], max_pixels: int) -> None:
    key = (row, 1)
    try:
        rle, size = masks.parse_rle(value, stats, max_pixels)
    except FieldError as err:
        found.add(key, f"{where}.segmentation{err.field}", err.expected, err.found, qid)
        return
    if size == (0, 0):
        return
    if size != gt_size:
        found.add(key, f"{where}.segmentation.size",
                  f"the ground-truth mask size [height, width] = {list(gt_size)} (or the [0, 0] "
                  "empty sentinel)", list(size), qid)
        return
    if pred.mask_size not in ((0, 0), size):
        found.add(key, f"{where}.segmentation.size",
                  f"the same size as this query_id's earlier row {list(pred.mask_size)}",
                  list(size), qid)
        return
    pred.mask_size = size
    if rle is not None:
        pred.row_masks.append(rle)


def _file_boxes(column: ListColumn, stage: int, where: str, found: OrderedProblems,
                score_threshold: float | None, bbox_format: str, concave_obb: bool) -> None:
    """Parse a column's boxes in one batch; report problems, file every box per row (the
    score threshold is applied later, as a view: :func:`_thresholded`; here it only asks
    every box for a score)."""
    if column.field == "bbox":
        batch = column.parse(lambda items: boxparse.parse_boxes(items, bbox_format))
    else:
        batch = column.parse(lambda items: boxparse.parse_obbs(items, concave_obb))

    def report(item: int, suffix: str, expected: str, found_value: object) -> None:
        slot, j = column.locate(item)
        row = column.rows[slot]
        found.add((row, stage, j), f"{where}[{row}].{column.field}[{j}]{suffix}", expected,
                  found_value, column.tags[slot][0])

    for item, err in batch.errors:
        report(item, err.field, err.expected, err.found)
    if score_threshold is not None:
        missing = np.isnan(batch.scores)
        for item in batch.index[missing].tolist():
            report(item, ".score", "a score on every box when --score-threshold is set",
                   "<missing>")
    values, scores = batch.values, batch.scores
    boxes = column.field == "bbox"
    for slot, lo, hi in column.spans(batch.index):
        target = column.tags[slot][1]
        (target.boxes if boxes else target.obbs).append(values[lo:hi])
        (target.box_scores if boxes else target.obb_scores).append(scores[lo:hi])


# The typed decode of a boxes-only run (issue 49); the tests turn it off to compare with
# the checker alone.
TYPED_DECODE = True
_NAN = math.nan


@dataclass(frozen=True)
class _TypedGroundTruth:
    """A ground truth the typed decode vouches for: its annotations (checked as
    :func:`parse_ground_truth` checks them) and its decoded queries (every rule checked,
    no :class:`Query` built yet)."""

    annotations: dict[str, Annotation]
    tasks: Any  # typed_decode.GtTasks

    def ground_truth(self) -> GroundTruth:
        """What ``parse_ground_truth(doc, name, ("bbox",))`` gives."""
        return GroundTruth(self.annotations,
                           {key: [Query(q.query_id, _ann_id(q.ann_id), _query_text(q, key),
                                        q.type == "negative")
                                  for q in getattr(self.tasks, key)]
                            for key in TASK_KEYS.values()}, ("bbox",), ())


def _ann_id(value: str | int) -> str:
    return value if type(value) is str else str(value)


def _query_text(q: Any, key: str) -> str:
    """A decoded query's text, as :func:`_parse_query` takes it."""
    first, second = (q.phrase, q.query) if key == "open_vocabulary" else (q.query, q.phrase)
    return first if type(first) is str else second if type(second) is str else ""


def _typed_ground_truth(data: bytes) -> _TypedGroundTruth | None:
    """What ``parse_ground_truth(doc, name, ("bbox",))`` vouches for in the document
    ``data``, from its typed decode (:mod:`~ovearth_core.typed_decode`); ``None`` unless the
    decode succeeds and every check passes (the checker then reports on the same bytes)."""
    from . import typed_decode  # imported by a boxes-only load only

    doc = typed_decode.decode_ground_truth(data)
    if doc is None:
        return None
    anns = doc.annotations
    boxes = _typed_gt_boxes([a.bbox for a in anns])
    ignore = (_typed_gt_boxes([a.ignore_bbox for a in anns])
              if any(a.ignore_bbox for a in anns) else [_NO_GT_BOXES] * len(anns))
    if boxes is None or ignore is None:
        return None
    annotations: dict[str, Annotation] = {}
    for a, ann_boxes, ann_ignore in zip(anns, boxes, ignore, strict=True):
        ann_id = _ann_id(a.id)
        if (not ann_id or ann_id in annotations or not a.image_path or a.width <= 0
                or a.height <= 0):
            return None
        difficult, area = _NO_FLAGS, _NO_AREAS
        if a.difficult is not None or a.area is not None:
            counts = {len(ann_boxes)} if len(ann_boxes) else set()
            obbs = typed_decode.raw_list_length(a.oriented_bbox)
            counts |= {obbs} if obbs else set()
            if a.difficult is not None:
                if any(f not in (0, 1) for f in a.difficult):
                    return None
                difficult = np.array(a.difficult, dtype=bool)
            if a.area is not None:
                if any(v < 0 for v in a.area):
                    return None
                area = np.array(a.area, dtype=np.float64)
            if any(x.size and counts != {x.size} for x in (difficult, area)):
                return None
        annotations[ann_id] = Annotation(ann_id, a.image_path, a.width, a.height,
                                         a.category_name, None, ann_boxes, EMPTY_POLYS,
                                         ignore_boxes=ann_ignore, difficult=difficult,
                                         area=area)
    seen: set[str] = set()
    total = 0
    for key in TASK_KEYS.values():
        queries = getattr(doc.tasks, key)
        ids = [q.query_id for q in queries]
        seen.update(ids)
        total += len(ids)
        if not all(ids) or not annotations.keys() >= {_ann_id(q.ann_id) for q in queries}:
            return None
        if key == "open_vocabulary" and not {q.type for q in queries} <= _QUERY_TYPES:
            return None
    if len(seen) != total:  # a query_id twice
        return None
    return _TypedGroundTruth(annotations, doc.tasks)


_QUERY_TYPES = {"positive", "negative"}
_NO_FLAGS = np.zeros(0, dtype=bool)
_NO_AREAS = np.zeros(0)
_NO_GT_BOXES = np.zeros((0, 4))


def _typed_gt_boxes(lists: list[list[tuple[float, float, float, float]] | None]
                    ) -> list[np.ndarray] | None:
    """Each annotation's COCO boxes as xyxy (:func:`~ovearth_core.boxparse.gt_box_checks`,
    the checker's arithmetic), or ``None`` if one is invalid."""
    flat = [box for boxes in lists if boxes for box in boxes]
    if not flat:
        return [_NO_GT_BOXES] * len(lists)
    values, ok, _ = boxparse.gt_box_checks(np.array(flat, dtype=np.float64))
    if not ok.all():
        return None
    out, lo = [], 0
    for boxes in lists:
        hi = lo + len(boxes) if boxes else lo
        out.append(values[lo:hi])
        lo = hi
    return out


def _typed_predictions(data: bytes, task_key: str, gt: _TypedGroundTruth,
                       score_threshold: float | None, bbox_format: str
                       ) -> tuple[list[Sample], tuple[str, ...], tuple[str, ...]] | None:
    """What a boxes-only load gives from the prediction document ``data`` and the ground
    truth ``gt``, from the document's typed decode: every query's sample with every box (as
    :func:`parse_predictions` then :func:`_build_sample` give them), and the modalities
    submitted with and without the score threshold (:func:`_submitted_modalities`);
    ``None`` unless the decode succeeds and every check passes (the checker then reports on
    the same bytes)."""
    from . import typed_decode  # imported by a boxes-only load only

    rows = typed_decode.decode_predictions(data, task_key)
    if rows is None:
        return None
    queries = getattr(gt.tasks, task_key)
    known = {q.query_id for q in queries}
    spans: dict[str, list[tuple[int, int]]] = {}  # each query's rows' boxes, in row order
    coords: list[tuple[float, float, float, float]] = []
    scores: list[float] = []
    box_object = typed_decode.BoxObject
    for row in rows:
        qid = row.query_id
        mine = spans.get(qid)
        if mine is None:
            if qid not in known:
                return None
            mine = spans[qid] = []
        row_boxes = row.bbox
        if not row_boxes:
            continue
        lo = len(coords)
        try:  # every box an object (the usual form), else mixed with the shorthand
            coords += [b.bbox for b in row_boxes]  # type: ignore[union-attr]
            scores += [b.score for b in row_boxes]  # type: ignore[union-attr]
        except AttributeError:
            del coords[lo:], scores[lo:]
            coords += [b.bbox if type(b) is box_object else b  # type: ignore[union-attr]
                       for b in row_boxes]
            scores += [b.score if type(b) is box_object else _NAN  # type: ignore[union-attr]
                       for b in row_boxes]
        mine.append((lo, len(coords)))
    values, kept_scores, ends = _NO_GT_BOXES, EMPTY_SCORES, None
    if coords:
        flat = np.fromiter(chain.from_iterable(coords), np.float64, 4 * len(coords))
        values, ok, sentinel = boxparse.box_checks(flat.reshape(-1, 4), bbox_format)
        kept_scores = np.array(scores, dtype=np.float64)
        if not ok.all():  # sentinels dropped, anything else refused
            if not (ok | sentinel).all():
                return None
            values, kept_scores = values[ok], kept_scores[ok]
            ends = [0, *np.cumsum(ok).tolist()]  # kept boxes before each box
        if score_threshold is not None and np.isnan(kept_scores).any():
            return None
    every_submitted = ("bbox",) if kept_scores.size else ()
    submitted = every_submitted if score_threshold is None or (
        kept_scores >= score_threshold).any() else ()
    no_flags = np.zeros(0, dtype=bool)
    samples = []
    for q in queries:
        qid = q.query_id
        ann = gt.annotations[_ann_id(q.ann_id)]
        negative = q.type == "negative"
        mine = spans.get(qid)
        boxes, box_scores = EMPTY_BOXES, EMPTY_SCORES
        if mine:
            if ends is not None:
                mine = [(ends[lo], ends[hi]) for lo, hi in mine if ends[hi] > ends[lo]]
            if len(mine) == 1:
                (lo, hi), = mine
                boxes, box_scores = values[lo:hi], kept_scores[lo:hi]
            elif mine:
                boxes = np.concatenate([values[lo:hi] for lo, hi in mine])
                box_scores = np.concatenate([kept_scores[lo:hi] for lo, hi in mine])
        samples.append(Sample(
            sample_id=qid, phrase=_query_text(q, task_key), negative=negative,
            image_path=ann.image_path, ann_id=ann.id, category=ann.category, width=ann.width,
            height=ann.height, gt_boxes=EMPTY_BOXES if negative else ann.boxes,
            pred_boxes=boxes, pred_box_scores=box_scores, has_prediction_row=mine is not None,
            gt_ignore_boxes=EMPTY_BOXES if negative else ann.ignore_boxes,
            gt_difficult=no_flags if negative else ann.difficult,
            gt_area=EMPTY_SCORES if negative else ann.area,
            gt_obbs=EMPTY_POLYS, gt_ignore_obbs=EMPTY_POLYS, pred_obbs=EMPTY_POLYS,
            pred_obb_scores=EMPTY_SCORES))
    return samples, submitted, every_submitted


def _submitted_modalities(preds: dict[str, _Prediction],
                          score_threshold: float | None) -> tuple[str, ...]:
    """Modalities with at least one non-empty prediction after the score threshold (the
    rule of ``auto``)."""
    def kept(scores: list[np.ndarray]) -> bool:
        return any(score_threshold is None or bool((s >= score_threshold).any())
                   for s in scores)

    found = {
        "segmentation": any(p.mask is not None for p in preds.values()),
        "bbox": any(kept(p.box_scores) for p in preds.values()),
        "oriented_bbox": any(kept(p.obb_scores) for p in preds.values()),
    }
    return tuple(m for m in MODALITIES if found[m])


def _infer_modalities(submitted: tuple[str, ...], name: str) -> tuple[str, ...]:
    chosen = submitted
    if not chosen:
        raise OVEarthInputError([Problem(name, "--modalities auto",
                                         "at least one non-empty prediction to infer modalities "
                                         "from (declare --modalities explicitly)",
                                         "only empty predictions")])
    return chosen


def load_samples(gt_path: PathLike, pred_path: PathLike, task: str,
                 score_threshold: float | None = None, bbox_format: str = "xyxy",
                 modalities: object = ("segmentation",), ground_truth: GroundTruth | None = None,
                 predictions_doc: dict[str, Any] | None = None,
                 large_masks: bool = False, concave_obb: bool = False) -> SampleList:
    """Load and validate one task's samples.

    Args:
        gt_path: ground-truth JSON path.
        pred_path: prediction JSON path.
        task: ``vocabulary``, ``referring`` or ``reasoning`` (or the JSON key).
        score_threshold: keep boxes with ``score >= threshold``; every box needs a score.
        bbox_format: ``xyxy`` or ``xywh`` for predicted axis-aligned boxes.
        modalities: a set of modality names, a comma-separated string, or ``"auto"``.
        ground_truth: an already parsed ground truth (skips reading ``gt_path``).
        predictions_doc: an already read prediction document (skips reading ``pred_path``).
        large_masks: take predicted masks beyond the spec's 100,000,000 pixels (up to
            :data:`masks.MAX_PIXELS`, as ground-truth masks are).
        concave_obb: take concave oriented boxes (ground truth and predictions), scored as
            their polygons as DOTA_devkit scores them; the spec refuses them.
    """
    with gc_paused():
        return _load_samples(gt_path, pred_path, task, score_threshold, bbox_format, modalities,
                             ground_truth, predictions_doc, large_masks, concave_obb)


def _load_samples(gt_path: PathLike, pred_path: PathLike, task: str,
                  score_threshold: float | None, bbox_format: str, modalities: object,
                  ground_truth: GroundTruth | None,
                  predictions_doc: dict[str, Any] | None, large_masks: bool,
                  concave_obb: bool) -> SampleList:
    task_key = TASK_KEYS.get(task, task)
    if task_key not in TASK_KEYS.values():
        raise OVEarthInputError([Problem("(options)", "--task",
                                         "vocabulary, referring or reasoning", repr(task))])
    _check_options(score_threshold, bbox_format)
    chosen = parse_modalities(modalities)
    # A boxes-only run read from the files: the typed decode first (issue 49), the checker
    # below on the same bytes whenever it does not vouch for a document.
    typed = (TYPED_DECODE and chosen == ("bbox",) and ground_truth is None
             and predictions_doc is None)
    pred_bytes = None
    if typed:
        gt_bytes = read_input(gt_path, "ground-truth")
        typed_gt = _typed_ground_truth(gt_bytes)
        if typed_gt is None:
            ground_truth = parse_ground_truth(parse_json(gt_bytes, str(gt_path)), str(gt_path),
                                              ("bbox",))
        else:
            pred_bytes = read_input(pred_path, "prediction")
            vouched = _typed_predictions(pred_bytes, task_key, typed_gt, score_threshold,
                                         bbox_format)
            if vouched is not None:
                every, submitted, every_submitted = vouched
                return _sample_lists(every, task_key, ("bbox",), ("bbox",), submitted,
                                     every_submitted, (), score_threshold, bbox_format,
                                     concave_obb, str(pred_path))
            ground_truth = typed_gt.ground_truth()
    gt = ground_truth or parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path),
                                            chosen or MODALITIES)
    if not set(chosen or MODALITIES) <= set(gt.modalities):
        raise ValueError(f"the ground truth was parsed for {', '.join(gt.modalities)} only: "
                         f"parse it for {', '.join(chosen or MODALITIES)}")
    if gt.concave and not concave_obb and "oriented_bbox" in (chosen or MODALITIES):
        raise OVEarthInputError(list(gt.concave[:MAX_REPORTED]), len(gt.concave))
    queries = gt.tasks[task_key]
    if typed and pred_bytes is None:
        pred_bytes = read_input(pred_path, "prediction")
    doc = (predictions_doc if predictions_doc is not None
           else parse_json(pred_bytes, str(pred_path)) if pred_bytes is not None
           else read_json(pred_path, "prediction"))
    preds = parse_predictions(doc, str(pred_path), task_key, queries, gt.annotations,
                              chosen or MODALITIES, score_threshold, bbox_format,
                              large_masks, concave_obb)
    tasks = doc.get("tasks")
    unknown = tuple(str(k) for k in tasks if k not in TASK_KEYS.values()) if isinstance(
        tasks, dict) else ()
    submitted = _submitted_modalities(preds, score_threshold)
    every_submitted = submitted if score_threshold is None else _submitted_modalities(preds, None)
    # ``auto``: the evaluation's modalities follow the threshold (the spec infers them after
    # confidence filtering); every box's (what AP and the sweep rank) are inferred from every
    # box, as a load without the threshold infers them. A modality the threshold empties has
    # no box left in the view, so the view's samples are the thresholded every-box samples.
    every_chosen = chosen
    if chosen is None:
        every_chosen = _infer_modalities(every_submitted, str(pred_path))
        chosen = (every_chosen if score_threshold is None
                  else _infer_modalities(submitted, str(pred_path)))
    every = [_build_sample(q, gt.annotations[q.ann_id], preds.get(q.query_id), every_chosen)
             for q in queries]
    return _sample_lists(every, task_key, chosen, every_chosen, submitted, every_submitted,
                         unknown, score_threshold, bbox_format, concave_obb, str(pred_path))


def _sample_lists(every: list[Sample], task_key: str, chosen: tuple[str, ...],
                  every_chosen: tuple[str, ...], submitted: tuple[str, ...],
                  every_submitted: tuple[str, ...], unknown: tuple[str, ...],
                  score_threshold: float | None, bbox_format: str, concave_obb: bool,
                  pred_file: str) -> SampleList:
    """The loaded view of samples ``every`` (every box): the threshold applied, held to the
    pair cap, with every box attached (:meth:`SampleList.with_every_box`)."""
    samples = every if score_threshold is None else [_thresholded(s, score_threshold)
                                                     for s in every]
    check_pair_cap(samples, chosen, pred_file)
    out = SampleList(samples, task=task_key, modalities=chosen,
                     score_threshold=score_threshold, bbox_format=bbox_format,
                     submitted=submitted, unknown_task_keys=unknown, concave_obb=concave_obb)
    if score_threshold is None:
        return out
    return out.with_every_box(SampleList(every, task=task_key, modalities=every_chosen,
                                         score_threshold=None, bbox_format=bbox_format,
                                         submitted=every_submitted,
                                         unknown_task_keys=unknown, concave_obb=concave_obb),
                              pred_file)


def _thresholded(sample: Sample, threshold: float) -> Sample:
    """``sample`` with the predicted boxes scoring at least ``threshold`` (the others
    dropped, as the spec's confidence filtering does); the sample itself when all stay."""
    keep_b = sample.pred_box_scores >= threshold
    keep_o = sample.pred_obb_scores >= threshold
    if keep_b.all() and keep_o.all():
        return sample
    return replace(
        sample,
        pred_boxes=sample.pred_boxes[keep_b] if keep_b.any() else EMPTY_BOXES,
        pred_box_scores=sample.pred_box_scores[keep_b] if keep_b.any() else EMPTY_SCORES,
        pred_obbs=sample.pred_obbs[keep_o] if keep_o.any() else EMPTY_POLYS,
        pred_obb_scores=sample.pred_obb_scores[keep_o] if keep_o.any() else EMPTY_SCORES)


def _build_sample(q: Query, ann: Annotation, pred: _Prediction | None,
                  modalities: tuple[str, ...]) -> Sample:
    sample = Sample(sample_id=q.query_id, phrase=q.text, negative=q.negative,
                    image_path=ann.image_path, ann_id=ann.id, category=ann.category,
                    width=ann.width, height=ann.height, has_prediction_row=pred is not None)
    if not q.negative:
        sample.gt_mask = ann.mask
        sample.gt_boxes = ann.boxes
        sample.gt_obbs = ann.obbs
        sample.gt_ignore_boxes = ann.ignore_boxes
        sample.gt_ignore_obbs = ann.ignore_obbs
        sample.gt_difficult = ann.difficult
        sample.gt_area = ann.area
    if pred is None:
        return sample
    if "segmentation" in modalities:
        sample.pred_mask = pred.mask
    if "bbox" in modalities and pred.boxes:
        sample.pred_boxes = _joined(pred.boxes)
        sample.pred_box_scores = _joined(pred.box_scores)
    if "oriented_bbox" in modalities and pred.obbs:
        sample.pred_obbs = _joined(pred.obbs)
        sample.pred_obb_scores = _joined(pred.obb_scores)
    return sample


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def load_open_vocab_samples(gt_path: PathLike, pred_path: PathLike,
                            score_threshold: float | None = None, bbox_format: str = "xyxy",
                            modalities: object = ("segmentation",)) -> SampleList:
    """Samples of the open-vocabulary task (positive and negative queries)."""
    return load_samples(gt_path, pred_path, "vocabulary", score_threshold, bbox_format, modalities)


def load_referring_samples(gt_path: PathLike, pred_path: PathLike,
                           score_threshold: float | None = None, bbox_format: str = "xyxy",
                           modalities: object = ("segmentation",)) -> SampleList:
    """Samples of the referring-expression task (positive queries only)."""
    return load_samples(gt_path, pred_path, "referring", score_threshold, bbox_format, modalities)


def load_reasoning_samples(gt_path: PathLike, pred_path: PathLike,
                           score_threshold: float | None = None, bbox_format: str = "xyxy",
                           modalities: object = ("segmentation",)) -> SampleList:
    """Samples of the reasoning task (positive queries only)."""
    return load_samples(gt_path, pred_path, "reasoning", score_threshold, bbox_format, modalities)
