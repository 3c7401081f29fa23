"""The explorer opens a dense query on its first error and steps through its errors
(issue 34, item 8): "Next error ▷" / "◁ Previous error" in the viewer card, each zoomed
to the box. The errors are the boxes the evaluator left unmatched (its ``matches``), in
the box picker's order: GT HBBs, predicted HBBs, GT OBBs, predicted OBBs."""

from __future__ import annotations

import re

import pytest
from app_fixtures import (
    Dataset,
    app_on,
    assert_ok,
    card_buttons,
    card_html,
    card_params,
    goto,
    press,
    write_dataset,
)

from benchmarks import dense_scene
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture(scope="module")
def mosaic(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    root = dense_scene.write_mosaic(tmp_path_factory.mktemp("mosaic"), dense_gt=400,
                                    dense_queries=1)
    pred = root / "predictions" / "packed.json"
    return Dataset(root, root / "ground_truth.json", root, pred, pred)


def _errors(ds: Dataset) -> list[tuple[str, int, list[float]]]:
    """``(role, index, xyxy envelope)`` of every unmatched box of ``dense_00``, HBBs
    before OBBs, GT before predictions (from the evaluator's matches)."""
    samples = load_samples(ds.gt, ds.model_a, "vocabulary",
                           modalities="bbox,oriented_bbox")
    results = evaluate_samples(samples, 0.5)
    i = next(k for k, s in enumerate(samples) if s.sample_id == "dense_00")
    s, row = samples[i], results["per_sample"][i]
    out = []
    for key, gt, pred in (("bbox", s.gt_boxes, s.pred_boxes),
                          ("oriented_bbox", s.gt_obbs, s.pred_obbs)):
        matched_g = {int(m[0]) for m in row[key]["matches"]}
        matched_p = {int(m[1]) for m in row[key]["matches"]}
        for role, boxes, matched in (("GT", gt, matched_g), ("pred", pred, matched_p)):
            for k, b in enumerate(boxes):
                if k in matched:
                    continue
                pts = b.reshape(-1, 2) if key == "oriented_bbox" else b.reshape(2, 2)
                out.append((role, k, [*pts.min(axis=0), *pts.max(axis=0)]))
    return out


def _shown(html: str) -> tuple[float, float, float, float]:
    m = re.search(r"Showing x ([\d,.]+)–([\d,.]+), y ([\d,.]+)–([\d,.]+)", html)
    assert m, "no 'Showing x' note in the card"
    x0, x1, y0, y1 = (float(v.replace(",", "")) for v in m.groups())
    return x0, y0, x1, y1


def _centred_on(html: str, box: list[float]) -> bool:
    x0, y0, x1, y1 = _shown(html)
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    # the box's view (a 96-px square or so, clipped to the image), not the whole query
    return x0 <= cx <= x1 and y0 <= cy <= y1 and x1 - x0 < 200


def test_a_dense_query_opens_on_its_first_error_and_steps(mosaic: Dataset) -> None:
    errors = _errors(mosaic)
    assert len(errors) > 10
    at = app_on(mosaic, selected={"vocabulary": "dense_00"})
    goto(at, "pages/Query_explorer.py")
    at.run()
    assert_ok(at)
    html = card_html(at)
    assert f"Error 1 of {len(errors):,}" in html
    assert _centred_on(html, errors[0][2])
    assert card_buttons(html, errors=True) == {"prev": False, "next": True, "prev_err": False,
                                  "next_err": True}
    press(at, "next_err")
    html = card_html(at)
    assert f"Error 2 of {len(errors):,}" in html
    assert _centred_on(html, errors[1][2])
    assert "<code>dense_00</code>" in html  # the same query
    press(at, "prev_err")
    html = card_html(at)
    assert f"Error 1 of {len(errors):,}" in html and _centred_on(html, errors[0][2])


def test_a_small_query_opens_on_its_objects_with_the_error_buttons(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    # ov_000005 (app_fixtures): one bridge found, one duplicate box: its objects show
    # together, so it opens on them; "Next error" opens the duplicate (pred HBB 2).
    ds = write_dataset(tmp_path_factory.mktemp("small"))
    at = app_on(ds, selected={"vocabulary": "ov_000005"})
    goto(at, "pages/Query_explorer.py")
    at.run()
    assert_ok(at)
    html = card_html(at)
    assert "<code>ov_000005</code>" in html
    assert "2 box errors (missed or false)" in html  # HBB and OBB: one box each
    before = _shown(html)
    buttons = card_buttons(html, errors=True)
    assert buttons["prev_err"] is False and buttons["next_err"]
    press(at, "next_err")
    html = card_html(at)
    assert "Error 1 of 2 · false positive · pred HBB 2" in html
    # zoomed to that box: the link names it (the picker's box 3: GT HBB 1, pred HBB 1, 2)
    assert card_params(at)["box"] == "3"
    assert _shown(html) == before  # (a 64 x 48 image: every view is all of it)
