"""Issue 46 §3: COCO's sizes are COCO's ``area``, through from-coco, the COCO-style AP and
to-coco, against pycocotools' COCOeval on the same files.

COCOeval puts a GT annotation in a size range by its ``area`` (for instance data the mask's
pixel count, not the box's w * h) and a box result by its w * h (``loadRes`` sets it). The
fixture is COCO val2014-like, built here: instance polygons (diamonds and triangles inside
their boxes, so the area is about half of w * h) with their pycocotools pixel counts as
``area``, some areas set exactly on the ranges' edges, crowd regions (RLE), ``ignore: 1``
flags (pycocotools overwrites ``ignore`` with ``iscrowd``: a normal target), image id 0 and
category id 0, negatives on every absent category, and a dense image of 3,253 instances.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from convert_helpers import blank_images
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from ovearth_core.analysis.ap import average_precision_report
from ovearth_core.convert import from_coco, from_coco_export, to_coco
from ovearth_core.errors import OVEarthInputError
from ovearth_core.io import load_samples
from ovearth_core.types import IOU_THRESHOLDS

AI_TOD = (("very_tiny", 0, 8), ("tiny", 8, 16), ("small", 16, 32), ("medium", 32, 96),
          ("large", 96, math.inf))
EDGES = (32.0 ** 2, 96.0 ** 2, 8.0 ** 2, 16.0 ** 2)
DENSE = 3253


def _shape(kind: int, x: float, y: float, w: float, h: float) -> list[float]:
    """A diamond or a triangle inside the box (touching all four sides)."""
    if kind == 0:
        return [x + w / 2, y, x + w, y + h / 2, x + w / 2, y + h, x, y + h / 2]
    return [x, y, x + w, y + h / 2, x, y + h]


def _coco_files(seed: int, folder: Path, dense: bool = False, with_area: bool = True
                ) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(seed)
    cats = [0, 3, 11]
    images, anns, dets = [], [], []
    sizes = {}
    img_ids = [0, *rng.choice(np.arange(1, 500), 6, replace=False).tolist()]
    for k, img_id in enumerate(img_ids):
        w, h = (int(v) for v in rng.integers(180, 400, 2))
        images.append({"id": img_id, "file_name": f"im{k}.png", "width": w, "height": h})
        sizes[f"im{k}.png"] = (w, h)
        for cat in cats:
            n = int(rng.integers(0, 7)) if rng.random() < 0.75 else 0
            if dense and k == 1 and cat == 3:
                n = DENSE
            scale = rng.choice([6.0, 14.0, 30.0, 60.0, 130.0], n)
            if n == DENSE:
                scale[:] = rng.choice([4.0, 7.0, 12.0], n)
            for j in range(n):
                bw, bh = np.maximum(2.0, rng.normal(scale[j], scale[j] / 4, 2).round())
                bw, bh = min(bw, w - 1.0), min(bh, h - 1.0)
                x, y = float(rng.uniform(0, w - bw)), float(rng.uniform(0, h - bh))
                crowd = int(rng.random() < 0.08)
                ann: dict[str, Any] = {"id": len(anns) + 1, "image_id": img_id,
                                       "category_id": cat, "bbox": [x, y, float(bw), float(bh)],
                                       "iscrowd": crowd}
                poly = _shape(j % 2, x, y, float(bw), float(bh))
                rle = mask_utils.merge(mask_utils.frPyObjects([poly], h, w))
                if crowd:
                    as_json = dict(rle)
                    as_json["counts"] = as_json["counts"].decode()
                    ann["segmentation"] = as_json
                else:
                    ann["segmentation"] = [poly]
                    if rng.random() < 0.1:
                        ann["ignore"] = 1
                if with_area:
                    area = float(mask_utils.area(rle))
                    ann["area"] = float(rng.choice(EDGES)) if rng.random() < 0.1 else area
                anns.append(ann)
                # The dense image's few detections keep COCOeval's loop (detections x GT
                # boxes x thresholds x ranges) to seconds.
                hits = rng.choice([0, 1, 1, 2]) if n < DENSE else int(rng.random() < 0.005)
                for _ in range(int(hits)):
                    jit = rng.normal(0, 0.1, 4) * [bw, bh, bw, bh]
                    dets.append([img_id, cat, x + jit[0], y + jit[1], max(bw + jit[2], 1),
                                 max(bh + jit[3], 1)])
            for _ in range(int(rng.integers(0, 3))):  # background, any category
                bw, bh = rng.uniform(3, 90, 2)
                dets.append([img_id, cat, rng.uniform(0, w - bw), rng.uniform(0, h - bh), bw,
                             bh])
    scores = rng.permutation(len(dets)) / len(dets) + 0.001
    results = [{"image_id": int(i), "category_id": int(c), "bbox": [float(v) for v in b],
                "score": float(s)} for (i, c, *b), s in zip(dets, scores, strict=True)]
    gt = {"images": images, "annotations": anns,
          "categories": [{"id": c, "name": f"class {c}"} for c in cats]}
    (folder / "gt.json").write_text(json.dumps(gt))
    (folder / "res.json").write_text(json.dumps(results))
    return folder / "gt.json", folder / "res.json", blank_images(folder / "images", sizes)


def _cocoeval(gt: Path | COCO, res: Path | list[dict[str, Any]], cap: int,
              ranges: Any = None, use_cats: bool = True,
              img_ids: list[int] | None = None) -> COCOeval:
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = gt if isinstance(gt, COCO) else COCO(str(gt))
        ev = COCOeval(coco_gt, coco_gt.loadRes(res if isinstance(res, list) else str(res)),
                      "bbox")
        ev.params.iouThrs = np.array(IOU_THRESHOLDS)
        ev.params.maxDets = [1, 10, cap]
        ev.params.useCats = int(use_cats)
        if img_ids is not None:
            ev.params.imgIds = img_ids
        if ranges is not None:
            ev.params.areaRng = [[lo, hi] for _, lo, hi in ranges]
            ev.params.areaRngLbl = [name for name, _, _ in ranges]
        ev.evaluate()
        ev.accumulate()
    return ev


def _mean_valid(values: np.ndarray) -> float | None:
    valid = values[values > -1]
    return float(valid.mean()) if valid.size else None


TOD_RANGES = [("all", 0, 1e10)] + [(n, lo * lo, float(np.nextafter(hi * hi, 0)))
                                   for n, lo, hi in AI_TOD]
COCO_RANGES = [("all", 0, 1e10), ("small", 0, 32 ** 2), ("medium", 32 ** 2, 96 ** 2),
               ("large", 96 ** 2, 1e10)]


def _size_keys(ev: COCOeval, tod: COCOeval, prefix: str, cap: int) -> dict[str, Any]:
    """Every key of our block from COCOeval's arrays (the last maxDets: ``cap``)."""
    prec, rec = ev.eval["precision"], ev.eval["recall"]  # (T, R, K, A, M), (T, K, A, M)
    i50, i75 = IOU_THRESHOLDS.index(0.5), IOU_THRESHOLDS.index(0.75)
    out = {f"{prefix}ap@[0.5:0.95]": _mean_valid(prec[:, :, :, 0, -1]),
           f"{prefix}ap@0.5": _mean_valid(prec[i50, :, :, 0, -1]),
           f"{prefix}ap@0.75": _mean_valid(prec[i75, :, :, 0, -1])}
    for a, (name, _, _) in enumerate(COCO_RANGES[1:], start=1):
        out[f"{prefix}ap_{name}"] = _mean_valid(prec[:, :, :, a, -1])
    for m, n in enumerate((1, 10, cap)):
        out[f"{prefix}ar@{n}"] = _mean_valid(rec[:, :, 0, m])
    for a, (name, _, _) in enumerate(COCO_RANGES[1:], start=1):
        out[f"{prefix}ar_{name}"] = _mean_valid(rec[:, :, a, -1])
    out[f"{prefix}ap_by_size"] = {name: _mean_valid(tod.eval["precision"][:, :, :, a, -1])
                                  for a, (name, _, _) in enumerate(TOD_RANGES) if a}
    return out


def _close(got: Any, want: Any, tol: float = 1e-12) -> bool:
    if isinstance(want, dict):
        return set(got) == set(want) and all(_close(got[k], want[k], tol) for k in want)
    if want is None or got is None:
        return got is want
    return abs(got - want) <= tol


def _ours(bench: Path, cap: int) -> dict[str, Any]:
    samples = load_samples(bench / "ground_truth.json", bench / "predictions" / "res.json",
                           "vocabulary", modalities="bbox")
    return average_precision_report(samples, 0.5, ("bbox",), True, cap)["bbox"]["coco"]


@pytest.mark.parametrize(("seed", "dense", "cap"), [(0, False, 100), (1, False, 10),
                                                    (2, True, 100)])
def test_size_keys_after_from_coco_equal_cocoeval_on_the_original_files(
        tmp_path: Path, seed: int, dense: bool, cap: int) -> None:
    """Every key of the per-category block (``map…``, ``mar…``, ``map_by_size`` with
    COCOeval's ``areaRng`` set to the AI-TOD bins) equals COCOeval on the original files."""
    gt, res, images = _coco_files(seed, tmp_path, dense)
    doc = json.loads(gt.read_text())
    boxes = np.array([a["bbox"] for a in doc["annotations"] if not a["iscrowd"]])
    area = np.array([a["area"] for a in doc["annotations"] if not a["iscrowd"]])
    own = boxes[:, 2] * boxes[:, 3]
    cuts = [32 ** 2, 96 ** 2]
    # The areas put boxes in other COCO ranges than w * h would: the test can tell.
    assert (np.digitize(area, cuts) != np.digitize(own, cuts)).sum() > 5
    assert any(a["image_id"] == 0 for a in doc["annotations"])
    assert any(a["category_id"] == 0 for a in doc["annotations"])
    assert any(a.get("ignore") for a in doc["annotations"])
    assert any(a["iscrowd"] for a in doc["annotations"])
    from_coco(gt, images, tmp_path / "bench", [res], negatives="all")
    ev = _cocoeval(gt, res, cap)
    tod = _cocoeval(gt, res, cap, TOD_RANGES)
    ours = _ours(tmp_path / "bench", cap)
    want = _size_keys(ev, tod, "m", cap)
    wrong = {k: (ours[k], v) for k, v in want.items() if not _close(ours[k], v)}
    assert wrong == {}
    assert ours["size_basis"] == {"ground_truth": "annotation area",
                                  "detections": "box area (w x h)",
                                  "num_gt_with_area": len(area), "num_gt": len(area)}
    if dense:
        per_image = np.bincount([a["image_id"] for a in doc["annotations"]])
        assert per_image.max() >= DENSE


def test_from_coco_keeps_each_target_area_and_says_so(tmp_path: Path) -> None:
    gt, res, images = _coco_files(0, tmp_path)
    from_coco(gt, images, tmp_path / "bench", [res])
    doc = json.loads(gt.read_text())
    bench = json.loads((tmp_path / "bench" / "ground_truth.json").read_text())
    by_id = {a["id"]: a for a in bench["annotations"]}
    for (img, cat) in {(a["image_id"], a["category_id"]) for a in doc["annotations"]}:
        targets = [a for a in doc["annotations"] if (a["image_id"], a["category_id"]) ==
                   (img, cat) and not a["iscrowd"]]
        ann = by_id[f"{img}_{cat}"]
        assert ann["bbox"] == [t["bbox"] for t in targets]
        assert ann.get("area", []) == [t["area"] for t in targets]
    readme = (tmp_path / "bench" / "README.md").read_text()
    n = sum(not a["iscrowd"] for a in doc["annotations"])
    assert f"sizes: COCO's area of {n} of {n} target instances kept" in readme


def test_without_area_the_sizes_are_box_areas_and_the_block_says_so(tmp_path: Path) -> None:
    gt, res, images = _coco_files(1, tmp_path, with_area=False)
    from_coco(gt, images, tmp_path / "bench", [res], negatives="all")
    bench = json.loads((tmp_path / "bench" / "ground_truth.json").read_text())
    assert not any("area" in a for a in bench["annotations"])
    ours = _ours(tmp_path / "bench", 100)
    assert ours["size_basis"]["ground_truth"] == "box area (w x h)"
    assert ours["size_basis"]["num_gt_with_area"] == 0
    # COCOeval given w * h as each annotation's area: the same numbers.
    doc = json.loads(gt.read_text())
    for a in doc["annotations"]:
        a["area"] = a["bbox"][2] * a["bbox"][3]
    (tmp_path / "gt_wh.json").write_text(json.dumps(doc))
    ev = _cocoeval(tmp_path / "gt_wh.json", res, 100)
    tod = _cocoeval(tmp_path / "gt_wh.json", res, 100, TOD_RANGES)
    want = _size_keys(ev, tod, "m", 100)
    assert {k: (ours[k], v) for k, v in want.items() if not _close(ours[k], v)} == {}


@pytest.mark.parametrize(("area", "found"), [(-1, "-1"), ("12", "'12'"), (True, "true"),
                                             ([4], "[4]")])
def test_from_coco_refuses_a_bad_area_naming_file_annotation_and_field(
        tmp_path: Path, area: Any, found: str) -> None:
    gt, _, images = _coco_files(0, tmp_path)
    doc = json.loads(gt.read_text())
    doc["annotations"][2]["area"] = area
    gt.write_text(json.dumps(doc))
    with pytest.raises(OVEarthInputError) as err:
        from_coco(gt, images, tmp_path / "bench")
    message = str(err.value)
    assert f"field annotations[2] (id {doc['annotations'][2]['id']}).area: expected a finite " \
           "number >= 0" in message
    assert str(gt) in message and found in message
    assert not (tmp_path / "bench").exists()


def test_to_coco_writes_the_areas_we_range_by_and_cocoeval_agrees(tmp_path: Path) -> None:
    """The export's ``area`` is the annotation's where given (else w * h): COCOeval on the
    export (one image per query, ``useCats=1`` over the positive and negative images)
    gives our per-phrase size keys; and the export comes back with its areas."""
    gt, res, images = _coco_files(4, tmp_path)
    from_coco(gt, images, tmp_path / "bench", [res], negatives="all")
    bench = tmp_path / "bench"
    mapping = to_coco(bench / "ground_truth.json", bench / "predictions" / "res.json",
                      "vocabulary", tmp_path / "export")
    exported = json.loads((tmp_path / "export" / "instances_bbox.json").read_text())
    samples = load_samples(bench / "ground_truth.json", bench / "predictions" / "res.json",
                           "vocabulary", modalities="bbox")
    want_area = [a for s in samples if not s.negative for a in s.gt_area.tolist()]
    assert [a["area"] for a in exported["annotations"] if not a["iscrowd"]] == want_area
    obb = json.loads((tmp_path / "export" / "instances_obb.json").read_text())
    assert [a["area"] for a in obb["annotations"] if not a["iscrowd"]] == want_area
    ids = mapping["cocoeval_image_ids"]
    img_ids = sorted(ids["bbox"] + ids["negative"])
    ev = _cocoeval(tmp_path / "export" / "instances_bbox.json",
                   tmp_path / "export" / "results_bbox.json", 100, img_ids=img_ids)
    tod = _cocoeval(tmp_path / "export" / "instances_bbox.json",
                    tmp_path / "export" / "results_bbox.json", 100, TOD_RANGES,
                    img_ids=img_ids)
    want = _size_keys(ev, tod, "m", 100)
    # Pooled (useCats=0): every query one class, the negatives' boxes included.
    pooled = [_cocoeval(tmp_path / "export" / "instances_bbox.json",
                        tmp_path / "export" / "results_bbox.json", 100, ranges,
                        use_cats=False, img_ids=img_ids) for ranges in (None, TOD_RANGES)]
    want |= _size_keys(*pooled, "", 100)
    ours = _ours(bench, 100)
    wrong = {k: (ours[k], v) for k, v in want.items() if not _close(ours[k], v)}
    assert wrong == {}
    from_coco_export(tmp_path / "export" / "mapping.json", images, tmp_path / "back")
    back = json.loads((tmp_path / "back" / "ground_truth.json").read_text())
    before = json.loads((bench / "ground_truth.json").read_text())
    assert ({a["id"]: a.get("area") for a in before["annotations"] if a["bbox"]}
            == {a["id"]: a.get("area") for a in back["annotations"] if a["bbox"]})
