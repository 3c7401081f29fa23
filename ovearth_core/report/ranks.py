"""The report's "Ranks with their uncertainty" section (issue 37; ``--rank DIR``): every
submission of a folder ranked on each task of the report, with rank intervals from resampled
images, the groups that cannot be told apart, each one against the leader (Holm), Friedman's
test with the critical-difference diagram (Nemenyi), the best-of-N note and the per-category
table (Benjamini-Hochberg). Data (:func:`rank_reports`) and HTML (:func:`ranks_html`) in one
module of their own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..analysis.leaderboard import evaluate_with
from ..analysis.rank_stats import rank_notes
from ..analysis.standings import default_metric, leaderboard_report
from ..cache import ResultCache
from ..errors import OVEarthInputError, Problem
from ..options import Options
from ..paths import folder_inputs
from ..viz import rank_figures
from ..viz.analysis_figures import LEADERBOARD_METRIC_LABELS, p_is, p_text
from .tables import _e, _table, _td, fmt


def rank_reports(gt_path: str | Path, folder: str | Path, options: Options,
                 tasks: Sequence[str], seed: int, unit: str,
                 cache: ResultCache | None = None) -> dict[str, dict[str, Any]]:
    """Per task key, :func:`leaderboard_report` of every ``folder/*.json`` (sorted) with its
    ranks' uncertainty under ``options`` (resampling ``unit`` with ``seed``); submissions
    without a row for the task are left out; the first invalid one raises its
    :class:`OVEarthInputError`. The folder's files pass the gate first
    (:func:`~ovearth_core.paths.folder_inputs`, the folder its own root): a link out of it,
    a pipe, a device or a file over the input cap is an :class:`OVEarthInputError` naming
    every such file, and none is read."""
    folder = Path(folder)
    preds, refused = folder_inputs(folder, "*.json", (folder.resolve(),))
    if refused:
        raise OVEarthInputError([Problem(str(r.path), "(file)", r.expected, r.found)
                                 for r in refused])
    out = {}
    for task in tasks:
        opts = Options(task, options.modalities, options.iou_threshold, None,
                       options.bbox_format, rank_resamples=options.rank_resamples,
                       alpha=options.alpha, min_count=options.min_count,
                       friedman_blocks=options.friedman_blocks,
                       large_masks=options.large_masks, concave_obb=options.concave_obb)
        outcomes = evaluate_with(gt_path, preds, opts, cache=cache, workers=None, board=True)
        for o in outcomes:
            if o.problems:
                raise OVEarthInputError(o.problems, o.num_problems)
        kept = [o for o in outcomes if o.has_rows]
        out[task] = leaderboard_report([o.name for o in kept],
                                       [o.result for o in kept],  # type: ignore[misc]
                                       sizes=(), seed=seed, ranks=opts, unit=unit)
    return out


def ranks_html(report: dict[str, Any] | None, fig: Callable[[Any], str]) -> str:
    """The section of one task (``""`` without a report; a note when nothing is ranked)."""
    if report is None:
        return ""
    metric = default_metric(report) if report.get("models") else None
    ranks = report.get("uncertainty", {}).get(metric) if metric else None
    head = "<h3>Ranks with their uncertainty</h3>"
    if ranks is None:
        return head + ("<p>Fewer than two submissions of the folder have this task's "
                       "metrics: no ranks to compare.</p>")
    label = LEADERBOARD_METRIC_LABELS.get(metric, metric)
    level = round(100 * (1 - ranks["alpha"]))
    unit = "images" if ranks["unit"] == "image" else "queries"
    rows = [[_td(f"{ranks['rank'][i]:g}"), _td(name, "l"), _td(fmt(ranks["value"][i], 3)),
             _td("—" if ranks["rank_low"][i] is None
                 else f"{ranks['rank_low'][i]:g}–{ranks['rank_high'][i]:g}"),
             _td("—" if ranks["first_share"][i] is None
                 else f"{100 * ranks['first_share'][i]:.0f} %"), _td(ranks["groups"][i]),
             _td(fmt(ranks["diff"][i], 3)), _td(p_text(ranks["p"][i]) or "—"),
             _td(p_text(ranks["p_holm"][i]) or "—")]
            for i, name in enumerate(ranks["models"])]
    out = [head, f"<p class=\"sub\">{_e(label)} of {len(ranks['models'])} submissions; "
           f"{ranks['n_resamples']:,} resamples of the {ranks['num_units']:,} {unit} (seed "
           f"{ranks['seed']}). A letter is a group whose {level} % rank intervals share a "
           "rank; leader − submission by paired bootstrap, p-values corrected by Holm's "
           "method.</p>",
           *(f"<p class=\"sub warn\">{_e(note)}</p>" for note in rank_notes(ranks)),
           _table(["rank", "submission", "value", f"rank {level} % interval", "ranked first",
                   "group", "leader − this", "p (paired bootstrap)", "p (Holm)"], rows, left=2)]
    best = ranks["best_of_n"]
    if best["best"] is not None and best["optimism"] is not None:
        out.append(f"<p>The best of {best['num_models']} scores ({best['best']:.3f}) is an "
                   "optimistic estimate of the state of the art: on resampled "
                   f"{unit} the best score averages {best['optimism']:+.4f} against it, "
                   f"and the leader ranks first (alone or tied) in "
                   f"{100 * ranks['first_share'][0]:.0f} % of the resamples.</p>")
    friedman = ranks["friedman"]
    if "skipped" in friedman:
        out.append(f"<p>{_e(friedman['skipped'])}.</p>")
    else:
        if friedman.get("warning"):
            out.append(f"<p class=\"sub warn\">{_e(friedman['warning'])}</p>")
        out.append(f"<p class=\"sub\">Friedman χ² = {friedman['statistic']:.2f}, p "
                   f"{p_is(friedman['p'])} over {friedman['num_blocks']:,} "
                   f"{'images' if friedman['blocks'] == 'image' else 'queries'}; Nemenyi's "
                   f"critical difference {friedman['cd']:.3f} (α = {friedman['alpha']:g}).</p>")
        out.append(fig(rank_figures.critical_difference_figure(friedman, label)))
    cats = ranks.get("categories")
    if cats:
        header = ["category", "queries", unit, cats["a"], cats["b"], "difference",
                  "p (paired bootstrap)", "q (Benjamini–Hochberg)"]
        rows = [[_td(r["category"], "l"), _td(r["num_queries"]), _td(r["num_units"]),
                 _td(fmt(r["a"], 3)),
                 _td(fmt(r["b"], 3)), _td(fmt(r["diff"], 3)), _td(p_text(r["p"]) or "—"),
                 _td(p_text(r["q"]) or "—")] for r in cats["rows"]]
        out.append(f"<h4>Per category: {_e(cats['a'])} against {_e(cats['b'])}</h4>"
                   f"<p class=\"sub\">Categories spanning at least {cats['min_count']} "
                   f"{unit} are tested; q-values by Benjamini–Hochberg over them.</p>"
                   + "".join(f"<p class=\"sub warn\">{_e(note)}</p>"
                             for note in (cats.get("warning"), cats.get("resolution_note"))
                             if note)
                   + "<div class=\"scroll\">" + _table(header, rows) + "</div>")
    return "".join(out)
