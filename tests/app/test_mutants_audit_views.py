"""The Audit page's two render functions, ``suspect_ui`` and ``what_if_ui``
(pages/common/audit_views.py), called in-process with Streamlit replaced by a recorder
(tests/st_recorder.py) (issue 47: their only tests were AppTest runs, too slow for
mutmut, which left 133 of their mutants untested). Each test states a rule of the card or
of the what-if section: what is drawn where, which button is enabled for which decision
and what a click records, when the cleaned ground truth is written and when its ranking is
shown, and that text from the files (a path, an error quoting a file) reaches the page's
Markdown as text. The text functions they call (``headline``, ``votes_caption``...) have
their own rules in test_mutants_audit_page.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import st_recorder
from markdown_tokens import tokens
from st_recorder import Recorder

from ovearth_core import review
from ovearth_core.audit.fix import suspect_key
from ovearth_core.errors import OVEarthInputError, Problem
from ovearth_core.options import Options
from ovearth_core.viz import audit as picture_
from pages.common import audit_data, audit_views

HOSTILE = "[click](https://evil.example/x) **b** <img src=x onerror=alert(1)> `t`"
HOSTILE_DIR = "[click](evil.example) **b** <img src=x onerror=alert(1)> `t`"  # a Path keeps it
ACTIVE = {"link_open", "image", "html_inline", "html_block", "em_open"}
CAPTION = ("left: the label (green) · right: each submission's vote (blue, brighter when "
           "confident) and the consensus (orange)")
VOTES = [{"submission": "z_model", "score": 0.9, "confidence": 0.75, "bbox": [1, 2, 3, 4]},
         {"submission": "a_model", "score": None, "confidence": 0.25, "bbox": [5, 6, 7, 8]}]


class _Run:
    """What the views read of app.py's run: the ground truth's key, its options, images."""

    def __init__(self, gt: Path, images: Path, task: str = "reasoning") -> None:
        self.gt = (str(gt), 1, 2, 3, 4)
        self.options = Options(task, ("bbox",))
        self.images_dir = images


def _suspect(kind: str = "missing", **extra: Any) -> dict[str, Any]:
    return {"query_id": "q7_ship", "kind": kind, "bbox": [60.4, 149.6, 30.2, 29.7],
            "gt_bbox": [100.0, 150.0, 30.0, 30.0], "category": "ship", "score": 0.5,
            "support": 0.5, "negative": False, "rank": 2, "votes": [], "object": 0, **extra}


def _plain(markdown: str) -> str:
    """What a reader sees of ``markdown``: its text and code spans' text, a line break
    between lines and between blocks (paragraphs, list items)."""
    seen = []
    for t in tokens(markdown):
        if t.type in ("text", "code_inline"):
            seen.append(t.content)
        elif t.type in ("softbreak", "hardbreak", "paragraph_close"):
            seen.append("\n")
    return "".join(seen).strip("\n").replace("\u2060", "")


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    return st_recorder.install(monkeypatch, audit_views)


@pytest.fixture
def pictures(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """``audit_data.suspect_picture`` replaced: the arguments it was called with; it returns
    an array standing for the picture."""
    asked: list[tuple[Any, ...]] = []

    def fake(images_dir: Path, suspect: dict[str, Any]) -> np.ndarray:
        asked.append((images_dir, suspect))
        return np.full((2, 3, 3), len(asked), dtype=np.uint8)

    monkeypatch.setattr(audit_data, "suspect_picture", fake)
    return asked


def _legend_names_the_colours_drawn(caption: str) -> None:
    """The legend names the colours viz.audit draws with (their dominant channels): the
    label green, the votes blue, the consensus orange."""
    def hue(rgb: tuple[int, int, int]) -> str:
        r, g, b = rgb
        if g > r and g > b:
            return "green"
        if b > r and b > g:
            return "blue"
        return "orange" if r > g > b else "?"

    assert hue(picture_.GT_COLOUR) == "green" and "the label (green)" in caption
    assert hue(picture_.VOTE_COLOUR) == "blue" and "vote (blue" in caption
    assert hue(picture_.CONSENSUS_COLOUR) == "orange" and "consensus (orange)" in caption


# ---- one suspect's card ----------------------------------------------------------------

def test_a_card_shows_the_picture_left_and_the_headline_and_votes_right(
        page: Recorder, pictures: list[tuple[Any, ...]], tmp_path: Path) -> None:
    """Rule: a suspect's card is one bordered container, two columns 3:2; the left holds
    the suspect's picture (of the run's images folder) with the legend of its colours; the
    right the headline (Markdown), the votes caption, then every vote as a table row (as
    tall as its rows), then the three decision buttons. Kills the mutants of the container,
    the columns, the picture's arguments and caption, the texts' placement and the
    table's options."""
    run = _Run(tmp_path / "gt.json", tmp_path / "imgs")
    s = _suspect("wrong_class", votes=VOTES, proposed_category="plane")
    audit_views.suspect_ui(run, s, None)
    assert pictures == [(tmp_path / "imgs", s)]
    first = page.calls[0]
    assert (first.where, first.name, first.kwargs) == ((), "container", {"border": True})
    assert [(c.where, c.args) for c in page.named("columns")] == [
        (("container",), ([3, 2],)), (("container", "col1"), (3,))]
    (image,) = page.named("image")
    assert image.where == ("container", "col0") and image.first.tolist() == np.full(
        (2, 3, 3), 1).tolist()
    assert image.kwargs == {"caption": CAPTION}
    _legend_names_the_colours_drawn(CAPTION)
    right = [(c.name, c.first) for c in page.calls if c.where == ("container", "col1")]
    assert right == [("markdown", audit_views.headline(s)),
                     ("caption", audit_views.votes_caption(s)),
                     ("dataframe", audit_views.vote_rows(s)), ("columns", 3)]
    (table,) = page.named("dataframe")
    assert [r["submission"] for r in table.first] == ["z_model", "a_model"]  # every vote
    assert table.kwargs == {"hide_index": True, "height": "content"}


def test_a_suspect_without_votes_has_no_table(page: Recorder,
                                              pictures: list[tuple[Any, ...]],
                                              tmp_path: Path) -> None:
    """Rule: no vote, no table (the caption says no submission found it)."""
    audit_views.suspect_ui(_Run(tmp_path / "gt.json", tmp_path), _suspect(), None)
    assert page.named("dataframe") == []
    assert page.texts("caption") == ["No submission found it."]


@pytest.mark.parametrize(("decided", "disabled"), [
    (None, [False, False, True]), ("confirmed", [True, False, False]),
    ("rejected", [False, True, False])])
def test_the_button_of_the_current_decision_is_disabled(
        page: Recorder, pictures: list[tuple[Any, ...]], tmp_path: Path, decided: str | None,
        disabled: list[bool]) -> None:
    """Rule: Confirm, Reject and Undo, each in its own column in that order, keyed by the
    decision and the suspect's key (two suspects' buttons never share a key); the one that
    would do what is already decided is disabled (Undo when nothing is decided); a decided
    suspect says so under them (the review sidecar holds it)."""
    s = _suspect(votes=VOTES)
    audit_views.suspect_ui(_Run(tmp_path / "gt.json", tmp_path), s, decided)
    buttons = page.named("button")
    key = suspect_key(s)
    assert [(b.where, b.first, b.kwargs["key"]) for b in buttons] == [
        (("container", "col1", "col0"), "Confirm", f"audit_confirmed_{key}"),
        (("container", "col1", "col1"), "Reject", f"audit_rejected_{key}"),
        (("container", "col1", "col2"), "Undo", f"audit_None_{key}")]
    assert [b.kwargs["disabled"] for b in buttons] == disabled
    last = page.calls[-1]
    if decided:
        assert (last.where, last.name, last.first) == (
            ("container", "col1"), "caption", f"{decided} (review sidecar)")
    else:
        assert last.name == "button"


def test_each_button_records_its_decision_of_this_suspect_in_the_gts_sidecar(
        page: Recorder, pictures: list[tuple[Any, ...]], tmp_path: Path) -> None:
    """Rule (wiring): a click calls ``audit_data.decide`` with the run's ground truth, the
    run's task (here not the default one), the card's suspect and the button's decision:
    Confirm then Reject then Undo leave it confirmed, rejected, then undecided in the
    review sidecar of that ground truth, under that task; another suspect is untouched."""
    gt = tmp_path / "bench" / "gt.json"
    gt.parent.mkdir()
    gt.write_text("{}")
    run = _Run(gt, tmp_path, task="reasoning")
    s, other = _suspect(), _suspect("spurious", query_id="q9")
    audit_views.suspect_ui(run, s, None)
    clicks = {b.first: b.kwargs for b in page.named("button")}
    for label, want in (("Confirm", {suspect_key(s): "confirmed"}),
                        ("Reject", {suspect_key(s): "rejected"}), ("Undo", {})):
        assert clicks[label]["on_click"] is audit_data.decide
        clicks[label]["on_click"](*clicks[label]["args"])
        assert audit_data.decisions(run.gt, "reasoning", [s, other]) == want
        assert audit_data.decisions(run.gt, "vocabulary", [s, other]) == {}
    assert review.sidecar_for(gt).is_file()


# ---- what if the confirmed ones are fixed ----------------------------------------------

def _what_if(path: str, keys: list[dict[str, Any]], fixed: int = 2) -> audit_data.WhatIf:
    ranking = {"metric": "bbox_micro_f1", "rows": [
        {"name": "m1", "rank_after": 1, "rank_before": 2, "change": 1, "before": 0.5,
         "after": 1.0}]}
    return audit_data.WhatIf(Path(path), fixed, ranking, ("bad",),
                             tuple(sorted(suspect_key(s) for s in keys)))


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """``audit_data.what_if`` replaced: its arguments; it returns a result on them."""
    calls: list[tuple[Any, ...]] = []

    def fake(gt: Any, preds: Any, options: Any, confirmed: list[dict[str, Any]]
             ) -> audit_data.WhatIf:
        calls.append((gt, preds, options, confirmed))
        return _what_if("/data/b/.ovearth/exports/cleaned.json", confirmed, len(confirmed))

    monkeypatch.setattr(audit_data, "what_if", fake)
    return calls


PREDS = (("/p/m1.json", 1, 1, 1, 1), ("/p/m2.json", 2, 2, 2, 2))
OPTIONS = Options("referring", ("oriented_bbox",), iou_threshold=0.7)


def test_nothing_confirmed_asks_for_confirmations_and_writes_nothing(
        page: Recorder, asked: list[tuple[Any, ...]], tmp_path: Path) -> None:
    """Rule: with no confirmed suspect the section says how to make the cleaned ground
    truth and offers no button; nothing is written."""
    audit_views.what_if_ui(_Run(tmp_path / "gt.json", tmp_path), PREDS, OPTIONS, [])
    assert [(c.name, c.first) for c in page.calls] == [
        ("header", "What if the confirmed ones are fixed"),
        ("info", "Confirm suspects above: their fixes make the cleaned ground truth.")]
    assert asked == []


@pytest.mark.parametrize(("n", "label"), [
    (1, "Write the cleaned ground truth (1 fix) and re-rank"),
    (2, "Write the cleaned ground truth (2 fixes) and re-rank")])
def test_the_button_counts_the_fixes_and_writes_only_when_clicked(
        page: Recorder, asked: list[tuple[Any, ...]], tmp_path: Path, n: int,
        label: str) -> None:
    """Rule: the button says how many fixes will be written; until it is clicked nothing is
    written and, with no earlier result, nothing else is shown."""
    confirmed = [_suspect(query_id=f"q{i}") for i in range(n)]
    audit_views.what_if_ui(_Run(tmp_path / "gt.json", tmp_path), PREDS, OPTIONS, confirmed)
    assert [(c.name, c.first) for c in page.calls] == [
        ("header", "What if the confirmed ones are fixed"), ("button", label)]
    assert page.named("button")[0].kwargs == {"key": "audit_what_if"}
    assert asked == [] and "_audit_what_if" not in page.session_state


def test_a_click_writes_from_the_runs_files_and_shows_the_path_as_text(
        page: Recorder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Rule (wiring): the click writes the cleaned ground truth from the run's ground truth,
    the folder's submissions, the audit's options and the confirmed suspects, keeps the
    result in the session (it outlives the rerun) and shows: where it was written (the path,
    user text, in a code span: a hostile folder name is no link), how many fixes, the
    ranking's caption and its table (every row, keyed)."""
    run = _Run(tmp_path / "gt.json", tmp_path)
    confirmed = [_suspect(query_id="qa"), _suspect("spurious", query_id="qb")]
    page.answers["audit_what_if"] = True
    asked: list[tuple[Any, ...]] = []

    def hostile(gt: Any, preds: Any, options: Any, conf: list[dict[str, Any]]
                ) -> audit_data.WhatIf:
        asked.append((gt, preds, options, conf))
        return _what_if(f"/data/{HOSTILE_DIR}/cleaned.json", conf)

    monkeypatch.setattr(audit_data, "what_if", hostile)
    audit_views.what_if_ui(run, PREDS, OPTIONS, confirmed)
    assert asked == [(run.gt, PREDS, OPTIONS, confirmed)]
    result = page.session_state["_audit_what_if"]
    assert result.keys == tuple(sorted(suspect_key(s) for s in confirmed))
    (success,) = page.texts("success")
    assert not [t.type for t in tokens(success) if t.type in ACTIVE]
    assert _plain(success) == f"Wrote /data/{HOSTILE_DIR}/cleaned.json (2 fixes)."
    assert [t.content for t in tokens(success) if t.type == "code_inline"] == [
        f"/data/{HOSTILE_DIR}/cleaned.json"]
    assert page.texts("caption") == [audit_views.ranking_caption(result)]
    (table,) = page.named("dataframe")
    assert table.first == audit_views.ranking_rows(result.ranking)
    assert table.kwargs == {"hide_index": True, "key": "audit_ranking", "height": "content"}
    assert page.order() == ["header", "button", "success", "caption", "dataframe"]


def test_the_last_result_stays_shown_while_the_confirmations_are_its_own(
        page: Recorder, asked: list[tuple[Any, ...]], tmp_path: Path) -> None:
    """Rule: a result written earlier is shown again on the next run (not clicked) as long
    as the confirmations are the ones it was written from, in any order; nothing is
    written again."""
    a, b = _suspect(query_id="qa"), _suspect("shifted", query_id="qb")
    page.session_state["_audit_what_if"] = _what_if("/x/cleaned.json", [a, b])
    audit_views.what_if_ui(_Run(tmp_path / "gt.json", tmp_path), PREDS, OPTIONS, [b, a])
    assert asked == []
    assert page.order() == ["header", "button", "success", "caption", "dataframe"]
    assert page.texts("success") == ["Wrote `/x/cleaned.json` (2 fixes)."]


def test_a_result_of_other_confirmations_is_not_shown_as_theirs(
        page: Recorder, asked: list[tuple[Any, ...]], tmp_path: Path) -> None:
    """Rule: when the confirmations changed since the cleaned ground truth was written, its
    ranking is not shown; the section says to write it again."""
    a, b = _suspect(query_id="qa"), _suspect("shifted", query_id="qb")
    page.session_state["_audit_what_if"] = _what_if("/x/cleaned.json", [a, b])
    audit_views.what_if_ui(_Run(tmp_path / "gt.json", tmp_path), PREDS, OPTIONS, [a])
    assert [(c.name, c.first) for c in page.calls[2:]] == [
        ("info", "The confirmations changed since the cleaned ground truth was written: "
                 "write it again to rank on them.")]
    assert asked == []


def test_a_refused_write_is_an_error_shown_as_text_never_raised(
        page: Recorder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Rule: bad input while writing or ranking (an OVEarthInputError naming a file) is
    shown as an error, its text from the files as text (no link, no HTML), never raised;
    nothing is kept as a result, and no earlier result of other confirmations is shown."""
    err = OVEarthInputError([Problem(f"/data/{HOSTILE}.json", "(file)", "a writable file",
                                     "a folder")])

    def refused(*args: Any) -> audit_data.WhatIf:
        raise err

    monkeypatch.setattr(audit_data, "what_if", refused)
    page.answers["audit_what_if"] = True
    audit_views.what_if_ui(_Run(tmp_path / "gt.json", tmp_path), PREDS, OPTIONS, [_suspect()])
    (shown,) = page.texts("error")
    assert not [t.type for t in tokens(shown) if t.type in ACTIVE | {"strong_open"}]
    # the message's lines (format_problems: a head, then one list item per problem)
    assert _plain(shown).splitlines() == [line.removeprefix("  - ")
                                          for line in str(err).splitlines()]
    assert "_audit_what_if" not in page.session_state
    assert page.order() == ["header", "button", "error"]
