"""User text reaches Markdown as text (issue 47: a trust boundary): whatever a phrase,
category, id or file name holds, ``views.md_text`` of it renders as exactly that text and as
no Markdown element: no emphasis (`` _em_ ``, ``*em*``, ``__strong__``), code, link, image,
HTML, strike-through or character reference (``&amp;``).

The reference is markdown-it-py, a CommonMark parser (with GFM's strike-through and
tables), not our escaping: the rendered paragraph's inline tokens must be plain text whose
content is the input (WORD JOINERs, which only keep bare URLs from being linked, removed)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pages.common import views

MD = MarkdownIt("commonmark").enable(["strikethrough", "table"])
PIECES = ["_em_", " _em_ ", "__strong__", "*em*", "`code`", "[a](b)", "![i](s)", "<b>x</b>",
          "~~s~~", "&amp;", "&#65;", "$x$", "a|b", "ov_000001", "snake_case_", "_lead",
          "x _y", "\\", "\\_", "trail_ ", "é_ü", "1_000"]


def _inline(markdown: str) -> list:
    tokens = [t for t in MD.parse(markdown) if t.type == "inline"]
    assert len(tokens) == 1, markdown
    return tokens[0].children


@given(st.lists(st.sampled_from(PIECES) | st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=10),
    min_size=1, max_size=5))
def test_user_text_renders_as_itself_and_as_no_element(parts: list[str]) -> None:
    text = "".join(parts)
    children = _inline("shown: " + views.md_text(text) + " .")
    assert {c.type for c in children} <= {"text"}, (text, [c.type for c in children])
    rendered = "".join(c.content for c in children).replace(views.WORD_JOINER, "")
    assert rendered == "shown: " + text + " ."


def test_intraword_underscores_are_left_as_written() -> None:
    """Ids stay readable where Markdown is not rendered (a copied caption): an ``_`` between
    two letters or digits cannot open or close emphasis, so it is not escaped; one beside a
    space, punctuation or the text's end is."""
    assert views.md_text("ov_000001") == "ov_000001"
    assert views.md_text("é_ü") == "é_ü"
    assert views.md_text(" _em_ ") == " \\_em\\_ "
    assert views.md_text("_lead") == "\\_lead"
