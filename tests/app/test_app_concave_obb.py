"""The app's "Concave oriented boxes" (``concave_obb``, link ``concave``; issue 46): off, a
concave oriented box is refused with the spec's rule; on (the sidebar or a link), it is
evaluated as DOTA_devkit scores it and every page's first line says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_fixtures import open_page
from concave_helpers import write_benchmark

pytestmark = pytest.mark.usefixtures("fresh_caches")
REFUSED = "expected a convex polygon (the spec's rule"


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    _, pred = write_benchmark(root)
    shutil.copy(pred, root / "predictions" / "dart_b.json")  # Compare's B
    return root


def _page_text(at) -> str:
    return " ".join(str(e.value) for kind in ("caption", "markdown", "error", "warning")
                    for e in getattr(at, kind))


@pytest.mark.parametrize("page", ["app.py", "pages/Compare.py", "pages/Query_explorer.py"])
def test_off_the_spec_rule_refuses_the_box(bench: Path, page: str) -> None:
    at = open_page(page, {"data": str(bench), "mods": "oriented_bbox"})
    assert not at.exception, [e.value for e in at.exception]
    text = _page_text(at)
    assert REFUSED in text and "annotations[0].oriented_bbox[0]" in text
    assert at.sidebar.toggle(key="concave_obb").value is False


@pytest.mark.parametrize("page", ["app.py", "pages/Compare.py", "pages/Query_explorer.py"])
def test_a_link_turns_it_on_and_the_page_says_so(bench: Path, page: str) -> None:
    at = open_page(page, {"data": str(bench), "mods": "oriented_bbox", "concave": "1"})
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    text = _page_text(at)
    assert REFUSED not in text
    assert "concave oriented boxes taken" in text
    assert at.sidebar.toggle(key="concave_obb").value is True
    assert dict(at.query_params).get("concave") in ("1", ["1"])


def test_the_sidebar_toggle_turns_it_on(bench: Path) -> None:
    at = open_page("app.py", {"data": str(bench), "mods": "oriented_bbox"})
    at.sidebar.toggle(key="concave_obb").set_value(True).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "concave oriented boxes taken" in _page_text(at)
    assert dict(at.query_params).get("concave") in ("1", ["1"])
