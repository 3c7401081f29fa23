"""The app's "Masks beyond the spec's cap" (``large_masks``, link ``bigmask``): off, a
prediction over the spec's 100,000,000 pixels is refused with the spec's reason; on (the
sidebar or a link), it is evaluated and every page's first line says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from app_fixtures import open_page
from mask_cap_helpers import write_benchmark
from pycocotools import mask as cocomask

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    gt, pred = write_benchmark(tmp_path)
    root = tmp_path / "bench"
    (root / "predictions").mkdir(parents=True)
    (root / "images").mkdir()
    shutil.move(gt, root / "ground_truth.json")
    shutil.move(pred, root / "predictions" / "huge.json")
    return root


def _page_text(at) -> str:
    return " ".join(str(e.value) for kind in ("caption", "markdown", "error", "warning")
                    for e in getattr(at, kind))


def test_off_the_spec_rule_refuses_the_mask(bench: Path) -> None:
    at = open_page("app.py", {"data": str(bench)})
    assert not at.exception
    assert "the spec's cap on a predicted mask" in _page_text(at)
    assert at.sidebar.toggle(key="large_masks").value is False


@pytest.mark.parametrize("page", ["app.py", "pages/Query_explorer.py", "pages/Gallery.py"])
def test_a_link_turns_it_on_and_the_page_says_so(bench: Path, page: str) -> None:
    at = open_page(page, {"data": str(bench), "bigmask": "1"})
    assert not at.exception, [e.value for e in at.exception]
    text = _page_text(at)
    assert "the spec's cap on a predicted mask" not in text
    assert "masks beyond the spec's cap taken" in text
    assert at.sidebar.toggle(key="large_masks").value is True
    assert dict(at.query_params).get("bigmask") in ("1", ["1"])


def test_on_the_overview_shows_the_exact_iou(bench: Path) -> None:
    at = open_page("app.py", {"data": str(bench), "bigmask": "1"})
    doc = json.loads((bench / "ground_truth.json").read_text())
    pred = json.loads((bench / "predictions" / "huge.json").read_text())
    iou = cocomask.iou([pred["tasks"]["open_vocabulary"][0]["segmentation"]],
                       [doc["annotations"][0]["segmentation"]], [0])[0, 0]
    shown = [m.value for m in at.metric]
    assert any(f"{iou:.3f}" in str(v) or f"{iou:.2f}" in str(v) for v in shown), shown
