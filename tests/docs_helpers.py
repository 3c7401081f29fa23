"""Builders of small, hand-checked OVEarth documents for the loader and CLI tests.

Names carry the ``ld_`` prefix (loader tests) so that other helper modules can
live next to this one. Masks are built with numpy and encoded either by hand
(uncompressed run lengths, column-major as COCO defines them) or with
pycocotools directly, never with the code under test.

The ground truth ``ld_gt()`` has three annotations:

* ``a1``: a 4 x 6 image; mask rows 1-2, columns 1-3 (6 pixels); bbox ``[1, 1, 3, 2]``
  (COCO xywh, so xyxy ``[1, 1, 4, 3]``); one oriented box, the same rectangle.
* ``a2``: a 3 x 5 image; mask row 0, columns 0-1 (2 pixels); bbox ``[0, 0, 2, 1]``;
  no oriented box.
* ``a3``: a 4 x 6 image that no query references (annotation-level bad-input cases
  corrupt it, so that no query-level problem follows from them).

Queries: ``ov1`` (positive, a1), ``ov2`` (negative, a1), ``ov3`` (positive, a2);
``ref1`` (a1); ``rea1`` (a2).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from pycocotools import mask as cocomask

LD_PYTHON = str(Path(sys.executable))
LD_H, LD_W = 4, 6
LD_H2, LD_W2 = 3, 5


def ld_runs(mask: np.ndarray) -> list[int]:
    """Uncompressed COCO run lengths of a 0/1 mask (column-major, background first)."""
    flat = np.asarray(mask, dtype=np.uint8).flatten(order="F").tolist()
    runs: list[int] = []
    current, length = 0, 0
    for v in flat:
        if v == current:
            length += 1
        else:
            runs.append(length)
            current, length = v, 1
    runs.append(length)
    return runs


def ld_compressed(mask: np.ndarray) -> str:
    """COCO compressed counts string of a 0/1 mask, encoded by pycocotools."""
    rle = cocomask.encode(np.asfortranarray(np.asarray(mask, dtype=np.uint8)))
    return rle["counts"].decode("ascii")


def ld_mask(h: int, w: int, rows: slice, cols: slice) -> np.ndarray:
    m = np.zeros((h, w), dtype=np.uint8)
    m[rows, cols] = 1
    return m


LD_MASK_A1 = ld_mask(LD_H, LD_W, slice(1, 3), slice(1, 4))
LD_MASK_A2 = ld_mask(LD_H2, LD_W2, slice(0, 1), slice(0, 2))
LD_POLY_A1 = [[1.0, 1.0], [4.0, 1.0], [4.0, 3.0], [1.0, 3.0]]


def ld_rle(mask: np.ndarray, compressed: bool = False) -> dict[str, Any]:
    counts: Any = ld_compressed(mask) if compressed else ld_runs(mask)
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": counts}


def ld_annotation(ann_id: str, h: int, w: int, mask: np.ndarray, bbox: list[list[float]],
                  obbs: list[list[list[float]]]) -> dict[str, Any]:
    return {
        "id": ann_id,
        "image_path": f"images/{ann_id}.png",
        "width": w,
        "height": h,
        "category_name": f"cat_{ann_id}",
        "segmentation": ld_rle(mask, compressed=True),
        "bbox": bbox,
        "oriented_bbox": obbs,
    }


def ld_gt() -> dict[str, Any]:
    """A fresh, valid ground-truth document (see the module docstring)."""
    return {
        "annotations": [
            ld_annotation("a1", LD_H, LD_W, LD_MASK_A1, [[1, 1, 3, 2]], [LD_POLY_A1]),
            ld_annotation("a2", LD_H2, LD_W2, LD_MASK_A2, [[0, 0, 2, 1]], []),
            ld_annotation("a3", LD_H, LD_W, LD_MASK_A1, [[0, 0, 1, 1]], []),
        ],
        "tasks": {
            "open_vocabulary": [
                {"query_id": "ov1", "ann_id": "a1", "type": "positive", "phrase": "tower"},
                {"query_id": "ov2", "ann_id": "a1", "type": "negative", "phrase": "lake"},
                {"query_id": "ov3", "ann_id": "a2", "type": "positive", "phrase": "roof"},
            ],
            "referring": [{"query_id": "ref1", "ann_id": "a1", "query": "the tower"}],
            "reasoning": [{"query_id": "rea1", "ann_id": "a2", "query": "a roof"}],
        },
    }


def ld_pred_row(qid: str, mask: np.ndarray | None = None, bbox: list[Any] | None = None,
                obb: list[Any] | None = None) -> dict[str, Any]:
    return {
        "query_id": qid,
        "segmentation": None if mask is None else ld_rle(mask),
        "bbox": [] if bbox is None else bbox,
        "oriented_bbox": [] if obb is None else obb,
    }


def ld_pred() -> dict[str, Any]:
    """A fresh, valid prediction document: perfect answers, empty on the negative query."""
    return {
        "tasks": {
            "open_vocabulary": [
                ld_pred_row("ov1", LD_MASK_A1, [{"bbox": [1, 1, 4, 3], "score": 0.9}],
                            [{"polygon": LD_POLY_A1, "score": 0.8}]),
                ld_pred_row("ov2"),
                ld_pred_row("ov3", LD_MASK_A2, [[0, 0, 2, 1]]),
            ],
            "referring": [ld_pred_row("ref1", LD_MASK_A1, [[1, 1, 4, 3]], [LD_POLY_A1])],
            "reasoning": [ld_pred_row("rea1", LD_MASK_A2, [[0, 0, 2, 1]])],
        }
    }


def ld_copy(doc: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(doc)


def ld_write(path: Path, doc: Any) -> Path:
    """Write ``doc`` as JSON (``bytes`` are written verbatim)."""
    path.write_bytes(doc if isinstance(doc, bytes) else orjson.dumps(doc))
    return path


def ld_files(tmp_path: Path, gt: Any = None, pred: Any = None) -> tuple[Path, Path]:
    """Write a ground truth and a prediction file (defaults: the valid documents)."""
    gt_path = ld_write(tmp_path / "gt.json", ld_gt() if gt is None else gt)
    pred_path = ld_write(tmp_path / "pred.json", ld_pred() if pred is None else pred)
    return gt_path, pred_path


def ld_decode(rle: dict[str, Any]) -> np.ndarray:
    """Pixels of a pycocotools RLE, decoded by pycocotools."""
    return cocomask.decode(rle)
