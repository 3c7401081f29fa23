"""Rules of ``ovearth_core.analysis.standings`` that mutation testing found unpinned (issue 47).

Each test states one rule of the leaderboard's maths: the direction of a ranking (higher is
better, an undefined value and a modality not submitted last, ties in given order), who
counts (models that submit a metric's modality, categories with a contribution, the models
where both MCC and mIoU are defined), what a key includes (categories sorted, images in order
of first appearance, rows of a category summed), the top-k cap below the number of models,
and which option reaches which step (rank resamples, alpha, minimum count, Friedman's blocks,
seed, unit). References: scipy's ``spearmanr``, numpy on hand-built rows, hand-worked values.
Hand-built evaluator results (summary, coverage, per-query rows), no evaluation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.stats import spearmanr

from ovearth_core.analysis import standings
from ovearth_core.options import Options


def _mcc(tp: int, fp: int, tn: int, fn: int) -> float | None:
    den = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)) ** 0.5
    return None if den == 0 else (tp * tn - fp * fn) / den


def _result(ious: list[float | None], cats: list[str], images: list[str],
            present: list[tuple[bool, bool]], task: str = "open_vocabulary",
            not_submitted: tuple[str, ...] = ()) -> dict[str, Any]:
    """An evaluator result: per query an IoU (``None``: the query does not count for
    segmentation), its category and image, and its presence (gt, prediction); the summary
    computed by hand (macro mIoU: the mean IoU of the queries that count)."""
    rows = []
    for k, (iou, cat, image, (gt, pred)) in enumerate(zip(ious, cats, images, present,
                                                          strict=True)):
        seg = None if iou is None else {"evaluated": True, "iou": iou, "intersection": iou,
                                        "union": 1.0}
        rows.append({"sample_id": f"q{k}", "category": cat, "image_path": image,
                     "gt_present": gt, "pred_present": pred, "seg": seg})
    counted = [x for x in ious if x is not None]
    cells = {c: sum(1 for gt, pred in present if (gt, pred) == c)
             for c in ((True, True), (False, True), (False, False), (True, False))}
    mcc = _mcc(cells[(True, True)], cells[(False, True)], cells[(False, False)],
               cells[(True, False)])
    miou = sum(counted) / len(counted) if counted else None
    return {"task": task, "per_sample": rows,
            "summary": {"seg": {"positive_macro_miou": miou, "positive_micro_miou": miou},
                        "presence": {"mcc": mcc}},
            "coverage": {"not_submitted_modalities": list(not_submitted)}}


CATS = ["ship", "plane", "ship", "bridge", "plane", "ship"]
IMAGES = ["b.png", "a.png", "b.png", "c.png", "a.png", "d.png"]
PRESENT = [(True, True), (True, False), (False, False), (True, True), (False, True),
           (True, True)]


def _board() -> tuple[list[str], list[dict[str, Any]]]:
    """Three models: "m2" best by mIoU, "m0" second, "m1" last."""
    ious = [[0.5, 0.6, 0.4, 0.7, 0.3, 0.5], [0.1, 0.2, 0.3, 0.2, 0.1, 0.2],
            [0.9, 0.8, 0.7, 0.9, 0.8, 0.9]]
    flips = [PRESENT, [(g, not p) if i % 2 else (g, p) for i, (g, p) in enumerate(PRESENT)],
             [(g, g) for g, _ in PRESENT[:-1]] + [(False, True)]]
    return ["m0", "m1", "m2"], [_result(i, CATS, IMAGES, f) for i, f in
                                zip(ious, flips, strict=True)]


# --- pieces and sums ------------------------------------------------------------------------

def test_query_pieces_keep_rows_by_id_categories_sorted_images_by_first_appearance() -> None:
    _, results = _board()
    got = standings.query_pieces(results[0], ["seg_macro_miou"])
    assert got.query_ids == tuple(f"q{k}" for k in range(6))
    assert got.categories == ("bridge", "plane", "ship")
    assert got.category.tolist() == [2, 1, 2, 0, 1, 2]
    assert got.images == ("b.png", "a.png", "c.png", "d.png")
    assert got.image.tolist() == [0, 1, 0, 2, 1, 3]
    assert got.query_images() == IMAGES
    assert list(got.pieces) == ["seg_macro_miou"]
    assert got.pieces["seg_macro_miou"].tolist() == [[x, 1.0] for x in
                                                     [0.5, 0.6, 0.4, 0.7, 0.3, 0.5]]
    assert list(standings.query_pieces(results[0]).pieces) == list(standings.METRICS)
    # a board entry holds its pieces: they are returned as they are
    assert standings.query_pieces({standings.PIECES: got}) is got


def test_sums_add_each_categorys_rows() -> None:
    _, results = _board()
    sums = standings.query_pieces(results[0], ["seg_macro_miou"]).sums()
    assert sums.categories == ("bridge", "plane", "ship")
    assert sums.sums["seg_macro_miou"].ravel().tolist() == pytest.approx(
        [0.7, 1.0, 0.6 + 0.3, 2.0, 0.5 + 0.4 + 0.5, 3.0])
    assert standings.category_sums({standings.SUMS: sums}) is sums
    again = standings.category_sums(results[0], ["seg_macro_miou"])
    assert again.categories == sums.categories and list(again.sums) == ["seg_macro_miou"]
    assert again.sums["seg_macro_miou"].tolist() == sums.sums["seg_macro_miou"].tolist()


def test_category_stats_take_the_union_of_categories_zeros_where_none() -> None:
    a = _result([0.5, 0.2], ["ship", "plane"], ["x", "y"], PRESENT[:2])
    b = _result([0.9, 0.4], ["ship", "harbor"], ["x", "y"], PRESENT[:2])
    categories, stats = standings.category_stats([a, b], "seg_macro_miou")
    assert categories == ["harbor", "plane", "ship"]
    assert stats.tolist() == [[[0, 0], [0.2, 1], [0.5, 1]], [[0.4, 1], [0, 0], [0.9, 1]]]
    assert standings.metric_values(stats, "seg_macro_miou").tolist() == [0.35, 0.65]
    empty = _result([], [], [], [])
    categories, stats = standings.category_stats([empty, a], "seg_macro_miou")
    assert categories == ["plane", "ship"] and stats[0].tolist() == [[0, 0], [0, 0]]


def test_available_metrics_are_those_of_the_results_modalities_in_order() -> None:
    _, results = _board()
    assert standings.available_metrics(results[0]) == ["seg_macro_miou", "seg_micro_miou",
                                                       "presence_mcc"]
    no_seg = {**results[0], "summary": {"seg": None, "presence": {"mcc": 0.1}}}
    assert standings.available_metrics(no_seg) == ["presence_mcc"]


# --- ranking --------------------------------------------------------------------------------

def test_top_k_puts_the_highest_first_ties_in_order_undefined_last() -> None:
    values = np.array([0.2, np.nan, 0.9, 0.2, 0.5])
    assert standings.top_k(values, 5).tolist() == [2, 4, 0, 3, 1]
    assert standings.top_k(values, 2).tolist() == [2, 4]
    assert standings.top_k(np.array([[0.1, 0.3], [0.3, 0.1]]), 1).tolist() == [[1], [0]]


def test_spearman_rows_equal_scipy_and_undefined_ranks_last() -> None:
    reference = np.array([0.3, 0.1, np.nan, 0.8])
    rows = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.1, 0.9], [0.2, 0.2, 0.2, 0.2]])
    got = standings.spearman_rows(reference, rows)
    filled = np.array([0.3, 0.1, -1.0, 0.8])  # undefined: below every value
    assert got[:2] == pytest.approx([spearmanr(filled, r).statistic for r in rows[:2]])
    assert np.isnan(got[2])  # a constant ranking: undefined
    assert standings.spearman([0.1, 0.5, 0.3], [1, 3, 2]) == pytest.approx(1.0)
    assert standings.spearman([0.1, 0.5, 0.3], [3, 1, 2]) == pytest.approx(-1.0)


def test_rank_table_ranks_a_modality_not_submitted_last_with_none() -> None:
    names, results = _board()
    results[2]["coverage"]["not_submitted_modalities"] = ["segmentation"]
    table = standings.rank_table(names, results, ["seg_macro_miou", "presence_mcc"])
    assert table["models"] == names
    assert table["metrics"]["seg_macro_miou"] == [
        results[0]["summary"]["seg"]["positive_macro_miou"],
        results[1]["summary"]["seg"]["positive_macro_miou"], None]
    assert table["ranking"]["seg_macro_miou"] == ["m0", "m1", "m2"]
    assert table["not_submitted"] == {"seg_macro_miou": ["m2"], "presence_mcc": []}
    mcc = [r["summary"]["presence"]["mcc"] for r in results]
    assert table["metrics"]["presence_mcc"] == mcc
    assert table["ranking"]["presence_mcc"] == [names[i] for i in
                                                np.argsort([-x for x in mcc], kind="stable")]
    # a summary without the modality's block: None, ranked last
    results[0]["summary"]["seg"] = None
    table = standings.rank_table(names, results, ["seg_macro_miou"])
    assert table["metrics"]["seg_macro_miou"][0] is None
    assert table["ranking"]["seg_macro_miou"] == ["m1", "m0", "m2"]
    # default: the first result's metrics
    assert list(standings.rank_table(names[1:], results[1:])["metrics"]) == [
        "seg_macro_miou", "seg_micro_miou", "presence_mcc"]


def test_submits_reads_the_coverage() -> None:
    _, results = _board()
    assert standings.submits(results[0], "seg_macro_miou")
    gone = {**results[0], "coverage": {"not_submitted_modalities": ["segmentation"]}}
    assert not standings.submits(gone, "seg_macro_miou")
    assert standings.submits(gone, "presence_mcc")


def test_add_ap_ranking_ranks_by_each_ap_with_no_report_last() -> None:
    """bbox AP every point: m1 0.7, m0 0.4, m2 no report (None, last); DOTA's mAP: from the
    voc_devkit block; oriented boxes: no model has them, no entry."""
    names, results = _board()
    results[0]["coverage"]["not_submitted_modalities"] = []
    reports = [{"bbox": {"ap_every_point": 0.4, "voc_devkit": {"map_11_point": 0.2,
                                                               "num_categories": 3}}},
               {"bbox": {"ap_every_point": 0.7, "voc_devkit": {"map_11_point": 0.1,
                                                               "num_categories": 3}}},
               None]
    table = standings.rank_table(names, results, ["seg_macro_miou"])
    standings.add_ap_ranking(table, results, reports)
    assert table["metrics"]["bbox_ap"] == [0.4, 0.7, None]
    assert table["ranking"]["bbox_ap"] == ["m1", "m0", "m2"]
    assert table["metrics"]["bbox_dota_map"] == [0.2, 0.1, None]
    assert table["ranking"]["bbox_dota_map"] == ["m0", "m1", "m2"]
    assert table["not_submitted"]["bbox_ap"] == []
    assert "oriented_bbox_ap" not in table["metrics"]
    # a model whose submission has no boxes: None and named, though its report has a block
    results[1]["coverage"]["not_submitted_modalities"] = ["bbox"]
    table = standings.rank_table(names, results, ["seg_macro_miou"])
    standings.add_ap_ranking(table, results, reports)
    assert table["metrics"]["bbox_ap"] == [0.4, None, None]
    assert table["not_submitted"]["bbox_ap"] == ["m1"]
    # an empty block is no report
    table = standings.rank_table(names, results, ["seg_macro_miou"])
    standings.add_ap_ranking(table, results, [{"bbox": {}}, None, None])
    assert "bbox_ap" not in table["metrics"]


def test_default_metric_is_the_first_with_a_value() -> None:
    assert standings.default_metric({"metrics": {"a": [None, None], "b": [None, 0.2],
                                                 "c": [0.1]}}) == "b"
    assert standings.default_metric({"metrics": {"a": [None]}}) is None


# --- subsets and stability ------------------------------------------------------------------

def test_random_subsets_hold_exactly_size_categories() -> None:
    s = standings.random_subsets(6, 4, 50, np.random.default_rng(1))
    assert s.shape == (50, 6) and set(s.ravel().tolist()) == {0.0, 1.0}
    assert s.sum(axis=1).tolist() == [4.0] * 50


def test_subset_stability_drops_unused_categories_skips_large_sizes_and_caps_k() -> None:
    """Categories 1 and 3 have no contribution: 3 usable; size 4 skipped, size 3 (all) has
    Spearman 1 and full recovery; k = 5 capped at 3 models - 1 = 2."""
    iou = np.array([[0.9, 0, 0.2, 0, 0.6], [0.5, 0, 0.5, 0, 0.4], [0.3, 0, 0.9, 0, 0.2]])
    count = np.array([[1, 0, 1, 0, 1]] * 3, dtype=float)
    stats = np.stack([iou, count], axis=-1)
    out = standings.subset_stability(stats, "seg_macro_miou", sizes=(1, 3, 4), n_subsets=60,
                                     seed=2, k=5)
    assert (out["metric"], out["num_models"], out["num_categories"], out["num_subsets"],
            out["seed"], out["k"]) == ("seg_macro_miou", 3, 3, 60, 2, 2)
    assert [r["size"] for r in out["sizes"]] == [1, 3]
    whole = out["sizes"][1]
    assert whole == {"size": 3, "median_spearman": 1.0, "q25_spearman": 1.0,
                     "q75_spearman": 1.0, "num_defined": 60, "median_top_k_recovery": 1.0,
                     "mean_top_k_recovery": 1.0}
    # size 1: each subset one usable category, the ranking of that category alone
    per_cat = iou[:, [0, 2, 4]]
    full = iou[:, [0, 2, 4]].mean(axis=1)
    rho = {c: spearmanr(full, per_cat[:, c]).statistic for c in range(3)}
    top2 = set(np.argsort(-full)[:2])
    rec = {c: len(top2 & set(np.argsort(-per_cat[:, c])[:2])) / 2 for c in range(3)}
    rng = np.random.default_rng(2)
    picks = np.argsort(rng.random((60, 3)), axis=1)[:, 0]
    rhos = np.array([rho[c] for c in picks])
    one = out["sizes"][0]
    assert one["median_spearman"] == pytest.approx(np.median(rhos))
    assert one["q25_spearman"] == pytest.approx(np.quantile(rhos, 0.25))
    assert one["q75_spearman"] == pytest.approx(np.quantile(rhos, 0.75))
    assert one["num_defined"] == 60
    recs = np.array([rec[c] for c in picks])
    assert one["median_top_k_recovery"] == pytest.approx(np.median(recs))
    assert one["mean_top_k_recovery"] == pytest.approx(recs.mean())


def test_subset_stability_k_is_at_least_one_and_undefined_rhos_are_left_out() -> None:
    """Two models equal on every category: every subset's ranking is constant, Spearman
    undefined in all of them (no median, none defined); k = 1 (2 models - 1)."""
    stats = np.stack([np.full((2, 3), 0.5), np.ones((2, 3))], axis=-1)
    out = standings.subset_stability(stats, "seg_macro_miou", sizes=(2,), n_subsets=10, k=0)
    assert out["k"] == 1
    row = out["sizes"][0]
    assert (row["median_spearman"], row["q25_spearman"], row["q75_spearman"],
            row["num_defined"]) == (None, None, None, 0)
    assert row["mean_top_k_recovery"] == 1.0  # both rank model 0 first (ties: given order)


# --- MCC against mIoU, the report, the ranks' options ----------------------------------------

def test_mcc_vs_miou_counts_models_submitting_both_with_both_defined() -> None:
    names, results = _board()
    extra = _result([0.4] * 6, CATS, IMAGES, [(True, True)] * 6)  # MCC undefined: no negatives
    no_seg = _result([None] * 6, CATS, IMAGES, PRESENT)  # no query counts: mIoU undefined
    gone = {**results[0], "coverage": {"not_submitted_modalities": ["segmentation"]}}
    out = standings.mcc_vs_miou([*results, extra, no_seg, gone])
    mcc = [r["summary"]["presence"]["mcc"] for r in results]
    miou = [r["summary"]["seg"]["positive_macro_miou"] for r in results]
    assert out == {"spearman": pytest.approx(spearmanr(mcc, miou).statistic),
                   "num_models": 3}
    assert standings.mcc_vs_miou(results[:1]) == {"spearman": None, "num_models": 1}


def test_leaderboard_report_of_no_results_is_empty() -> None:
    assert standings.leaderboard_report([], []) == {
        "models": [], "metrics": {}, "ranking": {}, "stability": {}, "mcc_vs_miou": None}


def test_leaderboard_report_keeps_models_that_submit_in_each_stability() -> None:
    """m2 does not submit segmentation: seg stability over m0 and m1 only; the presence
    MCC over all three; a task other than open vocabulary has no MCC-versus-mIoU."""
    names, results = _board()
    results[2]["coverage"]["not_submitted_modalities"] = ["segmentation"]
    out = standings.leaderboard_report(names, results, sizes=(1,), n_subsets=5)
    assert list(out["stability"]) == ["seg_macro_miou", "seg_micro_miou", "presence_mcc"]
    assert out["stability"]["seg_macro_miou"]["num_models"] == 2
    assert out["stability"]["presence_mcc"]["num_models"] == 3
    assert out["stability"]["presence_mcc"]["num_subsets"] == 5
    assert out["mcc_vs_miou"]["num_models"] == 2
    assert "uncertainty" not in out
    only = standings.leaderboard_report(names, results, ["seg_macro_miou"], sizes=(1,),
                                        n_subsets=5)
    assert list(only["stability"]) == ["seg_macro_miou"]
    results[1]["coverage"]["not_submitted_modalities"] = ["segmentation"]
    fewer = standings.leaderboard_report(names, results, sizes=(1,), n_subsets=5)
    assert "seg_macro_miou" not in fewer["stability"]  # one model left: no correlation
    referring = [{**r, "task": "referring"} for r in results]
    assert standings.leaderboard_report(names, referring, sizes=(1,),
                                        n_subsets=5)["mcc_vs_miou"] is None


def test_leaderboard_report_passes_its_options_seed_and_unit_to_the_ranks() -> None:
    names, results = _board()
    seen: list[tuple[Any, ...]] = []

    def uncertainty(n: Any, res: Any, pieces: Any, options: Any, seed: int, unit: str,
                    ) -> dict[str, Any]:
        seen.append((list(n), len(res), [p.query_ids for p in pieces], options, seed, unit))
        return {"called": True}

    opts = Options("vocabulary", "segmentation", rank_resamples=200)
    out = standings.leaderboard_report(names, results, ["seg_macro_miou"], sizes=(1,),
                                       n_subsets=5, seed=9, ranks=opts, unit="query",
                                       uncertainty=uncertainty)
    assert out["uncertainty"] == {"called": True}
    assert seen == [(names, 3, [tuple(f"q{k}" for k in range(6))] * 3, opts, 9, "query")]


def test_rank_uncertainties_rank_the_models_that_submit_with_the_options() -> None:
    """Each ranked metric over the models that submit its modality (m1 does not submit
    segmentation); resamples, alpha, minimum count and Friedman's blocks from the options;
    seed and unit as given."""
    names, results = _board()
    results[1]["coverage"]["not_submitted_modalities"] = ["segmentation"]
    pieces = [standings.query_pieces(r) for r in results]
    opts = Options("vocabulary", "segmentation", rank_resamples=150, alpha=0.1, min_count=3,
                   friedman_blocks="query")
    out = standings.rank_uncertainties(names, results, pieces, opts, 4, "query")
    assert list(out) == ["seg_macro_miou", "seg_micro_miou", "presence_mcc"]
    seg = out["seg_macro_miou"]
    assert seg["models"] == ["m2", "m0"]
    assert (seg["n_resamples_asked"], seg["alpha"], seg["min_count"], seg["seed"],
            seg["unit"]) == (150, 0.1, 3, 4, "query")
    assert seg["num_units"] == 6  # the queries are the units
    assert seg["friedman"]["blocks"] == "query"
    assert sorted(out["presence_mcc"]["models"]) == names
    assert standings.ranked_models(results) == {"seg_macro_miou": [0, 2],
                                                "seg_micro_miou": [0, 2],
                                                "presence_mcc": [0, 1, 2]}
    results[0]["coverage"]["not_submitted_modalities"] = ["segmentation"]
    assert standings.ranked_models(results) == {"presence_mcc": [0, 1, 2]}


# --- survivors of the first mutmut run --------------------------------------------------------

def test_add_ap_ranking_reaches_optional_protocols_and_every_modality() -> None:
    """NMS-mAP is ranked when the report was computed with it; oriented boxes are ranked
    though no model has a bbox block (each AP is looked at on its own)."""
    names, results = _board()
    block = {"coco": {"nms_map@[0.5:0.95]": 0.3, "num_categories": 3}}
    reports = [{"bbox": block, "nms_ap": True}, {"bbox": {"coco": {
        "nms_map@[0.5:0.95]": 0.5, "num_categories": 3}}, "nms_ap": True}, None]
    table = standings.rank_table(names, results, ["seg_macro_miou"])
    standings.add_ap_ranking(table, results, reports)
    assert table["metrics"]["bbox_nms_map"] == [0.3, 0.5, None]
    assert table["ranking"]["bbox_nms_map"] == ["m1", "m0", "m2"]
    oriented = [{"oriented_bbox": {"ap_every_point": 0.6}}, None, {"oriented_bbox": {
        "ap_every_point": 0.8}}]
    table = standings.rank_table(names, results, ["seg_macro_miou"])
    standings.add_ap_ranking(table, results, oriented)
    assert table["ranking"]["oriented_bbox_ap"] == ["m2", "m0", "m1"]


def _many(n: int) -> tuple[list[str], list[dict[str, Any]]]:
    ious = [[0.1 * (m + 1)] * 6 for m in range(n)]
    return [f"m{m}" for m in range(n)], [_result(i, CATS, IMAGES, PRESENT) for i in ious]


def test_leaderboard_report_defaults_and_its_ap_and_one_model() -> None:
    """Defaults: 1,000 subsets, seed 0, top 5 (7 models: 5 < 6), resampling images; the AP
    reports reach the ranking; one model has no stability (no crash)."""
    names, results = _many(7)
    seen: list[str] = []
    out = standings.leaderboard_report(
        names, results, ["seg_macro_miou"], sizes=(2,),
        average_precision=[{"bbox": {"ap_every_point": 0.1 * m}} for m in range(7)],
        ranks=Options("vocabulary", "segmentation"),
        uncertainty=lambda *args: seen.append(args[5]) or {})
    stability = out["stability"]["seg_macro_miou"]
    assert (stability["num_subsets"], stability["seed"], stability["k"]) == (1000, 0, 5)
    assert seen == ["image"]
    assert out["ranking"]["bbox_ap"] == names[::-1]
    one = standings.leaderboard_report(names[:1], results[:1], sizes=(2,), n_subsets=5)
    assert one["stability"] == {} and one["ranking"]["seg_macro_miou"] == ["m0"]


def test_the_ranks_get_pieces_of_every_ranked_metric_of_the_first_result() -> None:
    names, results = _board()
    keys: list[list[str]] = []
    standings.leaderboard_report(names, results, ["seg_macro_miou"], sizes=(2,), n_subsets=5,
                                 ranks=Options("vocabulary", "segmentation"),
                                 uncertainty=lambda *args: keys.append(
                                     [list(p.pieces) for p in args[2]]) or {})
    assert keys == [[["seg_macro_miou", "seg_micro_miou", "presence_mcc"]] * 3]


def test_ranked_models_read_the_first_results_metrics() -> None:
    names, results = _board()
    results[1]["summary"] = {"seg": None, "presence": results[1]["summary"]["presence"]}
    assert list(standings.ranked_models(results)) == ["seg_macro_miou", "seg_micro_miou",
                                                      "presence_mcc"]


# --- survivors of the second mutmut run (the whole module) -------------------------------------

def test_a_report_without_the_ap_key_gives_none_there() -> None:
    """NMS-mAP is ranked because one report has it; another report's block was computed
    without NMS-AP: that model's value is None (ranked last), not a crash."""
    names, results = _board()
    reports = [{"bbox": {"coco": {"nms_map@[0.5:0.95]": 0.3, "num_categories": 3}},
                "nms_ap": True}, {"bbox": {"ap_every_point": 0.5}}, None]
    table = standings.rank_table(names, results, ["seg_macro_miou"])
    standings.add_ap_ranking(table, results, reports)
    assert table["metrics"]["bbox_nms_map"] == [0.3, None, None]
    assert table["ranking"]["bbox_nms_map"] == ["m0", "m1", "m2"]


def test_names_results_and_reports_that_do_not_line_up_are_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One name, report or result too few is an error, never a shorter table that pairs the
    rest wrongly."""
    names, results = _board()
    with pytest.raises(ValueError):
        standings.rank_table(names[:2], results, ["seg_macro_miou"])
    table = standings.rank_table(names, results, ["seg_macro_miou"])
    with pytest.raises(ValueError):
        standings.add_ap_ranking(table, results, [{"bbox": {"ap_every_point": 0.4}}, None])
    short = {**table, "models": names[:2]}
    with pytest.raises(ValueError):
        standings.add_ap_ranking(short, results, [{"bbox": {"ap_every_point": 0.4}}, None,
                                                  None])
    # the AP ranks: one run per result
    from ovearth_core.analysis.ap_bootstrap import APRun

    table["metrics"]["bbox_ap"] = [0.1, 0.2, 0.3]
    pieces = [standings.query_pieces(r) for r in results]
    runs = [APRun({}, {"bbox": _curves("q0")})] * 2
    _ap_calls(monkeypatch)
    with pytest.raises(ValueError):
        standings.ap_uncertainties(table, results, pieces, runs,
                                   Options("vocabulary", "bbox"), 0, "image")


def test_the_sums_have_a_row_for_every_category_even_without_queries() -> None:
    """Pieces whose last category has no query (as a board entry's may): its row is
    zeros, the other rows the sums of their queries."""
    pieces = standings.QueryPieces(("q0", "q1", "q2"), ("a", "b", "c"),
                                   np.array([1, 0, 1], dtype=np.intp), ("i",),
                                   np.zeros(3, dtype=np.intp),
                                   {"seg_macro_miou": np.array([[0.5, 1], [0.2, 1],
                                                                [0.25, 1]])})
    got = pieces.sums()
    assert got.sums["seg_macro_miou"].tolist() == [[0.2, 1], [0.75, 2], [0, 0]]


def _seven() -> np.ndarray:
    """Seven models on six categories (IoU sums, one query each), all ranks distinct."""
    rng = np.random.default_rng(5)
    iou = rng.random((7, 6))
    return np.stack([iou, np.ones((7, 6))], axis=-1)


def test_subset_stability_defaults_1000_subsets_seed_0_top_5_and_every_size_that_fits() -> None:
    """The defaults (the paper's): 1,000 subsets per size drawn with seed 0, the top 5; of
    the sizes 5, 20, 50, 100, 150 only 5 fits six categories. The size-5 row equals the one
    of an explicit call with those values."""
    stats = _seven()
    out = standings.subset_stability(stats, "seg_macro_miou")
    assert (out["num_subsets"], out["seed"], out["k"]) == (1000, 0, 5)
    assert [r["size"] for r in out["sizes"]] == [5]
    explicit = standings.subset_stability(stats, "seg_macro_miou", sizes=(5,),
                                          n_subsets=1000, seed=0, k=5)
    assert out["sizes"] == explicit["sizes"]
    # a size too large among the sizes does not end the list
    some = standings.subset_stability(stats, "seg_macro_miou", sizes=(2, 9, 4, 6),
                                      n_subsets=20)
    assert [r["size"] for r in some["sizes"]] == [2, 4, 6]


def test_subset_draws_are_those_of_the_seed() -> None:
    """Subsets of size 2 from 6 categories: each row the 2 categories with the smallest of
    numpy's uniform draws (``default_rng(seed).random``), so a seed gives the same subsets;
    checked against the brute-force ranking by the drawn subsets."""
    stats = _seven()
    out = standings.subset_stability(stats, "seg_macro_miou", sizes=(2,), n_subsets=30,
                                     seed=3, k=2)
    draws = np.random.default_rng(3).random((30, 6))
    full = stats[:, :, 0].mean(axis=1)
    rhos, recs = [], []
    for row in draws:
        cats = np.argsort(row)[:2]
        sub = stats[:, cats, 0].mean(axis=1)
        rhos.append(spearmanr(full, sub).statistic)
        recs.append(len(set(np.argsort(-full)[:2]) & set(np.argsort(-sub)[:2])) / 2)
    row = out["sizes"][0]
    assert row["median_spearman"] == pytest.approx(np.median(rhos))
    assert row["mean_top_k_recovery"] == pytest.approx(np.mean(recs))


def test_mcc_vs_miou_reads_past_a_model_left_out_and_needs_two() -> None:
    """A model that does not submit segmentation, first, is skipped, not the end of the
    list; two models are enough for a correlation (their rho is +1 or -1); fewer have
    none."""
    names, results = _board()
    gone = {**results[0], "coverage": {"not_submitted_modalities": ["segmentation"]}}
    out = standings.mcc_vs_miou([gone, *results])
    mcc = [r["summary"]["presence"]["mcc"] for r in results]
    miou = [r["summary"]["seg"]["positive_macro_miou"] for r in results]
    assert out == {"spearman": pytest.approx(spearmanr(mcc, miou).statistic),
                   "num_models": 3}
    two = standings.mcc_vs_miou(results[:2])
    assert two == {"spearman": pytest.approx(spearmanr(mcc[:2], miou[:2]).statistic),
                   "num_models": 2}
    assert two["spearman"] in (pytest.approx(1.0), pytest.approx(-1.0))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert standings.mcc_vs_miou([gone]) == {"spearman": None, "num_models": 0}


def test_the_report_passes_k_and_reads_past_a_metric_without_two_models() -> None:
    names, results = _board()
    results[1]["coverage"]["not_submitted_modalities"] = ["segmentation"]
    results[2]["coverage"]["not_submitted_modalities"] = ["segmentation"]
    out = standings.leaderboard_report(names, results, sizes=(1,), n_subsets=5, k=1)
    assert list(out["stability"]) == ["presence_mcc"]  # the seg metrics: one model each
    assert out["stability"]["presence_mcc"]["k"] == 1


def test_the_ranks_pieces_hold_the_first_results_metrics_not_the_seconds() -> None:
    names, results = _board()
    results[1]["summary"] = {"seg": None, "presence": results[1]["summary"]["presence"]}
    keys: list[list[str]] = []
    standings.leaderboard_report(names, results, ["presence_mcc"], sizes=(2,), n_subsets=5,
                                 ranks=Options("vocabulary", "segmentation"),
                                 uncertainty=lambda *args: keys.append(
                                     list(args[2][0].pieces)) or {})
    assert keys == [["presence_mcc", "seg_macro_miou", "seg_micro_miou"]]


def test_a_board_entrys_stored_sums_are_what_the_stability_reads() -> None:
    """A board entry holds its category sums (its rows are gone): the stability reads them
    as they are. Here m0's entry holds sums over a fourth category, "zzz", that its pieces
    do not have: the stability counts 4 categories with data (3 from the pieces)."""
    names, results = _board()
    held = standings.CategorySums(("bridge", "plane", "ship", "zzz"), {
        "seg_macro_miou": np.array([[0.7, 1], [0.9, 2], [1.4, 3], [0.5, 1]])})
    entry = {**results[0], standings.SUMS: held,
             standings.PIECES: standings.query_pieces(results[0])}
    out = standings.leaderboard_report(names, [entry, *results[1:]], ["seg_macro_miou"],
                                       sizes=(4,), n_subsets=5)
    stability = out["stability"]["seg_macro_miou"]
    assert stability["num_categories"] == 4
    assert [r["size"] for r in stability["sizes"]] == [4]


def _curves(*query_ids: str, nms: bool = False) -> Any:
    """A modality's curves as ap_uncertainties reads them: their queries and families."""
    from ovearth_core.analysis.ap_bootstrap import APCurves

    families = {"voc": None, "coco": None, **({"nms_categories": None} if nms else {})}
    return APCurves(tuple(query_ids), families)  # type: ignore[arg-type]


def _ap_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def record(names: Any, observed: Any, curves: Any, key: str, query_units: Any,
               n_units: int, **kw: Any) -> dict[str, Any]:
        assert all(u.dtype == np.intp for u in query_units)  # indices, even when empty
        seen.append({"names": list(names), "observed": observed, "curves": list(curves),
                     "key": key, "units": [u.tolist() for u in query_units],
                     "n_units": n_units, **kw})
        return {"ap": key}

    monkeypatch.setattr(standings, "ap_rank_uncertainty", record)
    return seen


def test_ap_ranks_resample_the_models_with_curves_that_submit_the_modality(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Four models: m0, m1 and m2 with curves, m3 with a report only (no curves: left
    out). HBB AP: m1 does not submit boxes, so m0 and m2 (values 0.4 and 0.7); NMS-mAP:
    only m0's and m2's curves were computed with NMS-AP, m2's value undefined (nan); OBB AP:
    m1 and m2 have OBB curves, m0 none: m1 and m2; AI-TOD: no curves, not resampled. Each
    curve's queries become units: the image of each query in the first result's rows (b, a,
    b, c, a, d: images 0..3), or the query itself; the options, seed and unit as given."""
    from ovearth_core.analysis.ap_bootstrap import APRun

    names, results = _board()
    names, results = [*names, "m3"], [*results, _result([0.2] * 6, CATS, IMAGES, PRESENT)]
    results[1]["coverage"]["not_submitted_modalities"] = ["bbox"]
    # the first result's rows: q0..q5 on images b, a, b, c, a, d; the others' images differ
    other = _result([0.2] * 6, CATS, ["z.png"] * 6, PRESENT)
    pieces = [standings.query_pieces(results[0]), *[standings.query_pieces(other)] * 3]
    c0, c2 = _curves("q5", "q0", "q3", nms=True), _curves("q4", "q1", nms=True)
    o1, o2 = _curves(), _curves("q3", "q1")  # m1: no OBB query in its curves
    runs: list[Any] = [APRun({}, {"bbox": c0}), APRun({}, {"bbox": _curves("q0"),
                                                          "oriented_bbox": o1}),
                       APRun({}, {"bbox": c2, "oriented_bbox": o2}),
                       {"bbox": {"ap_every_point": 0.9}}]
    table = {"models": names, "metrics": {
        "seg_macro_miou": [0.5, 0.4, 0.3, 0.2], "bbox_ap": [0.4, 0.5, 0.7, 0.9],
        "bbox_nms_map": [0.3, None, None, 0.1], "bbox_aitod_map": [0.1, 0.2, 0.3, 0.4],
        "oriented_bbox_ap": [0.1, 0.2, 0.6, None]}}
    seen = _ap_calls(monkeypatch)
    opts = Options("vocabulary", "bbox", rank_resamples=300, alpha=0.1, min_count=4,
                   friedman_blocks="query")
    out = standings.ap_uncertainties(table, results, pieces, runs, opts, 11, "image")
    assert out == {"bbox_ap": {"ap": "ap_every_point"},
                   "bbox_nms_map": {"ap": "coco.nms_map@[0.5:0.95]"},
                   "oriented_bbox_ap": {"ap": "ap_every_point"}}
    settings = {"n_resamples": 300, "seed": 11, "alpha": 0.1, "unit": "image",
                "min_count": 4, "blocks": "query"}
    hbb, nms, obb = seen
    assert {k: hbb[k] for k in settings} == settings
    assert (hbb["names"], hbb["observed"].tolist(), hbb["key"], hbb["metric"]) == (
        ["m0", "m2"], [0.4, 0.7], "ap_every_point", "bbox_ap")
    assert hbb["curves"][0] is c0 and hbb["curves"][1] is c2
    assert (hbb["units"], hbb["n_units"]) == ([[3, 0, 2], [1, 1]], 4)
    assert (nms["names"], nms["key"], nms["metric"]) == (["m0", "m2"],
                                                         "coco.nms_map@[0.5:0.95]",
                                                         "bbox_nms_map")
    assert nms["observed"][0] == 0.3 and np.isnan(nms["observed"][1])
    assert (obb["names"], obb["observed"].tolist(), obb["metric"]) == (
        ["m1", "m2"], [0.2, 0.6], "oriented_bbox_ap")
    assert obb["curves"][0] is o1 and obb["curves"][1] is o2
    assert (obb["units"], obb["n_units"]) == ([[], [2, 1]], 4)
    # resampling queries: each query its own unit, numbered in the first result's rows
    seen.clear()
    standings.ap_uncertainties(table, results, pieces, runs, opts, 11, "query")
    assert [(c["units"], c["n_units"], c["unit"]) for c in seen] == [
        ([[5, 0, 3], [4, 1]], 6, "query"), ([[5, 0, 3], [4, 1]], 6, "query"),
        ([[], [3, 1]], 6, "query")]
    # one model left: no ranks
    seen.clear()
    assert standings.ap_uncertainties(table, results, pieces, [runs[0], None, None, None],
                                      opts, 11, "image") == {}


def test_the_report_gives_its_ap_runs_reports_and_ranks_to_the_ap_ranks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """leaderboard_report with APRuns: the ranking reads each run's report; the AP ranks
    get the options, seed and unit given and join the additive metrics' ranks."""
    from ovearth_core.analysis.ap_bootstrap import APRun

    names, results = _board()
    runs = [APRun({"bbox": {"ap_every_point": v}}, {"bbox": _curves("q0", "q3")})
            for v in (0.2, 0.6, 0.4)]
    seen = _ap_calls(monkeypatch)
    opts = Options("vocabulary", "bbox", rank_resamples=250, alpha=0.2, min_count=3)
    out = standings.leaderboard_report(names, results, ["seg_macro_miou"], sizes=(1,),
                                       n_subsets=5, seed=8, average_precision=runs,
                                       ranks=opts, unit="query",
                                       uncertainty=lambda *a: {"seg_macro_miou": "additive"})
    assert out["ranking"]["bbox_ap"] == ["m1", "m2", "m0"]
    assert out["uncertainty"]["seg_macro_miou"] == "additive"
    assert out["uncertainty"]["bbox_ap"] == {"ap": "ap_every_point"}
    (call,) = [c for c in seen if c["metric"] == "bbox_ap"]
    assert (call["n_resamples"], call["alpha"], call["min_count"], call["seed"],
            call["unit"]) == (250, 0.2, 3, 8, "query")
    assert call["units"] == [[0, 3]] * 3 and call["n_units"] == 6
    # without AP runs: no AP ranks asked
    seen.clear()
    out = standings.leaderboard_report(names, results, ["seg_macro_miou"], sizes=(1,),
                                       n_subsets=5, ranks=opts,
                                       uncertainty=lambda *a: {})
    assert seen == [] and out["uncertainty"] == {}
