"""AppTest of the Leaderboard's ranks with their uncertainty (issue 37) on the bundled demo:
the table shows the core's rank intervals, groups and Holm-corrected tests (their p-values
corrected again here by statsmodels), the two figures draw those numbers, the Friedman
caption is scipy's statistic, the category table carries Benjamini-Hochberg q-values, and
the settings travel in the page's link."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import thin_board
from app_fixtures import assert_ok, goto, open_page
from markdown_tokens import table_frames
from statsmodels.stats.multitest import multipletests
from streamlit.testing.v1 import AppTest

from ovearth_core.analysis.standings import leaderboard_report
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")
LEADERBOARD = "pages/Leaderboard.py"
DEMO = REPO / "assets" / "demo"
PERSONAS = ["box_detector", "cautious_segmenter", "strong_localiser", "weak_baseline"]
MODS = ("segmentation", "bbox", "oriented_bbox")

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _expected(metric: str, **options: object) -> dict:
    """The core's report of the demo's four submissions with the page's settings."""
    names, results = [], []
    for name in PERSONAS:
        samples = load_samples(DEMO / "ground_truth.json", DEMO / "predictions" / f"{name}.json",
                               "vocabulary", modalities=MODS)
        names.append(name)
        results.append(evaluate_samples(samples, 0.5))
    report = leaderboard_report(names, results, n_subsets=200,
                                ranks=Options("vocabulary", MODS, **options), unit="image")
    return report["uncertainty"][metric]


def _leaderboard(**state: object) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in state.items():
        at.session_state[key] = value
    goto(at, LEADERBOARD)
    return at.run()


def _frame(at: AppTest, column: str):
    (frame,) = [d.value for d in at.dataframe if column in d.value.columns]
    return frame


def _p(value: float | None) -> str | None:
    return None if value is None else (f"{value:.3g}" if value >= 1e-3 else f"{value:.1e}")


def test_the_rank_table_shows_intervals_groups_and_holm() -> None:
    at = _leaderboard()
    assert_ok(at)
    expected = _expected("seg_macro_miou")
    table = _frame(at, "p (Holm)")
    assert list(table["submission"]) == expected["models"]
    assert list(table["rank 95 % interval"]) == [
        f"{lo:g}–{hi:g}" for lo, hi in zip(expected["rank_low"], expected["rank_high"],
                                           strict=True)]
    assert list(table["group"]) == expected["groups"]
    assert list(table["value"]) == pytest.approx(expected["value"])
    # the shown p-values, corrected by statsmodels, are the shown Holm column
    p = [float(x) for x in table["p (paired bootstrap)"][1:]]
    assert [float(x) for x in table["p (Holm)"][1:]] == pytest.approx(
        multipletests(p, method="holm")[1].tolist(), rel=2e-3)
    assert pd.isna(table["p (Holm)"][0])  # the leader is not tested against itself
    text = " ".join(c.value for c in at.caption)
    assert "Holm's method over the 2 comparisons with the leader" in text
    assert "1,000 resamples of the 30 images" in text
    notes = " ".join(i.value for i in at.info)
    assert "is an optimistic estimate of the state of the art" in notes
    assert f"{expected['best_of_n']['optimism']:+.4f}" in notes


def test_the_figures_draw_the_intervals_and_the_cliques() -> None:
    at = _leaderboard()
    expected = _expected("seg_macro_miou")
    charts = {c.key: c for c in at.get("plotly_chart")}
    import json

    intervals = json.loads(charts["lb_rank_intervals"].proto.spec)["data"][0]
    assert intervals["y"] == expected["models"]
    assert intervals["x"] == expected["rank"]
    assert np.allclose(np.array(intervals["x"]) + intervals["error_x"]["array"],
                       expected["rank_high"])
    assert np.allclose(np.array(intervals["x"]) - intervals["error_x"]["arrayminus"],
                       expected["rank_low"])
    cd = json.loads(charts["lb_cd_diagram"].proto.spec)["data"]
    (models,) = [t for t in cd if t.get("name") == "models"]
    friedman = expected["friedman"]
    assert models["text"] == friedman["models"]
    assert models["x"] == pytest.approx(friedman["mean_rank"])
    bars = [t for t in cd if t.get("name") == "clique"]
    assert len(bars) == len(friedman["cliques"])
    (cd_bar,) = [t for t in cd if t.get("name") == "cd"]
    assert cd_bar["x"][1] - cd_bar["x"][0] == pytest.approx(friedman["cd"])
    text = " ".join(c.value for c in at.caption)
    assert f"Friedman χ² = {friedman['statistic']:.2f}, p = {_p(friedman['p'])}" in text


def test_the_category_table_has_bh_q_values_and_a_minimum_count() -> None:
    # The demo's categories span one or two of its 30 images: at the default minimum of 10
    # images none is tested (a bootstrap over two images says nothing); at 2, six are.
    at = _leaderboard()
    assert_ok(at)
    table = _frame(at, "q (Benjamini–Hochberg)")
    assert table["p (paired bootstrap)"].isna().all()
    assert "those spanning at least 10 images" in " ".join(c.value for c in at.caption)
    at = _leaderboard(min_count=2)
    assert_ok(at)
    expected = _expected("seg_macro_miou", min_count=2)["categories"]
    table = _frame(at, "q (Benjamini–Hochberg)")
    assert list(table["category"]) == [r["category"] for r in expected["rows"]]
    assert list(table["images"]) == [r["num_units"] for r in expected["rows"]]
    shown = [(n, p, q) for n, p, q in zip(table["images"], table["p (paired bootstrap)"],
                                          table["q (Benjamini–Hochberg)"], strict=True)]
    assert all(pd.isna(p) == (n < 2) for n, p, _ in shown)
    p = [float(x) for _, x, _ in shown if not pd.isna(x)]
    q = [float(x) for _, _, x in shown if not pd.isna(x)]
    assert len(p) >= 2
    assert q == pytest.approx(multipletests(p, method="fdr_bh")[1].tolist(), rel=2e-3)
    assert "those spanning at least 2 images" in " ".join(c.value for c in at.caption)


def test_the_settings_change_the_numbers_and_travel_in_the_link() -> None:
    at = _leaderboard()
    at.number_input(key="_w_alpha").set_value(0.1).run()
    at.number_input(key="_w_rank_resamples").set_value(300).run()
    at.radio(key="_w_friedman_blocks").set_value("query").run()
    assert_ok(at)
    expected = _expected("seg_macro_miou", alpha=0.1, rank_resamples=300,
                         friedman_blocks="query")
    table = _frame(at, "p (Holm)")
    assert list(table["rank 90 % interval"]) == [
        f"{lo:g}–{hi:g}" for lo, hi in zip(expected["rank_low"], expected["rank_high"],
                                           strict=True)]
    assert "300 resamples" in " ".join(c.value for c in at.caption)
    params = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert {k: params.get(k) for k in ("alpha", "rres", "fblk")} == {
        "alpha": "0.1", "rres": "300", "fblk": "query"}
    fresh = open_page(LEADERBOARD, params, timeout=180)
    assert_ok(fresh)
    assert fresh.number_input(key="_w_alpha").value == 0.1
    assert fresh.number_input(key="_w_rank_resamples").value == 300
    assert fresh.radio(key="_w_friedman_blocks").value == "query"
    assert f"over {expected['friedman']['num_blocks']:,} queries" in " ".join(
        c.value for c in fresh.caption)


def test_an_ap_ranking_has_its_rank_intervals() -> None:
    """Issue 50: AP is no sum of pieces, yet it gets rank intervals (AP recomputed in each
    resample), and says it has no Friedman test."""
    at = _leaderboard(lb_ap=True)
    at.selectbox(key="lb_rank_by").set_value("bbox_ap").run()
    assert_ok(at)
    assert not any("no rank intervals" in i.value for i in at.info)
    assert any("its AP recomputed with each query weighted" in c.value for c in at.caption)
    assert any(i.value.startswith("AP ranks boxes across queries") for i in at.info)


def test_compare_corrects_its_mcnemar_tests_by_holm() -> None:
    at = _leaderboard(cmp_b_path="assets/demo/predictions/weak_baseline.json",
                      pred_path="assets/demo/predictions/strong_localiser.json")
    goto(at, "pages/Compare.py").run()
    assert_ok(at)
    # The agreement table is a static Markdown table (issue 49's first paint): p-values as
    # shown, four significant digits (".3e"), so Holm's products agree to their rounding.
    (table,) = [t for t in table_frames(m.value for m in at.markdown)
                if "McNemar p (Holm)" in t.columns]
    raw = [float(p) for p in table["McNemar p"]]
    holm = [float(p) for p in table["McNemar p (Holm)"]]
    assert len(raw) == 4 and raw != holm
    assert holm == pytest.approx(multipletests(raw, method="holm")[1].tolist(), rel=1e-3)
    assert any("corrected by Holm's method over the 4 tests" in c.value for c in at.caption)


def test_paired_slices_show_benjamini_hochberg_q_values() -> None:
    at = _leaderboard(cmp_b_path="assets/demo/predictions/weak_baseline.json",
                      pred_path="assets/demo/predictions/strong_localiser.json", min_count=8)
    goto(at, "pages/Slices.py").run()
    at.toggle(key="_slice_paired").set_value(True).run()
    assert_ok(at)
    table = _frame(at, "q (Benjamini–Hochberg)")
    shown = [(n, p, q) for n, p, q in zip(table["queries"],
                                          table["p (B − A, paired bootstrap)"],
                                          table["q (Benjamini–Hochberg)"], strict=True)]
    assert any(n < 8 for n, _, _ in shown)
    assert all(pd.isna(p) for n, p, _ in shown if n < 8)
    p = [float(x) for _, x, _ in shown if not pd.isna(x)]
    q = [float(x) for _, _, x in shown if not pd.isna(x)]
    assert len(p) >= 2
    assert q == pytest.approx(multipletests(p, method="fdr_bh")[1].tolist(), rel=2e-3)
    assert any("q-values by Benjamini–Hochberg" in c.value and "at least 8 queries" in c.value
               for c in at.caption)  # the demo's unit is the query (a Slices bootstrap's)


# --- issue 46 §4 / issue 48: one rule, one wording, on every page --------------------------

THIN = ("Thin evidence: the intervals and tests rest on {} (fewer than 30), so they are "
        "rough: intervals usually too narrow, p-values too small.")
BELOW = ("No test and no groups: 5 images (fewer than the minimum count, 10); a test over so "
         "few says nothing (a bootstrap's intervals are points and its p-value the smallest "
         "it can give, whatever the submissions).")


@pytest.fixture(scope="module")
def thin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = thin_board(tmp_path_factory.mktemp("thin"), 5)
    return {"gt_path": str(root / "ground_truth.json"), "images_dir": str(root),
            "pred_path": str(root / "predictions" / "a_twin.json"),
            "cmp_b_path": str(root / "predictions" / "d_weak.json"),
            "lb_folder": str(root / "predictions")}


def _warnings(at: AppTest) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]


def test_a_thin_board_shows_the_one_wording_on_every_page(thin: dict[str, object]) -> None:
    at = _leaderboard(**thin, min_count=2)
    assert_ok(at)
    assert THIN.format("5 images") in _warnings(at)
    table = _frame(at, "p (Holm)")
    assert list(table["submission"][:2]) == ["a_twin", "b_twin"]
    assert list(table["ranked first"][:2]) == ["100 %", "100 %"]  # ties for first count
    assert any("ranks first (alone or tied) in 100 % of the resamples" in i.value
               for i in at.info)
    goto(at, "pages/Compare.py").run()
    at.radio(key="_w_boot_unit").set_value("image").run()
    assert_ok(at)
    assert THIN.format("5 images") in _warnings(at)
    goto(at, "pages/Slices.py").run()
    assert_ok(at)
    assert any(w.startswith("Thin evidence in ") and "rest on fewer than 30 " in w
               for w in _warnings(at))


def test_below_the_minimum_count_the_leaderboard_says_why(thin: dict[str, object]) -> None:
    at = _leaderboard(**thin)
    assert_ok(at)
    assert BELOW in _warnings(at)
    table = _frame(at, "p (Holm)")
    assert table["p (paired bootstrap)"].isna().all() and table["p (Holm)"].isna().all()
    assert table["rank 95 % interval"].isna().all() and (table["group"] == "").all()
