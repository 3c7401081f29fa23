"""Every writer of a derived file keeps the fields of its source (issue 46): each field the
loader (or the converter's reader) accepts, set to a non-default value in the source, comes
back in what the writer wrote, unless the writer's purpose is to change it.

Writers: the audit's cleaned ground truth, ``to-coco`` (back with ``from-coco --mapping``),
``from-coco``, ``from-dota`` (and its chip merge), ``from-voc``, ``from-rsvg``,
``from-label-maps`` and the GeoJSON export. Expected values are the sources' own numbers,
or worked out here from the formats' definitions (a VOC ``<robndbox>``'s corners, a chip's
``(coordinate + offset) / rate``); masks are compared as pixels decoded by pycocotools.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from pycocotools import mask as mask_utils

from ovearth_core.audit import fix
from ovearth_core.convert import (
    from_coco,
    from_coco_export,
    from_dota,
    from_label_maps,
    from_rsvg,
    from_voc,
    to_coco,
)
from ovearth_core.io import GT_OBJECT_FIELDS, parse_ground_truth

W, H = 120, 90


def _rle(pixels: np.ndarray) -> dict[str, Any]:
    rle = mask_utils.encode(np.asfortranarray(pixels.astype(np.uint8)))
    return {"size": list(rle["size"]), "counts": rle["counts"].decode()}


def _pixels(rle: dict[str, Any] | None, shape: tuple[int, int] = (H, W)) -> np.ndarray:
    if rle is None:
        return np.zeros(shape, dtype=np.uint8)
    counts = rle["counts"]
    coded = {"size": rle["size"], "counts": counts.encode() if isinstance(counts, str)
             else counts}
    if not isinstance(counts, str):
        coded = mask_utils.frPyObjects(coded, *rle["size"])
    return mask_utils.decode(coded)


def _square(x: float, y: float, w: float, h: float) -> list[list[float]]:
    return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]


def _tilted(cx: float, cy: float, w: float, h: float, degrees: float) -> list[list[float]]:
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    return [[round(cx + dx * c - dy * s, 3), round(cy + dx * s + dy * c, 3)]
            for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))]


def _benchmark() -> tuple[dict[str, Any], dict[str, Any]]:
    """A ground truth with every field the loader accepts at a non-default value (masks,
    boxes, tilted oriented boxes, ignore regions, difficult flags, all three tasks) and a
    submission with scored boxes, oriented boxes and masks."""
    mask = np.zeros((H, W), dtype=np.uint8)
    mask[10:30, 10:40] = 1
    mask[50:70, 60:90] = 1
    ship = np.zeros((H, W), dtype=np.uint8)
    ship[40:60, 5:35] = 1
    anns = [
        {"id": "a1", "image_path": "images/1.png", "width": W, "height": H,
         "category_name": "plane", "segmentation": _rle(mask),
         "bbox": [[10.5, 10.0, 30.0, 20.0], [60.0, 50.25, 30.0, 20.0]],
         "oriented_bbox": [_tilted(25.5, 20.0, 28.0, 12.0, 17.0),
                           _tilted(75.0, 60.0, 26.0, 14.0, -32.0)],
         "ignore_bbox": [[100.0, 5.0, 10.0, 10.0]],
         "ignore_oriented_bbox": [_square(100.0, 5.0, 10.0, 10.0)],
         "difficult": [0, 1]},
        {"id": "a2", "image_path": "images/1.png", "width": W, "height": H,
         "category_name": "ship", "segmentation": _rle(ship),
         "bbox": [[5.0, 40.0, 30.0, 20.0]], "oriented_bbox": [_tilted(20, 50, 28, 16, 41.0)],
         "difficult": [1]},
    ]
    tasks = {"open_vocabulary": [
        {"query_id": "ov_1", "ann_id": "a1", "type": "positive", "phrase": "plane"},
        {"query_id": "ov_2", "ann_id": "a2", "type": "positive", "phrase": "ship"},
        {"query_id": "ov_3", "ann_id": "a1", "type": "negative", "phrase": "harbor"}],
        "referring": [{"query_id": "ref_1", "ann_id": "a2", "query": "the ship on the left"}],
        "reasoning": [{"query_id": "rea_1", "ann_id": "a1", "query": "what carries people"}]}
    pred_mask = np.zeros((H, W), dtype=np.uint8)
    pred_mask[12:28, 10:42] = 1

    def row(qid: str, text_key: str, text: str) -> dict[str, Any]:
        return {"query_id": qid, text_key: text, "segmentation": _rle(pred_mask),
                "bbox": [{"bbox": [11.0, 10.5, 40.0, 31.0], "score": 0.875},
                         {"bbox": [60.0, 50.0, 88.5, 71.0], "score": 0.3125}],
                "oriented_bbox": [{"polygon": _tilted(25.0, 21.0, 27.0, 12.0, 15.0),
                                   "score": 0.75}]}

    preds = {"tasks": {"open_vocabulary": [row("ov_1", "phrase", "plane"),
                                           row("ov_3", "phrase", "harbor")],
                       "referring": [row("ref_1", "query", "the ship on the left")],
                       "reasoning": [row("rea_1", "query", "what carries people")]}}
    return {"annotations": anns, "tasks": tasks}, preds


def _write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def _same_mask(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    return bool((_pixels(a) == _pixels(b)).all())


# ---------------------------------------------------------------- the audit's cleaned truth


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["bbox", "oriented_bbox"]), st.integers(0, 1))
def test_audit_fix_keeps_every_other_field(modality: str, removed: int) -> None:
    """No fix: the document itself. A spurious object removed: every other annotation and
    query as it was, the edited annotation's other fields (mask, ignore regions, extra
    keys) as they were, and its other object's items (box, oriented box, flag) intact."""
    gt, _ = _benchmark()
    gt["source"] = {"format": "DOTA", "resample_unit": "image"}
    gt["annotations"][0]["image_meta"] = {"gsd": 0.5}
    assert fix.cleaned(gt, "vocabulary", modality, []) == gt
    new = fix.cleaned(gt, "vocabulary", modality, [
        {"kind": "spurious", "query_id": "ov_1", "object": removed, "category": "plane"}])
    assert new["source"] == gt["source"] and new["tasks"] == gt["tasks"]
    assert new["annotations"][1] == gt["annotations"][1]
    before, after = gt["annotations"][0], new["annotations"][0]
    assert {k: v for k, v in after.items() if k not in GT_OBJECT_FIELDS} == {
        k: v for k, v in before.items() if k not in GT_OBJECT_FIELDS}
    kept = 1 - removed
    assert {f: after[f] for f in GT_OBJECT_FIELDS} == {f: [before[f][kept]]
                                                        for f in GT_OBJECT_FIELDS}


def test_audit_fix_new_annotation_keeps_the_image_fields() -> None:
    """A missing label on a negative query: the new annotation repeats what its image's
    annotation says of the image (path, size, ``image_meta``)."""
    gt, _ = _benchmark()
    gt["annotations"][0]["image_meta"] = {"gsd": 0.5, "imagesource": "GoogleEarth"}
    new = fix.cleaned(gt, "vocabulary", "bbox", [
        {"kind": "missing", "query_id": "ov_3", "category": "harbor",
         "bbox": [80.0, 10.0, 20.0, 10.0]}])
    made = next(a for a in new["annotations"] if a["category_name"] == "harbor")
    for key in ("image_path", "width", "height", "image_meta"):
        assert made[key] == gt["annotations"][0][key], key


# ---------------------------------------------------------------- to-coco and back


@pytest.mark.parametrize("task", ["vocabulary", "referring", "reasoning"])
def test_to_coco_and_back_keeps_every_field(tmp_path: Path, task: str) -> None:
    """``to-coco`` then ``from-coco --mapping``: every annotation a positive query links
    to comes back with its id, image, size, category, mask (same pixels), boxes, oriented
    boxes, ignore regions and difficult flags; every query with its id, polarity and text;
    every predicted box and oriented box with its score, the mask with its pixels."""
    gt, preds = _benchmark()
    gt_path, pred_path = _write(tmp_path / "gt.json", gt), _write(tmp_path / "p.json", preds)
    to_coco(gt_path, pred_path, task, tmp_path / "coco")
    from_coco_export(tmp_path / "coco" / "mapping.json", None, tmp_path / "back")
    back = json.loads((tmp_path / "back" / "ground_truth.json").read_text())
    key = {"vocabulary": "open_vocabulary"}.get(task, task)
    assert back["tasks"][key] == gt["tasks"][key]
    positive = {q["ann_id"] for q in gt["tasks"][key] if q.get("type") != "negative"}
    anns = {a["id"]: a for a in back["annotations"]}
    for want in gt["annotations"]:
        if want["id"] not in positive:
            continue
        got = anns[want["id"]]
        assert _same_mask(got.pop("segmentation"), want["segmentation"]), want["id"]
        assert got == {k: v for k, v in want.items() if k != "segmentation"}, want["id"]
    rows = json.loads((tmp_path / "back" / "predictions" / "p.json").read_text())["tasks"][key]
    answered = {r["query_id"] for r in preds["tasks"][key]}
    for row in rows:
        if row["query_id"] not in answered:  # the export writes every query, empty here
            assert row["bbox"] == row["oriented_bbox"] == [] and not row["segmentation"]
            continue
        source = next(r for r in preds["tasks"][key] if r["query_id"] == row["query_id"])
        assert [(b["bbox"], b["score"]) for b in row["bbox"]] == [
            (b["bbox"], b["score"]) for b in source["bbox"]]
        assert [(o["polygon"], o["score"]) for o in row["oriented_bbox"]] == [
            (o["polygon"], o["score"]) for o in source["oriented_bbox"]]
        assert _same_mask(row["segmentation"], source["segmentation"])


# ---------------------------------------------------------------- from-coco


def test_from_coco_keeps_every_field(tmp_path: Path) -> None:
    """Each instance's box, given oriented box and difficult flag, a crowd's box as an
    ignore region, LVIS's negatives, each result's box, oriented box and score."""
    ring = _tilted(30.0, 25.0, 24.0, 10.0, 23.0)
    instances = {
        "images": [{"id": 7, "file_name": "7.png", "width": W, "height": H,
                    "neg_category_ids": [3]}],
        "categories": [{"id": 1, "name": "plane"}, {"id": 2, "name": "ship"},
                       {"id": 3, "name": "harbor"}],
        "annotations": [
            {"id": 1, "image_id": 7, "category_id": 1, "bbox": [18.5, 17.0, 23.0, 16.0],
             "iscrowd": 0, "oriented_bbox": ring, "difficult": 1,
             "segmentation": [[18.5, 17.0, 41.5, 17.0, 41.5, 33.0, 18.5, 33.0]]},
            {"id": 2, "image_id": 7, "category_id": 1, "bbox": [60.0, 40.0, 20.0, 10.0],
             "iscrowd": 0, "difficult": 0},
            {"id": 3, "image_id": 7, "category_id": 1, "bbox": [90.0, 60.0, 25.0, 25.0],
             "iscrowd": 1},
            {"id": 4, "image_id": 7, "category_id": 2, "bbox": [5.0, 70.0, 30.0, 12.0],
             "iscrowd": 0}]}
    results = [{"image_id": 7, "category_id": 1, "bbox": [19.0, 17.5, 22.0, 15.0],
                "score": 0.8125, "oriented_bbox": _tilted(30.0, 25.0, 22.0, 9.0, 20.0)},
               {"image_id": 7, "category_id": 2, "bbox": [6.0, 70.0, 28.0, 12.0],
                "score": 0.4375}]
    from_coco(_write(tmp_path / "inst.json", instances), None, tmp_path / "b",
              [_write(tmp_path / "model.json", results)])
    gt = json.loads((tmp_path / "b" / "ground_truth.json").read_text())
    anns = {a["id"]: a for a in gt["annotations"]}
    plane, ship = anns["7_1"], anns["7_2"]
    assert plane["bbox"] == [[18.5, 17.0, 23.0, 16.0], [60.0, 40.0, 20.0, 10.0]]
    assert plane["oriented_bbox"][0] == ring
    assert plane["difficult"] == [1, 0]
    assert plane["ignore_bbox"] == [[90.0, 60.0, 25.0, 25.0]]
    assert ship["bbox"] == [[5.0, 70.0, 30.0, 12.0]] and "difficult" not in ship
    types = {q["query_id"]: q["type"] for q in gt["tasks"]["open_vocabulary"]}
    assert types == {"ov_7_1": "positive", "ov_7_2": "positive", "ov_7_3": "negative"}
    rows = {r["query_id"]: r for r in json.loads(
        (tmp_path / "b" / "predictions" / "model.json").read_text())["tasks"]["open_vocabulary"]}
    assert rows["ov_7_1"]["bbox"] == [{"bbox": [19.0, 17.5, 41.0, 32.5], "score": 0.8125}]
    assert rows["ov_7_1"]["oriented_bbox"] == [
        {"polygon": results[0]["oriented_bbox"], "score": 0.8125}]
    assert [b["score"] for b in rows["ov_7_2"]["bbox"]] == [0.4375]


# ---------------------------------------------------------------- from-dota and its chip merge


def _quad(draw: st.DrawFn) -> tuple[list[list[float]], int]:
    """A convex quadrilateral (a turned rectangle, vertices in boundary order, two
    decimals) inside the 200 x 150 scene, and a difficult flag."""
    w, h = draw(st.integers(6, 40)), draw(st.integers(6, 40))
    cx, cy = draw(st.integers(25, 175)), draw(st.integers(25, 125))
    angle = draw(st.integers(-80, 80))
    ring = [[round(x, 2), round(y, 2)] for x, y in _tilted(cx, cy, w, h, angle)]
    return ring, draw(st.integers(0, 1))


@st.composite
def _dota_scene(draw: st.DrawFn) -> tuple[list[tuple[list[list[float]], int, str]], float]:
    objs = draw(st.lists(st.builds(lambda q, c: (*q, c), st.composite(_quad)(),
                                   st.sampled_from(["plane", "small-vehicle"])),
                         min_size=1, max_size=4))
    return objs, draw(st.sampled_from([0.3, 1.25]))


def _flat(ring: list[list[float]]) -> str:
    return " ".join(f"{v:g}" for p in ring for v in p)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_dota_scene())
def test_from_dota_keeps_every_field(tmp_path_factory: pytest.TempPathFactory,
                                     scene: tuple[list[tuple[list[list[float]], int, str]],
                                                  float]) -> None:
    """Each object's vertices as written (a convex order is kept), its difficult flag and
    class, the ``gsd:`` / ``imagesource:`` headers; each Task1 detection's vertices and
    score."""
    objs, gsd = scene
    root = tmp_path_factory.mktemp("dota")
    labels = root / "labelTxt"
    labels.mkdir()
    (labels / "P1.txt").write_text(f"imagesource:GoogleEarth\ngsd:{gsd:g}\n" + "".join(
        f"{_flat(ring)} {cat} {flag}\n" for ring, flag, cat in objs))
    results = root / "model"
    results.mkdir()
    for k, cat in enumerate(["plane", "small-vehicle"]):
        mine = [(ring, 0.5 + k / 8 + j / 64) for j, (ring, _, c) in enumerate(objs)
                if c == cat]
        (results / f"Task1_{cat}.txt").write_text(
            "".join(f"P1 {score:g} {_flat(ring)}\n" for ring, score in mine))
    (root / "sizes.txt").write_text("P1 200 150\n")
    from_dota(labels, None, root / "b", [results], sizes=root / "sizes.txt")
    gt = json.loads((root / "b" / "ground_truth.json").read_text())
    anns = {a["category_name"]: a for a in gt["annotations"]}
    for cat in {c for _, _, c in objs}:
        mine = [(ring, flag) for ring, flag, c in objs if c == cat]
        ann = anns[cat]
        assert ann["oriented_bbox"] == [ring for ring, _ in mine]
        assert ann["difficult"] == [flag for _, flag in mine]
        assert ann["image_meta"]["gsd"] == gsd
        assert ann["image_meta"]["imagesource"] == "GoogleEarth"
    rows = json.loads((root / "b" / "predictions" / "model.json").read_text())
    for row in rows["tasks"]["open_vocabulary"]:
        cat = row["query_id"].removeprefix("ov_P1_")
        want = [(ring, 0.5 + ["plane", "small-vehicle"].index(cat) / 8 + j / 64)
                for j, (ring, _, c) in enumerate(objs) if c == cat]
        got = [(o["polygon"], o["score"]) for o in row["oriented_bbox"]]
        assert sorted(got, key=lambda t: -t[1]) == sorted(want, key=lambda t: -t[1])


def test_chip_merge_keeps_score_and_vertices(tmp_path: Path) -> None:
    """A detection on a chip (no other near it) comes back on its scene at
    ``(coordinate + offset) / rate``, vertex by vertex in the same order, with its score and
    its chip."""
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    (labels / "P7.txt").write_text("10 10 30 10 30 20 10 20 plane 0\n")
    results = tmp_path / "model"
    results.mkdir()
    ring = _tilted(40.0, 30.0, 20.0, 8.0, 33.0)
    (results / "Task1_plane.txt").write_text(f"P7__0.5__100___50 0.6875 {_flat(ring)}\n")
    (tmp_path / "sizes.txt").write_text("P7 2000 1500\n")
    from_dota(labels, None, tmp_path / "b", [results], merge_chips=True,
              sizes=tmp_path / "sizes.txt")
    rows = json.loads((tmp_path / "b" / "predictions" / "model.json").read_text())
    row = next(r for r in rows["tasks"]["open_vocabulary"] if r["query_id"] == "ov_P7_plane")
    (obb,) = row["oriented_bbox"]
    want = [[(float(f"{x:g}") + 100) / 0.5, (float(f"{y:g}") + 50) / 0.5] for x, y in ring]
    assert np.allclose(obb["polygon"], want) and obb["score"] == 0.6875
    assert obb["chips"] == ["P7__0.5__100___50"]


# ---------------------------------------------------------------- from-voc


def test_from_voc_keeps_every_field(tmp_path: Path) -> None:
    """Each object's box (continuous corners), difficult flag, rotated box (roLabelImg's
    ``cx cy w h angle``, corners worked out here from the documented rotation) and class;
    each result's box and score."""
    ann = tmp_path / "Annotations"
    ann.mkdir()

    def obj(name: str, box: tuple[float, ...], flag: int, rot: tuple[float, ...]) -> str:
        corners = "".join(f"<{k}>{v:g}</{k}>" for k, v in zip(
            ("xmin", "ymin", "xmax", "ymax"), box, strict=True))
        turned = "".join(f"<{k}>{v:g}</{k}>" for k, v in zip(
            ("cx", "cy", "w", "h", "angle"), rot, strict=True))
        return (f"<object><name>{name}</name><difficult>{flag}</difficult>"
                f"<bndbox>{corners}</bndbox><robndbox>{turned}</robndbox></object>")

    rots = [(30.0, 25.0, 20.0, 10.0, 0.5), (80.0, 50.0, 16.0, 8.0, 1.1)]
    (ann / "000001.xml").write_text(
        "<annotation><filename>000001.jpg</filename><size><width>120</width>"
        "<height>90</height></size>" + obj("ship", (18, 16, 42, 34), 1, rots[0])
        + obj("ship", (70, 42, 90, 58), 0, rots[1]) + "</annotation>")
    results = tmp_path / "model"
    results.mkdir()
    (results / "comp4_det_test_ship.txt").write_text("000001 0.5625 19 17 41.5 33\n")
    from_voc(ann, None, tmp_path / "b", [results])
    gt = json.loads((tmp_path / "b" / "ground_truth.json").read_text())
    (ship,) = [a for a in gt["annotations"] if a["category_name"] == "ship"]
    assert ship["bbox"] == [[18, 16, 24, 18], [70, 42, 20, 16]]
    assert ship["difficult"] == [1, 0]

    def corners(cx: float, cy: float, w: float, h: float, a: float) -> list[list[float]]:
        # docs/data.md: an offset (dx, dy) goes to (dx cos a - dy sin a, dx sin a + dy cos a)
        # (roLabelImg's reader: rotatePoint(p, -angle))
        return [[cx + dx * math.cos(a) - dy * math.sin(a),
                 cy + dx * math.sin(a) + dy * math.cos(a)]
                for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2),
                               (-w / 2, h / 2))]

    for got, rot in zip(ship["oriented_bbox"], rots, strict=True):
        want = corners(*rot)
        # The same four corners, whichever one a reader starts from and in either order.
        assert sorted(map(tuple, np.round(got, 6).tolist())) == sorted(
            map(tuple, np.round(want, 6).tolist()))
    rows = json.loads((tmp_path / "b" / "predictions" / "model.json").read_text())
    row = next(r for r in rows["tasks"]["open_vocabulary"] if r["query_id"] == "ov_000001_ship")
    assert row["bbox"] == [{"bbox": [19, 17, 41.5, 33], "score": 0.5625}]


# ---------------------------------------------------------------- from-rsvg


def test_from_rsvg_keeps_every_field(tmp_path: Path) -> None:
    """Each object's box, class and description; each prediction's box and score."""
    ann = tmp_path / "Annotations"
    ann.mkdir()
    (ann / "00009.xml").write_text(
        "<annotation><filename>00009.jpg</filename><size><width>120</width><height>90"
        "</height></size><object><name>bridge</name><bndbox><xmin>12.5</xmin><ymin>8</ymin>"
        "<xmax>60</xmax><ymax>30</ymax></bndbox><description>the long bridge at the top"
        "</description></object><object><name>dam</name><bndbox><xmin>70</xmin><ymin>50"
        "</ymin><xmax>110</xmax><ymax>80</ymax></bndbox><description>the dam below"
        "</description></object></annotation>")
    preds = [{"image": "00009", "object": 0, "bbox": [13, 9, 59, 31], "score": 0.8125},
             {"image": "00009", "object": 1, "bbox": [71, 50, 109, 79], "score": 0.25}]
    from_rsvg(ann, None, tmp_path / "b", [_write(tmp_path / "model.json", preds)])
    gt = json.loads((tmp_path / "b" / "ground_truth.json").read_text())
    anns = {a["id"]: a for a in gt["annotations"]}
    queries = gt["tasks"]["referring"]
    assert [(anns[q["ann_id"]]["category_name"], anns[q["ann_id"]]["bbox"], q["query"])
            for q in queries] == [("bridge", [[12.5, 8, 47.5, 22]], "the long bridge at the top"),
                                  ("dam", [[70, 50, 40, 30]], "the dam below")]
    rows = json.loads((tmp_path / "b" / "predictions" / "model.json").read_text())
    assert [r["bbox"] for r in rows["tasks"]["referring"]] == [
        [{"bbox": [13, 9, 59, 31], "score": 0.8125}], [{"bbox": [71, 50, 109, 79],
                                                        "score": 0.25}]]


# ---------------------------------------------------------------- from-label-maps


def test_from_label_maps_keeps_every_class_pixel(tmp_path: Path) -> None:
    """Each class's pixels of the ground-truth and predicted maps are its query's mask."""
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 3, size=(H, W)).astype(np.uint8)
    guess = rng.integers(0, 3, size=(H, W)).astype(np.uint8)
    for folder, values in (("gt", truth), ("model", guess)):
        (tmp_path / folder).mkdir()
        Image.fromarray(values).save(tmp_path / folder / "t1.png")
    (tmp_path / "classes.txt").write_text("0 water\n1 forest\n2 road\n")
    from_label_maps(tmp_path / "gt", tmp_path / "classes.txt", None, tmp_path / "b",
                    [tmp_path / "model"])
    gt = json.loads((tmp_path / "b" / "ground_truth.json").read_text())
    anns = {a["id"]: a for a in gt["annotations"]}
    rows = {r["query_id"]: r for r in json.loads(
        (tmp_path / "b" / "predictions" / "model.json").read_text())["tasks"]["open_vocabulary"]}
    for q in gt["tasks"]["open_vocabulary"]:
        value = ["water", "forest", "road"].index(q["phrase"])
        assert (_pixels(anns[q["ann_id"]]["segmentation"]) == (truth == value)).all()
        assert (_pixels(rows[q["query_id"]]["segmentation"]) == (guess == value)).all()


# ---------------------------------------------------------------- GeoJSON export


@pytest.mark.parametrize("boxes", ["bbox", "oriented_bbox"])
def test_geojson_keeps_every_box_field(tmp_path: Path, boxes: str) -> None:
    """In pixels, every GT box comes back as its ring with its difficult flag, every
    predicted box with its score; the query's category, phrase and polarity."""
    from ovearth_core.analysis.export import main

    gt, preds = _benchmark()
    gt_path, pred_path = _write(tmp_path / "gt.json", gt), _write(tmp_path / "p.json", preds)
    out = tmp_path / "boxes.geojson"
    assert main(["geojson", "--gt", str(gt_path), "--predictions", str(pred_path), "--task",
                 "vocabulary", "--pixel", "--boxes", boxes, "--out", str(out)]) == 0
    feats = json.loads(out.read_text())["features"]

    def ring_of(box: Any) -> list[list[float]]:
        if boxes == "bbox":
            x, y, w, h = box
            return _square(x, y, w, h)
        return box

    def same_ring(got: list[list[float]], want: list[list[float]]) -> bool:
        """The same closed ring, from any vertex, in either direction (RFC 7946 turns
        clockwise rings round)."""
        got = got[:-1]
        n = len(want)
        for seq in (want, want[::-1]):
            for shift in range(n):
                if np.allclose(got, seq[shift:] + seq[:shift]):
                    return True
        return False

    by_query = {q["query_id"]: q for q in gt["tasks"]["open_vocabulary"]}
    anns = {a["id"]: a for a in gt["annotations"]}
    seen = 0
    for f in feats:
        p = f["properties"]
        q = by_query[p["query_id"]]
        ann = anns[q["ann_id"]]
        assert (p["phrase"], p["negative"], p["category"]) == (
            q["phrase"], q["type"] == "negative", ann["category_name"])
        ring = f["geometry"]["coordinates"][0]
        if p["kind"] == "gt":
            assert same_ring(ring, ring_of(ann[boxes][p["index"]]))
            assert p["difficult"] == bool(ann["difficult"][p["index"]])
        else:
            source = preds["tasks"]["open_vocabulary"]
            box = next(r for r in source if r["query_id"] == p["query_id"])[boxes][p["index"]]
            if boxes == "bbox":
                x1, y1, x2, y2 = box["bbox"]
                assert same_ring(ring, _square(x1, y1, x2 - x1, y2 - y1))
            else:
                assert same_ring(ring, box["polygon"])
            assert p["score"] == box["score"] and p["difficult"] is None
        seen += 1
    assert seen == sum(len(anns[q["ann_id"]][boxes]) for q in by_query.values()
                       if q["type"] == "positive") + sum(
        len(r[boxes]) for r in preds["tasks"]["open_vocabulary"])


def test_benchmark_loads() -> None:
    """The source of these round trips is a valid ground truth (the loader's own check)."""
    gt, _ = _benchmark()
    parsed = parse_ground_truth(gt, "<round trip>")
    assert parsed.annotations["a1"].difficult.tolist() == [False, True]
