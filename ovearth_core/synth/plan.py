"""Benchmark plans: exact counts per scale, turned into per-image and per-annotation plans.

A plan fixes everything the ground truth depends on except geometry: which images exist (size,
format, path), which annotation sits in which image with which category, how many boxes each
annotation holds and how many queries of each task it receives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from .taxonomy import CATEGORIES, Category

MIXES = ("all", "ov_rea", "ov_ref", "ov_only")


@dataclass(frozen=True)
class ScaleSpec:
    """Exact target counts of one benchmark scale.

    Attributes:
        name: scale name used on the command line.
        images_by_annotations: number of images holding 1, 2 and 3 annotations.
        instance_categories / area_categories: distinct categories of each kind.
        area_annotations: annotations of area-type or linear categories (no boxes).
        unreliable: instance annotations whose boxes are left out (``bbox: []``).
        boxes: total horizontal boxes over all annotations.
        huge: annotations holding more than 40 boxes.
        mix: annotations per query-type mix (see :data:`MIXES`).
        ov_positive / ov_negative / referring / reasoning: query counts per task.
        width_median / width_sigma / width_range: log-normal image widths in pixels.
        formats: image counts per format other than JPEG (``png``, ``tif``, ``tif16``, ``tif4``).
        jpeg_quality: JPEG quality of the written images.
        preferred: categories that must be present (used by the small scales).
    """

    name: str
    images_by_annotations: tuple[int, int, int]
    instance_categories: int
    area_categories: int
    area_annotations: int
    unreliable: int
    boxes: int
    huge: int
    mix: tuple[int, int, int, int]
    ov_positive: int
    ov_negative: int
    referring: int
    reasoning: int
    width_median: float
    width_sigma: float
    width_range: tuple[int, int]
    formats: dict[str, int] = field(default_factory=dict)
    jpeg_quality: int = 85
    preferred: tuple[str, ...] = ()

    @property
    def n_images(self) -> int:
        return sum(self.images_by_annotations)

    @property
    def n_annotations(self) -> int:
        return sum((i + 1) * n for i, n in enumerate(self.images_by_annotations))


_SHOWCASE = ("storage tank", "bell tower", "tennis court", "ship", "solar farm", "roundabout",
             "greenhouse", "wind turbine", "swimming pool", "airplane", "soccer field", "car",
             "cropland", "road section", "river", "woodland")

SCALES: dict[str, ScaleSpec] = {
    "full": ScaleSpec(
        name="full", images_by_annotations=(455, 60, 5), instance_categories=160,
        area_categories=12, area_annotations=40, unreliable=4, boxes=4810, huge=14,
        mix=(478, 90, 17, 5), ov_positive=1067, ov_negative=2168, referring=732, reasoning=1056,
        width_median=1385.0, width_sigma=0.55, width_range=(512, 5200),
        formats={"png": 70, "tif": 20, "tif16": 3, "tif4": 3}, jpeg_quality=88),
    "demo": ScaleSpec(
        name="demo", images_by_annotations=(25, 4, 1), instance_categories=26,
        area_categories=4, area_annotations=4, unreliable=1, boxes=320, huge=2,
        mix=(29, 5, 1, 1), ov_positive=65, ov_negative=130, referring=45, reasoning=64,
        width_median=1000.0, width_sigma=0.2, width_range=(640, 1400),
        formats={"png": 2, "tif": 1, "tif16": 1, "tif4": 1}, jpeg_quality=80,
        preferred=_SHOWCASE),
    "tiny": ScaleSpec(
        name="tiny", images_by_annotations=(3, 1, 0), instance_categories=4,
        area_categories=1, area_annotations=1, unreliable=0, boxes=20, huge=0,
        mix=(3, 1, 1, 0), ov_positive=8, ov_negative=16, referring=6, reasoning=8,
        width_median=420.0, width_sigma=0.1, width_range=(320, 520),
        formats={"png": 1, "tif16": 1, "tif4": 1}, jpeg_quality=80,
        preferred=("storage tank", "tennis court", "ship", "bell tower", "cropland")),
}


@dataclass
class AnnotationPlan:
    """One ground-truth annotation before geometry.

    Attributes:
        index: 0-based annotation index (its id is ``index + 1`` zero-padded to 6 digits).
        category: the annotation's category.
        n_instances: number of instance polygons (boxes, unless ``unreliable``).
        unreliable: boxes withheld from the detection subset.
        mix: query-type mix, one of :data:`MIXES`.
        n_ov_positive / n_ov_negative / n_referring / n_reasoning: queries per task.
    """

    index: int
    category: Category
    n_instances: int = 1
    unreliable: bool = False
    mix: str = "all"
    n_ov_positive: int = 1
    n_ov_negative: int = 3
    n_referring: int = 0
    n_reasoning: int = 0

    @property
    def ann_id(self) -> str:
        return f"{self.index + 1:06d}"

    @property
    def n_boxes(self) -> int:
        return 0 if self.category.is_area or self.unreliable else self.n_instances


@dataclass
class ImagePlan:
    """One image: size, format, GSD zoom and its annotations (1-3)."""

    index: int
    width: int
    height: int
    fmt: str
    zoom: float
    annotations: list[AnnotationPlan]

    @property
    def path(self) -> str:
        ext = {"jpg": "jpg", "png": "png"}.get(self.fmt, "tif")
        return f"images/{self.index + 1}.{ext}"


def _spread(rng: np.random.Generator, n_slots: int, extra: int, cap: int) -> list[int]:
    """Distribute ``extra`` units over ``n_slots`` slots, at most ``cap`` each, randomly."""
    if extra > n_slots * cap:
        raise ValueError(f"cannot spread {extra} over {n_slots} slots of at most {cap}")
    out = [0] * n_slots
    order = [int(i) for s in range(cap) for i in rng.permutation(n_slots)]
    for i in order[:extra]:
        out[i] += 1
    return out


def _choose_categories(spec: ScaleSpec, rng: np.random.Generator) -> tuple[list[Category],
                                                                             list[Category]]:
    inst = [c for c in CATEGORIES if not c.is_area]
    area = [c for c in CATEGORIES if c.is_area]
    chosen = []
    for pool, n in ((inst, spec.instance_categories), (area, spec.area_categories)):
        first = [c for c in pool if c.name in spec.preferred][:n]
        rest = [c for c in pool if c not in first]
        picked = [rest[i] for i in sorted(rng.choice(len(rest), n - len(first), replace=False))]
        chosen.append(first + picked)
    return chosen[0], chosen[1]


def _box_counts(spec: ScaleSpec, n: int, rng: np.random.Generator) -> list[int]:
    """Ascending instance counts of the ``n`` box-bearing annotations, summing to the target.

    Skewed like the paper: just over half hold one box, ``huge`` hold more than 40.
    """
    n_ones = min(n - spec.huge, math.ceil(0.52 * n))
    n_mid = n - n_ones - spec.huge
    huge = np.clip(np.round(np.exp(rng.normal(math.log(90), 0.5, spec.huge))), 41, 260)
    mid = np.clip(np.round(np.exp(rng.normal(math.log(7), 0.8, n_mid))), 2, 40)
    counts = np.concatenate([np.ones(n_ones), mid, huge]).astype(int)
    diff = spec.boxes - int(counts.sum())
    # Walk the total onto the target one box at a time, mid-sized annotations first.
    for first, last, lo, hi in ((n_ones, n_ones + n_mid, 2, 40), (n_ones + n_mid, n, 41, 400)):
        while diff != 0:
            step = 1 if diff > 0 else -1
            movable = [i for i in range(first, last) if lo <= counts[i] + step <= hi]
            if not movable:
                break
            counts[movable[int(rng.integers(len(movable)))]] += step
            diff -= step
    if diff != 0:
        raise ValueError(f"box total {spec.boxes} unreachable for scale {spec.name}")
    return sorted(int(c) for c in counts)


_RANK = {"one": 0, "few": 1, "many": 2}


def _annotations(spec: ScaleSpec, rng: np.random.Generator) -> list[AnnotationPlan]:
    inst_cats, area_cats = _choose_categories(spec, rng)
    repeats = rng.integers(0, len(area_cats), spec.area_annotations - len(area_cats))
    area_list = area_cats + [area_cats[i] for i in repeats]
    n_inst = spec.n_annotations - spec.area_annotations
    weights = np.array([1.0 + _RANK[c.multiplicity] for c in inst_cats])
    extra = rng.choice(len(inst_cats), n_inst - len(inst_cats), p=weights / weights.sum())
    inst_list = inst_cats + [inst_cats[i] for i in extra]
    # Sort by multiplicity so that "many" categories receive the big box counts.
    keys = rng.random(len(inst_list))
    order = sorted(range(len(inst_list)), key=lambda i: (_RANK[inst_list[i].multiplicity], keys[i]))
    inst_sorted = [inst_list[i] for i in order]
    counts = _box_counts(spec, n_inst - spec.unreliable, rng)
    plans = [AnnotationPlan(0, c, 1, unreliable=True) for c in inst_sorted[:spec.unreliable]]
    plans += [AnnotationPlan(0, c, k) for c, k in zip(inst_sorted[spec.unreliable:], counts,
                                                        strict=True)]
    plans += [AnnotationPlan(0, c, 1) for c in area_list]
    plans = [plans[i] for i in rng.permutation(len(plans))]
    for i, p in enumerate(plans):
        p.index = i
    _assign_queries(spec, plans, rng)
    return plans


def _assign_queries(spec: ScaleSpec, plans: list[AnnotationPlan], rng: np.random.Generator) -> None:
    mixes = [m for m, k in zip(MIXES, spec.mix, strict=True) for _ in range(k)]
    if len(mixes) != len(plans):
        raise ValueError(f"mix counts {spec.mix} do not add up to {len(plans)} annotations")
    for p, i in zip(plans, rng.permutation(len(mixes)), strict=True):
        p.mix = mixes[i]
    n = len(plans)
    pos = _spread(rng, n, spec.ov_positive - n, 1)
    neg = _spread(rng, n, spec.ov_negative - 3 * n, 2)
    ref_idx = [i for i, p in enumerate(plans) if p.mix in ("all", "ov_ref")]
    rea_idx = [i for i, p in enumerate(plans) if p.mix in ("all", "ov_rea")]
    ref = _spread(rng, len(ref_idx), spec.referring - len(ref_idx), 1)
    rea = _spread(rng, len(rea_idx), spec.reasoning - len(rea_idx), 1)
    for p, a, b in zip(plans, pos, neg, strict=True):
        p.n_ov_positive, p.n_ov_negative = 1 + a, 3 + b
    for i, k in zip(ref_idx, ref, strict=True):
        plans[i].n_referring = 1 + k
    for i, k in zip(rea_idx, rea, strict=True):
        plans[i].n_reasoning = 1 + k


def _group(spec: ScaleSpec, plans: list[AnnotationPlan],
           rng: np.random.Generator) -> list[list[AnnotationPlan]]:
    """Split annotations into images: distinct categories and at most one area type per image."""
    sizes = [k + 1 for k, n in reversed(list(enumerate(spec.images_by_annotations)))
             for _ in range(n)]
    pool = list(plans)
    groups = []
    for size in sizes:
        group: list[AnnotationPlan] = []
        for p in list(pool):
            if len(group) == size:
                break
            clash = any(q.category == p.category or (q.category.is_area and p.category.is_area)
                        or (q.n_instances > 40 and p.n_instances > 40) for q in group)
            if not clash:
                group.append(p)
                pool.remove(p)
        if len(group) != size:
            raise ValueError("could not group annotations into images")
        groups.append(group)
    return [groups[i] for i in rng.permutation(len(groups))]


def _widths(spec: ScaleSpec, n: int, rng: np.random.Generator) -> list[int]:
    """Log-normal widths through evenly spaced quantiles, so the median is exact."""
    z = [NormalDist().inv_cdf((i + 0.5) / n) for i in range(n)]
    lo, hi = spec.width_range
    w = [int(min(hi, max(lo, round(spec.width_median * math.exp(spec.width_sigma * v)))))
         for v in z]
    return [w[i] for i in rng.permutation(n)]


def plan_benchmark(spec: ScaleSpec, seed: int) -> list[ImagePlan]:
    """All image plans of one scale, annotations numbered in image order."""
    rng = np.random.default_rng([seed, 0])
    groups = _group(spec, _annotations(spec, rng), rng)
    widths = _widths(spec, len(groups), rng)
    images = []
    for i, (group, w) in enumerate(zip(groups, widths, strict=True)):
        square = rng.random() < 0.6
        h = w if square else int(round(w * rng.uniform(0.7, 1.25)))
        zoom = float(np.exp(rng.normal(0.1, 0.35)))
        images.append(ImagePlan(i, w, h, "jpg", zoom, group))
    _assign_formats(spec, images, rng)
    k = 0
    for img in images:
        for a in img.annotations:
            a.index = k
            k += 1
    return images


def _assign_formats(spec: ScaleSpec, images: list[ImagePlan], rng: np.random.Generator) -> None:
    # The uncompressed-ish TIFF variants go to the smallest images to keep the demo light.
    by_size = sorted(range(len(images)), key=lambda i: (images[i].width * images[i].height, i))
    special = [f for f in ("tif16", "tif4", "tif") for _ in range(spec.formats.get(f, 0))]
    small = by_size[:max(len(special) * 3, len(special))]
    picked = [small[i] for i in rng.choice(len(small), len(special), replace=False)]
    for i, f in zip(picked, special, strict=True):
        images[i].fmt = f
    rest = [i for i in range(len(images)) if images[i].fmt == "jpg"]
    for i in rng.choice(rest, spec.formats.get("png", 0), replace=False):
        images[int(i)].fmt = "png"
