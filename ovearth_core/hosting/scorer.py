"""The scoring program of a hosted leaderboard: one submission in, the leaderboard's numbers
out, or one clear message and no numbers at all (issue 40).

:func:`score` is the whole job, whoever hosts: the submission's JSON file is checked against
the :class:`~.config.Limits` (its size before it is read; then the tasks it answers and the
boxes of each query), every task is evaluated through :mod:`ovearth_core.pipeline` (the
numbers ``python -m ovearth_core`` prints) and, when asked, the HTML report of
:mod:`ovearth_core.report` is rendered from the same evaluations. Everything runs under the
time limit; a submission that breaks a rule raises
:class:`~ovearth_core.errors.OVEarthInputError` naming the file, query_id, field, what was
expected and what was found, and nothing is written.

Two front ends: :func:`codabench_main` (the ``metadata`` command of a Codabench compute
worker: ``input/ref``, ``input/res``, ``output/scores.json`` and
``output/detailed_results.html``, both written together or neither) and :func:`evaluate`
(EvalAI's ``evaluate(test_annotation_file, user_submission_file, phase_codename, **kwargs)``).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from .. import pipeline
from ..cache import ResultCache
from ..errors import OVEarthInputError, Problem, describe, format_problems
from ..files import (
    InputRefused,
    is_component,
    read_bounded,
    size_text,
    write_confined,
    write_files,
)
from ..io import parse_json
from ..options import TASK_KEYS
from .archive import find_json, read_json_member
from .config import BOX_FIELDS, HostingConfig

PROG = "ovearth-score"
EXIT_REJECTED = 2  # the participant's submission breaks a rule (the message says which)
EXIT_MISCONFIGURED = 1  # the bundle itself is broken (the organiser's to fix)
CONFIG_NAME = "scoring.json"
GROUND_TRUTH_NAME = "ground_truth.json"
SCORES_NAME = "scores.json"
DETAILS_NAME = "detailed_results.html"


class Misconfigured(Exception):
    """The bundle, not the submission, is at fault (its reference data or configuration)."""


class TimeLimitExceeded(BaseException):
    """Scoring ran past the time limit (a ``BaseException``: no ``except Exception`` in the
    evaluator may swallow it)."""


@dataclass
class Scored:
    """One submission's leaderboard numbers: ``scores`` (column key -> value; a column
    whose metric is undefined, such as an MCC with an empty margin, is left out and named
    in ``undefined``), the evaluator's ``results`` per task key, its ``warnings`` and the
    detailed results page (``None`` unless asked for)."""

    scores: dict[str, float]
    results: dict[str, dict[str, Any]]
    undefined: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    html: bytes | None = None


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise :class:`TimeLimitExceeded` in the block once ``seconds`` have passed (a
    ``SIGALRM`` timer; the previous handler and any pending timer are restored after). Off
    the main thread no signal can be delivered: the block runs without a limit and says so
    on stderr (the platform's own limit still applies)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
            signal, "setitimer"):
        print(f"{PROG}: warning: the {seconds:g} s time limit is not enforced outside the "
              "main thread", file=sys.stderr)
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise TimeLimitExceeded(seconds)

    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expired)
    pending, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if pending > 0:
            signal.setitimer(signal.ITIMER_REAL,
                             max(pending - (time.monotonic() - started), 1e-3))


def find_submission(res: Path) -> Path:
    """The one ``.json`` file of the unpacked submission ``res`` (anywhere inside it; hidden
    files and ``__MACOSX`` skipped; folder links never followed; at most
    :data:`~.archive.MAX_ENTRIES` entries and :data:`~.archive.MAX_DEPTH` nested folders:
    :func:`.archive.find_json`)."""
    return find_json(res)


def read_submission(path: Path, config: HostingConfig) -> tuple[dict[str, Any], str]:
    """The parsed prediction document and the SHA-256 of its bytes, refused by size before
    a byte is read (``OVEarthInputError``)."""
    cap = config.limits.max_bytes
    expected = f"a file of at most {config.limits.max_mb:g} MB (this competition's limit)"
    try:
        size = os.stat(path, follow_symlinks=False).st_size
        if size > cap:
            raise OVEarthInputError([Problem(str(path), "(file size)", expected,
                                             size_text(size))])
        data = read_bounded(path, cap, follow_links=False)
    except InputRefused as err:
        raise OVEarthInputError([Problem(str(path), "(file)", expected if "at most" in
                                         err.expected else err.expected, err.found)]) from None
    except OSError as err:
        raise OVEarthInputError([Problem(str(path), "(file)", "a readable file",
                                         err.strerror or str(err))]) from None
    return parse_json(data, str(path)), hashlib.sha256(data).hexdigest()


def check_submission(doc: dict[str, Any], name: str, config: HostingConfig) -> None:
    """The competition's own rules on a parsed document, before the evaluator's: it answers
    at least one of the scored tasks, and no query has more than ``max_boxes`` boxes in a
    scored box field (duplicate rows summed). Raises ``OVEarthInputError`` with every
    problem found."""
    keys = [TASK_KEYS[t] for t in config.tasks]
    tasks = doc.get("tasks")
    answered = ({k for k, v in tasks.items() if isinstance(v, list) and v}
                if isinstance(tasks, dict) else set())
    if not answered & set(keys):
        wanted = " or ".join(f"tasks.{k}" for k in keys)
        if not isinstance(tasks, dict):
            found = "no tasks object" if tasks is None else describe(tasks)
        elif answered:
            found = "rows only under " + ", ".join(f"tasks.{k}" for k in sorted(answered))
        else:
            found = "no rows under any task"
        raise OVEarthInputError([Problem(name, "tasks", f"prediction rows under {wanted} "
                                         "(the tasks this competition scores)", found)])
    problems = []
    cap = config.limits.max_boxes
    fields = [f for f in BOX_FIELDS if f in config.options.modalities]
    for key in keys:
        rows = tasks.get(key) if isinstance(tasks, dict) else None
        if not isinstance(rows, list):
            continue
        counts: Counter[tuple[str, str]] = Counter()
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get("query_id"), str):
                for f in fields:
                    if isinstance(row.get(f), list):
                        counts[row["query_id"], f] += len(row[f])
        problems += [Problem(name, f, f"at most {cap:,} boxes per query (this competition's "
                             "limit)", f"{n:,} boxes", query_id)
                     for (query_id, f), n in counts.items() if n > cap]
    if problems:
        raise OVEarthInputError(problems)


def column_scores(config: HostingConfig, results: dict[str, dict[str, Any]],
                  average_precision: dict[str, dict[str, Any]] | None = None,
                  ) -> tuple[dict[str, float], list[str]]:
    """``{column key: value}`` of every defined column, and the keys of the undefined ones
    (``None`` in the evaluator: left out, the leaderboard shows an empty cell). An average
    precision column reads ``average_precision[task key]`` (:func:`task_ap`)."""
    scores, undefined = {}, []
    for column in config.columns:
        task, block, metric = column.path
        if column.average_precision:
            from ..analysis.ap import ap_numbers  # only a bundle with an AP column needs it

            entry = (average_precision or {}).get(task, {}).get(block)
            value = ap_numbers(entry, (metric,))[metric][0]
        else:
            value = (results[task]["summary"].get(block) or {}).get(metric)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
                value):
            scores[column.key] = float(value)
        else:
            undefined.append(column.key)
    return scores, undefined


def score(config: HostingConfig, gt_path: Path, pred_path: Path, *,
          images: Path | None = None, report: bool = False) -> Scored:
    """Check, evaluate and (``report``) render one submission, all under the time limit.

    Raises ``OVEarthInputError`` for a submission that breaks a rule and for an input the
    evaluator refuses (the time limit: a problem of field ``(scoring time)``)."""
    seconds = config.limits.time_limit_s
    try:
        with deadline(seconds), tempfile.TemporaryDirectory(
                prefix="ovearth-score-") as tmp:
            return _score(config, gt_path, pred_path, images, report, ResultCache(tmp))
    except TimeLimitExceeded:
        raise OVEarthInputError([Problem(
            str(pred_path), "(scoring time)",
            f"scoring within {seconds:g} s (this competition's time limit)",
            f"still running after {seconds:g} s")]) from None


def _score(config: HostingConfig, gt_path: Path, pred_path: Path, images: Path | None,
           report: bool, store: ResultCache) -> Scored:
    doc, sha = read_submission(pred_path, config)
    check_submission(doc, str(pred_path), config)
    try:
        gt, gt_sha = pipeline.read_ground_truth(gt_path)
    except OVEarthInputError as err:
        raise Misconfigured(f"the reference data is not a valid ground truth\n{err}") from None
    results: dict[str, dict[str, Any]] = {}
    ap: dict[str, dict[str, Any]] = {}
    for task in config.tasks:
        loaded = pipeline.load(gt_path, pred_path, config.task_options(task), ground_truth=gt,
                               gt_sha256=gt_sha, predictions_doc=doc, pred_sha256=sha)
        run, _ = pipeline.evaluate_cached(loaded, store)
        results[TASK_KEYS[task]] = run.results
        if any(c.average_precision and c.task == task for c in config.columns):
            ap[TASK_KEYS[task]] = task_ap(loaded.samples, config.task_options(task))
    del doc
    scores, undefined = column_scores(config, results, ap)
    warnings = [w["message"] for r in results.values() for w in r.get("warnings", ())]
    html = None
    if report:
        from ..report import build_report_data, render_html

        data = build_report_data(gt_path, [pred_path], config.task_options(config.tasks[0]),
                                 images, list(config.tasks), worst=config.gallery,
                                 names=["submission"], cache=store)
        html = render_html(data).encode("utf-8")
    return Scored(scores, results, undefined, warnings, html)


def task_ap(samples: Any, options: Any) -> dict[str, Any]:
    """The average precision report of one task's samples (every box: the score threshold
    is a view) under the options' AP fields (``hard_negatives``, ``max_detections``,
    ``nms_ap``, ``aitod``), as the analysis command computes it."""
    every = samples.every_box
    from ..analysis.ap import average_precision_report  # only for an AP column

    return average_precision_report(every, options.iou_threshold, every.modalities,
                                    options.hard_negatives, options.max_detections,
                                    options.nms_ap, options.aitod)


def load_config(path: Path) -> HostingConfig:
    """The bundle's ``scoring.json`` (``ValueError`` naming the file when it is not one)."""
    try:
        return HostingConfig.from_json(orjson.loads(read_bounded(path)))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: not a scoring configuration ({type(err).__name__}: "
                         f"{err})") from None


def _rejected(err: OVEarthInputError) -> str:
    return (f"{PROG}: submission rejected; no scores written\n"
            f"{format_problems(err.problems, err.total)}")


def _report(scored: Scored) -> None:
    for message in scored.warnings:
        print(f"{PROG}: warning: {message}", file=sys.stderr)
    for key in scored.undefined:
        print(f"{PROG}: warning: {key} is undefined for this submission (no value; the "
              "leaderboard leaves its cell empty)", file=sys.stderr)


def codabench_main(argv: list[str] | None = None) -> int:
    """The Codabench scoring program: ``INPUT`` holds ``ref/`` (the reference data:
    ``ground_truth.json`` and any images) and ``res/`` (the participant's unpacked zip);
    ``OUTPUT`` receives ``scores.json`` and ``detailed_results.html``, together or not at
    all. Exit status 0, 2 (the submission is rejected: the message says why) or 1 (the
    bundle is broken)."""
    parser = argparse.ArgumentParser(prog=PROG, description=codabench_main.__doc__)
    parser.add_argument("input", type=Path, help="the worker's input folder ($input)")
    parser.add_argument("output", type=Path, help="the worker's output folder ($output)")
    parser.add_argument("--config", type=Path, required=True,
                        help=f"the scoring program's {CONFIG_NAME}")
    args = parser.parse_args(argv)
    ref, res = args.input / "ref", args.input / "res"
    gt_path = ref / GROUND_TRUTH_NAME
    try:
        config = load_config(args.config)
        if not gt_path.is_file():
            raise Misconfigured(f"no reference data at {gt_path}")
        pred_path = find_submission(res)
        scored = score(config, gt_path, pred_path, images=ref, report=True)
    except (Misconfigured, ValueError) as err:
        if isinstance(err, OVEarthInputError):
            print(_rejected(err), file=sys.stderr)
            return EXIT_REJECTED
        print(f"{PROG}: the scoring program is misconfigured (not the submission's fault): "
              f"{err}", file=sys.stderr)
        return EXIT_MISCONFIGURED
    _report(scored)
    try:
        write_files(args.output, {DETAILS_NAME: scored.html or b"",
                                  SCORES_NAME: orjson.dumps(scored.scores,
                                                            option=orjson.OPT_INDENT_2)},
                    inputs=[gt_path, pred_path])
    except (OSError, ValueError) as err:  # OutputRefused is a ValueError
        print(f"{PROG}: cannot write to {args.output}: {err}", file=sys.stderr)
        return EXIT_MISCONFIGURED
    print(f"{PROG}: scored {pred_path.name}: "
          + ", ".join(f"{k} {v:.4f}" for k, v in scored.scores.items()))
    return 0


def unzipped_submission(path: Path, folder: Path, config: HostingConfig) -> Path:
    """EvalAI hands over the uploaded file itself: a ``.zip`` must hold one ``.json`` file
    (``__MACOSX`` and hidden files skipped), copied into ``folder`` after every entry and
    the file's size are checked (:func:`.archive.read_json_member`: the declared size, then
    at most ``max_mb`` bytes read, so a zip bomb stops there); any other file is the
    submission as it is."""
    if path.suffix.lower() != ".zip":
        return path
    member, data = read_json_member(path, config.limits.max_bytes, config.limits.max_mb)
    name = PurePosixPath(member).name
    return write_confined(folder, name if is_component(name) else "predictions.json", data)


def evaluate(test_annotation_file: str, user_submission_file: str, phase_codename: str, *,
             config: HostingConfig, **kwargs: Any) -> dict[str, Any]:
    """EvalAI's ``evaluate``: ``{"result": [{split: {column key: value}}],
    "submission_result": {split: {...}}}`` for the phase's split (``config.splits``).
    The submission is a ``.json`` file or a ``.zip`` holding one
    (:func:`unzipped_submission`).

    A rejected submission (or a phase the configuration does not know) prints one message on
    stderr and returns ``{"submission_result": {"error": message}}``: without ``result``
    EvalAI marks the submission failed and shows that stderr, no traceback. ``kwargs``
    (EvalAI's ``submission_metadata``) are not used."""
    split = config.splits.get(phase_codename)
    try:
        if split is None:
            raise Misconfigured(f"the phase codename {phase_codename!r} is none of the "
                                f"configuration's ({', '.join(config.splits)})")
        with tempfile.TemporaryDirectory(prefix="ovearth-evalai-") as tmp:
            submission = unzipped_submission(Path(user_submission_file), Path(tmp), config)
            scored = score(config, Path(test_annotation_file), submission)
    except (OVEarthInputError, Misconfigured) as err:
        message = (_rejected(err) if isinstance(err, OVEarthInputError) else
                   f"{PROG}: the evaluation script is misconfigured (not the submission's "
                   f"fault): {err}")
        print(message, file=sys.stderr)
        return {"submission_result": {"error": message}}
    _report(scored)
    return {"result": [{split: scored.scores}], "submission_result": {split: scored.scores}}
