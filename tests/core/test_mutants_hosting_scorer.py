"""Rules of the hosting scorer that its first in-process tests (test_hosting_scorer.py) left
open, found by mutation testing (issue 47; docs/tests.md, "Mutation testing").

Each test names the mutants of ``ovearth_core/hosting/scorer.py`` it was written for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ovearth_core.errors import OVEarthInputError, Problem
from ovearth_core.hosting import scorer
from ovearth_core.hosting.config import Limits
from tests.core.test_hosting_scorer import COLUMNS, PRED, _config, _gt, _json, _pred, _worker


def test_the_commands_help_names_its_program_and_each_argument(
        capsys: pytest.CaptureFixture) -> None:
    """The compute worker's command documents itself: ``ovearth-score``, the worker's
    ``$input`` and ``$output`` folders and the program's scoring.json (codabench_main
    mutants 2-5, 8-15, 18-25, 33: the program name, description or a help text dropped or
    changed)."""
    with pytest.raises(SystemExit) as caught:
        scorer.codabench_main(["--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ovearth-score [-h] --config CONFIG input output\n")
    assert "The Codabench scoring program: ``INPUT`` holds ``ref/``" in " ".join(out.split())
    text = " ".join(out.split())
    for help_text in ("input the worker's input folder ($input)",
                      "output the worker's output folder ($output)",
                      "--config CONFIG the scoring program's scoring.json"):
        assert help_text in text, help_text


def test_a_rejection_counts_every_problem_found_not_only_those_shown() -> None:
    """An evaluator that stopped listing after some problems hands over the total it found:
    the message's count is that total (_rejected mutants 2 and 4: ``err.total`` dropped)."""
    problems = [Problem("p.json", "bbox", "a box", f"x{i}", f"q{i}") for i in range(3)]
    message = scorer._rejected(OVEarthInputError(problems, total=250))
    assert message.startswith("ovearth-score: submission rejected; no scores written\n"
                              "250 problems found in the input")


def test_scores_json_holds_one_column_per_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    """``scores.json`` is read by people too (the organiser, in the worker's logs): one
    column per line, indented (codabench_main mutants 85 and 87: ``OPT_INDENT_2`` dropped
    writes it on one line)."""
    root, argv = _worker(tmp_path, {"p.json": _json(PRED)})
    assert scorer.codabench_main(argv) == 0
    lines = (root / "output" / "scores.json").read_text().splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert [line.split(":")[0].strip() for line in lines[1:-1]] == [f'"{k}"' for k in COLUMNS]
    assert all(line.startswith("  ") for line in lines[1:-1])


def test_the_submission_and_the_truth_are_read_once_and_the_bytes_checked_are_scored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The submission's bytes are read once, by the competition's bounded reader, and every
    task is evaluated on that parsed document (never a second read, which would escape the
    size check and could see another file); the ground truth is parsed once for all tasks
    (_score mutants 21-24: ``ground_truth``, ``gt_sha256``, ``predictions_doc`` or
    ``pred_sha256`` not handed over, so the pipeline reads the file again)."""
    from ovearth_core import pipeline

    reads: list[str] = []
    real, real_hashed = pipeline.read_ground_truth, pipeline.read_hashed

    def counted(path: object) -> object:
        reads.append(str(path))
        return real(path)

    def refused(path: object, what: str) -> object:
        assert what != "prediction", f"the submission read again: {path}"
        return real_hashed(path, what)

    monkeypatch.setattr(pipeline, "read_ground_truth", counted)
    monkeypatch.setattr(pipeline, "read_hashed", refused)
    gt = tmp_path / "ground_truth.json"
    gt.write_bytes(_json(_gt()))
    pred = tmp_path / "p.json"
    pred.write_bytes(_json(PRED))
    scored = scorer.score(_config(), gt, pred)
    assert set(scored.results) == {"open_vocabulary", "referring"}
    assert reads == [str(gt)]


@pytest.mark.parametrize("case", ["box_limit", "evaluator"])
def test_a_refusal_names_the_submission_file(tmp_path: Path, case: str) -> None:
    """Both the competition's checks and the evaluator's name the submission's path
    (_score mutants 7 and 12: check_submission given no name; 19: the pipeline given no
    prediction path)."""
    doc = _pred()
    row = doc["tasks"]["referring"][0]
    row["bbox"] = [{"bbox": [0, 0, 1, 1], "score": 0.5}] * 4 if case == "box_limit" else [[1]]
    gt = tmp_path / "ground_truth.json"
    gt.write_bytes(_json(_gt()))
    pred = tmp_path / "p.json"
    pred.write_bytes(_json(doc))
    with pytest.raises(OVEarthInputError) as caught:
        scorer.score(_config(limits=Limits(max_boxes=3)), gt, pred)
    assert [(p.file, p.query_id) for p in caught.value.problems] == [(str(pred), "rf1")]


def test_the_report_is_of_the_evaluations_scored_once_per_task(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each task is evaluated once, under the time limit, and the detailed results reuse
    that evaluation: the page shows the very numbers of the leaderboard (_score mutants 35
    and 62: the scores or the report evaluated outside the shared store, so twice)."""
    from ovearth_core import evaluate

    runs: list[int] = []
    real = evaluate.evaluate_run

    def counted(*args: object, **kwargs: object) -> object:
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluate, "evaluate_run", counted)
    gt = tmp_path / "ground_truth.json"
    gt.write_bytes(_json(_gt()))
    pred = tmp_path / "p.json"
    pred.write_bytes(_json(PRED))
    assert scorer.score(_config(), gt, pred, report=True).html
    assert len(runs) == 2


def test_the_report_covers_the_scored_tasks_only(tmp_path: Path) -> None:
    """A referring-only leaderboard's page has no open-vocabulary section (_score mutants 59
    and 67: the report's task list dropped, so every task of the truth is reported)."""
    gt = tmp_path / "ground_truth.json"
    gt.write_bytes(_json(_gt()))
    pred = tmp_path / "p.json"
    pred.write_bytes(_json(PRED))
    html = scorer.score(_config(tasks=("referring",)), gt, pred, report=True).html
    assert b"Referring" in html and b"Open vocabulary" not in html


def test_a_link_is_refused_as_a_link_whatever_the_size_of_its_target(tmp_path: Path) -> None:
    """The submission's own entry is looked at, never what a link points to: a link to a
    file over the limit is refused as a link, not by the target's size, which would tell
    a participant the size of a file outside the submission (read_submission mutants 5, 7
    and 8: ``os.stat`` following the link)."""
    target = tmp_path / "outside.bin"
    target.write_bytes(b"x" * 101)
    link = tmp_path / "p.json"
    link.symlink_to(target)
    config = _config(limits=Limits(max_mb=100 / (1024 * 1024)))
    with pytest.raises(OVEarthInputError) as caught:
        scorer.read_submission(link, config)
    (problem,) = caught.value.problems
    assert problem.field == "(file)" and "link" in problem.found
    assert "101" not in str(caught.value)
