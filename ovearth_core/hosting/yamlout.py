"""A small YAML writer for the platforms' configuration files (no YAML library at run time).

Mappings and lists in block style, every string double-quoted with JSON's escapes (a YAML
double-quoted scalar reads them the same), numbers and booleans bare, ``None`` as ``null``.
So no string can turn into a date, a number or a boolean (``"2026-01-01 00:00:00"`` stays a
string: Codabench parses phase dates from strings with ``dateutil``; ``"no"``, ``"1e3"``
stay strings). ``tests/core/test_hosting_yaml.py`` reads the output back with PyYAML.

>>> print(dump({"title": "A", "phases": [{"index": 0, "tasks": [0]}], "hidden": False}), end="")
title: "A"
phases:
  - index: 0
    tasks:
      - 0
hidden: false
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write {value!r} in YAML here")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"cannot write a {type(value).__name__} in YAML here")


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"mapping keys must be strings, found {type(key).__name__}")
    return json.dumps(key, ensure_ascii=False) if not key.isidentifier() else key


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "{}"]
        out = []
        for k, v in value.items():
            if _nested(v):
                inner = indent + 2 if isinstance(v, Mapping) else indent
                out += [f"{pad}{_key(k)}:", *_lines(v, inner)]
            else:
                out.append(f"{pad}{_key(k)}: {_inline(v)}")
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        if not value:
            return [pad + "[]"]
        out = []
        for item in value:
            if _nested(item):
                inner = _lines(item, indent + 4 if isinstance(item, Mapping) else indent + 2)
                out.append(f"{pad}  - {inner[0].lstrip()}")
                out += inner[1:]
            else:
                out.append(f"{pad}  - {_inline(item)}")
        return out
    return [pad + _scalar(value)]


def _nested(value: Any) -> bool:
    return (isinstance(value, (Mapping, Sequence)) and not isinstance(value, str)
            and len(value) > 0)


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "[]"
    return _scalar(value)


def dump(doc: Mapping[str, Any]) -> str:
    """``doc`` (a mapping of strings, numbers, booleans, ``None``, lists and mappings) as
    YAML text, one trailing newline."""
    return "\n".join(_lines(doc, 0)) + "\n"
