"""The app's run: one evaluation with what a page needs around it (its own module, so that
view modules import the type without importing the sidebar)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from . import data


@dataclass(frozen=True)
class Run:
    """What a page needs: the evaluation, its options and where the images are."""

    evaluation: data.Evaluation
    options: data.Options
    gt: data.FileKey
    pred: data.FileKey
    images_dir: Path
    submission_name: str
    gt_label: str  # the evaluated files as the captions name them: path and SHA-256 prefix
    pred_label: str

    @property
    def config(self) -> dict[str, object]:
        """The options the evaluator actually ran with (``results["config"]``)."""
        return self.evaluation.results["config"]

    @property
    def not_submitted(self) -> list[str]:
        return self.evaluation.results["coverage"]["not_submitted_modalities"]


_CURRENT = threading.local()  # a session's script run (app.py, then its page) is one thread


def set_current(run: Run) -> None:
    """app.py's evaluation for the page it runs next (see :func:`current`)."""
    _CURRENT.run = run


def current() -> Run:
    """The run app.py evaluated for the page being drawn (app.py draws the sidebar and
    evaluates once, then runs the page; a page never evaluates the sidebar again)."""
    run = getattr(_CURRENT, "run", None)
    if run is None:
        raise RuntimeError("A page of the app runs inside app.py: streamlit run app.py")
    return run
