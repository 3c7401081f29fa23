"""Ground truth assembly: annotations (RLE, HBB, OBB) and the three task query lists.

The output dictionary follows the spec's "Data Formats" section key for key: annotation ids
are 6-digit strings, ``bbox`` holds COCO ``[x, y, w, h]`` envelopes of the instance polygons
(snapped to their rasterised pixels), ``oriented_bbox`` their minimum-area rotated rectangles
and ``segmentation`` the compressed RLE of the union of the polygons. Area-type and
unreliable annotations carry no boxes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import geom, language
from .layout import AnnotationLayout, ImageLayout, layout_image
from .plan import ScaleSpec, plan_benchmark

TASKS = ("open_vocabulary", "referring", "reasoning")
_PREFIX = {"open_vocabulary": "ov", "referring": "ref", "reasoning": "rea"}


@dataclass(frozen=True)
class QueryRecord:
    """One ground-truth query with the geometry it refers to (used by the personas)."""

    task: str
    query_id: str
    text: str
    negative: bool
    ann: AnnotationLayout
    image: ImageLayout


@dataclass
class GroundTruth:
    """A generated benchmark before writing.

    Attributes:
        images: per-image layouts in image order.
        doc: the ``ground_truth.json`` document.
        queries: every query of every task, in file order.
        masks: pycocotools RLE of each annotation by annotation id.
    """

    images: list[ImageLayout]
    doc: dict[str, Any]
    queries: list[QueryRecord]
    masks: dict[str, dict]


def _annotation_json(ann: AnnotationLayout, image: ImageLayout, rle: dict,
                     boxes: list[list[int]]) -> dict[str, Any]:
    p = image.plan
    boxed = ann.plan.n_boxes > 0
    obbs = (np.concatenate([geom.min_rects(b) for b in geom.batches(ann.parts)]) if boxed
            else np.zeros((0, 4, 2)))
    return {
        "id": ann.plan.ann_id,
        "image_path": p.path,
        "width": p.width,
        "height": p.height,
        "category_name": ann.plan.category.name,
        "segmentation": geom.rle_json(rle),
        "bbox": boxes if boxed else [],
        "oriented_bbox": np.round(obbs, 2).tolist(),
    }


def build_ground_truth(spec: ScaleSpec, seed: int) -> GroundTruth:
    """Plan, lay out and describe a whole benchmark (no pixels)."""
    images = [layout_image(p, seed) for p in plan_benchmark(spec, seed)]
    annotations, masks = [], {}
    queries: list[QueryRecord] = []
    counters = dict.fromkeys(TASKS, 0)

    def add(task: str, text: str, ann: AnnotationLayout, image: ImageLayout,
            negative: bool = False) -> None:
        counters[task] += 1
        qid = f"{_PREFIX[task]}_{counters[task]:06d}"
        queries.append(QueryRecord(task, qid, text, negative, ann, image))

    for image in images:
        present = {a.plan.category.name for a in image.annotations}
        for ann in image.annotations:
            p = ann.plan
            rle, boxes = geom.rle_and_boxes(geom.batches(ann.parts), image.plan.height,
                                            image.plan.width)
            masks[p.ann_id] = rle
            annotations.append(_annotation_json(ann, image, rle, boxes))
            rng = np.random.default_rng([seed, 4, p.index])
            for text in language.open_vocab_positives(rng, p.category, p.n_ov_positive):
                add("open_vocabulary", text, ann, image)
            for text in language.open_vocab_negatives(rng, p.category, present, p.n_ov_negative):
                add("open_vocabulary", text, ann, image, negative=True)
            for text in language.referring(rng, ann, image, p.n_referring):
                add("referring", text, ann, image)
            many = len(ann.parts) > 1
            for text in language.reasoning(rng, p.category, many, p.n_reasoning):
                add("reasoning", text, ann, image)
    tasks: dict[str, list[dict[str, Any]]] = {t: [] for t in TASKS}
    for q in queries:
        row: dict[str, Any] = {"query_id": q.query_id, "ann_id": q.ann.plan.ann_id}
        if q.task == "open_vocabulary":
            row["type"] = "negative" if q.negative else "positive"
            row["phrase"] = q.text
        else:
            row["query"] = q.text
        tasks[q.task].append(row)
    return GroundTruth(images, {"annotations": annotations, "tasks": tasks}, queries, masks)
