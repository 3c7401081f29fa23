"""The viewer's page wiring, by direct calls (issue 47): ``render``, its toolbar and view
options, the chip link, the card sent ahead, the background drawing and its cache of
ready views, the image's georeference and the scene's chips. Their only tests were AppTest
runs (``test_app_viewer*.py``, ``test_error_navigation.py``), seconds each: too slow for
mutmut. Here Streamlit is a recorder (``tests/st_recorder.py``) and the cached drawing steps are
replaced by fakes that record what they were given, so each test states which page state
feeds which widget, link, card or drawing.

The query is ``test_mutants_viewer.py``'s: a 200 x 100 image; the picker's boxes, in
order, GT HBB 1 (matched), GT HBB 2 (missed), pred HBB 1 (matched), pred HBB 2 and 3
(false), GT OBB 1 (missed), pred OBB 1 (false); its errors are picker boxes 1, 3, 4, 5, 6.
Every expected value below is worked out by hand from those boxes."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest
import st_recorder
from pyproj import CRS
from test_mutants_viewer import ROW, TABLE_ROW, _dense, _det, _row, _sample

from ovearth_core import georef
from ovearth_core.convert.chips import Chip
from ovearth_core.errors import OVEarthInputError
from ovearth_core.viz import overlay
from pages.common import analysis_data, data, state, viewer, viewer_card

IMAGES = Path("/data/images")
OPTIONS = "the options"
STAMP = (11, 22, 33, 44)
HEAD = "Query 2 of 7 <b>"
# UTM 31N, 0.5 m pixels, for an image of 400 x 300 (twice and three times the
# annotation's 200 x 100): in the annotation's pixels, 1 m across and 1.5 m down.
REF_IMAGE = georef.Georef("EPSG:32631", CRS.from_epsg(32631).to_wkt(), 32631,
                          (0.5, 0.0, 500_000.0, 0.0, -0.5, 4_000_000.0), 400, 300)
LABELS = tuple(f"box {k}" for k in range(7))
PICKER = viewer.Picker(LABELS, ("matched", "missed", "matched", "false positive",
                                "false positive", "missed", "false positive"),
                       ("c0", "c1", "c2", "c3", "c4", "c5", "c6"),
                       ("", "p1", "", "p3", "p4", "p5", "p6"))


def _run(sample: Any = None, row: Any = None, **more: Any) -> Any:
    entries = {"q1": SimpleNamespace(sample=sample or _sample(), row=row or ROW), **more}
    evaluated = SimpleNamespace(entry=entries.__getitem__,
                                samples=[e.sample for e in entries.values()])
    return SimpleNamespace(evaluation=SimpleNamespace(run=evaluated), gt="G", pred="P",
                           options=OPTIONS, images_dir=IMAGES)


def _drawn(**kw: Any) -> viewer.Drawn:
    base: dict[str, Any] = dict(figure=None, picture=b"VIEW", thumbnail=b"THUMB", notice=None,
                                scale=0.25, detail_shape=None, legend="LEGEND")
    return viewer.Drawn(**{**base, **kw})


VIEW_STATE: dict[str, Any] = dict(
    view_layers=["GT OBB", "GT HBB"], view_opacity=0.35, view_pixel_mode=1, view_labels=0,
    view_interactive=0, view_zoom="full image", view_link=False, view_review=True,
    view_focus=None)
CONTROLS = (("GT OBB", "GT HBB"), 0.35, True, False, False)


@pytest.fixture
def stamps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """``data.image_stamp`` recorded: every image's stamp is STAMP."""
    asked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(data, "image_stamp", lambda d, p: asked.append((d, p)) or STAMP)
    return asked


# ---- the run's key, the image's georeference, the scene's chips -----------------------

def test_the_drawing_key_names_files_options_folder_and_the_images_stamp(
        stamps: list) -> None:
    """``_key``: the GT and submission files, the options, the images folder as text (a
    cache key hashed alike for ``Path`` and ``str``) and the stamp of this sample's image
    in that folder (``_key_1``..``_5``)."""
    key = viewer._key(_run(), _sample(image_path="sub/b.tif"))
    assert key == ("G", "P", OPTIONS, "/data/images", STAMP)
    assert type(key[3]) is str
    assert stamps == [(IMAGES, "sub/b.tif")]


def test_the_georeference_is_scaled_to_the_annotations_pixels(
        monkeypatch: pytest.MonkeyPatch, stamps: list) -> None:
    """``_georef``: the image's georeference read from the images folder with that image's
    stamp, then put in the annotation's pixels: a 400 x 300 image annotated as 200 x 100
    is drawn stretched, so one annotation pixel is 2 image pixels across (1 m) and 3 down
    (1.5 m); the origin stays. No georeference: ``None``."""
    asked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(data, "image_georef", lambda *a: asked.append(a) or REF_IMAGE)
    ref = viewer._georef(_run(), _sample(image_path="sub/b.tif"))
    assert asked == [("/data/images", "sub/b.tif", STAMP)]
    assert stamps == [(IMAGES, "sub/b.tif")]
    assert ref.transform == (1.0, 0.0, 500_000.0, 0.0, -1.5, 4_000_000.0)
    assert (ref.width, ref.height) == (200, 100)
    monkeypatch.setattr(data, "image_georef", lambda *a: None)
    assert viewer._georef(_run(), _sample()) is None


def test_the_scene_chips_are_read_for_this_image_and_a_failure_is_said(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``_scene_chips``: the submission's chips of the sample's scene (the submission's
    file, the images folder as text, the image's path and the annotation's size, width
    first); a bad chip name or an unreadable file is said in a caption, its text escaped
    for Markdown (not with ``quiet``, the background drawing's), and gives ``None``."""
    rec = st_recorder.install(monkeypatch, viewer)
    asked: list[tuple[Any, ...]] = []
    scene = analysis_data.SceneChips([], {})
    monkeypatch.setattr(analysis_data, "scene_chips", lambda *a: asked.append(a) or scene)
    assert viewer._scene_chips(_run(), _sample(image_path="s/P1.png")) is scene
    assert asked == [("P", "/data/images", "s/P1.png", 200, 100)]

    def fail(error: Exception) -> None:
        def raise_(*a: Any) -> None:
            raise error
        monkeypatch.setattr(analysis_data, "scene_chips", raise_)

    fail(OVEarthInputError(["chip *P1* unread"]))
    assert viewer._scene_chips(_run(), _sample()) is None
    assert [c.args for c in rec.calls] == [
        ("The submission's chip names could not be read: 1 problem found in the input:\n"
         "  - chip \\*P1\\* unread",)]
    fail(OSError("gone"))
    assert viewer._scene_chips(_run(), _sample()) is None
    assert rec.calls[-1].args == ("The submission's chip names could not be read: gone",)
    rec.calls.clear()
    assert viewer._scene_chips(_run(), _sample(), quiet=True) is None
    assert rec.calls == []
    fail(ValueError("not ours"))
    with pytest.raises(ValueError):
        viewer._scene_chips(_run(), _sample())


# ---- the chips a picked object fell in ------------------------------------------------

# Chip A (unsized: no image, taken as a 1024-px chip) and chip B overlap on x 110..120; C
# lies elsewhere. B and C have images in the images folder.
CHIPS = [Chip("A", (10.0, 0.0, 120.0, 100.0), False, 1024, "the chip names' pattern"),
         Chip("B", (110.0, 0.0, 200.0, 100.0), True),
         Chip("C", (0.0, 0.0, 8.0, 8.0), True)]
SCENE = analysis_data.SceneChips(CHIPS, {"B": ("s/B.png", (90, 100)), "A": ("s/A.png",
                                                                             (110, 100)),
                                         "C": ("s/C.png", (8, 8))})
UNSIZED_SCENE = analysis_data.SceneChips(CHIPS, {"B": ("s/B.png", (90, 100))})


@pytest.fixture
def chip_page(monkeypatch: pytest.MonkeyPatch, stamps: list) -> SimpleNamespace:
    """The chip link's page: Streamlit recorded, each chip image's display (600 px wide,
    with a notice for B) and its outlined picture recorded."""
    rec = st_recorder.install(monkeypatch, viewer)
    displayed: list[tuple[Any, ...]] = []
    drawn: list[tuple[Any, ...]] = []

    def display(*a: Any) -> Any:
        displayed.append(a)
        return SimpleNamespace(notice=f"notice of {a[1]}", rgb=np.zeros((5, 600, 3)))

    monkeypatch.setattr(data, "display_image", display)
    monkeypatch.setattr(viewer, "chip_picture",
                        lambda shown, chip, outline, colour: drawn.append(
                            (chip.name, outline.tolist(), colour, shown.notice))
                        or f"picture {chip.name}")
    return SimpleNamespace(st=rec, displayed=displayed, drawn=drawn, stamps=stamps)


def test_a_picked_object_on_a_seam_names_its_chips_and_opens_those_with_images(
        chip_page: SimpleNamespace) -> None:
    """The picked box (the focus of this query), missed or false on a scene merged from
    chips: a caption says where it fell (the picker's place of that box, its status) and
    which of its chips has no image (taken at its side, from its source); each chip it
    fell in that has an image opens in an expander: the chip image (from the images
    folder, with its stamp, at its own size) with the box outlined in the picker's colour
    of that box, at most 512 px wide, and which part of the scene it is."""
    rec = chip_page.st
    rec.session_state["view_focus"] = ("q1", 1)  # GT HBB 2, x 100..150: chips A and B
    viewer._chip_link("q1", _sample(), ROW, PICKER, UNSIZED_SCENE, _run())
    caption, expander, info, image, where = rec.calls
    assert caption.name == "caption" and caption.args == (
        "The picked missed object is p1 (no chip image in the images folder for A: taken as "
        "a 1024-px chip, from the chip names' pattern).",)
    assert (expander.name, expander.args) == ("expander", ("Chip B ↗",))
    assert chip_page.stamps == [(IMAGES, "s/B.png")]
    assert chip_page.displayed == [("/data/images", "s/B.png", 90, 100, STAMP)]
    assert (info.name, info.args, info.kwargs, info.where) == (
        "info", ("notice of s/B.png",), {"icon": ":material/broken_image:"}, ("expander",))
    rect = [[100.0, 10.0], [150.0, 10.0], [150.0, 90.0], [100.0, 90.0], [100.0, 10.0]]
    assert chip_page.drawn == [("B", rect, "c1", "notice of s/B.png")]
    assert (image.name, image.args, image.kwargs, image.where) == (
        "image", ("picture B",), {"width": 512}, ("expander",))
    assert (where.name, where.args, where.where) == (
        "caption", ("s/B.png: x 110–200, y 0–100 of the scene; the object outlined.",),
        ("expander",))


def test_each_chip_with_an_image_opens_and_a_narrow_one_at_its_width(
        chip_page: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chip the box fell in, in the scene's order, whose image is there (not a
    chip it missed, C, though C's image is there too); all sized: no "no chip image"; a
    chip image narrower than 512 px shows at its own width; no notice, no ``st.info``.
    The picked box is the focus's own (pred HBB 2, x 160..190, in B alone)."""
    rec = chip_page.st
    monkeypatch.setattr(data, "display_image", lambda *a: SimpleNamespace(
        notice=None, rgb=np.zeros((5, 300 + len(a[1]), 3))))
    sized = [Chip("A", CHIPS[0].box, True), *CHIPS[1:]]
    rec.session_state["view_focus"] = ("q1", 1)
    viewer._chip_link("q1", _sample(), ROW, PICKER, analysis_data.SceneChips(
        sized, SCENE.files), _run())
    assert rec.calls[0].args == ("The picked missed object is p1.",)
    assert [c.args[0] for c in rec.named("expander")] == ["Chip A ↗", "Chip B ↗"]
    assert [c.kwargs["width"] for c in rec.named("image")] == [307, 307]
    assert rec.named("info") == []
    rec.calls.clear()
    rec.session_state["view_focus"] = ("q1", 3)
    viewer._chip_link("q1", _sample(), ROW, PICKER, analysis_data.SceneChips(
        sized, SCENE.files), _run())
    assert rec.calls[0].args == ("The picked false positive object is p3.",)
    assert [c.args[0] for c in rec.named("expander")] == ["Chip B ↗"]
    assert chip_page.drawn[-1] == ("B", [[160.0, 60.0], [190.0, 60.0], [190.0, 95.0],
                                         [160.0, 95.0], [160.0, 60.0]], "c3", None)


def test_every_chip_without_an_image_is_named_the_first_ones_side_said(
        chip_page: SimpleNamespace) -> None:
    """Both chips of the seam without an image: both named, in the scene's order, and the
    side and source of the first of them (A: 1,024 px from the names' pattern, not B's
    512 px from ImgSplit's default); no expander (no image to open)."""
    unsized = [CHIPS[0], Chip("B", CHIPS[1].box, False, 512, "ImgSplit's default")]
    chip_page.st.session_state["view_focus"] = ("q1", 1)
    viewer._chip_link("q1", _sample(), ROW, PICKER, analysis_data.SceneChips(unsized, {}),
                      _run())
    assert [(c.name, c.args) for c in chip_page.st.calls] == [("caption", (
        "The picked missed object is p1 (no chip image in the images folder for A, B: taken "
        "as a 1024-px chip, from the chip names' pattern).",))]


@pytest.mark.parametrize("focus, scene", [
    (None, SCENE), (("q2", 1), SCENE), (("q1", 0), SCENE), (("q1", 2), SCENE),
    (("q1", 7), SCENE), (("q1", 1), None)])
def test_no_chip_link_without_a_picked_astray_box_of_this_query_in_a_chipped_scene(
        chip_page: SimpleNamespace, focus: Any, scene: Any) -> None:
    """Nothing is said for no focus, another query's box, a matched box (no place), a
    box past the picker's last (7 of 7 boxes), or a scene not merged from chips."""
    chip_page.st.session_state["view_focus"] = focus
    viewer._chip_link("q1", _sample(), ROW, PICKER, scene, _run())
    assert chip_page.st.calls == []


# ---- the toolbar and the view options --------------------------------------------------

SHOWN = ("GT HBB", "predicted HBB", "GT OBB", "predicted OBB")


def _toolbar(monkeypatch: pytest.MonkeyPatch, review: bool, **ss: Any
             ) -> st_recorder.Recorder:
    rec = st_recorder.install(monkeypatch, viewer, {
        **VIEW_STATE, "view_layers": ["GT OBB", "GT mask", "GT HBB"], "view_zoom": "GT only",
        **ss})
    viewer._toolbar(review, SHOWN)
    return rec


def test_the_toolbars_layer_pills_offer_the_shown_layers_and_keep_the_chosen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The layer pills (first column) offer the layers this benchmark has geometry for,
    several at once; their value is the chosen layers among those, in the order chosen
    (GT mask, not offered, is not in the pills); a change goes to ``_on_layers`` with the
    offered layers."""
    rec = _toolbar(monkeypatch, True)
    pills = rec.one("pills")
    assert pills.where == ("col0",) and pills.args == ("Layers", SHOWN)
    assert pills.kwargs == {"selection_mode": "multi", "key": "_w_view_layers",
                            "on_change": viewer._on_layers, "args": (SHOWN,),
                            "help": "Only the layers this benchmark has geometry for."}
    assert rec.session_state["_w_view_layers"] == ["GT OBB", "GT HBB"]
    assert rec.session_state["view_layers"] == ["GT OBB", "GT mask", "GT HBB"]  # kept


def test_the_toolbar_has_a_review_switch_only_with_a_review_panel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a review panel: four columns (layers, view options, "Tag / note", "Link"),
    bottom-aligned; without: three, the link switch last. Each switch is bound to its own
    state (``view_review``, ``view_link``: the widget shows the stored value, a change
    copies back)."""
    rec = _toolbar(monkeypatch, True)
    columns = rec.one("columns")
    assert columns.args == ([5.4, 1.4, 1.3, 1.0],)
    assert columns.kwargs == {"vertical_alignment": "bottom"}
    review, link = (c for c in rec.named("toggle") if c.where[0] in ("col2", "col3"))
    assert (review.where, review.args) == (("col2",), ("Tag / note",))
    assert review.kwargs == {
        "help": "The review panel of this query and its boxes (stays open from query to "
                "query).", "key": "_w_view_review", "on_change": state._copy_back,
        "args": ("view_review", None)}
    assert (link.where, link.args) == (("col3",), ("Link",))
    assert link.kwargs == {"help": "The link to this view, to copy.", "key": "_w_view_link",
                           "on_change": state._copy_back, "args": ("view_link", None)}
    assert (rec.session_state["_w_view_review"], rec.session_state["_w_view_link"]) == (
        True, False)
    rec = _toolbar(monkeypatch, False, view_link=True)
    assert rec.one("columns").args == ([5.4, 1.4, 1.0],)
    (link,) = (c for c in rec.named("toggle") if c.where[0].startswith("col2"))
    assert link.args == ("Link",) and rec.session_state["_w_view_link"] is True
    assert "Tag / note" not in [c.args[0] for c in rec.named("toggle")]


def test_the_view_options_sit_in_a_popover_each_bound_to_its_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The other view options are in the second column's "View options" popover: mask
    opacity 0 to 1 by 0.05, the TP/FP/FN pixels, box labels and interactive switches and
    the zoom a query opens on, each widget bound to its state key. The popover is lazy (issue
    49): keyed, a rerun when opened or closed (its widgets are built only while it is open:
    ``test_app_viewer.py``)."""
    rec = _toolbar(monkeypatch, True)
    popover = rec.one("popover")
    assert (popover.where, popover.args, popover.kwargs) == (
        ("col1",), ("View options",),
        {"width": "stretch", "key": viewer.VIEW_OPTIONS_OPEN, "on_change": "rerun"})
    inside = [c for c in rec.calls if c.where == ("col1", "popover")]
    assert [c.name for c in inside] == ["slider", "toggle", "toggle", "toggle", "selectbox"]
    slider, pixels, labels, interactive, zoom = inside
    assert slider.args == ("Mask opacity", 0.0, 1.0) and slider.kwargs["step"] == 0.05
    assert pixels.args == ("TP/FP/FN pixels",)
    assert labels.args == ("Box labels",) and labels.kwargs["help"] == (
        "Off: no label hides an object; the box picker below the view (and, in the "
        "interactive view, each outline's hover text) gives IoU and score.")
    assert interactive.args == ("Interactive (zoom, pan, hover)",)
    assert interactive.kwargs["help"] == ("A plotly figure instead of one picture drawn on "
                                          "the server (which switches queries faster).")
    assert zoom.args == ("Open zoomed to", overlay.ZOOM_TARGETS)
    assert zoom.kwargs["help"] == ("GT target: the GT objects, or the smallest one alone "
                                   "when all of them would be too small to see")
    for widget, name in ((slider, "view_opacity"), (pixels, "view_pixel_mode"),
                         (labels, "view_labels"), (interactive, "view_interactive"),
                         (zoom, "view_zoom")):
        assert (widget.kwargs["key"], widget.kwargs["on_change"], widget.kwargs["args"]) == (
            f"_w_{name}", state._copy_back, (name, None))
    ss = rec.session_state
    assert (ss["_w_view_opacity"], ss["_w_view_pixel_mode"], ss["_w_view_labels"],
            ss["_w_view_interactive"], ss["_w_view_zoom"]) == (0.35, 1, 0, 0, "GT only")
    assert pixels.kwargs.keys() == {"key", "on_change", "args"}


def test_a_zoom_setting_that_is_no_target_falls_back_to_the_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The zoom selectbox is bound with its targets as options: a stored value that is
    none of them (an old link's) becomes the first, "GT target", in the state too."""
    rec = _toolbar(monkeypatch, False, view_zoom="whole scene")
    assert rec.session_state["view_zoom"] == rec.session_state["_w_view_zoom"] == "GT target"


# ---- the views drawn to the end, the background drawing -------------------------------

@pytest.fixture
def ready(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[Any, ...], Any]:
    fresh: dict[tuple[Any, ...], Any] = {}
    monkeypatch.setattr(viewer, "_READY", fresh)
    monkeypatch.setattr(viewer, "_READY_MAX", 3)
    return fresh


def test_static_views_are_kept_ready_the_oldest_dropped_past_the_limit(
        monkeypatch: pytest.MonkeyPatch, ready: dict) -> None:
    """``_drawn_ready`` draws through ``_drawn`` (given exactly its arguments) and keeps
    each static view by those arguments, the last used last: with room for 3, drawing a,
    b, c, a again, then d drops b (the least recently drawn), not a. An interactive view
    (no picture) is not kept: no card is built from it."""
    asked: list[tuple[Any, ...]] = []
    pictures = {"qa": b"A", "qb": b"B", "qc": b"C", "qd": b"D", "qi": None}

    def drawing(run: Any, key: Any, query_id: str, region: Any, controls: Any) -> Any:
        asked.append((run, key, query_id, region, controls))
        return _drawn(picture=pictures[query_id])

    monkeypatch.setattr(viewer, "_drawn", drawing)
    out = viewer._drawn_ready("R", ("k",), "qa", (1, 2, 3, 4), CONTROLS)
    assert out.picture == b"A" and asked == [("R", ("k",), "qa", (1, 2, 3, 4), CONTROLS)]
    assert list(ready) == [(("k",), "qa", (1, 2, 3, 4), CONTROLS)]
    assert ready[(("k",), "qa", (1, 2, 3, 4), CONTROLS)].picture == b"A"
    for q in ("qb", "qc", "qa", "qd"):
        viewer._drawn_ready("R", ("k",), q, (0, 0, 1, 1), CONTROLS)
    assert [k[1] for k in ready] == ["qc", "qa", "qd"]
    assert len(ready) == 3  # the first "qa" (another region) and "qb" dropped
    viewer._drawn_ready("R", ("k",), "qi", (0, 0, 1, 1), CONTROLS)
    assert "qi" not in [k[1] for k in ready] and len(ready) == 3


def test_a_redrawn_view_moves_to_the_end_and_keeps_its_place_once(
        monkeypatch: pytest.MonkeyPatch, ready: dict) -> None:
    """Drawing a kept view again moves it last (it is not dropped next) and it is kept
    once; three views fill the room exactly (none dropped at 3)."""
    monkeypatch.setattr(viewer, "_drawn", lambda *a: _drawn(picture=a[2].encode()))
    for q in ("a", "b", "c"):
        viewer._drawn_ready("R", "k", q, (0, 0, 1, 1), CONTROLS)
    assert [k[1] for k in ready] == ["a", "b", "c"]
    viewer._drawn_ready("R", "k", "a", (0, 0, 1, 1), CONTROLS)
    assert [k[1] for k in ready] == ["b", "c", "a"]
    viewer._drawn_ready("R", "k", "d", (0, 0, 1, 1), CONTROLS)
    assert [k[1] for k in ready] == ["c", "a", "d"]


@pytest.fixture
def background(monkeypatch: pytest.MonkeyPatch, stamps: list) -> SimpleNamespace:
    """The background drawing's steps recorded: the ready view, the picker, the chips
    (with their ``quiet``), the georeference, the log."""
    out = SimpleNamespace(drawn=[], picker=[], chips=[], log=[])
    monkeypatch.setattr(viewer, "_drawn_ready", lambda *a: out.drawn.append(a))
    monkeypatch.setattr(viewer, "_picker", lambda *a: out.picker.append(a))
    monkeypatch.setattr(viewer, "_georef", lambda run, sample: ("ref", run.gt,
                                                                sample.sample_id))
    monkeypatch.setattr(viewer, "_scene_chips", lambda run, sample, quiet=False: out.chips.append(
        quiet) or ("scene", run.pred, sample.sample_id))
    monkeypatch.setattr(state, "LOG", SimpleNamespace(info=lambda *a: out.log.append(a)))
    return out


KEY = ("G", "P", OPTIONS, "/data/images", STAMP)


def test_the_background_drawing_draws_the_view_the_query_opens_on(
        background: SimpleNamespace) -> None:
    """``_prefetch`` draws the query as its zoom setting opens it, with the view options
    given, and builds its box picker with the image's georeference and the scene's chips
    read quietly (a failure is said when the query is shown), both of this run. A dense
    query opened on "GT target" opens on its first error: GT HBB 1 matched, GT HBB 2
    (50..54, 10..14) missed: the 96-px square around it shifted inside the image, (4, 0,
    100, 96), not the view of the smallest GT box (GT HBB 1's, at the origin) that "GT
    target" opens on without errors; "full image" on the whole 2,000 x 500 image."""
    run = _run(_dense(), _row(_det(40, 1, [(0, 0, 0.9)]), None))
    viewer._prefetch(run, "q1", "GT target", CONTROLS)
    assert background.drawn == [(run, KEY, "q1", (4.0, 0.0, 100.0, 96.0), CONTROLS)]
    assert background.picker == [(run, KEY, "q1", ("ref", "G", "q1"), ("scene", "P", "q1"))]
    assert background.chips == [True] and background.log == []
    viewer._prefetch(run, "q1", "full image", CONTROLS)
    assert background.drawn[-1][3] == (0.0, 0.0, 2000.0, 500.0)


def test_a_failed_background_drawing_is_logged_not_raised(
        background: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any error of the background drawing is logged with the query (it is drawn again,
    and its problem shown, when the query opens); the picker is not built after it."""
    def fail(*a: Any) -> None:
        raise ValueError("no pixels")

    monkeypatch.setattr(viewer, "_drawn_ready", fail)
    viewer._prefetch(_run(), "q1", "full image", CONTROLS)
    ((text, query_id, err),) = background.log
    assert (text, query_id, str(err)) == ("prefetch of %s failed: %s", "q1", "no pixels")
    assert background.picker == []


def test_prefetch_queues_each_query_in_order_with_the_zoom_and_view_options(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``prefetch`` hands each query to the one background worker, in order, skipping
    ``None`` (no next query), with the zoom setting and the view options read now."""
    rec = st_recorder.install(monkeypatch, viewer, dict(VIEW_STATE, view_zoom="GT only"))
    queued: list[tuple[Any, ...]] = []
    monkeypatch.setattr(viewer, "_PREFETCH", SimpleNamespace(
        submit=lambda *a: queued.append(a)))
    viewer.prefetch("R", "q2", None, "q3")
    assert queued == [(viewer._prefetch, "R", "q2", "GT only", CONTROLS),
                      (viewer._prefetch, "R", "q3", "GT only", CONTROLS)]
    assert rec.calls == []


# ---- the card sent ahead ----------------------------------------------------------------

@pytest.fixture
def ahead_page(monkeypatch: pytest.MonkeyPatch, stamps: list, ready: dict) -> Any:
    rec = st_recorder.install(monkeypatch, viewer, dict(VIEW_STATE))
    monkeypatch.setattr(state, "annotation_url", lambda ann: "/A")
    monkeypatch.setattr(data, "image_georef", lambda *a: REF_IMAGE)
    return rec


def _ahead(run: Any, **kw: Any) -> Any:
    return viewer.card_ahead(run, "q1", {**TABLE_ROW, "outcome": "hit <1>"}, tags="t1",
                             head=HEAD, url="?q=q1", nav=(True, False), **kw)


def test_the_card_ahead_is_built_from_the_ready_view_of_its_opening(ahead_page: Any,
                                                                    ready: dict) -> None:
    """The card the navigator would open: only from a static view drawn already for
    this query's opening region (the zoom setting's: "full image", the whole image) and
    the view options now; it carries the navigator's head and buttons, the error line
    (no box picked: the count), the tags, the table row, the map note of the view's
    centre (the image's georeference in the annotation's pixels: (100, 50) is 100 m east
    and 75 m south of the origin) and the address bar's query string."""
    ready[(KEY, "q1", (0.0, 0.0, 200.0, 100.0), CONTROLS)] = _drawn()
    card = _ahead(_run())
    html = card["html"]
    assert card["url"] == "?q=q1"
    assert set(card["pictures"].values()) == {b"VIEW", b"THUMB"}
    assert "<p class='ov-nav'>Query 2 of 7 &lt;b&gt;</p>" in html
    assert "data-go='prev'>" in html and "data-go='next' disabled>" in html
    assert ("<p class='ov-errnav'>5 box errors (missed or false) · “Next error” opens the "
            "first · Shift+→</p>") in html
    assert "Showing x 0–200, y 0–100 of the 200 × 100 image." in html
    assert "View centre: EPSG:32631 X 500,100.00, Y 3,999,925.00 · " in html
    assert "Review tags: t1" in html and "Outcome: <b>hit &lt;1&gt;</b>" in html
    assert "<code>q1</code>" in html


def test_a_dense_querys_card_ahead_opens_on_its_first_error(ahead_page: Any,
                                                           ready: dict) -> None:
    """Opened on "GT target", a dense query's card ahead is the view of its first error
    (the 96-px square at the origin), its error line "Error 1 of 41" (40 missed GT boxes,
    one false prediction), "Previous error" disabled."""
    ahead_page.session_state["view_zoom"] = "GT target"
    ready[(KEY, "q1", (0.0, 0.0, 96.0, 96.0), CONTROLS)] = _drawn()
    card = _ahead(_run(_dense(), _row(_det(40, 1, []), None)))
    assert ("<p class='ov-errnav'>Error 1 of 41 · missed · GT HBB 1 · Shift+← / Shift+→"
            "</p>") in card["html"]
    assert "data-go='prev_err' disabled>" in card["html"]
    assert "Showing x 0–96, y 0–96 of the 2000 × 500 image." in card["html"]


def test_a_card_ahead_without_navigator_or_review_has_neither(ahead_page: Any,
                                                              ready: dict) -> None:
    """By default (no head, no buttons, no tags, no query string) the card ahead opens on
    the view itself, names no review tags and leaves the address bar alone (``url``
    ``None``)."""
    ready[(KEY, "q1", (0.0, 0.0, 200.0, 100.0), CONTROLS)] = _drawn()
    card = viewer.card_ahead(_run(), "q1", TABLE_ROW)
    assert card["html"].startswith(viewer._CARD_CSS + "<div class='ov-card'>")
    assert "class='ov-nav'" not in card["html"] and "Review tags" not in card["html"]
    assert card["url"] is None


@pytest.mark.parametrize("change", [
    {"view_interactive": 1}, {"view_focus": ("q1", 0)}, {"view_opacity": 0.4},
    {"view_layers": ["GT HBB", "GT OBB"]}, {"view_pixel_mode": 0}])
def test_no_card_ahead_unless_its_static_view_is_ready(ahead_page: Any, ready: dict,
                                                       change: dict[str, Any]) -> None:
    """No card ahead in the interactive view, for a query with a picked box (it reopens
    zoomed to that box), or when the view ready was drawn with other view options or for
    another region (the dense query's test)."""
    ready[(KEY, "q1", (0.0, 0.0, 200.0, 100.0), CONTROLS)] = _drawn()
    assert _ahead(_run()) is not None
    ahead_page.session_state.update(change)
    assert _ahead(_run()) is None


def test_a_picked_box_of_another_query_still_sends_the_card_ahead(ahead_page: Any,
                                                                   ready: dict) -> None:
    """A box picked in the query shown now does not stop the next query's card."""
    ready[(KEY, "q1", (0.0, 0.0, 200.0, 100.0), CONTROLS)] = _drawn()
    ahead_page.session_state["view_focus"] = ("q0", 2)
    assert _ahead(_run()) is not None


def test_no_card_ahead_for_an_image_with_a_notice(ahead_page: Any, ready: dict) -> None:
    """An image that could not be read is said outside the card: no card ahead for it."""
    ready[(KEY, "q1", (0.0, 0.0, 200.0, 100.0), CONTROLS)] = _drawn(notice="unreadable")
    assert _ahead(_run()) is None


# ---- render ---------------------------------------------------------------------------

@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch, stamps: list) -> SimpleNamespace:
    """``render``'s page: Streamlit recorded; every step it delegates recorded with where
    it was drawn (the containers entered at the call)."""
    rec = st_recorder.install(monkeypatch, viewer, dict(VIEW_STATE))
    out = SimpleNamespace(st=rec, log=[], shown=[], drawn=_drawn())

    def log(name: str, result: Any = None) -> Any:
        def record(*a: Any, **kw: Any) -> Any:
            out.log.append((name, a, rec.where))
            return result() if callable(result) else result
        return record

    monkeypatch.setattr(viewer, "_toolbar", log("toolbar"))
    monkeypatch.setattr(state, "view_params", lambda q: {"query": q, "zoom": "z"})
    monkeypatch.setattr(state, "view_url", lambda **p: "http://h/?" + "&".join(
        f"{k}={v}" for k, v in p.items()))
    monkeypatch.setattr(state, "annotation_url", lambda ann: "/A")
    monkeypatch.setattr(data, "image_georef", lambda *a: REF_IMAGE)
    monkeypatch.setattr(analysis_data, "scene_chips", lambda *a: SCENE)
    monkeypatch.setattr(viewer, "_picker", log("picker", PICKER))
    monkeypatch.setattr(viewer, "_drawn_ready", log("drawn", lambda: out.drawn))
    monkeypatch.setattr(viewer, "suppressed_panel", log("suppressed"))
    monkeypatch.setattr(viewer, "_object_picker", log("object picker"))
    monkeypatch.setattr(viewer, "_chip_link", log("chip link"))
    monkeypatch.setattr(viewer_card, "slot", lambda: rec.container(key=viewer_card.SLOT))

    def show(card: Any, ahead: Any = None, on_nav: Any = None) -> None:
        out.shown.append((card, ahead, on_nav))
        out.log.append(("card", (), rec.where))
    monkeypatch.setattr(viewer_card, "show", show)
    return out


def _render(page: SimpleNamespace, **kw: Any) -> Any:
    run = _run()
    viewer.render(run, "q1", {**TABLE_ROW, "outcome": "hit <1>"},
                  review=kw.pop("review", lambda: page.log.append(("review", (), ()))),
                  tags="t1", head=HEAD, url="?q=q1", nav=(True, False), **kw)
    return run


def _logged(page: SimpleNamespace, name: str) -> list[tuple[Any, ...]]:
    return [entry for entry in page.log if entry[0] == name]


def test_the_toolbar_offers_the_benchmarks_layers_and_render_does_not_draw_it(
        page: SimpleNamespace) -> None:
    """The toolbar offers the layers the evaluated samples have geometry for (boxes and
    oriented boxes, no masks), with the review switch when there is a review panel; it
    is drawn apart from the viewer (``render`` draws none: "Next" does not send it again,
    issue 49)."""
    run = _render(page)
    assert _logged(page, "toolbar") == []
    viewer.toolbar(run, review=True)
    assert _logged(page, "toolbar") == [("toolbar", (True, SHOWN), ())]
    page.log.clear()
    viewer.toolbar(run, review=False)
    assert _logged(page, "toolbar") == [("toolbar", (False, SHOWN), ())]


def test_render_on_a_picked_box_zooms_to_it_and_steps_through_errors_from_it(
        page: SimpleNamespace) -> None:
    """A box picked in this query (pred HBB 2, x 160..190, y 60..95, picker box 3): the
    view is its 96-px square shifted inside the 200 x 100 image, (104, 4, 200, 100),
    drawn with the view options; the picker gets the run's key, the image's
    georeference in the annotation's pixels and the scene's chips; the card's error line
    is that box's, "Error 2 of 5"; the card's map note is the view's centre (152, 52):
    X 500,000 + 152, Y 4,000,000 - 1.5 x 52; the card ahead is not sent (the picked box's
    chips are said outside the card); Shift+→ focuses the next error (picker box 4),
    Shift+← the previous (box 1), and the buttons go to ``on_nav``."""
    page.st.session_state["view_focus"] = ("q1", 3)
    moves: list[str] = []
    run = _render(page, ahead=lambda: {"next": "card"}, on_nav=moves.append)
    ((_, (p_run, p_key, p_query, p_ref, p_scene), _),) = _logged(page, "picker")
    assert (p_run, p_key, p_query, p_scene) == (run, KEY, "q1", SCENE)
    assert p_ref.transform == (1.0, 0.0, 500_000.0, 0.0, -1.5, 4_000_000.0)
    assert _logged(page, "drawn") == [("drawn", (run, KEY, "q1", (104.0, 4.0, 200.0, 100.0),
                                                 CONTROLS), ())]
    ((card, ahead, navigate),) = page.shown
    assert ahead is None and card["url"] == "?q=q1"
    html = card["html"]
    assert ("<p class='ov-errnav'>Error 2 of 5 · false positive · pred HBB 2 · Shift+← / "
            "Shift+→</p>") in html
    assert "data-go='prev_err'>" in html and "data-go='next_err'>" in html
    assert "<p class='ov-nav'>Query 2 of 7 &lt;b&gt;</p>" in html
    assert "data-go='prev'>" in html and "data-go='next' disabled>" in html
    assert "Showing x 104–200, y 4–100 of the 200 × 100 image." in html
    assert "View centre: EPSG:32631 X 500,152.00, Y 3,999,922.00 · " in html
    assert "Review tags: t1" in html and "Outcome: <b>hit &lt;1&gt;</b>" in html
    assert set(card["pictures"].values()) == {b"VIEW", b"THUMB"}
    navigate("next_err")
    assert page.st.session_state["view_focus"] == ("q1", 4)
    navigate("prev_err")
    assert page.st.session_state["view_focus"] == ("q1", 1)
    navigate("next")
    navigate("prev")
    assert moves == ["next", "prev"]


def test_render_static_then_draws_the_panels_under_the_card(page: SimpleNamespace) -> None:
    """Under the card's place: what NMS-AP removed, the box picker of the picker's
    labels, the chip link of the picked box, the review panel (its switch on), what the
    page draws under the viewer (``after``); then the card, last, into its place (made
    before all of them: the card's arrival is the run's end, issue 49); no interactive
    figure, no columns."""
    run = _render(page, after=lambda: page.log.append(("after", (), page.st.where)))
    names = [entry[0] for entry in page.log]
    assert names[-6:] == ["suppressed", "object picker", "chip link", "review", "after",
                          "card"]
    assert [e[2] for e in page.log[-6:]] == [()] * 5 + [("container",)]
    assert page.st.named("container") == [
        st_recorder.Call("container", (), {"key": viewer_card.SLOT})]
    assert _logged(page, "suppressed") == [("suppressed", (run, "q1"), ())]
    assert _logged(page, "object picker") == [("object picker", ("q1", LABELS), ())]
    ((_, (q, sample, row, picker, scene, c_run), _),) = _logged(page, "chip link")
    assert (q, sample.sample_id, row, picker, scene, c_run) == ("q1", "q1", ROW, PICKER,
                                                                SCENE, run)
    assert page.st.named("plotly_chart", "columns", "code") == []


def test_render_sends_the_card_ahead_unless_something_is_said_outside_the_card(
        page: SimpleNamespace) -> None:
    """No box picked: the view opens on the zoom setting ("full image": the whole
    image), the error line counts the errors, and the cards ahead go with the card. An
    image with a notice: the notice is said (escaped for Markdown) above the card and
    no card is sent ahead. A box of another query, or a number past this query's boxes,
    is not a picked box: the view opens as the zoom setting says."""
    calls: list[int] = []
    _render(page, ahead=lambda: calls.append(1) or {"next": "card"})
    ((card, ahead, _),) = page.shown
    assert ahead == {"next": "card"} and calls == [1]
    assert "Showing x 0–200, y 0–100 of the 200 × 100 image." in card["html"]
    assert "5 box errors (missed or false)" in card["html"]
    # nothing else drawn by render itself than the card's place
    assert page.st.calls == [st_recorder.Call("container", (), {"key": viewer_card.SLOT})]
    page.drawn = _drawn(notice="bad *pixels*")
    page.shown.clear()
    _render(page, ahead=lambda: calls.append(2) or {"next": "card"})
    assert page.shown[0][1] is None and calls == [1]
    info = page.st.one("info")
    assert info.args == ("bad \\*pixels\\*",) and info.kwargs == {
        "icon": ":material/broken_image:"}
    page.drawn = _drawn()
    for focus in (("q2", 3), ("q1", 7)):
        page.shown.clear()
        page.log.clear()
        page.st.session_state["view_focus"] = focus
        _render(page)
        assert _logged(page, "drawn")[0][1][3] == (0.0, 0.0, 200.0, 100.0)
        assert "5 box errors" in page.shown[0][0]["html"]


def test_render_opens_a_dense_query_on_its_first_error(page: SimpleNamespace) -> None:
    """A dense query on "GT target", no box picked: the view of its first error (GT HBB
    1 matched, GT HBB 2 at 50..54, 10..14 missed: (4, 0, 100, 96), not the smallest GT
    box's view at the origin), and the error line is that error's, "Error 1 of 39" (the
    39 GT boxes left unmatched; the one prediction matched GT HBB 1)."""
    page.st.session_state["view_zoom"] = "GT target"
    run = _run(_dense(), _row(_det(40, 1, [(0, 0, 0.9)]), None))
    viewer.render(run, "q1", TABLE_ROW, nav=(True, True))
    assert _logged(page, "drawn")[0][1][3] == (4.0, 0.0, 100.0, 96.0)
    assert "<p class='ov-errnav'>Error 1 of 39 · missed · GT HBB 2 · " in page.shown[0][0]["html"]


def test_render_by_default_has_no_navigator_review_or_address(page: SimpleNamespace) -> None:
    """Without head, buttons, tags, query string or cards ahead: the card opens on the
    view, names no review tags, leaves the address bar alone, sends nothing ahead; no
    review panel is drawn (the toolbar's review switch: the toolbar's test above)."""
    viewer.render(_run(), "q1", TABLE_ROW)
    ((card, ahead, _),) = page.shown
    assert card["html"].startswith(viewer._CARD_CSS + "<div class='ov-card'>")
    assert "Review tags" not in card["html"] and card["url"] is None and ahead is None
    assert _logged(page, "review") == []


def test_render_without_a_review_switch_on_draws_no_review(page: SimpleNamespace) -> None:
    """The review panel is drawn only with its switch on; no review panel: nothing."""
    page.st.session_state["view_review"] = False
    _render(page)
    assert _logged(page, "review") == []
    page.st.session_state["view_review"] = True
    _render(page, review=None)
    assert _logged(page, "review") == []


def test_render_with_the_link_switch_shows_this_views_link(page: SimpleNamespace) -> None:
    """The link switch on: a caption says what the link holds and the link of this
    query's view (its parameters) is shown as code, wrapped, no language."""
    page.st.session_state["view_link"] = True
    _render(page)
    caption, code = page.st.named("caption", "code")[:2]
    assert caption.args == ("Link to this view (dataset, submission, options, filters, "
                            "query, picked box, zoom, layers and view options):",)
    assert (code.name, code.args, code.kwargs) == (
        "code", ("http://h/?query=q1&zoom=z",), {"language": None, "wrap_lines": True})


def test_render_interactive_draws_the_figure_beside_the_facts(page: SimpleNamespace) -> None:
    """The interactive view: the card holds only the navigator (its head, buttons and the
    picked box's error line: no view, no card ahead), its buttons still stepping through
    errors; then two columns, 3 : 1.25. Left: the image's notice, the figure (scroll
    zooms), a caption (the full-resolution window first, then how to zoom, then the map
    note of the view's centre), the metric table by modality and its IoU note, and the
    panels; right: the query's facts, the thumbnail (240 px) and the legend; the review
    panel under both."""
    figure = go.Figure()
    page.drawn = _drawn(figure=figure, picture=None, notice="old *file*",
                        detail_shape=(30, 40))
    page.st.session_state["view_focus"] = ("q1", 3)
    run = _render(page)
    ((card, ahead, navigate),) = page.shown
    assert ahead is None and card["url"] == "?q=q1"
    html = card["html"]
    assert html.startswith(viewer._CARD_CSS) and "class='ov-card'" not in html
    assert "<p class='ov-nav'>Query 2 of 7 &lt;b&gt;</p>" in html
    assert "data-go='prev'>" in html and "data-go='next' disabled>" in html
    assert ("<p class='ov-errnav'>Error 2 of 5 · false positive · pred HBB 2 · Shift+← / "
            "Shift+→</p>") in html
    assert card["pictures"] == {}
    navigate("next_err")
    assert page.st.session_state["view_focus"] == ("q1", 4)
    columns = page.st.one("columns")
    assert columns.args == ([3, 1.25],) and columns.kwargs == {}
    left = [c for c in page.st.calls if c.where == ("col0",)]
    assert [c.name for c in left] == ["info", "plotly_chart", "caption", "table", "caption"]
    info, chart, notes, table, note = left
    assert info.args == ("old \\*file\\*",) and info.kwargs == {
        "icon": ":material/broken_image:"}
    assert chart.args == (figure,) and chart.kwargs == {"key": "overlay",
                                                        "config": {"scrollZoom": True}}
    assert notes.args[0].startswith(
        "Full resolution around the target (40 × 30 px); the rest of the 200 × 100 image "
        "is shown at 25%. Scroll or drag to zoom and pan; double-click resets the view. "
        "View centre: EPSG:32631 X 500,152.00, Y 3,999,922.00 · ")
    frame = table.args[0]
    assert frame.index.tolist() == ["HBB", "OBB"] and frame.index.name == "modality"
    assert frame.loc["HBB", "GT / pred"] == "2 / 3 (TP 1)"
    assert note.args == (viewer.IOU_NOTE,)
    panels = [e for e in page.log if e[0] in ("suppressed", "object picker", "chip link")]
    assert panels[:2] == [("suppressed", (run, "q1"), ("col0",)),
                          ("object picker", ("q1", LABELS), ("col0",))]
    (_, (q, sample, row, picker, scene, c_run), where) = panels[2]
    assert (q, sample.sample_id, row, picker, scene, c_run, where) == (
        "q1", "q1", ROW, PICKER, SCENE, run, ("col0",))
    right = [c for c in page.st.calls if c.where == ("col1",)]
    assert [c.name for c in right] == ["markdown", "image", "caption"]
    facts, thumb, legend = right
    assert facts.args[0].startswith("### `q1`") and "Review tags: t1" in facts.args[0]
    assert "Outcome: **hit <1>**" in facts.args[0]
    assert thumb.args == (b"THUMB",) and thumb.kwargs == {
        "caption": "Full image with all boxes; yellow = the view it opened on", "width": 240}
    assert legend.args == ("LEGEND",)
    assert page.log[-2:] == [("review", (), ()), ("card", (), ("container",))]


def test_render_interactive_without_notice_or_detail_says_only_how_to_zoom(
        page: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    """No notice: no ``st.info``; no full-resolution window: the caption starts with how
    to zoom; not georeferenced: no map note; the buttons go to ``on_nav``."""
    monkeypatch.setattr(data, "image_georef", lambda *a: None)
    page.drawn = _drawn(figure=go.Figure(), picture=None)
    moves: list[str] = []
    _render(page, on_nav=moves.append)
    assert page.st.named("info") == []
    left = [c for c in page.st.calls if c.where == ("col0",)]
    assert left[1].args == ("Scroll or drag to zoom and pan; double-click resets the view.",)
    page.shown[0][2]("next")
    assert moves == ["next"]


def test_the_review_panel_is_drawn_when_its_switch_is_on(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    rec = st_recorder.install(monkeypatch, viewer, {"view_review": True})
    drawn: list[int] = []
    viewer._review_panel(lambda: drawn.append(1))
    viewer._review_panel(None)
    rec.session_state["view_review"] = False
    viewer._review_panel(lambda: drawn.append(2))
    assert drawn == [1]


def test_the_sample_and_row_are_the_entrys(monkeypatch: pytest.MonkeyPatch) -> None:
    sample, row = viewer._sample_and_row(_run(q2=SimpleNamespace(sample="S2", row="R2")),
                                         "q2")
    assert (sample, row) == ("S2", "R2")
