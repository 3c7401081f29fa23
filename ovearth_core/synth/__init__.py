"""Deterministic generator of synthetic OVEarth-format benchmarks.

``python -m ovearth_core.synth --scale {demo,full} --out DIR [--seed N] [--no-images]`` writes
``DIR/ground_truth.json``, ``DIR/images/...`` and ``DIR/predictions/<persona>.json``.

Modules, in pipeline order: :mod:`.taxonomy` (categories), :mod:`.plan` (exact counts per
scale), :mod:`.layout` (object polygons), :mod:`.language` (queries), :mod:`.groundtruth`
(annotations and tasks), :mod:`.personas` (submissions), :mod:`.scene` (drawing),
:mod:`.writer` (files) and :mod:`.geom` (shapes, masks, boxes).
"""

from .plan import SCALES
from .writer import generate

__all__ = ["SCALES", "generate"]
