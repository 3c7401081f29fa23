"""What the converters share: problems, source reading, the benchmark in memory, atomic writing.

A converter reads its sources and checks every value as strictly as the evaluator's loader
(problems are collected and raised together as one
:class:`~ovearth_core.errors.OVEarthInputError`, each naming the file, the line or id, the
field, what was expected and what was found), builds a :class:`Benchmark` and hands it to
:func:`write_benchmark`. That checks the result once more with the evaluator's own loader and
writes the folder laid out as every benchmark folder (see ``ovearth_core.synth.writer``)::

    BENCH/ground_truth.json       annotations + tasks (spec "Data Formats")
    BENCH/images/...              the source images (copies, or hard links with ``link``)
    BENCH/predictions/<name>.json one submission per converted prediction source
    BENCH/README.md               how the folder was made, counts, conventions

The folder is built in a temporary sibling and renamed into place, so it is never seen
half-written; an existing non-empty folder is replaced only with ``force``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

import orjson
from PIL import Image

from .. import io
from ..errors import OVEarthInputError, Problem, describe
from ..types import MODALITIES, TASK_KEYS

PathLike = str | os.PathLike[str]
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp")


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


def fail(file: PathLike, field_: str, expected: str, found: object) -> OVEarthInputError:
    """One problem as an error, for the caller to raise."""
    bad = Problems()
    bad.add(file, field_, expected, found)
    return OVEarthInputError(bad.items)


def load_json(path: PathLike, role: str, kind: type) -> Any:
    """Read a UTF-8 JSON document whose top level is ``kind`` (``dict`` or ``list``)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise fail(path, "(file)", f"a readable {role} JSON file",
                   f"<{err.strerror or type(err).__name__}>") from None
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


def read_text_lines(path: Path, bad: Problems, role: str) -> list[str] | None:
    """Lines of a UTF-8 (optionally BOM-prefixed) text file, or ``None`` with a problem."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as err:
        bad.add(path, "(file)", f"a readable {role}", f"<{err.strerror or type(err).__name__}>")
        return None
    except UnicodeDecodeError as err:
        bad.add(path, "(file)", f"a UTF-8 text {role}", f"<undecodable byte at {err.start}>")
        return None
    return text.splitlines()


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

    Pillow's decompression-bomb limit is lifted while the header is read (it is process-wide:
    do not read images in other threads meanwhile).

    Raises:
        OSError: when the file is missing or not an image Pillow can read.
    """
    with warnings.catch_warnings():
        # Satellite scenes beyond Pillow's decompression-bomb limit are fine here: only
        # the header is read.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        limit, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None
        try:
            with Image.open(path) as img:
                return int(img.size[0]), int(img.size[1])
        except Image.UnidentifiedImageError as err:
            raise OSError(f"not an image Pillow can read ({err})") from None
        finally:
            Image.MAX_IMAGE_PIXELS = limit


def images_by_stem(folder: Path, bad: Problems) -> dict[str, Path]:
    """Image files directly in ``folder`` by file stem (a stem with two images is a problem)."""
    if not folder.is_dir():
        bad.add(folder, "(folder)", "a folder of images", "<not a folder>")
        return {}
    found: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file():
            continue
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
    images: dict[str, Path] = field(default_factory=dict)  # image_path -> source file
    notes: list[str] = field(default_factory=list)
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
        return {"images": len(self.images), "annotations": len(self.annotations),
                "open_vocabulary": {"positive": len(ov) - neg, "negative": neg},
                "referring": len(self.tasks["referring"]),
                "reasoning": len(self.tasks["reasoning"]),
                "boxes": sum(len(a["bbox"]) for a in self.annotations),
                "submissions": sorted(self.submissions)}


def prediction_row(query_id: str, text_key: str, text: str,
                   mask: dict[str, Any] | None = None, boxes: list[Any] | None = None,
                   obbs: list[Any] | None = None) -> dict[str, Any]:
    """A prediction row with every modality present (``null`` / ``[]`` when empty)."""
    return {"query_id": query_id, text_key: text, "segmentation": mask,
            "bbox": boxes or [], "oriented_bbox": obbs or []}


def check_target(out: PathLike, force: bool) -> Path:
    """The output folder, refused (before any work) when it would overwrite data."""
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise fail(target, "--out", "a folder to create (or an empty folder)", "<a file>")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise fail(target, "--out", "a new or empty folder (or --force to replace it)",
                   "<a non-empty folder>")
    if not target.parent.is_dir():
        raise fail(target, "--out", "a folder whose parent exists", "<no parent folder>")
    return target


def validate(bench: Benchmark) -> None:
    """Check the built documents with the evaluator's loader: what is written loads."""
    name = "<converted ground_truth.json>"
    gt = io.parse_ground_truth(bench.ground_truth(), name)
    for sub, tasks in bench.submissions.items():
        doc = {"tasks": tasks}
        for key, rows in tasks.items():
            if rows:
                io.parse_predictions(doc, f"<converted predictions/{sub}.json>", key,
                                     gt.tasks[key], gt.annotations, MODALITIES, None, "xyxy")


def write_benchmark(bench: Benchmark, out: PathLike, force: bool = False, link: bool = False,
                    show_progress: bool = False) -> Path:
    """Validate ``bench`` and write it as the folder ``out``, atomically.

    Args:
        bench: the converted benchmark.
        out: the folder to create; an existing empty folder is replaced, a non-empty one
            only with ``force``.
        force: replace an existing non-empty folder.
        link: hard-link images instead of copying them (copies across file systems).
        show_progress: a progress line on stderr while images are written.

    Returns:
        The folder written.
    """
    validate(bench)
    with atomic_folder(out, force) as tmp:
        (tmp / "ground_truth.json").write_bytes(
            orjson.dumps(bench.ground_truth(), option=orjson.OPT_INDENT_2) + b"\n")
        (tmp / "predictions").mkdir()
        for name, tasks in bench.submissions.items():
            (tmp / "predictions" / f"{name}.json").write_bytes(
                orjson.dumps({"tasks": tasks}) + b"\n")
        for rel, src in progress(bench.images.items(), "writing images", show_progress,
                                 total=len(bench.images)):
            dest = tmp / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            _place(src, dest, link)
        (tmp / "README.md").write_text(_readme(bench), encoding="utf-8")
    return Path(out)


@contextmanager
def atomic_folder(out: PathLike, force: bool) -> Iterator[Path]:
    """A temporary sibling of ``out`` to fill; renamed to ``out`` when the block succeeds,
    removed when it fails (``out`` is then untouched)."""
    target = check_target(out, force)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial",
                                dir=target.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it 0700
        _swap_into_place(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _place(src: Path, dest: Path, link: bool) -> None:
    if link:
        try:
            os.link(src, dest)
            return
        except OSError:  # another file system, or links not allowed: copy
            pass
    shutil.copyfile(src, dest)


def _swap_into_place(tmp: Path, target: Path) -> None:
    if target.is_dir() and any(target.iterdir()):
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old",
                                    dir=target.parent))
        os.replace(target, old / "replaced")
        try:
            os.replace(tmp, target)
        except BaseException:
            os.replace(old / "replaced", target)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)  # over an empty folder, or a new name


def _readme(bench: Benchmark) -> str:
    c = bench.counts()
    ov = c["open_vocabulary"]
    lines = [
        "# Converted OVEarth benchmark",
        "",
        f"Made by `{bench.command}`; convert again rather than edit.",
        "",
        f"- images: {c['images']}; annotations: {c['annotations']}; boxes: {c['boxes']}",
        f"- open-vocabulary queries: {ov['positive'] + ov['negative']} ({ov['positive']} "
        f"positive, {ov['negative']} negative); referring: {c['referring']}; "
        f"reasoning: {c['reasoning']}",
        f"- submissions in `predictions/`: {', '.join(c['submissions']) or 'none'}",
    ]
    if bench.notes:
        lines += ["", "Conversion notes:", ""] + [f"- {note}" for note in bench.notes]
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
