"""The link schema's rules, by direct calls (issue 47: ``pages/common/links.py`` had only
AppTest and 300-example round-trip tests, too slow for mutmut, and a round trip passes on a
parameter that reads and writes the wrong name or field symmetrically).

Every URL parameter is written out here by hand, independently of ``links.SCHEMA``: its
name, the session field it binds, its page and default, one non-default URL text and the
session value it means, and one text a widget would not take with the notice it gets.
Each rule is checked on plain dicts (no Streamlit, no AppTest)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pages.common import links

SEG, BOX, OBB = "segmentation", "bbox", "oriented_bbox"
ALL_LAYERS = ["GT mask", "predicted mask", "GT HBB", "predicted HBB", "GT OBB",
              "predicted OBB"]
BIG = "1,000,000,000"  # MAX_BOXES / MAX_PAGE as the notice writes them


def _note(name: str, text: str, expected: str) -> str:
    return (f"The link's `{name}` (`{text}`) was ignored: expected {expected}. "
            "The rest of the link applies.")


# name, session key, page, default, a non-default URL text, the session value it means,
# a refused text, what the notice says was expected (None: every text is taken).
ROWS: list[tuple[str, str, str, Any, str, Any, str | None, str | None]] = [
    ("task", "task", "all", "vocabulary", "referring", "referring", "vocab",
     "one of vocabulary, referring, reasoning"),
    ("mods", "modalities", "all", [SEG, BOX, OBB], "segmentation,oriented_bbox", [SEG, OBB],
     "hbb", "items from segmentation, bbox, oriented_bbox"),
    ("iou", "iou_threshold", "all", 0.5, "0.75", 0.75, "0.73",
     "a multiple of 0.05 from 0.05 to 1"),
    ("score", "score_threshold", "all", 0.3, "0.42", 0.42, "1.5", "a number from 0 to 1"),
    ("fmt", "bbox_format", "all", "xyxy", "xywh", "xywh", "cxcywh", "one of xyxy, xywh"),
    ("hardneg", "ap_hard_negatives", "all", False, "1", True, "yes", "1 or 0"),
    ("nmsap", "ap_nms", "all", False, "1", True, "2", "1 or 0"),
    ("aitod", "ap_aitod", "all", False, "1", True, "on", "1 or 0"),
    ("bigmask", "large_masks", "all", False, "1", True, "True", "1 or 0"),
    ("concave", "concave_obb", "all", False, "1", True, "-1", "1 or 0"),
    ("cap", "ap_max_detections", "all", 100, "300", 300, "9",
     f"a whole number from 10 to {BIG}"),
    ("unit", "boot_unit", "all", "auto", "query", "query", "pixel",
     "one of auto, image, query"),
    ("alpha", "alpha", "all", 0.05, "0.01", 0.01, "0.6", "a number from 0.001 to 0.5"),
    ("minn", "min_count", "all", 10, "25", 25, "0", "a whole number from 1 to 100,000"),
    ("failed", "flt_failed_only", "filters", False, "1", True, "y", "1 or 0"),
    ("outcome", "flt_outcomes", "filters", [], "TP,FN", ["TP", "FN"], None, None),
    ("tag", "flt_failures", "filters", [], "mislocalized", ["mislocalized"], None, None),
    ("cat", "flt_categories", "filters", [], "boat\\, small,car", ["boat, small", "car"],
     None, None),
    ("rtag", "flt_review_tags", "filters", [], "wrong label", ["wrong label"], None, None),
    ("obj", "flt_objects", "filters", [], "missed", ["missed"], None, None),
    ("pol", "flt_polarity", "filters", "all", "negative", "negative", "all",
     "one of positive, negative"),
    ("mod", "flt_modality", "filters", "any", "oriented_bbox", OBB, "any",
     "one of segmentation, bbox, oriented_bbox"),
    ("objm", "flt_obj_modality", "filters", "auto", "segmentation", SEG, "obb",
     "one of segmentation, bbox, oriented_bbox"),
    ("text", "flt_text", "filters", "", "red car", "red car", None, None),
    ("zoom", "view_zoom", "explorer", "GT target", "full image", "full image", "GT",
     "one of GT target, GT only, GT and predictions, full image"),
    ("layers", "view_layers", "explorer", ALL_LAYERS, "ghbb,pobb",
     ["GT HBB", "predicted OBB"], "gbox", "items from gmask, pmask, ghbb, phbb, gobb, pobb"),
    ("opacity", "view_opacity", "explorer", 0.45, "0.8", 0.8, "nan", "a number from 0 to 1"),
    ("pixels", "view_pixel_mode", "explorer", False, "1", True, "x", "1 or 0"),
    ("labels", "view_labels", "explorer", False, "1", True, "x", "1 or 0"),
    ("live", "view_interactive", "explorer", False, "1", True, "x", "1 or 0"),
    ("gsel", "gal_selector", "gallery", "GT boxes", "pred", "predicted boxes", "GT boxes",
     "one of gt, pred, queries"),
    ("gmod", "gal_modality", "gallery", "bbox", "oriented_bbox", OBB, SEG,
     "one of bbox, oriented_bbox"),
    ("gout", "gal_outcomes", "gallery", [], "FP", ["FP"], None, None),
    ("gtag", "gal_failures", "gallery", [], "duplicate", ["duplicate"], None, None),
    ("gcat", "gal_categories", "gallery", [], "ship,plane", ["ship", "plane"], None, None),
    ("gsize", "gal_sizes", "gallery", [], "small", ["small"], None, None),
    ("grtag", "gal_review_tags", "gallery", [], "ok", ["ok"], None, None),
    ("gerr", "gal_errors", "gallery", [], "missed", ["missed"], None, None),
    ("gconf", "gal_confused", "gallery", [], "truck", ["truck"], None, None),
    ("gpol", "gal_polarity", "gallery", "all", "positive", "positive", "neg",
     "one of positive, negative"),
    ("gsort", "gal_sort", "gallery", "worst first", "smallest", "smallest first",
     "worst first", "one of worst, smallest, largest"),
    ("gpage", "gal_page", "gallery", 1, "4", 4, "0", f"a whole number from 1 to {BIG}"),
    ("ann", "ann_id", "annotation", "", "17", "17", None, None),
    ("sattr", "slice_attr", "slices", "category", "gsd", "gsd", "size",
     "one of category, group, polarity, gt_size, num_gt, phrase_words, image_size, tag, "
     "gsd, meta, query_form"),
    ("smetric", "slice_metric", "slices", "", "AP50", "AP50", None, None),
    ("smeta", "slice_meta_key", "slices", "", "season", "season", None, None),
    ("lbsub", "lb_subsets", "leaderboard", 1000, "300", 300, "199",
     "a whole number from 200 to 5,000"),
    ("lbseed", "lb_seed", "leaderboard", 0, "7", 7, "4294967296",
     "a whole number from 0 to 4,294,967,295"),
    ("lbap", "lb_ap", "leaderboard", False, "1", True, "no", "1 or 0"),
    ("rres", "rank_resamples", "leaderboard", 1000, "500", 500, "20001",
     "a whole number from 100 to 20,000"),
    ("fblk", "friedman_blocks", "leaderboard", "image", "query", "query", "images",
     "one of image, query"),
    ("lbdir", "lb_folder", "leaderboard", "", "runs/a", "runs/a", None, None),
    ("auddir", "audit_folder", "audit", "", "runs/b", "runs/b", None, None),
    ("audgeo", "audit_modality", "audit", "bbox", "segmentation", SEG, "obb",
     "one of bbox, oriented_bbox, segmentation"),
    ("audn", "audit_shown", "audit", 10, "25", 25, "201", "a whole number from 1 to 200"),
]
RANGES = [("iou_lo", "iou_hi", "flt_iou", "filters"),
          ("giou_lo", "giou_hi", "gal_iou", "gallery")]
GATES = {"mods": ("auto_modalities", False), "score": ("use_score_threshold", True)}
IDS = [r[0] for r in ROWS]


def _session() -> dict[str, Any]:
    """Every field at its default, written from the rows above (not from the schema)."""
    ss: dict[str, Any] = {key: (list(d) if isinstance(d, list) else d)
                          for _, key, _, d, *_ in ROWS}
    ss.update(flt_iou=(0.0, 1.0), gal_iou=(0.0, 1.0), selected={}, view_focus=None,
              auto_modalities=True, use_score_threshold=False)
    return ss


def test_the_schema_is_the_table_of_the_docs() -> None:
    """Every URL parameter binds the field, page and default written here, and nothing else
    is a parameter (a renamed key or field breaks every saved link)."""
    table = {p.name: (p.key, p.page, p.default) for p in links.SCHEMA
             if p.kind not in ("range",) and p.name not in ("q", "box")}
    assert table == {n: (k, page, d) for n, k, page, d, *_ in ROWS}
    assert {(p.name, p.pair, p.key, p.page) for p in links.SCHEMA if p.kind == "range"} == {
        (lo, hi, key, page) for lo, hi, key, page in RANGES}
    assert links.URL_NAMES == {*IDS, "iou_lo", "iou_hi", "giou_lo", "giou_hi", "q", "box"}
    assert {p.name: p.gate for p in links.SCHEMA if p.gate} == GATES


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_a_parameter_sets_its_own_field_and_only_that(row: tuple) -> None:
    name, key, _, default, text, value, _, _ = row
    ss, notes = _session(), []
    before = dict(ss)
    links.apply({name: text}, ss, notes)
    assert notes == []
    assert ss[key] == value and type(ss[key]) is type(value)
    gate = GATES.get(name)
    changed = {k for k in ss if ss[k] != before[k]}
    assert changed == {key} | ({gate[0]} if gate else set())
    if gate:
        assert ss[gate[0]] is gate[1]


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_a_non_default_value_is_written_under_its_name_alone(row: tuple) -> None:
    """``emit`` writes exactly the one parameter that differs from its default, on its own
    page only, in the text that reads back to the value."""
    name, key, page, _, text, value, _, _ = row
    ss = _session()
    ss[key] = value
    if name in GATES:
        ss[GATES[name][0]] = GATES[name][1]
    assert links.emit(ss, [page]) == {name: text}
    others = [p for p in links.PAGES if p != page]
    assert links.emit(ss, others) == {}


@pytest.mark.parametrize("row", [r for r in ROWS if r[6] is not None],
                         ids=[r[0] for r in ROWS if r[6] is not None])
def test_a_value_no_widget_takes_is_refused_with_a_notice(row: tuple) -> None:
    name, key, _, _, _, _, bad, expected = row
    ss, notes = _session(), []
    before = dict(ss)
    links.apply({name: bad, "ann": "kept"}, ss, notes)
    assert notes == [_note(name, bad, expected)]
    # the rest of the link applies; the refused field (and its gate) keep their values
    assert ss["ann_id"] == "kept"
    assert ss[key] == before[key]
    if name in GATES:
        assert ss[GATES[name][0]] == before[GATES[name][0]]


def test_defaults_write_no_parameter_and_the_gated_ones_follow_their_gate() -> None:
    ss = _session()
    assert links.emit(ss, links.PAGES) == {}
    ss.update(auto_modalities=False, use_score_threshold=True)
    # a gate on: its parameter is written even at the default value
    assert links.emit(ss, ["all"]) == {"mods": "segmentation,bbox,oriented_bbox",
                                       "score": "0.3"}
    ss.update(auto_modalities=True, use_score_threshold=False, score_threshold=0.9,
              modalities=[BOX])
    assert links.emit(ss, ["all"]) == {}  # a gate off: never written, whatever the value
    ss.update(use_score_threshold=True, score_threshold=0.0)
    assert links.emit(ss, ["all"]) == {"score": "0"}


def test_a_missing_session_field_counts_as_its_default() -> None:
    assert links.emit({}, ["all", "filters", "gallery", "slices", "leaderboard", "audit",
                           "annotation"]) == {}


def test_the_pages_filter_what_is_written() -> None:
    ss = _session()
    ss.update(task="reasoning", flt_text="x", gal_page=3, ann_id="a", slice_attr="tag",
              lb_ap=True, audit_shown=5, view_labels=True)
    assert links.emit(ss, ["all", "filters"]) == {"task": "reasoning", "text": "x"}
    assert links.emit(ss, ["gallery", "audit"]) == {"gpage": "3", "audn": "5"}
    assert links.emit(ss, ["annotation", "slices", "leaderboard"]) == {
        "ann": "a", "sattr": "tag", "lbap": "1"}
    assert links.emit(ss, ["explorer"]) == {"labels": "1"}


# ---- lists ---------------------------------------------------------------------------

def test_coded_lists_are_written_in_the_tables_order_and_none_when_empty() -> None:
    ss = _session()
    ss["view_layers"] = ["predicted OBB", "GT mask", "predicted HBB"]
    assert links.emit(ss, ["explorer"]) == {"layers": "gmask,phbb,pobb"}
    ss["view_layers"] = []
    assert links.emit(ss, ["explorer"]) == {"layers": "none"}
    ss["view_layers"] = ["not a layer"]  # nothing a link can carry: none
    assert links.emit(ss, ["explorer"]) == {"layers": "none"}
    ss.update(auto_modalities=False, modalities=[OBB, SEG])
    assert links.emit(ss, ["all"]) == {"mods": "segmentation,oriented_bbox"}


def test_none_is_the_empty_list_only_where_the_default_is_not_empty() -> None:
    ss, notes = _session(), []
    links.apply({"layers": "none", "mods": "none", "cat": "none"}, ss, notes)
    assert notes == []
    assert ss["view_layers"] == [] and ss["modalities"] == []
    assert ss["auto_modalities"] is False
    assert ss["flt_categories"] == ["none"]  # a category may be called "none"


def test_a_partly_known_list_keeps_the_known_items_and_names_the_others() -> None:
    ss, notes = _session(), []
    links.apply({"layers": "pobb,,gbox,gmask,xx", "mods": "hbb"}, ss, notes)
    assert ss["view_layers"] == ["predicted OBB", "GT mask"]  # in the link's order
    assert notes == [_note("mods", "hbb", "items from segmentation, bbox, oriented_bbox"),
                     _note("layers", "gbox,xx", "items from gmask, pmask, ghbb, phbb, gobb, "
                           "pobb")]  # in the table's order
    assert ss["modalities"] == [SEG, BOX, OBB] and ss["auto_modalities"] is True


def test_an_empty_free_list_is_no_value() -> None:
    ss, notes = _session(), []
    ss["flt_categories"] = ["kept"]
    links.apply({"cat": ",,", "gcat": ","}, ss, notes)
    assert ss["flt_categories"] == ["kept"] and ss["gal_categories"] == [] and notes == []
    assert links._write(links.BY_NAME["cat"], []) == "none"


@pytest.mark.parametrize("items, text", [
    (["boat, small", "car"], "boat\\, small,car"),
    (["a\\b", "c"], "a\\\\b,c"),
    (["x\\", ",y"], "x\\\\,\\,y"),
    (["plain"], "plain"),
])
def test_free_list_escapes_commas_and_backslashes(items: list[str], text: str) -> None:
    assert links.list_text(items) == text
    assert links.list_items(text) == items


def test_list_items_drops_empty_items_and_keeps_a_lone_trailing_backslash() -> None:
    assert links.list_items(",a,,b,") == ["a", "b"]
    assert links.list_items("a\\") == ["a\\"]
    assert links.list_items("\\") == ["\\"]
    assert links.list_items("a\\x,b") == ["ax", "b"]
    assert links.list_items("") == []


# ---- numbers -------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [(0.3, "0.3"), (0.0, "0"), (1.0, "1"), (0.45, "0.45"),
                                         (1 / 3, "0.3333333333333333"), (1e-7, "1e-07"),
                                         (0.1234567, "0.1234567")])
def test_number_text_is_the_shortest_text_that_reads_back(value: float, text: str) -> None:
    assert links.number_text(value) == text
    assert float(text) == value


@pytest.mark.parametrize("text, note", [
    ("inf", "a number from 0 to 1"), ("-inf", "a number from 0 to 1"),
    ("nan", "a number from 0 to 1"), ("abc", "a number from 0 to 1"),
    ("-0.01", "a number from 0 to 1"), ("1.01", "a number from 0 to 1"),
])
def test_a_number_outside_its_bounds_or_not_finite_is_refused(text: str, note: str) -> None:
    ss, notes = _session(), []
    links.apply({"opacity": text}, ss, notes)
    assert notes == [_note("opacity", text, note)] and ss["view_opacity"] == 0.45


@pytest.mark.parametrize("text, value", [("0", 0.0), ("1", 1.0), ("1e-3", 0.001),
                                         (" 0.25 ", 0.25)])
def test_a_number_at_its_bounds_is_taken(text: str, value: float) -> None:
    ss, notes = _session(), []
    links.apply({"opacity": text}, ss, notes)
    assert notes == [] and ss["view_opacity"] == value


@pytest.mark.parametrize("text, value", [("0.05", 0.05), ("1", 1.0), ("0.6000001", 0.6),
                                         ("0.449", 0.45)])
def test_the_iou_grid_takes_values_that_round_to_it(text: str, value: float) -> None:
    ss, notes = _session(), []
    links.apply({"iou": text}, ss, notes)
    assert notes == [] and ss["iou_threshold"] == value


@pytest.mark.parametrize("text, note", [("0.04", "a number from 0.05 to 1"),
                                        ("1.05", "a number from 0.05 to 1"),
                                        ("0.07", "a multiple of 0.05 from 0.05 to 1"),
                                        ("0.456", "a multiple of 0.05 from 0.05 to 1")])
def test_the_iou_grid_refuses_the_rest(text: str, note: str) -> None:
    ss, notes = _session(), []
    links.apply({"iou": text}, ss, notes)
    assert notes == [_note("iou", text, note)] and ss["iou_threshold"] == 0.5


@pytest.mark.parametrize("text, ok", [("10", True), ("1000000000", True), ("0010", True),
                                      ("1000000001", False), ("12345678901", False),
                                      ("+50", False), ("50.0", False), ("5e2", False),
                                      ("-50", False), ("", None)])
def test_whole_numbers_are_plain_digits_within_bounds(text: str, ok: bool | None) -> None:
    ss, notes = _session(), []
    links.apply({"cap": text}, ss, notes)
    if ok:
        assert notes == [] and ss["ap_max_detections"] == int(text)
    else:
        assert ss["ap_max_detections"] == 100
        assert notes == ([] if ok is None else [_note("cap", text,
                                                      f"a whole number from 10 to {BIG}")])


def test_whole_bounds_are_inclusive() -> None:
    ss, notes = _session(), []
    links.apply({"lbsub": "200", "audn": "200", "rres": "20000", "lbseed": "4294967295"}, ss,
                notes)
    assert notes == []
    assert (ss["lb_subsets"], ss["audit_shown"], ss["rank_resamples"], ss["lb_seed"]) == (
        200, 200, 20000, 4294967295)
    links.apply({"lbsub": "5001", "gpage": "1"}, ss, notes)
    assert ss["lb_subsets"] == 200 and ss["gal_page"] == 1
    assert notes == [_note("lbsub", "5001", "a whole number from 200 to 5,000")]


def test_a_whole_parameter_without_bounds_reads_from_0_to_max_page() -> None:
    p = links.Param("n", "n", "whole", 0, "all")
    notes: list[str] = []
    assert links._whole(p, "0", notes) == 0 and links._whole(p, str(10**9), notes) == 10**9
    assert links._whole(p, str(10**9 + 1), notes) is None
    assert notes == [_note("n", str(10**9 + 1), f"a whole number from 0 to {BIG}")]
    q = links.Param("x", "x", "number", 0.0, "all")
    assert links._number(q, "x", "-1e300", notes) == -1e300
    assert links._number(q, "x", "inf", notes) is None
    assert notes[-1] == _note("x", "inf", "a number from -inf to inf")


@pytest.mark.parametrize("text, value", [("1", True), ("true", True), ("0", False),
                                         ("false", False)])
def test_flags_read_1_true_0_false(text: str, value: bool) -> None:
    ss, notes = _session(), []
    ss["lb_ap"] = not value
    links.apply({"lbap": text}, ss, notes)
    assert notes == [] and ss["lb_ap"] is value


def test_flags_are_written_1_and_0() -> None:
    p = links.BY_NAME["lbap"]
    assert links._write(p, True) == "1" and links._write(p, False) == "0"


# ---- ranges --------------------------------------------------------------------------

@pytest.mark.parametrize("params, value", [
    ({"iou_lo": "0.2", "iou_hi": "0.7"}, (0.2, 0.7)),
    ({"iou_lo": "0.2"}, (0.2, 1.0)),
    ({"iou_hi": "0.7"}, (0.0, 0.7)),
    ({"iou_lo": "0.4", "iou_hi": "0.4"}, (0.4, 0.4)),
    ({"iou_lo": "0", "iou_hi": "0"}, (0.0, 0.0)),
    ({"iou_lo": "1", "iou_hi": " "}, (1.0, 1.0)),
])
def test_a_range_takes_its_two_ends_a_missing_one_at_0_or_1(params: dict, value: tuple
                                                            ) -> None:
    ss, notes = _session(), []
    ss["flt_iou"] = (0.1, 0.9)
    links.apply(params, ss, notes)
    assert notes == [] and ss["flt_iou"] == value and ss["gal_iou"] == (0.0, 1.0)


def test_the_gallery_range_reads_its_own_names() -> None:
    ss, notes = _session(), []
    links.apply({"giou_lo": "0.3", "giou_hi": "0.6"}, ss, notes)
    assert ss["gal_iou"] == (0.3, 0.6) and ss["flt_iou"] == (0.0, 1.0) and notes == []
    ss["gal_iou"], ss["flt_iou"] = (0.0, 0.25), (0.5, 1.0)
    assert links.emit(ss, ["gallery"]) == {"giou_lo": "0", "giou_hi": "0.25"}
    assert links.emit(ss, ["filters"]) == {"iou_lo": "0.5", "iou_hi": "1"}


def test_a_reversed_range_is_refused_whole_with_both_names() -> None:
    ss, notes = _session(), []
    lo = "0.9" + "0" * 45
    links.apply({"iou_lo": lo, "iou_hi": "0.2", "text": "t"}, ss, notes)
    assert ss["flt_iou"] == (0.0, 1.0) and ss["flt_text"] == "t"
    assert notes == [f"The link's `iou_lo` (`{lo[:40]}`) and `iou_hi` (`0.2`) were ignored: "
                     "expected iou_lo at most iou_hi. The rest of the link applies."]


def test_a_reversed_range_cuts_each_end_at_40_characters() -> None:
    """(``_apply_range_34``: the upper end's text cut at 41)."""
    ss, notes = _session(), []
    hi = "0.2" + "0" * 45
    links.apply({"giou_lo": "0.9", "giou_hi": hi}, ss, notes)
    assert ss["gal_iou"] == (0.0, 1.0)
    assert notes == [f"The link's `giou_lo` (`0.9`) and `giou_hi` (`{hi[:40]}`) were ignored: "
                     "expected giou_lo at most giou_hi. The rest of the link applies."]


def test_a_bad_range_end_is_noted_and_the_other_end_applies() -> None:
    ss, notes = _session(), []
    links.apply({"iou_lo": "x", "iou_hi": "0.6"}, ss, notes)
    assert ss["flt_iou"] == (0.0, 0.6)
    assert notes == [_note("iou_lo", "x", "a number from 0 to 1")]
    ss, notes = _session(), []
    links.apply({"iou_lo": "0.3", "iou_hi": "2"}, ss, notes)
    assert ss["flt_iou"] == (0.3, 1.0)
    assert notes == [_note("iou_hi", "2", "a number from 0 to 1")]
    ss, notes = _session(), []
    links.apply({"iou_lo": "-1", "iou_hi": "2"}, ss, notes)
    assert ss["flt_iou"] == (0.0, 1.0) and len(notes) == 2


def test_a_range_equal_to_its_default_given_as_a_tuple_or_list_is_not_written() -> None:
    ss = _session()
    ss["flt_iou"] = [0.0, 1.0]
    ss["gal_iou"] = (0.0, 1.0)
    assert links.emit(ss, ["filters", "gallery"]) == {}
    ss["flt_iou"] = [0.0, 0.5]
    assert links.emit(ss, ["filters"]) == {"iou_lo": "0", "iou_hi": "0.5"}


# ---- the query and its box -------------------------------------------------------------

def test_the_query_is_set_for_the_links_task_keeping_the_others() -> None:
    ss, notes = _session(), []
    ss["selected"] = {"vocabulary": "v1"}
    links.apply({"task": "referring", "q": "r7"}, ss, notes)
    assert ss["selected"] == {"vocabulary": "v1", "referring": "r7"} and notes == []
    links.apply({"q": "v2"}, ss, notes)  # no task: the session's
    assert ss["selected"] == {"vocabulary": "v1", "referring": "v2"}


def test_a_box_is_1_based_and_belongs_to_the_links_query() -> None:
    ss, notes = _session(), []
    links.apply({"q": "q9", "box": "3"}, ss, notes)
    assert ss["view_focus"] == ("q9", 2) and notes == []
    assert links.emit(ss, ["explorer"], "q9") == {"q": "q9", "box": "3"}
    assert links.emit(ss, ["explorer"], "other") == {"q": "other"}  # not this query's box
    assert links.emit(ss, ["explorer"]) == {}
    ss["view_focus"] = ("q9", 0)
    assert links.emit(ss, ["explorer"], "q9") == {"q": "q9", "box": "1"}


def test_a_box_without_a_query_or_out_of_bounds_is_refused() -> None:
    """... and the parameters after it in the table still apply (``apply_69``)."""
    ss, notes = _session(), []
    links.apply({"box": "2", "zoom": "full image", "audn": "3"}, ss, notes)
    assert ss["view_focus"] is None
    assert ss["view_zoom"] == "full image" and ss["audit_shown"] == 3
    assert notes == ["The link's `box` (`2`) was ignored: expected a box of the link's "
                     "query `q`, which the link does not name. The rest of the link applies."]
    ss, notes = _session(), []
    links.apply({"q": "", "box": "2"}, ss, notes)
    assert ss["view_focus"] is None and len(notes) == 1
    ss, notes = _session(), []
    links.apply({"q": "q1", "box": "0"}, ss, notes)
    assert ss["view_focus"] is None
    assert notes == [_note("box", "0", f"a whole number from 1 to {BIG}")]


# ---- empty values, text, choices -------------------------------------------------------

def test_a_blank_list_is_read_as_a_list() -> None:
    """Blank text is no value for numbers, flags and choices, but a list reads it: a free
    list takes the item, a list of codes refuses it with a notice (``apply_23``/``_24``:
    coded and free lists skipped silently)."""
    ss, notes = _session(), []
    links.apply({"layers": " ", "cat": " "}, ss, notes)
    assert ss["view_layers"] == ALL_LAYERS and ss["flt_categories"] == [" "]
    assert notes == [_note("layers", " ", "items from gmask, pmask, ghbb, phbb, gobb, pobb")]


def test_whole_numbers_are_written_as_digits_whatever_their_number_type() -> None:
    """A widget may hold a whole number as a float or a numpy integer: the link has its
    digits, which read back (``_write_12``..``_15``: ``str(value)``, ``300.0``)."""
    ss = _session()
    ss.update(ap_max_detections=300.0, gal_page=np.int64(4), view_focus=("q", 2.0))
    assert links.emit(ss, ["all", "gallery", "explorer"], "q") == {
        "cap": "300", "gpage": "4", "q": "q", "box": "3"}


def test_a_gated_parameter_missing_from_the_session_is_written_at_its_default() -> None:
    """(``_value_22``/``_24``: a missing field read as ``None``.)"""
    ss = {"auto_modalities": False, "use_score_threshold": True}
    assert links.emit(ss, ["all"]) == {"mods": "segmentation,bbox,oriented_bbox",
                                       "score": "0.3"}


def test_an_empty_value_is_no_value_but_blank_text_is_text() -> None:
    ss, notes = _session(), []
    ss.update(task="reasoning", flt_text="old", ap_max_detections=50)
    links.apply({"task": "", "cap": "  ", "fmt": " ", "text": "  ", "ann": ""}, ss, notes)
    assert notes == []
    assert ss["task"] == "reasoning" and ss["ap_max_detections"] == 50
    assert ss["bbox_format"] == "xyxy" and ss["flt_text"] == "  " and ss["ann_id"] == ""


def test_hostile_text_and_paths_are_kept_as_text_for_the_pages_gate() -> None:
    """A folder in a link is text in the session; the page reads it only through the
    confinement gate (``state.confined``), never here."""
    ss, notes = _session(), []
    hostile = "/etc/../../root\n`x` <b>"
    links.apply({"lbdir": hostile, "auddir": "../../outside", "smeta": "k,v"}, ss, notes)
    assert (ss["lb_folder"], ss["audit_folder"], ss["slice_meta_key"]) == (
        hostile, "../../outside", "k,v")
    assert notes == []
    assert links.emit(ss, ["leaderboard", "audit", "slices"]) == {
        "lbdir": hostile, "auddir": "../../outside", "smeta": "k,v"}


def test_a_choice_value_no_link_carries_stays_out_of_the_link() -> None:
    ss = _session()
    ss.update(gal_sort="random", task="other", gal_page=3, alpha=0.01)
    # the parameters after it are still written (``emit_42``: ``break`` for ``continue``)
    assert links.emit(ss, ["gallery", "all"]) == {"gpage": "3", "alpha": "0.01"}
    ss.update(gal_sort="largest first")
    assert links.emit(ss, ["gallery"]) == {"gsort": "largest", "gpage": "3"}


def test_the_link_is_applied_in_the_tables_order_task_before_query() -> None:
    """``apply`` walks the table, not the link: a query named before its task in the URL
    still lands under that task."""
    ss, notes = _session(), []
    links.apply({"q": "z", "box": "1", "task": "reasoning"}, ss, notes)
    assert ss["selected"] == {"reasoning": "z"} and ss["view_focus"] == ("z", 0)


# ---- the notice's text -----------------------------------------------------------------

def test_a_long_refused_value_is_cut_at_40_characters() -> None:
    text = "9" * 40
    assert links.dropped("cap", text, "E") == _note("cap", text, "E")
    assert links.dropped("cap", text + "7", "E") == _note("cap", text + "…", "E")


@pytest.mark.parametrize("text, span", [
    ("abc", "`abc`"), ("a`b", "`` a`b ``"), ("``x", "``` ``x ```"), ("x`", "`` x` ``"),
    ("a\nb\rc", "`a b c`"), ("", "``"), (7, "`7`"), ("`", "`` ` ``"),
])
def test_code_fences_text_longer_than_any_backtick_run(text: object, span: str) -> None:
    assert links.code(text) == span


def test_same_maps_each_value_to_itself_by_its_text() -> None:
    assert links._same(["a", 2]) == {"a": "a", "2": 2}


def test_a_number_text_never_loses_precision() -> None:
    for value in (0.1 + 0.2, 2 / 3, 123456.789, 1e21, 5e-324):
        assert float(links.number_text(value)) == value
    assert math.isinf(float(links.number_text(math.inf)))
