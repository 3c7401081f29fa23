"""Rules of ``ovearth_core.audit.fix`` that mutation testing found unpinned (issue 47).

Each test states one rule: what a suspect's key includes (membership), who a decision is
recorded as and that only held tags are removed (wiring), where the cleaned file goes,
that ranks start at 1, and that a bad suspect is refused with a message naming the field,
what was expected and what was found. Plain dictionaries, no evaluation: fast enough that
mutmut runs them for every mutant of the module.
"""

from __future__ import annotations

import errno
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ovearth_core import review
from ovearth_core.audit import fix
from ovearth_core.errors import OVEarthInputError

SUSPECT = {"query_id": "q1_plane", "kind": "shifted", "bbox": [60.0, 150.0, 30.0, 30.0],
           "gt_bbox": [100.0, 150.0, 30.0, 30.0], "proposed_category": "ship",
           "category": "plane", "score": 0.9, "object": 0}
KEY_FIELDS = ("query_id", "kind", "bbox", "gt_bbox", "proposed_category")


def test_suspect_key_is_the_kind_and_a_digest_of_the_documented_fields() -> None:
    """The key is stored in review sidecars, so its spelling is a file format: the kind, a
    space, and the first 12 hex digits of SHA-256 of the five fields joined by ``|``."""
    text = "|".join(str(SUSPECT[k]) for k in KEY_FIELDS)
    want = "shifted " + hashlib.sha256(text.encode()).hexdigest()[:12]
    assert fix.suspect_key(SUSPECT) == want


@pytest.mark.parametrize("field", KEY_FIELDS)
def test_each_key_field_tells_suspects_apart(field: str) -> None:
    other = dict(SUSPECT)
    other[field] = "q2_ship" if field == "query_id" else (
        "missing" if field == "kind" else (
            "plane" if field == "proposed_category" else [1.0, 2.0, 3.0, 4.0]))
    assert fix.suspect_key(other) != fix.suspect_key(SUSPECT)


def test_fields_outside_the_key_do_not_change_it() -> None:
    other = dict(SUSPECT, score=0.1, category="ship", object=3)
    assert fix.suspect_key(other) == fix.suspect_key(SUSPECT)


def _events(sidecar: Path) -> list[dict[str, Any]]:
    events, problems = review.read_events(sidecar)
    assert not problems
    return [{k: e.get(k) for k in ("event", "tag", "by")} for e in events]


def test_a_decision_is_recorded_as_the_audits_and_removes_only_held_tags(
        tmp_path: Path) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text("{}")
    sidecar = review.sidecar_for(gt)
    key = fix.suspect_key(SUSPECT)

    def decide(decision: str | None) -> None:
        fix.decide(sidecar, "vocabulary", SUSPECT, decision, review.load_state(sidecar))

    decide("confirmed")
    decide("confirmed")      # already held: nothing written
    decide("rejected")       # adds rejected, removes confirmed
    decide(None)             # removes rejected only
    decide(None)             # nothing held: nothing written
    assert _events(sidecar) == [
        {"event": "tag", "tag": f"{fix.CONFIRMED} {key}", "by": "audit"},
        {"event": "untag", "tag": f"{fix.CONFIRMED} {key}", "by": "audit"},
        {"event": "tag", "tag": f"{fix.REJECTED} {key}", "by": "audit"},
        {"event": "untag", "tag": f"{fix.REJECTED} {key}", "by": "audit"},
    ]


def test_the_cleaned_file_goes_to_the_sidecars_exports_folder(tmp_path: Path) -> None:
    gt = tmp_path / "bench" / "gt.json"
    assert fix.cleaned_path(gt) == (tmp_path / "bench").resolve() / ".ovearth" / "exports" / \
        "audit_cleaned_ground_truth.json"


def _doc() -> dict[str, Any]:
    ann = {"id": "a1", "image_path": "i.png", "width": 10, "height": 10,
           "category_name": "plane", "bbox": [[1, 1, 2, 2]]}
    return {"annotations": [ann], "tasks": {"open_vocabulary": [
        {"query_id": "q1", "ann_id": "a1", "type": "positive", "phrase": "plane"}]}}


@pytest.mark.parametrize("modality, suspect, field, expected, found", [
    ("segmentation", {"kind": "spurious", "query_id": "q1", "object": 0}, "modality",
     "bbox or oriented_bbox (masks are not edited)", "segmentation"),
    ("bbox", {"kind": "renamed", "query_id": "q1"}, "kind",
     "missing, spurious, shifted or wrong_class", "renamed"),
    ("bbox", {"kind": "spurious", "query_id": "nope", "object": 0}, "query_id",
     "a query of task open_vocabulary in the ground truth", "nope"),
    ("bbox", {"kind": "spurious", "query_id": "q1", "object": 1}, "object",
     "an index into a1's bbox (0 to 0), of an object no other confirmed fix removed", "1"),
    ("bbox", {"kind": "missing", "query_id": "nope", "category": "x", "bbox": [0, 0, 1, 1]},
     "query_id", "a query of task open_vocabulary", "nope"),
])
def test_a_bad_suspect_is_refused_naming_field_expected_and_found(
        modality: str, suspect: dict[str, Any], field: str, expected: str, found: str) -> None:
    with pytest.raises(OVEarthInputError) as err:
        fix.cleaned(_doc(), "vocabulary", modality, [suspect])
    (problem,) = err.value.problems
    assert (problem.file, problem.field, problem.expected, problem.found) == \
        ("(audit)", field, expected, found)
    assert problem.query_id == (None if field == "modality" else suspect["query_id"])


def test_the_cleaned_document_is_json_and_keeps_unknown_fields() -> None:
    doc = _doc() | {"info": {"version": 3}}
    new = fix.cleaned(doc, "vocabulary", "bbox", [{"kind": "spurious", "query_id": "q1",
                                                    "object": 0}])
    assert new["info"] == {"version": 3}
    assert new["annotations"][0]["bbox"] == []
    json.dumps(new)


@pytest.mark.parametrize("index", ["0", None, 1.0, -1])
def test_an_object_index_that_is_not_an_index_is_refused(index: object) -> None:
    with pytest.raises(OVEarthInputError) as err:
        fix.cleaned(_doc(), "vocabulary", "bbox",
                    [{"kind": "spurious", "query_id": "q1", "object": index}])
    assert err.value.problems[0].field == "object"


def test_an_object_removed_by_one_fix_cannot_be_fixed_again() -> None:
    spurious = {"kind": "spurious", "query_id": "q1", "object": 0}
    with pytest.raises(OVEarthInputError) as err:
        fix.cleaned(_doc(), "vocabulary", "bbox", [spurious, spurious])
    assert err.value.problems[0].field == "object"


def test_a_document_without_annotations_or_tasks_refuses_a_suspect_with_a_message() -> None:
    assert fix.cleaned({}, "vocabulary", "bbox", []) == {"annotations": [], "tasks": {}}
    with pytest.raises(OVEarthInputError):
        fix.cleaned({}, "vocabulary", "bbox",
                    [{"kind": "missing", "query_id": "q1", "category": "x",
                      "bbox": [0, 0, 1, 1]}])
    with pytest.raises(OVEarthInputError):
        fix.cleaned({"tasks": {}}, "vocabulary", "bbox",
                    [{"kind": "spurious", "query_id": "q1", "object": 0}])


def test_a_missing_suspect_adds_its_box_and_every_box_it_also_names() -> None:
    suspect = {"kind": "missing", "query_id": "q1", "category": "plane",
               "bbox": [5, 5, 2, 2], "also": [{"bbox": [7, 7, 1, 1]}]}
    new = fix.cleaned(_doc(), "vocabulary", "bbox", [suspect])
    assert new["annotations"][0]["bbox"] == [[1, 1, 2, 2], [5.0, 5.0, 2.0, 2.0],
                                             [7.0, 7.0, 1.0, 1.0]]


def test_a_wrong_class_object_moves_to_a_new_annotation_of_the_proposed_category() -> None:
    doc = _doc()
    doc["tasks"]["open_vocabulary"].append(
        {"query_id": "q2", "ann_id": "a1", "type": "negative", "phrase": "ship"})
    suspect = {"kind": "wrong_class", "query_id": "q1", "object": 0,
               "evidence_query_id": "q2", "proposed_category": "ship"}
    new = fix.cleaned(doc, "vocabulary", "bbox", [suspect])
    anns = {a["id"]: a for a in new["annotations"]}
    made = anns["a1_audit_q2"]
    assert (made["category_name"], made["bbox"], made["image_path"]) == \
        ("ship", [[1, 1, 2, 2]], "i.png")
    assert anns["a1"]["bbox"] == []
    q2 = next(r for r in new["tasks"]["open_vocabulary"] if r["query_id"] == "q2")
    assert (q2["type"], q2["ann_id"]) == ("positive", "a1_audit_q2")


def test_ranks_start_at_one_and_change_is_places_moved_up() -> None:
    from report_fixtures import synthetic_result

    good, bad = synthetic_result([0.9, 0.8]), synthetic_result([0.2, 0.1])
    out = fix.rerank(["a", "b"], [good, bad], [bad, good])
    rows = {r["name"]: r for r in out["rows"]}
    assert (rows["a"]["rank_before"], rows["a"]["rank_after"], rows["a"]["change"]) == (1, 2, -1)
    assert (rows["b"]["rank_before"], rows["b"]["rank_after"], rows["b"]["change"]) == (2, 1, 1)
    assert [r["name"] for r in out["rows"]] == ["b", "a"]


def test_without_a_ranked_metric_there_is_no_ranking() -> None:
    from report_fixtures import synthetic_result

    empty = synthetic_result([0.5])
    empty["summary"]["seg"] = None
    assert fix.rerank(["a"], [empty], [empty]) == {"metric": None, "rows": []}


def test_a_refused_write_names_the_file_and_what_was_expected(tmp_path: Path) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text("{}")
    with pytest.raises(OVEarthInputError) as err:
        fix.write_cleaned(gt, {}, gt)
    (problem,) = err.value.problems
    assert problem.file == str(gt.resolve()) and problem.field == "(file)"
    assert "input" in problem.found or "input" in problem.expected


def test_a_folder_on_the_way_that_is_a_file_is_named_with_what_was_found(tmp_path: Path
                                                                       ) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text("{}")
    (tmp_path / "afile").write_text("")
    with pytest.raises(OVEarthInputError) as err:
        fix.write_cleaned(gt, {}, tmp_path / "afile" / "out.json")
    (problem,) = err.value.problems
    assert (problem.file, problem.field, problem.expected, problem.found) == (
        str(tmp_path / "afile"), "(file)", "a folder (links are not followed)",
        "a regular file")


@pytest.mark.parametrize("error, reason", [
    (OSError(errno.ENOSPC, "No space left on device"), "No space left on device"),
    (OSError("the disk went away"), "the disk went away"),   # no strerror: the message
])
def test_a_write_that_fails_names_the_file_and_the_systems_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, reason: str) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise error

    gt = tmp_path / "gt.json"
    gt.write_text("{}")
    monkeypatch.setattr(fix.files, "write_confined", full)
    with pytest.raises(OVEarthInputError) as err:
        fix.write_cleaned(gt, {}, tmp_path / "out.json")
    (problem,) = err.value.problems
    assert (problem.file, problem.field, problem.expected, problem.found) == (
        str(tmp_path / "out.json"), "(file)", "a writable file", reason)


def _flagged_doc(ann: dict[str, Any]) -> dict[str, Any]:
    doc = _doc()
    doc["annotations"][0] = {k: v for k, v in doc["annotations"][0].items()
                             if k != "bbox"} | ann
    return doc


def test_flags_that_can_no_longer_pair_with_the_boxes_are_refused_with_the_lengths() -> None:
    """Two box lists of different lengths: the fix edits the bbox objects and their flags,
    and the oriented list of another length cannot pair with either afterwards."""
    doc = _flagged_doc({"bbox": [[1, 1, 2, 2], [3, 3, 2, 2]],
                        "oriented_bbox": [[[0, 0], [1, 0], [1, 1], [0, 1]]],
                        "difficult": [1, 0]})
    missing = {"kind": "missing", "query_id": "q1", "category": "plane", "bbox": [5, 5, 1, 1]}
    with pytest.raises(OVEarthInputError) as err:
        fix.cleaned(doc, "vocabulary", "bbox", [missing])
    (problem,) = err.value.problems
    assert (problem.field, problem.expected, problem.found) == (
        "difficult", "annotation a1's box lists of one length after the fixes (one difficult "
        "flag per object)", "lengths [1, 3]")


def test_a_list_that_does_not_pair_with_an_empty_edited_one_is_left_as_it_was() -> None:
    oriented = [[[0, 0], [1, 0], [1, 1], [0, 1]]]
    doc = _flagged_doc({"bbox": [], "oriented_bbox": oriented})
    doc["annotations"].append({"id": "a2", "image_path": "j.png", "width": 10, "height": 10,
                               "category_name": "ship", "bbox": [[1, 1, 1, 1]],
                               "oriented_bbox": [[[1, 1], [2, 1], [2, 2], [1, 2]]]})
    missing = {"kind": "missing", "query_id": "q1", "category": "plane", "bbox": [5, 5, 1, 1]}
    new = fix.cleaned(doc, "vocabulary", "bbox", [missing])
    assert new["annotations"][0]["bbox"] == [[5.0, 5.0, 1.0, 1.0]]
    assert new["annotations"][0]["oriented_bbox"] == oriented
