"""Confirmed audit suspects (issue 36): decisions in the review sidecar, the cleaned ground
truth (each fix checked by hand on the hand-built scene of test_audit.py), its write
(confined, atomic, never over an input) and the re-ranking."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ovearth_core import review
from ovearth_core.analysis.standings import METRICS
from ovearth_core.audit import audit, fix
from ovearth_core.errors import OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options
from tests.audit_scene import INJECTED, write_audit_dataset
from tests.core.test_audit import _key


@pytest.fixture()
def scene(tmp_path: Path) -> tuple[Path, list[Path]]:
    return write_audit_dataset(tmp_path)


def _injected(gt: Path, preds: list[Path], modality: str = "bbox") -> list[dict[str, Any]]:
    suspects = audit(gt, preds, Options("vocabulary", (modality,)))["suspects"]
    top = suspects[:len(INJECTED)]
    assert {_key(s) for s in top} == INJECTED
    return top


def _ann(doc: dict[str, Any], query_id: str) -> dict[str, Any]:
    row = next(r for r in doc["tasks"]["open_vocabulary"] if r["query_id"] == query_id)
    return next(a for a in doc["annotations"] if a["id"] == row["ann_id"])


def _near(boxes: list[list[float]], want: list[float], tol: float = 1.5) -> bool:
    return any(all(abs(a - b) <= tol for a, b in zip(box, want, strict=True))
               for box in boxes)


@pytest.mark.parametrize("modality", ["bbox", "oriented_bbox"])
def test_cleaned_fixes_each_kind(scene: tuple[Path, list[Path]], modality: str) -> None:
    """Each fix by hand; an oriented-box audit edits the oriented boxes and, paired with
    them, the boxes alike (the scene's oriented boxes are its boxes' corners)."""
    gt, preds = scene
    doc = json.loads(gt.read_text())
    new = fix.cleaned(doc, "vocabulary", modality, _injected(gt, preds, modality))
    assert _ann(new, "q3_plane")["bbox"] == [[20, 100, 30, 30], [150, 150, 30, 30]]
    shifted = _ann(new, "q1_plane")["bbox"]
    assert [150, 20, 30, 30] in shifted and not _near(shifted, [100, 150, 30, 30])
    assert _near(shifted, [60, 150, 30, 30]) and len(shifted) == 2
    assert _near(_ann(new, "q0_plane")["bbox"], [140, 140, 30, 30])
    assert len(_ann(new, "q0_plane")["bbox"]) == 3
    assert _ann(new, "q2_ship")["bbox"] == [[100, 40, 40, 20]]
    assert [110, 130, 30, 30] in _ann(new, "q2_plane")["bbox"]
    row = next(r for r in new["tasks"]["open_vocabulary"] if r["query_id"] == "q3_ship")
    assert row["type"] == "positive"
    ship = _ann(new, "q3_ship")
    assert ship["category_name"] == "ship" and ship["image_path"] == "images/3.png"
    assert len(ship["bbox"]) == 1 and _near(ship["bbox"], [80, 20, 40, 20])
    # The other box list, paired with this one, is edited alike.
    assert len(_ann(new, "q3_plane")["oriented_bbox"]) == 2
    for query in ("q0_plane", "q1_plane", "q2_plane", "q2_ship", "q3_plane"):
        ann = _ann(new, query)
        corners = [[[x, y], [x + w, y], [x + w, y + h], [x, y + h]] for x, y, w, h in ann["bbox"]]
        assert np.allclose(ann["oriented_bbox"], corners), query
    # The input document is not changed.
    assert doc == json.loads(gt.read_text())
    # Audited again on the cleaned ground truth, nothing is left to suspect strongly.
    cleaned_path = gt.parent / "cleaned.json"
    cleaned_path.write_text(json.dumps(new))
    again = audit(cleaned_path, preds, Options("vocabulary", (modality,)))["suspects"]
    assert all(s["score"] < 0.4 for s in again), again[:3]


def test_cleaned_keeps_each_remaining_objects_area(scene: tuple[Path, list[Path]]) -> None:
    """Issue 46: COCO's per-object ``area`` list follows the boxes: a removed object's area
    goes, a shifted one's stays; an annotation that gains an object (area unknown) loses
    the list. The cleaned ground truth then loads (each list pairs with its boxes)."""
    gt, preds = scene
    suspects = _injected(gt, preds)
    doc = json.loads(gt.read_text())
    for k, ann in enumerate(doc["annotations"]):
        ann["area"] = [1000.0 * k + j for j in range(len(ann["bbox"]))]
    gt.write_text(json.dumps(doc))
    new = fix.cleaned(doc, "vocabulary", "bbox", suspects)
    old = {a["id"]: a for a in doc["annotations"]}
    for ann in new["annotations"]:
        before = old.get(ann["id"])
        if before is None or len(ann["bbox"]) > len(before["bbox"]) or any(
                b not in before["bbox"] for b in ann["bbox"][len(before["bbox"]):]):
            assert "area" not in ann, ann["id"]  # a new annotation, or one that gained
            continue
        if len(ann["bbox"]) < len(before["bbox"]):  # removed: the others' areas by box
            assert ann["area"] == [a for b, a in zip(before["bbox"], before["area"],
                                                     strict=True) if b in ann["bbox"]]
        else:
            assert ann["area"] == before["area"], ann["id"]  # unchanged or shifted
    assert len(_ann(new, "q3_plane")["area"]) == 2  # a spurious object was removed
    assert "area" not in _ann(new, "q0_plane")  # a missing object was added
    assert _ann(new, "q1_plane")["area"] == _ann(doc, "q1_plane")["area"]  # shifted
    (gt.parent / "cleaned.json").write_text(json.dumps(new))
    load_samples(gt.parent / "cleaned.json", preds[0], "vocabulary", modalities="bbox")


def test_cleaned_refuses(scene: tuple[Path, list[Path]]) -> None:
    gt, preds = scene
    doc = json.loads(gt.read_text())
    with pytest.raises(OVEarthInputError, match="masks are not edited"):
        fix.cleaned(doc, "vocabulary", "segmentation", [])
    bad = {**_injected(gt, preds)[0], "query_id": "nope", "kind": "spurious", "object": 0}
    with pytest.raises(OVEarthInputError, match="nope"):
        fix.cleaned(doc, "vocabulary", "bbox", [bad])


def test_write_cleaned_confined_atomic(scene: tuple[Path, list[Path]]) -> None:
    gt, _ = scene
    doc = json.loads(gt.read_text())
    path = fix.write_cleaned(gt, doc)
    assert path == fix.cleaned_path(gt).resolve() or path == fix.cleaned_path(gt)
    assert json.loads(Path(path).read_text()) == doc
    with pytest.raises(OVEarthInputError):
        fix.write_cleaned(gt, doc, gt)  # never over the ground truth
    outside = gt.parent.parent / f"outside_{os.getpid()}.json"
    with pytest.raises(OVEarthInputError):
        fix.write_cleaned(gt, doc, outside)
    assert not outside.exists()
    link = gt.parent / "link.json"
    link.symlink_to(outside)
    with pytest.raises(OVEarthInputError):
        fix.write_cleaned(gt, doc, link)
    assert not outside.exists()


def test_decisions_round_trip(scene: tuple[Path, list[Path]]) -> None:
    gt, preds = scene
    suspects = _injected(gt, preds)
    sidecar = review.sidecar_for(gt)
    state = review.load_state(sidecar)
    assert fix.decisions(state, "vocabulary", suspects) == {}
    fix.decide(sidecar, "vocabulary", suspects[0], "confirmed", state)
    fix.decide(sidecar, "vocabulary", suspects[1], "rejected", review.load_state(sidecar))
    got = fix.decisions(review.load_state(sidecar), "vocabulary", suspects)
    assert got == {fix.suspect_key(suspects[0]): "confirmed",
                   fix.suspect_key(suspects[1]): "rejected"}
    fix.decide(sidecar, "vocabulary", suspects[0], "rejected", review.load_state(sidecar))
    fix.decide(sidecar, "vocabulary", suspects[1], None, review.load_state(sidecar))
    got = fix.decisions(review.load_state(sidecar), "vocabulary", suspects)
    assert got == {fix.suspect_key(suspects[0]): "rejected"}
    # Two suspects of one query keep apart (the key digests the boxes too).
    keys = {fix.suspect_key(s) for s in suspects}
    assert len(keys) == len(suspects)


def test_rerank_by_hand(scene: tuple[Path, list[Path]]) -> None:
    gt, preds = scene
    new = fix.cleaned(json.loads(gt.read_text()), "vocabulary", "bbox", _injected(gt, preds))
    cleaned_path = gt.parent / "cleaned.json"
    cleaned_path.write_text(json.dumps(new))
    names = [p.stem for p in preds]
    before = [evaluate_samples(load_samples(gt, p, "vocabulary", modalities="bbox"))
              for p in preds]
    after = [evaluate_samples(load_samples(cleaned_path, p, "vocabulary", modalities="bbox"))
             for p in preds]
    out = fix.rerank(names, before, after)
    metric = out["metric"]
    assert metric is not None
    rows = {r["name"]: r for r in out["rows"]}
    for name in names:
        assert rows[name]["change"] == rows[name]["rank_before"] - rows[name]["rank_after"]
    # The values are the evaluator's summary values; ranks by hand: larger first.
    key, sub = METRICS[metric].summary_path
    for name, res_b, res_a in zip(names, before, after, strict=True):
        assert rows[name]["before"] == res_b["summary"][key][sub]
        assert rows[name]["after"] == res_a["summary"][key][sub]
    for when in ("before", "after"):
        values = [rows[n][when] for n in names]
        want = sorted(range(len(names)), key=lambda i: -values[i])
        got = sorted(range(len(names)), key=lambda i: rows[names[i]][f"rank_{when}"])
        assert [values[i] for i in got] == [values[i] for i in want]
    assert [r["rank_after"] for r in out["rows"]] == list(range(1, len(names) + 1))
    # Fixing the labels raises every model's score on this scene.
    assert all(r["after"] >= r["before"] for r in out["rows"])
