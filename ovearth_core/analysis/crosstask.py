"""One annotation across the three tasks: its vocabulary, referring and reasoning queries.

Every query of the ground truth names its target with ``ann_id`` (spec, "two-level
structure": each entry in ``tasks.<task_key>`` references an item in ``annotations``), so
the queries of the three tasks that share an ``ann_id`` ask for the same object in three
query forms: a category phrase (open vocabulary), a referring expression and a reasoning
question. Negative open-vocabulary queries link an annotation too, but it is not their
target (spec: "not used as target geometry"), so only positive queries join.

:func:`join` groups the evaluated positive queries of each form by annotation; the
**verdict** of an annotation says where the model failed. A query is *right* when it found
the object by the explorer's rule (:func:`.diagnose.found`: its failure tag is ``ok``, i.e.
the explorer does not count it failed), in every form alike (an open-vocabulary TP only
says something was predicted; a best box IoU of 1 on one of 25 ships is not found):

``right in every query``     every joined query is right;
``the object``               no query is right, and at least two forms ask (the model
                             misses the object however it is named);
``the language``             some queries are right and some wrong (the object is found
                             when named one way, not another);
``wrong (one form only)``    no query right and only one form asks.

>>> verdict([True, True], 2), verdict([False, False], 2), verdict([True, False], 1)
('right in every query', 'the object', 'the language')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..types import TASK_KEYS, Sample
from .diagnose import found

FORMS: tuple[str, ...] = tuple(TASK_KEYS)  # vocabulary, referring, reasoning
RIGHT, OBJECT, LANGUAGE, ONE_FORM = ("right in every query", "the object", "the language",
                                     "wrong (one form only)")


@dataclass(frozen=True)
class FormQuery:
    """One positive query of an annotation in one form, with its evaluated facts.

    ``index`` is its position in that form's samples (and ``per_sample``); ``seg_iou``,
    ``bbox_iou``, ``obb_iou`` (best box IoUs), ``bbox_f1``, ``obb_f1`` are the explorer
    row's (``None``: not evaluated); ``score`` the highest predicted box score (HBB, else
    OBB; ``None`` without a scored box).
    """

    form: str
    query_id: str
    index: int
    text: str
    outcome: str
    failure: str
    seg_iou: float | None
    bbox_iou: float | None
    obb_iou: float | None
    bbox_f1: float | None
    obb_f1: float | None
    score: float | None

    @property
    def primary_iou(self) -> float | None:
        """Mask IoU, else best HBB IoU, else best OBB IoU (``None``: none evaluated)."""
        return next((v for v in (self.seg_iou, self.bbox_iou, self.obb_iou) if v is not None),
                    None)

    @property
    def right(self) -> bool:
        """Found the object (:func:`.diagnose.found`: not failed in the explorer)."""
        return found(self.failure)


@dataclass(frozen=True)
class AnnotationJoin:
    """An annotation and its positive queries per form (a form without one: ``()``)."""

    ann_id: str
    category: str
    image_path: str
    queries: dict[str, tuple[FormQuery, ...]]

    @property
    def forms(self) -> list[str]:
        """The forms that ask for this annotation."""
        return [f for f in FORMS if self.queries.get(f)]

    @property
    def verdict(self) -> str:
        rights = [q.right for f in FORMS for q in self.queries.get(f, ())]
        return verdict(rights, len(self.forms))


def verdict(rights: Sequence[bool], n_forms: int) -> str:
    """The verdict of an annotation whose joined queries are right or not (module doc)."""
    if rights and all(rights):
        return RIGHT
    if any(rights):
        return LANGUAGE
    return OBJECT if n_forms >= 2 else ONE_FORM


def _top_score(sample: Sample) -> float | None:
    for scores in (sample.pred_box_scores, sample.pred_obb_scores):
        finite = np.asarray(scores, dtype=float)
        finite = finite[np.isfinite(finite)]
        if finite.size:
            return float(finite.max())
    return None


def join(forms: Mapping[str, tuple[Sequence[Sample], Sequence[dict[str, Any]]]],
         ) -> dict[str, AnnotationJoin]:
    """``{ann_id: AnnotationJoin}`` of every annotation with a positive query in a form.

    Args:
        forms: per form (``vocabulary``, ``referring``, ``reasoning``; any subset), its
            evaluated samples and their explorer rows (:func:`.diagnose.query_rows`, any
            order). Queries keep the samples' order within a form.
    """
    out: dict[str, dict[str, list[FormQuery]]] = {}
    about: dict[str, Sample] = {}
    for form in FORMS:
        if form not in forms:
            continue
        samples, rows = forms[form]
        by_id = {r["query_id"]: r for r in rows}
        for index, s in enumerate(samples):
            if s.negative:
                continue
            r = by_id[s.sample_id]
            about.setdefault(s.ann_id, s)
            out.setdefault(s.ann_id, {}).setdefault(form, []).append(FormQuery(
                form, s.sample_id, index, s.phrase, r["outcome"], r["failure"], r["seg_iou"],
                r["bbox_iou"], r["obb_iou"], r["bbox_f1"], r["obb_f1"], _top_score(s)))
    return {a: AnnotationJoin(a, about[a].category, about[a].image_path,
                              {f: tuple(qs) for f, qs in per.items()})
            for a, per in sorted(out.items())}


def in_every_form(joined: Mapping[str, AnnotationJoin],
                  forms: Sequence[str] = FORMS) -> list[str]:
    """Annotation ids with a positive query in every one of ``forms``, sorted."""
    return sorted(a for a, j in joined.items() if all(j.queries.get(f) for f in forms))


def common_targets(samples: Mapping[str, Sequence[Sample]],
                   forms: Sequence[str] = FORMS) -> set[str]:
    """Annotation ids every one of ``forms`` has a positive query on (from samples alone;
    the same set as :func:`in_every_form` of a :func:`join`)."""
    return set.intersection(*({s.ann_id for s in samples[f] if not s.negative}
                              for f in forms))


def verdict_counts(joined: Mapping[str, AnnotationJoin]) -> dict[str, int]:
    """How many annotations have each verdict (every verdict listed, zero included)."""
    counts = dict.fromkeys((RIGHT, LANGUAGE, OBJECT, ONE_FORM), 0)
    for j in joined.values():
        counts[j.verdict] += 1
    return counts
