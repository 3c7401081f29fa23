"""Codabench: the bundle's scoring program run exactly as a compute worker lays it out, on the
demo's submissions and on bad ones (issue 40).

Good submissions: ``output/scores.json`` holds every leaderboard column, each equal to the
number ``python -m ovearth_core`` prints for the same files (run as a separate process), and
``output/detailed_results.html`` is the HTML report. Bad ones (malformed, a wrong field,
oversized, too slow, the wrong task, too many boxes, no or two JSON files): exit status 2,
one message naming the file, query_id, field, what was expected and what was found, no
traceback, and nothing in ``output/``.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.hosting_helpers import (
    GT,
    PREDICTIONS,
    cli_value,
    edit_config,
    evaluator_cli,
    hosting,
    lay_out,
    run_worker,
)

TASKS = {"vocabulary": "open_vocabulary", "referring": "referring", "reasoning": "reasoning"}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "bundle.zip"
    hosting("codabench", "--gt", str(GT), "--out", str(out))
    return out


@pytest.fixture(scope="module")
def referring_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "referring.zip"
    hosting("codabench", "--gt", str(GT), "--out", str(out), "--task", "referring",
            "--modalities", "bbox")
    return out


def _columns(bundle: Path) -> list[dict]:
    with zipfile.ZipFile(bundle) as z:
        return yaml.safe_load(z.read("competition.yaml"))["leaderboards"][0]["columns"]


@pytest.mark.parametrize("name", ["strong_localiser", "box_detector"])
def test_scores_equal_the_evaluator_cli(bundle: Path, tmp_path: Path, name: str) -> None:
    pred = PREDICTIONS / f"{name}.json"
    root = lay_out(bundle, tmp_path, {"predictions.json": pred.read_bytes()})
    run = run_worker(root)
    assert run.returncode == 0, run.stderr
    scores = json.loads((root / "output" / "scores.json").read_text())
    keys = [c["key"] for c in _columns(bundle)]
    assert list(scores) == keys  # every column, in the leaderboard's order
    runs: dict = {}  # one CLI run per task
    for key in keys:
        assert scores[key] == cli_value(key, pred, runs), key
    html = (root / "output" / "detailed_results.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "Open vocabulary" in html
    # No gallery by default: a drawn query would show the hidden ground truth's geometry.
    assert "worst queries" not in html
    assert "Traceback" not in run.stderr


def test_an_undefined_metric_is_left_out_not_zero(bundle: Path, tmp_path: Path) -> None:
    # The starting kit answers nothing: no query is predicted present, so the MCC's margin is
    # empty and the evaluator reports null. Codabench cannot store a null; the cell stays empty.
    with zipfile.ZipFile(bundle) as z, zipfile.ZipFile(z.open("starting_kit.zip")) as kit:
        sample = kit.read("predictions.json")
    root = lay_out(bundle, tmp_path, {"predictions.json": sample})
    run = run_worker(root)
    assert run.returncode == 0, run.stderr
    scores = json.loads((root / "output" / "scores.json").read_text())
    pred = tmp_path / "sample.json"
    pred.write_bytes(sample)
    assert evaluator_cli(pred, "vocabulary")["summary"]["presence"]["mcc"] is None
    assert "open_vocabulary_presence_mcc" not in scores
    assert "open_vocabulary_presence_mcc is undefined" in run.stderr
    assert scores["open_vocabulary_seg_macro_miou"] == 0.0


def _break(pred: dict, task: str = "open_vocabulary", **row: object) -> bytes:
    rows = pred["tasks"][task]
    rows[0] = {**rows[0], **row}
    return json.dumps(pred).encode()


def _demo() -> dict:
    return json.loads((PREDICTIONS / "strong_localiser.json").read_bytes())


def _first_id(task: str = "open_vocabulary") -> str:
    return _demo()["tasks"][task][0]["query_id"]


BAD = {
    "malformed": ({"predictions.json": b'{"tasks": {"open_vocabulary": [{"query_id": '}, {},
                  ["predictions.json", "field (document)", "expected valid UTF-8 JSON"]),
    "wrong_field": ({"predictions.json": _break(_demo(), bbox=[[10, 10, 5, 20]])}, {},
                    ["predictions.json", f"query_id {_first_id()}", "bbox",
                     "expected", "found"]),
    "oversized": ({"predictions.json": (PREDICTIONS / "strong_localiser.json").read_bytes()},
                  {"max_mb": 0.1},
                  ["predictions.json", "field (file size): expected a file of at most 0.1 MB "
                   "(this competition's limit), found 0.5 MB (516,626 bytes)"]),
    "too_slow": ({"predictions.json": (PREDICTIONS / "strong_localiser.json").read_bytes()},
                 {"time_limit_s": 0.001},
                 ["predictions.json", "field (scoring time): expected scoring within 0.001 s "
                  "(this competition's time limit), found still running after 0.001 s"]),
    "too_many_boxes": ({"predictions.json": _break(_demo(), bbox=[[1, 1, 5, 5]] * 4)},
                       {"max_boxes": 3},
                       [f"query_id {_first_id()}", "field bbox: expected at most 3 boxes per "
                        "query (this competition's limit), found 4 boxes"]),
    "no_json": ({"readme.txt": b"hello"}, {},
                ["field (submission): expected one prediction JSON file",
                 "no .json file (the zip holds: readme.txt)"]),
    "two_json": ({"a.json": b"{}", "b.json": b"{}"}, {},
                 ["2 .json files: a.json, b.json"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_submission_gets_one_message_and_no_scores(bundle: Path, tmp_path: Path,
                                                         case: str) -> None:
    files, limits, wanted = BAD[case]
    root = lay_out(bundle, tmp_path, files)
    if limits:
        edit_config(root, **limits)
    run = run_worker(root)
    assert run.returncode == 2, run.stderr
    assert "submission rejected; no scores written" in run.stderr
    for text in wanted:
        assert text in run.stderr, (text, run.stderr)
    assert "Traceback" not in run.stderr
    assert list((root / "output").iterdir()) == []


def test_a_submission_for_the_wrong_task_is_rejected(referring_bundle: Path,
                                                     tmp_path: Path) -> None:
    pred = _demo()
    del pred["tasks"]["referring"]
    root = lay_out(referring_bundle, tmp_path, {"predictions.json": json.dumps(pred).encode()})
    run = run_worker(root)
    assert run.returncode == 2
    assert ("field tasks: expected prediction rows under tasks.referring (the tasks this "
            "competition scores), found rows only under tasks.open_vocabulary, "
            "tasks.reasoning") in run.stderr
    assert list((root / "output").iterdir()) == []


def test_rows_of_another_task_under_the_scored_one_are_rejected(referring_bundle: Path,
                                                                tmp_path: Path) -> None:
    pred = _demo()
    pred["tasks"]["referring"] = pred["tasks"]["open_vocabulary"]
    root = lay_out(referring_bundle, tmp_path, {"predictions.json": json.dumps(pred).encode()})
    run = run_worker(root)
    assert run.returncode == 2
    assert f"query_id {_first_id()}" in run.stderr and "Traceback" not in run.stderr
    assert list((root / "output").iterdir()) == []


def test_a_zipped_folder_is_found_and_one_task_scores_as_the_cli(referring_bundle: Path,
                                                                 tmp_path: Path) -> None:
    pred = PREDICTIONS / "strong_localiser.json"
    root = lay_out(referring_bundle, tmp_path, {"my_run/preds.json": pred.read_bytes()})
    run = run_worker(root)
    assert run.returncode == 0, run.stderr
    scores = json.loads((root / "output" / "scores.json").read_text())
    cli = evaluator_cli(pred, "referring", modalities="bbox")
    assert scores == {"referring_bbox_micro_f1": cli["summary"]["bbox"]["positive_micro_f1"]}


def test_the_options_reach_the_bundle(tmp_path: Path) -> None:
    out = tmp_path / "b.zip"
    hosting("codabench", "--gt", str(GT), "--out", str(out), "--task", "vocabulary",
            "--modalities", "segmentation", "--columns", "seg_micro_miou,presence_mcc",
            "--max-mb", "5", "--time-limit", "100", "--max-boxes", "7", "--title", "T",
            "--phase", "Dev,2026-01-01,2026-02-01", "--phase", "Final,2026-02-01 12:00",
            "--docker-image", "me/img:1")
    with zipfile.ZipFile(out) as z:
        doc = yaml.safe_load(z.read("competition.yaml"))
        with zipfile.ZipFile(z.open("scoring_program.zip")) as program:
            config = json.loads(program.read("scoring.json"))
    assert doc["title"] == "T" and doc["docker_image"] == "me/img:1"
    assert [(p["name"], p["start"], p.get("end"), p["execution_time_limit"])
            for p in doc["phases"]] == [("Dev", "2026-01-01 00:00:00", "2026-02-01 00:00:00", 160),
                                        ("Final", "2026-02-01 12:00:00", None, 160)]
    assert [c["key"] for c in doc["leaderboards"][0]["columns"]] == [
        "open_vocabulary_seg_micro_miou", "open_vocabulary_presence_mcc"]
    assert config["limits"] == {"max_mb": 5.0, "time_limit_s": 100.0, "max_boxes": 7}
    assert config["modalities"] == ["segmentation"] and config["tasks"] == ["vocabulary"]


@pytest.mark.parametrize(("args", "message"), [
    (["--modalities", "auto"], "auto is refused"),
    (["--columns", "nonsense"], "unknown metric nonsense"),
    (["--task", "referring", "--columns", "presence_mcc"], "applies to none of the tasks"),
    (["--phase", "A,2026-01-01", "--phase", "B,2026-02-01"], "phase A needs an end"),
    # The limits are read by the one bounded parser: no infinite size, no NaN seconds.
    (["--max-mb", "inf"], "--max-mb: expected a number above 0 and at most 1.04858e+06"),
    (["--time-limit", "nan"], "--time-limit: expected a number above 0"),
    (["--max-boxes", "0"], "--max-boxes: expected a whole number from 1"),
])
def test_bad_options_are_refused_before_writing(tmp_path: Path, args: list[str],
                                                message: str) -> None:
    out = tmp_path / "b.zip"
    result = hosting("codabench", "--gt", str(GT), "--out", str(out), *args, check=False)
    assert result.returncode == 2 and message in result.stderr
    assert not out.exists()


def test_a_rejected_starting_kit_writes_no_bundle(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": {"open_vocabulary": [{"query_id": "nope"}]}}')
    out = tmp_path / "b.zip"
    result = hosting("codabench", "--gt", str(GT), "--out", str(out), "--sample", str(bad),
                     check=False)
    assert result.returncode == 2 and "starting kit" in result.stderr and "nope" in result.stderr
    assert not out.exists()


def test_the_bundle_is_reproducible_and_carries_this_code(bundle: Path, tmp_path: Path) -> None:
    once, again = tmp_path / "once.zip", tmp_path / "again.zip"
    for out in (once, again):
        hosting("codabench", "--gt", str(GT), "--out", str(out), "--phase", "Test,2026-01-01")
    assert once.read_bytes() == again.read_bytes()
    root = Path(__file__).resolve().parents[2]
    with zipfile.ZipFile(bundle) as z, zipfile.ZipFile(z.open("scoring_program.zip")) as p:
        assert p.read("ovearth_core/hosting/scorer.py") == (
            root / "ovearth_core" / "hosting" / "scorer.py").read_bytes()
        assert "__pycache__" not in " ".join(p.namelist())



def test_a_gallery_carries_the_images_and_draws_the_worst_queries(tmp_path: Path) -> None:
    out = tmp_path / "b.zip"
    hosting("codabench", "--gt", str(GT), "--out", str(out), "--task", "referring",
            "--gallery", "2")
    with zipfile.ZipFile(out) as z, zipfile.ZipFile(z.open("reference_data.zip")) as ref:
        names = set(ref.namelist())
    referenced = {a["image_path"] for a in json.loads(GT.read_text())["annotations"]}
    assert names == {"ground_truth.json", *referenced}
    root = lay_out(out, tmp_path / "w", {"predictions.json":
                                         (PREDICTIONS / "strong_localiser.json").read_bytes()})
    run = run_worker(root)
    assert run.returncode == 0, run.stderr
    html = (root / "output" / "detailed_results.html").read_text()
    assert "The 2 worst queries of submission" in html and "blank canvas" not in html


@pytest.mark.parametrize("ref", [b"{not json", None])
def test_broken_reference_data_is_the_bundles_fault(bundle: Path, tmp_path: Path,
                                                    ref: bytes | None) -> None:
    root = lay_out(bundle, tmp_path, {"predictions.json":
                                      (PREDICTIONS / "strong_localiser.json").read_bytes()})
    gt = root / "input" / "ref" / "ground_truth.json"
    if ref is None:
        gt.unlink()
    else:
        gt.write_bytes(ref)
    run = run_worker(root)
    assert run.returncode == 1
    assert "misconfigured (not the submission's fault)" in run.stderr
    assert "submission rejected" not in run.stderr and "Traceback" not in run.stderr
    assert list((root / "output").iterdir()) == []


def test_a_macos_zip_with_resource_forks_finds_the_one_prediction_file(tmp_path: Path) -> None:
    from ovearth_core.hosting.scorer import find_submission

    for name in ("run/predictions.json", "__MACOSX/run/._predictions.json",
                 "run/.hidden.json", "run/notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert find_submission(tmp_path) == tmp_path / "run" / "predictions.json"


@pytest.mark.parametrize("large", [False, True])
def test_the_spec_mask_cap_and_large_masks_reach_the_scorer(tmp_path: Path, large: bool) -> None:
    """A bundle keeps the spec's 100,000,000-pixel cap on predicted masks unless written
    with --large-masks (scoring.json's large_masks): the worker then scores the mask as the
    evaluator does (IoU 1/3 by pycocotools on the RLEs, tests/core/test_spec_mask_cap.py)."""
    from mask_cap_helpers import write_benchmark

    gt, pred = write_benchmark(tmp_path)
    out = tmp_path / "bundle.zip"
    hosting("codabench", "--gt", str(gt), "--out", str(out), "--task", "vocabulary",
            "--modalities", "segmentation", *(["--large-masks"] if large else []))
    root = lay_out(out, tmp_path / "worker", {"pred.json": pred.read_bytes()})
    assert json.loads((root / "program" / "scoring.json").read_text())["large_masks"] is large
    done = run_worker(root)
    if not large:
        assert done.returncode == 2, done.stderr
        assert "the spec's cap on a predicted mask" in done.stderr + done.stdout
        assert not (root / "output" / "scores.json").exists()
        return
    assert done.returncode == 0, done.stderr
    scores = json.loads((root / "output" / "scores.json").read_text())
    miou = [v for k, v in scores.items() if "miou" in k.lower()]
    assert miou and all(v == pytest.approx(1 / 3) for v in miou), scores


def _boxes_only_truth(tmp_path: Path) -> Path:
    """The demo ground truth without its masks (boxes and oriented boxes only)."""
    doc = json.loads(GT.read_text())
    for ann in doc["annotations"]:
        ann["segmentation"] = None
    path = tmp_path / "boxes_only.json"
    path.write_text(json.dumps(doc))
    return path


def test_boxes_only_truth_declares_no_mask_column(tmp_path: Path) -> None:
    """Issue 46: by default the bundle scores the modalities the truth holds; a boxes-only
    truth gets no segmentation column (c100000 declared seg_macro_miou, null for all)."""
    out = tmp_path / "b.zip"
    run = hosting("codabench", "--gt", str(_boxes_only_truth(tmp_path)), "--out", str(out))
    assert "warning" not in run.stderr
    with zipfile.ZipFile(out) as z:
        with zipfile.ZipFile(z.open("scoring_program.zip")) as program:
            config = json.loads(program.read("scoring.json"))
    assert config["modalities"] == ["bbox", "oriented_bbox"]
    keys = [c["key"] for c in _columns(out)]
    assert keys and not [k for k in keys if "_seg_" in k]
    assert "open_vocabulary_bbox_micro_f1" in keys and "open_vocabulary_presence_mcc" in keys


def test_declared_modality_the_truth_lacks_is_warned(tmp_path: Path) -> None:
    out = tmp_path / "b.zip"
    run = hosting("codabench", "--gt", str(_boxes_only_truth(tmp_path)), "--out", str(out),
                  "--task", "referring", "--modalities", "segmentation,bbox")
    assert ("warning: --modalities names segmentation, which the ground truth" in run.stderr
            and "referring_seg_macro_miou will be empty (null)" in run.stderr), run.stderr
    assert [c["key"] for c in _columns(out)] == ["referring_seg_macro_miou",
                                                 "referring_bbox_micro_f1"]


@pytest.mark.parametrize("concave", [False, True, None])
def test_the_spec_obb_rule_and_concave_obb_reach_the_scorer(tmp_path: Path,
                                                          concave: bool | None) -> None:
    """Issue 46: a bundle keeps the spec's rule on oriented boxes (convex) unless written with
    --concave-obb (scoring.json's concave_obb); a scoring.json written before the key
    existed (None: the key removed) reads as off (the bundle is written on a convex ground
    truth then: its starting kit must pass). On, the worker scores the dart and the concave
    box inside the square as DOTA_devkit does (IoU 1 and 1/3, shoelace by hand): at 0.5 one
    match, one false positive, one miss, micro F1 2 / (2 + 1 + 1)."""
    from concave_helpers import OV2_IOU, write_benchmark

    gt, pred = write_benchmark(tmp_path / "bench", gt_concave=bool(concave))
    out = tmp_path / "bundle.zip"
    hosting("codabench", "--gt", str(gt), "--out", str(out), "--task", "vocabulary",
            "--modalities", "oriented_bbox",
            *(["--concave-obb"] if concave else []))
    root = lay_out(out, tmp_path / "worker", {"pred.json": pred.read_bytes()})
    config = root / "program" / "scoring.json"
    doc = json.loads(config.read_text())
    assert doc["concave_obb"] is bool(concave)
    if concave is None:
        del doc["concave_obb"]
        config.write_text(json.dumps(doc))
    done = run_worker(root)
    if not concave:
        assert done.returncode == 2, done.stderr
        assert "expected a convex polygon (the spec's rule" in done.stderr + done.stdout
        assert not (root / "output" / "scores.json").exists()
        return
    assert done.returncode == 0, done.stderr
    scores = json.loads((root / "output" / "scores.json").read_text())
    assert OV2_IOU < 0.5
    assert scores == {"open_vocabulary_oriented_bbox_micro_f1": pytest.approx(0.5)}
