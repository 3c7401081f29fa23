"""Dense, large test scenes (issue 25): a DOTA-like mosaic and a sparse single tile.

    .venv/bin/python -m benchmarks.dense_scene OUT [--sparse]

:func:`write_mosaic` writes a benchmark folder (``ground_truth.json``, ``images/``,
``predictions/packed.json``) holding one ``MOSAIC_W`` x ``MOSAIC_H`` JPEG (the size of a
3 x 3 mosaic of DOTA tiles) packed with small oriented vehicles, and open-vocabulary
queries that alternate between a **dense** one (``DENSE_GT`` GT boxes of the packed class and
about as many predictions: ~8,000 GT + predicted boxes, HBB and OBB) and a **sparse** one
(5 GT + 5 predicted boxes); :func:`write_sparse` writes the baseline: single
``TILE`` x ``TILE`` tiles with sparse queries only. Everything is deterministic (seeded):
two calls write the same bytes.

Predictions: most GT boxes get a jittered prediction (a match at IoU 0.5), some are missed,
and some predictions fall on empty ground (false positives); scores are set so that every
status is present. Boxes: GT ``bbox`` xywh, predicted ``bbox`` xyxy (the app's default),
oriented boxes as 4 corner points.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

MOSAIC_W, MOSAIC_H = 3333, 3546
TILE = 1024
DENSE_GT = 4100
CELL = 36  # packing pitch in pixels: a ~2,000-cell-per-million-pixel car park
DENSE_QUERIES = 12
SPARSE_TILES = 50


def _packed_centres(rng: np.random.Generator, width: int, height: int,
                    n: int) -> np.ndarray:
    """``n`` cell centres ``(n, 2)`` of a ``CELL`` grid over the image (no two in one cell)."""
    cols, rows = (width - CELL) // CELL, (height - CELL) // CELL
    cells = rng.choice(cols * rows, size=min(n, cols * rows), replace=False)
    cx = CELL / 2 + (cells % cols) * CELL + CELL / 2
    cy = CELL / 2 + (cells // cols) * CELL + CELL / 2
    return np.stack([cx, cy], axis=1).astype(float)


def _corners(centres: np.ndarray, length: np.ndarray, width: np.ndarray,
             angle: np.ndarray) -> np.ndarray:
    """Oriented rectangles ``(n, 4, 2)`` around ``centres``."""
    c, s = np.cos(angle), np.sin(angle)
    half = np.stack([length / 2, width / 2], axis=1)
    unit = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]], dtype=float)
    local = unit[None] * half[:, None, :]
    x = local[..., 0] * c[:, None] - local[..., 1] * s[:, None]
    y = local[..., 0] * s[:, None] + local[..., 1] * c[:, None]
    return np.round(np.stack([x, y], axis=2) + centres[:, None, :], 2)


def _objects(rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    n = len(centres)
    return _corners(centres, rng.uniform(18, 26, n), rng.uniform(8, 11, n),
                    rng.uniform(0, math.pi, n))


def _image(rng: np.random.Generator, width: int, height: int,
           polys: np.ndarray) -> Image.Image:
    """Asphalt-grey noise with every object drawn as a filled, coloured car."""
    base = rng.normal(96, 12, (height // 4 + 1, width // 4 + 1, 1)).clip(0, 255)
    img = Image.fromarray(np.repeat(base, 3, axis=2).astype(np.uint8)).resize(
        (width, height), Image.Resampling.BILINEAR)
    draw = ImageDraw.Draw(img)
    colours = rng.integers(30, 250, (len(polys), 3))
    for poly, colour in zip(polys, colours, strict=True):
        draw.polygon([tuple(p) for p in poly], fill=tuple(int(v) for v in colour),
                     outline=(20, 20, 20))
    return img


def _gt_fields(polys: np.ndarray) -> dict[str, Any]:
    lo, hi = polys.min(axis=1), polys.max(axis=1)
    return {"bbox": [[round(float(a), 2), round(float(b), 2), round(float(c - a), 2),
                      round(float(d - b), 2)] for (a, b), (c, d) in zip(lo, hi, strict=True)],
            "oriented_bbox": polys.tolist()}


def _prediction(rng: np.random.Generator, query_id: str, phrase: str, polys: np.ndarray,
                free: np.ndarray, miss: float, n_fp: int) -> dict[str, Any]:
    """A prediction row: each GT kept with probability ``1 - miss`` (shifted by up to 2 px),
    plus ``n_fp`` boxes on the ``free`` centres."""
    kept = polys[rng.random(len(polys)) >= miss]
    shifted = kept + rng.uniform(-2, 2, (len(kept), 1, 2))
    fps = _objects(rng, free[:n_fp]) if n_fp else np.zeros((0, 4, 2))
    pred = np.round(np.concatenate([shifted, fps]), 2)
    scores = np.round(np.concatenate([rng.uniform(0.5, 1.0, len(shifted)),
                                      rng.uniform(0.05, 0.6, len(fps))]), 3)
    lo, hi = pred.min(axis=1), pred.max(axis=1)
    return {"query_id": query_id, "phrase": phrase, "segmentation": None,
            "bbox": [{"bbox": [*map(float, a), *map(float, b)], "score": float(s)}
                     for a, b, s in zip(lo, hi, scores, strict=True)],
            "oriented_bbox": [{"polygon": p.tolist(), "score": float(s)}
                              for p, s in zip(pred, scores, strict=True)]}


def _write(out: Path, images: list[tuple[str, Image.Image]], annotations: list[dict[str, Any]],
           queries: list[dict[str, Any]], rows: list[dict[str, Any]]) -> Path:
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "predictions").mkdir(exist_ok=True)
    for name, img in images:
        img.save(out / "images" / name, quality=90)
    (out / "ground_truth.json").write_text(json.dumps(
        {"annotations": annotations, "tasks": {"open_vocabulary": queries}}))
    (out / "predictions" / "packed.json").write_text(json.dumps(
        {"tasks": {"open_vocabulary": rows}}))
    return out


def _sparse_query(rng: np.random.Generator, k: int, name: str, width: int, height: int,
                  taken: np.ndarray, query_id: str) -> tuple[dict, dict, dict, np.ndarray]:
    """A sparse annotation (5 boxes on free cells), its query and its prediction (4 of the 5
    found, one false positive)."""
    centres = taken[:6]
    polys = _objects(rng, centres[:5])
    ann = {"id": f"s{k:03d}", "image_path": f"images/{name}", "width": width,
           "height": height, "category_name": "plane", **_gt_fields(polys)}
    query = {"query_id": query_id, "ann_id": ann["id"], "type": "positive",
             "phrase": f"plane {k}"}
    return ann, query, _prediction(rng, query_id, f"plane {k}", polys, centres[5:], 0.2, 1), \
        polys


def write_mosaic(out: Path, seed: int = 25, dense_gt: int = DENSE_GT,
                 dense_queries: int = DENSE_QUERIES) -> Path:
    """The mosaic benchmark in ``out``; queries alternate sparse, dense, sparse, ...:
    ``query_id`` ``sparse_NN`` (5 GT boxes) and ``dense_NN`` (``dense_gt`` GT boxes)."""
    rng = np.random.default_rng(seed)
    cells = _packed_centres(rng, MOSAIC_W, MOSAIC_H, dense_gt + 400 + 6 * dense_queries)
    dense_polys = _objects(rng, cells[:dense_gt])
    free = cells[dense_gt:dense_gt + 400]
    spare = cells[dense_gt + 400:]
    name = "mosaic.jpg"
    dense = {"id": "dense", "image_path": f"images/{name}", "width": MOSAIC_W,
             "height": MOSAIC_H, "category_name": "small vehicle", **_gt_fields(dense_polys)}
    annotations, queries, rows, drawn = [dense], [], [], [dense_polys]
    for k in range(dense_queries):
        ann, query, row, polys = _sparse_query(rng, k, name, MOSAIC_W, MOSAIC_H,
                                               spare[6 * k:6 * k + 6], f"sparse_{k:02d}")
        annotations.append(ann)
        drawn.append(polys)
        queries.append(query)
        rows.append(row)
        qid = f"dense_{k:02d}"
        queries.append({"query_id": qid, "ann_id": "dense", "type": "positive",
                        "phrase": f"small vehicle {k}"})
        rows.append(_prediction(rng, qid, f"small vehicle {k}", dense_polys,
                                rng.permutation(free), 0.05, 150))
    image = _image(rng, MOSAIC_W, MOSAIC_H, np.concatenate(drawn))
    return _write(out, [(name, image)], annotations, queries, rows)


def write_sparse(out: Path, seed: int = 26, tiles: int = SPARSE_TILES) -> Path:
    """The baseline in ``out``: ``tiles`` single ``TILE`` x ``TILE`` images, one sparse
    query each (``sparse_NN``, 5 GT boxes)."""
    rng = np.random.default_rng(seed)
    images, annotations, queries, rows = [], [], [], []
    for k in range(tiles):
        name = f"tile_{k:02d}.jpg"
        cells = _packed_centres(rng, TILE, TILE, 6)
        ann, query, row, polys = _sparse_query(rng, k, name, TILE, TILE, cells,
                                               f"sparse_{k:02d}")
        annotations.append(ann)
        queries.append(query)
        rows.append(row)
        images.append((name, _image(rng, TILE, TILE, polys)))
    return _write(out, images, annotations, queries, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sparse", action="store_true", help="the single-tile baseline")
    args = parser.parse_args(argv)
    (write_sparse if args.sparse else write_mosaic)(args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
