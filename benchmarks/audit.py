"""The consensus audit (issue 36) against injected label errors, and cleanlab's ObjectLab.

    .venv/bin/python -m benchmarks.audit [--submissions 24] [--images 300] [--seed 0]

A synthetic benchmark built for the purpose (``ovearth_core.synth``'s layout puts mostly one
category on an image, and a wrong class can only show where the right category is asked
too): ``--images`` images of 512 x 512 px, each with two or three of ten categories present
(1-6 objects each, 10-60 px) and two absent ones asked as negative queries. The world is
seen by ``--submissions`` model personas of different skill whose errors are partly
correlated, as real models' are: *hard* objects (12 %, small and occluded) that every model
finds rarely and with low scores; *decoys* (two background spots per query) that every
model fires on half the time with low scores; confusion with the other categories present;
stray boxes; localisation jitter.

Injected into the ground truth (``--per-kind`` each, default 20): *missing* (an object left
out; its category keeps other objects), *spurious* (a box on empty background), *shifted*
(a box moved by 1-1.5 times its size), *wrong class* (an object labelled as another
category present on its image), *negative* (a present category's objects dropped and its
query made negative).

Figures, per kind (the audit's suspects of the matching kind, best first; a negative-query
error is a ``missing`` suspect on that query): precision among the first K (K = the number
injected of the kind), recall among the first 2K; and overall. A suspect is right when it
names the injected error: same query, same kind, its box (``gt_bbox`` for shifted) at IoU
>= 0.5 with the error's box (any removed object, for a negative query).

ObjectLab (``cleanlab.object_detection.rank.get_label_quality_scores``) sees the best single
submission (the highest best-F1 against the ground truth) as its model: every category
asked on an image is a class, the query's boxes its predictions. It scores images, so the
two are compared image by image: an image is dirty when it holds an injected error; images
ranked by ObjectLab's score (lowest first) and by the audit's best suspect score; precision
among the first K images (K = the dirty images), recall among the first 2K. Nothing is
asserted: the figures are printed (and written as JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ovearth_core import masks, pipeline
from ovearth_core.audit import audit
from ovearth_core.options import Options

SIZE = 512
CATEGORIES = ["plane", "ship", "storage tank", "vehicle", "bridge", "harbor",
              "tennis court", "swimming pool", "windmill", "chimney"]
KINDS = ("missing", "spurious", "shifted", "wrong_class", "negative")
MASK_THRESHOLD = 0.3


@dataclass
class Thing:
    """One real object of the world."""

    box: np.ndarray  # xyxy
    category: str
    hard: bool
    difficulty: float  # shared by every model: partly correlated errors


@dataclass
class Image:
    index: int
    things: list[Thing]
    present: list[str]
    absent: list[str]
    decoys: dict[str, list[np.ndarray]] = field(default_factory=dict)


def _box(rng: np.random.Generator, lo: float = 10, hi: float = 60) -> np.ndarray:
    w, h = rng.uniform(lo, hi, 2)
    x, y = rng.uniform(0, SIZE - w), rng.uniform(0, SIZE - h)
    return np.array([x, y, x + w, y + h])


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(w, 0) * max(h, 0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _free_box(rng: np.random.Generator, taken: list[np.ndarray], lo: float = 10,
              hi: float = 60) -> np.ndarray:
    """A box overlapping none of ``taken`` (grown by a margin)."""
    while True:
        b = _box(rng, lo, hi)
        grown = b + np.array([-8, -8, 8, 8])
        if all(_iou(grown, t) == 0 for t in taken):
            taken.append(b)
            return b


def world(n_images: int, rng: np.random.Generator) -> list[Image]:
    images = []
    for i in range(n_images):
        cats = list(rng.choice(CATEGORIES, size=int(rng.integers(4, 6)), replace=False))
        present, absent = cats[:len(cats) - 2], cats[len(cats) - 2:]
        taken: list[np.ndarray] = []
        things = []
        for c in present:
            for _ in range(int(rng.integers(1, 7))):
                hard = bool(rng.random() < 0.12)
                box = _free_box(rng, taken, 8, 16) if hard else _free_box(rng, taken)
                things.append(Thing(box, str(c), hard, float(rng.uniform(0, 1))))
        img = Image(i, things, [str(c) for c in present], [str(c) for c in absent])
        for c in cats:
            img.decoys[str(c)] = [_free_box(rng, taken) for _ in range(2)]
        images.append(img)
    return images


@dataclass
class Error:
    kind: str
    image: int
    category: str  # the query's category (the wrong label's, for wrong class)
    boxes: list[np.ndarray]  # the boxes that name it (removed objects, for negative)


@dataclass
class Labels:
    """The ground truth as written: per image, per category, its boxes; negatives."""

    boxes: dict[tuple[int, str], list[np.ndarray]]
    negative: dict[int, list[str]]
    errors: list[Error]


def inject(images: list[Image], per_kind: int, rng: np.random.Generator) -> Labels:
    boxes: dict[tuple[int, str], list[np.ndarray]] = {}
    for img in images:
        for t in img.things:
            boxes.setdefault((img.index, t.category), []).append(t.box)
    negative = {img.index: list(img.absent) for img in images}
    errors: list[Error] = []
    order = list(rng.permutation(len(images)))
    used: set[int] = set()

    def pick(ok: Any) -> Image:
        for k in order:
            if k not in used and ok(images[k]):
                used.add(k)
                return images[k]
        raise RuntimeError("not enough images to inject into")

    def easy_with_company(img: Image) -> list[Thing]:
        return [t for t in img.things if not t.hard
                and len(boxes[img.index, t.category]) >= 2]

    for _ in range(per_kind):
        img = pick(lambda m: bool(easy_with_company(m)))
        t = easy_with_company(img)[0]
        boxes[img.index, t.category] = [b for b in boxes[img.index, t.category]
                                        if b is not t.box]
        errors.append(Error("missing", img.index, t.category, [t.box]))
    for _ in range(per_kind):
        img = pick(lambda m: True)
        c = img.present[0]
        taken = [t.box for t in img.things] + [d for v in img.decoys.values() for d in v]
        b = _free_box(rng, taken)
        boxes[img.index, c].append(b)
        errors.append(Error("spurious", img.index, c, [b]))
    for _ in range(per_kind):
        img = pick(lambda m: bool(easy_with_company(m)))
        t = easy_with_company(img)[0]
        size = max(t.box[2] - t.box[0], t.box[3] - t.box[1])
        while True:  # moved inside the image
            angle = rng.uniform(0, 2 * np.pi)
            d = rng.uniform(1.0, 1.5) * size * np.array([np.cos(angle), np.sin(angle)])
            moved = t.box + np.array([d[0], d[1], d[0], d[1]])
            if moved.min() >= 0 and moved.max() <= SIZE:
                break
        boxes[img.index, t.category] = [moved if b is t.box else b
                                        for b in boxes[img.index, t.category]]
        errors.append(Error("shifted", img.index, t.category, [moved]))
    for _ in range(per_kind):
        img = pick(lambda m: bool(easy_with_company(m)) and len(m.present) >= 2)
        t = easy_with_company(img)[0]
        other = next(c for c in img.present if c != t.category)
        boxes[img.index, t.category] = [b for b in boxes[img.index, t.category]
                                        if b is not t.box]
        boxes[img.index, other].append(t.box)
        errors.append(Error("wrong_class", img.index, other, [t.box]))
    for _ in range(per_kind):
        img = pick(lambda m: len(m.present) >= 2)
        c = img.present[-1]
        removed = boxes.pop((img.index, c))
        negative[img.index].append(c)
        errors.append(Error("negative", img.index, c, removed))
    return Labels(boxes, negative, errors)


def _query_id(image: int, category: str) -> str:
    return f"i{image:04d}_{category.replace(' ', '_')}"


def _corners(b: np.ndarray) -> list[list[float]]:
    x1, y1, x2, y2 = (round(float(v), 2) for v in b)
    return [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]


def _mask(boxes: list[np.ndarray]) -> dict[str, Any]:
    pixels = np.zeros((SIZE, SIZE), dtype=np.uint8)
    for b in boxes:
        x1, y1, x2, y2 = (int(round(float(v))) for v in np.clip(b, 0, SIZE))
        pixels[y1:y2, x1:x2] = 1
    return masks.encode(pixels)


def ground_truth(images: list[Image], labels: Labels, modality: str = "bbox"
                 ) -> dict[str, Any]:
    """The ground truth as written: boxes always; oriented boxes (the boxes' corners) and
    masks (the union of the boxes) for those modalities."""
    anns, queries = [], []
    for img in images:
        cats = [c for c in img.present if (img.index, c) in labels.boxes]
        for c in cats:
            ann_id = _query_id(img.index, c)
            boxes = labels.boxes[img.index, c]
            anns.append({"id": ann_id, "image_path": f"images/{img.index:04d}.png",
                         "width": SIZE, "height": SIZE, "category_name": c,
                         "bbox": [[round(float(b[0]), 2), round(float(b[1]), 2),
                                   round(float(b[2] - b[0]), 2), round(float(b[3] - b[1]), 2)]
                                  for b in boxes]})
            if modality == "oriented_bbox":
                anns[-1]["oriented_bbox"] = [_corners(b) for b in boxes]
            if modality == "segmentation":
                anns[-1]["segmentation"] = _mask(boxes)
            queries.append({"query_id": ann_id, "ann_id": ann_id, "type": "positive",
                            "phrase": c})
        for c in labels.negative[img.index]:
            queries.append({"query_id": _query_id(img.index, c),
                            "ann_id": _query_id(img.index, cats[0]), "type": "negative",
                            "phrase": c})
    return {"annotations": anns, "tasks": {"open_vocabulary": queries}}


def persona(images: list[Image], gt: dict[str, Any], skill: float, seed: int,
            modality: str = "bbox") -> dict[str, Any]:
    """A submission: finds an object with probability ``skill`` (lowered by the object's
    shared difficulty), a hard one rarely and with low scores; fires on decoys half the time
    with low scores; confuses the other categories present now and then; adds strays.
    Scored boxes always (ObjectLab reads them); oriented boxes (the boxes' corners, scored)
    or a mask (the union of the boxes scored at least ``MASK_THRESHOLD``: a mask carries
    no score, a model binarises) for those modalities."""
    rng = np.random.default_rng(seed)
    jitter = 0.12 - 0.08 * skill
    by_image = {img.index: img for img in images}
    rows = []
    for q in gt["tasks"]["open_vocabulary"]:
        img = by_image[int(q["query_id"][1:5])]
        cat = q["phrase"]
        found: list[tuple[np.ndarray, float]] = []
        for t in img.things:
            if t.category == cat:
                if t.hard:
                    if rng.random() < 0.45 * skill:
                        found.append((t.box, float(rng.uniform(0.25, 0.5))))
                elif rng.random() < skill * (1 - 0.3 * t.difficulty):
                    found.append((t.box, float(np.clip(rng.normal(0.55 + 0.4 * skill, 0.1),
                                                       0.3, 1.0))))
            elif not t.hard and rng.random() < 0.06:
                found.append((t.box, float(rng.uniform(0.1, 0.4))))
        for d in img.decoys[cat]:
            if rng.random() < 0.5:
                found.append((d, float(rng.uniform(0.05, 0.35))))
        for _ in range(int(rng.poisson(1.0))):
            found.append((_box(rng), float(rng.uniform(0.02, 0.3))))
        out = []
        for box, score in found:
            w, h = box[2] - box[0], box[3] - box[1]
            dx, dy = rng.normal(0, jitter * w), rng.normal(0, jitter * h)
            out.append({"bbox": [round(float(box[0] + dx), 2), round(float(box[1] + dy), 2),
                                 round(float(box[2] + dx), 2), round(float(box[3] + dy), 2)],
                        "score": round(score, 4)})
        row: dict[str, Any] = {"query_id": q["query_id"], "bbox": out}
        if modality == "oriented_bbox":
            row["oriented_bbox"] = [{"polygon": _corners(np.array(o["bbox"])),
                                     "score": o["score"]} for o in out]
        if modality == "segmentation":
            kept = [np.array(o["bbox"]) for o in out if o["score"] >= MASK_THRESHOLD]
            row["segmentation"] = _mask(kept) if kept else None
        rows.append(row)
    return {"tasks": {"open_vocabulary": rows}}


def _box_xyxy(xywh: list[float]) -> np.ndarray:
    x, y, w, h = xywh
    return np.array([x, y, x + w, y + h])


def _names(s: dict[str, Any], e: Error) -> bool:
    if s["query_id"] != _query_id(e.image, e.category):
        return False
    want = {"negative": "missing"}.get(e.kind, e.kind)
    if s["kind"] != want:
        return False
    box = _box_xyxy(s["gt_bbox"] if e.kind == "shifted" else s["bbox"])
    return any(_iou(box, b) >= 0.5 for b in e.boxes)


def _kind_of(s: dict[str, Any]) -> str:
    return "negative" if s["kind"] == "missing" and s["negative"] else s["kind"]


def score_audit(suspects: list[dict[str, Any]], errors: list[Error]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in (*KINDS, "all"):
        errs = [e for e in errors if kind in ("all", e.kind)]
        ranked = [s for s in suspects if kind in ("all", _kind_of(s))]
        k = len(errs)
        hits = [any(_names(s, e) for e in errs) for s in ranked[:k]]
        found = {i for i, e in enumerate(errs) if any(_names(s, e) for s in ranked[:2 * k])}
        out[kind] = {"injected": k, "precision@K": sum(hits) / k if k else None,
                     "recall@2K": len(found) / k if k else None}
    return out


def objectlab(images: list[Image], gt: dict[str, Any], pred: dict[str, Any]
              ) -> np.ndarray:
    """ObjectLab's label quality score per image (lower: more likely mislabelled)."""
    from cleanlab.object_detection.rank import get_label_quality_scores

    classes = {c: k for k, c in enumerate(CATEGORIES)}
    anns = {a["id"]: a for a in gt["annotations"]}
    labels = [{"bboxes": [], "labels": []} for _ in images]
    for a in anns.values():
        i = int(a["id"][1:5])
        for x, y, w, h in a["bbox"]:
            labels[i]["bboxes"].append([x, y, x + w, y + h])
            labels[i]["labels"].append(classes[a["category_name"]])
    preds = [[np.zeros((0, 5)) for _ in CATEGORIES] for _ in images]
    for row in pred["tasks"]["open_vocabulary"]:
        i = int(row["query_id"][1:5])
        cat = next(q["phrase"] for q in _queries(gt) if q["query_id"] == row["query_id"])
        preds[i][classes[cat]] = np.array([[*b["bbox"], b["score"]] for b in row["bbox"]]
                                          ).reshape(-1, 5)
    labels = [{"bboxes": np.array(lab["bboxes"]).reshape(-1, 4),
               "labels": np.array(lab["labels"], dtype=int)} for lab in labels]
    predictions = [np.array(p, dtype=object) for p in preds]
    return np.asarray(get_label_quality_scores(labels, predictions, verbose=False))


_QUERIES: dict[int, list[dict[str, Any]]] = {}


def _queries(gt: dict[str, Any]) -> list[dict[str, Any]]:
    return _QUERIES.setdefault(id(gt), gt["tasks"]["open_vocabulary"])


def image_ranking(order: np.ndarray, dirty: np.ndarray, kinds: dict[str, np.ndarray]
                  ) -> dict[str, Any]:
    """Precision among the first K images (K = the dirty ones), recall among the first 2K,
    and that recall per kind of error the image holds."""
    k = int(dirty.sum())
    top = np.zeros(dirty.size, dtype=bool)
    top[order[:2 * k]] = True
    return {"dirty_images": k, "precision@K": float(dirty[order[:k]].mean()),
            "recall@2K": float(dirty[order[:2 * k]].sum() / k),
            "recall@2K by kind": {kind: float(top[m].sum() / m.sum())
                                  for kind, m in kinds.items()}}


def counted(suspects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The suspects ranked by counts alone (the share of submissions voting; for a spurious
    label, the share not finding it): the ablation of calibration and quality weights."""
    def key(s: dict[str, Any]) -> float:
        return 1 - s["support"] if s["kind"] == "spurious" else s["support"]
    return sorted(suspects, key=lambda s: -key(s))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.audit")
    parser.add_argument("--submissions", type=int, default=24)
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--per-kind", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modality", default="bbox",
                        choices=("bbox", "oriented_bbox", "segmentation"))
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    images = world(args.images, rng)
    labels = inject(images, args.per_kind, rng)
    gt = ground_truth(images, labels, args.modality)
    skills = np.linspace(0.55, 0.95, args.submissions)
    with tempfile.TemporaryDirectory() as tmp:
        gt_path = Path(tmp) / "ground_truth.json"
        gt_path.write_text(json.dumps(gt))
        paths, docs = [], []
        for s, skill in enumerate(skills):
            doc = persona(images, gt, float(skill), args.seed * 1000 + s, args.modality)
            p = Path(tmp) / f"model_{s:02d}.json"
            p.write_text(json.dumps(doc))
            paths.append(p)
            docs.append(doc)
        options = Options("vocabulary", (args.modality,))
        t0 = time.perf_counter()
        result = audit(gt_path, paths, options, min_score=0.0)
        seconds = time.perf_counter() - t0
        # The baseline, in the same run: every submission loaded and evaluated through the
        # pipeline (no result cache), what a leaderboard of these files does.
        t0 = time.perf_counter()
        ground_truth_doc, sha = pipeline.read_ground_truth(gt_path)
        for p in paths:
            pipeline.evaluate_cached(pipeline.load(gt_path, p, options,
                                                   ground_truth=ground_truth_doc,
                                                   gt_sha256=sha), None)
        baseline = time.perf_counter() - t0
    suspects = result["suspects"]
    figures: dict[str, Any] = {"modality": args.modality,
                               "audit": score_audit(suspects, labels.errors),
                               "counts alone (ablation)": score_audit(counted(suspects),
                                                                      labels.errors),
                               "audit_seconds": round(seconds, 2),
                               "evaluate_all_seconds": round(baseline, 2),
                               "audit / evaluate_all": round(seconds / baseline, 2),
                               "suspects": len(suspects),
                               "queries": len(gt["tasks"]["open_vocabulary"]),
                               "gt_objects": len(result["objects"])}
    dirty = np.zeros(len(images), dtype=bool)
    kinds = {k: np.zeros(len(images), dtype=bool) for k in KINDS}
    for e in labels.errors:
        dirty[e.image] = True
        kinds[e.kind][e.image] = True
    best = int(np.argmax([s["weight"] for s in result["submissions"]]))
    t0 = time.perf_counter()
    quality = objectlab(images, gt, docs[best])
    figures["objectlab_seconds"] = round(time.perf_counter() - t0, 2)
    ours = np.zeros(len(images))
    for s in suspects:
        i = int(s["query_id"][1:5])
        ours[i] = max(ours[i], s["score"])
    figures["images"] = {
        "audit": image_ranking(np.argsort(-ours, kind="stable"), dirty, kinds),
        "objectlab (best single submission)": image_ranking(
            np.argsort(quality, kind="stable"), dirty, kinds),
        "best_submission": result["submissions"][best]["name"]}
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
