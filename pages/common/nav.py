"""The app's pages, in menu order: what app.py registers with ``st.navigation``.

Each page is the file of ``pages/`` named by its URL path (the Overview, the default page,
is served at the app's root). Until a session of a freshly started server calls
``st.navigation``, Streamlit runs the ``pages/`` folder in its old mode, where a URL
naming a page file runs that file alone, without app.py; the page then hands over to
app.py (``run.in_frame``), whose ``st.navigation`` runs it again inside the frame. (A URL
naming no file, e.g. ``*_page.py`` files under other URL paths, would also reach app.py,
but that old mode first shows Streamlit's "Page not found" dialog over the page.)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AppPage:
    file: str  # relative to app.py; what st.switch_page / st.page_link take
    url_path: str  # the file's name; the Overview (the first page) is served at the root
    menu: str  # its name in the navigation menu
    tab: str  # the browser tab: "OVEarth Inspector · <tab>"
    heading: str  # the page's title


PAGES = (
    AppPage("pages/Overview.py", "Overview", "Overview", "Overview",
            "OVEarth Inspector — Overview"),
    AppPage("pages/Query_explorer.py", "Query_explorer", "Query explorer", "Query explorer",
            "Query explorer"),
    AppPage("pages/Gallery.py", "Gallery", "Gallery", "Gallery", "Gallery"),
    AppPage("pages/Compare.py", "Compare", "Compare", "Compare",
            "Compare two submissions"),
    AppPage("pages/Leaderboard.py", "Leaderboard", "Leaderboard", "Leaderboard",
            "Leaderboard"),
    AppPage("pages/Slices.py", "Slices", "Slices", "Slices", "Slices"),
    AppPage("pages/Annotation.py", "Annotation", "Annotation (three tasks)",
            "Annotation", "One target, three query forms"),
    AppPage("pages/Confusion.py", "Confusion", "Category confusion",
            "Category confusion", "Category confusion"),
    AppPage("pages/Audit.py", "Audit", "Audit (label errors)", "Audit",
            "Audit: label errors from many submissions"),
)
BY_FILE = {p.file: p for p in PAGES}
BY_MENU = {p.menu: p for p in PAGES}
OVERVIEW, EXPLORER, GALLERY, COMPARE, LEADERBOARD, SLICES, ANNOTATION, CONFUSION, AUDIT = (
    p.file for p in PAGES)
