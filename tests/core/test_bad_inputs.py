"""Every validation rule of the spec's "Data Formats" and CLI sections, one bad input each.

The corpus lives in ``bad_inputs/cases.py``; each row states the file, the exact
field path, the query_id and a substring of the expected text. All rows run
through the Python API; rows marked ``cli`` also run through the entry point of
``python -m ovearth_core``, in this process (tests/cli_inprocess.py: exit status 2, a
readable message on stderr, no traceback, no output file written); one case runs it as a
real process.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from bad_inputs.cases import CASES, BadCase, ov, row
from cli_inprocess import run_module
from docs_helpers import LD_PYTHON, ld_files

from ovearth_core.errors import MAX_REPORTED, OVEarthInputError
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

CLI_CASES = [c for c in CASES if c.cli and c.api_pred is None]


def _load(case: BadCase, gt_path: Path, pred_path: Path) -> None:
    samples = load_samples(gt_path, pred_path, case.task, score_threshold=case.score_threshold,
                           bbox_format=case.bbox_format, modalities=case.modalities,
                           predictions_doc=case.api_pred)
    evaluate_samples(samples, case.iou_threshold)


def _file_name(case: BadCase, gt_path: Path, pred_path: Path) -> str:
    return {"gt": str(gt_path), "pred": str(pred_path), "options": "(options)"}[case.file]


def test_corpus_ids_are_unique_and_many() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 150
    assert {c.file for c in CASES} == {"gt", "pred", "options"}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_api(case: BadCase, tmp_path: Path) -> None:
    """Each corpus row raises OVEarthInputError naming file, field, query_id and expectation.

    Spec: the section named in ``case.spec``.
    """
    gt_path, pred_path = ld_files(tmp_path, case.gt, case.pred)
    with pytest.raises(OVEarthInputError) as info:
        _load(case, gt_path, pred_path)
    problems = info.value.problems
    assert len(problems) == case.count, [str(p) for p in problems]
    first = problems[0]
    assert first.file == _file_name(case, gt_path, pred_path)
    assert first.field == case.field
    assert first.query_id == case.query_id
    assert case.expected in first.expected
    assert first.found
    message = str(info.value)
    assert case.field in message and first.expected in message


def _cli_args(case: BadCase, gt_path: Path, pred_path: Path, out: Path) -> list[str]:
    args = ["--gt", str(gt_path), "--predictions",
            str(pred_path), "--task", case.task, f"--modalities={case.modalities}",
            "--iou-threshold", repr(case.iou_threshold), "--bbox-format", case.bbox_format,
            "--output", str(out)]
    if case.score_threshold is not None:
        args += ["--score-threshold", repr(case.score_threshold)]
    return args


@pytest.mark.parametrize("index", range(len(CLI_CASES)), ids=[c.id for c in CLI_CASES])
def test_bad_input_cli(index: int, tmp_path: Path) -> None:
    """Through the CLI: exit 2, stderr names file/query/field/expected/found, no traceback.

    An existing output file is left untouched; a missing one is not created; no
    temporary file is left behind. Spec: "Command-Line Interface" and ``case.spec``.
    """
    case = CLI_CASES[index]
    gt_path, pred_path = ld_files(tmp_path, case.gt, case.pred)
    out = tmp_path / "results.json"
    keep_existing = index % 2 == 0
    if keep_existing:
        out.write_bytes(b"previous results\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_module("ovearth_core", *_cli_args(case, gt_path, pred_path, out))
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert _file_name(case, gt_path, pred_path) in proc.stderr
    assert case.field in proc.stderr
    assert case.expected in proc.stderr
    assert "found" in proc.stderr
    if case.query_id is not None:
        assert case.query_id in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if keep_existing:
        assert out.read_bytes() == b"previous results\n"
    else:
        assert not out.exists()


def _thirty_bad_rows() -> dict:
    return ov(*[row(bbox=[[i, 1, 4]]) for i in range(30)])


def test_thirty_problems_show_twenty_with_total(tmp_path: Path) -> None:
    """Spec/issue: report up to 20 problems at once, with the total count."""
    gt_path, pred_path = ld_files(tmp_path, pred=_thirty_bad_rows())
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, pred_path, "vocabulary", modalities="bbox")
    problems = info.value.problems
    assert len(problems) == 30
    assert [p.field for p in problems] == [f"tasks.open_vocabulary[{i}].bbox[0]"
                                           for i in range(30)]
    lines = str(info.value).splitlines()
    assert lines[0].startswith("30 problems")
    assert "first 20" in lines[0]
    shown = [line for line in lines if line.startswith("  - ")]
    assert len(shown) == 20 == MAX_REPORTED
    assert "tasks.open_vocabulary[19].bbox[0]" in shown[-1]
    assert "tasks.open_vocabulary[20]" not in str(info.value)


def test_thirty_problems_cli(tmp_path: Path) -> None:
    """The CLI prints the total and the first 20 problems. Spec: CLI; issue "up to 20".

    A real ``python -m ovearth_core`` process: the shipped entry point, its exit status and
    no traceback from the interpreter (the corpus above runs in process)."""
    gt_path, pred_path = ld_files(tmp_path, pred=_thirty_bad_rows())
    proc = subprocess.run([LD_PYTHON, "-m", "ovearth_core", "--gt", str(gt_path),
                           "--predictions", str(pred_path), "--modalities", "bbox"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert "30 problems" in proc.stderr
    assert sum(line.startswith("  - ") for line in proc.stderr.splitlines()) == 20
    assert "Traceback" not in proc.stderr


def test_exactly_twenty_problems_have_no_truncation_note(tmp_path: Path) -> None:
    gt_path, pred_path = ld_files(tmp_path, pred=ov(*[row(bbox="x") for _ in range(20)]))
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, pred_path, "vocabulary", modalities="bbox")
    lines = str(info.value).splitlines()
    assert lines[0] == "20 problems found in the input:"
    assert len(lines) == 21


def test_one_problem_is_singular(tmp_path: Path) -> None:
    gt_path, pred_path = ld_files(tmp_path, pred=ov(row(bbox="x")))
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, pred_path, "vocabulary", modalities="bbox")
    assert str(info.value).splitlines()[0] == "1 problem found in the input:"


def test_problems_of_several_fields_and_rows_are_collected(tmp_path: Path) -> None:
    """One run reports every problem of the file, in document order (STYLE rule 3)."""
    pred = ov(row(segmentation={"size": [4, 6], "counts": [1]}, bbox=[[3, 3, 1, 1]],
                  oriented_bbox=[[[0, 0], [1, 1]]]),
              row(query_id="nope"),
              row(query_id="ov3", bbox=[{"bbox": [0, 0, 2, 1], "score": "high"}]))
    gt_path, pred_path = ld_files(tmp_path, pred=pred)
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, pred_path, "vocabulary",
                     modalities="segmentation,bbox,oriented_bbox")
    assert [(p.field, p.query_id) for p in info.value.problems] == [
        ("tasks.open_vocabulary[0].segmentation.counts", "ov1"),
        ("tasks.open_vocabulary[0].bbox[0]", "ov1"),
        ("tasks.open_vocabulary[0].oriented_bbox[0]", "ov1"),
        ("tasks.open_vocabulary[1].query_id", "nope"),
        ("tasks.open_vocabulary[2].bbox[0].score", "ov3"),
    ]


def test_ground_truth_problems_are_collected(tmp_path: Path) -> None:
    """Several GT problems come back in one error. Spec: Data Formats / Ground Truth."""
    from bad_inputs.cases import gt_set

    gt = gt_set(("annotations", 2, "width"), 0)
    gt["tasks"]["open_vocabulary"][1]["type"] = "maybe"
    gt["tasks"]["referring"][0]["ann_id"] = "missing"
    gt_path, pred_path = ld_files(tmp_path, gt=gt)
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, pred_path, "referring", modalities="bbox")
    assert [p.field for p in info.value.problems] == [
        "annotations[2].width", "tasks.open_vocabulary[1].type", "tasks.referring[0].ann_id"]
    assert all(p.file == str(gt_path) for p in info.value.problems)


def test_invalid_referenced_annotation_reported_once(tmp_path: Path) -> None:
    """A broken annotation is reported at its own path, not again at every query using it.

    Spec: Data Formats / Ground Truth (each query references an annotation through ann_id).
    """
    from bad_inputs.cases import gt_set

    gt_path, pred_path = ld_files(tmp_path, gt=gt_set(("annotations", 0, "height"), -4))
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, pred_path, "vocabulary", modalities="bbox")
    assert [p.field for p in info.value.problems] == ["annotations[0].height"]


def test_missing_prediction_file(tmp_path: Path) -> None:
    gt_path, _ = ld_files(tmp_path)
    missing = tmp_path / "absent.json"
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, missing, "vocabulary", modalities="bbox")
    (problem,) = info.value.problems
    assert problem.file == str(missing)
    assert "readable" in problem.expected


def test_prediction_path_is_a_folder(tmp_path: Path) -> None:
    gt_path, _ = ld_files(tmp_path)
    with pytest.raises(OVEarthInputError) as info:
        load_samples(gt_path, tmp_path, "vocabulary", modalities="bbox")
    assert info.value.problems[0].file == str(tmp_path)


def test_error_is_a_value_error() -> None:
    """STYLE rule 3: the project's exception is a ValueError subclass."""
    assert issubclass(OVEarthInputError, ValueError)
