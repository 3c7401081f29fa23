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
