"""The Slices page says what a GT-size slice scores (issue 34, item 10): whole queries that
have a GT box of that size, not those boxes alone; its label says so too."""

from __future__ import annotations

import pytest
from app_fixtures import app_on, assert_ok, goto, write_dataset

from pages.common import slice_views

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_gt_size_slices_say_they_score_whole_queries(tmp_path) -> None:
    assert "queries with a GT box of that size" in slice_views.attribute_label("gt_size")
    at = app_on(write_dataset(tmp_path / "ds"), slice_attr="gt_size").run()
    goto(at, "pages/Slices.py")
    at.run()
    assert_ok(at)
    notes = " ".join(c.value for c in at.caption)
    assert "whole queries" in notes and "not of those boxes alone" in notes
    assert "AP small / medium / large" in notes
    at.selectbox(key="_w_slice_attr").set_value("polarity").run()
    assert "not of those boxes alone" not in " ".join(c.value for c in at.caption)
