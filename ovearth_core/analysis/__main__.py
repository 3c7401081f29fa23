"""``python -m ovearth_core.analysis``: the evaluator's output plus an ``analysis`` block."""

from __future__ import annotations

from typing import Any

from . import analysis_report


def main(argv: list[str] | None = None) -> int:
    """``python -m ovearth_core.analysis``: the evaluator's output plus an ``analysis`` block.

    Takes the evaluator's options (``--gt``, ``--predictions``, ``--task``,
    ``--modalities``, ...) and ``--hard-negatives``. The sweep and AP need every box,
    so with ``--score-threshold`` the samples are loaded a second time without it.
    """
    from ..cli import build_parser, run_and_emit
    from ..evaluate import evaluate_samples
    from ..io import load_samples

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
        # Printed to stderr with the evaluator's warnings.
        result["warnings"] = result.get("warnings", []) + result["analysis"]["warnings"]
        return result

    return run_and_emit(parser.prog, compute, args.output, (args.gt, args.predictions))


if __name__ == "__main__":
    raise SystemExit(main())
