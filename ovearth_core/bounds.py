"""Numbers given by a user or the environment: one parser, with bounds (issue 35).

Every count, size, limit and offset that arrives as text (a command-line flag, an
environment variable, a number inside a chip's file name) is read here, so that each is
refused the same way: a ``ValueError`` naming what was read, the range allowed and what
was found, never an ``OverflowError``, a ``MemoryError`` later or an infinity taken as a
limit.

    >>> parse_int("2000", name="--resamples", low=1000, high=100_000)
    2000
    >>> parse_int("10**12", name="--resamples", low=1000, high=100_000)
    Traceback (most recent call last):
    ...
    ValueError: --resamples: expected a whole number from 1,000 to 100,000, found '10**12'
    >>> parse_float("inf", name="OVEARTH_MAX_INPUT_MB", low=0, high=1e6, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: OVEARTH_MAX_INPUT_MB: expected a number above 0 and at most 1e+06, found 'inf'

Text longer than :data:`MAX_CHARS` is refused before it is converted: Python turns
thousands of digits into an ``int`` in quadratic time (and refuses more than 4,300).
"""

from __future__ import annotations

import argparse
import math
import reprlib
from collections.abc import Callable

# No count, size or offset we read has more characters than this (1e400 has 5).
MAX_CHARS = 40
# The most bootstrap resamples or random subsets a command takes: each costs a pass over
# every unit (memory is bounded by chunks); beyond it a typo (10**12) runs for days.
MAX_RESAMPLES = 100_000
MAX_SEED = 2**32 - 1  # seeds as numpy's legacy and SeedSequence APIs both take them

_short = reprlib.Repr()
_short.maxstring = 40


def _found(text: object) -> str:
    return _short.repr(text)


def _int_range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"from {low:,} to {high:,}"
    if low is not None:
        return f"of at least {low:,}"
    return f"of at most {high:,}" if high is not None else ""


def parse_int(text: str | int, *, name: str, low: int | None = None,
              high: int | None = None) -> int:
    """``text`` as a whole number within ``[low, high]`` (either bound may be ``None``);
    ``ValueError`` naming ``name``, the range and what was found otherwise. Accepts the
    digits of a whole number only (an optional sign, ``_`` separators as Python does);
    ``"1e3"`` and ``"2.0"`` are refused, since a count is not a measurement."""
    expected = f"{name}: expected a whole number {_int_range(low, high)}".rstrip()
    if isinstance(text, bool):
        raise ValueError(f"{expected}, found {text!r}")
    if isinstance(text, int):
        value = text
    else:
        s = str(text).strip()
        if len(s) > MAX_CHARS:
            raise ValueError(f"{expected}, found a number of {len(s):,} characters")
        try:
            value = int(s, 10)
        except ValueError:
            raise ValueError(f"{expected}, found {_found(text)}") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{expected}, found {_found(text)}")
    return value


def parse_float(text: str | float, *, name: str, low: float | None = None,
                high: float | None = None, low_open: bool = False) -> float:
    """``text`` as a finite number within ``[low, high]`` (``(low, high]`` with
    ``low_open``); NaN and infinities are always refused."""
    parts = []
    if low is not None:
        parts.append(f"above {low:g}" if low_open else f"at least {low:g}")
    if high is not None:
        parts.append(f"at most {high:g}")
    expected = f"{name}: expected a number {' and '.join(parts)}".rstrip()
    if isinstance(text, bool):
        raise ValueError(f"{expected}, found {text!r}")
    if isinstance(text, (int, float)):
        value = float(text) if math.isfinite(text) else math.nan
    else:
        s = str(text).strip()
        if len(s) > MAX_CHARS:
            raise ValueError(f"{expected}, found a number of {len(s):,} characters")
        try:
            value = float(s)
        except ValueError:
            raise ValueError(f"{expected}, found {_found(text)}") from None
    if (not math.isfinite(value) or (low is not None and (value <= low if low_open
                                                            else value < low))
            or (high is not None and value > high)):
        raise ValueError(f"{expected}, found {_found(text)}")
    return value


def _argtype(parse: Callable[..., object], type_name: str,
             **bounds: object) -> Callable[[str], object]:
    def convert(text: str) -> object:
        try:
            return parse(text, name="value", **bounds)
        except ValueError as err:
            # argparse prefixes "argument --flag: "; the message says the rest.
            raise argparse.ArgumentTypeError(str(err).removeprefix("value: ")) from None

    convert.__name__ = type_name
    return convert


def int_arg(low: int | None = None, high: int | None = None) -> Callable[[str], object]:
    """An argparse ``type=`` for a whole number within ``[low, high]``."""
    return _argtype(parse_int, "whole number", low=low, high=high)


def float_arg(low: float | None = None, high: float | None = None,
              low_open: bool = False) -> Callable[[str], object]:
    """An argparse ``type=`` for a finite number within ``[low, high]``."""
    return _argtype(parse_float, "number", low=low, high=high, low_open=low_open)
