"""The typed decode of a boxes-only load (issue 49): the two OVEarth files decoded by msgspec
into :class:`msgspec.Struct` s of the spec's fields, before any check of :mod:`~ovearth_core.io`.

Only :func:`ovearth_core.io.load_samples` of a ``--modalities bbox`` run uses it, and only as
a fast path: :func:`decode_ground_truth` / :func:`decode_predictions` give ``None`` for any
document they do not decode, and io's own validation then runs on the same bytes, with its
messages. What they decode, orjson accepts too, with the same values:

* every value it decodes is typed (``float``, ``int``, ``str``, ``None``): msgspec checks a
  float against the double range (``1e400`` refused, as orjson refuses it), an integer
  against int64 (:data:`Int`; orjson's integers are 64-bit), a string's UTF-8 and escapes
  (lone surrogates refused);
* an unknown key anywhere (``forbid_unknown_fields``) or a value of another type makes the
  decode fail, and the whole document goes to io's checker;
* the values it skips, which a boxes-only run neither scores nor checks (the masks, the
  oriented boxes, every value of the tasks not scored but their texts: raw JSON, which
  msgspec checks for syntax, strings and escapes only, never materialising them), are read
  from an ASCII document only (so their strings are UTF-8), nested no deeper than orjson
  allows (:data:`ORJSON_DEPTH`), and their numbers are checked against the double range by
  their characters (:func:`in_double_range`; a raw string holds none); otherwise the
  document is decoded in full;
* duplicate keys: the last value, as orjson (both build the object key by key).

``msgspec`` is imported here only, and this module only from inside the load (no command's
start or warm path imports it; tests/core/test_lazy_imports.py).
"""

from __future__ import annotations

import math
import sys
from functools import cache
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

# An integer orjson reads as one: msgspec takes any size, orjson reads a JSON integer beyond
# 64 bits as a float (and refuses one beyond the double range), so a larger one is not
# decoded here (nor, msgspec's bounds being int64, one from 2**63 to 2**64 - 1).
Int = Annotated[int, Meta(ge=-(2 ** 63), le=2 ** 63 - 1)]
Box = tuple[float, float, float, float]
Points = list[list[float]]  # an oriented box's vertices (decoded, not checked here)


class Rle(Struct, forbid_unknown_fields=True, gc=False):
    """A mask of the full decode."""

    size: list[Int]
    counts: str | list[Int]


_NULL = Raw(b"null")


class SkippedRle(Struct, forbid_unknown_fields=True, gc=False):
    """A mask a boxes-only run does not read: its values kept as raw JSON, never
    materialised (a compressed ``counts`` string is most of a file's bytes); its numbers
    checked by :func:`in_double_range`, a raw string needing no check (msgspec checks its
    escapes, ASCII its UTF-8)."""

    size: Raw = _NULL
    counts: Raw = _NULL


class GtAnnotation(Struct, forbid_unknown_fields=True, gc=False):
    id: str | Int
    image_path: str
    width: Int
    height: Int
    category_name: str = ""
    segmentation: SkippedRle | None = None
    bbox: list[Box] | None = None
    oriented_bbox: Raw = _NULL
    ignore_bbox: list[Box] | None = None
    ignore_oriented_bbox: Raw = _NULL
    difficult: list[Int] | None = None
    area: list[float] | None = None


class GtQuery(Struct, forbid_unknown_fields=True, gc=False):
    query_id: str
    ann_id: str | Int
    type: str | UnsetType = UNSET
    phrase: str | UnsetType = UNSET
    query: str | UnsetType = UNSET


class GtTasks(Struct, forbid_unknown_fields=True, gc=False):
    open_vocabulary: list[GtQuery] = []
    referring: list[GtQuery] = []
    reasoning: list[GtQuery] = []


class GtDocument(Struct, forbid_unknown_fields=True, gc=False):
    annotations: list[GtAnnotation]
    tasks: GtTasks


class BoxObject(Struct, forbid_unknown_fields=True, gc=False):
    bbox: Box
    score: float = math.nan  # JSON has no NaN: nan is a box without a score


class PolygonObject(Struct, forbid_unknown_fields=True):
    polygon: Points
    score: float | None = None


Boxes = list[Box | BoxObject] | None  # a prediction row's ``bbox``


class PredictionRow(Struct, forbid_unknown_fields=True, gc=False):
    """A row of the scored task in the lean decode: its ``query_id`` and ``bbox`` decoded,
    the rest kept as raw JSON (:func:`in_double_range` checks their numbers)."""

    query_id: str
    phrase: str | None = None
    query: str | None = None
    segmentation: SkippedRle | None = None
    bbox: Boxes = None
    oriented_bbox: Raw = _NULL


class SkippedRow(Struct, forbid_unknown_fields=True, gc=False):
    """A row of a task the run does not score: nothing decoded (the checker reads none of
    it either), every value raw JSON."""

    query_id: str | None = None
    phrase: str | None = None
    query: str | None = None
    segmentation: SkippedRle | None = None
    bbox: Raw = _NULL
    oriented_bbox: Raw = _NULL


@cache
def _prediction_decoder(task_key: str) -> msgspec.json.Decoder:
    """The lean decoder of a prediction document scored on ``task_key``: that task's rows
    as :class:`PredictionRow`, the other tasks' as :class:`SkippedRow`."""
    tasks = msgspec.defstruct(
        "PredictionTasks",
        [(key, (list[PredictionRow] if key == task_key else list[SkippedRow]) | None, None)
         for key in _TASKS], forbid_unknown_fields=True, gc=False)
    document = msgspec.defstruct("PredictionDocument", [("tasks", tasks | None, None)],
                                 forbid_unknown_fields=True, gc=False)
    return msgspec.json.Decoder(document)


class FullPredictionRow(Struct, forbid_unknown_fields=True):
    """A row of the full decode: every value decoded."""

    query_id: str
    phrase: str | None = None
    query: str | None = None
    segmentation: Rle | None = None
    bbox: Boxes = None
    oriented_bbox: list[Points | PolygonObject] | None = None


class FullPredictionTasks(Struct, forbid_unknown_fields=True):
    open_vocabulary: list[FullPredictionRow] | None = None
    referring: list[FullPredictionRow] | None = None
    reasoning: list[FullPredictionRow] | None = None


class FullPredictionDocument(Struct, forbid_unknown_fields=True):
    tasks: FullPredictionTasks | None = None


class FullGtAnnotation(Struct, forbid_unknown_fields=True, gc=False):
    """An annotation of the full decode (a document beyond ASCII): every value decoded."""

    id: str | Int
    image_path: str
    width: Int
    height: Int
    category_name: str = ""
    segmentation: Rle | None = None
    bbox: list[Box] | None = None
    oriented_bbox: list[Points] | None = None
    ignore_bbox: list[Box] | None = None
    ignore_oriented_bbox: list[Points] | None = None
    difficult: list[Int] | None = None
    area: list[float] | None = None


class FullGtDocument(Struct, forbid_unknown_fields=True, gc=False):
    annotations: list[FullGtAnnotation]
    tasks: GtTasks


_TASKS = ("open_vocabulary", "referring", "reasoning")

# Each decoder built on first use (a load needs two or three of them).
@cache
def _decoder(kind: type) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(kind)


# orjson refuses nesting beyond 1,024 levels; msgspec, skipping a raw value, beyond the
# interpreter's recursion limit: the lean decode only while that limit is no higher.
ORJSON_DEPTH = 1024
# Digits to "0", exponent marks to "e", signs to "+", the rest to " " (:func:`in_double_range`).
_NUMBER_SHAPES = bytes(ord("0") if chr(c) in "0123456789" else ord("e") if chr(c) in "eE"
                       else ord("+") if chr(c) in "+-" else ord(" ") for c in range(256))


def _lean(data: bytes) -> bool:
    """Whether ``data`` may be decoded lean (values skipped as raw JSON): an ASCII document
    (its skipped strings then valid UTF-8) while msgspec's nesting limit is orjson's."""
    return data.isascii() and sys.getrecursionlimit() <= ORJSON_DEPTH


def _unchecked(raws: list[Raw], out: list[Raw]) -> None:
    """Add to ``out`` the raw values of ``raws`` that may hold a number (not a string)."""
    out += [r for r in raws if memoryview(r)[:1] != b'"']


def decode_ground_truth(data: bytes) -> GtDocument | FullGtDocument | None:
    """The ground-truth document, or ``None`` when it is not one of the shapes above or
    holds anything orjson would refuse. An ASCII document is decoded lean: the masks and
    oriented boxes (which a boxes-only run neither reads nor checks) kept as raw JSON,
    their numbers checked by :func:`in_double_range`; any other one in full."""
    try:
        if not _lean(data):
            return _decoder(FullGtDocument).decode(data)
        doc = _decoder(GtDocument).decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    numbers = [r for a in doc.annotations for r in (a.oriented_bbox, a.ignore_oriented_bbox)
               if r != _NULL]
    masks = [a.segmentation for a in doc.annotations if a.segmentation is not None]
    _unchecked([m.counts for m in masks], numbers)
    numbers += [m.size for m in masks]
    return doc if in_double_range(b"".join(numbers)) else None


def raw_list_length(value: Raw | list | None) -> int | None:
    """The number of items of a skipped value that is a JSON array (``None`` for any
    other value); a decoded list's length (the full decode)."""
    if isinstance(value, list):
        return len(value)
    if value is None or memoryview(value)[:1] != b"[":
        return None
    return len(_decoder(list[Raw]).decode(value))


def decode_predictions(data: bytes, task_key: str) -> list | None:
    """The rows of task ``task_key`` (each with its ``query_id`` and ``bbox``: a list of
    ``Box`` tuples and :class:`BoxObject` s, or ``None``), or ``None`` when the document is
    not one of the shapes above or holds anything orjson would refuse.

    An ASCII document (all its strings then valid UTF-8) is decoded lean: everything but
    the scored task's ``query_id`` and ``bbox`` is skipped by msgspec (its syntax and
    strings checked, as JSON) and then its numbers checked against the double range in one
    pass over their bytes (:func:`in_double_range`); any other document is decoded in full.
    """
    try:
        if not _lean(data):
            full = _decoder(FullPredictionDocument).decode(data)
            return (getattr(full.tasks, task_key) if full.tasks is not None else None) or []
        doc = _prediction_decoder(task_key).decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if doc.tasks is None:
        return []
    numbers: list[Raw] = []
    masks: list[SkippedRle] = []
    out: list[PredictionRow] = []
    for key in _TASKS:
        rows = getattr(doc.tasks, key) or []
        if key == task_key:
            out = rows
        else:
            numbers += [row.bbox for row in rows]
        numbers += [row.oriented_bbox for row in rows]
        masks += [row.segmentation for row in rows if row.segmentation is not None]
    _unchecked([m.counts for m in masks], numbers)
    numbers += [m.size for m in masks]
    return out if in_double_range(b"".join(numbers)) else None


def in_double_range(data: bytes) -> bool:
    """Whether no number of the JSON values ``data`` can be beyond the double range, as far
    as their characters tell: such a literal has an exponent of three digits or more, or 100
    digits in a row (``1e99`` times a 210-digit integer); false alarms (``1e-300``, a long
    digit string) only send the document to the checker."""
    shapes = data.translate(_NUMBER_SHAPES)
    if b"0" * 100 in shapes:
        return False
    # rfind: searching from the end skips on the needle's rare first character
    return shapes.rfind(b"e000") < 0 and shapes.rfind(b"e+000") < 0
