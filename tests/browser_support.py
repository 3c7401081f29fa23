"""A real ``streamlit run app.py`` server and headless Chromium settings, shared by the
browser tests and the load benchmark (``benchmarks/load.py``). The browser tests' fixtures
are in ``tests/conftest.py`` (one Chromium per xdist worker, a new context per page) and
``tests/browser/conftest.py`` (the shared servers); docs/tests.md says why."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
IDLE = '[data-test-script-state="notRunning"]'
WAIT_SCALE_VAR = "OVEARTH_WAIT_SCALE"


def wait_scale(environ: Mapping[str, str] = os.environ, load: float | None = None,
               cores: int | None = None) -> float:
    """How much longer than on an idle machine the browser tests may wait for a page:
    ``OVEARTH_WAIT_SCALE`` when set (e.g. on a slow CI runner), else the 1-minute load
    average per core, at least 1. A busy machine is slower; that is not a failure."""
    try:
        given = float(environ.get(WAIT_SCALE_VAR, ""))
    except ValueError:
        given = 0.0
    if given > 0:
        return given
    load = os.getloadavg()[0] if load is None else load
    return max(1.0, load / (cores or os.cpu_count() or 1))


WAIT_SCALE = wait_scale()
MS = int(120_000 * WAIT_SCALE)  # one step (a page drawn, an element shown)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_app(root: Path) -> Path:
    """Copy the app's code (app.py, pages/, .streamlit/) into ``root``; no data."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "app.py", root / "app.py")
    shutil.copytree(REPO / "pages", root / "pages", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / ".streamlit", root / ".streamlit")
    return root


class Server:
    """``streamlit run app.py`` in ``app_dir`` on a free local port, healthy on return.

    ``script_args`` go after ``--`` (the app's own flags, e.g. ``--data-root``); the
    combined stdout/stderr goes to ``log``. As a context manager, stopped at its end.
    """

    def __init__(self, app_dir: Path, log: Path, script_args: Sequence[str] = ()):
        self.app_dir = app_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
             *(["--", *script_args] if script_args else [])],
            cwd=app_dir, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited: {self.log_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"streamlit did not become healthy: {self.log_text()[-2000:]}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


def demo_app(root: Path) -> Path:
    """A copy of the app under ``root`` whose bundled demo is the tiny test dataset of
    :func:`app_fixtures.write_dataset` (so a page is quick to draw)."""
    from app_fixtures import write_dataset

    app = copy_app(root)
    write_dataset(app / "assets" / "demo")
    return app


def harbour_app(root: Path) -> tuple[Path, Path]:
    """:func:`demo_app` under ``root / "app"`` and a copy of the bundled demo as a second
    benchmark, ``root / "data" / "harbour_bench"`` (the app opens it with ``--data``; its
    queries have other ids and texts than the demo's, so a fallback to the demo cannot
    pass): ``(app folder, benchmark folder)``."""
    app = demo_app(root / "app")
    bench = root / "data" / "harbour_bench"
    shutil.copytree(REPO / "assets" / "demo", bench, ignore=shutil.ignore_patterns(".ovearth"))
    return app, bench


SHOTS = Path("/tmp/ovearth_shots")  # screenshots of the browser tests, kept to look at
SHOTS_VAR = "OVEARTH_SHOTS"


def shots_wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the browser tests save their screenshots for a person to look at:
    ``OVEARTH_SHOTS`` set to anything but empty or ``0``. A screenshot no test reads proves
    nothing, and a full page costs Chromium some CPU; the runs that look (a change to a
    page) set it. A screenshot a test reads (a picture's pixels) is taken in every run."""
    return environ.get(SHOTS_VAR, "").strip() not in ("", "0")


def settle(page, text: str) -> None:
    """Wait for ``text`` to appear, the script to finish its run and no skeleton left."""
    from playwright.sync_api import expect

    expect(page.get_by_text(text, exact=False).first).to_be_visible(timeout=MS)
    page.wait_for_selector(IDLE, timeout=MS)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=MS)


# The number of the last card the server sent to the explorer's viewer card (its script
# keeps it): a click on "Next" / "Previous" may put the next card in place at once, before
# the rerun that confirms it, so a test waits for the server's card, not only the text.
CARD_SENT = "() => document.querySelector('.ov-viewer')?.dataset.sent ?? null"


def navigate(page, label: str, text: str, key: str | None = None) -> None:
    """Click the explorer's navigator button ``label`` ("Next ▶", "◀ Previous"), or press
    ``key`` instead, and wait for the rerun it starts to send its card and end, ``text``
    shown (:func:`settle`)."""
    sent = page.evaluate(CARD_SENT)
    if key is None:
        page.get_by_role("button", name=label).click()
    else:
        page.keyboard.press(key)
    page.wait_for_function(f"prev => ({CARD_SENT})() !== prev", arg=sent, timeout=MS)
    settle(page, text)


def snap(target, name: str, **kwargs) -> None:
    """When :func:`shots_wanted`: a screenshot of ``target`` (a page or a locator; ``kwargs``
    go to its ``screenshot``) into ``SHOTS``, after half a second for plotly to finish its
    layout transition (a picture for a person, not a condition a test waits for)."""
    if not shots_wanted():
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = getattr(target, "page", target)
    page.wait_for_timeout(500)
    target.screenshot(path=str(SHOTS / name), **kwargs)


def shoot(page, tmp_path: Path, name: str) -> None:
    """When :func:`shots_wanted`: a full-page screenshot into the test's folder, copied to
    ``SHOTS`` (:func:`snap`)."""
    if not shots_wanted():
        return
    snap(page, name, full_page=True)
    shutil.copy(SHOTS / name, tmp_path / name)
