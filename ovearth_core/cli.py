"""Command line: ``ovearth-eval`` / ``python -m ovearth_core`` (the spec's options, exactly).

Every command writes its output with :func:`~ovearth_core.files.write_output` (re-exported
here): atomic for files, streamed to pipes and devices, never over a file the command reads
(its :class:`~ovearth_core.reads.Reads`: the named inputs before any work, everything read,
images included, just before writing).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from .errors import OVEarthInputError
from .files import OutputRefused, check_output, write_output
from .reads import Reads

# Nothing numeric is imported here: ``--help`` and a refused output cost only the interpreter
# start; the evaluator (numpy, pycocotools, shapely) is imported when there is work for it.

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


def add_matching_options(parser: argparse.ArgumentParser) -> None:
    """The spec's box options: IoU and score thresholds, the predicted box format."""
    parser.add_argument("--iou-threshold", type=float, default=0.5,
                        help="one-to-one bbox/oriented-bbox matching threshold (default 0.5)")
    parser.add_argument("--score-threshold", type=float, default=None,
                        help="keep bbox/oriented-bbox predictions with score >= this")
    parser.add_argument("--bbox-format", default="xyxy", choices=("xyxy", "xywh"),
                        help="prediction bbox format (default xyxy)")


def add_evaluation_options(parser: argparse.ArgumentParser) -> None:
    """The spec's evaluation options, shared by every command that evaluates."""
    add_matching_options(parser)
    parser.add_argument("--modalities", required=True,
                        help="comma-separated: segmentation, bbox, oriented_bbox; or auto")


def add_large_masks_option(parser: argparse.ArgumentParser) -> None:
    """``--large-masks``: the one definition for the commands beyond the spec's evaluator
    (analysis, report, suite, leaderboard, audit, hosting); the evaluator itself keeps
    exactly the spec's flags, and its rule."""
    parser.add_argument("--large-masks", action="store_true",
                        help="take predicted masks beyond the spec's 100,000,000 pixels (up "
                             "to 536,870,911: iSAID-size scenes); the reference toolkit "
                             "refuses them")


def add_concave_obb_option(parser: argparse.ArgumentParser) -> None:
    """``--concave-obb``: the one definition, for the same commands as ``--large-masks``."""
    parser.add_argument("--concave-obb", action="store_true",
                        help="take concave oriented boxes (ground truth and predictions), "
                             "scored as their polygons as DOTA_devkit scores them; the spec "
                             "refuses them (a self-crossing order is refused either way)")


def dump_json(result: dict[str, Any]) -> bytes:
    """Serialise results deterministically (same input, same bytes)."""
    return orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def compute() -> dict[str, Any]:
        from .evaluate import evaluate_samples
        from .io import load_samples

        samples = load_samples(args.gt, args.predictions, args.task,
                               score_threshold=args.score_threshold,
                               bbox_format=args.bbox_format, modalities=args.modalities)
        return evaluate_samples(samples, args.iou_threshold)

    return run_and_emit("ovearth-eval", compute, args.output, (args.gt, args.predictions))


Inputs = Reads | Iterable[str | os.PathLike[str]]


def _every(inputs: Inputs) -> list[str | os.PathLike[str]]:
    return inputs.files() if isinstance(inputs, Reads) else list(inputs)


def run_and_emit(prog: str, compute: Callable[[], dict[str, Any]], output: str | None,
                 inputs: Inputs = ()) -> int:
    """Run ``compute`` and write its JSON to ``output`` (stdout when ``None`` or ``-``).

    An output that :func:`write_output` would refuse is refused before computing (against
    what ``inputs`` holds then: a :class:`Reads` learns the rest while ``compute`` runs,
    and the output is checked against all of it before it is written); bad input is a message
    and exit status 2; nothing is written unless all went well.
    """
    if not isinstance(inputs, Reads):
        inputs = list(inputs)
    refused = output_refused(prog, output, inputs)
    if refused:
        return refused
    try:
        result = compute()
    except OVEarthInputError as err:
        print(f"{prog}: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print_warnings(prog, result)
    return emit(prog, dump_json(result), output, inputs)


def print_warnings(prog: str, result: dict[str, Any]) -> None:
    """The result's coverage warnings on stderr, one line each (the exit status is kept)."""
    for w in result.get("warnings", ()):
        print(f"{prog}: warning: {w['message']}", file=sys.stderr)


def output_refused(prog: str, output: str | os.PathLike[str] | None,
                   inputs: Inputs = ()) -> int:
    """0 when ``output`` may be written, else the message printed and exit status 2 (a
    :class:`Reads`: against what it holds so far)."""
    try:
        check_output(output, _every(inputs))
    except (OutputRefused, OSError) as err:
        return _cannot_write(prog, output, err)
    return 0


def emit(prog: str, data: bytes, output: str | os.PathLike[str] | None,
         inputs: Inputs = ()) -> int:
    """:func:`~ovearth_core.files.write_output` never over any of ``inputs`` (every file a
    :class:`Reads` holds); the exit status (2 with a message when it cannot)."""
    try:
        write_output(output, data, inputs=_every(inputs))
    except (OutputRefused, OSError) as err:
        return _cannot_write(prog, output, err)
    return 0


def _cannot_write(prog: str, output: str | os.PathLike[str] | None, err: Exception) -> int:
    name = "standard output" if output is None or os.fspath(output) == "-" else (
        os.fspath(output) or "''")
    if isinstance(err, OutputRefused):
        reason = f"it is {err.found}; expected {err.expected}"
    else:
        reason = (err.strerror if isinstance(err, OSError) else None) or str(err)
    print(f"{prog}: cannot write {name}: {reason}", file=sys.stderr)
    if isinstance(err, BrokenPipeError) and name == "standard output":
        # The reader left (``| head``): stop Python's exit-time flush from failing again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BAD_INPUT


class ProgressPrinter:
    """Progress of a batch on stderr: a ``\\r`` bar rewritten in place when the stream is a
    terminal, else one line per finished item (logs and pipes stay readable)."""

    def __init__(self, prog: str, label: str = "", stream: Any = None, width: int = 30):
        self.prog = prog
        self.label = label
        self.stream = stream
        self.width = width
        self.cached = 0

    def __call__(self, done: int, total: int, name: str, cached: bool = False) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        self.cached += bool(cached)
        head = f"{self.prog}: {self.label + ' ' if self.label else ''}"
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if tty:
            filled = self.width * done // max(total, 1)
            bar = "#" * filled + "." * (self.width - filled)
            end = "\n" if done >= total else ""
            stream.write(f"\r{head}[{bar}] {done}/{total} ({self.cached} cached){end}")
        else:
            stream.write(f"{head}[{done}/{total}] {name}{' (cached)' if cached else ''}\n")
        stream.flush()


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())
