"""The app's URLs written in README.md and docs/*.md (tests/core/test_docs_links.py checks
each names a page, tests/browser/test_browser_doc_urls.py opens each in Chromium).

An app URL is a code span that is a path of one segment (`/`, `/Compare`, with a query
string or not) or a written address of a local server (``http://127.0.0.1:8501/...``,
``localhost:8501/...``); the path's page is looked up in :data:`pages.common.nav.PAGES` as
``st.navigation`` serves them: the Overview (the default page) at the root, every other
page at its ``url_path``.
"""

from __future__ import annotations

import re
from pathlib import Path

from pages.common import nav

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_CODE = re.compile(r"`([^`]+)`")
_PATH = re.compile(r"/[A-Za-z_]*(?:\?\S*)?")
_ADDRESS = re.compile(r"(?:127\.0\.0\.1|localhost):\d+(/[A-Za-z_]*(?:\?[^\s)`>\]]*)?)")
SERVED = {"" if p == nav.PAGES[0] else p.url_path: p for p in nav.PAGES}
# Each page's own address: tests/browser/test_browser_navigation.py opens each as a direct
# link on a fresh server (and checks what test_browser_doc_urls.py would); that test opens
# the docs' other URLs.
DIRECT_LINKS = {f"/{path}": page for path, page in SERVED.items()}


def app_urls() -> dict[str, list[str]]:
    """Each app URL (path and query) written in the docs, with where it is written."""
    out: dict[str, list[str]] = {}
    for path in DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            spans = [m.group(1) for m in _CODE.finditer(line) if _PATH.fullmatch(m.group(1))]
            for url in [*spans, *(m.group(1) for m in _ADDRESS.finditer(line))]:
                out.setdefault(url, []).append(f"{path.relative_to(ROOT)}:{number}")
    return out


def page_of(url: str) -> nav.AppPage | None:
    """The page ``url`` opens (``None``: no page is served there)."""
    return SERVED.get(url.split("?")[0].strip("/"))
