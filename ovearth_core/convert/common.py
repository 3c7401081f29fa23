"""What the converters share: problems, source reading, the benchmark in memory, atomic writing.

A converter reads its sources and checks every value as strictly as the evaluator's loader
(problems are collected and raised together as one
:class:`~ovearth_core.errors.OVEarthInputError`, each naming the file, the line or id, the
field, what was expected and what was found), builds a :class:`Benchmark` and hands it to
:func:`write_benchmark`. That checks the result once more with the evaluator's own loader and
writes the folder laid out as every benchmark folder (see ``ovearth_core.synth.writer``)::

    BENCH/ground_truth.json       annotations + tasks (spec "Data Formats")
    BENCH/images/...              the source images (hard links, or copies without ``link``)
    BENCH/predictions/<name>.json one submission per converted prediction source
    BENCH/README.md               how the folder was made, counts, conventions

The folder is built in a temporary sibling and renamed into place
(:func:`ovearth_core.files.folder_writer`), so it is never seen half-written, and every file
is written inside it: submission names and image paths that come from the sources are
checked first (a submission name is one file name; an image path is relative, without
``..``, and never ``ground_truth.json``, ``README.md`` or under ``predictions/``). An
existing non-empty folder is replaced only with ``force``, and never one that holds (or is
an ancestor of) one of the command's inputs; ``--out`` itself may not be a symbolic link.
"""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

import numpy as np
import orjson
from PIL import Image

from .. import boxparse, files, io, masks
from ..errors import OVEarthInputError, Problem, describe
from ..options import EXTENSION_COMMANDS
from ..paths import OutsideDataRootError, folder_inputs
from ..types import MODALITIES, TASK_KEYS

PathLike = str | os.PathLike[str]
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp")
# A source coordinate is refused beyond the evaluator's bound (boxparse.MAX_COORDINATE), so
# it never reaches GEOS or pycocotools; the problem names the file, the line or id, the field.
COORDINATE = "a finite number within ±1e100 (absolute pixels; larger ones overflow IoU arithmetic)"


# A box's width (height) is checked as the evaluator's loader checks the COCO box written
# (``boxparse.parse_gt_box``): corners each within ±1e100 can still be 2e100 apart.
EXTENT = ("{hi} - {lo} within ±1e100 (the box's {side}: a larger one overflows IoU "
          "arithmetic)")


def extent_ok(lo: float, hi: float) -> bool:
    """Whether a box from ``lo`` to ``hi`` (``hi >= lo``) on one axis becomes a width the
    evaluator takes: ``parse_gt_box``'s bounds on ``[lo, hi - lo]``, the same arithmetic."""
    size = hi - lo  # a zero one is the caller's (a box of no area)
    return abs(size) <= boxparse.MAX_COORDINATE and lo + size <= boxparse.MAX_COORDINATE


UTF8_NAME = ("a file name that is valid UTF-8 (it becomes ids, image paths and JSON text; "
             "rename the file)")


def shown(path: PathLike) -> str:
    """A path as text that can always be printed and written: bytes of its name that are
    not UTF-8 as ``\\xNN`` (``café`` in Latin-1 is ``caf\\xe9``)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def utf8_ok(name: str) -> bool:
    """Whether ``name`` (from the file system: undecodable bytes as surrogates) is valid
    UTF-8, so it can become an id, an image path or JSON text."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def listed(paths: Iterable[Path], bad: Problems) -> list[Path]:
    """``paths`` (a folder's listing) sorted, those whose names are not valid UTF-8 left
    out, each a problem naming it (``--out`` is then never written)."""
    out = []
    for path in sorted(paths):
        if utf8_ok(path.name):
            out.append(path)
        else:
            bad.add(shown(path), "(file name)", UTF8_NAME, f"<{shown(path.name)}>")
    return out


def far_out(values: Iterable[float]) -> int | None:
    """The index of the first value beyond ±``boxparse.MAX_COORDINATE`` (``None``: none)."""
    return next((i for i, v in enumerate(values) if not abs(v) <= boxparse.MAX_COORDINATE),
                None)


class Problems:
    """Problems of several source files, raised together."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, file: PathLike, field_: str, expected: str, found: object, *,
            line: int | None = None, query_id: str | None = None) -> None:
        self.items.append(Problem(str(file), field_, expected, describe(found), query_id, line))

    def __len__(self) -> int:
        return len(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise OVEarthInputError(self.items)


# The converters' opt-in to leave boxes of zero area out rather than refuse them (the spec
# refuses them; published data sets hold a few: DIOR-R's 23,463 files four, DIOR's six).
SKIP_DEGENERATE = "--skip-degenerate"


class Degenerate:
    """Source boxes of zero area: problems by default (the spec's rule; the problem says
    :data:`SKIP_DEGENERATE` leaves them out), with ``skip`` left out and listed, each by
    file, line, field and why (a warning on stderr and a line of the folder's README)."""

    def __init__(self, skip: bool) -> None:
        self.skip = skip
        self.objects: dict[tuple[str, str], str] = {}  # (file, object) -> why, first reason
        self.lines: list[str] = []  # result lines left out

    def add(self, bad: Problems, file: PathLike, field_: str, expected: str, found: object,
            *, line: int | None, obj: str | None = None) -> None:
        """One box of zero area: a problem, or (``skip``) left out. ``obj`` names the
        ground-truth object (one entry per object however many of its boxes are
        degenerate); without it the box is a result line."""
        if not self.skip:
            bad.add(file, field_, f"{expected} (a box of zero area; {SKIP_DEGENERATE} leaves "
                    "it out)", found, line=line)
            return
        text = f"{shown(file)} line {line} {field_.strip()}: zero area ({expected}; found " \
            f"{describe(found)})"
        if obj is None:
            self.lines.append(text)
        else:
            self.objects.setdefault((str(file), obj), text)

    def warnings(self) -> list[str]:
        """What was left out, each named (none: no warning)."""
        out = []
        for items, what, where in ((list(self.objects.values()), "object", "ground truth"),
                                   (self.lines, "result line", "predictions")):
            if items:
                out.append(f"{len(items):,} {what}{'s' if len(items) != 1 else ''} of zero "
                           f"area left out of the {where} ({SKIP_DEGENERATE}): "
                           + "; ".join(items))
        return out


def fail(file: PathLike, field_: str, expected: str, found: object) -> OVEarthInputError:
    """One problem as an error, for the caller to raise."""
    bad = Problems()
    bad.add(file, field_, expected, found)
    return OVEarthInputError(bad.items)


def read_source(path: PathLike, role: str) -> bytes:
    """The bytes of a source file, read with :func:`~ovearth_core.files.read_bounded` (a
    regular file within the input cap: a named pipe or a device is refused, never waited
    on, a larger file is refused unread).

    Raises:
        OVEarthInputError: naming the file, with what was expected and what was found.
    """
    try:
        return files.read_bounded(path)
    except files.InputRefused as err:
        raise fail(path, "(file)", f"a {role}: {err.expected}", f"<{err.found}>") from None
    except (OSError, ValueError) as err:  # ValueError: a path with a NUL byte
        found = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise fail(path, "(file)", f"a readable {role}",
                   f"<{found or type(err).__name__}>") from None


def load_json(path: PathLike, role: str, kind: type) -> Any:
    """Read a UTF-8 JSON document whose top level is ``kind`` (``dict`` or ``list``)."""
    data = read_source(path, f"{role} JSON file")
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise fail(path, "(document)", "valid UTF-8 JSON (no NaN/Infinity, nesting under 1024)",
                   f"<{err}>") from None
    if not isinstance(doc, kind):
        want = "an object" if kind is dict else "a list"
        raise fail(path, "(document)", f"{want} at the top level ({role})",
                   f"<a JSON {type(doc).__name__}>")
    return doc


def source_files(folder: Path, bad: Problems, pattern: str = "*",
                 suffixes: Sequence[str] | None = None) -> list[Path]:
    """The files directly in the source folder ``folder`` whose names match ``pattern``
    (and, given ``suffixes``, whose suffix in any case is one of them), sorted, through the
    gate (:func:`~ovearth_core.paths.folder_inputs`, the folder its own root): a symbolic
    link out of it, a named pipe, a device or a file over the input cap is a problem naming
    it, and is not read; subfolders are skipped."""
    # realpath, not Path.resolve, for the root: resolve raises RuntimeError on a link loop,
    # which the gate reports as the OutsideDataRootError caught here.
    try:
        accepted, refused = folder_inputs(folder, pattern, (Path(os.path.realpath(folder)),))
    except OutsideDataRootError as err:  # a folder that cannot be resolved (a link loop)
        bad.add(folder, "(folder)", "a readable folder", f"<{err.resolved or 'unresolvable'}>")
        return []

    def wanted(path: Path) -> bool:
        return suffixes is None or path.suffix.lower() in suffixes

    for r in refused:
        if wanted(r.path) and not r.path.is_dir():
            bad.add(shown(r.path), "(file)", r.expected, f"<{r.found}>")
    # A name that is not valid UTF-8 is refused too: names become ids, paths and JSON text.
    return listed((path for path in accepted if wanted(path)), bad)


def read_text_lines(path: Path, bad: Problems, role: str) -> list[str] | None:
    """Lines of a UTF-8 (optionally BOM-prefixed) text file, or ``None`` with a problem."""
    try:
        text = read_source(path, role).decode("utf-8-sig")
    except OVEarthInputError as err:
        bad.items.extend(err.problems)
        return None
    except UnicodeDecodeError as err:
        bad.add(path, "(file)", f"a UTF-8 text {role}", f"<undecodable byte at {err.start}>")
        return None
    return text.splitlines()


# A side of an image, in pixels, as a sizes file may give it (nine digits).
MAX_SIDE = 999_999_999
_SIDE = re.compile(r"[0-9]{1,9}")


def parse_side(text: str | None) -> int | None:
    """A side of an image in pixels from text: a whole number from 1 to ``MAX_SIDE`` (ASCII
    digits, at most nine), else ``None``."""
    value = int(text) if text is not None and _SIDE.fullmatch(text) else 0
    return value if 0 < value <= MAX_SIDE else None


def read_sizes(path: Path, bad: Problems) -> dict[str, tuple[int, int]]:
    """``(width, height)`` by image stem from a sizes file: ``<image> <width> <height>`` per
    line (spaces or commas; the image by stem or file name; ``#`` comments and blank lines
    skipped). Problems, with the line, go to ``bad``."""
    out: dict[str, tuple[int, int]] = {}
    for n, raw in enumerate(read_text_lines(path, bad, "sizes file") or [], start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        tokens = line.replace(",", " ").split()
        if len(tokens) != 3:
            bad.add(path, "(line)", "<image> <width> <height>", line[:60], line=n)
            continue
        name, *dims = tokens
        stem = (PurePosixPath(name).stem if PurePosixPath(name).suffix.lower() in IMAGE_SUFFIXES
                else name)
        if stem in out:
            bad.add(path, "image", "each image once", name, line=n)
            continue
        values = [parse_side(t) for t in dims]
        wrong = [(f, t) for f, t, v in zip(("width", "height"), dims, values, strict=True)
                 if v is None]
        if wrong:
            bad.add(path, wrong[0][0], f"a whole number of pixels from 1 to {MAX_SIDE:,}",
                    wrong[0][1][:20], line=n)
            continue
        out[stem] = (values[0], values[1])  # type: ignore[assignment]
    return out


class MissingImages:
    """Images a converter did not find, converted numbers-only (no pixels in the benchmark),
    named together in one warning with where each one's size came from."""

    def __init__(self, folder: PathLike | None) -> None:
        self.folder = folder
        self.sources: dict[str, str] = {}

    def add(self, name: str, source: str) -> None:
        self.sources[name] = source

    def warning(self, total: int) -> list[str]:
        """The warning (one, or none when every image was found)."""
        if not self.sources:
            return []
        names = sorted(self.sources)
        shown = ", ".join(names[:10]) + (f" and {len(names) - 10:,} more"
                                         if len(names) > 10 else "")
        where = (f"are not in {self.folder}" if self.folder is not None
                 else "are not given (no --images folder)")
        counts: dict[str, int] = {}
        for source in self.sources.values():
            counts[source] = counts.get(source, 0) + 1
        how = "; ".join(f"{n:,} from {source}" for source, n in sorted(counts.items()))
        return [f"{len(names):,} of {total:,} images {where}: {shown}. Converted "
                f"numbers-only (the benchmark holds no pixels for them; the app shows none); "
                f"sizes: {how}"]


RESERVED = ("ground_truth.json", "README.md", "predictions")
IMAGE_PATH = ("a relative image path (no root, no .., no control characters), not "
              "ground_truth.json, README.md or under predictions/ (the converted files)")


def image_path_ok(name: object) -> bool:
    """Whether ``name`` can be an image's path inside a benchmark folder: a safe relative
    path (:func:`relative_path`) of file names whose first part is none of the folder's
    own files (compared without case, as a case-insensitive file system would)."""
    rel = relative_path(name)
    if rel is None:
        return False
    parts = PurePosixPath(rel).parts
    return (all(files.is_component(p) for p in parts)
            and parts[0].casefold() not in {r.casefold() for r in RESERVED})


def relative_path(name: object) -> str | None:
    """``name`` as a safe relative POSIX path (no root, no ``..``), or ``None``."""
    if not isinstance(name, str) or not name or "\x00" in name or "\\" in name:
        return None
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or name.startswith("~"):
        return None
    return path.as_posix()


def image_size(path: Path) -> tuple[int, int]:
    """``(width, height)`` from an image file's header (no pixels decoded).

    A TIFF is read by rasterio (GDAL): satellite scenes come as 16-bit, multi-band, tiled or
    BigTIFF files, which Pillow cannot open. Other formats by Pillow, whose
    decompression-bomb limit is lifted while the header is read (it is process-wide: do not
    read images in other threads meanwhile).

    Raises:
        OSError: when the file is missing or not an image Pillow (or, for a TIFF, GDAL) can read.
    """
    from ..files import FileRefused
    from ..georef import NO_BYTE_CAP, is_tiff, open_raster  # rasterio: TIFF scenes

    try:
        if is_tiff(path):
            with open_raster(path) as dataset:
                return int(dataset.width), int(dataset.height)
    except FileRefused as err:  # a folder, a pipe, a device: as Pillow's OSError was
        raise OSError(str(err)) from None
    with warnings.catch_warnings():
        # Satellite scenes beyond Pillow's decompression-bomb limit are fine here: only
        # the header is read.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        limit, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
        try:
            with files.open_input(path, NO_BYTE_CAP) as handle, Image.open(handle) as img:
                return int(img.size[0]), int(img.size[1])
        except FileRefused as err:
            raise OSError(str(err)) from None
        except Image.UnidentifiedImageError as err:
            raise OSError(f"not an image Pillow can read ({err})") from None
        finally:
            Image.MAX_IMAGE_PIXELS = limit


def images_by_stem(folder: Path | None, bad: Problems) -> dict[str, Path]:
    """Image files directly in ``folder`` by file stem (a stem with two images is a problem;
    no folder, ``None``: no images, numbers-only)."""
    if folder is None:
        return {}
    if not folder.is_dir():
        bad.add(folder, "(folder)", "a folder of images", "<not a folder>")
        return {}
    found: dict[str, Path] = {}
    for path in source_files(folder, bad, suffixes=IMAGE_SUFFIXES):
        if path.stem in found:
            bad.add(path, "(file)", "one image per file stem",
                    f"<{found[path.stem].name} and {path.name}>")
            continue
        found[path.stem] = path
    return found


def phrase_of(name: str) -> str:
    """The open-vocabulary phrase of a class name: ``storage-tank`` -> ``storage tank``."""
    return " ".join(name.replace("_", " ").replace("-", " ").split())


@dataclass
class Benchmark:
    """A benchmark folder in memory: its ground truth, submissions, images and notes."""

    command: str
    annotations: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {key: [] for key in TASK_KEYS.values()})
    submissions: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    # Top-level members of a submission's file beside "tasks" (``chip_split``).
    submission_extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    images: dict[str, Path] = field(default_factory=dict)  # image_path -> source file
    notes: list[str] = field(default_factory=list)
    inputs: list[PathLike] = field(default_factory=list)  # never removed by force
    # Said on stderr by the command and kept in the folder's README (images missing, ...).
    warnings: list[str] = field(default_factory=list)
    # What the sources held that was not converted, each with why (said by the command and
    # kept in the README): files of another suffix, images no annotation names.
    skipped: list[str] = field(default_factory=list)
    # Top-level "source" of the ground truth: what it came from ("format") and the unit a
    # bootstrap should resample ("resample_unit", read by analysis.compare.default_unit).
    source: dict[str, str] = field(default_factory=dict)

    def add_annotation(self, ann_id: str, image_path: str, width: int, height: int,
                       category: str, segmentation: dict[str, Any] | None = None,
                       bbox: Iterable[Any] = (), oriented_bbox: Iterable[Any] = (),
                       **extra: Any) -> None:
        self.annotations.append({
            "id": ann_id, "image_path": image_path, "width": width, "height": height,
            "category_name": category, "segmentation": segmentation, "bbox": list(bbox),
            "oriented_bbox": list(oriented_bbox), **extra})

    def add_query(self, task: str, query_id: str, ann_id: str, text: str,
                  negative: bool = False) -> None:
        if task == "open_vocabulary":
            row = {"query_id": query_id, "ann_id": ann_id,
                   "type": "negative" if negative else "positive", "phrase": text}
        else:
            row = {"query_id": query_id, "ann_id": ann_id, "query": text}
        self.tasks[task].append(row)

    def ground_truth(self) -> dict[str, Any]:
        doc = {"source": self.source} if self.source else {}
        return {**doc, "annotations": self.annotations,
                "tasks": {k: v for k, v in self.tasks.items() if v}}

    def counts(self) -> dict[str, Any]:
        ov = self.tasks["open_vocabulary"]
        neg = sum(r["type"] == "negative" for r in ov)
        converted = len({a["image_path"] for a in self.annotations})
        return {"images": converted, "image_files": len(self.images),
                "numbers_only": converted - len(self.images),
                "annotations": len(self.annotations),
                "open_vocabulary": {"positive": len(ov) - neg, "negative": neg},
                "referring": len(self.tasks["referring"]),
                "reasoning": len(self.tasks["reasoning"]),
                "boxes": sum(len(a["bbox"]) for a in self.annotations),
                "submissions": sorted(self.submissions), "warnings": list(self.warnings),
                "skipped": list(self.skipped)}


def prediction_row(query_id: str, text_key: str, text: str,
                   mask: dict[str, Any] | None = None, boxes: list[Any] | None = None,
                   obbs: list[Any] | None = None) -> dict[str, Any]:
    """A prediction row with every modality present (``null`` / ``[]`` when empty)."""
    return {"query_id": query_id, text_key: text, "segmentation": mask,
            "bbox": boxes or [], "oriented_bbox": obbs or []}


def check_target(out: PathLike, force: bool, inputs: Iterable[PathLike] = ()) -> Path:
    """The output folder, refused (before any work) when it would overwrite data: a file
    or a link where it should be, a non-empty folder without ``force``, a folder that
    holds one of ``inputs`` (or is one of their ancestors) even with ``force``."""
    target = Path(out).absolute()
    root = existing_ancestor(target)
    if not root.is_dir():
        raise fail(out, "--out", "a folder path (its missing parent folders are created)",
                   f"<{root} is a file, not a folder>")
    try:
        files.check_folder(root, target, replace=force, inputs=inputs)
    except files.FileRefused as err:
        raise fail(out, "--out", err.expected, f"<{err.found}>") from None
    return Path(out)


def existing_ancestor(target: Path) -> Path:
    """The nearest folder above ``target`` that exists (as a name: a link counts); the
    folders below it are created by :func:`ovearth_core.files.folder_writer`, which
    follows no link."""
    parent = target.parent
    while not os.path.lexists(parent) and parent != parent.parent:
        parent = parent.parent
    return parent


def validate(bench: Benchmark) -> list[str]:
    """Check the built documents with the evaluator's loader: what is written loads, with
    the extensions it needs. A converter keeps its source's geometry (DOTA's concave labels
    and detections, scored as DOTA_devkit scores them; a scene-size predicted mask) rather
    than refuse or alter it; the benchmark then needs an option beyond the spec to be
    evaluated, which it does not turn on by itself (the spec's rules stay the default).

    Returns:
        What needs which option, one line each (empty: the spec's rules take it all).
    """
    name = "<converted ground_truth.json>"
    gt = io.parse_ground_truth(bench.ground_truth(), name)
    concave, large = len(gt.concave), 0
    for sub, tasks in bench.submissions.items():
        doc = {"tasks": tasks}
        for key, rows in tasks.items():
            if rows:
                preds = io.parse_predictions(doc, f"<converted predictions/{sub}.json>", key,
                                             gt.tasks[key], gt.annotations, MODALITIES, None,
                                             "xyxy", large_masks=True, concave_obb=True)
                obbs = [a for p in preds.values() for a in p.obbs]
                if obbs:
                    concave += int(boxparse.concave_polygons(np.concatenate(obbs)).sum())
                large += sum(p.mask_size[0] * p.mask_size[1] > masks.SPEC_MAX_PIXELS
                             for p in preds.values())
    needs = []
    if concave:
        needs.append(f"{concave:,} concave oriented boxes (ground truth and predictions), kept "
                     "as the polygons DOTA_devkit scores: evaluate this benchmark with "
                     f"--concave-obb of {EXTENSION_COMMANDS}, or the app's 'Concave oriented "
                     "boxes' (link concave=1); the spec's rules refuse them")
    if large:
        needs.append(f"{large:,} predicted masks beyond the spec's {masks.SPEC_MAX_PIXELS:,} "
                     f"pixels: evaluate this benchmark with --large-masks of "
                     f"{EXTENSION_COMMANDS}, or the app's 'Masks beyond the spec's cap' (link "
                     "bigmask=1); the spec's rules refuse them")
    return needs


def check_names(bench: Benchmark) -> None:
    """Every submission name is one file name, every image path one
    :func:`image_path_ok` accepts (names from the sources are checked before use)."""
    bad = Problems()
    for name in bench.submissions:
        if not files.is_component(name) or name.startswith("."):
            bad.add("<converted benchmark>", "submission", files.COMPONENT, name)
    for rel in bench.images:
        if not image_path_ok(rel):
            bad.add("<converted benchmark>", "image_path", IMAGE_PATH, rel)
    bad.raise_if_any()


def write_benchmark(bench: Benchmark, out: PathLike, force: bool = False, link: bool = True,
                    show_progress: bool = False) -> Path:
    """Validate ``bench`` and write it as the folder ``out``, atomically.

    Args:
        bench: the converted benchmark.
        out: the folder to create; an existing empty folder is replaced, a non-empty one
            only with ``force``.
        force: replace an existing non-empty folder.
        link: hard-link the images (the default: image sets are tens of gigabytes and a
            benchmark only reads them; copies across file systems), else copy them.
        show_progress: a progress line on stderr while images are written.

    Returns:
        The folder written.
    """
    bench.warnings += validate(bench)
    check_names(bench)
    inputs = [*bench.inputs, *bench.images.values()]
    with atomic_folder(out, force, inputs) as tmp:
        tmp.write("ground_truth.json",
                  orjson.dumps(bench.ground_truth(), option=orjson.OPT_INDENT_2) + b"\n")
        for name, tasks in bench.submissions.items():
            doc = {"tasks": tasks, **bench.submission_extra.get(name, {})}
            tmp.write(f"predictions/{name}.json", orjson.dumps(doc) + b"\n")
        if not bench.submissions:
            os.mkdir(tmp.path / "predictions")
        for rel, src in progress(bench.images.items(), "writing images", show_progress,
                                 total=len(bench.images)):
            _place(tmp, rel, src, link)
        tmp.write("README.md", _readme(bench).encode("utf-8"))
    return Path(out)


@contextmanager
def atomic_folder(out: PathLike, force: bool, inputs: Iterable[PathLike] = ()
                  ) -> Iterator[files.FolderWriter]:
    """A writer on a temporary sibling of ``out`` (:func:`ovearth_core.files.folder_writer`);
    renamed to ``out`` when the block succeeds, removed when it fails (``out`` is then
    untouched). A refusal is an input error naming ``--out``."""
    inputs = list(inputs)
    check_target(out, force, inputs)
    target = Path(out).absolute()
    root = existing_ancestor(target)
    made = target.parents[:len(target.relative_to(root).parts) - 1]
    try:
        with files.folder_writer(root, target, replace=force, inputs=inputs) as tmp:
            yield tmp
    except files.FileRefused as err:
        _remove_empty(made)
        raise fail(err.path, "--out", err.expected, f"<{err.found}>") from None
    except BaseException:
        _remove_empty(made)
        raise


def _remove_empty(folders: Sequence[Path]) -> None:
    """Remove the parent folders made for a write that failed (innermost first; only
    while empty: nothing else is touched)."""
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            return


def _place(folder: files.FolderWriter, rel: str, src: Path, link: bool) -> None:
    folder.place(rel, src, link)


def images_text(counts: dict[str, Any]) -> str:
    """The images converted, as the summary and the README say it: ``3 images (2 with
    their files in images/, 1 numbers-only)``."""
    text = f"{counts['images']:,} images"
    if not counts["numbers_only"]:
        return text
    return (f"{text} ({counts['image_files']:,} with their files in images/, "
            f"{counts['numbers_only']:,} numbers-only)")


def skipped_files(kind: str, folder: Path, names: Sequence[str], why: str) -> list[str]:
    """The note for files of ``folder`` that were not converted (none: no note)."""
    if not names:
        return []
    shown = ", ".join(sorted(names)[:10]) + (f" and {len(names) - 10:,} more"
                                            if len(names) > 10 else "")
    return [f"{len(names):,} {kind} in {folder} {why}: {shown}"]


def _readme(bench: Benchmark) -> str:
    c = bench.counts()
    ov = c["open_vocabulary"]
    lines = [
        "# Converted OVEarth benchmark",
        "",
        f"Made by `{bench.command}`; convert again rather than edit.",
        "",
        f"- {images_text(c)}; annotations: {c['annotations']}; boxes: {c['boxes']}",
        f"- open-vocabulary queries: {ov['positive'] + ov['negative']} ({ov['positive']} "
        f"positive, {ov['negative']} negative); referring: {c['referring']}; "
        f"reasoning: {c['reasoning']}",
        f"- submissions in `predictions/`: {', '.join(c['submissions']) or 'none'}",
    ]
    if bench.notes or bench.warnings or bench.skipped:
        lines += ["", "Conversion notes:", ""] + [f"- {note}" for note in
                                                  [*bench.warnings, *bench.skipped, *bench.notes]]
    return "\n".join(lines) + "\n"


def progress(items: Iterable[Any], label: str, enabled: bool, total: int | None = None,
             stream: TextIO | None = None) -> Iterator[Any]:
    """Yield ``items``, drawing a progress line on stderr once the work takes a while.

    Nothing is shown during the first ``PROGRESS_AFTER`` seconds (small inputs stay quiet).
    On a terminal the line is then redrawn at most ten times a second; otherwise a line is
    printed at every tenth of the items.
    """
    if total is None:
        items = list(items)
        total = len(items)
    out = stream or sys.stderr
    if not enabled or total == 0:
        yield from items
        return
    tty = out.isatty()
    start = last = time.monotonic()
    shown = -1
    for done, item in enumerate(items, start=1):
        yield item
        now = time.monotonic()
        if now - start < PROGRESS_AFTER:
            continue
        tenth = 10 * done // total
        if tty and (now - last >= 0.1 or done == total):
            last = now
            out.write(f"\r{label}: [{'#' * (30 * done // total):<30}] {done}/{total}")
            shown = tenth
        elif not tty and tenth != shown:
            out.write(f"{label}: {done}/{total} ({10 * tenth} %)\n")
            shown = tenth
        out.flush()
    if tty and shown >= 0:
        out.write("\n")
        out.flush()


PROGRESS_AFTER = 1.0  # seconds
