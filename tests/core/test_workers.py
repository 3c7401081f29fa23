"""ovearth_core.workers: spawned workers never re-run the caller's main script.

In the app's server (and in a pytest worker after an AppTest) ``sys.modules["__main__"]``
is a script (Streamlit's launcher, or app.py); a ``spawn`` / ``forkserver`` worker re-runs
that file first unless the caller starts it inside :func:`workers.skip_main`. A planted
main file that writes a marker and exits shows whether it ran.
"""

from __future__ import annotations

import multiprocessing
import sys
import types
from pathlib import Path

import pytest

from ovearth_core import workers


def _square(x: int) -> int:
    return x * x


def test_a_spawned_pool_inside_skip_main_does_not_run_the_main_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "planted_main.py"
    script.write_text(f"open({str(marker)!r}, 'a').write('x')\nraise SystemExit(3)\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    main.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", main)
    context = multiprocessing.get_context("spawn")
    with workers.skip_main(context), context.Pool(2) as pool:
        assert pool.map_async(_square, range(6)).get(timeout=120) == [0, 1, 4, 9, 16, 25]
    assert main.__spec__ is None  # restored
    assert not marker.exists()


def test_the_worker_count_is_at_least_one() -> None:
    assert workers.worker_count() >= 1
