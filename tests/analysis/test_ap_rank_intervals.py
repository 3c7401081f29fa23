"""Rank intervals of the leaderboard's AP metrics (issue 50: ``*_coco_map``, ``*_nms_map``,
``*_aitod_map`` ...): AP is no mean over images, so each resample's AP is recomputed. The
reference here draws the same images (numpy's documented draw), builds each resample's
dataset with every drawn copy of an image as an image of its own, and runs OVDEval's
suppression (written out in test_nms_ap.py) and pycocotools' COCOeval on it; nothing of
the resampling code is called by the reference."""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from analysis_fixtures import sample_list
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
from scipy.stats import rankdata
from test_nms_ap import _hbb_iou, _xywh, ovdeval_nms, scenes

from ovearth_core.analysis.ap_bootstrap import ap_run
from ovearth_core.analysis.rank_stats import resampled_ap
from ovearth_core.analysis.standings import leaderboard_report
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.options import Options
from ovearth_core.types import IOU_THRESHOLDS, Sample

N_IMAGES = 10


def _submissions(seed: int) -> list[list[Sample]]:
    """Three submissions on one ground truth (test_nms_ap's scenes): the scenes' answers,
    the same with every other box dropped, and the same with scores drawn again."""
    base = scenes(seed, N_IMAGES)
    rng = np.random.default_rng(seed + 100)
    thinned = [replace(s, pred_boxes=s.pred_boxes[::2], pred_box_scores=s.pred_box_scores[::2],
                       pred_obbs=s.pred_obbs[::2], pred_obb_scores=s.pred_obb_scores[::2])
               for s in base]
    shuffled = []
    for s in base:
        sc = rng.random(len(s.pred_box_scores))
        shuffled.append(replace(s, pred_box_scores=sc, pred_obb_scores=sc.copy()))
    return [base, thinned, shuffled]


def _images(samples: list[Sample]) -> list[str]:
    return list(dict.fromkeys(s.image_path for s in samples))


def _categories(samples: list[Sample]) -> list[str]:
    return sorted({s.category for s in samples if not s.negative})


def _draws(seed: int, n_resamples: int, n_units: int) -> np.ndarray:
    """numpy's draw of image multiplicities (``integers`` then a count per row), as the
    rank resampling documents it (one chunk: fewer than 256 resamples)."""
    idx = np.random.default_rng(seed).integers(0, n_units, size=(n_resamples, n_units))
    return np.array([np.bincount(row, minlength=n_units) for row in idx])


def _resample(samples: list[Sample], counts: np.ndarray) -> list[Sample]:
    """Each image ``counts[u]`` times, each copy an image of its own (its queries and
    annotations renamed)."""
    images = _images(samples)
    out = []
    for u, image in enumerate(images):
        for j in range(int(counts[u])):
            out += [replace(s, image_path=f"{image}~{j}", sample_id=f"{s.sample_id}~{j}",
                            ann_id=f"{s.ann_id}~{j}")
                    for s in samples if s.image_path == image]
    return out


def reference_map(samples: list[Sample], nms: bool, max_dets: tuple[int, int, int],
                  categories: list[str]) -> float:
    """COCOeval's stats[0] (useCats=1, ``max_dets``) of the queries as OVDEval builds the
    dataset (an image per image file, a category per phrase's category among the
    benchmark's ``categories``, whether or not a resample holds GT of it), after eval.py's
    suppression when ``nms``; ``nan`` for COCOeval's -1."""
    images = {p: k + 1 for k, p in enumerate(_images(samples))}
    cats = {c: k + 1 for k, c in enumerate(categories)}
    anns: list[dict[str, Any]] = []
    dets: list[dict[str, Any]] = []
    for s in samples:
        img = images[s.image_path]
        if not s.negative:
            for b in s.gt_boxes:
                anns.append({"id": len(anns) + 1, "image_id": img, "iscrowd": 0,
                             "category_id": cats[s.category], "bbox": _xywh(b),
                             "area": (b[2] - b[0]) * (b[3] - b[1])})
        cat = cats.get(s.phrase)
        if cat is None:
            continue
        for b, sc in zip(s.pred_boxes, s.pred_box_scores, strict=True):
            dets.append({"image_id": img, "category_id": cat, "score": float(sc),
                         "bbox": _xywh(b)})
    if nms:
        kept = []
        for img in images.values():
            kept += ovdeval_nms([a for a in anns if a["image_id"] == img],
                                [d for d in dets if d["image_id"] == img], _hbb_iou)
        dets = kept
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": [{"id": k} for k in images.values()], "annotations": anns,
                      "categories": [{"id": k} for k in cats.values()]}
        gt.createIndex()
        ev = COCOeval(gt, gt.loadRes([dict(d) for d in dets]), "bbox")
        ev.params.iouThrs = np.array(IOU_THRESHOLDS)
        ev.params.maxDets = list(max_dets)
        ev.params.areaRng, ev.params.areaRngLbl = [[0, 1e10]], ["all"]  # stats[0]'s only
        ev.evaluate()
        ev.accumulate()
    # summarize()'s stats[0]: the mean of the defined precisions, at the last maxDets
    precision = ev.eval["precision"][:, :, :, 0, -1]
    defined = precision[precision > -1]
    return float(defined.mean()) if defined.size else float("nan")


KEYS = {"coco.map@[0.5:0.95]": (False, (1, 10, 100)),
        "coco.nms_map@[0.5:0.95]": (True, (1, 10, 100)),
        "aitod.map@[0.5:0.95]": (False, (1, 100, 1500))}


def _runs(subs: list[list[Sample]]) -> list[Any]:
    return [ap_run(s, 0.5, ("bbox",), True, 100, nms_ap=True, aitod=True) for s in subs]


def _query_units(samples: list[Sample], query_ids: tuple[str, ...]) -> np.ndarray:
    index = {p: u for u, p in enumerate(_images(samples))}
    image = {s.sample_id: index[s.image_path] for s in samples}
    return np.array([image[q] for q in query_ids], dtype=np.intp)


@pytest.mark.parametrize("key", list(KEYS))
def test_each_resample_is_cocoeval_on_the_resampled_images(key: str) -> None:
    subs = _submissions(0)
    runs = _runs(subs)
    curves = [r.curves["bbox"] for r in runs]
    units = [_query_units(s, c.query_ids) for s, c in zip(subs, curves, strict=True)]
    got = resampled_ap(curves, key, units, N_IMAGES, 8, seed=5)
    draws = _draws(5, 8, N_IMAGES)
    nms, max_dets = KEYS[key]
    for r in range(8):
        for m, s in enumerate(subs):
            want = reference_map(_resample(s, draws[r]), nms, max_dets, _categories(s))
            assert got[r, m] == pytest.approx(want, abs=1e-9), (r, m)
    # the resamples move the value: the interval is not a point
    assert np.ptp(got[:, 0]) > 0


def _board(subs: list[list[Sample]], options: Options, runs: list[Any] | None = None,
           ) -> dict[str, Any]:
    results = [evaluate_samples(sample_list(s, modalities=("bbox",)), 0.5) for s in subs]
    return leaderboard_report(["a", "b", "c"], results, sizes=(), ranks=options,
                              average_precision=runs or _runs(subs))


def test_rank_intervals_are_the_quantiles_of_the_brute_force_ranks() -> None:
    subs = _submissions(1)
    options = Options("vocabulary", "bbox", hard_negatives=True, nms_ap=True, aitod=True,
                      rank_resamples=100, alpha=0.2)
    board = _board(subs, options)
    ranks = board["uncertainty"]["bbox_nms_map"]
    n = ranks["n_resamples"]
    assert n == 100 and ranks["num_units"] == N_IMAGES
    draws = _draws(0, n, N_IMAGES)
    cats = _categories(subs[0])
    brute = np.array([[reference_map(_resample(s, draws[r]), True, (1, 10, 100), cats)
                       for s in subs] for r in range(n)])
    observed = np.array([reference_map(s, True, (1, 10, 100), cats) for s in subs])
    order = np.argsort(-observed, kind="stable")
    assert ranks["models"] == [["a", "b", "c"][i] for i in order]
    assert ranks["value"] == pytest.approx(observed[order].tolist(), abs=1e-9)
    # rank 1 = best, ties their mean rank (scipy)
    sampled_ranks = rankdata(-brute[:, order], axis=1)
    # alpha 0.2: the 10 % and 90 % quantiles, outward (the lower / the higher order statistic)
    low = [float(np.sort(sampled_ranks[:, i])[int(np.floor(0.1 * (n - 1)))]) for i in range(3)]
    high = [float(np.sort(sampled_ranks[:, i])[int(np.ceil(0.9 * (n - 1)))]) for i in range(3)]
    assert ranks["rank_low"] == low and ranks["rank_high"] == high
    assert ranks["first_share"] == pytest.approx(
        [(sampled_ranks[:, i] == sampled_ranks.min(axis=1)).mean() for i in range(3)])


def test_same_wording_minimum_and_resample_rule_as_the_additive_metrics() -> None:
    subs = _submissions(2)
    runs = _runs(subs)
    options = Options("vocabulary", "bbox", hard_negatives=True, nms_ap=True, aitod=True,
                      rank_resamples=100, alpha=0.01)
    unc = _board(subs, options, runs)["uncertainty"]
    additive = unc["bbox_micro_f1"]
    for name in ("bbox_ap", "bbox_coco_map", "bbox_dota_map", "bbox_nms_map", "bbox_aitod_map"):
        ranks = unc[name]
        # 10 images: thin evidence, the one wording
        assert ranks["warning"] == ("Thin evidence: the intervals and tests rest on 10 images "
                                    "(fewer than 30), so they are rough: intervals usually "
                                    "too narrow, p-values too small.")
        assert ranks["warning"] == additive["warning"]
        # Holm over 2 tests at 0.01 needs more than the 100 asked: both draw the same
        assert ranks["n_resamples"] == additive["n_resamples"] > 100
        assert ranks["resolution_note"] == additive["resolution_note"]
        assert ranks["friedman"]["skipped"].startswith("AP ranks boxes across queries")
    fewer = _board(subs, replace(options, min_count=11), runs)["uncertainty"]
    for name in ("bbox_coco_map", "bbox_aitod_map"):
        assert fewer[name]["skipped"] == fewer["bbox_micro_f1"]["skipped"]
        assert fewer[name]["rank_low"] == [None] * 3


def test_no_curves_no_intervals_and_no_nms_without_the_option() -> None:
    subs = _submissions(3)
    options = Options("vocabulary", "bbox", hard_negatives=True, rank_resamples=100)
    plain = [ap_run(s, 0.5, ("bbox",), True, 100) for s in subs]
    unc = _board(subs, options, plain)["uncertainty"]
    assert "bbox_coco_map" in unc and "bbox_nms_map" not in unc and "bbox_aitod_map" not in unc
    reports = [r.report for r in plain]  # a report without its curves: ranked, no interval
    board = _board(subs, options, reports)
    assert "bbox_coco_map" in board["metrics"] and "bbox_coco_map" not in board["uncertainty"]


def test_the_leaderboard_takes_the_ap_options_as_one_value(tmp_path: Path) -> None:
    """folder_leaderboard's AP options are one Options value: each of its AP fields reaches
    the numbers (a cap of 10 boxes, NMS-AP, AI-TOD), and every AP metric ranked gets its
    rank interval."""
    import shutil

    from ovearth_core.analysis.ap import ap_numbers, average_precision_report
    from ovearth_core.analysis.leaderboard import folder_leaderboard
    from ovearth_core.io import load_samples

    demo = Path(__file__).resolve().parents[2] / "assets" / "demo"
    folder = tmp_path / "board"
    (folder / "predictions").mkdir(parents=True)
    shutil.copy(demo / "ground_truth.json", folder)
    names = ("box_detector", "strong_localiser", "weak_baseline")
    for name in names:
        shutil.copy(demo / "predictions" / f"{name}.json", folder / "predictions")
    options = Options("vocabulary", "bbox", hard_negatives=True, max_detections=10,
                      nms_ap=True, aitod=True, rank_resamples=100)
    board = folder_leaderboard(folder, ("vocabulary",), "bbox", average_precision=options,
                               ranks=options, n_subsets=10)["open_vocabulary"]
    for name in names:
        samples = load_samples(folder / "ground_truth.json",
                               folder / "predictions" / f"{name}.json", "vocabulary",
                               modalities="bbox")
        want = ap_numbers(average_precision_report(samples.every_box, 0.5, ("bbox",), True, 10,
                                                   True, True)["bbox"])
        row = board["models"].index(name)
        for metric, key in (("bbox_coco_map", "coco.map@[0.5:0.95]"),
                            ("bbox_nms_map", "coco.nms_map@[0.5:0.95]"),
                            ("bbox_aitod_map", "aitod.map@[0.5:0.95]")):
            assert board["metrics"][metric][row] == want[key][0], (name, metric)
    for metric in ("bbox_ap", "bbox_coco_map", "bbox_dota_map", "bbox_nms_map",
                   "bbox_aitod_map"):
        ranks = board["uncertainty"][metric]
        assert sorted(ranks["models"]) == sorted(names)
        assert all(1 <= lo <= hi <= 3 for lo, hi in zip(ranks["rank_low"], ranks["rank_high"],
                                                        strict=True))
