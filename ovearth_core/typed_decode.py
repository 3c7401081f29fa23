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
* the values it skips (a prediction file's oriented boxes, the other tasks' boxes: raw JSON,
  which msgspec checks for syntax and escapes only) are read from an ASCII document only
  (so their strings are UTF-8), nested no deeper than orjson allows (:data:`ORJSON_DEPTH`),
  and their numbers are checked against the double range by their characters
  (:func:`in_double_range`); otherwise the document is decoded in full;
* duplicate keys: the last value, as orjson (both build the object key by key).

``msgspec`` is imported here only, and this module only from inside the load (no command's
start or warm path imports it; tests/core/test_lazy_imports.py).
"""

from __future__ import annotations

import sys
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

# An integer orjson reads as one: msgspec takes any size, orjson reads a JSON integer beyond
# 64 bits as a float (and refuses one beyond the double range), so a larger one is not
# decoded here (nor, msgspec's bounds being int64, one from 2**63 to 2**64 - 1).
Int = Annotated[int, Meta(ge=-(2 ** 63), le=2 ** 63 - 1)]
Box = tuple[float, float, float, float]
Points = list[list[float]]  # an oriented box's vertices (decoded, not checked here)


class Rle(Struct, forbid_unknown_fields=True):
    size: list[Int]
    counts: str | list[Int]


class GtAnnotation(Struct, forbid_unknown_fields=True):
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


class GtQuery(Struct, forbid_unknown_fields=True):
    query_id: str
    ann_id: str | Int
    type: str | UnsetType = UNSET
    phrase: str | UnsetType = UNSET
    query: str | UnsetType = UNSET


class GtTasks(Struct, forbid_unknown_fields=True):
    open_vocabulary: list[GtQuery] = []
    referring: list[GtQuery] = []
    reasoning: list[GtQuery] = []


class GtDocument(Struct, forbid_unknown_fields=True):
    annotations: list[GtAnnotation]
    tasks: GtTasks


class BoxObject(Struct, forbid_unknown_fields=True):
    bbox: Box
    score: float | UnsetType = UNSET


class PolygonObject(Struct, forbid_unknown_fields=True):
    polygon: Points
    score: float | None = None


Boxes = list[Box | BoxObject] | None  # a prediction row's ``bbox``


class PredictionRow(Struct, forbid_unknown_fields=True):
    """A row of the lean decode: its ``bbox`` and ``oriented_bbox`` kept as raw JSON, the
    one decoded where scored, the others checked for their numbers (:func:`in_double_range`)."""

    query_id: str
    phrase: str | None = None
    query: str | None = None
    segmentation: Rle | None = None
    bbox: Raw = Raw(b"null")
    oriented_bbox: Raw = Raw(b"null")


class PredictionTasks(Struct, forbid_unknown_fields=True):
    open_vocabulary: list[PredictionRow] | None = None
    referring: list[PredictionRow] | None = None
    reasoning: list[PredictionRow] | None = None


class PredictionDocument(Struct, forbid_unknown_fields=True):
    tasks: PredictionTasks | None = None


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


_GT = msgspec.json.Decoder(GtDocument)
_PRED = msgspec.json.Decoder(PredictionDocument)
_FULL_PRED = msgspec.json.Decoder(FullPredictionDocument)
_BOXES = msgspec.json.Decoder(Boxes)
_TASKS = ("open_vocabulary", "referring", "reasoning")
# orjson refuses nesting beyond 1,024 levels; msgspec, skipping a raw value, beyond the
# interpreter's recursion limit: the lean decode only while that limit is no higher.
ORJSON_DEPTH = 1024
# Digits to "0", exponent marks to "e", signs to "+", the rest to " " (:func:`in_double_range`).
_NUMBER_SHAPES = bytes(ord("0") if chr(c) in "0123456789" else ord("e") if chr(c) in "eE"
                       else ord("+") if chr(c) in "+-" else ord(" ") for c in range(256))


def decode_ground_truth(data: bytes) -> GtDocument | None:
    """The ground-truth document, or ``None`` when it is not one of the shapes above."""
    try:
        return _GT.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None


def decode_predictions(data: bytes, task_key: str) -> list[tuple[str, Boxes]] | None:
    """The ``(query_id, bbox)`` of each row of task ``task_key``, or ``None`` when the
    document is not one of the shapes above or holds anything orjson would refuse.

    An ASCII document (all its strings then valid UTF-8) is decoded lean: the oriented
    boxes, and the boxes of the other tasks, are skipped by msgspec (their syntax checked,
    as JSON) and then their numbers checked against the double range in one pass over
    their bytes (:func:`in_double_range`); any other document is decoded in full.
    """
    try:
        if not data.isascii() or sys.getrecursionlimit() > ORJSON_DEPTH:
            full = _FULL_PRED.decode(data)
            rows = (getattr(full.tasks, task_key) if full.tasks is not None else None) or []
            return [(row.query_id, row.bbox) for row in rows]
        doc = _PRED.decode(data)
        skipped: list[Raw] = []
        out: list[tuple[str, Boxes]] = []
        for key in _TASKS:
            lean = (getattr(doc.tasks, key) if doc.tasks is not None else None) or []
            if key == task_key:
                out = [(row.query_id, _BOXES.decode(row.bbox)) for row in lean]
            else:
                skipped += [row.bbox for row in lean]
            skipped += [row.oriented_bbox for row in lean]
    except (msgspec.DecodeError, RecursionError):
        return None
    return out if in_double_range(b"".join(skipped)) else None


def in_double_range(data: bytes) -> bool:
    """Whether no number of the JSON values ``data`` can be beyond the double range, as far
    as their characters tell: such a literal has an exponent of three digits or more, or 100
    digits in a row (``1e99`` times a 210-digit integer); false alarms (``1e-300``, a long
    digit string) only send the document to the checker."""
    shapes = data.translate(_NUMBER_SHAPES)
    return b"e000" not in shapes and b"e+000" not in shapes and b"0" * 100 not in shapes
