"""The suite's own running time (issues 47 and 49: the whole suite within 8 minutes in CI).

What keeps it short is set up in tests/conftest.py and README.md's test command; these
tests pin those settings, so a later edit cannot undo them unnoticed."""

from __future__ import annotations

import gc
import re
from pathlib import Path

from browser_support import shots_wanted
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest


def test_the_collected_heap_is_frozen() -> None:
    """After collection the garbage collector no longer walks the objects the test modules
    imported (``gc.freeze`` in tests/conftest.py): a full collection, which statsmodels'
    Holm correction runs on every call, then costs what the test made, not the whole heap."""
    assert gc.get_freeze_count() > 10_000
    assert gc.isenabled()


def test_streamlit_scans_the_installed_components_once() -> None:
    """Each new ``AppTest`` asks Streamlit to scan every installed distribution's metadata
    for components (0.2 s of CPU each; hundreds of ``AppTest``s in the suite): tests/conftest.py
    makes that scan once per process. Two new ``AppTest`` runs scan at most once between them."""
    scan = manifest_scanner.scan_component_manifests
    assert hasattr(scan, "cache_info"), "the component scan is not memoised (tests/conftest.py)"
    before = scan.cache_info()
    for _ in range(2):
        AppTest.from_string("import streamlit as st\nst.write('x')").run(timeout=60)
    after = scan.cache_info()
    assert after.misses - before.misses <= 1
    assert after.hits + after.misses - before.hits - before.misses == 2


def test_app_scripts_are_compiled_once_per_content(tmp_path: Path) -> None:
    """Each new ``AppTest`` has a new ``ScriptCache``; tests/conftest.py keeps the compiled
    script per path and content for the process. A second ``AppTest`` of the same script runs
    the bytecode of the first; a script rewritten between them runs its new text."""
    script = tmp_path / "page.py"
    script.write_text("import streamlit as st\nst.write('one')\n")
    first, second = ScriptCache(), ScriptCache()
    code = first.get_bytecode(str(script))
    assert second.get_bytecode(str(script)) is code
    at = AppTest.from_file(str(script)).run(timeout=60)
    assert [m.value for m in at.markdown] == ["one"]
    script.write_text("import streamlit as st\nst.write('two')\n")
    assert second.get_bytecode(str(script)) is not code
    at = AppTest.from_file(str(script)).run(timeout=60)
    assert [m.value for m in at.markdown] == ["two"]


def test_browser_screenshots_are_taken_only_for_a_person_or_a_test() -> None:
    """A screenshot for a person (``browser_support.shoot`` / ``snap``) is taken only under
    ``OVEARTH_SHOTS``; a test file calls ``.screenshot(`` itself only to read the picture
    (bytes, never a ``path=``), and waits for a condition, never a fixed minute."""
    assert not shots_wanted({}) and not shots_wanted({"OVEARTH_SHOTS": "0"})
    assert shots_wanted({"OVEARTH_SHOTS": "1"})
    for test in sorted((Path(__file__).parents[1] / "browser").glob("test_*.py")):
        text = test.read_text(encoding="utf-8")
        assert not re.search(r"\.screenshot\(\s*path=", text), test.name
        assert "60_000" not in text, test.name
