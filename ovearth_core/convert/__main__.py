"""``python -m ovearth_core.convert``: bring your own data (and take ours to COCO tools).

Subcommands: ``from-coco``, ``from-dota``, ``from-voc``, ``from-rsvg``, ``from-label-maps``
write an OVEarth benchmark folder (ground_truth.json, images/, predictions/<name>.json);
``to-coco`` writes COCO instances and results files of one task and one submission. Bad
input exits with status 2 and lists the problems (file, line or id, field, expected, found);
nothing is written then.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from ..cli import EXIT_BAD_INPUT
from ..errors import OVEarthInputError, Problem
from . import coco, dota, label_maps, rsvg, voc
from .common import (
    SKIP_DEGENERATE,
    Problems,
    check_target,
    images_text,
    read_text_lines,
    shown,
)

PROG = "python -m ovearth_core.convert"


def _negatives(value: str) -> int | str:
    if value == "all":
        return value
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError("expected 'all' or a non-negative integer") from None
    if n < 0:
        raise argparse.ArgumentTypeError("expected 'all' or a non-negative integer")
    return n


def _common(p: argparse.ArgumentParser, images_help: str) -> None:
    p.add_argument("--images", help=images_help + "; without it, or for an image missing, "
                   "the conversion is numbers-only (with a warning)")
    p.add_argument("--out", required=True, help="benchmark folder to write (new or empty)")
    p.add_argument("--force", action="store_true",
                   help="replace --out even when it is a non-empty folder")
    images = p.add_mutually_exclusive_group()
    images.add_argument("--link", action="store_true",
                        help="hard-link the images (the default; copies across file systems)")
    images.add_argument("--copy", action="store_true",
                        help="copy the images instead of hard-linking them")
    _quiet(p)


def _skip_degenerate(p: argparse.ArgumentParser) -> None:
    p.add_argument(SKIP_DEGENERATE, action="store_true",
                   help="leave objects (and result lines) whose box has zero area out, each "
                   "named in a warning and the folder's README (default: refuse them, as "
                   "the spec does)")


def _quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("from-coco", help="COCO instances (+ results) to a benchmark")
    p.add_argument("--instances", help="COCO instances JSON (ground truth)")
    p.add_argument("--results", action="append", default=[], metavar="RES.json",
                   help="COCO results JSON (repeatable); each becomes predictions/<stem>.json")
    p.add_argument("--negatives", type=_negatives, default=None, metavar="N|all",
                   help="negative queries per image: all absent categories or N sampled "
                   "(default: LVIS neg_category_ids when present, else all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the negative sampling")
    p.add_argument("--mask-score-threshold", type=float, default=0.5,
                   help="result masks scoring at least this are unioned per query (0.5)")
    p.add_argument("--mapping", help="rebuild a to-coco export exactly from its mapping.json "
                   "(instances and results are read beside it)")
    _common(p, "folder the images' file_name paths are relative to")

    p = sub.add_parser("from-dota", help="DOTA labelTxt (+ Task1 / Task2 results) to a benchmark")
    p.add_argument("--labels", required=True, help="folder of <image>.txt label files")
    p.add_argument("--results", action="append", default=[], metavar="DIR",
                   help="folder of Task1_<class>.txt (oriented boxes) and / or "
                   "Task2_<class>.txt (boxes) files (repeatable; named after the folder)")
    p.add_argument("--negatives", type=_negatives, default="all", metavar="N|all",
                   help="negative queries per image (default all absent classes)")
    p.add_argument("--seed", type=int, default=0, help="seed of the negative sampling")
    p.add_argument("--classes", help="file of extra class names, one per line")
    p.add_argument("--difficult", choices=("target", "ignore"), default="target",
                   help="difficult objects: targets (flagged; default) or ignore regions")
    p.add_argument("--merge-chips", action="store_true",
                   help="results are on ImgSplit chips (P0001__1__1024___512): map them to "
                   "their scenes and merge per scene and class by polygon NMS at 0.3 "
                   "(DOTA_devkit mergebypoly)")
    p.add_argument("--chip-size", type=int, default=None, metavar="PX",
                   help="ImgSplit's subsize of those chips (default: read from the chip names' "
                   "pattern, else 1024); the chips' extents when their images are absent")
    p.add_argument("--chip-gap", type=int, default=None, metavar="PX",
                   help="ImgSplit's gap of those chips (recorded with the chip size)")
    p.add_argument("--sizes", metavar="FILE", help="sizes of images that are missing: "
                   "'<image> <width> <height>' per line (else from the chip names or the "
                   "labels' extent)")
    _skip_degenerate(p)
    _common(p, "folder of the images (<image>.png, any image suffix)")

    p = sub.add_parser("from-voc", help="Pascal VOC / DIOR / HRSC2016 XML (+ results) to a "
                       "benchmark")
    p.add_argument("--annotations", required=True, help="folder of .xml files, one per image")
    p.add_argument("--results", action="append", default=[], metavar="DIR",
                   help="folder of per-class result files <anything>_<class>.txt (repeatable; "
                   "named after the folder)")
    p.add_argument("--classes", help="classes file: '<name>' or '<id> <name>' per line (fixes "
                   "the vocabulary; names HRSC's class ids)")
    p.add_argument("--negatives", type=_negatives, default="all", metavar="N|all",
                   help="negative queries per image (default all absent classes)")
    p.add_argument("--seed", type=int, default=0, help="seed of the negative sampling")
    p.add_argument("--difficult", choices=("target", "ignore"), default="target",
                   help="difficult objects: targets (flagged; default) or ignore regions")
    _skip_degenerate(p)
    _common(p, "folder of the images")

    p = sub.add_parser("from-rsvg", help="DIOR-RSVG XML (+ box predictions) to referring queries")
    p.add_argument("--annotations", required=True, help="folder of DIOR-RSVG .xml files")
    p.add_argument("--predictions", action="append", default=[], metavar="PRED.json",
                   help="RSVG prediction file (repeatable): [{image, object, bbox}, ...]")
    _skip_degenerate(p)
    _common(p, "folder of the images")

    p = sub.add_parser("from-label-maps", help="class-index PNGs to per-image class queries")
    p.add_argument("--gt", required=True, help="folder of ground-truth label maps")
    p.add_argument("--classes", required=True, help="classes file: '<index> <name>' or "
                   "'<name>' per line")
    p.add_argument("--pred", action="append", default=[], metavar="DIR",
                   help="folder of predicted label maps (repeatable; named after the folder)")
    p.add_argument("--ignore-index", type=int, default=None,
                   help="label value of no class (e.g. 0 for LoveDA, 255 for VOC)")
    _common(p, "folder of the images (same stems as the label maps)")

    p = sub.add_parser("to-coco", help="one task and one submission as COCO files")
    p.add_argument("--gt", required=True, help="ground_truth.json")
    p.add_argument("--prediction", "--predictions", dest="predictions", required=True,
                   help="prediction JSON")
    p.add_argument("--task", default="vocabulary", choices=("vocabulary", "referring",
                                                            "reasoning"))
    p.add_argument("--out", required=True, help="folder to write (new or empty)")
    p.add_argument("--force", action="store_true", help="replace a non-empty --out")
    _quiet(p)
    return parser


def _run(args: argparse.Namespace, command: str) -> dict[str, Any]:
    show = not getattr(args, "quiet", True)
    common = {"force": args.force, "command": command}
    if args.command == "to-coco":
        return coco.to_coco(args.gt, args.predictions, args.task, args.out, force=args.force)
    common.update(link=not args.copy, show_progress=show)
    if args.command == "from-coco":
        if args.mapping:
            return coco.from_coco_export(args.mapping, args.images, args.out, **common)
        if not args.instances:
            raise OVEarthInputError([_option_problem("--instances", "a COCO instances JSON "
                                                     "(or --mapping)")])
        return coco.from_coco(args.instances, args.images, args.out, args.results,
                              args.negatives, args.seed, args.mask_score_threshold, **common)
    if args.command == "from-dota":
        classes: list[str] = []
        if args.classes:
            check_target(args.out, args.force, [args.classes])  # --force keeps it too
            bad = Problems()
            lines = read_text_lines(Path(args.classes), bad, "classes file")
            bad.raise_if_any()
            classes = [line.strip() for line in lines or [] if line.strip()]
        return dota.from_dota(args.labels, args.images, args.out, args.results, args.negatives,
                              args.seed, classes, args.difficult, merge_chips=args.merge_chips,
                              chip_size=args.chip_size, chip_gap=args.chip_gap,
                              sizes=args.sizes, skip_degenerate=args.skip_degenerate,
                              **common)
    if args.command == "from-voc":
        return voc.from_voc(args.annotations, args.images, args.out, args.results, args.classes,
                            args.negatives, args.seed, args.difficult,
                            skip_degenerate=args.skip_degenerate, **common)
    if args.command == "from-rsvg":
        return rsvg.from_rsvg(args.annotations, args.images, args.out, args.predictions,
                              skip_degenerate=args.skip_degenerate, **common)
    return label_maps.from_label_maps(args.gt, args.classes, args.images, args.out, args.pred,
                                      args.ignore_index, **common)


def _option_problem(option: str, expected: str) -> Problem:
    return Problem("(options)", option, expected, "nothing")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    command = " ".join([PROG, *(shlex.quote(shown(a)) for a in argv)])
    try:
        summary = _run(args, command)
    except OVEarthInputError as err:
        print(f"{PROG} {args.command}: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:
        print(f"{PROG} {args.command}: cannot write {args.out}: {err.strerror or err}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in summary.get("warnings", []):
        print(f"{PROG} {args.command}: warning: {warning}", file=sys.stderr)
    print(_summary_line(args, summary))
    for note in summary.get("skipped", []):
        print(f"{PROG} {args.command}: skipped: {note}")
    return 0


def _summary_line(args: argparse.Namespace, summary: dict[str, Any]) -> str:
    if args.command == "to-coco":
        return (f"wrote {args.out}: {len(summary['queries'])} queries as COCO images "
                f"(instances_*.json, results_*.json, mapping.json)")
    ov = summary["open_vocabulary"]
    return (f"wrote {args.out}: {images_text(summary)}, {summary['annotations']} "
            f"annotations, open-vocabulary {ov['positive']} positive / {ov['negative']} "
            f"negative, referring {summary['referring']}, submissions: "
            f"{', '.join(summary['submissions']) or 'none'}")


if __name__ == "__main__":
    sys.exit(main())
