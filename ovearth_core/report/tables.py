"""The report's tables: HTML cell helpers and the paper-style table (Table 2 shape) as HTML,
Markdown and LaTeX, all from one grid of numbers."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.compare import not_submitted
from ..labels import PAPER_METRIC_LABELS, TASK_LABELS


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


def _best(rows: Sequence[tuple[str, list[float | None]]], col: int) -> float | None:
    values = [v[col] for _, v in rows if v[col] is not None]
    return max(values) if len(rows) > 1 and values else None


def _paper_cells(rows: Sequence[tuple[str, list[float | None]]], empty: str, bold: str,
                 ) -> list[tuple[str, list[str]]]:
    """The cells of the Markdown and LaTeX tables: two decimals, ``empty`` for a null, the
    best of each column (with several submissions) through the ``bold`` format."""
    out = []
    for name, values in rows:
        cells = []
        for col, v in enumerate(values):
            text = empty if v is None else f"{v:.2f}"
            cells.append(bold.format(text) if v is not None and v == _best(rows, col) else text)
        out.append((name, cells))
    return out


def paper_table_markdown(results: Mapping[str, Mapping[str, dict[str, Any]]]) -> str:
    """Table 2 as Markdown: rows = submissions, columns = per task ma-IoU / MCC / mi-F1@0.5.

    ``results`` maps a submission name to ``{task key: evaluation result}``. ma-IoU and
    mi-F1@0.5 (HBB) are percentages, MCC is in [-1, 1]; both with two decimals, the best
    of each column in bold, ``–`` where a value is null or the modality was not run.
    """
    tasks, rows = _paper_grid(results)
    header = ["Submission"] + [f"{TASK_LABELS[t]} {label}" for t in tasks
                               for label, *_ in PAPER_COLUMNS[t]]
    lines = ["| " + " | ".join(header) + " |",
             "|:---|" + "---:|" * (len(header) - 1)]
    for name, cells in _paper_cells(rows, "–", "**{}**"):
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
        rf"\multicolumn{{{w}}}{{c}}{{{TASK_LABELS[t]}}}" for t, w in zip(tasks, widths,
                                                                          strict=True)) + r" \\")
    start, rules = 2, []
    for w in widths:
        rules.append(rf"\cmidrule(lr){{{start}-{start + w - 1}}}")
        start += w
    lines.append(" ".join(rules))
    lines.append(" & " + " & ".join(label for t in tasks
                                    for label, *_ in PAPER_COLUMNS[t]) + r" \\")
    lines.append(r"\midrule")
    for name, cells in _paper_cells(rows, "--", r"\textbf{{{}}}"):
        lines.append(" & ".join([_latex_escape(name)] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def paper_table_html(results: Mapping[str, Mapping[str, dict[str, Any]]]) -> str:
    tasks, rows = _paper_grid(results)
    header = ["submission"] + [f"{TASK_LABELS[t]} {label}" for t in tasks
                               for label, *_ in PAPER_COLUMNS[t]]
    body = [[_td(name, "l")] + [_td(fmt(v, 2)) for v in values] for name, values in rows]
    return (_table(header, body) + "<p class=\"sub\">ma-IoU: macro mask IoU over positive "
            "queries (%); MCC: presence, vocabulary only; mi-F1@0.5: micro HBB F1 at IoU 0.5 "
            "(%), whatever --iou-threshold was.</p>")
