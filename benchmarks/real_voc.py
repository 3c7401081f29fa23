"""`from-voc` and the evaluator on real VOC-style annotation files (issue 46's note).

Usage (from the repository root, after the README's setup):

    .venv/bin/python -m benchmarks.real_voc --annotations DIR --out DIR [--seed 0]
        [--check N] [--classes FILE]

``DIR`` is a folder of real XML files (DIOR / DIOR-R, HRSC2016, NEON / DeepForest VOC; no
images: the conversion is numbers-only). Nothing is fetched or committed here: point it at
files you downloaded. The script

1. reads the XML files itself (defusedxml's ElementTree, independent of the converter),
   counting objects, difficult flags and rotated boxes per file;
2. writes a jittered self-prediction made from that ground truth into ``OUT/results``
   (seeded): 90 % of the objects found, each box moved by up to 5 % of its size, plus one
   false positive per 10 objects; one submission ``hbb`` of ``xmin ymin xmax ymax`` lines
   and, when every object has a rotated box, one submission ``obb`` of corner lines;
3. runs ``convert from-voc``, ``ovearth-eval --modalities auto`` and
   ``ovearth_core.analysis --hard-negatives`` on each submission, then ``convert to-coco``
   and ``from-coco --mapping`` and the evaluator again on the round trip;
4. checks the converted ground truth against its own reading: object counts per file, the
   modalities present, the difficult flags, and the geometry of the first ``--check``
   rotated objects (HRSC: ``c ± w/2 (cos a, sin a) ± h/2 (-sin a, cos a)``; DIOR-R: the
   four corner fields);
5. prints one JSON summary (also ``OUT/summary.json``): wall and CPU time of each command,
   its exit status and stderr, the checks and the headline metrics.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from defusedxml import ElementTree as DET

PY = sys.executable
CORNERS = ("left_top", "right_top", "right_bottom", "left_bottom")


def _num(el, tag: str) -> float:
    return float(el.findtext(tag).strip())


def read_source(folder: Path) -> dict[str, dict]:
    """Per XML stem: image size, and per object its class, difficult flag, box and corners."""
    out: dict[str, dict] = {}
    for path in sorted(folder.glob("*.xml")):
        root = DET.parse(path).getroot()
        objs = []
        if root.tag == "HRSC_Image":
            w, h = int(root.findtext("Img_SizeWidth")), int(root.findtext("Img_SizeHeight"))
            for o in root.iter("HRSC_Object"):
                cx, cy, bw, bh, a = (_num(o, f"mbox_{k}") for k in ("cx", "cy", "w", "h", "ang"))
                u = (bw / 2 * math.cos(a), bw / 2 * math.sin(a))
                v = (-bh / 2 * math.sin(a), bh / 2 * math.cos(a))
                quad = [(cx - u[0] - v[0], cy - u[1] - v[1]), (cx + u[0] - v[0], cy + u[1] - v[1]),
                        (cx + u[0] + v[0], cy + u[1] + v[1]), (cx - u[0] + v[0], cy - u[1] + v[1])]
                box = [_num(o, f"box_{k}") for k in ("xmin", "ymin", "xmax", "ymax")]
                objs.append({"name": o.findtext("Class_ID").strip(),
                             "difficult": int(o.findtext("difficult") or 0), "box": box,
                             "quad": quad})
        else:
            size = root.find("size")
            w, h = int(size.findtext("width")), int(size.findtext("height"))
            for o in root.iter("object"):
                rb, bb = o.find("robndbox"), o.find("bndbox")
                quad = box = None
                if rb is not None:
                    quad = [(_num(rb, f"x_{c}"), _num(rb, f"y_{c}")) for c in CORNERS]
                if bb is not None:
                    box = [_num(bb, k) for k in ("xmin", "ymin", "xmax", "ymax")]
                objs.append({"name": o.findtext("name").strip(),
                             "difficult": int(o.findtext("difficult") or 0), "box": box,
                             "quad": quad})
        out[path.stem] = {"width": w, "height": h, "objects": objs}
    return out


def _envelope(quad):
    xs, ys = [p[0] for p in quad], [p[1] for p in quad]
    return [min(xs), min(ys), max(xs), max(ys)]


def write_results(source: dict[str, dict], out: Path, seed: int) -> list[Path]:
    """The jittered self-prediction: ``out/hbb`` (boxes) and, if every object is rotated,
    ``out/obb`` (corners); per-class files ``det_<class>.txt``."""
    rng = random.Random(seed)
    rotated = all(o["quad"] is not None for s in source.values() for o in s["objects"])
    kinds = ["hbb"] + (["obb"] if rotated else [])
    lines: dict[str, dict[str, list[str]]] = {k: {} for k in kinds}
    classes = sorted({o["name"] for s in source.values() for o in s["objects"]})
    for stem, s in source.items():
        for o in s["objects"]:
            if rng.random() < 0.10:
                continue
            box = o["box"] if o["box"] is not None else _envelope(o["quad"])
            bw, bh = box[2] - box[0], box[3] - box[1]
            dx, dy = rng.uniform(-0.05, 0.05) * bw, rng.uniform(-0.05, 0.05) * bh
            score = round(rng.uniform(0.3, 1.0), 4)
            lines["hbb"].setdefault(o["name"], []).append(
                f"{stem} {score} {box[0] + dx:.2f} {box[1] + dy:.2f} {box[2] + dx:.2f} "
                f"{box[3] + dy:.2f}")
            if rotated:
                quad = " ".join(f"{x + dx:.2f} {y + dy:.2f}" for x, y in o["quad"])
                lines["obb"].setdefault(o["name"], []).append(f"{stem} {score} {quad}")
        for _ in range(max(1, len(s["objects"]) // 10) if s["objects"] else 0):
            cls = rng.choice(classes)
            x, y = rng.uniform(0, s["width"] - 30), rng.uniform(0, s["height"] - 30)
            score = round(rng.uniform(0.0, 0.5), 4)
            lines["hbb"].setdefault(cls, []).append(f"{stem} {score} {x:.2f} {y:.2f} "
                                                    f"{x + 25:.2f} {y + 25:.2f}")
            if rotated:
                quad = " ".join(f"{u:.2f} {v:.2f}" for u, v in
                                ((x, y), (x + 25, y), (x + 25, y + 25), (x, y + 25)))
                lines["obb"].setdefault(cls, []).append(f"{stem} {score} {quad}")
    folders = []
    for kind in kinds:
        folder = out / kind
        folder.mkdir(parents=True)
        for cls, rows in lines[kind].items():
            (folder / f"det_{cls}.txt").write_text("\n".join(rows) + "\n")
        folders.append(folder)
    return folders


def run(cmd: list[str], log: list[dict]) -> subprocess.CompletedProcess:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    log.append({"cmd": " ".join(cmd[2:]), "status": proc.returncode, "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2), "stderr": proc.stderr.strip()[-2000:]})
    return proc


def _same_quad(a, b, tol=1e-6) -> bool:
    """The same four vertices, in either direction and from any start."""
    a = [tuple(p) for p in a]
    for seq in (b, b[::-1]):
        for k in range(4):
            rot = seq[k:] + seq[:k]
            if all(math.dist(p, q) <= tol for p, q in zip(a, rot, strict=True)):
                return True
    return False


def check(source: dict[str, dict], gt: dict, n_geometry: int) -> dict:
    """The converted ground truth (annotations ``<stem>_<class>``, boxes ``x y w h``, oriented
    boxes four ``[x, y]`` vertices) against the source read here."""
    by_id = {a["id"]: a for a in gt["annotations"]}
    counts_ok, diffs_ok, geometry = True, True, []
    checked = wrong = 0
    for stem, s in source.items():
        per_class: dict[str, int] = {}
        for obj in s["objects"]:
            k = per_class.get(obj["name"], 0)
            per_class[obj["name"]] = k + 1
            ann = by_id.get(f"{stem}_{obj['name']}")
            if ann is None or len(ann["bbox"]) <= k:
                counts_ok = False
                continue
            flags = ann.get("difficult") or [0] * len(ann["bbox"])
            if flags[k] != obj["difficult"]:
                diffs_ok = False
            if obj["quad"] is None or not ann["oriented_bbox"]:
                continue
            got = [tuple(p) for p in ann["oriented_bbox"][k]]
            same = _same_quad(obj["quad"], got)
            checked += 1
            wrong += not same
            tilted = len({round(x, 6) for x, _ in obj["quad"]}) > 2
            if (not tilted and n_geometry) or len(geometry) >= n_geometry:
                continue
            geometry.append({"file": stem, "class": obj["name"], "index": k,
                             "source_quad": [[round(x, 4), round(y, 4)] for x, y in obj["quad"]],
                             "converted_quad": [[round(x, 4), round(y, 4)] for x, y in got],
                             "converted_bbox_xywh": ann["bbox"][k], "source_box": obj["box"],
                             "envelope_xyxy": [round(v, 4) for v in _envelope(obj["quad"])],
                             "same": same})
        for cls, n in per_class.items():
            ann = by_id.get(f"{stem}_{cls}")
            if ann is None or len(ann["bbox"]) != n:
                counts_ok = False
    anns = [a for a in gt["annotations"] if a["bbox"]]
    return {"objects_source": sum(len(s["objects"]) for s in source.values()),
            "objects_converted": sum(len(a["bbox"]) for a in anns),
            "oriented_converted": sum(len(a.get("oriented_bbox") or []) for a in anns),
            "difficult_source": sum(o["difficult"] for s in source.values()
                                    for o in s["objects"]),
            "difficult_converted": sum(sum(a.get("difficult") or []) for a in anns),
            "has_difficult_key": sum("difficult" in a for a in anns),
            "counts_per_file_equal": counts_ok, "difficult_equal": diffs_ok,
            "gt_modalities": sorted({m for a in anns for m in ("bbox", "oriented_bbox",
                                                                "segmentation") if a.get(m)}),
            "oriented_checked": checked, "oriented_different": wrong,
            "geometry": geometry}


def _headline(result: dict) -> dict:
    out = {}
    for mod, block in (result.get("metrics") or result).items():
        if isinstance(block, dict):
            out[mod] = {k: v for k, v in block.items() if not isinstance(v, (dict, list))}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--annotations", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--classes", type=Path)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check", type=int, default=3,
                   help="tilted rotated objects to list with their hand computation")
    args = p.parse_args(argv)
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    log: list[dict] = []
    source = read_source(args.annotations)
    folders = write_results(source, args.out / "results", args.seed)
    bench = args.out / "bench"
    cmd = [PY, "-m", "ovearth_core.convert", "from-voc", "--annotations", str(args.annotations),
           "--out", str(bench)]
    if args.classes:
        cmd += ["--classes", str(args.classes)]
    for f in folders:
        cmd += ["--results", str(f)]
    summary: dict = {"annotations": str(args.annotations), "files": len(source), "runs": log}
    if run(cmd, log).returncode != 0:
        print(json.dumps(summary, indent=1))
        return 1
    gt = json.loads((bench / "ground_truth.json").read_text())
    summary["check"] = check(source, gt, args.check)
    summary["metrics"] = {}
    for f in folders:
        pred_path = bench / "predictions" / f"{f.name}.json"
        pred = json.loads(pred_path.read_text())
        summary.setdefault("pred_modalities", {})[f.name] = sorted(
            {m for q in pred["tasks"]["open_vocabulary"] for m in
             ("bbox", "oriented_bbox", "segmentation") if q.get(m)})
        ev = args.out / f"eval_{f.name}.json"
        run([PY, "-m", "ovearth_core", "--gt", str(bench / "ground_truth.json"),
             "--predictions", str(pred_path), "--modalities", "auto", "--output", str(ev)], log)
        an = args.out / f"analysis_{f.name}.json"
        run([PY, "-m", "ovearth_core.analysis", "--gt", str(bench / "ground_truth.json"),
             "--predictions", str(pred_path), "--modalities", "auto", "--hard-negatives",
             "--output", str(an)], log)
        summary["metrics"][f.name] = {
            "eval": _headline(json.loads(ev.read_text())) if ev.exists() else None,
            "analysis_file": str(an) if an.exists() else None}
        coco = args.out / f"coco_{f.name}"
        run([PY, "-m", "ovearth_core.convert", "to-coco", "--gt", str(bench / "ground_truth.json"),
             "--predictions", str(pred_path), "--task", "vocabulary", "--out", str(coco)], log)
        back = args.out / f"back_{f.name}"
        run([PY, "-m", "ovearth_core.convert", "from-coco", "--mapping",
             str(coco / "mapping.json"), "--out", str(back)], log)
        if (back / "ground_truth.json").exists():
            preds = sorted((back / "predictions").glob("*.json"))
            ev2 = args.out / f"eval_back_{f.name}.json"
            run([PY, "-m", "ovearth_core", "--gt", str(back / "ground_truth.json"),
                 "--predictions", str(preds[0]), "--modalities", "auto", "--output", str(ev2)],
                log)
            first = json.loads(ev.read_text()) if ev.exists() else None
            again = json.loads(ev2.read_text()) if ev2.exists() else None
            gt2 = json.loads((back / "ground_truth.json").read_text())
            summary["metrics"][f.name]["round_trip"] = {
                "eval_equal": _headline(first or {}) == _headline(again or {}),
                "check": {k: v for k, v in check(source, gt2, 0).items() if k != "geometry"}}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
