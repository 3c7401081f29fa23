"""The one stand-in for the ``streamlit`` module in in-process tests of the app's drawing
functions (issue 47: mutmut runs every mutant through the tests that call its function, too
slowly for AppTest runs).

:func:`install` replaces ``module.st`` by a :class:`Recorder` whose ``session_state`` is
also Streamlit's (so the helpers of ``pages/common/state.py``, ``state.bind`` among them,
read and write the same dict through their own ``st``). Every ``st.<name>(...)`` call,
``st.column_config.NumberColumn(...)`` too, is kept in ``calls`` as a :class:`Call`: its
name, arguments and ``where``, the containers it was drawn in, outermost first (``()`` the
page, ``("col1", "popover")`` a popover of the second column). As in Streamlit, a
container's own calls (``cols[0].pills(...)``) land in it, and the module's calls made
while a container is entered (``with st.expander(...):``) land in that one.

What a call returns: ``st.columns(n)`` (or a list of widths) that many containers
``col0``, ``col1``...; ``st.stop()`` raises :class:`Stopped`; a widget answers
``answers[key]`` (its ``key=``) or else ``answers[label]`` (its first argument) when the
test set one; a button not answered is not clicked (``False``); anything else returns a
:class:`Made`, the container the call opened (``st.container``, ``st.popover``,
``st.expander``, ``st.spinner``, ``st.progress``...), a context manager whose own calls
land in it, equal to the :class:`Call` that made it (``st.column_config.NumberColumn``'s
result compares with ``Call("column_config.NumberColumn", (), {"format": "%.3f"})``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
import streamlit


class Stopped(Exception):
    """``st.stop()`` was called: the rest of the script does not run."""


@dataclass
class Call:
    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    where: tuple[str, ...] = ()

    @property
    def first(self) -> Any:
        """The first positional argument (the text of a caption, the label of a widget)."""
        return self.args[0] if self.args else None


class Container:
    """A place on the page (a column, or what a call opened): its own calls land in it, and
    so do the module's calls made while it is entered (``with``)."""

    def __init__(self, recorder: Recorder, where: tuple[str, ...]) -> None:
        self._recorder, self.where = recorder, where

    def __enter__(self) -> Container:
        self._recorder.within.append(self.where)
        return self

    def __exit__(self, *exc: object) -> None:
        self._recorder.within.pop()

    def __getattr__(self, name: str) -> _Function:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Function(self._recorder, name, self.where)


class Made(Container):
    """What a call returned when it is not a widget's answer: the container it opened,
    equal to its :class:`Call`."""

    def __init__(self, recorder: Recorder, call: Call) -> None:
        super().__init__(recorder, (*call.where, call.name))
        self.call = call

    def __eq__(self, other: object) -> bool:
        return self.call == (other.call if isinstance(other, Made) else other)

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"Made({self.call!r})"


class _Function:
    """``st.<name>`` (or ``st.<name>.<attr>``), drawn in ``where`` (``None``: where the
    module's calls land now)."""

    def __init__(self, recorder: Recorder, name: str, where: tuple[str, ...] | None) -> None:
        self._recorder, self._name, self._where = recorder, name, where

    def __getattr__(self, name: str) -> _Function:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Function(self._recorder, f"{self._name}.{name}", self._where)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        rec = self._recorder
        call = Call(self._name, args, kwargs, rec.where if self._where is None else self._where)
        rec.calls.append(call)
        if call.name == "stop":
            raise Stopped
        if call.name == "columns":
            spec = args[0]
            n = spec if isinstance(spec, int) else len(spec)
            return [Container(rec, (*call.where, f"col{k}")) for k in range(n)]
        key = kwargs.get("key")
        if isinstance(key, str) and key in rec.answers:
            return rec.answers[key]
        if isinstance(call.first, str) and call.first in rec.answers:
            return rec.answers[call.first]
        if call.name == "button":
            return False
        return Made(rec, call)


@dataclass(eq=False)
class Recorder:
    """A stand-in for ``st`` (module docstring): ``answers`` are the widgets' answers the
    test sets, by key or label; ``within`` the containers entered, innermost last."""

    session_state: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    within: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def where(self) -> tuple[str, ...]:
        """Where a module call lands now: the innermost container entered, else the page."""
        return self.within[-1] if self.within else ()

    def __getattr__(self, name: str) -> _Function:
        if name.startswith("_"):
            raise AttributeError(name)
        return _Function(self, name, None)

    def named(self, *names: str) -> list[Call]:
        """The calls of these names, in order."""
        return [c for c in self.calls if c.name in names]

    def one(self, name: str) -> Call:
        """The only call of this name."""
        (call,) = self.named(name)
        return call

    def texts(self, name: str) -> list[Any]:
        """The first argument of every call of this name."""
        return [c.first for c in self.named(name)]

    def arguments(self, name: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        """The arguments ``(args, kwargs)`` of every call of this name."""
        return [(c.args, c.kwargs) for c in self.named(name)]

    def order(self) -> list[str]:
        """The names of the calls, in order."""
        return [c.name for c in self.calls]


def install(monkeypatch: pytest.MonkeyPatch, module: Any,
            session: dict[str, Any] | None = None,
            answers: dict[str, Any] | None = None) -> Recorder:
    """Replace ``module.st`` by a recorder whose ``session_state`` (``session``, else
    empty) is also Streamlit's, its widgets answering ``answers``."""
    recorder = Recorder(session if session is not None else {}, dict(answers or {}))
    monkeypatch.setattr(module, "st", recorder)
    monkeypatch.setattr(streamlit, "session_state", recorder.session_state)
    return recorder
