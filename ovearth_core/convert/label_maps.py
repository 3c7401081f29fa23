"""Class-index label maps (land cover: LoveDA, EarthVL, ...) to per-image class queries.

A label map is a single-band image (PNG, or TIFF; modes ``L``, ``P``, ``I;16``, ``I``) the size
of its image, each pixel holding a class index; a prediction is a label map of the same name
and size. The classes file names the indices: one class per line, either ``<index> <name>``
on every line or just ``<name>`` (the index is then the line's position, from 0, among the
non-empty lines; ``#`` starts a comment line).

For every image and class: a class present in the ground truth is a positive
open-vocabulary query whose mask is the class's pixels; an absent class is a negative query.
A prediction's mask for a query is the pixels it labels with that class, so a land-cover model
gets presence metrics (predicting a class absent from the image is a false positive) and
class-wise IoU. ``ignore_index`` (LoveDA's 0 "no data", VOC's 255) belongs to no class: those
pixels are in no ground-truth mask and are removed from the predictions, so they count neither
way, as land-cover benchmarks score them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image

from .. import masks
from ..files import open_input
from .common import (
    Benchmark,
    MissingImages,
    PathLike,
    Problems,
    check_target,
    fail,
    image_size,
    images_by_stem,
    phrase_of,
    prediction_row,
    progress,
    read_text_lines,
    relative_path,
    source_files,
    write_benchmark,
)

_SINGLE_BAND = {"1", "L", "P", "I", "I;16", "I;16B", "I;16L"}
LABEL_SUFFIXES = (".png", ".tif", ".tiff")
_INDEXED = re.compile(r"^(\d+)\s+(\S.*)$")


def read_classes(path: Path) -> dict[int, str]:
    """The classes file as ``{index: name}``.

    Raises:
        OVEarthInputError: on an unreadable file, duplicate indices or names, or no class.
    """
    bad = Problems()
    lines = read_text_lines(path, bad, "classes file")
    bad.raise_if_any()
    rows = [(n, line.strip()) for n, line in enumerate(lines or [], start=1)
            if line.strip() and not line.strip().startswith("#")]
    if not rows:
        raise fail(path, "(file)", "one class name per line", "<no class>")
    indexed = all(_INDEXED.match(text) for _, text in rows)
    out: dict[int, str] = {}
    for position, (n, text) in enumerate(rows):
        match = _INDEXED.match(text)
        index, name = (int(match.group(1)), match.group(2).strip()) if indexed and match \
            else (position, text)
        if index in out:
            bad.add(path, "index", "an index unique in the file", index, line=n)
        elif name in out.values():
            bad.add(path, "name", "a class name unique in the file", name, line=n)
        else:
            out[index] = name
    bad.raise_if_any()
    return out


def read_label_map(path: Path, bad: Problems) -> npt.NDArray[Any] | None:
    """The ``(height, width)`` class indices of a single-band label image, or ``None``."""
    try:
        with open_input(path, 1 << 62) as handle, Image.open(handle) as img:
            if img.mode not in _SINGLE_BAND:
                bad.add(path, "(image mode)", "a single-band class-index image (L, P, I;16, I)",
                        f"<mode {img.mode}>")
                return None
            labels = np.asarray(img)
            return labels.astype(np.int64) if labels.dtype.kind not in "ui" else labels
    except (OSError, ValueError, Image.DecompressionBombError) as err:  # ValueError: refused
        bad.add(path, "(file)", "a readable label image", f"<{err}>")
        return None


def _label_files(folder: Path, bad: Problems, role: str) -> dict[str, Path]:
    if not folder.is_dir():
        bad.add(folder, role, "a folder of label maps", "<not a folder>")
        return {}
    out = {}
    for path in source_files(folder, bad, suffixes=LABEL_SUFFIXES):
        if path.stem in out:
            bad.add(path, "(file)", "one label map per file stem",
                    f"<{out[path.stem].name} and {path.name}>")
        out[path.stem] = path
    if not out:
        bad.add(folder, role, "label maps (.png or .tif)", "<none>")
    return out


def _check_values(labels: npt.NDArray[np.int64], path: Path, classes: dict[int, str],
                  ignore: int | None, bad: Problems) -> bool:
    values, counts = _value_counts(labels)
    allowed = set(classes) | ({ignore} if ignore is not None else set())
    wrong = [(int(v), int(c)) for v, c in zip(values, counts, strict=True) if int(v) not in allowed]
    if wrong:
        v, c = wrong[0]
        bad.add(path, "(pixel values)", "class indices of the classes file"
                + (f" or the ignore index {ignore}" if ignore is not None else ""),
                f"<value {v} at {c} pixels" + (f", and {len(wrong) - 1} other values>"
                                              if len(wrong) > 1 else ">"))
        return False
    return True


def from_label_maps(gt: PathLike, classes: PathLike, images: PathLike | None, out: PathLike,
                    predictions: Sequence[PathLike] = (), ignore_index: int | None = None,
                    force: bool = False, link: bool = True, show_progress: bool = False,
                    command: str = "ovearth_core.convert.from_label_maps(...)"
                    ) -> dict[str, Any]:
    """Convert class-index label maps (and prediction maps) into an open-vocabulary benchmark.

    Args:
        gt: the folder of ground-truth label maps (``<image stem>.png``).
        classes: the classes file.
        images: the folder of the images (same stems, any image suffix).
        out: the benchmark folder to write.
        predictions: folders of predicted label maps (same names); each becomes a submission
            named after its folder.
        ignore_index: a label value that belongs to no class (see the module docstring).
        force, link, show_progress: as :func:`~ovearth_core.convert.common.write_benchmark`.
    """
    inputs = [p for p in (gt, classes, images, *predictions) if p is not None]
    check_target(out, force, inputs)
    names = read_classes(Path(classes))
    if ignore_index is not None and (isinstance(ignore_index, bool)
                                     or not isinstance(ignore_index, int)):
        raise fail("(options)", "--ignore-index", "an integer label value", ignore_index)
    vocab = {k: v for k, v in sorted(names.items()) if k != ignore_index}
    bad = Problems()
    gt_files = _label_files(Path(gt), bad, "--gt")
    by_stem = images_by_stem(None if images is None else Path(images), bad)
    missing = MissingImages(images)
    pred_dirs: dict[str, tuple[Path, dict[str, Path]]] = {}
    for folder in map(Path, predictions):
        name = folder.resolve().name
        if name in pred_dirs or relative_path(f"{name}.json") is None:
            raise fail("(options)", "--pred", "folders with distinct names", name)
        pred_dirs[name] = folder, _label_files(folder, bad, "--pred")
    bad.raise_if_any()
    bench = Benchmark(command, inputs=inputs)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in pred_dirs}
    for stem, path in progress(list(gt_files.items()), "reading label maps", show_progress):
        image = by_stem.get(stem)
        labels = read_label_map(path, bad)
        if labels is None or not _check_values(labels, path, names, ignore_index, bad):
            continue
        size = (labels.shape[1], labels.shape[0])
        if image is None:
            missing.add(path.name, "the label map's own size")
            image_path = f"images/{path.name}"
        else:
            try:
                found = image_size(image)
            except OSError as err:
                bad.add(image, "(image)", "a readable image", f"<{err.strerror or err}>")
                continue
            if found != size:
                bad.add(path, "(size)", f"the size of {image.name}: {found[0]} x {found[1]}",
                        f"<{size[0]} x {size[1]}>")
                continue
            image_path = f"images/{image.name}"
            bench.images[image_path] = image
        gt_masks = _class_masks(labels, vocab)
        for k, name in vocab.items():
            ann_id, qid = f"{stem}_{k}", f"ov_{stem}_{k}"
            rle = gt_masks.get(k)
            bench.add_annotation(ann_id, image_path, size[0], size[1], name, rle)
            bench.add_query("open_vocabulary", qid, ann_id, phrase_of(name),
                            negative=rle is None)
        for sub, (folder, files) in pred_dirs.items():
            pred = _prediction(files.get(stem), folder / path.name, labels, names,
                               ignore_index, bad)
            if pred is None:
                continue
            pred_masks = _class_masks(pred, vocab)
            rows[sub] += [prediction_row(f"ov_{stem}_{k}", "phrase", phrase_of(name),
                                         pred_masks.get(k)) for k, name in vocab.items()]
    bad.raise_if_any()
    bench.warnings += missing.warning(len(gt_files))
    for sub, found_rows in rows.items():
        bench.submissions[sub] = {"open_vocabulary": found_rows}
    bench.notes += [f"source: {len(gt_files)} label maps, {len(vocab)} classes: "
                    + ", ".join(f"{k} {v}" for k, v in vocab.items()),
                    "every (image, class) is a query: positive with the class's pixels as the "
                    "mask when present, negative when absent; no boxes"]
    if ignore_index is not None:
        bench.notes.append(f"label {ignore_index} is ignored: in no ground-truth mask, and "
                           "removed from the predictions")
    write_benchmark(bench, out, force, link, show_progress)
    return bench.counts()


def _prediction(path: Path | None, expected: Path, gt: npt.NDArray[np.int64],
                classes: dict[int, str], ignore: int | None, bad: Problems
                ) -> npt.NDArray[np.int64] | None:
    if path is None:
        bad.add(expected, "(file)", "a predicted label map for every ground-truth map",
                "<missing>")
        return None
    pred = read_label_map(path, bad)
    if pred is None or not _check_values(pred, path, classes, ignore, bad):
        return None
    if pred.shape != gt.shape:
        bad.add(path, "(size)", f"the ground truth's size {gt.shape[1]} x {gt.shape[0]}",
                f"<{pred.shape[1]} x {pred.shape[0]}>")
        return None
    if ignore is not None:
        pred = np.where(gt == ignore, ignore, pred)
    return pred


def _value_counts(labels: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """Distinct label values and their pixel counts (a bincount for small label values)."""
    if labels.dtype.kind == "u" and labels.dtype.itemsize <= 2:
        counts = np.bincount(labels.ravel())
        values = np.flatnonzero(counts)
        return values, counts[values]
    return np.unique(labels, return_counts=True)


def _class_masks(labels: npt.NDArray[Any], vocab: dict[int, str]) -> dict[int, dict[str, Any]]:
    """The JSON RLE of each class present in ``labels``."""
    fortran = np.asfortranarray(labels)  # once: RLE runs down the columns
    present = set(_value_counts(labels)[0].tolist())
    return {k: masks.encode(fortran == k) for k in vocab if k in present}
