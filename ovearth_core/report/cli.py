"""The report's command line (``python -m ovearth_core.report``)."""

from __future__ import annotations

import argparse
import sys
import time

from ..analysis import slices
from ..analysis.ap_caps import add_ap_arguments, check_ap_arguments
from ..analysis.compare import DEFAULT_AP_RESAMPLES, DEFAULT_RESAMPLES, DEFAULT_SEED
from ..analysis.leaderboard_cli import add_rank_arguments
from ..analysis.slices import load_taxonomy
from ..bounds import MAX_RESAMPLES, MAX_SEED, int_arg
from ..cache import add_cache_arguments, describe, open_cache
from ..cli import (
    EXIT_BAD_INPUT,
    add_concave_obb_option,
    add_evaluation_options,
    add_input_options,
    add_large_masks_option,
    emit,
    output_refused,
)
from ..errors import OVEarthInputError
from ..options import Options
from ..reads import Reads
from ..types import TASK_KEYS
from ..viz.images import ImagePathError, resolve_image_path
from .build import WORST_DEFAULT, ReportData, build_report_data
from .html import render_html
from .ranks import rank_reports

MAX_WORST = 1000  # queries drawn per gallery: each is a picture in the HTML


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ovearth_core.report",
        description="Write a self-contained HTML report of one submission, or compare two.")
    add_input_options(parser, "prediction JSON path (submission A)")
    parser.add_argument("--compare", default=None, help="second prediction JSON (submission B)")
    parser.add_argument("--images", default=None,
                        help="folder that image_path values are relative to "
                             "(default: the ground truth's folder)")
    parser.add_argument("--out", required=True,
                        help="HTML path (written atomically; - or a pipe is streamed)")
    parser.add_argument("--task", action="append", choices=tuple(TASK_KEYS),
                        help="task to report; repeat for several (default: every task with "
                             "queries in the ground truth)")
    add_evaluation_options(parser)
    add_large_masks_option(parser)
    add_concave_obb_option(parser)
    parser.add_argument("--worst", type=int_arg(0, MAX_WORST), default=WORST_DEFAULT,
                        help="queries in each task's gallery (default 12)")
    parser.add_argument("--name", action="append", default=None,
                        help="display name of A, then of B (default: file names)")
    parser.add_argument("--resamples", type=int_arg(1000, MAX_RESAMPLES),
                        default=DEFAULT_RESAMPLES,
                        help=f"bootstrap resamples (default 2000, 1000 to {MAX_RESAMPLES:,})")
    parser.add_argument("--ap-resamples", type=int_arg(100, MAX_RESAMPLES),
                        default=DEFAULT_AP_RESAMPLES,
                        help="resamples of the AP intervals, the first of --resamples' "
                             f"(default {DEFAULT_AP_RESAMPLES}, 100 to --resamples)")
    parser.add_argument("--seed", type=int_arg(0, MAX_SEED), default=DEFAULT_SEED,
                        help="bootstrap seed")
    parser.add_argument("--bootstrap-unit", choices=("auto", "query", "image"), default="auto",
                        help="what the bootstrap resamples (default auto: images for a DOTA "
                             "or COCO conversion, else queries)")
    parser.add_argument("--taxonomy", default=None,
                        help="JSON {category: group}: adds a per-group table to each task")
    add_ap_arguments(parser, "average precision: boxes on negative queries count as false "
                     "positives (of the category their phrase names, in the mAP)",
                     "COCO-style AP: each query's N best boxes, COCOeval's maxDets")
    parser.add_argument("--slice-by", action="append", default=[], metavar="ATTR",
                        type=_report_slice,
                        help="adds a table of key metrics per value of ATTR to each task "
                             "(repeatable): gsd, meta:KEY (the annotations' image_meta[KEY]), "
                             + ", ".join(a for a in slices.ATTRIBUTES if a not in _NOT_SLICED))
    parser.add_argument("--rank", default=None, metavar="DIR",
                        help="adds each task's ranks with their uncertainty: every *.json "
                             "of DIR ranked (rank intervals, groups, tests against the leader, "
                             "Friedman and Nemenyi, per category)")
    add_rank_arguments(parser, leaderboard=False)
    parser.add_argument("--audit", nargs="+", default=None, metavar="PRED",
                        help="add an audit section: label errors suspected from the consensus "
                             "of these submissions (at least 2; docs/audit.md), on the first "
                             "task")
    parser.add_argument("--audit-modality", default="bbox",
                        choices=("bbox", "oriented_bbox", "segmentation"),
                        help="the geometry audited (default bbox)")
    add_cache_arguments(parser)
    return parser


# group: --taxonomy's table; tag: the app's Slices page (the review sidecar's tags)
_NOT_SLICED = ("group", "tag")


def _report_slice(text: str) -> str:
    """A ``--slice-by`` value the report can slice by (argparse's error, with the reason,
    otherwise)."""
    if text in _NOT_SLICED or text == slices.QUERY_FORM:
        raise argparse.ArgumentTypeError(
            f"{text} is not sliced in the report (group: --taxonomy; tag: the app's Slices "
            "page; query_form: python -m ovearth_core.analysis)")
    try:
        return slices.slice_attribute(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_ap_arguments(parser, args)
    if args.ap_resamples > args.resamples:
        parser.error(f"--ap-resamples {args.ap_resamples:,} is more than --resamples "
                     f"{args.resamples:,}: the AP intervals use the first ones of those")
    preds = [args.predictions] + ([args.compare] if args.compare else [])
    if args.name is not None and len(args.name) != len(preds):
        parser.error(f"--name given {len(args.name)} times for {len(preds)} submissions")
    voters = list(args.audit or [])
    reads = Reads([args.gt, *preds, *voters]).add(args.taxonomy)
    refused = output_refused("ovearth-report", args.out, reads)
    if refused:
        return refused
    try:
        cache = None if args.no_cache else open_cache(args.cache_dir)
    except ValueError as err:  # a bad OVEARTH_CACHE_MAX_BYTES
        parser.error(str(err))
    started = time.perf_counter()
    try:
        taxonomy = None if args.taxonomy is None else load_taxonomy(args.taxonomy)
        options = Options.from_args(args, task=(args.task or ["vocabulary"])[0])
        data = build_report_data(args.gt, preds, options, args.images, args.task,
                                 worst=args.worst, names=args.name, n_resamples=args.resamples,
                                 seed=args.seed, taxonomy=taxonomy, cache=cache,
                                 bootstrap_unit=None if args.bootstrap_unit == "auto"
                                 else args.bootstrap_unit, slice_by=args.slice_by,
                                 ap_resamples=args.ap_resamples)
        if voters:
            from dataclasses import replace

            from ..audit import audit

            data.audit = audit(args.gt, voters, replace(options, task=data.tasks[0],
                                                        modalities=(args.audit_modality,)))
    except OVEarthInputError as err:
        print(f"ovearth-report: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.rank is not None:
        try:
            data.ranks = rank_reports(
                args.gt, args.rank, options, data.tasks, args.seed,
                "image" if args.bootstrap_unit == "auto" else args.bootstrap_unit, cache)
        except OVEarthInputError as err:
            print(f"ovearth-report: invalid input in --rank {args.rank}\n{err}",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
    missing, total = missing_images(data)
    if total and len(missing) == total:
        print(f"ovearth-report: none of the {total} images the ground truth names is in "
              f"{data.images} (first: {missing[0]}); every picture would be a blank canvas, so "
              "no report was written. --images names the folder that image_path values are "
              "relative to (default: the ground truth's folder).", file=sys.stderr)
        return EXIT_BAD_INPUT
    if missing:
        print(f"ovearth-report: warning: {len(missing)} of the {total} images the ground truth "
              f"names are not in {data.images} (first: {', '.join(missing[:3])}); their "
              "pictures are blank canvases with a notice.", file=sys.stderr)
    rendered = time.perf_counter()
    document = render_html(data).encode("utf-8")
    render_s = time.perf_counter() - rendered
    written = time.perf_counter()
    reads.images_root = data.images
    reads.add_images(s.image_path for sub in data.submissions
                     for samples in sub.samples.values() for s in samples)
    if emit("ovearth-report", document, args.out, reads):
        return EXIT_BAD_INPUT
    t = data.timings
    print(f"ovearth-report: wrote {args.out} ({len(document) / 1e6:.1f} MB) in "
          f"{time.perf_counter() - started:.1f} s (load+evaluate {t['load_evaluate_s']:.1f} s, "
          f"compare {t['compare_s']:.1f} s, render {render_s:.1f} s, "
          f"write {time.perf_counter() - written:.2f} s; {describe(cache)}: "
          f"{data.num_cached} of {data.num_evaluations} evaluations cached)", file=sys.stderr)
    return 0



def missing_images(data: ReportData) -> tuple[list[str], int]:
    """The image paths of the report's queries that are not files in ``data.images``
    (sorted), and how many distinct image paths the queries name."""
    paths = sorted({s.image_path for sub in data.submissions[:1]
                    for samples in sub.samples.values() for s in samples})
    missing = []
    for relative in paths:
        try:
            found = resolve_image_path(data.images, relative).is_file()
        except ImagePathError:
            found = False
        if not found:
            missing.append(relative)
    return missing, len(paths)
