"""Compare's overlays show each submission's own boxes (issue 27): the page's pictures are
decoded and their outline pixels checked where A's and B's predictions are.

The scene is one 96 x 96 grey image, so the view of a query is the whole image (the zoom
region is at least 96 pixels wide, clipped to the image) and a picture of side ``S`` maps an
original pixel ``(x, y)`` to ``(x, y) * S / 96``. One GT box; A predicts a box that matches
it (IoU 0.60: the GT outline and A's are green), B predicts a box elsewhere (a false
positive: red, and the GT is missed: orange). The colours are classified by hue, the
app's rule (docs/app.md, Query explorer: green matched, red false positive, orange missed),
so JPEG noise does not matter. The planted bug this guards: B's overlay drawn from A's boxes
(the old page test counted two images, not what they show)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
import streamlit.testing.v1.app_test as app_test_module
from app_fixtures import app_on, assert_ok, goto
from PIL import Image
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from ovearth_core.evaluate import evaluate_samples
from ovearth_core.io import load_samples

PAGE = "pages/Compare.py"
SIDE = 96
GT_BOX = (10, 10, 40, 40)  # x0, y0, x1, y1 in original pixels
A_BOX = (14, 14, 44, 44)  # IoU with GT_BOX 676 / 1124 = 0.60: matched at 0.5
B_BOX = (55, 50, 85, 80)  # no overlap with GT_BOX: a false positive
B_SCORE = 0.4  # below a score threshold of 0.5, above none
OTHER_GT = (60, 10, 80, 30)  # ref_2: both submissions find it (so there is a second row)

pytestmark = pytest.mark.usefixtures("fresh_caches")


def _xywh(box: tuple[int, int, int, int]) -> list[float]:
    x0, y0, x1, y1 = box
    return [float(x0), float(y0), float(x1 - x0), float(y1 - y0)]


def _write(root: Path) -> tuple[Path, Path, Path]:
    (root / "images").mkdir(parents=True)
    (root / "predictions").mkdir()
    Image.fromarray(np.full((SIDE, SIDE, 3), 128, np.uint8)).save(root / "images" / "grey.png")
    anns = [{"id": aid, "image_path": "images/grey.png", "width": SIDE, "height": SIDE,
             "category_name": "tank", "segmentation": None, "bbox": [_xywh(box)],
             "oriented_bbox": []} for aid, box in (("1", GT_BOX), ("2", OTHER_GT))]
    gt = {"annotations": anns, "tasks": {"referring": [
        {"query_id": "ref_1", "ann_id": "1", "query": "the tank on the left"},
        {"query_id": "ref_2", "ann_id": "2", "query": "the tank on the right"}]}}

    def sub(box: tuple[int, int, int, int], score: float) -> dict:
        return {"tasks": {"referring": [
            {"query_id": "ref_1", "bbox": [{"bbox": list(map(float, box)), "score": score}]},
            {"query_id": "ref_2", "bbox": [{"bbox": list(map(float, OTHER_GT)),
                                            "score": 0.9}]}]}}

    paths = root / "ground_truth.json", root / "predictions" / "a.json", \
        root / "predictions" / "b.json"
    paths[0].write_text(json.dumps(gt))
    paths[1].write_text(json.dumps(sub(A_BOX, 0.9)))
    paths[2].write_text(json.dumps(sub(B_BOX, B_SCORE)))
    return paths


# --- colour classes (hue rules, written out here) ----------------------------------------

def _channels(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(rgb[..., i].astype(int) for i in range(3))  # type: ignore[return-value]


# Differences between channels, so a line blurred into the grey by JPEG keeps its class
# (grey has none: r = g = b).
def _green(rgb: np.ndarray) -> np.ndarray:
    r, g, b = _channels(rgb)
    return (g - r > 40) & (g - b > 20)


def _red(rgb: np.ndarray) -> np.ndarray:
    r, g, b = _channels(rgb)
    return (r - g > 50) & (r - b > 50) & (abs(g - b) < 30)


def _orange(rgb: np.ndarray) -> np.ndarray:
    r, g, b = _channels(rgb)
    return (r - b > 70) & (g - b > 25) & (r - g > 25)


def _any_outline(rgb: np.ndarray) -> np.ndarray:
    return _green(rgb) | _red(rgb) | _orange(rgb)


def _edges(box: tuple[int, int, int, int], k: float, band: int = 4
           ) -> dict[str, tuple[slice, slice]]:
    """Bands ``(rows, cols)`` of the picture around each edge of ``box`` (original pixels,
    scaled by ``k``), leaving out the corners (where another box's edge could pass)."""
    x0, y0, x1, y1 = (round(v * k) for v in box)
    inset = round(0.2 * (x1 - x0))
    xs, ys = slice(x0 + inset, x1 - inset), slice(y0 + inset, y1 - inset)
    return {"top": (slice(y0 - band, y0 + band + 1), xs),
            "bottom": (slice(y1 - band, y1 + band + 1), xs),
            "left": (ys, slice(x0 - band, x0 + band + 1)),
            "right": (ys, slice(x1 - band, x1 + band + 1))}


def _edge_coverage(mask: np.ndarray, band: tuple[slice, slice], along_rows: bool) -> float:
    """The share of positions along an edge with at least one pixel of the class."""
    sub = mask[band]
    hit = sub.any(axis=0) if along_rows else sub.any(axis=1)
    return float(hit.mean())


def _pictures(monkeypatch: pytest.MonkeyPatch, at_factory) -> tuple[AppTest, dict]:
    """Run the page and return the bytes of every media file it made, by URL."""
    stores: list[MemoryMediaFileStorage] = []

    def recording(prefix: str) -> MemoryMediaFileStorage:
        store = MemoryMediaFileStorage(prefix)
        stores.append(store)
        return store

    monkeypatch.setattr(app_test_module, "MemoryMediaFileStorage", recording)
    at = at_factory()
    files = {}
    for store in stores:
        for file_id, f in store._files_by_id.items():
            files[file_id] = f.content
    return at, files


def _media(files: dict, url: str) -> np.ndarray:
    file_id = url.rsplit("/", 1)[-1].split(".")[0]
    return np.asarray(Image.open(io.BytesIO(files[file_id])).convert("RGB"))


def _open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, b_is_a_copy: bool = False,
          **options: object):
    """The Compare page on the scene, ref_1 side by side; ``b_is_a_copy``: B is A's bytes
    under another name (``a_copy``)."""
    gt, a, b = _write(tmp_path / "scene")
    if b_is_a_copy:
        b = a.with_name("a_copy.json")
        b.write_bytes(a.read_bytes())

    def run() -> AppTest:
        at = app_on(None, gt_path=str(gt), images_dir=str(gt.parent), pred_path=str(a),
                    task="referring", cmp_b_path=str(b), cmp_query="ref_1",
                    cmp_modality="bbox", **options)
        goto(at, PAGE)
        return at.run()

    at, files = _pictures(monkeypatch, run)
    return at, files, (gt, a, b)


@pytest.fixture()
def compare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    return _open(tmp_path, monkeypatch)


def _shown(at: AppTest, files: dict) -> dict[str, np.ndarray]:
    """The two pictures the page shows, by submission name (from their captions)."""
    return {img.caption.split(" · ")[0]: _media(files, img.url)
            for e in at.get("image") for img in e.proto.imgs}


def test_the_premise_a_matches_and_b_is_a_false_positive(tmp_path: Path) -> None:
    gt, a, b = _write(tmp_path / "scene")
    rows = {}
    for name, path in (("a", a), ("b", b)):
        result = evaluate_samples(load_samples(gt, path, "referring", modalities=("bbox",)), 0.5)
        rows[name] = next(r for r in result["per_sample"] if r["sample_id"] == "ref_1")
    assert rows["a"]["bbox"]["tp"] == 1 and rows["a"]["bbox"]["fp"] == 0
    assert rows["b"]["bbox"]["tp"] == 0 and rows["b"]["bbox"]["fp"] == 1


@pytest.mark.parametrize("source", ["shown", "download"])
def test_each_overlay_draws_its_own_submission(compare, source: str) -> None:
    at, files, _ = compare
    assert_ok(at)
    assert at.selectbox(key="_w_cmp_query").value == "ref_1"
    if source == "shown":
        urls = {img.caption.split(" · ")[0]: img.url
                for e in at.get("image") for img in e.proto.imgs}
    else:
        urls = {d.proto.label.split()[1]: d.proto.url for d in at.get("download_button")
                if d.proto.label.endswith("overlay (PNG)")}
    assert set(urls) == {"a", "b"}, urls
    pictures = {name: _media(files, url) for name, url in urls.items()}
    for name, rgb in pictures.items():
        h, w = rgb.shape[:2]
        assert h == w and w >= SIDE, (name, rgb.shape)  # the whole (square) image
    k = pictures["a"].shape[1] / SIDE

    a_pic, b_pic = pictures["a"], pictures["b"]
    # A: the GT box and A's box are outlined in green (matched) ...
    for box in (GT_BOX, A_BOX):
        for edge, band in _edges(box, k).items():
            cover = _edge_coverage(_green(a_pic), band, edge in ("top", "bottom"))
            assert cover > 0.3, ("A", box, edge, cover)
    # ... there is no false positive and no miss in A's picture, and nothing where only B
    # has a box.
    assert not _red(a_pic).any() and not _orange(a_pic).any()
    for edge, band in _edges(B_BOX, k).items():
        assert not _any_outline(a_pic)[band].any(), ("A shows B's box", edge)

    # B: its box in red (false positive), the GT it missed in orange ...
    for edge, band in _edges(B_BOX, k).items():
        cover = _edge_coverage(_red(b_pic), band, edge in ("top", "bottom"))
        assert cover > 0.3, ("B", edge, cover)
    for edge, band in _edges(GT_BOX, k).items():
        cover = _edge_coverage(_orange(b_pic), band, edge in ("top", "bottom"))
        assert cover > 0.6, ("B's missed GT", edge, cover)
    # ... nothing matched, and nothing where only A has a box (A's right and bottom edges,
    # clear of the GT's).
    assert not _green(b_pic).any()
    a_only = _edges(A_BOX, k, band=3)
    for edge in ("right", "bottom"):
        assert not _any_outline(b_pic)[a_only[edge]].any(), ("B shows A's box", edge)


def test_the_overlays_follow_the_sidebars_iou_threshold(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """At IoU threshold 0.65 A's box (IoU 0.60) no longer matches: the picture shows it red
    and the GT orange, as the evaluator at 0.65 says. B is a copy of A under another name,
    so both pictures go through the threshold (A's path and B's)."""
    at, files, (gt, a, _) = _open(tmp_path, monkeypatch, b_is_a_copy=True, iou_threshold=0.65)
    assert_ok(at)
    result = evaluate_samples(load_samples(gt, a, "referring", modalities=("bbox",)), 0.65)
    row = next(r for r in result["per_sample"] if r["sample_id"] == "ref_1")
    assert row["bbox"]["tp"] == 0 and row["bbox"]["fp"] == 1  # the premise
    pictures = _shown(at, files)
    assert set(pictures) == {"a", "a_copy"}
    for name, rgb in pictures.items():
        k = rgb.shape[1] / SIDE
        assert not _green(rgb).any(), name
        for box, colour in ((A_BOX, _red), (GT_BOX, _orange)):
            for edge, band in _edges(box, k).items():
                if box == A_BOX and edge in ("top", "left"):
                    continue  # 4 px from the GT's edges: the bands overlap
                cover = _edge_coverage(colour(rgb), band, edge in ("top", "bottom"))
                assert cover > 0.3, (name, box, edge, cover)


def test_the_overlays_follow_the_sidebars_score_threshold(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """At score threshold 0.5 B's box (score 0.4) is dropped: B's picture shows only the GT
    it missed (orange), no red; A's (score 0.9) is unchanged."""
    at, files, _ = _open(tmp_path, monkeypatch, use_score_threshold=True, score_threshold=0.5)
    assert_ok(at)
    pictures = _shown(at, files)
    assert set(pictures) == {"a", "b"}
    b_pic, a_pic = pictures["b"], pictures["a"]
    k = b_pic.shape[1] / SIDE
    assert not _red(b_pic).any() and not _green(b_pic).any()
    for edge, band in _edges(GT_BOX, k).items():
        assert _edge_coverage(_orange(b_pic), band, edge in ("top", "bottom")) > 0.6, edge
    for edge, band in _edges(A_BOX, k).items():
        assert _edge_coverage(_green(a_pic), band, edge in ("top", "bottom")) > 0.3, edge
