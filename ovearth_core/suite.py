"""Evaluate several tasks of one submission, reading each file once.

The spec's CLI evaluates one task per run; a script or notebook that wants all
three would otherwise read and validate the same two files three times.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .evaluate import evaluate_samples
from .gcpause import gc_paused
from .io import PathLike, load_samples, parse_ground_truth, read_json
from .types import TASK_KEYS


def evaluate_files(gt_path: PathLike, pred_path: PathLike,
                   tasks: Sequence[str] = tuple(TASK_KEYS), *, modalities: object = "auto",
                   iou_threshold: float = 0.5, score_threshold: float | None = None,
                   bbox_format: str = "xyxy") -> dict[str, dict[str, Any]]:
    """Evaluate ``tasks`` (CLI names: vocabulary, referring, reasoning) of one submission.

    Same results as one :func:`~ovearth_core.io.load_samples` +
    :func:`~ovearth_core.evaluate.evaluate_samples` per task with the same
    options; the files are read, and the ground truth validated, once.

    Returns:
        ``{task: result}`` in the order of ``tasks``.

    Raises:
        OVEarthInputError: as the per-task functions do.
    """
    with gc_paused():
        gt = parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path))
        doc = read_json(pred_path, "prediction")
        results = {task: evaluate_samples(
                       load_samples(gt_path, pred_path, task, score_threshold, bbox_format,
                                    modalities, ground_truth=gt, predictions_doc=doc),
                       iou_threshold)
                   for task in tasks}
        # Free the documents while collection is paused: the first collection after
        # the pause walks every object still alive (a million for a prediction file).
        del gt, doc
        return results
