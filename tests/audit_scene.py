"""The audit's hand-built scene (issue 36), shared by the core, app and browser tests: four
images of 200 x 200 px, two categories, ten submissions of different skill; five label
errors injected (missing, spurious, shifted, wrong class, a negative query whose category is
present), beside a hard object (three strong submissions find it, with low-ish scores) and a
decoy (seven submissions fire on an empty spot with low scores)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ovearth_core import masks
from tests.analysis_fixtures import corners

SIZE = 200
SUBS = 10

# The world as it is: (image, category, xyxy box, kind); kind "hard": few models find it.
WORLD = [
    (0, "plane", [20, 20, 50, 50], ""), (0, "plane", [120, 30, 150, 60], ""),
    (0, "ship", [40, 120, 80, 140], ""),
    (0, "plane", [140, 140, 170, 170], "missing"),       # not in the GT
    (1, "ship", [10, 10, 50, 30], ""), (1, "ship", [100, 100, 140, 120], ""),
    (1, "plane", [150, 20, 180, 50], ""),
    (1, "plane", [60, 150, 90, 180], "shifted"),         # GT box moved 40 px right
    (2, "plane", [30, 30, 60, 60], ""), (2, "ship", [100, 40, 140, 60], ""),
    (2, "plane", [110, 130, 140, 160], "wrong_class"),   # labelled ship in the GT
    (2, "plane", [20, 150, 32, 162], "hard"),
    (3, "plane", [20, 100, 50, 130], ""), (3, "plane", [150, 150, 180, 180], ""),
    (3, "ship", [80, 20, 120, 40], "negative"),          # GT: no ship, a negative query
]
SPURIOUS = (3, "plane", [90, 160, 120, 190])             # a GT plane where nothing is
DECOY = (1, "plane", [90, 40, 120, 70])                  # models fire there, unsure
INJECTED = {("missing", 0, "plane"), ("shifted", 1, "plane"), ("wrong_class", 2, "ship"),
            ("missing", 3, "ship"), ("spurious", 3, "plane")}


def _gt_objects() -> dict[tuple[int, str], list[list[float]]]:
    out: dict[tuple[int, str], list[list[float]]] = {}
    for image, cat, box, kind in WORLD:
        if kind in ("missing", "negative"):
            continue
        if kind == "shifted":
            box = [box[0] + 40, box[1], box[2] + 40, box[3]]
        if kind == "wrong_class":
            cat = "ship"
        out.setdefault((image, cat), []).append(box)
    out.setdefault((SPURIOUS[0], SPURIOUS[1]), []).append(SPURIOUS[2])
    return out


def _mask(boxes: list[list[float]]) -> dict[str, Any]:
    pixels = np.zeros((SIZE, SIZE), dtype=np.uint8)
    for x1, y1, x2, y2 in boxes:
        pixels[int(y1):int(y2), int(x1):int(x2)] = 1
    return masks.encode(pixels)


def ground_truth() -> dict[str, Any]:
    objs = _gt_objects()
    anns, queries = [], []
    for image in range(4):
        present = [c for c in ("plane", "ship") if (image, c) in objs]
        for cat in present:
            boxes = objs[image, cat]
            ann_id = f"{image}_{cat}"
            anns.append({"id": ann_id, "image_path": f"images/{image}.png", "width": SIZE,
                         "height": SIZE, "category_name": cat, "segmentation": _mask(boxes),
                         "bbox": [[b[0], b[1], b[2] - b[0], b[3] - b[1]] for b in boxes],
                         "oriented_bbox": [corners(b) for b in boxes]})
            queries.append({"query_id": f"q{image}_{cat}", "ann_id": ann_id,
                            "type": "positive", "phrase": cat})
        for cat in ("plane", "ship"):
            if cat not in present:
                queries.append({"query_id": f"q{image}_{cat}", "ann_id": f"{image}_{present[0]}",
                                "type": "negative", "phrase": cat})
    return {"annotations": anns, "tasks": {"open_vocabulary": queries}}


def submission(s: int) -> dict[str, Any]:
    """Submission ``s`` (0 weakest .. 9 strongest): finds real objects (high scores), the
    hard one only for s >= 7 (scores 0.3-0.4), fires on the decoy for s < 7 (0.1-0.2),
    plus one low-score stray box per image."""
    rng = np.random.default_rng(100 + s)
    skill = 0.8 + 0.02 * s
    rows = []
    gt = ground_truth()
    for q in gt["tasks"]["open_vocabulary"]:
        image, cat = int(q["query_id"][1]), q["phrase"]
        found: list[tuple[list[float], float]] = []
        for im, c, box, kind in WORLD:
            if im != image or c != cat:
                continue
            if kind == "hard":
                if s >= 7:
                    found.append((box, 0.3 + 0.03 * (s - 7)))
            elif rng.random() < skill:
                found.append((box, float(rng.uniform(0.6, 0.95))))
        if (image, cat) == DECOY[:2] and s < 7:
            found.append((DECOY[2], 0.1 + 0.01 * s))
        x, y = rng.integers(0, SIZE - 12, 2)
        found.append(([float(x), float(y), float(x + 8), float(y + 8)],
                      float(rng.uniform(0.05, 0.15))))
        boxes = [[b[0] + rng.integers(-1, 2), b[1] + rng.integers(-1, 2), b[2], b[3]]
                 for b, _ in found]
        boxes = [[float(v) for v in b] for b in boxes]
        rows.append({"query_id": q["query_id"],
                     "bbox": [{"bbox": b, "score": sc} for b, (_, sc) in zip(boxes, found,
                                                                             strict=True)],
                     "oriented_bbox": [{"polygon": corners(b), "score": sc}
                                       for b, (_, sc) in zip(boxes, found, strict=True)],
                     "segmentation": _mask([b for b in boxes])})
    return {"tasks": {"open_vocabulary": rows}}


def write_images(folder: Path) -> None:
    """``folder/<image>.png``: a field with the world's objects drawn (planes light, ships
    dark) and the decoy as a faint patch."""
    from PIL import Image, ImageDraw

    folder.mkdir(parents=True, exist_ok=True)
    for image in range(4):
        picture = Image.new("RGB", (SIZE, SIZE), (96, 122, 80))
        draw = ImageDraw.Draw(picture)
        if image == DECOY[0]:
            draw.rectangle(DECOY[2], fill=(110, 134, 92))
        for im, cat, box, _ in WORLD:
            if im == image:
                draw.rectangle(box, fill=(225, 225, 230) if cat == "plane" else (40, 50, 70))
        picture.save(folder / f"{image}.png")


def write_audit_dataset(root: Path) -> tuple[Path, list[Path]]:
    """``root/ground_truth.json``, ``root/predictions/model<s>.json`` and the images
    ``root/images/<image>.png``."""
    (root / "predictions").mkdir(parents=True, exist_ok=True)
    write_images(root / "images")
    gt = root / "ground_truth.json"
    gt.write_text(json.dumps(ground_truth()))
    preds = []
    for s in range(SUBS):
        p = root / "predictions" / f"model{s}.json"
        p.write_text(json.dumps(submission(s)))
        preds.append(p)
    return gt, preds
