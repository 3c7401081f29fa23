"""Uploads and unexpected errors (issue 18, items 3 and 10).

Uploads: a unique temporary file per write, per server process, pruned by age and size, so
that concurrent uploads of the same file never read back partial bytes. Errors: a short
message with a reference the user can quote, the traceback in the server's log only; the
server config hides tracebacks of anything that escapes.
"""

from __future__ import annotations

import logging
import os
import threading
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from pages.common import data as module

    monkeypatch.setattr(module, "UPLOAD_DIR", tmp_path / "uploads")
    return module


def test_concurrent_uploads_of_one_file_never_read_partial_bytes(data) -> None:
    payload = os.urandom(2_000_000)
    seen, errors = [], []

    def upload() -> None:
        try:
            path = data.save_upload("sub.json", payload)
            seen.append(path.read_bytes() == payload)
        except Exception as err:  # noqa: BLE001 - the test reports any failure
            errors.append(repr(err))

    threads = [threading.Thread(target=upload) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and seen == [True] * 8
    assert not list(data.UPLOAD_DIR.glob("*/.*.tmp"))  # no temporary file left behind


def test_uploads_are_pruned_by_age_and_size(data, monkeypatch: pytest.MonkeyPatch) -> None:
    old = data.save_upload("old.json", b"1" * 100)
    os.utime(old, (0, 0))
    fresh = data.save_upload("fresh.json", b"2" * 100)
    assert not old.exists() and fresh.exists()
    monkeypatch.setattr(data, "UPLOAD_KEEP_BYTES", 150)
    newest = data.save_upload("newest.json", b"3" * 100)
    assert newest.exists() and not fresh.exists()


def test_each_server_process_has_its_own_upload_folder() -> None:
    from pages.common import data as module

    assert module.UPLOAD_DIR.name.startswith("ovearth_uploads_")
    assert module.UPLOAD_DIR.is_dir()


def test_unexpected_error_is_a_reference_not_a_traceback(caplog: pytest.LogCaptureFixture,
                                                         fresh_caches: None) -> None:
    import sys

    from app_fixtures import app_on

    at = app_on(None, 120).run()

    data = sys.modules["ovearth_core.evaluate"]  # where the app's pipeline evaluates

    def boom(*args, **kwargs):
        raise RuntimeError("boom at /secret/path")

    original = data.evaluate_run
    data.evaluate_run = boom
    try:
        with caplog.at_level(logging.ERROR, logger="ovearth_inspector"):
            at.sidebar.select_slider(key="iou_threshold").set_value(0.7).run()
    finally:
        data.evaluate_run = original
    assert not at.exception
    message = at.error[0].value
    assert "reference **" in message and "Traceback" not in message
    ref = message.split("reference **")[1].split("**")[0]
    assert any(ref in r.getMessage() and r.exc_info for r in caplog.records)


def test_the_server_hides_tracebacks_of_escaped_errors() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "type"


@pytest.mark.parametrize("text", ["plain", "a`b", "``x``", "x` [CLICK-ME](https://e.com) `",
                                  "line\nbreak"])
def test_code_spans_cannot_be_closed_by_the_text(text: str) -> None:
    import re

    from pages.common.state import code

    span = code(text)
    fence = re.match(r"`+", span).group(0)
    inner = span[len(fence):-len(fence)]
    assert span.endswith(fence) and fence not in inner  # the text cannot end the span early
    assert "\n" not in span
