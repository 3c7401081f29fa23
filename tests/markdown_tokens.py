"""What a reader sees of app-written Markdown, by a CommonMark parser (markdown-it-py), for
tests that check user text stays text (issue 47)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
from markdown_it import MarkdownIt


def tokens(markdown: str) -> list[Any]:
    """The block tokens of ``markdown`` followed by each block's inline children."""
    out = []
    for block in MarkdownIt("commonmark").parse(markdown):
        out.append(block)
        out += block.children or []
    return out


def tables(markdown: str) -> list[list[list[str]]]:
    """Each GFM table of ``markdown`` as a reader sees it: its rows (the header first), each
    a list of its cells' text (escapes resolved, the invisible word joiner that keeps an
    "@" from autolinking left out)."""
    out: list[list[list[str]]] = []
    inside = False
    for block in MarkdownIt("commonmark").enable("table").parse(markdown):
        if block.type in ("table_open", "table_close"):
            inside = block.type == "table_open"
            out += [[]] if inside else []
        elif inside and block.type == "tr_open":
            out[-1].append([])
        elif inside and block.type == "inline":
            out[-1][-1].append("".join(c.content for c in block.children or []
                                       ).replace("\u2060", ""))
    return out


def table_frames(markdowns: Iterable[str]) -> list[pd.DataFrame]:
    """Every table of ``markdowns`` (an AppTest's ``m.value for m in at.markdown``) as a
    frame of the cells' text, columns named by its header."""
    return [pd.DataFrame(t[1:], columns=t[0]) for m in markdowns for t in tables(m)]
