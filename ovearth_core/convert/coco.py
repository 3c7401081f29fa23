"""COCO instances and results to an OVEarth benchmark (``from-coco``), and back (``to-coco``).

COCO format (cocodataset.org "Data format" and "Results format"): ``images`` with ``id``,
``file_name``, ``width``, ``height``; ``categories`` with ``id`` and ``name``; ``annotations``
with ``id``, ``image_id``, ``category_id``, ``bbox`` ``[x, y, width, height]`` (continuous
pixel coordinates), ``iscrowd`` and ``segmentation``: polygons ``[[x1, y1, x2, y2, ...], ...]``,
an uncompressed RLE ``{"size": [h, w], "counts": [runs]}`` or a compressed one (``counts`` a
string). Results are a list of ``{"image_id", "category_id", "score"}`` with a ``bbox``, a
``segmentation`` RLE, or both. Two extensions are read when present: ``oriented_bbox``
(four ``[x, y]`` vertices) on annotations and results, and LVIS's per-image
``neg_category_ids`` (categories verified absent).

From COCO, every (image, category present) is a positive open-vocabulary query whose phrase is
the category name; its annotation holds the boxes of the category's non-crowd instances, the
union of all its instance masks as the mask, and one oriented box per instance (the given
``oriented_bbox``, else the minimum-area rectangle of the instance's polygons or of its RLE
mask's pixels, else the box itself).
Each target instance's COCO ``area`` (an instance mask's pixel count, by which COCOeval puts a
GT in a size range) is kept in the annotation's ``area`` list, parallel to its boxes, when
every target of the group has one; a crowd's is not kept (COCOeval ignores a crowd in every
range). A result's ``area`` is not read: pycocotools' ``loadRes`` replaces it (a box result's
w x h).
Crowd instances (``iscrowd: 1``) are what COCOeval makes of them: not targets, but *ignore
regions* (``ignore_bbox`` / ``ignore_oriented_bbox``), so the COCO-style AP ignores detections
inside them as COCOeval does; their pixels stay in the mask. Absent categories become negative
queries: all of them, N per image (seeded), or LVIS's ``neg_category_ids`` when the images
carry them. Each results file becomes a submission: boxes with scores in file order, masks of
results scoring at least ``mask_score_threshold`` unioned per query.

To COCO, each query becomes one COCO image (per-query scoring, as COCOeval needs), in three
pairs of files, one per geometry, because a COCO annotation holds one box and one mask while
an OVEarth query holds a union mask and box lists: ``instances_bbox.json`` (the target boxes;
ignore regions as crowd), ``instances_segm.json`` (one annotation per query with its mask, as
COCO-Stuff stores one mask per image and class) and ``instances_obb.json`` (the oriented boxes
as four-vertex polygons, with their exact vertices in ``oriented_bbox``), with
``results_*.json`` beside them and ``mapping.json`` (COCO image id to query, and the image ids
COCOeval needs to reproduce our AP). A target's ``area`` there is the one our COCO-style AP
ranges it by: the annotation's ``area`` where given, else w x h (the polygon's area in
``instances_obb.json``).
"""

from __future__ import annotations

import math
import os
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .. import boxparse, geometry, masks
from ..files import COMPONENT, is_component
from ..io import load_samples
from ..masks import FieldError, Rle
from ..types import MODALITIES, TASK_KEYS, Sample
from .common import (
    IMAGE_PATH,
    Benchmark,
    MissingImages,
    PathLike,
    Problems,
    atomic_folder,
    check_target,
    fail,
    image_path_ok,
    image_size,
    load_json,
    prediction_row,
    progress,
    relative_path,
    shown,
    utf8_ok,
    write_benchmark,
)

MAPPING_FORMAT = "ovearth-to-coco 1"
TEXT_KEYS = {"open_vocabulary": "phrase", "referring": "query", "reasoning": "query"}
PREFIX = {"open_vocabulary": "ov", "referring": "ref", "reasoning": "rea"}


# ------------------------------------------------------------------ reading COCO


@dataclass
class CocoImage:
    id: int
    file_name: str
    width: int
    height: int
    neg_category_ids: list[int] | None = None


@dataclass
class Instance:
    """One validated COCO annotation or result: xyxy box, mask, oriented box, crowd, score."""

    box: tuple[float, float, float, float] | None
    xywh: list[float] | None
    mask: Rle | None
    obb: list[list[float]] | None  # four [x, y] vertices, JSON-ready
    crowd: bool = False
    # DOTA's difficult flag (the ``difficult`` extension, 0 or 1, written by to-coco for a
    # ground truth that flags its objects); ``None``: not given.
    difficult: bool | None = None
    score: float | None = None
    outline: np.ndarray | None = None  # (K, 2) vertices of polygon segmentations
    area: float | None = None  # an annotation's COCO ``area`` (a result's is not read)


@dataclass
class CocoSet:
    """A validated instances file: images and categories by id, instances by (image, cat)."""

    path: Path
    images: dict[int, CocoImage]
    categories: dict[int, str]
    groups: dict[tuple[int, int], list[Instance]] = field(default_factory=dict)
    # Image ids whose file is not in the images folder: converted numbers-only.
    missing: set[int] = field(default_factory=set)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _where(kind: str, i: int, obj: dict[str, Any]) -> str:
    """``annotations[3] (id 17)``: the entry's position and, when it has one, its id."""
    ident = obj.get("id")
    if _is_int(ident) or isinstance(ident, str):
        return f"{kind}[{i}] (id {ident})"
    return f"{kind}[{i}]"


def read_instances(path: PathLike, images_dir: PathLike | None,
                   show_progress: bool = False, masks_too: bool = True) -> CocoSet:
    """Read and validate a COCO instances file (and, with ``images_dir``, its image files).

    ``masks_too=False`` leaves ``segmentation`` unread (a to-coco export's oriented boxes
    repeat theirs as polygons).

    Raises:
        OVEarthInputError: every problem found, each with file, entry and id, field,
            expectation and the value found.
    """
    path = Path(path)
    doc = load_json(path, "COCO instances", dict)
    bad = Problems()
    images = _read_images(doc, path, bad)
    categories = _read_categories(doc, path, bad)
    anns = doc.get("annotations")
    if not isinstance(anns, list):
        bad.add(path, "annotations", "a list of annotation objects",
                anns if anns is not None else "<missing>")
        anns = []
    bad.raise_if_any()
    coco = CocoSet(path, images, categories)
    if images_dir is not None:
        _check_image_files(coco, Path(images_dir), bad, show_progress)
    else:
        coco.missing = set(images)
    seen: set[object] = set()
    pending: list[tuple[tuple[int, int], Instance, dict[str, Any] | None]] = []
    for i, ann in enumerate(progress(anns, "reading annotations", show_progress)):
        if not isinstance(ann, dict):
            bad.add(path, f"annotations[{i}]", "an annotation object", ann)
            continue
        where = _where("annotations", i, ann)
        ident = ann.get("id")
        if not (_is_int(ident) or (isinstance(ident, str) and ident)):
            bad.add(path, f"{where}.id", "an integer id", ann.get("id", "<missing>"))
        elif ident in seen:
            bad.add(path, f"{where}.id", "an id unique among the annotations", ident)
        seen.add(ident)
        key = _image_category(ann, where, path, images, categories, bad)
        crowd = ann.get("iscrowd", 0)
        if crowd not in (0, 1) or isinstance(crowd, float):
            bad.add(path, f"{where}.iscrowd", "0 or 1", crowd)
            continue
        flag = ann.get("difficult")
        if flag is not None and (flag not in (0, 1) or isinstance(flag, float)):
            bad.add(path, f"{where}.difficult", "0 or 1 (DOTA's difficult flag)", flag)
            continue
        if key is None:
            continue
        inst = _instance(ann, where, path, images[key[0]], bad, need_box=True,
                         masks_too=masks_too)
        area = ann.get("area")
        if area is not None and not (boxparse.finite_number(area) and area >= 0):
            bad.add(path, f"{where}.area", "a finite number >= 0 (the instance's size in "
                    "square pixels) or no area", area)
            continue
        if inst is not None:
            inst.crowd = bool(crowd)
            inst.area = None if area is None else float(area)
            inst.difficult = None if flag is None else bool(flag)
            pending.append((key, inst, ann))
    bad.raise_if_any()
    _fill_obbs([inst for _, inst, _ in pending])
    for key, inst, _ in pending:
        coco.groups.setdefault(key, []).append(inst)
    return coco


def _read_images(doc: dict[str, Any], path: Path, bad: Problems) -> dict[int, CocoImage]:
    raw = doc.get("images")
    if not isinstance(raw, list):
        bad.add(path, "images", "a list of image objects", raw if raw is not None else
                "<missing>")
        return {}
    images: dict[int, CocoImage] = {}
    for i, img in enumerate(raw):
        if not isinstance(img, dict):
            bad.add(path, f"images[{i}]", "an image object", img)
            continue
        where = _where("images", i, img)
        ident = img.get("id")
        if not _is_int(ident):
            bad.add(path, f"{where}.id", "an integer id", img.get("id", "<missing>"))
            continue
        if ident in images:
            bad.add(path, f"{where}.id", "an id unique among the images", ident)
            continue
        name = relative_path(img.get("file_name"))
        if name is None:
            bad.add(path, f"{where}.file_name", "a relative path inside the images folder "
                    "(no leading /, no ..)", img.get("file_name", "<missing>"))
        dims = []
        for key in ("width", "height"):
            value = img.get(key)
            if not _is_int(value) or value <= 0:
                bad.add(path, f"{where}.{key}", "a positive integer", img.get(key, "<missing>"))
            dims.append(value)
        neg = img.get("neg_category_ids")
        if neg is not None and not (isinstance(neg, list) and all(_is_int(c) for c in neg)):
            bad.add(path, f"{where}.neg_category_ids", "a list of category ids (LVIS)", neg)
            neg = None
        if name is not None and all(_is_int(d) and d > 0 for d in dims):
            images[ident] = CocoImage(ident, name, dims[0], dims[1], neg)
    return images


def _read_categories(doc: dict[str, Any], path: Path, bad: Problems) -> dict[int, str]:
    raw = doc.get("categories")
    if not isinstance(raw, list) or not raw:
        bad.add(path, "categories", "a non-empty list of category objects",
                raw if raw is not None else "<missing>")
        return {}
    out: dict[int, str] = {}
    names: set[str] = set()
    for i, cat in enumerate(raw):
        if not isinstance(cat, dict):
            bad.add(path, f"categories[{i}]", "a category object", cat)
            continue
        where = _where("categories", i, cat)
        ident, name = cat.get("id"), cat.get("name")
        if not _is_int(ident) or ident in out:
            bad.add(path, f"{where}.id", "an integer id unique among the categories",
                    cat.get("id", "<missing>"))
            continue
        if not isinstance(name, str) or not name.strip() or name in names:
            bad.add(path, f"{where}.name", "a non-empty name unique among the categories",
                    cat.get("name", "<missing>"))
            continue
        names.add(name)
        out[ident] = name
    return out


def _missing(coco: CocoSet, images: PathLike | None) -> list[str]:
    missing = MissingImages(images)
    for ident in coco.missing:
        missing.add(coco.images[ident].file_name, "the instances file's width and height")
    return missing.warning(len({img.file_name for img in coco.images.values()}))


def _check_image_files(coco: CocoSet, folder: Path, bad: Problems, show: bool) -> None:
    """Each image file's size against the declared one; a file that is not there is noted
    in ``coco.missing`` (numbers-only, by its declared size), not a problem."""
    for i, img in enumerate(progress(list(coco.images.values()), "reading image sizes", show)):
        src = folder / img.file_name
        if not os.path.lexists(src):
            coco.missing.add(img.id)
            continue
        try:
            size = image_size(src)
        except OSError as err:
            bad.add(coco.path, f"images[{i}] (id {img.id}).file_name",
                    f"an image file at {src}", f"<{err.strerror or err}>")
            continue
        if size != (img.width, img.height):
            bad.add(coco.path, f"images[{i}] (id {img.id}).width/height",
                    f"the size of {src}: {size[0]} x {size[1]}",
                    f"<{img.width} x {img.height}>")
    bad.raise_if_any()


def _image_category(obj: dict[str, Any], where: str, path: Path,
                    images: dict[int, CocoImage], categories: dict[int, str],
                    bad: Problems) -> tuple[int, int] | None:
    img, cat = obj.get("image_id"), obj.get("category_id")
    ok = True
    if not _is_int(img) or img not in images:
        bad.add(path, f"{where}.image_id", "the id of an image of the instances file",
                obj.get("image_id", "<missing>"))
        ok = False
    if not _is_int(cat) or cat not in categories:
        bad.add(path, f"{where}.category_id", "the id of a category of the instances file",
                obj.get("category_id", "<missing>"))
        ok = False
    return (img, cat) if ok else None


def _instance(obj: dict[str, Any], where: str, path: Path, image: CocoImage, bad: Problems,
              need_box: bool, masks_too: bool = True) -> Instance | None:
    """Validate the geometry of one annotation or result (problems added; ``None`` if bad)."""
    ok = True
    box = xywh = None
    if "bbox" in obj or need_box:
        value = obj.get("bbox", "<missing>")
        box = _fast_box(value)
        if box is not None:
            xywh = value
        else:
            try:
                box = boxparse.parse_gt_box(value)
                xywh = [float(v) for v in value]
            except FieldError as err:
                bad.add(path, f"{where}.bbox", err.expected, err.found)
                ok = False
    mask = outline = None
    seg = obj.get("segmentation") if masks_too else None
    if seg is not None and seg != []:
        try:
            mask = _mask_of(seg, image)
            if isinstance(seg, list) and mask is not None:
                outline = np.array([v for poly in seg for v in poly], dtype=np.float64)
        except FieldError as err:
            bad.add(path, f"{where}.segmentation{err.field}", err.expected, err.found)
            ok = False
    obb = None
    if obj.get("oriented_bbox") is not None:
        try:
            obb = [list(v) for v in boxparse.parse_polygon(obj["oriented_bbox"])]
        except FieldError as err:
            bad.add(path, f"{where}.oriented_bbox", err.expected, err.found)
            ok = False
    if ok and box is None and mask is None:
        bad.add(path, f"{where}", "a bbox or a segmentation", "<neither>")
        ok = False
    if not ok:
        return None
    return Instance(box, xywh, mask, obb,
                    outline=outline.reshape(-1, 2) if outline is not None else None)


_NUMBERS = (int, float)


def _fast_box(value: object) -> tuple[float, float, float, float] | None:
    """:func:`~ovearth_core.boxparse.parse_gt_box` for the usual well-formed box (``None``
    for anything else, which the full parser then explains)."""
    if type(value) is not list or len(value) != 4:
        return None
    x, y, w, h = value
    if not (type(x) in _NUMBERS and type(y) in _NUMBERS and type(w) in _NUMBERS
            and type(h) in _NUMBERS):
        return None
    x2, y2 = x + w, y + h
    bound = boxparse.MAX_COORDINATE
    if w > 0 and h > 0 and x < x2 <= bound and y < y2 <= bound and x >= -bound \
            and y >= -bound and w <= bound and h <= bound:
        return float(x), float(y), float(x2), float(y2)
    return None


def _mask_of(seg: object, image: CocoImage) -> Rle | None:
    """A COCO segmentation (polygons, uncompressed or compressed RLE) as one RLE.

    A polygon's vertices must lie within the image grown by its own width and height on
    every side (x in ``[-W, 2W]``, y in ``[-H, 2H]``): pycocotools rasterises every edge at
    five times its length in pixels, so a vertex at 1e7 takes seconds and beyond about 4e8
    it crashes the process.
    """
    h, w = image.height, image.width
    if isinstance(seg, list):
        for j, poly in enumerate(seg):
            if (not isinstance(poly, list) or len(poly) < 6 or len(poly) % 2
                    or not all(boxparse.finite_number(v) for v in poly)):
                raise FieldError(f"[{j}]", "a polygon [x1, y1, x2, y2, ...] of at least three "
                                 "vertices (an even count of finite numbers)", poly)
            if not (all(-w <= x <= 2 * w for x in poly[0::2])
                    and all(-h <= y <= 2 * h for y in poly[1::2])):
                raise FieldError(f"[{j}]", f"polygon vertices near the {w} x {h} image: x "
                                 f"within [{-w}, {2 * w}], y within [{-h}, {2 * h}] (the "
                                 "image grown by its size; within ±1e100 in any case)", poly)
        return masks.from_polygons(seg, h, w)
    rle, size = masks.parse_rle(seg)
    if size != (h, w) and size != (0, 0):
        raise FieldError(".size", f"the image's [height, width] = [{h}, {w}]", list(size))
    return rle


def _fill_obbs(instances: Sequence[Instance]) -> None:
    """Oriented box of each instance without one: the minimum-area rectangle of its
    polygons (their vertices), or of its RLE mask's pixels, else its box as a rectangle."""
    need = [inst for inst in instances if inst.obb is None and inst.mask is not None]
    rects = geometry.min_area_rects([inst.outline if inst.outline is not None
                                     else masks.hull_points(inst.mask) for inst in need]
                                    ).tolist()
    for inst, rect in zip(need, rects, strict=True):
        inst.obb = rect
    for inst in instances:
        if inst.obb is None and inst.box is not None:
            x1, y1, x2, y2 = inst.box
            inst.obb = [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]


def read_results(path: PathLike, coco: CocoSet, show_progress: bool = False,
                 masks_too: bool = True) -> dict[tuple[int, int], list[Instance]]:
    """Read and validate a COCO results file against ``coco``: instances by (image, cat),
    in file order. A result with a mask and no box gets the mask's envelope (as
    pycocotools' ``loadRes`` does); an oriented box only when the result gives one
    (``oriented_bbox``): none is made of a box or a mask."""
    path = Path(path)
    rows = load_json(path, "COCO results", list)
    bad = Problems()
    groups: dict[tuple[int, int], list[Instance]] = defaultdict(list)
    for i, row in enumerate(progress(rows, f"reading {path.name}", show_progress)):
        where = f"[{i}]"
        if not isinstance(row, dict):
            bad.add(path, where, "a result object", row)
            continue
        key = _image_category(row, where, path, coco.images, coco.categories, bad)
        score = row.get("score")
        if not boxparse.finite_number(score):
            bad.add(path, f"{where}.score", "a finite number", row.get("score", "<missing>"))
            continue
        if key is None:
            continue
        inst = _instance(row, where, path, coco.images[key[0]], bad, need_box=False,
                         masks_too=masks_too)
        if inst is None:
            continue
        if inst.box is None:
            if inst.mask is None:
                continue  # an all-zero mask and no box: nothing predicted
            x, y, w, h = masks.bbox_of(inst.mask)  # type: ignore[misc]
            inst.box, inst.xywh = (x, y, x + w, y + h), [x, y, w, h]
        inst.score = float(score)
        groups[key].append(inst)
    bad.raise_if_any()
    return groups


# ------------------------------------------------------------------ from COCO


def _xyxy(inst: Instance) -> list[float]:
    return list(inst.box)  # type: ignore[arg-type]


def _scored(values: list[float], score: float | None) -> dict[str, Any]:
    return {"bbox": values, "score": score}


def from_coco(instances: PathLike, images: PathLike | None, out: PathLike,
              results: Sequence[PathLike] = (), negatives: int | str | None = None,
              seed: int = 0, mask_score_threshold: float = 0.5, force: bool = False,
              link: bool = True, show_progress: bool = False,
              command: str = "ovearth_core.convert.from_coco(...)") -> dict[str, Any]:
    """Convert COCO instances (and results files) into an OVEarth benchmark folder.

    Args:
        instances: the COCO instances JSON (ground truth).
        images: the folder the images' ``file_name`` paths are relative to.
        out: the benchmark folder to write.
        results: COCO results files; each becomes ``predictions/<file stem>.json``.
        negatives: negative queries per image: ``"all"`` absent categories, an integer N
            (sampled with ``seed``), or ``None``: LVIS ``neg_category_ids`` when the images
            carry them, else all.
        seed: seed of the negative sampling (per image, so adding images changes no other
            image's negatives).
        mask_score_threshold: result masks scoring at least this are unioned per query.
        force: replace a non-empty ``out``.
        link: hard-link the images instead of copying them.
        show_progress: progress lines on stderr.

    Returns:
        The counts of what was written (also in ``out/README.md``).
    """
    inputs = [p for p in (instances, images, *results) if p is not None]
    check_target(out, force, inputs)
    negatives = _negatives_option(negatives)
    _check_threshold(mask_score_threshold)
    coco = read_instances(instances, images, show_progress)
    names = _submission_names(results)
    preds = {name: read_results(path, coco, show_progress)
             for name, path in zip(names, results, strict=True)}
    lvis = negatives is None and any(img.neg_category_ids is not None
                                     for img in coco.images.values())
    if lvis:
        _check_lvis(coco)
    # One query per (image, category): the queries of an image are not independent.
    bench = Benchmark(command, inputs=inputs, source={"format": "COCO", "resample_unit": "image"},
                      warnings=_missing(coco, images))
    queries: dict[tuple[int, int], str] = {}
    for img in sorted(coco.images.values(), key=lambda im: im.id):
        image_path = f"images/{img.file_name}"
        if img.id not in coco.missing:
            bench.images[image_path] = Path(images) / img.file_name  # type: ignore[arg-type]
        present = sorted(c for c in coco.categories if (img.id, c) in coco.groups)
        if lvis:
            negative = sorted(set(img.neg_category_ids or ()))
        else:
            negative = _sample_negatives(img.id, coco.categories, set(present), negatives, seed)
        for cat in sorted(set(present) | set(negative)):
            key, name = (img.id, cat), coco.categories[cat]
            ann_id, qid = f"{img.id}_{cat}", f"ov_{img.id}_{cat}"
            group = coco.groups.get(key, [])
            _add_group(bench, ann_id, image_path, img, name, group)
            bench.add_query("open_vocabulary", qid, ann_id, name, negative=not group)
            queries[key] = qid
    dropped = {}
    for name, groups in preds.items():
        rows, dropped[name] = _submission_rows(groups, queries, coco, mask_score_threshold)
        bench.submissions[name] = {"open_vocabulary": rows}
    bench.notes += _coco_notes(coco, lvis, negatives, seed, mask_score_threshold, dropped)
    write_benchmark(bench, out, force, link, show_progress)
    return {**bench.counts(), "dropped_results": dropped}


def _negatives_option(value: int | str | None) -> int | str | None:
    if value is None or value == "all":
        return value
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not _is_int(value) or value < 0:  # type: ignore[arg-type]
        raise fail("(options)", "--negatives", "all or a non-negative integer", value)
    return value


def _check_threshold(value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise fail("(options)", "--mask-score-threshold", "a finite number", value)


def _submission_names(paths: Sequence[PathLike]) -> list[str]:
    names = [Path(p).stem for p in paths]
    for name in names:
        if (names.count(name) > 1 or relative_path(f"{name}.json") is None
                or not utf8_ok(name)):
            raise fail("(options)", "--results", "files with distinct UTF-8 names (each "
                       "becomes predictions/<name>.json)", f"<{shown(name)}>")
    return names


def _check_lvis(coco: CocoSet) -> None:
    bad = Problems()
    for i, img in enumerate(coco.images.values()):
        for cat in img.neg_category_ids or ():
            if cat not in coco.categories or (img.id, cat) in coco.groups:
                bad.add(coco.path, f"images[{i}] (id {img.id}).neg_category_ids",
                        "ids of categories absent from the image", cat)
    bad.raise_if_any()


def _sample_negatives(image_id: int, categories: dict[int, str], present: set[int],
                      negatives: int | str | None, seed: int) -> list[int]:
    absent = sorted(c for c in categories if c not in present)
    if negatives in (None, "all"):
        return absent
    rng = random.Random(f"{seed}:{image_id}")
    return sorted(rng.sample(absent, min(int(negatives), len(absent))))  # type: ignore[arg-type]


def _add_group(bench: Benchmark, ann_id: str, image_path: str, img: CocoImage, name: str,
               group: list[Instance]) -> None:
    union = masks.union([inst.mask for inst in group])
    targets = [inst for inst in group if not inst.crowd]
    crowd = [inst for inst in group if inst.crowd]
    extra = _flags(targets)
    if crowd:
        extra |= {"ignore_bbox": [inst.xywh for inst in crowd],
                  "ignore_oriented_bbox": [inst.obb for inst in crowd]}
    # COCO's size of each target (COCOeval ranges a GT by it), when every target has one.
    if targets and all(inst.area is not None for inst in targets):
        extra["area"] = [inst.area for inst in targets]
    bench.add_annotation(ann_id, image_path, img.width, img.height, name,
                         masks.to_json(union) if union is not None else None,
                         [inst.xywh for inst in targets], [inst.obb for inst in targets],
                         **extra)


def _flags(targets: Sequence[Instance]) -> dict[str, Any]:
    """``{"difficult": [0 / 1 per target]}`` when a target carries the flag, else ``{}``."""
    if all(inst.difficult is None for inst in targets):
        return {}
    return {"difficult": [int(bool(inst.difficult)) for inst in targets]}


def _submission_rows(groups: dict[tuple[int, int], list[Instance]],
                     queries: dict[tuple[int, int], str], coco: CocoSet, threshold: float
                     ) -> tuple[list[dict[str, Any]], int]:
    rows = []
    for key, qid in queries.items():
        found = groups.get(key, [])
        mask = masks.union([d.mask for d in found if d.score >= threshold])  # type: ignore
        rows.append(prediction_row(
            qid, "phrase", coco.categories[key[1]],
            masks.to_json(mask) if mask is not None else None,
            [_scored(_xyxy(d), d.score) for d in found],
            [{"polygon": d.obb, "score": d.score} for d in found if d.obb is not None]))
    dropped = sum(len(v) for k, v in groups.items() if k not in queries)
    return rows, dropped


def _coco_notes(coco: CocoSet, lvis: bool, negatives: int | str | None, seed: int,
                threshold: float, dropped: dict[str, int]) -> list[str]:
    crowd = sum(inst.crowd for group in coco.groups.values() for inst in group)
    targets = [[inst for inst in group if not inst.crowd] for group in coco.groups.values()]
    sized = sum(len(t) for t in targets if t and all(inst.area is not None for inst in t))
    notes = [f"source: {coco.path.name}: {len(coco.images)} images, {len(coco.categories)} "
             f"categories, {sum(map(len, coco.groups.values()))} annotations ({crowd} crowd)",
             "each (image, category present) is a positive query named after the category; "
             "crowd annotations are ignore regions (ignore_bbox / ignore_oriented_bbox), their "
             "pixels part of the mask",
             "oriented boxes: the given oriented_bbox, else the minimum-area rectangle of the "
             "instance's polygons or RLE mask, else the box itself",
             f"sizes: COCO's area of {sized} of {sum(map(len, targets))} target instances kept "
             "in their annotation's area list (an annotation gets one when all its targets "
             "have an area); the COCO-style AP's size ranges use it, else box w x h"]
    if lvis:
        notes.append("negative queries: the images' LVIS neg_category_ids")
    elif negatives in (None, "all"):
        notes.append("negative queries: every category absent from the image")
    else:
        notes.append(f"negative queries: {negatives} absent categories per image, sampled with "
                     f"seed {seed}")
    for name, n in dropped.items():
        notes.append(f"predictions/{name}.json: result masks scoring >= {threshold} unioned "
                     f"per query; {n} results on (image, category) pairs that are no query "
                     "were left out")
    return notes


# ------------------------------------------------------------------ to COCO


def to_coco(gt: PathLike, predictions: PathLike, task: str, out: PathLike,
            force: bool = False) -> dict[str, Any]:
    """Export one task of a benchmark and one submission as COCO files in folder ``out``.

    Each query is one COCO image (``file_name`` relative to the benchmark's ``images/``);
    its category is the phrase (open vocabulary) or the annotation's category (referring,
    reasoning). Negative queries are images without annotations, listing their category in
    ``neg_category_ids`` (LVIS). Unscored boxes are written with score 1.0.

    COCOeval reproduces our COCO-style AP of a box modality with
    ``params.useCats = 0`` and ``params.imgIds = mapping["cocoeval_image_ids"][modality]``
    (add ``["negative"]`` for the hard-negative AP); with ``useCats = 1`` it gives, per
    category, our AP over that category's queries.

    Returns:
        The mapping written to ``out/mapping.json``.
    """
    check_target(out, force, [gt, predictions])
    task_key = TASK_KEYS.get(task, task)
    if task_key not in TASK_KEYS.values():
        raise fail("(options)", "--task", "vocabulary, referring or reasoning", task)
    # A conversion carries the geometry as it is: what the benchmark needs to be evaluated
    # (concave oriented boxes, scene-size masks) is the evaluation's option, not this one's.
    samples = load_samples(gt, predictions, task_key, modalities=MODALITIES, large_masks=True,
                           concave_obb=True)
    categories: dict[str, int] = {}
    images, mapping_rows = [], []
    files: dict[str, dict[str, list[dict[str, Any]]]] = {
        kind: {"annotations": [], "results": []} for kind in ("bbox", "segm", "obb")}
    evaluated: dict[str, list[int]] = {"bbox": [], "oriented_bbox": [], "segmentation": [],
                                       "negative": []}
    unscored = 0
    for k, s in enumerate(samples, start=1):
        name = s.phrase if task_key == "open_vocabulary" else s.category
        cat = categories.setdefault(name, len(categories) + 1)
        image = {"id": k, "file_name": s.image_path.removeprefix("images/"),
                 "width": s.width, "height": s.height}
        if s.negative:
            image["neg_category_ids"] = [cat]
            evaluated["negative"].append(k)
        images.append(image)
        mapping_rows.append({"image_id": k, "query_id": s.sample_id, "ann_id": s.ann_id,
                             "type": "negative" if s.negative else "positive",
                             "text": s.phrase, "category_name": s.category,
                             "image_path": s.image_path,
                             # The targets' COCO areas are the annotation's own area list.
                             **({"area": True} if s.gt_area.size else {})})
        _export_targets(s, k, cat, files, evaluated)
        unscored += _export_predictions(s, k, cat, files)
    cats = [{"id": i, "name": n} for n, i in categories.items()]
    written = {kind: {"instances": f"instances_{kind}.json", "results": f"results_{kind}.json"}
               for kind in files}
    mapping = {"format": MAPPING_FORMAT, "task": task_key, "ground_truth": str(gt),
               "predictions": str(predictions), "submission": Path(predictions).stem,
               "files": written, "cocoeval_image_ids": evaluated,
               "unscored_boxes_written_with_score_1": unscored, "queries": mapping_rows}
    with atomic_folder(out, force, [gt, predictions]) as tmp:
        for kind, parts in files.items():
            for i, ann in enumerate(parts["annotations"], start=1):
                ann["id"] = i
            inst = {"info": {"description": f"OVEarth {task_key} queries as COCO images "
                             f"({kind})"}, "images": images, "categories": cats,
                    "annotations": parts["annotations"]}
            tmp.write(written[kind]["instances"], orjson.dumps(inst) + b"\n")
            tmp.write(written[kind]["results"], orjson.dumps(parts["results"]) + b"\n")
        tmp.write("mapping.json", orjson.dumps(mapping, option=orjson.OPT_INDENT_2) + b"\n")
    return mapping


def _export_targets(s: Sample, image_id: int, cat: int,
                    files: dict[str, dict[str, list[dict[str, Any]]]],
                    evaluated: dict[str, list[int]]) -> None:
    if s.negative:
        return
    # A target's area is the one our COCO-style AP ranges it by: its annotation's where
    # given, else its own (w x h, the polygon's). Its difficult flag (when the ground truth
    # flags its objects) rides on its annotation as the ``difficult`` extension: COCOeval
    # ignores the key, from-coco reads it.
    given = s.gt_area.tolist() if s.gt_area.size else None
    flags = s.gt_difficult.tolist() if s.gt_difficult.size else []
    for boxes, crowd in ((s.gt_boxes, 0), (s.gt_ignore_boxes, 1)):
        for k, (x1, y1, x2, y2) in enumerate(boxes.tolist()):
            area = given[k] if given and not crowd else (x2 - x1) * (y2 - y1)
            files["bbox"]["annotations"].append(
                {"image_id": image_id, "category_id": cat, "bbox": [x1, y1, x2 - x1, y2 - y1],
                 "area": area, "iscrowd": crowd,
                 **({"difficult": int(flags[k])} if flags and not crowd else {})})
    for polys, crowd in ((s.gt_obbs, 0), (s.gt_ignore_obbs, 1)):
        for k, fields in enumerate(_obb_fields(polys, None if crowd else given)):
            files["obb"]["annotations"].append({
                "image_id": image_id, "category_id": cat, "iscrowd": crowd, **fields,
                **({"difficult": int(flags[k])} if flags and not crowd else {})})
    if s.gt_mask is not None:
        x, y, w, h = masks.bbox_of(s.gt_mask)  # type: ignore[misc]
        files["segm"]["annotations"].append(
            {"image_id": image_id, "category_id": cat, "segmentation": masks.to_json(s.gt_mask),
             "area": masks.area(s.gt_mask), "bbox": [x, y, w, h], "iscrowd": 0})
        evaluated["segmentation"].append(image_id)
    if len(s.gt_boxes) or len(s.gt_ignore_boxes):
        evaluated["bbox"].append(image_id)
    if len(s.gt_obbs) or len(s.gt_ignore_obbs):
        evaluated["oriented_bbox"].append(image_id)


def _obb_fields(polys: np.ndarray, given: list[float] | None = None) -> list[dict[str, Any]]:
    """COCO fields of ``(N, 4, 2)`` oriented boxes: envelope, polygon, area (``given``,
    else the polygon's), exact vertices."""
    if len(polys) == 0:
        return []
    lo, hi = polys.min(axis=1), polys.max(axis=1)
    boxes = np.concatenate([lo, hi - lo], axis=1).tolist()
    areas = given if given else geometry.polygon_area(polys).tolist()
    return [{"bbox": b, "segmentation": [sum(p, [])], "area": a, "oriented_bbox": p}
            for b, a, p in zip(boxes, areas, polys.tolist(), strict=True)]


def _export_predictions(s: Sample, image_id: int, cat: int,
                        files: dict[str, dict[str, list[dict[str, Any]]]]) -> int:
    unscored = 0
    for (x1, y1, x2, y2), score in zip(s.pred_boxes.tolist(), s.pred_box_scores.tolist(),
                                       strict=True):
        unscored += math.isnan(score)
        files["bbox"]["results"].append(
            {"image_id": image_id, "category_id": cat, "bbox": [x1, y1, x2 - x1, y2 - y1],
             "score": 1.0 if math.isnan(score) else score})
    for fields, score in zip(_obb_fields(s.pred_obbs), s.pred_obb_scores.tolist(),
                             strict=True):
        unscored += math.isnan(score)
        files["obb"]["results"].append({"image_id": image_id, "category_id": cat,
                                        "score": 1.0 if math.isnan(score) else score,
                                        **fields})
    if s.pred_mask is not None:
        files["segm"]["results"].append({"image_id": image_id, "category_id": cat,
                                         "segmentation": masks.to_json(s.pred_mask),
                                         "score": 1.0})
    return unscored


# ------------------------------------------------------------------ a to-coco export back


def from_coco_export(mapping: PathLike, images: PathLike | None, out: PathLike, force: bool = False,
                     link: bool = True, show_progress: bool = False,
                     command: str = "ovearth_core.convert.from_coco_export(...)"
                     ) -> dict[str, Any]:
    """Rebuild the benchmark of a :func:`to_coco` export exactly (queries, texts, ids).

    Boxes and ignore regions come from ``instances_bbox.json``, masks from
    ``instances_segm.json``, oriented boxes from ``instances_obb.json``, and the
    submission's from the three results files.
    """
    check_target(out, force, [p for p in (mapping, images) if p is not None])
    mapping = Path(mapping)
    doc = load_json(mapping, "to-coco mapping", dict)
    if doc.get("format") != MAPPING_FORMAT:
        raise fail(mapping, "format", f"{MAPPING_FORMAT!r} (a mapping.json written by to-coco)",
                   doc.get("format", "<missing>"))
    rows = doc.get("queries")
    if not isinstance(rows, list) or doc.get("task") not in TASK_KEYS.values():
        raise fail(mapping, "queries / task", "the queries and task of a to-coco export",
                   rows if not isinstance(rows, list) else doc.get("task"))
    folder = mapping.parent
    sets = {kind: read_instances(folder / f"instances_{kind}.json",
                                 images if kind == "bbox" else None, show_progress,
                                 masks_too=kind == "segm")
            for kind in ("bbox", "segm", "obb")}
    results = {kind: read_results(folder / f"results_{kind}.json", sets[kind], show_progress,
                                  masks_too=kind == "segm")
               for kind in ("bbox", "segm", "obb")}
    by_image = {kind: _by_image(groups) for kind, groups in
                [(k, s.groups) for k, s in sets.items()]}
    task = doc["task"]
    submission = doc.get("submission", "predictions")
    if not (isinstance(submission, str) and is_component(submission)
            and not submission.startswith(".")):
        raise fail(mapping, "submission", f"the submission's name: {COMPONENT}",
                   submission)
    bench = Benchmark(command, inputs=[p for p in (mapping, images) if p is not None],
                      warnings=_missing(sets["bbox"], images))
    results_by_image = {kind: _by_image(groups) for kind, groups in results.items()}
    seen: dict[str, tuple[bool, dict[str, Any], CocoImage, int]] = {}
    bad = Problems()
    pred_rows = []
    for i, row in enumerate(rows):
        fields = _mapping_row(row, sets["bbox"], mapping, i, bad)
        if fields is None:
            continue
        image_id, img = fields["image_id"], sets["bbox"].images[fields["image_id"]]
        positive = fields["type"] == "positive"
        if image_id not in sets["bbox"].missing:
            bench.images[fields["image_path"]] = Path(images) / img.file_name  # type: ignore
        bench.add_query(task, fields["query_id"], fields["ann_id"], fields["text"],
                        negative=not positive)
        # An annotation's geometry travels with its positive queries' COCO images.
        if fields["ann_id"] not in seen or (positive and not seen[fields["ann_id"]][0]):
            seen[fields["ann_id"]] = (positive, fields, img, image_id)
        pred_rows.append(_export_prediction_row(fields, results_by_image.get, image_id,
                                                TEXT_KEYS[task]))
    bad.raise_if_any()
    for ann_id, (positive, fields, img, image_id) in seen.items():
        _add_export_annotation(bench, ann_id, fields, img, image_id if positive else None,
                               by_image)
    bench.submissions[submission] = {task: pred_rows}
    bench.notes.append(f"rebuilt from the to-coco export {mapping} ({task})")
    write_benchmark(bench, out, force, link, show_progress)
    return bench.counts()


def _by_image(groups: dict[tuple[int, int], list[Instance]]) -> dict[int, list[Instance]]:
    out: dict[int, list[Instance]] = defaultdict(list)
    for (img, _), insts in sorted(groups.items()):
        out[img].extend(insts)
    return out


def _mapping_row(row: object, coco: CocoSet, path: Path, i: int, bad: Problems
                 ) -> dict[str, Any] | None:
    need = ("image_id", "query_id", "ann_id", "type", "text", "category_name", "image_path")
    if (not isinstance(row, dict) or any(k not in row for k in need)
            or row["image_id"] not in coco.images or row["type"] not in ("positive", "negative")
            or relative_path(row["image_path"]) is None):
        bad.add(path, f"queries[{i}]", "a query of the export (image_id of "
                "instances_bbox.json, query_id, ann_id, type, text, category_name, image_path)",
                row)
        return None
    if not image_path_ok(row["image_path"]):
        bad.add(path, f"queries[{i}].image_path", IMAGE_PATH, row["image_path"])
        return None
    return row


def _add_export_annotation(bench: Benchmark, ann_id: str, fields: dict[str, Any],
                           img: CocoImage, image_id: int | None,
                           by_image: dict[str, dict[int, list[Instance]]]) -> None:
    def of(kind: str) -> list[Instance]:
        return by_image[kind].get(image_id, []) if image_id is not None else []

    boxes, obbs = of("bbox"), of("obb")
    union = masks.union([inst.mask for inst in of("segm")])
    # The flags travel on the boxes (on the oriented boxes when there are no boxes).
    extra = _flags([b for b in (boxes or obbs) if not b.crowd])
    if any(b.crowd for b in boxes) or any(o.crowd for o in obbs):
        extra |= {"ignore_bbox": [b.xywh for b in boxes if b.crowd],
                  "ignore_oriented_bbox": [o.obb for o in obbs if o.crowd]}
    targets = [b for b in boxes if not b.crowd] or [o for o in obbs if not o.crowd]
    if fields.get("area") is True and targets:
        extra["area"] = [t.area for t in targets]
    bench.add_annotation(ann_id, fields["image_path"], img.width, img.height,
                         fields["category_name"],
                         masks.to_json(union) if union is not None else None,
                         [b.xywh for b in boxes if not b.crowd],
                         [o.obb for o in obbs if not o.crowd], **extra)


def _export_prediction_row(fields: dict[str, Any], results: Any, image_id: int,
                           text_key: str) -> dict[str, Any]:
    def of(kind: str) -> list[Instance]:
        return results(kind).get(image_id, [])

    mask = masks.union([d.mask for d in of("segm")])
    return prediction_row(fields["query_id"], text_key, fields["text"],
                          masks.to_json(mask) if mask is not None else None,
                          [_scored(_xyxy(d), d.score) for d in of("bbox")],
                          [{"polygon": d.obb, "score": d.score} for d in of("obb")])


__all__ = ["from_coco", "from_coco_export", "read_instances", "read_results", "to_coco"]
