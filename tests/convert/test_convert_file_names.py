"""File names that are not valid UTF-8 (issue 48): a Latin-1 ``café.xml`` listed from a
folder became a str with a surrogate, and the writer crashed (``TypeError: str is not valid
UTF-8``). Every converter that lists a folder refuses such a name, naming the file (its
bytes shown as ``\\xe9``): exit 2, nothing written, no traceback."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from convert_helpers import DATA, blank_images, run_cli

LATIN1 = "caf\udce9"  # b"caf\xe9" as os.listdir gives it: the file system's bytes
SHOWN = "caf\\xe9"
SIZE = "<size><width>20</width><height>20</height></size>"
OBJ = ("<object><name>ship</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5"
       "</ymax></bndbox><description>a ship</description></object>")


def _xml_folder(root: Path) -> Path:
    ann = root / "Annotations"
    ann.mkdir(parents=True)
    (ann / "good.xml").write_text(f"<annotation>{SIZE}{OBJ}</annotation>")
    return ann


def _voc_xml(root: Path) -> list[str]:
    ann = _xml_folder(root)
    (ann / f"{LATIN1}.xml").write_text(f"<annotation>{SIZE}{OBJ}</annotation>")
    return ["from-voc", "--annotations", str(ann)]


def _voc_image(root: Path) -> list[str]:
    ann = _xml_folder(root)
    images = blank_images(root / "images", {"good.jpg": (20, 20)})
    shutil.copy(images / "good.jpg", images / f"{LATIN1}.jpg")
    return ["from-voc", "--annotations", str(ann), "--images", str(images)]


def _voc_results(root: Path) -> list[str]:
    ann = _xml_folder(root)
    res = root / "model"
    res.mkdir()
    (res / f"{LATIN1}_ship.txt").write_text("good 0.5 1 1 5 5\n")
    return ["from-voc", "--annotations", str(ann), "--results", str(res)]


def _rsvg_xml(root: Path) -> list[str]:
    ann = _xml_folder(root)
    (ann / f"{LATIN1}.xml").write_text(f"<annotation>{SIZE}{OBJ}</annotation>")
    return ["from-rsvg", "--annotations", str(ann)]


def _dota(root: Path, where: str) -> list[str]:
    labels = root / "labelTxt"
    shutil.copytree(DATA / "dota" / "labelTxt", labels)
    images = root / "images"
    shutil.copytree(DATA / "dota" / "images", images)
    results = root / "results" / "model_a"
    shutil.copytree(DATA / "dota" / "results" / "model_a", results)
    if where == "label":
        shutil.copy(labels / "P0001.txt", labels / f"{LATIN1}.txt")
    elif where == "task1":
        (results / f"Task1_{LATIN1}.txt").write_text("P0001 0.5 1 1 5 1 5 5 1 5\n")
    elif where == "task2":
        (results / f"Task2_{LATIN1}.txt").write_text("P0001 0.5 1 1 5 5\n")
    elif where == "image":
        shutil.copy(images / "P0001.png", images / f"{LATIN1}.png")
    return ["from-dota", "--labels", str(labels), "--images", str(images), "--results",
            str(results)]


def _label_maps(root: Path) -> list[str]:
    sample = DATA / "label_maps"
    gt = root / "gt"
    shutil.copytree(sample / "gt", gt)
    shutil.copy(gt / "tile_a.png", gt / f"{LATIN1}.png")
    return ["from-label-maps", "--gt", str(gt), "--classes", str(sample / "classes.txt")]


CASES = {
    "voc xml": _voc_xml, "voc image": _voc_image, "voc results": _voc_results,
    "rsvg xml": _rsvg_xml, "dota label": lambda r: _dota(r, "label"),
    "dota task1": lambda r: _dota(r, "task1"), "dota task2": lambda r: _dota(r, "task2"),
    "dota image": lambda r: _dota(r, "image"),
    "label maps": _label_maps,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_name_that_is_not_utf8_is_refused(tmp_path: Path, case: str) -> None:
    try:
        (tmp_path / f"{LATIN1}.probe").write_text("")
    except (UnicodeEncodeError, OSError):
        pytest.skip("the file system takes only UTF-8 names")
    os.remove(tmp_path / f"{LATIN1}.probe")
    args = CASES[case](tmp_path)
    out = tmp_path / "b"
    proc = run_cli(*args, "--out", str(out), "--quiet")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "TypeError" not in proc.stderr
    assert SHOWN in proc.stderr and "valid UTF-8" in proc.stderr, proc.stderr
    assert "(file name)" in proc.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp


def test_a_results_folder_whose_name_is_not_utf8_is_refused(tmp_path: Path) -> None:
    """The submission is named after the folder: the name is refused as an option."""
    args = _dota(tmp_path, "")
    odd = tmp_path / "results" / LATIN1
    os.rename(args[-1], odd)
    args[-1] = str(odd)
    proc = run_cli(*args, "--out", str(tmp_path / "b"), "--quiet")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "--results" in proc.stderr and SHOWN in proc.stderr
    assert not (tmp_path / "b").exists()
