"""Analysis beyond the reference toolkit, as one JSON-ready block.

``analysis_report`` is meant to sit under a new top-level key ``analysis`` of the evaluator
output (spec keys are never renamed). Its parts:

``score_sweep``
    :func:`ovearth_core.analysis.sweep.score_sweep` -- metrics per score threshold, best thresholds.
``average_precision``
    :func:`ovearth_core.analysis.ap.average_precision_report` -- VOC / COCO-style AP and PR curves.
``error_attribution``
    :func:`ovearth_core.analysis.attribution.error_attribution` -- metric rise per fixed error kind.
``warnings``
    ``{"code", "message"}`` items: many detections sharing a score (AP depends on their order).

Score-dependent parts are only meaningful for samples loaded without a score threshold; the
threshold the samples were loaded with is recorded as ``loaded_score_threshold``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..types import SampleList

# The parts are imported by analysis_report: importing one submodule (``.ap``, ``.leaderboard``)
# or a command's ``--help`` does not load the others (issue 28).


def analysis_report(samples: SampleList, iou_threshold: float = 0.5,
                    hard_negatives: bool = False, max_points: int | None = 101,
                    ) -> dict[str, Any]:
    """Sweep, average precision and error attribution of one task's samples.

    Args:
        samples: loaded with :func:`ovearth_core.io.load_samples`, preferably without
            ``score_threshold``.
        iou_threshold: the run's box matching threshold.
        hard_negatives: count boxes on negative queries as AP false positives.
        max_points: cap on the number of sweep thresholds.
    """
    from .ap import average_precision_report
    from .attribution import error_attribution
    from .sweep import BOX_MODALITIES, score_sweep, sweep_to_dict

    mods = tuple(samples.modalities)
    has_boxes = any(m in mods for m in BOX_MODALITIES)
    ap = average_precision_report(samples, iou_threshold, mods, hard_negatives) if has_boxes \
        else None
    return {
        "loaded_score_threshold": samples.score_threshold,
        "score_sweep": (sweep_to_dict(score_sweep(samples, iou_threshold,
                                                  max_points=max_points))
                        if has_boxes or samples.task == "open_vocabulary" else None),
        "average_precision": ap,
        "error_attribution": error_attribution(samples, iou_threshold),
        "warnings": [{"code": "score_ties", "message": f"{m} AP: {ap[m]['score_ties']['warning']}"}
                     for m in BOX_MODALITIES if ap and ap[m] and ap[m]["score_ties"]["warning"]],
    }
