"""NMS-AP and AI-TOD's protocol in the app (issue 50): the sidebar's two toggles, their link
parameters (``nmsap``, ``aitod``), the Overview's AP panel, Compare's AP table and the
explorer's suppressed boxes, each opened from a link at the non-default values and compared
with the core run in the test (``load_samples`` + ``average_precision_report`` /
``nms_ap.suppress``; never the app's cached functions).

The demo's inflated case: ``strong_localiser`` answers the negative query ``ov_000004``
("chimney", on the storage-tank image) with the box of the tank, which the positive query
``ov_000001`` ("fuel tank") finds with a higher score; NMS-AP removes the chimney's box."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from app_fixtures import assert_ok, card_html, goto
from markdown_tokens import table_frames
from streamlit.testing.v1 import AppTest

from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.analysis.nms_ap import suppress
from ovearth_core.io import load_samples
from ovearth_core.viz.analysis_figures import LEADERBOARD_METRIC_LABELS
from pages.common import analysis_data

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
DEMO = REPO / "assets" / "demo"
GT = DEMO / "ground_truth.json"
PRED = DEMO / "predictions" / "strong_localiser.json"
B_PRED = DEMO / "predictions" / "box_detector.json"
EXPLORER = "pages/Query_explorer.py"
LINK = {"data": "assets/demo", "sub": "strong_localiser", "hardneg": "1", "nmsap": "1",
        "aitod": "1"}
CHIMNEY = "ov_000004"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _open(page: str, params: dict[str, str], **state: Any) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    goto(at, page)
    for key, value in params.items():
        at.query_params[key] = value
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _report(pred: Path, nms: bool = True, aitod: bool = True) -> dict[str, Any]:
    samples = load_samples(GT, pred, "vocabulary", modalities="auto")
    return average_precision_report(samples, 0.5, samples.modalities, True, 100, nms, aitod)


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _text(at: AppTest) -> str:
    return " ".join(str(e.value) for kind in ("caption", "markdown", "warning", "info")
                    for e in getattr(at, kind))


PROTOCOL_CARDS = {  # card label (after the modality) -> the key in the AP report's block
    "NMS-mAP@[.5:.95]": ("coco", "nms_map@[0.5:0.95]"),
    "NMS-mAP@.5": ("coco", "nms_map@0.5"),
    "AI-TOD mAP": ("aitod", "map@[0.5:0.95]"),
    "AI-TOD AP_vt": ("aitod", "map_verytiny"),
    "AI-TOD AP_t": ("aitod", "map_tiny"),
    "oLRP (lower is better)": ("aitod", "olrp"),
}


def test_the_overview_shows_both_protocols_numbers_from_a_link() -> None:
    at = _open("app.py", LINK, show_analysis=True)
    assert_ok(at)
    assert at.sidebar.toggle(key="ap_nms").value is True
    assert at.sidebar.toggle(key="ap_aitod").value is True
    report = _report(PRED)
    shown = {m.label: m.value for m in at.metric}
    for m, tag in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
        for label, (block, key) in PROTOCOL_CARDS.items():
            assert shown[f"{tag} {label}"] == _f(report[m][block][key]), (tag, label)
        coco = report[m]["coco"]
        assert (f"{tag} NMS-AP: {coco['nms_removed']:,} of {coco['nms_num_detections']:,} "
                "boxes suppressed") in _text(at)
    # the premise: NMS-AP changes the number on this submission
    assert report["bbox"]["coco"]["nms_map@[0.5:0.95]"] != report["bbox"]["coco"][
        "map@[0.5:0.95]"]
    assert "NMS-AP and AI-TOD's protocol on" in at.caption[0].value


def test_without_the_link_the_protocols_are_absent() -> None:
    at = _open("app.py", {"data": "assets/demo", "sub": "strong_localiser", "hardneg": "1"},
               show_analysis=True)
    assert_ok(at)
    labels = [m.label for m in at.metric]
    assert "HBB mAP@[.5:.95]" in labels
    assert not [x for x in labels if "NMS" in x or "AI-TOD" in x or "oLRP" in x]
    assert "NMS-mAP" not in _text(at)  # nor in the caption naming each card


@pytest.mark.parametrize("params", [
    {"nmsap": "1"},  # without hard negatives
    {"nmsap": "1", "hardneg": "1", "task": "referring"},  # no negatives in the task
], ids=["no-hardneg", "referring"])
def test_nms_ap_needs_hard_negatives_and_the_vocabulary_task(params: dict[str, str]) -> None:
    at = _open("app.py", {"data": "assets/demo", "sub": "strong_localiser", **params},
               show_analysis=True)
    assert_ok(at)
    toggle = at.sidebar.toggle(key="ap_nms")
    assert toggle.disabled is True
    assert "hard negatives" in toggle.help.lower()
    assert not [m.label for m in at.metric if "NMS" in m.label]


# The protocols' numbers that are resampled (their curves reweighted, as COCO's mAP's).
RESAMPLED = ("NMS-mAP@[.5:.95]", "NMS-mAP@.5", "AI-TOD mAP")


def test_compare_shows_the_protocols_of_a_and_b_with_intervals_where_resampled() -> None:
    at = _open("pages/Compare.py", {**LINK, "b": str(B_PRED.relative_to(REPO))})
    assert_ok(at)
    # A static table (issue 49): the cells as shown, four decimals, "—" for none.
    (table,) = [t for t in table_frames(m.value for m in at.markdown)
                if "averaged" in t.columns]
    reports = _report(PRED), _report(B_PRED)
    rows = {(r["modality"], r["metric"]): r for _, r in table.iterrows()}
    for m, tag in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
        for label, (block, key) in PROTOCOL_CARDS.items():
            row = rows[(tag, label)]
            a, b = (rep[m][block][key] for rep in reports)
            for shown, value in ((row["A"], a), (row["B"], b),
                                 (row["Δ B − A"], None if a is None or b is None else b - a)):
                assert shown == ("—" if value is None else f"{value:.4f}")
            if label in RESAMPLED:  # issue 50: resampled as COCO's mAP is
                assert float(row["CI low"]) <= float(row["CI high"]), label  # defined
                assert row["note"] == "—"
            else:
                assert row["note"] == "no interval (not resampled)"
                assert row["CI low"] == "—"  # none
        plain = rows[(tag, "mAP@[.5:.95]")]
        assert plain["CI low"] != "—" and plain["note"] == "—"
    assert "NMS-AP and AI-TOD's protocol on" in _text(at)


def test_the_explorer_draws_and_names_what_nms_removed_on_the_chimney() -> None:
    samples = load_samples(GT, PRED, "vocabulary", modalities="auto")
    removed = [r for r in suppress(samples, "bbox").removed if r.query_id == CHIMNEY]
    assert [(r.box, r.winner_query_id, r.winner_phrase) for r in removed] == [
        (0, "ov_000001", "fuel tank")]  # the demo's inflated case (docs/metrics.md)
    at = _open(EXPLORER, {**LINK, "q": CHIMNEY})
    assert_ok(at)
    text = _text(at)
    assert "suppressed by NMS-AP" in text
    iou = removed[0].iou
    assert ("predicted HBB #1 (score 0.575) lost to `ov_000001` “fuel tank” (its box #2"
            in text)
    assert f"IoU {iou:.2f}" in text
    assert "A negative phrase answered with a positive's box" in text
    assert "grey dotted: prediction suppressed by NMS-AP" in card_html(at)


def test_the_explorer_says_nothing_of_nms_when_it_is_off() -> None:
    at = _open(EXPLORER, {"data": "assets/demo", "sub": "strong_localiser", "hardneg": "1",
                          "q": CHIMNEY})
    assert_ok(at)
    assert "NMS-AP" not in _text(at) and "NMS-AP" not in card_html(at)


@pytest.mark.parametrize(("scores", "threshold", "box", "expected"), [
    ([0.2, 0.9, 0.5], None, 2, 2),
    ([0.2, 0.9, 0.5], 0.4, 2, 1),  # the 0.2 box before it is hidden
    ([0.2, 0.9, 0.5], 0.4, 0, None),  # itself hidden
    ([0.5, 0.5], 0.5, 1, 1),  # at least the threshold stays (io's rule)
])
def test_a_suppressed_box_is_placed_among_the_boxes_drawn(
        scores: list[float], threshold: float | None, box: int, expected: int | None) -> None:
    assert analysis_data._shown_position(np.array(scores), box, threshold) == expected


def test_the_explorer_places_the_suppressed_box_under_a_score_threshold() -> None:
    """The chimney's boxes score 0.575 (suppressed) and 0.351: at a score threshold of 0.6
    the suppressed box is not drawn, and the list says so."""
    at = _open(EXPLORER, {**LINK, "q": CHIMNEY, "score": "0.6"})
    assert_ok(at)
    assert "hidden by the score threshold (score 0.575)" in _text(at)


def test_the_leaderboard_ranks_by_the_protocols_from_a_link() -> None:
    """The Leaderboard's AP reports are the Overview's (one cached function): with the
    link's ``lbap=1&nmsap=1&aitod=1`` it offers NMS-mAP and AI-TOD mAP to rank by, and the
    table's NMS-mAP column is each submission's ``average_precision_report`` number."""
    at = _open("pages/Leaderboard.py", {**LINK, "lbap": "1"})
    assert_ok(at)
    (rank_by,) = [s for s in at.selectbox if s.label == "Rank by"]
    for name in ("bbox_nms_map", "bbox_aitod_map", "oriented_bbox_nms_map",
                 "oriented_bbox_aitod_map"):
        assert LEADERBOARD_METRIC_LABELS[name] in rank_by.options, rank_by.options
    (table,) = [d.value for d in at.dataframe if "model" in d.value.columns]
    (column,) = [c for c in table.columns if c.startswith("HBB NMS-mAP@[.5:.95]")]
    shown = dict(zip(table["model"], table[column], strict=True))
    assert len(shown) == 4
    for name, value in shown.items():
        entry = _report(DEMO / "predictions" / f"{name}.json")["bbox"]
        want = entry["coco"]["nms_map@[0.5:0.95]"] if entry else None  # no boxes: None
        assert (want is None and value != value) or value == pytest.approx(want), name
