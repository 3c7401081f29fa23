"""from-coco and a predicted mask beyond the spec's 100,000,000 pixels (issue 46, item 2).

At c100000 the command refused a 104.9-megapixel result mask with the spec's cap and the
hint ``--large-masks``, a flag ``from-coco`` does not take. A converter carries its sources'
geometry as it is: the mask is converted, and the command says that the benchmark needs
``--large-masks`` (a warning naming the commands that take it, and the folder's README);
the evaluator's loader then refuses the prediction without the option and scores it with it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import refs
from convert_helpers import run_cli

from ovearth_core.errors import OVEarthInputError
from ovearth_core.io import load_samples

H = W = 10_240  # 104,857,600 pixels: over the spec's cap


def _runs(x0: int, x1: int, y0: int, y1: int) -> list[int]:
    """Column-major runs (background first) of the rectangle cols x0..x1, rows y0..y1."""
    runs, at = [], 0
    for x in range(x0, x1):
        runs += [x * H + y0 - at, y1 - y0]
        at = x * H + y1
    return [*runs, H * W - at]


def test_from_coco_converts_a_scene_size_mask_and_names_the_flag(tmp_path: Path) -> None:
    gt = {"images": [{"id": 1, "file_name": "scene.tif", "width": W, "height": H}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 20, 40, 30],
                           "area": 1200, "iscrowd": 0}],
          "categories": [{"id": 1, "name": "ship"}]}
    rle = {"size": [H, W], "counts": refs.encode_runs_string(_runs(10, 50, 20, 50))}
    res = [{"image_id": 1, "category_id": 1, "segmentation": rle, "score": 0.9}]
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(res))
    out = tmp_path / "bench"
    done = run_cli("from-coco", "--instances", str(tmp_path / "gt.json"), "--results",
                   str(tmp_path / "res.json"), "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "--large-masks" in line]
    assert len(said) == 1 and "1 predicted masks beyond the spec's 100,000,000 pixels" in said[0]
    assert "of the analysis, report, suite, leaderboard, audit and hosting commands" in said[0]
    assert "--large-masks of the analysis" in (out / "README.md").read_text()
    gt_path, pred = out / "ground_truth.json", out / "predictions" / "res.json"
    with pytest.raises(OVEarthInputError, match="the spec's cap on a predicted mask"):
        load_samples(gt_path, pred, "vocabulary", modalities="segmentation")
    samples = load_samples(gt_path, pred, "vocabulary", modalities="segmentation",
                           large_masks=True)
    assert [s.pred_mask is not None for s in samples] == [True]
