"""Building a hosting bundle and running its scoring program as the platforms do (issue 40).

A Codabench compute worker unpacks the scoring program into ``program/``, the reference data
into ``input/ref/``, the participant's zip into ``input/res/``, makes ``output/``, reads
``command`` from ``program/metadata`` (YAML), replaces ``$input``, ``$output`` and ``$program``
(``compute_worker.py``'s ``replace_legacy_metadata_command``) and runs it with the working
folder ``program/`` and ``PYTHONUNBUFFERED=1``. :func:`run_worker` does the same with a local
``python3`` (this interpreter's, standing in for the Docker image's) and without this
repository on ``PYTHONPATH``: the program must run on the copy of ``ovearth_core`` it carries.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo"
GT = DEMO / "ground_truth.json"
PREDICTIONS = DEMO / "predictions"
MODALITIES = "segmentation,bbox,oriented_bbox"


def hosting(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m ovearth_core.hosting ARGS`` from this repository."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "ovearth_core.hosting", *args], cwd=ROOT,
                            capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def evaluator_cli(pred: Path, task: str, gt: Path = GT,
                  modalities: str = MODALITIES) -> dict:
    """``python -m ovearth_core`` on the same files: the numbers a platform must show."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "ovearth_core", "--gt", str(gt),
                          "--prediction", str(pred), "--task", task, "--modalities",
                          modalities], cwd=ROOT, capture_output=True, text=True, env=env,
                         check=True, timeout=300).stdout
    return json.loads(out)


# Where each default column's number sits in the evaluator CLI's output (written out here, not
# taken from the code under test).
CLI_PATHS = {
    "presence_mcc": ("presence", "mcc"),
    "seg_macro_miou": ("seg", "positive_macro_miou"),
    "bbox_micro_f1": ("bbox", "positive_micro_f1"),
    "oriented_bbox_micro_f1": ("oriented_bbox", "positive_micro_f1"),
}


def cli_value(column_key: str, pred: Path, cache: dict | None = None) -> float | None:
    """The evaluator CLI's value of one column (``<task key>_<metric>``, the task as the JSON
    names it) on ``pred``."""
    task, rest = next((cli, column_key[len(key) + 1:]) for cli, key in (
        ("vocabulary", "open_vocabulary"), ("referring", "referring"),
        ("reasoning", "reasoning")) if column_key.startswith(f"{key}_"))
    block, metric = CLI_PATHS[rest]
    cache = {} if cache is None else cache
    if task not in cache:
        cache[task] = evaluator_cli(pred, task)
    return cache[task]["summary"][block][metric]


def unzip(data: bytes, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        archive.extractall(folder)


def lay_out(bundle: Path, root: Path, submission: dict[str, bytes]) -> Path:
    """The worker's folders for one scoring run of ``submission`` (``{name: bytes}``, zipped
    by the participant and unzipped by the platform into ``input/res``)."""
    with zipfile.ZipFile(bundle) as outer:
        unzip(outer.read("scoring_program.zip"), root / "program")
        unzip(outer.read("reference_data.zip"), root / "input" / "ref")
    participant = io.BytesIO()
    with zipfile.ZipFile(participant, "w") as archive:
        for name, data in submission.items():
            archive.writestr(name, data)
    unzip(participant.getvalue(), root / "input" / "res")
    (root / "output").mkdir()
    return root


def edit_config(root: Path, **limits: float) -> None:
    """Change the limits of the laid-out program's ``scoring.json`` (as an organiser would)."""
    path = root / "program" / "scoring.json"
    doc = json.loads(path.read_text())
    doc["limits"].update(limits)
    path.write_text(json.dumps(doc))


def run_worker(root: Path) -> subprocess.CompletedProcess[str]:
    """Run ``program/metadata``'s command as a Codabench compute worker does."""
    command = yaml.safe_load((root / "program" / "metadata").read_text())["command"]
    for var, folder in (("$input", "input"), ("$output", "output"), ("$program", "program")):
        command = command.replace(var, str(root / folder))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(shlex.split(command), cwd=root / "program", capture_output=True,
                          text=True, env=env, timeout=300)
