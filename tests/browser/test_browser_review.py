"""Review in Chromium (issue 19): a tag set in one browser context (the explorer, the gallery)
is in the sidecar and is seen by a second, fresh context on the same server; the Slices page
renders its table and chart; the explorer links to the Annotation page, which shows the
three tasks; the query-form slice (screenshots in /tmp/ovearth_shots with ``OVEARTH_SHOTS=1``).

The tests that tag write a review sidecar beside their dataset's ground truth: the dataset is
in the test's own folder, opened by its link (``data=``, under the data roots) on the worker's
shared ``demo_server``, whose own folders stay unchanged."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from app_fixtures import write_dataset
from browser_support import IDLE, MS, REPO, Server, settle, shoot
from playwright.sync_api import Page, expect

from ovearth_core import review


def _tags_box(page: Page):
    return page.locator('[data-testid="stMultiSelect"]').filter(has_text="Tags of this query")


def test_a_tag_set_in_one_context_is_seen_in_another(
        demo_server: Server, tmp_path: Path, new_page: Callable[..., Page]) -> None:
    ds = write_dataset(tmp_path / "data" / "bench")  # the tag goes to its review sidecar
    link = f"{demo_server.url}/{{}}?data={ds.root}"
    one = new_page(1500, 2600)
    one.goto(link.format("Query_explorer"))
    settle(one, "Review tags: —")
    one.get_by_text("Tag / note", exact=True).click()  # the review panel's switch
    _tags_box(one).locator("input").click()
    one.get_by_role("option", name="gt_error").click()
    one.keyboard.press("Escape")
    one.wait_for_selector(IDLE, timeout=MS)
    expect(_tags_box(one)).to_contain_text("gt_error", timeout=MS)
    expect(one.get_by_text("Review tags: gt_error")).to_be_visible(timeout=MS)
    state = review.load_state(review.sidecar_for(ds.gt))
    assert [t.query_id for t in state.tags] == ["ov_000002"]
    shoot(one, tmp_path, "review_tagged.png")
    two = new_page(1500, 2600)
    two.goto(link.format("Query_explorer") + "&q=ov_000002")
    settle(two, "Review tags: gt_error")  # the viewer's facts, outside the popover
    two.get_by_text("Tag / note", exact=True).click()
    expect(_tags_box(two)).to_contain_text("gt_error", timeout=MS)
    two.goto(link.format("Slices"))
    settle(two, "slices of")
    expect(two.locator(".js-plotly-plot").first).to_be_visible(timeout=MS)
    shoot(two, tmp_path, "slices.png")
    assert two.locator('[data-testid="stException"]').count() == 0


def _check_tile(page: Page, n: int) -> None:
    page.locator('[data-testid="stCheckbox"]').filter(has_text="select").nth(n).click()
    page.wait_for_selector(IDLE, timeout=MS)


def test_a_tag_set_in_the_gallery_is_seen_in_another_context(
        demo_server: Server, tmp_path: Path, new_page: Callable[..., Page]) -> None:
    # a copy of the bundled demo (browser_support.harbour_app's): the tags go to its sidecar
    bench = tmp_path / "data" / "harbour_bench"
    shutil.copytree(REPO / "assets" / "demo", bench, ignore=shutil.ignore_patterns(".ovearth"))
    link = f"{demo_server.url}/Gallery?data={bench}"
    one = new_page(1500, 1900)
    one.goto(link)
    settle(one, "tiles · showing 1–")
    main = one.locator('[data-testid="stMain"]')
    href = main.locator("a", has_text="↗").nth(1).get_attribute("href") or ""
    query = dict(parse_qsl(urlsplit(href).query))["q"]
    _check_tile(one, 1)
    expect(main.get_by_text("1 tile selected", exact=False)).to_be_visible(timeout=MS)
    tag_box = main.locator('[data-testid="stSelectbox"]').filter(
        has=one.get_by_text("Tag", exact=True))
    tag_box.locator("input").click()
    one.get_by_role("option", name="gt_error").click()
    one.wait_for_selector(IDLE, timeout=MS)
    shoot(one, tmp_path, "gallery_tagging.png")
    main.get_by_role("button", name="Tag 1 object").click()
    one.wait_for_selector(IDLE, timeout=MS)
    expect(main.get_by_text("0 tiles selected", exact=False)).to_be_visible(timeout=MS)
    expect(main.locator('[data-testid="stCheckbox"]').filter(
        has_text="gt_error")).to_have_count(1, timeout=MS)
    state = review.load_state(review.sidecar_for(bench / "ground_truth.json"))
    assert [(t.query_id, t.source, sorted(tags)) for t, tags in state.tags.items()] \
        == [(query, "gt", ["gt_error"])]
    shoot(one, tmp_path, "gallery_tagged.png")
    # A new free tag becomes a filter option at once (the tiles are a fragment; the
    # filters above them are redrawn after a new tag).
    _check_tile(one, 2)
    new_tag = main.locator('[data-testid="stTextInput"]').filter(
        has=one.get_by_text("…or a new tag", exact=True)).locator("input")
    new_tag.fill("barge")
    new_tag.press("Enter")
    one.wait_for_selector(IDLE, timeout=MS)
    main.get_by_role("button", name="Tag 1 object").click()
    one.wait_for_selector(IDLE, timeout=MS)
    expect(main.locator('[data-testid="stCheckbox"]').filter(
        has_text="barge")).to_have_count(1, timeout=MS)
    main.locator('[data-testid="stMultiSelect"]').filter(
        has=one.get_by_text("Review tag", exact=True)).locator("input").click()
    expect(one.get_by_role("option", name="barge")).to_be_visible(timeout=MS)
    one.keyboard.press("Escape")
    two = new_page(1500, 1900)
    two.goto(f"{link}&grtag=gt_error")
    settle(two, "tiles · showing 1–")
    main2 = two.locator('[data-testid="stMain"]')
    expect(main2.locator('[data-testid="stCheckbox"]').filter(
        has_text="gt_error")).to_have_count(1, timeout=MS)
    links = main2.locator("a", has_text="↗")
    hrefs = [links.nth(i).get_attribute("href") or "" for i in range(links.count())]
    assert hrefs and {dict(parse_qsl(urlsplit(h).query))["q"] for h in hrefs} == {query}
    assert two.locator('[data-testid="stException"]').count() == 0


def test_annotation_page_and_query_form_slice(
        harbour_server: Server, new_page: Callable[..., Page], tmp_path: Path) -> None:
    page = new_page(1500, 1400)
    page.goto(f"{harbour_server.url}/Query_explorer?sub=strong_localiser&q=ov_000001")
    settle(page, "Same object in other tasks")
    href = page.get_by_role("link", name="Same object in other tasks ↗").get_attribute(
        "href") or ""
    assert urlsplit(href).path == "/Annotation"
    page.goto(href)
    settle(page, "Where it fails")
    main = page.locator('[data-testid="stMain"]')
    for label in ("Open vocabulary", "Referring", "Reasoning"):
        expect(main.get_by_role("heading", name=label)).to_be_visible(timeout=MS)
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMain] "
        "[data-testid=stImage] img')].every(i => i.complete && i.naturalWidth > 0)",
        timeout=MS)
    shoot(page, tmp_path, "annotation.png")
    page.goto(f"{harbour_server.url}/Slices?sub=strong_localiser")
    settle(page, "slices of")
    box = page.locator('[data-testid="stSelectbox"]').filter(
        has=page.get_by_text("Slice by", exact=True))
    box.locator("input").click()
    page.get_by_role("option", name="same target, query form (all three tasks)").click()
    page.wait_for_selector(IDLE, timeout=MS)
    settle(page, "3 slices of")
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=MS)
    shoot(page, tmp_path, "slices_query_form.png")
    assert page.locator('[data-testid="stException"]').count() == 0
