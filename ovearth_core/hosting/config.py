"""What a hosted leaderboard scores, as one value: :class:`HostingConfig` (issue 40).

The bundle writer (:mod:`.bundle`) builds it from the command line and stores it as
``scoring.json`` beside the scoring program; the scorer (:mod:`.scorer`) reads it back. It
holds the evaluator's :class:`~ovearth_core.options.Options` (modalities declared, never
``auto``: every submission is scored on the same modalities), the tasks scored, the
leaderboard's columns and the limits a submission must keep.

A column is one key metric of one task: ``<task key>_<metric>``, the task as the JSON names
it (``open_vocabulary_seg_macro_miou``), its value ``summary[modality][metric]`` of that
task's evaluator result, the same number ``python -m ovearth_core`` prints. Metric names are
the entries of :data:`ovearth_core.analysis.additive.METRICS` (the leaderboard's ranked
metrics), or of :data:`ovearth_core.labels.AP_RANKED` (average precision of
every box, issue 50: ``bbox_coco_map``, ``bbox_nms_map``, ``bbox_aitod_map`` ...), computed
with the options' ``hard_negatives``, ``max_detections``, ``nms_ap`` and ``aitod``; a column
of NMS-AP or AI-TOD needs its option on. A ``scoring.json`` written before these existed
reads them as off.

>>> config = HostingConfig(("vocabulary",), Options("vocabulary", "segmentation,bbox"))
>>> [c.key for c in config.columns]  # doctest: +NORMALIZE_WHITESPACE
['open_vocabulary_presence_mcc', 'open_vocabulary_seg_macro_miou',
 'open_vocabulary_bbox_micro_f1']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..analysis.additive import METRICS
from ..files import DEFAULT_MAX_INPUT_MB
from ..io import GroundTruth
from ..labels import (
    AP_OPTIONAL,
    AP_RANKED,
    METRIC_LABELS,
    MODALITY_LABELS,
    TASK_LABELS,
    metric_label,
)
from ..options import COCO_MAX_DETECTIONS, MIN_MAX_DETECTIONS, TASK_KEYS, Options

MODALITY_BLOCK = {"segmentation": "seg", "bbox": "bbox", "oriented_bbox": "oriented_bbox"}
# The paper's key metric of each summary block (ma-IoU, MCC, mi-F1): the default columns.
DEFAULT_METRICS = ("presence_mcc", "seg_macro_miou", "bbox_micro_f1", "oriented_bbox_micro_f1")
BOX_FIELDS = ("bbox", "oriented_bbox")


@dataclass(frozen=True)
class Limits:
    """What a submission may cost: its JSON file's size, the scorer's wall time, and the
    boxes of one query in one box field (``bbox`` or ``oriented_bbox``, duplicate rows
    summed)."""

    max_mb: float = float(DEFAULT_MAX_INPUT_MB)
    time_limit_s: float = 540.0
    max_boxes: int = 1000

    @property
    def max_bytes(self) -> int:
        return int(self.max_mb * 1024 * 1024)


@dataclass(frozen=True)
class Column:
    """One leaderboard column: ``task`` (command-line name) and ``metric`` (a name of
    :data:`~ovearth_core.analysis.additive.METRICS`)."""

    task: str
    metric: str

    @property
    def key(self) -> str:
        """``<task key>_<metric>``: the task as the JSON names it (``open_vocabulary``),
        as in the evaluator's output; ``task`` itself is the command-line name."""
        return f"{TASK_KEYS[self.task]}_{self.metric}"

    @property
    def path(self) -> tuple[str, str, str]:
        """``(task key, summary block, summary metric)`` of the evaluator's result; for an
        average precision (:attr:`average_precision`), ``(task key, box modality, key of
        labels.AP_METRICS)`` of its AP report."""
        if self.average_precision:
            modality, key = AP_RANKED[self.metric]
            return TASK_KEYS[self.task], modality, key
        m = METRICS[self.metric]
        return TASK_KEYS[self.task], m.modality, m.metric

    @property
    def average_precision(self) -> bool:
        """Whether the column is an average precision (of the AP report, not the summary)."""
        return self.metric in AP_RANKED

    @property
    def title(self) -> str:
        task, block, metric = self.path
        if self.average_precision:
            return f"{TASK_LABELS[task]}: {MODALITY_LABELS[block]} {METRIC_LABELS[metric]}"
        return f"{TASK_LABELS[task]}: {metric_label(block, metric)}"


def applies(task: str, metric: str, modalities: Sequence[str]) -> bool:
    """Whether ``metric`` exists for ``task`` scored on ``modalities`` (presence only in the
    open-vocabulary task, which has negative queries)."""
    if metric in AP_RANKED:
        return AP_RANKED[metric][0] in {MODALITY_BLOCK[m] for m in modalities}
    block = METRICS[metric].modality
    if block == "presence":
        return task == "vocabulary"
    return block in {MODALITY_BLOCK[m] for m in modalities}


def truth_modalities(gt: GroundTruth, tasks: Sequence[str]) -> tuple[str, ...]:
    """The modalities in which the ground truth ``gt`` has a target for a positive query of
    ``tasks`` (command-line names): ``segmentation`` when one has a mask, ``bbox`` /
    ``oriented_bbox`` when one has such a box. A column of another modality would be
    empty (null) for every submission."""
    anns = [gt.annotations[q.ann_id] for t in tasks for q in gt.tasks.get(TASK_KEYS[t], ())
            if not q.negative]
    held = {"segmentation": any(a.mask is not None for a in anns),
            "bbox": any(len(a.boxes) for a in anns),
            "oriented_bbox": any(len(a.obbs) for a in anns)}
    return tuple(m for m in MODALITY_BLOCK if held[m])


def default_columns(tasks: Sequence[str], modalities: Sequence[str],
                    metrics: Sequence[str] = DEFAULT_METRICS, *,
                    strict: bool = False) -> tuple[Column, ...]:
    """Every ``metrics`` entry that applies, task by task (``ValueError`` for an unknown
    metric name and, ``strict``, for a name that applies to none of the tasks: one the user
    asked for by name)."""
    unknown = [m for m in metrics if m not in METRICS and m not in AP_RANKED]
    if unknown:
        raise ValueError(f"unknown metric {', '.join(unknown)}; expected one of "
                         f"{', '.join([*METRICS, *AP_RANKED])}")
    columns = tuple(Column(t, m) for t in tasks for m in metrics if applies(t, m, modalities))
    unused = [m for m in metrics if not any(c.metric == m for c in columns)]
    if unused and strict:
        raise ValueError(f"metric {', '.join(unused)} applies to none of the tasks "
                         f"({', '.join(tasks)}) on the modalities {', '.join(modalities)}")
    return columns


@dataclass(frozen=True)
class HostingConfig:
    """The scorer's configuration: ``tasks`` (command-line names, in leaderboard order),
    the evaluator's ``options`` (its ``task`` replaced by each of ``tasks``), the
    leaderboard's ``columns`` (default: :func:`default_columns`), the submission
    ``limits``, the worst queries drawn in the detailed results (``gallery``: 0 draws none,
    so no ground-truth geometry is shown to participants) and the EvalAI phases' split
    codenames (``{phase codename: split codename}``)."""

    tasks: tuple[str, ...]
    options: Options
    columns: tuple[Column, ...] = ()
    limits: Limits = field(default_factory=Limits)
    gallery: int = 0
    splits: dict[str, str] = field(default_factory=lambda: {"test": "test_split"})

    def __post_init__(self) -> None:
        tasks = tuple(dict.fromkeys({v: k for k, v in TASK_KEYS.items()}.get(t, t)
                                    for t in self.tasks))
        bad = [t for t in tasks if t not in TASK_KEYS]
        if bad or not tasks:
            raise ValueError(f"tasks: expected some of {', '.join(TASK_KEYS)}, found "
                             f"{', '.join(bad) or 'none'}")
        if self.options.auto:
            raise ValueError("modalities: expected them declared (segmentation, bbox, "
                             "oriented_bbox); a leaderboard scores every submission on the "
                             "same modalities, so auto is refused")
        unknown = [m for m in self.options.modalities if m not in MODALITY_BLOCK]
        if unknown:
            raise ValueError(f"modalities: expected some of {', '.join(MODALITY_BLOCK)}, "
                             f"found {', '.join(unknown)}")
        object.__setattr__(self, "tasks", tasks)
        if not self.columns:
            object.__setattr__(self, "columns",
                               default_columns(tasks, self.options.modalities))
        if not self.columns:
            raise ValueError("columns: expected a leaderboard column that applies to the "
                             f"tasks {', '.join(tasks)} on the modalities "
                             f"{', '.join(self.options.modalities) or '(none)'}, found none")
        o = self.options
        if o.nms_ap and not o.hard_negatives:
            raise ValueError("nms_ap: NMS-AP needs hard_negatives (it suppresses the boxes "
                             "of negative queries), found hard_negatives off")
        off = [c.key for c in self.columns if c.average_precision
               and c.path[2] in AP_OPTIONAL and not getattr(o, AP_OPTIONAL[c.path[2]])]
        if off:
            raise ValueError(f"columns: {', '.join(off)} need their protocol on (nms_ap "
                             "for *_nms_map, aitod for *_aitod_map)")

    def task_options(self, task: str) -> Options:
        return replace(self.options, task=task)

    def to_json(self) -> dict[str, Any]:
        o = self.options
        return {"tasks": list(self.tasks), "modalities": list(o.modalities),
                "iou_threshold": o.iou_threshold, "score_threshold": o.score_threshold,
                "bbox_format": o.bbox_format, "large_masks": o.large_masks,
                "concave_obb": o.concave_obb, "hard_negatives": o.hard_negatives,
                "max_detections": o.max_detections, "nms_ap": o.nms_ap, "aitod": o.aitod,
                "columns": [{"key": c.key, "task": c.task, "metric": c.metric}
                            for c in self.columns],
                "limits": {"max_mb": self.limits.max_mb,
                           "time_limit_s": self.limits.time_limit_s,
                           "max_boxes": self.limits.max_boxes},
                "gallery": self.gallery, "splits": dict(self.splits)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> HostingConfig:
        """The configuration ``to_json`` wrote (``KeyError``/``ValueError``/``TypeError``
        when it is not one)."""
        tasks = tuple(doc["tasks"])
        # Absent in bundles written before each existed: off, the spec's rule.
        flags = {key: doc.get(key, False) for key in ("large_masks", "concave_obb",
                                                       "hard_negatives", "nms_ap", "aitod")}
        for key, value in flags.items():
            if not isinstance(value, bool):
                raise TypeError(f"{key}: expected true or false, found {value!r}")
        cap = doc.get("max_detections", COCO_MAX_DETECTIONS)
        if type(cap) is not int or cap < MIN_MAX_DETECTIONS:
            raise TypeError(f"max_detections: expected a whole number of at least "
                            f"{MIN_MAX_DETECTIONS}, found {cap!r}")
        options = Options(tasks[0], tuple(doc["modalities"]), doc["iou_threshold"],
                          doc["score_threshold"], doc["bbox_format"], max_detections=cap,
                          **flags)
        return cls(tasks, options,
                   tuple(Column(c["task"], c["metric"]) for c in doc["columns"]),
                   Limits(**doc["limits"]), int(doc["gallery"]), dict(doc["splits"]))
