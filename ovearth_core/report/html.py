"""The report document: one HTML page from :class:`~ovearth_core.report.build.ReportData`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from .. import __version__
from ..analysis.ap import ap_numbers
from ..analysis.compare import (
    Comparison,
    MetricDiff,
    biggest_differences,
    category_values,
    not_submitted,
)
from ..analysis.evidence import thin_rows
from ..analysis.slices import GSD, META_PREFIX, SliceTable
from ..analysis.sweep import BOX_MODALITIES
from ..labels import (
    AP_METRICS,
    METRIC_LABELS,
    MODALITY_LABELS,
    NOT_SUBMITTED,
    TASK_LABELS,
    ap_description,
    ap_keys,
    ap_scope,
    metric_label,
)
from ..viz import figures
from . import draw as report_draw
from .build import ReportData, worst_queries
from .ranks import ranks_html
from .tables import (
    _cell,
    _e,
    _signed,
    _table,
    _td,
    ap_table_latex,
    ap_table_markdown,
    field_table_html,
    field_table_latex,
    field_table_markdown,
    fmt,
    paper_table_html,
    paper_table_latex,
    paper_table_markdown,
)
from .template import LEGEND, page

TOP_DIFFS = 10


DIFF_CARDS = 3  # overlay cards of the biggest differences, each way


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
            row = [_td(MODALITY_LABELS[modality], "l"),
                   _td(METRIC_LABELS.get(metric, metric), "l")]
            for tag, sub in zip("AB", subs, strict=False):
                value = (None if modality in not_submitted(sub.results[task])
                         else sub.results[task]["summary"][modality][metric])
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
                          f"{MODALITY_LABELS[key]}")
    note = ("<p class=\"sub\">Bold Δ: the interval excludes 0. – : not submitted or "
            "undefined (no difference or interval).</p>" if cmp else
            "<p class=\"sub\">– : not submitted or undefined.</p>")
    if cmp and cmp.warning:
        note += f"<p class=\"sub warn\">{_e(cmp.warning)}</p>"
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
                     _td(ag.both_wrong), _td(f"{ag.p_value:.4g}"),
                     _td("—" if ag.p_holm is None else f"{ag.p_holm:.4g}")])
    out.append(_table(["table", "both right", f"only {names[0]} right",
                       f"only {names[1]} right", "both wrong", "McNemar p (exact)",
                       "p (Holm)"], rows))
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
        label = MODALITY_LABELS[key]
        better_b, better_a = biggest_differences(diffs, TOP_DIFFS)
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


GROUP_METRICS = ("presence_mcc", "seg_macro_miou", "bbox_micro_f1", "oriented_bbox_micro_f1")


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None else f" [{low:.3f}, {high:.3f}]"


def _group_table(data: ReportData, task: str) -> str:
    """Key metrics per taxonomy group (``--taxonomy``) with bootstrap intervals."""
    table = data.groups.get(task)
    return "" if table is None else _slice_table(table, "group", "Per-group results "
                                                 "(taxonomy groups; ")


def _slice_tables(data: ReportData, task: str) -> str:
    """Key metrics per value of each ``--slice-by`` attribute."""
    out = []
    for attribute, table in data.slices.get(task, {}).items():
        name = ("ground sample distance" if attribute == GSD else
                f"image_meta[{attribute[len(META_PREFIX):]}]"
                if attribute.startswith(META_PREFIX) else attribute)
        out.append(_slice_table(table, attribute, f"Results by {name} ("))
    return "".join(out)


def _slice_table(table: SliceTable, column: str, title: str) -> str:
    """``table``'s key metrics per value (first column ``column``), headed ``title`` and
    its interval kind."""
    present = {m.name: m for v in table.values for m in v.metrics}
    names = [n for n in GROUP_METRICS if n in present]
    labels = [metric_label(present[n].modality, present[n].metric) for n in names]
    header = [column, "queries", "positive", "negative"] + (
        [f"{label} {s}" for label in labels
         for s in ("A", "B", "Δ B − A", "q (Benjamini–Hochberg)")] if table.paired
        else labels)
    rows = []
    for v in table.values:
        by = {m.name: m for m in v.metrics}
        row = [_td(v.value, "l"), _td(v.num_queries), _td(v.num_positive), _td(v.num_negative)]
        for n in names:
            m = by[n]
            if table.paired:
                row += [_td(fmt(m.value, 3)), _td(fmt(m.b, 3)),
                        _td(_signed(m.diff) + _interval(m.diff_low, m.diff_high)),
                        _td("—" if m.q_value is None else f"{m.q_value:.3g}")]
            else:
                row.append(_td(fmt(m.value, 3) + _interval(m.ci_low, m.ci_high)))
        rows.append(row)
    kind = "paired bootstrap" if table.paired else "bootstrap"
    thin = thin_rows([(v.value, v.num_units) for v in table.values], table.unit,
                     f"{column} rows")
    return (f"<h3>{_e(title)}{table.confidence:.0%} {kind} intervals, "
            f"{table.n_resamples} resamples)</h3>"
            + (f"<p class=\"sub warn\">{_e(thin)}</p>" if thin else "")
            + "<div class=\"scroll\">" + _table(header, rows) + "</div>")


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
    runs = [sub.run(task) for sub in subs]
    cards, missing = [], 0
    for index, score in chosen:
        query_id = runs[0].per_sample[index]["sample_id"]
        figures_html = []
        region = report_draw.shared_region([run.sample(query_id) for run in runs])
        pixels, image_notice = report_draw.load_view(data.images, runs[0].sample(query_id),
                                                     region)
        for sub, run in zip(subs, runs, strict=True):
            row = run.row(query_id)
            thumb = report_draw.overlay_thumbnail(pixels, run.sample(query_id), row,
                                                  region=region)
            figures_html.append(
                f"<figure><figcaption>{_e(sub.name)}</figcaption>"
                f"<img alt=\"{_e(row['sample_id'])} {_e(sub.name)}\" "
                f"src=\"{report_draw.jpeg_data_uri(thumb)}\">{_row_metrics(row)}</figure>")
        missing += image_notice is not None
        row = runs[0].row(query_id)
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
    if data.worst <= 0:  # no gallery asked for (a hosted leaderboard's default)
        return ""
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
    picked = [d for side in biggest_differences(diffs, DIFF_CARDS) for d in side]
    score = "IoU" if key == "seg" else "F1"
    label = MODALITY_LABELS[key]
    cards, _ = _cards(data, task, [(index[d.sample_id], f"{label} {score} Δ B − A "
                                    f"{d.diff:+.3f}") for d in picked], "diff")
    return (f"<h3>Biggest per-query {label} {score} differences, drawn</h3>"
            + LEGEND + cards)


def _warnings(data: ReportData, task: str) -> str:
    """Each submission's coverage warnings (missing rows, unknown task keys, modalities not
    submitted), above its numbers."""
    return "".join(f"<div class=\"notice\">{_e(sub.name)}: {_e(w['message'])}</div>"
                   for sub in data.submissions for w in sub.results[task].get("warnings", ()))


FIELD_NOTES = {
    "open_vocabulary": "GRES: gIoU, the mean mask IoU over positive and negative queries (a "
                       "negative scores 1 when its mask is empty, else 0); cIoU, cumulative "
                       "intersection over cumulative union, a negative's pixels in the union; "
                       "N-acc, negatives left empty; T-acc, positives predicted present "
                       "(presence recall). Class mIoU: the mean over categories of each "
                       "category's cumulative IoU (EarthVL). HBB Pr@0.5: positives whose top-1 "
                       "box (highest score) reaches IoU 0.5 with a GT box; count RMSE over "
                       "positives and negatives (a negative counts 0); R: recall of GT boxes "
                       "binned by the square root of their area (AI-TOD).",
    "referring": "RSVG / DIOR-RSVG: Pr@t, the share of queries whose top-1 HBB (highest score) "
                 "reaches IoU t with its best GT box; meanIoU and cumIoU of those pairs. LAVT: "
                 "oIoU and mIoU, the micro and macro mask IoU. Class mIoU: the mean over "
                 "categories of each category's cumulative IoU (EarthVL). MAE / RMSE of the "
                 "HBB count against the GT box count.",
}
FIELD_NOTES["reasoning"] = FIELD_NOTES["referring"]


def _ap_cell(value: float | str | None, **attrs: str) -> str:
    """A number (``–`` undefined) or :data:`NOT_SUBMITTED`, with ``data-*`` attributes."""
    if isinstance(value, str):
        return _cell(None, **attrs).replace(">–<", f">{value}<")
    return _cell(value, **attrs)


def _ap_section(data: ReportData, task: str) -> str:
    """Average precision of every box: the pooled APs and COCO's and DOTA's per-category mAP
    (labelled with what they average), per submission and box modality; compared, B − A
    with its paired interval (:attr:`Comparison.ap_metrics`: the boxes ranked once, each
    query weighted by how often a resample draws it) and the resamples it rests on."""
    subs = [s for s in data.submissions if task in s.average_precision]
    if not subs:
        return ""
    cmp = data.comparisons.get(task)
    intervals = {(m.modality, m.metric): m for m in (cmp.ap_metrics if cmp else ())}
    first = subs[0].average_precision[task]
    keys = ap_keys(first)
    rows, notes = [], []
    for m in BOX_MODALITIES:
        if not first.get(m):
            continue
        values = []
        for tag, sub in zip("AB", subs, strict=False):
            entry = sub.average_precision[task].get(m)
            numbers = ap_numbers(entry, keys)
            gone = m in not_submitted(sub.results[task])
            values.append([NOT_SUBMITTED if gone else numbers[k][0] for k in keys])
            rows.append([_td(MODALITY_LABELS[m], "l"), _td(sub.name, "l")]
                        + [_ap_cell(v, task=task, modality=m, ap=k, sub=tag)
                           for k, v in zip(keys, values[-1], strict=True)])
            if entry and entry["coco"].get("cap_warning") and not gone:
                notes.append(f"{sub.name}, {MODALITY_LABELS[m]}: {entry['coco']['cap_warning']}")
        if len(values) == 2:
            rows.append([_td(MODALITY_LABELS[m], "l"), _td("Δ B − A", "l")]
                        + [_ap_diff_cell(a, b, intervals.get((m, k)), task, m, k)
                           for k, a, b in zip(keys, *values, strict=True)])
            if intervals:
                rows.append([_td(MODALITY_LABELS[m], "l"),
                             _td(f"{cmp.confidence:.0%} CI (resamples used)" if cmp else "",
                                 "l")]
                            + [_ap_interval_cell(NOT_SUBMITTED in (a, b), intervals.get((m, k)),
                                                 task, m, k)
                               for k, a, b in zip(keys, *values, strict=True)])
    scope = {k: n for k, (_, n) in ap_numbers(first[next(
        m for m in BOX_MODALITIES if first.get(m))], keys).items()}
    short = {k: "pooled" if AP_METRICS[k][2] == "pooled" else ap_scope(k, scope[k])
             for k in keys}
    header = ["modality", "submission"] + [f"{METRIC_LABELS[k]} ({short[k]})" for k in keys]
    legend = "; ".join(ap_description(k, scope[k]) for k in keys)
    view = ("boxes on negative queries count as false positives (of the category their "
            "phrase names, in the mAP)" if first["hard_negatives"] else "positive queries only")
    return (f'<h3 id="ap-{task}">Average precision (every box)</h3>'
            + "".join(f'<div class="notice">{_e(n)}</div>' for n in notes)
            + _table(header, rows, left=2)
            + f'<p class="sub">{_e(legend)}. IoU'
            f" ≥ {first['iou_threshold']:g} (DOTA mAP: > "
            f"{first['iou_threshold']:g}, difficult objects ignored as DOTA_devkit does); "
            f"COCO-style: at most {first['max_detections']:,} boxes per query; {view}. "
            + (_e(_ap_interval_note(cmp)) if len(subs) == 2 and cmp and cmp.ap_metrics
               else "") + "– undefined; — not submitted.</p>"
            + (f'<p class="sub warn">AP intervals. {_e(cmp.warning)}</p>'
               if len(subs) == 2 and cmp and cmp.ap_metrics and cmp.warning else "")
            + _ap_exports(subs, task))


def _ap_exports(subs: Sequence[Any], task: str) -> str:
    """The AP table's numbers (in %) as Markdown and LaTeX, for a paper."""
    sides = {s.name: (s.average_precision[task], s.results[task]) for s in subs}
    return (f"<details><summary>Markdown (AP in %)</summary><pre id=\"ap-markdown-{task}\">"
            f"{_e(ap_table_markdown(sides))}</pre></details>"
            f"<details><summary>LaTeX (AP in %)</summary><pre id=\"ap-latex-{task}\">"
            f"{_e(ap_table_latex(sides))}</pre></details>")


def _ap_interval_note(cmp: Comparison) -> str:
    over = "images" if cmp.unit == "image" else "queries"
    return (f"Intervals: paired percentile bootstrap over {over}, the first "
            f"{cmp.ap_resamples:,} of the key metrics' resamples; each resample ranks the "
            "boxes once and weights each query by how often it was drawn, and a category "
            "without GT in a resample is left out of its mAP (as COCOeval leaves it out); bold "
            "Δ: the interval excludes 0. ")


def _ap_diff_cell(a: float | str | None, b: float | str | None, m: MetricDiff | None,
                  task: str, modality: str, key: str) -> str:
    """B − A of one AP (``—`` when a side is not submitted), bold when its interval
    excludes 0."""
    if NOT_SUBMITTED in (a, b):
        return _td(NOT_SUBMITTED)
    diff = None if a is None or b is None else float(b) - float(a)
    cls = "pos" if (diff or 0) > 0 else "neg" if (diff or 0) < 0 else ""
    if m is not None and m.ci_low is not None and m.ci_high is not None \
            and (m.ci_low > 0 or m.ci_high < 0):
        cls += " sig"
    return (f'<td class="{cls.strip()}" data-task="{task}" data-modality="{modality}" '
            f'data-ap="{_e(key)}" data-sub="diff">{_signed(diff)}</td>')


def _ap_interval_cell(gone: bool, m: MetricDiff | None, task: str, modality: str,
                      key: str) -> str:
    """``[low, high] (resamples used)``; ``—`` when a side is not submitted, ``–`` when
    undefined."""
    text = (NOT_SUBMITTED if gone else "–" if m is None or m.ci_low is None
            or m.ci_high is None else f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}] ({m.n_valid:,})")
    return (f'<td data-task="{task}" data-modality="{modality}" data-ap="{_e(key)}" '
            f'data-sub="ci">{_e(text)}</td>')


def _field_section(data: ReportData, task: str) -> str:
    results = {s.name: s.results for s in data.submissions}
    return ("<h3>Field metrics</h3>" + field_table_html(results, task)
            + f"<p class=\"sub\">{_e(FIELD_NOTES[task])} In %, except counts; – null or "
            "not run; — not submitted.</p>"
            f"<details><summary>Markdown</summary><pre id=\"field-markdown-{task}\">"
            f"{_e(field_table_markdown(results, task))}</pre></details>"
            f"<details><summary>LaTeX</summary><pre id=\"field-latex-{task}\">"
            f"{_e(field_table_latex(results, task))}</pre></details>")


def _task_section(data: ReportData, task: str, fig: _Figures) -> str:
    first = data.submissions[0].results[task]
    out = [f"<h2 id=\"{task}\">{TASK_LABELS[task]} task</h2>", _warnings(data, task),
           "<h3>Key metrics</h3>", _key_metric_table(data, task), _confusion_tables(data, task),
           _field_section(data, task), _ap_section(data, task)]
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
    out.append(ranks_html(data.ranks.get(task), fig))
    out.append(_group_table(data, task))
    out.append(_slice_tables(data, task))
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
    nav = "".join(f"<a href=\"#{t}\">{TASK_LABELS[t]}</a>" for t in data.tasks)
    body = [f"<h1>{_e(title)}</h1>",
            f"<p class=\"sub\">Generated {datetime.now(UTC):%Y-%m-%d %H:%M UTC} by "
            f"ovearth_core {__version__}. Differences are B − A with B = "
            f"{_e(names[-1])}.</p>" if len(names) > 1 else
            f"<p class=\"sub\">Generated {datetime.now(UTC):%Y-%m-%d %H:%M UTC} by "
            f"ovearth_core {__version__}.</p>",
            f"<nav><a href=\"#config\">Configuration</a><a href=\"#paper\">Paper table</a>"
            f"{nav}{AUDIT_LINK if data.audit is not None else ''}</nav>",
            _config_section(data),
            "<h2 id=\"paper\">Paper-style table (Table 2 shape)</h2>",
            paper_table_html(results),
            "<details><summary>Markdown</summary><pre id=\"paper-markdown\">"
            f"{_e(markdown)}</pre></details><details><summary>LaTeX</summary>"
            f"<pre id=\"paper-latex\">{_e(latex)}</pre></details>"]
    body += [_task_section(data, task, fig) for task in data.tasks]
    if data.audit is not None:
        body.append(audit_section(data.audit))
    body.append(_footer(data))
    return page(_e(title), get_plotlyjs(), "\n".join(body))


AUDIT_ROWS = 25
AUDIT_LINK = '<a href="#audit">Audit</a>'


def audit_section(result: dict[str, Any], rows: int = AUDIT_ROWS) -> str:
    """The audit's section: counts by kind and the first ``rows`` suspects."""
    suspects = result["suspects"]
    kinds = ("missing", "spurious", "shifted", "wrong_class")
    counts = ", ".join(f"{sum(s['kind'] == k for s in suspects)} {k.replace('_', ' ')}"
                       for k in kinds)
    table = _table(["#", "kind", "query", "category", "box [x, y, w, h]", "GT box",
                    "proposed", "score", "support"],
                   [[_td(s["rank"], "l"), _td(s["kind"].replace("_", " "), "l"),
                     _td(s["query_id"], "l"),
                     _td(s["category"] + (" (negative query)" if s["negative"] else ""), "l"),
                     _td(_box(s["bbox"])), _td(_box(s.get("gt_bbox"))),
                     _td(s.get("proposed_category", "–")), _td(f"{s['score']:.3f}"),
                     _td(f"{s['support']:.0%}")] for s in suspects[:rows]], left=4)
    voters = ", ".join(f"{v['name']} ({v['weight']:.2f})" for v in result["submissions"])
    warnings = "".join(f"<p class=\"warn\">{_e(w['message'])}</p>"
                       for w in result.get("warnings", []))
    return (f"<h2 id=\"audit\">Audit: suspected label errors</h2>{warnings}"
            f"<p>{len(suspects)} suspects ({_e(counts)}) on {_e(result['modality'])}, from the "
            f"consensus of {len(result['submissions'])} submissions (quality weight): "
            f"{_e(voters)}. Score: calibrated, quality-weighted votes "
            "(docs/audit.md); the first "
            f"{min(rows, len(suspects))} shown.</p>{table}")


def _box(xywh: Sequence[float] | None) -> str:
    return "–" if not xywh else "[" + ", ".join(f"{v:.0f}" for v in xywh) + "]"


def _footer(data: ReportData) -> str:
    if not data.comparisons:
        return ""
    unit = next(iter(data.comparisons.values())).unit  # one unit for every task
    over = ("images (a drawn image brings all its queries)" if unit == "image"
            else "queries")
    text = (f"Intervals: paired percentile bootstrap over {over} (the same resample for both "
            f"submissions), {data.options['bootstrap_resamples']} resamples, seed "
            f"{data.options['bootstrap_seed']}; a resample in which a metric is undefined is "
            "left out. McNemar: two-sided exact binomial test on the discordant queries.")
    return f"<footer>{_e(text)}</footer>"
