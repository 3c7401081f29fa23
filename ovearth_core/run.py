"""A typed view of one evaluation run, and what the evaluation keeps for later stages.

:func:`ovearth_core.evaluate.evaluate_run` returns a :class:`Run`: the spec's output dict
(``results``, unchanged) together with the samples it scored and, per box modality and
query, the :class:`BoxFacts` the failure tags and the explorer need (best IoU of any pair,
each GT box's best IoU, duplicate hits). They are taken from the IoU matrices the
evaluation computes anyway, so nothing downstream computes an IoU matrix again. Only these
few numbers per query are kept, never the matrices (memory stays bounded by the largest
query, not the file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .matching import match
from .types import SampleList

FloatArray = npt.NDArray[np.float64]
BOX_KEYS = ("bbox", "oriented_bbox")


@dataclass(frozen=True)
class BoxFacts:
    """What one query's ``(G, P)`` box IoU matrix says beyond the matching.

    ``best_iou``: the highest IoU of any GT/predicted pair (0 with no pair);
    ``gt_best_iou``: per GT box, its highest IoU with any prediction, ``(G,)``;
    ``duplicated``: some prediction reaches IoU >= the run's threshold with a GT box, yet
    no maximum matching can use it beside the others (more predictions reach a GT box than
    the maximum matching pairs). Packed neighbours, each box also overlapping the next GT
    box, are no duplicates.
    """

    best_iou: float
    gt_best_iou: FloatArray
    duplicated: bool

    @classmethod
    def of(cls, iou: FloatArray, threshold: float) -> BoxFacts:
        """Facts of an exact IoU matrix ``(G, P)`` at matching threshold ``threshold``."""
        if iou.size == 0:
            return cls(0.0, np.zeros(iou.shape[0]), False)
        valid = iou >= threshold
        # A GT box reached by one prediction at most leaves every reaching prediction
        # matchable: only otherwise is the maximum matching needed.
        duplicated = bool((valid.sum(axis=1) >= 2).any()) and (
            int(valid.any(axis=0).sum()) > len(match(iou, threshold)[0]))
        return cls(float(iou.max()), iou.max(axis=1), duplicated)


@dataclass(frozen=True)
class RunConfig:
    """The options the run was evaluated with (``results["config"]``, typed)."""

    task: str
    iou_threshold: float
    modalities: tuple[str, ...]
    score_threshold: float | None
    bbox_format: str


@dataclass(frozen=True)
class Run:
    """One evaluated task: results JSON, its samples (same order) and kept box facts."""

    results: dict[str, Any]
    samples: SampleList
    box_facts: dict[str, list[BoxFacts]]

    @property
    def config(self) -> RunConfig:
        c = self.results["config"]
        return RunConfig(self.results["task"], c["iou_threshold"], tuple(c["modalities"]),
                         c["score_threshold"], c["bbox_format"])

    @property
    def summary(self) -> dict[str, Any]:
        return self.results["summary"]

    @property
    def per_sample(self) -> list[dict[str, Any]]:
        return self.results["per_sample"]

    def facts(self, modality: str, index: int) -> BoxFacts | None:
        """Box facts of query ``index`` (``None`` when the modality was not evaluated)."""
        kept = self.box_facts.get(modality)
        return None if kept is None else kept[index]
