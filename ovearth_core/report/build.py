"""Loading, evaluating and comparing the submissions of a report (no HTML here)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import pipeline
from ..analysis.ap_bootstrap import APCurves, APRun, ap_run
from ..analysis.compare import (
    DEFAULT_AP_RESAMPLES,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    UNITS,
    Comparison,
    compare_results,
    query_score,
)
from ..analysis.slices import GSD, SliceTable, image_meta_of, needs_meta, slice_table
from ..analysis.sweep import BOX_MODALITIES
from ..cache import ResultCache
from ..gcpause import gc_paused
from ..io import GroundTruth, parse_ground_truth, parse_json, read_input
from ..labels import TASK_LABELS
from ..options import Options
from ..run import Run
from ..types import TASK_KEYS, SampleList

CLI_TASK = {v: k for k, v in TASK_KEYS.items()}


WORST_DEFAULT = 12


@dataclass
class Submission:
    name: str
    path: Path
    sha256: str
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # task key -> result
    samples: dict[str, SampleList] = field(default_factory=dict)
    # task key -> average_precision_report of every box (tasks with box modalities)
    average_precision: dict[str, dict[str, Any]] = field(default_factory=dict)
    # task key -> modality -> what the AP intervals reweight (same tasks as above)
    ap_curves: dict[str, dict[str, APCurves]] = field(default_factory=dict)

    def run(self, task: str) -> Run:
        """The keyed view of one task (``run.sample(query_id)``, ``run.row(query_id)``;
        no box facts: the report keeps none)."""
        return Run(self.results[task], self.samples[task], {})


@dataclass
class ReportData:
    gt_path: Path
    gt_sha256: str
    images: Path
    tasks: list[str]
    options: dict[str, Any]
    submissions: list[Submission]
    comparisons: dict[str, Comparison]
    worst: int
    timings: dict[str, float] = field(default_factory=dict)
    groups: dict[str, SliceTable] = field(default_factory=dict)  # task -> by taxonomy group
    num_cached: int = 0  # evaluations loaded from the on-disk result cache
    num_evaluations: int = 0
    # task -> attribute (--slice-by, in the order given) -> table
    slices: dict[str, dict[str, SliceTable]] = field(default_factory=dict)
    # task -> leaderboard report with the ranks' uncertainty (--rank DIR; report/ranks.py)
    ranks: dict[str, dict[str, Any]] = field(default_factory=dict)
    # --audit: the result of ovearth_core.audit.audit (None: not asked)
    audit: dict[str, Any] | None = None


def default_tasks(gt: GroundTruth) -> list[str]:
    """Task keys with at least one query in the ground truth (all three if none has)."""
    present = [key for key in TASK_LABELS if gt.tasks.get(key)]
    return present or list(TASK_LABELS)


def build_report_data(gt_path: str | Path, predictions: Sequence[str | Path],
                      options: Options, images: str | Path | None = None,
                      tasks: Sequence[str] | None = None, *,
                      worst: int = WORST_DEFAULT, names: Sequence[str] | None = None,
                      n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED,
                      taxonomy: Mapping[str, str] | None = None,
                      cache: ResultCache | None = None,
                      bootstrap_unit: str | None = None,
                      slice_by: Sequence[str] = (),
                      ap_resamples: int = DEFAULT_AP_RESAMPLES) -> ReportData:
    """Load, evaluate and (with two prediction files) compare every selected task.

    ``options``: the one :class:`~ovearth_core.options.Options` value of the run (its
    ``task`` is replaced by each of ``tasks``; ``None``: the tasks the ground truth has).
    Each task with box modalities also gets its average precision
    (:func:`~ovearth_core.analysis.ap.average_precision_report` of every box, whatever the
    score threshold: pooled AP and COCO's and DOTA's per-category mAP), COCO's block capped
    at ``options.max_detections`` boxes per query, ``options.hard_negatives`` as the
    analysis command's;
    compared, its B − A has paired intervals from the first ``ap_resamples`` resamples
    (:func:`~ovearth_core.analysis.compare.ap_differences`).

    With a ``taxonomy`` (``{category: group}``) each task also gets its key metrics per
    category group (:func:`~ovearth_core.analysis.slices.slice_table`; paired with B), and
    per value of each of ``slice_by`` (attributes of one task's queries: ``gsd``,
    ``meta:KEY``, ``category``, ``gt_size``...; the images' GSD read from ``images``).

    With ``options.modalities`` ``auto`` the first submission's inferred modalities are used for
    the second as well (per task), as comparing needs the same modalities.

    ``bootstrap_unit`` (``query`` or ``image``; ``None``: the ground truth's
    ``source.resample_unit``, images for a DOTA or COCO conversion) is what the intervals
    resample.

    With a ``cache`` (:mod:`ovearth_core.cache`) each task's evaluator result is looked up
    by the digests of the very bytes read and the options, and stored after evaluating;
    the samples are always loaded (the gallery and the slices need them).

    Raises:
        OVEarthInputError: for invalid files or options (the evaluator's validation).
    """
    started = time.perf_counter()
    gt_file = Path(gt_path)
    wanted = list(dict.fromkeys(slice_by))
    gt, gt_sha256, source_unit, meta = _read_ground_truth(
        gt_file, images if images is not None else gt_file.parent, wanted)
    unit = bootstrap_unit or source_unit
    task_keys = (list(dict.fromkeys(TASK_KEYS.get(t, t) for t in tasks)) if tasks
                 else default_tasks(gt))
    labels = list(names) if names else _default_names([Path(p) for p in predictions])
    asked = replace(options, task=task_keys[0])
    subs, num_cached = _evaluate_submissions(labels, predictions, task_keys, asked, gt_file,
                                             gt, gt_sha256, cache)
    num_evaluations = len(subs) * len(task_keys)
    evaluated = time.perf_counter()
    comparisons = {}
    if len(subs) == 2:
        comparisons = {key: compare_results(subs[0].results[key], subs[1].results[key],
                                            n_resamples=n_resamples, seed=seed, unit=unit,
                                            ap=_ap_pair(subs, key), ap_resamples=ap_resamples)
                       for key in task_keys}
    groups = {} if taxonomy is None else {
        key: slice_table(subs[0].results[key], subs[0].samples[key], "group", taxonomy,
                         result_b=subs[1].results[key] if len(subs) == 2 else None,
                         n_resamples=n_resamples, seed=seed, unit=unit,
                         min_count=options.min_count) for key in task_keys}
    sliced = {key: {attr: slice_table(
        subs[0].results[key], subs[0].samples[key], attr,
        result_b=subs[1].results[key] if len(subs) == 2 else None, n_resamples=n_resamples,
        seed=seed, meta=meta, unit=unit, min_count=options.min_count) for attr in wanted}
        for key in task_keys} if wanted else {}
    shown = {"tasks": [CLI_TASK[k] for k in task_keys],
               "modalities": sorted(subs[0].results[task_keys[0]]["config"]["modalities"]),
               "iou_threshold": options.iou_threshold,
               "score_threshold": options.score_threshold,
               "bbox_format": options.bbox_format, "bootstrap_resamples": n_resamples,
               "bootstrap_seed": seed}
    for extension in ("large_masks", "concave_obb"):  # beyond the spec: said only when used
        if getattr(options, extension):
            shown[extension] = True
    if any(sub.average_precision for sub in subs):
        shown.update({"ap_hard_negatives": options.hard_negatives,
                      "ap_max_detections": options.max_detections})
        if options.nms_ap:  # published protocols beyond COCO's: said only when asked
            shown["ap_nms_ap"] = True
        if options.aitod:
            shown["ap_aitod"] = True
        if comparisons:
            shown["ap_bootstrap_resamples"] = ap_resamples
    return ReportData(gt_file, gt_sha256,
                      Path(images) if images is not None else gt_file.parent,
                      task_keys, shown, subs, comparisons, worst,
                      {"load_evaluate_s": evaluated - started,
                       "compare_s": time.perf_counter() - evaluated}, groups, num_cached,
                      num_evaluations, sliced)


def _read_ground_truth(gt_file: Path, images: str | Path, wanted: Sequence[str]
                       ) -> tuple[GroundTruth, str, str, dict[str, dict[str, Any]] | None]:
    """The ground truth, the SHA-256 of its bytes, the unit its ``source`` says to resample
    (``query`` when it says none) and, when ``wanted`` slices need them, the images'
    metadata (GSD read from the images in ``images``)."""
    # Each file is read once (a regular file within the input cap, never a pipe): the digest
    # in the report is of the very bytes evaluated.
    data = read_input(gt_file, "ground-truth")
    gt_sha256 = hashlib.sha256(data).hexdigest()
    gt_doc = parse_json(data, str(gt_file))
    del data
    source = gt_doc.get("source") if isinstance(gt_doc, dict) else None
    unit = (source.get("resample_unit") if isinstance(source, dict)
            and source.get("resample_unit") in UNITS else "query")
    gt = parse_ground_truth(gt_doc, str(gt_file))
    # From the very document evaluated; the rest of it is freed with it.
    meta = (image_meta_of(gt_doc, images, with_gsd=GSD in wanted)
            if any(map(needs_meta, wanted)) else None)
    return gt, gt_sha256, unit, meta


def _evaluate_submissions(labels: Sequence[str], predictions: Sequence[str | Path],
                          task_keys: Sequence[str], asked: Options, gt_file: Path,
                          gt: GroundTruth, gt_sha256: str, cache: ResultCache | None
                          ) -> tuple[list[Submission], int]:
    """Every submission evaluated on every task (each file read and parsed once), and how
    many of the evaluations came from the cache. With ``asked.modalities`` "auto", B is read
    with the modalities resolved for A, so that rows pair up."""
    subs: list[Submission] = []
    num_cached = 0
    for label, pred in zip(labels, predictions, strict=True):
        pred_file = Path(pred)
        data = read_input(pred_file, "prediction")
        sub = Submission(label, pred_file, hashlib.sha256(data).hexdigest())
        with gc_paused():  # the document is freed before collection resumes
            doc = parse_json(data, str(pred_file))
            del data
            for key in task_keys:
                mods = (subs[0].results[key]["config"]["modalities"] if asked.auto and subs
                        else asked.modalities)
                num_cached += _evaluate_task(sub, replace(asked, task=key, modalities=mods),
                                             gt_file, gt, gt_sha256, doc, cache)
            del doc
        subs.append(sub)
    return subs, num_cached


def _evaluate_task(sub: Submission, options: Options, gt_file: Path, gt: GroundTruth,
                   gt_sha256: str, doc: Any, cache: ResultCache | None) -> bool:
    """One task of one submission (its parsed document ``doc``) under ``options``: its
    samples, its result (through the one pipeline and ``cache``: whether it came from there
    is returned) and, with box modalities, its average precision of every box."""
    key = TASK_KEYS[options.task]
    loaded = pipeline.load(gt_file, sub.path, options, ground_truth=gt, gt_sha256=gt_sha256,
                           predictions_doc=doc, pred_sha256=sub.sha256)
    samples = loaded.samples
    sub.samples[key] = samples
    run, cached = pipeline.evaluate_cached(loaded, cache)
    sub.results[key] = run.results
    if any(m in BOX_MODALITIES for m in samples.modalities):
        ap = ap_run(samples.every_box, options.iou_threshold, samples.modalities,
                    options.hard_negatives, options.max_detections, nms_ap=options.nms_ap,
                    aitod=options.aitod)
        sub.average_precision[key], sub.ap_curves[key] = ap.report, ap.curves
    return cached


def _ap_pair(subs: Sequence[Submission], task: str) -> tuple[APRun, APRun] | None:
    """A's and B's AP runs of a task (``None`` without box modalities)."""
    if not all(task in sub.average_precision for sub in subs):
        return None
    a, b = (APRun(sub.average_precision[task], sub.ap_curves[task]) for sub in subs)
    return a, b


def _default_names(paths: Sequence[Path]) -> list[str]:
    names = [p.stem for p in paths]
    if len(names) == 2 and names[0] == names[1]:
        names = [f"{names[0]} (A)", f"{names[1]} (B)"]
    return names


def worst_queries(result: dict[str, Any], n: int) -> list[tuple[int, float]]:
    """Indices into ``per_sample`` of the ``n`` worst queries, with their score.

    A positive query scores the mean of its per-modality scores (mask IoU, box F1)
    over the modalities it is evaluated in (queries evaluated in none are skipped).
    A negative query with any prediction (a hallucination) scores 0; a correctly
    empty one is skipped. So that both kinds of failure show, hallucinations get at
    most a third of the ``n`` slots while there are enough positives (more when there
    are not). Positives come first, worst first; ties go by ground-truth order.
    """
    positives, negatives = [], []
    for i, row in enumerate(result["per_sample"]):
        if row["negative"]:
            if row["pred_present"]:
                negatives.append((0.0, i))
            continue
        values = [v for key in ("seg", "bbox", "oriented_bbox")
                  if (v := query_score(row, key)) is not None]
        if values:
            positives.append((sum(values) / len(values), i))
    positives.sort()
    k_neg = min(len(negatives), n // 3 if positives else n)
    k_pos = min(len(positives), n - k_neg)
    k_neg = min(len(negatives), n - k_pos)
    return [(i, s) for s, i in positives[:k_pos] + negatives[:k_neg]]
