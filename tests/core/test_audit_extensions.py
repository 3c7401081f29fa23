"""The audit command takes the extensions beyond the spec like every other command that
evaluates (issue 46's rule, "one option everywhere"): ``--concave-obb`` and
``--large-masks``, off by default (the spec's rule), named in the output when on.

The benchmark is tests/concave_helpers.py's dart: its ground truth holds a concave oriented
box, which the spec refuses; two distinct submissions answer it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from concave_helpers import write_benchmark

from ovearth_core.audit.__main__ import build_parser, main
from ovearth_core.options import EXTENSION_COMMANDS, Options


def _two_submissions(root: Path) -> tuple[Path, list[Path]]:
    gt, pred = write_benchmark(root)
    other = json.loads(pred.read_text())
    other["tasks"]["open_vocabulary"][0]["oriented_bbox"][0]["score"] = 0.7
    second = pred.with_name("other.json")
    second.write_text(json.dumps(other))
    return gt, [pred, second]


def test_concave_boxes_are_refused_by_default_and_taken_with_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt, preds = _two_submissions(tmp_path)
    args = ["--gt", str(gt), "--predictions", *map(str, preds), "--modality",
            "oriented_bbox", "--min-score", "0"]
    out = tmp_path / "audit.json"
    assert main([*args, "--out", str(out)]) == 2
    said = capsys.readouterr().err
    assert "annotations[0].oriented_bbox[0]" in said and "convex" in said
    assert "--concave-obb of " + EXTENSION_COMMANDS in said
    assert not out.exists()

    assert main([*args, "--concave-obb", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["concave_obb"] is True and "large_masks" not in result
    assert result["modality"] == "oriented_bbox"


def _scene_mask(side: int, y0: int, y1: int, x0: int, x1: int) -> dict:
    """A ``side`` x ``side`` COCO RLE of the rectangle rows [y0, y1), columns [x0, x1)."""
    runs, at = [], 0
    for x in range(x0, x1):
        lo, hi = x * side + y0, x * side + y1
        runs += [lo - at, hi - lo]
        at = hi
    return {"size": [side, side], "counts": [*runs, side * side - at]}


def test_large_masks_are_refused_by_default_and_taken_with_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    side = 10_001  # 100,020,001 pixels: over the spec's 100,000,000 for a prediction
    gt = {"annotations": [{"id": "a1", "image_path": "big.tif", "width": side, "height": side,
                           "category_name": "ship",
                           "segmentation": _scene_mask(side, 10, 50, 20, 60)}],
          "tasks": {"open_vocabulary": [{"query_id": "q1", "ann_id": "a1",
                                         "type": "positive", "phrase": "ship"}],
                    "referring": [], "reasoning": []}}
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    preds = []
    for name, y0 in (("a", 10), ("b", 20)):
        doc = {"tasks": {"open_vocabulary": [
            {"query_id": "q1", "segmentation": _scene_mask(side, y0, 50, 20, 60)}]}}
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
        preds.append(str(tmp_path / f"{name}.json"))
    args = ["--gt", str(tmp_path / "gt.json"), "--predictions", *preds,
            "--modality", "segmentation", "--min-score", "0"]
    out = tmp_path / "audit.json"
    assert main([*args, "--out", str(out)]) == 2
    said = capsys.readouterr().err
    assert "--large-masks of " + EXTENSION_COMMANDS in said
    assert not out.exists()

    assert main([*args, "--large-masks", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["large_masks"] is True and "concave_obb" not in result
    parsed = build_parser().parse_args(["--gt", "g", "--predictions", "a", "b"])
    assert Options.from_args(parsed, modalities=("segmentation",)).large_masks is False


def test_the_audit_is_one_of_the_commands_a_message_names() -> None:
    assert "audit" in EXTENSION_COMMANDS
