"""The hosted leaderboard's scoring configuration, rule by rule (issue 47, mutation testing of
``ovearth_core/hosting/config.py``).

Expected values are written out here: the columns' keys, paths and titles by hand from the
spec's output keys, the limits in bytes by arithmetic, an older ``scoring.json`` by the
fields it had. Each test's docstring names the rule; the mutants it was written for are
listed in docs/tests.md ("Mutation testing").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from ovearth_core.hosting import scorer
from ovearth_core.hosting.config import (
    Column,
    HostingConfig,
    Limits,
    applies,
    default_columns,
    truth_modalities,
)
from ovearth_core.io import parse_ground_truth
from ovearth_core.options import Options


def test_the_size_limit_is_mebibytes_of_the_json_file() -> None:
    """``max_bytes`` is ``max_mb`` mebibytes (1,048,576 bytes each), rounded down."""
    assert Limits().max_bytes == 200 * 1_048_576
    assert Limits(max_mb=1.5).max_bytes == 1_572_864
    assert Limits(max_mb=0.000001).max_bytes == 1  # 1.048576 bytes, rounded down


@pytest.mark.parametrize(("task", "metric", "key", "path", "title"), [
    ("vocabulary", "presence_mcc", "open_vocabulary_presence_mcc",
     ("open_vocabulary", "presence", "mcc"), "Open vocabulary: Presence MCC"),
    ("referring", "seg_macro_miou", "referring_seg_macro_miou",
     ("referring", "seg", "positive_macro_miou"), "Referring: Segmentation macro mIoU"),
    ("reasoning", "oriented_bbox_micro_f1", "reasoning_oriented_bbox_micro_f1",
     ("reasoning", "oriented_bbox", "positive_micro_f1"), "Reasoning: OBB micro F1"),
    ("referring", "bbox_mean_micro_f1", "referring_bbox_mean_micro_f1",
     ("referring", "bbox", "positive_mean_micro_f1@[0.5:0.95]"),
     "Referring: HBB micro F1@[.5:.95]"),
])
def test_a_summary_column_is_its_tasks_block_and_metric(task: str, metric: str, key: str,
                                                        path: tuple, title: str) -> None:
    """A column's key is ``<task as the JSON names it>_<metric>``; its value is
    ``summary[block][metric]`` of that task; its title ``<Task>: <block> <metric>``."""
    column = Column(task, metric)
    assert (column.key, column.path, column.title) == (key, path, title)
    assert column.average_precision is False


@pytest.mark.parametrize(("task", "metric", "path", "title"), [
    ("reasoning", "oriented_bbox_dota_map", ("reasoning", "oriented_bbox",
                                              "voc_devkit.map_11_point"),
     "Reasoning: OBB DOTA mAP (VOC07)"),
    ("vocabulary", "bbox_coco_map", ("open_vocabulary", "bbox", "coco.map@[0.5:0.95]"),
     "Open vocabulary: HBB mAP@[.5:.95]"),
])
def test_an_average_precision_column_is_read_from_the_ap_report(task: str, metric: str,
                                                                path: tuple,
                                                                title: str) -> None:
    """An AP column's path is (task key, box modality, key of the AP report), not a summary
    metric; its title names the modality and the AP's label."""
    column = Column(task, metric)
    assert column.average_precision is True
    assert (column.path, column.title) == (path, title)
    assert column.key == f"{path[0]}_{metric}"


@pytest.mark.parametrize(("task", "metric", "modalities", "expected"), [
    ("vocabulary", "presence_mcc", (), True),  # presence needs no modality
    ("referring", "presence_mcc", ("segmentation", "bbox", "oriented_bbox"), False),
    ("reasoning", "presence_mcc", ("bbox",), False),
    ("referring", "seg_macro_miou", ("segmentation",), True),
    ("vocabulary", "seg_macro_miou", ("bbox", "oriented_bbox"), False),
    ("reasoning", "oriented_bbox_micro_f1", ("oriented_bbox",), True),
    ("reasoning", "oriented_bbox_micro_f1", ("bbox",), False),
    ("referring", "bbox_ap", ("oriented_bbox",), False),
    ("referring", "bbox_ap", ("segmentation", "bbox"), True),
    ("vocabulary", "oriented_bbox_coco_map", ("oriented_bbox",), True),
    ("vocabulary", "oriented_bbox_coco_map", ("bbox", "segmentation"), False),
])
def test_a_metric_applies_to_a_task_on_modalities(task: str, metric: str, modalities: tuple,
                                                  expected: bool) -> None:
    """Presence exists in the open-vocabulary task only (whatever the modalities); any other
    metric, AP included, when its block's modality is scored."""
    assert applies(task, metric, modalities) is expected


def _rle(box: tuple[int, int, int, int], size: int = 8) -> dict[str, Any]:
    m = np.zeros((size, size), dtype=np.uint8, order="F")
    x0, y0, x1, y1 = box
    m[y0:y1, x0:x1] = 1
    rle = mask_utils.encode(m)
    return {"size": list(rle["size"]), "counts": rle["counts"].decode()}


def _truth(anns: dict[str, dict[str, Any]], tasks: dict[str, list[tuple[str, str, bool]]]
           ) -> Any:
    """A ground truth of 8 x 8 images: ``anns`` by id ({"mask", "bbox", "obb"} flags),
    ``tasks`` by JSON key: (query_id, ann_id, negative)."""
    doc_anns = [{"id": ann_id, "image_path": "i.png", "width": 8, "height": 8,
                 "category_name": "plane",
                 "segmentation": _rle((1, 1, 4, 5)) if a.get("mask") else None,
                 "bbox": [[1, 1, 3, 4]] if a.get("bbox") else [],
                 "oriented_bbox": [[[1, 1], [4, 1], [4, 5], [1, 5]]] if a.get("obb") else []}
                for ann_id, a in anns.items()]
    doc_tasks = {}
    for key, rows in tasks.items():
        doc_tasks[key] = [{"query_id": q, "ann_id": a, "phrase": "plane",
                           "type": "negative" if neg else "positive"} if key == "open_vocabulary"
                          else {"query_id": q, "ann_id": a, "query": "the plane"}
                          for q, a, neg in rows]
    return parse_ground_truth({"annotations": doc_anns, "tasks": doc_tasks}, "gt.json")


def test_the_truths_modalities_are_those_of_the_scored_tasks_positive_queries() -> None:
    """A modality counts when some positive query of a scored task has such a target: not a
    negative query's annotation, not another task's; in segmentation, bbox, oriented_bbox
    order whatever the annotations' order."""
    gt = _truth({"obb": {"obb": True}, "box": {"bbox": True}, "mask": {"mask": True},
                 "all": {"mask": True, "bbox": True, "obb": True}},
                {"open_vocabulary": [("ov1", "obb", False), ("ov2", "box", False),
                                     ("ov3", "mask", True)],
                 "referring": [("rf1", "all", False)],
                 "reasoning": [("rs1", "mask", False)]})
    assert truth_modalities(gt, ["vocabulary"]) == ("bbox", "oriented_bbox")
    assert truth_modalities(gt, ["reasoning"]) == ("segmentation",)
    assert truth_modalities(gt, ["referring"]) == ("segmentation", "bbox", "oriented_bbox")
    assert truth_modalities(gt, ["reasoning", "vocabulary"]) == (
        "segmentation", "bbox", "oriented_bbox")
    only_obb = _truth({"obb": {"obb": True}}, {"referring": [("rf1", "obb", False)]})
    assert truth_modalities(only_obb, ["referring"]) == ("oriented_bbox",)
    assert truth_modalities(only_obb, ["vocabulary"]) == ()  # a task without queries


def test_default_columns_are_task_by_task_each_metric_that_applies() -> None:
    """Columns go task by task, in the metrics' order within a task; a metric that applies to
    no task is left out (not strict)."""
    columns = default_columns(["referring", "vocabulary"], ["bbox", "oriented_bbox"])
    assert [(c.task, c.metric) for c in columns] == [
        ("referring", "bbox_micro_f1"), ("referring", "oriented_bbox_micro_f1"),
        ("vocabulary", "presence_mcc"), ("vocabulary", "bbox_micro_f1"),
        ("vocabulary", "oriented_bbox_micro_f1")]
    chosen = default_columns(["vocabulary"], ["segmentation"],
                             ["seg_micro_miou", "bbox_ap", "presence_mcc"])
    assert [c.metric for c in chosen] == ["seg_micro_miou", "presence_mcc"]


def test_an_unknown_metric_is_refused_naming_it_and_every_known_name() -> None:
    """The refusal names each unknown metric and lists the summary metrics, then the AP
    ones (whether asked strictly or not)."""
    with pytest.raises(ValueError) as err:
        default_columns(["vocabulary"], ["bbox"], ["bbox_micro_f1", "f2", "bbox_map"])
    text = str(err.value)
    assert text.startswith("unknown metric f2, bbox_map; expected one of presence_mcc, "
                           "seg_macro_precision, ")
    assert ", oriented_bbox_mean_micro_f1, bbox_ap, bbox_coco_map, " in text
    assert text.endswith(", oriented_bbox_aitod_map")


def test_strict_columns_refuse_a_metric_that_applies_to_no_task() -> None:
    """Asked by name (``strict``), a metric that applies to none of the tasks is refused,
    naming it, the tasks and the modalities; one that applies to some task is kept."""
    with pytest.raises(ValueError) as err:
        default_columns(["referring", "reasoning"], ["bbox", "segmentation"],
                        ["bbox_micro_f1", "presence_mcc", "oriented_bbox_ap"], strict=True)
    assert str(err.value) == ("metric presence_mcc, oriented_bbox_ap applies to none of the "
                              "tasks (referring, reasoning) on the modalities bbox, "
                              "segmentation")
    kept = default_columns(["referring", "vocabulary"], ["bbox"],
                           ["presence_mcc", "bbox_micro_f1"], strict=True)
    assert [c.key for c in kept] == ["referring_bbox_micro_f1", "open_vocabulary_presence_mcc",
                                     "open_vocabulary_bbox_micro_f1"]


def test_tasks_are_command_line_names_once_each_in_the_given_order() -> None:
    """Tasks may be given as the JSON names them (``open_vocabulary``): stored by their
    command-line names, repeats dropped, the first occurrence's order kept; the default
    columns follow them."""
    config = HostingConfig(("reasoning", "open_vocabulary", "reasoning", "vocabulary"),
                           Options("reasoning", "bbox"))
    assert config.tasks == ("reasoning", "vocabulary")
    assert [c.key for c in config.columns] == [
        "reasoning_bbox_micro_f1", "open_vocabulary_presence_mcc",
        "open_vocabulary_bbox_micro_f1"]
    assert config.limits == Limits() and config.gallery == 0
    assert config.splits == {"test": "test_split"}


@pytest.mark.parametrize(("tasks", "found"), [
    (("vocabulary", "ranking", "x"), "ranking, x"), ((), "none")])
def test_unknown_or_no_tasks_are_refused_naming_them(tasks: tuple, found: str) -> None:
    with pytest.raises(ValueError) as err:
        HostingConfig(tasks, Options("vocabulary", "bbox"))
    assert str(err.value) == ("tasks: expected some of vocabulary, referring, reasoning, "
                              f"found {found}")


def test_auto_and_unknown_modalities_are_refused() -> None:
    """Every submission is scored on the same declared modalities: ``auto`` is refused, so is
    a name that is no modality (named, with the three that are)."""
    with pytest.raises(ValueError) as err:
        HostingConfig(("vocabulary",), Options("vocabulary", "auto"))
    assert str(err.value) == ("modalities: expected them declared (segmentation, bbox, "
                              "oriented_bbox); a leaderboard scores every submission on the "
                              "same modalities, so auto is refused")
    with pytest.raises(ValueError) as err:
        HostingConfig(("vocabulary",), Options("vocabulary", ("bbox", "mask", "obb")))
    assert str(err.value) == ("modalities: expected some of segmentation, bbox, "
                              "oriented_bbox, found mask, obb")


def test_a_config_without_any_column_is_refused() -> None:
    """Referring on masks alone has columns (its mIoU); no default column of referring or
    reasoning applies to no modality at all: refused naming the tasks and modalities."""
    assert [c.key for c in HostingConfig(("referring",), Options("referring",
                                                                 ("segmentation",))).columns
            ] == ["referring_seg_macro_miou"]
    with pytest.raises(ValueError) as err:
        HostingConfig(("referring", "reasoning"), Options("referring", ()))
    assert str(err.value) == ("columns: expected a leaderboard column that applies to the "
                              "tasks referring, reasoning on the modalities (none), found "
                              "none")


def test_nms_ap_needs_hard_negatives_and_protocol_columns_their_option() -> None:
    """NMS-AP suppresses negative queries' boxes, so it needs ``hard_negatives``; a column of
    NMS-AP or AI-TOD needs its own option on (each named); the plain COCO mAP needs none."""
    with pytest.raises(ValueError) as err:
        HostingConfig(("vocabulary",), Options("vocabulary", "bbox", nms_ap=True))
    assert str(err.value) == ("nms_ap: NMS-AP needs hard_negatives (it suppresses the boxes "
                              "of negative queries), found hard_negatives off")
    columns = (Column("vocabulary", "bbox_nms_map"), Column("referring", "oriented_bbox_aitod_map"),
               Column("vocabulary", "bbox_coco_map"))
    with pytest.raises(ValueError) as err:
        HostingConfig(("vocabulary", "referring"), Options("vocabulary", "bbox,oriented_bbox"),
                      columns)
    assert str(err.value) == ("columns: open_vocabulary_bbox_nms_map, "
                              "referring_oriented_bbox_aitod_map need their protocol on "
                              "(nms_ap for *_nms_map, aitod for *_aitod_map)")
    with pytest.raises(ValueError, match="^columns: referring_oriented_bbox_aitod_map need"):
        HostingConfig(("vocabulary", "referring"),
                      Options("vocabulary", "bbox,oriented_bbox", hard_negatives=True,
                              nms_ap=True), columns)
    with pytest.raises(ValueError, match="^columns: open_vocabulary_bbox_nms_map need"):
        HostingConfig(("vocabulary", "referring"),
                      Options("vocabulary", "bbox,oriented_bbox", aitod=True), columns)
    both = HostingConfig(("vocabulary", "referring"),
                         Options("vocabulary", "bbox,oriented_bbox", hard_negatives=True,
                                 nms_ap=True, aitod=True), columns)
    assert both.columns == columns


def test_task_options_replace_the_task_only() -> None:
    options = Options("vocabulary", "bbox", 0.3, 0.2, "xywh", hard_negatives=True)
    config = HostingConfig(("vocabulary", "reasoning"), options)
    got = config.task_options("reasoning")
    assert got.task == "reasoning" and config.options.task == "vocabulary"
    assert (got.modalities, got.iou_threshold, got.score_threshold, got.bbox_format,
            got.hard_negatives) == (("bbox",), 0.3, 0.2, "xywh", True)


def _every_field_off_default() -> HostingConfig:
    """A configuration whose every field differs from its default."""
    options = Options("referring", "oriented_bbox,bbox", 0.3, 0.25, "xywh",
                      hard_negatives=True, max_detections=30, large_masks=True,
                      concave_obb=True, nms_ap=True, aitod=True)
    return HostingConfig(("referring", "vocabulary"), options,
                         (Column("vocabulary", "bbox_nms_map"),
                          Column("referring", "oriented_bbox_micro_f1")),
                         Limits(3.5, 12.0, 7), 4, {"dev": "dev_split", "final": "f_split"})


def test_scoring_json_holds_every_field_by_name() -> None:
    """``to_json`` writes each field under its own name: the options' values (modalities in
    the order given), each column with its key, the limits, the gallery and the splits."""
    assert _every_field_off_default().to_json() == {
        "tasks": ["referring", "vocabulary"], "modalities": ["oriented_bbox", "bbox"],
        "iou_threshold": 0.3, "score_threshold": 0.25, "bbox_format": "xywh",
        "large_masks": True, "concave_obb": True, "hard_negatives": True,
        "max_detections": 30, "nms_ap": True, "aitod": True,
        "columns": [{"key": "open_vocabulary_bbox_nms_map", "task": "vocabulary",
                     "metric": "bbox_nms_map"},
                    {"key": "referring_oriented_bbox_micro_f1", "task": "referring",
                     "metric": "oriented_bbox_micro_f1"}],
        "limits": {"max_mb": 3.5, "time_limit_s": 12.0, "max_boxes": 7},
        "gallery": 4, "splits": {"dev": "dev_split", "final": "f_split"}}


def test_scoring_json_reads_back_as_the_same_configuration_field_by_field() -> None:
    """A bundle keeps every field of its configuration: read back, each one is the one
    written (the options' task is the first task)."""
    config = _every_field_off_default()
    back = HostingConfig.from_json(config.to_json())
    o = back.options
    assert back.tasks == ("referring", "vocabulary") and o.task == "referring"
    assert (o.modalities, o.iou_threshold, o.score_threshold, o.bbox_format) == (
        ("oriented_bbox", "bbox"), 0.3, 0.25, "xywh")
    assert (o.large_masks, o.concave_obb, o.hard_negatives, o.max_detections, o.nms_ap,
            o.aitod) == (True, True, True, 30, True, True)
    assert back.columns == config.columns
    assert back.limits == Limits(3.5, 12.0, 7)
    assert back.gallery == 4 and back.splits == {"dev": "dev_split", "final": "f_split"}
    assert back == config


OLDER = {"tasks": ["vocabulary"], "modalities": ["bbox"], "iou_threshold": 0.5,
         "score_threshold": None, "bbox_format": "xyxy",
         "columns": [{"key": "open_vocabulary_bbox_micro_f1", "task": "vocabulary",
                      "metric": "bbox_micro_f1"}],
         "limits": {"max_mb": 200.0, "time_limit_s": 540.0, "max_boxes": 1000},
         "gallery": 0, "splits": {"test": "test_split"}}


def test_an_older_scoring_json_reads_each_later_option_as_the_specs_rule() -> None:
    """A ``scoring.json`` written before the extensions existed has none of their keys:
    each reads as off, and the detection cap as COCO's 100."""
    o = HostingConfig.from_json(OLDER).options
    assert (o.large_masks, o.concave_obb, o.hard_negatives, o.nms_ap, o.aitod,
            o.max_detections) == (False, False, False, False, False, 100)
    for key in ("large_masks", "concave_obb", "hard_negatives", "aitod"):
        assert getattr(HostingConfig.from_json({**OLDER, key: True}).options, key) is True


@pytest.mark.parametrize("key", ["large_masks", "concave_obb", "hard_negatives", "nms_ap",
                                 "aitod"])
@pytest.mark.parametrize("value", [1, "true", None])
def test_a_flag_that_is_not_a_boolean_is_refused_naming_it(key: str, value: object) -> None:
    with pytest.raises(TypeError) as err:
        HostingConfig.from_json({**OLDER, key: value})
    assert str(err.value) == f"{key}: expected true or false, found {value!r}"


@pytest.mark.parametrize(("cap", "ok"), [(10, True), (9, False), (10.0, False), (True, False),
                                         ("30", False), (1500, True)])
def test_the_detection_cap_is_a_whole_number_of_at_least_ten(cap: object, ok: bool) -> None:
    """COCOeval evaluates a cap below 10 at 10: the cap is an integer (not a float, not a
    boolean) of at least 10."""
    doc = {**OLDER, "max_detections": cap}
    if ok:
        assert HostingConfig.from_json(doc).options.max_detections == cap
        return
    with pytest.raises(TypeError) as err:
        HostingConfig.from_json(doc)
    assert str(err.value) == ("max_detections: expected a whole number of at least 10, "
                              f"found {cap!r}")


def test_a_broken_scoring_json_is_refused_naming_the_file_and_field(tmp_path: Path) -> None:
    """Through the scorer's reader, a refusal names the file, then the field, what was
    expected and what was found."""
    path = tmp_path / "scoring.json"
    path.write_text('{"tasks": ["vocabulary"], "max_detections": 5}')
    with pytest.raises(ValueError) as err:
        scorer.load_config(path)
    assert str(err.value) == (f"{path}: not a scoring configuration (TypeError: "
                              "max_detections: expected a whole number of at least 10, "
                              "found 5)")

