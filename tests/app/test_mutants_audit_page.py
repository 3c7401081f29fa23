"""Rules of the Audit page (pages/Audit.py, pages/common/audit_data.py and audit_views.py)
stated on the functions that hold them, in-process, without AppTest (issue 47): what the
caption counts, which suspects are confirmed, when a written cleaned ground truth is still
the one of the confirmations, how a suspect's fix, votes and rank change are written, and
that text from the files (query ids, categories, submission names) reaches the page's
Markdown as text. The Markdown reference is markdown-it-py (CommonMark), not Streamlit's
renderer: a token it parses as a link, an image, emphasis or HTML is one a user would see.
tests/app/test_app_audit.py keeps the page's wiring under AppTest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from markdown_tokens import tokens

from ovearth_core.audit.fix import suspect_key
from ovearth_core.options import Options
from pages.common import audit_data, audit_views, state

HOSTILE = ["[click](https://evil.example/x)", "![i](https://evil.example/p.png)",
           "<img src=x onerror=alert(1)>", "**bold** _em_", "a `tick` b"]
ACTIVE = {"link_open", "image", "html_inline", "html_block", "strong_open", "em_open"}


def _suspect(kind: str = "missing", **extra: Any) -> dict[str, Any]:
    return {"query_id": "q1_plane", "kind": kind, "bbox": [60.4, 149.6, 30.2, 29.7],
            "gt_bbox": [100.0, 150.0, 30.0, 30.0], "category": "plane", "score": 0.876,
            "support": 0.25, "negative": False, "rank": 3, "votes": [], **extra}


def _text_of(markdown: str) -> list[str]:
    """The pieces a reader sees as code spans."""
    return [t.content for t in tokens(markdown) if t.type == "code_inline"]


def test_the_summary_counts_each_kind_in_a_fixed_order_zero_too() -> None:
    """Rule: "N suspects (a missing label, b spurious label, c shifted label, d wrong
    class) from S submissions · D decided": each kind named even when none, counted by its
    own kind. Kills mutants of ``summary`` (kind compared, counts, names, submissions)."""
    suspects = [_suspect("wrong_class"), _suspect("missing"), _suspect("missing"),
                _suspect("shifted")]
    result = {"suspects": suspects, "submissions": [{"name": "a"}, {"name": "b"},
                                                    {"name": "c"}]}
    assert audit_data.summary(result, {"k1": "confirmed"}) == (
        "4 suspects (2 missing label, 0 spurious label, 1 shifted label, 1 wrong class) "
        "from 3 submissions · 1 decided · how the score is made: docs/audit.md")


def test_only_confirmed_suspects_make_the_fix_in_the_suspects_order() -> None:
    """Rule: a suspect is confirmed when its key (:func:`suspect_key`) is decided
    "confirmed"; rejected and undecided ones are not. Kills ``confirmed`` mutants (the
    decision compared, the key looked up)."""
    a, b, c, d = (_suspect("missing", query_id=f"q{i}") for i in range(4))
    decided = {suspect_key(c): "confirmed", suspect_key(b): "rejected",
               suspect_key(a): "confirmed"}
    assert audit_data.confirmed([a, b, c, d], decided) == [a, c]
    assert audit_data.confirmed([a, b], {}) == []


def test_a_written_fix_is_current_only_for_the_same_confirmations() -> None:
    """Rule: the re-ranking shown is that of the confirmations now (same set of keys, in
    any order); one withdrawn or added makes it stale."""
    a, b = _suspect("missing", query_id="qa"), _suspect("spurious", query_id="qb")
    written = audit_data.WhatIf(Path("x.json"), 2, {}, (),
                                tuple(sorted([suspect_key(a), suspect_key(b)])))
    assert audit_data.still_current(written, [b, a])
    assert not audit_data.still_current(written, [a])
    assert not audit_data.still_current(written, [a, b, _suspect("shifted")])


def test_audit_options_change_only_the_modality() -> None:
    options = Options("vocabulary", ("bbox", "segmentation"), iou_threshold=0.7,
                      score_threshold=0.3)
    got = audit_data.audit_options(options, "oriented_bbox")
    assert got.modalities == ("oriented_bbox",)
    assert (got.task, got.iou_threshold, got.score_threshold) == (
        options.task, 0.7, 0.3)


@pytest.mark.parametrize(("kind", "want"), [
    ("missing", "add [60, 150, 30, 30]"), ("spurious", "remove the box"),
    ("shifted", "move to [60, 150, 30, 30]"), ("wrong_class", "relabel as `ship`")])
def test_each_kind_proposes_its_fix(kind: str, want: str) -> None:
    """Rule: missing adds the suspect's box, spurious removes the label, shifted moves it to
    the suspect's box (whole pixels), wrong class relabels as the proposed category."""
    assert audit_views.proposed_fix(_suspect(kind, proposed_category="ship")) == want


def test_the_headline_formats_score_support_and_query_type() -> None:
    head = audit_views.headline(_suspect("spurious"))
    assert head.startswith("**#3 · spurious label** · score 0.88 · support 25%\n\n")
    assert "(positive)" in head
    assert "(negative)" in audit_views.headline(_suspect("spurious", negative=True))
    assert _text_of(head) == ["q1_plane", "plane"]


@pytest.mark.parametrize("text", HOSTILE)
def test_text_from_the_files_reaches_the_headline_as_text(text: str) -> None:
    """Rule (trust boundary): a query id, category or proposed category from the files is
    shown as the text it is: no link, image, emphasis or HTML of its own, the whole of it in
    a code span. Failed before issue 47 on the wrong class's proposed category, written
    into the Markdown as it came (a ``[click](https://...)`` category was a link)."""
    s = _suspect("wrong_class", query_id=text, category=text, proposed_category=text)
    head = audit_views.headline(s)
    assert not [t.type for t in tokens(head) if t.type in ACTIVE - {"strong_open"}]
    assert sum(t.type == "strong_open" for t in tokens(head)) == 1  # the head's own
    assert _text_of(head) == [text, text, text]
    caption = audit_views.votes_caption(dict(s, votes=[{"submission": "a"}]))
    assert not [t.type for t in tokens(caption) if t.type in ACTIVE]
    assert _text_of(caption) == [text]


def test_the_votes_caption_says_how_many_and_under_which_category() -> None:
    votes = [{"submission": "a", "score": 0.9, "confidence": 0.5},
             {"submission": "b", "score": None, "confidence": 0.25}]
    assert audit_views.votes_caption(_suspect("missing")) == "No submission found it."
    assert audit_views.votes_caption(_suspect("missing", votes=votes)) == (
        "2 votes: each submission's raw score and calibrated confidence")
    assert audit_views.votes_caption(
        _suspect("wrong_class", votes=votes, proposed_category="ship")) == (
        "2 votes (under `ship`): each submission's raw score and calibrated confidence")


def test_every_vote_is_a_row_in_its_order_unscored_kept_empty() -> None:
    votes = [{"submission": "z", "score": None, "confidence": 0.25, "bbox": [1, 2, 3, 4]},
             {"submission": "a", "score": 0.9, "confidence": 0.75, "bbox": [0, 0, 1, 1]}]
    assert audit_views.vote_rows(_suspect(votes=votes)) == [
        {"submission": "z", "score": None, "confidence": 0.25},
        {"submission": "a", "score": 0.9, "confidence": 0.75}]


@pytest.mark.parametrize(("n", "want"), [(0, "0 fixes"), (1, "1 fix"), (2, "2 fixes")])
def test_fixes_are_counted_in_words(n: int, want: str) -> None:
    assert audit_views.fixes(n) == want


@pytest.mark.parametrize(("moved", "want"), [(2, "↑2"), (1, "↑1"), (0, "="), (-1, "↓1"),
                                             (-3, "↓3")])
def test_a_rank_change_is_an_arrow_and_the_places(moved: int, want: str) -> None:
    """Rule: ``change`` > 0 moved up (fix.rerank), shown as ↑ and the number of places."""
    assert audit_views.change(moved) == want


def test_the_ranking_table_maps_each_field_to_its_column() -> None:
    ranking = {"metric": "presence_mcc", "rows": [
        {"name": "b", "rank_after": 1, "rank_before": 2, "change": 1, "before": 0.4,
         "after": 0.6},
        {"name": "a", "rank_after": 2, "rank_before": 1, "change": -1, "before": 0.5,
         "after": 0.55}]}
    assert audit_views.ranking_rows(ranking) == [
        {"submission": "b", "rank (cleaned)": 1, "rank (original)": 2, "change": "↑1",
         "original": 0.4, "cleaned": 0.6},
        {"submission": "a", "rank (cleaned)": 2, "rank (original)": 1, "change": "↓1",
         "original": 0.5, "cleaned": 0.55}]


@pytest.mark.parametrize("name", HOSTILE)
def test_the_ranking_caption_names_the_metric_and_the_left_out_as_text(name: str) -> None:
    """Rule: the caption names the metric by its label, and the submissions left out
    (their file names: user text) as text, each in a code span, one comma between them;
    a metric without a label by its key. Kills ``ranking_caption`` mutants 4-6, 13.
    Failed before issue 47: the names were joined into the caption's Markdown as they
    came."""
    from ovearth_core.viz.analysis_figures import LEADERBOARD_METRIC_LABELS

    result = audit_data.WhatIf(Path("x.json"), 1, {"metric": "presence_mcc", "rows": []},
                               (name, "plain"), ())
    caption = audit_views.ranking_caption(result)
    label = LEADERBOARD_METRIC_LABELS["presence_mcc"]
    assert caption.startswith(f"Ranked by {label} on the original and on the cleaned ground "
                              "truth; left out (invalid): ")
    assert not [t.type for t in tokens(caption) if t.type in ACTIVE]
    assert _text_of(caption) == [name, "plain"]
    assert caption.endswith(f"{state.code(name)}, `plain`")  # one comma between names
    unlabelled = audit_data.WhatIf(Path("x.json"), 1, {"metric": "my_metric", "rows": []},
                                   (), ())
    assert audit_views.ranking_caption(unlabelled).startswith("Ranked by my_metric on")
    clean = audit_views.ranking_caption(audit_data.WhatIf(
        Path("x.json"), 1, {"metric": "presence_mcc", "rows": []}, (), ()))
    assert clean == f"Ranked by {label} on the original and on the cleaned ground truth"


def test_decisions_land_in_the_ground_truths_review_sidecar(tmp_path: Path) -> None:
    """Rule (wiring): a decision is recorded in the review sidecar of the ground truth the
    page audits, under the task, and read back by the suspect's key; undo removes it; only
    the suspects asked about are answered."""
    from ovearth_core import review

    gt_path = tmp_path / "bench" / "gt.json"
    gt_path.parent.mkdir()
    gt_path.write_text("{}")
    gt = (str(gt_path), 0, 0, 0, 0)
    a, b = _suspect("missing", query_id="qa"), _suspect("spurious", query_id="qb")
    assert audit_data.sidecar(gt) == review.sidecar_for(gt_path)
    audit_data.decide(gt, "vocabulary", a, "confirmed")
    audit_data.decide(gt, "vocabulary", b, "rejected")
    assert audit_data.decisions(gt, "vocabulary", [a, b]) == {
        suspect_key(a): "confirmed", suspect_key(b): "rejected"}
    assert audit_data.decisions(gt, "vocabulary", [b]) == {suspect_key(b): "rejected"}
    audit_data.decide(gt, "vocabulary", a, None)
    assert audit_data.decisions(gt, "vocabulary", [a, b]) == {suspect_key(b): "rejected"}


def test_bad_input_comes_back_as_problems_never_raised(tmp_path: Path) -> None:
    """Rule: the page shows the audit's problems (naming the file), it never gets a
    traceback: ``audited`` returns them."""
    missing = tmp_path / "nothere.json"
    key = (str(missing), 0, 0, 0, 0)
    got = audit_data.audited.__wrapped__(key, (key, key), Options("vocabulary", ("bbox",)))  # type: ignore[attr-defined]
    assert got.result is None and got.problems
    assert any("nothere.json" in str(p) for p in got.problems)


def test_a_refused_decision_is_kept_for_the_page_never_raised(tmp_path: Path) -> None:
    """Rule: a decision the sidecar refuses (here a folder where its file goes) is not
    raised from the button's callback: its message, naming the file, waits in the session
    for the page to show (``_audit_error``, read by pages/Audit.py). Kills ``decide``'s
    mutants of the key and the message."""
    import streamlit as st

    from ovearth_core import review

    gt_path = tmp_path / "bench" / "gt.json"
    gt_path.parent.mkdir()
    gt_path.write_text("{}")
    review.sidecar_for(gt_path).mkdir(parents=True)
    st.session_state.pop("_audit_error", None)
    audit_data.decide((str(gt_path), 0, 0, 0, 0), "vocabulary", _suspect(), "confirmed")
    message = st.session_state.pop("_audit_error", None)
    assert isinstance(message, str) and "review.jsonl" in message and "folder" in message
