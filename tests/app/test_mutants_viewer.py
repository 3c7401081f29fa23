"""The viewer's rules, by direct calls on a hand-built query (issue 47: planted bugs in
``pages/common/viewer.py`` passed every test; its tests were AppTest runs).

One asymmetric query of a 200 x 100 image: two GT HBBs (the first matched, the second
missed), three predicted HBBs (the first matched, two false), one GT OBB (a rotated quad
given clockwise in image coordinates, missed) and one predicted OBB (false). The box
picker's order is GT HBBs, predicted HBBs, GT OBBs, predicted OBBs; every expected value
is written out by hand from that order and those coordinates."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest
from pyproj import CRS, Transformer

from ovearth_core import georef
from ovearth_core.convert.chips import Chip
from ovearth_core.results import DetEntry, Match, QueryRow, SegEntry
from ovearth_core.types import Sample
from pages.common import analysis_data, viewer

GREEN, RED, ORANGE, GREY = "#1db954", "#e53935", "#ff9800", "#9e9e9e"
GT_HBB = [[10.0, 20.0, 50.0, 40.0], [100.0, 10.0, 150.0, 90.0]]
PRED_HBB = [[12.0, 22.0, 50.0, 40.0], [160.0, 60.0, 190.0, 95.0], [0.0, 0.0, 5.0, 5.0]]
GT_OBB = [[[60.0, 10.0], [80.0, 30.0], [70.0, 40.0], [50.0, 20.0]]]
PRED_OBB = [[[170.0, 5.0], [190.0, 5.0], [190.0, 25.0], [170.0, 25.0]]]


def _sample(**kw: Any) -> Sample:
    base: dict[str, Any] = dict(
        sample_id="q1", phrase="red *car*", negative=False, image_path="img/a.png",
        ann_id="a1", category="car", width=200, height=100,
        gt_boxes=np.array(GT_HBB), pred_boxes=np.array(PRED_HBB),
        pred_box_scores=np.array([0.9, 0.8, 0.7]),
        gt_obbs=np.array(GT_OBB), pred_obbs=np.array(PRED_OBB),
        pred_obb_scores=np.array([0.6]))
    return Sample(**{**base, **kw})


def _det(n_gt: int, n_pred: int, matches: list[tuple[int, int, float]],
         mean_iou: float | None = None, f1: float | None = None,
         precision: float | None = None, recall: float | None = None) -> DetEntry:
    tp = len(matches)
    return DetEntry(n_gt, n_pred, tp, n_pred - tp, n_gt - tp, precision, recall, f1, mean_iou,
                    n_gt > 0, n_pred > 0, True, tuple(Match(*m) for m in matches), (), None,
                    json={"matches": [list(m) for m in matches]})


def _row(bbox: DetEntry | None = None, obb: DetEntry | None = None,
         seg: SegEntry | None = None) -> QueryRow:
    return QueryRow("q1", "red *car*", False, True, True, "img/a.png", "a1", "car", seg, bbox,
                    obb)


BBOX = _det(2, 3, [(0, 0, 0.8)], mean_iou=0.8, f1=0.4, precision=1 / 3, recall=0.5)
OBB = _det(1, 1, [], f1=0.0, precision=0.0, recall=0.0)
ROW = _row(BBOX, OBB)


def _rect(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]


# ---- the box picker's order, numbers, statuses and colours ---------------------------

def test_the_pickers_boxes_are_hbbs_then_obbs_gt_before_predictions() -> None:
    items = viewer._picked_items(_sample(), ROW)
    got = [(o["role"], o["kind"], o["number"], o["status"], o["colour"]) for o in items]
    assert got == [("GT", "HBB", 1, "matched", GREEN), ("GT", "HBB", 2, "missed", ORANGE),
                   ("pred", "HBB", 1, "matched", GREEN),
                   ("pred", "HBB", 2, "false positive", RED),
                   ("pred", "HBB", 3, "false positive", RED),
                   ("GT", "OBB", 1, "missed", ORANGE),
                   ("pred", "OBB", 1, "false positive", RED)]
    # the outlines: an HBB's corners from its xyxy, an OBB's corners in its own order
    assert items[1]["outline"].tolist() == _rect(100, 10, 150, 90)
    assert items[5]["outline"].tolist() == [*GT_OBB[0], GT_OBB[0][0]]


def test_an_unevaluated_modality_has_no_boxes_in_the_picker() -> None:
    only_obb = viewer._picked_items(_sample(), _row(None, OBB))
    assert [(o["role"], o["kind"], o["number"]) for o in only_obb] == [
        ("GT", "OBB", 1), ("pred", "OBB", 1)]
    assert viewer._picked_kinds(_row(None, None)) == []
    assert [(e, o, k) for e, o, k in viewer._picked_kinds(ROW)] == [
        (BBOX, False, "HBB"), (OBB, True, "OBB")]


@pytest.mark.parametrize("n, outline", [
    (0, _rect(10, 20, 50, 40)), (1, _rect(100, 10, 150, 90)), (2, _rect(12, 22, 50, 40)),
    (4, _rect(0, 0, 5, 5)), (5, [*GT_OBB[0], GT_OBB[0][0]]),
    (6, [*PRED_OBB[0], PRED_OBB[0][0]])])
def test_the_pickers_number_n_is_its_nth_box(n: int, outline: list[list[float]]) -> None:
    assert viewer._object_outline(_sample(), ROW, n).tolist() == outline


def test_past_the_last_box_there_is_no_outline() -> None:
    assert viewer._object_outline(_sample(), ROW, 7) is None
    assert viewer._object_outline(_sample(), _row(None, OBB), 2) is None
    assert viewer._object_outline(_sample(), _row(None, OBB), 0).tolist() == [
        *GT_OBB[0], GT_OBB[0][0]]


def test_the_errors_are_the_unmatched_boxes_numbered_as_in_the_picker() -> None:
    assert viewer.error_boxes(_sample(), ROW) == [
        (1, "missed · GT HBB 2"), (3, "false positive · pred HBB 2"),
        (4, "false positive · pred HBB 3"), (5, "missed · GT OBB 1"),
        (6, "false positive · pred OBB 1")]
    assert viewer.error_boxes(_sample(), _row(None, OBB)) == [
        (0, "missed · GT OBB 1"), (1, "false positive · pred OBB 1")]
    everything = _row(_det(2, 3, [(1, 2, 0.6), (0, 1, 0.7)]), _det(1, 1, [(0, 0, 0.9)]))
    assert viewer.error_boxes(_sample(), everything) == [(2, "false positive · pred HBB 1")]


# ---- the error navigator -------------------------------------------------------------

ERRS = [(1, "missed · GT HBB 2"), (3, "false positive · pred HBB 2"), (6, "x")]


def test_the_error_bar_counts_from_1_and_enables_the_steps_that_exist() -> None:
    assert viewer._error_bar([], None) is None
    assert viewer._error_bar(ERRS, 1) == (
        "Error 1 of 3 · missed · GT HBB 2 · Shift+← / Shift+→", False, True)
    assert viewer._error_bar(ERRS, 3) == (
        "Error 2 of 3 · false positive · pred HBB 2 · Shift+← / Shift+→", True, True)
    assert viewer._error_bar(ERRS, 6) == ("Error 3 of 3 · x · Shift+← / Shift+→", True, False)
    assert viewer._error_bar(ERRS, 2) == (
        "3 box errors (missed or false) · “Next error” opens the first · Shift+→", False, True)
    assert viewer._error_bar(ERRS[:2], 5)[0].startswith("2 box errors ")
    assert viewer._error_bar(ERRS[:1], None) == (
        "1 box error (missed or false) · “Next error” opens the first · Shift+→", False, True)
    many = [(k, "e") for k in range(1200)]
    assert viewer._error_bar(many, 1100)[0] == "Error 1,101 of 1,200 · e · Shift+← / Shift+→"
    assert viewer._error_bar(many, None)[0].startswith("1,200 box errors ")


@pytest.fixture
def ss(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    session: dict[str, Any] = {}
    monkeypatch.setattr(viewer.st, "session_state", session)
    return session


@pytest.mark.parametrize("at, slot, focus", [
    (None, "next_err", 1), (None, "prev_err", 1), (2, "next_err", 1),
    (1, "next_err", 3), (3, "next_err", 6), (6, "next_err", 6),
    (3, "prev_err", 1), (1, "prev_err", 1), (6, "prev_err", 3)])
def test_stepping_through_errors_stops_at_the_ends(ss: dict[str, Any], at: int | None,
                                                  slot: str, focus: int) -> None:
    viewer._step_error("q1", ERRS, at, slot)
    assert ss["view_focus"] == ("q1", focus)


def test_no_errors_no_step(ss: dict[str, Any]) -> None:
    viewer._step_error("q1", [], 1, "next_err")
    assert "view_focus" not in ss


def test_picking_a_box_focuses_it_by_its_picker_number(ss: dict[str, Any]) -> None:
    ss["_w_objects"] = 4
    viewer._on_object("q7")
    assert ss["view_focus"] == ("q7", 4)
    ss["_w_objects"] = None
    viewer._on_object("q7")
    assert ss["view_focus"] is None
    ss["_w_object_no"] = 12  # the number input counts from 1
    viewer._on_object_no("q8")
    assert ss["view_focus"] == ("q8", 11)
    ss["_w_object_no"] = None
    viewer._on_object_no("q8")
    assert ss["view_focus"] is None


def test_the_layer_pills_keep_the_layers_they_do_not_offer(ss: dict[str, Any]) -> None:
    ss["view_layers"] = ["GT mask", "GT OBB", "predicted HBB"]
    ss["_w_view_layers"] = ["predicted OBB", "GT HBB"]
    shown = ("GT HBB", "predicted HBB", "GT OBB", "predicted OBB")
    viewer._on_layers(shown)
    # in the layers' order; GT mask was not offered, so it stays; the offered ones follow
    # the pills
    assert ss["view_layers"] == ["GT mask", "GT HBB", "predicted OBB"]
    ss["_w_view_layers"] = None
    viewer._on_layers(shown)
    assert ss["view_layers"] == ["GT mask"]


def test_the_view_options_are_read_as_one_key(ss: dict[str, Any]) -> None:
    ss.update(view_layers=["GT HBB"], view_opacity=1, view_pixel_mode=0, view_labels=1,
              view_interactive="")
    key = viewer._controls_key()
    assert key == (("GT HBB",), 1.0, False, True, False)
    ss.update(view_pixel_mode=1, view_labels=0, view_interactive=2)
    assert viewer._controls_key()[2:] == (True, False, True)
    assert [type(v) for v in key] == [tuple, float, bool, bool, bool]


# ---- where a query opens -------------------------------------------------------------

def _dense() -> Sample:
    """Forty 4-px GT boxes spread over a 2,000-px image: no view shows them all at 40 px."""
    boxes = np.array([[50.0 * k, 10.0 * k, 50.0 * k + 4, 10.0 * k + 4] for k in range(40)])
    return _sample(width=2000, height=500, gt_boxes=boxes, pred_boxes=boxes[:1] + 1000,
                   pred_box_scores=np.array([0.5]), gt_obbs=np.zeros((0, 4, 2)),
                   pred_obbs=np.zeros((0, 4, 2)), pred_obb_scores=np.zeros(0))


def test_a_dense_query_with_errors_opens_on_its_first_error_zoomed_to_it() -> None:
    sample = _dense()
    row = _row(_det(40, 1, [(k, 0, 0.9) for k in ()] + []), None)
    errors = viewer.error_boxes(sample, row)
    assert errors[0] == (0, "missed · GT HBB 1")
    at, region = viewer._opening(sample, row, "GT target", errors[1:])
    assert at == 1
    # the square around GT box 2 (50..54, 10..14): 96 px wide (the minimum), centred on it
    assert region == pytest.approx((52 - 48, 12 - 12, 52 + 48, 12 + 84))


def test_other_queries_open_on_their_zoom_setting() -> None:
    sample = _dense()
    row = _row(_det(40, 1, []), None)
    errors = viewer.error_boxes(sample, row)
    assert viewer._opening(sample, row, "full image", errors) == (None, (0.0, 0.0, 2000.0,
                                                                        500.0))
    at, _ = viewer._opening(sample, row, "GT target", [])
    assert at is None
    sparse = _sample()
    at, _ = viewer._opening(sparse, ROW, "GT target", viewer.error_boxes(sparse, ROW))
    assert at is None  # not dense: every GT box shows at once
    # the zoom setting reaches the region (``_opening_22``/``_24``): on a 2,000 x 1,000
    # image, "GT only" is the GT envelope (10..150, 10..90) grown by a quarter on each side
    # (210 px, centred on (80, 50)) shifted inside the image: (0, 0, 210, 210); with the
    # predictions (0..190, 0..95) it would be 285 px wide
    big = _sample(width=2000, height=1000)
    assert viewer._opening(big, ROW, "GT only", viewer.error_boxes(big, ROW)) == (
        None, pytest.approx((0.0, 0.0, 210.0, 210.0)))


# ---- labels, places and centres ------------------------------------------------------

def test_number_ranges_name_each_run_of_a_kind_and_role() -> None:
    labels = tuple([f"GT HBB {k} · missed · x" for k in range(1, 1001)]
                   + [f"pred HBB {k} · false positive · y" for k in range(1, 3)]
                   + ["GT OBB 1 · missed · z"])
    assert viewer._number_ranges(labels) == (
        "GT HBB 1–1,000, pred HBB 1,001–1,002, GT OBB 1,003–1,003")
    assert viewer._number_ranges(("pred OBB 1 · a",)) == "pred OBB 1–1"


def test_an_envelope_is_min_and_max_of_each_axis() -> None:
    outline = np.array([[60.0, 10.0], [80.0, 30.0], [70.0, 40.0], [50.0, 20.0]])
    assert viewer._envelope(outline) == (50.0, 10.0, 80.0, 40.0)


def test_astray_objects_of_a_chipped_scene_say_where_they_fell() -> None:
    scene = analysis_data.SceneChips([Chip("A", (10.0, 0.0, 120.0, 100.0), True),
                                      Chip("B", (110.0, 0.0, 200.0, 100.0), True)], {})
    items = viewer._picked_items(_sample(), ROW)
    places = viewer._chip_places(scene, items)
    assert places == ["", "on the seam between chips A and B", "", "in chip B",
                      "in none of the submission's 2 chips of this scene", "in chip A",
                      "in chip B"]
    assert viewer._chip_places(None, items) == [""] * 7
    assert viewer._chip_places(analysis_data.SceneChips([], {}), items) == [""] * 7


# A UTM zone 31N transform: 0.5 m pixels, x grows east, y south.
REF = georef.Georef("EPSG:32631", CRS.from_epsg(32631).to_wkt(), 32631,
                    (0.5, 0.0, 500_000.0, 0.0, -0.5, 4_000_000.0), 200, 100)


def _lonlat(px: float, py: float) -> tuple[float, float]:
    to = Transformer.from_crs("EPSG:32631", "EPSG:4326", always_xy=True)
    return to.transform(500_000.0 + 0.5 * px, 4_000_000.0 - 0.5 * py)


def test_a_boxs_centre_is_its_envelopes_in_map_coordinates() -> None:
    items = viewer._picked_items(_sample(), ROW)
    assert viewer._centres(items, None) == [""] * 7
    assert viewer._centres([], REF) == []
    centres = viewer._centres(items, REF)
    # GT HBB 2: (100..150, 10..90) -> centre (125, 50) -> X 500,062.50, Y 3,999,975.00
    assert centres[1].startswith(" · centre EPSG:32631 X 500,062.50, Y 3,999,975.00 · lon ")
    lon, lat = _lonlat(125, 50)
    assert f"lon {lon:.6f}°, lat {lat:.6f}°" in centres[1]
    # the GT OBB: envelope (50..80, 10..40) -> centre (65, 25), not its corners' mean
    assert " X 500,032.50, Y 3,999,987.50 " in centres[5]


def test_the_map_note_is_the_view_centres_position() -> None:
    assert viewer._map_note(None, (0, 0, 10, 10)) == []
    note = viewer._map_note(REF, (20.0, 10.0, 120.0, 50.0))
    assert note[0].startswith("View centre: EPSG:32631 X 500,035.00, Y 3,999,985.00 · ")
    assert note[0].endswith("°.")


def test_hover_text_gains_each_vertexs_map_and_wgs84_position() -> None:
    fig = go.Figure([go.Scatter(x=[1.0], y=[1.0], mode="markers", hovertext=["m"]),
                     go.Scatter(x=[10.0, 30.0, None, 40.0, 5.0], y=[20.0, 20.0, None, 60.0,
                                                                     None],
                                mode="lines", hovertext=["a", "a", None, "b", None]),
                     go.Scatter(x=[1.0, 2.0], y=[1.0, 2.0], mode="lines")])
    viewer._hover_map_coordinates(fig, None)
    assert fig.data[1].customdata is None
    viewer._hover_map_coordinates(fig, REF)
    # a marker trace before the outlines is skipped, not the end (``_hover_..._9``)
    data = np.asarray(fig.data[1].customdata, dtype=float)
    assert data[:, 0][[0, 1, 3]].tolist() == [500_005.0, 500_015.0, 500_020.0]
    assert data[:, 1][[0, 1, 3]].tolist() == [3_999_990.0, 3_999_990.0, 3_999_970.0]
    assert np.allclose(data[3, 2:], _lonlat(40, 60), rtol=0, atol=1e-9)
    assert np.isnan(data[2, 2:]).all()  # the gap between outlines has no position
    assert np.isnan(data[4, 2:]).all()  # nor a vertex with one coordinate missing
    template = fig.data[1].hovertemplate
    assert template.startswith("%{hovertext}<br>EPSG:32631 X %{customdata[0]:,.2f}, "
                               "Y %{customdata[1]:,.2f}<br>lon %{customdata[2]:.6f}°, "
                               "lat %{customdata[3]:.6f}°")
    assert fig.data[0].customdata is None and fig.data[2].customdata is None


def test_hover_text_without_wgs84_says_why_and_keeps_the_map_position() -> None:
    wkt = 'LOCAL_CS["50% <b>"]'
    local = georef.Georef(wkt, wkt, None, (2.0, 0.0, 10.0, 0.0, -2.0, 50.0), 200, 100)
    fig = go.Figure([go.Scatter(x=[1.0], y=[2.0], mode="lines", hovertext=["a"]),
                     go.Scatter(x=[3.0], y=[4.0], mode="lines", hovertext=["b"])])
    viewer._hover_map_coordinates(fig, local)
    assert np.asarray(fig.data[0].customdata).tolist() == [[12.0, 46.0]]
    assert np.asarray(fig.data[1].customdata).tolist() == [[16.0, 42.0]]  # every outline
    template = fig.data[0].hovertemplate
    assert template.startswith("%{hovertext}<br>map X %{customdata[0]:,.2f}, Y "
                               "%{customdata[1]:,.2f}<br>no WGS84 position (")
    assert "%{customdata[2]" not in template
    # the reason quotes the CRS: its % doubled (plotly's template), its markup escaped
    assert "50%% &lt;b&gt;" in template and "<b>" not in template


# ---- NMS-AP's suppressed boxes -------------------------------------------------------

class _Gone:
    def __init__(self, modality: str, box: int | None):
        self.modality, self.box = modality, box


def test_suppressed_positions_group_the_drawn_boxes_by_modality(
        monkeypatch: pytest.MonkeyPatch) -> None:
    gone = [_Gone("bbox", 2), _Gone("oriented_bbox", 0), _Gone("bbox", None),
            _Gone("bbox", 0), _Gone("bbox", 2)]
    seen: list[tuple[Any, ...]] = []

    def fake(gt: Any, pred: Any, options: Any, query_id: str) -> list[_Gone]:
        seen.append((gt, pred, options, query_id))
        return gone

    monkeypatch.setattr(analysis_data, "nms_suppressed", fake)

    class _Run:
        gt, pred, options = "G", "P", "O"

    assert viewer.suppressed_positions(_Run(), "q5") == {  # type: ignore[arg-type]
        "bbox": frozenset({0, 2}), "oriented_bbox": frozenset({0})}
    assert seen == [("G", "P", "O", "q5")]


def test_the_legend_names_dotted_difficult_and_grey_suppressed_only_when_present() -> None:
    plain = viewer.box_legend(_sample())
    assert plain == ("Boxes: green matched · red false positive · orange missed GT; GT solid, "
                     "prediction dashed. Masks: GT cyan, prediction magenta (or TP green, "
                     "FP red, FN orange).")
    hard = viewer.box_legend(_sample(gt_difficult=np.array([False, True])), suppressed=True)
    assert hard == ("Boxes: green matched · red false positive · orange missed GT; GT solid, "
                    "prediction dashed, difficult GT (DOTA) dotted, grey dotted: prediction "
                    "suppressed by NMS-AP. Masks: GT cyan, prediction magenta (or TP green, "
                    "FP red, FN orange).")
    assert "difficult" not in viewer.box_legend(_sample(gt_difficult=np.array([False,
                                                                             False])))


# ---- the metric table, scores and facts ----------------------------------------------

SEG = SegEntry(1200, 800, 600, 1400, 0.4286, 0.6, 0.75, 0.5, 0.6, True, True, True)


def test_the_metric_table_puts_each_number_in_its_column() -> None:
    frame = viewer._metrics_table(_row(BBOX, OBB, SEG))
    assert frame.to_dict("records") == [
        {"modality": "mask", "IoU †": "0.429", "F1/Dice": "0.600", "P": "0.750", "R": "0.500",
         "GT / pred": "1,200 / 800 px"},
        {"modality": "HBB", "IoU †": "0.800", "F1/Dice": "0.400", "P": "0.333", "R": "0.500",
         "GT / pred": "2 / 3 (TP 1)"},
        {"modality": "OBB", "IoU †": "—", "F1/Dice": "0.000", "P": "0.000", "R": "0.000",
         "GT / pred": "1 / 1 (TP 0)"}]
    assert viewer._metrics_table(_row(None, OBB)).modality.tolist() == ["OBB"]
    assert viewer._metrics_table(_row()).empty


def test_the_metric_html_escapes_and_notes_the_iou_column() -> None:
    assert viewer._metrics_html(_row()) == ""
    two = viewer._metrics_html(_row(BBOX, OBB))
    assert "<td>2 / 3 (TP 1)</td></tr><tr><td>OBB</td>" in two  # one row after the other
    text = viewer._metrics_html(_row(None, OBB))
    assert text == ("<table><thead><tr><th>modality</th><th>IoU †</th><th>F1/Dice</th>"
                    "<th>P</th><th>R</th><th>GT / pred</th></tr></thead><tbody><tr>"
                    "<td>OBB</td><td>—</td><td>0.000</td><td>0.000</td><td>0.000</td>"
                    "<td>1 / 1 (TP 0)</td></tr></tbody></table><p class='ov-cap'>"
                    f"{viewer.IOU_NOTE}</p>")


TABLE_ROW = {"seg_iou": 0.5, "bbox_f1": None, "obb_f1": 0.25, "polarity": "positive",
             "outcome": "partial", "failure": "<b>mislocalized</b>", "failure_detail": "",
             }


def test_the_scores_line_names_each_score_and_skips_the_missing() -> None:
    assert viewer._scores(TABLE_ROW) == "Scores: mask IoU 0.500 · OBB F1 0.250"
    assert viewer._scores({"seg_iou": None, "bbox_f1": 1.0, "obb_f1": None}) == (
        "Scores: HBB F1 1.000")
    assert viewer._scores({"seg_iou": None, "bbox_f1": None, "obb_f1": None}) == (
        "Scores: — (negative query: no score, only presence)")


def _drawn(**kw: Any) -> viewer.Drawn:
    base: dict[str, Any] = dict(figure=None, picture=b"VIEW", thumbnail=b"THUMB", notice=None,
                                scale=0.25, detail_shape=None, legend="L <i>")
    return viewer.Drawn(**{**base, **kw})


def test_the_card_escapes_user_text_and_says_what_part_of_the_image_shows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(viewer.state, "annotation_url", lambda ann: f"/Annotation?ann={ann}&x")
    sample = _sample(phrase="<script>x</script>", category="a&b", image_path="i<1>.png")
    row = {**TABLE_ROW, "failure_detail": "<img src=x>"}
    text, pictures = viewer._card("q<1>", sample, ROW, row, _drawn(detail_shape=(30, 40)),
                                  (20.0, 10.0, 1120.5, 50.0), "t<a>", ["Map <n>."], "head",
                                  None, None)
    assert "<script>" not in text and "<img src=x>" not in text and "<i>" not in text
    assert "&lt;script&gt;x&lt;/script&gt;" in text and "a&amp;b" in text
    assert "<code>q&lt;1&gt;</code>" in text and "alt='view of query q&lt;1&gt;'" in text
    assert "Review tags: t&lt;a&gt;" in text and "&lt;img src=x&gt;" in text
    assert "href='/Annotation?ann=a1&amp;x'" in text
    assert ("Showing x 20–1,120, y 10–50 of the 200 × 100 image. Map &lt;n&gt;. Full "
            "resolution around the target (40 × 30 px); the rest of the image is shown at "
            "25%.") in text
    assert "Image <code>i&lt;1&gt;.png</code> · 200 × 100 px" in text
    assert set(pictures.values()) == {b"VIEW", b"THUMB"}
    for address in pictures:
        assert f"data-pic='{address}'" in text
    view = next(a for a, p in pictures.items() if p == b"VIEW")
    assert f"<img class='ov-view' data-pic='{view}'" in text
    thumb = next(a for a, p in pictures.items() if p == b"THUMB")
    assert f"<img class='ov-thumb' data-pic='{thumb}'" in text


def test_the_card_without_review_or_detail_says_neither(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(viewer.state, "annotation_url", lambda ann: "/A")
    text, _ = viewer._card("q1", _sample(), ROW, TABLE_ROW, _drawn(), (0, 0, 200, 100), None,
                           [], "", None, None)
    assert "Review tags" not in text and "Full resolution" not in text
    assert "class='ov-cap'></p>" not in text  # no empty failure detail
    text, _ = viewer._card("q1", _sample(), ROW, TABLE_ROW, _drawn(), (0, 0, 200, 100), "",
                           [], "", None, None)
    assert "<p>Review tags: —</p>" in text


def test_the_facts_render_user_text_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(viewer.state, "annotation_url", lambda ann: f"/A?ann={ann}")
    facts = viewer._facts("q`1", _sample(category="c*1"), {**TABLE_ROW, "failure_detail":
                                                           "d*"}, "")
    lines = facts.split("\n\n")
    assert lines[0] == "### `` q`1 ``"
    assert lines[2].startswith("Category: **c\\*1** · positive query")
    assert "*d\\**" in lines
    assert lines[1] != "**red *car***" and "red" in lines[1]
    assert lines[-2] == "[Same object in other tasks ↗](/A?ann=a1)"
    assert lines[-1] == "Image `img/a.png` · 200 × 100 px"
    assert "Review tags: —" in lines
    tagged = viewer._facts("q", _sample(), TABLE_ROW, "t*").split("\n\n")
    assert "Review tags: t\\*" in tagged
    assert "Scores: mask IoU 0.500 · OBB F1 0.250" in lines
    no_tags = viewer._facts("q", _sample(), TABLE_ROW, None)
    assert "Review tags" not in no_tags and "*" not in no_tags.split("\n\n")[3]


def test_the_card_opens_with_the_navigator_of_its_head_buttons_and_errors(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The card's first element is the navigator bar: ``head`` escaped, "◀ Previous"
    disabled and "Next ▶" enabled as ``nav`` says, and the error line under it
    (``_card_68``..``_73``: an argument of ``bar`` dropped or ``None``)."""
    monkeypatch.setattr(viewer.state, "annotation_url", lambda ann: "/A")
    errors = ("Error 2 of 5 · missed · GT HBB 2", True, False)
    text, _ = viewer._card("q1", _sample(), ROW, TABLE_ROW, _drawn(), (0, 0, 200, 100), None,
                           [], "Query 3 of 9 <x>", (False, True), errors)
    top = text[len(viewer._CARD_CSS):text.index("<div class='ov-card'>")]
    assert text.startswith(viewer._CARD_CSS)
    assert "<p class='ov-nav'>Query 3 of 9 &lt;x&gt;</p>" in top
    assert "data-go='prev' disabled>" in top and "data-go='next'>" in top
    assert "<p class='ov-errnav'>Error 2 of 5 · missed · GT HBB 2</p>" in top
    assert "data-go='prev_err'>" in top and "data-go='next_err' disabled>" in top
    plain, _ = viewer._card("q1", _sample(), ROW, TABLE_ROW, _drawn(), (0, 0, 200, 100), None,
                            [])
    assert plain.startswith(viewer._CARD_CSS + "<div class='ov-card'>")  # no head: no bar


def test_the_card_lays_out_view_and_side_as_its_style_names_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The markup carries the classes the card's style sheet lays out (``ov-main``,
    ``ov-side``), the side column's blocks one after the other, the link to the annotation
    named and the thumbnail described (``_card_58``..``_82``)."""
    monkeypatch.setattr(viewer.state, "annotation_url", lambda ann: "/A")
    text, pictures = viewer._card("q1", _sample(), ROW, TABLE_ROW, _drawn(picture=None),
                                  (0, 0, 200, 100), None, [])
    assert "<div class='ov-card'><div class='ov-main'><img class='ov-view'" in text
    assert "<div class='ov-side'><h3><code>q1</code></h3><p><b>" in text
    assert ">Same object in other tasks ↗</a></p>" in text
    assert "style='max-width:240px' alt='the full image with all boxes'><p class='ov-cap'>" in text
    assert ("<p class='ov-cap'>Full image with all boxes; yellow = the view it opened on. "
            "L &lt;i&gt;</p>") in text
    assert b"" in pictures.values()  # a view not drawn statically: an empty picture


def test_the_cards_help_names_the_controls_the_page_has(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The note under the view names the toggles by their labels (“Interactive” in “View
    options”, “Tag / note”) and the keys (→ ←, Shift) the card's script binds."""
    monkeypatch.setattr(viewer.state, "annotation_url", lambda ann: "/A")
    text, _ = viewer._card("q1", _sample(), ROW, TABLE_ROW, _drawn(), (0, 0, 200, 100), None,
                           [])
    assert ("“Interactive” (in View options) zooms, pans and shows each outline&#x27;s text on "
            "hover; “Tag / note” opens the review panel under the view; the → and ← keys open "
            "the next and previous query, with Shift the next and previous box error.</p>"
            ) in text


# ---- what NMS-AP removed, said under the view ----------------------------------------

def _nms_run(nms_ap: bool, negative: bool = False) -> Any:
    from types import SimpleNamespace

    entries = {"q3": SimpleNamespace(sample=_sample(negative=negative), row=ROW),
               "q4": SimpleNamespace(sample=_sample(negative=not negative), row=ROW)}
    return SimpleNamespace(options=SimpleNamespace(nms_ap=nms_ap), gt="G", pred="P",
                           evaluation=SimpleNamespace(run=SimpleNamespace(
                               entry=entries.__getitem__)))


def _lost(modality: str, box: int | None, **kw: Any) -> Any:
    from types import SimpleNamespace

    base = dict(modality=modality, box=box, score=0.61, winner_query_id="w`1",
                winner_phrase="big *ship*", winner_box=0, winner_score=0.9, iou=0.876)
    return SimpleNamespace(**{**base, **kw})


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    monkeypatch.setattr(viewer.st, "caption", lambda text, **_: out.append(("caption", text)))
    monkeypatch.setattr(viewer.st, "markdown", lambda text, **_: out.append(("markdown",
                                                                             text)))
    return out


def test_the_suppressed_panel_numbers_boxes_from_1_and_names_the_winner(
        monkeypatch: pytest.MonkeyPatch, said: list[tuple[str, str]]) -> None:
    gone = [_lost("bbox", 2), _lost("oriented_bbox", 0, winner_box=4, score=0.5),
            _lost("bbox", None, iou=0.5)]
    asked: list[Any] = []
    monkeypatch.setattr(analysis_data, "nms_suppressed",
                        lambda g, p, o, q: asked.append((g, p, o.nms_ap, q)) or gone)
    viewer.suppressed_panel(_nms_run(True), "q3")
    assert asked == [("G", "P", True, "q3")]
    assert said == [("markdown", "\n".join([
        "**3 boxes suppressed by NMS-AP** (drawn grey, dotted): another phrase's box on the "
        "same object scored higher.",
        "- predicted HBB #3 (score 0.610) lost to `` w`1 `` “big \\*ship\\*” (its box #1, "
        "score 0.900), IoU 0.88 with the GT box they overlap",
        "- predicted OBB #1 (score 0.500) lost to `` w`1 `` “big \\*ship\\*” (its box #5, "
        "score 0.900), IoU 0.88 with the GT box they overlap",
        "- hidden by the score threshold (score 0.610) lost to `` w`1 `` “big \\*ship\\*” "
        "(its box #1, score 0.900), IoU 0.50 with the GT box they overlap"]))]


def test_the_suppressed_panel_of_one_box_a_negative_phrase_or_none(
        monkeypatch: pytest.MonkeyPatch, said: list[tuple[str, str]]) -> None:
    monkeypatch.setattr(analysis_data, "nms_suppressed", lambda g, p, o, q: [_lost("bbox", 0)])
    viewer.suppressed_panel(_nms_run(True, negative=True), "q3")
    text = said[-1][1]
    assert text.startswith("**1 box suppressed by NMS-AP** (drawn grey")
    assert text.endswith("\n\nA negative phrase answered with a positive's box: plain AP "
                         "counts it in this phrase's category alone; NMS-AP removes it.")
    monkeypatch.setattr(analysis_data, "nms_suppressed",
                        lambda g, p, o, q: [_lost("bbox", 0), _lost("bbox", 1)])
    viewer.suppressed_panel(_nms_run(True), "q3")
    assert said[-1][1].startswith("**2 boxes suppressed by NMS-AP**")
    monkeypatch.setattr(analysis_data, "nms_suppressed", lambda g, p, o, q: [])
    viewer.suppressed_panel(_nms_run(True), "q3")
    assert said[-1] == ("caption", "NMS-AP suppressed none of this query's boxes.")
    said.clear()
    viewer.suppressed_panel(_nms_run(False), "q3")  # NMS-AP off: nothing said
    assert said == []


# ---- the box picker's widget ---------------------------------------------------------

@pytest.fixture
def widgets(monkeypatch: pytest.MonkeyPatch, ss: dict[str, Any]) -> list[tuple[str, tuple,
                                                                                dict]]:
    out: list[tuple[str, tuple, dict]] = []
    for name in ("number_input", "selectbox", "caption"):
        monkeypatch.setattr(viewer.st, name,
                            lambda *a, _n=name, **k: out.append((_n, a, k)))
    return out


def test_the_picker_lists_the_boxes_and_shows_the_focused_one_of_this_query(
        ss: dict[str, Any], widgets: list) -> None:
    labels = ("GT HBB 1 · matched", "GT HBB 2 · missed", "pred HBB 1 · matched")
    ss["view_focus"] = ("q1", 2)
    viewer._object_picker("q1", labels)
    assert ss["_w_objects"] == 2
    (kind, args, kw), = widgets
    assert kind == "selectbox"
    assert args[0] == "Zoom to one of the query's 3 boxes" and list(args[1]) == [0, 1, 2]
    assert [kw["format_func"](n) for n in args[1]] == list(labels)
    assert kw["key"] == "_w_objects" and kw["args"] == ("q1",)
    assert kw["on_change"] is viewer._on_object
    assert kw["placeholder"] == "the view it opened on"  # nothing picked: the opening view
    ss["view_focus"] = ("other", 1)  # another query's box: nothing picked here
    viewer._object_picker("q1", labels)
    assert ss["_w_objects"] is None
    widgets.clear()
    viewer._object_picker("q1", ())
    assert widgets == []


def test_past_500_boxes_the_picker_is_a_number_from_1(ss: dict[str, Any],
                                                       widgets: list) -> None:
    labels = tuple(f"GT HBB {k} · missed" for k in range(1, 502))
    ss["view_focus"] = ("q1", 9)
    viewer._object_picker("q1", labels)
    assert ss["_w_object_no"] == 10
    (kind, args, kw), caption = widgets
    assert kind == "number_input"
    assert args[0] == ("Zoom to one of the query's 501 boxes by number "
                       "(GT HBB 1–501)")
    assert (kw["min_value"], kw["max_value"], kw["step"], kw["key"], kw["args"]) == (
        1, 501, 1, "_w_object_no", ("q1",))
    assert kw["on_change"] is viewer._on_object_no
    assert kw["value"] is None and kw["placeholder"] == "the view it opened on"
    assert caption == ("caption", ("GT HBB 10 · missed",), {})
    widgets.clear()
    ss["view_focus"] = None
    viewer._object_picker("q1", labels)
    assert ss["_w_object_no"] is None and [w[0] for w in widgets] == ["number_input"]
    widgets.clear()
    viewer._object_picker("q1", labels[:500])  # 500: still a list
    assert [w[0] for w in widgets] == ["selectbox"]


def test_the_view_caches_hash_the_options_by_their_text_not_field_by_field(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The box picker's cache (and the view's, same rule) names the run's options in its
    key: hashed by their text, not copied into a dict field by field (Streamlit's way
    for a dataclass; most of the cache's hashing on every "Next", issue 49), and still a
    different entry for options that differ in one field."""
    import dataclasses

    from ovearth_core.options import Options

    copied: list[type] = []
    real = dataclasses.asdict
    monkeypatch.setattr(dataclasses, "asdict",
                        lambda obj, *a, **kw: copied.append(type(obj)) or real(obj, *a, **kw))
    built: list[str] = []

    class Entry:
        sample = _sample()
        row = _row(None, None)

    class Evaluated:
        @staticmethod
        def entry(query_id: str) -> Entry:
            built.append(query_id)
            return Entry()

    run = type("R", (), {"evaluation": type("E", (), {"run": Evaluated})})()
    viewer._picker.clear()
    try:
        for options in (Options(task="vocabulary", modalities=("bbox",)),
                        Options(task="vocabulary", modalities=("bbox",)),
                        Options(task="vocabulary", modalities=("bbox",), nms_ap=True)):
            assert viewer._picker(run, ("G", "P", options, "/i", (1, 2, 3, 4)), "q1", None,
                                  None) == viewer.Picker()
    finally:
        viewer._picker.clear()
    assert Options not in copied
    assert built == ["q1", "q1"]  # equal options: one entry; one field apart: another
