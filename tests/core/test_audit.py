"""The consensus audit (issue 36) on a hand-built scene: four images, two categories, ten
submissions of different skill; five label errors injected (missing, spurious, shifted,
wrong class, a negative query whose category is present), beside a hard object (three
strong submissions find it, with low-ish scores) and a decoy (seven submissions fire on
an empty spot with low scores). The suspects must be the injected ones, first, each of
its kind; the hard object and the decoy below them. Same scene in boxes, oriented boxes
and masks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ovearth_core.audit import audit
from ovearth_core.audit.__main__ import main
from ovearth_core.audit.consensus import best_f1, calibrate
from ovearth_core.options import Options
from tests.audit_scene import INJECTED, SUBS, _gt_objects, write_audit_dataset


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    return write_audit_dataset(tmp_path_factory.mktemp("audit"))


def _key(s: dict[str, Any]) -> tuple[str, int, str]:
    return s["kind"], int(s["query_id"][1]), s["query_id"].split("_")[1]


@pytest.mark.parametrize("modality", ["bbox", "oriented_bbox", "segmentation"])
def test_injected_errors_rank_first(scene: tuple[Path, list[Path]], modality: str) -> None:
    gt, preds = scene
    result = audit(gt, preds, Options("vocabulary", (modality,)), min_score=0.0)
    suspects = result["suspects"]
    top = {_key(s) for s in suspects[:len(INJECTED)]}
    assert top == INJECTED, [(_key(s), s["score"]) for s in suspects[:8]]
    ranks = [s["rank"] for s in suspects]
    assert ranks == list(range(1, len(suspects) + 1))
    scores = [s["score"] for s in suspects]
    assert scores == sorted(scores, reverse=True)
    # The hard object and the decoy: listed (or not) only below every injected error.
    for i, s in enumerate(suspects):
        near_hard = s["query_id"] == "q2_plane" and s["kind"] == "spurious"
        near_decoy = s["query_id"] == "q1_plane" and s["kind"] == "missing"
        if near_hard or near_decoy:
            assert i >= len(INJECTED), (i, s)


def test_suspect_fields(scene: tuple[Path, list[Path]]) -> None:
    gt, preds = scene
    suspects = {_key(s): s for s in audit(gt, preds, Options("vocabulary", "bbox"))["suspects"]}
    shifted = suspects["shifted", 1, "plane"]
    # The fix proposed is the consensus box (the real object), the GT box kept beside it.
    assert shifted["bbox"] == pytest.approx([60, 150, 30, 30], abs=1.5)
    assert shifted["gt_bbox"] == [100, 150, 30, 30]
    wrong = suspects["wrong_class", 2, "ship"]
    assert wrong["proposed_category"] == "plane" and wrong["category"] == "ship"
    assert wrong["bbox"] == [110, 130, 30, 30]
    on_negative = [s for s in audit(gt, preds, Options("vocabulary", "bbox"),
                                    min_score=0.0)["suspects"] if s["query_id"] == "q3_ship"]
    assert len(on_negative) == 1  # one suspect for the query: the category seems present
    negative = suspects["missing", 3, "ship"]
    assert negative["negative"] is True and negative["category"] == "ship"
    assert negative["bbox"] == pytest.approx([80, 20, 40, 20], abs=1.5)
    spurious = suspects["spurious", 3, "plane"]
    assert spurious["bbox"] == [90, 160, 30, 30] and spurious["support"] == 0.0
    missing = suspects["missing", 0, "plane"]
    assert missing["support"] >= 0.7 and len(missing["votes"]) >= 7
    # Reported once: the shifted GT box is no spurious suspect, its fix no missing one.
    assert ("spurious", 1, "plane") not in suspects and ("missing", 1, "plane") not in {
        k for k, s in suspects.items() if s["bbox"][0] < 100 and s["bbox"][1] > 140}


def test_object_support(scene: tuple[Path, list[Path]]) -> None:
    gt, preds = scene
    objects = audit(gt, preds, Options("vocabulary", "bbox"))["objects"]
    by_box = {(o["query_id"], tuple(o["bbox"])): o for o in objects}
    assert len(objects) == sum(len(v) for v in _gt_objects().values())
    hard = by_box["q2_plane", (20, 150, 12, 12)]
    assert hard["found"] == 3 and hard["support"] == pytest.approx(0.3)
    assert by_box["q3_plane", (90, 160, 30, 30)]["found"] == 0


def test_cli_writes_audit(scene: tuple[Path, list[Path]], tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    gt, preds = scene
    out = tmp_path / "audit.json"
    assert main(["--gt", str(gt), "--predictions", *map(str, preds), "--task", "vocabulary",
                 "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    # The task as the JSON names it (docs/audit.md; issue 46: c100000 wrote "vocabulary").
    assert doc["task"] == "open_vocabulary"
    assert {_key(s) for s in doc["suspects"][:5]} == INJECTED
    assert [s["name"] for s in doc["submissions"]] == [f"model{s}" for s in range(SUBS)]


def test_cli_bad_input(scene: tuple[Path, list[Path]], tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    gt, preds = scene
    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": {"open_vocabulary": [{"query_id": "q0_plane", "bbox": 3}]}}')
    out = tmp_path / "audit.json"
    assert main(["--gt", str(gt), "--predictions", str(preds[0]), str(bad),
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "q0_plane" in err and "Traceback" not in err
    assert not out.exists()
    assert main(["--gt", str(gt), "--predictions", str(preds[0]), "--out", str(out)]) == 2
    assert "at least 2 submissions" in capsys.readouterr().err
    for flag, value, said in (("--iou-threshold", "1.5", "a number in (0, 1]"),
                              ("--min-score", "nan", "a finite number")):
        assert main(["--gt", str(gt), "--predictions", *map(str, preds[:2]), flag, value,
                     "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert flag in err and said in err and "Traceback" not in err
        assert not out.exists()
    # Never written over an input.
    before = preds[1].read_bytes()
    assert main(["--gt", str(gt), "--predictions", str(preds[0]), str(preds[1]),
                 "--out", str(preds[1])]) == 2
    assert preds[1].read_bytes() == before
    assert "cannot write" in capsys.readouterr().err


def test_calibration_by_hand() -> None:
    # Deciles of 20 scores, two per bin; the lower half all misses, the upper all hits.
    scores = np.arange(20) / 20
    tp = scores >= 0.5
    p = calibrate(scores, tp)
    assert p[:10] == pytest.approx([1 / 4] * 10) and p[10:] == pytest.approx([3 / 4] * 10)
    # A violation (a higher bin less precise) is pooled: non-decreasing.
    p = calibrate(np.array([0.1, 0.2, 0.3, 0.4]), np.array([False, True, False, True]), 4)
    assert np.all(np.diff(p) >= -1e-12)
    assert p[1] == pytest.approx(p[2]) == pytest.approx(0.5)
    assert calibrate(np.array([np.nan, np.nan]), np.array([True, False]))[0] == 0.5
    # Best F1 by hand, 3 GT: after 2 boxes 2 hits, 2*2 / (2 + 3) = 0.8; after 4 boxes 3
    # hits, 2*3 / (4 + 3) = 6/7, the best.
    assert best_f1(np.array([0.9, 0.8, 0.1, 0.05]), np.array([True, True, False, False]),
                   3) == pytest.approx(0.8)
    assert best_f1(np.array([0.9, 0.8, 0.1, 0.05]), np.array([True, True, False, True]),
                   3) == pytest.approx(6 / 7)


def _sample(boxes: list[list[float]], scores: list[float], answered: bool = True):
    from ovearth_core.types import Sample

    return Sample("q1", "plane", False, "images/a.png", "a", "plane", 300, 300,
                  gt_boxes=np.array([[10, 10, 30, 30], [100, 100, 120, 120]], dtype=float),
                  pred_boxes=np.array(boxes, dtype=float).reshape(-1, 4),
                  pred_box_scores=np.array(scores, dtype=float), has_prediction_row=answered)


def test_scores_worked_by_hand() -> None:
    """Three submissions, one query, GT objects G1 and G2, an unlabelled spot U far from
    both. s1 and s2: G1 (0.9), U (0.8); s3 also G2 (0.7).
    Calibration (deciles of 2 or 3 scores: one score a bin; (tp + 1) / (n + 2)): s1, s2:
    p(0.8) = 1/3, p(0.9) = 2/3; s3: 2/3, 1/3, 2/3 for 0.7, 0.8, 0.9, pooled (PAV) to
    1/2, 1/2, 2/3. Weights (best F1, 2 GT): s1, s2: 2/(1 + 2) = 2/3; s3: 2 * 2/(3 + 2) = 0.8.
    G2: evidence 1 - (1 - 0.8 * 1/2) = 0.4, spurious score 0.6 (U too far to be its shift).
    U: support (2/3 * 1/3 * 2 + 0.8 * 1/2) / (2/3 * 2 + 0.8) = 0.395833.
    G1: evidence 1 - (1 - 4/9)^2 (1 - 8/15) = 0.855967: spurious score 0.144 < 0.2."""
    from ovearth_core.audit import audit_samples

    g1, g2, u = [10, 10, 30, 30], [100, 100, 120, 120], [250, 250, 270, 270]
    subs = [[_sample([g1, u], [0.9, 0.8])], [_sample([g1, u], [0.9, 0.8])],
            [_sample([g1, u, g2], [0.9, 0.8, 0.7])]]
    result = audit_samples(subs, ["s1", "s2", "s3"])
    assert [s["weight"] for s in result["submissions"]] == [0.6667, 0.6667, 0.8]
    suspects = [(s["kind"], s["bbox"], s["score"], s["support"]) for s in result["suspects"]]
    assert suspects == [("spurious", [100, 100, 20, 20], 0.6, round(1 / 3, 4)),
                        ("missing", [250, 250, 20, 20], 0.3958, 1.0)]
    evidence = [o["evidence"] for o in result["objects"]]
    assert evidence == [0.856, 0.4]
    # A submission without the query's row neither votes nor counts in the denominators.
    subs[1] = [_sample([], [], answered=False)]
    result = audit_samples(subs, ["s1", "s2", "s3"], min_score=0.0)
    missing = next(s for s in result["suspects"] if s["kind"] == "missing")
    assert missing["support"] == 1.0  # 2 of the 2 answering submissions
    assert [o["support"] for o in result["objects"]] == [1.0, 0.5]


def test_unscored_and_empty() -> None:
    from ovearth_core.audit import audit_samples

    g1 = [10, 10, 30, 30]
    # Boxes without a score (nan) get their submission's overall matched share.
    subs = [[_sample([g1], [np.nan])], [_sample([g1], [np.nan])]]
    result = audit_samples(subs, ["a", "b"], min_score=0.0)
    # G1 found by both: p = (1 + 1) / (1 + 2) = 2/3, w = 2 * 1 / (1 + 2) = 2/3 each.
    assert result["objects"][0]["evidence"] == round(1 - (1 - 4 / 9) ** 2, 4)
    # No submission answers anything: every GT object is spurious, nothing else.
    none = [[_sample([], [], answered=False)], [_sample([], [], answered=False)]]
    result = audit_samples(none, ["a", "b"])
    assert [s["kind"] for s in result["suspects"]] == ["spurious", "spurious"]
    assert [s["support"] for s in result["suspects"]] == [0.0, 0.0]
    assert audit_samples([[], []], ["a", "b"])["suspects"] == []


@pytest.mark.parametrize("modality", ["bbox", "oriented_bbox"])
def test_pairs_by_set_equal_pairs_set_by_set(modality: str) -> None:
    """The pooled pass (one STRtree for every submission) finds what one pass per
    submission finds, and only pairs whose IoU a dense matrix says is positive."""
    from ovearth_core.audit.shapes import Objects, pairs, pairs_by_set
    from ovearth_core.geometry import envelope, iou_matrix

    rng = np.random.default_rng(3)

    def objs(n: int) -> Objects:
        xy = rng.uniform(0, 100, (n, 2))
        boxes = np.hstack([xy, xy + rng.uniform(2, 30, (n, 2))])
        if modality == "bbox":
            return Objects(boxes, boxes, rng.uniform(0, 1, n))
        polys = np.stack([boxes[:, [0, 1]], boxes[:, [2, 1]], boxes[:, [2, 3]],
                          boxes[:, [0, 3]]], axis=1)
        return Objects(polys, envelope(polys), rng.uniform(0, 1, n))

    gt = objs(15)
    sets = [objs(n) for n in (0, 7, 12, 1)]
    for (gi, pi, iou), b in zip(pairs_by_set(gt, sets, modality), sets, strict=True):
        want = pairs(gt, b, modality)
        assert np.array_equal(np.lexsort((pi, gi)), np.arange(gi.size))
        assert [a.tolist() for a in (gi, pi)] == [a.tolist() for a in want[:2]]
        assert np.allclose(iou, want[2])
        dense = iou_matrix(gt.geom, b.geom, modality == "oriented_bbox")
        assert sorted(zip(*np.nonzero(dense > 1e-12), strict=True)) == sorted(
            zip(gi.tolist(), pi.tolist(), strict=True))
        assert np.allclose(iou, dense[gi, pi])


def test_seed_ious_oriented_brute_force() -> None:
    """The clustering's candidates (envelopes overlapping) and a seed's IoU with them
    (polygons intersected exactly): every pair of oriented boxes of two sets whose exact
    IoU (shapely, all pairs) is positive is a candidate, with that IoU."""
    import shapely

    from ovearth_core.audit.shapes import Objects, pooled_candidates, seed_ious
    from ovearth_core.geometry import envelope

    rng = np.random.default_rng(5)
    centre = rng.uniform(20, 60, (30, 2))
    size = rng.uniform(5, 25, (30, 2))
    angle = rng.uniform(0, np.pi, 30)
    c, s_ = np.cos(angle)[:, None], np.sin(angle)[:, None]
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) / 2
    polys = np.stack([centre + np.hstack([corners[k, 0] * size[:, :1] * c
                                          - corners[k, 1] * size[:, 1:] * s_,
                                          corners[k, 0] * size[:, :1] * s_
                                          + corners[k, 1] * size[:, 1:] * c])
                      for k in range(4)], axis=1)
    sets = [Objects(polys[:10], envelope(polys[:10]), np.ones(10)),
            Objects(polys[10:], envelope(polys[10:]), np.ones(20))]
    u, v, known = pooled_candidates(sets, "oriented_bbox")
    assert known is None
    shapes = [shapely.Polygon(p) for p in polys]
    exact = {(a, b): shapes[a].intersection(shapes[b]).area / shapes[a].union(shapes[b]).area
             for a in range(30) for b in range(a + 1, 30)}
    candidates = set(zip(u.tolist(), v.tolist(), strict=True))
    assert {k for k, x in exact.items() if x > 1e-9} <= candidates
    for seed in range(30):
        others = np.array(sorted(b for a, b in candidates if a == seed), dtype=np.intp)
        got = seed_ious(polys, seed, others, "oriented_bbox")
        assert np.allclose(got, [exact[seed, b] for b in others.tolist()])


def test_mask_pairs_equal_overlaps_mask_by_mask() -> None:
    """The one sweep over every submission's mask segments (pooled_candidates, masks)
    finds what mask_objects.overlaps finds for each pair of masks, IoU included; and that
    IoU is the pixels' (pycocotools decode, numpy)."""
    from ovearth_core import masks
    from ovearth_core.analysis.mask_objects import components, overlaps
    from ovearth_core.audit.shapes import Objects, pooled_candidates

    rng = np.random.default_rng(11)
    rles = []
    for _ in range(5):
        pixels = np.zeros((40, 50), dtype=np.uint8)
        for _ in range(4):
            x, y = rng.integers(0, 40, 2)
            w, h = rng.integers(2, 12, 2)
            pixels[y:y + h, x:x + w] = 1
        rles.append(masks.encode(pixels))
    comps = [components(r) for r in rles]
    sets = [Objects(c, np.zeros((c.count, 4)), np.ones(c.count)) for c in comps]
    u, v, iou = pooled_candidates(sets, "segmentation")
    got = {(a, b): x for a, b, x in zip(u.tolist(), v.tolist(), iou.tolist(), strict=True)}
    offsets = np.cumsum([0, *(c.count for c in comps)])
    want = {}
    for s in range(5):
        for t in range(s + 1, 5):
            i, j, x = overlaps(comps[s], comps[t])
            for a, b, value in zip(i.tolist(), j.tolist(), x.tolist(), strict=True):
                want[int(offsets[s] + a), int(offsets[t] + b)] = value
    assert got.keys() == want.keys() and want
    assert all(abs(got[k] - want[k]) < 1e-12 for k in want)
    # One pair by pixels: decode, label with scipy, IoU by counting.
    from scipy import ndimage

    (a, b), value = next(iter(want.items()))
    sa = int(np.searchsorted(offsets, a, side="right") - 1)
    sb = int(np.searchsorted(offsets, b, side="right") - 1)
    full = np.ones((3, 3))
    la = ndimage.label(masks.decode(rles[sa]).T, structure=full)[0].T
    lb = ndimage.label(masks.decode(rles[sb]).T, structure=full)[0].T
    pa, pb = la == a - offsets[sa] + 1, lb == b - offsets[sb] + 1
    assert got[a, b] == pytest.approx((pa & pb).sum() / (pa | pb).sum())


def test_the_same_file_twice_votes_once(scene: tuple[Path, list[Path]], tmp_path: Path) -> None:
    """Two paths with the same bytes (a copy under another name too) are one submission:
    the audit equals the one without the copy, and a warning names both."""
    gt, preds = scene
    copy = tmp_path / "copy_of_first.json"
    copy.write_bytes(preds[0].read_bytes())
    once = audit(gt, preds, Options("vocabulary", "bbox"))
    twice = audit(gt, [*preds, copy, preds[1]], Options("vocabulary", "bbox"))
    assert [s["submission"] if "submission" in s else s["name"]
            for s in twice["submissions"]] == [s["submission"] if "submission" in s else
                                               s["name"] for s in once["submissions"]]
    assert [(s["kind"], s["query_id"], s["score"]) for s in twice["suspects"]] == [
        (s["kind"], s["query_id"], s["score"]) for s in once["suspects"]]
    messages = [w["message"] for w in twice["warnings"]]
    assert len(messages) == 2 and all("counted once" in m for m in messages)
    assert str(copy) in messages[0]
