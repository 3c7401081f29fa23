"""Mutation testing of one module with mutmut (issue 47; docs/tests.md, "Mutation testing").

    python tests/mutation.py ovearth_core/audit/fix.py            # its tests from MODULE_TESTS
    python tests/mutation.py ovearth_core/x.py tests/core/test_x.py ...   # or named here
    python tests/mutation.py ovearth_core/audit/fix.py --results  # survivors of the last run
    python tests/mutation.py ovearth_core/audit/fix.py --survivors  # re-test only those
    python tests/mutation.py ovearth_core/audit/consensus.py --only 'x_calibrate__*'  # some

mutmut reads its settings from ``pyproject.toml`` in the folder it runs in and keeps its
work in ``mutants/`` there, so one module gets its own folder, ``.mutation/<module>/``:
links to the repository's files, and a ``pyproject.toml`` whose ``[tool.mutmut]`` is the
project's plus ``only_mutate`` (this module) and the module's test files added to
``pytest_add_cli_args_test_selection``. mutmut runs those tests once to learn which test
calls which function, then each mutant runs only the tests that call its function. A second
run of the same module re-tests only the functions that changed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"

# The tests a developer runs for each module (the ones that exercise it directly).
MODULE_TESTS: dict[str, list[str]] = {
    "ovearth_core/files.py": ["tests/core/test_files.py", "tests/core/test_write_path.py",
                              "tests/core/test_mutants_files.py"],
    "ovearth_core/report/html.py": ["tests/analysis/test_mutants_report_html.py"],
    "ovearth_core/audit/fix.py": ["tests/core/test_audit_fix.py",
                                  "tests/core/test_mutants_audit_fix.py"],
    "ovearth_core/georef.py": ["tests/core/test_gsd.py",
                               "tests/analysis/test_export_geojson_crs.py",
                               "tests/core/test_mutants_georef.py"],
    # (calibrate, best_f1 and _clusters were run with the fast tests alone, named on the
    # command line with --only: docs/tests.md)
    "ovearth_core/audit/consensus.py": ["tests/core/test_audit.py",
                                        "tests/core/test_audit_scale.py",
                                        "tests/core/test_mutants_audit_consensus.py"],
    # shapes.py: the direct tests only; the audit scene's tests (test_audit.py's scene
    # fixture, test_audit_scale.py's brute-force clusterings) took about 10 s a mutant.
    "ovearth_core/audit/shapes.py": [
        "tests/core/test_mutants_audit_shapes.py", "tests/core/test_audit.py", "-k",
        "not (injected or suspect_fields or object_support or cli_ or same_file)"],
    # The Audit page's rules, in-process (its AppTest, tests/app/test_app_audit.py, keeps
    # the wiring but is too slow to run for every mutant).
    # The render functions and the page itself with Streamlit replaced by a recorder
    # (tests/st_recorder.py); what_if and suspect_picture called directly.
    "pages/common/audit_views.py": ["tests/app/test_mutants_audit_page.py",
                                    "tests/app/test_mutants_audit_views.py"],
    "pages/common/audit_data.py": ["tests/app/test_mutants_audit_page.py",
                                   "tests/app/test_mutants_audit_data.py"],
    "pages/Audit.py": ["tests/app/test_mutants_audit_script.py"],
    # The command's own tests (tests/analysis/test_export_geojson*.py) write GeoTIFFs and
    # run every step for each mutant: 0.07 mutants/s here, 3 h for the module's 764.
    "ovearth_core/analysis/export.py": ["tests/analysis/test_mutants_export.py"],
    # The ranks' own files (test_rank_stats.py, test_leaderboard.py, ...) evaluate submissions
    # in module fixtures or run the command: seconds a mutant. These state the same rules on
    # synthetic pieces and hand-built results (docs/tests.md, "Mutation testing").
    "ovearth_core/analysis/rank_stats.py": ["tests/analysis/test_mutants_rank_stats.py"],
    "ovearth_core/analysis/standings.py": ["tests/analysis/test_mutants_standings.py"],
    "ovearth_core/analysis/evidence.py": ["tests/analysis/test_mutants_evidence.py"],
    # In-process tests only: tests/core/test_hosting.py and test_hosting_evalai.py run the
    # bundle's score.py in a subprocess in a temporary folder, where a mutated function
    # cannot find mutmut's settings; test_hosting_scorer.py states the same rules in process.
    "ovearth_core/hosting/scorer.py": ["tests/core/test_hosting_scorer.py",
                                       "tests/core/test_mutants_hosting_scorer.py"],
    # Without test_hosting_archives.py's subprocess tests (as above) and its three slowest
    # (10,001 files, 1,100 folders, 150 random zips: seconds per mutant); the limits' edges
    # are tested with lowered limits in test_mutants_hosting_archive.py.
    "ovearth_core/hosting/archive.py": [
        "tests/core/test_mutants_hosting_archive.py",
        "tests/core/test_hosting_archives.py::test_a_strange_zip_is_refused_with_one_message",
        "tests/core/test_hosting_archives.py::test_an_ordinary_zip_is_still_read",
        "tests/core/test_hosting_archives.py::"
        "test_a_shallow_folder_and_an_undecodable_name_are_found",
        "tests/core/test_hosting.py::"
        "test_a_macos_zip_with_resource_forks_finds_the_one_prediction_file"],
    # links.py: the direct tests (its AppTest and round-trip tests take > 30 min under mutmut)
    "pages/common/links.py": ["tests/app/test_mutants_links.py"],
    # viewer.py: the direct tests (its AppTest runs are too slow for mutmut); the page's
    # wiring (render, toolbar, chip link, card ahead, prefetch) with Streamlit recorded
    "pages/common/viewer.py": ["tests/app/test_mutants_viewer.py",
                               "tests/app/test_mutants_viewer_page.py"],
    # viewer_card.py: the card's navigator lines, payload, pictures and clicks in-process
    # (its AppTest files, test_app_viewer_card.py and test_error_navigation.py, are slow)
    "pages/common/viewer_card.py": ["tests/app/test_mutants_viewer_card.py"],
    # The Leaderboard's ranks view and page: the direct tests (Streamlit replaced by a
    # recorder, tests/st_recorder.py); test_app_ranks.py's AppTest runs: too slow
    "pages/common/rank_views.py": ["tests/app/test_mutants_rank_views.py"],
    "pages/Leaderboard.py": ["tests/app/test_mutants_leaderboard_page.py"],
    # results.py: the fast field-by-field check and test_results.py's table of malformed
    # dicts, without its three tests over the demo's and a generated benchmark's submissions
    # (they evaluate 12 submissions per mutant)
    "ovearth_core/results.py": [
        "tests/core/test_mutants_results.py", "tests/core/test_results.py", "-k",
        "not (test_results and (field_by_field or options_reach or unknown_query))"],
    # voc.py: in-process tests only. Not test_xml_reader.py, whose memory test (tens of
    # seconds on a loaded machine) ran for every surviving mutant of the reading functions
    # (it is xmlread's); not the command runs (test_convert_cli.py, test_convert_degenerate.py,
    # test_convert_file_names.py and two tests of test_convert_voc.py run a subprocess, where
    # no mutant is active) nor the fuzz test (150 documents, 9 s a mutant): the same rules
    # are stated by direct calls in test_mutants_voc.py.
    "ovearth_core/convert/voc.py": [
        "tests/convert/test_convert_voc.py", "tests/convert/test_convert_modalities.py",
        "tests/convert/test_convert_extent.py",
        "tests/core/test_roundtrip_writers.py::test_from_voc_keeps_every_field",
        "tests/convert/test_mutants_voc.py", "-k",
        "not (never_crashes or evaluate_as_worked_by_hand or summary_says_what_was_converted)"],
    # bundle.py and config.py: their own in-process tests (test_hosting.py and
    # test_hosting_evalai.py write bundles in a subprocess, where a mutant is not switched
    # on; test_hosting_scorer.py builds a config in every test, 100 s per mutant here).
    "ovearth_core/hosting/bundle.py": ["tests/core/test_mutants_hosting_bundle.py"],
    "ovearth_core/hosting/config.py": ["tests/core/test_mutants_hosting_config.py"],
    # common.py: its direct tests (every converter's tests call it too, with whole runs).
    "ovearth_core/convert/common.py": ["tests/convert/test_mutants_convert_common.py"],
    # xmlread.py: its direct tests, and from-voc's in-process refusals of hostile XML. Not
    # test_xml_reader.py (its memory test takes tens of seconds a mutant on a loaded
    # machine; its hostile-XML tests run the command in a subprocess, where no mutant is
    # active) nor test_convert_voc.py as a whole (its subprocess runs, its fuzz test).
    "ovearth_core/convert/xmlread.py": [
        "tests/convert/test_mutants_xmlread.py",
        "tests/convert/test_convert_voc.py::"
        "test_hostile_or_broken_xml_is_refused_and_nothing_is_written"],
}

# Entries of the repository the tests read besides the code and the tests themselves.
LINKED = ("ovearth_core", "pages", "tests", "assets", "benchmarks", "docs", ".streamlit",
          "app.py", "README.md", "CONTRIBUTING.md", "requirements.txt")


def _toml_value(value: object) -> str:
    """A TOML literal of a string, number, boolean or list of them (JSON's spelling of
    these is TOML's, except for booleans, which json also spells true/false)."""
    return json.dumps(value, ensure_ascii=False)


def module_config(module: str, tests: list[str]) -> str:
    """The project's ``pyproject.toml`` with ``[tool.mutmut]`` narrowed to ``module`` and
    ``tests``."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = dict(tomllib.loads(text)["tool"]["mutmut"])
    table["only_mutate"] = [module]
    table["pytest_add_cli_args_test_selection"] = (
        list(table.get("pytest_add_cli_args_test_selection", [])) + tests)
    body = "".join(f"{key} = {_toml_value(value)}\n" for key, value in table.items())
    head, sep, rest = text.partition("[tool.mutmut]\n")
    if not sep:
        raise SystemExit("pyproject.toml has no [tool.mutmut] table")
    following = re.search(r"^\[", rest, flags=re.MULTILINE)
    tail = rest[following.start():] if following else ""
    return f"{head}[tool.mutmut]\n{body}\n{tail}"


def prepare(module: str, tests: list[str]) -> Path:
    """``.mutation/<module>/``: links to the repository's entries and the narrowed
    ``pyproject.toml`` (rewritten only when it changes, so mutmut keeps its results)."""
    folder = WORK / module.removesuffix(".py").replace("/", ".")
    folder.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        link = folder / name
        if (ROOT / name).exists() and not link.is_symlink():
            link.symlink_to(ROOT / name)
    config = module_config(module, tests)
    target = folder / "pyproject.toml"
    if not target.exists() or target.read_text(encoding="utf-8") != config:
        target.write_text(config, encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/mutation.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("module", help="the file to mutate, e.g. ovearth_core/audit/fix.py")
    parser.add_argument("tests", nargs="*",
                        help="test files (default: the module's line in MODULE_TESTS)")
    parser.add_argument("--max-children", type=int, default=2,
                        help="mutants tested at once (default 2)")
    parser.add_argument("--results", action="store_true",
                        help="list the surviving mutants of the last run instead of running")
    parser.add_argument("--survivors", action="store_true",
                        help="re-test only the survivors of the last run (after adding tests)")
    parser.add_argument("--only", action="append", default=[], metavar="GLOB",
                        help="test only the mutants whose name matches GLOB (mutmut's "
                             "names without the module, e.g. 'x_calibrate__*'; repeatable)")
    args = parser.parse_args(argv)
    module = Path(args.module).as_posix()
    if not (ROOT / module).is_file():
        parser.error(f"{module}: no such file in {ROOT}")
    tests = args.tests or MODULE_TESTS.get(module)
    if not tests:
        parser.error(f"{module} has no tests in MODULE_TESTS: name them after the module")
    folder = prepare(module, tests)
    mutmut = [sys.executable, "-m", "mutmut"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if args.results:
        return subprocess.run([*mutmut, "results"], cwd=folder, env=env, check=False).returncode
    names: list[str] = []
    if args.survivors:
        listed = subprocess.run([*mutmut, "results"], cwd=folder, env=env, check=False,
                                capture_output=True, text=True).stdout
        names = [line.split(":")[0].strip() for line in listed.splitlines()
                 if line.strip().endswith(": survived")]
        if not names:
            print(f"{module}: no survivors to re-test")
    dotted = module.removesuffix(".py").replace("/", ".")
    names += [f"{dotted}.{glob}" for glob in args.only]
    rc = subprocess.run([*mutmut, "run", "--max-children", str(args.max_children), *names],
                        cwd=folder, env=env, check=False).returncode
    subprocess.run([*mutmut, "export-cicd-stats"], cwd=folder, env=env, check=False,
                   capture_output=True)
    stats = folder / "mutants" / "mutmut-cicd-stats.json"
    if stats.exists():
        print(score_line(module, json.loads(stats.read_text(encoding="utf-8"))))
    return rc


def score_line(module: str, stats: dict[str, int]) -> str:
    """The module's score as docs/tests.md reports it: killed (by a test or a timeout) over
    the mutants that some test runs (mutants no test reaches count as survivors)."""
    killed = stats.get("killed", 0) + stats.get("timeout", 0)
    tried = killed + stats.get("survived", 0) + stats.get("no_tests", 0)
    score = f"{killed / tried:.0%}" if tried else "–"
    return (f"{module}: {killed} killed of {tried} ({score}); survived "
            f"{stats.get('survived', 0)}, no tests {stats.get('no_tests', 0)}, "
            f"skipped {stats.get('skipped', 0)}, suspicious {stats.get('suspicious', 0)}")


if __name__ == "__main__":
    sys.exit(main())
