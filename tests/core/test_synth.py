"""The synthetic benchmark generator (ovearth_core.synth): counts, geometry, determinism,
the committed demo, validity for the evaluator and the personas' metric levels."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely
import synth_helpers as sh
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from ovearth_core import evaluate_open_vocab, evaluate_reasoning, evaluate_referring
from ovearth_core.io import load_open_vocab_samples, load_reasoning_samples, load_referring_samples
from ovearth_core.synth import geom
from ovearth_core.synth.personas import PERSONAS
from ovearth_core.synth.taxonomy import BY_NAME, CATEGORIES
from ovearth_core.synth.writer import generate

ALL = {"segmentation", "bbox", "oriented_bbox"}
LOAD = {"open_vocabulary": (load_open_vocab_samples, evaluate_open_vocab),
        "referring": (load_referring_samples, evaluate_referring),
        "reasoning": (load_reasoning_samples, evaluate_reasoning)}


@pytest.fixture(scope="module")
def full_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Full scale, JSON only (generated once per module)."""
    out = tmp_path_factory.mktemp("full")
    generate("full", out, seed=0, images=False, workers=2)
    return out


@pytest.fixture(scope="module")
def full_gt(full_dir: Path) -> dict[str, Any]:
    return sh.read_json(full_dir / "ground_truth.json")


@pytest.fixture(scope="module")
def demo_gt() -> dict[str, Any]:
    return sh.read_json(sh.DEMO / "ground_truth.json")


@pytest.fixture(scope="module")
def full_results(full_dir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Summary of every persona x task on the full scale, all modalities enabled."""
    out = {}
    for p in PERSONAS:
        for task, (load, evaluate) in LOAD.items():
            samples = load(full_dir / "ground_truth.json", full_dir / "predictions" /
                           f"{p.name}.json", modalities=ALL)
            out[p.name, task] = evaluate(samples, iou_threshold=0.5)["summary"]
    return out


# ----------------------------------------------------------------------------- determinism


def test_full_json_is_deterministic_across_runs_and_worker_counts(full_dir: Path,
                                                                 tmp_path: Path) -> None:
    generate("full", tmp_path, seed=0, images=False, workers=1)
    assert sh.tree_hashes(tmp_path) == sh.tree_hashes(full_dir)


def test_other_seed_changes_the_benchmark(full_dir: Path, tmp_path: Path) -> None:
    generate("tiny", tmp_path / "a", seed=0, images=False, workers=1)
    generate("tiny", tmp_path / "b", seed=1, images=False, workers=1)
    a, b = sh.tree_hashes(tmp_path / "a"), sh.tree_hashes(tmp_path / "b")
    assert a["ground_truth.json"] != b["ground_truth.json"]


def test_tiny_run_with_images_is_byte_identical_and_no_images_matches(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "ovearth_core.synth", "--scale", "tiny", "--seed", "3"]
    subprocess.run([*cli, "--out", str(tmp_path / "a"), "--workers", "2"], check=True,
                   cwd=sh.REPO)
    generate("tiny", tmp_path / "b", seed=3, images=True, workers=1)
    generate("tiny", tmp_path / "c", seed=3, images=False, workers=1)
    a, b, c = (sh.tree_hashes(tmp_path / k) for k in "abc")
    assert a == b
    assert any(k.startswith("images/") for k in a)
    assert {k: v for k, v in a.items() if not k.startswith("images/")} == c


# ----------------------------------------------------------------------------- counts


def test_full_scale_counts_are_the_papers(full_gt: dict[str, Any]) -> None:
    anns, tasks = full_gt["annotations"], full_gt["tasks"]
    assert len({a["image_path"] for a in anns}) == 520
    assert len(anns) == 590
    assert len({a["id"] for a in anns}) == 590
    assert len({a["category_name"] for a in anns}) == 172
    ov = Counter(q["type"] for q in tasks["open_vocabulary"])
    assert ov == {"positive": 1067, "negative": 2168}
    assert len(tasks["referring"]) == 732
    assert len(tasks["reasoning"]) == 1056
    assert sum(len(a["bbox"]) for a in anns) == 4810
    assert sum(len(a["oriented_bbox"]) for a in anns) == 4810
    no_boxes = {a["category_name"] for a in anns if not a["bbox"]}
    area = {c.name for c in CATEGORIES if c.is_area}
    assert len(area) == 12 and area <= no_boxes


def test_full_scale_distributions(full_gt: dict[str, Any]) -> None:
    anns = full_gt["annotations"]
    small = [w * h < 0.01 * a["width"] * a["height"] for a in anns for _, _, w, h in a["bbox"]]
    assert sum(small) / len(small) >= 0.85
    widths = {a["image_path"]: a["width"] for a in anns}
    assert abs(statistics.median(widths.values()) - 1385) <= 0.15 * 1385
    per_ann = [len(a["bbox"]) for a in anns]
    assert statistics.median(per_ann) == 1
    assert sum(n > 40 for n in per_ann) >= 10
    by_ann: dict[str, set[str]] = {}
    for task, rows in full_gt["tasks"].items():
        for r in rows:
            by_ann.setdefault(r["ann_id"], set()).add(task)
    mixes = Counter(frozenset(v) for v in by_ann.values())
    assert mixes[frozenset({"open_vocabulary", "referring", "reasoning"})] == 478
    assert mixes[frozenset({"open_vocabulary", "reasoning"})] == 90
    assert mixes[frozenset({"open_vocabulary", "referring"})] == 17
    assert mixes[frozenset({"open_vocabulary"})] == 5


def test_query_ids_and_language(full_gt: dict[str, Any]) -> None:
    tasks = full_gt["tasks"]
    for task, prefix in (("open_vocabulary", "ov"), ("referring", "ref"), ("reasoning", "rea")):
        ids = [q["query_id"] for q in tasks[task]]
        assert ids == [f"{prefix}_{i:06d}" for i in range(1, len(ids) + 1)]
    assert all(1 <= len(q["phrase"].split()) <= 3 for q in tasks["open_vocabulary"])
    ref = statistics.mean(len(q["query"].split()) for q in tasks["referring"])
    rea = statistics.mean(len(q["query"].split()) for q in tasks["reasoning"])
    assert 7.5 <= ref <= 11.5
    assert 10.0 <= rea <= 14.0


def test_negatives_name_categories_absent_from_the_image(full_gt: dict[str, Any]) -> None:
    ann = {a["id"]: a for a in full_gt["annotations"]}
    present = sh.categories_by_image(full_gt)
    phrases = {name: {name, *BY_NAME[name].synonyms} for name in BY_NAME}
    for q in full_gt["tasks"]["open_vocabulary"]:
        names = present[ann[q["ann_id"]]["image_path"]]
        said = {p for n in names for p in phrases[n]}
        if q["type"] == "negative":
            assert q["phrase"] not in said, q
        else:
            assert q["phrase"] in phrases[ann[q["ann_id"]]["category_name"]], q


# ----------------------------------------------------------------------------- geometry


def test_geometry_is_consistent(demo_gt: dict[str, Any]) -> None:
    """Masks decode to the image size; HBBs, OBBs and masks describe the same pixels."""
    for a in demo_gt["annotations"]:
        mask = sh.decode(a["segmentation"])
        assert mask.shape == (a["height"], a["width"])
        assert mask.any()
        if not a["bbox"]:
            assert a["oriented_bbox"] == []
            continue
        assert len(a["oriented_bbox"]) == len(a["bbox"])
        boxes = np.array(a["bbox"], dtype=float)
        x0, y0, x1, y1 = sh.pixel_envelope(mask)
        env = boxes[:, 0].min(), boxes[:, 1].min(), (boxes[:, 0] + boxes[:, 2]).max(), \
            (boxes[:, 1] + boxes[:, 3]).max()
        assert np.allclose((x0, y0, x1, y1), env, atol=2), a["id"]
        for (bx, by, bw, bh), obb in zip(a["bbox"], a["oriented_bbox"], strict=True):
            assert sh.convex_quad(obb)
            o = np.array(obb)
            # The minimum-area rectangle reaches the object's extremes and is no larger than
            # the axis-aligned box (itself a rotated rectangle around the object).
            assert np.all(o.min(axis=0) <= [bx + 1.5, by + 1.5])
            assert np.all(o.max(axis=0) >= [bx + bw - 1.5, by + bh - 1.5])
            assert shapely.Polygon(o).area <= bw * bh + 2 * (bw + bh) + 4
            crop = mask[by:by + bh, bx:bx + bw]
            assert crop[:2].any() and crop[-2:].any() and crop[:, :2].any() and crop[:, -2:].any()
        assert sh.covered_by_obbs(mask, a["oriented_bbox"], tol=1.5) == 1.0


def test_single_instance_hbb_is_the_pixel_envelope(full_gt: dict[str, Any]) -> None:
    singles = [a for a in full_gt["annotations"] if len(a["bbox"]) == 1][:120]
    for a in singles:
        x0, y0, x1, y1 = sh.pixel_envelope(sh.decode(a["segmentation"]))
        bx, by, bw, bh = a["bbox"][0]
        assert np.allclose((x0, y0, x1, y1), (bx, by, bx + bw, by + bh), atol=2), a["id"]


@settings(max_examples=60, deadline=None)
@given(shape=st.sampled_from(["circle", "rect", "lshape", "ship", "plane", "turbine", "fan",
                              "track", "octagon"]),
       aspect=st.floats(1.0, 8.0), length=st.floats(4.0, 400.0),
       angle=st.floats(0.0, 2 * math.pi), cx=st.floats(200.0, 800.0), cy=st.floats(200.0, 800.0))
def test_min_rect_contains_polygon(shape: str, aspect: float, length: float, angle: float,
                                   cx: float, cy: float) -> None:
    poly = geom.place(geom.unit_shape(shape, aspect, np.random.default_rng(0)), cx, cy, length,
                      angle)
    rect = geom.min_rects(poly[None])[0]
    assert sh.convex_quad(rect.tolist())
    assert shapely.Polygon(rect).buffer(1e-6 * length + 1e-6).contains(shapely.Polygon(poly))


# ----------------------------------------------------------------------------- demo


def test_committed_demo_equals_a_fresh_run(tmp_path: Path) -> None:
    generate("demo", tmp_path, seed=0, images=True, workers=2)
    assert sh.tree_hashes(sh.DEMO) == sh.tree_hashes(tmp_path)


def test_demo_is_small_and_has_every_image_kind(demo_gt: dict[str, Any]) -> None:
    files = [p for p in sh.DEMO.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 15 * 1024 * 1024
    sizes = {a["image_path"]: (a["width"], a["height"]) for a in demo_gt["annotations"]}
    assert 24 <= len(sizes) <= 36
    modes = Counter()
    for path, size in sizes.items():
        with Image.open(sh.DEMO / path) as im:
            assert im.size == size
            modes[path.rsplit(".", 1)[1], im.mode] += 1
    assert modes["tif", "I;16"] >= 1
    assert modes["tif", "RGBA"] >= 1
    assert sum(v for (ext, _), v in modes.items() if ext == "jpg") > len(sizes) / 2
    tasks = demo_gt["tasks"]
    assert {q["type"] for q in tasks["open_vocabulary"]} == {"positive", "negative"}
    assert tasks["referring"] and tasks["reasoning"]
    assert {p.stem for p in (sh.DEMO / "predictions").glob("*.json")} == \
        {p.name for p in PERSONAS}


# ----------------------------------------------------------------------------- submissions


@pytest.mark.parametrize("persona", [p.name for p in PERSONAS])
@pytest.mark.parametrize("task", list(LOAD))
def test_demo_submissions_validate(persona: str, task: str, demo_gt: dict[str, Any]) -> None:
    load, evaluate = LOAD[task]
    pred = sh.DEMO / "predictions" / f"{persona}.json"
    samples = load(sh.DEMO / "ground_truth.json", pred, modalities=ALL)
    assert len(samples) == len(demo_gt["tasks"][task])
    assert evaluate(samples, iou_threshold=0.5)["summary"]["num_samples"] == len(samples)
    if persona in ("strong_localiser", "box_detector"):
        load(sh.DEMO / "ground_truth.json", pred, score_threshold=0.3, modalities=ALL)


def test_full_submissions_have_the_realistic_faults(full_dir: Path,
                                                    full_gt: dict[str, Any]) -> None:
    seen: Counter[str] = Counter()
    for p in PERSONAS:
        doc = sh.read_json(full_dir / "predictions" / f"{p.name}.json")
        for task, rows in doc["tasks"].items():
            ids = Counter(r["query_id"] for r in rows)
            seen["missing"] += len(full_gt["tasks"][task]) - len(ids)
            seen["duplicate"] += sum(n > 1 for n in ids.values())
            for r in rows:
                seg = r["segmentation"]
                seen["null"] += seg is None
                seen["sentinel"] += seg == {"size": [0, 0], "counts": []}
                seen["uncompressed"] += isinstance(seg, dict) and isinstance(seg["counts"], list) \
                    and seg["size"] != [0, 0]
                for b in r.get("bbox", []):
                    box = b["bbox"] if isinstance(b, dict) else b
                    seen["scored" if isinstance(b, dict) else "bare"] += 1
                    assert box[2] > box[0] and box[3] > box[1], r["query_id"]
                for o in r.get("oriented_bbox", []):
                    poly = o["polygon"] if isinstance(o, dict) else o
                    assert sh.convex_quad(poly), r["query_id"]
    for fault in ("missing", "duplicate", "null", "sentinel", "uncompressed", "scored", "bare"):
        assert seen[fault] > 0, fault


def test_persona_metric_levels_match_the_paper(full_results: dict) -> None:
    r = full_results
    miou = {k: v["seg"]["positive_macro_miou"] for k, v in r.items()}
    mcc = {p.name: r[p.name, "open_vocabulary"]["presence"]["mcc"] for p in PERSONAS}
    best = max(miou.values())
    assert 0.3 <= best <= 0.45
    assert min(mcc.values()) < 0.2
    assert 0.5 <= max(mcc.values()) <= 0.7
    for task in LOAD:
        assert miou["strong_localiser", task] == best or miou["strong_localiser", task] >= 0.3
        assert miou["cautious_segmenter", task] < miou["strong_localiser", task]
        assert miou["weak_baseline", task] < miou["cautious_segmenter", task]
        assert miou["box_detector", task] == 0.0
        f1 = r["box_detector", task]["bbox"]["positive_micro_f1"]
        assert 0.15 <= f1 <= 0.45
    assert mcc["strong_localiser"] < 0.25 < mcc["cautious_segmenter"]
