"""The bundles' YAML against the platforms' documented keys (issue 40), written by PyYAML and
read back identically, hostile text included (issue 47).

Codabench's schema below is written out from its documentation,
``documentation/docs/Organizers/Benchmark_Creation/Yaml-Structure.md`` of codalab/codabench
(docs.codabench.org, "Yaml Structure": competition properties, pages, phases, tasks,
solutions, leaderboards and their columns, each key's required/optional status and type),
with what its v2 unpacker (``src/apps/competitions/unpackers/v2.py``) requires beyond the
page: ``pages`` is iterated (it must be a list) and the leaderboards are read from
``leaderboards`` (plural). Phase dates are ``YYYY-MM-DD HH:MM:SS`` as the page asks.

EvalAI's keys are those of its starter challenge (``challenge_config.yaml`` of
Cloud-CV/EvalAI-Starters, documented at evalai.readthedocs.io "Challenge configuration").
Both files are read with PyYAML, the parser both platforms use.
"""

from __future__ import annotations

import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ovearth_core.hosting.bundle import yaml_bytes
from tests.hosting_helpers import GT, hosting

STR, INT, BOOL, LIST = str, int, bool, list
DATE = "date"  # a string in the documented YYYY-MM-DD HH:MM:SS format


def obj(required: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    return {"required": required, "optional": optional}


COLUMN = obj({"title": STR, "key": STR, "index": INT},
             {"sorting": ("asc", "desc"), "computation": ("sum", "avg", "min", "max"),
              "computation_indexes": [INT], "precision": INT, "hidden": BOOL})
CODABENCH = obj(
    {"version": (2,), "title": STR, "image": STR, "terms": STR,
     "pages": [obj({"title": STR, "file": STR}, {})],
     "phases": [obj({"name": STR, "start": DATE, "tasks": [INT]},
                    {"index": INT, "end": DATE, "description": STR, "max_submissions": INT,
                     "max_submissions_per_day": INT, "auto_migrate_to_this_phase": BOOL,
                     "execution_time_limit": INT, "hide_output": BOOL,
                     "hide_prediction_output": BOOL, "hide_score_output": BOOL,
                     "starting_kit": STR, "public_data": STR,
                     "accepts_only_result_submissions": BOOL})],
     "tasks": [obj({"index": INT, "name": STR, "scoring_program": STR},
                   {"description": STR, "input_data": STR, "reference_data": STR,
                    "ingestion_program": STR, "ingestion_only_during_scoring": BOOL})],
     "leaderboards": [obj({"title": STR, "key": STR, "columns": [COLUMN]},
                          {"submission_rule": ("Add", "Add_And_Delete",
                                               "Add_And_Delete_Multiple", "Force_Last",
                                               "Force_Latest_Multiple", "Force_Best"),
                           "hidden": BOOL})]},
    {"description": STR, "registration_auto_approve": BOOL, "docker_image": STR,
     "make_programs_available": BOOL, "make_input_data_available": BOOL, "queue": STR,
     "enable_detailed_results": BOOL, "show_detailed_results_in_submission_panel": BOOL,
     "show_detailed_results_in_leaderboard": BOOL, "contact_email": STR, "reward": STR,
     "auto_run_submissions": BOOL, "can_participants_make_submissions_public": BOOL,
     "forum_enabled": BOOL, "fact_sheet": dict,
     "solutions": [obj({"index": INT, "tasks": [INT], "path": STR}, {})]})

EVALAI_PHASE = obj({"id": INT, "name": STR, "description": STR, "leaderboard_public": BOOL,
                    "is_public": BOOL, "is_submission_public": BOOL, "start_date": DATE,
                    "end_date": DATE, "test_annotation_file": STR, "codename": STR,
                    "max_submissions_per_day": INT, "max_submissions_per_month": INT,
                    "max_submissions": INT},
                   {"allowed_submission_file_types": STR, "submission_meta_attributes": LIST,
                    "is_restricted_to_select_one_submission": BOOL,
                    "is_partial_submission_evaluation_enabled": BOOL})
EVALAI = obj(
    {"title": STR, "short_description": STR, "description": STR, "evaluation_details": STR,
     "terms_and_conditions": STR, "image": STR, "submission_guidelines": STR,
     "leaderboard_description": STR, "evaluation_script": STR, "remote_evaluation": BOOL,
     "start_date": DATE, "end_date": DATE, "published": BOOL,
     "leaderboard": [obj({"id": INT, "schema": obj({"labels": [STR],
                                                     "default_order_by": STR}, {})}, {})],
     "challenge_phases": [EVALAI_PHASE],
     "dataset_splits": [obj({"id": INT, "name": STR, "codename": STR}, {})],
     "challenge_phase_splits": [obj({"challenge_phase_id": INT, "leaderboard_id": INT,
                                     "dataset_split_id": INT, "visibility": (1, 2, 3),
                                     "leaderboard_decimal_precision": INT,
                                     "is_leaderboard_order_descending": BOOL}, {})]},
    {"is_docker_based": BOOL})


def violations(value: Any, schema: Any, where: str = "") -> list[str]:
    """Every place ``value`` departs from ``schema`` (an ``obj``, ``[item schema]``, a type,
    a tuple of allowed values or :data:`DATE`)."""
    if isinstance(schema, dict) and "required" in schema:
        if not isinstance(value, dict):
            return [f"{where}: expected a mapping, found {value!r}"]
        out = [f"{where}.{k}: required, missing" for k in schema["required"] if k not in value]
        known = {**schema["required"], **schema["optional"]}
        for k, v in value.items():
            if k not in known:
                out.append(f"{where}.{k}: not a documented key")
            else:
                out += violations(v, known[k], f"{where}.{k}")
        return out
    if isinstance(schema, list):
        if not isinstance(value, list) or not value:
            return [f"{where}: expected a non-empty list, found {value!r}"]
        return [p for i, item in enumerate(value) for p in violations(item, schema[0],
                                                                      f"{where}[{i}]")]
    if isinstance(schema, tuple):
        return [] if value in schema else [f"{where}: expected one of {schema}, found {value!r}"]
    if schema == DATE:
        try:
            datetime.strptime(value, "%Y-%m-%d %H:%M:%S")
        except (TypeError, ValueError):
            return [f"{where}: expected YYYY-MM-DD HH:MM:SS, found {value!r}"]
        return []
    ok = isinstance(value, schema) and not (schema is INT and isinstance(value, bool))
    return [] if ok else [f"{where}: expected {schema.__name__}, found {value!r}"]


def test_the_checker_refuses_what_it_should() -> None:
    good = {"title": "t", "key": "k", "index": 0, "sorting": "desc"}
    assert violations(good, COLUMN) == []
    assert violations({**good, "sort": "desc"}, COLUMN) == [".sort: not a documented key"]
    assert violations({"title": "t", "index": True}, COLUMN) == [
        ".key: required, missing", ".index: expected int, found True"]
    assert violations({**good, "sorting": "up"}, COLUMN)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("yaml")
    out = {"codabench": folder / "c.zip", "evalai": folder / "e.zip"}
    for kind, path in out.items():
        hosting(kind, "--gt", str(GT), "--out", str(path), "--phase",
                "Dev,2026-01-01,2026-02-01", "--phase", "Final,2026-02-01")
    return out


def test_competition_yaml_has_only_codabenchs_documented_keys(bundles: dict[str, Path]) -> None:
    with zipfile.ZipFile(bundles["codabench"]) as z:
        doc = yaml.safe_load(z.read("competition.yaml"))
        names = set(z.namelist())
        assert violations(doc, CODABENCH) == []
        files = [doc["image"], doc["terms"], *(p["file"] for p in doc["pages"]),
                 *(p["starting_kit"] for p in doc["phases"]),
                 *(s["path"] for s in doc["solutions"]),
                 *(t[k] for t in doc["tasks"] for k in ("scoring_program", "reference_data"))]
        assert set(files) <= names, set(files) - names
        with zipfile.ZipFile(z.open("scoring_program.zip")) as program:
            assert yaml.safe_load(program.read("metadata"))["command"].startswith("python3 ")
    task_ids = {t["index"] for t in doc["tasks"]}
    assert all(set(p["tasks"]) <= task_ids for p in doc["phases"])
    assert all(set(s["tasks"]) <= task_ids for s in doc["solutions"])
    columns = doc["leaderboards"][0]["columns"]
    assert [c["index"] for c in columns] == list(range(len(columns)))
    assert len({c["key"] for c in columns}) == len(columns)
    # Codabench's rule: every phase but the last has an end, and none starts before it.
    ends = [p.get("end") for p in doc["phases"]]
    assert None not in ends[:-1]
    assert all(b["start"] >= a["end"]
               for a, b in zip(doc["phases"], doc["phases"][1:], strict=False))


def test_challenge_config_has_evalais_keys(bundles: dict[str, Path]) -> None:
    with zipfile.ZipFile(bundles["evalai"]) as z:
        doc = yaml.safe_load(z.read("challenge_config.yaml"))
        names = set(z.namelist())
    assert violations(doc, EVALAI) == []
    files = [doc[k] for k in ("description", "evaluation_details", "terms_and_conditions",
                              "image", "submission_guidelines", "evaluation_script")]
    files += [p[k] for p in doc["challenge_phases"]
              for k in ("description", "test_annotation_file")]
    assert set(files) <= names, set(files) - names
    schema = doc["leaderboard"][0]["schema"]
    assert schema["default_order_by"] == schema["labels"][0]
    splits = {s["id"] for s in doc["dataset_splits"]}
    phases = {p["id"] for p in doc["challenge_phases"]}
    assert {s["dataset_split_id"] for s in doc["challenge_phase_splits"]} <= splits
    assert {s["challenge_phase_id"] for s in doc["challenge_phase_splits"]} == phases
    assert [p["codename"] for p in doc["challenge_phases"]] == ["dev", "final"]


# Every code point, lone surrogates and C1 controls (U+0085, NEL) included: a title or a phase
# name is whatever an organiser types.
TEXT = st.text(st.characters(blacklist_categories=()))
SCALARS = (st.none() | st.booleans() | st.integers(-10**12, 10**12)
           | st.floats(allow_nan=False, allow_infinity=False) | TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(TEXT, inner, max_size=4), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=6))
def test_pyyaml_reads_back_what_the_writer_wrote(doc: dict[str, Any]) -> None:
    assert yaml.safe_load(yaml_bytes(doc)) == doc


HOSTILE = ["a: b", "- item", "'single' \"double\"", "line one\nline two\r\n", "&anchor",
           "*alias", "!!python/object:os.system", "!tag", "# not a comment", "{x: 1}", "[1, 2]",
           "yes", "No", "null", "~", "1e3", "0x1F", "2026-01-01 00:00:00", "@at `tick` %pct",
           "\x85nel\u2028ls\u2029ps\ufeffbom", "\x00\x07\x1b\x7f", "\ud800", "ünïcødé 遥感 🛰",
           " leading and trailing ", "", "|", ">", "? key", "--- doc", "..."]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_read_back_as_written(text: str) -> None:
    doc = {"title": text, text: [text, {"name": text}], "n": 1}
    assert yaml.safe_load(yaml_bytes(doc)) == doc


def test_a_hostile_title_and_phase_reach_both_platforms_unchanged(tmp_path: Path) -> None:
    """What an organiser types (title, description, phase name) is what the platform reads."""
    title = "Test: 'A' & *B* !c # \"d\" — 遥感"
    description = "first line\nsecond: line\u2028%% &x *y !z"
    phase = "Dev: one 'two' & *three*"
    for kind, name in (("codabench", "competition.yaml"), ("evalai", "challenge_config.yaml")):
        out = tmp_path / f"{kind}.zip"
        hosting(kind, "--gt", str(GT), "--out", str(out), "--title", title,
                "--description", description, "--phase", f"{phase},2026-01-01")
        with zipfile.ZipFile(out) as z:
            raw = z.read(name)
        raw.decode("ascii")  # every other character escaped
        doc = yaml.safe_load(raw)
        assert doc["title"] == title
        if kind == "codabench":
            assert doc["description"] == description
            assert doc["phases"][0]["name"] == phase
        else:
            assert doc["short_description"] == description
            assert doc["challenge_phases"][0]["name"] == phase


def test_the_bundles_yaml_is_pyyamls(bundles: dict[str, Path]) -> None:
    """The files are written by PyYAML's ``safe_dump`` (keys in order, ASCII), not by hand."""
    for kind, name in (("codabench", "competition.yaml"), ("evalai", "challenge_config.yaml")):
        with zipfile.ZipFile(bundles[kind]) as z:
            raw = z.read(name)
        doc = yaml.safe_load(raw)
        assert raw == yaml.safe_dump(doc, sort_keys=False).encode("ascii")
