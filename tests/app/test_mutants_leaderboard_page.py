"""The Leaderboard page's wiring, by direct calls (issue 47: ``pages/Leaderboard.py`` had only
AppTest runs, too slow for mutmut).

The page module is imported with ``in_frame`` made a no-op (it would run app.py); Streamlit
is replaced by a recorder (``tests/st_recorder.py``) and the page's helpers by stand-ins
that record what they were given, so each test states which value feeds which step: the
folder's submissions and the page's subsets, seed and unit reach the board; the options
compared with the sidebar's; the metric the table ranks by reaches the ranks' section; the
caption's counts and sources."""

from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import st_recorder
from st_recorder import Call, Recorder, Stopped

from ovearth_core.options import Options
from pages.common import links
from pages.common import run as run_module


@pytest.fixture(scope="module")
def page() -> ModuleType:
    saved = run_module.in_frame
    run_module.in_frame = lambda main: None
    try:
        return importlib.import_module("pages.Leaderboard")
    finally:
        run_module.in_frame = saved


OPTIONS = Options("vocabulary", ("segmentation", "bbox"), iou_threshold=0.5,
                  score_threshold=0.3)
BOARD_OPTIONS = replace(OPTIONS, modalities=("segmentation", "bbox", "oriented_bbox"),
                        score_threshold=None)


def _run(rows: int = 3, options: Options = OPTIONS) -> Any:
    return SimpleNamespace(evaluation=SimpleNamespace(rows=list(range(rows)), name="eval"),
                           options=options, gt=("data/gt.json", 1.0), pred=("sub/own.json", 2.0))


@pytest.fixture
def st(page: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Recorder:
    return st_recorder.install(monkeypatch, page)


# ---- the sidebar's submission ---------------------------------------------------------

def test_the_sidebars_evaluation_is_shared_only_under_the_same_options(page: ModuleType,
                                                                        st: Recorder) -> None:
    run = _run()
    assert page.shared_ui(run, OPTIONS, [run.pred]) == (run.pred, run.evaluation)
    assert st.calls == []
    other = replace(OPTIONS, modalities=("bbox",), score_threshold=None,
                    iou_threshold=0.75, bbox_format="xywh")
    assert page.shared_ui(run, other, [("a.json", 0), run.pred]) is None
    assert st.texts("info") == [
        "`own` (the sidebar's submission) is ranked under the leaderboard's options, not the "
        "sidebar's: modalities bbox here, segmentation, bbox in the sidebar; score threshold "
        "None here, 0.3 in the sidebar; IoU threshold 0.75 here, 0.5 in the sidebar; box "
        "format xywh here, xyxy in the sidebar."]
    st.calls.clear()
    # only what differs is named
    assert page.shared_ui(run, BOARD_OPTIONS, [run.pred]) is None
    assert st.texts("info") == [
        "`own` (the sidebar's submission) is ranked under the leaderboard's options, not the "
        "sidebar's: modalities segmentation, bbox, oriented_bbox here, segmentation, bbox in "
        "the sidebar; score threshold None here, 0.3 in the sidebar."]
    st.calls.clear()
    # the sidebar's submission is not in the folder: nothing to say
    assert page.shared_ui(run, BOARD_OPTIONS, [("a.json", 0)]) is None
    assert st.calls == []


# ---- the caption ----------------------------------------------------------------------

def _board(**kw: Any) -> Any:
    base = dict(report={"models": ["a", "b"]}, skipped=[], seconds=1.234, num_cached=0,
                shared=None, workers=0, cache_note="cache: on")
    return SimpleNamespace(**{**base, **kw})


def test_the_caption_counts_the_ranked_and_names_the_sources(page: ModuleType, st: Recorder,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    refused: list[Any] = []
    monkeypatch.setattr(page.analysis_views, "refused_ui", refused.append)
    listed = SimpleNamespace(total=5, refused=[])
    options = replace(BOARD_OPTIONS, iou_threshold=0.75, max_detections=50)
    page.caption_ui(_board(), options, listed)
    assert st.texts("caption") == [
        "**Open vocabulary** (change the task in the sidebar) · 2 of 5 submissions ranked on "
        "modalities segmentation, bbox, oriented_bbox, every box (no score filter), IoU "
        "threshold 0.75 · ranked in 1.23 s (in this process) · cache: on · AP: at most 50 "
        "boxes per query (COCO), hard negatives off"]
    assert refused == [listed]
    st.calls.clear()
    page.caption_ui(_board(num_cached=3, shared="own", workers=2,
                           skipped=[("bad`1", "no *rows*"), ("x", "y")]), options, listed)
    caption = st.texts("caption")[0]
    assert ("ranked in 1.23 s (2 worker processes; 3 from the result cache; `own` shared "
            "with the sidebar) · ") in caption
    assert st.texts("warning") == ["`` bad`1 `` left out: no \\*rows\\*.", "`x` left out: y."]
    st.calls.clear()
    page.caption_ui(_board(shared="own"), options, listed)
    assert "(in this process; `own` shared with the sidebar)" in st.texts("caption")[0]


# ---- the inputs -----------------------------------------------------------------------

def _inputs(page: ModuleType, monkeypatch: pytest.MonkeyPatch, folder: Any, listed: Any
            ) -> tuple[list, Recorder]:
    seen: list = []
    log = st_recorder.install(monkeypatch, page, answers={"Subsets per size": 300.0,
                                                          "Seed": 42.0})
    monkeypatch.setattr(page.analysis_views, "submissions_folder_ui",
                        lambda *a: seen.append(("folder", a)) or folder)
    monkeypatch.setattr(page.analysis_views, "refused_ui",
                        lambda x: seen.append(("refused", x)))
    monkeypatch.setattr(page.analysis_data, "prediction_files",
                        lambda f: seen.append(("files", f)) or listed)
    monkeypatch.setattr(page.rank_views, "settings_ui",
                        lambda gt: seen.append(("settings", gt)) or "query")
    monkeypatch.setattr(page.state, "bind", lambda name: {"key": f"_w_{name}"})
    return seen, log


def test_the_inputs_are_the_folders_submissions_subsets_seed_and_unit(
        page: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = SimpleNamespace(keys=[("f/a.json", 1)], refused=[], total=1)
    seen, log = _inputs(page, monkeypatch, Path("f"), listed)
    run = _run()
    assert page.inputs_ui(run) == (listed, 300, 42, "query")
    assert log.calls[0] == Call("columns", ([3, 1, 1],), {})
    (col, label, name, column), = [a for k, a in seen if k == "folder"]
    assert (col, label, name) == (run, "Submissions folder (every *.json in it is ranked)",
                                  "lb_folder")
    assert isinstance(column, st_recorder.Container) and column.where == ("col0",)
    assert ("settings", run.gt) in seen and ("files", Path("f")) in seen
    widgets = {(c.where, c.name): (c.args, c.kwargs) for c in log.calls}
    assert widgets[("col1",), "number_input"] == (("Subsets per size",), {
        "min_value": links.LB_SUBSET_BOUNDS[0], "max_value": links.LB_SUBSET_BOUNDS[1],
        "step": 100, "key": "_w_lb_subsets"})
    assert widgets[("col2",), "number_input"] == (("Seed",), {
        "min_value": 0, "max_value": 2**32 - 1, "step": 1, "key": "_w_lb_seed"})
    # the keys are the link's leaderboard parameters
    keys = {p.key: p.page for p in links.SCHEMA}
    assert (keys["lb_subsets"], keys["lb_seed"], keys["lb_folder"]) == ("leaderboard",) * 3


def test_no_folder_or_no_submission_stops_the_page_saying_why(
        page: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    _, log = _inputs(page, monkeypatch, None, None)
    with pytest.raises(Stopped):
        page.inputs_ui(_run())
    assert log.texts("info") == ["Type the folder that holds the submissions to rank."]
    empty = SimpleNamespace(keys=[], refused=[("z.json", "too big")], total=1)
    seen, log = _inputs(page, monkeypatch, Path("my_dir"), empty)
    with pytest.raises(Stopped):
        page.inputs_ui(_run())
    assert ("refused", empty) in seen
    assert log.texts("info") == ["No submissions (\\*.json) found in `my_dir`."]


# ---- the page -------------------------------------------------------------------------

def test_a_task_without_queries_stops_before_anything(page: ModuleType, st: Recorder,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page, "current", lambda: _run(rows=0))
    monkeypatch.setattr(page, "inputs_ui", lambda run: pytest.fail("asked for inputs"))
    with pytest.raises(Stopped):
        page.main()
    assert st.texts("info") == [
        "The ground truth has no queries for the task **Open vocabulary**: nothing to rank. "
        "Pick another task in the sidebar."]


def _main(page: ModuleType, monkeypatch: pytest.MonkeyPatch, models: list[str],
          with_ap: bool) -> tuple[list, Recorder]:
    seen: list = []
    run = _run()
    listed = SimpleNamespace(keys=["k1", "k2"], refused=[], total=2)
    report = {"models": models, "metrics": {}}
    board = SimpleNamespace(report=report)
    log = st_recorder.install(monkeypatch, page, answers={"_w_lb_ap": with_ap})
    monkeypatch.setattr(page, "current", lambda: run)
    monkeypatch.setattr(page, "inputs_ui", lambda r: seen.append(("inputs", r))
                        or (listed, 300, 42, "query"))
    monkeypatch.setattr(page, "shared_ui", lambda *a: seen.append(("shared", a)) or "SHARED")
    monkeypatch.setattr(page, "caption_ui", lambda *a: seen.append(("caption", a)))
    monkeypatch.setattr(page.analysis_data, "leaderboard_options",
                        lambda o: seen.append(("options", o)) or BOARD_OPTIONS)

    def leaderboard(*args: Any, **kw: Any) -> Any:
        kw["progress"](1, 3, "a", True)
        kw["progress"](0, 0, "b", False)
        kw["progress"](1, 1, "c", False)
        seen.append(("board", args, {k: v for k, v in kw.items() if k != "progress"}))
        return board

    monkeypatch.setattr(page.analysis_data, "leaderboard", leaderboard)
    monkeypatch.setattr(page.state, "bind", lambda name: {"key": f"_w_{name}"})
    monkeypatch.setattr(page.state, "leaderboard_params", lambda: {"lbseed": "42"})
    monkeypatch.setattr(page.state, "sync_url", lambda **kw: seen.append(("url", kw)))
    monkeypatch.setattr(page.analysis_views, "leaderboard_table",
                        lambda r: seen.append(("table", r)) or "presence_mcc")
    monkeypatch.setattr(page.analysis_views, "stability_charts",
                        lambda r: seen.append(("stability", r)))
    monkeypatch.setattr(page.analysis_views, "mcc_vs_miou", lambda r: seen.append(("mcc", r)))
    monkeypatch.setattr(page.rank_views, "section", lambda *a: seen.append(("section", a)))
    seen.append(run)
    seen.append(report)
    return seen, log


def test_the_page_ranks_the_folder_with_its_settings_by_the_tables_metric(
        page: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    seen, log = _main(page, monkeypatch, ["a", "b"], with_ap=True)
    run, report = seen[0], seen[1]
    page.main()
    got = [s for s in seen[2:]]
    assert got[0] == ("inputs", run)
    assert got[1] == ("options", run.options)
    assert got[2] == ("shared", (run, BOARD_OPTIONS, ["k1", "k2"]))
    assert got[3] == ("board", (run.gt, ["k1", "k2"], BOARD_OPTIONS, 300, 42),
                      {"shared": "SHARED", "with_ap": True, "unit": "query"})
    assert got[4] == ("url", {"lbseed": "42"})
    assert got[5][0] == "caption" and got[5][1][0].report is report
    assert got[5][1][1:] == (BOARD_OPTIONS, got[5][1][2]) and got[5][1][2].keys == ["k1", "k2"]
    assert got[6:] == [("table", report), ("section", (report, "presence_mcc")),
                       ("stability", report), ("mcc", report)]
    # one progress bar, advanced by the board's evaluations (a total of 0: no division by
    # zero; the last of one fills it), emptied after
    assert log.calls[0] == Call("progress", (0.0,), {"text": "Ranking 2 submissions…"})
    assert [(c.name, c.args, c.kwargs) for c in log.calls if c.where == ("progress",)] == [
        ("progress", (1 / 3,), {"text": "Evaluated 1 of 3 submissions · a (cached)"}),
        ("progress", (0.0,), {"text": "Evaluated 0 of 0 submissions · b"}),
        ("progress", (1.0,), {"text": "Evaluated 1 of 1 submissions · c"}),
        ("empty", (), {})]
    toggles = log.arguments("toggle")
    assert toggles == [(("Also rank by AP and mAP (COCO's and DOTA's, per category; each "
                         "submission's AP is computed: seconds each on the full benchmark)",),
                        {"key": "_w_lb_ap"})]
    assert log.texts("header") == ["Ranking", "Ranks with their uncertainty",
                                   "Category-subset stability"]
    assert log.texts("caption") == [
        "AP and mAP: every box; AP: at most 100 boxes per query (COCO), hard negatives off "
        "(the sidebar's AP options). They rank boxes across queries, so they have no "
        "category-subset stability below."]


def test_without_ap_the_board_is_asked_for_none_and_no_ap_caption(
        page: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    seen, log = _main(page, monkeypatch, ["a", "b"], with_ap=False)
    page.main()
    assert [s for s in seen[2:] if s[0] == "board"][0][2]["with_ap"] is False
    assert log.texts("caption") == []


def test_no_ranked_model_stops_after_the_caption(page: ModuleType,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    seen, log = _main(page, monkeypatch, [], with_ap=False)
    with pytest.raises(Stopped):
        page.main()
    assert [s[0] for s in seen[2:]] == ["inputs", "options", "shared", "board", "url",
                                        "caption"]
    assert log.texts("header") == []
