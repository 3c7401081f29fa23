"""Timings of the converters (issue 16) at realistic sizes, on synthetic inputs made here.

Usage (from the repository root, after the README's setup):

    .venv/bin/python -m benchmarks.convert [--data DIR] [--quick] [--only NAME,...]

Generates once (seeded; into ``benchmarks/data/convert``, git-ignored; ``--quick`` a tenth of
each size) inputs shaped like the public datasets, then runs each converter's command line
as a subprocess and prints its wall time, peak RSS and throughput:

* ``dota``: a DOTA-v1.0-train-sized split, 1,400 images (800-4,000 px) with 100,000 objects in
  15 classes (5 % difficult, 2 % in self-crossing vertex order) and a Task1 results folder
  (85 % of the objects found, plus 30 % false positives);
* ``coco``: a COCO-val2017-sized set, 5,000 images, 80 categories, 36,781 polygon annotations
  (1 % crowd, as uncompressed RLE) and a 500,000-detection bbox results file; negatives: 3 per
  image;
* ``rsvg``: a DIOR-RSVG-sized set, 17,402 XML files with 38,320 expressions and a prediction
  file with a box for each;
* ``label-maps``: a LoveDA-val-sized set, 1,669 tiles of 1,024 x 1,024 with 7 classes (0 is
  "no data") and one model's predicted maps;
* ``to-coco``: the converted DOTA benchmark's open-vocabulary task and submission to COCO, and
  ``from-coco --mapping`` back.

Images are PNG headers only (signature, IHDR, IEND): the converters read image sizes from
headers and never decode pixels, so real pixels would only add the time of copying files
(``--link`` hard-links them; it is used here). Nothing here asserts time.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
DOTA_CLASSES = ["plane", "ship", "storage-tank", "baseball-diamond", "tennis-court",
                "basketball-court", "ground-track-field", "harbor", "bridge", "large-vehicle",
                "small-vehicle", "helicopter", "roundabout", "soccer-ball-field",
                "swimming-pool"]
DOTA_WEIGHTS = [6, 25, 6, 1, 3, 1, 1, 6, 2, 17, 26, 1, 1, 1, 3]


def png_header(path: Path, width: int, height: int) -> None:
    """A PNG holding only its signature, IHDR and IEND: enough for an image's size."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b""))


def _split(total: int, parts: int, rng: np.random.Generator) -> np.ndarray:
    """``parts`` non-negative counts summing to ``total``, heavy-tailed like real scenes."""
    weights = rng.lognormal(0, 1.2, parts)
    counts = np.floor(weights / weights.sum() * total).astype(int)
    np.add.at(counts, rng.choice(parts, total - counts.sum(), replace=True), 1)
    return counts


def _rotated_rects(n: int, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    centre = rng.uniform([40, 40], [w - 40, h - 40], (n, 2))
    size = rng.uniform(8, 70, (n, 2))
    angle = rng.uniform(0, np.pi, n)
    half = np.stack([[-1, -1], [1, -1], [1, 1], [-1, 1]]) / 2
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    local = half[None] * size[:, None, :]
    rot = np.stack([local[..., 0] * c - local[..., 1] * s,
                    local[..., 0] * s + local[..., 1] * c], axis=-1)
    return rot + centre[:, None, :]


def make_dota(root: Path, images: int, objects: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for sub in ("labelTxt", "images", "results/detector"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    counts = _split(objects, images, rng)
    results: dict[str, list[str]] = {c: [] for c in DOTA_CLASSES}
    p = np.array(DOTA_WEIGHTS, float) / sum(DOTA_WEIGHTS)
    for i, n in enumerate(counts.tolist()):
        name = f"P{i:04d}"
        w, h = (int(v) for v in rng.integers(800, 4001, 2))
        png_header(root / "images" / f"{name}.png", w, h)
        quads = _rotated_rects(n, w, h, rng)
        cls = rng.choice(len(DOTA_CLASSES), n, p=p)
        hard = rng.random(n) < 0.05
        crossing = rng.random(n) < 0.02
        quads[crossing] = quads[crossing][:, [0, 2, 1, 3]]
        lines = ["imagesource:GoogleEarth", f"gsd:{rng.uniform(0.1, 1):.6f}"]
        lines += [" ".join(f"{v:.1f}" for v in q.ravel()) + f" {DOTA_CLASSES[c]} {int(d)}"
                  for q, c, d in zip(quads, cls, hard, strict=True)]
        (root / "labelTxt" / f"{name}.txt").write_text("\n".join(lines) + "\n")
        found = rng.random(n) < 0.85
        jitter = quads[found] + rng.normal(0, 2, (int(found.sum()), 4, 2))
        extra = int(0.3 * n)
        fps = _rotated_rects(extra, w, h, rng)
        for q, c, s in zip(np.concatenate([jitter, fps]),
                           np.concatenate([cls[found], rng.choice(len(DOTA_CLASSES), extra)]),
                           rng.uniform(0.05, 1, int(found.sum()) + extra), strict=True):
            results[DOTA_CLASSES[c]].append(f"{name} {s:.4f} " + " ".join(
                f"{v:.1f}" for v in q[[0, 1, 2, 3]].ravel()))
    for cls_name, lines in results.items():
        (root / "results" / "detector" / f"Task1_{cls_name}.txt").write_text(
            "\n".join(lines) + "\n")


def make_coco(root: Path, images: int, annotations: int, detections: int,
              seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    (root / "images").mkdir(parents=True, exist_ok=True)
    imgs, anns, dets = [], [], []
    counts = _split(annotations, images, rng)
    per_image_dets = _split(detections, images, rng)
    for i, (n, nd) in enumerate(zip(counts.tolist(), per_image_dets.tolist(), strict=True)):
        img_id = 100_000 + 7 * i
        w, h = 640, int(rng.choice([427, 480, 512]))
        png_header(root / "images" / f"{img_id:012d}.png", w, h)
        imgs.append({"id": img_id, "file_name": f"{img_id:012d}.png", "width": w, "height": h})
        cats = rng.choice(80, max(1, min(n, int(rng.integers(1, 6)))), replace=False) + 1
        boxes = []
        for _ in range(n):
            cx, cy = rng.uniform(20, w - 20), rng.uniform(20, h - 20)
            r = rng.uniform(4, 60)
            k = int(rng.integers(8, 31))
            ang = np.sort(rng.uniform(0, 2 * np.pi, k))
            rad = r * rng.uniform(0.6, 1.0, k)
            xs = np.clip(cx + rad * np.cos(ang), 0, w)
            ys = np.clip(cy + rad * np.sin(ang), 0, h)
            x0, y0 = float(xs.min()), float(ys.min())
            bw, bh = max(float(xs.max()) - x0, 1.0), max(float(ys.max()) - y0, 1.0)
            cat = int(rng.choice(cats))
            crowd = rng.random() < 0.01
            ann = {"id": len(anns) + 1, "image_id": img_id, "category_id": cat,
                   "bbox": [round(x0, 2), round(y0, 2), round(bw, 2), round(bh, 2)],
                   "area": bw * bh, "iscrowd": int(crowd)}
            if crowd:
                mask = np.zeros((h, w), np.uint8)
                mask[int(y0):int(y0 + bh), int(x0):int(x0 + bw)] = 1
                flat = mask.flatten(order="F")
                change = np.flatnonzero(np.diff(flat)) + 1
                edges = np.concatenate([[0], change, [flat.size]])
                runs = np.diff(edges).tolist()
                ann["segmentation"] = {"size": [h, w], "counts": ([0] if flat[0] else []) + runs}
            else:
                ann["segmentation"] = [np.round(np.stack([xs, ys], 1).ravel(), 2).tolist()]
            anns.append(ann)
            boxes.append((cat, x0, y0, bw, bh))
        for _ in range(nd):
            if boxes and rng.random() < 0.7:
                cat, x0, y0, bw, bh = boxes[int(rng.integers(len(boxes)))]
                x0, y0 = x0 + rng.normal(0, 3), y0 + rng.normal(0, 3)
            else:
                cat = int(rng.integers(1, 81))
                x0, y0 = rng.uniform(0, w - 30), rng.uniform(0, h - 30)
                bw, bh = rng.uniform(5, 100, 2)
            dets.append({"image_id": img_id, "category_id": int(cat),
                         "bbox": [round(max(x0, 0.0), 2), round(max(y0, 0.0), 2),
                                  round(bw, 2), round(bh, 2)],
                         "score": round(float(rng.uniform(0.01, 1)), 5)})
    cats = [{"id": k, "name": f"category {k}"} for k in range(1, 81)]
    (root / "instances.json").write_text(json.dumps({"images": imgs, "annotations": anns,
                                                     "categories": cats}))
    (root / "results.json").write_text(json.dumps(dets))


def make_rsvg(root: Path, images: int, expressions: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for sub in ("Annotations", "JPEGImages"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    counts = _split(expressions - images, images, rng) + 1
    preds = []
    names = ["vehicle", "ship", "storagetank", "bridge", "airplane", "harbor", "windmill"]
    for i, n in enumerate(counts.tolist()):
        stem = f"{i:05d}"
        png_header(root / "JPEGImages" / f"{stem}.png", 800, 800)
        objs = []
        for k in range(n):
            x, y = rng.uniform(0, 700, 2)
            bw, bh = rng.uniform(8, 100, 2)
            objs.append(f"  <object>\n    <name>{names[int(rng.integers(len(names)))]}</name>\n"
                        f"    <bndbox><xmin>{x:.0f}</xmin><ymin>{y:.0f}</ymin>"
                        f"<xmax>{x + bw:.0f}</xmax><ymax>{y + bh:.0f}</ymax></bndbox>\n"
                        f"    <description>the object number {k} near the "
                        f"{['left', 'right', 'top', 'bottom'][k % 4]} side</description>\n"
                        "  </object>")
            preds.append({"image": stem, "object": k,
                          "bbox": [round(x + 2, 1), round(y - 1, 1), round(x + bw, 1),
                                   round(y + bh + 2, 1)]})
        (root / "Annotations" / f"{stem}.xml").write_text(
            f"<annotation>\n  <filename>{stem}.png</filename>\n  <size><width>800</width>"
            "<height>800</height><depth>3</depth></size>\n" + "\n".join(objs)
            + "\n</annotation>\n")
    (root / "predictions.json").write_text(json.dumps(preds))


def make_label_maps(root: Path, tiles: int, size: int = 1024, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for sub in ("gt", "pred/model", "images"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "classes.txt").write_text("0 no-data\n1 background\n2 building\n3 road\n4 water\n"
                                      "5 barren\n6 forest\n7 agriculture\n")
    block = 32
    for i in range(tiles):
        name = f"{i:04d}"
        coarse = rng.choice(8, (size // block, size // block),
                            p=[0.03, 0.3, 0.15, 0.1, 0.07, 0.05, 0.15, 0.15])
        gt = np.kron(coarse, np.ones((block, block), np.uint8)).astype(np.uint8)
        flip = rng.random(coarse.shape) < 0.15
        noisy = np.where(flip, rng.integers(1, 8, coarse.shape), coarse)
        pred = np.kron(noisy, np.ones((block, block), np.uint8)).astype(np.uint8)
        Image.fromarray(gt, "L").save(root / "gt" / f"{name}.png", compress_level=1)
        Image.fromarray(pred, "L").save(root / "pred" / "model" / f"{name}.png",
                                        compress_level=1)
        png_header(root / "images" / f"{name}.png", size, size)


def _generate(marker: Path, make: Callable[[], None]) -> None:
    if marker.exists():
        return
    start = time.perf_counter()
    print(f"generating {marker.parent} ...", flush=True)
    make()
    marker.write_text("ok\n")
    print(f"  done in {time.perf_counter() - start:.1f} s", flush=True)


def run(args: list[str]) -> tuple[float, float, str]:
    """Wall time (s), peak RSS (MB) and stdout of one converter command."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ovearth_core.convert", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:1])} failed:\n{err}")
    return wall, usage.ru_maxrss / 1024, out.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "convert")
    parser.add_argument("--quick", action="store_true", help="a tenth of every size")
    parser.add_argument("--only", default="dota,coco,rsvg,label-maps,to-coco")
    args = parser.parse_args(argv)
    f = 10 if args.quick else 1
    data = args.data / ("quick" if args.quick else "full")
    only = set(args.only.split(","))
    out = data / "out"
    out.mkdir(parents=True, exist_ok=True)
    sizes = {"dota": (1400 // f, 100_000 // f), "coco": (5000 // f, 36_781 // f, 500_000 // f),
             "rsvg": (17_402 // f, 38_320 // f), "label-maps": (1669 // f,)}
    rows = []
    if only & {"dota", "to-coco"}:
        _generate(data / "dota" / ".ok", lambda: make_dota(data / "dota", *sizes["dota"]))
        d = data / "dota"
        wall, rss, line = run(["from-dota", "--labels", str(d / "labelTxt"), "--results",
                               str(d / "results" / "detector"), "--images", str(d / "images"),
                               "--out", str(out / "dota"), "--force", "--link", "--quiet"])
        n = sizes["dota"][1]
        rows.append(("from-dota", f"{sizes['dota'][0]:,} images, {n:,} objects + "
                     "results", wall, rss, f"{n / wall:,.0f} objects/s"))
        print(f"  {line}")
    if "coco" in only:
        _generate(data / "coco" / ".ok", lambda: make_coco(data / "coco", *sizes["coco"]))
        c = data / "coco"
        wall, rss, line = run(["from-coco", "--instances", str(c / "instances.json"),
                               "--results", str(c / "results.json"), "--images",
                               str(c / "images"), "--negatives", "3", "--out",
                               str(out / "coco"), "--force", "--link", "--quiet"])
        n = sizes["coco"][1]
        rows.append(("from-coco", f"{sizes['coco'][0]:,} images, {n:,} polygons, "
                     f"{sizes['coco'][2]:,} detections", wall, rss,
                     f"{n / wall:,.0f} annotations/s"))
        print(f"  {line}")
    if "rsvg" in only:
        _generate(data / "rsvg" / ".ok", lambda: make_rsvg(data / "rsvg", *sizes["rsvg"]))
        r = data / "rsvg"
        wall, rss, line = run(["from-rsvg", "--annotations", str(r / "Annotations"),
                               "--predictions", str(r / "predictions.json"), "--images",
                               str(r / "JPEGImages"), "--out", str(out / "rsvg"), "--force",
                               "--link", "--quiet"])
        n = sizes["rsvg"][0]
        rows.append(("from-rsvg", f"{n:,} XML files, {sizes['rsvg'][1]:,} expressions + "
                     "predictions", wall, rss, f"{n / wall:,.0f} files/s"))
        print(f"  {line}")
    if "label-maps" in only:
        _generate(data / "maps" / ".ok", lambda: make_label_maps(data / "maps",
                                                                 *sizes["label-maps"]))
        m = data / "maps"
        wall, rss, line = run(["from-label-maps", "--gt", str(m / "gt"), "--classes",
                               str(m / "classes.txt"), "--pred", str(m / "pred" / "model"),
                               "--images", str(m / "images"), "--ignore-index", "0",
                               "--out", str(out / "maps"), "--force", "--link", "--quiet"])
        n = sizes["label-maps"][0]
        rows.append(("from-label-maps", f"{n:,} tiles of 1024 x 1024, 7 classes + "
                     "predictions", wall, rss, f"{n / wall:,.1f} tiles/s"))
        print(f"  {line}")
    if "to-coco" in only:
        bench = out / "dota"
        wall, rss, line = run(["to-coco", "--gt", str(bench / "ground_truth.json"),
                               "--predictions", str(bench / "predictions" / "detector.json"),
                               "--task", "vocabulary", "--out", str(out / "dota_coco"),
                               "--force"])
        queries = len(json.loads((out / "dota_coco" / "mapping.json").read_text())["queries"])
        rows.append(("to-coco", f"the DOTA benchmark: {queries:,} queries", wall, rss,
                     f"{queries / wall:,.0f} queries/s"))
        print(f"  {line}")
        wall, rss, line = run(["from-coco", "--mapping", str(out / "dota_coco" / "mapping.json"),
                               "--images", str(data / "dota" / "images"), "--out",
                               str(out / "dota_back"), "--force", "--link", "--quiet"])
        rows.append(("from-coco --mapping", "that export back", wall, rss,
                     f"{queries / wall:,.0f} queries/s"))
        print(f"  {line}")
    print("\n| converter | input | wall time | peak RSS | throughput |")
    print("| --- | --- | --- | --- | --- |")
    for name, what, wall, rss, rate in rows:
        print(f"| {name} | {what} | {wall:.1f} s | {rss:.0f} MB | {rate} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
