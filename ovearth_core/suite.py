"""Evaluate several tasks of one submission, reading each file once.

The spec's CLI evaluates one task per run; a script or notebook that wants all
three would otherwise read and validate the same two files three times.
:func:`evaluate_files` is the Python API; ``python -m ovearth_core.suite`` (:func:`main`)
the command, which writes one spec output file per task.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import files, forked
from .errors import OVEarthInputError
from .evaluate import evaluate_samples
from .gcpause import gc_paused
from .io import PathLike, load_samples, parse_ground_truth, read_json
from .types import TASK_KEYS

PROG = "python -m ovearth_core.suite"


def evaluate_files(gt_path: PathLike, pred_path: PathLike,
                   tasks: Sequence[str] = tuple(TASK_KEYS), *, modalities: object = "auto",
                   iou_threshold: float = 0.5, score_threshold: float | None = None,
                   bbox_format: str = "xyxy", large_masks: bool = False,
                   concave_obb: bool = False) -> dict[str, dict[str, Any]]:
    """Evaluate ``tasks`` (CLI names: vocabulary, referring, reasoning; or the JSON keys
    open_vocabulary, referring, reasoning) of one submission.

    Same results as one :func:`~ovearth_core.io.load_samples` +
    :func:`~ovearth_core.evaluate.evaluate_samples` per task with the same
    options; the files are read, and the ground truth validated, once.

    Returns:
        ``{task key: result}`` in the order of ``tasks``, keyed as the JSON names the task
        (``open_vocabulary``, ``referring``, ``reasoning``: each result's own ``task``).

    Raises:
        OVEarthInputError: as the per-task functions do (the first task's, in order).
    """
    results = evaluate_each(gt_path, pred_path, tasks, modalities=modalities,
                            iou_threshold=iou_threshold, score_threshold=score_threshold,
                            bbox_format=bbox_format, large_masks=large_masks,
                            concave_obb=concave_obb)
    for value in results.values():
        if isinstance(value, OVEarthInputError):
            raise value
    return {TASK_KEYS.get(task, task): value  # type: ignore[misc]
            for task, value in results.items()}


def evaluate_each(gt_path: PathLike, pred_path: PathLike, tasks: Sequence[str], *,
                  modalities: object, iou_threshold: float, score_threshold: float | None,
                  bbox_format: str, large_masks: bool = False, concave_obb: bool = False
                  ) -> dict[str, dict[str, Any] | OVEarthInputError]:
    """:func:`evaluate_files`, with each task's problems returned in its place instead of
    raised (a file that cannot be read, or bad ground truth, still raises: it stops every
    task alike)."""
    with gc_paused():
        files = {"gt": parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path)),
                 "doc": read_json(pred_path, "prediction")}

        def run(some: Sequence[str]) -> dict[str, dict[str, Any] | OVEarthInputError]:
            out: dict[str, dict[str, Any] | OVEarthInputError] = {}
            for task in some:
                try:
                    out[task] = evaluate_samples(
                        load_samples(gt_path, pred_path, task, score_threshold, bbox_format,
                                     modalities, ground_truth=files["gt"],
                                     predictions_doc=files["doc"], large_masks=large_masks,
                                     concave_obb=concave_obb),
                        iou_threshold)
                except OVEarthInputError as err:
                    out[task] = err
            return out

        # Inside forked.enabled() (the command line), a child evaluates the smaller tasks
        # while this process evaluates the largest (same results: forked's contract).
        mine, theirs = _shares(list(dict.fromkeys(tasks)), files["doc"])
        with forked.alongside(lambda: run(theirs), worth_it=bool(theirs)) as pending:
            results = run(mine)
            results.update(pending.result() if theirs else {})
        # Free the documents while collection is paused: the first collection after
        # the pause walks every object still alive (a million for a prediction file).
        files.clear()
        return {task: results[task] for task in tasks}


def _shares(tasks: list[str], doc: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The task with the most prediction rows (here), and the others (for a child): on the
    full benchmark, vocabulary's 3,221 rows against referring's and reasoning's 1,774."""
    if len(tasks) < 2:
        return tasks, []
    rows = doc.get("tasks")
    if not isinstance(rows, dict):
        rows = {}

    def size(task: str) -> int:
        value = rows.get(TASK_KEYS.get(task, task))
        return len(value) if isinstance(value, list) else 0

    largest = max(tasks, key=size)
    return [largest], [t for t in tasks if t != largest]


def build_parser() -> argparse.ArgumentParser:
    from .cli import (
        add_concave_obb_option,
        add_evaluation_options,
        add_input_options,
        add_large_masks_option,
    )

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Evaluate several tasks of one submission in one run, reading and "
                    "validating each file once. Writes OUTPUT_DIR/<task>.json per task: "
                    "the bytes `python -m ovearth_core --task <task> --output ...` writes "
                    "with the same options.")
    add_input_options(parser)
    parser.add_argument("--tasks", default=",".join(TASK_KEYS),
                        help="comma-separated tasks (default: %(default)s)")
    parser.add_argument("--output-dir", required=True,
                        help="folder for the <task>.json outputs (created if missing)")
    add_evaluation_options(parser)
    add_large_masks_option(parser)
    add_concave_obb_option(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m ovearth_core.suite``: all or nothing. Any task's problems are printed
    (every failing task, each under its name) and no output is written; exit status 2.
    The outputs are written together (:func:`ovearth_core.files.write_files`): when one
    cannot be written (a full disk), every file keeps its previous content. They are
    regular files in OUTPUT_DIR; a link or special file in the place of one is refused."""
    from .cli import EXIT_BAD_INPUT, dump_json, print_warnings

    parser = build_parser()
    args = parser.parse_args(argv)
    tasks = list(dict.fromkeys(t.strip() for t in args.tasks.split(",") if t.strip()))
    unknown = [t for t in tasks if t not in TASK_KEYS]
    if not tasks or unknown:
        parser.error(f"--tasks: expected a comma-separated subset of {', '.join(TASK_KEYS)}; "
                     f"found {args.tasks!r}")
    inputs = (args.gt, args.predictions)
    folder = Path(args.output_dir)
    if os.path.exists(folder) and not os.path.isdir(folder):
        print(f"{PROG}: cannot write {folder}: it is not a folder; expected a folder for the "
              "<task>.json outputs", file=sys.stderr)
        return EXIT_BAD_INPUT
    outputs = {task: folder / f"{task}.json" for task in tasks}
    for path in outputs.values():
        try:
            if folder.is_dir():
                files.check_confined(folder, path.name, inputs=inputs)
        except files.OutputRefused as err:
            print(f"{PROG}: cannot write {path}: it is {err.found}; expected {err.expected}",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        with forked.enabled():  # a second core for the tasks, when there is one
            results = evaluate_each(args.gt, args.predictions, tasks,
                                    modalities=args.modalities,
                                    iou_threshold=args.iou_threshold,
                                    score_threshold=args.score_threshold,
                                    bbox_format=args.bbox_format,
                                    large_masks=args.large_masks,
                                    concave_obb=args.concave_obb)
    except OVEarthInputError as err:
        print(f"{PROG}: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    done = {t: r for t, r in results.items() if not isinstance(r, OVEarthInputError)}
    if len(done) < len(results):
        # Tasks that failed alike (a bad option fails every task) are reported together.
        by_message: dict[str, list[str]] = {}
        for task, value in results.items():
            if isinstance(value, OVEarthInputError):
                by_message.setdefault(str(value), []).append(task)
        for message, names in by_message.items():
            print(f"{PROG}: invalid input ({', '.join(names)}; nothing written)\n{message}",
                  file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        print(f"{PROG}: cannot write {folder}: {err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for result in done.values():
        print_warnings(PROG, result)
    try:
        files.write_files(folder, {outputs[t].name: dump_json(r) for t, r in done.items()},
                          inputs=inputs)
    except (files.OutputRefused, OSError) as err:
        reason = (f"it is {err.found}; expected {err.expected}"
                  if isinstance(err, files.OutputRefused) else err.strerror or str(err))
        print(f"{PROG}: cannot write {getattr(err, 'path', None) or folder}: {reason}; "
              "nothing written (every output keeps its previous content)", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
