"""Issue 39: one pipeline and one options value.

- The app, the report and the leaderboard evaluate through ``ovearth_core.pipeline``: one
  input under one set of evaluator options is one result-cache entry, whoever asks first
  (counted in the cache folder), and the numbers each gets equal a fresh evaluation.
- The average precision's options (COCO detection cap, hard negatives) are part of the one
  ``Options`` value: set in the sidebar, carried by a link, named in every page's first
  line, and the Compare page opened from a link on a fresh session shows the AP the sender
  saw (equal to ``average_precision_report`` at those options, computed here).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, goto, open_page, write_dataset
from markdown_tokens import table_frames

from ovearth_core import pipeline
from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.analysis.leaderboard import evaluate_with
from ovearth_core.cache import ResultCache, file_digest
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options
from ovearth_core.report.build import build_report_data
from pages.common import data

REPO = Path(__file__).resolve().parents[2]
GT = REPO / "assets" / "demo" / "ground_truth.json"
PRED = REPO / "assets" / "demo" / "predictions" / "strong_localiser.json"
OTHER = REPO / "assets" / "demo" / "predictions" / "box_detector.json"
ALL = ("segmentation", "bbox", "oriented_bbox")
OPTIONS = Options("vocabulary", ALL)

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.entry"))


def _fresh(pred: Path, options: Options = OPTIONS) -> dict:
    return evaluate_samples(load_samples(GT, pred, options.task, options.score_threshold,
                                         options.bbox_format, options.modalities),
                            options.iou_threshold)


def test_the_app_the_report_and_the_leaderboard_share_one_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(folder))
    expected = _fresh(PRED)

    app = data.evaluate(data.file_key(GT), data.file_key(PRED), OPTIONS)
    assert not app.problems and not app.from_cache and app.results == expected
    (entry,) = _entries(folder)
    key = pipeline.entry_key(file_digest(GT), file_digest(PRED), OPTIONS)
    assert entry == ResultCache(folder).path(key)

    built = build_report_data(GT, [PRED], OPTIONS, tasks=["vocabulary"], worst=0,
                              cache=ResultCache(folder))
    assert built.num_cached == 1 and built.submissions[0].results["open_vocabulary"] == expected
    assert _entries(folder) == [entry]

    (outcome,) = evaluate_with(GT, [PRED], OPTIONS, cache=ResultCache(folder), workers=1)
    assert outcome.cached and outcome.result == expected
    assert _entries(folder) == [entry]

    # The average precision's own options are not the evaluator's: no second entry.
    data.clear_caches()
    ap = data.evaluate(data.file_key(GT), data.file_key(PRED),
                       replace(OPTIONS, max_detections=1000, hard_negatives=True))
    assert ap.from_cache and ap.results == expected
    assert _entries(folder) == [entry]


def test_a_leaderboard_worker_stores_the_entry_the_app_then_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other order, through worker processes (their entries come back as bytes)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(folder))
    outcomes = evaluate_with(GT, [PRED, OTHER], OPTIONS, cache=ResultCache(folder), workers=2)
    assert [o.cached for o in outcomes] == [False, False]
    assert [o.result for o in outcomes] == [_fresh(PRED), _fresh(OTHER)]
    assert len(_entries(folder)) == 2
    for pred in (PRED, OTHER):
        app = data.evaluate(data.file_key(GT), data.file_key(pred), OPTIONS)
        assert app.from_cache and app.results == _fresh(pred)
        assert app.run is not None and app.run.box_facts  # the facts come with the entry
    assert len(_entries(folder)) == 2


def test_an_entry_without_its_facts_is_a_miss_not_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An intact entry of the right key but another layout (issue 35 #8) is reported,
    removed and evaluated again."""
    store = ResultCache(tmp_path / "cache")
    key = pipeline.entry_key(file_digest(GT), file_digest(PRED), OPTIONS)
    store.put(key, {"results": {"summary": {}}})  # no facts
    run, cached = pipeline.evaluate_cached(pipeline.load(GT, PRED, OPTIONS), store)
    assert not cached and run.results == _fresh(PRED)
    assert [p for p, _ in store.rejected] == [store.path(key)]
    run, cached = pipeline.evaluate_cached(pipeline.load(GT, PRED, OPTIONS), store)
    assert cached and run.results == _fresh(PRED)


def test_a_task_has_one_name_in_the_options() -> None:
    assert Options("open_vocabulary", ALL) == Options("vocabulary", ALL)
    assert pipeline.entry_key("a", "b", Options("open_vocabulary", ALL)) == \
        pipeline.entry_key("a", "b", Options("vocabulary", ALL))


# ------------------------------------------------------------------ the AP options in the app

PAGES = ("app.py", "pages/Query_explorer.py", "pages/Gallery.py", "pages/Compare.py",
         "pages/Leaderboard.py", "pages/Slices.py", "pages/Annotation.py",
         "pages/Confusion.py", "pages/Audit.py")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


@pytest.mark.parametrize("page", PAGES)
def test_every_page_names_the_ap_options_it_runs_with(ds: Dataset, page: str) -> None:
    at = app_on(ds, ap_max_detections=1500, ap_hard_negatives=True)
    if page != "app.py":
        goto(at, page)
    at.run()
    assert_ok(at)
    first = at.caption[0].value
    assert "at most 1,500 boxes per query (COCO), hard negatives on" in first, first
    # The sidebar shows the values evaluated, not the defaults.
    assert at.sidebar.number_input(key="ap_max_detections").value == 1500
    assert at.sidebar.toggle(key="ap_hard_negatives").value is True


def _ap_table(at) -> dict[tuple[str, str], dict]:
    """Compare's AP table (a static Markdown table since issue 49's first paint), its cells
    as shown."""
    (table,) = [t for t in table_frames(m.value for m in at.markdown) if "averaged" in t.columns]
    return {(r["modality"], r["metric"]): r for _, r in table.iterrows()}


def _same(shown: str, value: float | None) -> None:
    """A cell shows the core's value to four decimals; null as "—"."""
    assert shown == ("—" if value is None else f"{value:.4f}")


def test_a_compare_link_at_another_cap_and_hard_negatives_shows_the_senders_ap(
        ds: Dataset) -> None:
    """Issue 39: the link carries ``cap`` and ``hardneg``; a fresh session opened from it
    shows AP at those options, not at COCO's 100 without hard negatives."""
    sender = app_on(ds, ap_max_detections=10, ap_hard_negatives=True, cmp_b_path=str(ds.model_b))
    goto(sender, "pages/Compare.py")
    sender.run()
    assert_ok(sender)
    link = dict(sender.query_params)
    assert link["cap"] == ["10"] or link["cap"] == "10"
    assert link.get("hardneg") in ("1", ["1"])
    params = {k: v[0] if isinstance(v, list) else v for k, v in link.items()}

    fresh = open_page("pages/Compare.py", params)
    assert_ok(fresh)
    rows = _ap_table(fresh)
    reports = [average_precision_report(s, 0.5, s.modalities, True, 10) for s in (
        load_samples(ds.gt, p, "vocabulary", modalities=ALL) for p in (ds.model_a, ds.model_b))]
    defaults = [average_precision_report(s, 0.5, s.modalities, False, 100) for s in (
        load_samples(ds.gt, p, "vocabulary", modalities=ALL) for p in (ds.model_a, ds.model_b))]
    # Premise: the options change the numbers shown.
    assert reports[0]["bbox"]["ap_every_point"] != defaults[0]["bbox"]["ap_every_point"]
    for m, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
        _same(rows[(label, "AP")]["A"], reports[0][m]["ap_every_point"])
        _same(rows[(label, "AP")]["B"], reports[1][m]["ap_every_point"])
        _same(rows[(label, "mAP@[.5:.95]")]["A"], reports[0][m]["coco"]["map@[0.5:0.95]"])
    assert fresh.sidebar.number_input(key="ap_max_detections").value == 10
    assert fresh.sidebar.toggle(key="ap_hard_negatives").value is True


@pytest.mark.parametrize(("params", "field"), [({"cap": "5"}, "cap"),
                                                ({"cap": "many"}, "cap"),
                                                ({"hardneg": "yes"}, "hardneg")])
def test_a_link_with_a_bad_ap_option_says_so_and_keeps_the_default(
        ds: Dataset, params: dict[str, str], field: str) -> None:
    fresh = open_page("app.py", {"data": str(ds.root), **params})
    assert not fresh.exception
    notes = " ".join(w.value for w in fresh.warning)
    assert field in notes, notes
    assert fresh.sidebar.number_input(key="ap_max_detections").value == 100
    assert fresh.sidebar.toggle(key="ap_hard_negatives").value is False


def test_a_leaderboard_link_carries_its_options(ds: Dataset) -> None:
    """Every option a user sets on the Leaderboard travels in its link: subsets, seed, the
    AP ranking and the sidebar's AP cap."""
    sender = app_on(ds, lb_subsets=300, lb_seed=7, lb_ap=True, ap_max_detections=10)
    goto(sender, "pages/Leaderboard.py")
    sender.run()
    assert_ok(sender)
    params = {k: v[0] if isinstance(v, list) else v for k, v in sender.query_params.items()}
    assert {k: params.get(k) for k in ("lbsub", "lbseed", "lbap", "cap")} == {
        "lbsub": "300", "lbseed": "7", "lbap": "1", "cap": "10"}
    fresh = open_page("pages/Leaderboard.py", params)
    assert_ok(fresh)
    assert fresh.number_input(key="_w_lb_subsets").value == 300
    assert fresh.number_input(key="_w_lb_seed").value == 7
    assert fresh.toggle(key="_w_lb_ap").value is True
    assert any("at most 10 boxes per query" in c.value and "AP and mAP" in c.value
               for c in fresh.caption)


def test_a_compare_link_carries_the_bootstrap_unit(ds: Dataset) -> None:
    sender = app_on(ds, boot_unit="image", cmp_b_path=str(ds.model_b))
    goto(sender, "pages/Compare.py")
    sender.run()
    assert_ok(sender)
    params = {k: v[0] if isinstance(v, list) else v for k, v in sender.query_params.items()}
    assert params.get("unit") == "image"
    fresh = open_page("pages/Compare.py", params)
    assert_ok(fresh)
    assert fresh.radio(key="_w_boot_unit").value == "image"
    assert any("over images" in c.value for c in fresh.caption)
