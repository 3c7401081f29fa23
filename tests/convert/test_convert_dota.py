"""from-dota: the sample set evaluated through us against numbers worked by hand, the line
parsers (tables and hypothesis properties), vertex-order normalisation and difficult objects.

The sample (tests/data/convert/dota): P0001 has planes at x 10-30 and 40-60 (the second
difficult) and a ship at x 70-90 written in self-crossing order; P0002 a ship at 20-40; P0003
no object. model_a: planes on P0001 at IoU 1 and 380 / 420 = 0.905 (score 0.9, 0.8), a plane
on P0002 (a negative query), ships on P0001 at IoU 1 and on P0002 at IoU 200 / 600 = 1/3, and
a harbor (a category of no label file) on P0003. Queries: 3 images x {harbor, plane, ship} =
9, of which 3 positive.

model_a's files are Task1 (oriented) results only, so the converted submission has oriented
boxes and no boxes (issue 46: a modality a source does not have is absent, not invented).
The hand-worked tests score both modalities, so their fixture adds DOTA Task2 (horizontal)
files, ``TASK2`` below: the same detections as upright boxes, written out here by hand (every
model_a quadrilateral is an upright rectangle, so the two modalities agree).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from convert_helpers import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core import evaluate_files, geometry
from ovearth_core.analysis.ap import coco_average_precision
from ovearth_core.convert import from_dota
from ovearth_core.convert.common import Problems
from ovearth_core.convert.dota import Quads, parse_label_lines, parse_task1_lines
from ovearth_core.errors import OVEarthInputError
from ovearth_core.io import load_samples

SAMPLE = DATA / "dota"
# model_a's detections as DOTA Task2 lines (image score xmin ymin xmax ymax), by hand.
TASK2 = {
    "harbor": ["P0003 0.5 1 1 5 5"],
    "plane": ["P0001 0.9 10 10 30 20", "P0001 0.8 41 10 61 30", "P0002 0.4 0 0 10 10"],
    "ship": ["P0001 0.7 70 50 90 60", "P0002 0.6 30 20 50 40"],
}


def with_task2(folder: Path, task2: dict[str, list[str]]) -> Path:
    """A copy of model_a's Task1 files in ``folder``, with ``task2``'s Task2 files beside."""
    folder.mkdir(parents=True)
    for path in (SAMPLE / "results" / "model_a").glob("Task1_*.txt"):
        (folder / path.name).write_bytes(path.read_bytes())
    for cat, lines in task2.items():
        (folder / f"Task2_{cat}.txt").write_text("".join(f"{line}\n" for line in lines))
    return folder


@pytest.fixture(scope="module", params=["target", "ignore"])
def bench(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("dota")
    out = root / "bench"
    from_dota(SAMPLE / "labelTxt", SAMPLE / "images", out,
              [with_task2(root / "model_a", TASK2)], difficult=request.param)
    return out, request.param


def _files(bench: Path) -> tuple[Path, Path]:
    return bench / "ground_truth.json", bench / "predictions" / "model_a.json"


def test_queries_and_annotations(bench: tuple[Path, str]) -> None:
    out, mode = bench
    gt = json.loads(_files(out)[0].read_text())
    rows = gt["tasks"]["open_vocabulary"]
    assert [(r["query_id"], r["type"]) for r in rows] == [
        ("ov_P0001_harbor", "negative"), ("ov_P0001_plane", "positive"),
        ("ov_P0001_ship", "positive"), ("ov_P0002_harbor", "negative"),
        ("ov_P0002_plane", "negative"), ("ov_P0002_ship", "positive"),
        ("ov_P0003_harbor", "negative"), ("ov_P0003_plane", "negative"),
        ("ov_P0003_ship", "negative")]
    anns = {a["id"]: a for a in gt["annotations"]}
    assert (anns["P0001_plane"]["width"], anns["P0001_plane"]["height"]) == (100, 80)
    # The self-crossing ship is re-sorted around its centre, first vertex first.
    assert anns["P0001_ship"]["oriented_bbox"] == [[[70, 50], [90, 50], [90, 60], [70, 60]]]
    assert anns["P0001_ship"]["bbox"] == [[70, 50, 20, 10]]
    assert all(a["segmentation"] is None for a in gt["annotations"])
    if mode == "target":
        assert anns["P0001_plane"]["difficult"] == [0, 1]
        assert len(anns["P0001_plane"]["bbox"]) == 2
    else:
        assert anns["P0001_plane"]["bbox"] == [[10, 10, 20, 10]]
        assert anns["P0001_plane"]["ignore_bbox"] == [[40, 10, 20, 20]]
    assert "1 quadrilaterals: self-crossing vertex orders re-sorted" in (
        out / "README.md").read_text()


def test_evaluation_equals_the_hand_worked_expectation(bench: tuple[Path, str]) -> None:
    out, mode = bench
    s = evaluate_files(*_files(out), ["vocabulary"],
                       modalities="bbox,oriented_bbox")["open_vocabulary"]["summary"]
    # Presence: the three positives have detections; P0002 plane and P0003 harbor are
    # false positives; the other four negatives are empty.
    assert {k: s["presence"][k] for k in ("tp", "fp", "tn", "fn")} == {
        "tp": 3, "fp": 2, "tn": 4, "fn": 0}
    assert s["presence"]["mcc"] == pytest.approx(12 / 360 ** 0.5)
    assert s["presence"]["f1"] == pytest.approx(0.75)
    for key in ("bbox", "oriented_bbox"):  # Task2 boxes = Task1 upright rectangles: agree
        det = s[key]
        if mode == "target":
            # TP: both planes and the P0001 ship; P0002 ship at IoU 1/3 is an FP and an FN.
            assert (det["tp"], det["fp"], det["fn"]) == (3, 1, 1)
            assert det["positive_micro_f1"] == pytest.approx(0.75)
            assert det["positive_macro_f1"] == pytest.approx(2 / 3)
            # The 0.905 plane fails only at 0.95: F1 0.75 at nine thresholds, 0.5 at 0.95.
            assert det["positive_mean_micro_f1@[0.5:0.95]"] == pytest.approx(0.725)
        else:
            # The difficult plane is no target: its detection is a false positive here
            # (the spec's metrics know no ignore region).
            assert (det["tp"], det["fp"], det["fn"]) == (2, 2, 1)


def test_coco_style_ap_equals_the_hand_worked_expectation(bench: tuple[Path, str]) -> None:
    out, mode = bench
    samples = load_samples(*_files(out), "vocabulary", modalities="bbox,oriented_bbox")
    if mode == "target":
        # Ranked 0.9 TP, 0.8 TP (FP at 0.95), 0.7 TP, 0.6 FP over 4 GT: 76 of the 101
        # recall points at precision 1 up to IoU 0.9; at 0.95, precision 1 up to recall 0.25
        # (26 points) and 2/3 up to 0.5 (25 points).
        expected = (9 * 76 / 101 + (26 + 25 * 2 / 3) / 101) / 10
    else:
        # The 0.8 detection lies 95 % inside the ignored difficult plane: ignored at every
        # threshold; 0.9 TP, 0.7 TP, 0.6 FP over 3 GT: precision 1 up to recall 2/3.
        expected = 67 / 101
    for m in ("bbox", "oriented_bbox"):
        assert coco_average_precision(samples, m)["ap@[0.5:0.95]"] == pytest.approx(expected)


def _rows(out: Path, name: str) -> dict[str, dict]:
    doc = json.loads((out / "predictions" / f"{name}.json").read_text())
    return {r["query_id"]: r for r in doc["tasks"]["open_vocabulary"]}


def test_task1_results_give_oriented_boxes_only(tmp_path: Path) -> None:
    """Issue 46: Task1 files give a submission's oriented boxes, never their envelopes as
    boxes: a Task1-only folder converts to no ``bbox`` prediction at all."""
    from_dota(SAMPLE / "labelTxt", SAMPLE / "images", tmp_path / "b",
              [SAMPLE / "results" / "model_a"])
    rows = _rows(tmp_path / "b", "model_a")
    assert all(r["bbox"] == [] for r in rows.values())
    assert rows["ov_P0001_plane"]["oriented_bbox"] == [
        {"polygon": [[10, 10], [30, 10], [30, 20], [10, 20]], "score": 0.9},
        {"polygon": [[41, 10], [61, 10], [61, 30], [41, 30]], "score": 0.8}]
    samples = load_samples(tmp_path / "b" / "ground_truth.json",
                           tmp_path / "b" / "predictions" / "model_a.json", "vocabulary",
                           modalities="auto")
    assert tuple(samples.modalities) == ("oriented_bbox",)  # the loader sees no boxes


def test_task1_and_task2_results_each_give_their_own_modality(tmp_path: Path) -> None:
    """Task2 files give the boxes, from their own lines (here not the Task1 envelopes: other
    numbers, other scores, a detection Task1 has not); Task1 files the oriented boxes."""
    folder = with_task2(tmp_path / "m", {"plane": ["P0001 0.35 11 12 29.5 21",
                                                   "P0002 0.25 1 2 3 4"],
                                         "bridge": ["P0003 0.5 5 5 9 9"]})
    from_dota(SAMPLE / "labelTxt", SAMPLE / "images", tmp_path / "b", [folder])
    rows = _rows(tmp_path / "b", "m")
    assert rows["ov_P0001_plane"]["bbox"] == [{"bbox": [11, 12, 29.5, 21], "score": 0.35}]
    assert [b["score"] for b in rows["ov_P0001_plane"]["oriented_bbox"]] == [0.9, 0.8]
    assert rows["ov_P0002_plane"]["bbox"] == [{"bbox": [1, 2, 3, 4], "score": 0.25}]
    assert rows["ov_P0003_bridge"]["bbox"] == [{"bbox": [5, 5, 9, 9], "score": 0.5}]
    assert rows["ov_P0003_bridge"]["oriented_bbox"] == []
    assert rows["ov_P0001_ship"]["bbox"] == []  # Task1 ships, no Task2 ship file
    assert len(rows["ov_P0001_ship"]["oriented_bbox"]) == 1
    samples = load_samples(tmp_path / "b" / "ground_truth.json",
                           tmp_path / "b" / "predictions" / "m.json", "vocabulary",
                           modalities="auto")
    assert sorted(samples.modalities) == ["bbox", "oriented_bbox"]


def test_a_task2_only_folder_gives_boxes_only(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "Task2_ship.txt").write_text("P0002 0.6 30 20 50 40\n")
    from_dota(SAMPLE / "labelTxt", SAMPLE / "images", tmp_path / "b", [folder])
    rows = _rows(tmp_path / "b", "m")
    assert rows["ov_P0002_ship"]["bbox"] == [{"bbox": [30, 20, 50, 40], "score": 0.6}]
    assert all(r["oriented_bbox"] == [] for r in rows.values())


def test_a_folder_with_no_result_file_of_either_task_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    with pytest.raises(OVEarthInputError) as err:
        from_dota(SAMPLE / "labelTxt", SAMPLE / "images", tmp_path / "b", [tmp_path / "m"])
    assert "Task1_<category>.txt and / or Task2_<category>.txt files" in str(err.value)
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize(("line", "field", "expected"), [
    ("P0001 0.5 1 2 3", "(detection)", "6 fields: image_name score xmin ymin xmax ymax"),
    ("P0001 0.5 1 2 3 4 5 6 7 8", "(detection)", "6 fields"),
    ("P0001 high 1 2 3 4", "score", "a finite number"),
    ("P0001 0.5 1 x 3 4", "ymin", "a finite number"),
    ("P0001 0.5 1 2 3 nan", "ymax", "a finite number"),
    ("P0001 0.5 1 2 1e300 4", "xmax", "within ±1e100"),
    ("P0001 0.5 5 2 5 4", "xmax", "a number above xmin"),
    ("P0001 0.5 1 4 3 2", "ymax", "a number above ymin"),
])
def test_task2_line_problems_name_file_line_and_field(tmp_path: Path, line: str, field: str,
                                                      expected: str) -> None:
    folder = with_task2(tmp_path / "m", {"ship": ["P0001 0.7 70 50 90 60", line]})
    with pytest.raises(OVEarthInputError) as err:
        from_dota(SAMPLE / "labelTxt", SAMPLE / "images", tmp_path / "b", [folder])
    problems = err.value.problems
    assert [(Path(p.file).name, p.line, p.field) for p in problems] == [
        ("Task2_ship.txt", 2, field)]
    assert expected in problems[0].expected
    assert not (tmp_path / "b").exists()


def test_a_task2_link_out_of_the_results_folder_is_refused(tmp_path: Path) -> None:
    """Task2 files are listed through the same gate as Task1 files."""
    folder = with_task2(tmp_path / "m", {})
    outside = tmp_path / "outside" / "Task2_ship.txt"
    outside.parent.mkdir()
    outside.write_text("P0001 0.7 70 50 90 60\n")
    (folder / "Task2_ship.txt").symlink_to(outside)
    with pytest.raises(OVEarthInputError) as err:
        from_dota(SAMPLE / "labelTxt", SAMPLE / "images", tmp_path / "b", [folder])
    assert str(folder / "Task2_ship.txt") in str(err.value)
    assert "(links may not leave it)" in str(err.value)
    assert not (tmp_path / "b").exists()


def test_negatives_sampled(tmp_path: Path) -> None:
    from_dota(SAMPLE / "labelTxt", SAMPLE / "images", tmp_path / "b", negatives=1,
              classes=["bridge"])
    rows = json.loads((tmp_path / "b" / "ground_truth.json").read_text())["tasks"][
        "open_vocabulary"]
    neg = [r for r in rows if r["type"] == "negative"]
    assert len(neg) == 3 and len({r["query_id"].split("_")[1] for r in neg}) == 3
    assert {r["phrase"] for r in rows} <= {"bridge", "plane", "ship"}


# ------------------------------------------------------------------ the line parsers


def _labels(text: str) -> tuple[list[tuple[str, bool, int]], Quads, Problems]:
    quads, bad = Quads([], [], []), Problems()
    out = parse_label_lines(text.splitlines(), Path("x.txt"), quads, bad)
    return out, quads, bad


@pytest.mark.parametrize(("text", "line", "field", "expected"), [
    ("1 2 3 4 5 6 7 8 plane", 1, "(object)", "10 fields"),
    ("1 2 3 4 5 6 7 8 plane 0 extra", 1, "(object)", "10 fields"),
    ("gsd:0.3\n1 2 3 4 5 6 7 x plane 0", 2, "y4", "a finite number"),
    ("1 2 3 4 nan 6 7 8 plane 0", 1, "x3", "a finite number"),
    ("1 2 3 4 5 6 7 8 plane 2", 1, "difficult", "0 or 1"),
    ("1 2 3 4 5 6 7 8 3.5 0", 1, "category", "a category name"),
    ("gsd:-1", 1, "gsd", "a positive number or null"),
    ("gsd:abc", 1, "gsd", "a positive number or null"),
    ("0 0 1 1 2 2 3 3 plane 0\ngsd:0.5", 2, "(object)", "10 fields"),  # header after objects
])
def test_label_line_problems(text: str, line: int, field: str, expected: str) -> None:
    _, _, bad = _labels(text)
    assert len(bad.items) == 1
    p = bad.items[0]
    assert (p.file, p.line, p.field) == ("x.txt", line, field)
    assert expected in p.expected and p.found


def test_label_lines_accept_headers_blank_lines_and_floats() -> None:
    objs, quads, bad = _labels("\ufeffimagesource:GoogleEarth\n\nGSD: null\n"
                               "1.5 2 3 4 5 6 7 8 small-vehicle 1\n")
    assert not bad.items
    assert objs == [("small-vehicle", True, 0)]
    assert quads.points == [[1.5, 2, 3, 4, 5, 6, 7, 8]] and quads.lines == [4]


@pytest.mark.parametrize(("text", "field", "expected"), [
    ("P1 0.5 1 2 3 4 5 6 7", "(detection)", "10 fields"),
    ("P1 high 1 2 3 4 5 6 7 8", "score", "a finite number"),
    ("P1 0.5 1 2 3 4 5 6 7 inf", "y4", "a finite number"),
])
def test_task1_line_problems(text: str, field: str, expected: str) -> None:
    quads, bad = Quads([], [], []), Problems()
    assert parse_task1_lines([text], Path("Task1_x.txt"), quads, bad) == []
    assert [(p.line, p.field) for p in bad.items] == [(1, field)]
    assert expected in bad.items[0].expected


numbers = st.floats(-1e4, 1e4, allow_nan=False).map(lambda v: round(v, 3))
names = st.text(st.characters(whitelist_categories=("L", "N", "Pd")), min_size=1,
                max_size=12).filter(lambda s: not s.replace(".", "").lstrip("-+").isdigit()
                                    and s.lower() not in ("nan", "inf", "infinity")
                                    and not s.lower().lstrip("+-").startswith(("inf", "nan"))
                                    and not _is_number(s))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


objects = st.tuples(st.lists(numbers, min_size=8, max_size=8), names, st.booleans())


@settings(max_examples=300, deadline=None)
@given(st.lists(objects, max_size=12), st.booleans(),
       st.sampled_from([" ", "\t", "  "]), st.sampled_from(["\n", "\r\n"]))
def test_label_lines_round_trip(objs: list[tuple[list[float], str, bool]], header: bool,
                                sep: str, newline: str) -> None:
    """Whatever valid file is written, every object is read back, in order, exactly."""
    lines = ["imagesource:GoogleEarth", "gsd:0.25"] if header else []
    lines += [sep.join([*map(repr, pts), name, str(int(hard))]) for pts, name, hard in objs]
    found, quads, bad = _labels(newline.join(lines))
    assert not bad.items
    assert [(c, h) for c, h, _ in found] == [(n, h) for _, n, h in objs]
    assert quads.points == [pts for pts, _, _ in objs]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
                max_size=8))
def test_label_lines_never_crash(lines: list[str]) -> None:
    """Any text: objects or problems with a line number, never an exception."""
    text = "\n".join(lines)
    found, quads, bad = _labels(text)
    assert len(found) == len(quads.points)
    assert all(p.line is not None and 1 <= p.line <= len(text.splitlines()) for p in bad.items)


@settings(max_examples=300, deadline=None)
@given(st.lists(numbers, min_size=8, max_size=8), st.permutations(range(4)))
def test_vertex_order_normalisation_gives_a_valid_box_of_the_same_points(
        pts: list[float], order: list[int]) -> None:
    quad = np.array(pts).reshape(4, 2)[list(order)]
    (box,), (status,) = geometry.boundary_order(quad[None])
    if status == geometry.QUAD_DEGENERATE:
        assert np.isnan(box).all()
        return
    assert geometry.valid_polygons(box[None], concave=True)[0]
    if status == geometry.QUAD_KEPT:
        assert (box == quad).all()
    else:
        assert status == geometry.QUAD_REORDERED
        assert sorted(map(tuple, box)) == sorted(map(tuple, quad)) and (box[0] == quad[0]).all()


def test_ground_truth_says_it_came_from_dota_and_resamples_images(
        bench: tuple[Path, str]) -> None:
    from ovearth_core.analysis.compare import default_unit

    gt_path = _files(bench[0])[0]
    assert json.loads(gt_path.read_text())["source"] == {"format": "DOTA",
                                                         "resample_unit": "image"}
    assert default_unit(gt_path) == "image"
