"""Warm leaderboard before and after a change of the result cache (issue 26), in one run.

Usage (from the repository root):

    .venv/bin/python -m benchmarks.cache_load --before REV [--after REV] [--data DIR]
                                              [--submissions 49] [--repeats 3]
                                              [--cold-repeats 1]

The 49 submissions of :mod:`benchmarks.leaderboard` are built once. Each tree (revision
``--before`` and ``--after`` from ``git archive``; without ``--after``, this working tree,
which must then not be edited during the run: the cache keys cover the evaluator's source)
gets its own result cache, filled by a parallel cold :func:`evaluate_folder`
(``--cold-repeats`` of them, alternating, each into an empty folder: their CPU seconds,
workers included, are printed too). Then the warm run (every result from the cache:
hashing the 49 files and loading the 49 entries) is timed ``--repeats`` times per tree,
the two trees alternating, each in a new process with that tree first on ``sys.path``.
Printed: the median wall and CPU seconds of each tree and the ratio after / before (the
machine is shared: only the ratio of alternating runs means much). Both trees' warm
results are checked equal.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.cli_start import _git_tree
from benchmarks.leaderboard import MODALITIES, TASK, build_submissions

ROOT = Path(__file__).resolve().parents[1]

# Run in a new process with one tree first on sys.path: fill (cold) or time (warm).
_CHILD = """
import hashlib, json, resource, sys, time
from ovearth_core.analysis.leaderboard import evaluate_folder
from ovearth_core.cache import ResultCache
folder, cache, mode, task, mods = sys.argv[1:6]  # mode: "cold" fills, "warm" times
store = ResultCache(cache, max_bytes=1 << 34)
# This process and its finished workers (a pool's workers are reaped when it closes).
cpu = lambda: sum(sum(resource.getrusage(who)[:2]) for who in (resource.RUSAGE_SELF,
                                                               resource.RUSAGE_CHILDREN))
start, c0 = time.perf_counter(), cpu()
names, results = evaluate_folder(folder, task, mods, workers=None, cache=store)
wall, used = time.perf_counter() - start, cpu() - c0
digest = hashlib.sha256(json.dumps([names, results], sort_keys=True).encode()).hexdigest()
print(json.dumps({"wall": wall, "cpu": used, "hits": store.hits, "n": len(names),
                  "digest": digest}))
"""


def _child(tree: Path, folder: Path, cache: Path, mode: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OVEARTH_CACHE")}
    env["PYTHONPATH"] = str(tree)
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(folder), str(cache), mode, TASK,
                           MODALITIES], cwd=tree, env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"cache_load: {tree}: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def run(data: Path, n: int, before: str, repeats: int, after: str | None = None,
        cold_repeats: int = 1) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="ovearth_cache_load_") as tmp:
        folder = build_submissions(data, Path(tmp) / "bench", n)
        for name in ("before", "after"):
            (Path(tmp) / name).mkdir()
        trees = {"before": _git_tree(before, Path(tmp) / "before"),
                 "after": ROOT if after is None else _git_tree(after, Path(tmp) / "after")}
        caches = {name: Path(tmp) / f"cache-{name}" for name in trees}
        cold: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for i in range(cold_repeats):
            for name, tree in trees.items():
                cache = caches[name] if i == cold_repeats - 1 else Path(tmp) / f"c{i}{name}"
                cold[name].append(_child(tree, folder, cache, "cold"))
        warm: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for _ in range(repeats):
            for name, tree in trees.items():
                out = _child(tree, folder, caches[name], "warm")
                if out["hits"] != out["n"]:
                    raise SystemExit(f"cache_load: {name}: {out['hits']} hits of {out['n']}")
                warm[name].append(out)
        if len({w["digest"] for runs in warm.values() for w in runs}) != 1:
            raise SystemExit("cache_load: the two trees' warm results differ")
        sizes = {name: sum(p.stat().st_size for p in caches[name].glob("*.entry")) / 1e6
                 for name in trees}
    med = {(name, k): statistics.median(w[k] for w in warm[name])
           for name in trees for k in ("wall", "cpu")}
    print(f"\n== Warm leaderboard, {n} submissions x 1 task ({TASK}, {MODALITIES}); before = "
          f"{before}, after = {after or 'this tree'}; median of {repeats} alternating runs each ==")
    print(f"  {'tree':<8} {'wall s':>8} {'CPU s':>8} {'cache MB':>9}")
    for name in trees:
        print(f"  {name:<8} {med[name, 'wall']:>8.2f} {med[name, 'cpu']:>8.2f} "
              f"{sizes[name]:>9.0f}")
    print(f"  after / before: wall {med['after', 'wall'] / med['before', 'wall']:.3f}x, CPU "
          f"{med['after', 'cpu'] / med['before', 'cpu']:.3f}x; results identical: yes")
    cold_cpu = {name: statistics.median(c["cpu"] for c in cold[name]) for name in trees}
    print(f"  cold fill (parallel, writing the {n} entries; median of {cold_repeats}), CPU s "
          f"of the caller and its workers: before {cold_cpu['before']:.1f}, after "
          f"{cold_cpu['after']:.1f} = {cold_cpu['after'] / cold_cpu['before']:.3f}x")
    return {f"{name}_{k}_s": med[name, k] for name in trees for k in ("wall", "cpu")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git revision to compare with")
    parser.add_argument("--after", default=None, help="git revision (default: this tree)")
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--submissions", type=int, default=49)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cold-repeats", type=int, default=1,
                        help="cold fills per tree (alternating; the last one is kept)")
    args = parser.parse_args(argv)
    if not (args.data / "ground_truth.json").exists():
        from benchmarks.common import ensure_data

        ensure_data(args.data, images=False)
    run(args.data, args.submissions, args.before, args.repeats, args.after, args.cold_repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
