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
    """``--hard-negatives`` and ``--max-detections N`` (default COCO's 100), the one
    definition of both for every command."""
    parser.add_argument("--hard-negatives", action="store_true", help=hard_negatives_help)
    parser.add_argument("--max-detections", type=detection_cap, default=COCO_MAX_DETECTIONS,
                        metavar="N", help=max_detections_help + " (default %(default)s)")
