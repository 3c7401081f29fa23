"""The static tables of the first screens (issue 49: one Markdown table instead of a data
grid): what a reader sees, cell by cell, of hand-built frames (a CommonMark parser reads
them back, tests/markdown_tokens.py)."""

from __future__ import annotations

import pandas as pd
from markdown_tokens import tables

from pages.common import views


def _shown(frame: pd.DataFrame, formats: dict[str, str] | None = None) -> list[list[str]]:
    (table,) = tables(views.markdown_table(frame, formats))
    return table


def test_numbers_take_their_format_missing_values_a_dash_and_text_stays_text() -> None:
    frame = pd.DataFrame([
        {"metric": "AP_[0.5]", "A": 0.123456, "B": None, "n": 3, "p": 1.5e-7},
        {"metric": "a|b *c* <i>\nnext line", "A": None, "B": 1.0, "n": None, "p": None},
        {"metric": "ov_000001", "A": 2.0, "B": -0.25, "n": 12, "p": 0.5}])
    assert _shown(frame, {"A": ".4f", "B": ".4f", "p": ".3e"}) == [
        ["metric", "A", "B", "n", "p"],
        ["AP_[0.5]", "0.1235", "—", "3", "1.500e-07"],
        ["a|b *c* <i> next line", "—", "1.0000", "—", "—"],
        ["ov_000001", "2.0000", "-0.2500", "12", "5.000e-01"]]


def test_numbers_without_a_format_and_user_text_in_headers() -> None:
    """An integral number (a count, even in a column with a gap) as an integer, any other
    with four decimals; a header naming a file stays text as a cell does; numbers align
    right."""
    frame = pd.DataFrame({"only *x* right": [1, 2], "ratio": [0.25, 1 / 3],
                          "resamples": [2000.0, float("nan")], "ok": [True, False]})
    assert _shown(frame) == [["only *x* right", "ratio", "resamples", "ok"],
                             ["1", "0.2500", "2000", "True"],
                             ["2", "0.3333", "—", "False"]]
    assert views.markdown_table(frame).splitlines()[1] == "| ---: | ---: | ---: | --- |"
