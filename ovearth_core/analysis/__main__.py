"""``python -m ovearth_core.analysis``: the evaluator's output plus an ``analysis`` block."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bounds import MAX_RESAMPLES, MAX_SEED, int_arg
from . import analysis_report
from .ap_caps import add_ap_arguments, check_ap_arguments

if TYPE_CHECKING:
    import argparse


def build_analysis_parser() -> argparse.ArgumentParser:
    """The analysis command's options: the evaluator's, then the analyses' own (built
    without numpy or the evaluator: ``--help`` loads neither)."""
    from ..cli import add_concave_obb_option, add_large_masks_option, build_parser
    from . import slice_options as options

    parser = build_parser()
    add_large_masks_option(parser)
    add_concave_obb_option(parser)
    parser.prog = "python -m ovearth_core.analysis"
    parser.description = "Evaluate one task and add score sweeps, AP and error attribution."
    add_ap_arguments(parser, "count boxes predicted on negative queries as AP false positives "
                     "(of the category their phrase names, in the mAP)",
                     "COCO-style AP: keep each query's N best boxes (COCOeval's maxDets; "
                     "AI-TOD uses 1500)")
    parser.add_argument("--slice-by", action="append", default=[], metavar="ATTR",
                        type=options.slice_arg,
                        help="add key metrics per value of ATTR (repeatable): "
                             + ", ".join((*options.ATTRIBUTES, options.QUERY_FORM, options.GSD))
                             + ", meta:KEY (the annotations' image_meta[KEY])")
    parser.add_argument("--taxonomy", default=None,
                        help="JSON {category: group} for --slice-by group (default: "
                             "taxonomy.json beside the ground truth)")
    parser.add_argument("--slice-resamples", type=int_arg(1, MAX_RESAMPLES),
                        default=options.DEFAULT_RESAMPLES,
                        help="bootstrap resamples per slice (default %(default)s)")
    parser.add_argument("--slice-seed", type=int_arg(0, MAX_SEED), default=options.DEFAULT_SEED,
                        help="bootstrap seed (default %(default)s)")
    parser.add_argument("--slice-unit", choices=("auto", "query", "image"), default="auto",
                        help="what the slice bootstrap resamples (default auto: images for "
                             "a DOTA or COCO conversion, else queries)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m ovearth_core.analysis``: the evaluator's output plus an ``analysis`` block.

    Takes the evaluator's options (``--gt``, ``--predictions``, ``--task``,
    ``--modalities``, ...), ``--hard-negatives`` and ``--max-detections N`` (COCO's cap).
    The sweep and AP need every box, so with ``--score-threshold`` the samples are loaded a
    second time without it.
    ``--slice-by ATTR`` (repeatable) adds ``analysis.slices[ATTR]`` (:mod:`.slices`);
    ``group`` reads ``--taxonomy`` (default: ``taxonomy.json`` beside the ground truth),
    ``tag`` the review sidecar beside the ground truth (:mod:`ovearth_core.review`);
    ``query_form`` evaluates all three tasks of the same files (with the resolved
    modalities of ``--task``) and compares them on the same targets.
    """
    from ..cli import run_and_emit
    from ..reads import Reads, image_paths_of, images_of

    parser = build_analysis_parser()
    args = parser.parse_args(argv)
    check_ap_arguments(parser, args)
    reads = Reads([args.gt, args.predictions], images_of(args.gt, None))
    # Imported once the options are read: ``--help`` loads neither numpy nor the evaluator.
    from ..evaluate import evaluate_run, evaluate_samples
    from ..io import load_samples, read_json
    from ..options import Options
    from ..review import load_state, sidecar_for
    from ..types import TASK_KEYS
    from . import slices
    from .compare import default_unit

    def add_slices(result: dict[str, Any], samples: Any) -> dict[str, Any]:
        taxonomy_path = args.taxonomy or Path(args.gt).parent / "taxonomy.json"
        taxonomy = tags = None
        if "group" in args.slice_by:
            reads.add(taxonomy_path)
            taxonomy = slices.load_taxonomy(taxonomy_path)
        if "tag" in args.slice_by:
            reads.add(sidecar_for(args.gt))
            tags = load_state(sidecar_for(args.gt)).query_tags(samples.task)
        wants_meta = [a for a in args.slice_by if slices.needs_meta(a)]
        meta = None
        if wants_meta:
            gt_doc = read_json(args.gt, "ground truth")
            if slices.GSD in wants_meta:
                reads.add_images(image_paths_of(gt_doc))
            meta = slices.image_meta_of(gt_doc, reads.images_root,
                                        with_gsd=slices.GSD in wants_meta)
        out = {}
        for attr in dict.fromkeys(args.slice_by):
            table = (query_forms(result, samples) if attr == slices.QUERY_FORM else
                     slices.slice_table(result, samples, attr, taxonomy, tags,
                                        n_resamples=args.slice_resamples, seed=args.slice_seed,
                                        meta=meta, unit=unit()))
            out[attr] = slices.table_to_dict(table)
        return out

    def unit() -> str:
        return default_unit(args.gt) if args.slice_unit == "auto" else args.slice_unit

    def query_forms(result: dict[str, Any], samples: Any) -> slices.SliceTable:
        by_form, results = {}, {}
        for form, key in TASK_KEYS.items():
            if key == samples.task:
                by_form[form], results[form] = samples, result
                continue
            by_form[form] = load_samples(args.gt, args.predictions, form,
                                         score_threshold=args.score_threshold,
                                         bbox_format=args.bbox_format,
                                         modalities=samples.modalities,
                                         large_masks=args.large_masks,
                                         concave_obb=args.concave_obb)
            results[form] = evaluate_samples(by_form[form], args.iou_threshold)
        return slices.query_form_table(results, by_form, n_resamples=args.slice_resamples,
                                       seed=args.slice_seed, unit=unit())

    def compute() -> dict[str, Any]:
        o = Options.from_args(args)
        samples = load_samples(args.gt, args.predictions, o.task,
                               score_threshold=o.score_threshold,
                               bbox_format=o.bbox_format, modalities=o.modalities,
                               large_masks=o.large_masks, concave_obb=o.concave_obb)
        run = evaluate_run(samples, o.iou_threshold)
        result = run.results
        result["analysis"] = analysis_report(samples.every_box, o.iou_threshold,
                                             hard_negatives=o.hard_negatives,
                                             evaluated=run, max_detections=o.max_detections,
                                             nms_ap=o.nms_ap, aitod=o.aitod)
        if args.slice_by:
            result["analysis"]["slices"] = add_slices(result, samples)
        # Printed to stderr with the evaluator's warnings.
        result["warnings"] = result.get("warnings", []) + result["analysis"]["warnings"]
        return result

    return run_and_emit(parser.prog, compute, args.output, reads)


if __name__ == "__main__":
    raise SystemExit(main())
