"""The box picker lists oriented boxes too (issue 27 defect 2): a query failing in OBB can be
zoomed to its OBB (the envelope of its corners), with each box's match status; on a dense
scene every box of both kinds is listed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from app_fixtures import app_on, assert_ok, card_html, goto
from app_fixtures import diamond as _diamond
from app_fixtures import rect as _rect
from app_fixtures import write_ship_scene as _write

EXPLORER = "pages/Query_explorer.py"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _region(at) -> tuple[float, ...]:
    card = card_html(at)
    x0, x1, y0, y1 = (float(v.replace(",", "")) for v in re.search(
        r"Showing x ([\d,]+)–([\d,]+), y ([\d,]+)–([\d,]+)", card).groups())
    return x0, y0, x1, y1


def test_a_query_failing_in_obb_is_zoomed_to_its_obb(tmp_path: Path) -> None:
    # HBB right; the predicted OBB is a diamond far away (envelope x 860-940, y 660-740).
    ds = _write(tmp_path / "d", [[100, 100, 40, 20]], [_rect(100, 100, 140, 120)],
                [[100, 100, 140, 120]], [_diamond(900, 700, 40)])
    at = app_on(ds, task="referring", auto_modalities=False,
                modalities=["bbox", "oriented_bbox"])
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    picker = at.selectbox(key="_w_objects")
    heads = [" · ".join(o.split(" · ")[:2]) for o in picker.options]
    assert heads == ["GT HBB 1 · matched", "pred HBB 1 · matched", "GT OBB 1 · missed",
                     "pred OBB 1 · false positive"]
    assert "envelope 80 × 80 px" in picker.options[3]
    picker.set_value(3).run()
    assert_ok(at)
    x0, y0, x1, y1 = _region(at)
    assert x0 <= 860 and y0 <= 660 and x1 >= 940 and y1 >= 740  # the diamond's envelope
    assert x0 > 140  # not the GT ship's view
    assert at.session_state["view_focus"] == ("ref_1", 3)


def test_a_dense_scene_lists_every_box_of_both_kinds(tmp_path: Path) -> None:
    n = 531
    xs = [(20 + 40 * (i % 28), 20 + 30 * (i // 28)) for i in range(n)]
    hbb = [[x, y, 20, 12] for x, y in xs]
    obb = [_rect(x, y, x + 20, y + 12) for x, y in xs]
    ds = _write(tmp_path / "d", hbb, obb, [[x, y, x + 20, y + 12] for x, y in xs[:-1]],
                obb[:-1])
    at = app_on(ds, task="referring", auto_modalities=False,
                modalities=["bbox", "oriented_bbox"], view_focus=("ref_1", 4 * n - 3))
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    # More boxes than a list carries cheaply: a box number, its ranges in the label.
    number = at.number_input(key="_w_object_no")
    assert (number.min, number.max, number.value) == (1, 4 * n - 2, 4 * n - 2)
    assert ("GT HBB 1–531, pred HBB 532–1,061, GT OBB 1,062–1,592, pred OBB 1,593–2,122"
            in number.label), number.label
    assert any(c.value.startswith(f"pred OBB {n - 1} · matched") for c in at.caption)
    # The focus 4n - 3 is the last predicted OBB (the match of GT OBB n - 1).
    x0, y0, x1, y1 = _region(at)
    lx, ly = xs[n - 2]
    assert x0 <= lx and y0 <= ly and x1 >= lx + 20 and y1 >= ly + 12
    assert x1 - x0 < 200  # one ship's view, not the scene
