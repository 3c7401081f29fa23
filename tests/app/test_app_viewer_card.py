"""The explorer's viewer card (issue 28): the query's position, picture, notes, metrics,
facts and the view's URL are one element (``pages/common/viewer_card.py``) whose content
changes per query; the navigator's two buttons are in it too (issue 39: a click is the
card's trigger ``nav``, no ``st.button``), and its pictures travel in its data, each
sent once per session by its content address."""

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
    card_buttons,
    card_html,
    card_params,
    goto,
    press,
    trigger,
    viewer_card,
    write_dataset,
)

EXPLORER = "pages/Query_explorer.py"

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def _open(ds: Dataset | None = None, **state: object):
    at = app_on(ds, **state)
    goto(at, EXPLORER)
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
        # The position is not drawn a second time outside the card, nor are the buttons.
        assert not [c for c in at.caption if "in the filtered list" in c.value]
        assert not [b for b in at.button if b.label in ("Next ▶", "◀ Previous")]
        # The card's buttons flank its position line; no "Previous" on the first query.
        assert re.search(r"<div class='ov-bar'><button [^>]*data-go='prev'[^>]*>◀ Previous"
                         r"</button><p class='ov-nav'>[^<]*</p><button [^>]*data-go='next'"
                         r"[^>]*>Next ▶</button></div>", card_html(at))
        assert card_buttons(card_html(at)) == {"prev": step > 0, "next": True}
        press(at, "next")
        assert_ok(at)
    press(at, "prev")
    assert _heading(at) == ids[2] and card_params(at)["q"] == ids[2]


def test_no_next_on_the_last_query_and_the_trigger_is_ignored_there(ds: Dataset) -> None:
    """The ends, as the old buttons' disabled state: on the last query "Next ▶" is
    disabled in the card (and in the cards sent ahead, the one before it opens it so); a
    "next" trigger that comes all the same (a click before the card changed) selects no
    other query."""
    at = _open(ds)
    ids = list(at.dataframe[0].value["query_id"])
    at.session_state["selected"] = {"vocabulary": ids[-2]}
    at.run()
    _drawn_ahead()
    at.run()
    ahead = viewer_card(at)["ahead"]
    if "next" in ahead:
        assert card_buttons(ahead["next"]["html"]) == {"prev": True, "next": False}
    press(at, "next")
    assert _heading(at) == ids[-1]
    assert card_buttons(card_html(at)) == {"prev": True, "next": False}
    press(at, "next", enabled=False)
    assert_ok(at)
    assert _heading(at) == ids[-1] and at.session_state["selected"]["vocabulary"] == ids[-1]


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
    goto(fresh, EXPLORER)
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


# The cards sent ahead: "Next" and "Previous" put them in place at the click, before the
# rerun (viewer_card.js); they must be exactly the cards the rerun then sends.

MISSING = "ov_000006"  # the test data's query whose image file is missing


def _drawn_ahead() -> None:
    """Wait until the background worker has drawn every query it was handed."""
    from pages.common import viewer

    viewer._PREFETCH.submit(lambda: None).result(timeout=60)


def _press(at, go: str) -> None:
    press(at, go)
    assert_ok(at)


@pytest.mark.parametrize("options", [
    {},
    # Non-default view options: each must reach the card sent ahead as it reaches the card.
    {"view_zoom": "whole image", "view_labels": True, "view_opacity": 0.8,
     "view_pixel_mode": True, "view_layers": ["GT HBB", "pred HBB", "GT mask"]},
])
def test_the_card_sent_ahead_is_the_card_the_button_opens(ds: Dataset, monkeypatch,
                                                          options: dict) -> None:
    from app_fixtures import record_pictures

    served = record_pictures(monkeypatch)
    at = _open(ds, **options)
    ids = list(at.dataframe[0].value["query_id"])
    # Two queries in a row whose images are there (MISSING's is not: see the next test).
    k = next(k for k in range(len(ids) - 1) if MISSING not in ids[k:k + 2])
    at.session_state["selected"] = {"vocabulary": ids[k]}
    at.run()
    _drawn_ahead()
    at.run()  # the same query again, now with the next one drawn
    first = viewer_card(at)
    assert _heading(at) == ids[k]
    assert set(first["ahead"]) == ({"next"} if k == 0 or ids[k - 1] == MISSING
                                   else {"next", "prev"})
    ahead = first["ahead"]["next"]
    assert f"<code>{ids[k + 1]}</code>" in ahead["html"]
    _press(at, "next")
    second = viewer_card(at)
    assert _heading(at) == ids[k + 1]
    # What the click put in place is what the rerun sends: same HTML (pictures at the same
    # content-addressed URLs), same digest, same address.
    assert (second["html"], second["digest"], second["url"]) == (
        ahead["html"], ahead["digest"], ahead["url"])
    # Its pictures went to the browser with the card sent ahead (by their addresses, the
    # same in the rerun's card), and none a second time with the rerun's.
    names = re.findall(r"data-pic='([0-9a-f]+)'", ahead["html"])
    assert len(names) == 2 and set(names) <= set(first["pictures"])
    assert not set(names) & set(second["pictures"])
    assert set(second["pictures"]) <= set(served) and "src=" not in second["html"]
    # "Previous" from here opens the first card, as it was.
    back = second["ahead"]["prev"]
    assert (back["html"], back["url"]) == (first["html"], first["url"])
    _press(at, "prev")
    assert (card_html(at), viewer_card(at)["url"]) == (back["html"], back["url"])


def test_no_card_is_sent_ahead_of_an_image_that_could_not_be_read(ds: Dataset) -> None:
    """Its notice is said outside the card: the rerun shows it, not the click."""
    at = _open(ds)
    ids = list(at.dataframe[0].value["query_id"])
    before = ids.index(MISSING) - 1
    assert before >= 0, "the test data put the query with the missing image first"
    at.session_state["selected"] = {"vocabulary": ids[before]}
    at.run()
    _drawn_ahead()
    at.run()
    assert "next" not in viewer_card(at)["ahead"]
    _press(at, "next")
    assert _heading(at) == MISSING
    assert any("image file not found" in i.value for i in at.info)
    # Nor from it: its notice would stay beside the next query's card until the rerun.
    _drawn_ahead()
    at.run()
    assert viewer_card(at)["ahead"] == {}


def test_a_card_not_drawn_yet_is_not_sent_ahead_nor_drawn_for_it(ds: Dataset,
                                                                 monkeypatch) -> None:
    """The page never waits to draw a card ahead: with the background worker idle (its
    queue dropped) no "next" card is sent, and the rerun still opens the next query."""
    from pages.common import viewer

    monkeypatch.setattr(viewer._PREFETCH, "submit", lambda *a, **k: None)
    drawn = []
    real = viewer._drawn

    def counting(*args, **kwargs):
        drawn.append(args[2])
        return real(*args, **kwargs)
    monkeypatch.setattr(viewer, "_drawn", counting)
    at = _open(ds)
    ids = list(at.dataframe[0].value["query_id"])
    k = next(k for k in range(len(ids) - 1) if MISSING not in ids[k:k + 2])
    at.session_state["selected"] = {"vocabulary": ids[k]}
    at.run()
    assert "next" not in viewer_card(at)["ahead"]
    drawn.clear()
    _press(at, "next")
    assert _heading(at) == ids[k + 1]
    assert set(viewer_card(at)["ahead"]) == {"prev"}  # drawn for the page just before
    assert drawn == [ids[k + 1]]  # nothing drawn for the cards ahead


def test_no_card_is_sent_ahead_of_the_interactive_view(ds: Dataset) -> None:
    at = _open(ds, view_interactive=True)
    _drawn_ahead()
    at.run()
    _press(at, "next")
    assert viewer_card(at)["ahead"] == {}


def test_a_query_with_a_picked_box_is_not_sent_ahead(ds: Dataset) -> None:
    """"Previous" back to a query whose box was picked reopens it zoomed to that box: its
    card is drawn by the rerun, not sent ahead with the zoom setting's view."""
    at = _open(ds)
    ids = list(at.dataframe[0].value["query_id"])
    k = next(k for k in range(len(ids) - 1) if MISSING not in ids[k:k + 2])
    at.session_state["selected"] = {"vocabulary": ids[k]}
    at.run()
    picker = at.selectbox(key="_w_objects")
    picker.set_value(0).run()
    assert_ok(at)
    zoomed = card_html(at)
    _drawn_ahead()
    at.run()
    assert viewer_card(at)["ahead"] == {}  # nor from it (the picked box's notes stay)
    _press(at, "next")
    assert _heading(at) == ids[k + 1]
    assert "prev" not in viewer_card(at)["ahead"]
    _press(at, "prev")
    assert card_html(at) == zoomed  # the box's view, as before


def _named(card: dict) -> set[str]:
    """The picture addresses a card's HTML and its cards ahead name."""
    return {a for c in [card, *card["ahead"].values()]
            for a in re.findall(r"data-pic='([0-9a-f]+)'", c["html"])}


def test_each_picture_is_sent_once_until_the_page_may_have_dropped_it(
        ds: Dataset, monkeypatch) -> None:
    """A rerun of the same query sends no picture again; the card's ``missing`` trigger
    (the page lacks one) has every picture named sent again; a query seen long ago (more
    pictures since than the page is sure to keep: ``HELD_MAX``) has its pictures sent
    again."""
    from pages.common import viewer_card as card_module

    at = _open(ds)
    ids = list(at.dataframe[0].value["query_id"])
    first = viewer_card(at)
    assert _named(first) and _named(first) <= set(first["pictures"])
    at.run()
    assert viewer_card(at)["pictures"] == {}  # the page has them
    trigger(at, "missing", True)
    assert_ok(at)
    again = viewer_card(at)
    assert set(again["pictures"]) == _named(again) and _heading(at) == ids[0]
    monkeypatch.setattr(card_module, "HELD_MAX", 4)  # two queries' pictures
    shown = [k for k in range(len(ids)) if ids[k] != MISSING]
    for k in shown[1:4]:
        at.session_state["selected"] = {"vocabulary": ids[k]}
        at.run()
        assert_ok(at)
    at.session_state["selected"] = {"vocabulary": ids[shown[0]]}
    at.run()
    back = viewer_card(at)
    view = re.search(r"class='ov-view' data-pic='([0-9a-f]+)'", back["html"]).group(1)
    assert view in first["pictures"] and view in back["pictures"]  # the same, sent again
