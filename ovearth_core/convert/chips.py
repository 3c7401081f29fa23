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

import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from .. import geometry

NMS_IOU = 0.3
CHIP_NAME = "<scene>__<rate>__<x>___<y> (DOTA ImgSplit)"
# Bounds of a chip name's numbers: an offset is a pixel position in a resized scene (nine
# digits: a billion pixels a side, beyond any scene), a rate a resize factor. Larger ones are
# refused as text, before any int() or division can overflow or hit Python's digit limit.
OFFSET_DIGITS = 9
MAX_OFFSET = 10 ** OFFSET_DIGITS - 1
MIN_RATE, MAX_RATE = 0.001, 1000.0
RATE_CHARS = 16
NAME_CHARS = 4096
_NAME = re.compile(r"^(?P<scene>(?:(?!__).)+)__(?P<rate>[0-9.]+)__(?P<x>[0-9]+)___"
                   r"(?P<y>[0-9]+)$", re.DOTALL)
_RATE = re.compile(r"^[0-9]*\.?[0-9]+$")


class ChipNameError(ValueError):
    """A name that is no ImgSplit chip name within the bounds; the message says what was
    expected."""


def read_chip_name(name: object) -> tuple[str, float, int, int]:
    """``(scene, rate, x, y)`` of an ImgSplit chip name, every number within its bounds.

    The scene is what comes before the first ``__`` (as the devkit splits it); the rate a
    decimal from ``MIN_RATE`` to ``MAX_RATE`` (at most ``RATE_CHARS`` characters); the offsets
    integers of at most ``OFFSET_DIGITS`` digits. This is the one reader of chip names.

    >>> read_chip_name("P0001__1__1024___512")
    ('P0001', 1.0, 1024, 512)

    Raises:
        ChipNameError: saying what was expected.
    """
    if not isinstance(name, str) or len(name) > NAME_CHARS:
        raise ChipNameError(f"a chip name {CHIP_NAME} of at most {NAME_CHARS:,} characters")
    found = _NAME.match(name)
    if found is None:
        raise ChipNameError(f"a chip name {CHIP_NAME}")
    rate_text = found["rate"]
    rate = float(rate_text) if len(rate_text) <= RATE_CHARS and _RATE.match(rate_text) else 0.0
    if not MIN_RATE <= rate <= MAX_RATE:
        raise ChipNameError(f"a chip name {CHIP_NAME} whose rate is a decimal from {MIN_RATE:g} "
                            f"to {MAX_RATE:g} (at most {RATE_CHARS} characters)")
    if max(len(found["x"]), len(found["y"])) > OFFSET_DIGITS:
        raise ChipNameError(f"a chip name {CHIP_NAME} whose offsets have at most "
                            f"{OFFSET_DIGITS} digits (0 to {MAX_OFFSET:,})")
    return found["scene"], rate, int(found["x"]), int(found["y"])


def parse_chip_name(name: object) -> tuple[str, float, int, int] | None:
    """:func:`read_chip_name`, ``None`` for any name it refuses.

    >>> parse_chip_name("P0001__1__1024___512")
    ('P0001', 1.0, 1024, 512)
    >>> parse_chip_name("P0001.png") is None
    True
    """
    try:
        return read_chip_name(name)
    except ChipNameError:
        return None


@dataclass(frozen=True)
class ChipDetection:
    """A detection read from a chip's results, its quadrilateral already in scene pixels
    (index ``index`` into the reader's quadrilaterals)."""

    image: str  # the scene
    category: str
    score: float
    index: int
    chip: str


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


# ImgSplit's default chip side (``subsize``): a chip's extent when neither its image, nor the
# split settings, nor the chip names' pattern give it.
DEFAULT_SUBSIZE = 1024
DEFAULT_SOURCE = "ImgSplit's default"


@dataclass(frozen=True)
class Chip:
    """One ImgSplit chip of a scene: ``box`` its extent ``(x0, y0, x1, y1)`` in scene
    pixels; ``sized``: from the chip image's size, else ``side`` pixels a side (in the
    resized scene, cut at its border as ImgSplit cuts it), taken from ``source``: the split
    settings, the chip names' pattern or ImgSplit's default."""

    name: str
    box: tuple[float, float, float, float]
    sized: bool
    side: int = DEFAULT_SUBSIZE
    source: str = DEFAULT_SOURCE


@dataclass(frozen=True)
class SplitSettings:
    """ImgSplit's settings as a submission records them (``"chip_split"``, written by
    ``from-dota --merge-chips``): the chip side ``subsize``, the ``gap`` (``None``: not
    known) and where they came from (``flags``, ``chip names``, ``ImgSplit's default``)."""

    subsize: int
    gap: int | None
    source: str

    def as_json(self) -> dict[str, object]:
        return {"subsize": self.subsize, "gap": self.gap, "source": self.source}


def split_settings(doc: object) -> SplitSettings | None:
    """The ``"chip_split"`` of a submission document, ``None`` when absent or out of bounds
    (a side from 1 to ``MAX_OFFSET``, a gap from 0 to under the side, integers)."""
    raw = doc.get("chip_split") if isinstance(doc, dict) else None
    if not isinstance(raw, dict):
        return None
    side, gap, source = raw.get("subsize"), raw.get("gap"), raw.get("source", "")
    if type(side) is not int or not 0 < side <= MAX_OFFSET:
        return None
    if gap is not None and (type(gap) is not int or not 0 <= gap < side):
        return None
    return SplitSettings(side, gap, source if isinstance(source, str) else "")


def infer_side(names_by_scene: dict[str, list[str]], sizes: dict[str, tuple[int, int]]
               ) -> int | None:
    """The chip side the chip names' pattern gives, ``None`` when it gives none.

    ImgSplit puts the last chip of each row and column flush with the resized scene's
    border, so ``round(width * rate) - x`` of any chip with ``x > 0`` is at least the side,
    and equal to it for a border chip (likewise for y); the smallest such bound over every
    scene, rate and axis is taken (one split run uses one side for every scene).
    """
    bounds = []
    for scene, names in names_by_scene.items():
        if scene not in sizes:
            continue
        width, height = sizes[scene]
        for name in names:
            parsed = parse_chip_name(name)
            if parsed is None or parsed[0] != scene:
                continue
            _, rate, x, y = parsed
            for offset, extent in ((x, width), (y, height)):
                bound = round(extent * rate) - offset
                if offset > 0 and bound > 0:
                    bounds.append(bound)
    return min(bounds) if bounds else None


def scene_extents(names: list[str], scene_size: tuple[int, int],
                  image_sizes: dict[str, tuple[int, int]], settings: SplitSettings | None
                  ) -> list[Chip]:
    """The extents of a scene's chips ``names``: a chip's image size when known
    (``image_sizes``), else the side of the split ``settings``, else of the names' pattern
    (:func:`infer_side`), else ``DEFAULT_SUBSIZE``; each chip says which."""
    if settings is not None:
        side, source = settings.subsize, "split settings"
    else:
        scene = {parsed[0] for n in names if (parsed := parse_chip_name(n)) is not None}
        found = infer_side({s: names for s in scene}, {s: scene_size for s in scene})
        side, source = (found, "chip names") if found else (DEFAULT_SUBSIZE, DEFAULT_SOURCE)
    return [chip_extent(n, scene_size, image_sizes.get(n), side, source) for n in names]


def chips_by_scene(doc: object) -> dict[str, list[str]]:
    """The chip names a submission's boxes carry (``"chips"``, as ``--merge-chips``
    writes them), per scene, sorted; anything else in the document, chip names
    :func:`read_chip_name` refuses included, is ignored."""
    out: dict[str, set[str]] = defaultdict(set)
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    for rows in tasks.values() if isinstance(tasks, dict) else ():
        for row in rows if isinstance(rows, list) else ():
            for key in ("bbox", "oriented_bbox"):
                boxes = row.get(key) if isinstance(row, dict) else None
                for box in boxes if isinstance(boxes, list) else ():
                    names = box.get("chips") if isinstance(box, dict) else None
                    for name in names if isinstance(names, list) else ():
                        parsed = parse_chip_name(name)
                        if parsed is not None:
                            out[parsed[0]].add(name)
    return {scene: sorted(names) for scene, names in sorted(out.items())}


def chip_extent(name: str, scene_size: tuple[int, int],
                chip_size: tuple[int, int] | None = None, side: int = DEFAULT_SUBSIZE,
                source: str = DEFAULT_SOURCE) -> Chip:
    """The extent of chip ``name`` in a ``scene_size = (width, height)`` scene: its offset
    and ``chip_size`` (the chip image's ``(width, height)``, in the scene resized by the
    rate; else ``side`` a side, cut at the resized scene's border) divided by the rate.
    Raises ``ValueError`` (:class:`ChipNameError`) for a name that is no chip name."""
    try:
        _, rate, x, y = read_chip_name(name)
    except ChipNameError as err:
        raise ChipNameError(f"expected {err}, got {name[:60]!r}") from None
    if chip_size is None:
        w = max(0.0, min(side, scene_size[0] * rate - x))
        h = max(0.0, min(side, scene_size[1] * rate - y))
    else:
        w, h = chip_size
    return Chip(name, (x / rate, y / rate, (x + w) / rate, (y + h) / rate),
                chip_size is not None, side, source)


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
