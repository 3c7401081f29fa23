"""The report's tables: HTML cell helpers and the paper-style table (Table 2 shape) as HTML,
Markdown and LaTeX, all from one grid of numbers; the field metrics and the average
precision (with the protocols an option adds: NMS-AP, AI-TOD) as Markdown and LaTeX."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.ap import ap_numbers
from ..analysis.compare import not_submitted
from ..analysis.sweep import BOX_MODALITIES
from ..labels import (
    AP_LOWER_IS_BETTER,
    AP_METRICS,
    METRIC_LABELS,
    MODALITY_LABELS,
    NOT_SUBMITTED,
    PAPER_METRIC_LABELS,
    TASK_LABELS,
    ap_keys,
)


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


# Table 2 of the paper: (column label, summary key, metric, percent?) per task.
_MA_IOU = (PAPER_METRIC_LABELS["positive_macro_miou"], "seg", "positive_macro_miou", True)
_MCC = (PAPER_METRIC_LABELS["mcc"], "presence", "mcc", False)
_MI_F1 = (f"{PAPER_METRIC_LABELS['positive_micro_f1']}@0.5", "bbox", "0.50", True)
PAPER_COLUMNS: dict[str, list[tuple[str, str, str, bool]]] = {
    "open_vocabulary": [_MA_IOU, _MCC, _MI_F1],
    "referring": [_MA_IOU, _MI_F1],
    "reasoning": [_MA_IOU, _MI_F1],
}


def paper_values(result: dict[str, Any], task: str) -> list[float | None]:
    """The task's Table 2 numbers: ma-IoU and mi-F1@0.5 in percent, MCC as is; ``None`` for
    a modality not run or not submitted (the submission has none of it)."""
    out: list[float | None] = []
    missing = not_submitted(result)
    for _, key, metric, percent in PAPER_COLUMNS[task]:
        block = result["summary"].get(key)
        if block is None or key in missing:
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


Value = float | str | None  # a number, NOT_SUBMITTED, or None (null / not run)


def _best(rows: Sequence[tuple[str, Sequence[Value]]], col: int, lower: bool = False
          ) -> float | None:
    values = [v[col] for _, v in rows if isinstance(v[col], float | int)]
    if len(rows) < 2 or not values:
        return None
    return min(values) if lower else max(values)


def _grid_cells(rows: Sequence[tuple[str, Sequence[Value]]], empty: str, bold: str,
                not_submitted: str = NOT_SUBMITTED, lower: Sequence[int] = (),
                ) -> list[tuple[str, list[str]]]:
    """The cells of the Markdown and LaTeX tables: two decimals, ``empty`` for a null,
    ``not_submitted`` for a modality the submission does not contain, the best of each
    column (with several submissions; the lowest in the ``lower`` columns) through the
    ``bold`` format."""
    out = []
    for name, values in rows:
        cells = []
        for col, v in enumerate(values):
            if v is None or isinstance(v, str):
                cells.append(empty if v is None else not_submitted)
                continue
            text = f"{v:.2f}"
            cells.append(bold.format(text) if v == _best(rows, col, col in lower) else text)
        out.append((name, cells))
    return out


def _grid_markdown(header: Sequence[str], cells: Sequence[tuple[str, list[str]]]) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "|:---|" + "---:|" * (len(header) - 1)]
    for name, row in cells:
        lines.append("| " + " | ".join([name.replace("|", "\\|")] + row) + " |")
    return "\n".join(lines) + "\n"


def _grid_latex(groups: Sequence[tuple[str, int]], labels: Sequence[str],
                cells: Sequence[tuple[str, list[str]]]) -> str:
    """A booktabs ``tabular``: a row of column groups, their rules, a row of labels."""
    widths = [w for _, w in groups]
    lines = [r"\begin{tabular}{l" + "".join("c" * w for w in widths) + "}", r"\toprule"]
    lines.append("Submission & " + " & ".join(
        rf"\multicolumn{{{w}}}{{c}}{{{latex_escape(g)}}}" for g, w in groups) + r" \\")
    start, rules = 2, []
    for w in widths:
        rules.append(rf"\cmidrule(lr){{{start}-{start + w - 1}}}")
        start += w
    lines.append(" ".join(rules))
    lines.append(" & " + " & ".join(latex_escape(label) for label in labels) + r" \\")
    lines.append(r"\midrule")
    for name, row in cells:
        lines.append(" & ".join([latex_escape(name)] + row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def paper_table_markdown(results: Mapping[str, Mapping[str, dict[str, Any]]]) -> str:
    """Table 2 as Markdown: rows = submissions, columns = per task ma-IoU / MCC / mi-F1@0.5.

    ``results`` maps a submission name to ``{task key: evaluation result}``. ma-IoU and
    mi-F1@0.5 (HBB) are percentages, MCC is in [-1, 1]; both with two decimals, the best
    of each column in bold, ``–`` where a value is null or the modality was not run.
    """
    tasks, rows = _paper_grid(results)
    header = ["Submission"] + [f"{TASK_LABELS[t]} {label}" for t in tasks
                               for label, *_ in PAPER_COLUMNS[t]]
    return _grid_markdown(header, _grid_cells(rows, "–", "**{}**"))


_LATEX_SPECIALS = str.maketrans({
    "\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    **{char: "\\" + char for char in "&%$#_{}"},
})


def latex_escape(text: str) -> str:
    r"""``text`` as LaTeX text: each of ``\ { } $ & # ^ _ % ~`` replaced in one pass (so the
    braces of ``\textbackslash{}`` are never escaped again).

    >>> print(latex_escape("a\\b_{1}"))
    a\textbackslash{}b\_\{1\}
    """
    return text.translate(_LATEX_SPECIALS)


def paper_table_latex(results: Mapping[str, Mapping[str, dict[str, Any]]]) -> str:
    """Table 2 as a LaTeX ``tabular`` (booktabs); same numbers as the Markdown table."""
    tasks, rows = _paper_grid(results)
    return _grid_latex([(TASK_LABELS[t], len(PAPER_COLUMNS[t])) for t in tasks],
                       [label for t in tasks for label, *_ in PAPER_COLUMNS[t]],
                       _grid_cells(rows, "--", r"\textbf{{{}}}"))


def paper_table_html(results: Mapping[str, Mapping[str, dict[str, Any]]]) -> str:
    tasks, rows = _paper_grid(results)
    header = ["submission"] + [f"{TASK_LABELS[t]} {label}" for t in tasks
                               for label, *_ in PAPER_COLUMNS[t]]
    body = [[_td(name, "l")] + [_td(fmt(v, 2)) for v in values] for name, values in rows]
    return (_table(header, body) + "<p class=\"sub\">ma-IoU: macro mask IoU over positive "
            "queries (%); MCC: presence, vocabulary only; mi-F1@0.5: micro HBB F1 at IoU 0.5 "
            "(%), whatever --iou-threshold was.</p>")


# The field's metrics per task: (group, column label, path in the summary, percent?, lower
# is better?). Referring and reasoning in the shape of RSVG / DIOR-RSVG grounding tables
# and LAVT's oIoU / mIoU; open vocabulary in GRES's (gIoU, cIoU, N-acc, T-acc).
_CLASS = ("Mask", "class mIoU", ("seg", "category_cum_miou"), True, False)
_GROUNDING = [("HBB grounding (RSVG)", label, ("bbox", "grounding", key), True, False)
              for label, key in (("Pr@0.5", "Pr@0.5"), ("Pr@0.6", "Pr@0.6"),
                                 ("Pr@0.7", "Pr@0.7"), ("Pr@0.8", "Pr@0.8"),
                                 ("Pr@0.9", "Pr@0.9"), ("meanIoU", "mean_iou"),
                                 ("cumIoU", "cum_iou"))]
_SIZE_RECALL = [("HBB recall", label, ("bbox", "by_size", key, "recall"), True, False)
                for label, key in (("0-8 px", "very_tiny"), ("8-16 px", "tiny"),
                                   ("16-32 px", "small"))]
FIELD_COLUMNS: dict[str, list[tuple[str, str, tuple[str, ...], bool, bool]]] = {
    "open_vocabulary": [
        ("Mask (GRES)", "gIoU", ("seg", "gres_giou"), True, False),
        ("Mask (GRES)", "cIoU", ("seg", "gres_ciou"), True, False),
        ("Mask (GRES)", "N-acc", ("negative_accuracy",), True, False),
        ("Mask (GRES)", "T-acc", ("presence", "recall"), True, False),
        _CLASS,
        ("HBB", "Pr@0.5", ("bbox", "grounding", "Pr@0.5"), True, False),
        ("HBB", "count RMSE", ("bbox", "counting", "rmse_with_negatives"), False, True),
        *_SIZE_RECALL],
    "referring": [*_GROUNDING,
                  ("Mask (LAVT)", "oIoU", ("seg", "positive_micro_miou"), True, False),
                  ("Mask (LAVT)", "mIoU", ("seg", "positive_macro_miou"), True, False),
                  _CLASS,
                  ("HBB count", "MAE", ("bbox", "counting", "mae"), False, True),
                  ("HBB count", "RMSE", ("bbox", "counting", "rmse"), False, True)],
}
FIELD_COLUMNS["reasoning"] = FIELD_COLUMNS["referring"]


def field_values(result: dict[str, Any], task: str) -> list[Value]:
    """The task's field metrics (percentages where the column says so); NOT_SUBMITTED for a
    modality the submission does not contain (the result's coverage), None for a null or a
    modality that was not run."""
    missing = not_submitted(result)
    out: list[Value] = []
    for _, _, path, percent, _ in FIELD_COLUMNS[task]:
        if path[0] in missing:
            out.append(NOT_SUBMITTED)
            continue
        value: Any = result["summary"]
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        out.append(None if value is None else (100 * value if percent else value))
    return out


def _field_grid(results: Mapping[str, Mapping[str, dict[str, Any]]], task: str
                ) -> tuple[list[tuple[str, list[Value]]], list[int]]:
    rows: list[tuple[str, list[Value]]] = [
        (name, field_values(by_task[task], task) if task in by_task
         else [None] * len(FIELD_COLUMNS[task])) for name, by_task in results.items()]
    lower = [i for i, column in enumerate(FIELD_COLUMNS[task]) if column[4]]
    return rows, lower


def _field_groups(task: str) -> list[tuple[str, int]]:
    groups: list[tuple[str, int]] = []
    for group, *_ in FIELD_COLUMNS[task]:
        if groups and groups[-1][0] == group:
            groups[-1] = (group, groups[-1][1] + 1)
        else:
            groups.append((group, 1))
    return groups


def field_table_markdown(results: Mapping[str, Mapping[str, dict[str, Any]]], task: str) -> str:
    """The task's field metrics as Markdown: rows = submissions, two decimals (ratios in
    percent), the best of each column in bold (lowest for count errors), ``–`` for a null
    or a modality not run, ``—`` for a modality not submitted."""
    rows, lower = _field_grid(results, task)
    header = ["Submission"] + [f"{group} {label}" for group, label, *_ in FIELD_COLUMNS[task]]
    return _grid_markdown(header, _grid_cells(rows, "–", "**{}**", lower=lower))


def field_table_latex(results: Mapping[str, Mapping[str, dict[str, Any]]], task: str) -> str:
    """The task's field metrics as a LaTeX ``tabular`` (booktabs), grouped as the Markdown."""
    rows, lower = _field_grid(results, task)
    return _grid_latex(_field_groups(task), [label for _, label, *_ in FIELD_COLUMNS[task]],
                       _grid_cells(rows, "--", r"\textbf{{{}}}", "---", lower))


def field_table_html(results: Mapping[str, Mapping[str, dict[str, Any]]], task: str) -> str:
    rows, _ = _field_grid(results, task)
    header = ["submission"] + [f"{group} {label}" for group, label, *_ in FIELD_COLUMNS[task]]
    body = [[_td(name, "l")] + [_td(v if isinstance(v, str) else fmt(v, 2)) for v in values]
            for name, values in rows]
    return _table(header, body)


# One submission's average precision of a task: its AP report (None: not computed) and
# its evaluator result (what it submits).
APSide = tuple[dict[str, Any] | None, dict[str, Any]]


def ap_columns(sides: Mapping[str, APSide]) -> list[tuple[str, str]]:
    """``(box modality, AP key)`` of every column: each modality some report has, each key
    of :data:`~ovearth_core.labels.AP_METRICS` some report holds (:func:`ap_keys`: a
    protocol's keys only when its option was on), in the HTML table's order."""
    reports = [r for r, _ in sides.values() if r]
    keys = [k for k in AP_METRICS if any(k in ap_keys(r) for r in reports)]
    return [(m, k) for m in BOX_MODALITIES if any(r.get(m) for r in reports) for k in keys]


def ap_values(report: dict[str, Any] | None, result: dict[str, Any],
              columns: Sequence[tuple[str, str]]) -> list[Value]:
    """A submission's AP of each column in percent; NOT_SUBMITTED for a modality it does
    not contain or a protocol its report was not computed with, ``None`` where undefined."""
    gone = not_submitted(result)
    have = ap_keys(report) if report else []
    out: list[Value] = []
    for m, key in columns:
        entry = (report or {}).get(m)
        if m in gone or not entry or key not in have:
            out.append(NOT_SUBMITTED)
            continue
        value = ap_numbers(entry, (key,))[key][0]
        out.append(None if value is None else 100 * value)
    return out


def _ap_grid(sides: Mapping[str, APSide]) -> tuple[list[tuple[str, str]],
                                                 list[tuple[str, list[Value]]], list[int]]:
    columns = ap_columns(sides)
    rows = [(name, ap_values(report, result, columns))
            for name, (report, result) in sides.items()]
    lower = [i for i, (_, k) in enumerate(columns) if k in AP_LOWER_IS_BETTER]
    return columns, rows, lower


def ap_table_markdown(sides: Mapping[str, APSide]) -> str:
    """The average precision of every box as Markdown: rows = submissions, columns = box
    modality x AP key (the HTML table's, NMS-AP's and AI-TOD's when computed), in percent
    with two decimals, the best of each column in bold (lowest for oLRP), ``–`` undefined,
    ``—`` not submitted (or a protocol not computed for that submission)."""
    columns, rows, lower = _ap_grid(sides)
    header = ["Submission"] + [f"{MODALITY_LABELS[m]} {METRIC_LABELS[k]}" for m, k in columns]
    return _grid_markdown(header, _grid_cells(rows, "–", "**{}**", lower=lower))


def ap_table_latex(sides: Mapping[str, APSide]) -> str:
    """The same numbers as :func:`ap_table_markdown`, a LaTeX ``tabular`` (booktabs),
    grouped by box modality."""
    columns, rows, lower = _ap_grid(sides)
    groups = [(MODALITY_LABELS[m], sum(c == m for c, _ in columns))
              for m in dict.fromkeys(m for m, _ in columns)]
    return _grid_latex(groups, [METRIC_LABELS[k] for _, k in columns],
                       _grid_cells(rows, "--", r"\textbf{{{}}}", "---", lower))
