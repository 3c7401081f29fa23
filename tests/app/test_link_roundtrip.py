"""State -> link -> state is the identity (issue 27).

A view's link (``state.link_params`` with the parameters the pages add: the explorer's
``q`` and ``zoom``, the gallery's ``g*``, Compare's ``b``, the Annotation page's ``ann``),
encoded as a URL and applied to a fresh session (``state.apply_link``), gives back every
value it carries. The boundary values come first: a range end of 0 or 1 (``iou_lo`` /
``iou_hi``, ``giou_lo`` / ``giou_hi``) must survive (the planted bug: ``if lo and hi:``
dropped a 0). Then a hypothesis property over every value a widget (or a link) can set, and
an AppTest that opens such a link on the explorer and the gallery and checks that the page
writes the same link back to its address bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
from app_fixtures import assert_ok
from app_fixtures import open_page as _open
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ovearth_core.types import MODALITIES
from pages.common import state

APP = str(Path(__file__).resolve().parents[2] / "app.py")
EXPLORER = "pages/Query_explorer.py"
GALLERY = "pages/Gallery.py"
SUBMISSIONS = ("box_detector", "cautious_segmenter", "strong_localiser", "weak_baseline")
DEMO_PREDS = Path("assets") / "demo" / "predictions"

# What the link carries, by session key (the dataset keys are checked separately).
CARRIED = ("task", "auto_modalities", "iou_threshold", "use_score_threshold", "bbox_format",
           "flt_failed_only", "flt_outcomes", "flt_failures", "flt_categories",
           "flt_review_tags", "flt_polarity", "flt_modality", "flt_iou", "flt_text",
           "view_zoom", "gal_selector", "gal_modality", "gal_outcomes", "gal_failures",
           "gal_categories", "gal_sizes", "gal_review_tags", "gal_polarity", "gal_iou",
           "gal_sort", "gal_page", "ann_id", "cmp_b_path", "pred_path", "gt_path",
           "images_dir",
           "ap_hard_negatives", "ap_nms", "ap_aitod")  # issue 50: the AP protocols


def _fresh() -> dict[str, Any]:
    return {**state.defaults(), "_url_applied": True}


def _link_of(ss: dict[str, Any], **page: str) -> dict[str, str]:
    """The link the pages write for session ``ss``, through a real URL query string."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state.st, "session_state", ss)
        params = state.link_params(**state.gallery_params(), **page)
    return dict(parse_qsl(urlencode(params), keep_blank_values=True))


def _apply(params: dict[str, str]) -> dict[str, Any]:
    ss = _fresh()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state.st, "session_state", ss)
        state.apply_link(params)
    return ss


def _round_trip(changes: dict[str, Any], **page: str) -> tuple[dict[str, Any], dict[str, Any]]:
    before = {**_fresh(), **changes}
    after = _apply(_link_of(before, **page))
    return before, after


def _assert_same(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert not after["_link_notes"], after["_link_notes"]
    assert after["_link_error"] is None
    for key in CARRIED:
        a, b = before[key], after[key]
        if isinstance(a, (list, tuple)):
            a, b = list(a), list(b)
        assert b == a, f"{key}: {before[key]!r} became {after[key]!r}"
    if before["use_score_threshold"]:
        assert after["score_threshold"] == before["score_threshold"]
    if not before["auto_modalities"]:
        assert after["modalities"] == [m for m in MODALITIES if m in before["modalities"]]


# --- boundary values -----------------------------------------------------------------

ENDS = [(0.0, 0.0), (0.0, 0.5), (0.0, 1.0), (0.5, 1.0), (1.0, 1.0), (0.05, 0.95),
        (0.0, 0.05), (0.95, 1.0)]


@pytest.mark.parametrize("key", ["flt_iou", "gal_iou"])
@pytest.mark.parametrize(("lo", "hi"), ENDS)
def test_a_range_end_of_0_or_1_survives_the_link(key: str, lo: float, hi: float) -> None:
    before, after = _round_trip({key: (lo, hi)})
    assert tuple(after[key]) == (lo, hi)
    _assert_same(before, after)


@pytest.mark.parametrize(("names", "key"), [(("iou_lo", "iou_hi"), "flt_iou"),
                                            (("giou_lo", "giou_hi"), "gal_iou")])
@pytest.mark.parametrize(("lo", "hi", "expected"), [
    ("0", "0", (0.0, 0.0)), ("0", "1", (0.0, 1.0)), ("1", "1", (1.0, 1.0)),
    ("0", "0.5", (0.0, 0.5)), ("0.5", "1", (0.5, 1.0)), ("0.0", "0.0", (0.0, 0.0)),
    ("0", None, (0.0, 1.0)), (None, "0", (0.0, 0.0)), ("1", None, (1.0, 1.0)),
    (None, "1", (0.0, 1.0)), ("-0", "0", (0.0, 0.0))])
def test_a_link_with_a_range_end_of_0_or_1_applies_it(names: tuple[str, str], key: str,
                                                      lo: str | None, hi: str | None,
                                                      expected: tuple[float, float]) -> None:
    """Hand-written links (the reference rule: a missing end is 0 or 1; 0 is a value)."""
    params = {n: v for n, v in zip(names, (lo, hi), strict=True) if v is not None}
    after = _apply(params)
    assert tuple(after[key]) == expected
    assert not after["_link_notes"]


@pytest.mark.parametrize("changes", [
    {"use_score_threshold": True, "score_threshold": 0.0},
    {"use_score_threshold": True, "score_threshold": 1.0},
    {"iou_threshold": 0.05}, {"iou_threshold": 1.0},
    {"gal_page": 1}, {"gal_page": state.MAX_PAGE},
    {"auto_modalities": False, "modalities": ["segmentation"]},
    {"flt_failed_only": True}, {"flt_text": "0"}, {"ann_id": "0"},
], ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_boundary_option_values_survive_the_link(changes: dict[str, Any]) -> None:
    before, after = _round_trip(changes, ann=changes.get("ann_id", ""))
    _assert_same(before, after)


def test_a_score_threshold_of_0_is_not_no_threshold() -> None:
    """``score=0`` keeps every box that has a score, and requires every box to have one:
    it is an option of its own, not the default."""
    after = _apply({"score": "0"})
    assert after["use_score_threshold"] is True and after["score_threshold"] == 0.0


# --- every value the widgets can set ---------------------------------------------------

STEP = st.integers(0, 20).map(lambda i: round(i * 0.05, 2))  # the sliders' grid


@st.composite
def _ranges(draw: st.DrawFn) -> tuple[float, float]:
    a, b = draw(STEP), draw(STEP)
    return (min(a, b), max(a, b))


WORD = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1,
               max_size=12)  # commas included: "boat, small" is a category
LISTS = st.lists(WORD, max_size=3, unique=True)
FREE_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20)


@st.composite
def _sessions(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, str]]:
    auto = draw(st.booleans())
    mods = draw(st.lists(st.sampled_from(MODALITIES), min_size=1, unique=True))
    use_score = draw(st.booleans())
    changes: dict[str, Any] = {
        "task": draw(st.sampled_from(state.TASKS)),
        "auto_modalities": auto, "modalities": mods,
        "iou_threshold": draw(st.sampled_from(state.IOU_CHOICES)),
        "use_score_threshold": use_score,
        "score_threshold": draw(st.floats(0.0, 1.0)),
        "bbox_format": draw(st.sampled_from(state.BBOX_FORMATS)),
        "pred_path": str(DEMO_PREDS / f"{draw(st.sampled_from(SUBMISSIONS))}.json"),
        "cmp_b_path": draw(st.sampled_from(["", *(str(DEMO_PREDS / f"{s}.json")
                                                  for s in SUBMISSIONS)])),
        "flt_failed_only": draw(st.booleans()),
        "flt_outcomes": draw(LISTS), "flt_failures": draw(LISTS),
        "flt_categories": draw(LISTS), "flt_review_tags": draw(LISTS),
        "flt_polarity": draw(st.sampled_from(["all", "positive", "negative"])),
        "flt_modality": draw(st.sampled_from(["any", *MODALITIES])),
        "flt_iou": draw(_ranges()), "flt_text": draw(FREE_TEXT),
        "view_zoom": draw(st.sampled_from(list(state.ZOOM_TARGETS))),
        "gal_selector": draw(st.sampled_from(list(state.GALLERY_SELECTORS.values()))),
        "gal_modality": draw(st.sampled_from(["bbox", "oriented_bbox"])),
        "gal_outcomes": draw(LISTS), "gal_failures": draw(LISTS),
        "gal_categories": draw(LISTS), "gal_sizes": draw(LISTS),
        "gal_review_tags": draw(LISTS),
        "gal_polarity": draw(st.sampled_from(["all", "positive", "negative"])),
        "gal_iou": draw(_ranges()),
        "gal_sort": draw(st.sampled_from(list(state.GALLERY_SORTS.values()))),
        "gal_page": draw(st.integers(1, state.MAX_PAGE)),
        "ann_id": draw(st.one_of(st.just(""), WORD)),
        "ap_hard_negatives": draw(st.booleans()), "ap_nms": draw(st.booleans()),
        "ap_aitod": draw(st.booleans()),
    }
    page: dict[str, str] = {"zoom": changes["view_zoom"]}
    query = draw(st.one_of(st.none(), WORD))
    if query is not None:
        page["q"] = query
    if changes["cmp_b_path"]:
        page["b"] = changes["cmp_b_path"]
    if changes["ann_id"]:
        page["ann"] = changes["ann_id"]
    return changes, page


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sessions())
def test_state_link_state_is_the_identity(drawn: tuple[dict[str, Any], dict[str, str]]) -> None:
    changes, page = drawn
    before, after = _round_trip(changes, **page)
    _assert_same(before, after)
    if "q" in page:
        assert after["selected"] == {before["task"]: page["q"]}
    # And the second link is the first: a link of a linked view is the same link.
    assert _link_of(after, **page) == _link_of(before, **page)


# --- through the pages -----------------------------------------------------------------

@pytest.mark.usefixtures("fresh_caches")
@pytest.mark.parametrize(("page", "params", "key"), [
    (EXPLORER, {"iou_lo": "0", "iou_hi": "0", "mod": "bbox"}, "flt_iou"),
    (GALLERY, {"giou_lo": "0", "giou_hi": "0"}, "gal_iou"),
    (GALLERY, {"giou_lo": "1", "giou_hi": "1", "gsel": "pred"}, "gal_iou"),
])
def test_the_page_keeps_a_zero_range_and_writes_it_back(page: str, params: dict[str, str],
                                                        key: str) -> None:
    at = _open(page, {"data": "assets/demo", "sub": "strong_localiser", **params})
    assert_ok(at)
    assert not [w.value for w in at.warning if "link" in w.value]
    lo, hi = (float(params[n]) for n in params if n.endswith(("iou_lo", "iou_hi")))
    assert tuple(at.session_state[key]) == (lo, hi)
    url = dict(at.query_params)
    for name, value in params.items():
        shown = url[name][0] if isinstance(url[name], list) else url[name]
        assert shown == value or float(shown) == float(value), (name, url)


UNIT = st.floats(0.0, 1.0)


@settings(max_examples=300, deadline=None)
@given(score=UNIT, a=UNIT, b=UNIT, c=UNIT, d=UNIT)
def test_any_number_a_link_gives_is_written_back_exactly(score: float, a: float, b: float,
                                                          c: float, d: float) -> None:
    """A link may set numbers off the sliders' grid (``score=0.8515625``, ``iou_lo=0.123``):
    the link of the view it opens carries the very same numbers."""
    lo, hi, glo, ghi = min(a, b), max(a, b), min(c, d), max(c, d)
    given_link = {"score": repr(score), "iou_lo": repr(lo), "iou_hi": repr(hi),
                  "giou_lo": repr(glo), "giou_hi": repr(ghi)}
    opened = _apply(given_link)
    assert (opened["score_threshold"], *opened["flt_iou"], *opened["gal_iou"]) == (
        score, lo, hi, glo, ghi)
    again = _apply(_link_of(opened))
    _assert_same(opened, again)
    assert (again["score_threshold"], *again["flt_iou"], *again["gal_iou"]) == (
        score, lo, hi, glo, ghi)
