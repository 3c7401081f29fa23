"""Helpers of the loader for validating a field of many rows in one batch.

The loader walks the rows of a document once, registering each row's list
field (``bbox``, ``oriented_bbox``) in a :class:`ListColumn`; the column's items
are then parsed in one numpy batch (see :mod:`ovearth_core.geometry`) and mapped
back to their rows. Problems found that way come out of row order, so they are
collected in :class:`OrderedProblems` with a document-order key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .boxparse import ParsedBatch
from .errors import ProblemCollector


class OrderedProblems:
    """Problems gathered out of order, reported in document order (by their keys)."""

    def __init__(self, name: str):
        self.bad = ProblemCollector(name)
        self.keys: list[tuple[int, ...]] = []

    def add(self, key: tuple[int, ...], field_: str, expected: str, found: object,
            query_id: str | None = None) -> None:
        self.keys.append(key)
        self.bad.add(field_, expected, found, query_id)

    def settle(self) -> ProblemCollector:
        """Put the problems so far in key order; later ones are appended as added."""
        order = sorted(range(len(self.keys)), key=self.keys.__getitem__)
        self.bad.problems = [self.bad.problems[k] for k in order]
        self.keys = []
        return self.bad

    def raise_if_any(self) -> None:
        self.settle().raise_if_any()


@dataclass
class ListColumn:
    """One list field of many rows, gathered for one batch parse.

    Each :meth:`add` opens a *slot* (a row's list) with the row's document
    index and a caller's ``tag``; items of all slots are parsed together by
    :meth:`parse`, and :meth:`locate` / :meth:`spans` map items back to slots.
    """

    field: str
    rows: list[int] = field(default_factory=list)
    tags: list[Any] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    items: list[object] = field(default_factory=list)

    def add(self, row: int, value: list[object], tag: Any = None) -> None:
        self.rows.append(row)
        self.tags.append(tag)
        self.counts.append(len(value))
        self.items.extend(value)

    def parse(self, parse_batch: Callable[[list[object]], ParsedBatch]) -> ParsedBatch:
        counts = np.asarray(self.counts, dtype=np.int64)
        self._starts = np.cumsum(counts) - counts
        self._owner = np.repeat(np.arange(counts.size), counts)
        return parse_batch(self.items)

    def locate(self, item: int) -> tuple[int, int]:
        """``(slot, position in the slot's list)`` of an item (after :meth:`parse`)."""
        slot = int(self._owner[item])
        return slot, item - int(self._starts[slot])

    def spans(self, index: npt.NDArray[np.intp]) -> Iterator[tuple[int, int, int]]:
        """``(slot, lo, hi)``: ``index[lo:hi]`` (sorted item positions) are the slot's items.

        Only slots with at least one of the items are given.
        """
        owner = self._owner[index]
        bounds = np.searchsorted(owner, np.arange(len(self.counts) + 1)).tolist()
        for slot in np.flatnonzero(np.diff(bounds)).tolist():
            yield slot, bounds[slot], bounds[slot + 1]
