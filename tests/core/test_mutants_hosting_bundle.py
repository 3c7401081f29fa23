"""Competition bundles, in this process (issue 47, mutation testing of
``ovearth_core/hosting/bundle.py``): the rules the command tests of test_hosting.py and
test_hosting_evalai.py check on a bundle written by a subprocess, stated on direct calls.

A bundle is read back with the platforms' own readers (``zipfile``, PyYAML's
``safe_load``, ``json``), never with the writer's helpers; expected values are written out
here. A bundle keeps every field of its configuration (``scoring.json`` is ``to_json``), of
its phases (names, dates, end only when there is one) and of its inputs (the ground truth's
and the sample's bytes, unchanged).
"""

from __future__ import annotations

import io
import json
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

import ovearth_core
from ovearth_core.hosting import bundle
from ovearth_core.hosting.bundle import (
    FAR_FUTURE,
    Phase,
    check_phases,
    codabench_bundle,
    evalai_bundle,
    evaluation_text,
    package_files,
    parse_phase,
    skeleton,
    starting_kit_readme,
    yaml_bytes,
    zip_bytes,
)
from ovearth_core.hosting.config import Column, HostingConfig, Limits
from ovearth_core.options import Options

PACKAGE = Path(ovearth_core.__file__).resolve().parent
# The package a program carries, in the bundles built here: package_files() itself is tested
# on the real package below; zipping the real one (1.5 MB) made each bundle take a second.
CODE = {"ovearth_core/__init__.py": b"", "ovearth_core/hosting/scorer.py": b"# scorer\n"}
GT = b'{"annotations": [], "tasks": {}}\n'  # bytes kept as given, never parsed
SAMPLE = b'{"tasks": {"referring": []}}\n'


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {info.filename: z.read(info) for info in z.infolist()}


def _config(**kw: Any) -> HostingConfig:
    """Referring and open vocabulary on boxes, every limit off its default."""
    return HostingConfig(("referring", "vocabulary"),
                         Options("referring", "oriented_bbox,bbox", 0.3, kw.pop("score", 0.25),
                                 "xywh"),
                         (Column("referring", "oriented_bbox_micro_f1"),
                          Column("vocabulary", "presence_mcc")),
                         Limits(2.5, 90.5, 1234), **kw)


PHASES = [Phase("Dev Phase", datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 2, 1)),
          Phase("Final!", datetime(2026, 2, 1), None)]


# ---- phases --------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "codename"), [
    ("Dev", "dev"), ("Final Test (2)", "final_test_2"), ("  Dev--Phase  ", "dev_phase"),
    ("!!!", "phase"), ("Ä9b", "9b")])
def test_a_phase_codename_is_its_lowercase_letters_and_digits(name: str, codename: str
                                                              ) -> None:
    """Runs of anything but a-z and 0-9 become one ``_``, none at either end; a name with
    no letter or digit is ``phase``."""
    assert Phase(name, datetime(2026, 1, 1)).codename == codename


@pytest.mark.parametrize(("text", "phase"), [
    ("Dev,2026-01-01", Phase("Dev", datetime(2026, 1, 1))),
    (" Dev , 2026-01-01 12:30 ,", Phase("Dev", datetime(2026, 1, 1, 12, 30))),
    ("Final,2026-01-01,2026-01-01 00:00:01",
     Phase("Final", datetime(2026, 1, 1), datetime(2026, 1, 1, 0, 0, 1))),
])
def test_a_phase_is_name_start_and_an_optional_end(text: str, phase: Phase) -> None:
    """``NAME,START[,END]``, spaces around each part dropped; an empty END is none."""
    assert parse_phase(text) == phase


@pytest.mark.parametrize(("text", "message"), [
    ("Dev", "expected NAME,START[,END], found 'Dev'"),
    (",2026-01-01", "expected NAME,START[,END], found ',2026-01-01'"),
    ("Dev,2026-01-01,2026-02-01,x", "expected NAME,START[,END], found "
                                    "'Dev,2026-01-01,2026-02-01,x'"),
    ("Dev,2026-01-02,2026-01-02", "phase Dev: the end 2026-01-02 00:00:00 is not after the "
                                  "start 2026-01-02 00:00:00"),
    ("Dev,2026-01-02,2026-01-01", "phase Dev: the end 2026-01-01 00:00:00 is not after the "
                                  "start 2026-01-02 00:00:00"),
])
def test_a_malformed_phase_is_refused_saying_what_was_expected(text: str, message: str
                                                               ) -> None:
    with pytest.raises(ValueError) as err:
        parse_phase(text)
    assert str(err.value) == message


def test_phases_follow_each_other_and_only_the_last_is_open() -> None:
    """Codabench's rule: a phase may start when the previous one ends (not before); every
    phase but the last has an end; codenames differ."""
    a = Phase("A", datetime(2026, 1, 1), datetime(2026, 2, 1))
    b = Phase("B", datetime(2026, 2, 1), datetime(2026, 3, 1))
    c = Phase("C", datetime(2026, 3, 1))
    check_phases([a, b, c])
    check_phases([c])
    with pytest.raises(ValueError) as err:
        check_phases([a, Phase("B", datetime(2026, 2, 1)), c])
    assert str(err.value) == "phase B needs an end: phase C follows it"
    with pytest.raises(ValueError) as err:
        check_phases([a, Phase("B", datetime(2026, 1, 31, 23, 59), datetime(2026, 3, 1))])
    assert str(err.value) == "phase B starts before phase A ends"


def test_phase_names_must_differ_in_letters_and_digits() -> None:
    dev = Phase("Dev", datetime(2026, 1, 1), datetime(2026, 2, 1))
    with pytest.raises(ValueError) as err:
        check_phases([dev, Phase("dev!", datetime(2026, 2, 1))])
    assert str(err.value) == "phase names must differ in letters and digits: dev, dev"
    check_phases([dev, Phase("dev2", datetime(2026, 2, 1))])


# ---- YAML, zips, the package ----------------------------------------------------------------

def test_yaml_keeps_the_keys_order_every_type_and_is_ascii() -> None:
    """Read back by PyYAML as the same document, keys in the order given (not sorted); a
    string that reads as another type stays a string; other characters are escaped."""
    doc = {"zeta": "no", "alpha": "2026-01-01 00:00:00", "n": 1e3, "s": "1e3",
           "t": "Café — ☃", "none": None, "list": [True, {"b": 1, "a": 2}]}
    data = yaml_bytes(doc)
    data.decode("ascii")
    back = yaml.safe_load(data)
    assert back == doc and list(back) == list(doc) and list(back["list"][1]) == ["b", "a"]


def test_a_zip_keeps_every_file_in_order_with_fixed_times_and_readable_modes() -> None:
    """The same files give the same bytes: every entry dated 1980-01-01, deflated, mode
    0644; names and bytes as given, in the given order."""
    files = {"b/x.txt": b"x" * 1000, "a.bin": bytes(range(256)), "empty": b""}
    data = zip_bytes(files)
    assert data == zip_bytes(dict(files))
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        infos = z.infolist()
        assert [i.filename for i in infos] == list(files)
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos)
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in infos)
        assert all(i.external_attr == 0o644 << 16 for i in infos)
        assert {i.filename: z.read(i) for i in infos} == files
        assert infos[0].compress_size < 1000  # deflated, not stored


def test_the_package_files_are_every_python_file_of_this_package_unchanged() -> None:
    """``{prefix + path relative to the package: bytes}`` of every ``.py`` file, sorted, no
    compiled file and nothing from ``__pycache__``."""
    expected = {"ovearth_core/" + p.relative_to(PACKAGE).as_posix(): p.read_bytes()
                for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    got = package_files()
    assert got == expected and list(got) == sorted(got)
    assert "ovearth_core/hosting/scorer.py" in got and "ovearth_core/__init__.py" in got
    assert set(package_files("x/")) == {"x/" + k.removeprefix("ovearth_core/") for k in got}


def test_the_logo_is_a_128_pixel_square_png_of_one_colour_not_black() -> None:
    """(kills ``logo`` 8, 11: the colour dropped, a black tile)"""
    image = Image.open(io.BytesIO(bundle.logo()))
    assert (image.format, image.size, image.mode) == ("PNG", (128, 128), "RGB")
    ((count, colour),) = image.getcolors()
    assert count == 128 * 128 and colour != (0, 0, 0)


# ---- the starting kit's sample and the pages --------------------------------------------

GT_DOC = {"tasks": {
    "open_vocabulary": [{"query_id": "ov1", "phrase": "plane", "ann_id": "a", "type": "positive"},
                        {"query_id": "ov2", "ann_id": "a", "type": "negative"}],
    "referring": [{"query_id": "rf1", "query": "the left plane", "ann_id": "a"}],
    "reasoning": [{"query_id": "rs1", "query": "what lands here", "ann_id": "a"}]}}


def test_the_sample_answers_every_scored_query_with_its_text_and_nothing_else() -> None:
    """One row per query of each scored task (not of the others), its id and its text
    (``phrase`` in open vocabulary, ``query`` otherwise, empty when missing); an empty
    answer in each scored modality only: ``segmentation`` null, box fields empty lists."""
    config = HostingConfig(("referring", "vocabulary"), Options("referring", "bbox,segmentation"))
    data = skeleton(GT_DOC, config)
    assert data.endswith(b"}\n") and b'\n  "tasks"' in data  # indented, one newline
    assert json.loads(data) == {"tasks": {
        "referring": [{"query_id": "rf1", "query": "the left plane", "segmentation": None,
                       "bbox": []}],
        "open_vocabulary": [
            {"query_id": "ov1", "phrase": "plane", "segmentation": None, "bbox": []},
            {"query_id": "ov2", "phrase": "", "segmentation": None, "bbox": []}]}}
    obb = HostingConfig(("reasoning",), Options("reasoning", "oriented_bbox"))
    assert json.loads(skeleton(GT_DOC, obb)) == {"tasks": {"reasoning": [
        {"query_id": "rs1", "query": "what lands here", "oriented_bbox": []}]}}
    no_rows = {"tasks": {"open_vocabulary": []}}
    assert json.loads(skeleton(no_rows, obb)) == {"tasks": {"reasoning": []}}


def test_the_evaluation_page_states_the_options_columns_and_limits() -> None:
    text = evaluation_text(_config())
    assert text.startswith("# Evaluation\n\n")
    for line in ("- Tasks: Referring, Open vocabulary",
                 "- Modalities: oriented_bbox, bbox",
                 "- IoU threshold: 0.3; score threshold: 0.25; box format: xywh",
                 "| `referring_oriented_bbox_micro_f1` | Referring: OBB micro F1 |\n"
                 "| `open_vocabulary_presence_mcc` | Open vocabulary: Presence MCC |\n",
                 "- the file is larger than 2.5 MB,",
                 "- a query has more than 1,234 boxes in one box field;",
                 "- scoring takes longer than 90.5 s."):
        assert line in text, line
    assert "score threshold: none;" in evaluation_text(_config(score=None))


def test_the_starting_kit_readme_is_the_evaluation_page_retitled_with_its_files() -> None:
    text = starting_kit_readme(_config())
    assert text.startswith("# Starting kit\n\n") and "# Evaluation" not in text
    assert text.count("# Starting kit") == 1
    assert "\n## Files\n\n- `predictions.json`: an empty answer" in text
    assert "`zip submission.zip predictions.json`" in text


# ---- the bundles ----------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _small_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "package_files", lambda: dict(CODE))


# Built for each test (not once per module): mutmut runs a mutant with the tests that called
# its function, and a module's fixture calls it in the first test only.
@pytest.fixture
def codabench(_small_package: None) -> dict[str, Any]:
    config = _config(gallery=3)
    data = codabench_bundle(config, GT, SAMPLE, title="Té: title", description="Desc.",
                            phases=PHASES, docker_image="me/img:2",
                            images={"images/a.png": b"PNG-A", "b.tif": b"TIF"})
    files = _members(data)
    return {"config": config, "data": data, "files": files,
            "doc": yaml.safe_load(files["competition.yaml"])}


def test_a_codabench_bundle_holds_its_files_and_nothing_else(codabench: dict) -> None:
    files = codabench["files"]
    assert list(files) == ["competition.yaml", "logo.png", "pages/overview.md",
                           "pages/evaluation.md", "pages/terms.md", "scoring_program.zip",
                           "reference_data.zip", "starting_kit.zip", "solution.zip"]
    assert files["logo.png"] == bundle.logo()
    assert files["pages/overview.md"] == "# Té: title\n\nDesc.\n".encode()
    assert files["pages/evaluation.md"] == evaluation_text(codabench["config"]).encode()
    assert files["pages/terms.md"].startswith(b"# Terms\n\n")


def test_codabench_programs_carry_this_code_the_config_and_the_inputs_unchanged(
        codabench: dict) -> None:
    """The scoring program runs ``score.py`` of the ``ovearth_core`` beside it with the
    bundle's ``scoring.json`` (its configuration's every field); the reference data is the
    ground truth's bytes and the images as given; the starting kit and the solution hold the
    sample's bytes."""
    files = codabench["files"]
    program = _members(files["scoring_program.zip"])
    assert yaml.safe_load(program["metadata"]) == {
        "command": "python3 $program/score.py $input $output"}
    assert program["score.py"] == bundle.SCORE_PY.encode()
    assert json.loads(program["scoring.json"]) == codabench["config"].to_json()
    assert program["scoring.json"].endswith(b"}\n") and b'\n  "tasks"' in program["scoring.json"]
    assert {k: v for k, v in program.items() if k.startswith("ovearth_core/")} == CODE
    assert set(program) == {"metadata", "score.py", "scoring.json", *CODE}
    assert _members(files["reference_data.zip"]) == {
        "ground_truth.json": GT, "images/a.png": b"PNG-A", "b.tif": b"TIF"}
    kit = _members(files["starting_kit.zip"])
    assert kit == {"README.md": starting_kit_readme(codabench["config"]).encode(),
                   "predictions.json": SAMPLE}
    assert _members(files["solution.zip"]) == {"predictions.json": SAMPLE}


def test_codabench_yaml_holds_the_competition_as_asked(codabench: dict) -> None:
    """Title, description, image, pages, docker image; the detailed results for the
    submitter only; programs shown, input data not; one task, one solution."""
    doc = codabench["doc"]
    assert {k: doc[k] for k in (
        "version", "title", "description", "image", "terms", "docker_image",
        "enable_detailed_results", "show_detailed_results_in_submission_panel",
        "show_detailed_results_in_leaderboard", "make_programs_available",
        "make_input_data_available")} == {
        "version": 2, "title": "Té: title", "description": "Desc.", "image": "logo.png",
        "terms": "pages/terms.md", "docker_image": "me/img:2",
        "enable_detailed_results": True, "show_detailed_results_in_submission_panel": True,
        "show_detailed_results_in_leaderboard": False, "make_programs_available": True,
        "make_input_data_available": False}
    assert doc["pages"] == [{"title": "Overview", "file": "pages/overview.md"},
                            {"title": "Evaluation", "file": "pages/evaluation.md"}]
    assert doc["tasks"] == [{"index": 0, "name": "OVEarth scoring",
                             "description": "Scores a prediction JSON against the hidden "
                                            "ground truth",
                             "scoring_program": "scoring_program.zip",
                             "reference_data": "reference_data.zip"}]
    assert doc["solutions"] == [{"index": 0, "path": "solution.zip", "tasks": [0]}]
    assert list(doc) == ["version", "title", "description", "image", "terms", "docker_image",
                         "enable_detailed_results", "show_detailed_results_in_submission_panel",
                         "show_detailed_results_in_leaderboard", "make_programs_available",
                         "make_input_data_available", "pages", "phases", "tasks",
                         "solutions", "leaderboards"]


def test_codabench_phases_keep_their_names_and_dates_and_the_platforms_backstop(
        codabench: dict) -> None:
    """Each phase in order, indexed from 0, its dates as ``YYYY-MM-DD HH:MM:SS`` strings
    (an end only when it has one), the platform's time limit 60 s beyond the scorer's
    (90.5 s: 150)."""
    common = {"execution_time_limit": 150, "accepts_only_result_submissions": True,
              "starting_kit": "starting_kit.zip", "tasks": [0]}
    assert codabench["doc"]["phases"] == [
        {"index": 0, "name": "Dev Phase", "description": "Dev Phase phase",
         "start": "2026-01-02 03:04:05", "end": "2026-02-01 00:00:00", **common},
        {"index": 1, "name": "Final!", "description": "Final! phase",
         "start": "2026-02-01 00:00:00", **common}]


def test_codabench_leaderboard_is_the_configs_columns_in_order(codabench: dict) -> None:
    assert codabench["doc"]["leaderboards"] == [{"title": "Results", "key": "main", "columns": [
        {"title": "Referring: OBB micro F1", "key": "referring_oriented_bbox_micro_f1",
         "index": 0, "sorting": "desc", "precision": 4},
        {"title": "Open vocabulary: Presence MCC", "key": "open_vocabulary_presence_mcc",
         "index": 1, "sorting": "desc", "precision": 4}]}]


def test_codabench_without_images_has_the_ground_truth_alone_and_is_reproducible() -> None:
    config = _config()
    once = codabench_bundle(config, GT, SAMPLE, title="T", description="D", phases=PHASES[1:],
                            docker_image="i")
    again = codabench_bundle(config, GT, SAMPLE, title="T", description="D",
                             phases=PHASES[1:], docker_image="i")
    assert once == again
    assert _members(_members(once)["reference_data.zip"]) == {"ground_truth.json": GT}


@pytest.fixture
def evalai(_small_package: None) -> dict[str, Any]:
    config = _config(splits={"dev_phase": "dev_split", "final": "final_split"})
    description = "D" * 139 + "EF"
    data = evalai_bundle(config, GT, SAMPLE, title="Té", description=description,
                         phases=PHASES)
    files = _members(data)
    return {"config": config, "files": files, "description": description,
            "doc": yaml.safe_load(files["challenge_config.yaml"])}


def test_an_evalai_bundle_holds_its_files_and_nothing_else(evalai: dict) -> None:
    files, config = evalai["files"], evalai["config"]
    assert list(files) == [
        "challenge_config.yaml", "logo.png", "templates/description.html",
        "templates/evaluation_details.html", "templates/terms_and_conditions.html",
        "templates/submission_guidelines.html", "evaluation_script.zip",
        "annotations/ground_truth.json", "starting_kit/predictions.json"]
    assert files["annotations/ground_truth.json"] == GT
    assert files["starting_kit/predictions.json"] == SAMPLE
    assert files["logo.png"] == bundle.logo()
    assert files["templates/description.html"] == f"<p>{evalai['description']}</p>".encode()
    assert files["templates/evaluation_details.html"] == (
        "<pre>" + evaluation_text(config) + "</pre>").encode()
    assert files["templates/submission_guidelines.html"] == (
        "<pre>" + starting_kit_readme(config) + "</pre>").encode()
    assert files["templates/terms_and_conditions.html"].startswith(b"<p>Submit your own")
    script = _members(files["evaluation_script.zip"])
    assert script["__init__.py"] == bundle.EVALAI_INIT.encode()
    assert script["main.py"] == bundle.EVALAI_MAIN.encode()
    assert json.loads(script["scoring.json"]) == config.to_json()
    assert set(script) == {"__init__.py", "main.py", "scoring.json", *CODE}
    assert {k: v for k, v in script.items() if k.startswith("ovearth_core/")} == CODE


def test_evalai_yaml_holds_the_challenge_as_asked(evalai: dict) -> None:
    """The short description is the first 140 characters; the leaderboard's labels are the
    columns' keys, ordered by the first; the challenge runs from the first phase's start to
    the last one's end."""
    doc = evalai["doc"]
    assert {k: doc[k] for k in doc if k not in (
        "challenge_phases", "dataset_splits", "challenge_phase_splits")} == {
        "title": "Té", "short_description": "D" * 139 + "E",
        "description": "templates/description.html",
        "evaluation_details": "templates/evaluation_details.html",
        "terms_and_conditions": "templates/terms_and_conditions.html",
        "submission_guidelines": "templates/submission_guidelines.html",
        "image": "logo.png", "leaderboard_description": "Ranked by Referring: OBB micro F1",
        "evaluation_script": "evaluation_script.zip", "remote_evaluation": False,
        "is_docker_based": False, "start_date": "2026-01-02 03:04:05",
        "end_date": FAR_FUTURE, "published": False,
        "leaderboard": [{"id": 1, "schema": {
            "labels": ["referring_oriented_bbox_micro_f1", "open_vocabulary_presence_mcc"],
            "default_order_by": "referring_oriented_bbox_micro_f1"}}]}


def test_evalai_phases_and_splits_keep_their_names_dates_and_codenames(evalai: dict) -> None:
    """Each phase numbered from 1 with its codename and dates (an open end is EvalAI's far
    future), its own split from the configuration, and one phase-split row each."""
    doc = evalai["doc"]
    common = {"description": "templates/description.html", "leaderboard_public": True,
              "is_public": True, "is_submission_public": False,
              "test_annotation_file": "annotations/ground_truth.json",
              "max_submissions_per_day": 5, "max_submissions_per_month": 50,
              "max_submissions": 100, "allowed_submission_file_types": ".json, .zip"}
    assert doc["challenge_phases"] == [
        {"id": 1, "name": "Dev Phase", "start_date": "2026-01-02 03:04:05",
         "end_date": "2026-02-01 00:00:00", "codename": "dev_phase", **common},
        {"id": 2, "name": "Final!", "start_date": "2026-02-01 00:00:00",
         "end_date": "2099-12-31 23:59:59", "codename": "final", **common}]
    assert doc["dataset_splits"] == [
        {"id": 1, "name": "Dev Phase split", "codename": "dev_split"},
        {"id": 2, "name": "Final! split", "codename": "final_split"}]
    assert doc["challenge_phase_splits"] == [
        {"challenge_phase_id": i, "leaderboard_id": 1, "dataset_split_id": i,
         "visibility": 3, "leaderboard_decimal_precision": 4,
         "is_leaderboard_order_descending": True} for i in (1, 2)]


def test_evalai_ends_with_the_last_phase_when_it_has_an_end() -> None:
    config = _config(splits={"only": "s"})
    data = evalai_bundle(config, GT, SAMPLE, title="T", description="D",
                         phases=[Phase("Only", datetime(2026, 5, 1), datetime(2026, 6, 1, 8))])
    doc = yaml.safe_load(_members(data)["challenge_config.yaml"])
    assert (doc["start_date"], doc["end_date"]) == ("2026-05-01 00:00:00", "2026-06-01 08:00:00")
