"""Streamlit replaced by a recorder, for calling a page's render functions in-process
(issue 47: mutmut runs every mutant through the tests that call its function, too slowly
for AppTest runs). ``Recorder`` stands for the ``st`` module and for each container it
hands out (a column, a container): every call is logged as a :class:`Call` with where it
was made (``"page"``, ``"page/box"``, ``"page/box/col1"``...), widgets return the values a
test sets, ``st.stop()`` raises :class:`Stopped` as Streamlit's does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Stopped(Exception):
    """``st.stop()`` was called: the rest of the script does not run."""


@dataclass
class Call:
    where: str
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    @property
    def first(self) -> Any:
        """The first positional argument (the text of a caption, the label of a widget)."""
        return self.args[0] if self.args else None


@dataclass
class Script:
    """What a run of the recorder saw and what its widgets answer: ``clicked`` button keys
    (or labels) return ``True``; ``values`` answer other widgets by label."""

    calls: list[Call] = field(default_factory=list)
    clicked: set[str] = field(default_factory=set)
    values: dict[str, Any] = field(default_factory=dict)
    session_state: dict[str, Any] = field(default_factory=dict)
    within: list[str] = field(default_factory=list)  # the containers entered (``with``)

    def named(self, name: str, where: str | None = None) -> list[Call]:
        return [c for c in self.calls if c.name == name and (where is None or c.where == where)]

    def texts(self, name: str) -> list[Any]:
        return [c.first for c in self.named(name)]

    def order(self) -> list[str]:
        return [c.name for c in self.calls]


class Recorder:
    """A stand-in for ``st`` or one of its containers (module docstring)."""

    def __init__(self, script: Script | None = None, where: str = "page") -> None:
        self._script = script if script is not None else Script()
        self._where = where

    @property
    def script(self) -> Script:
        return self._script

    @property
    def session_state(self) -> dict[str, Any]:
        return self._script.session_state

    @property
    def where(self) -> str:
        """Where a call lands: a container's own place; for ``st`` itself the innermost
        container entered with ``with`` (as Streamlit's), else the page."""
        if self._where == "page" and self._script.within:
            return self._script.within[-1]
        return self._where

    def _log(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self._script.calls.append(Call(self.where, name, args, kwargs))

    def _child(self, kind: str) -> Recorder:
        return Recorder(self._script, f"{self.where}/{kind}")

    def __enter__(self) -> Recorder:
        self._script.within.append(self.where)
        return self

    def __exit__(self, *exc: object) -> bool:
        self._script.within.pop()
        return False

    def container(self, *args: Any, **kwargs: Any) -> Recorder:
        self._log("container", args, kwargs)
        return self._child("box")

    def spinner(self, *args: Any, **kwargs: Any) -> Recorder:
        self._log("spinner", args, kwargs)
        return self._child("spinner")

    def columns(self, spec: Any, *args: Any, **kwargs: Any) -> list[Recorder]:
        self._log("columns", (spec, *args), kwargs)
        count = spec if isinstance(spec, int) else len(spec)
        return [Recorder(self._script, f"{self.where}/col{i}") for i in range(count)]

    def button(self, label: str, *args: Any, **kwargs: Any) -> bool:
        self._log("button", (label, *args), kwargs)
        return kwargs.get("key") in self._script.clicked or label in self._script.clicked

    def stop(self) -> None:
        self._log("stop", (), {})
        raise Stopped

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self._log(name, args, kwargs)
            return self._script.values.get(args[0]) if args and isinstance(args[0], str) else None

        return call
