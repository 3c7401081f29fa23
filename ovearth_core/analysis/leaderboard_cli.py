"""``python -m ovearth_core.leaderboard FOLDER``: the command of
:mod:`ovearth_core.analysis.leaderboard`, in a module of its own so that ``--help`` and a
usage error import neither numpy nor the evaluator (issue 28)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..bounds import MAX_RESAMPLES, MAX_SEED, float_arg, int_arg
from ..workers import MAX_WORKERS


def main(argv: list[str] | None = None) -> int:
    """``python -m ovearth_core.leaderboard FOLDER``: rank every submission of a folder.

    FOLDER holds ``ground_truth.json`` and ``predictions/*.json`` (the layout of
    ``python -m ovearth_core.synth``). Prints (or writes) the JSON report.
    """
    from ..cache import add_cache_arguments, describe, open_cache
    from ..cli import (
        ProgressPrinter,
        add_concave_obb_option,
        add_large_masks_option,
        run_and_emit,
    )
    from ..options import Options
    from .ap_caps import add_ap_arguments, check_ap_arguments

    parser = argparse.ArgumentParser(prog="python -m ovearth_core.leaderboard",
                                     description="Rank the submissions of a benchmark folder.")
    parser.add_argument("folder", help="folder with ground_truth.json and predictions/*.json")
    parser.add_argument("--task", action="append",
                        choices=("vocabulary", "referring", "reasoning"),
                        help="task to rank (repeatable; default: all three)")
    parser.add_argument("--modalities", default="segmentation,bbox,oriented_bbox")
    parser.add_argument("--iou-threshold", type=float, default=0.5)
    parser.add_argument("--subsets", type=int_arg(1, MAX_RESAMPLES), default=1000,
                        help="random subsets per size")
    parser.add_argument("--seed", type=int_arg(0, MAX_SEED), default=0)
    parser.add_argument("--output", default=None)
    parser.add_argument("--workers", type=int_arg(1, MAX_WORKERS), default=None,
                        help="evaluation processes (default: one per core)")
    parser.add_argument("--average-precision", action="store_true",
                        help="also rank by AP and COCO's and DOTA's per-category mAP")
    add_ap_arguments(parser, "with --average-precision: boxes on negative queries count as "
                     "false positives", "with --average-precision: COCO's boxes per query")
    add_rank_arguments(parser)
    add_large_masks_option(parser)
    add_concave_obb_option(parser)
    add_cache_arguments(parser)
    args = parser.parse_args(argv)
    check_ap_arguments(parser, args)
    if (args.nms_ap or args.aitod) and not args.average_precision:
        parser.error("--nms-ap and --aitod rank average precision: add --average-precision")
    if args.workers is not None and args.workers < 1:
        parser.error("--workers must be at least 1")
    from ..workers import worker_count
    from . import leaderboard as lb  # numpy and the evaluator, once the options are read

    tasks = tuple(args.task or ("vocabulary", "referring", "reasoning"))
    folder = Path(args.folder)
    inputs = [folder / "ground_truth.json", *(folder / "predictions").glob("*.json")]
    prog = "ovearth-leaderboard"
    try:
        cache = None if args.no_cache else open_cache(args.cache_dir)
    except ValueError as err:  # a bad OVEARTH_CACHE_MAX_BYTES
        parser.error(str(err))
    print(f"{prog}: {describe(cache)}; " + (
        f"{args.workers} worker process(es)" if args.workers else
        f"up to {worker_count()} worker processes (none for under "
        f"{lb.PARALLEL_MIN_BYTES >> 20} MB of predictions)"), file=sys.stderr)

    def progress(task: str) -> lb.Progress:
        printer = ProgressPrinter(prog, task)
        return lambda done, total, o: printer(done, total, o.name, o.cached)

    options = Options.from_args(args, task=tasks[0], modalities=args.modalities)
    return run_and_emit(parser.prog, lambda: lb.folder_leaderboard(
        args.folder, tasks, args.modalities, args.iou_threshold, cache=cache,
        workers=args.workers, progress=progress, n_subsets=args.subsets, seed=args.seed,
        note=lambda text: print(f"{prog}: {text}", file=sys.stderr),
        ranks=None if args.no_ranks else options,
        unit=args.bootstrap_unit, large_masks=args.large_masks, concave_obb=args.concave_obb,
        average_precision=options if args.average_precision else None), args.output, inputs)


def add_rank_arguments(parser: argparse.ArgumentParser, leaderboard: bool = True) -> None:
    """The flags of the ranks with their uncertainty (issue 37; fields of
    :class:`~ovearth_core.options.Options` of the same names); ``leaderboard``: also
    ``--bootstrap-unit`` (the report has its own) and ``--no-ranks``."""
    from ..options import (
        ALPHA,
        ALPHA_BOUNDS,
        MIN_COUNT,
        MIN_COUNT_BOUNDS,
        RANK_RESAMPLE_BOUNDS,
        RANK_RESAMPLES,
    )

    parser.add_argument("--rank-resamples", type=int_arg(*RANK_RESAMPLE_BOUNDS),
                        default=RANK_RESAMPLES,
                        help=f"resamples of the rank intervals (default {RANK_RESAMPLES:,})")
    parser.add_argument("--alpha", type=float_arg(*ALPHA_BOUNDS), default=ALPHA,
                        help=f"level of the tests, 1 - level of the intervals (default {ALPHA})")
    parser.add_argument("--min-count", type=int_arg(*MIN_COUNT_BOUNDS), default=MIN_COUNT,
                        help=f"fewest images (or queries, as resampled) the tests against the "
                             f"leader, the groups, Friedman's test and a category are tested "
                             f"on (default {MIN_COUNT})")
    parser.add_argument("--friedman-blocks", choices=("image", "query"), default="image",
                        help="blocks of Friedman's test and the critical-difference diagram")
    if leaderboard:
        parser.add_argument("--bootstrap-unit", choices=("image", "query"), default="image",
                            help="what the rank resampling draws (default: images, the "
                                 "benchmark's unit)")
        parser.add_argument("--no-ranks", action="store_true",
                            help="leave out the rank intervals, tests and Friedman's test")

