"""What a reader sees of app-written Markdown, by a CommonMark parser (markdown-it-py), for
tests that check user text stays text (issue 47)."""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt


def tokens(markdown: str) -> list[Any]:
    """The block tokens of ``markdown`` followed by each block's inline children."""
    out = []
    for block in MarkdownIt("commonmark").parse(markdown):
        out.append(block)
        out += block.children or []
    return out
