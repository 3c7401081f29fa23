"""AppTest: the explorer names, for a missed or false object of a scene merged from DOTA
ImgSplit chips (``from-dota --merge-chips``: each box keeps its chips), the chip it fell in,
or the seam it lies on, and opens the chip when its image is in the images folder (issue 29).

The scene: 2048 x 1024, rate 1, 1024-px chips without a gap at x 0 and x 1024 (the chip
image of the first is in the folder, 1024 x 1024; the second's is not: ImgSplit's default
1024-px side). Places worked by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_fixtures import assert_ok, goto
from PIL import Image
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
EXPLORER = "pages/Query_explorer.py"
LEFT, RIGHT = "P0001__1__0___0", "P0001__1__1024___0"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _dataset(root: Path) -> Path:
    (root / "images").mkdir(parents=True)
    Image.new("RGB", (2048, 1024), (90, 90, 90)).save(root / "images" / "P0001.png")
    Image.new("RGB", (1024, 1024), (200, 30, 30)).save(root / "images" / f"{LEFT}.png")
    gt = {"annotations": [{
        "id": "P0001_plane", "image_path": "images/P0001.png", "width": 2048, "height": 1024,
        "category_name": "plane", "segmentation": None,
        "bbox": [[100, 100, 40, 40], [1000, 300, 50, 40], [1200, 800, 40, 40]]}],
        "tasks": {"open_vocabulary": [{"query_id": "q1", "ann_id": "P0001_plane",
                                       "type": "positive", "phrase": "plane"}]}}
    pred = {"tasks": {"open_vocabulary": [{"query_id": "q1", "segmentation": None, "bbox": [
        {"bbox": [100, 100, 140, 140], "score": 0.9, "chips": [LEFT]},
        {"bbox": [300, 600, 340, 640], "score": 0.8, "chips": [LEFT]},
        {"bbox": [1500, 200, 1540, 240], "score": 0.7, "chips": [RIGHT]}]}]}}
    (root / "predictions").mkdir()
    (root / "ground_truth.json").write_text(json.dumps(gt))
    (root / "predictions" / "merged.json").write_text(json.dumps(pred))
    return root


def _explorer(root: Path, focus: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (("gt_path", str(root / "ground_truth.json")),
                       ("images_dir", str(root)),
                       ("pred_path", str(root / "predictions" / "merged.json")),
                       ("task", "vocabulary"), ("selected", {"vocabulary": "q1"})):
        at.session_state[key] = value
    if focus is not None:
        at.session_state["view_focus"] = ("q1", focus)
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    return at


def test_missed_and_false_objects_name_their_chip_or_seam(tmp_path: Path) -> None:
    labels = _explorer(_dataset(tmp_path / "d")).selectbox(key="_w_objects").options
    chip_parts = [label.split(" · ")[-1] if "chip" in label else None for label in labels]
    assert chip_parts == [
        None,  # GT 1: matched
        f"on the seam between chips {LEFT} and {RIGHT}",  # x 1000-1050 crosses x 1024
        f"in chip {RIGHT}",  # GT 3 missed: x 1200-1240
        None,  # the prediction on GT 1: matched
        f"in chip {LEFT}",  # false positive at x 300-340
        f"in chip {RIGHT}",  # false positive at x 1500-1540
    ], labels


def test_the_chip_opens_when_its_image_is_in_the_folder(tmp_path: Path) -> None:
    root = _dataset(tmp_path / "d")
    at = _explorer(root, focus=4)  # the false positive in the left chip
    (chip,) = [e for e in at.expander if LEFT in e.label]
    assert [type(c).__name__ for c in chip.children.values()] == ["Image", "Caption"]
    captions = " ".join(c.value for c in chip.caption)
    assert f"images/{LEFT}.png: x 0–1,024, y 0–1,024 of the scene" in captions
    at = _explorer(root, focus=5)  # the right chip has no image: named, nothing to open
    assert not [e for e in at.expander if "Chip" in e.label]
    assert any(f"in chip {RIGHT}" in c.value and "no chip image" in c.value
               for c in at.caption)


def test_no_chip_text_without_chips(tmp_path: Path) -> None:
    root = _dataset(tmp_path / "d")
    pred = root / "predictions" / "merged.json"
    pred.write_text(pred.read_text().replace('"chips"', '"other"'))
    labels = _explorer(root, focus=4).selectbox(key="_w_objects").options
    assert not any("chip" in label for label in labels)


def test_hostile_chip_names_and_the_recorded_chip_side(tmp_path: Path) -> None:
    """Issue 35, item 10: chip names with 401- and 5,000-digit offsets are skipped, no
    exception box. Issue 34, item 9: the submission records 512-px chips (``chip_split``),
    so the right chip (no image) covers x 1024-1536 and the false positive at x 1500-1540
    crosses its border (with 1024-px chips it was "in chip" it)."""
    root = _dataset(tmp_path / "d")
    pred_path = root / "predictions" / "merged.json"
    pred = json.loads(pred_path.read_text())
    pred["tasks"]["open_vocabulary"][0]["bbox"][0]["chips"] += [
        "P0001__1__" + "9" * 401 + "___0", "P0001__1__" + "9" * 5000 + "___0",
        "P0001__0." + "0" * 400 + "1__0___0"]
    pred["chip_split"] = {"subsize": 512, "gap": 0, "source": "flags"}
    pred_path.write_text(json.dumps(pred))
    at = _explorer(root, focus=5)
    labels = at.selectbox(key="_w_objects").options
    assert labels[-1].endswith(f"across the border of chip {RIGHT}"), labels
    assert any("512-px chip, from split settings" in c.value for c in at.caption)
