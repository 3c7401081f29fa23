"""Command line: ``ovearth-eval`` / ``python -m ovearth_core`` (the spec's options, exactly)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from .errors import OVEarthInputError
from .evaluate import evaluate_samples
from .io import load_samples

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ovearth-eval",
        description="Evaluate an OVEarth-Bench submission for one task.")
    add_input_options(parser)
    parser.add_argument("--task", default="vocabulary",
                        choices=("vocabulary", "referring", "reasoning"))
    parser.add_argument("--output", default=None, help="output JSON path (default: stdout)")
    add_evaluation_options(parser)
    return parser


def add_input_options(parser: argparse.ArgumentParser,
                      prediction_help: str = "prediction JSON path") -> None:
    """The spec's ``--gt`` and ``--prediction`` (alias ``--predictions``) options."""
    parser.add_argument("--gt", required=True, help="ground-truth JSON path")
    parser.add_argument("--prediction", "--predictions", dest="predictions", required=True,
                        help=prediction_help)


def add_evaluation_options(parser: argparse.ArgumentParser) -> None:
    """The spec's evaluation options, shared by every command that evaluates."""
    parser.add_argument("--iou-threshold", type=float, default=0.5,
                        help="one-to-one bbox/oriented-bbox matching threshold (default 0.5)")
    parser.add_argument("--score-threshold", type=float, default=None,
                        help="keep bbox/oriented-bbox predictions with score >= this")
    parser.add_argument("--bbox-format", default="xyxy", choices=("xyxy", "xywh"),
                        help="prediction bbox format (default xyxy)")
    parser.add_argument("--modalities", required=True,
                        help="comma-separated: segmentation, bbox, oriented_bbox; or auto")


def dump_json(result: dict[str, Any]) -> bytes:
    """Serialise results deterministically (same input, same bytes)."""
    return orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n"


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and a rename."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=target.parent if str(target.parent) else ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates 0600 files; give the result the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def compute() -> dict[str, Any]:
        samples = load_samples(args.gt, args.predictions, args.task,
                               score_threshold=args.score_threshold,
                               bbox_format=args.bbox_format, modalities=args.modalities)
        return evaluate_samples(samples, args.iou_threshold)

    return run_and_emit("ovearth-eval", compute, args.output)


def run_and_emit(prog: str, compute: Callable[[], dict[str, Any]], output: str | None) -> int:
    """Run ``compute``; bad input is a message and exit status 2, else the JSON is written."""
    try:
        result = compute()
    except OVEarthInputError as err:
        print(f"{prog}: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print_warnings(prog, result)
    return emit(result, output)


def print_warnings(prog: str, result: dict[str, Any]) -> None:
    """The result's coverage warnings on stderr, one line each (the exit status is kept)."""
    for w in result.get("warnings", ()):
        print(f"{prog}: warning: {w['message']}", file=sys.stderr)


def emit(result: dict[str, Any], output: str | None) -> int:
    """Write results to ``output`` atomically (or stdout); the exit status."""
    data = dump_json(result)
    if output is None:
        sys.stdout.buffer.write(data)
        return 0
    try:
        write_atomic(output, data)
    except OSError as err:
        print(f"cannot write {output}: {err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())
