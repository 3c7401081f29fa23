"""The suite's own running time (issues 47 and 49: the whole suite within 8 minutes in CI).

What keeps it short is set up in tests/conftest.py and README.md's test command; these
tests pin those settings, so a later edit cannot undo them unnoticed."""

from __future__ import annotations

import gc


def test_the_collected_heap_is_frozen() -> None:
    """After collection the garbage collector no longer walks the objects the test modules
    imported (``gc.freeze`` in tests/conftest.py): a full collection, which statsmodels'
    Holm correction runs on every call, then costs what the test made, not the whole heap."""
    assert gc.get_freeze_count() > 10_000
    assert gc.isenabled()
