"""``from-dota --merge-chips``: results on ImgSplit chips mapped back to their scenes and
merged per scene and class as DOTA_devkit's ``mergebypoly`` does (issue 29).

The reference is written out here from the devkit's rules, independently of the code under
test: ``poly2origpoly`` (``(chip coordinate + chip offset) / rate``), then per scene and
class ``py_cpu_nms_poly`` at 0.3: order by ``scores.argsort()[::-1]`` on the group's scores
in file order (numpy's default sort, reversed: equal scores come last line first); keep the
top; drop the others whose polygon IoU with it is over 0.3; repeat with what is left.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import refs
import shapely
from PIL import Image

from ovearth_core import evaluate_files
from ovearth_core.convert import __main__ as convert_cli
from ovearth_core.convert import from_dota
from ovearth_core.convert.chips import parse_chip_name
from ovearth_core.errors import OVEarthInputError

CHIP, GAP = 1024, 200
STRIDE = CHIP - GAP


@pytest.mark.parametrize(("name", "expected"), [
    ("P0001__1__1024___512", ("P0001", 1.0, 1024, 512)),
    ("P0001__0.5__0___824", ("P0001", 0.5, 0, 824)),
    ("my_scene__2__10___0", ("my_scene", 2.0, 10, 0)),
    ("a__b__1__0___0", None),  # the scene is what comes before the first "__" (devkit)
    ("P0001", None), ("P0001__1__1024__512", None), ("P0001__x__0___0", None),
    ("P0001__0__0___0", None), ("P0001__1__-5___0", None), ("__1__0___0", None),
])
def test_chip_names(name: str, expected: tuple[str, float, int, int] | None) -> None:
    assert parse_chip_name(name) == expected


def _rect(cx: float, cy: float, w: float, h: float, angle: float) -> list[float]:
    c, s = math.cos(angle), math.sin(angle)
    out = []
    for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)):
        out += [cx + dx * c - dy * s, cy + dx * s + dy * c]
    return out


def _chips(width: int, height: int, rate: float) -> list[tuple[int, int]]:
    """ImgSplit's chip offsets (in the image resized by ``rate``)."""
    w, h = int(width * rate), int(height * rate)
    xs = sorted({min(x, max(0, w - CHIP)) for x in range(0, max(1, w - GAP), STRIDE)})
    ys = sorted({min(y, max(0, h - CHIP)) for y in range(0, max(1, h - GAP), STRIDE)})
    return [(x, y) for y in ys for x in xs]


def _scene(root: Path, stem: str, width: int, height: int,
           objects: list[tuple[str, tuple[float, ...]]]) -> None:
    """The scene's image and label file; ``objects``: ``(class, (cx, cy, w, h, angle))``."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labelTxt").mkdir(exist_ok=True)
    Image.new("RGB", (width, height)).save(root / "images" / f"{stem}.png")
    lines = ["imagesource:test", "gsd:0.5"] + [
        " ".join(f"{v:.1f}" for v in _rect(*rect)) + f" {cat} 0" for cat, rect in objects]
    (root / "labelTxt" / f"{stem}.txt").write_text("\n".join(lines) + "\n")


def _chip_results(rng: np.random.Generator, stem: str, width: int, height: int,
                  objects: list[tuple[str, tuple[float, ...]]], rate: float
                  ) -> dict[str, list[str]]:
    """Task1 lines per class: every object seen from each chip holding its centre (a
    slightly different rotated rectangle and score from each, as a detector gives), plus a
    false alarm per chip."""
    lines: dict[str, list[str]] = defaultdict(list)
    for x0, y0 in _chips(width, height, rate):
        name = f"{stem}__{rate:g}__{x0}___{y0}"
        for cat, (cx, cy, w, h, angle) in objects:
            px, py = cx * rate - x0, cy * rate - y0
            if not (0 <= px < CHIP and 0 <= py < CHIP) or rng.random() < 0.1:
                continue
            j = rng.normal(0, 1, 5)
            quad = _rect(px + j[0], py + j[1], w * rate * (1 + 0.1 * j[2]),
                         h * rate * (1 + 0.1 * j[3]), angle + 0.05 * j[4])
            lines[cat].append(f"{name} {rng.uniform(0.05, 1):.6f} "
                              + " ".join(f"{v:.2f}" for v in quad))
        cat = objects[int(rng.integers(len(objects)))][0]
        fx, fy = rng.uniform(50, CHIP - 50, 2)  # a false alarm
        lines[cat].append(f"{name} {rng.uniform(0.05, 1):.6f} "
                          + " ".join(f"{v:.2f}" for v in _rect(fx, fy, 30, 12, 0.3)))
    return lines


def _write_results(folder: Path, lines: dict[str, list[str]], task: int = 1) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for cat, rows in lines.items():
        (folder / f"Task{task}_{cat}.txt").write_text("\n".join(rows) + "\n")


def devkit_order(scores: list[float]) -> list[int]:
    """``py_cpu_nms_poly``'s order: its ``scores.argsort()[::-1]`` on the scores column of the
    group's ``(N, 9)`` detection array."""
    dets = np.zeros((len(scores), 9))
    dets[:, 8] = scores
    return dets[:, 8].argsort()[::-1].tolist()


def _devkit_merge(folder: Path) -> dict[tuple[str, str], list[tuple]]:
    """The devkit's merge, written out: per (scene, class), ``(score, 8 coordinates, chips)``
    kept, ``chips`` the kept one's then those of the detections it drops (sorted)."""
    groups: dict[tuple[str, str], list[tuple[float, list[float], str]]] = defaultdict(list)
    for path in sorted(folder.glob("Task1_*.txt")):
        cat = path.stem[len("Task1_"):]
        for line in path.read_text().splitlines():
            parts = line.split()
            scene = parts[0].split("__")[0]
            x, y = map(int, re.findall(r"\d+", re.findall(r"__\d+___\d+", parts[0])[0]))
            rate = float(re.findall(r"__([\d+\.]+)__\d+___", parts[0])[0])
            poly = [float(v) for v in parts[2:]]
            orig = [(poly[i] + (x if i % 2 == 0 else y)) / rate for i in range(8)]
            groups[(scene, cat)].append((float(parts[1]), orig, parts[0]))
    kept = {}
    for key, dets in groups.items():
        polys = [shapely.Polygon(np.array(p).reshape(4, 2)) for _, p, _ in dets]
        order = devkit_order([d[0] for d in dets])
        out = []
        while order:
            i = order[0]
            rest = order[1:]
            iou = [polys[i].intersection(polys[j]).area / polys[i].union(polys[j]).area
                   for j in rest]
            dropped = {dets[j][2] for j, v in zip(rest, iou, strict=True) if v > 0.3}
            out.append((dets[i][0], tuple(round(v, 6) for v in dets[i][1]),
                        (dets[i][2], *sorted(dropped - {dets[i][2]}))))
            order = [j for j, v in zip(rest, iou, strict=True) if v <= 0.3]
        kept[key] = sorted(out)
    return kept


def _merged(bench: Path, name: str) -> dict[tuple[str, str], list[tuple]]:
    gt = json.loads((bench / "ground_truth.json").read_text())
    query = {q["query_id"]: q["ann_id"] for q in gt["tasks"]["open_vocabulary"]}
    anns = {a["id"]: a for a in gt["annotations"]}
    rows = json.loads((bench / "predictions" / f"{name}.json").read_text())
    out = {}
    for row in rows["tasks"]["open_vocabulary"]:
        ann = anns[query[row["query_id"]]]
        stem = Path(ann["image_path"]).stem
        if row["oriented_bbox"]:
            out[(stem, ann["category_name"])] = sorted(
                (d["score"], tuple(round(v, 6) for pt in d["polygon"] for v in pt),
                 tuple(d["chips"])) for d in row["oriented_bbox"])
    return out


def _dense_dataset(root: Path, rng: np.random.Generator) -> None:
    """Two scenes: a 2,600 x 1,900 harbour with 520 small vehicles packed on a grid and 40
    ships, split at rate 1; a 3,000 x 3,000 one with 150 planes split at rates 0.5 and 1
    (the same plane found at both rates)."""
    vehicles = [("small-vehicle", (40 + 22 * (k % 100), 300 + 26 * (k // 100) + (k % 7),
                                   14, 7, 0.2 * (k % 5))) for k in range(520)]
    ships = [("ship", (rng.uniform(100, 2500), rng.uniform(900, 1800), 60, 18,
                       rng.uniform(0, 3))) for _ in range(40)]
    _scene(root, "P0001", 2600, 1900, vehicles + ships)
    planes = [("plane", (rng.uniform(60, 2940), rng.uniform(60, 2940), 50, 50,
                         rng.uniform(0, 3))) for _ in range(150)]
    _scene(root, "P0002", 3000, 3000, planes)
    lines: dict[str, list[str]] = defaultdict(list)
    for stem, (w, h), objs, rates in (("P0001", (2600, 1900), vehicles + ships, (1.0,)),
                                      ("P0002", (3000, 3000), planes, (0.5, 1.0))):
        for rate in rates:
            for cat, rows in _chip_results(rng, stem, w, h, objs, rate).items():
                lines[cat] += rows
    _write_results(root / "results" / "chipnet", lines)


def test_merge_equals_the_devkit_rules_on_dense_scenes(tmp_path: Path) -> None:
    _dense_dataset(tmp_path, np.random.default_rng(29))
    out = tmp_path / "bench"
    from_dota(tmp_path / "labelTxt", tmp_path / "images", out,
              [tmp_path / "results" / "chipnet"], merge_chips=True)
    expected = _devkit_merge(tmp_path / "results" / "chipnet")
    got = _merged(out, "chipnet")
    assert set(got) == set(expected)
    raw = sum(len((tmp_path / "results" / "chipnet" / f).read_text().splitlines())
              for f in ("Task1_small-vehicle.txt",))
    assert len(expected[("P0001", "small-vehicle")]) < raw  # the merge removed something
    assert any("__0.5__476___" in c for kept in expected[("P0002", "plane")] for c in kept[2])
    for key in expected:
        assert got[key] == expected[key], key


def test_a_seam_object_seen_from_two_chips_is_one_true_positive(tmp_path: Path) -> None:
    """A plane across the seam of chips x=0 and x=824 (both 1024 wide) is detected in both;
    merged, the scene has one box (the higher score) that keeps both chips, and the query
    is evaluated against the scene's label: one true positive, no false positive. The same
    two detections as DOTA Task2 boxes (issue 46: boxes come from Task2 files only) are
    mapped and merged alike, per task."""
    _scene(tmp_path, "P0001", 1800, 900, [("plane", (850.0, 120.0, 40.0, 40.0, 0.0))])
    left = "P0001__1__0___0 0.9 830 100 870 100 870 140 830 140"
    right = "P0001__1__824___0 0.8 7 101 47 101 47 141 7 141"  # x + 824, y + 0
    _write_results(tmp_path / "results" / "m", {"plane": [left, right]})
    _write_results(tmp_path / "results" / "m", {"plane": ["P0001__1__0___0 0.9 830 100 870 140",
                                                          "P0001__1__824___0 0.8 7 101 47 141"]},
                   task=2)
    out = tmp_path / "bench"
    assert convert_cli.main(["from-dota", "--labels", str(tmp_path / "labelTxt"), "--images",
                             str(tmp_path / "images"), "--results", str(tmp_path / "results" / "m"),
                             "--merge-chips", "--out", str(out), "--quiet"]) == 0
    rows = json.loads((out / "predictions" / "m.json").read_text())["tasks"]["open_vocabulary"]
    row = next(r for r in rows if r["query_id"] == "ov_P0001_plane")
    assert [b["score"] for b in row["oriented_bbox"]] == [0.9]
    assert row["oriented_bbox"][0]["chips"] == ["P0001__1__0___0", "P0001__1__824___0"]
    assert row["bbox"] == [{"bbox": [830.0, 100.0, 870.0, 140.0], "score": 0.9,
                            "chips": ["P0001__1__0___0", "P0001__1__824___0"]}]
    result = evaluate_files(out / "ground_truth.json", out / "predictions" / "m.json",
                            ["vocabulary"], modalities="bbox,oriented_bbox")["open_vocabulary"]
    entry = next(s for s in result["per_sample"] if s["sample_id"] == "ov_P0001_plane")
    for modality in ("bbox", "oriented_bbox"):
        assert {k: entry[modality][k] for k in ("tp", "fp", "fn")} == {"tp": 1, "fp": 0,
                                                                       "fn": 0}


@pytest.mark.parametrize(("line", "field", "found"), [
    ("P0001 0.9 1 1 5 1 5 5 1 5", "image_name", "P0001"),
    ("P0001__0__0___0 0.9 1 1 5 1 5 5 1 5", "image_name", "P0001__0__0___0"),
    ("P0009__1__0___0 0.9 1 1 5 1 5 5 1 5", "image_name", "P0009__1__0___0"),
])
def test_bad_chip_names_are_reported_with_file_line_and_field(
        tmp_path: Path, line: str, field: str, found: str) -> None:
    _scene(tmp_path, "P0001", 100, 100, [("plane", (50.0, 50.0, 10.0, 10.0, 0.0))])
    _write_results(tmp_path / "results" / "m", {"plane": ["P0001__1__0___0 0.5 1 1 5 1 5 5 1 5",
                                                          line]})
    with pytest.raises(OVEarthInputError) as err:
        from_dota(tmp_path / "labelTxt", tmp_path / "images", tmp_path / "bench",
                  [tmp_path / "results" / "m"], merge_chips=True)
    text = str(err.value)
    assert "Task1_plane.txt" in text and "line 2" in text and field in text and found in text
    assert not (tmp_path / "bench").exists()


def test_chip_extents_and_where_a_box_fell() -> None:
    """Hand-worked: a 2048 x 1500 scene cut at rate 1 into 1024-px chips with a 200-px gap
    (stride 824); at rate 0.5 a chip's offset and its 1024-px side (in the halved scene,
    cut at its 1024 x 750 border) are doubled back into scene pixels."""
    from ovearth_core.convert.chips import chip_extent, place, place_text

    scene = (2048, 1500)
    a = chip_extent("S__1__0___0", scene)
    b = chip_extent("S__1__824___0", scene)
    low = chip_extent("S__1__0___824", scene)  # 1500 - 824 = 676 rows left
    assert (a.box, b.box, low.box) == ((0, 0, 1024, 1024), (824, 0, 1848, 1024),
                                       (0, 824, 1024, 1500))
    assert not a.sized
    assert chip_extent("S__0.5__512___0", scene).box == (1024, 0, 2048, 1500)  # 512 x 750
    sized = chip_extent("S__2__100___40", scene, (600, 400))
    assert sized.box == (50, 20, 350, 220) and sized.sized
    chips = [a, b, low]
    assert place((100, 100, 140, 140), chips) == ("in", ("S__1__0___0",))
    assert place((900, 100, 940, 140), chips) == ("in", ("S__1__0___0", "S__1__824___0"))
    assert place((1800, 100, 1900, 140), chips) == ("seam", ("S__1__824___0",))
    assert place((700, 1000, 1100, 1100), chips) == ("seam", ("S__1__0___0", "S__1__824___0",
                                                             "S__1__0___824"))
    assert place((1900, 1200, 1950, 1250), chips) == ("none", ())
    assert place_text(("in", ("A",)), 3) == "in chip A"
    assert place_text(("in", ("A", "B")), 3) == "in chips A and B (where they overlap)"
    assert place_text(("seam", ("A", "B", "C")), 3) == "on the seam between chips A, B and C"
    assert place_text(("seam", ("A",)), 3) == "across the border of chip A"
    assert place_text(("none", ()), 3) == "in none of the submission's 3 chips of this scene"
    with pytest.raises(ValueError, match="chip name"):
        chip_extent("P0001.png", scene)


def test_chips_by_scene_reads_what_merge_chips_writes() -> None:
    from ovearth_core.convert.chips import chips_by_scene

    doc = {"tasks": {"open_vocabulary": [
        {"query_id": "q1", "bbox": [{"bbox": [0, 0, 1, 1], "score": 1,
                                     "chips": ["P1__1__824___0", "P1__1__0___0"]},
                                    {"bbox": [0, 0, 1, 1], "score": 1}],
         "oriented_bbox": [{"polygon": [], "chips": ["P2__1__0___0", "not a chip", 7]}]},
        {"query_id": "q2", "bbox": "junk"}, "junk"], "referring": None}}
    assert chips_by_scene(doc) == {"P1": ["P1__1__0___0", "P1__1__824___0"],
                                   "P2": ["P2__1__0___0"]}
    assert chips_by_scene([]) == {}


def test_chip_picture_outlines_the_object_where_it_lies_in_the_chip() -> None:
    """Rate 0.5: chip S__0.5__100___50 of a 400 x 300 px chip image covers scene x 200-1000,
    y 100-700; a scene box at x 300-500, y 200-400 is at chip x 50-150, y 50-150, and on a
    display at scale 0.5 at x 25-75, y 25-75."""
    from ovearth_core.convert.chips import chip_extent
    from ovearth_core.viz.chips import chip_picture
    from ovearth_core.viz.images import DisplayImage

    chip = chip_extent("S__0.5__100___50", (4000, 3000), (400, 300))
    assert chip.box == (200, 100, 1000, 700)
    shown = DisplayImage(np.zeros((150, 200, 3), np.uint8), 0.5, 400, 300)
    outline = np.array([[300, 200], [500, 200], [500, 400], [300, 400], [300, 200]], float)
    got = chip_picture(shown, chip, outline, "#ff0000", width=1)
    red = np.argwhere((got == (255, 0, 0)).all(axis=2))
    assert (red.min(axis=0).tolist(), red.max(axis=0).tolist()) == ([25, 25], [75, 75])
    assert not got[26:75, 26:75].any()  # the outline only


def _nms_brute_force(polys: np.ndarray, scores: list[float]) -> list[int]:
    """py_cpu_nms_poly at 0.3 over all pairs (shapely's exact polygon IoU, the devkit's for
    simple polygons): the kept indices in the order kept."""
    geoms = shapely.polygons(polys)
    order = devkit_order(scores)
    keep = []
    while order:
        i, rest = order[0], np.array(order[1:], dtype=int)
        keep.append(i)
        inter = shapely.area(shapely.intersection(geoms[i], geoms[rest]))
        iou = inter / (shapely.area(geoms[i]) + shapely.area(geoms[rest]) - inter)
        order = rest[iou <= 0.3].tolist()
    return keep


def _crowd(rng: np.random.Generator, n: int, side: float) -> tuple[np.ndarray, list[float]]:
    """``n`` jittered rotated rectangles around ``n // 3`` objects of a ``side``-px scene
    (each object found about three times, as from overlapping chips), scores on a 0.05 grid
    so that many are equal."""
    centres = rng.uniform(20, side - 20, (n // 3 + 1, 2))[rng.integers(0, n // 3 + 1, n)]
    polys = np.array([_rect(cx + rng.normal(0, 2), cy + rng.normal(0, 2),
                            30 * rng.uniform(0.8, 1.2), 12 * rng.uniform(0.8, 1.2),
                            rng.uniform(0, 3)) for cx, cy in centres]).reshape(n, 4, 2)
    return polys, (np.round(rng.uniform(0, 1, n) * 20) / 20).tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_merge_keeps_what_all_pairs_nms_keeps(seed: int) -> None:
    """Issue 38: the merge finds its candidate pairs with a spatial index, not all pairs;
    the kept detections and their order equal py_cpu_nms_poly over all pairs, ties
    included (1,500 detections of one class in one scene, scores on a 0.05 grid)."""
    from ovearth_core.convert.chips import ChipDetection, merge

    polys, scores = _crowd(np.random.default_rng(seed), 1500, 1200)
    found = [ChipDetection("S", "car", sc, k, f"S__1__{k}___0") for k, sc in enumerate(scores)]
    kept = [d.index for d, _ in merge(found, polys)]
    want = _nms_brute_force(polys, scores)
    assert 100 < len(want) < 1400
    assert kept == want


def test_equal_scores_are_merged_in_the_devkits_order(tmp_path: Path) -> None:
    """Two overlapping detections of equal score (IoU 0.6): py_cpu_nms_poly's reversed
    argsort puts the later line first, so the devkit keeps the second (ours kept the first:
    633 boxes where the devkit kept 634 on P0706)."""
    _scene(tmp_path, "P0001", 1800, 900, [("plane", (850.0, 120.0, 40.0, 40.0, 0.0))])
    first = "P0001__1__0___0 0.5 830 100 870 100 870 140 830 140"
    second = "P0001__1__824___0 0.5 14 100 54 100 54 140 14 140"  # x 838-878
    assert devkit_order([0.5, 0.5]) == [1, 0]
    _write_results(tmp_path / "results" / "m", {"plane": [first, second]})
    from_dota(tmp_path / "labelTxt", tmp_path / "images", tmp_path / "bench",
              [tmp_path / "results" / "m"], merge_chips=True)
    got = _merged(tmp_path / "bench", "m")[("P0001", "plane")]
    assert got == [(0.5, (838.0, 100.0, 878.0, 100.0, 878.0, 140.0, 838.0, 140.0),
                    ("P0001__1__824___0", "P0001__1__0___0"))]


def test_concave_chip_detections_merge_as_polygons(tmp_path: Path) -> None:
    """A concave detection (a dart, area 2,000) and its 100 x 100 bounding square from
    another chip: the devkit's polygon IoU is 0.2, under 0.3, so both are kept (as
    minimum-area rectangles they were one square, IoU 1, and one was dropped)."""
    dart = [(0, 0), (100, 0), (20, 20), (0, 100)]
    square = [(0, 0), (100, 0), (100, 100), (0, 100)]
    assert refs.devkit_poly_iou(dart, square) == pytest.approx(0.2)
    _scene(tmp_path, "P0001", 1800, 900, [("plane", (50.0, 50.0, 40.0, 40.0, 0.0))])
    lines = ["P0001__1__0___0 0.9 " + " ".join(f"{v:g}" for p in dart for v in p),
             "P0001__1__0___0 0.8 " + " ".join(f"{v:g}" for p in square for v in p)]
    _write_results(tmp_path / "results" / "m", {"plane": lines})
    from_dota(tmp_path / "labelTxt", tmp_path / "images", tmp_path / "bench",
              [tmp_path / "results" / "m"], merge_chips=True)
    got = _merged(tmp_path / "bench", "m")[("P0001", "plane")]
    assert [g[0] for g in got] == [0.8, 0.9]
    assert got[1][1] == (0.0, 0.0, 100.0, 0.0, 20.0, 20.0, 0.0, 100.0)
