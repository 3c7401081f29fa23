"""from-label-maps: the sample maps (a greyscale and a palette PNG) evaluated against numbers
worked by hand, the classes file, the ignore index."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from convert_helpers import DATA
from PIL import Image

from ovearth_core import evaluate_files
from ovearth_core.convert import from_label_maps
from ovearth_core.convert.label_maps import read_classes
from ovearth_core.errors import OVEarthInputError

SAMPLE = DATA / "label_maps"


def _make_images_module():
    spec = importlib.util.spec_from_file_location("make_images", DATA / "make_images.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_label_maps_hold_the_grids() -> None:
    make = _make_images_module()
    for name, text in make.GRIDS.items():
        with Image.open(SAMPLE / f"{name}.png") as img:
            assert (np.asarray(img) == make.grid(text)).all(), name
            assert img.mode == ("P" if name.endswith("tile_b") else "L")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("maps") / "bench"
    from_label_maps(SAMPLE / "gt", SAMPLE / "classes.txt", SAMPLE / "images", out,
                    [SAMPLE / "pred" / "model_x"], ignore_index=0)
    return out


def test_queries_per_image_and_class(bench: Path) -> None:
    gt = json.loads((bench / "ground_truth.json").read_text())
    rows = gt["tasks"]["open_vocabulary"]
    assert [(r["query_id"], r["type"], r["phrase"]) for r in rows] == [
        ("ov_tile_a_1", "positive", "background"), ("ov_tile_a_2", "positive", "building"),
        ("ov_tile_a_3", "positive", "water"), ("ov_tile_b_1", "positive", "background"),
        ("ov_tile_b_2", "positive", "building"), ("ov_tile_b_3", "negative", "water")]
    anns = {a["id"]: a for a in gt["annotations"]}
    assert anns["tile_b_3"]["segmentation"] is None
    assert all(a["bbox"] == [] for a in gt["annotations"])
    assert anns["tile_a_1"]["image_path"] == "images/tile_a.jpg"


def test_evaluation_equals_the_hand_worked_expectation(bench: Path) -> None:
    res = evaluate_files(bench / "ground_truth.json", bench / "predictions" / "model_x.json",
                         ["vocabulary"], modalities="segmentation")["open_vocabulary"]
    s = res["summary"]
    # Every present class is predicted somewhere; water predicted on tile_b is a hallucination.
    assert {k: s["presence"][k] for k in ("tp", "fp", "tn", "fn")} == {
        "tp": 5, "fp": 1, "tn": 0, "fn": 0}
    # (intersection, union): tile_a background 33/35 (the no-data pixels the model called
    # building are dropped), building 4/5, water 5/6; tile_b background 39/44, building 4/8.
    ious = {r["sample_id"]: r["seg"]["iou"] for r in res["per_sample"] if not r["negative"]}
    assert ious == pytest.approx({"ov_tile_a_1": 33 / 35, "ov_tile_a_2": 4 / 5,
                                  "ov_tile_a_3": 5 / 6, "ov_tile_b_1": 39 / 44,
                                  "ov_tile_b_2": 4 / 8})
    assert s["seg"]["positive_micro_miou"] == pytest.approx(85 / 98)
    per_class = {c["category"]: c["seg"]["miou"] for c in res["per_category"]}
    assert per_class == pytest.approx({"background": (33 / 35 + 39 / 44) / 2,
                                       "building": (0.8 + 0.5) / 2, "water": 5 / 6})


def test_without_ignore_index_no_data_is_a_class(tmp_path: Path) -> None:
    from_label_maps(SAMPLE / "gt", SAMPLE / "classes.txt", SAMPLE / "images", tmp_path / "b")
    rows = json.loads((tmp_path / "b" / "ground_truth.json").read_text())["tasks"][
        "open_vocabulary"]
    assert [(r["query_id"], r["type"]) for r in rows if r["phrase"] == "no data"] == [
        ("ov_tile_a_0", "positive"), ("ov_tile_b_0", "negative")]


@pytest.mark.parametrize(("text", "expected"), [
    ("background\nbuilding\n", {0: "background", 1: "building"}),
    ("# comment\n\n3 road\n7 agricultural land\n", {3: "road", 7: "agricultural land"}),
    ("2 lanes\nforest\n", {0: "2 lanes", 1: "forest"}),  # not every line indexed: positions
])
def test_classes_file_forms(tmp_path: Path, text: str, expected: dict[int, str]) -> None:
    (tmp_path / "c.txt").write_text(text)
    assert read_classes(tmp_path / "c.txt") == expected


@pytest.mark.parametrize(("text", "line", "field"), [
    ("1 a\n1 b\n", 2, "index"), ("a\nb\na\n", 3, "name")])
def test_classes_file_problems(tmp_path: Path, text: str, line: int, field: str) -> None:
    (tmp_path / "c.txt").write_text(text)
    with pytest.raises(OVEarthInputError) as info:
        read_classes(tmp_path / "c.txt")
    assert [(p.line, p.field) for p in info.value.problems] == [(line, field)]
