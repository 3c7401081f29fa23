"""``python -m ovearth_core.suite``: several tasks in one run (issue 17: "three tasks <= 3 s").

Its promise (README, "Command line"): OUTPUT_DIR/<task>.json holds, byte for byte, what
``python -m ovearth_core --task <task> --output ...`` writes with the same options; the
warnings are the per-task runs' warnings; bad input is all or nothing (every failing task
reported under its name, no file written, exit status 2). The reference is the spec's own
command run once per task, not the suite's code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ovearth_core import cli, suite

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "assets" / "demo"
GT = DEMO / "ground_truth.json"
PERSONAS = sorted((DEMO / "predictions").glob("*.json"))
TASKS = ("vocabulary", "referring", "reasoning")


def _spec_outputs(tmp: Path, pred: Path, options: list[str], capsys) -> tuple[
        dict[str, bytes | None], str]:
    """Each task's bytes from the spec's command (None when it fails), and its stderr."""
    out: dict[str, bytes | None] = {}
    errors = []
    for task in TASKS:
        path = tmp / f"spec_{task}.json"
        status = cli.main(["--gt", str(GT), "--predictions", str(pred), "--task", task,
                           "--output", str(path), *options])
        out[task] = path.read_bytes() if status == 0 else None
        errors.append(capsys.readouterr().err)
    return out, "".join(errors)


@pytest.mark.parametrize("pred", PERSONAS, ids=[p.stem for p in PERSONAS])
@pytest.mark.parametrize("options", [
    ["--modalities", "auto"],
    ["--modalities", "segmentation,bbox,oriented_bbox", "--iou-threshold", "0.3"],
    ["--modalities", "bbox,oriented_bbox", "--score-threshold", "0.4", "--bbox-format",
     "xywh", "--iou-threshold", "0.75"],
], ids=["auto", "all-0.3", "boxes-scored-xywh-0.75"])
def test_outputs_are_the_spec_commands_bytes(tmp_path: Path, capsys, pred: Path,
                                             options: list[str]) -> None:
    spec, spec_err = _spec_outputs(tmp_path, pred, options, capsys)
    folder = tmp_path / "suite"
    status = suite.main(["--gt", str(GT), "--predictions", str(pred), "--output-dir",
                         str(folder), *options])
    err = capsys.readouterr().err
    if all(v is not None for v in spec.values()):
        assert status == 0, err
        for task in TASKS:
            assert (folder / f"{task}.json").read_bytes() == spec[task], task
        # The same warnings, under this command's name.
        assert err.replace(suite.PROG, "ovearth-eval") == spec_err
    else:  # weak_baseline has unscored boxes: --score-threshold refuses it
        assert status == 2
        assert not folder.exists()
        for task in (t for t, v in spec.items() if v is None):
            assert f"invalid input ({task}; nothing written)" in err


def test_the_module_entry_point_and_a_task_subset(tmp_path: Path) -> None:
    """``python -m ovearth_core.suite`` as a user runs it; ``--tasks`` in the given order,
    a repeated task once; nothing else written."""
    folder = tmp_path / "out" / "nested"
    proc = subprocess.run(
        [sys.executable, "-m", "ovearth_core.suite", "--gt", str(GT), "--predictions",
         str(PERSONAS[0]), "--modalities", "bbox", "--tasks", "reasoning, vocabulary,reasoning",
         "--output-dir", str(folder)], capture_output=True, cwd=REPO, timeout=120,
        check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert sorted(p.name for p in folder.iterdir()) == ["reasoning.json", "vocabulary.json"]
    assert json.loads((folder / "reasoning.json").read_bytes())["task"] == "reasoning"
    assert proc.stdout == b""


def test_bad_rows_in_two_tasks_are_both_reported_and_nothing_is_written(
        tmp_path: Path, capsys) -> None:
    pred = json.loads(PERSONAS[0].read_text())
    pred["tasks"]["referring"][2]["bbox"] = [[1, 2, 3]]
    pred["tasks"]["reasoning"][0]["query_id"] = "no_such_query"
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(pred))
    folder = tmp_path / "suite"
    status = suite.main(["--gt", str(GT), "--predictions", str(path), "--modalities",
                         "bbox", "--output-dir", str(folder)])
    err = capsys.readouterr().err
    assert status == 2
    assert not folder.exists()
    assert "invalid input (referring; nothing written)" in err
    assert "tasks.referring[2].bbox[0]" in err
    assert "invalid input (reasoning; nothing written)" in err
    assert "no_such_query" in err
    assert "(vocabulary;" not in err


def test_bad_ground_truth_is_reported_once(tmp_path: Path, capsys) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text('{"annotations": [], "tasks": {"referring": 3}}')
    status = suite.main(["--gt", str(gt), "--predictions", str(PERSONAS[0]),
                         "--modalities", "bbox", "--output-dir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("invalid input") == 1 and "tasks.referring" in err
    assert not (tmp_path / "o").exists()


def test_refused_outputs_before_any_work(tmp_path: Path, capsys) -> None:
    """A file where the folder should be; an output that is one of the inputs: refused
    with a message, the input untouched."""
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    status = suite.main(["--gt", str(GT), "--predictions", str(PERSONAS[0]),
                         "--modalities", "bbox", "--output-dir", str(not_a_folder)])
    assert status == 2
    assert "it is not a folder" in capsys.readouterr().err
    assert not_a_folder.read_text() == "x"

    folder = tmp_path / "subs"
    folder.mkdir()
    pred = folder / "referring.json"
    pred.write_bytes(PERSONAS[0].read_bytes())
    before = pred.read_bytes()
    status = suite.main(["--gt", str(GT), "--predictions", str(pred), "--modalities", "bbox",
                         "--output-dir", str(folder)])
    err = capsys.readouterr().err
    assert status == 2
    assert "cannot write" in err and "referring.json" in err
    assert pred.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["referring.json"]


def test_unknown_task_is_an_option_error(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        suite.main(["--gt", str(GT), "--predictions", str(PERSONAS[0]), "--modalities",
                    "bbox", "--tasks", "vocabulary,detection", "--output-dir", str(tmp_path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--tasks" in err and "'vocabulary,detection'" in err
