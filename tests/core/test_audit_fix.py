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
        if query == "q1_plane" and modality == "bbox":
            # The shifted label's box is the consensus; its oriented box the label's own
            # 30 x 30 square moved to the consensus box's centre (not resized to it).
            (x, y, w, h), obb = ann["bbox"][1], np.array(ann["oriented_bbox"][1])
            assert np.allclose(obb.mean(axis=0), [x + w / 2, y + h / 2])
            assert np.allclose(obb.max(axis=0) - obb.min(axis=0), [30, 30])
            corners, ann = corners[:1], {"oriented_bbox": ann["oriented_bbox"][:1]}
        assert np.allclose(ann["oriented_bbox"], corners), query
    # The input document is not changed.
    assert doc == json.loads(gt.read_text())
    # Audited again on the cleaned ground truth, nothing is left to suspect strongly.
    cleaned_path = gt.parent / "cleaned.json"
    cleaned_path.write_text(json.dumps(new))
    again = audit(cleaned_path, preds, Options("vocabulary", (modality,)))["suspects"]
    assert all(s["score"] < 0.4 for s in again), again[:3]


def test_cleaned_keeps_each_remaining_objects_area(scene: tuple[Path, list[Path]]) -> None:
    """Issue 46: COCO's per-object ``area`` list follows its objects: a removed object's
    area goes, a shifted one's stays, a moved one (wrong class) takes its own along; an
    annotation that gains a new object (area unknown) loses the list. The cleaned ground
    truth then loads (each list pairs with its boxes)."""
    gt, preds = scene
    suspects = _injected(gt, preds)
    doc = json.loads(gt.read_text())
    for k, ann in enumerate(doc["annotations"]):
        ann["area"] = [1000.0 * k + j for j in range(len(ann["bbox"]))]
    gt.write_text(json.dumps(doc))
    new = fix.cleaned(doc, "vocabulary", "bbox", suspects)
    old = {a["id"]: a for a in doc["annotations"]}
    area_of = {(a["id"], tuple(b)): x for a in doc["annotations"]
               for b, x in zip(a["bbox"], a["area"], strict=True)}
    for ann in new["annotations"]:
        before = old.get(ann["id"])
        if before is None or len(ann["bbox"]) > len(before["bbox"]) or any(
                b not in before["bbox"] for b in ann["bbox"][len(before["bbox"]):]):
            sources = [[x for (_, box), x in area_of.items() if list(box) == b]
                       for b in ann["bbox"]]
            if all(len(s) == 1 for s in sources):  # moved in (wrong class): own areas
                assert ann["area"] == [s[0] for s in sources], ann["id"]
            else:
                assert "area" not in ann, ann["id"]  # a new object: its area unknown
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


# --------------------------------------------------------------- per-object items (issue 46)
# Hand-built documents and suspects: what each confirmed fix must do to an object's items.

def _box_doc() -> dict[str, Any]:
    """Image 0: plane objects A, B, C (B difficult), a ship D (difficult); every object's
    oriented box its box's corners, ``difficult`` parallel to both."""
    def ann(ann_id: str, cat: str, boxes: list[list[float]], flags: list[int]
            ) -> dict[str, Any]:
        return {"id": ann_id, "image_path": "images/0.png", "width": 300, "height": 300,
                "category_name": cat, "segmentation": None, "bbox": boxes,
                "oriented_bbox": [[[x, y], [x + w, y], [x + w, y + h], [x, y + h]]
                                  for x, y, w, h in boxes], "difficult": flags,
                "ignore_bbox": [[250.0, 250.0, 10.0, 10.0]]}

    return {"source": {"format": "DOTA", "resample_unit": "image"},
            "annotations": [ann("p", "plane", [[10.0, 10.0, 20, 20], [50.0, 10.0, 20, 20],
                                               [90.0, 10.0, 20, 20]], [0, 1, 0]),
                            ann("s", "ship", [[10.0, 100.0, 40, 20]], [1])],
            "tasks": {"open_vocabulary": [
                {"query_id": "qp", "ann_id": "p", "type": "positive", "phrase": "plane"},
                {"query_id": "qs", "ann_id": "s", "type": "positive", "phrase": "ship"},
                {"query_id": "qh", "ann_id": "p", "type": "negative", "phrase": "harbor"}]}}


def _s(kind: str, query_id: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "query_id": query_id, "category": "plane", **fields}


def _by_box(ann: dict[str, Any]) -> dict[tuple[float, ...], Any]:
    """``{box: (oriented box, difficult flag)}`` of an annotation's objects."""
    return {tuple(b): (o, d) for b, o, d in zip(ann["bbox"], ann["oriented_bbox"],
                                                 ann["difficult"], strict=True)}


def _loads(doc: dict[str, Any], tmp_path: Path) -> None:
    """The cleaned document loads with the evaluator's loader (flags pair with boxes)."""
    from ovearth_core.io import parse_ground_truth

    parse_ground_truth(json.loads(json.dumps(doc)), str(tmp_path / "cleaned.json"))


@pytest.mark.parametrize("modality", ["bbox", "oriented_bbox"])
def test_flags_travel_when_the_count_stays(modality: str, tmp_path: Path) -> None:
    """A spurious A removed and a missing E added: three objects still, and the flags are
    B's 1, C's 0 and E's default 0 (c100000 left [0, 1, 0] on B, C, E: B lost its flag)."""
    doc = _box_doc()
    new = fix.cleaned(doc, "vocabulary", modality, [
        _s("spurious", "qp", object=0, bbox=[10, 10, 20, 20]),
        _s("missing", "qp", bbox=[200, 200, 20, 20])])
    plane = _ann(new, "qp")
    assert plane["bbox"] == [[50, 10, 20, 20], [90, 10, 20, 20], [200, 200, 20, 20]]
    assert plane["difficult"] == [1, 0, 0]
    assert _by_box(plane)[(200, 200, 20, 20)] == (
        [[200, 200], [220, 200], [220, 220], [200, 220]], 0)
    assert plane["ignore_bbox"] == [[250.0, 250.0, 10.0, 10.0]]  # not an object: kept
    assert new["source"] == doc["source"]
    _loads(new, tmp_path)


@pytest.mark.parametrize("modality", ["bbox", "oriented_bbox"])
def test_flags_travel_when_the_count_changes(modality: str, tmp_path: Path) -> None:
    """A spurious A removed: B and C keep their flags (c100000 deleted the list); a
    difficult ship D labelled as a ship but found as a plane moves with its flag and its
    oriented box; a shifted difficult B stays difficult."""
    doc = _box_doc()
    d_obb = doc["annotations"][1]["oriented_bbox"][0]
    new = fix.cleaned(doc, "vocabulary", modality, [
        _s("spurious", "qp", object=0, bbox=[10, 10, 20, 20]),
        _s("shifted", "qp", object=1, bbox=[55, 10, 20, 20], gt_bbox=[50, 10, 20, 20]),
        {**_s("wrong_class", "qs", object=0, bbox=[10, 100, 40, 20],
              gt_bbox=[10, 100, 40, 20]), "proposed_category": "plane",
         "evidence_query_id": "qp"}])
    plane = _by_box(_ann(new, "qp"))
    assert plane[(55, 10, 20, 20)][1] == 1
    assert plane[(90, 10, 20, 20)][1] == 0
    assert plane[(10, 100, 40, 20)] == (d_obb, 1)
    assert len(plane) == 3
    ship = _ann(new, "qs")
    assert ship["bbox"] == [] and ship["oriented_bbox"] == [] and ship["difficult"] == []
    _loads(new, tmp_path)


def test_new_annotation_of_a_negative_query(tmp_path: Path) -> None:
    """A missing label on a negative query: a new annotation whose object carries every
    per-object list of the document, the new flag the default 0."""
    new = fix.cleaned(_box_doc(), "vocabulary", "bbox", [
        {**_s("missing", "qh", bbox=[150, 150, 30, 10]), "category": "harbor"}])
    harbor = _ann(new, "qh")
    assert harbor["category_name"] == "harbor"
    assert harbor["bbox"] == [[150, 150, 30, 10]]
    assert harbor["oriented_bbox"] == [[[150, 150], [180, 150], [180, 160], [150, 160]]]
    assert harbor["difficult"] == [0]
    _loads(new, tmp_path)


def test_boxes_only_document_gets_no_oriented_boxes(tmp_path: Path) -> None:
    """A document without oriented boxes: a fix invents none (and no flags)."""
    doc = _box_doc()
    for ann in doc["annotations"]:
        del ann["oriented_bbox"], ann["difficult"]
    new = fix.cleaned(doc, "vocabulary", "bbox", [
        _s("missing", "qp", bbox=[200, 200, 20, 20]),
        {**_s("missing", "qh", bbox=[150, 150, 30, 10]), "category": "harbor"}])
    for query in ("qp", "qh"):
        assert "oriented_bbox" not in _ann(new, query) and "difficult" not in _ann(new, query)
    assert _ann(new, "qp")["bbox"][-1] == [200, 200, 20, 20]
    _loads(new, tmp_path)


def _rotated(cx: float, cy: float, w: float, h: float, degrees: float) -> list[list[float]]:
    """A w x h rectangle turned by ``degrees`` (counter-clockwise in x-right, y-up terms)
    about (cx, cy): its corners in boundary order, worked out with cos and sin here."""
    a = np.radians(degrees)
    c, s = float(np.cos(a)), float(np.sin(a))
    return [[cx + dx * c - dy * s, cy + dx * s + dy * c]
            for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))]


def _xywh(poly: list[list[float]]) -> list[float]:
    xs, ys = [p[0] for p in poly], [p[1] for p in poly]
    return [round(min(xs), 2), round(min(ys), 2), round(max(xs) - min(xs), 2),
            round(max(ys) - min(ys), 2)]


@pytest.mark.parametrize("modality", ["oriented_bbox", "bbox"])
def test_shifted_rotated_label_is_translated(modality: str, tmp_path: Path) -> None:
    """A 60 x 14 box turned by 27 degrees, labelled 25 px right of and 15 px above where the
    submissions put it: the fix is that box moved by (-25, +15), vertex by vertex (the
    same shape, angle and vertex order; c100000 wrote the upright envelope), and its
    axis-aligned box moved alike."""
    label = _rotated(125.0, 85.0, 60.0, 14.0, 27.0)
    truth = [[x - 25.0, y + 15.0] for x, y in label]
    hbb = [float(v) for v in _xywh(label)]
    doc = {"annotations": [{"id": "a", "image_path": "images/0.png", "width": 300,
                            "height": 300, "category_name": "ship", "bbox": [hbb],
                            "oriented_bbox": [label], "difficult": [1]}],
           "tasks": {"open_vocabulary": [{"query_id": "q", "ann_id": "a",
                                          "type": "positive", "phrase": "ship"}]}}
    consensus = _xywh(truth) if modality == "oriented_bbox" else [hbb[0] - 25, hbb[1] + 15,
                                                                  hbb[2] + 1, hbb[3] + 1]
    new = fix.cleaned(doc, "vocabulary", modality, [
        {"kind": "shifted", "query_id": "q", "object": 0, "bbox": consensus,
         "gt_bbox": _xywh(label), "category": "ship"}])
    ann = new["annotations"][0]
    # Within the suspect's 0.01 px rounding; a consensus box 1 px larger moves the centre
    # half a pixel further in the box audit.
    tol = 0.02 if modality == "oriented_bbox" else 0.51
    assert np.allclose(ann["oriented_bbox"][0], truth, atol=tol)
    edges = np.diff(np.array(ann["oriented_bbox"][0] + ann["oriented_bbox"][0][:1]), axis=0)
    assert np.allclose(np.hypot(*edges.T), [60, 14, 60, 14])  # shape kept, not an envelope
    assert np.isclose(np.degrees(np.arctan2(edges[0, 1], edges[0, 0])), 27.0)
    if modality == "oriented_bbox":
        assert np.allclose(ann["bbox"][0], [hbb[0] - 25, hbb[1] + 15, hbb[2], hbb[3]],
                           atol=tol)
    else:
        assert ann["bbox"][0] == consensus
    assert ann["difficult"] == [1]
    _loads(new, tmp_path)


def test_unpairable_flags_are_refused() -> None:
    """An oriented box added to an annotation whose objects have boxes but no oriented
    boxes would leave its flags pairing with neither list: refused, naming it."""
    doc = _box_doc()
    doc["annotations"][0]["oriented_bbox"] = []
    with pytest.raises(OVEarthInputError, match="annotation p's box lists of one length"):
        fix.cleaned(doc, "vocabulary", "oriented_bbox", [
            _s("missing", "qp", bbox=[200, 200, 20, 20])])
