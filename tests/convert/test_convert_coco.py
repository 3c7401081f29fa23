"""from-coco / to-coco: the sample files, COCOeval equality both ways, and round trips.

How COCOeval's matching maps onto ours: COCOeval matches per (image, category) and pools,
per category, the detections of all images; our queries are exactly the (image, category)
pairs (positives where the category is present, negatives where it is absent), and our AP
pools the queries it is given. So COCOeval's AP of category c equals our COCO-style AP over
the queries of category c, with the negatives' boxes counted as false positives
(``include_negatives=True``: COCOeval scores every image for every category), provided every
absent pair is a query (``negatives="all"``); COCOeval's mAP is the mean of those. Crowd
annotations are ignore regions on both sides.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_inprocess import run_module
from convert_helpers import ALL, DATA, DEMO, ROOT, blank_images, differences
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from ovearth_core import evaluate_files, masks
from ovearth_core.analysis.ap import coco_average_precision
from ovearth_core.convert import from_coco, from_coco_export, to_coco
from ovearth_core.io import load_samples
from ovearth_core.options import TASK_KEYS

SAMPLE = DATA / "coco"


def _cocoeval(gt_path: Path, dt_path: Path, use_cats: bool = True,
              img_ids: list[int] | None = None) -> COCOeval:
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(gt_path))
        dt = gt.loadRes(str(dt_path))
        ev = COCOeval(gt, dt, "bbox")
        ev.params.useCats = int(use_cats)
        if img_ids is not None:
            ev.params.imgIds = img_ids
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def _per_category_ap(ev: COCOeval) -> dict[int, float]:
    """AP@[0.5:0.95] of each category with ground truth (area all, 100 detections)."""
    out = {}
    for k, cat in enumerate(ev.params.catIds):
        p = ev.eval["precision"][:, :, k, 0, -1]
        if (p > -1).any():
            out[cat] = float(p[p > -1].mean())
    return out


# ------------------------------------------------------------------ the sample files


@pytest.fixture(scope="module")
def sample_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("coco") / "bench"
    from_coco(SAMPLE / "instances.json", SAMPLE / "images", out, [SAMPLE / "results.json"])
    return out


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_sample_queries_one_per_image_and_category(sample_bench: Path) -> None:
    rows = _doc(sample_bench / "ground_truth.json")["tasks"]["open_vocabulary"]
    assert [(r["query_id"], r["type"], r["phrase"]) for r in rows] == [
        ("ov_1_1", "positive", "storage tank"), ("ov_1_2", "positive", "ship"),
        ("ov_1_7", "negative", "harbor"), ("ov_2_1", "negative", "storage tank"),
        ("ov_2_2", "positive", "ship"), ("ov_2_7", "positive", "harbor"),
        ("ov_5_1", "negative", "storage tank"), ("ov_5_2", "negative", "ship"),
        ("ov_5_7", "negative", "harbor")]
    assert all(r["ann_id"] == r["query_id"][3:] for r in rows)
    assert (sample_bench / "images" / "5.png").is_file()


def test_sample_ships_crowd_is_an_ignore_region_whose_pixels_stay_in_the_mask(
        sample_bench: Path) -> None:
    anns = {a["id"]: a for a in _doc(sample_bench / "ground_truth.json")["annotations"]}
    ship = anns["1_2"]
    assert ship["bbox"] == [[4, 4, 10, 6], [10, 6, 8, 6]]
    assert ship["ignore_bbox"] == [[20, 18, 12, 8]]
    # Two overlapping 10x6 and 8x6 rectangles (overlap 4x4) plus the 12x8 crowd region.
    mask = masks.decode(masks.parse_rle(ship["segmentation"])[0])
    assert int(mask.sum()) == 60 + 48 - 16 + 96
    assert mask[18:26, 20:32].all() and mask[4:10, 4:14].all()
    # Oriented boxes: minimum-area rectangles of the polygons (axis-aligned here) and of the
    # crowd's RLE pixels.
    assert [sorted(map(tuple, o)) for o in ship["oriented_bbox"]] == [
        [(4, 4), (4, 10), (14, 4), (14, 10)], [(10, 6), (10, 12), (18, 6), (18, 12)]]
    assert sorted(map(tuple, ship["ignore_oriented_bbox"][0])) == [
        (20, 18), (20, 26), (32, 18), (32, 26)]


def test_sample_obb_given_is_kept_and_box_only_instance_gets_its_box(sample_bench: Path) -> None:
    anns = {a["id"]: a for a in _doc(sample_bench / "ground_truth.json")["annotations"]}
    assert anns["2_7"]["oriented_bbox"] == [[[5, 10], [15, 5], [25, 12], [15, 17]]]
    assert anns["2_2"]["segmentation"] is None
    assert anns["2_2"]["oriented_bbox"] == [[[30, 20], [35, 20], [35, 24], [30, 24]]]
    assert anns["1_1"]["segmentation"]["counts"] == "Vl06h0000000000f3"
    assert anns["5_2"] == {"id": "5_2", "image_path": "images/5.png", "width": 48,
                           "height": 32, "category_name": "ship", "segmentation": None,
                           "bbox": [], "oriented_bbox": []}


def test_sample_results_boxes_in_file_order_masks_above_threshold(sample_bench: Path) -> None:
    rows = {r["query_id"]: r for r in _doc(sample_bench / "predictions" / "results.json")
            ["tasks"]["open_vocabulary"]}
    ship = rows["ov_1_2"]
    assert ship["bbox"] == [{"bbox": [4.5, 4, 14.5, 10], "score": 0.9},
                            {"bbox": [10, 6, 18, 12], "score": 0.8},
                            {"bbox": [22, 19, 26, 23], "score": 0.6}]
    # Only the second ship result has a mask; the box-only ones get no mask.
    assert ship["segmentation"]["counts"] == "Vl06h0000000000f3"
    # The storage tank's 0.1 mask (a 3x3 corner) is below the 0.5 threshold: left out.
    tank = masks.parse_rle(rows["ov_1_1"]["segmentation"])[0]
    assert masks.area(tank) == 36
    assert rows["ov_2_2"]["bbox"] == [] and rows["ov_2_2"]["segmentation"] is None
    assert rows["ov_5_2"]["bbox"] == [{"bbox": [1, 1, 6, 6], "score": 0.3}]


def test_sample_evaluates_as_worked_by_hand(sample_bench: Path) -> None:
    res = evaluate_files(sample_bench / "ground_truth.json",
                         sample_bench / "predictions" / "results.json", ["vocabulary"],
                         modalities="bbox")["open_vocabulary"]["summary"]
    # Positives: tank (found), ship in 1 (found), ship in 2 (no result), harbor (found);
    # negatives with a result: tank in 2, ship in 5.
    assert {k: res["presence"][k] for k in ("tp", "fp", "tn", "fn")} == {
        "tp": 3, "fp": 2, "tn": 3, "fn": 1}
    # Ships in 1: the 0.9 box (IoU 0.9 with the first) and the 0.8 box (the second) match;
    # the 0.6 box inside the crowd region is a false positive here (the spec's metrics know
    # no crowd), as is the tank's 0.1 corner box; the ship in 2 is missed.
    assert (res["bbox"]["tp"], res["bbox"]["fp"], res["bbox"]["fn"]) == (4, 2, 1)


def test_obb_of_a_polygon_is_the_rectangle_of_its_vertices(tmp_path: Path) -> None:
    doc = _doc(SAMPLE / "instances.json")
    rotated = [[10.5, 2.0], [18.5, 8.0], [14.0, 14.0], [6.0, 8.0]]  # a rectangle, 10 x 7.5
    doc["annotations"][0]["segmentation"] = [sum(rotated, [])]
    doc["annotations"][0]["bbox"] = [6.0, 2.0, 12.5, 12.0]
    (tmp_path / "i.json").write_text(json.dumps(doc))
    from_coco(tmp_path / "i.json", SAMPLE / "images", tmp_path / "b", negatives=0)
    ship = {a["id"]: a for a in _doc(tmp_path / "b" / "ground_truth.json")["annotations"]}["1_2"]
    got = sorted(map(tuple, np.round(ship["oriented_bbox"][0], 9)))
    assert got == sorted(map(tuple, rotated))


@pytest.mark.parametrize(("negatives", "expected"), [
    (0, []), (1, ["ov_1_7", "ov_2_1", "ov_5_2"]),
    ("all", ["ov_1_7", "ov_2_1", "ov_5_1", "ov_5_2", "ov_5_7"])])
def test_negative_sampling(tmp_path: Path, negatives: int | str, expected: list[str]) -> None:
    from_coco(SAMPLE / "instances.json", SAMPLE / "images", tmp_path / "b", negatives=negatives,
              seed=3)
    rows = _doc(tmp_path / "b" / "ground_truth.json")["tasks"]["open_vocabulary"]
    got = [r["query_id"] for r in rows if r["type"] == "negative"]
    if negatives == 1:
        assert len(got) == 3 and {q.split("_")[1] for q in got} == {"1", "2", "5"}
    else:
        assert got == expected


def test_negative_sampling_is_seeded_per_image(tmp_path: Path) -> None:
    picks = []
    for seed in (0, 0, 1, 2, 3):
        out = tmp_path / f"s{len(picks)}"
        from_coco(SAMPLE / "instances.json", SAMPLE / "images", out, negatives=1, seed=seed)
        rows = _doc(out / "ground_truth.json")["tasks"]["open_vocabulary"]
        picks.append([r["query_id"] for r in rows if r["type"] == "negative"])
    assert picks[0] == picks[1]
    assert len({tuple(p) for p in picks}) > 1


def test_lvis_negative_lists_replace_sampling(tmp_path: Path) -> None:
    doc = _doc(SAMPLE / "instances.json")
    doc["images"][2]["neg_category_ids"] = [7]
    doc["images"][0]["neg_category_ids"] = []
    path = tmp_path / "lvis.json"
    path.write_text(json.dumps(doc))
    from_coco(path, SAMPLE / "images", tmp_path / "b")
    rows = _doc(tmp_path / "b" / "ground_truth.json")["tasks"]["open_vocabulary"]
    assert [r["query_id"] for r in rows if r["type"] == "negative"] == ["ov_5_7"]


# ------------------------------------------------------------------ COCOeval, random data


def _random_coco(seed: int, folder: Path) -> tuple[Path, Path, Path]:
    """Random COCO instances and results: overlapping instances, crowd regions, detections
    inside crowds, on absent categories and on empty images; distinct float scores."""
    rng = np.random.default_rng(seed)
    cats = [3, 8, 20]
    images, anns, dets = [], [], []
    sizes = {}
    for k, img_id in enumerate(rng.choice(np.arange(1, 400), 9, replace=False).tolist()):
        w, h = int(rng.integers(60, 120)), int(rng.integers(50, 100))
        images.append({"id": img_id, "file_name": f"im{k}.png", "width": w, "height": h})
        sizes[f"im{k}.png"] = (w, h)
        for cat in cats:
            n = int(rng.integers(0, 5)) if rng.random() < 0.7 else 0
            boxes = []
            for _ in range(n):
                if boxes and rng.random() < 0.4:  # overlapping a previous instance
                    x, y, bw, bh = boxes[int(rng.integers(len(boxes)))]
                    x, y = x + rng.uniform(-0.3, 0.3) * bw, y + rng.uniform(-0.3, 0.3) * bh
                else:
                    x, y = rng.uniform(0, w - 20), rng.uniform(0, h - 20)
                bw, bh = rng.uniform(4, 25), rng.uniform(4, 25)
                x, y = max(x, 0.0), max(y, 0.0)
                boxes.append((x, y, bw, bh))
                crowd = int(rng.random() < 0.15)
                poly = [x, y, x + bw, y, x + bw, y + bh, x, y + bh]
                ann: dict[str, Any] = {"id": len(anns) + 1, "image_id": img_id,
                                       "category_id": cat, "bbox": [x, y, bw, bh],
                                       "area": bw * bh, "iscrowd": crowd}
                if crowd:
                    ann["segmentation"] = masks.to_json(masks.from_polygons([poly], h, w))
                elif rng.random() < 0.5:
                    ann["segmentation"] = [poly]
                anns.append(ann)
                for _ in range(int(rng.integers(0, 3))):
                    jit = rng.normal(0, 0.12, 4) * [bw, bh, bw, bh]
                    dets.append([img_id, cat, x + jit[0], y + jit[1], max(bw + jit[2], 1),
                                 max(bh + jit[3], 1)])
                if crowd:  # small detections inside the crowd region
                    for _ in range(2):
                        dets.append([img_id, cat, x + rng.uniform(0, bw / 2),
                                     y + rng.uniform(0, bh / 2), bw / 3, bh / 3])
            for _ in range(int(rng.integers(0, 3))):  # background, any category
                dets.append([img_id, cat, rng.uniform(0, w - 10), rng.uniform(0, h - 10),
                             rng.uniform(3, 10), rng.uniform(3, 10)])
    scores = rng.permutation(len(dets)) / len(dets) + 0.001
    results = [{"image_id": int(i), "category_id": int(c), "bbox": [float(v) for v in b],
                "score": float(s)} for (i, c, *b), s in zip(dets, scores, strict=True)]
    gt = {"images": images, "annotations": anns,
          "categories": [{"id": c, "name": f"class {c}"} for c in cats]}
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "res.json").write_text(json.dumps(results))
    return folder / "gt.json", folder / "res.json", blank_images(folder / "images", sizes)


@pytest.mark.parametrize("seed", range(6))
def test_cocoeval_on_original_files_equals_our_ap_after_conversion(tmp_path: Path,
                                                                   seed: int) -> None:
    gt, res, images = _random_coco(seed, tmp_path)
    ev = _cocoeval(gt, res)
    assert sum(a["iscrowd"] for a in _doc(gt)["annotations"]) > 0
    from_coco(gt, images, tmp_path / "bench", [res], negatives="all")
    samples = load_samples(tmp_path / "bench" / "ground_truth.json",
                           tmp_path / "bench" / "predictions" / "res.json", "vocabulary",
                           modalities="bbox")
    ref = _per_category_ap(ev)
    ours = {}
    for cat in ev.params.catIds:
        subset = [s for s in samples if s.category == f"class {cat}"]
        ap = coco_average_precision(subset, "bbox", include_negatives=True)["ap@[0.5:0.95]"]
        if not np.isnan(ap):
            ours[cat] = ap
    assert ours == pytest.approx(ref, abs=1e-9)
    assert float(np.mean(list(ours.values()))) == pytest.approx(ev.stats[0], abs=1e-9)


def test_crowd_regions_change_the_ap_as_cocoeval_does(tmp_path: Path) -> None:
    """Without ignore regions, the detections inside crowds would be false positives."""
    gt, res, images = _random_coco(0, tmp_path)
    from_coco(gt, images, tmp_path / "bench", [res])
    samples = load_samples(tmp_path / "bench" / "ground_truth.json",
                           tmp_path / "bench" / "predictions" / "res.json", "vocabulary",
                           modalities="bbox")
    with_ignore = coco_average_precision(samples, "bbox", include_negatives=True)
    for s in samples:
        s.gt_ignore_boxes = np.zeros((0, 4))
    without = coco_average_precision(samples, "bbox", include_negatives=True)
    assert with_ignore["ap@[0.5:0.95]"] > without["ap@[0.5:0.95]"]


# ------------------------------------------------------------------ to-coco


@pytest.fixture(scope="module")
def demo_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("export") / "coco"
    mapping = to_coco(DEMO / "ground_truth.json", DEMO / "predictions" / "box_detector.json",
                      "vocabulary", out)
    return out, mapping


@pytest.mark.parametrize("hard_negatives", [False, True])
def test_cocoeval_on_the_export_equals_our_coco_ap(demo_export: tuple[Path, dict[str, Any]],
                                                   hard_negatives: bool) -> None:
    out, mapping = demo_export
    ids = mapping["cocoeval_image_ids"]
    img_ids = ids["bbox"] + (ids["negative"] if hard_negatives else [])
    ev = _cocoeval(out / "instances_bbox.json", out / "results_bbox.json", use_cats=False,
                   img_ids=sorted(img_ids))
    samples = load_samples(DEMO / "ground_truth.json", DEMO / "predictions" / "box_detector.json",
                           "vocabulary", modalities="bbox")
    ours = coco_average_precision(samples, "bbox", include_negatives=hard_negatives)
    assert mapping["unscored_boxes_written_with_score_1"] == 0
    assert 0.01 < ours["ap@[0.5:0.95]"] < 0.99
    assert ours["ap@[0.5:0.95]"] == pytest.approx(ev.stats[0], abs=1e-9)


def test_cocoeval_per_category_on_the_export_equals_our_ap_per_phrase(
        demo_export: tuple[Path, dict[str, Any]]) -> None:
    out, mapping = demo_export
    ids = mapping["cocoeval_image_ids"]
    ev = _cocoeval(out / "instances_bbox.json", out / "results_bbox.json",
                   img_ids=sorted(ids["bbox"] + ids["negative"]))
    names = {c["id"]: c["name"] for c in _doc(out / "instances_bbox.json")["categories"]}
    samples = load_samples(DEMO / "ground_truth.json", DEMO / "predictions" / "box_detector.json",
                           "vocabulary", modalities="bbox")
    ref = _per_category_ap(ev)
    assert len(ref) > 10
    for cat, ap in ref.items():
        subset = [s for s in samples if s.phrase == names[cat]]
        assert coco_average_precision(subset, "bbox", include_negatives=True)[
            "ap@[0.5:0.95]"] == pytest.approx(ap, abs=1e-9), names[cat]


def test_export_layout(demo_export: tuple[Path, dict[str, Any]]) -> None:
    out, mapping = demo_export
    assert sorted(p.name for p in out.iterdir()) == [
        "instances_bbox.json", "instances_obb.json", "instances_segm.json", "mapping.json",
        "results_bbox.json", "results_obb.json", "results_segm.json"]
    inst = _doc(out / "instances_bbox.json")
    gt = _doc(DEMO / "ground_truth.json")
    assert len(inst["images"]) == len(gt["tasks"]["open_vocabulary"]) == len(mapping["queries"])
    negatives = [im for im in inst["images"] if "neg_category_ids" in im]
    assert len(negatives) == sum(q["type"] == "negative" for q in gt["tasks"]["open_vocabulary"])
    assert inst["images"][0]["file_name"] == "1.jpg"
    obb = _doc(out / "instances_obb.json")["annotations"][0]
    assert len(obb["segmentation"][0]) == 8 and len(obb["oriented_bbox"]) == 4


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("task", ["vocabulary", "referring", "reasoning"])
@pytest.mark.parametrize("persona", ["strong_localiser", "cautious_segmenter", "box_detector",
                                     "weak_baseline"])
def test_ovearth_to_coco_and_back_evaluates_equal(tmp_path: Path, persona: str,
                                                  task: str) -> None:
    pred = DEMO / "predictions" / f"{persona}.json"
    to_coco(DEMO / "ground_truth.json", pred, task, tmp_path / "coco")
    from_coco_export(tmp_path / "coco" / "mapping.json", DEMO / "images", tmp_path / "back")
    before = evaluate_files(DEMO / "ground_truth.json", pred, [task], modalities=ALL)
    after = evaluate_files(tmp_path / "back" / "ground_truth.json",
                           tmp_path / "back" / "predictions" / f"{persona}.json", [task],
                           modalities=ALL)
    # The export writes a row for every query (a missing row becomes an empty one), so the
    # coverage report, and only it, differs: every score, per sample and summary, is equal.
    key = TASK_KEYS[task]
    for result in (before[key], after[key]):
        cov = result.pop("coverage")
        result.pop("warnings")
        assert cov["num_queries"] == result["summary"]["num_samples"]
    assert differences(before, after) == []
    assert before[key]["summary"]["num_samples"] > 0


def test_plain_from_coco_on_the_bbox_export_gives_the_same_box_metrics(
        demo_export: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Without the mapping: LVIS negatives bring back the negative queries, the categories
    the phrases; ids and texts differ, the box metrics do not. (Positive queries without a
    box, such as cropland's, have no annotation in the box file, so they do not come back:
    presence counts need the mapping.)"""
    out, _ = demo_export
    from_coco(out / "instances_bbox.json", DEMO / "images", tmp_path / "b",
              [out / "results_bbox.json"])
    before = evaluate_files(DEMO / "ground_truth.json", DEMO / "predictions" / "box_detector.json",
                            ["vocabulary"], modalities="bbox")["open_vocabulary"]["summary"]
    after = evaluate_files(tmp_path / "b" / "ground_truth.json",
                           tmp_path / "b" / "predictions" / "results_bbox.json", ["vocabulary"],
                           modalities="bbox")["open_vocabulary"]["summary"]
    assert differences(before["bbox"], after["bbox"]) == []
    assert before["num_positive"] - after["num_positive"] == 10


def test_ground_truth_says_it_came_from_coco_and_resamples_images(sample_bench: Path) -> None:
    from ovearth_core.analysis.compare import default_unit

    gt_path = sample_bench / "ground_truth.json"
    assert json.loads(gt_path.read_text())["source"] == {"format": "COCO",
                                                         "resample_unit": "image"}
    assert default_unit(gt_path) == "image"


@pytest.mark.parametrize(("seed", "cap"), [(0, None), (1, None), (2, 10), (3, 1500)])
def test_hard_negative_map_through_the_analysis_command_equals_cocoeval(
        tmp_path: Path, seed: int, cap: int | None) -> None:
    """Issue 25: after ``from-coco --negatives all``, ``analysis --hard-negatives`` gives
    COCOeval's mAP and per-category AP on the original files: a box on a negative query (a
    category absent from the image) is a false positive of that category, as COCOeval
    counts it. ``--max-detections N`` is COCOeval's ``maxDets = [1, 10, N]``."""
    gt, res, images = _random_coco(seed, tmp_path)
    from_coco(gt, images, tmp_path / "bench", [res], negatives="all")
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(str(gt))
        ev = COCOeval(coco_gt, coco_gt.loadRes(str(res)), "bbox")
        if cap is not None:
            ev.params.maxDets = [1, 10, cap]
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    out = tmp_path / "analysis.json"
    proc = run_module(
        "ovearth_core.analysis",
        "--gt", str(tmp_path / "bench" / "ground_truth.json"),
        "--predictions", str(tmp_path / "bench" / "predictions" / "res.json"),
        "--modalities", "bbox", "--hard-negatives", "--output", str(out),
        *([] if cap is None else ["--max-detections", str(cap)]), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    coco = json.loads(out.read_text())["analysis"]["average_precision"]["bbox"]["coco"]
    n = 100 if cap is None else cap
    assert coco["max_detections"] == n
    names = {c["id"]: c["name"] for c in _doc(gt)["categories"]}
    ref = {names[c]: v for c, v in _per_category_ap(ev).items()}
    assert {c: v["ap@[0.5:0.95]"] for c, v in coco["per_category"].items()} == (
        pytest.approx(ref, abs=1e-9))
    # COCOeval's stats[0] asks for maxDets=100 whatever maxDets holds (-1 otherwise): its
    # precision at the last maxDets is the reference.
    precision = ev.eval["precision"][:, :, :, 0, -1]
    assert coco["map@[0.5:0.95]"] == pytest.approx(float(precision[precision > -1].mean()),
                                                   abs=1e-9)
    keys = ("map@0.5", "map@0.75", "map_small", "map_medium", "map_large", "mar@1", "mar@10",
            f"mar@{n}", "mar_small", "mar_medium", "mar_large")
    want = [None if v == -1 else float(v) for v in ev.stats[1:12]]
    got = [coco[k] for k in keys]
    assert got == pytest.approx(want, abs=1e-9)
