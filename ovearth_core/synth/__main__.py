"""Command line: ``python -m ovearth_core.synth --scale {demo,full} --out DIR [--seed N]``."""

from __future__ import annotations

import argparse
import sys

from ..bounds import MAX_SEED, int_arg
from ..files import OutputRefused
from ..workers import MAX_WORKERS
from .plan import SCALES
from .writer import generate


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, generate the benchmark, print the stage timings."""
    parser = argparse.ArgumentParser(
        prog="python -m ovearth_core.synth",
        description="Generate a deterministic synthetic OVEarth-format benchmark: images, "
                    "ground_truth.json and one prediction file per model persona.")
    parser.add_argument("--scale", choices=sorted(SCALES), default="demo",
                        help="full: the paper's exact counts; demo: the app's 30-image sample; "
                             "tiny: 4 small images for tests")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--seed", type=int_arg(0, MAX_SEED), default=0,
                        help="random seed (default 0)")
    parser.add_argument("--no-images", action="store_true",
                        help="write the JSON files only (identical to a run with images)")
    parser.add_argument("--workers", type=int_arg(1, MAX_WORKERS), default=2,
                        help="processes (default 2)")
    args = parser.parse_args(argv)
    try:
        times = generate(args.scale, args.out, seed=args.seed, images=not args.no_images,
                         workers=args.workers)
    except OutputRefused as err:
        print(f"{parser.prog}: cannot write {err.path}: it is {err.found}; expected "
              f"{err.expected}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{parser.prog}: cannot write {err.filename or args.out}: {err.strerror or err}",
              file=sys.stderr)
        return 2
    summary = ", ".join(f"{k} {v:.1f}s" for k, v in times.items())
    print(f"wrote {args.scale} benchmark to {args.out} ({summary})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
