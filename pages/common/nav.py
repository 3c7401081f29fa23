"""The app's pages, in menu order: what app.py registers with ``st.navigation``.

Each page is a file of ``pages/`` with a ``url_path`` that is NOT its filename: until a
session of a freshly started server calls ``st.navigation``, Streamlit runs the
``pages/`` folder in its old (v1) mode, where a URL equal to a file's name would run that
file alone, without app.py (no sidebar, no evaluation). A URL that names no file falls
back to app.py, whose ``st.navigation`` then opens the page the URL names. The Overview,
served at the root, has a ``url_path`` too ("Overview"): a page switched to is requested
by the hash of its ``url_path``, and the file-name default would again name a file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AppPage:
    file: str  # relative to app.py; what st.switch_page / st.page_link take
    url_path: str  # the Overview (the first, default page) is served at the app's root
    menu: str  # its name in the navigation menu
    tab: str  # the browser tab: "OVEarth Inspector · <tab>"
    heading: str  # the page's title


PAGES = (
    AppPage("pages/overview_page.py", "Overview", "Overview", "Overview",
            "OVEarth Inspector — Overview"),
    AppPage("pages/explorer_page.py", "Query_explorer", "Query explorer", "Query explorer",
            "Query explorer"),
    AppPage("pages/gallery_page.py", "Gallery", "Gallery", "Gallery", "Gallery"),
    AppPage("pages/compare_page.py", "Compare", "Compare", "Compare",
            "Compare two submissions"),
    AppPage("pages/leaderboard_page.py", "Leaderboard", "Leaderboard", "Leaderboard",
            "Leaderboard"),
    AppPage("pages/slices_page.py", "Slices", "Slices", "Slices", "Slices"),
    AppPage("pages/annotation_page.py", "Annotation", "Annotation (three tasks)",
            "Annotation", "One target, three query forms"),
    AppPage("pages/confusion_page.py", "Confusion", "Category confusion",
            "Category confusion", "Category confusion"),
)
BY_FILE = {p.file: p for p in PAGES}
BY_MENU = {p.menu: p for p in PAGES}
OVERVIEW, EXPLORER, GALLERY, COMPARE, LEADERBOARD, SLICES, ANNOTATION, CONFUSION = (
    p.file for p in PAGES)
