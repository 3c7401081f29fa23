"""Rank-resampling benchmark (issue 37): 1,000 resamples of the images of 49 submissions,
before and after, measured in the same run.

Usage (from the repository root):

    .venv/bin/python -m benchmarks.rank_uncertainty [--data DIR] [--submissions 49]
        [--resamples 1000] [--workdir DIR]

The 49 submissions are ``benchmarks.leaderboard``'s (the full-scale personas, perturbed);
they are evaluated once (not timed: the leaderboard benchmark times that). Then, for the
Segmentation macro mIoU and the open-vocabulary task, every way of getting 1,000 resampled
rankings:

- re-evaluate: each resample's queries evaluated again (``evaluate_samples``: matching
  redone), timed on a few resamples and extrapolated (hours: not run in full);
- row re-sum: each resample's rows of every submission summed again from the evaluator's
  row dicts (the registry's ``pieces``: the matching reused, no arrays), timed on a few
  resamples and extrapolated;
- query product: Compare's paired bootstrap applied to 49 submissions: each resample a row
  of query multiplicities (an image's draw repeated over its queries) times the per-query
  pieces, ``(R, N) @ (N, 49 K)``, run in full;
- after (this issue): the pieces summed per image once, ``(R, U) @ (U, 49 K)``, run in
  full; then the whole analysis of one metric (intervals, groups, Holm, Friedman and
  Nemenyi, per category) and of every ranked metric, as the leaderboard computes it.

The query product's and the after's values are checked equal (to round-off: the sums are
added in another order). Import times of statsmodels and scikit-posthocs are measured in
fresh processes. :func:`figures` returns the numbers as a dict.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.leaderboard import MODALITIES, build_submissions
from ovearth_core.analysis import additive, rank_stats
from ovearth_core.analysis.compare import resample_counts
from ovearth_core.analysis.leaderboard import evaluate_folder, folder_leaderboard
from ovearth_core.analysis.standings import leaderboard_report, query_pieces
from ovearth_core.cache import ResultCache
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples
from ovearth_core.options import Options

ROOT = Path(__file__).resolve().parents[1]
METRIC = "seg_macro_miou"
TASK = "vocabulary"


def _timed(fn: Any) -> tuple[float, float, Any]:
    """``(wall s, CPU s, result)`` of ``fn()``."""
    cpu, wall = time.process_time(), time.perf_counter()
    value = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, value


def _import_seconds(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return float(done.stdout.strip())


def figures(data: Path, n: int = 49, resamples: int = 1000,
            workdir: Path | None = None) -> dict[str, Any]:
    """Every figure of the module docstring, printed and returned."""
    work = Path(workdir or tempfile.mkdtemp(prefix="ovearth_ranks_"))
    folder = build_submissions(data, work / "board", n)
    t0 = time.perf_counter()
    names, results = evaluate_folder(folder, TASK, MODALITIES)
    print(f"setup: {len(names)} submissions evaluated in {time.perf_counter() - t0:.1f} s "
          "(not part of any figure)")
    spec = additive.METRICS[METRIC]
    pieces = [query_pieces(r) for r in results]
    stacked, ids, images = rank_stats.aligned_pieces(pieces, METRIC)
    index: dict[str, int] = {}
    by_image = np.array([index.setdefault(p, len(index)) for p in images], dtype=np.intp)
    n_units = len(index)
    print(f"{len(names)} submissions, {len(ids):,} queries on {n_units:,} images, "
          f"{resamples:,} resamples, {METRIC}")
    rng = np.random.default_rng(0)
    draws = resample_counts(rng, resamples, n_units)  # the same draws for every method
    out: dict[str, Any] = {"submissions": len(names), "queries": len(ids), "images": n_units,
                           "resamples": resamples}

    # re-evaluate: the matching redone for each resample (a few, extrapolated)
    gt = folder / "ground_truth.json"
    samples = [load_samples(gt, folder / "predictions" / f"{name}.json", TASK,
                            modalities=MODALITIES) for name in names]
    few = 1

    def reevaluate() -> None:
        for c in draws[:few]:
            keep = [i for i, u in enumerate(by_image) for _ in range(int(c[u]))]
            for s in samples:
                picked = type(s)([s[i] for i in keep], task=s.task, modalities=s.modalities,
                                 score_threshold=s.score_threshold,
                                 bbox_format=s.bbox_format, submitted=s.submitted)
                evaluate_samples(picked, 0.5)
    wall, cpu, _ = _timed(reevaluate)
    out["reevaluate_s"] = wall / few * resamples
    print(f"re-evaluate: {wall:.2f} s for {few} resample ({cpu:.2f} s CPU) -> "
          f"{out['reevaluate_s'] / 3600:.1f} h extrapolated to {resamples:,}")

    # row re-sum: the evaluator's row dicts summed again per resample (a few, extrapolated)
    few = 3
    rows = [r["per_sample"] for r in results]

    def resum() -> None:
        for c in draws[:few]:
            weight = c[by_image]
            for rs in rows:
                total = np.zeros(spec.size)
                for w, row in zip(weight, rs, strict=True):
                    if w:
                        p = spec.pieces(row)
                        if p is not None:
                            total += w * np.asarray(p)
                spec.value(total)
    wall, cpu, _ = _timed(resum)
    out["row_resum_s"] = wall / few * resamples
    print(f"row re-sum: {wall:.2f} s for {few} resamples ({cpu:.2f} s CPU) -> "
          f"{out['row_resum_s']:.0f} s extrapolated to {resamples:,}")

    # query product: Compare's bootstrap, per query rows (run in full)
    m, q, k = stacked.shape
    flat_q = stacked.transpose(1, 0, 2).reshape(q, m * k)

    def query_product() -> np.ndarray:
        values = np.empty((resamples, m))
        for start in range(0, resamples, 128):
            counts = draws[start:start + 128][:, by_image]
            values[start:start + 128] = spec.value((counts @ flat_q).reshape(-1, m, k))
        return values
    wall, cpu, before = _timed(query_product)
    out["query_product_s"] = wall
    print(f"query product (Compare's bootstrap, 49 submissions): {wall:.2f} s "
          f"({cpu:.2f} s CPU)")

    # after: per-image pieces once, then (R, U) @ (U, M K)
    def per_image() -> np.ndarray:
        units = rank_stats.unit_pieces(stacked, by_image)
        flat = units.transpose(1, 0, 2).reshape(n_units, m * k)
        values = np.empty((resamples, m))
        for start in range(0, resamples, 256):
            values[start:start + 256] = spec.value(
                (draws[start:start + 256] @ flat).reshape(-1, m, k))
        return values
    wall, cpu, after = _timed(per_image)
    out["per_image_s"] = wall
    same = np.allclose(before, after, rtol=1e-12, atol=1e-12, equal_nan=True)
    print(f"after, per-image pieces: {wall:.3f} s ({cpu:.3f} s CPU); values equal to the "
          f"query product: {same}")
    out["equal"] = bool(same)
    # the whole analysis, as the leaderboard runs it (imports first, in this process)
    for module in ("statsmodels.stats.multitest", "scikit_posthocs"):
        out[f"import_{module}_s"] = _import_seconds(module)
        print(f"import {module}: {out[f'import_{module}_s']:.2f} s (fresh process)")
    import scikit_posthocs  # noqa: F401  (measured above; the figures below exclude it)
    import statsmodels.stats.multitest  # noqa: F401

    wall, cpu, _ = _timed(lambda: rank_stats.metric_ranks(
        names, pieces, METRIC, n_resamples=resamples, seed=0))
    out["one_metric_s"] = wall
    print(f"after, everything of one metric (intervals, groups, Holm, Friedman + Nemenyi, "
          f"categories): {wall:.2f} s ({cpu:.2f} s CPU)")
    opts = Options(TASK, MODALITIES, rank_resamples=resamples)
    wall, cpu, report = _timed(lambda: leaderboard_report(names, results, sizes=(),
                                                          ranks=opts))
    out["every_metric_s"] = wall
    print(f"after, the leaderboard report with every metric's ranks "
          f"({len(report['uncertainty'])} metrics, from full results): {wall:.2f} s "
          f"({cpu:.2f} s CPU)")
    # the warm leaderboard command's work (every result a cached board entry), without and
    # with the ranks' uncertainty
    cache = ResultCache(work / "cache")
    folder_leaderboard(folder, (TASK,), MODALITIES, cache=cache, workers=None, n_subsets=20)
    for label, ranks in (("without ranks", None), ("with ranks", opts)):
        wall, cpu, _ = _timed(lambda r=ranks: folder_leaderboard(
            folder, (TASK,), MODALITIES, cache=cache, workers=None, n_subsets=20, ranks=r))
        out[f"warm_{label.replace(' ', '_')}_s"] = wall
        print(f"warm leaderboard (49 cached board entries, --subsets 20) {label}: "
              f"{wall:.2f} s ({cpu:.2f} s CPU)")
    sizes = [p.stat().st_size for p in (work / "cache").rglob("*.entry")]
    print(f"cache: {len(sizes)} entries, {sum(sizes) / 1e6:.0f} MB")
    for key in ("reevaluate_s", "row_resum_s", "query_product_s"):
        print(f"speed-up of the per-image resampling over {key[:-2]}: "
              f"{out[key] / out['per_image_s']:,.0f}x")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rank_uncertainty")
    parser.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "data" / "full")
    parser.add_argument("--submissions", type=int, default=49)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    figures(args.data, args.submissions, args.resamples, args.workdir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
