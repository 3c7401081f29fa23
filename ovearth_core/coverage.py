"""What a submission covers: prediction rows, task keys and modalities (warnings, not errors).

A missing prediction row is an empty prediction (the spec), and a modality the submission
never predicts scores 0 on every positive query: both are valid input, and both make numbers
that look like a bad model when the real cause is a file that does not hold what the run
asked for (195 of 3,235 rows; rows under a misspelled task key such as ``open_vocab``; a
box-only file evaluated for segmentation). The evaluator reports them beside the numbers, as
``coverage`` and ``warnings`` in its output; the CLI prints the warnings to stderr and the
exit status is unchanged.

``submitted_modalities`` are the modalities with at least one non-empty prediction in the
task's rows (the rule of ``--modalities auto``); an enabled modality outside them is *not
submitted*: the app and the report show "—" for it, never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .types import MODALITIES, Sample

FIRST_IDS = 10


def coverage(samples: Sequence[Sample], enabled: Sequence[str],
             submitted: Sequence[str] | None, unknown_task_keys: Sequence[str]) -> dict[str, Any]:
    """The ``coverage`` block of one task's results (JSON-ready).

    ``submitted`` is ``None`` for samples not read from a file (built in code): every
    enabled modality then counts as submitted and no row counts as missing.
    """
    if submitted is None:
        submitted, missing = enabled, []
    else:
        missing = [s.sample_id for s in samples if not s.has_prediction_row]
    return {
        "num_queries": len(samples),
        "num_with_prediction_row": len(samples) - len(missing),
        "num_missing_prediction_rows": len(missing),
        "first_missing_query_ids": missing[:FIRST_IDS],
        "unknown_task_keys": list(unknown_task_keys),
        "submitted_modalities": [m for m in MODALITIES if m in submitted],
        "not_submitted_modalities": [m for m in MODALITIES
                                     if m in enabled and m not in submitted],
    }


def warnings(cov: dict[str, Any], task_key: str) -> list[dict[str, Any]]:
    """Human-readable warnings for a ``coverage`` block: ``{"code", "message"}`` each."""
    out = []
    n, missing = cov["num_queries"], cov["num_missing_prediction_rows"]
    if missing:
        ids = ", ".join(cov["first_missing_query_ids"])
        more = " …" if missing > len(cov["first_missing_query_ids"]) else ""
        out.append({"code": "missing_prediction_rows",
                    "message": f"{missing:,} of {n:,} {task_key} queries have no prediction "
                               f"row (scored as empty predictions): {ids}{more}"})
    if cov["unknown_task_keys"]:
        keys = ", ".join(repr(k) for k in cov["unknown_task_keys"])
        out.append({"code": "unknown_task_keys",
                    "message": f"the prediction file has rows under unknown task keys {keys} "
                               "(ignored); the task keys are open_vocabulary, referring, "
                               "reasoning"})
    for m in cov["not_submitted_modalities"]:
        out.append({"code": "modality_not_submitted",
                    "message": f"the submission has no non-empty {m} prediction in the "
                               f"{task_key} task: {m} metrics are those of an empty "
                               "submission (shown as not submitted)"})
    return out
