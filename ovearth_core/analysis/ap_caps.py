"""The AP options of the commands (COCO's detection cap, hard negatives), in a module that
imports nothing heavy: the analysis, report and leaderboard commands build their parsers from it, so
their ``--help`` and usage errors load neither numpy nor the evaluator (issue 28)."""

from __future__ import annotations

import argparse

from ..options import COCO_MAX_DETECTIONS, MIN_MAX_DETECTIONS  # options.py imports nothing


def detection_cap(text: str) -> int:
    """argparse type of ``--max-detections``: a whole number of at least
    :data:`MIN_MAX_DETECTIONS`."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < MIN_MAX_DETECTIONS:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of at least {MIN_MAX_DETECTIONS} (COCOeval sorts "
            f"maxDets = [1, 10, N], so a smaller cap would be 10), found {text!r}")
    return value


def add_ap_arguments(parser: argparse.ArgumentParser, hard_negatives_help: str,
                     max_detections_help: str) -> None:
    """``--hard-negatives``, ``--max-detections N`` (default COCO's 100), ``--nms-ap`` and
    ``--aitod``, the one definition of each for every command (check them with
    :func:`check_ap_arguments` after parsing)."""
    parser.add_argument("--hard-negatives", action="store_true", help=hard_negatives_help)
    parser.add_argument("--max-detections", type=detection_cap, default=COCO_MAX_DETECTIONS,
                        metavar="N", help=max_detections_help + " (default %(default)s)")
    parser.add_argument("--nms-ap", action="store_true",
                        help="also OVDEval's NMS-AP (nms_map@[0.5:0.95], nms_map@0.5, "
                             "nms_map@0.75 in the COCO block): per image, the boxes of every "
                             "query that compete for one object are suppressed before COCO's "
                             "mAP (needs --hard-negatives; docs/metrics.md)")
    parser.add_argument("--aitod", action="store_true",
                        help="also AI-TOD's protocol (block 'aitod': mAP and mAR at 1, 100 and "
                             "1500 boxes, very tiny / tiny / small / medium sizes, oLRP; "
                             "docs/metrics.md)")


def check_ap_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 (``parser.error``) on AP flags that do not go together."""
    if getattr(args, "nms_ap", False) and not getattr(args, "hard_negatives", False):
        parser.error("--nms-ap needs --hard-negatives: NMS-AP suppresses the boxes of negative "
                     "queries that compete with a positive's for one object, so those boxes "
                     "must be ranked")
