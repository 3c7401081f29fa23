"""What the audit's confirmed suspects change: decisions kept in the review sidecar, a
cleaned ground truth, and the submissions ranked on both (issue 36; docs/audit.md).

*Decisions.* Confirming or rejecting a suspect tags its query in the review sidecar
(:mod:`ovearth_core.review`) with ``audit confirmed <key>`` or ``audit rejected <key>``,
``key`` = the suspect's kind and a digest of its query, kind and boxes
(:func:`suspect_key`): stable across runs of the audit on the same files, one decision per
suspect even when a query has several.

*Cleaning* (:func:`cleaned`), on the ground-truth document as read, for the box modalities
(``bbox``: the annotation's ``bbox`` list, ``[x, y, w, h]``; ``oriented_bbox``: its
``oriented_bbox`` list), the object index being the annotation's list index. An object is
its items in every per-object list that pairs with the audited one index by index
(:data:`~ovearth_core.io.GT_OBJECT_FIELDS`: ``bbox``, ``oriented_bbox``, ``difficult``),
and a fix moves them together:

* ``spurious``: the object is removed (its items from every list);
* ``shifted``: in a ``bbox`` audit the box becomes the suspect's (the consensus); every
  other geometry of the object (its oriented box; in an ``oriented_bbox`` audit both) is
  translated by the move of the centre to the consensus box's centre: a rotated label
  keeps its shape, angle and vertex order; its ``difficult`` flag stays;
* ``missing`` on a positive query: a new object is added to the query's annotation; on a
  negative query: a new annotation of the category on that image holds it (and the other
  confident boxes, ``also``), and the query becomes positive, linked to it. The new object
  has the consensus box in the audited list, the same as a rectangle in the other box
  list, and ``difficult`` 0 (:data:`DIFFICULT_DEFAULT`: most submissions found it,
  confidently); a new annotation has the per-object lists the document uses;
* ``wrong_class``: the object, every item of it, moves to the annotation of the proposed
  category's query on the same image (made as for a missing label on a negative query when
  that query is negative).

A box list of another length than the audited one is not paired and is left as it is; an
empty annotation takes the lists the document uses, so a boxes-only document gets no
oriented boxes. A ``difficult`` list is written when the annotation had one or an object
moved in is difficult.

An annotation's ``area`` list (one size per object, COCO's) is a per-object field too: a
removed object's area goes, a shifted one keeps its own, a moved one (``wrong_class``) takes
its own along; an annotation that gains a new object loses the list (the added object's
area is unknown), so its objects are sized by their boxes.

An annotation is shared by every query linked to it (other tasks too): the fix is the
label's, so it reaches them all. Masks are not edited (a suspect of the ``segmentation``
audit is refused: its fix is a drawing, not a box).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import files, review
from ..errors import OVEarthInputError, Problem
from ..io import GT_OBJECT_FIELDS

PathLike = str | os.PathLike[str]
CONFIRMED, REJECTED = "audit confirmed", "audit rejected"
BOX_FIELDS = {"bbox": "bbox", "oriented_bbox": "oriented_bbox"}
CLEANED_NAME = "audit_cleaned_ground_truth.json"
# What an annotation says of its image, which a new annotation on that image repeats
# (``image_meta``: the ground sample distance and source that from-dota records).
IMAGE_FIELDS = ("image_path", "width", "height", "image_meta")
# An object the audit adds is a plain target: most submissions found it, confidently.
DIFFICULT_DEFAULT = 0


def suspect_key(suspect: Mapping[str, Any]) -> str:
    """``<kind> <12 hex>``: the suspect's kind and a digest of its query, kind, box and GT
    box (what tells two suspects of one query apart)."""
    text = "|".join(str(suspect.get(k)) for k in ("query_id", "kind", "bbox", "gt_bbox",
                                                   "proposed_category"))
    return f"{suspect['kind']} {hashlib.sha256(text.encode()).hexdigest()[:12]}"


def decisions(state: review.ReviewState, task: str, suspects: Iterable[Mapping[str, Any]]
              ) -> dict[str, str]:
    """``{suspect key: "confirmed" | "rejected"}`` of the suspects decided in ``state``."""
    tags = state.query_tags(review.task_key(task))
    out = {}
    for s in suspects:
        key = suspect_key(s)
        held = tags.get(s["query_id"], frozenset())
        if f"{CONFIRMED} {key}" in held:
            out[key] = "confirmed"
        elif f"{REJECTED} {key}" in held:
            out[key] = "rejected"
    return out


def decide(sidecar: PathLike, task: str, suspect: Mapping[str, Any], decision: str | None,
           state: review.ReviewState) -> None:
    """Record ``decision`` (``"confirmed"``, ``"rejected"`` or ``None``: undecided) of a
    suspect in the sidecar: its tag added, the other one removed when present."""
    target = review.Target(review.task_key(task), str(suspect["query_id"]))
    key = suspect_key(suspect)
    held = state.tags.get(target, frozenset())
    for name, value in ((CONFIRMED, "confirmed"), (REJECTED, "rejected")):
        tag = f"{name} {key}"
        if value == decision and tag not in held:
            review.tag(sidecar, target, tag, by="audit")
        elif value != decision and tag in held:
            review.untag(sidecar, target, tag, by="audit")


def _corners(xywh: Sequence[float]) -> list[list[float]]:
    x, y, w, h = (float(v) for v in xywh)
    return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]


def _envelope(polygon: Sequence[Sequence[float]]) -> list[float]:
    """``[x, y, w, h]`` of the vertices ``polygon``."""
    xs, ys = [float(p[0]) for p in polygon], [float(p[1]) for p in polygon]
    return [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)]


def _centre(xywh: Sequence[float]) -> tuple[float, float]:
    x, y, w, h = (float(v) for v in xywh)
    return x + w / 2, y + h / 2


def _moved(record: dict[str, Any], field: str, fix: Sequence[float]) -> dict[str, Any]:
    """A shifted object's record with the fix applied: ``fix`` (``[x, y, w, h]``, the
    consensus) is its box in a ``bbox`` audit; every other geometry of the object is
    translated by the move of its centre, so an oriented box keeps its shape and angle."""
    old = record[field] if field == "bbox" else _envelope(record[field])
    (fx, fy), (ox, oy) = _centre(fix), _centre(old)
    dx, dy = fx - ox, fy - oy
    out = dict(record)
    if "bbox" in out:
        x, y, w, h = (float(v) for v in out["bbox"])
        out["bbox"] = [float(v) for v in fix] if field == "bbox" else [x + dx, y + dy, w, h]
    if "oriented_bbox" in out:
        out["oriented_bbox"] = [[float(px) + dx, float(py) + dy]
                                for px, py in out["oriented_bbox"]]
    return out


def _fitted(record: dict[str, Any], schema: Sequence[str]) -> dict[str, Any]:
    """``record`` (an object's items) with the box lists of ``schema``: a box it lacks is
    made from the one it has (an oriented box as the box's corners, a box as the oriented
    box's envelope); one ``schema`` lacks is left out; ``difficult`` kept or the default."""
    out = {"difficult": record.get("difficult", DIFFICULT_DEFAULT), "area": record.get("area")}
    for name in schema:
        if name in record:
            out[name] = record[name]
        elif name == "bbox":
            out[name] = _envelope(record["oriented_bbox"])
        else:
            out[name] = _corners(record["bbox"])
    return out


def _problem(field: str, expected: str, found: object, query_id: str | None = None
             ) -> OVEarthInputError:
    return OVEarthInputError([Problem("(audit)", field, expected, str(found), query_id)])


class _Objects:
    """The objects of one annotation being edited: each a record of its items in the
    annotation's per-object lists (:data:`~ovearth_core.io.GT_OBJECT_FIELDS`), by its index
    in the document (``None`` once removed), new ones after them."""

    def __init__(self, ann: dict[str, Any], field: str, carried: Sequence[str]) -> None:
        count = len(ann.get(field) or [])
        # The box lists edited with this one, index by index: those of the same length (an
        # empty annotation takes the box lists the document uses).
        self.schema = [name for name in BOX_FIELDS.values()
                       if name == field or (count and len(ann.get(name) or []) == count)
                       or (not count and name in carried and not ann.get(name))]
        flags = ann.get("difficult") or []
        self.flagged = "difficult" in ann and len(flags) == count
        # COCO's size of each object (the optional ``area`` list): it travels with its object.
        areas = ann.get("area")
        sized = isinstance(areas, list) and len(areas) == count
        self.records: list[dict[str, Any] | None] = [
            {**{name: ann[name][i] for name in self.schema},
             "difficult": flags[i] if self.flagged else DIFFICULT_DEFAULT,
             "area": areas[i] if sized else None}
            for i in range(count)]

    def written(self, ann: dict[str, Any], ann_id: str, carry_flags: bool) -> None:
        """The records back into ``ann``'s lists; ``difficult`` written when the
        annotation had it, ``carry_flags`` (a new annotation of a document that flags) or
        an object is difficult. Raises :class:`~ovearth_core.errors.OVEarthInputError`
        when its flags could no longer pair with its boxes (an object added in a modality
        the annotation's other objects lack)."""
        kept = [r for r in self.records if r is not None]
        for name in self.schema:
            ann[name] = [r[name] for r in kept]
        if self.flagged or carry_flags or any(r["difficult"] for r in kept):
            ann["difficult"] = [r["difficult"] for r in kept]
        # The sizes stay while every object has one: an added object's is unknown, so then
        # the annotation's objects are sized by their boxes.
        if kept and all(r.get("area") is not None for r in kept):
            ann["area"] = [r["area"] for r in kept]
        else:
            ann.pop("area", None)
        if ann.get("difficult"):
            lengths = {len(ann[n]) for n in BOX_FIELDS.values() if ann.get(n)}
            if lengths != {len(ann["difficult"])}:
                raise _problem("difficult", f"annotation {ann_id}'s box lists of one length "
                               "after the fixes (one difficult flag per object)",
                               f"lengths {sorted(lengths | {len(ann['difficult'])})}")


def cleaned(doc: Mapping[str, Any], task: str, modality: str,
            confirmed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A copy of the ground-truth document ``doc`` with the ``confirmed`` suspects of the
    audit of ``task`` in ``modality`` fixed (module docstring). Raises
    :class:`~ovearth_core.errors.OVEarthInputError` for the segmentation modality or a
    suspect that names no query or object of ``doc``."""
    if modality not in BOX_FIELDS:
        raise _problem("modality", "bbox or oriented_bbox (masks are not edited)", modality)
    field = BOX_FIELDS[modality]
    key = review.task_key(task)
    anns = {a["id"]: dict(a) for a in doc.get("annotations", []) if isinstance(a, dict)}
    order = [a["id"] for a in doc.get("annotations", []) if isinstance(a, dict)]
    rows = {task_: [dict(r) for r in rs] for task_, rs in doc.get("tasks", {}).items()}
    by_query = {r.get("query_id"): r for r in rows.get(key, [])}
    # Per-object lists the document uses somewhere: an annotation made or emptied takes them.
    carried = [name for name in GT_OBJECT_FIELDS if any(a.get(name) for a in anns.values())]
    edited: dict[str, _Objects] = {}
    made: set[str] = set()

    def objects_of(ann_id: str) -> _Objects:
        if ann_id not in edited:
            edited[ann_id] = _Objects(anns[ann_id], field, carried)
        return edited[ann_id]

    def annotation_of(query_id: str) -> str:
        row = by_query.get(query_id)
        if row is None or row.get("ann_id") not in anns:
            raise _problem("query_id", f"a query of task {key} in the ground truth",
                           query_id, query_id)
        return str(row["ann_id"])

    def object_of(s: Mapping[str, Any]) -> tuple[_Objects, int]:
        ann_id = annotation_of(s["query_id"])
        index = s.get("object")
        count = len(anns[ann_id].get(field) or [])
        objs = objects_of(ann_id)
        if not isinstance(index, int) or not 0 <= index < count or objs.records[index] is None:
            raise _problem("object", f"an index into {ann_id}'s {field} (0 to {count - 1}), "
                           "of an object no other confirmed fix removed", index,
                           s["query_id"])
        return objs, index

    def add_to(query_id: str, category: str, records: list[dict[str, Any]]) -> None:
        row = by_query.get(query_id)
        if row is None:
            raise _problem("query_id", f"a query of task {key}", query_id, query_id)
        if row.get("type") == "negative":
            base = anns[annotation_of(query_id)]
            new_id = f"{base['id']}_audit_{query_id}"
            anns[new_id] = {k: base[k] for k in IMAGE_FIELDS if k in base} | {
                "id": new_id, "category_name": category, field: []}
            order.append(new_id)
            made.add(new_id)
            row["type"] = "positive"
            row["ann_id"] = new_id
        objs = objects_of(str(row["ann_id"]))
        objs.records.extend(_fitted(r, objs.schema) for r in records)

    def new_object(xywh: Sequence[float]) -> dict[str, Any]:
        box = [float(v) for v in xywh]
        return {field: box if field == "bbox" else _corners(box)}

    for s in confirmed:
        kind = s["kind"]
        if kind == "spurious":
            objs, index = object_of(s)
            objs.records[index] = None
        elif kind == "shifted":
            objs, index = object_of(s)
            objs.records[index] = _moved(objs.records[index], field, s["bbox"])  # type: ignore[arg-type]
        elif kind == "missing":
            extra = [a["bbox"] for a in s.get("also", [])]
            add_to(s["query_id"], s["category"], [new_object(b) for b in [s["bbox"], *extra]])
        elif kind == "wrong_class":
            objs, index = object_of(s)
            record = objs.records[index]
            objs.records[index] = None
            add_to(s["evidence_query_id"], s["proposed_category"], [record])  # type: ignore[list-item]
        else:
            raise _problem("kind", "missing, spurious, shifted or wrong_class", kind,
                           s.get("query_id"))
    for ann_id, objs in edited.items():
        objs.written(anns[ann_id], ann_id, "difficult" in carried and ann_id in made)
    return {**doc, "annotations": [anns[i] for i in order], "tasks": rows}


def cleaned_path(gt_path: PathLike) -> Path:
    """Where the app writes the cleaned ground truth: ``DIR/.ovearth/exports/`` beside
    the review sidecar of the benchmark whose ground truth is ``gt_path``."""
    return review.sidecar_for(gt_path).parent / "exports" / CLEANED_NAME


def write_cleaned(gt_path: PathLike, doc: Mapping[str, Any], out: PathLike | None = None,
                  *, inputs: Iterable[PathLike] = ()) -> Path:
    """Write ``doc`` to ``out`` (default :func:`cleaned_path`), atomically, confined to
    the ground truth's folder (no link followed, never over ``gt_path`` or ``inputs``);
    the path written. Raises :class:`~ovearth_core.errors.OVEarthInputError` when refused."""
    from ..cli import dump_json

    target = Path(out) if out is not None else cleaned_path(gt_path)
    root = Path(gt_path).resolve().parent
    try:
        return files.write_confined(root, target, dump_json(dict(doc)),
                                    inputs=[gt_path, *inputs])
    except files.FileRefused as err:
        raise OVEarthInputError([Problem(err.path, "(file)", err.expected, err.found)]
                                ) from None
    except OSError as err:
        raise OVEarthInputError([Problem(str(target), "(file)", "a writable file",
                                         err.strerror or str(err))]) from None


def rerank(names: Sequence[str], before: Sequence[dict[str, Any]],
           after: Sequence[dict[str, Any]], metric: str | None = None) -> dict[str, Any]:
    """The submissions ranked on the original (``before``: evaluator results) and the
    cleaned ground truth (``after``) by ``metric`` (default: the leaderboard's first
    ranked metric): ``{"metric", "rows": [{"name", "before", "after", "rank_before",
    "rank_after", "change"}]}``, in the cleaned ranking's order; ``change`` > 0 moved up."""
    from ..analysis.standings import default_metric, rank_table

    old, new = rank_table(names, before), rank_table(names, after)
    metric = metric or default_metric(old)
    if metric is None:
        return {"metric": None, "rows": []}
    rank_old = {n: i + 1 for i, n in enumerate(old["ranking"][metric])}
    rank_new = {n: i + 1 for i, n in enumerate(new["ranking"][metric])}
    value_old = dict(zip(names, old["metrics"][metric], strict=True))
    value_new = dict(zip(names, new["metrics"][metric], strict=True))
    rows = [{"name": n, "before": value_old[n], "after": value_new[n],
             "rank_before": rank_old[n], "rank_after": rank_new[n],
             "change": rank_old[n] - rank_new[n]} for n in new["ranking"][metric]]
    return {"metric": metric, "rows": rows}
