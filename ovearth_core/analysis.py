"""Analysis beyond the reference toolkit, as one JSON-ready block.

``analysis_report`` is meant to sit under a new top-level key ``analysis`` of the evaluator
output (spec keys are never renamed). Its parts:

``score_sweep``
    :func:`ovearth_core.sweep.score_sweep` -- metrics per score threshold, best thresholds.
``average_precision``
    :func:`ovearth_core.ap.average_precision_report` -- VOC / COCO-style AP and PR curves.
``error_attribution``
    :func:`ovearth_core.attribution.error_attribution` -- metric rise per fixed error kind.

Score-dependent parts are only meaningful for samples loaded without a score threshold; the
threshold the samples were loaded with is recorded as ``loaded_score_threshold``.
"""

from __future__ import annotations

from typing import Any

from .ap import average_precision_report
from .attribution import error_attribution
from .sweep import BOX_MODALITIES, score_sweep, sweep_to_dict
from .types import SampleList


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
    mods = tuple(samples.modalities)
    has_boxes = any(m in mods for m in BOX_MODALITIES)
    return {
        "loaded_score_threshold": samples.score_threshold,
        "score_sweep": (sweep_to_dict(score_sweep(samples, iou_threshold,
                                                  max_points=max_points))
                        if has_boxes or samples.task == "open_vocabulary" else None),
        "average_precision": (average_precision_report(samples, iou_threshold, mods,
                                                       hard_negatives) if has_boxes else None),
        "error_attribution": error_attribution(samples, iou_threshold),
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m ovearth_core.analysis``: the evaluator's output plus an ``analysis`` block.

    Takes the evaluator's options (``--gt``, ``--predictions``, ``--task``,
    ``--modalities``, ...) and ``--hard-negatives``. The sweep and AP need every box,
    so with ``--score-threshold`` the samples are loaded a second time without it.
    """
    from .cli import build_parser, run_and_emit
    from .evaluate import evaluate_samples
    from .io import load_samples

    parser = build_parser()
    parser.prog = "python -m ovearth_core.analysis"
    parser.description = "Evaluate one task and add score sweeps, AP and error attribution."
    parser.add_argument("--hard-negatives", action="store_true",
                        help="count boxes predicted on negative queries as AP false positives")
    args = parser.parse_args(argv)

    def compute() -> dict[str, Any]:
        samples = load_samples(args.gt, args.predictions, args.task,
                               score_threshold=args.score_threshold,
                               bbox_format=args.bbox_format, modalities=args.modalities)
        result = evaluate_samples(samples, args.iou_threshold)
        every_box = samples if args.score_threshold is None else load_samples(
            args.gt, args.predictions, args.task, bbox_format=args.bbox_format,
            modalities=samples.modalities)
        result["analysis"] = analysis_report(every_box, args.iou_threshold,
                                             hard_negatives=args.hard_negatives)
        return result

    return run_and_emit(parser.prog, compute, args.output)


if __name__ == "__main__":
    raise SystemExit(main())
