"""Data types shared by the loader, the metrics and the app.

Samples are built once by :mod:`ovearth_core.io` from validated JSON; nothing
downstream re-validates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .errors import OVEarthInputError, Problem
from .masks import Rle
from .options import TASK_KEYS  # noqa: F401  (CLI task value -> JSON key; defined there)

MODALITIES: tuple[str, ...] = ("segmentation", "bbox", "oriented_bbox")
# Modality -> key of its summary / per-sample entry in the output JSON.
OUTPUT_KEYS: dict[str, str] = {
    "segmentation": "seg", "bbox": "bbox", "oriented_bbox": "oriented_bbox"}
# IoU thresholds 0.50, 0.55, ..., 0.95 written as exact decimal literals (no float drift).
IOU_THRESHOLDS: tuple[float, ...] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
PR_THRESHOLDS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9)
# A prediction "overlaps" a target when their IoU is at least this (and above 0): the
# explorer's failure tags and the error attribution share this rule.
OVERLAP_EPS = 0.01


def _frozen(shape: tuple[int, ...]) -> npt.NDArray[np.float64]:
    empty = np.zeros(shape)
    empty.flags.writeable = False
    return empty


# Shared by every sample without boxes (read-only, so sharing them is safe).
EMPTY_BOXES, EMPTY_POLYS, EMPTY_SCORES = _frozen((0, 4)), _frozen((0, 4, 2)), _frozen((0,))


def _empty_boxes() -> npt.NDArray[np.float64]:
    return EMPTY_BOXES


def _empty_polys() -> npt.NDArray[np.float64]:
    return EMPTY_POLYS


def _empty_scores() -> npt.NDArray[np.float64]:
    return EMPTY_SCORES


@dataclass
class Sample:
    """One query with its ground truth and (merged, filtered) prediction.

    Boxes are xyxy ``(N, 4)``; oriented boxes ``(N, 4, 2)``; scores ``(N,)``
    with ``nan`` where a box carried no score. For negative queries every
    ``gt_*`` field is empty: the linked annotation is not target geometry.
    ``gt_mask is None`` / zero GT boxes mean "no usable GT" for that modality.
    """

    sample_id: str
    phrase: str
    negative: bool
    image_path: str
    ann_id: str
    category: str
    width: int
    height: int
    gt_mask: Rle | None = None
    gt_boxes: npt.NDArray[np.float64] = field(default_factory=_empty_boxes)
    gt_obbs: npt.NDArray[np.float64] = field(default_factory=_empty_polys)
    pred_mask: Rle | None = None
    pred_boxes: npt.NDArray[np.float64] = field(default_factory=_empty_boxes)
    pred_box_scores: npt.NDArray[np.float64] = field(default_factory=_empty_scores)
    pred_obbs: npt.NDArray[np.float64] = field(default_factory=_empty_polys)
    pred_obb_scores: npt.NDArray[np.float64] = field(default_factory=_empty_scores)
    has_prediction_row: bool = False
    # Ignore regions of the target (COCO crowd): xyxy (R, 4) and (R, 4, 2). Only the
    # COCO-style AP reads them; the spec's metrics see them as background.
    gt_ignore_boxes: npt.NDArray[np.float64] = field(default_factory=_empty_boxes)
    gt_ignore_obbs: npt.NDArray[np.float64] = field(default_factory=_empty_polys)
    # DOTA's "difficult" flag of each target box (N,), parallel to gt_boxes / gt_obbs; empty
    # when the annotation has none. Only the devkit's AP (``voc_devkit``) reads it.
    gt_difficult: npt.NDArray[np.bool_] = field(
        default_factory=lambda: np.zeros(0, dtype=bool))
    # Each target's size (N,), parallel to gt_boxes / gt_obbs: the annotation's ``area``
    # (COCO's: an instance mask's pixel count); empty when the annotation has none. Only the
    # COCO-style AP's size ranges read it.
    gt_area: npt.NDArray[np.float64] = field(default_factory=_empty_scores)


class SampleList(list[Sample]):
    """The samples of one task, in ground-truth order, with the load options."""

    def __init__(self, samples: list[Sample], *, task: str, modalities: tuple[str, ...],
                 score_threshold: float | None, bbox_format: str,
                 submitted: tuple[str, ...] | None = None,
                 unknown_task_keys: tuple[str, ...] = (), concave_obb: bool = False):
        super().__init__(samples)
        # Loaded with the option concave_obb (an extension the output's config names).
        self.concave_obb = concave_obb
        self.task = task
        self.modalities = modalities
        self.score_threshold = score_threshold
        self.bbox_format = bbox_format
        # What the prediction file holds for this task (ovearth_core.coverage); None: unknown
        # (samples built by hand), so every enabled modality counts as submitted.
        self.submitted = submitted
        self.unknown_task_keys = unknown_task_keys
        # Every box whatever the score threshold (issue 39: the threshold is a view of one
        # parse); see :attr:`every_box`.
        self._every: SampleList | None = None
        self._every_file = ""

    @property
    def every_box(self) -> SampleList:
        """These samples with every predicted box, whatever the score threshold (the same
        list when there is none): what the average precision and the score sweep rank.
        Built from the same parse as the thresholded view; on first use it is held to the
        evaluator's pair cap, as a load without a threshold would be (raises
        :class:`~ovearth_core.errors.OVEarthInputError` as that load would)."""
        if self._every is None:
            return self
        if self._every_file is not None:
            check_pair_cap(self._every, self._every.modalities, self._every_file)
            self._every_file = None
        return self._every

    def with_every_box(self, every: SampleList, file: str) -> SampleList:
        """Attach ``every`` (the same queries, every box) as :attr:`every_box`; ``file``
        names the prediction file in a pair-cap problem."""
        self._every, self._every_file = every, file
        return self


# At most this many GT x predicted box pairs in one query and modality: beyond it one
# query's IoU matrix alone (8 bytes a pair, with its temporaries) would take gigabytes.
# The reference toolkit has no cap (docs/cli.md: the input rules).
MAX_PAIRS_PER_QUERY = 50_000_000
_BOX_FIELDS = {"bbox": ("gt_boxes", "pred_boxes"), "oriented_bbox": ("gt_obbs", "pred_obbs")}


def check_pair_cap(samples: Sequence[Sample], modalities: Sequence[str], file: str) -> None:
    """Refuse queries with more than :data:`MAX_PAIRS_PER_QUERY` GT x predicted box pairs in
    an enabled box modality, before any IoU matrix is allocated.

    Raises:
        OVEarthInputError: one problem per such query and modality, naming ``file``, the
        query_id, the counts and the cap.
    """
    cap = MAX_PAIRS_PER_QUERY
    problems = []
    for modality in (m for m in _BOX_FIELDS if m in modalities):
        gt_field, pred_field = _BOX_FIELDS[modality]
        for s in samples:
            n_gt, n_pred = len(getattr(s, gt_field)), len(getattr(s, pred_field))
            if n_gt * n_pred > cap:
                problems.append(Problem(
                    file, modality,
                    f"at most {cap:,} GT x predicted box pairs in one query (the evaluator's "
                    "cap MAX_PAIRS_PER_QUERY)",
                    f"{n_gt:,} GT boxes x {n_pred:,} predicted boxes = {n_gt * n_pred:,} pairs",
                    s.sample_id))
    if problems:
        raise OVEarthInputError(problems)
