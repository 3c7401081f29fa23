"""How much an interval or a test rests on (issue 46 §4, issue 48): one rule and one wording
for every surface that shows a resampled interval or a test (the Leaderboard's ranks and
categories, Slices, Compare, the Audit's re-ranking, the report, the leaderboard command).

* :func:`thin_evidence` (and :func:`thin_rows` for a table of many): fewer than
  :data:`MIN_UNITS` units (images, or queries when those are resampled; Friedman's blocks):
  the intervals and tests are shown, with this warning.
* :func:`below_minimum`: fewer than the minimum count (``Options.min_count``): no test and
  no groups, and this reason instead (a bootstrap over one image has a point interval and
  the smallest p-value it can give, whatever the submissions; issue 48).

No numpy here: pages import it for nothing.

>>> thin_evidence(5, "image")[:60]
'Thin evidence: the intervals and tests rest on 5 images (few'
>>> thin_evidence(30, "image") is None
True
>>> below_minimum(1, "image", 10)[:66]
'No test and no groups: 1 image (fewer than the minimum count, 10);'
>>> thin_rows([("ship", 4), ("plane", 40)], "image", "categories")[:60]
'Thin evidence in 1 of 2 categories: ship (4 images); their i'
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_UNITS = 30  # fewer units than this: every interval and test on them is flagged
_PLURAL = {"query": "queries", "image": "images"}
_ROUGH = "so they are rough: intervals usually too narrow, p-values too small."


def units_text(n_units: int, unit: str) -> str:
    """``"1 image"``, ``"5 images"``, ``"2 queries"`` (``unit``: ``image`` or ``query``)."""
    return f"{n_units:,} {unit if n_units == 1 else _PLURAL[unit]}"


def thin_evidence(n_units: int, unit: str) -> str | None:
    """The one warning for intervals and tests resting on ``n_units`` ``unit``\\ s (``image``
    or ``query``); ``None`` from :data:`MIN_UNITS` on."""
    if n_units >= MIN_UNITS:
        return None
    return (f"Thin evidence: the intervals and tests rest on {units_text(n_units, unit)} "
            f"(fewer than {MIN_UNITS}), {_ROUGH}")


def thin_rows(rows: Sequence[tuple[str, int]], unit: str, what: str) -> str | None:
    """The same warning for a table of ``what`` (``rows``: each row's name and units),
    naming the rows below :data:`MIN_UNITS` (the first 12); ``None`` when none is."""
    few = [(name, n) for name, n in rows if n < MIN_UNITS]
    if not few:
        return None
    listed = ", ".join(f"{name} ({units_text(n, unit)})" for name, n in few[:12])
    more = f" and {len(few) - 12} more" if len(few) > 12 else ""
    return (f"Thin evidence in {len(few)} of {len(rows)} {what}: {listed}{more}; their "
            f"intervals and tests rest on fewer than {MIN_UNITS} {_PLURAL[unit]}, {_ROUGH}")


def below_minimum(n_units: int, unit: str, min_count: int) -> str | None:
    """Why there is no test and no group on ``n_units`` units (``None`` from ``min_count``
    on, and from 2: one unit is never tested): the one wording of the minimum-units guard."""
    if n_units >= max(min_count, 2):
        return None
    least = (f"fewer than the minimum count, {min_count}" if min_count >= 2
             else "a resampled test needs at least 2")
    return (f"No test and no groups: {units_text(n_units, unit)} ({least}); a test over so "
            "few says nothing (a bootstrap's intervals are points and its p-value the "
            "smallest it can give, whatever the submissions).")
