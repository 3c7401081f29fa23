"""The Audit page's views (issue 36): one suspect's card (picture, votes, decision
buttons) and the "what if the confirmed ones are fixed" section."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ovearth_core.audit.fix import suspect_key
from ovearth_core.errors import OVEarthInputError
from ovearth_core.viz import analysis_figures as figs

from . import audit_data, state, views

KIND_LABELS = audit_data.KIND_LABELS


def proposed_fix(s: dict[str, Any]) -> str:
    """The fix a suspect proposes, in words (Markdown: a proposed category as code)."""
    box = "[" + ", ".join(f"{v:.0f}" for v in s["bbox"]) + "]"
    if s["kind"] == "wrong_class":
        return f"relabel as {state.code(s['proposed_category'])}"
    return {"missing": f"add {box}", "spurious": "remove the box",
            "shifted": f"move to {box}"}[s["kind"]]


def headline(s: dict[str, Any]) -> str:
    """A suspect card's Markdown head: rank, kind, score, support, query, category, fix (the
    ids and names from the files as code, never Markdown)."""
    return (f"**#{s['rank']} · {KIND_LABELS[s['kind']]}** · score {s['score']:.2f}"
            f" · support {s['support']:.0%}\n\nquery {state.code(s['query_id'])}"
            f" ({'negative' if s['negative'] else 'positive'}) · category "
            f"{state.code(s['category'])} · proposed fix: {proposed_fix(s)}")


def votes_caption(s: dict[str, Any]) -> str:
    """The caption above a suspect's votes (a wrong class's: under the proposed category)."""
    if not s["votes"]:
        return "No submission found it."
    where = (f" (under {state.code(s['proposed_category'])})"
             if s["kind"] == "wrong_class" else "")
    return (f"{len(s['votes'])} votes{where}: each submission's raw score and calibrated "
            "confidence")


def vote_rows(s: dict[str, Any]) -> list[dict[str, Any]]:
    """The votes table: one row per vote, in the suspect's order."""
    return [{"submission": v["submission"], "score": v["score"],
             "confidence": v["confidence"]} for v in s["votes"]]


def suspect_ui(run: Any, s: dict[str, Any], decided: str | None) -> None:
    with st.container(border=True):
        left, right = st.columns([3, 2])
        left.image(audit_data.suspect_picture(run.images_dir, s),
                   caption="left: the label (green) · right: each submission's vote (blue, "
                           "brighter when confident) and the consensus (orange)")
        right.markdown(headline(s))
        right.caption(votes_caption(s))
        if s["votes"]:
            right.dataframe(vote_rows(s), hide_index=True, height="content")  # every vote
        key = suspect_key(s)
        buttons = right.columns(3)
        for col, label, value in ((buttons[0], "Confirm", "confirmed"),
                                  (buttons[1], "Reject", "rejected"), (buttons[2], "Undo", None)):
            col.button(label, key=f"audit_{value}_{key}", disabled=decided == value,
                       on_click=audit_data.decide, args=(run.gt, run.options.task, s, value))
        if decided:
            right.caption(f"{decided} (review sidecar)")


def fixes(n: int) -> str:
    """``"1 fix"``, ``"2 fixes"``."""
    return f"{n} fix{'es' if n != 1 else ''}"


def change(moved: int) -> str:
    """A rank change: ``↑2`` up two places, ``↓1`` down one, ``=`` none."""
    return f"{'↑' if moved > 0 else '↓' if moved < 0 else '='}{abs(moved) or ''}"


def ranking_caption(result: audit_data.WhatIf) -> str:
    """What the re-ranking is by, and the submissions left out (their names as code)."""
    ranking = result.ranking
    metric = figs.LEADERBOARD_METRIC_LABELS.get(ranking["metric"], ranking["metric"])
    skipped = ", ".join(state.code(name) for name in result.skipped)
    return (f"Ranked by {metric} on the original and on the cleaned ground truth"
            + (f"; left out (invalid): {skipped}" if skipped else ""))


def ranking_rows(ranking: dict[str, Any]) -> list[dict[str, Any]]:
    """The re-ranking table: one row per submission, in the cleaned ranking's order."""
    return [{"submission": r["name"], "rank (cleaned)": r["rank_after"],
             "rank (original)": r["rank_before"], "change": change(r["change"]),
             "original": r["before"], "cleaned": r["after"]} for r in ranking["rows"]]


def what_if_ui(run: Any, preds: tuple, options: Any, confirmed: list[dict[str, Any]]) -> None:
    st.header("What if the confirmed ones are fixed")
    if not confirmed:
        st.info("Confirm suspects above: their fixes make the cleaned ground truth.")
        return
    if st.button(f"Write the cleaned ground truth ({fixes(len(confirmed))}) and re-rank",
                 key="audit_what_if"):
        try:
            st.session_state["_audit_what_if"] = audit_data.what_if(run.gt, preds, options,
                                                                   confirmed)
        except OVEarthInputError as err:
            st.error(views.md_text(str(err)))
    result = st.session_state.get("_audit_what_if")
    if result is None:
        return
    if not audit_data.still_current(result, confirmed):
        st.info("The confirmations changed since the cleaned ground truth was written: write "
                "it again to rank on them.")
        return
    st.success(f"Wrote {state.code(str(result.path))} ({fixes(result.fixed)}).")
    st.caption(ranking_caption(result))
    st.dataframe(ranking_rows(result.ranking), hide_index=True, key="audit_ranking",
                 height="content")
