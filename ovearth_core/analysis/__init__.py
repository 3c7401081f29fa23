"""Analysis beyond the reference toolkit, as one JSON-ready block.

``analysis_report`` is meant to sit under a new top-level key ``analysis`` of the evaluator
output (spec keys are never renamed). Its parts:

``score_sweep``
    :func:`ovearth_core.analysis.sweep.score_sweep` -- metrics per score threshold, best thresholds.
``average_precision``
    :func:`ovearth_core.analysis.ap.average_precision_report` -- VOC / COCO-style AP and PR curves.
``error_attribution``
    :func:`ovearth_core.analysis.attribution.error_attribution` -- metric rise per fixed error
    kind, with ``objects`` (every box's TIDE kind, :mod:`.objects`) and ``confusion``
    (predicted category -> GT category -> unmatched boxes on another category's GT).
``failure_tags``
    ``{query_id: {"tag", "modalities": {modality: tag}}}`` -- :mod:`.diagnose`'s tags.
``warnings``
    ``{"code", "message"}`` items: many detections sharing a score (AP depends on their order);
    queries with more GT boxes than the COCO detection cap.

Score-dependent parts are only meaningful for samples loaded without a score threshold; the
threshold the samples were loaded with is recorded as ``loaded_score_threshold``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .ap_caps import COCO_MAX_DETECTIONS

if TYPE_CHECKING:
    from ..run import Run
    from ..types import SampleList

# The parts are imported by analysis_report: importing one submodule (``.ap``, ``.leaderboard``)
# or a command's ``--help`` does not load the others (issue 28).


def analysis_report(samples: SampleList, iou_threshold: float = 0.5,
                    hard_negatives: bool = False, max_points: int | None = 101,
                    evaluated: Run | None = None,
                    max_detections: int = COCO_MAX_DETECTIONS, nms_ap: bool = False,
                    aitod: bool = False) -> dict[str, Any]:
    """Sweep, average precision and error attribution of one task's samples.

    Args:
        samples: loaded with :func:`ovearth_core.io.load_samples`, preferably without
            ``score_threshold``.
        iou_threshold: the run's box matching threshold.
        hard_negatives: count boxes on negative queries as AP false positives.
        max_points: cap on the number of sweep thresholds.
        evaluated: the evaluation itself (:func:`~ovearth_core.evaluate.evaluate_run` of the
            samples loaded with its score threshold, at ``iou_threshold``); the failure tags
            and object outcomes describe it (default: ``samples`` evaluated here).
        max_detections: COCO's detection cap per query (COCOeval's ``maxDets[-1]``).
        nms_ap: add OVDEval's NMS-AP to each COCO block (needs ``hard_negatives``).
        aitod: add AI-TOD's protocol as each modality's ``aitod`` block.
    """
    from ..evaluate import evaluate_run
    from . import objects
    from .ap import average_precision_report
    from .attribution import error_attribution
    from .sweep import BOX_MODALITIES, score_sweep, sweep_to_dict

    run = evaluated if evaluated is not None else evaluate_run(samples, iou_threshold)
    mods = tuple(samples.modalities)
    has_boxes = any(m in mods for m in BOX_MODALITIES)
    ap = average_precision_report(samples, iou_threshold, mods, hard_negatives,
                                  max_detections, nms_ap, aitod) if has_boxes else None
    return {
        "loaded_score_threshold": samples.score_threshold,
        "score_sweep": (sweep_to_dict(score_sweep(samples, iou_threshold,
                                                  max_points=max_points))
                        if has_boxes or samples.task == "open_vocabulary" else None),
        "average_precision": ap,
        "error_attribution": {
            **error_attribution(samples, iou_threshold,
                                evaluated=run.results if evaluated is None else None),
            **objects.objects_report(run.samples, mods, iou_threshold,
                                     per_sample=run.per_sample)},
        "failure_tags": failure_tags(run),
        "warnings": [{"code": code, "message": f"{m} AP: {warning}"}
                     for m in BOX_MODALITIES if ap and ap[m]
                     for code, warning in (("score_ties", ap[m]["score_ties"]["warning"]),
                                           ("detection_cap", ap[m]["coco"]["cap_warning"]))
                     if warning],
    }


def failure_tags(run: Any) -> dict[str, dict[str, Any]]:
    """``{query_id: {"tag": tag, "modalities": {"seg"|"bbox"|"obb": tag}}}`` of a
    :class:`~ovearth_core.run.Run` (:mod:`.diagnose`; modalities not evaluated left out),
    in the evaluator's query order."""
    from . import diagnose

    rows = {r["query_id"]: r for r in diagnose.query_rows(run)}
    return {r["sample_id"]: {"tag": rows[r["sample_id"]]["failure"],
                             "modalities": rows[r["sample_id"]]["failure_by_modality"]}
            for r in run.per_sample}
