"""The Audit page's data (issue 36): the consensus audit of the submissions of a folder,
each suspect's picture, decisions in the review sidecar, and "what if the confirmed
suspects are fixed" (the cleaned ground truth written, the submissions ranked on both).

The audit is cached by the files' keys (path, mtime, size...) and the options; the picture
by the suspect and the image's stamp. Writing and ranking run when the user asks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

from ovearth_core import review
from ovearth_core.analysis.leaderboard import evaluate_with
from ovearth_core.audit import audit
from ovearth_core.audit import fix as fix_
from ovearth_core.errors import OVEarthInputError, Problem
from ovearth_core.io import read_json
from ovearth_core.viz import audit as picture_
from ovearth_core.viz.images import load_region

from . import data

KIND_LABELS = {"missing": "missing label", "spurious": "spurious label",
               "shifted": "shifted label", "wrong_class": "wrong class"}


@dataclass(frozen=True)
class Audited:
    """The audit's result, or the problems that stopped it."""

    result: dict[str, Any] | None
    problems: tuple[Problem, ...] = ()


def audit_options(options: data.Options, modality: str) -> data.Options:
    """The sidebar's options for the audit: its task, thresholds and box format, one
    modality."""
    return replace(options, modalities=(modality,))


@st.cache_data(show_spinner=False, max_entries=8)
def audited(gt: data.FileKey, preds: tuple[data.FileKey, ...], options: data.Options
            ) -> Audited:
    """:func:`ovearth_core.audit.audit` of the submissions ``preds`` (bad input comes back
    as ``problems``, never raised)."""
    try:
        return Audited(audit(gt[0], [p[0] for p in preds], options))
    except OVEarthInputError as err:
        return Audited(None, tuple(err.problems))


@st.cache_data(show_spinner=False, max_entries=256)
def picture(images_dir: str, suspect_json: str, stamp: data.Stamp) -> np.ndarray:
    """The suspect's two panels (:func:`ovearth_core.viz.audit.suspect_picture`)."""
    suspect = json.loads(suspect_json)
    region = picture_.window(suspect)
    crop = load_region(images_dir, suspect["image_path"], int(suspect["width"]),
                       int(suspect["height"]), region)
    return picture_.suspect_picture(suspect, None if crop is None else crop.rgb, region)


def suspect_picture(images_dir: Path, suspect: dict[str, Any]) -> np.ndarray:
    return picture(str(images_dir), json.dumps(suspect, sort_keys=True),
                   data.image_stamp(images_dir, suspect["image_path"]))


def sidecar(gt: data.FileKey) -> Path:
    return review.sidecar_for(gt[0])


def decisions(gt: data.FileKey, task: str, suspects: list[dict[str, Any]]) -> dict[str, str]:
    """``{suspect key: "confirmed" | "rejected"}`` from the review sidecar."""
    return fix_.decisions(review.load_state(sidecar(gt)), task, suspects)


def decide(gt: data.FileKey, task: str, suspect: dict[str, Any], decision: str | None
           ) -> None:
    """Record a decision in the review sidecar (an error is shown, never raised)."""
    path = sidecar(gt)
    try:
        fix_.decide(path, task, suspect, decision, review.load_state(path))
    except OVEarthInputError as err:
        st.session_state["_audit_error"] = str(err)


@dataclass(frozen=True)
class WhatIf:
    """The cleaned ground truth written and the submissions ranked on both."""

    path: Path
    fixed: int
    ranking: dict[str, Any]
    skipped: tuple[str, ...]
    keys: tuple[str, ...]  # the confirmed suspects' keys, sorted


def what_if(gt: data.FileKey, preds: tuple[data.FileKey, ...], options: data.Options,
            confirmed: list[dict[str, Any]]) -> WhatIf:
    """Write the ground truth with the ``confirmed`` suspects fixed (confined to the ground
    truth's folder, atomic: all or nothing) and rank ``preds`` on the original and on it
    (through the result cache). Raises :class:`OVEarthInputError`."""
    modality = options.modalities[0]
    doc = fix_.cleaned(read_json(gt[0], "ground-truth"), options.task, modality, confirmed)
    path = fix_.write_cleaned(gt[0], doc, inputs=[p[0] for p in preds])
    store = data.result_cache()[0]
    paths = [p[0] for p in preds]
    before = evaluate_with(gt[0], paths, options, cache=store, board=True)
    after = evaluate_with(path, paths, options, cache=store, board=True)
    names, old, new, skipped = [], [], [], []
    for b, a in zip(before, after, strict=True):
        if b.result is None or a.result is None:
            skipped.append(b.name)
            continue
        names.append(b.name)
        old.append(b.result)
        new.append(a.result)
    return WhatIf(Path(path), len(confirmed), fix_.rerank(names, old, new), tuple(skipped),
                  tuple(sorted(fix_.suspect_key(s) for s in confirmed)))


def still_current(result: WhatIf, confirmed: list[dict[str, Any]]) -> bool:
    """Whether ``result`` was written from exactly the ``confirmed`` suspects (a ranking on
    other confirmations is not shown as theirs)."""
    return result.keys == tuple(sorted(fix_.suspect_key(s) for s in confirmed))


def confirmed(suspects: list[dict[str, Any]], decided: dict[str, str]) -> list[dict[str, Any]]:
    """The suspects confirmed in ``decided`` (:func:`decisions`), in the suspects' order."""
    return [s for s in suspects if decided.get(fix_.suspect_key(s)) == "confirmed"]


def summary(result: dict[str, Any], decided: dict[str, str]) -> str:
    """The page's caption over the suspects: how many of each kind (every kind named, zero
    too), from how many submissions, how many decided."""
    suspects = result["suspects"]
    counts = ", ".join(f"{sum(s['kind'] == k for s in suspects)} {label}"
                       for k, label in KIND_LABELS.items())
    return (f"{len(suspects)} suspects ({counts}) from {len(result['submissions'])} "
            f"submissions · {len(decided)} decided · how the score is made: docs/audit.md")
