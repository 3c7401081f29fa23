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
import re
from collections.abc import Mapping, Sequence
from typing import Any

# Characters YAML does not allow in a document (outside its "printable" set) or reads as line
# breaks (NEL, LS, PS) or a byte-order mark, written as escapes; JSON's escapes cover the C0
# controls.
_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


_BARE_KEY = re.compile("[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = {"true", "false", "yes", "no", "on", "off", "y", "n", "null"}  # YAML 1.1's


def _quoted(text: str) -> str:
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}",
                            json.dumps(text, ensure_ascii=False))


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
        mantissa, e, exponent = repr(value).partition("e")
        # YAML 1.1 (PyYAML) reads a float only with a dot: 1e+20 would be a string.
        return mantissa + ("" if "." in mantissa else ".0") + e + exponent
    if isinstance(value, str):
        return _quoted(value)
    raise TypeError(f"cannot write a {type(value).__name__} in YAML here")


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"mapping keys must be strings, found {type(key).__name__}")
    bare = _BARE_KEY.fullmatch(key) and key.lower() not in _KEYWORDS
    return key if bare else _quoted(key)


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
