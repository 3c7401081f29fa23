"""Detections on DOTA ImgSplit chips merged back into whole scenes (``from-dota --merge-chips``).

DOTA_devkit's ``ImgSplit`` resizes a scene by ``rate`` and cuts it into chips named
``<scene>__<rate>__<x>___<y>`` (``P0001__1__1024___512``: scene ``P0001``, rate 1, the chip's
top-left corner at x 1024, y 512 of the resized scene). Its ``ResultMerge.mergebypoly`` maps
each chip detection back with ``poly2origpoly``, ``(coordinate + offset) / rate``, then per
scene and class keeps what ``py_cpu_nms_poly`` keeps at 0.3: detections in the order of
``scores.argsort()[::-1]`` (by score, descending; equal scores as numpy's sort leaves them,
reversed); the top one is kept, every other whose polygon IoU with it is over 0.3 dropped;
repeat. :func:`merge` does the same in the same order (polygon IoU exact, by shapely, on the
boxes as given, concave ones included, as the devkit's ``polyiou`` scores them). Every kept
box keeps the chips it stands for: its own, then those of the detections it suppressed.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import geometry
from .common import Problems

if TYPE_CHECKING:
    from .dota import Quads

NMS_IOU = 0.3
CHIP_NAME = "<scene>__<rate>__<x>___<y> (DOTA ImgSplit)"
_NAME = re.compile(r"^(?P<scene>(?:(?!__).)+)__(?P<rate>[0-9]*\.?[0-9]+)__(?P<x>[0-9]+)___"
                   r"(?P<y>[0-9]+)$")


def parse_chip_name(name: str) -> tuple[str, float, int, int] | None:
    """``(scene, rate, x, y)`` of an ImgSplit chip name, ``None`` for any other name.

    The scene is what comes before the first ``__`` (as the devkit splits it); the rate
    is a positive decimal; the offsets are non-negative integers.

    >>> parse_chip_name("P0001__1__1024___512")
    ('P0001', 1.0, 1024, 512)
    >>> parse_chip_name("P0001.png") is None
    True
    """
    found = _NAME.match(name)
    if found is None:
        return None
    rate = float(found["rate"])
    if not (math.isfinite(rate) and rate > 0):
        return None
    return found["scene"], rate, int(found["x"]), int(found["y"])


@dataclass(frozen=True)
class ChipDetection:
    """A detection read from a chip's results, its quadrilateral already in scene pixels
    (index ``index`` into the reader's quadrilaterals)."""

    image: str  # the scene
    category: str
    score: float
    index: int
    chip: str


def read_chip_results(folder: Path, quads: Quads, sizes: dict[str, tuple[int, int]],
                      bad: Problems, show: bool) -> list[ChipDetection]:
    """The ``Task1_<category>.txt`` files of ``folder``, on chips: each quadrilateral
    mapped to its scene (``(v + offset) / rate``) in ``quads`` in place.

    Problems go to ``bad`` (file, line, ``image_name``): a name that is no chip name, or a
    chip of a scene with no label file.
    """
    from .dota import task1_results  # dota imports this module

    out = []
    for path, cat, name, score, k in task1_results(folder, quads, bad, show):
        chip = parse_chip_name(name)
        line = quads.lines[k]
        if chip is None:
            bad.add(path, "image_name", f"a chip name {CHIP_NAME}", name, line=line)
            continue
        scene, rate, x, y = chip
        if scene not in sizes:
            bad.add(path, "image_name", f"a chip of a scene with a label file "
                    f"({scene}.txt)", name, line=line)
            continue
        quads.points[k] = [(v + (x if i % 2 == 0 else y)) / rate
                           for i, v in enumerate(quads.points[k])]
        out.append(ChipDetection(scene, cat, score, k, name))
    return out


def merge(found: list[ChipDetection], boxes: np.ndarray
          ) -> list[tuple[ChipDetection, tuple[str, ...]]]:
    """Per (scene, class), the detections ``py_cpu_nms_poly`` keeps at ``NMS_IOU``, in the
    order it keeps them, each with the chips it stands for (its own first, then those it
    suppressed, sorted).

    ``boxes``: the normalised quadrilaterals ``(N, 4, 2)`` the detections index. The order
    is the devkit's (:func:`devkit_order`); the pairs over the threshold come from a
    spatial index (:func:`~ovearth_core.geometry.overlapping_pairs`), so time and memory
    follow the overlapping pairs, not the square of the largest group.
    """
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, d in enumerate(found):
        groups[(d.image, d.category)].append(i)
    out = []
    for key in sorted(groups):
        members = [found[i] for i in groups[key]]
        neighbours = _neighbours(boxes[[d.index for d in members]])
        suppressed = bytearray(len(members))
        for j in devkit_order([d.score for d in members]):
            if suppressed[j]:
                continue
            hit = [m for m in neighbours[j] if not suppressed[m]]
            for m in hit:
                suppressed[m] = 1
            suppressed[j] = 1
            d = members[j]
            others = sorted({members[m].chip for m in hit} - {d.chip})
            out.append((d, (d.chip, *others)))
    return out


def devkit_order(scores: list[float]) -> list[int]:
    """The order in which ``py_cpu_nms_poly`` visits a group's detections (given in file
    order): ``scores.argsort()[::-1]``, numpy's default sort reversed. Distinct scores go
    high to low; equal ones come in the order that sort leaves them, reversed (for one
    group of equal scores: last line first), which is the devkit's order on the same numpy."""
    return np.argsort(np.asarray(scores, dtype=np.float64))[::-1].tolist()


def _neighbours(polys: np.ndarray) -> list[list[int]]:
    """For each polygon, the others whose IoU with it is over ``NMS_IOU``."""
    a, b, _ = geometry.overlapping_pairs(polys, NMS_IOU)
    out: list[list[int]] = [[] for _ in range(len(polys))]
    for i, j in zip(a.tolist(), b.tolist(), strict=True):
        out[i].append(j)
        out[j].append(i)
    return out


# ImgSplit's default chip side (``subsize``): a chip's extent when its image is not at hand.
DEFAULT_SUBSIZE = 1024


@dataclass(frozen=True)
class Chip:
    """One ImgSplit chip of a scene: ``box`` its extent ``(x0, y0, x1, y1)`` in scene
    pixels; ``sized``: from the chip image's size (else ``DEFAULT_SUBSIZE`` a side, cut at
    the scene's border as ImgSplit cuts it)."""

    name: str
    box: tuple[float, float, float, float]
    sized: bool


def chips_by_scene(doc: object) -> dict[str, list[str]]:
    """The chip names a submission's boxes carry (``"chips"``, as ``--merge-chips``
    writes them), per scene, sorted; anything else in the document is ignored."""
    out: dict[str, set[str]] = defaultdict(set)
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    for rows in tasks.values() if isinstance(tasks, dict) else ():
        for row in rows if isinstance(rows, list) else ():
            for key in ("bbox", "oriented_bbox"):
                boxes = row.get(key) if isinstance(row, dict) else None
                for box in boxes if isinstance(boxes, list) else ():
                    names = box.get("chips") if isinstance(box, dict) else None
                    for name in names if isinstance(names, list) else ():
                        parsed = parse_chip_name(name) if isinstance(name, str) else None
                        if parsed is not None:
                            out[parsed[0]].add(name)
    return {scene: sorted(names) for scene, names in sorted(out.items())}


def chip_extent(name: str, scene_size: tuple[int, int],
                chip_size: tuple[int, int] | None = None) -> Chip:
    """The extent of chip ``name`` in a ``scene_size = (width, height)`` scene: its offset
    and ``chip_size`` (the chip image's ``(width, height)``, in the scene resized by the
    rate) divided by the rate. Raises ``ValueError`` for a name that is no chip name."""
    parsed = parse_chip_name(name)
    if parsed is None:
        raise ValueError(f"expected a chip name {CHIP_NAME}, got {name!r}")
    _, rate, x, y = parsed
    if chip_size is None:
        w = max(0.0, min(DEFAULT_SUBSIZE, scene_size[0] * rate - x))
        h = max(0.0, min(DEFAULT_SUBSIZE, scene_size[1] * rate - y))
    else:
        w, h = chip_size
    return Chip(name, (x / rate, y / rate, (x + w) / rate, (y + h) / rate),
                chip_size is not None)


def place(box: tuple[float, float, float, float], chips: list[Chip]
          ) -> tuple[str, tuple[str, ...]]:
    """Where the box ``(x0, y0, x1, y1)`` (scene pixels) fell: ``("in", names)``, the chips
    that hold it whole (several where chips overlap); else ``("seam", names)``, the chips
    it overlaps (it crosses their borders); else ``("none", ())``."""
    x0, y0, x1, y1 = box
    inside = tuple(c.name for c in chips if c.box[0] <= x0 and c.box[1] <= y0
                   and x1 <= c.box[2] and y1 <= c.box[3])
    if inside:
        return "in", inside
    touched = tuple(c.name for c in chips if x0 < c.box[2] and c.box[0] < x1
                    and y0 < c.box[3] and c.box[1] < y1)
    return ("seam", touched) if touched else ("none", ())


def place_text(where: tuple[str, tuple[str, ...]], num_chips: int) -> str:
    """:func:`place`'s answer for a reader: ``in chip A``, ``in chips A and B (where they
    overlap)``, ``on the seam between chips A and B``, or none of the scene's chips."""
    kind, names = where
    listed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    if kind == "in":
        return (f"in chip {listed}" if len(names) == 1 else
                f"in chips {listed} (where they overlap)")
    if kind == "seam":
        return (f"on the seam between chips {listed}" if len(names) > 1 else
                f"across the border of chip {listed}")
    return f"in none of the submission's {num_chips} chips of this scene"
