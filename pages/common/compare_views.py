"""Compare page pieces: B's chooser, tables with explorer links, side-by-side overlays."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from ovearth_core.analysis.ap import ap_numbers
from ovearth_core.analysis.ap_bootstrap import RESAMPLED_OPTIONAL
from ovearth_core.analysis.compare import Comparison, MetricDiff
from ovearth_core.analysis.sweep import BOX_MODALITIES
from ovearth_core.labels import (
    AP_LOWER_IS_BETTER,
    AP_OPTIONAL,
    METRIC_LABELS,
    MODALITY_LABELS,
    ap_keys,
    ap_scope,
)
from ovearth_core.report import draw as report_draw
from ovearth_core.results import Results

from . import data, state, views
from .run import Run

LINK = st.column_config.LinkColumn("explorer", display_text="open ↗", width="small")
# AP intervals recompute AP once per resample: up to this many predicted boxes (A and B, HBB
# and OBB) they are computed with the page (~3 s on 2 cores); above, on request (the full
# benchmark's 52,712 boxes take 15-25 s).
AUTO_AP_BOXES = 10_000


def box_count(view: Results) -> int:
    """Predicted boxes of a result's queries over the box modalities."""
    return sum(entry.num_pred for row in view.per_sample for m in BOX_MODALITIES
               if (entry := row.block(m)) is not None)


def choose_b(run: Run) -> str:
    """Submission B's path as typed or picked (kept across pages; never A itself)."""
    ss = st.session_state
    others = [p for p in state.submissions(ss["gt_path"])  # symlinks resolved
              if state.resolve(p).resolve() != Path(run.pred[0]).resolve()]
    if not ss["cmp_b_path"] and others:
        ss["cmp_b_path"] = others[0]
    options = others + [p for p in (ss["cmp_b_path"],) if p and p not in others]
    st.selectbox("Submission B (type a path to use another file)", options,
                 accept_new_options=True, format_func=lambda p: Path(p).stem if p in others
                 else p, **state.bind("cmp_b_path"))
    return ss["cmp_b_path"]


def explorer_link(query_id: str) -> str:
    """A link that opens ``query_id`` in the explorer with this session's dataset and A
    (without the explorer's filters, which could hide it), as the gallery's tiles do."""
    return state.view_url(q=query_id, filters=False)


def explorer_links(query_ids: Sequence[str]) -> list[str]:
    """:func:`explorer_link` of each query, the session's parameters read once (a table of
    132 links read them 132 times: 0.1-0.2 s of a new session's Compare page)."""
    base = state.link_params(filters=False)
    return [state.url_of({**base, "q": q}) for q in query_ids]


def metrics_frame(cmp: Comparison) -> pd.DataFrame:
    return pd.DataFrame([{
        "modality": MODALITY_LABELS[m.modality],
        "metric": METRIC_LABELS.get(m.metric, m.metric), "A": m.a, "B": m.b,
        "Δ B − A": m.diff, "CI low": m.ci_low, "CI high": m.ci_high} for m in cmp.metrics])


def ap_frame(a: dict[str, Any], b: dict[str, Any], missing_a: set[str], missing_b: set[str],
             intervals: Sequence[MetricDiff] = ()) -> pd.DataFrame:
    """Pooled AP and per-category mAP of A and B (every box) per box modality, with B − A
    and, from ``intervals`` (:func:`~ovearth_core.analysis.compare.ap_differences`), its
    interval and the resamples it rests on (``None`` where a submission lacks the modality
    or a value is undefined). The protocols an option adds (NMS-AP, AI-TOD's) are shown
    when ``a`` has them; NMS-AP's mAPs and AI-TOD's mAP@[.5:.95] have intervals like the
    others (:data:`~ovearth_core.analysis.ap_bootstrap.RESAMPLED_OPTIONAL`), their other
    numbers "no interval": they are not resampled."""
    by_key = {(m.modality, m.metric): m for m in intervals}
    shown = ap_keys(a)
    rows = []
    for m in BOX_MODALITIES:
        if not a.get(m):
            continue
        na = ap_numbers(None if m in missing_a else a[m], shown)
        nb = ap_numbers(None if m in missing_b else b.get(m), shown)
        for key in shown:
            va, n = na[key]
            vb = nb[key][0]
            ci = by_key.get((m, key))
            rows.append({"modality": MODALITY_LABELS[m], "metric": ap_label(key),
                         "averaged": ap_scope(key, n), "A": va, "B": vb,
                         "Δ B − A": None if va is None or vb is None else vb - va,
                         "CI low": None if ci is None else ci.ci_low,
                         "CI high": None if ci is None else ci.ci_high,
                         "resamples used": None if ci is None or ci.ci_low is None
                         else ci.n_valid,
                         "note": "no interval (not resampled)"
                         if key in AP_OPTIONAL and key not in RESAMPLED_OPTIONAL else None})
    return pd.DataFrame(rows)


def ap_label(key: str) -> str:
    """An AP key's display name, "(lower is better)" added where it is (oLRP)."""
    return METRIC_LABELS[key] + (" (lower is better)" if key in AP_LOWER_IS_BETTER else "")


def agreement_frame(cmp: Comparison, names: list[str]) -> pd.DataFrame:
    """Agreement tables; McNemar p in scientific notation (it is often below 1e-4)."""
    return pd.DataFrame([{
        "table": ag.name, "both right": ag.both_right, f"only {names[0]} right": ag.only_a,
        f"only {names[1]} right": ag.only_b, "both wrong": ag.both_wrong,
        "McNemar p": ag.p_value, HOLM: ag.p_holm} for ag in cmp.agreements])


HOLM = "McNemar p (Holm)"  # Holm's correction over the table's tests
AGREEMENT_FORMATS = {"McNemar p": ".3e", HOLM: ".3e"}
# The key metrics' and AP's values, differences and interval ends.
DIFF_FORMATS = dict.fromkeys(("A", "B", "Δ B − A", "CI low", "CI high"), ".4f")


def categories_frame(cmp: Comparison) -> pd.DataFrame:
    """Each category's query count and, per key metric, A, B and B − A."""
    return pd.DataFrame([{"category": c.category, "queries": c.num_queries,
                          **{f"{n} {s}": v[i] for n, v in c.values.items()
                             for i, s in enumerate(("A", "B", "Δ"))}}
                         for c in cmp.categories])


def flipped_presence(cmp: Comparison, names: list[str]) -> list[str]:
    """Queries where A and B disagree on presence (one right, one wrong), with links."""
    ag = next((ag for ag in cmp.agreements if ag.name == "presence"), None)
    if ag is None:
        return []
    ids = [*ag.only_a_ids, *ag.only_b_ids]
    rows = [{"query": q, "right": names[0 if k < len(ag.only_a_ids) else 1], "explorer": link}
            for k, (q, link) in enumerate(zip(ids, explorer_links(ids), strict=True))]
    st.caption(f"{len(ag.only_a_ids)} queries right only in {views.md_text(names[0])}, "
               f"{len(ag.only_b_ids)} right only in {views.md_text(names[1])}")
    if rows:
        with st.expander(f"The {len(rows):,} queries whose presence flipped",
                         key="_w_cmp_flipped_open", on_change="rerun") as box:
            if box.open:
                st.dataframe(pd.DataFrame(rows), hide_index=True, placeholder="—",
                             width="stretch", column_config={"explorer": LINK},
                             height=min(300, 36 + 35 * len(rows)))
    return [r["query"] for r in rows]


def diffs_frame(diffs: list[Any]) -> pd.DataFrame:
    links = explorer_links([d.sample_id for d in diffs])
    return pd.DataFrame([{"query": d.sample_id, "text": d.phrase, "category": d.category,
                          "A": d.a, "B": d.b, "Δ": d.diff, "explorer": link}
                         for d, link in zip(diffs, links, strict=True)])


def overlays(run: Run, b_key: data.FileKey, options_b: data.Options, names: list[str],
             query_id: str) -> None:
    """A's and B's overlays of one query, side by side (same crop), with PNG downloads."""
    first = data.evaluate(run.gt, run.pred, run.options).run.sample(query_id)
    pngs, notice = overlay_pngs(run.gt, ((run.pred, run.options), (b_key, options_b)),
                                str(run.images_dir), query_id,
                                data.image_stamp(run.images_dir, first.image_path))
    if notice:
        st.caption(notice)
    st.markdown(f"[Open {state.code(query_id)} in the explorer ↗]({explorer_link(query_id)})")
    for col, name, png in zip(st.columns(2), names, pngs, strict=True):
        col.image(png, caption=f"{name} · {query_id}")
        col.download_button(f"Download {name} overlay (PNG)", png,
                            file_name=f"{query_id}_{name}.png", mime="image/png",
                            key=f"dl_{name}")


# Drawn and encoded once per query and pair of runs, whichever session asks (a new
# session's Compare page drew both and encoded each twice: 0.28 s of its 0.49 s script).
@st.cache_resource(show_spinner=False, max_entries=16)
def overlay_pngs(gt: data.FileKey, runs: tuple[tuple[data.FileKey, data.Options], ...],
                 images_dir: str, query_id: str, stamp: data.Stamp
                 ) -> tuple[list[bytes], str | None]:
    """The PNG overlay of one query under each ``(prediction, options)`` of ``runs``, all
    on the same crop, and the display image's notice (``None`` without one)."""
    pair = []
    for pred, opts in runs:
        evaluated = data.evaluate(gt, pred, opts).run
        pair.append((evaluated.sample(query_id), evaluated.row(query_id)))
    first = pair[0][0]
    image_args = (images_dir, first.image_path, first.width, first.height, stamp)
    display = data.display_image(*image_args)
    region = report_draw.shared_region([sample for sample, _ in pair])
    pixels = data.detail_image(*image_args, region) or display
    pngs = []
    for sample, row in pair:
        buf = io.BytesIO()
        report_draw.overlay_thumbnail(pixels, sample, row, max_side=480,
                                      region=region).save(buf, format="PNG")
        pngs.append(buf.getvalue())
    return pngs, display.notice or None