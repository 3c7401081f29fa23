"""End-to-end command line: ``python -m ovearth_core`` and the ``ovearth-eval`` script.

Spec "Command-Line Interface": options, defaults, stdout/file output; exit
status 2 with a readable message for bad input or options. Tests of arguments, messages,
outputs and exit status run the entry point in this process (tests/cli_inprocess.py); the
shipped entry points (``python -m ovearth_core`` and the script) and what they import run as
real processes.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from cli_inprocess import run_module
from docs_helpers import LD_POLY_A1, LD_PYTHON, ld_files, ld_pred

SCRIPT = str(Path(LD_PYTHON).parent / "ovearth-eval")
MODULE = [LD_PYTHON, "-m", "ovearth_core"]
SPEC_OPTIONS = {"--gt", "--prediction", "--predictions", "--task", "--output",
                "--iou-threshold", "--score-threshold", "--bbox-format", "--modalities"}


def _run(args: list[str], entry: list[str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m ovearth_core args`` in this process; ``entry``: a real process of it."""
    if entry is None:
        return run_module("ovearth_core", *args, text=False)
    return subprocess.run([*entry, *args], capture_output=True, timeout=120, check=False)


def _xywh_scored_pred() -> dict[str, Any]:
    """The perfect predictions, with xywh boxes and a score on every box."""
    pred = ld_pred()
    for rows in pred["tasks"].values():
        for row in rows:
            boxes = [b["bbox"] if isinstance(b, dict) else b for b in row["bbox"]]
            row["bbox"] = [{"bbox": [x1, y1, x2 - x1, y2 - y1], "score": 0.5}
                           for x1, y1, x2, y2 in boxes]
            polys = [p["polygon"] if isinstance(p, dict) else p for p in row["oriented_bbox"]]
            row["oriented_bbox"] = [{"polygon": p, "score": 0.5} for p in polys]
    return pred


def _all_options(gt: Path, pred: Path, out: Path) -> list[str]:
    return ["--gt", str(gt), "--predictions", str(pred), "--task", "vocabulary",
            "--modalities", "segmentation,bbox,oriented_bbox", "--output", str(out),
            "--iou-threshold", "0.7", "--score-threshold", "0.3", "--bbox-format", "xywh"]


def test_every_option_both_entry_points(tmp_path: Path) -> None:
    """Both entry points accept every spec option and write the same bytes."""
    gt, pred = ld_files(tmp_path, pred=_xywh_scored_pred())
    out_module, out_script = tmp_path / "module.json", tmp_path / "script.json"
    first = _run(_all_options(gt, pred, out_module), entry=MODULE)
    second = _run(_all_options(gt, pred, out_script), entry=[SCRIPT])
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout == b"" and second.stdout == b""
    assert out_module.read_bytes() == out_script.read_bytes()
    result = orjson.loads(out_module.read_bytes())
    assert result["task"] == "open_vocabulary"
    assert result["config"]["iou_threshold"] == 0.7
    assert result["config"]["modalities"] == ["bbox", "oriented_bbox", "segmentation"]
    summary = result["summary"]
    assert summary["bbox"]["positive_micro_f1"] == 1.0
    assert summary["oriented_bbox"]["positive_micro_f1"] == 1.0
    assert summary["seg"]["positive_micro_miou"] == 1.0
    assert summary["presence"]["tp"] == 2 and summary["presence"]["tn"] == 1


def test_stdout_and_file_identical_and_runs_byte_identical(tmp_path: Path) -> None:
    """Default output is stdout; a file gets the same bytes; two runs give the same bytes."""
    gt, pred = ld_files(tmp_path)
    base = ["--gt", str(gt), "--predictions", str(pred), "--modalities", "segmentation,bbox"]
    to_stdout = _run(base)
    again = _run(base)
    out = tmp_path / "out.json"
    to_file = _run([*base, "--output", str(out)])
    assert to_stdout.returncode == 0 and to_file.returncode == 0
    assert to_stdout.stdout == again.stdout == out.read_bytes()
    assert to_file.stdout == b""
    assert orjson.loads(to_stdout.stdout)["task"] == "open_vocabulary"


def test_defaults(tmp_path: Path) -> None:
    """Spec defaults: --task vocabulary, --iou-threshold 0.5, --bbox-format xyxy."""
    gt, pred = ld_files(tmp_path)
    proc = _run(["--gt", str(gt), "--prediction", str(pred), "--modalities", "bbox"])
    assert proc.returncode == 0, proc.stderr
    result = orjson.loads(proc.stdout)
    assert result["task"] == "open_vocabulary"
    assert result["config"]["iou_threshold"] == 0.5
    assert result["config"]["modalities"] == ["bbox"]
    assert result["summary"]["seg"] is None and result["summary"]["oriented_bbox"] is None
    assert result["summary"]["bbox"]["positive_micro_f1"] == 1.0


def test_prediction_and_predictions_are_synonyms(tmp_path: Path) -> None:
    gt, pred = ld_files(tmp_path)
    base = ["--gt", str(gt), "--modalities", "oriented_bbox", "--task", "referring"]
    singular = _run([*base, "--prediction", str(pred)])
    plural = _run([*base, "--predictions", str(pred)])
    assert singular.returncode == 0 and plural.returncode == 0
    assert singular.stdout == plural.stdout
    assert orjson.loads(plural.stdout)["task"] == "referring"


@pytest.mark.parametrize(("task", "key", "modalities"), [
    ("referring", "referring", "bbox"),
    ("reasoning", "reasoning", "oriented_bbox"),
])
def test_spec_example_commands(tmp_path: Path, task: str, key: str, modalities: str) -> None:
    """The spec's example invocations for referring and reasoning."""
    gt, pred = ld_files(tmp_path)
    out = tmp_path / f"{task}.json"
    proc = _run(["--gt", str(gt), "--predictions", str(pred), "--task", task,
                 "--modalities", modalities, "--output", str(out)])
    assert proc.returncode == 0, proc.stderr
    result = orjson.loads(out.read_bytes())
    assert result["task"] == key
    assert "presence" not in result["summary"]
    assert all(row["negative"] is False for row in result["per_sample"])


def test_help_lists_exactly_the_spec_options() -> None:
    proc = _run(["--help"])
    assert proc.returncode == 0
    options = set(re.findall(r"--[a-z][a-z-]*", proc.stdout.decode()))
    assert options - {"--help"} == SPEC_OPTIONS


def test_script_help_matches_module_help() -> None:
    module = _run(["--help"]).stdout.decode()
    script = _run(["--help"], entry=[SCRIPT]).stdout.decode()
    assert set(re.findall(r"--[a-z][a-z-]*", module)) == set(re.findall(r"--[a-z][a-z-]*",
                                                                         script))


@pytest.mark.parametrize(("extra", "named"), [
    (["--bbox-format", "bad"], "--bbox-format"),
    (["--task", "detection"], "--task"),
    (["--iou-threshold", "half"], "--iou-threshold"),
    (["--score-threshold", "high"], "--score-threshold"),
], ids=["bbox-format", "task", "iou-not-number", "score-not-number"])
def test_bad_option_values(tmp_path: Path, extra: list[str], named: str) -> None:
    """Spec options: invalid values exit with status 2 and name the option; no output."""
    gt, pred = ld_files(tmp_path)
    out = tmp_path / "out.json"
    proc = _run(["--gt", str(gt), "--predictions", str(pred), "--modalities", "bbox",
                 "--output", str(out), *extra])
    stderr = proc.stderr.decode()
    assert proc.returncode == 2
    assert named in stderr and "Traceback" not in stderr
    assert not out.exists() and proc.stdout == b""


@pytest.mark.parametrize("missing", ["--gt", "--predictions", "--modalities"])
def test_required_options(tmp_path: Path, missing: str) -> None:
    """Spec: --gt, --prediction(s) and --modalities are required."""
    gt, pred = ld_files(tmp_path)
    given = {"--gt": str(gt), "--predictions": str(pred), "--modalities": "bbox"}
    args = [part for opt, value in given.items() if opt != missing for part in (opt, value)]
    proc = _run(args)
    assert proc.returncode == 2
    assert missing.rstrip("s") in proc.stderr.decode()
    assert proc.stdout == b""


def test_unwritable_output_is_a_clean_error(tmp_path: Path) -> None:
    gt, pred = ld_files(tmp_path)
    out = tmp_path / "no-such-folder" / "out.json"
    proc = _run(["--gt", str(gt), "--predictions", str(pred), "--modalities", "bbox",
                 "--output", str(out)])
    stderr = proc.stderr.decode()
    assert proc.returncode == 2
    assert str(out) in stderr and "Traceback" not in stderr


def test_existing_output_replaced_on_success(tmp_path: Path) -> None:
    gt, pred = ld_files(tmp_path)
    out = tmp_path / "out.json"
    out.write_bytes(b"old")
    proc = _run(["--gt", str(gt), "--predictions", str(pred), "--modalities", "bbox",
                 "--output", str(out)])
    assert proc.returncode == 0
    assert orjson.loads(out.read_bytes())["config"]["modalities"] == ["bbox"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gt.json", "out.json", "pred.json"]


def test_score_threshold_filters_in_cli(tmp_path: Path) -> None:
    """Spec "Confidence Filtering" through the CLI: a box below T is dropped before matching."""
    pred = ld_pred()
    pred["tasks"]["open_vocabulary"][0]["oriented_bbox"] = [
        {"polygon": LD_POLY_A1, "score": 0.2}]
    gt, pred_path = ld_files(tmp_path, pred=pred)
    proc = _run(["--gt", str(gt), "--predictions", str(pred_path),
                 "--modalities", "oriented_bbox", "--score-threshold", "0.25"])
    assert proc.returncode == 0, proc.stderr
    ov1 = orjson.loads(proc.stdout)["per_sample"][0]
    assert ov1["oriented_bbox"]["num_pred"] == 0 and ov1["oriented_bbox"]["fn"] == 1


HEAVY = ("numpy", "scipy", "pycocotools", "shapely")
_IMPORTS_OF_HELP = """
import runpy, sys
sys.argv = ["ovearth_core", "--help"]
try:
    {call}
except SystemExit:
    pass
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize("call", [
    "runpy.run_module('ovearth_core', run_name='__main__', alter_sys=True)",  # python -m
    "from ovearth_core.cli import main_exit; main_exit()",  # the ovearth-eval script
])
def test_help_imports_no_numeric_library(call: str) -> None:
    """Issue 17: ``--help`` costs the interpreter start only (checked in a fresh process)."""
    proc = subprocess.run([LD_PYTHON, "-c", _IMPORTS_OF_HELP.format(call=call, heavy=HEAVY)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert "usage: ovearth-eval" in proc.stdout, proc.stderr
    assert "HEAVY=\n" in proc.stderr  # none of them


def test_package_import_is_light_and_exports_still_work() -> None:
    code = ("import sys, ovearth_core\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
            "from ovearth_core import evaluate_samples, evaluate_files, OVEarthInputError\n"
            "from ovearth_core.evaluate import evaluate_samples as e\n"
            "assert evaluate_samples is e and 'evaluate_files' in dir(ovearth_core)\n"
            "print('numpy' in sys.modules)\n")
    proc = subprocess.run([LD_PYTHON, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["[]", "True"]


def test_the_spec_command_never_uses_the_result_cache(tmp_path: Path) -> None:
    gt, pred = ld_files(tmp_path)
    cache_dir = tmp_path / "cache"
    env = {**os.environ, "OVEARTH_CACHE_DIR": str(cache_dir)}
    for _ in range(2):
        proc = run_module("ovearth_core", "--gt", str(gt), "--predictions", str(pred),
                          "--modalities", "segmentation", env=env, text=False)
        assert proc.returncode == 0 and b"cache" not in proc.stderr
    assert not cache_dir.exists()


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        pass


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere() -> None:
    from ovearth_core.cli import ProgressPrinter

    tty, pipe = _Stream(True), _Stream(False)
    for stream in (tty, pipe):
        show = ProgressPrinter("ovearth-leaderboard", "vocabulary", stream=stream, width=4)
        show(1, 2, "model_a", False)
        show(2, 2, "model_b", True)
    assert tty.text == ("\rovearth-leaderboard: vocabulary [##..] 1/2 (0 cached)"
                        "\rovearth-leaderboard: vocabulary [####] 2/2 (1 cached)\n")
    assert pipe.text == ("ovearth-leaderboard: vocabulary [1/2] model_a\n"
                         "ovearth-leaderboard: vocabulary [2/2] model_b (cached)\n")
