"""A folder of submissions ranked per task, and the paper's category-subset stability analysis.

Layout read by :func:`evaluate_folder`: ``<folder>/ground_truth.json`` and
``<folder>/predictions/<model>.json`` (one file per model, any subset of the three task
lists), every file checked by :func:`folder_files` before any is read (inside the folder or
the given roots, a regular file within the input cap). A model whose file has no row for a
task is left out of that task's ranking (the paper ranks 49 models on vocabulary but 32 on
referring).

Every ranked metric is a function of per-category additive components (e.g. summed IoU and
query count for the macro mIoU, TP/FP/FN for micro F1, the 2x2 table for MCC). Per-model
per-category sums are computed once, an array ``(models, categories, components)``; the
metric of any category subset is then one matrix product with the subsets' 0/1 indicator
matrix. Over the full category set each metric equals the evaluator's summary value.

Ranking conventions: higher is better; ties in the top-k keep model order; a metric that is
undefined for a model (``None`` in the evaluator, e.g. MCC with an empty margin) ranks last.
Spearman's rho is the Pearson correlation of average ranks (ties get the mean rank); it is
undefined (``nan``) when either ranking is constant.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import rankdata

from ..errors import OVEarthInputError, Problem
from ..evaluate import evaluate_samples
from ..formulas import ratio_array
from ..gcpause import gc_paused
from ..io import load_samples, parse_ground_truth, read_json
from ..paths import refusal
from . import additive
from .compare import not_submitted

FloatArray = npt.NDArray[np.float64]
Row = dict[str, Any]
SUBSET_SIZES = (5, 20, 50, 100, 150)


# The ranked metrics, in output order: entries of the shared registry (:mod:`.additive`).
METRICS: dict[str, additive.AdditiveMetric] = {n: additive.METRICS[n] for n in (
    "seg_macro_miou", "seg_micro_miou", "bbox_micro_f1", "bbox_mean_micro_f1",
    "oriented_bbox_micro_f1", "presence_mcc")}


def available_metrics(result: dict[str, Any]) -> list[str]:
    """Metrics an evaluator result supports (its task and enabled modalities)."""
    return [m.name for m in additive.metrics_of(result, list(METRICS))]


def category_stats(results: Sequence[dict[str, Any]], metric: str,
                   ) -> tuple[list[str], FloatArray]:
    """Per-model per-category summed components: ``(categories, array (M, C, K))``.

    ``results`` are evaluator outputs of the same task and ground truth.
    """
    spec = METRICS[metric]
    categories = sorted({r["category"] for res in results for r in res["per_sample"]})
    index = {c: i for i, c in enumerate(categories)}
    out = np.zeros((len(results), len(categories), spec.size))
    for m, res in enumerate(results):
        cats, rows = [], []
        for r in res["per_sample"]:
            comp = spec.pieces(r)
            if comp is not None:
                cats.append(index[r["category"]])
                rows.append(comp)
        if rows:
            np.add.at(out[m], np.array(cats), np.array(rows, dtype=np.float64))
    return categories, out


def metric_values(stats: FloatArray, metric: str) -> FloatArray:
    """The metric of each model over all categories, ``(M,)`` (``nan`` if undefined)."""
    return METRICS[metric].value(stats.sum(axis=1))


def _rank_ready(values: FloatArray) -> FloatArray:
    return np.where(np.isnan(values), -np.inf, values)


def spearman_rows(reference: FloatArray, values: FloatArray) -> FloatArray:
    """Spearman's rho of ``reference`` ``(M,)`` with each row of ``values`` ``(S, M)``."""
    ra = rankdata(_rank_ready(reference))
    rb = rankdata(_rank_ready(np.atleast_2d(values)), axis=1)
    da = ra - ra.mean()
    db = rb - rb.mean(axis=1, keepdims=True)
    den = np.sqrt((da ** 2).sum() * (db ** 2).sum(axis=1))
    return ratio_array(db @ da, den)


def spearman(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Spearman's rho of two equally long score vectors (``nan`` if undefined)."""
    return float(spearman_rows(np.asarray(a, dtype=np.float64),
                               np.asarray(b, dtype=np.float64))[0])


def top_k(values: FloatArray, k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` best along the last axis (ties: lower index first)."""
    return np.argsort(-_rank_ready(values), axis=-1, kind="stable")[..., :k]


def random_subsets(n_categories: int, size: int, n_subsets: int,
                   rng: np.random.Generator) -> FloatArray:
    """0/1 indicator matrix ``(n_subsets, n_categories)`` of uniform random subsets."""
    pick = np.argsort(rng.random((n_subsets, n_categories)), axis=1)[:, :size]
    out = np.zeros((n_subsets, n_categories))
    np.put_along_axis(out, pick, 1.0, axis=1)
    return out


def subset_stability(stats: FloatArray, metric: str, sizes: Sequence[int] = SUBSET_SIZES,
                     n_subsets: int = 1000, seed: int = 0, k: int = 5) -> dict[str, Any]:
    """Spearman of the full ranking with rankings on random category subsets, per size.

    Categories without any contribution (no evaluated query for this metric) are not drawn.
    Sizes above the number of usable categories are skipped; ``k`` is capped at the number
    of models minus one. Returns JSON-ready lists.
    """
    usable = stats.sum(axis=(0, 2)) != 0
    stats = stats[:, usable]
    n_models, n_cat = stats.shape[:2]
    spec = METRICS[metric]
    full = spec.value(stats.sum(axis=1))
    # The top n of n models is always recovered: cap k below the number of models.
    k = max(1, min(k, n_models - 1))
    in_full_top = np.zeros(n_models, dtype=bool)
    in_full_top[top_k(full, k)] = True
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        if size > n_cat:
            continue
        subsets = random_subsets(n_cat, size, n_subsets, rng)
        values = spec.value(np.einsum("mck,sc->smk", stats, subsets))  # (S, M)
        rho = spearman_rows(full, values)
        recovery = in_full_top[top_k(values, k)].sum(axis=1) / k
        valid = rho[~np.isnan(rho)]
        rows.append({
            "size": size,
            "median_spearman": float(np.median(valid)) if valid.size else None,
            "q25_spearman": float(np.quantile(valid, 0.25)) if valid.size else None,
            "q75_spearman": float(np.quantile(valid, 0.75)) if valid.size else None,
            "num_defined": int(valid.size),
            "median_top_k_recovery": float(np.median(recovery)),
            "mean_top_k_recovery": float(np.mean(recovery)),
        })
    return {"metric": metric, "num_models": n_models, "num_categories": n_cat,
            "num_subsets": n_subsets, "seed": seed, "k": k, "sizes": rows}


def _json_float(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def submits(result: dict[str, Any], metric: str) -> bool:
    """Whether the result's submission contains the metric's modality (coverage)."""
    return METRICS[metric].modality not in not_submitted(result)


def rank_table(names: Sequence[str], results: Sequence[dict[str, Any]],
               metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """Key metrics of each model (evaluator summary values) and the ranking by each.

    A model that does not submit a metric's modality gets ``None`` there (not its
    empty-submission zero) and ranks after every model that does; ``not_submitted``
    lists them per metric.
    """
    metrics = list(metrics or available_metrics(results[0]))
    table: dict[str, list[float | None]] = {}
    ranking: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    for metric in metrics:
        a, b = METRICS[metric].summary_path
        vals = [res["summary"][a][b] if res["summary"].get(a) and submits(res, metric)
                else None for res in results]
        table[metric] = vals
        missing[metric] = [n for n, res in zip(names, results, strict=True)
                           if not submits(res, metric)]
        arr = np.array([np.nan if v is None else v for v in vals], dtype=np.float64)
        ranking[metric] = [names[i] for i in top_k(arr, len(names))]
    return {"models": list(names), "metrics": table, "ranking": ranking,
            "not_submitted": missing}


def mcc_vs_miou(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Spearman of presence MCC with segmentation macro mIoU across models (open vocabulary),
    over the models where both are defined."""
    mcc, miou = [], []
    for res in results:
        if not (submits(res, "presence_mcc") and submits(res, "seg_macro_miou")):
            continue
        s = res["summary"]
        m = (s.get("presence") or {}).get("mcc")
        i = (s.get("seg") or {}).get("positive_macro_miou")
        if m is not None and i is not None:
            mcc.append(m)
            miou.append(i)
    rho = spearman(mcc, miou) if len(mcc) >= 2 else float("nan")
    return {"spearman": _json_float(rho), "num_models": len(mcc)}


def folder_files(folder: str | Path, pred_dir: str | Path | None = None,
                 roots: Sequence[Path] | None = None) -> tuple[Path, list[Path]]:
    """``(ground truth, sorted prediction files)`` of a benchmark folder, every one checked
    like a typed path of the app (:func:`~ovearth_core.paths.check_input`): inside
    ``roots`` (default: the folder itself, so a symbolic link may not leave it), a regular
    file, within the input size cap. Raises :class:`OVEarthInputError` naming every file
    refused; none is read."""
    folder = Path(folder)
    roots = tuple(roots) if roots else (folder.resolve(),)
    gt_path = folder / "ground_truth.json"
    preds = sorted(Path(pred_dir or folder / "predictions").glob("*.json"))
    problems = [Problem(str(path), "(file)", *why) for path in (gt_path, *preds)
                if (why := refusal(path, roots)) is not None]
    if problems:
        raise OVEarthInputError(problems)
    return gt_path, preds


def evaluate_folder(folder: str | Path, task: str, modalities: object = ("segmentation", "bbox"),
                    iou_threshold: float = 0.5, pred_dir: str | Path | None = None,
                    roots: Sequence[Path] | None = None,
                    ) -> tuple[list[str], list[dict[str, Any]]]:
    """Evaluate every ``predictions/*.json`` of ``folder`` on one task (ground truth parsed
    once; files checked by :func:`folder_files`). Returns ``(model names, evaluator
    results)``, sorted by name, leaving out models without any row for the task."""
    gt_path, preds = folder_files(folder, pred_dir, roots)
    names, results = [], []
    with gc_paused():
        gt = parse_ground_truth(read_json(gt_path, "ground-truth"), str(gt_path))
        for path in preds:
            samples = load_samples(gt_path, path, task, modalities=modalities, ground_truth=gt)
            if not any(s.has_prediction_row for s in samples):
                continue
            names.append(path.stem)
            results.append(evaluate_samples(samples, iou_threshold))
    return names, results


def leaderboard_report(names: Sequence[str], results: Sequence[dict[str, Any]],
                       stability_metrics: Sequence[str] | None = None,
                       sizes: Sequence[int] = SUBSET_SIZES, n_subsets: int = 1000,
                       seed: int = 0, k: int = 5) -> dict[str, Any]:
    """Ranking table, category-subset stability of each metric, and (open vocabulary) the
    MCC-versus-mIoU rank correlation, for evaluator results of one task."""
    if not results:
        return {"models": [], "metrics": {}, "ranking": {}, "stability": {},
                "mcc_vs_miou": None}
    out = rank_table(names, results)
    metrics = list(stability_metrics or available_metrics(results[0]))
    out["stability"] = {}
    for metric in metrics:
        # Models that do not submit the metric's modality are left out of its correlations.
        kept = [r for r in results if submits(r, metric)]
        if len(kept) < 2:
            continue
        _, stats = category_stats(kept, metric)
        out["stability"][metric] = subset_stability(stats, metric, sizes, n_subsets, seed, k)
    out["mcc_vs_miou"] = (mcc_vs_miou(results) if results[0]["task"] == "open_vocabulary"
                          else None)
    return out


def folder_leaderboard(folder: str | Path, tasks: Sequence[str] = ("vocabulary", "referring",
                                                                    "reasoning"),
                       modalities: object = ("segmentation", "bbox"),
                       iou_threshold: float = 0.5, **stability: Any) -> dict[str, Any]:
    """:func:`leaderboard_report` of every task for a submissions folder (see module doc);
    ``stability`` is passed on (``sizes``, ``n_subsets``, ``seed``, ``k``,
    ``stability_metrics``)."""
    out: dict[str, Any] = {}
    for task in tasks:
        names, results = evaluate_folder(folder, task, modalities, iou_threshold)
        out[task] = leaderboard_report(names, results, **stability)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m ovearth_core.leaderboard FOLDER``: rank every submission of a folder.

    FOLDER holds ``ground_truth.json`` and ``predictions/*.json`` (the layout of
    ``python -m ovearth_core.synth``). Prints (or writes) the JSON report.
    """
    import argparse

    from ..cli import run_and_emit

    parser = argparse.ArgumentParser(prog="python -m ovearth_core.leaderboard",
                                     description="Rank the submissions of a benchmark folder.")
    parser.add_argument("folder", help="folder with ground_truth.json and predictions/*.json")
    parser.add_argument("--task", action="append",
                        choices=("vocabulary", "referring", "reasoning"),
                        help="task to rank (repeatable; default: all three)")
    parser.add_argument("--modalities", default="segmentation,bbox")
    parser.add_argument("--iou-threshold", type=float, default=0.5)
    parser.add_argument("--subsets", type=int, default=1000, help="random subsets per size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    tasks = tuple(args.task or ("vocabulary", "referring", "reasoning"))
    folder = Path(args.folder)
    inputs = [folder / "ground_truth.json", *(folder / "predictions").glob("*.json")]
    return run_and_emit(parser.prog, lambda: folder_leaderboard(
        args.folder, tasks, args.modalities, args.iou_threshold, n_subsets=args.subsets,
        seed=args.seed), args.output, inputs)


if __name__ == "__main__":
    raise SystemExit(main())
