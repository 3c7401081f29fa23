"""Cached analyses of the app's pages: score sweep, average precision, error attribution and
the folder leaderboard, slices, the three tasks of one submission (the cross-task view).

Keys follow :mod:`pages.common.data`: file keys ``(path, mtime_ns, size)`` plus options.
The sweep and AP read the samples loaded *without* a score threshold (every box), so their
key drops the sidebar's threshold; moving the Overview's threshold slider only indexes the
cached sweep. Attribution explains the run as evaluated, with the sidebar's threshold.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import streamlit as st

from ovearth_core.analysis import crosstask, gallery, nms_ap, objects
from ovearth_core.analysis import slices as slices_
from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.analysis.ap_bootstrap import APRun, ap_run
from ovearth_core.analysis.attribution import error_attribution
from ovearth_core.analysis.compare import default_unit
from ovearth_core.analysis.leaderboard import cached_uncertainty, evaluate_with
from ovearth_core.analysis.standings import leaderboard_report
from ovearth_core.analysis.sweep import BOX_MODALITIES, score_sweep, sweep_to_dict
from ovearth_core.cache import rejected_note
from ovearth_core.convert import chips as chips_
from ovearth_core.image_paths import ImagePathError, resolve_image_path
from ovearth_core.io import parse_json, read_input
from ovearth_core.paths import folder_inputs
from ovearth_core.results import Coverage
from ovearth_core.types import MODALITIES, SampleList
from ovearth_core.viz import images
from ovearth_core.workers import worker_count

from . import data, links, state

# Subset sizes of the stability analysis: the paper's (5, 20, 50, 100, 150) and smaller ones
# so that a small folder (the demo has 25 categories) still gives a curve.
STABILITY_SIZES = (2, 3, 5, 10, 15, 20, 30, 50, 75, 100, 150)


@dataclass(frozen=True)
class Timed:
    """A JSON-ready analysis and the seconds it took when it was computed (not cached)."""

    value: dict[str, Any]
    seconds: float


def _loaded(gt: data.FileKey, pred: data.FileKey, options: data.Options) -> SampleList:
    return data.samples(gt, pred, options)


def every_box(options: data.Options) -> data.Options:
    """The options with the score threshold dropped (the sweep's and AP's cache key)."""
    return replace(options, score_threshold=None)


def sweep(gt: data.FileKey, pred: data.FileKey, options: data.Options) -> Timed:
    """:func:`sweep_to_dict` of every box of the evaluation's own parse (``every_box``:
    the score threshold is a view; the file is not read again)."""
    return _sweep(gt, pred, every_box(options), options)


# ``_loaded_under`` (not hashed: every box is the same whatever the threshold) names the load
# the evaluation made, whose every_box is ranked: one parse of the file per session's options.
@st.cache_resource(show_spinner=False, max_entries=16)
def _sweep(gt: data.FileKey, pred: data.FileKey, options: data.Options,
           _loaded_under: data.Options) -> Timed:
    start = time.perf_counter()
    value = sweep_to_dict(score_sweep(_loaded(gt, pred, _loaded_under).every_box,
                                      options.iou_threshold))
    return Timed(value, time.perf_counter() - start)


def average_precision(gt: data.FileKey, pred: data.FileKey, options: data.Options) -> Timed:
    """:func:`average_precision_report` of every box (``every_box`` of the evaluation's
    parse: no score threshold), with the options' ``hard_negatives``, COCO's block capped
    at their ``max_detections``, and NMS-AP and AI-TOD's protocol when their ``nms_ap`` /
    ``aitod`` ask."""
    return _average_precision(gt, pred, every_box(options), options)


@st.cache_resource(show_spinner=False, max_entries=16)
def _average_precision(gt: data.FileKey, pred: data.FileKey, options: data.Options,
                       _loaded_under: data.Options) -> Timed:
    start = time.perf_counter()
    samples = _loaded(gt, pred, _loaded_under).every_box
    value = average_precision_report(samples, options.iou_threshold, samples.modalities,
                                     options.hard_negatives, options.max_detections,
                                     options.nms_ap, options.aitod)
    return Timed(value, time.perf_counter() - start)


def ap_with_curves(gt: data.FileKey, pred: data.FileKey, options: data.Options) -> APRun:
    """:func:`average_precision` with the curves its resamples reweight
    (:func:`~ovearth_core.analysis.ap_bootstrap.ap_run`): the Leaderboard's AP rank
    intervals."""
    return _ap_with_curves(gt, pred, every_box(options), options)


@st.cache_resource(show_spinner=False, max_entries=16)
def _ap_with_curves(gt: data.FileKey, pred: data.FileKey, options: data.Options,
                    _loaded_under: data.Options) -> APRun:
    samples = _loaded(gt, pred, _loaded_under).every_box
    return ap_run(samples, options.iou_threshold, samples.modalities, options.hard_negatives,
                  options.max_detections, average_precision(gt, pred, options).value,
                  options.nms_ap, options.aitod)


@dataclass(frozen=True)
class SuppressedBox:
    """One of a query's predicted boxes NMS-AP removed, as the explorer shows it:
    ``modality`` (``bbox`` / ``oriented_bbox``), ``box`` (its position among the boxes the
    viewer draws, the score threshold's view; ``None`` when the threshold hides it),
    ``score`` (``None``: unscored), and the box that won: ``winner_query_id``'s box
    ``winner_box`` (its position among that query's every box), its ``winner_phrase`` and
    ``winner_score``, at IoU ``iou`` with the ground-truth box they competed for."""

    modality: str
    box: int | None
    score: float | None
    winner_query_id: str
    winner_box: int
    winner_phrase: str
    winner_score: float | None
    iou: float


def nms_suppressed(gt: data.FileKey, pred: data.FileKey, options: data.Options,
                   query_id: str) -> tuple[SuppressedBox, ...]:
    """The boxes of ``query_id`` NMS-AP (:func:`~ovearth_core.analysis.nms_ap.suppress`,
    on every box, as the AP ranks them) removed, in modality then box order; empty when
    the options do not ask for NMS-AP."""
    if not options.nms_ap:
        return ()
    return _nms_suppressed(gt, pred, options.loader()).get(query_id, ())


@st.cache_resource(show_spinner=False, max_entries=16)
def _nms_suppressed(gt: data.FileKey, pred: data.FileKey, options: data.Options
                    ) -> dict[str, tuple[SuppressedBox, ...]]:
    """Every query's suppressed boxes (``options``: the loader's, whose score threshold
    places them among the boxes drawn; NMS-AP itself ranks every box)."""
    every = _loaded(gt, pred, options).every_box
    by_id = {s.sample_id: s for s in every}
    out: dict[str, list[SuppressedBox]] = {}
    for m in BOX_MODALITIES:
        if m not in every.modalities:
            continue
        for gone in nms_ap.suppress(every, m).removed:
            scores = _scores(by_id[gone.query_id], m)
            out.setdefault(gone.query_id, []).append(SuppressedBox(
                m, _shown_position(scores, gone.box, options.score_threshold),
                _score(scores, gone.box), gone.winner_query_id, gone.winner_box,
                gone.winner_phrase, _score(_scores(by_id[gone.winner_query_id], m),
                                           gone.winner_box), gone.iou))
    return {q: tuple(v) for q, v in out.items()}


def _scores(sample: Any, modality: str) -> Any:
    return sample.pred_box_scores if modality == "bbox" else sample.pred_obb_scores


def _score(scores: Any, box: int) -> float | None:
    value = float(scores[box]) if box < len(scores) else float("nan")
    return None if value != value else value


def _shown_position(scores: Any, box: int, threshold: float | None) -> int | None:
    """Where every-box position ``box`` is among the boxes scoring at least ``threshold``
    (the evaluated view, ``io``'s rule), ``None`` when the threshold drops it."""
    if threshold is None:
        return box
    kept = scores >= threshold
    return int(kept[:box].sum()) if kept[box] else None


@st.cache_resource(show_spinner=False, max_entries=16)
def attribution(gt: data.FileKey, pred: data.FileKey, options: data.Options) -> Timed:
    """:func:`error_attribution` of the run as evaluated (sidebar's score threshold)."""
    start = time.perf_counter()
    value = error_attribution(_loaded(gt, pred, options), options.iou_threshold,
                              evaluated=data.evaluate(gt, pred, options).results)
    return Timed(value, time.perf_counter() - start)


@st.cache_resource(show_spinner=False, max_entries=16)
def object_outcomes(gt: data.FileKey, pred: data.FileKey, options: data.Options,
                    modality: str) -> list[objects.QueryObjects]:
    """:func:`objects.query_objects` of the run as evaluated, in query order (empty when
    the modality was not evaluated; ``"segmentation"``: the masks' components)."""
    run = data.evaluate(gt, pred, options).run
    if run is None or modality not in evaluated_objects(run):
        return []
    if modality == "segmentation":  # the evaluator matches no mask objects
        return objects.query_objects(run.samples, modality, options.iou_threshold)
    return objects.query_objects(run.samples, modality, options.iou_threshold,
                                 entries=[run.view.row(s.sample_id).block(modality).json
                                          for s in run.samples])


def evaluated_objects(run: Any) -> list[str]:
    """The modalities of an evaluated run (:class:`~ovearth_core.run.Run`) with object
    outcomes: masks (their connected components), HBB, OBB."""
    return [m for m in objects.OBJECT_MODALITIES
            if (m in run.config.modalities if m == "segmentation" else m in run.box_facts)]


@st.cache_resource(show_spinner=False, max_entries=16)
def object_errors(gt: data.FileKey, pred: data.FileKey, options: data.Options,
                  modality: str) -> dict[str, str]:
    """``{query_id: its object errors in a few words}`` (:func:`objects.error_summary`)."""
    return {qo.query_id: objects.error_summary(qo)
            for qo in object_outcomes(gt, pred, options, modality)}


def box_modality(run: Any) -> str | None:
    """The box modality the object views show: HBB when evaluated, else OBB (the viewer's
    box picker's)."""
    return gallery.default_modality(run.evaluation.run) if run.evaluation.run else None


@st.cache_resource(show_spinner=False, max_entries=16)
def tiles_with_objects(gt: data.FileKey, pred: data.FileKey, options: data.Options,
                       selector: str, modality: str | None) -> list[gallery.Tile]:
    """The gallery's tiles with their object outcome and confused category."""
    every = data.gallery_tiles(gt, pred, options, selector, modality)
    if modality is None or selector == "queries":
        return every
    return gallery.with_objects(every, object_outcomes(gt, pred, options, modality),
                                options.iou_threshold)


@st.cache_data(show_spinner=False, max_entries=16)
def resample_unit(gt: data.FileKey) -> str:
    """The bootstrap unit the ground truth asks for (``image`` for a DOTA / COCO
    conversion, else ``query``)."""
    return default_unit(gt[0])


UNIT_CHOICES = links.UNIT_CHOICES


def unit_picker(gt: data.FileKey, auto: str | None = None) -> str:
    """The "Bootstrap unit" radio (shared by Compare, Slices and the Leaderboard); returns
    the unit in use: the choice, or with ``auto`` the ground truth's (images for a DOTA /
    COCO conversion), or ``auto`` when given (the Leaderboard's ranks: images, the
    benchmark's unit)."""
    default = auto or resample_unit(gt)
    plural = {"image": "images", "query": "queries"}
    why = (", the ranking's unit" if auto else
           ", as the ground truth asks" if default == "image" else "")
    words = {"auto": f"auto ({plural[default]}{why})", **plural}
    st.radio("Bootstrap unit", UNIT_CHOICES, horizontal=True, format_func=words.get,
             help="What a bootstrap resample draws with replacement. Queries of one image "
                  "(a DOTA or COCO conversion: one query per image and class) are not "
                  "independent: resample images.", **state.bind("boot_unit", UNIT_CHOICES))
    picked = st.session_state["boot_unit"]
    return default if picked == "auto" else picked


def has_boxes(modalities: tuple[str, ...]) -> bool:
    return any(m in modalities for m in BOX_MODALITIES)


@dataclass(frozen=True)
class Listed:
    """A submissions folder through the gate: the file keys of the ``*.json`` files it lets
    through (sorted by name) and ``(name, why)`` of each one it refused (never read)."""

    keys: tuple[data.FileKey, ...]
    refused: tuple[tuple[str, str], ...]

    @property
    def total(self) -> int:
        return len(self.keys) + len(self.refused)


def prediction_files(folder: Path) -> Listed:
    """``folder/*.json`` through the gate (:func:`~ovearth_core.paths.folder_inputs` with
    the data roots): a link out of the roots, a pipe, a device, a file over the size cap
    is refused, unread (nothing when ``folder`` is not a folder)."""
    accepted, refused = folder_inputs(folder, "*.json", state.data_roots())
    return Listed(tuple(data.file_key(p) for p in accepted),
                  tuple((r.path.stem, f"expected {r.expected}, found {r.found}")
                        for r in refused))


def leaderboard_options(options: data.Options) -> data.Options:
    """Every submission is evaluated on the same declared modalities (all three when the
    sidebar says auto: a missing field counts as an empty prediction) and every box."""
    modalities = MODALITIES if options.modalities == ("auto",) else options.modalities
    return replace(options, modalities=tuple(modalities), score_threshold=None)


@dataclass(frozen=True)
class Board:
    """A folder leaderboard: the report, the models left out and why, the timing, how
    many results came from the on-disk cache and which one was the sidebar's own."""

    report: dict[str, Any]
    skipped: list[tuple[str, str]]
    seconds: float
    num_cached: int = 0
    shared: str | None = None
    workers: int = 0  # worker processes that evaluated (0: none, all in this process)
    cache_note: str = ""


BOARDS_KEPT = 8


@st.cache_resource(show_spinner=False)
def _boards() -> tuple[OrderedDict[tuple[Any, ...], Board], threading.Lock]:
    """The boards computed in this server process (most recent last) and their lock.

    Not a cached function of the board itself: the evaluations report progress to the
    page's st.progress bar, which a cached function may not touch. Held by
    st.cache_resource, so clearing Streamlit's caches forgets them; every evaluation is
    also in the on-disk result cache.
    """
    return OrderedDict(), threading.Lock()
Progress = Callable[[int, int, str, bool], None]


def leaderboard(gt: data.FileKey, preds: tuple[data.FileKey, ...], options: data.Options,
                n_subsets: int, seed: int,
                shared: tuple[data.FileKey, data.Evaluation] | None = None,
                progress: Progress | None = None,
                with_ap: bool = False, unit: str = "image") -> Board:
    """:func:`leaderboard_report` of the submissions ``preds`` on one task.

    ``preds`` have passed the gate (:func:`prediction_files`); submissions that fail
    validation and those without a row for the task are left out (``skipped`` says why).
    ``shared`` is the sidebar's submission and its evaluation under these very options:
    used as it is, never evaluated again.
    The others are evaluated in parallel processes through the on-disk result cache
    (:func:`~ovearth_core.analysis.leaderboard.evaluate_with`);
    ``progress(done, total, name, cached)`` follows them. ``with_ap`` also ranks by each
    submission's AP and mAP (:func:`ap_with_curves` at the options' AP settings, cached
    per submission and options). The ranks carry their uncertainty (issue 37):
    ``options``' statistics' settings, resampling ``unit`` with ``seed``; AP's too, each
    resample's AP recomputed from the curves.
    """
    key = (gt, preds, options, n_subsets, seed, None if shared is None else shared[0], with_ap,
           unit)
    boards, lock = _boards()
    with lock:
        if key in boards:
            boards.move_to_end(key)
            return boards[key]
    start = time.perf_counter()
    store, cache_note = data.result_cache()
    usable, skipped, by_path = list(preds), [], {}
    shared_name = None
    todo = []
    for pred in usable:
        if shared is not None and pred == shared[0]:
            shared_name = Path(pred[0]).stem
            ev = shared[1]
            by_path[pred[0]] = (ev.results, len(ev.problems), False)
        else:
            todo.append(pred)
    total = len(usable)
    offset = total - len(todo)
    if progress is not None and offset:
        progress(offset, total, shared_name or "", False)
    outcomes = evaluate_with(
        gt[0], [p[0] for p in todo], options.evaluator(), cache=store, workers=None,
        gt_sha256=data.digest(gt) if store is not None else None, board=True,
        progress=None if progress is None else
        lambda done, _total, o: progress(offset + done, total, o.name, o.cached))
    for pred, outcome in zip(todo, outcomes, strict=True):
        by_path[pred[0]] = (outcome.result, outcome.num_problems, outcome.cached)
    if store is not None and store.rejected:
        cache_note += f"; {rejected_note(store)}"
    names, results, num_cached, ranked = [], [], 0, []
    for pred in usable:
        result, num_problems, cached = by_path[pred[0]]
        name = Path(pred[0]).stem
        if result is None:
            skipped.append((name, f"{num_problems} validation problem(s)"))
            continue
        if Coverage.of(result).num_with_prediction_row == 0:
            skipped.append((name, "no prediction row for this task"))
            continue
        names.append(name)
        results.append(result)
        ranked.append(pred)
        num_cached += cached
    reports = None if not with_ap or not has_boxes(options.modalities) else [
        ap_with_curves(gt, pred, options) for pred in ranked]
    report = leaderboard_report(names, results, sizes=STABILITY_SIZES, n_subsets=n_subsets,
                                seed=seed, average_precision=reports, ranks=options, unit=unit,
                                uncertainty=cached_uncertainty(store))
    in_workers = sum(o.in_worker for o in outcomes)
    workers = min(worker_count(), in_workers)
    board = Board(report, skipped, time.perf_counter() - start, num_cached, shared_name,
                  workers, cache_note)
    with lock:
        boards[key] = board
        while len(boards) > BOARDS_KEPT:
            boards.popitem(last=False)
    return board


@st.cache_data(show_spinner=False, max_entries=8)
def taxonomy(key: data.FileKey) -> dict[str, str]:
    """``{category: group}`` of a taxonomy file (raises OVEarthInputError)."""
    return slices_.load_taxonomy(key[0])


@st.cache_resource(show_spinner=False, max_entries=16)
def slices(gt: data.FileKey, pred: data.FileKey, options: data.Options, attribute: str,
           taxonomy_items: tuple[tuple[str, str], ...] | None,
           tags: tuple[tuple[str, tuple[str, ...]], ...], n_resamples: int,
           seed: int, b: tuple[data.FileKey, data.Options] | None = None,
           unit: str = "query", images_dir: str | None = None) -> slices_.SliceTable:
    """:func:`slices_.slice_table` of the run as evaluated (the sidebar's options);
    ``tags`` are the review tags of the task, as sorted items (part of the key); ``b``
    (a submission and its options) adds B and paired intervals of B − A; ``images_dir``:
    the images folder (for ``gsd``: a GeoTIFF's pixel size)."""
    evaluation = data.evaluate(gt, pred, options)
    result_b = None if b is None else data.evaluate(gt, *b).results
    meta = (image_meta(gt, images_dir, attribute == slices_.GSD)
            if slices_.needs_meta(attribute) else None)
    return slices_.slice_table(
        evaluation.results, evaluation.run.samples, attribute,
        None if taxonomy_items is None else dict(taxonomy_items),
        {q: frozenset(t) for q, t in tags}, result_b=result_b, n_resamples=n_resamples,
        seed=seed, meta=meta, unit=unit, min_count=options.min_count)


@st.cache_resource(show_spinner=False, max_entries=8)
def image_meta(gt: data.FileKey, images_dir: str | None, with_gsd: bool
               ) -> dict[str, dict[str, Any]]:
    """:func:`slices_.image_meta` of the ground truth (read-only: shared by sessions)."""
    return slices_.image_meta(gt[0], images_dir, with_gsd)


def image_meta_keys(gt: data.FileKey) -> list[str]:
    """The keys of the annotations' ``image_meta`` objects, sorted."""
    return sorted({k for meta in image_meta(gt, None, False).values() for k in meta})


def form_evaluations(gt: data.FileKey, pred: data.FileKey, options: data.Options,
                     ) -> dict[str, data.Evaluation]:
    """The run's submission evaluated on each of the three tasks (cached by
    :func:`data.evaluate`), all with the modalities the sidebar's task resolved to, so that
    the forms have the same key metrics."""
    first = data.evaluate(gt, pred, options)
    mods = first.view.config.modalities if first.view is not None else options.modalities
    return {form: data.evaluate(gt, pred, replace(options, task=form, modalities=mods))
            for form in crosstask.FORMS}


def form_problems(evaluations: dict[str, data.Evaluation]) -> list[tuple[str, list[Any]]]:
    """The forms whose evaluation failed, with their problems."""
    return [(f, e.problems) for f, e in evaluations.items() if e.problems]


@st.cache_resource(show_spinner=False, max_entries=8)
def joined(gt: data.FileKey, pred: data.FileKey, options: data.Options,
           ) -> dict[str, crosstask.AnnotationJoin]:
    """:func:`crosstask.join` of the three forms (call after :func:`form_problems` is
    empty)."""
    ev = form_evaluations(gt, pred, options)
    return crosstask.join({f: (e.run.samples, e.rows) for f, e in ev.items()})


@st.cache_resource(show_spinner=False, max_entries=8)
def query_form_slices(gt: data.FileKey, pred: data.FileKey, options: data.Options,
                      n_resamples: int, seed: int,
                      b: tuple[data.FileKey, data.Options] | None = None,
                      unit: str = "query") -> slices_.SliceTable:
    """:func:`slices_.query_form_table` of the three forms (and of B's, when given)."""
    ev = form_evaluations(gt, pred, options)
    ev_b = None if b is None else form_evaluations(gt, *b)
    return slices_.query_form_table(
        {f: e.results for f, e in ev.items()}, {f: e.run.samples for f, e in ev.items()},
        None if ev_b is None else {f: e.results for f, e in ev_b.items()},
        n_resamples=n_resamples, seed=seed, unit=unit, min_count=options.min_count)


@st.cache_resource(show_spinner=False, max_entries=4)
def submission_chips(pred: data.FileKey
                     ) -> tuple[dict[str, list[str]], chips_.SplitSettings | None]:
    """:func:`chips_.chips_by_scene` of a submission and its :func:`chips_.split_settings`
    (``({}, None)`` at the cost of one byte scan when no box carries ``"chips"``)."""
    raw = read_input(pred[0], "prediction")
    if b'"chips"' not in raw:
        return {}, None
    doc = parse_json(raw, pred[0])
    return chips_.chips_by_scene(doc), chips_.split_settings(doc)


@dataclass(frozen=True)
class SceneChips:
    """The chips a submission names for one scene, and the relative paths and sizes of
    those whose image is in the images folder (beside the scene, with its suffix or
    .png/.jpg/.tif)."""

    chips: list[chips_.Chip]
    files: dict[str, tuple[str, tuple[int, int]]]


@st.cache_resource(show_spinner=False, max_entries=16)
def scene_chips(pred: data.FileKey, images_dir: str, image_path: str, width: int,
                height: int) -> SceneChips:
    """The chips of the scene ``image_path`` (its file name's stem is the chips' scene)."""
    scene = Path(image_path)
    by_scene, split = submission_chips(pred)
    names = by_scene.get(scene.stem, [])
    files: dict[str, tuple[str, tuple[int, int]]] = {}
    for name in names:
        for suffix in dict.fromkeys((scene.suffix, ".png", ".jpg", ".tif")):
            relative = str(scene.with_name(name + suffix))
            try:
                path = resolve_image_path(images_dir, relative)
                if path.is_file():
                    files[name] = (relative, images.image_size(path))
                    break
            except (ImagePathError, OSError, ValueError):
                continue
    sizes = {name: size for name, (_, size) in files.items()}
    return SceneChips(chips_.scene_extents(names, (width, height), sizes, split), files)
