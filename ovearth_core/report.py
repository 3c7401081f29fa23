"""A self-contained HTML report of one submission, or a comparison of two.

``python -m ovearth_core.report --gt GT --predictions A.json [--compare B.json]
--images DIR --modalities ... --out report.html`` evaluates every selected task with
the evaluator's options and writes one HTML file that works offline: plotly.js is
inlined once, images are JPEG ``data:`` URIs, and nothing is fetched. It holds the
configuration with the SHA-256 of every input file, key metrics per task and modality
(with B − A and paired-bootstrap intervals when comparing), presence confusion
matrices, charts, a per-category table, the paper-style table (also as Markdown and
LaTeX) and a gallery of the ``--worst`` N queries drawn over their images.

Bad input exits with status 2 and the evaluator's message; no file is written then.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from . import __version__, report_draw
from .cli import EXIT_BAD_INPUT, add_evaluation_options, add_input_options, write_atomic
from .compare import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Comparison,
    category_values,
    compare_results,
    query_score,
)
from .errors import OVEarthInputError
from .evaluate import evaluate_samples
from .gcpause import gc_paused
from .io import GroundTruth, parse_ground_truth, parse_modalities, read_json
from .io import load_samples as load_task
from .report_template import LEGEND, page
from .types import TASK_KEYS, SampleList
from .viz import figures

TASK_NAMES = {"open_vocabulary": "Vocabulary", "referring": "Referring", "reasoning": "Reasoning"}
CLI_TASK = {v: k for k, v in TASK_KEYS.items()}
# Table 2 of the paper: (column label, summary key, metric, percent?) per task.
PAPER_COLUMNS: dict[str, list[tuple[str, str, str, bool]]] = {
    "open_vocabulary": [("ma-IoU", "seg", "positive_macro_miou", True),
                        ("MCC", "presence", "mcc", False),
                        ("mi-F1@0.5", "bbox", "0.50", True)],
    "referring": [("ma-IoU", "seg", "positive_macro_miou", True),
                  ("mi-F1@0.5", "bbox", "0.50", True)],
    "reasoning": [("ma-IoU", "seg", "positive_macro_miou", True),
                  ("mi-F1@0.5", "bbox", "0.50", True)],
}
WORST_DEFAULT = 12
TOP_DIFFS = 10
DIFF_CARDS = 3  # overlay cards of the biggest differences, each way


@dataclass
class Submission:
    name: str
    path: Path
    sha256: str
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # task key -> result
    samples: dict[str, SampleList] = field(default_factory=dict)


@dataclass
class ReportData:
    gt_path: Path
    gt_sha256: str
    images: Path
    tasks: list[str]
    options: dict[str, Any]
    submissions: list[Submission]
    comparisons: dict[str, Comparison]
    worst: int
    timings: dict[str, float] = field(default_factory=dict)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- paper-style tables ----------------------------------------------------------------------

def paper_values(result: dict[str, Any], task: str) -> list[float | None]:
    """The task's Table 2 numbers: ma-IoU and mi-F1@0.5 in percent, MCC as is."""
    out: list[float | None] = []
    for _, key, metric, percent in PAPER_COLUMNS[task]:
        block = result["summary"].get(key)
        if block is None:
            out.append(None)
            continue
        value = (block["positive_micro_f1_by_iou"].get(metric) if key == "bbox"
                 else block.get(metric))
        out.append(None if value is None else (100 * value if percent else value))
    return out


def _paper_grid(results: Mapping[str, Mapping[str, dict[str, Any]]]
                ) -> tuple[list[str], list[tuple[str, list[float | None]]]]:
    tasks = [t for t in PAPER_COLUMNS if any(t in r for r in results.values())]
    rows = []
    for name, by_task in results.items():
        values: list[float | None] = []
        for task in tasks:
            values += (paper_values(by_task[task], task) if task in by_task
                       else [None] * len(PAPER_COLUMNS[task]))
        rows.append((name, values))
    return tasks, rows


def _best(rows: Sequence[tuple[str, list[float | None]]], col: int) -> float | None:
    values = [v[col] for _, v in rows if v[col] is not None]
    return max(values) if len(rows) > 1 and values else None


def paper_table_markdown(results: Mapping[str, Mapping[str, dict[str, Any]]]) -> str:
    """Table 2 as Markdown: rows = submissions, columns = per task ma-IoU / MCC / mi-F1@0.5.

    ``results`` maps a submission name to ``{task key: evaluation result}``. ma-IoU and
    mi-F1@0.5 (HBB) are percentages, MCC is in [-1, 1]; both with two decimals, the best
    of each column in bold, ``–`` where a value is null or the modality was not run.
    """
    tasks, rows = _paper_grid(results)
    header = ["Submission"] + [f"{TASK_NAMES[t]} {label}" for t in tasks
                               for label, *_ in PAPER_COLUMNS[t]]
    lines = ["| " + " | ".join(header) + " |",
             "|:---|" + "---:|" * (len(header) - 1)]
    for name, values in rows:
        cells = []
        for col, v in enumerate(values):
            text = "–" if v is None else f"{v:.2f}"
            cells.append(f"**{text}**" if v is not None and v == _best(rows, col) else text)
        lines.append("| " + " | ".join([name.replace("|", "\\|")] + cells) + " |")
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    out = text.replace("\\", r"\textbackslash{}")
    for char in "&%$#_{}":
        out = out.replace(char, "\\" + char)
    return out.replace("~", r"\textasciitilde{}").replace("^", r"\textasciicircum{}")


def paper_table_latex(results: Mapping[str, Mapping[str, dict[str, Any]]]) -> str:
    """Table 2 as a LaTeX ``tabular`` (booktabs); same numbers as the Markdown table."""
    tasks, rows = _paper_grid(results)
    widths = [len(PAPER_COLUMNS[t]) for t in tasks]
    lines = [r"\begin{tabular}{l" + "".join("c" * w for w in widths) + "}", r"\toprule"]
    lines.append("Submission & " + " & ".join(
        rf"\multicolumn{{{w}}}{{c}}{{{TASK_NAMES[t]}}}" for t, w in zip(tasks, widths,
                                                                          strict=True)) + r" \\")
    start, rules = 2, []
    for w in widths:
        rules.append(rf"\cmidrule(lr){{{start}-{start + w - 1}}}")
        start += w
    lines.append(" ".join(rules))
    lines.append(" & " + " & ".join(label for t in tasks
                                    for label, *_ in PAPER_COLUMNS[t]) + r" \\")
    lines.append(r"\midrule")
    for name, values in rows:
        cells = []
        for col, v in enumerate(values):
            text = "--" if v is None else f"{v:.2f}"
            cells.append(rf"\textbf{{{text}}}" if v is not None and v == _best(rows, col)
                         else text)
        lines.append(" & ".join([_latex_escape(name)] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


# --- loading and evaluation ------------------------------------------------------------------

def default_tasks(gt: GroundTruth) -> list[str]:
    """Task keys with at least one query in the ground truth (all three if none has)."""
    present = [key for key in TASK_NAMES if gt.tasks.get(key)]
    return present or list(TASK_NAMES)


def build_report_data(gt_path: str | Path, predictions: Sequence[str | Path],
                      modalities: object, images: str | Path | None = None,
                      tasks: Sequence[str] | None = None, iou_threshold: float = 0.5,
                      score_threshold: float | None = None, bbox_format: str = "xyxy",
                      worst: int = WORST_DEFAULT, names: Sequence[str] | None = None,
                      n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED) -> ReportData:
    """Load, evaluate and (with two prediction files) compare every selected task.

    With ``modalities="auto"`` the first submission's inferred modalities are used for
    the second as well (per task), as comparing needs the same modalities.

    Raises:
        OVEarthInputError: for invalid files or options (the evaluator's validation).
    """
    started = time.perf_counter()
    gt_file = Path(gt_path)
    gt = parse_ground_truth(read_json(gt_file, "ground-truth"), str(gt_file))
    task_keys = (list(dict.fromkeys(TASK_KEYS.get(t, t) for t in tasks)) if tasks
                 else default_tasks(gt))
    labels = list(names) if names else _default_names([Path(p) for p in predictions])
    auto = parse_modalities(modalities) is None
    subs: list[Submission] = []
    for label, pred in zip(labels, predictions, strict=True):
        pred_file = Path(pred)
        sub = Submission(label, pred_file, sha256_file(pred_file))
        with gc_paused():  # the document is freed before collection resumes
            doc = read_json(pred_file, "prediction")
            for key in task_keys:
                # With "auto", B is read with the modalities resolved for A, so rows pair up.
                mods = (subs[0].results[key]["config"]["modalities"] if auto and subs
                        else modalities)
                samples = load_task(gt_file, pred_file, key, score_threshold, bbox_format,
                                    mods, ground_truth=gt, predictions_doc=doc)
                sub.samples[key] = samples
                sub.results[key] = evaluate_samples(samples, iou_threshold)
            del doc
        subs.append(sub)
    evaluated = time.perf_counter()
    comparisons = {}
    if len(subs) == 2:
        comparisons = {key: compare_results(subs[0].results[key], subs[1].results[key],
                                            n_resamples=n_resamples, seed=seed)
                       for key in task_keys}
    options = {"tasks": [CLI_TASK[k] for k in task_keys],
               "modalities": sorted(subs[0].results[task_keys[0]]["config"]["modalities"]),
               "iou_threshold": iou_threshold, "score_threshold": score_threshold,
               "bbox_format": bbox_format, "bootstrap_resamples": n_resamples,
               "bootstrap_seed": seed}
    return ReportData(gt_file, sha256_file(gt_file),
                      Path(images) if images is not None else gt_file.parent,
                      task_keys, options, subs, comparisons, worst,
                      {"load_evaluate_s": evaluated - started,
                       "compare_s": time.perf_counter() - evaluated})


def _default_names(paths: Sequence[Path]) -> list[str]:
    names = [p.stem for p in paths]
    if len(names) == 2 and names[0] == names[1]:
        names = [f"{names[0]} (A)", f"{names[1]} (B)"]
    return names


# --- HTML pieces -----------------------------------------------------------------------------

def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def fmt(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.4f}"


def _cell(value: float | None, **data: str) -> str:
    attrs = "".join(f' data-{k}="{_e(v)}"' for k, v in data.items())
    return f"<td{attrs}>{fmt(value)}</td>"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    head = "".join(f'<th class="l">{_e(h)}</th>' if i < left else f"<th>{_e(h)}</th>"
                   for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _td(text: object, cls: str = "") -> str:
    return f'<td class="{cls}">{_e(text)}</td>' if cls else f"<td>{_e(text)}</td>"


class _Figures:
    """Renders plotly figures to ``<div>`` snippets (plotly.js is inlined once in the head)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, fig: go.Figure) -> str:
        self.count += 1
        return "<div>" + pio.to_html(fig, full_html=False, include_plotlyjs=False,
                                     config={"displaylogo": False, "responsive": True},
                                     div_id=f"fig{self.count}") + "</div>"


def _config_section(data: ReportData) -> str:
    rows = [[_td("ground truth", "l"), _td(data.gt_path.name, "l"), _td(data.gt_sha256, "l")]]
    for tag, sub in zip("AB", data.submissions, strict=False):
        rows.append([_td(f"submission {tag}: {sub.name}", "l"), _td(sub.path.name, "l"),
                     _td(sub.sha256, "l")])
    identity = _table(["input", "file", "SHA-256"], rows, left=3)
    opts = [[_td(k, "l"), _td("none" if v is None else
                              ", ".join(v) if isinstance(v, list) else v, "l")]
            for k, v in data.options.items()]
    opts.append([_td("images", "l"), _td(str(data.images), "l")])
    opts.append([_td("ovearth_core", "l"), _td(__version__, "l")])
    return ('<h2 id="config">Configuration and data identity</h2>' + identity
            + _table(["option", "value"], opts, left=2))


def _key_metric_table(data: ReportData, task: str) -> str:
    subs = data.submissions
    cmp = data.comparisons.get(task)
    header = ["modality", "metric"] + [s.name for s in subs]
    if cmp:
        header += ["Δ B − A", f"{cmp.confidence:.0%} CI", "resamples used"]
    rows = []
    summary = subs[0].results[task]["summary"]
    for modality in ("presence", "seg", "bbox", "oriented_bbox"):
        block = summary.get(modality)
        if block is None:
            continue
        for metric in block["key_metrics"]:
            row = [_td(report_draw.MODALITY_LABELS[modality], "l"),
                   _td(report_draw.METRIC_LABELS.get(metric, metric), "l")]
            for tag, sub in zip("AB", subs, strict=False):
                value = sub.results[task]["summary"][modality][metric]
                row.append(_cell(value, task=task, modality=modality, metric=metric, sub=tag))
            if cmp:
                m = cmp.metric(modality, metric)
                excludes_zero = m.ci_low is not None and (m.ci_low > 0 or m.ci_high < 0)
                cls = ("pos" if (m.diff or 0) > 0 else "neg" if (m.diff or 0) < 0 else "")
                cls += " sig" if excludes_zero else ""
                ci = ("–" if m.ci_low is None else f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}]")
                row += [f'<td class="{cls.strip()}" data-task="{task}" data-modality='
                        f'"{modality}" data-metric="{_e(metric)}" data-sub="diff">'
                        f"{_signed(m.diff)}</td>", _td(ci), _td(m.n_valid)]
            rows.append(row)
    counts = [f"{summary['num_samples']} queries", f"{summary['num_positive']} positive"]
    if "num_negative" in summary:
        counts.append(f"{summary['num_negative']} negative")
    for key in ("seg", "bbox", "oriented_bbox"):
        if summary.get(key):
            counts.append(f"{summary[key]['num_samples_evaluated']} evaluated for "
                          f"{report_draw.MODALITY_LABELS[key]}")
    note = ("<p class=\"sub\">Bold Δ: the interval excludes 0.</p>" if cmp else "")
    return (f"<p class=\"sub\">{_e(', '.join(counts))}</p>"
            + _table(header, rows, left=2) + note)


def _confusion_tables(data: ReportData, task: str) -> str:
    parts = []
    for sub in data.submissions:
        p = sub.results[task]["summary"].get("presence")
        if p is None:
            return ""
        rows = [[_td("GT present (positive)", "l"), _td(p["tp"]), _td(p["fn"])],
                [_td("GT absent (negative)", "l"), _td(p["fp"]), _td(p["tn"])]]
        parts.append(f"<div><b>{_e(sub.name)}</b> · accuracy {fmt(p['accuracy'])} · "
                     f"FPR {fmt(p['fpr'])} · MCC {fmt(p['mcc'])}"
                     + _table(["", "predicted present", "predicted absent"], rows) + "</div>")
    return "<h3>Presence confusion matrix</h3><div class=\"figs\">" + "".join(parts) + "</div>"


def _comparison_section(data: ReportData, task: str, cmp: Comparison, fig: _Figures) -> str:
    names = [s.name for s in data.submissions]
    out = ["<h3>Agreement (per-query correctness) and McNemar's exact test</h3>"]
    rows = []
    for ag in cmp.agreements:
        rows.append([_td(ag.name, "l"), _td(ag.both_right), _td(ag.only_a), _td(ag.only_b),
                     _td(ag.both_wrong), _td(f"{ag.p_value:.4g}")])
    out.append(_table(["table", "both right", f"only {names[0]} right",
                       f"only {names[1]} right", "both wrong", "McNemar p (exact)"], rows))
    for ag in cmp.agreements:
        if ag.name == "presence" and (ag.only_a_ids or ag.only_b_ids):
            out.append(f"<p class=\"sub\">Presence flips — right only in {_e(names[0])}: "
                       f"{_e(', '.join(ag.only_a_ids[:40]) or 'none')}"
                       f"{' …' if len(ag.only_a_ids) > 40 else ''}; right only in "
                       f"{_e(names[1])}: {_e(', '.join(ag.only_b_ids[:40]) or 'none')}"
                       f"{' …' if len(ag.only_b_ids) > 40 else ''}</p>")
    figs = [fig(report_draw.comparison_bars(cmp, names)),
            fig(report_draw.difference_forest(cmp, names))]
    for key, diffs in cmp.query_diffs.items():
        if diffs:
            figs.append(fig(report_draw.query_scatter(diffs, key, names)))
    out.append("<div class=\"figs\">" + "".join(figs) + "</div>")
    for key, diffs in cmp.query_diffs.items():
        score = "IoU" if key == "seg" else "F1"
        label = report_draw.MODALITY_LABELS[key]
        better_b = [d for d in reversed(diffs) if d.diff > 0][:TOP_DIFFS]
        better_a = [d for d in diffs if d.diff < 0][:TOP_DIFFS]
        for title, chosen in ((f"{names[1]} better than {names[0]}", better_b),
                              (f"{names[0]} better than {names[1]}", better_a)):
            rows = [[_td(d.sample_id, "l"), _td(d.phrase, "l"), _td(d.category, "l"),
                     _td(fmt(d.a, 3)), _td(fmt(d.b, 3)), _td(_signed(d.diff))] for d in chosen]
            out.append(f"<h3>Biggest per-query {label} {score} differences: {_e(title)}</h3>"
                       + (_table(["query", "text", "category", names[0], names[1], "Δ B − A"],
                                 rows, left=3) if rows else "<p class=\"sub\">none</p>"))
    return "".join(out)


def _category_table(data: ReportData, task: str) -> str:
    cmp = data.comparisons.get(task)
    if cmp:
        names = sorted({n for c in cmp.categories for n in c.values})
        header = ["category", "queries"] + [f"{n} {s}" for n in names for s in ("A", "B", "Δ")]
        ordered = sorted(cmp.categories, key=lambda c: (
            min((v[2] for v in c.values.values() if v[2] is not None), default=0.0),
            c.category))
        rows = []
        for c in ordered:
            row = [_td(c.category, "l"), _td(c.num_queries)]
            for n in names:
                a, b, d = c.values.get(n, (None, None, None))
                row += [_td(fmt(a, 3)), _td(fmt(b, 3)), _td(_signed(d))]
            rows.append(row)
        title = "sorted by the largest drop of B against A first"
    else:
        cats = data.submissions[0].results[task]["per_category"]
        values = [(c, category_values(c)) for c in cats]
        names = sorted({n for _, v in values for n in v})
        header = ["category", "queries", "positive", "negative"] + names
        values.sort(key=lambda cv: (min((x for x in cv[1].values() if x is not None),
                                        default=2.0), cv[0]["category"]))
        rows = [[_td(c["category"], "l"), _td(c["num_queries"]), _td(c["num_positive"]),
                 _td(c["num_negative"])] + [_td(fmt(v.get(n), 3)) for n in names]
                for c, v in values]
        title = "weakest first"
    return (f"<h3>Per-category results ({title})</h3><div class=\"scroll\">"
            + _table(header, rows) + "</div>")


def worst_queries(result: dict[str, Any], n: int) -> list[tuple[int, float]]:
    """Indices into ``per_sample`` of the ``n`` worst queries, with their score.

    A positive query scores the mean of its per-modality scores (mask IoU, box F1)
    over the modalities it is evaluated in (queries evaluated in none are skipped).
    A negative query with any prediction (a hallucination) scores 0; a correctly
    empty one is skipped. So that both kinds of failure show, hallucinations get at
    most a third of the ``n`` slots while there are enough positives (more when there
    are not). Positives come first, worst first; ties go by ground-truth order.
    """
    positives, negatives = [], []
    for i, row in enumerate(result["per_sample"]):
        if row["negative"]:
            if row["pred_present"]:
                negatives.append((0.0, i))
            continue
        values = [v for key in ("seg", "bbox", "oriented_bbox")
                  if (v := query_score(row, key)) is not None]
        if values:
            positives.append((sum(values) / len(values), i))
    positives.sort()
    k_neg = min(len(negatives), n // 3 if positives else n)
    k_pos = min(len(positives), n - k_neg)
    k_neg = min(len(negatives), n - k_pos)
    return [(i, s) for s, i in positives[:k_pos] + negatives[:k_neg]]


def _row_metrics(row: dict[str, Any]) -> str:
    parts = []
    if row["negative"]:
        parts.append("negative query: " + ("predicted something (false positive)"
                                           if row["pred_present"] else "correctly empty"))
    seg = row.get("seg")
    if seg and seg["evaluated"]:
        parts.append(f"mask IoU {seg['iou']:.3f} · P {seg['precision']:.3f} · "
                     f"R {seg['recall']:.3f}")
    for key, label in (("bbox", "HBB"), ("oriented_bbox", "OBB")):
        e = row.get(key)
        if e and e["evaluated"]:
            parts.append(f"{label} F1 {e['f1']:.3f} (TP {e['tp']}, FP {e['fp']}, FN {e['fn']})")
    return "<br>".join(_e(p) for p in parts)


def _cards(data: ReportData, task: str, chosen: Sequence[tuple[int, str]],
           gallery: str) -> tuple[str, int]:
    """Overlay cards of the queries at ``per_sample`` indices, each with a score text.

    Every submission's overlay of a query shows the same crop. Returns the cards'
    HTML and how many of them fell back to a blank canvas.
    """
    subs = data.submissions
    cards, missing = [], 0
    for index, score in chosen:
        figures_html = []
        region = report_draw.shared_region([sub.samples[task][index] for sub in subs])
        pixels, image_notice = report_draw.load_view(data.images, subs[0].samples[task][index],
                                                     region)
        for sub in subs:
            row = sub.results[task]["per_sample"][index]
            thumb = report_draw.overlay_thumbnail(pixels, sub.samples[task][index], row,
                                                  region=region)
            figures_html.append(
                f"<figure><figcaption>{_e(sub.name)}</figcaption>"
                f"<img alt=\"{_e(row['sample_id'])} {_e(sub.name)}\" "
                f"src=\"{report_draw.jpeg_data_uri(thumb)}\">{_row_metrics(row)}</figure>")
        missing += image_notice is not None
        row = subs[0].results[task]["per_sample"][index]
        kind = "negative" if row["negative"] else "positive"
        notice = f"<div class=\"notice\">{_e(image_notice)}</div>" if image_notice else ""
        cards.append(
            f"<div class=\"card{' pair' if len(subs) > 1 else ''}\" data-gallery=\"{gallery}\" "
            f"data-query=\"{_e(row['sample_id'])}\"><div class=\"q\">{_e(row['sample_id'])} · "
            f"“{_e(row['phrase'])}”</div><div>{_e(row['category'])} · {kind} · "
            f"{_e(score)} · image {_e(row['image_path'])}</div>{notice}"
            f"<div class=\"imgs\">{''.join(figures_html)}</div></div>")
    return "<div class=\"grid\">" + "".join(cards) + "</div>", missing


def _gallery(data: ReportData, task: str) -> str:
    chosen = worst_queries(data.submissions[0].results[task], data.worst)
    cards, missing = _cards(data, task, [(i, f"score {s:.3f}") for i, s in chosen], "worst")
    head = (f"<h3>The {len(chosen)} worst queries of {_e(data.submissions[0].name)}</h3>"
            "<p class=\"sub\">Positive queries by score (mean of mask IoU and box F1 over "
            "the query's evaluated modalities), worst first; then negative queries with a "
            "prediction (score 0), at most a third of the cards while positives last. "
            "Every card shows the same crop for each submission.</p>" + LEGEND)
    if missing:
        head += (f"<div class=\"notice\">{missing} of {len(chosen)} queries have no readable "
                 "image: their overlays are drawn on a blank canvas.</div>")
    return head + cards


def _difference_cards(data: ReportData, task: str, cmp: Comparison) -> str:
    """Overlays of the biggest per-query differences of the first modality (each way)."""
    key = next((k for k, v in cmp.query_diffs.items() if v), None)
    if key is None or not DIFF_CARDS:
        return ""
    diffs = cmp.query_diffs[key]
    index = {r["sample_id"]: i for i, r in enumerate(data.submissions[0].results[task]
                                                      ["per_sample"])}
    picked = ([d for d in reversed(diffs) if d.diff > 0][:DIFF_CARDS]
              + [d for d in diffs if d.diff < 0][:DIFF_CARDS])
    score = "IoU" if key == "seg" else "F1"
    label = report_draw.MODALITY_LABELS[key]
    cards, _ = _cards(data, task, [(index[d.sample_id], f"{label} {score} Δ B − A "
                                    f"{d.diff:+.3f}") for d in picked], "diff")
    return (f"<h3>Biggest per-query {label} {score} differences, drawn</h3>"
            + LEGEND + cards)


def _task_section(data: ReportData, task: str, fig: _Figures) -> str:
    first = data.submissions[0].results[task]
    out = [f"<h2 id=\"{task}\">{TASK_NAMES[task]} task</h2>",
           "<h3>Key metrics</h3>", _key_metric_table(data, task), _confusion_tables(data, task)]
    summary = first["summary"]
    figs = []
    if summary.get("presence"):
        figs.append(fig(figures.confusion_matrix(summary["presence"])))
    figs.append(fig(figures.key_metric_bars(summary)))
    if summary.get("bbox") or summary.get("oriented_bbox"):
        figs.append(fig(figures.f1_vs_iou(summary)))
    if summary.get("seg"):
        figs.append(fig(figures.precision_at(summary)))
    out.append(f"<h3>Charts ({_e(data.submissions[0].name)})</h3>"
               "<div class=\"figs\">" + "".join(figs) + "</div>")
    if task in data.comparisons:
        out.append(_comparison_section(data, task, data.comparisons[task], fig))
        out.append(_difference_cards(data, task, data.comparisons[task]))
    out.append(_category_table(data, task))
    out.append(_gallery(data, task))
    return "".join(out)


def render_html(data: ReportData) -> str:
    """The complete, self-contained report document."""
    names = [s.name for s in data.submissions]
    title = "OVEarth-Bench report: " + " vs ".join(names)
    fig = _Figures()
    results = {s.name: s.results for s in data.submissions}
    markdown, latex = paper_table_markdown(results), paper_table_latex(results)
    nav = "".join(f"<a href=\"#{t}\">{TASK_NAMES[t]}</a>" for t in data.tasks)
    body = [f"<h1>{_e(title)}</h1>",
            f"<p class=\"sub\">Generated {datetime.now(UTC):%Y-%m-%d %H:%M UTC} by "
            f"ovearth_core {__version__}. Differences are B − A with B = "
            f"{_e(names[-1])}.</p>" if len(names) > 1 else
            f"<p class=\"sub\">Generated {datetime.now(UTC):%Y-%m-%d %H:%M UTC} by "
            f"ovearth_core {__version__}.</p>",
            f"<nav><a href=\"#config\">Configuration</a><a href=\"#paper\">Paper table</a>"
            f"{nav}</nav>", _config_section(data),
            "<h2 id=\"paper\">Paper-style table (Table 2 shape)</h2>",
            _paper_html(results),
            "<details><summary>Markdown</summary><pre id=\"paper-markdown\">"
            f"{_e(markdown)}</pre></details><details><summary>LaTeX</summary>"
            f"<pre id=\"paper-latex\">{_e(latex)}</pre></details>"]
    body += [_task_section(data, task, fig) for task in data.tasks]
    body.append(_footer(data))
    return page(_e(title), get_plotlyjs(), "\n".join(body))


def _paper_html(results: Mapping[str, Mapping[str, dict[str, Any]]]) -> str:
    tasks, rows = _paper_grid(results)
    header = ["submission"] + [f"{TASK_NAMES[t]} {label}" for t in tasks
                               for label, *_ in PAPER_COLUMNS[t]]
    body = [[_td(name, "l")] + [_td(fmt(v, 2)) for v in values] for name, values in rows]
    return (_table(header, body) + "<p class=\"sub\">ma-IoU: macro mask IoU over positive "
            "queries (%); MCC: presence, vocabulary only; mi-F1@0.5: micro HBB F1 at IoU 0.5 "
            "(%), whatever --iou-threshold was.</p>")


def _footer(data: ReportData) -> str:
    if not data.comparisons:
        return ""
    text = ("Intervals: paired percentile bootstrap over queries (the same resample for both "
            f"submissions), {data.options['bootstrap_resamples']} resamples, seed "
            f"{data.options['bootstrap_seed']}; a resample in which a metric is undefined is "
            "left out. McNemar: two-sided exact binomial test on the discordant queries.")
    return f"<footer>{_e(text)}</footer>"


# --- command line ----------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ovearth_core.report",
        description="Write a self-contained HTML report of one submission, or compare two.")
    add_input_options(parser, "prediction JSON path (submission A)")
    parser.add_argument("--compare", default=None, help="second prediction JSON (submission B)")
    parser.add_argument("--images", default=None,
                        help="folder that image_path values are relative to "
                             "(default: the ground truth's folder)")
    parser.add_argument("--out", required=True, help="HTML path (written atomically)")
    parser.add_argument("--task", action="append", choices=tuple(TASK_KEYS),
                        help="task to report; repeat for several (default: every task with "
                             "queries in the ground truth)")
    add_evaluation_options(parser)
    parser.add_argument("--worst", type=int, default=WORST_DEFAULT,
                        help="queries in each task's gallery (default 12)")
    parser.add_argument("--name", action="append", default=None,
                        help="display name of A, then of B (default: file names)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES,
                        help="bootstrap resamples (default 2000, at least 1000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.worst < 0:
        parser.error("--worst must be at least 0")
    if args.resamples < 1000:
        parser.error("--resamples must be at least 1000")
    preds = [args.predictions] + ([args.compare] if args.compare else [])
    if args.name is not None and len(args.name) != len(preds):
        parser.error(f"--name given {len(args.name)} times for {len(preds)} submissions")
    started = time.perf_counter()
    try:
        data = build_report_data(args.gt, preds, args.modalities, args.images, args.task,
                                 args.iou_threshold, args.score_threshold, args.bbox_format,
                                 args.worst, args.name, args.resamples, args.seed)
    except OVEarthInputError as err:
        print(f"ovearth-report: invalid input\n{err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    rendered = time.perf_counter()
    document = render_html(data).encode("utf-8")
    render_s = time.perf_counter() - rendered
    written = time.perf_counter()
    try:
        write_atomic(args.out, document)
    except OSError as err:
        print(f"ovearth-report: cannot write {args.out}: {err.strerror or err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    t = data.timings
    print(f"ovearth-report: wrote {args.out} ({len(document) / 1e6:.1f} MB) in "
          f"{time.perf_counter() - started:.1f} s (load+evaluate {t['load_evaluate_s']:.1f} s, "
          f"compare {t['compare_s']:.1f} s, render {render_s:.1f} s, "
          f"write {time.perf_counter() - written:.2f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
