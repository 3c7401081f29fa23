"""OVEarth Inspector's evaluator for OVEarth-Bench (open vocabulary, referring, reasoning).

>>> from ovearth_core import evaluate_open_vocab
>>> from ovearth_core.io import load_open_vocab_samples

The names below are imported on first use (PEP 562), so that ``import ovearth_core`` and
``python -m ovearth_core --help`` load no numeric library.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "OVEarthInputError": ".errors",
    "evaluate_files": ".suite",
    "evaluate_open_vocab": ".evaluate",
    "evaluate_reasoning": ".evaluate",
    "evaluate_referring": ".evaluate",
    "evaluate_samples": ".evaluate",
    "gc_paused": ".gcpause",
}

__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
