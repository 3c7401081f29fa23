"""Issue 37 in Chromium: the Leaderboard's rank intervals and critical-difference diagram.

The worker's shared ``harbour_server`` runs the app on a copy of the bundled demo (four
submissions, 30 images; the test only reads it). The Leaderboard is opened at alpha 0.1 by
its link; what plotly drew is read from the page
(each plot's ``data`` as the browser holds it, and the SVG it rendered) and checked against
``leaderboard_report`` of the same submissions computed here: the rank-interval chart's
points and error bars are the report's ranks and intervals, the diagram's markers the
Friedman mean ranks, its bars the Nemenyi cliques and the critical difference. Screenshots
go to /tmp/ovearth_shots/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from browser_support import MS, Server, settle, shoot
from playwright.sync_api import Page

from ovearth_core.analysis.standings import leaderboard_report
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "assets" / "demo"
MODS = ("segmentation", "bbox", "oriented_bbox")

pytestmark = pytest.mark.browser

# Each plot's traces as the browser holds them (plotly keeps the figure on its element).
PLOTS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => gd.data.map(t => ({
  name: t.name, x: Array.from(t.x || []), y: Array.from(t.y || []),
  text: Array.isArray(t.text) ? Array.from(t.text) : t.text,
  plus: t.error_x ? Array.from(t.error_x.array) : null,
  minus: t.error_x ? Array.from(t.error_x.arrayminus) : null})))"""


def _expected() -> dict:
    names, results = [], []
    for path in sorted((DEMO / "predictions").glob("*.json")):
        samples = load_samples(DEMO / "ground_truth.json", path, "vocabulary", modalities=MODS)
        names.append(path.stem)
        results.append(evaluate_samples(samples, 0.5))
    report = leaderboard_report(names, results, n_subsets=1000,
                                ranks=Options("vocabulary", MODS, alpha=0.1), unit="image")
    return report["uncertainty"]["seg_macro_miou"]


def test_rank_intervals_and_critical_difference_diagram(
        harbour_server: Server, tmp_path: Path, new_page: Callable[..., Page]) -> None:
    expected = _expected()
    page = new_page(1500, 2400)
    page.goto(f"{harbour_server.url}/Leaderboard?alpha=0.1")  # harbour_bench: DEMO's files
    settle(page, "Critical difference (Nemenyi")
    page.get_by_text("Critical difference (Nemenyi").first.scroll_into_view_if_needed()
    shoot(page, tmp_path, "leaderboard_ranks.png")
    plots = page.evaluate(PLOTS)
    (intervals,) = [t for plot in plots for t in plot if t["name"] == "observed rank"]
    assert intervals["y"] == expected["models"]
    assert intervals["x"] == expected["rank"]
    assert [x + p for x, p in zip(intervals["x"], intervals["plus"], strict=True)] == (
        pytest.approx(expected["rank_high"]))
    assert [x - m for x, m in zip(intervals["x"], intervals["minus"], strict=True)] == (
        pytest.approx(expected["rank_low"]))
    (diagram,) = [plot for plot in plots if any(t["name"] == "models" for t in plot)]
    (models,) = [t for t in diagram if t["name"] == "models"]
    friedman = expected["friedman"]
    assert models["text"] == friedman["models"]
    assert models["x"] == pytest.approx(friedman["mean_rank"])
    cliques = [t for t in diagram if t["name"] == "clique"]
    assert len(cliques) == len(friedman["cliques"])
    for bar, (i, j) in zip(cliques, friedman["cliques"], strict=True):
        assert bar["x"] == pytest.approx([friedman["mean_rank"][i] - 0.03,
                                          friedman["mean_rank"][j] + 0.03])
    (cd,) = [t for t in diagram if t["name"] == "cd"]
    assert cd["x"][1] - cd["x"][0] == pytest.approx(friedman["cd"])
    # what was rendered: one error bar per submission, the labels as text
    chart = page.locator(".js-plotly-plot").filter(has_text="Rank by")
    assert chart.locator("g.errorbar").count() == len(expected["models"])
    drawn = page.locator(".js-plotly-plot").filter(has_text="Critical difference")
    for name in friedman["models"]:
        assert drawn.get_by_text(name, exact=False).count() >= 1
    assert drawn.get_by_text(f"CD = {friedman['cd']:.2f}").count() == 1
    # the Friedman statistic shown is scipy's on the per-image scores
    assert friedman["statistic"] is not None
    page.get_by_text(f"Friedman χ² = {friedman['statistic']:.2f}").first.wait_for(
        timeout=MS)
    assert page.locator('[data-testid="stException"]').count() == 0

