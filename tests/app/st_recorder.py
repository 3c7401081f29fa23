"""A stand-in for the ``streamlit`` module where a page function draws widgets (issue 47:
the page's rules called in-process in milliseconds, where an AppTest run takes seconds).

``Recorder`` records every ``st.<name>(...)`` call as a :class:`Call` (name, arguments and
the containers it was drawn in: ``("column 1", "popover")``); ``st.columns`` returns that
many containers, ``st.popover`` / ``st.expander`` / ``st.container`` a context manager, and
a container's own calls (``cols[0].pills(...)``) are recorded inside it. ``session_state``
is a plain dict (:func:`install` makes it Streamlit's too, for the helpers of
``pages/common/state.py`` that read it through their own ``st``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
import streamlit


@dataclass
class Call:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    where: tuple[str, ...] = ()


class Area:
    """A container (column, popover, expander): calls on it are recorded inside it, and
    so are the module's calls made while it is entered (``with``)."""

    def __init__(self, recorder: Recorder, label: str):
        self._recorder, self._label = recorder, label

    def __enter__(self) -> Area:
        self._recorder.stack.append(self._label)
        return self

    def __exit__(self, *exc: object) -> None:
        self._recorder.stack.pop()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._recorder.caller(name, (self._label,))


@dataclass
class Recorder:
    session_state: dict[str, Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)

    def caller(self, name: str, inside: tuple[str, ...] = ()) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            where = (*self.stack, *inside)
            self.calls.append(Call(name, args, kwargs, where))
            if name == "columns":
                spec = args[0]
                n = spec if isinstance(spec, int) else len(spec)
                return [Area(self, f"column {k}") for k in range(n)]
            return Area(self, " ".join((*inside, name)))
        return call

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.caller(name)

    def named(self, *names: str) -> list[Call]:
        """The calls of these names, in order."""
        return [c for c in self.calls if c.name in names]

    def one(self, name: str) -> Call:
        (call,) = self.named(name)
        return call


def install(monkeypatch: pytest.MonkeyPatch, module: Any,
            session: dict[str, Any] | None = None) -> Recorder:
    """Replace ``module.st`` by a recorder whose ``session_state`` is also Streamlit's."""
    recorder = Recorder(session if session is not None else {})
    monkeypatch.setattr(module, "st", recorder)
    monkeypatch.setattr(streamlit, "session_state", recorder.session_state)
    return recorder
