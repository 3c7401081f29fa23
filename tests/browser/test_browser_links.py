"""A link copied from the explorer reproduces the view on a restarted server (issue 13).

In Chromium: open the app, type another benchmark's ground truth (not the demo: its
categories and submissions differ, so a fallback to the demo cannot pass), move to the
second query of the explorer, copy the viewer's link, then start a new server of the same app
(no session has used it), open the link in a fresh browser context, and check the same query,
category and scores. The sender's session is on the worker's shared ``demo_server`` (it only
reads); the receiver is the new server.
The other links here (a forbidden dataset, a confusion-matrix cell) only read the demo:
they open on the worker's shared ``demo_server``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from app_fixtures import write_dataset
from browser_support import IDLE, MS, Server, navigate, settle, shoot
from playwright.sync_api import Page, expect


def _other_benchmark(root: Path) -> Path:
    """The app tests' tiny dataset with renamed categories and phrases."""
    ds = write_dataset(root)
    gt = json.loads(ds.gt.read_text())
    for ann in gt["annotations"]:
        ann["category_name"] = "harbour " + ann["category_name"]
    for q in gt["tasks"]["open_vocabulary"]:
        q["phrase"] = "harbour " + q["phrase"]
    ds.gt.write_text(json.dumps(gt))
    ds.model_a.rename(ds.root / "predictions" / "zz_model.json")  # not first: sub must travel
    return ds.gt


def _view(page: Page) -> dict[str, str]:
    """The viewer's query id, category line and scores line, as the user reads them."""
    card = page.locator(".ov-side")  # the facts column of the viewer's card
    header = page.locator("h3").filter(has_text=re.compile(r"ov_\d+")).first.inner_text()
    category = card.locator("p").filter(has_text="Category:").first.inner_text()
    scores = page.get_by_text("Scores:", exact=False).first.inner_text()
    return {"query": header.strip(), "category": category.strip(), "scores": scores.strip()}


def test_copied_link_opens_the_same_view_on_a_restarted_server(
        demo_server: Server, tmp_path: Path, new_page: Callable[..., Page]) -> None:
    gt = _other_benchmark(tmp_path / "data" / "harbour_bench")
    page = new_page(1500, 2200)
    page.goto(f"{demo_server.url}/Query_explorer")
    settle(page, "Viewer")
    field = page.get_by_role("textbox", name="Ground truth JSON")
    field.fill(str(gt))
    field.press("Enter")
    settle(page, "harbour_bench/predictions/model_b.json")
    # Not the folder's first submission, so the link must carry it.
    page.get_by_role("combobox", name="Submission").click()
    page.get_by_role("option", name="zz_model").click()
    settle(page, "harbour_bench/predictions/zz_model.json")
    # The query in view stays ov_000001 (5th of 6 for this submission): step back
    # once, so the link's query is not the one a fresh session would open on.
    navigate(page, "◀ Previous", "Query 4 of 6")
    before = _view(page)
    page.get_by_text("Link", exact=True).click()  # the switch that shows the link
    page.wait_for_selector(IDLE, timeout=MS)
    link = page.locator('[data-testid="stCode"]').filter(
        has_text="Query_explorer?").first.inner_text().strip()
    shoot(page, tmp_path, "link_before.png")
    assert "harbour" in before["category"] and "zz_model" in link
    with Server(demo_server.app_dir, tmp_path / "second.log") as server:
        fresh = new_page(1500, 2200)
        fresh.goto(re.sub(r"^http://127\.0\.0\.1:\d+", server.url, link))
        settle(fresh, "Viewer")
        after = _view(fresh)
        shoot(fresh, tmp_path, "link_after.png")
        assert fresh.locator('[data-testid="stException"]').count() == 0
    assert after == before


@pytest.mark.parametrize("data", ["/etc", "no/such/bench"])
def test_a_link_to_a_forbidden_or_missing_dataset_is_an_error_not_the_demo(
        demo_server: Server, new_page: Callable[..., Page], data: str) -> None:
    page = new_page()
    page.goto(f"{demo_server.url}/Query_explorer?data={data}&q=ov_000003")
    settle(page, "The link names the ground truth")
    assert page.locator("h3", has_text="ov_000003").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0


CELL_CENTRE = """([x, y]) => {
    const gd = [...document.querySelectorAll('.js-plotly-plot')]
        .find(g => g._fullData && g._fullData.some(t => t.type === 'heatmap'));
    const box = gd.getBoundingClientRect(), l = gd._fullLayout;
    return [box.left + l.xaxis._offset + l.xaxis.d2p(x),
            box.top + l.yaxis._offset + l.yaxis.d2p(y)];
}"""


@pytest.mark.parametrize(("cell", "outcome", "query"), [
    (("predicted present", "GT absent (negative)"), "FP", "ov_000002"),
    (("predicted absent", "GT present (positive)"), "FN", "ov_000006")])
def test_clicking_a_confusion_matrix_cell_opens_the_explorer_on_that_outcome(
        demo_server: Server, new_page: Callable[..., Page], tmp_path: Path,
        cell: tuple[str, str], outcome: str, query: str) -> None:
    """The matrix's cell itself (not the button below it), clicked where plotly draws it.
    tests/app_fixtures.py's model_a has one false positive (ov_000002, a box on a negative
    query) and one false negative (ov_000006, no box on a positive one)."""
    page = new_page(1500, 1600)
    page.goto(demo_server.url)
    settle(page, "Presence confusion matrix")
    page.get_by_role("tab", name="Charts").click()  # issue 49: the charts wait in their tab
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')]"
                           ".some(g => g._fullData?.some(t => t.type === 'heatmap'))",
                           timeout=MS)
    x, y = page.evaluate(CELL_CENTRE, list(cell))
    page.mouse.click(x, y)
    expect(page.get_by_role("heading", name="Query explorer")).to_be_visible(timeout=MS)
    settle(page, "Query 1 of 1 in the filtered list")
    assert f"outcome={outcome}" in page.url
    assert _view(page)["query"] == query
    shoot(page, tmp_path, f"overview_cell_{outcome}.png")


# The weakest-categories bar drawn longest (a bar of length 0 cannot be clicked): its
# category and where its middle is on the page.
LONGEST_BAR = """() => {
    const gd = [...document.querySelectorAll('.js-plotly-plot')]
        .find(g => g._fullData && g._fullData.some(t => t.type === 'bar'
                                                    && t.orientation === 'h'));
    gd.scrollIntoView({block: 'center'});
    const t = gd._fullData.find(t => t.type === 'bar'), l = gd._fullLayout;
    const i = t.x.indexOf(Math.max(...t.x)), box = gd.getBoundingClientRect();
    return [t.customdata[i], box.left + l.xaxis._offset + l.xaxis.d2p(t.x[i] / 2),
            box.top + l.yaxis._offset + l.yaxis.d2p(t.y[i])];
}"""


def test_clicking_a_weakest_category_bar_opens_the_explorer_on_that_category(
        demo_server: Server, new_page: Callable[..., Page], tmp_path: Path) -> None:
    """Issue 49: the bars are in the Overview's "Charts" tab; a click on one (where plotly
    draws it) opens the explorer filtered to that category."""
    page = new_page(1500, 1600)
    page.goto(demo_server.url)
    settle(page, "Presence confusion matrix")
    page.get_by_role("tab", name="Charts").click()
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')]"
                           ".some(g => g._fullData?.some(t => t.orientation === 'h'))",
                           timeout=MS)
    category, x, y = page.evaluate(LONGEST_BAR)
    page.mouse.click(x, y)
    expect(page.get_by_role("heading", name="Query explorer")).to_be_visible(timeout=MS)
    settle(page, "in the filtered list")
    query = parse_qs(urlparse(page.url).query)
    assert query["cat"] == [category]
    shoot(page, tmp_path, "overview_bar.png")
