"""Gallery notes (issue 27 defect 3): a note without a tag is saved with a message saying
so (not silently), and each tile shows the notes on its object and on its query."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, goto, write_dataset

from ovearth_core import review

GALLERY = "pages/Gallery.py"
OV = "open_vocabulary"

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _gallery(ds: Dataset):
    at = app_on(ds, 180).run()
    goto(at, GALLERY)
    return at.run()


def _selects(at) -> list:
    return [c for c in at.checkbox if c.label.startswith("select")]


def test_a_note_without_a_tag_is_saved_with_a_message_and_shown_on_its_tile(
        tmp_path: Path) -> None:
    ds = write_dataset(tmp_path / "data")
    before = set(tmp_path.rglob("*"))
    at = _gallery(ds)
    assert_ok(at)
    _selects(at)[1].check().run()  # the missed ship of ov_000003
    at.text_input(key="_gal_bulk_note").set_value("a barge, not a ship")
    next(b for b in at.button if b.label == "Tag 1 object").click().run()
    assert_ok(at)
    box = review.Target(OV, "ov_000003", "gt", "bbox", 0)
    state = review.load_state(review.sidecar_for(ds.gt))
    assert state.notes[box].text == "a barge, not a ship" and not state.tags
    # The app wrote only under DIR/.ovearth/ (docs/security.md).
    written = set(tmp_path.rglob("*")) - before
    assert written and all(p.is_relative_to(ds.root / ".ovearth") for p in written), written
    said = " ".join(s.value for s in at.success)
    assert "note" in said and "no tag" in said, said
    # The note is on the tile, after a fresh session too; a query's note on its tiles.
    review.note(review.sidecar_for(ds.gt), review.Target(OV, "ov_000001"), "check the tank")
    again = _gallery(ds)
    text = " ".join(m.value for m in again.markdown) + " ".join(c.value for c in again.caption)
    assert "a barge, not a ship" in text
    assert "check the tank" in text
