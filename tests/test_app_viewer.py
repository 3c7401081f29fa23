"""AppTest of the viewer's defaults (issue 14): it opens on the GT target in a tall plot,
with no box label over the objects, and the object list zooms to one box."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from app_fixtures import app_on, assert_ok, write_large_image_dataset
from browser_support import WAIT_SCALE

from ovearth_core.viz import overlay

EXPLORER = "pages/1_Query_explorer.py"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _figure(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def _explorer(tmp_path: Path, **state: object):
    ds = write_large_image_dataset(tmp_path / "big")
    at = app_on(ds, task="referring", **state)
    at.switch_page(EXPLORER)
    return at.run()


def test_opens_on_the_target_in_a_tall_plot_without_labels(tmp_path: Path) -> None:
    at = _explorer(tmp_path)
    assert_ok(at)
    layout = _figure(at)["layout"]
    (x0, x1), (y1, y0) = layout["xaxis"]["range"], layout["yaxis"]["range"]
    assert x0 <= 2000 and x1 >= 2012 and y0 <= 1500 and y1 >= 1508  # the 12 x 8 car
    assert x1 - x0 <= 96.0 + 1e-9  # 12 px over <= 96: >= 80 px on a 640-px view
    assert layout["height"] >= 700  # a 2600 x 1800 scene
    assert not layout.get("annotations")
    objects = [d.value for d in at.dataframe if "object" in d.value.columns]
    assert list(objects[0]["object"]) == ["GT 1", "pred 1"]


def test_object_focus_and_labels_toggle(tmp_path: Path) -> None:
    at = _explorer(tmp_path, view_focus=("ref_1", 1), view_labels=True)
    assert_ok(at)
    layout = _figure(at)["layout"]
    (x0, x1) = layout["xaxis"]["range"]
    assert x0 <= 2001 and x1 >= 2013 and x1 - x0 == pytest.approx(96.0)
    assert layout["annotations"]
    # A focus on another query's box is ignored.
    at = _explorer(tmp_path / "other", view_focus=("ref_9", 0))
    assert_ok(at)



def test_next_shows_the_query_drawn_in_the_background(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a query is shown, the one "Next" leads to is drawn in the background; "Next"
    then shows that drawing (its figure is not built again) of the right query."""
    built: list[str] = []
    real = overlay.overlay_figure

    def counting(image, sample, *args, **kwargs):
        built.append(sample.sample_id)
        return real(image, sample, *args, **kwargs)

    monkeypatch.setattr(overlay, "overlay_figure", counting)
    at = app_on(None, 120)  # the demo: many queries
    at.switch_page(EXPLORER)
    at.run()
    assert_ok(at)
    options = at.selectbox(key="_w_query").options
    first, second = (o.split(" — ", 1)[0] for o in options[:2])
    assert built[0] == first
    deadline = time.monotonic() + 60 * WAIT_SCALE  # polled: a busy machine is not a failure
    while second not in built and time.monotonic() < deadline:
        time.sleep(0.1)
    assert built == [first, second]  # drawn before anyone asked for it
    next(b for b in at.button if b.label == "Next ▶").click().run()
    assert_ok(at)
    assert at.selectbox(key="_w_query").value == second
    assert _figure(at)["layout"]["uirevision"].startswith(f"{second}:")
    assert built.count(second) == 1  # the background drawing was shown, not redrawn
