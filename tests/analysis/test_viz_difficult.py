"""DOTA's "difficult" GT objects are shown, and shown apart (issue 34, item 10): dotted
outlines in their status colour (GT solid, predictions dashed), "difficult" in their label,
and a legend entry in the interactive figure."""

from __future__ import annotations

import numpy as np

from ovearth_core.viz import overlay
from ovearth_core.viz.images import DisplayImage

# Two missed GT boxes 40 px wide; the second is difficult. No prediction.
GT = np.array([[10.0, 10, 50, 50], [60, 10, 100, 50]])


def _sample(difficult: list[bool]):
    from ovearth_core.types import Sample

    return Sample("q", "ship", False, "a.png", "a", "ship", 110, 60, gt_boxes=GT,
                  gt_difficult=np.array(difficult, dtype=bool))


ROW = {"bbox": {"matches": [], "evaluated": True}, "oriented_bbox": None}


def test_difficult_boxes_are_labelled() -> None:
    items = overlay.box_groups(_sample([False, True]), ROW["bbox"], False)
    assert [i.get("difficult", False) for i in items] == [False, True]
    assert "difficult" not in items[0]["label"] and "difficult" in items[1]["label"]


def _edge_coverage(picture: np.ndarray, x0: int, x1: int, y: int) -> float:
    """Share of the pixels along a horizontal edge drawn in the missed colour."""
    row = picture[y - 1:y + 2, x0 + 3:x1 - 3].astype(int)
    orange = (row[..., 0] > 200) & (row[..., 1] > 110) & (row[..., 1] < 190) & (row[..., 2] < 80)
    return float(orange.any(axis=0).mean())


def test_difficult_boxes_are_drawn_dotted() -> None:
    image = DisplayImage(np.full((60, 110, 3), 40, dtype=np.uint8), 1.0, 110, 60)
    picture = np.asarray(overlay.static_view(image, _sample([False, True]), ROW,
                                             labels=False, long_side=110))
    assert _edge_coverage(picture, 10, 50, 10) > 0.95  # solid
    assert 0.3 < _edge_coverage(picture, 60, 100, 10) < 0.8  # dotted: gaps
    plain = np.asarray(overlay.static_view(image, _sample([False, False]), ROW,
                                           labels=False, long_side=110))
    assert _edge_coverage(plain, 60, 100, 10) > 0.95


def test_the_figure_has_a_dotted_difficult_trace_and_legend() -> None:
    image = DisplayImage(np.full((60, 110, 3), 40, dtype=np.uint8), 1.0, 110, 60)
    fig = overlay.overlay_figure(image, _sample([False, True]), ROW)
    dotted = [t for t in fig.data if getattr(t, "line", None) is not None
              and t.line.dash == "dot"]
    assert any(t.showlegend is not False and "difficult" in t.name for t in dotted)
    assert any(t.x is not None and len(t.x) > 1 for t in dotted)  # the box itself
    # a query without difficult boxes has no such legend entry
    fig = overlay.overlay_figure(image, _sample([False, False]), ROW)
    assert not [t for t in fig.data if "difficult" in (t.name or "")]
