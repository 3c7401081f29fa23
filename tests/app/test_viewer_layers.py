"""Layer pills follow the data (issue 27 defect 8): a box-only benchmark shows no mask
pills; the layers hidden there stay chosen for data that has masks."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import app_on, assert_ok, goto, write_dataset, write_large_image_dataset

EXPLORER = "pages/Query_explorer.py"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _pills(at) -> list[str]:
    (group,) = [g for g in at.get("button_group") if g.proto.label == "Layers"]
    return [o.content for o in group.proto.options]


def test_a_box_only_benchmark_has_no_mask_pills(tmp_path: Path) -> None:
    at = app_on(write_large_image_dataset(tmp_path / "big"), task="referring")
    goto(at, EXPLORER)
    at.run()
    assert_ok(at)
    assert _pills(at) == ["GT HBB", "predicted HBB", "GT OBB", "predicted OBB"]
    assert "GT mask" in at.session_state["view_layers"]  # kept for data with masks
    masks = app_on(write_dataset(tmp_path / "masks"), task="vocabulary")
    goto(masks, EXPLORER)
    masks.run()
    assert_ok(masks)
    assert _pills(masks)[:2] == ["GT mask", "predicted mask"]
