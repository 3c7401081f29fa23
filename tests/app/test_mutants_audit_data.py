"""``what_if`` and ``suspect_picture`` of pages/common/audit_data.py, called directly
(issue 47: reached before only by the AppTest tests/app/test_app_audit.py, too slow for
mutmut; 111 mutants untested).

A hand-built benchmark: one 200 x 200 image, the query ``qp`` (plane, positive) whose
annotation has two boxes A = [10, 10, 20, 20] and B = [100, 100, 30, 30] (xywh), and the
negative query ``qs`` (ship) on the same image. Two suspects are confirmed: B spurious and
C = [150, 20, 20, 20] missing, so the cleaned ground truth of ``qp`` is {A, C}. Three
submissions (xyxy boxes) and one unreadable file:

* ``m1`` finds A and C: before (A, B) TP 1, FP 1, FN 1, F1 = 2/(2+1+1) = 0.5; after 1.0.
* ``m2`` finds A and B: before 1.0; after TP 1, FP 1, FN 1: 0.5.
* ``m3`` finds A' = [10, 10, 30, 22] (IoU with A: 240 / 400 = 0.6), C and a stray box:
  at the audit's IoU threshold 0.7 A' is no match: before TP 0: F1 0; after TP 1 (C),
  FP 2, FN 1: 2/(2+2+1) = 0.4. (At the default 0.5 it would be 0.4 before, 0.8 after.)
* ``bad`` is no JSON: left out of the ranking, named.

The first ranked metric of a box audit is the micro F1 of boxes (analysis.standings);
every value above is worked by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from ovearth_core.audit import fix
from ovearth_core.cache import ENV_DIR, ResultCache
from ovearth_core.errors import OVEarthInputError
from ovearth_core.options import Options
from pages.common import audit_data, data

A, B, C = [10.0, 10.0, 20.0, 20.0], [100.0, 100.0, 30.0, 30.0], [150.0, 20.0, 20.0, 20.0]


def _xyxy(b: list[float]) -> list[float]:
    return [b[0], b[1], b[0] + b[2], b[1] + b[3]]


def _gt() -> dict[str, Any]:
    return {"annotations": [{"id": "p", "image_path": "images/0.png", "width": 200,
                             "height": 200, "category_name": "plane", "segmentation": None,
                             "bbox": [A, B]}],
            "tasks": {"open_vocabulary": [
                {"query_id": "qp", "ann_id": "p", "type": "positive", "phrase": "plane"},
                {"query_id": "qs", "ann_id": "p", "type": "negative", "phrase": "ship"}]}}


def _submission(boxes: list[list[float]]) -> dict[str, Any]:
    return {"tasks": {"open_vocabulary": [
        {"query_id": "qp", "bbox": [{"bbox": b, "score": 0.9 - 0.1 * k}
                                    for k, b in enumerate(boxes)]},
        {"query_id": "qs", "bbox": []}]}}


SPURIOUS_B = {"query_id": "qp", "kind": "spurious", "object": 1, "bbox": B, "gt_bbox": B,
              "category": "plane"}
MISSING_C = {"query_id": "qp", "kind": "missing", "bbox": C, "gt_bbox": None,
             "category": "plane"}


def _key(path: Path) -> data.FileKey:
    return data.file_key(path)


@pytest.fixture
def bench(tmp_path: Path) -> tuple[data.FileKey, tuple[data.FileKey, ...]]:
    root = tmp_path / "bench"
    (root / "predictions").mkdir(parents=True)
    gt = root / "ground_truth.json"
    gt.write_text(json.dumps(_gt()))
    subs = {"m1": [_xyxy(A), _xyxy(C)], "m2": [_xyxy(A), _xyxy(B)],
            "m3": [[10.0, 10.0, 30.0, 22.0], _xyxy(C), [180.0, 180.0, 190.0, 190.0]]}
    paths = {}
    for name, boxes in subs.items():
        paths[name] = root / "predictions" / f"{name}.json"
        paths[name].write_text(json.dumps(_submission(boxes)))
    paths["bad"] = root / "predictions" / "bad.json"
    paths["bad"].write_text("{not json")
    # the unreadable one between the others: a bad file leaves out itself only
    order = ("m1", "bad", "m2", "m3")
    return _key(gt), tuple(_key(paths[n]) for n in order)


OPTIONS = Options("vocabulary", ("bbox",), iou_threshold=0.7)


def test_what_if_ranks_on_the_original_and_on_the_cleaned_ground_truth(
        bench: tuple[data.FileKey, tuple[data.FileKey, ...]]) -> None:
    """Rule: the submissions are ranked by the same metric on the original ground truth
    (before) and on the one with the confirmed suspects fixed (after), at the audit's own
    options (its IoU threshold, 0.7, not the default); rows in the cleaned ranking's order,
    ``change`` the places moved up; an unreadable submission is left out and named, the
    others all ranked. Values worked by hand (module docstring). Kills the mutants of which
    file each ranking reads, the options passed, the skipped list and the loop's
    ``continue``."""
    gt, preds = bench
    got = audit_data.what_if(gt, preds, OPTIONS, [SPURIOUS_B, MISSING_C])
    assert got.ranking["metric"] == "bbox_micro_f1"
    rows = [(r["name"], r["before"], r["after"], r["rank_before"], r["rank_after"],
             r["change"]) for r in got.ranking["rows"]]
    assert rows == [("m1", pytest.approx(0.5), pytest.approx(1.0), 2, 1, 1),
                    ("m2", pytest.approx(1.0), pytest.approx(0.5), 1, 2, -1),
                    ("m3", pytest.approx(0.0), pytest.approx(0.4), 3, 3, 0)]
    assert got.skipped == ("bad",)


def test_what_if_writes_the_fixes_beside_the_gt_and_keeps_the_original(
        bench: tuple[data.FileKey, tuple[data.FileKey, ...]]) -> None:
    """Rule: the cleaned ground truth is written where the app keeps it
    (``.ovearth/exports/`` beside the ground truth's review sidecar), with the confirmed
    fixes of the audited task and modality (B removed, C added to ``qp``'s annotation, the
    rest as it was); the original is left byte for byte; the result counts the fixes and
    holds the confirmed suspects' keys, sorted (what ``still_current`` compares)."""
    gt, preds = bench
    original = Path(gt[0]).read_bytes()
    got = audit_data.what_if(gt, preds, OPTIONS, [SPURIOUS_B, MISSING_C])
    assert got.path == Path(gt[0]).parent / ".ovearth" / "exports" / fix.CLEANED_NAME
    written = json.loads(got.path.read_text())
    assert written["annotations"][0]["bbox"] == [A, C]
    assert written["tasks"] == _gt()["tasks"]
    assert Path(gt[0]).read_bytes() == original
    assert got.fixed == 2
    assert got.keys == tuple(sorted([fix.suspect_key(SPURIOUS_B), fix.suspect_key(MISSING_C)]))
    assert list(got.keys) == sorted(got.keys) and len(set(got.keys)) == 2


def test_what_if_fixes_in_the_audited_modality_for_the_audited_task(
        bench: tuple[data.FileKey, tuple[data.FileKey, ...]]) -> None:
    """Rule: the fix is made in the modality audited (``options.modalities[0]``) for the
    task audited: a segmentation audit's suspects are refused (masks are not edited) and a
    task whose queries the suspects are not of names the query: both raised as
    OVEarthInputError for the page to show, and nothing is written."""
    gt, preds = bench
    cleaned = Path(gt[0]).parent / ".ovearth" / "exports" / fix.CLEANED_NAME
    with pytest.raises(OVEarthInputError, match="masks are not edited"):
        audit_data.what_if(gt, preds, Options("vocabulary", ("segmentation",)), [SPURIOUS_B])
    with pytest.raises(OVEarthInputError, match="qp"):
        audit_data.what_if(gt, preds, Options("referring", ("bbox",)), [SPURIOUS_B])
    assert not cleaned.exists()


def test_what_if_never_writes_over_a_submission(
        bench: tuple[data.FileKey, tuple[data.FileKey, ...]]) -> None:
    """Rule (trust boundary): a submission that sits where the cleaned ground truth goes is
    never overwritten: the write is refused (an OVEarthInputError naming the file) and the
    submission is left as it was."""
    gt, preds = bench
    target = Path(gt[0]).parent / ".ovearth" / "exports" / fix.CLEANED_NAME
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(_submission([_xyxy(A)])))
    before = target.read_bytes()
    with pytest.raises(OVEarthInputError, match=fix.CLEANED_NAME):
        audit_data.what_if(gt, (*preds, _key(target)), OPTIONS, [SPURIOUS_B])
    assert target.read_bytes() == before


def test_what_if_ranks_through_the_result_cache(
        bench: tuple[data.FileKey, tuple[data.FileKey, ...]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: both rankings go through the app's on-disk result cache (here a fresh folder):
    after one what-if it holds, for each readable submission on each ground truth (3 x 2),
    its result and its board entry (the leaderboard's summary of it): 12 entries; a second
    what-if on the same files reads them (no new entry) and ranks the same."""
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    gt, preds = bench
    audit_data.what_if(gt, preds, OPTIONS, [SPURIOUS_B, MISSING_C])
    store = ResultCache(tmp_path / "cache")
    first = {p for _, _, p in store.entries()}
    assert len(first) == 12
    again = audit_data.what_if(gt, preds, OPTIONS, [SPURIOUS_B, MISSING_C])
    assert {p for _, _, p in store.entries()} == first
    assert [r["after"] for r in again.ranking["rows"]] == pytest.approx([1.0, 0.5, 0.4])


# ---- the suspect's picture ---------------------------------------------------------------

def _suspect(**extra: Any) -> dict[str, Any]:
    return {"query_id": "qp", "kind": "missing", "bbox": [40.0, 40.0, 20.0, 20.0],
            "gt_bbox": None, "image_path": "images/0.png", "width": 100, "height": 100,
            "votes": [], **extra}


def test_a_suspects_picture_shows_its_images_pixels(tmp_path: Path) -> None:
    """Rule: the picture is drawn on the pixels of the suspect's own image, read from the
    run's images folder: an image of one flat colour shows that colour in both panels
    away from the boxes (an image not found would be a grey canvas)."""
    images = tmp_path / "imgs"
    (images / "images").mkdir(parents=True)
    Image.new("RGB", (100, 100), (10, 200, 30)).save(images / "images" / "0.png")
    audit_data.picture.clear()
    got = audit_data.suspect_picture(images, _suspect())
    assert got.ndim == 3 and got.shape[2] == 3
    assert got[2, 2].tolist() == [10, 200, 30]  # the left panel's corner
    assert got[2, -3].tolist() == [10, 200, 30]  # the right panel's corner


def test_a_suspects_picture_is_keyed_by_its_content_and_the_images_stamp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: the cached picture is asked for with the images folder as text, the suspect as
    JSON with sorted keys (the same suspect in another key order is the same picture) and
    the image file's stamp (an image saved again is drawn again)."""
    images = tmp_path / "imgs"
    (images / "images").mkdir(parents=True)
    Image.new("RGB", (100, 100), (1, 2, 3)).save(images / "images" / "0.png")
    asked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(audit_data, "picture", lambda *a: asked.append(a) or np.zeros(1))
    s = _suspect()
    audit_data.suspect_picture(images, s)
    audit_data.suspect_picture(images, dict(reversed(list(s.items()))))
    stamp = data.image_stamp(images, "images/0.png")
    assert stamp != (-1, -1, -1, -1)
    assert asked[0] == asked[1] == (str(images), json.dumps(s, sort_keys=True), stamp)
    Image.new("RGB", (100, 120), (1, 2, 3)).save(images / "images" / "0.png")
    audit_data.suspect_picture(images, s)
    assert asked[2][2] == data.image_stamp(images, "images/0.png") != stamp


def test_a_ground_truth_gone_since_the_audit_is_named_as_the_ground_truth(
        bench: tuple[data.FileKey, tuple[data.FileKey, ...]]) -> None:
    """Rule: the ground truth is read again when the fixes are written; one deleted since
    the audit is a problem naming the file and its role (a readable ground-truth JSON
    file), raised for the page to show, and nothing is written. Kills ``what_if`` 13, 17,
    18 (the role given to ``read_json``)."""
    gt, preds = bench
    Path(gt[0]).unlink()
    with pytest.raises(OVEarthInputError) as err:
        audit_data.what_if(gt, preds, OPTIONS, [SPURIOUS_B])
    (problem,) = err.value.problems
    assert problem.file == gt[0] and problem.expected == "a readable ground-truth JSON file"
    assert not (Path(gt[0]).parent / ".ovearth" / "exports" / fix.CLEANED_NAME).exists()
