"""The viewer's metric table says what its IoU column holds (issue 34, item 10): the mask
IoU on the mask row, the mean IoU of the matched pairs on the box rows (ov_000005 of
app_fixtures: one bridge box matched at IoU 1, one duplicate: HBB mean matched IoU 1.000,
the query's F1 2/3)."""

from __future__ import annotations

import re

import pytest
from app_fixtures import app_on, assert_ok, card_html, goto, write_dataset

pytestmark = pytest.mark.usefixtures("fresh_caches")


def test_the_iou_column_is_named_for_what_it_holds(tmp_path) -> None:
    at = app_on(write_dataset(tmp_path / "ds"), selected={"vocabulary": "ov_000005"})
    goto(at, "pages/Query_explorer.py")
    at.run()
    assert_ok(at)
    html = card_html(at)
    heads = re.findall(r"<th>([^<]*)</th>", html)
    assert "IoU" not in heads and "IoU †" in heads
    assert "HBB and OBB rows: the mean IoU of their matched box pairs" in html
    row = re.search(r"<tr><td>HBB</td><td>([^<]*)</td><td>([^<]*)</td>", html)
    assert row.groups() == ("1.000", "0.667")
