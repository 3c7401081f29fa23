"""tests/cli_inprocess.py: a command run in this process reports what the real process would
(exit status, stdout, stderr, a traceback for a crash) and leaves this process as it was."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path

import pytest
from cli_inprocess import entry_point, run_module

import ovearth_core.cli
import ovearth_core.report.__main__


def test_help_and_state_restored(tmp_path: Path) -> None:
    env, cwd, argv = dict(os.environ), os.getcwd(), list(sys.argv)
    handlers, filters = list(logging.getLogger().handlers), list(warnings.filters)
    done = run_module("ovearth_core", "--help", cwd=tmp_path, env={"ONLY": "1"})
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("usage: ovearth-eval")
    assert (dict(os.environ), os.getcwd(), sys.argv) == (env, cwd, argv)
    assert (logging.getLogger().handlers, warnings.filters) == (handlers, filters)


def test_usage_error_is_status_2_on_stderr() -> None:
    done = run_module("ovearth_core.report", "--no-such-flag")
    assert done.returncode == 2 and done.stdout == ""
    assert "python -m ovearth_core.report: error: the following arguments are required: --gt" \
        in done.stderr


def test_a_crash_is_a_traceback_and_status_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """As the interpreter reports an exception that leaves ``main``: "no traceback"
    assertions of the moved tests can still fail."""
    def crash(argv: list[str]) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(ovearth_core.cli, "main", crash)
    done = run_module("ovearth_core", "--help")
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert "RuntimeError: boom" in done.stderr


def test_bytes_written_to_standard_output_and_text_of_sys_exit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def main(argv: list[str]) -> int:
        os.write(1, b"fd ")
        sys.stdout.buffer.write(b"buffer ")
        print("print")
        sys.exit("a message")

    monkeypatch.setattr(ovearth_core.report.__main__, "main", main)
    done = run_module("ovearth_core.report", text=False)
    assert done.stdout == b"fd buffer print\n"
    assert (done.returncode, done.stderr) == (1, b"a message\n")


def test_entry_points_are_what_python_m_runs() -> None:
    main, argv0 = entry_point("ovearth_core")
    assert main is ovearth_core.cli.main and argv0.endswith("ovearth_core/__main__.py")
    main, argv0 = entry_point("ovearth_core.leaderboard")
    assert main.__module__ == "ovearth_core.analysis.leaderboard_cli"
    assert argv0.endswith("ovearth_core/leaderboard.py")
