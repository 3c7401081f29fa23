"""The scoring program's rules, called in this process (issue 47): the same rules the
subprocess tests of tests/core/test_hosting.py and test_hosting_evalai.py check on the bundle
as shipped, here on a five-query benchmark small enough for mutation testing.

The benchmark (:func:`_bench`, 100 x 100 pixels, boxes ``[x, y, w, h]`` in the ground truth,
``[x0, y0, x1, y1]`` in the predictions): ``a1`` the square (10, 10)-(30, 30), ``a2`` the
square (50, 50)-(70, 70); open vocabulary: ``ov1`` (a1), ``ov2`` (a2), ``ov4`` (a1) positive,
``ov3`` and ``ov5`` negative; referring: ``rf1`` (a2), ``rf2`` (a1). The submission
(:data:`PRED`), worked by hand (micro F1 = 2 TP / (2 TP + FP + FN) at IoU 0.5, a query
"present" when it has a box; MCC of presence):

- open_vocabulary bbox: ov1 hit; ov2 two boxes elsewhere (2 FP, 1 FN); ov4 hit: TP 2, FP 2,
  FN 1: 4 / 7.
- open_vocabulary oriented_bbox: ov1, ov2 hit; ov4 none (FN): 4 / 5.
- presence: ov1, ov2, ov4 present (TP 3); ov3 absent (TN 1); ov5 given a box (FP 1):
  MCC = (3 * 1 - 1 * 0) / sqrt(4 * 3 * 2 * 1) = 3 / sqrt(24).
- referring bbox: rf1 hit; rf2's box (10, 10)-(30, 18) has IoU 160 / 400 = 0.4 with a1:
  FP + FN, so TP 1, FP 1, FN 1: 1 / 2 (at IoU 0.3: 1; with rf2's score 0.6 dropped by a
  0.75 score threshold: TP 1, FN 1: 2 / 3).
- referring oriented_bbox: rf1 hit, rf2 none: 2 / 3.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import signal
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ovearth_core.errors import OVEarthInputError
from ovearth_core.hosting import scorer
from ovearth_core.hosting.config import Column, HostingConfig, Limits
from ovearth_core.options import Options

A1 = [10, 10, 30, 30]
A2 = [50, 50, 70, 70]


def _poly(box: list[float]) -> list[list[float]]:
    x0, y0, x1, y1 = box
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def _gt() -> dict:
    anns = [{"id": name, "image_path": "images/p.png", "width": 100, "height": 100,
             "category_name": "plane", "bbox": [[b[0], b[1], b[2] - b[0], b[3] - b[1]]],
             "oriented_bbox": [_poly(b)]} for name, b in (("a1", A1), ("a2", A2))]

    def q(query_id: str, ann: str, kind: str = "positive") -> dict:
        return {"query_id": query_id, "ann_id": ann, "type": kind, "phrase": "plane"}

    return {"annotations": anns, "tasks": {
        "open_vocabulary": [q("ov1", "a1"), q("ov2", "a2"), q("ov3", "a1", "negative"),
                            q("ov4", "a1"), q("ov5", "a2", "negative")],
        "referring": [q("rf1", "a2"), q("rf2", "a1")], "reasoning": []}}


def _row(query_id: str, boxes: list = (), polys: list = ()) -> dict:
    return {"query_id": query_id, "bbox": [{"bbox": b, "score": s} for b, s in boxes],
            "oriented_bbox": [{"polygon": _poly(p), "score": s} for p, s in polys]}


def _pred() -> dict:
    return {"tasks": {
        "open_vocabulary": [
            _row("ov1", [(A1, 0.9)], [(A1, 0.9)]),
            _row("ov2", [([0, 0, 5, 5], 0.8), ([90, 90, 95, 95], 0.8)], [(A2, 0.8)]),
            _row("ov3"),
            _row("ov4", [(A1, 0.9)]),
            _row("ov5", [([0, 0, 5, 5], 0.5)])],
        "referring": [_row("rf1", [(A2, 0.9)], [(A2, 0.9)]),
                      _row("rf2", [([10, 10, 30, 18], 0.6)])]}}


PRED = _pred()
VOC_BBOX, VOC_OBB, VOC_MCC = 4 / 7, 4 / 5, 3 / math.sqrt(24)
REF_BBOX, REF_OBB = 1 / 2, 2 / 3
COLUMNS = {"open_vocabulary_presence_mcc": VOC_MCC, "open_vocabulary_bbox_micro_f1": VOC_BBOX,
           "open_vocabulary_oriented_bbox_micro_f1": VOC_OBB,
           "referring_bbox_micro_f1": REF_BBOX, "referring_oriented_bbox_micro_f1": REF_OBB}


def _config(**kw: object) -> HostingConfig:
    options = {k: kw.pop(k) for k in ("iou_threshold", "score_threshold", "bbox_format",
                                      "concave_obb") if k in kw}
    tasks = kw.pop("tasks", ("vocabulary", "referring"))
    return HostingConfig(tasks, Options(tasks[0], kw.pop("modalities", "bbox,oriented_bbox"),
                                        **options), **kw)


def _write(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    return path


@pytest.fixture
def gt(tmp_path: Path) -> Path:
    return _write(tmp_path / "gt" / "ground_truth.json", _gt())


# ---- score(): the columns and their basis -------------------------------------------------

def test_every_column_holds_its_tasks_metric_in_the_leaderboards_order(tmp_path: Path,
                                                                      gt: Path) -> None:
    """Each column is ``summary[block][metric]`` of its own task: five different hand-worked
    values, so a column read from another task, block or metric shows."""
    scored = scorer.score(_config(), gt, _write(tmp_path / "p.json", PRED))
    assert list(scored.scores) == list(COLUMNS)
    assert scored.scores == pytest.approx(COLUMNS, abs=1e-12)
    assert all(type(v) is float for v in scored.scores.values())
    assert scored.undefined == [] and scored.html is None
    assert set(scored.results) == {"open_vocabulary", "referring"}
    assert scored.results["referring"]["summary"]["bbox"]["positive_micro_f1"] == REF_BBOX


@pytest.mark.parametrize(("options", "ref_bbox"), [
    ({}, 1 / 2), ({"iou_threshold": 0.3}, 1.0), ({"score_threshold": 0.75}, 2 / 3)])
def test_the_configs_options_reach_every_tasks_evaluation(tmp_path: Path, gt: Path,
                                                          options: dict,
                                                          ref_bbox: float) -> None:
    """rf2's box has IoU 0.4 and score 0.6: matched at an IoU threshold of 0.3, dropped by a
    score threshold of 0.75, a false positive by default (the second task, so the options
    reach every task, not only the first)."""
    scored = scorer.score(_config(**options), gt, _write(tmp_path / "p.json", PRED))
    assert scored.scores["referring_bbox_micro_f1"] == pytest.approx(ref_bbox)


def test_the_configs_box_format_reaches_the_evaluation(tmp_path: Path, gt: Path) -> None:
    """The same boxes written ``[x, y, w, h]`` score as :data:`PRED` under ``bbox_format
    xywh``; under the default ``xyxy`` ov2's ``[90, 90, 5, 5]`` is refused."""
    doc = _pred()
    for rows in doc["tasks"].values():
        for row in rows:
            for box in row["bbox"]:
                x0, y0, x1, y1 = box["bbox"]
                box["bbox"] = [x0, y0, x1 - x0, y1 - y0]
    pred = _write(tmp_path / "p.json", doc)
    xywh = scorer.score(_config(bbox_format="xywh"), gt, pred).scores
    assert xywh == pytest.approx(COLUMNS, abs=1e-12)
    with pytest.raises(OVEarthInputError, match="--bbox-format xyxy"):
        scorer.score(_config(), gt, pred)


@pytest.mark.parametrize("concave", [False, True])
def test_concave_obb_on_reaches_the_evaluation(tmp_path: Path, concave: bool) -> None:
    """tests/concave_helpers.py: the dart matched (IoU 1), the concave box inside the square
    not (IoU 1/3): micro F1 2 / (2 + 1 + 1) with ``concave_obb`` on; off, the spec refuses
    the concave prediction."""
    from concave_helpers import write_benchmark

    gt, pred = write_benchmark(tmp_path, gt_concave=concave)
    config = _config(tasks=("vocabulary",), modalities="oriented_bbox", concave_obb=concave)
    if not concave:
        with pytest.raises(OVEarthInputError, match="expected a convex polygon"):
            scorer.score(config, gt, pred)
        return
    assert scorer.score(config, gt, pred).scores == {
        "open_vocabulary_oriented_bbox_micro_f1": pytest.approx(0.5)}


def test_a_chosen_column_list_is_written_as_chosen(tmp_path: Path, gt: Path) -> None:
    config = _config(columns=(Column("referring", "oriented_bbox_micro_f1"),
                              Column("vocabulary", "presence_mcc")))
    scored = scorer.score(config, gt, _write(tmp_path / "p.json", PRED))
    assert list(scored.scores) == ["referring_oriented_bbox_micro_f1",
                                   "open_vocabulary_presence_mcc"]
    assert scored.scores == pytest.approx({"referring_oriented_bbox_micro_f1": REF_OBB,
                                           "open_vocabulary_presence_mcc": VOC_MCC})


def test_an_undefined_metric_is_left_out_and_named(tmp_path: Path, gt: Path) -> None:
    """No negative query predicted absent and none present wrongly: ov3 and ov5 both given a
    box, so TN = FN = 0 and the MCC's denominator is 0 (undefined, ``None``)."""
    doc = _pred()
    doc["tasks"]["open_vocabulary"][2] = _row("ov3", [(A1, 0.4)])
    scored = scorer.score(_config(), gt, _write(tmp_path / "p.json", doc))
    assert scored.undefined == ["open_vocabulary_presence_mcc"]
    assert "open_vocabulary_presence_mcc" not in scored.scores
    assert list(scored.scores) == [k for k in COLUMNS if k != "open_vocabulary_presence_mcc"]


@pytest.mark.parametrize(("value", "defined"), [
    (1, True), (0.25, True), (0, True), (None, False), (True, False), (False, False),
    (math.nan, False), (math.inf, False), (-math.inf, False), ("0.5", False)])
def test_column_scores_keeps_finite_numbers_only(value: object, defined: bool) -> None:
    config = _config(tasks=("referring",), modalities="bbox")
    results = {"referring": {"summary": {"bbox": {"positive_micro_f1": value}}}}
    scores, undefined = scorer.column_scores(config, results)
    if defined:
        assert scores == {"referring_bbox_micro_f1": float(value)} and undefined == []
        assert type(scores["referring_bbox_micro_f1"]) is float
    else:
        assert scores == {} and undefined == ["referring_bbox_micro_f1"]


def test_column_scores_reads_a_missing_block_as_undefined() -> None:
    config = _config(tasks=("referring",), modalities="bbox,oriented_bbox")
    results = {"referring": {"summary": {"bbox": None,
                                         "oriented_bbox": {"positive_micro_f1": 0.5}}}}
    assert scorer.column_scores(config, results) == (
        {"referring_oriented_bbox_micro_f1": 0.5}, ["referring_bbox_micro_f1"])


def test_the_evaluators_warnings_are_kept(tmp_path: Path, gt: Path) -> None:
    doc = _pred()
    del doc["tasks"]["referring"][1]
    scored = scorer.score(_config(), gt, _write(tmp_path / "p.json", doc))
    assert any("1 of 2 referring queries have no prediction row" in w
               for w in scored.warnings), scored.warnings


def test_the_report_is_rendered_only_when_asked(tmp_path: Path, gt: Path) -> None:
    pred = _write(tmp_path / "p.json", PRED)
    html = scorer.score(_config(), gt, pred, report=True).html
    assert html is not None and html.startswith(b"<!DOCTYPE html>")
    assert b"Open vocabulary" in html and b"worst queries" not in html


def test_a_gallery_draws_the_worst_queries_of_the_submission_on_its_images(
        tmp_path: Path, gt: Path) -> None:
    """The images come from the folder given, not the ground truth's (which has none
    here): without them every picture would be a blank canvas."""
    from PIL import Image

    images = tmp_path / "imgs"
    (images / "images").mkdir(parents=True)
    Image.new("RGB", (100, 100), (90, 110, 90)).save(images / "images" / "p.png")
    pred = _write(tmp_path / "p.json", PRED)
    html = scorer.score(_config(gallery=1), gt, pred, images=images, report=True).html
    assert b"worst quer" in html and b"of submission" in html
    assert b"blank canvas" not in html
    blank = scorer.score(_config(gallery=1), gt, pred, report=True).html
    assert b"blank canvas" in blank


def test_the_time_limit_refuses_the_submission(tmp_path: Path, gt: Path) -> None:
    config = _config(limits=Limits(time_limit_s=0.001))
    pred = _write(tmp_path / "p.json", PRED)
    with pytest.raises(OVEarthInputError) as caught:
        scorer.score(config, gt, pred)
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(pred), "(scoring time)")
    assert problem.expected == "scoring within 0.001 s (this competition's time limit)"
    assert problem.found == "still running after 0.001 s"


def test_broken_reference_data_is_the_bundles_fault(tmp_path: Path) -> None:
    gt = _write(tmp_path / "ground_truth.json", b"{not json")
    with pytest.raises(scorer.Misconfigured,
                       match="the reference data is not a valid ground truth\n"
                       "(.|\n)*ground_truth.json, field \\(document\\)"):
        scorer.score(_config(), gt, _write(tmp_path / "p.json", PRED))


# ---- read_submission: the size limit, exactly at it and one byte over -----------------------

CAP_MB = 100 / (1024 * 1024)  # 100 bytes exactly


def test_a_file_of_exactly_the_limit_is_read_and_hashed(tmp_path: Path) -> None:
    data = b'{"tasks": {}}'.ljust(100)
    path = _write(tmp_path / "p.json", data)
    doc, sha = scorer.read_submission(path, _config(limits=Limits(max_mb=CAP_MB)))
    assert doc == {"tasks": {}} and sha == hashlib.sha256(data).hexdigest()


def test_one_byte_over_the_limit_is_refused_by_its_size(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.json", b'{"tasks": {}}'.ljust(101))
    with pytest.raises(OVEarthInputError) as caught:
        scorer.read_submission(path, _config(limits=Limits(max_mb=CAP_MB)))
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(path), "(file size)")
    assert problem.expected == (f"a file of at most {CAP_MB:g} MB (this competition's limit)")
    assert problem.found == "0.0 MB (101 bytes)"


def test_a_file_larger_than_its_stat_says_is_refused_by_the_limit(tmp_path: Path) -> None:
    """/proc files report size 0: the bounded read stops one byte past the limit and the
    message is the competition's."""
    path = Path("/proc/self/status")
    with pytest.raises(OVEarthInputError) as caught:
        scorer.read_submission(path, _config(limits=Limits(max_mb=CAP_MB)))
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(path), "(file)")
    assert problem.expected == f"a file of at most {CAP_MB:g} MB (this competition's limit)"
    assert "more than" in problem.found


def test_a_linked_submission_is_refused_not_followed(tmp_path: Path, gt: Path) -> None:
    link = tmp_path / "p.json"
    link.symlink_to(gt)
    with pytest.raises(OVEarthInputError) as caught:
        scorer.read_submission(link, _config())
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == (str(link), "(file)")
    assert "link" in problem.found and "at most" not in problem.expected


def test_a_missing_submission_is_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(OVEarthInputError) as caught:
        scorer.read_submission(tmp_path / "gone.json", _config())
    (problem,) = caught.value.problems
    assert (problem.file, problem.field, problem.expected) == (
        str(tmp_path / "gone.json"), "(file)", "a readable file")
    assert problem.found == "No such file or directory"


# ---- check_submission: the tasks answered and the boxes per query ---------------------------

@pytest.mark.parametrize(("tasks", "found"), [
    (None, "no tasks object"),
    ([1], "list [1]"),
    ({}, "no rows under any task"),
    ({"referring": []}, "no rows under any task"),
    ({"reasoning": [{"query_id": "x"}], "referring": [{"query_id": "y"}]},
     "rows only under tasks.reasoning, tasks.referring"),
    ({"open_vocabulary": "rows"}, "no rows under any task"),
])
def test_a_submission_must_answer_a_scored_task(tasks: object, found: str) -> None:
    doc = {} if tasks is None else {"tasks": tasks}
    with pytest.raises(OVEarthInputError) as caught:
        scorer.check_submission(doc, "sub.json", _config(tasks=("vocabulary",)))
    (problem,) = caught.value.problems
    assert (problem.file, problem.field) == ("sub.json", "tasks")
    assert problem.expected == ("prediction rows under tasks.open_vocabulary (the tasks this "
                                "competition scores)")
    assert problem.found.startswith(found), problem.found


def test_every_scored_task_is_named_in_the_refusal() -> None:
    with pytest.raises(OVEarthInputError, match="under tasks.open_vocabulary or "
                       "tasks.referring \\(the tasks"):
        scorer.check_submission({"tasks": {}}, "s.json", _config())


def test_one_scored_task_answered_is_enough() -> None:
    doc = {"tasks": {"referring": [{"query_id": "rf1"}], "open_vocabulary": []}}
    scorer.check_submission(doc, "s.json", _config())


def _boxes(n: int) -> list:
    return [{"bbox": [0, 0, 1, 1], "score": 0.5}] * n


@pytest.mark.parametrize(("split", "refused"), [((3,), False), ((4,), True),
                                                ((2, 1), False), ((2, 2), True)])
def test_the_box_limit_per_query_counts_duplicate_rows_together(split: tuple,
                                                                  refused: bool) -> None:
    """max_boxes 3: three boxes pass, four are refused, whether in one row or two rows of
    the same query_id."""
    rows = [{"query_id": "ov1", "bbox": _boxes(n)} for n in split]
    doc = {"tasks": {"open_vocabulary": rows}}
    config = _config(tasks=("vocabulary",), limits=Limits(max_boxes=3))
    if not refused:
        scorer.check_submission(doc, "s.json", config)
        return
    with pytest.raises(OVEarthInputError) as caught:
        scorer.check_submission(doc, "s.json", config)
    (problem,) = caught.value.problems
    assert (problem.file, problem.field, problem.query_id) == ("s.json", "bbox", "ov1")
    assert problem.expected == "at most 3 boxes per query (this competition's limit)"
    assert problem.found == "4 boxes"


def test_the_box_limit_counts_each_scored_field_and_task_and_names_each_problem() -> None:
    """Fields are counted apart (2 + 2 boxes in two fields pass a limit of 3), every scored
    task is checked, and every problem is reported at once."""
    polys = [{"polygon": _poly(A1), "score": 0.5}]
    doc = {"tasks": {
        "open_vocabulary": [{"query_id": "ov1", "bbox": _boxes(2), "oriented_bbox": polys * 2},
                            {"query_id": "ov2", "oriented_bbox": polys * 4}],
        "referring": [{"query_id": "rf1", "bbox": _boxes(1_001 + 3)}]}}
    config = _config(limits=Limits(max_boxes=3))
    with pytest.raises(OVEarthInputError) as caught:
        scorer.check_submission(doc, "s.json", config)
    got = {(p.query_id, p.field, p.found) for p in caught.value.problems}
    assert got == {("ov2", "oriented_bbox", "4 boxes"), ("rf1", "bbox", "1,004 boxes")}
    assert any("at most 3 boxes" in p.expected for p in caught.value.problems)


def test_the_box_limit_ignores_unscored_fields_tasks_and_odd_rows() -> None:
    """Only box fields among the config's modalities and only the scored tasks count; a
    row without a string query_id (the evaluator's to refuse) is not counted here."""
    many = _boxes(5)
    doc = {"tasks": {"open_vocabulary": [
        {"query_id": "ov1", "bbox": many, "oriented_bbox": [{}]},
        {"query_id": 7, "oriented_bbox": [{}] * 5}, "row", {"query_id": "ov2",
                                                            "oriented_bbox": "x"}],
        "referring": [{"query_id": "rf1", "oriented_bbox": [{}] * 5}]}}
    config = _config(tasks=("vocabulary",), modalities="oriented_bbox",
                     limits=Limits(max_boxes=3))
    scorer.check_submission(doc, "s.json", config)


def test_a_task_whose_rows_are_not_a_list_does_not_stop_the_box_check() -> None:
    """open_vocabulary's rows are not a list (the evaluator's to refuse): referring, checked
    after it, is still checked (check_submission mutant 57: ``continue`` made ``break``)."""
    doc = {"tasks": {"open_vocabulary": {"query_id": "ov1"},
                     "referring": [{"query_id": "rf1", "bbox": _boxes(4)}]}}
    with pytest.raises(OVEarthInputError) as caught:
        scorer.check_submission(doc, "s.json", _config(limits=Limits(max_boxes=3)))
    assert [(p.query_id, p.found) for p in caught.value.problems] == [("rf1", "4 boxes")]


def test_the_box_count_is_written_with_thousands_separators() -> None:
    doc = {"tasks": {"open_vocabulary": [{"query_id": "q", "bbox": _boxes(1_001)}]}}
    with pytest.raises(OVEarthInputError) as caught:
        scorer.check_submission(doc, "s.json", _config(tasks=("vocabulary",)))
    (problem,) = caught.value.problems
    assert problem.expected.startswith("at most 1,000 boxes") and problem.found == "1,001 boxes"


# ---- load_config -------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kind"), [(b"{not json", "JSONDecodeError"),
                                            (b"{}", "KeyError"), (b"[]", "TypeError")])
def test_a_broken_configuration_is_named(tmp_path: Path, text: bytes, kind: str) -> None:
    path = _write(tmp_path / "scoring.json", text)
    with pytest.raises(ValueError, match=f"^{path}: not a scoring configuration \\({kind}: "):
        scorer.load_config(path)


def test_a_configuration_reads_back_with_its_options(tmp_path: Path) -> None:
    config = _config(iou_threshold=0.3, bbox_format="xywh", concave_obb=True,
                     limits=Limits(max_mb=2.0, time_limit_s=9.0, max_boxes=4), gallery=2)
    path = _write(tmp_path / "scoring.json", config.to_json())
    assert scorer.load_config(path) == config


# ---- codabench_main: the compute worker's command ------------------------------------------

def _worker(tmp_path: Path, files: dict[str, bytes], config: HostingConfig | None = None
            ) -> tuple[Path, list[str]]:
    """``input/ref``, ``input/res`` (``files``), ``output`` and ``program/scoring.json``
    laid out as a compute worker does; the argument list of the metadata command."""
    _write(tmp_path / "input" / "ref" / "ground_truth.json", _gt())
    (tmp_path / "input" / "res").mkdir(parents=True)
    for name, data in files.items():
        _write(tmp_path / "input" / "res" / name, data)
    (tmp_path / "output").mkdir()
    conf = _write(tmp_path / "program" / "scoring.json", (config or _config()).to_json())
    return tmp_path, [str(tmp_path / "input"), str(tmp_path / "output"), "--config", str(conf)]


def _json(doc: object) -> bytes:
    return json.dumps(doc).encode()


def test_codabench_writes_the_scores_and_the_report(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    root, argv = _worker(tmp_path, {"run/my.json": _json(PRED)})
    assert scorer.codabench_main(argv) == 0
    out = capsys.readouterr()
    assert sorted(p.name for p in (root / "output").iterdir()) == [
        "detailed_results.html", "scores.json"]
    scores = json.loads((root / "output" / "scores.json").read_text())
    assert list(scores) == list(COLUMNS) and scores == pytest.approx(COLUMNS, abs=1e-12)
    html = (root / "output" / "detailed_results.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "Open vocabulary" in html
    assert out.out == ("ovearth-score: scored my.json: " + ", ".join(
        f"{k} {v:.4f}" for k, v in COLUMNS.items()) + "\n")
    assert out.err == ""


def test_codabench_scores_the_one_json_file_not_hidden_nor_resource_forks(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    broken = b"{broken"
    root, argv = _worker(tmp_path, {"run/my.json": _json(PRED), ".hidden.json": broken,
                                    "__MACOSX/run/._my.json": broken, "run/notes.txt": broken,
                                    "run/.x/other.json": broken})
    assert scorer.codabench_main(argv) == 0
    assert "scored my.json:" in capsys.readouterr().out


@pytest.mark.parametrize(("files", "wanted"), [
    ({"a.json": b"{}", "run/b.json": b"{}"},
     "field (submission): expected one prediction JSON file (e.g. predictions.json) in the "
     "submitted zip, found 2 .json files: a.json, run/b.json"),
    ({"run/notes.txt": b"x"}, "found no .json file (the zip holds: run/notes.txt)"),
    ({"p.json": b'{"tasks": {"open_vocabulary": ['}, "p.json, field (document)"),
    ({"p.json": _json({"tasks": {"referring": [{"query_id": "rf1", "bbox": [[1, 2, 3]]}]}})},
     "query_id rf1"),
])
def test_codabench_rejects_a_bad_submission_with_exit_2_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture, files: dict, wanted: str) -> None:
    root, argv = _worker(tmp_path, files)
    assert scorer.codabench_main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ovearth-score: submission rejected; no scores written\n")
    assert wanted in err, err
    assert "Traceback" not in err and "misconfigured" not in err
    assert list((root / "output").iterdir()) == []


def test_codabench_rejects_boxes_over_the_limit(tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    doc = _pred()
    doc["tasks"]["referring"][0]["bbox"] = _boxes(3)
    config = _config(limits=Limits(max_boxes=2))
    root, argv = _worker(tmp_path, {"p.json": _json(doc)}, config)
    assert scorer.codabench_main(argv) == 2
    assert ("query_id rf1, field bbox: expected at most 2 boxes per query"
            in capsys.readouterr().err)
    assert list((root / "output").iterdir()) == []


@pytest.mark.parametrize("fault", ["no_truth", "bad_truth", "bad_config"])
def test_codabench_blames_a_broken_bundle_with_exit_1(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture,
                                                      fault: str) -> None:
    root, argv = _worker(tmp_path, {"p.json": _json(PRED)})
    gt = root / "input" / "ref" / "ground_truth.json"
    wanted = {"no_truth": f"no reference data at {gt}",
              "bad_truth": "the reference data is not a valid ground truth",
              "bad_config": "not a scoring configuration"}[fault]
    if fault == "no_truth":
        gt.unlink()
    elif fault == "bad_truth":
        gt.write_bytes(b"{not json")
    else:
        (root / "program" / "scoring.json").write_bytes(b"{}")
    assert scorer.codabench_main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("ovearth-score: the scoring program is misconfigured (not the "
                          "submission's fault): ")
    assert wanted in err and "rejected" not in err and "Traceback" not in err
    assert list((root / "output").iterdir()) == []


def test_codabench_warns_of_undefined_columns_and_the_evaluators_warnings(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    doc = _pred()
    doc["tasks"]["open_vocabulary"][2] = _row("ov3", [(A1, 0.4)])
    del doc["tasks"]["referring"][1]
    root, argv = _worker(tmp_path, {"p.json": _json(doc)})
    assert scorer.codabench_main(argv) == 0
    err = capsys.readouterr().err
    assert ("ovearth-score: warning: open_vocabulary_presence_mcc is undefined for this "
            "submission (no value; the leaderboard leaves its cell empty)\n") in err
    assert "ovearth-score: warning: 1 of 2 referring queries have no prediction row" in err
    assert "open_vocabulary_presence_mcc" not in json.loads(
        (root / "output" / "scores.json").read_text())


def test_codabench_writes_both_files_or_neither(tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    """A report that cannot be written (a folder in its place) leaves no scores.json: exit
    1, the bundle's side (the output folder is the platform's)."""
    root, argv = _worker(tmp_path, {"p.json": _json(PRED)})
    (root / "output" / "detailed_results.html").mkdir()
    assert scorer.codabench_main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ovearth-score: cannot write to {root / 'output'}: ")
    assert [p.name for p in (root / "output").iterdir()] == ["detailed_results.html"]
    assert not (root / "output" / "scores.json").exists()


def test_codabench_never_overwrites_its_inputs(tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    """An output folder that is the submission's own, holding a submission named
    scores.json: the submission is an input, refused as a target, and kept."""
    root, argv = _worker(tmp_path, {"scores.json": _json(PRED)})
    argv[1] = str(root / "input" / "res")
    assert scorer.codabench_main(argv) == 1
    assert "cannot write to" in capsys.readouterr().err
    assert json.loads((root / "input" / "res" / "scores.json").read_text()) == PRED
    assert not (root / "input" / "res" / "detailed_results.html").exists()


def test_codabench_needs_its_configuration(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        scorer.codabench_main([str(tmp_path), str(tmp_path)])
    assert caught.value.code == 2


# ---- evaluate: EvalAI -----------------------------------------------------------------------

SPLITS = {"dev": "dev_split", "test": "test_split"}


@pytest.mark.parametrize(("phase", "split"), sorted(SPLITS.items()))
def test_evaluate_returns_the_phases_split(tmp_path: Path, gt: Path, phase: str,
                                           split: str) -> None:
    config = _config(splits=SPLITS)
    out = scorer.evaluate(str(gt), str(_write(tmp_path / "p.json", PRED)), phase,
                          config=config, submission_metadata={"id": 1})
    assert list(out) == ["result", "submission_result"]
    assert out["result"] == [{split: out["submission_result"][split]}]
    assert list(out["submission_result"]) == [split]
    assert out["submission_result"][split] == pytest.approx(COLUMNS, abs=1e-12)


def test_evaluate_refuses_an_unknown_phase(tmp_path: Path, gt: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    out = scorer.evaluate(str(gt), str(_write(tmp_path / "p.json", PRED)), "final",
                          config=_config(splits=SPLITS))
    message = ("ovearth-score: the evaluation script is misconfigured (not the submission's "
               "fault): the phase codename 'final' is none of the configuration's (dev, test)")
    assert out == {"submission_result": {"error": message}}
    assert capsys.readouterr().err == message + "\n"


def test_evaluate_fails_a_bad_submission_without_result(tmp_path: Path, gt: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    sub = _write(tmp_path / "p.json", b"not json")
    out = scorer.evaluate(str(gt), str(sub), "test", config=_config())
    error = out["submission_result"]["error"]
    assert list(out) == ["submission_result"]
    assert error.startswith("ovearth-score: submission rejected; no scores written\n")
    assert f"{sub}, field (document)" in error
    assert capsys.readouterr().err == error + "\n"


def test_evaluate_fails_on_broken_reference_data(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    gt = _write(tmp_path / "gt.json", b"[]")
    out = scorer.evaluate(str(gt), str(_write(tmp_path / "p.json", PRED)), "test",
                          config=_config())
    assert out["submission_result"]["error"].startswith(
        "ovearth-score: the evaluation script is misconfigured (not the submission's fault): "
        "the reference data is not a valid ground truth")
    assert "result" not in out


def test_evaluate_warns_of_an_undefined_column(tmp_path: Path, gt: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    doc = _pred()
    doc["tasks"]["open_vocabulary"][2] = _row("ov3", [(A1, 0.4)])
    out = scorer.evaluate(str(gt), str(_write(tmp_path / "p.json", doc)), "test",
                          config=_config())
    assert "open_vocabulary_presence_mcc" not in out["result"][0]["test_split"]
    assert "open_vocabulary_presence_mcc is undefined" in capsys.readouterr().err


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize("suffix", [".zip", ".ZIP"])
def test_evaluate_scores_a_zipped_submission_as_its_json(tmp_path: Path, gt: Path,
                                                         suffix: str) -> None:
    sub = _write(tmp_path / f"submission{suffix}",
                 _zip({"run/p.json": _json(PRED), "__MACOSX/run/._p.json": b"x"}))
    out = scorer.evaluate(str(gt), str(sub), "test", config=_config())
    assert out["result"][0]["test_split"] == pytest.approx(COLUMNS, abs=1e-12)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gt", f"submission{suffix}"]


def test_evaluate_refuses_a_zipped_file_over_the_limit(tmp_path: Path, gt: Path) -> None:
    data = _json(PRED)
    sub = _write(tmp_path / "s.zip", _zip({"p.json": data}))
    config = _config(limits=Limits(max_mb=(len(data) - 1) / (1024 * 1024)))
    error = scorer.evaluate(str(gt), str(sub), "test", config=config)[
        "submission_result"]["error"]
    assert f"{sub}:p.json, field (file size)" in error


def test_a_non_zip_submission_is_scored_where_it_is(tmp_path: Path) -> None:
    sub = _write(tmp_path / "sub.zip.json", b"{}")
    work = tmp_path / "work"
    work.mkdir()
    assert scorer.unzipped_submission(sub, work, _config()) == sub
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(("member", "written"), [
    ("run/mine.json", "mine.json"), ("run/bad\nname.json", "predictions.json"),
    ("x" * 260 + ".json", "predictions.json")])
def test_a_zipped_json_is_copied_into_the_work_folder_only(tmp_path: Path, member: str,
                                                           written: str) -> None:
    """The member is written inside the work folder (the root of confinement), under its
    base name when that is a usable file name, else ``predictions.json``."""
    sub = _write(tmp_path / "s.zip", _zip({member: b'{"tasks": {}}'}))
    work = tmp_path / "work"
    work.mkdir()
    path = scorer.unzipped_submission(sub, work, _config())
    assert path == work / written and path.read_bytes() == b'{"tasks": {}}'
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(["s.zip", "work", written])


# ---- deadline: the time limit's timer -------------------------------------------------------

@pytest.fixture
def alarm() -> Iterator[None]:
    """The process's SIGALRM handler and timer (pytest-timeout's, when it runs) kept aside
    for the test and put back after it."""
    handler = signal.getsignal(signal.SIGALRM)
    left, interval = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, left, interval)


def test_the_deadline_raises_once_its_time_has_passed(alarm: None) -> None:
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    with pytest.raises(scorer.TimeLimitExceeded), scorer.deadline(0.05):
        time.sleep(2)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL


def test_the_deadline_restores_the_callers_handler_and_pending_timer(alarm: None) -> None:
    """A caller's timer of 10 s, 0.2 s of it spent inside the block: after it, the caller's
    handler is back and its timer has 10 - 0.2 s left, not 10 and not 0."""
    seen: list[str] = []
    signal.signal(signal.SIGALRM, lambda *a: seen.append("caller"))
    signal.setitimer(signal.ITIMER_REAL, 10)
    with scorer.deadline(5):
        time.sleep(0.2)
    left = signal.getitimer(signal.ITIMER_REAL)[0]
    signal.setitimer(signal.ITIMER_REAL, 0)
    assert 9.0 < left <= 9.81
    signal.getsignal(signal.SIGALRM)(0, None)
    assert seen == ["caller"]


def test_the_deadline_leaves_no_timer_when_the_caller_had_none(alarm: None) -> None:
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    with scorer.deadline(5):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL


def test_off_the_main_thread_the_deadline_says_it_is_not_enforced(
        capsys: pytest.CaptureFixture) -> None:
    ran: list[bool] = []

    def body() -> None:
        with scorer.deadline(0.01):
            time.sleep(0.05)
            ran.append(True)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert ran == [True]
    assert capsys.readouterr().err == ("ovearth-score: warning: the 0.01 s time limit is not "
                                       "enforced outside the main thread\n")


def test_find_submission_is_the_archives_walk(tmp_path: Path) -> None:
    _write(tmp_path / "a" / "p.json", b"{}")
    _write(tmp_path / "a" / "n.txt", b"")
    assert scorer.find_submission(tmp_path) == tmp_path / "a" / "p.json"
    assert os.path.commonpath([scorer.find_submission(tmp_path), tmp_path]) == str(tmp_path)
