"""AppTest of the analysis sections of the Overview (operating point, AP, error attribution)
and of the Leaderboard page, on the bundled demo."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import assert_ok, goto
from streamlit.testing.v1 import AppTest

from ovearth_core import io as core_io
from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.analysis.attribution import error_attribution
from ovearth_core.analysis.standings import leaderboard_report
from ovearth_core.analysis.sweep import score_sweep, sweep_to_dict
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from pages.common import analysis_data, data

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
LEADERBOARD = "pages/Leaderboard.py"
DEMO = REPO / "assets" / "demo"
GT = DEMO / "ground_truth.json"
PERSONAS = ["box_detector", "cautious_segmenter", "strong_localiser", "weak_baseline"]
SLIDER = "Score threshold T"


pytestmark = pytest.mark.usefixtures("fresh_caches")


def _overview(persona: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["pred_path"] = f"assets/demo/predictions/{persona}.json"
    at.session_state["show_analysis"] = True
    return at.run()


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _slider(at: AppTest):
    (slider,) = [s for s in at.select_slider if s.label.startswith(SLIDER)]
    return slider


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _expected_at(threshold: float) -> dict[str, str]:
    """Operating-point cards computed by the evaluator after loading with the threshold."""
    summary = evaluate_samples(load_samples(GT, DEMO / "predictions" / "box_detector.json",
                                            "vocabulary", score_threshold=threshold,
                                            modalities="auto"), 0.5)["summary"]
    out = {}
    for key, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
        out[f"{label} precision"] = _f(summary[key]["positive_micro_precision"])
        out[f"{label} recall"] = _f(summary[key]["positive_micro_recall"])
        out[f"{label} F1"] = _f(summary[key]["positive_micro_f1"])
    presence = summary["presence"]
    out.update({"Presence precision": _f(presence["precision"]),
                "Presence recall": _f(presence["recall"]), "Presence MCC": _f(presence["mcc"])})
    return out


def _shown(at: AppTest, expected: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in _metrics(at).items() if k in expected}


def test_slider_numbers_equal_the_evaluator_at_that_threshold() -> None:
    at = _overview("box_detector")
    assert_ok(at)
    slider = _slider(at)
    thresholds = slider.options
    assert len(thresholds) == 101
    first = _expected_at(float(thresholds[0]))
    assert _shown(at, first) == first
    seen = [first]
    for i in (50, 90):
        _slider(at).set_value(float(thresholds[i])).run()
        assert_ok(at)
        expected = _expected_at(float(thresholds[i]))
        assert _shown(at, expected) == expected
        seen.append(expected)
    assert seen[0] != seen[1] != seen[2]  # the numbers do move with the slider


def test_moving_the_slider_never_reloads_or_reevaluates(monkeypatch) -> None:
    calls = {"load": 0, "evaluate": 0, "sweep": 0}

    def counting(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(core_io, "load_samples", counting("load", core_io.load_samples))
    import ovearth_core.evaluate as core_evaluate

    monkeypatch.setattr(core_evaluate, "evaluate_run",
                        counting("evaluate", core_evaluate.evaluate_run))
    monkeypatch.setattr(analysis_data, "score_sweep",
                        counting("sweep", analysis_data.score_sweep))
    at = _overview("box_detector")
    assert_ok(at)
    after_first = dict(calls)
    assert after_first["sweep"] == 1 and after_first["load"] >= 1
    for i in (10, 60, 99):
        _slider(at).set_value(float(_slider(at).options[i])).run()
        assert_ok(at)
    assert calls == after_first


def test_sidebar_score_filter_neither_changes_nor_recomputes_the_sweep(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(analysis_data, "score_sweep",
                        lambda *a, **k: calls.append(1) or score_sweep(*a, **k))
    at = _overview("box_detector")
    chosen = float(_slider(at).options[40])
    _slider(at).set_value(chosen).run()
    at.sidebar.checkbox(key="use_score_threshold").set_value(True).run()
    assert_ok(at)
    assert calls == [1]
    assert float(_slider(at).value) == chosen  # the slider keeps its place
    expected = _expected_at(chosen)
    assert _shown(at, expected) == expected
    assert "Micro F1" in _metrics(at)  # the key metrics now follow the sidebar's filter


def test_sweep_chart_marks_the_best_thresholds() -> None:
    at = _overview("box_detector")
    sweep = sweep_to_dict(score_sweep(load_samples(
        GT, DEMO / "predictions" / "box_detector.json", "vocabulary", modalities="auto")))
    (table,) = [d.value for d in at.dataframe if "criterion" in d.value.columns]
    assert list(table["criterion"]) == ["best F1", "best F1", "best MCC"]
    assert list(table["threshold"]) == [sweep["bbox"]["best_f1"]["threshold"],
                                        sweep["oriented_bbox"]["best_f1"]["threshold"],
                                        sweep["presence"]["best_mcc"]["threshold"]]
    assert list(table["value"]) == [sweep["bbox"]["best_f1"]["positive_micro_f1"],
                                    sweep["oriented_bbox"]["best_f1"]["positive_micro_f1"],
                                    sweep["presence"]["best_mcc"]["mcc"]]


def test_average_precision_cards_and_hard_negative_toggle() -> None:
    at = _overview("box_detector")
    samples = load_samples(GT, DEMO / "predictions" / "box_detector.json", "vocabulary",
                           modalities="auto")
    for hard in (False, True):
        if hard:
            at.sidebar.toggle(key="ap_hard_negatives").set_value(True).run()
        assert_ok(at)
        report = average_precision_report(samples, 0.5, samples.modalities, hard)
        shown = _metrics(at)
        for key, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
            assert shown[f"{label} AP"] == _f(report[key]["ap_every_point"])
            assert shown[f"{label} AP 11-pt"] == _f(report[key]["ap_11_point"])
            assert shown[f"{label} AP@[.5:.95]"] == _f(report[key]["coco"]["ap@[0.5:0.95]"])
    assert report["bbox"]["ap_every_point"] < average_precision_report(
        samples, 0.5, samples.modalities, False)["bbox"]["ap_every_point"]


def test_attribution_table_is_the_core_attribution() -> None:
    at = _overview("box_detector")
    expected = error_attribution(load_samples(GT, DEMO / "predictions" / "box_detector.json",
                                              "vocabulary", modalities="auto"), 0.5)
    (table,) = [d.value for d in at.dataframe if "kind" in d.value.columns]
    assert list(table["kind"])[-1] == "fix everything"
    by_kind = dict(zip(table["kind"], table["HBB micro F1"], strict=True))
    assert by_kind["duplicate"] == pytest.approx(
        next(r for r in expected["kinds"] if r["kind"] == "duplicate")["delta"]["bbox_micro_f1"])
    assert by_kind["fix everything"] == pytest.approx(
        expected["oracle_all"]["bbox_micro_f1"] - expected["base"]["bbox_micro_f1"])
    assert len(at.get("plotly_chart")) >= 3


def test_unscored_submission_hides_the_operating_point() -> None:
    at = _overview("weak_baseline")
    assert_ok(at)
    assert not [s for s in at.select_slider if s.label.startswith(SLIDER)]
    notes = [c.value for c in at.caption]
    assert any(n.startswith("No scored boxes in this submission: there is no score") for n in
               notes)
    assert not any(label.startswith("HBB AP") for label in _metrics(at))
    assert any("kind" in d.value.columns for d in at.dataframe)  # attribution still shown


def _leaderboard(**state: object) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in state.items():
        at.session_state[key] = value
    goto(at, LEADERBOARD)
    return at.run()


def _demo_report() -> dict:
    names, results = [], []
    for name in PERSONAS:
        samples = load_samples(GT, DEMO / "predictions" / f"{name}.json", "vocabulary",
                               modalities=("segmentation", "bbox", "oriented_bbox"))
        names.append(name)
        results.append(evaluate_samples(samples, 0.5))
    return leaderboard_report(names, results, n_subsets=200)


def test_leaderboard_ranks_the_four_demo_personas() -> None:
    at = _leaderboard()
    assert_ok(at)
    expected = _demo_report()
    table = at.dataframe[0].value
    assert sorted(table["model"]) == PERSONAS
    assert list(table["model"]) == expected["ranking"]["seg_macro_miou"]
    assert list(table["rank"]) == [1, 2, 3, 4]
    assert list(table["Presence MCC"]) == pytest.approx(
        [expected["metrics"]["presence_mcc"][PERSONAS.index(n)] for n in table["model"]])
    # rank intervals, critical difference, Spearman, top-k recovery, MCC vs mIoU
    assert len(at.get("plotly_chart")) == 5
    at.selectbox(key="lb_rank_by").set_value("presence_mcc").run()
    assert_ok(at)
    assert list(at.dataframe[0].value["model"]) == expected["ranking"]["presence_mcc"]
    assert _metrics(at)["Spearman ρ (MCC vs mIoU)"] == _f(expected["mcc_vs_miou"]["spearman"])
    # MCC is defined for every persona on 7 of the demo's 30 images: below the minimum count
    # (10), Friedman's test and its diagram are left out, and the page says why (issue 48).
    assert len(at.get("plotly_chart")) == 4
    assert any("No test and no groups: 7 images" in i.value for i in at.info)


def test_leaderboard_stability_is_seeded_and_uses_at_least_200_subsets() -> None:
    at = _leaderboard()
    assert at.number_input(key="_w_lb_subsets").min == 200
    assert "1,000 random category subsets per size (seed 0)" in " ".join(
        c.value for c in at.caption)
    at.number_input(key="_w_lb_subsets").set_value(200).run()
    at.number_input(key="_w_lb_seed").set_value(3).run()
    assert_ok(at)
    assert "200 random category subsets per size (seed 3)" in " ".join(
        c.value for c in at.caption)


def test_leaderboard_of_a_folder_without_submissions_says_so() -> None:
    at = _leaderboard()
    (folder,) = [t for t in at.text_input if t.label.startswith("Submissions folder")]
    folder.set_value(str(DEMO / "images")).run()
    assert not at.exception
    assert any("No submissions" in i.value for i in at.info)
    assert not at.dataframe


# --- issue 17: progress, the sidebar's evaluation shared, the on-disk result cache --------

ALL_MODS = ["segmentation", "bbox", "oriented_bbox"]


class _Recorder:
    """Wraps st.progress (the bars the page draws) and evaluate_with (what the page
    sends to the worker processes), recording both."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import streamlit as st

        self.bars: list[list[float]] = []
        self.evaluated: list[list[str]] = []
        real_progress, real_evaluate = st.progress, analysis_data.evaluate_with

        def progress(value: float, text: str | None = None):
            values = [value]
            self.bars.append(values)
            bar = real_progress(value, text=text)
            real_update = bar.progress

            def update(v: float, text: str | None = None):
                values.append(v)
                return real_update(v, text=text)

            bar.progress = update  # type: ignore[method-assign]
            return bar

        def evaluate(gt, preds, *args, **kwargs):
            self.evaluated.append([Path(p).stem for p in preds])
            return real_evaluate(gt, preds, *args, **kwargs)

        monkeypatch.setattr(st, "progress", progress)
        monkeypatch.setattr(analysis_data, "evaluate_with", evaluate)


def _caption(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_leaderboard_progress_shared_evaluation_and_cache(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    rec = _Recorder(monkeypatch)
    # The sidebar's options equal the leaderboard's (declared modalities, every box).
    at = _leaderboard(pred_path="assets/demo/predictions/strong_localiser.json",
                      auto_modalities=False, modalities=ALL_MODS)
    assert_ok(at)
    assert rec.evaluated == [[p for p in PERSONAS if p != "strong_localiser"]]
    assert rec.bars[-1] == [0.0, 0.25, 0.5, 0.75, 1.0]  # one step per submission
    assert "`strong_localiser` shared with the sidebar" in _caption(at)
    assert "from the result cache" not in _caption(at)
    # The demo's files are small: evaluated here, not worth starting worker processes.
    assert "(in this process; `strong_localiser` shared" in _caption(at)
    assert not [i for i in at.info if "ranked under the leaderboard's options" in i.value]
    expected = _demo_report()
    assert list(at.dataframe[0].value["model"]) == expected["ranking"]["seg_macro_miou"]

    # A restarted server (every in-memory cache gone): only loading, from the disk cache.
    data.clear_caches()
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    at = _leaderboard(pred_path="assets/demo/predictions/strong_localiser.json",
                      auto_modalities=False, modalities=ALL_MODS)
    assert_ok(at)
    assert "3 from the result cache" in _caption(at)
    assert "(in this process; 3 from the result cache" in _caption(at)
    assert list(at.dataframe[0].value["model"]) == expected["ranking"]["seg_macro_miou"]
    assert list(at.dataframe[0].value["Presence MCC"]) == pytest.approx(
        [expected["metrics"]["presence_mcc"][PERSONAS.index(n)]
         for n in at.dataframe[0].value["model"]])


def test_leaderboard_says_when_the_sidebar_options_differ(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    rec = _Recorder(monkeypatch)
    at = _leaderboard(pred_path="assets/demo/predictions/box_detector.json",
                      use_score_threshold=True, score_threshold=0.3)
    assert_ok(at)
    assert rec.evaluated == [PERSONAS]  # the sidebar's run is not the leaderboard's
    (note,) = [i.value for i in at.info if "ranked under the leaderboard's options" in i.value]
    assert "`box_detector`" in note
    assert "score threshold None here, 0.3 in the sidebar" in note
    assert "modalities segmentation, bbox, oriented_bbox here, auto in the sidebar" in note
    assert "shared with the sidebar" not in _caption(at)
    assert list(at.dataframe[0].value["model"]) == _demo_report()["ranking"]["seg_macro_miou"]


def test_leaderboard_with_the_cache_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OVEARTH_CACHE", "off")
    at = _leaderboard()
    assert_ok(at)
    assert "result cache off" in _caption(at)
    assert not (tmp_path / "cache").exists()


def test_leaderboard_of_one_submission_ranks_it_and_says_why_no_stability(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 26 item 14: one submission is ranked; the stability view (a correlation of
    rankings) needs two, and the page says so instead of raising StopIteration."""
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "weak_baseline.json").write_bytes(
        (DEMO / "predictions" / "weak_baseline.json").read_bytes())
    monkeypatch.setenv("OVEARTH_DATA_ROOT", str(tmp_path))
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    at = _leaderboard()
    (box,) = [t for t in at.text_input if t.label.startswith("Submissions folder")]
    box.set_value(str(folder)).run()
    assert_ok(at)
    assert list(at.dataframe[0].value["model"]) == ["weak_baseline"]
    notes = " ".join(i.value for i in at.info)
    assert "needs at least two submissions" in notes
    assert "1 submission ranked" in notes
    assert "Presence MCC versus segmentation mIoU (a rank correlation) needs two" in notes
    assert not at.get("plotly_chart")


def test_overview_shows_pooled_ap_and_per_category_map_with_a_raised_cap() -> None:
    """Issue 25: beside the pooled AP, COCO's and DOTA's per-category mAP, labelled with
    what they average; the detection cap reaches the computation (and its cache key) and
    a dense query over the cap gets a note."""
    at = _overview("box_detector")
    samples = load_samples(GT, DEMO / "predictions" / "box_detector.json", "vocabulary",
                           modalities="auto")
    for cap in (100, 1500):
        if cap != 100:
            (box,) = [n for n in at.number_input if n.label.startswith("COCO detection cap")]
            box.set_value(cap).run()
        assert_ok(at)
        report = average_precision_report(samples, 0.5, samples.modalities, False, cap)
        shown = _metrics(at)
        for key, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
            coco, devkit = report[key]["coco"], report[key]["voc_devkit"]
            assert shown[f"{label} mAP@[.5:.95]"] == _f(coco["map@[0.5:0.95]"])
            assert shown[f"{label} mAP@.5"] == _f(coco["map@0.5"])
            assert shown[f"{label} DOTA mAP (VOC07)"] == _f(devkit["map_11_point"])
            assert shown[f"{label} DOTA mAP (every point)"] == _f(devkit["map_every_point"])
            assert shown[f"{label} AP@[.5:.95]"] == _f(coco["ap@[0.5:0.95]"])
        captions = " ".join(c.value for c in at.caption)
        n = report["bbox"]["coco"]["num_categories"]
        assert f"mAP@[.5:.95]: COCO's mAP, 101 points, mean over {n} categories" in captions
        assert "AP: VOC every point, pooled over all queries, class-agnostic" in captions
        assert f"at most {cap:,} boxes per query" in captions
        notes = [w.value for w in at.warning if "detection cap" in w.value]
        over = report["bbox"]["coco"]["queries_over_cap"]
        assert bool(notes) is bool(over)
        if cap == 100:
            assert over and f"cap of {cap:,}" in notes[0] and over[0] in notes[0]
    assert report["bbox"]["coco"]["max_detections"] == 1500


def _demo_ap(name: str, cap: int) -> dict:
    samples = load_samples(GT, DEMO / "predictions" / f"{name}.json", "vocabulary",
                           modalities=("segmentation", "bbox", "oriented_bbox"))
    return average_precision_report(samples, 0.5, samples.modalities, False, cap)


def test_leaderboard_ranks_by_per_category_map_at_the_overview_cap() -> None:
    """Issue 25: with the toggle on, AP and COCO's / DOTA's mAP are rankable columns equal to
    each submission's AP report at the Overview's detection cap."""
    at = _leaderboard(ap_max_detections=110)
    at.toggle(key="_w_lb_ap").set_value(True).run()
    assert_ok(at)
    reports = {name: _demo_ap(name, 110) for name in PERSONAS}
    column = "HBB mAP@[.5:.95] (mean over categories)"
    at.selectbox(key="lb_rank_by").set_value("bbox_coco_map").run()
    assert_ok(at)
    table = at.dataframe[0].value
    shown = dict(zip(table["model"], table[column], strict=True))
    for name, rep in reports.items():
        value = rep["bbox"]["coco"]["map@[0.5:0.95]"]
        if name == "cautious_segmenter":  # submits no boxes: not a zero, ranked last
            assert shown[name] is None or shown[name] != shown[name]
        else:
            assert shown[name] == pytest.approx(value)
    ranked = [n for n in table["model"] if n != "cautious_segmenter"]
    assert ranked == sorted(ranked, key=lambda n: -reports[n]["bbox"]["coco"]["map@[0.5:0.95]"])
    assert list(table["model"])[-1] == "cautious_segmenter"
    dota = dict(zip(table["model"], table["OBB DOTA mAP (VOC07) (mean over categories)"],
                    strict=True))
    assert dota["box_detector"] == pytest.approx(
        reports["box_detector"]["oriented_bbox"]["voc_devkit"]["map_11_point"])
    assert any("at most 110 boxes per query" in c.value for c in at.caption)


def test_a_threshold_session_parses_its_predictions_once(monkeypatch) -> None:
    """A session that starts with the sidebar's score filter on evaluates, ranks AP and
    sweeps from one parse of the prediction file: AP and the sweep take every box of the
    evaluation's parse (``every_box``); they loaded the file again without the threshold
    before. Their numbers are those of a separate load without the threshold."""
    calls = []
    real = core_io.parse_predictions

    def counted(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(core_io, "parse_predictions", counted)
    pred = DEMO / "predictions" / "box_detector.json"
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["pred_path"] = "assets/demo/predictions/box_detector.json"
    at.session_state["show_analysis"] = True
    at.session_state["use_score_threshold"] = True
    at.session_state["score_threshold"] = 0.6
    at.run()
    assert_ok(at)
    assert [Path(c).name for c in calls] == [pred.name]
    samples = load_samples(GT, pred, "vocabulary", modalities="auto")
    report = average_precision_report(samples, 0.5, samples.modalities)
    shown = _metrics(at)
    for key, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
        assert shown[f"{label} AP"] == _f(report[key]["ap_every_point"])
        assert shown[f"{label} AP@[.5:.95]"] == _f(report[key]["coco"]["ap@[0.5:0.95]"])
    sweep = sweep_to_dict(score_sweep(samples))
    (table,) = [d.value for d in at.dataframe if "criterion" in d.value.columns]
    assert list(table["threshold"]) == [sweep["bbox"]["best_f1"]["threshold"],
                                        sweep["oriented_bbox"]["best_f1"]["threshold"],
                                        sweep["presence"]["best_mcc"]["threshold"]]
