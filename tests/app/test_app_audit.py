"""AppTest of the Audit page (issue 36) on the hand-built scene of tests/audit_scene.py:
the injected errors are the first suspects, each with a picture; confirming lands in the
review sidecar; "what if fixed" writes the cleaned ground truth and ranks the submissions on
both, with rank changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, assert_on, goto, open_page
from audit_scene import INJECTED, write_audit_dataset
from streamlit.testing.v1 import AppTest

from ovearth_core import review
from ovearth_core.audit import fix

AUDIT = "pages/Audit.py"
TIMEOUT = 120

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    gt, preds = write_audit_dataset(tmp_path / "data")
    return Dataset(gt.parent, gt, gt.parent / "images", preds[0], preds[1])


def _audit(ds: Dataset) -> AppTest:
    at = app_on(ds, TIMEOUT).run()
    goto(at, AUDIT)
    at.run()
    assert_ok(at)
    assert_on(at, AUDIT)
    return at


def _headline(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**#")]


def test_suspects_with_pictures_confirm_and_what_if(ds: Dataset) -> None:
    at = _audit(ds)
    heads = _headline(at)
    total = next(int(c.value.split()[0]) for c in at.caption if " suspects (" in c.value)
    assert len(heads) == min(total, 10) >= len(INJECTED)  # "Suspects shown": 10
    kinds = {"missing label": "missing", "spurious label": "spurious",
             "shifted label": "shifted", "wrong class": "wrong_class"}
    first = [(kinds[h.split(" · ")[1].rstrip("*")], h) for h in heads[:len(INJECTED)]]
    assert sorted(k for k, _ in first) == sorted(k for k, _, _ in INJECTED)
    assert len(at.get("image")) == len(heads)  # one picture per suspect shown
    # Nothing confirmed yet: the what-if section asks for confirmations.
    assert any("Confirm suspects above" in i.value for i in at.info)
    confirms = [b for b in at.button if b.label == "Confirm"]
    for b in confirms[:len(INJECTED)]:
        b.click().run()
        assert_ok(at)
    state = review.load_state(review.sidecar_for(ds.gt))
    tags = state.query_tags("open_vocabulary")
    confirmed = [t for held in tags.values() for t in held if t.startswith(fix.CONFIRMED)]
    assert len(confirmed) == len(INJECTED)
    write = next(b for b in at.button if b.label.startswith("Write the cleaned ground truth"))
    assert f"({len(INJECTED)} fixes)" in write.label
    write.click().run()
    assert_ok(at)
    cleaned = fix.cleaned_path(ds.gt)
    doc = json.loads(cleaned.read_text())
    row = next(r for r in doc["tasks"]["open_vocabulary"] if r["query_id"] == "q3_ship")
    assert row["type"] == "positive"  # the negative query's fix
    assert json.loads(ds.gt.read_text()) != doc  # the original is left as it was
    assert any("Wrote" in s.value for s in at.success)
    table = at.dataframe[-1].value  # the ranking, last on the page
    assert list(table["rank (cleaned)"]) == list(range(1, 11))
    assert set(table["submission"]) == {f"model{s}" for s in range(10)}
    for _, r in table.iterrows():
        moved = r["rank (original)"] - r["rank (cleaned)"]
        assert r["change"] == ("=" if moved == 0 else ("↑" if moved > 0 else "↓")
                               + str(abs(moved)))
    # A confirmation withdrawn: the ranking shown is no longer that of the confirmations.
    next(b for b in at.button if b.label == "Undo" and not b.disabled).click().run()
    assert_ok(at)
    assert any("confirmations changed" in i.value for i in at.info)
    assert not at.success


def test_reject_and_undo(ds: Dataset) -> None:
    at = _audit(ds)
    next(b for b in at.button if b.label == "Reject").click().run()
    assert_ok(at)
    assert any(c.value == "rejected (review sidecar)" for c in at.caption)
    tags = review.load_state(review.sidecar_for(ds.gt)).query_tags("open_vocabulary")
    assert any(t.startswith(fix.REJECTED) for held in tags.values() for t in held)
    next(b for b in at.button if b.label == "Undo" and not b.disabled).click().run()
    tags = review.load_state(review.sidecar_for(ds.gt)).query_tags("open_vocabulary")
    assert not any(t.startswith("audit ") for held in tags.values() for t in held)


def test_one_submission_is_not_enough(ds: Dataset, tmp_path: Path) -> None:
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "only.json").write_text(ds.model_a.read_text())
    at = _audit(ds)
    folder = next(t for t in at.text_input if t.label.startswith("Submissions folder"))
    folder.set_value(str(lone)).run()
    assert_ok(at)
    assert any("at least two submissions" in i.value for i in at.info)


def test_the_audit_settings_travel_in_the_link(ds: Dataset) -> None:
    """The geometry audited and the suspects shown are in the link table (audgeo, audn):
    set on the page they are written into the address; a fresh session opened from that
    link shows the same page settings and as many suspects."""
    from ovearth_core.audit import MODALITIES
    from pages.common import links

    assert links.AUDIT_GEOMETRIES == MODALITIES
    at = _audit(ds)
    at.radio(key="_w_audit_modality").set_value("oriented_bbox").run()
    at.number_input(key="_w_audit_shown").set_value(3).run()
    assert_ok(at)
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert params["audgeo"] == "oriented_bbox" and params["audn"] == "3"
    assert len(_headline(at)) == 3

    fresh = open_page(AUDIT, params, TIMEOUT)
    assert_ok(fresh)
    assert fresh.radio(key="_w_audit_modality").value == "oriented_bbox"
    assert fresh.number_input(key="_w_audit_shown").value == 3
    assert len(_headline(fresh)) == 3


def test_the_submissions_folder_travels_in_the_link(ds: Dataset, tmp_path: Path) -> None:
    """The folder typed on the Audit page is in its link (auddir); a fresh session opened
    from it audits that folder, not predictions/ beside the ground truth."""
    other = ds.root / "others"
    other.mkdir()
    for p in sorted((ds.root / "predictions").glob("*.json"))[:3]:
        (other / p.name).write_bytes(p.read_bytes())
    at = _audit(ds)
    folder = next(t for t in at.text_input if t.label.startswith("Submissions folder"))
    assert folder.value == ""  # the default: predictions/ beside the ground truth
    folder.set_value(str(other)).run()
    assert_ok(at)
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert params["auddir"] == str(other)
    caption = next(c.value for c in at.caption if " suspects (" in c.value)
    assert "from 3 submissions" in caption
    fresh = open_page(AUDIT, params, TIMEOUT)
    assert_ok(fresh)
    assert "from 3 submissions" in next(c.value for c in fresh.caption if " suspects (" in c.value)


def test_tables_show_every_row(ds: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 46: the vote tables (and the ranking) are as tall as their rows: every vote is
    visible without scrolling (c100000 fixed them at 150 px: three rows of ten votes).
    AppTest does not report an element's height, so each ``st.dataframe`` call's is
    recorded as the page makes it (the script runs in this process)."""
    from streamlit.delta_generator import DeltaGenerator

    calls: list[tuple[int, object]] = []
    original = DeltaGenerator.dataframe

    def recorded(self: DeltaGenerator, data: object = None, *args: object,
                 **kwargs: object) -> object:
        calls.append((len(data) if isinstance(data, list) else -1,  # type: ignore[arg-type]
                      kwargs.get("height", "auto")))
        return original(self, data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(DeltaGenerator, "dataframe", recorded)
    at = _audit(ds)
    for b in [b for b in at.button if b.label == "Confirm"][:len(INJECTED)]:
        b.click().run()
    next(b for b in at.button if b.label.startswith("Write the cleaned ground truth")
         ).click().run()
    assert_ok(at)
    votes = [len(s) for s in (t.value for t in at.dataframe) if "confidence" in s.columns]
    assert max(votes) > 3  # a table the old 150 px cut short
    # Streamlit's rows are 35 px, the header one more: a fixed height must fit them all.
    cut = [(rows, h) for rows, h in calls
           if h != "content" and not (isinstance(h, int) and h >= 35 * (rows + 1) + 3)]
    assert len(calls) >= len(votes) + 1 and cut == [], cut
