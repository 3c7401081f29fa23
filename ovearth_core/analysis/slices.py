"""Key metrics sliced by a per-query attribute, with counts and bootstrap intervals.

A **slice** is the set of queries sharing one value of an attribute. Every key metric of
:mod:`.additive` is a ratio of sums of per-query pieces, so a slice's metric is the
registry's ``value`` of the slice's summed pieces: the evaluator's number for those queries
alone (``tests/analysis/test_slices.py`` checks it against evaluating the subset).

Attributes (:data:`ATTRIBUTES`), one value per query unless said otherwise:

``category``      the ground truth's ``category_name``.
``group``         the category's group in a taxonomy (``{category: group}`` JSON, see
                  :func:`load_taxonomy`); categories it does not list are ``(no group)``.
``polarity``      ``positive`` or ``negative``.
``gt_size``       AI-TOD bin of ``sqrt(w * h)`` of each GT box (pixels): ``very_tiny`` < 8
                  <= ``tiny`` < 16 <= ``small`` < 32 <= ``medium`` < 96 <= ``large``;
                  ``no_box`` without a GT box (negatives, area classes). Per object: a
                  query is in the bin of every GT box it has (531 ships of two sizes: two
                  bins), its metrics whole in each (a query's pieces are not split by
                  box), and a bin's ``num_gt_boxes`` counts only its own boxes.
``num_gt``        number of GT boxes: ``0`` ... ``4``, ``5-9``, ``10+``.
``phrase_words``  words of the phrase or query (whitespace split): ``1`` ... ``5``,
                  ``6-9``, ``10+``.
``image_size``    long side of the image (pixels): ``<1024``, ``1024-2047``,
                  ``2048-4095``, ``>=4096``.
``tag``           review tags of the query (:mod:`ovearth_core.review`); a query with
                  several tags is in several slices, one without any in ``untagged``.
``gsd``           ground sample distance of the image (metres per pixel): the
                  annotation's ``image_meta.gsd`` (DOTA's ``gsd:`` header), else the
                  GeoTIFF's pixel as ground distance in any CRS (geodesic length at the
                  centre, :func:`ovearth_core.georef.ground_sample_distance`): ``<0.25 m``,
                  ``0.25-0.5 m``, ``0.5-1 m``, ``1-2 m``, ``2-5 m``, ``>=5 m``, ``unknown``.
``meta:KEY``      the annotation's ``image_meta[KEY]`` as text; ``(none)`` without it.
``query_form``    across tasks ("same target, query form", :func:`query_form_table`):
                  ``vocabulary``, ``referring``, ``reasoning``: each task's positive
                  queries on the annotations that all three tasks ask for.

Intervals: a percentile bootstrap over the slice's queries (each resample draws the
slice's n queries with replacement, :func:`.compare.resample_counts`), or with
``unit="image"`` over the images of the slice's queries (a drawn image brings its queries
of the slice); ``num_units`` says how many units a slice's interval rests on (flagged
below :data:`.compare.MIN_UNITS` by the app and the report); with a second
result B, the same draws give a paired interval of B − A and, for a slice of at least
``min_count`` units (its images, or its queries), its paired-bootstrap p-value
(:func:`.multiple.bootstrap_p`) with the Benjamini-Hochberg q-value of each metric over the
slices tested (a table of many tests at once: the false discovery rate, not each p alone).
A metric undefined in a
resample (zero denominator) leaves that resample out (``n_valid``); undefined observed
values are ``None`` and get no interval.

>>> size_bin(7.99), size_bin(8.0), size_bin(96.0)
('very_tiny', 'tiny', 'large')
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import OVEarthInputError, Problem
from ..io import read_input
from ..options import MIN_COUNT
from ..types import Sample, SampleList
from . import additive, crosstask
from .compare import (
    CONFIDENCE,
    check_comparable,
    not_submitted,
    percentile_interval,
    unit_counts,
    unit_groups,
)
from .multiple import benjamini_hochberg, bootstrap_p
from .slice_options import (  # the command's options, importable without numpy
    ATTRIBUTES,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    GSD,
    META_PREFIX,
    QUERY_FORM,
)
from .slice_options import slice_attribute as slice_attribute  # re-exported (argparse type)

FloatArray = npt.NDArray[np.float64]
SIZE_BINS = (("very_tiny", 8.0), ("tiny", 16.0), ("small", 32.0), ("medium", 96.0),
             ("large", math.inf))
NO_BOX = "no_box"
IMAGE_BINS = (("<1024", 1024), ("1024-2047", 2048), ("2048-4095", 4096), (">=4096", math.inf))
COUNT_BINS = (("0", 1), ("1", 2), ("2", 3), ("3", 4), ("4", 5), ("5-9", 10), ("10+", math.inf))
WORD_BINS = (("1", 2), ("2", 3), ("3", 4), ("4", 5), ("5", 6), ("6-9", 10), ("10+", math.inf))
GSD_BINS = (("<0.25 m", 0.25), ("0.25-0.5 m", 0.5), ("0.5-1 m", 1.0), ("1-2 m", 2.0),
            ("2-5 m", 5.0), (">=5 m", math.inf))
NO_GSD = "unknown"
NO_META = "(none)"
NO_GROUP = "(no group)"
UNTAGGED = "untagged"
_ORDERED = {"gt_size": [*(n for n, _ in SIZE_BINS), NO_BOX],
            "num_gt": [n for n, _ in COUNT_BINS], "phrase_words": [n for n, _ in WORD_BINS],
            "image_size": [n for n, _ in IMAGE_BINS], "polarity": ["positive", "negative"],
            GSD: [*(n for n, _ in GSD_BINS), NO_GSD]}


@dataclass(frozen=True)
class SliceMetric:
    """One key metric on one slice; ``b``/``diff*`` only when a result B was given."""

    name: str  # registry key of :mod:`.additive`
    modality: str
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_valid: int
    b: float | None = None
    diff: float | None = None
    diff_low: float | None = None
    diff_high: float | None = None
    # Paired tables: the paired-bootstrap p-value of B - A (slices with at least the
    # table's ``min_count`` units) and its Benjamini-Hochberg q-value over the slices.
    p_value: float | None = None
    q_value: float | None = None


@dataclass(frozen=True)
class SliceValue:
    """The queries of one attribute value and their metrics."""

    value: str
    num_queries: int
    num_positive: int
    num_negative: int
    num_gt_boxes: int
    query_ids: tuple[str, ...]
    metrics: list[SliceMetric] = field(default_factory=list)
    num_units: int = 0  # units (queries or images) its intervals resample


@dataclass(frozen=True)
class SliceTable:
    attribute: str
    num_queries: int
    n_resamples: int
    seed: int
    confidence: float
    paired: bool
    values: list[SliceValue]
    unit: str = "query"  # what the intervals resample: "query" or "image"
    min_count: int = MIN_COUNT  # fewest units (images or queries) a slice's B - A is tested on


def _bin(x: float, bins: Sequence[tuple[str, float]]) -> str:
    return next(name for name, upper in bins if x < upper)


def size_bin(side: float) -> str:
    """AI-TOD size bin of a box whose ``sqrt(area)`` is ``side`` pixels."""
    return _bin(side, SIZE_BINS)


def box_sizes(sample: Sample) -> list[str]:
    """Size bin of each of the sample's GT boxes (``gt_boxes`` are ``(N, 4)`` xyxy)."""
    b = sample.gt_boxes
    area = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    return [size_bin(float(side)) for side in np.sqrt(area)]


def gt_sizes(sample: Sample) -> tuple[str, ...]:
    """The size bins of the sample's GT boxes, each once, in bin order (``no_box``
    without a GT box)."""
    found = set(box_sizes(sample))
    return tuple(n for n, _ in SIZE_BINS if n in found) or (NO_BOX,)


def load_taxonomy(path: str | Path) -> dict[str, str]:
    """``{category: group}`` from a JSON object of strings (raises OVEarthInputError).

    The file is read with :func:`~ovearth_core.io.read_input`: a regular file within the
    input cap (a named pipe is refused, never waited on; a larger file is refused unread).
    """
    name = str(path)
    data = read_input(path, "taxonomy")
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError as err:
        raise OVEarthInputError([Problem(name, "(file)", "a readable JSON file",
                                         type(err).__name__ + f": {err}")]) from err
    if not isinstance(doc, dict):
        raise OVEarthInputError([Problem(name, "(top level)", "an object {category: group}",
                                         type(doc).__name__)])
    bad = [Problem(name, str(k), "a group name (string)", repr(v))
           for k, v in doc.items() if not isinstance(v, str)]
    if bad:
        raise OVEarthInputError(bad)
    return dict(doc)


def query_values(samples: Sequence[Sample], attribute: str,
                 taxonomy: Mapping[str, str] | None = None,
                 tags: Mapping[str, frozenset[str]] | None = None,
                 meta: Mapping[str, Mapping[str, Any]] | None = None) -> list[tuple[str, ...]]:
    """The values of ``attribute`` of every sample (a tuple: ``tag`` may give several);
    ``meta``: ``{ann_id: image_meta}`` (:func:`image_meta`) for ``gsd`` and ``meta:KEY``."""
    if attribute == GSD or attribute.startswith(META_PREFIX):
        return _meta_values(samples, attribute, meta or {})
    if attribute == QUERY_FORM:
        raise OVEarthInputError([Problem("(options)", "--slice-by", "an attribute of one "
                                         "task's queries (query_form spans the three tasks: "
                                         "query_form_table)", repr(attribute))])
    if attribute not in ATTRIBUTES:
        raise OVEarthInputError([Problem("(options)", "--slice-by", " or ".join(ATTRIBUTES),
                                         repr(attribute))])
    if attribute == "group" and taxonomy is None:
        raise OVEarthInputError([Problem("(options)", "--taxonomy",
                                         "a taxonomy file to slice by group", "none")])
    if attribute == "gt_size":
        return [gt_sizes(s) for s in samples]
    if attribute == "tag":
        tags = tags or {}
        return [tuple(sorted(tags.get(s.sample_id, ()))) or (UNTAGGED,) for s in samples]
    one = {
        "category": lambda s: s.category,
        "group": lambda s: taxonomy.get(s.category, NO_GROUP),  # type: ignore[union-attr]
        "polarity": lambda s: "negative" if s.negative else "positive",
        "num_gt": lambda s: _bin(len(s.gt_boxes), COUNT_BINS),
        "phrase_words": lambda s: _bin(len(s.phrase.split()), WORD_BINS),
        "image_size": lambda s: _bin(max(s.width, s.height), IMAGE_BINS),
    }[attribute]
    return [(one(s),) for s in samples]


def _ordered(attribute: str, values: set[str]) -> list[str]:
    order = _ORDERED.get(attribute)
    if order is None:
        return sorted(values, key=lambda v: (v in (NO_GROUP, UNTAGGED), v))
    return [v for v in order if v in values]


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def slice_table(result: dict[str, Any], samples: SampleList | Sequence[Sample], attribute: str,
                taxonomy: Mapping[str, str] | None = None,
                tags: Mapping[str, frozenset[str]] | None = None,
                result_b: dict[str, Any] | None = None,
                n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                confidence: float = CONFIDENCE,
                meta: Mapping[str, Mapping[str, Any]] | None = None,
                unit: str = "query", min_count: int = MIN_COUNT) -> SliceTable:
    """Every key metric of ``result`` per value of ``attribute``.

    Args:
        result: evaluator output of ``samples`` (``per_sample`` in the samples' order).
        samples: the task's samples, giving the attributes.
        attribute: one of :data:`ATTRIBUTES`, ``gsd`` or ``meta:KEY``.
        taxonomy: ``{category: group}`` (needed for ``group``).
        tags: ``{query_id: tags}`` (for ``tag``; missing queries are untagged).
        result_b: a second submission's result on the same samples and options: adds B
            and a paired interval of B − A per metric (the same resamples for both).
        n_resamples, seed, confidence: the bootstrap (``numpy.random.Generator(seed)``;
            slices drawn in table order, so the same seed gives the same intervals).
        meta: ``{ann_id: image_meta}`` (:func:`image_meta`; for ``gsd`` and ``meta:KEY``).
        unit: what the intervals resample, ``query`` or ``image``.
        min_count: with B, each slice of at least this many units (``unit``: its images or
            its queries) gets a paired-bootstrap
            p-value of B - A per metric (:func:`~.multiple.bootstrap_p`), and the
            Benjamini-Hochberg q-values of each metric over the slices tested.
    """
    unit_groups([], unit)  # refuse an unknown unit before any work
    rows = result["per_sample"]
    ids = [r["sample_id"] for r in rows]
    if ids != [s.sample_id for s in samples]:
        raise OVEarthInputError([Problem("(slices)", "per_sample.sample_id",
                                         "the samples' queries in their order",
                                         f"{len(ids)} rows for {len(samples)} samples")])
    if result_b is not None:
        check_comparable(result, result_b)
    missing = not_submitted(result) | (set() if result_b is None else not_submitted(result_b))
    specs = [m for m in additive.metrics_of(result) if m.modality not in missing]
    mats_a = [m.matrix(rows) for m in specs]
    mats_b = [m.matrix(result_b["per_sample"]) for m in specs] if result_b is not None else None
    per_query = query_values(samples, attribute, taxonomy, tags, meta)
    members: dict[str, list[int]] = {}
    for i, values in enumerate(per_query):
        for v in values:
            members.setdefault(v, []).append(i)
    rng = np.random.default_rng(seed)
    out = [_slice_value(value, np.array(members[value]), specs, mats_a, mats_b, samples, ids,
                        rng, n_resamples, confidence, unit, attribute == "gt_size", min_count)
           for value in _ordered(attribute, set(members))]
    return SliceTable(attribute, len(rows), n_resamples, seed, confidence,
                      result_b is not None, with_q_values(out), unit, min_count)


def with_q_values(values: list[SliceValue]) -> list[SliceValue]:
    """``values`` with each metric's Benjamini-Hochberg q-value over the slices whose B - A
    was tested (``p_value`` set)."""
    names = [m.name for m in values[0].metrics] if values else []
    q = {name: benjamini_hochberg([next((m.p_value for m in v.metrics if m.name == name), None)
                                   for v in values]) for name in names}
    return [replace(v, metrics=[replace(m, q_value=q[m.name][i]) for m in v.metrics])
            for i, v in enumerate(values)]


def _slice_value(value: str, idx: npt.NDArray[np.int_], specs: Sequence[additive.AdditiveMetric],
                 mats_a: Sequence[FloatArray], mats_b: Sequence[FloatArray] | None,
                 samples: Sequence[Sample], ids: Sequence[str], rng: np.random.Generator,
                 n_resamples: int, confidence: float, unit: str = "query",
                 by_box_size: bool = False, min_count: int = MIN_COUNT) -> SliceValue:
    """One slice (the rows ``idx`` of the per-query piece matrices) and its metrics;
    ``by_box_size``: the slice is a GT size bin, whose GT boxes are those of its size;
    ``min_count``: the fewest units (images or queries, as resampled) B - A is tested on."""
    groups = unit_groups([{"image_path": samples[i].image_path} for i in idx], unit)
    counts = unit_counts(rng, n_resamples, groups)
    metrics = []
    for k, spec in enumerate(specs):
        xa = mats_a[k][idx]
        va = _finite(spec.value(xa.sum(axis=0)))
        dist_a = spec.value(counts @ xa)
        low, high, n_valid = (percentile_interval(dist_a, confidence) if va is not None
                              else (None, None, 0))
        extra: dict[str, Any] = {}
        if mats_b is not None:
            xb = mats_b[k][idx]
            vb = _finite(spec.value(xb.sum(axis=0)))
            diff = None if va is None or vb is None else vb - va
            dist = spec.value(counts @ xb) - dist_a
            dl, dh, _ = (percentile_interval(dist, confidence)
                         if diff is not None else (None, None, 0))
            n_units = int(groups.max()) + 1 if groups.size else 0
            extra = {"b": vb, "diff": diff, "diff_low": dl, "diff_high": dh,
                     "p_value": bootstrap_p(dist) if diff is not None
                     and n_units >= min_count else None}
        metrics.append(SliceMetric(spec.name, spec.modality, spec.metric, va, low, high,
                                   n_valid, **extra))
    chosen = [samples[i] for i in idx]
    return SliceValue(
        value, len(idx), sum(not s.negative for s in chosen), sum(s.negative for s in chosen),
        sum(box_sizes(s).count(value) if by_box_size else len(s.gt_boxes) for s in chosen),
        tuple(ids[i] for i in idx), metrics,
        int(groups.max()) + 1 if groups.size else 0)


def query_form_table(results: Mapping[str, dict[str, Any]],
                     samples: Mapping[str, SampleList | Sequence[Sample]],
                     results_b: Mapping[str, dict[str, Any]] | None = None,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = CONFIDENCE, unit: str = "query",
                     min_count: int = MIN_COUNT) -> SliceTable:
    """"Same target, query form": key metrics per task on the same targets.

    The annotations with a positive query in all three tasks (:func:`.crosstask.join`) are
    the targets; the slice of a form (``vocabulary``, ``referring``, ``reasoning``) is its
    positive queries on them, and its metrics are that task's result on those queries
    alone. Only metrics every task has are listed (presence is open-vocabulary only).
    Intervals resample each slice's queries, as :func:`slice_table` does.

    Args:
        results, samples: per form, the evaluator's result and its samples (in order).
        results_b: per form, a second submission's result (paired B and B − A).
    """
    for form in crosstask.FORMS:
        if form not in results or form not in samples:
            raise OVEarthInputError([Problem("(slices)", "query_form",
                                             "the results of all three tasks", f"no {form}")])
    ids = {f: [r["sample_id"] for r in results[f]["per_sample"]] for f in crosstask.FORMS}
    for f in crosstask.FORMS:
        if ids[f] != [s.sample_id for s in samples[f]]:
            raise OVEarthInputError([Problem("(slices)", f"{f}.per_sample.sample_id",
                                             "the samples' queries in their order",
                                             f"{len(ids[f])} rows for {len(samples[f])} "
                                             "samples")])
        if results_b is not None:
            check_comparable(results[f], results_b[f])
    common = crosstask.common_targets(samples)
    missing = set().union(*(not_submitted(results[f]) for f in crosstask.FORMS))
    if results_b is not None:
        missing |= set().union(*(not_submitted(results_b[f]) for f in crosstask.FORMS))
    names = set.intersection(*({m.name for m in additive.metrics_of(results[f])}
                               for f in crosstask.FORMS))
    specs = [m for m in additive.metrics_of(results["vocabulary"])
             if m.name in names and m.modality not in missing]
    rng = np.random.default_rng(seed)
    out = []
    for f in crosstask.FORMS:
        rows = results[f]["per_sample"]
        mats_a = [m.matrix(rows) for m in specs]
        mats_b = None if results_b is None else [m.matrix(results_b[f]["per_sample"])
                                                 for m in specs]
        idx = np.array([i for i, s in enumerate(samples[f])
                        if not s.negative and s.ann_id in common], dtype=int)
        out.append(_slice_value(f, idx, specs, mats_a, mats_b, samples[f], ids[f], rng,
                                n_resamples, confidence, unit, min_count=min_count))
    return SliceTable(QUERY_FORM, sum(v.num_queries for v in out), n_resamples, seed,
                      confidence, results_b is not None, with_q_values(out), unit, min_count)



def table_to_dict(table: SliceTable, with_ids: bool = False) -> dict[str, Any]:
    """JSON-ready form (``analysis.slices[attribute]``); query ids only when asked."""
    doc = asdict(table)
    for v in doc["values"]:
        if not with_ids:
            del v["query_ids"]
        else:
            v["query_ids"] = list(v["query_ids"])
        if not table.paired:
            for m in v["metrics"]:
                for key in ("b", "diff", "diff_low", "diff_high", "p_value", "q_value"):
                    del m[key]
    return doc


def needs_meta(attribute: str) -> bool:
    """Whether slicing by ``attribute`` needs :func:`image_meta` (``gsd``, ``meta:KEY``)."""
    return attribute == GSD or attribute.startswith(META_PREFIX)


def _meta_values(samples: Sequence[Sample], attribute: str,
                 meta: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, ...]]:
    if attribute == GSD:
        out = []
        for s in samples:
            gsd = meta.get(s.ann_id, {}).get(GSD)
            ok = isinstance(gsd, int | float) and not isinstance(gsd, bool) and (
                math.isfinite(gsd) and gsd > 0)
            out.append((_bin(float(gsd), GSD_BINS) if ok else NO_GSD,))
        return out
    key = attribute[len(META_PREFIX):]
    return [(_meta_text(meta.get(s.ann_id, {}).get(key)),) for s in samples]


def _meta_text(value: object) -> str:
    if value is None:
        return NO_META
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def image_meta(gt_path: str | Path, images_root: str | Path | None = None,
               with_gsd: bool = False) -> dict[str, dict[str, Any]]:
    """``{ann_id: image_meta}`` of a ground-truth file (its annotations' ``image_meta``
    objects; others ignored). ``with_gsd``: an annotation without ``gsd`` gets its image's
    ground sample distance in metres when it is a GeoTIFF with a position on the WGS84
    ellipsoid, in any CRS, of the annotation's pixels (:func:`ovearth_core.georef.pixel_size_m`;
    ``images_root`` defaults to the file's folder)."""
    from ..io import read_json

    root = Path(images_root) if images_root is not None else Path(gt_path).resolve().parent
    return image_meta_of(read_json(gt_path, "ground truth"), root, with_gsd)


def image_meta_of(doc: object, images_root: str | Path, with_gsd: bool = False
                  ) -> dict[str, dict[str, Any]]:
    """:func:`image_meta` of a ground-truth document already read (``images_root``: the
    folder its image paths are relative to)."""
    from ..georef import pixel_size_m
    from ..image_paths import ImagePathError, resolve_image_path

    anns = doc.get("annotations") if isinstance(doc, dict) else None
    root = Path(images_root)
    out: dict[str, dict[str, Any]] = {}
    sizes: dict[tuple[str, tuple[int | None, ...]], float | None] = {}
    for ann in anns if isinstance(anns, list) else []:
        if not isinstance(ann, dict) or not isinstance(ann.get("id"), str | int):
            continue
        raw = ann.get("image_meta")
        meta = dict(raw) if isinstance(raw, dict) else {}
        image = ann.get("image_path")
        if with_gsd and GSD not in meta and isinstance(image, str):
            frame = tuple(v if isinstance(v, int) and not isinstance(v, bool) else None
                          for v in (ann.get("width"), ann.get("height")))
            if (image, frame) not in sizes:
                try:
                    sizes[image, frame] = pixel_size_m(resolve_image_path(root, image), *frame)
                except (ImagePathError, OSError, ValueError):
                    sizes[image, frame] = None
            if sizes[image, frame] is not None:
                meta[GSD] = sizes[image, frame]
        out[str(ann["id"])] = meta
    return out
