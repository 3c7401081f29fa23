"""Key metrics sliced by a per-query attribute, with counts and bootstrap intervals.

A **slice** is the set of queries sharing one value of an attribute. Every key metric of
:mod:`.additive` is a ratio of sums of per-query pieces, so a slice's metric is the
registry's ``value`` of the slice's summed pieces: the evaluator's number for those queries
alone (``tests/test_slices.py`` checks it against evaluating the subset).

Attributes (:data:`ATTRIBUTES`), one value per query unless said otherwise:

``category``      the ground truth's ``category_name``.
``group``         the category's group in a taxonomy (``{category: group}`` JSON, see
                  :func:`load_taxonomy`); categories it does not list are ``(no group)``.
``polarity``      ``positive`` or ``negative``.
``gt_size``       AI-TOD bin of ``sqrt(w * h)`` of the query's largest GT box (pixels):
                  ``very_tiny`` < 8 <= ``tiny`` < 16 <= ``small`` < 32 <= ``medium`` < 96
                  <= ``large``; ``no_box`` without a GT box (negatives, area classes).
``num_gt``        number of GT boxes: ``0`` ... ``4``, ``5-9``, ``10+``.
``phrase_words``  words of the phrase or query (whitespace split): ``1`` ... ``5``,
                  ``6-9``, ``10+``.
``image_size``    long side of the image (pixels): ``<1024``, ``1024-2047``,
                  ``2048-4095``, ``>=4096``.
``tag``           review tags of the query (:mod:`ovearth_core.review`); a query with
                  several tags is in several slices, one without any in ``untagged``.
``query_form``    across tasks ("same target, query form", :func:`query_form_table`):
                  ``vocabulary``, ``referring``, ``reasoning``: each task's positive
                  queries on the annotations that all three tasks ask for.

Intervals: a percentile bootstrap over the slice's queries (each resample draws the
slice's n queries with replacement, :func:`.compare.resample_counts`), or with
``unit="image"`` over the images of the slice's queries (a drawn image brings its queries
of the slice); ``num_units`` says how many units a slice's interval rests on (flagged
below :data:`.compare.MIN_UNITS` by the app and the report); with a second
result B, the same draws give a paired interval of B − A. A metric undefined in a
resample (zero denominator) leaves that resample out (``n_valid``); undefined observed
values are ``None`` and get no interval.

>>> size_bin(7.99), size_bin(8.0), size_bin(96.0)
('very_tiny', 'tiny', 'large')
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import OVEarthInputError, Problem
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

FloatArray = npt.NDArray[np.float64]
ATTRIBUTES = ("category", "group", "polarity", "gt_size", "num_gt", "phrase_words",
              "image_size", "tag")
QUERY_FORM = "query_form"  # across the three tasks: :func:`query_form_table`
SIZE_BINS = (("very_tiny", 8.0), ("tiny", 16.0), ("small", 32.0), ("medium", 96.0),
             ("large", math.inf))
NO_BOX = "no_box"
IMAGE_BINS = (("<1024", 1024), ("1024-2047", 2048), ("2048-4095", 4096), (">=4096", math.inf))
COUNT_BINS = (("0", 1), ("1", 2), ("2", 3), ("3", 4), ("4", 5), ("5-9", 10), ("10+", math.inf))
WORD_BINS = (("1", 2), ("2", 3), ("3", 4), ("4", 5), ("5", 6), ("6-9", 10), ("10+", math.inf))
NO_GROUP = "(no group)"
UNTAGGED = "untagged"
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
_ORDERED = {"gt_size": [*(n for n, _ in SIZE_BINS), NO_BOX],
            "num_gt": [n for n, _ in COUNT_BINS], "phrase_words": [n for n, _ in WORD_BINS],
            "image_size": [n for n, _ in IMAGE_BINS], "polarity": ["positive", "negative"]}


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


def _bin(x: float, bins: Sequence[tuple[str, float]]) -> str:
    return next(name for name, upper in bins if x < upper)


def size_bin(side: float) -> str:
    """AI-TOD size bin of a box whose ``sqrt(area)`` is ``side`` pixels."""
    return _bin(side, SIZE_BINS)


def gt_size(sample: Sample) -> str:
    """Size bin of the sample's largest GT box (``gt_boxes`` are ``(N, 4)`` xyxy)."""
    b = sample.gt_boxes
    if len(b) == 0:
        return NO_BOX
    area = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    return size_bin(float(np.sqrt(area.max())))


def load_taxonomy(path: str | Path) -> dict[str, str]:
    """``{category: group}`` from a JSON object of strings (raises OVEarthInputError)."""
    name = str(path)
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
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
                 tags: Mapping[str, frozenset[str]] | None = None) -> list[tuple[str, ...]]:
    """The values of ``attribute`` of every sample (a tuple: ``tag`` may give several)."""
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
    if attribute == "tag":
        tags = tags or {}
        return [tuple(sorted(tags.get(s.sample_id, ()))) or (UNTAGGED,) for s in samples]
    one = {
        "category": lambda s: s.category,
        "group": lambda s: taxonomy.get(s.category, NO_GROUP),  # type: ignore[union-attr]
        "polarity": lambda s: "negative" if s.negative else "positive",
        "gt_size": gt_size,
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
                confidence: float = CONFIDENCE, unit: str = "query") -> SliceTable:
    """Every key metric of ``result`` per value of ``attribute``.

    Args:
        result: evaluator output of ``samples`` (``per_sample`` in the samples' order).
        samples: the task's samples, giving the attributes.
        attribute: one of :data:`ATTRIBUTES`.
        taxonomy: ``{category: group}`` (needed for ``group``).
        tags: ``{query_id: tags}`` (for ``tag``; missing queries are untagged).
        result_b: a second submission's result on the same samples and options: adds B
            and a paired interval of B − A per metric (the same resamples for both).
        n_resamples, seed, confidence: the bootstrap (``numpy.random.Generator(seed)``;
            slices drawn in table order, so the same seed gives the same intervals).
        unit: what the intervals resample, ``query`` or ``image``.
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
    per_query = query_values(samples, attribute, taxonomy, tags)
    members: dict[str, list[int]] = {}
    for i, values in enumerate(per_query):
        for v in values:
            members.setdefault(v, []).append(i)
    rng = np.random.default_rng(seed)
    out = [_slice_value(value, np.array(members[value]), specs, mats_a, mats_b, samples, ids,
                        rng, n_resamples, confidence, unit)
           for value in _ordered(attribute, set(members))]
    return SliceTable(attribute, len(rows), n_resamples, seed, confidence,
                      result_b is not None, out, unit)


def _slice_value(value: str, idx: npt.NDArray[np.int_], specs: Sequence[additive.AdditiveMetric],
                 mats_a: Sequence[FloatArray], mats_b: Sequence[FloatArray] | None,
                 samples: Sequence[Sample], ids: Sequence[str], rng: np.random.Generator,
                 n_resamples: int, confidence: float, unit: str = "query") -> SliceValue:
    """One slice (the rows ``idx`` of the per-query piece matrices) and its metrics."""
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
            dl, dh, _ = (percentile_interval(spec.value(counts @ xb) - dist_a, confidence)
                         if diff is not None else (None, None, 0))
            extra = {"b": vb, "diff": diff, "diff_low": dl, "diff_high": dh}
        metrics.append(SliceMetric(spec.name, spec.modality, spec.metric, va, low, high,
                                   n_valid, **extra))
    chosen = [samples[i] for i in idx]
    return SliceValue(
        value, len(idx), sum(not s.negative for s in chosen), sum(s.negative for s in chosen),
        sum(len(s.gt_boxes) for s in chosen), tuple(ids[i] for i in idx), metrics,
        int(groups.max()) + 1 if groups.size else 0)


def query_form_table(results: Mapping[str, dict[str, Any]],
                     samples: Mapping[str, SampleList | Sequence[Sample]],
                     results_b: Mapping[str, dict[str, Any]] | None = None,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = CONFIDENCE, unit: str = "query") -> SliceTable:
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
                                n_resamples, confidence, unit))
    return SliceTable(QUERY_FORM, sum(v.num_queries for v in out), n_resamples, seed,
                      confidence, results_b is not None, out, unit)



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
                for key in ("b", "diff", "diff_low", "diff_high"):
                    del m[key]
    return doc
