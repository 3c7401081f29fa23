"""The worker's one Chromium (tests/conftest.py) leaves the rest of the worker's tests
alone: between the tests that use it, Playwright's loop is not the thread's running loop,
so ``asyncio.run`` (tests/core/test_load.py) and another test's Playwright can start."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from playwright.sync_api import Page


def test_asyncio_runs_beside_the_workers_chromium(_chromium: object) -> None:
    assert asyncio.run(asyncio.sleep(0, result=1)) == 1


def test_asyncio_runs_after_a_test_that_opened_a_page(
        new_page: Callable[..., Page]) -> None:
    page = new_page(200, 200)
    page.set_content("<p>drawn</p>")
    assert page.inner_text("p") == "drawn"


def test_asyncio_runs_after_it(_chromium: object) -> None:
    """Runs after the test above in the same process (xdist sends a file's tests to the
    workers in order; on another worker it is the first check again)."""
    assert asyncio.run(asyncio.sleep(0, result=2)) == 2


def test_pages_ask_for_reduced_motion(new_page: Callable[..., Page]) -> None:
    """Every page of ``new_page`` prefers reduced motion (tests/conftest.py: Streamlit's
    animations, painted in software, were half of Chromium's CPU on a first draw)."""
    page = new_page(200, 200)
    page.set_content("<p>still</p>")
    assert page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
