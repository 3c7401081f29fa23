"""Issue 39: app.py is the frame (sidebar and evaluation once), st.navigation runs the page.
Every registered page, opened by the test helpers before or after a first run, draws its
own title: a helper that silently landed on the Overview would fail here."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, assert_on, goto, open_page, write_dataset

from pages.common import nav

REPO = Path(__file__).resolve().parents[2]
FILES = [p.file for p in nav.PAGES]


@pytest.fixture(scope="module")
def ds(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return write_dataset(tmp_path_factory.mktemp("nav") / "data")


def test_the_table_is_the_pages_folder_and_each_url_its_file_name() -> None:
    """A fresh server (Streamlit's pages/ mode until a session calls st.navigation) runs
    the file a URL names: each page's file is named by its URL path, and hands over to
    app.py when run alone (run.in_frame, its last line)."""
    files = sorted(str(p.relative_to(REPO)) for p in (REPO / "pages").glob("*.py"))
    assert sorted(FILES) == files
    assert [Path(p.file).stem for p in nav.PAGES] == [p.url_path for p in nav.PAGES]
    for p in nav.PAGES:
        assert (REPO / p.file).read_text().endswith("\n\nin_frame(main)\n"), p.file
    assert [p.url_path for p in nav.PAGES] == ["Overview", "Query_explorer", "Gallery", "Compare",
                                              "Leaderboard", "Slices", "Annotation",
                                              "Confusion", "Audit"]
    assert nav.PAGES[0].menu == "Overview"


@pytest.mark.parametrize("page", FILES)
def test_every_page_opened_before_the_first_run_is_that_page(ds: Dataset, page: str) -> None:
    at = goto(app_on(ds, cmp_b_path=str(ds.model_b)), page).run()
    assert_ok(at)
    assert_on(at, page)
    # the frame drew the sidebar once: one "Evaluation options", no page links of ours
    assert [s.value for s in at.sidebar.subheader].count("Evaluation options") == 1


@pytest.mark.parametrize("page", FILES)
def test_every_page_opened_after_a_run_is_that_page(ds: Dataset, page: str) -> None:
    at = app_on(ds, cmp_b_path=str(ds.model_b)).run()
    assert_on(at, "app.py")
    goto(at, page).run()
    assert_ok(at)
    assert_on(at, page)


def test_a_link_opens_its_page_with_its_parameters(ds: Dataset) -> None:
    at = open_page(nav.COMPARE, {"gt": str(ds.gt), "images": str(ds.images),
                                 "sub": str(ds.model_a), "b": str(ds.model_b), "cap": "10"})
    assert_ok(at)
    assert at.session_state["ap_max_detections"] == 10
    assert at.query_params["b"] in (str(ds.model_b), [str(ds.model_b)])


def test_the_helpers_refuse_a_file_that_is_no_page(ds: Dataset) -> None:
    with pytest.raises(ValueError):
        goto(app_on(ds), "pages/common/views.py")
