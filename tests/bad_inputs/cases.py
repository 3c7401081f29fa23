"""The bad-input corpus: one row per invalid input, with the exact problem expected.

Every row names the file the problem belongs to (``gt``, ``pred`` or ``options``),
the exact field path, the query_id where there is one and a substring of the
``expected`` text. Documents are the valid ones of ``docs_helpers`` with one
thing broken, or raw bytes. Spec sections are quoted in ``spec``.

Rows with ``cli=True`` are also run through the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from docs_helpers import LD_MASK_A1, LD_POLY_A1, ld_compressed, ld_copy, ld_gt, ld_pred, ld_runs

DELETE = object()

S_PRED = "Data Formats / Prediction File"
S_TOP = "Data Formats / Top-Level and Common Fields"
S_SEG = "Data Formats / Segmentation"
S_BOX = "Data Formats / Axis-Aligned Bounding Boxes"
S_OBB = "Data Formats / Oriented Bounding Boxes"
S_SCORE = "Data Formats / Confidence Filtering"
S_MOD = "Data Formats / Modalities, Empty Predictions, and Duplicate IDs"
S_GT = "Data Formats / Ground Truth"
S_CLI = "Command-Line Interface"


@dataclass(frozen=True)
class BadCase:
    id: str
    file: str  # "gt", "pred" or "options"
    field: str
    expected: str  # substring of Problem.expected
    query_id: str | None = None
    spec: str = S_PRED
    gt: Any = None  # None: the valid ground truth; dict or bytes otherwise
    pred: Any = None  # None: the valid predictions; dict or bytes otherwise
    api_pred: dict[str, Any] | None = None  # handed over in memory (values JSON cannot hold)
    task: str = "vocabulary"
    modalities: str = "segmentation,bbox,oriented_bbox"
    score_threshold: float | None = None
    bbox_format: str = "xyxy"
    iou_threshold: float = 0.5
    count: int = 1
    cli: bool = False


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = ld_copy(doc)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


def gt_set(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    return _set(ld_gt(), path, value)


def pred_set(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    return _set(ld_pred(), path, value)


def ov(*rows: dict[str, Any]) -> dict[str, Any]:
    """A prediction document whose open-vocabulary list is exactly ``rows``."""
    return {"tasks": {"open_vocabulary": list(rows)}}


def row(**fields: Any) -> dict[str, Any]:
    return {"query_id": "ov1", **fields}


SEG_OK = {"size": [4, 6], "counts": ld_runs(LD_MASK_A1)}
OV0 = "tasks.open_vocabulary[0]"
A3 = ("annotations", 2)
A3F = "annotations[2]"

_deep = b"[" * 1100 + b"]" * 1100
# Nesting orjson accepts (under 1024) but deeper than Python's default recursion limit.
_nested_box = (b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": ['
               + b"[" * 990 + b"1" + b"]" * 990 + b"]}]}}")

CASES: list[BadCase] = [
    # --- the document itself -------------------------------------------------------------
    BadCase("pred-empty-file", "pred", "(document)", "valid UTF-8 JSON", pred=b"", cli=True),
    BadCase("pred-truncated", "pred", "(document)", "valid UTF-8 JSON",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[1, 2',
            cli=True),
    BadCase("pred-broken-syntax", "pred", "(document)", "JSON", pred=b'{"tasks": }'),
    BadCase("pred-trailing-comma", "pred", "(document)", "JSON",
            pred=b'{"tasks": {"open_vocabulary": [],}}'),
    BadCase("pred-single-quotes", "pred", "(document)", "JSON", pred=b"{'tasks': {}}"),
    # NaN, Infinity and 1e400, as json.dump writes them by default: located like any other
    # non-finite value (issue 18), not as "line 1 column 191".
    BadCase("pred-nan-token", "pred", f"{OV0}.bbox[0][0]", "finite JSON number", "ov1",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", '
                 b'"bbox": [[NaN, 1, 4, 3]]}]}}', cli=True),
    BadCase("pred-infinity-token", "pred", f"{OV0}.bbox[0].score", "finite JSON number", "ov1",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", '
                 b'"bbox": [{"bbox": [1, 1, 4, 3], "score": Infinity}]}]}}', cli=True),
    BadCase("pred-minus-infinity-token", "pred", f"{OV0}.bbox[0][0]", "finite JSON number",
            "ov1", pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", '
                        b'"bbox": [[-Infinity, 1, 4, 3]]}]}}'),
    BadCase("pred-number-overflows-double", "pred", f"{OV0}.bbox[0][0]", "finite JSON number",
            "ov1", pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", '
                        b'"bbox": [[1e400, 1, 4, 3]]}]}}', cli=True),
    BadCase("pred-negative-number-overflows-double", "pred", f"{OV0}.oriented_bbox[0][1][0]",
            "finite JSON number", "ov1",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "oriented_bbox": '
                 b'[[[0, 0], [-2.5E+999, 0], [4, 4], [0, 4]]]}]}}'),
    BadCase("pred-integer-overflows-double", "pred", f"{OV0}.segmentation.size[0]",
            "finite JSON number", "ov1",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "segmentation": '
                 b'{"size": [' + b"9" * 400 + b', 6], "counts": [24]}}]}}'),
    BadCase("pred-nan-in-segmentation-counts", "pred", f"{OV0}.segmentation.counts[1]",
            "finite JSON number", "ov1",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "segmentation": '
                 b'{"size": [4, 6], "counts": [7, NaN, 10]}}]}}'),
    BadCase("pred-nan-in-ignored-field", "pred", f"{OV0}.debug.loss", "finite JSON number",
            "ov1", pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "debug": '
                        b'{"loss": NaN}}]}}'),
    BadCase("pred-nan-outside-rows", "pred", "meta.scores[0]", "finite JSON number",
            pred=b'{"meta": {"scores": [NaN]}, "tasks": {}}'),
    BadCase("pred-nan-in-second-row", "pred", "tasks.open_vocabulary[1].bbox[0].score",
            "finite JSON number", "ov3",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": []}, '
                 b'{"query_id": "ov3", "bbox": [{"bbox": [0, 0, 2, 1], "score": NaN}]}]}}'),
    BadCase("pred-nan-and-infinity-every-one", "pred", f"{OV0}.bbox[0][0]",
            "finite JSON number", "ov1", count=3,
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", '
                 b'"bbox": [[NaN, 1, 4, 3], {"bbox": [1, 1, 4, 3], "score": -Infinity}], '
                 b'"oriented_bbox": [[[0, 0], [1e999, 0], [4, 4], [0, 4]]]}]}}'),
    BadCase("pred-nan-as-top-level", "pred", "(document)", "finite JSON number", pred=b"NaN"),
    BadCase("pred-nan-token-and-syntax-error", "pred", "(document)", "valid UTF-8 JSON",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[NaN,, 1]]}]}}'),
    BadCase("pred-nan-lowercase", "pred", "(document)", "valid UTF-8 JSON",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[nan, 1]]}]}}'),
    BadCase("gt-nan-token", "gt", "annotations[0].bbox[0][2]", "finite JSON number", spec=S_GT,
            gt=orjson.dumps(ld_gt()).replace(b"[[1,1,3,2]]", b"[[1,1,NaN,2]]"), cli=True),
    BadCase("gt-infinity-in-query", "gt", "tasks.referring[0].ann_id", "finite JSON number",
            "ref1", S_GT, gt=orjson.dumps(gt_set(("tasks", "referring", 0, "ann_id"), 7))
            .replace(b'"ann_id":7', b'"ann_id":Infinity')),
    BadCase("pred-non-utf8", "pred", "(document)", "UTF-8",
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov\xff1"}]}}', cli=True),
    BadCase("pred-utf16", "pred", "(document)", "UTF-8",
            pred='{"tasks": {}}'.encode("utf-16")),
    BadCase("pred-deep-nesting", "pred", "(document)", "nesting", pred=_deep, cli=True),
    BadCase("pred-top-level-list", "pred", "(document)", "a JSON object at the top level",
            pred=b"[]", cli=True),
    BadCase("pred-top-level-string", "pred", "(document)", "a JSON object at the top level",
            pred=b'"tasks"'),
    BadCase("pred-top-level-number", "pred", "(document)", "a JSON object at the top level",
            pred=b"3"),
    BadCase("pred-top-level-null", "pred", "(document)", "a JSON object at the top level",
            pred=b"null"),
    BadCase("gt-empty-file", "gt", "(document)", "valid UTF-8 JSON", spec=S_GT, gt=b"",
            cli=True),
    BadCase("gt-top-level-list", "gt", "(document)", "a JSON object", spec=S_GT, gt=b"[1]"),
    BadCase("gt-truncated", "gt", "(document)", "JSON", spec=S_GT, gt=b'{"annotations": ['),
    # --- tasks and rows ----------------------------------------------------------------
    BadCase("pred-tasks-list", "pred", "tasks", "an object", spec=S_TOP, pred={"tasks": []},
            cli=True),
    BadCase("pred-tasks-string", "pred", "tasks", "an object", spec=S_TOP,
            pred={"tasks": "open_vocabulary"}),
    BadCase("pred-tasks-number", "pred", "tasks", "an object", spec=S_TOP, pred={"tasks": 0}),
    BadCase("pred-task-list-object", "pred", "tasks.open_vocabulary", "a list", spec=S_TOP,
            pred={"tasks": {"open_vocabulary": {"query_id": "ov1"}}}, cli=True),
    BadCase("pred-task-list-string", "pred", "tasks.referring", "a list", spec=S_TOP,
            task="referring", pred={"tasks": {"referring": "ref1"}}),
    BadCase("pred-row-string", "pred", OV0, "a prediction row object", spec=S_TOP,
            pred=ov("ov1")),
    BadCase("pred-row-null", "pred", OV0, "a prediction row object", spec=S_TOP,
            pred=ov(None)),
    BadCase("pred-row-list", "pred", OV0, "a prediction row object", spec=S_TOP,
            pred=ov(["ov1"])),
    BadCase("pred-query-id-missing", "pred", f"{OV0}.query_id", "string", spec=S_TOP,
            pred=ov({"bbox": []}), cli=True),
    BadCase("pred-query-id-int", "pred", f"{OV0}.query_id", "string", spec=S_TOP,
            pred=ov({"query_id": 1})),
    BadCase("pred-query-id-null", "pred", f"{OV0}.query_id", "string", spec=S_TOP,
            pred=ov({"query_id": None})),
    BadCase("pred-query-id-list", "pred", f"{OV0}.query_id", "string", spec=S_TOP,
            pred=ov({"query_id": ["ov1"]})),
    BadCase("pred-unknown-query-id", "pred", f"{OV0}.query_id", "query_id of the ground truth",
            query_id="ov999", spec=S_TOP, pred=ov(row(query_id="ov999")), cli=True),
    BadCase("pred-query-id-of-other-task", "pred", f"{OV0}.query_id",
            "query_id of the ground truth", query_id="ref1", spec=S_TOP,
            pred=ov(row(query_id="ref1"))),
    BadCase("pred-unknown-query-id-referring", "pred", "tasks.referring[1].query_id",
            "query_id of the ground truth", query_id="ov1", spec=S_TOP, task="referring",
            pred={"tasks": {"referring": [*ld_pred()["tasks"]["referring"], {"query_id": "ov1"}]}}),
    # --- segmentation ------------------------------------------------------------------
    BadCase("seg-string", "pred", f"{OV0}.segmentation", "COCO RLE object", "ov1", S_SEG,
            pred=ov(row(segmentation="aR\\R1")), cli=True),
    BadCase("seg-list", "pred", f"{OV0}.segmentation", "COCO RLE object", "ov1", S_SEG,
            pred=ov(row(segmentation=[2, 1, 3]))),
    BadCase("seg-number", "pred", f"{OV0}.segmentation", "COCO RLE object", "ov1", S_SEG,
            pred=ov(row(segmentation=0))),
    BadCase("seg-size-missing", "pred", f"{OV0}.segmentation.size", "present", "ov1", S_SEG,
            pred=ov(row(segmentation={"counts": [24]}))),
    BadCase("seg-counts-missing", "pred", f"{OV0}.segmentation.counts", "present", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": [4, 6]}))),
    BadCase("seg-size-one-number", "pred", f"{OV0}.segmentation.size", "[height, width]",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [24], "counts": [24]})), cli=True),
    BadCase("seg-size-three-numbers", "pred", f"{OV0}.segmentation.size", "[height, width]",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [4, 6, 1], "counts": [24]}))),
    BadCase("seg-size-strings", "pred", f"{OV0}.segmentation.size", "[height, width]", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": ["4", "6"], "counts": [24]}))),
    BadCase("seg-size-floats", "pred", f"{OV0}.segmentation.size", "integers", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4.0, 6.0], "counts": [24]}))),
    BadCase("seg-size-negative", "pred", f"{OV0}.segmentation.size", "non-negative", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": [-4, -6], "counts": [24]}))),
    BadCase("seg-size-boolean", "pred", f"{OV0}.segmentation.size", "integers", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [True, 6], "counts": [6]}))),
    BadCase("seg-size-string", "pred", f"{OV0}.segmentation.size", "[height, width]", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": "4x6", "counts": [24]}))),
    BadCase("seg-size-object", "pred", f"{OV0}.segmentation.size", "[height, width]", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": {"h": 4, "w": 6}, "counts": [24]}))),
    BadCase("seg-size-huge", "pred", f"{OV0}.segmentation.size", "536,870,911", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [30000, 20000], "counts": [600_000_000]})),
            cli=True),
    BadCase("seg-size-just-over-cap", "pred", f"{OV0}.segmentation.size", "536,870,911", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": [32768, 16384], "counts": "0"}))),
    BadCase("seg-size-astronomic", "pred", f"{OV0}.segmentation.size", "536,870,911", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": [2**62, 2**62], "counts": []}))),
    BadCase("seg-size-not-gt", "pred", f"{OV0}.segmentation.size", "ground-truth mask size",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [6, 4], "counts": [24]})),
            cli=True),
    BadCase("seg-all-zero-size-not-gt", "pred", f"{OV0}.segmentation.size",
            "ground-truth mask size", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [3, 5], "counts": [15]}))),
    BadCase("seg-counts-number", "pred", f"{OV0}.segmentation.counts",
            "compressed RLE string or a list", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": 24})), cli=True),
    BadCase("seg-counts-null", "pred", f"{OV0}.segmentation.counts",
            "compressed RLE string or a list", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": None}))),
    BadCase("seg-counts-object", "pred", f"{OV0}.segmentation.counts",
            "compressed RLE string or a list", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": {"0": 24}}))),
    BadCase("seg-counts-negative", "pred", f"{OV0}.segmentation.counts", "non-negative", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": [4, 6], "counts": [30, -6]}))),
    BadCase("seg-counts-float", "pred", f"{OV0}.segmentation.counts", "integer", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": [20.0, 4]}))),
    BadCase("seg-counts-string-element", "pred", f"{OV0}.segmentation.counts", "integer",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [4, 6], "counts": ["24"]}))),
    BadCase("seg-counts-boolean-element", "pred", f"{OV0}.segmentation.counts", "integer",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [4, 6], "counts": [23, True]}))),
    BadCase("seg-counts-nested-list", "pred", f"{OV0}.segmentation.counts", "integer",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [4, 6], "counts": [[24]]}))),
    BadCase("seg-runs-sum-short", "pred", f"{OV0}.segmentation.counts", "height*width = 24",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [4, 6], "counts": [7, 6, 10]})),
            cli=True),
    BadCase("seg-runs-sum-long", "pred", f"{OV0}.segmentation.counts", "height*width = 24",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [4, 6], "counts": [7, 6, 12]}))),
    BadCase("seg-runs-empty-list", "pred", f"{OV0}.segmentation.counts", "height*width = 24",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [4, 6], "counts": []}))),
    BadCase("seg-compressed-bad-character", "pred", f"{OV0}.segmentation.counts",
            "compressed RLE string", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": "5 6"})), cli=True),
    BadCase("seg-compressed-char-above-o", "pred", f"{OV0}.segmentation.counts",
            "compressed RLE string", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": "p"}))),
    BadCase("seg-compressed-non-ascii", "pred", f"{OV0}.segmentation.counts",
            "compressed RLE string", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [1, 15], "counts": "\u20ac"})), cli=True),
    BadCase("seg-compressed-non-ascii-latin1", "pred", f"{OV0}.segmentation.counts",
            "compressed RLE string", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": "\u00e9"}))),
    BadCase("seg-compressed-truncated", "pred", f"{OV0}.segmentation.counts", "complete",
            "ov1", S_SEG, pred=ov(row(segmentation={"size": [4, 6], "counts": "5P"}))),
    BadCase("seg-compressed-value-too-long", "pred", f"{OV0}.segmentation.counts",
            "536,870,911", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": "PPPPPPPP0"}))),
    BadCase("seg-compressed-negative-run", "pred", f"{OV0}.segmentation.counts",
            "non-negative", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": "@"}))),
    BadCase("seg-compressed-wrong-sum", "pred", f"{OV0}.segmentation.counts",
            "height*width = 24", "ov1", S_SEG,
            pred=ov(row(segmentation={"size": [4, 6], "counts": ld_compressed(
                LD_MASK_A1[:, :5])}))),
    BadCase("seg-sentinel-with-counts", "pred", f"{OV0}.segmentation.counts", "[0, 0]", "ov1",
            S_SEG, pred=ov(row(segmentation={"size": [0, 0], "counts": [1]}))),
    BadCase("seg-duplicate-rows-different-size", "pred",
            "tasks.open_vocabulary[1].segmentation.size", "mask size", "ov1", S_MOD,
            pred=ov(row(segmentation=SEG_OK),
                    row(segmentation={"size": [2, 12], "counts": [24]})), cli=True),
    BadCase("seg-referring-size-not-gt", "pred", "tasks.referring[0].segmentation.size",
            "ground-truth mask size", "ref1", S_SEG, task="referring",
            pred=pred_set(("tasks", "referring", 0, "segmentation"),
                          {"size": [3, 5], "counts": [15]})),
    # --- axis-aligned boxes ------------------------------------------------------------
    BadCase("bbox-string", "pred", f"{OV0}.bbox", "a list of boxes", "ov1", S_BOX,
            pred=ov(row(bbox="1,1,4,3")), cli=True),
    BadCase("bbox-object-not-list", "pred", f"{OV0}.bbox", "a list of boxes", "ov1", S_BOX,
            pred=ov(row(bbox={"bbox": [1, 1, 4, 3]}))),
    BadCase("bbox-three-numbers", "pred", f"{OV0}.bbox[0]", "four numbers", "ov1", S_BOX,
            pred=ov(row(bbox=[[1, 1, 4]])), cli=True),
    BadCase("bbox-five-numbers", "pred", f"{OV0}.bbox[0]", "four numbers", "ov1", S_BOX,
            pred=ov(row(bbox=[[1, 1, 4, 3, 5]]))),
    BadCase("bbox-flat-list", "pred", f"{OV0}.bbox[0]", "four numbers", "ov1", S_BOX,
            pred=ov(row(bbox=[1, 1, 4, 3])), count=4),
    BadCase("bbox-second-box-bad", "pred", f"{OV0}.bbox[1]", "four numbers", "ov1", S_BOX,
            pred=ov(row(bbox=[[1, 1, 4, 3], [1, 1, 4]]))),
    BadCase("bbox-object-three-numbers", "pred", f"{OV0}.bbox[0].bbox", "four numbers", "ov1",
            S_BOX, pred=ov(row(bbox=[{"bbox": [1, 1, 4], "score": 0.5}]))),
    BadCase("bbox-object-missing-bbox", "pred", f"{OV0}.bbox[0].bbox", "present", "ov1",
            S_BOX, pred=ov(row(bbox=[{"score": 0.5}]))),
    BadCase("bbox-object-box-null", "pred", f"{OV0}.bbox[0].bbox", "four numbers", "ov1",
            S_BOX, pred=ov(row(bbox=[{"bbox": None}]))),
    BadCase("bbox-strings", "pred", f"{OV0}.bbox[0]", "finite numbers", "ov1", S_BOX,
            pred=ov(row(bbox=[["1", "1", "4", "3"]])), cli=True),
    BadCase("bbox-one-string", "pred", f"{OV0}.bbox[0]", "finite numbers", "ov1", S_BOX,
            pred=ov(row(bbox=[[1, 1, "4", 3]]))),
    BadCase("bbox-booleans", "pred", f"{OV0}.bbox[0]", "finite numbers", "ov1", S_BOX,
            pred=ov(row(bbox=[[False, False, True, True]]))),
    BadCase("bbox-null-coordinate", "pred", f"{OV0}.bbox[0]", "finite numbers", "ov1", S_BOX,
            pred=ov(row(bbox=[[1, None, 4, 3]]))),
    BadCase("bbox-box-is-string", "pred", f"{OV0}.bbox[0]", "four numbers", "ov1", S_BOX,
            pred=ov(row(bbox=["1 1 4 3"]))),
    BadCase("bbox-nested-deeply", "pred", f"{OV0}.bbox[0]", "four numbers", "ov1", S_BOX,
            pred=_nested_box, cli=True),
    BadCase("bbox-nan-api", "pred", f"{OV0}.bbox[0]", "finite numbers", "ov1", S_BOX,
            api_pred=ov(row(bbox=[[float("nan"), 1, 4, 3]]))),
    BadCase("bbox-inf-api", "pred", f"{OV0}.bbox[0].bbox", "finite numbers", "ov1", S_BOX,
            api_pred=ov(row(bbox=[{"bbox": [1, 1, float("inf"), 3]}]))),
    BadCase("bbox-x2-equals-x1", "pred", f"{OV0}.bbox[0]", "x2 > x1", "ov1", S_BOX,
            pred=ov(row(bbox=[[4, 1, 4, 3]])), cli=True),
    BadCase("bbox-x2-below-x1", "pred", f"{OV0}.bbox[0]", "x2 > x1", "ov1", S_BOX,
            pred=ov(row(bbox=[[4, 1, 1, 3]]))),
    BadCase("bbox-y2-below-y1", "pred", f"{OV0}.bbox[0].bbox", "y2 > y1", "ov1", S_BOX,
            pred=ov(row(bbox=[{"bbox": [1, 3, 4, 1], "score": 0.2}]))),
    BadCase("bbox-xywh-like-under-xyxy", "pred", f"{OV0}.bbox[0]", "x2 > x1", "ov1", S_BOX,
            pred=ov(row(bbox=[[10, 10, 3, 2]]))),
    BadCase("bbox-xywh-zero-width", "pred", f"{OV0}.bbox[0]", "positive width and height",
            "ov1", S_BOX, bbox_format="xywh", pred=ov(row(bbox=[[1, 1, 0, 2]])), cli=True),
    BadCase("bbox-xywh-negative-height", "pred", f"{OV0}.bbox[0]",
            "positive width and height", "ov1", S_BOX, bbox_format="xywh",
            pred=ov(row(bbox=[[1, 1, 3, -2]]))),
    BadCase("bbox-xywh-width-vanishes", "pred", f"{OV0}.bbox[0]", "positive width", "ov1",
            S_BOX, bbox_format="xywh", pred=ov(row(bbox=[[1e20, 0, 1, 1]]))),
    BadCase("bbox-xywh-width-underflows", "pred", f"{OV0}.bbox[0]", "positive width", "ov1",
            S_BOX, bbox_format="xywh", pred=ov(row(bbox=[[1, 0, 1e-320, 1]]))),
    BadCase("bbox-xywh-corner-overflows", "pred", f"{OV0}.bbox[0]", "within ±1e100", "ov1",
            S_BOX, bbox_format="xywh", pred=ov(row(bbox=[[1e308, 0, 1e308, 1]]))),
    # Coordinates whose areas would overflow (issue 18): a problem, not a RuntimeWarning.
    BadCase("bbox-coordinates-overflow-area", "pred", f"{OV0}.bbox[0]", "within ±1e100", "ov1",
            S_BOX, pred=ov(row(bbox=[[0, 0, 1.7e308, 1.7e308]])), cli=True),
    BadCase("bbox-coordinate-just-beyond-range", "pred", f"{OV0}.bbox[0]", "within ±1e100",
            "ov1", S_BOX, pred=ov(row(bbox=[[-1.0000001e100, 0, 4, 3]]))),
    BadCase("bbox-object-coordinates-overflow-area", "pred", f"{OV0}.bbox[0].bbox",
            "within ±1e100", "ov1", S_BOX,
            pred=ov(row(bbox=[{"bbox": [1, 1, 1e200, 1e200], "score": 0.5}]))),
    BadCase("bbox-xywh-corner-beyond-range", "pred", f"{OV0}.bbox[0]",
            "x + width and y + height within ±1e100", "ov1", S_BOX, bbox_format="xywh",
            pred=ov(row(bbox=[[1e100, 0, 1e100, 1]]))),
    BadCase("bbox-integer-coordinates-overflow-area", "pred", f"{OV0}.bbox[0]",
            "within ±1e100", "ov1", S_BOX,
            pred=b'{"tasks": {"open_vocabulary": [{"query_id": "ov1", "bbox": [[0, 0, 1'
                 + b"0" * 200 + b', 4]]}]}}'),
    BadCase("bbox-score-string", "pred", f"{OV0}.bbox[0].score", "finite number", "ov1",
            S_SCORE, pred=ov(row(bbox=[{"bbox": [1, 1, 4, 3], "score": "0.9"}])), cli=True),
    BadCase("bbox-score-boolean", "pred", f"{OV0}.bbox[0].score", "finite number", "ov1",
            S_SCORE, pred=ov(row(bbox=[{"bbox": [1, 1, 4, 3], "score": True}]))),
    BadCase("bbox-score-list", "pred", f"{OV0}.bbox[0].score", "finite number", "ov1",
            S_SCORE, pred=ov(row(bbox=[{"bbox": [1, 1, 4, 3], "score": [0.9]}]))),
    BadCase("bbox-score-nan-api", "pred", f"{OV0}.bbox[0].score", "finite number", "ov1",
            S_SCORE, api_pred=ov(row(bbox=[{"bbox": [1, 1, 4, 3], "score": float("nan")}]))),
    BadCase("bbox-score-inf-api", "pred", f"{OV0}.bbox[0].score", "finite number", "ov1",
            S_SCORE, score_threshold=0.5,
            api_pred=ov(row(bbox=[{"bbox": [1, 1, 4, 3], "score": float("inf")}]))),
    BadCase("bbox-score-missing-with-threshold", "pred", f"{OV0}.bbox[0].score",
            "--score-threshold", "ov1", S_SCORE, score_threshold=0.3,
            pred=ov(row(bbox=[[1, 1, 4, 3]])), cli=True),
    BadCase("bbox-object-score-missing-with-threshold", "pred", f"{OV0}.bbox[1].score",
            "--score-threshold", "ov1", S_SCORE, score_threshold=0.3,
            pred=ov(row(bbox=[{"bbox": [1, 1, 4, 3], "score": 0.9}, {"bbox": [0, 0, 2, 2]}]))),
    BadCase("bbox-referring-bad", "pred", "tasks.referring[0].bbox[0]", "x2 > x1", "ref1",
            S_BOX, task="referring",
            pred=pred_set(("tasks", "referring", 0, "bbox"), [[5, 5, 1, 1]])),
    BadCase("bbox-reasoning-bad", "pred", "tasks.reasoning[0].bbox", "a list of boxes", "rea1",
            S_BOX, task="reasoning", pred=pred_set(("tasks", "reasoning", 0, "bbox"), 7)),
    # --- oriented boxes ------------------------------------------------------------------
    BadCase("obb-string", "pred", f"{OV0}.oriented_bbox", "a list of boxes", "ov1", S_OBB,
            pred=ov(row(oriented_bbox="poly"))),
    BadCase("obb-three-vertices", "pred", f"{OV0}.oriented_bbox[0]", "four vertices", "ov1",
            S_OBB, pred=ov(row(oriented_bbox=[[[0, 0], [4, 0], [0, 4]]])), cli=True),
    BadCase("obb-five-vertices", "pred", f"{OV0}.oriented_bbox[0]", "four vertices", "ov1",
            S_OBB, pred=ov(row(oriented_bbox=[[[0, 0], [4, 0], [4, 4], [2, 5], [0, 4]]]))),
    BadCase("obb-flat-eight-numbers", "pred", f"{OV0}.oriented_bbox[0]", "four vertices",
            "ov1", S_OBB, pred=ov(row(oriented_bbox=[[0, 0, 4, 0, 4, 4, 0, 4]]))),
    BadCase("obb-vertex-three-numbers", "pred", f"{OV0}.oriented_bbox[0]", "two finite numbers",
            "ov1", S_OBB, pred=ov(row(oriented_bbox=[[[0, 0], [4, 0, 1], [4, 4], [0, 4]]]))),
    BadCase("obb-vertex-strings", "pred", f"{OV0}.oriented_bbox[0]", "two finite numbers",
            "ov1", S_OBB, pred=ov(row(oriented_bbox=[[["0", "0"], [4, 0], [4, 4], [0, 4]]]))),
    BadCase("obb-vertex-boolean", "pred", f"{OV0}.oriented_bbox[0]", "two finite numbers",
            "ov1", S_OBB, pred=ov(row(oriented_bbox=[[[0, 0], [True, 0], [4, 4], [0, 4]]]))),
    BadCase("obb-vertex-nan-api", "pred", f"{OV0}.oriented_bbox[0]", "two finite numbers",
            "ov1", S_OBB,
            api_pred=ov(row(oriented_bbox=[[[0, 0], [float("nan"), 0], [4, 4], [0, 4]]]))),
    BadCase("obb-coordinates-overflow-area", "pred", f"{OV0}.oriented_bbox[0]",
            "within ±1e100", "ov1", S_OBB,
            pred=ov(row(oriented_bbox=[[[0, 0], [1.7e308, 0], [1.7e308, 1.7e308],
                                        [0, 1.7e308]]])), cli=True),
    BadCase("obb-object-coordinates-overflow-area", "pred", f"{OV0}.oriented_bbox[0].polygon",
            "within ±1e100", "ov1", S_OBB,
            pred=ov(row(oriented_bbox=[{"polygon": [[-1e160, -1e160], [1e160, -1e160],
                                                    [1e160, 1e160], [-1e160, 1e160]]}]))),
    BadCase("obb-bow-tie", "pred", f"{OV0}.oriented_bbox[0]", "not self-crossing", "ov1",
            S_OBB, pred=ov(row(oriented_bbox=[[[0, 0], [4, 4], [4, 0], [0, 4]]])), cli=True),
    BadCase("obb-bow-tie-object", "pred", f"{OV0}.oriented_bbox[0].polygon",
            "not self-crossing", "ov1",
            S_OBB, pred=ov(row(oriented_bbox=[
                {"polygon": [[0, 0], [4, 0], [0, 4], [4, 4]], "score": 0.5}]))),
    # A concave quadrilateral is refused, as the spec says ("must be convex"; issue 46: the
    # option concave_obb takes it, scored as DOTA_devkit scores it); a self-touching "spike"
    # is not a polygon.
    BadCase("obb-concave-dart", "pred", f"{OV0}.oriented_bbox[0]",
            "a convex polygon (the spec's rule", "ov1", S_OBB,
            pred=ov(row(oriented_bbox=[[[0, 0], [4, 0], [1, 1], [0, 4]]])), cli=True),
    BadCase("obb-concave-dart-object", "pred", f"{OV0}.oriented_bbox[0].polygon",
            "a convex polygon (the spec's rule", "ov1", S_OBB,
            pred=ov(row(oriented_bbox=[{"polygon": [[0, 0], [1, 1], [4, 0], [0, 4]],
                                        "score": 0.5}]))),
    BadCase("obb-spike", "pred", f"{OV0}.oriented_bbox[0]", "not self-crossing", "ov1", S_OBB,
            pred=ov(row(oriented_bbox=[[[0, 0], [2, 0], [1, 0], [1, 1]]])), cli=True),
    BadCase("obb-zero-area-collinear", "pred", f"{OV0}.oriented_bbox[0]", "positive area",
            "ov1", S_OBB, pred=ov(row(oriented_bbox=[[[0, 0], [1, 1], [2, 2], [3, 3]]]))),
    BadCase("obb-zero-area-point", "pred", f"{OV0}.oriented_bbox[0]", "positive area", "ov1",
            S_OBB, pred=ov(row(oriented_bbox=[[[2, 2], [2, 2], [2, 2], [2, 2]]]))),
    BadCase("obb-object-missing-polygon", "pred", f"{OV0}.oriented_bbox[0].polygon", "present",
            "ov1", S_OBB, pred=ov(row(oriented_bbox=[{"score": 0.5}]))),
    BadCase("obb-object-polygon-three-vertices", "pred", f"{OV0}.oriented_bbox[0].polygon",
            "four vertices", "ov1", S_OBB,
            pred=ov(row(oriented_bbox=[{"polygon": [[0, 0], [4, 0], [0, 4]]}]))),
    BadCase("obb-score-string", "pred", f"{OV0}.oriented_bbox[0].score", "finite number",
            "ov1", S_SCORE, pred=ov(row(oriented_bbox=[{"polygon": LD_POLY_A1, "score": "x"}]))),
    BadCase("obb-score-missing-with-threshold", "pred", f"{OV0}.oriented_bbox[0].score",
            "--score-threshold", "ov1", S_SCORE, score_threshold=0.5,
            pred=ov(row(oriented_bbox=[LD_POLY_A1])), cli=True),
    BadCase("obb-second-box-bad", "pred", f"{OV0}.oriented_bbox[1]", "four vertices", "ov1",
            S_OBB, pred=ov(row(oriented_bbox=[LD_POLY_A1, []]))),
    # --- ground truth ------------------------------------------------------------------
    BadCase("gt-annotations-missing", "gt", "annotations", "a list", spec=S_GT,
            gt={"tasks": {}}),
    BadCase("gt-annotations-object", "gt", "annotations", "a list", spec=S_GT,
            gt={"annotations": {}, "tasks": {}}, cli=True),
    BadCase("gt-annotation-not-object", "gt", A3F, "an annotation object", spec=S_GT,
            gt=gt_set(A3, "a3")),
    BadCase("gt-annotation-id-missing", "gt", f"{A3F}.id", "id", spec=S_GT,
            gt=gt_set((*A3, "id"), DELETE)),
    BadCase("gt-annotation-id-list", "gt", f"{A3F}.id", "id", spec=S_GT,
            gt=gt_set((*A3, "id"), ["a3"])),
    BadCase("gt-duplicate-annotation-id", "gt", f"{A3F}.id", "unique", spec=S_GT,
            gt=gt_set((*A3, "id"), "a1"), cli=True),
    BadCase("gt-width-missing", "gt", f"{A3F}.width", "positive integer", spec=S_GT,
            gt=gt_set((*A3, "width"), DELETE), cli=True),
    BadCase("gt-width-zero", "gt", f"{A3F}.width", "positive integer", spec=S_GT,
            gt=gt_set((*A3, "width"), 0)),
    BadCase("gt-width-string", "gt", f"{A3F}.width", "positive integer", spec=S_GT,
            gt=gt_set((*A3, "width"), "6")),
    BadCase("gt-width-float", "gt", f"{A3F}.width", "positive integer", spec=S_GT,
            gt=gt_set((*A3, "width"), 6.5)),
    BadCase("gt-height-boolean", "gt", f"{A3F}.height", "positive integer", spec=S_GT,
            gt=gt_set((*A3, "height"), True)),
    BadCase("gt-image-path-missing", "gt", f"{A3F}.image_path", "string", spec=S_GT,
            gt=gt_set((*A3, "image_path"), DELETE)),
    BadCase("gt-category-name-number", "gt", f"{A3F}.category_name", "string", spec=S_GT,
            gt=gt_set((*A3, "category_name"), 5)),
    BadCase("gt-segmentation-size-not-image", "gt", f"{A3F}.segmentation.size",
            "[height, width] = [4, 6]", spec=S_GT,
            gt=gt_set((*A3, "segmentation"), {"size": [6, 4], "counts": [24]}), cli=True),
    BadCase("gt-segmentation-bad-counts", "gt", f"{A3F}.segmentation.counts",
            "height*width = 24", spec=S_GT,
            gt=gt_set((*A3, "segmentation"), {"size": [4, 6], "counts": [1, 2]})),
    BadCase("gt-segmentation-string", "gt", f"{A3F}.segmentation", "COCO RLE object",
            spec=S_GT, gt=gt_set((*A3, "segmentation"), "mask")),
    BadCase("gt-bbox-zero-width", "gt", f"{A3F}.bbox[0]", "positive width and height",
            spec=S_GT, gt=gt_set((*A3, "bbox"), [[1, 1, 0, 2]]), cli=True),
    BadCase("gt-bbox-width-vanishes", "gt", f"{A3F}.bbox[0]", "positive width", spec=S_GT,
            gt=gt_set((*A3, "bbox"), [[1e20, 1, 1, 2]])),
    BadCase("gt-bbox-coordinates-overflow-area", "gt", f"{A3F}.bbox[0]", "within ±1e100",
            spec=S_GT, gt=gt_set((*A3, "bbox"), [[0, 0, 1.7e308, 1.7e308]]), cli=True),
    BadCase("gt-bbox-corner-beyond-range", "gt", f"{A3F}.bbox[0]",
            "x + width and y + height within ±1e100", spec=S_GT,
            gt=gt_set((*A3, "bbox"), [[1e100, 0, 1e100, 1]])),
    BadCase("gt-obb-coordinates-overflow-area", "gt", f"{A3F}.oriented_bbox[0]",
            "within ±1e100", spec=S_GT,
            gt=gt_set((*A3, "oriented_bbox"), [[[0, 0], [1e300, 0], [1e300, 1e300], [0, 1e300]]])),
    BadCase("gt-bbox-three-numbers", "gt", f"{A3F}.bbox[0]", "four finite numbers", spec=S_GT,
            gt=gt_set((*A3, "bbox"), [[1, 1, 2]])),
    BadCase("gt-bbox-not-list", "gt", f"{A3F}.bbox", "a list", spec=S_GT,
            gt=gt_set((*A3, "bbox"), "1,1,2,2")),
    BadCase("gt-bbox-flat", "gt", f"{A3F}.bbox[0]", "four finite numbers", spec=S_GT,
            gt=gt_set((*A3, "bbox"), [1, 1, 2, 2])),
    BadCase("gt-obb-bow-tie", "gt", f"{A3F}.oriented_bbox[0]", "not self-crossing", spec=S_GT,
            gt=gt_set((*A3, "oriented_bbox"), [[[0, 0], [4, 4], [4, 0], [0, 4]]])),
    BadCase("gt-obb-concave-dart", "gt", f"{A3F}.oriented_bbox[0]",
            "a convex polygon (the spec's rule", spec=S_GT,
            gt=gt_set((*A3, "oriented_bbox"), [[[0, 0], [4, 0], [1, 1], [0, 4]]]), cli=True),
    BadCase("gt-obb-three-vertices", "gt", f"{A3F}.oriented_bbox[0]", "four vertices",
            spec=S_GT, gt=gt_set((*A3, "oriented_bbox"), [[[0, 0], [4, 4], [4, 0]]])),
    BadCase("gt-tasks-missing", "gt", "tasks", "an object", spec=S_GT,
            gt=gt_set(("tasks",), DELETE)),
    # Optional ignore regions (COCO crowd, issue 16): the formats of bbox and oriented_bbox.
    BadCase("gt-ignore-bbox-zero-width", "gt", f"{A3F}.ignore_bbox[0]",
            "positive width and height", spec=S_GT,
            gt=gt_set((*A3, "ignore_bbox"), [[1, 1, 0, 2]])),
    BadCase("gt-ignore-bbox-not-list", "gt", f"{A3F}.ignore_bbox", "a list", spec=S_GT,
            gt=gt_set((*A3, "ignore_bbox"), {"x": 1})),
    BadCase("gt-ignore-obb-bow-tie", "gt", f"{A3F}.ignore_oriented_bbox[0]",
            "not self-crossing",
            spec=S_GT, gt=gt_set((*A3, "ignore_oriented_bbox"), [[[0, 0], [4, 4], [4, 0],
                                                                 [0, 4]]])),
    # Optional per-target area (COCO's, issue 46): one finite number >= 0 per target box.
    BadCase("gt-area-negative", "gt", f"{A3F} (id a3).area[0]", "a finite number >= 0",
            spec=S_GT, gt=gt_set((*A3, "area"), [-1]), cli=True),
    BadCase("gt-area-count", "gt", f"{A3F} (id a3).area", "one area per target box",
            spec=S_GT, gt=gt_set((*A3, "area"), [1, 2]), cli=True),
    BadCase("gt-area-not-list", "gt", f"{A3F} (id a3).area", "a list of areas", spec=S_GT,
            gt=gt_set((*A3, "area"), 5)),
    BadCase("gt-ignore-obb-concave-dart", "gt", f"{A3F}.ignore_oriented_bbox[0]",
            "a convex polygon (the spec's rule", spec=S_GT,
            gt=gt_set((*A3, "ignore_oriented_bbox"), [[[0, 0], [4, 0], [1, 1], [0, 4]]])),
    BadCase("gt-tasks-list", "gt", "tasks", "an object", spec=S_GT, gt=gt_set(("tasks",), [])),
    BadCase("gt-task-list-object", "gt", "tasks.referring", "a list", spec=S_GT,
            gt=gt_set(("tasks", "referring"), {"query_id": "ref1"})),
    BadCase("gt-query-not-object", "gt", "tasks.open_vocabulary[1]", "a query object",
            spec=S_GT, gt=gt_set(("tasks", "open_vocabulary", 1), "ov2")),
    BadCase("gt-query-id-missing", "gt", "tasks.open_vocabulary[1].query_id", "string",
            spec=S_GT, gt=gt_set(("tasks", "open_vocabulary", 1, "query_id"), DELETE)),
    BadCase("gt-query-id-number", "gt", "tasks.open_vocabulary[1].query_id", "string",
            spec=S_GT, gt=gt_set(("tasks", "open_vocabulary", 1, "query_id"), 2)),
    BadCase("gt-duplicate-query-id", "gt", "tasks.open_vocabulary[1].query_id", "unique",
            "ov1", S_GT, gt=gt_set(("tasks", "open_vocabulary", 1, "query_id"), "ov1"),
            cli=True),
    BadCase("gt-duplicate-query-id-across-tasks", "gt", "tasks.reasoning[0].query_id",
            "unique", "ref1", S_GT, gt=gt_set(("tasks", "reasoning", 0, "query_id"), "ref1")),
    BadCase("gt-ann-id-nowhere", "gt", "tasks.open_vocabulary[1].ann_id", "existing annotation",
            "ov2", S_GT, gt=gt_set(("tasks", "open_vocabulary", 1, "ann_id"), "zzz"), cli=True),
    BadCase("gt-ann-id-missing", "gt", "tasks.referring[0].ann_id", "existing annotation",
            "ref1", S_GT, gt=gt_set(("tasks", "referring", 0, "ann_id"), DELETE)),
    BadCase("gt-ann-id-nowhere-no-annotations", "gt", "tasks.reasoning[0].ann_id",
            "existing annotation", "rea1", S_GT,
            gt={"annotations": [], "tasks": {"reasoning": [
                {"query_id": "rea1", "ann_id": "a1", "query": "q"}]}}),
    BadCase("gt-type-capitalised", "gt", "tasks.open_vocabulary[0].type", "positive", "ov1",
            S_GT, gt=gt_set(("tasks", "open_vocabulary", 0, "type"), "Positive"), cli=True),
    BadCase("gt-type-missing", "gt", "tasks.open_vocabulary[2].type", "negative", "ov3", S_GT,
            gt=gt_set(("tasks", "open_vocabulary", 2, "type"), DELETE)),
    BadCase("gt-type-boolean", "gt", "tasks.open_vocabulary[0].type", "positive", "ov1", S_GT,
            gt=gt_set(("tasks", "open_vocabulary", 0, "type"), True)),
    BadCase("gt-phrase-number", "gt", "tasks.open_vocabulary[0].phrase", "a string", "ov1",
            S_GT, gt=gt_set(("tasks", "open_vocabulary", 0, "phrase"), 3)),
    BadCase("gt-query-text-list", "gt", "tasks.referring[0].query", "a string", "ref1", S_GT,
            gt=gt_set(("tasks", "referring", 0, "query"), ["the tower"])),
    # --- options -----------------------------------------------------------------------
    BadCase("opt-modalities-empty", "options", "--modalities", "segmentation, bbox", spec=S_MOD,
            modalities="", cli=True),
    BadCase("opt-modalities-commas-only", "options", "--modalities", "segmentation, bbox",
            spec=S_MOD, modalities=",,"),
    BadCase("opt-modalities-unknown", "options", "--modalities", "oriented_bbox", spec=S_MOD,
            modalities="segmentation,depth", cli=True),
    BadCase("opt-modalities-abbreviation", "options", "--modalities", "segmentation",
            spec=S_MOD, modalities="seg"),
    BadCase("opt-modalities-auto-mixed", "options", "--modalities", "auto", spec=S_MOD,
            modalities="auto,bbox"),
    BadCase("opt-modalities-auto-all-empty", "pred", "--modalities auto", "non-empty",
            spec=S_MOD, modalities="auto",
            pred=ov(row(segmentation=None, bbox=[], oriented_bbox=[]),
                    row(query_id="ov3", segmentation={"size": [3, 5], "counts": [15]},
                        bbox=[[0, 0, 0, 0]])), cli=True),
    BadCase("opt-modalities-auto-no-rows", "pred", "--modalities auto", "non-empty",
            spec=S_MOD, modalities="auto", pred={"tasks": {}}),
    BadCase("opt-iou-zero", "options", "--iou-threshold", "(0, 1]", spec=S_CLI,
            iou_threshold=0.0, cli=True),
    BadCase("opt-iou-above-one", "options", "--iou-threshold", "(0, 1]", spec=S_CLI,
            iou_threshold=1.5, cli=True),
    BadCase("opt-iou-negative", "options", "--iou-threshold", "(0, 1]", spec=S_CLI,
            iou_threshold=-0.5),
    BadCase("opt-iou-nan", "options", "--iou-threshold", "(0, 1]", spec=S_CLI,
            iou_threshold=float("nan"), cli=True),
    BadCase("opt-score-threshold-nan", "options", "--score-threshold", "finite", spec=S_CLI,
            score_threshold=float("nan"), cli=True),
    BadCase("opt-score-threshold-inf", "options", "--score-threshold", "finite", spec=S_CLI,
            score_threshold=float("inf")),
    BadCase("opt-bbox-format-bad", "options", "--bbox-format", "xyxy or xywh", spec=S_CLI,
            bbox_format="bad"),
    BadCase("opt-bbox-format-upper", "options", "--bbox-format", "xyxy or xywh", spec=S_CLI,
            bbox_format="XYXY"),
    BadCase("opt-task-unknown", "options", "--task", "vocabulary", spec=S_CLI, task="detection"),
]
