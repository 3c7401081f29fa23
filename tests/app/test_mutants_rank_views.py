"""The Leaderboard's ranks view, by direct calls (issue 47: ``pages/common/rank_views.py``
had only AppTest runs, ``tests/app/test_app_ranks.py``, too slow for mutmut).

Streamlit is replaced by a recorder (``tests/st_recorder.py``: every call kept with its
arguments, in order) and the figures by stand-ins naming what they were given. The ranks are
hand-built dicts shaped as ``rank_stats.metric_ranks`` returns them, with asymmetric values
(no two submissions share a rank, an interval, a share or a p-value), so a value read from
the wrong submission, the wrong end of an interval or the wrong key shows; every expected
text and cell is written out by hand from those numbers."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pandas as pd
import pytest
import st_recorder
from st_recorder import Call, Recorder

from ovearth_core.options import (
    ALPHA_BOUNDS,
    MIN_COUNT_BOUNDS,
    RANK_RESAMPLE_BOUNDS,
    Options,
)
from pages.common import links, rank_views

NUMBER = Call("column_config.NumberColumn", (), {"format": "%.3f"})


@pytest.fixture
def st(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    rec = st_recorder.install(monkeypatch, rank_views)

    class Figures:
        @staticmethod
        def rank_interval_figure(ranks: dict, label: str) -> tuple:
            return ("intervals", id(ranks), label)

        @staticmethod
        def critical_difference_figure(friedman: dict, label: str) -> tuple:
            return ("cd", id(friedman), label)

    monkeypatch.setattr(rank_views, "rf", Figures)
    return rec


def _cells(column: pd.Series) -> list[Any]:
    """A column's cells, an empty one (shown "—") as None."""
    return [None if pd.isna(x) else x for x in column]


def _ranks(**kw: Any) -> dict[str, Any]:
    """Three submissions, the leader first; alpha 0.1 (90 % intervals)."""
    base: dict[str, Any] = {
        "metric": "seg_macro_miou", "alpha": 0.1, "unit": "image", "seed": 7,
        "n_resamples": 1200, "n_resamples_asked": 1000, "num_units": 1500, "min_count": 3,
        "models": ["lead*1", "b*x", "c"], "rank": [1.0, 2.5, 2.0],
        "value": [0.81, 0.62, 0.4], "rank_low": [1.0, 1.5, 2.0], "rank_high": [2.0, 3.0, 3.5],
        "first_share": [0.871, 0.123, None], "groups": ["a", "ab", "b"],
        "diff": [None, 0.19, 0.41], "diff_low": [None, 0.0512, 0.3], "diff_high": [None, 0.25,
                                                                                    0.4567],
        "p": [None, 0.0421, 0.0004], "p_holm": [None, 0.0842, 0.0012],
        "best_of_n": {"num_models": 3, "best": 0.81, "optimism": 0.01234},
        "friedman": {"blocks": "query", "num_blocks": 40, "num_units": 1500, "alpha": 0.1,
                     "statistic": 12.345, "p": 0.00208, "cd": 0.5678,
                     "models": ["lead*1", "b*x", "c"]},
        "warning": None, "resolution_note": None,
        "disagreement": {"groups_only": [], "tests_only": [], "note": None}}
    return {**base, **kw}


# ---- the rank table -------------------------------------------------------------------

def test_the_rank_table_reads_each_submissions_own_cells_at_one_minus_alpha() -> None:
    """alpha 0.1: the intervals are 90 % ones; a rank interval is written low–high with
    ``g`` (1.5, not 1.500), a share as a whole percent, the leader's difference empty."""
    frame = rank_views.rank_frame(_ranks())
    assert list(frame.columns) == [
        "rank", "submission", "value", "rank 90 % interval", "ranked first", "group",
        "leader − this", "90 % interval", "p (paired bootstrap)", "p (Holm)"]
    want = pd.DataFrame({
        "rank": [1.0, 2.5, 2.0], "submission": ["lead*1", "b*x", "c"],
        "value": [0.81, 0.62, 0.4], "rank 90 % interval": ["1–2", "1.5–3", "2–3.5"],
        "ranked first": ["87 %", "12 %", None], "group": ["a", "ab", "b"],
        "leader − this": [None, 0.19, 0.41],
        "90 % interval": [None, "[0.051, 0.250]", "[0.300, 0.457]"],
        "p (paired bootstrap)": [None, "0.0421", "4.0e-04"],
        "p (Holm)": [None, "0.0842", "0.0012"]})
    pd.testing.assert_frame_equal(frame, want)
    # alpha 0.01: 99 % intervals; a rank interval missing is empty
    other = rank_views.rank_frame(_ranks(alpha=0.01, rank_low=[None, 1.0, 2.0]))
    assert "rank 99 % interval" in other.columns and "99 % interval" in other.columns
    assert _cells(other["rank 99 % interval"]) == [None, "1–3", "2–3.5"]


def test_the_category_table_names_the_two_submissions_and_the_resampled_unit() -> None:
    cats = {"a": "lead*1", "b": "b*x", "unit": "query", "min_count": 3, "rows": [
        {"category": "ship", "num_queries": 12, "num_units": 9, "a": 0.7, "b": 0.5,
         "diff": 0.2, "diff_low": 0.1234, "diff_high": 0.3456, "p": 0.03, "q": 0.06},
        {"category": "plane", "num_queries": 2, "num_units": 1, "a": 0.4, "b": 0.45,
         "diff": -0.05, "diff_low": None, "diff_high": None, "p": None, "q": None}]}
    frame = rank_views.category_frame(cats)
    # resampling queries: the units' column is also "queries" (a dict key: one column)
    assert list(frame.columns) == ["category", "queries", "lead*1", "b*x",
                                   "leader − runner-up", "interval", "p (paired bootstrap)",
                                   "q (Benjamini–Hochberg)"]
    assert frame["queries"].tolist() == [9, 1]  # the units', written last
    images = rank_views.category_frame({**cats, "unit": "image"})
    assert list(images.columns)[:3] == ["category", "queries", "images"]
    assert images["queries"].tolist() == [12, 2] and images["images"].tolist() == [9, 1]
    assert images["lead*1"].tolist() == [0.7, 0.4] and images["b*x"].tolist() == [0.5, 0.45]
    assert images["leader − runner-up"].tolist() == [0.2, -0.05]
    assert _cells(images["interval"]) == ["[0.123, 0.346]", None]
    assert _cells(images["p (paired bootstrap)"]) == ["0.03", None]
    assert _cells(images["q (Benjamini–Hochberg)"]) == ["0.06", None]


# ---- the section ----------------------------------------------------------------------

def test_no_ranks_of_the_metric_says_why_and_draws_nothing_else(st: Recorder) -> None:
    rank_views.section({"uncertainty": {"presence_mcc": _ranks()}}, "seg_macro_miou")
    assert st.calls == [Call("info", ("Segmentation macro mIoU: no rank intervals. They need "
                                      "at least two submissions of the metric's modality.",),
                             {})]
    st.calls.clear()
    rank_views.section({}, "my_metric")  # no ranks at all; a metric without a label
    assert st.texts("info") == ["my_metric: no rank intervals. They need at least two "
                                "submissions of the metric's modality."]
    assert len(st.calls) == 1


def test_the_caption_states_resamples_units_seed_level_and_comparisons(st: Recorder) -> None:
    ranks = _ranks()
    rank_views.section({"uncertainty": {"seg_macro_miou": ranks}}, "seg_macro_miou")
    caption = st.texts("caption")[0]
    assert caption == (
        "Segmentation macro mIoU: 1,200 resamples of the 1,500 images (seed 7; each "
        "submission's matching reused, only its per-image sums drawn again). Rank interval: "
        "the 90 % percentile interval of the ranks; a letter is a group of submissions "
        "whose intervals share a rank (no common letter: told apart). Leader − this: paired "
        "bootstrap on the same resamples, p-values corrected by Holm's method over the 2 "
        "comparisons with the leader.")
    # resampling queries, an AP metric (Friedman without blocks), alpha 0.05
    st.calls.clear()
    ap = _ranks(unit="query", alpha=0.05, models=["w", "x", "y"], n_resamples=999,
                num_units=12,
                friedman={"blocks": "image", "num_blocks": None, "skipped": "No blocks"})
    rank_views.section({"uncertainty": {"bbox_ap": ap}}, "bbox_ap")
    caption = st.texts("caption")[0]
    assert caption.startswith("HBB AP (pooled): 999 resamples of the 12 queries (seed 7; "
                              "each submission's boxes ranked and matched once, its AP "
                              "recomputed with each query weighted by how often its query is "
                              "drawn). Rank interval: the 95 % percentile")
    assert caption.endswith("over the 2 comparisons with the leader.")


def test_the_notes_are_warnings_in_rank_notes_order_as_text(st: Recorder) -> None:
    ranks = _ranks(warning="Thin evidence: *few* images", resolution_note="drew [more](x)",
                   disagreement={"groups_only": ["c"], "tests_only": [], "note": "c_1 <b>"})
    rank_views.section({"uncertainty": {"seg_macro_miou": ranks}}, "seg_macro_miou")
    warnings = st.arguments("warning")[:3]
    assert [a[0] for a, _ in warnings] == ["Thin evidence: \\*few\\* images",
                                           "drew \\[more\\](x)", "c_1 \\<b>"]
    assert all(k == {"icon": ":material/warning:"} for _, k in warnings)
    # a skipped test replaces the thin-evidence warning
    st.calls.clear()
    skipped = _ranks(skipped="Not tested: 2 images", warning="Thin evidence")
    rank_views.section({"uncertainty": {"seg_macro_miou": skipped}}, "seg_macro_miou")
    assert st.texts("warning") == ["Not tested: 2 images"]
    st.calls.clear()
    rank_views.section({"uncertainty": {"seg_macro_miou": _ranks()}}, "seg_macro_miou")
    assert st.texts("warning") == []  # no note: no warning


def test_the_table_figure_and_best_of_n(st: Recorder) -> None:
    """The table is :func:`rank_frame` with empty cells shown "—" and the value and
    difference to 3 decimals; the interval figure is drawn (of these ranks, labelled) unless
    the test was skipped; the best-of-N note names the leader, its score and share."""
    ranks = _ranks()
    rank_views.section({"uncertainty": {"seg_macro_miou": ranks}}, "seg_macro_miou")
    (args, kw), = st.arguments("dataframe")[:1]
    pd.testing.assert_frame_equal(args[0], rank_views.rank_frame(ranks))
    assert kw == {"hide_index": True, "placeholder": "—", "width": "stretch",
                  "column_config": {"value": NUMBER, "leader − this": NUMBER}}
    charts = st.arguments("plotly_chart")
    assert charts[0] == ((("intervals", id(ranks), "Segmentation macro mIoU"),),
                         {"width": "stretch", "key": "lb_rank_intervals"})
    infos = st.arguments("info")
    assert infos[0] == ((
        "The best of 3 scores (0.810, lead\\*1) is an optimistic estimate of the state of the "
        "art: picking the top of many noisy scores favours the lucky. On resampled images, "
        "the best score averages +0.0123 against it, and the leader ranks first (alone or "
        "tied) in 87 % of the resamples.",), {"icon": ":material/info:"})
    for best in ({"num_models": 3, "best": None, "optimism": 0.1},
                 {"num_models": 3, "best": 0.8, "optimism": None}):
        st.calls.clear()
        rank_views.section({"uncertainty": {"seg_macro_miou": _ranks(best_of_n=best)}},
                           "seg_macro_miou")
        assert not any(t.startswith("The best of") for t in st.texts("info"))
    st.calls.clear()
    rank_views.section({"uncertainty": {"seg_macro_miou": _ranks(skipped="Not tested")}},
                       "seg_macro_miou")
    assert [c[0][0][0] for c in st.arguments("plotly_chart")] == ["cd"]


# ---- Friedman -------------------------------------------------------------------------

def test_friedman_caption_and_diagram_of_the_blocks_used(st: Recorder) -> None:
    ranks = _ranks()
    rank_views.section({"uncertainty": {"seg_macro_miou": ranks}}, "seg_macro_miou")
    assert st.texts("subheader")[0] == "Friedman test and critical-difference diagram"
    assert st.texts("caption")[1] == (
        "Friedman χ² = 12.35, p = 0.00208 over 40 queries (those of the 1,500 where every "
        "submission's Segmentation macro mIoU is defined), average ranks per query (1 = "
        "best). Nemenyi's critical difference at α = 0.1: 0.568; a bar joins submissions it "
        "cannot tell apart (scikit-posthocs' pairwise p-values).")
    assert st.arguments("plotly_chart")[1] == (
        (("cd", id(ranks["friedman"]), "Segmentation macro mIoU"),),
        {"width": "stretch", "key": "lb_cd_diagram"})
    assert st.texts("warning") == []


def test_friedman_warns_skips_or_has_no_blocks(st: Recorder) -> None:
    rank_views._friedman({**_ranks()["friedman"], "warning": "Thin *evidence*"}, "L")
    assert st.arguments("warning") == [(("Thin \\*evidence\\*",), {"icon": ":material/warning:"})]
    assert len(st.arguments("plotly_chart")) == 1
    st.calls.clear()
    rank_views._friedman({"blocks": "image", "num_blocks": 1000, "num_units": 1234,
                          "skipped": "Not tested"}, "Presence MCC")
    assert st.calls[1:] == [Call("info", ("Not tested: 1,000 of 1,234 images have Presence "
                                      "MCC defined for every submission.",), {})]
    st.calls.clear()
    rank_views._friedman({"blocks": "image", "num_blocks": None,
                          "skipped": "AP has no value per image"}, "L")
    assert st.calls[1:] == [Call("info", ("AP has no value per image.",), {})]


# ---- the categories -------------------------------------------------------------------

def _cats(**kw: Any) -> dict[str, Any]:
    rows = [{"category": c, "num_queries": 5, "num_units": u, "a": 0.5, "b": 0.4, "diff": 0.1,
             "diff_low": 0.0, "diff_high": 0.2, "p": p, "q": q}
            for c, u, p, q in (("ship", 9, 0.01, 0.02), ("plane", 2, None, None),
                               ("bridge", 8, 0.2, 0.2))]
    return {"a": "lead*1", "b": "b*x", "unit": "image", "min_count": 3, "rows": rows,
            "warning": None, "resolution_note": None, **kw}


def test_categories_count_the_tested_and_state_the_minimum(st: Recorder) -> None:
    """The heading names the two submissions as text (their file names: a ``*`` is no
    emphasis); the caption counts the categories with a q-value and states the minimum."""
    cats = _cats(min_count=4)
    rank_views._categories(cats, "L", "images")
    assert st.calls[0] == Call("subheader", ("Per category: lead\\*1 against b\\*x",), {})
    assert st.calls[1] == Call("caption", (
        "L of the leader and the runner-up on each category's queries, with a paired "
        "bootstrap over its images; q-values by Benjamini–Hochberg over the 2 categories "
        "tested (those spanning at least 4 images, the minimum count; — below: a bootstrap "
        "over one or two images says nothing).",), {})
    (args, kw), = st.arguments("dataframe")
    pd.testing.assert_frame_equal(args[0], rank_views.category_frame(cats))
    assert kw == {"hide_index": True, "placeholder": "—", "width": "stretch",
                  "column_config": {"lead*1": NUMBER, "b*x": NUMBER,
                                    "leader − runner-up": NUMBER}}
    assert st.arguments("warning") == []
    st.calls.clear()
    rank_views._categories(None, "L", "images")
    rank_views._categories({}, "L", "images")
    assert st.calls == []


def test_categories_warn_thin_evidence_then_the_resolution(st: Recorder) -> None:
    rank_views._categories(_cats(warning="Thin *x*", resolution_note="Drew [y]"), "L",
                           "images")
    assert st.arguments("warning") == [(("Thin \\*x\\*",), {"icon": ":material/warning:"}),
                                       (("Drew \\[y\\]",), {"icon": ":material/warning:"})]
    st.calls.clear()
    rank_views._categories(_cats(resolution_note="Drew"), "L", "images")
    assert st.texts("warning") == ["Drew"]


def test_the_section_passes_the_categories_label_and_unit(st: Recorder,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    seen: list[tuple] = []
    monkeypatch.setattr(rank_views, "_categories", lambda *a: seen.append(a))
    cats = _cats()
    rank_views.section({"uncertainty": {"presence_mcc": _ranks(unit="query",
                                                                categories=cats)}},
                       "presence_mcc")
    assert seen == [(cats, "Presence MCC", "queries")]
    seen.clear()
    rank_views.section({"uncertainty": {"presence_mcc": _ranks()}}, "presence_mcc")
    assert seen == [(None, "Presence MCC", "images")]


# ---- the settings ---------------------------------------------------------------------

def test_the_settings_bind_the_options_fields_the_link_carries(
        st: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each setting is bound to the session key of the :class:`Options` field the sidebar
    reads and the link table writes (``rres``, ``alpha``, ``minn``, ``fblk``), within the
    options' bounds; the unit is the picker's, images by default (the ranking's unit)."""
    picked: list[tuple] = []

    class State:
        @staticmethod
        def bind(name: str, options: list | None = None) -> dict[str, Any]:
            return {"key": f"_w_{name}", "options": options}

    class Data:
        @staticmethod
        def unit_picker(gt: Any, auto: str | None = None) -> str:
            picked.append((gt, auto))
            return "query"

    monkeypatch.setattr(rank_views, "state", State)
    monkeypatch.setattr(rank_views, "analysis_data", Data)
    assert rank_views.settings_ui("GT") == "query"
    assert picked == [("GT", "image")]
    assert st.calls[0] == Call("expander", ("Rank uncertainty settings",), {"expanded": False})
    assert st.calls[1] == Call("columns", (4,), {}, ("expander",))
    widgets = {(c.where, c.name): (c.args, c.kwargs) for c in st.calls[2:]}
    assert widgets[("expander", "col0"), "number_input"] == (("Rank resamples",), {
        "min_value": RANK_RESAMPLE_BOUNDS[0], "max_value": RANK_RESAMPLE_BOUNDS[1],
        "step": 100, "key": "_w_rank_resamples", "options": None})
    assert widgets[("expander", "col1"), "number_input"] == (
        ("α (tests; intervals at 1 − α)",), {
        "min_value": ALPHA_BOUNDS[0], "max_value": ALPHA_BOUNDS[1], "step": 0.01,
        "format": "%.3f", "key": "_w_alpha", "options": None})
    assert widgets[("expander", "col2"), "number_input"] == ((
        "Minimum count (images or queries, as resampled) to test a category or slice",), {
        "min_value": MIN_COUNT_BOUNDS[0], "max_value": MIN_COUNT_BOUNDS[1], "step": 1,
        "key": "_w_min_count", "options": None})
    (label, choices), kw = widgets[("expander", "col3"), "radio"]
    assert (label, choices) == ("Friedman blocks", ["image", "query"])
    assert kw["horizontal"] is True and kw["key"] == "_w_friedman_blocks"
    assert kw["options"] == ["image", "query"]
    assert [kw["format_func"](c) for c in choices] == ["images", "queries"]
    # the keys bound are Options fields and link parameters
    bound = [c.kwargs["key"].removeprefix("_w_") for c in st.calls[2:] if "key" in c.kwargs]
    fields = {f.name for f in dataclasses.fields(Options)}
    keys = {p.key for p in links.SCHEMA}
    assert bound == ["rank_resamples", "alpha", "min_count", "friedman_blocks"]
    assert set(bound) <= fields and set(bound) <= keys
    assert math.isfinite(RANK_RESAMPLE_BOUNDS[1])
