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
  (includes starting the pool and writing the 49 entries; target <= 0.6x), twice: with
  workers forked from a process without threads (the command line) and from a
  forkserver (a process with threads: the app's server);
- warm: the same again, every result from the cache (hashing the files and loading the
  entries; target <= 0.1x).

Every run's names and results are checked equal to the sequential ones. CPU seconds (this
process and its workers) are printed beside each wall time: on a machine shared with other
work, wall/CPU shows how much of the cores the run actually got.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
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


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process, and of its finished children (forked workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _timed(fn):
    start, (own, kids) = time.perf_counter(), _cpu()
    out = fn()
    own2, kids2 = _cpu()
    _timed.split = (own2 - own, kids2 - kids)  # type: ignore[attr-defined]
    return time.perf_counter() - start, own2 - own + kids2 - kids, out


def _line(figure: str, target: str, measured: str, ratio: str, cpu: str = "") -> None:
    print(f"  {figure:<52} {target:>9} {measured:>10} {ratio:>8} {cpu:>18}")


_SPIN = "sum(range(2 * 10**7))"


def headroom(n: int | None = None) -> float:
    """How many cores this process's group actually gets now: ``n`` CPU-bound processes
    at once against one alone (1.0: running in parallel gains nothing, as when other
    sessions keep a machine with scheduler autogroups busy; ``n``: all of them)."""
    n = n or worker_count()
    cmd = [sys.executable, "-c", _SPIN]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    one = time.perf_counter() - start
    start = time.perf_counter()
    procs = [subprocess.Popen(cmd) for _ in range(n)]
    for p in procs:
        p.wait()
    return n * one / (time.perf_counter() - start)


def run(data: Path, n: int) -> dict[str, float]:
    """Build the submissions, time each way, print the table; returns the wall times.

    Order: cold from a process without threads (workers forked, as the command line
    does), the sequential baseline, cold again from a process with threads (the GEOS
    pool the baseline started: workers from a preloaded forkserver, as in the app's
    server), then warm (every result from the cache).
    """
    load = os.getloadavg()
    room_before = headroom()
    print(f"\n== Leaderboard: {n} submissions x 1 task ({TASK}, {MODALITIES}); "
          f"{worker_count()} worker(s); load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f} ==")
    with tempfile.TemporaryDirectory(prefix="ovearth_lb_bench_") as tmp:
        folder = build_submissions(data, Path(tmp) / "bench", n)
        stores = [ResultCache(Path(tmp) / f"cache{i}", max_bytes=1 << 34) for i in range(2)]
        parallel = lambda store: evaluate_folder(  # noqa: E731
            folder, TASK, MODALITIES, workers=None, cache=store)
        t_fork, c_fork, fork = _timed(lambda: parallel(stores[0]))
        fork_own, fork_kids = _timed.split  # type: ignore[attr-defined]
        t_seq, c_seq, seq = _timed(lambda: evaluate_folder(folder, TASK, MODALITIES,
                                                           workers=1))
        t_fs, c_fs, fs = _timed(lambda: parallel(stores[1]))
        t_warm, c_warm, warm = _timed(lambda: parallel(stores[1]))
        if not (fork == seq and fs == seq and warm == seq):
            raise SystemExit("leaderboard: parallel or cached results differ from the "
                             "sequential ones")
        if stores[1].hits != len(seq[0]):
            raise SystemExit(f"leaderboard: warm run had {stores[1].hits} cache hits of "
                             f"{len(seq[0])}")
        cache_mb = stores[1].size() / 1e6
    _line("figure", "target", "measured", "ratio", "CPU s (wall/CPU)")

    def row(label: str, target: str, t: float, c: float) -> None:
        _line(label, target, f"{t:.2f} s", f"{t / t_seq:.3f}x", f"{c:.1f} ({t / c:.2f})")

    row(f"{n} sequential in-process evaluations", "baseline", t_seq, c_seq)
    row("cold, parallel (forked workers, as the CLI)", "<= 0.60x", t_fork, c_fork)
    row("cold, parallel (forkserver workers, as the app)", "<= 0.60x", t_fs, c_fs)
    row("warm: every result from the cache", "<= 0.10x", t_warm, c_warm)
    # The machine is shared: wall times depend on what else runs. The forked run's CPU
    # time says what it would take with its cores to itself: the workers' CPU spread over
    # the workers (the queue balances them), plus the calling process's own.
    span = fork_own + fork_kids / worker_count()
    print(f"  cold (forked), CPU critical path: {fork_own:.1f} s here + {fork_kids:.1f} s in "
          f"the workers / {worker_count()} = {span:.1f} s = {span / c_seq:.3f}x the sequential "
          f"run's CPU {c_seq:.1f} s (the ratio on dedicated cores; target <= 0.60x)")
    print(f"  parallel headroom (a CPU-bound loop in {worker_count()} processes against 1, "
          f"in this run): {room_before:.2f} before, {headroom():.2f} after, of "
          f"{worker_count()} possible")
    print(f"  results identical to the sequential run: yes; cache {cache_mb:.0f} MB for "
          f"{n} entries; load average after {os.getloadavg()[0]:.1f}. wall/CPU below 1 "
          f"means more than one core was used; on an idle 2-core machine the best cold "
          f"ratio is about 0.5x.")
    return {"sequential_s": t_seq, "cold_fork_s": t_fork, "cold_forkserver_s": t_fs,
            "warm_s": t_warm}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--submissions", type=int, default=49)
    parser.add_argument("--quick", action="store_true", help="12 submissions")
    args = parser.parse_args(argv)
    if not (args.data / "ground_truth.json").exists():
        from benchmarks.run import ensure_data

        ensure_data(args.data, images=False)
    run(args.data, 12 if args.quick else args.submissions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
