"""Rules of ``ovearth_core.analysis.evidence`` that mutation testing found unpinned (issue 47).

The thin-evidence rule: fewer than MIN_UNITS = 30 units (images, or queries when those are
resampled) flags every interval and test; from 30 on, no flag. The minimum-count rule: below
``max(min_count, 2)`` units, no test and no group, with the reason. Both are one wording on
every surface, so the sentences are written out here by hand, with their numbers (boundary
values on both sides, singular and plural, the cut-off at 12 named rows).
"""

from __future__ import annotations

import pytest

from ovearth_core.analysis import evidence

ROUGH = "so they are rough: intervals usually too narrow, p-values too small."


def test_the_threshold_is_thirty_units() -> None:
    assert evidence.MIN_UNITS == 30


@pytest.mark.parametrize(("n", "unit", "text"), [
    (1, "image", "1 image"), (1, "query", "1 query"), (2, "query", "2 queries"),
    (0, "image", "0 images"), (1234, "image", "1,234 images")])
def test_units_text_counts_in_the_singular_only_for_one(n: int, unit: str, text: str) -> None:
    assert evidence.units_text(n, unit) == text


def test_thin_evidence_below_thirty_and_none_from_thirty() -> None:
    assert evidence.thin_evidence(29, "query") == (
        "Thin evidence: the intervals and tests rest on 29 queries (fewer than 30), " + ROUGH)
    assert evidence.thin_evidence(1, "image") == (
        "Thin evidence: the intervals and tests rest on 1 image (fewer than 30), " + ROUGH)
    assert evidence.thin_evidence(30, "query") is None
    assert evidence.thin_evidence(31, "image") is None


def test_thin_rows_name_the_rows_below_thirty_in_the_unit_of_the_table() -> None:
    rows = [("ship", 29), ("plane", 30), ("harbor", 1), ("bridge", 400)]
    assert evidence.thin_rows(rows, "query", "categories") == (
        "Thin evidence in 2 of 4 categories: ship (29 queries), harbor (1 query); their "
        "intervals and tests rest on fewer than 30 queries, " + ROUGH)
    assert evidence.thin_rows([("plane", 30)], "image", "slices") is None
    assert evidence.thin_rows([], "image", "slices") is None


def test_thin_rows_name_twelve_and_count_the_rest() -> None:
    twelve = [(f"c{i}", i) for i in range(12)]
    text = evidence.thin_rows(twelve, "image", "categories")
    assert text.startswith("Thin evidence in 12 of 12 categories: c0 (0 images), c1 (1 image),")
    assert "c11 (11 images); their" in text and "more" not in text
    text = evidence.thin_rows([*twelve, ("c12", 12)], "image", "categories")
    assert "c11 (11 images) and 1 more; their intervals" in text
    text = evidence.thin_rows([*twelve, ("c12", 12), ("c13", 13)], "image", "categories")
    assert "c11 (11 images) and 2 more; their intervals" in text
    assert "c12 (" not in text
    assert text.startswith("Thin evidence in 14 of 14 categories")


@pytest.mark.parametrize(("n", "min_count"), [(10, 10), (11, 10), (2, 1), (2, 2), (5, 0)])
def test_below_minimum_is_none_from_the_minimum_and_from_two(n: int, min_count: int) -> None:
    assert evidence.below_minimum(n, "image", min_count) is None


def test_below_minimum_names_the_count_and_the_minimum() -> None:
    tail = ("; a test over so few says nothing (a bootstrap's intervals are points and its "
            "p-value the smallest it can give, whatever the submissions).")
    assert evidence.below_minimum(9, "query", 10) == (
        "No test and no groups: 9 queries (fewer than the minimum count, 10)" + tail)
    assert evidence.below_minimum(1, "image", 2) == (
        "No test and no groups: 1 image (fewer than the minimum count, 2)" + tail)
    # a minimum count of 1 still never tests one unit: the reason is the bootstrap's
    assert evidence.below_minimum(1, "image", 1) == (
        "No test and no groups: 1 image (a resampled test needs at least 2)" + tail)
    assert evidence.below_minimum(0, "query", 0) == (
        "No test and no groups: 0 queries (a resampled test needs at least 2)" + tail)
