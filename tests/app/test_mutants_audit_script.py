"""The Audit page itself (pages/Audit.py: ``inputs_ui`` and ``main``), called in-process
with Streamlit replaced by a recorder (tests/st_recorder.py) and the functions it
wires together by stand-ins that record what they were given (issue 47: the page's only
tests were AppTest runs, too slow for mutmut). Each test states a wiring rule: which
widget feeds which step, which suspects are drawn with which decision, what stops the page
and what it shows then (text from the files as text, never Markdown)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import st_recorder
from markdown_tokens import tokens
from st_recorder import Recorder, Stopped

from ovearth_core.audit import MODALITIES
from ovearth_core.audit.fix import suspect_key
from ovearth_core.errors import Problem
from ovearth_core.options import Options
from pages.common import analysis_data, analysis_views, audit_data, audit_views, views
from pages.common import run as run_

HOSTILE = "[click](https://evil.example/x) **b** <img src=x onerror=alert(1)>"
ACTIVE = {"link_open", "image", "html_inline", "html_block", "em_open", "strong_open"}


def _page() -> ModuleType:
    """pages/Audit.py imported without drawing it (its last line, ``in_frame(main)``, is
    made a no-op while it is imported)."""
    if "pages.Audit" in sys.modules:
        return sys.modules["pages.Audit"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(run_, "in_frame", lambda main: None)
        return importlib.import_module("pages.Audit")


def _plain(markdown: str) -> list[str]:
    """The lines a reader sees of ``markdown`` (text of paragraphs and list items)."""
    seen = []
    for t in tokens(markdown):
        if t.type in ("text", "code_inline"):
            seen.append(t.content)
        elif t.type in ("softbreak", "hardbreak", "paragraph_close"):
            seen.append("\n")
    return "".join(seen).strip("\n").replace("\u2060", "").splitlines()


class _State:
    """``pages.common.state`` as the page uses it: ``bind`` says what it bound, the URL
    written is recorded."""

    def __init__(self) -> None:
        self.synced: list[dict[str, str]] = []

    def bind(self, name: str, options: Any = None) -> dict[str, Any]:
        return {"key": f"_w_{name}", "on_change": ("bound", name, options)}

    def audit_params(self) -> dict[str, str]:
        return {"audgeo": "oriented_bbox", "audn": "3"}

    def sync_url(self, **page: str) -> None:
        self.synced.append(page)


RUN = SimpleNamespace(gt=("/b/gt.json", 1, 2, 3, 4), images_dir=Path("/b/images"),
                      options=Options("referring", ("auto",), iou_threshold=0.7))
KEYS = (("/b/p/a.json", 1, 1, 1, 1), ("/b/p/b.json", 2, 2, 2, 2), ("/b/p/c.json", 3, 3, 3, 3))


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, Recorder, _State]:
    module = _page()
    st = st_recorder.install(monkeypatch, module,
                             answers={"Geometry audited": "bbox", "Suspects shown": 10})
    state = _State()
    monkeypatch.setattr(module, "state", state)
    return module, st, state


# ---- the inputs ----------------------------------------------------------------------------

@pytest.fixture
def folder(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The folder field and the folder's listing replaced: what they were asked and give."""
    seen: dict[str, Any] = {"folder": Path("/b/p"), "keys": KEYS, "refused": ()}

    def field(run: Any, label: str, name: str, column: Any) -> Path | None:
        seen["field"] = (run, label, name, column.where)
        return seen["folder"]

    def listing(path: Path) -> Any:
        seen["listed"] = path
        return SimpleNamespace(keys=seen["keys"], refused=seen["refused"])

    monkeypatch.setattr(analysis_views, "submissions_folder_ui", field)
    monkeypatch.setattr(analysis_data, "prediction_files", listing)
    monkeypatch.setattr(analysis_views, "refused_ui",
                        lambda listed: seen.setdefault("warned", []).append(listed.refused))
    return seen


def test_the_inputs_feed_folder_geometry_and_count(
        page: tuple[ModuleType, Recorder, _State], folder: dict[str, Any]) -> None:
    """Rule (wiring): three columns 3:2:1; the first holds the submissions folder (its
    label says every JSON votes; session key ``audit_folder``), whose files are listed and
    become the submissions; the second the geometry audited, one of the audit's modalities,
    horizontal, bound to ``audit_modality`` restricted to them; the third how many suspects
    are shown, 1 to 200, bound to ``audit_shown``, returned as a whole number; the page's
    parameters are written into the URL."""
    module, script, state = page
    script.answers.update({"Geometry audited": "oriented_bbox", "Suspects shown": 7.0})
    preds, modality, shown = module.inputs_ui(RUN)
    assert (preds, modality, shown) == (KEYS, "oriented_bbox", 7)
    assert type(shown) is int
    assert script.named("columns")[0].args == ([3, 2, 1],)
    assert folder["field"] == (RUN, "Submissions folder (every *.json in it votes)",
                               "audit_folder", ("col0",))
    assert folder["listed"] == Path("/b/p")
    (radio,) = script.named("radio")
    assert radio.where == ("col1",)
    assert radio.args == ("Geometry audited", MODALITIES)
    assert radio.kwargs == {"horizontal": True, "key": "_w_audit_modality",
                            "on_change": ("bound", "audit_modality", MODALITIES)}
    (count,) = script.named("number_input")
    assert count.where == ("col2",)
    assert count.args == ("Suspects shown", 1, 200)
    assert count.kwargs == {"key": "_w_audit_shown",
                            "on_change": ("bound", "audit_shown", None)}
    assert state.synced == [{"audgeo": "oriented_bbox", "audn": "3"}]
    assert script.named("stop") == []


def test_refused_files_are_named_and_the_rest_vote(
        page: tuple[ModuleType, Recorder, _State], folder: dict[str, Any]) -> None:
    """Rule: the files the gate refused are warned about (``refused_ui``), the accepted
    ones are the submissions."""
    module, script, _ = page
    folder["refused"] = (("evil", "expected a file, found a link"),)
    preds, _, _ = module.inputs_ui(RUN)
    assert folder["warned"] == [(("evil", "expected a file, found a link"),)]
    assert preds == KEYS


@pytest.mark.parametrize(("keys", "stops"), [(KEYS[:2], False), (KEYS[:1], True), ((), True)])
def test_two_submissions_are_the_fewest_audited(
        page: tuple[ModuleType, Recorder, _State], folder: dict[str, Any], keys: tuple,
        stops: bool) -> None:
    """Rule: a consensus needs two submissions: with fewer the page says so (the pattern
    escaped: ``\\*.json``) and stops; with exactly two it goes on."""
    module, script, _ = page
    folder["keys"] = keys
    if not stops:
        assert module.inputs_ui(RUN)[0] == keys
        assert script.named("info") == []
        return
    with pytest.raises(Stopped):
        module.inputs_ui(RUN)
    assert script.texts("info") == [
        "Type a folder that holds at least two submissions (\\*.json)."]
    assert script.order()[-2:] == ["info", "stop"]


def test_no_folder_lists_nothing_and_stops(
        page: tuple[ModuleType, Recorder, _State], folder: dict[str, Any]) -> None:
    """Rule: when there is no folder to read (outside the data roots, none typed and no
    predictions/ beside the ground truth) nothing is listed and the page stops with the
    same request."""
    module, script, _ = page
    folder["folder"] = None
    with pytest.raises(Stopped):
        module.inputs_ui(RUN)
    assert "listed" not in folder and "warned" not in folder
    assert script.order()[-2:] == ["info", "stop"]


# ---- the page --------------------------------------------------------------------------

def _suspect(rank: int, kind: str = "missing") -> dict[str, Any]:
    return {"query_id": f"q{rank}", "kind": kind, "bbox": [rank, 0.0, 5.0, 5.0],
            "gt_bbox": None, "category": "plane", "rank": rank}


SUSPECTS = [_suspect(1), _suspect(2, "spurious"), _suspect(3, "shifted"), _suspect(4)]


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch, page: tuple[ModuleType, Recorder, _State]
          ) -> dict[str, Any]:
    """The page's steps replaced by recorders: ``inputs_ui`` gives three submissions, the
    oriented boxes and 2 shown; ``audited`` gives ``seen["audited"]``; decisions: suspect 1
    confirmed, 2 rejected, 4 confirmed."""
    module, _, _ = page
    seen: dict[str, Any] = {"calls": [], "result": {
        "suspects": SUSPECTS, "submissions": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "warnings": []}}
    seen["decided"] = {suspect_key(SUSPECTS[0]): "confirmed",
                       suspect_key(SUSPECTS[1]): "rejected",
                       suspect_key(SUSPECTS[3]): "confirmed"}

    def log(name: str, value: Any = None) -> Any:
        def call(*args: Any) -> Any:
            seen["calls"].append((name, args))
            return value() if callable(value) else value
        return call

    monkeypatch.setattr(module, "current", log("current", RUN))
    monkeypatch.setattr(views, "evaluated_caption", log("evaluated_caption"))
    monkeypatch.setattr(module, "inputs_ui", log("inputs_ui", (KEYS, "oriented_bbox", 2)))
    monkeypatch.setattr(audit_data, "audited",
                        log("audited", lambda: audit_data.Audited(seen["result"],
                                                                  seen.get("problems", ()))))
    monkeypatch.setattr(audit_data, "decisions", log("decisions", lambda: seen["decided"]))
    monkeypatch.setattr(audit_views, "suspect_ui", log("suspect_ui"))
    monkeypatch.setattr(audit_views, "what_if_ui", log("what_if_ui"))
    return seen


def _calls(seen: dict[str, Any], name: str) -> list[tuple[Any, ...]]:
    return [args for n, args in seen["calls"] if n == name]


def test_the_page_audits_the_folder_with_the_geometry_chosen(
        page: tuple[ModuleType, Recorder, _State], steps: dict[str, Any]) -> None:
    """Rule (wiring): the page first says which files were evaluated (the run's caption),
    then audits the run's ground truth with the folder's submissions, under the sidebar's
    options narrowed to the geometry chosen (its task and IoU threshold kept), saying how
    many submissions it is auditing with while it runs."""
    module, script, _ = page
    module.main()
    assert [n for n, _ in steps["calls"]][:3] == ["current", "evaluated_caption", "inputs_ui"]
    assert _calls(steps, "evaluated_caption") == [(RUN,)]
    assert _calls(steps, "inputs_ui") == [(RUN,)]
    ((gt, preds, options),) = _calls(steps, "audited")
    assert (gt, preds) == (RUN.gt, KEYS)
    assert options == Options("referring", ("oriented_bbox",), iou_threshold=0.7)
    (spinner,) = script.named("spinner")
    assert spinner.first == "Auditing with 3 submissions…"


def test_the_first_suspects_are_drawn_with_their_own_decisions(
        page: tuple[ModuleType, Recorder, _State], steps: dict[str, Any]) -> None:
    """Rule: the decisions are read from the run's ground truth's sidecar under the run's
    task for the audit's suspects; the caption counts them; the first ``shown`` suspects
    (2 here) are drawn in rank order, each with its own decision (``None``: undecided);
    every confirmed suspect, drawn or not (the 4th is not), makes the what-if, with the
    same submissions and options as the audit."""
    module, script, _ = page
    module.main()
    assert _calls(steps, "decisions") == [(RUN.gt, "referring", SUSPECTS)]
    assert script.texts("caption") == [audit_data.summary(steps["result"],
                                                          steps["decided"])]
    assert _calls(steps, "suspect_ui") == [(RUN, SUSPECTS[0], "confirmed"),
                                           (RUN, SUSPECTS[1], "rejected")]
    ((run, preds, options, confirmed),) = _calls(steps, "what_if_ui")
    assert (run, preds, confirmed) == (RUN, KEYS, [SUSPECTS[0], SUSPECTS[3]])
    assert options == _calls(steps, "audited")[0][2]
    assert [n for n, _ in steps["calls"]][-1] == "what_if_ui"


def test_an_audit_that_could_not_run_shows_its_problems_as_text_and_stops(
        page: tuple[ModuleType, Recorder, _State], steps: dict[str, Any]) -> None:
    """Rule: bad input stops the page with one error listing every problem, one a line,
    their text from the files as text (no link, emphasis or HTML); nothing is drawn after
    it."""
    module, script, _ = page
    steps["result"] = None
    steps["problems"] = (Problem(f"/b/p/{HOSTILE}.json", "bbox", "4 numbers", "3", "q1"),
                         Problem("/b/gt.json", "tasks", "an object", "a list"))
    with pytest.raises(Stopped):
        module.main()
    (error,) = script.texts("error")
    assert not [t.type for t in tokens(error) if t.type in ACTIVE]
    assert _plain(error) == [str(p) for p in steps["problems"]]
    assert script.order()[-2:] == ["error", "stop"]
    assert _calls(steps, "decisions") == [] and _calls(steps, "what_if_ui") == []


def test_a_decision_refused_on_the_last_click_is_shown_once_as_text(
        page: tuple[ModuleType, Recorder, _State], steps: dict[str, Any]) -> None:
    """Rule: a decision the sidecar refused in a button's callback (``_audit_error``, set
    by ``audit_data.decide``) is shown as an error on the next run, as text, and only once
    (taken out of the session)."""
    module, script, _ = page
    script.session_state["_audit_error"] = f"cannot write {HOSTILE}/review.jsonl"
    module.main()
    (error,) = script.texts("error")
    assert not [t.type for t in tokens(error) if t.type in ACTIVE]
    assert _plain(error) == [f"cannot write {HOSTILE}/review.jsonl"]
    assert "_audit_error" not in script.session_state
    script.calls.clear()
    module.main()
    assert script.named("error") == []


def test_each_warning_of_the_audit_is_shown_as_text(
        page: tuple[ModuleType, Recorder, _State], steps: dict[str, Any]) -> None:
    """Rule: every warning of the audit (they quote the files) is shown, as text."""
    module, script, _ = page
    steps["result"]["warnings"] = [{"message": f"{HOSTILE} has no score"},
                                   {"message": "second"}]
    module.main()
    shown = script.texts("warning")
    assert [_plain(w) for w in shown] == [[f"{HOSTILE} has no score"], ["second"]]
    assert not [t.type for w in shown for t in tokens(w) if t.type in ACTIVE]
