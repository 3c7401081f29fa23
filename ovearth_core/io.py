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
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from . import geometry, masks
from .errors import OVEarthInputError, Problem, ProblemCollector
from .masks import FieldError, Rle
from .types import MODALITIES, TASK_KEYS, Sample, SampleList

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


@dataclass(frozen=True)
class Query:
    query_id: str
    ann_id: str
    text: str
    negative: bool


@dataclass(frozen=True)
class GroundTruth:
    annotations: dict[str, Annotation]
    tasks: dict[str, list[Query]]


@dataclass
class _Prediction:
    mask: Rle | None = None
    mask_size: tuple[int, int] = (0, 0)
    boxes: list[tuple[float, float, float, float]] | None = None
    box_scores: list[float] | None = None
    obbs: list[tuple[tuple[float, float], ...]] | None = None
    obb_scores: list[float] | None = None


def read_json(path: PathLike, role: str) -> Any:
    """Read a UTF-8 JSON document; the top level must be an object."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise OVEarthInputError([Problem(name, "(file)", f"a readable {role} JSON file",
                                         err.strerror or type(err).__name__)]) from None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise OVEarthInputError([Problem(name, "(document)",
                                         "valid UTF-8 JSON (no NaN/Infinity, nesting under 1024)",
                                         str(err))]) from None
    if not isinstance(doc, dict):
        raise OVEarthInputError([Problem(name, "(document)", "a JSON object at the top level",
                                         f"a JSON {type(doc).__name__}")])
    return doc


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


def parse_ground_truth(doc: dict[str, Any], name: str) -> GroundTruth:
    """Validate a ground-truth document (all tasks) into typed annotations and queries."""
    bad = ProblemCollector(name)
    annotations: dict[str, Annotation] = {}
    broken: set[str] = set()  # ids of annotations already reported as invalid
    raw_anns = doc.get("annotations")
    if not isinstance(raw_anns, list):
        bad.add("annotations", "a list of annotation objects", raw_anns if raw_anns is not None
                else "<missing>")
        raw_anns = []
    totals = masks.compressed_totals(_string_counts(raw_anns))
    for i, ann in enumerate(raw_anns):
        where = f"annotations[{i}]"
        if not isinstance(ann, dict):
            bad.add(where, "an annotation object", ann)
            continue
        parsed = _parse_annotation(ann, where, bad, totals)
        if parsed is None:
            broken.add(_id(ann.get("id")) or "")
            continue
        if parsed.id in annotations:
            bad.add(f"{where}.id", "a unique annotation id", parsed.id)
            continue
        annotations[parsed.id] = parsed
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
    return GroundTruth(annotations, tasks)


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


def _parse_annotation(ann: dict[str, Any], where: str, bad: ProblemCollector,
                      totals: dict[str, int]) -> Annotation | None:
    ann_id = _id(ann.get("id"))
    if ann_id is None:
        bad.add(f"{where}.id", "a non-empty string id", ann.get("id", "<missing>"))
        return None
    ok = True
    image_path = ann.get("image_path")
    if not isinstance(image_path, str) or not image_path:
        bad.add(f"{where}.image_path", "a non-empty string path",
                ann.get("image_path", "<missing>"))
        ok = False
    width, height = _int_field(ann, "width"), _int_field(ann, "height")
    for key, value in (("width", width), ("height", height)):
        if value is None:
            bad.add(f"{where}.{key}", "a positive integer", ann.get(key, "<missing>"))
            ok = False
    category = ann.get("category_name", "")
    if not isinstance(category, str):
        bad.add(f"{where}.category_name", "a string", category)
        ok = False
    mask = None
    try:
        mask, size = masks.parse_rle(ann.get("segmentation"), totals)
        if width and height and size != (0, 0) and size != (height, width):
            bad.add(f"{where}.segmentation.size", f"[height, width] = [{height}, {width}]",
                    list(size))
            ok = False
    except FieldError as err:
        bad.add(f"{where}.segmentation{err.field}", err.expected, err.found)
        ok = False
    boxes = _parse_list(ann.get("bbox"), f"{where}.bbox", geometry.parse_gt_box, bad)
    obbs = _parse_list(ann.get("oriented_bbox"), f"{where}.oriented_bbox",
                       geometry.parse_polygon, bad)
    if not ok or boxes is None or obbs is None:
        return None
    return Annotation(ann_id, image_path, width, height, category, mask,
                      np.asarray(boxes, dtype=np.float64).reshape(-1, 4),
                      np.asarray(obbs, dtype=np.float64).reshape(-1, 4, 2))


def _parse_list(value: object, where: str, parse: Any, bad: ProblemCollector) -> list[Any] | None:
    if value is None:
        return []
    if not isinstance(value, list):
        bad.add(where, "a list", value)
        return None
    out = []
    for j, item in enumerate(value):
        try:
            out.append(parse(item))
        except FieldError as err:
            bad.add(f"{where}[{j}]{err.field}", err.expected, err.found)
            return None
    return out


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
                      score_threshold: float | None, bbox_format: str) -> dict[str, _Prediction]:
    """Validate the selected task's prediction rows, merging duplicates by query_id."""
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
    by_id = {q.query_id: q for q in queries}
    preds: dict[str, _Prediction] = {}
    totals = masks.compressed_totals(_string_counts(rows)) if "segmentation" in modalities else {}
    for i, row in enumerate(rows):
        where = f"tasks.{task_key}[{i}]"
        if not isinstance(row, dict):
            bad.add(where, "a prediction row object", row)
            continue
        qid = row.get("query_id")
        if not isinstance(qid, str):
            bad.add(f"{where}.query_id", "a string query_id", row.get("query_id", "<missing>"))
            continue
        query = by_id.get(qid)
        if query is None:
            bad.add(f"{where}.query_id", f"a query_id of the ground truth's {task_key} task",
                    f"<unknown id {qid[:40]!r}{'...' if len(qid) > 40 else ''}>", qid[:40])
            continue
        ann = annotations[query.ann_id]
        gt_size = (ann.height, ann.width)
        pred = preds.setdefault(qid, _Prediction())
        if "segmentation" in modalities:
            _merge_mask(pred, row.get("segmentation"), gt_size, where, qid, bad, totals)
        if "bbox" in modalities:
            _merge_boxes(pred, row.get("bbox"), "bbox", where, qid, bad, score_threshold,
                         lambda v: geometry.parse_box(v, bbox_format))
        if "oriented_bbox" in modalities:
            _merge_boxes(pred, row.get("oriented_bbox"), "oriented_bbox", where, qid, bad,
                         score_threshold, geometry.parse_obb)
    bad.raise_if_any()
    return preds


def _merge_mask(pred: _Prediction, value: object, gt_size: tuple[int, int], where: str,
                qid: str, bad: ProblemCollector, totals: dict[str, int]) -> None:
    try:
        rle, size = masks.parse_rle(value, totals)
    except FieldError as err:
        bad.add(f"{where}.segmentation{err.field}", err.expected, err.found, qid)
        return
    if size == (0, 0):
        return
    if size != gt_size:
        bad.add(f"{where}.segmentation.size",
                f"the ground-truth mask size [height, width] = {list(gt_size)} (or the [0, 0] "
                "empty sentinel)", list(size), qid)
        return
    if pred.mask_size not in ((0, 0), size):
        bad.add(f"{where}.segmentation.size",
                f"the same size as this query_id's earlier row {list(pred.mask_size)}",
                list(size), qid)
        return
    pred.mask_size = size
    pred.mask = masks.union([pred.mask, rle])


def _merge_boxes(pred: _Prediction, value: object, field: str, where: str, qid: str,
                 bad: ProblemCollector, score_threshold: float | None, parse: Any) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        bad.add(f"{where}.{field}", "a list of boxes ([] for none)", value, qid)
        return
    kept, scores = [], []
    for j, item in enumerate(value):
        try:
            geom, score = parse(item)
        except FieldError as err:
            bad.add(f"{where}.{field}[{j}]{err.field}", err.expected, err.found, qid)
            continue
        if geom is None:
            continue
        if score_threshold is not None:
            if score is None:
                bad.add(f"{where}.{field}[{j}].score",
                        "a score on every box when --score-threshold is set", "<missing>", qid)
                continue
            if score < score_threshold:
                continue
        kept.append(geom)
        scores.append(math.nan if score is None else score)
    if field == "bbox":
        pred.boxes = (pred.boxes or []) + kept
        pred.box_scores = (pred.box_scores or []) + scores
    else:
        pred.obbs = (pred.obbs or []) + kept
        pred.obb_scores = (pred.obb_scores or []) + scores


def _infer_modalities(preds: dict[str, _Prediction], name: str) -> tuple[str, ...]:
    found = {
        "segmentation": any(p.mask is not None for p in preds.values()),
        "bbox": any(p.boxes for p in preds.values()),
        "oriented_bbox": any(p.obbs for p in preds.values()),
    }
    chosen = tuple(m for m in MODALITIES if found[m])
    if not chosen:
        raise OVEarthInputError([Problem(name, "--modalities auto",
                                         "at least one non-empty prediction to infer modalities "
                                         "from (declare --modalities explicitly)",
                                         "only empty predictions")])
    return chosen


def load_samples(gt_path: PathLike, pred_path: PathLike, task: str,
                 score_threshold: float | None = None, bbox_format: str = "xyxy",
                 modalities: object = ("segmentation",), ground_truth: GroundTruth | None = None,
                 predictions_doc: dict[str, Any] | None = None) -> SampleList:
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
    """
    task_key = TASK_KEYS.get(task, task)
    if task_key not in TASK_KEYS.values():
        raise OVEarthInputError([Problem("(options)", "--task",
                                         "vocabulary, referring or reasoning", repr(task))])
    _check_options(score_threshold, bbox_format)
    chosen = parse_modalities(modalities)
    gt = ground_truth or parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path))
    doc = predictions_doc if predictions_doc is not None else read_json(pred_path, "prediction")
    queries = gt.tasks[task_key]
    preds = parse_predictions(doc, str(pred_path), task_key, queries, gt.annotations,
                              chosen or MODALITIES, score_threshold, bbox_format)
    if chosen is None:
        chosen = _infer_modalities(preds, str(pred_path))
    samples = [_build_sample(q, gt.annotations[q.ann_id], preds.get(q.query_id), chosen)
               for q in queries]
    return SampleList(samples, task=task_key, modalities=chosen,
                      score_threshold=score_threshold, bbox_format=bbox_format)


def _build_sample(q: Query, ann: Annotation, pred: _Prediction | None,
                  modalities: tuple[str, ...]) -> Sample:
    sample = Sample(sample_id=q.query_id, phrase=q.text, negative=q.negative,
                    image_path=ann.image_path, ann_id=ann.id, category=ann.category,
                    width=ann.width, height=ann.height, has_prediction_row=pred is not None)
    if not q.negative:
        sample.gt_mask = ann.mask
        sample.gt_boxes = ann.boxes
        sample.gt_obbs = ann.obbs
    if pred is None:
        return sample
    if "segmentation" in modalities:
        sample.pred_mask = pred.mask
    if "bbox" in modalities and pred.boxes:
        sample.pred_boxes = np.asarray(pred.boxes, dtype=np.float64)
        sample.pred_box_scores = np.asarray(pred.box_scores, dtype=np.float64)
    if "oriented_bbox" in modalities and pred.obbs:
        sample.pred_obbs = np.asarray(pred.obbs, dtype=np.float64)
        sample.pred_obb_scores = np.asarray(pred.obb_scores, dtype=np.float64)
    return sample


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
