"""The analysis figures draw exactly their inputs (ovearth_core.viz.analysis_figures)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ovearth_core.analysis.ap import RECALL_101, average_precision_report
from ovearth_core.analysis.slices import slice_table
from ovearth_core.analysis.sweep import score_sweep, sweep_to_dict
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.types import SampleList
from ovearth_core.viz import analysis_figures as af

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
GT = DEMO / "ground_truth.json"
BOX_DETECTOR = DEMO / "predictions" / "box_detector.json"


@pytest.fixture(scope="module")
def samples() -> SampleList:
    return load_samples(GT, BOX_DETECTOR, "vocabulary", modalities="auto")


@pytest.fixture(scope="module")
def sweep(samples: SampleList) -> dict:
    return sweep_to_dict(score_sweep(samples, 0.5))


def _trace(fig, name: str):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, [t.name for t in fig.data]
    return found[0]


def _same(a, b) -> bool:
    """Equal sequences where None and nan both mean undefined."""
    def norm(v):
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v
    return [norm(v) for v in a] == [norm(v) for v in b]


@pytest.mark.parametrize(("name", "part", "key"), [
    ("HBB precision", "bbox", "positive_micro_precision"),
    ("HBB recall", "bbox", "positive_micro_recall"),
    ("HBB F1", "bbox", "positive_micro_f1"),
    ("OBB F1", "oriented_bbox", "positive_micro_f1"),
    ("Presence precision", "presence", "precision"),
    ("Presence recall", "presence", "recall"),
    ("Presence MCC", "presence", "mcc"),
])
def test_sweep_lines_are_the_sweep(sweep: dict, name: str, part: str, key: str) -> None:
    line = _trace(af.sweep_figure(sweep), name)
    assert list(line.x) == sweep["thresholds"]
    assert _same(line.y, sweep[part][key])


def test_best_markers_sit_at_the_best_thresholds(sweep: dict) -> None:
    fig = af.sweep_figure(sweep, current=sweep["thresholds"][10])
    markers = [t for t in fig.data if t.mode == "markers"]
    assert len(markers) == 3
    vlines = sorted(s.x0 for s in fig.layout.shapes)
    for part, key in (("bbox", "positive_micro_f1"), ("oriented_bbox", "positive_micro_f1"),
                      ("presence", "mcc")):
        values = np.array([np.nan if v is None else v for v in sweep[part][key]])
        top = np.nanmax(values)
        # independent of sweep.best_index: the highest threshold reaching the maximum
        best_t = max(t for t, v in zip(sweep["thresholds"], values, strict=True) if v == top)
        label = {"bbox": "HBB", "oriented_bbox": "OBB", "presence": "Presence"}[part]
        (marker,) = [m for m in markers if m.name.startswith(label)]
        assert marker.x == (best_t,) and marker.y == (top,)
        assert best_t in vlines
    assert sweep["thresholds"][10] in vlines and len(vlines) == 4


def test_sweep_point_equals_the_evaluator_at_that_threshold(samples: SampleList,
                                                            sweep: dict) -> None:
    for i in (0, 37, 80):
        t = sweep["thresholds"][i]
        summary = evaluate_samples(load_samples(GT, BOX_DETECTOR, "vocabulary",
                                                score_threshold=t, modalities="auto"),
                                   0.5)["summary"]
        point = af.sweep_point(sweep, i)
        for m in ("bbox", "oriented_bbox"):
            assert point[m]["precision"] == pytest.approx(summary[m]["positive_micro_precision"])
            assert point[m]["recall"] == pytest.approx(summary[m]["positive_micro_recall"])
            assert point[m]["F1"] == pytest.approx(summary[m]["positive_micro_f1"])
        assert point["presence"] == pytest.approx({
            "precision": summary["presence"]["precision"],
            "recall": summary["presence"]["recall"], "MCC": summary["presence"]["mcc"]})


def test_sweep_without_presence_or_obb_draws_only_hbb() -> None:
    sweep = {"thresholds": [0.2, 0.5, 0.8], "presence": None, "oriented_bbox": None,
             "bbox": {"positive_micro_precision": [0.5, 0.6, None],
                      "positive_micro_recall": [0.5, 0.3, 0.0],
                      "positive_micro_f1": [0.5, 0.4, 0.0],
                      "best_f1": {"threshold": 0.2, "positive_micro_precision": 0.5,
                                  "positive_micro_recall": 0.5, "positive_micro_f1": 0.5}}}
    fig = af.sweep_figure(sweep)
    assert [t.name for t in fig.data][:3] == ["HBB precision", "HBB recall", "HBB F1"]
    assert len(fig.data) == 4 and len(fig.layout.shapes) == 1
    assert af.best_points(sweep) == [{"part": "HBB", "criterion": "best F1", "threshold": 0.2,
                                      "precision": 0.5, "recall": 0.5, "value": 0.5}]
    assert af.sweep_point(sweep, 1) == {"bbox": {"precision": 0.6, "recall": 0.3, "F1": 0.4}}


@pytest.mark.parametrize("hard", [False, True])
def test_pr_curves_and_ap_cards_are_the_report(samples: SampleList, hard: bool) -> None:
    report = average_precision_report(samples, 0.5, samples.modalities, hard)
    fig = af.pr_figure(report)
    assert len(fig.data) == 2
    for trace, m in zip(fig.data, ("bbox", "oriented_bbox"), strict=True):
        assert np.allclose(trace.x, RECALL_101)
        assert list(trace.y) == report[m]["pr_curve"]["precision"]
        assert f"{report[m]['ap_every_point']:.3f}" in trace.name
    assert ("hard negatives" in fig.layout.title.text) is hard
    cards = af.ap_cards(report)
    assert cards["OBB"] == {"AP": report["oriented_bbox"]["ap_every_point"],
                            "AP 11-pt": report["oriented_bbox"]["ap_11_point"],
                            "AP@[.5:.95]": report["oriented_bbox"]["coco"]["ap@[0.5:0.95]"]}


def test_pr_figure_leaves_out_a_modality_without_gt() -> None:
    report = {"iou_threshold": 0.5, "hard_negatives": False, "oriented_bbox": None,
              "bbox": {"ap_every_point": None, "pr_curve": {"recall": [0, 1],
                                                            "precision": None}}}
    assert len(af.pr_figure(report).data) == 0


ATTRIBUTION = {
    "iou_threshold": 0.5, "metrics": ["presence_mcc", "seg_macro_miou", "bbox_micro_f1",
                                      "oriented_bbox_micro_f1"],
    "base": {"presence_mcc": 0.25, "seg_macro_miou": None, "bbox_micro_f1": 0.5,
             "oriented_bbox_micro_f1": None},
    "oracle_all": {"presence_mcc": 1.0, "seg_macro_miou": None, "bbox_micro_f1": 0.875,
                   "oriented_bbox_micro_f1": None},
    "kinds": [
        {"kind": "hallucination", "counts": {"presence": 3},
         "delta": {"presence_mcc": 0.5, "seg_macro_miou": None, "bbox_micro_f1": 0.0,
                   "oriented_bbox_micro_f1": None}},
        {"kind": "wrong_object", "counts": {"bbox": 2},
         "delta": {"presence_mcc": None, "seg_macro_miou": None, "bbox_micro_f1": 0.25,
                   "oriented_bbox_micro_f1": None}},
    ],
}


def test_attribution_bars_are_the_deltas_and_the_bound() -> None:
    fig = af.attribution_figure(ATTRIBUTION)
    assert [t.name for t in fig.data] == ["Presence MCC", "HBB micro F1"]
    mcc, f1 = fig.data
    assert list(mcc.y) == ["hallucination", "fix everything"]  # undefined delta: no bar
    assert list(mcc.x) == [0.5, 0.75]
    assert list(f1.y) == ["hallucination", "wrong object", "fix everything"]
    assert list(f1.x) == [0.0, 0.25, 0.375]
    assert list(fig.layout.yaxis.categoryarray) == ["hallucination", "wrong object",
                                                    "fix everything"]
    rows = af.attribution_rows(ATTRIBUTION)
    assert rows[-1] == {"kind": "fix everything", "errors": 5, "presence_mcc": 0.75,
                        "bbox_micro_f1": 0.375}


STABILITY = {
    "bbox_micro_f1": {"sizes": [
        {"size": 2, "median_spearman": 0.4, "q25_spearman": 0.2, "q75_spearman": 0.8,
         "mean_top_k_recovery": 0.5},
        {"size": 5, "median_spearman": None, "q25_spearman": None, "q75_spearman": None,
         "mean_top_k_recovery": 0.75}]},
    "presence_mcc": {"sizes": [
        {"size": 2, "median_spearman": 1.0, "q25_spearman": 0.5, "q75_spearman": 1.0,
         "mean_top_k_recovery": 1.0}]},
}


def test_stability_lines_with_interquartile_bars() -> None:
    fig = af.stability_figure(STABILITY, "median_spearman", "t", "y")
    hbb, mcc = fig.data
    assert (list(hbb.x), list(hbb.y)) == ([2], [0.4])  # the undefined median is left out
    assert list(hbb.error_y.array) == pytest.approx([0.4])
    assert list(hbb.error_y.arrayminus) == pytest.approx([0.2])
    assert (list(mcc.x), list(mcc.y)) == ([2], [1.0])
    rec = af.stability_figure(STABILITY, "mean_top_k_recovery", "t", "y")
    assert list(rec.data[0].y) == [0.5, 0.75] and rec.data[0].error_y.array is None


def test_rank_scatter_leaves_out_undefined_models() -> None:
    fig = af.rank_scatter(["a", "b", "c"], [0.1, None, 0.3], [0.5, 0.6, 0.2], -1.0)
    assert list(fig.data[0].text) == ["a", "c"]
    assert list(fig.data[0].x) == [0.1, 0.3] and list(fig.data[0].y) == [0.5, 0.2]
    assert "-1.000" in fig.layout.title.text


def test_slice_rows_and_figure_leave_undefined_values_out(samples: SampleList) -> None:
    result = evaluate_samples(samples)
    table = slice_table(result, samples, "polarity", n_resamples=50)
    rows = af.slice_rows(table, "presence_mcc")
    assert [r["value"] for r in rows] == [v.value for v in table.values]
    assert [r["queries"] for r in rows] == [v.num_queries for v in table.values]
    # MCC on one polarity alone is undefined (no negatives / no positives): no point, "—".
    assert all(r["interval"] == "—" for r in rows)
    assert len(af.slice_figure(table, "presence_mcc").data[0].x) == 0
    defined = [v for v in table.values if v.metrics[1].value is not None]
    name = table.values[0].metrics[1].name
    fig = af.slice_figure(table, name)
    assert list(fig.data[0].x) == [v.value for v in defined]
    paired = slice_table(result, samples, "polarity", result_b=result, n_resamples=20)
    assert "B − A" in af.slice_rows(paired, name)[0]
    assert "paired" in af.slice_figure(paired, name).layout.title.text


def test_category_confusion_figure_cells_and_click_markers() -> None:
    from ovearth_core.viz.analysis_figures import category_confusion_figure

    matrix = {"large vehicle": {"small vehicle": 2}, "ship": {"harbor": 1, "small vehicle": 3}}
    fig = category_confusion_figure(matrix, "bbox", ["plane", "ship"])
    heat, cells = fig.data
    names = ["harbor", "large vehicle", "plane", "ship", "small vehicle"]
    assert list(heat.x) == list(heat.y) == names
    z = {(p, g): heat.z[i][j] for i, p in enumerate(names) for j, g in enumerate(names)}
    assert z[("ship", "small vehicle")] == 3 and z[("large vehicle", "small vehicle")] == 2
    assert sum(map(sum, heat.z)) == 6  # every other cell 0
    assert heat.text[3][3] == "·"  # the diagonal is not counted
    assert sorted(map(tuple, cells.customdata)) == [
        ("large vehicle", "small vehicle"), ("ship", "harbor"), ("ship", "small vehicle")]


def test_category_confusion_markdown_has_the_figures_nonzero_cells() -> None:
    """Issue 49: the Confusion page's table (hand-written): rows and columns only where a
    cell is non-zero, sorted; the diagonal "·", an empty cell blank; names escaped by the
    caller's function (here: a "|" doubled into a code span would break the row)."""
    matrix = {"ship": {"harbor": 3, "plane": 0}, "plane": {"ship": 1_200, "harbor": 0},
              "car": {"truck": 0}, "truck|x": {"ship": 1}}
    table = af.category_confusion_markdown(matrix, lambda t: t.replace("|", "\\|"))
    assert table.splitlines() == [
        "| predicted ↓ · GT → | harbor | ship |",
        "| --- | ---: | ---: |",
        "| plane |  | 1,200 |",
        "| ship | 3 | · |",
        "| truck\\|x |  | 1 |"]
    # The figure draws a cell for each of these (its clickable markers).
    fig = af.category_confusion_figure(matrix, "bbox")
    cells = {tuple(c) for c in fig.data[1].customdata}
    assert cells == {("ship", "harbor"), ("plane", "ship"), ("truck|x", "ship")}
