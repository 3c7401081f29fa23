"""``python -m ovearth_core.suite``: several tasks in one run (issue 17: "three tasks <= 3 s").

Its promise (docs/cli.md, "Several tasks in one run"): OUTPUT_DIR/<task>.json holds, byte
for byte, what ``python -m ovearth_core --task <task> --output ...`` writes with the same
options; the warnings are the per-task runs' warnings; bad input is all or nothing (every
failing task reported under its name, no file written, exit status 2). The reference is the
spec's own command run once per task, not the suite's code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ovearth_core import cli, suite

REPO = Path(__file__).resolve().parents[2]
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


# Runs the suite's main in a fresh interpreter (forking needs a process without other
# threads) and reports on stderr whether a child delivered its tasks.
_COUNTED = """
import sys
from ovearth_core import forked, suite
delivered = []
result = forked.Pending.result
def counting(self):
    value = result(self)
    delivered.append(self.forked)
    return value
forked.Pending.result = counting
status = suite.main(sys.argv[1:])
print(f"FORKED={sum(delivered)}", file=sys.stderr)
sys.exit(status)
"""


def _counted(args: list[str], fork: bool) -> tuple[int, str, int]:
    import os
    proc = subprocess.run([sys.executable, "-c", _COUNTED, *args], capture_output=True,
                          text=True, cwd=REPO, timeout=300, check=False,
                          env={**os.environ, "OVEARTH_FORK": "1" if fork else "0"})
    lines = proc.stderr.splitlines(keepends=True)
    forked = [int(line.split("=")[1]) for line in lines if line.startswith("FORKED=")]
    assert forked, proc.stderr
    return proc.returncode, "".join(x for x in lines if not x.startswith("FORKED=")), forked[0]


@pytest.mark.parametrize("persona", ["strong_localiser", "weak_baseline"])
def test_a_child_evaluates_the_smaller_tasks_with_the_same_bytes(tmp_path: Path,
                                                                persona: str) -> None:
    """With a second core the command forks once (vocabulary here, referring and reasoning
    in the child); files and messages are those of the run without it."""
    pred = DEMO / "predictions" / f"{persona}.json"
    got = {}
    for fork in (False, True):
        folder = tmp_path / f"fork{int(fork)}"
        status, err, forked = _counted(["--gt", str(GT), "--predictions", str(pred),
                                        "--modalities", "segmentation,bbox,oriented_bbox",
                                        "--output-dir", str(folder)], fork)
        assert status == 0, err
        assert forked == int(fork)
        got[fork] = ({p.name: p.read_bytes() for p in sorted(folder.iterdir())}, err)
    assert got[True] == got[False]
    assert sorted(got[True][0]) == ["reasoning.json", "referring.json", "vocabulary.json"]


def test_the_childs_problems_are_reported_as_without_it(tmp_path: Path) -> None:
    """Bad rows in a task of the child (referring) and of this process (vocabulary): the same
    messages, in task order, with the fork and without; nothing written."""
    pred = json.loads(PERSONAS[0].read_text())
    pred["tasks"]["referring"][2]["bbox"] = [[1, 2, 3]]
    pred["tasks"]["open_vocabulary"][4]["oriented_bbox"] = [[[0, 0], [9, 9], [9, 0], [0, 9]]]
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(pred))
    runs = []
    for fork in (False, True):
        folder = tmp_path / f"fork{int(fork)}"
        status, err, forked = _counted(["--gt", str(GT), "--predictions", str(path),
                                        "--modalities", "bbox,oriented_bbox",
                                        "--output-dir", str(folder)], fork)
        assert status == 2 and not folder.exists()
        assert forked == int(fork)
        runs.append(err)
    assert runs[0] == runs[1]
    assert runs[0].index("(vocabulary;") < runs[0].index("(referring;")
    assert "tasks.referring[2].bbox[0]" in runs[0]
    assert "tasks.open_vocabulary[4].oriented_bbox[0]" in runs[0]


def test_an_option_that_fails_every_task_is_reported_once(tmp_path: Path, capsys) -> None:
    """A bad ``--iou-threshold`` fails the three tasks alike: one message naming them."""
    status = suite.main(["--gt", str(GT), "--predictions", str(PERSONAS[0]), "--modalities",
                         "bbox", "--iou-threshold", "1.5", "--output-dir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2 and not (tmp_path / "o").exists()
    assert err.count("invalid input") == 1
    assert "(vocabulary, referring, reasoning; nothing written)" in err
    assert "--iou-threshold" in err and "1.5" in err
