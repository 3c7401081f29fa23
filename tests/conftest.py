"""Settings for every test."""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import sys
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

from ovearth_core.paths import ENV_VAR

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

# No property test has a deadline: time is the benchmarks' business, never a test's (a loaded
# machine made hypothesis's 200 ms default fail correct code). CI (which sets CI=true) also
# replays a fixed seed of every property test, so a gate cannot go red by chance; local runs
# explore new examples on every run.
settings.register_profile("local", deadline=None)
settings.register_profile("ci", derandomize=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "local")


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, None, None]:
    """Collection imports every test module (numpy, scipy, streamlit, statsmodels, ...): a
    heap of some 400,000 objects that lives to the end of the session. Python's cyclic
    garbage collector would walk all of it on every full collection, and some code calls
    ``gc.collect()`` itself (statsmodels' Holm branch of ``multipletests``, a reference in
    tests/analysis/test_rank_stats.py, on every call: 0.1-0.2 s of CPU each with this heap).
    So the collector is off while collecting (the imports' cycles are freed below), and what
    is alive after it is moved to the permanent generation (``gc.freeze``), which no later
    collection walks. Objects the tests make are collected as before; nothing a test checks
    changes, only time (pinned by tests/core/test_suite_time.py)."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()
        _scan_components_once()
        _compile_scripts_once()


def _scan_components_once() -> None:
    """Every ``AppTest`` scans the metadata of every installed distribution for Streamlit
    components (``streamlit.components.v2.manifest_scanner.scan_component_manifests``, called
    by each new ``AppTest``'s first run: about 0.2 s of CPU, email-parsing ~90 METADATA
    files), and the suite makes hundreds of them. What is installed does not change during a
    session, so the scan is made once per process and its result reused. Only processes that
    collected tests using Streamlit pay the import; the app's own server (browser tests) is
    another process and scans as it always does."""
    if "streamlit.testing.v1" not in sys.modules:
        return
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if not isinstance(scan, functools._lru_cache_wrapper):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


_COMPILED: dict[tuple[str, bool, bytes], object] = {}


def _compile_scripts_once() -> None:
    """Every ``AppTest`` makes a new ``ScriptCache``, so each compiles ``app.py`` and its page
    again: read, parse, Streamlit's "magic" rewrite of the syntax tree, ``compile`` (about a
    tenth of an ``AppTest``'s CPU in a profile of tests/app). A served app compiles a script
    once for all its sessions; the suite now does the same per process: the bytecode is kept
    under the script's path, whether magic is on, and the SHA-256 of the file's bytes, so a
    script edited or written by a test is compiled anew. What a script does is unchanged."""
    if "streamlit.testing.v1" not in sys.modules:
        return
    import hashlib

    from streamlit import config
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    compile_once = ScriptCache.get_bytecode
    if getattr(compile_once, "memoised", False):
        return

    def get_bytecode(self: ScriptCache, script_path: str) -> object:
        path = os.path.abspath(script_path)
        try:
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).digest()
        except OSError:
            return compile_once(self, script_path)  # Streamlit's own error
        key = (path, bool(config.get_option("runner.magicEnabled")), digest)
        if key not in _COMPILED:
            _COMPILED[key] = compile_once(self, script_path)
        return _COMPILED[key]

    get_bytecode.memoised = True  # type: ignore[attr-defined]
    ScriptCache.get_bytecode = get_bytecode  # type: ignore[method-assign]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests mirror the package (core, analysis, convert, app, browser); every test under
    tests/browser starts a Streamlit server and headless Chromium: marked ``browser``
    (``-m "not browser"`` leaves them out)."""
    for item in items:
        if item.path.parent.name == "browser":
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session", autouse=True)
def _tmp_is_a_data_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests point the app at data under pytest's temporary folder; the app reads typed
    paths only inside its data roots (ovearth_core.paths)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_VAR, str(tmp_path_factory.getbasetemp()))
        yield


@pytest.fixture(scope="session", autouse=True)
def _result_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The on-disk result cache (ovearth_core.cache) of every test, and of the commands
    tests run, is under pytest's temporary folder: tests never write in the user's home."""
    from ovearth_core.cache import ENV_DIR, ENV_MAX_BYTES, ENV_SWITCH

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_DIR, str(tmp_path_factory.mktemp("result_cache")))
        mp.delenv(ENV_SWITCH, raising=False)
        mp.delenv(ENV_MAX_BYTES, raising=False)
        yield


@pytest.fixture()
def fresh_caches() -> Iterator[None]:
    """Streamlit's caches are shared by every AppTest in the process: start and end empty."""
    import streamlit as st

    from pages.common import viewer

    def idle() -> None:
        # The explorer's background worker finishes what an earlier test handed it (it
        # would draw, through whatever that test patches, while this one runs).
        viewer._PREFETCH.submit(lambda: None).result(timeout=120)
        st.cache_data.clear()
        st.cache_resource.clear()
        viewer._READY.clear()  # the views drawn, for the cards sent ahead

    idle()
    yield
    idle()


@pytest.fixture(scope="session")
def _chromium() -> Iterator[tuple[Browser, asyncio.AbstractEventLoop]]:
    """Headless Chromium (Debian's), launched once per xdist worker, at the first test that
    asks for it, and its Playwright event loop. Every test that opens a page gets a new
    browser context (:func:`new_page`): its own cookies and storage, so a new Streamlit
    session; what a test proves never depended on the browser process being new.

    Playwright's sync API marks its loop as the thread's running loop between its calls:
    left so, ``asyncio.run`` in any later test of this worker (tests/core/test_load.py)
    would refuse to start ("cannot be called from a running event loop"), and a second
    ``sync_playwright()`` would refuse too. So the loop is marked running only during a
    test that uses the browser (:func:`browser`) and cleared between them."""
    from browser_support import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    loop = asyncio.get_running_loop()
    asyncio._set_running_loop(None)
    try:
        yield chromium, loop
    finally:
        asyncio._set_running_loop(loop)
        try:
            chromium.close()
        finally:
            playwright.stop()


@pytest.fixture()
def browser(_chromium: tuple[Browser, asyncio.AbstractEventLoop]) -> Iterator[Browser]:
    """The worker's Chromium (:func:`_chromium`), its loop marked running for this test."""
    chromium, loop = _chromium
    asyncio._set_running_loop(loop)
    try:
        yield chromium
    finally:
        asyncio._set_running_loop(None)


@pytest.fixture()
def new_page(browser: Browser) -> Iterator[Callable[..., Page]]:
    """``new_page(width, height)``: a page in a new browser context with that viewport;
    every context the test opened is closed after it.

    The context asks for reduced motion (``prefers-reduced-motion: reduce``, a user's
    setting Streamlit honours): no skeleton shimmer, spinner or fade is painted frame by
    frame. Headless Chromium paints in software, and those animations were half its CPU
    on a page's first draw (the Overview at 1500 x 2400: 9-11 s of CPU, 4.7-5.4 s with
    reduced motion, measured under load). No test checks an animation; every test waits
    for what it checks (``browser_support.settle``)."""
    contexts = []

    def open_page(width: int = 1500, height: int = 1800) -> Page:
        context = browser.new_context(viewport={"width": width, "height": height},
                                      reduced_motion="reduce")
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()
