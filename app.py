"""OVEarth Inspector (``streamlit run app.py``; opens on assets/demo/): the frame of every
page. The page config, the session state and the sidebar (data, evaluation options, the
evaluation itself) are drawn here once; then ``st.navigation`` runs the page the URL names
(pages/common/nav.py lists them; its menu sits atop the sidebar). A page file run alone
(a fresh server's first link to it) runs this file first (pages/common/run.in_frame)."""

from __future__ import annotations

import streamlit as st

from pages.common import nav, run, sidebar

page = st.navigation([st.Page(p.file, title=p.menu, url_path=p.url_path,
                              default=p == nav.PAGES[0]) for p in nav.PAGES])
shown = nav.BY_MENU[page.title]
st.set_page_config(page_title=f"OVEarth Inspector · {shown.tab}", layout="wide")
st.title(shown.heading)
evaluated = sidebar.render()
if evaluated is None:
    st.stop()  # the sidebar (or the page's area) shows why there is nothing to evaluate
with run.framing(evaluated):
    page.run()
