"""The gate in Chromium (issue 48), every page: the app's data (the audit scene of
tests/audit_scene.py as its demo) holds symbolic links out of the data roots, in the
submissions folder (``leak.json``: a valid submission outside; ``secret.json``: an outside
file that is no JSON, holding :data:`MARKER`), in the images folder (every image) and as
the ground truth of a link (``?gt=``). Nothing outside is shown, no page fails, and each
refused file is named: the submissions on the Audit and Leaderboard pages, the image on
the Query explorer, the ground truth on every page.

At c100000 the Audit page showed the first characters of ``secret.json`` in its error box.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from audit_scene import write_audit_dataset
from browser_support import IDLE, MS, Server, copy_app
from playwright.sync_api import Page, expect

from ovearth_core.paths import ENV_VAR
from pages.common import nav

MARKER = "SECRET-48-do-not-show"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path, Path]]:
    """A server of its own (module): its demo is the audit scene with links out; the
    outside folder and the link to an outside ground truth beside the demo.

    The server's CPU (every page's sessions) is a child's: it is counted when the server
    stops, in the teardown of the module's last case, so a per-test CPU profile charges
    the whole module's server to ``[pages/Audit.py]`` (and, when the file runs alone, the
    worker's Chromium too, counted when it closes at the session's end). What the cases
    cost was Chromium's drawing (Streamlit's animations, painted in software: reduced
    motion in tests/conftest.py) and a second browser context per case for the ``?gt=``
    link (now the same page loaded again: a new session all the same)."""
    tmp = tmp_path_factory.mktemp("gate")
    app_dir = copy_app(tmp / "app")
    demo = app_dir / "assets" / "demo"
    gt, preds = write_audit_dataset(demo)
    outside = tmp / "outside"
    (outside / "images").mkdir(parents=True)
    shutil.copy(preds[1], outside / "leak.json")
    (outside / "secret.json").write_text(f"{MARKER} " * 20)
    (outside / "ground_truth.json").write_text(f'{{"{MARKER}": 1}}')
    (preds[0].parent / "leak.json").symlink_to(outside / "leak.json")
    (preds[0].parent / "secret.json").symlink_to(outside / "secret.json")
    for image in sorted((demo / "images").glob("*.png")):
        shutil.move(image, outside / "images" / image.name)
        image.symlink_to(outside / "images" / image.name)
    (demo / "linked_gt.json").symlink_to(outside / "ground_truth.json")
    # The only data root is the app's folder (tests/conftest.py makes pytest's whole
    # temporary folder one, which would hold the outside folder too).
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_VAR, str(app_dir))
        server = Server(app_dir, tmp / "server.log")
    with server:
        yield server, demo, outside


def _open(page: Page, url: str) -> str:
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=MS)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=MS)
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=MS)
    assert page.locator('[data-testid="stException"]').count() == 0
    body = page.evaluate("document.body.innerText")
    assert MARKER not in body and "Traceback" not in body
    return body


def _shows(page: Page, text: str) -> str:
    """Wait until the page's text holds ``text`` (and never :data:`MARKER`); that text."""
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=text, timeout=MS)
    body = page.evaluate("document.body.innerText")
    assert MARKER not in body
    return body


@pytest.mark.browser
@pytest.mark.parametrize("page_file", [p.file for p in nav.PAGES])
def test_a_page_with_links_out_shows_nothing_of_them(
        served: tuple[Server, Path, Path], new_page: Callable[..., Page],
        page_file: str) -> None:
    server, demo, outside = served
    first = page_file == nav.PAGES[0].file  # the Overview is served at the root
    url = f"{server.url}/{'' if first else nav.BY_FILE[page_file].url_path}"
    page = new_page(height=2400)
    body = _open(page, url)
    if page_file in ("pages/Audit.py", "pages/Leaderboard.py"):
        for name in ("leak", "secret"):
            body = _shows(page, f"{name} left out")
            assert f"resolves to {outside / f'{name}.json'}" in body, body[-3000:]
    if page_file == "pages/Query_explorer.py":
        _shows(page, "resolves outside the images folder")
    # The same page from a link whose ground truth is a link out of the roots (a new
    # session: the page loaded again).
    _open(page, f"{url}?gt={demo / 'linked_gt.json'}")
    _shows(page, f"The link names the ground truth {demo / 'linked_gt.json'}, which is "
                 "outside this server's data roots")
