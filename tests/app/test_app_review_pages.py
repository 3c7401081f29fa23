"""AppTest of review beyond the explorer (issue 19): tagging from the Gallery and from
Compare lands in the sidecar and is a gallery filter result after a restart; the gallery's
own state is in its URL; saved views are renamed and deleted (append-only); the Annotation
page shows one annotation's three tasks with the evaluator's numbers; the query-form slice."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from app_fixtures import Dataset, app_on, assert_ok, card_html, goto, write_dataset
from streamlit.testing.v1 import AppTest

from ovearth_core import review
from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

GALLERY = "pages/Gallery.py"
COMPARE = "pages/Compare.py"
EXPLORER = "pages/Query_explorer.py"
SLICES = "pages/Slices.py"
ANNOTATION = "pages/Annotation.py"
DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
TIMEOUT = 180
OV = "open_vocabulary"
KEYS = {"vocabulary": "open_vocabulary", "referring": "referring", "reasoning": "reasoning"}

pytestmark = pytest.mark.usefixtures("fresh_caches")


@pytest.fixture()
def ds(tmp_path: Path) -> Dataset:
    return write_dataset(tmp_path / "data")


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    """A copy of the bundled demo (tests never write beside the repository's data)."""
    target = tmp_path / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns(".ovearth"))
    return target


def _restart() -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def _gallery_after_restart(params: dict[str, str]) -> AppTest:
    """A new session of a restarted app opened on the link ``params``, on the Gallery."""
    _restart()
    fresh = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                              default_timeout=TIMEOUT)
    fresh.query_params.update(params)
    fresh.run()
    goto(fresh, GALLERY)
    return fresh.run()


def _page(ds: Dataset, page: str, **state: object) -> AppTest:
    at = app_on(ds, TIMEOUT, **{"view_review": True, **state}).run()  # the panel's switch on
    goto(at, page)
    return at.run()


def _tile_ids(at: AppTest) -> list[str]:
    """The query id of every tile shown, in order (from the tiles' explorer links)."""
    return [m.value.split("  \n")[-1].split(" ↗")[0].strip("[").replace("\\_", "_")
            for m in at.markdown if "Query_explorer?" in m.value and " ↗](" in m.value]


def _selects(at: AppTest) -> list:
    return [c for c in at.checkbox if c.label.startswith("select")]


def test_tag_from_the_gallery_persists_and_is_a_filter_result(ds: Dataset) -> None:
    at = _page(ds, GALLERY)
    assert_ok(at)
    assert _tile_ids(at) == ["ov_000006", "ov_000003", "ov_000001", "ov_000005"]
    _selects(at)[1].check().run()  # the missed ship of ov_000003
    assert_ok(at)
    at.selectbox(key="_gal_bulk_tag").set_value("gt_error")
    at.text_input(key="_gal_bulk_note").set_value("the ship is a barge")
    next(b for b in at.button if b.label == "Tag 1 object").click().run()
    assert_ok(at)
    path = review.sidecar_for(ds.gt)
    state = review.load_state(path)
    box = review.Target(OV, "ov_000003", "gt", "bbox", 0)
    assert state.tags == {box: frozenset({"gt_error"})}
    assert state.notes[box].text == "the ship is a barge"
    assert not any(c.value for c in _selects(at)), "the selection is cleared after tagging"
    # Two tiles tagged at once on their queries, with a free tag.
    at.radio(key="_w_gal_tag_on").set_value("queries").run()
    _selects(at)[0].check().run()
    _selects(at)[3].check().run()
    at.text_input(key="_gal_bulk_new").set_value("tiny barge")
    next(b for b in at.button if b.label == "Tag 2 queries").click().run()
    assert_ok(at)
    assert review.load_state(path).query_tags(OV) == {
        "ov_000003": {"gt_error"}, "ov_000006": {"tiny barge"}, "ov_000005": {"tiny barge"}}
    # The new tag is a filter option at once (the page is redrawn, not only its tiles).
    assert "tiny barge" in at.multiselect(key="_w_gal_review_tags").options
    at.multiselect(key="_w_gal_review_tags").set_value(["tiny barge"]).run()
    _selects(at)[0].check().run()
    at.selectbox(key="_gal_bulk_tag").set_value("tiny barge")
    next(b for b in at.button if b.label == "Untag 1").click().run()
    assert_ok(at)
    assert _tile_ids(at) == ["ov_000005"], "an untagged query leaves the filtered gallery"
    review.tag(path, review.Target(OV, "ov_000006"), "tiny barge")
    at.multiselect(key="_w_gal_review_tags").set_value([]).run()
    _restart()
    at2 = _page(ds, GALLERY)
    at2.multiselect(key="_w_gal_review_tags").set_value(["gt_error"]).run()
    assert_ok(at2)
    assert _tile_ids(at2) == ["ov_000003"]
    assert "gt_error" in _selects(at2)[0].label.replace("\\", "")
    assert at2.query_params["grtag"] in ("gt_error", ["gt_error"])
    at2.multiselect(key="_w_gal_review_tags").set_value(["tiny barge"]).run()
    assert _tile_ids(at2) == ["ov_000006", "ov_000005"]
    # The explorer's review-tag filter sees the gallery's tags (same sidecar, same rule).
    goto(at2, EXPLORER)
    at2.run()
    at2.multiselect(key="_w_flt_review_tags").set_value(["gt_error"]).run()
    assert list(at2.dataframe[0].value["query_id"]) == ["ov_000003"]


def test_a_gallery_link_reproduces_the_same_tiles(ds: Dataset) -> None:
    at = _page(ds, GALLERY)
    at.radio(key="_w_gal_selector").set_value("predicted boxes").run()
    at.multiselect(key="_w_gal_outcomes").set_value(["TP"]).run()
    at.selectbox(key="_w_gal_sort").set_value("largest first").run()
    assert_ok(at)
    shown = _tile_ids(at)
    params = {k: v if isinstance(v, str) else v[0] for k, v in at.query_params.items()}
    assert params["gsel"] == "pred" and params["gout"] == "TP" and params["gsort"] == "largest"
    link = next(c.value for c in at.code if "Gallery?" in c.value)
    assert "gsel=pred" in link and "gout=TP" in link
    fresh = _gallery_after_restart(params)
    assert_ok(fresh)
    assert fresh.session_state["gal_selector"] == "predicted boxes"
    assert _tile_ids(fresh) == shown
    # Worked by hand: model_a's true positives are ov_000001's box and one of ov_000005's
    # two (the other is a duplicate); ov_000003's box overlaps its ship at IoU 48/232.
    # Largest first: 20 x 10 before 10 x 10.
    assert shown == ["ov_000005", "ov_000001"]


def test_gallery_page_number_is_in_the_link(demo: Path) -> None:
    at = app_on(None, TIMEOUT, gt_path=str(demo / "ground_truth.json"), images_dir=str(demo),
                pred_path=str(demo / "predictions" / "box_detector.json")).run()
    goto(at, GALLERY)
    at.run()
    first = _tile_ids(at)
    assert "gpage" not in at.query_params  # page 1 is the default
    at.number_input(key="_w_gal_page").set_value(2).run()
    assert_ok(at)
    second = _tile_ids(at)
    assert len(second) == 48 and second != first
    params = {k: v if isinstance(v, str) else v[0] for k, v in at.query_params.items()}
    assert params["gpage"] == "2"
    fresh = _gallery_after_restart(params)
    assert_ok(fresh)
    assert _tile_ids(fresh) == second


def test_tag_from_compare(ds: Dataset) -> None:
    at = _page(ds, COMPARE, cmp_b_path=str(ds.model_b))
    assert_ok(at)
    shown = at.selectbox(key="_w_cmp_query").value
    # The review panel waits in its lazy expander (issue 49).
    assert not [m for m in at.multiselect if m.label == "Tags of this query"]
    at.session_state["_w_cmp_review_open"] = True
    at.run()
    box = next(m for m in at.multiselect if m.label == "Tags of this query")
    box.set_value(["ambiguous_query"]).run()
    assert_ok(at)
    at.text_input(key="_rvc_new").set_value("B better")
    next(b for b in at.button if b.label == "Add tag").click().run()
    assert_ok(at)
    state = review.load_state(review.sidecar_for(ds.gt))
    assert state.tags == {review.Target(OV, shown): frozenset({"ambiguous_query", "B better"})}


def test_rename_and_delete_a_saved_view(ds: Dataset) -> None:
    at = _page(ds, EXPLORER)
    at.text_input(key="_view_name").set_value("misses")
    next(b for b in at.button if b.label == "Save view").click().run()
    path = review.sidecar_for(ds.gt)
    assert list(review.load_state(path).views) == ["misses"]
    assert not [t for t in at.text_input if t.key == "_view_new_name"]  # closed: not built
    at.session_state["_w_manage_views_open"] = True  # its lazy expander opened (issue 49)
    at.run()
    at.text_input(key="_view_new_name").set_value("misses of A")
    at.button(key="_view_rename").click().run()
    assert_ok(at)
    assert list(review.load_state(path).views) == ["misses of A"]
    assert any(m.value.startswith("[misses of A](") for m in at.sidebar.markdown)
    at.button(key="_view_delete").click().run()
    assert_ok(at)
    assert review.load_state(path).views == {}
    assert not any("Query_explorer?" in m.value for m in at.sidebar.markdown)
    events = [json.loads(x)["event"] for x in path.read_text().splitlines()]
    assert events == ["save_view", "rename_view", "delete_view"], "append-only"


def test_explorer_links_to_the_same_object_in_other_tasks(ds: Dataset) -> None:
    at = _page(ds, EXPLORER, selected={"vocabulary": "ov_000003"})
    card = card_html(at)  # the viewer's card
    link = html.unescape(re.search(r"href='([^']+)'[^>]*>Same object in other", card).group(1))
    assert "Annotation?" in link and "ann=a2" in link
    fresh = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"),
                              default_timeout=TIMEOUT)
    query = link.split("Annotation?", 1)[1].rstrip(")")
    from urllib.parse import parse_qsl

    fresh.query_params.update(dict(parse_qsl(query)))
    fresh.run()
    goto(fresh, ANNOTATION)
    fresh.run()
    assert_ok(fresh)
    assert fresh.session_state["ann_id"] == "a2"
    texts = [m.value for m in fresh.markdown]
    assert any("ship near the bridge" in t for t in texts)  # a2's referring query


def _per_sample(demo: Path, persona: str) -> dict[str, dict[str, dict]]:
    """Every task's per_sample rows by query id, from the evaluator directly."""
    out = {}
    for form in KEYS:
        s = load_samples(demo / "ground_truth.json", demo / "predictions" / f"{persona}.json",
                         form, modalities="segmentation,bbox,oriented_bbox")
        out[form] = {r["sample_id"]: r for r in evaluate_samples(s, 0.5)["per_sample"]}
    return out


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{round(x, 3):.3f}"


def test_annotation_page_shows_three_tasks_with_the_evaluators_numbers(demo: Path) -> None:
    doc = json.loads((demo / "ground_truth.json").read_text())
    by_form = {f: [r for r in doc["tasks"][k] if r.get("type") != "negative"]
               for f, k in KEYS.items()}
    ann = next(a["id"] for a in doc["annotations"]
               if all(any(r["ann_id"] == a["id"] for r in by_form[f]) for f in KEYS))
    pred = demo / "predictions" / "strong_localiser.json"
    at = app_on(None, TIMEOUT, gt_path=str(demo / "ground_truth.json"),
                images_dir=str(demo), pred_path=str(pred), ann_id=ann,
                auto_modalities=False).run()
    goto(at, ANNOTATION)
    at.run()
    assert_ok(at)
    assert [s.value for s in at.subheader if s.value in (
        "Open vocabulary", "Referring", "Reasoning")] == ["Open vocabulary", "Referring",
                                                          "Reasoning"]
    rows = _per_sample(demo, "strong_localiser")
    captions = [c.value for c in at.caption]
    texts = "\n".join(m.value for m in at.markdown)
    for form in KEYS:
        for q in (r for r in by_form[form] if r["ann_id"] == ann):
            row = rows[form][q["query_id"]]
            assert q["query_id"] in texts.replace("\\_", "_")
            seg = row["seg"]["iou"] if row["seg"] else None
            f1 = row["bbox"]["f1"] if row["bbox"] else None
            assert any(f"mask IoU {_fmt(seg)}" in c and f"HBB F1 {_fmt(f1)}" in c
                       for c in captions), (form, q["query_id"], seg, f1)
    assert at.query_params["ann"] in (ann, [ann])


def test_slices_by_query_form(demo: Path) -> None:
    pred = demo / "predictions" / "strong_localiser.json"
    at = app_on(None, TIMEOUT, gt_path=str(demo / "ground_truth.json"), images_dir=str(demo),
                pred_path=str(pred), slice_attr="query_form").run()
    goto(at, SLICES)
    at.run()
    assert_ok(at)
    frame = at.dataframe[0].value
    assert list(frame.iloc[:, 0]) == list(KEYS)
    doc = json.loads((demo / "ground_truth.json").read_text())
    targets = set.intersection(*({r["ann_id"] for r in doc["tasks"][k]
                                  if r.get("type") != "negative"} for k in KEYS.values()))
    counts = [sum(r["ann_id"] in targets and r.get("type") != "negative"
                  for r in doc["tasks"][k]) for k in KEYS.values()]
    assert list(frame["queries"]) == counts
    assert at.get("plotly_chart")


def test_a_task_that_cannot_be_evaluated_is_reported_not_a_traceback(ds: Dataset) -> None:
    doc = json.loads(ds.model_a.read_text())
    doc["tasks"]["reasoning"][0]["bbox"] = [{"bbox": [1, 2], "score": 0.5}]
    ds.model_a.write_text(json.dumps(doc))
    for page, state in ((ANNOTATION, {}), (SLICES, {"slice_attr": "query_form"})):
        at = _page(ds, page, **state)
        assert not at.exception, [e.value for e in at.exception]
        errors = " ".join(e.value for e in at.error)
        assert "Reasoning task of `model_a.json` could not be evaluated" in errors, errors
        assert "`rea_000001`" in errors and "model_a.json" in errors
