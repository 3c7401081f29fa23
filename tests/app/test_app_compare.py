"""AppTest of the Compare page (pages/Compare.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, goto, write_dataset
from markdown_tokens import table_frames
from streamlit.testing.v1 import AppTest

from ovearth_core.analysis.compare import Comparison, compare_results
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "pages/Compare.py"
ALL = ("segmentation", "bbox", "oriented_bbox")


pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def _compare_page(ds: Dataset, **state: object) -> AppTest:
    at = app_on(ds, **state)
    goto(at, PAGE)
    return at.run()


def _same(shown: str, value: float | None) -> None:
    """A table cell shows the core's value to four decimals (as the data grid did); null
    shows as "—"."""
    assert shown == ("—" if value is None else f"{value:.4f}")


def _tables(at: AppTest) -> list:
    """The page's static tables (Markdown, issue 49), as frames of the cells' text."""
    return table_frames(m.value for m in at.markdown)


def _expected(ds: Dataset, task: str) -> Comparison:
    a, b = (evaluate_samples(load_samples(ds.gt, p, task, modalities=ALL), 0.5)
            for p in (ds.model_a, ds.model_b))
    return compare_results(a, b)


def test_compare_page_shows_metrics_agreement_and_downloads(ds: Dataset) -> None:
    at = _compare_page(ds)
    assert_ok(at)
    assert at.selectbox(key="_w_cmp_b_path").value.endswith("model_b.json")
    expected = _expected(ds, "vocabulary")
    # Issue 49: no data grid on the first screen; the small tables are static (st.table).
    assert not at.dataframe
    table = _tables(at)[0]
    assert len(table) == len(expected.metrics) == 13
    for (_, row), m in zip(table.iterrows(), expected.metrics, strict=True):
        for column, value in (("A", m.a), ("B", m.b), ("Δ B − A", m.diff),
                              ("CI low", m.ci_low), ("CI high", m.ci_high)):
            _same(row[column], value)
    agreement = _tables(at)[1]
    presence = agreement.iloc[0]
    exp = expected.agreements[0]
    assert presence["table"] == "presence"
    assert (presence["only model_a right"], presence["only model_b right"]) == (
        str(exp.only_a), str(exp.only_b))
    assert presence["McNemar p"] == f"{exp.p_value:.3e}"
    assert presence["McNemar p (Holm)"] == f"{exp.p_holm:.3e}"
    downloads = at.get("download_button")
    assert len(downloads) == 3  # two overlays and the report
    assert len(at.get("image")) == 2
    assert not at.get("plotly_chart")  # issue 49: the charts wait in their tab


def test_compare_first_screen_has_no_chart_and_its_tab_draws_the_three(ds: Dataset) -> None:
    """Issue 49: the first screen (the tables, the overlays, AP) draws no plotly chart; the
    lazy "Charts" tab draws the key metrics' bars, B − A's intervals and the scatter of the
    per-query differences of the modality picked in the tables' tab (one choice for both)."""
    at = _compare_page(ds)
    assert_ok(at)
    assert not at.get("plotly_chart")
    at.radio(key="_w_cmp_modality").set_value("bbox").run()
    assert_ok(at)
    at.session_state["cmp_tab"] = "Charts"
    at.run()
    assert_ok(at)
    charts = {c.key: c for c in at.get("plotly_chart")}
    assert set(charts) == {"cmp_bars", "cmp_forest", "cmp_scatter"}
    assert at.radio(key="_w_cmp_modality").value == "bbox"
    scatter = json.loads(charts["cmp_scatter"].proto.spec)
    expected = _expected(ds, "vocabulary").query_diffs["bbox"]
    assert sorted(scatter["data"][0]["text"]) == sorted(d.sample_id for d in expected)
    assert "Per-query HBB F1" in scatter["layout"]["title"]["text"]
    assert not at.get("image")  # the overlays stay in the tables' tab


def test_compare_page_never_defaults_to_a_itself_through_a_symlink(ds: Dataset,
                                                                    tmp_path: Path) -> None:
    """Data reached through a symlinked folder: B still defaults to another submission, not
    to A under its other name (A vs A would show nothing but zeros)."""
    link = tmp_path / "linked"
    link.symlink_to(ds.root, target_is_directory=True)
    at = app_on(None, gt_path=str(link / "ground_truth.json"), images_dir=str(link),
                pred_path=str(link / "predictions" / "model_a.json"))
    goto(at, PAGE)
    at.run()
    assert_ok(at)
    assert at.selectbox(key="_w_cmp_b_path").options == ["model_b"]
    assert at.selectbox(key="_w_cmp_b_path").value.endswith("model_b.json")


def test_compare_page_other_task_and_modality(ds: Dataset) -> None:
    at = _compare_page(ds, task="referring")
    assert_ok(at)
    expected = _expected(ds, "referring")
    assert len(_tables(at)[0]) == len(expected.metrics) == 12
    at.radio(key="_w_cmp_modality").set_value("bbox").run()
    assert_ok(at)
    assert at.radio(key="_w_cmp_modality").value == "bbox"


def test_compare_page_reports_a_bad_submission_b(ds: Dataset) -> None:
    # Sorted first among the other submissions, so it is B by default.
    bad = ds.model_a.parent / "broken.json"
    bad.write_text(json.dumps({"tasks": {"open_vocabulary": [{"query_id": "nope"}]}}))
    at = _compare_page(ds)
    assert at.selectbox(key="_w_cmp_b_path").value.endswith("broken.json")
    assert not at.exception
    assert at.error and "could not be evaluated" in at.error[0].value
    assert "nope" in at.error[0].value
    assert not at.get("download_button")  # the page stopped before any comparison


def test_auto_modalities_evaluate_b_with_a_modalities(ds: Dataset) -> None:
    # The sidebar's "auto" would read a masks-only B with masks only; the page evaluates
    # B with A's modalities instead, so the rows pair up; the boxes B never gave are "not
    # submitted" (issue 13): no value, no difference, never an empty submission's 0.
    doc = json.loads(ds.model_b.read_text())
    for rows in doc["tasks"].values():
        for row in rows:
            row["bbox"], row["oriented_bbox"] = [], []
    masks_only = ds.model_a.parent / "a_masks_only.json"  # sorted first: B by default
    masks_only.write_text(json.dumps(doc))
    at = _compare_page(ds, auto_modalities=True)
    assert_ok(at)
    assert at.selectbox(key="_w_cmp_b_path").value.endswith("a_masks_only.json")
    assert "modalities bbox, oriented_bbox, segmentation" in at.caption[0].value
    table = _tables(at)[0]
    assert len(table) == 13
    recall = table[(table["modality"] == "HBB") & (table["metric"] == "micro recall")].iloc[0]
    assert recall["B"] == "—" and float(recall["A"]) > 0  # not submitted


def test_compare_page_shows_ap_and_map_of_both_with_the_overview_cap(ds: Dataset) -> None:
    """Issue 25: pooled AP and per-category mAP of A and B with B − A (no interval: AP is
    no sum of per-query pieces), at the Overview's detection cap."""
    from ovearth_core.analysis.ap import average_precision_report

    at = _compare_page(ds, ap_max_detections=10)
    assert_ok(at)
    (table,) = [t for t in _tables(at) if "averaged" in t.columns]
    reports = [average_precision_report(s, 0.5, s.modalities, False, 10) for s in (
        load_samples(ds.gt, p, "vocabulary", modalities=ALL) for p in (ds.model_a, ds.model_b))]
    rows = {(r["modality"], r["metric"]): r for _, r in table.iterrows()}
    for m, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
        for metric, a, b in (
                ("mAP@[.5:.95]", reports[0][m]["coco"]["map@[0.5:0.95]"],
                 reports[1][m]["coco"]["map@[0.5:0.95]"]),
                ("DOTA mAP (VOC07)", reports[0][m]["voc_devkit"]["map_11_point"],
                 reports[1][m]["voc_devkit"]["map_11_point"]),
                ("AP", reports[0][m]["ap_every_point"], reports[1][m]["ap_every_point"])):
            row = rows[(label, metric)]
            _same(row["A"], a)
            _same(row["B"], b)
            _same(row["Δ B − A"], None if a is None or b is None else b - a)
    n = reports[0]["bbox"]["coco"]["num_categories"]
    assert rows[("HBB", "mAP@[.5:.95]")]["averaged"] == f"mean over {n} categories"
    assert rows[("HBB", "AP")]["averaged"] == "pooled over all queries, class-agnostic"
    assert any("paired-bootstrap intervals" in c.value and "at most 10 boxes" in c.value
               for c in at.caption)


def test_compare_page_shows_ap_intervals_with_the_few_units_warning(ds: Dataset) -> None:
    """Issue 25: every AP and mAP row has the paired interval and the resamples it rests on,
    the core's (ap_differences over the same draws, tests/analysis/test_ap_bootstrap.py checks it
    against brute force) at the Overview's cap and hard-negative view; the tiny dataset's
    few units get the warning in the AP section too."""
    from ovearth_core.analysis.ap_bootstrap import ap_run
    from ovearth_core.analysis.compare import DEFAULT_AP_RESAMPLES, ap_differences

    at = _compare_page(ds, ap_max_detections=10, ap_hard_negatives=True)
    assert_ok(at)
    (table,) = [t for t in _tables(at) if "averaged" in t.columns]
    samples = [load_samples(ds.gt, p, "vocabulary", modalities=ALL)
               for p in (ds.model_a, ds.model_b)]
    results = [evaluate_samples(s, 0.5) for s in samples]
    runs = [ap_run(s, 0.5, s.modalities, True, 10) for s in samples]
    expected = ap_differences(*results, *runs, unit="query")  # the GT names no unit
    assert len(table) == len(expected) == 14
    for (_, row), m in zip(table.iterrows(), expected, strict=True):
        for column, value in (("A", m.a), ("B", m.b), ("Δ B − A", m.diff),
                              ("CI low", m.ci_low), ("CI high", m.ci_high)):
            _same(row[column], value)
        if m.ci_low is not None:
            assert row["resamples used"] == str(m.n_valid)
            assert 0 < m.n_valid <= DEFAULT_AP_RESAMPLES
    assert any(m.ci_low is not None and m.ci_low < m.ci_high for m in expected)
    warnings = [w.value for w in at.warning if w.value.startswith("AP intervals. Thin evidence")]
    assert len(warnings) == 1 and "fewer than 30" in warnings[0]


def test_ap_intervals_of_a_large_run_come_on_request(ds: Dataset,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Above compare_views.AUTO_AP_BOXES predicted boxes the page shows A, B and Δ at once
    and the intervals after "Bootstrap the AP intervals" (the full benchmark's take 15-25 s);
    the choice stays for later reruns of the same comparison."""
    from pages.common import compare_views

    monkeypatch.setattr(compare_views, "AUTO_AP_BOXES", 0)
    at = _compare_page(ds)
    assert_ok(at)

    def table():
        (t,) = [t for t in _tables(at) if "averaged" in t.columns]
        return t.replace("—", None).astype({c: float for c in ("Δ B − A", "CI low",
                                                                "CI high")})

    before = table()
    assert before["Δ B − A"].notna().any()
    assert before["CI low"].isna().all() and before["CI high"].isna().all()
    assert any("computed on request" in i.value for i in at.info)
    (button,) = [b for b in at.button if b.label.startswith("Bootstrap the AP intervals")]
    button.click().run()
    assert_ok(at)
    after = table()
    assert after["CI low"].notna().any()
    assert (after["CI low"].dropna() <= after["CI high"].dropna()).all()
    assert not any("computed on request" in i.value for i in at.info)
    at.run()  # a rerun keeps them
    assert table()["CI low"].notna().any()


def test_compare_page_warns_about_the_detection_cap_as_the_overview_does() -> None:
    """Issue 34, item 10: a query with more GT boxes than the COCO detection cap gets the
    Overview's warning on Compare's AP table too (the demo: box_detector against
    strong_localiser at cap 100; the queries over it from the core's report)."""
    from ovearth_core.analysis.ap import average_precision_report

    demo = Path(APP).parent / "assets" / "demo"
    ds = Dataset(demo, demo / "ground_truth.json", demo,
                 demo / "predictions" / "box_detector.json",
                 demo / "predictions" / "strong_localiser.json")
    at = _compare_page(ds, ap_max_detections=100, cmp_b_path=str(ds.model_b))
    assert_ok(at)
    samples = load_samples(ds.gt, ds.model_a, "vocabulary", modalities="auto")
    over = average_precision_report(samples, 0.5, samples.modalities, False,
                                    100)["bbox"]["coco"]["queries_over_cap"]
    assert over
    notes = [w.value for w in at.warning if "detection cap" in w.value]
    assert notes and "cap of 100" in notes[0] and over[0] in notes[0]
    assert f"{len(over):,} queries have more GT boxes" in notes[0]


def test_every_explorer_link_of_the_compare_tables_opens_its_own_query(ds: Dataset) -> None:
    """The links of a table are built from the session's parameters read once (issue 38):
    each still names its own row's query, with the session's dataset, A and task."""
    from urllib.parse import parse_qs, urlparse

    at = _compare_page(ds)
    assert_ok(at)
    assert not at.dataframe  # issue 49: the long tables wait in their (lazy) expanders
    at.session_state["_w_cmp_diffs_open"] = True
    at.session_state["_w_cmp_flipped_open"] = True
    at.run()
    assert_ok(at)
    assert len(at.dataframe) == 2
    checked = 0
    for frame in at.dataframe:
        table = frame.value
        if "explorer" not in table.columns:
            continue
        for _, row in table.iterrows():
            link = urlparse(row["explorer"])
            params = {k: v[0] for k, v in parse_qs(link.query).items()}
            assert link.path.endswith("Query_explorer")
            assert params["q"] == row["query"]
            assert (params["sub"], params["task"]) == ("model_a", "vocabulary")
            checked += 1
    assert checked >= 2
