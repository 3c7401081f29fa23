"""The predicted boxes NMS-AP suppressed are drawn apart (issue 50): grey and dotted in the
still picture, "suppressed by NMS-AP" in their label, a grey dotted trace and legend entry
in the interactive figure; the others keep their status colour and dashes."""

from __future__ import annotations

import numpy as np

from ovearth_core.types import Sample
from ovearth_core.viz import overlay
from ovearth_core.viz.images import DisplayImage

# Two false-positive predictions 40 px wide (a negative query); the second was suppressed.
PRED = np.array([[10.0, 10, 50, 50], [60, 10, 100, 50]])
ROW = {"bbox": {"matches": [], "evaluated": True}, "oriented_bbox": None}
GONE = {"bbox": frozenset({1})}


def _sample() -> Sample:
    return Sample("q", "chimney", True, "a.png", "a", "tank", 110, 60, pred_boxes=PRED,
                  pred_box_scores=np.array([0.9, 0.5]))


def _image() -> DisplayImage:
    return DisplayImage(np.full((60, 110, 3), 40, dtype=np.uint8), 1.0, 110, 60)


def _coverage(picture: np.ndarray, x0: int, x1: int, y: int, colour: str) -> float:
    """Share of the pixels along a horizontal edge drawn in ``colour`` (#rrggbb, ±40)."""
    rgb = np.array([int(colour[k:k + 2], 16) for k in (1, 3, 5)])
    band = picture[y - 1:y + 2, x0 + 3:x1 - 3].astype(int)
    near = (np.abs(band - rgb) <= 40).all(axis=-1)
    return float(near.any(axis=0).mean())


def test_suppressed_boxes_are_labelled_and_greyed() -> None:
    items = overlay.box_groups(_sample(), ROW["bbox"], False, suppressed={1})
    assert [i["suppressed"] for i in items] == [False, True]
    assert "suppressed by NMS-AP" in items[1]["label"]
    assert "suppressed" not in items[0]["label"]
    assert items[1]["colour"] == overlay.SUPPRESSED
    assert items[0]["colour"] == overlay.FALSE_POSITIVE


def test_suppressed_boxes_are_drawn_grey_and_dotted() -> None:
    picture = np.asarray(overlay.static_view(_image(), _sample(), ROW, labels=False,
                                             long_side=110, suppressed=GONE))
    assert _coverage(picture, 60, 100, 10, overlay.SUPPRESSED) > 0.2
    assert _coverage(picture, 60, 100, 10, overlay.FALSE_POSITIVE) == 0
    assert _coverage(picture, 10, 50, 10, overlay.FALSE_POSITIVE) > 0.3  # the kept box
    plain = np.asarray(overlay.static_view(_image(), _sample(), ROW, labels=False,
                                           long_side=110))
    assert _coverage(plain, 60, 100, 10, overlay.SUPPRESSED) == 0
    assert _coverage(plain, 60, 100, 10, overlay.FALSE_POSITIVE) > 0.3


def test_the_figure_has_a_suppressed_trace_and_legend() -> None:
    fig = overlay.overlay_figure(_image(), _sample(), ROW, suppressed=GONE)
    grey = [t for t in fig.data if getattr(t, "line", None) is not None
            and t.line.color == overlay.SUPPRESSED]
    assert any(t.showlegend is not False and "suppressed by NMS-AP" in t.name for t in grey)
    (box,) = [t for t in grey if t.x is not None and len(t.x) > 1]
    assert box.line.dash == "dot" and min(box.x) == 60 and max(box.x) == 100
    fig = overlay.overlay_figure(_image(), _sample(), ROW)
    assert not [t for t in fig.data if "suppressed" in (t.name or "")]
