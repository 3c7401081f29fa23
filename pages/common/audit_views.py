"""The Audit page's views (issue 36): one suspect's card (picture, votes, decision
buttons) and the "what if the confirmed ones are fixed" section."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ovearth_core.audit.fix import suspect_key
from ovearth_core.errors import OVEarthInputError
from ovearth_core.viz import analysis_figures as figs

from . import audit_data, state, views

KIND_LABELS = {"missing": "missing label", "spurious": "spurious label",
               "shifted": "shifted label", "wrong_class": "wrong class"}


def suspect_ui(run: Any, s: dict[str, Any], decided: str | None) -> None:
    with st.container(border=True):
        left, right = st.columns([3, 2])
        left.image(audit_data.suspect_picture(run.images_dir, s),
                   caption="left: the label (green) · right: each submission's vote (blue, "
                           "brighter when confident) and the consensus (orange)")
        box = "[" + ", ".join(f"{v:.0f}" for v in s["bbox"]) + "]"
        fixed = {"missing": f"add {box}", "spurious": "remove the box",
                 "shifted": f"move to {box}",
                 "wrong_class": f"relabel as {s.get('proposed_category')}"}[s["kind"]]
        right.markdown(f"**#{s['rank']} · {KIND_LABELS[s['kind']]}** · score {s['score']:.2f}"
                       f" · support {s['support']:.0%}\n\nquery {state.code(s['query_id'])}"
                       f" ({'negative' if s['negative'] else 'positive'}) · category "
                       f"{state.code(s['category'])} · proposed fix: {fixed}")
        where = (f" (under {state.code(s['proposed_category'])})"
                 if s["kind"] == "wrong_class" else "")
        if s["votes"]:
            right.caption(f"{len(s['votes'])} votes{where}: each submission's raw score and "
                          "calibrated confidence")
            right.dataframe([{"submission": v["submission"], "score": v["score"],
                              "confidence": v["confidence"]} for v in s["votes"]],
                            hide_index=True, height="content")  # every vote shown
        else:
            right.caption("No submission found it.")
        key = suspect_key(s)
        buttons = right.columns(3)
        for col, label, value in ((buttons[0], "Confirm", "confirmed"),
                                  (buttons[1], "Reject", "rejected"), (buttons[2], "Undo", None)):
            col.button(label, key=f"audit_{value}_{key}", disabled=decided == value,
                       on_click=audit_data.decide, args=(run.gt, run.options.task, s, value))
        if decided:
            right.caption(f"{decided} (review sidecar)")


def what_if_ui(run: Any, preds: tuple, options: Any, confirmed: list[dict[str, Any]]) -> None:
    st.header("What if the confirmed ones are fixed")
    if not confirmed:
        st.info("Confirm suspects above: their fixes make the cleaned ground truth.")
        return
    fixes = f"{len(confirmed)} fix{'es' if len(confirmed) != 1 else ''}"
    if st.button(f"Write the cleaned ground truth ({fixes}) and re-rank",
                 key="audit_what_if"):
        try:
            st.session_state["_audit_what_if"] = audit_data.what_if(run.gt, preds, options,
                                                                   confirmed)
        except OVEarthInputError as err:
            st.error(views.md_text(str(err)))
    result = st.session_state.get("_audit_what_if")
    if result is None:
        return
    if result.keys != tuple(sorted(suspect_key(s) for s in confirmed)):
        st.info("The confirmations changed since the cleaned ground truth was written: write "
                "it again to rank on them.")
        return
    st.success(f"Wrote {state.code(str(result.path))} ({result.fixed} "
               f"fix{'es' if result.fixed != 1 else ''}).")
    ranking = result.ranking
    metric = figs.LEADERBOARD_METRIC_LABELS.get(ranking["metric"], ranking["metric"])
    st.caption(f"Ranked by {metric} on the original and on the cleaned ground truth"
               + (f"; left out (invalid): {', '.join(result.skipped)}" if result.skipped
                  else ""))
    st.dataframe([{"submission": r["name"], "rank (cleaned)": r["rank_after"],
                   "rank (original)": r["rank_before"],
                   "change": f"{'↑' if r['change'] > 0 else '↓' if r['change'] < 0 else '='}"
                             f"{abs(r['change']) or ''}",
                   "original": r["before"], "cleaned": r["after"]} for r in ranking["rows"]],
                 hide_index=True, key="audit_ranking", height="content")
