"""COCO run-length-encoded masks: validation and statistics in the RLE domain.

This is the only module that imports pycocotools.

Format (COCO RLE, as the spec's "Segmentation" section defines it):
``{"size": [height, width], "counts": ...}`` where ``counts`` is either a list
of non-negative run lengths (uncompressed) or COCO's compressed string. Runs
alternate background/foreground starting with background, over the image in
column-major (Fortran) order, and must sum to ``height * width``.

Inside the package a mask is a pycocotools RLE dict with ``bytes`` counts (and,
once known, its foreground area under ``"_area"``), or ``None`` for an empty
prediction (``null``, a missing field, an all-zero mask, or the
``{"size": [0, 0], "counts": []}`` sentinel).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .lazymodule import LazyModule
from .options import EXTENSION_COMMANDS

# pycocotools is imported on first use (``--help`` of the commands does not need it).
cocomask: Any = LazyModule("pycocotools.mask", globals(), "cocomask")

# pycocotools' Cython area() asks numpy 2 for a copy-free array on every call and numpy
# warns each time; the result is correct, so silence exactly that message.
warnings.filterwarnings("ignore", message="__array__ implementation doesn't accept a copy keyword",
                        category=DeprecationWarning)

# The one size limit of a mask, and why: pycocotools' compressed-string codec (every mask
# it merges or intersects goes through it) sign-extends a value of at most six 5-bit
# characters correctly (``-1 << 5*k`` on a C int: undefined from seven on), so every run
# length and every delta of two runs must lie within +-2**29, which holds for every mask
# of fewer than 2**29 pixels (a 23,170 x 23,170 scene; DOTA's and iSAID's largest are
# 20,000 x 20,000). Masks are never decoded whole (scores on runs, display by window), so
# the size costs no memory (issue 34).
MAX_PIXELS = 2**29 - 1
# The spec's cap on a *predicted* mask ("A single mask may contain at most 100,000,000
# pixels"): kept by default so that what we accept the reference toolkit accepts; the option
# ``large_masks`` (``--large-masks``) takes predictions up to MAX_PIXELS, as ground truths are.
SPEC_MAX_PIXELS = 100_000_000
_MAX_CHARS_PER_VALUE = 6
_CAP_REASON = (f"at most {MAX_PIXELS:,} pixels (2**29 - 1: the most pycocotools' compressed "
               "RLE codec encodes exactly)")
_SPEC_CAP_REASON = (f"at most {SPEC_MAX_PIXELS:,} pixels (the spec's cap on a predicted mask; "
                    f"--large-masks of {EXTENSION_COMMANDS}, or 'Masks beyond the spec's cap' "
                    f"in the app, takes up to {MAX_PIXELS:,})")

Rle = dict[str, Any]
_AREA = "_area"  # cached foreground pixel count inside a mask dict


class FieldError(Exception):
    """A single invalid value: ``field`` is relative to the value being parsed."""

    def __init__(self, field: str, expected: str, found: object):
        super().__init__(field, expected, found)
        self.field = field
        self.expected = expected
        self.found = found


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def compressed_counts(counts: str) -> npt.NDArray[np.int64]:
    """Run lengths of a COCO compressed RLE string, as pycocotools reads them.

    Mirrors ``rleFrString`` of pycocotools (LEB128-like 5-bit groups offset by
    48, a sign bit, and deltas against the run two places back from the fourth
    run on) so that malformed strings are rejected before pycocotools sees them.
    Decoded :data:`_SCAN_CHARS` characters at a time: the memory is the result (8 bytes
    per run) and a constant, whatever the length of the string.

    Raises:
        FieldError: on characters outside the alphabet, a truncated value or a
            value too large for any mask within the pixel cap.
    """
    out = np.empty(_check_compressed(counts), dtype=np.int64)
    for first, runs in _pieces_of_runs(counts):
        out[first:first + runs.size] = runs
    return out


def compressed_totals(counts: str) -> tuple[int, int]:
    """``(sum of runs, foreground area)`` of a compressed string, in constant memory
    beyond the string (as :func:`compressed_counts`, whose errors it raises, and one more:
    a negative run length)."""
    _check_compressed(counts)
    total = area_ = 0
    for first, runs in _pieces_of_runs(counts):
        if (runs < 0).any():
            raise FieldError(".counts", "non-negative run lengths", "<a negative run length>")
        total += int(runs.sum())
        area_ += int(runs[1 - first % 2::2].sum())
    return total, area_


# Characters decoded at a time: the numpy temporaries take some 80 bytes per character.
_SCAN_CHARS = 1 << 18
_ALPHABET = "a COCO compressed RLE string (characters '0' to 'o')"
_MORE = 48 + 0x20  # characters from 'P' on continue their value


def _check_compressed(counts: str) -> int:
    """Check the characters and value lengths of a compressed string (first problem in the
    order: a non-ASCII character, one outside the alphabet, a truncated last value, a value
    of more than six characters); returns the number of values."""
    n = len(counts)
    step = _SCAN_CHARS
    if not counts.isascii():
        lo = next(lo for lo in range(0, n, step) if not counts[lo:lo + step].isascii())
        pos = lo + next(i for i, ch in enumerate(counts[lo:lo + step]) if not ch.isascii())
        raise FieldError(".counts", _ALPHABET, f"<character {counts[pos]!r} at position {pos}>")
    values = 0
    for lo in range(0, n, step):
        raw = np.frombuffer(counts[lo:lo + step].encode("ascii"), dtype=np.uint8)
        outside = (raw < 48) | (raw > 111)
        if outside.any():
            pos = lo + int(np.argmax(outside))
            raise FieldError(".counts", _ALPHABET,
                             f"<character {counts[pos]!r} at position {pos}>")
        values += int(np.count_nonzero(raw < _MORE))
    if n and ord(counts[-1]) >= _MORE:
        raise FieldError(".counts", "a complete COCO compressed RLE string",
                         "<a string whose last value is truncated>")
    # The last character ends a value, so six continuing characters in a row always
    # belong to a value of seven or more.
    for lo in range(0, n, step):
        raw = np.frombuffer(counts[lo:lo + step + _MAX_CHARS_PER_VALUE - 1].encode("ascii"),
                            dtype=np.uint8)
        if raw.size >= _MAX_CHARS_PER_VALUE and np.lib.stride_tricks.sliding_window_view(
                raw >= _MORE, _MAX_CHARS_PER_VALUE).all(axis=1).any():
            raise FieldError(".counts", f"run lengths within the {MAX_PIXELS:,}-pixel cap",
                             "<an encoded value too large for any valid mask>")
    return values


def _pieces_of_runs(counts: str) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
    """``(index of the first run, runs)`` of a checked string, piece by piece; each piece
    ends with a complete value, and the two delta chains carry over."""
    lo, n, first = 0, len(counts), 0
    chains = [0, 0]  # last odd run; last even run from the third on
    while lo < n:
        c = np.frombuffer(counts[lo:lo + _SCAN_CHARS].encode("ascii"),
                          dtype=np.uint8).astype(np.int64) - 48
        more = (c & 0x20) != 0
        if lo + c.size < n:
            c = c[:c.size - int(np.argmax(~more[::-1]))]
            more = more[:c.size]
        lo += c.size
        ends = np.flatnonzero(~more)
        starts = np.concatenate(([0], ends[:-1] + 1))
        lengths = ends - starts + 1
        k = np.arange(c.size) - np.repeat(starts, lengths)
        runs = np.add.reduceat((c & 0x1F) << (5 * k), starts)
        negative = (c[ends] & 0x10) != 0
        runs[negative] |= -(np.int64(1) << (5 * lengths[negative]))
        index = first + np.arange(runs.size)
        for parity, chain in ((1, index % 2 == 1), (0, (index % 2 == 0) & (index >= 2))):
            if chain.any():
                summed = np.cumsum(runs[chain]) + chains[parity]
                runs[chain] = summed
                chains[parity] = int(summed[-1])
        yield first, runs
        first += runs.size


def compressed_stats(strings: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Run-length sum and foreground area of many compressed strings, in one vectorised pass.

    Returns ``{string: (sum of runs, sum of odd runs)}`` for the strings that
    decode to non-negative runs; strings left out are invalid and get their
    precise error from :func:`compressed_totals`. Same reading as
    :func:`compressed_counts`: value groups are kept inside their string and
    the two delta chains (odd runs, even runs from the third on) restart per string.
    """
    strings = [t for t in dict.fromkeys(strings) if t and t.isascii()]
    out: dict[str, tuple[int, int]] = {}
    for text in (t for t in strings if len(t) > _SCAN_CHARS):
        try:
            out[text] = compressed_totals(text)
        except FieldError:
            pass  # left out: parse_rle reports it
    strings = [t for t in strings if len(t) <= _SCAN_CHARS]
    # In slices of about _STATS_CHARS characters (long strings are read piece by piece
    # above): the temporaries take some 80 bytes per character, which would be gigabytes
    # for a land-cover benchmark's masks at once.
    start, size = 0, 0
    for end, text in enumerate(strings, start=1):
        size += len(text)
        if size >= _STATS_CHARS or end == len(strings):
            out.update(_compressed_stats(strings[start:end]))
            start, size = end, 0
    return out


_STATS_CHARS = 1 << 20


def _compressed_stats(strings: list[str]) -> dict[str, tuple[int, int]]:
    n = len(strings)
    lens = np.fromiter(map(len, strings), dtype=np.int64, count=n)
    string_ends = np.cumsum(lens) - 1
    c = np.frombuffer("".join(strings).encode("ascii"), dtype=np.uint8)
    bad = np.zeros(n, dtype=bool)
    outside = (c < 48) | (c > 111)
    if outside.any():
        bad[np.searchsorted(string_ends, np.flatnonzero(outside))] = True
    d = c - np.uint8(48)  # wraps for characters below '0', which are flagged above
    more = d >= 32
    bad[more[string_ends]] = True  # the last value of the string is truncated
    more[string_ends] = False  # keep every value group inside its own string
    ends = np.flatnonzero(~more)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    low = d[starts] & np.uint8(0x1F)
    vals = (low ^ np.uint8(16)).astype(np.int64) - 16  # one-character values, sign-extended
    long = np.flatnonzero(more[starts])  # few: most values fit one character
    if long.size:
        length = ends[long] - starts[long] + 1
        acc = low[long].astype(np.int64)
        for j in range(1, _MAX_CHARS_PER_VALUE):
            take = np.flatnonzero(length > j)
            acc[take] |= (d[starts[long[take]] + j] & 0x1F).astype(np.int64) << (5 * j)
        sign = (d[ends[long]] & 0x10) != 0
        acc[sign] -= np.int64(1) << (5 * np.minimum(length[sign], _MAX_CHARS_PER_VALUE))
        vals[long] = acc
    firsts = np.searchsorted(ends, string_ends - lens + 1)  # first group of each string
    groups = np.diff(np.append(firsts, ends.size))  # per string (at least one each)

    def string_of(group: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        return np.searchsorted(firsts, group, side="right") - 1

    if long.size:
        bad[string_of(long[length > _MAX_CHARS_PER_VALUE])] = True
    odd = ((np.arange(ends.size) - np.repeat(firsts, groups)) & 1).astype(bool)  # m odd
    # The two delta chains (odd runs; even runs from the third on) as one lag-2 running
    # sum over all groups, the value of each string's first group left out; a string's
    # run is that sum less the sum just before the string in the same lag-2 chain: at its
    # first group for even positions (that group adds 0), at the group before it for odd
    # ones. int64 sums wrap alike either way, so the runs are the chain sums of each string.
    lagged = vals.copy()
    lagged[firsts] = 0
    if lagged.size % 2:
        lagged = np.append(lagged, 0)
    chain = np.cumsum(lagged.reshape(-1, 2), axis=0).reshape(-1)[:ends.size]
    at_first = chain[firsts]
    before_first = np.zeros(n, dtype=np.int64)
    before_first[firsts > 0] = chain[firsts[firsts > 0] - 1]
    runs = (chain - np.repeat(at_first, groups)
            - odd * np.repeat(before_first - at_first, groups))
    runs[firsts] = vals[firsts]
    negative = np.flatnonzero(runs < 0)
    if negative.size:
        bad[string_of(negative)] = True
    totals = np.add.reduceat(runs, firsts).tolist()
    areas = np.add.reduceat(np.where(odd, runs, 0), firsts).tolist()
    return {t: (total, a) for t, total, a, b in zip(strings, totals, areas, bad.tolist(),
                                                    strict=True) if not b}


def parse_rle(value: object, stats: dict[str, tuple[int, int]] | None = None,
              max_pixels: int = MAX_PIXELS
              ) -> tuple[Rle | None, tuple[int, int]]:
    """Validate a JSON mask value and return ``(rle_or_None, (height, width))``.

    ``None`` is returned for every form of empty mask; the size is ``(0, 0)``
    for ``null`` and the sentinel, otherwise the declared size (also for an
    all-zero mask, so that size checks still apply to it).

    ``stats`` may hold run-length sums and areas from :func:`compressed_stats`
    to skip decoding compressed strings one by one. ``max_pixels``: the largest mask taken
    (:data:`SPEC_MAX_PIXELS` for predictions unless the option ``large_masks`` is on).

    Raises:
        FieldError: with the sub-field that is wrong.
    """
    if value is None:
        return None, (0, 0)
    if not isinstance(value, dict):
        raise FieldError("", "a COCO RLE object {\"size\": [h, w], \"counts\": ...} or null", value)
    if "size" not in value or "counts" not in value:
        missing = "size" if "size" not in value else "counts"
        raise FieldError(f".{missing}", "present in a COCO RLE object", "<missing>")
    size, counts = value["size"], value["counts"]
    if (not isinstance(size, list) or len(size) != 2 or not all(_is_int(v) for v in size)
            or min(size) < 0):
        raise FieldError(".size", "[height, width] with two non-negative integers", size)
    h, w = int(size[0]), int(size[1])
    if max(h, w) > MAX_PIXELS:  # [0, 2**64] has no pixels, but no C size can hold it
        raise FieldError(".size", f"a height and width of at most {MAX_PIXELS:,} each",
                         f"<{h} x {w}>")
    if h * w > min(max_pixels, MAX_PIXELS):
        raise FieldError(".size", _CAP_REASON if max_pixels >= MAX_PIXELS else _SPEC_CAP_REASON,
                         f"<{h} x {w} = {h * w:,} pixels>")
    if h == 0 and w == 0:
        if counts in ([], ""):
            return None, (0, 0)
        raise FieldError(".counts", "[] for the [0, 0] empty-mask sentinel", counts)
    if isinstance(counts, list):
        if not all(_is_int(v) and v >= 0 for v in counts):
            bad = next(v for v in counts if not (_is_int(v) and v >= 0))
            raise FieldError(".counts", "a list of non-negative integer run lengths",
                             f"<element {bad!r}>")
        total = sum(counts)
        if total != h * w:
            raise FieldError(".counts", f"run lengths summing to height*width = {h * w}",
                             f"<sum {total}>")
        if h * w == 0:
            return None, (h, w)
        rle = cocomask.frPyObjects({"size": [h, w], "counts": counts}, h, w)
    elif isinstance(counts, str):
        known = stats.get(counts) if stats is not None else None
        if known is None:
            known = compressed_totals(counts)
        total, foreground = known
        if total != h * w:
            raise FieldError(".counts", f"run lengths summing to height*width = {h * w}",
                             f"<sum {total}>")
        if foreground == 0:
            return None, (h, w)
        return {"size": [h, w], "counts": counts.encode("ascii"), _AREA: foreground}, (h, w)
    else:
        raise FieldError(".counts", "a compressed RLE string or a list of run lengths", counts)
    if h * w == 0 or area(rle) == 0:
        return None, (h, w)
    return rle, (h, w)


def area(rle: Rle | None) -> int:
    """Foreground pixel count; 0 for ``None``.

    Remembered in the mask dict itself (pycocotools ignores the extra key), so a
    ground-truth mask shared by many queries is measured once.
    """
    if rle is None:
        return 0
    known = rle.get(_AREA)
    if known is None:
        known = rle[_AREA] = int(cocomask.area(rle))
    return known


def intersection_area(a: Rle | None, b: Rle | None) -> int:
    """Pixels set in both masks (same size); 0 when either is empty."""
    if a is None or b is None:
        return 0
    return area(cocomask.merge([a, b], intersect=True))


def union(rles: Sequence[Rle | None]) -> Rle | None:
    """Pixel union of equal-sized masks; ``None`` when all are empty (one mask: itself).

    Merged in pairs, level by level: pycocotools merges a list one mask at a time into a
    growing result, quadratic for the thousands of rows a query may have (spec: duplicate
    rows are merged by pixel union); pairwise, each level reads every run once, so the
    time is the total run count times log2 of the number of masks. The result's runs do
    not depend on the order (pycocotools returns the union's canonical runs).
    """
    level = [r for r in rles if r is not None]
    if not level:
        return None
    while len(level) > 1:
        pairs = [cocomask.merge(level[k:k + 2], intersect=False)
                 for k in range(0, len(level) - 1, 2)]
        level = pairs + level[len(level) - len(level) % 2:]
    return level[0]


def decode(rle: Rle) -> npt.NDArray[np.uint8]:
    """Decode to an ``(height, width)`` uint8 array of 0/1 (for tests and small masks;
    drawing uses :func:`take`, which never decodes a whole scene)."""
    return cocomask.decode(rle)


@dataclass(frozen=True)
class Runs:
    """A mask ready for pixel look-ups: ``shape`` ``(height, width)`` and ``ends`` ``(R,)``
    the cumulative ends of its runs (column-major, background first: run ``k`` covers flat
    indices ``[ends[k-1], ends[k])``, foreground when ``k`` is odd). Memory: 8 bytes a
    run, whatever the scene's size."""

    shape: tuple[int, int]
    ends: npt.NDArray[np.int64]


def runs_of(rle: Rle) -> Runs:
    """:class:`Runs` of a non-empty mask."""
    return Runs((int(rle["size"][0]), int(rle["size"][1])), np.cumsum(run_lengths(rle)))


_TAKE_CHUNK = 1 << 20  # look-ups at a time (about 16 MB of temporaries)


def take(mask: Runs, rows: npt.ArrayLike, cols: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """The mask's pixels at ``rows x cols`` (``(len(rows), len(cols))`` booleans, the
    decoded mask's ``[np.ix_(rows, cols)]``), looked up in its runs: a window or a
    downsampled view of a scene of any size without decoding it."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    out = np.empty((cols.size, rows.size), dtype=bool)
    step = max(1, _TAKE_CHUNK // max(rows.size, 1))
    for lo in range(0, cols.size, step):
        # column-major flat indices: sorted when rows and cols are (the fast case)
        flat = cols[lo:lo + step, None] * mask.shape[0] + rows[None, :]
        out[lo:lo + step] = np.searchsorted(mask.ends, flat, side="right") & 1
    return out.T


def encode(mask: npt.ArrayLike) -> Rle:
    """Encode a 2-D 0/1 array as a JSON-ready RLE with a compressed ``str`` counts."""
    arr = np.asarray(mask)
    arr = arr.view(np.uint8) if arr.dtype == np.bool_ else arr.astype(np.uint8, copy=False)
    arr = np.asfortranarray(arr)
    rle = cocomask.encode(arr)
    return {"size": [int(arr.shape[0]), int(arr.shape[1])], "counts": rle["counts"].decode("ascii")}


def bbox_of(rle: Rle | None) -> tuple[float, float, float, float] | None:
    """Envelope ``(x, y, w, h)`` of the foreground, or ``None`` when empty."""
    if rle is None:
        return None
    x, y, w, h = (float(v) for v in cocomask.toBbox(rle))
    return x, y, w, h


def to_json(rle: Rle) -> dict[str, Any]:
    """A mask as JSON: ``{"size": [h, w], "counts": <compressed str>}``."""
    counts = rle["counts"]
    return {"size": [int(rle["size"][0]), int(rle["size"][1])],
            "counts": counts.decode("ascii") if isinstance(counts, bytes) else counts}


def from_polygons(polygons: Sequence[Sequence[float]], height: int, width: int) -> Rle | None:
    """Rasterise COCO polygons (each ``[x1, y1, x2, y2, ...]``, at least three vertices,
    continuous pixel coordinates) as pycocotools does: their pixel union, ``None`` when empty.
    """
    if not polygons:
        return None
    rle = cocomask.merge(cocomask.frPyObjects([list(map(float, p)) for p in polygons],
                                             height, width))
    return rle if area(rle) else None


def run_lengths(rle: Rle) -> npt.NDArray[np.int64]:
    """Run lengths of a mask (column-major, background first)."""
    counts = rle["counts"]
    if isinstance(counts, list):
        return np.asarray(counts, dtype=np.int64)
    return compressed_counts(counts.decode("ascii") if isinstance(counts, bytes) else counts)


def hull_points(rle: Rle) -> npt.NDArray[np.float64]:
    """Corner points ``(K, 2)`` of a mask's pixels whose convex hull is the mask's hull.

    Pixel ``(x, y)`` covers ``[x, x + 1) x [y, y + 1)``. Each foreground run (column-major)
    covers the rest of its first column, whole columns, and the start of its last column;
    the corners of those at most three rectangles are enough, so no pixel is decoded.
    """
    h = int(rle["size"][0])
    runs = run_lengths(rle)
    ends = np.cumsum(runs)
    start, stop = (ends - runs)[1::2], ends[1::2]  # foreground runs: [start, stop)
    keep = stop > start
    start, stop = start[keep], stop[keep] - 1  # first and last pixel of each run
    x0, y0, x1, y1 = start // h, start % h, stop // h, stop % h
    one = x0 == x1
    # (left, top, right, bottom) of the rectangles: single-column runs; the first and last
    # columns and the full columns between of the others.
    rects = [np.stack([x0[one], y0[one], x0[one] + 1, y1[one] + 1], axis=1)]
    many = ~one
    rects.append(np.stack([x0[many], y0[many], x0[many] + 1, np.full(many.sum(), h)], axis=1))
    rects.append(np.stack([x1[many], np.zeros(many.sum(), np.int64), x1[many] + 1,
                           y1[many] + 1], axis=1))
    full = many & (x1 - x0 > 1)
    rects.append(np.stack([x0[full] + 1, np.zeros(full.sum(), np.int64), x1[full],
                           np.full(full.sum(), h)], axis=1))
    r = np.concatenate(rects)
    # A rectangle's corners lie on its two vertical edges; on each vertical line x only the
    # highest and lowest points can be on the hull.
    xs = np.concatenate([r[:, 0], r[:, 2]])
    top = np.concatenate([r[:, 1], r[:, 1]])
    bottom = np.concatenate([r[:, 3], r[:, 3]])
    # Grouped by sorting, not by an array as wide as the mask: memory follows the runs.
    used, where = np.unique(xs, return_inverse=True)
    ymin = np.full(used.size, np.iinfo(np.int64).max)
    ymax = np.full(used.size, -1)
    np.minimum.at(ymin, where, top)
    np.maximum.at(ymax, where, bottom)
    x = used.astype(np.float64)
    return np.concatenate([np.stack([x, ymin], axis=1),
                           np.stack([x, ymax], axis=1)]).astype(np.float64)
