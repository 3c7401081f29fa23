"""Every output path of every command is checked against every file the command reads
(issue 35, item 1): the images and scenes included, not only ``--gt`` and ``--predictions``.
An output that is one of them, a symbolic link to one or a hard link to one is refused
(exit status 2, a message naming the file) and the file keeps its bytes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin
from report_fixtures import build_dataset

from ovearth_core.analysis.__main__ import main as analysis_main
from ovearth_core.analysis.export import main as export_main
from ovearth_core.report.cli import main as report_main


def _geo_dataset(root: Path) -> tuple[Path, Path, Path]:
    """One annotation on the GeoTIFF ``images/1.tif`` (80 x 64, UTM 33N); gt and predictions."""
    (root / "images").mkdir(parents=True)
    scene = root / "images" / "1.tif"
    with rasterio.open(scene, "w", driver="GTiff", width=80, height=64, count=1,
                       dtype="uint8", crs="EPSG:32633",
                       transform=from_origin(500_000.0, 4_000_000.0, 1.0, 1.0)) as dst:
        dst.write(np.full((1, 64, 80), 7, np.uint8))
    gt = {"annotations": [{"id": "a", "image_path": "images/1.tif", "width": 80, "height": 64,
                           "category_name": "car", "segmentation": None,
                           "bbox": [[10, 10, 20, 20]]}],
          "tasks": {"open_vocabulary": [{"query_id": "q", "ann_id": "a", "type": "positive",
                                         "phrase": "car"}]}}
    pred = {"tasks": {"open_vocabulary": [
        {"query_id": "q", "bbox": [{"bbox": [10, 10, 30, 30], "score": 0.9}]}]}}
    (root / "gt.json").write_text(json.dumps(gt))
    (root / "pred.json").write_text(json.dumps(pred))
    return root / "gt.json", root / "pred.json", scene


Runner = Callable[[Path], int]  # the command with this output path; its exit status


def _export(root: Path) -> Runner:
    gt, pred, _ = _geo_dataset(root)
    return lambda out: export_main(["geojson", "--gt", str(gt), "--predictions", str(pred),
                                    "--task", "vocabulary", "--out", str(out)])


def _analysis_gsd(root: Path) -> Runner:
    gt, pred, _ = _geo_dataset(root)
    return lambda out: analysis_main(["--gt", str(gt), "--predictions", str(pred),
                                      "--modalities", "bbox", "--slice-by", "gsd",
                                      "--slice-resamples", "50", "--output", str(out)])


def _report(root: Path) -> Runner:
    ds = build_dataset(root, n_annotations=3)
    return lambda out: report_main(["--gt", str(ds.gt), "--predictions", str(ds.pred_a),
                                    "--out", str(out), "--no-cache",
                                    "--modalities", "bbox", "--resamples", "1000",
                                    "--ap-resamples", "100"])


def _analysis_taxonomy(root: Path) -> Runner:
    gt, pred, _ = _geo_dataset(root)
    (root / "taxonomy.json").write_text(json.dumps({"car": "vehicle"}))
    return lambda out: analysis_main(["--gt", str(gt), "--predictions", str(pred),
                                      "--modalities", "bbox", "--slice-by", "group",
                                      "--slice-resamples", "50", "--taxonomy",
                                      str(root / "taxonomy.json"), "--output", str(out)])


# (command on a dataset it writes, a file it reads besides --gt / --predictions)
CASES: dict[str, tuple[Callable[[Path], Runner], str]] = {
    "export geojson: the scene": (_export, "images/1.tif"),
    "analysis --slice-by gsd: the scene": (_analysis_gsd, "images/1.tif"),
    "report: an image it draws": (_report, "images/img_1.png"),
    "analysis --slice-by group: the taxonomy": (_analysis_taxonomy, "taxonomy.json"),
}
HOW = ("itself", "symlink", "hardlink")


def _out(root: Path, read: str, how: str) -> Path:
    target = root / read
    if how == "itself":
        return target
    link = root / "out.json"
    if how == "symlink":
        link.symlink_to(target)
    else:
        os.link(target, link)
    return link


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("case", sorted(CASES))
def test_an_output_onto_a_file_the_command_reads_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, how: str) -> None:
    setup, read = CASES[case]
    run = setup(tmp_path)
    assert run(tmp_path / "fine.json") == 0, capsys.readouterr().err  # the command works
    before = (tmp_path / read).read_bytes()
    out = _out(tmp_path, read, how)
    capsys.readouterr()
    status = run(out)
    err = capsys.readouterr().err
    assert status == 2, err
    assert "cannot write" in err and read.rsplit("/", 1)[-1] in err, err
    assert "Traceback" not in err
    assert (tmp_path / read).read_bytes() == before
