"""Duplicate prediction rows (spec, "Modalities, Empty Predictions, and Duplicate IDs": rows
with the same query_id are allowed; equal-sized masks are merged by pixel union, bbox and
oriented-bbox lists concatenated, a different mask size is an error).

The reference is written out here without the loader: decode every row's mask with
pycocotools, OR them in numpy, concatenate the boxes in row order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from pycocotools import mask as cocomask

from ovearth_core import masks
from ovearth_core.errors import OVEarthInputError
from ovearth_core.io import load_samples, parse_ground_truth

H, W = 5, 7
QUERIES = ("q0", "q1", "q2")


def _ground_truth(h: int = H, w: int = W) -> dict[str, Any]:
    full = {"size": [h, w], "counts": [0, h * w]}
    return {"annotations": [{"id": "a", "image_path": "x.png", "width": w, "height": h,
                             "category_name": "c", "segmentation": full,
                             "bbox": [[0, 0, 1, 1]]}],
            "tasks": {"referring": [{"query_id": q, "ann_id": "a", "query": q}
                                    for q in QUERIES]}}


def _load(rows: list[dict[str, Any]], h: int = H, w: int = W) -> dict[str, Any]:
    gt = parse_ground_truth(_ground_truth(h, w), "gt.json")
    samples = load_samples("gt.json", "pred.json", "referring", modalities="segmentation,bbox",
                           ground_truth=gt, predictions_doc={"tasks": {"referring": rows}})
    return {s.sample_id: s for s in samples}


def _rle_json(mask: np.ndarray, compressed: bool) -> dict[str, Any]:
    if compressed:
        counts = cocomask.encode(np.asfortranarray(mask))["counts"].decode("ascii")
    else:
        flat = mask.flatten(order="F")
        edges = np.flatnonzero(np.diff(flat)) + 1
        bounds = np.concatenate(([0], edges, [flat.size]))
        counts = np.diff(bounds).tolist()
        if flat[0]:
            counts = [0, *counts]
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": counts}


@st.composite
def _rows(draw: st.DrawFn) -> list[tuple[int, str, np.ndarray | None, list[list[float]]]]:
    """``(query index (3: unknown id), mask kind, mask, boxes)`` per row."""
    out = []
    for _ in range(draw(st.integers(0, 12))):
        query = draw(st.integers(0, 3))
        kind = draw(st.sampled_from(["none", "list", "string", "zero", "wrong_size"]))
        mask = None
        if kind in ("list", "string"):
            bits = draw(st.lists(st.booleans(), min_size=H * W, max_size=H * W))
            mask = np.array(bits, dtype=np.uint8).reshape(H, W)
        boxes = [[float(x), float(y), float(x + dx), float(y + dy)]
                 for x, y, dx, dy in draw(st.lists(st.tuples(*[st.integers(0, 4)] * 2,
                                                             *[st.integers(1, 3)] * 2),
                                                   max_size=3))]
        out.append((query, kind, mask, boxes))
    return out


def _row_json(query: int, kind: str, mask: np.ndarray | None,
              boxes: list[list[float]]) -> dict[str, Any]:
    qid = QUERIES[query] if query < len(QUERIES) else "unknown"
    segmentation: Any = {"none": None, "zero": {"size": [H, W], "counts": [H * W]},
                         "wrong_size": {"size": [W, H], "counts": [H * W]}}.get(kind)
    if mask is not None:
        segmentation = _rle_json(mask, kind == "string")
    return {"query_id": qid, "segmentation": segmentation, "bbox": boxes}


@settings(max_examples=150, deadline=None)
@given(_rows())
def test_merge_equals_union_of_decoded_rows_and_concatenated_boxes(rows: list[Any]) -> None:
    docs = [_row_json(*row) for row in rows]
    expected_problems = []
    for i, (query, kind, _, _) in enumerate(rows):
        if query == len(QUERIES):
            expected_problems.append((f"tasks.referring[{i}].query_id", "unknown"))
        elif kind == "wrong_size":
            expected_problems.append((f"tasks.referring[{i}].segmentation.size",
                                      QUERIES[query]))
    if expected_problems:
        try:
            _load(docs)
        except OVEarthInputError as err:
            assert [(p.field, p.query_id) for p in err.problems] == expected_problems
            sizes = [p for p in err.problems if p.field.endswith(".size")]
            assert all(p.expected == f"the ground-truth mask size [height, width] = [{H}, {W}]"
                       " (or the [0, 0] empty sentinel)" and p.found == f"list [{W}, {H}]"
                       for p in sizes)
        else:
            raise AssertionError("invalid rows were accepted")
        return
    loaded = _load(docs)
    for q, qid in enumerate(QUERIES):
        mine = [row for row in rows if row[0] == q]
        union = np.zeros((H, W), dtype=np.uint8)
        for _, _, mask, _ in mine:
            if mask is not None:
                union |= cocomask.decode(cocomask.frPyObjects(_rle_json(mask, False), H, W))
        sample = loaded[qid]
        assert sample.has_prediction_row == bool(mine)
        if union.any():
            np.testing.assert_array_equal(masks.decode(sample.pred_mask), union)
        else:
            assert sample.pred_mask is None
        boxes = [b for row in mine for b in row[3]]
        np.testing.assert_array_equal(sample.pred_boxes.reshape(-1, 4),
                                      np.array(boxes, dtype=float).reshape(-1, 4))


def test_sixty_four_thousand_rows_of_one_query() -> None:
    """64k one-pixel rows of one query on a 512 x 512 image (the issue's quadratic case):
    the union has every pixel, the boxes keep row order."""
    h = w = 512
    n = 64_000
    rng = np.random.default_rng(17)
    pixels = rng.choice(h * w, size=n, replace=False)
    rows = [{"query_id": "q0", "segmentation": {"size": [h, w],
                                                "counts": [int(p), 1, h * w - int(p) - 1]},
             "bbox": [[float(k % 500), 0.0, float(k % 500) + 1, 1.0]]}
            for k, p in enumerate(pixels.tolist())]
    sample = _load(rows, h, w)["q0"]
    expected = np.zeros(h * w, dtype=np.uint8)
    expected[pixels] = 1
    np.testing.assert_array_equal(masks.decode(sample.pred_mask),
                                  expected.reshape((h, w), order="F"))
    np.testing.assert_array_equal(sample.pred_boxes[:, 0], np.arange(n) % 500)
