"""A stand-in for ``streamlit`` in direct tests of the app's drawing functions (issue 47:
AppTest runs are too slow for mutation testing): every call is kept with its arguments, in
order, and ``st.stop()`` raises :class:`Stopped` as Streamlit's does."""

from __future__ import annotations

import dataclasses
from typing import Any


class Stopped(Exception):
    """``st.stop()`` was called."""


@dataclasses.dataclass
class Made:
    """What a recorded call returned (a widget, a container, a column configuration)."""

    path: str
    args: tuple
    kwargs: dict
    log: list | None = dataclasses.field(default=None, compare=False, repr=False)

    def __enter__(self) -> Made:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        """A container's own calls, recorded as ``"progress().progress"`` and so on."""
        if name.startswith("_") or self.log is None:
            raise AttributeError(name)
        return Recorder(self.log, f"{self.path}().{name}")


class Recorder:
    """``st.x.y(...)`` appends ``("x.y", args, kwargs)`` to ``log`` and returns
    ``returns["x.y"]`` when given, else a :class:`Made`; ``st.columns(n)`` (or a list of
    widths) returns recorders named ``col0``, ``col1``..."""

    def __init__(self, log: list[tuple[str, tuple, dict]], path: str = "",
                 returns: dict[str, Any] | None = None) -> None:
        self._log, self._path = log, path
        self._returns = {} if returns is None else returns

    def __getattr__(self, name: str) -> Recorder:
        return Recorder(self._log, f"{self._path}.{name}" if self._path else name,
                        self._returns)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._log.append((self._path, args, kwargs))
        if self._path == "stop":
            raise Stopped
        if self._path in self._returns:
            return self._returns[self._path]
        if self._path == "columns":
            n = args[0] if isinstance(args[0], int) else len(args[0])
            return [Recorder(self._log, f"col{i}", self._returns) for i in range(n)]
        return Made(self._path, args, kwargs, self._log)


def calls(log: list, path: str) -> list[tuple[tuple, dict]]:
    """The arguments of every recorded call of ``path``."""
    return [(a, k) for p, a, k in log if p == path]


def texts(log: list, path: str) -> list[str]:
    """The first argument of every recorded call of ``path``."""
    return [a[0] for p, a, _ in log if p == path]
