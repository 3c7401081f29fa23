"""Dense scenes and scale (issue 17): time and peak RSS of each figure, each in its own process.

Every measurement runs in a child process (``python -m benchmarks.scale SPEC``), which
prints one JSON line: ``seconds`` (the measured work, imports and loading excluded),
``cpu_seconds`` (the process's CPU time for the same work, every thread: a busy machine
inflates it far less than wall time), ``load_seconds`` and ``peak_mb`` (the child's peak
resident set, ``VmHWM`` in ``/proc/self/status``: loading included, since that is what a
user's machine must hold).
A child given ``code`` runs with ``PYTHONPATH=code`` from a temporary folder, so that it
imports that copy of ``ovearth_core`` (e.g. ``git archive 9cdefcc ovearth_core``) and not
this worktree's. :mod:`benchmarks.run` calls the ``bench_*`` functions.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("vocabulary", "referring", "reasoning")
BOX_MODALITIES = "bbox,oriented_bbox"


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _work(spec: dict[str, Any]) -> dict[str, Any]:
    """The measurement ``spec["kind"]`` in this process (see :func:`measure`)."""
    from ovearth_core.io import load_samples

    kind = spec["kind"]
    start, cpu = time.perf_counter(), time.process_time()
    if kind == "files":
        from ovearth_core import evaluate_files

        evaluate_files(spec["gt"], spec["pred"], TASKS, modalities=spec["modalities"])
        return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
                "load_seconds": 0.0}
    tasks = spec.get("tasks", ["referring"])
    loaded = [load_samples(spec["gt"], spec["pred"], t, modalities=spec["modalities"])
              for t in tasks]
    load_seconds = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    for samples in loaded:
        if kind == "evaluate":
            from ovearth_core.evaluate import evaluate_samples

            evaluate_samples(samples, 0.5)
        elif kind == "plain_loop":
            _plain_loop(samples)
        elif kind == "ap":
            from ovearth_core.analysis.ap import average_precision_report

            average_precision_report(samples, 0.5, samples.modalities, False)
        else:
            raise ValueError(f"unknown kind {kind!r}")
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
            "load_seconds": load_seconds}


def _plain_loop(samples) -> None:
    """The plain per-query loop with our own matcher: one query's IoU matrix at a time
    (broadcasting; oriented boxes: envelope-pruned shapely), then its detection entry."""
    from ovearth_core import geometry, metrics

    for modality in ("bbox", "oriented_bbox"):
        if modality not in samples.modalities:
            continue
        oriented = modality == "oriented_bbox"
        for s in samples:
            gt, pred = (s.gt_obbs, s.pred_obbs) if oriented else (s.gt_boxes, s.pred_boxes)
            iou = (geometry.obb_iou_matrix(gt, pred) if oriented
                   else geometry.box_iou_matrix(gt, pred))
            metrics.det_entry(iou, s.negative, 0.5)


def measure(spec: dict[str, Any], code: Path | None = None) -> dict[str, Any]:
    """Run ``spec`` in a child process (with ``code`` as ``ovearth_core``'s folder) and
    return its figures: ``seconds``, ``load_seconds``, ``peak_mb``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(code), str(ROOT)] if code else [str(ROOT)])
    with tempfile.TemporaryDirectory() as cwd:  # not ROOT: its ovearth_core would come first
        proc = subprocess.run([sys.executable, "-m", "benchmarks.scale", json.dumps(spec)],
                              capture_output=True, env=env, cwd=cwd, check=False)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.decode())
    return json.loads(proc.stdout.decode().splitlines()[-1])


def dense_files(tmp: Path, queries: int, k: int, seed: int = 0) -> tuple[Path, Path]:
    """``queries`` referring queries of ``k`` GT boxes and about ``k`` predictions each
    (:func:`benchmarks.common.boxes_per_query`, both box modalities)."""
    from benchmarks.common import boxes_per_query

    folder = tmp / f"dense_{queries}x{k}"
    folder.mkdir(exist_ok=True)
    return boxes_per_query(folder, np.random.default_rng(seed), k, queries=queries)


def _line(label: str, fig: dict[str, Any]) -> str:
    return (f"{label:<22} {fig['seconds']:7.2f} s (CPU {fig['cpu_seconds']:7.2f} s)  peak RSS "
            f"{fig['peak_mb']:5.0f} MB")


def bench_dense(tmp: Path, queries: int, k: int) -> None:
    """Dense scenes against the plain per-query loop, per modality (targets: <= 600 MB and
    <= 1.2x the plain loop's time)."""
    print(f"\n== Dense scenes: {queries} queries x {k} boxes (targets: peak RSS <= 600 MB, "
          "time <= 1.2x the plain per-query loop) ==")
    gt, pred = dense_files(tmp, queries, k)
    for modality in ("bbox", "oriented_bbox"):
        spec = {"gt": str(gt), "pred": str(pred), "modalities": modality}
        ours = measure({**spec, "kind": "evaluate"})
        plain = measure({**spec, "kind": "plain_loop"})
        print(f"  {modality:<14} {_line('evaluate_samples', ours)}")
        print(f"  {'':<14} {_line('plain per-query loop', plain)}")
        print(f"  {'':<14} time ratio {ours['seconds'] / plain['seconds']:.2f}x, CPU "
              f"{ours['cpu_seconds'] / plain['cpu_seconds']:.2f}x (target <= 1.2x); peak "
              f"{ours['peak_mb']:.0f} MB (target <= 600 MB)")


def bench_against(code: Path, label: str, spec: dict[str, Any], repeats: int) -> None:
    """``spec`` with this worktree's code and with ``code``, interleaved, medians."""
    new, old = [], []
    for _ in range(repeats):
        new.append(measure(spec))
        old.append(measure(spec, code))
    def med(figs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(f[key] for f in figs)

    print(f"  {label} (medians of {repeats}, interleaved):\n"
          f"    now    {med(new, 'seconds'):7.3f} s, CPU {med(new, 'cpu_seconds'):7.3f} s, "
          f"peak {med(new, 'peak_mb'):5.0f} MB\n"
          f"    before {med(old, 'seconds'):7.3f} s, CPU {med(old, 'cpu_seconds'):7.3f} s, "
          f"peak {med(old, 'peak_mb'):5.0f} MB\n"
          f"    before / now: time {med(old, 'seconds') / med(new, 'seconds'):.2f}x, CPU "
          f"{med(old, 'cpu_seconds') / med(new, 'cpu_seconds'):.2f}x")


def bench_scaling_queries(gt: Path, pred: Path, tmp: Path, factors: tuple[int, ...]) -> None:
    from benchmarks.common import scaled_copy

    print("\n== Growth with the number of queries (full benchmark repeated; three tasks, all "
          "modalities, load included) ==")
    for factor in factors:
        g, p = scaled_copy(gt, pred, factor, tmp) if factor > 1 else (gt, pred)
        fig = measure({"kind": "files", "gt": str(g), "pred": str(p),
                       "modalities": "segmentation,bbox,oriented_bbox"})
        print(f"  x{factor:<3} {fig['seconds']:7.2f} s (CPU {fig['cpu_seconds']:6.2f} s)  peak RSS "
              f"{fig['peak_mb']:6.0f} MB")


def bench_scaling_boxes(tmp: Path, queries: int, ks: tuple[int, ...]) -> None:
    print(f"\n== Growth with boxes per query ({queries} queries, HBB + OBB, evaluation only; "
          "peak RSS includes loading) ==")
    for k in ks:
        gt, pred = dense_files(tmp, queries, k)
        fig = measure({"kind": "evaluate", "gt": str(gt), "pred": str(pred),
                       "modalities": BOX_MODALITIES})
        print(f"  {k:>5} boxes per query: {fig['seconds']:8.3f} s (CPU {fig['cpu_seconds']:7.3f} s)"
              f"  peak RSS {fig['peak_mb']:6.0f} MB")


if __name__ == "__main__":
    result = _work(json.loads(sys.argv[1]))
    import ovearth_core

    print(json.dumps({**result, "peak_mb": _peak_mb(), "code": ovearth_core.__file__}))
