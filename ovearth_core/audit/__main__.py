"""``python -m ovearth_core.audit --gt GT --predictions P1 P2 ... --task T --out audit.json``:
the ranked label-error suspects of a ground truth, from the consensus of the submissions
(docs/audit.md)."""

from __future__ import annotations

import argparse
import sys

from ..cli import (
    add_concave_obb_option,
    add_large_masks_option,
    add_matching_options,
    run_and_emit,
)
from .shapes import MODALITIES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ovearth_core.audit",
        description="Rank suspected label errors of a ground truth (missing, spurious, "
                    "shifted, wrong class) from the agreement of several submissions.")
    parser.add_argument("--gt", required=True, help="ground-truth JSON path")
    parser.add_argument("--predictions", "--prediction", nargs="+", required=True,
                        metavar="PRED", help="the submissions' prediction JSON paths (>= 2)")
    parser.add_argument("--task", default="vocabulary",
                        choices=("vocabulary", "referring", "reasoning"))
    parser.add_argument("--modality", default="bbox", choices=MODALITIES,
                        help="the geometry audited (default bbox)")
    add_matching_options(parser)
    add_large_masks_option(parser)
    add_concave_obb_option(parser)
    parser.add_argument("--min-score", type=float, default=0.2,
                        help="leave out suspects scored below this (default 0.2)")
    parser.add_argument("--out", "--output", dest="output", default=None,
                        help="output JSON path (default: stdout)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def compute() -> dict:
        from ..options import Options
        from . import audit

        options = Options.from_args(args, modalities=(args.modality,))
        return audit(args.gt, args.predictions, options, min_score=args.min_score)

    return run_and_emit("python -m ovearth_core.audit", compute, args.output,
                        (args.gt, *args.predictions))


if __name__ == "__main__":
    sys.exit(main())
