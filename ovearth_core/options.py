"""The evaluation options as one value: :class:`Options` (issue 27).

Every option the evaluator and the analyses take lives here, once: the task, the
modalities as requested, the IoU and score thresholds, the box format, and the average
precision's detection cap and hard negatives. Caches, the leaderboard, the report and the
app's data layer take one ``Options`` value; :func:`ovearth_core.cache.key` turns it into
a cache key from :func:`dataclasses.fields`, so a field added here is in every key without
touching a call site.

Example::

    >>> from dataclasses import replace
    >>> o = Options("vocabulary", "segmentation, bbox", score_threshold=0.3)
    >>> o.modalities, o.score_threshold, o.max_detections
    (('segmentation', 'bbox'), 0.3, 100)
    >>> replace(o, score_threshold=None).score_threshold is None
    True

Normalised once, on construction: the task by its command-line name (``open_vocabulary``
is ``vocabulary``), ``"seg,bbox"`` (the command line) and ``("seg", "bbox")``
(the app) are the same request (the order as given, ``auto`` as ``("auto",)``), thresholds
are floats. Whether the values are allowed is the loader's check
(:func:`ovearth_core.io.load_samples`), which reports a bad option as a problem naming it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any

# CLI task value -> JSON key under "tasks" (re-exported by ovearth_core.types).
TASK_KEYS: dict[str, str] = {
    "vocabulary": "open_vocabulary",
    "referring": "referring",
    "reasoning": "reasoning",
}
_CLI_TASK = {key: cli for cli, key in TASK_KEYS.items()}
# COCOeval's default detection cap per image (``maxDets[-1]``).
COCO_MAX_DETECTIONS = 100
# COCOeval sorts its maxDets [1, 10, N]: a cap below 10 would evaluate at 10.
MIN_MAX_DETECTIONS = 10
# Ranks with their uncertainty (issue 37): resamples of the rank intervals, the level of
# every test and interval (1 - alpha), the fewest units (images or queries, as resampled) a
# category or slice is tested on.
RANK_RESAMPLES = 1000
ALPHA = 0.05
MIN_COUNT = 10
RANK_RESAMPLE_BOUNDS = (100, 20000)
ALPHA_BOUNDS = (0.001, 0.5)
MIN_COUNT_BOUNDS = (1, 100000)
# The commands that take the extensions beyond the spec (--large-masks, --concave-obb): a
# message naming such a flag names them too, since the evaluator's own command (the spec's
# flags, exactly) and the converters do not take it (tests/core/test_flags_named.py).
EXTENSION_COMMANDS = "the analysis, report, suite, leaderboard, audit and hosting commands"


def _modalities(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(m.strip() for m in value.split(","))
    if isinstance(value, Iterable):
        return tuple(str(m).strip() for m in value)
    return (str(value),)


def _number(value: Any) -> Any:
    """A float for an int or float (bools and anything else as given: the loader says
    what is wrong with them)."""
    return float(value) if type(value) in (int, float) else value


@dataclass(frozen=True)
class Options:
    """One evaluation's options (frozen, hashable: a cache key part as it is).

    ``task``: ``vocabulary``/``referring``/``reasoning`` (or a task key of the output);
    ``modalities``: as requested, in the order given (``("auto",)``: inferred from the
    files); ``iou_threshold``: the one-to-one box matching threshold; ``score_threshold``:
    boxes below it are dropped (``None``: none); ``bbox_format``: ``xyxy`` or ``xywh``;
    ``hard_negatives``: AP counts boxes on negative queries as false positives;
    ``max_detections``: COCO-style AP keeps each query's best N boxes; ``large_masks``:
    predicted masks beyond the spec's 100,000,000 pixels are taken (an extension: the
    reference toolkit refuses them); ``concave_obb``: concave oriented boxes (ground truth
    and predictions) are taken and scored as their polygons, as DOTA_devkit scores them (an
    extension: the spec refuses them; a self-crossing order stays refused).
    The statistics' settings (issue 37), none of which changes an evaluation:
    ``rank_resamples``: resamples of the rank intervals; ``alpha``: the level of the rank
    tests (Holm, Nemenyi's critical difference) and of the rank and leader-difference
    intervals (``1 - alpha``; Compare's and Slices' intervals stay at 95 %);
    ``min_count``: the fewest units (images or queries, as resampled) the leader's tests and
    groups, Friedman's test, a category or a slice need to be tested (issue 48);
    ``friedman_blocks``: ``image`` or ``query``, the blocks of Friedman's test.
    Two published AP protocols beside COCO's (issue 50), neither of which changes an
    evaluation: ``nms_ap``: OVDEval's NMS-AP (needs ``hard_negatives``); ``aitod``: AI-TOD's
    sizes, caps and optimal LRP.
    """

    task: str
    modalities: tuple[str, ...]
    iou_threshold: float = 0.5
    score_threshold: float | None = None
    bbox_format: str = "xyxy"
    hard_negatives: bool = False
    max_detections: int = COCO_MAX_DETECTIONS
    large_masks: bool = False
    concave_obb: bool = False
    rank_resamples: int = RANK_RESAMPLES
    alpha: float = ALPHA
    min_count: int = MIN_COUNT
    friedman_blocks: str = "image"
    nms_ap: bool = False
    aitod: bool = False

    def __post_init__(self) -> None:
        # One name per task: the output's key ("open_vocabulary") is the command line's.
        if isinstance(self.task, str):
            object.__setattr__(self, "task", _CLI_TASK.get(self.task, self.task))
        mods = _modalities(self.modalities)
        object.__setattr__(self, "modalities", ("auto",) if mods == ("auto",) else mods)
        object.__setattr__(self, "iou_threshold", _number(self.iou_threshold))
        if self.score_threshold is not None:
            object.__setattr__(self, "score_threshold", _number(self.score_threshold))
        object.__setattr__(self, "alpha", _number(self.alpha))

    @classmethod
    def from_args(cls, args: Any, **overrides: Any) -> Options:
        """The options of a parsed command line (``argparse.Namespace``): each field from
        the attribute of its name (``--iou-threshold`` is ``args.iou_threshold``), its
        default when the command has no such flag; ``overrides`` where the command's flag
        has another shape (the report's repeatable ``--task``)."""
        given = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
        return cls(**{**given, **overrides})

    @property
    def auto(self) -> bool:
        """The modalities are inferred from the files."""
        return self.modalities == ("auto",)

    def evaluator(self) -> Options:
        """The options the evaluator's result depends on: these with the average
        precision's own (``hard_negatives``, ``max_detections``, ``nms_ap``, ``aitod``) and the
        statistics' at
        their defaults, so that one evaluation is one cache entry whatever AP or rank
        settings are asked of it later."""
        return replace(self, hard_negatives=False, max_detections=COCO_MAX_DETECTIONS,
                       rank_resamples=RANK_RESAMPLES, alpha=ALPHA, min_count=MIN_COUNT,
                       friedman_blocks="image", nms_ap=False, aitod=False)

    def loader(self) -> Options:
        """The options the validated samples depend on: these with the IoU threshold and
        the average precision's options at their defaults (a cache of loaded samples keyed
        by this value parses a file once for every IoU threshold and AP setting)."""
        return replace(self.evaluator(), iou_threshold=0.5)

    def key_parts(self) -> dict[str, Any]:
        """Every field as JSON data (tuples as lists), for a cache key."""
        return {f.name: _json(getattr(self, f.name)) for f in fields(self)}


def _json(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
