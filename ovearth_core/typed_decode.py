"""The typed decode of a boxes-only load (issue 49): the two OVEarth files decoded by msgspec
into :class:`msgspec.Struct` s of the spec's fields, before any check of :mod:`~ovearth_core.io`.

Only :func:`ovearth_core.io.load_samples` of a ``--modalities bbox`` run uses it, and only as
a fast path: :func:`decode_ground_truth` / :func:`decode_predictions` give ``None`` for any
document they do not decode, and io's own validation then runs on the same bytes, with its
messages. What they decode, orjson accepts too, with the same values:

* every leaf is typed (``float``, ``int``, ``str``, ``None``) and decoded, masks and oriented
  boxes included, although a boxes-only run scores neither: msgspec checks a float it
  decodes against the double range (``1e400`` refused, as orjson refuses it), an integer
  against int64 (:data:`Int`; orjson's integers are 64-bit) and a string's UTF-8 and
  escapes (lone surrogates refused), but a skipped value only for its syntax;
* so no value is skipped: an unknown key anywhere (``forbid_unknown_fields``) or a value of
  another type than these makes the decode fail, and the whole document goes to io's
  checker;
* duplicate keys: the last value, as orjson (both build the object key by key).

Nesting is bounded by the types (at most five levels), so no depth limit is reached.
``msgspec`` is imported here only, and this module only from inside the load (no command's
start or warm path imports it; tests/core/test_lazy_imports.py).
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

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


class PredictionRow(Struct, forbid_unknown_fields=True):
    query_id: str
    phrase: str | None = None
    query: str | None = None
    segmentation: Rle | None = None
    bbox: list[Box | BoxObject] | None = None
    oriented_bbox: list[Points | PolygonObject] | None = None


class PredictionTasks(Struct, forbid_unknown_fields=True):
    open_vocabulary: list[PredictionRow] | None = None
    referring: list[PredictionRow] | None = None
    reasoning: list[PredictionRow] | None = None


class PredictionDocument(Struct, forbid_unknown_fields=True):
    tasks: PredictionTasks | None = None


_GT = msgspec.json.Decoder(GtDocument)
_PRED = msgspec.json.Decoder(PredictionDocument)


def decode_ground_truth(data: bytes) -> GtDocument | None:
    """The ground-truth document, or ``None`` when it is not one of the shapes above."""
    try:
        return _GT.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None


def decode_predictions(data: bytes) -> PredictionDocument | None:
    """The prediction document, or ``None`` when it is not one of the shapes above."""
    try:
        return _PRED.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
