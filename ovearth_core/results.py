"""A typed, read-only view of one evaluation's results: the reader of the spec's output.

The evaluator (:func:`ovearth_core.evaluate.evaluate_samples`) returns the spec's output as
a dict and writes it out unchanged; :meth:`Results.of` reads such a dict once, whole, into
frozen records. A record's fields are the keys of its JSON object, by name (field
``positive_micro_miou`` is key ``"positive_micro_miou"``), except where a key is no Python
name, declared once beside the field: ``positive_mean_micro_f1@[0.5:0.95]`` is
``positive_mean_micro_f1_50_95`` and ``Pr@0.5`` ... ``Pr@0.9`` are ``precision_at[0.5]`` ...
``precision_at[0.9]``. Values are the dict's own (no number is converted), null is
``None``, lists are tuples, objects of named keys are read-only mappings in the dict's
order (``key_metrics``, :class:`ReadOnlyMap`), a match ``[gt, pred, iou]`` is a :class:`Match`.

Keys the output has for open vocabulary only (``num_negative``, ``negative_accuracy``,
``negative_false_positive_rate``, ``presence``, ``gres_giou``, ``gres_ciou``,
``rmse_with_negatives``, a category's ``presence``) are ``None`` for the other tasks. A
disabled modality's blocks are ``None`` (summary, per-sample entry, per-category block),
and only then.

``json`` of every record is the JSON object it was read from: what a page hands to the
core's readers of the output (figures, drawing, comparisons), never what it reads a key of.

Example::

    >>> from ovearth_core.evaluate import evaluate_samples        # doctest: +SKIP
    >>> view = Results.of(evaluate_samples(samples))              # doctest: +SKIP
    >>> view.config.modalities, view.summary.seg.positive_micro_miou  # doctest: +SKIP
    (('segmentation',), 0.71)
    >>> view.row("ov_000001").seg.iou                             # doctest: +SKIP
    0.7153

A dict that is not such an output (a key missing or unknown, a value of the wrong type, a
modality's block null while it is enabled, a query_id twice) raises
:class:`~ovearth_core.errors.OVEarthInputError` naming each problem's field path (and
query_id), what was expected and what was found; every problem is collected first.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, ClassVar, NamedTuple

from .errors import OVEarthInputError, Problem, describe
from .field_metrics import SIZE_BINS
from .metrics import DET_KEY_METRICS, SEG_KEY_METRICS
from .options import TASK_KEYS
from .presence import presence_cell
from .types import IOU_THRESHOLDS, MODALITIES, OUTPUT_KEYS, PR_THRESHOLDS

OPEN_VOCABULARY = "open_vocabulary"
SOURCE = "(results)"  # the file a problem names when the caller gives none


def _key(key: str | None = None, *, open_vocab_only: bool = False,
         names: tuple[str, ...] | None = None,
         group: Mapping[str, Any] | None = None) -> Any:
    """A field read from JSON key ``key`` (default: the field's name); ``open_vocab_only``:
    the output has the key for open vocabulary only (``None`` for the other tasks);
    ``names``: the keys of a mapping field, in order; ``group``: the field is a mapping
    gathered from several keys of the object (``{json_key: mapping_key}``)."""
    return field(metadata={"key": key, "open_vocab_only": open_vocab_only, "names": names,
                           "group": group})


class ReadOnlyMap(Mapping[Any, Any]):
    """A mapping that cannot be changed (unlike ``types.MappingProxyType``, it pickles);
    equal to any mapping of the same items."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[Any, Any]):
        self._items = dict(items)

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"ReadOnlyMap({self._items!r})"


def _json() -> Any:
    """The ``json`` field of a record: the object it was read from (``{}`` built by hand)."""
    return field(default_factory=dict, compare=False, repr=False, kw_only=True)


_PR_AT = {f"Pr@{t}": t for t in PR_THRESHOLDS}
_BY_IOU = tuple(f"{t:.2f}" for t in IOU_THRESHOLDS)


@dataclass(frozen=True)
class RunConfig:
    """The options the run was evaluated with (``results["config"]`` and ``task``)."""

    task: str = field(metadata={"task": True})  # the output's top-level "task"
    iou_threshold: float
    modalities: tuple[str, ...]
    score_threshold: float | None
    bbox_format: str
    json: Mapping[str, Any] = _json()
    # Written only when on: the extensions beyond the spec a run was evaluated with.
    OPTIONAL_KEYS = ("concave_obb",)

    @property
    def concave_obb(self) -> bool:
        """Concave oriented boxes were taken (the option ``concave_obb``)."""
        return self.json.get("concave_obb") is True

    @classmethod
    def of(cls, results: Mapping[str, Any], file: str = SOURCE) -> RunConfig:
        """The config of a results dict alone (raises
        :class:`~ovearth_core.errors.OVEarthInputError` as :meth:`Results.of` would)."""
        return _block_of(cls, results, "config", file)


@dataclass(frozen=True)
class Presence:
    """The presence 2x2 table and its metrics (open vocabulary's ``summary.presence``)."""

    tp: int
    fp: int
    tn: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None
    accuracy: float | None
    fpr: float | None
    mcc: float | None
    key_metrics: Mapping[str, float | None] = _key(names=("mcc",))
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class SegSummary:
    """``summary.seg``: segmentation over the evaluated positive queries."""

    num_samples_evaluated: int
    num_positive_evaluated: int
    positive_micro_miou: float | None
    positive_macro_miou: float | None
    positive_macro_dice: float | None
    positive_macro_precision: float | None
    positive_macro_recall: float | None
    precision_at: Mapping[float, float | None] = _key(group=_PR_AT)
    annotation_macro_miou: float | None
    category_macro_miou: float | None
    gres_giou: float | None = _key(open_vocab_only=True)
    gres_ciou: float | None = _key(open_vocab_only=True)
    category_cum_miou: float | None
    key_metrics: Mapping[str, float | None] = _key(names=SEG_KEY_METRICS)
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class Grounding:
    """``summary.<box>.grounding``: each evaluated query's top-1 box (RSVG style)."""

    num_evaluated: int
    num_single_target: int
    precision_at: Mapping[float, float | None] = _key(group=_PR_AT)
    mean_iou: float | None
    cum_iou: float | None
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class Counting:
    """``summary.<box>.counting``: predicted against GT box counts."""

    num_evaluated: int
    mae: float | None
    rmse: float | None
    mean_gt: float | None
    mean_pred: float | None
    rmse_with_negatives: float | None = _key(open_vocab_only=True)
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class SizeBin:
    """One AI-TOD size bin of ``summary.<box>.by_size``."""

    num_gt: int
    tp: int
    fn: int
    recall: float | None
    num_pred: int
    matched_pred: int
    precision: float | None
    f1: float | None
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class DetSummary:
    """``summary.bbox`` / ``summary.oriented_bbox``: detection over the evaluated positive
    queries."""

    num_samples_evaluated: int
    num_positive_evaluated: int
    tp: int
    fp: int
    fn: int
    positive_micro_precision: float | None
    positive_micro_recall: float | None
    positive_micro_f1: float | None
    positive_macro_f1: float | None
    positive_macro_matched_iou: float | None
    positive_mean_micro_f1_50_95: float | None = _key("positive_mean_micro_f1@[0.5:0.95]")
    positive_micro_matched_iou: float | None
    positive_micro_f1_by_iou: Mapping[str, float | None] = _key(names=_BY_IOU)
    grounding: Grounding | None
    counting: Counting | None
    by_size: Mapping[str, SizeBin] = _key(names=tuple(name for name, _ in SIZE_BINS))
    key_metrics: Mapping[str, float | None] = _key(names=DET_KEY_METRICS)
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class Summary:
    """``summary``: counts, presence (open vocabulary) and each modality's block (``None``
    when the modality was not evaluated)."""

    num_samples: int
    num_positive: int
    num_negative: int | None = _key(open_vocab_only=True)
    negative_accuracy: float | None = _key(open_vocab_only=True)
    negative_false_positive_rate: float | None = _key(open_vocab_only=True)
    presence: Presence | None = _key(open_vocab_only=True)
    seg: SegSummary | None
    bbox: DetSummary | None
    oriented_bbox: DetSummary | None
    json: Mapping[str, Any] = _json()

    def block(self, output_key: str) -> SegSummary | DetSummary | None:
        """The block of ``seg``, ``bbox`` or ``oriented_bbox`` (``None``: not evaluated)."""
        return _block(self, output_key)


class Match(NamedTuple):
    """One matched pair of a query at the run's IoU threshold: box indices and IoU."""

    gt: int
    pred: int
    iou: float


@dataclass(frozen=True)
class SegEntry:
    """A query's ``seg`` entry (``evaluated``: a positive query with a GT mask)."""

    gt_area: int
    pred_area: int
    intersection: int
    union: int
    iou: float | None
    dice: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    gt_present: bool
    pred_present: bool
    evaluated: bool
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class DetEntry:
    """A query's ``bbox`` / ``oriented_bbox`` entry (``evaluated``: a positive query with
    GT boxes); ``matches`` at the run's threshold, ``tp_at`` at 0.50 ... 0.95."""

    num_gt: int
    num_pred: int
    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None
    mean_matched_iou: float | None
    gt_present: bool
    pred_present: bool
    evaluated: bool
    matches: tuple[Match, ...]
    tp_at: tuple[int, ...]
    top1_iou: float | None
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class QueryRow:
    """One query's ``per_sample`` row."""

    sample_id: str
    phrase: str
    negative: bool
    gt_present: bool
    pred_present: bool
    image_path: str
    ann_id: str
    category: str
    seg: SegEntry | None
    bbox: DetEntry | None
    oriented_bbox: DetEntry | None
    json: Mapping[str, Any] = _json()
    ID_KEY: ClassVar[str] = "sample_id"  # names the query in a problem

    @property
    def query_id(self) -> str:
        return self.sample_id

    @property
    def presence(self) -> str:
        """:func:`~ovearth_core.presence.presence_cell` of the query."""
        return presence_cell(self.gt_present, self.pred_present)

    def block(self, output_key: str) -> SegEntry | DetEntry | None:
        """The entry of ``seg``, ``bbox`` or ``oriented_bbox`` (``None``: not evaluated)."""
        return _block(self, output_key)


@dataclass(frozen=True)
class CategoryPresence:
    """A category's presence counts (open vocabulary)."""

    tp: int
    fp: int
    tn: int
    fn: int
    accuracy: float | None
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class CategorySeg:
    num_evaluated: int
    miou: float | None
    cum_iou: float | None
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class CategoryDet:
    num_evaluated: int
    tp: int
    fp: int
    fn: int
    micro_f1: float | None
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class CategoryRow:
    """One category's ``per_category`` row."""

    category: str
    num_queries: int
    num_positive: int
    num_negative: int
    presence: CategoryPresence | None = _key(open_vocab_only=True)
    seg: CategorySeg | None
    bbox: CategoryDet | None
    oriented_bbox: CategoryDet | None
    json: Mapping[str, Any] = _json()

    def block(self, output_key: str) -> CategorySeg | CategoryDet | None:
        return _block(self, output_key)


@dataclass(frozen=True)
class Coverage:
    """``coverage``: what the submission holds for the task (:mod:`ovearth_core.coverage`)."""

    num_queries: int
    num_with_prediction_row: int
    num_missing_prediction_rows: int
    first_missing_query_ids: tuple[str, ...]
    unknown_task_keys: tuple[str, ...]
    submitted_modalities: tuple[str, ...]
    not_submitted_modalities: tuple[str, ...]
    json: Mapping[str, Any] = _json()

    @classmethod
    def of(cls, results: Mapping[str, Any], file: str = SOURCE) -> Coverage:
        """The coverage block of a results dict alone (a leaderboard skips a submission
        without rows on it, without reading the rest)."""
        return _block_of(cls, results, "coverage", file)


@dataclass(frozen=True)
class ResultWarning:
    """One of ``warnings``: a coverage warning's code and message."""

    code: str
    message: str
    json: Mapping[str, Any] = _json()


@dataclass(frozen=True)
class Results:
    """One evaluation's results, typed (:meth:`of`); rows are looked up by query_id."""

    config: RunConfig
    summary: Summary
    per_sample: tuple[QueryRow, ...]
    per_category: tuple[CategoryRow, ...]
    coverage: Coverage
    warnings: tuple[ResultWarning, ...]
    json: Mapping[str, Any] = _json()

    @classmethod
    def of(cls, results: Mapping[str, Any], file: str = SOURCE) -> Results:
        """The view of ``results`` (the evaluator's output dict); ``file`` names it in a
        problem. Raises :class:`~ovearth_core.errors.OVEarthInputError` with every problem
        found."""
        ctx = _Context(file)
        ctx.read_task(results)
        ctx.raise_if_any()  # without the task, which keys belong is unknown
        view = _read(Results, results, "", ctx, extra=("task",))
        if not ctx.problems:
            _check_blocks(view, ctx)
        ctx.raise_if_any()
        return view

    @property
    def task(self) -> str:
        return self.config.task

    @functools.cached_property
    def _rows(self) -> dict[str, QueryRow]:
        return {r.sample_id: r for r in self.per_sample}

    def has(self, query_id: str) -> bool:
        return query_id in self._rows

    def row(self, query_id: str) -> QueryRow:
        """The query's row; KeyError naming it when absent."""
        try:
            return self._rows[query_id]
        except KeyError:
            raise KeyError(f"query_id {query_id!r} is not among the {len(self.per_sample)} "
                           f"per_sample rows of this run (task {self.task!r})") from None


# --- The reader ---------------------------------------------------------------------------
# A record class is read by the table of its fields (name, JSON key, reader), made from its
# annotations once; a reader checks a value's type, adds a problem when it is wrong and
# goes on, so that one pass finds every problem.

_ABSENT = object()


class _Context:
    """Where the reader is (file, task, query_id) and what it found wrong so far."""

    __slots__ = ("file", "task", "query_id", "problems")

    def __init__(self, file: str):
        self.file = file
        self.task = ""
        self.query_id: str | None = None
        self.problems: list[Problem] = []

    def add(self, path: str, expected: str, found: Any) -> None:
        self.problems.append(Problem(self.file, path or "(top level)", expected,
                                     "no such key" if found is _ABSENT else describe(found),
                                     self.query_id))

    def raise_if_any(self) -> None:
        if self.problems:
            raise OVEarthInputError(self.problems)

    def read_task(self, results: Any) -> None:
        """The output's ``task`` (which keys belong depends on it)."""
        if not isinstance(results, Mapping):
            self.add("", "an object (the evaluator's results)", results)
            return
        task = results.get("task", _ABSENT)
        if task in TASK_KEYS.values():
            self.task = task
        else:
            self.add("task", f"one of {', '.join(TASK_KEYS.values())}", task)


@dataclass(frozen=True)
class _Reader:
    """Reads one JSON value into its typed form (``None`` after a problem)."""

    expected: str
    read: Callable[[Any, str, _Context], Any]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _or_null(expected: str, optional: bool) -> str:
    return f"{expected} or null" if optional else expected


def _scalar(kinds: tuple[type, ...], expected: str, optional: bool) -> _Reader:
    expected = _or_null(expected, optional)

    def read(value: Any, path: str, ctx: _Context) -> Any:
        if type(value) in kinds or (optional and value is None):  # bool is no int here
            return value
        ctx.add(path, expected, value)
        return None
    return _Reader(expected, read)


def _sequence(inner: _Reader) -> _Reader:
    expected = f"a list ({inner.expected} each)"

    def read(value: Any, path: str, ctx: _Context) -> tuple[Any, ...]:
        if not isinstance(value, list):
            ctx.add(path, expected, value)
            return ()
        return tuple([inner.read(v, f"{path}[{i}]", ctx) for i, v in enumerate(value)])
    return _Reader(expected, read)


def _read_match(value: Any, path: str, ctx: _Context) -> Match | None:
    if (isinstance(value, list) and len(value) == 3 and type(value[0]) is int
            and type(value[1]) is int and type(value[2]) in (int, float)):
        return Match(*value)
    ctx.add(path, "[gt index, pred index, IoU]", value)
    return None


def _mapping(inner: _Reader, names: tuple[str, ...] | None) -> _Reader:
    expected = ("an object" + (f" with the keys {', '.join(names)}" if names else "")
                + f" ({inner.expected} each)")

    def read(value: Any, path: str, ctx: _Context) -> Any:
        if not isinstance(value, Mapping) or (names is not None and tuple(value) != names):
            ctx.add(path, expected, value)
            return None
        return ReadOnlyMap({k: inner.read(v, _join(path, k), ctx)
                                       for k, v in value.items()})
    return _Reader(expected, read)


def _record(cls: type, optional: bool) -> _Reader:
    expected = _or_null(f"an object ({cls.__name__})", optional)

    def read(value: Any, path: str, ctx: _Context) -> Any:
        if optional and value is None:
            return None
        return _read(cls, value, path, ctx, expected=expected)
    return _Reader(expected, read)


_SCALARS: dict[Any, tuple[tuple[type, ...], str]] = {
    int: ((int,), "an integer"), float: ((int, float), "a number"),
    bool: ((bool,), "true or false"), str: ((str,), "a string")}


def _reader(tp: Any, names: tuple[str, ...] | None = None, optional: bool = False
            ) -> _Reader:
    """The reader of a field annotated ``tp`` (``names``: a mapping's keys, in order;
    ``optional``: null allowed)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in args if a is not type(None)]
        return _reader(inner, names, optional=True)
    if tp in _SCALARS:
        return _scalar(*_SCALARS[tp], optional)
    if is_dataclass(tp):
        return _record(tp, optional)
    if optional:
        raise TypeError(f"no reader for {tp!r} or null")
    if tp is Match:
        return _Reader("[gt index, pred index, IoU]", _read_match)
    if origin is tuple:
        return _sequence(_reader(args[0]))
    if origin is Mapping:
        return _mapping(_reader(args[1]), names)
    raise TypeError(f"no reader for {tp!r}")


@dataclass(frozen=True)
class _Field:
    name: str
    key: str
    reader: _Reader
    open_vocab_only: bool
    group: Mapping[str, Any] | None  # {json key: mapping key} of a gathered field
    task: bool  # the run's task, not read from the object


@functools.cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in fields(cls):
        if f.name == "json":
            continue
        meta = f.metadata
        group = meta.get("group")
        tp = typing.get_args(hints[f.name])[1] if group else hints[f.name]
        out.append(_Field(f.name, meta.get("key") or f.name, _reader(tp, meta.get("names")),
                          bool(meta.get("open_vocab_only")), group, bool(meta.get("task"))))
    return tuple(out)


@functools.cache
def _keys(cls: type, open_vocab: bool, extra: tuple[str, ...]) -> frozenset[str]:
    """The JSON keys of ``cls``'s object in a task's output."""
    out = set(extra)
    for f in _fields(cls):
        if not f.task and (open_vocab or not f.open_vocab_only):
            out.update(f.group or (f.key,))
    return frozenset(out)


def _read(cls: type, obj: Any, path: str, ctx: _Context, extra: tuple[str, ...] = (),
          expected: str | None = None) -> Any:
    """``cls`` read from the JSON object ``obj`` at ``path`` (``None`` after adding a
    problem, ``expected`` or "an object", when ``obj`` is no object); ``extra``: more keys
    ``obj`` has, read elsewhere."""
    if not isinstance(obj, Mapping):
        ctx.add(path, expected or f"an object ({cls.__name__})", obj)
        return None
    outer = ctx.query_id
    id_key = getattr(cls, "ID_KEY", None)
    if id_key is not None and isinstance(obj.get(id_key), str):
        ctx.query_id = obj[id_key]
    open_vocab = ctx.task == OPEN_VOCABULARY
    values: dict[str, Any] = {}
    for f in _fields(cls):
        if f.task:
            values[f.name] = ctx.task
        elif f.open_vocab_only and not open_vocab:
            values[f.name] = None
        elif f.group is not None:
            values[f.name] = ReadOnlyMap({
                name: _value(f, obj, key, path, ctx) for key, name in f.group.items()})
        else:
            values[f.name] = _value(f, obj, f.key, path, ctx)
    keys = _keys(cls, open_vocab, extra + getattr(cls, "OPTIONAL_KEYS", ()))
    if len(obj) != len(keys) or not keys.issuperset(obj):
        for key in obj:
            if key not in keys:
                ctx.add(_join(path, str(key)), f"only the keys {', '.join(sorted(keys))} "
                        f"({cls.__name__}, {ctx.task} task)", obj[key])
    ctx.query_id = outer
    return cls(**values, json=obj)


def _value(f: _Field, obj: Mapping[str, Any], key: str, path: str, ctx: _Context) -> Any:
    value = obj.get(key, _ABSENT)
    if value is _ABSENT:
        ctx.add(_join(path, key), f.reader.expected, value)
        return None
    return f.reader.read(value, _join(path, key), ctx)


def _block_of(cls: type, results: Any, key: str, file: str) -> Any:
    """``cls`` read from ``results[key]`` alone."""
    ctx = _Context(file)
    ctx.read_task(results)
    ctx.raise_if_any()
    out = _read(cls, results.get(key, _ABSENT), key, ctx)
    ctx.raise_if_any()
    return out


def _block(record: Any, output_key: str) -> Any:
    if output_key not in OUTPUT_KEYS.values():
        raise KeyError(f"{output_key!r} is not a modality's output key "
                       f"({', '.join(OUTPUT_KEYS.values())})")
    return getattr(record, output_key)


def _check_blocks(view: Results, ctx: _Context) -> None:
    """The modalities are the spec's; each modality's blocks are null exactly when it is
    not enabled; every query_id is in ``per_sample`` once."""
    enabled = view.config.modalities
    for m in enabled:
        if m not in MODALITIES:
            ctx.add("config.modalities", f"modalities among {', '.join(MODALITIES)}", m)
    records: list[tuple[Any, str, str | None]] = [(view.summary, "summary", None)]
    records += [(r, f"per_sample[{i}]", r.sample_id) for i, r in enumerate(view.per_sample)]
    records += [(c, f"per_category[{i}]", None) for i, c in enumerate(view.per_category)]
    for modality, key in OUTPUT_KEYS.items():
        on = modality in enabled
        for record, path, query_id in records:
            block = getattr(record, key)
            if (block is None) == on:
                ctx.query_id = query_id
                ctx.add(_join(path, key), f"an object ({modality} is enabled)" if on
                        else f"null ({modality} is not enabled)", None if on else block.json)
    ctx.query_id = None
    seen: set[str] = set()
    for i, r in enumerate(view.per_sample):
        if r.sample_id in seen:
            ctx.query_id = r.sample_id
            ctx.add(f"per_sample[{i}].sample_id", "each query_id once (a repeated row)",
                    r.sample_id)
        seen.add(r.sample_id)
    ctx.query_id = None
