"""What the audit's confirmed suspects change: decisions kept in the review sidecar, a
cleaned ground truth, and the submissions ranked on both (issue 36; docs/audit.md).

*Decisions.* Confirming or rejecting a suspect tags its query in the review sidecar
(:mod:`ovearth_core.review`) with ``audit confirmed <key>`` or ``audit rejected <key>``,
``key`` = the suspect's kind and a digest of its query, kind and boxes
(:func:`suspect_key`): stable across runs of the audit on the same files, one decision per
suspect even when a query has several.

*Cleaning* (:func:`cleaned`), on the ground-truth document as read, for the box modalities
(``bbox``: the annotation's ``bbox`` list, ``[x, y, w, h]``; ``oriented_bbox``: its
``oriented_bbox`` list, the fix as the box's four corners), the object index being the
annotation's list index:

* ``spurious``: the object is removed;
* ``shifted``: the object is replaced by the suspect's box (the consensus);
* ``missing`` on a positive query: the box is added to the query's annotation; on a
  negative query: a new annotation of the category on that image holds the box (and the
  other confident boxes, ``also``) in both box lists, and the query becomes positive,
  linked to it;
* ``wrong_class``: the object moves to the annotation of the proposed category's query on
  the same image (made as for a missing label on a negative query when that query is
  negative).

An annotation's ``area`` list (one size per object, COCO's) loses a removed object's area
and keeps a shifted one's; an annotation that gains an object loses the list (the added
object's area is unknown), so its objects are sized by their boxes.

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

PathLike = str | os.PathLike[str]
CONFIRMED, REJECTED = "audit confirmed", "audit rejected"
BOX_FIELDS = {"bbox": "bbox", "oriented_bbox": "oriented_bbox"}
CLEANED_NAME = "audit_cleaned_ground_truth.json"


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


def _problem(field: str, expected: str, found: object, query_id: str | None = None
             ) -> OVEarthInputError:
    return OVEarthInputError([Problem("(audit)", field, expected, str(found), query_id)])


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
    removed: dict[str, set[int]] = {}
    replaced: dict[str, dict[int, Any]] = {}
    added: dict[str, list[Any]] = {}

    def box(xywh: Sequence[float]) -> list[float]:
        return [float(v) for v in xywh]

    def annotation_of(s: Mapping[str, Any], query_id: str) -> str:
        row = by_query.get(query_id)
        if row is None or row.get("ann_id") not in anns:
            raise _problem("query_id", f"a query of task {key} in the ground truth",
                           query_id, query_id)
        return str(row["ann_id"])

    def object_of(s: Mapping[str, Any]) -> tuple[str, int]:
        ann_id = annotation_of(s, s["query_id"])
        index = s.get("object")
        count = len(anns[ann_id].get(field) or [])
        if not isinstance(index, int) or not 0 <= index < count:
            raise _problem("object", f"an index into {ann_id}'s {field} (0 to {count - 1})",
                           index, s["query_id"])
        return ann_id, index

    def add_to(query_id: str, category: str, boxes: list[Any]) -> None:
        row = by_query.get(query_id)
        if row is None:
            raise _problem("query_id", f"a query of task {key}", query_id, query_id)
        if row.get("type") == "negative":
            base = anns[annotation_of({}, query_id)]
            new_id = f"{base['id']}_audit_{query_id}"
            anns[new_id] = {k: base[k] for k in ("image_path", "width", "height")
                            if k in base} | {"id": new_id, "category_name": category,
                                             "bbox": [], "oriented_bbox": []}
            order.append(new_id)
            row["type"] = "positive"
            row["ann_id"] = new_id
        added.setdefault(str(row["ann_id"]), []).extend(boxes)

    for s in confirmed:
        kind = s["kind"]
        if kind == "spurious":
            ann_id, index = object_of(s)
            removed.setdefault(ann_id, set()).add(index)
        elif kind == "shifted":
            ann_id, index = object_of(s)
            replaced.setdefault(ann_id, {})[index] = box(s["bbox"])
        elif kind == "missing":
            extra = [a["bbox"] for a in s.get("also", [])]
            add_to(s["query_id"], s["category"], [box(b) for b in [s["bbox"], *extra]])
        elif kind == "wrong_class":
            ann_id, index = object_of(s)
            removed.setdefault(ann_id, set()).add(index)
            add_to(s["evidence_query_id"], s["proposed_category"], [box(s["gt_bbox"])])
        else:
            raise _problem("kind", "missing, spurious, shifted or wrong_class", kind,
                           s.get("query_id"))
    for ann_id in set(removed) | set(replaced) | set(added):
        ann = anns[ann_id]
        count = len(ann.get(field) or [])
        drop, swap = removed.get(ann_id, set()), replaced.get(ann_id, {})
        # The other box list is edited alike when it pairs with this one index by index.
        for name in BOX_FIELDS.values():
            old = list(ann.get(name) or [])
            if name != field and (name not in ann or len(old) != count):
                continue
            as_field = _corners if name == "oriented_bbox" else list
            ann[name] = [as_field(swap[i]) if i in swap else b for i, b in enumerate(old)
                         if i not in drop] + [as_field(b) for b in added.get(ann_id, [])]
        if "difficult" in ann and len(ann["difficult"] or []) != len(ann[field]):
            del ann["difficult"]  # its flags no longer pair with the boxes
        area = ann.get("area")
        if isinstance(area, list) and len(area) == count:
            # A removed object's area goes with it; a shifted one keeps its own (the object,
            # and its mask, are the same); an added one has none, so no box keeps one.
            ann["area"] = [a for i, a in enumerate(area) if i not in drop]
        if "area" in ann and len(ann["area"] or []) != len(ann[field]):
            del ann["area"]
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
