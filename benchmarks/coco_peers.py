"""COCO-AP peers (issues 28, 38): our COCO-style AP against pycocotools, faster-coco-eval,
hotcoco, ultrafast-pycocotools and vernier on the paper-sized benchmark's vocabulary task,
exported to COCO with ``to-coco``.

Usage (from the repository root; the peers are in ``benchmarks/requirements.txt``):

    .venv/bin/python -m benchmarks.coco_peers [--data DIR] [--persona NAME] [--repeats 5]
                                              [--profile] [--categories N]

``--categories N`` runs on the same files with the vocabulary phrases renamed into N
categories (:func:`few_categories`; issue 49: a few-category benchmark).

Each figure is one new process per repeat (the tools alternate within a repeat, so a
change of load hits them alike; medians), timed from the files to the numbers: **load**
(ours: :func:`ovearth_core.io.load_samples` of the benchmark's own files, boxes only; the
peers: ``COCO(instances_bbox.json)`` + ``loadRes(results_bbox.json)``), then **pooled AP**
(every query one class: ours ``coco_average_precision(...)["ap@[0.5:0.95]"]``, the function
the analysis command's ``average_precision.bbox.coco`` block comes from; the peers ``useCats
= 0`` over ``mapping["cocoeval_image_ids"]["bbox"]``) and **per-category mAP** (ours the
same function on the queries grouped by phrase, as the export names its categories; the
peers ``useCats = 1``, each category's AP from ``eval["precision"]``). Every tool runs with
our IoU thresholds (exact decimals; COCOeval's ``linspace`` gives 0.6000000000000001) and
100 detections per image. Equality is checked to 1e-12: the pooled AP, the mAP and every
category's AP. Interpreter start and imports are not in the figures (printed apart).

``--profile`` adds a cProfile of ours (load and AP, in process): where its time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("ours", "pycocotools", "faster-coco-eval", "hotcoco", "ultrafast-pycocotools",
         "vernier")
# vernier's COCOeval shim refuses a subset of imgIds: it reads the export cut to the scored
# images (:func:`_scored_subset`, written once, not timed), the same content the others score.
SUBSET_TOOLS = ("vernier",)
BEFORE = "ours (before)"  # ours from another checkout (--before), run like "ours"
# Ours on OVEarth files holding what the COCO export holds: the vocabulary task's boxes.
BOXES_ONLY = "ours (boxes only)"
STEPS = ("load", "pooled", "per_category")
CPU_STEPS = tuple(f"{k}_cpu" for k in STEPS)  # the process's CPU time (all its threads)
TOLERANCE = 1e-12

_CHILD = r'''
import json, sys, time
t0 = time.perf_counter()
tool, export, gt_path, pred_path = sys.argv[1:5]
tool = "ours" if tool.startswith("ours") else tool
IMPORT = {"ours": "from ovearth_core.analysis.ap import coco_average_precision",
          "pycocotools": "from pycocotools.coco import COCO\n"
                         "from pycocotools.cocoeval import COCOeval",
          "faster-coco-eval": "from faster_coco_eval import COCO, COCOeval_faster as COCOeval",
          "hotcoco": "from hotcoco import COCO, COCOeval",
          "ultrafast-pycocotools": "from ultrafast_pycocotools import COCO, COCOeval",
          "vernier": "from pycocotools.coco import COCO\n"
                     "from vernier import COCOeval"}[tool]
exec(IMPORT)
import contextlib, io as _io
import numpy as np
from ovearth_core.types import IOU_THRESHOLDS
mapping = json.load(open(f"{export}/mapping.json"))
names = {c["id"]: c["name"] for c in json.load(open(f"{export}/instances_bbox.json"))["categories"]}
imported = time.perf_counter() - t0
out = {"import": imported}
if tool == "ours":
    from dataclasses import replace
    from ovearth_core.io import load_samples
    s, c = time.perf_counter(), time.process_time()
    samples = load_samples(gt_path, pred_path, "vocabulary", modalities="bbox")
    out["load"], out["load_cpu"] = time.perf_counter() - s, time.process_time() - c
    s, c = time.perf_counter(), time.process_time()
    pooled = coco_average_precision(samples, "bbox")
    out["pooled"], out["pooled_cpu"] = time.perf_counter() - s, time.process_time() - c
    # The export's categories are the phrases: group by them (not timed; the peers read
    # their categories from the file).
    phrased = [replace(x, category=x.phrase) for x in samples]
    s, c = time.perf_counter(), time.process_time()
    by_phrase = coco_average_precision(phrased, "bbox")
    out["per_category"], out["per_category_cpu"] = time.perf_counter() - s, time.process_time() - c
    out["pooled_ap"] = pooled["ap@[0.5:0.95]"]
    # The by-phrase call alone gives every number the peers' two runs give (the pooled AP
    # is class-agnostic): "same work" is the load and that call.
    out["pooled_ap_by_phrase"] = by_phrase["ap@[0.5:0.95]"]
    out["map"] = by_phrase["map@[0.5:0.95]"]
    out["category_ap"] = {k: v["ap@[0.5:0.95]"] for k, v in by_phrase["per_category"].items()}
else:
    quiet = contextlib.redirect_stdout(_io.StringIO())
    with quiet:
        s, c = time.perf_counter(), time.process_time()
        subset = "_scored" if tool == "vernier" else ""
        gt = COCO(f"{export}/instances_bbox{subset}.json")
        dt = gt.loadRes(f"{export}/results_bbox{subset}.json")
        out["load"], out["load_cpu"] = time.perf_counter() - s, time.process_time() - c
        img_ids = sorted(mapping["cocoeval_image_ids"]["bbox"])

        def run(use_cats):
            ev = COCOeval(gt, dt, "bbox")
            p = ev.params
            p.iouThrs = np.array(IOU_THRESHOLDS) if tool != "hotcoco" else list(IOU_THRESHOLDS)
            if not subset:
                p.imgIds = img_ids
            p.useCats = int(use_cats) if tool != "hotcoco" else bool(use_cats)
            if tool == "hotcoco":
                ev.params = p
            ev.evaluate(); ev.accumulate(); ev.summarize()
            return ev

        s, c = time.perf_counter(), time.process_time()
        ev0 = run(False)
        out["pooled"], out["pooled_cpu"] = time.perf_counter() - s, time.process_time() - c
        s, c = time.perf_counter(), time.process_time()
        ev1 = run(True)
        out["per_category"] = time.perf_counter() - s
        out["per_category_cpu"] = time.process_time() - c
    out["pooled_ap"] = float(ev0.stats[0])
    out["map"] = float(ev1.stats[0])
    prec = np.asarray(ev1.eval["precision"])[:, :, :, 0, -1]
    cat_ids = list(ev1.params.catIds) if tool != "hotcoco" else list(ev1.params.cat_ids)
    cats = {}
    for k, cat in enumerate(cat_ids):
        valid = prec[:, :, k][prec[:, :, k] > -1]
        if valid.size:
            cats[names[cat]] = float(valid.mean())
    out["category_ap"] = cats
print("RESULT=" + json.dumps(out))
'''


def _export(data: Path, persona: str, out: Path | None = None) -> Path:
    """The vocabulary task of ``persona`` as COCO files (``to-coco``), written once into
    ``out`` (default ``DATA/../coco_peers/PERSONA``)."""
    out = out or data.parent / "coco_peers" / persona
    if not (out / "mapping.json").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "ovearth_core.convert", "to-coco", "--gt",
                        str(data / "ground_truth.json"), "--predictions",
                        str(data / "predictions" / f"{persona}.json"), "--task", "vocabulary",
                        "--out", str(out)], cwd=ROOT, check=True,
                       env=_env())
    return out


def _scored_subset(export: Path) -> None:
    """``instances_bbox_scored.json`` and ``results_bbox_scored.json`` beside the export:
    its images, annotations and detections of ``mapping["cocoeval_image_ids"]["bbox"]``
    only (for a tool that cannot subset ``imgIds``), written once."""
    gt_out, res_out = export / "instances_bbox_scored.json", export / "results_bbox_scored.json"
    if gt_out.exists() and res_out.exists():
        return
    ids = set(json.loads((export / "mapping.json").read_text())["cocoeval_image_ids"]["bbox"])
    gt = json.loads((export / "instances_bbox.json").read_text())
    gt["images"] = [i for i in gt["images"] if i["id"] in ids]
    gt["annotations"] = [a for a in gt["annotations"] if a["image_id"] in ids]
    res = [d for d in json.loads((export / "results_bbox.json").read_text())
           if d["image_id"] in ids]
    for path, doc in ((gt_out, gt), (res_out, res)):
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)


def _boxes_only(data: Path, persona: str, out: Path) -> tuple[Path, Path]:
    """The ground truth and predictions of ``persona`` reduced to what the COCO export
    holds, written once into ``out``: the vocabulary task, the annotations its queries use
    with their target boxes (no masks, oriented boxes or ignore regions), the prediction
    rows' ``query_id`` and ``bbox``."""
    gt_out, pred_out = out / "ovearth_boxes_gt.json", out / f"ovearth_boxes_{persona}.json"
    if gt_out.exists() and pred_out.exists():
        return gt_out, pred_out
    gt = json.loads((data / "ground_truth.json").read_text())
    queries = gt["tasks"]["open_vocabulary"]
    used = {q["ann_id"] for q in queries}
    keep = ("id", "image_path", "width", "height", "category_name", "bbox")
    anns = [{k: a[k] for k in keep if k in a} for a in gt["annotations"] if a["id"] in used]
    pred = json.loads((data / "predictions" / f"{persona}.json").read_text())
    rows = [{k: r[k] for k in ("query_id", "bbox") if k in r}
            for r in pred["tasks"]["open_vocabulary"]]
    for path, doc in ((gt_out, {"annotations": anns, "tasks": {"open_vocabulary": queries}}),
                      (pred_out, {"tasks": {"open_vocabulary": rows}})):
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, path)
    return gt_out, pred_out


def few_categories(data: Path, persona: str, n: int, out: Path | None = None) -> Path:
    """The benchmark in ``data`` with its open-vocabulary phrases renamed into ``n``
    categories (the sorted distinct phrases dealt round robin: ``category 00`` ...), the
    other tasks and ``persona``'s predictions unchanged, written once into ``out`` (default
    ``DATA/../few_categories_N``): a few-category benchmark of the same size (issue 49), as
    the export names a vocabulary query's category after its phrase."""
    out = out or data.parent / f"few_categories_{n}"
    gt_out, pred_out = out / "ground_truth.json", out / "predictions" / f"{persona}.json"
    if gt_out.exists() and pred_out.exists():
        return out
    pred_out.parent.mkdir(parents=True, exist_ok=True)
    gt = json.loads((data / "ground_truth.json").read_text())
    queries = gt["tasks"]["open_vocabulary"]
    phrases = sorted({q["phrase"] for q in queries})
    renamed = {p: f"category {i % n:02d}" for i, p in enumerate(phrases)}
    for q in queries:
        q["phrase"] = renamed[q["phrase"]]
    for path, text in ((gt_out, json.dumps(gt)),
                       (pred_out, (data / "predictions" / f"{persona}.json").read_text())):
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    return out


def _env(root: Path = ROOT) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"]
                                     if env.get("PYTHONPATH") else "")
    return env


def _child(tool: str, export: Path, gt: Path, pred: Path, root: Path = ROOT) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, tool, str(export), str(gt), str(pred)],
                          cwd=root, env=_env(root), capture_output=True, text=True,
                          check=False)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT=")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{tool} failed:\n{proc.stderr}")
    return json.loads(lines[0].removeprefix("RESULT="))


def _equal(a: dict, b: dict) -> tuple[bool, float]:
    """Whether the pooled AP, the mAP and every category's AP agree to TOLERANCE; the
    largest difference."""
    if a["category_ap"].keys() != b["category_ap"].keys():
        return False, float("inf")
    diffs = [abs(a["pooled_ap"] - b["pooled_ap"]), abs(a["map"] - b["map"])]
    diffs += [abs(v - b["category_ap"][k]) for k, v in a["category_ap"].items()]
    worst = max(diffs)
    return worst <= TOLERANCE, worst


def profile_ours(gt: Path, pred: Path, top: int = 25) -> None:
    import cProfile
    import pstats
    from dataclasses import replace

    from ovearth_core.analysis.ap import coco_average_precision
    from ovearth_core.io import load_samples

    prof = cProfile.Profile()
    prof.enable()
    samples = load_samples(gt, pred, "vocabulary", modalities="bbox")
    coco_average_precision(samples, "bbox")
    prof.disable()
    phrased = [replace(x, category=x.phrase) for x in samples]
    prof.enable()
    coco_average_precision(phrased, "bbox")
    prof.disable()
    print("  cProfile of ours (load + pooled AP + per-category mAP), by own time:")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(top)


def peer_figures(data: Path, persona: str = "strong_localiser", repeats: int = 5,
                 tools: tuple[str, ...] = TOOLS, before: Path | None = None,
                 export: Path | None = None) -> dict:
    """Medians (seconds) of each tool's ``load``, ``pooled``, ``per_category``, ``total``
    and ``import``, with ``ratio`` (total / ours' total), ``equal`` and ``max_diff``
    (against pycocotools when it runs, else the first tool); with ``"ours"`` also
    ``"ours (boxes only)"`` (:func:`_boxes_only`); ``before``: also ours from that
    checkout, as ``"ours (before)"``. The tools alternate within each repeat, each a new
    process. Also the load average before and after, and whether every repeat gave the
    same numbers."""
    gt = data / "ground_truth.json"
    pred = data / "predictions" / f"{persona}.json"
    export = _export(data, persona, export)
    if any(t in SUBSET_TOOLS for t in tools):
        _scored_subset(export)
    runs_of: dict[str, tuple[Path, Path, Path]] = {t: (ROOT, gt, pred) for t in tools}
    if "ours" in tools:
        runs_of[BOXES_ONLY] = (ROOT, *_boxes_only(data, persona, export))
    if before is not None:
        runs_of[BEFORE] = (before.resolve(), gt, pred)
    load_before = os.getloadavg()[0]
    runs: dict[str, list[dict]] = {t: [] for t in runs_of}
    for _ in range(repeats):
        for tool, (root, gt_file, pred_file) in runs_of.items():
            runs[tool].append(_child(tool, export, gt_file, pred_file, root))
    ref_tool = "pycocotools" if "pycocotools" in runs else next(iter(runs))
    ref = runs[ref_tool][0]
    figures: dict[str, dict] = {}
    for tool, r in runs.items():
        m = {k: statistics.median(x[k] for x in r) for k in ("import", *STEPS, *CPU_STEPS)}
        m["total"] = sum(m[k] for k in STEPS)
        m["total_cpu"] = sum(m[k] for k in CPU_STEPS)
        if tool.startswith("ours"):
            m["same_work"] = m["load"] + m["per_category"]
            m["same_work_cpu"] = m["load_cpu"] + m["per_category_cpu"]
            if any(x["pooled_ap_by_phrase"] != x["pooled_ap"] for x in r):
                raise SystemExit(f"{tool}: the by-phrase call's pooled AP differs")
        m["equal"], m["max_diff"] = _equal(r[0], ref)
        figures[tool] = m
    ours = figures["ours"]["total"] if "ours" in figures else None
    ours_cpu = figures["ours"]["total_cpu"] if "ours" in figures else None
    for m in figures.values():
        m["ratio"] = m["total"] / ours if ours else None
        m["ratio_cpu"] = m["total_cpu"] / ours_cpu if ours_cpu else None
    first = runs[next(iter(runs))][0]
    return {"persona": persona, "repeats": repeats, "reference": ref_tool,
            "load_average": [load_before, os.getloadavg()[0]], "tools": figures,
            "pooled_ap": first["pooled_ap"], "map": first["map"],
            "num_categories": len(first["category_ap"]),
            "stable": all(_equal(x, r[0])[0] for r in runs.values() for x in r)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--persona", default="strong_localiser")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--export", type=Path, default=None,
                        help="where the COCO export goes (default DATA/../coco_peers/PERSONA)")
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout of older code: its ours runs too, alternating")
    parser.add_argument("--tools", nargs="+", choices=TOOLS, default=list(TOOLS))
    parser.add_argument("--categories", type=int, default=None,
                        help="rename the vocabulary phrases into this many categories first "
                             "(few_categories; issue 49: a few-category benchmark)")
    args = parser.parse_args(argv)
    if not (args.data / "ground_truth.json").exists():
        from benchmarks.common import ensure_data

        ensure_data(args.data, images=False)
    if args.categories:
        args.data = few_categories(args.data, args.persona, args.categories)
        args.export = args.export or args.data.parent / "coco_peers" / (
            f"{args.persona}_{args.categories}_categories")
    tools = tuple(t for t in TOOLS if t in args.tools)
    fig = peer_figures(args.data, args.persona, args.repeats, tools, args.before, args.export)
    print(f"\n== COCO-AP peers ({args.persona}, vocabulary, boxes; medians of {args.repeats}; "
          f"load average {fig['load_average'][0]:.1f}) ==")
    print(f"  {'tool':<18}{'load':>9}{'pooled AP':>11}{'per-cat mAP':>13}{'total':>9}"
          f"{'/ ours':>8}{'import':>9}   equal to {fig['reference']} (max |diff|)")
    for tool, m in fig["tools"].items():
        ratio = f"{m['ratio']:>7.2f}x" if m["ratio"] is not None else f"{'-':>8}"
        print(f"  {tool:<18}{m['load']:>8.3f}s{m['pooled']:>10.3f}s{m['per_category']:>12.3f}s"
              f"{m['total']:>8.3f}s{ratio}{m['import']:>8.3f}s   "
              f"{'yes' if m['equal'] else 'NO'} ({m['max_diff']:.1e})")
    print("  CPU time (process_time: every thread of the process), same steps:")
    for tool, m in fig["tools"].items():
        ratio = f"{m['ratio_cpu']:>7.2f}x" if m["ratio_cpu"] is not None else f"{'-':>8}"
        print(f"  {tool:<18}{m['load_cpu']:>8.3f}s{m['pooled_cpu']:>10.3f}s"
              f"{m['per_category_cpu']:>12.3f}s{m['total_cpu']:>8.3f}s{ratio}")
    peers = {t: m for t, m in fig["tools"].items() if not t.startswith("ours")}
    fastest = min(peers, key=lambda t: peers[t]["total"]) if peers else None
    fastest_ap = min(peers, key=lambda t: peers[t]["pooled"] + peers[t]["per_category"]
                     ) if peers else None
    for tool, m in fig["tools"].items():
        if "same_work" not in m:
            continue
        print(f"  {tool}, whole AP path (load + the by-phrase call, which gives every key, "
              f"the pooled ones too): {m['same_work']:.3f}s, CPU {m['same_work_cpu']:.3f}s"
              + (f" = {m['same_work'] / peers[fastest]['total']:.2f}x the fastest peer's "
                 f"({fastest}) total, CPU "
                 f"{m['same_work_cpu'] / peers[fastest]['total_cpu']:.2f}x" if fastest else ""))
        if fastest_ap:
            theirs = peers[fastest_ap]["pooled"] + peers[fastest_ap]["per_category"]
            print(f"  {tool}, AP step alone (the by-phrase call): {m['per_category']:.3f}s = "
                  f"{m['per_category'] / theirs:.2f}x the fastest peer's ({fastest_ap}) two "
                  f"COCOeval runs, {theirs:.3f}s")
    print(f"  pooled AP {fig['pooled_ap']:.6f}, mAP {fig['map']:.6f} over "
          f"{fig['num_categories']} categories (phrases)")
    print(f"  every repeat gave the same numbers: {'yes' if fig['stable'] else 'NO'}")
    if args.profile:
        profile_ours(args.data / "ground_truth.json",
                     args.data / "predictions" / f"{args.persona}.json")
    print(f"  load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
