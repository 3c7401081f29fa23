"""``python -m ovearth_core.hosting {codabench,evalai,score}``: write a platform's bundle, or
run the scoring program as a Codabench worker does."""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from ..analysis.ap_caps import add_ap_arguments, check_ap_arguments
from ..bounds import float_arg, int_arg
from ..cli import (
    EXIT_BAD_INPUT,
    add_concave_obb_option,
    add_large_masks_option,
    add_matching_options,
    emit,
    output_refused,
)
from ..errors import OVEarthInputError, Problem
from ..files import read_bounded, write_confined
from ..io import GroundTruth, parse_ground_truth, parse_json, read_input
from ..options import TASK_KEYS, Options
from .bundle import (
    Phase,
    check_phases,
    codabench_bundle,
    evalai_bundle,
    parse_phase,
    skeleton,
)
from .config import (
    BOX_FIELDS,
    DEFAULT_METRICS,
    MODALITY_BLOCK,
    HostingConfig,
    Limits,
    default_columns,
    truth_modalities,
)
from .scorer import codabench_main, score

PROG_BUNDLE = "ovearth-hosting"
DEFAULT_IMAGE = "ovearth/ovearth-scoring:0.1.0"


def _phase(text: str) -> Phase:
    try:
        return parse_phase(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gt", required=True, type=Path, help="ground-truth JSON (hidden "
                        "from participants: it becomes the reference data)")
    parser.add_argument("--out", required=True, help="bundle zip to write (atomically)")
    parser.add_argument("--title", default="OVEarth-Bench", help="competition title")
    parser.add_argument("--description", default="Open-vocabulary remote-sensing "
                        "segmentation and detection: category, referring and reasoning "
                        "queries.", help="one-paragraph description")
    parser.add_argument("--task", action="append", choices=tuple(TASK_KEYS),
                        help="task to score; repeat for several (default: every task with "
                             "queries in the ground truth)")
    parser.add_argument("--modalities", default=None,
                        help="comma-separated, declared (auto is refused); default: those the "
                             "ground truth holds for the scored tasks' positive queries "
                             "(masks, boxes, oriented boxes)")
    add_matching_options(parser)
    add_large_masks_option(parser)
    add_concave_obb_option(parser)
    parser.add_argument("--columns", default=",".join(DEFAULT_METRICS),
                        help="comma-separated leaderboard metrics, each for every task it "
                             "applies to; the first ranks (default: %(default)s, and with "
                             "--nms-ap / --aitod their mAP columns, e.g. bbox_nms_map)")
    add_ap_arguments(parser, "average precision columns: boxes on negative queries count as "
                     "false positives", "average precision columns: COCO's boxes per query")
    parser.add_argument("--phase", action="append", type=_phase, metavar="NAME,START[,END]",
                        help="a phase (repeat, in order; default: one phase 'Test' from "
                             "today, open-ended)")
    parser.add_argument("--max-mb", type=float_arg(0, 1 << 20, low_open=True),
                        default=Limits.max_mb,
                        help="largest prediction JSON accepted, MB (default %(default)g)")
    parser.add_argument("--time-limit", type=float_arg(0, 7 * 86400, low_open=True),
                        default=Limits.time_limit_s,
                        help="seconds the scorer may take (default %(default)g; the phase's "
                             "platform limit is 60 s more)")
    parser.add_argument("--max-boxes", type=int_arg(1, 10**8), default=Limits.max_boxes,
                        help="most boxes one query may have in bbox or oriented_bbox "
                             "(default %(default)d)")
    parser.add_argument("--sample", type=Path, default=None,
                        help="starting-kit submission (default: an empty answer to every "
                             "query, made from the ground truth's query texts)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ovearth_core.hosting",
                                     description="Host the leaderboard on Codabench or EvalAI.")
    sub = parser.add_subparsers(dest="command", required=True)
    codabench = sub.add_parser("codabench", help="write a Codabench competition bundle")
    _common(codabench)
    codabench.add_argument("--docker-image", default=DEFAULT_IMAGE,
                           help="image the worker runs the scorer in (docker/Dockerfile; "
                                "default %(default)s)")
    codabench.add_argument("--gallery", type=int, default=0,
                           help="worst queries drawn in each detailed results page (default "
                                "0: the page then shows no ground-truth geometry)")
    codabench.add_argument("--images", type=Path, default=None,
                           help="folder image_path values are relative to (default: the "
                                "ground truth's); its images go into the reference data "
                                "when --gallery is above 0")
    evalai = sub.add_parser("evalai", help="write an EvalAI challenge configuration")
    _common(evalai)
    run = sub.add_parser("score", help="the Codabench scoring program: INPUT/ref, INPUT/res "
                                       "-> OUTPUT/scores.json")
    run.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def _config(args: argparse.Namespace, gt: GroundTruth, phases: list[Phase]
            ) -> HostingConfig:
    tasks = args.task or [t for t, key in TASK_KEYS.items() if gt.tasks.get(key)] or ["vocabulary"]
    held = truth_modalities(gt, tasks)
    modalities = args.modalities or ",".join(held or MODALITY_BLOCK)
    options = Options(tasks[0], modalities, args.iou_threshold, args.score_threshold,
                      args.bbox_format, large_masks=args.large_masks,
                      concave_obb=args.concave_obb, hard_negatives=args.hard_negatives,
                      max_detections=args.max_detections, nms_ap=args.nms_ap,
                      aitod=args.aitod)
    limits = Limits(args.max_mb, args.time_limit, args.max_boxes)
    if limits.max_mb <= 0 or limits.time_limit_s <= 0 or limits.max_boxes < 1:
        raise ValueError("--max-mb and --time-limit must be above 0, --max-boxes at least 1")
    if getattr(args, "gallery", 0) < 0:
        raise ValueError("--gallery must be at least 0")
    mods = [m for m in options.modalities if m in MODALITY_BLOCK]
    metrics = tuple(m.strip() for m in args.columns.split(",") if m.strip())
    strict = metrics != DEFAULT_METRICS
    if not strict:  # the protocols asked for get their columns
        metrics += tuple(f"{m}_{short}" for short, on in (("nms_map", args.nms_ap),
                                                          ("aitod_map", args.aitod))
                         if on for m in BOX_FIELDS)
    columns = default_columns(tasks, mods, metrics, strict=strict)
    config = HostingConfig(tuple(tasks), options, columns, limits,
                           getattr(args, "gallery", 0),
                           {p.codename: f"{p.codename}_split" for p in phases})
    lacking = [m for m in config.options.modalities if m not in held]
    if lacking:
        empty = [c.key for c in config.columns if c.path[1] in
                 {MODALITY_BLOCK[m] for m in lacking}]
        print(f"{PROG_BUNDLE}: warning: --modalities names {', '.join(lacking)}, which the "
              f"ground truth {args.gt} holds for no positive query of {', '.join(tasks)}: "
              f"column{'s' if len(empty) != 1 else ''} {', '.join(empty) or '(none)'} will be "
              "empty (null) for every submission", file=sys.stderr)
    return config


def _images(gt_doc: dict, folder: Path) -> dict[str, bytes]:
    from ..viz.images import ImagePathError, resolve_image_path

    paths = sorted({a["image_path"] for a in gt_doc.get("annotations", ())
                    if isinstance(a, dict) and isinstance(a.get("image_path"), str)})
    try:
        return {p: read_bounded(resolve_image_path(folder, p)) for p in paths}
    except (ImagePathError, OSError, ValueError) as err:
        raise OVEarthInputError([Problem(str(folder), "image_path", "the ground truth's "
                                         "images (--gallery draws them)", str(err))]) from None


def write_bundle(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    phases = args.phase or [Phase("Test", datetime.now(UTC).replace(
        hour=0, minute=0, second=0, microsecond=0, tzinfo=None))]
    inputs = [args.gt] + ([args.sample] if args.sample else [])
    refused = output_refused(PROG_BUNDLE, args.out, inputs)
    if refused:
        return refused
    check_ap_arguments(parser, args)
    try:
        check_phases(phases)
        gt_bytes = read_input(args.gt, "ground-truth")
        gt_doc = parse_json(gt_bytes, str(args.gt))
        gt = parse_ground_truth(gt_doc, str(args.gt))
        config = _config(args, gt, phases)
        sample = (read_input(args.sample, "prediction") if args.sample
                  else skeleton(gt_doc, config))
        images = (_images(gt_doc, args.images or args.gt.parent)
                  if getattr(args, "gallery", 0) > 0 else None)
    except OVEarthInputError as err:
        print(f"{PROG_BUNDLE}: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as err:
        parser.error(str(err))
    with tempfile.TemporaryDirectory(prefix="ovearth-hosting-") as tmp:
        sample_path = args.sample or Path(tmp, "predictions.json")
        if not args.sample:
            write_confined(tmp, sample_path.name, sample)
        try:  # the starting kit must pass its own scorer
            score(config, args.gt, sample_path)
        except OVEarthInputError as err:
            print(f"{PROG_BUNDLE}: the starting kit's submission is rejected by this "
                  f"bundle's scorer, so no bundle was written\n{err}", file=sys.stderr)
            return EXIT_BAD_INPUT
    common = {"title": args.title, "description": args.description, "phases": phases}
    if args.command == "codabench":
        data = codabench_bundle(config, gt_bytes, sample, docker_image=args.docker_image,
                                images=images, **common)
    else:
        data = evalai_bundle(config, gt_bytes, sample, **common)
    if emit(PROG_BUNDLE, data, args.out, inputs):
        return EXIT_BAD_INPUT
    print(f"{PROG_BUNDLE}: wrote {args.out} ({len(data) / 1e6:.1f} MB): "
          f"{len(config.columns)} leaderboard columns, tasks {', '.join(config.tasks)}",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["score"]:
        return codabench_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    return write_bundle(args, parser)

