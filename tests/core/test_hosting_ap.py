"""Average precision columns of a hosted leaderboard (issue 50): a bundle whose
``scoring.json`` asks for AP, NMS-AP and AI-TOD gets them in ``scores.json``, each equal to
what the analysis command (a separate process) writes for the same files and options; a
``scoring.json`` written before these options existed reads them as off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from ovearth_core.hosting.config import HostingConfig
from ovearth_core.options import COCO_MAX_DETECTIONS, Options
from tests.hosting_helpers import GT, PREDICTIONS, ROOT, hosting, lay_out, run_worker

STRONG = PREDICTIONS / "strong_localiser.json"
# Column metric -> (modality, block, key) of the analysis JSON's average_precision, written
# out here.
AP_PATHS = {"bbox_coco_map": ("bbox", "coco", "map@[0.5:0.95]"),
            "bbox_nms_map": ("bbox", "coco", "nms_map@[0.5:0.95]"),
            "bbox_aitod_map": ("bbox", "aitod", "map@[0.5:0.95]"),
            "oriented_bbox_nms_map": ("oriented_bbox", "coco", "nms_map@[0.5:0.95]"),
            "oriented_bbox_aitod_map": ("oriented_bbox", "aitod", "map@[0.5:0.95]")}


def _analysis(pred: Path, *flags: str) -> dict:
    """``python -m ovearth_core.analysis`` on the same files: the AP a platform must show."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "ovearth_core.analysis", "--gt", str(GT),
                          "--predictions", str(pred), "--task", "vocabulary", "--modalities",
                          "bbox,oriented_bbox", *flags], cwd=ROOT, capture_output=True,
                         text=True, env=env, check=True, timeout=600).stdout
    return json.loads(out)["analysis"]["average_precision"]


@pytest.fixture(scope="module")
def ap_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "ap.zip"
    hosting("codabench", "--gt", str(GT), "--out", str(out), "--task", "vocabulary",
            "--modalities", "bbox,oriented_bbox", "--hard-negatives", "--nms-ap", "--aitod",
            "--max-detections", "50")
    return out


def test_protocol_columns_are_the_analysis_commands_numbers(ap_bundle: Path,
                                                            tmp_path: Path) -> None:
    with zipfile.ZipFile(ap_bundle) as z:
        columns = yaml.safe_load(z.read("competition.yaml"))["leaderboards"][0]["columns"]
        with zipfile.ZipFile(z.open("scoring_program.zip")) as program:
            config = json.loads(program.read("scoring.json"))
    assert (config["hard_negatives"], config["nms_ap"], config["aitod"],
            config["max_detections"]) == (True, True, True, 50)
    keys = [c["key"] for c in columns]
    for metric in ("bbox_nms_map", "bbox_aitod_map", "oriented_bbox_nms_map",
                   "oriented_bbox_aitod_map"):
        assert f"open_vocabulary_{metric}" in keys
    root = lay_out(ap_bundle, tmp_path, {"predictions.json": STRONG.read_bytes()})
    run = run_worker(root)
    assert run.returncode == 0, run.stderr
    scores = json.loads((root / "output" / "scores.json").read_text())
    ap = _analysis(STRONG, "--hard-negatives", "--nms-ap", "--aitod", "--max-detections", "50")
    for key in keys:
        metric = key.removeprefix("open_vocabulary_")
        if metric in AP_PATHS:
            modality, block, name = AP_PATHS[metric]
            assert scores[key] == ap[modality][block][name], key
    # NMS-AP moves the number on the demo: the columns are not COCO's mAP again
    assert scores["open_vocabulary_bbox_nms_map"] != ap["bbox"]["coco"]["map@[0.5:0.95]"]


def test_named_ap_column_without_its_protocol_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "b.zip"
    run = hosting("codabench", "--gt", str(GT), "--out", str(out), "--task", "vocabulary",
                  "--modalities", "bbox", "--columns", "bbox_micro_f1,bbox_nms_map",
                  "--hard-negatives", check=False)
    assert run.returncode == 2 and "need their protocol on" in run.stderr
    assert "Traceback" not in run.stderr and not out.exists()
    run = hosting("codabench", "--gt", str(GT), "--out", str(out), "--task", "vocabulary",
                  "--modalities", "bbox", "--nms-ap", check=False)
    assert run.returncode == 2 and "--nms-ap needs --hard-negatives" in run.stderr
    assert not out.exists()


def test_an_older_scoring_json_reads_the_ap_options_as_off() -> None:
    older = {"tasks": ["vocabulary"], "modalities": ["bbox"], "iou_threshold": 0.5,
             "score_threshold": None, "bbox_format": "xyxy",
             "columns": [{"key": "open_vocabulary_bbox_micro_f1", "task": "vocabulary",
                          "metric": "bbox_micro_f1"}],
             "limits": {"max_mb": 200.0, "time_limit_s": 540.0, "max_boxes": 1000},
             "gallery": 0, "splits": {"test": "test_split"}}
    o = HostingConfig.from_json(older).options
    assert (o.hard_negatives, o.nms_ap, o.aitod, o.max_detections) == (
        False, False, False, COCO_MAX_DETECTIONS)
    config = HostingConfig(("vocabulary",), Options("vocabulary", "bbox", hard_negatives=True,
                                                    nms_ap=True, max_detections=30))
    assert HostingConfig.from_json(config.to_json()) == config
    with pytest.raises(TypeError, match="nms_ap: expected true or false"):
        HostingConfig.from_json({**older, "nms_ap": "yes"})


def test_the_scorer_loads_no_ap_code_until_a_column_needs_it() -> None:
    """A bundle without AP columns starts as before: importing the scorer (and its column
    names, ``labels.AP_RANKED``) imports no AP, ranks or standings module; they load when an
    AP column is scored."""
    import subprocess
    import sys

    heavy = [f"ovearth_core.analysis.{m}" for m in (
        "ap", "ap_bootstrap", "aitod", "nms_ap", "coco", "standings", "rank_stats")]
    code = ("import sys, ovearth_core.hosting.scorer; "
            f"print(sorted(m for m in sys.modules if m in {heavy!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "[]"
