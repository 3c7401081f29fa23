"""Leaderboard benchmark (issue 17): 49 submissions x 1 task, cold in parallel processes and
warm from the on-disk result cache, against 49 sequential in-process evaluations measured in
the same run.

Usage (from the repository root):

    .venv/bin/python -m benchmarks.leaderboard [--data DIR] [--submissions 49] [--quick]

The 49 submissions are the full-scale data's personas (``DIR/predictions``) copied into a
temporary folder and perturbed deterministically (submission ``i``: persona ``i mod 4``
with a seeded share of 0-20 % of its rows of every task dropped, so that every file, and
every result, differs). Figures, each with its target and ratio to the sequential time:

- sequential: :func:`evaluate_folder` with one worker and no cache (the ground truth parsed
  once, then load + evaluate of each file in this process);
- cold: :func:`evaluate_folder` with one worker per core and an empty result cache
  (includes starting the pool and writing the 49 entries; target <= 0.6x);
- warm: the same again, every result from the cache (hashing the files and loading the
  entries; target <= 0.1x).

Every run's names and results are checked equal to the sequential ones.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

from ovearth_core.analysis.leaderboard import evaluate_folder, worker_count
from ovearth_core.cache import ResultCache

ROOT = Path(__file__).resolve().parents[1]
MODALITIES = "segmentation,bbox,oriented_bbox"  # the app's leaderboard ranks all three
TASK = "vocabulary"


def build_submissions(data: Path, out: Path, n: int) -> Path:
    """``out/ground_truth.json`` and ``out/predictions/sub_XX_<persona>.json`` (n files)."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(data / "ground_truth.json", out / "ground_truth.json")
    personas = sorted((data / "predictions").glob("*.json"))
    docs = [orjson.loads(p.read_bytes()) for p in personas]
    preds = out / "predictions"
    preds.mkdir(exist_ok=True)
    for i in range(n):
        base = docs[i % len(docs)]
        rng = np.random.default_rng(1000 + i)
        drop = 0.2 * i / max(n - 1, 1)
        doc = {**base, "tasks": {
            key: [row for row in rows if rng.random() >= drop]
            for key, rows in base["tasks"].items()}}
        (preds / f"sub_{i:02d}_{personas[i % len(docs)].stem}.json").write_bytes(
            orjson.dumps(doc))
    return out


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _line(figure: str, target: str, measured: str, ratio: str) -> None:
    print(f"  {figure:<44} {target:>10} {measured:>12} {ratio:>10}")


def run(data: Path, n: int, repeats: int = 1) -> dict[str, float]:
    """Build the submissions, time the three ways, print the table; returns the times."""
    load = os.getloadavg()
    print(f"\n== Leaderboard: {n} submissions x 1 task ({TASK}, {MODALITIES}); "
          f"{worker_count()} worker(s); load average {load[0]:.1f} {load[1]:.1f} ==")
    with tempfile.TemporaryDirectory(prefix="ovearth_lb_bench_") as tmp:
        folder = build_submissions(data, Path(tmp) / "bench", n)
        seq_times, cold_times, warm_times = [], [], []
        for r in range(repeats):
            t_seq, seq = _timed(lambda: evaluate_folder(folder, TASK, MODALITIES, workers=1))
            store = ResultCache(Path(tmp) / f"cache{r}", max_bytes=1 << 34)
            t_cold, cold = _timed(lambda s=store: evaluate_folder(
                folder, TASK, MODALITIES, workers=None, cache=s))
            t_warm, warm = _timed(lambda s=store: evaluate_folder(
                folder, TASK, MODALITIES, workers=None, cache=s))
            if not (cold == seq and warm == seq):
                raise SystemExit("leaderboard: parallel or cached results differ from the "
                                 "sequential ones")
            if store.hits != len(seq[0]):
                raise SystemExit(f"leaderboard: warm run had {store.hits} cache hits of "
                                 f"{len(seq[0])}")
            seq_times.append(t_seq)
            cold_times.append(t_cold)
            warm_times.append(t_warm)
        cache_mb = store.size() / 1e6
    t_seq, t_cold, t_warm = (statistics.median(t) for t in (seq_times, cold_times, warm_times))
    _line("figure", "target", "measured", "ratio")
    _line(f"{n} sequential in-process evaluations", "baseline", f"{t_seq:.2f} s", "1.00x")
    _line("cold: parallel processes, empty cache", "<= 0.60x", f"{t_cold:.2f} s",
          f"{t_cold / t_seq:.2f}x")
    _line("warm: every result from the cache", "<= 0.10x", f"{t_warm:.2f} s",
          f"{t_warm / t_seq:.3f}x")
    print(f"  results identical to the sequential run: yes; cache {cache_mb:.0f} MB for "
          f"{n} entries; repeats {repeats}; load average after "
          f"{os.getloadavg()[0]:.1f}")
    return {"sequential_s": t_seq, "cold_s": t_cold, "warm_s": t_warm}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--submissions", type=int, default=49)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="12 submissions")
    args = parser.parse_args(argv)
    if not (args.data / "ground_truth.json").exists():
        from benchmarks.run import ensure_data

        ensure_data(args.data, images=False)
    run(args.data, 12 if args.quick else args.submissions, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
