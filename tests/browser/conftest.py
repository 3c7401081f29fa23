"""Fixtures of the browser tests: two servers shared by every test of an xdist worker that
only reads what they serve. Chromium (one per worker) and ``new_page`` (a new browser
context, so a new Streamlit session, for every page a test opens) are in tests/conftest.py,
for the browser tests elsewhere too.

A test that writes into the folders a server serves (a review sidecar, an export), or
that must see a server no session has used yet (a direct link on a fresh server, a
restarted server), starts a :class:`browser_support.Server` of its own. A test on a shared
server fails if its folders changed during it (:func:`_unchanged`): such a test needs a
server of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import Server, demo_app, harbour_app


@pytest.fixture(scope="session")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the app whose bundled demo is the tiny test dataset (servers read it)."""
    return demo_app(tmp_path_factory.mktemp("app"))


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` but bytecode caches and server logs: size and mtime."""
    return {str(f.relative_to(root)): (f.stat().st_size, f.stat().st_mtime_ns)
            for f in sorted(root.rglob("*"))
            if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".log"}


def _unchanged(server: Server, root: Path) -> Iterator[Server]:
    before = _files(root)
    yield server
    assert _files(root) == before, (
        f"a test on the shared server of {root} changed its files: it needs a server of its "
        "own (tests/browser/conftest.py)")


@pytest.fixture(scope="session")
def _demo_server(app_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(app_dir, tmp_path_factory.mktemp("demo_server") / "server.log") as server:
        yield server


@pytest.fixture()
def demo_server(_demo_server: Server) -> Iterator[Server]:
    """The app of :func:`app_dir` with no arguments, one server per xdist worker, shared by
    the tests that only read it."""
    yield from _unchanged(_demo_server, _demo_server.app_dir)


@pytest.fixture(scope="session")
def _harbour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    root = tmp_path_factory.mktemp("harbour")
    app, bench = harbour_app(root)
    with Server(app, root / "server.log", ["--data", str(bench)]) as server:
        yield server, root


@pytest.fixture()
def harbour_server(_harbour: tuple[Server, Path]) -> Iterator[Server]:
    """:func:`browser_support.harbour_app` opened with ``--data harbour_bench``, one server
    per xdist worker, shared by the tests that only read it."""
    yield from _unchanged(*_harbour)
