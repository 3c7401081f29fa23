"""The explorer's viewer card (issue 28): the query's position, picture, notes, metrics,
facts and the view's URL are one element (``pages/common/viewer_card.py``) whose content
changes per query; the navigator around it holds only the two buttons."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlparse

import pytest
from app_fixtures import (
    Dataset,
    app_on,
    assert_ok,
    card_html,
    card_params,
    viewer_card,
    write_dataset,
)

EXPLORER = "pages/1_Query_explorer.py"

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def _open(ds: Dataset | None = None, **state: object):
    at = app_on(ds, **state)
    at.switch_page(EXPLORER)
    at.run()
    assert_ok(at)
    return at


def _heading(at) -> str:
    return re.search(r"<h3><code>([^<]+)</code></h3>", card_html(at)).group(1)


def _position(at) -> str:
    return html.unescape(re.search(r"<p class='ov-nav'>([^<]*)</p>", card_html(at)).group(1))


def test_next_changes_the_card_its_position_line_and_its_url(ds: Dataset) -> None:
    at = _open(ds)
    table = at.dataframe[0].value  # the filtered list, worst first: the reference order
    ids, texts = list(table["query_id"]), list(table["text"])
    for step in range(3):
        q = ids[step]
        assert _heading(at) == q
        # "Query i of n · id — text [failure]", written out here from the table.
        assert _position(at).startswith(
            f"Query {step + 1} of {len(ids)} in the filtered list · {q} — {texts[step][:60]} [")
        assert card_params(at)["q"] == q
        assert at.session_state["selected"]["vocabulary"] == q
        # The position is not drawn a second time outside the card.
        assert not [c for c in at.caption if "in the filtered list" in c.value]
        next(b for b in at.button if b.label == "Next ▶").click().run()
        assert_ok(at)
    back = next(b for b in at.button if b.label == "◀ Previous")
    back.click().run()
    assert _heading(at) == ids[2] and card_params(at)["q"] == ids[2]


def test_the_url_the_card_writes_is_the_views_link(ds: Dataset) -> None:
    """The address bar (written by the card) and the link the "Link" switch shows name
    the same view; the link opened in a new session shows that query."""
    at = _open(ds, selected={"vocabulary": "ov_000003"}, view_layers=["GT HBB"])
    at.toggle(key="_w_view_link").set_value(True).run()
    assert_ok(at)
    shown = next(c.value for c in at.code if "Query_explorer" in c.value)
    link = dict(parse_qsl(urlparse(shown).query, keep_blank_values=True))
    assert card_params(at) == link
    assert viewer_card(at)["url"].startswith("?")
    assert link["q"] == "ov_000003"
    fresh = app_on(None)
    fresh.switch_page(EXPLORER)
    for key, value in card_params(at).items():
        fresh.query_params[key] = value
    fresh.run()
    assert_ok(fresh)
    assert _heading(fresh) == "ov_000003"
    assert fresh.session_state["view_layers"] == ["GT HBB"]


def test_the_interactive_view_keeps_the_position_line_and_the_url(ds: Dataset) -> None:
    at = _open(ds, selected={"vocabulary": "ov_000003"}, view_interactive=True)
    assert at.get("plotly_chart")
    assert "class='ov-card'" not in card_html(at)  # the figure, not the static picture
    assert _position(at).startswith("Query ") and "ov_000003" in _position(at)
    assert card_params(at)["q"] == "ov_000003"
