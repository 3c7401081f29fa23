"""AppTest of the Overview's click-throughs (issue 14): every failure tag's shortcut, the
per-category table's rows, the weakest-categories bars and the confusion matrix's cells open
the explorer filtered to what was clicked. A click is a selection in the element's state
(what the browser sends; tests/browser/test_browser_links.py clicks a real cell in Chromium)."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, goto, write_dataset
from streamlit.testing.v1 import AppTest

EXPLORER = "pages/Query_explorer.py"
TIMEOUT = 120

pytestmark = pytest.mark.usefixtures("fresh_caches")

# tests/app_fixtures.py, model_a on the open-vocabulary task, one query per failure tag:
# ov_000001 ok, ov_000002 hallucination, ov_000003 poor localisation, ov_000004 true
# negative (ok), ov_000005 duplicates, ov_000006 miss.
TAGGED = {"hallucination": ["ov_000002"], "poor localisation": ["ov_000003"],
          "duplicates": ["ov_000005"], "miss": ["ov_000006"]}
UNUSED = ["wrong object", "over-count", "under-count"]


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def _shown(at: AppTest) -> list[str]:
    """The explorer's query table (the only data frame above the viewer)."""
    assert at.title[0].value == "Query explorer"
    return list(at.dataframe[0].value["query_id"])


def _by_category(ds: Dataset) -> dict[str, list[str]]:
    """The unfiltered explorer's queries per category column, read from its table."""
    at = app_on(ds, TIMEOUT)
    goto(at, EXPLORER)
    frame = at.run().dataframe[0].value
    return {c: sorted(frame.loc[frame["category"] == c, "query_id"]) for c in frame["category"]}


@pytest.mark.parametrize("tag", sorted(TAGGED))
def test_every_failure_tag_has_its_shortcut(ds: Dataset, tag: str) -> None:
    at = app_on(ds, TIMEOUT).run()
    assert_ok(at)
    buttons = {b.label: b for b in at.button}
    for unused in UNUSED:  # shown (every tag has one), disabled: no query has it
        assert buttons[f"0 × {unused} →"].disabled
    button = buttons[f"{len(TAGGED[tag])} × {tag} →"]
    assert not button.disabled
    button.click().run()
    assert_ok(at)
    assert at.session_state["flt_failures"] == [tag]
    assert _shown(at) == TAGGED[tag]


def test_the_ok_tag_has_its_shortcut_too(ds: Dataset) -> None:
    """Issue 49: the tags' buttons are their table (no data grid on the first screen), so
    "ok", which only the table's row opened, has its button: ov_000001 and ov_000004."""
    at = app_on(ds, TIMEOUT).run()
    assert_ok(at)
    assert "tag_table" not in {d.key for d in at.dataframe}
    (button,) = [b for b in at.button if b.label == "2 × ok →"]
    button.click().run()
    assert_ok(at)
    assert at.session_state["flt_failures"] == ["ok"]
    assert _shown(at) == ["ov_000001", "ov_000004"]


@pytest.mark.parametrize("category", ["bridge", "ship", "storage tank"])
def test_a_category_row_opens_its_queries(ds: Dataset, category: str) -> None:
    expected = _by_category(ds)[category]
    at = app_on(ds, TIMEOUT).run()
    at.session_state["_w_categories_open"] = True  # its lazy expander opened (issue 49)
    at.run()
    rows = list(at.dataframe(key="cat_table").value["category"])
    at.session_state["cat_table"] = {"selection": {"rows": [rows.index(category)],
                                                   "columns": []}}
    at.run()
    assert_ok(at)
    assert at.session_state["flt_categories"] == [category]
    assert sorted(_shown(at)) == expected


def _point(**point: object) -> dict[str, object]:
    return {"selection": {"points": [point], "point_indices": [0], "box": [], "lasso": []}}


def _charts(ds: Dataset) -> AppTest:
    """The Overview with its "Charts" tab opened (what a click on the tab sends): the
    first screen draws no chart (issue 49), the tab draws the clickable ones."""
    at = app_on(ds, TIMEOUT).run()
    assert not at.get("plotly_chart")
    at.session_state["overview_tab"] = "Charts"
    at.run()
    assert_ok(at)
    assert {c.key for c in at.get("plotly_chart")} >= {"cm", "weak"}
    return at


def test_the_first_screen_shows_the_numbers_without_a_chart(ds: Dataset) -> None:
    """Issue 49: the first screen is the numbers (the confusion matrix's counts as a table,
    with their explorer buttons, the failure tags' buttons), no plotly chart and no data grid
    (the per-category table is one click away, in a lazy expander).
    model_a: 3 TP, 1 FN of the 4 positives; 1 FP, 1 TN of the 2 negatives."""
    at = app_on(ds, TIMEOUT).run()
    assert_ok(at)
    assert not at.get("plotly_chart")
    assert "Presence confusion matrix" in [h.value for h in at.subheader]
    table = next(m.value for m in at.markdown if "predicted present" in m.value)
    assert "| GT present (positive) | TP **3** (75.0%) | FN **1** (25.0%) |" in table
    assert "| GT absent (negative) | FP **1** (50.0%) | TN **1** (50.0%) |" in table
    labels = {b.label for b in at.button}
    assert {"Show 3 true positives →", "Show 1 false negatives →", "Show 1 false positives →",
            "Show 1 true negatives →", "Show 4 failed queries →"} <= labels
    assert "2 × ok →" in labels
    # No data grid either: the per-category table waits in its lazy expander.
    assert not at.dataframe
    assert any(e.label.startswith("The 3 categories' table") for e in at.expander)


def test_a_weakest_category_bar_opens_its_queries(ds: Dataset) -> None:
    expected = _by_category(ds)["ship"]
    at = _charts(ds)
    at.session_state["weak"] = _point(x=0.0, y="ship", customdata="ship", curve_number=0,
                                      point_number=0, point_index=0)
    at.run()
    assert_ok(at)
    assert at.session_state["flt_categories"] == ["ship"]
    assert sorted(_shown(at)) == expected


@pytest.mark.parametrize(("outcome", "expected"), [
    # model_a: ov_000002 a box on a negative (FP), ov_000004 none (TN), ov_000006 none on
    # a positive (FN), ov_000001/3/5 boxes on positives (TP).
    ("FP", ["ov_000002"]), ("TN", ["ov_000004"]), ("FN", ["ov_000006"]),
    ("TP", ["ov_000001", "ov_000003", "ov_000005"])])
def test_a_confusion_cell_opens_its_outcome(ds: Dataset, outcome: str,
                                            expected: list[str]) -> None:
    at = _charts(ds)
    at.session_state["cm"] = _point(x="predicted present", y="GT present (positive)",
                                    customdata=outcome, curve_number=1, point_number=0,
                                    point_index=0)
    at.run()
    assert_ok(at)
    assert at.session_state["flt_outcomes"] == [outcome]
    assert sorted(_shown(at)) == expected


def test_a_selection_outside_the_data_stays_on_the_overview(ds: Dataset) -> None:
    at = _charts(ds)
    at.session_state["weak"] = _point(customdata="no such category", y="x")
    at.run()
    assert_ok(at)
    assert at.title[0].value.startswith("OVEarth Inspector")
