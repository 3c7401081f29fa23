"""Where a document holds NaN, Infinity or a number beyond the double range.

Python's ``json.dump`` writes ``NaN``, ``Infinity`` and ``-Infinity`` by default
(``allow_nan=True``), and a number such as ``1e400`` overflows a double. None of them is
JSON and orjson refuses the whole document at the first one, naming only a character
offset ("line 1 column 191" of a one-line 6 MB file). When orjson fails,
:func:`locate_non_finite` parses the bytes a second time with the standard library,
which accepts them, and reports each one like any other bad value: the file, the
query_id of the row it is in, the field path (``tasks.open_vocabulary[3].bbox[0][2]``),
what was expected and the literal found. The second parse runs only on this error path.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from .errors import Problem

EXPECTED = ("a finite JSON number (NaN, Infinity and numbers beyond the double range, "
            "about 1.8e308, are not JSON: write them with json.dump(..., allow_nan=False) "
            "to catch them, or leave the value out)")
MAX_LOCATED = 1000  # problems kept (the count covers all)
_MAX_INT_DIGITS = 309  # a longer integer literal cannot be a finite double


@dataclass(frozen=True)
class _Literal:
    """A number literal that is not a finite double, as written in the file."""

    text: str


_WALKED = {dict, list, _Literal}  # plain numbers, strings and null are skipped


def _constant(text: str) -> _Literal:
    return _Literal(text)


def _float(text: str) -> float | _Literal:
    value = float(text)
    return value if math.isfinite(value) else _Literal(text)


def _int(text: str) -> int | _Literal:
    return _Literal(text) if len(text.lstrip("-")) >= _MAX_INT_DIGITS else int(text)


def locate_non_finite(data: bytes, name: str) -> tuple[list[Problem], int]:
    """The non-finite numbers of the JSON document ``data`` (read from file ``name``).

    Returns ``(problems, total)``: up to :data:`MAX_LOCATED` problems in document order
    and the total count; ``([], 0)`` when there are none or the document is not JSON
    even with them allowed (the caller then reports the parser's own message).
    """
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_constant, parse_float=_float,
                         parse_int=_int)
    except (ValueError, RecursionError):
        return [], 0
    problems: list[Problem] = []
    total = 0
    # Depth-first in document order, without recursion (JSON may nest 1,000 deep). ``level``
    # finds the rows: 0 the document, 1 its "tasks" object, 2 a task's list, 3 a row.
    stack: list[tuple[object, str, str | None, int]] = [(doc, "", None, 0)]
    while stack:
        value, where, query_id, level = stack.pop()
        if isinstance(value, _Literal):
            total += 1
            if len(problems) < MAX_LOCATED:
                problems.append(Problem(name, where or "(document)", EXPECTED,
                                        _found(value.text), query_id))
        elif isinstance(value, dict):
            if level == 3 and isinstance(value.get("query_id"), str):
                query_id = value["query_id"]
            prefix = f"{where}." if where else ""
            stack.extend((v, f"{prefix}{k}", query_id,
                          1 if level == 0 and k == "tasks" else 2 if level == 1 else -1)
                         for k, v in reversed(value.items()) if type(v) in _WALKED)
        elif isinstance(value, list):
            child = 3 if level == 2 else -1
            stack.extend((v, f"{where}[{i}]", query_id, child)
                         for i, v in reversed(list(enumerate(value))) if type(v) in _WALKED)
    return problems, total


def _found(text: str) -> str:
    if text in ("NaN", "Infinity", "-Infinity"):
        return text
    shown = text if len(text) <= 40 else f"{text[:20]}...{text[-12:]} ({len(text)} characters)"
    return f"{shown} (beyond the double range)"
