"""User text is shown as text on every page (issue 26 item 12): a bare URL or e-mail
address in a submission's query ids and values, a review sidecar's tags, bad lines and
saved-view names, or a submission's file name reaches no Markdown element in a form that
Streamlit's Markdown would turn into a link.

The reference is remark-gfm's own rule, written out here: it links the *text* of a
Markdown paragraph wherever it matches ``(https?://|www(?=\\.))...`` or an e-mail address,
after escapes are resolved; code spans and the text and target of a Markdown link are not
scanned. ``test_browser_user_text.py`` checks the same in Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, goto, write_dataset
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from ovearth_core import review
from pages.common import views

pytestmark = pytest.mark.usefixtures("fresh_caches")

# remark-gfm (mdast-util-gfm-autolink-literal), as bundled with Streamlit's frontend.
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE)
GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")
_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_LINK = re.compile(r"\[(?:\\.|[^\]\\])*\]\([^)]*\)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: a backslash before ASCII punctuation


def autolinked(markdown: str) -> list[str]:
    """The pieces of ``markdown`` that remark-gfm would turn into links."""
    text = _ESCAPE.sub(r"\1", _LINK.sub("[link]", _CODE.sub("", markdown)))
    return [m.group(0) for m in GFM_URL.finditer(text)] + \
        [m.group(0) for m in GFM_EMAIL.finditer(text)]


HOSTILE = ["https://evil.example/a", "HTTP://EVIL.EXAMPLE/b", "www.evil.example",
           "x@evil.example", "[c](https://evil.example)"]


@given(st.lists(st.sampled_from(HOSTILE) | st.text(max_size=12), max_size=5))
def test_md_text_is_never_autolinked_and_reads_as_the_text(parts: list[str]) -> None:
    text = " ".join(parts)
    shown = views.md_text(text)
    assert autolinked(shown) == []
    assert _ESCAPE.sub(r"\1", shown).replace(views.WORD_JOINER, "") == text


def _markdown_of(at: AppTest) -> list[str]:
    """Every element whose body Streamlit renders as Markdown, and the checkbox labels."""
    out = []
    for kind in ("markdown", "caption", "error", "warning", "info", "success"):
        out += [e.value for e in at.get(kind)]
    out += [c.label for c in at.checkbox]
    return out


def _no_links(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    found = {m: autolinked(m) for m in _markdown_of(at) if autolinked(m)}
    assert found == {}


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


def test_a_hostile_submission_in_the_validation_report(ds: Dataset) -> None:
    bad = ds.root / "predictions" / "www.evil.example.json"
    bad.write_text(json.dumps([
        {"query_id": "https://evil.example/q", "segmentation": "mailto:x@evil.example"},
        {"query_id": "ov_000001", "bbox": ["www.evil.example"]}]))
    at = app_on(ds, pred_path=str(bad)).run()
    assert at.error  # the validation report is shown
    assert any("evil" in e.value for e in at.error)
    _no_links(at)


def test_hostile_review_sidecar_tags_bad_lines_and_views(ds: Dataset) -> None:
    path = review.sidecar_for(ds.gt)
    target = review.Target("open_vocabulary", "ov_000001")
    review.tag(path, target, "www.evil.example")
    review.tag(path, target, "x@evil.example")
    review.save_view(path, "https://evil.example/view", {"task": "vocabulary"})
    with path.open("a") as handle:
        handle.write('{"v": 1, "event": "tag", "note": "https://evil.example/bad"}\n')
    for page in ("pages/Query_explorer.py", "pages/Gallery.py"):
        at = app_on(ds, flt_review_tags=["www.evil.example"], show_analysis=False)
        goto(at, page)
        at.run()
        text = " ".join(_markdown_of(at))
        assert "evil" in text  # the hostile text is shown ...
        _no_links(at)  # ... as text


def test_hostile_submission_names_on_the_leaderboard(ds: Dataset, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OVEARTH_CACHE_DIR", str(tmp_path / "cache"))
    preds = ds.root / "predictions"
    (preds / "www.evil.example.json").write_bytes(ds.model_b.read_bytes())
    (preds / "x@evil.example.json").write_text("[")
    at = app_on(ds, pred_path=str(preds / "www.evil.example.json"))
    goto(at, "pages/Leaderboard.py")
    at.run()
    assert "evil" in " ".join(_markdown_of(at))
    _no_links(at)
