"""Rendering helpers shared by the pages (validation report, metric cards, navigation)."""

from __future__ import annotations

import math
import numbers
import re
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from ovearth_core.errors import MAX_REPORTED, Problem
from ovearth_core.labels import METRIC_LABELS, NOT_SUBMITTED
from ovearth_core.results import Results

from . import state

# The labels table's metric names, capitalised for metric cards ("micro F1" -> "Micro F1").
KEY_METRIC_LABELS = {k: v[:1].upper() + v[1:] for k, v in METRIC_LABELS.items()}
OUTCOME_WORDS = {"TP": "true positives", "FP": "false positives", "TN": "true negatives",
                 "FN": "false negatives", "hit": "hits (IoU ≥ 0.5)", "miss": "misses (IoU < 0.5)"}


# What makes Markdown act on plain text here: code, emphasis, links and images, HTML, math,
# strike-through, tables, character references (&amp;); and an "_" that is not between two
# letters or digits (intraword "_" is never emphasis, so ids such as ov_000001 stay as
# written: :func:`_intraword`).
_MD_SPECIAL = "\\`*[]<$~|&"
# Streamlit's Markdown (remark-gfm) turns bare URLs into links by matching the unescaped text
# (``https?://``, ``www.``, ``mailto:``/``xmpp:``, ``name@host.tld``), so escaping cannot stop
# it: an invisible WORD JOINER (U+2060) after the scheme, the ``www`` or the ``@`` does.
WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i)(?:https?|mailto|xmpp|ftp)(?=:)|www(?=\.)|@")


def md_text(text: str) -> str:
    """User-supplied text (phrases, categories, ids, file names, messages quoting them)
    shown as text in Markdown: every character Markdown would act on is escaped and bare
    URLs and e-mail addresses are kept from becoming links (:data:`WORD_JOINER`), so user
    text cannot become a link, emphasis, math or HTML. Inside a code span use
    :func:`~pages.common.state.code` instead (code spans are never autolinked)."""
    text = str(text)
    escaped = "".join("\\" + c if c in _MD_SPECIAL or (c == "_" and not _intraword(text, i))
                      else c for i, c in enumerate(text))
    return _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, escaped)


def _intraword(text: str, i: int) -> bool:
    """``text[i]`` stands between two letters or digits: an ``_`` there can neither open nor
    close emphasis (CommonMark's flanking rules), so it is left as written."""
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def unexpected_error(err: Exception, what: str) -> None:
    """A short message with a reference to quote, never a traceback; the traceback goes to
    the server's log under the same reference."""
    ref = uuid.uuid4().hex[:8]
    state.LOG.error("unexpected error %s: %s", ref, what, exc_info=err)
    st.error(f"{what} ({type(err).__name__}: {md_text(str(err))[:300]}). Other files, tasks "
             f"or options may still work. Please report reference **{ref}** (the server's log "
             "has the details) with the files.")


def coverage_warnings(view: Results, who: str = "") -> None:
    """The evaluator's coverage warnings (missing rows, unknown task keys, modalities not
    submitted), shown beside the numbers, as text (they quote ids from the files);
    ``who`` names the submission when a page shows two."""
    for w in view.warnings:
        st.warning((f"{who}: " if who else "") + md_text(w.message), icon="⚠️")


def evaluated_caption(run: Any, extra: str = "") -> None:
    """Which files were evaluated, with which options (``run.config``: the evaluator's,
    not the widgets): every page's first line."""
    c = run.config
    mods = ", ".join(c.modalities)
    score = "none" if c.score_threshold is None else f"{c.score_threshold:g}"
    st.caption(f"Ground truth {state.code(run.gt_label)} · submission "
               f"{state.code(run.pred_label)} · "
               f"{state.TASK_LABELS[run.options.task]} · modalities {mods} · IoU threshold "
               f"{c.iou_threshold:g} · score threshold {score} · {c.bbox_format}"
               + (" · masks beyond the spec's cap taken" if run.options.large_masks else "")
               + (" · concave oriented boxes taken" if run.options.concave_obb else "")
               + f" · {ap_options(run.options)}" + (f" · {extra}" if extra else ""))


def ap_options(options: Any) -> str:
    """The average precision's options of ``options`` in words (every page's first line,
    the AP captions)."""
    protocols = [name for name, on in (("NMS-AP", options.nms_ap),
                                       ("AI-TOD's protocol", options.aitod)) if on]
    return (f"AP: at most {options.max_detections:,} boxes per query (COCO), hard negatives "
            f"{'on' if options.hard_negatives else 'off'}"
            + (f", {' and '.join(protocols)} on" if protocols else ""))


def problems_report(problems: list[Problem], gt_path: Path, pred_path: Path) -> None:
    """The evaluator's validation report: what is wrong, where, and how to fix it."""
    total = len(problems)
    lines = [f"**The input could not be evaluated: {total} problem{'s' * (total != 1)} found.** "
             "Fix the file or option named below (or choose other files in the sidebar); "
             "the rest of the app keeps working."]
    for p in problems[:MAX_REPORTED]:
        # Everything here may come from the files: shown as text, never as Markdown.
        where = state.code(Path(p.file).name) if p.file != "(options)" else "options"
        qid = f", query {state.code(p.query_id)}" if p.query_id else ""
        lines.append(f"- {where}{qid}, field {state.code(p.field)}: expected "
                     f"{md_text(p.expected)}; found {md_text(p.found)}")
    if total > MAX_REPORTED:
        lines.append(f"- … and {total - MAX_REPORTED} more (full list below)")
    st.error("\n".join(lines))
    st.dataframe(pd.DataFrame([{"file": p.file, "query_id": p.query_id, "field": p.field,
                                "expected": p.expected, "found": p.found} for p in problems]),
                 hide_index=True, placeholder="—", width="stretch")
    st.caption(f"Ground truth: {state.code(str(gt_path))} · Submission: "
               f"{state.code(str(pred_path))}")


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def static_table(frame: pd.DataFrame, formats: dict[str, str] | None = None) -> None:
    """A small table drawn as one Markdown table: no data grid (a first screen's data grid
    costs about half a trivial page's first paint) and no ``st.table``, which draws every
    cell as a Markdown element of its own (benchmarks/README.md, issue 49)."""
    st.markdown(markdown_table(frame, formats))


def markdown_table(frame: pd.DataFrame, formats: dict[str, str] | None = None) -> str:
    """``frame`` as a GitHub-flavoured Markdown table: text escaped (:func:`md_text`, line
    breaks as spaces), a missing value "—", a number in its column's format spec from
    ``formats`` (e.g. ``".4f"``), else an integral one as an integer and any other with four
    decimals; number columns aligned right."""
    formats = formats or {}
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(
        frame[c]) for c in frame.columns]
    lines = ["| " + " | ".join(_cell(c, None) for c in frame.columns) + " |",
             "| " + " | ".join("---:" if n else "---" for n in numeric) + " |"]
    lines += ["| " + " | ".join(_cell(v, formats.get(c)) for c, v in zip(
        frame.columns, row, strict=True)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _cell(value: Any, spec: str | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return md_text(" ".join(str(value).splitlines()))
    if spec is not None:
        return format(value, spec)
    return str(int(value)) if float(value).is_integer() else f"{value:.4f}"


def metric_cards(title: str, metrics: dict[str, Any], submitted: bool = True) -> None:
    """One row of st.metric cards for a modality's key metrics; a modality the submission
    does not contain shows "—" (not submitted), never its empty-submission zeros."""
    st.markdown(f"**{title}**" + ("" if submitted else " · not submitted"))
    cols = st.columns(max(1, len(metrics)))
    for col, (key, value) in zip(cols, metrics.items(), strict=True):
        col.metric(KEY_METRIC_LABELS.get(key, key), fmt(value) if submitted else NOT_SUBMITTED,
                   help=None if submitted else "The submission has no prediction of this "
                   "modality for this task; its metrics would be an empty submission's.")


def explore(**filters: Any) -> None:
    """Open the explorer with only ``filters`` set (names without ``flt_``); the explorer
    writes them to its URL (``state.link_params``)."""
    state.set_filters(**filters)
    st.switch_page(state.EXPLORER_PAGE)


def go_to_explorer(label: str, key: str, disabled: bool = False, **filters: Any) -> None:
    """A button that sets the explorer's filters and switches to the explorer page."""
    if st.button(label, key=key, width="stretch", disabled=disabled):
        explore(**filters)


def picked_point(event: Any) -> dict[str, Any] | None:
    """The first point selected (clicked) in an ``st.plotly_chart(on_select="rerun")``."""
    points = ((event or {}).get("selection") or {}).get("points") or []
    return points[0] if points else None


def picked_row(event: Any) -> int | None:
    """The row selected in an ``st.dataframe(on_select="rerun")``."""
    rows = ((event or {}).get("selection") or {}).get("rows") or []
    return rows[0] if rows else None


def rows_frame(rows: list[dict[str, Any]], object_errors: dict[str, str] | None = None,
               ) -> pd.DataFrame:
    """The explorer's table; ``object_errors`` (``{query_id: summary}``) adds a column of
    each query's object-level errors."""
    columns = ["query_id", "text", "category", "polarity", "outcome", "failure", "seg_iou",
               "bbox_f1", "obb_f1", "num_gt", "num_pred", "failure_detail"]
    frame = pd.DataFrame(rows, columns=columns)
    if object_errors is not None:
        frame["object_errors"] = [object_errors.get(r["query_id"], "") for r in rows]
    return frame


TABLE_CONFIG = {
    "query_id": st.column_config.TextColumn("query"),
    "text": st.column_config.TextColumn("text", width="medium"),
    "seg_iou": st.column_config.NumberColumn("seg IoU", format="%.3f"),
    "bbox_f1": st.column_config.NumberColumn("HBB F1", format="%.3f"),
    "obb_f1": st.column_config.NumberColumn("OBB F1", format="%.3f"),
    "failure_detail": st.column_config.TextColumn("detail"),
    "object_errors": st.column_config.TextColumn("object errors", width="medium"),
}


def object_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The explorer's object list (:func:`ovearth_core.analysis.objects.object_rows`)."""
    return pd.DataFrame([{
        "box": f"{r['role']} {r['index'] + 1}", "outcome": r["outcome"],
        "IoU": fmt(r["iou"]) if r["iou"] else "—",
        "score": "—" if r["score"] is None else f"{r['score']:.2f}",
        "nearest box": (f"{r['near_category']} · IoU {r['near_iou']:.2f}"
                          + (f" ({r['near_query']})" if r["near_query"] else ""))
        if r["near_category"] else "—"} for r in rows])
