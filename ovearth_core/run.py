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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .matching import match
from .types import OVERLAP_EPS, SampleList

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
    ``stray_overlap``: a GT box the matching left unmatched is overlapped (IoU >=
    ``OVERLAP_EPS``) by a predicted box it left unmatched too (a box matched to a packed
    neighbour does not count).
    """

    best_iou: float
    gt_best_iou: FloatArray
    duplicated: bool
    stray_overlap: bool = False

    @classmethod
    def of(cls, iou: FloatArray, threshold: float,
           matches: Sequence[Sequence[float]] | None = None) -> BoxFacts:
        """Facts of an exact IoU matrix ``(G, P)`` at matching threshold ``threshold``;
        ``matches``: the evaluator's ``[gt, pred, iou]`` pairs of it (computed here with
        :func:`~ovearth_core.matching.match` when not given)."""
        if iou.size == 0:
            return cls(0.0, np.zeros(iou.shape[0]), False)
        if matches is None:
            gi, pi = match(iou, threshold)
        else:
            gi = np.array([int(m[0]) for m in matches], dtype=np.intp)
            pi = np.array([int(m[1]) for m in matches], dtype=np.intp)
        free_gt = np.ones(iou.shape[0], dtype=bool)
        free_pred = np.ones(iou.shape[1], dtype=bool)
        free_gt[gi], free_pred[pi] = False, False
        # A maximum matching leaves a box reaching a GT box unmatched only when no maximum
        # matching can use it beside the others.
        duplicated = bool((iou[:, free_pred] >= threshold).any())
        stray = bool((iou[np.ix_(free_gt, free_pred)] >= OVERLAP_EPS).any())
        return cls(float(iou.max()), iou.max(axis=1), duplicated, stray)


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


_SCALAR_FACTS = ("best_iou", "duplicated", "stray_overlap")  # every BoxFacts field but one
_SCALAR_DTYPES = {"best_iou": np.float64, "duplicated": bool, "stray_overlap": bool}


def facts_arrays(box_facts: dict[str, list[BoxFacts]]) -> dict[str, np.ndarray]:
    """The box facts as flat arrays (for the result cache): per modality ``m`` and scalar
    field ``f`` (``best_iou``, ``duplicated``, ``stray_overlap``), ``m/f`` ``(Q,)``;
    ``m/num_gt`` ``(Q,)`` and every query's ``gt_best_iou`` joined, ``m/gt_best_iou``
    ``(sum num_gt,)``. ValueError when the queries' ``gt_best_iou`` dtypes differ (joining
    would convert them)."""
    out: dict[str, np.ndarray] = {}
    for modality, facts in box_facts.items():
        dtypes = {f.gt_best_iou.dtype for f in facts}
        if len(dtypes) > 1:
            raise ValueError(f"{modality}: gt_best_iou of several dtypes "
                             f"{sorted(map(str, dtypes))}")
        for name in _SCALAR_FACTS:
            out[f"{modality}/{name}"] = np.array([getattr(f, name) for f in facts],
                                                 dtype=_SCALAR_DTYPES[name])
        out[f"{modality}/num_gt"] = np.array([f.gt_best_iou.size for f in facts],
                                             dtype=np.int64)
        out[f"{modality}/gt_best_iou"] = (np.concatenate([f.gt_best_iou for f in facts])
                                          if facts else np.zeros(0))
    return out


def facts_from_arrays(arrays: dict[str, np.ndarray], modalities: list[str]
                      ) -> dict[str, list[BoxFacts]]:
    """:func:`facts_arrays` inverted (Python floats and bools, as :meth:`BoxFacts.of`
    makes them; each ``gt_best_iou`` a view of the joined array)."""
    out: dict[str, list[BoxFacts]] = {}
    for modality in modalities:
        counts = arrays[f"{modality}/num_gt"]
        parts = np.split(arrays[f"{modality}/gt_best_iou"], np.cumsum(counts)[:-1]) if len(
            counts) else []
        scalars = [arrays[f"{modality}/{name}"].tolist() for name in _SCALAR_FACTS]
        out[modality] = [BoxFacts(b, g, d, s) for b, g, d, s in zip(
            scalars[0], parts, scalars[1], scalars[2], strict=True)]
    return out
