"""A DOTA conversion with a difficult ship in the explorer (issue 34, item 10): the card's
legend names the dotted difficult outline, the box picker labels the box difficult."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from app_fixtures import Dataset, app_on, assert_ok, card_html, goto
from PIL import Image

from ovearth_core.convert import from_dota

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _bench(root: Path) -> Dataset:
    src = root / "dota"
    for sub in ("labelTxt", "images", "results/model"):
        (src / sub).mkdir(parents=True)
    Image.fromarray(np.full((120, 160, 3), 90, dtype=np.uint8)).save(src / "images" / "P1.png")
    (src / "labelTxt" / "P1.txt").write_text(
        "imagesource:GoogleEarth\ngsd:0.5\n"
        "10 10 40 10 40 30 10 30 ship 0\n"
        "80 60 120 60 120 90 80 90 ship 1\n")
    (src / "results" / "model" / "Task1_ship.txt").write_text(
        "P1 0.9 10 10 40 10 40 30 10 30\n")
    # Boxes come from DOTA Task2 files only (issue 46): the same detection, upright.
    (src / "results" / "model" / "Task2_ship.txt").write_text("P1 0.9 10 10 40 30\n")
    out = root / "bench"
    from_dota(src / "labelTxt", src / "images", out, [src / "results" / "model"])
    pred = next((out / "predictions").glob("*.json"))
    return Dataset(out, out / "ground_truth.json", out, pred, pred)


def test_a_difficult_ship_is_shown_and_named(tmp_path: Path) -> None:
    ds = _bench(tmp_path)
    at = app_on(ds)
    goto(at, "pages/Query_explorer.py")
    at.run()
    assert_ok(at)
    html = card_html(at)
    assert "difficult GT (DOTA) dotted" in html
    labels = [o for s in at.selectbox if s.key == "_w_objects" for o in s.options]
    assert any("difficult" in label and "GT HBB 2" in label for label in labels), labels
