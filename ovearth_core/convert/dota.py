"""DOTA ``labelTxt`` annotations and Task1 / Task2 results to an OVEarth benchmark
(``from-dota``).

DOTA format (v1.0, v1.5 and v2.0 alike; captain-whu.github.io/DOTA): one UTF-8 text file per
image, named after it (``P0001.txt`` for ``P0001.png``), with optional header lines
``imagesource:<text>`` and ``gsd:<number or null>`` before the objects, then one object per
line::

    x1 y1 x2 y2 x3 y3 x4 y4 category difficult

four vertices in absolute pixels (clockwise as annotated, starting at the object's "head"),
a category name without spaces and ``difficult`` 0 or 1. Task1 (oriented) results are one
file per category, ``Task1_<category>.txt``, one detection per line::

    image_name score x1 y1 x2 y2 x3 y3 x4 y4

and Task2 (horizontal) results ``Task2_<category>.txt``, one detection per line::

    image_name score xmin ymin xmax ymax

A modality a source does not have is absent, not invented: Task1 results give a submission's
oriented boxes only, Task2 results its (axis-aligned) boxes; a submission with Task1 files only
has no ``bbox`` predictions (no envelope stands in for a box the detector never gave).

Each (image, category present) becomes a positive open-vocabulary query (phrase: the category
with ``-`` and ``_`` as spaces); its annotation holds the objects as oriented boxes, their
envelopes as boxes, no mask. Vertex order is normalised to what the evaluator accepts
(:func:`~ovearth_core.geometry.boundary_order`): simple quadrilaterals, convex or concave, are
kept as given and scored as polygons, as DOTA_devkit's ``polyiou`` scores them; self-crossing
orders are re-sorted around the centroid keeping the first vertex (the devkit would weigh
their two lobes by winding number); zero-area ones are errors. ``difficult``
objects are kept as targets, flagged in the annotation's ``difficult`` list (parallel to
``bbox`` and ``oriented_bbox``), or with ``difficult="ignore"`` made ignore regions (the
COCO-style AP then ignores detections inside them). Absent categories become negative
queries (all, or N per image).
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import geometry
from . import chips
from .common import (
    COORDINATE,
    EXTENT,
    SKIP_DEGENERATE,
    Benchmark,
    Degenerate,
    MissingImages,
    PathLike,
    Problems,
    check_target,
    extent_ok,
    fail,
    far_out,
    image_size,
    images_by_stem,
    phrase_of,
    prediction_row,
    progress,
    read_sizes,
    read_text_lines,
    relative_path,
    shown,
    source_files,
    utf8_ok,
    write_benchmark,
)

_HEADER = re.compile(r"^(imagesource|gsd)\s*:(.*)$", re.IGNORECASE)
_CLASS = re.compile(r"^[^\s]+$")
QUAD_FIELDS = "x1 y1 x2 y2 x3 y3 x4 y4"
BOX_FIELDS = "xmin ymin xmax ymax"
TASKS = {1: "oriented_bbox", 2: "bbox"}  # DOTA's task number: the modality its results give
_NOTES = {
    geometry.QUAD_REORDERED: "self-crossing vertex orders re-sorted",
}


@dataclass
class Quads:
    """Quadrilaterals read from text lines, with where each came from."""

    points: list[list[float]]  # 8 numbers each
    files: list[Path]
    lines: list[int]

    def add(self, values: list[float], file: Path, line: int) -> None:
        self.points.append(values)
        self.files.append(file)
        self.lines.append(line)


@dataclass
class DotaObject:
    image: str
    category: str
    difficult: bool
    index: int  # into the normalised quadrilaterals


@dataclass
class Detection:
    image: str
    category: str
    score: float
    index: int
    chips: tuple[str, ...] = ()  # with --merge-chips: the chips the scene-level box came from


def _number(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_label_lines(lines: Sequence[str], path: Path, quads: Quads, bad: Problems
                      ) -> list[tuple[str, bool, int]]:
    """Objects of one ``labelTxt`` file: ``(category, difficult, quad index)`` each.

    Problems (with the line number) go to ``bad``; the quadrilaterals to ``quads``.
    """
    out = []
    objects_seen = False
    for n, raw in enumerate(lines, start=1):
        line = raw.strip().lstrip("\ufeff")
        if not line:
            continue
        header = _HEADER.match(line)
        if header and not objects_seen:
            key, value = header.group(1).lower(), header.group(2).strip()
            if key == "gsd" and value.lower() not in ("null", "none", "") and (
                    _number(value) is None or _number(value) <= 0):  # type: ignore[operator]
                bad.add(path, "gsd", "a positive number or null", value, line=n)
            continue
        objects_seen = True
        tokens = line.split()
        if len(tokens) != 10:
            bad.add(path, "(object)", f"10 fields: {QUAD_FIELDS} category difficult",
                    f"<{len(tokens)} fields: {line[:60]!r}>", line=n)
            continue
        values = [_number(t) for t in tokens[:8]]
        wrong = [name for name, v in zip(QUAD_FIELDS.split(), values, strict=True) if v is None]
        if wrong:
            bad.add(path, wrong[0], "a finite number", tokens[QUAD_FIELDS.split().index(
                wrong[0])], line=n)
            continue
        far = far_out(values)  # type: ignore[arg-type]
        if far is not None:
            bad.add(path, QUAD_FIELDS.split()[far], COORDINATE, tokens[far], line=n)
            continue
        wide = _envelope_overflow(values)  # type: ignore[arg-type]
        if wide is not None:
            bad.add(path, *wide, line=n)
            continue
        if _number(tokens[8]) is not None:
            bad.add(path, "category", "a category name (not a number)", tokens[8], line=n)
            continue
        if tokens[9] not in ("0", "1"):
            bad.add(path, "difficult", "0 or 1", tokens[9], line=n)
            continue
        out.append((tokens[8], tokens[9] == "1", len(quads.points)))
        quads.add(values, path, n)  # type: ignore[arg-type]
    return out


def _envelope_overflow(values: list[float]) -> tuple[str, str, list[float]] | None:
    """``(field, expected, found)`` when the envelope (the ground truth's box) of a
    quadrilateral ``x1 y1 ... x4 y4`` is wider or taller than the evaluator takes."""
    for axis, side in ((0, "width"), (1, "height")):
        coords = values[axis::2]
        if not extent_ok(min(coords), max(coords)):
            names = " ".join(QUAD_FIELDS.split()[axis::2])
            return (names, "an envelope whose " + EXTENT.format(
                hi=f"largest {'xy'[axis]}", lo=f"smallest {'xy'[axis]}", side=side),
                [min(coords), max(coords)])
    return None


def label_header(lines: Sequence[str]) -> dict[str, Any]:
    """The ``imagesource`` / ``gsd`` header of a ``labelTxt`` file as an annotation's
    ``image_meta`` (``gsd`` a number of metres per pixel; ``gsd:null`` gives none). Values
    :func:`parse_label_lines` refuses are left out here (it reports them)."""
    meta: dict[str, Any] = {}
    for raw in lines:
        line = raw.strip().lstrip("\ufeff")
        if not line:
            continue
        header = _HEADER.match(line)
        if header is None:
            break
        key, value = header.group(1).lower(), header.group(2).strip()
        if key == "imagesource" and value:
            meta[key] = value
        elif key == "gsd" and (_number(value) or 0) > 0:
            meta[key] = _number(value)
    return meta


def _detection(raw: str, n: int, path: Path, fields: str, bad: Problems
               ) -> tuple[str, float, list[float]] | None:
    """One line ``image score <fields>`` of a DOTA result file: ``(image, score, values)``, or
    ``None`` with its problem (field count, a number that is not finite or beyond the
    coordinate bound) named by file, line and field; ``None`` without one for a blank line."""
    tokens = raw.split()
    if not tokens:
        return None
    names = fields.split()
    if len(tokens) != 2 + len(names):
        bad.add(path, "(detection)", f"{2 + len(names)} fields: image_name score {fields}",
                f"<{len(tokens)} fields: {raw.strip()[:60]!r}>", line=n)
        return None
    score = _number(tokens[1])
    if score is None:
        bad.add(path, "score", "a finite number", tokens[1], line=n)
        return None
    values = [_number(t) for t in tokens[2:]]
    wrong = [k for k, v in enumerate(values) if v is None]
    if wrong:
        bad.add(path, names[wrong[0]], "a finite number", tokens[2 + wrong[0]], line=n)
        return None
    far = far_out(values)  # type: ignore[arg-type]
    if far is not None:
        bad.add(path, names[far], COORDINATE, tokens[2 + far], line=n)
        return None
    return tokens[0], score, values  # type: ignore[return-value]


def parse_task1_lines(lines: Sequence[str], path: Path, quads: Quads, bad: Problems
                      ) -> list[tuple[str, float, int]]:
    """Detections of one ``Task1_<category>.txt`` file: ``(image, score, quad index)``."""
    out = []
    for n, raw in enumerate(lines, start=1):
        found = _detection(raw, n, path, QUAD_FIELDS, bad)
        if found is not None:
            out.append((found[0], found[1], len(quads.points)))
            quads.add(found[2], path, n)
    return out


def parse_task2_lines(lines: Sequence[str], path: Path, quads: Quads, bad: Problems,
                      degenerate: Degenerate | None = None) -> list[tuple[str, float, int]]:
    """Detections of one ``Task2_<category>.txt`` file: ``(image, score, quad index)``, each
    box ``xmin ymin xmax ymax`` kept in ``quads`` as its four corners (clockwise on screen,
    from the top left), so that chip mapping and merging treat both tasks alike. A box of
    zero width or height goes to ``degenerate`` (a problem by default; left out and listed
    with ``--skip-degenerate``), as a Task1 line's or a label's does; a reversed one
    (``xmax`` below ``xmin``) is a problem either way."""
    degenerate = degenerate or Degenerate(False)
    out = []
    for n, raw in enumerate(lines, start=1):
        found = _detection(raw, n, path, BOX_FIELDS, bad)
        if found is None:
            continue
        image, score, (x0, y0, x1, y1) = found
        for field_, low, high, token in (("xmax", x0, x1, 4), ("ymax", y0, y1, 5)):
            if high < low:
                bad.add(path, field_, f"a number above {field_.replace('max', 'min')}",
                        raw.split()[token], line=n)
                break
            if high == low:
                degenerate.add(bad, path, field_,
                               f"a number above {field_.replace('max', 'min')}",
                               raw.split()[token], line=n)
                break
        else:
            out.append((image, score, len(quads.points)))
            quads.add([x0, y0, x1, y0, x1, y1, x0, y1], path, n)
    return out


def normalise(quads: Quads, bad: Problems, degenerate: Degenerate | None = None,
              labels: frozenset[int] = frozenset()) -> tuple[np.ndarray, dict[int, int]]:
    """Valid oriented boxes ``(N, 4, 2)`` of all quadrilaterals read, and how many of each
    outcome of :func:`~ovearth_core.geometry.boundary_order`; zero-area ones go to
    ``degenerate`` (problems, or left out: their rows are ``nan``), those whose index is in
    ``labels`` as ground-truth objects, the others as result lines."""
    degenerate = degenerate or Degenerate(False)
    pts = np.array(quads.points, dtype=np.float64).reshape(-1, 4, 2)
    boxes, status = geometry.boundary_order(pts)
    for k in np.flatnonzero(status == geometry.QUAD_DEGENERATE).tolist():
        degenerate.add(bad, quads.files[k], QUAD_FIELDS, "a quadrilateral with positive area",
                       quads.points[k], line=quads.lines[k],
                       obj=f"line {quads.lines[k]}" if k in labels else None)
    counts = {int(s): int(n) for s, n in zip(*np.unique(status, return_counts=True),
                                             strict=True)}
    return boxes, counts


def from_dota(labels: PathLike, images: PathLike | None, out: PathLike,
              results: Sequence[PathLike] = (), negatives: int | str = "all", seed: int = 0,
              classes: Sequence[str] = (), difficult: str = "target", force: bool = False,
              link: bool = True, show_progress: bool = False,
              command: str = "ovearth_core.convert.from_dota(...)",
              merge_chips: bool = False, chip_size: int | None = None,
              chip_gap: int | None = None, sizes: PathLike | None = None,
              skip_degenerate: bool = False) -> dict[str, Any]:
    """Convert a DOTA split (``labelTxt`` folder, images, Task1 / Task2 results) into a
    benchmark.

    Args:
        labels: the folder of ``<image>.txt`` label files (one per image).
        images: the folder holding ``<image>.png`` (any common image suffix); ``None`` or an
            image missing: converted numbers-only, the size from ``sizes``, else the chips'
            names (with ``merge_chips``), else the labels' extent, with a warning.
        out: the benchmark folder to write.
        results: folders of ``Task1_<category>.txt`` files (its oriented boxes) and / or
            ``Task2_<category>.txt`` files (its boxes); each becomes a submission named after
            its folder.
        negatives: negative queries per image: ``"all"`` absent categories or N (seeded).
        seed: seed of the negative sampling.
        classes: extra category names of the vocabulary (beyond those in the files).
        difficult: ``"target"`` (kept as targets and flagged) or ``"ignore"`` (ignore regions).
        force, link, show_progress: as :func:`~ovearth_core.convert.common.write_benchmark`.
        merge_chips: results are on ImgSplit chips (``P0001__1__1024___512``): mapped back
            to their scenes and merged as DOTA_devkit's ``mergebypoly``
            (:mod:`~ovearth_core.convert.chips`).
        chip_size, chip_gap: ImgSplit's ``subsize`` and ``gap`` of those chips, recorded in
            each submission as ``chip_split`` (the chips' extents when their images are
            absent); without ``chip_size`` the side the chip names' pattern gives
            (:func:`.chips.infer_side`), else ImgSplit's default 1024.
        sizes: a sizes file (:func:`~ovearth_core.convert.common.read_sizes`) for images
            that are missing.
        skip_degenerate: leave label lines (and result lines) whose quadrilateral has zero
            area out, each named in a warning and the folder's README, instead of refusing
            them (``--skip-degenerate``; the spec refuses a box of zero area).

    Returns:
        The counts of what was written (also in ``out/README.md``).
    """
    inputs = [p for p in (labels, images, sizes, *results) if p is not None]
    check_target(out, force, inputs)
    if difficult not in ("target", "ignore"):
        raise fail("(options)", "--difficult", "target or ignore", difficult)
    negatives = negatives_option(negatives)
    _check_split(chip_size, chip_gap)
    labels = Path(labels)
    images = None if images is None else Path(images)
    bad = Problems()
    if not labels.is_dir():
        raise fail(labels, "--labels", "a folder of DOTA label files", "<not a folder>")
    files = source_files(labels, bad, "*.txt")
    bad.raise_if_any()
    if not files:
        raise fail(labels, "--labels", "<image>.txt label files", "<none>")
    by_stem = images_by_stem(images, bad)
    given = read_sizes(Path(sizes), bad) if sizes is not None else {}
    bad.raise_if_any()
    quads = Quads([], [], [])
    objects, found, metas = _read_labels(files, by_stem, quads, bad, show_progress)
    scenes = {path.stem for path in files}
    detections: dict[str, dict[int, list[Detection]]] = {}
    degenerate = Degenerate(skip_degenerate)
    reader = _read_chip_results if merge_chips else _read_results
    for folder in results:
        name = submission_name(folder)
        listed_files = task_files(Path(folder), bad)
        detections[name] = {task: reader(paths, task, quads, scenes, bad, show_progress,
                                         degenerate)
                            for task, paths in listed_files.items()}
    missing = MissingImages(images)
    image_sizes = _sizes(files, found, given, objects, quads, detections, chip_size, images,
                         missing, bad)
    arrays, outcome = normalise(quads, bad, degenerate, frozenset(o.index for o in objects)) \
        if quads.points else (np.zeros((0, 4, 2)), {})
    bad.raise_if_any()
    if degenerate.skip:  # the zero-area ones, left out (their rows are nan)
        gone = set(np.flatnonzero(np.isnan(arrays).any(axis=(1, 2))).tolist())
        n_gone = sum(o.index in gone for o in objects)
        objects = [o for o in objects if o.index not in gone]
        detections = {name: {task: [d for d in found if d.index not in gone]
                             for task, found in by_task.items()}
                      for name, by_task in detections.items()}
    split = _split(detections, image_sizes, chip_size, chip_gap) if merge_chips else None
    merged = _merge_chips(detections, arrays) if merge_chips else {}
    boxes = Boxes(arrays.tolist(), _envelopes(arrays))
    vocab = sorted({o.category for o in objects} | set(classes)
                   | {d.category for found in _all(detections) for d in found})
    # One query per (image, class): the queries of an image are not independent.
    bench = Benchmark(command, inputs=inputs, source={"format": "DOTA", "resample_unit": "image"},
                      warnings=missing.warning(len(files)) + degenerate.warnings())
    queries = _add_queries(bench, objects, image_sizes, metas, by_stem, vocab, boxes, negatives,
                           seed, difficult)
    dropped = {}
    for name, found in detections.items():
        bench.submissions[name], dropped[name] = _submission(found, queries, boxes)
        if split is not None:
            bench.submission_extra[name] = {"chip_split": split.as_json()}
    bench.notes += _notes(files, objects, vocab, outcome, negatives, seed, difficult, dropped)
    if degenerate.objects:
        bench.notes[0] += (f"; {n_gone:,} more of zero area left out ({SKIP_DEGENERATE})")
    bench.notes += [f"predictions/{name}.json: {n:,} Task{task} detections on ImgSplit chips "
                    f"mapped to their scenes and merged per scene and class by polygon NMS at "
                    f"{chips.NMS_IOU} (DOTA_devkit mergebypoly): {kept:,} kept, each with its "
                    "chips" for (name, task), (n, kept) in merged.items() if n]
    write_benchmark(bench, out, force, link, show_progress)
    return {**bench.counts(), "vertex_order": {_label(k): v for k, v in outcome.items()},
            "dropped_results": dropped}


def _read_labels(files: list[Path], by_stem: dict[str, Path], quads: Quads, bad: Problems,
                 show: bool) -> tuple[list[DotaObject], dict[str, tuple[int, int]],
                                      dict[str, dict[str, Any]]]:
    """The objects of every label file (their quadrilaterals appended to ``quads``), the
    size of each image found and each label file's header (``imagesource``, ``gsd``);
    problems to ``bad``."""
    objects: list[DotaObject] = []
    sizes: dict[str, tuple[int, int]] = {}
    metas: dict[str, dict[str, Any]] = {}
    for path in progress(files, "reading labels", show):
        image = by_stem.get(path.stem)
        if image is not None:
            try:
                sizes[path.stem] = image_size(image)
            except OSError as err:
                bad.add(image, "(image)", "a readable image", f"<{err.strerror or err}>")
        lines = read_text_lines(path, bad, "DOTA label file")
        metas[path.stem] = label_header(lines or [])
        for cat, hard, k in parse_label_lines(lines or [], path, quads, bad):
            objects.append(DotaObject(path.stem, cat, hard, k))
    return objects, sizes, metas


def _sizes(files: list[Path], found: dict[str, tuple[int, int]],
           given: dict[str, tuple[int, int]], objects: list[DotaObject], quads: Quads,
           detections: dict[str, dict[int, list[Detection]]], chip_size: int | None,
           images: Path | None, missing: MissingImages, bad: Problems
           ) -> dict[str, tuple[int, int]]:
    """Every scene's size: its image's, else the sizes file's, else its chips' (the border
    chip's offset plus the chip side, over the rate), else its labels' extent (a lower
    bound); the scenes sized without an image go to ``missing``, a scene nothing sizes to
    ``bad``."""
    out = dict(found)
    extent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for obj in objects:
        pts = quads.points[obj.index]
        box = extent[obj.image]
        box[0], box[1] = max(box[0], *pts[0::2]), max(box[1], *pts[1::2])
    side = chip_size or chips.infer_side(_chip_names(detections), found) or chips.DEFAULT_SUBSIZE
    from_chips: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for scene, names in _chip_names(detections).items():
        for name in names:
            parsed = chips.parse_chip_name(name)
            if parsed is not None:
                _, rate, x, y = parsed
                box = from_chips[scene]
                box[0], box[1] = max(box[0], (x + side) / rate), max(box[1], (y + side) / rate)
    for path in files:
        stem = path.stem
        if stem in out:
            continue
        if stem in given:
            out[stem] = given[stem]
            missing.add(stem, "--sizes")
        elif stem in from_chips or stem in extent:
            w, h = (max(a, b) for a, b in zip(from_chips.get(stem, (0, 0)),
                                              extent.get(stem, (0, 0)), strict=True))
            out[stem] = (max(1, math.ceil(w)), max(1, math.ceil(h)))
            missing.add(stem, f"the chip names ({side}-px chips)" if stem in from_chips
                        else "the labels' extent (a lower bound)")
        else:
            where = f"in {images}" if images is not None else "(no --images given)"
            bad.add(path, "(image)", f"an image {stem}.<png|jpg|tif|...> {where}, or its size "
                    "in --sizes (the label file has no object to size it by)", "<missing>")
    return out


def _all(detections: dict[str, dict[int, list[Detection]]]) -> Iterator[list[Detection]]:
    """Every submission's detections, task by task."""
    for by_task in detections.values():
        yield from by_task.values()


def _chip_names(detections: dict[str, dict[int, list[Detection]]]) -> dict[str, list[str]]:
    """The distinct chip names of every submission's detections (both tasks), per scene."""
    names: dict[str, set[str]] = defaultdict(set)
    for found in _all(detections):
        for d in found:
            if getattr(d, "chip", None):
                names[d.image].add(d.chip)  # type: ignore[attr-defined]
    return {scene: sorted(chip_names) for scene, chip_names in names.items()}


def _check_split(chip_size: int | None, chip_gap: int | None) -> None:
    if chip_size is not None and not (type(chip_size) is int
                                      and 0 < chip_size <= chips.MAX_OFFSET):
        raise fail("(options)", "--chip-size", f"an integer from 1 to {chips.MAX_OFFSET:,} "
                   "(ImgSplit's subsize)", chip_size)
    if chip_gap is not None and not (type(chip_gap) is int and 0 <= chip_gap
                                     and (chip_size is None or chip_gap < chip_size)):
        raise fail("(options)", "--chip-gap", "an integer from 0 to under --chip-size "
                   "(ImgSplit's gap)", chip_gap)


def _split(detections: dict[str, dict[int, list[Detection]]], sizes: dict[str, tuple[int, int]],
           chip_size: int | None, chip_gap: int | None) -> chips.SplitSettings:
    """The split settings to record: the flags, else the side the chip names give (every
    submission's), else ImgSplit's default."""
    if chip_size is not None:
        return chips.SplitSettings(chip_size, chip_gap, "flags")
    side = chips.infer_side(_chip_names(detections), sizes)
    if side is None or (chip_gap is not None and chip_gap >= side):
        return chips.SplitSettings(chips.DEFAULT_SUBSIZE, chip_gap, chips.DEFAULT_SOURCE)
    return chips.SplitSettings(side, chip_gap, "chip names")


def _merge_chips(detections: dict[str, dict[int, list[Detection]]], arrays: np.ndarray
                 ) -> dict[tuple[str, int], tuple[int, int]]:
    """Each submission's chip detections merged per task, scene and class in place
    (:func:`.chips.merge`; a Task2 box as its rectangle); per (submission, task), how many
    were read and how many kept."""
    merged = {}
    for name, by_task in detections.items():
        for task, found in by_task.items():
            by_task[task] = [Detection(d.image, d.category, d.score, d.index, kept_chips)
                             for d, kept_chips in chips.merge(found, arrays)]
            merged[(name, task)] = (len(found), len(by_task[task]))
    return merged


def _add_queries(bench: Benchmark, objects: list[DotaObject], sizes: dict[str, tuple[int, int]],
                 metas: dict[str, dict[str, Any]], by_stem: dict[str, Path], vocab: list[str],
                 boxes: Boxes, negatives: int | str, seed: int, difficult: str
                 ) -> dict[tuple[str, str], str]:
    """One annotation and query per (image, class): positive where the class is present,
    negative for the absent classes (all, or ``negatives`` of them, seeded per image); the
    query id of each (image, class)."""
    present: dict[tuple[str, str], list[DotaObject]] = defaultdict(list)
    for obj in objects:
        present[(obj.image, obj.category)].append(obj)
    queries: dict[tuple[str, str], str] = {}
    for stem in sorted(sizes):
        image = by_stem.get(stem)
        image_path = f"images/{image.name if image is not None else stem + '.png'}"
        if image is not None:
            bench.images[image_path] = image
        here = {c for c in vocab if (stem, c) in present}
        absent = [c for c in vocab if c not in here]
        if negatives != "all":
            rng = random.Random(f"{seed}:{stem}")
            absent = sorted(rng.sample(absent, min(int(negatives), len(absent))))
        for cat in sorted(here | set(absent)):
            group = present.get((stem, cat), [])
            ann_id, qid = f"{stem}_{cat}", f"ov_{stem}_{cat}"
            _add_annotation(bench, ann_id, image_path, sizes[stem], cat, group, boxes,
                            difficult, metas.get(stem))
            bench.add_query("open_vocabulary", qid, ann_id, phrase_of(cat),
                            negative=not group)
            queries[(stem, cat)] = qid
    return queries


def negatives_option(value: int | str) -> int | str:
    """``--negatives``: ``"all"`` or a count of negative queries per image (a string of at
    most nine ASCII digits is read as one)."""
    if value == "all":
        return value
    if isinstance(value, str) and len(value) <= 9 and value.isascii() and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise fail("(options)", "--negatives", "all or a non-negative integer", value)
    return value


def submission_name(folder: PathLike) -> str:
    """The submission a results folder becomes: the folder's name (one that can name a
    file)."""
    name = Path(folder).resolve().name
    if relative_path(f"{name}.json") is None or not utf8_ok(name):
        raise fail("(options)", "--results", "a folder whose name can name a submission "
                   "(valid UTF-8)", f"<{shown(name)}>")
    return name


def task_files(folder: Path, bad: Problems) -> dict[int, list[Path]]:
    """The ``Task1_<category>.txt`` and ``Task2_<category>.txt`` files of a results folder,
    per task, each listing through the gate (:func:`~.common.source_files`); problems to
    ``bad``: no folder, no result file of either task."""
    if not folder.is_dir():
        bad.add(folder, "--results", "a folder of Task1_<category>.txt and / or "
                "Task2_<category>.txt files", "<not a folder>")
        return {}
    before = len(bad.items)
    out = {task: source_files(folder, bad, f"Task{task}_*.txt") for task in TASKS}
    if not any(out.values()) and len(bad.items) == before:
        bad.add(folder, "--results", "Task1_<category>.txt and / or Task2_<category>.txt "
                "files", "<none>")
    return out


def task_results(files: list[Path], task: int, quads: Quads, bad: Problems, show: bool,
                 degenerate: Degenerate | None = None
                 ) -> Iterator[tuple[Path, str, str, float, int]]:
    """``(file, category, image_name, score, index into quads)`` of every line of the
    ``Task<task>_<category>.txt`` files ``files`` (problems to ``bad``: a file without a
    category, a bad line; a Task2 box of zero width or height to ``degenerate``; a Task1
    quadrilateral's area is judged with the labels', by :func:`normalise`)."""
    def parse(lines: Sequence[str], path: Path, quads: Quads, bad: Problems
              ) -> list[tuple[str, float, int]]:
        if task == 1:
            return parse_task1_lines(lines, path, quads, bad)
        return parse_task2_lines(lines, path, quads, bad, degenerate)

    prefix = f"Task{task}_"
    for path in progress(files, f"reading {_folder_of(files)} (Task{task})", show):
        cat = path.stem[len(prefix):]
        if not cat:
            bad.add(path, "(file name)", f"{prefix}<category>.txt", path.name)
            continue
        lines = read_text_lines(path, bad, f"DOTA Task{task} result file")
        for image, score, k in parse(lines or [], path, quads, bad):
            yield path, cat, image, score, k


def _folder_of(files: list[Path]) -> str:
    """The name of the folder ``files`` are in (for progress), ``""`` for none."""
    return files[0].parent.name if files else ""


def _read_results(files: list[Path], task: int, quads: Quads, scenes: Collection[str],
                  bad: Problems, show: bool, degenerate: Degenerate) -> list[Detection]:
    out = []
    for path, cat, image, score, k in task_results(files, task, quads, bad, show, degenerate):
        if image not in scenes:
            bad.add(path, "image_name", "the name of an image with a label file",
                    image, line=quads.lines[k])
            continue
        out.append(Detection(image, cat, score, k))
    return out


def _read_chip_results(files: list[Path], task: int, quads: Quads, scenes: Collection[str],
                       bad: Problems, show: bool, degenerate: Degenerate
                       ) -> list[chips.ChipDetection]:
    """The ``Task<task>_<category>.txt`` files ``files``, on ImgSplit chips (:mod:`.chips`):
    each quadrilateral (a Task2 box: its corners) mapped to its scene
    (``(v + offset) / rate``) in ``quads`` in place.

    Problems go to ``bad`` (file, line, ``image_name``): a name that is no chip name, or a
    chip of a scene with no label file.
    """
    out = []
    names: dict[str, tuple[str, float, int, int] | str] = {}  # a chip's lines share its name
    fields = QUAD_FIELDS.split() if task == 1 else [
        BOX_FIELDS.split()[i] for i in (0, 1, 2, 1, 2, 3, 0, 3)]  # the corners' fields
    for path, cat, name, score, k in task_results(files, task, quads, bad, show, degenerate):
        line = quads.lines[k]
        if name not in names:
            try:
                names[name] = chips.read_chip_name(name)
            except chips.ChipNameError as err:
                names[name] = str(err)
        parsed = names[name]
        if isinstance(parsed, str):
            bad.add(path, "image_name", parsed, name, line=line)
            continue
        scene, rate, x, y = parsed
        if scene not in scenes:
            bad.add(path, "image_name", f"a chip of a scene with a label file "
                    f"({scene}.txt)", name, line=line)
            continue
        mapped = [(v + (x if i % 2 == 0 else y)) / rate for i, v in enumerate(quads.points[k])]
        far = far_out(mapped)
        if far is not None:
            bad.add(path, fields[far], f"{COORDINATE}, once mapped to the scene "
                    f"((value + offset) / rate = {mapped[far]:g})",
                    quads.points[k][far], line=line)
            continue
        quads.points[k] = mapped
        out.append(chips.ChipDetection(scene, cat, score, k, name))
    return out


@dataclass(frozen=True)
class Boxes:
    """The normalised oriented boxes and their COCO ``[x, y, w, h]`` envelopes, as lists."""

    obb: list[list[list[float]]]
    xywh: list[list[float]]


def _envelopes(quads: np.ndarray) -> list[list[float]]:
    lo, hi = quads.min(axis=1), quads.max(axis=1)
    return np.concatenate([lo, hi - lo], axis=1).tolist()


def _add_annotation(bench: Benchmark, ann_id: str, image_path: str, size: tuple[int, int],
                    cat: str, group: list[DotaObject], boxes: Boxes,
                    difficult: str, image_meta: dict[str, Any] | None = None) -> None:
    ignore = [o for o in group if o.difficult and difficult == "ignore"]
    targets = [o for o in group if not (o.difficult and difficult == "ignore")]
    extra: dict[str, Any] = {"image_meta": image_meta} if image_meta else {}
    if group and difficult == "target":
        extra["difficult"] = [int(o.difficult) for o in targets]
    if ignore:
        extra["ignore_bbox"] = [boxes.xywh[o.index] for o in ignore]
        extra["ignore_oriented_bbox"] = [boxes.obb[o.index] for o in ignore]
    bench.add_annotation(ann_id, image_path, size[0], size[1], cat, None,
                         [boxes.xywh[o.index] for o in targets],
                         [boxes.obb[o.index] for o in targets], **extra)


def _submission(found: dict[int, list[Detection]], queries: dict[tuple[str, str], str],
                boxes: Boxes) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """The rows of one submission: oriented boxes from its Task1 detections only, boxes
    from its Task2 detections only (a task it has no file of gives none); how many
    detections were on no query."""
    per_query: dict[tuple[str, str, int], list[Detection]] = defaultdict(list)
    dropped = 0
    for task, dets in found.items():
        for d in dets:
            if (d.image, d.category) in queries:
                per_query[(d.image, d.category, task)].append(d)
            else:
                dropped += 1
    rows = []
    for key, qid in queries.items():
        hbb, obb = [], []
        for d in per_query.get((*key, 1), []):
            chip = {"chips": list(d.chips)} if d.chips else {}
            obb.append({"polygon": boxes.obb[d.index], "score": d.score, **chip})
        for d in per_query.get((*key, 2), []):
            corners = boxes.obb[d.index]  # the box's own corners: its numbers, exactly
            xs, ys = [p[0] for p in corners], [p[1] for p in corners]
            chip = {"chips": list(d.chips)} if d.chips else {}
            hbb.append({"bbox": [min(xs), min(ys), max(xs), max(ys)], "score": d.score,
                        **chip})
        rows.append(prediction_row(qid, "phrase", phrase_of(key[1]), None, hbb, obb))
    return {"open_vocabulary": rows}, dropped


def _label(outcome: int) -> str:
    return {geometry.QUAD_KEPT: "kept", geometry.QUAD_REORDERED: "reordered"}.get(
        outcome, "degenerate")


def _notes(files: list[Path], objects: list[DotaObject], vocab: list[str],
           outcome: dict[int, int], negatives: int | str, seed: int, difficult: str,
           dropped: dict[str, int]) -> list[str]:
    hard = sum(o.difficult for o in objects)
    notes = [f"source: {len(files)} DOTA label files, {len(objects)} objects ({hard} difficult), "
             f"{len(vocab)} categories: {', '.join(vocab)}",
             "each (image, category present) is a positive query; boxes are the envelopes of "
             "the oriented boxes; no masks",
             ("difficult objects are targets like any other, flagged in the annotation's "
              "difficult list" if difficult == "target" else
              "difficult objects are ignore regions (ignore_bbox / ignore_oriented_bbox)"),
             ("negative queries: every category absent from the image" if negatives == "all"
              else f"negative queries: {negatives} absent categories per image, seed {seed}")]
    for status, text in _NOTES.items():
        if outcome.get(status):
            notes.append(f"{outcome[status]} quadrilaterals: {text}")
    for name, n in dropped.items():
        notes.append(f"predictions/{name}.json: {n} detections on (image, category) pairs "
                     "that are no query were left out")
    return notes
