"""The sidebar's widgets keep their values through Streamlit itself (issue 39): the frame
draws them on every run, so each is keyed by its persistent key, with no shadow key, and a
value set on one page holds on every other page and back."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, goto, write_dataset

pytestmark = pytest.mark.usefixtures("fresh_caches")

FRAME_KEYS = ("task", "auto_modalities", "modalities", "iou_threshold", "use_score_threshold",
              "bbox_format", "large_masks", "concave_obb", "ap_hard_negatives", "ap_max_detections",
              "gt_path", "images_dir", "pred_path")


@pytest.fixture
def ds(tmp_path) -> Dataset:
    return write_dataset(tmp_path)


def test_sidebar_values_hold_across_pages_without_shadow_keys(ds: Dataset) -> None:
    at = app_on(ds).run()
    assert_ok(at)
    at.sidebar.select_slider(key="iou_threshold").set_value(0.7).run()
    at.sidebar.toggle(key="ap_hard_negatives").set_value(True).run()
    at.sidebar.number_input(key="ap_max_detections").set_value(300).run()
    for page in ("pages/Compare.py", "pages/Slices.py", "pages/Leaderboard.py", "app.py"):
        goto(at, page)
        at.run()
        assert not at.exception, page
        assert at.sidebar.select_slider(key="iou_threshold").value == 0.7, page
        assert at.sidebar.toggle(key="ap_hard_negatives").value is True, page
        assert at.sidebar.number_input(key="ap_max_detections").value == 300, page
    for name in FRAME_KEYS:
        assert name in at.session_state and f"_w_{name}" not in at.session_state, name
    # The caption of what was evaluated follows the held values.
    assert any("IoU threshold 0.7" in c.value for c in at.caption)


def test_a_rerun_does_not_list_the_data_folder_for_defaults(monkeypatch) -> None:
    """Issue 49: the default dataset's paths (the command line read, ``predictions/``
    listed) are computed on a session's first run only, not on every rerun of every page;
    every other default still fills a key that is missing."""
    from streamlit.testing.v1 import AppTest

    from pages.common import state

    calls = []
    real = state.dataset_paths
    monkeypatch.setattr(state, "dataset_paths", lambda folder: calls.append(folder)
                        or real(folder))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                           default_timeout=120).run()
    assert len(calls) == 1 and at.session_state["pred_path"]
    del at.session_state["cmp_query"]
    at.run()
    assert len(calls) == 1
    assert at.session_state["cmp_query"] == ""
