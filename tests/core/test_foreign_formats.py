"""The evaluator given a COCO, DOTA or VOC file names the converter to use (issue 34, item 11).

Reported: a COCO instances file given as ``--gt`` gave 1,567 field errors and no word of
``from-coco``. Now such a file is one problem: what it looks like and the command that
converts it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "convert"
OVEARTH_GT = ROOT / "assets" / "demo" / "ground_truth.json"


def _evaluate(gt: Path, pred: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ovearth_core", "--gt", str(gt),
                           "--predictions", str(pred), "--modalities", "bbox",
                           "--output", str(tmp_path / "out.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def _problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.lstrip().startswith("- ")]


@pytest.mark.parametrize(("source", "role", "command"), [
    (DATA / "coco" / "instances.json", "gt", "from-coco --instances"),
    (DATA / "coco" / "results.json", "pred", "from-coco"),
    (DATA / "dota" / "labelTxt" / "P0001.txt", "gt", "from-dota --labels"),
    (DATA / "dota" / "results" / "model_a" / "Task1_plane.txt", "pred", "from-dota --results"),
    (DATA / "rsvg" / "Annotations" / "00001.xml", "gt", "from-rsvg"),
    ("voc", "gt", "from-voc --annotations"),
])
def test_a_foreign_file_is_one_problem_naming_the_converter(
        tmp_path: Path, source: Path | str, role: str, command: str) -> None:
    if source == "voc":
        source = tmp_path / "000001.xml"
        source.write_text("<annotation><filename>000001.jpg</filename><object><name>dog"
                          "</name><difficult>0</difficult><bndbox><xmin>1</xmin><ymin>2</ymin>"
                          "<xmax>9</xmax><ymax>8</ymax></bndbox></object></annotation>")
    assert isinstance(source, Path) and source.exists()
    pred = tmp_path / "empty.json"
    pred.write_text(json.dumps({"tasks": {}}))
    gt, pred = (source, pred) if role == "gt" else (OVEARTH_GT, source)
    proc = _evaluate(gt, pred, tmp_path)
    assert proc.returncode == 2, proc.stderr
    problems = _problems(proc.stderr)
    assert len(problems) == 1, proc.stderr
    assert f"python -m ovearth_core.convert {command}" in problems[0]
    assert source.name in problems[0]
    assert "Traceback" not in proc.stderr


def test_an_ovearth_file_with_problems_gets_no_converter_hint(tmp_path: Path) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"annotations": [{"id": "a"}], "tasks": {}}))
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps({"tasks": {}}))
    proc = _evaluate(gt, pred, tmp_path)
    assert proc.returncode == 2 and "ovearth_core.convert" not in proc.stderr
