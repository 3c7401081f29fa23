"""The LaTeX tables' escaping of names (issue 26 item 13): every LaTeX special typesets as
itself, checked against the standard LaTeX spelling of each, written out here."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ovearth_core.report.tables import latex_escape

# How LaTeX (with T1 text commands) spells each special character as text.
SPELLED = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
}


@pytest.mark.parametrize(("char", "spelled"), SPELLED.items())
def test_each_special_is_spelled_as_latex_spells_it(char: str, spelled: str) -> None:
    assert latex_escape(char) == spelled
    assert latex_escape(f"a{char}b") == f"a{spelled}b"


@pytest.mark.parametrize(("name", "expected"), [
    ("model\\v2", r"model\textbackslash{}v2"),
    ("{x}", r"\{x\}"),
    ("\\{}", r"\textbackslash{}\{\}"),
    ("50% & $5 #1 ^_~", r"50\% \& \$5 \#1 \textasciicircum{}\_\textasciitilde{}"),
    ("plain name", "plain name"),
])
def test_names_hand_worked(name: str, expected: str) -> None:
    assert latex_escape(name) == expected


_TOKEN = re.compile("|".join(re.escape(s) for s in sorted(SPELLED.values(), key=len,
                                                             reverse=True)) + "|.", re.S)
_BACK = {v: k for k, v in SPELLED.items()}


def _typeset(latex: str) -> str:
    """What LaTeX prints for text using only the spellings above (any other backslash or
    brace would be a command or a group: kept as a marker so the test sees it)."""
    out = []
    for token in _TOKEN.findall(latex):
        if token in _BACK:
            out.append(_BACK[token])
        elif token in SPELLED:
            out.append(f"<raw {token}>")
        else:
            out.append(token)
    return "".join(out)


@given(st.text(alphabet=st.sampled_from(list(SPELLED) + list("ab 1\\{}"))))
def test_any_name_typesets_as_itself(name: str) -> None:
    assert _typeset(latex_escape(name)) == name
