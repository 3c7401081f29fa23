"""The app's run: one evaluation with what a page needs around it (its own module, so that
view modules import the type without importing the sidebar)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ovearth_core.results import Results, RunConfig

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
    def view(self) -> Results:
        """The evaluation's results, typed (what pages read)."""
        return self.evaluation.view

    @property
    def config(self) -> RunConfig:
        """The options the evaluator actually ran with (``view.config``)."""
        return self.evaluation.view.config

    @property
    def not_submitted(self) -> tuple[str, ...]:
        """The enabled modalities the submission has no prediction of."""
        return self.evaluation.view.coverage.not_submitted_modalities


_CURRENT = threading.local()  # a session's script run (app.py, then its page) is one thread
APP = Path(__file__).resolve().parents[2] / "app.py"


@contextmanager
def framing(run: Run) -> Iterator[None]:
    """app.py's evaluation, for the page it runs inside (see :func:`current`)."""
    _CURRENT.run = run
    try:
        yield
    finally:
        _CURRENT.run = None


def current() -> Run:
    """The run app.py evaluated for the page being drawn (app.py draws the sidebar and
    evaluates once, then runs the page; a page never evaluates the sidebar again)."""
    run = getattr(_CURRENT, "run", None)
    if run is None:
        raise RuntimeError("A page of the app runs inside app.py: streamlit run app.py")
    return run


def in_frame(main: Callable[[], None]) -> None:
    """A page file's last line: ``main()`` inside app.py's frame. A freshly started server
    runs a page file alone (no app.py) when its first session opens the page's URL
    (pages/common/nav.py); the page then runs app.py, whose ``st.navigation`` draws the
    sidebar, evaluates and runs this page again inside the frame, and stops there."""
    if getattr(_CURRENT, "run", None) is not None:
        main()
        return
    import runpy

    import streamlit as st

    runpy.run_path(str(APP), run_name="__main__")
    st.stop()
