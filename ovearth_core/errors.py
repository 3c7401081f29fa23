"""The project's own exception for bad input, with structured problems.

Every problem names the file, the query_id (when there is one), the field, what
was expected and what was found, so that a user can fix a file without reading
our code. Loaders collect problems and raise once, showing at most
``MAX_REPORTED`` of them together with the total count.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from typing import Any

MAX_REPORTED = 20


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file."""

    file: str
    field: str
    expected: str
    found: str
    query_id: str | None = None
    line: int | None = None  # 1-based, for text inputs (the converters' sources)

    def __str__(self) -> str:
        where = f"{self.file}"
        if self.line is not None:
            where += f", line {self.line}"
        if self.query_id is not None:
            where += f", query_id {self.query_id}"
        return f"{where}, field {self.field}: expected {self.expected}, found {self.found}"


class OVEarthInputError(ValueError):
    """Raised for invalid ground truth, predictions or options.

    ``problems`` holds every problem found (not only the ones in the message), or the
    first of them when ``total`` (the count found) is larger.
    """

    def __init__(self, problems: list[Problem], total: int | None = None):
        self.problems = list(problems)
        self.total = max(len(self.problems), total or 0)
        super().__init__(format_problems(self.problems, self.total))

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by its problems (a worker process sends it back whole), not by its
        # message: ValueError's default would rebuild it from the message's characters.
        return type(self), (self.problems, self.total)


def format_problems(problems: list[Problem], total: int | None = None) -> str:
    """Render problems as a message: a count line, then up to MAX_REPORTED lines."""
    total = max(len(problems), total or 0)
    head = f"{total} problem{'s' if total != 1 else ''} found in the input"
    if total > MAX_REPORTED:
        head += f" (showing the first {MAX_REPORTED})"
    lines = [head + ":"] + [f"  - {p}" for p in problems[:MAX_REPORTED]]
    return "\n".join(lines)


class ProblemCollector:
    """Accumulates problems for one file; raise them all at the end."""

    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []

    def add(self, field: str, expected: str, found: object, query_id: str | None = None) -> None:
        self.problems.append(Problem(self.file, field, expected, describe(found), query_id))

    def raise_if_any(self) -> None:
        if self.problems:
            raise OVEarthInputError(self.problems)


def describe(value: object, limit: int = 60) -> str:
    """Short, type-revealing description of a JSON value for error messages."""
    if isinstance(value, str) and value.startswith("<") and value.endswith(">"):
        return value[1:-1]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        kind = "list" if isinstance(value, list) else "object"
        text = _preview(value)
        if len(text) > limit:
            text = text[: limit - 3] + "..."
        return f"{kind} {text}"
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(value).__name__} {text}"


# ``repr`` of a JSON value, bounded in depth and width (the standard library's reprlib):
# ``repr`` itself recurses without limit (RecursionError on the deep nesting that JSON
# parsers accept) and renders every element of a huge list.
_PREVIEW = reprlib.Repr()
_PREVIEW.maxlevel, _PREVIEW.maxlist, _PREVIEW.maxdict = 4, 8, 8
_PREVIEW.maxstring = _PREVIEW.maxother = _PREVIEW.maxlong = 80
_preview = _PREVIEW.repr
