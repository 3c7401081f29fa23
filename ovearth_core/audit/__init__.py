"""Benchmark audit: label errors found from the consensus of many submissions (issue 36).

:func:`audit` loads one ground truth and several submissions of one task through the
pipeline (:func:`ovearth_core.pipeline.load`: the ground truth read once) and returns
:func:`~.consensus.audit_samples`'s result: the ranked suspects (missing, spurious,
shifted, wrong class) and every GT object's support. docs/audit.md says how the score is
made; ``python -m ovearth_core.audit`` is the command line.

Example::

    >>> from ovearth_core.options import Options
    >>> result = audit("gt.json", ["a.json", "b.json", "c.json"],
    ...                Options("vocabulary", "bbox"))                    # doctest: +SKIP
    >>> result["suspects"][0]["kind"]                                     # doctest: +SKIP
    'missing'
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import OVEarthInputError, Problem
from ..options import TASK_KEYS, Options
from .consensus import KINDS, MIN_SCORE, audit_samples
from .shapes import MODALITIES

__all__ = ["KINDS", "MIN_SCORE", "MODALITIES", "audit", "audit_samples", "submission_names"]

PathLike = str | os.PathLike[str]
MIN_SUBMISSIONS = 2


def submission_names(paths: Sequence[PathLike]) -> list[str]:
    """The submissions' names: their file stems, or the paths as given where two stems
    are the same."""
    stems = [Path(p).stem for p in paths]
    return [s if stems.count(s) == 1 else os.fspath(p) for s, p in zip(stems, paths,
                                                                        strict=True)]


def audit(gt_path: PathLike, pred_paths: Sequence[PathLike], options: Options, *,
          min_score: float = MIN_SCORE) -> dict[str, Any]:
    """Audit ``gt_path`` with the submissions ``pred_paths`` under ``options`` (its one
    modality, task, IoU and score thresholds, box format). Raises
    :class:`~ovearth_core.errors.OVEarthInputError` for bad input or fewer than two
    submissions that answer in the modality; a submission without any object in it is
    left out with a warning."""
    from ..evaluate import check_iou_threshold
    from ..pipeline import load, read_ground_truth

    check_iou_threshold(options.iou_threshold)
    if not isinstance(min_score, (int, float)) or isinstance(min_score, bool) or not (
            math.isfinite(min_score)):
        raise OVEarthInputError([Problem("(options)", "--min-score", "a finite number",
                                         repr(min_score))])
    if len(options.modalities) != 1 or options.modalities[0] not in MODALITIES:
        raise OVEarthInputError([Problem("(options)", "--modality", "one of "
                                         + ", ".join(MODALITIES),
                                         ", ".join(options.modalities))])
    modality = options.modalities[0]
    ground_truth, sha = read_ground_truth(gt_path)
    names = submission_names(pred_paths)
    kept, kept_names, warnings = [], [], []
    seen: dict[str, str] = {}  # a submission's SHA-256 -> its name
    for path, name in zip(pred_paths, names, strict=True):
        loaded = load(gt_path, path, options, ground_truth=ground_truth, gt_sha256=sha)
        samples = loaded.samples
        if loaded.pred_sha256 in seen:
            # The same bytes twice would vote twice: the consensus would look stronger
            # than the evidence.
            warnings.append({"submission": name, "message": (
                f"{os.fspath(path)}: the same file as {seen[loaded.pred_sha256]} (SHA-256 "
                f"{loaded.pred_sha256[:12]}); counted once")})
            continue
        seen[loaded.pred_sha256] = name
        if samples.submitted is not None and modality not in samples.submitted:
            warnings.append({"submission": name, "message": (
                f"{os.fspath(path)}: no {modality} predictions for task {options.task}; "
                "left out of the audit")})
            continue
        kept.append(samples)
        kept_names.append(path)
    if len(kept) < MIN_SUBMISSIONS:
        raise OVEarthInputError([Problem("(options)", "--predictions",
                                         f"at least {MIN_SUBMISSIONS} submissions with "
                                         f"{modality} predictions for task {options.task}",
                                         f"{len(kept)} of {len(names)}")])
    # Named among those kept (a copy left out does not make its original's name a path).
    kept_names = submission_names(kept_names)
    result = audit_samples(kept, kept_names, modality, options.iou_threshold, min_score)
    # An extension beyond the spec is named in the output when it is on (as in a config).
    extensions = {name: True for name in ("concave_obb", "large_masks")
                  if getattr(options, name)}
    return {"task": TASK_KEYS[options.task], **result, **extensions, "warnings": warnings}
