"""What several benchmark scripts share: the full-scale data, its prediction file, and the
generated inputs of the scaling figures. Every script imports this module; it imports none
of them (no import circles, ``tests/core/test_layers.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
PERSONA = "strong_localiser"


def ensure_data(out: Path, images: bool) -> Path:
    """Generate the full-scale benchmark once (with images when the app is measured)."""
    marker = out / ("ground_truth.json" if not images else "images")
    if not marker.exists():
        cmd = [sys.executable, "-m", "ovearth_core.synth", "--scale", "full", "--out", str(out)]
        if not images:
            cmd.append("--no-images")
        print(f"generating full-scale data: {' '.join(cmd[1:])}", flush=True)
        subprocess.run(cmd, check=True, cwd=ROOT)
    return out


def prediction_file(data: Path) -> Path:
    preds = sorted((data / "predictions").glob("*.json"))
    named = [p for p in preds if p.stem == PERSONA]
    return (named or preds)[0]


def scaled_copy(gt: Path, pred: Path, factor: int, out: Path) -> tuple[Path, Path]:
    """The benchmark with every query repeated ``factor`` times under new ids."""
    gdoc = json.loads(gt.read_text())
    pdoc = json.loads(pred.read_text())
    for key, rows in list(gdoc["tasks"].items()):
        gdoc["tasks"][key] = [dict(r, query_id=f"{r['query_id']}_{k}") for k in range(factor)
                              for r in rows]
    for key, rows in list(pdoc["tasks"].items()):
        pdoc["tasks"][key] = [dict(r, query_id=f"{r['query_id']}_{k}") for k in range(factor)
                              for r in rows]
    g, p = out / f"gt_x{factor}.json", out / f"pred_x{factor}.json"
    g.write_bytes(orjson.dumps(gdoc))
    p.write_bytes(orjson.dumps(pdoc))
    return g, p


def boxes_per_query(tmp: Path, rng: np.random.Generator, k: int,
                    queries: int) -> tuple[Path, Path]:
    """``queries`` referring queries, each with ``k`` GT boxes of 8-40 px in a 2,000 px
    square and ``k`` jittered predictions, both box modalities."""
    anns, qs, rows = [], [], []
    size = 2000
    for i in range(queries):
        xy = rng.uniform(0, size - 40, (k, 2))
        wh = rng.uniform(8, 40, (k, 2))
        boxes = np.concatenate([xy, wh], axis=1).round(1)
        jitter = boxes[:, :2] + rng.normal(0, 3, (k, 2))
        pred = np.concatenate([jitter, jitter + boxes[:, 2:]], axis=1)
        anns.append({"id": str(i), "image_path": f"{i}.png", "width": size, "height": size,
                     "category_name": "c", "segmentation": None, "bbox": boxes.tolist(),
                     "oriented_bbox": [_corners(b) for b in boxes]})
        qs.append({"query_id": f"q{i}", "ann_id": str(i), "query": "q"})
        rows.append({"query_id": f"q{i}", "segmentation": None, "bbox": pred.tolist(),
                     "oriented_bbox": [_corners([x1, y1, x2 - x1, y2 - y1])
                                       for x1, y1, x2, y2 in pred]})
    g, p = tmp / "gt.json", tmp / "pred.json"
    g.write_bytes(orjson.dumps({"annotations": anns, "tasks": {"referring": qs}}))
    p.write_bytes(orjson.dumps({"tasks": {"referring": rows}}))
    return g, p


def _corners(b) -> list[list[float]]:
    x, y, w, h = (float(v) for v in b)
    return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]
