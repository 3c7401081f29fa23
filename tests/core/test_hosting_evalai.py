"""EvalAI: the challenge configuration's ``evaluate()`` called as EvalAI's submission worker
calls it (issue 40).

The worker unpacks ``evaluation_script.zip`` into ``challenge_data/challenge_<pk>/
evaluation_script`` (every folder a package), imports it by that dotted name and calls
``evaluate(annotation_file, submission_file, phase_codename, submission_metadata=...)``
(``scripts/workers/submission_worker.py``). A submission counts only when the returned dict
has ``result``: a list of ``{split_codename: {label: value}}``. Each run happens in a fresh
interpreter without this repository on ``PYTHONPATH``, as on a worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.hosting_helpers import GT, PREDICTIONS, cli_value, hosting, unzip

WORKER = """
import importlib, json, sys
sys.path.append(sys.argv[1])
module = importlib.import_module("challenge_data.challenge_1.evaluation_script")
output = module.evaluate(sys.argv[2], sys.argv[3], sys.argv[4],
                         submission_metadata={"id": 123, "status": "running"})
print(json.dumps(output))
"""


@pytest.fixture(scope="module")
def challenge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("evalai")
    out = root / "challenge.zip"
    hosting("evalai", "--gt", str(GT), "--out", str(out),
            "--phase", "Dev,2026-01-01,2026-02-01", "--phase", "Test,2026-02-01")
    with zipfile.ZipFile(out) as z:
        base = root / "work"
        for folder in (base / "challenge_data", base / "challenge_data" / "challenge_1"):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "__init__.py").write_text("")
        unzip(z.read("evaluation_script.zip"),
              base / "challenge_data" / "challenge_1" / "evaluation_script")
        (root / "annotations").mkdir()
        (root / "annotations" / "ground_truth.json").write_bytes(
            z.read("annotations/ground_truth.json"))
        (root / "challenge_config.yaml").write_bytes(z.read("challenge_config.yaml"))
    return root


def _worker(challenge: Path, submission: Path, phase: str,
            limits: dict | None = None) -> tuple[dict, str]:
    if limits:
        path = challenge / "work/challenge_data/challenge_1/evaluation_script/scoring.json"
        doc = json.loads(path.read_text())
        saved = path.read_text()
        doc["limits"].update(limits)
        path.write_text(json.dumps(doc))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        run = subprocess.run([sys.executable, "-c", WORKER, str(challenge / "work"),
                              str(challenge / "annotations" / "ground_truth.json"),
                              str(submission), phase], capture_output=True, text=True,
                             env=env, timeout=300, cwd=challenge)
    finally:
        if limits:
            path.write_text(saved)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


@pytest.mark.parametrize("phase", ["dev", "test"])
def test_evaluate_returns_evalais_shape_with_the_clis_numbers(challenge: Path,
                                                              phase: str) -> None:
    pred = PREDICTIONS / "strong_localiser.json"
    output, stderr = _worker(challenge, pred, phase)
    config = yaml.safe_load((challenge / "challenge_config.yaml").read_text())
    labels = config["leaderboard"][0]["schema"]["labels"]
    split = f"{phase}_split"
    assert list(output) == ["result", "submission_result"]
    assert [list(r) for r in output["result"]] == [[split]]
    scores = output["result"][0][split]
    assert list(scores) == labels and output["submission_result"] == {split: scores}
    runs: dict = {}
    for label in labels:
        assert scores[label] == cli_value(label, pred, runs), label
    assert "Traceback" not in stderr


@pytest.mark.parametrize(("content", "limits", "wanted"), [
    (b"not json", None, "field (document): expected valid UTF-8 JSON"),
    (None, {"max_mb": 0.1}, "field (file size): expected a file of at most 0.1 MB"),
    (None, {"time_limit_s": 0.001}, "field (scoring time): expected scoring within 0.001 s"),
    (b'{"tasks": {"other": [{"query_id": "x"}]}}', None,
     "field tasks: expected prediction rows under tasks.open_vocabulary or tasks.referring "
     "or tasks.reasoning"),
])
def test_a_bad_submission_fails_without_result_or_traceback(
        challenge: Path, tmp_path: Path, content: bytes | None, limits: dict | None,
        wanted: str) -> None:
    sub = tmp_path / "submission.json"
    sub.write_bytes(content if content is not None
                    else (PREDICTIONS / "strong_localiser.json").read_bytes())
    output, stderr = _worker(challenge, sub, "test", limits)
    assert "result" not in output  # EvalAI's sign of a failed submission
    assert wanted in output["submission_result"]["error"]
    assert wanted in stderr and "no scores written" in stderr
    assert "Traceback" not in stderr


def test_an_unknown_phase_is_a_failed_submission(challenge: Path) -> None:
    output, stderr = _worker(challenge, PREDICTIONS / "strong_localiser.json", "final")
    assert "result" not in output
    assert ("misconfigured (not the submission's fault): the phase codename 'final' is none "
            "of the configuration's (dev, test)") in stderr


def test_the_time_limit_leaves_the_workers_alarm_as_it_was(tmp_path: Path) -> None:
    """EvalAI calls evaluate() inside its long-lived worker: the scorer's timer must not
    outlive the call, nor replace the worker's own SIGALRM handler."""
    code = """
import signal, sys
from ovearth_core.hosting.scorer import deadline
seen = []
signal.signal(signal.SIGALRM, lambda *a: seen.append("worker"))
with deadline(5):
    pass
print(signal.getitimer(signal.ITIMER_REAL)[0], signal.getsignal(signal.SIGALRM)(0, None), seen)
"""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(root)}, check=True).stdout
    assert out.strip() == "0.0 None ['worker']"


def _zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def test_a_zipped_submission_scores_as_the_json(challenge: Path, tmp_path: Path) -> None:
    pred = PREDICTIONS / "box_detector.json"
    sub = _zip(tmp_path / "submission.zip", {"run/predictions.json": pred.read_bytes(),
                                             "__MACOSX/run/._predictions.json": b"x"})
    zipped, _ = _worker(challenge, sub, "test")
    plain, _ = _worker(challenge, pred, "test")
    assert zipped == plain and "result" in plain


@pytest.mark.parametrize(("files", "limits", "wanted"), [
    ({"a.json": b"{}", "b.json": b"{}"}, None,
     "field (submission): expected one prediction JSON file (e.g. predictions.json) in the "
     "zip, found 2: a.json, b.json"),
    ({"p.json": (PREDICTIONS / "strong_localiser.json").read_bytes()}, {"max_mb": 0.1},
     "submission.zip:p.json, field (file size): expected a file of at most 0.1 MB (this "
     "competition's limit), found 0.5 MB (516,626 bytes)"),
    (None, None, "field (file): expected a readable zip archive"),
])
def test_a_bad_zip_is_rejected(challenge: Path, tmp_path: Path, files: dict | None,
                               limits: dict | None, wanted: str) -> None:
    sub = tmp_path / "submission.zip"
    if files is None:
        sub.write_bytes(b"PK not really a zip")
    else:
        _zip(sub, files)
    output, stderr = _worker(challenge, sub, "test", limits)
    assert "result" not in output
    assert wanted in stderr and "Traceback" not in stderr
