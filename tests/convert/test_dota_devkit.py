"""DOTA's own mAP, exactly (issue 25): ``voc_devkit`` against DOTA_devkit's ``voc_eval`` run
on the original ``labelTxt`` and Task1 / Task2 files, difficult objects and a dense image
included. The Task2 (horizontal) files hold the envelopes of the Task1 quadrilaterals, written
here by the test (a detector's own Task2 output would do as well): from-dota takes boxes from
Task2 files only (issue 46), and task 2 is scored on what they say.

The reference below reads the original files itself and follows ``dota_evaluation_task1.py``
(oriented) and ``dota_evaluation_task2.py`` (axis-aligned), written out, not imported (its
``polyiou`` too: :func:`refs.devkit_poly_iou`, which scores a concave label as the polygon): per
class, GT objects of that class with their ``difficult`` flags; ``npos`` the non-difficult
ones; detections sorted by ``np.argsort(-confidence)``; for each, the max-IoU GT of its image
and class (polygon IoU after the devkit's +1 pixel envelope pre-filter; task 2 the +1 pixel
box IoU); ``ovmax > thresh``: a difficult GT -> neither TP nor FP, a GT not yet detected ->
TP (and marked), else FP; otherwise FP; rec = tp / npos, prec = tp / max(tp + fp, eps); VOC07
11 levels of ``np.arange(0., 1.1, 0.1)`` or the area under the envelope. Our side goes
through ``from-dota`` (default: difficult objects as flagged targets) and the analysis
command with ``--hard-negatives`` (the devkit counts a class's detections on images without
that class as false positives).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import refs
from convert_helpers import ROOT, blank_images
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core.convert import from_dota

CLASSES = ("plane", "ship", "storage-tank", "small-vehicle")
SIZES = {"P0001": (1400, 1400), "P0002": (400, 300), "P0003": (500, 500),
         "P0004": (300, 300), "P0005": (600, 400), "P0006": (256, 256), "P0007": (300, 200)}
DENSE_SHIPS = 531


def _quad(cx: float, cy: float, w: float, h: float, angle: float) -> list[float]:
    """Four vertices (x1 y1 ... x4 y4) of a w x h rectangle rotated about its centre, two
    decimals."""
    c, s = np.cos(angle), np.sin(angle)
    pts = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    rot = pts @ np.array([[c, s], [-s, c]]) + [cx, cy]
    return [round(float(v), 2) for v in rot.ravel()]


def _objects(rng: np.random.Generator) -> dict[str, list[tuple[str, list[float], int]]]:
    """Per image: (class, quad, difficult). P0001 is dense: 531 ships on a grid, some
    difficult, and a few planes; P0007 has no object."""
    out: dict[str, list[tuple[str, list[float], int]]] = {k: [] for k in SIZES}
    for k in range(DENSE_SHIPS):
        row, col = divmod(k, 24)
        out["P0001"].append(("ship", _quad(30 + 55 * col, 30 + 55 * row, 30, 14,
                                           float(rng.uniform(-0.6, 0.6))),
                             int(rng.random() < 0.07)))
    for k in range(4):
        out["P0001"].append(("plane", _quad(200 + 250 * k, 1330, 50, 40, 0.3 * k), 0))
    for stem in ("P0002", "P0003", "P0004", "P0005", "P0006"):
        width, height = SIZES[stem]
        for _ in range(int(rng.integers(3, 12))):
            cls = CLASSES[int(rng.integers(0, len(CLASSES)))]
            w, h = rng.uniform(12, 60, 2)
            cx, cy = rng.uniform(35, width - 35), rng.uniform(35, height - 35)
            out[stem].append((cls, _quad(cx, cy, w, h, float(rng.uniform(0, 3))),
                              int(rng.random() < 0.2)))
    return out


def _detections(rng: np.random.Generator, objects: dict[str, list[tuple[str, list[float], int]]]
                ) -> dict[str, list[tuple[str, float, list[float]]]]:
    """Per class: (image, score, quad): jittered copies of most objects (difficult ones
    too), duplicates, background boxes, boxes of a class on images without it. Scores are
    distinct (the devkit's unstable sort then fixes the order)."""
    out: dict[str, list[tuple[str, float, list[float]]]] = {c: [] for c in CLASSES}
    for stem, objs in objects.items():
        for cls, q, _ in objs:
            pts = np.array(q).reshape(4, 2)
            cx, cy = pts.mean(axis=0)
            w = float(np.linalg.norm(pts[1] - pts[0]))
            h = float(np.linalg.norm(pts[2] - pts[1]))
            angle = float(np.arctan2(pts[1, 1] - pts[0, 1], pts[1, 0] - pts[0, 0]))
            for _ in range(int(rng.choice([0, 1, 1, 1, 2]))):
                out[cls].append((stem, 0.0, _quad(cx + rng.normal(0, w / 8),
                                                  cy + rng.normal(0, h / 8),
                                                  w * rng.uniform(0.8, 1.2),
                                                  h * rng.uniform(0.8, 1.2),
                                                  angle + rng.normal(0, 0.1))))
        width, height = SIZES[stem]
        for cls in CLASSES:  # background boxes, on images with or without the class
            for _ in range(int(rng.integers(0, 3))):
                out[cls].append((stem, 0.0, _quad(rng.uniform(30, width - 30),
                                                  rng.uniform(30, height - 30),
                                                  rng.uniform(10, 40), rng.uniform(10, 40),
                                                  float(rng.uniform(0, 3)))))
    scores = iter(rng.permutation(sum(len(v) for v in out.values())) / 1000 + 0.0005)
    return {c: [(stem, float(next(scores)), q) for stem, _, q in v] for c, v in out.items()}


@pytest.fixture(scope="module")
def dota(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The original files (labelTxt, Task1 and Task2 results) and the analysis JSON of our
    run."""
    root = tmp_path_factory.mktemp("dense_dota")
    rng = np.random.default_rng(25)
    objects = _objects(rng)
    labels = root / "labelTxt"
    labels.mkdir()
    for stem, objs in objects.items():
        lines = ["imagesource:GoogleEarth", "gsd:0.5"]
        lines += [" ".join([*(f"{v:g}" for v in q), cls, str(d)]) for cls, q, d in objs]
        (labels / f"{stem}.txt").write_text("\n".join(lines) + "\n")
    results = root / "results" / "model_a"
    results.mkdir(parents=True)
    for cls, dets in _detections(rng, objects).items():
        written = [(stem, score, [float(f"{v:g}") for v in q]) for stem, score, q in dets]
        (results / f"Task1_{cls}.txt").write_text("".join(
            f"{stem} {score!r} " + " ".join(f"{v:g}" for v in q) + "\n"
            for stem, score, q in written))
        (results / f"Task2_{cls}.txt").write_text("".join(
            f"{stem} {score!r} " + " ".join(f"{v:g}" for v in _envelope(q)) + "\n"
            for stem, score, q in written))
    images = blank_images(root / "images", {f"{k}.png": v for k, v in SIZES.items()})
    bench = root / "bench"
    from_dota(labels, images, bench, [results])
    out = root / "analysis.json"
    subprocess.run([sys.executable, "-m", "ovearth_core.analysis",
                    "--gt", str(bench / "ground_truth.json"),
                    "--predictions", str(bench / "predictions" / "model_a.json"),
                    "--task", "vocabulary", "--modalities", "bbox,oriented_bbox",
                    "--hard-negatives", "--output", str(out)],
                   cwd=ROOT, check=True, capture_output=True, text=True)
    return labels, results, out


# ------------------------------------------------------------- the devkit, written out


def _parse_gt(path: Path) -> list[dict[str, object]]:
    """dota_utils.parse_dota_poly2-style: 8 coordinates, name, difficult; headers skipped."""
    objects = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) < 9:
            continue  # imagesource: / gsd: lines
        objects.append({"name": parts[8], "difficult": int(parts[9]) if len(parts) > 9 else 0,
                        "bbox": [float(v) for v in parts[:8]]})
    return objects


def _envelope(poly: list[float]) -> list[float]:
    xs, ys = poly[0::2], poly[1::2]
    return [min(xs), min(ys), max(xs), max(ys)]




def _pairs(poly: list[float]) -> list[tuple[float, float]]:
    return list(zip(poly[0::2], poly[1::2], strict=True))


def voc_eval(labels: Path, results: Path, classname: str, ovthresh: float,
             use_07_metric: bool, oriented: bool) -> float:
    """DOTA_devkit's voc_eval for one class (task 1 oriented, task 2 axis-aligned)."""
    recs = {p.stem: _parse_gt(p) for p in sorted(labels.glob("*.txt"))}
    class_recs, npos = {}, 0
    for name, objs in recs.items():
        r = [o for o in objs if o["name"] == classname]
        boxes = [o["bbox"] if oriented else _envelope(o["bbox"]) for o in r]
        difficult = np.array([o["difficult"] for o in r]).astype(bool)
        npos += int(np.sum(~difficult))
        class_recs[name] = {"bbox": np.array(boxes), "difficult": difficult,
                            "det": [False] * len(r)}
    task = 1 if oriented else 2  # task 2 reads the Task2 file's boxes as written
    lines = [x.strip().split(" ") for x in
             (results / f"Task{task}_{classname}.txt").read_text().splitlines() if x.strip()]
    image_ids = [x[0] for x in lines]
    confidence = np.array([float(x[1]) for x in lines])
    bb_all = np.array([[float(z) for z in x[2:]] for x in lines])
    sorted_ind = np.argsort(-confidence)
    bb_all = bb_all[sorted_ind, :]
    image_ids = [image_ids[x] for x in sorted_ind]
    nd = len(image_ids)
    tp, fp = np.zeros(nd), np.zeros(nd)
    for d in range(nd):
        r = class_recs[image_ids[d]]
        bb = bb_all[d, :].astype(float)
        ovmax, jmax = -np.inf, -1
        bbgt = r["bbox"].astype(float)
        if bbgt.size > 0:
            if oriented:
                # The devkit's pre-filter: +1 pixel envelopes that do not meet -> IoU 0.
                env = refs.devkit_box_iou(np.array([_envelope(list(g)) for g in bbgt]),
                                        np.array(_envelope(list(bb))))
                keep = np.where(env > 0)[0]
                if keep.size:
                    overlaps = [refs.devkit_poly_iou(_pairs(list(bbgt[k])), _pairs(list(bb)))
                                for k in keep]
                    ovmax = float(np.max(overlaps))
                    jmax = int(keep[int(np.argmax(overlaps))])
            else:
                overlaps = refs.devkit_box_iou(bbgt, bb)
                ovmax = float(np.max(overlaps))
                jmax = int(np.argmax(overlaps))
        if ovmax > ovthresh:
            if not r["difficult"][jmax]:
                if not r["det"][jmax]:
                    tp[d] = 1.
                    r["det"][jmax] = True
                else:
                    fp[d] = 1.
        else:
            fp[d] = 1.
    return refs.devkit_voc_ap(tp, fp, npos, use_07_metric)


# ------------------------------------------------------------------------ the tests


def test_the_data_is_real_style(dota: tuple[Path, Path, Path]) -> None:
    labels, _, _ = dota
    objs = [o for p in labels.glob("*.txt") for o in _parse_gt(p)]
    dense = [o for o in _parse_gt(labels / "P0001.txt") if o["name"] == "ship"]
    assert len(dense) == DENSE_SHIPS
    assert sum(int(o["difficult"]) for o in dense) > 10
    assert sum(int(o["difficult"]) for o in objs) > 20


@pytest.mark.parametrize("modality", ["oriented_bbox", "bbox"])
def test_voc_devkit_equals_dota_devkit_per_class_and_mean(dota: tuple[Path, Path, Path],
                                                          modality: str) -> None:
    labels, results, out = dota
    block = json.loads(out.read_text())["analysis"]["average_precision"][modality]["voc_devkit"]
    oriented = modality == "oriented_bbox"
    for key, use_07 in (("ap_11_point", True), ("ap_every_point", False)):
        want = {c: voc_eval(labels, results, c, 0.5, use_07, oriented) for c in CLASSES}
        got = {c: block["per_category"][c][key] for c in CLASSES}
        assert got == pytest.approx(want, abs=1e-9), key
        mean_key = "map_11_point" if use_07 else "map_every_point"
        assert block[mean_key] == pytest.approx(float(np.mean(list(want.values()))), abs=1e-9)
    # npos: the non-difficult objects of each class, as the devkit counts them.
    objs = [o for p in labels.glob("*.txt") for o in _parse_gt(p)]
    assert {c: block["per_category"][c]["num_gt"] for c in CLASSES} == {
        c: sum(1 for o in objs if o["name"] == c and not o["difficult"]) for c in CLASSES}


def _analysis(dota: tuple[Path, Path, Path], *extra: str) -> subprocess.CompletedProcess[str]:
    bench = dota[2].parent / "bench"
    return subprocess.run([sys.executable, "-m", "ovearth_core.analysis",
                           "--gt", str(bench / "ground_truth.json"),
                           "--predictions", str(bench / "predictions" / "model_a.json"),
                           "--modalities", "oriented_bbox", *extra],
                          cwd=ROOT, capture_output=True, text=True)


def test_detection_cap_warns_on_the_dense_image_and_can_be_raised(
        dota: tuple[Path, Path, Path], tmp_path: Path) -> None:
    default, raised = tmp_path / "default.json", tmp_path / "raised.json"
    proc = _analysis(dota, "--output", str(default))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(default.read_text())
    coco = doc["analysis"]["average_precision"]["oriented_bbox"]["coco"]
    assert coco["max_detections"] == 100 and coco["queries_over_cap"] == ["ov_P0001_ship"]
    warned = [w["message"] for w in doc["warnings"] if w["code"] == "detection_cap"]
    assert len(warned) == 1 and "cap of 100" in warned[0] and "ov_P0001_ship" in warned[0]
    assert "ov_P0001_ship" in proc.stderr and "cap of 100" in proc.stderr
    # The dense query's recall at 100 boxes is at most 100 / 531 of its ships.
    assert coco["ar@100"] < 0.9
    proc = _analysis(dota, "--max-detections", "1500", "--output", str(raised))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(raised.read_text())
    high = doc["analysis"]["average_precision"]["oriented_bbox"]["coco"]
    assert high["max_detections"] == 1500 and high["queries_over_cap"] == []
    assert not [w for w in doc["warnings"] if w["code"] == "detection_cap"]
    assert "ar@1500" in high and "ar@100" not in high
    assert high["per_category"]["ship"]["ap@0.5"] > coco["per_category"]["ship"]["ap@0.5"] + 0.2


@pytest.mark.parametrize("value", ["0", "5", "many", "-3"])
def test_a_bad_detection_cap_is_a_clear_message(dota: tuple[Path, Path, Path], tmp_path: Path,
                                                value: str) -> None:
    proc = _analysis(dota, "--max-detections", value, "--output", str(tmp_path / "x.json"))
    assert proc.returncode == 2
    assert "--max-detections" in proc.stderr and "at least 10" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "x.json").exists()


# ------------------------------------------------- concave labels (issue 34, item 4)


def _analysis_of(root: Path, labels: Path, results: Path, sizes: dict[str, tuple[int, int]]
                 ) -> dict[str, object]:
    images = blank_images(root / "images", {f"{k}.png": v for k, v in sizes.items()})
    bench = root / "bench"
    from_dota(labels, images, bench, [results])
    out = root / "analysis.json"
    subprocess.run([sys.executable, "-m", "ovearth_core.analysis",
                    "--gt", str(bench / "ground_truth.json"),
                    "--predictions", str(bench / "predictions" / f"{results.name}.json"),
                    "--task", "vocabulary", "--modalities", "oriented_bbox",
                    "--hard-negatives", "--concave-obb", "--output", str(out)],
                   cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.read_text())["analysis"]["average_precision"]["oriented_bbox"]


def test_concave_labels_and_detections_score_as_the_devkit_scores_them(tmp_path: Path) -> None:
    """A concave "dart" label (vertex (20, 20) inside the triangle of the others, area 2,000)
    detected by its 100 x 100 bounding square: the devkit's polygon IoU is 2,000 / 10,000 =
    0.2, no match, AP 0 (scoring the label's minimum-area rectangle, the square, gave IoU 1
    and AP 1). Concave detections of convex labels, and a concave label found by its own
    polygon, are scored alike; every class's AP equals voc_eval's, written out. The
    concave labels need the option concave_obb (``--concave-obb``, issue 46): the spec
    refuses them, so the converter says so (the benchmark's README and a warning)."""
    dart = [0, 0, 100, 0, 20, 20, 0, 100]
    assert refs.devkit_poly_iou(_pairs(dart), [(0, 0), (100, 0), (100, 100), (0, 100)]) == \
        pytest.approx(0.2)
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    objects = {
        "P1": [("plane", dart, 0), ("ship", [200, 200, 260, 200, 260, 230, 200, 230], 0)],
        "P2": [("plane", [300, 300, 400, 300, 320, 320, 300, 400], 0),  # concave too
               ("ship", [10, 10, 70, 10, 70, 40, 10, 40], 0)],
    }
    for stem, objs in objects.items():
        (labels / f"{stem}.txt").write_text("".join(
            " ".join([*(f"{v:g}" for v in q), cls, str(d)]) + "\n" for cls, q, d in objs))
    results = tmp_path / "model_c"
    results.mkdir()
    (results / "Task1_plane.txt").write_text(
        "P1 0.9 0 0 100 0 100 100 0 100\n"            # the dart's square: IoU 0.2
        "P2 0.8 300 300 400 300 320 320 300 400\n")   # the concave label itself: IoU 1
    (results / "Task1_ship.txt").write_text(
        "P1 0.7 200 200 260 200 225 212 200 230\n"    # concave inside the ship: IoU 0.41, a miss
        "P2 0.6 10 10 70 10 40 12 10 40\n")           # concave, IoU 0.28: a miss
    got = _analysis_of(tmp_path, labels, results, {"P1": (500, 500), "P2": (500, 500)})
    block = got["voc_devkit"]["per_category"]
    for cls in ("plane", "ship"):
        for key, use_07 in (("ap_11_point", True), ("ap_every_point", False)):
            assert block[cls][key] == pytest.approx(
                voc_eval(labels, results, cls, 0.5, use_07, True), abs=1e-9), (cls, key)
    # Planes by score: the dart's square a false positive, then P2's concave label found:
    # recall 0.5 at precision 0.5, AP (every point) 0.25; scored as rectangles it was 1.
    assert block["plane"]["ap_every_point"] == pytest.approx(0.25)


def test_a_concave_benchmark_needs_the_option_and_the_converter_says_so(tmp_path: Path) -> None:
    """Issue 46: from-dota keeps a concave label (devkit parity) and says the benchmark needs
    --concave-obb (its summary's warnings, its README); without the flag the analysis refuses
    it as the spec does (exit 2, the file, the field, nothing written); with it, the output's
    config names the option."""
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    (labels / "P1.txt").write_text("0 0 100 0 20 20 0 100 plane 0\n"
                                   "200 200 260 200 260 230 200 230 ship 0\n")
    results = tmp_path / "model_d"
    results.mkdir()
    (results / "Task1_plane.txt").write_text("P1 0.9 0 0 100 0 100 100 0 100\n")
    images = blank_images(tmp_path / "images", {"P1.png": (500, 500)})
    bench = tmp_path / "bench"
    summary = from_dota(labels, images, bench, [results])
    said = [w for w in summary["warnings"] if "concave" in w]
    assert len(said) == 1 and said[0].startswith("1 concave oriented boxes")
    assert "--concave-obb" in said[0] and said[0] in (bench / "README.md").read_text()
    out = tmp_path / "a.json"
    base = [sys.executable, "-m", "ovearth_core.analysis", "--gt",
            str(bench / "ground_truth.json"), "--predictions",
            str(bench / "predictions" / "model_d.json"), "--modalities", "oriented_bbox",
            "--output", str(out)]
    refused = subprocess.run(base, cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2 and not out.exists() and "Traceback" not in refused.stderr
    assert "ground_truth.json, field annotations[" in refused.stderr
    assert "].oriented_bbox[0]: expected a convex polygon (the spec's rule" in refused.stderr
    taken = subprocess.run([*base, "--concave-obb"], cwd=ROOT, capture_output=True, text=True)
    assert taken.returncode == 0, taken.stderr
    assert json.loads(out.read_text())["config"]["concave_obb"] is True


_coord = st.integers(0, 60).map(float)


@settings(max_examples=300, deadline=None)
@given(st.lists(_coord, min_size=8, max_size=8), st.lists(_coord, min_size=8, max_size=8))
def test_polygon_iou_equals_the_devkits_on_any_simple_quadrilateral(a: list[float],
                                                                    b: list[float]) -> None:
    """Convex or concave, either orientation: the evaluator's oriented-box IoU equals
    DOTA_devkit's polyiou rule (refs.devkit_poly_iou) on every pair the evaluator accepts."""
    from ovearth_core import geometry

    quads = np.array([a, b]).reshape(2, 4, 2)
    if not geometry.valid_polygons(quads, concave=True).all():
        return
    got = geometry.iou_matrix(quads[:1], quads[1:], True)[0, 0]
    assert got == pytest.approx(refs.devkit_poly_iou(_pairs(a), _pairs(b)), abs=1e-9)
