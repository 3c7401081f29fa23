"""Converting without the images (issue 34, item 7): every converter converts numbers-only
when images are missing, with one warning naming what is missing and where the sizes came
from; a size that nothing gives is one problem saying so.

Reported: ``from-dota`` with 5 images missing printed 713 problems, 708 of them saying a scene
had no label file although it had one. Sizes then come from ``--sizes`` (``<image> <width>
<height>`` per line), the chips' names (ImgSplit's last chip of a row is flush with the
border), the labels' extent (a lower bound), or the source's own declared sizes (COCO's
``images``, VOC's ``<size>``, a label map's shape).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from convert_helpers import DATA, blank_images, run_cli
from PIL import Image

from ovearth_core.convert import from_coco, from_dota, from_label_maps, from_rsvg
from ovearth_core.errors import OVEarthInputError

SIZES = {f"P{k:04d}": (300 + 10 * k, 200 + 5 * k) for k in range(1, 8)}


def _dota(root: Path, with_images: tuple[str, ...]) -> tuple[Path, Path, Path]:
    labels = root / "labelTxt"
    labels.mkdir(parents=True)
    results = root / "results" / "m"
    results.mkdir(parents=True)
    lines = []
    for k, stem in enumerate(SIZES, start=1):
        (labels / f"{stem}.txt").write_text(
            f"gsd:0.5\n{10 * k} 10 {10 * k + 40} 10 {10 * k + 40} 30 {10 * k} 30 plane 0\n")
        lines.append(f"{stem} 0.{k} {10 * k} 10 {10 * k + 40} 10 {10 * k + 40} 30 {10 * k} 30")
    (results / "Task1_plane.txt").write_text("\n".join(lines) + "\n")
    images = blank_images(root / "images", {f"{s}.png": SIZES[s] for s in with_images})
    return labels, images, results


def _read(bench: Path) -> tuple[object, object]:
    return (json.loads((bench / "ground_truth.json").read_text()),
            json.loads((bench / "predictions" / "m.json").read_text()))


def test_from_dota_with_five_images_missing_converts_numbers_only(tmp_path: Path) -> None:
    """Five of seven images missing, three of them sized by ``--sizes``: exit 0, one warning
    naming the five and the folder, no problem about label files; the ground truth and the
    predictions equal those of the run with every image (the --sizes sizes are exact),
    but for the two sized by their labels' extent (a lower bound, said so)."""
    full = tmp_path / "full"
    labels, images, results = _dota(full, tuple(SIZES))
    from_dota(labels, images, full / "bench", [results])
    part = tmp_path / "part"
    labels, images, results = _dota(part, ("P0001", "P0002"))
    sizes = part / "sizes.txt"
    sizes.write_text("# name width height\nP0003 330 215\nP0004.png,340,220\nP0005 350 225\n")
    proc = run_cli("from-dota", "--labels", str(labels), "--images", str(images), "--results",
                   str(results), "--sizes", str(sizes), "--out", str(part / "bench"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    warning = [line for line in proc.stderr.splitlines() if ": warning: " in line]
    assert len(warning) == 1, proc.stderr
    for stem in ("P0003", "P0004", "P0005", "P0006", "P0007"):
        assert stem in warning[0]
    assert str(images) in warning[0] and "numbers-only" in warning[0]
    assert "--sizes" in warning[0] and "extent" in warning[0]
    assert "label file" not in proc.stderr
    gt_full, pred_full = _read(full / "bench")
    gt_part, pred_part = _read(part / "bench")
    assert pred_part == pred_full
    sized = {a["id"]: (a["width"], a["height"]) for a in gt_part["annotations"]}
    for ann in gt_full["annotations"]:
        stem = ann["image_path"].split("/")[1].split(".")[0]
        if stem in ("P0006", "P0007"):  # the labels' extent: the box's far corner, rounded up
            k = int(stem[1:])
            assert sized[ann["id"]] == (10 * k + 40, 30)
        else:
            assert sized[ann["id"]] == (ann["width"], ann["height"])
    assert sorted(p.name for p in (part / "bench" / "images").iterdir()) == ["P0001.png",
                                                                            "P0002.png"]
    readme = (part / "bench" / "README.md").read_text()
    assert "numbers-only" in readme


def test_from_dota_without_an_images_folder_sizes_scenes_from_their_chips(
        tmp_path: Path) -> None:
    """No --images at all, results on 512-px chips: a 2,000 x 1,500 scene's border chip
    x 1488, y 988 gives its size, (1488 + 512, 988 + 512)."""
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    (labels / "P0001.txt").write_text("10 10 50 10 50 50 10 50 plane 0\n")
    results = tmp_path / "m"
    results.mkdir()
    (results / "Task1_plane.txt").write_text("P0001__1__0___0 0.9 10 10 50 10 50 50 10 50\n"
                                             "P0001__1__1488___988 0.8 1 1 9 1 9 9 1 9\n")
    proc = run_cli("from-dota", "--labels", str(labels), "--results", str(results),
                   "--merge-chips", "--chip-size", "512", "--out", str(tmp_path / "b"),
                   "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "chip names" in proc.stderr and "P0001" in proc.stderr
    gt = json.loads((tmp_path / "b" / "ground_truth.json").read_text())
    assert {(a["width"], a["height"]) for a in gt["annotations"]} == {(2000, 1500)}


def test_a_scene_nothing_sizes_is_one_problem_saying_what_is_missing(tmp_path: Path) -> None:
    labels = tmp_path / "labelTxt"
    labels.mkdir()
    (labels / "P0001.txt").write_text("10 10 50 10 50 50 10 50 plane 0\n")
    (labels / "P0002.txt").write_text("gsd:0.5\n")  # no object, no image, no size
    with pytest.raises(OVEarthInputError) as err:
        from_dota(labels, None, tmp_path / "b")
    assert len(err.value.problems) == 1
    text = str(err.value)
    assert "P0002" in text and "--sizes" in text


@pytest.mark.parametrize(("text", "line", "field"), [
    ("P0001 300\n", 1, "(line)"), ("P0001 0 20\n", 1, "width"), ("# c\nP0001 30 x\n", 2, "height"),
    ("P0001 30 20\nP0001 30 20\n", 2, "image"), ("P0001 3000000000 20\n", 1, "width"),
])
def test_sizes_file_problems(tmp_path: Path, text: str, line: int, field: str) -> None:
    labels, images, _ = _dota(tmp_path, ())
    (tmp_path / "sizes.txt").write_text(text)
    with pytest.raises(OVEarthInputError) as err:
        from_dota(labels, images, tmp_path / "b", sizes=tmp_path / "sizes.txt")
    problem = err.value.problems[0]
    assert (problem.line, problem.field) == (line, field)
    assert "sizes.txt" in problem.file


def _without_images(tmp_path: Path, sample: str, folder: str, names: tuple[str, ...] = ()
                    ) -> Path:
    """A copy of a sample folder without the images ``names`` (all, by default) of its
    images folder ``folder``."""
    root = tmp_path / sample
    shutil.copytree(DATA / sample, root)
    for image in (root / folder).iterdir():
        if not names or image.name in names:
            image.unlink()
    return root


def test_from_coco_without_images_uses_the_declared_sizes(tmp_path: Path) -> None:
    full = tmp_path / "full"
    from_coco(DATA / "coco" / "instances.json", DATA / "coco" / "images", full,
              [DATA / "coco" / "results.json"])
    root = _without_images(tmp_path, "coco", "images")
    summary = from_coco(root / "instances.json", root / "images", tmp_path / "part",
                        [root / "results.json"])
    assert any("numbers-only" in w for w in summary["warnings"])
    assert _same_numbers(full, tmp_path / "part", "results")


def test_from_rsvg_without_images_uses_the_declared_size(tmp_path: Path) -> None:
    full = tmp_path / "full"
    from_rsvg(DATA / "rsvg" / "Annotations", DATA / "rsvg" / "JPEGImages", full,
              [DATA / "rsvg" / "predictions.json"])
    root = _without_images(tmp_path, "rsvg", "JPEGImages", ("00001.jpg",))
    summary = from_rsvg(root / "Annotations", root / "JPEGImages", tmp_path / "part",
                        [root / "predictions.json"])
    assert any("numbers-only" in w and "00001.jpg" in w for w in summary["warnings"])
    assert _same_numbers(full, tmp_path / "part", "predictions")
    # 00002.xml declares no <size>: without its image, one problem saying what is missing.
    (root / "JPEGImages" / "00002.jpg").unlink()
    with pytest.raises(OVEarthInputError) as err:
        from_rsvg(root / "Annotations", root / "JPEGImages", tmp_path / "none")
    assert len(err.value.problems) == 1 and "00002.jpg" in str(err.value)
    assert "<size>" in str(err.value)


def test_from_label_maps_without_images_uses_the_maps_shape(tmp_path: Path) -> None:
    full = tmp_path / "full"
    sample = DATA / "label_maps"
    from_label_maps(sample / "gt", sample / "classes.txt", sample / "images", full,
                    [sample / "pred" / "model_x"])
    summary = from_label_maps(sample / "gt", sample / "classes.txt", None, tmp_path / "part",
                              [sample / "pred" / "model_x"])
    assert any("numbers-only" in w for w in summary["warnings"])
    assert _same_numbers(full, tmp_path / "part", "model_x")


def _same_numbers(full: Path, part: Path, name: str) -> bool:
    gt_a, gt_b = (json.loads((b / "ground_truth.json").read_text()) for b in (full, part))
    for ann in [*gt_a["annotations"], *gt_b["annotations"]]:
        # Without the image its suffix is unknown (a label map names it .png).
        ann["image_path"] = ann["image_path"].rsplit(".", 1)[0]
    pred_a = json.loads((full / "predictions" / f"{name}.json").read_text())
    pred_b = json.loads((part / "predictions" / f"{name}.json").read_text())
    return gt_a == gt_b and pred_a == pred_b


def test_an_unreadable_image_is_still_a_problem(tmp_path: Path) -> None:
    """Missing is numbers-only; present but not an image stays an error."""
    labels, images, _ = _dota(tmp_path, ("P0001",))
    (images / "P0002.png").write_bytes(b"not a png")
    with pytest.raises(OVEarthInputError) as err:
        from_dota(labels, images, tmp_path / "b")
    assert "P0002.png" in str(err.value) and "readable image" in str(err.value)
    Image.new("L", (5, 5)).save(images / "P0002.png")
