"""Performance benchmark of OVEarth Inspector on the full-scale synthetic benchmark.

Usage (from the repository root, after the README's setup):

    .venv/bin/python -m benchmarks.run [--data DIR] [--quick] [--skip-app]
                                       [--before REV] [--only-scale]

It generates (or reuses) the full-scale synthetic benchmark in
``benchmarks/data/full`` and prints, each with its target from issue 6:
in-process load + evaluate time per task (all modalities) with the share spent
parsing JSON; the plain decode-to-numpy / pure-Python baseline and the speed-up
ratio; CLI wall time per task (interpreter start included) and peak RSS; and app
timings (first overview cold/warm, query switch, compare page) via AppTest.
Then issue 17's figures, each measured in its own process (:mod:`benchmarks.scale`):
dense scenes (200 queries x 1,000 boxes, HBB and OBB) against the plain per-query
loop, time and peak RSS; the full-benchmark evaluation and the AP report at 500 boxes
a query against revision ``--before`` (its ``ovearth_core`` from ``git archive``,
interleaved, medians); growth with the number of queries (x1 ... x10) and with boxes
per query (1 ... 1,000), time and peak RSS.
Speed is reported as ratios within the same run; nothing here asserts time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks import plain, scale
from benchmarks.common import ROOT, ensure_data, prediction_file
from ovearth_core import evaluate_files, gc_paused
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

TASKS = ("vocabulary", "referring", "reasoning")
ALL = "segmentation,bbox,oriented_bbox"


def _timed(fn, *args, **kwargs) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def _median_run(fn, repeats: int) -> tuple[float, float]:
    """(first, median of the following) wall times of ``fn()``: cold and steady state."""
    times = [_timed(fn)[0] for _ in range(repeats + 1)]
    return times[0], statistics.median(times[1:])


def bench_in_process(gt: Path, pred: Path, repeats: int) -> float:
    print("\n== In-process evaluation, all modalities (target: all three tasks <= 1.0 s) ==")
    for task in TASKS:
        t_load, samples = _timed(load_samples, gt, pred, task, modalities=ALL)
        t_eval, _ = _timed(evaluate_samples, samples)
        print(f"  {task:<11} {len(samples):>5} queries  load {t_load:6.3f} s  "
              f"evaluate {t_eval:6.3f} s   (one task per call: files read each time)")
    # A user (or script) evaluating all three tasks reads each file once: evaluate_files.
    first, shared = _median_run(lambda: evaluate_files(gt, pred, TASKS, modalities=ALL), repeats)
    print(f"  evaluate_files, three tasks, files read once: first {first:.3f} s, "
          f"median of {repeats} more {shared:.3f} s   (target <= 1.0 s)")

    def parse_both() -> None:
        with gc_paused():
            orjson.loads(gt.read_bytes())
            orjson.loads(pred.read_bytes())

    _, parse_time = _median_run(parse_both, repeats)
    print(f"  JSON parsing alone (orjson, both files once): {parse_time:.3f} s = "
          f"{100 * parse_time / shared:.0f} % of it (the floor without a faster parser)")
    return shared


def bench_analysis(gt: Path, pred: Path) -> None:
    """The Overview's analysis sections (no target; they are opt-in in the app)."""
    from ovearth_core.analysis.ap import average_precision_report
    from ovearth_core.analysis.attribution import error_attribution
    from ovearth_core.analysis.sweep import score_sweep

    print("\n== Analysis of one task (vocabulary, auto modalities; no target) ==")
    samples = load_samples(gt, pred, "vocabulary", modalities="auto")
    for label, work in (
            ("score sweep", lambda: score_sweep(samples, 0.5)),
            ("AP report (VOC + COCO)",
             lambda: average_precision_report(samples, 0.5, samples.modalities, False)),
            ("error attribution", lambda: error_attribution(samples, 0.5))):
        _, median = _median_run(work, 3)
        print(f"  {label:<24} {median:6.3f} s  (median of 3)")


def bench_baseline(gt: Path, pred: Path) -> None:
    print("\n== Baseline: masks decoded to numpy, boxes matched in plain Python "
          "(target: segmentation >= 50x) ==")
    for task in TASKS:
        for modality in ("segmentation", "bbox", "oriented_bbox"):
            samples = load_samples(gt, pred, task, modalities=modality)
            t_fast, fast = _timed(evaluate_samples, samples)
            t_plain, slow = _timed(plain.evaluate, samples)
            key = "seg" if modality == "segmentation" else modality
            same = all(abs((fast["summary"][key][k] or 0) - (v or 0)) < 1e-9
                       for k, v in slow[key].items())
            print(f"  {task:<11} {modality:<14} optimised {t_fast:7.3f} s  plain {t_plain:7.3f} s"
                  f"  speed-up {t_plain / t_fast:6.1f}x  identical={same}")


def bench_cli(gt: Path, pred: Path) -> None:
    print("\n== CLI wall time, interpreter start included (target: three tasks <= 3 s; "
          "peak RSS <= 500 MB) ==")
    total = 0.0
    peak = 0
    with tempfile.TemporaryDirectory() as tmp:
        for task in TASKS:
            out = Path(tmp) / f"{task}.json"
            cmd = [sys.executable, "-m", "ovearth_core", "--gt", str(gt), "--predictions",
                   str(pred), "--task", task, "--modalities", ALL, "--output", str(out)]
            t, proc = _timed(subprocess.run, cmd, capture_output=True)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr.decode())
            total += t
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            peak = max(peak, usage.ru_maxrss)
            print(f"  {task:<11} {t:6.3f} s")
        print(f"  total {total:.3f} s ({total / 3:.2f}x the target); peak RSS of the CLI "
              f"processes {peak / 1024:.0f} MB")
        # The same three outputs from one process (files read and validated once).
        cmd = [sys.executable, "-m", "ovearth_core.suite", "--gt", str(gt), "--predictions",
               str(pred), "--modalities", ALL, "--output-dir", str(Path(tmp) / "suite")]
        t, proc = _timed(subprocess.run, cmd, capture_output=True)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr.decode())
        print(f"  python -m ovearth_core.suite, the three tasks in one process: {t:.3f} s "
              f"({t / 3:.2f}x the target, {t / total:.2f}x the three runs)")


def before_code(rev: str, out: Path) -> Path:
    """``ovearth_core`` of git revision ``rev`` extracted into ``out`` (its parent folder is
    what a child process puts on ``PYTHONPATH``)."""
    archive = subprocess.run(["git", "archive", rev, "ovearth_core"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def bench_before(gt: Path, pred: Path, tmp: Path, rev: str, repeats: int, ap_queries: int
                 ) -> None:
    """This code against revision ``rev`` in the same run (issue 17's targets: the full
    benchmark not slower, ratio >= 1.0; the AP report at 500 boxes a query)."""
    code = before_code(rev, tmp / "before")
    print(f"\n== Against {rev} (each figure in its own process, interleaved; target: full "
          "benchmark before / now >= 1.0) ==")
    for persona in sorted((gt.parent / "predictions").glob("*.json")):
        scale.bench_against(code, f"full benchmark, {persona.stem}, evaluate three tasks",
                            {"kind": "evaluate", "gt": str(gt), "pred": str(persona),
                             "tasks": list(TASKS), "modalities": "auto"}, repeats)
    scale.bench_against(code, "full benchmark, load + evaluate, evaluate_files",
                        {"kind": "files", "gt": str(gt), "pred": str(pred), "modalities": ALL},
                        repeats)
    g, p = scale.dense_files(tmp, ap_queries, 500)
    scale.bench_against(code, f"AP report (VOC + COCO + devkit + ties), {ap_queries} queries x "
                        "500 boxes, HBB + OBB",
                        {"kind": "ap", "gt": str(g), "pred": str(p),
                         "modalities": scale.BOX_MODALITIES}, max(1, repeats // 3))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--quick", action="store_true",
                        help="fewer repeats, no x10 scaling, 50 (not 200) queries for the "
                             "dense scenes and the AP report")
    parser.add_argument("--skip-app", action="store_true", help="skip the app timings")
    parser.add_argument("--before", default="9cdefcc",
                        help="git revision to compare with (default 9cdefcc, main before "
                             "issue 17)")
    parser.add_argument("--only-scale", action="store_true",
                        help="only issue 17's figures: dense scenes, against --before, "
                             "scaling tables")
    parser.add_argument("--round3", action="store_true",
                        help="only issue 28's figures, each with its target and its ratio to "
                             "the peers (benchmarks.round3)")
    args = parser.parse_args(argv)
    if args.round3:
        from benchmarks import round3

        return round3.main(["--data", str(args.data), *(["--quick"] if args.quick else [])])
    data = ensure_data(args.data, images=not args.skip_app)
    gt, pred = data / "ground_truth.json", prediction_file(data)
    print(f"data: {gt} and {pred.name}  (machine: {os.cpu_count()} cores)")
    queries = 50 if args.quick else 200
    if not args.only_scale:
        bench_in_process(gt, pred, repeats=3 if args.quick else 7)
        bench_analysis(gt, pred)
        bench_baseline(gt, pred)
        bench_cli(gt, pred)
    print(f"\nload average {os.getloadavg()[0]:.1f} (before issue 17's figures)")
    with tempfile.TemporaryDirectory() as tmp:
        scale.bench_dense(Path(tmp), queries, 1000)
        bench_before(gt, pred, Path(tmp), args.before, 3 if args.quick else 7, queries)
        scale.bench_scaling_queries(gt, pred, Path(tmp),
                                    (1, 2, 5) if args.quick else (1, 2, 5, 10))
        scale.bench_scaling_boxes(Path(tmp), queries, (1, 5, 20, 50, 100, 200, 500, 1000))
    print(f"load average {os.getloadavg()[0]:.1f} (after)")
    if not args.only_scale:
        # issue 17's other figures, each module measuring its own baseline in the same run
        from benchmarks import cli_start, inputs, leaderboard
        quick = ["--quick"] if args.quick else []
        print("\n## Inputs: duplicate rows, RLE pre-check, large images")
        inputs.main(["--images", str(data / "images")])
        print("\n## Leaderboard: 49 submissions, cold parallel and warm (cache)")
        leaderboard.main(["--data", str(data), *quick])
        print("\n## CLI start")
        cli_start.main(["--data", str(data), "--before", args.before, *quick])
    if not args.skip_app and not args.only_scale:
        from benchmarks import app_timing
        app_timing.report(data)
    if not args.only_scale:
        from benchmarks import round3

        print("\n## Issue 28: the peers, one table")
        round3.print_table(round3.collect(data, round3.SECTIONS, args.quick))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
